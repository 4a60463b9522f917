"""A campaign's results as one tidy table: parameters as columns, metrics with their CIs.

:func:`load_results` reads what the store holds for a sweep (nothing runs). The tables
depend only on the stored records, never on the executor or the order runs finished in:

* :meth:`CampaignResults.values` one row per (cell, lens, replication, scope, name,
  metric) with its ``value``;
* :meth:`CampaignResults.table` one row per (cell, lens, scope, name, metric): ``mean``,
  ``half_width`` of the 95 % Student-t interval, ``low``, ``high``, ``n`` (runs where the
  metric is defined), ``runs`` and ``failed``; a cell without results (an invalid
  scenario, failed or missing runs) has a row with its ``error``;
* :meth:`CampaignResults.to_xarray` the table as an ``xarray.Dataset`` (dimensions: the
  axes of a grid, else ``cell``), when xarray is installed.

Scopes, names and metrics are those of :func:`tcpn.models.metrics.summarize`
(``aggregate``/``all``/``goodput_bps``, ``flow``/``f0``/``rtt_mean_s``...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tcpn.errors import InputError
from tcpn.experiments.sweep.campaign import EVALUATIONS, RunTask, sweep_tasks
from tcpn.experiments.sweep.spec import Sweep
from tcpn.experiments.sweep.store import CampaignStore
from tcpn.lenses.replications import mean_ci, summary_rows
from tcpn.models.traces import AGGREGATE_METRICS

__all__ = ["CampaignResults", "check_metric", "load_results"]

def _column_value(value: Any) -> Any:
    """A parameter value as a table cell: scalars as they are, mappings and lists as JSON."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(", ", ": "))
    return value


@dataclass
class CampaignResults:
    """What the store holds for each run of a sweep (None: not run yet)."""

    sweep: Sweep
    records: list[tuple[RunTask, dict[str, Any] | None]]
    confidence: float = 0.95

    def _params(self) -> dict[int, dict[str, Any]]:
        return {cell.index: {p: _column_value(v) for p, v in cell.params.items()}
                for cell in self.sweep.cells()}

    def _lens_labels(self) -> dict[tuple[str, tuple[tuple[str, Any], ...]], str]:
        return {(lens.name, lens.options): lens.label for lens in self.sweep.lenses}

    @property
    def missing(self) -> int:
        """Runs the store does not hold yet."""
        return sum(record is None for _, record in self.records)

    def runs(self) -> pd.DataFrame:
        """One row per run: ``cell``, the parameters, ``lens``, ``replication``, ``key``,
        ``error`` ("" when it succeeded, "not run" when missing), ``cpu_time_s``."""
        params, labels = self._params(), self._lens_labels()
        rows = []
        for task, record in self.records:
            error = "not run" if record is None else (record.get("error") or "")
            cpu = np.nan if record is None else record.get("run", {}).get("cpu_time_s", np.nan)
            rows.append({"cell": task.cell, **params[task.cell],
                         "lens": labels[(task.lens, task.options)],
                         "replication": task.replication, "key": task.key, "error": error,
                         "cpu_time_s": cpu})
        return pd.DataFrame(rows, columns=["cell", *self.sweep.parameters, "lens",
                                           "replication", "key", "error", "cpu_time_s"])

    def values(self) -> pd.DataFrame:
        """Every metric of every stored run (see the module docstring)."""
        params, labels = self._params(), self._lens_labels()
        rows = []
        for task, record in self.records:
            if record is None or record.get("summary") is None:
                continue
            head = (task.cell, *params[task.cell].values(),
                    labels[(task.lens, task.options)], task.replication)
            rows += [(*head, *row) for row in summary_rows(record["summary"])]
        return pd.DataFrame(rows, columns=["cell", *self.sweep.parameters, "lens",
                                           "replication", "scope", "name", "metric", "value"])

    def table(self) -> pd.DataFrame:
        """Means with confidence intervals per cell, lens and metric (module docstring)."""
        params, labels = self._params(), self._lens_labels()
        counts: dict[tuple[int, str], list[int]] = {}
        errors: dict[tuple[int, str], list[str]] = {}
        samples: dict[tuple[int, str, str, str, str], list[float]] = {}
        for task, record in self.records:
            key = (task.cell, labels[(task.lens, task.options)])
            tally = counts.setdefault(key, [0, 0])
            tally[0] += 1
            problem = "not run" if record is None else record.get("error")
            if problem:
                tally[1] += 1
                errors.setdefault(key, []).append(f"run {task.replication}: {problem}")
            elif record is not None and record.get("summary") is not None:
                for scope, name, metric, value in summary_rows(record["summary"]):
                    samples.setdefault((*key, scope, name, metric), []).append(value)
        rows: list[dict[str, Any]] = []
        for (index, label, scope, name, metric), found in samples.items():
            mean, half = mean_ci(found, self.confidence)
            runs, failed = counts[(index, label)]
            rows.append({"cell": index, **params[index], "lens": label, "scope": scope,
                         "name": name, "metric": metric, "mean": mean, "half_width": half,
                         "low": mean - half, "high": mean + half,
                         "n": int(np.isfinite(found).sum()), "runs": runs, "failed": failed,
                         "error": "; ".join(errors.get((index, label), []))})
        reported = {(row["cell"], row["lens"]) for row in rows}
        for cell in self.sweep.cells():
            for lens in self.sweep.lenses:
                if (cell.index, lens.label) in reported:
                    continue
                runs, failed = counts.get((cell.index, lens.label), [0, 0])
                rows.append({"cell": cell.index, **params[cell.index], "lens": lens.label,
                             "scope": "", "name": "", "metric": "", "mean": np.nan,
                             "half_width": np.nan, "low": np.nan, "high": np.nan, "n": 0,
                             "runs": runs, "failed": failed,
                             "error": cell.error or "; ".join(errors.get(
                                 (cell.index, lens.label), []))})
        lens_order = {lens.label: i for i, lens in enumerate(self.sweep.lenses)}
        rows.sort(key=lambda r: (r["cell"], lens_order[r["lens"]]))
        return pd.DataFrame(rows, columns=["cell", *self.sweep.parameters, "lens", "scope",
                                           "name", "metric", "mean", "half_width", "low",
                                           "high", "n", "runs", "failed", "error"])

    def metric(self, metric: str, scope: str = "aggregate", name: str = "all",
               ) -> pd.DataFrame:
        """The rows of :meth:`table` for one metric (default: the aggregate's)."""
        table = self.table()
        if scope == "aggregate":
            check_metric(self.sweep, metric)
        scoped = table[(table["scope"] == scope) & (table["name"] == name)]
        known = list(dict.fromkeys(scoped["metric"]))
        if known and metric not in known:
            raise InputError(f"no {scope} metric {metric!r} in the results of "
                             f"{self.sweep.name}; metrics: {', '.join(known)}")
        return scoped[scoped["metric"] == metric].reset_index(drop=True)

    def to_xarray(self) -> Any:
        """:meth:`table` as an ``xarray.Dataset``: dimensions are the axes for a grid
        (else ``cell``), then ``lens``, ``scope``, ``name``, ``metric``; variables
        ``mean``, ``half_width``, ``low``, ``high``, ``n``. Needs xarray."""
        try:
            import xarray  # noqa: F401 - pandas uses it
        except ImportError:
            from tcpn.errors import TcpnError
            raise TcpnError("to_xarray needs xarray: pip install xarray") from None
        table = self.table()
        table = table[table["metric"] != ""]
        dims = self.sweep.parameters if self.sweep.is_grid and self.sweep.parameters \
            else ["cell"]
        index = [*dims, "lens", "scope", "name", "metric"]
        data = table.set_index(index)[["mean", "half_width", "low", "high", "n"]]
        return data.to_xarray()


def check_metric(sweep: Sweep, metric: str) -> None:
    """Refuse an aggregate ``metric`` that no lens of ``sweep`` computes, before any run
    (a registered evaluation's metrics are its own: they are known once it has run).

    >>> from tcpn.experiments.sweep.spec import parse_sweep
    >>> sweep = parse_sweep('''
    ... links: [{a: A, b: B, rate_bps: 1.0e6, delay_s: 0.01}]
    ... flows: [{src: A, dst: B, variant: reno}]
    ... horizon_s: 1
    ... sweep: {axes: {horizon_s: [1, 2]}, lenses: [fluid]}
    ... ''')
    >>> check_metric(sweep, "ratio")
    Traceback (most recent call last):
    ...
    tcpn.errors.InputError: unknown aggregate metric 'ratio'; metrics: goodput_bps, \
throughput_bps, jain_index, loss_ratio, retransmission_ratio, mark_ratio
    """
    if metric in AGGREGATE_METRICS or any(lens.name in EVALUATIONS for lens in sweep.lenses):
        return
    raise InputError(f"unknown aggregate metric {metric!r}; metrics: "
                     f"{', '.join(AGGREGATE_METRICS)}")


def load_results(sweep: Sweep, store: CampaignStore, confidence: float = 0.95,
                 ) -> CampaignResults:
    """What ``store`` holds for ``sweep`` (missing runs are ``None``; nothing runs)."""
    return CampaignResults(sweep, [(task, store.get(task.key)) for task in sweep_tasks(sweep)],
                           confidence)
