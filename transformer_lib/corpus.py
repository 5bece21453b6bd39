"""A generated English -> French corpus: the translation task the book trains on.

Nothing is downloaded. Sentences come from a small grammar and a hand-written lexicon,
chosen so that the French differs from the English in the ways attention has to handle:

* **word order**: most French adjectives follow the noun ("the black cat" -> "le chat
  noir"), a few precede it ("the small cat" -> "le petit chat"); negation wraps the verb
  ("does not sleep" -> "ne dort pas");
* **agreement**: determiners and adjectives agree in gender and number with the noun,
  verbs with their subject, and a predicate adjective with a subject several words away
  ("the old tables are not green" -> "les vieilles tables ne sont pas vertes");
* **small rules**: elision before a vowel (j', n', d'), contractions of de and à with
  le and les (du, des, au, aux), "pas de" for an indefinite object of a negated verb
  ("i do not have a cat" -> "je n' ai pas de chat"), "a" -> "an" in English.

Conventions: lower case, no punctuation, tokens separated by single spaces. An elided
French word is its own token ("je n' aime pas", like the Moses tokenizer's split), so
the word-level vocabulary stays small and "n'" lines up with "not";
:func:`join_elisions` gives the usual spelling ("je n'aime pas") for display.

The lexicon (``transformer_lib.lexicon``: the words, as data) avoids what this grammar
cannot make exactly right: no noun or pre-noun adjective starts with a vowel or an h (so
there is no l', bel, vieil, mon before a feminine vowel), no English noun whose plural
equals its singular (sheep, fish), and English "you" always means "vous", "they" always
"ils", so that every English sentence has exactly one French translation.

The grammar (``transformer_lib.grammar``) builds and renders sentences; this module, the
public one, draws the corpus from it and re-exports what the book and the tests use
(``make_corpus``, ``render``, ``french_words``, ``iter_rule_examples``...).

The test split holds adjective-noun combinations that never occur in training
(:data:`DEFAULT_HELD_OUT`): a model that gets them right has composed the adjective and
the noun rather than memorised the phrase.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .grammar import (
    MAX_PAIRS,
    MAX_WORDS,
    MIN_WORDS,
    NounPhrase,
    PrepositionalPhrase,
    Sentence,
    _check_combination,
    adjective_noun_pairs,
    elide_and_contract,
    english_articles,
    english_words,
    french_words,
    join_elisions,
    random_sentence,
    render,
)
from .lexicon import ADJECTIVES, DETERMINERS, NOUNS, PREPOSITIONS, PRONOUNS, VERBS, Adjective, Noun, Preposition, Verb
from .validation import check_edges, check_int, check_iterable, check_pairs

__all__ = [
    "ADJECTIVES", "Adjective", "Corpus", "DEFAULT_HELD_OUT", "DETERMINERS", "MAX_NOVEL_PER_COMBINATION",
    "MAX_PAIRS", "MAX_WORDS", "MIN_WORDS",
    "NOUNS", "Noun", "NounPhrase", "PREPOSITIONS", "PRONOUNS", "Pair", "Preposition", "PrepositionalPhrase",
    "Sentence", "VERBS", "Verb", "adjective_noun_pairs", "elide_and_contract",
    "english_articles", "english_words", "french_words", "iter_rule_examples", "join_elisions", "make_corpus",
    "random_sentence", "render", "split_by_length",
]

# ----------------------------------------------------------------------------- the corpus

Pair = tuple[str, str]
MAX_NOVEL_PER_COMBINATION = 10_000  # bounded work: 5 combinations x 10,000 take about 10 s

DEFAULT_HELD_OUT: tuple[tuple[str, str], ...] = (
    ("white", "car"),  # "voiture blanche": feminine form, after the noun
    ("small", "horse"),  # "petits chevaux": before the noun, irregular plural
    ("old", "table"),  # "vieille table": irregular feminine, before the noun
    ("happy", "girl"),  # "fille heureuse"
    ("green", "book"),  # "livre vert"
)


@dataclass
class Corpus:
    """Sentence pairs split for training.

    ``test`` holds ``n_pairs // 10`` ordinary pairs plus ``novel``: pairs that combine
    an adjective and a noun in a way (``held_out``) that neither ``train`` nor ``valid``
    ever does.
    """

    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    novel: list[Pair] = field(default_factory=list)
    held_out: tuple[tuple[str, str], ...] = DEFAULT_HELD_OUT
    seed: int = 0

    def splits(self) -> dict[str, list[Pair]]:
        return {"train": self.train, "valid": self.valid, "test": self.test}


def _length_ok(pair: Pair) -> bool:
    return all(MIN_WORDS <= len(side.split()) <= MAX_WORDS for side in pair)


def make_corpus(
    seed: int = 0,
    n_pairs: int = 15_000,
    held_out: Sequence[tuple[str, str]] = DEFAULT_HELD_OUT,
    novel_per_combination: int = 40,
) -> Corpus:
    """Generate ``n_pairs`` unique (English, French) pairs, split 80/10/10, plus the novel test pairs.

    Deterministic: the same arguments give the same corpus. Every sentence has 3 to 15
    words on both sides. Pairs that combine a ``held_out`` (adjective, noun) go only to
    the test split, ``novel_per_combination`` of them per combination at least.
    """
    check_int("seed", seed)
    check_int("n_pairs", n_pairs, minimum=10, maximum=MAX_PAIRS)  # at least 10 to split 80/10/10
    check_int("novel_per_combination", novel_per_combination, minimum=0, maximum=MAX_NOVEL_PER_COMBINATION)
    if isinstance(held_out, str):
        raise TypeError("held_out: expected a sequence of (adjective, noun) pairs, got a str")
    check_iterable("held_out", held_out, "a sequence of (adjective, noun) pairs")
    held_out = tuple(_check_combination("held_out", c) for c in held_out)
    if len(held_out) * novel_per_combination > MAX_PAIRS:  # checked up front: bounded work, never a hang
        raise ValueError(f"novel_per_combination: {len(held_out)} held-out combinations x {novel_per_combination} "
                         f"novel pairs exceed {MAX_PAIRS} pairs in all")

    rng = random.Random(seed)
    seen: set[str] = set()
    regular: list[Pair] = []
    novel: dict[tuple[str, str], list[Pair]] = {c: [] for c in held_out}

    def add(sentence: Sentence) -> tuple[str, str] | None:
        """Render and keep a new pair; returns the held-out combination it holds, if any."""
        pair = render(sentence)
        if pair[0] in seen or not _length_ok(pair):
            return None
        seen.add(pair[0])
        hits = sorted(adjective_noun_pairs(sentence) & set(held_out))
        if hits:
            novel[hits[0]].append(pair)
            return hits[0]
        regular.append(pair)
        return None

    attempts, max_attempts = 0, 50 * n_pairs
    while len(regular) < n_pairs:
        attempts += 1
        if attempts > max_attempts:
            raise ValueError(f"n_pairs: the grammar did not yield {n_pairs} unique pairs in {max_attempts} draws")
        add(random_sentence(rng))
    for combination in held_out:
        attempts = 0
        while len(novel[combination]) < novel_per_combination:
            attempts += 1
            if attempts > 50 * (novel_per_combination + 1):
                raise ValueError(f"novel_per_combination: could not make {novel_per_combination} "
                                 f"unique pairs with {combination}")
            add(random_sentence(rng, force=combination))

    n_train, n_valid = (8 * n_pairs) // 10, n_pairs // 10
    novel_pairs = [pair for combination in held_out for pair in novel[combination]]
    test = regular[n_train + n_valid:] + novel_pairs
    rng.shuffle(test)
    return Corpus(
        train=regular[:n_train],
        valid=regular[n_train:n_train + n_valid],
        test=test,
        novel=novel_pairs,
        held_out=held_out,
        seed=seed,
    )


def split_by_length(
    pairs: Sequence[Pair], edges: Sequence[int] = (3, 6, 9, 12, 16)
) -> dict[tuple[int, int], list[Pair]]:
    """Group pairs by source length (words): bucket (lo, hi) holds lo <= length < hi.

    Consecutive ``edges`` bound the buckets. A pair outside every bucket is an error,
    not silently dropped.
    """
    edges = check_edges("edges", edges)
    buckets: dict[tuple[int, int], list[Pair]] = {(a, b): [] for a, b in zip(edges, edges[1:], strict=False)}
    for i, pair in enumerate(check_pairs("pairs", pairs)):
        length = len(pair[0].split())
        if not edges[0] <= length < edges[-1]:
            raise ValueError(
                f"pairs[{i}]: source length {length} lies outside the buckets [{edges[0]}, {edges[-1]}): {pair[0]!r}"
            )
        for lo, hi in buckets:
            if lo <= length < hi:
                buckets[(lo, hi)].append(pair)
                break
    return buckets


def iter_rule_examples() -> Iterator[tuple[str, Sentence]]:
    """One sentence per rule of the grammar, for the book and corpus_stats.py."""
    cat, table = NounPhrase("cat"), NounPhrase("table")
    yield "adjective after the noun", Sentence(NounPhrase("cat", adjectives=("black",)), "sleep")
    yield "adjective before the noun", Sentence(NounPhrase("horse", "a", adjectives=("small",)), "run")
    yield "both sides of the noun", Sentence("i", "see", obj=NounPhrase("car", "the", adjectives=("old", "red")))
    yield "feminine and plural agreement", Sentence(NounPhrase("chair", plural=True, adjectives=("old",)),
                                                    "be", adjective="green")
    yield "conjugation (nous)", Sentence("we", "eat", obj=NounPhrase("apple", plural=True))
    yield "negation with n'", Sentence("he", "have", obj=NounPhrase("dog", "a"), negated=True)
    yield "elision j'", Sentence("i", "like", obj=cat)
    yield "contraction de + le = du", Sentence(NounPhrase("girl", "my"), "sleep",
                                              pp=PrepositionalPhrase("near", cat))
    yield "contraction à + le = au", Sentence("they", "go", pp=PrepositionalPhrase("to", NounPhrase("market")))
    yield "subject with a phrase", Sentence(NounPhrase("cat", plural=True, pp=PrepositionalPhrase("on", table)),
                                            "be", adjective="tired")
