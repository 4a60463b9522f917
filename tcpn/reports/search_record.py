"""The written record of a parameter search: ``search.csv``, ``search.json``, ``search.png``.

:func:`write_search` puts what :func:`tcpn.experiments.optimize.optimize` found into a
directory, the three files together or not at all (:func:`tcpn.outputs.atomic_files`):
every evaluated point (value, objective mean, 95 % half-width, runs, whether it is
near-optimal) as CSV, the same with the optimum, the ranges and the closed-form
predictions as JSON, and a figure of the objective against the parameter with the
near-optimal range shaded and the predictions marked.

>>> from tcpn.experiments.optimize import OptimizationResult, Point
>>> pts = [Point(float(v), o, 0.0, 1) for v, o in ((10, 1.0), (20, 2.0), (30, 2.0))]
>>> found = OptimizationResult("ecn_k", "goodput", "fluid", pts, pts[1], (20.0, 30.0),
...                            {"dctcp_min_k": 12.5}, near_optimal=(20.0, 30.0),
...                            integer=True)
>>> search_frame(found)["near_optimal"].tolist()
[False, True, True]
>>> search_json(found)["near_optimal"]
[20.0, 30.0]
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from tcpn.experiments.optimize import OptimizationResult
from tcpn.outputs import atomic_files, save_figure

__all__ = ["search_figure", "search_frame", "search_json", "write_search"]


def search_frame(found: OptimizationResult) -> pd.DataFrame:
    """One row per evaluated value: ``value``, ``objective``, ``half_width``, ``runs``,
    ``near_optimal``, ``best``."""
    low, high = found.near_optimal
    return pd.DataFrame([{"value": p.value, "objective": p.objective,
                          "half_width": p.half_width, "runs": p.runs,
                          "near_optimal": low <= p.value <= high,
                          "best": p is found.best} for p in found.points])


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def search_json(found: OptimizationResult) -> dict[str, Any]:
    """The search as JSON-ready data (non-finite objectives, infeasible points, as null)."""
    return {
        "format": "tcpn-search/1", "parameter": found.parameter, "integer": found.integer,
        "objective": found.objective, "lens": found.lens, "best": found.best.value,
        "best_objective": _finite(found.best.objective),
        "near_optimal": list(found.near_optimal), "tolerance": found.tolerance,
        "indistinguishable": list(found.indistinguishable),
        "predictions": {name: _finite(v) for name, v in found.predictions.items()},
        "points": [{"value": p.value, "objective": _finite(p.objective),
                    "half_width": _finite(p.half_width), "runs": p.runs}
                   for p in found.points],
    }


def search_figure(found: OptimizationResult, path: str | Path, overwrite: bool = False,
                  ) -> Path:
    """The objective against the parameter (95 % bars), near-optimal range shaded, the
    optimum and the closed-form predictions marked; written to ``path`` whole or not at
    all (an existing file only with ``overwrite``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values, objective, half = found.curve()
    fig, ax = plt.subplots(figsize=(7, 4))
    low, high = found.near_optimal
    ax.axvspan(low, high, color="0.88", zorder=0,
               label=f"near-optimal (within {found.tolerance:.0%})")
    feasible = [math.isfinite(o) for o in objective]
    ax.errorbar(values[feasible], objective[feasible], yerr=half[feasible], marker="o",
                markersize=3, linewidth=1.0, capsize=2, label=f"{found.objective} "
                f"({found.lens} lens)")
    ax.axvline(found.best.value, color="C3", linewidth=1.0,
               label=f"best {found.parameter} = {found.format_value(found.best.value)}")
    for i, (name, value) in enumerate(found.predictions.items()):
        if math.isfinite(value) and values.min() <= value <= values.max():
            ax.axvline(value, color=f"C{4 + i % 5}", linestyle="--", linewidth=0.8,
                       label=f"{name} = {value:.4g}")
    ax.set_xlabel(found.parameter)
    ax.set_ylabel(found.objective)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path, 110, overwrite)


def write_search(found: OptimizationResult, directory: str | Path,
                 overwrite: bool = False) -> Path:
    """Write ``search.csv``, ``search.json`` and ``search.png`` into ``directory``: together
    or not at all, an existing one replaced only with ``overwrite``."""
    out = Path(directory)
    names = ("search.csv", "search.json", "search.png")
    with atomic_files([out / name for name in names], overwrite) as (csv, record, figure):
        search_frame(found).to_csv(csv, index=False)
        record.write_text(json.dumps(search_json(found), indent=1, allow_nan=False) + "\n")
        search_figure(found, figure)
    return out
