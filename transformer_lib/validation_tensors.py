"""Argument checks of tensors: their type, number of dimensions, dtype, size and values (token ids in
range, finite features, boolean masks that broadcast). The rules are ``validation``'s (its docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest

import torch
from torch import Tensor

# The index dtypes torch.nn.Embedding and Tensor.gather take.
ID_DTYPES = (torch.int64, torch.int32)


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


def check_nonempty(name: str, x: Tensor, dim: int = 1) -> None:
    if x.shape[dim] == 0:
        what = "empty batch" if dim == 0 else "empty sequence"
        raise ValueError(f"{name}: {what} (length 0 in dimension {dim}, shape {tuple(x.shape)}); "
                         f"expected at least one {'row' if dim == 0 else 'position'}")


def check_dtype(name: str, x: Tensor, dtype: torch.dtype, owner: str = "the module's parameters") -> None:
    if x.dtype != dtype:
        raise TypeError(f"{name}: expected dtype {dtype} like {owner}, got {x.dtype}; "
                        f"convert the input (x.to({dtype})) or the module (.to({x.dtype}))")


def module_dtype(parameter: Tensor) -> torch.dtype | None:
    """The dtype a module's floating-point input must have: its parameters' dtype, or None (any)
    under ``torch.autocast``, which casts inputs and weights itself."""
    return None if torch.is_autocast_enabled(parameter.device.type) else parameter.dtype


def in_vmap(x: Tensor) -> bool:
    """Whether ``x`` is a value inside ``torch.func.vmap`` (a batched tensor has no concrete values to test)."""
    return torch._C._functorch.is_functorch_wrapped_tensor(x)  # no public spelling of this test (torch 2.x)


def check_finite(name: str, x: Tensor, allow_minus_inf: bool = False) -> None:
    """No NaN and no infinity: either would spread through a softmax without an error.
    ``allow_minus_inf``: -inf is accepted (a logit that excludes its token).

    Every layer checks its input, so the common case must be cheap: a NaN or an infinity makes
    the sum NaN or infinite, so a finite sum (one pass, no tensor as large as ``x``) proves the
    tensor finite. Only a sum that is not finite (a bad value, or finite values so large that the
    sum overflows) pays for the element-wise test that decides, and finds the position.

    Under ``torch.func.vmap`` (``seed_batch``: several seeds' models in one pass) values are not
    concrete and no test can branch on them: the inputs were checked before the map, so this passes."""
    if in_vmap(x) or bool(torch.isfinite(x.detach().sum())):
        return
    finite = torch.isfinite(x) | (x == float("-inf")) if allow_minus_inf else torch.isfinite(x)
    if not bool(finite.all()):
        where = tuple(int(i) for i in (~finite).nonzero()[0])
        expected = "finite values or -inf" if allow_minus_inf else "finite values"
        raise ValueError(f"{name}: expected {expected}, got {x[where].item()} at position {where}")


def check_features(
    name: str,
    x: Tensor,
    d_model: int,
    layout: str = "(batch, seq_len, d_model)",
    dtype: torch.dtype | None = None,
    width_name: str = "d_model",
) -> None:
    """``x`` must be (batch, seq_len, d_model), floating point (of ``dtype`` if given), with at
    least one row and one position."""
    check_ndim(name, x, 3, layout)
    if not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    if dtype is not None:
        check_dtype(name, x, dtype)
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name}: expected last dimension {width_name}={d_model}, got shape {tuple(x.shape)}"
        )
    check_nonempty(name, x, dim=0)
    check_nonempty(name, x)


def check_vectors(name: str, x: object, size: int, dtype: torch.dtype | None = None) -> Tensor:
    """``x`` is a floating-point tensor (..., size) (of ``dtype`` if given): a position-wise layer's input."""
    x = check_tensor(name, x)
    if not x.is_floating_point():
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {x.dtype}")
    if dtype is not None:
        check_dtype(name, x, dtype)
    if x.dim() == 0 or x.shape[-1] != size:
        raise ValueError(f"{name}: expected a tensor (..., {size}), got shape {tuple(x.shape)}")
    return x


def check_id_dtype(name: str, ids: Tensor) -> None:
    if ids.dtype not in ID_DTYPES:
        raise TypeError(
            f"{name}: expected integer token ids (torch.long), got dtype {ids.dtype}; "
            "convert with .long() (torch.int32 is accepted too)"
        )


def check_row_index(name: str, index: object, size: int | None = None) -> Tensor:
    """Rows to keep, in order (beam search's reordering): a 1-D tensor of ids in [0, ``size``)."""
    index = check_tensor(name, index)
    check_id_dtype(name, index)
    check_ndim(name, index, 1, "(rows,)")
    if index.numel() and (int(index.min()) < 0 or (size is not None and int(index.max()) >= size)):
        raise ValueError(f"{name}: expected row numbers in [0, {size}), got {index.tolist()!r:.60}")
    return index


def check_in_range(name: str, x: Tensor, size: int | None, what: str, context: str = "") -> None:
    """Every value of ``x`` (a non-empty tensor of numbers) lies in [0, ``size``) (None: is >= 0); ``what``
    names the values ("token ids"), ``context`` what bounds them (" for a vocabulary of 12"). Under
    ``torch.func.vmap`` it passes, as ``check_finite`` does: the values were checked before the map."""
    if in_vmap(x):
        return
    low, high = x.min().item(), x.max().item()
    if low < 0 or (size is not None and high >= size):
        bad = low if low < 0 else high
        where = tuple(int(i) for i in (x == bad).nonzero()[0])
        span = f"[0, {size})" if size is not None else ">= 0"
        raise ValueError(f"{name}: {what} must lie in {span}{context}, got {bad} at position {where}")


def check_token_ids(name: str, ids: object, vocab_size: int | None, vocab_name: str = "a vocabulary") -> Tensor:
    """``ids`` must be a 2-D integer tensor (batch, seq_len), at least 1 x 1, with values in [0, vocab_size)
    (None: an unknown size, ids >= 0)."""
    ids = check_tensor(name, ids)
    check_id_dtype(name, ids)
    check_ndim(name, ids, 2, "(batch, seq_len)")
    check_nonempty(name, ids, dim=0)
    check_nonempty(name, ids)
    context = "" if vocab_size is None else f" for {vocab_name} of {vocab_size}"
    check_in_range(name, ids, vocab_size, "token ids", context)
    return ids


def shapes_broadcast(*shapes: Sequence[int]) -> bool:
    """Whether the shapes broadcast together (NumPy's rule), as ``torch.broadcast_shapes`` checks, without the
    import of sympy that its first call costs."""
    padded = zip_longest(*(tuple(shape)[::-1] for shape in shapes), fillvalue=1)
    return all(len(set(sizes) - {1}) <= 1 for sizes in padded)


def check_mask(name: str, mask: Tensor | None, target_shape: Sequence[int]) -> None:
    """A mask is boolean (True = may attend) and broadcasts to ``target_shape`` (batch, heads, queries, keys)."""
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


def check_attention_mask(name: str, mask: object, ids: Tensor) -> Tensor | None:
    """Hugging Face's ``attention_mask``: (B, T) like ``ids``, 1/True at real tokens and 0/False at padding
    (bool or integer); returned as a bool tensor. None stays None."""
    if mask is None:
        return None
    mask = check_tensor(name, mask)
    if mask.dtype != torch.bool and mask.dtype not in ID_DTYPES and mask.dtype not in (torch.int8, torch.uint8):
        raise TypeError(f"{name}: expected a bool or integer tensor (1 = real token, 0 = padding), "
                        f"got dtype {mask.dtype}")
    if mask.shape != ids.shape:
        raise ValueError(f"{name}: expected shape {tuple(ids.shape)} like the ids, got {tuple(mask.shape)}")
    odd = mask[(mask != 0) & (mask != 1)] if mask.dtype != torch.bool else mask[:0]
    if odd.numel():
        raise ValueError(f"{name}: expected 0 (padding) or 1 (a real token), got {int(odd[0])}")
    return mask.bool()
