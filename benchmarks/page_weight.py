"""How many bytes each page of the built book makes a reader download, with an empty cache.

    python benchmarks/page_weight.py                  # builds the book into a temporary folder
    python benchmarks/page_weight.py --site _build/html

Every page is opened in chromium (as in tests/test_browser.py) in a fresh browser context, and
every response it receives is counted until the network has been idle and the page has drawn:
raw bytes (what tests/test_browser.py's plain http.server sends) and gzip bytes (what a host that
compresses, such as GitHub Pages, would send). Later pages of a visit reuse the cached scripts,
so these are first-visit figures. Each page is compared with its budget (gzip, first visit): a
chapter (a page with figures) 1 MB, a text page 0.3 MB, and the share of it used is printed. What
a page fetches only when the reader first uses it is listed apart, measured by using it: the live
attention explorer's model (on its first translation) and bertviz's d3 and jQuery (on its button).
A page over budget is flagged with its largest files and why they are there, and the script then
exits with status 1.

Then the files the page fetches only on first use of the replay and the language model (each
snapshot of the replay, book-model-step*.bin, and book-lm*), read from the site's _static/live:
raw and gzip bytes each, against 0.4 MB gzip a snapshot and 3 MB gzip in all.

    python benchmarks/page_weight.py --lazy            # only that section, from the files the build writes
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
}"""
FIRST_USE_DONE_JS = """() => {
  const bertviz = [...document.querySelectorAll('div[id^="bertviz-"]')].every(d => d.querySelector('#vis svg'));
  const live = !document.querySelector('.tc-live[data-explorer="attention"]')
    || (window.bookModel && window.bookModel.loadMs !== null);
  return bertviz && live;
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
    if page.evaluate("() => !!document.querySelector('button.tc-bertviz-load, .tc-live[data-explorer=\"attention\"]')"):
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


SNAPSHOT_BUDGET = 400 * 1000  # gzip bytes, one snapshot of the replay (MB = 10^6 bytes, as the budgets)
LAZY_BUDGET = 3 * 1000 * 1000  # gzip bytes, every snapshot and the language model together


def lazy_files(live: Path) -> list[tuple[str, int, int]]:
    """(name, raw bytes, gzip bytes) of the replay's snapshots and the language model's files in ``live``."""
    files = sorted(p for p in live.iterdir() if p.name.startswith(("book-model-step", "book-lm")) and p.suffix != ".js")
    return [(p.name, p.stat().st_size, len(gzip.compress(p.read_bytes(), 6))) for p in files]


def print_lazy(live: Path) -> list[str]:
    """Print the snapshot and language-model section; return what is over its budget."""
    rows = lazy_files(live)
    print("\nFetched on first use of the replay's steps and of the language model; MB = 10^6 bytes.")
    print(f"{'file':34} {'raw MB':>7} {'gzip MB':>7} {'budget':>6} {'used':>5}")
    over = []
    for name, raw, packed in rows:
        budget = SNAPSHOT_BUDGET if name.startswith("book-model-step") else None
        used = f"{packed / budget:5.0%}" if budget else "    -"
        print(f"{name:34} {raw / 1e6:7.3f} {packed / 1e6:7.3f} {(budget or 0) / 1e6:6.1f} {used}")
        if budget and packed > budget:
            over.append(name)
    total_raw, total = sum(r for _, r, _ in rows), sum(g for _, _, g in rows)
    print(f"{'all of them':34} {total_raw / 1e6:7.3f} {total / 1e6:7.3f} {LAZY_BUDGET / 1e6:6.1f} "
          f"{total / LAZY_BUDGET:5.0%}")
    if total > LAZY_BUDGET:
        over.append("the files fetched on first use, together")
    return over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built book's HTML folder (default: build one)")
    parser.add_argument("--lazy", action="store_true", help="only the snapshots and the language model's files")
    args = parser.parse_args()
    if args.lazy:
        with tempfile.TemporaryDirectory() as tmp:
            live = args.site / "_static" / "live" if args.site else Path(tmp)
            if not args.site:
                from transformer_lib.browser.model import write_book_model

                write_book_model(live)
            over = print_lazy(live)
        print(f"\n{len(over)} over budget" + (f": {', '.join(over)}" if over else ""))
        return 1 if over else 0
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
                  "first translation.")
            print(f"{'page':34} {'req':>4} {'raw kB':>7} {'gzip kB':>7}  files (gzip kB)")
            for name, later in deferred:
                files = ", ".join(f"{_name(u)} {g / 1024:.0f}" for u, _, g in sorted(later, key=lambda s: -s[2]))
                print(f"{name:34} {len(later):4d} {sum(s[1] for s in later) / 1024:7.0f} "
                      f"{sum(s[2] for s in later) / 1024:7.0f}  {files}")
            browser.close()
            over += print_lazy(site / "_static" / "live")
    print(f"\n{len(over)} page(s) over budget" + (f": {', '.join(over)}" if over else ""))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
