"""The long-run properties of a bulk sender, over the window observers of its space.

A bulk sender (``segments=None``, :mod:`tcpn.models.verification.bulk`) runs forever, so
its properties are about infinite runs: LTL formulas checked over the paths fair to the
sender's timers and retransmissions (weak fairness of ``timeout``, ``fast_retransmit``,
``partial_ack``, ``later_partial_ack``, ``sack_retransmit``, ``syn_timeout`` and
``give_up``, those the variant has: a repair that stays enabled happens). They read the
bounded observers of :mod:`tcpn.models.verification.window` (``flowI.progress``, the parity
of the segments delivered; ``flowI.since_loss``, a loss not yet followed by ``cwnd >= W``),
never a count that grows. A finite transfer's properties read growing counters and are
refused on a bulk space, and these on a finite transfer, naming the observer.

Registered on import into :data:`tcpn.models.properties.PROPERTIES`.
"""

from __future__ import annotations

from tcpn.errors import InputError
from tcpn.models.properties import FlowRoles, register_property, retransmission_fairness
from tcpn.petrinets.checking.formulas import A, F, Formula, G, Not

__all__ = ["cwnd_returns_after_loss", "keeps_delivering"]


def _parity(flow: FlowRoles, value: int) -> Formula:
    return flow.holds(f"delivered parity {value}",
                      lambda m: flow.value(m, "progress") == value)


@register_property("keeps_delivering",
                   "bulk: the flow delivers new data to the application infinitely often "
                   "(within the loss budget, e.g. at most k losses per window)",
                   places=("progress",), fairness=retransmission_fairness, bulk=True,
                   assumes="weak fairness of the sender's timers and retransmissions")
def keeps_delivering(flow: FlowRoles) -> Formula:
    """``A (G F parity 0 & G F parity 1)``: the delivered parity flips forever."""
    return A(G(F(_parity(flow, 0))) & G(F(_parity(flow, 1))))


@register_property("cwnd_returns_after_loss",
                   "bulk: after every loss of one of the flow's packets, cwnd comes back to "
                   "at least the cwnd target W", places=("since_loss",),
                   fairness=retransmission_fairness, bulk=True,
                   assumes="weak fairness of the sender's timers and retransmissions")
def cwnd_returns_after_loss(flow: FlowRoles) -> Formula:
    """``A G F !since_loss``: no suffix where a loss stays unanswered by ``cwnd >= W``."""
    if flow.cwnd_target_segments is None:
        raise InputError("property cwnd_returns_after_loss: observer since_loss needs a cwnd "
                         "target W (--cwnd-target W, cwnd_target_segments=W)")
    W = flow.cwnd_target_segments
    return A(G(F(Not(flow.holds(f"a loss not yet followed by cwnd >= {W}",
                                lambda m: bool(flow.value(m, "since_loss")))))))
