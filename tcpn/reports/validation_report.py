"""The report of ``tcpn validate --report``: the lenses side by side, every replication.

:func:`validation_parts` keeps what :func:`~tcpn.experiments.compare.compare` found (the
comparison table with CIs, errors, verdicts and Welch's p), every run's metrics, and the
throughput per bin of every replication of every lens (read from the runs kept on disk).
:func:`build_validation_report` draws from those alone: per-metric dot plots (each run a
dot, the mean with its 95 % CI per lens) and throughput over time with a CI band per lens.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcpn.errors import InputError
from tcpn.models.scenario import parse_scenario
from tcpn.outputs import json_ready
from tcpn.reports.document import Block, Figure, Paragraph, Report, Section, Table
from tcpn.reports.scenario_report import net_diagram
from tcpn.reports.studies import StudyData

__all__ = ["build_validation_report", "validation_parts", "write_validation_report"]

SHOWN_METRICS = ("goodput_bps", "rtt_mean_s", "loss_ratio")
_SCALE = {"goodput_bps": (1e-6, "goodput (Mbit/s)"), "rtt_mean_s": (1e3, "mean RTT (ms)"),
          "loss_ratio": (100.0, "loss (%)")}


def validation_parts(found: Any) -> dict[str, StudyData]:
    """The data of a :class:`~tcpn.experiments.compare.Validation` whose runs are on disk
    (``compare(..., output=...)``)."""
    from tcpn.models.metrics import throughput_series_bps
    from tcpn.models.traces import ScenarioResult

    if found.runs_dir is None:
        raise InputError("a validation report needs the runs on disk: call compare with "
                         "output=DIR")
    values, series = [], []
    for lens in found.lenses:
        frame = found.results[lens].values()
        values.append(frame.assign(lens=lens))
        for rep in sorted(Path(found.runs_dir / lens).glob("rep-*")):
            trace = ScenarioResult.load(rep).trace
            bins = throughput_series_bps(trace, start_s=0.0, end_s=trace.horizon_s)
            long = bins.reset_index().melt(id_vars="time_s", var_name="flow",
                                           value_name="throughput_bps")
            series.append(long.assign(lens=lens, replication=int(rep.name.split("-")[1])))
    metadata = {**found.meta, "scenario_yaml": found.scenario.to_yaml()}
    tables = {"comparison": found.table.reset_index(drop=True),
              "values": pd.concat(values, ignore_index=True),
              "throughput": pd.concat(series, ignore_index=True)}
    return {"validation": StudyData(tables, json_ready(metadata))}


def _draw_metrics(data: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    from tcpn.lenses.replications import mean_ci

    metrics = [m for m in SHOWN_METRICS if m in set(data["metric"])]
    fig, axes = plt.subplots(1, max(1, len(metrics)), figsize=(3.2 * max(1, len(metrics)),
                                                               3.4), squeeze=False)
    lenses = list(dict.fromkeys(data["lens"]))
    for ax, metric in zip(axes[0], metrics, strict=False):
        scale, label = _SCALE[metric]
        rows = data[data["metric"] == metric]
        names = list(dict.fromkeys(rows["name"]))
        width = 0.8 / max(1, len(lenses))
        for j, lens in enumerate(lenses):
            colour = plt.get_cmap("tab10")(j % 10)
            for i, name in enumerate(names):
                runs = rows[(rows["lens"] == lens) & (rows["name"] == name)]["value"]
                x = i + (j - (len(lenses) - 1) / 2) * width
                ax.scatter(np.full(len(runs), x), runs * scale, s=10, color=colour,
                           alpha=0.45)
                mean, half = mean_ci(runs.tolist())
                ax.errorbar([x], [mean * scale], yerr=[[0 if half != half else half * scale]],
                            fmt="D", ms=5, color=colour, capsize=3,
                            label=lens if i == 0 else None)
        ax.set_xticks(range(len(names)), names, fontsize=8)
        ax.set_title(label, fontsize=9)
        ax.grid(True, axis="y", lw=0.3)
    axes[0][0].legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def _draw_throughput(data: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    from tcpn.lenses.replications import half_widths

    flows = list(dict.fromkeys(data["flow"]))
    fig, axes = plt.subplots(len(flows), 1, figsize=(8.0, 2.2 * len(flows) + 0.6),
                             sharex=True, squeeze=False)
    for ax, flow in zip(axes[:, 0], flows, strict=True):
        for j, (lens, group) in enumerate(data[data["flow"] == flow].groupby("lens",
                                                                             sort=False)):
            by_bin = group.groupby("time_s")["throughput_bps"]
            mean, count, std = by_bin.mean(), by_bin.count(), by_bin.std(ddof=1)
            half = half_widths(count, std)
            colour = plt.get_cmap("tab10")(j % 10)
            ax.plot(mean.index, mean / 1e6, drawstyle="steps-post", color=colour, lw=1.1,
                    label=f"{lens} ({int(count.max())} runs)")
            ax.fill_between(mean.index, (mean - half.fillna(0)) / 1e6,
                            (mean + half.fillna(0)) / 1e6, step="post", color=colour,
                            alpha=0.2, lw=0)
        ax.set_ylabel(f"{flow}\nMbit/s", fontsize=8)
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes[-1, 0].set_xlabel("time (s, bin start)")
    fig.tight_layout()
    return fig


def _comparison_frame(table: pd.DataFrame, lenses: list[str], reference: str) -> pd.DataFrame:
    shown = table[["scope", "name", "metric"]].copy()
    for lens in lenses:
        shown[f"{lens} mean"] = table[f"{lens}_mean"]
        shown[f"{lens} ±"] = table[f"{lens}_ci"]
    for lens in lenses:
        if lens == reference:
            continue
        shown[f"{lens} error %"] = table[f"{lens}_error"] * 100.0
        shown[f"{lens} verdict"] = table[f"{lens}_verdict"]
        shown[f"{lens} Welch p"] = table[f"{lens}_p"]
    shown["target"] = table["tolerance"]
    return shown


def build_validation_report(parts: Mapping[str, StudyData], provenance: dict[str, Any],
                            ) -> Report:
    """The validation report from the data :func:`validation_parts` kept."""
    data = parts["validation"]
    meta, tables = data.metadata, data.tables
    scenario = parse_scenario(meta["scenario_yaml"], f"stored scenario {meta['scenario']}")
    lenses, reference = list(meta["lenses"]), meta["reference"]
    refused = meta.get("refused") or {}
    intro: list[Block] = [Paragraph(
        f"Scenario `{scenario.name}` (hash "
        f"`{meta['scenario_hash']}`): lenses {', '.join(lenses)} against *{reference}*, "
        f"{meta['replications']} replications each from seed {meta['seed']}, metrics over "
        f"[{meta['window_s'][0]:g}, {meta['window_s'][1]:g}] s. Every figure uses every "
        "replication, not replication 0 alone.")]
    if refused:
        intro.append(Paragraph("Lenses that cannot express this scenario: " + "; ".join(
            f"*{lens}*: {why}" for lens, why in refused.items())))
    intro.append(net_diagram(scenario))
    judged = [lens for lens in lenses if lens != reference]
    failures = 0
    for lens in judged:
        failures += int((tables["comparison"][f"{lens}_verdict"] == "FAIL").sum())
    comparison = Section("Comparison", [
        Paragraph(f"{failures} metric(s) miss their target." if judged else
                  "Only one lens ran, so nothing is judged."),
        Table("comparison", _comparison_frame(tables["comparison"], lenses, reference),
              caption="Means with 95 % CI half-widths (±), relative error against the "
                      "reference, target and verdict, and Welch's t-test p of the runs")])
    figures = Section("Lenses side by side", [
        Figure("lens-metrics", tables["values"][tables["values"]["metric"].isin(
            SHOWN_METRICS)].reset_index(drop=True), _draw_metrics, caption=(
            "Per flow (and all flows): each replication a dot, the mean with its 95 % CI "
            "per lens")),
        Figure("lens-throughput", tables["throughput"], _draw_throughput, caption=(
            "Throughput per flow over time: the mean of every replication of each lens "
            "with its 95 % CI band"))])
    title = f"tcpn validate: {scenario.name} ({', '.join(lenses)})"
    return Report(title, [Section("Scenario", intro), comparison, figures], provenance)


def write_validation_report(found: Any, output: str | Path, command: str) -> Path:
    """Write the report of ``found`` into the new directory ``output``."""
    from tcpn.reports.reporting import versions, write_parts

    provenance = {"command": command, "versions": versions(),
                  "scenario_hash": found.meta["scenario_hash"], "seed": found.meta["seed"]}
    _report, files = write_parts("validation", validation_parts(found), provenance, output)
    return files.html
