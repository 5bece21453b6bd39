"""The book's recipe holds its optimisation settings in one ``TrainingOptions`` (issue 41): what
``train_book_model`` hands to ``train`` is that object, changed only by the run's own keywords, the
recipe's seed and the vocabulary's ``<pad>``; another recipe is one call (``with_training``)."""

from __future__ import annotations

import dataclasses

import pytest

from transformer_lib.corpus import make_corpus
from transformer_lib.optimiser import transformer_lr
from transformer_lib.pretrained import BOOK_RECIPE, BookRecipe, train_book_model
from transformer_lib.pretrained import recipe as recipe_module
from transformer_lib.train.cli import parse
from transformer_lib.training import TrainingOptions, train

from .seq2seq_toys import tiny_book_model


def test_with_training_changes_the_batch_size_and_the_options_and_nothing_else():
    fast = BOOK_RECIPE.with_training(batch_size=64, warmup=100, lr_scale=1.0)
    assert fast == dataclasses.replace(BOOK_RECIPE, batch_size=64,
                                       training=BOOK_RECIPE.training.replace(warmup=100, lr_scale=1.0))
    assert (fast.batch_size, fast.training.warmup, fast.training.lr_scale) == (64, 100, 1.0)
    assert fast.training.steps == BOOK_RECIPE.training.steps and fast.model == BOOK_RECIPE.model
    assert BOOK_RECIPE.with_training(clip_norm=None).batch_size == BOOK_RECIPE.batch_size
    assert BOOK_RECIPE.with_training() == BOOK_RECIPE
    assert "BOOK_RECIPE.with_training(batch_size=64, warmup=100, lr_scale=1.0)" in BookRecipe.__doc__


def test_a_recipe_refuses_what_is_not_its_to_set():
    with pytest.raises(TypeError, match="training: expected a training.TrainingOptions"):
        BookRecipe(training={"warmup": 100})
    with pytest.raises(ValueError, match="batch_size"):
        BOOK_RECIPE.with_training(batch_size=0)
    with pytest.raises(TypeError, match="warmpu"):
        BOOK_RECIPE.with_training(warmpu=100)
    for name in ("seed", "pad_id"):  # train_book_model sets them: a recipe's own would be silently overridden
        with pytest.raises(ValueError, match=f"training: its {name} is set by train_book_model"):
            BOOK_RECIPE.with_training(**{name: 3})


def test_the_record_keeps_the_format_the_shipped_files_were_written_in():
    record = BOOK_RECIPE.record()
    assert set(record) == {"model", "seed", "n_pairs", "batch_size", "warmup", "lr_scale", "label_smoothing", "steps",
                           "rnn_steps", "rnn_hidden_size", "target_exact_match"}
    assert (record["warmup"], record["lr_scale"], record["steps"]) == (300, 0.5, 1500)
    assert record["model"] == dataclasses.asdict(BOOK_RECIPE.model)


def test_train_book_model_hands_train_the_recipes_options(monkeypatch):
    """What reaches ``train`` is ``recipe.training`` with the run's keywords, the recipe's seed and the
    target vocabulary's ``<pad>``; the schedule the model saw is the recipe's."""
    small = BookRecipe(model=tiny_book_model(16), batch_size=16, seed=4).with_training(warmup=7, lr_scale=2.0,
                                                                                         clip_norm=None)
    seen = []

    def spy(model, batches, options, **kwargs):
        seen.append(options)
        return train(model, batches, options, **kwargs)

    monkeypatch.setattr(recipe_module, "train", spy)
    corpus = make_corpus(0, n_pairs=60, novel_per_combination=1)
    _, _, tgt_vocab, history = train_book_model(small, corpus=corpus, steps=3, progress=False, device="cpu")
    assert seen == [small.training.replace(steps=3, progress=False, device="cpu", seed=4, pad_id=tgt_vocab.pad_id)]
    assert history.lrs == [transformer_lr(step, 16, 7, 2.0) for step in (1, 2, 3)]
    with pytest.raises(TypeError, match="recipe: expected a pretrained.BookRecipe"):
        train_book_model({"steps": 3})
    with pytest.raises(TypeError, match="unexpected keyword argument 'stepz'"):
        train_book_model(small, corpus=corpus, stepz=3)


def test_the_commands_schedule_and_loss_default_to_the_recipes(tmp_path):
    args = parse(["--out", str(tmp_path)])
    book = BOOK_RECIPE.training
    assert (args.warmup, args.lr_scale, args.label_smoothing) == (book.warmup, book.lr_scale, book.label_smoothing)
    assert (args.pairs, args.seed) == (BOOK_RECIPE.n_pairs, BOOK_RECIPE.seed)
    assert isinstance(BOOK_RECIPE.training, TrainingOptions)
