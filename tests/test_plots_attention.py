"""The figures of the attention chapters, checked through their data."""

from __future__ import annotations

import math

import pytest
import torch

from transformer_lib.attention import causal_mask
from transformer_lib.plots_attention import mask_figure, scaling_figure

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


def test_scaling_figure_checks_lengths():
    with pytest.raises(ValueError, match="one per d_k"):
        scaling_figure([4, 16], {"m": {"a": [1.0]}})
    with pytest.raises(ValueError, match="d_ks"):
        scaling_figure([], {"m": {"a": []}})


def test_head_statistics_measures_known_patterns():
    from transformer_lib.capture import AttentionMaps
    from transformer_lib.plots_attention import head_statistics

    n = 4
    identity = torch.eye(n)  # every query looks at itself
    uniform = torch.full((n, n), 1 / n)
    causal_uniform = causal_mask(n).float() / causal_mask(n).sum(-1, keepdim=True)
    maps = AttentionMaps(encoder_self=[torch.stack([identity, uniform])[None]],
                         decoder_self=[torch.stack([causal_uniform, identity])[None]],
                         cross=[torch.stack([uniform, identity])[None]])
    rows = {(r["attention"], r["head"]): r for r in head_statistics(maps)}
    assert len(rows) == 6 and all(r["layer"] == 1 for r in rows.values())
    assert rows["encoder_self", 1]["entropy"] == pytest.approx(0) and rows["encoder_self", 1]["own"] == 1
    assert rows["encoder_self", 2]["entropy"] == pytest.approx(1) and rows["encoder_self", 2]["max weight"] == 0.25
    # causal uniform: rows 1..3 spread over 2, 3, 4 keys: entropy 1, own = mean(1/2, 1/3, 1/4)
    assert rows["decoder_self", 1]["entropy"] == pytest.approx(1)
    assert rows["decoder_self", 1]["own"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert rows["decoder_self", 1]["previous"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert rows["decoder_self", 2]["previous"] == 0
    assert math.isnan(rows["cross", 1]["own"]) and rows["cross", 2]["entropy"] == pytest.approx(0)


def test_head_statistics_checks_its_arguments():
    from transformer_lib.capture import AttentionMaps
    from transformer_lib.plots_attention import head_statistics

    with pytest.raises(TypeError, match="maps: expected"):
        head_statistics({})
    with pytest.raises(ValueError, match="maps: no attention maps"):
        head_statistics(AttentionMaps())
    with pytest.raises(ValueError, match="index"):
        head_statistics(AttentionMaps(encoder_self=[torch.ones(1, 1, 2, 2) / 2]), index=1)
