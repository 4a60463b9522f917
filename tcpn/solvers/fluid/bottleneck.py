"""Fluid model of TCP flow classes sharing one bottleneck: Reno (MGT), Vegas, token buckets, loss.

One queue of capacity C (packets/s) and buffer B, drop-tail, RED (gentle optional) or a
threshold marker, with or without ECN, fed by classes of identical flows
(:class:`FlowClass`). Per class: propagation RTT d, window W, and optionally a token
bucket (policer or shaper) in front of the queue and an independent packet error rate
after it. Equations (analytics.md 2.1, 3.4, 5, 6; symbols there):

- RTT: ``R = d + q/C (+ s/r in a shaper queue)``; sending rate ``x = W/R`` per flow.
- Reno, mean field (Misra-Gong-Towsley): ``dW/dt = 1/(bR) - (1-beta) W lambda`` with the
  congestion-signal rate ``lambda(t) = x(t-R) p(t-R)`` read from the history, capped at one
  reaction per RTT (``lambda <= 1/R``, RFC 3168's once-per-window rule, which also keeps
  a threshold marker's p = 1 meaningful); with timeouts the loss part follows MGT's
  ``(W-1) lambda p_TO(W)``, ``p_TO = min(1, 3/W)``; marks never time out.
- Reno, deterministic sawtooth (``variant="reno_sawtooth"``, few synchronised flows): W
  grows by 1/(bR) per second; lost or marked packets are counted, each whole packet of a
  probabilistic signal (random loss, RED) is one loss (Mathis' periodic loss), and the
  first whole packet of an overflow burst (full queue, policer) is one loss; a loss not
  inside an earlier reaction's window halves W one RTT later (analytics.md 5's analysis).
- Vegas (Low-Peterson-Wang): ``dW/dt = g(Delta)/R`` with the backlog estimate
  ``Delta = W (1 - dhat/R_obs)`` (R_obs the RTT seen d/2 ago, dhat = d + base-RTT error),
  ``g`` = +1 below alpha, -1 above beta, 0 between, smoothed linearly over
  ``vegas_smoothing_pkts``; losses and marks halve as for Reno.
- Queue: ``dq/dt = sum_i n_i a_i - C`` clamped to [0, B]; a full drop-tail queue drops the
  fraction ``1 - C/A`` of its arrivals. RED: ``dx/dt = K (q - x)``, ``K = -ln(1-w_q) C``.
  A threshold marker marks ``min(1, max(0, q - K))`` of the arrivals (the packet above K
  smoothed over one packet).
- Token bucket (rate r, depth b, queue Q; Q = 0 is a policer): tokens grow at r - X while
  the class's aggregate rate X is below r; empty, it passes r and drops (policer) or queues
  (shaper) the excess.
- Slow start (optional): ``dW/dt = W ln(1 + 1/b)/R`` until the first congestion signal
  arrives (then W <- beta W), W reaches ssthresh, or (Vegas) Delta > gamma.

>>> from tcpn.solvers.fluid.bottleneck import Bottleneck, FlowClass, simulate_bottleneck
>>> run = simulate_bottleneck([FlowClass(flows=60, prop_rtt_s=0.2, acks_per_packet=1,
...                                      slow_start=False)],
...                           Bottleneck(capacity_pps=3750, aqm="red", min_th_pkts=50,
...                                      max_th_pkts=550, max_p=0.1, queue_weight=1e-4),
...                           horizon_s=120, warmup_s=60)
>>> round(run.summary["queue_mean_pkts"])  # HMTG operating point q0 = 99.85 (analytics.md 9.2)
100
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
from numba import njit

from tcpn.errors import InputError
from tcpn.solvers.fluid.buffers import HISTORIES

if TYPE_CHECKING:
    from tcpn.solvers.fluid.bbr import BbrSettings
from tcpn.solvers.fluid.dde import (
    KERNEL,
    CheckStep,
    ConvergenceReport,
    DdeSystem,
    Trajectory,
    heun_correct,
    heun_predict,
    lagged,
    solve,
)

__all__ = [
    "Bottleneck",
    "BottleneckRun",
    "FlowClass",
    "TokenBucket",
    "build_system",
    "convergence_metrics",
    "run_summary",
    "simulate_bottleneck",
    "validate_link",
]

Variant = Literal["reno", "reno_sawtooth", "vegas", "bbr"]
_VARIANTS = {"reno": 0, "reno_sawtooth": 1, "vegas": 2}
_AQMS = {"droptail": 0, "red": 1, "threshold": 2}

# Columns of the per-class parameter table ``cls``.
(C_N, C_D, C_VAR, C_B, C_TO, C_ALPHA, C_BETA, C_DHAT, C_RATE, C_DEPTH, C_TBQ, C_PER,
 C_START, C_STOP, C_ECN, C_DEC, C_SSTH, C_GAMMA) = range(18)
N_CLS = 18
# Entries of the global parameter vector ``prm``.
(P_CAP, P_BUF, P_AQM, P_MIN, P_MAX, P_MAXP, P_KF, P_GENTLE, P_THR, P_EPS, P_M,
 P_PSCALE) = range(12)
N_PRM = 12
# Per-class signal columns (block i*NS_CLASS), then the queue's own.
(S_LOSS, S_MARK, S_GOOD, S_RTT, S_SEND, S_LIMDROP) = range(6)
NS_CLASS = 6
(SQ_PAQM, SQ_PFULL, SQ_INFLOW, SQ_DROP, SQ_MARK) = range(5)
NS_QUEUE = 5
# Time means per class: the window, then the NS_CLASS signals.
N_MEANS = 1 + NS_CLASS
#: Two classes of the same parameters merge once their windows agree within this
#: (relative) over the last round trip; checked every few round trips.
MERGE_TOLERANCE = 1e-3
MERGE_CHECK_RTTS = 4
#: A Heun step spans several grid rows while its embedded error estimate (Heun minus
#: Euler, relative to the state, floor one packet) stays below this; the next step's
#: length follows from the estimate (it grows as the square of the step), up to the
#: shortest delay the derivative reads. 0: one row per step (also the rule behind a
#: threshold marker, whose sliding mode the estimate does not see). The convergence
#: check cannot see the error of strides (its run strides with the same tolerance), so
#: this one is held to a fifth of the check's against the fixed grid on every shipped
#: scenario (tests/test_fluid_reference.py: 0.08 % at most; 1e-4 would give 0.38 %).
STRIDE_TOLERANCE = 1e-5
# Columns besides the loss signal that the integration reads inside a stride, per class
# (bits): marks (ECN), the RTT (Vegas), the window (a class that may merge).
READS_MARK, READS_RTT, READS_WINDOW = 1, 2, 4
# Per-class discrete state ``aux`` of the sawtooth: counters of probabilistic and of
# overflow losses, pending reaction time, blocked-until time.
(A_COUNT, A_BURST, A_PENDING, A_BLOCKED) = range(4)


@dataclass(frozen=True)
class TokenBucket:
    """A token-bucket limiter in front of the bottleneck: a policer when ``queue_pkts`` = 0."""

    rate_pps: float
    depth_pkts: float
    queue_pkts: float = 0.0


@dataclass(frozen=True)
class FlowClass:
    """``flows`` identical long-lived flows (same variant, RTT, start and stop)."""

    prop_rtt_s: float
    flows: int = 1
    variant: Variant = "reno"
    acks_per_packet: float = 2.0
    timeouts: bool = False
    ecn: bool = False
    decrease_factor: float = 0.5
    initial_cwnd_pkts: float = 1.0
    slow_start: bool = True
    initial_ssthresh_pkts: float = math.inf
    max_window_pkts: float = math.inf
    vegas_alpha_pkts: float = 2.0
    vegas_beta_pkts: float = 4.0
    vegas_gamma_pkts: float = 1.0
    base_rtt_error_s: float = 0.0
    limiter: TokenBucket | None = None
    packet_error_rate: float = 0.0
    start_s: float = 0.0
    stop_s: float = math.inf
    name: str = ""
    bbr: BbrSettings | None = None  # variant "bbr": its law (tcpn.solvers.fluid.bbr)


@dataclass(frozen=True)
class Bottleneck:
    """The shared queue: ``aqm`` is ``droptail``, ``red`` or ``threshold`` (marks above K).

    ``red_signal_scale`` multiplies RED's probability (1 in MGT; ns-3's count-based
    spacing delivers about 2/3 of it with ``wait``, analytics.md 10). A threshold queue
    marks ECN-capable flows and never drops below the buffer limit.
    """

    capacity_pps: float
    buffer_pkts: float = math.inf
    aqm: Literal["droptail", "red", "threshold"] = "droptail"
    min_th_pkts: float = 5.0
    max_th_pkts: float = 15.0
    max_p: float = 0.02
    queue_weight: float = 0.002
    gentle: bool = False
    threshold_pkts: float = math.inf
    ecn: bool = False
    vegas_smoothing_pkts: float = 0.5
    red_signal_scale: float = 1.0
    initial_queue_pkts: float = 0.0


@njit(**KERNEL, inline="always")
def _signals(t, y, prm, cls, row, live, n_live):
    m = int(prm[P_M])
    cap = prm[P_CAP]
    q = y[m]
    avg = y[m + 1]
    inflow = 0.0
    for ii in range(n_live):
        i = live[ii]
        base = i * NS_CLASS
        d = cls[i, C_D]
        rate = cls[i, C_RATE]
        shq = y[2 * m + 2 + i]
        rtt = d + q / cap
        if rate < np.inf and shq > 0.0:
            rtt += shq / rate
        active = cls[i, C_START] <= t < cls[i, C_STOP]
        x = y[i] / rtt if active else 0.0
        n = cls[i, C_N]
        agg = n * x
        passed = agg
        limdrop = 0.0
        if rate < np.inf:
            tokens = y[m + 2 + i]
            if shq > 0.0 or (tokens <= 0.0 and agg > rate):
                passed = rate if agg > rate or shq > 0.0 else agg
                full = shq >= cls[i, C_TBQ]
                if full and agg > rate:
                    limdrop = 1.0 - rate / agg
        row[base + S_RTT] = rtt
        row[base + S_SEND] = x
        row[base + S_LIMDROP] = limdrop
        row[base + S_GOOD] = passed / n  # provisional: limiter output per flow
        inflow += passed
    # Queue: AQM probability and the fraction dropped by a full buffer.
    aqm = int(prm[P_AQM])
    paqm = 0.0
    if aqm == 1:
        lo = prm[P_MIN]
        hi = prm[P_MAX]
        maxp = prm[P_MAXP]
        if avg < lo:
            paqm = 0.0
        elif avg <= hi:
            paqm = maxp * (avg - lo) / (hi - lo)
        elif prm[P_GENTLE] > 0.0 and avg <= 2.0 * hi:
            paqm = maxp + (1.0 - maxp) * (avg - hi) / hi
        else:
            paqm = 1.0
        paqm = min(1.0, paqm * prm[P_PSCALE])
    elif aqm == 2:
        # Marks arrivals that find more than K packets; over the one packet above K the
        # fluid marks the fraction of arrivals that see it (a ramp, not a jump).
        paqm = min(1.0, max(0.0, q - prm[P_THR]))
    pfull = 0.0
    if q >= prm[P_BUF] and inflow > cap:
        pfull = 1.0 - cap / inflow
    qdrop = 0.0
    qmark = 0.0
    for ii in range(n_live):
        i = live[ii]
        base = i * NS_CLASS
        x = row[base + S_SEND]
        n = cls[i, C_N]
        passed = row[base + S_GOOD]
        kept = 1.0 - row[base + S_LIMDROP]  # a shaper queues what it does not pass yet
        ecn = cls[i, C_ECN] > 0.0
        ploss_q = pfull + (1.0 - pfull) * (0.0 if ecn or aqm == 2 else paqm)
        pmark_q = (1.0 - pfull) * paqm if ecn else 0.0
        per = cls[i, C_PER]
        qdrop += n * passed * ploss_q
        qmark += n * passed * pmark_q
        # Probability a sent packet is lost anywhere, or arrives marked.
        ploss = 1.0 - kept * (1.0 - ploss_q) * (1.0 - per)
        pmark = kept * pmark_q * (1.0 - per)
        row[base + S_LOSS] = x * ploss
        row[base + S_MARK] = x * pmark
        row[base + S_GOOD] = x * (1.0 - ploss)
        row[base + S_LIMDROP] = x * (1.0 - kept)
    qb = m * NS_CLASS
    row[qb + SQ_PAQM] = paqm
    row[qb + SQ_PFULL] = pfull
    row[qb + SQ_INFLOW] = inflow
    row[qb + SQ_DROP] = qdrop
    row[qb + SQ_MARK] = qmark


@njit(**KERNEL, inline="always")
def _rtts(y, prm, cls, row, live, n_live):
    """The live classes' RTTs at state ``y`` into ``row`` (what :func:`_signals` writes
    there, the same arithmetic): all that slow start's jump reads of a new row."""
    m = int(prm[P_M])
    q = y[m]
    for ii in range(n_live):
        i = live[ii]
        rate = cls[i, C_RATE]
        shq = y[2 * m + 2 + i]
        rtt = cls[i, C_D] + q / prm[P_CAP]
        if rate < np.inf and shq > 0.0:
            rtt += shq / rate
        row[i * NS_CLASS + S_RTT] = rtt


@njit(**KERNEL, inline="always")
def _rhs(t, y, Y, S, k, h, prm, cls, dy, live, n_live):
    m = int(prm[P_M])
    cap = prm[P_CAP]
    q = y[m]
    avg = y[m + 1]
    inflow = 0.0
    for ii in range(n_live):
        i = live[ii]
        base = i * NS_CLASS
        n = cls[i, C_N]
        d = cls[i, C_D]
        rate = cls[i, C_RATE]
        tok_i = m + 2 + i
        shq_i = 2 * m + 2 + i
        shq = y[shq_i]
        rtt = d + q / cap
        if rate < np.inf and shq > 0.0:
            rtt += shq / rate
        active = cls[i, C_START] <= t < cls[i, C_STOP]
        w = y[i]
        x = w / rtt if active else 0.0
        agg = n * x
        # Token bucket (aggregate of the class).
        dy[tok_i] = 0.0
        dy[shq_i] = 0.0
        dy[3 * m + 2 + i] = 0.0
        passed = agg
        if rate < np.inf:
            tokens = y[tok_i]
            depth = cls[i, C_DEPTH]
            qcap = cls[i, C_TBQ]
            if shq > 0.0 or (tokens <= 0.0 and agg > rate):
                passed = rate if agg > rate or shq > 0.0 else agg
                if qcap > 0.0:
                    ds = agg - rate
                    if (shq <= 0.0 and ds < 0.0) or (shq >= qcap and ds > 0.0):
                        ds = 0.0
                    dy[shq_i] = ds
            else:
                dt_ = rate - agg
                if tokens >= depth and dt_ > 0.0:
                    dt_ = 0.0
                dy[tok_i] = dt_
        inflow += passed
        # Window.
        if not active:
            dy[i] = 0.0
            continue
        b = cls[i, C_B]
        variant = int(cls[i, C_VAR])
        lam_l = lagged(S, k, h, t, rtt, base + S_LOSS)
        # Only ECN-capable classes are marked (S_MARK is 0 for the others).
        lam_m = lagged(S, k, h, t, rtt, base + S_MARK) if cls[i, C_ECN] > 0.0 else 0.0
        tot = lam_l + lam_m
        if tot * rtt > 1.0:  # at most one reaction per RTT
            lam_l /= tot * rtt
            lam_m /= tot * rtt
        cut = 1.0 - cls[i, C_DEC]
        in_ss = y[3 * m + 2 + i] > 0.5  # the slow-start flag, changed only by _jump
        if variant == 2:
            r_obs = lagged(S, k, h, t, 0.5 * d, base + S_RTT)
            backlog = w * (1.0 - cls[i, C_DHAT] / r_obs)
            if in_ss:
                g = w * math.log(1.0 + 1.0 / b)
            else:
                eps = prm[P_EPS]
                if backlog < cls[i, C_ALPHA]:
                    g = min(1.0, (cls[i, C_ALPHA] - backlog) / eps)
                elif backlog > cls[i, C_BETA]:
                    g = -min(1.0, (backlog - cls[i, C_BETA]) / eps)
                else:
                    g = 0.0
            dy[i] = g / rtt - cut * w * (lam_l + lam_m)
        elif in_ss:
            dy[i] = w * math.log(1.0 + 1.0 / b) / rtt
        elif variant == 1:
            dy[i] = 1.0 / (b * rtt)
        else:
            dw = 1.0 / (b * rtt) - cut * w * lam_m
            if cls[i, C_TO] > 0.0:
                pto = min(1.0, 3.0 / w)
                dw -= lam_l * (cut * w * (1.0 - pto) + (w - 1.0) * pto)
            else:
                dw -= cut * w * lam_l
            dy[i] = dw
    dq = inflow - cap
    if (q <= 0.0 and dq < 0.0) or (q >= prm[P_BUF] and dq > 0.0):
        dq = 0.0
    dy[m] = dq
    dy[m + 1] = prm[P_KF] * (q - avg)


@njit(**KERNEL, inline="always")
def _jump(t, y, Y, S, k, h, prm, cls, aux, live, n_live):
    m = int(prm[P_M])
    for ii in range(n_live):
        i = live[ii]
        if not (cls[i, C_START] <= t < cls[i, C_STOP]):
            continue
        base = i * NS_CLASS
        rtt = S[k, base + S_RTT]
        variant = int(cls[i, C_VAR])
        ss_i = 3 * m + 2 + i
        if y[ss_i] > 0.5:
            signal = lagged(S, k, h, t, rtt, base + S_LOSS)
            if cls[i, C_ECN] > 0.0:  # (S_MARK is 0 for the others, and not written in strides)
                signal += lagged(S, k, h, t, rtt, base + S_MARK)
            leave = y[i] >= cls[i, C_SSTH]
            if variant == 2:
                r_obs = lagged(S, k, h, t, 0.5 * cls[i, C_D], base + S_RTT)
                leave = leave or y[i] * (1.0 - cls[i, C_DHAT] / r_obs) > cls[i, C_GAMMA]
            if signal > 0.0:
                y[i] = max(cls[i, C_DEC] * y[i], 1.0)
                leave = True
                aux[i, A_BLOCKED] = t + rtt
            if leave:
                y[ss_i] = 0.0
            continue
        if variant != 1:
            continue
        # Overflow drops (full queue or limiter) come in bursts: the first whole packet
        # of an episode triggers, the rest of it is absorbed. Probabilistic signals
        # (random loss, RED, marks) carry over: one loss every 1/p packets.
        limdrop = S[k, base + S_LIMDROP]
        overflow = limdrop + (S[k, base + S_SEND] - limdrop) * S[k, m * NS_CLASS + SQ_PFULL]
        spread = max(S[k, base + S_LOSS] + S[k, base + S_MARK] - overflow, 0.0)
        reacting = aux[i, A_PENDING] < np.inf or t < aux[i, A_BLOCKED]
        trigger = False
        aux[i, A_COUNT] += h * spread
        if aux[i, A_COUNT] >= 1.0:
            aux[i, A_COUNT] -= 1.0
            trigger = True
        aux[i, A_BURST] = 0.0 if reacting else aux[i, A_BURST] + h * overflow
        if aux[i, A_BURST] >= 1.0:
            aux[i, A_BURST] = 0.0
            trigger = True
        if trigger and not reacting:
            aux[i, A_PENDING] = t + rtt
        if t >= aux[i, A_PENDING]:
            y[i] = max(cls[i, C_DEC] * y[i], 1.0)
            aux[i, A_PENDING] = np.inf
            aux[i, A_BLOCKED] = t + rtt


@njit(**KERNEL)
def _join(Y, S, y0, lo, k, c, prm, cls):
    """Rows ``lo``..``k`` of class ``c``, which joins the integration at row ``k``: those
    of a flow not yet started (its initial state; no traffic, the RTT of an empty path
    plus the queue)."""
    m = int(prm[P_M])
    for j in (c, m + 2 + c, 2 * m + 2 + c, 3 * m + 2 + c):
        for r in range(lo, k + 1):
            Y[r, j] = y0[j]
    base = c * NS_CLASS
    for r in range(lo, k + 1):
        for j in range(NS_CLASS):
            S[r, base + j] = 0.0
        S[r, base + S_RTT] = cls[c, C_D] + Y[r, m] / prm[P_CAP]


@njit(**KERNEL)
def _live_columns(live, n_live, m, cls, cols):
    """The state columns of the live classes and the queue's, into ``cols``; their count.

    A class's token and shaper-queue columns are integrated only if it has a token
    bucket: without one they hold no state (their derivative is 0, nothing reads them,
    and the series say NaN), so after its join they are not written."""
    n = 0
    for ii in range(n_live):
        i = live[ii]
        cols[n] = i
        cols[n + 1] = 3 * m + 2 + i
        n += 2
        if cls[i, C_RATE] < np.inf:
            cols[n] = m + 2 + i
            cols[n + 1] = 2 * m + 2 + i
            n += 2
    cols[n] = m
    cols[n + 1] = m + 1
    return n + 2


@njit(**KERNEL)
def _merge(Y, S, k, h, cls, kind, live, n_live, merged, tol, m):
    """Merge every live class into an earlier live one of the same kind whose window
    agreed with it within ``tol`` (relative) over the last round trip; the live count.

    Identical classes of a delay-differential system stay identical, so once two
    classes' states and the history their delayed terms read agree, one class of
    their summed flows carries both on.
    """
    t = k * h
    kept = 0
    for a in range(n_live):
        i = live[a]
        target = -1
        rows = int(S[k, i * NS_CLASS + S_RTT] / h) + 2
        if kind[i] >= 0 and rows <= k and Y[k, 3 * m + 2 + i] < 0.5 \
                and cls[i, C_START] <= t - rows * h:
            for b in range(kept):
                j = live[b]
                if kind[j] != kind[i] or Y[k, 3 * m + 2 + j] > 0.5 \
                        or cls[j, C_START] > t - rows * h:
                    continue
                agree = True
                for r in range(k - rows, k + 1):
                    if abs(Y[r, i] - Y[r, j]) > tol * Y[r, j]:
                        agree = False
                        break
                if agree:
                    target = j
                    break
        if target >= 0:
            cls[target, C_N] += cls[i, C_N]
            merged[i, 0] = target
            merged[i, 1] = k
        else:
            live[kept] = i
            kept += 1
    return kept


@njit(**KERNEL)
def _stride_error(y0, y1, f1, f2, H, cols, n_cols):
    """Heun's embedded error estimate (its difference from Euler's step) over a stride,
    relative to the state (floor: one packet); the largest over the integrated columns."""
    worst = 0.0
    for jj in range(n_cols):
        j = cols[jj]
        scale = max(abs(y0[j]), abs(y1[j]), 1.0)
        worst = max(worst, 0.5 * H * abs(f2[j] - f1[j]) / scale)
    return worst


@njit(**KERNEL, inline="always")
def _next_stride(stride, error, tol):
    """The stride whose error estimate would be about 0.8 of ``tol`` (the estimate grows
    as the square of the step), from this stride's ``error``."""
    if error <= 0.0:
        return 1 << 30
    return int(stride * 0.9 * math.sqrt(tol / error))


@njit(**KERNEL)
def _fill_stride(Y, S, k, stride, live, n_live, m, reads):
    """Rows k+1..k+stride-1 of a stride, linear between its ends, of the columns read at
    rows that are not step ends: the queue (a joining class's RTT reads it) and, per
    class, what ``reads[i]`` says (:func:`_history_reads`): the loss signal (the
    derivative reads it a round trip back), marks of an ECN class, the RTT of a Vegas
    class, the window of a class the merge check compares. The other columns are written
    on demand (:func:`_fill_lazy`)."""
    _fill_column(Y, m, k, stride)
    for ii in range(n_live):
        i = live[ii]
        base = i * NS_CLASS
        _fill_column(S, base + S_LOSS, k, stride)
        if reads[i] & READS_MARK:
            _fill_column(S, base + S_MARK, k, stride)
        if reads[i] & READS_RTT:
            _fill_column(S, base + S_RTT, k, stride)
        if reads[i] & READS_WINDOW:
            _fill_column(Y, i, k, stride)


@njit(**KERNEL)
def _fill_lazy(A, columns, from_rows, strides, n_strides):
    """The rows inside each stride (``strides[s]`` = its first and last rows) of
    ``columns`` of ``A``, linear between the stride's ends; for column ``columns[jj]``
    only the strides from row ``from_rows[jj]`` on."""
    for jj in range(columns.shape[0]):
        j = columns[jj]
        for s in range(n_strides):
            if strides[s, 0] >= from_rows[jj]:
                _fill_column(A, j, strides[s, 0], strides[s, 1] - strides[s, 0])


@njit(**KERNEL, inline="always")
def _fill_column(A, j, k, stride):
    a = A[k, j]
    slope = (A[k + stride, j] - a) / stride
    for r in range(1, stride):
        A[k + r, j] = a + slope * r


@njit(**KERNEL)
def _leaves_slow_start(S, Y, k, stride, h, prm, cls, live, n_live):
    """Whether a class in slow start would leave it at one of rows k+1..k+stride: its
    congestion signal (history read one RTT back, the RTT interpolated between the rows'
    ends) turns positive at one of them, or its window reaches ssthresh at the end."""
    m = int(prm[P_M])
    t = k * h
    for ii in range(n_live):
        i = live[ii]
        if Y[k, 3 * m + 2 + i] < 0.5 or not (cls[i, C_START] <= t < cls[i, C_STOP]):
            continue
        if Y[k + stride, i] >= cls[i, C_SSTH]:
            return True
        base = i * NS_CLASS
        rtt0 = S[k, base + S_RTT]
        rtt1 = S[k + stride, base + S_RTT]
        for r in range(1, stride + 1):
            tr = t + r * h
            rtt = rtt0 + (rtt1 - rtt0) * r / stride
            signal = lagged(S, k, h, tr, rtt, base + S_LOSS)
            if cls[i, C_ECN] > 0.0:
                signal += lagged(S, k, h, tr, rtt, base + S_MARK)
            if signal > 0.0:
                return True
    return False


@njit(**KERNEL)
def _steps(Y, S, work, lower, upper, h, k_from, k_to, k_check, stride, prm, cls, aux, live,
           n_live, cols, n_cols, max_stride, stride_tol, strides, n_strides, reads):
    """Heun steps from row ``k_from`` to row ``k_to`` (or the first row past ``k_check``)
    for the live classes, the first at most ``stride`` rows long; the first row with a
    non-finite state (or -1), the row reached and the next stride. Each step longer than
    a row is recorded in ``strides[n_strides[0]]`` (first and last row).

    The step size is error-controlled on the grid: one Heun step spans up to
    ``max_stride`` grid rows while its embedded error estimate stays below
    ``stride_tol`` (the rows between are interpolated, so the history stays on the
    grid); the next step's length follows from the estimate (at most twice this one; a
    step that fails is retried at most half as long). A Reno class in
    slow start strides too, but a stride inside which it would leave slow start halves
    until the jump falls on the row where the fixed grid puts it; a sawtooth, or Vegas
    in slow start, steps row by row (their discrete events are timed to the row).
    """
    f1 = work[0]
    f2 = work[1]
    pred = work[2]
    m = int(prm[P_M])
    provisional = True
    row_by_row = True
    sawtooth = True
    k = k_from
    error = 0.0
    while k < k_to and (k == k_from or k < k_check):
        t = k * h
        _rhs(t, Y[k], Y, S, k, h, prm, cls, f1, live, n_live)
        if provisional:
            # Signals at the predicted state: only slow start's jump (its RTT) and the
            # sawtooth's (all of them) read them (the derivative reads rows up to k, and
            # lagged() never past k).
            provisional = False
            row_by_row = False
            sawtooth = False
            for ii in range(n_live):
                i = live[ii]
                in_ss = Y[k, 3 * m + 2 + i] > 0.5
                if in_ss or cls[i, C_VAR] == 1.0:
                    provisional = True
                if cls[i, C_VAR] == 1.0:
                    sawtooth = True
                if cls[i, C_VAR] == 1.0 or (in_ss and cls[i, C_VAR] == 2.0):
                    row_by_row = True
        stride = 1 if row_by_row else min(stride, k_to - k)
        while True:
            H = stride * h
            heun_predict(Y[k], f1, H, lower, upper, pred, cols, n_cols)
            if sawtooth:
                _signals(t + H, pred, prm, cls, S[k + stride], live, n_live)
            elif provisional:
                _rtts(pred, prm, cls, S[k + stride], live, n_live)
            _rhs(t + H, pred, Y, S, k, h, prm, cls, f2, live, n_live)
            heun_correct(Y[k], f1, f2, H, lower, upper, Y[k + stride], cols, n_cols)
            error = _stride_error(Y[k], Y[k + stride], f1, f2, H, cols, n_cols)
            if stride == 1:
                break
            if error <= stride_tol and not (provisional and _leaves_slow_start(
                    S, Y, k, stride, h, prm, cls, live, n_live)):
                break
            stride = max(1, min(stride // 2, _next_stride(stride, error, stride_tol)))
        _jump(t + H, Y[k + stride], Y, S, k + stride, h, prm, cls, aux, live, n_live)
        _signals(t + H, Y[k + stride], prm, cls, S[k + stride], live, n_live)
        if stride > 1:
            _fill_stride(Y, S, k, stride, live, n_live, m, reads)
            strides[n_strides[0], 0] = k
            strides[n_strides[0], 1] = k + stride
            n_strides[0] += 1
        k += stride
        stride = max(1, min(2 * stride, max_stride, _next_stride(stride, error, stride_tol)))
        for jj in range(n_cols):
            # A non-finite state ends the run (rows inside a stride are interpolations
            # of its ends, and the lazy columns there are not written yet).
            if not abs(Y[k, cols[jj]]) < np.inf:
                return k, k, stride
    return -1, k, stride


@njit(**KERNEL)
def _integrate(Y, S, work, y0, lower, upper, h, n_steps, prm, cls, aux, order, live, cols,
               kind, merged, merge_tol, check_rows, max_stride, stride_tol, strides,
               n_strides, reads, lead, join_from):
    """Heun steps over rows 0..n_steps for the classes started so far; the first row with
    a non-finite state, or -1. Classes join in ``order`` (of start time) one step before
    their start, with their rows from ``lead[c]`` rows before the join (their first
    written row into ``join_from[c]``); with ``merge_tol`` > 0 converged classes merge
    every ``check_rows``."""
    m = int(prm[P_M])
    Y[0, m] = y0[m]
    Y[0, m + 1] = y0[m + 1]
    n_live = 0
    joined = 0
    k = 0
    stride = 1
    next_check = check_rows if merge_tol > 0.0 else n_steps
    while True:
        if joined < m and (cls[order[joined], C_START] <= (k + 1) * h or k == n_steps):
            # (At the end, classes that never started join with their initial state.)
            stride = 1
            while joined < m and (cls[order[joined], C_START] <= (k + 1) * h
                                  or k == n_steps):
                c = order[joined]
                # Only the rows its delays can read (a round trip at a full buffer and
                # shaper before the join); the earlier ones are written on demand.
                join_from[c] = max(0, k - lead[c])
                _join(Y, S, y0, join_from[c], k, c, prm, cls)
                live[n_live] = c
                n_live += 1
                joined += 1
        n_cols = _live_columns(live, n_live, m, cls, cols)
        if k == 0:
            _signals(0.0, Y[0], prm, cls, S[0], live, n_live)
        if k >= next_check:
            n_live = _merge(Y, S, k, h, cls, kind, live, n_live, merged, merge_tol, m)
            n_cols = _live_columns(live, n_live, m, cls, cols)
            next_check = k + check_rows
        if k == n_steps:
            return -1
        # Run to the next join, or past the next merge check (without cutting a step).
        k_to = n_steps
        if joined < m:
            k_to = min(k_to, max(k + 1, int(cls[order[joined], C_START] / h) - 1))
        bad, k, stride = _steps(Y, S, work, lower, upper, h, k, k_to, next_check, stride,
                                prm, cls, aux, live, n_live, cols, n_cols, max_stride,
                                stride_tol, strides, n_strides, reads)
        if bad >= 0:
            return bad


@njit(**KERNEL, inline="always")
def _class_value(Y, S, c, q, r):
    """Column ``q`` of class ``c`` at row ``r`` (q = 0: the window, 1 + j: signal j)."""
    return Y[r, c] if q == 0 else S[r, c * NS_CLASS + q - 1]


@njit(**KERNEL, inline="always")
def _owner(merged, c, r):
    """The class whose own columns hold class ``c``'s row ``r``."""
    while merged[c, 0] >= 0 and merged[c, 1] < r:
        c = merged[c, 0]
    return c


@njit(**KERNEL)
def _advance(Y, S, c, target, first, pos, acc, at_first):
    while pos[c] > target:
        pos[c] -= 1
        for q in range(N_MEANS):
            acc[c, q] += _class_value(Y, S, c, q, pos[c])
        if pos[c] == first:
            for q in range(N_MEANS):
                at_first[c, q] = acc[c, q]


@njit(**KERNEL)
def _class_means(Y, S, first, merged, by_end, pos, acc, at_first, means):
    """Time means over rows first..end of every class's window and signals, following
    merged classes into the class that carried them on; each row is read once."""
    n = Y.shape[0] - 1
    m = merged.shape[0]
    for idx in range(m):
        c = by_end[idx]  # the classes in decreasing order of the row they end at
        if merged[c, 0] >= 0:
            end = merged[c, 1]
            target = merged[c, 0]
            _advance(Y, S, target, end + 1, first, pos, acc, at_first)
            for q in range(N_MEANS):
                acc[c, q] = acc[target, q]
        else:
            end = n
            for q in range(N_MEANS):
                acc[c, q] = 0.0
        pos[c] = end + 1
    for idx in range(m):
        c = by_end[idx]
        end = merged[c, 1] if merged[c, 0] >= 0 else n
        if end < first:
            for q in range(N_MEANS):
                at_first[c, q] = at_first[merged[c, 0], q]
        else:
            _advance(Y, S, c, first, first, pos, acc, at_first)
    for c in range(m):
        head = _owner(merged, c, first)
        tail = _owner(merged, c, n)
        for q in range(N_MEANS):
            if first >= n:
                means[c, q] = _class_value(Y, S, tail, q, n)
            else:
                total = at_first[c, q] - 0.5 * (_class_value(Y, S, head, q, first)
                                                + _class_value(Y, S, tail, q, n))
                means[c, q] = total / (n - first)


@njit(**KERNEL)
def _complete(Y, S, merged, by_end):
    """Fill the rows of every merged class after its merge from the class that carried it
    on (latest merges first, so that chains resolve)."""
    n = Y.shape[0] - 1
    m = merged.shape[0]
    for idx in range(m):
        c = by_end[idx]
        if merged[c, 0] < 0:
            continue
        target = merged[c, 0]
        for a, b in ((c, target), (m + 2 + c, m + 2 + target),
                     (2 * m + 2 + c, 2 * m + 2 + target), (3 * m + 2 + c, 3 * m + 2 + target)):
            for r in range(merged[c, 1] + 1, n + 1):
                Y[r, a] = Y[r, b]
        for j in range(NS_CLASS):
            for r in range(merged[c, 1] + 1, n + 1):
                S[r, c * NS_CLASS + j] = S[r, target * NS_CLASS + j]


@dataclass(frozen=True)
class _Integrator:
    """The bottleneck model's arrays and its compiled loop, called by the solver with a
    step and a number of steps (a fresh copy of everything a run changes; the histories
    from :data:`~tcpn.solvers.fluid.buffers.HISTORIES`, memory no one holds any more)."""

    y0: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    prm: np.ndarray
    cls: np.ndarray
    aux: np.ndarray
    kind: np.ndarray
    merge_tolerance: float
    check_every_s: float
    max_stride_s: float
    stride_tolerance: float
    reads: np.ndarray
    lead_s: np.ndarray
    order: np.ndarray

    def __call__(self, step_s: float, n_steps: int) -> Trajectory:
        m = self.cls.shape[0]
        ny = self.y0.shape[0]
        # Column-major: the columns of classes not integrated (merged ones after their
        # merge) are never touched, so they cost no memory until they are filled; the
        # memory of histories nobody holds any more is reused (no page to zero).
        Y = HISTORIES.take(n_steps + 1, ny)
        S = HISTORIES.take(n_steps + 1, m * NS_CLASS + NS_QUEUE)
        merged = np.full((m, 2), -1, dtype=np.int64)
        strides = np.empty((n_steps // 2 + 1, 2), dtype=np.int64)
        n_strides = np.zeros(1, dtype=np.int64)
        join_from = np.zeros(m, dtype=np.int64)
        lead = np.minimum(np.ceil(self.lead_s / step_s) + 2, n_steps + 1).astype(np.int64)
        bad = _integrate(Y, S, np.empty((3, ny)), self.y0, self.lower, self.upper, step_s,
                         n_steps, self.prm, self.cls.copy(), self.aux.copy(), self.order,
                         np.empty(m, dtype=np.int64), np.empty(ny, dtype=np.int64),
                         self.kind, merged, self.merge_tolerance,
                         max(1, round(self.check_every_s / step_s)),
                         max(1, int(self.max_stride_s / step_s))
                         if self.stride_tolerance > 0 else 1, self.stride_tolerance,
                         strides, n_strides, self.reads, lead, join_from)
        strides = strides[:n_strides[0]]
        step_rows = np.empty(n_steps + 2, dtype=np.int64)
        step_rows = step_rows[:_step_ends(strides, 0, n_steps, step_rows)]
        return Trajectory(Y, S, step_s, nonfinite_row=bad, step_rows=step_rows,
                          layout=_Layout(merged, strides, self.reads,
                                         _Joins(join_from, self.y0, self.prm, self.cls)))


def _history_reads(cls: np.ndarray, kind: np.ndarray, merge_tolerance: float) -> np.ndarray:
    """Per class, the columns besides its loss signal that the integration reads inside
    a stride (:data:`READS_MARK`, :data:`READS_RTT`, :data:`READS_WINDOW` bits): marks
    of an ECN class, the RTT of a Vegas class, the window of a class that may merge."""
    reads = np.where(cls[:, C_ECN] > 0.0, READS_MARK, 0)
    reads |= np.where(cls[:, C_VAR] == _VARIANTS["vegas"], READS_RTT, 0)
    if merge_tolerance > 0:
        reads |= np.where(kind >= 0, READS_WINDOW, 0)
    return reads.astype(np.int64)


def _lazy_columns(reads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``Y`` and ``S`` that :func:`_fill_stride` leaves unwritten inside a
    stride (all but the queue, the loss signals and what ``reads`` names)."""
    m = reads.shape[0]
    lazy_y = [c for c in range(m) if not reads[c] & READS_WINDOW]
    lazy_y += range(m + 1, 4 * m + 2)  # RED average, token buckets, slow start
    lazy_s = []
    for c in range(m):
        base = c * NS_CLASS
        lazy_s += [base + S_GOOD, base + S_SEND, base + S_LIMDROP]
        if not reads[c] & READS_MARK:
            lazy_s.append(base + S_MARK)
        if not reads[c] & READS_RTT:
            lazy_s.append(base + S_RTT)
    lazy_s += range(m * NS_CLASS, m * NS_CLASS + NS_QUEUE)
    return np.array(lazy_y, dtype=np.int64), np.array(lazy_s, dtype=np.int64)


@dataclass
class _Joins:
    """The rows before each class's join not written by the integration (rows
    0..``join_from[c]`` - 1 of class c) and what writes them."""

    join_from: np.ndarray
    y0: np.ndarray
    prm: np.ndarray
    cls: np.ndarray
    done: bool = False


@njit(**KERNEL)
def _write_joins(Y, S, y0, join_from, prm, cls):
    """Rows 0..``join_from[c]`` - 1 of every class c (see :func:`_join`)."""
    for c in range(join_from.shape[0]):
        if join_from[c] > 0:
            _join(Y, S, y0, 0, join_from[c] - 1, c, prm, cls)


class _Layout:
    """How a run's history is stored: which class carried which on from which row
    (``merged[c] = (target, row)``), and the steps longer than a row (``strides[s]`` =
    its first and last rows), inside which only the columns the integration reads were
    written (``reads``, see :func:`_fill_stride`), and the rows before each class's join
    that its delays cannot read (``joins``, not written by the integration). Time means
    are taken from the step ends (the series are linear in between), so a summary writes
    nothing but the rows before a join it reads; :meth:`fill` writes the rest on
    demand."""

    def __init__(self, merged: np.ndarray, strides: np.ndarray,
                 reads: np.ndarray | None = None, joins: _Joins | None = None):
        self.merged = merged
        self.strides = strides
        m = merged.shape[0]
        self.reads = np.zeros(m, dtype=np.int64) if reads is None else reads
        self.joins = joins
        self.has_merges = bool(merged[:, 0].max(initial=-1) >= 0)
        self.complete = not self.has_merges and strides.shape[0] == 0
        self._means: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._strides_filled = False

    @functools.cached_property
    def by_end(self) -> np.ndarray:
        """The classes in decreasing order of the row they end at (unmerged: after
        every row), which is how merged classes' rows are read and written."""
        ends = np.where(self.merged[:, 0] >= 0, self.merged[:, 1], 2**62)
        return np.argsort(-ends, kind="stable")

    def means(self, traj: Trajectory, first: int) -> tuple[np.ndarray, np.ndarray]:
        """Time means over rows ``first``..end (trapezoid rule, on the grid): per class
        (class, N_MEANS) its window then its signals, and the queue's (length, drop
        rate, mark rate). Computed once per ``first``."""
        if first in self._means:
            return self._means[first]
        m = self.merged.shape[0]
        last = traj.y.shape[0] - 1
        ends = np.empty(last + 2, dtype=np.int64)
        count = _step_ends(self.strides, first, last, ends)
        class_means = np.empty((m, N_MEANS))
        queue_means = np.empty(3)
        if self.has_merges:
            self._fill_joins(traj, first)
            self._fill_strides(traj)
            _class_means(traj.y, traj.s, first, self.merged, self.by_end,
                         np.empty(m, dtype=np.int64), np.empty((m, N_MEANS)),
                         np.empty((m, N_MEANS)), class_means)
        else:
            self._fill_joins(traj, int(ends[0]))
        _step_end_means(traj.y, traj.s, ends, count, first, last, m, not self.has_merges,
                        class_means, queue_means)
        self._means[first] = class_means, queue_means
        return class_means, queue_means

    def fill(self, traj: Trajectory) -> None:
        """Write (once) the rows inside strides and the merged classes' rows after their
        merge, so that every column is a series."""
        if self.complete:
            return
        self._fill_joins(traj, 0)
        self._fill_strides(traj)
        if self.has_merges:
            _complete(traj.y, traj.s, self.merged, self.by_end)
        self.complete = True

    def _fill_joins(self, traj: Trajectory, first: int) -> None:
        """Write (once) the rows before each class's join that the integration left out,
        if a mean from row ``first`` reads them."""
        joins = self.joins
        if joins is not None and not joins.done and first < joins.join_from.max():
            _write_joins(traj.y, traj.s, joins.y0, joins.join_from, joins.prm, joins.cls)
            joins.done = True

    def _fill_strides(self, traj: Trajectory) -> None:
        if self.strides.shape[0] and not self._strides_filled:
            lazy_y, lazy_s = _lazy_columns(self.reads)
            # A class's strides before its first written row are left to _fill_joins,
            # which writes all of their rows (their ends may not be written yet).
            join_from = np.zeros(self.merged.shape[0] + 1, dtype=np.int64)
            if self.joins is not None:
                join_from[:-1] = self.joins.join_from
            m = self.merged.shape[0]
            y_owner = np.where(lazy_y < m, lazy_y,
                               np.where(lazy_y >= m + 2, (lazy_y - m - 2) % m, m))
            _fill_lazy(traj.y, lazy_y, join_from[y_owner],
                       self.strides, self.strides.shape[0])
            _fill_lazy(traj.s, lazy_s, join_from[np.minimum(lazy_s // NS_CLASS, m)],
                       self.strides, self.strides.shape[0])
        self._strides_filled = True


@njit(**KERNEL)
def _step_ends(strides, first, last, ends):
    """Into ``ends``: the step ends a time mean over rows ``first``..``last`` reads (the
    last one at or before ``first``, then each one up to ``last``, itself a step end);
    their count. ``strides`` (first and last row of each step longer than a row) is in
    row order."""
    n = strides.shape[0]
    lo = 0
    hi = n
    while lo < hi:  # the first stride that ends after ``first``
        mid = (lo + hi) // 2
        if strides[mid, 1] <= first:
            lo = mid + 1
        else:
            hi = mid
    s = lo
    a = strides[s, 0] if s < n and strides[s, 0] < first else first
    count = 0
    while True:
        ends[count] = a
        count += 1
        if a >= last:
            return count
        if s < n and strides[s, 0] == a:
            a = strides[s, 1]
            s += 1
        else:
            a += 1


@njit(**KERNEL, inline="always")
def _trapezoid_mean(A, j, ends, count, first, last):
    """The trapezoid time mean over rows ``first``..``last`` of column ``j`` of ``A``, a
    series linear between the step ``ends`` (rows inside a stride need not be written):
    each step contributes its length times the mean of its ends; the step holding
    ``first`` only from there (its value at ``first`` interpolated)."""
    if first >= last:
        return A[last, j]
    a = ends[0]
    b = ends[1]
    va = A[a, j]
    vb = A[b, j]
    total = (b - first) * (va + (vb - va) * (first - a) / (b - a) + vb)
    for i in range(2, count):
        a = b
        va = vb
        b = ends[i]
        vb = A[b, j]
        total += (b - a) * (va + vb)
    return 0.5 * total / (last - first)


@njit(**KERNEL)
def _step_end_means(Y, S, ends, count, first, last, m, with_classes, class_means,
                    queue_means):
    """Time means from the step ends (see :func:`_trapezoid_mean`): the queue's length,
    drop and mark rates into ``queue_means``; with ``with_classes`` (no class merged)
    every class's window and signals into ``class_means``."""
    if with_classes:
        for c in range(m):
            class_means[c, 0] = _trapezoid_mean(Y, c, ends, count, first, last)
            for j in range(NS_CLASS):
                class_means[c, 1 + j] = _trapezoid_mean(S, c * NS_CLASS + j, ends, count,
                                                        first, last)
    queue_means[0] = _trapezoid_mean(Y, m, ends, count, first, last)
    queue_means[1] = _trapezoid_mean(S, m * NS_CLASS + SQ_DROP, ends, count, first, last)
    queue_means[2] = _trapezoid_mean(S, m * NS_CLASS + SQ_MARK, ends, count, first, last)


@dataclass
class BottleneckRun:
    """A fluid run: grid, per-class and queue time series, summary, convergence report.

    The per-class series are (time, class) arrays, per flow; merged classes' rows, and
    the rows inside a stride of the columns the integration does not read there, are
    written on first access (the summary does not need them).
    """

    classes: tuple[FlowClass, ...]
    bottleneck: Bottleneck
    trajectory: Trajectory
    summary: dict[str, float] = field(default_factory=dict)
    convergence: ConvergenceReport | None = None
    wall_time_s: float = 0.0

    @property
    def t(self) -> np.ndarray:
        """Grid times (s)."""
        return self.trajectory.t

    def _filled(self) -> Trajectory:
        layout = self.trajectory.layout
        if isinstance(layout, _Layout):
            layout.fill(self.trajectory)
        return self.trajectory

    def _signal(self, column: int) -> np.ndarray:
        m = len(self.classes)
        return self._filled().s[:, column:m * NS_CLASS:NS_CLASS]

    def _state(self, first: int) -> np.ndarray:
        m = len(self.classes)
        return self._filled().y[:, first:first + m]

    def _bucket(self, first: int) -> np.ndarray:
        has_bucket = np.array([c.limiter is not None for c in self.classes])
        return np.where(has_bucket, self._state(first), np.nan)

    @property
    def cwnd_pkts(self) -> np.ndarray:
        """Window per flow (packets), (time, class)."""
        return self._state(0)

    @property
    def rtt_s(self) -> np.ndarray:
        """Round-trip time (s), (time, class)."""
        return self._signal(S_RTT)

    @property
    def send_pps(self) -> np.ndarray:
        """Sending rate per flow (packets/s)."""
        return self._signal(S_SEND)

    @property
    def goodput_pps(self) -> np.ndarray:
        """Delivered rate per flow (packets/s)."""
        return self._signal(S_GOOD)

    @property
    def loss_pps(self) -> np.ndarray:
        """Rate per flow of packets lost anywhere (packets/s)."""
        return self._signal(S_LOSS)

    @property
    def mark_pps(self) -> np.ndarray:
        """Rate per flow of packets delivered with CE (packets/s)."""
        return self._signal(S_MARK)

    @property
    def limiter_drop_pps(self) -> np.ndarray:
        """Rate per flow of packets dropped by its token bucket (packets/s)."""
        return self._signal(S_LIMDROP)

    @property
    def tokens_pkts(self) -> np.ndarray:
        """Tokens of each class's bucket (packets); NaN without a limiter."""
        return self._bucket(len(self.classes) + 2)

    @property
    def limiter_queue_pkts(self) -> np.ndarray:
        """Packets queued in each class's shaper; NaN without a limiter."""
        return self._bucket(2 * len(self.classes) + 2)

    @property
    def queue_pkts(self) -> np.ndarray:
        """Bottleneck queue (packets)."""
        return self.trajectory.y[:, len(self.classes)]

    @property
    def red_average_pkts(self) -> np.ndarray:
        """RED's average queue (packets)."""
        return self._filled().y[:, len(self.classes) + 1]

    def _queue_signal(self, column: int) -> np.ndarray:
        return self._filled().s[:, len(self.classes) * NS_CLASS + column]

    @property
    def queue_drop_pps(self) -> np.ndarray:
        """Drops at the bottleneck (packets/s)."""
        return self._queue_signal(SQ_DROP)

    @property
    def queue_mark_pps(self) -> np.ndarray:
        """Marks at the bottleneck (packets/s)."""
        return self._queue_signal(SQ_MARK)

    @property
    def queue_inflow_pps(self) -> np.ndarray:
        """Arrivals at the bottleneck, all flows (packets/s)."""
        return self._queue_signal(SQ_INFLOW)


def validate_link(classes: Sequence[FlowClass], link: Bottleneck, model: str) -> None:
    """What every fluid model over one bottleneck needs (``model`` names it in the error):
    a flow class, a positive capacity, a buffer of at least one packet."""
    if not classes:
        raise InputError(f"{model}: at least one flow class is needed (N = 0)")
    if not link.capacity_pps > 0:
        raise InputError(f"{model}: capacity_pps must be > 0 (got {link.capacity_pps})")
    if not link.buffer_pkts >= 1:
        raise InputError(f"{model}: buffer_pkts must be >= 1 (got {link.buffer_pkts})")


def _validate(classes: Sequence[FlowClass], link: Bottleneck) -> None:
    validate_link(classes, link, "fluid bottleneck")
    if link.aqm not in _AQMS:
        raise InputError(f"fluid bottleneck: unknown aqm {link.aqm!r}; choose {sorted(_AQMS)}")
    if link.aqm == "red":
        if not 0 <= link.min_th_pkts < link.max_th_pkts:
            raise InputError("fluid bottleneck: RED needs 0 <= min_th_pkts < max_th_pkts "
                             f"(got {link.min_th_pkts}, {link.max_th_pkts})")
        if not 0 < link.max_p <= 1 or not 0 < link.queue_weight < 1:
            raise InputError("fluid bottleneck: RED needs 0 < max_p <= 1 and 0 < queue_weight "
                             f"< 1 (got {link.max_p}, {link.queue_weight})")
    if link.aqm == "threshold" and not 0 <= link.threshold_pkts < math.inf:
        raise InputError("fluid bottleneck: a threshold queue needs a finite threshold_pkts "
                         f">= 0 (got {link.threshold_pkts})")
    for j, c in enumerate(classes):
        where = f"fluid flow class {c.name or j}"
        if c.flows < 1:
            raise InputError(f"{where}: flows must be >= 1 (got {c.flows}; N = 0 has no model)")
        if not c.prop_rtt_s > 0:
            raise InputError(f"{where}: prop_rtt_s must be > 0 (got {c.prop_rtt_s})")
        if c.variant == "bbr":
            raise InputError(f"{where}: variant bbr is integrated by "
                             "tcpn.solvers.fluid.bbr.simulate_bbr, not by this model")
        if c.variant not in _VARIANTS:
            raise InputError(f"{where}: unknown variant {c.variant!r}; choose {sorted(_VARIANTS)}")
        if not 0 < c.decrease_factor < 1:
            raise InputError(f"{where}: decrease_factor must be in (0, 1) "
                             f"(got {c.decrease_factor})")
        if not 0 <= c.packet_error_rate < 1:
            raise InputError(f"{where}: packet_error_rate must be in [0, 1) "
                             f"(got {c.packet_error_rate})")
        if c.acks_per_packet < 1 or c.initial_cwnd_pkts < 1 or c.max_window_pkts < 1:
            raise InputError(f"{where}: acks_per_packet, initial_cwnd_pkts and "
                             "max_window_pkts must be >= 1")
        if c.variant == "vegas" and not 0 < c.vegas_alpha_pkts <= c.vegas_beta_pkts:
            raise InputError(f"{where}: Vegas needs 0 < vegas_alpha_pkts <= vegas_beta_pkts "
                             f"(got {c.vegas_alpha_pkts}, {c.vegas_beta_pkts})")
        if c.limiter is not None and not (c.limiter.rate_pps > 0 and c.limiter.depth_pkts >= 0
                                          and c.limiter.queue_pkts >= 0):
            raise InputError(f"{where}: token bucket needs rate_pps > 0, depth_pkts >= 0 and "
                             "queue_pkts >= 0")
        if not 0 <= c.start_s < c.stop_s:
            raise InputError(f"{where}: needs 0 <= start_s < stop_s "
                             f"(got {c.start_s}, {c.stop_s})")


def _kinds(classes: Sequence[FlowClass], cls: np.ndarray) -> np.ndarray:
    """Per class, an id shared by the classes that may merge (same parameters but the
    number of flows and the start time); -1 for those that never do (a token bucket is
    one class's own, a sawtooth's loss counters are its own)."""
    key = cls.copy()
    key[:, [C_N, C_START]] = 0.0
    ids: dict[tuple[float, ...], int] = {}
    kind = np.empty(len(classes), dtype=np.int64)
    for i, c in enumerate(classes):
        never = c.limiter is not None or c.variant == "reno_sawtooth"
        kind[i] = -1 if never else ids.setdefault(tuple(key[i].tolist()), len(ids))
    return kind


def build_system(classes: Sequence[FlowClass], link: Bottleneck,
                 warmup_s: float = 0.0, merge_tolerance: float = MERGE_TOLERANCE,
                 stride_tolerance: float = STRIDE_TOLERANCE) -> DdeSystem:
    """The compiled DDE system for these classes and this bottleneck (see :func:`solve`).

    Classes of the same parameters that differ only in their start times merge once
    their windows agree within ``merge_tolerance`` (0: never).
    """
    _validate(classes, link)
    m = len(classes)
    rows = []
    for c in classes:
        bucket = c.limiter
        rows.append([c.flows, c.prop_rtt_s, _VARIANTS[c.variant], c.acks_per_packet,
                  float(c.timeouts), c.vegas_alpha_pkts, c.vegas_beta_pkts,
                  c.prop_rtt_s + c.base_rtt_error_s,
                  bucket.rate_pps if bucket else np.inf, bucket.depth_pkts if bucket else 0.0,
                  bucket.queue_pkts if bucket else 0.0, c.packet_error_rate, c.start_s,
                  c.stop_s, float(c.ecn and link.ecn), c.decrease_factor,
                  c.initial_ssthresh_pkts, c.vegas_gamma_pkts])
    cls = np.array(rows, dtype=float).reshape(m, N_CLS)
    kf = -math.log1p(-link.queue_weight) * link.capacity_pps if link.aqm == "red" else 0.0
    prm = np.zeros(N_PRM)
    prm[:] = [link.capacity_pps, link.buffer_pkts, _AQMS[link.aqm], link.min_th_pkts,
              link.max_th_pkts, link.max_p, kf, float(link.gentle), link.threshold_pkts,
              link.vegas_smoothing_pkts, m, link.red_signal_scale]
    ny = 4 * m + 2
    y0 = np.zeros(ny)
    lower = np.zeros(ny)
    upper = np.full(ny, np.inf)
    y0[:m] = [c.initial_cwnd_pkts for c in classes]
    lower[:m] = 1.0
    upper[:m] = [c.max_window_pkts for c in classes]
    for i, c in enumerate(classes):
        if c.limiter:
            y0[m + 2 + i] = upper[m + 2 + i] = c.limiter.depth_pkts  # the bucket starts full
            upper[2 * m + 2 + i] = c.limiter.queue_pkts
    y0[3 * m + 2:] = [float(c.slow_start and c.initial_ssthresh_pkts > c.initial_cwnd_pkts)
                      for c in classes]
    upper[3 * m + 2:] = 1.0
    upper[m] = upper[m + 1] = link.buffer_pkts
    y0[m] = y0[m + 1] = min(link.initial_queue_pkts, link.buffer_pkts)
    aux = np.zeros((m, 4))
    aux[:, A_PENDING] = np.inf
    min_rtt = min(c.prop_rtt_s for c in classes)
    rates = {"the round-trip dynamics (2/RTT)": 2.0 / min_rtt}
    if kf:
        rates[f"the RED average (queue_weight {link.queue_weight:g})"] = kf
    if any(c.variant == "vegas" for c in classes):
        rates["the Vegas control law (1/(smoothing RTT))"] = 1.0 / (
            link.vegas_smoothing_pkts * min_rtt)
    frozen = tuple(classes)
    kind = _kinds(classes, cls)
    return DdeSystem(
        # A threshold marker's one-packet ramp makes the queue slide along K: the
        # embedded estimate does not see its delayed kinks, so no strides there.
        integrate=_Integrator(y0, lower, upper, prm, cls, aux, kind,
                              merge_tolerance, MERGE_CHECK_RTTS * min_rtt, _shortest_lag_s(classes),
                              0.0 if link.aqm == "threshold" else stride_tolerance,
                              _history_reads(cls, kind, merge_tolerance),
                              _longest_lags_s(cls, link),
                              np.argsort(cls[:, C_START], kind="stable")),
        min_delay_s=min_rtt / 2, stiff_rates=rates,
        summary=lambda traj: convergence_metrics(traj, frozen, link, warmup_s),
        oscillation_columns=(m,),
    )


def _longest_lags_s(cls: np.ndarray, link: Bottleneck) -> np.ndarray:
    """Per class, the longest delay its derivative and jumps can read history at: a round
    trip through a full buffer and a full shaper queue (infinite with no buffer limit)."""
    shaper = np.where(cls[:, C_RATE] < np.inf, cls[:, C_TBQ] / cls[:, C_RATE], 0.0)
    return cls[:, C_D] + link.buffer_pkts / link.capacity_pps + shaper


def _shortest_lag_s(classes: Sequence[FlowClass]) -> float:
    """The shortest delay the derivative reads history at: a round trip (at least the
    propagation RTT), half of it for Vegas's observed RTT. A step no longer than this
    reads only accepted history (an explicit step cannot read past its start)."""
    return min(c.prop_rtt_s / 2 if c.variant == "vegas" else c.prop_rtt_s for c in classes)


def _layout(traj: Trajectory) -> _Layout:
    """The run's layout (one of every row, nothing merged, for a trajectory built
    elsewhere)."""
    if isinstance(traj.layout, _Layout):
        return traj.layout
    m = (traj.s.shape[1] - NS_QUEUE) // NS_CLASS
    return _Layout(np.full((m, 2), -1, dtype=np.int64), np.empty((0, 2), dtype=np.int64))


def convergence_metrics(traj: Trajectory, classes: Sequence[FlowClass], link: Bottleneck,
                        warmup_s: float) -> dict[str, tuple[float, float]]:
    """The metrics the step check compares (name -> (value, absolute floor)): the mean
    queue and each class's goodput and signal rate after ``warmup_s``, of any trajectory
    in this module's column layout (the BBR model's too, :mod:`tcpn.solvers.fluid.bbr`)."""
    first = traj.first_row_at(warmup_s)
    means, queue = _layout(traj).means(traj, first)
    good = means[:, 1 + S_GOOD]
    loss = means[:, 1 + S_LOSS] + means[:, 1 + S_MARK]
    out = {"queue_mean_pkts": (float(queue[0]), 1.0)}
    for i, (c, g, lost) in enumerate(zip(classes, good.tolist(), loss.tolist(), strict=True)):
        label = c.name or f"class{i}"
        # Floors: 0.1 % of the link for rates, one packet for the queue.
        floor = 1e-3 * link.capacity_pps / c.flows
        out[f"{label}_goodput_pps"] = (g, floor)
        out[f"{label}_signal_pps"] = (lost, floor)
    return out


def simulate_bottleneck(classes: Sequence[FlowClass], bottleneck: Bottleneck,
                        horizon_s: float, step_s: float | None = None,
                        check_convergence: bool = True, warmup_s: float = 0.0,
                        max_steps: int = 20_000_000,
                        check_step: CheckStep = "double",
                        merge_tolerance: float = MERGE_TOLERANCE,
                        stride_tolerance: float = STRIDE_TOLERANCE) -> BottleneckRun:
    """Integrate the model to ``horizon_s`` and summarise it (means after ``warmup_s``).

    The step defaults to the largest the model's time scales allow (see
    :func:`tcpn.solvers.fluid.dde.solve`); the run is checked against one at twice the
    step (``check_step="half"``: at half the step, the slower reference) and rejected
    unless every summary metric moved by < 0.5 %. Classes that differ only in their start
    times merge once they agree within ``merge_tolerance`` (see :func:`build_system`;
    0 keeps them apart).
    """
    if not 0 <= warmup_s < horizon_s:
        raise InputError(f"fluid bottleneck: needs 0 <= warmup_s < horizon_s "
                         f"(got {warmup_s}, {horizon_s})")
    started = time.perf_counter()
    system = build_system(classes, bottleneck, warmup_s, merge_tolerance, stride_tolerance)
    traj, report = solve(system, horizon_s, step_s, check_convergence, max_steps,
                         check_step=check_step)
    run = BottleneckRun(classes=tuple(classes), bottleneck=bottleneck, trajectory=traj,
                        convergence=report)
    run.summary = run_summary(run, warmup_s)
    run.wall_time_s = time.perf_counter() - started
    return run


def run_summary(run: BottleneckRun, warmup_s: float) -> dict[str, float]:
    """Time means after ``warmup_s`` of ``run``: queue, and per class goodput, sending
    rate, loss and mark ratios, RTT and window; total goodput and utilisation."""
    traj = run.trajectory
    cap = run.bottleneck.capacity_pps
    m = len(run.classes)
    first = traj.first_row_at(warmup_s)
    class_means, queue = _layout(traj).means(traj, first)
    out: dict[str, float] = {
        "queue_mean_pkts": float(queue[0]),
        "queue_max_pkts": float(traj.y[first:, m].max()),  # (the queue is written on every row)
        "queue_drop_pps": float(queue[1]),
        "queue_mark_pps": float(queue[2]),
    }
    means = class_means.tolist()
    total_good = 0.0
    for i, (c, row) in enumerate(zip(run.classes, means, strict=True)):
        label = c.name or f"class{i}"
        good, sent = row[1 + S_GOOD], row[1 + S_SEND]
        out[f"{label}_goodput_pps"] = good
        out[f"{label}_send_pps"] = sent
        out[f"{label}_loss_ratio"] = row[1 + S_LOSS] / sent if sent > 0 else 0.0
        out[f"{label}_mark_ratio"] = row[1 + S_MARK] / sent if sent > 0 else 0.0
        out[f"{label}_rtt_mean_s"] = row[1 + S_RTT]
        out[f"{label}_cwnd_mean_pkts"] = row[0]
        total_good += good * c.flows
    out["goodput_total_pps"] = total_good
    out["utilisation"] = total_good / cap
    return out
