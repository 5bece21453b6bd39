"""The book's model in the reader's browser (transformer_lib/browser/static), against the library.

A minimal page (tools/book_browser.live_test_page: the book's scripts and the model file its build
writes) is opened in chromium, offline: for held-out sentences of the corpus the page's greedy
translation equals ``decoding.translate`` token for token, and every attention weight equals
``capture.capture_attention`` for the decoder input <sos> + output within 1e-4. Bad text gets
the Python explorer's messages; no request leaves 127.0.0.1; the model file is fetched only when
the reader first translates. Then, in the built book, the explorers of chapters 3, 4 and 7 react
to the reader (screenshots at 1366 and 390 px go to screenshots/live-*.png).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest
import torch

from tools.book_browser import live_test_page, serve
from transformer_lib.browser.explorers import AttentionExplorer, PositionalEncodingExplorer, reading_notes
from transformer_lib.browser.model import MANIFEST_FILE, WEIGHTS_FILE, browser_model_files, read_weights
from transformer_lib.browser.page import LIVE_SCRIPTS, live_explorer_html
from transformer_lib.browser.theme import MESSAGES, theme_json
from transformer_lib.capture import capture_attention
from transformer_lib.decoding import translate
from transformer_lib.pretrained import book_corpus, book_model
from transformer_lib.tokenization import normalize_sentence

N_SENTENCES = 25
TOLERANCE = 1e-4
SCREENSHOTS = Path(__file__).resolve().parent.parent / "screenshots"
KINDS = ("encoder_self", "decoder_self", "cross")


@pytest.fixture(scope="module")
def checkpoint():
    return book_model()


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve(live_test_page(tmp_path_factory.mktemp("live"))) as base:
        yield base + "index.html"


class Visit:
    """A page in a fresh browser context that records every request and every console error."""

    def __init__(self, browser, url: str, width: int = 1280) -> None:
        self.requests: list[str] = []
        self.problems: list[str] = []
        self.context = browser.new_context(viewport={"width": width, "height": 900})

        def route(route) -> None:
            parsed = urlparse(route.request.url)
            self.requests.append(route.request.url)
            if parsed.scheme in ("data", "blob") or parsed.hostname == "127.0.0.1":
                route.continue_()
            else:
                self.problems.append(f"request to another host: {route.request.url}")
                route.abort()

        self.context.route("**/*", route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        self.page.on("pageerror", lambda err: self.problems.append(f"uncaught exception: {err}"))
        self.page.goto(url, wait_until="load")

    def evaluate_json(self, function: str, arg: object = None) -> object:
        """``page.evaluate(function, arg)`` for a large result: the page hands it over as one JSON string,
        which playwright carries at once, where its value-by-value protocol takes tens of seconds of CPU on a
        million numbers (the stepper's every step of every beam). JSON has no NaN or infinity, so the page
        throws on one rather than send null in its place."""
        text = self.page.evaluate(
            f"async (arg) => JSON.stringify(await ({function})(arg), (key, value) => {{"
            " if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`${value} at ${key}`);"
            " return value; })", arg)
        return json.loads(text)

    def fetched(self, name: str) -> int:
        return sum(urlparse(u).path.endswith("/" + name) for u in self.requests)

    def close(self) -> None:
        self.context.close()


def _translate_in_page(page, sentences: list[str]) -> list[dict]:
    return page.evaluate("async (s) => { const out = [];"
                         " for (const t of s) out.push(await window.bookModel.translate(t)); return out; }", sentences)


def _reader_error(page, text: str) -> dict:
    return page.evaluate("async (t) => { try { await window.bookModel.translate(t); return null; }"
                         " catch (e) { return {name: e.name, message: e.message, level: e.level}; } }", text)


def _text(widget_html: str) -> str:
    return html.unescape(re.sub("<[^>]+>", "", widget_html))


def test_model_files_hold_the_weights_and_are_deterministic(checkpoint, tmp_path: Path) -> None:
    files = browser_model_files(checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab)
    assert files == browser_model_files(checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab)
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    weights = read_weights(tmp_path)
    state = checkpoint.model.state_dict()
    assert set(weights) == set(state)
    for name, tensor in state.items():
        assert np.array_equal(weights[name], tensor.numpy()), name
    assert len(files[WEIGHTS_FILE]) == 4 * sum(t.numel() for t in {t.data_ptr(): t for t in state.values()}.values())
    assert MANIFEST_FILE in files


def _state(live_html: str) -> dict:
    match = re.search(r'<script type="application/json" class="tc-live-state">(.*?)</script>', live_html, re.S)
    assert match, live_html[:200]
    return json.loads(match.group(1))


def test_explorers_offer_the_widget_and_the_live_html(checkpoint) -> None:
    model, src_vocab, tgt_vocab = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    sentence = "the small white cars are not old"
    bundle = AttentionExplorer(model, src_vocab, tgt_vocab, sentence=sentence)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # JupyterLab keeps the widget
    state = _state(bundle["text/html"])
    expected = translate(model.eval(), sentence, src_vocab, tgt_vocab)
    assert state["sentence"] == sentence
    result = state["result"]  # the kernel's translation, drawn before any model is loaded
    assert result["tokens"] == expected.tokens and result["ended"]
    assert result["src_tokens"] == sentence.split() and result["decoder_tokens"] == ["<sos>", *expected.tokens]
    config = model.config
    shapes = {"encoder_self": (7, 7), "decoder_self": (len(expected.tokens) + 1,) * 2,
              "cross": (len(expected.tokens) + 1, 7)}
    for kind, (queries, keys) in shapes.items():
        layers = config.n_encoder_layers if kind == "encoder_self" else config.n_decoder_layers
        assert np.array(result["attention"][kind]).shape == (layers, config.n_heads, queries, keys), kind
    positional = PositionalEncodingExplorer(d_model=32, dims=(2, 5), positions=(3, 40))._repr_mimebundle_()
    assert _state(positional["text/html"]) == {"d_model": 32, "dims": [2, 5], "positions": [3, 40]}
    empty = AttentionExplorer(model, src_vocab, tgt_vocab, sentence="")._repr_mimebundle_()
    assert _state(empty["text/html"]) == {"sentence": "", "result": None}


def test_live_html_keeps_any_sentence_inside_its_script() -> None:
    sentence = 'a </script><script>alert(1)</script> & "b"'
    live_html = live_explorer_html("attention", sentence=sentence, result=None)
    assert live_html.count("</script>") == 2  # the state's and the theme's (transformer_lib.browser.theme)
    assert f'<script type="application/json" class="tc-live-theme">{theme_json()}</script>' in live_html
    assert _state(live_html)["sentence"] == sentence
    with pytest.raises(ValueError, match="kind"):
        live_explorer_html("bertviz")


def test_page_translates_as_the_library(checkpoint, browser, live_url: str) -> None:
    model, src_vocab, tgt_vocab = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    sentences = [src for src, _ in book_corpus().test[:N_SENTENCES]]
    assert len(sentences) == N_SENTENCES
    visit = Visit(browser, live_url)
    try:
        results = _translate_in_page(visit.page, sentences)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    worst = 0.0
    for sentence, result in zip(sentences, results, strict=True):
        expected = translate(model, sentence, src_vocab, tgt_vocab)
        assert result["tokens"] == expected.tokens, sentence
        assert result["text"] == expected.text and result["unknown"] == [], sentence
        decoder_in = [tgt_vocab.sos_id] + [tgt_vocab.stoi[t] for t in expected.tokens]
        maps = capture_attention(model, torch.tensor([src_vocab.encode(sentence)]), torch.tensor([decoder_in]))
        for kind in KINDS:
            reference = np.stack([layer[0].numpy() for layer in getattr(maps, kind)])  # (layers, heads, q, k)
            in_page = np.array(result["attention"][kind], dtype=np.float64)
            assert in_page.shape == reference.shape, (sentence, kind)
            worst = max(worst, float(np.abs(in_page - reference).max()))
    assert worst <= TOLERANCE, f"attention differs from capture_attention by up to {worst:.2e}"


def test_bad_text_gets_the_explorers_messages(checkpoint, browser, live_url: str) -> None:
    model, src_vocab, tgt_vocab = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    empty_message = _text(AttentionExplorer(model, src_vocab, tgt_vocab, sentence="").messages.value)
    unknown = translate(model, "the zebra sleeps", src_vocab, tgt_vocab)
    long_text = " ".join(["the small dog sleeps"] * 20)  # 80 words: more than the 64 positions
    limit = model.config.max_len
    long = translate(model, " ".join(long_text.split()[:limit]), src_vocab, tgt_vocab)  # what the explorer reads
    unknown_notes = reading_notes(unknown, src_vocab)
    long_notes = reading_notes(long, src_vocab, typed_tokens=len(long_text.split()))
    assert empty_message and unknown_notes and long_notes  # the Python side has messages to compare with
    python_whitespace = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    odd_text = "a\x1cb\ufeffc\u3000d\u200be"
    visit = Visit(browser, live_url)
    try:
        page = visit.page
        errors = {text: _reader_error(page, text) for text in ("", "  \t\u3000\x1c ")}
        unknown_result, long_result, special_result = _translate_in_page(
            page, ["the zebra sleeps", long_text, "the <sos> dog <unk> sleeps"])
        whitespace = page.evaluate("window.bookModel.whitespace")
        words = page.evaluate("(t) => window.bookModel.words(t)", odd_text)
        explorer = page.locator("div.tc-live[data-explorer=attention]")
        explorer.get_by_label("Sentence", exact=True).fill(" \u3000 ")
        explorer.get_by_role("button", name="Translate").click()
        shown = explorer.locator(".tc-messages").inner_text(timeout=5000)
        assert explorer.locator(".tc-controls").is_hidden()  # nothing to choose without a translation
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    for text, error in errors.items():
        assert error == {"name": "ReaderError", "message": empty_message, "level": "info"}, repr(text)
    assert shown == empty_message
    assert unknown_result["notes"] == unknown_notes and unknown_result["unknown"] == ["zebra"]
    assert long_result["notes"] == long_notes
    assert long_result["tokens"] == long.tokens
    assert long_result["src_tokens"] == [src_vocab.itos[i] for i in long.src_ids]
    # A special token typed as a word is an unknown word, never the special: written as training text
    # is (no < or >), "<sos>" reads as the word "sos", which the vocabulary does not have.
    assert special_result["unknown"] == ["sos", "unk"]
    assert special_result["src_tokens"] == ["the", "<unk>", "dog", "<unk>", "sleeps"]
    assert sorted(whitespace) == sorted(python_whitespace)
    assert words == odd_text.split()


def test_model_is_fetched_on_first_use_and_nothing_leaves_the_machine(checkpoint, browser, live_url: str) -> None:
    visit = Visit(browser, live_url)
    try:
        page = visit.page
        page.wait_for_function("() => document.querySelector('.tc-positional .js-plotly-plot .main-svg')")
        page.wait_for_timeout(1000)
        before = (visit.fetched(MANIFEST_FILE), visit.fetched(WEIGHTS_FILE))
        explorer = page.locator("div.tc-live[data-explorer=attention]")
        explorer.get_by_label("Sentence", exact=True).fill("the small dog sleeps")
        explorer.get_by_label("Sentence", exact=True).press("Enter")
        page.wait_for_function("() => document.querySelector('.tc-attention .tc-heatmaps canvas')",
                               timeout=30_000)
        output = explorer.locator(".tc-output").inner_text()
        explorer.get_by_role("button", name="Translate").click()  # a second translation: no second download
        page.wait_for_timeout(500)
        after = (visit.fetched(MANIFEST_FILE), visit.fetched(WEIGHTS_FILE))
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert before == (0, 0), "the model was fetched before the reader used an explorer"
    assert after == (1, 1)
    expected = translate(checkpoint.model, "the small dog sleeps", checkpoint.src_vocab, checkpoint.tgt_vocab)
    assert output.startswith(f"Model output: {expected.text} (")
    assert all(urlparse(u).hostname == "127.0.0.1" for u in visit.requests if urlparse(u).scheme.startswith("http"))


# ------------------------------------------------------------------ the built book

SENTENCE = "the old dogs do not see our small cat"
CHAPTERS = ("03_positional_encoding", "04_attention", "07_training_inference")


def _figure_text(explorer) -> str:
    """The text of the explorer's figure (not of the replay's training curve, in chapter 7)."""
    return explorer.locator(".tc-figure:not(.tc-curve)").first.inner_text()


@pytest.mark.parametrize("width", [1366, 390])
def test_explorers_in_the_built_book_are_live(site: Path, checkpoint, browser, width: int) -> None:
    expected = translate(checkpoint.model, SENTENCE, checkpoint.src_vocab, checkpoint.tgt_vocab)
    SCREENSHOTS.mkdir(exist_ok=True)
    with serve(site) as base:
        for chapter in CHAPTERS:
            page_html = (site / "book" / f"{chapter}.html").read_text()
            assert 'class="tc-live"' in page_html, f"{chapter}: no live explorer (re-execute the notebook)"
            assert "embed.js" not in page_html and "widget-state+json" not in page_html, chapter
            visit = Visit(browser, f"{base}book/{chapter}.html", width)
            try:
                page = visit.page
                # chapter 7 also holds the decoding stepper (tests/test_live_stepper.py): the explorer by its kind
                kind = "positional" if chapter == "03_positional_encoding" else "attention"
                explorer = page.locator(f"div.tc-live[data-explorer={kind}]").first
                explorer.locator(".tc-figure:not(.tc-curve) svg").first.wait_for(timeout=30_000)
                before = _figure_text(explorer)
                if chapter == "03_positional_encoding":
                    d_model = explorer.get_by_role("slider", name="d_model")
                    d_model.focus()
                    for _ in range(5):
                        d_model.press("ArrowRight")
                    page.wait_for_function("() => document.querySelector('.tc-positional .gtitle')"
                                           ".textContent.includes('d_model = 74')", timeout=10_000)
                else:
                    assert visit.fetched(MANIFEST_FILE) == 0
                    explorer.get_by_label("Sentence", exact=True).fill(SENTENCE)
                    explorer.get_by_role("button", name="Translate").click()
                    page.wait_for_function("(t) => document.querySelector('div.tc-live[data-explorer=attention] "
                                           ".tc-output').textContent.includes(t)", arg=expected.text, timeout=30_000)
                    explorer.get_by_label("Head", exact=True).select_option(label="head 2")
                    explorer.get_by_label("Attention", exact=True).select_option(label="encoder self-attention")
                    # the maps' title (in chapter 7 the first explorer is the replay's, whose curve has one too)
                    page.wait_for_function("() => document.querySelector('.tc-attention .tc-figure:not(.tc-curve) "
                                           ".tc-figure-title').textContent"
                                           ".startsWith('encoder self-attention, layer 2,')",
                                           timeout=10_000)
                page.wait_for_timeout(300)
                after = _figure_text(explorer)
                shot = SCREENSHOTS / f"live-{chapter}-{width}.png"
                page.evaluate("window.scrollTo(0, 0)")  # else the theme's sticky header lands on the explorer
                top = explorer.evaluate("e => e.getBoundingClientRect().top + window.scrollY")
                height = explorer.evaluate("e => e.getBoundingClientRect().height")
                page.screenshot(path=str(shot), full_page=True,
                                clip={"x": 0, "y": max(top - 10, 0), "width": width, "height": height + 20})
            finally:
                visit.close()
            assert not visit.problems, (chapter, visit.problems)
            assert after != before, f"{chapter}: the figure did not change"


# Where chapter 7's replay is: its slider bar, the theme's sticky header above it, and its maps' figure.
REPLAY_JS = """() => {
  const bar = document.querySelector('.tc-replay-bar');
  const maps = bar.closest('.tc-live-explorer').querySelector('.tc-figure:not(.tc-curve)');
  const header = document.querySelector('.bd-header-article');
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
  return {bar: box(bar), maps: box(maps), header: box(header), scroll: window.scrollY};
}"""
# Every output box that holds an explorer, and how much of it is cut at its sides (it clips, not scrolls).
CLIPPED_JS = """() => [...document.querySelectorAll('div.output')].filter(o => o.querySelector('.tc-live'))
  .map(o => o.scrollWidth - o.clientWidth)"""


def test_the_replay_slider_stays_in_view_on_a_phone_while_the_maps_scroll(site: Path, browser) -> None:
    """Chapter 7's replay on a 390x844 phone: as the reader scrolls down through the maps, the slider
    and the model's output line stay on the screen, under the theme's sticky header (explorers.css,
    reader.css), so that moving the slider shows its effect; the output boxes that hold explorers
    clip at their sides rather than scroll (which kept the bar from sticking), so nothing may be
    wider than them."""
    with serve(site) as base:
        context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
        try:
            page = context.new_page()
            page.goto(f"{base}book/07_training_inference.html", wait_until="load")
            page.locator(".tc-attention .tc-figure:not(.tc-curve) svg").first.wait_for(timeout=30_000)
            start = page.evaluate(REPLAY_JS)
            height = start["maps"]["bottom"] - start["maps"]["top"]
            assert height > 844 / 2, f"the maps are {height} px tall: too short to need the bar to stick"
            for fraction in (0.5, 0.75, 0.95):  # that point of the maps at the middle of the screen
                page.evaluate("(y) => window.scrollTo(0, y)",
                              start["maps"]["top"] + start["scroll"] + fraction * height - 844 / 2)
                page.wait_for_timeout(200)
                where = page.evaluate(REPLAY_JS)
                assert where["maps"]["top"] < 0, (fraction, where)  # the maps' top has scrolled away
                assert where["header"]["bottom"] - 1 <= where["bar"]["top"], (fraction, where)
                assert where["bar"]["bottom"] <= 844, (fraction, where)
            for chapter in ("03_positional_encoding", "04_attention", "06_encoder_decoder", "07_training_inference",
                            "08_language_model"):
                page.goto(f"{base}book/{chapter}.html", wait_until="load")
                page.locator("div.tc-live .tc-live-explorer").first.wait_for(timeout=30_000)
                page.wait_for_timeout(500)
                cut = page.evaluate(CLIPPED_JS)
                assert cut and max(cut) <= 1, (chapter, cut)
        finally:
            context.close()


def test_the_built_book_carries_the_page_files_and_the_theme_python_writes(site: Path) -> None:
    """The build writes the package's scripts and theme.json into _static/live, and each page with
    an explorer holds the theme inline (script#tc-live-theme), the one the scripts read first."""
    from importlib import resources

    live = site / "_static" / "live"
    static = resources.files("transformer_lib.browser") / "static"
    for name in (*LIVE_SCRIPTS, "explorers.css"):
        assert (live / name).read_bytes() == (static / name).read_bytes(), name
    assert (live / "theme.json").read_text() == theme_json()
    inline = f'<script id="tc-live-theme" type="application/json">{theme_json()}</script>'
    for chapter in CHAPTERS:
        page_html = (site / "book" / f"{chapter}.html").read_text()
        assert page_html.count(inline) == 1, chapter
        # before the scripts: book-text.js, which reads it, is the first on every page with an explorer
        assert page_html.index(inline) < page_html.index("live/book-text.js"), chapter


NORMALIZE_CASES = [
    "The Cat doesn't see the dogs!", "J'aime le café.", "l\u2019arbre", "qu'il", "the <pad> cat", "THE CAT",
    "the 🐈 sat 👍🏽", "ca\u0301t", "the \x00cat\x1b[31m sat", "\u200b", "<script>alert(1)</script>",
    "rock_n_roll", "x² 3 apples", "we don't   eat", "İstanbul", "the small white cars are not old",
]


def test_the_page_writes_typed_text_as_normalize_sentence_does(browser, live_url: str) -> None:
    visit = Visit(browser, live_url)
    try:
        in_page = visit.page.evaluate("(cases) => cases.map((t) => window.bookModel.normalize(t))", NORMALIZE_CASES)
        typed = _translate_in_page(visit.page, ["The Small White Cars aren't old!"])[0]
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert in_page == [list(normalize_sentence(text)) for text in NORMALIZE_CASES]
    written, changes = normalize_sentence("The Small White Cars aren't old!")
    assert typed["src_tokens"] == written.split() and typed["notes"][0].startswith(f"Read as \u201c{written}\u201d")


def test_the_positional_explorer_says_a_wrong_range_in_words_and_follows_a_resize(browser, live_url: str) -> None:
    """A first dimension after the last: a reader's sentence (not "Expected 0 <= first <= last"),
    the last good figure stays, and it is laid out again when the window narrows to a phone's width
    (it kept the two-column grid, squeezed, before)."""
    visit = Visit(browser, live_url)
    page = visit.page
    try:
        explorer = page.locator('.tc-live[data-explorer="positional"]')
        page.wait_for_function("() => document.querySelector('.tc-live[data-explorer=\"positional\"]')"
                               ".tcExplorer.figure.layout !== undefined", timeout=20_000)
        page.evaluate("""() => { const e = document.querySelector('.tc-live[data-explorer="positional"]').tcExplorer;
          e.dimFirst.value = String(Number(e.dimLast.value) + 1); e.dimFirst.dispatchEvent(new Event('change')); }""")
        scales = {1280: _colour_scales(page)}
        message = explorer.locator(".tc-messages").inner_text(timeout=5000)
        stale = explorer.locator(".tc-figure.tc-stale").count()
        wide = page.evaluate("() => document.querySelector('.tc-live[data-explorer=\"positional\"]')"
                             ".tcExplorer.figure.layout.height")
        page.set_viewport_size({"width": 390, "height": 844})
        # a number other than before: while plotly redraws, the layout can be read without its height
        page.wait_for_function("(h) => { const v = document.querySelector('.tc-live[data-explorer=\"positional\"]')"
                               ".tcExplorer.figure.layout.height; return typeof v === 'number' && v !== h; }",
                               arg=wide, timeout=10_000)
        narrow = page.evaluate("() => document.querySelector('.tc-live[data-explorer=\"positional\"]')"
                               ".tcExplorer.figure.layout.height")
        still = explorer.locator(".tc-messages").inner_text()
        scales[390] = _colour_scales(page)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    refusal, note = message.strip().splitlines()
    assert re.fullmatch(r"The first dimension \(\d+\) is after the last \(\d+\): choose a first dimension no larger "
                        r"than the last\.", refusal), message
    assert note == MESSAGES["stale"] and stale == 1  # the figure that stays is marked as the last good settings
    assert "Expected" not in message and still == message
    assert (wide, narrow) == (820, 1500)  # explorers.js's positional figure: two columns, then one
    for width, (count, inside) in scales.items():  # a colour scale for each heatmap, inside the figure
        assert count == 3 and inside, (width, count)


def _colour_scales(page) -> tuple[int, bool]:
    """The positional explorer's colour bars: how many, and whether all lie inside the figure's box."""
    return tuple(page.evaluate("""() => {
      const figure = document.querySelector('.tc-positional .tc-figure');
      const box = figure.getBoundingClientRect();
      const bars = [...figure.querySelectorAll('.colorbar')].map((bar) => bar.getBoundingClientRect());
      return [bars.length, bars.every((b) => b.left >= box.left && b.right <= box.right + 0.5)];
    }"""))


def test_the_page_says_what_the_kernel_says_of_digits_repeats_french_and_unknown_words(
        checkpoint, browser, live_url: str) -> None:
    """Digits alone are named as digits (not punctuation); a repeated word, French typed into the
    translator and an unknown word (the cause of the filler the model writes in its place) get the
    kernel explorer's notes, word for word, in the page."""
    model, src_vocab, tgt_vocab = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    typed = ["the the the the the", "le chat dort", "the zebra sleeps", "The 2 dogs sleep"]
    kernel = {text: AttentionExplorer(model, src_vocab, tgt_vocab, sentence=text).notes for text in typed}
    digits = _text(AttentionExplorer(model, src_vocab, tgt_vocab, sentence="123 456").messages.value)
    visit = Visit(browser, live_url)
    try:
        in_page = dict(zip(typed, _translate_in_page(visit.page, typed), strict=True))
        digit_error = _reader_error(visit.page, "123 456")
        punctuation_error = _reader_error(visit.page, "?! ...")
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    for text in typed:
        assert in_page[text]["notes"] == kernel[text], text
    assert MESSAGES["repeated_word"] in kernel["the the the the the"]
    quoted = "\u201cle\u201d, \u201cchat\u201d, \u201cdort\u201d"
    assert kernel["le chat dort"][0] == MESSAGES["french"].format(words=quoted)  # what to do, first
    assert MESSAGES["unknown_guess"].format(words="\u201czebra\u201d") in kernel["the zebra sleeps"]
    french = MESSAGES["french"].split("{")[0]
    assert not any(n.startswith(french) or n == MESSAGES["repeated_word"] for n in kernel["the zebra sleeps"])
    assert digit_error["message"] == MESSAGES["no_words_digits"] and digits == MESSAGES["no_words_digits"] + "."
    assert punctuation_error["message"] == MESSAGES["no_words"]
