"""Message-sequence charts of a lens's run: one flow's packet events, on the model's lanes.

:func:`trace_msc_events` turns the ``flow_events`` rows of one flow
(:mod:`tcpn.models.traces`) into the :class:`~tcpn.reports.checks.msc.MscEvent` list that
:func:`~tcpn.reports.checks.msc.msc_text` and :func:`~tcpn.reports.checks.msc.msc_svg` draw,
so a replayed run's chart reads like the counterexample's: ``send``/``retransmit`` go
``sender -> queue``, ``recv`` ``link -> receiver``, ``ack`` ``link -> sender``,
``drop``/``ack_drop`` are losses on the ``link`` lane (with the direction the trace names),
``timeout`` and ``connect_fail`` marks on the sender. Segment and ACK numbers are byte
offsets divided by the segment size (``seg k`` is bytes ``k*S..``; ``ack k`` expects
segment ``k``), ``cwnd``/``ssthresh`` in segments from ``flow_series``. A trace has no
per-hop rows: the ``queue -> link`` hop of the model's chart has no counterpart.

>>> from tcpn.models.scenario import dumbbell
>>> from tcpn.models.traces import TraceWriter
>>> s = dumbbell(pairs=1, horizon_s=1.0)
>>> w = TraceWriter(s, s.concrete_flows(1))
>>> w.flow_event(0.0, "f0", "send", seq=536, bytes=536)
>>> w.flow_event(0.1, "f0", "drop", seq=536, bytes=536, where="R1->R2")
>>> [(e.source, e.target, e.label) for e in trace_msc_events(w.close(), "f0")]
[('sender', 'queue', 'seg 1'), ('link', 'link', 'seg 1 lost (R1->R2)')]
"""

from __future__ import annotations

import bisect

from tcpn.models.traces import Trace
from tcpn.reports.checks.msc import MscEvent

__all__ = ["trace_msc_events"]

#: How each flow event is drawn: (kind, source, target, label format).
_DRAWN = {"send": ("segment", "sender", "queue", "seg {k}"),
          "retransmit": ("segment", "sender", "queue", "seg {k} retx"),
          "recv": ("segment", "link", "receiver", "seg {k}"),
          "ack": ("ack", "link", "sender", "ack {k}"),
          "drop": ("loss", "link", "link", "seg {k} lost ({where})"),
          "ack_drop": ("loss", "link", "link", "ack {k} lost ({where})"),
          "timeout": ("timer", "sender", "sender", "RTO expires"),
          "connect_fail": ("timer", "sender", "sender", "gives up")}


def _window(trace: Trace, flow: str, var: str) -> tuple[list[float], list[float]]:
    rows = trace.series(var, flow=flow)
    size = trace.segment_size_bytes(flow)
    return rows.time_s.tolist(), [v / size for v in rows.value]


def _at(series: tuple[list[float], list[float]], time_s: float) -> float | None:
    times, values = series
    k = bisect.bisect_right(times, time_s) - 1
    return values[k] if k >= 0 else None


def trace_msc_events(trace: Trace, flow: str, limit: int = 400) -> list[MscEvent]:
    """The chart's events for ``flow`` of ``trace``, in time order (the first ``limit``)."""
    size = trace.segment_size_bytes(flow)
    cwnd, ssthresh = (_window(trace, flow, v) for v in ("cwnd_bytes", "ssthresh_bytes"))
    events: list[MscEvent] = []
    rows = trace.events(flow=flow, event=tuple(_DRAWN))
    for time_s, event, seq, where in zip(rows.time_s, rows.event, rows.seq, rows["where"],
                                         strict=True):
        kind, source, target, text = _DRAWN[str(event)]
        label = text.format(k=max(int(seq), 0) // size, where=where or "?")
        window = (_at(cwnd, time_s), _at(ssthresh, time_s))
        if "sender" not in (source, target) or None in window:
            window = (None, None)
        events.append(MscEvent(float(time_s), kind, source, target, label, *window))
        if len(events) >= limit:
            break
    return events
