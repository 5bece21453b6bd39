"""The book's model in the browser: download size, first-use load time and per-sentence latency.

    python benchmarks/live_model.py [--sentences 50] [--repeats 3]

Serves the minimal live page (tests/book_browser.live_test_page: the book's scripts and the model
file its build writes) on 127.0.0.1 and opens it in headless chromium. Prints

* bytes of the model files and the scripts, raw and gzip (what a compressing host sends);
* first use: the time from the first ``bookModel.translate`` call until its result, which
  includes fetching and unpacking the model (``bookModel.loadMs``, printed separately);
* per sentence after the first load: median and quartiles over the held-out test sentences of
  ``pretrained.book_corpus().test``, each translated ``--repeats`` times (the
  median of those), with all attention maps, as the explorer asks for them.

Budgets (issue 13): at most 100 ms a sentence after the first load; at most 5 MB gzip extra,
paid on first use only.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
from book_browser import LAUNCH_ARGS, chromium_path, live_test_page, serve  # noqa: E402

from transformer_lib.pretrained import book_corpus  # noqa: E402

BUDGET_MS = 100.0
BUDGET_GZIP = 5 * 1000 * 1000

TIMING_JS = """async ([sentences, repeats]) => {
  const t0 = performance.now();
  await window.bookModel.translate(sentences[0]);
  const first = performance.now() - t0;
  const times = [];
  for (const s of sentences) {
    const runs = [];
    for (let r = 0; r < repeats; r++) {
      const start = performance.now();
      await window.bookModel.translate(s);
      runs.push(performance.now() - start);
    }
    runs.sort((a, b) => a - b);
    times.push(runs[Math.floor(runs.length / 2)]);
  }
  return {first, loadMs: window.bookModel.loadMs, times};
}"""


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=50, help="held-out test sentences to time")
    parser.add_argument("--repeats", type=int, default=3, help="translations of each sentence (median kept)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    sentences = [src for src, _ in book_corpus().test[: args.sentences]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = live_test_page(Path(tmp))
        live = folder / "_static" / "live"
        print("files (bytes: raw, gzip -6)")
        total_raw = total_gzip = 0
        for path in sorted(live.iterdir()):
            raw = path.read_bytes()
            packed = len(gzip.compress(raw, 6))
            total_raw, total_gzip = total_raw + len(raw), total_gzip + packed
            when = "on first use" if path.name.startswith("book-model.") and path.suffix != ".js" else "with the page"
            print(f"  {path.name:<20} {len(raw):>10,} {packed:>10,}  ({when})")
        print(f"  {'total':<20} {total_raw:>10,} {total_gzip:>10,}  (budget {BUDGET_GZIP:,} gzip)")
        with serve(folder) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS, headless=True)
            page = browser.new_page()
            page.goto(base + "index.html", wait_until="load")
            result = page.evaluate(TIMING_JS, [sentences, args.repeats])
            browser.close()
    q1, median, q3 = quartiles(result["times"])
    lengths = [len(s.split()) for s in sentences]
    print(f"first use: {result['first']:.0f} ms to the first translation, of which {result['loadMs']:.0f} ms "
          "fetching and unpacking the model (served from 127.0.0.1: no network latency)")
    print(f"per sentence after the first load ({len(sentences)} held-out sentences of {min(lengths)}-{max(lengths)} "
          f"words, median of {args.repeats} runs each): median {median:.1f} ms, IQR {q1:.1f}-{q3:.1f} ms, "
          f"max {max(result['times']):.1f} ms (budget {BUDGET_MS:.0f} ms)")
    ok = median <= BUDGET_MS and total_gzip <= BUDGET_GZIP
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
