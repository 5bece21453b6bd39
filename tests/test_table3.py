"""benchmarks/table3.py: the paper's Table 3 at the book's scale, on paired seeds, and its quick mode."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import paired_seeds  # noqa: E402
import table3  # noqa: E402

from transformer_lib.pretrained import BOOK_RECIPE  # noqa: E402
from transformer_lib.pretrained.ablations import TABLE3_VARIANTS  # noqa: E402


def run(variant: str, seed: int, em: float) -> dict:
    scores = {"exact_match": em, "bleu": 100 * em, "perplexity": 2 - em}
    return {"variant": variant, "seed": seed, "parameters": 1, "budgets": {"10": scores, "20": scores}}


def test_effects_are_paired_seed_by_seed():
    runs = [run("base", 0, 0.5), run("base", 1, 0.9), run("rope", 0, 0.6), run("rope", 1, 0.8),
            run("layers_1", 2, 0.1)]  # no base run of seed 2: left out, never compared with another seed
    rows = table3.summarise(runs, (10, 20))
    effect = rows["rope"]["budgets"]["20"]["exact_match"]["effect"]
    assert (effect["min"], effect["max"]) == pytest.approx((-0.1, 0.1))  # +0.1 on seed 0, -0.1 on seed 1
    assert rows["rope"]["budgets"]["20"]["exact_match"]["values"]["median"] == pytest.approx(0.7)
    assert "layers_1" not in rows
    assert paired_seeds.paired_effects is table3.summarise.__globals__["paired_effects"]  # one implementation


def test_variants_are_the_papers_rows_at_the_books_scale():
    rows = {name: v.row for name, v in TABLE3_VARIANTS.items()}
    assert set(rows.values()) == {"base", "A", "B", "C", "D", "E", "-"} and len(rows) >= 15
    for variant in TABLE3_VARIANTS.values():
        config = variant.book_recipe(seed=1).config(10, 10)
        if variant.row == "A":  # heads at fixed compute: d_k * h = d_model
            assert config.d_k * config.n_heads == BOOK_RECIPE.model.d_model
        assert variant.book_recipe(seed=1).seed == 1 + variant.seed_offset  # the placebo: 1001
    assert TABLE3_VARIANTS["base"].book_recipe(0) == BOOK_RECIPE


def test_narrow_keys_shrink_queries_and_keys_only():
    from transformer_lib.models import Transformer
    variant = TABLE3_VARIANTS["d_k_half"]
    model = variant.adapt()(Transformer(BOOK_RECIPE.config(12, 14)))
    narrowed = [m for m in model.modules() if hasattr(m, "d_qk")]
    assert narrowed and all(m.d_qk == variant.narrow_d_k < m.d_k for m in narrowed)
    assert all(m.w_q.out_features == m.n_heads * m.d_qk and m.w_v.out_features == m.d_model for m in narrowed)


QUICK = [sys.executable, str(ROOT / "benchmarks" / "table3.py"), "--quick"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``table3.py --quick`` once (its worker pool), for the tests of what it writes and of what a second run
    of the same file does."""
    out = tmp_path_factory.mktemp("table3") / "table3.json"
    subprocess.run([*QUICK, "--out", str(out)], check=True, cwd=ROOT, capture_output=True, text=True)
    return out


def test_quick_mode_writes_both_budgets_for_both_variants(quick_run):
    data = json.loads(quick_run.read_text())
    assert data["complete"] and data["quick"] and data["budgets"] == list(table3.QUICK["budgets"])
    assert {(r["variant"], r["seed"]) for r in data["runs"]} == {(v, s) for v in table3.QUICK["variants"]
                                                                  for s in range(table3.QUICK["seeds"])}
    for row in data["rows"].values():
        for step in map(str, table3.QUICK["budgets"]):
            assert set(row["budgets"][step]) == set(table3.MEASURES)
    base = data["rows"]["base"]["budgets"]["40"]["perplexity"]["effect"]
    assert base["min"] == base["max"] == 0  # the base paired with itself
    assert data["host"]["before"]["cpu"] and data["host"]["before"]["torch"]


def test_a_readers_run_is_compared_with_the_stored_spread():
    from transformer_lib.pretrained.ablations import compare_with_table3
    runs = [run("base", 0, 0.5), run("base", 1, 0.9), run("rope", 0, 0.6), run("rope", 1, 0.8)]
    data = {"budgets": [10, 20], "rows": table3.summarise(runs, (10, 20)), "runs": runs}
    text = compare_with_table3(data, {"variant": "rope", "seed": 0, "budgets": {"20": {"exact_match": 0.9}}})
    assert "exact match 90.0%; stored seeds 60.0% to 80.0% (outside their range)" in text
    assert "against the stored base of seed 0: +40.0 points; stored changes -10.0 to +10.0" in text
    inside = compare_with_table3(data, {"variant": "rope", "seed": 1, "budgets": {"10": {"exact_match": 0.7}}})
    assert "(inside their range)" in inside and "-20.0 points" in inside
    with pytest.raises(ValueError, match="run"):
        compare_with_table3(data, {"variant": "heads_1", "seed": 0, "budgets": {}})


def test_claims_are_the_one_rules() -> None:
    from transformer_lib.pretrained.ablations import table3_claim, table3_verdict
    seeds = range(5)
    base = [0.5, 0.9, 0.7, 0.6, 0.8]
    runs = [run("base", s, em) for s, em in zip(seeds, base, strict=True)]
    runs += [run("heads_1", s, em - 0.1 - 0.01 * s) for s, em in zip(seeds, base, strict=True)]  # -10 to -14 points
    runs += [run("rope", s, em + d) for s, em, d in zip(seeds, base, (0.02, -0.03, 0.01, -0.01, 0.0), strict=True)]
    runs += [run("layers_1", s, em + 0.1) for s, em in zip(range(3), base[:3], strict=True)]  # three seeds only
    data = {"budgets": [10, 20], "rows": table3.summarise(runs, (10, 20)), "runs": runs}
    assert table3_claim(data, "heads_1", 20) == "worse (-12.0 points [-14.0, -10.0], 5 seeds)"
    assert table3_claim(data, "rope", 20).startswith("within the noise (-0.2 points [")
    assert table3_verdict(data, "layers_1", 20).word == "fewer than 5 seeds"  # every seed +10 points: no verdict
    # perplexity (here 2 - exact match): lower is better, the minimum 2 % of the base's median
    assert table3_verdict(data, "heads_1", 20, "perplexity").word == "worse"


def test_bad_table_and_run_are_named_and_nan_is_refused_not_printed_as_a_percentage():
    from transformer_lib.pretrained.ablations import compare_with_table3, load_table3, table3_effect
    data = load_table3()
    budget = str(data["budgets"][0])
    with pytest.raises(ValueError, match=r"^run\['budgets'\]\['" + budget + r"'\]\['exact_match'\]: expected a finite"):
        compare_with_table3(data, {"variant": "rope", "seed": 0, "budgets": {budget: {"exact_match": float("nan")}}})
    with pytest.raises(ValueError, match=r"^run: expected the result of run_table3, with 'variant'"):
        compare_with_table3(data, {"seed": 0})  # was a bare KeyError: 'variant'
    with pytest.raises(ValueError, match=r"^data: expected the JSON of benchmarks/table3.py"):
        compare_with_table3({"rows": {}}, {"variant": "rope", "seed": 0, "budgets": {}})
    with pytest.raises(TypeError, match=r"^variant: expected a variant of the stored table"):
        table3_effect(data, ["rope"], data["budgets"][0])  # was a bare TypeError: unhashable type: 'list'
    with pytest.raises(ValueError, match=r"^data: expected the JSON"):
        table3_effect({}, "rope", data["budgets"][0])  # was a bare KeyError: 'rows'


def test_the_placebo_is_the_base_from_other_seeds() -> None:
    from transformer_lib.pretrained.ablations import PLACEBO, PLACEBO_SEEDS
    placebo = TABLE3_VARIANTS[PLACEBO].book_recipe(3)
    assert placebo.seed == PLACEBO_SEEDS + 3 and placebo == TABLE3_VARIANTS["base"].book_recipe(PLACEBO_SEEDS + 3)


def test_the_benchmark_appends_and_refuses_to_mix(quick_run, tmp_path) -> None:
    out = tmp_path / "table3.json"
    shutil.copy(quick_run, out)
    first = json.loads(out.read_text())
    again = subprocess.run([*QUICK, "--out", str(out), "--workers", "1"], check=True, cwd=ROOT, capture_output=True,
                           text=True)
    assert "4 runs kept, 0 to go" in again.stdout
    second = json.loads(out.read_text())
    assert second["runs"] == first["runs"] and len(second["sessions"]) == 2  # nothing rerun, nothing overwritten
    refused = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "table3.py"), "--out", str(out)],
                             cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode != 0 and "quick" in refused.stderr and json.loads(out.read_text()) == second


def test_a_stored_run_taken_on_to_more_budgets_replaces_it_only_if_it_measures_the_same() -> None:
    at_10 = {"exact_match": 0.5, "bleu": 60.0, "perplexity": 2.0}
    stored = [{"variant": "base", "seed": 0, "budgets": {"10": at_10}},
              {"variant": "rope", "seed": 0, "budgets": {"10": at_10}}]
    longer = {"variant": "base", "seed": 0, "budgets": {"10": dict(at_10), "20": {**at_10, "exact_match": 0.7}}}
    assert table3.merged(stored, [longer]) == [stored[1], longer]  # the stored run of base lives on in the longer one
    new_seed = {**longer, "seed": 1}
    assert table3.merged(stored, [new_seed]) == [*stored, new_seed]
    drifted = {**longer, "budgets": {**longer["budgets"], "10": {**at_10, "perplexity": 2.0 * (1 + 1e-6)}}}
    with pytest.raises(SystemExit, match="base seed 0 at 10 steps: stored .* measured again"):
        table3.merged(stored, [drifted])
