"""CUBIC's response function: its average window and throughput under a loss rate.

RFC 9438 section 5.1 (RFC 8312 section 5.1; Ha, Rhee and Xu, "CUBIC: a new TCP-friendly
high-speed TCP variant", ACM SIGOPS OSR 42(5), 2008), deterministic loss model (one loss
every ``1/p`` packets, the window a cubic from ``beta W_max`` back to ``W_max``):

    AVG_W_cubic = (C (3 + beta) / (4 (1 - beta)))^(1/4) RTT^(3/4) / p^(3/4)   packets

with ``RTT`` in seconds and ``C`` in packets/s^3. In the Reno-friendly region CUBIC grows
as an AIMD flow with increase ``3 (1 - beta) / (1 + beta)`` per RTT and decrease
``beta``, whose average window is Reno's ``sqrt(3 / (2 p))``; CUBIC's window is the larger
of the two (:func:`cubic_window_pkts`). Delayed ACKs do not enter: CUBIC's growth is a
function of time, and its Reno-friendly window counts acknowledged segments (ns-3 and
Linux do), not ACKs.

>>> round(float(cubic_window_pkts(rtt_s=0.1, loss_rate=1e-5)), 1)
1053.8
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from tcpn.solvers.closed_forms.formula import (
    closed_form,
    require_positive,
    require_probability,
)

__all__ = ["cubic_pps", "cubic_window_pkts"]

R, p, C, b = sp.symbols("R p C beta", positive=True)
_CUBIC = (C * (3 + b) / (4 * (1 - b))) ** sp.Rational(1, 4) * R ** sp.Rational(3, 4) \
    / p ** sp.Rational(3, 4)
_FRIENDLY = sp.sqrt(3 / (2 * p))
_WINDOW = sp.Max(_CUBIC, _FRIENDLY)


def _check(model: str, rtt_s: Any, loss_rate: Any, c: Any, beta: Any) -> None:
    require_positive(model, rtt_s=rtt_s, c=c)
    require_probability(model, loss_rate=loss_rate, beta=beta)


@closed_form(_WINDOW, "pkt", rtt_s=R, loss_rate=p, c=C, beta=b)
def cubic_window_pkts(rtt_s: Any, loss_rate: Any, c: Any = 0.4, beta: Any = 0.7) -> Any:
    """CUBIC's average window: ``max(AVG_W_cubic, sqrt(3 / (2 p)))`` packets.

    By hand, ``C = 0.4``, ``beta = 0.7``: ``(0.4 * 3.7 / 1.2)^(1/4) = 1.0538``; at RTT 0.1 s
    and ``p = 1e-5``, ``0.1^0.75 / 1e-5^0.75 = 1000``: 1053.8 packets (Reno's 387.3); at
    ``p = 1e-3`` the cubic window is 33.3 packets and the Reno-friendly one ``sqrt(1500) =
    38.7`` wins:

    >>> round(float(cubic_window_pkts(rtt_s=0.1, loss_rate=1e-3)), 2)
    38.73
    >>> cubic_window_pkts(rtt_s=0.1, loss_rate=1e-3, beta=1.0)
    Traceback (most recent call last):
    ...
    tcpn.solvers.closed_forms.formula.AssumptionError: cubic_window_pkts: ... beta ...
    """
    _check("cubic_window_pkts", rtt_s, loss_rate, c, beta)
    return cubic_window_pkts.evaluate(rtt_s=rtt_s, loss_rate=loss_rate, c=c, beta=beta)


@closed_form(_WINDOW / R, "pkt/s", rtt_s=R, loss_rate=p, c=C, beta=b)
def cubic_pps(rtt_s: Any, loss_rate: Any, c: Any = 0.4, beta: Any = 0.7) -> Any:
    """CUBIC's throughput, the average window per RTT, in packets/s.

    >>> round(float(cubic_pps(rtt_s=0.1, loss_rate=1e-5)))
    10538
    """
    _check("cubic_pps", rtt_s, loss_rate, c, beta)
    return cubic_pps.evaluate(rtt_s=rtt_s, loss_rate=loss_rate, c=c, beta=beta)
