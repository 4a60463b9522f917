"""The summary metrics of a run, accumulated chunk by chunk as the trace is written.

:class:`SummaryStream` takes the chunks of a trace (Arrow tables as
:class:`~tcpn.models.traces.TraceWriter` writes them, or whole pandas tables) and keeps
only what the summary needs: per-flow and per-queue sums, the state of each time-weighted
step function (queue lengths, congestion windows), a histogram of each queue's length, the
RTT samples of the window and the send/deliver rows of sized transfers (bounded by their
size). Its memory does not grow with the horizon but for the RTT samples (12 bytes each:
their median and 95th percentile need them all).
:func:`tcpn.models.metrics.summarize` is this stream fed a whole trace at once, so a
run gives the same summary whether it kept its trace in memory or streamed it to disk:

* sums (bytes, packets, time-weighted means) are exact until their final rounding
  (:class:`ExactSums`), so they do not depend on how the rows were cut into chunks;
* a percentile of a queue's length reads a histogram of the levels whose durations are
  summed chunk by chunk: the same level as the whole trace's unless a level's cumulative
  share lies within 1e-12 of the percentile (the tolerance ``queue_stats`` allows);
* the step functions need each queue's and each flow's rows in time order, the RTT
  samples all flows' in time order; chunks that break it (a lens that writes a queue's rows
  out of order) make :meth:`SummaryStream.summary` return ``None``, and the caller
  summarises the trace read back and sorted instead.

>>> from tcpn.models.scenario import dumbbell
>>> from tcpn.models.traces import TraceWriter
>>> s = dumbbell(pairs=1, horizon_s=1.0)
>>> w = TraceWriter(s, s.concrete_flows(1))
>>> stream = SummaryStream(w.flows, w.queues, 0.0, 1.0)
>>> w.observe(stream.add)
>>> w.flow_event(0.5, "f0", "deliver", seq=0, bytes=125000)
>>> _ = w.close()
>>> stream.summary()["flows"]["f0"]["goodput_bps"]
1000000.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from tcpn.errors import InputError
from tcpn.models import metrics
from tcpn.models.traces import AGGREGATE_METRICS, FLOW_EVENTS, SCHEMAS, Trace
from tcpn.outputs import json_ready

__all__ = ["ExactSums", "SummaryStream", "records"]

_EVENT = {name: k for k, name in enumerate(FLOW_EVENTS)}
_QUEUE_COUNTED = ("drop", "mark", "enqueue")
#: the integers a float64 running sum adds exactly
_EXACT_BELOW = 2.0**53


class _Unordered(Exception):
    """A group's rows came out of time order: the step functions cannot follow."""


def _expansion(values: list[float]) -> list[float]:
    """Floats whose exact sum is the exact sum of ``values`` (math.fsum rounds once;
    the remainder, again and again, until nothing is left)."""
    parts: list[float] = []
    while True:
        part = math.fsum(values)
        if part == 0.0 or not math.isfinite(part):
            return parts if part == 0.0 else [part]
        parts.append(part)
        values.append(-part)


class ExactSums:
    """Sums per integer key, exact until :meth:`totals` rounds each once.

    Whole numbers (packets, bytes of a packet lens) add as float64 directly, which is
    exact while the sums stay below 2**53; other values keep their key's running sum as a
    short list of floats (:func:`_expansion`).
    """

    def __init__(self, keys: int):
        self._whole = np.zeros(keys)
        self._parts: dict[int, list[float]] = {}

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Add ``values[i]`` to key ``keys[i]``."""
        if not len(keys):
            return
        if (np.array_equal(values, np.trunc(values)) and float(np.abs(values).sum())
                + float(np.abs(self._whole).max(initial=0.0)) < _EXACT_BELOW):
            self._whole += np.bincount(keys, weights=values, minlength=len(self._whole))
            return
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        for start, stop in zip(starts, [*starts[1:], len(keys)], strict=True):
            key = int(keys[start])
            self._parts[key] = _expansion([*self._parts.get(key, []),
                                           *values[start:stop].tolist()])

    def totals(self) -> np.ndarray:
        """Each key's sum, rounded once."""
        totals = self._whole.copy()
        for key, parts in self._parts.items():
            totals[key] = math.fsum([*parts, totals[key]])
        return totals


class _Steps:
    """A step function fed in time order: its time-weighted mean, maximum and the time it
    holds each level over ``[t0, t1]`` (as ``metrics._steps``: the level of the last row
    at or before ``t0``, else 0; rows strictly inside change it; rows at ``t1`` or later
    do not count). ``from_first_row``: the window starts at the first row (a congestion
    window exists from its flow's first value on), clipped to ``window_s[0]``. Only with
    ``histogram`` does it keep how long each level is held (a queue's lengths are few; a
    congestion window takes ever new values)."""

    def __init__(self, window_s: tuple[float, float], from_first_row: bool = False,
                 histogram: bool = True):
        self.t0: float | None = None if from_first_row else window_s[0]
        self.keeps_histogram = histogram
        self.window_s = window_s
        self.level, self.edge, self.last = 0.0, window_s[0], -math.inf
        self.area: list[float] = []  # the exact sum of level * duration (_expansion)
        self.done = False
        #: how long each level is held (a histogram: a queue has few distinct lengths)
        self.held: dict[float, float] = {}
        self.max = -math.inf

    def add(self, times: np.ndarray, values: np.ndarray) -> None:
        if times[0] < self.last or (len(times) > 1 and bool((np.diff(times) < 0).any())):
            raise _Unordered
        self.last = float(times[-1])
        if self.t0 is None:
            self.t0 = self.edge = max(self.window_s[0], float(times[0]))
        t0, t1 = self.t0, self.window_s[1]
        before = int(np.searchsorted(times, t0, side="right"))
        end = int(np.searchsorted(times, t1, side="left"))
        if before > 0:
            self.level = float(values[before - 1])
        if end > before:
            inside, held = times[before:end], values[before:end]
            self._hold(np.concatenate(([self.level], held[:-1])),
                       np.diff(np.concatenate(([self.edge], inside))))
            self.level, self.edge = float(held[-1]), float(inside[-1])

    def _hold(self, levels: np.ndarray, durations: np.ndarray) -> None:
        self.area = _expansion([*self.area, *(levels * durations).tolist()])
        self.max = max(self.max, float(levels.max()))
        if not self.keeps_histogram:
            return
        codes, distinct = pd.factorize(levels)  # hashed: cheaper than np.unique's sort
        held = self.held
        for level, duration in zip(distinct.tolist(), np.bincount(codes, weights=durations
                                                                  ).tolist(), strict=True):
            held[level] = held.get(level, 0.0) + duration

    def histogram(self) -> tuple[np.ndarray, np.ndarray]:
        """The levels held, in increasing order, and how long each."""
        levels = sorted(self.held)
        return np.array(levels), np.array([self.held[level] for level in levels])

    def finish(self) -> bool:
        """Close the window (once); whether the function has one (``t0 < t1``)."""
        if self.t0 is None or not self.t0 < self.window_s[1]:
            return False
        if self.done:
            return True
        self.done = True
        self._hold(np.array([self.level]), np.array([self.window_s[1] - self.edge]))
        return True

    def mean(self) -> float:
        assert self.t0 is not None
        return math.fsum(self.area) / (self.window_s[1] - self.t0)


def _codes(column: Any, names: Sequence[str]) -> np.ndarray:
    """The index in ``names`` of each value of a string column (-1: not in ``names``):
    an Arrow dictionary column, a pandas categorical or a column of strings."""
    where = {name: k for k, name in enumerate(names)}
    if isinstance(column, pa.ChunkedArray):
        parts = [_codes(chunk, names) for chunk in column.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.intp)
    if isinstance(column, pa.DictionaryArray):
        lookup = np.array([where.get(str(v), -1) for v in column.dictionary.to_pylist()]
                          + [-1], dtype=np.intp)
        return lookup[column.indices.to_numpy(zero_copy_only=False)]
    codes, uniques = pd.factorize(pd.Series(column).astype(str), sort=False)
    lookup = np.array([where.get(v, -1) for v in uniques] + [-1], dtype=np.intp)
    return lookup[codes]


def _numbers(chunk: Any, name: str) -> np.ndarray:
    column = chunk[name] if isinstance(chunk, pd.DataFrame) else chunk.column(name)
    if isinstance(column, pa.ChunkedArray):
        return column.to_numpy().astype(np.float64, copy=False)
    return column.to_numpy(dtype=np.float64)


def _strings(chunk: Any, name: str) -> Any:
    return chunk[name] if isinstance(chunk, pd.DataFrame) else chunk.column(name)


class SummaryStream:
    """The summary of :func:`tcpn.models.metrics.summarize` over ``[start_s, end_s]``,
    from the trace's chunks as they come (see the module docstring).

    ``flows`` and ``queues`` are the trace's ``flows`` and ``queues`` tables, ``untraced``
    what its scenario left out (``Trace.untraced``: those metrics are absent); give each
    chunk to :meth:`add` (``TraceWriter.observe(stream.add)``), then call :meth:`summary`.
    """

    def __init__(self, flows: pd.DataFrame, queues: pd.DataFrame, start_s: float,
                 end_s: float, untraced: Mapping[str, str] | None = None):
        if not end_s > start_s:
            raise InputError(f"empty measurement window [{start_s:g}, {end_s:g}] s")
        self.flows, self.queues = flows, queues
        self.untraced = dict(untraced or {})
        self.window_s = (float(start_s), float(end_s))
        self.flow_ids = [str(f) for f in flows["flow"]]
        self.traced = [str(q) for q in queues.loc[queues["traced"].astype(bool), "queue"]]
        n, events = len(self.flow_ids), len(FLOW_EVENTS)
        self.counts = ExactSums(n * events)
        self.received = ExactSums(2 * n)  # recv, deliver bytes of each flow
        self.failed_at = np.full(n, np.nan)
        self.cwnd = [_Steps(self.window_s, from_first_row=True, histogram=False)
                     for _ in range(n)]
        self.lengths = [(_Steps(self.window_s), _Steps(self.window_s)) for _ in self.traced]
        self.queue_counts = ExactSums(len(self.traced) * len(_QUEUE_COUNTED))
        sized = flows["bytes"].notna().to_numpy()
        self.sized = np.array([*sized, False])  # code -1 (unknown) last
        self.kept_events: list[pd.DataFrame] = []
        #: the RTT samples in the window in time order: flow codes, values (12 bytes each;
        #: pandas' per-flow means depend on how the flows' rows interleave), in arrays of
        #: doubling capacity (not one small array per chunk: those, kept between the chunks'
        #: freed buffers, fragment the heap)
        self.rtt_codes, self.rtt_values = np.empty(1024, np.int32), np.empty(1024)
        self.rtt_count = 0
        self.rtt_last = -math.inf
        self.ordered = True

    def add(self, table: str, chunk: pa.Table | pd.DataFrame) -> None:
        """Take one chunk of ``table`` (an Arrow table or a DataFrame of its columns)."""
        if not self.ordered or not len(chunk):
            return
        try:
            {"flow_events": self._flow_events, "flow_series": self._flow_series,
             "queue_events": self._queue_events}[table](chunk)
        except _Unordered:
            self.ordered = False
            self.cwnd, self.lengths, self.kept_events = [], [], []

    def _in_window(self, times: np.ndarray) -> np.ndarray:
        return (times >= self.window_s[0]) & (times <= self.window_s[1])

    def _flow_events(self, chunk: Any) -> None:
        times = _numbers(chunk, "time_s")
        flows = _codes(_strings(chunk, "flow"), self.flow_ids)
        events = _codes(_strings(chunk, "event"), FLOW_EVENTS)
        inside = self._in_window(times) & (flows >= 0) & (events >= 0)
        self.counts.add(flows[inside] * len(FLOW_EVENTS) + events[inside],
                        _numbers(chunk, "count")[inside])
        received = inside & ((events == _EVENT["recv"]) | (events == _EVENT["deliver"]))
        self.received.add(2 * flows[received] + (events[received] == _EVENT["deliver"]),
                          _numbers(chunk, "bytes")[received])
        failed = (events == _EVENT["connect_fail"]) & (flows >= 0)
        if failed.any():
            np.fmin.at(self.failed_at, flows[failed], times[failed])
        keep = self.sized[flows] & ((events == _EVENT["send"]) | (events == _EVENT["deliver"]))
        if keep.any():
            self.kept_events.append(pd.DataFrame({
                "time_s": times[keep],
                "flow": pd.Categorical.from_codes(flows[keep], categories=self.flow_ids),
                "event": pd.Categorical.from_codes(events[keep], categories=FLOW_EVENTS),
                "seq": _numbers(chunk, "seq")[keep].astype(np.int64),
                "bytes": _numbers(chunk, "bytes")[keep], "count": _numbers(chunk, "count")[keep],
                "where": ""}))

    def _flow_series(self, chunk: Any) -> None:
        times, values = _numbers(chunk, "time_s"), _numbers(chunk, "value")
        flows = _codes(_strings(chunk, "flow"), self.flow_ids)
        var = _codes(_strings(chunk, "var"), ("cwnd_bytes", "rtt_s"))
        for flow in np.unique(flows[(var == 0) & (flows >= 0)]):
            rows = (var == 0) & (flows == flow)
            self.cwnd[flow].add(times[rows], values[rows])
        rtt = (var == 1) & (flows >= 0)
        if rtt.any():
            sampled = times[rtt]
            if sampled[0] < self.rtt_last or bool((np.diff(sampled) < 0).any()):
                raise _Unordered
            self.rtt_last = float(sampled[-1])
            inside = self._in_window(sampled)
            self._keep_rtt(flows[rtt][inside], values[rtt][inside])

    def _queue_events(self, chunk: Any) -> None:
        times = _numbers(chunk, "time_s")
        queues = _codes(_strings(chunk, "queue"), self.traced)
        events = _codes(_strings(chunk, "event"), _QUEUE_COUNTED)
        packets, size = _numbers(chunk, "length_packets"), _numbers(chunk, "length_bytes")
        for queue in np.unique(queues[queues >= 0]):
            rows = queues == queue
            by_packets, by_bytes = self.lengths[queue]
            by_packets.add(times[rows], packets[rows])
            by_bytes.add(times[rows], size[rows])
        counted = self._in_window(times) & (queues >= 0) & (events >= 0)
        self.queue_counts.add(queues[counted] * len(_QUEUE_COUNTED) + events[counted],
                              _numbers(chunk, "count")[counted])

    def summary(self) -> dict[str, Any] | None:
        """Every summary metric, JSON-ready (as :func:`~tcpn.models.metrics.summarize`),
        or ``None`` when a queue's or a flow's rows came out of time order."""
        if not self.ordered:
            return None
        t0, t1 = self.window_s
        ids = pd.Index(self.flow_ids, name="flow")
        flows = pd.DataFrame(index=ids)
        aggregate: dict[str, Any] = {}
        kept = self._kept_trace()
        if "flow_events" not in self.untraced:
            self._flow_event_metrics(kept, flows, aggregate)
        if "cwnd" not in self.untraced:
            flows["cwnd_mean_bytes"] = pd.Series([steps.mean() if steps.finish() else np.nan
                                                  for steps in self.cwnd], index=ids,
                                                 dtype=float)
        if "rtt" not in self.untraced:
            rtt = metrics.rtt_table(self._rtt_frame(), self.flow_ids)
            flows["rtt_mean_s"], flows["rtt_p95_s"], flows["rtt_min_s"] = (
                rtt["mean_s"], rtt["p95_s"], rtt["min_s"])
        flows = flows.reindex(columns=list(metrics.FLOW_METRICS))
        absent = metrics.absent_metrics(kept)
        return {
            "window": {"start_s": t0, "end_s": t1},
            "flows": records(flows),
            "queues": records(self._queue_table()),
            "aggregate": {k: json_ready(aggregate.get(k)) for k in AGGREGATE_METRICS},
            **({"absent": absent} if absent else {}),
        }

    def _flow_event_metrics(self, kept: Trace, flows: pd.DataFrame,
                            aggregate: dict[str, Any]) -> None:
        """The summary metrics computed from the flow events, into ``flows`` and
        ``aggregate``."""
        t0, t1 = self.window_s
        ids = flows.index
        counts = pd.DataFrame(self.counts.totals().reshape(len(ids), len(FLOW_EVENTS)),
                              index=ids, columns=list(FLOW_EVENTS))
        received = self.received.totals().reshape(len(ids), 2)
        sent = counts["send"] + counts["retransmit"]
        flows["goodput_bps"] = pd.Series(received[:, 1], index=ids) * 8.0 / (t1 - t0)
        flows["throughput_bps"] = pd.Series(received[:, 0], index=ids) * 8.0 / (t1 - t0)
        flows["segments_sent"], flows["retransmissions"] = counts["send"], counts["retransmit"]
        flows["drops"], flows["marks"], flows["timeouts"] = (counts["drop"], counts["mark"],
                                                             counts["timeout"])
        flows["loss_ratio"] = counts["drop"] / sent.where(sent > 0)
        flows["retransmission_ratio"] = counts["retransmit"] / sent.where(sent > 0)
        flows["mark_ratio"] = counts["mark"] / sent.where(sent > 0)
        sized = self.flows.set_index("flow")["bytes"]
        flows["completion_s"] = [
            metrics.time_to_deliver_s(kept, f) if not pd.isna(sized[f]) else np.nan
            for f in flows.index]
        # every segment of a sized transfer (not only those in the window), as the studies ask
        flows["segment_delay_mean_s"] = [
            float(metrics.segment_delays(kept, f)["delay_s"].mean())
            if not pd.isna(sized[f]) else np.nan for f in flows.index]
        # when a connection gave up opening (its last SYN unanswered), whatever the window
        flows["connect_failed_s"] = self.failed_at
        total_sent = float(sent.sum())
        aggregate.update({
            "goodput_bps": float(flows["goodput_bps"].sum()),
            "throughput_bps": float(flows["throughput_bps"].sum()),
            "jain_index": metrics.jain_index(flows["goodput_bps"]),
            "loss_ratio": float(counts["drop"].sum()) / total_sent if total_sent else np.nan,
            "retransmission_ratio": (float(counts["retransmit"].sum()) / total_sent
                                     if total_sent else np.nan),
            "mark_ratio": float(counts["mark"].sum()) / total_sent if total_sent else np.nan,
        })

    def _keep_rtt(self, codes: np.ndarray, values: np.ndarray) -> None:
        end = self.rtt_count + len(codes)
        if end > len(self.rtt_values):
            capacity = max(end, 2 * len(self.rtt_values))
            self.rtt_codes = np.resize(self.rtt_codes, capacity)
            self.rtt_values = np.resize(self.rtt_values, capacity)
        self.rtt_codes[self.rtt_count:end] = codes
        self.rtt_values[self.rtt_count:end] = values
        self.rtt_count = end

    def _rtt_frame(self) -> pd.DataFrame:
        """The RTT samples in the window (``flow``, ``value``)."""
        n = self.rtt_count
        return pd.DataFrame({
            "flow": pd.Categorical.from_codes(self.rtt_codes[:n], categories=self.flow_ids),
            "value": self.rtt_values[:n]})

    def _kept_trace(self) -> Trace:
        """A trace of the sends and deliveries of sized flows (the rows their completion
        times and segment delays need; bounded by their size)."""
        return Trace(flows=self.flows, queues=self.queues,
                     flow_events=pd.concat(self.kept_events, ignore_index=True)
                     if self.kept_events else SCHEMAS["flow_events"].empty_table().to_pandas(),
                     flow_series=SCHEMAS["flow_series"].empty_table().to_pandas(),
                     queue_events=SCHEMAS["queue_events"].empty_table().to_pandas(),
                     horizon_s=self.window_s[1], warmup_s=self.window_s[0],
                     untraced=self.untraced)

    def _queue_table(self) -> pd.DataFrame:
        counts = self.queue_counts.totals().reshape(len(self.traced), len(_QUEUE_COUNTED))
        rows = {}
        for k, queue in enumerate(self.traced):
            lengths = {}
            for unit, steps in zip(("packets", "bytes"), self.lengths[k], strict=True):
                steps.finish()
                lengths[unit] = (steps.mean(), *steps.histogram(), steps.max)
            rows[queue] = metrics.queue_row(lengths, dict(zip(_QUEUE_COUNTED, counts[k],
                                                              strict=True)))
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("queue")


def records(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """A table as ``{row: {column: value}}``, JSON-ready (NaN and infinities: None)."""
    return {str(index): {col: json_ready(row[col]) for col in frame.columns}
            for index, row in frame.iterrows()}

