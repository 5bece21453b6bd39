"""book/_ext/reader_view.py: what the HTML page shows of a notebook, and its fixes to the theme's markup."""

from __future__ import annotations

import json
import sys

import nbformat

from .book_browser import ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import reader_view  # noqa: E402 -- a Sphinx extension, not a package module

sys.path.remove(str(ROOT / "book" / "_ext"))


def _cell(source: str, outputs: list | None = None, cell_id: str = "c") -> dict:
    cell = nbformat.v4.new_code_cell(source, id=cell_id)
    cell["outputs"] = outputs or []
    return cell


def test_the_page_leaves_out_set_up_and_test_markers_and_folds_checks() -> None:
    stream = [nbformat.v4.new_output("stream", text="3\n")]
    notebook = {"cells": [
        _cell("import os\nos.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')", cell_id=reader_view.SETUP_ID),
        _cell("# NBVAL_IGNORE_OUTPUT\n# (timings differ)\nprint(3)", stream, "timing"),
        _cell("x = 1\nassert x == 1\nassert x > 0", cell_id="checks"),
        _cell("x = 1\ny = 2\nassert x < y", cell_id="teaches"),
        _cell("assert True", stream, "printed"),
    ]}
    shown = reader_view.reader_notebook(json.loads(json.dumps(notebook)))
    tags = {cell["id"]: cell["metadata"].get("tags", []) for cell in shown["cells"]}
    assert tags == {reader_view.SETUP_ID: ["remove-cell"], "timing": [], "checks": ["hide-input"],
                    "teaches": [], "printed": []}
    assert shown["cells"][1]["source"] == "# (timings differ)\nprint(3)"
    assert [c["source"] for c in shown["cells"][2:]] == [c["source"] for c in notebook["cells"][2:]]


def test_every_chapter_has_the_set_up_cell_the_page_leaves_out() -> None:
    """The extension finds the set-up cell by tools/notebook_setup.py's cell id."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import notebook_setup
    finally:
        sys.path.remove(str(ROOT / "tools"))
    assert notebook_setup.SETUP_ID == reader_view.SETUP_ID
    for path in sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        assert any(c.get("id") == reader_view.SETUP_ID for c in cells), path.name


def test_theme_markup_is_named_by_what_it_shows() -> None:
    page = ('<button class="btn search-button-field search-button__button pst-js-only" title="Search" '
            'aria-label="Search" data-bs-placement="bottom">'
            '<summary aria-label="Toggle hidden content"><tr><th></th><th>score</th></tr>')
    fixed = reader_view.fix_page_markup(page)
    assert "aria-label" not in fixed and 'title="Search"' in fixed
    assert "<summary>" in fixed and "<td></td><th>score</th>" in fixed
