import math

import pytest

from transformer_lib.plots_positions import similarity_by_offset, similarity_by_offset_figure


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
    with pytest.raises(ValueError, match="d_model"):
        similarity_by_offset_figure((15,))
