"""tcpn's own ns-3 variants (``cpp/variants.h``): Modified Vegas, adaptive Vegas, TCP-L.

Small dumbbells of a few simulated seconds; every expectation comes from the algorithm
(docs/validation.md, study S1/S3/S4 in the design notes), not from a previous run.
"""

from __future__ import annotations

import numpy as np
import pytest

from tcpn.lenses import make_run, run_once
from tcpn.lenses.ns3 import Ns3Lens
from tcpn.lenses.ns3.loader import installed
from tcpn.models.scenario import dumbbell, validate_scenario
from tcpn.models.traces import TraceWriter

pytestmark = [pytest.mark.ns3,
              pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")]

MSS = 1000
TCP = {"segment_size_bytes": MSS, "snd_buf_bytes": 1 << 20, "rcv_buf_bytes": 1 << 20}


def _simulate(data):
    scenario = validate_scenario(data)
    run = make_run(scenario)
    lens = Ns3Lens()
    writer = TraceWriter(scenario, run.flows)
    lens.run(run, writer, lambda _t: None)
    return lens.raw, writer.close()


def _one_flow(variant, horizon_s, tcp=None, **params):
    data = dumbbell(pairs=1, variant=variant, horizon_s=horizon_s,
                    tcp={**TCP, **(tcp or {})}).model_dump()
    data["flows"][0]["params"] = {**params, "variant": variant} if params else None
    if variant in ("newreno", "sack"):
        data["flows"][0].pop("params")
    return data


def test_modified_vegas_is_blind_to_a_constant_receiver_clock_offset():
    runs = {}
    for offset_s in (0.0, 37.0):  # whole milliseconds: TSval moves by exactly 37000 ticks
        data = _one_flow("modified_vegas", 3.0, alpha=1, beta=3, recovery="newreno")
        data["flows"][0]["receiver_clock_offset_s"] = offset_s
        data["links"][0]["ab"]["errors"] = {"unit": "packet", "rate": 0.005}
        runs[offset_s] = _simulate(data)
    (raw0, trace0), (raw37, trace37) = runs[0.0], runs[37.0]
    state0, state37 = raw0["flows"]["f0"]["variant"], raw37["flows"]["f0"]["variant"]
    # the offset reaches the wire: tr - ts grows by it, ta - tr shrinks by it...
    assert state37["tf0_s"] - state0["tf0_s"] == pytest.approx(37.0, abs=1e-9)
    assert state37["tb0_s"] - state0["tb0_s"] == pytest.approx(-37.0, abs=1e-9)
    # ... and cancels in BaseRTT = Tf0 + Tb0 and RTT = tr - ts + Tb0: the same run
    assert state0["decisions"] > 20
    assert np.array_equal(state0["diff"][1], state37["diff"][1])
    cwnd0, cwnd37 = (t.series("cwnd_bytes", "f0")["value"].to_numpy() for t in (trace0, trace37))
    assert np.array_equal(cwnd0, cwnd37)
    assert raw0["flows"]["f0"]["sink_bytes"] == raw37["flows"]["f0"]["sink_bytes"]
    # BaseRTT is the unloaded round trip, within the millisecond tick of the receiver's TSval
    assert state0["base_rtt_s"] == pytest.approx(_unloaded_rtt_s(), abs=1e-3)


def _unloaded_rtt_s() -> float:
    """44 ms of propagation, a 1054-byte frame (1000 + 40 + 12 bytes of timestamps + 2 of
    PPP) over 10 Mbit/s and two 100 Mbit/s hops, a 54-byte ACK frame back."""
    return 0.044 + (1054 + 54) * 8 * (1 / 10e6 + 2 / 100e6)


def _time_average(times: np.ndarray, values: np.ndarray) -> float:
    return float(np.sum(values[:-1] * np.diff(times)) / (times[-1] - times[0]))


def test_adaptive_vegas_target_follows_the_queueing_delay():
    data = dumbbell(pairs=2, variant="adaptive_vegas", horizon_s=6.0, tcp=TCP).model_dump()
    data["flows"][0]["params"].update(alpha=1, beta=3, weight=0.125, recovery="newreno")
    data["flows"][1].update(variant="newreno", start_s=3.0)  # fills the 100-packet buffer
    data["flows"][1].pop("params")
    raw, trace = _simulate(data)
    state = raw["flows"]["f0"]["variant"]
    # the sender times its own segments: BaseRTT is the unloaded round trip, exactly
    assert state["base_rtt_s"] == pytest.approx(_unloaded_rtt_s(), abs=1e-6)
    times, target = state["low"]
    cwnd = trace.series("cwnd_bytes", "f0")
    at = np.searchsorted(cwnd["time_s"].to_numpy(), times, side="right") - 1
    ratio = target / (cwnd["value"].to_numpy()[at] / MSS)  # N / W = 1 - BaseRTT / aveRTT
    queue = trace.queue("R1->R2")
    expected = {}
    for start, end in ((0.5, 3.0), (4.0, 6.0)):
        decided = (times >= start) & (times < end)
        rows = queue[(queue["time_s"] >= start) & (queue["time_s"] < end)]
        # a sample is BaseRTT plus the bottleneck queue the segment met (1054-byte frames
        # at 10 Mbit/s), and aveRTT their average: N / W = 1 - BaseRTT / (BaseRTT + delay)
        delay_s = _time_average(rows["time_s"].to_numpy(),
                                rows["length_packets"].to_numpy()) * 1054 * 8 / 10e6
        expected[start] = 1.0 - state["base_rtt_s"] / (state["base_rtt_s"] + delay_s)
        assert decided.sum() >= 10
        assert ratio[decided].mean() == pytest.approx(expected[start], abs=0.02)
    # alone it queues a few segments; behind NewReno's queue the target is most of W
    assert expected[0.5] < 0.1 < 0.5 < expected[4.0]


def test_tcp_l_without_link_losses_is_newreno():
    runs = {}
    for variant in ("tcp_l", "newreno"):
        data = _one_flow(variant, 4.0, tcp={"sack": False},
                         **({"report_interval_s": 0.1} if variant == "tcp_l" else {}))
        data["links"][0]["queue"] = {"kind": "drop_tail", "limit": 20}  # congestion drops
        runs[variant] = _simulate(data)
    (raw_l, trace_l), (raw_n, trace_n) = runs["tcp_l"], runs["newreno"]
    state = raw_l["flows"]["f0"]["variant"]
    # the last hop has no error model: every report says 0 failed of 0 frames, so
    # Loss_link = 0, P_congestion = 1 > U[0, 1) at every loss: always NewReno's reaction
    assert state["reports"] > 0 and state["link_sent"] == state["link_failed"] == 0
    assert len(trace_l.events(event="drop")) > 0
    assert state["kept"] == 0 and state["reactions"] > 0
    assert np.all(state["p_congestion"][1] == 1.0)
    for var in ("cwnd_bytes", "ssthresh_bytes"):
        assert np.array_equal(trace_l.series(var, "f0")["value"].to_numpy(),
                              trace_n.series(var, "f0")["value"].to_numpy())
    assert raw_l["flows"]["f0"]["sink_bytes"] == raw_n["flows"]["f0"]["sink_bytes"]


def test_tcp_l_keeps_its_window_when_the_losses_are_link_losses():
    runs = {}
    for variant in ("tcp_l", "newreno"):
        # ns-3's own rule after a timeout (keep the scoreboard): a go-back-N over what the
        # receiver holds would resend segments no link lost
        data = _one_flow(variant, 6.0, tcp={"initial_ssthresh_segments": 20,
                                            "sack_after_timeout": "keep"},
                         **({"report_interval_s": 0.1} if variant == "tcp_l" else {}))
        data["links"][0]["queue"] = {"kind": "drop_tail", "limit": 1000}  # no congestion
        data["links"][2]["ab"]["errors"] = {"unit": "packet", "rate": 0.01}  # R2 -> D0
        runs[variant] = _simulate(data)
    (raw_l, trace_l), (raw_n, _) = runs["tcp_l"], runs["newreno"]
    state = raw_l["flows"]["f0"]["variant"]
    link_losses = len(raw_l["losses"]["R2->D0"]["time_s"])
    assert len(trace_l.events(event="drop")) == link_losses  # every loss is a link loss
    assert state["retx"] == link_losses > 5  # each retransmission repairs one of them
    assert state["link_failed"] <= link_losses  # reports lag behind
    # Loss_tcp ~ Loss_link, so P_congestion is small and most losses keep the window;
    # reactions are Bernoulli(P) draws: their count is sum(P) within binomial noise
    p, reacted = state["p_congestion"][1], state["reacted"][1]
    assert state["kept"] > state["reactions"]
    assert abs(reacted.sum() - p.sum()) <= 4 * np.sqrt(np.sum(p * (1 - p))) + 1
    assert raw_l["flows"]["f0"]["sink_bytes"] > 1.3 * raw_n["flows"]["f0"]["sink_bytes"]


def _after(trace, flow: str, start_s: float) -> np.ndarray:
    """``flow``'s data segments sent from ``start_s`` on (within pcap's microsecond): time,
    sequence number, resent."""
    rows = trace.events()
    rows = rows[(rows["flow"] == flow) & rows["event"].isin(["send", "retransmit"])
                & (rows["time_s"] >= start_s - 1e-6)]
    return np.column_stack([rows["time_s"].to_numpy(float), rows["seq"].to_numpy(float),
                            (rows["event"] == "retransmit").to_numpy(float)])


def test_tcp_l_timeout_without_a_reaction_goes_back_n_with_its_window():
    """A NewReno flow f1 (from 0 s) and a TCP-L flow f0 (from 1 s, reports every 0.1 s)
    share the last hop R2 -> D0, window-limited at 20 segments; that hop loses 5 of f1's
    packets early and then arrivals 700-728 but 712: f0's whole window (segments 530-549)
    but segment 542, which the receiver keeps, and 8 of f1's. f0's Loss_tcp (1 / 551) is
    far below Loss_link (33 of about 730 frames), so
    P_congestion = 0 and its timeout keeps the window. Without a reaction, the study's
    simulator (ns-2's TCP-Linux: enter_loss marks every outstanding segment lost, the
    pseudo-code of §3.2 only skips the window's reduction) resends every segment from
    una at once within the window kept, the one the receiver holds included: 20
    retransmissions at the timeout, in both lenses, and every segment of f0 from the
    timeout on (about 700) is the same in both, at the same instant (within the burst's
    serialisation). Before, the net lens
    resent una alone ("retransmit only") and ns-3 one segment, the window one round trip
    later."""
    data = dumbbell(pairs=2, variant="newreno", horizon_s=5.0,
                    tcp={**TCP, "rcv_buf_bytes": 20 * MSS, "sack": False}).model_dump()
    data["flows"][0].update(variant="tcp_l", start_s=1.0,
                            params={"variant": "tcp_l", "report_interval_s": 0.1})
    data["flows"][1].update(dst="D0", bytes=300 * MSS)
    data["flows"][1].pop("params", None)
    lost = [10, 30, 50, 70, 90, *(a for a in range(700, 729) if a != 712)]
    data["links"][2]["ab"]["errors"] = {"kind": "list", "packets": lost}  # R2 -> D0
    scenario = validate_scenario(data)
    raw, ns3 = _simulate(scenario)
    net = run_once(scenario, "net", make_run(scenario)).trace
    state = raw["flows"]["f0"]["variant"]
    assert state["reactions"] == 0 and np.all(state["p_congestion"][1] == 0.0)
    sent = {}
    for lens, trace in (("ns3", ns3), ("net", net)):
        (timeout,) = trace.events(event="timeout").query("flow == 'f0'")["time_s"]
        sent[lens] = _after(trace, "f0", timeout)
        burst = sent[lens][np.abs(sent[lens][:, 0] - timeout) < 5e-3]
        assert len(burst) == 20 and burst[:, 2].all()  # the window, every one resent
        assert sent[lens][0, 1] == trace.events(event="drop").query("flow == 'f0'")["seq"].min()
    assert len(sent["ns3"]) == len(sent["net"]) > 600
    assert (sent["ns3"][:, 1:] == sent["net"][:, 1:]).all()
    # the net records a burst at its emission, ns-3's pcap each segment as it starts on
    # the sender's 100 Mbit/s link: the 20th of the burst 19 x 83 us = 1.6 ms later
    assert np.abs(sent["ns3"][:, 0] - sent["net"][:, 0]).max() < 2e-3
