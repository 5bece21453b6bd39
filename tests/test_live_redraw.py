"""The attention explorer's one redraw path (``draw`` in transformer_lib/browser/static/explorers.js).

Every control of the page's attention explorer ends in ``draw(payload)``, which draws
``attentionFigure``'s figure on a canvas with its text in an SVG (heatmap-canvas.js), in the same div
each time. Here, in chromium, offline, what is checked is what was drawn: the canvas's pixel at the
centre of each cell is the colour of the model's weight there on the theme's colour scale, the tick
labels written are the tokens, the colour bar runs from the colour of 0 to that of 1 under its title:

* after a reader types several sentences one after another, pressing Enter without waiting, the
  figure holds the maps of the last sentence only (no stale figure from an earlier translation or
  from an earlier draw in the div): every heatmap's weights equal ``capture_attention`` for that
  sentence within 1e-4, each cell's colour is that weight's, and its tick labels are the sentence's
  tokens; and the figure is, pixel for pixel and word for word, the one a fresh draw of the same
  translation makes in a new div;
* the keyboard alone works: Enter in the box translates, Tab reaches the menus, and the arrow keys
  in them redraw the maps shown (kind, layer and head), each redraw announced by a ``tc-drawn``
  event that carries the translation drawn;
* at a desktop's and a phone's width, with long tokens, no text of the figure lies on another or on
  a heatmap, and everything drawn is inside the figure; the figure has its title, its axis titles,
  its colour bar's title and a description that names each head's strongest weights.

No test here times anything: benchmarks/live_model.py does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import numpy as np
import pytest
import torch

from tools.book_browser import live_test_page, serve
from transformer_lib.browser.theme import theme_json
from transformer_lib.capture import capture_attention
from transformer_lib.decoding import translate
from transformer_lib.pretrained import book_corpus, book_model

from .test_live_model import Visit

TOLERANCE = 1e-4
EXPLORER = 'div.tc-live[data-explorer="attention"]'

# What the figure in the page shows: per heatmap the weights it was given (z), the colour of the canvas's
# device pixel at each cell's centre, and the tick labels written beside it; the title as written; the
# colour bar's title and its colours at the top and the bottom; the axis titles and annotations.
FIGURE_JS = """(selector) => {
  const figure = document.querySelector(selector).tcExplorer.figure;
  const canvas = figure.querySelector('canvas');
  const svg = figure.querySelector('svg');
  const ratio = canvas.width / figure.tcWidth;
  const ctx = canvas.getContext('2d');
  const pixel = (x, y) => Array.from(ctx.getImageData(Math.floor(x * ratio), Math.floor(y * ratio), 1, 1).data)
    .slice(0, 3);
  const texts = (sel) => [...svg.querySelectorAll(sel)].map((t) => t.textContent);
  const bar = figure.tcGeometry.bar;
  const middle = (bar.x0 + bar.x1) / 2;
  return {
    title: texts('.tc-figure-title tspan').join(' '),
    labels: texts(':scope > text').filter((t) => !/^head \\d+$/.test(t)),
    colorbar: {title: texts('.cbtitle')[0], top: pixel(middle, bar.y0 + 1), bottom: pixel(middle, bar.y1 - 1)},
    description: figure.querySelector('.tc-sr-only').textContent,
    described: figure.getAttribute('aria-describedby') === figure.querySelector('.tc-sr-only').id,
    heatmaps: figure.data.map((trace, n) => ({
      z: trace.z, name: trace.name,
      pixels: trace.z.map((row, i) => row.map((_, j) => {
        const box = figure.tcCell(n, i, j);
        return pixel((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2);
      })),
      x: texts(`.xaxislayer-above[data-trace="${n}"] text`), y: texts(`.yaxislayer-above[data-trace="${n}"] text`),
    })),
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


def colour_at(weight: float) -> np.ndarray:
    """The colour (r, g, b) of ``weight`` on the page's colour scale for the maps (the theme's Blues, 0 to 1):
    linear in RGB between the scale's stops, as plotly's colour scales are."""
    stops = json.loads(theme_json())["colorscales"]["Blues"]
    positions = [p for p, _ in stops]
    rgb = np.array([[float(v) for v in re.findall(r"[\d.]+", c)] for _, c in stops])
    w = min(max(weight, 0.0), 1.0)
    return np.array([np.interp(w, positions, rgb[:, k]) for k in range(3)])


def _check_figure(figure: dict, maps: np.ndarray, queries: list[str], keys: list[str]) -> None:
    assert len(figure["heatmaps"]) == maps.shape[0]  # every head, in its own panel
    for head, trace in enumerate(figure["heatmaps"]):
        assert trace["name"] == f"head {head + 1}"
        assert trace["y"] == queries and trace["x"] == keys  # the tokens, written beside each panel
        z = np.array(trace["z"], dtype=np.float64)
        assert z.shape == maps[head].shape
        assert np.abs(z - maps[head]).max() <= TOLERANCE
        # the drawing: each cell the colour of the library's weight there (a weight 1e-4 away moves a
        # channel by less than 0.1; rounding to whole levels, by at most 1 more)
        pixels = np.array(trace["pixels"], dtype=np.float64)
        expected = np.array([[colour_at(w) for w in row] for row in maps[head]])
        assert pixels.shape == expected.shape
        assert np.abs(pixels - expected).max() <= 1.01, np.abs(pixels - expected).max()
    assert figure["colorbar"]["title"] == "weight"
    assert np.abs(np.array(figure["colorbar"]["top"]) - colour_at(1.0)).max() <= 3  # a pixel's row from the end
    assert np.abs(np.array(figure["colorbar"]["bottom"]) - colour_at(0.0)).max() <= 3
    assert figure["described"] and all(f"head {h + 1}, the strongest weight of each query" in figure["description"]
                                       for h in range(maps.shape[0]))


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
        # the same translation drawn afresh in a new div: what the explorer shows is that, pixel for pixel
        fresh = page.evaluate("""async ([selector, text]) => {
          const e = document.querySelector(selector).tcExplorer;
          const result = await window.bookModel.translate(text);
          const width = e.figure.tcWidth;
          const fig = window.tcExplorers.attentionFigure(result, e.kind.value, Number(e.layer.value),
            e.head.value === "all" ? "all" : Number(e.head.value), width);
          const div = document.createElement("div");
          div.className = "tc-figure";
          e.figure.parentElement.appendChild(div);
          window.tcHeatmaps.draw(div, fig, width);
          const image = (d) => { const c = d.querySelector("canvas");
            return c.getContext("2d").getImageData(0, 0, c.width, c.height).data; };
          const [a, b] = [image(e.figure), image(div)];
          const same = a.length === b.length && a.every((v, i) => v === b[i]);
          const words = div.querySelector("svg").innerHTML === e.figure.querySelector("svg").innerHTML;
          const z = div.data.map((t) => t.z);
          div.remove();
          return {same, text: words, z, layout: JSON.parse(JSON.stringify(fig.layout))};
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
    assert fresh["same"] and fresh["text"], "the explorer's figure is not the one a fresh draw makes"
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



# Every text of the figure's SVG against every other (but the tick labels of one axis, turned to fit)
# and against every heatmap: overlaps by more than 3 px, and text outside the figure's box.
CROWDED_JS = """(selector) => {
  const figure = document.querySelector(selector).tcExplorer.figure;
  const box = figure.getBoundingClientRect();
  const texts = [...figure.querySelectorAll('svg text')].map((t) => ({s: t.textContent, r: t.getBoundingClientRect(),
    g: t.parentElement.matches('.xaxislayer-above, .yaxislayer-above, .cbaxis') ? t.parentElement : t}));
  const origin = figure.querySelector('canvas').getBoundingClientRect();
  const cells = figure.tcGeometry.panels.map((p) => ({s: p.trace.name, r: {left: origin.left + p.x0,
    right: origin.left + p.x1, top: origin.top + p.y0, bottom: origin.top + p.y1}}));
  const over = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 3
    && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 3;
  const found = [];
  texts.forEach((a, i) => {
    texts.slice(i + 1).forEach((b) => { if (a.g !== b.g && over(a.r, b.r)) found.push(`"${a.s}" on "${b.s}"`); });
    cells.forEach((c) => { if (over(a.r, c.r)) found.push(`"${a.s}" on the heatmap of ${c.s}`); });
    if (a.r.left < box.left - 1 || a.r.right > box.right + 1 || a.r.top < box.top - 1 || a.r.bottom > box.bottom + 1) {
      found.push(`"${a.s}" outside the figure`);
    }
  });
  return found;
}"""


@pytest.mark.parametrize("width", [1366, 390])
def test_the_maps_text_is_whole_and_apart_at_a_desktops_and_a_phones_width(checkpoint, browser, live_url: str,
                                                                            width: int) -> None:
    sentence = "the beautiful brothers do not see our newspapers in the kitchens"  # the longest tokens
    visit = Visit(browser, live_url, width)
    crowded = {}
    try:
        page = visit.page
        page.set_viewport_size({"width": width, "height": 900})
        explorer = page.locator(EXPLORER)
        page.evaluate(LISTEN_JS, EXPLORER)
        explorer.get_by_label("Sentence", exact=True).fill(sentence)
        explorer.get_by_label("Sentence", exact=True).press("Enter")
        page.wait_for_function("() => window.__drawn.count === 1", timeout=30_000)
        choices = [(None, None), ("Head", "head 1"), ("Attention", "encoder self-attention"), ("Head", "all heads")]
        for count, (menu, option) in enumerate(choices, start=1):
            if menu:
                explorer.get_by_label(menu, exact=True).select_option(label=option)
                page.wait_for_function(f"() => window.__drawn.count === {count}", timeout=10_000)
            crowded[f"{menu} {option}"] = page.evaluate(CROWDED_JS, EXPLORER)
        drawn = page.evaluate(FIGURE_JS, EXPLORER)
        name = explorer.locator(".tc-figure").first.get_attribute("aria-label")
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert not any(crowded.values()), crowded
    assert drawn["title"].startswith("encoder self-attention, layer 2")
    assert name.startswith("Plot: encoder self-attention, layer 2")
    assert drawn["labels"].count("source token (key)") == drawn["labels"].count("source token (query)") \
        == len(drawn["heatmaps"]) == 4  # each panel names its axes by side (issue 53)
    _check_figure(drawn, *_expected(checkpoint, sentence, "encoder_self", 1))
