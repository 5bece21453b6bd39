import pytest
import torch
from torch import nn

from transformer_lib.attention import causal_mask, combine_masks, padding_mask
from transformer_lib.multi_head_attention import KVCache, MultiHeadAttention
from transformer_lib.positional_encoding import RotaryEmbedding
from transformer_lib.relative_position import RelativePositions
from transformer_lib.torch_reference import copy_attention, key_padding

D_MODEL, HEADS = 32, 4
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float64: dict(rtol=1e-12, atol=1e-12)}


def pair(dtype):
    ours = MultiHeadAttention(D_MODEL, HEADS).to(dtype).eval()
    theirs = nn.MultiheadAttention(D_MODEL, HEADS, batch_first=True).to(dtype).eval()
    copy_attention(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "kind,masking",
    # a causal mask is for self-attention; cross-attention only masks the source's padding
    [("self", "none"), ("self", "padding"), ("self", "causal"), ("self", "padding+causal"),
     ("cross", "none"), ("cross", "padding")],
)
def test_equals_torch_multihead_attention(dtype, kind, masking):
    ours, theirs = pair(dtype)
    n_q = 6
    n_k = 6 if kind == "self" else 9
    query = torch.randn(3, n_q, D_MODEL, dtype=dtype)
    memory = query if kind == "self" else torch.randn(3, n_k, D_MODEL, dtype=dtype)
    lengths = [n_k, n_k - 2, 3]
    pad = key_padding(lengths, n_k)  # True = padding (PyTorch)
    ids = (~pad).long()  # 1 = token, 0 = padding
    our_mask = {
        "none": lambda: None,
        "padding": lambda: padding_mask(ids, pad_id=0),
        "causal": lambda: causal_mask(n_q),
        "padding+causal": lambda: combine_masks(padding_mask(ids, 0), causal_mask(n_q)),
    }[masking]()
    their_kwargs = {
        "none": {},
        "padding": dict(key_padding_mask=pad),
        "causal": dict(attn_mask=~causal_mask(n_q)),  # PyTorch: True = blocked
        "padding+causal": dict(key_padding_mask=pad, attn_mask=~causal_mask(n_q)),
    }[masking]

    out, weights = ours(query, memory, memory, our_mask, need_weights=True)
    ref_out, ref_weights = theirs(query, memory, memory, need_weights=True, average_attn_weights=False,
                                  **their_kwargs)
    assert weights.shape == (3, HEADS, n_q, n_k)
    torch.testing.assert_close(out, ref_out, **TOL[dtype])
    torch.testing.assert_close(weights, ref_weights, **TOL[dtype])
    # the fast path (no weights) gives the same output
    fast, none = ours(query, memory, memory, our_mask)
    assert none is None
    torch.testing.assert_close(fast, ref_out, **TOL[dtype])


def test_heads_are_the_d_k_slices_of_the_projections():
    mha = MultiHeadAttention(D_MODEL, HEADS).double().eval()
    x = torch.randn(2, 5, D_MODEL, dtype=torch.float64)
    out, weights = mha(x, x, x, need_weights=True)
    d_k = D_MODEL // HEADS
    heads = []
    for i in range(HEADS):
        cols = slice(i * d_k, (i + 1) * d_k)
        q = x @ mha.w_q.weight[cols].T + mha.w_q.bias[cols]
        k = x @ mha.w_k.weight[cols].T + mha.w_k.bias[cols]
        v = x @ mha.w_v.weight[cols].T + mha.w_v.bias[cols]
        w = torch.softmax(q @ k.transpose(-1, -2) / d_k**0.5, dim=-1)
        torch.testing.assert_close(weights[:, i], w)
        heads.append(w @ v)
    torch.testing.assert_close(out, mha.w_o(torch.cat(heads, dim=-1)))


def test_split_and_merge_heads_are_inverse():
    mha = MultiHeadAttention(D_MODEL, HEADS)
    x = torch.randn(2, 5, D_MODEL)
    assert mha.split_heads(x).shape == (2, HEADS, 5, D_MODEL // HEADS)
    assert torch.equal(mha.merge_heads(mha.split_heads(x)), x)


# The ways a layer can know positions, each of which must read a cached step at its true position:
# RoPE rotates each new query and key by the count of tokens already cached; relative positions
# place the new queries after the cached keys. (max_distance 2 < 6 steps: the clipping is met too.)
POSITIONS = {
    "none": lambda: {},
    "rotary": lambda: {"rotary": RotaryEmbedding(D_MODEL // HEADS)},
    "relative": lambda: {"relative": RelativePositions(D_MODEL // HEADS, max_distance=2)},
}


@pytest.mark.parametrize("positions", POSITIONS)
def test_self_attention_cache_gives_the_same_outputs_step_by_step(positions):
    torch.manual_seed(0)
    mha = MultiHeadAttention(D_MODEL, HEADS, **POSITIONS[positions]()).double().eval()
    x = torch.randn(2, 6, D_MODEL, dtype=torch.float64)
    full, _ = mha(x, x, x, causal_mask(6))
    cache = KVCache(grows=True)
    steps = []
    for t in range(6):
        step = x[:, t : t + 1]
        out, _ = mha(step, step, step, causal_mask(1, t + 1), cache=cache)
        steps.append(out)
        assert len(cache) == t + 1
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=1e-12)
    # two tokens at once after the first four: the offset is the cache's length, not the call's count
    cache = KVCache(grows=True)
    first, _ = mha(x[:, :4], x[:, :4], x[:, :4], causal_mask(4), cache=cache)
    rest, _ = mha(x[:, 4:], x[:, 4:], x[:, 4:], causal_mask(2, 6), cache=cache)
    torch.testing.assert_close(torch.cat([first, rest], dim=1), full, rtol=0, atol=1e-12)


def test_cross_attention_cache_projects_memory_once():
    mha = MultiHeadAttention(D_MODEL, HEADS).double().eval()
    memory = torch.randn(2, 9, D_MODEL, dtype=torch.float64)
    query = torch.randn(2, 3, D_MODEL, dtype=torch.float64)
    full, _ = mha(query, memory, memory)
    cache = KVCache(grows=False)
    first, _ = mha(query[:, :1], memory, memory, cache=cache)
    key_before = cache.key
    # later calls reuse the cached projection: even a different "memory" argument is ignored
    rest, _ = mha(query[:, 1:], memory * 0, memory * 0, cache=cache)
    assert cache.key is key_before and len(cache) == 9
    torch.testing.assert_close(torch.cat([first, rest], dim=1), full, rtol=0, atol=1e-12)


def test_cache_update_appends_or_keeps_and_index_select_reorders_rows():
    grows, fixed = KVCache(grows=True), KVCache(grows=False)
    first, second = torch.randn(3, HEADS, 2, 4), torch.randn(3, HEADS, 1, 4)
    grows.update(first, -first)
    k, v = grows.update(second, -second)
    assert torch.equal(k, torch.cat([first, second], dim=2)) and torch.equal(v, -k)
    assert len(grows) == 3 and grows.offset == 3
    fixed.update(first, -first)
    assert fixed.full and len(fixed) == 2 and fixed.offset == 0  # cross-attention: positions never advance
    grows.index_select(torch.tensor([2, 0]))
    assert torch.equal(grows.key, k[[2, 0]]) and torch.equal(grows.value, v[[2, 0]])
