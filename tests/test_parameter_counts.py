"""The stored parameter breakdowns (``tools/parameter_counts.py``) are what the code computes, and
``parameter_breakdown`` reads them instead of building the paper's models on the meta device."""

from __future__ import annotations

import json
import sys

import pytest
import torch

from transformer_lib import models
from transformer_lib.config import TransformerConfig

from .book_browser import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from parameter_counts import counted_configs  # noqa: E402


def test_the_stored_breakdowns_are_what_the_code_computes() -> None:
    stored = json.loads(models.STORED_BREAKDOWNS.read_text())
    configs = counted_configs()
    assert sorted(stored) == sorted(models.breakdown_key(c) for c in configs)
    for config in configs:
        assert stored[models.breakdown_key(config)] == models.breakdown_on_meta(config)


def test_a_stored_config_is_read_and_another_is_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    base, other = TransformerConfig.preset("base"), TransformerConfig.preset("base", d_ff=1024)
    expected = models.breakdown_on_meta(other)

    def not_built(config: TransformerConfig) -> dict[str, int]:
        assert config == other, "a stored config was built again"
        return expected

    monkeypatch.setattr(models, "breakdown_on_meta", not_built)
    assert models.parameter_breakdown(base) == json.loads(models.STORED_BREAKDOWNS.read_text())[
        models.breakdown_key(base)]
    assert models.parameter_breakdown(other) == expected


@pytest.mark.parametrize("name", ["base", "big"])
def test_the_count_is_the_models_own(name: str) -> None:
    config = TransformerConfig.preset(name)
    with torch.device("meta"):
        built = models.Transformer(config)
    assert models.parameter_count(config) == models.count_parameters(built)
