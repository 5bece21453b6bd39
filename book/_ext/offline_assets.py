"""Sphinx extension: the page-level script fixes the offline book needs.

* plotly.js on the pages that draw plotly figures, and only there. Figures reach the page as
  HTML that calls ``Plotly.newPlot`` (``transformer_lib.figures.display.figure_mimebundle``), in
  the page body or inside saved ipywidgets state. One copy of plotly.js, in
  ``_static/vendor/plotly`` (the book's bundle: the trace types listed in its TRACES.txt),
  serves the whole book; a page without figures does not pay its 1.2 MB.
* On pages with saved widgets, a shim for MathJax 2's ``MathJax.Hub.Queue``, which the ipywidgets
  HTML manager calls to typeset widget labels, onto the MathJax 3 the book loads.
* MathJax only on pages with raw TeX left for it: the static_math extension typesets the formulas
  at build time, so no page loads it unless saved widgets need it. Sphinx would also load it on a
  page whose toctree includes a page with equations (the book's root page).
* The live explorers (``transformer_lib.browser.page``): on pages that hold one, plotly.js,
  ``_static/live``'s scripts and the theme (``transformer_lib.browser.theme``: the look and the
  messages, inline as ``<script id="tc-live-theme">``). The build writes the scripts there from the
  package (``browser.page.write_page_files``, with ``theme.json``) and the book's models
  (``browser.model``: the translator, and chapter 8's language model, whose scripts go only on the
  page that holds its explorer), which the page fetches only when the reader first uses them.
  Where the live explorers replaced every saved widget view, the saved widget state and the
  widget manager (1.9 MB) are left out.
* On every page: ``reader.css`` (a page never wider than a phone's screen, code wrapped at the
  column); on pages with plotly figures, ``plotly-config.js`` (no toolbar button that uploads a
  figure). The theme's FontAwesome script is taken out of every written page: its CSS and web
  fonts draw the same icons, and the script weighs 1.5 MB.
* What a page does not use, left out: sphinx-design's styles and tab script on pages without its
  components (``sd-`` classes); and, except on the search page, Sphinx's search index and search
  scripts (45 kB gzip), which the theme loads on every page for its search-as-you-type box, a box
  the book leaves off (``search_as_you_type``: the theme's script returns before using them).
* Each inline script once: sphinx-thebe's configuration script is otherwise emitted twice (Sphinx
  keeps an inline script added after the builder started under two names, None and ''), and the
  second copy fails with "Identifier 'THEBE_JS_URL' has already been declared".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx.application import Sphinx

PLOTLY_JS = "vendor/plotly/plotly-book.min.js"  # under html_static_path (book/_static)
PLOTLY_DEFAULTS = "plotly-config.js"  # no "Share chart..." (an upload to plotly's cloud) on any figure
READER_CSS = "reader.css"  # long names break, code wraps, nothing widens a phone's page
# The theme's FontAwesome *script* (1.5 MB on every page) only swaps the icons' <i> elements for
# SVG; the theme's CSS already draws the same icons with FontAwesome's web fonts.
FONTAWESOME_SCRIPT = re.compile(r'\s*<script defer src="[^"]*_static/scripts/fontawesome\.js\?[^"]*"></script>')
SEARCH_SCRIPTS = re.compile(r'\s*<script src="[^"]*_static/searchtools\.js"></script>'
                            r'\s*<script src="[^"]*_static/language_data\.js"></script>'
                            r'\s*<script src="[^"]*searchindex\.js"></script>')
DESIGN_FILES = ("sphinx-design.min.css", "design-tabs.js")  # sphinx-design's, in _static
DESIGN_CLASS = re.compile(r'class="(?:[^"]* )?sd-')
MATHJAX_HUB_SHIM = "mathjax-hub-shim.js"
WIDGET_MANAGER = "html-manager/embed.js"
PLOTLY_MARKER = "Plotly.newPlot"
LIVE_MARKER = 'class="tc-live"'  # transformer_lib.browser.page.live_explorer_html
EXPLORER_KIND = re.compile(r'<div class="tc-live" data-explorer="(\w+)"')  # each explorer the page holds
# The copy of the theme each explorer's output carries (transformer_lib.browser.page.live_explorer_html),
# for a page with no other, as JupyterLab's: the built page holds the build's own in its head, which the
# scripts read first (book-text.js), so the copies are dropped (1.9 kB gzip each).
THEME_COPY = re.compile(r'<script type="application/json" class="tc-live-theme">.*?</script>', re.S)
LIVE_FOLDER = "live/"  # the page files under _static (transformer_lib.browser.page.page_scripts)
LIVE_CSS = LIVE_FOLDER + "explorers.css"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
RAW_MATH = re.compile(r'class="math[^"]*">\s*\\[(\[]')  # Sphinx's \( or \[ right inside a math element


def _scripts(context: dict) -> list:
    return list(context.get("script_files", []))


def _draws_plotly(context: dict) -> bool:
    if PLOTLY_MARKER in context.get("body", ""):
        return True
    # Figures inside ipywidgets Output widgets live in the widget-state script myst-nb adds.
    return any(PLOTLY_MARKER in str(script.attributes.get("body", "")) for script in _scripts(context))


def _loads_widgets(context: dict) -> bool:
    return any((script.filename or "").endswith(WIDGET_MANAGER) for script in _scripts(context))


def _has_live_explorer(context: dict) -> bool:
    return LIVE_MARKER in context.get("body", "")


def _unused_widget_script(context: dict, script: object) -> bool:
    """The widget state and manager of a page without widget views (live explorers took their place)."""
    if WIDGET_VIEW in context.get("body", ""):
        return False
    return (script.filename or "").endswith(WIDGET_MANAGER) or script.attributes.get("type") == WIDGET_STATE


def _prune_widget_state(context: dict) -> None:
    """Keep only the saved widgets that the page's widget views show (and the widgets those refer
    to): the state of an explorer the live one replaced would otherwise still be sent, figures and all."""
    body = context.get("body", "")
    views = set(re.findall(r'"model_id":\s*"([0-9a-f]+)"', body))
    for script in _scripts(context):
        if script.attributes.get("type") != WIDGET_STATE or not views:
            continue
        saved = json.loads(script.attributes["body"])
        state = saved.get("state", {})
        keep, todo = set(), [v for v in views if v in state]
        while todo:
            model_id = todo.pop()
            if model_id not in keep:
                keep.add(model_id)
                todo += [m for m in re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(state[model_id])) if m in state]
        if keep != set(state):
            saved["state"] = {k: v for k, v in state.items() if k in keep}
            # no "</" inside the script element ("<\/" is the same JSON)
            script.attributes["body"] = json.dumps(saved).replace("</", "<\\/")


def add_page_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object) -> None:
    # (app.add_js_file appends to the list behind context["script_files"]: filter it last.)
    _prune_widget_state(context)
    live = _has_live_explorer(context)
    widgets = _loads_widgets(context) and WIDGET_VIEW in context.get("body", "")
    if live:
        from transformer_lib.browser.page import page_scripts
        from transformer_lib.browser.theme import THEME_ID, theme_json

        # the build's theme, which the scripts prefer to the copy stored in an explorer's output
        app.add_js_file(None, body=theme_json(), type="application/json", id=THEME_ID, priority=509)
        context["body"] = THEME_COPY.sub("", context["body"])
        kinds = set(EXPLORER_KIND.findall(context["body"]))
        for priority, script in enumerate(page_scripts(kinds), start=510):  # after plotly.js, in load order
            app.add_js_file(LIVE_FOLDER + script, priority=priority)
        app.add_css_file(LIVE_CSS)
    if _draws_plotly(context) or live:
        # priority 200: a plain script in the head, before the widget manager (500) runs saved outputs.
        app.add_js_file(PLOTLY_JS, priority=200)
        app.add_js_file(PLOTLY_DEFAULTS, priority=201)
    if widgets:
        # before the widget manager, so that its load handler finds the shim in place
        app.add_js_file(MATHJAX_HUB_SHIM, priority=450)
    unique, seen = [], set()
    for script in _scripts(context):
        key = (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))
        if key not in seen and not _unused_widget_script(context, script):
            seen.add(key)
            unique.append(script)
    if not _has_math(context) and not widgets:  # widget labels may hold TeX
        unique = [script for script in unique if not _is_mathjax(app, script)]
    if not DESIGN_CLASS.search(context.get("body", "")):
        unique = [script for script in unique if not _is_design(script)]
        context["css_files"] = [css for css in context.get("css_files", []) if not _is_design(css)]
    context["script_files"] = unique


def _is_design(asset: object) -> bool:
    return (getattr(asset, "filename", "") or "").split("?")[0].split("/")[-1] in DESIGN_FILES


def _has_math(context: dict) -> bool:
    """Raw TeX left for the browser's MathJax: none where static_math typesets the page."""
    return RAW_MATH.search(context.get("body", "")) is not None and not context.get("static_math")


def _is_mathjax(app: Sphinx, script: object) -> bool:
    filename = script.filename or ""
    return (filename.split("?")[0] == f"_static/{app.config.mathjax_path}"
            or str(script.attributes.get("body", "")).startswith("window.MathJax"))


def fix_written_pages(app: Sphinx, exception: Exception | None) -> None:
    """Take the theme's FontAwesome script out of every page, and its search scripts out of every
    page but the search page (its template adds both, not a script list this extension could
    filter); the icons still draw, from the theme's CSS and web fonts."""
    if exception is not None or app.builder.format != "html":
        return
    search_box = str(app.config.html_theme_options.get("search_as_you_type", False)).lower() == "true"
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lighter = FONTAWESOME_SCRIPT.sub("", text)
        if not search_box and page != Path(app.outdir) / "search.html":
            lighter = SEARCH_SCRIPTS.sub("", lighter)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")


def write_live_model(app: Sphinx, exception: Exception | None) -> None:
    """The live explorers' scripts, theme and the book's model, into the site's _static/live (from
    the package: not committed twice)."""
    if exception is not None or app.builder.format != "html":
        return
    from transformer_lib.browser.model import write_book_lm, write_book_model
    from transformer_lib.browser.page import write_page_files

    write_page_files(Path(app.outdir) / "_static" / "live")
    write_book_model(Path(app.outdir) / "_static" / "live")
    write_book_lm(Path(app.outdir) / "_static" / "live")  # chapter 8's language model, fetched on first use


def setup(app: Sphinx) -> dict:
    # priority 600: after myst-nb (500) has added the page's widget scripts.
    app.connect("html-page-context", add_page_scripts, priority=600)
    app.connect("build-finished", write_live_model)
    app.connect("build-finished", fix_written_pages)
    app.add_css_file(READER_CSS)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
