"""802.11 DCF contention between the two stations of a wireless hop: each station's backoff
counter, frozen while the medium is busy, and collisions when two counters end in the same
slot.

The rules (IEEE Std 802.11-2016 §10.3; the same in ns-3's ``ChannelAccessManager`` and
``Txop`` and ns-2's ``Mac802_11``):

- A station with a frame to send counts its backoff down one slot per idle slot, starting
  when the medium has been idle for DIFS after a frame it decoded, or EIFS after one it
  could not decode (§10.3.2.3.7, §10.3.4.3); a busy medium freezes the counter (the slot
  under way does not count), and counting resumes after the next DIFS/EIFS. Its frame goes
  when the counter reaches zero.
- A frame that arrives while the counter is zero and the medium has been idle for DIFS
  goes at once; one that arrives while the counter is zero and the medium is busy draws a
  backoff first (§10.3.4.2).
- When two counters reach zero in the same slot both frames go and collide: neither is
  decoded, no MAC ACK comes, each sender's ACK timeout expires (SIFS + slot + PLCP,
  §10.3.2.9) and each doubles its CW and retries, up to the retry limit, then drops the
  frame and resets CW (§10.3.4.4). Without MAC ACKs a collided frame is lost.
- After an ACK timeout the sender's backoff starts at once (the medium has been idle for
  more than DIFS since its frame), or DIFS after the end of a longer frame still on the
  air (a collision); a station whose frame ended first senses the other's as busy, not as
  a corrupted reception (its receiver was transmitting), so it waits DIFS, not EIFS.
- After every exchange the sender draws a backoff from CWmin ("post-backoff") and counts
  it down even with nothing to send.

ns-2 and ns-3 agree on these rules; they differ in what is not modelled here: ns-2's
``Mac802_11::send`` defers DIFS + a backoff drawn from ``0..CW - 1`` even when a frame
finds the medium idle, ns-3 (as here) sends at once; ns-3's EDCA (a QoS station: the ns3
lens's ACK-less link) counts one decrement more when a busy medium freezes a counter
(``ChannelAccessManager::UpdateBackoff``, "EDCA behaves slightly different to DCA"),
where the DCF counts here, as ns-2 and the standard's DCF do, only the idle slots. Both
stations see the medium the same way (the hop's propagation delay, at most 1 us in ns-3,
is below a slot and is not counted), so a collision is exactly two counters ending in the
same slot.

The state of the medium is one record (:data:`AIR`): an ``epoch`` counting transmissions
started from an idle medium, ``senders`` and ``on_air`` (bit 1 for station 0, 2 for
station 1: who transmits in the current busy period, and who is still on the air), the
busy period's ``start_s``, the end of its longest frame ``air_end_s``, when the medium
becomes idle ``busy_end_s`` (after the MAC ACK), and per station ``r`` (the time from
which its counter runs if the medium stays idle) and ``b`` (the counter at that time).
A station's frame waits on a token due when its counter would reach zero; the token
carries the epoch it was computed in, and one that finds a newer epoch (another station
went first) is recomputed from the record once the medium is idle again. These functions
are the net's code actions' rules, by hand-checkable steps (see the examples).
"""

from __future__ import annotations

from typing import Any

from tcpn.petrinets import INT, REAL, RecordSet

__all__ = ["AIR", "air_start", "backoff_slots", "dcf_access", "dcf_arm", "dcf_due",
           "dcf_finish", "dcf_goes", "frame_through", "frozen_slots"]

AIR = RecordSet("Air", epoch=INT, senders=INT, on_air=INT, start_s=REAL, air_end_s=REAL,
                busy_end_s=REAL, r0=REAL, b0=INT, r1=REAL, b1=INT)
#: floating-point slack when comparing instants built from sums of slot times
EPSILON_S = 1e-9


def air_start() -> Any:
    """The medium before the first frame: idle, both counters at zero from time 0."""
    return AIR.make(epoch=0, senders=0, on_air=0, start_s=0.0, air_end_s=0.0,
                    busy_end_s=0.0, r0=0.0, b0=0, r1=0.0, b1=0)


def backoff_slots(u: float, retry: int, cw_min: int, cw_max: int) -> int:
    """The backoff (slots) a uniform draw ``u`` gives before attempt ``retry + 1``: uniform
    on ``0..CW``, CW = ``cw_min`` doubled (``2 CW + 1``) per retry, at most ``cw_max``.

    >>> backoff_slots(0.5, 0, 31, 1023), backoff_slots(0.999, 1, 31, 1023)
    (16, 63)
    >>> backoff_slots(0.9999, 9, 31, 1023), backoff_slots(0.0, 3, 31, 1023)
    (1023, 0)
    """
    cw = cw_min
    for _ in range(retry):
        cw = min(2 * cw + 1, cw_max)
    return min(int(u * (cw + 1)), cw)


def _bit(station: int) -> int:
    return 1 if station == 0 else 2


def _counter(m: Any, station: int) -> tuple[float, int]:
    return (m.r0, m.b0) if station == 0 else (m.r1, m.b1)


def _set_counter(m: Any, station: int, r: float, b: int) -> Any:
    return m._replace(r0=r, b0=b) if station == 0 else m._replace(r1=r, b1=b)


def frozen_slots(b: int, r: float, now: float, slot_s: float) -> int:
    """The counter left at ``now`` of one that was ``b`` at ``r`` and counted one per slot
    since (a slot under way does not count).

    >>> frozen_slots(10, 0.0, 95e-6, 20e-6), frozen_slots(3, 0.0, 1.0, 20e-6)
    (6, 0)
    >>> frozen_slots(5, 1.0, 0.5, 20e-6)  # counting has not started: DIFS not over
    5
    """
    if now <= r or slot_s <= 0.0:
        return b
    return max(0, b - int((now - r) / slot_s + EPSILON_S))  # positive: int is floor


def dcf_due(m: Any, station: int, now: float, slot_s: float) -> float:
    """When ``station``'s counter reaches zero if the medium stays idle: ``r + b`` slots,
    or ``now`` if that is past (its frame goes at once).

    >>> m = air_start()._replace(r1=1e-3, b1=4)
    >>> round(dcf_due(m, 1, 0.9e-3, 20e-6) * 1e6, 3), dcf_due(m, 0, 0.5, 20e-6)
    (1080.0, 0.5)
    """
    r = m.r0 if station == 0 else m.r1
    b = m.b0 if station == 0 else m.b1
    return max(now, r + slot_s * b)


def dcf_arm(m: Any, station: int, now: float, u: float, cw_min: int, cw_max: int) -> Any:
    """A frame reaches the head of ``station``'s queue at ``now`` (the medium idle: no frame
    on the air): the record, in which :func:`dcf_due` gives when the frame goes. A zero
    counter while the medium is still busy (a MAC ACK on the air) draws a backoff from
    CWmin with ``u``; a zero counter after DIFS goes at once.

    The medium busy until 950 us (a MAC ACK), both counters running from 1000 us (DIFS
    after it), station 1's at 4, station 0's at 0:

    >>> m = air_start()._replace(r0=1e-3, r1=1e-3, b1=4, busy_end_s=0.95e-3)
    >>> def due(station, now):
    ...     return round(dcf_due(dcf_arm(m, station, now, 0.5, 31, 1023), station, now,
    ...                          20e-6) * 1e6, 3)
    >>> due(1, 0.9e-3), due(0, 0.9e-3), due(0, 0.96e-3), due(0, 2e-3)
    (1080.0, 1320.0, 1000.0, 2000.0)

    (1000 + 4 slots; 16 slots drawn, the ACK on the air; idle: after DIFS; idle for long:
    at once.)
    """
    r, b = _counter(m, station)
    if b == 0 and now < m.busy_end_s:
        return _set_counter(m, station, r, backoff_slots(u, 0, cw_min, cw_max))
    return m


def dcf_goes(m: Any, station: int, epoch: int) -> bool:
    """Whether ``station``'s frame, due now by a counter computed in ``epoch``, goes: no
    frame went since, or one went in this very slot (the net's guard lets ``access``
    fire with a frame on the air only then); otherwise :func:`dcf_due` gives its frozen
    counter's new end."""
    return m.on_air != 0 or epoch == m.epoch


def dcf_access(m: Any, station: int, epoch: int, now: float, air_s: float,
               slot_s: float) -> Any:
    """``station``'s counter was due to reach zero at ``now`` (computed in ``epoch``): the
    record after it. If no frame went since it starts a busy period and freezes the other
    station's counter; if the other's went in this very slot it joins (a collision);
    otherwise (another frame went first and is over) nothing changes (:func:`dcf_goes`).

    Station 0 due at 300 us, station 1's counter 20 at 0: 0 starts, 1 is frozen at 20 - 15
    = 5; had 1 been due at 300 us too, it joins and both are senders:

    >>> m = dcf_access(air_start()._replace(b1=20), 0, 0, 300e-6, 1e-3, 20e-6)
    >>> m.epoch, m.senders, m.b1, round(m.air_end_s * 1e6, 3)
    (1, 1, 5, 1300.0)
    >>> m2 = dcf_access(m, 1, 0, 300e-6, 0.2e-3, 20e-6)
    >>> dcf_goes(m, 1, 0), m2.epoch, m2.senders, m2.on_air, round(m2.air_end_s * 1e6, 3)
    (True, 1, 3, 3, 1300.0)
    """
    mine = _bit(station)
    if m.on_air == 0 and epoch == m.epoch:
        other = 1 - station
        r, b = _counter(m, other)
        m2 = _set_counter(m, other, now, frozen_slots(b, r, now, slot_s))
        m3 = _set_counter(m2, station, now, 0)
        return m3._replace(epoch=m.epoch + 1, senders=mine, on_air=mine, start_s=now,
                           air_end_s=now + air_s, busy_end_s=now + air_s)
    if m.on_air != 0:
        m2 = _set_counter(m, station, now, 0)
        return m2._replace(senders=m.senders + mine, on_air=m.on_air + mine,
                           air_end_s=max(m.air_end_s, now + air_s),
                           busy_end_s=max(m.busy_end_s, now + air_s))
    return m


def frame_through(m: Any, station: int, ok_frame: bool) -> bool:
    """Whether ``station``'s frame, ending now, got through: no bit error (``ok_frame``)
    and no other frame in its busy period."""
    return ok_frame and m.senders == _bit(station)


def dcf_finish(m: Any, station: int, retry: int, ok_frame: bool, done: bool, acked: bool,
               now: float, u: float, ack_s: float, timeout_s: float, difs_s: float,
               eifs_s: float, cw_min: int, cw_max: int) -> Any:
    """``station``'s frame (attempt ``retry + 1``, ``ok_frame`` if no bit error) ends at
    ``now``: the record after it. Unless ``done`` (delivered, given up, or without MAC
    ACKs) the frame is retried when its counter, CW doubled ``retry + 1`` times and drawn
    with ``u``, reaches zero (:func:`dcf_due`); otherwise ``u`` draws the post-backoff
    from CWmin. The other station, if it was not sending, resumes counting DIFS after
    the MAC ACK or the frame, or EIFS after a frame it could not decode.

    Hand-checked (802.11b, slot 20 us): station 0's frame ends at 1 ms, delivered; MAC ACK
    314 us; post-backoff 16 slots (u 0.5): its counter runs from 1000 + 314 + 50 = 1364
    us; the other's from the same instant. Had the frame been corrupted: ACK timeout 222
    us, retry with CW 63 (u 0.5: 32 slots) due 1000 + 222 + 640 = 1862 us; the other
    resumes after EIFS, 1000 + 364 = 1364 us.

    >>> m = dcf_access(air_start(), 0, 0, 0.0, 1e-3, 20e-6)
    >>> args = (1e-3, 0.5, 314e-6, 222e-6, 50e-6, 364e-6, 31, 1023)
    >>> m2 = dcf_finish(m, 0, 0, True, True, True, *args)
    >>> frame_through(m, 0, True), round(m2.r0 * 1e6, 3), m2.b0, round(m2.r1 * 1e6, 3)
    (True, 1364.0, 16, 1364.0)
    >>> m3 = dcf_finish(m, 0, 0, False, False, True, *args)
    >>> round(dcf_due(m3, 0, 1e-3, 20e-6) * 1e6, 3), round(m3.r1 * 1e6, 3), m3.on_air
    (1862.0, 1364.0, 0)
    """
    mine = _bit(station)
    collided = m.senders != mine
    delivered = ok_frame and not collided
    end = now + ack_s if delivered and acked else now
    air_end = max(m.air_end_s, now)
    if delivered and acked:
        r = end + difs_s
    elif acked:
        r = max(now + timeout_s, air_end + difs_s)
    else:
        r = air_end + difs_s
    b = backoff_slots(u, 0 if done else retry + 1, cw_min, cw_max)
    m2 = _set_counter(m, station, r, b)._replace(on_air=m.on_air - mine,
                                                 busy_end_s=max(m.busy_end_s, end))
    if collided:
        return m2
    _, left = _counter(m, 1 - station)
    return _set_counter(m2, 1 - station, end + difs_s if ok_frame else now + eifs_s, left)
