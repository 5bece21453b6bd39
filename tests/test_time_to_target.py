"""benchmarks/time_to_target.py's pieces: the floor counts the batches training served, in its order,
and nn.Transformer trains on the same batches with the same recipe."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import time_to_target  # noqa: E402
from bench_training import formula_flops  # noqa: E402

from transformer_lib.corpus import make_corpus  # noqa: E402
from transformer_lib.pretrained import BOOK_RECIPE, book_vocabularies  # noqa: E402
from transformer_lib.tokenization import make_batches  # noqa: E402
from transformer_lib.training import batch_order  # noqa: E402


def test_the_recipes_timed_are_the_shipped_models_and_chapter_7s_which_differ_in_batch_size():
    from transformer_lib.pretrained import LIVE_RECIPE

    assert time_to_target.RECIPES == {"live": LIVE_RECIPE, "book": BOOK_RECIPE}
    # the batch size, and the step limit (never reached: every run stops at the target)
    assert LIVE_RECIPE == BOOK_RECIPE.with_training(batch_size=LIVE_RECIPE.batch_size, steps=LIVE_RECIPE.training.steps)
    assert LIVE_RECIPE.batch_size < BOOK_RECIPE.batch_size


def test_served_flops_follow_the_order_of_the_batches_across_epochs():
    corpus = make_corpus(0, n_pairs=200, novel_per_combination=1)
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    sizes = (len(src_vocab), len(tgt_vocab))
    batches = make_batches(corpus.train, src_vocab, tgt_vocab, 32, shuffle=True, seed=3, by_length=True)
    recipe = BOOK_RECIPE.__class__(**{**BOOK_RECIPE.__dict__, "seed": 3})
    steps = len(batches) + 2  # one epoch and two batches of the next
    order = batch_order(len(batches), 0, 3) + batch_order(len(batches), 1, 3)[:2]
    config = recipe.config(*sizes)
    expected = sum(formula_flops(config, batches[i].src.shape[0], batches[i].src.shape[1],
                                 batches[i].tgt_in.shape[1])["training_step"] for i in order)
    assert time_to_target.served_flops(recipe, batches, steps, sizes) == pytest.approx(expected, rel=1e-12)


def test_summary_spreads_each_recipe_apart():
    runs = [{"recipe": "book", "seconds": s, "steps": 10 * s, "floor_seconds": 1.0, "torch_seconds": 2 * s,
             "reached": True} for s in (3.0, 1.0, 2.0)]
    runs.append({"recipe": "live", "seconds": 9.0, "steps": 90, "floor_seconds": 1.0, "torch_seconds": 9.0,
                 "reached": False})
    book = time_to_target.summary(runs, "book")
    assert (book["seconds"]["min"], book["seconds"]["median"], book["seconds"]["max"]) == (1.0, 2.0, 3.0)
    assert book["every_seed_reached"] and not time_to_target.summary(runs, "live")["every_seed_reached"]
