"""The encoder (Vaswani et al. 2017, section 3.1).

"The encoder is composed of a stack of N = 6 identical layers. Each layer has two
sub-layers. The first is a multi-head self-attention mechanism, and the second is
a simple, position-wise fully connected feed-forward network."

The same layer with a causal mask is the block of a decoder-only model (GPT):
``DecoderOnlyTransformer`` reuses it rather than writing it twice.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from torch import Tensor, nn

from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import KVCache, MultiHeadAttention
from .positional_encoding import RotaryEmbedding
from .residual import LayerNorm, Residual
from .validation import check_instance, check_positive_int
from .validation_tensors import check_features, check_finite, module_dtype


class TransformerLayer(nn.Module):
    """What every layer of the book is built from: self-attention and the position-wise feed-forward
    network, each inside a residual connection. The arguments are ``nn.TransformerEncoderLayer``'s (the
    tests copy PyTorch's weights into ours), written once for the encoder's and the decoder's layer.

    A kind of layer names its residual connections (``_add_residuals``; the feed-forward network's is
    ``ff_residual`` in every kind) and may add attention sub-layers
    after self-attention (``_add_attention``: the decoder's cross-attention). The parts are built in the
    order they compute, which is also the order their weights are drawn in."""

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
        self._add_attention(d_model, n_heads, attention_dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, activation)
        self._add_residuals(lambda: Residual(d_model, dropout, norm_first, eps))

    def _add_attention(self, d_model: int, n_heads: int, attention_dropout: float) -> None:
        """Attention sub-layers after self-attention: none unless a kind of layer adds them."""

    def _add_residuals(self, residual: Callable[[], Residual]) -> None:
        """One residual connection per sub-layer, each from ``residual()``, under the names ``forward`` uses."""
        raise NotImplementedError(f"{type(self).__name__}: a layer names its residual connections")

    def stack(self, n_layers: int) -> nn.ModuleList:
        """``n_layers`` deep copies of this layer, each with its own weights: the layers of a stack."""
        check_positive_int("n_layers", n_layers)
        return nn.ModuleList(copy.deepcopy(self) for _ in range(n_layers))

    def final_norm(self) -> LayerNorm | None:
        """The LayerNorm a stack of this layer ends with: one if the layer normalises first (the stack's
        last residual sum is otherwise never normalised), none if it normalises after (the paper's)."""
        return LayerNorm(self.self_attn.d_model, self.ff_residual.norm.eps) if self.norm_first else None


class EncoderLayer(TransformerLayer):
    """Self-attention, then the feed-forward network, each inside a residual connection."""

    def _add_residuals(self, residual: Callable[[], Residual]) -> None:
        self.attn_residual = residual()
        self.ff_residual = residual()

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
        self.layers = layer.stack(n_layers)  # N copies, each with its own weights
        self.final_norm = layer.final_norm()

    def forward(self, x: Tensor, mask: Tensor | None = None, caches: list[KVCache] | None = None) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x, mask, None if caches is None else caches[i])
        return x if self.final_norm is None else self.final_norm(x)
