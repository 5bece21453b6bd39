"""Copy our weights into PyTorch's own modules, so the two can be compared output for output."""

from __future__ import annotations

import torch
from torch import nn

from transformer_lib.decoder import DecoderLayer
from transformer_lib.encoder import EncoderLayer
from transformer_lib.models import Transformer
from transformer_lib.multi_head_attention import MultiHeadAttention
from transformer_lib.residual import LayerNorm


@torch.no_grad()
def copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    # nn.MultiheadAttention stacks W_Q, W_K, W_V in one (3 d_model, d_model) in_proj_weight.
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    theirs.out_proj.weight.copy_(ours.w_o.weight)
    theirs.out_proj.bias.copy_(ours.w_o.bias)


@torch.no_grad()
def copy_norm(ours: LayerNorm, theirs: nn.LayerNorm) -> None:
    theirs.weight.copy_(ours.weight)
    theirs.bias.copy_(ours.bias)


@torch.no_grad()
def copy_feed_forward(ours, theirs) -> None:
    theirs.linear1.weight.copy_(ours.feed_forward.linear1.weight)
    theirs.linear1.bias.copy_(ours.feed_forward.linear1.bias)
    theirs.linear2.weight.copy_(ours.feed_forward.linear2.weight)
    theirs.linear2.bias.copy_(ours.feed_forward.linear2.bias)


def copy_encoder_layer(ours: EncoderLayer, theirs: nn.TransformerEncoderLayer) -> None:
    copy_attention(ours.self_attn, theirs.self_attn)
    copy_feed_forward(ours, theirs)
    copy_norm(ours.attn_residual.norm, theirs.norm1)
    copy_norm(ours.ff_residual.norm, theirs.norm2)


def copy_decoder_layer(ours: DecoderLayer, theirs: nn.TransformerDecoderLayer) -> None:
    copy_attention(ours.self_attn, theirs.self_attn)
    copy_attention(ours.cross_attn, theirs.multihead_attn)
    copy_feed_forward(ours, theirs)
    copy_norm(ours.self_residual.norm, theirs.norm1)
    copy_norm(ours.cross_residual.norm, theirs.norm2)
    copy_norm(ours.ff_residual.norm, theirs.norm3)


def randomize_norms(module: nn.Module) -> None:
    """LayerNorms start as gamma=1, beta=0, which would hide a gain/bias that is not copied."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)


def key_padding(lengths: list[int], length: int) -> torch.Tensor:
    """(B, T) True at padding, PyTorch's convention; ours is its negation."""
    return torch.arange(length)[None, :] >= torch.tensor(lengths)[:, None]


def torch_transformer_like(ours: Transformer) -> nn.Transformer:
    """An ``nn.Transformer`` with our model's shape and a copy of its encoder and decoder weights.

    nn.Transformer has no embeddings or output projection: feed it ``ours.src_embed(src)`` and
    ``ours.tgt_embed(tgt)`` and apply ``ours.generator`` to what it returns.
    """
    c = ours.config
    theirs = nn.Transformer(c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers, c.d_ff, dropout=0.0,
                            activation=c.activation, layer_norm_eps=c.layer_norm_eps, batch_first=True,
                            norm_first=c.norm_first)
    theirs = theirs.to(next(ours.parameters()).dtype)
    for a, b in zip(ours.encoder.layers, theirs.encoder.layers, strict=True):
        copy_encoder_layer(a, b)
    for a, b in zip(ours.decoder.layers, theirs.decoder.layers, strict=True):
        copy_decoder_layer(a, b)
    if c.norm_first:
        copy_norm(ours.encoder.final_norm, theirs.encoder.norm)
        copy_norm(ours.decoder.final_norm, theirs.decoder.norm)
    else:
        # nn.Transformer always ends each stack with a LayerNorm; the paper's post-norm model has none.
        assert ours.encoder.final_norm is None and ours.decoder.final_norm is None
        theirs.encoder.norm = None
        theirs.decoder.norm = None
    return theirs.eval()
