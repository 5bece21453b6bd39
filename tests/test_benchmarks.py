"""The benchmarks' own claims, checked on tiny models (no timing is asserted anywhere).

* the FLOP formula of a training step equals PyTorch's FlopCounterMode count;
* the nn.Transformer wrapper, given our weights, computes our function;
* greedy decoding with the cache gives the tokens of decoding without it;
* the memory measurement sees the T x T matrices of the explicit path and not of the fused one;
* the exponent fit recovers a known power law;
* the tables compute their medians, speed-ups and rates from the timer's figures, checked on a
  scripted timer (so a swapped ratio fails), and ``alternate`` flips the order every round.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench_attention  # noqa: E402
import bench_decoding  # noqa: E402
import bench_training  # noqa: E402

from transformer_lib.attention import scaled_dot_product_attention  # noqa: E402
from transformer_lib.config import TransformerConfig  # noqa: E402
from transformer_lib.models import Transformer  # noqa: E402

from .conftest import torch_threads  # noqa: E402

CPU = torch.device("cpu")


def tiny(**changes) -> TransformerConfig:
    base = dict(src_vocab_size=31, tgt_vocab_size=29, d_model=16, n_heads=2, n_encoder_layers=2,
                n_decoder_layers=3, d_ff=24, max_len=40)
    return TransformerConfig(**(base | changes))


@pytest.mark.parametrize("src_len, tgt_len", [(7, 7), (9, 5)])
def test_flop_formula_equals_pytorchs_count(src_len, tgt_len):
    config = tiny()
    model = Transformer(config)
    src = torch.randint(1, config.src_vocab_size, (3, src_len))
    tgt = torch.randint(1, config.tgt_vocab_size, (3, tgt_len + 1))
    counted, with_attention = bench_training.counted_flops(model, (src, tgt[:, :-1], tgt[:, 1:]))
    formula = bench_training.formula_flops(config, 3, src_len, tgt_len)
    assert not with_attention  # no FLOP formula for the CPU's fused attention kernel
    assert formula["training_step_without_attention"] == counted
    assert formula["training_step"] > counted


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("tie", [False, True])
def test_nn_transformer_wrapper_with_our_weights_computes_our_function(norm_first, tie):
    config = tiny(norm_first=norm_first, tie_output_embedding=tie, share_source_target_embedding=tie,
                  tgt_vocab_size=31)
    ours, theirs = Transformer(config).eval(), bench_training.TorchTransformer(config).eval()
    bench_training.copy_weights(ours, theirs)
    src, tgt_in, _ = bench_training.make_batch(config, 4, 8, CPU)
    assert (src == config.pad_id).any()  # the batch has padding, so the masks are exercised
    torch.testing.assert_close(theirs(src, tgt_in), ours(src, tgt_in), rtol=1e-5, atol=1e-5)


def test_training_step_changes_the_weights_of_both_models():
    config = tiny()
    ours, theirs = Transformer(config), bench_training.TorchTransformer(config)
    bench_training.copy_weights(ours, theirs)
    batch = bench_training.make_batch(config, 2, 6, CPU)
    for model in (ours, theirs):
        before = model.generator.weight.detach().clone()
        bench_training.training_step_fn(model.train(), batch, CPU)()
        assert not torch.equal(before, model.generator.weight)


def test_cached_and_uncached_greedy_decoding_agree():
    config = tiny()
    model = Transformer(config).eval()
    src = bench_decoding.sources(config, 3, 6, CPU)
    assert not (src == config.pad_id).any()
    cached = bench_decoding.decode(model, src, 12, use_cache=True)
    assert [len(row) for row in cached] == [12, 12, 12]  # no stop at <eos>: every output has the full length
    assert not any(config.pad_id in row for row in cached)
    assert cached == bench_decoding.decode(model, src, 12, use_cache=False)


def scripted_timer(monkeypatch, seconds):
    """harness.measure replaced by a script: its n-th call says the timed function took seconds[n]."""
    script = iter(seconds)
    monkeypatch.setattr(bench_decoding.harness, "measure", lambda fn, min_run_time: [next(script)])
    return script


def test_decoding_budget_table_has_a_row_per_batch_with_identical_outputs(monkeypatch):
    # quick: one round per batch, cached timed first; so batch 1 takes 10 ms and 50 ms, batch 2 20 ms and 80 ms
    script = scripted_timer(monkeypatch, [0.010, 0.050, 0.020, 0.080])
    budget = bench_decoding.run_budget(CPU, quick=True, batches=(1, 2), length=5)
    assert next(script, None) is None  # every scripted time was read
    assert [row["batch_size"] for row in budget["rows"]] == [1, 2]
    assert all(row["outputs_identical"] for row in budget["rows"])
    assert [row["speedup"]["median"] for row in budget["rows"]] == pytest.approx([5.0, 4.0])  # uncached / cached
    assert [row["seconds"]["cached"]["median"] for row in budget["rows"]] == [0.010, 0.020]
    # tokens per second: batch x 5 tokens over the seconds
    assert budget["rows"][1]["tokens_per_second"]["uncached"]["median"] == pytest.approx(2 * 5 / 0.080)


def test_alternate_flips_the_order_every_round(monkeypatch):
    calls = []
    monkeypatch.setattr(bench_decoding.harness, "measure", lambda fn, min_run_time: [fn()])
    times = bench_decoding.harness.alternate({"a": lambda: calls.append("a") or 1.0,
                                              "b": lambda: calls.append("b") or 2.0}, rounds=3, min_run_time=0)
    assert calls == ["a", "b", "b", "a", "a", "b"] and times == {"a": [1.0] * 3, "b": [2.0] * 3}


def test_peak_bytes_sees_the_score_matrix_of_the_explicit_path_only():
    q = torch.randn(1, 2, 256, 8)
    score_bytes = 2 * 256 * 256 * 4

    def explicit():
        return scaled_dot_product_attention(q, q, q, need_weights=True)

    def fused():
        return scaled_dot_product_attention(q, q, q, need_weights=False)

    assert bench_attention.peak_bytes(explicit, CPU) >= score_bytes
    assert bench_attention.peak_bytes(fused, CPU) < score_bytes / 4


def test_fit_exponent_recovers_a_power_law():
    lengths = [64, 128, 256, 512]
    assert bench_attention.fit_exponent(lengths, [3e-6 * n**2 for n in lengths]) == pytest.approx(2.0)
    assert bench_attention.fit_exponent(lengths, [5.0 * n for n in lengths]) == pytest.approx(1.0)


def test_additive_benchmark_times_both_attentions_at_each_length(monkeypatch):
    scripted_timer(monkeypatch, [0.001, 0.005, 0.002, 0.009])  # quick: one round, dot product timed first
    rows = bench_attention.additive_against_dot_product(CPU, quick=True, d_k=8, lengths=(4, 8))
    assert [row["length"] for row in rows] == [4, 8]
    assert [{name: row["seconds"][name]["median"] for name in row["seconds"]} for row in rows] == [
        {"dot product": 0.001, "additive": 0.005}, {"dot product": 0.002, "additive": 0.009}]


def test_training_record_stores_both_passes_under_the_dispatch_and_keeps_the_others(monkeypatch, tmp_path):
    # two threads, so that the pass at the process's thread count differs from the pass on one (the
    # tests run on one: tests/conftest.py)
    with torch_threads(2):
        path = tmp_path / "training_speed.json"
        path.write_text('{"AVX2": {"kept": true}}')
        seen = []

        def run(device, quick=False, rounds=None):  # one scripted model per pass: its ratio is the pass's thread count
            seen.append((torch.get_num_threads(), bench_training.harness.CLOCK, rounds))
            ratio = bench_training.harness.summary([float(torch.get_num_threads())])
            return [{"name": "small", "batch_size": 2, "src_len": 3, "ratio_ours_over_torch": ratio,
                     "ratio_per_round": [ratio["median"]], "tokens_per_second": {}, "step_seconds": {}, "mfu": {}}]

        monkeypatch.setattr(bench_training, "run", run)
        monkeypatch.setattr(bench_training, "print_table", lambda results: None)
        monkeypatch.setattr(bench_training.harness, "dispatch", lambda: {"cpu_dispatch": "AVX512"})
        threads = torch.get_num_threads()
        stored = bench_training.record(5, path)
        assert stored == __import__("json").loads(path.read_text())
        assert stored["AVX2"] == {"kept": True} and stored["AVX512"]["environment"]["cpu_dispatch"] == "AVX512"
        passes = stored["AVX512"]["passes"]
        assert [p["timing"] for p in passes] == [{"threads": threads, "clock": "wall-clock time"},
                                                {"threads": 1, "clock": "process CPU time"}]
        assert [p["models"][0]["ratio_ours_over_torch"]["median"] for p in passes] == [threads, 1.0]
        assert [(t, clock is not None, r) for t, clock, r in seen] == [(threads, False, 5), (1, True, 5)]
        assert torch.get_num_threads() == threads and bench_training.harness.CLOCK is None  # restored
