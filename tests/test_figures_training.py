"""The figures of chapter 7: learning-rate schedule with a slider, loss curve."""

from __future__ import annotations

import pytest

from transformer_lib.figures.training import learning_rate_figure, loss_curve_figure
from transformer_lib.training import TrainingHistory, transformer_lr


def test_learning_rate_figure_slider_shows_one_warmup_at_a_time():
    fig = learning_rate_figure(d_model=512, warmups=(1000, 4000), steps=10_000)
    assert len(fig.data) == 2 + 2 * 2  # two grey curves, then a curve and a peak marker per warm-up
    assert [t.visible for t in fig.data[2:]] == [False, False, True, True]  # 4000 first
    slider = fig.layout.sliders[0]
    assert [s.label for s in slider.steps] == ["1000", "4000"]
    assert slider.steps[0].args[0]["visible"] == [True, True, True, True, False, False]
    peak = fig.data[5]
    assert peak.x == (4000,) and peak.y[0] == pytest.approx(transformer_lr(4000, 512, 4000), rel=1e-3)
    curve = fig.data[4]
    assert curve.y[0] == pytest.approx(transformer_lr(1, 512, 4000), rel=1e-3)


def test_learning_rate_figure_rejects_bad_input():
    with pytest.raises(ValueError, match="warmups"):
        learning_rate_figure(warmups=())
    with pytest.raises(ValueError, match="d_model"):
        learning_rate_figure(d_model=0)


def test_loss_curve_has_the_losses_and_a_moving_average():
    history = TrainingHistory(steps=[1, 2, 3, 4], losses=[4.0, 2.0, 3.0, 1.0])
    fig = loss_curve_figure(history, window=2)
    assert list(fig.data[0].y) == [4.0, 2.0, 3.0, 1.0]
    assert list(fig.data[1].y) == [4.0, 3.0, 2.5, 2.0]
    assert fig.layout.xaxis.title.text == "step"
    with pytest.raises(ValueError, match="history"):
        loss_curve_figure(TrainingHistory())
    with pytest.raises(TypeError, match="history"):
        loss_curve_figure([1.0, 2.0])


def test_loss_curve_title_names_the_loss():
    history = TrainingHistory(steps=[1, 2], losses=[2.0, 1.0])
    assert "label-smoothed" in loss_curve_figure(history).layout.title.text
    title = loss_curve_figure(history, loss_name="cross-entropy per token").layout.title.text
    assert title == "Training loss (cross-entropy per token)"
    with pytest.raises(TypeError, match="loss_name"):
        loss_curve_figure(history, loss_name=1)
