"""Relative position representations (Shaw, Uszkoreit & Vaswani 2018).

Instead of adding a position to each token, every (query i, key j) pair gets two learned vectors
that depend only on the clipped offset j - i: one added to the key, one to the value,

    e_ij = q_i . (k_j + a^K_ij) / sqrt(d_k)
    z_i  = sum_j softmax_j(e_ij) (v_j + a^V_ij)
    a^K_ij = w^K[clip(j - i, -k, k)],   a^V_ij = w^V[clip(j - i, -k, k)]

so 2k + 1 vectors of size d_k per table, shared by the heads of a layer. Offsets beyond k share the
vector of offset +-k: the paper's observation that precise positions matter only nearby.
``MultiHeadAttention(..., relative=RelativePositions(d_k, k))`` uses it in place of plain
scaled dot-product attention.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import _check_qkv, masked_softmax
from .validation import check_device, check_positive_int, check_probability
from .validation_tensors import check_mask


class RelativePositions(nn.Module):
    """The tables w^K and w^V of Shaw et al. and the attention that uses them."""

    def __init__(self, d_k: int, max_distance: int) -> None:
        super().__init__()
        self.d_k = check_positive_int("d_k", d_k)
        self.max_distance = check_positive_int("max_distance", max_distance)
        self.key_table = nn.Embedding(2 * max_distance + 1, d_k)  # w^K: offsets -k .. k
        self.value_table = nn.Embedding(2 * max_distance + 1, d_k)  # w^V

    def offsets(self, n_queries: int, n_keys: int, device: torch.device | str | None = None) -> Tensor:
        """(n_queries, n_keys) table rows: clip(j - i, -k, k) + k. With more keys than queries (a key/value
        cache), the queries are the last n_queries positions, as in ``causal_mask``."""
        check_positive_int("n_queries", n_queries)
        check_positive_int("n_keys", n_keys)
        device = None if device is None else check_device("device", device)
        query_positions = torch.arange(n_keys - n_queries, n_keys, device=device)[:, None]  # (T_q, 1)
        offset = torch.arange(n_keys, device=device)[None, :] - query_positions  # (T_q, T_k): j - i
        return offset.clamp(-self.max_distance, self.max_distance) + self.max_distance

    def scores(self, query: Tensor, key: Tensor) -> Tensor:
        """e_ij = q_i . (k_j + a^K_ij) / sqrt(d_k): (B, h, T_q, d_k), (B, h, T_k, d_k) -> (B, h, T_q, T_k)."""
        self._check(query, key, key)
        a_key = self.key_table(self.offsets(query.shape[2], key.shape[2], query.device))  # (T_q, T_k, d_k)
        scores = query @ key.transpose(-2, -1) + torch.einsum("bhqd,qkd->bhqk", query, a_key)
        return scores / math.sqrt(self.d_k)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None,
                dropout_p: float = 0.0) -> tuple[Tensor, Tensor]:
        """(B, h, T_q, d_k), (B, h, T_k, d_k) x 2 -> output (B, h, T_q, d_k), weights (B, h, T_q, T_k)."""
        self._check(query, key, value)
        check_mask("mask", mask, (query.shape[0], query.shape[1], query.shape[2], key.shape[2]))
        check_probability("dropout_p", dropout_p)
        weights = masked_softmax(self.scores(query, key), mask)  # (B, h, T_q, T_k)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        a_value = self.value_table(self.offsets(query.shape[2], key.shape[2], query.device))  # (T_q, T_k, d_k)
        output = weights @ value + torch.einsum("bhqk,qkd->bhqd", weights, a_value)  # (B, h, T_q, d_k)
        return output, weights

    def _check(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        _check_qkv(query, key, value, dtype=self.key_table.weight.dtype)
        if query.shape[-1] != self.d_k or value.shape[-1] != self.d_k:
            raise ValueError(f"query: expected d_k={self.d_k} for query and value, got shapes "
                             f"{tuple(query.shape)} and {tuple(value.shape)}")
        if key.shape[2] < query.shape[2]:
            raise ValueError(f"key: expected at least as many keys as the {query.shape[2]} queries, got {key.shape[2]}")
