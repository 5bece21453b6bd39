"""The seed lane (issue 50): every notebook cell that trains or samples reads BOOK_SEED, and
benchmarks/seed_claims.py turns each assert into a recording without changing what else a cell does."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

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


def test_a_stale_findings_file_is_named() -> None:
    # book/data/seed_claims.json is checked by tests/test_stored.py through stale(); here, that stale() can fail
    stored = json.loads((ROOT / "book" / "data" / "seed_claims.json").read_text())
    assert seed_claims.stale(stored) is None
    moved = {**stored, "asserts": [{**stored["asserts"][0], "line": stored["asserts"][0]["line"] + 1},
                                   *stored["asserts"][1:]]}
    n = len(stored["asserts"])
    assert seed_claims.stale(moved).startswith(f"{n} asserts stored, {n} today; the first that differs: ['07_training")
    assert seed_claims.stale({**stored, "seeds": [0, 1, 2]}) == "seeds [0, 1, 2], not 0-9"
    assert seed_claims.stale({**stored, "runs": stored["runs"][1:]}) == "not every notebook ran on every seed"


CLAIMS = {"date": "2026-11-29", "seeds": [0, 1, 2],
          "runs": [{"notebook": "07_a.ipynb", "seed": s, "seconds": 40.0 + s} for s in range(3)],
          "asserts": [{"notebook": "07_a.ipynb", "cell": 4, "line": 2, "assert": "assert loss < 1", "held": 3,
                       "seeds": 3, "failed_on": [], "not_reached_on": []},
                      {"notebook": "07_a.ipynb", "cell": 9, "line": 1, "assert": "assert  accuracy >\n 0.9", "held": 1,
                       "seeds": 3, "failed_on": [2], "not_reached_on": [0]}]}


def test_the_appendix_table_counts_the_claims_and_names_each_that_failed_on_a_seed() -> None:
    from transformer_lib.measure import seed_claims_table

    text = seed_claims_table(CLAIMS)
    assert text.startswith("Every `assert` of the notebooks that train, run top to bottom on 3 seeds (`BOOK_SEED` "
                           "0, 1, 2; one thread, on 2026-11-29): 1 of 2 held on every seed.")
    assert "| 07_a | 2 | 1 | 41 |" in text  # the median of 40, 41 and 42 seconds
    assert text.endswith("- 07_a, cell 9: `assert accuracy > 0.9` held on 1 of 3 seeds (not on 2, 0)")
    with pytest.raises(ValueError, match=r"results\['asserts'\]\[1\]: expected a 'held' entry"):
        seed_claims_table({**CLAIMS, "asserts": [CLAIMS["asserts"][0], {"notebook": "07_a.ipynb"}]})
    with pytest.raises(TypeError, match=r"results\['seeds'\]: expected a list of seeds, got str"):
        seed_claims_table({**CLAIMS, "seeds": "0-9"})


def test_running_one_notebook_replaces_only_its_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = json.loads((ROOT / "book" / "data" / "seed_claims.json").read_text())
    out = tmp_path / "seed_claims.json"
    out.write_text(json.dumps(stored))
    monkeypatch.setattr(seed_claims, "OUT", out)
    chapter9 = "09_beyond_translation.ipynb"
    new_run = {"notebook": chapter9, "seed": 0, "seconds": 1.0}
    new_row = {"notebook": chapter9, "cell": 1, "line": 1, "assert": "assert True", "held": 10, "seeds": 10}
    runs, rows = seed_claims.kept([f"book/{chapter9}"], stored["seeds"], [new_run], [new_row])
    assert [r for r in runs if r["notebook"] != chapter9] == [r for r in stored["runs"] if r["notebook"] != chapter9]
    assert [r for r in rows if r["notebook"] != chapter9] == [r for r in stored["asserts"] if r["notebook"] != chapter9]
    assert [r for r in runs if r["notebook"] == chapter9] == [new_run]
    assert [r for r in rows if r["notebook"] == chapter9] == [new_row]
    # other seeds are another experiment: nothing of the stored file is kept
    assert seed_claims.kept([f"book/{chapter9}"], [1, 2], [new_run], [new_row]) == ([new_run], [new_row])
