"""tcpn's own ns-3 variants (``cpp/variants.h``): Modified Vegas, adaptive Vegas, TCP-L.

Small dumbbells of a few simulated seconds; every expectation comes from the algorithm
(docs/validation.md, study S1/S3/S4 in the design notes), not from a previous run.
"""

from __future__ import annotations

import numpy as np
import pytest

from tcpn.lenses import make_run
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
        data = _one_flow(variant, 6.0, tcp={"initial_ssthresh_segments": 20},
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
