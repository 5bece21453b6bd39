"""The appendix's figure of the measured effects, on a small hand-made result."""

from __future__ import annotations

import pytest

from transformer_lib.figures.ledger import ledger_effects_figure


def fake_results():
    runs = []
    for seed, (base, warm) in enumerate([(0.80, 0.50), (0.70, 0.50), (0.90, 0.60)]):
        runs.append({"variant": "book", "seed": seed, "exact_match": base, "bleu": 90.0, "valid_loss": 1.0,
                     "beam_search": {"exact_match": base + 0.01, "bleu": 90.5}})
        runs.append({"variant": "warmup", "seed": seed, "exact_match": warm, "bleu": 60.0, "valid_loss": 1.5})
    return {"rows": {"book": {}, "warmup": {}, "beam_search": {}}, "runs": runs}


def test_effects_are_paired_by_seed_with_their_range():
    fig = ledger_effects_figure(fake_results(), "exact_match", {"warmup": "warm-up"})
    mean, seeds = fig.data
    assert list(mean.y) == ["warm-up", "beam_search"]  # sorted by effect, worst first
    assert mean.x[0] == pytest.approx(-100 * (0.30 + 0.20 + 0.30) / 3, abs=1e-4)
    assert mean.error_x.arrayminus[0] == pytest.approx(100 * 0.30 - 100 * 0.8 / 3, abs=1e-4)
    assert mean.error_x.array[0] == pytest.approx(100 * 0.8 / 3 - 100 * 0.20, abs=1e-4)
    assert sorted(seeds.x[:3]) == pytest.approx([-30.0, -30.0, -20.0], abs=1e-4)
    assert mean.marker.symbol != seeds.marker.symbol  # told apart by shape, not colour alone
    assert "exact match" in fig.layout.title.text and fig.layout.xaxis.title.text and fig.layout.yaxis.title.text


def test_a_decoding_row_is_left_out_of_the_loss():
    fig = ledger_effects_figure(fake_results(), "valid_loss")
    assert list(fig.data[0].y) == ["warmup"] and fig.data[0].x[0] == pytest.approx(0.5, abs=1e-4)
    assert "better to the left" in fig.layout.title.text


def test_bad_input():
    with pytest.raises(TypeError, match="results: expected"):  # no mapping: the wrong type
        ledger_effects_figure([], "bleu")
    with pytest.raises(ValueError, match="results: expected"):  # a mapping without 'rows': the wrong value
        ledger_effects_figure({"runs": []}, "bleu")
    with pytest.raises(ValueError, match="measure"):
        ledger_effects_figure(fake_results(), "accuracy")


def test_rows_apart_are_written_not_drawn():
    fig = ledger_effects_figure(fake_results(), "exact_match", {"warmup": "warm-up"}, apart=["warmup"])
    assert list(fig.data[0].y) == ["beam_search"]
    assert "off the scale, not drawn: warm-up: -26.7" in fig.layout.title.text


def test_the_base_row_is_named_by_the_caller():
    """Table 3's base is "base", the ledger's "book": the same effects whatever the base is called."""
    renamed = fake_results()
    renamed["rows"] = {("base" if k == "book" else k): v for k, v in renamed["rows"].items()}
    for run in renamed["runs"]:
        run["variant"] = "base" if run["variant"] == "book" else run["variant"]
    ours = ledger_effects_figure(renamed, "exact_match", base="base")
    assert list(ours.data[0].x) == list(ledger_effects_figure(fake_results(), "exact_match").data[0].x)
    with pytest.raises(ValueError, match=r"^base: expected one of the rows \['base', 'beam_search', 'warmup'\]"):
        ledger_effects_figure(renamed, "exact_match")  # "book" is no row of it
