"""One Reno flow through a token bucket: policer, IN/OUT marker, shaper (analytics.md 5, [D]).

Deterministic sawtooth analysis (one halving per loss episode, as with SACK). ``rate_pps``
is the token rate r, ``depth_pkts`` the bucket depth b, ``rtt_s`` the base RTT T, all in
packets and seconds; W_r = r T. These forms are derived, not published: the fluid lens
(:mod:`tcpn.solvers.fluid`) checks them, and the net and ns-3 lenses should too.

>>> round(policer_pps(rate_pps=1000, depth_pkts=100, rtt_s=0.1), 1)
856.1
>>> policer_pps(rate_pps=1000, depth_pkts=556, rtt_s=0.1)
1000.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from tcpn.solvers.closed_forms.formula import (
    closed_form,
    require_positive,
    require_probability,
)

__all__ = [
    "marker_pps",
    "policer_min_depth_pkts",
    "policer_pps",
    "shaper_pps",
    "shaper_reaches_rate",
]

r, b, T, Q, p = sp.symbols("r b T Q p", positive=True)
_WR = r * T
_POLICER = sp.Piecewise((r, b >= _WR**2 / 18),
                        (sp.Rational(3, 4) * (_WR + sp.sqrt(2 * b)) / T, True))


@closed_form(_POLICER, "pkt/s", rate_pps=r, depth_pkts=b, rtt_s=T)
def policer_pps(rate_pps: Any, depth_pkts: Any, rtt_s: Any) -> Any:
    """Throughput through a policer (non-conforming packets dropped, no queue), case A.

    Full rate iff b >= W_r^2/18; otherwise (3/4)(W_r + sqrt(2b))/T and tokens are wasted.
    Real policers drop bursts: Reno without SACK times out and falls below this.

    >>> round(policer_pps.solve_for("depth_pkts", 900, (0, 1000), rate_pps=1000, rtt_s=0.1), 2)
    200.0
    """
    require_positive("policer_pps", rate_pps=rate_pps, rtt_s=rtt_s)
    require_positive("policer_pps", depth_pkts_plus_one=np.asarray(depth_pkts, float) + 1)
    return policer_pps.evaluate(rate_pps=rate_pps, depth_pkts=depth_pkts, rtt_s=rtt_s)


@closed_form(_WR**2 / 18, "pkt", rate_pps=r, rtt_s=T)
def policer_min_depth_pkts(rate_pps: Any, rtt_s: Any) -> Any:
    """The smallest bucket depth with which a policed Reno flow reaches its rate: (r T)^2/18.

    >>> round(policer_min_depth_pkts(rate_pps=1000, rtt_s=0.1), 1)
    555.6
    """
    require_positive("policer_min_depth_pkts", rate_pps=rate_pps, rtt_s=rtt_s)
    return policer_min_depth_pkts.evaluate(rate_pps=rate_pps, rtt_s=rtt_s)


_U = sp.Rational(2, 3) * (_WR + sp.sqrt(_WR**2 + 6 / p))
_DEFICIT = sp.Piecewise(((_WR - _U / 2) ** 2 / 2, _U / 2 < _WR), (0, True))
_MARKER = sp.Piecewise((r / 2 + sp.sqrt(r**2 / 4 + 3 / (2 * p * T**2)), b >= _DEFICIT),
                       (sp.Rational(3, 4) * (_WR + sp.sqrt(2 * (b + 1 / p))) / T, True))


@closed_form(_MARKER, "pkt/s", assured_pps=r, depth_pkts=b, rtt_s=T, out_drop_prob=p)
def marker_pps(assured_pps: Any, depth_pkts: Any, rtt_s: Any, out_drop_prob: Any) -> Any:
    """IN/OUT token-bucket marker (OUT dropped with probability p, IN never), case B.

    The Sahu / Yeom-Reddy setting: the assured rate A is not reached iff
    b + 1/p < (A T)^2/18; when the bucket never overflows b has no influence.

    >>> [round(marker_pps(a, b, 0.1, p), 1) for a, b, p in
    ...  [(100, 50, .01), (1000, 50, .01), (1000, 1000, .01), (2000, 100, .05)]]
    [182.3, 879.9, 1014.8, 1616.2]
    """
    require_positive("marker_pps", assured_pps=assured_pps, rtt_s=rtt_s,
                     depth_pkts_plus_one=np.asarray(depth_pkts, float) + 1)
    require_probability("marker_pps", out_drop_prob=out_drop_prob)
    return marker_pps.evaluate(assured_pps=assured_pps, depth_pkts=depth_pkts, rtt_s=rtt_s,
                               out_drop_prob=out_drop_prob)


def shaper_reaches_rate(rate_pps: float, depth_pkts: float, queue_pkts: float,
                        rtt_s: float) -> bool:
    """Case C: a shaper (queue Q, bucket b) lets Reno reach r iff r T <= 2 sqrt(2b) + max(Q, √(2b)).

    b = 0 gives the BDP rule Q >= r T; Q = 0 gives the policer condition.

    >>> shaper_reaches_rate(1000, depth_pkts=0, queue_pkts=100, rtt_s=0.1)
    True
    """
    require_positive("shaper_reaches_rate", rate_pps=rate_pps, rtt_s=rtt_s)
    root = np.sqrt(2 * depth_pkts)
    return bool(rate_pps * rtt_s <= 2 * root + max(queue_pkts, root))


def shaper_pps(rate_pps: float, depth_pkts: float, queue_pkts: float, rtt_s: float) -> float:
    """Throughput of one Reno flow through a shaper with queue Q and bucket b, case C [D].

    W_max = W_r + max(Q, sqrt(2b)), W_min = W_max/2, W_B = W_r + sqrt(2b); a cycle carries
    (W_max^2 - W_min^2)/2 packets in (W_B - W_min) T + (W_max^2 - W_B^2)/(2r) seconds when
    sqrt(2b) < Q (in (W_max - W_min) T otherwise).

    >>> [round(shaper_pps(1000, b, q, 0.1)) for b, q in [(0, 50), (50, 20), (300, 10)]]
    [964, 878, 934]
    """
    require_positive("shaper_pps", rate_pps=rate_pps, rtt_s=rtt_s,
                     depth_pkts_plus_one=depth_pkts + 1, queue_pkts_plus_one=queue_pkts + 1)
    if shaper_reaches_rate(rate_pps, depth_pkts, queue_pkts, rtt_s):
        return float(rate_pps)
    w_r = rate_pps * rtt_s
    root = float(np.sqrt(2 * depth_pkts))
    w_max = w_r + max(queue_pkts, root)
    w_min = w_max / 2
    w_b = w_r + root
    packets = (w_max**2 - w_min**2) / 2
    if root < queue_pkts:
        cycle = (w_b - w_min) * rtt_s + (w_max**2 - w_b**2) / (2 * rate_pps)
    else:
        cycle = (w_max - w_min) * rtt_s
    return float(packets / cycle)
