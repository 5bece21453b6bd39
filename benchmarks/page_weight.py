"""How many bytes each page of the built book makes a reader download, with an empty cache.

    python benchmarks/page_weight.py                  # builds the book into a temporary folder
    python benchmarks/page_weight.py --site _build/html
    python benchmarks/page_weight.py --models-only    # the model files the page fetches on first use

Every page is opened in chromium (as in tests/test_browser.py) in a fresh browser context, and
every response it receives is counted until the network has been idle and the page has drawn:
raw bytes (what tests/test_browser.py's plain http.server sends) and gzip bytes (what a host that
compresses, such as GitHub Pages, would send). Later pages of a visit reuse the cached scripts,
so these are first-visit figures. Each page is compared with its budget (gzip, first visit): a
chapter (a page with figures) 1 MB, a text page 0.3 MB, and the share of it used is printed. What
a page fetches only when the reader first uses it is listed apart, measured by using it: the live
attention explorer's model (on its first translation), chapter 8's language model (on the LM
explorer's first use) and bertviz's d3 and jQuery (on its button). The model files the build writes
(``browser.model``) are also listed by themselves, raw and gzip, against their budget: everything
fetched on first use at most 3 MB gzip.
A page over budget is flagged with its largest files and why they are there, and the script then
exits with status 1.
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
FIRST_USE_BUDGET = 3 * 1024 * 1024  # gzip bytes: every model file the page fetches on first use, together
# Why a page may need more than the rest: the libraries that make the pictures work offline.
REASONS = {
    "plotly-book.min.js": "plotly.js, built for the trace types the book draws; one file for the site",
    "embed.js": "the ipywidgets HTML manager, which draws saved widgets without a kernel",
    "tex-chtml.js": "MathJax 3 in the browser (only where saved widgets may hold TeX)",
    "pydata-sphinx-theme.css": "the theme's styles",
}
# What a page loads only when the reader first uses it (not part of a first visit): the live
# attention explorer's model, on its first translation; bertviz's d3 and jQuery, on its button.
FIRST_USE_JS = """async () => {
  for (const button of document.querySelectorAll('button.tc-bertviz-load')) button.click();
  for (const form of document.querySelectorAll('.tc-live[data-explorer="attention"] form.tc-sentence')) {
    const input = form.querySelector('input');
    if (!input.value.trim()) input.value = 'the small dog sleeps';
    form.requestSubmit();
  }
  for (const form of document.querySelectorAll('.tc-live[data-explorer="lm"] form.tc-lm-form')) form.requestSubmit();
}"""
FIRST_USE_DONE_JS = """() => {
  const bertviz = [...document.querySelectorAll('div[id^="bertviz-"]')].every(d => d.querySelector('#vis svg'));
  const live = !document.querySelector('.tc-live[data-explorer="attention"]')
    || (window.bookModel && window.bookModel.loadMs !== null);
  const lm = !document.querySelector('.tc-live[data-explorer="lm"]')
    || (window.bookLM && window.bookLM.loadMs !== null);
  return bertviz && live && lm;
}"""


def _sizes(responses: list) -> list[tuple[str, int, int]]:
    sizes = []
    for response in responses:
        try:
            body = response.body()
        except Exception:  # noqa: BLE001 -- a redirect or an aborted response has no body
            body = b""
        sizes.append((response.url, len(body), len(gzip.compress(body, 6)) if body else 0))
    return sizes


def measure(browser, url: str) -> tuple[list[tuple[str, int, int]], list[tuple[str, int, int]]]:
    """(url, raw bytes, gzip bytes) of every response the page received on a first visit, and of
    those it received when the reader then used what loads on first use."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    responses: list = []
    page.on("response", lambda response: responses.append(response))
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(1500)  # anything a script loads after the load event
    first_visit = _sizes(responses)
    responses.clear()
    if page.evaluate("() => !!document.querySelector('button.tc-bertviz-load, .tc-live[data-explorer=\"attention\"], "
                     ".tc-live[data-explorer=\"lm\"]')"):
        page.evaluate(FIRST_USE_JS)
        page.wait_for_function(FIRST_USE_DONE_JS, timeout=60_000, polling=250)
        page.wait_for_load_state("networkidle")
    first_use = _sizes(responses)
    context.close()
    return first_visit, first_use


def _name(url: str) -> str:
    return url.rsplit("/", 1)[-1].split("?")[0]


def budget_of(name: str, sizes: list[tuple[str, int, int]]) -> tuple[str, int]:
    """A chapter (a page with figures: plotly.js, or a numbered chapter) or a text page."""
    if any("/vendor/plotly/" in u for u, _, _ in sizes) or name.startswith("book/0"):
        return "chapter", CHAPTER_BUDGET
    return "text", TEXT_BUDGET


def model_files() -> list[tuple[str, int, int]]:
    """(file, raw bytes, gzip bytes) of each model file the build writes for the page (``browser.model``):
    the translator's and chapter 8's language model's, each fetched on its explorer's first use."""
    from transformer_lib.browser.model import write_book_lm, write_book_model

    with tempfile.TemporaryDirectory() as tmp:
        paths = write_book_model(tmp) + write_book_lm(tmp)
        return [(p.name, len(b), len(gzip.compress(b, 6))) for p in paths for b in [p.read_bytes()]]


def report_model_files() -> int:
    files = model_files()
    print("Model files the page fetches on first use (written by transformer_lib.browser.model); kB = 1024 bytes.")
    print(f"{'file':24} {'raw kB':>7} {'gzip kB':>7}")
    for name, raw, packed in files:
        print(f"{name:24} {raw / 1024:7.0f} {packed / 1024:7.0f}")
    packed = sum(f[2] for f in files)
    print(f"{'all':24} {sum(f[1] for f in files) / 1024:7.0f} {packed / 1024:7.0f}  "
          f"budget {FIRST_USE_BUDGET / 1024:.0f} kB gzip, {packed / FIRST_USE_BUDGET:.0%} used\n")
    return 1 if packed > FIRST_USE_BUDGET else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built book's HTML folder (default: build one)")
    parser.add_argument("--models-only", action="store_true", help="only the model files, without a book")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    models_over = report_model_files()
    if args.models_only:
        return models_over
    from playwright.sync_api import sync_playwright

    over = []
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build_book(Path(tmp))
        with serve(site) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS)
            print("First visit (empty cache): every response until the network is idle; kB = 1024 bytes.")
            print(f"{'page':34} {'kind':7} {'req':>4} {'raw kB':>7} {'gzip kB':>7} {'budget':>6} {'used':>5}  "
                  "largest files (gzip kB)")
            deferred = []
            for path in html_pages(site):
                name = path.relative_to(site).as_posix()
                sizes, later = measure(browser, base + name)
                raw, packed = sum(s[1] for s in sizes), sum(s[2] for s in sizes)
                kind, budget = budget_of(name, sizes)
                top = ", ".join(f"{_name(u)} {g / 1024:.0f}" for u, _, g in sorted(sizes, key=lambda s: -s[2])[:3])
                print(f"{name:34} {kind:7} {len(sizes):4d} {raw / 1024:7.0f} {packed / 1024:7.0f} {budget / 1024:6.0f} "
                      f"{packed / budget:5.0%}  {top}")
                if packed > budget:
                    files = {_name(u) for u, _, _ in sizes}
                    reasons = "; ".join(f"{file}: {why}" for file, why in REASONS.items() if file in files)
                    print(f"{'':34} OVER its budget of {budget / 1024:.0f} kB gzip. {reasons}")
                    over.append(name)
                if later:
                    deferred.append((name, later))
            print("\nLoaded on first use only (not in the first visit above): bertviz's button, the live explorer's "
                  "first translation, the language-model explorer's first use.")
            print(f"{'page':34} {'req':>4} {'raw kB':>7} {'gzip kB':>7}  files (gzip kB)")
            for name, later in deferred:
                files = ", ".join(f"{_name(u)} {g / 1024:.0f}" for u, _, g in sorted(later, key=lambda s: -s[2]))
                print(f"{name:34} {len(later):4d} {sum(s[1] for s in later) / 1024:7.0f} "
                      f"{sum(s[2] for s in later) / 1024:7.0f}  {files}")
            browser.close()
    print(f"\n{len(over)} page(s) over budget" + (f": {', '.join(over)}" if over else ""))
    return 1 if over or models_over else 0


if __name__ == "__main__":
    sys.exit(main())
