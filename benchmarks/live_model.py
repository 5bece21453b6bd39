"""The book's model in the browser: download size, first-use load time and per-sentence latency.

    python benchmarks/live_model.py [--sentences 50] [--repeats 3]

Serves the minimal live page (tools/book_browser.live_test_page: the book's scripts and the model
file its build writes) on 127.0.0.1 and opens it in headless chromium. Prints

* bytes of the model files and the scripts, raw and gzip (what a compressing host sends);
* first use: the time from the first ``bookModel.translate`` call until its result, which
  includes fetching and unpacking the model (``bookModel.loadMs``, printed separately);
* per sentence after the first load: median and quartiles over the held-out test sentences of
  ``pretrained.book_corpus().test``, each translated ``--repeats`` times (the
  median of those), with all attention maps, as the explorer asks for them: the model alone;
* the reader's wait, per control (``--controls``, default ``typing``): from the key the reader
  presses (its event's timeStamp) to the frame that shows the redrawn maps. Every control of the
  attention explorer ends in its one redraw path (``draw`` in explorers.js), which dispatches a
  ``tc-drawn`` event on the explorer's div; the clock stops in the first task after the next
  animation frame that follows it (the frame is painted by then). Keys are real key presses
  (playwright's), so the page sees them as a reader's. A control is a :class:`Control` in
  ``CONTROLS``: the explorer it belongs to, what to set before each press, and the key to press.

* with ``--before REVISION``, the same waits for the explorers' scripts of that git revision, timed in
  the same run on a second page, press for press interleaved with today's, so that both meet the same
  load (the machine may be shared): e.g. ``--before HEAD~3`` to see what a change saved.

The host (CPU model, cores, load average) is printed before and after the runs: compare numbers only
from the same host, and paired runs (``--before``) where the machine is busy.

Budgets (issue 13, issue 23, issue 36): at most 100 ms a sentence after the first load, for the model and
for the reader's wait (key to drawn maps) on any control; Enter to the drawn maps (``typing``) at most
50 ms on a Zen 3 core; at most 5 MB gzip extra, paid on first use only.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.book_browser import LAUNCH_ARGS, chromium_path, live_test_page, serve  # noqa: E402
from transformer_lib.pretrained import book_corpus  # noqa: E402

BUDGET_MS = 100.0
TYPING_BUDGET_MS = 50.0  # issue 36: Enter to the drawn maps, on a Zen 3 core at 1366 px
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


# Arms a clock on an explorer (its div.tc-live): the start is the timeStamp of the first trusted key
# or pointer event inside it; the end, the first task after the animation frame that follows its
# next `tc-drawn` event. Resolves to milliseconds; rejects after 30 s.
ARM_JS = """(selector) => {
  const root = document.querySelector(selector);
  window.__tcClock = new Promise((resolve, reject) => {
    let start = null;
    const begin = (event) => { if (start === null && event.isTrusted) start = event.timeStamp; };
    const events = ["keydown", "pointerdown"];
    for (const type of events) root.addEventListener(type, begin, { capture: true });
    const timer = setTimeout(() => reject(new Error("no tc-drawn event within 30 s")), 30000);
    root.addEventListener("tc-drawn", () => {
      requestAnimationFrame(() => setTimeout(() => {
        clearTimeout(timer);
        for (const type of events) root.removeEventListener(type, begin, { capture: true });
        resolve(performance.now() - start);
      }, 0));
    }, { once: true });
  });
}"""


@dataclass(frozen=True)
class Control:
    """A control of an explorer that ends in the explorer's redraw (a ``tc-drawn`` event).

    ``selector`` finds the explorer's div; ``prepare(page, value)`` sets what the press acts on
    (untimed), ``press(page)`` presses the key (timed from its keydown); ``values`` gives the values,
    one timed press each, from the held-out sentences."""

    selector: str
    values: Callable[[list[str]], list]
    prepare: Callable
    press: Callable
    page: str = "index.html"  # the test page that holds the explorer


def _fill_sentence(page, sentence: str) -> None:
    page.locator('div.tc-live[data-explorer="attention"]').get_by_label("Sentence", exact=True).fill(sentence)


def _press_enter(page) -> None:
    page.locator('div.tc-live[data-explorer="attention"]').get_by_label("Sentence", exact=True).press("Enter")


SETTLE_JS = """(s) => { window.__tcSettled = new Promise((resolve) => document.querySelector(s)
  .addEventListener('tc-drawn', resolve, { once: true })); }"""


def key_control(name: str, key: str, reset: tuple[str, str] | None = None) -> Control:
    """A control of the attention explorer pressed once per held-out sentence, after that sentence
    is translated and drawn: the control labelled ``name`` (a slider, a menu: its <label>; or a
    button: its text) gets the key ``key``. E.g. the replay's step slider,
    ``key_control("Training step", "Home")`` (the first snapshot, from the shipped model), or the
    decoding stepper's button, ``key_control("Next token", "Enter")``: add such a line to CONTROLS.
    ``reset``: (a menu's label, the option's label) chosen before each sentence, so that the key
    always changes something."""
    selector = 'div.tc-live[data-explorer="attention"]'

    def translated(page, sentence: str) -> None:  # untimed: what the key then acts on
        if reset:
            page.locator(selector).get_by_label(reset[0], exact=True).select_option(label=reset[1])
        page.evaluate(SETTLE_JS, selector)
        _fill_sentence(page, sentence)
        _press_enter(page)
        page.evaluate("() => window.__tcSettled.then(() => null)")

    def press(page) -> None:
        explorer = page.locator('div.tc-live[data-explorer="attention"]')
        control = explorer.get_by_label(name, exact=True).or_(explorer.get_by_role("button", name=name, exact=True))
        control.first.press(key)

    return Control(selector, lambda sentences: sentences, translated, press)


def step_slider(key: str) -> Control:
    """The replay's step slider (``AttentionExplorer(replay=True)``, on ``replay.html``): each held-out
    sentence is first translated and drawn by the shipped model, the slider's last step (untimed);
    then ``key`` moves the slider, which translates the sentence again with that step's snapshot
    (fetched on its first use: the first press of the run includes the fetch) and redraws."""
    selector = 'div.tc-live[data-explorer="attention"]'

    def translated(page, sentence: str) -> None:
        page.evaluate(SETTLE_JS, selector)
        moved = page.evaluate("""(s) => { const slider = document.querySelector(s + ' .tc-replay-track input');
          if (slider.value === slider.max) return false;
          slider.value = slider.max; slider.dispatchEvent(new Event('input')); return true; }""", selector)
        if moved:  # back to the shipped model: the box's sentence is translated again, drawn, untimed
            page.evaluate("() => window.__tcSettled.then(() => null)")
        page.evaluate(SETTLE_JS, selector)
        _fill_sentence(page, sentence)
        _press_enter(page)
        page.evaluate("() => window.__tcSettled.then(() => null)")

    def press(page) -> None:
        page.locator(selector).get_by_label("Training step", exact=True).press(key)

    return Control(selector, lambda sentences: sentences, translated, press, page="replay.html")


def write_replay_page(folder: Path) -> None:
    """``replay.html`` beside the test page: the same scripts, and the replay explorer's HTML."""
    from transformer_lib.browser.explorers import AttentionExplorer
    from transformer_lib.pretrained import book_model

    ck = book_model()
    state = AttentionExplorer(ck.model, ck.src_vocab, ck.tgt_vocab, sentence="", replay=True)._repr_mimebundle_()
    page = (folder / "index.html").read_text()
    body_end = page.index(">", page.index("<body")) + 1
    (folder / "replay.html").write_text(page[:body_end] + state["text/html"] + "</body></html>")


CONTROLS = {
    # typing: a sentence in the box, then Enter
    "typing": Control('div.tc-live[data-explorer="attention"]', lambda sentences: sentences, _fill_sentence,
                      _press_enter),
    # the explorer's menus: another head (all heads -> head 1) for the sentence drawn
    "head menu": key_control("Head", "ArrowDown", reset=("Head", "all heads")),
    # the replay's step slider: from the shipped model (step 1500) to the snapshot before it
    "step slider": step_slider("ArrowLeft"),
}


def time_control(pages: dict, control: Control, sentences: list[str], repeats: int) -> dict[str, list[float]]:
    """The median over ``repeats`` of the reader's wait (ms) for each value of ``control``, on each of
    ``pages`` (name: page), interleaved: each press on one page is followed by the same press on the
    others, in turn first, so that every page meets the same load on the machine."""
    times = {name: [] for name in pages}
    order = list(pages)
    for value in control.values(sentences):
        runs = {name: [] for name in pages}
        for r in range(repeats):
            for name in order[r % len(order):] + order[: r % len(order)]:
                page = pages[name]
                control.prepare(page, value)
                page.evaluate(ARM_JS, control.selector)
                control.press(page)
                runs[name].append(page.evaluate("() => window.__tcClock"))
        for name in pages:
            times[name].append(statistics.median(runs[name]))
    return times


def scripts_of(folder: Path, revision: str) -> None:
    """The page in ``folder`` with the explorers' scripts and stylesheet of git ``revision`` (those it has):
    the code before a change, timed beside the code after it (``--before``)."""
    import subprocess

    for path in sorted((folder / "_static" / "live").iterdir()):
        if path.suffix not in (".js", ".css"):
            continue
        old = subprocess.run(["git", "show", f"{revision}:transformer_lib/browser/static/{path.name}"], cwd=ROOT,
                             capture_output=True)
        if old.returncode == 0:
            path.write_bytes(old.stdout)


def host() -> str:
    """The machine the numbers come from: its CPU's model name (lscpu's, from /proc/cpuinfo), the cores
    this process may use, and the load average, since other work on the machine slows the page too."""
    import os
    import platform

    model = platform.processor() or platform.machine()
    try:  # a virtual machine may name only the vendor ("AMD EPYC"): the family and model say which cores
        info = dict(line.split(":", 1) for line in Path("/proc/cpuinfo").read_text().split("\n\n")[0].splitlines()
                    if ":" in line)
        info = {key.strip(): value.strip() for key, value in info.items()}
        model = f"{info['model name']} (cpu family {info['cpu family']}, model {info['model']})"
    except (OSError, KeyError):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    return f"{model}, {cores} cores for this process, load average {load} (1, 5, 15 min)"


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=50, help="held-out test sentences to time")
    parser.add_argument("--repeats", type=int, default=3, help="translations of each sentence (median kept)")
    parser.add_argument("--controls", nargs="*", default=["typing"], choices=sorted(CONTROLS),
                        help="explorer controls to time from key to drawn maps")
    parser.add_argument("--width", type=int, default=1366, help="the page's width (px) for the controls")
    parser.add_argument("--before", metavar="REVISION", help="also time the explorers' scripts of this git "
                        "revision, interleaved with today's in the same run (the same load on the machine)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"host: {host()}")
    sentences = [src for src, _ in book_corpus().test[: args.sentences]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = live_test_page(Path(tmp) / "now")
        write_replay_page(folder)
        folders = {"now": folder}
        if args.before:
            import shutil

            folders = {f"before ({args.before})": Path(tmp) / "before", "now": folder}
            shutil.copytree(folder, folders[f"before ({args.before})"])
            scripts_of(folders[f"before ({args.before})"], args.before)
        live = folder / "_static" / "live"
        print("files (bytes: raw, gzip -6)")
        total_raw = total_gzip = 0
        for path in sorted(live.iterdir()):
            raw = path.read_bytes()
            packed = len(gzip.compress(raw, 6))
            total_raw, total_gzip = total_raw + len(raw), total_gzip + packed
            when = "with the page" if path.suffix in (".js", ".css") else "on first use"  # models, snapshots
            print(f"  {path.name:<24} {len(raw):>10,} {packed:>10,}  ({when})")
        print(f"  {'total':<24} {total_raw:>10,} {total_gzip:>10,}  (budget {BUDGET_GZIP:,} gzip)")
        with serve(Path(tmp)) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS, headless=True)
            page = browser.new_page()
            page.goto(base + "now/index.html", wait_until="load")
            result = page.evaluate(TIMING_JS, [sentences, args.repeats])
            page.close()
            waits = {}
            for name in args.controls:
                control = CONTROLS[name]
                pages = {}
                for label, where in folders.items():
                    page = browser.new_page(viewport={"width": args.width, "height": 900})
                    page.goto(f"{base}{where.name}/{control.page}", wait_until="load")
                    page.evaluate("() => window.bookModel.load()")  # the first use's download is timed above
                    _fill_sentence(page, sentences[0])
                    _press_enter(page)  # the first figure, untimed
                    page.wait_for_function("() => document.querySelector('.tc-attention .tc-figure:not(.tc-curve)')"
                                           ".childElementCount > 0")
                    pages[label] = page
                for label, times in time_control(pages, control, sentences, args.repeats).items():
                    waits[f"{name} ({label})" if args.before else name] = times
                for page in pages.values():
                    page.close()
            browser.close()
    q1, median, q3 = quartiles(result["times"])
    lengths = [len(s.split()) for s in sentences]
    print(f"first use: {result['first']:.0f} ms to the first translation, of which {result['loadMs']:.0f} ms "
          "fetching and unpacking the model (served from 127.0.0.1: no network latency)")
    print(f"per sentence after the first load ({len(sentences)} held-out sentences of {min(lengths)}-{max(lengths)} "
          f"words, median of {args.repeats} runs each): median {median:.1f} ms, IQR {q1:.1f}-{q3:.1f} ms, "
          f"max {max(result['times']):.1f} ms (budget {BUDGET_MS:.0f} ms)")
    ok = median <= BUDGET_MS and total_gzip <= BUDGET_GZIP
    for name, times in waits.items():
        q1, wait, q3 = quartiles(times)
        budget = TYPING_BUDGET_MS if name.startswith("typing") else BUDGET_MS
        judged = not name.endswith(")") or name.endswith("(now)")  # the code before a change is not judged
        print(f"{name}, key to drawn maps at {args.width} px (the model's time included; median of {args.repeats} "
              f"presses each): median {wait:.1f} ms, IQR {q1:.1f}-{q3:.1f} ms, max {max(times):.1f} ms"
              + (f" (budget {budget:.0f} ms)" if judged else ""))
        ok = ok and (not judged or wait <= budget)
    print(f"host after the runs: {host()}")
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
