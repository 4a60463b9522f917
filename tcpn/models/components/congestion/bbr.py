"""BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00) as a sub-net, as ns-3.44's
``TcpBbr`` runs it: a model of the path (the bottleneck bandwidth, the smallest RTT)
drives a pacing rate and a window, not the losses.

The sender is the SACK NewReno sender (its recovery, RTO, applications) with three more
places: ``rate`` (the delivery-rate samples, :mod:`tcpn.models.components.delivery_rate`),
``bbr`` (a ``Bbr`` record, bytes and bit/s as ns-3 counts them) and ``pace`` (a timed
token: the pacing timer). On every ACK (ns-3's ``CongControl``, called for duplicate ACKs
too) :func:`bbr_ack` takes the delivery-rate sample and

* **the model**: the bandwidth filter (:func:`max_filter`, ns-3's windowed filter over
  ``bw_window_rounds`` round trips, three samples, Kathleen Nichols' algorithm) takes the
  sample's rate at each new round (a round ends when a segment sent after its start is
  delivered); the smallest RTT (``min_rtt``) is the last RTT when it is not larger, or
  when ``rtt_window_s`` has passed since it was taken. The RTT is ns-3's ``m_lastRtt``:
  the ACK's own RTT sample (``TcpSocketBase::EstimateRtt``; none after a timeout until an
  ACK passes what was sent before it, as ns-3 empties its RTT history then), not the
  smoothed RTT, whose smallest value is the socket's ``m_minRtt``, the rate samples'
  floor (the net lens's samples are exact, ns-3's with timestamps count whole
  milliseconds);
* **the state machine**: STARTUP (pacing and window gain ``high_gain``) until the
  bandwidth grew less than 25 % in three rounds; DRAIN (pacing gain ``1 / high_gain``)
  until the flight is at most one BDP (ns-3 then sets ``ssthresh`` to it); PROBE_BW,
  window gain 2 and the pacing gain cycling through 1.25, 0.75, 1 x 6, one phase per
  ``min_rtt`` (1.25 also until the flight reaches 1.25 BDP, 0.75 ends early at 1 BDP),
  starting at a random phase other than 0.75 (ns-3 draws ``7 - trunc(U[0, 6))`` then
  advances); PROBE_RTT when ``min_rtt`` expired: the window at most 4 segments until
  ``probe_rtt_duration_s`` and one round have passed with the flight that low, then the
  window before it is restored and PROBE_BW (STARTUP if the pipe never filled) resumes;
* **the controls**: the pacing rate ``pacing_gain x bw x 0.99`` (ns-3's margin; before the
  pipe is filled it only grows), the window ``cwnd_gain x BDP + 3 segments`` (+2 in the
  1.25 phase) plus ns-3's ACK-aggregation allowance (:func:`aggregation_state`), reached
  by adding what each ACK delivers (growing freely while below it before the pipe is
  filled), at least 4 segments.

Losses (ns-3's ``CongestionStateSet`` and ``CwndEvent``): the fast retransmit saves the
window and sets it to the flight plus what the ACK delivered (packet conservation until
the next round); ``ssthresh`` is not changed by a loss; the ACK that ends recovery restores
the saved window if larger; a timeout saves the window and starts a round (the base sender
sets the window to one segment). BBR's sender keeps its scoreboard across a timeout
whatever ``tcp.sack_after_timeout`` says (it registers with ``keeps_sack_after_timeout``,
so the ns3 lens runs ns-3's own rule too), and goes back sending only the segments it does
not hold, its flight the segments sent again (:func:`in_flight_segments`: ns-3 counts the
rest lost; these rules replace the base sender's ``sack_keep`` ones, which it is built
without). Forgetting it would not run ns-3's BBR: its delivery-rate samples count a
segment once, when it is first SACKed or acknowledged, but ns-3's rate sampler
(``TcpRateLinux``, which ``TcpBbr`` reads through ``GenerateSample`` in
``TcpSocketBase::ReceivedAck``) counts again each held segment a go-back-N resends (a
transmission restarts its delivery), and the ns3 lens's ``ForgetSack`` credit reaches
only ``ProcessAck``, not that sample. In the net lens the base sender's go-back-N sent the
held segments again, whose duplicate ACKs started a fast retransmit (one flow through a
20-packet buffer: 5.4 Mbit/s in 4 s, against ns-3's 6.9 and 6.7 with this rule). ns-3's
``TcpBbr`` reads a zero loss count from its socket (``bytesLoss``): no rule here acts on
lost bytes either.

Pacing (``pace``): ``send`` and ``sack_retransmit`` (ns-3's ``SendPendingData``) take the
token and put it back ``mss x 8 / pacing rate`` later, once the highest segment sent is
past the initial window (ns-3's ``PaceInitialWindow`` false); the fast retransmit is not
paced (ns-3 sends it directly).

Application-limited flows (``bytes``, ``app_rate_bps``, ``stop_s``): the delivery-rate
samples carry ns-3's ``TcpRateLinux`` marking
(:mod:`~tcpn.models.components.delivery_rate`: ``CalculateAppLimited`` at the paced
application's write, which then waits for the connection to open), and
:func:`bbr_model` takes an application-limited sample into the filter only if it is not
below the estimate and skips it in the full-pipe check. ns-3 checks after queueing the
write and tcpn's applications write whole segments, so no sample is marked in either
lens (docs/variants.md). What acts is ``TcpBbr``'s own mark: ``HandleProbeRTT`` sets it
(ns-3 never clears it), and from then on a send with nothing in flight is an idle restart
(:func:`bbr_tx_start`, ns-3's ``CA_EVENT_TX_START``).

Read from ns-3.44's ``src/internet/model/tcp-bbr.cc`` (a public copy whose members match
the 3.44 header in the wheel), ``tcp-rate-ops.cc`` and ``tcp-socket-base.cc`` (``Send``,
``SendPendingData``, ``SendDataPacket``, ``ReceivedAck``, ``EstimateRtt``): BBR is
initialised when the connection opens, with the handshake's RTT as ``min_rtt`` and the
initial pacing rate ``high_gain x cwnd / RTT`` (RTT in whole ms); ``CongControl`` runs
after the ACK is processed, with the flight before it as ``prior_in_flight``; with a
congestion control of its own (``HasCongControl``) the socket's recovery does not set
the window on entry, during or at the exit of recovery; pacing starts once
``highTxMark`` passes the initial window and the timer is set after each paced send; the
rate sample is kept from one ACK to the next.

>>> from tcpn.models.components.sender import SenderConfig
>>> net = bbr_sender_net(SenderConfig(flow=0, dst=1, variant="sack"))
>>> sorted(p for p in net.places if p in ("bbr", "rate", "pace"))
['bbr', 'pace', 'rate']
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import Field

from tcpn.errors import InputError
from tcpn.models.components.delivery_rate import (
    RATE,
    newly_delivered,
    rate_app_limited,
    rate_delivered,
    rate_sample,
    rate_sent,
    rate_start,
)
from tcpn.models.components.extend import add_action, or_guard, track, wrap_output
from tcpn.models.components.packets import merge_sack
from tcpn.models.components.sender import (
    ACK_TRANSITIONS,
    SenderConfig,
    karn_sample,
    retransmissions,
    sack_pipe,
    sender_net,
)
from tcpn.models.schema_base import VariantParams
from tcpn.models.variant_registry import FluidLaw, Ns3Congestion, register_variant
from tcpn.petrinets import (
    BOOL,
    INT,
    REAL,
    UNIT,
    IntSet,
    ListSet,
    PetriNet,
    Place,
    ProductSet,
    RecordSet,
    Token,
)
from tcpn.petrinets.net_functions import net_function

__all__ = ["BBR", "DRAIN", "GAIN_CYCLE", "PHASE_SUFFIX", "PROBE_BW", "PROBE_RTT", "STARTUP",
           "BbrParams", "aggregation_state", "bbr_ack", "bbr_choices", "bbr_controls",
           "bbr_loss", "bbr_model", "bbr_open", "bbr_recovery", "bbr_recovery_exit",
           "bbr_sender_net", "bbr_start", "bbr_tx_start", "in_flight_segments",
           "in_flight_target", "max_filter", "pace_delay_s",
           "unsacked_from"]

STARTUP, DRAIN, PROBE_BW, PROBE_RTT = 0, 1, 2, 3
#: PROBE_BW's pacing gains, one phase per min RTT (ns-3's ``PACING_GAIN_CYCLE``).
GAIN_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
#: ns-3's ``m_pacingMargin``: the pacing rate is 1 % below the estimate.
PACING_MARGIN = 0.01
#: ns-3's ``MaxPacingRate`` default (4 Gbit/s).
MAX_PACING_BPS = 4e9
#: ns-3's ``m_minPipeCwnd``, in segments.
MIN_PIPE_SEGMENTS = 4
#: ns-3's ACK-aggregation defaults: ``ExtraAckedRttWindowLength`` (rounds) and
#: ``AckEpochAckedResetThresh`` (bytes), gain 1.
EXTRA_ACKED_ROUNDS = 5
ACK_EPOCH_RESET_BYTES = 1 << 12

BW_SAMPLES = ListSet(ProductSet(REAL, INT), name="BwSamples")
BBR = RecordSet("Bbr", mode=IntSet(0), pacing_gain=REAL, cwnd_gain=REAL, bw=BW_SAMPLES,
                min_rtt=REAL, min_rtt_stamp=REAL, expired=BOOL, last_rtt=REAL,
                socket_min_rtt=REAL, rounds=IntSet(0), next_round=IntSet(0),
                round_start=BOOL, full_bw=REAL, full_count=IntSet(0), filled=BOOL,
                cycle=IntSet(0), cycle_stamp=REAL, prior_cwnd=IntSet(0), probe_done=REAL,
                probe_round_done=BOOL, conservation=BOOL, pacing_bps=REAL, cwnd=IntSet(0),
                ssthresh=REAL, extra=ProductSet(INT, INT), extra_idx=IntSet(0),
                extra_rounds=IntSet(0), epoch_time=REAL, epoch_acked=IntSet(0),
                app_limited=IntSet(0), idle_restart=BOOL)
Bbr: Any = BBR.record_type


# --------------------------------------------------------------------------- the model


@net_function
def max_filter(samples: tuple[tuple[float, int], ...], value: float, now: int,
               window: int) -> tuple[tuple[float, int], ...]:
    """ns-3's ``WindowedFilter`` (max) after ``value`` at round ``now``: the best, second
    and third best samples of the last ``window`` rounds (Kathleen Nichols' algorithm).

    A larger value, or the whole window gone, resets all three; a value between the
    samples replaces the ones it beats; the best expires after ``window`` rounds; the
    second and third are refreshed after a quarter and a half window:

    >>> f = max_filter((), 10.0, 0, 10)
    >>> f
    ((10.0, 0), (10.0, 0), (10.0, 0))
    >>> f = max_filter(f, 8.0, 3, 10)
    >>> f
    ((10.0, 0), (8.0, 3), (8.0, 3))
    >>> f = max_filter(f, 7.0, 9, 10)
    >>> f
    ((10.0, 0), (8.0, 3), (7.0, 9))
    >>> max_filter(f, 6.0, 11, 10)
    ((8.0, 3), (7.0, 9), (6.0, 11))
    """
    fresh = ((value, now),) * 3
    if not samples or samples[0][0] == 0.0 or value >= samples[0][0] \
            or now - samples[2][1] > window:
        return fresh
    best, second, third = samples
    if value >= second[0]:
        second = third = (value, now)
    elif value >= third[0]:
        third = (value, now)
    if now - best[1] > window:
        best, second, third = second, third, (value, now)
        if now - best[1] > window:
            best, second = second, third
        return best, second, third
    if second[0] == best[0] and now - second[1] > window >> 2:
        return best, (value, now), (value, now)
    if third[0] == second[0] and now - third[1] > window >> 1:
        return best, second, (value, now)
    return best, second, third


def _best_bps(b: Any) -> float:
    return b.bw[0][0] if b.bw else 0.0


@net_function
def in_flight_target(b: Any, gain: float, mss: int, init_cwnd: int) -> int:
    """ns-3's ``InFlight(gain)`` in bytes: ``gain x BDP`` plus three send quanta (one
    segment each), two segments more in PROBE_BW's 1.25 phase; the initial window before
    any RTT.

    A 10 Mbit/s, 40 ms path (BDP 50,000 B) with 1000-byte segments:

    >>> b = bbr_start(10, 1000, 1.0)._replace(bw=((1e7, 1),) * 3, min_rtt=0.04)
    >>> in_flight_target(b, 2.0, 1000, 10), in_flight_target(b._replace(mode=PROBE_BW), 1.25,
    ...                                                      1000, 10)
    (103000, 67500)
    >>> in_flight_target(bbr_start(10, 1000, 1.0), 2.0, 1000, 10)
    10000
    """
    if b.min_rtt < 0:
        return init_cwnd * mss
    bdp = _best_bps(b) * b.min_rtt / 8.0
    extra = 2 * mss if b.mode == PROBE_BW and b.cycle == 0 else 0
    return int(gain * bdp + 3 * mss + extra)


def _enter_probe_bw(b: Any, now: float, u: float) -> Any:
    """PROBE_BW at a random phase (ns-3: index ``7 - trunc(6 u)``, then one advance)."""
    cycle = (8 - int(6.0 * u)) % len(GAIN_CYCLE)
    return b._replace(mode=PROBE_BW, cwnd_gain=2.0, cycle=cycle, cycle_stamp=now,
                      pacing_gain=GAIN_CYCLE[cycle])


def _enter_startup(b: Any, high_gain: float) -> Any:
    return b._replace(mode=STARTUP, pacing_gain=high_gain, cwnd_gain=high_gain)


@net_function
def bbr_start(init_cwnd: int, mss: int, high_gain: float) -> Any:
    """BBR before the connection opens (no RTT, no bandwidth)."""
    return Bbr(STARTUP, high_gain, high_gain, (), -1.0, 0.0, False, -1.0, -1.0, 0, 0, False,
               0.0, 0, False, 0, 0.0, init_cwnd * mss, 0.0, False, False, 0.0,
               init_cwnd * mss, 1e12, (0, 0), 0, 0, 0.0, 0, 0, False)


@net_function
def bbr_open(b: Any, rtt_s: float, now: float, init_cwnd: int, mss: int, high_gain: float,
             initial_ssthresh: float) -> Any:
    """ns-3's ``CongestionStateSet(CA_OPEN)`` at the connection's opening with the
    handshake's RTT ``rtt_s`` (-1: none): ``min_rtt``, STARTUP and ``InitPacingRate``
    (``high_gain x cwnd / RTT``, the RTT in whole ms, at least 1; the bandwidth filter
    starts from ``cwnd / RTT`` at round 0).

    >>> b = bbr_open(bbr_start(10, 1000, 2.89), 0.0405, 0.05, 10, 1000, 2.89, 1e9)
    >>> b.min_rtt, b.bw[0], round(b.pacing_bps)
    (0.0405, (2000000.0, 0), 5780000)
    """
    cwnd = init_cwnd * mss
    rtt_ms = max(int(rtt_s * 1000.0), 1) if rtt_s >= 0 else 1
    nominal = float(int(cwnd * 8 * 1000.0 / rtt_ms))
    return _enter_startup(b, high_gain)._replace(
        min_rtt=rtt_s, min_rtt_stamp=now, last_rtt=rtt_s, socket_min_rtt=rtt_s,
        prior_cwnd=cwnd, cwnd=cwnd, ssthresh=initial_ssthresh,
        pacing_bps=float(int(high_gain * nominal)), bw=((nominal, 0),) * 3,
        epoch_time=now)


def aggregation_state(b: Any, acked: int, now: float) -> Any:
    """ns-3's ``UpdateAckAggregation``: the bytes acknowledged beyond what the bandwidth
    estimate expects since the epoch began (ns-3 truncates the epoch's age to whole
    seconds, and restarts the epoch at 4096 bytes), kept as the largest of two windows
    of 5 rounds."""
    extra, idx, rounds = list(b.extra), b.extra_idx, b.extra_rounds
    if b.round_start:
        rounds = min(31, rounds + 1)
        if rounds >= EXTRA_ACKED_ROUNDS:
            rounds, idx = 0, 1 - idx
            extra[idx] = 0
    expected = int(_best_bps(b) * int(now - b.epoch_time) / 8)
    epoch_time, epoch_acked = b.epoch_time, b.epoch_acked
    if epoch_acked <= expected or epoch_acked + acked >= ACK_EPOCH_RESET_BYTES:
        epoch_acked, epoch_time, expected = 0, now, 0
    epoch_acked += acked
    extra_acked = min(epoch_acked - expected, b.cwnd)
    extra[idx] = max(extra[idx], extra_acked)
    return b._replace(extra=(extra[0], extra[1]), extra_idx=idx, extra_rounds=rounds,
                      epoch_time=epoch_time, epoch_acked=epoch_acked)


def _next_phase(b: Any, now: float, prior_in_flight: int, mss: int, init_cwnd: int) -> bool:
    """ns-3's ``IsNextCyclePhase`` (no lost bytes: see the module docstring)."""
    full_length = now - b.cycle_stamp > b.min_rtt
    if b.pacing_gain == 1.0:
        return full_length
    if b.pacing_gain > 1.0:
        return full_length and prior_in_flight >= in_flight_target(b, b.pacing_gain, mss,
                                                                    init_cwnd)
    return full_length or prior_in_flight <= in_flight_target(b, 1.0, mss, init_cwnd)


@net_function
def bbr_model(b: Any, q: Any, acked: int, prior_in_flight: int, in_flight: int, now: float,
           u: float, mss: int, init_cwnd: int, high_gain: float, bw_window: int,
           rtt_window_s: float, probe_rtt_s: float) -> Any:
    """ns-3's ``UpdateModelAndState`` after an ACK that delivered ``acked`` bytes: ``q``
    the rate sample, ``prior_in_flight`` and ``in_flight`` the bytes in flight before and
    after the ACK, ``u`` a uniform draw (the first PROBE_BW phase)."""
    valid = q.sample_delivered >= 0 and q.interval > 0.0
    if valid:  # UpdateBottleneckBandwidth (UpdateRound first)
        if q.prior_delivered >= b.next_round:
            b = b._replace(next_round=q.delivered, rounds=b.rounds + 1, round_start=True,
                           conservation=False)
        else:
            b = b._replace(round_start=False)
        if q.delivery_bps >= _best_bps(b) or not q.app_limited:
            b = b._replace(bw=max_filter(b.bw, q.delivery_bps, b.rounds, bw_window))
    if acked > 0 and q.sample_delivered >= 0:
        b = aggregation_state(b, acked, now)
    if b.mode == PROBE_BW and _next_phase(b, now, prior_in_flight, mss, init_cwnd):
        cycle = (b.cycle + 1) % len(GAIN_CYCLE)
        b = b._replace(cycle=cycle, cycle_stamp=now, pacing_gain=GAIN_CYCLE[cycle])
    if not b.filled and b.round_start and not q.app_limited:  # CheckFullPipe
        if _best_bps(b) >= b.full_bw * 1.25:
            b = b._replace(full_bw=_best_bps(b), full_count=0)
        else:
            b = b._replace(full_count=b.full_count + 1, filled=b.full_count + 1 >= 3)
    if b.mode == STARTUP and b.filled:  # CheckDrain
        b = b._replace(mode=DRAIN, pacing_gain=1.0 / high_gain, cwnd_gain=high_gain,
                       ssthresh=float(in_flight_target(b, 1.0, mss, init_cwnd)))
    if b.mode == DRAIN and in_flight <= in_flight_target(b, 1.0, mss, init_cwnd):
        b = _enter_probe_bw(b, now, u)
    expired = now > b.min_rtt_stamp + rtt_window_s  # UpdateRTprop
    b = b._replace(expired=expired)
    if b.last_rtt >= 0 and (b.last_rtt <= b.min_rtt or expired):
        b = b._replace(min_rtt=b.last_rtt, min_rtt_stamp=now)
    if b.mode != PROBE_RTT and expired and not b.idle_restart:  # CheckProbeRTT
        b = _save_cwnd(b._replace(mode=PROBE_RTT, pacing_gain=1.0, cwnd_gain=1.0), False)
        b = b._replace(probe_done=0.0)
    if b.mode == PROBE_RTT:
        b = b._replace(app_limited=max(q.delivered + in_flight, 1))
        if b.probe_done == 0.0 and in_flight <= MIN_PIPE_SEGMENTS * mss:
            b = b._replace(probe_done=now + probe_rtt_s, probe_round_done=False,
                           next_round=q.delivered)
        elif b.probe_done != 0.0:
            b = b._replace(probe_round_done=b.probe_round_done or b.round_start)
            if b.probe_round_done and now > b.probe_done:
                b = _exit_probe_rtt(b, now, u, high_gain)
    if q.sample_delivered != 0:
        b = b._replace(idle_restart=False)
    return b


def _exit_probe_rtt(b: Any, now: float, u: float, high_gain: float) -> Any:
    """The end of PROBE_RTT: the saved window back, PROBE_BW (STARTUP if the pipe never
    filled)."""
    b = b._replace(min_rtt_stamp=now, cwnd=max(b.prior_cwnd, b.cwnd))
    return _enter_probe_bw(b, now, u) if b.filled else _enter_startup(b, high_gain)


def _pacing_rate(b: Any, gain: float) -> Any:
    """ns-3's ``SetPacingRate(gain)``: ``gain x bw``, 1 % below, only up before the pipe
    is filled."""
    rate = float(int(float(int(gain * _best_bps(b))) * (1.0 - PACING_MARGIN)))
    rate = min(rate, MAX_PACING_BPS)
    return b._replace(pacing_bps=rate) if b.filled or rate > b.pacing_bps else b


@net_function
def bbr_tx_start(b: Any, now: float, u: float, high_gain: float) -> Any:
    """ns-3's ``CwndEvent(CA_EVENT_TX_START)``, at a send with nothing in flight: once
    PROBE_RTT has marked BBR application-limited (``app_limited``, which ns-3's
    ``HandleProbeRTT`` sets and nothing clears), an idle restart: the ACK-aggregation
    epoch restarts, PROBE_BW paces at the estimate (gain 1), PROBE_RTT ends if its time
    and round are done; no PROBE_RTT starts until the next ACK that delivers.

    >>> b = bbr_start(10, 1000, 2.89)._replace(mode=PROBE_BW, filled=True, pacing_gain=1.25,
    ...                                        bw=((1e7, 3),) * 3, pacing_bps=1.2e7)
    >>> bbr_tx_start(b, 1.0, 0.0, 2.89) == b
    True
    >>> r = bbr_tx_start(b._replace(app_limited=5000), 1.0, 0.0, 2.89)
    >>> r.idle_restart, r.pacing_bps, r.epoch_time
    (True, 9900000.0, 1.0)
    """
    if not b.app_limited:
        return b
    b = b._replace(idle_restart=True, epoch_time=now, epoch_acked=0)
    if b.mode == PROBE_BW:
        return _pacing_rate(b, 1.0)
    if b.mode == PROBE_RTT and b.probe_round_done and now > b.probe_done:
        return _exit_probe_rtt(b, now, u, high_gain)
    return b


def _save_cwnd(b: Any, in_recovery: bool) -> Any:
    """ns-3's ``SaveCwnd``: the window, or the larger one in recovery and PROBE_RTT."""
    if not in_recovery and b.mode != PROBE_RTT:
        return b._replace(prior_cwnd=b.cwnd)
    return b._replace(prior_cwnd=max(b.prior_cwnd, b.cwnd))


@net_function
def bbr_controls(b: Any, acked: int, in_flight: int, in_recovery: bool, delivered: int,
              mss: int, init_cwnd: int, high_gain: float) -> Any:
    """ns-3's ``UpdateControlParameters`` after an ACK that delivered ``acked`` bytes
    (``in_flight`` after it, ``delivered`` the connection's total): the pacing rate, then
    the window."""
    b = _pacing_rate(b, b.pacing_gain)
    cwnd = b.cwnd
    if acked > 0:
        conserving = False
        if in_recovery and b.conservation:
            cwnd = max(cwnd, in_flight + acked)
            conserving = True
        if not conserving:
            target = in_flight_target(b, b.cwnd_gain, mss, init_cwnd)
            if b.filled:
                target += min(max(b.extra), int(_best_bps(b) / 80))
                cwnd = min(cwnd + acked, target)
            elif cwnd < target or delivered < init_cwnd * mss:
                cwnd = cwnd + acked
            cwnd = max(cwnd, MIN_PIPE_SEGMENTS * mss)
    if b.mode == PROBE_RTT:
        cwnd = min(cwnd, MIN_PIPE_SEGMENTS * mss)
    return b._replace(cwnd=cwnd)


@net_function
def unsacked_from(sacked: tuple[tuple[int, int], ...], seq: int) -> int:
    """The first segment from ``seq`` that the scoreboard ``sacked`` does not hold.

    >>> unsacked_from(((5, 8), (9, 10)), 5), unsacked_from(((5, 8),), 4)
    (8, 4)
    """
    for start, end in sacked:
        if start <= seq < end:
            seq = end
    return seq


@net_function
def in_flight_segments(t: Any, dupthresh: int) -> int:
    """ns-3's ``BytesInFlight`` in segments: RFC 6675's pipe, except while the sender goes
    back after a timeout (``nxt < high`` outside recovery), where ns-3 counts every
    segment it had sent lost: the segments sent again since, less those SACKed.

    >>> from tcpn.models.components.sender import Tcb
    >>> t = Tcb(4.0, 50.0, 10, 14, 30, 0, 30, False, 0, False, ((12, 20),), 10, False, 0)
    >>> in_flight_segments(t, 3)
    2
    """
    if t.nxt < t.high and not t.inrec:
        held = sum(max(0, min(end, t.nxt) - max(start, t.una)) for start, end in t.sacked)
        return t.nxt - t.una - held
    return sack_pipe(t, dupthresh)


@net_function
def bbr_ack(b: Any, q: Any, t: Any, a: Any, now: float, u: float, in_recovery: bool,
            dupthresh: int, mss: int, init_cwnd: int, high_gain: float, bw_window: int,
            rtt_window_s: float, probe_rtt_s: float, srtt_s: float,
            rtt_s: float) -> tuple[Any, Any]:
    """``(bbr, rate)`` after ACK ``a`` reaches the sender ``t`` (before the ACK) at
    ``now``: the segments it delivers (:func:`newly_delivered`), the RTT (``rtt_s``, the
    ACK's RTT sample, ns-3's ``m_lastRtt``, and ``srtt_s``, the smoothed RTT after it,
    whose smallest value is the socket's ``m_minRtt``; -1 when the ACK gives no sample),
    the rate sample, then ns-3's ``CongControl``; ``in_recovery`` is the sender's state
    after the ACK, ``u`` a uniform draw for PROBE_BW's first phase."""
    una = max(t.una, a.ack)
    merged = merge_sack(t.sacked, a.sack, una)
    seqs = newly_delivered(t.sacked, merged, t.una, una)
    acked = len(seqs) * mss
    prior_in_flight = in_flight_segments(t, dupthresh) * mss
    after = t._replace(una=una, nxt=max(t.nxt, a.ack), sacked=merged,
                       highrxt=max(t.highrxt, a.ack))
    in_flight = in_flight_segments(after, dupthresh) * mss
    if srtt_s >= 0:
        socket_min = srtt_s if b.socket_min_rtt < 0 else min(b.socket_min_rtt, srtt_s)
        b = b._replace(socket_min_rtt=socket_min)
    if rtt_s >= 0:
        b = b._replace(last_rtt=rtt_s)
    q = rate_sample(rate_delivered(q, seqs, now, mss), b.socket_min_rtt)
    b = bbr_model(b, q, acked, prior_in_flight, in_flight, now, u, mss, init_cwnd, high_gain,
               bw_window, rtt_window_s, probe_rtt_s)
    return bbr_controls(b, acked, in_flight, in_recovery, q.delivered, mss, init_cwnd,
                     high_gain), q


@net_function
def bbr_recovery(b: Any, t: Any, a: Any, dupthresh: int, mss: int) -> Any:
    """ns-3's ``CongestionStateSet(CA_RECOVERY)`` at a fast retransmit: the window saved,
    then set to the flight after the ACK plus what it delivered (at least a segment);
    packet conservation until the next round."""
    merged = merge_sack(t.sacked, a.sack, t.una)
    after = t._replace(sacked=merged)
    acked = len(newly_delivered(t.sacked, merged, t.una, t.una)) * mss
    b = _save_cwnd(b, False)
    return b._replace(cwnd=in_flight_segments(after, dupthresh) * mss + max(acked, mss),
                      conservation=True)


@net_function
def bbr_recovery_exit(b: Any) -> Any:
    """ns-3's ``CwndEvent(CA_EVENT_COMPLETE_CWR)``: no packet conservation, the window at
    least the one saved."""
    return b._replace(conservation=False, cwnd=max(b.prior_cwnd, b.cwnd))


@net_function
def bbr_loss(b: Any, mss: int) -> Any:
    """A timeout (ns-3's ``CongestionStateSet(CA_LOSS)``): the window saved, one segment
    left (the socket's), a round starts."""
    return _save_cwnd(b, False)._replace(cwnd=mss, round_start=True)


@net_function
def pace_delay_s(b: Any, high: int, mss: int, init_cwnd: int) -> float:
    """The pacing timer after a send leaving ``high`` segments sent: ``mss x 8 / pacing
    rate`` once the initial window has left (ns-3's ``highTxMark``, one past the SYN, is
    then above ``init_cwnd x mss``), else 0.

    >>> b = bbr_start(10, 1000, 2.89)._replace(pacing_bps=1e6)
    >>> pace_delay_s(b, 9, 1000, 10), pace_delay_s(b, 10, 1000, 10)
    (0.0, 0.008)
    """
    if high < init_cwnd or b.pacing_bps <= 0:
        return 0.0
    return mss * 8.0 / b.pacing_bps


# --------------------------------------------------------------------------- the net


def bbr_sender_net(config: SenderConfig, high_gain: float = 2.89, bw_window_rounds: int = 10,
                   rtt_window_s: float = 10.0, probe_rtt_duration_s: float = 0.2,
                   name: str = "sender") -> PetriNet:
    """The BBR sender module on the SACK sender ``config.variant``; ports ``out`` and
    ``acks``."""
    where = f"bbr of flow {config.flow}"
    if config.variant != "sack" or config.uses_ecn:
        raise InputError(f"{where}: recovery {config.variant!r}"
                         f"{' with ECN' if config.uses_ecn else ''} is not modelled (sack, "
                         "without ECN: tcp.sack true; BBR counts SACKed segments as "
                         "delivered)")
    # BBR's own keep rules (below) replace the base sender's sack_keep ones
    net = sender_net(replace(config, sack_keep=False), name)
    mss, init_cwnd = config.segment_bytes, int(config.initial_cwnd)
    net.declare(MSS_BYTES=mss, INIT_CWND_SEG=init_cwnd, HIGH_GAIN=high_gain,
                BW_WINDOW=bw_window_rounds, RTT_WINDOW=rtt_window_s,
                PROBE_RTT_S=probe_rtt_duration_s, bbr_open=bbr_open,
                bbr_recovery=bbr_recovery, bbr_recovery_exit=bbr_recovery_exit,
                bbr_loss=bbr_loss, pace_delay_s=pace_delay_s, rate_sent=rate_sent,
                rate_app_limited=rate_app_limited, unsacked_from=unsacked_from,
                in_flight_segments=in_flight_segments)
    net.add_place(Place("bbr", BBR, initial=[bbr_start(init_cwnd, mss, high_gain)]))
    net.add_place(Place("rate", RATE, initial=[rate_start()]))
    net.add_place(Place("pace", UNIT.timed(), initial=[Token((), 0.0)]))
    handshake_rtt = "now - a.echo" if config.handshake else "-1.0"
    track(net, "open", "bbr", "b", f"bbr_open(b, {handshake_rtt}, now, INIT_CWND_SEG, "
                                   "MSS_BYTES, HIGH_GAIN, INIT_SSTHRESH * MSS_BYTES)")
    # pacing: ns-3's SendPendingData sends new data and SACK recovery's retransmissions
    for tname in ("send", "sack_retransmit"):
        seq = "t.nxt" if tname == "send" else "sack_hole(t, DUPTHRESH)"
        high = "max(t.high, t.nxt + 1)" if tname == "send" else "t.high"
        net.add_input("pace", tname, "()")
        net.add_output("pace", tname, "()",
                       delay=f"pace_delay_s(b2, {high}, MSS_BYTES, INIT_CWND_SEG)")
        track(net, tname, "bbr", "b", "b2")
        add_action(net, tname, _tx_start_action(tname, config.dupack_threshold, high_gain),
                   ("b2",))
        wrap_output(net, tname, "tcb", "({base})._replace(cwnd=b2.cwnd / MSS_BYTES)")
        track(net, tname, "rate", "q",
              f"rate_sent(q, {seq}, now, in_flight_segments(t, DUPTHRESH) == 0)")
    if "produce" in net.transitions:
        # ns-3's Send: CalculateAppLimited once the write is queued (the segment written
        # is unsent until ``send`` takes it)
        net.add_read("tcb", "produce", "t")
        track(net, "produce", "rate", "q",
              "rate_app_limited(q, (w + 1 - t.nxt) * MSS_BYTES, "
              "in_flight_segments(t, DUPTHRESH) * MSS_BYTES, int(t.cwnd * MSS_BYTES), "
              "MSS_BYTES, sack_hole(t, DUPTHRESH) >= 0)")
    _congestion_control(net, config, high_gain, bw_window_rounds, rtt_window_s,
                        probe_rtt_duration_s)
    return net


def _tx_start_action(tname: str, dupthresh: int, high_gain: float) -> Any:
    """The action of a paced send: ns-3's ``CA_EVENT_TX_START`` when nothing is in flight
    (:func:`bbr_tx_start`; a uniform draw only when it may end PROBE_RTT)."""
    def tx_start(b: Any, t: Any, now: float, rng: Any) -> dict[str, Any]:
        if in_flight_segments(t, dupthresh) != 0 or not b.app_limited:
            return {"b2": b}
        u = float(rng.random()) if b.mode == PROBE_RTT else 0.0
        return {"b2": bbr_tx_start(b, now, u, high_gain)}

    tx_start.__name__ = f"bbr_tx_start_{tname}"
    return tx_start


def _congestion_control(net: PetriNet, config: SenderConfig, high_gain: float,
                        bw_window_rounds: int, rtt_window_s: float,
                        probe_rtt_duration_s: float) -> None:
    """``CongControl`` on every ACK transition, and the loss events around it."""
    mss, init_cwnd, dupthresh = config.segment_bytes, int(config.initial_cwnd), \
        config.dupack_threshold
    recovering = {"fast_retransmit": True, "recovery_dup_ack": True, "partial_ack": True,
                  "later_partial_ack": True}
    new_data = ("new_ack", "partial_ack", "later_partial_ack", "recovery_exit")

    def action_for(tname: str) -> Any:
        in_recovery = recovering.get(tname, False)
        entering = tname == "fast_retransmit"
        leaving = tname == "recovery_exit"
        sample = tname in new_data

        def bbr_on_ack(b: Any, q: Any, t: Any, a: Any, now: float, rng: Any,
                       srtt_s: float, rtt_s: float) -> dict[str, Any]:
            if entering:
                b = bbr_recovery(b, t, a, dupthresh, mss)
            if leaving:
                b = bbr_recovery_exit(b)
            b2, q2 = bbr_ack(b, q, t, a, now, float(rng.random()), in_recovery, dupthresh,
                             mss, init_cwnd, high_gain, bw_window_rounds, rtt_window_s,
                             probe_rtt_duration_s, srtt_s, rtt_s)
            return {"b2": b2, "q2": q2}

        def sampled(b: Any, q: Any, t: Any, a: Any, now: float, rng: Any, r2: Any,
                    TIMESTAMPS: bool) -> dict[str, Any]:
            valid = karn_sample(t, a, TIMESTAMPS)
            # ns-3 empties its RTT history at a timeout and does not time segments sent
            # again: no m_lastRtt until an ACK passes what was sent before the timeout
            timed = valid and (t.inrec or a.ack > t.recover)
            rtt_s = now - a.echo if timed else -1.0
            return bbr_on_ack(b, q, t, a, now, rng, r2.srtt if valid else -1.0, rtt_s)

        def unsampled(b: Any, q: Any, t: Any, a: Any, now: float, rng: Any) -> dict[str, Any]:
            return bbr_on_ack(b, q, t, a, now, rng, -1.0, -1.0)

        action = sampled if sample else unsampled
        action.__name__ = f"bbr_{tname}"
        return action

    resent = retransmissions(net)
    has_data = "(w < 0 or t.nxt < w)" if config.has_application else \
        "(TOTAL < 0 or t.nxt < TOTAL)"
    for tname in (t for t in ACK_TRANSITIONS if t in net.transitions and t != "stale_ack"):
        net.add_input("bbr", tname, "b")
        net.add_output("bbr", tname, "b2")
        net.add_input("rate", tname, "q")
        # a retransmission on an ACK keeps its send record like any send (SkbSent)
        net.add_output("rate", tname, f"rate_sent(q2, {resent[tname]}, now, False)"
                       if tname in resent else "q2")
        add_action(net, tname, action_for(tname), ("b2", "q2"))
        wrap_output(net, tname, "tcb", "({base})._replace(cwnd=b2.cwnd / MSS_BYTES, "
                                       "ssthresh=b2.ssthresh / MSS_BYTES)")
    track(net, "timeout", "bbr", "b", "bbr_loss(b, MSS_BYTES)")
    # ns-3 keeps its scoreboard across a timeout (the base sender forgets it) ...
    wrap_output(net, "timeout", "tcb", "({base})._replace(ssthresh=t.ssthresh, "
                                       "sacked=t.sacked)")
    # ... and sends again only what it does not hold, its flight the segments sent again
    wrap_output(net, "send", "tcb", "({base})._replace(nxt=unsacked_from(t.sacked, t.nxt + 1))")
    or_guard(net, "send", f"{has_data} and not t.inrec and t.nxt < t.high and "
                          "in_flight_segments(t, DUPTHRESH) + 1 <= min(t.cwnd, WINDOW)")


# --------------------------------------------------------------------------- registration


class BbrParams(VariantParams):
    """BBR v1 as ns-3.44's ``TcpBbr``: ``high_gain`` (``HighGain``, 2.89: STARTUP's
    gains), ``bw_window_rounds`` (``BwWindowLength``, 10 round trips of the bandwidth
    filter), ``rtt_window_s`` (``RttWindowLength``, 10 s of the min-RTT filter) and
    ``probe_rtt_duration_s`` (``ProbeRttDuration``, 0.2 s)."""

    variant: Literal["bbr"]
    high_gain: float = Field(default=2.89, gt=1.0, allow_inf_nan=False)
    bw_window_rounds: int = Field(default=10, ge=1, le=1000)
    rtt_window_s: float = Field(default=10.0, gt=0.0, allow_inf_nan=False)
    probe_rtt_duration_s: float = Field(default=0.2, gt=0.0, allow_inf_nan=False)


def _sender(config: SenderConfig, params: BbrParams) -> PetriNet:
    return bbr_sender_net(config, float(params.high_gain), int(params.bw_window_rounds),
                          float(params.rtt_window_s), float(params.probe_rtt_duration_s))


def _ns3(params: BbrParams) -> Ns3Congestion:
    return Ns3Congestion("ns3::TcpBbr", (
        ("HighGain", repr(float(params.high_gain))),
        ("BwWindowLength", str(params.bw_window_rounds)),
        ("RttWindowLength", f"{float(params.rtt_window_s)!r}s"),
        ("ProbeRttDuration", f"{float(params.probe_rtt_duration_s)!r}s")))


def _fluid(params: BbrParams) -> FluidLaw:
    """Scherrer et al.'s BBR v1 fluid model (:mod:`tcpn.solvers.fluid.bbr`) with these
    parameters."""
    return FluidLaw("bbr", high_gain=float(params.high_gain),
                    bw_window_rounds=int(params.bw_window_rounds),
                    rtt_window_s=float(params.rtt_window_s),
                    probe_rtt_duration_s=float(params.probe_rtt_duration_s))


def _net_checks(params: BbrParams, tcp: Any) -> list[str]:
    problems = []
    if not tcp.sack:
        problems.append("tcp.sack: the net lens's BBR runs on SACK recovery only (its "
                        "delivery rate counts SACKed segments); set tcp.sack: true")
    if tcp.ecn:
        problems.append("tcp.ecn: BBR v1 has no ECN reaction in the net lens")
    return problems


#: Suffix of the twin of a BBR transition that draws PROBE_BW's first phase: one per phase.
PHASE_SUFFIX = "_phase"
#: One uniform draw per first PROBE_BW phase (ns-3's ``7 - trunc(6 u)``: the middle of
#: each sixth of [0, 1)).
PHASE_DRAWS = tuple((k + 0.5) / 6.0 for k in range(6))


def bbr_choices(net: PetriNet, i: int, segments: int) -> tuple[dict[str, str],
                                                              dict[str, float]]:
    """BBR of connection ``i`` in a state space: each transition whose action may draw
    PROBE_BW's first phase runs with the first phase's draw, and a twin per other phase
    may fire instead where the draw can count: an ACK outside PROBE_BW (it may end
    DRAIN, PROBE_RTT, or STARTUP two rounds into a flat estimate, and DRAIN with it), a
    send in PROBE_RTT once BBR is marked application-limited (an idle restart may end it).
    (A guard cannot read the clock these actions read, so where the draw does not count
    after all, a twin's state is the original's.) Returns the twins and the draws they
    stand for."""
    # read when the state space asks: tcpn.models.verification imports the composer,
    # which imports this module
    from tcpn.models.verification.draws import FixedDraw, forced

    twins: dict[str, str] = {}
    draws: dict[str, float] = {}
    prefix = f"flow{i}.snd."
    for name in [n for n, t in net.transitions.items()
                 if n.startswith(prefix) and "rng" in t.action_inputs]:
        source = net.transitions[name]
        sends = name.removeprefix(prefix) in ("send", "sack_retransmit")
        may_draw = (f"b.app_limited != 0 and b.mode == {PROBE_RTT}" if sends else
                    f"b.mode != {PROBE_BW} and (b.mode != {STARTUP} or b.full_count >= 2)")
        guard = may_draw if source.guard is None else f"({source.guard}) and {may_draw}"
        net.transitions[name] = replace(source, action=forced(source.action,
                                                              FixedDraw(PHASE_DRAWS[0])))
        draws[name] = PHASE_DRAWS[0]
        for k, u in enumerate(PHASE_DRAWS[1:], start=1):
            twin = f"{name}{PHASE_SUFFIX}{k}"
            net.add_transition(replace(source, name=twin, guard=guard,
                                       action=forced(source.action, FixedDraw(u))))
            for arc in net.arcs_of(name):
                net.add_arc(replace(arc, transition=twin))
            twins[twin] = name
            draws[twin] = u
    return twins, draws


register_variant("bbr", BbrParams, _sender, recovery="newreno", ns3=_ns3, fluid=_fluid,
                 state_space_choices=bbr_choices, checks={"net": _net_checks},
                 keeps_sack_after_timeout=True)
