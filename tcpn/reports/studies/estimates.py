"""The numbers of a study: per-run rows summarised into estimates with honest intervals.

:func:`summarise` turns the per-run rows of :func:`~tcpn.reports.studies.experiments.run_points`
into :class:`Estimate` columns: the mean, a 95 % Student-t interval kept within the
quantity's range, how many runs gave the metric out of the runs made (a run that did not
complete gives none; one cut by a known bound is censored there), a deterministic
experiment shown as one run (:func:`run_estimate`); :func:`above`, :func:`within` and
:func:`relative_difference` are what the claims compare with. :func:`above` and
:func:`within` give a claim's test its third answer: a :class:`Decision` is *undecided*
when the runs' intervals straddle the test's bound, so that a claim is said to differ only
when the runs contradict it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "MIN_HEADLINE_RUNS",
    "Decision",
    "Estimate",
    "about_equal",
    "above",
    "estimate_at",
    "estimate_of",
    "estimates_frame",
    "number_text",
    "ratio",
    "relative_difference",
    "run_estimate",
    "short_text",
    "summarise",
    "within",
]

MIN_HEADLINE_RUNS = 5
"""Fewer runs than this behind a headline number earn a warning wherever it is shown."""


@dataclass(frozen=True)
class Estimate:
    """A metric over one group of runs: the mean, its 95 % interval, how many runs.

    ``defined`` runs gave the metric (a run that did not complete gives none), out of
    ``runs``; ``identical`` when at least two did and all gave the same value (a
    deterministic experiment: one run's number, no interval). ``censored`` runs did not
    complete by a known bound (a completion time past the horizon): the mean then counts
    them at their bound and is a lower bound of the true mean, with no interval.
    """

    mean: float
    low: float
    high: float
    defined: int
    runs: int
    identical: bool = False
    censored: int = 0

    def record(self) -> dict[str, Any]:
        """JSON-ready: ``mean``, ``low``, ``high`` (None without an interval), ``n`` (runs
        that gave it), ``runs``, ``censored``.

        >>> run_estimate([1.0, 3.0]).record()["n"]
        2
        """
        def finite(x: float) -> float | None:
            return float(x) if math.isfinite(x) else None

        return {"mean": finite(self.mean), "low": finite(self.low), "high": finite(self.high),
                "n": self.defined, "runs": self.runs, "censored": self.censored}

    def scaled(self, factor: float) -> Estimate:
        """The estimate of ``factor`` times the quantity (``factor`` > 0): mean and interval
        scaled, the counts kept.

        >>> run_estimate([1.0, 2.0, 3.0]).scaled(2.0).mean
        4.0
        """
        return Estimate(self.mean * factor, self.low * factor, self.high * factor,
                        self.defined, self.runs, self.identical, self.censored)

    def shifted(self, delta: float) -> Estimate:
        """The estimate of the quantity plus ``delta``: mean and interval moved, the
        counts kept.

        >>> run_estimate([1.0, 1.0]).shifted(0.5).mean
        1.5
        """
        return Estimate(self.mean + delta, self.low + delta, self.high + delta,
                        self.defined, self.runs, self.identical, self.censored)

    def text(self, digits: int = 3) -> str:
        """``mean [low, high]`` with n, completions and the few-runs warning spelled out.

        >>> run_estimate([1.0, 2.0, 3.0]).text()
        '2 [0, 4.48] (n = 3; fewer than 5 runs)'
        >>> run_estimate([5.0, 5.0, None]).text()
        '5 (deterministic: 2 identical runs; 2 of 3 runs completed)'
        >>> run_estimate([5.0, 7.0, None], bounds=[None, None, 10.0]).text()
        '>= 7.33 (2 of 3 runs completed, 1 censored at its bound: a lower bound)'
        """
        if not math.isfinite(self.mean):
            return "-" if self.runs == 0 else f"- (0 of {self.runs} runs completed)"
        if self.censored:
            return (f">= {number_text(self.mean, digits)} ({self.defined} of {self.runs} runs "
                    f"completed, {self.censored} censored at its bound: a lower bound)")
        notes = []
        if self.identical:
            notes.append(f"deterministic: {self.defined} identical runs")
        else:
            notes.append(f"n = {self.defined}")
            if self.defined < MIN_HEADLINE_RUNS:
                notes.append(f"fewer than {MIN_HEADLINE_RUNS} runs")
        if self.defined < self.runs:
            notes.append(f"{self.defined} of {self.runs} runs completed")
        shown = number_text(self.mean, digits)
        if math.isfinite(self.low) and math.isfinite(self.high):
            shown += f" [{number_text(self.low, digits)}, {number_text(self.high, digits)}]"
        return f"{shown} ({'; '.join(notes)})"


def number_text(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, never in exponent form between
    1e-4 and 1e9 (88920, not 8.892e+04).

    >>> number_text(88923.4, 4), number_text(0.05234), number_text(2.0)
    ('88923', '0.0523', '2')
    """
    if value != 0 and math.isfinite(value) and 10 ** (digits - 1) <= abs(value) < 1e9:
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def run_estimate(values: Sequence[float | None], nonnegative: bool = True,
                 confidence: float = 0.95, fraction: bool = False,
                 bounds: Sequence[float | None] | None = None) -> Estimate:
    """The mean of ``values`` (one per run; None or NaN: the run did not give the metric)
    and its Student-t interval, intersected with ``[0, inf)`` for a ``nonnegative``
    quantity and with ``[0, 1]`` for a ``fraction`` (an interval below zero for a rate is
    a statement about no possible value; the intersection keeps the coverage). One
    defined value, or identical values (a deterministic experiment), give no interval.
    ``bounds`` (one per run, or None) censor the runs that gave no value at a known bound
    (a completion time cut by the horizon): such runs are counted at their bound, never
    dropped, and the mean is then a lower bound (``censored``), without an interval.

    >>> e = run_estimate([1.0, 3.0, None])
    >>> e.mean, round(e.high, 3), e.low, e.defined, e.runs  # t(0.975, 1) = 12.706
    (2.0, 14.706, 0.0, 2, 3)
    >>> run_estimate([0.75, 0.75, 0.75]).identical
    True
    >>> run_estimate([0.9, 1.0], fraction=True).high
    1.0
    """
    from tcpn.lenses.replications import equal_but_for_rounding, mean_ci

    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    cut = [float(b) for v, b in zip(values, bounds or [None] * len(values), strict=True)
           if (v is None or not math.isfinite(float(v))) and b is not None
           and math.isfinite(float(b))]
    if cut:
        return Estimate(float(np.mean(finite + cut)), math.nan, math.nan, len(finite),
                        len(values), censored=len(cut))
    if not finite:
        return Estimate(math.nan, math.nan, math.nan, 0, len(values))
    if len(finite) > 1 and equal_but_for_rounding(np.array(finite)):
        return Estimate(float(np.mean(finite)), math.nan, math.nan, len(finite),
                        len(values), identical=True)
    mean, half = mean_ci(finite, confidence)
    low, high = mean - half, mean + half
    if (nonnegative or fraction) and math.isfinite(low):
        low = max(low, 0.0)
    if fraction and math.isfinite(high):
        high = min(high, 1.0)
    return Estimate(mean, low, high, len(finite), len(values))


def summarise(runs: pd.DataFrame, metrics: Sequence[str],
              by: Sequence[str] = ("experiment", "axis", "value", "lens"),
              signed: Sequence[str] = (), fractions: Sequence[str] = ()) -> pd.DataFrame:
    """Per group: each metric's :func:`run_estimate` as columns ``<metric>`` (mean),
    ``<metric>_low``, ``<metric>_high`` (95 % interval; metrics not in ``signed`` are
    non-negative, those in ``fractions`` lie in [0, 1]), ``<metric>_n`` (runs that
    gave it) and ``<metric>_censored`` (runs censored at the bound a measurement gave in
    a ``<metric>_censored_at`` column: see :func:`run_estimate`), then ``runs`` (runs in
    the group, completed or not) and ``identical`` (at least two runs and every metric
    the same in all: a deterministic experiment). :func:`estimate_of` reads one back.

    >>> runs = pd.DataFrame({"experiment": ["a"] * 3, "lens": ["net"] * 3,
    ...                      "x": [1.0, 2.0, None]})
    >>> row = summarise(runs, ["x"], by=["experiment", "lens"]).iloc[0]
    >>> float(row["x"]), round(float(row["x_high"]), 3), int(row["x_n"]), int(row["runs"])
    (1.5, 7.853, 2, 3)
    """
    columns = [*by, *(f"{m}{suffix}" for m in metrics for suffix in ("", "_low", "_high",
                                                                      "_n", "_censored")),
               "runs", "identical"]
    if runs.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for key, group in runs.groupby(list(by), sort=False, dropna=False):
        row: dict[str, Any] = dict(zip(by, key if isinstance(key, tuple) else (key,),
                                       strict=True))
        found = []
        for metric in metrics:
            values = group[metric].tolist() if metric in group else [None] * len(group)
            bounds = group[f"{metric}_censored_at"].tolist() \
                if f"{metric}_censored_at" in group else None
            estimate = run_estimate(values, nonnegative=metric not in signed,
                                    fraction=metric in fractions, bounds=bounds)
            row[metric], row[f"{metric}_low"], row[f"{metric}_high"] = (
                estimate.mean, estimate.low, estimate.high)
            row[f"{metric}_n"] = estimate.defined
            row[f"{metric}_censored"] = estimate.censored
            found.append(estimate)
        row["runs"] = len(group)
        row["identical"] = bool(found) and all(e.identical or e.defined == 0 for e in found) \
            and any(e.identical for e in found)
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def estimate_of(row: Mapping[str, Any] | None, metric: str) -> Estimate:
    """The :class:`Estimate` of ``metric`` in one row of :func:`summarise` (an empty one
    when the row or the metric is missing)."""
    if row is None or metric not in row:
        return Estimate(math.nan, math.nan, math.nan, 0, 0)
    n, runs = int(row[f"{metric}_n"]), int(row["runs"])
    censored = row.get(f"{metric}_censored", 0)
    censored = int(censored) if censored is not None and censored == censored else 0
    mean = float(row[metric])
    return Estimate(mean, float(row[f"{metric}_low"]), float(row[f"{metric}_high"]), n, runs,
                    identical=n > 1 and not censored
                    and not math.isfinite(float(row[f"{metric}_low"])) and math.isfinite(mean),
                    censored=censored)


def estimate_at(table: pd.DataFrame, name: str, metric: str) -> Estimate:
    """The :class:`Estimate` of ``metric`` in the row named ``name`` of a summary indexed
    by experiment (an empty one when there is no such row).

    >>> runs = pd.DataFrame({"experiment": ["a", "a"], "x": [1.0, 3.0]})
    >>> table = summarise(runs, ["x"], by=["experiment"]).set_index("experiment")
    >>> estimate_at(table, "a", "x").mean, estimate_at(table, "b", "x").defined
    (2.0, 0)
    """
    return estimate_of(table.loc[name] if name in table.index else None, metric)


def estimates_frame(summary: pd.DataFrame, metrics: Sequence[str],
                    keys: Sequence[str] = ("experiment", "lens")) -> pd.DataFrame:
    """A display table of ``summary``: ``keys``, then per metric its mean and interval
    as one text column, then ``n`` (runs, "k of n completed" when some gave nothing, or
    "1 (deterministic, k identical)")."""
    rows = []
    for _, row in summary.iterrows():
        out = {k: row[k] for k in keys if k in row}
        found = [estimate_of(row, m) for m in metrics]
        for metric, estimate in zip(metrics, found, strict=True):
            out[metric] = short_text(estimate)
        out["n"] = _count(found, int(row["runs"]))
        rows.append(out)
    return pd.DataFrame(rows, columns=[*(k for k in keys if k in summary), *metrics, "n"])


def short_text(estimate: Estimate, digits: int = 4) -> str:
    if not math.isfinite(estimate.mean):
        return "-"
    if estimate.censored:
        return f">= {number_text(estimate.mean, digits)} ({estimate.censored} censored)"
    if math.isfinite(estimate.low) and math.isfinite(estimate.high):
        return (f"{number_text(estimate.mean, digits)} [{number_text(estimate.low, digits)}, "
                f"{number_text(estimate.high, digits)}]")
    return number_text(estimate.mean, digits)


def _count(found: Sequence[Estimate], runs: int) -> str:
    """The ``n`` column: runs, the fewest that gave any metric (a metric no run gave is
    one the experiment does not have, e.g. a second flow's), or one deterministic run."""
    least = min((e.defined for e in found if e.defined > 0), default=0)
    if found and all(e.identical or e.defined == 0 for e in found) \
            and any(e.identical for e in found):
        return f"1 (deterministic: {runs} identical runs)"
    text = str(runs) if least == runs else f"{least} of {runs} completed"
    return text + (f" (< {MIN_HEADLINE_RUNS})" if least < MIN_HEADLINE_RUNS else "")


def relative_difference(value: float, published: float) -> float:
    """``(value - published) / published``.

    >>> round(relative_difference(450.0, 500.0), 3)
    -0.1
    """
    return (value - published) / published


class Decision(Enum):
    """What the runs say of a claim's test: it holds, it fails, or the runs do not decide
    (an interval straddles the test's bound; more runs would tell). Combined by Kleene's
    three-valued logic: ``a & b`` fails if either fails, holds if both hold, else is
    undecided; ``a | b`` likewise; ``~a`` swaps holding and failing. Not a ``bool``: an
    ``if`` on a decision is an error, since *undecided* is neither.

    >>> (Decision.HOLDS & Decision.UNDECIDED).name, (Decision.FAILS & Decision.UNDECIDED).name
    ('UNDECIDED', 'FAILS')
    >>> (Decision.HOLDS | Decision.UNDECIDED).name, (~Decision.FAILS).name
    ('HOLDS', 'HOLDS')
    >>> Decision.of(3 > 2).name, Decision.all([True, Decision.UNDECIDED]).name
    ('HOLDS', 'UNDECIDED')
    """

    HOLDS = "holds"
    FAILS = "fails"
    UNDECIDED = "undecided"

    @classmethod
    def of(cls, value: bool | Decision) -> Decision:
        """``value`` as a decision (a ``bool`` is a decided test: one on means)."""
        if isinstance(value, Decision):
            return value
        return cls.HOLDS if value else cls.FAILS

    @classmethod
    def all(cls, values: Iterable[bool | Decision]) -> Decision:
        """The conjunction of ``values`` (holds for none)."""
        out = cls.HOLDS
        for value in values:
            out = out & cls.of(value)
        return out

    def __and__(self, other: bool | Decision) -> Decision:
        both = {self, Decision.of(other)}
        if Decision.FAILS in both:
            return Decision.FAILS
        return Decision.UNDECIDED if Decision.UNDECIDED in both else Decision.HOLDS

    def __or__(self, other: bool | Decision) -> Decision:
        return ~(~self & ~Decision.of(other))

    def __invert__(self) -> Decision:
        swapped = {Decision.HOLDS: Decision.FAILS, Decision.FAILS: Decision.HOLDS}
        return swapped.get(self, Decision.UNDECIDED)

    def __bool__(self) -> bool:
        raise TypeError("a Decision is not a bool (it may be undecided): compare it with "
                        "Decision.HOLDS")


def _bounds(estimate: Estimate) -> tuple[float, float]:
    """The estimate's 95 % interval; from its mean up, unbounded, for a censored mean (a
    lower bound); its mean twice when it has none (one run, a deterministic
    experiment)."""
    if estimate.censored:
        return estimate.mean, math.inf
    if math.isfinite(estimate.low) and not math.isnan(estimate.high):  # high may be inf
        return estimate.low, estimate.high
    return estimate.mean, estimate.mean


def above(a: Estimate, b: Estimate | float) -> Decision:
    """Whether the runs put ``a`` above ``b`` (an estimate or a number): holds when ``a``'s
    interval lies wholly above ``b``'s, fails when it lies wholly at or below it, and is
    undecided when they overlap. A number, or an estimate without an interval, counts as
    its mean; a missing mean fails.

    >>> above(run_estimate([10.0, 11.0, 12.0]), run_estimate([5.0, 6.0, 7.0])).name
    'HOLDS'
    >>> above(run_estimate([5.0, 6.0, 7.0]), run_estimate([10.0, 11.0, 12.0])).name
    'FAILS'
    >>> above(run_estimate([10.0, 30.0]), run_estimate([5.0, 15.0])).name
    'UNDECIDED'
    >>> above(run_estimate([1.0, 1.0]), 1.0).name  # a deterministic tie is not above
    'FAILS'
    """
    other = b if isinstance(b, Estimate) else run_estimate([float(b)], nonnegative=False)
    if not (math.isfinite(a.mean) and math.isfinite(other.mean)):
        return Decision.FAILS
    (a_low, a_high), (b_low, b_high) = _bounds(a), _bounds(other)
    if a_low > b_high:
        return Decision.HOLDS
    if a_high <= b_low:
        return Decision.FAILS
    return Decision.UNDECIDED


def within(a: Estimate, low: float, high: float) -> Decision:
    """Whether the runs put ``a`` within ``[low, high]``: holds when its interval lies
    inside, fails when it lies wholly outside, undecided when it straddles a bound (an
    estimate without an interval counts as its mean; a missing mean fails).

    >>> within(run_estimate([0.95, 1.0, 1.05]), 0.8, 1.2).name
    'HOLDS'
    >>> within(run_estimate([0.6, 1.4, 2.1]), 0.8, 1.2).name
    'UNDECIDED'
    >>> within(run_estimate([1.5, 1.6, 1.7]), 0.8, 1.2).name
    'FAILS'
    """
    if not math.isfinite(a.mean):
        return Decision.FAILS
    a_low, a_high = _bounds(a)
    if low <= a_low and a_high <= high:
        return Decision.HOLDS
    if a_high < low or a_low > high:
        return Decision.FAILS
    return Decision.UNDECIDED


def about_equal(a: Estimate, b: Estimate, tolerance: float) -> Decision:
    """Whether the runs put ``a`` and ``b`` within ``tolerance`` (a fraction) of each other:
    holds when every value of both intervals lies within a factor ``1 + tolerance`` of
    every other (the larger interval top at most ``1 + tolerance`` times the smaller
    interval bottom), fails when one interval lies wholly above ``1 + tolerance`` times
    the other's top, and is undecided otherwise (the runs cannot tell a gap of that size
    from none). An estimate without an interval counts as its mean; a missing mean fails.

    >>> close, spread = run_estimate([100.0, 101.0, 102.0]), run_estimate([80.0, 100.0, 120.0])
    >>> about_equal(close, run_estimate([101.0, 102.0, 103.0]), 0.1).name
    'HOLDS'
    >>> about_equal(close, spread, 0.1).name
    'UNDECIDED'
    >>> about_equal(close, run_estimate([120.0, 121.0, 122.0]), 0.1).name
    'FAILS'
    """
    if not (math.isfinite(a.mean) and math.isfinite(b.mean)):
        return Decision.FAILS
    (a_low, a_high), (b_low, b_high) = _bounds(a), _bounds(b)
    factor = 1.0 + tolerance
    if max(a_high, b_high) <= factor * min(a_low, b_low):
        return Decision.HOLDS
    if a_low > factor * b_high or b_low > factor * a_high:
        return Decision.FAILS
    return Decision.UNDECIDED


def ratio(a: Estimate, b: Estimate) -> Estimate:
    """The ratio of two non-negative quantities measured on separate runs: the ratio of
    the means, with the interval of every ratio of a value in ``a``'s interval to one in
    ``b``'s (conservative: wider than a 95 % interval of the ratio; unbounded above when
    ``b``'s interval reaches 0). Estimates without an interval count as their mean; the
    ratio has an interval when either has one. ``defined`` and ``runs`` are the smaller
    of the two.

    >>> r = ratio(run_estimate([8.0, 10.0, 12.0]), run_estimate([20.0, 20.0, 20.0]))
    >>> round(r.mean, 2), round(r.low, 3), round(r.high, 3)
    (0.5, 0.252, 0.748)
    >>> ratio(run_estimate([3.0]), run_estimate([4.0])).mean
    0.75
    >>> cut = run_estimate([5.0, None], bounds=[None, 10.0])  # >= 7.5: one run censored
    >>> ratio(cut, run_estimate([5.0])).high, ratio(run_estimate([5.0]), cut).low
    (inf, 0.0)
    """
    defined, runs = min(a.defined, b.defined), min(a.runs, b.runs)
    if not (math.isfinite(a.mean) and math.isfinite(b.mean)) or b.mean == 0:
        return Estimate(math.nan, math.nan, math.nan, defined, runs)
    mean = a.mean / b.mean
    (a_low, a_high), (b_low, b_high) = _bounds(a), _bounds(b)
    if a_low == a_high and b_low == b_high:
        return Estimate(mean, math.nan, math.nan, defined, runs,
                        identical=a.identical and b.identical)
    # a censored mean is a lower bound: the ratio's interval then runs to infinity (a
    # censored numerator) or down to 0 (a censored denominator)
    return Estimate(mean, a_low / b_high, a_high / b_low if b_low > 0 else math.inf,
                    defined, runs)
