"""BBR v1 (tcpn/models/components/congestion/bbr.py) against ns-3.44's ``TcpBbr``.

Hand-worked steps of the bandwidth filter and the state machine (STARTUP, DRAIN, PROBE_BW's
gain cycle, PROBE_RTT), the expectations worked from the algorithm as ns-3's tcp-bbr.cc
states it; then one flow of scenarios/reference/bbr_2flows.yaml from a fixed start in the
net lens, and in both lenses (marked ns3): the same STARTUP peak, the same instant of
DRAIN, the same window in PROBE_BW (but for the +2 segments of the 1.25 phase, whose
start is a random draw in each lens) and the same goodput.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytest
from lens_traces import lens_trace

from tcpn.errors import InputError
from tcpn.lenses.net import NetLens
from tcpn.lenses.ns3 import Ns3Lens
from tcpn.lenses.ns3.lens import _flow_plan
from tcpn.lenses.ns3.loader import installed
from tcpn.models import variant_registry
from tcpn.models.components.congestion import bbr as bbr_module
from tcpn.models.components.congestion.bbr import (
    DRAIN,
    GAIN_CYCLE,
    PHASE_SUFFIX,
    PROBE_BW,
    PROBE_RTT,
    STARTUP,
    BbrParams,
    bbr_ack,
    bbr_controls,
    bbr_model,
    bbr_open,
    bbr_sender_net,
    bbr_start,
    bbr_tx_start,
    in_flight_segments,
    in_flight_target,
    max_filter,
)
from tcpn.models.components.delivery_rate import (
    rate_app_limited,
    rate_delivered,
    rate_sample,
    rate_sent,
    rate_start,
)
from tcpn.models.components.packets import Pkt
from tcpn.models.components.sender import SenderConfig, Tcb
from tcpn.models.metrics import goodput_bps
from tcpn.models.registered_variants import variant_spec
from tcpn.models.scenario import dumbbell, load_scenario, validate_scenario
from tcpn.models.topology import scenario_net, sender_config
from tcpn.models.variant_registry import register_variant
from tcpn.models.verification.check import property_net, verify_all
from tcpn.petrinets.engine.simulator import Simulator

REFERENCE = "scenarios/reference/bbr_2flows.yaml"
MSS = 1000
INIT = 10
GAIN = 2.89
#: 10 Mbit/s and 40 ms: a BDP of 50,000 bytes, 50 segments of MSS.
BW_BPS, RTT_S = 1e7, 0.04


def _sample(delivered: int, prior_delivered: int, rate_bps: float) -> object:
    """A valid rate sample: ``delivered`` bytes in all, the sample's segment sent when
    ``prior_delivered`` had been."""
    return rate_start()._replace(delivered=delivered, prior_delivered=prior_delivered,
                                 prior_time=1.0, sample_delivered=delivered - prior_delivered,
                                 interval=RTT_S, delivery_bps=rate_bps)


def _model(b, q, now, *, acked=2 * MSS, prior=0, flight=0, u=0.0):
    return bbr_model(b, q, acked, prior, flight, now, u, MSS, INIT, GAIN, 10, 10.0, 0.2)


def _opened():
    return bbr_open(bbr_start(INIT, MSS, GAIN), RTT_S, 0.0, INIT, MSS, GAIN, 1e9)


# --------------------------------------------------------------------------- the filters


def test_bandwidth_filter_keeps_the_window_max_and_expires_it():
    """Samples over rounds 0..12, none above the first until round 12: the best (10,
    round 0) holds for 10 rounds, the second and third are refreshed after a quarter
    and a half window, and the second best takes over when the best expires."""
    f = max_filter((), 10.0, 0, 10)
    assert max_filter(f, 6.0, 1, 10) == f  # below all three, within a quarter window
    f = max_filter(f, 8.0, 3, 10)  # second == best for more than 10 >> 2 rounds
    assert f == ((10.0, 0), (8.0, 3), (8.0, 3))
    assert max_filter(f, 7.0, 6, 10) == f  # third == second for only 3 rounds
    f = max_filter(f, 7.0, 9, 10)  # ... for 6 > 10 >> 1 rounds: the third is refreshed
    assert f == ((10.0, 0), (8.0, 3), (7.0, 9))
    assert max_filter(f, 5.0, 10, 10) == f  # 10 rounds: 10 is still the best
    f = max_filter(f, 5.0, 11, 10)  # 11 rounds: it expires, the others move up
    assert f == ((8.0, 3), (7.0, 9), (5.0, 11))
    assert max_filter(f, 9.0, 12, 10) == ((9.0, 12),) * 3  # a new max resets all three
    assert max_filter(f, 1.0, 22, 10) == ((1.0, 22),) * 3  # the whole window gone


def test_min_rtt_filter_takes_smaller_samples_and_any_sample_after_the_window():
    b = _opened()._replace(mode=PROBE_BW, filled=True, bw=((BW_BPS, 1),) * 3)
    q = _sample(10 * MSS, 0, BW_BPS)
    assert _model(b._replace(last_rtt=0.05), q, 1.0).min_rtt == RTT_S  # larger: kept
    smaller = _model(b._replace(last_rtt=0.03), q, 1.0)
    assert (smaller.min_rtt, smaller.min_rtt_stamp) == (0.03, 1.0)
    late = _model(b._replace(last_rtt=0.05), q, 10.5)  # 10 s passed: taken, PROBE_RTT
    assert (late.min_rtt, late.min_rtt_stamp, late.mode) == (0.05, 10.5, PROBE_RTT)


def test_min_rtt_takes_the_ack_rtt_sample_not_the_smoothed_rtt():
    """ns-3.44's ``TcpSocketBase::EstimateRtt`` sets ``m_lastRtt``, which ``TcpBbr`` filters,
    to the ACK's own RTT sample; the smoothed RTT only feeds the socket's ``m_minRtt`` (the
    rate samples' floor). An ACK with a 41 ms sample while the smoothed RTT is 50 ms
    lowers ``min_rtt`` to 41 ms; an ACK without a sample (-1) leaves both (the last sample,
    43 ms, is above the 42 ms ``min_rtt``)."""
    b = _opened()._replace(min_rtt=0.042, last_rtt=0.043, socket_min_rtt=0.045)
    t = Tcb(20.0, 1e9, 10, 20, 20, 0, 0, False, 0, False, (), 10, False, 0)
    a = Pkt(flow=0, dst=0, seq=0, ack=12, size=40, ts=1.0, echo=0.959, ecn=0, ece=False,
            cwr=False, retx=False, sack=())
    q = rate_start()
    for seq in range(10, 20):
        q = rate_sent(q, seq, 0.9, seq == 10)
    args = (t, a, 1.0, 0.0, False, 3, MSS, INIT, GAIN, 10, 10.0, 0.2)
    after, _ = bbr_ack(b, q, *args, 0.050, 0.041)
    assert (after.last_rtt, after.min_rtt, after.socket_min_rtt) == (0.041, 0.041, 0.045)
    unsampled, _ = bbr_ack(b, q, *args, -1.0, -1.0)
    assert (unsampled.min_rtt, unsampled.socket_min_rtt) == (0.042, 0.045)


# --------------------------------------------------------------------------- the state machine


def test_open_sets_startup_gains_and_the_initial_pacing_rate():
    b = _opened()
    assert (b.mode, b.pacing_gain, b.cwnd_gain) == (STARTUP, GAIN, GAIN)
    # high_gain x 10 segments / 40 ms
    assert b.pacing_bps == pytest.approx(GAIN * 10 * MSS * 8 / RTT_S, abs=1)
    assert in_flight_target(b, 1.0, MSS, INIT) == int(2e6 * RTT_S / 8) + 3 * MSS


def test_startup_ends_after_three_rounds_without_25_percent_growth_then_drain_then_probe_bw():
    b, delivered, now = _opened(), 0, 0.0
    rates = [4e6, 6e6, 9e6, 10e6, 10.5e6, 10.5e6]  # grows >= 25 % until 9 Mbit/s
    modes = []
    for rate in rates:
        prior, delivered, now = delivered, delivered + 20 * MSS, now + RTT_S
        b = _model(b, _sample(delivered, prior, rate), now, flight=200 * MSS)
        modes.append((b.mode, b.rounds, b.full_count))
    # rounds 1-3 grow the estimate >= 25 %; 10, 10.5, 10.5 do not (9 x 1.25 = 11.25)
    assert modes == [(STARTUP, 1, 0), (STARTUP, 2, 0), (STARTUP, 3, 0), (STARTUP, 4, 1),
                     (STARTUP, 5, 2), (DRAIN, 6, 3)]
    assert b.pacing_gain == pytest.approx(1 / GAIN) and b.cwnd_gain == GAIN
    bdp = 10.5e6 * RTT_S / 8
    assert b.ssthresh == int(bdp + 3 * MSS)  # ns-3: ssthresh = InFlight(1) on DRAIN
    # DRAIN until the flight is at most one BDP (+3 quanta)
    q = _sample(delivered + 2 * MSS, delivered - 20 * MSS, 10.5e6)
    assert _model(b, q, now + 0.01, flight=int(bdp) + 4 * MSS).mode == DRAIN
    probe = _model(b, q, now + 0.01, flight=int(bdp), u=0.0)
    # u = 0: index 7 - 0, advanced to 0: the 1.25 phase, window gain 2
    assert (probe.mode, probe.cycle, probe.pacing_gain, probe.cwnd_gain) == \
        (PROBE_BW, 0, 1.25, 2.0)
    # the other draws start at phases 7, 6, 5, 4, 3: never 0.75
    starts = {_model(b, q, now + 0.01, flight=0, u=u).cycle for u in np.arange(0.0, 1.0, 1 / 6)}
    assert starts == {0, 7, 6, 5, 4, 3}


def test_gain_cycle_phases_end_as_ns3_tests_them():
    b = _opened()._replace(mode=PROBE_BW, filled=True, bw=((BW_BPS, 5),) * 3, cwnd_gain=2.0,
                           cycle=0, pacing_gain=1.25, cycle_stamp=1.0, next_round=10 ** 9)
    q = _sample(100 * MSS, 50 * MSS, BW_BPS)
    target_125 = in_flight_target(b, 1.25, MSS, INIT)  # 1.25 BDP + 3 quanta + 2 segments
    assert target_125 == int(1.25 * 50_000) + 5 * MSS
    # 1.25: a full min RTT and the flight before the ACK at 1.25 BDP
    assert _model(b, q, 1.05, prior=target_125 - 1).cycle == 0
    assert _model(b, q, 1.03, prior=target_125).cycle == 0
    after = _model(b, q, 1.05, prior=target_125)
    assert (after.cycle, after.pacing_gain, after.cycle_stamp) == (1, 0.75, 1.05)
    # 0.75: ends at a full min RTT or as soon as the flight is down to one BDP
    drain = after
    assert _model(drain, q, 1.06, prior=60 * MSS).cycle == 1
    assert _model(drain, q, 1.06, prior=53 * MSS).cycle == 2
    # 1: a full min RTT each
    ones = drain._replace(cycle=2, pacing_gain=1.0, cycle_stamp=2.0)
    assert _model(ones, q, 2.039, prior=0).cycle == 2
    assert _model(ones, q, 2.041, prior=0).pacing_gain == GAIN_CYCLE[3]


def test_probe_rtt_caps_the_window_for_200_ms_and_a_round_then_restores_it():
    b = _opened()._replace(mode=PROBE_BW, filled=True, bw=((BW_BPS, 5),) * 3, cwnd_gain=2.0,
                           cycle=3, pacing_gain=1.0, cycle_stamp=9.0, min_rtt_stamp=0.5,
                           cwnd=110 * MSS, last_rtt=0.045, next_round=10 ** 9)
    q = _sample(1000 * MSS, 900 * MSS, BW_BPS)
    b = _model(b, q, 10.6, flight=100 * MSS)  # 10 s since the min RTT: PROBE_RTT
    assert (b.mode, b.pacing_gain, b.cwnd_gain, b.prior_cwnd, b.probe_done) == \
        (PROBE_RTT, 1.0, 1.0, 110 * MSS, 0.0)
    b = bbr_controls(b, 2 * MSS, 100 * MSS, False, 1000 * MSS, MSS, INIT, GAIN)
    assert b.cwnd == 4 * MSS
    b = _model(b, q, 10.7, flight=4 * MSS)  # flight down to 4 segments: 200 ms start
    assert b.probe_done == pytest.approx(10.9) and b.next_round == 1000 * MSS
    later = _sample(1010 * MSS, 1000 * MSS, BW_BPS)  # a round ends
    b = _model(b, later, 10.8, flight=4 * MSS)
    assert b.mode == PROBE_RTT and b.probe_round_done
    done = _model(b, later, 10.95, flight=4 * MSS)
    assert done.mode == PROBE_BW and done.cwnd == 110 * MSS and done.min_rtt_stamp == 10.95


def test_window_grows_by_what_is_delivered_up_to_two_bdp():
    b = _opened()._replace(mode=PROBE_BW, filled=True, bw=((BW_BPS, 5),) * 3, cwnd_gain=2.0,
                           cycle=3, pacing_gain=1.0, cwnd=100 * MSS, extra=(2 * MSS, 0))
    target = 2 * 50_000 + 3 * MSS + 2 * MSS  # 2 BDP, 3 quanta, the aggregation allowance
    grown = bbr_controls(b, 2 * MSS, 90 * MSS, False, 10 ** 6, MSS, INIT, GAIN)
    assert grown.cwnd == 102 * MSS
    assert bbr_controls(grown._replace(cwnd=104 * MSS), 2 * MSS, 90 * MSS, False, 10 ** 6,
                        MSS, INIT, GAIN).cwnd == target
    # pacing at the gain times the estimate, 1 % below
    assert grown.pacing_bps == pytest.approx(0.99 * BW_BPS, abs=1)


# --------------------------------------------------------------------------- refusals


def test_reference_scenario_reads_as_bbr_with_ns3_defaults():
    params = load_scenario(REFERENCE).flows[0].params
    assert (params.high_gain, params.bw_window_rounds, params.rtt_window_s,
            params.probe_rtt_duration_s) == (2.89, 10, 10.0, 0.2)


def test_lenses_refuse_what_is_not_modelled():
    data = _short()
    data["tcp"]["sack"] = False
    with pytest.raises(InputError, match="BBR runs on SACK recovery only"):
        NetLens().check(validate_scenario(data))
    data = _short()
    data["tcp"]["ecn"] = True
    with pytest.raises(InputError, match="BBR v1 has no ECN reaction"):
        NetLens().check(validate_scenario(data))


# --------------------------------------------------------------------------- app-limited


def test_app_limited_marking_follows_ns3_through_a_sample_sequence():
    """ns-3's TcpRateLinux, worked by hand with 1000-byte segments: five segments sent
    at 1 s and delivered at 1.1 s record 400 kbit/s; the application then writes half a
    segment with nothing in flight: the connection is marked until ``delivered`` passes
    5000; segments 5 and 6, sent at 1.1 s, carry the mark; the ACK of 5 at 1.2 s ends
    it (6000 > 5000) and its sample, app-limited and slower (80 kbit/s), leaves the
    recorded rate at 400 kbit/s; segment 7, sent after, carries no mark, so its ACK
    records its slower rate."""
    r = rate_start()
    for seq in range(5):
        r = rate_sent(r, seq, 1.0, seq == 0)
    r = rate_sample(rate_delivered(r, tuple(range(5)), 1.1, MSS), 0.05)
    assert (r.delivered, r.app_limited, r.delivery_bps) == (5000, False, 400_000.0)
    # written after queueing: half a segment unsent, nothing in flight, window open
    assert rate_app_limited(r, MSS, 0, 10 * MSS, MSS, False) == r  # a whole segment
    assert rate_app_limited(r, MSS // 2, 0, 10 * MSS, MSS, True) == r  # a hole to resend
    r = rate_app_limited(r, MSS // 2, 0, 10 * MSS, MSS, False)
    assert r.app_limited_until == 5000
    r = rate_sent(rate_sent(r, 5, 1.1, True), 6, 1.1, False)
    assert [s[4] for s in r.sent] == [True, True]
    r = rate_sample(rate_delivered(r, (5,), 1.2, MSS), 0.05)
    assert (r.app_limited_until, r.app_limited, r.sample_delivered) == (0, True, 1000)
    assert (r.interval, r.delivery_bps) == (pytest.approx(0.1), 400_000.0)  # not 80 kbit/s
    r = rate_sent(r, 7, 1.2, False)
    assert r.sent[-1][4] is False
    r = rate_sample(rate_delivered(r, (6,), 1.25, MSS), 0.05)
    assert r.app_limited and r.delivery_bps == 400_000.0  # 2000 B in 0.15 s: below
    r = rate_sample(rate_delivered(r, (7,), 1.3, MSS), 0.05)
    # 7 was sent when 6000 had been delivered: 2000 B in 0.1 s, recorded though slower
    assert not r.app_limited and r.delivery_bps == 160_000.0
    # an app-limited sample not below the recorded rate is recorded
    fast = r._replace(app_limited_until=8000)
    fast = rate_sent(fast, 8, 1.3, True)
    fast = rate_sample(rate_delivered(fast, (8,), 1.305, MSS), 0.001)
    assert fast.app_limited and fast.delivery_bps == 1_600_000.0


def test_bbr_takes_an_app_limited_sample_only_above_its_estimate_and_skips_the_full_pipe():
    """TcpBbr: an app-limited sample below the best estimate leaves the filter and the
    full-pipe count alone (but still starts a round); one above it is taken."""
    b = _opened()._replace(bw=((BW_BPS, 1),) * 3, rounds=4, next_round=0, full_bw=BW_BPS,
                           full_count=1)
    slow = _sample(20 * MSS, 10 * MSS, BW_BPS / 2)._replace(app_limited=True)
    after = _model(b, slow, 0.5, flight=20 * MSS)
    assert (after.bw, after.rounds, after.full_count) == (b.bw, 5, 1)
    # the same sample, not app-limited: the second and third best are refreshed (a
    # quarter window passed) and the pipe counts a round without growth
    bulk = _model(b, slow._replace(app_limited=False), 0.5, flight=20 * MSS)
    assert bulk.bw == ((BW_BPS, 1), (BW_BPS / 2, 5), (BW_BPS / 2, 5))
    assert bulk.full_count == 2
    fast = _model(b, slow._replace(delivery_bps=2 * BW_BPS), 0.5, flight=20 * MSS)
    assert fast.bw == ((2 * BW_BPS, 5),) * 3 and fast.full_count == 1


def test_probe_rtt_marks_bbr_app_limited_and_an_idle_send_restarts():
    """ns-3's TcpBbr marks itself (not the rate samples) application-limited in PROBE_RTT;
    from then on a send with nothing in flight is an idle restart: PROBE_BW paces at the
    estimate, and no PROBE_RTT starts before the next ACK that delivers."""
    b = _opened()._replace(mode=PROBE_BW, filled=True, bw=((BW_BPS, 5),) * 3, cwnd_gain=2.0,
                           cycle=3, pacing_gain=1.0, cycle_stamp=9.0, min_rtt_stamp=0.5,
                           cwnd=110 * MSS, last_rtt=0.045, next_round=10 ** 9)
    q = _sample(1000 * MSS, 900 * MSS, BW_BPS)
    assert bbr_tx_start(b, 10.0, 0.0, GAIN) == b  # never marked: nothing happens
    probing = _model(b, q, 10.6, flight=100 * MSS)
    assert probing.mode == PROBE_RTT and probing.app_limited == 1100 * MSS
    restarted = bbr_tx_start(b._replace(app_limited=1, pacing_gain=1.25, pacing_bps=1.2e7),
                             10.6, 0.0, GAIN)
    assert restarted.idle_restart and restarted.pacing_bps == pytest.approx(0.99 * BW_BPS)
    # the idle restart holds PROBE_RTT off for one ACK; a sample that delivered clears it
    held = _model(restarted, q, 10.6, flight=0)
    assert held.mode == PROBE_BW and not held.idle_restart


# --------------------------------------------------------------------------- one flow

HORIZON_S = 4.0


def _short() -> dict:
    data = load_scenario(REFERENCE).model_dump()
    data["flows"] = data["flows"][:1]
    data["flows"][0]["start_s"] = 0.0
    data["horizon_s"] = HORIZON_S
    data["measure"] = {"warmup_s": 0.0, "bin_s": 0.5}
    return data


def _window(trace):
    s = trace.series("cwnd_bytes", "f0")
    return s["time_s"].to_numpy(), s["value"].to_numpy() / 1448


def _at(times, cwnd, t):
    return cwnd[np.searchsorted(times, t, side="right") - 1]


def _shape(times, cwnd):
    """STARTUP's peak, the instant the window first drops (DRAIN's end: PROBE_BW's
    2 BDP), and the median window over [1.5 s, end)."""
    peak = int(np.argmax(cwnd))
    drop = peak + int(np.argmax(cwnd[peak:] < cwnd[peak] - 5))
    late = [_at(times, cwnd, t) for t in np.arange(1.5, HORIZON_S, 0.01)]
    return cwnd[peak], times[drop], float(np.median(late))


def test_net_window_follows_startup_drain_and_probe_bw():
    """One flow on the 10 Mbit/s, 42 ms path (BDP about 37 segments of 1448 B): STARTUP
    grows the window past 2.89 BDP, DRAIN ends within a second, then PROBE_BW holds it
    near 2 BDP plus the quanta (about 80 segments), never below."""
    times, cwnd = _window(lens_trace(NetLens(), _short()))
    peak, drop_s, late = _shape(times, cwnd)
    assert peak > 2.89 * 37 and drop_s < 1.0
    assert 2 * 37 < late < 2 * 45
    assert min(_at(times, cwnd, t) for t in np.arange(1.5, HORIZON_S, 0.01)) >= 2 * 37


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_net_and_ns3_share_startup_drain_and_probe_bw_window():
    data = _short()
    net, ns3 = lens_trace(NetLens(), data), lens_trace(Ns3Lens(), data)
    (peak_net, drop_net, late_net), (peak_ns3, drop_ns3, late_ns3) = (
        _shape(*_window(trace)) for trace in (net, ns3))
    assert abs(peak_net - peak_ns3) <= 1
    assert abs(drop_net - drop_ns3) < 0.01  # DRAIN ends at the same instant (10 ms)
    assert abs(late_net - late_ns3) <= 1
    good_net, good_ns3 = (goodput_bps(trace)["f0"] for trace in (net, ns3))
    assert good_net == pytest.approx(good_ns3, rel=0.01)


# --------------------------------------------------------------------------- one flow, losses

#: A 20-packet buffer: STARTUP's overshoot ends in losses and a timeout (at 1.36 s in both
#: lenses), PROBE_BW's 1.25 phases in a few losses each.
SMALL_BUFFER = 20


def _small_buffer() -> dict:
    data = _short()
    data["links"][0]["ab"]["queue"]["limit"] = SMALL_BUFFER
    return data


def test_net_timeout_resends_only_what_the_receiver_does_not_hold():
    """ns-3 keeps its scoreboard across a timeout; so does BBR's sender here: it
    retransmits no more segments than the queue dropped (the base sender's go-back-N
    sent the held ones again too, 182 retransmissions for 137 drops in 2.4 s)."""
    trace = lens_trace(NetLens(), _small_buffer())
    counts = trace.events("f0").groupby("event").size()
    assert counts["timeout"] >= 1 and counts["drop"] > 50
    assert counts["retransmit"] <= counts["drop"]


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_net_and_ns3_share_the_startup_timeout_and_goodput_through_a_small_buffer():
    data = _small_buffer()
    net, ns3 = lens_trace(NetLens(), data), lens_trace(Ns3Lens(), data)
    timeouts = [trace.events("f0", "timeout")["time_s"].to_numpy() for trace in (net, ns3)]
    assert len(timeouts[0]) == len(timeouts[1]) == 1
    assert abs(timeouts[0][0] - timeouts[1][0]) < 0.005
    good_net, good_ns3 = (goodput_bps(trace)["f0"] for trace in (net, ns3))
    assert good_net == pytest.approx(good_ns3, rel=0.05)


# --------------------------------------------------------------------------- sack_after_timeout


class _TwinParams(BbrParams):
    variant: Literal["bbr_twin"]  # type: ignore[assignment]


@pytest.fixture
def bbr_twin():
    """BBR registered again as ``bbr_twin`` with ``keeps_sack_after_timeout`` as given:
    what the lenses run follows the registration, not the name."""
    def register(keeps: bool) -> None:
        register_variant("bbr_twin", _TwinParams, bbr_module._sender, recovery="newreno",
                         ns3=bbr_module._ns3, checks={"net": bbr_module._net_checks},
                         keeps_sack_after_timeout=keeps, replace=True)
    yield register
    variant_registry._REGISTRY.pop("bbr_twin", None)


def _timeout_rules(variant: str, setting: str) -> tuple[str, str, bool]:
    """A flow's rule after a timeout under ``tcp.sack_after_timeout: setting``: the
    flow's own, the ns3 lens's ``ForgetSack`` and the net lens's ``sack_keep``."""
    scenario = dumbbell(pairs=1, variant=variant, horizon_s=2.0,
                        tcp={"sack": True, "sack_after_timeout": setting})
    (flow,) = scenario.concrete_flows()
    plan = _flow_plan(flow, 0, 0.0, 0.0)
    return (flow.sack_after_timeout, dict(plan.socket_attributes)["ForgetSack"],
            sender_config(flow, 0, 1).sack_keep)


@pytest.mark.parametrize("setting", ["forget", "keep"])
def test_bbr_keeps_its_scoreboard_after_a_timeout_in_both_lenses_whatever_the_option(setting):
    assert variant_spec("bbr").keeps_sack_after_timeout
    assert _timeout_rules("bbr", setting) == ("keep", "false", True)
    assert _timeout_rules("cubic", setting) == (setting, str(setting == "forget").lower(),
                                                setting == "keep")


def test_the_lenses_read_the_registration_not_the_variant_name(bbr_twin):
    bbr_twin(True)
    assert _timeout_rules("bbr_twin", "forget") == ("keep", "false", True)
    bbr_twin(False)
    assert _timeout_rules("bbr_twin", "forget") == ("forget", "true", False)
    assert _timeout_rules("bbr_twin", "keep") == ("keep", "false", True)


def test_bbr_builds_the_same_sender_under_either_setting():
    """BBR's own keep rules replace the base sender's ``sack_keep`` ones: the sender the
    net lens ran under the default (``forget``) is the one it runs now under either."""
    def shape(keep: bool) -> tuple:
        net = bbr_sender_net(SenderConfig(flow=0, dst=1, variant="sack", sack_keep=keep))
        return (sorted((n, t.guard) for n, t in net.transitions.items()),
                sorted(repr(a) for n in net.transitions for a in net.arcs_of(n)))
    assert shape(True) == shape(False)


# --------------------------------------------------------------------------- finite and paced

#: 1000 segments of 1448 B: STARTUP, DRAIN and part of PROBE_BW before the transfer ends.
TRANSFER_BYTES = 1000 * 1448
#: Half the bottleneck's rate: the application, not the path, limits the flow.
APP_RATE_BPS = 5e6


def _transfer_end_s(trace):
    return float(trace.events("f0", "deliver")["time_s"].max())


def _windows_at(trace, instants):
    times, cwnd = _window(trace)
    return np.array([_at(times, cwnd, t) for t in instants])


def test_net_runs_a_finite_and_a_paced_bbr_flow():
    """The net lens takes BBR flows with ``bytes`` and ``app_rate_bps`` (it refused them):
    the transfer ends within 1.4 s; the paced flow's goodput is the application's rate."""
    data = _short()
    data["flows"][0]["bytes"] = TRANSFER_BYTES
    finite = lens_trace(NetLens(), data)
    assert len(finite.events("f0", "deliver")) == 1000 and _transfer_end_s(finite) < 1.4
    data = _short()
    data["flows"][0]["app_rate_bps"] = APP_RATE_BPS
    paced = lens_trace(NetLens(), data)
    assert goodput_bps(paced)["f0"] == pytest.approx(APP_RATE_BPS, rel=0.03)


def test_a_paced_application_never_marks_the_connection_app_limited():
    """ns-3's ``Send`` checks for less than a segment unsent after it queued the write, and
    the application writes whole segments: none of the writes of a 5 Mbit/s application
    over 1 s marks the connection (checked after each ``produce``). Checked before the
    write, as Linux does, 401 of its 413 writes would."""
    data = _short()
    data["flows"][0]["app_rate_bps"] = APP_RATE_BPS
    data["horizon_s"] = 1.0
    sim = Simulator(scenario_net(validate_scenario(data)), seed=1)
    writes = marked = 0
    while (firing := sim.step()) is not None and sim.now <= 1.0:
        if firing.transition == "flow0.snd.produce":
            writes += 1
            marked += sim.marking_dict()["flow0.snd.rate"][0].value.app_limited_until != 0
    assert writes > 400 and marked == 0


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_net_and_ns3_end_a_finite_bbr_transfer_together():
    """1000 segments on the 10 Mbit/s, 42 ms path: the last one is delivered within 1 ms
    in both lenses (1.330 s, measured); the window is the same in STARTUP and DRAIN
    (within a segment), and in PROBE_BW within the 1.25 phase's 2 segments (its start is
    a random draw in each lens) and half a segment."""
    data = _short()
    data["flows"][0]["bytes"] = TRANSFER_BYTES
    net, ns3 = lens_trace(NetLens(), data), lens_trace(Ns3Lens(), data)
    assert abs(_transfer_end_s(net) - _transfer_end_s(ns3)) < 0.001
    early, late = (0.2, 0.5, 0.7), (0.8, 1.0, 1.3)
    assert np.abs(_windows_at(net, early) - _windows_at(ns3, early)).max() <= 1.0
    assert np.abs(_windows_at(net, late) - _windows_at(ns3, late)).max() <= 2.5


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_net_and_ns3_share_a_paced_bbr_flow():
    """An application writing at 5 Mbit/s on the 10 Mbit/s path for 4 s: goodput within
    1 %, and the window (STARTUP's, then 2 BDP of the application's rate) within a
    segment at each instant."""
    data = _short()
    data["flows"][0]["app_rate_bps"] = APP_RATE_BPS
    net, ns3 = lens_trace(NetLens(), data), lens_trace(Ns3Lens(), data)
    good_net, good_ns3 = (goodput_bps(trace)["f0"] for trace in (net, ns3))
    assert good_net == pytest.approx(good_ns3, rel=0.01)
    instants = (0.2, 0.5, 1.0, 2.0, 3.9)
    assert np.abs(_windows_at(net, instants) - _windows_at(ns3, instants)).max() <= 1.0


# --------------------------------------------------------------------------- property library

ONE_FLOW = "scenarios/verification/one_flow.yaml"


def test_property_library_explores_a_finite_bbr_flow():
    """``tcpn check --property all --segments 3 --losses 1`` on one BBR flow (it refused
    finite flows, and its actions drew from a generator): every property holds but
    ``flight_within_windows``, whose counterexample is BBR's resend after a timeout that
    skips the segment the receiver holds (ns-3's rule): ``nxt - una`` counts that SACKed
    segment, two against a window of one, where the sender counts one in flight."""
    data = load_scenario(ONE_FLOW).model_dump(exclude_unset=True)
    data["flows"][0]["variant"] = "bbr"
    data["tcp"] = {**data.get("tcp", {}), "sack": True}
    scenario = validate_scenario(data)
    prepared = property_net(scenario, segments=3, losses=1)
    assert any(name.endswith(f"snd.new_ack{PHASE_SUFFIX}5") for name in prepared.net.transitions)
    results = {r.property.name: r for r in verify_all(scenario, "all", segments=3, losses=1,
                                                      prepared=prepared)}
    answers = {name: r.answer for name, r in results.items() if r.answer != "n/a"}
    assert answers == {"delivered_once_in_order": "true", "no_deadlock_but_completion": "true",
                       "completes": "true", "flight_within_windows": "false",
                       "queue_within_limit": "true", "ssthresh_at_least_2": "true",
                       "handshake_settles": "true"}
    last = results["flight_within_windows"].verdict.evidence.stem[-1]
    assert last.transition == "flow0.snd.send"
    tcb = last.marking["flow0.snd.tcb"][0]
    assert (tcb.una, tcb.nxt, tcb.cwnd, tcb.sacked) == (1, 3, 1.0, ((2, 3),))
    assert in_flight_segments(tcb, 3) == 1


# --------------------------------------------------------------------------- 100 Mbit/s

REFERENCE_100M = "scenarios/reference/bbr_2flows_100m.yaml"


def _pacing_mbps(trace, t: float, span_s: float = 0.02) -> float:
    """The pacing rate as the sender's segments show it: one segment over the median gap
    between the segments it sends in ``[t, t + span_s)`` (BBR is paced, and limited by
    its pacing rate once its window is twice the BDP; neither lens traces the rate)."""
    sent = trace.events("f0", ("send", "retransmit"))["time_s"].to_numpy()
    sent = np.sort(sent[(sent >= t) & (sent < t + span_s)])
    return 1448 * 8 / float(np.median(np.diff(sent))) / 1e6 if len(sent) > 2 else np.nan


@pytest.mark.slow
@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_net_and_ns3_share_cwnd_and_pacing_rate_at_100_mbps():
    """One flow of bbr_2flows_100m for 4 s (BDP about 367 segments, 31 000 segments
    sent): the same STARTUP peak (1067 segments) within a segment, DRAIN ending within
    10 ms, then PROBE_BW: the window every 0.25 s within 2.5 segments (2 BDP plus the
    quanta, and 2 more in a 1.25 phase: each lens draws its first phase, so one may be
    in a 1.25 phase when the other is not), and the pacing rate of each gain (the 10th
    percentile over PROBE_BW: 0.75; the median: 1; the 90th: 1.25) within 1 %: one
    bandwidth estimate, one rate per gain."""
    data = load_scenario(REFERENCE_100M).model_dump()
    data["flows"] = data["flows"][:1]
    data["flows"][0]["start_s"] = 0.0
    data["horizon_s"] = HORIZON_S
    data["measure"] = {"warmup_s": 0.0, "bin_s": 0.5}
    net, ns3 = lens_trace(NetLens(), data), lens_trace(Ns3Lens(), data)
    (tn, wn), (ts, ws) = _window(net), _window(ns3)
    (peak_net, drop_net, _), (peak_ns3, drop_ns3, _) = _shape(tn, wn), _shape(ts, ws)
    assert peak_net > 2.89 * 367 and abs(peak_net - peak_ns3) <= 1
    assert drop_net < 1.0 and abs(drop_net - drop_ns3) < 0.01
    for t in np.arange(1.0, HORIZON_S, 0.25):
        assert abs(_at(tn, wn, t) - _at(ts, ws, t)) <= 2.5, (t, _at(tn, wn, t), _at(ts, ws, t))
    probe_bw = np.arange(1.5, HORIZON_S, 0.01)
    rates = [np.array([_pacing_mbps(trace, t) for t in probe_bw]) for trace in (net, ns3)]
    for q in (10, 50, 90):
        at_net, at_ns3 = (np.nanpercentile(r, q) for r in rates)
        assert at_net == pytest.approx(at_ns3, rel=0.01), (q, at_net, at_ns3)
    assert np.nanpercentile(rates[1], 50) == pytest.approx(0.99 * 100 * 1448 / 1502, rel=0.02)
    good_net, good_ns3 = (goodput_bps(trace)["f0"] for trace in (net, ns3))
    assert good_net == pytest.approx(good_ns3, rel=0.01)
