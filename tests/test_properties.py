"""The TCP property library, verify() over loss budgets, MSC counterexamples, tcpn check."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tcpn.errors import InputError
from tcpn.models.properties import PROPERTIES, register_property
from tcpn.models.scenario import load_scenario, validate_scenario
from tcpn.models.topology import compose
from tcpn.models.verify import (
    verification_scenario,
    verification_scenario_net,
    verify,
    verify_all,
)
from tcpn.petrinets import explore
from tcpn.petrinets.checking import check
from tcpn.petrinets.formulas import AG, Deadlock, Not
from tcpn.reports.msc import msc_events, msc_svg, msc_text

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios/verification/one_flow.yaml"
SVG = "{http://www.w3.org/2000/svg}"


def variant(name: str):
    data = load_scenario(SCENARIO).model_dump(exclude_unset=True)
    flow = dict(data["flows"][0], variant=name)
    flow.pop("params", None)
    return validate_scenario({**data, "flows": [flow]})


def broken(transition: str, rcv_output: str, segments: int = 3):
    """The verification net with the receiver's ``transition`` writing ``rcv_output``."""
    scenario = verification_scenario(SCENARIO, segments)
    composed = compose(scenario, scenario.concrete_flows(scenario.seed))
    arcs = [a for a in composed.net.arcs_of(f"flow0.rcv.{transition}")
            if a.place == "flow0.rcv.rcv" and a.kind.name == "OUTPUT"]
    assert len(arcs) == 1
    arcs[0].inscription = rcv_output
    return verification_scenario_net(scenario, segments, composed)


def test_every_loss_pattern_is_one_run():
    # SYN, handshake ACK and 3 segments cross the lossy link: 1 + 5 patterns with <= 1 loss
    result = verify(SCENARIO, "delivered_once_in_order", segments=3, losses=1)
    assert (result.answer, result.runs) == ("true", 6)
    two = verify(SCENARIO, "delivered_once_in_order", segments=3, losses=2)
    assert two.answer == "true" and two.runs > 6


def test_delivery_fails_for_a_receiver_that_delivers_out_of_order():
    prepared = broken("out_of_order", "r2._replace(pending=0, nxt=p.seq + 1)")
    result = verify_all(SCENARIO, "delivered_once_in_order", segments=3, losses=1,
                        prepared=prepared)[0]
    assert result.answer == "false"
    assert result.data_losses == (2,)          # segment 0 (after SYN and ACK) lost
    assert result.verdict.evidence.stem[-1].marking["flow0.app"] == [(1,)]
    # without a loss nothing arrives out of order: the broken receiver is not exercised
    assert verify_all(SCENARIO, "delivered_once_in_order", segments=3, prepared=prepared
                      )[0].answer == "true"


def test_delivery_fails_for_a_receiver_that_delivers_a_duplicate_again():
    prepared = broken("duplicate", "r2._replace(pending=0, nxt=r.nxt + 1)")
    result = verify_all(SCENARIO, "delivered_once_in_order", segments=3, ack_losses=1,
                        prepared=prepared)[0]
    assert result.answer == "false" and result.ack_losses
    delivered = result.verdict.evidence.stem[-1].marking["flow0.app"][0]
    assert len(delivered) > len(set(delivered))


def test_a_receiver_that_never_acknowledges_deadlocks_before_completion():
    prepared = broken("ack_now", "r")           # in-order data never advances nxt
    results = {r.property.name: r for r in verify_all(
        SCENARIO, "all", segments=3, prepared=prepared, max_states=20_000)}
    assert results["no_deadlock_but_completion"].answer in ("false", "unknown")
    assert results["completes"].answer in ("false", "unknown")
    assert results["delivered_once_in_order"].answer in ("false", "unknown")


@pytest.mark.parametrize("name", ["newreno", "vegas"])
def test_the_library_holds_without_loss(name):
    results = {r.property.name: r.answer for r in verify_all(variant(name), "all",
                                                              segments=4)}
    for prop in ("delivered_once_in_order", "no_deadlock_but_completion", "completes",
                 "no_spurious_retransmission", "flight_within_windows",
                 "queue_within_limit", "ssthresh_at_least_2", "handshake_settles"):
        assert results[prop] == "true", prop
    assert results["tcp_l_keeps_window_on_link_loss"] == "n/a"
    assert results["vegas_window_rules"] == ("true" if name == "vegas" else "n/a")


def test_observers_do_not_change_the_run():
    # the observer places only watch: the components fire the same sequence with them
    scenario = verification_scenario(variant("vegas"), 4)
    plain = compose(scenario, scenario.concrete_flows(scenario.seed)).net
    observed = verification_scenario_net(scenario, 4)
    for t in plain.transitions.values():
        if t.name.startswith(observed.data_link.interface + ".") and "LOSSES" in t.params:
            t.params = {**t.params, "LOSSES": frozenset({3})}

    def firings(net):
        space, state, names = explore(net, clock="absolute"), 0, []
        while edges := space.edges(state):
            assert len(edges) == 1
            names.append(edges[0].transition)
            state = edges[0].target
        return names

    assert firings(plain) == firings(observed.with_losses((3,), ()))


def test_a_users_property_fails_where_it_must():
    @register_property("queue_empty", "no queue ever holds a packet")
    def queue_empty(flow):
        return AG(flow.holds("queues empty", lambda m: all(
            m[place][0].value[1] == 0 for place in flow.queues)))
    try:
        result = verify(SCENARIO, "queue_empty", segments=4)
        assert result.answer == "false"
    finally:
        del PROPERTIES["queue_empty"]


def test_a_property_naming_a_missing_place_is_an_input_error():
    with pytest.raises(InputError, match=r"flow0\.snd\.vegas"):
        verify(SCENARIO, "vegas_window_rules", segments=3)
    with pytest.raises(InputError, match="no such property"):
        verify(SCENARIO, "delivered_twice", segments=3)
    with pytest.raises(InputError, match="--losses 0"):
        verify(SCENARIO, "no_spurious_retransmission", segments=3, losses=1)


def test_a_random_element_is_refused_with_its_name():
    with pytest.raises(InputError, match=r"flow0\.snd\.fast_retransmit"):
        verify(variant("tcp_l"), "completes", segments=3, losses=1)


def one_loss_chart(lost=3):
    prepared = verification_scenario_net(SCENARIO, 3)
    space = explore(prepared.with_losses((lost,), ()), clock="absolute")
    path = check(space, AG(Not(Deadlock()))).evidence
    return msc_events(prepared, path)


def test_the_chart_of_a_one_loss_run_has_the_expected_arrows():
    events = one_loss_chart()               # packet 3 on R->D: segment 1
    arrows = [(e.source, e.target, e.label) for e in events]
    assert arrows[0] == ("sender", "queue", "SYN")
    assert ("link", "link", "seg 1 lost") in arrows
    lost_at = arrows.index(("link", "link", "seg 1 lost"))
    for seg in ("seg 0", "seg 2"):
        assert ("link", "receiver", seg) in arrows
    assert ("link", "receiver", "seg 1") not in arrows
    timer = arrows.index(("sender", "sender", "RTO expires"))
    assert lost_at < timer
    assert arrows[timer + 1] == ("sender", "queue", "seg 1 retx")
    assert ("link", "receiver", "seg 1 retx") in arrows[timer:]
    assert arrows[-1] == ("link", "sender", "ack 3")
    after_timeout = events[timer]
    assert (after_timeout.cwnd, after_timeout.ssthresh) == (1.0, 2.0)
    text = msc_text(events)
    assert "X" in text.splitlines()[lost_at + 1] and "seg 1 lost" in text


def test_the_svg_chart_parses_and_holds_the_same_events():
    events = one_loss_chart()
    root = ET.fromstring(msc_svg(events, "one loss"))
    drawn = [(e.get("data-source"), e.get("data-target"), e.get("data-label"))
             for e in root.iter() if e.get("data-label") is not None]
    assert drawn == [(e.source, e.target, e.label) for e in events]
    losses = [e for e in root.iter() if e.get("class") == "loss"]
    assert [e.get("data-label") for e in losses] == ["seg 1 lost"]
    assert len([e for e in root.iter(f"{SVG}line") if e.get("class") == "lane"]) == 4


def tcpn(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "tcpn"), *args],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "60"})


def test_cli_property_check_prints_writes_and_never_overwrites(tmp_path):
    scenario = tmp_path / "two_syns.yaml"   # two lost SYNs end the connection
    scenario.write_text(SCENARIO.read_text().replace("segment_size_bytes: 1000",
                                                     "segment_size_bytes: 1000\n  syn_retries: 2"))
    out, svg = tmp_path / "v.json", tmp_path / "c.svg"
    result = tcpn("check", str(scenario), "--property", "all", "--segments", "2",
                  "--losses", "2", "--json", str(out))
    assert result.returncode == 1, result.stderr
    assert "delivered_once_in_order: FALSE  (14 runs" in result.stdout
    assert "handshake_settles: TRUE" in result.stdout
    assert "counterexample: lost data-link packets [0, 1]" in result.stdout
    assert "gives up" in result.stdout
    document = json.loads(out.read_text())
    answers = {r["property"]: r["answer"] for r in document["results"]}
    assert answers["handshake_settles"] == "true" and answers["vegas_window_rules"] == "n/a"
    again = tcpn("check", str(scenario), "--property", "delivered_once_in_order", "--segments",
                 "2", "--losses", "2", "--msc", str(svg), "--json", str(out))
    assert again.returncode == 3 and "v.json" in again.stderr and not svg.exists()
    ok = tcpn("check", str(scenario), "--property", "delivered_once_in_order", "--segments",
              "2", "--losses", "2", "--msc", str(svg))
    assert ok.returncode == 1
    labels = [e.get("data-label") for e in ET.parse(svg).getroot().iter()
              if e.get("class") == "loss"]
    assert labels == ["SYN lost", "SYN lost"]
    holds = tcpn("check", str(SCENARIO), "--property", "completes", "--segments", "3",
                 "--losses", "1")
    assert holds.returncode == 0 and "completes: TRUE  (6 runs" in holds.stdout
    bad = tcpn("check", str(SCENARIO), "--property", "nope")
    assert bad.returncode == 3 and "no such property" in bad.stderr
