"""Greedy decoding with and without the key/value cache: the library's own ``greedy_decode``, both ways.

Without the cache (``use_cache=False``), step t feeds the decoder the whole prefix again
(t positions), the source having been encoded once; with it, only the newest token, the
keys and values of the others being read back. Step t then costs 1 position instead of t,
so the saving grows with the output length, and with the batch: the more arithmetic a
position costs, the less the fixed cost of a step (Python and some fifty module calls,
the same with or without the cache) weighs.

Every output is forced to the requested length (``eos_id=None``: never stop at <eos>; a
trained model would stop after a few words), so the models get random weights: speed does
not depend on the weight values. Both ways must give the same tokens; this is asserted
before anything is timed.

Two tables:

* the budget (issue 3): the book's model shape, 100-token outputs, batches of 1, 8, 32 and
  256 sentences (256 is what ``evaluation.translate_batch`` decodes at a time); target 3x;
* the appendix: the ``small`` preset, batch 8, outputs of 25 to 200 tokens.

Run alone: ``python benchmarks/bench_decoding.py [--device cuda] [--quick] [--threads 1 --cpu-time]``.
"""

from __future__ import annotations

import argparse

import harness
import torch
from torch import Tensor

from transformer_lib.config import TransformerConfig
from transformer_lib.decoding import greedy_decode
from transformer_lib.models import Transformer
from transformer_lib.pretrained import BOOK_RECIPE
from transformer_lib.vocabulary import SpecialIds

SOS = 1  # the start token fed to the decoder
BUDGET_RATIO = 3.0  # issue 3: cached greedy decoding at least 3x faster for 100-token outputs
BUDGET_LENGTH = 100
BUDGET_BATCHES = (1, 8, 32, 256)
BOOK_VOCAB_SIZES = (200, 330)  # about the book corpus's source and target vocabularies


def decode(model: Transformer, src: Tensor, length: int, use_cache: bool) -> list[list[int]]:
    """Exactly ``length`` greedy tokens per source row (no stop at <eos>)."""
    return greedy_decode(model, src, special=SpecialIds(SOS, None), max_len=length, use_cache=use_cache)


def compare(model: Transformer, src: Tensor, length: int, rounds: int, min_run_time: float) -> dict:
    """Checks that both ways give the same ``length`` tokens per row, then times them alternately."""
    cached, uncached = decode(model, src, length, True), decode(model, src, length, False)
    assert cached == uncached, f"length {length}: cached and uncached greedy decoding disagree"
    assert all(len(row) == length for row in cached)
    times = harness.alternate(
        {"cached": lambda: decode(model, src, length, True),
         "uncached": lambda: decode(model, src, length, False)},
        rounds, min_run_time,
    )
    tokens = src.shape[0] * length
    return {
        "outputs_identical": True,
        "tokens_per_second": {k: harness.summary([tokens / s for s in v]) for k, v in times.items()},
        "seconds": {k: harness.summary(v) for k, v in times.items()},
        "speedup": harness.summary([u / c for c, u in zip(times["cached"], times["uncached"], strict=True)]),
    }


def sources(config: TransformerConfig, batch_size: int, src_len: int, device: torch.device) -> Tensor:
    """Random source ids without <pad> (id 0), so that no row is padded."""
    generator = torch.Generator().manual_seed(batch_size)
    return torch.randint(1, config.src_vocab_size, (batch_size, src_len), generator=generator).to(device)


def run_budget(device: torch.device, quick: bool = False, batches: tuple[int, ...] = BUDGET_BATCHES,
               length: int = BUDGET_LENGTH, src_len: int = 12) -> dict:
    """The book's model shape (``BOOK_RECIPE``), ``length``-token outputs, one row per batch size."""
    # max_len raised from 64 so that 100 positions fit the positional table (its size costs nothing per step)
    config = BOOK_RECIPE.config(*BOOK_VOCAB_SIZES).replace(max_len=max(length, src_len) + 1)
    torch.manual_seed(0)
    model = Transformer(config).to(device).eval()
    rounds, min_run_time = (1, 0.2) if quick else (5, 0.5)
    rows = [{"batch_size": batch, **compare(model, sources(config, batch, src_len, device), length,
                                            rounds, min_run_time)}
            for batch in batches]
    return {"config": f"book model shape (d_model {config.d_model}, {config.n_decoder_layers} decoder layers)",
            "length": length, "src_len": src_len, "target": BUDGET_RATIO, "rows": rows}


def run(device: torch.device, quick: bool = False, lengths: tuple[int, ...] = (25, 50, 100, 200),
        batch_size: int = 8, src_len: int = 32) -> dict:
    """The ``small`` preset at one batch size, one row per output length; with the budget table."""
    config = TransformerConfig.preset("small", max_len=max(lengths) + 1)
    torch.manual_seed(0)
    model = Transformer(config).to(device).eval()
    src = sources(config, batch_size, src_len, device)
    rounds, min_run_time = (1, 0.2) if quick else (3, 0.5)
    rows = [{"length": length, **compare(model, src, length, rounds, min_run_time)} for length in lengths]
    speedups = [row["speedup"]["median"] for row in rows]
    return {
        "config": "small preset, max_len " + str(config.max_len),
        "batch_size": batch_size,
        "src_len": src_len,
        "rows": rows,
        "speedup_grows_with_length": all(a < b for a, b in zip(speedups, speedups[1:], strict=False)),
        "budget": run_budget(device, quick),
    }


def print_budget(budget: dict) -> None:
    print(f"\nBudget: cached greedy decoding >= {budget['target']:g}x faster, {budget['length']}-token outputs, "
          f"{budget['config']}; median [IQR] of the per-round ratio")
    print(f"{'batch':>6}{'cached ms':>12}{'uncached ms':>13}{'speed-up':>17}  identical  target")
    for row in budget["rows"]:
        c, u, s = row["seconds"]["cached"], row["seconds"]["uncached"], row["speedup"]
        verdict = "met" if s["median"] >= budget["target"] else "NOT met"
        print(f"{row['batch_size']:>6}{c['median'] * 1e3:>12.1f}{u['median'] * 1e3:>13.1f}"
              f"{s['median']:>9.2f}x [{s['iqr']:.2f}]  yes        {verdict}")


def print_table(result: dict) -> None:
    print(f"\nGreedy decoding, {result['config']}, batch {result['batch_size']}, source length {result['src_len']}: "
          "generated tokens/s, median [IQR]")
    print(f"{'length':>8}{'with cache':>22}{'without':>22}{'speed-up':>18}")
    for row in result["rows"]:
        c, u, s = row["tokens_per_second"]["cached"], row["tokens_per_second"]["uncached"], row["speedup"]
        print(f"{row['length']:>8}{c['median']:>14.0f} [{c['iqr']:>5.0f}]{u['median']:>14.0f} [{u['iqr']:>5.0f}]"
              f"{s['median']:>10.2f} [{s['iqr']:.2f}]")
    print("outputs identical at every length; speed-up grows with length:", result["speedup_grows_with_length"])
    print_budget(result["budget"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--budget-only", action="store_true", help="only the budget table")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    parser.add_argument("--cpu-time", action="store_true", help="time with the process's CPU time (use 1 thread)")
    args = parser.parse_args()
    device = torch.device(args.device)
    with harness.timing(threads=args.threads or harness.set_threads(), cpu_time=args.cpu_time) as settings:
        print(f"{settings['threads']} thread(s), {settings['clock']}, load average "
              f"{harness.environment(device)['loadavg_1_5_15']}")
        if args.budget_only:
            print_budget(run_budget(device, args.quick))
        else:
            print_table(run(device, args.quick))
