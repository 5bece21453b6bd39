import pytest
import torch
from torch import nn

from transformer_lib.attention import causal_mask, combine_masks, padding_mask
from transformer_lib.config import TransformerConfig
from transformer_lib.decoder import DecoderLayer
from transformer_lib.encoder import EncoderLayer
from transformer_lib.feed_forward import PositionwiseFeedForward
from transformer_lib.models import Transformer
from transformer_lib.residual import LayerNorm, Residual, layer_norm
from transformer_lib.torch_reference import (
    copy_decoder_layer,
    copy_encoder_layer,
    copy_norm,
    copy_transformer,
    key_padding,
    randomize_norms,
    torch_transformer_like,
)

D_MODEL, HEADS, D_FF = 32, 4, 64
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-10)}


def test_layer_norm_equals_torch_layer_norm_and_the_written_out_formula():
    ours = LayerNorm(D_MODEL).double()
    randomize_norms(ours)
    theirs = nn.LayerNorm(D_MODEL).double()
    copy_norm(ours, theirs)
    x = torch.randn(3, 5, D_MODEL, dtype=torch.float64) * 4 + 2
    torch.testing.assert_close(ours(x), theirs(x), rtol=0, atol=1e-12)
    torch.testing.assert_close(layer_norm(x, ours.weight, ours.bias), theirs(x), rtol=0, atol=1e-12)
    assert ours.eps == theirs.eps
    # the Annotated Transformer's variant (unbiased std, eps outside the root) is measurably different
    variant = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5) * ours.weight + ours.bias
    assert (variant - theirs(x)).abs().max() > 1e-3


def test_layer_norm_normalises_each_position():
    x = torch.randn(4, 6, D_MODEL, dtype=torch.float64) * 10 + 3
    y = LayerNorm(D_MODEL).double()(x)
    torch.testing.assert_close(y.mean(-1), torch.zeros(4, 6, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(y.var(-1, unbiased=False), torch.ones(4, 6, dtype=torch.float64), rtol=0, atol=1e-4)


def test_residual_placements():
    x = torch.randn(2, 3, D_MODEL)
    double = lambda y: 2 * y  # noqa: E731
    post = Residual(D_MODEL, dropout=0.0, norm_first=False)
    pre = Residual(D_MODEL, dropout=0.0, norm_first=True)
    torch.testing.assert_close(post(x, double), post.norm(x + 2 * x))
    torch.testing.assert_close(pre(x, double), x + 2 * pre.norm(x))


def test_feed_forward_acts_on_each_position_alone():
    ffn = PositionwiseFeedForward(D_MODEL, D_FF).double()
    x = torch.randn(2, 5, D_MODEL, dtype=torch.float64)
    out = ffn(x)
    for t in range(5):
        torch.testing.assert_close(out[:, t], ffn(x[:, t : t + 1])[:, 0])
    expected = torch.relu(x @ ffn.linear1.weight.T + ffn.linear1.bias) @ ffn.linear2.weight.T + ffn.linear2.bias
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_equals_torch(dtype, norm_first, activation):
    ours = EncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, activation=activation, norm_first=norm_first)
    randomize_norms(ours)
    theirs = nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, activation=activation,
                                        batch_first=True, norm_first=norm_first)
    ours, theirs = ours.to(dtype).eval(), theirs.to(dtype).eval()
    copy_encoder_layer(ours, theirs)
    x = torch.randn(3, 7, D_MODEL, dtype=dtype)
    pad = key_padding([7, 5, 2], 7)
    out = ours(x, padding_mask((~pad).long(), 0))
    ref = theirs(x, src_key_padding_mask=pad)
    real = ~pad  # outputs at padding positions are never used
    torch.testing.assert_close(out[real], ref[real], **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_decoder_layer_equals_torch(dtype, norm_first):
    ours = DecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, norm_first=norm_first)
    randomize_norms(ours)
    theirs = nn.TransformerDecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first)
    ours, theirs = ours.to(dtype).eval(), theirs.to(dtype).eval()
    copy_decoder_layer(ours, theirs)
    y = torch.randn(3, 6, D_MODEL, dtype=dtype)
    memory = torch.randn(3, 8, D_MODEL, dtype=dtype)
    tgt_pad, src_pad = key_padding([6, 4, 3], 6), key_padding([8, 8, 5], 8)
    tgt_mask = combine_masks(padding_mask((~tgt_pad).long(), 0), causal_mask(6))
    out = ours(y, memory, tgt_mask, padding_mask((~src_pad).long(), 0))
    ref = theirs(y, memory, tgt_mask=~causal_mask(6), tgt_key_padding_mask=tgt_pad,
                 memory_key_padding_mask=src_pad)
    torch.testing.assert_close(out, ref, **TOL[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_full_model_equals_torch_transformer(dtype, norm_first):
    config = TransformerConfig(src_vocab_size=50, tgt_vocab_size=40, d_model=D_MODEL, n_heads=HEADS,
                               n_encoder_layers=2, n_decoder_layers=3, d_ff=D_FF, dropout=0.0,
                               norm_first=norm_first, max_len=32)
    ours = Transformer(config)
    randomize_norms(ours)
    ours = ours.to(dtype).eval()
    theirs = torch_transformer_like(ours)

    src = torch.randint(1, 50, (3, 9))
    src[1, 6:] = 0
    src[2, 4:] = 0
    tgt = torch.randint(1, 40, (3, 7))
    tgt[2, 5:] = 0
    with torch.no_grad():
        logits = ours(src, tgt)
        hidden = theirs(ours.src_embed(src), ours.tgt_embed(tgt), tgt_mask=~causal_mask(7),
                        src_key_padding_mask=src == 0, tgt_key_padding_mask=tgt == 0,
                        memory_key_padding_mask=src == 0)
        ref = ours.generator(hidden)
    torch.testing.assert_close(logits, ref, **TOL[dtype])


def test_copy_transformer_refuses_final_norms_that_do_not_match():
    config = TransformerConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=D_MODEL, n_heads=HEADS,
                               n_encoder_layers=1, n_decoder_layers=1, d_ff=D_FF, dropout=0.0, max_len=16)
    theirs = nn.Transformer(D_MODEL, HEADS, 1, 1, D_FF, dropout=0.0, batch_first=True)  # final norms always
    with pytest.raises(ValueError, match="theirs: encoder.norm must be a LayerNorm exactly when ours has"):
        copy_transformer(Transformer(config), theirs)  # post-norm: ours has none
    theirs.encoder.norm = theirs.decoder.norm = None
    copy_transformer(Transformer(config), theirs)
