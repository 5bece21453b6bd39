"""Sphinx extension: what the reader of the HTML book sees of a notebook, and fixes to the theme's
markup that accessibility checkers (axe-core, tests/test_reader.py) report.

The notebooks stay as they are (nbval runs every cell of them, and JupyterLab shows them whole);
only the page built from each changes, as myst-nb reads it (Sphinx's ``source-read``):

* the set-up cell (``tools/notebook_setup.py``'s cell id ``setup``: OpenMP's wait policy, the pip
  fallback for a single downloaded notebook) is left out of the page (tag ``remove-cell``);
* the notebook tests' markers (``# NBVAL_IGNORE_OUTPUT`` and the like) are taken out of the code
  shown;
* a cell that only checks (no output, and half or more of its statements ``assert``) is folded:
  its code is one click away (tag ``hide-input``), the claim it checks is in the prose beside it.

And in every written page:

* the theme's search button names itself "Search" while it shows "Search Ctrl+K": its name is
  taken from what it shows (WCAG 2.5.3, label in name);
* myst-nb's fold ("Show code cell source") is labelled "Toggle hidden content": it too is named by
  what it shows;
* the empty top-left header cell of a pandas table is a data cell (an empty header names nothing).

* skip links to each explorer and to each figure's keyboard controls, first in the page's Tab order
  (``skip_links``): in the HTML itself, so that they are there from the reader's first key press;
  ``reader.js`` (every page) keeps them, adds any part a script makes later (bertviz's button) and
  moves the focus to the first control of the part a link names.
"""

from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path

from sphinx.application import Sphinx

SETUP_ID = "setup"  # tools/notebook_setup.py's SETUP_ID
NBVAL_MARKER = re.compile(r"^[ \t]*# ?NBVAL_[A-Z_]+[^\n]*\n?", re.MULTILINE)
READER_JS = "reader.js"
SEARCH_BUTTON = re.compile(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="[^"]*"')
FOLD_SUMMARY = '<summary aria-label="Toggle hidden content">'
EMPTY_HEADER = re.compile(r"<th></th>")


def _tag(cell: dict, tag: str) -> None:
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if tag not in tags:
        tags.append(tag)


def only_checks(source: str) -> bool:
    """Half or more of the cell's statements are asserts (and it has some)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    asserts = sum(isinstance(statement, ast.Assert) for statement in body)
    return asserts > 0 and 2 * asserts >= len(body)


def reader_notebook(notebook: dict) -> dict:
    """``notebook`` (nbformat's JSON) as the HTML page shows it: see the module's docstring."""
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell.get("id") == SETUP_ID:
            _tag(cell, "remove-cell")
            continue
        shown = NBVAL_MARKER.sub("", source)
        if shown != source:
            cell["source"] = shown
        if not cell.get("outputs") and only_checks(shown):
            _tag(cell, "hide-input")
    return notebook


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    if not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    source[0] = json.dumps(reader_notebook(json.loads(source[0])), ensure_ascii=False)


# reader.js's names for the parts it links to (its EXPLORERS and label(), which keep these links when equal)
EXPLORERS = {"attention": "the attention explorer", "positional": "the positional-encoding explorer",
             "lm": "the language-model explorer", "stepper": "the decoding stepper",
             "model": "the whole-model explorer", "vit": "the digits explorer"}
REPLAY = "the training replay"  # an attention explorer whose settings hold a replay (chapter 7)
LIVE_DIV = re.compile(r'<div class="tc-live" data-explorer="([a-z]+)">')
LIVE_STATE = re.compile(r'\s*<script[^>]*class="tc-live-state"[^>]*>(.*?)</script>', re.DOTALL)
NEW_PLOT = re.compile(r'Plotly\.newPlot\(\s*"([^"]+)",\s*')
BETWEEN = re.compile(r"[\s,]*")
BODY = re.compile(r"<body[^>]*>")
TITLE_CHARS = 70  # reader.js's figureTitle: a longer title is cut, with an ellipsis


def _plain(text: object) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", str(text or "")).split())


def _figure_controls(text: str) -> list[tuple[int, str, str]]:
    """(position, id, title) of each plotly figure with dropdowns or sliders (plotly-config.js gives these
    keyboard controls, in a row with the id ``tc-keys-<figure id>``)."""
    found = []
    decoder = json.JSONDecoder()
    for call in NEW_PLOT.finditer(text):
        try:
            _, end = decoder.raw_decode(text, call.end())  # the traces
            layout, _ = decoder.raw_decode(text, BETWEEN.match(text, end).end())
        except ValueError:
            continue
        if not isinstance(layout, dict) or not (layout.get("updatemenus") or layout.get("sliders")):
            continue
        title = layout.get("title")
        title = _plain(title.get("text") if isinstance(title, dict) else title)
        if len(title) > TITLE_CHARS:
            title = title[:TITLE_CHARS - 3] + "\u2026"
        found.append((text.find(f'id="{call.group(1)}"'), f"tc-keys-{call.group(1)}", title))
    return found


def _explorer_name(kind: str, state: re.Match | None) -> str:
    """What a skip link calls the explorer of ``kind`` whose settings script is ``state``: two explorers
    of one kind on a page (chapter 7's replay and its attention explorer) get different names."""
    try:
        settings = json.loads(state.group(1)) if state else {}
    except ValueError:
        settings = {}
    if kind == "attention" and isinstance(settings, dict) and settings.get("replay"):
        return REPLAY
    return EXPLORERS.get(kind, "the explorer")


def skip_links(text: str) -> str:
    """``text`` (a written page) with a ``nav.tc-skip`` of links to its explorers and its figures'
    keyboard controls, in page order, first in the body (none where the page has none)."""
    if 'class="tc-skip"' in text or not BODY.search(text):
        return text
    parts, counter = [], 0

    def name(match: re.Match) -> str:
        nonlocal counter
        counter += 1
        explorer = _explorer_name(match.group(1), LIVE_STATE.match(text, match.end()))
        parts.append((match.start(), f"tc-interactive-{counter}", f"Skip to {explorer}"))
        # the name goes on the explorer too: reader.js reads it there, once the explorer has replaced its settings
        return (f'<div class="tc-live" data-explorer="{match.group(1)}" id="tc-interactive-{counter}" '
                f'data-skip-name="{html.escape(explorer)}">')

    text = LIVE_DIV.sub(name, text)
    for position, target, title in _figure_controls(text):
        named = f" \u201c{title}\u201d" if title else ""
        parts.append((position, target, f"Skip to the controls of the figure{named}"))
    if not parts:
        return text
    links = "".join(f'<a href="#{target}">{html.escape(label)}</a>' for _, target, label in sorted(parts))
    nav = f'<nav class="tc-skip" aria-label="Interactive parts of this page">{links}</nav>'
    body = BODY.search(text)
    return text[:body.end()] + nav + text[body.end():]


def fix_page_markup(text: str) -> str:
    text = SEARCH_BUTTON.sub(r"\1", text)
    text = text.replace(FOLD_SUMMARY, "<summary>")
    return skip_links(EMPTY_HEADER.sub("<td></td>", text))


def fix_written_pages(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        fixed = fix_page_markup(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("source-read", on_source_read)
    app.connect("build-finished", fix_written_pages)
    app.add_js_file(READER_JS, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
