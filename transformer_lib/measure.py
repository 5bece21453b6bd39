"""Measuring code as the chapters do: the best wall-clock time of a call, and the operations it runs.

* ``best_time``: the shortest of several timed calls, the usual estimate of a call's own cost
  (the others were slowed by whatever else the machine did). Times are shown in the book, never
  tested: they depend on the machine (``benchmarks/`` measures them properly).
* ``OperationCounter``: every PyTorch operation run inside a ``with`` block, counted by name, through
  ``torch.utils._python_dispatch.TorchDispatchMode`` (a private module of torch, so the counts are
  those of the pinned torch version). Chapter 1 counts an encoder's sequential work with it; chapter 4
  reads ``largest``, the most numbers one operation wrote out (the size of the largest tensor made).
* ``chapter_times_table``: what ``benchmarks/chapter_times.py`` measured (every chapter run as a Binder
  reader runs it, written to ``book/data/chapter_times.json``) as the table of the performance appendix.
* ``time_to_target_table``: what ``benchmarks/time_to_target.py`` measured (chapter 7's training to its
  target, seeds 0-2, ``book/data/time_to_target.json``), beside the floor and ``nn.Transformer``.
* ``seed_claims_table``: what ``benchmarks/seed_claims.py`` found (every assert of the notebooks that train,
  run on seeds 0-9, ``book/data/seed_claims.json``): on how many seeds each claim held.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Mapping
from statistics import median

from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode

from .validation import check_instance, check_number, check_positive_int


def best_time(fn: Callable[[], object], repeats: int = 5) -> float:
    """The shortest wall-clock time, in seconds, of ``repeats`` calls of ``fn()``."""
    if not callable(fn):
        raise TypeError(f"fn: expected a function of no arguments, got {type(fn).__name__}")
    check_positive_int("repeats", repeats)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


class OperationCounter(TorchDispatchMode):
    """``with OperationCounter() as counter: ...`` counts each operation PyTorch runs in the block,
    by name (``counter.counts["addmm"]``: the matrix products with a bias), and ``counter.largest``: the
    number of elements of the largest tensor any of them produced."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ in torch._dynamo.disable unless this says False, and its
        # first call then imports torch._dynamo (and sympy): 1.3 s of CPU, for a counter nothing compiles.
        return False

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 -- torch's signature
        self.counts[func.overloadpacket.__name__] += 1
        out = func(*args, **(kwargs or {}))
        for result in out if isinstance(out, tuple | list) else (out,):
            if isinstance(result, Tensor):
                self.largest = max(self.largest, result.numel())
        return out


def _entry(name: str, mapping: Mapping, key: str, cls: type | tuple[type, ...], what: str) -> object:
    """``mapping[key]``, which must be there and an instance of ``cls``; errors name ``name[key]``."""
    if key not in mapping:
        raise ValueError(f"{name}: expected a {key!r} entry, got the entries {sorted(map(str, mapping))}")
    return check_instance(f"{name}[{key!r}]", mapping[key], cls, what)


def _seconds(name: str, row: Mapping, key: str) -> float:
    return check_number(f"{name}[{key!r}]", _entry(name, row, key, (int, float), "a number"), minimum=0)


def chapter_times_table(results: Mapping) -> str:
    """The Markdown of ``benchmarks/chapter_times.py``'s measurements (``book/data/chapter_times.json``,
    as ``json`` reads it): a sentence naming the host, then a row a chapter with its seconds to the last
    cell (of which the first import cell), the kernel's CPU seconds, its peak memory, and the budgets.
    The verdict is on the wall clock, what a reader waits."""
    check_instance("results", results, Mapping, "the mapping of book/data/chapter_times.json")
    host = _entry("results", results, "host", Mapping, "a mapping")
    cpu = _entry("results['host']", host, "cpu", str, "the processor's name")
    cores = _entry("results['host']", host, "cores", int, "an int")
    threads = _entry("results['host']", host, "threads", int, "an int")
    torch_version = _entry("results['host']", host, "torch", str, "a version")
    load = [_seconds("results['host']", host, key) for key in ("load_average_before", "load_average_after")]
    date = _entry("results", results, "date", str, "a date")
    chapters = _entry("results", results, "chapters", list, "a list of rows")
    if not chapters:
        raise ValueError("results['chapters']: expected at least one chapter, got none")
    dispatch = host.get("dispatch", "native")
    kernels = ("with PyTorch's AVX2 kernels (`ATEN_CPU_CAPABILITY=avx2`, what an AVX2-only processor runs)"
               if dispatch == "avx2" else "with the best kernels this processor has")
    lines = [
        f"Measured on **{cpu}** ({cores} cores) on {date}, on {threads} thread{'s' if threads != 1 else ''} "
        f"(`OMP_NUM_THREADS={threads}`), {kernels}, PyTorch {torch_version}: the library installed from its wheel, "
        f"a fresh kernel for each chapter, as on Binder. The load average (programs wanting a core) was "
        f"{load[0]:.1f} at the start and {load[1]:.1f} at the end: other programs slow every cell down, and "
        f"disturb the kernel's CPU time less than the wall clock.",
        "",
        "| chapter | seconds to the last cell | of which the first imports | kernel's CPU seconds | budget, s "
        "| kernel's peak memory, MB | budget, MB | within budget |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for i, row in enumerate(chapters):
        name = f"results['chapters'][{i}]"
        check_instance(name, row, Mapping, "a mapping")
        notebook = _entry(name, row, "notebook", str, "a notebook's file name")
        seconds, imports, cpu, budget = (_seconds(name, row, key) for key in (
            "seconds", "first_cell_seconds", "cpu_seconds", "budget_seconds"))
        memory, memory_budget = (_seconds(name, row, key) for key in ("peak_rss_mb", "budget_peak_rss_mb"))
        over = [what for what, value, limit in (("time", seconds, budget), ("memory", memory, memory_budget))
                if value > limit]
        verdict = "yes" if not over else "no: over in " + " and ".join(over)
        lines.append(f"| {notebook.removesuffix('.ipynb')} | {seconds:.1f} | {imports:.1f} | {cpu:.1f} | {budget:.0f} "
                     f"| {memory:.0f} | {memory_budget:.0f} | {verdict} |")
    return "\n".join(lines)


def time_to_target_table(results: Mapping) -> str:
    """The Markdown of ``benchmarks/time_to_target.py``'s measurements: per dispatch level and recipe, the
    seconds and steps to the target over the seeds (median [min, max]), the floor (the steps' matrix
    products at the core's peak) and ``nn.Transformer`` trained on the same batches for the same steps."""
    check_instance("results", results, Mapping, "the mapping of book/data/time_to_target.json")
    levels = _entry("results", results, "dispatch", Mapping, "a mapping of dispatch level -> results")
    target = _seconds("results", results, "target")
    lines = ["| kernels | recipe | seconds to the target | steps | every seed reached it | floor, s | "
             "`nn.Transformer`, same steps without the checks, s |", "|---|---|---|---|---|---|---|"]
    for level, run in levels.items():
        summary = _entry(f"results['dispatch'][{level!r}]", run, "summary", Mapping, "a mapping of recipe -> spreads")
        for recipe, s in summary.items():
            def spread(key: str, digits: int = 1, s: Mapping = s) -> str:
                v = s[key]
                return f"{v['median']:.{digits}f} [{v['min']:.{digits}f}, {v['max']:.{digits}f}]"
            lines.append(f"| {level} | {recipe.replace('_', ' ')} | {spread('seconds')} | {spread('steps', 0)} | "
                         f"{'yes' if s['every_seed_reached'] else 'no'} | {spread('floor_seconds')} | "
                         f"{spread('torch_seconds')} |")
    first = next(iter(levels.values()))
    host = f"{first['cpu']}, {first['cpu_count']} cores, load average {first['load_average'][0]:.1f}"
    return (f"Seconds to {target:.0%} exact match on the validation split, one thread, median [min, max] over "
            f"seeds 0-{len(first['runs']) // len(first['summary']) - 1}; measured on {host}, PyTorch {first['torch']}."
            "\n\n" + "\n".join(lines))


def seed_claims_table(results: Mapping) -> str:
    """The Markdown of ``benchmarks/seed_claims.py``'s findings: a sentence naming the seeds, a row a notebook
    (its asserts, how many held on every seed, its median seconds a run), then each assert that failed on
    some seed or was not reached, with those seeds."""
    check_instance("results", results, Mapping, "the mapping of book/data/seed_claims.json")
    seeds = _entry("results", results, "seeds", list, "a list of seeds")
    claims = _entry("results", results, "asserts", list, "a list of asserts")
    runs = _entry("results", results, "runs", list, "a list of runs")
    date = _entry("results", results, "date", str, "a date")
    if not seeds or not claims:
        raise ValueError(f"results: expected seeds and asserts, got {len(seeds)} seeds and {len(claims)} asserts")
    held = {i: _seconds(f"results['asserts'][{i}]", c, "held") for i, c in enumerate(claims)}
    by_notebook: dict[str, list[int]] = {}
    for i, c in enumerate(claims):
        by_notebook.setdefault(_entry(f"results['asserts'][{i}]", c, "notebook", str, "a notebook's file name"),
                               []).append(i)
    lines = ["| notebook | asserts | held on every seed | median seconds a run |", "|---|---|---|---|"]
    for notebook, mine in by_notebook.items():
        seconds = [_seconds(f"results['runs'][{j}]", r, "seconds") for j, r in enumerate(runs)
                   if r.get("notebook") == notebook]
        typical = f"{median(seconds):.0f}" if seconds else "-"
        lines.append(f"| {notebook.removesuffix('.ipynb')} | {len(mine)} | "
                     f"{sum(held[i] == len(seeds) for i in mine)} | {typical} |")
    fewer = [c for i, c in enumerate(claims) if held[i] < len(seeds)]
    text = (f"Every `assert` of the notebooks that train, run top to bottom on {len(seeds)} seeds "
            f"(`BOOK_SEED` {', '.join(map(str, seeds))}; one thread, on {date}): {len(claims) - len(fewer)} of "
            f"{len(claims)} held on every seed.\n\n" + "\n".join(lines))
    for c in fewer:
        missed = [*c.get("failed_on", []), *c.get("not_reached_on", [])]
        text += (f"\n\n- {c['notebook'].removesuffix('.ipynb')}, cell {c['cell']}: `{' '.join(c['assert'].split())}` "
                 f"held on {c['held']} of {len(seeds)} seeds (not on {', '.join(map(str, missed))})")
    return text
