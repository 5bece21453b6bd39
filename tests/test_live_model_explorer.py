"""The whole-model explorer (browser/static/model-explorer.js) in chromium, offline, against the
kernel's (browser.model_explorer.ModelExplorer and figures.activations.activation_panel).

* A click on a box of the figure, Enter on a box reached by Tab, and the arrow keys choose blocks
  on the token's path (figures.activations.token_path); the panel's title (block, stage, token,
  shape, norm or head) is the kernel's panel's for the same choice; a masked key is named.
* Odd input (empty, one word, unknown words, 200 words, markup) gets the kernel's messages and the
  panel keeps its last good sentence; no request leaves 127.0.0.1; axe finds nothing serious;
  screenshots at 1366 and 390 px (screenshots/live-model-*.png).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest

from tools.book_browser import ROOT, model_explorer_page, serve
from transformer_lib.browser.model_explorer import ModelExplorer
from transformer_lib.figures.activations import activation_panel
from transformer_lib.pretrained import book_model

from .reader_checks import axe_violations
from .test_live_model import Visit

SCREENSHOTS = ROOT / "screenshots"
EXPLORER = 'div.tc-live[data-explorer="model"]'


@pytest.fixture(scope="module")
def checkpoint():
    return book_model()


@pytest.fixture(scope="module")
def explorer_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("model-explorer")
    page = model_explorer_page(folder)
    with serve(folder) as base:
        yield base + page


def _title(page) -> str:
    return page.locator(f"{EXPLORER} .tc-panel .gtitle").first.text_content(timeout=10000)


def _kernel_title(found, block: str, side: str, position: int, head: int = 0) -> str:
    fig = activation_panel(found.blocks, found.src_tokens, found.tgt_tokens, block, side, position, head)
    return html.unescape(re.sub("<[^>]+>", "", fig.layout.title.text.replace("<br>", "")))


def _wait_drawn(page, block: str, head: int | None = None) -> None:
    """Until the panel shows ``block`` (and head ``head``), for the token chosen."""
    page.wait_for_function("([b, h]) => { const p = document.querySelector("
                           "'div.tc-live[data-explorer=model] .tc-panel');"
                           " const [block, , head] = (p.dataset.drawn || '').split(' ');"
                           " return block === b && (h === null || Number(head) === h); }", arg=[block, head],
                           timeout=20000)


def test_the_explorer_follows_a_token_by_mouse_keyboard_and_arrows(checkpoint, browser, explorer_url) -> None:
    model, src, tgt = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    explorer = ModelExplorer(model, src, tgt, sentence="the small dog sleeps")
    found = explorer.found
    visit = Visit(browser, explorer_url, width=1366)
    try:
        page = visit.page
        root = page.locator(EXPLORER)
        root.locator('.tc-block[data-block="encoder.0.self_attn"]').click()  # before any run: it runs first
        _wait_drawn(page, "encoder.0.self_attn.q")
        assert root.get_by_label("Block", exact=True).input_value() == "encoder.0.self_attn.q"
        assert _title(page).replace("\u00a0", " ") == _kernel_title(found, "encoder.0.self_attn.q", "source", 0)
        for _ in range(3):  # q -> k -> v -> scores
            page.keyboard.press("ArrowRight")
        _wait_drawn(page, "encoder.0.self_attn.scores")
        assert _title(page) == _kernel_title(found, "encoder.0.self_attn.scores", "source", 0)
        root.get_by_label("Token", exact=True).select_option("target:1")
        box = root.locator('.tc-block[data-block="decoder.1.self_attn"]')
        box.focus()
        page.keyboard.press("Enter")
        _wait_drawn(page, "decoder.1.self_attn.q")
        root.get_by_label("Block", exact=True).select_option("decoder.1.self_attn.masked")
        root.get_by_label("Head", exact=True).select_option(label="3")
        _wait_drawn(page, "decoder.1.self_attn.masked", head=2)
        title = _title(page)
        assert title == _kernel_title(found, "decoder.1.self_attn.masked", "target", 1, head=2)
        assert "keys masked" in title and root.locator(".tc-panel text", has_text="masked").count() >= 1
        root.locator('.tc-block[data-block="generator"]').click()
        _wait_drawn(page, "generator.logits")
        assert _title(page) == _kernel_title(found, "generator.logits", "target", 1)
        page.keyboard.press("ArrowLeft")
        _wait_drawn(page, "decoder.1.ff_residual.norm")
        root.locator('.tc-block[data-block="src"]').first.click()  # the other column: the source token followed last
        _wait_drawn(page, "src.token")
        assert root.get_by_label("Token", exact=True).input_value() == "source:0"
        assert _title(page) == _kernel_title(found, "src.token", "source", 0)
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "live-model-1366.png"), full_page=True)
        violations = axe_violations(page)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert not violations, violations


BOX_SHOWN_JS = """(group) => {
  const panel = document.querySelector('div.tc-live[data-explorer=model] .tc-panel');
  const drawn = (panel.dataset.drawn || '').split(' ')[0];
  return drawn === group || drawn.startsWith(group + '.');
}"""
IN_VIEW_JS = """() => {
  const panel = document.querySelector('div.tc-live[data-explorer=model] .tc-panel').getBoundingClientRect();
  return {top: panel.top, bottom: panel.bottom, height: innerHeight};
}"""


def _shapes(svg: str) -> tuple[list[str], str]:
    """The shapes on the figure's arrows, and its text alternative."""
    return re.findall(r'class="tc-shape"[^>]*>([^<]*)<', svg), html.unescape(re.search(r"<desc>(.*?)</desc>", svg)[1])


@pytest.mark.parametrize("width", [1366, 390])
def test_every_box_shows_its_panel_in_view_and_the_figure_has_the_sentence_shapes(checkpoint, browser, explorer_url,
                                                                                   width) -> None:
    """Issue 53: a click on any box of the figure leaves the panel's top in the viewport (it is sticky: a box
    far down the figure, clicked, draws a panel that is seen), and the figure's shapes and its text
    alternative are those of the sentence translated (the kernel's figure for it), not placeholders."""
    model, src, tgt = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    sentence = "the old man sees the small cats"
    kernel = ModelExplorer(model, src, tgt, sentence=sentence)
    want_shapes, want_desc = _shapes(kernel.figure.value)
    assert f"(1, {len(kernel.found.src_tokens)}, 64)" in want_shapes  # the sentence's own length
    visit = Visit(browser, explorer_url, width=width)
    try:
        page = visit.page
        root = page.locator(EXPLORER)
        assert "Choose a box" in root.locator(".tc-panel").inner_text()  # the empty panel says what to do
        root.get_by_label("Sentence", exact=True).fill(sentence)
        root.get_by_role("button", name="Translate").click()
        page.wait_for_function("() => document.querySelector('div.tc-live[data-explorer=model] .tc-panel')"
                               ".dataset.drawn", timeout=30000)
        shapes = root.locator(".tc-shape").all_text_contents()
        desc = root.locator(".tc-model-figure desc").text_content()
        boxes = root.locator(".tc-block")
        groups = [boxes.nth(i).get_attribute("data-block") for i in range(boxes.count())]
        seen = {}
        for i, group in enumerate(groups):
            boxes.nth(i).click()  # playwright clicks only a box that is not covered (by the panel)
            page.wait_for_function(BOX_SHOWN_JS, arg=group, timeout=10000)
            rect = page.evaluate(IN_VIEW_JS)
            seen[group] = rect
        if width == 1366:  # the side followed is said, and each side's token kept
            root.get_by_label("Token", exact=True).select_option("target:3")
            root.locator('.tc-block[data-block="encoder.1.feed_forward"]').click()
            page.wait_for_function(BOX_SHOWN_JS, arg="encoder.1.feed_forward", timeout=10000)
            source = root.get_by_label("Token", exact=True).input_value()
            root.locator('.tc-block[data-block="decoder.0.cross_attn"]').click()
            page.wait_for_function(BOX_SHOWN_JS, arg="decoder.0.cross_attn", timeout=10000)
            back = root.get_by_label("Token", exact=True).input_value()
            following = root.locator(".tc-following").inner_text()
    finally:
        visit.close()
    assert len(groups) >= 20, groups
    hidden = {g: r for g, r in seen.items() if not (0 <= r["top"] and r["top"] + 40 <= r["height"])}
    assert not hidden, f"the panel's top is off the screen after a click on: {hidden}"
    assert shapes == want_shapes and desc == want_desc, (shapes, want_shapes)
    if width == 1366:
        assert source.startswith("source:") and back == "target:3", (source, back)
        assert following.startswith(f"Following target token 3 \u201c{kernel.found.tgt_tokens[3]}\u201d") \
            and "the box chosen is in that column" in following, following
    assert not visit.problems, visit.problems


ODD = {"empty": "", "one word": "we", "unknown": "the zebra sleeps", "200 words": " ".join(["the dog"] * 100),
       "markup": "<b>the</b> dog <script>x</script>"}


def _texts(widget_html: str) -> list[str]:
    return [html.unescape(re.sub("<[^>]+>", "", m)) for m in re.findall(r"<div[^>]*>.*?</div>", widget_html)]


def test_odd_input_gets_the_messages_and_keeps_the_last_good_state(checkpoint, browser, explorer_url) -> None:
    model, src, tgt = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    visit = Visit(browser, explorer_url, width=390)
    try:
        page = visit.page
        root = page.locator(EXPLORER)
        root.get_by_role("button", name="Translate").click()
        root.locator('.tc-block[data-block="encoder.1.feed_forward"]').click()
        _wait_drawn(page, "encoder.1.feed_forward.hidden")
        page.screenshot(path=str(SCREENSHOTS / "live-model-390.png"), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        kernel = ModelExplorer(model, src, tgt)  # as the page: a good sentence first, then each odd one
        for case, text in ODD.items():
            kernel.sentence.value = text
            expected = _texts(kernel.messages.value)
            root.get_by_label("Sentence", exact=True).fill(text)
            root.get_by_role("button", name="Translate").click()
            page.wait_for_function("() => !document.querySelector('div.tc-live[data-explorer=model] "
                                   "button[type=submit]').disabled", timeout=20000)
            shown = [m.strip() for m in root.locator(".tc-messages .tc-message").all_inner_texts()]
            assert shown == expected, (case, shown, expected)
            assert root.locator(".tc-panel .gtitle").count() == 1, case  # the panel is still drawn
        page.wait_for_timeout(200)
        assert "feed_forward.hidden" in _title(page) or "src.token" in _title(page)
        assert root.get_by_label("Block", exact=True).input_value() == "encoder.1.feed_forward.hidden"
        violations = axe_violations(page)
    finally:
        visit.close()
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"
    assert not visit.problems, visit.problems
    assert not violations, violations
