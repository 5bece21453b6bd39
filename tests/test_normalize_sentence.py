"""Typed text is written the way the corpus writes its sentences before a model reads it."""

from __future__ import annotations

import pytest

from transformer_lib.corpus import make_corpus
from transformer_lib.tokenization import normalize_sentence


@pytest.mark.parametrize(("typed", "expected", "changes"), [
    ("The Cat sees the dogs!", "the cat sees the dogs", ["capitals written in lower case", "removed: !"]),
    ("the cat doesn’t sleep.", "the cat does not sleep", ["“n't” written as “ not”", "removed: ."]),
    ("je n'aime pas", "je n' aime pas", ["elided words split after the apostrophe"]),
    ("the cat, 3 dogs; ok?", "the cat dogs ok", ["removed: , 3 ; ?"]),
    ("  the   cat  ", "the cat", []),
    ("?!", "", ["removed: ! ?"]),
])
def test_normalize_sentence(typed: str, expected: str, changes: list[str]) -> None:
    assert normalize_sentence(typed) == (expected, changes)


def test_corpus_sentences_are_already_normal() -> None:
    corpus = make_corpus(0, n_pairs=300)
    for english, french in corpus.train:
        assert normalize_sentence(english) == (english, [])
        assert normalize_sentence(french) == (french, [])


def test_normalize_sentence_rejects_a_non_string() -> None:
    with pytest.raises(TypeError, match="text: expected a str, got int"):
        normalize_sentence(3)  # type: ignore[arg-type]
