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
from .relative_position import RelativePositions
from .validation import check_bool, check_instance, check_positive_int, check_probability
from .validation_models import check_divisible
from .validation_tensors import check_features, check_mask, check_ndim, check_row_index, module_dtype


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

    @property
    def offset(self) -> int:
        """The position of the next new token: how many came before it (0 for cross-attention)."""
        return len(self) if self.grows else 0

    @property
    def full(self) -> bool:
        """True once a cross-attention cache holds the encoder's keys: nothing more to project."""
        return not self.grows and self.key is not None

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Store the new keys and values (B, h, T_new, d_k); return all of them, (B, h, T_cached + T_new, d_k)."""
        _check_update(self, k, v)
        if self.grows and self.key is not None:
            k = torch.cat([self.key, k], dim=2)
            v = torch.cat([self.value, v], dim=2)
        self.key, self.value = k, v
        return k, v

    def index_select(self, index: Tensor) -> None:
        """Keep rows ``index`` of the batch, in that order (beam search reorders its beams so)."""
        if self.key is not None:
            check_row_index("index", index, self.key.shape[0])
            self.key = self.key.index_select(0, index)  # (B', h, T, d_k)
            self.value = self.value.index_select(0, index)


def _check_update(cache: KVCache, k: Tensor, v: Tensor) -> None:
    """New keys and values for ``cache``: one shape and dtype, and, for a growing cache, the batch, heads
    and d_k of the keys it holds."""
    check_ndim("k", k, 4, "(batch, n_heads, seq_len, d_k)")
    check_ndim("v", v, 4, "(batch, n_heads, seq_len, d_k)")
    if v.shape[:3] != k.shape[:3] or v.dtype != k.dtype:  # d_v may differ from d_k (narrow_query_key)
        raise ValueError(f"v: expected (batch, n_heads, seq_len) = {tuple(k.shape[:3])} and dtype {k.dtype} "
                         f"like k, got shape {tuple(v.shape)} and dtype {v.dtype}")
    if cache.grows and cache.key is not None:
        wanted = (cache.key.shape[0], cache.key.shape[1], cache.key.shape[3])
        if (k.shape[0], k.shape[1], k.shape[3]) != wanted or k.dtype != cache.key.dtype:
            raise ValueError(f"k: expected (batch, n_heads, d_k) = {wanted} and dtype {cache.key.dtype} like the "
                             f"cached keys, got shape {tuple(k.shape)} and dtype {k.dtype}")
        if v.shape[3] != cache.value.shape[3]:
            raise ValueError(f"v: expected last dimension d_v={cache.value.shape[3]} like the cached values, "
                             f"got shape {tuple(v.shape)}")


class LayerCaches(list):
    """One cache per layer (a model's ``new_cache()``); reordering it reorders every layer's."""

    def index_select(self, index: Tensor) -> None:
        for cache in self:
            cache.index_select(index)


class MultiHeadAttention(nn.Module):
    """h attention heads in parallel, for self-attention (query = key = value) or cross-attention."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        dropout: float = 0.0,
        rotary: RotaryEmbedding | None = None,
        relative: RelativePositions | None = None,
    ) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        check_positive_int("n_heads", n_heads)
        check_divisible(d_model, n_heads)
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        # The size per head of queries and keys: d_k, as the values, unless narrowed (narrow_query_key,
        # the paper's Table 3 row B, where W_Q and W_K project to n_heads * d_qk columns).
        self.d_qk = self.d_k
        self.dropout = check_probability("dropout", dropout)
        self.w_q = nn.Linear(d_model, d_model)  # the h matrices W_Q_i, side by side
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.rotary = rotary
        if relative is not None:  # Shaw et al.'s relative positions, for self-attention
            check_instance("relative", relative, RelativePositions, "a RelativePositions or None")
            if relative.d_k != self.d_k:
                raise ValueError(f"relative: expected d_k={self.d_k} (d_model / n_heads), got {relative.d_k}")
        self.relative = relative
        # Set by capture_attention(): keep the last (B, h, T_q, T_k) weights for inspection.
        self.keep_weights = False
        self.last_weights: Tensor | None = None

    def split_heads(self, x: Tensor, d_head: int | None = None) -> Tensor:
        """(B, T, h * d_head) -> (B, h, T, d_head); d_head is d_k unless given."""
        d_head = self.d_k if d_head is None else d_head
        check_features("x", x, self.n_heads * d_head)
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, d_head).transpose(1, 2)

    def merge_heads(self, x: Tensor) -> Tensor:
        """(B, h, T, d_k) -> (B, T, d_model): the Concat of the formula."""
        self._check_heads(x)
        batch, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(batch, length, self.d_model)

    def _check_heads(self, x: Tensor) -> None:
        """The input of ``merge_heads``: (B, h, T, d_k) with this layer's h and d_k."""
        check_ndim("x", x, 4, "(batch, heads, seq_len, d_k)")
        if x.shape[1] != self.n_heads or x.shape[3] != self.d_k:
            raise ValueError(f"x: expected (batch, {self.n_heads}, seq_len, {self.d_k}), got shape {tuple(x.shape)}")

    def rotate(self, x: Tensor, offset: int) -> Tensor:
        """Rotary positions (RoPE) on queries or keys (B, h, T, d_k), if this layer has them."""
        return x if self.rotary is None else self.rotary(x, offset=offset)

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
        self.check_inputs(query, key, value, cache, need_weights)
        past = 0 if cache is None else cache.offset  # tokens already in the cache
        q = self.rotate(self.split_heads(self.w_q(query), self.d_qk), past)  # (B, h, T_q, d_k)
        if cache is not None and cache.full:  # cross-attention: the encoder's keys, projected once
            k, v = cache.key, cache.value
        else:
            k = self.rotate(self.split_heads(self.w_k(key), self.d_qk), past)  # (B, h, T_k, d_k)
            v = self.split_heads(self.w_v(value))
            if cache is not None:
                k, v = cache.update(k, v)  # (B, h, T_past + T_k, d_k)
        check_mask("mask", mask, (query.shape[0], self.n_heads, query.shape[1], k.shape[2]))
        dropout = self.dropout if self.training else 0.0
        if self.relative is None:
            out, weights = scaled_dot_product_attention(q, k, v, mask, dropout, need_weights or self.keep_weights)
        else:
            out, weights = self.relative(q, k, v, mask, dropout)  # (B, h, T_q, d_k), (B, h, T_q, T_k)
        if self.keep_weights:  # capture_attention() reads them after the forward pass
            self.last_weights = weights.detach()
        return self.w_o(self.merge_heads(out)), (weights if need_weights else None)  # (B, T_q, d_model)

    def check_inputs(
        self, query: Tensor, key: Tensor, value: Tensor, cache: KVCache | None, need_weights: bool
    ) -> None:
        """Shapes and dtypes, named as the caller named them; key and value are not read once cached."""
        dtype = module_dtype(self.w_q.weight)
        check_features("query", query, self.d_model, dtype=dtype)
        check_bool("need_weights", need_weights)
        if cache is not None:
            check_instance("cache", cache, KVCache, "a KVCache or None")
        if cache is not None and cache.full:
            return
        check_features("key", key, self.d_model, dtype=dtype)
        check_features("value", value, self.d_model, dtype=dtype)
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(
                f"value: expected (batch, seq_len) = {tuple(key.shape[:2])} like key, got shape {tuple(value.shape)}"
            )
        if key.shape[0] != query.shape[0]:
            raise ValueError(f"key: expected batch size {query.shape[0]} like query, got shape {tuple(key.shape)}")
