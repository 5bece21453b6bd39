"""Multi-head attention (Vaswani et al. 2017, section 3.2.2).

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O
    head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i)

The h projections of size d_model -> d_k are stored side by side in one
d_model -> d_model linear layer each for W_Q, W_K and W_V; splitting the result
into h slices of d_k = d_model / h columns gives the heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .attention import scaled_dot_product_attention
from .positional_encoding import RotaryEmbedding
from .validation import (
    check_bool,
    check_divisible,
    check_features,
    check_mask,
    check_ndim,
    check_positive_int,
    check_probability,
    module_dtype,
)


@dataclass
class KVCache:
    """Keys and values already computed, so that decoding step t projects one token, not t.

    ``grows=True`` (self-attention in a decoder): each call appends the new keys and values.
    ``grows=False`` (cross-attention): the encoder output never changes, so the keys and
    values are computed on the first call and reused.
    """

    grows: bool = True
    key: Tensor | None = None  # (B, h, T_cached, d_k)
    value: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.key is None else self.key.shape[2]


class MultiHeadAttention(nn.Module):
    """h attention heads in parallel, for self-attention (query = key = value) or cross-attention."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        dropout: float = 0.0,
        rotary: RotaryEmbedding | None = None,
    ) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("n_heads", n_heads)
        check_divisible(d_model, n_heads)
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.dropout = check_probability("dropout", dropout)
        self.w_q = nn.Linear(d_model, d_model)  # the h matrices W_Q_i, side by side
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.rotary = rotary
        # Set by capture_attention(): keep the last (B, h, T_q, T_k) weights for inspection.
        self.keep_weights = False
        self.last_weights: Tensor | None = None

    def split_heads(self, x: Tensor) -> Tensor:
        """(B, T, d_model) -> (B, h, T, d_k)"""
        check_features("x", x, self.d_model)
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.d_k).transpose(1, 2)

    def merge_heads(self, x: Tensor) -> Tensor:
        """(B, h, T, d_k) -> (B, T, d_model): the Concat of the formula."""
        check_ndim("x", x, 4, "(batch, heads, seq_len, d_k)")
        if x.shape[1] != self.n_heads or x.shape[3] != self.d_k:
            raise ValueError(f"x: expected (batch, {self.n_heads}, seq_len, {self.d_k}), got shape {tuple(x.shape)}")
        batch, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(batch, length, self.d_model)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        cache: KVCache | None = None,
        need_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Returns (output (B, T_q, d_model), weights (B, h, T_q, T_k) or None).

        ``mask`` is True where a query may attend to a key, broadcastable to
        (B, h, T_q, T_k), where T_k counts the cached keys too.
        """
        dtype = module_dtype(self.w_q.weight)
        check_features("query", query, self.d_model, dtype=dtype)
        reuse = cache is not None and not cache.grows and cache.key is not None
        if not reuse:
            check_features("key", key, self.d_model, dtype=dtype)
            check_features("value", value, self.d_model, dtype=dtype)
            if key.shape[:2] != value.shape[:2]:
                raise ValueError(
                    f"value: expected (batch, seq_len) = {tuple(key.shape[:2])} like key, "
                    f"got shape {tuple(value.shape)}"
                )
            if key.shape[0] != query.shape[0]:
                raise ValueError(
                    f"key: expected batch size {query.shape[0]} like query, got shape {tuple(key.shape)}"
                )

        past = len(cache) if cache is not None and cache.grows else 0
        q = self.split_heads(self.w_q(query))  # (B, h, T_q, d_k)
        if self.rotary is not None:
            q = self.rotary(q, offset=past)
        if reuse:
            k, v = cache.key, cache.value
        else:
            k = self.split_heads(self.w_k(key))  # (B, h, T_k, d_k)
            v = self.split_heads(self.w_v(value))
            if self.rotary is not None:
                k = self.rotary(k, offset=past)
            if cache is not None:
                if cache.grows and cache.key is not None:
                    k = torch.cat([cache.key, k], dim=2)  # (B, h, T_past + T_new, d_k)
                    v = torch.cat([cache.value, v], dim=2)
                cache.key, cache.value = k, v

        check_mask("mask", mask, (query.shape[0], self.n_heads, query.shape[1], k.shape[2]))
        check_bool("need_weights", need_weights)
        want_weights = need_weights or self.keep_weights
        out, weights = scaled_dot_product_attention(
            q, k, v, mask, dropout_p=self.dropout if self.training else 0.0, need_weights=want_weights
        )
        if self.keep_weights:
            self.last_weights = weights.detach()
        return self.w_o(self.merge_heads(out)), (weights if need_weights else None)
