"""The book's trained models and the recipe that made them, in one place.

* ``book_model()``, ``book_rnn()``, ``book_rnn_attention()``: the shipped Transformer, GRU baseline and
  GRU with attention (``shipped``), loaded
  from the package in a fraction of a second, the same on every machine.
* ``BOOK_RECIPE``, ``book_corpus()``, ``train_book_model()``, ``train_book_rnn()``: the corpus,
  vocabularies and hyper-parameters, and the functions that train with them (``recipe``): chapter 7
  trains live with them, and ``tools/train_book_models.py`` rewrote the shipped files with them.
"""

from .recipe import (
    BOOK_RECIPE,
    BookRecipe,
    book_corpus,
    book_vocabularies,
    exact_match_on,
    train_book_model,
    train_book_rnn,
)
from .shipped import ShippedModelError, book_model, book_rnn, book_rnn_attention, load_shipped, write_shipped

__all__ = [
    "BOOK_RECIPE", "BookRecipe", "ShippedModelError", "book_corpus", "book_model", "book_rnn", "book_rnn_attention",
    "book_vocabularies", "exact_match_on", "load_shipped", "train_book_model", "train_book_rnn", "write_shipped",
]
