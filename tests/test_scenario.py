"""The scenario schema: ns-3 defaults, errors that name field and line, routes, hash, seeds."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from tcpn.limits import using_limits
from tcpn.models import scenario as scenario_module
from tcpn.models.components.congestion.tcp_l import TcpLParams
from tcpn.models.components.congestion.vegas import AdaptiveVegasParams, VegasParams
from tcpn.models.components.congestion.westwood import WestwoodPlusParams
from tcpn.models.routing import RouteTable
from tcpn.models.scenario import (
    RateErrors,
    Red,
    Scenario,
    ScenarioError,
    TcpConfig,
    TokenBucket,
    dumbbell,
    load_scenario,
    parking_lot,
    parse_scenario,
)

REPO = Path(__file__).resolve().parent.parent
DUMBBELL = REPO / "scenarios" / "dumbbell_newreno.yaml"

BASE = """\
name: t
links:
  - {a: S, b: R, rate_bps: 1.0e+7, delay_s: 0.001}
  - {a: R, b: D, rate_bps: 1.0e+6, delay_s: 0.02}
flows:
  - {src: S, dst: D, variant: newreno}
horizon_s: 10
"""


def _error(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "bad.yaml")
    return str(info.value)


def test_shipped_dumbbell_is_the_issue_experiment():
    s = load_scenario(DUMBBELL)
    assert s.name == "dumbbell_newreno"
    assert s.horizon_s == 60.0
    assert [f.variant for f in s.flows] == ["newreno", "newreno"]
    bottleneck = s.link_between("R1", "R2")
    assert (bottleneck.rate_bps, bottleneck.delay_s) == (10e6, 0.02)
    for direction in (bottleneck.ab, bottleneck.ba):
        assert (direction.queue.kind, direction.queue.limit, direction.queue.unit) == (
            "drop_tail", 100, "packets")
    access = [link for link in s.links if link is not bottleneck]
    assert {(x.rate_bps, x.delay_s) for x in access} == {(100e6, 0.001)}
    assert s.tcp.data_packet_bytes == 1500  # MSS 1448 + 20 IP + 20 TCP + 12 timestamps


def test_defaults_are_ns3_344():
    # ns3-notes.md §1 (TcpSocket / TcpSocketBase attributes of ns-3.44)
    tcp = TcpConfig()
    assert tcp.segment_size_bytes == 536
    assert tcp.initial_cwnd_segments == 10
    assert tcp.delack_count == 2
    assert tcp.delack_timeout_s == 0.2
    assert tcp.min_rto_s == 1.0
    assert (tcp.sack, tcp.timestamps, tcp.window_scaling, tcp.ecn) == (True, True, True, False)
    assert (tcp.rcv_buf_bytes, tcp.snd_buf_bytes) == (131072, 131072)
    assert (tcp.limited_transmit, tcp.dupack_threshold) == (True, 3)
    assert tcp.initial_ssthresh_segments is None
    red = Red()
    assert (red.min_th, red.max_th, red.limit, red.q_weight, red.max_p) == (5, 15, 25, 0.002,
                                                                            0.02)
    assert (red.gentle, red.wait, red.ecn, red.hard_drop) == (True, True, False, True)
    tbf = TokenBucket()
    assert (tbf.depth_bytes, tbf.rate_bps, tbf.limit) == (125000, 1e6, 1000)
    assert RateErrors().unit == "byte"


def test_docs_list_every_default(shared_dir):
    text = (REPO / "docs" / "scenarios.md").read_text()
    for model in (TcpConfig, Red, TokenBucket, scenario_module.DropTail, scenario_module.Sgpq,
                  scenario_module.ThresholdEcn, scenario_module.Link,
                  VegasParams, AdaptiveVegasParams, WestwoodPlusParams, TcpLParams,
                  scenario_module.Flow, scenario_module.Measure,
                  scenario_module.TraceSelection, RateErrors):
        for name in model.model_fields:
            if name not in ("kind", "variant"):
                assert re.search(rf"[`.]{name}`", text), f"docs/scenarios.md lacks {name}"


def test_packet_sizes():
    assert TcpConfig(segment_size_bytes=1448).data_packet_bytes == 1500
    assert TcpConfig(segment_size_bytes=500, timestamps=False).data_packet_bytes == 540
    assert TcpConfig(timestamps=False).ack_packet_bytes == 40
    assert TcpConfig().ack_packet_bytes == 52


def test_byte_error_model_per_packet():
    # PER = 1 - (1 - BER)^size
    assert RateErrors(unit="byte", rate=1e-4).packet_error_rate(1500) == pytest.approx(
        1 - (1 - 1e-4) ** 1500)
    assert RateErrors(unit="packet", rate=0.01).packet_error_rate(1500) == 0.01


@pytest.mark.parametrize(("edit", "expected"), [
    (("delay_s: 0.02", "delay_s: -0.02"),
     "bad.yaml:4: links[1].delay_s: Input should be greater than or equal to 0"),
    (("delay_s: 0.02}", "delay_s: 0.02, errors: {unit: packet, rate: 1.5}}"),
     "bad.yaml:4: links[1].errors.rate: Input should be less than or equal to 1"),
    (("variant: newreno", "variant: hybla"),
     "bad.yaml:6: flows[0].variant: unknown variant 'hybla'; registered: adaptive_vegas"),
    (("dst: D,", "dst: X,"), "bad.yaml:6: flows[0].dst: unknown node 'X'"),
    (("horizon_s: 10", "horizon_s: 10\nnodes: [S, R, D, S]"),
     "bad.yaml:8: nodes[3]: node 'S' is listed twice"),
    (("delay_s: 0.02}", "delay_s: 0.02, queue: {kind: drop_tail, limit: 500, unit: bytes}}"),
     "bad.yaml:4: links[1].queue.limit: a queue of 500 bytes cannot hold one 588-byte"),
    (("delay_s: 0.02}", "delay_s: 0.02, queue: {kind: drop_tail, limit: 0}}"),
     "bad.yaml:4: links[1].queue.limit: Input should be greater than 0"),
    (("newreno}", "newreno, start_s: 12}"),
     "bad.yaml:7: horizon_s: horizon_s (10) ends before any flow can start"),
    (("variant: newreno}", "variant: vegas, params: {alpha: 3, beta: 2}}"),
     "bad.yaml:6: flows[0].params.beta: beta (2) must be >= alpha (3)"),
    (("variant: newreno}", "variant: vegas, params: {weight: 0.5}}"),
     "bad.yaml:6: flows[0].params.weight: Extra inputs are not permitted"),
    (("rate_bps: 1.0e+6,", "rate_bsp: 1.0e+6,"),
     "bad.yaml:4: links[1].rate_bsp: Extra inputs are not permitted"),
    (("delay_s: 0.02}", "delay_s: 0.02, queue: {kind: red, min_th: 20}}"),
     "bad.yaml:4: links[1].queue.max_th: max_th (15) must not be below min_th (20)"),
    (("delay_s: 0.02}", "delay_s: 0.02, queue: {kind: red, min_th: 15}}"),
     "bad.yaml:4: links[1].queue.gentle: min_th = max_th (15) is step marking: it needs "
     "gentle: false"),
    (("delay_s: 0.02}", "delay_s: 0.02, queue: {kind: fq_codel}}"),
     "bad.yaml:4: links[1].queue"),
])
def test_bad_values_name_field_and_line(edit, expected):
    old, new = edit
    assert old in BASE
    assert expected in _error(BASE.replace(old, new, 1))


def test_block_style_lines():
    text = BASE + "tcp:\n  segment_size_bytes: 1000\n  delack_timeout_s: -1\n"
    assert "bad.yaml:10: tcp.delack_timeout_s: Input should be greater than" in _error(text)


def test_unconnected_flow():
    text = BASE.replace("flows:", "  - {a: X, b: Y, rate_bps: 1.0e+6, delay_s: 0.01}\nflows:")
    text = text.replace("dst: D,", "dst: Y,")
    assert "bad.yaml:7: flows[0].dst: no route from S to Y: the nodes are not connected" in \
        _error(text)


def test_ambiguous_route_is_refused():
    text = BASE.replace("flows:", "  - {a: S, b: Q, rate_bps: 1.0e+6, delay_s: 0.01}\n"
                                  "  - {a: Q, b: D, rate_bps: 1.0e+6, delay_s: 0.01}\nflows:")
    assert "ambiguous route from S to D: S-R-D and S-Q-D" in _error(text)


def test_a_grid_route_is_refused_as_ambiguous_without_listing_its_routes():
    """A 25 x 25 grid joins opposite corners by C(48, 24) ~ 3 x 10^13 shortest routes:
    the check stops at the second (it once listed them all, and never returned)."""
    side = 25
    nodes = [f"G{i}_{j}" for i in range(side) for j in range(side)]
    links = [f"  - {{a: G{i}_{j}, b: G{i + di}_{j + dj}, rate_bps: 1.0e+6, delay_s: 0.001}}"
             for i in range(side) for j in range(side) for di, dj in ((0, 1), (1, 0))
             if i + di < side and j + dj < side]
    text = (f"name: grid\nnodes: [{', '.join(nodes)}]\nlinks:\n" + "\n".join(links)
            + f"\nflows:\n  - {{src: G0_0, dst: G{side - 1}_{side - 1}, variant: reno}}\n"
            "horizon_s: 10.0\n")
    assert re.search(r"flows\[0\]\.dst: ambiguous route from G0_0 to G24_24: G0_0-\S+ and "
                     r"G0_0-\S+ have equal length", _error(text))


@pytest.mark.parametrize("seed", range(5))
def test_routes_are_networkx_shortest_paths_and_uniqueness_its_count(seed):
    rng = np.random.default_rng(seed)
    graph = nx.connected_watts_strogatz_graph(60, 4, 0.3, seed=seed)
    nodes = [f"n{k}" for k in graph.nodes]
    table = RouteTable(nodes, [(f"n{a}", f"n{b}") for a, b in graph.edges])
    for a, b in rng.integers(0, 60, size=(40, 2)):
        routes = [tuple(f"n{k}" for k in p) for p in nx.all_shortest_paths(graph, a, b)]
        assert table.route(f"n{a}", f"n{b}") in routes
        assert table.unique(f"n{a}", f"n{b}") == (len(routes) == 1)
    table = RouteTable(["a", "b", "c"], [("a", "b")])
    assert table.route("a", "c") is None and not table.unique("a", "c")


def test_two_links_between_the_same_nodes():
    text = BASE.replace("flows:", "  - {a: D, b: R, rate_bps: 1.0e+6, delay_s: 0.01}\nflows:")
    assert "bad.yaml:5: links[2]: a second link between D and R (first: links[1])" in \
        _error(text)


def test_not_yaml_and_not_a_mapping():
    assert _error("links: [unclosed\n").startswith("bad.yaml:2: not valid YAML")
    assert "a scenario is a mapping" in _error("- 1\n- 2\n")
    assert "the file is empty" in _error("")


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(scenario_module.InputError, match="cannot read scenario"):
        load_scenario(tmp_path / "none.yaml")


def test_cli_reports_bad_scenario_with_line_and_exit_code(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BASE.replace("delay_s: 0.02", "delay_s: -0.02"))
    done = subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()", "run",
                           str(bad), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3
    assert f"{bad}:4: links[1].delay_s" in done.stderr
    assert not (tmp_path / "out").exists()


def test_shorthand_queue_applies_to_both_directions_and_per_direction_wins():
    text = BASE.replace("delay_s: 0.02}", "delay_s: 0.02, queue: {kind: drop_tail, limit: 7},"
                        " ba: {queue: {kind: sgpq}}}")
    link = parse_scenario(text).links[1]
    assert (link.ab.queue.kind, link.ab.queue.limit) == ("drop_tail", 7)
    assert link.ba.queue.kind == "sgpq"


def test_routes_and_queue_ids():
    s = dumbbell(pairs=2, reverse_pairs=1, horizon_s=5.0)
    flows = {f.id: f for f in s.concrete_flows(1)}
    assert flows["f1"].data_route == ("S1", "R1", "R2", "D1")
    assert flows["f1"].ack_queues == ("D1->R2", "R2->R1", "R1->S1")
    # reverse data shares R2->R1 with the forward ACKs
    assert "R2->R1" in flows["r0"].data_queues
    lot = parking_lot(hops=3, horizon_s=5.0)
    assert lot.queue_ids_on(lot.route("S", "D")) == [
        "S->R0", "R0->R1", "R1->R2", "R2->R3", "R3->D"]
    assert lot.route("X2", "Y2") == ["X2", "R2", "R3", "Y2"]
    assert len(lot.queue_ids()) == 2 * len(lot.links)


def test_content_hash_is_semantic():
    s = load_scenario(DUMBBELL)
    # explicit defaults, reordered keys and another name/seed/measure: the same experiment
    text = DUMBBELL.read_text().replace("seed: 1", "seed: 99").replace(
        "name: dumbbell_newreno", "name: other\nmeasure: {bin_s: 0.2}\ntrace: {rtt: false}")
    text = text.replace("{id: f0, src: S0,", "{src: S0, count: 1, id: f0, params: {},")
    assert parse_scenario(text).content_hash() == s.content_hash()
    listed = text.replace("links:", "nodes: [S1, S0, R2, R1, D1, D0]\nlinks:")
    assert parse_scenario(listed).content_hash() == s.content_hash()
    changed = parse_scenario(DUMBBELL.read_text().replace("delay_s: 0.020", "delay_s: 0.021"))
    assert changed.content_hash() != s.content_hash()
    assert len(s.content_hash()) == 64


def test_yaml_round_trip():
    for s in (load_scenario(DUMBBELL), parking_lot(hops=2, variant="vegas", horizon_s=3.0)):
        back = parse_scenario(s.to_yaml())
        assert back == s
        assert back.content_hash() == s.content_hash()


def test_flow_groups_draw_starts_from_the_seed():
    text = BASE.replace("variant: newreno}", "variant: vegas, count: 4, start_s: 1.0, gap_s: "
                        "{dist: exponential, mean_s: 0.05}, receiver_clock_offset_s: "
                        "{dist: uniform, low_s: 0, high_s: 0.5}}")
    s = parse_scenario(text)
    first = s.concrete_flows(np.random.SeedSequence(3, spawn_key=(0,)))
    again = s.concrete_flows(np.random.SeedSequence(3, spawn_key=(0,)))
    other = s.concrete_flows(np.random.SeedSequence(3, spawn_key=(1,)))
    assert [f.id for f in first] == ["f0.0", "f0.1", "f0.2", "f0.3"]
    starts = [f.start_s for f in first]
    assert starts == [f.start_s for f in again]
    assert starts != [f.start_s for f in other]
    assert starts[0] == 1.0 and bool(np.all(np.diff(starts) > 0))
    assert all(0 <= f.receiver_clock_offset_s <= 0.5 for f in first)
    assert first[0].params.alpha == 2  # ns-3 TcpVegas default


def test_exponential_gaps_have_the_stated_mean():
    text = BASE.replace("variant: newreno}", "variant: reno, count: 2001, gap_s: "
                        "{dist: exponential, mean_s: 0.05}}").replace("horizon_s: 10",
                                                                      "horizon_s: 1000")
    with using_limits(flows=2001):  # over the default limit of 1000 connections
        starts = np.array([f.start_s for f in parse_scenario(text).concrete_flows(5)])
    gaps = np.diff(starts)
    # mean of 2000 exponentials: standard error 0.05 / sqrt(2000) = 0.0011
    assert abs(gaps.mean() - 0.05) < 4 * 0.05 / np.sqrt(2000)


def test_flow_tcp_overrides_merge():
    text = BASE.replace("variant: newreno}", "variant: modified_vegas, tcp: {ecn: true}}")
    text += "tcp: {segment_size_bytes: 1000, timestamps: true}\n"
    (flow,) = parse_scenario(text).concrete_flows(1)
    assert (flow.tcp.segment_size_bytes, flow.tcp.ecn, flow.tcp.timestamps) == (1000, True, True)
    assert flow.ecn


def test_ecn_variant_implies_ecn():
    (flow,) = parse_scenario(BASE.replace("newreno}", "ecn_newreno}")).concrete_flows(1)
    assert flow.ecn and not flow.tcp.ecn


def test_scripted_losses_need_no_kind():
    text = BASE.replace("delay_s: 0.02}", "delay_s: 0.02, ab: {errors: {packets: [3, 5]}}}")
    errors = parse_scenario(text).direction("R->D").errors
    assert errors is not None and errors.kind == "list" and errors.packets == [3, 5]


def test_trace_selection_names_real_queues():
    assert "trace.queues[0]: unknown queue 'R1->R2'" in _error(
        BASE + "trace: {queues: [R1->R2]}\n")
    s = parse_scenario(BASE + "trace: {queues: [R->D]}\n")
    assert s.traced_queues() == ["R->D"]


def test_scenario_is_importable_without_yaml_file():
    s = Scenario.model_validate(parse_scenario(BASE).model_dump())
    assert s.horizon_s == 10


def test_doctests():
    assert doctest.testmod(scenario_module).failed == 0


@pytest.mark.parametrize("path", sorted((REPO / "scenarios").rglob("*.yaml")),
                         ids=lambda p: str(p.relative_to(REPO / "scenarios")))
def test_every_shipped_scenario_loads(path):
    s = load_scenario(path)
    assert s.concrete_flows(s.seed)
    assert parse_scenario(s.to_yaml()).content_hash() == s.content_hash()


def test_lenses_refuse_what_only_the_net_lens_models():
    """A wireless last hop or a drifting receiver clock: fluid refuses both, naming them;
    ns3 runs both (802.11 Wifi, TSval on the wire) but refuses a rate no 802.11 mode has."""
    import pytest as _pytest

    from tcpn.errors import InputError
    from tcpn.lenses.fluid import FluidLens
    from tcpn.lenses.ns3.lens import Ns3Lens
    from tcpn.models.scenario import parse_scenario

    text = """
links:
  - {a: S, b: R, rate_bps: 10.0e+6, delay_s: 0.01}
  - {a: R, b: D, rate_bps: RATE, delay_s: 0.0, wireless: {station: D}}
flows:
  - {src: S, dst: D, variant: newreno, receiver_clock_skew: 1.0e-4}
horizon_s: 5
"""
    spec = parse_scenario(text.replace("RATE", "2.0e+6"), "wireless.yaml")
    assert spec.net_only_features() == [
        "links[1].wireless: the 802.11 last hop (link-layer retries, energy)",
        "flows[0].receiver_clock_skew: a drifting receiver timestamp clock",
    ]
    with _pytest.raises(InputError, match=r"links\[1\]\.wireless.*receiver_clock_skew"):
        FluidLens().check(spec)
    Ns3Lens().check(spec)  # 2 Mbit/s is an 802.11b mode: nothing to refuse
    odd_rate = parse_scenario(text.replace("RATE", "3.0e+6"), "wireless.yaml")
    with _pytest.raises(InputError, match=r"links\[1\]\.rate_bps: no 802.11b/a mode") as refused:
        Ns3Lens().check(odd_rate)
    assert "receiver_clock_skew" not in str(refused.value)
