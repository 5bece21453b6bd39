"""The attention explorer's one redraw path (``draw`` in transformer_lib/browser/static/explorers.js).

Every control of the page's attention explorer ends in ``draw(payload)``: the first figure is
plotly's newPlot, every later one a Plotly.react on the same div. Here, in chromium, offline:

* after a reader types several sentences one after another, pressing Enter without waiting, the
  figure holds the maps of the last sentence only (no stale figure from an earlier translation or
  from an earlier plot of the div): every heatmap equals ``capture_attention`` for that sentence
  within 1e-4, and its tick labels are the sentence's tokens; and it equals the figure a fresh
  newPlot of the same translation draws;
* the keyboard alone works: Enter in the box translates, Tab reaches the menus, and the arrow keys
  in them redraw the maps shown (kind, layer and head), each redraw announced by a ``tc-drawn``
  event that carries the translation drawn.

No test here times anything: benchmarks/live_model.py does.
"""

from __future__ import annotations

import html
from collections.abc import Iterator

import numpy as np
import pytest
import torch

from transformer_lib.capture import capture_attention
from transformer_lib.decoding import translate
from transformer_lib.pretrained import book_corpus, book_model

from .book_browser import live_test_page, serve
from .test_live_model import Visit

TOLERANCE = 1e-4
EXPLORER = 'div.tc-live[data-explorer="attention"]'

# What the figure in the page holds: per heatmap its z, its axes' tick labels, and the title.
FIGURE_JS = """(selector) => {
  const figure = document.querySelector(selector).tcExplorer.figure;
  const layout = figure.layout;
  return {
    title: layout.title.text,
    heatmaps: figure.data.map((trace) => {
      const n = (axis) => axis.slice(1);
      return {z: trace.z, name: trace.name,
        x: layout["xaxis" + n(trace.xaxis)].ticktext, y: layout["yaxis" + n(trace.yaxis)].ticktext};
    }),
  };
}"""

# Counts the tc-drawn events and keeps the last one's payload text.
LISTEN_JS = """(selector) => {
  const root = document.querySelector(selector);
  window.__drawn = {count: 0, text: null};
  root.addEventListener("tc-drawn", (e) => { window.__drawn.count += 1; window.__drawn.text = e.detail.payload.text; });
}"""


@pytest.fixture(scope="module")
def checkpoint():
    return book_model()


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve(live_test_page(tmp_path_factory.mktemp("live-redraw"))) as base:
        yield base + "index.html"


def _expected(checkpoint, sentence: str, kind: str, layer: int) -> tuple[np.ndarray, list[str], list[str]]:
    """The library's maps (heads, queries, keys) for ``sentence``, and its query and key tokens."""
    model, src_vocab, tgt_vocab = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    result = translate(model, sentence, src_vocab, tgt_vocab)
    decoder = ["<sos>", *result.tokens]
    decoder_in = [tgt_vocab.stoi[t] for t in decoder]
    maps = capture_attention(model, torch.tensor([src_vocab.encode(sentence)]), torch.tensor([decoder_in]))
    source = sentence.split()
    queries, keys = {"encoder_self": (source, source), "decoder_self": (decoder, decoder),
                     "cross": (decoder, source)}[kind]
    return getattr(maps, kind)[layer][0].numpy(), queries, keys


def _check_figure(figure: dict, maps: np.ndarray, queries: list[str], keys: list[str]) -> None:
    assert len(figure["heatmaps"]) == maps.shape[0]  # every head, in its own panel
    for head, trace in enumerate(figure["heatmaps"]):
        assert trace["name"] == f"head {head + 1}"
        # tick labels are HTML for plotly ("<sos>" written as "&lt;sos&gt;")
        assert [html.unescape(t) for t in trace["y"]] == queries and [html.unescape(t) for t in trace["x"]] == keys
        z = np.array(trace["z"], dtype=np.float64)
        assert z.shape == maps[head].shape
        assert np.abs(z - maps[head]).max() <= TOLERANCE


def test_typing_again_and_again_draws_the_last_sentences_maps(checkpoint, browser, live_url: str) -> None:
    sentences = [src for src, _ in book_corpus().test[:6]]
    last = sentences[-1]
    visit = Visit(browser, live_url)
    try:
        page = visit.page
        box = page.locator(EXPLORER).get_by_label("Sentence", exact=True)
        page.evaluate(LISTEN_JS, EXPLORER)
        for sentence in sentences:  # Enter after Enter, without waiting for the maps
            box.fill(sentence)
            box.press("Enter")
        page.wait_for_function("(t) => window.__drawn.text === t && document.querySelector("
                               "'div.tc-live[data-explorer=\"attention\"]').tcExplorer.button.disabled === false",
                               arg=translate(checkpoint.model.eval(), last, checkpoint.src_vocab,
                                             checkpoint.tgt_vocab).text, timeout=30_000)
        page.wait_for_timeout(300)  # any later (stale) redraw would land here
        drawn = page.evaluate(FIGURE_JS, EXPLORER)
        count = page.evaluate("() => window.__drawn.count")
        # the same translation drawn by a fresh newPlot in a new div: what the explorer shows is that
        fresh = page.evaluate("""async ([selector, text]) => {
          const e = document.querySelector(selector).tcExplorer;
          const result = await window.bookModel.translate(text);
          const fig = window.tcExplorers.attentionFigure(result, e.kind.value, Number(e.layer.value),
            e.head.value === "all" ? "all" : Number(e.head.value), e.figure.clientWidth);
          const div = document.createElement("div");
          document.body.appendChild(div);
          await window.Plotly.newPlot(div, fig.data, fig.layout);
          return {z: div.data.map((t) => t.z), layout: JSON.parse(JSON.stringify(div.layout))};
        }""", [EXPLORER, last])
        shown_layout = page.evaluate("(s) => JSON.parse(JSON.stringify(document.querySelector(s).tcExplorer"
                                     ".figure.layout))", EXPLORER)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert 1 <= count <= len(sentences)  # each redraw announced; an outrun translation is not drawn
    assert drawn["title"].startswith("cross-attention (decoder \u2192 encoder), layer 2")
    maps, queries, keys = _expected(checkpoint, last, "cross", 1)
    _check_figure(drawn, maps, queries, keys)
    assert [h["z"] for h in drawn["heatmaps"]] == fresh["z"]
    for key in ("title", "margin", "height", "annotations", "xaxis", "yaxis", "xaxis4", "yaxis4"):
        assert shown_layout.get(key) == fresh["layout"].get(key), key


def test_the_keyboard_alone_translates_and_switches_the_maps(checkpoint, browser, live_url: str) -> None:
    sentence = "the old dogs do not see our small cat"
    visit = Visit(browser, live_url)
    try:
        page = visit.page
        box = page.locator(EXPLORER).get_by_label("Sentence", exact=True)
        page.evaluate(LISTEN_JS, EXPLORER)
        box.focus()
        page.keyboard.type(sentence)
        page.keyboard.press("Enter")
        page.wait_for_function("() => window.__drawn.count === 1", timeout=30_000)
        first = page.evaluate(FIGURE_JS, EXPLORER)
        focus = []
        for _ in range(3):  # the Translate button, then the Attention menu
            page.keyboard.press("Tab")
            focus.append(page.evaluate("() => document.activeElement.tagName + ':' + "
                                       "(document.activeElement.labels && document.activeElement.labels[0] ? "
                                       "document.activeElement.labels[0].textContent : "
                                       "document.activeElement.textContent)"))
            if focus[-1] == "SELECT:Attention":
                break
        page.keyboard.press("ArrowUp")  # cross-attention -> decoder self-attention
        page.wait_for_function("() => window.__drawn.count === 2", timeout=10_000)
        decoder_self = page.evaluate(FIGURE_JS, EXPLORER)
        page.keyboard.press("Tab")  # the Layer menu
        page.keyboard.press("ArrowUp")  # layer 2 -> layer 1
        page.wait_for_function("() => window.__drawn.count === 3", timeout=10_000)
        layer_one = page.evaluate(FIGURE_JS, EXPLORER)
        page.keyboard.press("Tab")  # the Head menu
        page.keyboard.press("ArrowDown")  # all heads -> head 1
        page.wait_for_function("() => window.__drawn.count === 4", timeout=10_000)
        head_one = page.evaluate(FIGURE_JS, EXPLORER)
        drawn_text = page.evaluate("() => window.__drawn.text")
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert focus[-1] == "SELECT:Attention", focus
    expected = translate(checkpoint.model.eval(), sentence, checkpoint.src_vocab, checkpoint.tgt_vocab)
    assert drawn_text == expected.text
    _check_figure(first, *_expected(checkpoint, sentence, "cross", 1))
    assert decoder_self["title"].startswith("decoder self-attention, layer 2")
    _check_figure(decoder_self, *_expected(checkpoint, sentence, "decoder_self", 1))
    assert layer_one["title"].startswith("decoder self-attention, layer 1")
    _check_figure(layer_one, *_expected(checkpoint, sentence, "decoder_self", 0))
    maps, queries, keys = _expected(checkpoint, sentence, "decoder_self", 0)
    assert head_one["title"] == "decoder self-attention, layer 1, head 1"
    _check_figure(head_one, maps[:1], queries, keys)

