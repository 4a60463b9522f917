"""Stability of TCP/RED: the Hollot-Misra-Towsley-Gong linearisation, stability region, RED design.

analytics.md 2.2. N Reno flows (b packets per ACK) through a RED queue of capacity C
(packets/s), propagation delay T_p. The operating point (W0, q0, p0) solves
``W0^2 p0 = 2/b``, ``W0 = R0 C/N``, ``R0 = T_p + q0/C``, ``p0 = p_RED(q0)``. Linearising
the MGT model about it (the delay fixed at R0) gives, with a = N/(b R0^2 C)::

    dW'(t) = -a (dW(t) + dW(t-R0)) - (dq(t) - dq(t-R0))/(b R0^2 C) - (R0 C^2/(2 N^2)) dp(t-R0)
    dq'(t) = (N/R0) dW(t) - dq(t)/R0
    dp     = L_red K/(s + K) dq,   L_red = max_p/(max_th - min_th),   K = -ln(1 - w_q) C

:func:`analyse_red` decides stability of this *full* linear loop by the Nyquist criterion
(the open loop has no right-half-plane poles, so the closed loop is stable iff
1 + G(j omega) does not wind around 0), and also reports HMTG's simplified loop
(dW(t-R0) ~ dW(t), the dq terms in dW' dropped) with its phase margin. :func:`critical_queue_weight`
bisects the w_q at which stability is lost; :func:`hmtg_red_design` gives the paper's
recommended K and L_red (sufficient condition for every N >= N- and R0 <= R+).

>>> op = operating_point(flows=60, capacity_pps=3750, prop_delay_s=0.2, min_th_pkts=50,
...                      max_th_pkts=550, max_p=0.1, acks_per_packet=1)
>>> round(op.queue_pkts, 2), round(op.window_pkts, 3), round(op.drop_prob, 6)
(99.85, 14.164, 0.009969)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy.optimize import brentq

from tcpn.errors import InputError

__all__ = [
    "OperatingPoint",
    "RedDesign",
    "StabilityReport",
    "analyse_red",
    "critical_queue_weight",
    "hmtg_red_design",
    "operating_point",
    "simplified_loop",
]


@dataclass(frozen=True)
class OperatingPoint:
    """The equilibrium of N Reno flows through RED (HMTG): window, queue, RTT, probability."""

    flows: int
    capacity_pps: float
    prop_delay_s: float
    acks_per_packet: float
    window_pkts: float
    queue_pkts: float
    rtt_s: float
    drop_prob: float
    slope: float  # L_red = dp/dq at q0


def _red_probability(q: float, lo: float, hi: float, max_p: float, gentle: bool) -> float:
    if q < lo:
        return 0.0
    if q <= hi:
        return max_p * (q - lo) / (hi - lo)
    if gentle and q <= 2 * hi:
        return max_p + (1 - max_p) * (q - hi) / hi
    return 1.0


def operating_point(flows: int, capacity_pps: float, prop_delay_s: float, min_th_pkts: float,
                    max_th_pkts: float, max_p: float, acks_per_packet: float = 1.0,
                    gentle: bool = False) -> OperatingPoint:
    """Solve W0^2 p0 = 2/b, W0 = R0 C/N, R0 = T_p + q0/C, p0 = p_RED(q0) for q0 (Brent).

    Refuses N < 1, C <= 0, T_p <= 0, and RED settings under which the queue would settle
    in the region p = 1 (no operating point of the linear model). Below min_th p = 0 and
    the windows grow, so with persistent flows the root always lies above min_th.
    """
    if flows < 1 or not capacity_pps > 0 or not prop_delay_s > 0:
        raise InputError("operating_point: assumption violated: flows >= 1, capacity_pps > 0, "
                         f"prop_delay_s > 0 (got {flows}, {capacity_pps}, {prop_delay_s})")
    if not 0 <= min_th_pkts < max_th_pkts or not 0 < max_p <= 1:
        raise InputError("operating_point: RED needs 0 <= min_th < max_th and 0 < max_p <= 1")
    top = 2 * max_th_pkts if gentle else max_th_pkts

    def excess(q: float) -> float:
        window = (prop_delay_s + q / capacity_pps) * capacity_pps / flows
        return window**2 * _red_probability(q, min_th_pkts, max_th_pkts, max_p, gentle) \
            - 2 / acks_per_packet

    if excess(top) <= 0:
        raise InputError(f"operating_point: no operating point with p < 1: the queue would "
                         f"exceed {'2 max_th' if gentle else 'max_th'} ({top:g} pkt); "
                         "raise max_p or max_th")
    q0 = float(brentq(excess, min_th_pkts, top, xtol=1e-12))
    r0 = prop_delay_s + q0 / capacity_pps
    p0 = _red_probability(q0, min_th_pkts, max_th_pkts, max_p, gentle)
    slope = max_p / (max_th_pkts - min_th_pkts) if q0 <= max_th_pkts \
        else (1 - max_p) / max_th_pkts
    return OperatingPoint(flows, capacity_pps, prop_delay_s, acks_per_packet,
                          r0 * capacity_pps / flows, q0, r0, p0, slope)


def filter_rate(queue_weight: float, capacity_pps: float) -> float:
    """RED's averaging pole K = -ln(1 - w_q) C (1/s), MGT's sampling at the link rate.

    >>> round(filter_rate(0.002, 3750), 3)
    7.508
    """
    if not 0 < queue_weight < 1:
        raise InputError(f"queue_weight must be in (0, 1) (got {queue_weight})")
    return -math.log1p(-queue_weight) * capacity_pps


def _full_loop(op: OperatingPoint, k: float, s: np.ndarray) -> np.ndarray:
    n, c, r, b = op.flows, op.capacity_pps, op.rtt_s, op.acks_per_packet
    e = np.exp(-s * r)
    a = n / (b * r * r * c)
    cq = 1 / (b * r * r * c)
    g = r * c * c / (2 * n * n)
    red = op.slope * k / (s + k)
    return (n / r) * (cq * (1 - e) + g * e * red) / ((s + 1 / r) * (s + a * (1 + e)))


def simplified_loop(op: OperatingPoint, queue_weight: float) -> sp.Expr:
    """HMTG's simplified open loop L(s) as a SymPy expression in ``s`` (for reports).

    >>> op = operating_point(60, 3750, 0.2, 50, 550, 0.1)
    >>> str(simplified_loop(op, 1e-4).free_symbols)
    '{s}'
    """
    s = sp.Symbol("s")
    n, c, r, b = op.flows, op.capacity_pps, op.rtt_s, op.acks_per_packet
    k = filter_rate(queue_weight, c)
    p_tcp = (r * c**2 / (2 * n**2)) / (s + 2 * n / (b * r**2 * c))
    p_queue = (n / r) / (s + 1 / r)
    return op.slope * k / (s + k) * p_tcp * p_queue * sp.exp(-s * r)


@dataclass(frozen=True)
class StabilityReport:
    """Verdicts of the linear analysis at one operating point and one RED filter."""

    operating_point: OperatingPoint
    queue_weight: float
    filter_rate: float
    stable: bool                     # full linearisation, Nyquist
    unstable_roots: int              # closed-loop roots in the right half-plane
    simplified_stable: bool          # HMTG's simplified loop
    phase_margin_deg: float          # of the simplified loop (nan: no crossover, stable)
    crossover_rad_s: float
    hmtg_sufficient: bool            # the design inequality at (N, R0)


def _winding(values: np.ndarray) -> int:
    phase = np.unwrap(np.angle(values))
    return round((phase[-1] - phase[0]) / (2 * math.pi))


def analyse_red(op: OperatingPoint, queue_weight: float) -> StabilityReport:
    """Nyquist test of the full linear loop, phase margin of the simplified one.

    >>> op = operating_point(60, 3750, 0.2, 50, 550, 0.1, acks_per_packet=1)
    >>> analyse_red(op, 1e-4).stable, analyse_red(op, 0.002).stable
    (True, False)
    """
    k = filter_rate(queue_weight, op.capacity_pps)
    r = op.rtt_s
    fastest = max(k, 1 / r, op.flows / (op.acks_per_packet * r * r * op.capacity_pps))
    # Frequencies from far below the slowest pole to far above the fastest; the delay
    # turns the phase by omega R, so the grid must also resolve 2 pi / R.
    omega = np.unique(np.concatenate([
        np.geomspace(1e-4 * min(k, 1 / r), 1e4 * fastest, 50_000),
        np.linspace(0.0, 1e3 * fastest, 50_000)]))
    loop = _full_loop(op, k, 1j * omega)
    # Winding of 1 + G over the whole axis = twice that over omega >= 0 (conjugate symmetry).
    roots = 2 * _winding(1 + loop) * -1
    roots = max(roots, 0)
    dc = op.slope * (r * op.capacity_pps) ** 3 / (2 * op.flows) ** 2
    p_tcp_pole = 2 * op.flows / (op.acks_per_packet * r * r * op.capacity_pps)
    simple = dc * (p_tcp_pole * (1 / r) * k) / ((1j * omega + k) * (1j * omega + p_tcp_pole)
                                                * (1j * omega + 1 / r)) * np.exp(-1j * omega * r)
    magnitude = np.abs(simple)
    if magnitude[0] <= 1:
        margin, cross = float("nan"), float("nan")
        simple_stable = True
    else:
        idx = int(np.argmax(magnitude < 1))
        cross = float(omega[idx])
        margin = float(np.degrees(np.pi + np.unwrap(np.angle(simple))[idx]))
        simple_stable = margin > 0
    omega_g = 0.1 * min(p_tcp_pole, 1 / r)
    sufficient = dc <= math.sqrt(omega_g**2 / k**2 + 1)
    return StabilityReport(op, queue_weight, k, roots == 0, roots, simple_stable, margin,
                           cross, sufficient)


def critical_queue_weight(op: OperatingPoint, low: float = 1e-9,
                          high: float = 0.5) -> float:
    """The smallest RED weight w_q in [low, high] at which the full linear loop is unstable.

    A log-spaced scan finds the first unstable weight, bisection (on log w_q, to 0.1 %)
    the boundary. The region need not be an interval: with a fast enough filter the loop
    can be stable again (``analyse_red`` tells). Raises :class:`~tcpn.errors.InputError`
    if ``low`` is already unstable or nothing in the bracket is.

    >>> op = operating_point(60, 3750, 0.2, 50, 550, 0.1, acks_per_packet=1)
    >>> 1e-4 < critical_queue_weight(op) < 0.002
    True
    """
    if not analyse_red(op, low).stable:
        raise InputError(f"critical_queue_weight: unstable already at w_q = {low:g}")
    grid = np.geomspace(low, high, 25)
    unstable = [w for w in grid if not analyse_red(op, float(w)).stable]
    if not unstable:
        raise InputError(f"critical_queue_weight: stable for every w_q in [{low:g}, {high:g}]")
    hi = math.log(unstable[0])
    lo = math.log(grid[int(np.searchsorted(grid, unstable[0])) - 1])
    while hi - lo > 1e-3:
        mid = 0.5 * (lo + hi)
        if analyse_red(op, math.exp(mid)).stable:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


@dataclass(frozen=True)
class RedDesign:
    """HMTG's recommended RED filter and slope for all N >= N- and R0 <= R+."""

    crossover_rad_s: float      # omega_g
    filter_rate: float          # K (1/s)
    queue_weight: float         # w_q = 1 - exp(-K/C)
    max_slope: float            # largest L_red = max_p/(max_th - min_th)
    dc_gain_per_slope: float    # (R+ C)^3/(2 N-)^2


def hmtg_red_design(min_flows: int, max_rtt_s: float, capacity_pps: float,
                    filter_rate_rad_s: float | None = None) -> RedDesign:
    """omega_g = 0.1 min(2N-/(R+^2 C), 1/R+); L_red (R+ C)^3/(2N-)^2 <= sqrt(omega_g^2/K^2 + 1).

    ``filter_rate_rad_s`` is K (default omega_g, the paper's rule of putting the filter
    pole near the crossover).

    >>> d = hmtg_red_design(60, 0.246, 3750, filter_rate_rad_s=0.005)
    >>> round(d.crossover_rad_s, 4), round(d.dc_gain_per_slope), f"{d.max_slope:.3g}"
    (0.0529, 54518, '0.000195')
    >>> f"{d.queue_weight:.3g}"
    '1.33e-06'
    """
    if min_flows < 1 or not max_rtt_s > 0 or not capacity_pps > 0:
        raise InputError("hmtg_red_design: assumption violated: min_flows >= 1, max_rtt_s > 0,"
                         " capacity_pps > 0")
    omega_g = 0.1 * min(2 * min_flows / (max_rtt_s**2 * capacity_pps), 1 / max_rtt_s)
    k = omega_g if filter_rate_rad_s is None else filter_rate_rad_s
    if not k > 0:
        raise InputError(f"hmtg_red_design: filter_rate_rad_s must be > 0 (got {k})")
    gain = (max_rtt_s * capacity_pps) ** 3 / (2 * min_flows) ** 2
    return RedDesign(omega_g, k, -math.expm1(-k / capacity_pps),
                     math.sqrt(omega_g**2 / k**2 + 1) / gain, gain)
