"""The trained models the chapters look at, trained once and then read from a cache.

Chapter 7 trains the book's model in front of the reader. The other chapters need the
same model, so they call :func:`book_model`: on first use it trains the model with the
same seed and recipe as chapter 7, for a fixed number of steps (not a time budget, so
the result does not depend on the speed of the machine), and saves the checkpoint;
afterwards it loads it. :func:`book_rnn` does the same for the RNN baseline of chapter 1.

The checkpoint is written to a temporary file and renamed into place
(``save_checkpoint`` is atomic), so two notebooks that train at once cannot leave a
corrupt file: the last rename wins, and both wrote the same weights. The file name
carries a hash of everything that determines the weights, so a change of recipe never
loads a stale model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import torch

from .checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from .training import BOOK_RECIPE, BookRecipe, train_book_model, train_book_rnn

BOOK_SEED = 0
BOOK_STEPS = 1500  # about 95% exact match on the held-out test split (benchmarks/train_book_model.py)
RNN_STEPS = 1500
CACHE_ENV = "TRANSFORMER_BOOK_CACHE"


def cache_dir() -> Path:
    """``$TRANSFORMER_BOOK_CACHE``, or ``.cache/`` in the repository this library was installed from
    (``pip install -e .``), or ``~/.cache/transformer-computed``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    repository = Path(__file__).resolve().parent.parent
    if (repository / "pyproject.toml").is_file() and os.access(repository, os.W_OK):
        return repository / ".cache"
    return Path.home() / ".cache" / "transformer-computed"


def _fingerprint(kind: str, steps: int, seed: int, recipe: BookRecipe) -> str:
    what = {"kind": kind, "steps": steps, "seed": seed, "recipe": dataclasses.asdict(recipe),
            "torch": torch.__version__.split("+")[0]}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:12]


def _cached(kind: str, steps: int, seed: int, recipe: BookRecipe, progress: bool) -> Checkpoint:
    path = cache_dir() / f"book_{kind}_{_fingerprint(kind, steps, seed, recipe)}.pt"
    if not path.is_file():
        train = train_book_model if kind == "transformer" else train_book_rnn
        model, src_vocab, tgt_vocab, history = train(
            seed, None, steps=steps, recipe=recipe, device="cpu", progress=progress
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        save_checkpoint(path, model, src_vocab, tgt_vocab,
                        extra={"steps": steps, "seed": seed, "final_loss": history.losses[-1]})
    return load_checkpoint(path)


def book_model(progress: bool = False) -> Checkpoint:
    """The book's trained Transformer with its vocabularies (``.model``, ``.src_vocab``, ``.tgt_vocab``)."""
    return _cached("transformer", BOOK_STEPS, BOOK_SEED, BOOK_RECIPE, progress)


def book_rnn(progress: bool = False) -> Checkpoint:
    """The GRU encoder-decoder without attention, trained on the same data (chapter 1)."""
    return _cached("rnn", RNN_STEPS, BOOK_SEED, BOOK_RECIPE, progress)
