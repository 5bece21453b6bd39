"""Each departure from the paper, restored on its own and measured on the book's task.

For every row of ``transformer_lib.paper.LEDGER`` that can be switched at the book's scale, the
book's Transformer is trained again with that one choice set back to the paper's (the warm-up, the
learning rate, the clipping, the tied output embedding, LayerNorm's epsilon, and all of them at
once), on the same corpus, for the same number of steps, from three seeds (the seed sets the
initial weights, dropout and the batch order; the corpus is the book's, generated from seed 0).
A variant whose first seed moves the exact match by 25 points or more is not run again: its effect
is not in doubt, and the time goes to the small effects, whose spread over seeds matters.
The rows that change only decoding (beam search, the output-length limit, checkpoint averaging)
are measured on the baseline's own runs. Each run records the validation loss (cross-entropy
per target token, teacher forcing), exact match and BLEU of the test split.

The step budget is shorter than the shipped model's 1500 steps, so that the whole script runs in
under 20 minutes on 2 cores: the runs go two at a time, one thread each. The rows that cannot
apply at this scale (WMT data, BPE, the base model, 25000-token batches, 100000 steps on 8 GPUs)
are written with the paper's own numbers instead (``transformer_lib.paper.PAPER_RESULTS``).

    python benchmarks/paper_ledger.py [--steps 400] [--seeds 3] [--workers 2] [--out book/data/paper_ledger.json]
                                      [--resume]  # keep the runs already in --out

Other jobs on the machine slow each run down; the load average is written with the results.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread per run, set before torch starts

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import harness  # noqa: E402, F401 -- first: it sets OpenMP's wait policy before torch starts
import paired_seeds  # noqa: E402
import torch  # noqa: E402

from transformer_lib import paper  # noqa: E402
from transformer_lib.evaluation import bleu, exact_match, translate_batch  # noqa: E402
from transformer_lib.pretrained import BOOK_RECIPE, book_corpus, book_vocabularies  # noqa: E402
from transformer_lib.pretrained.ablations import validation_loss  # noqa: E402
from transformer_lib.pretrained.recipe import train_book_model  # noqa: E402

DEFAULT_STEPS = 400
DEFAULT_OUT = harness.REPO_ROOT / "book" / "data" / "paper_ledger.json"
MEASURES = ("valid_loss", "exact_match", "bleu")
# An effect this large (in exact match, 0 to 1) on seed 0 is not in doubt: its other seeds are skipped
# (the budget goes to the small effects, where the spread over seeds decides what the effect is).
LARGE_EFFECT = 0.25


def _variants() -> dict[str, dict]:
    """Each trained variant: the ledger rows it restores and how (recipe and model changes, clipping)."""
    p = paper.PAPER
    return {
        "book": {},
        "warmup": {"recipe": {"warmup": p["warmup"]}},
        "learning_rate": {"recipe": {"lr_scale": p["lr_scale"]}},
        "gradient_clipping": {"clip_norm": p["clip_norm"]},
        "weight_tying": {"model": {"tie_output_embedding": p["tie_output_embedding"]}},
        "layer_norm_eps": {"model": {"layer_norm_eps": p["layer_norm_eps"]}},
        "paper_recipe": {
            "recipe": {"warmup": p["warmup"], "lr_scale": p["lr_scale"]},
            "clip_norm": p["clip_norm"],
            "model": {"tie_output_embedding": p["tie_output_embedding"], "layer_norm_eps": p["layer_norm_eps"]},
        },
    }


def _scores(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    return {"exact_match": exact_match(hypotheses, references), "bleu": bleu(hypotheses, references)}


def _decode(model, pairs, src_vocab, tgt_vocab, *, beam_size: int = 1, input_plus: int | None = None):
    """Translations of ``pairs``' sources: the book's length limit, or (``input_plus``) the paper's
    input length + 50, capped by the model's positional table; one batch per source length."""
    sources = [s for s, _ in pairs]
    if input_plus is None:
        return translate_batch(model, sources, src_vocab, tgt_vocab, beam_size=beam_size, alpha=paper.PAPER["alpha"])
    hypotheses: list[str | None] = [None] * len(sources)
    by_length: dict[int, list[int]] = {}
    for i, sentence in enumerate(sources):
        by_length.setdefault(len(src_vocab.encode(sentence)), []).append(i)
    for length, indices in by_length.items():
        limit = min(length + input_plus, model.config.max_len)
        out = translate_batch(model, [sources[i] for i in indices], src_vocab, tgt_vocab, max_len=limit)
        for i, text in zip(indices, out, strict=True):
            hypotheses[i] = text
    return hypotheses


def run_one(job: tuple[str, int, int]) -> dict:
    """Train one variant from one seed and measure it (in a worker process, on one thread)."""
    name, seed, steps = job
    torch.set_num_threads(1)
    spec = _variants()[name]
    clipping = {"clip_norm": spec["clip_norm"]} if "clip_norm" in spec else {}
    recipe = dataclasses.replace(BOOK_RECIPE.with_training(**spec.get("recipe", {}), **clipping), seed=seed,
                                 model=BOOK_RECIPE.model.replace(**spec.get("model", {})))
    corpus = book_corpus(BOOK_RECIPE.seed, BOOK_RECIPE.n_pairs)  # one corpus for every seed
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    references = [t for _, t in corpus.test]

    models: list = []
    snapshots: list[dict] = []
    interval = paper.checkpoint_interval(steps)
    average = paper.PAPER["checkpoints_averaged"]
    keep = {steps - interval * k for k in range(average)}

    def snapshot(report) -> None:
        if name == "book" and report.step in keep:
            snapshots.append({k: v.detach().clone() for k, v in models[0].state_dict().items()})

    started = time.perf_counter()
    model, _, _, history = train_book_model(recipe, steps=steps, corpus=corpus, progress=False, callback=snapshot,
                                            adapt=lambda m: models.append(m) or m)
    wall = time.perf_counter() - started
    result = {"variant": name, "seed": seed, "train_time_s": history.train_time_s, "wall_s": wall,
              "final_train_loss": statistics.fmean(history.losses[-20:]),
              "valid_loss": validation_loss(model, corpus),
              **_scores(_decode(model, corpus.test, src_vocab, tgt_vocab), references)}
    if name == "book":
        # The rows that change decoding only, on the same trained model.
        result["beam_search"] = _scores(_decode(model, corpus.test, src_vocab, tgt_vocab, beam_size=4), references)
        result["max_output_length"] = _scores(
            _decode(model, corpus.test, src_vocab, tgt_vocab, input_plus=paper.PAPER["max_output_extra"]), references)
        averaged = {k: sum(s[k] for s in snapshots) / len(snapshots) if v.is_floating_point() else v
                    for k, v in snapshots[-1].items()}
        model.load_state_dict(averaged)
        result["checkpoint_averaging"] = {
            "valid_loss": validation_loss(model, corpus),
            **_scores(_decode(model, corpus.test, src_vocab, tgt_vocab), references),
            "checkpoints": sorted(keep), "interval": interval}
    return result


def large_effects(runs: list[dict], threshold: float) -> set[str]:
    """The variants whose seed-0 exact match differs from the book's seed 0 by ``threshold`` or more."""
    first = {r["variant"]: r["exact_match"] for r in runs if r["seed"] == 0}
    if "book" not in first:
        return set()
    return {name for name, em in first.items() if abs(em - first["book"]) >= threshold}


def summarise(runs: list[dict]) -> dict[str, dict]:
    """Per ledger row: each measure's mean, and its effect against the book's runs of the same seeds
    (the mean of the paired differences, their smallest, median and largest: ``paired_seeds``)."""
    base = {r["seed"]: r for r in runs if r["variant"] == "book"}
    rows: dict[str, dict] = {}
    values: dict[str, dict[int, dict]] = {}
    for r in runs:
        if r["variant"] != "book":
            values.setdefault(r["variant"], {})[r["seed"]] = r
        else:
            for key in ("beam_search", "max_output_length", "checkpoint_averaging"):
                values.setdefault(key, {})[r["seed"]] = {"valid_loss": r["valid_loss"], **r[key]}
    for key, by_seed in values.items():
        effects = paired_seeds.paired_effects(by_seed, base, MEASURES)
        if not effects:  # a partial run: no paired seed yet
            continue
        row: dict[str, object] = {"seeds": effects[MEASURES[0]]["seeds"]}
        for measure, effect in effects.items():
            row[measure] = effect["values"]["mean"]
            for stat in ("mean", "min", "median", "max"):
                row[f"{measure}_effect{'' if stat == 'mean' else '_' + stat}"] = effect["effect"][stat]
        rows[key] = row
    rows["book"] = {"seeds": sorted(base), **{m: statistics.fmean(r[m] for r in base.values()) for m in MEASURES},
                    **{f"{m}_min": min(r[m] for r in base.values()) for m in MEASURES},
                    **{f"{m}_max": max(r[m] for r in base.values()) for m in MEASURES}}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="optimiser steps per run")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="runs at once, one thread each")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--large", type=float, default=LARGE_EFFECT,
                        help="a change in exact match (0 to 1) beyond which seed 0 alone is enough")
    parser.add_argument("--resume", action="store_true",
                        help="keep the runs already in --out (same steps) and run only the others")
    args = parser.parse_args()

    runs: list[dict] = []
    earlier_s = 0.0
    if args.resume and args.out.exists():
        previous = json.loads(args.out.read_text())
        if previous["steps"] == args.steps:
            runs = [r for r in previous["runs"] if r["seed"] < args.seeds]
            earlier_s = previous["wall_s"]
    load_before = os.getloadavg()
    started = time.perf_counter()
    print(f"{len(runs)} runs kept; {args.workers} at a time, {args.steps} steps each; load average {load_before}")

    def write(complete: bool) -> None:
        """The results so far (after every run, so that an interrupted run leaves what it measured)."""
        ordered = sorted(runs, key=lambda r: (r["variant"], r["seed"]))
        out = {
            "complete": complete,
            "steps": args.steps,
            "seeds": args.seeds,
            "recipe": {k: v for k, v in BOOK_RECIPE.record().items() if k != "model"},
            "model": dataclasses.asdict(BOOK_RECIPE.model),
            "evaluated_on": "exact match and BLEU on the test split (greedy unless the row says otherwise); "
                            "loss on the validation split (teacher forcing, no label smoothing)",
            "not_measured": {row.key: row.scale_note for row in paper.LEDGER if not row.measured and row.differs},
            "paper_results": paper.PAPER_RESULTS,
            "rows": summarise(ordered) if any(r["variant"] == "book" for r in ordered) else {},
            "runs": ordered,
            "machine": {"cpu_count": os.cpu_count(), "workers": args.workers, "threads_per_run": 1,
                        "load_average_before": load_before, "load_average_now": os.getloadavg(),
                        "torch": torch.__version__, "python": platform.python_version()},
            "wall_s": earlier_s + time.perf_counter() - started,
            "large_effect": args.large,
            "seed_0_only": sorted(large_effects(runs, args.large)),
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")

    def done(name: str, seed: int) -> bool:
        return any(r["variant"] == name and r["seed"] == seed for r in runs)

    def describe(result: dict) -> str:
        return (f"{result['variant']:<18} seed {result['seed']}: valid loss {result['valid_loss']:.3f}, "
                f"exact match {result['exact_match']:.1%}, BLEU {result['bleu']:.1f} ({result['wall_s']:.0f} s)")

    # Seed 0 of every variant first; then the other seeds, for the variants whose effect is small enough
    # that the spread over seeds matters (a collapse of the exact match needs no error bar).
    first = [(name, 0, args.steps) for name in _variants() if not done(name, 0)]
    paired_seeds.collect(run_one, first, args.workers, started, runs, describe, write)
    others = [(name, seed, args.steps) for seed in range(1, args.seeds) for name in _variants()
              if not done(name, seed) and name not in large_effects(runs, args.large)]
    paired_seeds.collect(run_one, others, args.workers, started, runs, describe, write)
    write(complete=True)
    print(f"wrote {args.out} in {time.perf_counter() - started:.0f} s; load average now {os.getloadavg()}")


if __name__ == "__main__":
    main()
