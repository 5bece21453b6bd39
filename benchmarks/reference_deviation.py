"""Largest deviation of transformer_lib from PyTorch's own modules, with copied weights.

Run: python benchmarks/reference_deviation.py
The tests (tests/test_multi_head_attention.py, tests/test_layers.py) assert these within tolerances;
this script prints how far inside the tolerances we are. The weights are copied by
``transformer_lib.torch_reference``, as in the tests.
"""

from __future__ import annotations

import harness  # noqa: F401 -- like every benchmark: this checkout's library first on the path
import torch
from torch import nn

from transformer_lib.attention import causal_mask, combine_masks, padding_mask
from transformer_lib.config import TransformerConfig
from transformer_lib.decoder import DecoderLayer
from transformer_lib.encoder import EncoderLayer
from transformer_lib.models import Transformer
from transformer_lib.multi_head_attention import MultiHeadAttention
from transformer_lib.residual import LayerNorm
from transformer_lib.torch_reference import (
    copy_attention,
    copy_decoder_layer,
    copy_encoder_layer,
    copy_norm,
    key_padding,
    randomize_norms,
    torch_transformer_like,
)

D, H, FF = 64, 8, 128


def max_dev(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


@torch.no_grad()
def attention(dtype: torch.dtype) -> float:
    ours = MultiHeadAttention(D, H).to(dtype).eval()
    theirs = nn.MultiheadAttention(D, H, batch_first=True).to(dtype).eval()
    copy_attention(ours, theirs)
    x, memory = torch.randn(4, 10, D, dtype=dtype), torch.randn(4, 13, D, dtype=dtype)
    pad = key_padding([10, 8, 5, 3], 10)
    worst = 0.0
    out, w = ours(x, x, x, combine_masks(padding_mask((~pad).long(), 0), causal_mask(10)), need_weights=True)
    ref, rw = theirs(x, x, x, key_padding_mask=pad, attn_mask=~causal_mask(10), average_attn_weights=False)
    worst = max(worst, max_dev(out, ref), max_dev(w, rw))
    out, w = ours(x, memory, memory, need_weights=True)
    ref, rw = theirs(x, memory, memory, average_attn_weights=False)
    return max(worst, max_dev(out, ref), max_dev(w, rw))


@torch.no_grad()
def layer_norm(dtype: torch.dtype) -> float:
    ours, theirs = LayerNorm(D).to(dtype), nn.LayerNorm(D).to(dtype)
    randomize_norms(ours)
    copy_norm(ours, theirs)
    x = torch.randn(8, 10, D, dtype=dtype) * 3 + 1
    return max_dev(ours(x), theirs(x))


@torch.no_grad()
def encoder_layer(dtype: torch.dtype, norm_first: bool) -> float:
    ours = EncoderLayer(D, H, FF, dropout=0.0, norm_first=norm_first)
    randomize_norms(ours)
    theirs = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first)
    ours, theirs = ours.to(dtype).eval(), theirs.to(dtype).eval()
    copy_encoder_layer(ours, theirs)
    x = torch.randn(4, 12, D, dtype=dtype)
    return max_dev(ours(x), theirs(x))


@torch.no_grad()
def decoder_layer(dtype: torch.dtype, norm_first: bool) -> float:
    ours = DecoderLayer(D, H, FF, dropout=0.0, norm_first=norm_first)
    randomize_norms(ours)
    theirs = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first)
    ours, theirs = ours.to(dtype).eval(), theirs.to(dtype).eval()
    copy_decoder_layer(ours, theirs)
    y, memory = torch.randn(4, 9, D, dtype=dtype), torch.randn(4, 12, D, dtype=dtype)
    return max_dev(ours(y, memory, causal_mask(9)), theirs(y, memory, tgt_mask=~causal_mask(9)))


@torch.no_grad()
def full_model(dtype: torch.dtype, norm_first: bool) -> float:
    config = TransformerConfig(src_vocab_size=100, tgt_vocab_size=90, d_model=D, n_heads=H, n_encoder_layers=3,
                               n_decoder_layers=3, d_ff=FF, dropout=0.0, norm_first=norm_first, max_len=32)
    ours = Transformer(config)
    randomize_norms(ours)
    ours = ours.to(dtype).eval()
    theirs = torch_transformer_like(ours)
    src, tgt = torch.randint(1, 100, (4, 12)), torch.randint(1, 90, (4, 10))
    hidden = theirs(ours.src_embed(src), ours.tgt_embed(tgt), tgt_mask=~causal_mask(10))
    return max_dev(ours(src, tgt), ours.generator(hidden))


def main() -> None:
    torch.manual_seed(0)
    rows = [("LayerNorm vs nn.LayerNorm", lambda dt: layer_norm(dt)),
            ("MultiHeadAttention vs nn.MultiheadAttention (outputs and weights)", attention)]
    for norm_first, name in ((False, "post-norm"), (True, "pre-norm")):
        rows += [
            (f"EncoderLayer vs nn.TransformerEncoderLayer, {name}", lambda dt, nf=norm_first: encoder_layer(dt, nf)),
            (f"DecoderLayer vs nn.TransformerDecoderLayer, {name}", lambda dt, nf=norm_first: decoder_layer(dt, nf)),
            (f"Transformer vs nn.Transformer (logits), {name}", lambda dt, nf=norm_first: full_model(dt, nf)),
        ]
    print(f"{'reference':70s} {'float32':>10s} {'float64':>10s}")
    for name, fn in rows:
        print(f"{name:70s} {fn(torch.float32):10.2e} {fn(torch.float64):10.2e}")


if __name__ == "__main__":
    main()
