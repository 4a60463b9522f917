"""The TCP property library, verify() on verification nets, MSC counterexamples, tcpn check."""

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.models.properties import PROPERTIES, register_property
from tcpn.models.scenario import load_scenario, validate_scenario
from tcpn.models.verification import LossBudget, verification_net
from tcpn.models.verification.check import PropertyNet, observe, property_net, verify, verify_all
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.formulas import AG, Deadlock
from tcpn.reports.checks.msc import msc_events, msc_svg, msc_text

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios/verification/one_flow.yaml"
SVG = "{http://www.w3.org/2000/svg}"


def variant(name: str):
    data = load_scenario(SCENARIO).model_dump(exclude_unset=True)
    flow = dict(data["flows"][0], variant=name)
    flow.pop("params", None)
    return validate_scenario({**data, "flows": [flow]})


def broken(transition: str, rcv_output: str, segments: int = 3, **budget: int) -> PropertyNet:
    """The property net with the receiver's ``transition`` writing ``rcv_output``."""
    verification = verification_net(load_scenario(SCENARIO), segments=segments,
                                    losses=LossBudget(**budget))
    arcs = [a for a in verification.net.arcs_of(f"flow0.rcv.{transition}")
            if a.place == "flow0.rcv.rcv" and a.kind.name == "OUTPUT"]
    assert len(arcs) == 1
    arcs[0].inscription = rcv_output
    return PropertyNet(verification, observe(verification)[0])


def test_observers_leave_the_space_and_the_firings_unchanged():
    plain = verification_net(load_scenario(SCENARIO), segments=3,
                             losses=LossBudget(data_losses=1, ack_losses=1))
    watched = property_net(SCENARIO, segments=3, losses=1, ack_losses=1)
    bare, observed = plain.explore(), watched.verification.explore()
    assert (bare.n_states, bare.n_edges, len(bare.dead_markings())) == (
        observed.n_states, observed.n_edges, len(observed.dead_markings()))
    # a path of the observed net fires as is in the simulator's own net
    for state in observed.dead_markings()[:5]:
        path = observed.path_to(state)
        firings = watched.replay(path)
        assert [f.transition for f in firings] == [
            watched.verification.simulator_transition(t) for t, _b in path
            if t not in watched.verification.delay_choices]


def test_the_library_holds_on_newreno_with_losses():
    results = {r.property.name: r for r in verify_all(SCENARIO, "all", segments=3, losses=1,
                                                       ack_losses=1)}
    for prop in ("delivered_once_in_order", "no_deadlock_but_completion", "completes",
                 "flight_within_windows", "queue_within_limit", "ssthresh_at_least_2",
                 "handshake_settles"):
        assert results[prop].answer == "true", prop
    assert results["no_spurious_retransmission"].answer == "n/a"
    assert results["vegas_window_rules"].answer == "n/a"
    assert results["completes"].states > 1000 and results["completes"].dead > 10


def test_delivery_fails_for_a_receiver_that_delivers_out_of_order():
    prepared = broken("out_of_order", "r2._replace(pending=0, nxt=p.seq + 1)", data_losses=1)
    result = verify_all(SCENARIO, "delivered_once_in_order", segments=3, losses=1,
                        prepared=prepared)[0]
    assert result.answer == "false"
    delivered = result.verdict.evidence.stem[-1].marking["flow0.app"][0]
    assert delivered != tuple(range(len(delivered)))
    assert sum(len(v) for v in result.lost.values()) == 1
    # without a loss nothing arrives out of order: the broken receiver is not exercised
    quiet = broken("out_of_order", "r2._replace(pending=0, nxt=p.seq + 1)")
    assert verify_all(SCENARIO, "delivered_once_in_order", segments=3,
                      prepared=quiet)[0].answer == "true"


def test_delivery_fails_for_a_receiver_that_delivers_a_duplicate_again():
    prepared = broken("duplicate", "r2._replace(pending=0, nxt=r.nxt + 1)", ack_losses=1)
    result = verify_all(SCENARIO, "delivered_once_in_order", segments=3, ack_losses=1,
                        prepared=prepared)[0]
    assert result.answer == "false"
    delivered = result.verdict.evidence.stem[-1].marking["flow0.app"][0]
    assert len(delivered) > len(set(delivered))


def test_a_sender_without_a_retransmission_timer_deadlocks_after_a_loss():
    verification = verification_net(load_scenario(SCENARIO), segments=3,
                                    losses=LossBudget(data_losses=1))
    timeout = verification.net.transitions["flow0.snd.timeout"]
    verification.net.transitions["flow0.snd.timeout"] = replace(timeout, guard="False")
    prepared = PropertyNet(verification, observe(verification)[0])
    results = {r.property.name: r for r in verify_all(SCENARIO, "all", segments=3, losses=1,
                                                       prepared=prepared)}
    assert results["no_deadlock_but_completion"].answer == "false"
    assert results["completes"].answer == "false"
    assert results["delivered_once_in_order"].answer == "false"
    assert results["queue_within_limit"].answer == "true"
    # the dead end: the last segment lost, nothing left to make the sender resend it
    last = results["no_deadlock_but_completion"].verdict.evidence.stem[-1].marking
    assert last["flow0.snd.tcb"][0].una < 3 and last["flow0.snd.timer"]


def breaking(verification, transition, guard=None, tcb=None):
    """Change ``transition``'s guard, or the ``old -> new`` text of its tcb output."""
    net = verification.net
    if guard is not None:
        net.transitions[transition] = replace(net.transitions[transition], guard=guard)
    if tcb is not None:
        arc = next(a for a in net.arcs_of(transition)
                   if a.place == "flow0.snd.tcb" and a.kind.name == "OUTPUT")
        arc.inscription = arc.inscription.replace(*tcb)


@pytest.mark.parametrize("name, segments, budget, break_net", [
    # a drop-tail queue that takes three packets beyond its limit (10 segments sent at once)
    ("queue_within_limit", 10, {}, lambda v: breaking(v, "S.R.enqueue", guard="n < LIMIT + 3")),
    # a timeout that quarters the flight without the floor of 2
    ("ssthresh_at_least_2", 3, {"data_losses": 1}, lambda v: breaking(
        v, "flow0.snd.timeout", tcb=("max(2.0, float((t.high - t.una) // 2))",
                                     "(t.high - t.una) / 4.0"))),
    # a sender that gives up after its first SYN is lost, whatever syn_retries says
    ("handshake_settles", 2, {"ack_losses": 1}, lambda v: breaking(
        v, "flow0.snd.give_up", guard="n >= 1")),
])
def test_each_property_holds_and_fails_on_a_broken_net(name, segments, budget, break_net):
    budgets = {"losses": budget.get("data_losses", 0),
               "ack_losses": budget.get("ack_losses", 0)}
    assert verify(SCENARIO, name, segments=segments, **budgets).answer == "true"
    verification = verification_net(load_scenario(SCENARIO), segments=segments,
                                    losses=LossBudget(**budget))
    break_net(verification)
    prepared = PropertyNet(verification, observe(verification)[0])
    assert verify_all(SCENARIO, name, segments=segments, prepared=prepared,
                      **budgets)[0].answer == "false"


def test_vegas_rules_hold_and_tahoe_flight_stays_within_its_window():
    vegas = {r.property.name: r.answer for r in verify_all(variant("vegas"), "all",
                                                            segments=4, losses=1)}
    assert vegas["vegas_window_rules"] == "true" and vegas["completes"] == "true"
    # Tahoe's fast retransmit sets cwnd to 1 and goes back N (ns-2 ``dupack_action`` ->
    # ``reset_rtx_timer(0,0)``: t_seqno_ = highest_ack_ + 1), so the flight never exceeds
    # the window; with the send pointer kept (tcpn before 2026-11-29) it did
    tahoe = verify(variant("tahoe"), "flight_within_windows", segments=4, losses=1)
    assert tahoe.answer == "true"


def test_vegas_rules_need_rounds_in_congestion_avoidance_and_catch_a_bad_decision():
    # 24 segments and one loss: rounds end in congestion avoidance after the reduction
    # (with 8 segments none does, and the property holds vacuously)
    assert verify(variant("vegas"), "vegas_window_rules", segments=24,
                  losses=1).answer == "true"
    verification = verification_net(variant("vegas"), segments=24,
                                    losses=LossBudget(data_losses=1))
    arc = next(a for a in verification.net.arcs_of("flow0.snd.new_ack")
               if a.place == "flow0.snd.tcb" and a.kind.name == "OUTPUT")
    # the law's window, wherever the inscription uses it (with SACK it is the else-branch
    # of the rule that withholds growth on a duplicate ACK of new data): 3 more at a round end
    mutated = re.sub(r"\bvegas_cwnd\b",
                     "(vegas_cwnd + (3 if v2.round_end != v.round_end else 0))",
                     arc.inscription, count=1)
    assert mutated != arc.inscription          # the bad decision is really in the net
    arc.inscription = mutated
    prepared = PropertyNet(verification, observe(verification)[0])
    assert verify_all(SCENARIO, "vegas_window_rules", segments=24, losses=1,
                      prepared=prepared)[0].answer == "false"


def test_tcp_l_reduces_on_a_link_loss_before_any_report_as_specified():
    # Loss_link is 0 until a report arrives, so P_congestion = 1 (docs/variants.md, TCP-L)
    result = verify(variant("tcp_l"), "tcp_l_keeps_window_on_link_loss", segments=8,
                    losses=1, links=("R->D",))
    assert result.answer == "false" and list(result.lost) == ["R->D"]
    last = result.verdict.evidence.stem[-1].marking
    assert last["flow0.snd.tcpl"][0].report_time == -1.0
    assert last["flow0.reductions"] == [1]
    assert verify(variant("tcp_l"), "tcp_l_keeps_window_on_link_loss",
                  segments=8).answer == "true"        # nothing lost: nothing to react to


def test_a_spurious_retransmission_is_found_when_the_rto_is_shorter_than_the_rtt():
    # 1000-byte segments at 50 kbit/s take 160 ms each; the handshake's RTT sample does not
    # see that, and with a 200 ms minimum RTO the timer expires before the ACKs come back
    data = load_scenario(SCENARIO).model_dump(exclude_unset=True)
    data["links"][1]["rate_bps"] = 5.0e4
    data["tcp"]["min_rto_s"] = 0.2
    slow = validate_scenario(data)
    result = verify(slow, "no_spurious_retransmission", segments=6)
    assert result.answer == "false"
    events = msc_events(property_net(slow, segments=6), result.verdict.evidence)
    assert any(e.label == "RTO expires" for e in events)
    assert not any(e.kind == "loss" for e in events)
    assert events[-1].label == "RTO expires"      # go-back-N: the timeout resends
    assert verify(SCENARIO, "no_spurious_retransmission", segments=6).answer == "true"


def test_a_users_property_and_missing_places():
    @register_property("queue_empty", "no queue ever holds a packet")
    def queue_empty(flow):
        return AG(flow.holds("queues empty", lambda m: all(
            m[place][0].value[1] == 0 for place in flow.queues)))
    try:
        assert verify(SCENARIO, "queue_empty", segments=4).answer == "false"
    finally:
        del PROPERTIES["queue_empty"]
    with pytest.raises(InputError, match=re.escape("'flow0.snd.vegas'")):
        verify(SCENARIO, "vegas_window_rules", segments=3)
    with pytest.raises(InputError, match="no such property"):
        verify(SCENARIO, "delivered_twice", segments=3)
    with pytest.raises(InputError, match="--losses 0"):
        verify(SCENARIO, "no_spurious_retransmission", segments=3, losses=1)
    data = load_scenario(SCENARIO).model_dump(exclude_unset=True)
    data["links"][1]["errors"] = {"kind": "rate", "rate": 0.01}
    with pytest.raises(InputError, match=re.escape("links[1].ab.errors")):
        verify(validate_scenario(data), "completes", segments=3)


def one_loss_chart():
    """The chart of the shortest run that ends with one data segment lost."""
    prepared = property_net(SCENARIO, segments=3, losses=1)
    space = prepared.verification.explore()
    lost_once = prepared.flow.holds("a loss", lambda m: prepared.flow.lost(m) > 0)
    path = check(space, AG(Deadlock().implies(~lost_once))).evidence
    return msc_events(prepared, path)


def test_the_chart_of_a_one_loss_run_has_the_expected_arrows():
    events = one_loss_chart()
    arrows = [(e.source, e.target, e.label) for e in events]
    assert arrows[0] == ("sender", "queue", "SYN")
    losses = [k for k, e in enumerate(events) if e.kind == "loss"]
    assert len(losses) == 1
    lost = events[losses[0]].label.split(" lost")[0]          # "seg k"
    assert lost.startswith("seg ")
    assert ("link", "receiver", lost) not in arrows
    resent = arrows.index(("sender", "queue", f"{lost} retx"))
    assert resent > losses[0]
    assert ("link", "receiver", f"{lost} retx") in arrows[resent:]
    for other in {"seg 0", "seg 1", "seg 2"} - {lost}:
        assert ("link", "receiver", other) in arrows
    assert arrows[-1] == ("link", "sender", "ack 3")
    assert events[resent].ssthresh == 2.0        # the loss halved the window
    text = msc_text(events).splitlines()
    assert "X" in text[losses[0] + 1] and lost in text[losses[0] + 1]


def test_a_long_chart_keeps_its_ends_and_each_loss_with_its_neighbours():
    """A terminal chart past ``max_events`` keeps the first and last quarter's events and
    every loss with two events either side, and says how many each gap leaves out."""
    from tcpn.reports.checks.msc import MscEvent

    events = [MscEvent(k / 1000, "segment", "sender", "queue", f"seg {k}", 10, 64)
              for k in range(1000)]
    events[500] = MscEvent(0.5, "loss", "queue", "queue", "seg 500 lost", 10, 64)
    lines = msc_text(events, max_events=40).splitlines()
    drawn = [line for line in lines[1:] if not line.lstrip().startswith("...")]
    assert [line for line in lines if "left out" in line] == [
        "     ...  488 events left out (the whole chart: --msc FILE)",
        "     ...  487 events left out (the whole chart: --msc FILE)"]
    assert len(drawn) == 10 + 5 + 10
    # the header, events 0-9, a gap, events 498-502 (the loss third), a gap, 990-999
    assert "seg 500 lost" in lines[14] and "X" in lines[14]
    assert "seg 9 " in lines[10] and "seg 498 " in lines[12] and "seg 999 " in lines[-1]
    assert msc_text(events[:30], max_events=40) == msc_text(events[:30])


def test_the_svg_chart_parses_and_holds_the_same_events():
    events = one_loss_chart()
    root = ET.fromstring(msc_svg(events, "one loss"))
    drawn = [(e.get("data-source"), e.get("data-target"), e.get("data-label"))
             for e in root.iter() if e.get("data-label") is not None]
    assert drawn == [(e.source, e.target, e.label) for e in events]
    assert len([e for e in root.iter() if e.get("class") == "loss"]) == 1
    assert len([e for e in root.iter(f"{SVG}line") if e.get("class") == "lane"]) == 4


def tcpn(*args: str) -> subprocess.CompletedProcess[str]:
    return run_tcpn(*args, columns=60)


def test_cli_property_check_prints_writes_and_never_overwrites(tmp_path):
    scenario = tmp_path / "two_syns.yaml"   # two lost SYNs end the connection
    scenario.write_text(SCENARIO.read_text().replace(
        "segment_size_bytes: 1000", "segment_size_bytes: 1000\n  syn_retries: 2"))
    out, svg = tmp_path / "v.json", tmp_path / "c.svg"
    result = tcpn("check", str(scenario), "--property", "all", "--segments", "2",
                  "--ack-losses", "2", "--json", str(out))
    assert result.returncode == 1, result.stderr
    assert "delivered_once_in_order: FALSE  (" in result.stdout
    assert "handshake_settles: TRUE" in result.stdout
    assert "counterexample: lost packets S->R [0, 1]" in result.stdout
    assert "gives up" in result.stdout
    document = json.loads(out.read_text())
    answers = {r["property"]: r["answer"] for r in document["results"]}
    assert answers["handshake_settles"] == "true" and answers["vegas_window_rules"] == "n/a"
    again = tcpn("check", str(scenario), "--property", "delivered_once_in_order", "--segments",
                 "2", "--ack-losses", "2", "--msc", str(svg), "--json", str(out))
    assert again.returncode == 3 and "v.json" in again.stderr and not svg.exists()
    ok = tcpn("check", str(scenario), "--property", "delivered_once_in_order", "--segments",
              "2", "--ack-losses", "2", "--msc", str(svg))
    assert ok.returncode == 1
    labels = [e.get("data-label") for e in ET.parse(svg).getroot().iter()
              if e.get("class") == "loss"]
    assert labels == ["SYN lost (S->R)", "SYN lost (S->R)"]
    holds = tcpn("check", str(SCENARIO), "--property", "completes", "--segments", "3",
                 "--losses", "1")
    assert holds.returncode == 0 and "completes: TRUE  (" in holds.stdout
    bad = tcpn("check", str(SCENARIO), "--property", "nope")
    assert bad.returncode == 3 and "no such property" in bad.stderr


TWO_FLOWS = SCENARIO.parent / "two_flows.yaml"


def test_a_flow_is_named_in_a_two_flow_scenario():
    with pytest.raises(InputError, match=r"several flows \(f0, f1\): name the one"):
        verify(TWO_FLOWS, "delivered_once_in_order", segments=2)
    with pytest.raises(InputError, match=r"--flow 'f9': scenario two_flows has no such flow "
                                         r"\(flows: f0, f1\)"):
        verify(TWO_FLOWS, "delivered_once_in_order", segments=2, flow="f9")
    # the named flow's observers and roles: flow1.* is f1's
    prepared = property_net(TWO_FLOWS, segments=2, flow="f1")
    assert prepared.flow.prefix == "flow1" and prepared.flow.name == "f1"
    assert [f.name for f in prepared.flow.flows] == ["f0", "f1"]
    for i in (0, 1):
        assert {f"flow{i}.app", f"flow{i}.retx"} <= set(prepared.net.places)
    result = verify(TWO_FLOWS, "delivered_once_in_order", segments=2, losses=1, flow="f1")
    assert result.answer == "true" and result.states > 100


def test_cross_flow_properties_hold_on_two_flows_and_need_no_flow():
    for name in ("all_flows_complete", "no_flow_starves"):
        assert verify(TWO_FLOWS, name, segments=2, losses=1).answer == "true", name
    # on a one-flow scenario 'all' leaves them out
    results = {r.property.name: r for r in verify_all(SCENARIO, "all", segments=2)}
    assert results["all_flows_complete"].answer == "n/a"


def test_cross_flow_properties_fail_when_one_flow_cannot_finish():
    """f1's paced application (one segment per 80 ms) closes at 0.1 s, after writing 2 of
    the 3 segments: f1 never completes, f0 does, so the run ends in a dead marking where
    only one flow is complete."""
    data = load_scenario(TWO_FLOWS).model_dump(exclude_unset=True)
    data["flows"][1].update(app_rate_bps=100_000.0, stop_s=0.1)
    scenario = validate_scenario(data)
    for name in ("all_flows_complete", "no_flow_starves"):
        result = verify(scenario, name, segments=3)
        assert result.answer == "false", name
    assert verify(scenario, "completes", segments=3, flow="f0").answer == "true"
    assert verify(scenario, "completes", segments=3, flow="f1").answer == "false"


def test_cli_flow_option():
    ok = tcpn("check", str(TWO_FLOWS), "--property", "no_flow_starves", "--segments", "2")
    assert ok.returncode == 0 and "no_flow_starves: TRUE" in ok.stdout, ok.stderr
    named = tcpn("check", str(TWO_FLOWS), "--property", "completes", "--segments", "2",
                 "--flow", "f1")
    assert named.returncode == 0 and "(flow f1)" in named.stdout
    bad = tcpn("check", str(TWO_FLOWS), "--property", "completes", "--flow", "f7")
    assert bad.returncode == 3 and "no such flow" in bad.stderr
    unnamed = tcpn("check", str(TWO_FLOWS), "--property", "completes")
    assert unnamed.returncode == 3 and "--flow NAME" in unnamed.stderr


def test_cli_random_element_that_cannot_be_a_choice_is_exit_3(tmp_path):
    scenario = tmp_path / "exp_start.yaml"
    scenario.write_text(SCENARIO.read_text().replace(
        "start_s: 0.0", "start_s: {dist: exponential, mean_s: 1.0}"))
    result = tcpn("check", str(scenario), "--property", "completes", "--segments", "2")
    assert result.returncode == 3
    assert "flows[0].start_s: an unbounded random time (exponential)" in result.stderr
    uniform = tmp_path / "uniform_start.yaml"
    uniform.write_text(SCENARIO.read_text().replace(
        "start_s: 0.0", "start_s: {dist: uniform, low_s: 0.0, high_s: 0.01}"))
    refused = tcpn("check", str(uniform), "--property", "completes", "--segments", "2")
    assert refused.returncode == 3 and "delay_points=m" in refused.stderr
    ok = tcpn("check", str(uniform), "--property", "completes", "--segments", "2",
              "--delay-points", "3")
    assert ok.returncode == 0 and "completes: TRUE" in ok.stdout


def test_charts_show_arrivals_at_small_first_queues():
    """A small-first queue's arrivals are ``enqueue0``/``enqueue1``: the chart draws each
    packet entering the bottleneck's queue (SYN, handshake ACK, segments), whatever the
    transition is called."""
    data = load_scenario(SCENARIO).model_dump(exclude_unset=True)
    data["links"][1]["queue"] = {"kind": "sgpq", "limit": 8}
    data["flows"][0] = dict(data["flows"][0], variant="tahoe")
    # 1000-byte segments at 50 kbit/s and a 200 ms minimum RTO: a spurious retransmission,
    # whose counterexample crosses the queue
    data["links"][1]["rate_bps"] = 5.0e4
    data["tcp"]["min_rto_s"] = 0.2
    scenario = validate_scenario(data)
    result = verify(scenario, "no_spurious_retransmission", segments=4)
    assert result.answer == "false"
    prepared = property_net(scenario, segments=4)
    entering = [s for s in result.verdict.evidence.stem if s.transition.startswith("R.D.")
                and s.transition.rpartition(".")[2] in ("enqueue0", "enqueue1", "direct",
                                                         "direct_lost")]
    assert any(s.transition.endswith("enqueue1") for s in entering)
    drawn = [e for e in msc_events(prepared, result.verdict.evidence)
             if (e.source, e.target, e.kind) == ("queue", "link", "segment")]
    assert len(drawn) == len(entering)
