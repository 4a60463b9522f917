"""The ``Vegas`` record each Vegas-family sender keeps, and its bookkeeping of send times.

One token of colour set :data:`VEGAS` on the sender's ``vegas`` place holds the window
law's state (samples, ``BaseRTT``, the round: :mod:`~tcpn.models.components.congestion.vegas`),
Modified Vegas's clock-skew hulls, the send times of the segments in flight that were sent
once (Karn's rule: :func:`vegas_sent`, :func:`sent_time`) and ns-2's fine-grained timer
(:mod:`~tcpn.models.components.congestion.ns2_vegas`). :class:`VegasAck` and
:class:`VegasTcb` hold only the fields of an ACK and of a control block that the helpers
read, for their doctests.

>>> v = vegas_acked(vegas_sent(vegas_sent(vegas_start(), 4, 0.5, True), 5, 0.6, True), 5)
>>> sent_once(v, 4), sent_once(v, 5), sent_time(v, 5)
(False, True, 0.6)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tcpn.petrinets import BOOL, CLOCK, INT, REAL, IntSet, ListSet, ProductSet, RecordSet
from tcpn.petrinets.net_functions import net_function

__all__ = ["FINE_RTO_START_S", "HULL", "SENT", "VEGAS", "Vegas", "VegasAck", "VegasTcb",
           "clock_sample", "drop_acked", "forget_segment", "sent_once", "sent_time", "vegas_acked",
           "vegas_sent", "vegas_start"]

HULL = ListSet(ProductSet(REAL, REAL), name="Hull")


#: ``(seq, time)`` of the segments in flight that were sent once (Karn: a retransmission
#: drops its entry), in sending order.
SENT = ListSet(ProductSet(INT, CLOCK), name="SendTimes")


VEGAS = RecordSet(
    "Vegas", n=IntSet(0), base_rtt=REAL, rtt=REAL, samples=IntSet(0), round_end=IntSet(0),
    grow=BOOL, ave_rtt=REAL, tf0=REAL, tb0=REAL, fwd=REAL, first_ts=CLOCK, sum_ts=REAL,
    skew=REAL, fhull=HULL, bhull=HULL, sent=SENT, cut_seq=IntSet(0),
    fine_srtt=REAL, fine_rttvar=REAL, fine_rto=REAL, worried=IntSet(0), resent=SENT,
)


Vegas: Any = VEGAS.record_type


#: ns-2's ``v_timeout_`` before the first sample (``VegasTcpAgent::reset``): nothing
#: expires on the fine-grained timer until it has one.
FINE_RTO_START_S = 1000.0


def vegas_start() -> Any:
    """The ``Vegas`` record of a connection that has no sample yet."""
    return Vegas(0, 0.0, 0.0, 0, 0, False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, (), (), (), 0,
                 -1.0, 0.0, FINE_RTO_START_S, 0, ())


def forget_segment(sent: Any, seq: int) -> Any:
    """``sent`` without segment ``seq``."""
    return tuple(e for e in sent if e[0] != seq)


def drop_acked(sent: Any, ack: int) -> Any:
    """``sent`` without the segments below ``ack``."""
    return tuple(e for e in sent if e[0] >= ack)


@net_function
def vegas_sent(v: Any, seq: int, now: float, fresh: bool) -> Any:
    """``v`` after segment ``seq`` left at ``now``: a first transmission is recorded, a
    retransmission forgets the segment (it gives no sample, Karn's rule).

    >>> v = vegas_sent(vegas_sent(vegas_start(), 0, 0.5, True), 1, 0.75, True)
    >>> vegas_sent(v, 0, 2.0, False).sent
    ((1, 0.75),)
    """
    if fresh:
        return v._replace(sent=(*v.sent, (seq, now)))
    return v._replace(sent=forget_segment(v.sent, seq))


@net_function
def vegas_acked(v: Any, ack: int) -> Any:
    """``v`` without the segments below ``ack`` (cumulatively acknowledged)."""
    return v._replace(sent=drop_acked(v.sent, ack), resent=drop_acked(v.resent, ack))


def sent_once(v: Any, seq: int) -> bool:
    """Whether segment ``seq`` is on record as sent once (not resent since, not acked).

    >>> sent_once(vegas_sent(vegas_start(), 3, 0.25, True), 3), sent_once(vegas_start(), 3)
    (True, False)
    """
    return any(s == seq for s, _ in v.sent)


def sent_time(v: Any, seq: int) -> float:
    """When segment ``seq`` was sent (its only transmission), or -1 if unknown.

    >>> sent_time(vegas_sent(vegas_start(), 3, 0.25, True), 3), sent_time(vegas_start(), 3)
    (0.25, -1.0)
    """
    for s, time in v.sent:
        if s == seq:
            return float(time)
    return -1.0


@dataclass(frozen=True)
class VegasAck:
    """An ACK with only the fields the Vegas helpers read (their doctests)."""

    echo: float
    ts: float
    retx: bool = False
    ack: int = 0


@dataclass(frozen=True)
class VegasTcb:
    """A control block with only the fields the Vegas helpers read (their doctests)."""

    cwnd: float
    ssthresh: float
    nxt: int
    una: int = 0
    dupacks: int = 0

    def _replace(self, **changes: Any) -> VegasTcb:
        return replace(self, **changes)


def clock_sample(now: float, sent: float) -> float:
    """The RTT sample ``now - sent`` on a clock of whole nanoseconds (ns-3's).

    The net's clock sums floating-point delays, so two round trips over the same path and
    queue differ in their last bits; adaptive Vegas's law compares the latest sample with
    its mean (a standing queue makes them equal), and those bits decided each round
    (study S4, w = 0.5: the flow alone held 46 segments in ns-3 and swung 45/46 in the
    net). On whole nanoseconds equal delays give equal samples, as in ns-3, whose
    ``tcpn::SampledVegas`` takes ``(Now - sent) * 1e-9`` from integer nanoseconds.

    >>> clock_sample(12.191728, 12.0) == clock_sample(50.191728, 50.0) == 191728000 * 1e-9
    True
    """
    return float(round((now - sent) * 1e9)) * 1e-9
