"""Which loss recovery each variant runs on, and that the variants see all of it.

Vegas and its fixes, Westwood+ and TCP-L extend a loss-based sender
(:mod:`tcpn.models.components.extend`); these tests check, on nets and on runs, that an
extension follows every transition of its base that retransmits or takes an ACK of new
data (a later partial ACK of a NewReno recovery as much as the first), and that SACK
recovery reaches every variant whose recovery is NewReno's, as in ns-3.

Path: A -(1 Gbit/s, 20 ms)- R -(10 Mbit/s, 20 ms)- B, MSS 1000 bytes, one ACK per segment:
the RTT of an empty path is about 81 ms and the path holds about 100 segments, so the
window of about 20 segments in which four segments are lost meets no queue.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tcpn.lenses import evaluate, make_run
from tcpn.models.components.sender import NEW_DATA_ACKS, SenderConfig, retransmissions
from tcpn.models.components.variants import recovery_variant, variant_sender_net
from tcpn.models.scenario import ScenarioError, validate_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import Simulator
from tcpn.petrinets.net import ArcKind

MSS = 1000
#: Four segments of one window lost on the wired first hop (so TCP-L's last hop reports no
#: failure and it always reacts, as NewReno).
LOST = [20, 22, 24, 26]


def lossy_path(variant, *, sack, params=None, lost=LOST, initial_cwnd=4, segments=80):
    flow = {"id": "f", "src": "A", "dst": "B", "variant": variant, "bytes": segments * MSS}
    if params:
        flow["params"] = params
    return validate_scenario({
        "name": "recovery", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "R", "rate_bps": 1e9, "delay_s": 0.02,
                   "ab": {"errors": {"kind": "list", "packets": lost}}},
                  {"a": "R", "b": "B", "rate_bps": 1e7, "delay_s": 0.02}],
        "flows": [flow],
        "tcp": {"segment_size_bytes": MSS, "delack_count": 1, "sack": sack,
                "handshake": False, "limited_transmit": True, "timestamps": True,
                "initial_cwnd_segments": initial_cwnd, "initial_ssthresh_segments": 64}})


def events_of(result, kind):
    events = result.trace.flow_events
    return events[events.event == kind]


def final_token(scenario, place):
    run = make_run(scenario)
    sim = Simulator(compose(scenario, run.flows).net, seed=run.lens_seed)
    sim.run(until=scenario.horizon_s)
    (token,) = list(sim.marking[sim.compiled.place_index[place]])
    return token


@pytest.mark.parametrize(("variant", "params", "sack", "base"), [
    ("newreno", None, True, "sack"), ("newreno", None, False, "newreno"),
    ("reno", None, True, "reno"),
    ("westwood_plus", None, True, "sack"), ("westwood_plus", None, False, "newreno"),
    ("vegas", None, True, "sack"), ("vegas", {"recovery": "reno"}, True, "reno"),
    ("modified_vegas", None, False, "newreno"),
    ("adaptive_vegas", {"recovery": "newreno"}, False, "newreno"),
    ("tcp_l", None, False, "newreno"), ("tcp_l", {"base": "reno"}, False, "reno"),
    ("tcp_l", None, True, "sack"), ("tcp_l", {"base": "reno"}, True, "reno"),
    ("cubic", None, True, "sack"), ("cubic", None, False, "newreno"),
])
def test_recovery_of_each_variant(variant, params, sack, base):
    class Params:
        pass
    p = Params()
    for key, value in (params or {}).items():
        setattr(p, key, value)
    assert recovery_variant(variant, sack, p if params else None) == base


@pytest.mark.parametrize("base", ["newreno", "sack"])
def test_westwood_feeds_every_ack_of_new_data(base):
    net = variant_sender_net("westwood_plus", None, SenderConfig(flow=0, dst=1, variant=base))
    takes_new_data = [t for t in NEW_DATA_ACKS if t in net.transitions]
    assert "later_partial_ack" in takes_new_data
    for tname in takes_new_data:
        assert any(a.place == "westwood" and a.kind is ArcKind.INPUT
                   for a in net.arcs_of(tname)), tname


@pytest.mark.parametrize(("variant", "base"), [
    ("vegas", "reno"), ("vegas", "newreno"), ("modified_vegas", "sack"),
    ("adaptive_vegas", "sack")])
def test_vegas_forgets_every_retransmitted_segment(variant, base):
    # Karn's rule: a segment sent twice gives no sample, whichever transition resent it
    net = variant_sender_net(variant, None, SenderConfig(flow=0, dst=1, variant=base))
    resent = retransmissions(net)
    assert "fast_retransmit" in resent
    for tname, seq in resent.items():
        (update,) = [a.inscription for a in net.arcs_of(tname)
                     if a.place == "vegas" and a.kind is ArcKind.OUTPUT]
        assert update.startswith("vegas_sent(") and update.endswith(f", {seq}, now, False)")


@pytest.mark.parametrize("sack", [False, True])
def test_tcp_l_counts_every_transmission_of_a_recovery(sack):
    # Four holes in one window. NewReno: fast retransmit of 20, then a partial ACK for each
    # of 22, 24, 26 (the first and two later ones), all retransmitting; SACK: fast
    # retransmit, then sack_retransmit for the holes. Loss_tcp must count all four: the
    # sender's own record equals what left it.
    scenario = lossy_path("tcp_l", sack=sack)
    result = evaluate(scenario, lens="net")
    retransmitted = events_of(result, "retransmit")
    assert sorted(retransmitted["seq"] // MSS) == LOST
    assert len(events_of(result, "timeout")) == 0
    state = final_token(scenario, "flow0.snd.tcpl")
    assert state.retx == len(retransmitted) == 4
    assert state.sent == len(events_of(result, "send")) + len(retransmitted)


def test_tcp_l_on_sack_with_a_clean_last_hop_is_newreno_on_sack():
    # The losses are on the wired first hop: every report says Loss_link = 0, so
    # P_congestion = 1 > X at every loss and TCP-L reacts as its base, event for event.
    def trace(variant):
        result = evaluate(lossy_path(variant, sack=True), lens="net")
        events = result.trace.flow_events
        return (events[["time_s", "event", "seq"]].to_numpy().tolist(),
                result.trace.series("cwnd_bytes")[["time_s", "value"]].to_numpy().tolist())
    assert trace("tcp_l") == trace("newreno")


def recovery(variant, sack, params=None):
    """The run and its retransmissions (four holes, each resent once, no timeout)."""
    result = evaluate(lossy_path(variant, sack=sack, params=params), lens="net")
    resent = events_of(result, "retransmit")
    assert sorted(resent["seq"] // MSS) == LOST, (variant, sack)
    assert len(events_of(result, "timeout")) == 0, (variant, sack)
    return result, resent.time_s.to_numpy()


def test_vegas_on_newreno_repairs_a_hole_per_round_trip_on_sack_all_in_one():
    # RFC 6582 NewReno learns of the next hole from each partial ACK: one retransmission per
    # round trip (> the empty path's 80 ms). RFC 6675 sees every hole in the SACK blocks
    # and (Vegas's window being well above the pipe left) resends them all before the first
    # partial ACK, the one the first retransmission brings back.
    _, times = recovery("vegas", False, {"recovery": "newreno"})
    assert all(np.diff(times) > 4 * 0.02)
    result, times = recovery("vegas", True, {"recovery": "newreno"})
    acks = events_of(result, "ack")
    first_partial = acks[(acks.time_s > times[0]) & (acks.seq > LOST[0] * MSS)].time_s.min()
    assert times[-1] < first_partial


def test_westwood_on_sack_enters_at_ssthresh_and_repairs_sooner():
    # RFC 6675 enters recovery at cwnd = ssthresh (NewReno inflates it by the duplicate-ACK
    # threshold). Westwood+'s ssthresh this early is small (the filter starts from zero),
    # so the pipe lets the holes out a few at a time, still sooner than one per round trip.
    _, newreno_times = recovery("westwood_plus", False)
    result, times = recovery("westwood_plus", True)
    assert times[-1] < newreno_times[-1]
    cwnd, ssthresh = (result.trace.series(v) for v in ("cwnd_bytes", "ssthresh_bytes"))
    assert cwnd[cwnd.time_s >= times[0]]["value"].iloc[0] == \
        ssthresh[ssthresh.time_s >= times[0]]["value"].iloc[0]
    newreno, _ = recovery("westwood_plus", False)
    cwnd, ssthresh = (newreno.trace.series(v) for v in ("cwnd_bytes", "ssthresh_bytes"))
    assert cwnd[cwnd.time_s >= newreno_times[0]]["value"].iloc[0] == \
        ssthresh[ssthresh.time_s >= newreno_times[0]]["value"].iloc[0] + 3 * MSS


def test_reno_recovery_of_the_vegas_study_ignores_sack():
    # Study S1's Vegas recovers as Reno, which has no scoreboard: SACK on or off, the
    # retransmissions (the receiver's SACK blocks only make the ACKs longer: the times move
    # by the extra serialisation, microseconds).
    def retransmits(sack):
        result = evaluate(lossy_path("vegas", sack=sack, params={"recovery": "reno"}),
                          lens="net")
        return events_of(result, "retransmit")[["time_s", "seq"]].to_numpy()
    with_sack, without = retransmits(True), retransmits(False)
    assert len(with_sack) and with_sack[:, 1].tolist() == without[:, 1].tolist()
    assert with_sack[:, 0] == pytest.approx(without[:, 0], abs=1e-4)


def test_unknown_recovery_is_refused_naming_the_field():
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.params\.recovery"):
        lossy_path("vegas", sack=False, params={"recovery": "tahoe"})


def _ssthresh_changes(variant_params, lost, lens="net"):
    """(time, ssthresh in segments) at each change, and the retransmission times, of a
    Vegas flow on ``lossy_path`` in ``lens``."""
    from tcpn.lenses.run import run_once

    scenario = lossy_path("vegas", sack=False, params=variant_params, lost=lost)
    result = run_once(scenario, lens, make_run(scenario))
    series = result.trace.flow_series
    changes = series[series["var"] == "ssthresh_bytes"]
    events = result.trace.flow_events
    resent = events[events.event == "retransmit"]
    return ([(round(float(t), 6), v / MSS)
             for t, v in zip(changes.time_s, changes.value, strict=True)],
            [round(float(t), 6) for t in resent.time_s])


def _ns3_or_skip(lens):
    from tcpn.lenses.ns3.loader import installed

    if lens == "ns3" and not installed():
        pytest.skip("pip install 'tcpn[ns3]'")


@pytest.mark.parametrize("lens", ["net", pytest.param("ns3", marks=pytest.mark.ns3)])
def test_ns2_vegas_cuts_the_window_by_a_quarter_once_per_window(lens):
    """``params.loss_cut: ns2`` is ns-2's ``Agent/TCP/Vegas``, in both lenses: at the fast
    retransmit of a window of 20 segments the window becomes 20 - 20 // 4 = 15 (Reno's
    halving: 10), and a second loss of the same window, retransmitted after the first
    recovery ended, is not cut again (ns-2: the segment left before the window last
    changed), where the halving halves again."""
    _ns3_or_skip(lens)
    base = {"recovery": "reno", "alpha": 1, "beta": 3}
    halved, _ = _ssthresh_changes({**base, "loss_cut": "halve"}, [40], lens)
    cut, _ = _ssthresh_changes({**base, "loss_cut": "ns2"}, [40], lens)
    assert [v for _, v in halved[1:]] == [10.0]
    assert [v for _, v in cut[1:]] == [15.0]
    assert halved[1][0] == cut[1][0]  # the same fast retransmit
    halved, resent_halve = _ssthresh_changes({**base, "loss_cut": "halve"}, [40, 45], lens)
    cut, resent_ns2 = _ssthresh_changes({**base, "loss_cut": "ns2"}, [40, 45], lens)
    assert len(resent_halve) == len(resent_ns2) == 2
    assert len(halved) == 3 and [v for _, v in cut[1:]] == [15.0]


@pytest.mark.ns3
def test_ns2_vegas_runs_the_same_in_both_lenses_through_a_timeout():
    """Six losses in a row end in a timeout; ns-2's Vegas restarts from two segments
    (both go at the timeout's instant) and the two lenses retransmit at the same instants
    with the same ssthresh changes."""
    _ns3_or_skip("ns3")
    params = {"recovery": "reno", "alpha": 1, "beta": 3, "loss_cut": "ns2"}
    lost = [40, 41, 42, 43, 44, 45]
    (net_ssthresh, net_resent), (ns3_ssthresh, ns3_resent) = (
        _ssthresh_changes(params, lost, lens) for lens in ("net", "ns3"))
    # the same instants within 20 us (ns-3 stamps each segment as it reaches the wire:
    # the second of a pair 8 us after the first at 1 Gbit/s)
    assert [v for _, v in net_ssthresh] == [v for _, v in ns3_ssthresh]
    assert np.allclose([t for t, _ in net_ssthresh], [t for t, _ in ns3_ssthresh], atol=2e-5)
    assert np.allclose(net_resent, ns3_resent, atol=2e-5)
    assert any(b - a < 2e-5 for a, b in itertools.pairwise(net_resent))  # two at once


def test_ns2_vegas_loss_cut_is_refused_where_it_cannot_run():
    """Without a scoreboard in ns-2's Vegas, SACK recovery is refused by both lenses,
    naming the field; ns-3's own TcpVegas (``law: ns3``) keeps its own reaction."""
    from tcpn.errors import InputError
    from tcpn.lenses.net import NetLens

    params = {"recovery": "newreno", "loss_cut": "ns2"}
    with pytest.raises(InputError, match=r"loss_cut ns2.*tcp\.sack"):
        NetLens().check(lossy_path("vegas", sack=True, params=params))
    NetLens().check(lossy_path("vegas", sack=False, params=params))
    with pytest.raises(ScenarioError, match="loss_cut"):
        lossy_path("vegas", sack=False, params={**params, "law": "ns3"})

