"""How many bytes each page of the built book makes a reader download, with an empty cache.

    python benchmarks/page_weight.py                  # builds the book into a temporary folder
    python benchmarks/page_weight.py --site _build/html
    python benchmarks/page_weight.py --models-only    # the model files the page fetches on first use

Every page is opened in chromium (as in tests/test_browser.py) in a fresh browser context, and
every response it receives is counted until the network has been idle and the page has drawn:
raw bytes (what tests/test_browser.py's plain http.server sends) and gzip bytes (what a host that
compresses, such as GitHub Pages, would send). Later pages of a visit reuse the cached scripts,
so these are first-visit figures. Each page is compared with its budget (gzip, first visit, what a
page loads before any control is used): a chapter (a page with figures) 0.7 MB (issue 23), a text
page 0.3 MB, and the share of it used is printed; MB = 10^6 bytes, as the issues' budgets. What
a page fetches only when the reader first uses it is listed apart, measured by using it: the live
attention explorer's model (on its first translation), chapter 8's language model (on the LM
explorer's first use) and bertviz's d3 and jQuery (on its button). The model files the build writes
(``browser.model``) are also listed by themselves, raw and gzip, against their budget: everything
fetched on first use at most 3 MB gzip.
A page over budget is flagged with its largest files and why they are there, and the script then
exits with status 1.

Then every file the page fetches only on first use (issue 23), found by kind, not by name, so that
files added later are counted: every file in the site's _static (any folder below it) that no page
loads with its first visit, and that is data (not a script, a style sheet, a font or an image):
the model, each snapshot of the replay (a file named for its training step), the language model.
Raw and gzip bytes each, against 0.4 MB gzip a snapshot and 3 MB gzip in all. Budgets are printed,
never asserted by a test.

    python benchmarks/page_weight.py --lazy            # only that section, from the files the build writes
    python benchmarks/page_weight.py --lazy --site _build/html
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools.book_browser import LAUNCH_ARGS, build_book, chromium_path, html_pages, serve  # noqa: E402

MB = 1000 * 1000
CHAPTER_BUDGET = int(0.7 * MB)  # gzip bytes, first visit, before any control is used (issue 23)
TEXT_BUDGET = int(0.3 * MB)
SNAPSHOT_BUDGET = int(0.4 * MB)  # gzip bytes, one snapshot of the replay
# gzip bytes: the page lab's files fetched on first use (the replay's snapshots and the language model),
# together (issue 23). The translator's own files, fetched by the attention explorer's first
# translation, have their budget in benchmarks/live_model.py (issue 13); they are listed here too.
LAZY_BUDGET = 3 * MB
LAB_KINDS = ("snapshot", "language model")
# Not fetched on first use: what the pages load with them (scripts, styles, fonts, images, the
# theme) and the theme's translation catalogues (.mo, .po: the build reads them, no page fetches them).
PAGE_SUFFIXES = {".js", ".mjs", ".css", ".map", ".woff", ".woff2", ".ttf", ".eot", ".svg", ".png", ".jpg",
                 ".jpeg", ".gif", ".ico", ".html", ".txt", ".mo", ".po"}
PAGE_FILES = {"theme.json", "LICENSE"}
SNAPSHOT = re.compile(r"step[-_]?\d+", re.IGNORECASE)  # a replay snapshot: named for its training step
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


def lazy_kind(name: str) -> str:
    """What a file fetched on first use holds, from its name: a snapshot, the language model, a model."""
    if SNAPSHOT.search(name):
        return "snapshot"
    if "lm" in re.split(r"[-_.]", name.lower()):
        return "language model"
    return "model"


def lazy_files(static: Path, first_visit: set[str] | None = None) -> list[tuple[str, str, int, int]]:
    """(path under ``static``, kind, raw bytes, gzip bytes) of every data file below ``static`` that
    pages fetch on first use only: not a script, style, font or image, and not loaded by a first
    visit (``first_visit``: the file names the pages fetched, when they were opened)."""
    rows = []
    for path in sorted(p for p in static.rglob("*") if p.is_file()):
        if path.suffix.lower() in PAGE_SUFFIXES or path.name in PAGE_FILES or "vendor" in path.parts:
            continue
        if first_visit is not None and path.name in first_visit:
            continue
        body = path.read_bytes()
        rows.append((path.relative_to(static).as_posix(), lazy_kind(path.name), len(body), len(gzip.compress(body, 6))))
    return rows


def print_lazy(static: Path, first_visit: set[str] | None = None) -> list[str]:
    """Print the files fetched on first use, by kind, against their budgets; return what is over."""
    rows = lazy_files(static, first_visit)
    print(f"\nFetched on first use only (data files under {static.name}/ that no first visit loads); "
          "MB = 10^6 bytes.")
    print(f"{'file':40} {'kind':15} {'raw MB':>7} {'gzip MB':>7} {'budget':>6} {'used':>5}")
    over = []
    for name, kind, raw, packed in rows:
        budget = SNAPSHOT_BUDGET if kind == "snapshot" else None
        used = f"{packed / budget:5.0%}" if budget else "    -"
        print(f"{name:40} {kind:15} {raw / MB:7.3f} {packed / MB:7.3f} {(budget or 0) / MB:6.1f} {used}")
        if budget and packed > budget:
            over.append(f"{name} (over {budget / MB:.1f} MB gzip a snapshot)")
    for kind in sorted({k for _, k, _, _ in rows}):
        of_kind = [r for r in rows if r[1] == kind]
        print(f"{'  all ' + kind + ' files':40} {len(of_kind):>3} file(s)    {sum(r[2] for r in of_kind) / MB:7.3f} "
              f"{sum(r[3] for r in of_kind) / MB:7.3f}")
    total_raw, total = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f"{'all of them':40} {'':15} {total_raw / MB:7.3f} {total / MB:7.3f}")
    lab = [r for r in rows if r[1] in LAB_KINDS]
    lab_total = sum(r[3] for r in lab)
    print(f"{'the lab: snapshots and language model':40} {'':15} {sum(r[2] for r in lab) / MB:7.3f} "
          f"{lab_total / MB:7.3f} {LAZY_BUDGET / MB:6.1f} {lab_total / LAZY_BUDGET:5.0%}")
    if lab_total > LAZY_BUDGET:
        over.append(f"the snapshots and the language model, together (over {LAZY_BUDGET / MB:.0f} MB gzip)")
    return over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built book's HTML folder (default: build one)")
    parser.add_argument("--lazy", action="store_true", help="only the files fetched on first use")
    args = parser.parse_args()
    if args.lazy:
        with tempfile.TemporaryDirectory() as tmp:
            static = args.site / "_static" if args.site else build_book(Path(tmp)) / "_static"
            over = print_lazy(static)
        print(f"\n{len(over)} over budget" + (f": {', '.join(over)}" if over else ""))
        return 1 if over else 0
    from playwright.sync_api import sync_playwright

    over = []
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build_book(Path(tmp))
        with serve(site) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS)
            print("First visit (empty cache): every response until the network is idle; kB = 1000 bytes.")
            print(f"{'page':34} {'kind':7} {'req':>4} {'raw kB':>7} {'gzip kB':>7} {'budget':>6} {'used':>5}  "
                  "largest files (gzip kB)")
            deferred = []
            first_visit: set[str] = set()  # the names of every file a first visit loaded
            for path in html_pages(site):
                name = path.relative_to(site).as_posix()
                sizes, later = measure(browser, base + name)
                first_visit |= {_name(u) for u, _, _ in sizes}
                raw, packed = sum(s[1] for s in sizes), sum(s[2] for s in sizes)
                kind, budget = budget_of(name, sizes)
                top = ", ".join(f"{_name(u)} {g / 1000:.0f}" for u, _, g in sorted(sizes, key=lambda s: -s[2])[:3])
                print(f"{name:34} {kind:7} {len(sizes):4d} {raw / 1000:7.0f} {packed / 1000:7.0f} {budget / 1000:6.0f} "
                      f"{packed / budget:5.0%}  {top}")
                if packed > budget:
                    files = {_name(u) for u, _, _ in sizes}
                    reasons = "; ".join(f"{file}: {why}" for file, why in REASONS.items() if file in files)
                    print(f"{'':34} OVER its budget of {budget / 1000:.0f} kB gzip. {reasons}")
                    over.append(name)
                if later:
                    deferred.append((name, later))
            print("\nLoaded on first use only (not in the first visit above): bertviz's button, the live explorer's "
                  "first translation, the language-model explorer's first use.")
            print(f"{'page':34} {'req':>4} {'raw kB':>7} {'gzip kB':>7}  files (gzip kB)")
            for name, later in deferred:
                files = ", ".join(f"{_name(u)} {g / 1000:.0f}" for u, _, g in sorted(later, key=lambda s: -s[2]))
                print(f"{name:34} {len(later):4d} {sum(s[1] for s in later) / 1000:7.0f} "
                      f"{sum(s[2] for s in later) / 1000:7.0f}  {files}")
            browser.close()
        over += print_lazy(site / "_static", first_visit)
    print(f"\n{len(over)} over budget" + (f": {', '.join(over)}" if over else ""))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
