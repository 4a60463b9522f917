"""Delivery-rate samples as ns-3.44's ``TcpRateLinux`` takes them (draft-cheng-iccrg-
delivery-rate-estimation): the connection's delivered count, what each segment saw when it
was sent, and the sample an ACK makes of them.

A ``Rate`` record holds the connection's state (``delivered`` bytes, ``delivered_time``,
``first_sent``, the last rate recorded, ``rate_delivered`` over ``rate_interval``, and
``app_limited_until``, ns-3's ``m_appLimited``: 0, or the delivered count past which the
application-limited period ends),
the sample, which ns-3 keeps from one ACK to the next (``prior_delivered``,
``prior_time`` (0: none, the sample is invalid), ``send_elapsed``, ``ack_elapsed``,
``app_limited``; its outputs ``sample_delivered`` (-1: invalid), ``interval`` and
``delivery_bps``), and ``sent``: one ``(seq, delivered, delivered_time, first_sent,
app_limited, last_sent)`` per segment sent and not yet delivered, sorted by ``seq``.

* :func:`rate_app_limited` is ``CalculateAppLimited``, which ns-3's
  ``TcpSocketBase::Send`` calls after it queues each write of the application: with less
  than a segment left unsent, the window not full and every lost segment sent again, the
  connection is application-limited until ``delivered`` passes what is delivered and in
  flight now;
* :func:`rate_sent` is ``SkbSent``: a segment sent when nothing is in flight restarts
  ``first_sent`` and ``delivered_time``; the segment keeps the connection's state (its
  ``app_limited`` flag: whether a marking was on), a retransmission replaces what its
  first copy kept;
* :func:`rate_delivered` is ``SkbDelivered`` for each segment an ACK newly delivers
  (SACKed first, then cumulatively acknowledged, each in sequence order, as ns-3's
  scoreboard update and ``DiscardUpTo`` call it): the sample follows the segment with the
  largest ``delivered`` (strictly larger than the sample's, so of segments sent between
  the same two ACKs the first one);
* :func:`rate_sample` is ``GenerateSample``: the marking ends once ``delivered`` passes
  it; ``interval = max(send_elapsed, ack_elapsed)``, invalid below the minimum RTT; the
  rate is recorded from a sample that is not application-limited, or from one that is if
  it is not below the rate last recorded (else the sample keeps that rate).

Read from ns-3.44's ``src/internet/model/tcp-rate-ops.cc`` (``TcpRateLinux``) and
``tcp-socket-base.cc`` (``Send``, ``SendDataPacket``, ``ReceivedAck``). ns-3 tests the
unsent data after queueing the write (Linux's ``tcp_rate_check_app_limited`` runs before
``tcp_sendmsg`` queues it): an application that writes whole segments, as tcpn's do in
both lenses, always leaves at least one unsent, so no write marks the connection (see
docs/variants.md). Not modelled: SACK reneging.

>>> r = rate_sent(rate_start(), 0, 1.0, True)
>>> r = rate_sample(rate_delivered(r, (0,), 1.05, 1000), 0.04)
>>> r.sample_delivered, round(r.interval, 3), r.delivery_bps
(1000, 0.05, 160000.0)
"""

from __future__ import annotations

from typing import Any

from tcpn.petrinets import BOOL, INT, REAL, IntSet, ListSet, ProductSet, RecordSet
from tcpn.petrinets.net_functions import net_function

__all__ = ["RATE", "newly_delivered", "rate_app_limited", "rate_delivered", "rate_sample",
           "rate_sent", "rate_start"]

SENT = ListSet(ProductSet(INT, INT, REAL, REAL, BOOL, REAL), name="RateSends")
RATE = RecordSet("Rate", delivered=IntSet(0), delivered_time=REAL, first_sent=REAL,
                 rate_delivered=IntSet(0), rate_interval=REAL, prior_delivered=IntSet(0),
                 prior_time=REAL, send_elapsed=REAL, ack_elapsed=REAL, app_limited=BOOL,
                 sample_delivered=INT, interval=REAL, delivery_bps=REAL, sent=SENT,
                 app_limited_until=IntSet(0))
Rate: Any = RATE.record_type


def rate_start() -> Any:
    """The state of a new connection: nothing delivered, no sample."""
    return Rate(0, 0.0, 0.0, 0, 0.0, 0, 0.0, 0.0, 0.0, False, -1, 0.0, 0.0, (), 0)


@net_function
def rate_app_limited(r: Any, unsent_bytes: int, in_flight_bytes: int, cwnd_bytes: int,
                     mss: int, lost_unsent: bool) -> Any:
    """``CalculateAppLimited`` after the application queued a write: ``unsent_bytes`` are
    queued and not yet sent, ``lost_unsent`` whether a segment deemed lost still awaits
    its retransmission (ns-3: more lost than retransmitted). The connection is marked
    until ``delivered`` passes what is delivered and in flight now (at least 1).

    >>> r = rate_start()._replace(delivered=50_000)
    >>> rate_app_limited(r, 500, 8000, 20_000, 1000, False).app_limited_until
    58000
    >>> [rate_app_limited(r, *args).app_limited_until for args in (
    ...     (1000, 8000, 20_000, 1000, False), (500, 20_000, 20_000, 1000, False),
    ...     (500, 8000, 20_000, 1000, True))]
    [0, 0, 0]
    """
    if unsent_bytes < mss and in_flight_bytes < cwnd_bytes and not lost_unsent:
        return r._replace(app_limited_until=max(r.delivered + in_flight_bytes, 1))
    return r


@net_function
def rate_sent(r: Any, seq: int, now: float, idle: bool) -> Any:
    """``SkbSent``: segment ``seq`` leaves at ``now``; ``idle``: nothing was in flight.

    >>> r = rate_sent(rate_start(), 3, 2.0, True)
    >>> r.sent, r.first_sent
    (((3, 0, 2.0, 2.0, False, 2.0),), 2.0)
    >>> rate_sent(r, 3, 2.5, False).sent
    ((3, 0, 2.0, 2.0, False, 2.5),)
    """
    if idle:
        r = r._replace(first_sent=now, delivered_time=now)
    record = (seq, r.delivered, r.delivered_time, r.first_sent, r.app_limited_until != 0, now)
    kept = tuple(s for s in r.sent if s[0] != seq)
    below = tuple(s for s in kept if s[0] < seq)
    return r._replace(sent=(*below, record, *kept[len(below):]))


@net_function
def newly_delivered(sacked: tuple[tuple[int, int], ...], merged: tuple[tuple[int, int], ...],
                    una: int, ack: int) -> tuple[int, ...]:
    """The segments an ACK delivers, in ns-3's order: those the scoreboard ``merged``
    holds above ``ack`` and ``sacked`` (before the ACK) did not, then those of ``[una,
    ack)`` that ``sacked`` did not hold.

    >>> newly_delivered(((5, 7),), ((5, 9),), 2, 4)
    (7, 8, 2, 3)
    >>> newly_delivered(((3, 5),), (), 2, 6)
    (2, 5)
    """
    def held(runs: tuple[tuple[int, int], ...], seq: int) -> bool:
        return any(start <= seq < end for start, end in runs)

    fresh = tuple(seq for start, end in merged for seq in range(max(start, ack), end)
                  if not held(sacked, seq))
    return (*fresh, *(seq for seq in range(una, ack) if not held(sacked, seq)))


@net_function
def rate_delivered(r: Any, seqs: tuple[int, ...], now: float, mss: int) -> Any:
    """``SkbDelivered`` for each of ``seqs`` (``mss`` bytes each) at ``now``; a segment
    with no send record (delivered before) counts nothing.

    >>> r = rate_sent(rate_sent(rate_start(), 0, 1.0, True), 1, 1.01, False)
    >>> r = rate_delivered(r, (0, 1), 1.05, 1000)
    >>> r.delivered, r.prior_delivered, r.prior_time, round(r.send_elapsed, 3), r.sent
    (2000, 0, 1.0, 0.01, ())

    (The second segment takes the sample too: ns-3 tests ``prior_delivered == 0`` before
    its strict ``>``, so while nothing was delivered before the sample, the last one of
    the ACK wins.)
    """
    wanted = set(seqs)
    for seq in seqs:
        record = next((s for s in r.sent if s[0] == seq), None)
        if record is None:
            continue
        _, delivered, delivered_time, first_sent, app_limited, last_sent = record
        r = r._replace(delivered=r.delivered + mss, delivered_time=now)
        if r.prior_delivered == 0 or delivered > r.prior_delivered:
            r = r._replace(ack_elapsed=now - delivered_time, prior_delivered=delivered,
                           prior_time=delivered_time, app_limited=app_limited,
                           send_elapsed=last_sent - first_sent, first_sent=last_sent)
    return r._replace(sent=tuple(s for s in r.sent if s[0] not in wanted))


@net_function
def rate_sample(r: Any, min_rtt_s: float) -> Any:
    """``GenerateSample`` after an ACK (and :func:`rate_delivered`); ``min_rtt_s`` is the
    connection's smallest RTT sample (-1: none). The application-limited marking ends
    once ``delivered`` passes it. The rate is recorded (``delivery_bps``, kept otherwise)
    only from a valid sample, and from an application-limited one only if it is not
    below the rate last recorded (``rate_delivered`` over ``rate_interval``).

    >>> r = rate_start()._replace(delivered=3000, prior_delivered=1000, prior_time=1.0,
    ...                           send_elapsed=0.01, ack_elapsed=0.04)
    >>> s = rate_sample(r, 0.03)
    >>> s.sample_delivered, s.interval, s.delivery_bps
    (2000, 0.04, 400000.0)
    >>> rate_sample(r, 0.05)[10:13]
    (2000, 0.0, 0.0)
    """
    if r.app_limited_until and r.delivered > r.app_limited_until:
        r = r._replace(app_limited_until=0)
    if r.prior_time == 0.0:
        return r._replace(sample_delivered=-1, interval=0.0)
    interval = max(r.send_elapsed, r.ack_elapsed)
    delivered = r.delivered - r.prior_delivered
    if interval < min_rtt_s:
        return r._replace(sample_delivered=delivered, interval=0.0, prior_time=0.0)
    r = r._replace(sample_delivered=delivered, interval=interval)
    if r.app_limited and delivered * r.rate_interval < r.rate_delivered * interval:
        return r
    return r._replace(rate_delivered=delivered, rate_interval=interval,
                      delivery_bps=_bps(delivered, interval) if interval > 0
                      else r.delivery_bps)


def _bps(delivered_bytes: int, interval_s: float) -> float:
    """ns-3's ``DataRate(bytes * 8 / interval)``: the interval in whole nanoseconds (ns-3's
    ``Time``), the rate truncated to whole bit/s."""
    return float(int(delivered_bytes * 8e9 / round(interval_s * 1e9)))
