import math

import pytest
import torch

from transformer_lib.positional_encoding import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    relative_position_map,
    sinusoidal_table,
)


def test_sinusoidal_table_matches_the_formula_entry_by_entry():
    table = sinusoidal_table(50, 16)
    for pos in (0, 1, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert table[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_first_dimensions_oscillate_fastest():
    table = sinusoidal_table(100, 32)
    sign_changes = (table[1:] * table[:-1] < 0).sum(dim=0)
    assert sign_changes[0] > sign_changes[10] > sign_changes[30]


@pytest.mark.parametrize("offset", [1, 3, 17])
def test_pe_at_pos_plus_k_is_one_linear_map_of_pe_at_pos(offset):
    d_model = 24
    table = sinusoidal_table(128, d_model).double()
    m = relative_position_map(offset, d_model)
    predicted = table[: 128 - offset] @ m.T  # row pos -> M @ PE(pos)
    torch.testing.assert_close(predicted, table[offset:], rtol=0, atol=1e-6)
    # and the map is a rotation: it keeps lengths
    torch.testing.assert_close(m @ m.T, torch.eye(d_model, dtype=torch.float64), rtol=0, atol=1e-12)


def test_sinusoidal_encoding_adds_the_table_with_an_offset():
    pe = SinusoidalPositionalEncoding(8, max_len=20)
    x = torch.zeros(2, 5, 8)
    torch.testing.assert_close(pe(x), sinusoidal_table(20, 8)[:5].expand(2, 5, 8))
    torch.testing.assert_close(pe(x, offset=3), sinusoidal_table(20, 8)[3:8].expand(2, 5, 8))
    with pytest.raises(ValueError, match="max_len=20"):
        pe(torch.zeros(1, 21, 8))


def test_learned_positions_are_parameters():
    pe = LearnedPositionalEmbedding(8, max_len=10)
    x = torch.zeros(1, 4, 8)
    torch.testing.assert_close(pe(x), pe.embedding.weight[:4][None])
    assert pe.embedding.weight.requires_grad


def test_rope_dot_products_depend_on_the_offset_only():
    # The cos/sin tables are float32 (Apple's MPS has no float64), so equality holds to float32 precision.
    rope = RotaryEmbedding(d_head=16, max_len=64)
    q = torch.randn(1, 1, 1, 16)
    k = torch.randn(1, 1, 1, 16)

    def score(m: int, n: int) -> float:
        return (rope(q, offset=m) * rope(k, offset=n)).sum().item()

    for m, n in [(5, 2), (13, 10), (40, 37)]:
        assert score(m, n) == pytest.approx(score(3, 0), abs=1e-5)
    assert score(0, 0) == pytest.approx((q * k).sum().item(), abs=1e-6)  # position 0: no rotation
    assert abs(score(5, 2) - score(5, 4)) > 1e-2


def test_rope_keeps_vector_lengths_and_rotates_pairs():
    rope = RotaryEmbedding(d_head=4, max_len=8).double()
    x = torch.randn(2, 3, 8, 4, dtype=torch.float64)
    y = rope(x)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
    # position 1, first pair: rotation by 1 radian (omega_0 = 1)
    a, b = x[0, 0, 1, 0], x[0, 0, 1, 1]
    torch.testing.assert_close(y[0, 0, 1, 0], a * math.cos(1) - b * math.sin(1))
    torch.testing.assert_close(y[0, 0, 1, 1], a * math.sin(1) + b * math.cos(1))
