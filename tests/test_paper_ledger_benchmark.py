"""benchmarks/paper_ledger.py's own pieces: effects paired by seed, the paper's output-length limit,
and the variants restoring exactly the ledger's paper values."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import paper_ledger  # noqa: E402

from transformer_lib import paper  # noqa: E402
from transformer_lib.evaluation import translate_batch  # noqa: E402
from transformer_lib.pretrained import book_corpus, book_model  # noqa: E402


def run(variant, seed, em, loss=1.0, **extra):
    return {"variant": variant, "seed": seed, "exact_match": em, "bleu": 100 * em, "valid_loss": loss, **extra}


def test_effects_are_paired_by_seed():
    runs = [run("book", 0, 0.8, beam_search={"exact_match": 0.9, "bleu": 90.0},
                max_output_length={"exact_match": 0.8, "bleu": 80.0},
                checkpoint_averaging={"exact_match": 0.7, "bleu": 70.0, "valid_loss": 1.5}),
            run("book", 1, 0.6, beam_search={"exact_match": 0.6, "bleu": 60.0},
                max_output_length={"exact_match": 0.6, "bleu": 60.0},
                checkpoint_averaging={"exact_match": 0.6, "bleu": 60.0, "valid_loss": 1.0}),
            run("warmup", 0, 0.5, 2.0), run("warmup", 1, 0.5, 3.0),
            run("weight_tying", 2, 0.9)]  # no book run of seed 2 yet: left out, not compared with another seed
    rows = paper_ledger.summarise(runs)
    assert rows["warmup"]["exact_match_effect"] == pytest.approx(-0.2)  # (-0.3 + -0.1) / 2
    assert (rows["warmup"]["exact_match_effect_min"], rows["warmup"]["exact_match_effect_max"]) == \
        pytest.approx((-0.3, -0.1))
    assert rows["warmup"]["valid_loss_effect"] == pytest.approx(1.5)
    assert rows["beam_search"]["exact_match_effect"] == pytest.approx(0.05)
    assert rows["beam_search"]["valid_loss_effect"] == 0  # decoding does not change the loss
    assert rows["checkpoint_averaging"]["valid_loss_effect"] == pytest.approx(0.25)
    assert "weight_tying" not in rows
    assert rows["book"]["exact_match"] == pytest.approx(0.7) and rows["book"]["exact_match_min"] == 0.6


def test_variants_restore_the_ledgers_paper_values():
    variants = paper_ledger._variants()
    assert variants["book"] == {}
    assert variants["warmup"]["recipe"] == {"warmup": 4000}
    assert variants["learning_rate"]["recipe"] == {"lr_scale": 1.0}
    assert variants["gradient_clipping"] == {"clip_norm": None}
    assert variants["weight_tying"]["model"] == {"tie_output_embedding": True}
    assert variants["layer_norm_eps"]["model"] == {"layer_norm_eps": 1e-6}
    measured = {d.key for d in paper.LEDGER if d.measured}
    assert set(variants) - {"book", "paper_recipe"} | {"beam_search", "max_output_length",
                                                         "checkpoint_averaging"} == measured


def test_input_plus_50_decodes_each_length_with_its_own_limit():
    shipped = book_model()
    model, src_vocab, tgt_vocab = shipped.model, shipped.src_vocab, shipped.tgt_vocab
    pairs = book_corpus().test[:40]
    ours = paper_ledger._decode(model, pairs, src_vocab, tgt_vocab, input_plus=50)
    # one sentence at a time, each with min(its length + 50, the table's 64 positions)
    expected = [translate_batch(model, [s], src_vocab, tgt_vocab,
                                max_len=min(len(src_vocab.encode(s)) + 50, model.config.max_len))[0]
                for s, _ in pairs]
    assert ours == expected
