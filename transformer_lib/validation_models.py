"""Argument checks against a model: a vocabulary of the size the model's config gives it, a module whose
forward takes the arguments, a width the heads divide. The rules are ``validation``'s (its docstring)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch

from .validation import check_instance


def check_module_call(name: str, module: object, arguments: Sequence[object], what: str) -> None:
    """``module`` is a ``torch.nn.Module`` whose ``forward`` takes ``arguments``: a model of another
    kind (``nn.Linear`` where a seq2seq model is due) is named here, not by Python inside its forward."""
    check_instance(name, module, torch.nn.Module, what)
    try:
        inspect.signature(module.forward).bind(*arguments)
    except TypeError as error:
        raise TypeError(f"{name}: expected {what}, got {type(module).__name__}, whose forward does not take "
                        f"{len(arguments)} arguments ({error})") from None



def check_divisible(d_model: int, n_heads: int) -> None:
    if d_model % n_heads != 0:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads}): each head gets "
                         f"d_model / n_heads dimensions, and {d_model} / {n_heads} = {d_model / n_heads:.3g}")



def check_vocab_size(name: str, vocab: object, size: int, owner: str) -> None:
    """A vocabulary (anything with a length) holds exactly ``size`` tokens, as ``owner`` says."""
    if len(vocab) != size:  # type: ignore[arg-type]
        raise ValueError(f"{name}: expected {size} tokens like {owner}, got a vocabulary of {len(vocab)}")  # type: ignore[arg-type]
