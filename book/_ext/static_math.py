"""Sphinx extension: the book's formulas typeset at build time, so that no page loads MathJax.

Every ``\\(...\\)`` and ``\\[...\\]`` that Sphinx writes into a page (``<span|div class="math ...">``,
in the body and in the page's table of contents, where the theme repeats a heading's formula) is
handed, once the page is written, to MathJax 3 in Node.js (``math_to_svg.js`` beside this file,
with the vendored subset of npm ``mathjax`` in ``mathjax/``; tools/vendor_assets.sh) and replaced
by the SVG it draws, with MathML beside it for screen readers. The glyphs' outlines are written
once per page, in a hidden ``<svg>`` at the end of the body; MathJax's own stylesheet for its SVG
output is ``math-svg.css``. The browser then needs no script for mathematics: MathJax in the
browser cost a chapter 1.1 MB (260 kB gzip) of script and 50 kB of fonts.

A formula MathJax cannot read (an unknown macro) fails the build with its message. Without Node.js
the book still builds: the formulas are then left to the vendored MathJax in the browser, as before
(heavier pages: about 300 kB gzip more on each page with formulas), and the build says so. Pages with
saved ipywidgets keep the browser's MathJax (widget labels may hold TeX that only exists there);
``offline_assets`` removes MathJax from every page marked here (``context["static_math"]``) and
from every page without formulas.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

RENDERER = Path(__file__).with_name("math_to_svg.js")
STYLESHEET = "math-svg.css"  # written into the site's _static by the build
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# Sphinx's MathJax writer: the TeX inside, with its delimiters, HTML-escaped.
MATH = re.compile(r'(<(span|div) class="math notranslate nohighlight">)\s*\\([(\[])(.*?)\\([)\]])\s*(</\2>)', re.DOTALL)


def find_node() -> str | None:
    return shutil.which("node") or shutil.which("nodejs")


def typeset(formulas: list[dict]) -> dict:
    """MathJax's SVG for each ``{"tex": ..., "display": ...}``: ``{"math", "defs", "css"}``."""
    node = find_node()
    if node is None:
        raise ExtensionError("static_math: Node.js not found. The book typesets its formulas at build time with "
                             "MathJax in Node.js: install it (apt-get install nodejs).")
    result = subprocess.run([node, str(RENDERER)], input=json.dumps(formulas), capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise ExtensionError(f"static_math: MathJax in Node.js failed ({result.returncode}): {result.stderr[-2000:]}")
    rendered = json.loads(result.stdout)
    if rendered["errors"]:
        raise ExtensionError("static_math: MathJax could not typeset " + "; ".join(rendered["errors"]))
    return rendered


def mark_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object) -> None:
    """A page with formulas and no saved widgets is typeset at build time (``typeset_written_pages``):
    it links MathJax's stylesheet, and ``offline_assets`` leaves MathJax's script out. Without Node.js
    no page is marked, and the browser's MathJax typesets them."""
    if not app.config.static_math_with_node:
        return
    if MATH.search(context.get("body", "")) and WIDGET_VIEW not in context.get("body", ""):
        context["static_math"] = True
        app.add_css_file(STYLESHEET)


def typeset_written_pages(app: Sphinx, exception: Exception | None) -> None:
    """Typeset each marked page as written: its body and also its table of contents, where the
    theme repeats a heading's formula."""
    if exception is not None or app.builder.format != "html":
        return
    site = Path(app.outdir)
    css = None
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if f"_static/{STYLESHEET}" not in text or "_sources" in page.relative_to(site).parts:
            continue
        matches = list(MATH.finditer(text))
        if not matches:
            continue
        rendered = typeset([{"tex": html.unescape(m.group(4)), "display": m.group(2) == "div"} for m in matches])
        pieces, end = [], 0
        for match, svg in zip(matches, rendered["math"], strict=True):
            pieces += [text[end:match.start()], match.group(1), svg, match.group(6)]
            end = match.end()
        rest = text[end:]
        closing = rest.rindex("</body>")
        pieces += [rest[:closing], rendered["defs"], rest[closing:]]
        page.write_text("".join(pieces), encoding="utf-8")
        css = rendered["css"]
    if css is not None:
        (site / "_static" / STYLESHEET).write_text(css, encoding="utf-8")


def check_node(app: Sphinx) -> None:
    if app.config.static_math_with_node and find_node() is None:
        app.config.static_math_with_node = False
        # info, not a warning: the book builds with -W, and a reader without Node.js still gets a whole book
        logger.info("static_math: Node.js not found; the formulas are left to MathJax in the browser (pages "
                    "with formulas about 300 kB gzip heavier). Install Node.js (apt-get install nodejs) to "
                    "typeset them at build time.")


def setup(app: Sphinx) -> dict:
    app.add_config_value("static_math_with_node", True, "html")
    app.connect("builder-inited", check_node)
    # priority 590: before offline_assets (600), which then leaves MathJax out of marked pages.
    app.connect("html-page-context", mark_page, priority=590)
    app.connect("build-finished", typeset_written_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
