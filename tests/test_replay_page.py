"""The replay in the reader's browser (book-model.js, explorers.js) against the library's snapshots.

One chromium for the module, offline, on a page served from 127.0.0.1 with the files the book's
build writes (tools/book_browser.live_test_page) and a replay explorer
(``AttentionExplorer(replay=True)``'s HTML). For every snapshot and held-out test sentences
(step 0's and the early snapshots' translations run to the length limit), the page's tokens equal
``decoding.translate`` with ``pretrained.book_model(step=N)`` and every attention weight is within
1e-4 of ``capture.capture_translation`` (the decoder inputs that produced the tokens: no row for the
last token of a translation cut at its limit); the page's files hold the snapshot's floats exactly; a
snapshot is fetched only when first needed, once; the slider works by keyboard at 1366 and 390 px; nothing
leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tools.book_browser import live_test_page, serve
from transformer_lib.browser.explorers import AttentionExplorer
from transformer_lib.browser.model import MANIFEST_FILE, WEIGHTS_FILE, read_snapshot_weights, snapshot_file
from transformer_lib.browser.page import live_explorer_html
from transformer_lib.capture import capture_translation
from transformer_lib.decoding import translate
from transformer_lib.pretrained import book_corpus, book_model, snapshot_steps

from .test_live_model import KINDS, TOLERANCE, Visit, _text

STEPS = snapshot_steps()
N_TEST = 25
SENTENCE = "the old dogs do not see our small cat"
SCREENSHOTS = Path(__file__).resolve().parent.parent / "screenshots"


def sentences() -> list[str]:
    """Held-out test sentences, and two the corpus never has (one word, one long) that run to the limit."""
    held_out = [src for src, _ in book_corpus().test[:N_TEST]]
    return [*held_out, "we", " ".join(["the small dog sleeps"] * 4)]


@pytest.fixture(scope="module")
def checkpoints() -> dict:
    return {step: book_model(step=step) for step in STEPS}


@pytest.fixture(scope="module")
def replay_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = live_test_page(tmp_path_factory.mktemp("replay"))
    ck = book_model()
    explorer = AttentionExplorer(ck.model, ck.src_vocab, ck.tgt_vocab, sentence="", replay=True)
    state = explorer._repr_mimebundle_()["text/html"]
    page = (folder / "index.html").read_text()
    body = page.index("<body")
    body_end = page.index(">", body) + 1
    (folder / "index.html").write_text(page[:body_end] + state + "</body></html>")
    return folder


@pytest.fixture(scope="module")
def url(replay_site: Path) -> Iterator[str]:
    with serve(replay_site) as base:
        yield base + "index.html"


def test_the_page_files_hold_each_snapshots_floats(replay_site: Path, checkpoints) -> None:
    live = replay_site / "_static" / "live"
    manifest = json.loads((live / MANIFEST_FILE).read_text())
    assert manifest["snapshots"]["steps"] == STEPS and manifest["snapshots"]["shipped_step"] == STEPS[-1]
    assert sorted(manifest["snapshots"]["files"]) == sorted(str(s) for s in STEPS[:-1])
    for step in STEPS[:-1]:
        assert (live / snapshot_file(step)).is_file()
        weights = read_snapshot_weights(live, step)
        state = checkpoints[step].model.state_dict()
        assert set(weights) == set(state)
        for name, tensor in state.items():
            assert np.array_equal(weights[name], tensor.numpy()), (step, name)
    assert not (live / snapshot_file(STEPS[-1])).exists()  # the last step is book-model.bin itself


def test_every_snapshot_translates_as_the_library(checkpoints, browser, url: str) -> None:
    texts = sentences()
    assert len(texts) >= 25
    visit = Visit(browser, url)
    try:
        results = visit.evaluate_json(
            "async ([texts, steps]) => { const out = {}; for (const step of steps) { out[step] = [];"
            " for (const t of texts) out[step].push(await window.bookModel.translate(t, {step})); } return out; }",
            [texts, STEPS])
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    worst, cut = 0.0, 0
    for step in STEPS:
        ck = checkpoints[step]
        model, src_vocab, tgt_vocab = ck.model.eval(), ck.src_vocab, ck.tgt_vocab
        for text, result in zip(texts, results[str(step)], strict=True):
            expected = translate(model, text, src_vocab, tgt_vocab)
            assert result["tokens"] == expected.tokens, (step, text)
            assert result["ended"] == expected.ended, (step, text)
            cut += not expected.ended
            maps = capture_translation(model, expected, src_vocab, tgt_vocab)  # the rows the page draws too
            for kind in KINDS:
                reference = np.stack([layer[0].numpy() for layer in getattr(maps, kind)])  # (layers, heads, q, k)
                in_page = np.array(result["attention"][kind], dtype=np.float64)
                assert in_page.shape == reference.shape, (step, text, kind)
                worst = max(worst, float(np.abs(in_page - reference).max()))
    assert cut >= 10, "the comparison should include translations cut at the length limit"
    assert worst <= TOLERANCE, f"attention differs from capture_translation by up to {worst:.2e}"


def test_snapshots_are_fetched_when_first_needed_once_and_bad_steps_named(browser, url: str) -> None:
    visit = Visit(browser, url)
    try:
        page = visit.page
        page.wait_for_timeout(500)
        before = [visit.fetched(snapshot_file(s)) for s in STEPS[:-1]] + [visit.fetched(WEIGHTS_FILE)]
        steps = page.evaluate("async () => { await window.bookModel.load(); return window.bookModel.snapshots; }")
        loaded = [visit.fetched(snapshot_file(s)) for s in STEPS[:-1]]
        page.evaluate("async (s) => { await window.bookModel.translate('the cat', {step: s});"
                      " await window.bookModel.translate('the dog', {step: s});"
                      " await window.bookModel.translate('the dog'); }", STEPS[1])
        after = [visit.fetched(snapshot_file(s)) for s in STEPS[:-1]]
        errors = page.evaluate(
            "async (cases) => { const out = []; for (const step of cases) { try {"
            " await window.bookModel.translate('the cat', {step}); out.push(null); }"
            " catch (e) { out.push(e.name + ': ' + e.message); } } return out; }", [7, "0", 1.5])
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert before == [0] * len(STEPS)
    assert steps == STEPS and loaded == [0] * (len(STEPS) - 1)
    assert after == [1 if s == STEPS[1] else 0 for s in STEPS[:-1]]
    listed = ", ".join(str(s) for s in STEPS)
    assert errors == [f"RangeError: step: expected one of [{listed}], got 7",
                      "TypeError: step: expected an int, got string", "TypeError: step: expected an int, got 1.5"]


@pytest.mark.parametrize("width", [1366, 390])
def test_the_step_slider_works_by_keyboard(checkpoints, browser, url: str, width: int) -> None:
    visit = Visit(browser, url, width=width)
    expected = {s: translate(checkpoints[s].model, SENTENCE, checkpoints[s].src_vocab, checkpoints[s].tgt_vocab)
                for s in STEPS}
    try:
        page = visit.page
        explorer = page.locator("div.tc-live[data-explorer=attention]")
        slider = explorer.get_by_label("Training step")
        assert slider.get_attribute("aria-valuetext") == f"step {STEPS[-1]} of {STEPS[-1]}"
        slider.focus()
        slider.press("ArrowLeft")  # no sentence yet: the explorer's message, no traceback
        page.wait_for_function("() => document.querySelector('.tc-attention .tc-messages').textContent.length > 0")
        empty = explorer.locator(".tc-messages").inner_text()
        explorer.get_by_label("Sentence", exact=True).fill(SENTENCE)
        explorer.get_by_label("Sentence", exact=True).press("Enter")
        outputs = {}
        slider.focus()
        slider.press("End")
        for index in range(len(STEPS) - 1, -1, -1):
            if index != len(STEPS) - 1:
                slider.press("ArrowLeft")
            step = STEPS[index]
            text = f"Model output (step {step}): {expected[step].text} ("
            page.wait_for_function(
                "(t) => document.querySelector('.tc-attention .tc-output').textContent.startsWith(t)",
                arg=text, timeout=30_000)
            page.wait_for_function(  # the marker's line on the axis, and its label, at the step
                "(s) => { const c = document.querySelector('.tc-curve'); const line = c._fullLayout.shapes[0];"
                " return line.x0 === s && Array.from(c.querySelectorAll('.annotation-text'))"
                ".some((n) => n.textContent === 'step ' + s); }", arg=step, timeout=10_000)
            label = page.evaluate("() => { const c = document.querySelector('.tc-curve');"
                                  " const x = c._fullLayout.xaxis; const line = c._fullLayout.shapes[0];"
                                  " return [x.range[0] <= line.x0 && line.x0 <= x.range[1],"
                                  " Array.from(c.querySelectorAll('.annotation-text')).map((n) => n.textContent)]; }")
            outputs[step] = (slider.get_attribute("aria-valuetext"), label)
        overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        stops = _stops_against_the_curve(page)
        clicked = _click_each_snapshot(page)
        in_view = _in_view_with_the_maps(page)
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"replay-{width}.png"), full_page=True)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    ck = checkpoints[STEPS[-1]]
    assert empty == _text(AttentionExplorer(ck.model, ck.src_vocab, ck.tgt_vocab, sentence="").messages.value)
    assert sorted(outputs) == STEPS
    for step, (valuetext, (on_axis, labels)) in outputs.items():
        assert valuetext == f"step {step} of {STEPS[-1]}"
        assert on_axis and labels == [f"step {step}"], (step, labels)
    assert overflow <= 0, f"{overflow} px wider than the {width} px window"
    # the slider on the curve's step axis: the thumb's centre at each snapshot over its diamond, and a
    # click over a diamond picks that snapshot
    assert [s for s, _, _ in stops] == STEPS
    for step, thumb, diamond in stops:
        assert abs(thumb - diamond) <= 1.5, f"step {step}: thumb at {thumb:.1f} px, its diamond at {diamond:.1f} px"
    assert clicked == STEPS
    if width < 720:  # a phone: with the maps in view, so are the slider and the output line naming the step
        assert in_view == {"slider": True, "output": True, "maps": True}, in_view
    assert all(u.startswith("http://127.0.0.1") for u in visit.requests if u.startswith("http"))


def _stops_against_the_curve(page) -> list[tuple[int, float, float]]:
    """For each snapshot, picked by keyboard: (its step, the slider thumb's centre, its diamond's centre), in
    px from the page's left. The thumb's centre is where Chromium draws it: half a thumb in from the
    track's end, then the value's fraction of the rest (explorers.css sets the thumb's width); the
    clicks of _click_each_snapshot check the same placement without this arithmetic."""
    out = []
    slider = page.locator(".tc-attention .tc-replay-track input[type=range]")
    slider.focus()
    slider.press("Home")
    for index, step in enumerate(STEPS):
        if index:
            slider.press("ArrowRight")
        page.wait_for_function("(s) => document.querySelector('.tc-curve')._fullLayout.shapes[0].x0 === s",
                               arg=step)
        page.wait_for_timeout(100)
        out.append(tuple(page.evaluate("""([step, steps, thumbPx]) => {
          const input = document.querySelector('.tc-attention .tc-replay-track input[type=range]');
          const box = input.getBoundingClientRect();
          const thumb = thumbPx;
          const [min, max] = [Number(input.min), Number(input.max)];
          const centre = box.left + thumb / 2 + (Number(input.value) - min) / (max - min) * (box.width - thumb);
          const diamonds = document.querySelectorAll('.tc-curve .scatterlayer .trace')[2].querySelectorAll('.point');
          const d = [...diamonds].map((p) => p.getBoundingClientRect()).map((b) => b.left + b.width / 2);
          return [Number(input.value), centre, d[steps.indexOf(step)]];
        }""", [step, STEPS, _thumb_px()])))
    return out


def _thumb_px() -> float:
    """The replay slider's thumb width, as explorers.css sets it (Chromium gives no computed style of it)."""
    from importlib import resources

    css = (resources.files("transformer_lib.browser") / "static" / "explorers.css").read_text()
    rule = re.search(r"tc-replay-track input\[type=\"range\"\]::-webkit-slider-thumb \{([^}]*)\}", css).group(1)
    return float(re.search(r"(?<![-\w])width: (\d+)px", rule).group(1))


def _click_each_snapshot(page) -> list[int]:
    """Click the slider's track straight under each snapshot's diamond; return the steps it then shows."""
    picked = []
    slider = page.locator(".tc-attention .tc-replay-track input[type=range]")
    box = slider.bounding_box()
    diamonds = page.evaluate("() => [...document.querySelectorAll('.tc-curve .scatterlayer .trace')[2]"
                             ".querySelectorAll('.point')].map((p) => { const b = p.getBoundingClientRect();"
                             " return b.left + b.width / 2; })")
    for x in diamonds:
        page.mouse.click(x, box["y"] + box["height"] / 2)
        picked.append(int(slider.input_value()))
    return picked


def _in_view_with_the_maps(page) -> dict:
    """Scroll the maps into view, as a reader dragging the slider wants to: what is then on screen."""
    page.evaluate("() => document.querySelector('.tc-attention .tc-figure:not(.tc-curve)').scrollIntoView()")
    page.wait_for_timeout(200)
    return page.evaluate("""() => {
      const seen = (node) => { const b = node.getBoundingClientRect();
        return b.top >= 0 && b.bottom <= window.innerHeight && b.height > 0; };
      const maps = document.querySelector('.tc-attention .tc-figure:not(.tc-curve)').getBoundingClientRect();
      return { slider: seen(document.querySelector('.tc-attention .tc-replay-track input')),
               output: seen(document.querySelector('.tc-attention .tc-output')),
               maps: maps.top < window.innerHeight && maps.bottom > 0 };
    }""")


def test_replay_state_keeps_any_sentence_inside_its_script() -> None:
    html = live_explorer_html("attention", sentence="</script><b>", result=None,
                              replay={"steps": [0, 1], "step": 1, "figure": {"data": [], "layout": {}}})
    assert html.count("</script>") == 2
