"""The book's language model: its recipe, and the function that trains it (chapter 8).

A GPT-style ``DecoderOnlyTransformer`` of the book model's shape, trained on the French side of the
book's corpus (the training split, with the translation model's French vocabulary) to predict the next
word. ``tools/train_book_models.py --only lm`` trained the shipped one (``pretrained.book_lm()``) with
``BOOK_LM_RECIPE``; chapter 8 trains a shorter one live with the same function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import torch

from ..config import TransformerConfig
from ..corpus import Corpus
from ..language_model import lm_batches, train_language_model
from ..models import DecoderOnlyTransformer
from ..tokenization import Vocab
from ..training import TrainingHistory, TrainingOptions
from ..validation import check_instance
from .recipe import BOOK_RECIPE, TrainsWithOptions, book_corpus, book_vocabularies


def _book_lm_shape() -> TransformerConfig:
    # The book model's decoder shape; one matrix for the input embedding and the output layer, as GPT.
    # (The encoder fields of the config are unused by a decoder-only model.)
    return BOOK_RECIPE.model.replace(tie_output_embedding=True)


def _lm_training() -> TrainingOptions:
    """The language model's optimisation settings: the paper's Adam and schedule at the paper's rate."""
    return TrainingOptions(
        steps=1000,  # the shipped model
        warmup=200,
        lr_scale=1.0,  # the paper's rate
        label_smoothing=0.0,  # none: the model's probabilities are what perplexity measures
    )


@dataclass(frozen=True)
class LanguageModelRecipe(TrainsWithOptions):
    """How the book trains its language model. Its own recipe: the translation recipe (``BookRecipe``)
    is untouched; the corpus (``seed``, ``n_pairs``) is the same. As ``BookRecipe``, it holds the settings
    ``train`` takes in ``training`` (a ``TrainingOptions``) and changes them with ``with_training``::

        smoothed = BOOK_LM_RECIPE.with_training(label_smoothing=0.1)"""

    model: TransformerConfig = field(default_factory=_book_lm_shape)  # vocabulary sizes set by config()
    seed: int = BOOK_RECIPE.seed  # the corpus, the initial weights, dropout and the batch order
    n_pairs: int = BOOK_RECIPE.n_pairs
    batch_size: int = 128  # sentences
    training: TrainingOptions = field(default_factory=_lm_training)
    trained_by: ClassVar[str] = "train_book_lm"

    def __post_init__(self) -> None:
        self._check_training()

    def config(self, vocab_size: int) -> TransformerConfig:
        return self.model.replace(src_vocab_size=vocab_size, tgt_vocab_size=vocab_size)


BOOK_LM_RECIPE = LanguageModelRecipe()


def french_sentences(corpus: Corpus, split: str) -> list[str]:
    """The French side of one split of the corpus ("train", "valid" or "test")."""
    return [french for _, french in corpus.splits()[split]]


def train_book_lm(
    time_budget_s: float | None = None,
    *,
    steps: int | None = None,
    recipe: LanguageModelRecipe = BOOK_LM_RECIPE,
    corpus: Corpus | None = None,
    device: torch.device | str | None = None,
    progress: bool = True,
) -> tuple[DecoderOnlyTransformer, Vocab, TrainingHistory]:
    """Build the book's language model and train it on the French training sentences with
    ``recipe.training``, for ``steps`` and/or ``time_budget_s`` seconds (neither given: the recipe's
    steps). Returns (model in eval mode, the French vocabulary, history).
    The same recipe gives the same corpus, initial weights and batches."""
    check_instance("recipe", recipe, LanguageModelRecipe, "a LanguageModelRecipe")
    if corpus is None:
        corpus = book_corpus(recipe.seed, recipe.n_pairs)
    check_instance("corpus", corpus, Corpus, "a corpus.Corpus or None")
    if steps is not None or time_budget_s is not None:  # this run's limits replace the recipe's steps
        run = recipe.training.replace(steps=steps, time_budget_s=time_budget_s)
    else:
        run = recipe.training
    _, vocab = book_vocabularies(corpus)  # the French side's vocabulary, as the translation model's
    torch.manual_seed(recipe.seed)
    model = DecoderOnlyTransformer(recipe.config(len(vocab)))
    batches = lm_batches(french_sentences(corpus, "train"), vocab, recipe.batch_size, seed=recipe.seed)
    history = train_language_model(
        model, batches, run.replace(seed=recipe.seed, pad_id=vocab.pad_id, device=device, progress=progress))
    return model, vocab, history
