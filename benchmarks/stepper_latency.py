"""The page's decoding stepper in chromium: how long a step takes to redraw, and a trace to compute.

    python benchmarks/stepper_latency.py [--steps 30] [--beam 4]

Serves the minimal live page (tools/book_browser.live_test_page) on 127.0.0.1, traces a sentence in
the stepper, then steps through it ``--steps`` times (``tcExplorer.go``: the summary and both
figures, redrawn with Plotly.react) and prints, at 1366 and 390 px:

* a step: median and 90th percentile, from the call until the next frame has been painted;
* a trivial Plotly.react (one two-point line) timed the same way, to read the figures on a busy machine;
* ``bookModel.trace`` of the sentence with ``--beam`` beams (median of 5), the work done once per sentence.

Budget (issue 23): a step at most 100 ms median. Nothing here is asserted by a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.book_browser import (  # noqa: E402
    launched_browser,  # noqa: E402
    live_test_page,
    serve,
)

STEPPER = 'div.tc-live[data-explorer="stepper"]'
SENTENCE = "the old dogs do not see our small cat"

MEASURE = """async ([steps, beam, sentence]) => {
  const e = document.querySelector('STEPPER').tcExplorer;
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const div = document.createElement('div'); document.body.appendChild(div);
  await Plotly.newPlot(div, [{x: [0, 1], y: [0, 1]}], {});
  const step = [], trivial = [], trace = [];
  for (let i = 0; i < steps; i++) {
    let t0 = performance.now(); e.go(1 + (i % e.trace.steps.length)); await frame(); step.push(performance.now() - t0);
    t0 = performance.now(); await Plotly.react(div, [{x: [0, i], y: [0, 1]}], {}); await frame();
    trivial.push(performance.now() - t0);
  }
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now(); await window.bookModel.trace(sentence, {beam}); trace.push(performance.now() - t0);
  }
  return {step, trivial, trace};
}""".replace("STEPPER", STEPPER)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--beam", type=int, default=4, choices=[1, 2, 3, 4])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, serve(live_test_page(Path(folder))) as base, \
            launched_browser() as browser:
        for width in (1366, 390):
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            page.goto(base + "index.html")
            stepper = page.locator(STEPPER)
            stepper.get_by_label("Beam size").select_option(str(args.beam))
            stepper.get_by_label("Sentence", exact=True).fill(SENTENCE)
            stepper.get_by_label("Sentence", exact=True).press("Enter")
            page.wait_for_function(f"() => document.querySelector('{STEPPER} .js-plotly-plot .main-svg')",
                                   timeout=60_000)
            got = page.evaluate(MEASURE, [args.steps, args.beam, SENTENCE])
            context.close()
            step = sorted(got["step"])
            print(f"{width:5} px: a step {statistics.median(step):6.1f} ms median, "
                  f"{step[int(0.9 * (len(step) - 1))]:6.1f} ms p90 (trivial Plotly.react "
                  f"{statistics.median(got['trivial']):5.1f} ms); trace, beam {args.beam}: "
                  f"{statistics.median(got['trace']):6.1f} ms median")


if __name__ == "__main__":
    main()
