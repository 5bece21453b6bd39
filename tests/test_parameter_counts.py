"""``parameter_breakdown`` counts in closed form: each part must be what the model built on the meta
device holds, for every preset and every switch that changes a count."""

from __future__ import annotations

import itertools

import pytest
import torch

from transformer_lib import models
from transformer_lib.config import PRESETS, TransformerConfig
from transformer_lib.pretrained.ablations import TABLE3_VARIANTS

SWITCHES = list(itertools.product([False, True], ["sinusoidal", "learned", "rope"], [False, True], [False, True]))


@pytest.mark.parametrize("name", list(PRESETS))
def test_the_closed_form_is_the_built_models_count(name: str) -> None:
    checked = 0
    for norm_first, positional, tie, share in SWITCHES:
        try:
            config = TransformerConfig.preset(name, norm_first=norm_first, positional=positional,
                                              tie_output_embedding=tie, share_source_target_embedding=share,
                                              n_decoder_layers=3)
        except ValueError:  # a combination the config refuses (one vocabulary per language, say)
            continue
        assert models.parameter_breakdown(config) == models.breakdown_on_meta(config), (norm_first, positional, tie,
                                                                                         share)
        checked += 1
    assert checked >= len(SWITCHES) // 2


def test_every_table3_variants_config_is_counted_right() -> None:
    for name, variant in TABLE3_VARIANTS.items():
        config = variant.book_recipe(0).config(1000, 1000)
        assert models.parameter_breakdown(config) == models.breakdown_on_meta(config), name


def test_no_model_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    def built(*args, **kwargs):
        raise AssertionError("parameter_breakdown built a model")

    monkeypatch.setattr(models.Transformer, "__init__", built)
    assert sum(models.parameter_breakdown(TransformerConfig.preset("base")).values()) == models.parameter_count(
        TransformerConfig.preset("base"))


@pytest.mark.parametrize("name", ["base", "big"])
def test_the_count_is_the_models_own(name: str) -> None:
    config = TransformerConfig.preset(name)
    with torch.device("meta"):
        built = models.Transformer(config)
    assert models.parameter_count(config) == models.count_parameters(built)
