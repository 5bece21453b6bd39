"""How many bytes each page of the built book makes a reader download, with an empty cache.

    python benchmarks/page_weight.py                  # builds the book into a temporary folder
    python benchmarks/page_weight.py --site _build/html

Every page is opened in chromium (as in tests/test_browser.py) in a fresh browser context, and
every response it receives is counted until the network has been idle and the page has drawn:
raw bytes (what tests/test_browser.py's plain http.server sends) and gzip bytes (what a host that
compresses, such as GitHub Pages, would send). Later pages of a visit reuse the cached scripts,
so these are first-visit figures. Each page is compared with its budget (gzip, first visit): a
chapter (a page with figures) 1 MB, a text page 0.3 MB; the live explorers' model is fetched only
when the reader first uses an explorer, so a first visit does not load it. A page over budget is
flagged with its largest files and why they are there.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from book_browser import LAUNCH_ARGS, build_book, chromium_path, html_pages, serve  # noqa: E402

CHAPTER_BUDGET = 1024 * 1024  # gzip bytes, first visit
TEXT_BUDGET = 300 * 1024
# Why a page may exceed the limit: the libraries that make the pictures work offline.
REASONS = {
    "plotly-cartesian.min.js": "plotly.js, its bundle of 2-D traces; one file for the site",
    "embed.js": "the ipywidgets HTML manager, which draws saved widgets without a kernel",
    "tex-chtml.js": "MathJax 3 (TeX, base and AMS macros)",
    "pydata-sphinx-theme.css": "the theme's styles",
}


def measure(browser, url: str) -> list[tuple[str, int, int]]:
    """(url, raw bytes, gzip bytes) of every response the page received."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(1500)  # scripts loaded after the load event (bertviz's d3, MathJax fonts)
    sizes = []
    for response in responses:
        try:
            body = response.body()
        except Exception:  # noqa: BLE001 -- a redirect or an aborted response has no body
            body = b""
        sizes.append((response.url, len(body), len(gzip.compress(body, 6)) if body else 0))
    context.close()
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built book's HTML folder (default: build one)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build_book(Path(tmp))
        with serve(site) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS)
            print(f"{'page':34} {'requests':>8} {'raw kB':>9} {'gzip kB':>9}  largest files (raw kB)")
            for path in html_pages(site):
                name = path.relative_to(site).as_posix()
                sizes = measure(browser, base + name)
                raw, packed = sum(s[1] for s in sizes), sum(s[2] for s in sizes)
                largest = sorted(sizes, key=lambda s: -s[1])[:3]
                top = ", ".join(f"{u.rsplit('/', 1)[-1].split('?')[0]} {b / 1024:.0f}" for u, b, _ in largest)
                print(f"{name:34} {len(sizes):8d} {raw / 1024:9.0f} {packed / 1024:9.0f}  {top}")
                budget = CHAPTER_BUDGET if any(s[0].endswith("plotly-cartesian.min.js") for s in sizes) \
                    or name.startswith("book/0") else TEXT_BUDGET
                if packed > budget:
                    files = {u.rsplit("/", 1)[-1].split("?")[0] for u, _, _ in sizes}
                    reasons = "; ".join(f"{file}: {why}" for file, why in REASONS.items() if file in files)
                    print(f"{'':34} over its budget of {budget / 1024:.0f} kB gzip. {reasons}")
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
