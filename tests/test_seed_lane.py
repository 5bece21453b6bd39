"""The seed lane (issue 50): every notebook cell that trains or samples reads BOOK_SEED, and
benchmarks/seed_claims.py turns each assert into a recording without changing what else a cell does."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import seed_claims  # noqa: E402

TRAINS = re.compile(r"\b(train_book_model|train_book_lm|train_book_rnn|fit_classifier|fit_classifier_seeds|fit_seeds|"
                    r"train_masked_lm|run_table3|train|train_language_model)\(")
LITERAL_SEED = re.compile(r"(manual_seed|Random)\(\s*\d|\bseed\s*=\s*\d")
OPTIONAL = ("TRAIN_LIVE = False", "DOWNLOAD = False")  # a cell a reader switches on: the tests leave it off


def _code_cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_every_notebook_that_trains_is_in_the_lane() -> None:
    training = {path.name for path in sorted((ROOT / "book").glob("*.ipynb"))
                for cell in _code_cells(path) if TRAINS.search(cell) and not any(o in cell for o in OPTIONAL)}
    assert training == {Path(name).name for name in seed_claims.TRAINING_NOTEBOOKS}


def test_no_cell_of_the_lane_sets_a_seed_of_its_own() -> None:
    fixed = [(name, m.group(0)) for name in seed_claims.TRAINING_NOTEBOOKS for cell in _code_cells(ROOT / name)
             for m in LITERAL_SEED.finditer(cell) if not any(o in cell for o in OPTIONAL)]
    assert fixed == []  # each reads book_seed() / book_seeds(): BOOK_SEED reruns the page on another seed


def test_an_assert_records_instead_of_raising() -> None:
    source = "x = 2\nassert x > 1, 'big'\nfor i in range(3):\n    assert i < 2  # the last fails\ny = x + 1\n"
    rewritten, found = seed_claims.recording_source(source, 7)
    assert found == [(2, "assert x > 1, 'big'"), (4, "assert i < 2")]
    scope = {seed_claims.RECORDER: []}
    exec(rewritten, scope)  # no AssertionError: the false one is recorded, and the cell goes on
    assert scope[seed_claims.RECORDER] == [(7, 2, True), (7, 4, True), (7, 4, True), (7, 4, False)]
    assert scope["y"] == 3
    assert seed_claims.recording_source("%time x = 1\nassert x", 0) == ("%time x = 1\nassert x", [])  # IPython
