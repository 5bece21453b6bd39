"""Every number the prose quotes from a computation is bound to it (``{eval}``, ``transformer_lib.prose``).

The scan (tests/prose_scan.py) reads every chapter's markdown; a number that a cell computes but the text
types in fails here, and so does a measurement-like number (a fraction, a percentage) that nothing on the
page backs. The mechanism is tested end to end: the executor stores the values, the book's Sphinx role
renders them, and a typed copy of a bound value is caught.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from transformer_lib.prose import Shown, expressions, shown

from . import prose_scan
from .book_browser import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from execute_notebooks import ProseClient  # noqa: E402

CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))

# Numbers a page may type although an output shows the same digits, each with the reason.
ALLOWED = {
    ("07_training_inference.ipynb", "256"): "the largest batch benchmarks/bench_decoding.py times, a setting",
    ("performance.ipynb", "200"): "a setting of the benchmark (max_len raised to fit 200 tokens)",
    ("performance.ipynb", "32"): "a setting: batches of 32 sentences",
    ("performance.ipynb", "256"): "a setting: the batch of 256 sentences",
    ("performance.ipynb", "4096"): "a setting: the longest sequence benchmarked",
    ("paper_ledger.ipynb", "400"): "a setting of benchmarks/paper_ledger.py: every run trains 400 steps",
}


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
    typed = [t for t in prose_scan.typed_numbers(path) if (t.notebook, t.number) not in ALLOWED]
    assert not typed, "\n".join(f"{t.notebook} cell {t.cell}: {t.number!r} in '{t.context}'" for t in typed)


def test_the_scan_catches_a_typed_copy_of_a_bound_value() -> None:
    nb = _notebook([_code("spread = shown(s, '.2f')", "spread of layer 2: 0.49\n"),
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
            if not any(ch.isdigit() for ch in value) or prose_scan.allowed(value):
                continue
            if prose_scan.variants(value) & prose_scan.code_numbers(nb):
                continue  # a bound an assert states too ("0.95 and more"): typing it is allowed
            typed = copy.deepcopy(nb)
            typed["cells"][index]["source"] = source.replace(f"{{eval}}`{expression}`", value)
            found = [t for t in prose_scan.typed_numbers(path, typed) if t.cell == index]
            assert found, f"{path.name} cell {index}: typing {value!r} for {{eval}}`{expression}` went unnoticed"


def test_shown_is_the_value_at_the_precision_the_text_shows() -> None:
    spread = shown(0.4912, ".2f")
    assert isinstance(spread, Shown) and repr(spread) == str(spread) == "0.49" and spread.value == 0.4912
    assert f"{spread}" == "0.49" and f"{spread:.3f}" == "0.491"
    assert repr(shown(7499.3, ",.0f")) == "7,499" and repr(shown("dropped phrase")) == "dropped phrase"
    with pytest.raises(ValueError, match="spec"):
        shown("text", ".2f")
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
