"""Sphinx extension: the page-level script fixes the offline book needs.

* plotly.js on the pages that draw plotly figures, and only there. Figures reach the page as
  HTML that calls ``Plotly.newPlot`` (``transformer_lib.figures.display.figure_mimebundle``), in
  the page body or inside saved ipywidgets state. One copy of plotly.js, in
  ``_static/vendor/plotly`` (the cartesian bundle: the 2-D trace types listed in its TRACES.txt),
  serves the whole book; a page without figures does not pay its 1.5 MB.
* On pages with saved widgets, a shim for MathJax 2's ``MathJax.Hub.Queue``, which the ipywidgets
  HTML manager calls to typeset widget labels, onto the MathJax 3 the book loads.
* MathJax only on pages with mathematics. Sphinx also loads it on a page whose toctree includes
  a page with equations (the book's root page), which costs 1.3 MB there for nothing.
* Each inline script once: sphinx-thebe's configuration script is otherwise emitted twice (Sphinx
  keeps an inline script added after the builder started under two names, None and ''), and the
  second copy fails with "Identifier 'THEBE_JS_URL' has already been declared".
"""

from __future__ import annotations

from sphinx.application import Sphinx

PLOTLY_JS = "vendor/plotly/plotly-cartesian.min.js"  # under html_static_path (book/_static)
MATHJAX_HUB_SHIM = "mathjax-hub-shim.js"
WIDGET_MANAGER = "html-manager/embed.js"
PLOTLY_MARKER = "Plotly.newPlot"


def _scripts(context: dict) -> list:
    return list(context.get("script_files", []))


def _draws_plotly(context: dict) -> bool:
    if PLOTLY_MARKER in context.get("body", ""):
        return True
    # Figures inside ipywidgets Output widgets live in the widget-state script myst-nb adds.
    return any(PLOTLY_MARKER in str(script.attributes.get("body", "")) for script in _scripts(context))


def _loads_widgets(context: dict) -> bool:
    return any((script.filename or "").endswith(WIDGET_MANAGER) for script in _scripts(context))


def add_page_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object) -> None:
    if _draws_plotly(context):
        # priority 200: a plain script in the head, before the widget manager (500) runs saved outputs.
        app.add_js_file(PLOTLY_JS, priority=200)
    if _loads_widgets(context):
        # before the widget manager, so that its load handler finds the shim in place
        app.add_js_file(MATHJAX_HUB_SHIM, priority=450)
    # (app.add_js_file appends to the list behind context["script_files"]; de-duplicate last.)
    unique, seen = [], set()
    for script in _scripts(context):
        key = (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    if not _has_math(context) and not _loads_widgets(context):  # widget labels may hold TeX
        unique = [script for script in unique if not _is_mathjax(app, script)]
    context["script_files"] = unique


def _has_math(context: dict) -> bool:
    return 'class="math' in context.get("body", "")


def _is_mathjax(app: Sphinx, script: object) -> bool:
    filename = script.filename or ""
    return (filename.split("?")[0] == f"_static/{app.config.mathjax_path}"
            or str(script.attributes.get("body", "")).startswith("window.MathJax"))


def setup(app: Sphinx) -> dict:
    # priority 600: after myst-nb (500) has added the page's widget scripts.
    app.connect("html-page-context", add_page_scripts, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
