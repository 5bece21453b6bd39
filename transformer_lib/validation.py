"""Argument checks shared by the public API.

Every check raises ``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind,
wrong value or shape) with a message that names the argument, says what was
expected and what came, so a reader never has to decode an error from deep
inside torch.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor


def check_tensor(name: str, value: object) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    return value


def check_ndim(name: str, x: Tensor, ndim: int, layout: str) -> None:
    check_tensor(name, x)
    if x.dim() != ndim:
        raise ValueError(
            f"{name}: expected a {ndim}-D tensor of shape {layout}, "
            f"got a {x.dim()}-D tensor of shape {tuple(x.shape)}"
        )


def check_features(name: str, x: Tensor, d_model: int, layout: str = "(batch, seq_len, d_model)") -> None:
    """``x`` must be (batch, seq_len, d_model), floating point, with at least one position."""
    check_ndim(name, x, 3, layout)
    if not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name}: expected last dimension d_model={d_model}, got shape {tuple(x.shape)}"
        )
    check_nonempty(name, x)


def check_nonempty(name: str, x: Tensor, dim: int = 1) -> None:
    if x.shape[dim] == 0:
        raise ValueError(
            f"{name}: empty sequence (length 0 in dimension {dim}, shape {tuple(x.shape)}); "
            "expected at least one position"
        )


def check_token_ids(name: str, ids: object, vocab_size: int) -> Tensor:
    """``ids`` must be a 2-D integer tensor (batch, seq_len) with values in [0, vocab_size)."""
    ids = check_tensor(name, ids)
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(
            f"{name}: expected integer token ids (torch.long), got dtype {ids.dtype}"
        )
    check_ndim(name, ids, 2, "(batch, seq_len)")
    check_nonempty(name, ids)
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= vocab_size:
        bad = low if low < 0 else high
        where = tuple(int(i) for i in (ids == bad).nonzero()[0])
        raise ValueError(
            f"{name}: token ids must lie in [0, {vocab_size}) for a vocabulary of "
            f"{vocab_size}, got {bad} at position {where}"
        )
    return ids


def check_mask(name: str, mask: Tensor | None, target_shape: Sequence[int]) -> None:
    """A mask is boolean (True = may attend) and broadcasts to ``target_shape``.

    ``target_shape`` is (batch, heads, queries, keys).
    """
    if mask is None:
        return
    check_tensor(name, mask)
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name}: expected a boolean mask (True = may attend), got dtype {mask.dtype}"
        )
    expected = "(queries, keys), (batch, queries, keys), (batch, 1, queries, keys) or (batch, heads, queries, keys)"
    if not 2 <= mask.dim() <= 4:
        raise ValueError(
            f"{name}: expected a 2-D to 4-D mask shaped like {expected}, "
            f"got shape {tuple(mask.shape)}"
        )
    shape = list(mask.shape)
    if mask.dim() == 3:  # (batch, queries, keys): one mask per sequence, shared by every head
        shape = [shape[0], 1, shape[1], shape[2]]
    shape = [1] * (4 - len(shape)) + shape
    for got, want in zip(shape, target_shape, strict=True):
        if got not in (1, want):
            raise ValueError(
                f"{name}: shape {tuple(mask.shape)} does not broadcast to "
                f"(batch, heads, queries, keys) = {tuple(target_shape)}"
            )


def check_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{name}: expected a positive int, got {value}")
    return value


def check_probability(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a float in [0, 1), got {type(value).__name__}")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name}: expected a probability in [0, 1), got {value}")
    return float(value)


def check_divisible(d_model: int, n_heads: int) -> None:
    if d_model % n_heads != 0:
        raise ValueError(
            f"d_model ({d_model}) must be divisible by n_heads ({n_heads}): each head gets "
            f"d_model / n_heads dimensions, and {d_model} / {n_heads} = {d_model / n_heads:.3g}"
        )


def check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name}: expected one of {list(choices)}, got {value!r}")
    return value  # type: ignore[return-value]
