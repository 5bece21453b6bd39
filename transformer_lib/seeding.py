"""One seed for every cell of the book that trains or samples: ``BOOK_SEED``.

A claim about a trained model must hold on any seed, not on the one the page happened to use. Every
notebook cell that trains, samples or draws a random subset reads its seed here, so that
``BOOK_SEED=1 jupyter ...`` (and ``tools/test.sh --portability``'s seed lane, which re-runs every
notebook that trains under ``BOOK_SEED=1`` and ``2``, every assert required to hold) reruns the whole
book on another seed. Unset, the seed is 0: the stored outputs are those of seed 0.

* ``book_seed()``: the seed, ``BOOK_SEED`` or 0.
* ``book_seeds(n)``: ``n`` seeds for a cell that trains several models and shows their median and range:
  ``book_seed() * n`` to ``book_seed() * n + n - 1``, so that two values of ``BOOK_SEED`` share no seed.
* ``seed_range(values)``: such a result as the text quotes it, the median and the range over the seeds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from numbers import Real
from statistics import median

from .validation import check_instance, check_int, check_items, check_number, check_positive_int, shorten

SEED_VARIABLE = "BOOK_SEED"


def book_seed() -> int:
    """The book's seed: the environment variable ``BOOK_SEED`` (a whole number >= 0), 0 when unset or empty."""
    text = os.environ.get(SEED_VARIABLE, "").strip()
    if not text:
        return 0
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"{SEED_VARIABLE}: expected a whole number >= 0 (the seed), got {text[:40]!r}")
    return check_int(SEED_VARIABLE, int(text), minimum=0, maximum=2**63 - 1)  # what torch.manual_seed takes


def book_seeds(n: int) -> list[int]:
    """``n`` seeds for a cell that trains ``n`` models: seed 0's block is 0 .. n - 1, ``BOOK_SEED=1``'s
    n .. 2n - 1, and so on (disjoint, so that another ``BOOK_SEED`` is another experiment)."""
    first = book_seed() * check_positive_int("n", n)
    return list(range(first, first + n))


def seed_range(values: Sequence[float], spec: str = ".0%") -> str:
    """A result over seeds as the book quotes it: the median, then the smallest and largest, e.g.
    ``seed_range([0.9, 0.95, 0.93])`` -> ``"93% (90% to 95%)"``."""
    values = [check_number(f"values[{i}]", v) for i, v in enumerate(check_items("values", values, Real, "number"))]
    check_instance("spec", spec, str, "a format spec (str)")
    try:
        format(0.0, spec)
    except ValueError:
        raise ValueError(f"spec: expected a format spec for a number, such as '.0%', got {shorten(spec)!r}") from None
    return f"{median(values):{spec}} ({min(values):{spec}} to {max(values):{spec}})"
