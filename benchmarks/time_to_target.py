"""Chapter 7's live training, timed to its target: seconds and steps to 95 % exact match, seeds 0-2.

What a reader waits for in chapter 7 is the time to the target: ``train_book_model(stop_at_target=True)``
with ``LIVE_RECIPE`` (the book's recipe with batches of 32), checking the validation split every 50 steps
and stopping at the first check that reaches ``target_exact_match`` (confirmed by greedy translation of
the split). The corpus is built before the clock starts, as the chapter builds it in an earlier cell.
The recipe of the shipped model, ``BOOK_RECIPE`` (batches of 128), is timed beside it, paired seed by
seed: the reason chapter 7 trains with the smaller batches.

Beside each run:
* the floor: the floating-point operations of the steps it took (``bench_training.formula_flops``
  for each batch it was served), at the peak this core reaches on one large matrix product;
* ``nn.Transformer`` (``bench_training.TorchTransformer``, our initial weights copied in) trained
  with the same recipe on the same batches for the same number of steps: PyTorch's own layers doing
  the same work (their time to the target is at least this; they have no decoder to check it with).

Every run is on one thread. ``--dispatch`` runs the whole set once per level of PyTorch's CPU
kernels (``native``: the best the processor has; ``avx2``: what a reader's AVX2-only processor
runs), each in a fresh process, one after the other, so that no run shares the machine with another
(as a reader's kernel trains alone).

    python benchmarks/time_to_target.py [--seeds 3] [--dispatch native avx2] [--out book/data/time_to_target.json]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import harness  # noqa: E402 -- first: it sets OpenMP's wait policy before torch starts
import paired_seeds  # noqa: E402
import torch  # noqa: E402
from bench_training import TorchTransformer, copy_weights, formula_flops  # noqa: E402

from transformer_lib.models import Transformer  # noqa: E402
from transformer_lib.pretrained import BOOK_RECIPE, LIVE_RECIPE, book_corpus, book_vocabularies  # noqa: E402
from transformer_lib.pretrained.recipe import BookRecipe, train_book_model  # noqa: E402
from transformer_lib.tokenization import make_batches  # noqa: E402
from transformer_lib.training import batch_order, train  # noqa: E402

DEFAULT_OUT = harness.REPO_ROOT / "book" / "data" / "time_to_target.json"
EVAL_EVERY = 50  # as chapter 7
RECIPES = {"live": LIVE_RECIPE, "book": BOOK_RECIPE}  # chapter 7's, and the shipped model's


def peak_flops(seconds: float = 2.0) -> float:
    """Operations per second of this core on a 1024 x 1024 float32 matrix product (its best block)."""
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    times = harness.measure(lambda: a @ b, seconds)
    return 2 * 1024**3 / min(times)


def served_flops(recipe: BookRecipe, batches: list, steps: int, vocab_sizes: tuple[int, int]) -> float:
    """The matrix products of ``steps`` training steps, batch by batch in the order ``train`` serves them."""
    config = recipe.config(*vocab_sizes)
    total, epoch = 0.0, 0
    while steps > 0:
        for i in batch_order(len(batches), epoch, recipe.seed)[:steps]:
            b = batches[i]
            total += formula_flops(config, b.src.shape[0], b.src.shape[1], b.tgt_in.shape[1])["training_step"]
        steps -= len(batches)
        epoch += 1
    return total


def torch_reference_seconds(recipe: BookRecipe, batches: list, steps: int, vocab_sizes: tuple[int, int],
                            pad_id: int) -> float:
    """``nn.Transformer`` with our initial weights, trained with the recipe on the same batches."""
    torch.manual_seed(recipe.seed)
    ours = Transformer(recipe.config(*vocab_sizes))
    theirs = TorchTransformer(ours.config)
    copy_weights(ours, theirs)
    options = recipe.training.replace(steps=steps, pad_id=pad_id, seed=recipe.seed, progress=False)
    started = time.perf_counter()
    train(theirs, batches, options)
    return time.perf_counter() - started


def worker(name: str, seed: int) -> dict:
    """One recipe from one seed, in a fresh process (one dispatch level, one thread), as a reader's
    kernel runs chapter 7: the process's first optimiser pays torch's one-time imports, as there."""
    torch.set_num_threads(1)
    corpus = book_corpus()
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    sizes = (len(src_vocab), len(tgt_vocab))
    recipe = dataclasses.replace(RECIPES[name], seed=seed)
    started = time.perf_counter()
    _, _, _, history = train_book_model(recipe, stop_at_target=True, corpus=corpus, progress=False,
                                        eval_every=EVAL_EVERY)
    seconds = time.perf_counter() - started
    steps = len(history.losses)
    batches = make_batches(corpus.train, src_vocab, tgt_vocab, recipe.batch_size, shuffle=True, seed=seed,
                           by_length=True)
    last = history.evaluations[-1]  # a check stopped early has only a bound: not reached
    reached = last.get("valid_exact_match", 0.0) >= recipe.target_exact_match
    peak = peak_flops()
    run = {"recipe": name, "seed": seed, "seconds": seconds, "steps": steps, "reached": reached,
           "valid_exact_match": last.get("valid_exact_match", last.get("valid_exact_match_at_most")),
           "eval_seconds": history.eval_time_s, "training_seconds": history.train_time_s,
           "checks": len(history.evaluations), "peak_flops": peak,
           "floor_seconds": served_flops(recipe, batches, steps, sizes) / peak,
           "torch_seconds": torch_reference_seconds(recipe, batches, steps, sizes, tgt_vocab.pad_id)}
    print(f"  {name:<5} seed {seed}: {'reached' if reached else 'NOT reached'} "
          f"{run['valid_exact_match']:.1%} at step {steps} in {seconds:.1f} s (checks {history.eval_time_s:.1f} s; "
          f"floor {run['floor_seconds']:.1f} s, nn.Transformer {run['torch_seconds']:.1f} s)",
          file=sys.stderr, flush=True)
    return run


def level_runs(level: str, seeds: int) -> dict:
    """Every recipe and seed under one dispatch level, one fresh process each, seed by seed."""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    if level != "native":
        env["ATEN_CPU_CAPABILITY"] = level
    runs = []
    for seed in range(seeds):
        for name in RECIPES:  # interleaved, so that a change of load falls on both recipes alike
            out = subprocess.run([sys.executable, __file__, "--run", name, str(seed)], env=env,
                                 stdout=subprocess.PIPE, text=True, check=True).stdout
            runs.append(json.loads(out))
    return {"peak_flops": max(r["peak_flops"] for r in runs), "runs": runs, **paired_seeds.host()}


def summary(runs: list[dict], recipe: str) -> dict:
    mine = [r for r in runs if r["recipe"] == recipe]
    return {key: paired_seeds.spread(r[key] for r in mine)
            for key in ("seconds", "steps", "floor_seconds", "torch_seconds")} | {
        "every_seed_reached": all(r["reached"] for r in mine)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--dispatch", nargs="+", default=["native", "avx2"], choices=["native", "avx2", "default"])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--run", nargs=2, metavar=("RECIPE", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        print(json.dumps(worker(args.run[0], int(args.run[1]))))
        return
    print(f"{', '.join(args.dispatch)} dispatch, one thread, one run at a time, load average {os.getloadavg()}",
          flush=True)
    finished = {level: level_runs(level, args.seeds) for level in args.dispatch}
    results = {}
    for level, result in finished.items():
        result["summary"] = {name: summary(result["runs"], name) for name in RECIPES}
        by_recipe = {name: {r["seed"]: r for r in result["runs"] if r["recipe"] == name} for name in RECIPES}
        # chapter 7's recipe against the shipped model's, seed by seed (negative: live reaches it sooner)
        result["live_vs_book"] = paired_seeds.paired_effects(by_recipe["live"], by_recipe["book"],
                                                             ("seconds", "steps"))
        results[level] = result
        for name, s in result["summary"].items():
            print(f"  {level} {name}: median {s['seconds']['median']:.1f} s [{s['seconds']['min']:.1f}, "
                  f"{s['seconds']['max']:.1f}], {s['steps']['median']:.0f} steps; floor "
                  f"{s['floor_seconds']['median']:.1f} s; nn.Transformer {s['torch_seconds']['median']:.1f} s; "
                  f"every seed reached: {s['every_seed_reached']}")
        effect = result["live_vs_book"]["seconds"]["effect"]
        print(f"  {level} live - book, paired seconds: median {effect['median']:+.1f} "
              f"[{effect['min']:+.1f}, {effect['max']:+.1f}]")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"eval_every": EVAL_EVERY, "target": BOOK_RECIPE.target_exact_match,
                                    "dispatch": results}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
