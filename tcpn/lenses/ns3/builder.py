"""Builds and runs an :class:`~tcpn.lenses.ns3.plan.Ns3Plan` in ns-3; returns raw arrays.

Runs inside a worker process (:mod:`tcpn.lenses.ns3.worker`): it imports ns-3.
Every link is a point-to-point link whose device keeps a one-packet transmit queue under
the plan's root queue disc (the FqCoDel that address assignment installs is replaced);
under a RED queue disc that transmit queue is stopped while the device transmits, so that
RED holds every waiting packet, as ns-2's RED does (``HoldRedQueueInQueueDisc`` in
``cpp/build.h``).
Flows use tcpn's own C++ applications (``cpp/apps.h``), which configure each socket
themselves, so flows leaving one node may use different variants and options. Recording
happens in C++ (``cpp/recorders.h``); Python reads the vectors once after the run.

Every random stream is assigned explicitly (error models, RED, the internet stack, the
802.11 MAC and PHY) and every global default the build relies on is set on each run, so
one plan gives the same result in-process, in a forked child or in a spawned worker,
whatever the process simulated before. The result of
:func:`run_plan` is a plain dict of numpy arrays and numbers (picklable)::

    {"flows": {id: {"cwnd": (t, v), "ssthresh": ..., "rtt": ..., "cong_state": ...,
                    "connect_fail": ..., "ecn_reactions": (t, ssthresh),
                    "timeouts": (t, rto) (None: not a tcpn::TcpnSocket),
                    "connected_s": s (-1: never),
                    "app_sent_bytes": n, "sink_bytes": n, "variant": {...}}},
     "queues": {"A->B": events}, "losses": {"A->B": events | arrivals
                                             (| collided: ACK-less 802.11)},
     "qdisc_stats": {"A->B": {"dropped": n, "marked": n}},
     "wifi_mac": {"A->B": {"tx_data": n, "failed": n, "final_failed": n}} (802.11 hops),
     "pcap": {(node, nbr): path},
     "flow_monitor": [...], "events": n, "build_s": s, "run_s": s,
     "run_cpu_s": s}

A flow's ``"variant"`` holds the state of tcpn's own congestion controls after the run
(:func:`_variant_state`; empty for ns-3's).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import numpy as np

from tcpn.lenses.ns3 import wireless
from tcpn.lenses.ns3.loader import load_ns3
from tcpn.lenses.ns3.plan import ErrorPlan, FlowPlan, LinkPlan, Ns3Plan, QueuePlan
from tcpn.scratch import scratch

__all__ = ["prepare_worker", "run_plan", "warm_up"]

_STREAM_STACK = 1_000
_STREAM_QUEUES = 100_000
_STREAM_ERRORS = 200_000
_STREAM_VARIANTS = 300_000
_STREAM_WIFI = 400_000
_RANDOM_CONGESTION = ("tcpn::TcpL", "ns3::TcpBbr")
"""Congestion controls that draw random numbers (their ``Stream`` attribute is set, one
stream per flow: ``TcpBbr``'s default, stream 4 for every flow, would give all its flows
the same PROBE_BW phases in a run)."""


def _array(vector: Any, dtype: type) -> np.ndarray:
    n = int(vector.size())
    if n == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(vector.data(), dtype=dtype, count=n).copy()


def _series(series: Any) -> tuple[np.ndarray, np.ndarray]:
    return _array(series.t, np.float64), _array(series.v, np.float64)


def _packet_events(events: Any) -> dict[str, np.ndarray]:
    return {
        "time_s": _array(events.t, np.float64), "event": _array(events.event, np.int32),
        "flow": _array(events.flow, np.int32), "direction": _array(events.direction, np.int32),
        "seq": _array(events.seq, np.int64), "payload": _array(events.payload, np.float64),
        "ip_bytes": _array(events.ip_bytes, np.float64),
        "length_packets": _array(events.len_packets, np.float64),
        "length_bytes": _array(events.len_bytes, np.float64),
    }


def _install_queue(ns: Any, tcpn: Any, device: Any, plan: QueuePlan) -> Any:
    qdisc = tcpn.InstallRootQueueDisc(device, plan.type_id)
    for name, value in plan.attributes:
        qdisc.SetAttribute(name, ns.StringValue(value))
    return qdisc


def _error_model(ns: Any, tcpn: Any, plan: ErrorPlan, stream: int, port_base: int,
                 n_flows: int) -> Any:
    model = ns.CreateObject[tcpn.LinkErrorModel]()
    model.Configure(plan.rate, plan.per_byte, port_base, n_flows)
    model.SetModelL2(plan.l2_bytes)
    for index in plan.drop_list:
        model.AddDrop(index)
    for flow in plan.skip_handshake:
        model.SkipHandshake(flow)
    model.AssignStreams(stream)
    return model


def run_plan(plan: Ns3Plan, output_dir: str | Path) -> dict[str, Any]:
    """Simulate ``plan``; pcap files go to ``output_dir``. Returns the raw arrays."""
    ns = load_ns3()
    import cppyy

    tcpn = cppyy.gbl.tcpn
    out = Path(output_dir)
    build_start = time.perf_counter()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(plan.rng_run)
    ns.Config.SetDefault("ns3::PcapFileWrapper::CaptureSize", ns.UintegerValue(plan.snap_bytes))
    ns.Config.SetDefault("ns3::RttEstimator::InitialEstimation",
                         ns.TimeValue(ns.Seconds(plan.initial_rto_s)))
    # An ARP request goes at once, as ns-2's ARPTable::arpresolve sends it (the study's
    # simulator), not after ns-3's default jitter of 0-10 ms (ArpL3Protocol::
    # RequestJitter): on an 802.11 hop, the only links that resolve addresses, the jitter
    # delayed the SYN by 10 ms on average, and an RTTmin taken from the smoothed RTT
    # (ns-3's m_minRtt, Westwood+'s) kept that delay for the whole run.
    ns.Config.SetDefault("ns3::ArpL3Protocol::RequestJitter",
                         ns.StringValue("ns3::ConstantRandomVariable[Constant=0.0]"))

    names = plan.nodes()
    container = ns.NodeContainer()
    container.Create(len(names))
    node = {name: container.Get(i) for i, name in enumerate(names)}
    stack = ns.InternetStackHelper()
    stack.Install(container)

    port_base = min((f.port for f in plan.flows), default=0)
    n_ports = max((f.port for f in plan.flows), default=0) - port_base + 1
    address: dict[str, Any] = {}
    device: dict[tuple[str, str], Any] = {}
    qdiscs: dict[str, Any] = {}
    models: dict[str, Any] = {}
    helper: dict[tuple[str, str], Any] = {}
    ipv4 = ns.Ipv4AddressHelper()
    for i, link in enumerate(plan.links):
        p2p: Any = ns.PointToPointHelper()
        if link.wifi is not None:
            devices, _ = wireless.install(ns, node[link.a], node[link.b], link.wifi,
                                          _STREAM_WIFI + 100 * i)
            p2p = wireless.Ipv4Pcap(plan.snap_bytes)
        else:
            p2p.SetDeviceAttribute("DataRate",
                                   ns.DataRateValue(ns.DataRate(int(link.rate_bps))))
            p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(link.delay_s)))
            p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue("1p"))
            devices = p2p.Install(node[link.a], node[link.b])
            for k, rate in enumerate((link.device_rate_ab_bps, link.device_rate_ba_bps)):
                if rate > 0:
                    devices.Get(k).SetAttribute("DataRate",
                                                ns.DataRateValue(ns.DataRate(round(rate))))
        ipv4.SetBase(ns.Ipv4Address(f"10.{i >> 8}.{i & 255}.0"), ns.Ipv4Mask("255.255.255.0"))
        interfaces = ipv4.Assign(devices)
        for k, (here, there) in enumerate(((link.a, link.b), (link.b, link.a))):
            device[(here, there)] = devices.Get(k)
            helper[(here, there)] = p2p
            address.setdefault(here, interfaces.GetAddress(k))
        for (here, there), queue, errors in ((link.a, link.b), link.queue_ab, link.errors_ab), \
                ((link.b, link.a), link.queue_ba, link.errors_ba):
            qid = f"{here}->{there}"
            qdiscs[qid] = _install_queue(ns, tcpn, device[(here, there)], queue)
            tcpn.AttachDeviceQueue(qdiscs[qid], device[(here, there)])
            tcpn.HoldRedQueueInQueueDisc(qdiscs[qid], device[(here, there)])
            tcpn.AssignQueueStreams(qdiscs[qid], _STREAM_QUEUES + 10 * len(qdiscs))
            if link.wifi is not None and (errors is not None or not link.wifi.ack):
                # ACK-less, a model even without errors: it counts the collided frames
                models[qid] = wireless.error_model(
                    ns, link.wifi, errors.rate if errors else 0.0,
                    errors.per_byte if errors else False,
                    _STREAM_ERRORS + 10 * len(models), port_base, n_ports)
                tcpn.SetPostReceptionErrorModel(device[(there, here)], models[qid])
                if link.wifi.ack and not tcpn.ConnectFinalDrops(device[(here, there)],
                                                                models[qid]):
                    raise RuntimeError(f"cannot trace the Wifi MAC drops of {qid}")
                if not link.wifi.ack and not tcpn.ConnectCollisions(device[(there, here)],
                                                                    models[qid]):
                    raise RuntimeError(f"cannot trace the Wifi PHY drops of {qid}")
            elif errors is not None:
                models[qid] = _error_model(ns, tcpn, errors, _STREAM_ERRORS + 10 * len(models),
                                           port_base, n_ports)
                tcpn.SetReceiveErrorModel(device[(there, here)], models[qid])
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    stack.AssignStreams(container, _STREAM_STACK)

    recorders: dict[str, Any] = {}
    taps: dict[str, Any] = {}
    for qid in plan.traced_queues:
        here, there = qid.split("->")
        recorder = tcpn.QueueRecorder()
        recorder.SetPorts(port_base, n_ports)
        if wireless.is_wifi(device[(here, there)]):
            taps[qid] = tcpn.WifiQueueTap()
            connected = tcpn.ConnectWifiQueue(qdiscs[qid], device[(here, there)], recorder,
                                              taps[qid])
        else:
            connected = tcpn.ConnectQueue(qdiscs[qid], device[(here, there)], recorder)
        if not connected:
            raise RuntimeError(f"cannot trace queue {qid}")
        recorders[qid] = recorder

    macs = wireless.mac_counters(tcpn, device)
    radios = wireless.station_radios(tcpn, plan.links, device)
    sources: dict[str, Any] = {}
    sinks: dict[str, Any] = {}
    for flow in plan.flows:
        sink = ns.CreateObject[tcpn.TcpSink]()
        sink.SetLocal(ns.InetSocketAddress(ns.Ipv4Address.GetAny(), flow.port).ConvertTo())
        if flow.sink_socket:
            sink.SetSocketType(flow.sink_socket)
        if flow.sink_congestion:
            sink.SetCongestion(flow.sink_congestion)
            for name, value in flow.sink_congestion_attributes:
                sink.SetCongestionAttribute(name, value)
        for name, value in flow.sink_attributes:
            sink.SetSocketAttribute(name, value)
        if (flow.receiver_clock_rate, flow.receiver_clock_offset_s) != (1.0, 0.0):
            sink.SetClock(flow.receiver_clock_rate, flow.receiver_clock_offset_s)
        if flow.report_interval_s > 0:
            sink.EnableReports(flow.report_interval_s)
            if flow.report_link in models:
                sink.SetReportLink(models[flow.report_link])
        tcpn.AddApplication(node[flow.dst], sink, 0.0, plan.horizon_s)
        source = ns.CreateObject[tcpn.TcpSource]()
        source.SetRemote(ns.InetSocketAddress(address[flow.dst], flow.port).ConvertTo())
        source.SetTransfer(flow.max_bytes, flow.send_size_bytes, flow.app_rate_bps)
        source.SetCongestion(flow.congestion)
        for name, value in flow.congestion_attributes:
            source.SetCongestionAttribute(name, value)
        if flow.congestion in _RANDOM_CONGESTION:
            source.SetCongestionAttribute("Stream", str(_STREAM_VARIANTS + 10 * len(sources)))
        source.SetRecovery(flow.recovery)
        if flow.first_write_s >= 0:
            source.SetFirstWrite(flow.first_write_s)
        if flow.socket:
            source.SetSocketType(flow.socket)
        for name, value in flow.socket_attributes:
            source.SetSocketAttribute(name, value)
        tcpn.AddApplication(node[flow.src], source, flow.start_s, flow.stop_s)
        sources[flow.id], sinks[flow.id] = source, sink

    pcap: dict[tuple[str, str], str] = {}
    for here, there in plan.endpoint_devices():
        path = out / f"{here}-{there}.pcap"
        helper[(here, there)].EnablePcap(str(path), device[(here, there)], False, True)
        pcap[(here, there)] = str(path)
    monitor_helper = ns.FlowMonitorHelper() if plan.flow_monitor else None
    monitor = monitor_helper.InstallAll() if monitor_helper is not None else None

    run_start, run_cpu = time.perf_counter(), time.process_time()
    ns.Simulator.Stop(ns.Seconds(plan.horizon_s))
    ns.Simulator.Run()
    run_s, run_cpu_s = time.perf_counter() - run_start, time.process_time() - run_cpu

    result: dict[str, Any] = {
        "flows": {fid: {"cwnd": _series(src.recorder.cwnd),
                        "ssthresh": _series(src.recorder.ssthresh),
                        "rtt": _series(src.recorder.rtt),
                        "cong_state": _series(src.recorder.cong_state),
                        "connect_fail": _series(src.recorder.connect_fail),
                        "ecn_reactions": _series(tcpn.EcnReactions(src.tcp_socket)),
                        "timeouts": (_series(tcpn.Timeouts(src.tcp_socket))
                                     if tcpn.IsTcpnSocket(src.tcp_socket) else None),
                        "connected_s": float(src.connected_s),
                        "app_sent_bytes": int(src.sent),
                        "sink_bytes": int(sinks[fid].received),
                        "variant": _variant_state(tcpn, src.congestion_ops)}
                  for fid, src in sources.items()},
        "queues": {qid: _packet_events(r.events) for qid, r in recorders.items()},
        "losses": {qid: {**_packet_events(m.losses), "arrivals": int(m.arrivals),
                         **({"collided": int(m.collided)} if hasattr(m, "collided") else {})}
                   for qid, m in models.items()},
        "wifi_mac": {qid: {"tx_data": int(c.tx_data), "failed": int(c.failed),
                           "final_failed": int(c.final_failed)} for qid, c in macs.items()},
        "wifi_station": {key: wireless.radio_counters(r) for key, r in radios.items()},
        "qdisc_stats": {qid: {"dropped": int(q.GetStats().nTotalDroppedPackets),
                              "marked": int(q.GetStats().nTotalMarkedPackets)}
                        for qid, q in qdiscs.items()},
        "pcap": pcap,
        "flow_monitor": _flow_monitor(ns, monitor_helper, monitor),
        "events": int(ns.Simulator.GetEventCount()),
        "build_s": run_start - build_start,
        "run_s": run_s,
        "run_cpu_s": run_cpu_s,
    }
    ns.Simulator.Destroy()
    return result


def _variant_state(tcpn: Any, congestion: Any) -> dict[str, Any]:
    """The state of tcpn's own congestion controls after the run (empty for ns-3's):
    counters, and one row per decision (``(t, v)`` series)."""
    tcp_l = tcpn.AsTcpL(congestion)
    if tcp_l:
        return {**{name: int(getattr(tcp_l, name)) for name in (
                    "sent", "retx", "link_sent", "link_failed", "reactions", "kept",
                    "reports")},
                "p_congestion": _series(tcp_l.p_congestion), "reacted": _series(tcp_l.reacted)}
    vegas = tcpn.AsSampledVegas(congestion)
    if not vegas:
        return {}
    state: dict[str, Any] = {
        "base_rtt_s": float(vegas.base_rtt_s), "rtt_s": float(vegas.rtt_s),
        "samples": int(vegas.samples_total), "decisions": int(vegas.decisions),
        "diff": _series(vegas.diff), "low": _series(vegas.low), "high": _series(vegas.high)}
    modified = tcpn.AsModifiedVegas(congestion)
    if modified:
        state.update(tf0_s=int(modified.tf0_ns) * 1e-9, tb0_s=int(modified.tb0_ns) * 1e-9)
    adaptive = tcpn.AsAdaptiveVegas(congestion)
    if adaptive:
        state.update(ave_rtt_s=float(adaptive.ave_rtt_s))
    return state


def _flow_monitor(ns: Any, monitor_helper: Any, monitor: Any) -> list[dict[str, Any]]:
    """FlowMonitor's per-direction counters (IP bytes and packets) after the run."""
    if monitor is None:
        return []
    monitor.CheckForLostPackets()
    classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](monitor_helper.GetClassifier())
    rows = []
    for kv in monitor.GetFlowStats():
        five = classifier.FindFlow(kv.first)
        stats = kv.second
        rows.append({"src": str(five.sourceAddress), "dst": str(five.destinationAddress),
                     "sport": int(five.sourcePort), "dport": int(five.destinationPort),
                     "tx_packets": int(stats.txPackets), "rx_packets": int(stats.rxPackets),
                     "tx_bytes": int(stats.txBytes), "rx_bytes": int(stats.rxBytes),
                     "lost_packets": int(stats.lostPackets)})
    return rows


def warm_up() -> None:
    """Run a 0.2 s two-node simulation that uses every part of a build (tcpn's own
    variants, the receiver clock, TCP-L reports and a connection started established
    included), so that the JIT compiles it once here (forked jobs inherit the compiled
    code)."""
    tail = QueuePlan("tcpn::TailQueueDisc", (("Limit", "10"),))
    link = LinkPlan("A", "B", rate_bps=1e7, delay_s=0.001, queue_ab=tail, queue_ba=tail,
                    errors_ab=ErrorPlan(rate=0.01, skip_handshake=(5,)),
                    errors_ba=ErrorPlan(drop_list=(3,)), device_rate_ab_bps=1.001e7)
    options = (("SegmentSize", "1000"),)
    established = (("ForgetHandshakeRtt", "true"), ("EcnSlowStart", "true"))
    vegas = (("Alpha", "2"),)
    variants: tuple[tuple[str, tuple[tuple[str, str], ...], dict[str, Any]], ...] = (
        ("ns3::TcpVegas", vegas, {}),
        ("tcpn::Vegas", vegas, {"socket": "tcpn::Rfc5681Socket"}),
        ("tcpn::ModifiedVegas", vegas, {"receiver_clock_rate": 1.5,
                                        "receiver_clock_offset_s": 1.0}),
        ("tcpn::AdaptiveVegas", vegas, {}),
        ("tcpn::TcpL", (), {"report_interval_s": 0.05, "report_link": "A->B"}),
        ("tcpn::NewReno", (), {"socket": "tcpn::TcpnSocket", "first_write_s": 0.05,
                               "sink_socket": "tcpn::TcpnSocket"}))
    flows = tuple(
        FlowPlan(f"warm{i}", "A", "B", start_s=0.0, stop_s=0.2, port=10000 + i,
                 congestion=congestion, congestion_attributes=attributes,
                 socket_attributes=options + (established if "first_write_s" in extra else ()),
                 sink_attributes=options, **extra)
        for i, (congestion, attributes, extra) in enumerate(variants))
    plan = Ns3Plan("warm-up", (link,), flows, horizon_s=0.2, traced_queues=("A->B",),
                   flow_monitor=True)
    with scratch("ns3-warm") as tmp:
        run_plan(plan, str(tmp))


def prepare_worker(plan: Ns3Plan, *_: Any) -> None:
    """Run in the worker before it forks the job that runs ``plan``: compile what
    :func:`warm_up` did not and the plan needs (the 802.11 modules, once per worker), so
    that forked jobs inherit it. Compiled in each forked job instead, it cost about 10 s
    of every 802.11 run (a forked job's JIT output dies with it)."""
    if any(link.wifi is not None for link in plan.links):
        _warm_up_wifi()


@functools.cache
def _warm_up_wifi() -> None:
    """A 0.1 s simulation over two 802.11 links (MAC ACKs with retries and an error
    model; no ACK), compiling every part of an 802.11 build once."""
    standard, mode = wireless.wifi_mode(11e6)
    tail = QueuePlan("tcpn::TailQueueDisc", (("Limit", "10"),))
    acked = wireless.WifiPlan("B", standard, mode, ack=True, retry_limit=3, extra_bytes=0)
    links = (LinkPlan("A", "B", rate_bps=11e6, delay_s=0.0, queue_ab=tail, queue_ba=tail,
                      errors_ab=ErrorPlan(rate=0.01), wifi=acked),
             LinkPlan("B", "C", rate_bps=11e6, delay_s=0.0, queue_ab=tail, queue_ba=tail,
                      errors_ab=ErrorPlan(rate=0.01, per_byte=True),
                      wifi=wireless.WifiPlan("C", standard, mode, ack=False, retry_limit=0,
                                             extra_bytes=0)))
    options = (("SegmentSize", "1000"),)
    flows = (FlowPlan("warm-wifi", "A", "C", start_s=0.0, stop_s=0.1, port=10000,
                      socket_attributes=options, sink_attributes=options),)
    plan = Ns3Plan("warm-up-wifi", links, flows, horizon_s=0.1, traced_queues=("A->B",))
    with scratch("ns3-warm") as tmp:
        run_plan(plan, str(tmp))
