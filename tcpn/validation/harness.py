"""Cross-validation: one scenario through two lenses, metric by metric, with verdicts.

:func:`compare` runs each lens ``replications`` times (independent seeds, the same
scenario draws for the same seed in every lens), takes each metric's mean and 95 %
confidence interval from :meth:`ReplicationResult.table`, and judges the relative error
of the second lens against the first (the reference, normally ns-3) with the targets of
:data:`TOLERANCES`. A target is never widened to turn a row green: a failing row is a
finding (a modelling difference, a default, or a bug in a lens).

>>> Tolerance(relative=0.05).judge(100.0, 104.0)
True
>>> Tolerance(relative=0.25, absolute=0.002).judge(0.001, 0.0025)
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcpn.models.lenses import evaluate
from tcpn.models.scenario import Scenario

__all__ = ["TOLERANCES", "Tolerance", "compare", "write_comparison"]


@dataclass(frozen=True)
class Tolerance:
    """Accept when ``|value - reference| <= max(relative * |reference|, absolute)``."""

    relative: float = 0.0
    absolute: float = 0.0

    def judge(self, reference: float, value: float) -> bool:
        """Whether ``value`` is within the tolerance of ``reference``."""
        if not (math.isfinite(reference) and math.isfinite(value)):
            return False
        return abs(value - reference) <= max(self.relative * abs(reference), self.absolute)

    def describe(self) -> str:
        """The target as text, e.g. ``"5 %"`` or ``"25 % or 0.002"``."""
        parts = []
        if self.relative:
            parts.append(f"{self.relative * 100:g} %")
        if self.absolute:
            parts.append(f"{self.absolute:g}")
        return " or ".join(parts)


TOLERANCES: dict[tuple[str, str], Tolerance] = {
    ("flow", "goodput_bps"): Tolerance(relative=0.05),
    ("aggregate", "goodput_bps"): Tolerance(relative=0.03),
    ("aggregate", "jain_index"): Tolerance(absolute=0.05),
    ("flow", "loss_ratio"): Tolerance(relative=0.25, absolute=0.002),
    ("flow", "retransmission_ratio"): Tolerance(relative=0.25, absolute=0.002),
    ("aggregate", "loss_ratio"): Tolerance(relative=0.25, absolute=0.002),
    ("aggregate", "retransmission_ratio"): Tolerance(relative=0.25, absolute=0.002),
    ("queue", "mean_packets"): Tolerance(relative=0.15),
    ("flow", "rtt_mean_s"): Tolerance(relative=0.10),
}
"""The accuracy targets of the reference set (issue 7), by (scope, metric)."""


def compare(scenario: Scenario | str | Path, lenses: Sequence[str] = ("ns3", "net"),
            replications: int = 3, seed: int | None = None, workers: int | None = None,
            ) -> pd.DataFrame:
    """Run ``lenses[0]`` (the reference) and ``lenses[1]``; one row per judged metric with
    both means and CI half-widths, the relative error, the target and the verdict."""
    if len(lenses) != 2:
        raise ValueError(f"compare needs exactly two lenses, got {list(lenses)}")
    tables = [evaluate(scenario, lens=lens, seed=seed, replications=replications,
                       workers=workers).table() for lens in lenses]
    reference, other = tables
    rows = []
    for (scope, name, metric), ref in reference.iterrows():
        tolerance = TOLERANCES.get((scope, metric))
        if tolerance is None or (scope, name, metric) not in other.index:
            continue
        if scope == "queue" and not (ref["mean"] > 0):
            continue  # an idle queue: nothing to compare
        value = other.loc[(scope, name, metric)]
        error = ((value["mean"] - ref["mean"]) / ref["mean"] if ref["mean"] else math.nan)
        rows.append({
            "scope": scope, "name": name, "metric": metric,
            f"{lenses[0]}_mean": ref["mean"], f"{lenses[0]}_ci": ref["half_width"],
            f"{lenses[1]}_mean": value["mean"], f"{lenses[1]}_ci": value["half_width"],
            "relative_error": error, "tolerance": tolerance.describe(),
            "verdict": "pass" if tolerance.judge(ref["mean"], value["mean"]) else "FAIL"})
    return pd.DataFrame(rows)


def write_comparison(table: pd.DataFrame, directory: str | Path,
                     meta: dict[str, Any]) -> Path:
    """Write ``comparison.csv`` and ``comparison.json`` (rows + ``meta``) to ``directory``."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "comparison.csv", index=False)
    rows = json.loads(table.to_json(orient="records"))
    (out / "comparison.json").write_text(json.dumps({**meta, "rows": rows}, indent=1))
    return out
