"""How fast chapter 8's language-model explorer answers the reader, in chromium.

    python benchmarks/live_lm.py [--rounds 15]

A minimal page holding the explorer (tests/test_live_lm.lm_test_page: the book's scripts and the model
files its build writes), served on 127.0.0.1 and opened in chromium. Printed, as medians over the rounds:

* the model alone (``bookLM``'s LanguageModel): ``next`` on a prompt, and ``sample`` of up to 20 words;
* the two figures' ``Plotly.react``: the bars (``nextWordFigure``) and the causal maps, all heads;
* what a reader waits for: from Enter in the prompt box, and from a temperature step (an arrow key on the
  slider), to the bars, the maps and the continuation drawn (the next animation frame after the
  continuation's text is written). A setting leaves the maps as they were; a new prompt redraws them.

Nothing is asserted: timings depend on the machine (this one has 2 cores shared with other work).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROMPTS = ["le petit", "les chiens ne", "nous", "je vois", "le chat de ma", "vous ne"]

COMPONENTS_JS = """async (rounds) => {
  const m = await window.bookLM.load();
  const ex = document.querySelector('div.tc-live[data-explorer="lm"]').tcExplorer;
  const settings = {temperature: 1, topK: null, topP: 0.9};
  const times = {next: [], sample: [], bars: [], maps: []};
  for (let i = 0; i < rounds; i++) {
    const p = %s[i %% %d];
    let t = performance.now();
    const r = m.next(p, settings);
    times.next.push(performance.now() - t);
    t = performance.now();
    m.sample(p, {seed: i});
    times.sample.push(performance.now() - t);
    r.settings = settings;
    t = performance.now();
    const bars = window.tcLMExplorer.nextWordFigure(r, ex.bars.clientWidth);
    window.Plotly.react(ex.bars, bars.data, bars.layout, window.tcExplorers.plotConfig());
    times.bars.push(performance.now() - t);
    t = performance.now();
    const maps = window.tcLMExplorer.attentionFigure(r, 1, "all", ex.maps.clientWidth);
    window.Plotly.react(ex.maps, maps.data, maps.layout, window.tcExplorers.plotConfig());
    times.maps.push(performance.now() - t);
  }
  return times;
}"""

# Resolves with the time from `act` (run inside) to the frame after the continuation is written.
UNTIL_DRAWN_JS = """(act) => new Promise((resolve) => {
  const ex = document.querySelector('div.tc-live[data-explorer="lm"]').tcExplorer;
  const out = ex.output;
  const observer = new MutationObserver(() => {
    if (out.textContent.includes('seed')) {
      observer.disconnect();
      requestAnimationFrame(() => resolve(performance.now() - started));
    }
  });
  out.textContent = '';
  observer.observe(out, {childList: true, subtree: true, characterData: true});
  const started = performance.now();
  if (act === 'enter') ex.prompt.form.requestSubmit();
  else { ex.temperature.stepUp(); ex.temperature.dispatchEvent(new Event('change')); }
})"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from tests.test_live_lm import lm_test_page
    from tools.book_browser import LAUNCH_ARGS, chromium_path, serve
    from transformer_lib.browser.lm_explorer import LanguageModelExplorer
    from transformer_lib.pretrained import book_lm

    checkpoint = book_lm()
    explorer = LanguageModelExplorer(checkpoint.model, checkpoint.tgt_vocab, prompt="le petit", top_p=0.9)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        folder = lm_test_page(Path(tmp), explorer._repr_mimebundle_()["text/html"])
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS)
        with serve(folder) as base:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.goto(base + "index.html")
            page.wait_for_function("() => document.querySelector('.tc-lm-maps .main-svg')", timeout=30_000)
            components = page.evaluate(COMPONENTS_JS % (PROMPTS, len(PROMPTS)), args.rounds)
            enter, step = [], []
            for i in range(args.rounds):
                page.locator('div.tc-live[data-explorer="lm"]').get_by_label("Prompt", exact=True).fill(
                    PROMPTS[i % len(PROMPTS)])
                enter.append(page.evaluate(UNTIL_DRAWN_JS, "enter"))
                if page.evaluate("() => Number(document.querySelector('div.tc-live[data-explorer=\"lm\"]')"
                                 ".tcExplorer.temperature.value) >= 1.9"):
                    page.evaluate("() => { document.querySelector('div.tc-live[data-explorer=\"lm\"]')"
                                  ".tcExplorer.temperature.value = '0.5'; }")
                step.append(page.evaluate(UNTIL_DRAWN_JS, "step"))
        browser.close()
    print(f"chromium, 1366 px, {args.rounds} rounds; medians in ms (min-max)")
    rows = [("model: next (prompt read, distribution, maps)", components["next"]),
            ("model: sample (up to 20 words)", components["sample"]),
            ("Plotly.react: the bars", components["bars"]),
            ("Plotly.react: the maps, all heads", components["maps"]),
            ("reader: Enter -> bars, maps, continuation drawn", enter),
            ("reader: temperature step -> bars, continuation drawn", step)]
    for label, times in rows:
        print(f"{label:55} {statistics.median(times):7.1f}  ({min(times):.1f}-{max(times):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
