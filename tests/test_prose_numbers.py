"""Every number the prose quotes from a computation is bound to it (``{eval}``, ``transformer_lib.prose``).

The scan (tests/prose_scan.py) reads every chapter's markdown; a number that a cell computes but the text
types in fails here, and so does a measurement-like number (a fraction, a percentage) that nothing on the
page backs. The mechanism is tested end to end: the executor stores the values, the book's Sphinx role
renders them, and a typed copy of a bound value is caught.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools.book_browser import ROOT
from transformer_lib.prose import Shown, expressions, shown

from . import prose_scan

sys.path.insert(0, str(ROOT / "tools"))
from execute_notebooks import ProseClient  # noqa: E402

CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))

def _notebook(cells: list[dict]) -> dict:
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _markdown(text: str, stored: dict[str, str] | None = None) -> dict:
    metadata = {"user_expressions": [{"expression": k, "result": {"status": "ok", "data": {"text/plain": v},
                                                                     "metadata": {}}}
                                     for k, v in (stored or {}).items()]} if stored else {}
    return {"cell_type": "markdown", "metadata": metadata, "source": text}


def _code(source: str, printed: str = "") -> dict:
    outputs = [{"output_type": "stream", "name": "stdout", "text": printed}] if printed else []
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": outputs, "execution_count": 1}


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_chapter_types_a_computed_number(path: Path) -> None:
    typed = prose_scan.typed_numbers(path)
    assert not typed, f"{len(typed)} typed numbers:\n" + "\n".join(map(str, typed))


def test_the_scan_catches_a_typed_copy_of_a_bound_value() -> None:
    nb = _notebook([_code("layers = 2\nspread = shown(s, '.2f')", "spread of layer 2: 0.49\n"),
                    _markdown("Heads differ (a spread of {eval}`spread`), in 2 layers.", {"spread": "0.49"})])
    assert prose_scan.typed_numbers(Path("x.ipynb"), nb) == []
    typed = copy.deepcopy(nb)
    typed["cells"][1]["source"] = "Heads differ (a spread of 0.49), in 2 layers."  # the value typed in
    assert [t.number for t in prose_scan.typed_numbers(Path("x.ipynb"), typed)] == ["0.49"]
    stale = copy.deepcopy(nb)
    stale["cells"][1]["source"] = "Heads differ (a spread of 0.43), in 2 layers."  # nothing backs it
    assert [t.number for t in prose_scan.typed_numbers(Path("x.ipynb"), stale)] == ["0.43"]


@pytest.mark.parametrize("path", [p for p in CHAPTERS if "{eval}" in p.read_text()], ids=lambda p: p.name)
def test_every_bound_value_is_stored_and_its_typed_copy_is_caught(path: Path) -> None:
    """After tools/execute_notebooks.py, each ``{eval}`` has its stored text; typing that text in its
    place instead is caught by the scan (a bound number is always one the page computed)."""
    check_bound_values(path, json.loads(path.read_text()))


def check_bound_values(path: Path, nb: dict) -> None:
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        source = "".join(cell["source"])
        stored = {e["expression"]: e["result"]["data"]["text/plain"]
                  for e in cell.get("metadata", {}).get("user_expressions", [])}
        for expression in expressions(source):
            assert expression in stored, (f"{path.name} cell {index}: no stored value for {{eval}}`{expression}` "
                                          "(re-execute with tools/execute_notebooks.py)")
            value = stored[expression]
            numbers = prose_scan.NUMBER.findall(value)
            settings = prose_scan.code_numbers(nb)
            if not numbers or all(prose_scan.allowed(n.rstrip(".,")) or prose_scan.variants(n.rstrip(".,")) & settings
                                  for n in numbers):
                continue  # only identities, paper constants or settings ("1 and 4"): typed, they pass by rule
            if prose_scan.variants(value) & prose_scan.code_numbers(nb):
                continue  # a bound an assert states too ("0.95 and more"): typing it is allowed
            typed = copy.deepcopy(nb)
            typed["cells"][index]["source"] = source.replace(f"{{eval}}`{expression}`", value)
            found = [t for t in prose_scan.typed_numbers(path, typed) if t.cell == index]
            assert found, f"{path.name} cell {index}: typing {value!r} for {{eval}}`{expression}` went unnoticed"


def _found(markdown: str, code: str = "x = shown(1)") -> list[str]:
    nb = _notebook([_code(code), _markdown(markdown)])
    return [t.number for t in prose_scan.typed_numbers(Path("x.ipynb"), nb)]


# Each loophole of the earlier scan (issue 40), planted: the scan must report it.
def test_a_digit_anywhere_in_a_cell_is_no_setting() -> None:
    assert _found("On these 300 sentences.", "print(reason[:300])") == ["300"]
    assert _found("On these 300 sentences.", "assert len(sources) == 300") == ["300"]
    assert _found("On these 300 sentences.", "SENTENCES = 300") == []  # a named setting
    assert _found("On these 300 sentences.", "sources = sample(corpus, n=300)") == []  # a keyword setting


def test_small_integers_are_scanned() -> None:
    assert _found("Heads 2 and 3 stay diffuse, one of 11.") == ["2", "3", "11"]
    assert _found("The weights sum to 1, with mean 0, in chapter 7 (section 3.2, Table 3).") == []
    assert _found("Its weights take 1 MB.") == ["1"]  # an identity with a unit is a size


def test_formulas_are_scanned_for_values_and_arithmetic() -> None:
    assert _found("Trained for {math}`1000` steps.") == ["1000"]
    assert _found("Pipelined, $30 + 2 - 1 = 31$ steps.") == ["30", "2", "31"]
    assert _found("Here $d_k = 3$ and $p(y) = 1 - \\epsilon + \\epsilon/V = 0.92$.") == ["3", "0.92"]
    assert _found("A uniform guess ($\\ln 330 \\approx 5.8$).") == ["330", "5.8"]
    assert _found("The slope $1 - h_k^2 \\le 1$ and $10000^{2i/d}$, $$\\frac{1}{\\sqrt{d_k}}$$.") == []


def test_numbers_written_as_words_are_scanned() -> None:
    assert _found("The model is ahead by several points.") == ["several points"]
    assert _found("It takes thirty minutes, a few hundred steps.") == ["thirty minutes", "a few hundred steps"]
    assert _found("Between two words, three steps.") == []  # counted things
    assert _found("Ahead by three points.") == ["three points"]  # a measurement
    assert _found("Three seeds agree.", "seeds = 3") == []  # a setting's value, written out
    assert _found("Three seeds agree.") == ["Three seeds"]
    assert _found("The two layers and a few heads.") == []  # no measured quantity
    assert _found("Of {eval}`m` million parameters.") == []  # a bound number's multiplier
    assert _found("A million parameters, a thousand tokens.") == ["A million parameters", "a thousand tokens"]


def test_paper_constants_are_one_list_with_sections() -> None:
    assert all(re.match(r"(section \d|Table \d)", where) for where in prose_scan.PAPER_CONSTANTS.values())
    assert _found("The paper's 4000 warm-up steps and 25,000 tokens.") == []
    assert _found("The paper's 4001 warm-up steps.") == ["4001"]


def test_the_report_says_where_and_how_to_fix() -> None:
    nb = _notebook([_code("x = 1"), _markdown("Ahead by 10.2 points.")])
    message = str(prose_scan.typed_numbers(Path("ch.ipynb"), nb)[0])
    assert message.startswith("ch.ipynb cell 1: '10.2' (typed in prose)") and "{eval}" in message


def _book_corpus_target_tokens() -> int:
    from transformer_lib.pretrained.recipe import book_corpus

    return sum(len(french.split()) + 1 for _, french in book_corpus().train)  # + the end token


def _recipe():
    from transformer_lib.pretrained.recipe import BOOK_RECIPE

    return BOOK_RECIPE


# The numbers paper.py's own sentences type that are not the paper's: each computed here, with how close
# the sentence claims to be ("about": 15%).
def _split_percent(split: str) -> int:
    from transformer_lib.pretrained.recipe import book_corpus

    corpus = book_corpus()
    return round(100 * len(getattr(corpus, split)) / _recipe().n_pairs)


PAPER_PY_NUMBERS = {
    "80": lambda: (_split_percent("train"), 0),  # the 80/10/10 split
    "10": lambda: (_split_percent("valid"), 0),
    "12000": lambda: (_recipe().n_pairs * _split_percent("train") // 100, 0),
    "100000": lambda: (_book_corpus_target_tokens(), 0.15),
    "95": lambda: (round(100 * _recipe().target_exact_match), 0),
    "64": lambda: (_recipe().model.d_model, 0),
    "3e-8": lambda: (_float32_table_error(), 2.0),
}


def _float32_table_error() -> float:
    import torch

    from transformer_lib.positional_encoding import sinusoidal_table

    table = sinusoidal_table(_recipe().model.max_len, _recipe().model.d_model, dtype=torch.float64)
    return (table - table.float().double()).abs().max().item()


def test_the_numbers_paper_py_types_are_the_papers_or_computed() -> None:
    from transformer_lib import paper

    texts = [(d.key, f, getattr(d, f) or "") for d in paper.LEDGER
             for f in ("topic", "paper", "book", "why", "switch", "scale_note")]
    texts += [("PAPER_RESULTS", k, v) for k, v in paper.PAPER_RESULTS.items() if isinstance(v, str)]
    texts += [("PAPER_RESULTS", k, v) for k, v in paper.PAPER_RESULTS["training_time"].items()]
    unchecked = []
    for key, field, text in texts:
        text = re.sub(r"\b(?:19|20)\d\d\b|\b(?:[Tt]able|[Ee]quation|[Cc]hapter|[Ss]ection)s? \d+(?:\.\d+)*|"
                      r"\w*[A-Za-z]\d+\w*|\d+[A-Za-z]\w*|10-minute", " ", text)  # years, parts, names (P100, 2i),
        # and the paper's "10-minute intervals" (section 6.1)
        for match in prose_scan.NUMBER.finditer(text):
            number = prose_scan.canonical(match.group().rstrip(".,"))
            if number in prose_scan.PAPER_CONSTANTS or number in ("1.0", "1", "0.5", "1.5", "2", "3", "9"):
                continue  # the paper's (or its equation 3's exponents, its epsilon 10^-9, a 1.0 switch)
            if number not in PAPER_PY_NUMBERS:
                unchecked.append(f"{key}.{field}: {number!r} in {text[max(0, match.start() - 40):match.end() + 20]!r}")
                continue
            actual, tolerance = PAPER_PY_NUMBERS[number]()
            assert abs(actual - float(number)) <= tolerance * max(abs(actual), 1e-30), (
                f"{key}.{field} types {number}, the code computes {actual}")
    assert not unchecked, "numbers paper.py types that are neither the paper's nor computed:\n" + "\n".join(unchecked)


def test_shown_is_the_value_at_the_precision_the_text_shows() -> None:
    spread = shown(0.4912, ".2f")
    assert isinstance(spread, Shown) and repr(spread) == str(spread) == "0.49" and spread.value == 0.4912
    assert f"{spread}" == "0.49" and f"{spread:.3f}" == "0.491"
    assert repr(shown(7499.3, ",.0f")) == "7,499" and repr(shown("dropped phrase")) == "dropped phrase"
    with pytest.raises(TypeError, match="spec"):  # a numeric spec given a str: the value's type is wrong
        shown("text", ".2f")
    with pytest.raises(ValueError, match="spec"):  # a spec no value could take: the spec is wrong
        shown(1.0, ".2q")
    with pytest.raises(TypeError, match="spec"):
        shown(1.0, 2)
    assert expressions("a {eval}`x` b {eval}` y ` {eval}`x`") == ["x", "y"]


def test_the_executor_stores_each_markdown_expression(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from transformer_lib.prose import shown\nx = shown(2 / 3, '.2f')"),
                nbformat.v4.new_markdown_cell("Two thirds: {eval}`x`."),
                nbformat.v4.new_code_cell("x = shown(1 / 3, '.2f')"),
                nbformat.v4.new_markdown_cell("One third: {eval}`x`, and no number: {eval}`missing`.")]
    client = ProseClient(nb, kernel_name="python3", timeout=60, resources={"metadata": {"path": str(ROOT)}})
    with pytest.raises(Exception, match="missing"):  # a name the kernel does not know stops the run
        client.execute()
    assert nb.cells[1].metadata["user_expressions"] == [
        {"expression": "x", "result": {"status": "ok", "data": {"text/plain": "0.67"}, "metadata": {}}}]  # in order


SPHINX_CONF = """
import sys
sys.path.insert(0, {ext!r})
extensions = ["myst_nb", "bound_prose"]
nb_execution_mode = "off"
"""


def test_the_book_renders_the_stored_value_and_refuses_a_missing_one(tmp_path: Path) -> None:
    (tmp_path / "conf.py").write_text(SPHINX_CONF.format(ext=str(ROOT / "book" / "_ext")))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Page\n\nThe spread is {eval}`spread`.")]
    nb.cells[0].metadata["user_expressions"] = [
        {"expression": "spread", "result": {"status": "ok", "data": {"text/plain": "0.49"}, "metadata": {}}}]
    nbformat.write(nb, tmp_path / "index.ipynb")
    build = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(tmp_path), str(tmp_path / "_build")]
    subprocess.run(build, check=True, capture_output=True, text=True)
    assert 'The spread is <span class="bound-number">0.49</span>.' in (tmp_path / "_build" / "index.html").read_text()
    del nb.cells[0].metadata["user_expressions"]
    nbformat.write(nb, tmp_path / "index.ipynb")
    failed = subprocess.run([*build, "-E"], capture_output=True, text=True)
    assert failed.returncode != 0 and "no stored value" in failed.stderr
