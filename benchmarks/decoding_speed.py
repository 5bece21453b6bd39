"""How much the key/value cache saves: greedy decoding of 100-token outputs, with and without it.

Without the cache, step t feeds the decoder the whole prefix (t positions) again; with it,
only the newest token, the keys and values of the others being read from the cache. The
outputs must be identical; the script asserts it, then prints the median times and the ratio.

To force 100-token outputs, decoding runs with ``eos_id=None`` (never stop at <eos>), on
the book's model shape with random weights (speed does not depend on the weight values,
and a trained model would stop at <eos> after a few words). ``max_len`` of the config is
raised to 128 so that 100 positions fit the positional table.

Expect the ratio to grow with the batch: for one sentence, this small model does so
little arithmetic per step that the fixed cost of a step (Python and dispatching some
forty module calls, the same with or without the cache) dominates both times.

    PYTHONPATH=. python benchmarks/decoding_speed.py [--threads 2] [--repeats 7] [--batch 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

# Before torch starts OpenMP: idle threads sleep instead of spinning. When other jobs share
# the cores, spinning threads wait on each other (measured: 467 -> 131 ms a training step
# with 2 threads at a load average of 5). Set OMP_WAIT_POLICY yourself to override.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch

from transformer_lib.decoding import greedy_decode
from transformer_lib.models import Transformer
from transformer_lib.training import BOOK_RECIPE

SOS, EOS = 1, 2


def measure(model: Transformer, batch: int, length: int, repeats: int) -> tuple[float, float]:
    """Median seconds for greedy decoding of ``length`` tokens for ``batch`` sources, with and without
    the cache; asserts that both give the same tokens."""
    src = torch.randint(4, model.config.src_vocab_size, (batch, 12), generator=torch.Generator().manual_seed(batch))

    def run(use_cache: bool) -> tuple[float, list[list[int]]]:
        started = time.perf_counter()
        out = greedy_decode(model, src, sos_id=SOS, eos_id=None, max_len=length, use_cache=use_cache)
        return time.perf_counter() - started, out

    run(True), run(False)  # warm-up
    cached_times, uncached_times = [], []
    for _ in range(repeats):  # interleaved, so that a burst of load from other jobs hits both alike
        t_cached, out_cached = run(True)
        t_uncached, out_uncached = run(False)
        assert out_cached == out_uncached, "cached and uncached greedy decoding disagree"
        assert all(len(row) == length for row in out_cached)
        cached_times.append(t_cached)
        uncached_times.append(t_uncached)
    return statistics.median(cached_times), statistics.median(uncached_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--length", type=int, default=100)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    config = BOOK_RECIPE.config(src_vocab_size=200, tgt_vocab_size=330).replace(max_len=128)
    model = Transformer(config).eval()
    print(f"book model shape: d_model={config.d_model}, {config.n_decoder_layers} decoder layers, random weights; "
          f"{args.length}-token outputs (eos_id=None); {args.threads} threads; median of {args.repeats} runs")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"{'batch':>5} {'cached ms':>10} {'uncached ms':>12} {'speed-up':>9}  identical  target 3x")
    for batch in args.batches:
        cached, uncached = measure(model, batch, args.length, args.repeats)
        ratio = uncached / cached
        print(f"{batch:5d} {cached * 1000:10.1f} {uncached * 1000:12.1f} {ratio:8.2f}x  yes        "
              f"{'met' if ratio >= 3 else 'NOT met'}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
