"""AIMD(a): NewReno whose congestion avoidance adds ``increase`` segments per RTT, not one.

The complete example of docs/variants.md ("Adding a variant"): one file, no edit to tcpn.
Import it (or install it with an entry point in the group ``tcpn.variants``) and a
scenario may say ``variant: aimd`` with ``params: {increase: 2}``.
"""

from __future__ import annotations

from pydantic import Field

from tcpn.models import VariantParams, register_variant
from tcpn.models.components.extend import wrap_output
from tcpn.models.components.sender import SenderConfig, sender_net
from tcpn.petrinets import PetriNet
from tcpn.petrinets.net_functions import net_function
from tcpn.solvers.closed_forms.loss_throughput import aimd_pps


class AimdParams(VariantParams):
    """``increase``: segments added per RTT in congestion avoidance (NewReno: 1)."""

    increase: float = Field(default=2.0, gt=0.0, le=64.0)


@net_function
def aimd_grow(cwnd: float, ssthresh: float, acked: int, increase: float) -> float:
    """The window after an ACK of ``acked`` new segments: one segment per ACK in slow
    start, ``increase / cwnd`` per ACK in congestion avoidance."""
    if cwnd < ssthresh:
        cwnd += 1.0
        acked -= 1
    if cwnd >= ssthresh and acked > 0:
        cwnd += increase / cwnd
    return cwnd


def aimd_sender_net(config: SenderConfig, params: AimdParams) -> PetriNet:
    """NewReno's sender (its recovery, RTO, applications) with AIMD(a)'s growth law on the
    ACK of new data outside recovery; every other transition is NewReno's."""
    net = sender_net(config)
    net.declare(INCREASE=float(params.increase), aimd_grow=aimd_grow)
    wrap_output(net, "new_ack", "tcb",
                "({base})._replace(cwnd=aimd_grow(t.cwnd, t.ssthresh, a.ack - t.una, "
                "INCREASE))")
    return net


register_variant(
    "aimd", AimdParams, aimd_sender_net,
    recovery="newreno",  # NewReno's recovery; with tcp.sack on, on the RFC 6675 scoreboard
    closed_form=aimd_pps,  # its response function, named where a lens refuses it
    unsupported={"ns3": "ns-3 has no AIMD(a) congestion control"},
)
