"""The whole book as one PDF, printed by Chromium from the built HTML (tools/build-pdf.sh).

    python tools/build_pdf.py [_build/html] [-o _build/html/_static/the-transformer-computed.pdf]

Every page of the table of contents (_toc.yml, in its order) goes into one print page,
``_print.html`` at the site's root: the article of each page (not the theme's header and side bars),
its ids and links rewritten so that a link to another chapter lands on it inside the PDF, after a
cover and a table of contents. Chromium draws it as a reader's browser does (plotly figures, the
formulas typeset at build time, the explorers' first state), then prints it: A4, links kept,
the PDF's outline (bookmarks) from the headings. Before printing, every figure must have drawn
(``UNDRAWN_JS``) and every formula's glyphs must be there (``MISSING_GLYPHS_JS``); a figure is
never split across two PDF pages (``PRINT_CSS``). Links to files of the site that are not pages
(the PDF itself, downloads) lose their address: in a PDF they would point at the print server.

The PDF is written into the site's _static folder, so that the site serves it: the intro links it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from loopback import serve  # noqa: E402 -- tools/loopback.py, beside this script (the tests' server too)
from site_pages import PDF, link_pdf  # noqa: E402 -- the build extension that writes the intro's PDF link

PDF_NAME = Path(PDF).name
PRINT_PAGE = "_print.html"
PAGE_MM, MARGINS_MM = (210, 297), {"top": 16, "bottom": 18, "left": 14, "right": 14}  # A4, the print's margins
# A4's text width at 96 px per inch (687 px): the figures are drawn at the size they print, none wider
VIEWPORT = {"width": int((PAGE_MM[0] - MARGINS_MM["left"] - MARGINS_MM["right"]) / 25.4 * 96), "height": 1000}
PLOTLY_SCRIPTS = ("vendor/plotly/plotly-book.min.js", "plotly-config.js")  # then the live scripts, under live/
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]

PRINT_CSS = ("@page {{ size: A4; margin: {top}mm {right}mm {bottom}mm {left}mm; }}".format(**MARGINS_MM) + """
body { margin: 0; padding: 0 0.5em; font-size: 11pt; }
.tc-chapter { break-before: page; }
.tc-cover { text-align: center; padding-top: 30vh; }
.tc-contents li { margin: 0.2em 0; }
.tc-contents ol ol { font-size: 0.92em; }
.js-plotly-plot, .plotly-graph-div, .tc-figure, figure, img, .cell_output .output { break-inside: avoid; }
h1, h2, h3 { break-after: avoid; }
/* what only a screen uses: plotly's toolbar, the keyboard rows that repeat a figure's menus, the
   copy buttons, the skip links (the explorers' controls: their own print rules, explorers.css) */
.modebar-container, .tc-keys, .copybtn, .tc-skip, .headerlink, .tc-scroll-cue { display: none !important; }
.tc-figure-scroll { overflow: visible !important; }
.tc-figure-scroll svg { min-width: 0 !important; }
a { color: #1b4f72; }
div.highlight pre { white-space: pre-wrap; }
""")

DRAWN_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].every(p => p.querySelector('.main-svg'))"""
# a figure that drew nothing: no trace (line, bar, heatmap image) in its SVG
UNDRAWN_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(p => {
  const r = p.getBoundingClientRect();
  const traces = p.querySelectorAll('.scatterlayer .trace, .barlayer .trace, .heatmaplayer image, .imagelayer image, '
    + '.layer-above image, .contourlayer .trace, .pielayer .trace, g.trace path');
  return r.width < 50 || r.height < 50 || !traces.length;
}).map(p => `${p.id} ${JSON.stringify(((p.layout || {}).title || {}).text || '').slice(0, 60)}`)"""


# a formula's glyph that is not on the page (the page's glyphs were left behind): a blank in the text
MISSING_GLYPHS_JS = """() => [...new Set([...document.querySelectorAll('use')]
  .map(u => (u.getAttribute('xlink:href') || u.getAttribute('href') || '').slice(1))
  .filter(id => id && !document.getElementById(id)))].slice(0, 10)"""


def toc_pages(root: Path = ROOT) -> list[str]:
    """The book's pages in reading order, from _toc.yml (paths without suffix)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    return [toc["root"], *(entry["file"] for entry in toc.get("chapters", []))]


def _key(page: str) -> str:
    return Path(page).name


def _article(html: str, page: str, pages: set[str]) -> tuple[str, str, list[tuple[str, str]]]:
    """The article of one built page, its ids prefixed with the page's name and its links to book
    pages turned into links inside the print page; also its title and its h2 sections."""
    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one("article.bd-article") or soup.body
    key = _key(page)
    renamed = {}
    for element in article.select("[id]"):
        renamed[element["id"]] = f"{key}--{element['id']}"
        element["id"] = renamed[element["id"]]
    for link in article.select("a[href]"):
        href = link["href"]
        target, _, fragment = href.partition("#")
        if not target and fragment:
            link["href"] = f"#{key}--{fragment}"
        elif target.endswith(".html") and Path(target).stem in pages and "//" not in target:
            other = Path(target).stem
            link["href"] = f"#{other}--{fragment}" if fragment else f"#{other}--top"
        elif not re.match(r"^[a-z][a-z0-9+.-]*:", target):
            del link["href"]  # a file of the site (the PDF itself, a download): no address outside the site
    for image in article.select("img[src]"):
        image["src"] = re.sub(r"^(\.\./)+", "", image["src"])
    for script in article.select("script"):
        text = script.string or ""
        for old, new in renamed.items():
            if old.startswith(("fig-", "tc-")) and f'"{old}"' in text:
                text = text.replace(f'"{old}"', f'"{new}"')
        if script.string is not None:
            script.string.replace_with(text)
    title = soup.title.get_text().split("—")[0].split("|")[0].strip() if soup.title else key
    sections = [(h.get_text(" ", strip=True).rstrip("#").strip(), (h.find_parent("section") or {}).get("id", ""))
                for h in article.select("section > h2")]
    return title, str(article), sections


def print_page(site: Path, pages: list[str]) -> str:
    """The whole book as one HTML page (see the module's docstring)."""
    names = {_key(p) for p in pages}
    parts, contents, links, glyphs = [], [], [], {}
    for page in pages:
        path = site / f"{page}.html"
        if not path.exists():
            raise FileNotFoundError(f"{path}: not built (run jupyter-book build first)")
        html = path.read_text(encoding="utf-8")
        soup = BeautifulSoup(html, "html.parser")
        for link in soup.select('head link[rel="stylesheet"]'):
            href = re.sub(r"^(\.\./)+", "", link["href"])
            if href not in links:
                links.append(href)
        # the formulas' glyphs (book/_ext/static_math.py puts each page's at the end of its body): one
        # glyph has one id and the same shape on every page
        for glyph in soup.select("svg#MJX-SVG-global-cache defs > *[id]"):
            glyphs.setdefault(glyph["id"], str(glyph))
        title, article, sections = _article(html, page, names)
        key = _key(page)
        parts.append(f'<div class="tc-chapter" id="{key}--top">{article}</div>')
        entries = "".join(f'<li><a href="#{sid}">{BeautifulSoup(text, "html.parser").get_text()}</a></li>'
                          for text, sid in sections if sid)
        contents.append(f'<li><a href="#{key}--top">{title}</a>{f"<ol>{entries}</ol>" if entries else ""}</li>')
    book = yaml.safe_load((ROOT / "_config.yml").read_text())
    head = "".join(f'<link rel="stylesheet" href="{href}">' for href in links)
    from transformer_lib.browser.page import LIVE_SCRIPTS  # the page's scripts in their order: one list

    scripts = "".join(f'<script src="_static/{script}"></script>'
                      for script in (*PLOTLY_SCRIPTS, *(f"live/{name}" for name in LIVE_SCRIPTS))
                      if (site / "_static" / script).exists())
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{book["title"]}</title>'
            f'{head}<style>{PRINT_CSS}</style>{scripts}</head><body>'
            f'<div class="tc-cover"><h1>{book["title"]}</h1><p>{book["author"]}, {book["copyright"]}</p>'
            '<p>Printed from the HTML book: every figure as the book draws it; the explorers show their first '
            'state (they run in the HTML book and in the notebooks).</p></div>'
            f'<nav class="tc-chapter tc-contents" aria-label="Contents"><h1>Contents</h1><ol>{"".join(contents)}'
            f'</ol></nav>{"".join(parts)}'
            f'<svg id="MJX-SVG-global-cache" style="display: none" aria-hidden="true"><defs>{"".join(glyphs.values())}'
            '</defs></svg></body></html>')


def build_pdf(site: Path, output: Path | None = None, chromium: str | None = None, browser: object = None) -> Path:
    """Print the built book in ``site`` to ``output`` (default: the site's _static folder), with
    ``browser`` (a playwright Browser: the tests pass theirs) or a chromium it starts."""
    import shutil

    output = output or site / "_static" / PDF_NAME
    link_pdf(site, present=True)  # the intro as a reader of the published site sees it
    (site / PRINT_PAGE).write_text(print_page(site, toc_pages()), encoding="utf-8")
    try:
        with serve(site) as base:
            if browser is not None:
                _print(browser, base, output)
            else:
                from playwright.sync_api import sync_playwright

                executable = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
                if executable is None:
                    raise RuntimeError("chromium: not found (apt-get install -y chromium, or pass --chromium)")
                with sync_playwright() as playwright:
                    launched = playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS, headless=True)
                    try:
                        _print(launched, base, output)
                    finally:
                        launched.close()
    finally:
        (site / PRINT_PAGE).unlink(missing_ok=True)
        link_pdf(site)  # a link only if the PDF is now in the site
    return output


def _print(browser, base: str, output: Path) -> None:
    """Open the print page served at ``base``, wait until every figure is drawn, print it to ``output``."""
    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.route("**/*", lambda route: route.continue_() if "127.0.0.1" in route.request.url else route.abort())
        page.goto(base + PRINT_PAGE, wait_until="load")
        page.wait_for_function(DRAWN_JS, timeout=120_000, polling=500)
        page.wait_for_timeout(500)
        undrawn = page.evaluate(UNDRAWN_JS)
        if undrawn:
            raise RuntimeError(f"figures that drew nothing: {undrawn}")
        missing = page.evaluate(MISSING_GLYPHS_JS)
        if missing:
            raise RuntimeError(f"formulas whose glyphs are missing: {missing}")
        page.emulate_media(media="print")
        page.pdf(path=str(output), format="A4", print_background=True, outline=True, tagged=True,
                 display_header_footer=True, header_template="<span></span>",
                 footer_template='<div style="font-size:8pt;width:100%;text-align:center;color:#555">'
                                 '<span class="pageNumber"></span> / <span class="totalPages"></span></div>',
                 margin={side: f"{mm}mm" for side, mm in MARGINS_MM.items()})
    finally:
        page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("-o", "--output", type=Path, default=None)
    parser.add_argument("--chromium", default=None, help="a Chromium binary (default: chromium on PATH)")
    args = parser.parse_args(argv)
    path = build_pdf(args.site, args.output, args.chromium)
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
