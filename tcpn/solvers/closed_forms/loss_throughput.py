"""Steady-state throughput of loss-driven TCP: Mathis, PFTK (full, approx, TD-only), AIMD, TFRC.

Equations, symbols and validity ranges: ``shared/design/analytics.md`` sections 1 and 4.2.
Throughputs are in packets per second (``*_pps``); multiply by the segment size for
goodput in bytes/s. ``loss_rate`` is the probability that a packet carries a congestion
signal (loss *events* when losses are bursty); ``acks_per_packet`` is b (1 = ACK every
segment, 2 = delayed ACK, ns-3's default).

>>> round(mathis_pps(rtt_s=0.1, loss_rate=0.01), 3)
122.474
>>> round(pftk_full_pps(rtt_s=0.2, loss_rate=0.01, rto_s=1.0, acks_per_packet=2), 3)
38.162
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy as sp

from tcpn.solvers.closed_forms.formula import (
    AssumptionError,
    closed_form,
    require_positive,
    require_probability,
    warn_outside,
)

__all__ = [
    "aimd_pps",
    "mathis_pps",
    "mathis_random_pps",
    "pftk_approx_pps",
    "pftk_backoff_factor",
    "pftk_expected_window",
    "pftk_full_pps",
    "pftk_timeout_probability",
    "td_only_pps",
    "tfrc_bytes_per_s",
    "westwood_pps",
]

R, p, b, T0, Wm, w = sp.symbols("R p b T_0 W_m w", positive=True)
a_inc, beta = sp.symbols("a beta", positive=True)
k_c, s_bytes = sp.symbols("C_M s", positive=True)

# Mathis: a sawtooth from W/2 to W, 1/p packets per cycle (analytics.md 1.1).
_MATHIS = sp.sqrt(3 / (2 * b * p)) / R
# Fitted constants for random (Bernoulli) loss, by b (Mathis et al. 1997).
RANDOM_LOSS_CONSTANT = {1: 1.31, 2: 0.93}

# PFTK pieces (eq. 13, the timeout probability Qhat and the back-off factor f(p)).
_EW = (2 + b) / (3 * b) + sp.sqrt(8 * (1 - p) / (3 * b * p) + ((2 + b) / (3 * b)) ** 2)


def _qhat(window: sp.Expr) -> sp.Expr:
    q = 1 - p
    return sp.Min(1, (1 - q**3) * (1 + q**3 * (1 - q ** (window - 3))) / (1 - q**window))


_F = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
_FULL_FREE = ((1 - p) / p + _EW + _qhat(_EW) / (1 - p)) / (
    R * (b / 2 * _EW + 1) + _qhat(_EW) * T0 * _F / (1 - p))
_FULL_CAPPED = ((1 - p) / p + Wm + _qhat(Wm) / (1 - p)) / (
    R * (b / 8 * Wm + (1 - p) / (p * Wm) + 2) + _qhat(Wm) * T0 * _F / (1 - p))
_PFTK_FULL = sp.Piecewise((_FULL_FREE, Wm > _EW), (_FULL_CAPPED, True))
_TIMEOUT_TERM = T0 * 3 * sp.sqrt(3 * b * p / 8) * p * (1 + 32 * p**2)
_PFTK_APPROX = sp.Min(Wm / R, 1 / (
    R * sp.sqrt(2 * b * p / 3) + T0 * sp.Min(1, 3 * sp.sqrt(3 * b * p / 8)) * p * (1 + 32 * p**2)))
_TD_ONLY = ((1 - p) / p + _EW) / (R * (b / 2 * _EW + 1))
_AIMD = sp.sqrt(a_inc * (1 + beta) / (2 * (1 - beta) * p)) / R
_TFRC = s_bytes / (R * sp.sqrt(2 * b * p / 3) + _TIMEOUT_TERM)


def _check_reno(model: str, rtt_s: Any, loss_rate: Any, acks_per_packet: Any) -> None:
    require_positive(model, rtt_s=rtt_s, acks_per_packet=acks_per_packet)
    require_probability(model, loss_rate=loss_rate)


@closed_form(_MATHIS, "pkt/s", rtt_s=R, loss_rate=p, acks_per_packet=b)
def mathis_pps(rtt_s: Any, loss_rate: Any, acks_per_packet: Any = 1,
               max_window_pkts: float = math.inf) -> Any:
    """Mathis et al. (1997), periodic loss: ``sqrt(3/(2 b p)) / RTT`` packets/s.

    Valid in congestion avoidance without timeouts (warns above p = 2 %) and while the
    sawtooth peak ``sqrt(8/(3 b p))`` stays below the receiver window ``max_window_pkts``.

    >>> round(mathis_pps(rtt_s=0.2, loss_rate=1e-3, acks_per_packet=2), 3)
    136.931
    >>> mathis_pps(rtt_s=0.2, loss_rate=1.5)
    Traceback (most recent call last):
    ...
    tcpn.solvers.closed_forms.formula.AssumptionError: mathis_pps: ... 0 < loss_rate < 1 (got 1.5)
    """
    _check_reno("mathis_pps", rtt_s, loss_rate, acks_per_packet)
    warn_outside(np.asarray(loss_rate) <= 0.02, "mathis_pps",
                 "loss_rate <= 0.02 (above it timeouts dominate and Mathis over-predicts)")
    peak = np.sqrt(8 / (3 * np.asarray(acks_per_packet, float) * np.asarray(loss_rate, float)))
    warn_outside(peak <= max_window_pkts, "mathis_pps",
                 f"sawtooth peak sqrt(8/(3 b p)) <= receiver window {max_window_pkts} pkt")
    return mathis_pps.evaluate(rtt_s=rtt_s, loss_rate=loss_rate, acks_per_packet=acks_per_packet)


@closed_form(k_c / (R * sp.sqrt(p)), "pkt/s", rtt_s=R, loss_rate=p, constant=k_c)
def mathis_random_pps(rtt_s: Any, loss_rate: Any, acks_per_packet: int = 1) -> Any:
    """Mathis with the constant fitted for random (Bernoulli) loss: 1.31 (b=1), 0.93 (b=2).

    >>> round(mathis_random_pps(rtt_s=0.1, loss_rate=0.01), 1)
    131.0
    """
    _check_reno("mathis_random_pps", rtt_s, loss_rate, acks_per_packet)
    if acks_per_packet not in RANDOM_LOSS_CONSTANT:
        raise AssumptionError("mathis_random_pps: assumption violated: acks_per_packet in "
                              f"{sorted(RANDOM_LOSS_CONSTANT)} (fitted constants only)")
    warn_outside(np.asarray(loss_rate) <= 0.02, "mathis_random_pps",
                 "loss_rate <= 0.02 (timeouts ignored)")
    return mathis_random_pps.evaluate(rtt_s=rtt_s, loss_rate=loss_rate,
                                      constant=RANDOM_LOSS_CONSTANT[acks_per_packet])


@closed_form(_EW, "pkt", loss_rate=p, acks_per_packet=b)
def pftk_expected_window(loss_rate: Any, acks_per_packet: Any = 1) -> Any:
    """PFTK eq. 13: the unconstrained mean window E[W] at loss-indication rate p.

    >>> round(pftk_expected_window(0.01, acks_per_packet=2), 3)
    12.175
    """
    require_positive("pftk_expected_window", acks_per_packet=acks_per_packet)
    require_probability("pftk_expected_window", loss_rate=loss_rate)
    return pftk_expected_window.evaluate(loss_rate=loss_rate, acks_per_packet=acks_per_packet)


@closed_form(_qhat(w), "1", window_pkts=w, loss_rate=p)
def pftk_timeout_probability(window_pkts: Any, loss_rate: Any) -> Any:
    """PFTK's Qhat(w): the probability that a loss indication in a window of w is a timeout.

    >>> round(pftk_timeout_probability(10, 0.01), 4)
    0.3311
    """
    require_positive("pftk_timeout_probability", window_pkts=window_pkts)
    require_probability("pftk_timeout_probability", loss_rate=loss_rate)
    return pftk_timeout_probability.evaluate(window_pkts=window_pkts, loss_rate=loss_rate)


@closed_form(_F, "1", loss_rate=p)
def pftk_backoff_factor(loss_rate: Any) -> Any:
    """PFTK eq. 28: f(p) = 1 + p + 2p^2 + ... + 32p^6 (timeout back-off, capped at 64 T0).

    >>> pftk_backoff_factor(0.5)
    4.0
    """
    require_probability("pftk_backoff_factor", loss_rate=loss_rate)
    return pftk_backoff_factor.evaluate(loss_rate=loss_rate)


@closed_form(_PFTK_FULL, "pkt/s", rtt_s=R, loss_rate=p, rto_s=T0, acks_per_packet=b,
             max_window_pkts=Wm)
def pftk_full_pps(rtt_s: Any, loss_rate: Any, rto_s: Any, acks_per_packet: Any = 1,
                  max_window_pkts: Any = math.inf) -> Any:
    """PFTK full model (eq. 31): triple-duplicate and timeout loss, receiver-window cap.

    ``rto_s`` is T0, the first retransmission timeout; ``max_window_pkts`` the receiver
    window W_m in segments (infinite by default). Valid for all p in (0, 1).

    >>> round(pftk_full_pps(rtt_s=0.2, loss_rate=0.005, rto_s=1.0, acks_per_packet=2,
    ...                     max_window_pkts=12), 3)
    46.067
    """
    _check_reno("pftk_full_pps", rtt_s, loss_rate, acks_per_packet)
    require_positive("pftk_full_pps", rto_s=rto_s, max_window_pkts=max_window_pkts)
    with np.errstate(all="ignore"):  # the branch not taken may overflow
        return pftk_full_pps.evaluate(rtt_s=rtt_s, loss_rate=loss_rate, rto_s=rto_s,
                                      acks_per_packet=acks_per_packet,
                                      max_window_pkts=max_window_pkts)


@closed_form(_PFTK_APPROX, "pkt/s", rtt_s=R, loss_rate=p, rto_s=T0, acks_per_packet=b,
             max_window_pkts=Wm)
def pftk_approx_pps(rtt_s: Any, loss_rate: Any, rto_s: Any, acks_per_packet: Any = 1,
                    max_window_pkts: Any = math.inf) -> Any:
    """PFTK approximate model, the widely quoted one (drifts from the full one above ~5 %).

    >>> round(pftk_approx_pps(rtt_s=0.1, loss_rate=0.01, rto_s=0.4, max_window_pkts=64), 3)
    112.332
    """
    _check_reno("pftk_approx_pps", rtt_s, loss_rate, acks_per_packet)
    require_positive("pftk_approx_pps", rto_s=rto_s, max_window_pkts=max_window_pkts)
    warn_outside(np.asarray(loss_rate) <= 0.1, "pftk_approx_pps",
                 "loss_rate <= 0.1 (the approximation drifts from the full model above)")
    return pftk_approx_pps.evaluate(rtt_s=rtt_s, loss_rate=loss_rate, rto_s=rto_s,
                                    acks_per_packet=acks_per_packet,
                                    max_window_pkts=max_window_pkts)


@closed_form(_TD_ONLY, "pkt/s", rtt_s=R, loss_rate=p, acks_per_packet=b)
def td_only_pps(rtt_s: Any, loss_rate: Any, acks_per_packet: Any = 1) -> Any:
    """PFTK without timeouts (triple-duplicate losses only); tends to Mathis as p -> 0.

    >>> round(td_only_pps(rtt_s=0.2, loss_rate=1e-4, acks_per_packet=2), 3)
    431.78
    """
    _check_reno("td_only_pps", rtt_s, loss_rate, acks_per_packet)
    return td_only_pps.evaluate(rtt_s=rtt_s, loss_rate=loss_rate,
                                acks_per_packet=acks_per_packet)


@closed_form(_AIMD, "pkt/s", rtt_s=R, loss_rate=p, increase_pkts=a_inc, decrease_factor=beta)
def aimd_pps(rtt_s: Any, loss_rate: Any, increase_pkts: Any = 1.0,
             decrease_factor: Any = 0.5) -> Any:
    """General AIMD(a, beta): +a packets per RTT, W <- beta W per loss event (Yang & Lam).

    >>> round(aimd_pps(rtt_s=0.1, loss_rate=0.01, decrease_factor=0.7), 2)
    168.33
    """
    _check_reno("aimd_pps", rtt_s, loss_rate, 1)
    require_positive("aimd_pps", increase_pkts=increase_pkts)
    require_probability("aimd_pps", decrease_factor=decrease_factor)
    return aimd_pps.evaluate(rtt_s=rtt_s, loss_rate=loss_rate, increase_pkts=increase_pkts,
                             decrease_factor=decrease_factor)


def westwood_pps(rtt_s: Any, min_rtt_s: Any, loss_rate: Any) -> Any:
    """Westwood+ as AIMD with the effective decrease beta = RTTmin/RTT (analytics.md 4.2, [D]).

    With no standing queue (RTT = RTTmin) losses do not reduce the window and the model
    gives no finite rate: that case is refused (the flow is capacity-limited instead).

    >>> round(westwood_pps(rtt_s=0.125, min_rtt_s=0.1, loss_rate=0.01), 2)
    169.71
    """
    require_positive("westwood_pps", rtt_s=rtt_s, min_rtt_s=min_rtt_s)
    ratio = np.asarray(min_rtt_s, float) / np.asarray(rtt_s, float)
    if not np.all(ratio < 1):
        raise AssumptionError("westwood_pps: assumption violated: min_rtt_s < rtt_s (a "
                              "standing queue; without one the rate is capacity-limited)")
    return aimd_pps(rtt_s=rtt_s, loss_rate=loss_rate, decrease_factor=ratio)


@closed_form(_TFRC, "B/s", segment_bytes=s_bytes, rtt_s=R, loss_rate=p, rto_s=T0,
             acks_per_packet=b)
def tfrc_bytes_per_s(segment_bytes: Any, rtt_s: Any, loss_rate: Any, rto_s: Any = None,
                     acks_per_packet: Any = 1) -> Any:
    """The TFRC throughput equation (RFC 5348 section 3.1), bytes/s; ``rto_s`` defaults to 4 RTT.

    >>> round(tfrc_bytes_per_s(segment_bytes=1000, rtt_s=0.1, loss_rate=0.01))
    112332
    """
    rto = 4 * np.asarray(rtt_s, float) if rto_s is None else rto_s
    _check_reno("tfrc_bytes_per_s", rtt_s, loss_rate, acks_per_packet)
    require_positive("tfrc_bytes_per_s", segment_bytes=segment_bytes, rto_s=rto)
    return tfrc_bytes_per_s.evaluate(segment_bytes=segment_bytes, rtt_s=rtt_s,
                                     loss_rate=loss_rate, rto_s=rto,
                                     acks_per_packet=acks_per_packet)
