"""The book's trained models and the recipe that made them, in one place.

* ``book_model()``, ``book_rnn()``, ``book_rnn_attention()``, ``book_lm()``: the shipped Transformer, the GRU
  baselines without and with attention, and the language model (``shipped``), loaded from the package in a
  fraction of a second, the same on every machine. ``book_model(step=N)``: the Transformer at step N of
  its training run, one of ``snapshot_steps()`` (``snapshots``: the replay of chapter 7 and the page).
* ``BOOK_RECIPE``, ``book_corpus()``, ``train_book_model()``, ``train_book_rnn()``: the corpus,
  vocabularies and hyper-parameters, and the functions that train with them (``recipe``): chapter 7
  trains live with them, and ``tools/train_book_models.py`` rewrote the shipped files with them.
* ``BOOK_LM_RECIPE``, ``train_book_lm()``: the language model's own recipe and training (``language_model``,
  chapter 8).
"""

from .language_model import BOOK_LM_RECIPE, LanguageModelRecipe, french_sentences, train_book_lm
from .recipe import (
    BOOK_RECIPE,
    LIVE_RECIPE,
    BookRecipe,
    book_corpus,
    book_vocabularies,
    exact_match_on,
    train_book_model,
    train_book_rnn,
)
from .shipped import ShippedModelError, book_lm, book_rnn, book_rnn_attention, load_shipped, write_shipped
from .snapshots import book_model, snapshot_steps

__all__ = [
    "BOOK_LM_RECIPE", "BOOK_RECIPE", "LIVE_RECIPE", "BookRecipe", "LanguageModelRecipe", "ShippedModelError",
    "book_corpus",
    "book_lm", "book_model", "book_rnn", "book_rnn_attention", "book_vocabularies", "exact_match_on",
    "french_sentences", "load_shipped", "snapshot_steps", "train_book_lm", "train_book_model", "train_book_rnn",
    "write_shipped",
]
