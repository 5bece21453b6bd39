"""book/_ext/reader_view.py: what the HTML page shows of a notebook, and its fixes to the theme's markup."""

from __future__ import annotations

import json
import re
import sys

import nbformat

from tools.book_browser import ROOT

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


def test_the_skip_links_are_written_into_the_page() -> None:
    """The build writes the skip links (first in the body, in page order) to each explorer and to the
    keyboard controls of each figure with a menu or a slider, under the names reader.js gives them,
    so that they are there before any script runs; a figure without controls gets none."""
    page = ('<html><body class="b"><a class="skip-link" href="#main">Skip</a>'
            '<div class="tc-live" data-explorer="attention"><script class="tc-live-state">{}</script></div>'
            '<div id="f1" class="plotly-graph-div"></div><script>if (document.getElementById("f1")) '
            '{ Plotly.newPlot( "f1", [{"x": [1]}], {"title": {"text": "A <b>menu</b>, then ' + "x" * 80 + '"}, '
            '"updatemenus": [{"buttons": []}]}, {"responsive": true}) }</script>'
            '<div id="f2" class="plotly-graph-div"></div>'
            '<script>Plotly.newPlot("f2", [], {"title": "plain"}, {})</script>'
            '<div class="tc-live" data-explorer="stepper"></div>'
            '<div class="tc-live" data-explorer="attention">\n<script type="application/json" class="tc-live-state">'
            '{"sentence": "a", "replay": {"steps": [0]}}</script></div>'
            '<div class="tc-live" data-explorer="model"></div></body></html>')
    fixed = reader_view.fix_page_markup(page)
    nav = fixed[fixed.index("<body"):fixed.index("</nav>")]
    links = [(href, text) for href, text in re.findall(r'<a href="#([^"]+)">([^<]+)</a>', nav)]
    title = ("A menu , then " + "x" * 80)[:67] + "\u2026"
    assert links == [("tc-interactive-1", "Skip to the attention explorer"),
                     ("tc-keys-f1", f"Skip to the controls of the figure \u201c{title}\u201d"),
                     ("tc-interactive-2", "Skip to the decoding stepper"),
                     ("tc-interactive-3", "Skip to the training replay"),  # not a second "attention explorer"
                     ("tc-interactive-4", "Skip to the whole-model explorer")]
    assert fixed.index('<nav class="tc-skip"') < fixed.index('class="skip-link"')  # first in the Tab order
    assert ('data-explorer="attention" id="tc-interactive-1" data-skip-name="the attention explorer"' in fixed
            and "tc-keys-f2" not in fixed)
    assert reader_view.fix_page_markup(fixed) == fixed  # once
    assert "tc-skip" not in reader_view.fix_page_markup("<html><body><p>no explorer</p></body></html>")
    reader_js = (ROOT / "book" / "_static" / "reader.js").read_text()
    for name in reader_view.EXPLORERS.values():  # the script's names: it keeps the build's links
        assert f'"{name}"' in reader_js
    assert "Skip to the controls of the figure" in reader_js
