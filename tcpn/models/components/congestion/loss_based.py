"""The loss-based variants (Tahoe, Reno, NewReno, SACK, ECN Reno and NewReno), registered.

Their sender is :func:`~tcpn.models.components.sender.sender_net` itself, ``config.variant``
naming its recovery; this module gives each its parameters and what the fluid and ns3
lenses run for it (:func:`~tcpn.models.variant_registry.register_variant`).

>>> from tcpn.models.registered_variants import variant_spec
>>> variant_spec("ecn_newreno").ecn, variant_spec("tahoe").fluid is None
(True, True)
"""

from __future__ import annotations

from typing import Any, Literal

from tcpn.models.components.sender import SenderConfig, sender_net
from tcpn.models.schema_base import VariantParams
from tcpn.models.variant_registry import FluidLaw, Ns3Congestion, register_variant
from tcpn.petrinets import PetriNet

__all__ = ["EcnParams", "NoParams"]


class NoParams(VariantParams):
    """Loss-based variants (Tahoe, Reno, NewReno, SACK): no parameters."""


class EcnParams(VariantParams):
    """ECN Reno/NewReno: the ``reaction`` to an ECN echo (at most once per window, no
    retransmission either way): ``halve`` (RFC 3168: ssthresh = cwnd = half the flight)
    or ``slow_start`` (study S2's sender "starts slow start without retransmitting":
    ssthresh = half the flight, cwnd = 1 segment; the ns3 lens's ``tcpn::TcpnSocket``)."""

    reaction: Literal["halve", "slow_start"] = "halve"


def _sender(config: SenderConfig, _params: Any) -> PetriNet:
    return sender_net(config)


def _needs_sack(_params: Any, tcp: Any) -> list[str]:
    return [] if tcp.sack else ["variant sack needs tcp.sack: true (the receiver sends SACK "
                                "blocks only when SACK is negotiated)"]


def _fluid_reaction(params: EcnParams, _tcp: Any) -> list[str]:
    return ["params.reaction slow_start: the fluid ECN model halves the window on a mark"] \
        if params.reaction == "slow_start" else []


#: ns-3's congestion control for every loss-based variant: NewReno's window arithmetic
#: (tcpn's copy, ``cpp/variants.h``); the recovery makes the difference.
_NEWRENO = Ns3Congestion("tcpn::NewReno")

register_variant("tahoe", NoParams, _sender, recovery="tahoe", bulk_state_space=True,
                 ns3=Ns3Congestion("tcpn::NewReno", recovery="tcpn::TahoeRecovery"),
                 unsupported={"fluid": "the fluid model's loss reaction is Reno's halving, "
                                       "not Tahoe's slow start"})
for _name in ("reno", "newreno"):
    register_variant(_name, NoParams, _sender, recovery=_name, bulk_state_space=True,
                     ns3=_NEWRENO, fluid=FluidLaw("reno"))
register_variant("sack", NoParams, _sender, recovery="sack", bulk_state_space=True,
                 ns3=_NEWRENO, fluid=FluidLaw("reno"),
                 checks={"net": _needs_sack, "ns3": _needs_sack})
for _name in ("ecn_reno", "ecn_newreno"):
    register_variant(_name, EcnParams, _sender, recovery=_name, ecn=True, ns3=_NEWRENO,
                     fluid=FluidLaw("reno"), checks={"fluid": _fluid_reaction})
