"""Bad tensors: id dtypes, float dtypes, shapes, empty batches, NaN and infinity, fully masked rows.

Every case checks the exception type exactly (a subclass raised from inside torch would not do)
and that the message names the argument the caller passed. Shapes and dtypes are also drawn by
hypothesis (derandomized, no database: see conftest.py).
"""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformer_lib.attention import attention_weights, causal_mask, padding_mask, scaled_dot_product_attention
from transformer_lib.capture import capture_attention, keep_attention_weights
from transformer_lib.config import TransformerConfig
from transformer_lib.decoder import DecoderLayer
from transformer_lib.embeddings import TokenEmbedding
from transformer_lib.encoder import EncoderLayer
from transformer_lib.feed_forward import PositionwiseFeedForward
from transformer_lib.models import DecoderOnlyTransformer, EncoderOnlyTransformer, Transformer
from transformer_lib.multi_head_attention import MultiHeadAttention
from transformer_lib.positional_encoding import RotaryEmbedding, SinusoidalPositionalEncoding
from transformer_lib.residual import LayerNorm
from transformer_lib.rnn import LSTM, VanillaRNN
from transformer_lib.training import label_smoothed_cross_entropy
from transformer_lib.validation_tensors import check_finite, shapes_broadcast

from .bad_input import raises

CONFIG = TransformerConfig(src_vocab_size=30, tgt_vocab_size=25, d_model=16, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=12)
MODEL = Transformer(CONFIG).eval()
MHA = MultiHeadAttention(16, 2)
X = torch.randn(2, 5, 16)
SRC = torch.randint(1, 30, (2, 6))
TGT = torch.randint(1, 25, (2, 4))


# ----------------------------------------------------------------------------- integer id dtypes

REFUSED_ID_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.float16, torch.float32, torch.float64, torch.bool]
ID_CALLERS = {
    "Transformer src_ids": (lambda ids: MODEL(ids, TGT), "src_ids"),
    "Transformer tgt_ids": (lambda ids: MODEL(SRC, ids), "tgt_ids"),
    "TokenEmbedding ids": (lambda ids: TokenEmbedding(30, 8)(ids), "ids"),
    "decoder-only ids": (lambda ids: DecoderOnlyTransformer(CONFIG)(ids), "ids"),
    "encoder-only ids": (lambda ids: EncoderOnlyTransformer(CONFIG)(ids), "ids"),
    "padding_mask ids": (lambda ids: padding_mask(ids, 0), "ids"),
    "loss target": (lambda ids: label_smoothed_cross_entropy(torch.randn(*ids.shape, 30), ids), "target"),
}


@pytest.mark.parametrize("dtype", REFUSED_ID_DTYPES, ids=str)
@pytest.mark.parametrize("caller", list(ID_CALLERS))
def test_token_ids_of_other_dtypes_are_a_type_error(caller, dtype):
    call, name = ID_CALLERS[caller]
    ids = torch.randint(1, 20, (2, 4)).to(dtype)
    message = raises(TypeError, lambda: call(ids), name)
    assert str(dtype) in message and ".long()" in message


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=str)
def test_int64_and_int32_ids_are_accepted_and_agree(dtype):
    torch.testing.assert_close(MODEL(SRC.to(dtype), TGT.to(dtype)), MODEL(SRC, TGT), rtol=0, atol=0)


# ----------------------------------------------------------------------------- float dtypes

FLOAT64_CALLERS = {
    "MultiHeadAttention query": (lambda x: MHA(x, X, X), "query"),
    "MultiHeadAttention key": (lambda x: MHA(X, x, X), "key"),
    "EncoderLayer x": (lambda x: EncoderLayer(16, 2, 32, dropout=0.0)(x), "x"),
    "DecoderLayer x": (lambda x: DecoderLayer(16, 2, 32, dropout=0.0)(x, X), "x"),
    "DecoderLayer memory": (lambda x: DecoderLayer(16, 2, 32, dropout=0.0)(X, x), "memory"),
    "feed-forward x": (lambda x: PositionwiseFeedForward(16, 32)(x), "x"),
    "LayerNorm x": (lambda x: LayerNorm(16)(x), "x"),
    "VanillaRNN x": (lambda x: VanillaRNN(16, 8)(x), "x"),
    "LSTM x": (lambda x: LSTM(16, 8)(x), "x"),
}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("caller", list(FLOAT64_CALLERS))
def test_a_float_input_of_another_dtype_than_the_module_is_a_type_error(caller, dtype):
    call, name = FLOAT64_CALLERS[caller]
    message = raises(TypeError, lambda: call(X.to(dtype)), name)
    assert "torch.float32" in message and str(dtype) in message


def test_a_float64_module_takes_float64_input():
    mha = MultiHeadAttention(16, 2).double()
    out, _ = mha(X.double(), X.double(), X.double())
    assert out.dtype == torch.float64
    raises(TypeError, lambda: mha(X, X, X), "query")


def test_autocast_lets_the_module_cast_its_inputs():
    with torch.no_grad():
        reference = MODEL(SRC, TGT)  # float32
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = MODEL(SRC, TGT)
    assert logits.dtype == torch.bfloat16  # autocast did run the matrix products in bfloat16
    # bfloat16 keeps 8 bits of mantissa (eps = 2**-8); rounded at every layer, the logits may be off by a
    # few eps of their scale (a logit near 0 has no relative precision of its own), no more.
    bfloat16_atol = 4 * 2**-8 * reference.abs().max().item()
    torch.testing.assert_close(logits.float(), reference, rtol=1.6e-2, atol=bfloat16_atol)


# ----------------------------------------------------------------------------- shapes


@given(
    batch=st.integers(1, 3), heads=st.integers(1, 3), n_q=st.integers(1, 4), n_k=st.integers(1, 4),
    d_q=st.integers(1, 6), d_k=st.integers(1, 6), key_batch=st.integers(1, 3), key_heads=st.integers(1, 3),
)
def test_attention_on_mismatched_query_and_key_names_key(batch, heads, n_q, n_k, d_q, d_k, key_batch, key_heads):
    query = torch.randn(batch, heads, n_q, d_q)
    key = torch.randn(key_batch, key_heads, n_k, d_k)
    value = torch.randn(key_batch, key_heads, n_k, 3)
    if (batch, heads, d_q) == (key_batch, key_heads, d_k):
        out, weights = scaled_dot_product_attention(query, key, value)
        assert out.shape == (batch, heads, n_q, 3) and weights.shape == (batch, heads, n_q, n_k)
    else:
        raises(ValueError, lambda: scaled_dot_product_attention(query, key, value), "key")


@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=5))
def test_multi_head_attention_names_a_query_of_any_wrong_shape(shape):
    query = torch.randn(tuple(shape))  # never valid: the last dimension is at most 4, d_model is 16
    raises(ValueError, lambda: MHA(query, X[:, :, :], X), "query")


@pytest.mark.parametrize("caller, name", [
    (lambda: MODEL(SRC[:0], TGT[:0]), "src_ids"),
    (lambda: MODEL.decode(TGT[:0], MODEL.encode(SRC)[:0], SRC[:0]), "tgt_ids"),
    (lambda: MHA(X[:0], X[:0], X[:0]), "query"),
    (lambda: scaled_dot_product_attention(*[torch.randn(0, 2, 3, 4)] * 3), "query"),
    (lambda: TokenEmbedding(5, 4)(torch.zeros(0, 3, dtype=torch.long)), "ids"),
    (lambda: VanillaRNN(4, 4)(torch.randn(0, 3, 4)), "x"),
    (lambda: EncoderLayer(16, 2, 32)(X[:0]), "x"),
], ids=["model", "decode", "mha", "sdpa", "embedding", "rnn", "encoder layer"])
def test_an_empty_batch_is_a_value_error_naming_the_argument(caller, name):
    assert "empty batch" in raises(ValueError, caller, name)


def test_memory_is_named_memory_not_key():
    memory = MODEL.encode(SRC)
    raises(ValueError, lambda: MODEL.decode(TGT, memory[..., :8], SRC), "memory")
    raises(ValueError, lambda: MODEL.decode(TGT, memory[:1], SRC), "src_ids")
    raises(ValueError, lambda: DecoderLayer(16, 2, 32)(X, memory[:1]), "memory")
    raises(ValueError, lambda: MODEL.decode(TGT, memory.masked_fill(memory > 0, math.nan), SRC), "memory")


# ----------------------------------------------------------------------------- NaN and infinity

NON_FINITE = [math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("value", NON_FINITE, ids=str)
@pytest.mark.parametrize("where", ["query", "key", "value"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_non_finite_attention_inputs_are_refused_on_both_paths(value, where, need_weights):
    q, k, v = (torch.randn(1, 2, 3, 4) for _ in range(3))
    tensors = {"query": q, "key": k, "value": v}
    tensors[where][0, 1, 2, 3] = value
    message = raises(ValueError, lambda: scaled_dot_product_attention(q, k, v, need_weights=need_weights), where)
    assert "(0, 1, 2, 3)" in message


@pytest.mark.parametrize("value", NON_FINITE, ids=str)
@pytest.mark.parametrize("need_weights", [True, False])
def test_non_finite_query_to_multi_head_attention_is_refused(value, need_weights):
    query = X.clone()
    query[1, 2, 3] = value
    with pytest.raises(ValueError, match="expected finite values"):
        MHA(query, X, X, need_weights=need_weights)


def test_finite_values_whose_sum_overflows_are_accepted_and_a_bad_value_among_them_is_found():
    # check_finite first sums the tensor (a NaN or an infinity makes the sum so); a sum that
    # overflows from finite values alone must fall back to the element-wise test, not refuse.
    huge = torch.full((2, 3, 4), 3e38)
    assert not torch.isfinite(huge.sum())
    check_finite("x", huge)
    check_finite("logits", huge, allow_minus_inf=True)
    huge[1, 2, 0] = -math.inf
    check_finite("logits", huge, allow_minus_inf=True)
    for value in NON_FINITE:
        huge[1, 2, 0] = value
        with pytest.raises(ValueError, match=r"x: expected finite values, got .* at position \(1, 2, 0\)"):
            check_finite("x", huge)
    huge[1, 2, 0] = math.nan
    with pytest.raises(ValueError, match="expected finite values or -inf"):
        check_finite("logits", huge, allow_minus_inf=True)


# ----------------------------------------------------------------------------- fully masked rows


@given(
    batch=st.integers(1, 2), heads=st.integers(1, 2), n_q=st.integers(1, 4), n_k=st.integers(1, 4),
    seed=st.integers(0, 2**16), dead_row=st.integers(0, 3),
)
def test_both_attention_paths_give_zeros_for_a_query_row_that_sees_no_key(batch, heads, n_q, n_k, seed, dead_row):
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(batch, heads, n, 4, generator=generator) for n in (n_q, n_k, n_k))
    mask = torch.rand(batch, 1, n_q, n_k, generator=generator) > 0.3
    mask[:, :, min(dead_row, n_q - 1)] = False  # at least one row attends to nothing
    slow, weights = scaled_dot_product_attention(q, k, v, mask, need_weights=True)
    fast, _ = scaled_dot_product_attention(q, k, v, mask, need_weights=False)
    dead = ~mask.any(dim=-1)  # (B, 1, T_q)
    assert torch.isfinite(slow).all() and torch.isfinite(fast).all() and torch.isfinite(weights).all()
    torch.testing.assert_close(fast, slow, rtol=1e-5, atol=1e-6)
    assert (slow[dead.expand(batch, heads, n_q)] == 0).all()
    assert (weights[dead.expand(batch, heads, n_q)] == 0).all()
    live = weights.sum(-1)[~dead.expand(batch, heads, n_q)]
    torch.testing.assert_close(live, torch.ones_like(live))
    assert (attention_weights(q, k, mask) == weights).all()


@pytest.mark.parametrize("need_weights", [True, False])
def test_multi_head_attention_paths_agree_on_fully_masked_rows(need_weights):
    mask = causal_mask(5).clone()
    mask[2] = False
    out, _ = MHA(X, X, X, mask, need_weights=need_weights)
    reference, _ = MHA(X, X, X, mask, need_weights=not need_weights)
    torch.testing.assert_close(out, reference, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out[:, 2], MHA.w_o.bias.expand(2, 16))  # zero attention output, then W_O's bias


def test_an_all_padding_source_gives_zero_maps_and_finite_logits():
    src = torch.tensor([[0, 0, 0, 0], [5, 6, 7, 0]])
    maps = capture_attention(MODEL, src, TGT)
    logits = MODEL(src, TGT)
    assert torch.isfinite(logits).all()
    for weights in maps.encoder_self + maps.cross + maps.decoder_self:
        assert torch.isfinite(weights).all()
    assert (maps.encoder_self[0][0] == 0).all() and (maps.cross[0][0] == 0).all()
    torch.testing.assert_close(maps.cross[0][1].sum(-1), torch.ones(2, 4))
    with keep_attention_weights(MODEL):  # the explicit path (weights kept) gives the same logits
        torch.testing.assert_close(MODEL(src, TGT), logits, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- positional tables in the model's dtype


def _reference_table(max_len: int, d_model: int) -> torch.Tensor:
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (i / d_model)
            table[pos, i], table[pos, i + 1] = math.sin(angle), math.cos(angle)
    return table


def test_a_float64_model_has_the_exact_float64_positional_table():
    model = Transformer(CONFIG).double()
    table = model.src_embed.position.table
    assert table.dtype == torch.float64
    torch.testing.assert_close(table, _reference_table(12, 16), rtol=0, atol=1e-12)
    assert (model.float().src_embed.position.table == _reference_table(12, 16).float()).all()


def test_the_table_follows_the_default_dtype():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        table = SinusoidalPositionalEncoding(16, 12).table
    finally:
        torch.set_default_dtype(previous)
    torch.testing.assert_close(table, _reference_table(12, 16), rtol=0, atol=1e-12)


def test_rotary_tables_follow_the_module_dtype():
    rope = RotaryEmbedding(4, 10).double()
    angles = torch.arange(10, dtype=torch.float64)[:, None] / 10000 ** (torch.tensor([0.0, 2.0]) / 4)
    torch.testing.assert_close(rope.cos, torch.cos(angles), rtol=0, atol=1e-12)
    torch.testing.assert_close(rope.sin, torch.sin(angles), rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- label smoothing


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.5])
def test_minus_inf_logits_at_padding_positions_give_no_nan(smoothing):
    logits = torch.randn(2, 3, 6)
    target = torch.tensor([[1, 2, 0], [3, 0, 0]])
    logits[0, 2] = -math.inf  # a padding position, every class at -inf
    logits[1, 1, 4] = -math.inf  # a padding position, one class at -inf
    loss = label_smoothed_cross_entropy(logits, target, smoothing=smoothing)
    clean = logits.clone()
    clean[0, 2] = 0.0
    clean[1, 1, 4] = 0.0
    expected = torch.nn.functional.cross_entropy(
        clean.view(-1, 6), target.view(-1), ignore_index=0, label_smoothing=smoothing
    )
    torch.testing.assert_close(loss, expected)


def test_a_minus_inf_logit_of_another_class_gives_the_plain_loss_without_smoothing():
    logits = torch.randn(4, 6)
    logits[:, 5] = -math.inf  # a class the model never predicts (a banned token)
    target = torch.tensor([1, 2, 3, 4])
    loss = label_smoothed_cross_entropy(logits, target, smoothing=0.0, pad_id=None)
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(logits, target))


@given(st.lists(st.integers(1, 3), max_size=4), st.lists(st.integers(1, 3), max_size=4))
def test_shapes_broadcast_agrees_with_torch(a, b):
    # the masks' check (without torch.broadcast_shapes's import of sympy) says what torch says
    try:
        torch.broadcast_shapes(a, b)
        broadcasts = True
    except RuntimeError:
        broadcasts = False
    assert shapes_broadcast(a, b) is broadcasts
