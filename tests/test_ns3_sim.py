"""The ns3 lens in ns-3 itself: small scenarios of a few simulated seconds.

One worker per test process (``shared_worker``) serves every test; each simulation runs
in a child forked from it.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tcpn.errors import InputError
from tcpn.lenses import make_run, run_once
from tcpn.lenses.net import NetLens
from tcpn.lenses.ns3 import Ns3Lens, scenario_plan
from tcpn.lenses.ns3.builder import run_plan
from tcpn.lenses.ns3.loader import installed, load_ns3
from tcpn.lenses.ns3.plan import ErrorPlan
from tcpn.lenses.ns3.worker import (
    Ns3Crash,
    Ns3Timeout,
    Ns3Worker,
    jobs_cpu_s,
    shared_worker,
)
from tcpn.models import pcap
from tcpn.models.scenario import dumbbell, validate_scenario
from tcpn.models.traces import TraceWriter

pytestmark = [pytest.mark.ns3,
              pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")]

TCP = {"segment_size_bytes": 1448, "snd_buf_bytes": 1 << 20, "rcv_buf_bytes": 1 << 20}


def _simulate(scenario, tmp_path: Path | None = None, **options):
    run = make_run(scenario)
    lens = Ns3Lens(keep_pcap=tmp_path, **options)
    writer = TraceWriter(scenario, run.flows)
    lens.run(run, writer, lambda _t: None)
    return lens.raw, writer.close()


def _one_flow(variant: str, lost: list[int], horizon_s: float, **tcp: object):
    """One flow across the dumbbell without SACK (the variant's default params), the
    packets ``lost`` (numbered as a ``list`` error model counts them) on its first link,
    and ``tcp`` changes."""
    data = dumbbell(pairs=1, variant=variant, horizon_s=horizon_s,
                    tcp={**TCP, "sack": False, **tcp}).model_dump()
    data["flows"][0].pop("params", None)
    data["links"][0]["ab"]["errors"] = {"kind": "list", "packets": lost}
    return validate_scenario(data)


def _both_lenses(scenario):
    """One run of ``scenario``: ns-3's raw result and trace, and the net lens's trace."""
    raw, ns3 = _simulate(scenario)
    return raw, ns3, run_once(scenario, "net", make_run(scenario)).trace


def test_pcap_reader_agrees_with_ns3_counters(tmp_path: Path):
    scenario = dumbbell(pairs=2, horizon_s=4.0, tcp=TCP, queue={"kind": "drop_tail",
                                                                "limit": 30})
    raw, trace = _simulate(scenario, tmp_path, flow_monitor=True)
    delivered = trace.events(event="deliver").groupby("flow", observed=True)["bytes"].sum()
    monitor = {(row["sport"], row["dport"]): row for row in raw["flow_monitor"]}
    for index, flow in enumerate(("f0", "f1")):
        # in-order bytes seen on the receiver's wire = bytes the application read
        assert delivered[flow] == raw["flows"][flow]["sink_bytes"] > 1e6
        sender = pcap.read_pcap(tmp_path / f"S{index}-R1.pcap")
        receiver = pcap.read_pcap(tmp_path / f"D{index}-R2.pcap")
        (conn,) = pcap.connections(sender)
        counters = monitor[(conn.sport, conn.dport)]
        sent, arrived = conn.forward(sender), conn.forward(receiver)
        assert (len(sent), sent["ip_bytes"].sum()) == (counters["tx_packets"],
                                                       counters["tx_bytes"])
        assert (len(arrived), arrived["ip_bytes"].sum()) == (counters["rx_packets"],
                                                             counters["rx_bytes"])
    # the C++ recorder sees every drop the queue disc counts; all are TCP of our flows
    for queue, stats in raw["qdisc_stats"].items():
        assert int((raw["queues"][queue]["event"] == 2).sum()) == stats["dropped"]
    dropped = raw["qdisc_stats"]["R1->R2"]["dropped"]
    flow_drops = trace.events(event="drop")
    assert dropped > 0
    assert len(flow_drops[flow_drops["where"] == "R1->R2"]) == dropped
    queue = trace.queue("R1->R2")
    assert queue["length_packets"].max() == 30  # the limit counts the device's slot too


def _fingerprint(raw) -> tuple:
    return (raw["events"], tuple(f["sink_bytes"] for f in raw["flows"].values()),
            tuple(raw["losses"]["R1->R2"]["time_s"]))


def test_a_seed_gives_one_result_forked_spawned_or_in_process(tmp_path: Path):
    plan = scenario_plan(dumbbell(pairs=2, horizon_s=3.0, tcp=TCP))
    lossy = replace(plan, links=tuple(
        replace(link, errors_ab=ErrorPlan(rate=0.01)) if (link.a, link.b) == ("R1", "R2")
        else link for link in plan.links))
    run_5, run_6 = replace(lossy, rng_run=5), replace(lossy, rng_run=6)
    forked = shared_worker()  # spawned once, one forked child per simulation
    first = _fingerprint(forked.call(run_plan, run_5, str(tmp_path)))
    assert len(first[2]) > 5  # the error model did drop packets
    assert _fingerprint(forked.call(run_plan, run_5, str(tmp_path))) == first
    with Ns3Worker(isolate=False, warm=False) as inline:  # both runs in one process
        assert _fingerprint(inline.call(run_plan, run_5, str(tmp_path))) == first
        assert _fingerprint(inline.call(run_plan, run_5, str(tmp_path))) == first
    assert _fingerprint(forked.call(run_plan, run_6, str(tmp_path)))[2] != first[2]


def _ns3_fatal() -> None:
    load_ns3().TypeId.LookupByName("ns3::NoSuchQueueDisc")


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_crash_or_hang_is_reported_and_the_worker_goes_on():
    worker = shared_worker()
    with pytest.raises(Ns3Crash, match=r"scenario broken: ns-3 crashed \(killed by SIGABRT\)"
                                       r"(.|\n)*ns3::NoSuchQueueDisc not found"):
        worker.call(_ns3_fatal, label="scenario broken")
    with pytest.raises(Ns3Crash, match="killed by SIGKILL"):
        worker.call(_kill_self, label="killed")
    with pytest.raises(Ns3Timeout, match=r"scenario slow: ns-3 ran longer than 0\.5 s"):
        worker.call(time.sleep, 30, label="scenario slow", timeout_s=0.5)
    assert worker.call(divmod, 7, 2) == (3, 1)


def _spin(cpu_s: float) -> None:
    start = time.process_time()
    while time.process_time() - start < cpu_s:
        pass


def test_a_jobs_cpu_time_is_counted_by_the_caller():
    """A job runs in a child of the worker, which the caller's own CPU clock never sees:
    the caller counts it (and so does a run's record in a campaign store), crashed jobs
    included."""
    worker = Ns3Worker(load=False)
    with worker:
        before = jobs_cpu_s()
        worker.call(_spin, 0.3)
        spun = jobs_cpu_s()
        assert 0.3 <= spun - before < 5.0
        with pytest.raises(Ns3Timeout):  # the killed child's time counts too
            worker.call(_spin, 30.0, timeout_s=0.5)
        assert jobs_cpu_s() > spun
    inline = Ns3Worker(load=False, isolate=False)
    with inline:
        before = jobs_cpu_s()
        inline.call(_spin, 0.2)
        assert jobs_cpu_s() - before >= 0.2


def test_threshold_marking_marks_above_k_only():
    queue = {"kind": "threshold_ecn", "limit": 40, "k": 10}
    scenario = dumbbell(pairs=2, horizon_s=3.0, tcp={**TCP, "ecn": True}, queue=queue)
    raw, trace = _simulate(scenario)
    rows = trace.queue("R1->R2")
    marks = rows[rows["event"] == "mark"]
    assert len(marks) > 0
    assert marks["length_packets"].min() > 10  # held more than K when the packet arrived
    assert raw["qdisc_stats"]["R1->R2"]["marked"] == len(marks)
    assert len(trace.events(event="mark")) == len(marks)
    assert rows["length_packets"].max() <= 40


@pytest.mark.parametrize("variant", ["tahoe", "newreno"])
def test_one_loss_tahoe_restarts_from_one_segment(variant):
    _, trace = _simulate(_one_flow(variant, [60], 2.0))  # a data segment
    (drop,) = trace.events(event="drop")["time_s"]
    cwnd = trace.series("cwnd_bytes", "f0")
    after = cwnd[cwnd["time_s"] > drop]["value"].to_numpy()
    assert len(trace.events(event="timeout")) == 0  # fast retransmit repaired it
    assert len(trace.events(event="retransmit")) == 1
    if variant == "tahoe":
        assert after.min() == 1448  # cwnd = 1 segment, then slow start again
    else:
        ssthresh = trace.series("ssthresh_bytes", "f0")["value"].to_numpy()
        assert after.min() >= np.min(ssthresh) >= 2 * 1448


def test_tahoe_slow_starts_from_one_segment_past_the_repair():
    """One segment lost: Tahoe's window is 1 segment from the fast retransmit and grows by
    one per new ACK (ns-2's TcpAgent: cwnd_ = 1, opencwnd on every new ACK), also on the
    ACK that fills the hole: 2 segments there, 3, 4... one round trip apart, in ns-3 as
    in the net lens. ns-3's socket sets cwnd to ssthresh (20 segments) before ExitRecovery
    on that ACK; tcpn::TahoeRecovery puts the slow start's window back, so the window at
    the end of each instant is compared."""
    _, ns3, net = _both_lenses(_one_flow("tahoe", [60], 1.0))
    windows = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        (fast_retransmit,) = trace.events(event="retransmit")["time_s"]
        cwnd = trace.series("cwnd_bytes", "f0")
        cwnd = cwnd[cwnd["time_s"] >= fast_retransmit - 1e-6]
        windows[lens] = cwnd.groupby("time_s")["value"].last().iloc[:6]
    segments = [int(v) // 1448 for v in windows["ns3"]]
    assert segments == [int(v) // 1448 for v in windows["net"]] == [1, 2, 3, 4, 5, 6]
    assert np.abs(windows["ns3"].index.to_numpy() - windows["net"].index.to_numpy()).max() < 1e-3


def _transmissions_from_first_retransmission(trace) -> np.ndarray:
    """Every data segment sent from the first retransmission on: time, sequence number and
    whether it is a retransmission."""
    rows = trace.events()
    rows = rows[rows["event"].isin(["send", "retransmit"])]
    first = rows[rows["event"] == "retransmit"]["time_s"].min()
    rows = rows[rows["time_s"] >= first - 1e-9]
    return np.column_stack([rows["time_s"].to_numpy(float), rows["seq"].to_numpy(float),
                            (rows["event"] == "retransmit").to_numpy(float)])


def test_tahoe_goes_back_n_after_a_fast_retransmit_in_both_lenses():
    """Segments 58, 60, 62 and 68 lost in one window (arrivals 60, 62, 64, 70: the
    handshake's two packets come first). Tahoe (ns-2's TcpAgent::dupack_action: cwnd 1,
    then reset_rtx_timer(0, 0): t_seqno_ = highest_ack_ + 1) resends from the first
    unacknowledged segment in slow start: each ACK sends the next segments after it,
    holes and segments the receiver holds alike, and the duplicate ACKs that those draw
    start no second fast retransmit (bug_fix_: not before an ACK passes the highest
    segment sent). One ssthresh, no timeout, and every segment of the next 1.3 s (about
    500, 10 of them retransmissions, 6 of those held by the receiver) leaves at the same
    instant (within a millisecond) in both lenses. ns-3's own socket repaired one hole
    per partial ACK and resent nothing the receiver held (4 retransmissions)."""
    _, ns3, net = _both_lenses(_one_flow("tahoe", [60, 62, 64, 70], 1.5))
    sent = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        assert len(trace.events(event="timeout")) == 0
        ssthresh = trace.series("ssthresh_bytes", "f0")["value"].to_numpy()[1:]
        assert len(np.unique(ssthresh)) == 1
        sent[lens] = _transmissions_from_first_retransmission(trace)
    assert len(sent["ns3"]) == len(sent["net"]) > 400
    assert (sent["ns3"][:, 1:] == sent["net"][:, 1:]).all()  # the same segments, in order
    assert np.abs(sent["ns3"][:, 0] - sent["net"][:, 0]).max() < 1e-3
    # 58; the ACK of it (una 60, cwnd 2) sends 60 and 61; the ACK of 60 (una 62, cwnd 3)
    # 62, 63, 64; the ACK of 62 passes the held 63-67 (una 68, cwnd 4): 68 to 71
    resent = sent["net"][sent["net"][:, 2] == 1, 1] // 1448
    assert resent.tolist() == [58, 60, 61, 62, 63, 64, 68, 69, 70, 71]


def test_tahoe_fast_retransmit_restarts_the_timer():
    """Segment 58 lost, and its fast retransmission too (arrival 102). ns-2's Tahoe restarts
    the retransmission timer at the fast retransmit (reset_rtx_timer -> set_rtx_timer, no
    backoff), so the timeout comes one RTO (1 s, the minimum) after the retransmission, in
    both lenses; before, both left it running from the last new ACK (3.6 ms sooner)."""
    _, ns3, net = _both_lenses(_one_flow("tahoe", [60, 102], 3.0))
    for trace in (ns3, net):
        fast_retransmit, again = trace.events(event="retransmit")["time_s"].to_numpy()[:2]
        (timeout,) = trace.events(event="timeout")["time_s"].to_numpy()
        assert timeout == pytest.approx(fast_retransmit + 1.0, abs=1e-6)
        assert again == pytest.approx(timeout, abs=1e-6)


@pytest.mark.parametrize("variant", ["reno", "newreno"])
def test_two_losses_in_one_window_reno_recovers_twice_newreno_once(variant):
    """Segments 60 and 62 lost in one window. NewReno (RFC 6582) retransmits the second
    on the partial ACK and halves once; Reno (RFC 5681 3.2 step 6) ends fast recovery on
    that partial ACK, so the second hole waits for three more duplicate ACKs (new data
    sent while the window was inflated) and a second fast retransmit sets ssthresh again.
    The net lens and ns-3 retransmit the same segments within a millisecond and set the
    same ssthresh: at Reno's second fast retransmit the window (ssthresh + 1/ssthresh
    after the partial ACK) is below the flight, so nothing left on the duplicate ACKs and
    ssthresh is half the whole FlightSize (RFC 5681 3.2 step 2; tcpn::Rfc5681Socket took
    two segments off for limited transmit whenever the flight exceeded cwnd)."""
    scenario = _one_flow(variant, [60, 62], 1.0)
    _, ns3, net = _both_lenses(scenario)
    settings = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        assert len(trace.events(event="timeout")) == 0
        ssthresh = trace.series("ssthresh_bytes", "f0")["value"].to_numpy()[1:]
        settings[lens] = list(np.unique(ssthresh))  # the initial value aside
    assert len(settings["net"]) == (2 if variant == "reno" else 1)
    assert settings["ns3"] == settings["net"]
    ns3_retx, net_retx = (t.events(event="retransmit") for t in (ns3, net))
    assert list(ns3_retx["seq"]) == list(net_retx["seq"]) and len(ns3_retx) == 2
    assert np.abs(ns3_retx["time_s"].to_numpy() - net_retx["time_s"].to_numpy()).max() < 2e-3


def _slow_start_echo_scenario():
    data = dumbbell(pairs=1, variant="ecn_newreno", horizon_s=5.0,
                    tcp={**TCP, "sack": False, "ecn": True},
                    queue={"kind": "threshold_ecn", "limit": 100, "k": 4}).model_dump()
    data["flows"][0]["params"] = {"reaction": "slow_start"}
    return validate_scenario(data)


def _cuts(trace, segment_bytes: int) -> np.ndarray:
    """Times at which cwnd fell to one segment from more."""
    cwnd = trace.series("cwnd_bytes", "f0")
    values, times = cwnd["value"].to_numpy(), cwnd["time_s"].to_numpy()
    fell = (values[1:] == segment_bytes) & (values[:-1] > segment_bytes)
    return times[1:][fell]


def test_slow_start_reaction_to_an_echo_cuts_to_one_segment_without_retransmitting():
    """S2's reaction (params.reaction: slow_start): with K = 4 the queue marks in the
    first slow start; the first echo sets cwnd to one segment and ssthresh to half the
    flight (8,688 bytes: 6 of the 12 segments out), nothing is retransmitted and ns-3
    never enters CA_CWR. The net lens cuts at the same instant, then as often and to the
    same ssthresh; the later cuts, after seconds of congestion avoidance, within 50 ms
    (ns-3 truncates each ACK's increase to whole bytes)."""
    scenario = _slow_start_echo_scenario()
    raw, ns3, net = _both_lenses(scenario)
    times, ssthresh = raw["flows"]["f0"]["ecn_reactions"]
    assert len(times) >= 2 and len(ns3.events(event="mark")) > 0
    for trace in (ns3, net):
        assert len(trace.events(event="retransmit")) == 0
        assert len(trace.events(event="drop")) == 0
    cwnd = ns3.series("cwnd_bytes", "f0")
    for t, threshold in zip(times, ssthresh, strict=True):
        at = cwnd[cwnd["time_s"] == t]["value"].to_numpy()
        assert at[-1] == 1448  # one segment, not grown by the echoing ACK
        assert threshold >= 2 * 1448 and threshold % 1448 == 0
    states = raw["flows"]["f0"]["cong_state"][1]
    assert 2 not in states  # TcpSocketState::CA_CWR
    assert ssthresh[0] == 6 * 1448
    ns3_cuts, net_cuts = _cuts(ns3, 1448), _cuts(net, 1448)
    assert len(ns3_cuts) == len(net_cuts) == len(times)
    assert abs(ns3_cuts[0] - net_cuts[0]) < 2e-6
    assert np.abs(ns3_cuts - net_cuts).max() < 0.05
    net_ssthresh = net.series("ssthresh_bytes", "f0")
    for t, threshold in zip(net_cuts, ssthresh, strict=True):
        assert net_ssthresh[net_ssthresh["time_s"] == t]["value"].iloc[-1] == threshold


def _echo_scenario(ecn_cwr: str):
    """One ECN NewReno flow, RFC 3168's reaction, through a queue marking above K = 4."""
    data = dumbbell(pairs=1, variant="ecn_newreno", horizon_s=0.5,
                    tcp={**TCP, "sack": False, "ecn": True, "ecn_cwr": ecn_cwr},
                    queue={"kind": "threshold_ecn", "limit": 100, "k": 4}).model_dump()
    data["flows"][0].pop("params", None)
    return validate_scenario(data)


@pytest.mark.parametrize("ecn_cwr", ["ns2", "ns3"])
def test_the_reaction_to_an_ecn_echo_follows_tcp_ecn_cwr(ecn_cwr):
    """The first echo comes in the first slow start, on the ACK of 10,136 (una 7,240;
    SND.MAX 26,064: 13 segments out before the ACK, 11 after it). ``ns2`` (ns-2's
    TcpAgent::ecn, tcpn::TcpnSocket's EcnNs2Reaction): ssthresh = cwnd = 6 segments (half
    of 13, whole segments), never CA_CWR, and the next ACK grows the window by MSS * MSS /
    ssthresh (8,688 + 241.3), as the net lens does at the same instants. ``ns3`` (ns-3's
    EnterCwr): ssthresh = 7,964 (half of 11 segments, in bytes), CA_CWR, and no growth
    until an ACK passes SND.MAX of the reaction. The ns3 lens ran ns-3's rule for both
    before."""
    raw, ns3, net = _both_lenses(_echo_scenario(ecn_cwr))
    states = raw["flows"]["f0"]["cong_state"][1]
    for lens, trace in (("ns3", ns3), ("net", net)):
        assert len(trace.events(event="retransmit")) == 0, lens
        ssthresh = trace.series("ssthresh_bytes", "f0")
        t, threshold = ssthresh[["time_s", "value"]].to_numpy()[1]  # the initial aside
        acks = trace.events(event="ack")
        una = acks[acks["time_s"] < t - 2e-6]["seq"].iloc[-1]  # ns-3's pcap: 1 us
        (ack,) = acks[np.abs(acks["time_s"] - t) < 2e-6]["seq"]
        sends = trace.events(event="send")
        high = sends[sends["time_s"] < t - 2e-6]["seq"].max() + 1448
        assert (una, ack, high) == (7240, 10136, 26064), lens
        cwnd = trace.series("cwnd_bytes", "f0")
        later = cwnd[cwnd["time_s"] > t + 2e-6]
        grown = later[later["value"] > threshold + 1]["time_s"].iloc[0]
        next_ack = acks[acks["time_s"] > t + 2e-6]["time_s"].iloc[0]
        if ecn_cwr == "ns2":
            assert threshold == (high - una) // 2896 * 1448 == 8688, lens
            assert cwnd[cwnd["time_s"] <= t + 2e-6]["value"].iloc[-1] == threshold, lens
            assert grown == pytest.approx(next_ack, abs=1e-5), lens
            step = later["value"].iloc[0]
            assert step == pytest.approx(threshold + 1448 * 1448 / threshold, abs=1.0), lens
        elif lens == "ns3":
            assert threshold == (high - ack) // 2 == 7964
            passed = acks[acks["seq"] > high]["time_s"].iloc[0]
            assert grown >= passed - 1e-5 > next_ack
    if ecn_cwr == "ns2":
        assert 2 not in states  # TcpSocketState::CA_CWR
        assert list(raw["flows"]["f0"]["ecn_reactions"][1][:1]) == [8688]
    else:
        assert 2 in states
        assert len(raw["flows"]["f0"]["ecn_reactions"][0]) == 0


def _established_scenario(lost: list[int]):
    data = dumbbell(pairs=1, variant="newreno", horizon_s=1.5,
                    tcp={**TCP, "sack": False, "handshake": False, "min_rto_s": 0.2,
                         "initial_cwnd_segments": 1}).model_dump()
    data["flows"][0].pop("params", None)
    for link in data["links"]:
        link["l2_header_bytes"] = 0
    if lost:
        data["links"][1]["ab"]["errors"] = {"kind": "list", "packets": lost}
    return validate_scenario(data)


def test_a_connection_started_established_on_links_without_l2_header():
    """tcp.handshake: false and l2_header_bytes: 0: ns-3 opens the connection before the
    start (its clock runs ahead, the trace is shifted back) on devices whose DataRate
    makes a data packet's (and on the ACKs' side an ACK's) serialisation the scenario's.
    The first data segment leaves at the start, the receiver delays its first ACK (0.2 s,
    no second segment), and every arrival and ACK is where the net lens puts it (pcap's
    microsecond). The loss of the first segment (the handshake is not counted) is repaired
    by the timer after tcp.initial_rto_s = 1 s, not after the 0.2 s RTO the SYN-ACK's
    sample would give."""
    scenario = _established_scenario([])
    raw, ns3, net = _both_lenses(scenario)
    start = make_run(scenario).flows[0].start_s
    assert raw["time_offset_s"] >= 1.0
    assert ns3.queue("R1->R2")["time_s"].min() >= start  # the handshake is not in the trace
    for event in ("recv", "ack"):  # (the net lens stamps a burst's sends at once)
        ns3_times, net_times = (t.events(event=event)["time_s"].to_numpy()[:40]
                                for t in (ns3, net))
        assert len(ns3_times) == len(net_times) == 40
        assert np.abs(ns3_times - net_times).max() < 2e-6
    assert ns3.events(event="send")["time_s"].iloc[0] == pytest.approx(start, abs=2e-6)
    first_ack = ns3.events(event="ack")["time_s"].iloc[0] - start
    assert 0.2 < first_ack < 0.25
    scenario = _established_scenario([0])
    _, ns3, net = _both_lenses(scenario)
    for trace in (ns3, net):
        (retx,) = trace.events(event="retransmit")["time_s"]
        assert retx == pytest.approx(start + 1.0, abs=2e-6)


def test_a_backed_off_rto_holds_until_a_valid_sample():
    """Segment 0 is lost twice (timeouts at 1 s and 1 + 2 s); the ACK of its second
    retransmission gives no RTT sample (Karn; no timestamps), so the timer it restarts
    keeps the RTO of 4 s (RFC 6298; ns-2; the net model), and the next arrivals are lost
    (the window is two segments after that ACK in both lenses), so both lenses time out
    4 s after it.
    ns-3's own rule (tcp.ns3_rto_reset) takes the RTO from the estimator again at that
    ACK: 1 s."""
    options = {"handshake": False, "timestamps": False, "initial_cwnd_segments": 1}
    scenario = _one_flow("newreno", [0, 1, 3, 4], 9.0, **options)
    _, ns3, net = _both_lenses(scenario)
    start = make_run(scenario).flows[0].start_s
    timeouts = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        timeouts[lens] = trace.events(event="timeout")["time_s"].to_numpy() - start
        (ack,) = trace.events(event="ack")["time_s"].to_numpy()[:1] - start
        assert timeouts[lens][:2] == pytest.approx([1.0, 3.0], abs=2e-6)
        assert timeouts[lens][2] == pytest.approx(ack + 4.0, abs=2e-6)
    assert np.abs(timeouts["ns3"][:3] - timeouts["net"][:3]).max() < 2e-6
    _, reset = _simulate(_one_flow("newreno", [0, 1, 3, 4], 9.0, **options,
                                   ns3_rto_reset=True))
    third = reset.events(event="timeout")["time_s"].to_numpy()[2] - start
    assert third == pytest.approx(ack + 1.0, abs=2e-3)


def test_no_rtt_sample_from_a_segment_sent_before_a_timeout():
    """The ACK of segment 0 is lost; the timer expires at 1 s (RTO doubled to 2 s) and
    segment 0 goes again. The receiver already holds it, so its ACK echoes the first
    copy's send time (RFC 7323's TS.Recent): a "round trip" of more than 1 s. Karn's
    algorithm takes no sample from a segment sent before a timeout (ns-2's
    reset_rtx_timer clears rtt_active_, ns-3 clears its RTT history): the RTO stays 2 s,
    and the loss of segment 1 (data arrival 2; segment 2's one duplicate ACK starts no
    fast retransmit) expires the timer 2 s after that ACK in both lenses (a sample from
    the first copy would have made it about 3 s)."""
    options = {"handshake": False, "timestamps": False, "initial_cwnd_segments": 1,
               "limited_transmit": False, "delack_count": 1}
    data = _one_flow("newreno", [2], 6.0, **options).model_dump()
    data["links"][0]["ba"]["errors"] = {"kind": "list", "packets": [0]}
    scenario = validate_scenario(data)
    _, ns3, net = _both_lenses(scenario)
    start = make_run(scenario).flows[0].start_s
    for trace in (ns3, net):
        timeouts = trace.events(event="timeout")["time_s"].to_numpy() - start
        (ack,) = trace.events(event="ack")["time_s"].to_numpy()[:1] - start
        assert timeouts[:2] == pytest.approx([1.0, ack + 2.0], abs=2e-6)


def test_every_rtt_sample_is_recorded_even_when_it_repeats_the_last():
    """A flow held to 4 segments by the receiver's window on a 10 Mbit/s path never
    queues: its round trips are all alike. ns-3's "LastRTT" trace calls back only when a
    sample differs from the one before (behind a standing queue it kept one sample in
    five, and their mean was 12-15 % low); the lens records the socket's every sample, as
    the net lens does: the same count, the same values."""
    options = {"handshake": False, "timestamps": False, "delack_count": 1,
               "rcv_buf_bytes": 4 * 1448}
    _, ns3, net = _both_lenses(_one_flow("newreno", [], 2.0, **options))
    # the lens runs the handshake before the start; its sample is not the scenario's
    samples = {name: trace.series("rtt_s")["value"].to_numpy() for name, trace in
               (("ns3", ns3), ("net", net))}
    acks = len(net.events(event="ack"))
    assert acks > 150 and len(samples["ns3"]) >= acks - 4  # one per ACK of new data
    assert len(samples["ns3"]) == len(samples["net"])
    assert samples["ns3"] == pytest.approx(samples["net"], rel=1e-6)


def test_after_a_resent_syn_data_starts_with_an_rto_of_3_s_in_both_lenses():
    """The SYN is lost (packet 0 of the first link), sent again at 3 s; the first data
    segment (packet 3, after the SYN again and the handshake's ACK) is lost too. The
    SYN-ACK answers a resent SYN, so it gives no RTT sample (Karn's rule, RFC 6298 3: ns-3
    timed the first SYN, a 3 s "round trip", and waited about 9 s), and data starts with
    the 3 s of RFC 6298 (5.7) (the net lens kept its initial 1 s): both lenses time the
    segment out 3 s after sending it."""
    options = {"timestamps": False, "initial_cwnd_segments": 1, "delack_count": 1,
               "min_rto_s": 0.2, "initial_rto_s": 1.0}
    _, ns3, net = _both_lenses(_one_flow("newreno", [0, 3], 12.0, **options))
    for trace in (ns3, net):
        (first_send, *_) = trace.events(event="send")["time_s"].to_numpy()
        timeouts = trace.events(event="timeout")["time_s"].to_numpy()
        assert 3.0 < first_send < 3.2
        assert timeouts[:1] == pytest.approx([first_send + 3.0], abs=2e-3)


def test_a_connection_is_never_given_up_unless_data_retries_says_so():
    """The first segment's first 7 transmissions are lost (cwnd 1, RTO from 0.05 s doubled
    at each expiry: the 8th copy leaves at 6.35 s). ns-2, the studies' simulator, never
    gives a connection up, and neither does the net model: by default the ns3 lens does
    not either, and both lenses deliver the segment at the same instant. With
    ``data_retries: 6`` (ns-3's own default) ns-3 closes the connection at the 7th expiry
    and delivers nothing; the net lens refuses that rule, naming the field."""
    options = {"handshake": False, "timestamps": False, "initial_cwnd_segments": 1,
               "min_rto_s": 0.05, "initial_rto_s": 0.05, "delack_count": 1}
    scenario = _one_flow("newreno", list(range(7)), 8.0, **options)
    _, ns3, net = _both_lenses(scenario)
    start = make_run(scenario).flows[0].start_s
    delivered = []
    for trace in (ns3, net):
        assert len(trace.events(event="timeout")) == 7
        delivered.append(trace.events(event="deliver")["time_s"].to_numpy()[0] - start)
    assert delivered[0] == pytest.approx(delivered[1], abs=1e-3)
    assert 6.35 < delivered[0] < 6.5
    data = scenario.model_dump()
    data["tcp"]["data_retries"] = 6
    giving_up = validate_scenario(data)
    _, ns3 = _simulate(giving_up)
    assert ns3.events(event="deliver").empty
    with pytest.raises(InputError, match=r"tcp\.data_retries"):
        NetLens().check(giving_up)


def test_reno_after_a_timeout_waits_for_the_recovery_point_before_a_fast_retransmit():
    """Segments 58-63 and 70 lost in one window of a Reno flow: the fast retransmission of
    58 ends recovery on the partial ACK, 59 needs a second one, and the rest waits for the
    timer (1 s). After the timeout the go-back-N retransmissions of 64-69, which the
    receiver holds, draw duplicate ACKs of 70; they must not start a fast retransmit
    before the ACKs pass the highest segment sent before the timeout (RFC 6582 4; ns-2's
    Reno agent with its default bug_fix_, ns-3's CA_LOSS). Both lenses then retransmit
    the same segments (58, 59; 60-66 and 70-74 by go-back-N) within a few milliseconds
    and set ssthresh no more after the timeout."""
    scenario = _one_flow("reno", [60, 61, 62, 63, 64, 65, 72], 1.55)
    _, ns3, net = _both_lenses(scenario)
    retransmitted = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        (timeout,) = trace.events(event="timeout")["time_s"]
        ssthresh = trace.series("ssthresh_bytes", "f0")
        assert not (ssthresh["time_s"] > timeout + 1e-3).any(), lens  # no fast retransmit
        retransmitted[lens] = trace.events(event="retransmit")
    segments = [int(s) // 1448 for s in retransmitted["net"]["seq"]]
    assert segments == [58, 59, *range(60, 67), *range(70, 75)]
    assert list(retransmitted["ns3"]["seq"]) == list(retransmitted["net"]["seq"])
    times = (r["time_s"].to_numpy() for r in retransmitted.values())
    assert np.abs(np.subtract(*times)).max() < 5e-3


def test_at_a_full_queue_both_lenses_drop_the_same_segments_when_arrivals_tie_departures():
    """Study S4's bottleneck (2 Mbit/s; 1040-byte packets leave every 4.16 ms) fed by a
    10 Mbit/s, 1 ms access link (they arrive 0.832 ms apart, a fifth of it): with a
    5-packet queue, slow start's bursts arrive at exactly the instant a transmission
    ends. ns-3 (and ns-2) run the end of the transmission first, scheduled when it
    started, so the arrival finds room; the net lens did the arrival first and dropped
    segment 85 at 0.7931 s where ns-3 drops 86 at 0.7939 s. Up to there the drops are the
    same in both lenses (and on to 1.77 s, where ns-3's window in whole bytes, which adds
    floor(MSS^2 / cwnd) per ACK where ns-2 and the net lens add 1/cwnd segment, has
    crossed an integer one ACK later and parts them)."""
    link = {"rate_bps": 10e6, "delay_s": 0.001}
    data = {"name": "tie", "links": [
        {"a": "R1", "b": "R2", "rate_bps": 2e6, "delay_s": 0.02,
         "queue": {"kind": "drop_tail", "limit": 5}},
        {"a": "S1", "b": "R1", **link}, {"a": "R2", "b": "D1", **link}],
        "tcp": {"segment_size_bytes": 1000, "timestamps": False, "sack": False,
                "delack_count": 1, "initial_cwnd_segments": 1, "min_rto_s": 0.2},
        "flows": [{"id": "f1", "src": "S1", "dst": "D1", "variant": "newreno"}],
        "horizon_s": 0.7945}
    scenario = validate_scenario(data)
    _, ns3, net = _both_lenses(scenario)
    drops = [t.events(event="drop") for t in (ns3, net)]
    assert [int(s) // 1000 for s in drops[1]["seq"]] == [26, 28, 30, *range(40, 53, 2), 86]
    assert list(drops[0]["seq"]) == list(drops[1]["seq"])
    assert np.abs(drops[0]["time_s"].to_numpy() - drops[1]["time_s"].to_numpy()).max() < 1e-4


def test_no_limited_transmit_inside_fast_recovery():
    """Segments 60 and 62 lost in one window, NewReno with limited transmit. The partial
    ACK of 60's retransmission starts a new count of duplicate ACKs, but limited transmit
    (RFC 3042) belongs to the duplicate ACKs before a fast retransmit: inside fast recovery
    each duplicate ACK inflates the window by one segment (RFC 6582; ns-2's NewReno agent
    counts them in dupwnd_, ns-3 in its recovery), so each of the D duplicate ACKs between
    the partial and the full ACK releases one new segment (the net lens sent two on each
    of the first two, then none on the next two). ns-3 records a send when its device
    starts it, one serialization after the ACK that released it. (D differs by one
    between the lenses: at the partial ACK the net lens also sends a new segment, as RFC
    6582 3.2 step 5 allows, ns-3 does not.)"""
    scenario = _one_flow("newreno", [60, 62], 1.0, limited_transmit=True)
    _, ns3, net = _both_lenses(scenario)
    released = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        retx = trace.events(event="retransmit")
        assert len(retx) == 2  # the fast retransmit, then the partial ACK's
        partial = retx["time_s"].iloc[1]
        acks = trace.events(event="ack")
        acks = acks[acks["time_s"] > partial + 1e-9]
        full = acks[acks["bytes"] > 0]["time_s"].iloc[0]
        dups = acks[(acks["time_s"] < full) & (acks["bytes"] == 0)]["time_s"].to_numpy()
        assert len(dups) > 3
        sends = trace.events(event="send")["time_s"]
        if lens == "net":  # sends at the instant of the ACK that released them
            window = sends[(sends >= dups[0]) & (sends < full)]
            assert window.value_counts().max() == 1
        else:
            window = sends[(sends > dups[0]) & (sends <= full)]
        released[lens] = (len(window), len(dups))
    assert released["net"][0] == released["net"][1]
    assert released["ns3"][0] == released["ns3"][1]


def test_the_ack_that_ends_a_timeout_recovery_grows_the_window():
    """One segment in flight (initial window 1), lost once: the timer retransmits it at
    1 s and its ACK, which reaches the recovery point the timeout set, is an ACK of new
    data in slow start, so cwnd grows from 1 to 2 segments (RFC 5681 3.1; ns-2's
    opencwnd on every new ACK; the net lens). ns-3.44 credits the ACK that ends CA_LOSS
    only with the segments above the recovery point, none here, and kept cwnd at one
    segment; tcpn::Rfc5681Socket credits it whole."""
    scenario = _one_flow("newreno", [0], 2.0, handshake=False, timestamps=False,
                         initial_cwnd_segments=1)
    _, ns3, net = _both_lenses(scenario)
    for trace in (ns3, net):
        (ack, *_) = trace.events(event="ack")["time_s"].to_numpy()
        cwnd = trace.series("cwnd_bytes", "f0")
        after = cwnd[cwnd["time_s"] <= ack + 1e-5]["value"].to_numpy()  # pcap: 1 us
        assert after[-1] == 2 * 1448


def test_fast_retransmit_halves_the_flight_without_limited_transmit():
    """Segment 60 lost, NewReno with limited transmit. At the third duplicate ACK ssthresh
    is half the FlightSize, the data outstanding (SND.MAX - SND.UNA) less the two segments
    limited transmit sent (RFC 5681 3.2 step 2, eq. 4; ns-2 halves its window, which
    limited transmit does not open). ns-3.44 halved its pipe estimate plus one segment,
    which also leaves out the segment of the third duplicate ACK: half a segment less;
    tcpn::Rfc5681Socket takes FlightSize. Both lenses set the same ssthresh."""
    scenario = _one_flow("newreno", [60], 1.0, limited_transmit=True)
    _, ns3, net = _both_lenses(scenario)
    halves = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        (retx,) = trace.events(event="retransmit").itertuples()
        sends = trace.events(event="send")
        high = sends[sends["time_s"] <= retx.time_s + 1e-5]["seq"].max() + 1448
        ssthresh = trace.series("ssthresh_bytes", "f0")["value"].to_numpy()[-1]
        halves[lens] = ssthresh
        assert ssthresh == (high - retx.seq - 2 * 1448) // 2896 * 1448
    assert halves["ns3"] == halves["net"]


def test_after_a_timeout_the_first_duplicate_acks_release_new_segments():
    """Limited transmit after a timeout (RFC 5681 3.2 step 1, RFC 3042; ns-2's send_one
    under singledup_, called from Reno's recv in any state). Six segments 0-5 fill a
    6-segment receive window; 0, 1 and 3 are lost, no fast retransmit (threshold 10), so
    the timer fires at 1 s: cwnd 1, ssthresh 3. Go-back-N: 0 -> ACK 1 (cwnd 2): 1, 2 ->
    ACK 3 (cwnd 3 + 1/3): 3, 4, 5, which reaches the highest segment sent; the receiver
    held 2, so its copy draws a duplicate ACK of 3 one serialization later, still below
    the recovery point (6): it lets segment 6, new data, go beyond cwnd in both lenses
    (tcpn::Rfc5681Socket). ns-3's own socket ignores duplicate ACKs in CA_LOSS and sends
    6 only on the ACK of 6, one round trip later (study S5 (a) with Reno settled in
    another loss cycle for that: 500 kbit/s against the net lens's 462)."""
    tcp = {"rcv_buf_bytes": 6 * 1448, "delack_count": 1, "dupack_threshold": 10}
    scenario = _one_flow("newreno", [2, 3, 5], 1.2, **tcp)  # packets 0, 1: the handshake
    _, ns3, net = _both_lenses(scenario)
    _, own = _simulate(_one_flow("newreno", [2, 3, 5], 1.2, ns3_reno_sack=True, **tcp))
    released = {}
    for lens, trace in (("ns3", ns3), ("net", net), ("ns-3's own", own)):
        (timeout,) = trace.events(event="timeout")["time_s"]
        assert timeout == pytest.approx(1.044, abs=1e-3), lens
        acks = trace.events(event="ack")
        acks = acks[acks["time_s"] > timeout]
        dup = acks[(acks["seq"] == 3 * 1448) & (acks["bytes"] == 0)]["time_s"].iloc[0]
        full = acks[acks["seq"] >= 6 * 1448]["time_s"].iloc[0]
        (six,) = trace.events(event="send").query("seq == 6 * 1448")["time_s"]
        released[lens] = six - dup if six < full else None
    assert 0 <= released["net"] < 1e-6  # the net lens sends at the ACK's instant
    assert 0 <= released["ns3"] < 1e-3  # ns-3's pcap: when the device starts it
    assert released["ns-3's own"] is None


def test_congestion_avoidance_keeps_the_fraction_of_a_byte():
    """No loss, ssthresh 2 segments: from the first ACK on, each ACK of new data adds
    MSS * MSS / cwnd to the window, whose fraction ns-2 (a double ``cwnd_``) and the net
    model keep. ns-3.44's TcpNewReno adds ``static_cast<uint32_t>`` of it, up to a byte
    less at every ACK; tcpn::NewReno holds the exact window, so ns-3's window is the net
    model's rounded down to a byte at every step, and both follow the iteration by hand."""
    scenario = _one_flow("newreno", [], 1.5, initial_ssthresh_segments=2,
                         initial_cwnd_segments=2)
    _, ns3, net = _both_lenses(scenario)
    windows = {lens: trace.series("cwnd_bytes", "f0")["value"].to_numpy()
               for lens, trace in (("ns3", ns3), ("net", net))}
    steps = min(len(w) for w in windows.values())
    assert steps > 50
    exact = [2.0 * 1448]
    for _ in range(steps - 1):
        exact.append(exact[-1] + 1448 * 1448 / exact[-1])
    np.testing.assert_array_equal(windows["ns3"][:steps], np.floor(exact))
    np.testing.assert_allclose(windows["net"][:steps], exact, rtol=1e-9)


@pytest.mark.parametrize("variant", ["reno", "newreno"])
def test_the_ack_that_ends_fast_recovery_grows_the_window(variant):
    """Segment 60 lost: the ACK of its retransmission ends fast recovery; the window
    deflates to ssthresh (RFC 5681 3.2 step 6, RFC 6582) and that ACK of new data then
    grows it by MSS * MSS / ssthresh, as ns-2's agents do (cwnd_ = ssthresh_, then
    opencwnd() in recv_newack_helper) and ns-3 (ExitRecovery, then IncreaseWindow); the
    net model kept ssthresh. Both lenses hold the same window after that ACK."""
    scenario = _one_flow(variant, [60], 1.0)
    _, ns3, net = _both_lenses(scenario)
    after = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        (retx,) = trace.events(event="retransmit")["time_s"]
        acks = trace.events(event="ack")
        exit_ack = acks[(acks["time_s"] > retx) & (acks["bytes"] > 0)]["time_s"].iloc[0]
        ssthresh = trace.series("ssthresh_bytes", "f0")["value"].to_numpy()[-1]
        cwnd = trace.series("cwnd_bytes", "f0")
        after[lens] = cwnd[cwnd["time_s"] <= exit_ack + 1e-5]["value"].to_numpy()[-1]
        assert after[lens] == pytest.approx(ssthresh + 1448 * 1448 / ssthresh, abs=1.0)
    assert after["ns3"] == np.floor(after["net"])


def test_adaptive_vegas_alone_holds_the_same_window_in_both_lenses():
    """Study S4's adaptive Vegas alone on its dumbbell (2 Mbit/s, 20 ms, 50 packets), w =
    0.5. Once the queue stands, every RTT sample is equal and aveRTT reaches it, so the
    law (+1 when the RTT is below its mean, -1 above) sees Diff == N and holds the
    window. On floating-point seconds the mean reached the sample only to its last bit
    and that bit decided each round (the net lens swung 44-48 segments where ns-3 held
    46): on whole nanoseconds both lenses take the same decisions, round for round."""
    from tcpn.reports.studies.s4 import scenario_mapping

    data = scenario_mapping("adaptive_vegas", "reno", horizon_s=14.0)
    data["flows"] = data["flows"][:1]
    data["flows"][0]["params"]["weight"] = 0.5
    _, ns3, net = _both_lenses(validate_scenario(data))
    windows = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        cwnd = trace.series("cwnd_bytes", "f1")
        segments = (cwnd["value"] / 1000).round()
        changed = segments != segments.shift()  # the net lens records a rewrite too
        windows[lens] = list(zip(cwnd["time_s"][changed].round(4), segments[changed],
                                 strict=True))
    assert windows["ns3"] == windows["net"]
    assert windows["net"][-1][0] < 5.0  # then the window holds to the end (14 s)
