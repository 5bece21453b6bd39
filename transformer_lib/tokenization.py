"""From text to the integer tensors a model reads: vocabularies, byte-pair encoding, batches.

* :class:`Vocab`: a word-level vocabulary. Ids 0-3 are the specials ``<pad>`` (0, the
  model's ``pad_id``), ``<sos>``, ``<eos>`` and ``<unk>``.
* :func:`learn_bpe` / :class:`BPETokenizer`: byte-pair encoding (Sennrich, Haddow and
  Birch 2016, "Neural Machine Translation of Rare Words with Subword Units"): "we
  iteratively count all symbol pairs and replace each occurrence of the most frequent
  pair ('A', 'B') with a new symbol 'AB'". :func:`bpe_trace` shows it step by step.
* :class:`Batch` / :func:`make_batches`: padded id tensors with teacher forcing. The
  decoder reads ``<sos>`` + target and learns to predict target + ``<eos>``: the
  same sequence shifted one step.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .validation import (
    check_bool,
    check_device,
    check_id_dtype,
    check_id_lists,
    check_instance,
    check_int,
    check_iterable,
    check_pairs,
    check_positive_int,
    check_sentence,
    check_token_list,
    check_word,
)

PAD, SOS, EOS, UNK = "<pad>", "<sos>", "<eos>", "<unk>"
SPECIALS = (PAD, SOS, EOS, UNK)

# ----------------------------------------------------------------------------- vocabulary


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
            raise ValueError(f"data: expected a dict with a list 'itos' (from Vocab.to_dict), got {data!r:.80}")
        itos = data["itos"]
        if tuple(itos[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"data['itos']: expected to start with the specials {list(SPECIALS)}, got {itos[:4]}")
        return cls(itos[len(SPECIALS):])


# ----------------------------------------------------------------------------- typed text

# The corpus renders every sentence as lower-case words separated by single spaces, with no
# punctuation; English negation is written out ("does not"), and a French elision keeps its
# apostrophe on the first word ("n' aime"). What a reader types is brought to that form.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_CONTRACTION = re.compile(r"(\w)n't\b")          # doesn't -> does not
_ELISION = re.compile(r"(c|d|j|l|m|n|s|t|qu)'")      # French elided words: j' (j'aime -> j' aime)
_NOT_A_LETTER = re.compile(r"[^\w]|_|\d")           # punctuation, digits, any other apostrophe


def normalize_sentence(text: str) -> tuple[str, list[str]]:
    """``text`` written the way the training sentences are, and what was changed, for a note.

    In this order: typographic apostrophes become ``'``; capitals become lower case; ``n't``
    becomes `` not``; a French elision is split after its apostrophe (``j'aime`` -> ``j' aime``);
    in every other word, each character that is not a letter (punctuation, digits, an apostrophe)
    becomes a space; the words are joined by single spaces. ``changes`` names each step that
    changed something, for a note to the reader (empty when ``text`` was already in that form;
    spacing alone is not a change: ``Vocab.encode`` splits on any whitespace). The book's page
    mirrors these rules in JavaScript.

    >>> normalize_sentence("The Cat doesn't see the dogs!")
    ('the cat does not see the dogs', ['capitals written in lower case', "“n't” written as “ not”", 'removed: !'])
    """
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    changes: list[str] = []
    out = unicodedata.normalize("NFC", text).translate(_APOSTROPHES)
    if out.lower() != out:
        out = out.lower()
        changes.append("capitals written in lower case")
    expanded = _CONTRACTION.sub(r"\1 not", out)
    if expanded != out:
        out = expanded
        changes.append("“n't” written as “ not”")
    words: list[str] = []
    removed: set[str] = set()
    split = False
    for word in out.split():
        elision = _ELISION.match(word)
        if elision and len(word) > elision.end():  # j'aime: the elided word, then the rest
            words.append(elision.group(0))
            word, split = word[elision.end():], True
        if _ELISION.fullmatch(word):
            words.append(word)
            continue
        removed.update(_NOT_A_LETTER.findall(word))
        words.extend(_NOT_A_LETTER.sub(" ", word).split())
    if split:
        changes.append("elided words split after the apostrophe")
    if removed:  # invisible characters named by their code point
        shown = (c if c.isprintable() and not c.isspace() else f"U+{ord(c):04X}" for c in sorted(removed))
        changes.append("removed: " + " ".join(shown))
    return " ".join(words), changes


# ----------------------------------------------------------------------------- byte-pair encoding

END_OF_WORD = "</w>"


@dataclass(frozen=True)
class Merge:
    """One learned merge: the pair of symbols, and how often it occurred when it was chosen."""

    pair: tuple[str, str]
    count: int

    @property
    def symbol(self) -> str:
        return self.pair[0] + self.pair[1]


@dataclass(frozen=True)
class BPEStep:
    """One step of :func:`bpe_trace`: the merge, and the text's symbols after it."""

    merge: Merge
    symbols: tuple[str, ...]


def _pair_counts(words: dict[tuple[str, ...], int]) -> Counter[tuple[str, str]]:
    """How often each adjacent pair occurs, counting overlaps ("aaa" holds ('a', 'a') twice), as Sennrich et al."""
    counts: Counter[tuple[str, str]] = Counter()
    for symbols, frequency in words.items():
        for pair in zip(symbols, symbols[1:], strict=False):
            counts[pair] += frequency
    return counts


def _merge_symbols(symbols: Sequence[str], pair: tuple[str, str]) -> tuple[str, ...]:
    """Replace each occurrence of ``pair``, left to right without overlap: ('a','a','a') -> ('aa','a')."""
    out: list[str] = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def _split_word(word: str, end_of_word: str | None) -> tuple[str, ...]:
    return (*word, end_of_word) if end_of_word else tuple(word)


def learn_bpe(text: str | Iterable[str], n_merges: int, end_of_word: str | None = END_OF_WORD) -> list[Merge]:
    """Learn up to ``n_merges`` merges from ``text`` (a string, or sentences), split into words at whitespace.

    Each word starts as its characters followed by ``end_of_word`` (Sennrich et al.'s
    "</w>", so that a merge can tell "er" at the end of a word from "er" inside it);
    ``end_of_word=None`` leaves it out. At every step the most frequent adjacent pair is
    merged; **ties go to the pair that sorts first** (as a tuple of strings), so the
    result never depends on dictionary order. Learning stops early when no pair is left.
    """
    check_int("n_merges", n_merges, minimum=0)
    if end_of_word is not None:
        check_word("end_of_word", end_of_word)
    if not isinstance(text, str):
        check_iterable("text", text, "a str or a list of sentences")
    sentences = [text] if isinstance(text, str) else list(text)
    word_counts: Counter[str] = Counter()
    for i, sentence in enumerate(sentences):
        word_counts.update(check_sentence(f"text[{i}]" if not isinstance(text, str) else "text", sentence).split())
    if not word_counts:
        raise ValueError("text: expected at least one word, got empty text")
    words = {_split_word(w, end_of_word): n for w, n in sorted(word_counts.items())}
    merges: list[Merge] = []
    for _ in range(n_merges):
        counts = _pair_counts(words)
        if not counts:
            break
        pair, count = min(counts.items(), key=lambda item: (-item[1], item[0]))
        merges.append(Merge(pair, count))
        words = {_merge_symbols(symbols, pair): n for symbols, n in words.items()}
    return merges


def bpe_trace(text: str, n_merges: int) -> list[BPEStep]:
    """Byte-pair encoding of one string, step by step (no end-of-word marker; spaces are symbols too).

    The classic example: "aaabdaaabac" -> "aa" gives ZabdZabac, "ab" gives ZYdZYac,
    then "aaab" (ZY) gives XdXac.
    """
    check_sentence("text", text)
    if not text:
        raise ValueError("text: expected a non-empty string")
    check_int("n_merges", n_merges, minimum=0)
    symbols = tuple(text)
    steps = []
    for _ in range(n_merges):
        counts = _pair_counts({symbols: 1})
        if not counts:
            break
        pair, count = min(counts.items(), key=lambda item: (-item[1], item[0]))
        symbols = _merge_symbols(symbols, pair)
        steps.append(BPEStep(Merge(pair, count), symbols))
    return steps


class BPETokenizer:
    """Splits words into subwords by applying learned merges in the order they were learned.

    A character never seen in training stays a symbol of its own (a vocabulary over
    :attr:`symbols` would map it to ``<unk>``).
    """

    def __init__(
        self, merges: Sequence[Merge], end_of_word: str | None = END_OF_WORD, alphabet: Iterable[str] = ()
    ) -> None:
        """``alphabet``: the characters seen in training (``learn`` fills it in)."""
        merges = list(check_iterable("merges", merges, "a list of Merge (from learn_bpe)"))
        alphabet = list(check_iterable("alphabet", alphabet, "an iterable of characters (str)"))
        if end_of_word is not None:
            check_word("end_of_word", end_of_word)
        for i, merge in enumerate(merges):
            if not isinstance(merge, Merge):
                raise TypeError(f"merges[{i}]: expected a Merge (from learn_bpe), got {type(merge).__name__}")
        self.merges = list(merges)
        self.end_of_word = end_of_word
        self.alphabet = sorted(set(alphabet))

    @classmethod
    def learn(cls, text: str | Iterable[str], n_merges: int, end_of_word: str | None = END_OF_WORD) -> BPETokenizer:
        if not isinstance(text, str):
            check_iterable("text", text, "a str or a list of sentences")
        sentences = [text] if isinstance(text, str) else list(text)
        merges = learn_bpe(sentences, n_merges, end_of_word)
        return cls(merges, end_of_word, alphabet={c for s in sentences for c in s if not c.isspace()})

    @property
    def symbols(self) -> set[str]:
        """Every symbol the tokenizer can produce from training characters: alphabet, marker, merges."""
        known = set(self.alphabet) | {m.symbol for m in self.merges}
        if self.end_of_word:
            known.add(self.end_of_word)
        return known

    def tokenize_word(self, word: str) -> list[str]:
        check_word("word", word)
        symbols = _split_word(word, self.end_of_word)
        for merge in self.merges:
            if len(symbols) == 1:
                break
            symbols = _merge_symbols(symbols, merge.pair)
        return list(symbols)

    def tokenize(self, sentence: str) -> list[str]:
        """Subwords of every word of ``sentence``, in order."""
        return [s for word in check_sentence("sentence", sentence).split() for s in self.tokenize_word(word)]

    def detokenize(self, symbols: Sequence[str]) -> str:
        """Inverse of :meth:`tokenize` (needs the end-of-word marker to find word ends)."""
        check_token_list("symbols", symbols)
        if not self.end_of_word:
            raise ValueError("detokenize: needs a tokenizer with an end_of_word marker to know where words end")
        return "".join(symbols).replace(self.end_of_word, " ").strip()


# ----------------------------------------------------------------------------- batches


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
