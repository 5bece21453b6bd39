"""tests/stored_outputs.py, which makes the JupyterLab run compare outputs, finds what nbval finds."""

from __future__ import annotations

import copy

import nbformat

from tools.book_browser import ROOT

from .stored_outputs import differences

CHAPTER = ROOT / "book" / "01_rnn_limits.ipynb"  # it has a cell marked NBVAL_IGNORE_OUTPUT


def _code_cells() -> list[dict]:
    notebook = nbformat.read(CHAPTER, as_version=4)
    return [copy.deepcopy(dict(c)) for c in notebook.cells if c.cell_type == "code"]


def _first(cells: list[dict], kind: str, ignored: bool) -> int:
    for number, cell in enumerate(cells):
        marked = "NBVAL_IGNORE_OUTPUT" in cell["source"]
        if marked == ignored and any(o["output_type"] == kind for o in cell["outputs"]):
            return number
    raise AssertionError(f"{CHAPTER.name} has no {'ignored' if ignored else 'checked'} cell with a {kind} output")


def test_the_stored_outputs_equal_themselves() -> None:
    assert differences(CHAPTER, _code_cells()) == []


def test_a_changed_printed_number_is_found() -> None:
    cells = _code_cells()
    number = _first(cells, "stream", ignored=False)
    stream = next(o for o in cells[number]["outputs"] if o["output_type"] == "stream")
    stream["text"] = stream["text"] + "0.123\n"
    found = differences(CHAPTER, cells)
    assert len(found) == 1 and found[0].startswith(f"cell {number}:")


def test_a_missing_output_and_a_missing_cell_are_found() -> None:
    cells = _code_cells()
    number = _first(cells, "stream", ignored=False)
    cells[number]["outputs"] = []
    assert [p.split(":")[0] for p in differences(CHAPTER, cells)] == [f"cell {number}"]
    assert differences(CHAPTER, cells[:-1]) == [f"{len(cells)} code cells stored, {len(cells) - 1} run"]


def test_nbvals_rules_apply_streams_split_differently_and_ignored_cells() -> None:
    cells = _code_cells()
    number = _first(cells, "stream", ignored=False)
    outputs = cells[number]["outputs"]
    index = next(i for i, o in enumerate(outputs) if o["output_type"] == "stream")
    text = outputs[index]["text"]
    half = len(text) // 2  # a front end may receive one print as two stream messages
    outputs[index:index + 1] = [dict(outputs[index], text=text[:half]), dict(outputs[index], text=text[half:])]
    assert differences(CHAPTER, cells) == []
    ignored = [cell for cell in cells if "NBVAL_IGNORE_OUTPUT" in cell["source"]]
    assert ignored
    for cell in ignored:  # what a cell marked NBVAL_IGNORE_OUTPUT prints is not compared
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "anything\n"}]
    assert differences(CHAPTER, cells) == []
