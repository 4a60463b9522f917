"""The sender module of every TCP variant a scenario names, and the modules some variants add.

The variants are those of the registry (:mod:`tcpn.models.registered_variants`): each gives
the builder of its sender module and, if it needs them, modules beside its sender and
receiver (TCP-L's reporter at the receiver, :func:`add_flow_modules`). An 802.11 hop
reports its station's energy (:func:`wireless_report`).

>>> from tcpn.models.components.sender import SenderConfig
>>> variant_sender_net("adaptive_vegas", None, SenderConfig(flow=0, dst=1, variant="reno"))
<PetriNet 'sender': 7 places, 9 transitions, 50 arcs>
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from tcpn.models.components.sender import SenderConfig
from tcpn.models.components.wireless import Energy, Radio, station_energy
from tcpn.models.registered_variants import recovery_variant, variant_spec
from tcpn.petrinets import PetriNet

if TYPE_CHECKING:
    from tcpn.models.scenario import ConcreteFlow, Scenario
    from tcpn.models.topology import ComposedNet
    from tcpn.petrinets import Simulator

__all__ = ["add_flow_modules", "radio_of", "recovery_variant", "variant_sender_net",
           "wireless_report"]


def variant_sender_net(variant: str, params: Any, config: SenderConfig) -> PetriNet:
    """The sender module of ``variant`` with its scenario ``params`` (None: defaults)."""
    spec = variant_spec(variant)
    return spec.sender(config, params if params is not None else spec.params(variant=variant))


def add_flow_modules(net: PetriNet, i: int, flow: ConcreteFlow,
                     interfaces: dict[str, str]) -> None:
    """Add the modules connection ``i``'s variant needs beside its sender and receiver
    (TCP-L: the reporter reading the last hop's ``frames``)."""
    add = variant_spec(flow.variant).flow_modules
    if add is not None:
        add(net, i, flow, interfaces)


def radio_of(wireless: Any) -> tuple[Radio, Energy]:
    """The radio and energy parameters of a scenario ``wireless`` block."""
    return (Radio(wireless.link_retransmissions, wireless.retry_limit, wireless.mac_ack_s,
                  wireless.medium_access == "dcf", wireless.slot_s, wireless.sifs_s,
                  wireless.plcp_s, wireless.cw_min, wireless.cw_max, wireless.eifs_s),
            Energy(wireless.tx_frame_j, wireless.tx_byte_j, wireless.rx_frame_j,
                   wireless.rx_byte_j, wireless.idle_w))


def wireless_report(sim: Simulator, composed: ComposedNet, scenario: Scenario) -> dict[str, Any]:
    """Per wireless link: the station's energy, the application bytes delivered to and from
    it (receivers' in-order data) and bytes per joule over the horizon."""
    report: dict[str, Any] = {}
    marking, index = sim.marking, sim.compiled.place_index

    def token(place: str) -> Any:
        (value,) = list(marking[index[place]])
        return value

    for link in scenario.links:
        if link.wireless is None:
            continue
        station = link.wireless.station
        other = link.b if station == link.a else link.a
        down = token(f"{composed.interfaces[f'{other}->{station}']}.airtime")
        up = token(f"{composed.interfaces[f'{station}->{other}']}.airtime")
        energy = station_energy(down, up, scenario.horizon_s, radio_of(link.wireless)[1])
        # a sized transfer's last segment is a full one in the net: count its bytes only
        delivered = sum(min(token(f"flow{i}.rcv.rcv").nxt * f.tcp.segment_size_bytes,
                            f.bytes if f.bytes is not None else math.inf)
                        for i, f in enumerate(composed.flows) if station in (f.src, f.dst))
        report[f"{link.a}-{link.b}"] = {
            "station": station, **energy, "delivered_bytes": delivered,
            "bytes_per_joule": delivered / energy["energy_j"] if energy["energy_j"] else None,
            "frames_to_station": down[0], "frames_from_station": up[0]}
    return report
