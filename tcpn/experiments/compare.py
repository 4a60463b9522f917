"""Cross-validation: one scenario through several lenses, metric by metric, with verdicts.

:func:`compare` runs each lens ``replications`` times (independent seeds; for one seed
every lens sees the same scenario draws, e.g. start times), takes each metric's mean and
95 % confidence interval from :meth:`ReplicationResult.table`, and judges every other
lens against the reference lens (ns-3 when it is among the lenses, else the first one
named) with the targets of :data:`TOLERANCES`. A lens that cannot express the scenario
is left out and its refusal (naming the feature) is recorded; the others still run.

The targets are issue 7's: per-flow mean goodput 5 %, aggregate goodput 3 %, Jain's index
0.05 (absolute), loss and retransmission ratios 25 % relative or 0.002 absolute, mean
queue 15 %, mean RTT 10 %; and issue 29's: each flow's retransmission timeouts and drops
15 %, or the two lenses' 95 % confidence intervals overlap (a count that a few events
make: a relative target alone would judge the noise of a short window). Flows the scenario
treats alike (:func:`tcpn.experiments.exchangeable.exchangeable_flows`) are also compared
ranked by goodput in each run (:func:`with_ranked_flows`, the per-flow target): two such flows
race, and which one wins flips with the start draws. A relative target
means nothing near zero, so two rows carry an absolute floor decided before any run: the
ratios the issue's 0.002, and the mean queue :data:`QUEUE_FLOOR_PACKETS` (half a packet: a
queue whose mean is below it is empty most of the time, and the lenses may differ by up to
one packet in whether the packet being serialised counts as queued). A target is never
widened to turn a row green: a failing row is a finding (a modelling difference, a
default, or a bug in a lens).

:func:`write_comparison` writes ``comparison.csv``, ``comparison.json`` and, when the runs
were kept on disk, ``timeseries.png``: per-flow goodput over time, cwnd and queue length,
one column per lens, the same axes in every column (:func:`plot_timeseries`).

>>> Tolerance(relative=0.05).judge(100.0, 104.0)
True
>>> Tolerance(relative=0.25, absolute=0.002).judge(0.001, 0.0025)
True
>>> TOLERANCES[("queue", "mean_packets")].judge(0.05, 0.4)  # both near empty
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tcpn.errors import InputError, InputFileError
from tcpn.experiments.exchangeable import exchangeable_flows
from tcpn.lenses import get_lens
from tcpn.lenses.replications import ReplicationResult, replicate, values_table
from tcpn.models.scenario import Scenario, load_scenario
from tcpn.outputs import atomic_files, save_figure

if TYPE_CHECKING:
    from tcpn.models.traces import Trace

__all__ = ["INFO_METRICS", "QUEUE_FLOOR_PACKETS", "RANKED_SCOPE", "TOLERANCES", "WIRELESS_METRICS",
           "Tolerance", "Validation", "compare", "comparison_table", "plot_timeseries",
           "welch_p", "with_ranked_flows", "write_comparison"]


@dataclass(frozen=True)
class Tolerance:
    """Accept when ``|value - reference| <= max(relative * |reference|, absolute)``, or,
    with ``overlap``, when the confidence intervals ``reference ± reference_hw`` and
    ``value ± value_hw`` overlap.

    >>> Tolerance(relative=0.15, overlap=True).judge(10.0, 13.0, 1.0, 2.0)  # [9, 11], [11, 15]
    True
    """

    relative: float = 0.0
    absolute: float = 0.0
    overlap: bool = False

    def judge(self, reference: float, value: float, reference_hw: float = math.nan,
              value_hw: float = math.nan) -> bool:
        """Whether ``value`` is within the tolerance of ``reference`` (half-widths of their
        confidence intervals: NaN for none)."""
        if not (math.isfinite(reference) and math.isfinite(value)):
            return False
        if abs(value - reference) <= max(self.relative * abs(reference), self.absolute):
            return True
        widths = (reference_hw, value_hw)
        return (self.overlap and all(math.isfinite(w) for w in widths)
                and abs(value - reference) <= sum(widths))

    def describe(self) -> str:
        """The target as text, e.g. ``"5 %"`` or ``"25 % or 0.002"``.

        >>> Tolerance(relative=0.15, absolute=0.5).describe()
        '15 % or 0.5'
        >>> Tolerance(relative=0.15, overlap=True).describe()
        '15 % or CIs overlap'
        """
        parts = []
        if self.relative:
            parts.append(f"{self.relative * 100:g} %")
        if self.absolute:
            parts.append(f"{self.absolute:g}")
        if self.overlap:
            parts.append("CIs overlap")
        return " or ".join(parts)


QUEUE_FLOOR_PACKETS = 0.5
"""Absolute floor of the mean-queue target, in packets (see the module docstring)."""

TOLERANCES: dict[tuple[str, str], Tolerance] = {
    ("flow", "goodput_bps"): Tolerance(relative=0.05),
    ("aggregate", "goodput_bps"): Tolerance(relative=0.03),
    ("aggregate", "jain_index"): Tolerance(absolute=0.05),
    ("flow", "loss_ratio"): Tolerance(relative=0.25, absolute=0.002),
    ("flow", "retransmission_ratio"): Tolerance(relative=0.25, absolute=0.002),
    ("aggregate", "loss_ratio"): Tolerance(relative=0.25, absolute=0.002),
    ("aggregate", "retransmission_ratio"): Tolerance(relative=0.25, absolute=0.002),
    ("queue", "mean_packets"): Tolerance(relative=0.15, absolute=QUEUE_FLOOR_PACKETS),
    ("flow", "rtt_mean_s"): Tolerance(relative=0.10),
    ("flow", "timeouts"): Tolerance(relative=0.15, overlap=True),
    ("flow", "drops"): Tolerance(relative=0.15, overlap=True),
    ("ranked", "goodput_bps"): Tolerance(relative=0.05),
}
"""The accuracy targets of the reference set (issues 7 and 29), by (scope, metric)."""

WIRELESS_METRICS: tuple[str, ...] = ("energy_j", "bytes_per_joule", "frames_to_station",
                                     "frames_from_station")
"""The 802.11 stations' figures (a lens's ``provenance["lens"]["wireless"]``, summed over
the wireless links; bytes per joule of the sums) added to the aggregate rows by
:func:`compare` when the runs are kept (``output``)."""

INFO_METRICS: tuple[tuple[str, str], ...] = (("aggregate", "mark_ratio"),
                                             ("flow", "mark_ratio"),
                                             ("flow", "connect_failed_s"),
                                             *(("aggregate", m) for m in WIRELESS_METRICS))
"""Rows shown beside the judged ones, without a target (verdict ``-``), when some lens
reports a non-zero value: ECN marks, the congestion signal of RED/ECN scenarios, the
time a connection gave up opening, and study S3's energy of the 802.11 stations."""

_NO_TARGET = "-"
#: the verdict where one of the two lenses cannot observe the metric (a capture sees no
#: drops): not judged, and not a failure
_UNOBSERVED = "unseen"


@dataclass
class Validation:
    """What :func:`compare` found: the lenses that ran (reference first), those that
    refused the scenario (lens -> reason), their replications and the comparison table.

    ``table`` has one row per metric: ``scope``, ``name``, ``metric``, then for every lens
    ``<lens>_mean`` and ``<lens>_ci`` (95 % half-width), for every judged lens
    ``<lens>_error`` (relative to the reference), ``<lens>_verdict`` (``pass``,
    ``FAIL``, or ``-`` for an information row) and ``<lens>_p`` (Welch's two-sided
    t-test of its runs against the reference's: a miss with a large p is a difference the
    runs cannot tell from noise), and ``tolerance``.
    """

    scenario: Scenario
    reference: str
    lenses: list[str]
    refused: dict[str, str]
    results: dict[str, ReplicationResult]
    table: pd.DataFrame
    runs_dir: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def judged(self) -> list[str]:
        """The lenses judged against the reference."""
        return [lens for lens in self.lenses if lens != self.reference]

    def _repr_html_(self) -> str:
        import html

        head = html.escape(f"{self.scenario.name}: {', '.join(self.lenses)} against "
                           f"{self.reference}, {self.meta.get('replications')} runs each; "
                           f"{len(self.failures())} target(s) missed")
        return f"<p><strong>{head}</strong></p>" + self.table.to_html(
            index=False, float_format=lambda v: f"{v:.4g}")

    def failures(self) -> pd.DataFrame:
        """Rows where some judged lens misses its target."""
        columns = [f"{lens}_verdict" for lens in self.judged]
        if not columns:
            return self.table.iloc[:0]
        return self.table[(self.table[columns] == "FAIL").any(axis=1)]


def _pick_reference(lenses: Sequence[str], reference: str | None) -> str:
    if reference is None:
        return next((name for name in ("capture", "ns3") if name in lenses), lenses[0])
    if reference not in lenses:
        raise InputError(f"reference lens {reference!r} is not among the lenses "
                         f"{', '.join(lenses)}")
    return reference


def compare(scenario: Scenario | str | Path, lenses: Sequence[str] = ("ns3", "net"),
            replications: int = 3, seed: int | None = None, workers: int | None = None,
            reference: str | None = None, output: str | Path | None = None,
            progress: Callable[[int], None] | None = None,
            options: Mapping[str, Mapping[str, Any]] | None = None) -> Validation:
    """Run every lens of ``lenses`` that accepts ``scenario`` and judge them against the
    reference (``reference``; default: a capture if listed, else ns-3 if listed, else the
    first lens). ``options`` gives a lens its constructor's keywords (the capture lens its
    files: ``{"capture": {"sender": [...]}}``). The capture lens runs once (it reads what
    happened; copies of it would be replications of nothing); where a lens cannot observe
    a metric the row's verdict is ``unseen``.

    With ``output``, each lens's runs are kept in ``output/runs/<lens>/rep-NNN`` (traces
    included: :func:`write_comparison` draws the figures from replication 0). A lens that
    refuses the scenario is recorded in ``Validation.refused`` (a capture it cannot read
    is not a refusal: :class:`~tcpn.errors.InputFileError`); if only one lens
    accepts it, the table holds its values alone (nothing is judged); if none does,
    :class:`InputError` says which refused why. ``progress`` receives the number of runs
    completed, all lenses together.
    """
    spec = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    names = list(dict.fromkeys(name.strip() for name in lenses if name.strip()))
    if len(names) < 2:
        raise InputError(f"compare needs at least two lenses, got {names}")
    if not spec.trace.flow_events:
        raise InputError(f"scenario {spec.name}: the comparison judges goodput, throughput and "
                         "the loss ratios, computed from the flow events, and "
                         "trace.flow_events is off: turn it on")
    for name in names:
        get_lens(name)  # an unknown or uninstalled lens is an error, not a refusal
    refused: dict[str, str] = {}
    for name in names:
        try:
            get_lens(name)(**dict((options or {}).get(name, {}))).check(spec)
        except InputFileError:  # a corrupt capture is bad input, not a refusal
            raise
        except InputError as exc:
            refused[name] = str(exc)
    accepted = [name for name in names if name not in refused]
    if not accepted:
        reasons = "; ".join(f"{lens}: {why}" for lens, why in refused.items())
        raise InputError(f"scenario {spec.name}: none of the lenses {', '.join(names)} can "
                         f"run it ({reasons})")
    ref = _pick_reference(accepted, reference if reference not in refused else None)
    ordered = [ref, *[name for name in accepted if name != ref]]
    runs_dir = Path(output) / "runs" if output is not None else None
    results = {}
    for done_before, lens in enumerate(ordered):
        def tick(runs: float, before: int = done_before * replications) -> None:
            if progress is not None:
                progress(before + int(runs))
        results[lens] = replicate(spec, lens=lens, seed=seed,
                                  replications=1 if lens == "capture" else replications,
                                  output=runs_dir / lens if runs_dir is not None else None,
                                  workers=workers, keep_traces=False, progress=tick,
                                  options=dict((options or {}).get(lens, {})))
    if runs_dir is not None:
        for lens in ordered:
            _add_wireless(results[lens], runs_dir / lens)
    groups = exchangeable_flows(spec)
    values = {lens: with_ranked_flows(results[lens].values(), groups) for lens in ordered}
    table = comparison_table({lens: values_table(values[lens], results[lens].confidence)
                              for lens in ordered}, ref, values)
    meta = {"scenario": spec.name, "scenario_hash": spec.content_hash(),
            "reference": ref, "lenses": ordered, "refused": refused,
            "replications": replications, "exchangeable_flows": [list(g) for g in groups],
            "runs": {lens: results[lens].replications for lens in ordered},
            "seed": spec.seed if seed is None else seed,
            "window_s": [spec.measure.warmup_s, spec.horizon_s],
            "wall_times_s": {lens: results[lens].wall_times_s for lens in ordered},
            "tolerances": {f"{scope}.{metric}": t.describe()
                           for (scope, metric), t in TOLERANCES.items()}}
    return Validation(scenario=spec, reference=ref, lenses=ordered, refused=refused,
                      results=results, table=table, runs_dir=runs_dir, meta=meta)


RANKED_SCOPE = "ranked"
"""Scope of the rows of exchangeable flows ranked by goodput (:func:`with_ranked_flows`)."""


def with_ranked_flows(values: pd.DataFrame, groups: Sequence[Sequence[str]]) -> pd.DataFrame:
    """``values`` (:meth:`ReplicationResult.values`) with, for each group of exchangeable
    flows (:func:`tcpn.experiments.exchangeable.exchangeable_flows`), the goodput of its
    k-th largest flow in each run: scope ``ranked``, name ``"#k of f0+f1"``. Such flows race:
    which one wins depends on the start draws and flips with any small change, so their
    per-flow means can differ between two lenses that agree on every run's split. The
    ranked rows compare the splits; the per-flow rows stay, judged as before.

    >>> v = pd.DataFrame({"scope": "flow", "name": ["a", "b", "a", "b"],
    ...                   "metric": "goodput_bps", "replication": [0, 0, 1, 1],
    ...                   "value": [1.0, 3.0, 4.0, 2.0]})
    >>> ranked = with_ranked_flows(v, [("a", "b")]).query("scope == 'ranked'")
    >>> ranked[["name", "replication", "value"]].values.tolist()
    [['#1 of a+b', 0, 3.0], ['#2 of a+b', 0, 1.0], ['#1 of a+b', 1, 4.0], ['#2 of a+b', 1, 2.0]]
    """
    goodput = values[(values["scope"] == "flow") & (values["metric"] == "goodput_bps")]
    rows = []
    for group in groups:
        label = "+".join(group)
        mine = goodput[goodput["name"].isin(group)]
        for replication, run in mine.groupby("replication", sort=True):
            ordered = sorted(run["value"].to_numpy(float), reverse=True)
            if len(ordered) != len(group) or not np.isfinite(ordered).all():
                continue  # a run without every flow's goodput ranks nothing
            rows += [(RANKED_SCOPE, f"#{k} of {label}", "goodput_bps", replication, value)
                     for k, value in enumerate(ordered, start=1)]
    if not rows:
        return values
    return pd.concat([values, pd.DataFrame(rows, columns=values.columns)], ignore_index=True)


def _add_wireless(result: ReplicationResult, runs: Path) -> None:
    """Add :data:`WIRELESS_METRICS` of each kept run to its summary's aggregate rows."""
    for i, summary in enumerate(result.summaries):
        path = runs / f"rep-{i:03d}" / "result.json"
        stations = json.loads(path.read_text()).get("provenance", {}).get(
            "lens", {}).get("wireless") if path.exists() else None
        if not stations:
            continue
        total = {m: sum(s[m] for s in stations.values()) for m in WIRELESS_METRICS
                 if m != "bytes_per_joule"}
        delivered = sum(s["delivered_bytes"] for s in stations.values())
        total["bytes_per_joule"] = delivered / total["energy_j"] if total["energy_j"] else None
        summary.setdefault("aggregate", {}).update(total)


def welch_p(reference_runs: Sequence[float], runs: Sequence[float]) -> float:
    """Welch's two-sided t-test p-value of ``runs`` against ``reference_runs`` (NaN with
    fewer than two runs on a side, or when neither varies).

    >>> welch_p([1.0, 1.1, 0.9, 1.0], [2.0, 2.1, 1.9, 2.0]) < 1e-5
    True
    >>> round(welch_p([1.0, 3.0, 2.0], [2.5, 1.5, 2.0]), 3)
    1.0
    """
    a, b = np.asarray(reference_runs, float), np.asarray(runs, float)
    if len(a) < 2 or len(b) < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return math.nan
    from scipy.stats import ttest_ind

    return float(ttest_ind(a, b, equal_var=False).pvalue)


def comparison_table(tables: dict[str, pd.DataFrame], reference: str,
                     values: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """The comparison rows from each lens's :meth:`ReplicationResult.table` (``tables``
    maps lens -> table, the reference among them); see :class:`Validation`. With
    ``values`` (lens -> :meth:`ReplicationResult.values`, every run) each judged lens
    also gets ``<lens>_p`` (:func:`welch_p`).

    >>> idx = pd.MultiIndex.from_tuples([("aggregate", "all", "goodput_bps")])
    >>> ref = pd.DataFrame({"mean": [10.0], "half_width": [0.5]}, index=idx)
    >>> other = pd.DataFrame({"mean": [10.2], "half_width": [0.1]}, index=idx)
    >>> row = comparison_table({"ns3": ref, "net": other}, "ns3").iloc[0]
    >>> round(float(row["net_error"]), 3), row["tolerance"], row["net_verdict"]
    (0.02, '3 %', 'pass')
    """
    lenses = [reference, *[lens for lens in tables if lens != reference]]
    base = tables[reference]
    runs = {lens: {key: group["value"].to_numpy(float) for key, group in frame.groupby(
        ["scope", "name", "metric"], sort=False)} for lens, frame in (values or {}).items()}
    rows = []
    for (scope, name, metric), ref in base.iterrows():
        tolerance = TOLERANCES.get((scope, metric))
        info = (scope, metric) in INFO_METRICS
        present = [lens for lens in lenses if (scope, name, metric) in tables[lens].index]
        if tolerance is None and not info:
            continue
        means = {lens: float(tables[lens].loc[(scope, name, metric), "mean"])
                 for lens in present}
        if (info or scope == "queue") and not any(abs(v) > 0 for v in means.values()
                                                  if math.isfinite(v)):
            continue  # no marks anywhere, or a queue no lens ever saw a packet wait in
        row: dict[str, Any] = {"scope": scope, "name": name, "metric": metric}
        for lens in lenses:
            known = lens in means
            row[f"{lens}_mean"] = means[lens] if known else math.nan
            row[f"{lens}_ci"] = (float(tables[lens].loc[(scope, name, metric), "half_width"])
                                 if known else math.nan)
        reference_mean = float(ref["mean"])
        for lens in lenses[1:]:
            value = row[f"{lens}_mean"]
            row[f"{lens}_error"] = ((value - reference_mean) / reference_mean
                                    if reference_mean else math.nan)
            seen = math.isfinite(value) and math.isfinite(reference_mean)
            row[f"{lens}_verdict"] = (_NO_TARGET if tolerance is None else
                                      _UNOBSERVED if not seen else
                                      "pass" if tolerance.judge(reference_mean, value,
                                                                row[f"{reference}_ci"],
                                                                row[f"{lens}_ci"])
                                      else "FAIL")
            if values is not None:
                key = (scope, name, metric)
                row[f"{lens}_p"] = (welch_p(runs[reference][key], runs[lens][key])
                                    if key in runs.get(reference, {})
                                    and key in runs.get(lens, {}) else math.nan)
        row["tolerance"] = tolerance.describe() if tolerance is not None else _NO_TARGET
        rows.append(row)
    return pd.DataFrame(rows)


def write_comparison(validation: Validation, directory: str | Path,
                     figures: bool = True, overwrite: bool = False) -> Path:
    """Write ``comparison.csv``, ``comparison.json`` (rows + metadata + refusals) and,
    when the runs are on disk and ``figures``, ``timeseries.png`` to ``directory`` (made
    if missing). The files appear together or not at all, and an existing one is replaced
    only with ``overwrite`` (:func:`tcpn.outputs.atomic_files`)."""
    out = Path(directory)
    draw = figures and validation.runs_dir is not None
    names = ["comparison.csv", "comparison.json"] + (["timeseries.png"] if draw else [])
    with atomic_files([out / name for name in names], overwrite) as paths:
        validation.table.to_csv(paths[0], index=False)
        rows = json.loads(validation.table.to_json(orient="records"))
        paths[1].write_text(json.dumps({**validation.meta, "rows": rows}, indent=1))
        if draw:
            from tcpn.models.traces import ScenarioResult

            assert validation.runs_dir is not None
            traces = {lens: ScenarioResult.load(validation.runs_dir / lens / "rep-000").trace
                      for lens in validation.lenses}
            plot_timeseries(traces, paths[2],
                            title=f"{validation.scenario.name} (replication 0)")
    return out


# --------------------------------------------------------------------------- figures

def _busy_queues(traces: dict[str, Trace], floor: float) -> list[str]:
    """Queues whose mean length reaches ``floor`` packets in some lens, in scenario order."""
    from tcpn.models.metrics import queue_stats

    busy: set[str] = set()
    for trace in traces.values():
        stats = queue_stats(trace, 0.0, trace.horizon_s)
        if len(stats):
            busy |= set(stats.index[stats["mean_packets"] >= floor])
    order = next(iter(traces.values())).queue_ids
    return [q for q in order if q in busy]


def plot_timeseries(traces: dict[str, Trace], path: str | Path, title: str = "",
                    bin_s: float | None = None, overwrite: bool = False) -> Path:
    """Draw per-flow goodput over time (bins of ``bin_s``, default the trace's), cwnd (in
    segments) and queue lengths (every queue with a mean of at least
    :data:`QUEUE_FLOOR_PACKETS` in some lens), one column per lens (``traces``: lens ->
    trace), rows sharing their y axis; the warm-up is shaded. Writes a PNG to ``path``
    (whole or not at all; an existing file only with ``overwrite``).

    >>> import tempfile
    >>> from tcpn.lenses import evaluate
    >>> from tcpn.models.scenario import dumbbell
    >>> trace = evaluate(dumbbell(pairs=2, horizon_s=2.0), lens="fluid").trace
    >>> out = plot_timeseries({"fluid": trace}, Path(tempfile.mkdtemp()) / "f.png")
    >>> out.read_bytes()[:4] == b"\\x89PNG"
    True
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tcpn.models.metrics import goodput_series_bps

    lenses = list(traces)
    if not lenses:
        raise InputError("plot_timeseries needs at least one trace")
    first = traces[lenses[0]]
    flows = first.flow_ids
    colours = {flow: plt.get_cmap("tab10")(i % 10) for i, flow in enumerate(flows)}
    queues = _busy_queues(traces, QUEUE_FLOOR_PACKETS)
    fig, axes = plt.subplots(3, len(lenses), figsize=(4.6 * len(lenses) + 1.0, 8.4),
                             sharex=True, sharey="row", squeeze=False)
    for column, lens in enumerate(lenses):
        trace = traces[lens]
        goodput = goodput_series_bps(trace, bin_s=bin_s, start_s=0.0, end_s=trace.horizon_s)
        edges = np.append(goodput.index.to_numpy(), trace.horizon_s)
        mss = trace.flows.set_index("flow")["segment_size_bytes"].astype(float)
        ax_rate, ax_cwnd, ax_queue = axes[:, column]
        for flow in flows:
            if flow in goodput:
                ax_rate.stairs(goodput[flow].to_numpy() / 1e6, edges, color=colours[flow],
                               lw=0.9, label=flow)
            cwnd = trace.series("cwnd_bytes", flow)
            if len(cwnd):  # a row at each change: the last value holds to the horizon
                times = np.append(cwnd["time_s"].to_numpy(), trace.horizon_s)
                values = cwnd["value"].to_numpy() / mss[flow]
                ax_cwnd.step(times, np.append(values, values[-1]), where="post",
                             color=colours[flow], lw=0.7, label=flow)
        for i, queue in enumerate(queues):
            rows = trace.queue(queue)
            times = np.concatenate(([0.0], rows["time_s"].to_numpy(), [trace.horizon_s]))
            lengths = np.concatenate(([0.0], rows["length_packets"].to_numpy(),
                                      rows["length_packets"].to_numpy()[-1:]
                                      if len(rows) else [0.0]))
            ax_queue.step(times, lengths, where="post", lw=0.6,
                          color=plt.get_cmap("Dark2")(i % 8), label=queue)
        ax_rate.set_title(lens)
        ax_queue.set_xlabel("time (s)")
        for ax in (ax_rate, ax_cwnd, ax_queue):
            if trace.warmup_s > 0:
                ax.axvspan(0.0, trace.warmup_s, color="0.92", zorder=0)
            ax.grid(True, lw=0.3)
    axes[0, 0].set_ylabel("goodput (Mbit/s)")
    axes[1, 0].set_ylabel("cwnd (segments)")
    axes[2, 0].set_ylabel("queue (packets)")
    for row in range(3):
        handles, labels = axes[row, -1].get_legend_handles_labels()
        if handles:
            axes[row, -1].legend(handles[:12], labels[:12], loc="upper left",
                                 bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    axes[0, 0].set_xlim(0.0, max(t.horizon_s for t in traces.values()))
    if title:
        fig.suptitle(title + ("; warm-up shaded" if first.warmup_s > 0 else ""))
    fig.tight_layout()
    return save_figure(fig, path, 90, overwrite)
