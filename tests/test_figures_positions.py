"""Chapter 3's figures, checked through their data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from transformer_lib.figures.positions import (
    positional_encoding_figure,
    positional_encoding_menu_figure,
    positional_waves_menu_figure,
    rope_scores,
    similarity_by_offset,
    similarity_by_offset_figure,
)
from transformer_lib.positional_encoding import sinusoidal_table


def test_similarity_by_offset_is_a_sum_of_cosines():
    d_model = 8
    values = similarity_by_offset(d_model, 5)
    assert values[0] == pytest.approx(1.0)
    omegas = [1 / 10000 ** (2 * i / d_model) for i in range(d_model // 2)]
    for k, value in enumerate(values):
        assert value == pytest.approx(sum(math.cos(k * w) for w in omegas) / (d_model / 2), abs=1e-6)


def test_similarity_by_offset_figure_traces_and_menu():
    fig = similarity_by_offset_figure((16, 64), max_offset=10)
    assert [t.name for t in fig.data] == ["d_model = 16", "d_model = 64"]
    assert len(fig.data[0].x) == 11
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["all", "d_model = 16", "d_model = 64"]
    assert buttons[2].args[0]["visible"] == [False, True]
    assert fig.data[0].line.dash != fig.data[1].line.dash  # told apart by more than colour
    with pytest.raises(ValueError, match="d_model"):
        similarity_by_offset_figure((15,))


# --- positional encodings ----------------------------------------------------------------------


def test_positional_encoding_figure_panels_hold_the_table() -> None:
    fig = positional_encoding_figure(d_model=16, dims=(2, 5), positions=(3, 20))
    table = sinusoidal_table(21, 16)[3:].numpy()
    waves, heatmap, similarity, rope = fig.data[:4], fig.data[4], fig.data[5], fig.data[6]
    assert len(fig.data) == 7
    for dim, trace in zip(range(2, 6), waves, strict=True):
        np.testing.assert_allclose(trace.y, table[:, dim], atol=1e-6)
        assert list(trace.x) == list(range(3, 21))
    np.testing.assert_allclose(heatmap.z, table, atol=1e-6)
    np.testing.assert_allclose(similarity.z, table @ table.T, atol=1e-4)
    np.testing.assert_allclose(rope.z, rope_scores(16, (3, 20)), atol=1e-6)


def test_sinusoidal_and_rope_scores_depend_on_the_offset_only() -> None:
    scores = rope_scores(16, (5, 30))
    table = sinusoidal_table(31, 16)[5:].numpy()
    for matrix in (scores, table @ table.T):
        for offset in range(-5, 6):
            diagonal = np.diagonal(matrix, offset)
            np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)
    assert not np.allclose(np.diagonal(scores, 0)[0], np.diagonal(scores, 3)[0])


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    (dict(d_model=15), ValueError, "d_model: expected an even number"),
    (dict(d_model=0), ValueError, "d_model: expected a positive int"),
    (dict(dims=(3, 2)), ValueError, r"dims: the first dimension \(3\) is after the last \(2\): choose a first"),
    (dict(dims=(0, 64)), ValueError, "dims: each dimension must lie between 0 and 63, got 0 to 64."),
    (dict(dims=(0, 30)), ValueError, "dims: dimensions 0 to 30 are 31 waves; at most 16 fit in one plot"),
    (dict(positions=(0, 10_000)), ValueError, "positions: each position must lie between 0 and 512, got 0 to 10000."),
    (dict(positions=5), TypeError, "positions: expected a \\(first, last\\) pair of ints, got 5"),
])
def test_positional_encoding_figure_names_the_bad_argument(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        positional_encoding_figure(**kwargs)


def test_positional_waves_menu_figure_slides_over_dimension_pairs() -> None:
    fig = positional_waves_menu_figure(d_model=8, positions=(0, 30))
    table = sinusoidal_table(31, 8).numpy()
    assert len(fig.data) == 8
    np.testing.assert_allclose(fig.data[5].y, table[:, 5], atol=1e-6)
    (slider,) = fig.layout.sliders
    assert len(slider.steps) == 4
    assert slider.steps[2].args[0]["visible"] == [False] * 4 + [True, True] + [False] * 2
    assert [t.visible for t in fig.data] == [True, True] + [False] * 6


def test_positional_encoding_menu_figure_slides_over_d_model() -> None:
    fig = positional_encoding_menu_figure(d_models=(8, 16), positions=(0, 12))
    assert len(fig.data) == 6
    assert np.array(fig.data[3].z).shape == (13, 16)
    (slider,) = fig.layout.sliders
    assert [s.label for s in slider.steps] == ["8", "16"]
    assert slider.steps[1].args[0]["visible"] == [False] * 3 + [True] * 3
    with pytest.raises(TypeError, match="d_models: expected a non-empty sequence"):
        positional_encoding_menu_figure(d_models=16)


