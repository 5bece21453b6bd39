"""Measuring code as the chapters do: the best wall-clock time of a call, and the operations it runs.

* ``best_time``: the shortest of several timed calls, the usual estimate of a call's own cost
  (the others were slowed by whatever else the machine did). Times are shown in the book, never
  tested: they depend on the machine (``benchmarks/`` measures them properly).
* ``OperationCounter``: every PyTorch operation run inside a ``with`` block, counted by name, through
  ``torch.utils._python_dispatch.TorchDispatchMode`` (a private module of torch, so the counts are
  those of the pinned torch version). Chapter 1 counts an encoder's sequential work with it; chapter 4
  reads ``largest``, the most numbers one operation wrote out (the size of the largest tensor made).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable

from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode

from .validation import check_positive_int


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
