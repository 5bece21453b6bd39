"""The decoder (Vaswani et al. 2017, section 3.1).

"In addition to the two sub-layers in each encoder layer, the decoder inserts a
third sub-layer, which performs multi-head attention over the output of the
encoder stack. [...] We also modify the self-attention sub-layer in the decoder
stack to prevent positions from attending to subsequent positions."
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from torch import Tensor, nn

from .encoder import TransformerLayer
from .multi_head_attention import KVCache, LayerCaches, MultiHeadAttention
from .residual import Residual
from .validation import check_instance
from .validation_tensors import check_features, check_finite, check_mask, check_tensor, module_dtype


@dataclass
class DecoderLayerCache:
    """What one decoder layer keeps between decoding steps."""

    self_attn: KVCache = field(default_factory=lambda: KVCache(grows=True))  # grows by one token a step
    cross_attn: KVCache = field(default_factory=lambda: KVCache(grows=False))  # the encoder output, once

    def index_select(self, index: Tensor) -> None:
        """Keep rows ``index`` of the batch in both caches (beam search reorders its beams so)."""
        self.self_attn.index_select(index)
        self.cross_attn.index_select(index)


def check_memory(memory: Tensor, x: Tensor, cross_attn: MultiHeadAttention) -> None:
    """The encoder output, checked under the name the caller gave it (cross-attention would say ``key``)."""
    check_tensor("x", x)
    check_instance("cross_attn", cross_attn, MultiHeadAttention, "a MultiHeadAttention")
    dtype = module_dtype(cross_attn.w_k.weight)
    check_features("memory", memory, cross_attn.d_model, "(batch, src_len, d_model)", dtype)
    if memory.shape[0] != x.shape[0]:
        raise ValueError(f"memory: expected batch size {x.shape[0]} like x (the decoder input), "
                         f"got shape {tuple(memory.shape)}")
    check_finite("memory", memory)  # named here: attention would call a NaN in it "key"


class DecoderLayer(TransformerLayer):
    """Masked self-attention, cross-attention over the encoder output, then the feed-forward network."""

    def _add_attention(self, d_model: int, n_heads: int, attention_dropout: float) -> None:
        self.cross_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)  # positions live in memory

    def _add_residuals(self, residual: Callable[[], Residual]) -> None:
        self.self_residual = residual()
        self.cross_residual = residual()
        self.ff_residual = residual()

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                cache: DecoderLayerCache | None = None) -> Tensor:
        self.check_inputs(x, memory, tgt_mask, memory_mask, cache)
        self_cache = None if cache is None else cache.self_attn
        cross_cache = None if cache is None else cache.cross_attn
        x = self.self_residual(x, lambda y: self.self_attn(y, y, y, tgt_mask, self_cache)[0])
        # queries from the decoder, keys and values from the encoder output
        x = self.cross_residual(x, lambda y: self.cross_attn(y, memory, memory, memory_mask, cross_cache)[0])
        return self.ff_residual(x, self.feed_forward)  # (B, T_tgt, d_model)

    def check_inputs(self, x: Tensor, memory: Tensor, tgt_mask: Tensor | None, memory_mask: Tensor | None,
                     cache: DecoderLayerCache | None) -> None:
        """The inputs of ``forward``, named as its caller named them: attention would call both masks
        "mask", a NaN in ``x`` "query" and ``memory`` "key"."""
        check_features("x", x, self.self_attn.d_model, dtype=module_dtype(self.self_attn.w_q.weight))
        check_finite("x", x)
        check_memory(memory, x, self.cross_attn)
        if cache is not None:
            check_instance("cache", cache, DecoderLayerCache, "a DecoderLayerCache or None")
        batch, length, heads = x.shape[0], x.shape[1], self.self_attn.n_heads
        past = len(cache.self_attn) if cache is not None else 0
        check_mask("tgt_mask", tgt_mask, (batch, heads, length, past + length))
        check_mask("memory_mask", memory_mask, (batch, heads, length, memory.shape[1]))


class Decoder(nn.Module):
    """N copies of one decoder layer; a final LayerNorm for a pre-norm stack, as in ``Encoder``."""

    def __init__(self, layer: DecoderLayer, n_layers: int) -> None:
        super().__init__()
        check_instance("layer", layer, DecoderLayer, "a DecoderLayer")
        self.layers = layer.stack(n_layers)  # N copies, each with its own weights
        self.final_norm = layer.final_norm()

    def new_cache(self) -> LayerCaches:
        return LayerCaches(DecoderLayerCache() for _ in self.layers)

    def forward(self, x: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                caches: list[DecoderLayerCache] | None = None) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, tgt_mask, memory_mask, None if caches is None else caches[i])
        return x if self.final_norm is None else self.final_norm(x)
