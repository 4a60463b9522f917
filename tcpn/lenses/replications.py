"""Independent replications of a scenario and 95 % confidence intervals on its metrics.

Run ``i`` of seed ``s`` is seeded by ``SeedSequence(s, spawn_key=(i,))`` (the same stream
:func:`tcpn.lenses.base.make_run` gives a single run), runs go to local worker processes
(:mod:`concurrent.futures`), and results are gathered by run index, so the numbers do not
depend on the number of workers or on which run finishes first. Intervals are Student-t:
``mean ± t_{(1+c)/2, n-1} * s / sqrt(n)`` over the runs where the metric is defined.

>>> mean, half = mean_ci([1.0, 2.0, 3.0])
>>> mean, round(half, 4)  # t(0.975, 2) = 4.3027, s = 1
(2.0, 2.4841)
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tcpn.errors import InputError
from tcpn.lenses.base import make_run
from tcpn.lenses.run import run_once, streamed_run
from tcpn.models.scenario import AGGREGATE_NAME, Scenario
from tcpn.models.traces import ScenarioResult
from tcpn.outputs import atomic_directory
from tcpn.workers import run_in_workers

#: Largest number of runs one command may ask for (replications here, cells x lenses x
#: replications in a sweep): a guard against a typo's 10**12.
MAX_RUNS = 1_000_000

__all__ = ["ReplicationResult", "equal_but_for_rounding", "flow_table", "half_widths", "mean_ci",
           "replicate", "summary_rows", "t_quantile", "values_table"]


def mean_ci(values: Sequence[float | None], confidence: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of the Student-t confidence interval of ``values``.

    ``None`` and NaN values (a metric undefined in that run) are left out; the half-width
    is NaN with fewer than two values left, and 0 when they are all equal, or differ only
    by floating-point rounding (a few ulps of the largest, as sums taken in another order
    give): an interval of ``2.8e-13`` around 0.75 would be noise presented as a result.

    >>> mean_ci([0.75, 0.75 + 2e-16, 0.75])[1], round(mean_ci([1.0, 2.0, 3.0])[1], 4)
    (0.0, 2.4841)
    """
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence:g}")
    x = np.array([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan"), float("nan")
    if x.size == 1:
        return float(x[0]), float("nan")
    if equal_but_for_rounding(x):
        return float(x.mean()), 0.0
    t = t_quantile(confidence, x.size - 1)
    return float(x.mean()), t * float(x.std(ddof=1)) / math.sqrt(x.size)


@functools.cache
def t_quantile(confidence: float, dof: int) -> float:
    """The Student-t quantile ``t_{(1+c)/2, dof}`` of a two-sided ``confidence`` interval,
    computed once per number of runs (a sweep's table has thousands of groups of one size).

    >>> round(t_quantile(0.95, 2), 4)
    4.3027
    """
    return float(stats.t.ppf(0.5 + confidence / 2.0, dof))


def half_widths(count: Any, std: Any, confidence: float = 0.95) -> Any:
    """:func:`mean_ci`'s half-width for many groups at once (the bins of a time series):
    ``count`` values of sample standard deviation ``std`` each (arrays or Series). A group
    of one value has a NaN ``std``, hence a NaN half-width, as in :func:`mean_ci`; equal
    values are not rounded to 0 here (a figure's band, not a reported number).

    >>> [round(float(h), 4) for h in half_widths(np.array([3, 3]), np.array([1.0, 2.0]))]
    [2.4841, 4.9683]
    """
    return stats.t.ppf(0.5 + confidence / 2.0, np.maximum(count - 1, 1)) * std / np.sqrt(count)


def equal_but_for_rounding(values: np.ndarray) -> bool:
    """Whether ``values`` differ by at most 16 units in the last place of the largest."""
    scale = float(np.abs(values).max())
    return bool(float(np.ptp(values)) <= 16 * float(np.finfo(float).eps) * scale)


def summary_rows(summary: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    """Flatten a summary (:func:`tcpn.models.metrics.summarize`) into
    ``(scope, name, metric, value)`` rows; scope is ``flow``, ``queue`` or ``aggregate``."""
    rows: list[tuple[str, str, str, float]] = []
    for scope, key in (("flow", "flows"), ("queue", "queues")):
        for name, metrics in summary.get(key, {}).items():
            rows += [(scope, name, metric, _number(v)) for metric, v in metrics.items()]
    rows += [("aggregate", AGGREGATE_NAME, metric, _number(v))
             for metric, v in summary.get("aggregate", {}).items()]
    return rows


def values_table(values: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Means and confidence intervals of runs' values (:meth:`ReplicationResult.values`'s
    columns), per (scope, name, metric): ``mean``, ``half_width``, ``low``, ``high``,
    ``n`` (runs where the metric is defined)."""
    rows = []
    for key, group in values.groupby(["scope", "name", "metric"], sort=False):
        mean, half = mean_ci(group["value"].tolist(), confidence)
        n = int(np.isfinite(group["value"].to_numpy()).sum())
        rows.append((*key, mean, half, mean - half, mean + half, n))
    return pd.DataFrame(rows, columns=["scope", "name", "metric", "mean", "half_width",
                                       "low", "high", "n"]
                        ).set_index(["scope", "name", "metric"])


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


@dataclass
class ReplicationResult:
    """The runs of one scenario with one lens: their summaries, and means with CIs.

    ``summaries[i]`` and ``seeds[i]`` belong to run ``i``; ``runs`` holds the whole
    :class:`~tcpn.models.traces.ScenarioResult` objects when they were kept.
    """

    scenario: Scenario
    lens: str
    seed: int
    summaries: list[dict[str, Any]]
    seeds: list[dict[str, Any]]
    wall_times_s: list[float]
    runs: list[ScenarioResult] = field(default_factory=list)
    confidence: float = 0.95

    @property
    def replications(self) -> int:
        """Number of runs."""
        return len(self.summaries)

    def values(self) -> pd.DataFrame:
        """Every metric of every run: columns ``scope``, ``name``, ``metric``,
        ``replication``, ``value``."""
        return pd.DataFrame([(*row[:3], i, row[3]) for i, s in enumerate(self.summaries)
                             for row in summary_rows(s)],
                            columns=["scope", "name", "metric", "replication", "value"])

    def table(self) -> pd.DataFrame:
        """Per (scope, name, metric): ``mean``, ``half_width``, ``low``, ``high``, ``n``
        (runs where the metric is defined)."""
        return values_table(self.values(), self.confidence)

    def _repr_html_(self) -> str:
        import html

        head = html.escape(f"{self.scenario.name} ({self.lens} lens): {self.replications} "
                           "runs, per-flow means and 95 % CI half-widths (_hw)")
        table = flow_table(self).to_html(float_format=lambda v: f"{v:.4g}")
        return f"<p><strong>{head}</strong></p>{table}"

    def to_json(self) -> dict[str, Any]:
        """Everything but the traces, JSON-ready."""
        table = self.table().reset_index()
        return {
            "format": "tcpn-replications/1",
            "scenario_name": self.scenario.name, "scenario_hash": self.scenario.content_hash(),
            "lens": self.lens, "seed": self.seed, "replications": self.replications,
            "confidence": self.confidence, "seeds": self.seeds,
            "wall_times_s": self.wall_times_s, "summaries": self.summaries,
            "table": [{k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                       for k, v in row.items()} for row in table.to_dict(orient="records")],
        }


def _run(scenario: Scenario, lens: str, seed: int, index: int, output: Path | None,
         options: dict[str, Any], keep_trace: bool) -> ScenarioResult | dict[str, Any]:
    """One replication (in a worker process): the result, or only its summary record
    (its trace, unless written to ``output``, streamed to a temporary directory removed
    afterwards: :func:`~tcpn.lenses.run.streamed_run`)."""
    run = make_run(scenario, seed, index)
    if output is None and not keep_trace:
        with streamed_run(scenario, lens, run, options) as result:
            return _record(result)
    result = run_once(scenario, lens, run, output, options)
    if keep_trace:  # read now: ``output`` is inside a directory renamed when all are done
        result.trace.in_memory()
        return result
    return _record(result)


def _record(result: ScenarioResult) -> dict[str, Any]:
    """What a replication returns when its trace is not kept."""
    return {"summary": result.summary, "seed": result.seed, "wall_time_s": result.wall_time_s}


def replicate(scenario: Scenario, lens: str = "net", seed: int | None = None,
              replications: int = 10, output: str | Path | None = None,
              workers: int | None = None, progress: Callable[[float], None] | None = None,
              options: dict[str, Any] | None = None, keep_traces: bool = True,
              confidence: float = 0.95, overwrite: bool = False) -> ReplicationResult:
    """Run ``replications`` independent runs of ``scenario`` with ``lens``.

    ``workers`` processes (default: CPU count, at most ``replications``; 1 runs in this
    process). With ``output``, run ``i`` is written to ``output/rep-{i:03d}`` and
    ``output/replications.json`` (means and CIs) last; the whole directory is written
    under a temporary name and appears only when every run is in it
    (:func:`tcpn.outputs.atomic_directory`: an existing tcpn output is replaced
    only with ``overwrite``). ``keep_traces=False`` returns only the summaries (the traces
    stay on disk with ``output``), which keeps the parent's memory small. ``progress``
    receives the number of runs completed. An interruption (Ctrl-C) terminates the
    worker processes at once and leaves nothing behind.
    """
    if not 1 <= replications <= MAX_RUNS:
        raise InputError(f"replications must be 1 to {MAX_RUNS:,}, got {replications:,}")
    base = scenario.seed if seed is None else seed
    count = min(replications, workers or os.cpu_count() or 1)
    if count < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    if output is None:
        return _replicate(scenario, lens, base, replications, None, count, progress,
                          options, keep_traces, confidence)
    with atomic_directory(Path(output), overwrite) as tmp:
        return _replicate(scenario, lens, base, replications, tmp, count, progress,
                          options, keep_traces, confidence)


def _replicate(scenario: Scenario, lens: str, base: int, replications: int, out: Path | None,
               count: int, progress: Callable[[float], None] | None,
               options: dict[str, Any] | None, keep_traces: bool,
               confidence: float) -> ReplicationResult:
    jobs = [(scenario, lens, base, i, out / f"rep-{i:03d}" if out is not None else None,
             dict(options or {}), keep_traces) for i in range(replications)]
    done: list[ScenarioResult | dict[str, Any] | None] = [None] * replications
    if count == 1:
        for i, job in enumerate(jobs):
            done[i] = _run(*job)
            if progress is not None:
                progress(i + 1)
    else:
        finished = [0]

        def collect(index: int, result: ScenarioResult | dict[str, Any]) -> None:
            done[index] = result
            finished[0] += 1
            if progress is not None:
                progress(finished[0])

        run_in_workers(_run, jobs, count, collect)
    records: list[dict[str, Any]] = [
        r if isinstance(r, dict) else {"summary": r.summary, "seed": r.seed,
                                       "wall_time_s": r.wall_time_s}
        for r in done if r is not None]
    result = ReplicationResult(
        scenario=scenario, lens=lens, seed=base,
        summaries=[r["summary"] for r in records], seeds=[r["seed"] for r in records],
        wall_times_s=[float(r["wall_time_s"]) for r in records],
        runs=[r for r in done if isinstance(r, ScenarioResult)], confidence=confidence)
    if out is not None:
        (out / "replications.json").write_text(json.dumps(result.to_json(), indent=1,
                                                          allow_nan=False))
    return result


def flow_table(result: ScenarioResult | ReplicationResult,
               metrics: Sequence[str] = ("goodput_bps", "throughput_bps", "loss_ratio",
                                         "retransmission_ratio", "rtt_mean_s"),
               ) -> pd.DataFrame:
    """Per-flow ``<metric>`` and ``<metric>_hw`` (CI half-width, NaN for one run) columns,
    one row per flow plus ``all`` for the aggregate (with ``jain_index``): what ``tcpn run``
    prints. ``attrs["absent"]`` holds the metrics the runs could not compute, with why
    (their cells are NaN)."""
    summaries = [result.summary] if isinstance(result, ScenarioResult) else result.summaries
    confidence = result.confidence if isinstance(result, ReplicationResult) else 0.95
    flows = list(summaries[0].get("flows", {}))
    rows: dict[str, dict[str, float]] = {}
    for name in [*flows, AGGREGATE_NAME]:
        row: dict[str, float] = {}
        wanted = [*metrics, "jain_index"] if name == AGGREGATE_NAME else list(metrics)
        for metric in wanted:
            values = [(s["aggregate"] if name == AGGREGATE_NAME else s["flows"][name]).get(metric)
                      for s in summaries]
            if name == AGGREGATE_NAME and all(v is None for v in values):
                continue
            row[metric], row[f"{metric}_hw"] = mean_ci(values, confidence)
        rows[name] = row
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("flow")
    frame.attrs["absent"] = {metric: reason for s in summaries
                             for metric, reason in s.get("absent", {}).items()}
    return frame
