"""Argument checks against a model: a vocabulary of the size the model's config gives it (and one that spells
what the model wrote), a module whose forward takes the arguments or that has an encoder-decoder's interface, a
width the heads divide. The rules are ``validation``'s (its docstring)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import torch

from .validation import check_instance, shorten
from .vocabulary import Vocab

SEQ2SEQ_INTERFACE = ("encode", "new_cache", "decode", "generator")  # decoding.Seq2SeqModel's members


def check_module_call(name: str, module: object, arguments: Sequence[object], what: str) -> None:
    """``module`` is a ``torch.nn.Module`` whose ``forward`` takes ``arguments``: a model of another
    kind (``nn.Linear`` where a seq2seq model is due) is named here, not by Python inside its forward."""
    check_instance(name, module, torch.nn.Module, what)
    try:
        inspect.signature(module.forward).bind(*arguments)
    except TypeError as error:
        raise TypeError(f"{name}: expected {what}, got {type(module).__name__}, whose forward does not take "
                        f"{len(arguments)} arguments ({error})") from None


def check_seq2seq_model(name: str, model: object) -> None:
    """``model`` has what decoding needs of an encoder-decoder (``decoding.Seq2SeqModel``)."""
    for member in SEQ2SEQ_INTERFACE:
        if not hasattr(model, member):
            raise TypeError(f"{name}: expected an encoder-decoder with .{member} (see decoding.Seq2SeqModel), "
                            f"got {type(model).__name__}")


def check_divisible(d_model: int, n_heads: int) -> None:
    if d_model % n_heads != 0:
        raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads}): each head gets "
                         f"d_model / n_heads dimensions, and {d_model} / {n_heads} = {d_model / n_heads:.3g}")


def check_vocab_size(name: str, vocab: object, size: int, owner: str) -> None:
    """A vocabulary (anything with a length) holds exactly ``size`` tokens, as ``owner`` says."""
    if len(vocab) != size:  # type: ignore[arg-type]
        raise ValueError(f"{name}: expected {size} tokens like {owner}, got a vocabulary of {len(vocab)}")  # type: ignore[arg-type]


def model_vocab_size(model: object, side: str) -> int | None:
    """The number of tokens ``model.config`` gives its ``side`` ("src" or "tgt"), or None (no such config)."""
    return getattr(getattr(model, "config", None), f"{side}_vocab_size", None)


def check_model_vocab(name: str, vocab: object, model: object, side: str, extra: int = 0) -> Vocab:
    """``vocab`` is a ``tokenization.Vocab`` of the size the model's config gives its ``side`` ("src" or
    "tgt"), less ``extra`` tokens the model adds (BERT's ``<mask>``): another model's vocabulary would read
    its ids as other words, or index past the embedding."""
    check_instance(name, vocab, Vocab, "a tokenization.Vocab")
    size = model_vocab_size(model, side)
    if size is not None:
        owner = f"the model's config.{side}_vocab_size" + (f" less {extra}" if extra else "")
        check_vocab_size(name, vocab, size - extra, owner)
    return vocab


def check_spells(name: str, vocab: Vocab, ids: Sequence[int], tokens: Sequence[str] | None, what: str) -> None:
    """``vocab`` reads ``ids`` as ``tokens``, as the vocabulary ``what`` was made with did (``tokens`` None:
    the ids need only lie in the vocabulary)."""
    spelled = [vocab.itos[i] if 0 <= i < len(vocab) else None for i in ids]
    if None in spelled or (tokens is not None and spelled != list(tokens)):
        raise ValueError(f"{name}: expected the vocabulary {what} was made with, which reads its ids "
                         f"{shorten(str(list(ids)))} as {shorten(str(tokens or 'tokens'))}, got a vocabulary of "
                         f"{len(vocab)} tokens, which reads them as {shorten(str(spelled))}")
