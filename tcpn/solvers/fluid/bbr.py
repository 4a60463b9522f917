"""Fluid model of BBR v1 flows sharing one drop-tail bottleneck (the fluid lens's ``bbr``).

The model is the BBRv1 fluid model of Scherrer, Legner, Perrig and Schmid, "Model-Based
Insights on the Performance, Fairness, and Stability of BBR", ACM IMC 2022
(arXiv:2208.10103), section 3: a fluid queue fed by rate-based senders whose sending
rate is the smaller of a pacing rate (pacing gain x the bottleneck-bandwidth estimate)
and the inflight cap over the RTT, the estimate being the maximum of the delivery rates
seen over a window, the RTT estimate the minimum RTT seen, with the PROBE_BW gain cycle
and PROBE_RTT. (The paper's text could not be read from the machine this module was
written on: its equations are not numbered here. Each rule below names its source;
where the paper's description and the BBR draft, draft-cardwell-iccrg-bbr-congestion-
control-00, differ in a detail, the draft's rule, which Linux and ns-3's ``TcpBbr``
run, is the one taken, and the docstring says so.)

Symbols: C the capacity and B the buffer (packets/s, packets), d_i flow i's propagation
RTT, q the queue, x_i the sending rate, ``btl_i`` the bandwidth estimate, ``rtprop_i``
the min-RTT estimate, ``g_i`` the pacing gain, ``cwnd_i`` the inflight cap (packets).

- **Queue** (as :mod:`~tcpn.solvers.fluid.bottleneck`): ``dq/dt = sum_i n_i x_i - C``
  clamped to [0, B]; a full queue drops the fraction ``1 - C/A`` of its arrivals A; the
  RTT is ``tau_i = d_i + q/C``; an independent packet error rate may lose packets after
  the queue.
- **Sending rate** (paper, section 3): ``x_i = min(g_i btl_i, cwnd_i / tau_i)``.
- **Acknowledgements** (FIFO): with ``Q_i`` flow i's running count taken by the queue
  and ``Q = sum_i n_i Q_i``, what leaves the queue at t arrived at ``s(t)``, where
  ``Q(s(t)) = Q(t) - q(t)``; it is acknowledged a propagation RTT later, so the count
  acknowledged is ``A_i(t) = (1 - per) Q_i(s(t - d_i))`` and the RTT sample
  ``r_i(t) = t - s(t - d_i)``.
- **Delivery-rate sample** (the draft's rate sample, 4.1.1: delivered over the
  packet's flight): ``(A_i(t) - A_i(t - r_i))/r_i``; the inflight is ``X_i(t) - X_i(t -
  r_i)`` (X the running count sent).
- **Bandwidth filter** (draft 4.1.1.5: a windowed max over ``bw_window_rounds`` round
  trips): the largest sample of each of the last rounds, a round ending when a packet
  sent after its start is acknowledged.
- **Min RTT** (draft 4.1.2.3): ``rtprop_i`` takes the sample ``r_i`` when not larger, or
  when ``rtt_window_s`` passed since it was taken; the latter starts PROBE_RTT.
- **States** (draft 4.3): STARTUP (pacing and window gain ``high_gain``) until the
  estimate grew less than 25 % in three rounds; DRAIN (pacing gain ``1/high_gain``)
  until the inflight is at most one BDP (``btl x rtprop``); PROBE_BW with window gain 2
  and the pacing gains 1.25, 0.75, 1 x 6, one phase per ``rtprop`` (1.25 until the
  inflight also reaches 1.25 BDP or a loss is seen, 0.75 ending early at 1 BDP), from
  the flow's next drawn phase; PROBE_RTT: the window at most 4 packets until the
  inflight is that low, then ``probe_rtt_duration_s`` and a round, then the window before
  it is restored, ``rtprop``'s stamp renewed, and PROBE_BW (from the next phase) or
  STARTUP resumes.
- **Window** (draft 4.2.3.6): the window grows by what is acknowledged; once the pipe is
  filled it is at most ``cwnd_gain x BDP``, before that it grows while below it; at
  least 4 packets.

What is not modelled, each a difference from ns-3's ``TcpBbr`` (docs/fluid.md, "BBR
v1"): the ACK-aggregation allowance on the window (its quantisation budget, +3 segments
and +2 in the 1.25 phase, is an option of :class:`BbrSettings`), the 1 % pacing margin,
the loss reaction (packet conservation in recovery, restore after it), the unpaced
initial window, the delayed ACKs, the random draw of each PROBE_BW episode's first phase
(drawn before the run: ``phases``), and the Nichols three-sample max filter (an exact
windowed max here). ``flows`` > 1 in a class are synchronised copies (the same phases):
the lens gives each BBR flow a class.

Two flows through a deep buffer (BDP 50 packets): the link full, the inflight caps
binding, a standing queue of about one BDP (BBR v1's regime in deep buffers, as the paper
and Hock, Bless and Zitterbart, ICNP 2017, describe it):

>>> from tcpn.solvers.fluid.bottleneck import Bottleneck, FlowClass
>>> flows = [FlowClass(prop_rtt_s=0.05, variant="bbr", initial_cwnd_pkts=10, start_s=s,
...                    bbr=BbrSettings(phases=(p, 5, 3))) for s, p in ((0.0, 3), (0.5, 6))]
>>> run = simulate_bbr(flows, Bottleneck(capacity_pps=1000, buffer_pkts=200),
...                    horizon_s=30, warmup_s=5)
>>> round(run.summary["utilisation"], 2), round(run.summary["queue_mean_pkts"])
(0.99, 47)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from tcpn.errors import InputError
from tcpn.solvers.fluid.bottleneck import (
    NS_CLASS,
    NS_QUEUE,
    S_GOOD,
    S_LOSS,
    S_RTT,
    S_SEND,
    SQ_DROP,
    SQ_INFLOW,
    SQ_PFULL,
    Bottleneck,
    BottleneckRun,
    FlowClass,
    convergence_metrics,
    run_summary,
    validate_link,
)
from tcpn.solvers.fluid.dde import KERNEL, DdeSystem, Trajectory, lagged, solve

__all__ = ["GAIN_CYCLE", "NS3_QUANTA_PKTS", "BbrSettings", "probe_bw_phase", "simulate_bbr"]

#: PROBE_BW's pacing gains, one phase per min RTT (draft 4.3.4.3).
GAIN_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
#: The smallest window (draft's ``BBRMinPipeCwnd``, packets) and PROBE_RTT's.
MIN_PIPE_PKTS = 4.0
#: PROBE_BW's window gain (draft's ``cwnd_gain``).
CWND_GAIN = 2.0
STARTUP, DRAIN, PROBE_BW, PROBE_RTT = 0, 1, 2, 3
#: ns-3.44's ``TcpBbr::InFlight`` allowance: 3 segments on every target, 2 more in the
#: 1.25 phase (as the net lens's ``in_flight_target``).
NS3_QUANTA_PKTS = (3.0, 2.0)

# Columns of the per-class table.
(B_N, B_D, B_START, B_STOP, B_W0, B_HIGH, B_BWWIN, B_RTTWIN, B_PRTT, B_PHASES, B_MAXW,
 B_PER, B_QUANTA, B_PROBE_QUANTA) = range(14)
N_B = 14
# Per-class discrete state (aux).
(X_MODE, X_PHASE, X_CYCLE_T, X_BTL, X_ROUND_T, X_FULL_BW, X_FULL_N, X_FILLED, X_RTPROP,
 X_RTPROP_T, X_PROBE_DONE, X_PROBE_ROUND_T, X_PROBE_ROUND, X_PRIOR_CWND, X_RING, X_ON,
 X_PACING_GAIN, X_CWND_GAIN, X_EPISODE) = range(19)
N_X = 19
# Per-class cumulative counts (history E): sent, taken by the queue, acknowledged; then
# two columns of the queue: the count it took from all flows, and the time at which what
# leaves it now arrived (FIFO).
E_SENT, E_QUEUED, E_ACKED = range(3)
N_E = 3


@dataclass(frozen=True)
class BbrSettings:
    """A BBR v1 flow's parameters: ``high_gain`` (STARTUP's gains), ``bw_window_rounds``
    (the bandwidth filter's window), ``rtt_window_s`` (the min-RTT filter's),
    ``probe_rtt_duration_s``, ``phases``, the PROBE_BW phase (index into
    :data:`GAIN_CYCLE`) each PROBE_BW episode starts in (the first episode the first,
    and so on, cycling; ns-3 draws one at each, :func:`probe_bw_phase`: flows whose
    episodes all started in one phase would probe together and never see each other's
    share), and what every inflight target
    (``gain x BDP``: the window, DRAIN's and the phases' ends) adds: ``quanta_pkts``,
    and ``probe_quanta_pkts`` more in the 1.25 phase. The paper's targets add nothing
    (the defaults); ns-3.44's ``TcpBbr::InFlight`` adds 3 segments (the draft's three
    send quanta, one segment each in ns-3) and 2 more (:data:`NS3_QUANTA_PKTS`)."""

    high_gain: float = 2.89
    bw_window_rounds: int = 10
    rtt_window_s: float = 10.0
    probe_rtt_duration_s: float = 0.2
    phases: tuple[int, ...] = (2,)
    quanta_pkts: float = 0.0
    probe_quanta_pkts: float = 0.0


def probe_bw_phase(u: float) -> int:
    """PROBE_BW's first phase for a uniform draw ``u`` in [0, 1), ns-3.44's rule
    (``TcpBbr::EnterProbeBW``: ``7 - trunc(6u)``, then advanced once): never the 0.75
    phase.

    >>> sorted({probe_bw_phase(k / 6 + 0.01) for k in range(6)})
    [0, 3, 4, 5, 6, 7]
    """
    return (len(GAIN_CYCLE) - 1 - int(6 * u) + 1) % len(GAIN_CYCLE)


@njit(**KERNEL, inline="always")
def _signals(t, y, prm, cls, aux, row, m):
    """Sending, loss and goodput rates, RTTs and the queue's signals at state ``y``."""
    cap = prm[0]
    q = y[m]
    inflow = 0.0
    for i in range(m):
        base = i * NS_CLASS
        rtt = cls[i, B_D] + q / cap
        x = 0.0
        if aux[i, X_ON] > 0.0 and t < cls[i, B_STOP]:
            x = min(aux[i, X_PACING_GAIN] * aux[i, X_BTL], y[i] / rtt)
        row[base + S_RTT] = rtt
        row[base + S_SEND] = x
        inflow += cls[i, B_N] * x
    pfull = 0.0
    if q >= prm[1] and inflow > cap:
        pfull = 1.0 - cap / inflow
    qdrop = 0.0
    for i in range(m):
        base = i * NS_CLASS
        x = row[base + S_SEND]
        keep = (1.0 - pfull) * (1.0 - cls[i, B_PER])
        row[base + S_GOOD] = x * keep
        row[base + S_LOSS] = x * (1.0 - keep)
        qdrop += cls[i, B_N] * x * pfull
    qb = m * NS_CLASS
    row[qb + SQ_PFULL] = pfull
    row[qb + SQ_INFLOW] = inflow
    row[qb + SQ_DROP] = qdrop


@njit(**KERNEL, inline="always")
def _queue_slope(q, inflow, prm):
    """dq/dt, zero where the queue is at a bound it would cross."""
    slope = inflow - prm[0]
    if (q <= 0.0 and slope < 0.0) or (q >= prm[1] and slope > 0.0):
        return 0.0
    return slope


@njit(**KERNEL)
def _arrived_at(E, k, h, target, col):
    """The time at which the running count in column ``col`` (non-decreasing) reached
    ``target``, interpolated on rows 0..``k``."""
    if E[k, col] <= target:
        return k * h
    lo, hi = 0, k
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if E[mid, col] >= target:
            hi = mid
        else:
            lo = mid
    step = E[hi, col] - E[lo, col]
    share = (target - E[lo, col]) / step if step > 0.0 else 1.0
    return (lo + share) * h


@njit(**KERNEL, inline="always")
def _inflight_target(i, gain, aux, cls):
    """``gain x BDP`` plus the flow's quanta (draft 4.2.3.2's ``BBRInflight``)."""
    extra = cls[i, B_QUANTA]
    if aux[i, X_MODE] == PROBE_BW and aux[i, X_PHASE] == 0.0:
        extra += cls[i, B_PROBE_QUANTA]
    return gain * aux[i, X_BTL] * aux[i, X_RTPROP] + extra


@njit(**KERNEL)
def _bbr_ack(i, t, cwnd, acked, sample, inflight, lost, rtt, aux, ring, cls, phases):
    """One step of flow ``i``'s BBR on what was acknowledged in it (the draft's
    ``BBRUpdateOnACK``: model, state machine, window); returns the new window."""
    width = int(cls[i, B_BWWIN])
    # A round ends when what is acknowledged was sent after the round started.
    round_start = t - rtt >= aux[i, X_ROUND_T]
    if round_start:
        aux[i, X_ROUND_T] = t
        aux[i, X_RING] = (aux[i, X_RING] + 1.0) % width
        ring[i, int(aux[i, X_RING])] = 0.0
    slot = int(aux[i, X_RING])
    ring[i, slot] = max(ring[i, slot], sample)
    btl = 0.0
    for j in range(width):
        btl = max(btl, ring[i, j])
    aux[i, X_BTL] = btl
    rtprop = aux[i, X_RTPROP]
    mode = int(aux[i, X_MODE])
    # PROBE_BW's cycle (draft 4.3.4.3).
    if mode == PROBE_BW:
        gain = aux[i, X_PACING_GAIN]
        full = t - aux[i, X_CYCLE_T] > rtprop
        if gain > 1.0:
            advance = full and (lost or inflight >= _inflight_target(i, gain, aux, cls))
        elif gain < 1.0:
            advance = full or inflight <= _inflight_target(i, 1.0, aux, cls)
        else:
            advance = full
        if advance:
            aux[i, X_PHASE] = (aux[i, X_PHASE] + 1.0) % len(GAIN_CYCLE)
            aux[i, X_CYCLE_T] = t
            aux[i, X_PACING_GAIN] = GAIN_CYCLE[int(aux[i, X_PHASE])]
    # The full pipe (draft 4.3.2.2), then DRAIN's end (4.3.3).
    if round_start and aux[i, X_FILLED] == 0.0:
        if btl >= 1.25 * aux[i, X_FULL_BW]:
            aux[i, X_FULL_BW] = btl
            aux[i, X_FULL_N] = 0.0
        else:
            aux[i, X_FULL_N] += 1.0
            if aux[i, X_FULL_N] >= 3.0:
                aux[i, X_FILLED] = 1.0
    if mode == STARTUP and aux[i, X_FILLED] > 0.0:
        mode = DRAIN
        aux[i, X_PACING_GAIN] = 1.0 / cls[i, B_HIGH]
    aux[i, X_MODE] = mode
    if mode == DRAIN and inflight <= _inflight_target(i, 1.0, aux, cls):
        mode = _enter_probe_bw(i, t, aux, cls, phases)
    # The min RTT and PROBE_RTT (draft 4.1.2.3, 4.3.5).
    expired = t - aux[i, X_RTPROP_T] > cls[i, B_RTTWIN]
    if rtt <= rtprop or expired:
        aux[i, X_RTPROP] = rtt
        aux[i, X_RTPROP_T] = t
    if expired and mode != PROBE_RTT:
        mode = PROBE_RTT
        aux[i, X_PACING_GAIN] = 1.0
        aux[i, X_PRIOR_CWND] = cwnd
        aux[i, X_PROBE_DONE] = np.inf
    if mode == PROBE_RTT:
        if aux[i, X_PROBE_DONE] == np.inf:
            if inflight <= MIN_PIPE_PKTS + 0.5:  # a fluid count nears 4 from above
                aux[i, X_PROBE_DONE] = t + cls[i, B_PRTT]
                aux[i, X_PROBE_ROUND_T] = t
                aux[i, X_PROBE_ROUND] = 0.0
        else:
            if t - rtt >= aux[i, X_PROBE_ROUND_T]:  # sent since the low inflight began
                aux[i, X_PROBE_ROUND] = 1.0
            if aux[i, X_PROBE_ROUND] > 0.0 and t >= aux[i, X_PROBE_DONE]:
                aux[i, X_RTPROP_T] = t
                cwnd = max(cwnd, aux[i, X_PRIOR_CWND])
                if aux[i, X_FILLED] > 0.0:
                    mode = _enter_probe_bw(i, t, aux, cls, phases)
                else:
                    mode = STARTUP
                    aux[i, X_PACING_GAIN] = cls[i, B_HIGH]
    aux[i, X_MODE] = mode
    # STARTUP and DRAIN (0 and 1) keep high_gain as the window gain
    aux[i, X_CWND_GAIN] = cls[i, B_HIGH] if mode <= DRAIN else CWND_GAIN
    # The window (draft 4.2.3.6).
    target = _inflight_target(i, aux[i, X_CWND_GAIN], aux, cls)
    if aux[i, X_FILLED] > 0.0:
        cwnd = min(cwnd + acked, target)
    elif cwnd < target:
        cwnd = cwnd + acked
    cwnd = min(max(cwnd, MIN_PIPE_PKTS), cls[i, B_MAXW])
    if mode == PROBE_RTT:
        cwnd = min(cwnd, MIN_PIPE_PKTS)
    return cwnd


@njit(**KERNEL, inline="always")
def _enter_probe_bw(i, t, aux, cls, phases):
    """PROBE_BW from the flow's next phase."""
    episode = int(aux[i, X_EPISODE])
    aux[i, X_EPISODE] = episode + 1
    phase = phases[i, episode % int(cls[i, B_PHASES])]
    aux[i, X_PHASE] = phase
    aux[i, X_CYCLE_T] = t
    aux[i, X_PACING_GAIN] = GAIN_CYCLE[int(phase)]
    return PROBE_BW


@njit(**KERNEL, inline="always")
def _start(i, t, y, aux, ring, cls, cap, m):
    """Flow ``i`` opens at ``t``: STARTUP, the handshake's RTT as the min RTT and the
    initial window over it as the first estimate (ns-3's initial pacing rate)."""
    rtt = cls[i, B_D] + y[m] / cap
    aux[i, X_ON] = 1.0
    aux[i, X_MODE] = STARTUP
    aux[i, X_PACING_GAIN] = cls[i, B_HIGH]
    aux[i, X_CWND_GAIN] = cls[i, B_HIGH]
    aux[i, X_RTPROP] = rtt
    aux[i, X_RTPROP_T] = t
    aux[i, X_ROUND_T] = t
    aux[i, X_BTL] = cls[i, B_W0] / rtt
    ring[i, 0] = aux[i, X_BTL]


@njit(**KERNEL)
def _run(Y, S, E, aux, ring, phases, prm, cls, h, n_steps, f1, f2, y1):
    """Heun steps of the queue and the cumulative counts on the grid; after each, every
    flow's BBR reads what was acknowledged in it and sets its window."""
    m = cls.shape[0]
    cap = prm[0]
    total = m * N_E
    pfull = m * NS_CLASS + SQ_PFULL
    for k in range(n_steps):
        t = k * h
        for i in range(m):
            if aux[i, X_ON] == 0.0 and t >= cls[i, B_START]:
                _start(i, t, Y[k], aux, ring, cls, cap, m)
        _signals(t, Y[k], prm, cls, aux, S[k], m)
        # Predictor: an Euler step; the windows and the BBR state hold over the step.
        for j in range(Y.shape[1]):
            y1[j] = Y[k, j]
        slope1 = _queue_slope(Y[k, m], S[k, m * NS_CLASS + SQ_INFLOW], prm)
        y1[m] = min(max(Y[k, m] + h * slope1, 0.0), prm[1])
        for i in range(m):
            f1[i, E_SENT] = S[k, i * NS_CLASS + S_SEND]
            f1[i, E_QUEUED] = f1[i, E_SENT] * (1.0 - S[k, pfull])
        _signals(t + h, y1, prm, cls, aux, S[k + 1], m)
        slope2 = _queue_slope(y1[m], S[k + 1, m * NS_CLASS + SQ_INFLOW], prm)
        for i in range(m):
            f2[i, E_SENT] = S[k + 1, i * NS_CLASS + S_SEND]
            f2[i, E_QUEUED] = f2[i, E_SENT] * (1.0 - S[k + 1, pfull])
        for j in range(Y.shape[1]):
            Y[k + 1, j] = Y[k, j]
        q1 = min(max(Y[k, m] + 0.5 * h * (slope1 + slope2), 0.0), prm[1])
        Y[k + 1, m] = q1
        queued = 0.0
        for i in range(m):
            for c in (E_SENT, E_QUEUED):
                E[k + 1, i * N_E + c] = E[k, i * N_E + c] + 0.5 * h * (f1[i, c] + f2[i, c])
            queued += cls[i, B_N] * E[k + 1, i * N_E + E_QUEUED]
        # FIFO: what leaves now is what the queue had taken when its count was the
        # count taken so far less the queue.
        E[k + 1, total] = queued
        t1 = t + h
        E[k + 1, total + 1] = t1 if q1 <= 0.0 else _arrived_at(E, k + 1, h, queued - q1,
                                                                 total)
        for i in range(m):
            col = i * N_E
            # Acknowledged at t1: what left the queue one return trip (the propagation
            # RTT: the model's whole path delay is outside the queue) earlier.
            sent_at = lagged(E, k + 1, h, t1, cls[i, B_D], total + 1)
            rtt = t1 - sent_at
            E[k + 1, col + E_ACKED] = (1.0 - cls[i, B_PER]) * lagged(E, k + 1, h, t1, rtt,
                                                                     col + E_QUEUED)
            acked = E[k + 1, col + E_ACKED] - E[k, col + E_ACKED]
            if aux[i, X_ON] == 0.0 or not acked > 0.0:
                continue  # BBR acts on ACKs: no sample, no state change without one
            sample = (E[k + 1, col + E_ACKED] - lagged(E, k + 1, h, t1, rtt, col + E_ACKED)) \
                / rtt
            inflight = E[k + 1, col + E_SENT] - lagged(E, k + 1, h, t1, rtt, col + E_SENT)
            lost = lagged(S, k, h, t1, rtt, i * NS_CLASS + S_LOSS) > 0.0
            Y[k + 1, i] = _bbr_ack(i, t1, Y[k, i], acked, sample, inflight, lost, rtt,
                                   aux, ring, cls, phases)
    _signals(n_steps * h, Y[n_steps], prm, cls, aux, S[n_steps], m)


def _validate(classes: Sequence[FlowClass], link: Bottleneck) -> None:
    validate_link(classes, link, "fluid BBR")
    if link.aqm != "droptail":
        raise InputError(f"fluid BBR: aqm {link.aqm!r}: the BBR fluid model has a drop-tail "
                         "queue only")
    for j, c in enumerate(classes):
        where = f"fluid flow class {c.name or j}"
        if c.variant != "bbr" or c.bbr is None:
            raise InputError(f"{where}: variant {c.variant!r}: the BBR fluid model runs BBR "
                             "classes only (variant 'bbr' with its BbrSettings)")
        if c.limiter is not None:
            raise InputError(f"{where}: limiter: the BBR fluid model has no token bucket")
        if c.flows < 1 or not c.prop_rtt_s > 0 or not 0 <= c.start_s < c.stop_s:
            raise InputError(f"{where}: needs flows >= 1, prop_rtt_s > 0 and 0 <= start_s < "
                             f"stop_s (got {c.flows}, {c.prop_rtt_s}, {c.start_s}, {c.stop_s})")
        if not 0 <= c.packet_error_rate < 1:
            raise InputError(f"{where}: packet_error_rate must be in [0, 1) "
                             f"(got {c.packet_error_rate})")
        s = c.bbr
        if not (s.high_gain > 1 and s.bw_window_rounds >= 1 and s.rtt_window_s > 0
                and s.probe_rtt_duration_s > 0 and len(s.phases) > 0
                and all(0 <= p < len(GAIN_CYCLE) for p in s.phases)
                and s.quanta_pkts >= 0 and s.probe_quanta_pkts >= 0):
            raise InputError(f"{where}: BBR needs high_gain > 1, bw_window_rounds >= 1, "
                             "rtt_window_s > 0, probe_rtt_duration_s > 0, phases in "
                             f"0..{len(GAIN_CYCLE) - 1} and quanta >= 0 (got {s})")


def _total_goodput(traj: Trajectory, classes: tuple[FlowClass, ...], link: Bottleneck,
                   warmup_s: float) -> dict[str, tuple[float, float]]:
    """The step check's metric: the total goodput after ``warmup_s`` (packets/s; floor
    0.1 % of the link)."""
    metrics = convergence_metrics(traj, classes, link, warmup_s)
    labels = [c.name or f"class{i}" for i, c in enumerate(classes)]
    total = sum(c.flows * metrics[f"{label}_goodput_pps"][0]
                for c, label in zip(classes, labels, strict=True))
    return {"total_goodput_pps": (total, 1e-3 * link.capacity_pps)}


class _Integrator:
    """``integrate(step_s, n_steps)`` for :class:`~tcpn.solvers.fluid.dde.DdeSystem`."""

    def __init__(self, classes: Sequence[FlowClass], link: Bottleneck):
        m = len(classes)
        rows = []
        for c in classes:
            s = c.bbr
            assert s is not None  # _validate
            rows.append([c.flows, c.prop_rtt_s, c.start_s, c.stop_s,
                         max(c.initial_cwnd_pkts, MIN_PIPE_PKTS), s.high_gain,
                         s.bw_window_rounds, s.rtt_window_s, s.probe_rtt_duration_s,
                         len(s.phases), c.max_window_pkts, c.packet_error_rate,
                         s.quanta_pkts, s.probe_quanta_pkts])
        self.cls = np.array(rows, dtype=float).reshape(m, N_B)
        self.prm = np.array([link.capacity_pps, link.buffer_pkts])
        self.queue0 = min(link.initial_queue_pkts, link.buffer_pkts)
        settings = [c.bbr for c in classes if c.bbr is not None]
        self.width = max(b.bw_window_rounds for b in settings)
        self.phases = np.zeros((m, max(len(b.phases) for b in settings)))
        for i, b in enumerate(settings):
            self.phases[i, :len(b.phases)] = b.phases

    def __call__(self, step_s: float, n_steps: int) -> Trajectory:
        m = self.cls.shape[0]
        # The bottleneck model's layout: windows, queue, RED average, tokens, shaper
        # queues, slow-start flags (the last three unused here).
        Y = np.zeros((n_steps + 1, 4 * m + 2))
        Y[0, :m] = self.cls[:, B_W0]
        Y[0, m] = self.queue0
        S = np.zeros((n_steps + 1, m * NS_CLASS + NS_QUEUE))
        E = np.zeros((n_steps + 1, m * N_E + 2))
        aux = np.zeros((m, N_X))
        ring = np.zeros((m, self.width))
        _run(Y, S, E, aux, ring, self.phases, self.prm, self.cls, step_s, n_steps, np.zeros((m, 2)),
             np.zeros((m, 2)), np.zeros(4 * m + 2))
        return Trajectory(Y, S, step_s)


def simulate_bbr(classes: Sequence[FlowClass], bottleneck: Bottleneck, horizon_s: float,
                 step_s: float | None = None, check_convergence: bool = True,
                 warmup_s: float = 0.0, max_steps: int = 20_000_000) -> BottleneckRun:
    """Integrate BBR classes through ``bottleneck`` to ``horizon_s``: the run and its
    summary (means after ``warmup_s``) are those of
    :func:`~tcpn.solvers.fluid.bottleneck.simulate_bottleneck` (the same
    :class:`~tcpn.solvers.fluid.bottleneck.BottleneckRun`: window, RTT, rates, queue).

    The step defaults to 1/80 of the shortest propagation RTT: the model's events (phase
    and round ends, the states' changes) fall on the grid, so its error is first order
    in the step. The step check (:func:`~tcpn.solvers.fluid.dde.solve`) compares the
    total goodput only. How the link is split between flows, and the queue that follows,
    turn on the order of events that fall within a step of each other and have no limit
    as the step shrinks (``bbr_2flows``, second run: flow f0's goodput 347, 428, 431,
    362, 368, 327 packets/s and the queue 37-42 packets at steps d/20 to d/640, the
    total within 0.1 %). A loss rate through a full buffer converges at first order
    only, each phase end moving by up to a step (two flows through 0.2 BDP of buffer:
    1.75, 1.87, 1.55, 1.32, 1.27 % at steps d/80 to d/1280). docs/fluid.md, "BBR".
    """
    if not 0 <= warmup_s < horizon_s:
        raise InputError(f"fluid BBR: needs 0 <= warmup_s < horizon_s "
                         f"(got {warmup_s}, {horizon_s})")
    _validate(classes, bottleneck)
    started = time.perf_counter()
    frozen = tuple(classes)
    min_rtt = min(c.prop_rtt_s for c in classes)
    system = DdeSystem(
        integrate=_Integrator(frozen, bottleneck), min_delay_s=min_rtt / 8,
        stiff_rates={"the round-trip dynamics (2/RTT)": 2.0 / min_rtt},
        summary=lambda traj: _total_goodput(traj, frozen, bottleneck, warmup_s),
        oscillation_columns=(len(frozen),))
    traj, report = solve(system, horizon_s, step_s, check_convergence, max_steps)
    run = BottleneckRun(classes=frozen, bottleneck=bottleneck, trajectory=traj,
                        convergence=report)
    run.summary = run_summary(run, warmup_s)
    run.wall_time_s = time.perf_counter() - started
    return run

