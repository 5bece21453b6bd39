"""Shaw et al.'s relative positions against a direct loop over (i, j), and the default attention unchanged."""

import math

import pytest
import torch

from transformer_lib.attention import causal_mask, scaled_dot_product_attention
from transformer_lib.multi_head_attention import KVCache, MultiHeadAttention
from transformer_lib.relative_position import RelativePositions

D_MODEL, HEADS, K = 12, 3, 2
D_K = D_MODEL // HEADS


def direct(relative: RelativePositions, q, k, v, mask=None):
    """The paper's equations, one (i, j) pair at a time, in float64."""
    batch, heads, n_q, d_k = q.shape
    n_k = k.shape[2]
    out = torch.zeros(batch, heads, n_q, d_k, dtype=q.dtype)
    weights = torch.zeros(batch, heads, n_q, n_k, dtype=q.dtype)
    for b in range(batch):
        for h in range(heads):
            for i in range(n_q):
                position = n_k - n_q + i
                e = torch.full((n_k,), float("-inf"), dtype=q.dtype)
                for j in range(n_k):
                    if mask is None or mask[i, j]:
                        a_k = relative.key_table.weight[max(-K, min(K, j - position)) + K]
                        e[j] = q[b, h, i] @ (k[b, h, j] + a_k) / math.sqrt(d_k)
                alpha = e.softmax(-1)
                weights[b, h, i] = alpha
                for j in range(n_k):
                    a_v = relative.value_table.weight[max(-K, min(K, j - position)) + K]
                    out[b, h, i] += alpha[j] * (v[b, h, j] + a_v)
    return out, weights


@pytest.mark.parametrize("masked", [False, True])
def test_equals_direct_computation(masked):
    torch.manual_seed(0)
    relative = RelativePositions(D_K, K).double()
    q, k, v = (torch.randn(2, HEADS, 7, D_K, dtype=torch.float64) for _ in range(3))
    mask = causal_mask(7) if masked else None
    out, weights = relative(q, k, v, mask)
    ref_out, ref_weights = direct(relative, q, k, v, mask)
    torch.testing.assert_close(weights, ref_weights, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out, ref_out, rtol=1e-12, atol=1e-12)


def test_offsets_are_clipped():
    rows = RelativePositions(D_K, K).offsets(4, 6)  # the 4 queries are positions 2..5
    assert rows.tolist() == [[0, 1, 2, 3, 4, 4], [0, 0, 1, 2, 3, 4], [0, 0, 0, 1, 2, 3], [0, 0, 0, 0, 1, 2]]


def test_in_multi_head_attention_with_a_cache():
    """Step-by-step decoding with a growing cache equals the masked forward pass over the whole sequence."""
    torch.manual_seed(1)
    layer = MultiHeadAttention(D_MODEL, HEADS, relative=RelativePositions(D_K, K)).eval()
    x = torch.randn(2, 6, D_MODEL)
    full, weights = layer(x, x, x, mask=causal_mask(6), need_weights=True)
    cache = KVCache(grows=True)
    steps = [layer(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1], cache=cache)[0] for t in range(6)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-5, atol=1e-6)
    assert weights.shape == (2, HEADS, 6, 6)


def test_positions_matter_unlike_plain_attention():
    """Shuffling the tokens no longer just shuffles the outputs: the layer sees order."""
    torch.manual_seed(2)
    layer = MultiHeadAttention(D_MODEL, HEADS, relative=RelativePositions(D_K, K)).eval()
    x = torch.randn(1, 6, D_MODEL)
    permutation = torch.tensor([3, 0, 5, 1, 4, 2])
    out, _ = layer(x, x, x)
    shuffled, _ = layer(x[:, permutation], x[:, permutation], x[:, permutation])
    assert not torch.allclose(shuffled, out[:, permutation], atol=1e-3)


def test_default_path_bit_identical():
    """Without ``relative`` the layer has the same parameters and computes exactly what it computed before."""
    torch.manual_seed(3)
    layer = MultiHeadAttention(D_MODEL, HEADS).eval()
    assert layer.relative is None
    assert sorted(layer.state_dict()) == sorted(f"w_{n}.{p}" for n in "qkvo" for p in ("weight", "bias"))
    x = torch.randn(2, 5, D_MODEL)
    for need_weights in (False, True):
        out, _ = layer(x, x, x, mask=causal_mask(5), need_weights=need_weights)
        q, k, v = (layer.split_heads(w(x)) for w in (layer.w_q, layer.w_k, layer.w_v))
        heads, _ = scaled_dot_product_attention(q, k, v, causal_mask(5), 0.0, need_weights)
        assert torch.equal(out, layer.w_o(layer.merge_heads(heads)))


def test_bad_input():
    with pytest.raises(TypeError, match="max_distance"):
        RelativePositions(D_K, 2.5)
    with pytest.raises(ValueError, match="d_k"):
        RelativePositions(0, K)
    with pytest.raises(TypeError, match="relative"):
        MultiHeadAttention(D_MODEL, HEADS, relative="shaw")
    with pytest.raises(ValueError, match="relative: expected d_k=4"):
        MultiHeadAttention(D_MODEL, HEADS, relative=RelativePositions(6, K))
    relative = RelativePositions(D_K, K)
    q = torch.randn(1, 1, 3, D_K)
    with pytest.raises(ValueError, match="key: expected at least"):
        relative(q, q[:, :, :2], q[:, :, :2])
    with pytest.raises(ValueError, match="d_k=4"):
        relative(torch.randn(1, 1, 3, 5), torch.randn(1, 1, 3, 5), torch.randn(1, 1, 3, 5))
    with pytest.raises(TypeError, match="query"):
        relative(q.double(), q.double(), q.double())
    with pytest.raises(ValueError, match="mask"):
        relative(q, q, q, mask=torch.ones(4, 4, dtype=torch.bool))
