"""Shared pieces of the benchmarks: the device, the timer, the machine's description.

Every figure is timed with ``torch.utils.benchmark.Timer.blocked_autorange``: it warms up,
picks how many calls make one block, and returns a ``Measurement`` of block times, from
which we report the median and the interquartile range (IQR). On CUDA the timer
synchronises the device before reading the clock.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from statistics import median

# Before torch starts OpenMP: idle threads sleep instead of spinning. When other jobs share
# the cores, spinning threads wait on each other (measured: 467 -> 131 ms a training step
# with 2 threads at a load average of 5). Every benchmark imports this module before torch, so
# they all run with the same policy. Set OMP_WAIT_POLICY yourself to override.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from torch.utils.benchmark import Timer  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # so that `python benchmarks/run_all.py` imports this checkout's library
    sys.path.insert(0, str(REPO_ROOT))


def set_threads() -> int:
    """Use every core of the machine for intra-op parallelism (2 on the book's CI machine)."""
    cores = os.cpu_count() or 1
    torch.set_num_threads(cores)
    return cores


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# The clock read by the timer: wall-clock time by default, or the processor time of this
# process (``time.process_time``), which does not count the time it waits while other
# programs run. With one thread on a busy machine, processor time is the steadier measure of
# the work done; with several, it would also count the time threads spend waiting for each other.
CLOCK: Callable[[], float] | None = None


def use_cpu_time() -> None:
    global CLOCK
    CLOCK = time.process_time


@contextmanager
def timing(threads: int, cpu_time: bool) -> Iterator[dict]:
    """Run the enclosed benchmarks with ``threads`` CPU threads and the chosen clock, then restore
    both. Yields the settings, to be stored beside the figures."""
    global CLOCK
    saved = torch.get_num_threads(), CLOCK
    torch.set_num_threads(threads)
    CLOCK = time.process_time if cpu_time else None
    try:
        yield {"threads": threads, "clock": "process CPU time" if cpu_time else "wall-clock time"}
    finally:
        torch.set_num_threads(saved[0])
        CLOCK = saved[1]


def measure(fn: Callable[[], object], min_run_time: float) -> list[float]:
    """Seconds per call of ``fn``, one figure per block of calls (warm-up included in the timer)."""
    clock = {} if CLOCK is None else {"timer": CLOCK}
    timer = Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads(), **clock)
    return list(timer.blocked_autorange(min_run_time=min_run_time).times)


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(first quartile, median, third quartile), by linear interpolation as numpy does."""
    ordered = sorted(values)

    def at(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return at(0.25), median(ordered), at(0.75)


def summary(values: list[float]) -> dict:
    q1, mid, q3 = quartiles(values)
    return {"median": mid, "q1": q1, "q3": q3, "iqr": q3 - q1, "n": len(values)}


def alternate(fns: dict[str, Callable[[], object]], rounds: int, min_run_time: float) -> dict[str, list[float]]:
    """Time each function once per round, in an order that flips every round (A B, B A, ...).

    Returns, for each name, the median seconds per call of every round. Load from other
    processes on the machine then slows both sides alike, and their ratio round by round
    stays meaningful even when the absolute figures drift.
    """
    names = list(fns)
    per_round: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            per_round[name].append(median(measure(fns[name], min_run_time)))
    return per_round


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def dispatch() -> dict:
    """Which vector instructions PyTorch's CPU kernels use: the best the processor has, unless the
    environment variable ATEN_CPU_CAPABILITY asks for less (``avx2`` on an AVX-512 processor runs
    the kernels that a reader's AVX2-only processor runs)."""
    flags = ""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    except OSError:
        pass
    return {
        "cpu_dispatch": torch.backends.cpu.get_cpu_capability(),
        "aten_cpu_capability": os.environ.get("ATEN_CPU_CAPABILITY"),
        "cpu_has_avx512": " avx512f" in flags,
    }


def environment(device: torch.device) -> dict:
    """What the figures were measured on, recorded beside them."""
    env = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": str(device),
        "loadavg_1_5_15": list(os.getloadavg()),
        **dispatch(),
    }
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
    else:
        env["gpu"] = "no GPU in this run"
    return env
