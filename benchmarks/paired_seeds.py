"""Paired seeds: the machinery that ``paper_ledger.py`` and ``table3.py`` share.

A variant of the book's recipe is trained from several seeds; the seed sets the initial weights, the
dropout masks and the batch order, so that seed s of a variant and seed s of the base differ only by
the variant's change (where the change allows: a model of another shape draws other weights). An
effect is then measured seed by seed, as the paired difference variant − base, and reported with its
smallest, median and largest value over the seeds (``spread`` and ``paired_effects``, the library's:
``transformer_lib.pretrained.table3_report``); the book's one rule judges it (``transformer_lib.verdict``).
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import time
from collections.abc import Callable, Iterator

import harness
import torch

from transformer_lib.pretrained.table3_report import paired_effects, spread  # noqa: F401 -- the benchmarks' too


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
