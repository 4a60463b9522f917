"""Vegas, Modified Vegas, adaptive Vegas, Westwood+ and TCP-L against hand derivations.

Paths: ``A -- B`` at 1 Gbit/s, 10 ms (serialisation negligible: the RTT is fixed at about
20.009 ms whatever the window), or the "dyadic" path A -(2^23 bit/s, 2^-7 s)- R -(2^20
bit/s, 2^-6 s)- B whose every delay, serialisation time and offset below is a binary
fraction, so that floating-point sums of times are exact. MSS 1000 bytes, every segment
ACKed at once (delack_count 1).
"""

from __future__ import annotations

from collections import namedtuple
from types import SimpleNamespace

import numpy as np
import pytest

from tcpn.lenses import evaluate, make_run
from tcpn.models.components.congestion.tcp_l import TcpL, p_congestion, tcp_l_reacts
from tcpn.models.components.congestion.vegas import (
    VegasLaw,
    adaptive_target,
    vegas_decision,
    vegas_on_ack,
    vegas_round,
)
from tcpn.models.components.congestion.vegas_record import (
    sent_time,
    vegas_acked,
    vegas_sent,
    vegas_start,
)
from tcpn.models.components.congestion.westwood import (
    westwood_ack,
    westwood_estimate,
    westwood_ssthresh,
    westwood_start,
)
from tcpn.models.scenario import ScenarioError, parse_scenario, validate_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import Simulator

MSS = 1000
#: An ACK with only the fields Vegas reads: echoed timestamp, receiver clock.
Ack = namedtuple("Ack", "echo ts retx ack", defaults=(False, 0))
TCP = {"segment_size_bytes": MSS, "delack_count": 1, "sack": False, "handshake": False,
       "limited_transmit": False}


def run(scenario):
    """Net lens run with the packet census checked."""
    result = evaluate(scenario, lens="net")
    counts = result.provenance["lens"]["census"]
    assert counts["sent"] == counts["received"] + counts["dropped"] + counts["in_flight"]
    return result


def window(result, var="cwnd_bytes"):
    """(time, value in segments) of every change of ``var``."""
    frame = result.trace.series(var)
    return list(zip(frame["time_s"], frame["value"] / MSS, strict=True))


def at(changes, t):
    """The value in force at time ``t``."""
    return [v for s, v in changes if s <= t][-1]


def dyadic(variant, params=None, horizon_s=8.0, warmup_s=0.0, delack=1, **flow):
    f = {"id": "f", "src": "A", "dst": "B", "variant": variant, **flow}
    if params:
        f["params"] = params
    return validate_scenario({
        "name": "dyadic", "horizon_s": horizon_s,
        "links": [{"a": "A", "b": "R", "rate_bps": 2**23, "delay_s": 2**-7},
                  {"a": "R", "b": "B", "rate_bps": 2**20, "delay_s": 2**-6,
                   "queue": {"kind": "drop_tail", "limit": 50}}],
        "flows": [f], "measure": {"warmup_s": warmup_s},
        "tcp": {**TCP, "initial_cwnd_segments": 2, "clock_granularity_s": 2**-10,
                "delack_count": delack}})


# ----------------------------------------------------------------------------- Vegas


def test_vegas_window_on_a_fixed_rtt_path():
    # Initial cwnd 2, ssthresh 8, alpha/beta/gamma 1/3/1; Diff ~ 0 on this path (a few us of
    # serialisation against 20 ms), so: ACK 1 is the first decision (slow start, Diff <
    # gamma): grow is toggled on, round_end = nxt = 2. ACKs 1, 2 grow: cwnd 4 after RTT 1.
    # ACK 3 acknowledges segment 2, the first one sent after the decision: next decision,
    # grow off (RTT 2: ACKs 3..6 hold cwnd 4), round_end = 6. ACK 7 decides, grow on: ACKs
    # 7..10 take cwnd to 8 = ssthresh (RTT 3). ACK 11: congestion avoidance, Diff < alpha:
    # +1 per RTT: 9, 10, 11 in RTTs 4, 5, 6. Reno would have grown in every RTT.
    scenario = validate_scenario({
        "name": "vegas_fixed_rtt", "horizon_s": 0.15,
        "links": [{"a": "A", "b": "B", "rate_bps": 1e9, "delay_s": 0.01}],
        "flows": [{"id": "f", "src": "A", "dst": "B", "variant": "vegas",
                   "params": {"alpha": 1, "beta": 3, "gamma": 1}}],
        "tcp": {**TCP, "timestamps": False, "initial_cwnd_segments": 2,
                "initial_ssthresh_segments": 8}})
    cwnd = window(run(scenario))
    mid_rtt = [at(cwnd, (k + 0.5) * 0.020009) for k in range(7)]
    assert mid_rtt == [2, 4, 4, 8, 9, 10, 11]
    assert all(v == int(v) for _t, v in cwnd)  # no 1/cwnd steps
    assert window(run(scenario), "ssthresh_bytes") == [(0.0, 8.0)]


def test_vegas_decision_table():
    # Diff = W (1 - BaseRTT / RTT), in segments.
    law = (1, 3, 1)  # alpha, beta, gamma
    assert vegas_decision(20, 10, 0.1, 0.1, *law) == (21, 10, False)        # Diff 0 < 1
    assert vegas_decision(20, 10, 0.1, 0.1 / 0.9, *law) == pytest.approx((20, 10, False))
    assert vegas_decision(20, 10, 0.1, 0.125, *law) == (19, 10, False)      # Diff 4 > 3
    # slow start, Diff = 2 > gamma: W = 20 * 0.8 + 1 = 17, ssthresh = 16
    assert vegas_decision(20, 100, 0.1, 0.125, *law) == (17, 16, False)
    assert vegas_decision(20, 100, 0.1, 0.1, *law) == (20, 100, True)


def test_vegas_keeps_between_alpha_and_beta_packets_queued():
    # Equilibrium: Diff = W (RTT - BaseRTT) / RTT = rate * queueing delay = packets the flow
    # keeps in the bottleneck queue, held in [alpha, beta] = [1, 3] once slow start is over
    # (measured from 2 s; the window settles within the first second).
    result = run(dyadic("vegas", {"alpha": 1, "beta": 3}, horizon_s=8.0, warmup_s=2.0))
    queue = result.summary["queues"]["R->B"]
    assert queue["drops"] == 0
    assert 1.0 <= queue["mean_packets"] <= 3.0


def vegas_state(scenario, flow=0):
    """The ``Vegas`` record of a flow's sender at the horizon."""
    run_ = make_run(scenario)
    composed = compose(scenario, run_.flows)
    sim = Simulator(composed.net, seed=run_.lens_seed)
    sim.run(until=scenario.horizon_s)
    (v,) = list(sim.marking[sim.compiled.place_index[f"flow{flow}.snd.vegas"]])
    return v


def test_vegas_times_the_newest_segment_an_ack_covers():
    # Segments 0, 1, 2 leave at 0, 0.125, 0.25 s; one ACK covers 0 and 1 at 0.375 s: its
    # sample is segment 1's RTT, 0.25 s (the echo, segment 0's timestamp, would give
    # 0.375: the receiver's wait for segment 1). A retransmitted segment gives none.
    v = vegas_start()
    for seq, time in ((0, 0.0), (1, 0.125), (2, 0.25)):
        v = vegas_sent(v, seq, time, True)
    assert sent_time(v, 2 - 1) == 0.125
    v = vegas_acked(vegas_on_ack(v, Ack(sent_time(v, 1), 0.0), 0.375, True, 0.125), 2)
    assert (v.rtt, v.base_rtt, v.sent) == (0.25, 0.25, ((2, 0.25),))
    assert sent_time(vegas_sent(v, 2, 1.0, False), 2) == -1.0


def test_vegas_base_rtt_with_delayed_acks_is_the_unloaded_rtt():
    # Dyadic path, ACK every second segment: BaseRTT is the RTT of a segment that found
    # the queues empty: data and ACK frames serialised on both links plus propagation,
    # not that plus the wait for the second segment of a pair (one data serialisation at
    # 2^20 bit/s, 8.04 ms), which the echo-based sample carried.
    v = vegas_state(dyadic("vegas", {"alpha": 1, "beta": 3}, horizon_s=3.0, delack=2))
    base = (1054 + 54) * 8 / 2**23 + (1054 + 54) * 8 / 2**20 + 2 * (2**-7 + 2**-6)
    assert v.base_rtt == pytest.approx(base, abs=1e-9)


def test_lone_vegas_with_delayed_acks_fills_the_bottleneck():
    # Alone on a path, Vegas's equilibrium keeps alpha..beta = 2..4 of its segments in the
    # bottleneck queue, so the bottleneck never idles: goodput = its payload rate
    # 2^22 * 1000/1054 bit/s, no loss, and the queue stays
    # within a packet of [alpha, beta] on time average (ACK pairs release segments two at
    # a time). With echo-based samples, which carried the receiver's hold, the flow used
    # 43 % of the link.
    scenario = validate_scenario({
        "name": "vegas_delack", "horizon_s": 5.0,
        "links": [{"a": "A", "b": "R", "rate_bps": 2**26, "delay_s": 2**-7},
                  {"a": "R", "b": "B", "rate_bps": 2**22, "delay_s": 2**-6,
                   "queue": {"kind": "drop_tail", "limit": 100}}],
        "flows": [{"id": "f", "src": "A", "dst": "B", "variant": "vegas",
                   "params": {"alpha": 2, "beta": 4, "gamma": 1}}],
        "measure": {"warmup_s": 2.0},
        "tcp": {**TCP, "delack_count": 2, "initial_cwnd_segments": 10}})
    result = run(scenario)
    queue = result.summary["queues"]["R->B"]
    assert queue["drops"] == 0
    assert 1.0 <= queue["mean_packets"] <= 5.0
    assert result.summary["flows"]["f"]["goodput_bps"] == pytest.approx(2**22 * 1000 / 1054,
                                                                        rel=0.01)


def test_modified_vegas_is_exactly_invariant_to_a_constant_offset():
    # tr - ts = Tf + tfq + To and ta - tr = Tb + tbq - To: BaseRTT = Tf0 + Tb0 and the
    # forward RTT tr - ts + Tb0 do not depend on To. On the dyadic path the sums are exact,
    # so the whole run is identical bit for bit.
    runs = [run(dyadic("modified_vegas", {"alpha": 1, "beta": 3},
                       receiver_clock_offset_s=offset))
            for offset in (0.0, 2.5, 1000.125)]
    series = [r.trace.series("cwnd_bytes")["value"].to_numpy() for r in runs]
    assert len(series[0]) > 10
    for other in series[1:]:
        assert np.array_equal(series[0], other)


def test_skew_breaks_modified_vegas_and_the_estimate_recovers_it():
    # R(t) = (1 + s) t + To with s = 2e-4: tr - ts grows by s * ts. The MST lower-hull slope
    # over a queue-free stretch of samples is the skew; with it removed the corrected
    # forward samples are those of the unskewed run.
    skew = 2e-4

    def final_state(params):
        return vegas_state(dyadic("modified_vegas", params, horizon_s=12.0,
                                  receiver_clock_skew=skew))

    estimated = final_state({"alpha": 1, "beta": 3, "skew_estimation": True,
                             "skew_min_span_s": 2.0})
    assert estimated.skew == pytest.approx(skew, rel=0.05)
    # unloaded RTT: serialisations of 1054-byte data and 54-byte ACK frames on both links
    # plus 2 * (2^-7 + 2^-6) s of propagation
    base = (1054 + 54) * 8 / 2**23 + (1054 + 54) * 8 / 2**20 + 2 * (2**-7 + 2**-6)
    assert estimated.base_rtt == pytest.approx(base, abs=1e-4)
    naive = final_state({"alpha": 1, "beta": 3})
    assert naive.skew == 0.0
    # the forward minimum is stale: the latest forward RTT exceeds BaseRTT by ~ s * t
    assert naive.rtt - naive.base_rtt > skew * 8.0


# ----------------------------------------------------------------------------- adaptive


def test_adaptive_vegas_target_follows_a_scripted_rtt_rise():
    # RTT 0.1 s for 5 samples, then 0.2 s: aveRTT_k = 0.2 - 0.1 (1 - w)^k after k samples
    # of the rise (w = 0.25), N_k = W (1 - BaseRTT / aveRTT_k) with W = 20, BaseRTT = 0.1.
    law = VegasLaw(kind="adaptive_vegas", alpha=1, beta=3, weight=0.25)
    v = vegas_start()
    clock = 0.0

    class Ack:
        retx = False

    for _ in range(5):
        ack = Ack()
        ack.echo, clock = clock, clock + 0.1
        v = vegas_on_ack(v, ack, clock, True, law.weight)
    assert v.ave_rtt == pytest.approx(0.1) and v.base_rtt == pytest.approx(0.1)
    for k in range(1, 9):
        ack = Ack()
        ack.echo, clock = clock, clock + 0.2
        v = vegas_on_ack(v, ack, clock, True, law.weight)
        expected_ave = 0.2 - 0.1 * 0.75**k
        assert v.ave_rtt == pytest.approx(expected_ave)
        n = adaptive_target(20.0, v.base_rtt, v.ave_rtt)
        assert n == pytest.approx(20.0 * (1 - 0.1 / expected_ave))
        # latest RTT 0.2 > aveRTT: Diff = 10 > N: one segment less per RTT
        assert decide(v, 20.0) == 19.0
    # once aveRTT has caught up, Diff = N: the window holds
    assert decide(v._replace(base_rtt=0.1, rtt=0.2, ave_rtt=0.2), 20.0) == 20.0


def decide(v, cwnd):
    """The window after an ACK that ends a round (adaptive Vegas, congestion avoidance)."""
    law = VegasLaw(kind="adaptive_vegas", alpha=1, beta=3, weight=0.25)
    tcb = SimpleNamespace(cwnd=cwnd, ssthresh=10.0, nxt=99)
    return vegas_round(v._replace(round_end=0), tcb, 1, law.alpha, law.beta, law.gamma,
                       law.adaptive)[1]


# ----------------------------------------------------------------------------- Westwood+


def test_westwood_ssthresh_after_a_scripted_ack_stream():
    # RTT 0.1 s throughout. Window 1 (opened by the first ACK): 10 segments; window 2:
    # 20; window 3: 20. Samples 100, 200, 200 segments/s. ns-3's Tustin filter:
    # BWE1 = 0.05 * (100 + 0) = 5; BWE2 = 0.9 * 5 + 0.05 * (200 + 100) = 19.5;
    # BWE3 = 0.9 * 19.5 + 0.05 * (200 + 200) = 37.55. After a loss: ssthresh =
    # max(2, 37.55 * 0.1) = 3.755 segments. Without the filter: 200 * 0.1 = 20.
    for filter_type, expected in (("tustin", 3.755), ("none", 20.0)):
        w = westwood_start()
        for per_window in (10, 20, 20):
            opened = []
            for _ in range(per_window):
                w, window_s = westwood_ack(w, 1, 0.1)
                opened.append(window_s)
            assert opened[0] == 0.1 and not any(opened[1:])
            w = westwood_estimate(w, 0.1, filter_type)
        assert westwood_ssthresh(w) == pytest.approx(expected)
    # no RTT sample yet: ns-3 ignores the ACK; the estimate starts at 0: ssthresh 2
    w, window_s = westwood_ack(westwood_start(), 3, -1.0)
    assert (w.acked, window_s, westwood_ssthresh(w)) == (0, 0.0, 2.0)


def test_westwood_net_matches_a_replay_of_its_ack_stream():
    # The net's windows: opened by an ACK of new data when none is open, closed one
    # smoothed RTT later (before an ACK arriving at that instant); RTTmin the smallest
    # smoothed RTT (ns-3's m_srtt and m_minRtt; ns-2 TCP-Linux's tcp_westwood.c, srtt >> 3).
    # Replay the trace's ACKs and RTT samples (smoothed as RFC 6298 does) through that
    # rule and compare the ssthresh set at the scripted loss; with the latest sample
    # instead of the smoothed RTT it differs (the queue grows the samples).
    scenario = validate_scenario({
        "name": "westwood_loss", "horizon_s": 3.0,
        "links": [{"a": "A", "b": "R", "rate_bps": 2**23, "delay_s": 2**-7},
                  {"a": "R", "b": "B", "rate_bps": 2**20, "delay_s": 2**-6,
                   "ab": {"errors": {"kind": "list", "packets": [60]}}}],
        "flows": [{"id": "f", "src": "A", "dst": "B", "variant": "westwood_plus"}],
        "tcp": {**TCP, "timestamps": True, "initial_cwnd_segments": 2}})
    result = run(scenario)
    events = result.trace.flow_events
    acks = events[events.event == "ack"][["time_s", "bytes"]].to_numpy()
    rtts = result.trace.series("rtt_s")[["time_s", "value"]].to_numpy()
    loss_time = events[events.event == "retransmit"]["time_s"].iloc[0]
    def replay(smoothed: bool) -> float:
        bwe = last_sample = 0.0
        acked, window_end, window_len, rtt_min, last_rtt = 0, None, 0.0, np.inf, 0.0
        srtt, taken = -1.0, 0
        for t, nbytes in acks:
            if t >= loss_time:
                break
            if window_end is not None and window_end <= t:
                sample = acked / window_len
                bwe = 0.9 * bwe + 0.05 * (sample + last_sample)
                last_sample, acked, window_end = sample, 0, None
            while taken < len(rtts) and rtts[taken, 0] <= t:  # the SYN-ACK's too
                srtt = rtts[taken, 1] if srtt < 0 else 0.875 * srtt + 0.125 * rtts[taken, 1]
                taken += 1
            if nbytes <= 0:
                continue
            sample_rtts = rtts[rtts[:, 0] == t][:, 1]
            if smoothed and srtt > 0:
                last_rtt = srtt
                rtt_min = min(rtt_min, last_rtt)
            elif not smoothed and len(sample_rtts):
                last_rtt = sample_rtts[0]
                rtt_min = min(rtt_min, last_rtt)
            acked += int(nbytes // MSS)
            if window_end is None:
                window_end, window_len = t + last_rtt, last_rtt
        assert bwe > 0
        return max(2.0, bwe * rtt_min)

    ssthresh = next(v for s, v in window(result, "ssthresh_bytes") if s >= loss_time)
    assert ssthresh == pytest.approx(replay(smoothed=True), rel=1e-9)
    assert abs(ssthresh / replay(smoothed=False) - 1) > 0.01


# ----------------------------------------------------------------------------- TCP-L


def test_tcp_l_reaction_rule():
    # P = clamp((Loss_tcp - Loss_link) / Loss_tcp, 0, 1); react iff P > X, X ~ U[0, 1).
    draws = np.linspace(0.0, 1.0, 101)[:-1]
    same = TcpL(sent=99, retx=4, link_sent=100, link_failed=5, report_time=1.0)
    assert not any(tcp_l_reacts(same, u) for u in draws)           # Loss_link = Loss_tcp
    clean = TcpL(sent=99, retx=4, link_sent=100, link_failed=0, report_time=1.0)
    assert all(tcp_l_reacts(clean, u) for u in draws)              # Loss_link = 0
    assert p_congestion(0.04, 0.01) == pytest.approx(0.75)
    assert sum(tcp_l_reacts(TcpL(99, 3, 100, 1, 1.0), u) for u in draws) == 75


def tcp_l_path(variant, lossy_hop):
    """A -(1 Gbit/s)- R -(1 Mbit/s)- B, 40 segments, segments 5 and 15 lost on one hop."""
    links = [{"a": "A", "b": "R", "rate_bps": 1e9, "delay_s": 0.005},
             {"a": "R", "b": "B", "rate_bps": 1e6, "delay_s": 0.005}]
    links[lossy_hop]["ab"] = {"errors": {"kind": "list", "packets": [5, 15]}}
    flow = {"id": "f", "src": "A", "dst": "B", "variant": variant, "bytes": 40 * MSS}
    if variant == "tcp_l":
        flow["params"] = {"report_interval_s": 0.001}
    return validate_scenario({
        "name": "tcp_l", "horizon_s": 5.0, "links": links, "flows": [flow],
        "tcp": {**TCP, "timestamps": True, "initial_cwnd_segments": 4,
                "initial_ssthresh_segments": 64}})


def test_tcp_l_always_reduces_when_the_last_hop_is_clean():
    # Losses on the wired first hop: the last hop reports no failed frame, Loss_link = 0,
    # P_congestion = 1 > X always: TCP-L is NewReno, event for event.
    tcp_l, newreno = run(tcp_l_path("tcp_l", 0)), run(tcp_l_path("newreno", 0))
    assert window(tcp_l) == window(newreno)
    assert window(tcp_l, "ssthresh_bytes") == window(newreno, "ssthresh_bytes")
    assert len(window(newreno, "ssthresh_bytes")) == 3


def test_tcp_l_never_reduces_when_the_link_explains_the_losses():
    # Losses on the last hop, reports every 1 ms: the third duplicate ACK left B 25 ms
    # after the loss, carrying a report with the failed frame: Loss_link = k / F with F <=
    # segments sent, Loss_tcp = k / (sent + 1) <= Loss_link: P = 0, never > X. Fast
    # retransmit keeps the window (ssthresh = cwnd, cwnd = ssthresh + 3); nothing halves.
    result = run(tcp_l_path("tcp_l", 1))
    events = result.trace.flow_events
    retransmits = events[events.event == "retransmit"]["time_s"].to_list()
    assert len(retransmits) == 2
    cwnd = window(result)
    for t in retransmits:
        before = [v for s, v in cwnd if s < t][-1]
        assert at(cwnd, t) == before + 3
        assert at(window(result, "ssthresh_bytes"), t) == before
    newreno = run(tcp_l_path("newreno", 1))
    assert min(v for _t, v in window(newreno, "ssthresh_bytes")) < min(
        v for _t, v in window(result, "ssthresh_bytes"))


# ----------------------------------------------------------------------------- bad input


BASE = """links:
  - {a: A, b: B, rate_bps: 1.0e6, delay_s: 0.01%s}
flows:
  - {src: A, dst: B, variant: %s}
horizon_s: 5
"""


@pytest.mark.parametrize(("link", "flow", "expected"), [
    ("", "modified_vegas, receiver_clock_skew: -1.0",
     "bad.yaml:4: flows[0].receiver_clock_skew: skew -1 makes the receiver clock"),
    ("", "modified_vegas, receiver_clock_offset_s: -3",
     "bad.yaml:4: flows[0].receiver_clock_offset_s: must be >= 0"),
    ("", "adaptive_vegas, params: {weight: 0}",
     "bad.yaml:4: flows[0].params.weight: Input should be greater than 0"),
    ("", "adaptive_vegas, params: {weight: 1.5}",
     "bad.yaml:4: flows[0].params.weight: Input should be less than or equal to 1"),
    ("", "tcp_l, params: {report_interval_s: 0}",
     "bad.yaml:4: flows[0].params.report_interval_s: Input should be greater than 0"),
    (", queue: {kind: sgpq, threshold_bytes: 48}", "reno",
     "bad.yaml:2: links[0].queue.threshold_bytes: threshold_bytes (48) is below the 52-byte"),
    ("", "vegas, params: {skew_estimation: true}",
     "bad.yaml:4: flows[0].params.skew_estimation: skew_estimation needs"),
    (", wireless: {station: C}", "reno",
     "bad.yaml:2: links[0].wireless.station: station 'C' is not an end of the link"),
])
def test_bad_input_names_field_and_line(link, flow, expected):
    with pytest.raises(ScenarioError) as err:
        parse_scenario(BASE % (link, flow), "bad.yaml")
    assert expected in str(err.value)
