"""The ledger of departures from the paper against the code: each row's values are read here
independently (recipe fields, config presets, function defaults) and must be what the row says."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import pytest
import torch

from transformer_lib import decoding, evaluation, paper, residual, training
from transformer_lib.config import PRESETS, TransformerConfig
from transformer_lib.positional_encoding import sinusoidal_table
from transformer_lib.pretrained import recipe
from transformer_lib.pretrained.recipe import BOOK_RECIPE

ROOT = Path(__file__).resolve().parent.parent


def default(function, name):
    return inspect.signature(function).parameters[name].default


def test_every_row_is_up_to_date_with_the_code():
    stale = [d.key for d in paper.LEDGER if not d.up_to_date]
    assert not stale, f"rows whose text was written for another value than the code's: {stale}"


def test_keys_are_unique_and_rows_complete():
    keys = [d.key for d in paper.LEDGER]
    assert len(keys) == len(set(keys))
    for d in paper.LEDGER:
        assert d.paper and d.section and d.book and d.where and d.why, d.key
        assert (ROOT / "book" / f"{d.chapter}.ipynb").exists(), f"{d.key}: no chapter {d.chapter}"
        if d.differs and not d.measured:
            assert d.scale_note, f"{d.key}: a departure not measured must say why"


@pytest.mark.parametrize(("key", "value"), [
    ("data", BOOK_RECIPE.n_pairs),
    ("batching", BOOK_RECIPE.batch_size),
    ("steps", BOOK_RECIPE.training.steps),
    ("warmup", BOOK_RECIPE.training.warmup),
    ("learning_rate", BOOK_RECIPE.training.lr_scale),
    ("label_smoothing", BOOK_RECIPE.training.label_smoothing),
    ("gradient_clipping", next(f.default for f in dataclasses.fields(training.TrainingOptions)
                               if f.name == "clip_norm")),
    ("optimizer", (*training.paper_adam([torch.zeros(1, requires_grad=True)]).defaults["betas"],
                   training.paper_adam([torch.zeros(1, requires_grad=True)]).defaults["eps"])),
    ("dropout", (PRESETS["book"].dropout, PRESETS["book"].attention_dropout)),
    ("weight_tying", (PRESETS["book"].tie_output_embedding, PRESETS["book"].share_source_target_embedding)),
    ("layer_norm_eps", PRESETS["book"].layer_norm_eps),
    ("norm_placement", PRESETS["book"].norm_first),
    ("beam_search", default(evaluation.evaluate_translation, "beam_size")),
])
def test_row_values_equal_the_code(key, value):
    assert paper.row(key).written_for == value  # the prose was written for the value the code holds now


@pytest.mark.parametrize(("key", "field"), [("data", "n_pairs"), ("batching", "batch_size"), ("steps", "steps"),
                                            ("warmup", "warmup"), ("learning_rate", "lr_scale"),
                                            ("label_smoothing", "label_smoothing")])
def test_a_row_reads_the_recipe_as_it_is_now(key, field, monkeypatch):
    """The ledger's values are read from the code at each call, not copied: change the recipe, and the
    row's value follows while the value its prose was written for stays (the first test then fails)."""
    own = field in ("n_pairs", "batch_size")  # the recipe's own fields; the others are its TrainingOptions'
    changed = getattr(BOOK_RECIPE if own else BOOK_RECIPE.training, field) * 2
    switched = (dataclasses.replace(BOOK_RECIPE, **{field: changed}) if own
                else BOOK_RECIPE.with_training(**{field: changed}))
    monkeypatch.setattr(recipe, "BOOK_RECIPE", switched)
    assert paper.row(key).book_value() == changed != paper.row(key).written_for


@pytest.mark.parametrize(("key", "field", "changed"), [
    ("dropout", "dropout", 0.3), ("layer_norm_eps", "layer_norm_eps", 1e-6), ("norm_placement", "norm_first", True),
    ("weight_tying", "tie_output_embedding", True)])
def test_a_row_reads_the_recipes_model_as_it_is_now(key, field, changed, monkeypatch):
    """The rows about the model read the recipe's model, not a copy of its values: change it, and the row follows."""
    switched = dataclasses.replace(BOOK_RECIPE, model=dataclasses.replace(BOOK_RECIPE.model, **{field: changed}))
    monkeypatch.setattr(recipe, "BOOK_RECIPE", switched)
    value = paper.row(key).book_value()
    assert changed in (value if isinstance(value, tuple) else (value,)) and value != paper.row(key).written_for


def test_model_size_row():
    book, base = PRESETS["book"], PRESETS["base"]
    assert BOOK_RECIPE.model == book
    row = paper.row("model_size")
    assert row.book_value() == {"d_model": book.d_model, "n_heads": book.n_heads, "layers": book.n_encoder_layers,
                                "d_ff": book.d_ff}
    assert book.n_encoder_layers == book.n_decoder_layers
    assert row.paper_value == {"d_model": base.d_model, "n_heads": base.n_heads, "layers": base.n_encoder_layers,
                               "d_ff": base.d_ff}
    assert base.tie_output_embedding and base.share_source_target_embedding  # the weight-tying row's paper value
    assert paper.row("weight_tying").paper_value == (True, True)


def test_measured_rules():
    # the output limit: 2 x input + 10 without a model, capped by config.max_len with one
    assert [decoding.default_max_len(None, n) for n in (1, 5, 20)] == [12, 20, 50]
    assert paper.row("max_output_length").book_value() == "2 x input + 10"
    # LayerNorm's variance: the library's written-out formula agrees with torch's biased one
    x = torch.randn(3, 8, dtype=torch.float64)
    ones, zeros = torch.ones(8, dtype=torch.float64), torch.zeros(8, dtype=torch.float64)
    expected = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    torch.testing.assert_close(residual.layer_norm(x, ones, zeros), expected)
    assert paper.row("layer_norm_variance").book_value() == "biased"
    assert default(sinusoidal_table, "dtype") == torch.float32
    assert "float32" in paper.row("positional_dtype").book_value()
    assert paper.row("tokens").book_value() == "word level"
    src, tgt = recipe.book_vocabularies(recipe.book_corpus())
    assert src is not tgt and len(src) != len(tgt)  # one vocabulary per language: no shared embedding possible


def test_paper_values_equal_the_librarys_paper_constants():
    assert paper.PAPER["warmup"] == training.PAPER_WARMUP == 4000
    assert paper.row("optimizer").paper_value == (*training.PAPER_BETAS, training.PAPER_EPS) == (0.9, 0.98, 1e-9)
    assert paper.row("label_smoothing").paper_value == training.PAPER_LABEL_SMOOTHING
    # the library's beam search defaults are the paper's
    assert (default(decoding.beam_search, "beam_size"), default(decoding.beam_search, "alpha")) == (4, 0.6)
    assert (paper.PAPER["beam_size"], paper.PAPER["alpha"]) == (4, 0.6)
    assert PRESETS["base"].dropout == 0.1 and PRESETS["big"].dropout == 0.3


def test_paper_results_stated_once_from_table_2():
    r = paper.PAPER_RESULTS
    assert r["bleu"] == {"EN-DE": {"base": 27.3, "big": 28.4}, "EN-FR": {"base": 38.1, "big": 41.8}}
    assert "12 hours" in r["training_time"]["base"] and "3.5 days" in r["training_time"]["big"]
    note = paper.row("data").scale_note
    assert all(str(v) in note for scores in r["bleu"].values() for v in scores.values())


def test_switches_restore_the_papers_values(monkeypatch):
    """Applying each row's switch to the recipe makes the row match the paper, and the ledger shows it."""
    p = paper.PAPER
    switched = dataclasses.replace(
        BOOK_RECIPE.with_training(warmup=p["warmup"], lr_scale=p["lr_scale"]),
        model=BOOK_RECIPE.model.replace(tie_output_embedding=True, layer_norm_eps=p["layer_norm_eps"]))
    monkeypatch.setattr(recipe, "BOOK_RECIPE", switched)
    for key in ("warmup", "learning_rate", "layer_norm_eps"):
        assert not paper.row(key).differs and not paper.row(key).up_to_date, key
    assert paper.row("weight_tying").book_value() == (True, False)  # the source side needs one vocabulary
    table = paper.ledger()
    warmup = next(r for r in table.rows if r["key"] == "warmup")
    assert warmup["book"] == "warmup_steps = 4000" and warmup["matches_paper"] and not warmup["up_to_date"]
    assert "changed since the row was written" in table._repr_html_()
    assert "CHANGED" in repr(table)


def test_ledger_display_escapes_html():
    page = paper.ledger()._repr_html_()
    assert page.startswith("<table>") and "<th scope='col'>paper</th>" in page
    assert "&quot;We used warmup_steps = 4000&quot;" in page  # quotes escaped, never raw markup
    assert len(paper.ledger().to_dataframe()) == len(paper.LEDGER)


def test_row_rejects_an_unknown_key():
    with pytest.raises(ValueError, match="key: expected one of"):
        paper.row("no such row")


def test_appendix_shows_this_ledger():
    """The appendix's table is the ledger as the code has it, each row linked to its chapter."""
    nb = json.loads((ROOT / "book" / "paper_ledger.ipynb").read_text())
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    table = paper.ledger_markdown()
    assert any(table in s for s in sources), "re-write the appendix's table from paper.ledger_markdown()"
    for d in paper.LEDGER:
        assert f"]({d.chapter}.ipynb)" in table


def test_benchmark_results_cover_the_measured_rows():
    results = json.loads((ROOT / "book" / "data" / "paper_ledger.json").read_text())
    measured = {d.key for d in paper.LEDGER if d.measured}
    assert measured <= set(results["rows"]), measured - set(results["rows"])
    assert set(results["rows"]) <= measured | {"book", "paper_recipe"}
    assert results["seeds"] >= 3
    for key in measured:
        row = results["rows"][key]
        # every seed of the row was run (or, if the run was cut short, the seeds it got to, said so)
        assert set(row["seeds"]) <= set(range(results["seeds"]))
        if results["complete"]:  # three seeds, or one where the first moved the exact match a lot
            large = key in results["seed_0_only"]
            assert len(row["seeds"]) == (1 if large else results["seeds"]), key
            if large:
                assert abs(row["exact_match_effect"]) >= results["large_effect"], key
        assert row["exact_match_effect_min"] <= row["exact_match_effect"] <= row["exact_match_effect_max"]
    assert results["paper_results"] == json.loads(json.dumps(paper.PAPER_RESULTS))
    assert isinstance(TransformerConfig(**results["model"]), TransformerConfig)
