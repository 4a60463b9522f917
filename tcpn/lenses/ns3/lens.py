"""The ns3 lens: a tcpn scenario as an ns-3.44 simulation, recorded in the common trace.

:meth:`Ns3Lens.check` names every scenario feature ns-3 cannot express (never a silently
different experiment); :func:`scenario_plan` maps the rest to an
:class:`~tcpn.lenses.ns3.plan.Ns3Plan` (pure Python, no ns-3 needed); :meth:`Ns3Lens.run`
runs the plan in a worker process (:mod:`~tcpn.lenses.ns3.worker`) and writes the
trace: ``send``/``retransmit``/``ack``/``recv``/``deliver`` from pcap captures at each
flow's two end devices (:mod:`tcpn.models.pcap`), ``drop``/``ack_drop``/``mark`` from
the C++ queue and link-loss recorders, ``timeout`` when the sender enters CA_LOSS, cwnd,
ssthresh and RTT samples from the socket's trace sources, and every queue event of the
traced queues. docs/validation.md says what differs from the net model.

>>> from tcpn.models.scenario import dumbbell
>>> reno = scenario_plan(dumbbell(pairs=1, variant="reno", horizon_s=1.0)).flows[0]
>>> reno.socket, ("RenoRecovery", "true") in reno.socket_attributes
('tcpn::Rfc5681Socket', True)
>>> plan = scenario_plan(dumbbell(pairs=1, variant="vegas", horizon_s=1.0), rng_run=3)
>>> plan.flows[0].congestion, plan.flows[0].congestion_attributes[:3]
('tcpn::Vegas', (('Alpha', '2'), ('Beta', '4'), ('Gamma', '1')))
>>> plan.flows[0].socket  # SACK on (the default): ns-3's own socket
''
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from tcpn.errors import InputError
from tcpn.lenses.ns3 import wireless
from tcpn.lenses.ns3.plan import ErrorPlan, FlowPlan, LinkPlan, Ns3Plan, QueuePlan
from tcpn.models import pcap
from tcpn.models.components.variants import recovery_variant
from tcpn.models.components.vegas import MIN_ROUND_SAMPLES
from tcpn.models.scenario import (
    AdaptiveVegasParams,
    ConcreteFlow,
    DropTail,
    Link,
    ListErrors,
    RateErrors,
    Red,
    Scenario,
    Sgpq,
    TcpConfig,
    TcpLParams,
    ThresholdEcn,
    TokenBucket,
    VegasParams,
    WestwoodPlusParams,
)

__all__ = ["PORT_BASE", "RFC_SOCKET", "Ns3Lens", "scenario_plan"]

PORT_BASE = 10_000
"""Flow ``i`` (in concrete-flow order) is received on port ``PORT_BASE + i``."""

RENO_RECOVERY = ("reno", "ecn_reno")
"""Recoveries that end at the first new ACK: :data:`RFC_SOCKET` with ``RenoRecovery``
(ns-3.44's socket has NewReno's only). Their senders ignore SACK blocks (as the net
model's Reno sender), so they do not negotiate SACK."""
VEGAS_FAMILY = ("vegas", "modified_vegas", "adaptive_vegas")
_OWN_VEGAS = {"modified_vegas": "tcpn::ModifiedVegas", "adaptive_vegas": "tcpn::AdaptiveVegas"}
"""tcpn's C++ congestion controls (``cpp/variants.h``) of the variants ns-3 does not have."""
RFC_SOCKET = "tcpn::Rfc5681Socket"
"""The sender's socket of a connection without SACK (``cpp/variants.h``): ns-3's with RFC
5681/6582's rules where its duplicate-ACK scoreboard departs from them; ns-3's own with
``tcp.ns3_reno_sack``."""
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


def _error_plan(errors: Any) -> ErrorPlan | None:
    if errors is None:
        return None
    if isinstance(errors, RateErrors):
        return ErrorPlan(rate=errors.rate, per_byte=errors.unit == "byte")
    assert isinstance(errors, ListErrors)
    return ErrorPlan(drop_list=tuple(sorted(errors.packets)))


def _socket_attributes(tcp: TcpConfig, ecn: bool, sack: bool) -> tuple[tuple[str, str], ...]:
    ssthresh = (4294967295 if tcp.initial_ssthresh_segments is None
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
    )


def _flow_plan(flow: ConcreteFlow, index: int) -> FlowPlan:
    tcp = flow.tcp
    recovery = {"classic": "ns3::TcpClassicRecovery", "prr": "ns3::TcpPrrRecovery"}[
        tcp.recovery]
    congestion = "ns3::TcpNewReno"
    attributes: tuple[tuple[str, str], ...] = ()
    params = flow.params
    report_interval_s, report_link = 0.0, ""
    if flow.variant == "tahoe":
        recovery = "tcpn::TahoeRecovery"
    elif flow.variant in _OWN_VEGAS:
        assert isinstance(params, VegasParams)
        congestion = _OWN_VEGAS[flow.variant]
        attributes = (("Alpha", str(params.alpha)), ("Beta", str(params.beta)),
                      ("Gamma", str(params.gamma)),
                      ("MinRoundSamples", str(MIN_ROUND_SAMPLES)))
        if isinstance(params, AdaptiveVegasParams):
            attributes += (("Weight", repr(params.weight)),)
    elif isinstance(params, TcpLParams):
        congestion = "tcpn::TcpL"
        report_interval_s, report_link = params.report_interval_s, flow.data_queues[-1]
    elif isinstance(params, VegasParams) and params.law == "ns3":
        congestion = "ns3::TcpVegas"
        attributes = (("Alpha", str(params.alpha)), ("Beta", str(params.beta)),
                      ("Gamma", str(params.gamma)))
    elif isinstance(params, VegasParams):
        congestion = "tcpn::Vegas"
        attributes = (("Alpha", str(params.alpha)), ("Beta", str(params.beta)),
                      ("Gamma", str(params.gamma)),
                      ("MinRoundSamples", str(MIN_ROUND_SAMPLES)))
    elif isinstance(params, WestwoodPlusParams):
        congestion = "ns3::TcpWestwoodPlus"
        attributes = (("FilterType", "Tustin" if params.filter == "tustin" else "None"),)
    reno = recovery_variant(flow.variant, tcp.sack, params) in RENO_RECOVERY
    sack = (tcp.sack or flow.variant == "sack") and not reno
    options = _socket_attributes(tcp, flow.ecn, sack)
    sender_options = (*options, ("RenoRecovery", "true")) if reno else options
    return FlowPlan(
        id=flow.id, src=flow.src, dst=flow.dst, start_s=flow.start_s, stop_s=flow.stop_s,
        port=PORT_BASE + index, max_bytes=flow.bytes or 0,
        send_size_bytes=tcp.segment_size_bytes, app_rate_bps=flow.app_rate_bps or 0.0,
        congestion=congestion, congestion_attributes=attributes, recovery=recovery,
        socket=RFC_SOCKET if reno or not (sack or tcp.ns3_reno_sack) else "",
        socket_attributes=sender_options, sink_attributes=options,
        receiver_clock_rate=1.0 + flow.receiver_clock_skew,
        receiver_clock_offset_s=flow.receiver_clock_offset_s,
        report_interval_s=report_interval_s, report_link=report_link)


def _problems(scenario: Scenario, flows: Sequence[ConcreteFlow]) -> list[str]:
    # the receiver's timestamp clock is modelled here (TcpSink::SetClock), skew included
    problems = [f"{feature} is not modelled by the ns3 lens"
                for feature in scenario.net_only_features()
                if ".receiver_clock_skew:" not in feature and ".wireless:" not in feature]
    problems += wireless.problems(scenario)
    option_bytes = wireless.TCP_L_OPTION_BYTES if any(
        link.wireless is not None for link in scenario.links) else 0
    for i, link in enumerate(scenario.links):
        if link.l2_header_bytes != 2 and link.wireless is None:
            problems.append(f"links[{i}].l2_header_bytes: ns-3's point-to-point device adds "
                            f"a 2-byte PPP header, not {link.l2_header_bytes}")
    degree = dict(scenario.graph().degree())
    rtos = {f.tcp.initial_rto_s for f in flows}
    if len(rtos) > 1:
        problems.append(f"tcp.initial_rto_s: ns-3 sets one initial RTO for the whole "
                        f"simulation, the flows ask for {sorted(rtos)}")
    for i, flow in enumerate(scenario.flows):
        where = f"flows[{i}] ({flow.id or f'f{i}'})"
        tcp = scenario.flow_tcp(flow)
        if flow.variant == "sack" and not tcp.sack:
            problems.append(f"{where}: variant sack needs tcp.sack: true")
        if (tcp.sack or flow.variant == "sack") and not tcp.limited_transmit:
            problems.append(f"{where}: tcp.limited_transmit: false with SACK: ns-3 sends new "
                            "data on the first duplicate ACKs anyway (a SACKed duplicate "
                            "lowers its pipe), so it cannot run SACK without limited transmit")
        problems += _variant_problems(where, flow, tcp)
        if (tcp.ip_header_bytes, tcp.tcp_header_bytes) not in ((20, 20), (20, 20 + option_bytes)):
            problems.append(f"{where}: tcp header sizes: ns-3 uses 20-byte IP and TCP "
                            f"headers, not {tcp.ip_header_bytes} and {tcp.tcp_header_bytes}")
        for end in (flow.src, flow.dst):
            if degree[end] != 1:
                problems.append(f"{where}: end node {end} has {degree[end]} links; the ns3 "
                                "lens captures packets at hosts with exactly one link")
    return list(dict.fromkeys(problems))


def _variant_problems(where: str, flow: Any, tcp: TcpConfig) -> list[str]:
    """What tcpn's own ns-3 variants cannot run (see ``cpp/variants.h``)."""
    params = flow.params
    problems = []
    if getattr(params, "reaction", "halve") == "slow_start":
        problems.append(f"{where}: params.reaction slow_start (study S2's): ns-3's ECN "
                        "reaction halves the window (RFC 3168)")
    if flow.variant == "modified_vegas":
        if not tcp.timestamps:
            problems.append(f"{where}: variant modified_vegas reads the receiver's TSval: "
                            "it needs tcp.timestamps: true")
        if params is not None and params.skew_estimation:
            problems.append(f"{where}: params.skew_estimation: the ns3 lens's Modified Vegas "
                            "has no clock-skew estimator")
    if flow.variant == "tcp_l" and tcp.ecn:
        problems.append(f"{where}: tcp.ecn: the ns3 lens's TCP-L does not combine its "
                        "randomised reaction with ECN")
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
    links = tuple(LinkPlan(
        a=link.a, b=link.b, rate_bps=link.rate_bps, delay_s=link.delay_s,
        queue_ab=_queue_plan(link.ab.queue, link), queue_ba=_queue_plan(link.ba.queue, link),
        errors_ab=_error_plan(link.ab.errors), errors_ba=_error_plan(link.ba.errors),
        wifi=wireless.plan(link, scenario.tcp.tcp_header_bytes - 20))
        for link in scenario.links)
    return Ns3Plan(
        name=scenario.name, links=links,
        flows=tuple(_flow_plan(f, i) for i, f in enumerate(flows)),
        horizon_s=scenario.horizon_s, rng_run=rng_run,
        traced_queues=tuple(scenario.queue_ids()), snap_bytes=snap_bytes,
        flow_monitor=flow_monitor, initial_rto_s=flows[0].tcp.initial_rto_s)


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
        with tempfile.TemporaryDirectory(prefix="tcpn-ns3-run-") as tmp:
            raw = worker.call(run_plan, plan, tmp, label=f"scenario {scenario.name} "
                              f"(replication {run.replication})", timeout_s=self.timeout_s,
                              prepare=prepare_worker)
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
                "wireless": wireless.energy_report(
                    scenario, run.flows, raw["wifi_station"],
                    {fid: f["sink_bytes"] for fid, f in raw["flows"].items()})}


def _write_trace(plan: Ns3Plan, flows: Sequence[ConcreteFlow], raw: dict[str, Any],
                 trace: Any, scenario: Scenario) -> None:
    captures: dict[tuple[str, str], pd.DataFrame] = {}

    def capture(device: tuple[str, str]) -> pd.DataFrame:
        if device not in captures:
            captures[device] = pcap.read_pcap(raw["pcap"][device])
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
    times, states = series["cong_state"]
    entered = np.flatnonzero((states == _CA_LOSS)
                             & (np.concatenate(([-1.0], states[:-1])) != _CA_LOSS))
    if len(entered):
        trace.extend("flow_events", time_s=times[entered], flow=flow, event="timeout")
    times, _ = series["connect_fail"]
    if len(times):
        trace.extend("flow_events", time_s=times, flow=flow, event="connect_fail", seq=-1)
