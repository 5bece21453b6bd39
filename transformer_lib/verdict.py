"""One rule for every "better", "worse" or "within the noise" the book says about a training choice.

A choice (a variant of the recipe) and the base are trained from the same seeds; seed *s* of each
differ only by the choice, so the effect is measured seed by seed, as the paired difference
variant - base. ``verdict`` gives the choice a direction only when

1. there are at least ``MIN_SEEDS`` (5) paired seeds: with fewer it says so and gives none;
2. the 95 % interval of the mean paired difference excludes zero: a Student *t* interval,
   mean ± t(0.975, n-1) · s / √n. Why *t* and not a bootstrap or a rank test: with 5 seeds a
   rank interval (sign or Wilcoxon test) cannot reach 95 % at all (its smallest two-sided error
   is 2/32 = 6.25 %), and a percentile bootstrap of 5 values is too narrow (its false-positive
   rate under the null is about 16 %, three times the nominal 5 %: ``tests/test_verdict.py``); the
   *t* interval's error rate is exactly 5 % when seed noise is normal, and computable
   (``false_positive_rate``) when it is combined with the next condition;
3. the mean's size exceeds the measure's stated minimum (``MEASURES``): 0.5 points of exact match,
   0.5 BLEU, 2 % of the base's perplexity, 0.5 points of a classifier's accuracy. A difference smaller
   than that is not one a reader of the book would act on, however sure.

Otherwise the choice is "within the noise". The rule's false-positive rate, the chance that a
choice with no effect at all gets a direction, is at most 5 % and smaller with the minimum
(``false_positive_rate`` computes it; the tests check it by simulation, and chapter 6 measures it on
a placebo row: the base recipe under a second, disjoint set of seeds).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .validation import check_choice, check_int, check_number, check_positive_int

MIN_SEEDS = 5  # fewer paired seeds give no direction
CONFIDENCE = 0.95  # of the two-sided t interval


@dataclass(frozen=True)
class Measure:
    """How a measure is judged: its smallest difference worth a verdict, and which way is better."""

    minimum: float  # in the measure's units; relative=True: a fraction of the base's value
    lower_is_better: bool = False
    relative: bool = False
    unit: str = ""  # as the text writes a difference
    scale: float = 1.0  # the text's unit per stored unit (exact match is stored 0 to 1, written in points)
    digits: int = 1


MEASURES: dict[str, Measure] = {
    "exact_match": Measure(0.005, unit=" points", scale=100.0),  # 0.5 points of exact match
    "bleu": Measure(0.5, unit=" BLEU"),
    "perplexity": Measure(0.02, lower_is_better=True, relative=True, digits=3),  # 2 % of the base's
    "valid_loss": Measure(0.02, lower_is_better=True, relative=True, digits=3),
    "accuracy": Measure(0.005, unit=" points", scale=100.0),  # a classifier's test accuracy: 0.5 points
}


def t_two_sided_probability(t: float, dof: int) -> float:
    """P(|T| <= t) for Student's T with ``dof`` (a positive integer) degrees of freedom, in closed form
    (Abramowitz and Stegun 26.7.3-4: a finite sum in cos(theta), theta = atan(t / sqrt(dof)))."""
    check_positive_int("dof", dof)
    t = check_number("t", t, minimum=0.0)
    theta = math.atan(t / math.sqrt(dof))
    c2, total = math.cos(theta) ** 2, 0.0
    if dof % 2 == 1:
        term = math.cos(theta) if dof > 1 else 0.0
        for k in range(1, (dof - 1) // 2 + 1):  # cos, 2/3 cos^3, (2*4)/(3*5) cos^5, ...
            total += term
            term *= c2 * (2 * k) / (2 * k + 1)
        return 2 / math.pi * (theta + math.sin(theta) * total)
    term = 1.0
    for k in range(1, dof // 2 + 1):  # 1, 1/2 cos^2, (1*3)/(2*4) cos^4, ...
        total += term
        term *= c2 * (2 * k - 1) / (2 * k)
    return math.sin(theta) * total


def _check_confidence(confidence: object) -> float:
    if not 0 < check_number("confidence", confidence) < 1:
        raise ValueError(f"confidence: expected a number strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def _check_differences(differences: object) -> list[float]:
    if isinstance(differences, (str, bytes)) or not isinstance(differences, (list, tuple)):
        raise TypeError(f"differences: expected a list of paired differences (numbers), "
                        f"got {type(differences).__name__}")
    return [check_number(f"differences[{i}]", d) for i, d in enumerate(differences)]


def t_quantile(confidence: float, dof: int) -> float:
    """The t such that P(|T| <= t) = ``confidence`` (bisection on ``t_two_sided_probability``)."""
    _check_confidence(confidence)
    check_positive_int("dof", dof)
    low, high = 0.0, 1.0
    while t_two_sided_probability(high, dof) < confidence:
        high *= 2
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if t_two_sided_probability(mid, dof) < confidence else (low, mid)
    return (low + high) / 2


def t_interval(differences: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The ``confidence`` Student t interval of the mean of ``differences`` (two or more)."""
    differences, confidence = _check_differences(differences), _check_confidence(confidence)
    if len(differences) < 2:
        raise ValueError(f"differences: expected at least 2 values for an interval, got {len(differences)}")
    mean, n = statistics.fmean(differences), len(differences)
    half = t_quantile(confidence, n - 1) * statistics.stdev(differences) / math.sqrt(n)
    return mean - half, mean + half


@dataclass(frozen=True)
class Verdict:
    """What the rule says of one paired comparison, and the numbers behind it."""

    word: str  # "better", "worse", "within the noise", or "fewer than 5 seeds"
    measure: str
    seeds: int
    mean: float  # of the paired differences variant - base
    median: float
    low: float | None  # the 95 % t interval of the mean (None with fewer than 2 seeds)
    high: float | None
    minimum: float  # the size the mean had to exceed, in the measure's units

    @property
    def directed(self) -> bool:
        return self.word in ("better", "worse")

    def text(self) -> str:
        """The verdict as the chapters write it, e.g. "worse (-4.0 points [-6.1, -1.9], 5 seeds)"."""
        m = MEASURES[self.measure]

        def number(x: float) -> str:
            return f"{m.scale * x:+.{m.digits}f}"

        interval = "" if self.low is None else f" [{number(self.low)}, {number(self.high)}]"
        return f"{self.word} ({number(self.mean)}{m.unit}{interval}, {self.seeds} seed{'s' * (self.seeds != 1)})"


def verdict(differences: Sequence[float], measure: str = "exact_match", base: float | None = None) -> Verdict:
    """The rule (this module's docstring) on the paired differences variant - base of ``measure``.
    ``base``: the base's value (its median over the seeds), needed where the minimum is relative."""
    differences = _check_differences(differences)
    check_choice("measure", measure, list(MEASURES))
    if not differences:
        raise ValueError("differences: expected at least one paired difference, got none")
    m = MEASURES[measure]
    if m.relative and base is None:
        raise ValueError(f"base: expected the base's {measure} (the minimum is a fraction of it), got None")
    minimum = m.minimum * check_number("base", base, positive=True) if m.relative else m.minimum
    mean, median, n = statistics.fmean(differences), statistics.median(differences), len(differences)
    low, high = t_interval(differences) if n >= 2 else (None, None)
    if n < MIN_SEEDS:
        word = f"fewer than {MIN_SEEDS} seeds"
    elif (low > 0 or high < 0) and abs(mean) > minimum:
        word = "better" if (mean > 0) != m.lower_is_better else "worse"
    else:
        word = "within the noise"
    return Verdict(word, measure, n, mean, median, low, high, minimum)


def false_positive_rate(seeds: int, minimum_over_sd: float = 0.0, confidence: float = CONFIDENCE,
                        points: int = 4000) -> float:
    """The chance that the rule gives a direction to a choice with no effect, when the paired
    differences are independent normal with standard deviation sd: P(the t interval excludes 0 and
    |mean| > minimum), ``minimum_over_sd`` = minimum / sd. The mean and the sample deviation S are
    independent, so this is one integral over S's distribution (scaled chi, seeds - 1 degrees of
    freedom), computed by the midpoint rule on ``points`` points."""
    check_int("seeds", seeds, minimum=2)
    minimum_over_sd = check_number("minimum_over_sd", minimum_over_sd, minimum=0.0)
    confidence, points = _check_confidence(confidence), check_positive_int("points", points)
    k, c = seeds - 1, t_quantile(confidence, seeds - 1)
    root_n = math.sqrt(seeds)

    def density(s: float) -> float:  # of S / sd, where k S^2 / sd^2 is chi-square with k dof
        x = k * s * s
        log_chi2 = (k / 2 - 1) * math.log(x) - x / 2 - (k / 2) * math.log(2) - math.lgamma(k / 2)
        return math.exp(log_chi2) * 2 * k * s

    top = 1 + 12 / math.sqrt(k)  # S / sd beyond this has negligible probability
    width, total = top / points, 0.0
    for i in range(points):
        s = (i + 0.5) * width
        threshold = max(minimum_over_sd, c * s / root_n)  # |mean| / sd must exceed this
        total += density(s) * math.erfc(threshold * root_n / math.sqrt(2)) * width
    return total
