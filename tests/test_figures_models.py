"""The figures of chapter 6: parameter breakdown per component, norm placement through depth."""

from __future__ import annotations

import pytest
import torch

from transformer_lib.config import TransformerConfig
from transformer_lib.figures.models import (
    COMPONENTS,
    norm_placement_figure,
    norm_placement_scales,
    parameter_breakdown,
    parameter_breakdown_figure,
)
from transformer_lib.models import Transformer, parameter_count


def test_breakdown_adds_up_to_the_total_and_counts_shared_matrices_once():
    for name in ("small", "base"):
        config = TransformerConfig.preset(name)
        counts = parameter_breakdown(config)
        assert list(counts) == list(COMPONENTS)
        assert sum(counts.values()) == parameter_count(config)
    base = parameter_breakdown(TransformerConfig.preset("base"))
    assert base["embeddings"] == 37000 * 512  # one matrix for both embeddings and the projection
    assert base["output projection"] == 37000  # only the projection's bias is its own
    assert base["encoder feed-forward"] == 6 * (512 * 2048 + 2048 + 2048 * 512 + 512)


def test_breakdown_matches_a_real_model():
    config = TransformerConfig.preset("small", src_vocab_size=50, tgt_vocab_size=60, d_model=16, d_ff=32)
    model = Transformer(config)
    counts = parameter_breakdown(config)
    assert counts["decoder cross-attention"] == sum(
        p.numel() for n, p in model.named_parameters() if ".cross_attn." in n)
    assert counts["output projection"] == 60 * 16 + 60


def test_breakdown_figure_has_one_trace_and_one_button_per_preset():
    fig = parameter_breakdown_figure(("small", "base"))
    assert len(fig.data) == 2
    assert [t.visible for t in fig.data] == [True, False]
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["small", "base"]
    assert buttons[1].args[0]["visible"] == [False, True]
    assert list(fig.data[0].y) == list(reversed(COMPONENTS))
    assert "base" in buttons[1].args[1]["title.text"]


def test_breakdown_rejects_bad_input():
    with pytest.raises(ValueError, match="presets"):
        parameter_breakdown_figure(("huge",))
    with pytest.raises(TypeError, match="config"):
        parameter_breakdown("base")


def test_norm_placement_scales_post_norm_keeps_unit_rms_pre_norm_grows():
    post = norm_placement_scales(False, n_layers=6, d_model=16, d_ff=32, seq_len=5, batch=2)
    pre = norm_placement_scales(True, n_layers=6, d_model=16, d_ff=32, seq_len=5, batch=2)
    assert len(post["activation"]) == len(pre["gradient"]) == 6
    # a LayerNorm with gain 1 and bias 0 ends every post-norm layer: RMS 1 (up to its eps)
    assert torch.allclose(torch.tensor(post["activation"]), torch.ones(6), atol=1e-3)
    assert pre["activation"][-1] > pre["activation"][0]  # the residual stream adds up
    assert all(g > 0 for g in post["gradient"] + pre["gradient"])


def test_norm_placement_figure_menu_switches_quantities():
    fig = norm_placement_figure(n_layers=4, d_model=16, d_ff=32, seq_len=5, batch=2)
    assert len(fig.data) == 4
    assert [t.visible for t in fig.data] == [True, True, False, False]
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["gradient", "activation"]
    assert fig.layout.yaxis.type == "log"
