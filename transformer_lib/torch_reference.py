"""Our weights in PyTorch's own modules, so that the two can be compared output for output.

PyTorch ships the layers this library builds: ``nn.MultiheadAttention``, ``nn.LayerNorm``,
``nn.TransformerEncoderLayer``, ``nn.TransformerDecoderLayer`` and ``nn.Transformer``. Given
the same weights they must compute the same numbers; the tests, the benchmarks and chapters
5 and 6 check that with the copiers here (the only place that knows both layouts).

PyTorch's masks say True where attention is *not* allowed; ours say True where it is.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .decoder import DecoderLayer
from .encoder import EncoderLayer
from .models import Transformer
from .multi_head_attention import MultiHeadAttention
from .residual import LayerNorm


@torch.no_grad()
def copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """W_Q, W_K, W_V and W_O of ``ours`` into ``theirs``."""
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
def _copy_feed_forward(ours: EncoderLayer | DecoderLayer, theirs: nn.Module) -> None:
    # PyTorch's layers hold the feed-forward network's two linear layers themselves.
    theirs.linear1.weight.copy_(ours.feed_forward.linear1.weight)
    theirs.linear1.bias.copy_(ours.feed_forward.linear1.bias)
    theirs.linear2.weight.copy_(ours.feed_forward.linear2.weight)
    theirs.linear2.bias.copy_(ours.feed_forward.linear2.bias)


def copy_encoder_layer(ours: EncoderLayer, theirs: nn.TransformerEncoderLayer) -> None:
    """Self-attention, feed-forward and both norms of ``ours`` into ``theirs``."""
    copy_attention(ours.self_attn, theirs.self_attn)
    _copy_feed_forward(ours, theirs)
    copy_norm(ours.attn_residual.norm, theirs.norm1)
    copy_norm(ours.ff_residual.norm, theirs.norm2)


def copy_decoder_layer(ours: DecoderLayer, theirs: nn.TransformerDecoderLayer) -> None:
    """Self-attention, cross-attention, feed-forward and the three norms of ``ours`` into ``theirs``."""
    copy_attention(ours.self_attn, theirs.self_attn)
    copy_attention(ours.cross_attn, theirs.multihead_attn)
    _copy_feed_forward(ours, theirs)
    copy_norm(ours.self_residual.norm, theirs.norm1)
    copy_norm(ours.cross_residual.norm, theirs.norm2)
    copy_norm(ours.ff_residual.norm, theirs.norm3)


def copy_transformer(ours: Transformer, theirs: nn.Transformer) -> None:
    """Every encoder and decoder layer of ``ours`` into ``theirs``, and the final norms of a pre-norm model.

    ``theirs`` must have the same shape, and no final norms for a post-norm model (nn.Transformer
    always appends one; the paper's post-norm stacks have none): see ``torch_transformer_like``.
    """
    for a, b in zip(ours.encoder.layers, theirs.encoder.layers, strict=True):
        copy_encoder_layer(a, b)
    for a, b in zip(ours.decoder.layers, theirs.decoder.layers, strict=True):
        copy_decoder_layer(a, b)
    for name, a, b in (("encoder", ours.encoder, theirs.encoder), ("decoder", ours.decoder, theirs.decoder)):
        if (a.final_norm is None) != (b.norm is None):
            raise ValueError(f"theirs: {name}.norm must be a LayerNorm exactly when ours has a final norm "
                             f"(pre-norm), got {type(b.norm).__name__} for final_norm={a.final_norm!r}")
        if a.final_norm is not None:
            copy_norm(a.final_norm, b.norm)


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
    if not c.norm_first:
        theirs.encoder.norm = None
        theirs.decoder.norm = None
    copy_transformer(ours, theirs)
    return theirs.eval()


def randomize_norms(module: nn.Module) -> None:
    """Random gains and biases for every ``LayerNorm`` in ``module``: they start as gamma=1, beta=0,
    which would hide a gain or bias that a copier forgot."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)


def key_padding(lengths: list[int], length: int) -> Tensor:
    """(B, T) True at padding, PyTorch's ``key_padding_mask`` convention; ours is its negation."""
    return torch.arange(length)[None, :] >= torch.tensor(lengths)[:, None]
