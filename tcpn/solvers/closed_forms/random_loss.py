"""Random (wireless) loss: packet error rate from bit/byte error rates, TCP throughput under it.

analytics.md section 6. ns-3's ``RateErrorModel`` counts bytes by default and sees the
whole frame (IP/TCP headers and the 2-byte PPP header on point-to-point links).

>>> round(per_from_byte_error_rate(1e-5, size_bytes=1500), 4)
0.0149
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import sympy as sp

from tcpn.errors import InputError
from tcpn.solvers.closed_forms import loss_throughput
from tcpn.solvers.closed_forms.formula import (
    closed_form,
    require,
    require_positive,
    require_probability,
)

__all__ = [
    "lakshman_madhow_index",
    "per_from_bit_error_rate",
    "per_from_byte_error_rate",
    "random_loss_pps",
    "wire_rate_pps",
]

e, S, p, C, T = sp.symbols("e S p C T", positive=True)


def _check_error_rate(model: str, error_rate: Any, size: Any) -> None:
    arr = np.asarray(error_rate, dtype=float)
    require((arr >= 0) & (arr <= 1), model, "0 <= error rate <= 1")
    require_positive(model, size_bytes=size)


@closed_form(1 - (1 - e) ** S, "1", byte_error_rate=e, size_bytes=S)
def per_from_byte_error_rate(byte_error_rate: Any, size_bytes: Any) -> Any:
    """PER = 1 - (1 - BER_byte)^S, S the size the error model sees (headers included).

    >>> round(per_from_byte_error_rate(1e-4, size_bytes=1500), 3)
    0.139
    >>> round(per_from_byte_error_rate.solve_for("byte_error_rate", 0.01, (0, 0.1),
    ...                                          size_bytes=578), 8)
    1.739e-05
    """
    _check_error_rate("per_from_byte_error_rate", byte_error_rate, size_bytes)
    return per_from_byte_error_rate.evaluate(byte_error_rate=byte_error_rate,
                                             size_bytes=size_bytes)


@closed_form(1 - (1 - e) ** (8 * S), "1", bit_error_rate=e, size_bytes=S)
def per_from_bit_error_rate(bit_error_rate: Any, size_bytes: Any) -> Any:
    """PER = 1 - (1 - BER_bit)^(8 S).

    >>> round(per_from_bit_error_rate(1e-6, size_bytes=1500), 5)
    0.01193
    """
    _check_error_rate("per_from_bit_error_rate", bit_error_rate, size_bytes)
    return per_from_bit_error_rate.evaluate(bit_error_rate=bit_error_rate, size_bytes=size_bytes)


@closed_form(p * (C * T) ** 2, "1", packet_error_rate=p, capacity_pps=C, rtt_s=T)
def lakshman_madhow_index(packet_error_rate: Any, capacity_pps: Any, rtt_s: Any) -> Any:
    """p (C T)^2: random loss costs TCP much of the link when this exceeds one (Lakshman & Madhow).

    >>> round(lakshman_madhow_index(packet_error_rate=1e-4, capacity_pps=1000, rtt_s=0.2), 9)
    4.0
    """
    require_probability("lakshman_madhow_index", packet_error_rate=packet_error_rate)
    require_positive("lakshman_madhow_index", capacity_pps=capacity_pps, rtt_s=rtt_s)
    return lakshman_madhow_index.evaluate(packet_error_rate=packet_error_rate,
                                          capacity_pps=capacity_pps, rtt_s=rtt_s)


def random_loss_pps(packet_error_rate: Any, rtt_s: Any, capacity_pps: Any,
                    model: Literal["mathis_random", "pftk_full", "pftk_approx"] = "mathis_random",
                    acks_per_packet: int = 1, rto_s: Any = 1.0) -> Any:
    """Goodput of a bulk Reno flow under independent loss: min(C, B_model(PER)).

    PFTK's "rest of the round is lost" is a mis-specification for Bernoulli loss, but at
    small p the loss-indication rate is close to the PER.

    >>> round(random_loss_pps(0.01, rtt_s=0.1, capacity_pps=1000), 1)
    131.0
    >>> random_loss_pps(1e-6, rtt_s=0.1, capacity_pps=1000)
    1000.0
    """
    require_positive("random_loss_pps", capacity_pps=capacity_pps)
    if model == "mathis_random":
        rate = loss_throughput.mathis_random_pps(rtt_s, packet_error_rate, acks_per_packet)
    elif model == "pftk_full":
        rate = loss_throughput.pftk_full_pps(rtt_s, packet_error_rate, rto_s, acks_per_packet)
    elif model == "pftk_approx":
        rate = loss_throughput.pftk_approx_pps(rtt_s, packet_error_rate, rto_s, acks_per_packet)
    else:
        raise InputError(f"random_loss_pps: unknown model {model!r}; choose mathis_random, "
                         "pftk_full or pftk_approx")
    capped = np.minimum(capacity_pps, rate)
    return float(capped) if np.ndim(capped) == 0 else capped


@closed_form(S / (1 - p), "pkt/s", goodput_pps=S, packet_error_rate=p)
def wire_rate_pps(goodput_pps: Any, packet_error_rate: Any) -> Any:
    """Packets on the wire for a goodput under PER p: every lost one is sent again, x/(1 - p).

    >>> wire_rate_pps(goodput_pps=90, packet_error_rate=0.1)
    100.0
    """
    require_positive("wire_rate_pps", goodput_pps=goodput_pps)
    require(np.asarray(packet_error_rate) < 1, "wire_rate_pps", "packet_error_rate < 1")
    return wire_rate_pps.evaluate(goodput_pps=goodput_pps, packet_error_rate=packet_error_rate)
