"""ECN marking thresholds, DCTCP bounds, RED guidelines and buffer sizing rules.

analytics.md sections 7.2 and 8. Queues and thresholds in packets, capacities in
packets/s, times in seconds. The studies' threshold (S2, equation 1) is
:func:`study_threshold_pkts`; its fluid reading is :func:`feedback_headroom_pkts`: a mark
sent at queue K takes one RTT to act, while the queue grows by (lambda - mu) RTT.

>>> study_threshold_pkts(buffer_pkts=80, rtt_s=120, arrival_gap_s=5, service_time_s=6)
76.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp
from scipy.optimize import brentq

from tcpn.solvers.closed_forms.formula import (
    AssumptionError,
    closed_form,
    require,
    require_positive,
    require_probability,
    warn_outside,
)

__all__ = [
    "AdaptiveRedSettings",
    "DctcpSawtooth",
    "adaptive_red_settings",
    "aimd_no_underflow_threshold_pkts",
    "appenzeller_buffer_pkts",
    "appenzeller_utilisation",
    "bdp_buffer_pkts",
    "ca_overshoot_threshold_pkts",
    "dctcp_max_gain",
    "dctcp_min_threshold_pkts",
    "dctcp_sawtooth",
    "feedback_headroom_pkts",
    "mm1b_blocking_probability",
    "overflow_window_pkts",
    "red_max_weight_for_burst",
    "self_consistent_threshold_pkts",
    "study_threshold_pkts",
]

B, R, TBA, TPS, d = sp.symbols("B RTT T_BA T_PS d", positive=True)
lam, mu, C, N, K, beta, rho = sp.symbols("lambda mu C N K beta rho", positive=True)


def _check_congested(model: str, arrival_gap_s: Any, service_time_s: Any) -> None:
    require_positive(model, arrival_gap_s=arrival_gap_s, service_time_s=service_time_s)
    warn_outside(np.asarray(arrival_gap_s) < np.asarray(service_time_s), model,
                 "arrival_gap_s < service_time_s (measured while the queue grows); with "
                 "long-run means of a stable queue the threshold degenerates to >= B")


@closed_form(B - (R / TBA - R / TPS), "pkt", buffer_pkts=B, rtt_s=R, arrival_gap_s=TBA,
             service_time_s=TPS)
def study_threshold_pkts(buffer_pkts: Any, rtt_s: Any, arrival_gap_s: Any,
                         service_time_s: Any) -> Any:
    """The S2 study's equation 1: K = B - (RTT/TBA - RTT/TPS).

    ``arrival_gap_s`` is TBA, the mean gap between segment arrivals at the router while
    congested; ``service_time_s`` is TPS. Warns when TBA >= TPS (the degenerate reading)
    and refuses a threshold below zero (the buffer cannot absorb one RTT of overshoot).

    >>> round(study_threshold_pkts.solve_for("rtt_s", 50, (1, 1000), buffer_pkts=80,
    ...                                      arrival_gap_s=5, service_time_s=6))
    900
    """
    require_positive("study_threshold_pkts", buffer_pkts=buffer_pkts, rtt_s=rtt_s)
    _check_congested("study_threshold_pkts", arrival_gap_s, service_time_s)
    value = study_threshold_pkts.evaluate(buffer_pkts=buffer_pkts, rtt_s=rtt_s,
                                          arrival_gap_s=arrival_gap_s,
                                          service_time_s=service_time_s)
    require(np.asarray(value) >= 0, "study_threshold_pkts",
            "K >= 0: the buffer must absorb (RTT/TBA - RTT/TPS) segments of overshoot")
    return value


@closed_form((lam - mu) * R, "pkt", arrival_rate_pps=lam, service_rate_pps=mu, rtt_s=R)
def feedback_headroom_pkts(arrival_rate_pps: Any, service_rate_pps: Any, rtt_s: Any) -> Any:
    """Fluid reading of the study's equation: the queue growth during one feedback delay.

    With dq/dt = lambda - mu, a mark sent at q = K acts one RTT later, so no overflow
    iff K + (lambda - mu) RTT <= B. K = B - headroom is the study's equation.

    >>> round(feedback_headroom_pkts(arrival_rate_pps=0.2, service_rate_pps=1 / 6, rtt_s=120), 9)
    4.0
    """
    require_positive("feedback_headroom_pkts", arrival_rate_pps=arrival_rate_pps,
                     service_rate_pps=service_rate_pps, rtt_s=rtt_s)
    return feedback_headroom_pkts.evaluate(arrival_rate_pps=arrival_rate_pps,
                                           service_rate_pps=service_rate_pps, rtt_s=rtt_s)


@closed_form((B - (1 / TBA - 1 / TPS) * d) * TBA / TPS, "pkt", buffer_pkts=B,
             base_rtt_s=d, arrival_gap_s=TBA, service_time_s=TPS)
def self_consistent_threshold_pkts(buffer_pkts: Any, base_rtt_s: Any, arrival_gap_s: Any,
                                   service_time_s: Any) -> Any:
    """The study's equation with the RTT at the threshold, RTT = d + K TPS, solved for K [D].

    K = (B - (lambda - mu) d) mu/lambda with lambda = 1/TBA, mu = 1/TPS.

    >>> round(self_consistent_threshold_pkts(80, base_rtt_s=120, arrival_gap_s=5,
    ...                                      service_time_s=6), 3)
    63.333
    """
    require_positive("self_consistent_threshold_pkts", buffer_pkts=buffer_pkts,
                     base_rtt_s=base_rtt_s)
    _check_congested("self_consistent_threshold_pkts", arrival_gap_s, service_time_s)
    return self_consistent_threshold_pkts.evaluate(
        buffer_pkts=buffer_pkts, base_rtt_s=base_rtt_s, arrival_gap_s=arrival_gap_s,
        service_time_s=service_time_s)


@closed_form(B - N, "pkt", buffer_pkts=B, flows=N)
def ca_overshoot_threshold_pkts(buffer_pkts: Any, flows: Any) -> Any:
    """Congestion-avoidance overshoot: N flows each add one packet per RTT, so K <= B - N.

    >>> ca_overshoot_threshold_pkts(buffer_pkts=100, flows=8)
    92.0
    """
    require_positive("ca_overshoot_threshold_pkts", buffer_pkts=buffer_pkts, flows=flows)
    return ca_overshoot_threshold_pkts.evaluate(buffer_pkts=buffer_pkts, flows=flows)


@closed_form((C * d + B) / N, "pkt", capacity_pps=C, prop_rtt_s=d, buffer_pkts=B, flows=N)
def overflow_window_pkts(capacity_pps: Any, prop_rtt_s: Any, buffer_pkts: Any,
                         flows: Any = 1) -> Any:
    """Per-flow window at which synchronised flows overflow a drop-tail buffer: (C d + B)/N.

    >>> overflow_window_pkts(capacity_pps=1000, prop_rtt_s=0.05, buffer_pkts=50, flows=2)
    50.0
    """
    require_positive("overflow_window_pkts", capacity_pps=capacity_pps, prop_rtt_s=prop_rtt_s,
                     buffer_pkts=buffer_pkts, flows=flows)
    return overflow_window_pkts.evaluate(capacity_pps=capacity_pps, prop_rtt_s=prop_rtt_s,
                                         buffer_pkts=buffer_pkts, flows=flows)


@closed_form((1 - rho) * rho**B / (1 - rho ** (B + 1)), "1", load=rho, buffer_pkts=B)
def mm1b_blocking_probability(load: Any, buffer_pkts: Any) -> Any:
    """M/M/1/B blocking: (1 - rho) rho^B / (1 - rho^(B+1)); at rho = 1 the limit 1/(B+1).

    >>> round(mm1b_blocking_probability(load=0.9, buffer_pkts=10), 5)
    0.05081
    >>> round(mm1b_blocking_probability(load=1.0, buffer_pkts=10), 5)
    0.09091
    """
    require_positive("mm1b_blocking_probability", load=load, buffer_pkts=buffer_pkts)
    load_arr = np.asarray(load, dtype=float)
    limit = 1.0 / (np.asarray(buffer_pkts, dtype=float) + 1.0)
    with np.errstate(all="ignore"):
        value = mm1b_blocking_probability.evaluate(load=load_arr, buffer_pkts=buffer_pkts)
    value = np.where(np.isclose(load_arr, 1.0, rtol=0, atol=1e-12), limit, value)
    return float(value) if np.ndim(value) == 0 else value


@closed_form(C * R / 7, "pkt", capacity_pps=C, rtt_s=R)
def dctcp_min_threshold_pkts(capacity_pps: Any, rtt_s: Any) -> Any:
    """DCTCP's lower bound K > C RTT / 7 (the queue never drains under the sawtooth).

    >>> round(dctcp_min_threshold_pkts(capacity_pps=10e9 / 12000, rtt_s=100e-6), 1)
    11.9
    """
    require_positive("dctcp_min_threshold_pkts", capacity_pps=capacity_pps, rtt_s=rtt_s)
    return dctcp_min_threshold_pkts.evaluate(capacity_pps=capacity_pps, rtt_s=rtt_s)


@closed_form(sp.log(4) / sp.sqrt(2 * (C * R + K)), "1", capacity_pps=C, rtt_s=R,
             threshold_pkts=K)
def dctcp_max_gain(capacity_pps: Any, rtt_s: Any, threshold_pkts: Any) -> Any:
    """DCTCP's bound on the estimation gain: g < ln(4)/sqrt(2 (C RTT + K)).

    >>> round(dctcp_max_gain(capacity_pps=10e9 / 12000, rtt_s=100e-6, threshold_pkts=12), 3)
    0.1
    """
    require_positive("dctcp_max_gain", capacity_pps=capacity_pps, rtt_s=rtt_s,
                     threshold_pkts=threshold_pkts)
    return dctcp_max_gain.evaluate(capacity_pps=capacity_pps, rtt_s=rtt_s,
                                   threshold_pkts=threshold_pkts)


@dataclass(frozen=True)
class DctcpSawtooth:
    """The steady DCTCP sawtooth of N synchronised flows (Alizadeh et al. 2010)."""

    window_pkts: float
    alpha: float
    amplitude_pkts: float
    queue_max_pkts: float
    queue_min_pkts: float


def dctcp_sawtooth(bdp_pkts: float, threshold_pkts: float, flows: int) -> DctcpSawtooth:
    """W* = (BDP + K)/N, alpha = sqrt(2/W*), A = sqrt(2N(BDP + K))/2, Q_max = K + N.

    >>> s = dctcp_sawtooth(bdp_pkts=83.3, threshold_pkts=20, flows=2)
    >>> round(s.window_pkts, 2), round(s.amplitude_pkts, 2), round(s.queue_min_pkts, 2)
    (51.65, 10.16, 11.84)
    """
    require_positive("dctcp_sawtooth", bdp_pkts=bdp_pkts, threshold_pkts=threshold_pkts,
                     flows=flows)
    window = (bdp_pkts + threshold_pkts) / flows
    amplitude = 0.5 * math.sqrt(2 * flows * (bdp_pkts + threshold_pkts))
    return DctcpSawtooth(window, math.sqrt(2 / window), amplitude, threshold_pkts + flows,
                         threshold_pkts + flows - amplitude)


@closed_form(C * R * (1 - beta) / beta, "pkt", capacity_pps=C, rtt_s=R, decrease_factor=beta)
def aimd_no_underflow_threshold_pkts(capacity_pps: Any, rtt_s: Any,
                                     decrease_factor: Any = 0.5) -> Any:
    """Smallest threshold (or buffer) that keeps an AIMD(beta) link busy: C RTT (1 - beta)/beta [D].

    >>> aimd_no_underflow_threshold_pkts(capacity_pps=1000, rtt_s=0.1)
    100.0
    """
    require_positive("aimd_no_underflow_threshold_pkts", capacity_pps=capacity_pps, rtt_s=rtt_s)
    require_probability("aimd_no_underflow_threshold_pkts", decrease_factor=decrease_factor)
    return aimd_no_underflow_threshold_pkts.evaluate(capacity_pps=capacity_pps, rtt_s=rtt_s,
                                                     decrease_factor=decrease_factor)


@closed_form(C * R, "pkt", capacity_pps=C, rtt_s=R)
def bdp_buffer_pkts(capacity_pps: Any, rtt_s: Any) -> Any:
    """The rule-of-thumb buffer, one bandwidth-delay product (Villamizar & Song).

    >>> bdp_buffer_pkts(capacity_pps=1000, rtt_s=0.1)
    100.0
    """
    require_positive("bdp_buffer_pkts", capacity_pps=capacity_pps, rtt_s=rtt_s)
    return bdp_buffer_pkts.evaluate(capacity_pps=capacity_pps, rtt_s=rtt_s)


@closed_form(C * R / sp.sqrt(N), "pkt", capacity_pps=C, rtt_s=R, flows=N)
def appenzeller_buffer_pkts(capacity_pps: Any, rtt_s: Any, flows: Any) -> Any:
    """Buffer for many desynchronised flows, C RTT / sqrt(N) (Appenzeller et al. 2004).

    >>> appenzeller_buffer_pkts(capacity_pps=1000, rtt_s=0.1, flows=100)
    10.0
    """
    require_positive("appenzeller_buffer_pkts", capacity_pps=capacity_pps, rtt_s=rtt_s,
                     flows=flows)
    warn_outside(np.asarray(flows) >= 100, "appenzeller_buffer_pkts",
                 "flows >= ~100 desynchronised long-lived flows (the sqrt(N) argument)")
    return appenzeller_buffer_pkts.evaluate(capacity_pps=capacity_pps, rtt_s=rtt_s, flows=flows)


@closed_form(sp.erf(3 * sp.sqrt(3) / (2 * sp.sqrt(2)) * B / ((2 * d * C + B) / sp.sqrt(N))),
             "1", buffer_pkts=B, one_way_delay_s=d, capacity_pps=C, flows=N)
def appenzeller_utilisation(buffer_pkts: Any, one_way_delay_s: Any, capacity_pps: Any,
                            flows: Any) -> Any:
    """Appenzeller's utilisation bound erf((3 sqrt3 / (2 sqrt2)) B / ((2 T_p C + B)/sqrt N)).

    >>> round(appenzeller_utilisation(buffer_pkts=0.2, one_way_delay_s=1e-3,
    ...                               capacity_pps=1e6, flows=1e8), 4)
    0.9906
    """
    require_positive("appenzeller_utilisation", buffer_pkts=buffer_pkts,
                     one_way_delay_s=one_way_delay_s, capacity_pps=capacity_pps, flows=flows)
    return appenzeller_utilisation.evaluate(buffer_pkts=buffer_pkts,
                                            one_way_delay_s=one_way_delay_s,
                                            capacity_pps=capacity_pps, flows=flows)


def red_max_weight_for_burst(min_th_pkts: float, burst_pkts: int) -> float:
    """Floyd & Jacobson's burst bound: largest w_q with L + 1 + ((1-w)^(L+1) - 1)/w < min_th.

    A burst of L packets into an idle queue must leave the average below min_th.

    >>> round(red_max_weight_for_burst(min_th_pkts=5, burst_pkts=50), 4)
    0.0042
    """
    require_positive("red_max_weight_for_burst", min_th_pkts=min_th_pkts, burst_pkts=burst_pkts)
    length = float(burst_pkts)
    if length + 1 <= min_th_pkts:
        raise AssumptionError("red_max_weight_for_burst: assumption violated: burst_pkts + 1 "
                              "> min_th_pkts (a shorter burst never reaches min_th)")

    def average_minus_threshold(weight: float) -> float:
        return length + 1 + ((1 - weight) ** (length + 1) - 1) / weight - min_th_pkts

    return float(brentq(average_minus_threshold, 1e-12, 1.0 - 1e-12, xtol=1e-15))


@dataclass(frozen=True)
class AdaptiveRedSettings:
    """Adaptive RED's automatic settings (Floyd, Gummadi, Shenker 2001; ns-3 RedQueueDisc)."""

    min_th_pkts: float
    max_th_pkts: float
    queue_weight: float


def adaptive_red_settings(capacity_pps: float,
                          target_delay_s: float = 0.005) -> AdaptiveRedSettings:
    """min_th = max(5, target_delay C / 2), max_th = 3 min_th, w_q = 1 - exp(-1/C).

    >>> s = adaptive_red_settings(capacity_pps=3750, target_delay_s=0.005)
    >>> s.min_th_pkts, s.max_th_pkts, round(s.queue_weight, 7)
    (9.375, 28.125, 0.0002666)
    """
    require_positive("adaptive_red_settings", capacity_pps=capacity_pps,
                     target_delay_s=target_delay_s)
    min_th = max(5.0, target_delay_s * capacity_pps / 2)
    return AdaptiveRedSettings(min_th, 3 * min_th, -math.expm1(-1.0 / capacity_pps))
