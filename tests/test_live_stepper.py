"""The page's decoding stepper and the edges of its translations, in chromium, offline, against Python.

* ``window.bookModel.trace`` (book-trace.js, on book-model.js's model core) equals
  ``decoding_steps.trace_translation`` at every step, for beams 1 to 4, on 26 sentences: 20
  held-out sentences of the corpus and 6 whose translation is cut at its length limit (one word:
  12 tokens; 27 words and more: the 64-token cap), tokens exactly, numbers within 1e-4;
* a cut translation has as many decoder rows in the page as ``capture_translation`` gives;
* a one-word sentence gets the note, in both explorers of the page and in the kernel's;
* bad input gets messages, never a traceback; no request leaves 127.0.0.1;
* the stepper steps by keyboard, fits a phone's 390 px (screenshots/live-stepper-*.png).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest

from tools.book_browser import live_test_page, serve
from transformer_lib.browser.explorers import reading_notes
from transformer_lib.browser.page import translation_payload
from transformer_lib.browser.theme import MESSAGES
from transformer_lib.capture import capture_translation
from transformer_lib.decoding import default_max_len, translate
from transformer_lib.decoding_steps import trace_translation
from transformer_lib.pretrained import book_corpus, book_model

from .test_live_model import Visit

TOLERANCE = 1e-4
SCREENSHOTS = Path(__file__).resolve().parent.parent / "screenshots"
CUT = ["we", "green", "the", " ".join(["we"] * 30), " ".join(["they"] * 27), " ".join(["the"] * 40)]
STEPPER = 'div.tc-live[data-explorer="stepper"]'


@pytest.fixture(scope="module")
def checkpoint():
    return book_model()


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve(live_test_page(tmp_path_factory.mktemp("stepper"))) as base:
        yield base + "index.html"


def _number(value: object) -> bool:
    return type(value) in (int, float)


def _close(a: object, b: object, where: str) -> float:
    """Tokens and structure equal, numbers within TOLERANCE; returns the largest difference."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, int | float) and isinstance(b, int | float), where
        assert abs(a - b) <= TOLERANCE, f"{where}: {a} != {b}"
        return abs(a - b)
    if isinstance(a, list | tuple):
        assert isinstance(b, list | tuple) and len(a) == len(b), f"{where}: {a!r:.200} != {b!r:.200}"
        if a and all(_number(x) for x in a) and all(_number(y) for y in b):  # a row of numbers, at once
            x, y = np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)
            if all(type(v) is int for v in (*a, *b)):
                assert np.array_equal(x, y), f"{where}: {a!r:.200} != {b!r:.200}"
                return 0.0
            gap = np.abs(x - y)
            wrong = ~(gap <= TOLERANCE)  # NaN is wrong too
            first = int(np.argmax(wrong))
            assert not wrong[first], f"{where}[{first}]: {a[first]} != {b[first]}"
            return float(gap.max())
        return max([0.0, *(_close(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b, strict=True)))])
    if isinstance(a, dict):
        assert isinstance(b, dict), where
        return max([0.0, *(_close(a[k], b[k], f"{where}.{k}") for k in a)])
    assert a == b, f"{where}: {a!r} != {b!r}"
    return 0.0


def test_the_page_traces_as_the_library(checkpoint, browser, live_url: str) -> None:
    model, src_vocab, tgt_vocab = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    sentences = [src for src, _ in book_corpus().test[:20]] + CUT
    assert len(sentences) >= 25
    visit = Visit(browser, live_url)
    try:
        in_page = visit.evaluate_json("""async (sentences) => { const out = [];
          for (const s of sentences) for (const beam of [1, 2, 3, 4]) out.push(await window.bookModel.trace(s, {beam}));
          return out; }""", sentences)
        at_step = visit.page.evaluate("(s) => window.bookModel.trace(s, {beam: 2, step: 3})", sentences[0])
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    worst, cut = 0.0, 0
    for i, sentence in enumerate(sentences):
        for beam in (1, 2, 3, 4):
            expected = trace_translation(model, sentence, src_vocab, tgt_vocab, beam_size=beam).payload()
            got = in_page[4 * i + beam - 1]
            where = f"{sentence[:40]!r}, beam {beam}"
            assert got["tokens"] == expected["tokens"], where
            # the trace is the translation: with beam 1 greedy_decode's, else beam_search's
            assert got["tokens"] == translate(model, sentence, src_vocab, tgt_vocab, beam_size=beam).tokens, where
            for step, (a, b) in enumerate(zip(expected["steps"], got["steps"], strict=False), start=1):
                worst = max(worst, _close(a, b, f"{where}, step {step}"))  # every step, every beam, every number
            worst = max(worst, _close(expected, {k: got[k] for k in expected}, where))
            cut += beam == 1 and not expected["ended"]
    assert cut >= 6, "sentences cut at the limit are part of the comparison"
    assert worst <= TOLERANCE
    assert at_step["current"] == at_step["steps"][2] and len(at_step["current"]["beams"]) == 2


def test_the_page_has_capture_translations_rows_when_cut(checkpoint, browser, live_url: str) -> None:
    model, src_vocab, tgt_vocab = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    visit = Visit(browser, live_url)
    try:
        in_page = visit.page.evaluate(
            "async (s) => { const out = []; for (const t of s) out.push(await window.bookModel.translate(t));"
            " return out; }", CUT)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    for sentence, got in zip(CUT, in_page, strict=True):
        expected = translate(model, sentence, src_vocab, tgt_vocab)
        assert not expected.ended and not got["ended"], sentence
        assert got["tokens"] == expected.tokens and len(got["tokens"]) == default_max_len(model, len(sentence.split()))
        maps = capture_translation(model, expected, src_vocab, tgt_vocab)
        payload = translation_payload(expected, maps, src_vocab, tgt_vocab)
        assert got["decoder_tokens"] == payload["decoder_tokens"], sentence  # one row fewer than tokens + <sos>
        for kind in ("encoder_self", "decoder_self", "cross"):
            reference = np.stack([layer[0].numpy() for layer in getattr(maps, kind)])
            page = np.array(got["attention"][kind], dtype=np.float64)
            assert page.shape == reference.shape, (sentence, kind)
            assert np.abs(page - reference).max() <= TOLERANCE, (sentence, kind)
    assert len(in_page[3]["tokens"]) == 64  # 27+ words: the 64-token cap, as default_max_len


def test_a_one_word_sentence_gets_its_note_in_both_explorers(checkpoint, browser, live_url: str) -> None:
    model, src_vocab, tgt_vocab = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    kernel_notes = reading_notes(translate(model, "we", src_vocab, tgt_vocab), src_vocab)
    assert MESSAGES["one_word"] in kernel_notes
    visit = Visit(browser, live_url)
    try:
        page = visit.page
        explorer = page.locator("div.tc-live[data-explorer=attention]")
        explorer.get_by_label("Sentence", exact=True).fill("we")
        explorer.get_by_label("Sentence", exact=True).press("Enter")
        page.wait_for_function("() => document.querySelector('.tc-attention .tc-output').textContent.includes('nous')",
                               timeout=30_000)
        attention_messages = explorer.locator(".tc-messages").inner_text()
        stepper = page.locator(STEPPER)
        stepper.get_by_label("Sentence", exact=True).fill("We")
        stepper.get_by_role("button", name="Translate").click()
        page.wait_for_function(f"() => document.querySelector('{STEPPER} .tc-summary').textContent.includes('Step 1')",
                               timeout=30_000)
        stepper_messages = stepper.locator(".tc-messages").inner_text()
        notes = page.evaluate("async () => (await window.bookModel.translate('we')).notes")
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert notes == kernel_notes
    assert MESSAGES["one_word"] in attention_messages and MESSAGES["one_word"] in stepper_messages


def test_bad_input_gets_messages_and_nothing_leaves_the_machine(browser, live_url: str) -> None:
    visit = Visit(browser, live_url)
    try:
        page = visit.page
        errors = page.evaluate("""async () => { const out = {};
          const cases = {empty: ["", {}], spaces: [" \\u3000 ", {}], punctuation: ["?!", {}],
            beam0: ["we swim", {beam: 0}], beam5: ["we swim", {beam: 5}], beamText: ["we swim", {beam: "2"}],
            beamHalf: ["we swim", {beam: 1.5}],
            step0: ["we swim", {step: 0}], step99: ["we swim", {beam: 1, step: 99}], notText: [42, {}]};
          for (const [name, [text, options]] of Object.entries(cases)) {
            try { await window.bookModel.trace(text, options); out[name] = null; }
            catch (e) { out[name] = {name: e.name, message: e.message}; } }
          return out; }""")
        stepper = page.locator(STEPPER)
        shown = stepper.locator(".tc-messages").inner_text()  # before anything is typed
        stepper.get_by_label("Sentence", exact=True).fill("?!")
        stepper.get_by_role("button", name="Translate").click()
        page.wait_for_function(f"() => document.querySelector('{STEPPER} .tc-messages').textContent"
                               ".includes('No words')", timeout=30_000)
        no_words = stepper.locator(".tc-messages").inner_text()
        disabled = [stepper.get_by_role("button", name=n).is_disabled() for n in ("◀ previous step", "next step ▶")]
    finally:
        visit.close()
    assert not visit.problems, visit.problems  # no uncaught exception, no console error, no other host
    assert all(error is not None and error["name"] == "ReaderError" for error in errors.values()), errors
    assert errors["empty"]["message"] == errors["spaces"]["message"] == MESSAGES["empty"]
    assert errors["punctuation"]["message"] == MESSAGES["no_words"]
    for name in ("beam0", "beam5", "beamText", "beamHalf"):
        assert errors[name]["message"].startswith("beam: expected a whole number from 1 to 4"), errors[name]
    assert errors["step0"]["message"].startswith("step:")
    assert errors["step99"]["message"].startswith("step: this search")
    assert errors["notText"]["message"].startswith("sentence: expected a str")
    assert shown.strip() == MESSAGES["empty"]
    assert no_words.strip() == MESSAGES["no_words"] and disabled == [True, True]
    assert all(urlparse(u).hostname == "127.0.0.1" for u in visit.requests if urlparse(u).scheme.startswith("http"))


@pytest.mark.parametrize("width", [1366, 390])
def test_the_stepper_steps_by_keyboard_and_fits_the_screen(checkpoint, browser, live_url: str, width: int) -> None:
    expected = trace_translation(checkpoint.model, "the old chairs are not green", checkpoint.src_vocab,
                                 checkpoint.tgt_vocab, beam_size=3)
    visit = Visit(browser, live_url, width)
    try:
        page = visit.page
        stepper = page.locator(STEPPER)
        stepper.get_by_label("Beam size").select_option("3")
        sentence = stepper.get_by_label("Sentence", exact=True)
        sentence.fill("the old chairs are not green")
        sentence.press("Enter")
        page.wait_for_function(f"() => document.querySelector('{STEPPER} .js-plotly-plot .main-svg')", timeout=30_000)
        first = stepper.locator(".tc-summary").inner_text()
        sentence.focus()
        page.keyboard.press("Tab")  # Translate
        page.keyboard.press("Tab")  # the beam size
        page.keyboard.press("Tab")  # previous step: disabled at step 1, so next step
        focused = page.evaluate("document.activeElement.textContent")
        page.keyboard.press("Enter")  # step 2
        page.keyboard.press("ArrowRight")  # step 3
        page.wait_for_function(f"() => document.querySelector('{STEPPER}').tcExplorer.step === 3", timeout=10_000)
        third = stepper.locator(".tc-summary").inner_text()
        title = page.evaluate(f"() => document.querySelector('{STEPPER}').tcExplorer.bars.layout.title.text")
        bar_text = page.evaluate(f"() => document.querySelector('{STEPPER}').tcExplorer.bars.data"
                                 ".flatMap((d) => d.text)")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(f"() => document.querySelector('{STEPPER}').tcExplorer.step === 2", timeout=10_000)
        overflow = page.evaluate("document.documentElement.scrollWidth") - width
        SCREENSHOTS.mkdir(exist_ok=True)
        stepper.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        stepper.screenshot(path=str(SCREENSHOTS / f"live-stepper-{width}.png"))
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert focused == "next step \u25b6"
    assert first.startswith(f"Step 1 of {len(expected)}") and third.startswith(f"Step 3 of {len(expected)}")
    chosen = expected.steps[2]["chosen"]["token"]
    assert f"the best next token is \u201c{chosen}\u201d" in third
    assert "Step 3" in title and sum(t.endswith("\u25c0 chosen") for t in bar_text) == 1
    assert overflow <= 0, f"the page is {overflow} px wider than the screen"
