"""Greedy decoding with and without the key/value cache.

Without a cache, step t runs the whole model on the source and the t tokens so far
(``model(src, prefix)``): the cost of a step grows with t, and of a whole output of
length n with n^2. With the cache, the source is encoded once and step t feeds the
decoder only the newest token; the keys and values of the earlier ones are read back.
The speed-up therefore grows with the output length.

The end-of-sequence token is disabled, so that every output has exactly the requested
length, and the padding token can never be chosen (a prefix containing padding would be
masked differently by the two loops). Both loops must produce the same tokens.

Run alone: ``python benchmarks/bench_decoding.py [--device cuda] [--quick]``.
"""

from __future__ import annotations

import argparse

import harness
import torch
from torch import Tensor

from transformer_lib.config import TransformerConfig
from transformer_lib.models import Transformer

BOS = 1  # the start token fed to the decoder


def next_token(logits: Tensor, pad_id: int) -> Tensor:
    """(B, V) logits of the last position -> (B, 1) most likely token, padding excluded."""
    logits = logits.clone()
    logits[:, pad_id] = float("-inf")
    return logits.argmax(dim=-1, keepdim=True)


@torch.no_grad()
def greedy_uncached(model: Transformer, src: Tensor, length: int) -> Tensor:
    """Every step recomputes everything: ``model(src, prefix)`` on the whole prefix."""
    prefix = torch.full((src.shape[0], 1), BOS, dtype=torch.long, device=src.device)
    for _ in range(length):
        logits = model(src, prefix)[:, -1]  # (B, V), the last position only is used
        prefix = torch.cat([prefix, next_token(logits, model.config.pad_id)], dim=1)
    return prefix[:, 1:]


@torch.no_grad()
def greedy_cached(model: Transformer, src: Tensor, length: int) -> Tensor:
    """The source is encoded once; each step feeds the decoder only the newest token."""
    memory = model.encode(src)  # (B, S, d_model)
    cache = model.new_cache()
    newest = torch.full((src.shape[0], 1), BOS, dtype=torch.long, device=src.device)
    output = []
    for _ in range(length):
        hidden = model.decode(newest, memory, src, cache)  # (B, 1, d_model)
        newest = next_token(model.generator(hidden[:, -1]), model.config.pad_id)
        output.append(newest)
    return torch.cat(output, dim=1)


def run(device: torch.device, quick: bool = False, lengths: tuple[int, ...] = (25, 50, 100, 200),
        batch_size: int = 8, src_len: int = 32) -> dict:
    config = TransformerConfig.preset("small", max_len=max(lengths) + 1)
    torch.manual_seed(0)
    model = Transformer(config).to(device).eval()
    generator = torch.Generator().manual_seed(1)
    src = torch.randint(1, config.src_vocab_size, (batch_size, src_len), generator=generator).to(device)
    rounds, min_run_time = (1, 0.2) if quick else (3, 0.5)

    rows = []
    for length in lengths:
        cached, uncached = greedy_cached(model, src, length), greedy_uncached(model, src, length)
        assert torch.equal(cached, uncached), f"length {length}: cached and uncached decoding disagree"
        assert cached.shape == (batch_size, length)
        times = harness.alternate(
            {"cached": lambda n=length: greedy_cached(model, src, n),
             "uncached": lambda n=length: greedy_uncached(model, src, n)},
            rounds, min_run_time,
        )
        tokens = batch_size * length
        rows.append({
            "length": length,
            "outputs_identical": True,
            "tokens_per_second": {k: harness.summary([tokens / s for s in v]) for k, v in times.items()},
            "seconds": {k: harness.summary(v) for k, v in times.items()},
            "speedup": harness.summary([u / c for c, u in zip(times["cached"], times["uncached"], strict=True)]),
        })
    speedups = [row["speedup"]["median"] for row in rows]
    return {
        "config": "small preset, max_len " + str(config.max_len),
        "batch_size": batch_size,
        "src_len": src_len,
        "rows": rows,
        "speedup_grows_with_length": all(a < b for a, b in zip(speedups, speedups[1:], strict=False)),
    }


def print_table(result: dict) -> None:
    print(f"\nGreedy decoding, batch {result['batch_size']}, source length {result['src_len']}: "
          "generated tokens/s, median [IQR]")
    print(f"{'length':>8}{'with cache':>22}{'without':>22}{'speed-up':>18}")
    for row in result["rows"]:
        c, u, s = row["tokens_per_second"]["cached"], row["tokens_per_second"]["uncached"], row["speedup"]
        print(f"{row['length']:>8}{c['median']:>14.0f} [{c['iqr']:>5.0f}]{u['median']:>14.0f} [{u['iqr']:>5.0f}]"
              f"{s['median']:>10.2f} [{s['iqr']:.2f}]")
    print("outputs identical at every length; speed-up grows with length:", result["speedup_grows_with_length"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    harness.set_threads()
    print_table(run(torch.device(args.device), args.quick))
