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

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numba import njit

from tcpn.errors import InputError
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
    time_means,
)

__all__ = [
    "Bottleneck",
    "BottleneckRun",
    "FlowClass",
    "TokenBucket",
    "build_system",
    "simulate_bottleneck",
]

Variant = Literal["reno", "reno_sawtooth", "vegas"]
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


@njit(**KERNEL)
def _signals(t, y, prm, cls, row):
    m = int(prm[P_M])
    cap = prm[P_CAP]
    q = y[m]
    avg = y[m + 1]
    inflow = 0.0
    for i in range(m):
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
    for i in range(m):
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


@njit(**KERNEL)
def _rhs(t, y, Y, S, k, h, prm, cls, dy):
    m = int(prm[P_M])
    cap = prm[P_CAP]
    q = y[m]
    avg = y[m + 1]
    inflow = 0.0
    for i in range(m):
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
        lam_m = lagged(S, k, h, t, rtt, base + S_MARK)
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


@njit(**KERNEL)
def _jump(t, y, Y, S, k, h, prm, cls, aux):
    m = int(prm[P_M])
    for i in range(m):
        if not (cls[i, C_START] <= t < cls[i, C_STOP]):
            continue
        base = i * NS_CLASS
        rtt = S[k, base + S_RTT]
        variant = int(cls[i, C_VAR])
        ss_i = 3 * m + 2 + i
        if y[ss_i] > 0.5:
            signal = lagged(S, k, h, t, rtt, base + S_LOSS) + lagged(S, k, h, t, rtt, base + S_MARK)
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
def _integrate(Y, S, work, lower, upper, h, n_steps, prm, cls, aux):
    _signals(0.0, Y[0], prm, cls, S[0])
    f1 = work[0]
    f2 = work[1]
    pred = work[2]
    for k in range(n_steps):
        t = k * h
        _rhs(t, Y[k], Y, S, k, h, prm, cls, f1)
        heun_predict(Y[k], f1, h, lower, upper, pred)
        _signals(t + h, pred, prm, cls, S[k + 1])  # provisional, for delays shorter than h
        _rhs(t + h, pred, Y, S, k, h, prm, cls, f2)
        heun_correct(Y[k], f1, f2, h, lower, upper, Y[k + 1])
        _jump(t + h, Y[k + 1], Y, S, k + 1, h, prm, cls, aux)
        _signals(t + h, Y[k + 1], prm, cls, S[k + 1])


@dataclass
class BottleneckRun:
    """A fluid run: grid, per-class and queue time series, summary, convergence report."""

    classes: tuple[FlowClass, ...]
    bottleneck: Bottleneck
    t: np.ndarray
    cwnd_pkts: np.ndarray          # (time, class), per flow
    rtt_s: np.ndarray
    send_pps: np.ndarray           # per flow
    goodput_pps: np.ndarray        # per flow
    loss_pps: np.ndarray           # per flow, lost anywhere
    mark_pps: np.ndarray           # per flow, delivered with CE
    limiter_drop_pps: np.ndarray   # per flow, dropped by its token bucket
    queue_pkts: np.ndarray
    red_average_pkts: np.ndarray
    queue_drop_pps: np.ndarray
    queue_mark_pps: np.ndarray
    queue_inflow_pps: np.ndarray   # arrivals at the bottleneck, all flows
    tokens_pkts: np.ndarray        # (time, class); NaN without a limiter
    limiter_queue_pkts: np.ndarray
    summary: dict[str, float] = field(default_factory=dict)
    convergence: ConvergenceReport | None = None
    wall_time_s: float = 0.0


def _validate(classes: Sequence[FlowClass], link: Bottleneck) -> None:
    if not classes:
        raise InputError("fluid bottleneck: at least one flow class is needed (N = 0)")
    if not link.capacity_pps > 0:
        raise InputError(f"fluid bottleneck: capacity_pps must be > 0 (got {link.capacity_pps})")
    if not link.buffer_pkts >= 1:
        raise InputError(f"fluid bottleneck: buffer_pkts must be >= 1 (got {link.buffer_pkts})")
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


def build_system(classes: Sequence[FlowClass], link: Bottleneck,
                 warmup_s: float = 0.0) -> DdeSystem:
    """The compiled DDE system for these classes and this bottleneck (see :func:`solve`)."""
    _validate(classes, link)
    m = len(classes)
    cls = np.zeros((m, N_CLS))
    for i, c in enumerate(classes):
        bucket = c.limiter
        cls[i] = [c.flows, c.prop_rtt_s, _VARIANTS[c.variant], c.acks_per_packet,
                  float(c.timeouts), c.vegas_alpha_pkts, c.vegas_beta_pkts,
                  c.prop_rtt_s + c.base_rtt_error_s,
                  bucket.rate_pps if bucket else np.inf, bucket.depth_pkts if bucket else 0.0,
                  bucket.queue_pkts if bucket else 0.0, c.packet_error_rate, c.start_s,
                  c.stop_s, float(c.ecn and link.ecn), c.decrease_factor,
                  c.initial_ssthresh_pkts, c.vegas_gamma_pkts]
    kf = -math.log1p(-link.queue_weight) * link.capacity_pps if link.aqm == "red" else 0.0
    prm = np.zeros(N_PRM)
    prm[:] = [link.capacity_pps, link.buffer_pkts, _AQMS[link.aqm], link.min_th_pkts,
              link.max_th_pkts, link.max_p, kf, float(link.gentle), link.threshold_pkts,
              link.vegas_smoothing_pkts, m, link.red_signal_scale]
    ny = 4 * m + 2
    y0 = np.zeros(ny)
    lower = np.zeros(ny)
    upper = np.full(ny, np.inf)
    for i, c in enumerate(classes):
        y0[i] = c.initial_cwnd_pkts
        lower[i] = 1.0
        upper[i] = c.max_window_pkts
        if c.limiter:
            y0[m + 2 + i] = upper[m + 2 + i] = c.limiter.depth_pkts  # the bucket starts full
            upper[2 * m + 2 + i] = c.limiter.queue_pkts
        y0[3 * m + 2 + i] = float(c.slow_start and c.initial_ssthresh_pkts > c.initial_cwnd_pkts)
        upper[3 * m + 2 + i] = 1.0
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
    return DdeSystem(
        integrate=_integrate, y0=y0, lower=lower, upper=upper, prm=prm,
        cls=cls, aux=aux, n_signals=m * NS_CLASS + NS_QUEUE, min_delay_s=min_rtt / 2,
        stiff_rates=rates,
        summary=lambda traj: _convergence_metrics(traj, frozen, link, warmup_s),
        oscillation_columns=(m,),
    )


def _series(traj: Trajectory, m: int, column: int) -> np.ndarray:
    """Signal ``column`` of every class, (time, class): a strided view, not a copy."""
    return traj.s[:, column:m * NS_CLASS:NS_CLASS]


def _convergence_metrics(traj: Trajectory, classes: Sequence[FlowClass], link: Bottleneck,
                         warmup_s: float) -> dict[str, tuple[float, float]]:
    m = len(classes)
    y_mean, s_mean = time_means(traj, warmup_s)
    good = s_mean[S_GOOD:m * NS_CLASS:NS_CLASS]
    loss = s_mean[S_LOSS:m * NS_CLASS:NS_CLASS] + s_mean[S_MARK:m * NS_CLASS:NS_CLASS]
    out = {"queue_mean_pkts": (float(y_mean[m]), 1.0)}
    for i, c in enumerate(classes):
        label = c.name or f"class{i}"
        # Floors: 0.1 % of the link for rates, one packet for the queue.
        out[f"{label}_goodput_pps"] = (float(good[i]), 1e-3 * link.capacity_pps / c.flows)
        out[f"{label}_signal_pps"] = (float(loss[i]), 1e-3 * link.capacity_pps / c.flows)
    return out


def simulate_bottleneck(classes: Sequence[FlowClass], bottleneck: Bottleneck,
                        horizon_s: float, step_s: float | None = None,
                        check_convergence: bool = True, warmup_s: float = 0.0,
                        max_steps: int = 20_000_000,
                        check_step: CheckStep = "double") -> BottleneckRun:
    """Integrate the model to ``horizon_s`` and summarise it (means after ``warmup_s``).

    The step defaults to the largest the model's time scales allow (see
    :func:`tcpn.solvers.fluid.dde.solve`); the run is checked against one at twice the
    step (``check_step="half"``: at half the step, the slower reference) and rejected
    unless every summary metric moved by < 0.5 %.
    """
    if not 0 <= warmup_s < horizon_s:
        raise InputError(f"fluid bottleneck: needs 0 <= warmup_s < horizon_s "
                         f"(got {warmup_s}, {horizon_s})")
    started = time.perf_counter()
    system = build_system(classes, bottleneck, warmup_s)
    traj, report = solve(system, horizon_s, step_s, check_convergence, max_steps,
                         check_step=check_step)
    m = len(classes)
    qb = m * NS_CLASS
    has_bucket = np.array([c.limiter is not None for c in classes])
    tokens = np.where(has_bucket, traj.y[:, m + 2:2 * m + 2], np.nan)
    run = BottleneckRun(
        classes=tuple(classes), bottleneck=bottleneck, t=traj.t,
        cwnd_pkts=traj.y[:, :m], rtt_s=_series(traj, m, S_RTT),
        send_pps=_series(traj, m, S_SEND), goodput_pps=_series(traj, m, S_GOOD),
        loss_pps=_series(traj, m, S_LOSS), mark_pps=_series(traj, m, S_MARK),
        limiter_drop_pps=_series(traj, m, S_LIMDROP),
        queue_pkts=traj.y[:, m], red_average_pkts=traj.y[:, m + 1],
        queue_drop_pps=traj.s[:, qb + SQ_DROP], queue_mark_pps=traj.s[:, qb + SQ_MARK],
        queue_inflow_pps=traj.s[:, qb + SQ_INFLOW],
        tokens_pkts=tokens,
        limiter_queue_pkts=np.where(has_bucket, traj.y[:, 2 * m + 2:3 * m + 2], np.nan),
        convergence=report,
    )
    run.summary = _summary(run, traj, warmup_s)
    run.wall_time_s = time.perf_counter() - started
    return run


def _summary(run: BottleneckRun, traj: Trajectory, warmup_s: float) -> dict[str, float]:
    t = run.t
    cap = run.bottleneck.capacity_pps
    m = len(run.classes)
    qb = m * NS_CLASS
    y_mean, s_mean = time_means(traj, warmup_s)
    out: dict[str, float] = {
        "queue_mean_pkts": float(y_mean[m]),
        "queue_max_pkts": float(run.queue_pkts[t >= warmup_s].max()),
        "queue_drop_pps": float(s_mean[qb + SQ_DROP]),
        "queue_mark_pps": float(s_mean[qb + SQ_MARK]),
    }
    good, sent, lost, marked, rtt = (s_mean[column:qb:NS_CLASS] for column in (
        S_GOOD, S_SEND, S_LOSS, S_MARK, S_RTT))
    cwnd = y_mean[:m]
    total_good = 0.0
    for i, c in enumerate(run.classes):
        label = c.name or f"class{i}"
        out[f"{label}_goodput_pps"] = float(good[i])
        out[f"{label}_send_pps"] = float(sent[i])
        out[f"{label}_loss_ratio"] = float(lost[i] / sent[i]) if sent[i] > 0 else 0.0
        out[f"{label}_mark_ratio"] = float(marked[i] / sent[i]) if sent[i] > 0 else 0.0
        out[f"{label}_rtt_mean_s"] = float(rtt[i])
        out[f"{label}_cwnd_mean_pkts"] = float(cwnd[i])
        total_good += float(good[i]) * c.flows
    out["goodput_total_pps"] = total_good
    out["utilisation"] = total_good / cap
    return out
