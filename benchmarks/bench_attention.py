"""Attention alone: the explicit path (weights materialised) against the fused kernel.

``transformer_lib.attention.scaled_dot_product_attention`` computes
softmax(Q K^T / sqrt(d_k)) V in two ways: with ``need_weights=True`` it writes out the
(B, h, T, T) scores and weights, as the formula reads; with ``need_weights=False`` it calls
PyTorch's fused kernel, which works through the keys block by block and never holds the
whole T x T matrix. Both do about 4 T^2 d_k operations per head, so both times grow as T^2
once T is large; the memory of the explicit path grows as T^2 as well, that of the fused
one only as T.

Memory is the peak of the bytes allocated during the call, on top of the inputs: on a GPU
from ``torch.cuda.max_memory_allocated``, on the CPU from the allocation records of
``torch.profiler`` (``profile_memory=True``).

It also times additive (Bahdanau) attention against the scaled dot product on the same queries
and keys (chapter 4 counts their operations and their largest tensors; the time is measured here,
since no test compares times).

Run alone: ``python benchmarks/bench_attention.py [--device cuda] [--quick]``.
"""

from __future__ import annotations

import argparse
import math

import harness
import torch
from torch.profiler import ProfilerActivity, profile

from transformer_lib.attention import AdditiveAttention, scaled_dot_product_attention

LENGTHS = (64, 128, 256, 512, 1024, 2048, 4096)


def peak_bytes(fn, device: torch.device) -> int:
    """Peak bytes allocated while ``fn`` runs, beyond what was allocated before."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - before
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    # Allocations are recorded on the operator that makes them, releases as "[memory]" events.
    changes = []
    for event in prof.events():
        if event.name == "[memory]":
            changes.append((event.time_range.start, event.cpu_memory_usage))
        elif event.self_cpu_memory_usage:
            changes.append((event.time_range.start, event.self_cpu_memory_usage))
    live = peak = 0
    for _, change in sorted(changes, key=lambda c: c[0]):
        live += change
        peak = max(peak, live)
    return peak


def fit_exponent(lengths: list[int], values: list[float]) -> float:
    """Slope of log(value) against log(length), by least squares: value ~ length^slope."""
    xs, ys = [math.log(n) for n in lengths], [math.log(v) for v in values]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mean_x) ** 2 for x in xs)


def run(device: torch.device, quick: bool = False, batch_size: int = 1, heads: int = 8, d_k: int = 64) -> dict:
    rounds, min_run_time = (1, 0.2) if quick else (5, 0.3)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    generator = torch.Generator().manual_seed(0)
    rows = []
    for length in LENGTHS:
        q, k, v = (torch.randn(batch_size, heads, length, d_k, generator=generator).to(device, dtype)
                   for _ in range(3))

        def explicit(q=q, k=k, v=v):
            return scaled_dot_product_attention(q, k, v, need_weights=True)

        def fused(q=q, k=k, v=v):
            return scaled_dot_product_attention(q, k, v, need_weights=False)

        difference = (explicit()[0] - fused()[0]).abs().max().item()
        times = harness.alternate({"explicit": explicit, "fused": fused}, rounds, min_run_time)
        rows.append({
            "length": length,
            "seconds": {name: harness.summary(t) for name, t in times.items()},
            "peak_bytes": {"explicit": peak_bytes(explicit, device), "fused": peak_bytes(fused, device)},
            "score_matrix_bytes": batch_size * heads * length * length * torch.finfo(dtype).bits // 8,
            "max_output_difference": difference,
        })
    lengths = [row["length"] for row in rows]
    large = [i for i, n in enumerate(lengths) if n >= 512]  # where the T^2 term dominates the time
    exponents = {}
    for name in ("explicit", "fused"):
        seconds = [row["seconds"][name]["median"] for row in rows]
        memory = [row["peak_bytes"][name] for row in rows]
        exponents[name] = {
            "time_all_lengths": fit_exponent(lengths, seconds),
            "time_length_512_up": fit_exponent([lengths[i] for i in large], [seconds[i] for i in large]),
            "memory_all_lengths": fit_exponent(lengths, memory),
        }
    return {"batch_size": batch_size, "heads": heads, "d_k": d_k, "dtype": str(dtype).replace("torch.", ""),
            "mask": None, "rows": rows, "exponents": exponents}


def additive_against_dot_product(device: torch.device, quick: bool = False, d_k: int = 64,
                                 lengths: tuple[int, ...] = (64, 128, 256)) -> list[dict]:
    """Median seconds of additive and scaled dot-product attention, one head, float32, per length."""
    rounds, min_run_time = (1, 0.2) if quick else (5, 0.3)
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    additive = AdditiveAttention(d_k, d_k, d_k).to(device)
    rows = []
    for length in lengths:
        q, k, v = (torch.randn(1, 1, length, d_k, generator=generator).to(device) for _ in range(3))
        with torch.no_grad():
            times = harness.alternate({"dot product": lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v),
                                       "additive": lambda q=q, k=k, v=v: additive(q, k, v)}, rounds, min_run_time)
        rows.append({"length": length, "seconds": {name: harness.summary(t) for name, t in times.items()}})
    return rows


def print_additive(rows: list[dict]) -> None:
    print("\nAdditive against scaled dot-product attention, one head, d_k = d_a = 64, float32: median ms")
    print(f"{'T':>6}{'dot product':>14}{'additive':>12}{'ratio':>8}")
    for row in rows:
        dot, add = row["seconds"]["dot product"]["median"], row["seconds"]["additive"]["median"]
        print(f"{row['length']:>6}{dot * 1e3:>14.3f}{add * 1e3:>12.3f}{add / dot:>7.0f}x")


def print_table(result: dict) -> None:
    print(f"\nAttention forward, batch {result['batch_size']}, {result['heads']} heads, d_k {result['d_k']}, "
          f"{result['dtype']}: median ms [IQR], peak MiB")
    print(f"{'T':>6}{'explicit ms':>20}{'fused ms':>20}{'explicit MiB':>14}{'fused MiB':>11}{'T x T MiB':>11}")
    for row in result["rows"]:
        e, f, m = row["seconds"]["explicit"], row["seconds"]["fused"], row["peak_bytes"]
        print(f"{row['length']:>6}{e['median'] * 1e3:>11.2f} [{e['iqr'] * 1e3:>6.2f}]"
              f"{f['median'] * 1e3:>11.2f} [{f['iqr'] * 1e3:>6.2f}]{m['explicit'] / 2**20:>14.1f}"
              f"{m['fused'] / 2**20:>11.1f}{row['score_matrix_bytes'] / 2**20:>11.1f}")
    for name, fit in result["exponents"].items():
        print(f"{name}: time ~ T^{fit['time_length_512_up']:.2f} for T >= 512 (T^{fit['time_all_lengths']:.2f} "
              f"over all lengths), memory ~ T^{fit['memory_all_lengths']:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    harness.set_threads()
    print_table(run(torch.device(args.device), args.quick))
    print_additive(additive_against_dot_product(torch.device(args.device), args.quick))
