"""The word-level vocabulary: the ids a model reads, and the four specials every sequence may hold.

Ids 0-3 are the specials ``<pad>`` (0, the model's ``pad_id``), ``<sos>``, ``<eos>`` and ``<unk>``.
``tokenization`` brings typed text to the corpus's form and splits words into sub-words (BPE);
``batching`` turns encoded sentences into padded tensors.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .validation import (
    check_bool,
    check_int,
    check_iterable,
    check_positive_int,
    check_sentence,
    check_special_id,
    check_token_list,
    check_word,
)
from .validation_tensors import check_id_dtype

PAD, SOS, EOS, UNK = "<pad>", "<sos>", "<eos>", "<unk>"
SPECIALS = (PAD, SOS, EOS, UNK)


@dataclass(frozen=True)
class SpecialIds:
    """The target side's special ids that decoding needs: it starts from ``sos``, stops at ``eos``
    (None: never early, every row gets ``max_len`` tokens) and fills finished rows with ``pad``.

    They are the target vocabulary's (``tgt_vocab.special_ids``), the same for every call; how many
    tokens to generate (``max_len``) is not: it is an argument of each decoding call, since it follows
    the source's length (``decoding.default_max_len``)."""

    sos: int
    eos: int | None
    pad: int = 0

    def __post_init__(self) -> None:
        check_special_id("sos", self.sos)
        check_special_id("eos", self.eos, optional=True)
        check_special_id("pad", self.pad)

    def replace(self, **changes: object) -> SpecialIds:
        return dataclasses.replace(self, **changes)


class Vocab:
    """Word-level vocabulary: ``itos[id]`` is a token, ``stoi[token]`` its id.

    Tokens are the whitespace-separated words of a sentence. Ids 0, 1, 2, 3 are
    ``<pad>``, ``<sos>``, ``<eos>``, ``<unk>``; a word the vocabulary does not hold
    is encoded as ``unk_id`` (:meth:`encode_with_unknowns` says which words those were).

    The specials are never *typed*: ``"<pad>"`` or ``"<eos>"`` written in a sentence is text,
    not a control token, so it is encoded as ``unk_id`` and reported as unknown like any
    other word outside the vocabulary. Only batching puts ``<sos>``, ``<eos>`` and ``<pad>``
    ids into a sequence. A token must be encodable: a non-empty str without whitespace
    (``str.split`` would cut it), not a special, not repeated.
    """

    pad_id, sos_id, eos_id, unk_id = 0, 1, 2, 3

    @property
    def special_ids(self) -> SpecialIds:
        """``<sos>``, ``<eos>`` and ``<pad>``: what decoding into this vocabulary needs."""
        return SpecialIds(self.sos_id, self.eos_id, self.pad_id)

    def __init__(self, tokens: Iterable[str]) -> None:
        """``tokens``: the ordinary tokens, in id order (a list, not a str); the specials are put first."""
        if isinstance(tokens, str):
            check_token_list("tokens", tokens)  # refused: a str would become one token per character
        tokens = list(check_iterable("tokens", tokens, "a list of tokens (str)"))
        itos = list(SPECIALS)
        for i, token in enumerate(tokens):
            check_word(f"tokens[{i}]", token)
            if token in SPECIALS:
                raise ValueError(f"tokens[{i}]: {token!r} is a special token, added by Vocab itself")
            itos.append(token)
        if len(set(itos)) != len(itos):
            duplicates = sorted(t for t, n in Counter(itos).items() if n > 1)
            raise ValueError(f"tokens: expected distinct tokens, got duplicates {duplicates}")
        self.itos: list[str] = itos
        self.stoi: dict[str, int] = {token: i for i, token in enumerate(itos)}

    @classmethod
    def build(cls, sentences: Iterable[str], min_freq: int = 1) -> Vocab:
        """The vocabulary of every word seen at least ``min_freq`` times.

        Most frequent words get the smallest ids; ties go in alphabetical order, so
        the same sentences always give the same ids.
        """
        if isinstance(sentences, str):
            raise TypeError("sentences: expected a list of sentences, got a single str (wrap it: [sentence])")
        check_iterable("sentences", sentences, "a list of sentences (str)")
        check_positive_int("min_freq", min_freq)
        counts: Counter[str] = Counter()
        for i, sentence in enumerate(sentences):
            counts.update(check_sentence(f"sentences[{i}]", sentence).split())
        for special in SPECIALS:
            if special in counts:
                raise ValueError(f"sentences: contain the special token {special!r} as a word")
        kept = [t for t, n in counts.items() if n >= min_freq]
        return cls(sorted(kept, key=lambda t: (-counts[t], t)))

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {self.itos[4:10]}...)"

    def encode_with_unknowns(self, sentence: str) -> tuple[list[int], list[str]]:
        """(ids, the words that were not in the vocabulary, in order).

        A special typed as text (``"<pad>"``) is one of those words: it becomes ``unk_id``.
        """
        ids, unknown = [], []
        for word in check_sentence("sentence", sentence).split():
            i = self.unk_id if word in SPECIALS else self.stoi.get(word, self.unk_id)
            if i == self.unk_id:
                unknown.append(word)
            ids.append(i)
        return ids, unknown

    def encode(self, sentence: str) -> list[int]:
        """Word ids, without ``<sos>``/``<eos>`` (batching adds those); unknown words -> ``unk_id``."""
        return self.encode_with_unknowns(sentence)[0]

    def decode(self, ids: Sequence[int] | Tensor, stop_at_eos: bool = True) -> str:
        """Words for ``ids``: ``<pad>`` and ``<sos>`` are dropped, decoding stops at ``<eos>``
        (or, with ``stop_at_eos=False``, drops it too). ``<unk>`` stays visible."""
        check_bool("stop_at_eos", stop_at_eos)
        if isinstance(ids, Tensor):
            if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
                check_id_dtype("ids", ids)
            if ids.dim() != 1:
                raise ValueError(f"ids: expected a 1-D tensor, got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        if isinstance(ids, str) or not isinstance(ids, Sequence):
            raise TypeError(f"ids: expected a sequence of ints, got {type(ids).__name__}")
        words = []
        for position, i in enumerate(ids):
            i = check_int(f"ids[{position}]", i)
            if not 0 <= i < len(self):
                raise ValueError(f"ids[{position}]: expected an id in [0, {len(self)}), got {i}")
            if i == self.eos_id:
                if stop_at_eos:
                    break
                continue
            if i in (self.pad_id, self.sos_id):
                continue
            words.append(self.itos[i])
        return " ".join(words)

    def to_dict(self) -> dict:
        """Plain, JSON-serialisable form (for checkpoints)."""
        return {"itos": list(self.itos)}

    @classmethod
    def from_dict(cls, data: dict) -> Vocab:
        if not isinstance(data, dict) or not isinstance(data.get("itos"), list):
            raise TypeError(f"data: expected a dict with a list 'itos' (from Vocab.to_dict), got {data!r:.80}")
        itos = data["itos"]
        if tuple(itos[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"data['itos']: expected to start with the specials {list(SPECIALS)}, got {itos[:4]}")
        return cls(itos[len(SPECIALS):])
