"""The encoder (Vaswani et al. 2017, section 3.1).

"The encoder is composed of a stack of N = 6 identical layers. Each layer has two
sub-layers. The first is a multi-head self-attention mechanism, and the second is
a simple, position-wise fully connected feed-forward network."

The same layer with a causal mask is the block of a decoder-only model (GPT):
``DecoderOnlyTransformer`` reuses it rather than writing it twice.
"""

from __future__ import annotations

import copy

from torch import Tensor, nn

from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import KVCache, MultiHeadAttention
from .positional_encoding import RotaryEmbedding
from .residual import LayerNorm, Residual
from .validation import check_instance, check_positive_int
from .validation_tensors import check_features, check_finite, module_dtype


class EncoderLayer(nn.Module):
    """Self-attention, then the feed-forward network, each inside a residual connection."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        attention_dropout: float = 0.0,
        eps: float = 1e-5,
        rotary: RotaryEmbedding | None = None,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, attention_dropout, rotary)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, activation)
        self.attn_residual = Residual(d_model, dropout, norm_first, eps)
        self.ff_residual = Residual(d_model, dropout, norm_first, eps)

    def forward(self, x: Tensor, mask: Tensor | None = None, cache: KVCache | None = None) -> Tensor:
        self.check_inputs(x)
        x = self.attn_residual(x, lambda y: self.self_attn(y, y, y, mask, cache)[0])  # (B, T, d_model)
        return self.ff_residual(x, self.feed_forward)

    def check_inputs(self, x: Tensor) -> None:
        """The layer's input, named ``x`` (attention would call a NaN in it "query"); attention checks
        the mask and the cache itself."""
        check_features("x", x, self.self_attn.d_model, dtype=module_dtype(self.self_attn.w_q.weight))
        check_finite("x", x)


class Encoder(nn.Module):
    """N copies of one layer. A pre-norm stack ends with a LayerNorm: its last residual
    sum is otherwise never normalised. A post-norm stack needs none (the paper has none)."""

    def __init__(self, layer: EncoderLayer, n_layers: int) -> None:
        super().__init__()
        check_instance("layer", layer, EncoderLayer, "an EncoderLayer")
        check_positive_int("n_layers", n_layers)
        self.layers = nn.ModuleList(copy.deepcopy(layer) for _ in range(n_layers))
        d_model = layer.self_attn.d_model
        self.final_norm = LayerNorm(d_model, layer.attn_residual.norm.eps) if layer.norm_first else None

    def forward(self, x: Tensor, mask: Tensor | None = None, caches: list[KVCache] | None = None) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x, mask, None if caches is None else caches[i])
        return x if self.final_norm is None else self.final_norm(x)
