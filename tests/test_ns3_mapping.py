"""Scenario -> ns-3 plan mapping, checked without running ns-3."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcpn.errors import InputError
from tcpn.lenses.ns3 import Ns3Lens, scenario_plan
from tcpn.lenses.ns3.lens import PORT_BASE
from tcpn.lenses.ns3.loader import Ns3NotInstalled
from tcpn.models.components.congestion.vegas import MIN_ROUND_SAMPLES
from tcpn.models.scenario import dumbbell, load_scenario, validate_scenario


def _bottleneck(plan):
    (link,) = [link for link in plan.links if (link.a, link.b) == ("R1", "R2")]
    return link


def test_queue_kinds_map_to_ns3_queue_discs():
    cases = {
        "drop_tail": ({"kind": "drop_tail", "limit": 50},
                      ("tcpn::TailQueueDisc", {"Limit": "50", "Bytes": "false"})),
        "threshold": ({"kind": "threshold_ecn", "limit": 80, "k": 50},
                      ("tcpn::TailQueueDisc", {"MarkThreshold": "50.0"})),
        "sgpq": ({"kind": "sgpq", "threshold_bytes": 64, "buffer": "split"},
                 ("tcpn::TailQueueDisc", {"SmallBytes": "64", "SplitBuffer": "true"})),
        "policer": ({"kind": "token_bucket", "mode": "policer", "rate_bps": 5e5,
                     "depth_bytes": 16000, "limit": 3},
                    ("tcpn::TailQueueDisc", {"PolicerRate": "500000bps",
                                             "PolicerDepth": "16000", "Limit": "3"})),
        "shaper": ({"kind": "token_bucket", "rate_bps": 5e5, "depth_bytes": 16000,
                    "limit": 3},
                   ("ns3::TbfQueueDisc", {"Rate": "500000bps", "Burst": "16000",
                                          "MaxSize": "3p", "PeakRate": "0bps"})),
        "red": ({"kind": "red", "limit": 25, "max_p": 0.1, "ecn": True},
                ("ns3::RedQueueDisc", {"LInterm": "10.0", "UseEcn": "true",
                                       "MaxSize": "25p", "LinkBandwidth": "10000000bps",
                                       "LinkDelay": "0.02s"})),
    }
    for name, (queue, (type_id, expected)) in cases.items():
        tcp = {"segment_size_bytes": 500}
        plan = scenario_plan(dumbbell(pairs=1, horizon_s=1.0, queue=queue, tcp=tcp))
        mapped = _bottleneck(plan).queue_ab
        assert mapped.type_id == type_id, name
        assert expected.items() <= dict(mapped.attributes).items(), name


def test_flows_get_their_own_port_variant_and_options():
    s = dumbbell(pairs=2, variant="tahoe", horizon_s=2.0,
                 tcp={"segment_size_bytes": 1448, "sack": False, "ecn": True,
                      "initial_ssthresh_segments": 20})
    plan = scenario_plan(s, rng_run=9)
    assert plan.rng_run == 9
    assert [f.port for f in plan.flows] == [PORT_BASE, PORT_BASE + 1]
    assert [f.start_s for f in plan.flows] == [0.0, 0.1]
    flow = plan.flows[0]
    assert (flow.congestion, flow.recovery) == ("tcpn::NewReno", "tcpn::TahoeRecovery")
    options = dict(flow.socket_attributes)
    assert options["SegmentSize"] == "1448" and options["Sack"] == "false"
    assert options["UseEcn"] == "On" and options["InitialSlowStartThreshold"] == "28960"
    assert options["MinRto"] == "1.0s" and options["DelAckTimeout"] == "0.2s"
    assert plan.endpoint_devices() == (("S0", "R1"), ("D0", "R2"), ("S1", "R1"), ("D1", "R2"))


def test_westwood_and_errors():
    s = validate_scenario({
        "links": [{"a": "A", "b": "B", "rate_bps": 1e6, "delay_s": 0.01,
                   "ab": {"errors": {"unit": "packet", "rate": 0.01}},
                   "ba": {"errors": {"packets": [5, 2]}}}],
        "flows": [{"src": "A", "dst": "B", "variant": "westwood_plus",
                   "params": {"filter": "none"}}],
        "horizon_s": 1.0})
    plan = scenario_plan(s)
    assert plan.flows[0].congestion == "tcpn::WestwoodPlus"
    assert plan.flows[0].congestion_attributes == (("FilterType", "None"),)
    link = plan.links[0]
    assert (link.errors_ab.rate, link.errors_ab.per_byte) == (0.01, False)
    assert link.errors_ba.drop_list == (2, 5)


def test_cubic_maps_to_tcp_cubic_with_its_attributes():
    s = validate_scenario({
        "links": [{"a": "A", "b": "B", "rate_bps": 1e6, "delay_s": 0.01}],
        "flows": [{"src": "A", "dst": "B", "variant": "cubic",
                   "params": {"c": 0.5, "fast_convergence": False}}],
        "tcp": {"sack": True}, "horizon_s": 1.0})
    flow = scenario_plan(s).flows[0]
    assert flow.congestion == "ns3::TcpCubic"
    assert dict(flow.congestion_attributes) == {
        "C": "0.5", "Beta": "0.7", "FastConvergence": "false", "TcpFriendliness": "true",
        "HyStart": "false"}
    assert flow.recovery == "ns3::TcpClassicRecovery"


def test_features_ns3_cannot_express_are_named():
    s = validate_scenario({
        "links": [{"a": "A", "b": "R", "rate_bps": 1e6, "delay_s": 0.01},
                  {"a": "R", "b": "B", "rate_bps": 1e6, "delay_s": 0.01}],
        "flows": [{"id": "x", "src": "A", "dst": "B", "variant": "newreno", "start_s": 0.5,
                   "tcp": {"handshake": False}},
                  {"id": "y", "src": "A", "dst": "R", "variant": "newreno",
                   "tcp": {"ip_header_bytes": 24}},
                  {"id": "z", "src": "A", "dst": "B", "variant": "newreno",
                   "tcp": {"sack": True, "limited_transmit": False}}],
        "horizon_s": 1.0})
    with pytest.raises(InputError) as info:
        Ns3Lens().check(s)
    message = str(info.value)
    for part in ("flows[0].tcp.handshake: false", "flows start at 2 different times",
                 "flows[1] (y): tcp header sizes", "end node R has 2 links",
                 "flows[2] (z): tcp.limited_transmit: false with SACK"):
        assert part in message


def test_s2_maps_with_its_approximations_named():
    """Study S2's scenario (no L2 header, no handshake, the slow-start reaction): each
    direction's DataRate makes its packets' serialisation the scenario's, the connection
    opens before its start on a clock one second ahead, and the plan names both
    approximations."""
    from tcpn.reports.studies.s2 import scenario_mapping

    s = validate_scenario(scenario_mapping("th50", 0.2))
    plan = scenario_plan(s)
    flow = plan.flows[0]
    assert flow.socket == "tcpn::Rfc5681Socket" and flow.sink_socket == "tcpn::TcpnSocket"
    for option in ("EcnSlowStart", "ForgetHandshakeRtt"):
        assert (option, "true") in flow.socket_attributes
    assert ("DelayFirstAck", "true") in flow.sink_attributes
    assert plan.time_offset_s == 1.0 and flow.first_write_s == 1.0 and flow.start_s < 1.0
    assert plan.horizon_s == s.horizon_s + 1.0 and flow.receiver_clock_offset_s == -1.0
    access, router = plan.links
    assert router.device_rate_ab_bps == pytest.approx(router.rate_bps * 502 / 500)
    assert router.device_rate_ba_bps == pytest.approx(router.rate_bps * 42 / 40)
    assert router.errors_ab.skip_handshake == (0,) and router.errors_ab.l2_bytes == 0
    assert access.device_rate_ab_bps == pytest.approx(access.rate_bps * 502 / 500)
    notes = " ".join(plan.notes)
    assert "links[1].l2_header_bytes: 0" in notes and "tcp.handshake: false" in notes
    assert scenario_plan(validate_scenario(scenario_mapping("th50", 0.2, "halve"))
                         ).flows[0].socket_attributes.count(("EcnSlowStart", "true")) == 0


REFERENCE = Path(__file__).resolve().parent.parent / "scenarios" / "reference"


NS2_ECHO = ("EcnNs2Reaction", "true")


def test_the_ns2_reaction_to_an_ecn_echo_is_built_for_the_loss_based_senders():
    """``tcp.ecn_cwr: ns2`` (the default) is ns-2's reaction, which the ns3 lens builds on
    tcpn's socket (``EcnNs2Reaction``) for the loss-based ECN senders, with no note;
    ``ns3`` (what ns-3 runs) and flows without ECN do not ask for it; DCTCP keeps its own
    reaction (ns-3's CWR state in both lenses, no note); a congestion control without
    ns-2's rule here (CUBIC with ECN) keeps ns-3's, and the plan's notes name its flows."""
    s = load_scenario(REFERENCE / "red_ecn.yaml")
    plan = scenario_plan(s)
    assert all(NS2_ECHO in f.socket_attributes for f in plan.flows)
    assert not any("ecn_cwr" in n for n in plan.notes)
    data = s.model_dump(mode="json", exclude_none=True)
    data["tcp"]["ecn_cwr"] = "ns3"
    plan = scenario_plan(validate_scenario(data))
    assert not any(NS2_ECHO in f.socket_attributes for f in plan.flows)
    assert not any("ecn_cwr" in n for n in plan.notes)
    for name in ("newreno_2flows.yaml", "dctcp_2flows.yaml"):
        plan = scenario_plan(load_scenario(REFERENCE / name))
        assert not any(NS2_ECHO in f.socket_attributes for f in plan.flows), name
        assert not any("ecn_cwr" in n for n in plan.notes), name
    cubic = load_scenario(REFERENCE / "cubic_2flows.yaml").model_dump(mode="json",
                                                                     exclude_none=True)
    cubic["tcp"]["ecn"] = True
    plan = scenario_plan(validate_scenario(cubic))
    assert not any(NS2_ECHO in f.socket_attributes for f in plan.flows)
    assert "tcp.ecn_cwr: ns2 (flows f0, f1)" in " ".join(plan.notes)


def test_tcpn_variants_map_to_their_cpp_classes():
    s = validate_scenario({
        "links": [{"a": "A", "b": "R", "rate_bps": 1e6, "delay_s": 0.01},
                  {"a": "R", "b": "B", "rate_bps": 1e6, "delay_s": 0.01,
                   "ab": {"errors": {"unit": "packet", "rate": 0.01}}}],
        "flows": [{"id": "m", "src": "A", "dst": "B", "variant": "modified_vegas",
                   "params": {"alpha": 1, "beta": 3, "recovery": "newreno"},
                   "receiver_clock_offset_s": 12.5,
                   "receiver_clock_skew": 1e-4},
                  {"id": "a", "src": "A", "dst": "B", "variant": "adaptive_vegas",
                   "params": {"weight": 0.25, "recovery": "newreno"}},
                  {"id": "l", "src": "A", "dst": "B", "variant": "tcp_l",
                   "params": {"report_interval_s": 0.5}}],
        "horizon_s": 1.0})
    Ns3Lens().check(s)  # the receiver clock skew is modelled on the wire
    modified, adaptive, tcp_l = scenario_plan(s).flows
    assert (modified.congestion, dict(modified.congestion_attributes)) == (
        "tcpn::ModifiedVegas", {"Alpha": "1", "Beta": "3", "Gamma": "1",
                                "MinRoundSamples": str(MIN_ROUND_SAMPLES)})  # the net's
    assert (modified.receiver_clock_rate, modified.receiver_clock_offset_s) == (1.0001, 12.5)
    assert adaptive.congestion == "tcpn::AdaptiveVegas"
    assert dict(adaptive.congestion_attributes)["Weight"] == "0.25"
    assert (tcp_l.congestion, tcp_l.recovery) == ("tcpn::TcpL", "ns3::TcpClassicRecovery")
    # the receiver reports the frames of the data's last hop, R->B
    assert (tcp_l.report_interval_s, tcp_l.report_link) == (0.5, "R->B")
    assert modified.report_interval_s == adaptive.report_interval_s == 0.0


def test_what_tcpn_variants_cannot_run_in_ns3_is_named():
    s = validate_scenario({
        "links": [{"a": "A", "b": "B", "rate_bps": 1e6, "delay_s": 0.01}],
        "flows": [{"id": "m", "src": "A", "dst": "B", "variant": "modified_vegas",
                   "tcp": {"timestamps": False}},
                  {"id": "k", "src": "A", "dst": "B", "variant": "modified_vegas",
                   "params": {"skew_estimation": True, "recovery": "newreno"}},
                  {"id": "v", "src": "A", "dst": "B", "variant": "vegas",
                   "params": {"recovery": "reno"}},
                  {"id": "r", "src": "A", "dst": "B", "variant": "tcp_l",
                   "params": {"base": "reno"}},
                  {"id": "e", "src": "A", "dst": "B", "variant": "tcp_l",
                   "tcp": {"ecn": True}}],
        "horizon_s": 1.0})
    with pytest.raises(InputError) as info:
        Ns3Lens().check(s)
    message = str(info.value)
    for part in ("flows[0] (m): variant modified_vegas reads the receiver's TSval",
                 "flows[1] (k): params.skew_estimation", "flows[4] (e): tcp.ecn"):
        assert part in message
    # Reno recovery runs on tcpn's socket (RenoRecovery)
    for runs in ("flows[1] (k): params.recovery", "flows[2] (v)", "flows[3] (r)"):
        assert runs not in message


def test_missing_extra_says_how_to_install():
    assert str(Ns3NotInstalled()).endswith("pip install 'tcpn[ns3]'")


def test_missing_bindings_are_a_refusal_that_crosses_a_process_pool(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ns-3's bindings the lens refuses at check time (a study records the
    refusal), and the error survives pickling (a worker's error reaches its parent)."""
    import pickle

    from tcpn.lenses.ns3 import loader

    monkeypatch.setattr(loader, "installed", lambda: False)
    with pytest.raises(Ns3NotInstalled, match=r"pip install 'tcpn\[ns3\]'"):
        Ns3Lens().check(dumbbell(pairs=1, horizon_s=1.0))
    error = pickle.loads(pickle.dumps(Ns3NotInstalled()))
    assert "tcpn[ns3]" in str(error)
