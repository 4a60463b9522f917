"""Counterexamples replayed at packet level: scripted losses, trace verdicts, charts."""

import json
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from cli_process import run_tcpn

from tcpn.experiments.confirm import confirm, path_losses, replay_scenario, trace_losses
from tcpn.lenses import evaluate
from tcpn.models.scenario import dumbbell, load_scenario, validate_scenario
from tcpn.models.trace_properties import trace_verdict
from tcpn.models.traces import TraceWriter
from tcpn.models.verification.check import property_net, verify_all
from tcpn.petrinets.checking.verdicts import Evidence
from tcpn.petrinets.statespace.paths import Step
from tcpn.reports.checks.trace_msc import trace_msc_events

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios/verification/one_flow.yaml"
SVG = "{http://www.w3.org/2000/svg}"


def one_flow(**tcp):
    data = load_scenario(SCENARIO).model_dump(exclude_unset=True)
    data["tcp"].update(tcp)
    return data


def slow():
    """1000-byte segments at 50 kbit/s (160 ms each) and a 200 ms minimum RTO: the timer
    expires before the first ACK is back (test_properties' spurious retransmission)."""
    data = one_flow(min_rto_s=0.2)
    data["links"][1]["rate_bps"] = 5.0e4
    return validate_scenario(data)


def test_the_scripted_run_loses_exactly_the_packets_the_path_lost():
    prepared = property_net(SCENARIO, segments=3, losses=1, ack_losses=1)
    space = prepared.verification.explore()
    paths = [space.path_to(end) for end in space.dead_markings()]
    # by hand: S->R carries SYN (0), the handshake's ACK (1), seg 0 (2), seg 1 (3); D->R
    # the SYN-ACK (0), ack 1 for seg 0 (1), the duplicate ack 1 seg 2 causes (2)
    path = next(p for p in paths if prepared.verification.scripted_losses(p)
                == {"S->R": (3,), "D->R": (2,)})
    evidence = Evidence([Step(t, b, {}) for t, b in path])
    assert path_losses(prepared, evidence) == (("S->R", "seg 1"), ("D->R", "ack 1"))
    scenario = replay_scenario(prepared, evidence)
    assert scenario.flows[0].bytes == 3000
    for lens in ("net", "ns3"):
        trace = evaluate(scenario, lens).trace
        assert trace_losses(trace, "f0") == (("S->R", "seg 1"), ("D->R", "ack 1")), lens
    # every other loss pattern of the space, in the net lens
    patterns = {}
    for p in paths:
        patterns.setdefault(tuple(sorted(prepared.verification.scripted_losses(p).items())), p)
    assert len(patterns) > 5
    for p in patterns.values():
        evidence = Evidence([Step(t, b, {}) for t, b in p])
        trace = evaluate(replay_scenario(prepared, evidence), "net").trace
        assert sorted(trace_losses(trace, "f0")) == sorted(path_losses(prepared, evidence))


def test_a_spurious_retransmission_shows_in_the_net_lens_and_in_ns3():
    prepared = property_net(slow(), segments=6)
    result = verify_all(slow(), "no_spurious_retransmission", segments=6, prepared=prepared)[0]
    assert result.answer == "false"
    confirmation = confirm(prepared, result)
    assert [r.lens for r in confirmation.replays] == ["net", "ns3"]
    for replay in confirmation.replays:
        assert replay.verdict.shows is True, replay.lens
        assert replay.verdict.evidence.startswith("seg 0 sent again at 0.249 s"), replay.lens
        assert replay.lost == () == confirmation.path_lost
    lines = confirmation.lines()
    assert lines[0] == "model: the path reaches the violation at 0.249 s, losing none"
    assert lines[1].startswith("net: violation shows: seg 0 sent again")
    assert lines[2].startswith("ns3: violation shows: seg 0 sent again")
    assert confirmation.to_json()["lenses"]["ns3"]["shows"] is True
    # the same reading on the scenario as given (a fast last link): nothing is resent
    fast = evaluate(SCENARIO, "net").trace
    assert trace_verdict("no_spurious_retransmission", fast, "f0").shows is False
    assert trace_verdict("delivered_once_in_order", fast, "f0").shows is False


def test_a_replay_is_refused_when_the_path_chose_a_start_time():
    data = one_flow(syn_retries=2)
    data["flows"][0]["start_s"] = {"dist": "uniform", "low_s": 0.0, "high_s": 0.01}
    uniform = validate_scenario(data)
    prepared = property_net(uniform, segments=2, ack_losses=2, delay_points=2)
    result = verify_all(uniform, "delivered_once_in_order", segments=2, ack_losses=2,
                        prepared=prepared)[0]
    assert result.answer == "false"
    confirmation = confirm(prepared, result)
    assert confirmation.replays == [] and "starts at a random time" in confirmation.refused
    assert confirmation.lines() == [f"replay refused: {confirmation.refused}"]


def test_a_property_no_trace_decides_is_refused_with_its_reason():
    prepared = property_net(SCENARIO, segments=3, losses=1)   # a sender without an RTO
    timeout = prepared.net.transitions["flow0.snd.timeout"]
    prepared.net.transitions["flow0.snd.timeout"] = replace(timeout, guard="False")
    result = verify_all(SCENARIO, "no_deadlock_but_completion", segments=3, losses=1,
                        prepared=prepared)[0]
    assert result.answer == "false"
    refused = confirm(prepared, result).refused
    assert refused.startswith("a packet trace cannot decide it: a dead marking")


def test_trace_readings_catch_a_duplicate_delivery_a_full_queue_and_a_low_ssthresh():
    s = dumbbell(pairs=1, horizon_s=1.0, queue={"kind": "drop_tail", "limit": 2})
    w = TraceWriter(s, s.concrete_flows(1))
    w.flow_event(0.1, "f0", "deliver", seq=0, bytes=536)
    w.flow_event(0.2, "f0", "deliver", seq=0, bytes=536)
    w.flow_value(0.3, "f0", "ssthresh_bytes", 536.0)
    w.queue_event(0.4, "R1->R2", "enqueue", length_packets=3, length_bytes=1734)
    trace = w.close()
    assert trace_verdict("delivered_once_in_order", trace, "f0").evidence == (
        "bytes from 0 delivered again at 0.200 s")
    assert trace_verdict("ssthresh_at_least_2", trace, "f0").shows is True
    queue = trace_verdict("queue_within_limit", trace, "f0")
    assert queue.shows is True and "R1->R2 held 3 packets (limit 2)" in queue.evidence
    assert trace_verdict("flight_within_windows", trace, "f0").shows is None


def tcpn(*args: str) -> subprocess.CompletedProcess[str]:
    return run_tcpn(*args, columns=60)


def test_cli_confirm_prints_each_lens_and_draws_the_charts_side_by_side(tmp_path):
    scenario = tmp_path / "two_syns.yaml"   # two lost SYNs end the connection
    scenario.write_text(SCENARIO.read_text().replace(
        "segment_size_bytes: 1000", "segment_size_bytes: 1000\n  syn_retries: 2"))
    svg, out = tmp_path / "c.svg", tmp_path / "c.json"
    result = tcpn("check", str(scenario), "--property", "delivered_once_in_order",
                  "--segments", "2", "--ack-losses", "2", "--confirm-lens", "net",
                  "--msc", str(svg), "--json", str(out))
    assert result.returncode == 1, result.stderr
    assert ("net: violation shows: 0 of 2000 bytes delivered by the end of the run"
            in result.stdout)
    root = ET.parse(svg).getroot()
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert len(ids) == len(set(ids)) == 2          # one arrow head per chart
    charts = [c for c in root if c.get("class") == "chart"]
    assert [c.get("data-title") for c in charts] == ["model (counterexample)",
                                                     "net lens: violation shows"]
    losses = [[e.get("data-label") for e in c.iter() if e.get("class") == "loss"]
              for c in charts]
    assert losses[0] == ["SYN lost (S->R)", "SYN lost (S->R)"]
    assert len(losses[1]) == 2
    labels = [e.get("data-label") for e in charts[1].iter() if e.get("data-label")]
    assert labels[-1] == "gives up"
    confirmation = json.loads(out.read_text())["results"][0]["confirmation"]
    assert confirmation["lenses"]["net"]["lost"] == [["S->R", "handshake"]] * 2
    bad = tcpn("check", str(scenario), "--property", "completes", "--confirm-lens", "fluid")
    assert bad.returncode == 3 and "--confirm-lens 'fluid'" in bad.stderr
    alone = tcpn("check", str(scenario), "--confirm")
    assert alone.returncode == 3 and "go with --property" in alone.stderr


@pytest.mark.parametrize("event, label", [("send", "seg 2"), ("ack", "ack 2"),
                                          ("timeout", "RTO expires")])
def test_trace_chart_labels(event, label):
    s = dumbbell(pairs=1, horizon_s=1.0)
    w = TraceWriter(s, s.concrete_flows(1))
    w.flow_event(0.5, "f0", event, seq=1072 if event != "timeout" else -1)
    assert [e.label for e in trace_msc_events(w.close(), "f0")] == [label]
