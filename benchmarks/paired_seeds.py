"""Paired seeds: the machinery that ``paper_ledger.py`` and ``table3.py`` share.

A variant of the book's recipe is trained from several seeds; the seed sets the initial weights, the
dropout masks and the batch order, so that seed s of a variant and seed s of the base differ only by
the variant's change (where the change allows: a model of another shape draws other weights). An
effect is then measured seed by seed, as the paired difference variant − base, and reported with its
smallest, median and largest value over the seeds: an effect whose paired differences straddle zero
is within the spread of seeds, whatever its mean says.
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterable, Iterator

import harness
import torch


def spread(values: Iterable[float]) -> dict[str, float]:
    """The smallest, median and largest of ``values``, and their mean."""
    values = list(values)
    return {"min": min(values), "median": statistics.median(values), "max": max(values),
            "mean": statistics.fmean(values)}


def paired_effects(by_seed: dict[int, dict], base: dict[int, dict], measures: Iterable[str]) -> dict[str, dict]:
    """For each measure: the variant's values and its paired differences to ``base``, over the seeds
    both have (a seed the base lacks is left out, never compared with another seed)."""
    seeds = sorted(s for s in by_seed if s in base)
    if not seeds:
        return {}
    return {measure: {"values": spread(by_seed[s][measure] for s in seeds),
                      "effect": spread(by_seed[s][measure] - base[s][measure] for s in seeds),
                      "seeds": seeds}
            for measure in measures}


def excludes_zero(effect: dict[str, float]) -> bool:
    """True when every paired difference has the same sign (none is zero): the effect is larger than
    the spread of seeds."""
    return effect["min"] > 0 or effect["max"] < 0


def host() -> dict:
    """What the runs were measured on, written beside them."""
    return {"cpu": harness.cpu_model(), "cpu_count": os.cpu_count(), "load_average": os.getloadavg(),
            "torch": torch.__version__, "python": platform.python_version(), **harness.dispatch()}


def run_in_pool(run: Callable[[tuple], dict], jobs: list[tuple], workers: int,
                started: float) -> Iterator[dict]:
    """Each job's result as it finishes, ``workers`` processes at a time, one thread each (spawned,
    so that each starts torch afresh with ``OMP_NUM_THREADS=1``)."""
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for i, result in enumerate(pool.imap_unordered(run, jobs), 1):
            elapsed = time.perf_counter() - started
            done = int(20 * i / len(jobs))
            print(f"[{'#' * done}{'.' * (20 - done)}] {i}/{len(jobs)} {elapsed:6.0f} s  ", end="", flush=True)
            yield result


def collect(run: Callable[[tuple], dict], jobs: list[tuple], workers: int, started: float, runs: list[dict],
            describe: Callable[[dict], str], write: Callable[..., None]) -> None:
    """Run ``jobs`` (``run_in_pool``), appending each result to ``runs``, printing ``describe(result)`` and
    rewriting the results file after each (``write(complete=False)``), so that an interrupted run leaves
    what it measured."""
    for result in run_in_pool(run, jobs, workers, started):
        runs.append(result)
        print(describe(result), flush=True)
        write(complete=False)
