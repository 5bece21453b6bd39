"""The attention figures: heatmaps of captured maps (chapters 4, 5 and 7), masks and the scaling
figure (chapter 4), checked through their data.

Figures are checked through their data (traces, visibility, menu arguments), which is what the
browser receives; tests/test_browser.py checks that the browser then draws them.
"""

from __future__ import annotations

import html

import numpy as np
import pytest
import torch

from transformer_lib.attention import causal_mask
from transformer_lib.capture import AttentionMaps
from transformer_lib.figures.attention import (
    attention_figure,
    attention_heads_menu_figure,
    attention_menu_figure,
    mask_figure,
    scaling_figure,
    weights_side_by_side_figure,
)

from .toy_translation import toy_maps, toy_model


@pytest.fixture(scope="module")
def maps() -> AttentionMaps:
    return toy_maps(toy_model())


# --- attention figures -------------------------------------------------------------------------


def test_attention_figure_one_head_holds_its_weights(maps: AttentionMaps) -> None:
    fig = attention_figure(maps, "cross", 0, 1)
    assert len(fig.data) == 1
    z = np.array(fig.data[0].z)
    np.testing.assert_allclose(z, maps.cross[0][0, 1].numpy(), atol=5e-5)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-3)  # every query's weights sum to 1
    assert list(fig.layout.xaxis.ticktext) == [html.escape(t) for t in maps.src_tokens[0]]
    assert list(fig.layout.yaxis.ticktext) == [html.escape(t) for t in maps.tgt_tokens[0]]
    assert fig.layout.yaxis.ticktext[0] == "&lt;sos&gt;"  # plotly would drop "<sos>" as an HTML tag


def test_attention_figure_all_heads_is_a_grid(maps: AttentionMaps) -> None:
    fig = attention_figure(maps, "encoder_self", 1, "all")
    assert len(fig.data) == 2
    for h, trace in enumerate(fig.data):
        np.testing.assert_allclose(trace.z, maps.encoder_self[1][0, h].numpy(), atol=5e-5)
    assert {trace.xaxis for trace in fig.data} == {"x", "x2"}
    # each panel says which side's tokens its axes hold, as one head's figure does (issue 53)
    assert {fig.layout.xaxis.title.text, fig.layout.xaxis2.title.text} == {"source token (key)"}
    assert {fig.layout.yaxis.title.text, fig.layout.yaxis2.title.text} == {"source token (query)"}
    # the gap between the columns holds the right-hand panel's query tokens and its "query" title:
    # 8 px a character and 50 px for the ticks and title, of a plot about 500 px wide
    gap = fig.layout.xaxis2.domain[0] - fig.layout.xaxis.domain[1]
    longest = max(len(t) for t in maps.src_tokens[0])
    assert gap == pytest.approx(min(0.25, max(0.1, (8 * longest + 50) / 500)), abs=1e-6)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    (dict(kind="self"), ValueError, "kind: expected one of"),
    (dict(kind="decoder_self", layer=1), ValueError, r"layer: expected an int in \[0, 1\) for decoder_self, got 1"),
    (dict(head=2), ValueError, r"head: expected \"all\" or an int in \[0, 2\), got 2"),
    (dict(head="every"), TypeError, r"head: expected \"all\" or an int in \[0, 2\), got 'every'"),
])
def test_attention_figure_names_the_bad_argument(maps: AttentionMaps, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        attention_figure(maps, **kwargs)


def test_attention_menu_figure_precomputes_every_layer_and_head(maps: AttentionMaps) -> None:
    fig = attention_menu_figure(maps)
    layers = [("encoder_self", 0), ("encoder_self", 1), ("decoder_self", 0), ("cross", 0)]
    assert len(fig.data) == len(layers)
    assert [trace.visible for trace in fig.data] == [False, False, False, True]  # opens on the last cross-attention
    kind_menu, head_menu = fig.layout.updatemenus
    assert len(kind_menu.buttons) == len(layers) and kind_menu.active == 3
    assert list(fig.layout.xaxis.ticktext) == [html.escape(t) for t in maps.src_tokens[0]]
    for i, button in enumerate(kind_menu.buttons):
        assert button.args[0]["visible"] == [j == i for j in range(len(layers))]
        kind = layers[i][0]
        keys = maps.src_tokens[0] if kind != "decoder_self" else maps.tgt_tokens[0]
        assert button.args[1]["xaxis.ticktext"] == [html.escape(t) for t in keys]
    assert len(head_menu.buttons) == 2
    for h, button in enumerate(head_menu.buttons):
        assert button.method == "restyle" and list(button.args[1]) == [0, 1, 2, 3]
        for z, (kind, layer) in zip(button.args[0]["z"], layers, strict=True):
            np.testing.assert_allclose(z, getattr(maps, kind)[layer][0, h].numpy(), atol=5e-5)


def test_attention_heads_menu_figure_shows_one_layer_at_a_time(maps: AttentionMaps) -> None:
    fig = attention_heads_menu_figure(maps)
    assert len(fig.data) == 4 * 2  # (kind, layer) pairs x heads
    (menu,) = fig.layout.updatemenus
    assert len(menu.buttons) == 4 and menu.active == 3
    assert [j for j, trace in enumerate(fig.data) if trace.visible] == [6, 7]
    for i, button in enumerate(menu.buttons):
        visible = button.args[0]["visible"]
        assert [j for j, v in enumerate(visible) if v] == [2 * i, 2 * i + 1]
        assert "xaxis2.ticktext" in button.args[1]



# --- masks, scaling and the heads' statistics (chapters 4 and 5) --------------------------------

TOKENS = "Your cat is a lovely cat".split()


def test_mask_figure_shows_the_mask_with_tokens():
    fig = mask_figure(causal_mask(6), TOKENS, title="causal")
    (trace,) = fig.data
    assert [list(row) for row in trace.z] == [[int(j <= i) for j in range(6)] for i in range(6)]
    assert list(fig.layout.xaxis.ticktext) == TOKENS and list(fig.layout.yaxis.ticktext) == TOKENS
    assert "blocked" in trace.text[0][1] and "may attend" in trace.text[1][0]
    assert fig.layout.title.text == "causal"


def test_mask_figure_checks_its_arguments():
    with pytest.raises(ValueError, match="queries: expected 6 tokens"):
        mask_figure(causal_mask(6), TOKENS[:5])
    with pytest.raises(ValueError, match="mask: expected a 2-d"):
        mask_figure(causal_mask(6)[None], TOKENS)
    with pytest.raises(TypeError, match="mask: expected a torch.Tensor"):
        mask_figure([[True]], ["a"])


def test_scaling_figure_menu_switches_measures():
    measures = {"max weight": {"scaled": [0.5, 0.6], "not scaled": [0.7, 0.99]},
                "gradient": {"scaled": [1.0, 1.1], "not scaled": [0.5, 0.01]}}
    fig = scaling_figure([4, 16], measures, log_y=["gradient"], title="t")
    assert fig.layout.title.text == "t"
    assert [t.name for t in fig.data] == ["scaled", "not scaled"] * 2
    assert [t.visible for t in fig.data] == [True, True, False, False]
    first, second = fig.layout.updatemenus[0].buttons
    assert second.args[0]["visible"] == [False, False, True, True]
    assert second.args[1]["yaxis.type"] == "log" and first.args[1]["yaxis.type"] == "linear"
    assert list(fig.data[3].y) == [0.5, 0.01] and list(fig.data[0].x) == [4, 16]
    # the two curves differ in dash and marker, not only in colour, and keep their style across measures
    scaled, not_scaled = fig.data[0], fig.data[1]
    assert scaled.line.dash != not_scaled.line.dash and scaled.marker.symbol != not_scaled.marker.symbol
    assert (fig.data[2].line.dash, fig.data[2].marker.symbol) == (scaled.line.dash, scaled.marker.symbol)


def test_scaling_figure_checks_lengths():
    with pytest.raises(ValueError, match="one per d_k"):
        scaling_figure([4, 16], {"m": {"a": [1.0]}})
    with pytest.raises(ValueError, match="d_ks"):
        scaling_figure([], {"m": {"a": []}})


def test_weights_side_by_side_share_one_colour_scale_and_keep_their_numbers():
    dot = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    additive = torch.tensor([[0.5, 0.25, 0.25], [0.0, 0.5, 0.5]])
    fig = weights_side_by_side_figure({"dot-product": dot, "additive": additive}, ["q0", "q1"], ["a", "b", "<c>"],
                                      title="two scores")
    assert [np.asarray(trace.z).tolist() for trace in fig.data] == [[[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]],
                                                                  [[0.5, 0.25, 0.25], [0.0, 0.5, 0.5]]]
    assert {trace.coloraxis for trace in fig.data} == {"coloraxis"} and fig.layout.coloraxis.cmax == 1.0
    assert [a.text for a in fig.layout.annotations] == ["dot-product", "additive"]
    assert list(fig.layout.xaxis2.ticktext) == ["a", "b", "&lt;c&gt;"] and fig.layout.title.text == "two scores"
    assert fig.layout.xaxis.title.text == "key" and fig.layout.yaxis.title.text == "query"


def test_weights_side_by_side_checks_its_arguments():
    w = torch.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match="weights: expected a non-empty mapping"):  # a mapping: the wrong value
        weights_side_by_side_figure({}, ["a", "b"], ["x", "y", "z"])
    with pytest.raises(TypeError, match="weights: expected a non-empty mapping"):  # no mapping: the wrong type
        weights_side_by_side_figure([w], ["a", "b"], ["x", "y", "z"])
    with pytest.raises(TypeError, match=r"weights\['b'\]: expected a 2-d"):
        weights_side_by_side_figure({"a": w, "b": w[None]}, ["a", "b"], ["x", "y", "z"])
    with pytest.raises(ValueError, match="weights: expected matrices of one shape"):
        weights_side_by_side_figure({"a": w, "b": w[:, :2]}, ["a", "b"], ["x", "y", "z"])
    with pytest.raises(ValueError, match=r"keys: expected 3 tokens \(one per weight-matrix column\), got 2"):
        weights_side_by_side_figure({"a": w}, ["a", "b"], ["x", "y"])
