"""The report of any scenario run: per-flow table with CIs, time series, events, fairness.

:func:`scenario_parts` runs a scenario's replications with one lens and keeps, as tidy
tables, what the report shows: per-flow means with 95 % CIs, throughput per bin of every
replication (the figure draws their mean and CI band), replication 0's RTT samples,
busiest queue and its loss, timeout and mark events, and every replication's goodput
and mean RTT per flow (the throughput-delay plot). :func:`build_scenario_report` builds
the report from those tables alone, with the scenario's net drawn by its modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from tcpn.errors import InputError
from tcpn.models.scenario import Scenario, parse_scenario
from tcpn.outputs import json_ready
from tcpn.reports.document import Diagram, Figure, Paragraph, Report, Section, Table
from tcpn.reports.studies import StudyData

__all__ = ["build_scenario_report", "net_diagram", "scenario_parts"]

MAX_POINTS = 40000
"""Samples kept for a time-series figure, shared among its flows or queues (each evenly
thinned to its share, at least 200)."""

RASTER_ABOVE = 5000
"""Points above which a figure's lines and markers are embedded as an image (keeps the
HTML small and quick to open; axes and text stay vector)."""

LEGEND_ENTRIES = 12
"""Flows named in a figure's legend (a 100-flow scenario lists the first 12)."""

EVENT_STYLE = {"drop": ("x", "tab:red"), "timeout": ("v", "black"),
               "mark": ("o", "tab:orange")}


def _thin(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    parts = []
    groups = frame.groupby(key, sort=False)
    share = max(200, MAX_POINTS // max(1, groups.ngroups))
    for _name, group in groups:
        step = max(1, int(np.ceil(len(group) / share)))
        parts.append(group.iloc[::step])
    return pd.concat(parts, ignore_index=True) if parts else frame.iloc[:0]


def _busiest_queue(result: Any) -> str | None:
    queues = result.summary.get("queues", {})
    if not queues:
        return None
    return max(queues, key=lambda q: queues[q].get("mean_packets") or 0.0)


def scenario_parts(scenario: Scenario, lens: str = "net", replications: int = 3,
                   seed: int | None = None, workers: int | None = None,
                   progress: Callable[[float], None] | None = None) -> dict[str, StudyData]:
    """Run ``scenario`` ``replications`` times with ``lens`` and keep the report's data.

    The report draws throughput and events from the flow events: a scenario that does not
    trace them is refused before any run."""
    from tcpn.lenses.replications import flow_table, replicate
    from tcpn.models.metrics import throughput_series_bps

    if not scenario.trace.flow_events:
        raise InputError(f"scenario {scenario.name}: the report draws throughput, goodput and "
                         "events from the flow events, and trace.flow_events is off: turn it "
                         "on, or use tcpn run")
    result = replicate(scenario, lens, seed=seed, replications=replications, workers=workers,
                       progress=progress, keep_traces=True)
    metrics = ["goodput_bps", "throughput_bps", "loss_ratio", "retransmission_ratio",
               "rtt_mean_s", "timeouts"]
    flows = flow_table(result, metrics).reset_index()
    series, points = [], []
    for index, run in enumerate(result.runs):
        bins = throughput_series_bps(run.trace, start_s=0.0, end_s=run.trace.horizon_s)
        long = bins.reset_index().melt(id_vars="time_s", var_name="flow",
                                       value_name="throughput_bps")
        long["replication"] = index
        series.append(long)
        for flow, row in run.summary["flows"].items():
            points.append({"replication": index, "flow": flow,
                           "goodput_bps": row.get("goodput_bps"),
                           "rtt_mean_s": row.get("rtt_mean_s")})
    first = result.runs[0]
    rtt = first.trace.series("rtt_s")[["time_s", "flow", "value"]].rename(
        columns={"value": "rtt_s"})
    queue_id = _busiest_queue(first)
    queue = first.trace.queue(queue_id)[["time_s", "length_packets"]] if queue_id else \
        pd.DataFrame({"time_s": [], "length_packets": []})
    queue = queue.assign(queue=queue_id or "")
    events = first.trace.events(event=list(EVENT_STYLE))[["time_s", "flow", "event"]]
    seeds = [s.get("entropy") for s in result.seeds]
    metadata = {
        "scenario": scenario.to_yaml(), "scenario_name": scenario.name,
        "scenario_hash": scenario.content_hash(), "lens": lens,
        "seed": result.seed, "seeds": seeds, "replications": result.replications,
        "horizon_s": scenario.horizon_s, "warmup_s": scenario.measure.warmup_s,
        "bin_s": first.trace.bin_s, "busiest_queue": queue_id,
        "wall_times_s": result.wall_times_s,
        "jain_index": [s.get("aggregate", {}).get("jain_index") for s in result.summaries],
    }
    tables = {"flows": flows.astype({"flow": str}),
              "throughput": pd.concat(series, ignore_index=True),
              "rtt": _thin(rtt.reset_index(drop=True), "flow"),
              "queue": _thin(queue.reset_index(drop=True), "queue"),
              "events": events.reset_index(drop=True),
              "points": pd.DataFrame(points)}
    return {"run": StudyData(tables, json_ready(metadata))}


def net_diagram(scenario: Scenario, name: str = "net-modules") -> Diagram | Paragraph:
    """The scenario's net drawn by its modules, or a paragraph saying why it can't be."""
    from tcpn.models.topology import scenario_net
    from tcpn.petrinets.drawing.dot import GraphvizMissing
    from tcpn.petrinets.drawing.modules import module_view

    try:
        net = scenario_net(scenario)
        view = module_view(net)
        return Diagram(name, view.svg(), view.dot().source, caption=(
            f"The net of scenario {scenario.name} by its modules: {len(net.places)} places, "
            f"{len(net.transitions)} transitions and {len(net.arcs)} arcs in "
            f"{len(net.modules)} module instances (boxes); an arc is a place one module "
            "writes and another reads"))
    except (InputError, GraphvizMissing) as exc:
        return Paragraph(f"The scenario's net is not drawn: {exc}")


# ----------------------------------------------------------------- figures (data only)

def _draw_throughput(data: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    from tcpn.lenses.replications import half_widths

    fig, ax = plt.subplots(figsize=(8.0, 3.4))
    for i, (flow, group) in enumerate(data.groupby("flow", sort=False)):
        by_bin = group.groupby("time_s")["throughput_bps"]
        mean, count, std = by_bin.mean(), by_bin.count(), by_bin.std(ddof=1)
        half = half_widths(count, std)
        colour = plt.get_cmap("tab10")(i % 10)
        ax.plot(mean.index, mean / 1e6, color=colour, lw=1.2, label=str(flow),
                drawstyle="steps-post")
        if int(count.max()) > 1:
            ax.fill_between(mean.index, (mean - half) / 1e6, (mean + half) / 1e6,
                            color=colour, alpha=0.2, lw=0, step="post")
    ax.set_xlabel("time (s, bin start)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.grid(True, lw=0.3)
    _legend(ax, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def _legend(ax: Any, **where: Any) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles[:LEGEND_ENTRIES], labels[:LEGEND_ENTRIES], fontsize=8,
                  frameon=False, **where)


def _draw_rtt_queue(data: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    fig, (ax_rtt, ax_queue) = plt.subplots(2, 1, figsize=(8.0, 5.0), sharex=True)
    dense = len(data) > RASTER_ABOVE  # many points: drawn as an image inside the SVG
    rtt = data[data["series"] == "rtt"]
    for i, (flow, group) in enumerate(rtt.groupby("name", sort=False)):
        ax_rtt.plot(group["time_s"], group["value"] * 1e3, lw=0.7, label=str(flow),
                    color=plt.get_cmap("tab10")(i % 10), rasterized=dense)
    queue = data[data["series"] == "queue"]
    for name, group in queue.groupby("name", sort=False):
        ax_queue.step(group["time_s"], group["value"], where="post", lw=0.7, color="0.25",
                      label=f"queue {name}", rasterized=dense)
    top = ax_rtt.get_ylim()[1] if len(rtt) else 1.0
    for event, (marker, colour) in EVENT_STYLE.items():
        rows = data[(data["series"] == "event") & (data["name"] == event)]
        if len(rows):
            ax_rtt.plot(rows["time_s"], np.full(len(rows), top * 0.98), ls="none",
                        marker=marker, color=colour, ms=4, label=f"{event} ({len(rows)})",
                        rasterized=dense)
    ax_rtt.set_ylabel("RTT (ms)")
    ax_queue.set_ylabel("queue (packets)")
    ax_queue.set_xlabel("time (s)")
    for ax in (ax_rtt, ax_queue):
        ax.grid(True, lw=0.3)
        _legend(ax, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def _draw_throughput_delay(data: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for i, (flow, group) in enumerate(data.groupby("flow", sort=False)):
        colour = plt.get_cmap("tab10")(i % 10)
        ax.scatter(group["rtt_mean_s"] * 1e3, group["goodput_bps"] / 1e6, s=14,
                   color=colour, alpha=0.5)
        ax.scatter([group["rtt_mean_s"].mean() * 1e3], [group["goodput_bps"].mean() / 1e6],
                   s=60, marker="D", color=colour, edgecolor="black", label=f"{flow} (mean)")
    ax.set_xlabel("mean RTT (ms)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.grid(True, lw=0.3)
    _legend(ax)
    fig.tight_layout()
    return fig


_FLOW_COLUMNS = [("goodput_bps", "goodput Mbit/s", 1e-6), ("throughput_bps",
                 "throughput Mbit/s", 1e-6), ("loss_ratio", "loss %", 100.0),
                 ("retransmission_ratio", "retx %", 100.0),
                 ("rtt_mean_s", "mean RTT ms", 1e3), ("timeouts", "timeouts", 1.0)]


def _flow_frame(flows: pd.DataFrame) -> pd.DataFrame:
    shown = pd.DataFrame({"flow": flows["flow"].astype(str)})
    for metric, title, scale in _FLOW_COLUMNS:
        if metric in flows:
            shown[title] = flows[metric] * scale
            shown[f"{title.split()[0]} ±"] = flows[f"{metric}_hw"] * scale
    return shown


def _fairness_frame(jain: list[float | None]) -> pd.DataFrame:
    from tcpn.lenses.replications import mean_ci

    mean, half = mean_ci(jain)
    return pd.DataFrame({"measure": ["Jain's index of goodput"], "mean": [mean],
                         "±95%": [half], "runs": [sum(v is not None for v in jain)]})


def build_scenario_report(parts: Mapping[str, StudyData], provenance: dict[str, Any],
                          ) -> Report:
    """The scenario report from the data :func:`scenario_parts` kept (no simulation)."""
    data = parts["run"]
    meta, tables = data.metadata, data.tables
    scenario = parse_scenario(meta["scenario"], f"stored scenario {meta['scenario_name']}")
    runs = meta["replications"]
    ci = "mean ± 95 % CI" if runs > 1 else "one run: no CI"
    overview = Section("Scenario", [
        Paragraph(f"Scenario `{meta['scenario_name']}` (hash `{meta['scenario_hash']}`) "
                  f"through the *{meta['lens']}* lens: {runs} replication(s) from seed "
                  f"{meta['seed']}, {meta['horizon_s']:g} s each; metrics over "
                  f"[{meta['warmup_s']:g}, {meta['horizon_s']:g}] s."
                  + (f"\n\n{scenario.description}" if scenario.description else "")),
        net_diagram(scenario)])
    results = Section("Per-flow results", [
        Table("flows", _flow_frame(tables["flows"]),
              caption=f"Per flow and all flows ({ci} over {runs} runs; a ± column is the "
                      "half-width of the 95 % CI of the column before it)"),
        Table("fairness", _fairness_frame(meta["jain_index"]),
              caption="Fairness: Jain's index of the flows' goodput (1 = equal shares)")])
    throughput = tables["throughput"]
    series = Section("Time series", [
        Figure("throughput", throughput, _draw_throughput, caption=(
            f"Throughput per flow in bins of {meta['bin_s']:g} s: the mean of {runs} "
            "replication(s)" + (" with its 95 % CI band" if runs > 1 else ""))),
        Figure("rtt-queue", _rtt_queue_data(tables), _draw_rtt_queue, caption=(
            "Replication 0: RTT samples per flow with its loss (x), timeout (v) and ECN "
            "mark (o) events along the top, and the length of the busiest queue "
            f"({meta['busiest_queue'] or 'none traced'})"))])
    tradeoff = Section("Throughput and delay", [
        Figure("throughput-delay", tables["points"], _draw_throughput_delay, caption=(
            "Goodput against mean RTT per flow: one small dot per replication, the "
            "diamond their mean"))])
    title = f"tcpn report: {meta['scenario_name']} ({meta['lens']} lens)"
    return Report(title, [overview, results, series, tradeoff], provenance)


def _rtt_queue_data(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    rtt = tables["rtt"].rename(columns={"flow": "name", "rtt_s": "value"}).assign(
        series="rtt")
    queue = tables["queue"].rename(columns={"queue": "name", "length_packets": "value"}
                                   ).assign(series="queue")
    events = tables["events"].rename(columns={"event": "name"}).drop(
        columns=["flow"]).assign(value=np.nan, series="event")
    columns = ["series", "name", "time_s", "value"]
    return pd.concat([rtt[columns], queue[columns], events[columns]], ignore_index=True)
