"""Metrics from the common trace schema: one implementation used for every lens.

Every function takes a :class:`~tcpn.models.traces.Trace` (whichever lens wrote it) and a
measurement window ``[start_s, end_s]`` that defaults to ``[trace.warmup_s,
trace.horizon_s]``; events exactly on either edge count. Definitions:

* **goodput**: bytes the receiver delivered in order to the application (``deliver``) in
  the window, times 8, divided by the window length (the same length for every flow);
* **throughput**: data payload bytes that reached the receiver (``recv``, duplicates
  included), likewise;
* **loss / mark / retransmission ratio**: ``drop`` / ``mark`` / ``retransmit`` rows'
  ``count`` divided by the data segments transmitted (``send`` + ``retransmit``);
* **Jain's fairness index** of x: ``(sum x)^2 / (n * sum x^2)``;
* **queue statistics**: the length is a step function of time (0 before the first row);
  mean and percentiles are time-weighted over the window (percentile p = the smallest
  length held at least p % of the time), plus drops and marks counted in the window;
* **RTT statistics**: over the ``rtt_s`` samples taken in the window (sample-weighted);
* **time to deliver**: from the flow's start until its delivered bytes reach a target;
* **per-segment delay**: from the first ``send`` of a segment until the in-order delivered
  bytes cover it.

A metric computed from what the scenario's ``trace`` selection left out (``trace.flow_events``,
``cwnd`` or ``rtt`` off: ``Trace.untraced``) cannot be computed: the functions raise
:class:`~tcpn.errors.InputError` saying so, and :func:`summarize` gives it as ``None`` with
the reason under ``absent``, never as 0.

>>> import pandas as pd
>>> float(jain_index([1.0, 1.0])), float(jain_index([1.0, 0.0]))
(1.0, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tcpn.errors import InputError
from tcpn.models.traces import AGGREGATE_METRICS, SCHEMAS, Trace

__all__ = [
    "AGGREGATE_METRICS", "FLOW_METRICS", "NEEDS", "absent_metrics", "event_counts",
    "exact_sum", "goodput_bps", "goodput_series_bps", "jain_index", "loss_ratio",
    "mark_ratio", "queue_row", "queue_stats", "retransmission_ratio", "rtt_stats",
    "rtt_table", "segment_delays", "summarize", "throughput_bps", "throughput_series_bps",
    "time_average", "time_to_deliver_s",
]


FLOW_METRICS = ("goodput_bps", "throughput_bps", "segments_sent", "retransmissions", "drops",
                "marks", "timeouts", "loss_ratio", "retransmission_ratio", "mark_ratio",
                "cwnd_mean_bytes", "rtt_mean_s", "rtt_p95_s", "rtt_min_s", "completion_s",
                "segment_delay_mean_s", "connect_failed_s")
"""The metrics of each flow in a summary, in order."""
_FROM_CWND = ("cwnd_mean_bytes",)
_FROM_RTT = ("rtt_mean_s", "rtt_p95_s", "rtt_min_s")
#: What a trace may lack (``Trace.untraced``) -> the summary metrics computed from it.
NEEDS: dict[str, tuple[str, ...]] = {
    "flow_events": tuple(dict.fromkeys(
        [m for m in FLOW_METRICS if m not in _FROM_CWND + _FROM_RTT] + list(AGGREGATE_METRICS))),
    "cwnd": _FROM_CWND,
    "rtt": _FROM_RTT,
}


def absent_metrics(trace: Trace) -> dict[str, str]:
    """The summary metrics ``trace`` cannot give, with why (``{}`` when it has them all).

    >>> from tcpn.models.scenario import dumbbell
    >>> from tcpn.models.traces import TraceWriter
    >>> s = dumbbell(pairs=1, horizon_s=1.0)
    >>> s = type(s).model_validate({**s.model_dump(), "trace": {"rtt": False}})
    >>> absent_metrics(TraceWriter(s, s.concrete_flows(1)).close())
    {'rtt_mean_s': 'trace.rtt is off', 'rtt_p95_s': 'trace.rtt is off', \
'rtt_min_s': 'trace.rtt is off'}
    """
    return {metric: reason for what, reason in trace.untraced.items()
            for metric in NEEDS.get(what, ())}


def _require(trace: Trace, what: str, metric: str) -> None:
    """Refuse to compute ``metric`` from a part of the trace that was not recorded."""
    if what in trace.untraced:
        raise InputError(f"{metric} cannot be computed: {trace.untraced[what]} (the trace "
                         f"has no {what.replace('_', ' ')})")


def _window(trace: Trace, start_s: float | None, end_s: float | None) -> tuple[float, float]:
    t0 = trace.warmup_s if start_s is None else float(start_s)
    t1 = trace.horizon_s if end_s is None else float(end_s)
    if not t1 > t0:
        raise InputError(f"empty measurement window [{t0:g}, {t1:g}] s")
    return t0, t1


def _in_window(frame: pd.DataFrame, t0: float, t1: float) -> pd.DataFrame:
    times = frame["time_s"].to_numpy()
    return frame[(times >= t0) & (times <= t1)]


def _groups(frame: pd.DataFrame, key: str) -> Any:
    """Rows grouped by a categorical key column (no string conversion of every row)."""
    return frame.groupby(frame[key], observed=True, sort=False)


def _str_keys(result: pd.Series) -> pd.Series:
    result.index = result.index.astype(str)
    return result


def _per_flow(trace: Trace, events: Sequence[str], column: str, t0: float, t1: float,
              ) -> pd.Series:
    _require(trace, "flow_events", "goodput_bps" if "deliver" in events else "throughput_bps")
    frame = _in_window(trace.events(event=events), t0, t1)
    sums = _str_keys(_groups(frame, "flow")[column].sum())
    return sums.reindex(trace.flow_ids, fill_value=0.0).astype(float).rename_axis("flow")


def event_counts(trace: Trace, start_s: float | None = None, end_s: float | None = None,
                 ) -> pd.DataFrame:
    """Packets per flow and event kind in the window (the sum of ``count``), one column
    per kind in :data:`~tcpn.models.traces.FLOW_EVENTS`."""
    from tcpn.models.traces import FLOW_EVENTS

    _require(trace, "flow_events", "event_counts")
    t0, t1 = _window(trace, start_s, end_s)
    frame = _in_window(trace.flow_events, t0, t1)
    sums = frame.groupby([frame["flow"], frame["event"]], observed=True)["count"].sum()
    table = sums.unstack("event", fill_value=0.0)
    table.index = table.index.astype(str)
    table.columns = table.columns.astype(str)
    return table.reindex(index=trace.flow_ids, columns=list(FLOW_EVENTS), fill_value=0.0
                         ).rename_axis(index="flow", columns=None).astype(float)


def goodput_bps(trace: Trace, start_s: float | None = None, end_s: float | None = None,
                ) -> pd.Series:
    """Per-flow goodput (bit/s): ``deliver`` bytes in the window * 8 / window length."""
    t0, t1 = _window(trace, start_s, end_s)
    return _per_flow(trace, ("deliver",), "bytes", t0, t1) * 8.0 / (t1 - t0)


def throughput_bps(trace: Trace, start_s: float | None = None, end_s: float | None = None,
                   ) -> pd.Series:
    """Per-flow throughput (bit/s): ``recv`` payload bytes in the window * 8 / length."""
    t0, t1 = _window(trace, start_s, end_s)
    return _per_flow(trace, ("recv",), "bytes", t0, t1) * 8.0 / (t1 - t0)


def _series(trace: Trace, event: str, bin_s: float | None, start_s: float | None,
            end_s: float | None) -> pd.DataFrame:
    _require(trace, "flow_events", "goodput" if event == "deliver" else "throughput")
    t0, t1 = _window(trace, start_s, end_s)
    width = trace.bin_s if bin_s is None else float(bin_s)
    if width <= 0:
        raise InputError(f"bin_s must be > 0, got {width:g}")
    edges = t0 + width * np.arange(int(np.ceil((t1 - t0) / width - 1e-9)) + 1)
    frame = _in_window(trace.events(event=event), t0, t1)
    by_flow = {str(k): g for k, g in _groups(frame, "flow")}
    out = {}
    for flow in trace.flow_ids:
        rows = by_flow.get(flow, frame.iloc[:0])
        # the last bin may be shorter than bin_s: divide by its real width
        sums, _ = np.histogram(rows["time_s"], bins=edges, weights=rows["bytes"])
        widths = np.diff(np.minimum(edges, t1))
        out[flow] = sums * 8.0 / np.where(widths > 0, widths, np.nan)
    return pd.DataFrame(out, index=pd.Index(edges[:-1], name="time_s"))


def goodput_series_bps(trace: Trace, bin_s: float | None = None, start_s: float | None = None,
                       end_s: float | None = None) -> pd.DataFrame:
    """Goodput per time bin (bit/s): index = bin start, one column per flow.

    Bins of ``bin_s`` (default ``trace.bin_s``) from the window start; the last bin ends
    at the window end and its rate uses its real width.
    """
    return _series(trace, "deliver", bin_s, start_s, end_s)


def throughput_series_bps(trace: Trace, bin_s: float | None = None,
                          start_s: float | None = None, end_s: float | None = None,
                          ) -> pd.DataFrame:
    """Throughput (``recv`` bytes) per time bin, as :func:`goodput_series_bps`."""
    return _series(trace, "recv", bin_s, start_s, end_s)


def _ratio(trace: Trace, numerator: str, start_s: float | None, end_s: float | None,
           ) -> pd.Series:
    counts = event_counts(trace, start_s, end_s)
    sent = counts["send"] + counts["retransmit"]
    return (counts[numerator] / sent.where(sent > 0)).rename(f"{numerator}_ratio")


def loss_ratio(trace: Trace, start_s: float | None = None, end_s: float | None = None,
               ) -> pd.Series:
    """Per flow: data segments lost / data segments transmitted (NaN if none sent)."""
    return _ratio(trace, "drop", start_s, end_s).rename("loss_ratio")


def mark_ratio(trace: Trace, start_s: float | None = None, end_s: float | None = None,
               ) -> pd.Series:
    """Per flow: data segments CE-marked / data segments transmitted."""
    return _ratio(trace, "mark", start_s, end_s)


def retransmission_ratio(trace: Trace, start_s: float | None = None,
                         end_s: float | None = None) -> pd.Series:
    """Per flow: retransmissions / data segments transmitted (new + retransmitted)."""
    return _ratio(trace, "retransmit", start_s, end_s)


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index, 1/n (one flow gets all) .. 1 (equal shares); NaN if all 0.

    >>> round(jain_index([4.0, 2.0]), 4)  # 36 / (2 * 20)
    0.9
    """
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        raise InputError("Jain's index of no values")
    if np.any(x < 0):
        raise InputError("Jain's index needs non-negative values")
    square_sum = float(np.sum(x * x))
    return float(np.sum(x) ** 2 / (x.size * square_sum)) if square_sum > 0 else float("nan")


def time_average(times: np.ndarray, values: np.ndarray, t0: float, t1: float,
                 initial: float = 0.0) -> float:
    """Time-weighted mean over ``[t0, t1]`` of the step function that takes ``values[i]``
    at ``times[i]`` (sorted) and ``initial`` before the first time.

    The sum of level * duration is rounded once (:func:`exact_sum`),
    so the streamed summary, which adds it chunk by chunk, finds the same mean.

    >>> time_average(np.array([1.0]), np.array([2.0]), 0.0, 4.0)  # 0 for 1 s, 2 for 3 s
    1.5
    """
    levels, durations = _steps(times, values, t0, t1, initial)
    return exact_sum(levels * durations) / (t1 - t0)


def exact_sum(values: np.ndarray) -> float:
    """The sum of ``values`` rounded once (math.fsum): the same however they are ordered
    or cut into chunks, which lets a streamed summary match the in-memory one.

    >>> exact_sum(np.array([0.1] * 10)), sum([0.1] * 10)
    (1.0, 0.9999999999999999)
    """
    return math.fsum(np.asarray(values, dtype=float).tolist())


def _steps(times: np.ndarray, values: np.ndarray, t0: float, t1: float, initial: float,
           ) -> tuple[np.ndarray, np.ndarray]:
    """Levels of a step function on [t0, t1] and how long each is held."""
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    before = np.searchsorted(times, t0, side="right")
    start_level = values[before - 1] if before > 0 else initial
    inside = (times > t0) & (times < t1)
    edges = np.concatenate(([t0], times[inside], [t1]))
    levels = np.concatenate(([start_level], values[inside]))
    return levels, np.diff(edges)


def _weighted_percentile(levels: np.ndarray, weights: np.ndarray, q: float) -> float:
    order = np.argsort(levels, kind="stable")
    cumulative = np.cumsum(weights[order])
    total = cumulative[-1]
    index = int(np.searchsorted(cumulative, q / 100.0 * total - 1e-12 * total, side="left"))
    return float(levels[order][min(index, len(order) - 1)])


def queue_stats(trace: Trace, start_s: float | None = None, end_s: float | None = None,
                percentiles: Sequence[float] = (50, 95, 99)) -> pd.DataFrame:
    """Per traced queue: time-weighted mean and percentiles of the length (packets and
    bytes), its maximum, and the drops, marks and arrivals in the window.

    Arrivals are ``enqueue`` + ``drop`` rows (a marked packet is also enqueued).
    """
    t0, t1 = _window(trace, start_s, end_s)
    rows = {}
    by_queue = {str(k): g for k, g in _groups(trace.queue_events, "queue")}
    empty = trace.queue_events.iloc[:0]
    for queue in trace.queues.loc[trace.queues["traced"], "queue"]:
        frame = by_queue.get(str(queue), empty)
        times = frame["time_s"].to_numpy()
        lengths = {}
        for unit in ("packets", "bytes"):
            levels, durations = _steps(times, frame[f"length_{unit}"].to_numpy(), t0, t1, 0.0)
            lengths[unit] = (exact_sum(levels * durations) / (t1 - t0), levels, durations,
                             float(levels.max()))
        window = _in_window(frame, t0, t1)
        counts = _str_keys(_groups(window, "event")["count"].sum())
        rows[str(queue)] = queue_row(lengths, counts, percentiles)
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("queue")


def queue_row(lengths: Mapping[str, tuple[float, np.ndarray, np.ndarray, float]],
              counts: Mapping[str, float], percentiles: Sequence[float] = (50, 95, 99),
              ) -> dict[str, float]:
    """One row of :func:`queue_stats`: per unit of ``lengths`` (``"packets"``,
    ``"bytes"``: the time-weighted mean, the levels held, how long each, the maximum), the
    mean, the percentiles and the maximum; then the drops, marks and arrivals (enqueued +
    dropped) of ``counts`` (the ``count`` sums per event in the window)."""
    row: dict[str, float] = {}
    for unit, (mean, levels, durations, highest) in lengths.items():
        row[f"mean_{unit}"] = mean
        for q in percentiles:
            row[f"p{q:g}_{unit}"] = _weighted_percentile(levels, durations, q)
        row[f"max_{unit}"] = highest
    for event in ("drop", "mark", "enqueue"):
        row[f"{event}s"] = float(counts.get(event, 0.0))
    row["arrivals"] = row.pop("enqueues") + row["drops"]
    row["drop_ratio"] = row["drops"] / row["arrivals"] if row["arrivals"] else float("nan")
    return row


def rtt_stats(trace: Trace, start_s: float | None = None, end_s: float | None = None,
              ) -> pd.DataFrame:
    """Per flow: number of RTT samples in the window, their mean, std, min, median, 95th
    percentile and max (seconds; NaN without samples)."""
    _require(trace, "rtt", "rtt_stats")
    t0, t1 = _window(trace, start_s, end_s)
    return rtt_table(_in_window(trace.series("rtt_s"), t0, t1), trace.flow_ids)


def rtt_table(samples: pd.DataFrame, flow_ids: Sequence[str]) -> pd.DataFrame:
    """:func:`rtt_stats` of the RTT ``samples`` (columns ``flow``, ``value``; each flow's
    in time order), one row per flow of ``flow_ids``."""
    grouped = _groups(samples, "flow")["value"]
    table = pd.DataFrame({
        "samples": grouped.count(), "mean_s": grouped.mean(), "std_s": grouped.std(ddof=1),
        "min_s": grouped.min(), "p50_s": grouped.median(),
        "p95_s": grouped.quantile(0.95), "max_s": grouped.max(),
    })
    table.index = table.index.astype(str)
    table = table.reindex(list(flow_ids))
    table["samples"] = table["samples"].fillna(0).astype(int)
    return table.rename_axis("flow")


def _delivered(trace: Trace, flow: str) -> tuple[np.ndarray, np.ndarray]:
    _require(trace, "flow_events", "the delivered bytes")
    rows = trace.events(flow=flow, event="deliver")
    return rows["time_s"].to_numpy(), np.cumsum(rows["bytes"].to_numpy())


def time_to_deliver_s(trace: Trace, flow: str, segments: int | None = None,
                      bytes: float | None = None) -> float:
    """Seconds from ``flow``'s start until it has delivered ``segments`` full segments (or
    ``bytes``; default: its ``bytes`` to send); NaN if it never does within the trace."""
    if (segments is None) == (bytes is None):
        info = trace.flows.set_index("flow").loc[flow]
        if segments is None and bytes is None and not pd.isna(info["bytes"]):
            bytes = float(info["bytes"])
        else:
            raise InputError("time_to_deliver_s: give exactly one of segments and bytes "
                             f"(flow {flow!r} is bulk)")
    target = float(bytes) if bytes is not None else float(segments or 0) * \
        trace.segment_size_bytes(flow)
    times, delivered = _delivered(trace, flow)
    index = int(np.searchsorted(delivered, target - 1e-9, side="left"))
    if index >= len(times):
        return float("nan")
    start = float(trace.flows.set_index("flow").loc[flow, "start_s"])
    return float(times[index]) - start


def segment_delays(trace: Trace, flow: str) -> pd.DataFrame:
    """One row per segment first sent by ``flow``: ``seq``, ``bytes``, ``sent_s`` (first
    transmission), ``delivered_s`` (in-order delivery covers it; NaN if never) and
    ``delay_s``."""
    sends = trace.events(flow=flow, event="send").drop_duplicates("seq", keep="first")
    times, delivered = _delivered(trace, flow)
    ends = sends["seq"].to_numpy(dtype=float) + sends["bytes"].to_numpy()
    index = np.searchsorted(delivered, ends - 1e-9, side="left")
    done = np.append(times, np.nan)[index]
    sent = sends["time_s"].to_numpy()
    return pd.DataFrame({"seq": sends["seq"].to_numpy(), "bytes": sends["bytes"].to_numpy(),
                         "sent_s": sent, "delivered_s": done, "delay_s": done - sent})


def summarize(trace: Trace, start_s: float | None = None, end_s: float | None = None,
              ) -> dict[str, Any]:
    """Every summary metric, JSON-ready: ``{"window": ..., "flows": {flow: {...}},
    "queues": {queue: {...}}, "aggregate": {...}}``, plus ``"absent": {metric: reason}``
    when the trace lacks what some metrics need (they are ``None``, never 0).
    :func:`tcpn.lenses.evaluate` stores it in ``ScenarioResult.summary``; it
    computes it as the run goes (:class:`~tcpn.models.summary.SummaryStream`, which
    this feeds the whole trace).

    Per flow (:data:`FLOW_METRICS`): ``goodput_bps``, ``throughput_bps``,
    ``segments_sent``, ``retransmissions``, ``drops``, ``marks``, ``timeouts``, the loss,
    retransmission and mark ratios, the time-weighted ``cwnd_mean_bytes`` (from the flow's
    first value), ``rtt_mean_s``, ``rtt_p95_s``, ``rtt_min_s``, and for sized transfers
    ``completion_s`` and ``segment_delay_mean_s`` (every segment, whatever the window),
    ``connect_failed_s``. Per traced queue: :func:`queue_stats`. Aggregate
    (:data:`AGGREGATE_METRICS`): goodput, throughput, Jain's index of the goodputs, the
    ratios over all flows.
    """
    from tcpn.models.summary import SummaryStream

    t0, t1 = _window(trace, start_s, end_s)
    stream = SummaryStream(trace.flows, trace.queues, t0, t1, trace.untraced)
    for name in SCHEMAS:
        stream.add(name, getattr(trace, name))
    summary = stream.summary()
    assert summary is not None, "a trace's tables are sorted by time"
    return summary
