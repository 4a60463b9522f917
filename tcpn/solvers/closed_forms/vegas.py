"""Vegas equilibria: rates from backlogs, single-link fixed point, persistent congestion, Reno.

analytics.md section 3. Backlog targets ``alpha_pkts``/``beta_pkts`` are in packets (the
Linux/ns-3 convention; LPW's alpha_s d_s). Rates are packets/s, delays seconds.

>>> eq = single_link_equilibrium(capacity_pps=1000, alpha_pkts=[2, 2], prop_delay_s=[0.05, 0.2])
>>> eq.queue_pkts, [round(x, 1) for x in eq.rates_pps]
(4.0, [500.0, 500.0])
"""

from __future__ import annotations

from collections.abc import Sequence
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
)

__all__ = [
    "PersistentCongestion",
    "VegasEquilibrium",
    "persistent_congestion",
    "reno_sawtooth_mean_queue_pkts",
    "single_link_equilibrium",
    "vegas_rate_pps",
    "vegas_share_band",
]

alpha, qdelay, B, bdp = sp.symbols("alpha q B BDP", positive=True)


@closed_form(alpha / qdelay, "pkt/s", alpha_pkts=alpha, queueing_delay_s=qdelay)
def vegas_rate_pps(alpha_pkts: Any, queueing_delay_s: Any) -> Any:
    """A Vegas source keeping ``alpha_pkts`` queued on a path with this queueing delay: x = alpha/q.

    (LPW's equilibrium x_s q_s = alpha_s d_s, with the backlog target in packets.)

    >>> vegas_rate_pps(alpha_pkts=2, queueing_delay_s=0.004)
    500.0
    """
    require_positive("vegas_rate_pps", alpha_pkts=alpha_pkts, queueing_delay_s=queueing_delay_s)
    return vegas_rate_pps.evaluate(alpha_pkts=alpha_pkts, queueing_delay_s=queueing_delay_s)


@dataclass(frozen=True)
class VegasEquilibrium:
    """Vegas sources sharing one link at their fixed point (alpha = beta)."""

    queue_pkts: float
    queueing_delay_s: float
    rates_pps: tuple[float, ...]
    windows_pkts: tuple[float, ...]


def single_link_equilibrium(capacity_pps: float, alpha_pkts: Sequence[float],
                            prop_delay_s: Sequence[float]) -> VegasEquilibrium:
    """The fixed point of Vegas sources with alpha = beta on one link (Mo et al., LPW).

    The queue holds sum(alpha) packets; each source gets C alpha_i / sum(alpha) whatever
    its propagation delay (no RTT bias); windows are x_i (d_i + Q/C).

    >>> eq = single_link_equilibrium(1000, [1, 3], [0.1, 0.1])
    >>> eq.rates_pps, round(eq.windows_pkts[1], 3)
    ((250.0, 750.0), 78.0)
    """
    a = np.asarray(alpha_pkts, dtype=float)
    d = np.asarray(prop_delay_s, dtype=float)
    require(a.size > 0 and a.shape == d.shape, "single_link_equilibrium",
            "one alpha_pkts and one prop_delay_s per source, at least one source")
    require_positive("single_link_equilibrium", capacity_pps=capacity_pps, alpha_pkts=a,
                     prop_delay_s=d)
    queue = float(a.sum())
    delay = queue / capacity_pps
    rates = capacity_pps * a / queue
    return VegasEquilibrium(queue, delay, tuple(map(float, rates)),
                            tuple(map(float, rates * (d + delay))))


@dataclass(frozen=True)
class PersistentCongestion:
    """Identical Vegas sources arriving one by one, each taking the queue it finds as base RTT."""

    queue_pkts: float
    queueing_delays_s: tuple[float, ...]
    rates_pps: tuple[float, ...]

    @property
    def first_to_last_rate_ratio(self) -> float:
        """Rate of the first source over the rate of the last one (1 without the error)."""
        return self.rates_pps[0] / self.rates_pps[-1]


def persistent_congestion(n_flows: int, alpha_pkts: float,
                          capacity_pps: float) -> PersistentCongestion:
    """LPW's base-RTT error: source i over-estimates its base RTT by the delay it found.

    After i sources the queueing delay p_i solves sum_{j<=i} alpha/(p_i - p_{j-1}) = C
    (p_0 = 0). The queue grows faster than linearly in N ("persistent congestion").

    >>> pc = persistent_congestion(2, alpha_pkts=1, capacity_pps=1)
    >>> round(pc.queue_pkts, 2), round(pc.first_to_last_rate_ratio, 2)
    (2.62, 0.62)
    """
    if n_flows < 1:
        raise AssumptionError("persistent_congestion: assumption violated: n_flows >= 1")
    require_positive("persistent_congestion", alpha_pkts=alpha_pkts, capacity_pps=capacity_pps)
    found = [0.0]  # queueing delay each source found on arrival
    for i in range(1, n_flows + 1):
        prior = np.asarray(found[:i])

        def excess(p_i: float, prior: np.ndarray = prior) -> float:
            return float(np.sum(alpha_pkts / (p_i - prior))) - capacity_pps

        lo = prior[-1] + 1e-15 * max(1.0, prior[-1])
        hi = prior[-1] + n_flows * alpha_pkts / capacity_pps * 4 + 1.0 / capacity_pps
        while excess(hi) > 0:
            hi *= 2
        found.append(float(brentq(excess, lo, hi, xtol=1e-15, rtol=1e-13)))
    final = found[-1]
    rates = tuple(float(alpha_pkts / (final - f)) for f in found[:-1])
    return PersistentCongestion(final * capacity_pps, tuple(found[1:]), rates)


@closed_form(sp.Piecewise(((3 * B - bdp) / 4, bdp <= B), (B**2 / (4 * bdp), True)), "pkt",
             buffer_pkts=B, bdp_pkts=bdp)
def reno_sawtooth_mean_queue_pkts(buffer_pkts: Any, bdp_pkts: Any) -> Any:
    """Mean drop-tail queue under a synchronised Reno sawtooth [D]: W cycles (BDP+B)/2 .. BDP+B.

    The window grows linearly in RTT rounds; averaging max(0, W - BDP) over one cycle gives
    (3B - BDP)/4 when B >= BDP and B^2/(4 BDP) below (the queue is empty part of the cycle).

    >>> reno_sawtooth_mean_queue_pkts(buffer_pkts=100, bdp_pkts=50)
    62.5
    """
    require_positive("reno_sawtooth_mean_queue_pkts", buffer_pkts=buffer_pkts, bdp_pkts=bdp_pkts)
    return reno_sawtooth_mean_queue_pkts.evaluate(buffer_pkts=buffer_pkts, bdp_pkts=bdp_pkts)


def vegas_share_band(alpha_pkts: float, beta_pkts: float,
                     mean_queue_pkts: float) -> tuple[float, float]:
    """Capacity share of one Vegas flow in a queue that Reno holds at ``mean_queue_pkts`` [D].

    Vegas keeps alpha..beta packets of its own queued, so its share of the link is
    alpha/Q .. beta/Q (Mo et al.: it loses to Reno as the buffer grows).

    >>> vegas_share_band(1, 3, reno_sawtooth_mean_queue_pkts(100, 50))
    (0.016, 0.048)
    """
    require_positive("vegas_share_band", alpha_pkts=alpha_pkts, beta_pkts=beta_pkts,
                     mean_queue_pkts=mean_queue_pkts)
    require(alpha_pkts <= beta_pkts, "vegas_share_band", "alpha_pkts <= beta_pkts")
    return (min(1.0, alpha_pkts / mean_queue_pkts), min(1.0, beta_pkts / mean_queue_pkts))
