"""Scaled dot-product attention (Vaswani et al. 2017, section 3.2.1).

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V

Masks follow one convention throughout the library: a boolean tensor that is
**True where a query may attend to a key**. Masks broadcast to
(batch, heads, queries, keys); :func:`causal_mask` and :func:`padding_mask` build
the two kinds the Transformer needs and :func:`combine_masks` joins them.

A query row whose keys are all masked (a source made only of padding, say) attends to
nothing: its weights are all zero and its output is the zero vector, on both paths
(``need_weights=True`` and the fused kernel), never NaN. The inputs must be finite: a
NaN or an infinity in a query, key or value is a ``ValueError`` (a softmax would spread it,
or the fused kernel would hide it behind finite numbers).

:class:`AdditiveAttention` is the attention that came first (Bahdanau et al. 2015): it scores a
query against a key with a small learned network instead of a dot product, and shares the rest
(the masks, :func:`masked_softmax`, the weighted sum of the values).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .validation import check_bool, check_positive_int, check_probability, check_special_id
from .validation_tensors import (
    check_dtype,
    check_finite,
    check_id_dtype,
    check_mask,
    check_ndim,
    check_nonempty,
    check_tensor,
    in_vmap,
    module_dtype,
    shapes_broadcast,
)


def causal_mask(n_queries: int, n_keys: int | None = None, device: torch.device | str | None = None) -> Tensor:
    """(n_queries, n_keys) mask, True where key j is not in the future of query i.

    With more keys than queries (a key/value cache holds the past), the queries are
    the last ``n_queries`` positions: query i sits at position i + n_keys - n_queries.
    """
    n_keys = _check_key_count(n_queries, n_keys)
    offset = n_keys - n_queries
    return torch.ones(n_queries, n_keys, dtype=torch.bool, device=device).tril(diagonal=offset)


def _check_key_count(n_queries: int, n_keys: int | None) -> int:
    """``causal_mask``'s sizes: the number of keys (``n_queries`` when None), at least ``n_queries``."""
    check_positive_int("n_queries", n_queries)
    n_keys = n_queries if n_keys is None else check_positive_int("n_keys", n_keys)
    if n_keys < n_queries:
        raise ValueError(f"n_keys: expected at least n_queries={n_queries} keys, got {n_keys}")
    return n_keys


def padding_mask(ids: Tensor, pad_id: int) -> Tensor:
    """(batch, 1, 1, seq_len) mask, True at real tokens and False at padding.

    The two singleton dimensions broadcast over heads and queries: no query may
    attend to a padding key.
    """
    _check_ids_and_pad(ids, pad_id)
    return (ids != pad_id)[:, None, None, :]


def _check_ids_and_pad(ids: Tensor, pad_id: int) -> None:
    """``padding_mask``'s inputs: (batch, seq_len) integer ids, and a padding id."""
    check_ndim("ids", ids, 2, "(batch, seq_len)")
    check_id_dtype("ids", ids)
    check_special_id("pad_id", pad_id)


def combine_masks(*masks: Tensor | None) -> Tensor | None:
    """Logical AND of the masks that are given (None means "no mask")."""
    result = None
    for i, mask in enumerate(masks):
        if mask is None:
            continue
        check_tensor(f"masks[{i}]", mask)
        if mask.dtype != torch.bool:
            raise TypeError(f"masks[{i}]: expected a boolean mask (True = may attend), got dtype {mask.dtype}")
        if result is not None:
            if not shapes_broadcast(result.shape, mask.shape):
                raise ValueError(
                    f"masks: shapes {tuple(result.shape)} and {tuple(mask.shape)} do not broadcast together"
                )
        result = mask if result is None else result & mask
    return result


def _check_qkv(query: Tensor, key: Tensor, value: Tensor, dtype: torch.dtype | None = None,
               same_width: bool = True) -> None:
    """Shapes, dtypes and finiteness of the three inputs. ``dtype``: the one they must have (a
    module's parameters'); ``same_width=False`` lets queries and keys differ in width (additive attention)."""
    layout = "(batch, heads, seq_len, d_k)"
    for name, x in (("query", query), ("key", key), ("value", value)):
        check_ndim(name, x, 4, layout)
        if not x.is_floating_point():
            raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
        if dtype is not None:
            check_dtype(name, x, dtype)
        elif x.dtype != query.dtype:
            raise TypeError(f"{name}: expected dtype {query.dtype} like query, got {x.dtype}")
        check_nonempty(name, x, dim=0)
        check_nonempty(name, x, dim=2)
        if x.shape[-1] == 0:  # scores / sqrt(0) would be NaN
            raise ValueError(f"{name}: expected a last dimension of at least 1, got shape {tuple(x.shape)}")
        check_finite(name, x)
    if key.shape[:2] != query.shape[:2]:
        raise ValueError(
            f"key: expected (batch, heads) = {tuple(query.shape[:2])} like query, got shape {tuple(key.shape)}"
        )
    if same_width and query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"key: expected the same d_k as query ({query.shape[-1]}), got shape {tuple(key.shape)}"
        )
    if key.shape[:3] != value.shape[:3]:
        raise ValueError(
            f"value: expected (batch, heads, keys) = {tuple(key.shape[:3])} like key, "
            f"got shape {tuple(value.shape)}"
        )


def _attends_to_nothing(mask: Tensor) -> Tensor:
    """(..., T_q, 1): True for the query rows whose keys are all masked."""
    return ~mask.any(dim=-1, keepdim=True)


def masked_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Softmax over the keys (the last dimension), with masked positions set to -inf first.

    A query row with every key masked gets all-zero weights (a softmax over only -inf is NaN).
    Both attention scores, dot-product and additive, become weights here.
    """
    mask = _check_scores_mask(scores, mask)  # None, or broadcasting to the scores (B, h, T_q, T_k)
    if mask is None:
        return scores.softmax(dim=-1)
    scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=-1).masked_fill(_attends_to_nothing(mask), 0.0)


def _check_scores_mask(scores: Tensor, mask: Tensor | None) -> Tensor | None:
    """The inputs of ``masked_softmax``; the mask with a heads dimension if it had none."""
    check_tensor("scores", scores)
    if not scores.is_floating_point() or scores.dim() == 0:
        raise TypeError(f"scores: expected a floating-point tensor (..., keys), got dtype {scores.dtype}")
    if mask is None:
        return None
    check_tensor("mask", mask)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask: expected a boolean mask (True = may attend), got dtype {mask.dtype}")
    if mask.dim() == 3:  # (B, T_q, T_k): shared by every head
        mask = mask[:, None]
    if not shapes_broadcast(mask.shape, scores.shape):
        raise ValueError(f"mask: shape {tuple(mask.shape)} does not broadcast to the scores' "
                         f"{tuple(scores.shape)}")
    return mask


def attention_weights(query: Tensor, key: Tensor, mask: Tensor | None = None) -> Tensor:
    """softmax(Q K^T / sqrt(d_k)), with masked positions set to -inf before the softmax."""
    _check_query_key(query, key)
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, T_q, T_k)
    return masked_softmax(scores, mask)


def _check_query_key(query: Tensor, key: Tensor) -> None:
    """The inputs of ``attention_weights``: floating point, of one dtype and one d_k >= 1."""
    for name, x in (("query", query), ("key", key)):
        check_tensor(name, x)
        if x.dim() < 2 or not x.is_floating_point():
            raise TypeError(f"{name}: expected a floating-point tensor (..., seq_len, d_k), got dtype {x.dtype} "
                            f"and shape {tuple(x.shape)}")
    if key.dtype != query.dtype:
        raise TypeError(f"key: expected dtype {query.dtype} like query, got {key.dtype}")
    if key.shape[-1] != query.shape[-1] or query.shape[-1] == 0:
        raise ValueError(f"key: expected the same d_k >= 1 as query ({query.shape[-1]}), got shape {tuple(key.shape)}")


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    need_weights: bool = True,
) -> tuple[Tensor, Tensor | None]:
    """Attention over (batch, heads, seq_len, d_k) tensors.

    Returns ``(output, weights)``: output is (B, h, T_q, d_v), weights are
    (B, h, T_q, T_k), or None when ``need_weights`` is False. Then the fused kernel
    ``torch.nn.functional.scaled_dot_product_attention`` computes the same output
    without materialising the weights. A fully masked query row gives zero weights and a
    zero output on both paths.
    """
    mask = _check_attention_inputs(query, key, value, mask, dropout_p, need_weights)  # (B, 1 or h, T_q, T_k)

    # fast path: one fused kernel, same result (not under torch.func.vmap, which has no batching rule for it
    # on the CPU and would loop over the map in Python)
    if not need_weights and not in_vmap(query):
        output = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, dropout_p=dropout_p)
        if mask is not None:  # kernels differ on rows with no key (zeros on the CPU, NaN elsewhere): say zeros
            nothing = _attends_to_nothing(mask)  # (B, 1 or h, T_q, 1)
            # On a CPU, asking the small mask first is cheaper than copying the output (and, in
            # training, its gradient) when no row is empty, the usual case; on a GPU, asking would
            # make the CPU wait for the device.
            if output.device.type != "cpu" or bool(nothing.any()):
                output = output.masked_fill(nothing, 0.0)
        return output, None

    weights = attention_weights(query, key, mask)  # (B, h, T_q, T_k)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ value, weights  # (B, h, T_q, d_v)


def _check_attention_inputs(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None, dropout_p: float,
                            need_weights: bool) -> Tensor | None:
    """The inputs of ``scaled_dot_product_attention``; the mask with a heads dimension if it had none."""
    _check_qkv(query, key, value)
    check_probability("dropout_p", dropout_p)
    check_bool("need_weights", need_weights)
    batch, heads, n_queries, _ = query.shape
    check_mask("mask", mask, (batch, heads, n_queries, key.shape[2]))
    return mask[:, None] if mask is not None and mask.dim() == 3 else mask


class AdditiveAttention(nn.Module):
    """Additive attention (Bahdanau, Cho & Bengio 2015): a small feed-forward network scores each
    (query, key) pair,

        score(q, k) = v^T tanh(W_q q + W_k k),

    where ``scaled_dot_product_attention`` scores it with q . k / sqrt(d_k). Queries and keys may
    have different widths (the paper's queries are decoder states, its keys encoder states). Same
    layout, mask convention and result as ``scaled_dot_product_attention``: (batch, heads,
    seq_len, d) inputs, ``(output, weights)`` back, and zero weights for a query with no key.
    """

    def __init__(self, d_query: int, d_key: int, d_attention: int) -> None:
        super().__init__()
        self.d_query = check_positive_int("d_query", d_query)
        self.d_key = check_positive_int("d_key", d_key)
        self.d_attention = check_positive_int("d_attention", d_attention)
        self.w_query = nn.Linear(d_query, d_attention, bias=False)  # W_q (the paper's W_a)
        self.w_key = nn.Linear(d_key, d_attention, bias=False)  # W_k (the paper's U_a)
        self.v = nn.Linear(d_attention, 1, bias=False)  # v^T

    def scores(self, query: Tensor, key: Tensor) -> Tensor:
        """(B, h, T_q, d_query), (B, h, T_k, d_key) -> (B, h, T_q, T_k) scores, before the softmax."""
        _check_qkv(query, key, key, dtype=module_dtype(self.w_query.weight), same_width=False)
        projected_query = self.w_query(query)[..., :, None, :]  # (B, h, T_q, 1, d_a)
        projected_key = self.w_key(key)[..., None, :, :]  # (B, h, 1, T_k, d_a)
        hidden = torch.tanh(projected_query + projected_key)  # (B, h, T_q, T_k, d_a): one small network per pair
        return self.v(hidden).squeeze(-1)  # (B, h, T_q, T_k)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Returns ``(output, weights)``: output (B, h, T_q, d_v), weights (B, h, T_q, T_k)."""
        _check_qkv(query, key, value, dtype=module_dtype(self.w_query.weight), same_width=False)
        if query.shape[-1] != self.d_query:
            raise ValueError(f"query: expected last dimension d_query={self.d_query}, got shape {tuple(query.shape)}")
        if key.shape[-1] != self.d_key:
            raise ValueError(f"key: expected last dimension d_key={self.d_key}, got shape {tuple(key.shape)}")
        batch, heads, n_queries, _ = query.shape
        check_mask("mask", mask, (batch, heads, n_queries, key.shape[2]))
        weights = masked_softmax(self.scores(query, key), mask)  # (B, h, T_q, T_k)
        return weights @ value, weights  # (B, h, T_q, d_v)
