import pytest

from transformer_lib.evaluation import LengthBucket
from transformer_lib.figures.rnn import accuracy_by_length_figure, gradient_norm_figure, timing_figure


def test_gradient_norm_figure_has_one_trace_per_scale_and_a_slider():
    fig = gradient_norm_figure({0.5: [1.0, 0.5, 0.0], 2.0: [1.0, 2.0, 4.0]}, fixed={"LSTM": [1.0, 0.9, 0.8]})
    assert [t.name for t in fig.data] == ["vanilla RNN, scale 0.5", "vanilla RNN, scale 2", "LSTM"]
    assert [t.visible for t in fig.data[:2]] == [True, False]
    assert fig.data[0].y == (1.0, 0.5, None)  # an underflowed zero is a gap on the log axis
    assert fig.layout.yaxis.type == "log"
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["0.5", "2"]
    assert steps[1].args[0]["visible"] == [False, True, True]


def test_gradient_norm_figure_rejects_curves_of_different_lengths():
    with pytest.raises(ValueError, match="fixed"):
        gradient_norm_figure({1.0: [1.0, 0.5]}, fixed={"LSTM": [1.0]})
    with pytest.raises(ValueError, match="by_scale"):
        gradient_norm_figure({})


def test_timing_figure_in_milliseconds():
    fig = timing_figure([10, 20], {"RNN": [0.001, 0.002], "attention": [0.0005, 0.0005]})
    assert [t.name for t in fig.data] == ["RNN", "attention"]
    assert fig.data[0].y == (1.0, 2.0)
    with pytest.raises(ValueError, match="seconds"):
        timing_figure([10, 20], {"RNN": [0.001]})


def test_accuracy_by_length_figure_groups_bars():
    rows = [LengthBucket(3, 6, 10, 0.9, 80.0), LengthBucket(6, 9, 5, 0.5, 60.0)]
    fig = accuracy_by_length_figure({"GRU": rows, "Transformer": rows})
    assert fig.layout.barmode == "group"
    assert fig.data[0].x == ("3–5 words", "6–8 words")
    assert fig.data[0].y == (90.0, 50.0)
    with pytest.raises(TypeError, match="buckets"):
        accuracy_by_length_figure({"GRU": [1, 2]})
