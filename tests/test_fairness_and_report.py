"""Fairness assumptions and properties, the standard report and the global properties,
on nets whose answers are derived by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tcpn.cli import app
from tcpn.petrinets import UNIT, PetriNet, Place, Simulator, Transition, explore
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.contest.global_properties import (
    liveness,
    one_safe,
    quasi_liveness,
    reachability_deadlock,
    stable_marking,
    state_space_statistics,
    upper_bounds,
)
from tcpn.petrinets.checking.fairness import Fairness, fairness_properties
from tcpn.petrinets.checking.report import standard_report
from tcpn.petrinets.examples import counter, dining_philosophers, retransmission

sys.path.insert(0, str(Path(__file__).parent))
from cli_process import run_tcpn
from test_ctl import small_nets, state_formulas

DELIVERED = "AF tokens(delivered) >= 1"


def _replay(net, evidence):
    sim = Simulator(net)
    for step in evidence.stem + evidence.cycle:
        sim.fire(step.transition, step.binding)
    return sim


def test_loss_cycle_refutes_delivery_until_weak_fairness_is_assumed():
    net = retransmission()
    unfair = check(net, DELIVERED)
    assert unfair.answer == "false"
    assert [s.transition for s in unfair.evidence.cycle] == ["lose"]
    _replay(net, unfair.evidence)
    assert check(net, DELIVERED, fairness=Fairness(weak=("deliver",))).answer == "true"
    # fairness of the loss itself does not help
    assert check(net, DELIVERED, fairness=Fairness(weak=("lose",))).answer == "false"


def test_two_step_loss_needs_strong_fairness():
    net = retransmission(lost_place=True)  # deliver is disabled while the segment is lost
    weak = check(net, DELIVERED, fairness=Fairness(weak=("deliver",)))
    assert weak.answer == "false"
    assert [s.transition for s in weak.evidence.cycle] == ["lose", "resend"]
    _replay(net, weak.evidence)
    assert check(net, DELIVERED, fairness=Fairness(strong=("deliver",))).answer == "true"


def test_fair_lasso_takes_the_fair_transitions():
    # two loops at one place: 'a' and 'b'; weak fairness of 'b' forces b into the cycle
    net = PetriNet("loops")
    net.add_place(Place("p", UNIT, initial=[()]))
    net.add_place(Place("done", UNIT))
    for t in ("a", "b"):
        net.add_transition(Transition(t))
        net.add_input("p", t, "()")
        net.add_output("p", t, "()")
    verdict = check(net, "AF tokens(done) >= 1", fairness=Fairness(weak=("a", "b")))
    assert verdict.answer == "false"
    assert sorted(s.transition for s in verdict.evidence.cycle) == ["a", "b"]


def test_fairness_properties_by_hand():
    assert fairness_properties(explore(retransmission())) == {"deliver": "none",
                                                              "lose": "impartial"}
    # both loops at one state: each can be avoided while it stays enabled
    phil = fairness_properties(explore(dining_philosophers(3)))
    assert phil["take0"] == "just" and phil["put0"] == "fair"
    # no infinite sequence at all: every transition is impartial (vacuously)
    assert fairness_properties(explore(counter(3))) == {"increment": "impartial"}


def test_standard_report_of_five_philosophers():
    report = standard_report(explore(dining_philosophers(5)))
    assert (report.states, report.edges, report.scc_nodes, report.scc_arcs) == (11, 30, 1, 0)
    assert report.integer_bounds["eat0"] == (1, 0)
    assert report.integer_bounds["think0"] == (1, 0)
    assert report.upper_multiset_bounds["fork0"] == "1`()"
    assert report.lower_multiset_bounds["fork0"] == "empty"
    assert report.home_markings == list(range(11))
    assert report.dead_markings == [] and report.dead_transitions == []
    assert len(report.live) == 10
    data = json.loads(json.dumps(report.to_json()))
    assert data["integer_bounds"]["eat0"] == [1, 0]
    assert "Live transitions" in report.text()


def test_report_of_a_chain():
    report = standard_report(explore(counter(3)))
    assert report.home_markings == [3] and report.dead_markings == [3]
    assert report.live == [] and report.dead_transitions == []
    assert report.upper_multiset_bounds["count"] == "1`0++1`1++1`2++1`3"
    assert report.lower_multiset_bounds["count"] == "empty"


def test_global_properties_by_hand():
    chain = counter(3)
    assert reachability_deadlock(chain).answer == "true"
    assert liveness(chain).answer == "false"
    assert quasi_liveness(chain).answer == "true"
    assert one_safe(chain).answer == "true"
    assert stable_marking(chain).answer == "true"  # one token on 'count' throughout
    assert upper_bounds(chain, ["count"]).value == 1
    phil = dining_philosophers(5)
    assert upper_bounds(phil, [f"fork{i}" for i in range(5)]).value == 5
    assert state_space_statistics(phil)["edges"] == 30
    two = PetriNet("two")
    two.add_place(Place("p", UNIT, initial=[()]))
    two.add_transition(Transition("dup"))
    two.add_input("p", "dup", "()")
    two.add_output("p", "dup", "()", count=2)
    assert one_safe(two).answer == "false"  # found on the fly
    unknown = liveness(two, max_states=50)
    assert unknown.answer == "unknown" and "max_states=50" in unknown.reason
    assert state_space_statistics(two, max_states=50)["states"] is None


# -- the command line -------------------------------------------------------------------------

RUN = CliRunner()
NET = "tcpn.petrinets.examples:retransmission"


def test_cli_verdicts_exit_codes_and_json(tmp_path):
    out = tmp_path / "v.json"
    result = RUN.invoke(app, ["check", "--python", NET, "--ctl", DELIVERED, "--json", str(out)])
    assert result.exit_code == 1, result.output
    assert "FALSE" in result.output and "cycle" in result.output
    data = json.loads(out.read_text())
    assert data["verdicts"][0]["evidence"]["cycle"][0]["transition"] == "lose"
    again = RUN.invoke(app, ["check", "--python", NET, "--ctl", DELIVERED, "--json", str(out)])
    assert again.exit_code != 0 and "exists" in str(again.exception or again.output)
    fair = RUN.invoke(app, ["check", "--python", NET, "--ctl", DELIVERED, "--weak-fair", "deliver"])
    assert fair.exit_code == 0 and "TRUE" in fair.output


def _tcpn(*args, cwd=None):
    return run_tcpn(*args, cwd=cwd, columns=60)


@pytest.mark.parametrize("args, message", [
    (["--ctl", "AG tokens(chanel) <= 1"], "no place named 'chanel'"),
    (["--ctl", "AG (tokens(channel) <="], "column"),
    (["--ctl", "EF fireable(send)"], "no transition named 'send'"),
    (["--ctl", "EF clock() > 2"], "untimed"),
    (["--weak-fair", "nope", "--ctl", "EF deadlock"], "no transition named 'nope'"),
])
def test_cli_bad_input_is_named(args, message):
    result = _tcpn("check", "--python", NET, *args)
    assert result.returncode == 3, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_cli_report_budget_and_missing_file(tmp_path):
    result = RUN.invoke(app, ["check", "--python", NET, "--report"], env={"COLUMNS": "60"})
    assert result.exit_code == 0
    assert "Impartial" in result.output
    (tmp_path / "endless.py").write_text(
        "from tcpn.petrinets.examples import counter\n\n\n"
        "def net():\n    return counter(10**9)\n")
    budget = _tcpn("check", "--python", "endless.py:net", "--ctl", "AF deadlock",
                   "--max-states", "100", cwd=tmp_path)
    assert budget.returncode == 1
    assert "UNKNOWN" in budget.stdout and "max_states=100" in budget.stdout
    report = _tcpn("check", "--python", "endless.py:net", "--report", "--max-states", "100",
                   cwd=tmp_path)
    assert report.returncode == 3 and "max_states=100" in report.stderr
    missing = _tcpn("check", str(tmp_path / "absent.pnml"), "--report")
    assert missing.returncode == 3 and "absent.pnml" in missing.stderr


# -- fair lassos on random nets ---------------------------------------------------------------

def _fair_lasso_checks(net, fairness, p):
    """Every fair EG witness is a path through p that is fair; fairness only shrinks EG."""
    import numpy as np

    from tcpn.petrinets.checking.atoms import edge_transitions, truth
    from tcpn.petrinets.checking.ctl import _Checker, _witness, satisfying
    from tcpn.petrinets.checking.formulas import AF, EG, G, Not

    space = explore(net, max_states=60)
    if not space.complete:
        return
    fair_eg = satisfying(space, EG(p), fairness=fairness)
    assert not (fair_eg & ~satisfying(space, EG(p))).any()
    assert not (satisfying(space, AF(Not(p))) & ~satisfying(space, AF(Not(p)),
                                                             fairness=fairness)).any()
    if not fair_eg[0]:
        return
    checker = _Checker(space, fairness, "successors")
    stem, cycle = _witness(checker, G(p), 0)
    g = checker.g
    holds = truth(space, p)
    states = [0] + [int(g.dst[e]) for e in stem + cycle]
    assert holds[states].all()
    if not cycle:
        assert g.dead[states[-1]]
        return
    assert int(g.dst[cycle[-1]]) == (int(g.dst[stem[-1]]) if stem else 0)
    loop_states = [int(g.src[e]) for e in cycle]
    labels = edge_transitions(space)[cycle]
    names = {ct.name: ct.index for ct in space.compiled.transitions}
    for name in fairness.weak:
        enabled = truth(space, fireable_atom(name))[loop_states]
        assert names[name] in labels or not enabled.all(), name
    for name in fairness.strong:
        enabled = truth(space, fireable_atom(name))[loop_states]
        assert names[name] in labels or not np.any(enabled), name


def fireable_atom(name):
    from tcpn.petrinets.checking.formulas import fireable

    return fireable(name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fair_witnesses_are_fair(data):
    net = data.draw(small_nets())
    names = sorted(net.transitions)
    weak = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
    strong = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
    p = data.draw(state_formulas(sorted(net.places), names).filter(
        lambda f: not any(type(n).__name__ in "AE" for n in _nodes(f))))
    _fair_lasso_checks(net, Fairness(tuple(weak), tuple(strong)), p)


def _nodes(f):
    yield f
    for c in f.children():
        yield from _nodes(c)
