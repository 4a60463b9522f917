"""The ns3 lens: a tcpn scenario as an ns-3.44 simulation, recorded in the common trace.

:meth:`Ns3Lens.check` names every scenario feature ns-3 cannot express (never a silently
different experiment); :func:`scenario_plan` maps the rest to an
:class:`~tcpn.lenses.ns3.plan.Ns3Plan` (pure Python, no ns-3 needed); :meth:`Ns3Lens.run`
runs the plan in a worker process (:mod:`~tcpn.lenses.ns3.worker`) and writes the
trace: ``send``/``retransmit``/``ack``/``recv``/``deliver`` from pcap captures at each
flow's two end devices (:mod:`tcpn.models.pcap`), ``drop``/``ack_drop``/``mark`` from
the C++ queue and link-loss recorders, ``timeout`` at every expiry of the sender's
retransmission timer, cwnd, ssthresh and RTT samples from the socket's trace sources,
and every queue event of the traced queues. docs/validation.md says what differs from
the net model.

>>> from tcpn.models.scenario import dumbbell
>>> reno = scenario_plan(dumbbell(pairs=1, variant="reno", horizon_s=1.0)).flows[0]
>>> reno.socket, ("RenoRecovery", "true") in reno.socket_attributes
('tcpn::Rfc5681Socket', True)
>>> tahoe = scenario_plan(dumbbell(pairs=1, variant="tahoe", horizon_s=1.0)).flows[0]
>>> tahoe.socket, ("TahoeGoBackN", "true") in tahoe.socket_attributes
('tcpn::Rfc5681Socket', True)
>>> plan = scenario_plan(dumbbell(pairs=1, variant="vegas", horizon_s=1.0), rng_run=3)
>>> plan.flows[0].congestion, plan.flows[0].congestion_attributes[:3]
('tcpn::Vegas', (('Alpha', '2'), ('Beta', '4'), ('Gamma', '1')))
>>> plan.flows[0].socket  # SACK on (the default): ns-3's own, recording every timeout
'tcpn::TcpnSocket'
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from tcpn.errors import InputError, TcpnError
from tcpn.lenses.ns3 import wireless
from tcpn.lenses.ns3.plan import ErrorPlan, FlowPlan, LinkPlan, Ns3Plan, QueuePlan
from tcpn.models import pcap
from tcpn.models.components.sender import SYN_FALLBACK_RTO_S
from tcpn.models.registered_variants import (
    base_recovery,
    lens_problems,
    recovery_variant,
    variant_spec,
)
from tcpn.models.scenario import (
    ConcreteFlow,
    DropTail,
    Link,
    ListErrors,
    RateErrors,
    Red,
    Scenario,
    Sgpq,
    TcpConfig,
    ThresholdEcn,
    TokenBucket,
)
from tcpn.scratch import scratch

__all__ = ["PORT_BASE", "RFC_SOCKET", "Ns3Lens", "scenario_plan"]

PORT_BASE = 10_000
"""Flow ``i`` (in concrete-flow order) is received on port ``PORT_BASE + i``."""

RENO_RECOVERY = ("reno", "ecn_reno")
"""Recoveries that end at the first new ACK: :data:`RFC_SOCKET` with ``RenoRecovery``
(ns-3.44's socket has NewReno's only). Their senders ignore SACK blocks (as the net
model's Reno sender), so they do not negotiate SACK."""
RFC_SOCKET = "tcpn::Rfc5681Socket"
"""The sender's socket of a connection without SACK (``cpp/variants.h``): ns-3's with RFC
5681/6582's rules where its duplicate-ACK scoreboard departs from them; ns-3's own with
``tcp.ns3_reno_sack``. Tahoe always runs on it, without SACK (its sender ignores SACK
blocks, as Reno's) and with ``TahoeGoBackN``: a fast retransmit goes back N in slow start,
as ns-2's Tahoe."""
OWN_SOCKET = "tcpn::TcpnSocket"
"""ns-3's socket that records every expiry of the retransmission timer (ns-3's CongState
trace shows only the first of a run), the sender socket of every connection with SACK
(or ``ns3_reno_sack``), with tcpn's options (``cpp/variants.h``): ``KeepBackoff`` (RFC
6298's backed-off RTO until a valid sample; off with ``tcp.ns3_rto_reset``), ``ForgetHandshakeRtt``
(sender) and ``DelayFirstAck`` (receiver) for a connection that starts established,
``EcnSlowStart`` for S2's reaction to an echo, ``EcnNs2Reaction`` for ns-2's
(``tcp.ecn_cwr: ns2``), ``GrowOnRecoveryExit`` (off with
``tcp.recovery_exit_growth: false``), ``ForgetSack`` (a timeout forgets the SACK
scoreboard; off with ``tcp.sack_after_timeout: keep``, ns-3's own rule, and for a variant
registered with ``keeps_sack_after_timeout``: ``ConcreteFlow.sack_after_timeout``),
``SackedRetransmitsOut`` (a retransmission the receiver SACKs leaves the pipe, RFC 6675;
off with ``tcp.pipe_counts_sacked_retransmits``, ns-3's own rule);
:data:`RFC_SOCKET` is its subclass."""
PPP_BYTES = 2
"""The header ns-3's point-to-point device adds to every packet."""
HANDSHAKE_IP_BYTES = 80
"""An upper bound of the IP size of a SYN, SYN-ACK or handshake ACK (headers and every
option ns-3 puts on a SYN): what the handshake's room before a flow's start is sized by."""
NS2_ECHO_CONGESTION = "tcpn::NewReno"
"""The congestion control of the loss-based variants (NewReno's window arithmetic), whose
net-lens sender reacts to an ECN echo by ``tcp.ecn_cwr``: with ``ns2`` the ns3 lens runs
ns-2's reaction on it (``EcnNs2Reaction``). Other congestion controls keep ns-3's own
(``TcpSocketBase::EnterCwr`` and their ``GetSsThresh``: DCTCP's is its own in both lenses)."""
_CA_LOSS = 4  # TcpSocketState::CA_LOSS: the retransmission timer fired
_QUEUE_EVENTS = np.array(["enqueue", "dequeue", "drop", "mark"])


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _seconds(value: float) -> str:
    return f"{value!r}s"


def _size(limit: float, unit: str) -> str:
    return f"{int(limit)}{'p' if unit == 'packets' else 'B'}"


def _queue_plan(queue: Any, link: Link) -> QueuePlan:
    """The root queue disc of one direction (see docs/validation.md for each mapping)."""
    tail = "tcpn::TailQueueDisc"
    common = (("Limit", str(queue.limit)), ("Bytes", _bool(queue.unit == "bytes")))
    if isinstance(queue, DropTail):
        return QueuePlan(tail, common)
    if isinstance(queue, ThresholdEcn):
        return QueuePlan(tail, (*common, ("MarkThreshold", repr(float(queue.k)))))
    if isinstance(queue, Sgpq):
        return QueuePlan(tail, (*common, ("SmallBytes", str(queue.threshold_bytes)),
                                ("SplitBuffer", _bool(queue.buffer == "split"))))
    if isinstance(queue, TokenBucket):
        if queue.mode == "policer":
            return QueuePlan(tail, (*common, ("PolicerRate", f"{int(queue.rate_bps)}bps"),
                                    ("PolicerDepth", str(queue.depth_bytes))))
        return QueuePlan("ns3::TbfQueueDisc", (
            ("MaxSize", _size(queue.limit, queue.unit)), ("Rate", f"{int(queue.rate_bps)}bps"),
            ("Burst", str(queue.depth_bytes)), ("PeakRate", "0bps")))
    if isinstance(queue, Red):
        return QueuePlan("ns3::RedQueueDisc", (
            ("MaxSize", _size(queue.limit, queue.unit)), ("MinTh", repr(queue.min_th)),
            ("MaxTh", repr(queue.max_th)), ("LInterm", repr(1.0 / queue.max_p)),
            ("QW", repr(queue.q_weight)), ("Gentle", _bool(queue.gentle)),
            ("Wait", _bool(queue.wait)), ("MeanPktSize", str(queue.mean_packet_size_bytes)),
            ("IdlePktSize", str(queue.idle_packet_size_bytes)), ("UseEcn", _bool(queue.ecn)),
            ("UseHardDrop", _bool(queue.hard_drop)),
            ("LinkBandwidth", f"{int(link.rate_bps)}bps"),
            ("LinkDelay", _seconds(link.delay_s))))
    raise InputError(f"the ns3 lens has no mapping for queue kind {queue.kind!r}")


def _error_plan(errors: Any, link: Link, skip: tuple[int, ...]) -> ErrorPlan | None:
    if errors is None:
        return None
    if isinstance(errors, RateErrors):
        return ErrorPlan(rate=errors.rate, per_byte=errors.unit == "byte",
                         l2_bytes=link.l2_header_bytes, skip_handshake=skip)
    assert isinstance(errors, ListErrors)
    return ErrorPlan(drop_list=tuple(sorted(errors.packets)), l2_bytes=link.l2_header_bytes,
                     skip_handshake=skip)


def device_rates(scenario: Scenario, flows: Sequence[ConcreteFlow],
                 ) -> tuple[dict[str, float], list[str]]:
    """The DataRate of each point-to-point direction (queue id) whose link has a
    link-layer header other than PPP's 2 bytes, and a note per such direction.

    ns-3's device always adds 2 bytes, so a packet of IP size ``S`` takes ``(S + 2) * 8 /
    rate`` where the scenario asks ``(S + l2) * 8 / rate``. The device's rate is scaled by
    ``(S + 2) / (S + l2)`` with ``S`` the direction's reference size: the largest data
    packet of the flows whose data cross it, else the largest ACK of those whose ACKs do
    (exact for that size; a packet of another size takes ``(size + 2) / (S + 2)`` of the
    reference's time instead of ``(size + l2) / (S + l2)``).

    >>> from tcpn.models.scenario import dumbbell, validate_scenario
    >>> s = dumbbell(pairs=1, horizon_s=1.0).model_dump()
    >>> s["links"][0]["l2_header_bytes"] = 0  # R1 -- R2; 588-byte data packets: 590 / 588
    >>> rates, notes = device_rates(validate_scenario(s), validate_scenario(s).concrete_flows())
    >>> sorted(rates), round(rates["R1->R2"] / s["links"][0]["rate_bps"], 6)
    (['R1->R2', 'R2->R1'], 1.003401)
    """
    rates: dict[str, float] = {}
    notes = []
    for i, link in enumerate(scenario.links):
        l2 = link.l2_header_bytes
        if l2 == PPP_BYTES or link.wireless is not None:
            continue
        for qid in (f"{link.a}->{link.b}", f"{link.b}->{link.a}"):
            data = sorted({f.tcp.data_packet_bytes for f in flows if qid in f.data_queues})
            acks = sorted({f.tcp.ack_packet_bytes for f in flows if qid in f.ack_queues})
            size, kind = ((data[-1], "data") if data else (acks[-1], "ACK") if acks
                          else (scenario.tcp.data_packet_bytes, "data"))
            rates[qid] = link.rate_bps * (size + PPP_BYTES) / (size + l2)
            others = sorted(set(data + acks) - {size})
            error = "".join(
                f"; a {other}-byte packet takes {(other + PPP_BYTES) / (other + l2) - 1:+.2%}"
                for other in others)
            notes.append(f"links[{i}].l2_header_bytes: {l2}: ns-3's point-to-point device "
                         f"adds PPP's {PPP_BYTES} bytes; {qid}'s DataRate is scaled by "
                         f"({size} + {PPP_BYTES}) / ({size} + {l2}) so that a {size}-byte "
                         f"{kind} packet takes the scenario's serialisation time exactly"
                         f"{error}")
    return rates, notes


def _one_way_s(queues: Sequence[str], scenario: Scenario, rates: dict[str, float],
               ip_bytes: int) -> float:
    """A packet's trip along ``queues`` through empty queues on ns-3's devices."""
    total = 0.0
    for qid in queues:
        a, b = qid.split("->")
        link = scenario.link_between(a, b)
        total += (ip_bytes + PPP_BYTES) * 8 / rates.get(qid, link.rate_bps) + link.delay_s
    return total


def _handshake_fields(scenario: Scenario) -> list[str]:
    """The field that sets ``handshake: false`` of each connection started established."""
    where = [f"flows[{i}].tcp.handshake" if flow.tcp is not None
             and "handshake" in flow.tcp.model_fields_set else "tcp.handshake"
             for i, flow in enumerate(scenario.flows) if not scenario.flow_tcp(flow).handshake]
    return list(dict.fromkeys(where))


def handshake_room_s(scenario: Scenario, flow: ConcreteFlow, rates: dict[str, float]) -> float:
    """How long before its start the lens opens a connection the scenario starts
    established: twice the handshake's SYN, SYN-ACK and ACK trips through empty queues,
    so that its last packet has left the path before the first data segment."""
    forward = _one_way_s(flow.data_queues, scenario, rates, HANDSHAKE_IP_BYTES)
    back = _one_way_s(flow.ack_queues, scenario, rates, HANDSHAKE_IP_BYTES)
    return 2.0 * (2.0 * forward + back)


UINT32_MAX = 4294967295
"""ns-3's largest ``DataRetries`` (a ``uint32_t``): a connection that never gives up."""


def _socket_attributes(tcp: TcpConfig, ecn: bool, sack: bool) -> tuple[tuple[str, str], ...]:
    ssthresh = (UINT32_MAX if tcp.initial_ssthresh_segments is None
                else tcp.initial_ssthresh_segments * tcp.segment_size_bytes)
    return (
        ("SegmentSize", str(tcp.segment_size_bytes)),
        ("InitialCwnd", str(tcp.initial_cwnd_segments)),
        ("InitialSlowStartThreshold", str(ssthresh)),
        ("DelAckCount", str(tcp.delack_count)),
        ("DelAckTimeout", _seconds(tcp.delack_timeout_s)),
        ("SndBufSize", str(tcp.snd_buf_bytes)), ("RcvBufSize", str(tcp.rcv_buf_bytes)),
        ("Sack", _bool(sack)), ("Timestamp", _bool(tcp.timestamps)),
        ("WindowScaling", _bool(tcp.window_scaling)),
        ("MinRto", _seconds(tcp.min_rto_s)),
        ("ClockGranularity", _seconds(tcp.clock_granularity_s)),
        ("UseEcn", "On" if ecn else "Off"),
        ("LimitedTransmit", _bool(tcp.limited_transmit)),
        ("ReTxThreshold", str(tcp.dupack_threshold)),
        ("ConnTimeout", _seconds(tcp.syn_timeout_s)),
        ("ConnCount", str(tcp.syn_retries)),  # TcpSocket::SetSynRetries
        # never give up unless asked (ns-2's rule and the net model's): 2^32 - 1 retries
        ("DataRetries", str(UINT32_MAX if tcp.data_retries is None else tcp.data_retries)),
    )


def _ns2_echo(flow: ConcreteFlow) -> bool:
    """Whether ``flow`` reacts to an ECN echo by ns-2's rule (``tcp.ecn_cwr: ns2``), which
    the ns3 lens builds for the congestion control :data:`NS2_ECHO_CONGESTION`."""
    mapping = variant_spec(flow.variant).ns3_congestion(flow.params)
    return (flow.ecn and flow.tcp.ecn_cwr == "ns2" and mapping is not None
            and mapping.type_id == NS2_ECHO_CONGESTION)


def _flow_plan(flow: ConcreteFlow, index: int, offset_s: float, room_s: float) -> FlowPlan:
    """Flow ``index``'s plan on ns-3's clock (``offset_s`` ahead of the scenario's); a
    connection started established opens ``room_s`` before its start."""
    tcp = flow.tcp
    recovery = {"classic": "ns3::TcpClassicRecovery", "prr": "ns3::TcpPrrRecovery"}[
        tcp.recovery]
    params = flow.params
    # the variant's own congestion control (the ns3 lens refuses a variant without one)
    mapping = variant_spec(flow.variant).ns3_congestion(params)
    assert mapping is not None  # refused by _problems
    congestion, attributes = mapping.type_id, mapping.attributes
    recovery = mapping.recovery or recovery
    report_interval_s = mapping.report_interval_s
    report_link = flow.data_queues[-1] if report_interval_s > 0 else ""
    recovery_of = recovery_variant(flow.variant, tcp.sack, params)
    reno, tahoe = recovery_of in RENO_RECOVERY, recovery_of == "tahoe"
    sack = (tcp.sack or base_recovery(flow.variant, params) == "sack") and not (reno or tahoe)
    options = _socket_attributes(tcp, flow.ecn, sack)
    own: tuple[tuple[str, str], ...] = (
        ("KeepBackoff", _bool(not tcp.ns3_rto_reset)),
        ("WholeSegments", _bool(tcp.ssthresh_whole_segments)),
        ("GrowOnRecoveryExit", _bool(tcp.recovery_exit_growth)),
        # the rule the flow runs: the option, or keep for a variant registered with
        # keeps_sack_after_timeout (BBR), in both lenses
        ("ForgetSack", _bool(flow.sack_after_timeout == "forget")),
        # RFC 6675's pipe unless the scenario asks for ns-3.44's (both lenses)
        ("SackedRetransmitsOut", _bool(not tcp.pipe_counts_sacked_retransmits)),
        ("SynFallbackRto", f"{SYN_FALLBACK_RTO_S:g}s"))
    if not tcp.handshake:
        own += (("ForgetHandshakeRtt", "true"),)
    if getattr(params, "reaction", "halve") == "slow_start":
        own += (("EcnSlowStart", "true"),)
    if _ns2_echo(flow):
        own += (("EcnNs2Reaction", "true"),)
    if getattr(params, "loss_cut", "halve") == "ns2":  # ns-2's Vegas restarts from 2
        own += (("LossWindow", "2"),)
    sender_options = (*options, *own, *((("RenoRecovery", "true"),) if reno else ()),
                      *((("TahoeGoBackN", "true"),) if tahoe else ()))
    socket = RFC_SOCKET if reno or tahoe or not (sack or tcp.ns3_reno_sack) else OWN_SOCKET
    rate = 1.0 + flow.receiver_clock_skew
    established = not tcp.handshake
    exact_echo = variant_spec(flow.variant).exact_ecn_echo
    return FlowPlan(
        id=flow.id, src=flow.src, dst=flow.dst,
        start_s=flow.start_s + offset_s - (room_s if established else 0.0),
        stop_s=flow.stop_s + offset_s,
        port=PORT_BASE + index, max_bytes=flow.bytes or 0,
        send_size_bytes=tcp.segment_size_bytes, app_rate_bps=flow.app_rate_bps or 0.0,
        congestion=congestion, congestion_attributes=attributes, recovery=recovery,
        socket=socket, socket_attributes=sender_options,
        sink_attributes=(*options, ("DelayFirstAck", "true")) if established else options,
        sink_socket=OWN_SOCKET if established else "",
        receiver_clock_rate=rate,
        # the receiver's clock reads the scenario's time, not ns-3's
        receiver_clock_offset_s=flow.receiver_clock_offset_s - rate * offset_s,
        report_interval_s=report_interval_s, report_link=report_link,
        first_write_s=flow.start_s + offset_s if established else -1.0,
        # ns-3 keeps an exact receiver echo (TcpDctcp's) in the congestion control
        sink_congestion=congestion if exact_echo else "",
        sink_congestion_attributes=attributes if exact_echo else ())


def _problems(scenario: Scenario, flows: Sequence[ConcreteFlow]) -> list[str]:
    # the receiver's timestamp clock is modelled here (TcpSink::SetClock), skew included;
    # a connection that starts established opens before its start (_handshake_problems)
    problems = [f"{feature} is not modelled by the ns3 lens"
                for feature in scenario.net_only_features()
                if not any(f".{name}:" in feature
                           for name in ("receiver_clock_skew", "wireless", "handshake"))]
    problems += wireless.problems(scenario)
    problems += _handshake_problems(scenario, flows)
    option_bytes = wireless.TCP_L_OPTION_BYTES if any(
        link.wireless is not None for link in scenario.links) else 0
    degree = dict(scenario.graph().degree())
    rtos = {f.tcp.initial_rto_s for f in flows}
    if len(rtos) > 1:
        problems.append(f"tcp.initial_rto_s: ns-3 sets one initial RTO for the whole "
                        f"simulation, the flows ask for {sorted(rtos)}")
    for i, flow in enumerate(scenario.flows):
        where = f"flows[{i}] ({flow.id or f'f{i}'})"
        tcp = scenario.flow_tcp(flow)
        if (tcp.sack or base_recovery(flow.variant, flow.params) == "sack") \
                and not tcp.limited_transmit:
            problems.append(f"{where}: tcp.limited_transmit: false with SACK: ns-3 sends new "
                            "data on the first duplicate ACKs anyway (a SACKed duplicate "
                            "lowers its pipe), so it cannot run SACK without limited transmit")
        # the variant's ns-3 congestion control, or why there is none (the registry's)
        problems += [f"{where}: {p}" for p in lens_problems("ns3", flow, tcp)]
        if (tcp.ip_header_bytes, tcp.tcp_header_bytes) not in ((20, 20), (20, 20 + option_bytes)):
            problems.append(f"{where}: tcp header sizes: ns-3 uses 20-byte IP and TCP "
                            f"headers, not {tcp.ip_header_bytes} and {tcp.tcp_header_bytes}")
        for end in (flow.src, flow.dst):
            if degree[end] != 1:
                problems.append(f"{where}: end node {end} has {degree[end]} links; the ns3 "
                                "lens captures packets at hosts with exactly one link")
    return list(dict.fromkeys(problems))


def _handshake_problems(scenario: Scenario, flows: Sequence[ConcreteFlow]) -> list[str]:
    """Where opening a connection before its start would change the experiment: the
    handshake must run in an idle network (every flow starts at the same time) and not
    on an 802.11 hop (its radio counters would count it)."""
    fields = _handshake_fields(scenario)
    if not fields:
        return []
    field = " and ".join(fields)
    problems = []
    starts = sorted({f.start_s for f in flows})
    if len(starts) > 1:
        problems.append(
            f"{field}: false: ns-3 always opens a connection with SYN, SYN-ACK and ACK; the "
            "ns3 lens runs that handshake before the flow's start in an idle network, but "
            f"here flows start at {len(starts)} different times (first {starts[0]:g} s, "
            f"last {starts[-1]:g} s), so a handshake would share queues with other flows' "
            "data (give the ns3 lens tcp.handshake: true)")
    if any(link.wireless is not None for link in scenario.links):
        problems.append(f"{field}: false with an 802.11 hop: the handshake the ns3 lens "
                        "runs before the start would count in the radio's frames and energy")
    return problems


def scenario_plan(scenario: Scenario, flows: Sequence[ConcreteFlow] | None = None,
                  rng_run: int = 1, snap_bytes: int = 96,
                  flow_monitor: bool = False) -> Ns3Plan:
    """The :class:`Ns3Plan` of ``scenario`` with ``flows`` (default: drawn from the
    scenario's seed); every queue is recorded (drops and marks are flow events).
    Raises :class:`~tcpn.errors.InputError` for what ns-3 cannot express."""
    flows = list(scenario.concrete_flows() if flows is None else flows)
    problems = _problems(scenario, flows)
    if problems:
        raise InputError(f"the ns3 lens cannot run scenario {scenario.name}: "
                         + "; ".join(problems))
    rates, notes = device_rates(scenario, flows)
    rooms = [handshake_room_s(scenario, f, rates) if not f.tcp.handshake else 0.0
             for f in flows]
    # ns-3's clock runs whole seconds ahead (millisecond timestamps keep their phase)
    offset_s = float(math.ceil(max((room - f.start_s for room, f in zip(rooms, flows,
                                                                       strict=True)),
                                   default=0.0)))
    offset_s = max(offset_s, 0.0)
    established = tuple(i for i, f in enumerate(flows) if not f.tcp.handshake)
    if established:
        notes.append(
            f"{' and '.join(_handshake_fields(scenario))}: false: ns-3 always opens with SYN, "
            "SYN-ACK and ACK; the ns3 lens runs that handshake before each such flow's start "
            f"(ns-3's clock runs {offset_s:g} s ahead, the trace is shifted back), never "
            "loses or counts its packets, the sender forgets the SYN-ACK's RTT sample "
            "before its first data segment (RTO = tcp.initial_rto_s, as without "
            "handshake) and the receiver delays its first ACK as any other: the first data "
            "segment leaves at the flow's start into an idle path")
    # ns-2's reaction is built for the loss-based senders; DCTCP reacts by its own rule
    # (ns-3's CWR state) in both lenses
    ns2_cwr = [f.id for f in flows if f.ecn and f.tcp.ecn_cwr == "ns2" and not _ns2_echo(f)
               and not variant_spec(f.variant).exact_ecn_echo]
    if ns2_cwr:
        notes.append(
            f"tcp.ecn_cwr: ns2 (flows {', '.join(ns2_cwr)}): ns-3 reacts to an ECN echo by "
            "its own rule (TcpSocketBase::EnterCwr: ssthresh from the congestion control "
            "on the flight after the echoing ACK, the window brought down by PRR and held "
            "for a round); ns-2's reaction is built in the ns3 lens only for the "
            "loss-based variants (tcpn::NewReno)")
    links = tuple(LinkPlan(
        a=link.a, b=link.b, rate_bps=link.rate_bps, delay_s=link.delay_s,
        queue_ab=_queue_plan(link.ab.queue, link), queue_ba=_queue_plan(link.ba.queue, link),
        errors_ab=_error_plan(link.ab.errors, link, established),
        errors_ba=_error_plan(link.ba.errors, link, established),
        wifi=wireless.plan(link, scenario.tcp.tcp_header_bytes - 20),
        device_rate_ab_bps=rates.get(f"{link.a}->{link.b}", 0.0),
        device_rate_ba_bps=rates.get(f"{link.b}->{link.a}", 0.0))
        for link in scenario.links)
    return Ns3Plan(
        name=scenario.name, links=links,
        flows=tuple(_flow_plan(f, i, offset_s, room)
                    for i, (f, room) in enumerate(zip(flows, rooms, strict=True))),
        horizon_s=scenario.horizon_s + offset_s, rng_run=rng_run,
        traced_queues=tuple(scenario.queue_ids()), snap_bytes=snap_bytes,
        flow_monitor=flow_monitor, initial_rto_s=flows[0].tcp.initial_rto_s,
        time_offset_s=offset_s, notes=tuple(notes))


class Ns3Lens:
    """The ``ns3`` lens (registered in :data:`tcpn.lenses.registry.LENSES`).

    Options: ``worker`` (an :class:`~tcpn.lenses.ns3.worker.Ns3Worker`; default the
    process's shared one), ``timeout_s`` (limit of one simulation), ``keep_pcap`` (a
    directory to copy the captures to), ``snap_bytes`` (pcap record size, headers only),
    ``flow_monitor`` (also return FlowMonitor's counters in the provenance).
    """

    name: ClassVar[str] = "ns3"

    def __init__(self, worker: Any = None, timeout_s: float | None = None,
                 keep_pcap: str | Path | None = None, snap_bytes: int = 96,
                 flow_monitor: bool = False):
        self.worker = worker
        self.timeout_s = timeout_s
        self.keep_pcap = None if keep_pcap is None else Path(keep_pcap)
        self.snap_bytes = snap_bytes
        self.flow_monitor = flow_monitor
        self.raw: dict[str, Any] = {}

    def check(self, scenario: Scenario) -> None:
        """Raise :class:`~tcpn.errors.InputError` naming what ns-3 cannot express, or
        :class:`~tcpn.lenses.ns3.loader.Ns3NotInstalled` without ns-3's bindings."""
        from tcpn.lenses.ns3.loader import Ns3NotInstalled, installed

        if not installed():
            raise Ns3NotInstalled()
        problems = _problems(scenario, scenario.concrete_flows())
        if problems:
            raise InputError(f"the ns3 lens cannot run scenario {scenario.name}: "
                             + "; ".join(problems))

    def run(self, run: Any, trace: Any, progress: Any) -> dict[str, Any]:
        """Simulate ``run`` in ns-3 and write its trace; return provenance."""
        from tcpn.lenses.ns3.builder import prepare_worker, run_plan
        from tcpn.lenses.ns3.loader import ns3_version
        from tcpn.lenses.ns3.worker import shared_worker

        scenario = run.scenario
        plan = scenario_plan(scenario, run.flows, rng_run=run.int_seed(),
                             snap_bytes=self.snap_bytes, flow_monitor=self.flow_monitor)
        worker = self.worker if self.worker is not None else shared_worker()
        with scratch("ns3-run") as tmp:
            raw = worker.call(run_plan, plan, str(tmp), label=f"scenario {scenario.name} "
                              f"(replication {run.replication})", timeout_s=self.timeout_s,
                              prepare=prepare_worker)
            _check_opened(plan, raw)
            _shift(raw, plan.time_offset_s)
            _write_trace(plan, run.flows, raw, trace, scenario)
            if self.keep_pcap is not None:
                self.keep_pcap.mkdir(parents=True, exist_ok=True)
                for path in raw["pcap"].values():
                    shutil.copy(path, self.keep_pcap / Path(path).name)
        self.raw = raw
        progress(scenario.horizon_s)
        return {"ns3_version": ns3_version(), "rng_run": plan.rng_run,
                "events": raw["events"], "build_s": raw["build_s"], "run_s": raw["run_s"],
                "run_cpu_s": raw["run_cpu_s"], "worker": dict(worker.startup),
                "flow_monitor": raw["flow_monitor"],
                "approximations": list(plan.notes), "time_offset_s": plan.time_offset_s,
                "wireless": wireless.energy_report(
                    scenario, run.flows, raw["wifi_station"],
                    {fid: f["sink_bytes"] for fid, f in raw["flows"].items()})}


def _check_opened(plan: Ns3Plan, raw: dict[str, Any]) -> None:
    """A connection started established must have opened before its first write (else
    its handshake met a queue or a loss, and the experiment is not the scenario's)."""
    for flow in plan.flows:
        opened_s = raw["flows"][flow.id]["connected_s"]
        if flow.first_write_s >= 0 and not 0 <= opened_s <= flow.first_write_s:
            raise TcpnError(f"ns3 lens: flow {flow.id} should start established at "
                            f"{flow.first_write_s - plan.time_offset_s:g} s, but its "
                            "handshake before the start "
                            + ("never completed" if opened_s < 0 else
                               f"completed {opened_s - flow.first_write_s:g} s late"))


#: the flows' raw series that are samples taken at events, not a state held from one
#: change to the next
_SAMPLED = frozenset({"rtt"})


def _shift(raw: dict[str, Any], offset_s: float) -> None:
    """Put the raw result on the scenario's clock: every time minus ``offset_s`` (events
    before 0 are the handshakes of connections started established, and so are RTT
    samples before 0: left out; the state series keep their state at 0)."""
    if offset_s == 0:
        return

    def series(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: series(v, k) for k, v in value.items()}
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray):
            times = value[0] - offset_s
            if key in _SAMPLED:
                return times[times >= 0], value[1][times >= 0]
            return np.maximum(times, 0.0), value[1]
        return value

    raw["flows"] = series(raw["flows"])
    for group in ("queues", "losses"):
        for key, events in raw[group].items():
            times = events["time_s"] - offset_s
            keep = times >= 0
            raw[group][key] = {name: (column[keep] if isinstance(column, np.ndarray) else column)
                               for name, column in {**events, "time_s": times}.items()}
    raw["time_offset_s"] = offset_s


def _write_trace(plan: Ns3Plan, flows: Sequence[ConcreteFlow], raw: dict[str, Any],
                 trace: Any, scenario: Scenario) -> None:
    captures: dict[tuple[str, str], pd.DataFrame] = {}

    def capture(device: tuple[str, str]) -> pd.DataFrame:
        if device not in captures:
            frames = pcap.read_pcap(raw["pcap"][device])
            frames["time_s"] -= plan.time_offset_s
            captures[device] = frames
        return captures[device]

    isn: dict[int, int] = {}
    for index, (flow, fplan) in enumerate(zip(flows, plan.flows, strict=True)):
        sender = capture((flow.src, flow.data_route[1]))
        receiver = capture((flow.dst, flow.data_route[-2]))
        opened = [c for c in pcap.connections(sender) if c.dport == fplan.port]
        if opened:
            isn[index] = opened[0].isn
            events = pcap.flow_events(opened[0], sender, receiver)
            trace.extend("flow_events", time_s=events["time_s"].to_numpy(), flow=flow.id,
                         event=events["event"].tolist(), seq=events["seq"].to_numpy(),
                         bytes=events["bytes"].to_numpy())
        _write_flow_series(raw["flows"][flow.id], flow.id, trace, scenario)
    ids = np.array([f.id for f in flows] + [""], dtype=object)
    for qid, events in raw["queues"].items():
        _write_losses(events, qid, ids, isn, trace)
        if qid in scenario.traced_queues() and len(events["time_s"]):
            trace.extend("queue_events", time_s=events["time_s"], queue=qid,
                         event=_QUEUE_EVENTS[events["event"]].tolist(),
                         flow=ids[events["flow"]].tolist(), bytes=events["ip_bytes"],
                         length_packets=events["length_packets"],
                         length_bytes=events["length_bytes"])
    for qid, losses in raw["losses"].items():
        _write_losses(losses, qid, ids, isn, trace)


def _write_losses(events: dict[str, np.ndarray], where: str, ids: np.ndarray,
                  isn: dict[int, int], trace: Any) -> None:
    """Data drops, ACK drops and marks of the flows, as flow events at ``where``."""
    lost = events["event"] == 2
    for mask, event in ((lost & (events["direction"] == 1) & (events["payload"] > 0), "drop"),
                        (lost & (events["direction"] == -1), "ack_drop"),
                        ((events["event"] == 3) & (events["direction"] == 1), "mark")):
        rows = np.flatnonzero(mask & (events["flow"] >= 0))
        if not len(rows):
            continue
        flows = events["flow"][rows]
        base = np.array([isn.get(int(f), 0) + 1 for f in flows], dtype=np.int64)
        trace.extend("flow_events", time_s=events["time_s"][rows],
                     flow=ids[flows].tolist(), event=event,
                     seq=(events["seq"][rows] - base) % (1 << 32),
                     bytes=events["payload"][rows], where=where)


def _write_flow_series(series: dict[str, Any], flow: str, trace: Any,
                       scenario: Scenario) -> None:
    wanted = []
    if scenario.trace.cwnd:
        wanted += [("cwnd", "cwnd_bytes"), ("ssthresh", "ssthresh_bytes")]
    if scenario.trace.rtt:
        wanted.append(("rtt", "rtt_s"))
    for key, var in wanted:
        times, values = series[key]
        if len(times):
            trace.extend("flow_series", time_s=times, flow=flow, var=var, value=values)
    if series["timeouts"] is not None:  # every expiry (tcpn::TcpnSocket)
        expiries = series["timeouts"][0]
    else:  # the first of each run of expiries (CongState does not change on a repeat)
        times, states = series["cong_state"]
        expiries = times[np.flatnonzero((states == _CA_LOSS) & (
            np.concatenate(([-1.0], states[:-1])) != _CA_LOSS))]
    if len(expiries):
        trace.extend("flow_events", time_s=expiries, flow=flow, event="timeout")
    times, _ = series["connect_fail"]
    if len(times):
        trace.extend("flow_events", time_s=times, flow=flow, event="connect_fail", seq=-1)
