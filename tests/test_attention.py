import math

import pytest
import torch

from transformer_lib.attention import (
    attention_weights,
    causal_mask,
    combine_masks,
    padding_mask,
    scaled_dot_product_attention,
)
from transformer_lib.multi_head_attention import MultiHeadAttention


def qkv(batch=2, heads=3, n_q=5, n_k=7, d_k=8, dtype=torch.float64):
    return (torch.randn(batch, heads, n_q, d_k, dtype=dtype), torch.randn(batch, heads, n_k, d_k, dtype=dtype),
            torch.randn(batch, heads, n_k, d_k, dtype=dtype))


def test_weights_follow_the_formula():
    q, k, v = qkv()
    out, weights = scaled_dot_product_attention(q, k, v)
    expected = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
    torch.testing.assert_close(weights, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(out, expected @ v, rtol=0, atol=1e-12)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 5, dtype=torch.float64))


def test_causal_mask_is_lower_triangular_and_offset_for_a_cache():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    # two new queries after three cached keys: they sit at positions 3 and 4
    assert causal_mask(2, 5).tolist() == [[True, True, True, True, False], [True, True, True, True, True]]
    with pytest.raises(ValueError, match="n_keys"):
        causal_mask(4, 2)


def test_masked_keys_get_exactly_zero_weight():
    q, k, v = qkv(n_q=6, n_k=6)
    ids = torch.tensor([[5, 4, 3, 2, 1, 1], [5, 4, 3, 0, 0, 0]])
    mask = combine_masks(padding_mask(ids, pad_id=0), causal_mask(6))
    _, weights = scaled_dot_product_attention(q, k, v, mask)
    assert mask.shape == (2, 1, 6, 6)
    assert torch.all(weights[~mask.expand_as(weights)] == 0)
    assert torch.all(weights[1, :, :, 3:] == 0)  # padding never attended
    assert torch.all(weights.triu(diagonal=1) == 0)  # the future never attended
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 6, dtype=torch.float64))


def test_a_mask_blocks_the_influence_of_masked_values():
    q, k, v = qkv(n_q=4, n_k=4)
    mask = causal_mask(4)
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    v2 = v.clone()
    v2[:, :, 3] += 100.0  # change only the last value
    k2 = k.clone()
    k2[:, :, 3] -= 100.0
    out2, _ = scaled_dot_product_attention(q, k2, v2, mask)
    torch.testing.assert_close(out[:, :, :3], out2[:, :, :3], rtol=0, atol=0)
    assert not torch.allclose(out[:, :, 3], out2[:, :, 3])


@pytest.mark.parametrize("dtype,atol", [(torch.float32, 1e-6), (torch.float64, 1e-12)])
@pytest.mark.parametrize("masking", ["none", "causal", "padding", "combined", "per-batch 3-D"])
def test_fast_path_equals_explicit_path(dtype, atol, masking):
    q, k, v = qkv(n_q=6, n_k=6, dtype=dtype)
    ids = torch.tensor([[1, 2, 3, 4, 5, 6], [1, 2, 3, 0, 0, 0]])
    mask = {
        "none": None,
        "causal": causal_mask(6),
        "padding": padding_mask(ids, 0),
        "combined": combine_masks(padding_mask(ids, 0), causal_mask(6)),
        "per-batch 3-D": combine_masks(padding_mask(ids, 0), causal_mask(6))[:, 0],
    }[masking]
    slow, weights = scaled_dot_product_attention(q, k, v, mask, need_weights=True)
    fast, none = scaled_dot_product_attention(q, k, v, mask, need_weights=False)
    assert weights is not None and none is None
    torch.testing.assert_close(fast, slow, rtol=0, atol=atol)


def test_attention_weights_scale_by_sqrt_dk():
    q = torch.ones(1, 1, 1, 4, dtype=torch.float64)
    k = torch.tensor([[[[1.0, 1, 1, 1], [0, 0, 0, 0]]]], dtype=torch.float64)
    # scores: 4 / sqrt(4) = 2 and 0
    expected = torch.softmax(torch.tensor([2.0, 0.0], dtype=torch.float64), dim=0)
    torch.testing.assert_close(attention_weights(q, k)[0, 0, 0], expected)


def test_self_attention_without_positions_is_permutation_equivariant():
    mha = MultiHeadAttention(d_model=16, n_heads=4).double().eval()
    x = torch.randn(2, 7, 16, dtype=torch.float64)
    perm = torch.randperm(7)
    assert not torch.equal(perm, torch.arange(7))
    out, _ = mha(x, x, x)
    out_perm, _ = mha(x[:, perm], x[:, perm], x[:, perm])
    torch.testing.assert_close(out_perm, out[:, perm], rtol=0, atol=1e-12)
    # with a causal mask the order matters, which is the point of positions and masks
    mask = causal_mask(7)
    masked, _ = mha(x, x, x, mask)
    masked_perm, _ = mha(x[:, perm], x[:, perm], x[:, perm], mask)
    assert not torch.allclose(masked_perm, masked[:, perm])
