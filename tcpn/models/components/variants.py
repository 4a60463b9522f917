"""The sender module of every TCP variant a scenario names, and the modules some variants add.

One registry (:data:`SENDERS`) maps a variant name to its builder: the loss-based ones are
:func:`~tcpn.models.components.sender.sender_net`; Vegas and its fixes, Westwood+ and
CUBIC and TCP-L extend it (:mod:`~tcpn.models.components.extend`). TCP-L also needs a reporter at
the receiver (:func:`add_flow_modules`); an 802.11 hop reports its station's energy
(:func:`wireless_report`).

>>> from tcpn.models.components.sender import SenderConfig
>>> variant_sender_net("adaptive_vegas", None, SenderConfig(flow=0, dst=1, variant="reno"))
<PetriNet 'sender': 7 places, 9 transitions, 50 arcs>
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tcpn.errors import InputError
from tcpn.models.components.cubic import cubic_sender_net
from tcpn.models.components.sender import LOSS_BASED, SenderConfig, sender_net
from tcpn.models.components.tcp_l import reporter_net, tcp_l_sender_net
from tcpn.models.components.vegas import VegasLaw, vegas_sender_net
from tcpn.models.components.westwood import westwood_sender_net
from tcpn.models.components.wireless import Energy, Radio, station_energy
from tcpn.petrinets import PetriNet

if TYPE_CHECKING:
    from tcpn.models.scenario import ConcreteFlow, Scenario
    from tcpn.models.topology import ComposedNet
    from tcpn.petrinets import Simulator

__all__ = ["SENDERS", "add_flow_modules", "radio_of", "recovery_variant", "sack_problem",
           "variant_sender_net", "wireless_report"]


def _param(params: Any, name: str, default: Any) -> Any:
    return getattr(params, name, default) if params is not None else default


def _vegas(kind: str) -> Callable[[SenderConfig, Any], PetriNet]:
    def build(config: SenderConfig, params: Any) -> PetriNet:
        law = VegasLaw(kind=kind, alpha=float(_param(params, "alpha", 2)),
                       beta=float(_param(params, "beta", 4)),
                       gamma=float(_param(params, "gamma", 1)),
                       weight=float(_param(params, "weight", 0.125)),
                       skew_estimation=bool(_param(params, "skew_estimation", False)),
                       skew_min_span_s=float(_param(params, "skew_min_span_s", 5.0)))
        return vegas_sender_net(config, law)
    return build


SENDERS: dict[str, Callable[[SenderConfig, Any], PetriNet]] = {
    **{v: (lambda config, _params: sender_net(config)) for v in LOSS_BASED},
    "vegas": _vegas("vegas"),
    "modified_vegas": _vegas("modified_vegas"),
    "adaptive_vegas": _vegas("adaptive_vegas"),
    "westwood_plus": lambda config, params: westwood_sender_net(
        config, _param(params, "filter", "tustin")),
    "tcp_l": lambda config, _params: tcp_l_sender_net(config),
    "cubic": lambda config, params: cubic_sender_net(
        config, float(_param(params, "c", 0.4)), float(_param(params, "beta", 0.7)),
        bool(_param(params, "fast_convergence", True)),
        bool(_param(params, "tcp_friendliness", True))),
}
"""Variant name -> ``builder(config, params)`` of its sender module; ``config.variant`` is
the loss-based sender it runs on (:func:`recovery_variant`)."""


def recovery_variant(variant: str, sack: bool, params: Any = None) -> str:
    """The loss-based sender that ``variant`` runs on (or is), with SACK negotiated
    (``sack``) or not: its recovery.

    With SACK, ns-3 recovers with its RFC 6675 scoreboard whatever the congestion control,
    so every variant whose recovery is NewReno's runs on the ``sack`` sender when
    ``tcp.sack`` is on (NewReno's window arithmetic, RFC 6675 pipe and NextSeg): NewReno,
    ECN NewReno, Westwood+, CUBIC, TCP-L (``params.base: newreno``, the default) and Vegas,
    Modified and adaptive Vegas (``params.recovery: newreno``, the default, ns-3's). Reno
    recovery (Tahoe, Reno, TCP-L with ``base: reno``, the Vegas family with
    ``params.recovery: reno`` as in study S1) has no scoreboard: it ignores the SACK
    blocks.

    >>> recovery_variant("newreno", True), recovery_variant("newreno", False)
    ('sack', 'newreno')
    >>> recovery_variant("ecn_newreno", True), recovery_variant("tahoe", True)
    ('sack', 'tahoe')
    >>> recovery_variant("westwood_plus", True), recovery_variant("vegas", True)
    ('sack', 'sack')
    >>> recovery_variant("cubic", True), recovery_variant("cubic", False)
    ('sack', 'newreno')
    """
    if variant in LOSS_BASED:
        base = variant
    elif variant == "tcp_l":
        base = str(_param(params, "base", "newreno"))
    elif variant in ("westwood_plus", "cubic"):
        base = "newreno"
    else:
        base = str(_param(params, "recovery", "newreno"))
    return "sack" if sack and base in ("newreno", "ecn_newreno") else base


def sack_problem(variant: str, sack: bool) -> str | None:
    """Why the net lens cannot run ``variant`` with ``tcp.sack`` as given (None: it can)."""
    if variant == "sack" and not sack:
        return ("variant sack needs tcp.sack: true (the receiver sends SACK blocks only "
                "when SACK is negotiated)")
    return None


def variant_sender_net(variant: str, params: Any, config: SenderConfig) -> PetriNet:
    """The sender module of ``variant`` with its scenario ``params`` (None: defaults)."""
    try:
        build = SENDERS[variant]
    except KeyError:
        raise InputError(f"sender of flow {config.flow}: variant {variant!r} is not one of "
                         f"{', '.join(SENDERS)}") from None
    return build(config, params)


def add_flow_modules(net: PetriNet, i: int, flow: ConcreteFlow,
                     interfaces: dict[str, str]) -> None:
    """Add the modules connection ``i``'s variant needs beside its sender and receiver
    (TCP-L: the reporter reading the last hop's ``frames``)."""
    if flow.variant != "tcp_l":
        return
    frames = f"{interfaces[flow.data_queues[-1]]}.frames"
    ports = {"report": f"flow{i}.snd.report"}
    if frames in net.places:
        ports["frames"] = frames
    net.add_module(reporter_net(float(_param(flow.params, "report_interval_s", 1.0)),
                                1.0 + flow.receiver_clock_skew, flow.receiver_clock_offset_s),
                   f"flow{i}.rep", ports)


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
