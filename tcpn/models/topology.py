"""The topology composer: one timed coloured Petri net for a whole scenario.

Every link direction ``A->B`` becomes an interface module (its queue discipline feeding its
transmitter, :func:`~tcpn.models.components.link.interface_net`) named ``A.B``; every
connection ``i`` a sender module ``flow{i}.snd`` and a receiver module ``flow{i}.rcv``.
Modules meet on socket places: ``A.B.in`` (packets arriving at A's interface towards B),
``flow{i}.data`` (data segments reaching the receiver) and ``flow{i}.acks`` (ACKs
reaching the sender). Routing is decided where a packet leaves a link: the transmitter
of ``A->B`` has one output arc per place the packet may go to next at B, guarded by the
packet's destination (hop-count shortest paths, as the scenario computes them). Dumbbells,
parking lots, reverse-direction flows sharing a bottleneck and per-flow access delays are
all just scenarios.

>>> from tcpn.models.scenario import dumbbell
>>> s = dumbbell(pairs=1, horizon_s=1.0)
>>> composed = compose(s, s.concrete_flows(1))
>>> composed.net
<PetriNet 'dumbbell': 35 places, 46 transitions, 198 arcs>
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tcpn.errors import InputError
from tcpn.models.components.link import (
    ByteErrors,
    ErrorModel,
    ListErrors,
    PacketErrors,
    Transmitter,
    interface_events,
    interface_net,
)
from tcpn.models.components.packets import PACKET
from tcpn.models.components.queues import (
    DropTailQueue,
    QueueDiscipline,
    RedQueue,
    SmallFirstQueue,
    ThresholdEcnQueue,
    TokenBucketQueue,
)
from tcpn.models.components.receiver import ReceiverConfig, receiver_net
from tcpn.models.components.sender import SenderConfig
from tcpn.models.components.variants import (
    add_flow_modules,
    radio_of,
    recovery_variant,
    variant_sender_net,
)
from tcpn.models.components.wireless import medium_place, wireless_interface_net
from tcpn.models.registered_variants import lens_problems, variant_spec
from tcpn.models.scenario import ConcreteFlow, Link, LinkDirection, Scenario, load_scenario
from tcpn.petrinets import PetriNet, Place

__all__ = ["ComposedNet", "compose", "queue_discipline", "scenario_net", "unsupported"]


@dataclass
class ComposedNet:
    """The composed net and how its parts map back to the scenario.

    ``interfaces`` maps queue ids (``"A->B"``) to module prefixes; ``events`` maps queue
    ids to what each transition of the interface means for the trace
    (:func:`~tcpn.models.components.link.interface_events`); ``flows`` lists the concrete
    flows, connection ``i`` being module ``flow{i}``.
    """

    net: PetriNet
    flows: list[ConcreteFlow]
    interfaces: dict[str, str] = field(default_factory=dict)
    node_index: dict[str, int] = field(default_factory=dict)
    events: dict[str, dict[str, str]] = field(default_factory=dict)


def _ident(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else f"n{cleaned}"


def _medium(link: Link) -> str:
    """The place of an 802.11 link's air, shared by its two directions (outside both
    directions' module prefixes ``A.B.`` and ``B.A.``)."""
    return f"medium.{_ident(link.a)}.{_ident(link.b)}"


def unsupported(scenario: Scenario, flows: Sequence[ConcreteFlow]) -> list[str]:
    """What the net lens cannot express in ``scenario`` yet, each naming the field."""
    problems = []
    for flow in flows:
        if flow.tcp.ns3_reno_sack:
            problems.append(f"flow {flow.id}: tcp.ns3_reno_sack: ns-3's duplicate-ACK "
                            "scoreboard is a rule of the ns3 lens only")
        if flow.tcp.ns3_rto_reset:
            problems.append(f"flow {flow.id}: tcp.ns3_rto_reset: ns-3's RTO recomputed at "
                            "every new ACK (no backoff kept) is a rule of the ns3 lens only")
        if flow.tcp.data_retries is not None:
            problems.append(f"flow {flow.id}: tcp.data_retries: giving a connection up "
                            "after a number of retransmissions is ns-3's rule (its "
                            "DataRetries), a rule of the ns3 lens only; the net model, as "
                            "ns-2, never gives up")
        # what the variant itself says the net lens cannot run (its registered checks)
        problems += [f"flow {flow.id}: {p}" for p in lens_problems("net", flow, flow.tcp)]
    return problems


def queue_discipline(direction: LinkDirection, link: Link, where: str) -> QueueDiscipline:
    """The component queue for a scenario link direction."""
    q = direction.queue
    if q.kind == "drop_tail":
        return DropTailQueue(limit=q.limit, unit=q.unit)
    if q.kind == "threshold_ecn":
        return ThresholdEcnQueue(limit=q.limit, unit=q.unit, k=q.k)
    if q.kind == "red":
        return RedQueue(limit=q.limit, unit=q.unit, min_th=q.min_th, max_th=q.max_th,
                        max_p=q.max_p, q_weight=q.q_weight, gentle=q.gentle, wait=q.wait,
                        ecn=q.ecn, hard_drop=q.hard_drop,
                        mean_packet_size_bytes=q.mean_packet_size_bytes,
                        link_rate_bps=link.rate_bps, idle_after_line=link.wireless is None)
    if q.kind == "sgpq":
        return SmallFirstQueue(limit=q.limit, unit=q.unit, threshold_bytes=q.threshold_bytes,
                               buffer=q.buffer)
    if q.kind == "token_bucket":
        return TokenBucketQueue(limit=q.limit, unit=q.unit, rate_bps=q.rate_bps,
                                depth_bytes=q.depth_bytes, mode=q.mode)
    raise InputError(f"{where}.queue: {q.kind} is not supported by the net lens yet")


def _errors(direction: LinkDirection) -> ErrorModel | None:
    e = direction.errors
    if e is None:
        return None
    if e.kind == "list":
        return ListErrors(tuple(e.packets))
    return PacketErrors(e.rate) if e.unit == "packet" else ByteErrors(e.rate)


def sender_config(flow: ConcreteFlow, i: int, dst: int,
                  horizon_s: float | None = None) -> SenderConfig:
    """The sender parameters of connection ``i`` from its concrete flow (a ``stop_s`` at
    or after ``horizon_s`` is no stop)."""
    tcp = flow.tcp
    mss = tcp.segment_size_bytes
    return SenderConfig(
        flow=i, dst=dst, variant=recovery_variant(flow.variant, tcp.sack, flow.params),
        segment_bytes=mss,
        header_bytes=tcp.header_bytes, initial_cwnd=float(tcp.initial_cwnd_segments),
        initial_ssthresh=float(tcp.initial_ssthresh_segments or 1e9),
        window_segments=max(1, min(tcp.rcv_buf_bytes, tcp.snd_buf_bytes) // mss),
        min_rto_s=tcp.min_rto_s, initial_rto_s=tcp.initial_rto_s,
        granularity_s=tcp.clock_granularity_s, dupack_threshold=tcp.dupack_threshold,
        timestamps=tcp.timestamps, ecn=flow.ecn, start_s=flow.start_s,
        total_segments=None if flow.bytes is None else math.ceil(flow.bytes / mss),
        stop_s=None if horizon_s is None or flow.stop_s >= horizon_s else flow.stop_s,
        app_rate_bps=flow.app_rate_bps, send_buffer_segments=max(1, tcp.snd_buf_bytes // mss),
        limited_transmit=tcp.limited_transmit, handshake=tcp.handshake,
        syn_bytes=tcp.syn_packet_bytes, syn_timeout_s=tcp.syn_timeout_s,
        syn_retries=tcp.syn_retries, whole_segments=tcp.ssthresh_whole_segments,
        exit_growth=tcp.recovery_exit_growth, ecn_cwr=tcp.ecn_cwr,
        sack_keep=flow.sack_after_timeout == "keep",
        pipe_counts_sacked_retransmits=tcp.pipe_counts_sacked_retransmits,
        ecn_reaction=str(getattr(flow.params, "reaction", "halve")))


def compose(scenario: Scenario, flows: Sequence[ConcreteFlow]) -> ComposedNet:
    """Build the net of ``scenario`` with its concrete ``flows`` (see the module docstring)."""
    problems = unsupported(scenario, flows)
    if problems:
        raise InputError(f"scenario {scenario.name}: " + "; ".join(problems))
    net = PetriNet(_ident(scenario.name))
    graph = scenario.graph()
    nodes = list(graph.nodes)
    index = {n: k for k, n in enumerate(nodes)}
    composed = ComposedNet(net, list(flows), node_index=index)
    endpoints = sorted({f.src for f in flows} | {f.dst for f in flows}, key=index.__getitem__)

    def socket(a: str, b: str) -> str:
        return f"{_ident(a)}.{_ident(b)}.in"

    for link in scenario.links:
        for a, b, _direction in link.directions():
            net.add_place(Place(socket(a, b), PACKET))
        if link.wireless is not None:  # the air both directions of an 802.11 hop share
            net.add_place(medium_place(radio_of(link.wireless)[0], _medium(link)))
    for i in range(len(flows)):
        net.add_place(Place(f"flow{i}.data", PACKET))
        net.add_place(Place(f"flow{i}.acks", PACKET))

    for li, link in enumerate(scenario.links):
        for side, (a, b, direction) in zip(("ab", "ba"), link.directions(), strict=True):
            where = f"links[{li}].{side}"
            targets: list[tuple[str, str]] = []
            # a packet of connection i at one of its end nodes is for that end (SYN and
            # handshake ACK go to the receiver, SYN-ACK and ACKs to the sender)
            for i, flow in enumerate(flows):
                if flow.dst == b:
                    targets.append((f"flow{i}.data", f"p.flow == {i} and p.dst == {index[b]}"))
                if flow.src == b:
                    targets.append((f"flow{i}.acks", f"p.flow == {i} and p.dst == {index[b]}"))
            via: dict[str, list[int]] = {}
            for x in endpoints:
                if x != b and b in scenario.route(a, x)[1:]:
                    path = scenario.route(b, x)
                    via.setdefault(path[1], []).append(index[x])
            for c, dsts in via.items():
                cond = f"p.dst == {dsts[0]}" if len(dsts) == 1 else (
                    "p.dst in (" + ", ".join(map(str, dsts)) + ")")
                targets.append((socket(b, c), cond))
            if not targets:
                targets.append((f"{_ident(a)}.{_ident(b)}.in", "False"))
            queue = queue_discipline(direction, link, where)
            wire = Transmitter(link.rate_bps, link.delay_s, link.l2_header_bytes,
                               _errors(direction))
            routes = [cond for _place, cond in targets]
            module = interface_net(queue, wire, routes, name=f"{_ident(a)}_{_ident(b)}") \
                if link.wireless is None else wireless_interface_net(
                    queue, wire, radio_of(link.wireless)[0], routes, f"{_ident(a)}_{_ident(b)}",
                    station=0 if side == "ab" else 1)
            ports = {"arrivals": socket(a, b)}
            ports.update({f"out{k}": place for k, (place, _c) in enumerate(targets)})
            if link.wireless is not None:
                ports["medium"] = _medium(link)
            prefix = f"{_ident(a)}.{_ident(b)}"
            net.add_module(module, prefix, ports)
            composed.interfaces[f"{a}->{b}"] = prefix
            composed.events[f"{a}->{b}"] = interface_events(queue, module)

    for i, flow in enumerate(flows):
        first_data_hop = flow.data_route[1]
        first_ack_hop = flow.ack_route[1]
        snd = variant_sender_net(flow.variant, flow.params, sender_config(
            flow, i, index[flow.dst], scenario.horizon_s))
        net.add_module(snd, f"flow{i}.snd", {"out": socket(flow.src, first_data_hop),
                                             "acks": f"flow{i}.acks"})
        tcp = flow.tcp
        rcv = receiver_net(ReceiverConfig(
            flow=i, src=index[flow.src], ack_bytes=tcp.ack_packet_bytes,
            delack_count=tcp.delack_count, delack_timeout_s=tcp.delack_timeout_s,
            sack=tcp.sack, ecn=flow.ecn, clock_offset_s=flow.receiver_clock_offset_s,
            clock_skew=flow.receiver_clock_skew, handshake=tcp.handshake,
            syn_bytes=tcp.syn_packet_bytes,
            exact_ecn_echo=variant_spec(flow.variant).exact_ecn_echo))
        net.add_module(rcv, f"flow{i}.rcv", {"data": f"flow{i}.data",
                                             "out": socket(flow.dst, first_ack_hop)})
        add_flow_modules(net, i, flow, composed.interfaces)
    return composed


def scenario_net(scenario: Scenario | str | Path, seed: int | None = None) -> PetriNet:
    """The whole net of a scenario (or scenario file), its flows drawn from ``seed`` (the
    scenario's own seed when None): what ``tcpn export scenario.yaml`` writes.

    >>> from tcpn.models.scenario import dumbbell
    >>> scenario_net(dumbbell(pairs=1, horizon_s=1.0)).name
    'dumbbell'
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    return compose(scenario, scenario.concrete_flows(seed)).net
