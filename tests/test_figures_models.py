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


def test_norm_placement_figure_draws_given_scales_as_computed_ones():
    from transformer_lib.analysis import norm_placement_scales

    settings = dict(d_model=16, d_ff=32, seq_len=5, batch=2, n_seeds=2)
    post, pre = (norm_placement_scales(first, 4, **settings) for first in (False, True))
    given = norm_placement_figure(post=post, pre=pre)
    computed = norm_placement_figure(n_layers=4, **settings)
    assert [list(t.y) for t in given.data] == [list(t.y) for t in computed.data]
    assert [t.name for t in given.data] == [t.name for t in computed.data]
    assert list(given.data[0].x) == [1, 2, 3, 4]


def test_norm_placement_figure_rejects_bad_scales():
    scales = {"activation": [1.0, 2.0], "gradient": [0.5, 0.25]}
    with pytest.raises(ValueError, match="pre: expected post and pre together"):
        norm_placement_figure(post=scales)
    with pytest.raises(TypeError, match="post: expected a dict"):
        norm_placement_figure(post=[1.0], pre=scales)
    with pytest.raises(ValueError, match="pre: expected the keys"):
        norm_placement_figure(post=scales, pre={"activation": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"pre\['gradient'\]\[1\]: expected a finite number"):
        norm_placement_figure(post=scales, pre={"activation": [1.0, 2.0], "gradient": [1.0, float("nan")]})
    with pytest.raises(ValueError, match="post: expected one activation and one gradient per layer"):
        norm_placement_figure(post={"activation": [1.0], "gradient": [1.0, 2.0]}, pre=scales)
    with pytest.raises(ValueError, match=r"pre: expected as many layers as post \(2\)"):
        norm_placement_figure(post=scales, pre={"activation": [1.0], "gradient": [1.0]})
