"""The property library read on a packet trace: does one run violate a property?

A model-checked property (:mod:`tcpn.models.properties`) speaks of every path of a
verification net; a lens's run is one path at packet level, its :class:`~tcpn.models.traces.Trace`
what is left of it. :func:`trace_verdict` decides, on one trace, the properties a trace can
decide (each reads the rows named below) and refuses the others, with the reason:

* ``delivered_once_in_order``: the ``deliver`` rows of the flow cover bytes ``0..N`` once,
  contiguously, and reach the transfer's ``N`` bytes by the end of the run;
* ``completes`` (``all_flows_complete``: every flow): the flow (each flow) delivered and had
  acknowledged its ``N`` bytes, or gave up its handshake (``connect_fail``), by the end;
* ``no_spurious_retransmission``: no ``retransmit`` row before the first loss the trace
  records (a flow's ``drop``/``ack_drop``, a queue's ``drop``);
* ``queue_within_limit``: no traced queue's length after an event exceeds its limit;
* ``ssthresh_at_least_2``: the flow's ``ssthresh_bytes`` never falls below two segments;
* ``window_share`` (with its ratio ``R``): after no ``cwnd_bytes``/``ssthresh_bytes`` row,
  while every flow has a window, is in congestion avoidance (``cwnd >= ssthresh``) and has
  not had its ``N`` bytes acknowledged, is the largest ``cwnd`` above ``R`` times the
  smallest; ``share_settles``: after the last such row (on one run, "from some moment on"
  reads the last moment every flow is in congestion avoidance before one completes).

A run is finite: "eventually" reads "by the end of the run", so a property whose violation
is an infinite path shows only as "not yet at the horizon" (the evidence says so).

>>> from tcpn.models.scenario import dumbbell
>>> from tcpn.models.traces import TraceWriter
>>> s = dumbbell(pairs=1, horizon_s=1.0)
>>> w = TraceWriter(s, s.concrete_flows(1))
>>> w.flow_event(0.0, "f0", "send", seq=0, bytes=536)
>>> w.flow_event(0.3, "f0", "retransmit", seq=0, bytes=536)
>>> trace_verdict("no_spurious_retransmission", w.close(), "f0")
TraceVerdict(shows=True, evidence='seg 0 sent again at 0.300 s, no packet lost before')
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from tcpn.models.routing import RouteTable
from tcpn.models.traces import Trace

__all__ = ["RATIO_PROPERTIES", "TRACE_PROPERTIES", "TraceVerdict", "refusal", "trace_verdict",
           "transfer_bytes"]


@dataclass(frozen=True)
class TraceVerdict:
    """Whether the run violates the property (``shows``; ``None``: the trace cannot
    decide it), and the rows that say so (or why not)."""

    shows: bool | None
    evidence: str


def _segment(trace: Trace, flow: str, seq: int) -> int:
    return int(seq) // trace.segment_size_bytes(flow)


def transfer_bytes(trace: Trace, flow: str) -> int | None:
    """The flow's transfer length (the ``flows`` table's ``bytes``; ``None``: bulk)."""
    size = trace.flows.set_index("flow").loc[flow, "bytes"]
    return None if pd.isna(size) else int(size)


def _delivered(trace: Trace, flow: str) -> TraceVerdict:
    rows = trace.events(flow=flow, event="deliver")
    end = 0
    for time_s, seq, size in zip(rows.time_s, rows.seq, rows.bytes, strict=True):
        if int(seq) != end:
            what = "again" if seq < end else f"before byte {end}"
            return TraceVerdict(True, f"bytes from {int(seq)} delivered {what} at "
                                      f"{time_s:.3f} s")
        end += int(size)
    total_bytes = _total(trace, flow)  # a bulk flow can still deliver twice (above)
    if end > total_bytes:
        return TraceVerdict(True, f"{end} bytes delivered, more than the {total_bytes} sent")
    if end < total_bytes:
        return TraceVerdict(True, f"{end} of {total_bytes} bytes delivered by the end of "
                                  f"the run ({trace.horizon_s:g} s)")
    return TraceVerdict(False, f"{total_bytes} bytes delivered once, in order, by "
                               f"{rows.time_s.iloc[-1]:.3f} s")


def _complete(trace: Trace, flow: str) -> tuple[bool, str]:
    total_bytes = _total(trace, flow)
    failed = trace.events(flow=flow, event="connect_fail")
    if len(failed):
        return True, f"{flow} gave up its handshake at {failed.time_s.iloc[0]:.3f} s"
    delivered = int(trace.events(flow=flow, event="deliver").bytes.sum())
    acks = trace.events(flow=flow, event="ack")
    acked = int(acks.seq.max()) if len(acks) else 0
    if delivered >= total_bytes and acked >= total_bytes:
        done = acks.time_s[acks.seq >= total_bytes].iloc[0]
        return True, f"{flow} delivered and had acknowledged {total_bytes} bytes by {done:.3f} s"
    return False, (f"{flow}: {delivered} of {total_bytes} bytes delivered, {acked} "
                   f"acknowledged by the end of the run ({trace.horizon_s:g} s)")


def _completes(trace: Trace, flow: str) -> TraceVerdict:
    done, evidence = _complete(trace, flow)
    return TraceVerdict(not done, evidence)


def _all_complete(trace: Trace, _flow: str) -> TraceVerdict:
    answers = [_complete(trace, each) for each in trace.flow_ids]
    late = [evidence for done, evidence in answers if not done]
    return TraceVerdict(bool(late), "; ".join(late or [e for _d, e in answers]))


def _first_loss_s(trace: Trace) -> float:
    losses = trace.events(event=("drop", "ack_drop")).time_s
    drops = trace.queue(event="drop").time_s
    return float(min([*losses.head(1), *drops.head(1), float("inf")]))


def _no_spurious(trace: Trace, flow: str) -> TraceVerdict:
    first_loss_s = _first_loss_s(trace)
    resent = trace.events(flow=flow, event="retransmit")
    early = resent[resent.time_s < first_loss_s]
    if len(early):
        row = early.iloc[0]
        return TraceVerdict(True, f"seg {_segment(trace, flow, row.seq)} sent again at "
                                  f"{row.time_s:.3f} s, no packet lost before")
    when = "" if first_loss_s == float("inf") else f" before the first loss at {first_loss_s:.3f} s"
    return TraceVerdict(False, f"{len(resent)} retransmissions, none{when}" if len(resent)
                        else "no retransmission")


def _queues(trace: Trace, _flow: str) -> TraceVerdict:
    untraced = trace.queues.queue[~trace.queues.traced.astype(bool)].tolist()
    if untraced:
        return TraceVerdict(None, f"queues {', '.join(untraced)} are not traced")
    events = trace.queue_events
    for row in trace.queues.itertuples():
        lengths = events[events.queue == row.queue]
        column = "length_packets" if row.unit == "packets" else "length_bytes"
        if len(lengths) and lengths[column].max() > row.limit:
            worst = lengths.loc[lengths[column].idxmax()]
            return TraceVerdict(True, f"queue {row.queue} held {worst[column]:g} {row.unit} "
                                      f"(limit {row.limit:g}) at {worst.time_s:.3f} s")
    return TraceVerdict(False, "every traced queue stayed within its limit")


def _ssthresh(trace: Trace, flow: str) -> TraceVerdict:
    rows = trace.series("ssthresh_bytes", flow=flow)
    floor_bytes = 2 * trace.segment_size_bytes(flow)
    low = rows[rows.value < floor_bytes]
    if len(low):
        return TraceVerdict(True, f"ssthresh {low.value.iloc[0]:g} bytes (< {floor_bytes}) at "
                                  f"{low.time_s.iloc[0]:.3f} s")
    return TraceVerdict(False, f"ssthresh never below {floor_bytes} bytes ({len(rows)} values)")


def _done_s(trace: Trace) -> dict[str, float]:
    """When each flow had its transfer acknowledged (``inf``: never, or a bulk flow)."""
    done_s = {}
    for each in trace.flow_ids:
        total = transfer_bytes(trace, each)
        acks = trace.events(flow=each, event="ack")
        reached = acks.time_s[acks.seq >= total] if total is not None else acks.time_s[:0]
        done_s[each] = float(reached.iloc[0]) if len(reached) else float("inf")
    return done_s


def _joint_windows(trace: Trace) -> list[tuple[float, list[float]]]:
    """The flows' windows (segments) after each ``cwnd_bytes``/``ssthresh_bytes`` row at
    which every flow has a window, is in congestion avoidance (``cwnd >= ssthresh``) and
    has not had its transfer acknowledged: the moments ``window_share`` reads."""
    flows = trace.flow_ids
    done_s = _done_s(trace)
    rows = pd.concat([trace.series(var).assign(var=var)
                      for var in ("cwnd_bytes", "ssthresh_bytes")]).sort_values(
        "time_s", kind="stable")
    last: dict[tuple[str, str], float] = {}
    moments = []
    for time_s, each, var, value in zip(rows.time_s, rows.flow, rows["var"], rows.value,
                                        strict=True):
        last[each, var] = float(value)
        if all((f, "cwnd_bytes") in last and time_s < done_s[f]
               and last[f, "cwnd_bytes"] >= last.get((f, "ssthresh_bytes"), float("inf"))
               for f in flows):
            moments.append((float(time_s), [last[f, "cwnd_bytes"] / trace.segment_size_bytes(f)
                                            for f in flows]))
    return moments


def _ratio_text(trace: Trace, time_s: float, windows: list[float], ratio: float) -> str:
    """The windows at ``time_s`` and their ratio."""
    shown = ", ".join(f"{f} {w:.2f}" for f, w in zip(trace.flow_ids, windows, strict=True))
    return (f"cwnd {shown} segments at {time_s:.3f} s: {max(windows) / min(windows):.2f} x "
            f"(R = {ratio:g})")


def _window_share(trace: Trace, _flow: str, ratio: float) -> TraceVerdict:
    """``window_share``: the first moment both are in congestion avoidance above ``R``."""
    moments = _joint_windows(trace)
    for time_s, windows in moments:
        if max(windows) > ratio * min(windows):
            return TraceVerdict(True, _ratio_text(trace, time_s, windows, ratio))
    return TraceVerdict(False, f"every flow's cwnd within {ratio:g} x the others' "
                               f"({len(moments)} moments with all in congestion avoidance)")


def _share_settles(trace: Trace, _flow: str, ratio: float) -> TraceVerdict:
    """``share_settles`` on one run: the windows after the last row at which every flow is in
    congestion avoidance, none complete, and the segments each flow delivered from then to
    the first transfer's acknowledgement (or the horizon)."""
    moments = _joint_windows(trace)
    if not moments:
        return TraceVerdict(True, "no moment with every flow in congestion avoidance and "
                                  "none complete")
    time_s, windows = moments[-1]
    end_s = min(min(_done_s(trace).values()), trace.horizon_s)
    delivered = []
    for f in trace.flow_ids:
        rows = trace.events(flow=f, event="deliver")
        span_bytes = int(rows.bytes[(rows.time_s > time_s) & (rows.time_s <= end_s)].sum())
        delivered.append(f"{f} {span_bytes // trace.segment_size_bytes(f)}")
    wide = max(windows) > ratio * min(windows)
    return TraceVerdict(wide, ("settled above R: " if wide else "settled: ")
                        + _ratio_text(trace, time_s, windows, ratio)
                        + f"; segments delivered from then to {end_s:.3f} s: "
                        + ", ".join(delivered))


def _data_path(trace: Trace, flow: str) -> list[str]:
    """The queue ids (``A->B``) the flow's data enters, by the scenario's routes."""
    row = trace.flows.set_index("flow").loc[flow]
    ends = [tuple(q.split("->")) for q in trace.queues.queue]
    nodes = sorted({n for pair in ends for n in pair})
    route = RouteTable(nodes, ends).route(str(row.src), str(row.dst)) or ()
    return [f"{a}->{b}" for a, b in itertools.pairwise(route)]


def _blind_cuts(trace: Trace, flow: str) -> TraceVerdict:
    """``vegas_cuts_on_forward_queue``: a ``cwnd_bytes`` row below the one before, taken in
    congestion avoidance (the previous ``cwnd >= ssthresh``) and before any loss of the
    flow, while every traced queue on its data path held no packet."""
    path = _data_path(trace, flow)
    traced = set(trace.queues.queue[trace.queues.traced.astype(bool)])
    seen = [q for q in path if q in traced]
    if not seen:
        return TraceVerdict(None, f"no queue on {flow}'s data path ({', '.join(path)}) is "
                                  "traced")
    events = trace.queue_events[trace.queue_events.queue.isin(seen)]
    lost = trace.events(flow=flow, event=("drop", "ack_drop", "retransmit")).time_s
    first_loss_s = float(lost.min()) if len(lost) else float("inf")
    ssthresh = trace.series("ssthresh_bytes", flow=flow)
    rows = trace.series("cwnd_bytes", flow=flow)
    size = trace.segment_size_bytes(flow)
    cuts = blind = 0
    first = ""
    for before, time_s, value in zip(rows.value.iloc[:-1], rows.time_s.iloc[1:],
                                     rows.value.iloc[1:], strict=True):
        # the ssthresh in force before this row (none yet: slow start)
        earlier = ssthresh.value[ssthresh.time_s < time_s]
        if value >= before or time_s >= first_loss_s or not len(earlier) \
                or before < earlier.iloc[-1]:
            continue
        cuts += 1
        held = 0.0
        for queue in seen:
            lengths = events.length_packets[(events.queue == queue) & (events.time_s <= time_s)]
            held += float(lengths.iloc[-1]) if len(lengths) else 0.0
        if held == 0:
            blind += 1
            first = first or (f"{flow}'s cwnd {before / size:.2f} -> {value / size:.2f} "
                              f"segments at {time_s:.3f} s with {', '.join(seen)} empty")
    if blind:
        return TraceVerdict(True, f"{first} ({blind} of {cuts} cuts in congestion avoidance "
                                  "before a loss)")
    return TraceVerdict(False, f"each of {cuts} cuts in congestion avoidance found a packet "
                               f"queued on {', '.join(seen)}")


class _BulkFlow(Exception):
    """A property about the end of a transfer read on a bulk flow."""


def _total(trace: Trace, flow: str) -> int:
    total = transfer_bytes(trace, flow)
    if total is None:
        raise _BulkFlow(flow)
    return total


#: The properties a trace decides, each a reader of ``(trace, flow)``.
TRACE_PROPERTIES: dict[str, Callable[[Trace, str], TraceVerdict]] = {
    "delivered_once_in_order": _delivered, "completes": _completes,
    "all_flows_complete": _all_complete, "no_spurious_retransmission": _no_spurious,
    "queue_within_limit": _queues, "ssthresh_at_least_2": _ssthresh,
    "vegas_cuts_on_forward_queue": _blind_cuts,
}

#: The properties a trace decides with a parameter: ``(trace, flow, ratio)``.
RATIO_PROPERTIES: dict[str, Callable[[Trace, str, float], TraceVerdict]] = {
    "window_share": _window_share, "share_settles": _share_settles,
}

#: Why a trace cannot decide the others.
REFUSALS = {
    "no_deadlock_but_completion": "a dead marking is a state of the model; a run's trace "
                                  "ends at the horizon whether or not anything could happen",
    "no_flow_starves": "'can still complete' quantifies over every continuation; one run "
                       "shows one",
    "flight_within_windows": "the trace records cwnd changes, not the receive window nor "
                             "the SACK pipe the sender compares the flight with",
    "vegas_window_rules": "a Vegas decision's inputs (the round's RTT samples) are not rows "
                          "of the trace",
    "tcp_l_keeps_window_on_link_loss": "a trace does not say which loss was a link loss "
                                       "the sender was told of",
    "handshake_settles": "the trace records no SYN sent, only a handshake given up",
}


def refusal(name: str) -> str | None:
    """Why a trace cannot decide property ``name`` (``None``: it can)."""
    if name in TRACE_PROPERTIES or name in RATIO_PROPERTIES:
        return None
    return "a packet trace cannot decide it: " + REFUSALS.get(
        name, "no trace reading is defined for it")


def trace_verdict(name: str, trace: Trace, flow: str,
                  share_ratio: float | None = None) -> TraceVerdict:
    """Read property ``name`` on ``trace`` for ``flow``; ``shows=None`` with the reason for
    a property a trace cannot decide (or one about a transfer's end, on a bulk flow).
    ``share_ratio`` is the ``R`` of ``window_share`` and ``share_settles`` (a bulk flow
    never completes: every moment after its start counts)."""
    if name in RATIO_PROPERTIES:
        if share_ratio is None:
            return TraceVerdict(None, f"{name} needs its ratio R (share_ratio)")
        return RATIO_PROPERTIES[name](trace, flow, share_ratio)
    reader = TRACE_PROPERTIES.get(name)
    if reader is None:
        return TraceVerdict(None, refusal(name) or "")
    try:
        return reader(trace, flow)
    except _BulkFlow as bulk:
        return TraceVerdict(None, f"flow {bulk} is a bulk transfer: it has no end to reach")
