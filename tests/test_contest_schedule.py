"""The examinations' time, shared: each examination first runs on an equal share of the
time left, so that the first ones cannot spend what the cheap answers of the others
need, and what a share cut runs again on all the time left at the end; the state
equation keeps no verdict a deadline cut (asked again with more time, it is solved).
"""

from __future__ import annotations

import time

from tcpn.petrinets.checking.contest.clock import Clock
from tcpn.petrinets.checking.contest.examinations import _scheduled
from tcpn.petrinets.checking.contest.structure import Structure
from tcpn.petrinets.checking.contest.unreachable import StateEquation
from tcpn.petrinets.checking.formulas import AG, EF, tokens
from tcpn.petrinets.examples import token_ring
from tcpn.petrinets.statespace.ptspace import pt_net


def test_each_examination_has_its_share_and_what_a_share_cut_runs_again():
    """A greedy examination (it takes every second it is given, and answers only with
    more than 0.6 s) runs first: on its share it leaves the two cheap ones their time,
    and it is run again, on what they left, at the end; every line is told once, final."""
    calls: list[tuple[str, float, set[str] | None]] = []

    def examine(examination, mine, only):
        share = mine.left()
        calls.append((examination, share, only))
        if examination == "greedy":
            while mine.left() > 0.0:
                time.sleep(0.01)
            line = "FORMULA g TRUE" if share > 0.6 else "FORMULA g CANNOT_COMPUTE"
            return [("g", [line], None if share > 0.6 else mine.reason())]
        return [(examination, [f"FORMULA {examination} TRUE"], None)]

    told, reasons, begun = [], [], []
    answers = _scheduled(["greedy", "cheap1", "cheap2"], Clock(1.5), examine, told.append,
                         lambda ident, why: reasons.append(ident), begun.append)
    assert [c[0] for c in calls] == ["greedy", "cheap1", "cheap2", "greedy"]
    assert calls[0][1] <= 0.25 + 1e-3 and calls[3][1] > 0.6  # its share, then the rest
    assert calls[3][2] == {"g"}
    assert answers == {"greedy": ["FORMULA g TRUE"], "cheap1": ["FORMULA cheap1 TRUE"],
                       "cheap2": ["FORMULA cheap2 TRUE"]}
    assert sorted(told) == sorted(line for lines in answers.values() for line in lines)
    assert reasons == [] and begun == ["greedy", "cheap1", "cheap2", "greedy"]


def test_a_share_clock_names_its_share_and_the_whole():
    share = Clock(100.0).share(4)
    assert 24.9 < share.limit_s <= 25.0  # type: ignore[operator]
    assert "this examination's share of 100 s" in share.reason()
    assert Clock(None).share(3).left() is None


def test_a_verdict_cut_by_the_deadline_is_not_kept():
    net = pt_net(token_ring(3))
    two = tokens("p0", "p1", "p2") >= 2  # one token circulates: never two
    equation = StateEquation(net, deadline=time.perf_counter() - 1.0)
    assert equation.unreachable(two) is None and equation.cut == 1
    equation.deadline = None
    assert equation.unreachable(two) is True


def test_a_formula_folded_under_a_spent_deadline_is_folded_again_with_time():
    net = pt_net(token_ring(3))
    structure = Structure(net, Clock(60.0))
    structure.start(Clock(0.0))  # no time: no program is solved
    formula = AG(tokens("p0", "p1", "p2") <= 1)
    assert structure.simplified(formula)[0] == formula
    structure.start()
    assert structure.simplified(EF(tokens("p0", "p1", "p2") >= 2))[0].value is False
    assert structure.simplified(formula)[0].value is True
