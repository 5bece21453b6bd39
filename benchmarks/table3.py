"""The paper's Table 3 at the book's scale: the book's model varied one part at a time, on paired seeds.

The paper (Vaswani et al. 2017, Table 3) varies its base model row by row: (A) the number of heads
at fixed compute, (B) a smaller d_k, (C) depth and width, (D) dropout and label smoothing, (E)
learned positions. ``transformer_lib.pretrained.ablations.TABLE3_VARIANTS`` holds the same rows
for the book's model (plus RoPE, which the paper does not have). Each variant is trained from
three seeds, paired with the base's runs of the same seeds (``paired_seeds``), on the book's corpus
(seed 0 for every run), and measured twice in the same run: at the live budget (chapter 7's run,
``BOOK_STEPS``) and at the shipped model's budget (``BOOK_RECIPE.training.steps``). The schedule does not
depend on the number of steps, so the first measurement is the same model a run stopped there would
give; measuring in eval mode draws no random number, so the run goes on as if unmeasured.

Each measurement: greedy exact match and BLEU of the validation split, and the perplexity
(exp of the cross-entropy per target token, teacher forcing, no smoothing) on the same split.

    python benchmarks/table3.py [--seeds 3] [--workers 2] [--out transformer_lib/pretrained/table3.json] [--resume]
    python benchmarks/table3.py --quick   # two variants, two seeds, short budgets: a check of the harness

Runs go ``--workers`` at a time, one thread each; the load average is written with the results.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread per run, set before torch starts

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import harness  # noqa: E402, F401 -- first: it sets OpenMP's wait policy before torch starts
import paired_seeds  # noqa: E402
import torch  # noqa: E402

from transformer_lib.pretrained import BOOK_RECIPE  # noqa: E402
from transformer_lib.pretrained.ablations import TABLE3_PATH, TABLE3_VARIANTS, run_table3  # noqa: E402

BOOK_STEPS = 500  # the live budget: about what chapter 7's run needs to reach its target
DEFAULT_OUT = TABLE3_PATH  # package data, so that chapter 6 downloaded alone finds it
MEASURES = ("exact_match", "bleu", "perplexity")
QUICK = {"variants": ("base", "layers_1"), "seeds": 2, "budgets": (20, 40), "decoded": 100}


def run_one(job: tuple[str, int, tuple[int, ...], int | None]) -> dict:
    """One variant from one seed, measured at each budget (in a worker process, on one thread)."""
    name, seed, budgets, decoded = job
    torch.set_num_threads(1)
    started = time.perf_counter()
    result = run_table3(name, seed, budgets, decoded=decoded)
    del result["losses"]  # a curve per run would make the stored file ten times larger
    return {**result, "wall_s": time.perf_counter() - started}


def summarise(runs: list[dict], budgets: tuple[int, ...]) -> dict[str, dict]:
    """Per variant and budget: [min, median, max] of each measure over the seeds, and the paired
    difference to the base row's runs of the same seeds."""
    rows: dict[str, dict] = {}
    for step in map(str, budgets):
        base = {r["seed"]: r["budgets"][step] for r in runs if r["variant"] == "base"}
        for name in TABLE3_VARIANTS:
            by_seed = {r["seed"]: r["budgets"][step] for r in runs if r["variant"] == name}
            effects = paired_seeds.paired_effects(by_seed, base, MEASURES)
            if effects:
                variant = TABLE3_VARIANTS[name]
                row = rows.setdefault(name, {"row": variant.row, "label": variant.label, "budgets": {}})
                row["parameters"] = next(r["parameters"] for r in runs if r["variant"] == name)
                row["budgets"][step] = effects
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="runs at once, one thread each")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--resume", action="store_true", help="keep the runs already in --out and run the others")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK['variants']}, {QUICK['seeds']} seeds, budgets {QUICK['budgets']}: a check")
    args = parser.parse_args()
    if args.quick:
        names, seeds, budgets = QUICK["variants"], QUICK["seeds"], QUICK["budgets"]
    else:
        names, seeds, budgets = tuple(TABLE3_VARIANTS), args.seeds, (BOOK_STEPS, BOOK_RECIPE.training.steps)

    runs: list[dict] = []
    earlier_s = 0.0
    if args.resume and args.out.exists():
        previous = json.loads(args.out.read_text())
        if tuple(previous["budgets"]) == budgets:
            runs = [r for r in previous["runs"] if r["seed"] < seeds and r["variant"] in names]
            earlier_s = previous["wall_s"]
    host_before = paired_seeds.host()
    started = time.perf_counter()
    # The base first (every effect is paired with it), then each seed across the variants, so that an
    # interrupted run leaves whole seeds.
    decoded = QUICK["decoded"] if args.quick else None
    jobs = [(name, seed, budgets, decoded) for seed in range(seeds) for name in names
            if not any(r["variant"] == name and r["seed"] == seed for r in runs)]
    print(f"{len(runs)} runs kept, {len(jobs)} to go: {args.workers} at a time, budgets {budgets} steps; "
          f"{host_before['cpu']}, load average {host_before['load_average']}")

    def write(complete: bool) -> None:
        out = {
            "complete": complete, "budgets": list(budgets), "seeds": seeds, "quick": args.quick,
            "measures": {"exact_match": "greedy, validation split, 0 to 1", "bleu": "greedy, validation split",
                         "perplexity": "exp(cross-entropy per target token), validation split, teacher forcing"},
            "base_recipe": {k: v for k, v in BOOK_RECIPE.record().items() if k != "model"},
            "base_model": BOOK_RECIPE.model.__dict__,
            "rows": summarise(runs, budgets),
            "runs": sorted(runs, key=lambda r: (r["variant"], r["seed"])),
            "host": {"before": host_before, "after": paired_seeds.host(), "workers": args.workers,
                     "threads_per_run": 1},
            "wall_s": earlier_s + time.perf_counter() - started,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")

    def describe(result: dict) -> str:
        last = result["budgets"][str(budgets[-1])]
        return (f"{result['variant']:<18} seed {result['seed']}: exact match {last['exact_match']:.1%}, "
                f"BLEU {last['bleu']:.1f}, perplexity {last['perplexity']:.3f} ({result['wall_s']:.0f} s)")

    paired_seeds.collect(run_one, jobs, args.workers, started, runs, describe, write)
    write(complete=True)
    print(f"wrote {args.out} in {time.perf_counter() - started:.0f} s; load average now {os.getloadavg()}")


if __name__ == "__main__":
    main()
