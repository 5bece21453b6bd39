"""The figures of chapter 6: parameter breakdown per component, norm placement through depth
(the measurements they draw are tested in test_models.py and test_analysis.py)."""

from __future__ import annotations

import pytest

from transformer_lib.figures.models import norm_placement_figure, parameter_breakdown_figure
from transformer_lib.models import COMPONENTS


def test_breakdown_figure_has_one_trace_and_one_button_per_preset():
    fig = parameter_breakdown_figure(("small", "base"))
    assert len(fig.data) == 2
    assert [t.visible for t in fig.data] == [True, False]
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["small", "base"]
    assert buttons[1].args[0]["visible"] == [False, True]
    assert list(fig.data[0].y) == list(reversed(COMPONENTS))
    assert "base" in buttons[1].args[1]["title.text"]


def test_breakdown_figure_rejects_bad_input():
    with pytest.raises(ValueError, match="presets"):
        parameter_breakdown_figure(("huge",))


def test_norm_placement_figure_menu_switches_quantities():
    fig = norm_placement_figure(n_layers=4, d_model=16, d_ff=32, seq_len=5, batch=2)
    assert len(fig.data) == 4
    assert [t.visible for t in fig.data] == [True, True, False, False]
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["gradient", "activation"]
    assert fig.layout.yaxis.type == "log"
