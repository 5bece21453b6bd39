"""The paper's Table 3 at the book's scale: the book's model varied one part at a time, on paired seeds.

The paper (Vaswani et al. 2017, Table 3) varies its base model row by row: (A) the number of heads
at fixed compute, (B) a smaller d_k, (C) depth and width, (D) dropout and label smoothing, (E)
learned positions. ``transformer_lib.pretrained.ablations.TABLE3_VARIANTS`` holds the same rows
for the book's model (plus RoPE, which the paper does not have, and a placebo: the base recipe
from a second, disjoint set of seeds). Each variant is trained from five seeds, paired with the
base's runs of the same seeds (the placebo's pair s trains from seed 1000 + s), on the book's corpus
(seed 0 for every run), and measured twice in the same run: at the live budget (chapter 7's run,
``BOOK_STEPS``) and at the shipped model's budget (``BOOK_RECIPE.training.steps``). The schedule does not
depend on the number of steps, so the first measurement is the same model a run stopped there would
give; measuring in eval mode draws no random number, so the run goes on as if unmeasured.

Each measurement: greedy exact match and BLEU of the validation split, and the perplexity
(exp of the cross-entropy per target token, teacher forcing, no smoothing) on the same split.

    python benchmarks/table3.py [--seeds 5] [--budgets 500 1500] [--workers 2] [--out table3.json]
    python benchmarks/table3.py --quick --out /tmp/t.json  # two variants, two seeds, short budgets: a check

The results file is appended to, never overwritten: a variant and seed already stored keep their run,
the missing ones are run and added, and the rows are summarised again from every run. A run stored
with fewer budgets than asked for is run again to all of them, and replaces the stored one only if
it measures the stored budgets the same (``merged``: a run is deterministic on one machine, so it
must). ``--budgets 500`` runs the short budget only (a third of the time). A file made with
another base recipe, or a quick file, is refused. Runs go ``--workers`` at a time, one thread each;
progress is printed per run, and the load average is written with the results. One run of the base,
one thread of an idle core: about 37 s to 500 steps and 120 s to 1500 (2026 measurement); the wide
and the four-layer rows take two to three times that.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread per run, set before torch starts

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import harness  # noqa: E402 -- first: it sets OpenMP's wait policy before torch starts
import paired_seeds  # noqa: E402
import torch  # noqa: E402

from transformer_lib.pretrained import BOOK_RECIPE  # noqa: E402
from transformer_lib.pretrained.ablations import TABLE3_PATH, TABLE3_VARIANTS, run_table3  # noqa: E402
from transformer_lib.pretrained.table3_report import TABLE3_MEASURES as MEASURES  # noqa: E402, F401
from transformer_lib.pretrained.table3_report import summarise  # noqa: E402, F401 -- the tests call it here

BOOK_STEPS = 500  # the short budget: a third of the shipped recipe's, where differences of speed still show
DEFAULT_OUT = TABLE3_PATH  # package data, so that chapter 6 downloaded alone finds it
QUICK = {"variants": ("base", "layers_1"), "seeds": 2, "budgets": (20, 40), "decoded": 100}


def run_one(job: tuple[str, int, tuple[int, ...], int | None]) -> dict:
    """One variant from one seed, measured at each budget (in a worker process, on one thread)."""
    name, seed, budgets, decoded = job
    torch.set_num_threads(1)
    started = time.perf_counter()
    result = run_table3(name, seed, budgets, decoded=decoded)
    del result["losses"]  # a curve per run would make the stored file ten times larger
    # the machine: seeds are paired across machines too, but a reader may want to know which ran where
    return {**result, "wall_s": time.perf_counter() - started, "cpu": harness.cpu_model()}


def base_recipe() -> dict:
    """Today's base recipe, as the file records it (the model apart)."""
    return {k: v for k, v in BOOK_RECIPE.record().items() if k != "model"}


def stored_runs(out: Path, quick: bool) -> tuple[list[dict], float, list[int], list[dict]]:
    """The runs already in ``out`` (none if it does not exist), the seconds they took, their budgets
    and the sessions that made them; a file of another base recipe, or of the other mode (quick or not), is refused."""
    if not out.exists():
        return [], 0.0, [], []
    previous = json.loads(out.read_text())
    if previous.get("quick", False) != quick:
        raise SystemExit(f"{out} holds {'quick' if previous.get('quick') else 'full'} runs: "
                         "give another --out rather than mix them")
    if previous["base_recipe"] != base_recipe() or previous["base_model"] != BOOK_RECIPE.model.__dict__:
        raise SystemExit(f"{out} was measured with another base recipe: give another --out (nothing overwritten)")
    first = {"host": previous["host"], "budgets": previous["budgets"], "runs_added": len(previous["runs"]),
             "wall_s": previous["wall_s"]}  # a file from before sessions were recorded: one session
    return previous["runs"], previous["wall_s"], previous["budgets"], previous.get("sessions", [first])


def _stored_run(runs: list[dict], name: str, seed: int) -> dict | None:
    return next((r for r in runs if r["variant"] == name and r["seed"] == seed), None)


def merged(stored: list[dict], added: list[dict]) -> list[dict]:
    """The stored runs and the added ones. An added run of a stored variant and seed took that run on to more
    budgets: it replaces it only if it measured every stored budget the same (the same exact match and BLEU,
    the perplexity to 1e-9), else nothing is written (SystemExit), since the stored run would be lost."""
    again = {(r["variant"], r["seed"]): r for r in added}
    for old in stored:
        new = again.get((old["variant"], old["seed"]))
        if new is None:
            continue
        for budget, measured in old["budgets"].items():
            remeasured = new["budgets"][budget]
            if (remeasured["exact_match"], remeasured["bleu"]) != (measured["exact_match"], measured["bleu"]) \
                    or not math.isclose(remeasured["perplexity"], measured["perplexity"], rel_tol=1e-9):
                raise SystemExit(f"{old['variant']} seed {old['seed']} at {budget} steps: stored {measured}, "
                                 f"measured again {remeasured}; the stored run is kept and nothing written")
    return [r for r in stored if (r["variant"], r["seed"]) not in again] + added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="pairs of seeds: the base's 0, 1, ...")
    parser.add_argument("--budgets", type=int, nargs="+", default=[BOOK_STEPS, BOOK_RECIPE.training.steps],
                        help="step budgets measured in each run")
    parser.add_argument("--variants", nargs="+", default=list(TABLE3_VARIANTS), choices=list(TABLE3_VARIANTS))
    parser.add_argument("--workers", type=int, default=2, help="runs at once, one thread each")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="appended to, never overwritten")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK['variants']}, {QUICK['seeds']} seeds, budgets {QUICK['budgets']}: a check")
    args = parser.parse_args()
    if args.quick:
        names, seeds, budgets = QUICK["variants"], QUICK["seeds"], tuple(QUICK["budgets"])
    else:
        names, seeds, budgets = tuple(args.variants), args.seeds, tuple(sorted(set(args.budgets)))
    if "base" not in names:
        names = ("base", *names)  # every effect is paired with the base
    runs, earlier_s, earlier_budgets, sessions = stored_runs(args.out, args.quick)
    all_budgets = tuple(sorted({*budgets, *earlier_budgets}))
    host_before = paired_seeds.host()
    started = time.perf_counter()
    # The base first (every effect is paired with it), then each seed across the variants, so that an
    # interrupted run leaves whole seeds.
    decoded = QUICK["decoded"] if args.quick else None
    jobs, extending = [], 0
    for seed in range(seeds):
        for name in names:
            stored = _stored_run(runs, name, seed)
            if stored is None:
                jobs.append((name, seed, budgets, decoded))
            elif not {str(b) for b in budgets} <= stored["budgets"].keys():
                # stored with fewer budgets: run again to all of them (the stored ones must come out the same)
                jobs.append((name, seed, tuple(sorted({*budgets, *map(int, stored["budgets"])})), decoded))
                extending += 1
    print(f"{len(runs)} runs kept, {len(jobs)} to go ({extending} of them stored runs taken on to more budgets): "
          f"{args.workers} at a time, budgets {budgets} steps; {host_before['cpu']}, load average "
          f"{host_before['load_average']}")

    added: list[dict] = []

    def this_session() -> dict:
        return {"host": {"before": host_before, "after": paired_seeds.host(), "workers": args.workers,
                         "threads_per_run": 1},
                "budgets": list(budgets), "runs_added": len(added), "wall_s": time.perf_counter() - started}

    def write(complete: bool) -> None:
        every = merged(runs, added)
        out = {
            "complete": complete, "budgets": list(all_budgets),
            "seeds": max(1 + r["seed"] for r in every) if every else 0, "quick": args.quick,
            "measures": {"exact_match": "greedy, validation split, 0 to 1", "bleu": "greedy, validation split",
                         "perplexity": "exp(cross-entropy per target token), validation split, teacher forcing"},
            "base_recipe": base_recipe(),
            "base_model": BOOK_RECIPE.model.__dict__,
            "rows": summarise(every, all_budgets),
            "runs": sorted(every, key=lambda r: (r["variant"], r["seed"])),
            "host": sessions[0]["host"] if sessions else this_session()["host"],  # the first session's
            "sessions": [*sessions, this_session()],  # every invocation that added runs, with its machine
            "wall_s": earlier_s + time.perf_counter() - started,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")

    def describe(result: dict) -> str:
        last = result["budgets"][str(max(map(int, result["budgets"])))]
        return (f"{result['variant']:<18} seed {result['seed']}: exact match {last['exact_match']:.1%}, "
                f"BLEU {last['bleu']:.1f}, perplexity {last['perplexity']:.3f} ({result['wall_s']:.0f} s)")

    paired_seeds.collect(run_one, jobs, args.workers, started, added, describe, write)
    write(complete=True)
    print(f"wrote {args.out} in {time.perf_counter() - started:.0f} s; load average now {os.getloadavg()}")


if __name__ == "__main__":
    main()
