"""Batches for teacher forcing: encoded sentence pairs as padded id tensors.

The decoder reads ``<sos>`` + target and learns to predict target + ``<eos>``: the same
sequence shifted one step. Padding is ``Vocab.pad_id`` (0) everywhere.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .validation import (
    check_bool,
    check_device,
    check_id_lists,
    check_instance,
    check_int,
    check_iterable,
    check_pairs,
    check_positive_int,
)
from .vocabulary import Vocab


@dataclass(eq=False)
class Batch:
    """One padded batch for teacher forcing.

    src      (B, S)  source ids
    tgt_in   (B, T)  <sos> y1 ... yn   what the decoder reads
    tgt_out  (B, T)  y1 ... yn <eos>   what it must predict at each position
    Padding is ``pad_id`` (0) everywhere. The model builds its masks from the ids
    (``Transformer.src_mask`` and ``tgt_mask``).
    """

    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    pad_id: int = 0

    def __len__(self) -> int:
        return self.src.shape[0]

    def to(self, device: torch.device | str) -> Batch:
        device = check_device("device", device)
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device), self.pad_id)


def _check_vocab(name: str, vocab: object) -> Vocab:
    return check_instance(name, vocab, Vocab, "a Vocab")


def encode_pairs(
    pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab
) -> list[tuple[list[int], list[int]]]:
    """(source ids, target ids) for each pair, without specials."""
    pairs = check_pairs("pairs", pairs)
    _check_vocab("src_vocab", src_vocab)
    _check_vocab("tgt_vocab", tgt_vocab)
    return [(src_vocab.encode(src), tgt_vocab.encode(tgt)) for src, tgt in pairs]


def pad_sequences(sequences: Sequence[Sequence[int]], pad_id: int = 0) -> Tensor:
    """(B, max_len) LongTensor, each row padded on the right with ``pad_id``."""
    rows = check_id_lists("sequences", sequences)
    check_int("pad_id", pad_id, minimum=0)
    width = max(len(row) for row in rows)
    return torch.tensor([row + [pad_id] * (width - len(row)) for row in rows], dtype=torch.long)  # one copy


def collate(encoded: Sequence[tuple[list[int], list[int]]], tgt_vocab: Vocab) -> Batch:
    """A Batch from encoded pairs: target wrapped as <sos> y / y <eos>, everything padded with 0."""
    _check_vocab("tgt_vocab", tgt_vocab)
    check_iterable("encoded", encoded, "a list of (source ids, target ids) pairs")
    if not encoded:
        raise ValueError("encoded: expected at least one (source ids, target ids) pair, got none")
    for i, pair in enumerate(encoded):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(f"encoded[{i}]: expected a (source ids, target ids) pair, got {pair!r:.60}")
    src = pad_sequences([s for s, _ in encoded], Vocab.pad_id)
    tgt_in = pad_sequences([[tgt_vocab.sos_id, *t] for _, t in encoded], Vocab.pad_id)
    tgt_out = pad_sequences([[*t, tgt_vocab.eos_id] for _, t in encoded], Vocab.pad_id)
    return Batch(src, tgt_in, tgt_out, Vocab.pad_id)


def make_batches(
    pairs: Sequence[tuple[str, str]],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int,
    shuffle: bool = True,
    seed: int = 0,
    by_length: bool = False,
) -> list[Batch]:
    """Every pair, in batches of ``batch_size`` (the last one may be smaller).

    ``shuffle`` permutes the pairs with ``random.Random(seed)``. ``by_length`` puts pairs
    of similar source length together (less padding, faster); with ``shuffle`` the
    batches themselves are then served in random order.
    """
    encoded = encode_pairs(pairs, src_vocab, tgt_vocab)
    check_positive_int("batch_size", batch_size)
    check_bool("shuffle", shuffle)
    check_bool("by_length", by_length)
    seed = check_int("seed", seed)
    rng = random.Random(seed)
    order = list(range(len(encoded)))
    if shuffle:
        rng.shuffle(order)
    if by_length:
        order.sort(key=lambda i: (len(encoded[i][0]), len(encoded[i][1])))  # stable: keeps the shuffle among equals
    chunks = [order[i: i + batch_size] for i in range(0, len(order), batch_size)]
    if by_length and shuffle:
        rng.shuffle(chunks)
    return [collate([encoded[i] for i in chunk], tgt_vocab) for chunk in chunks]
