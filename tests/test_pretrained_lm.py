"""The shipped language model (chapter 8): made by today's recipe, intact, loaded without training."""

import math

import pytest
import torch

from transformer_lib.language_model import perplexity
from transformer_lib.models import DecoderOnlyTransformer
from transformer_lib.pretrained import (
    BOOK_LM_RECIPE,
    LanguageModelRecipe,
    book_corpus,
    book_lm,
    book_vocabularies,
    french_sentences,
    load_shipped,
    train_book_lm,
    write_shipped,
)
from transformer_lib.pretrained import language_model as lm_recipe_module
from transformer_lib.training import TrainingOptions

from .seq2seq_toys import tiny_book_model


def test_the_shipped_language_model_was_made_by_todays_recipe():
    """Change the recipe (or the corpus) without retraining and this fails: run tools/train_book_models.py --only lm."""
    checkpoint = book_lm()
    assert isinstance(checkpoint.model, DecoderOnlyTransformer) and not checkpoint.model.training
    assert checkpoint.extra["recipe"] == BOOK_LM_RECIPE.record()
    assert checkpoint.extra["steps"] == BOOK_LM_RECIPE.training.steps == len(checkpoint.extra["losses"])
    _, french = book_vocabularies(book_corpus())
    assert checkpoint.src_vocab is None and checkpoint.tgt_vocab == french
    assert checkpoint.config == BOOK_LM_RECIPE.config(len(french))
    assert checkpoint.model.lm_head.weight is checkpoint.model.embed.token.embedding.weight  # tied, as GPT
    assert all(p.dtype == torch.float32 for p in checkpoint.model.parameters())


def test_todays_code_retraces_the_shipped_language_models_first_steps():
    """Change the model or the training code so that training takes another path, and this fails (the losses
    are recorded to 4 decimals, +-5e-5; another CPU drifts by far less over five steps)."""
    history = train_book_lm(steps=5, progress=False)[-1]
    assert history.losses == pytest.approx(book_lm().extra["losses"][:5], abs=1e-4)


def test_the_shipped_language_model_beats_the_uniform_guess_and_matches_its_record():
    checkpoint = book_lm(dtype=torch.float64)
    vocab = checkpoint.tgt_vocab
    test = perplexity(checkpoint.model, french_sentences(book_corpus(), "test"), vocab)
    assert test < len(vocab) / 10
    # recorded in float32 on the training machine; the float64 copy computes the same function
    assert test == pytest.approx(checkpoint.extra["test_perplexity"], rel=1e-4)


def test_loading_the_language_model_never_trains(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("book_lm() must not train")

    monkeypatch.setattr(lm_recipe_module, "train_language_model", fail)
    assert book_lm().model is not None


def test_write_then_load_a_language_model_without_a_source_vocabulary(tmp_path):
    recipe = LanguageModelRecipe(model=tiny_book_model(16), batch_size=16).with_training(steps=2)
    model, vocab, history = train_book_lm(steps=2, recipe=recipe, progress=False)
    assert len(history.losses) == 2 and math.isfinite(history.losses[-1])
    write_shipped("tiny_lm", model, None, vocab, {"note": "a test"}, directory=tmp_path)
    loaded = load_shipped("tiny_lm", tmp_path)
    assert isinstance(loaded.model, DecoderOnlyTransformer) and loaded.src_vocab is None and loaded.tgt_vocab == vocab
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in loaded.model.state_dict().items())
    with pytest.raises(TypeError, match="tgt_vocab: expected a tokenization.Vocab"):
        write_shipped("bad", model, None, None, {}, directory=tmp_path)




def test_the_language_models_recipe_holds_its_training_options():
    """As ``BookRecipe``: ``training`` is a ``TrainingOptions``, changed with ``with_training``; the run trains
    the recipe's steps unless the call gives a limit; the seed and ``<pad>`` are not the options' to set."""
    recipe = LanguageModelRecipe(model=tiny_book_model(16)).with_training(batch_size=16, steps=3, warmup=2)
    assert recipe.batch_size == 16 and (recipe.training.steps, recipe.training.warmup) == (3, 2)
    assert recipe.record()["steps"] == 3 and "training" not in recipe.record()
    _, _, history = train_book_lm(recipe=recipe, progress=False)
    assert len(history.losses) == 3
    for name in ("seed", "pad_id"):
        with pytest.raises(ValueError, match=f"training: its {name} is set by train_book_lm"):
            LanguageModelRecipe(training=TrainingOptions(steps=1, **{name: 1}))
    with pytest.raises(TypeError, match="training: expected a training.TrainingOptions"):
        LanguageModelRecipe(training={"steps": 1})
