"""``book_corpus()`` reads a stored copy of the book's corpus (``tools/store.py book_corpus``); that the
file is what ``make_corpus`` generates, split by split, ``tests/test_stored.py`` checks."""

import dataclasses

from transformer_lib.corpus import make_corpus
from transformer_lib.pretrained import BOOK_RECIPE, book_corpus
from transformer_lib.pretrained.recipe import read_corpus, write_corpus


def test_book_corpus_reads_the_stored_corpus():
    assert book_corpus() == make_corpus(BOOK_RECIPE.seed, n_pairs=BOOK_RECIPE.n_pairs)


def test_other_values_generate_the_corpus():
    assert book_corpus(seed=1, n_pairs=100) == make_corpus(1, n_pairs=100)


def test_a_written_corpus_reads_back_the_same(tmp_path):
    corpus = make_corpus(3, n_pairs=50)
    write_corpus(corpus, tmp_path / "corpus.json.gz")
    assert read_corpus(tmp_path / "corpus.json.gz") == corpus
    changed = dataclasses.replace(corpus, test=[*corpus.test[:-1], (corpus.test[-1][0], "un autre")])
    write_corpus(changed, tmp_path / "changed.json.gz")
    assert read_corpus(tmp_path / "changed.json.gz") != corpus
