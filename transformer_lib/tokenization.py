"""From text to tokens: typed text brought to the corpus's form, and byte-pair encoding.

* :func:`normalize_sentence`: what a reader types, written the way the training sentences are.
* :func:`learn_bpe` / :class:`BPETokenizer`: byte-pair encoding (Sennrich, Haddow and
  Birch 2016, "Neural Machine Translation of Rare Words with Subword Units"): "we
  iteratively count all symbol pairs and replace each occurrence of the most frequent
  pair ('A', 'B') with a new symbol 'AB'". :func:`bpe_trace` shows it step by step.

The word-level :class:`Vocab` is in ``vocabulary``, the padded batches of teacher forcing
(:class:`Batch`, :func:`make_batches`) in ``batching``; both are imported here too, so that
``from transformer_lib.tokenization import Vocab, make_batches`` reads the path from text to
tensors from one place.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .batching import Batch, collate, encode_pairs, make_batches, pad_sequences
from .validation import check_int, check_iterable, check_sentence, check_token_list, check_word
from .vocabulary import EOS, PAD, SOS, SPECIALS, UNK, Vocab

__all__ = [  # this module's own, and the vocabulary and batching it gathers from theirs
    "END_OF_WORD", "EOS", "PAD", "SOS", "SPECIALS", "UNK", "BPEStep", "BPETokenizer", "Batch", "Merge", "Vocab",
    "bpe_trace", "collate", "encode_pairs", "learn_bpe", "make_batches", "normalize_sentence", "pad_sequences",
]

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
        check_token_list("alphabet", alphabet, item="character")
        if end_of_word is not None:
            check_word("end_of_word", end_of_word)
        for i, merge in enumerate(merges):
            if not isinstance(merge, Merge):
                raise TypeError(f"merges[{i}]: expected a Merge (from learn_bpe), got {type(merge).__name__}")
        self.merges = tuple(merges)  # fixed: tokenize remembers each word's subwords
        self.end_of_word = end_of_word
        self.alphabet = sorted(set(alphabet))
        self._subwords: dict[str, list[str]] = {}  # word -> tokenize_word(word), for words seen before

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
        """Subwords of every word of ``sentence``, in order. Each distinct word is split once and
        remembered: a corpus repeats its few hundred words thousands of times."""
        subwords = []
        for word in check_sentence("sentence", sentence).split():
            if word not in self._subwords:
                self._subwords[word] = self.tokenize_word(word)
            subwords += self._subwords[word]
        return subwords

    def detokenize(self, symbols: Sequence[str]) -> str:
        """Inverse of :meth:`tokenize` (needs the end-of-word marker to find word ends)."""
        check_token_list("symbols", symbols)
        if not self.end_of_word:
            raise ValueError("detokenize: needs a tokenizer with an end_of_word marker to know where words end")
        return "".join(symbols).replace(self.end_of_word, " ").strip()
