"""Timed properties on the relative-time state space: earliest and latest arrival as
shortest and longest paths over the edges' delays, the time-bounded operators, intervals.

Every expected time is worked out by hand in the test's comments (a goal marking is
reached when the firing that makes it happens; a delay stamps the tokens it puts).
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace

import pytest

from tcpn.errors import InputError
from tcpn.petrinets import P_HIGH, UNIT, Interval, PetriNet, Place, Simulator, Transition, Uniform
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.fairness import Fairness
from tcpn.petrinets.checking.formulas import AF, AG, EF, EG, FWithin, tokens
from tcpn.petrinets.checking.text import parse, to_text
from tcpn.petrinets.checking.timed import earliest, latest, reachable_within
from tcpn.petrinets.examples import counter, stop_and_wait
from tcpn.petrinets.statespace.space import explore

DONE = tokens("done") >= 1
DELIVERED_TWO = tokens("delivered") >= 2


def chain() -> PetriNet:
    """``a -> b -> c -> done`` with delays 2 and 3 (on the tokens ``go``/``on`` put), and a
    shortcut ``a -> c`` with delay 4: ``done`` comes at 2 + 3 = 5 by the chain, at 4 by the
    shortcut (``finish`` fires when its token is ready)."""
    net = PetriNet("chain")
    for place, initial in (("a", [()]), ("b", []), ("c", []), ("done", [])):
        net.add_place(Place(place, UNIT.timed(), initial=initial))
    for name, source, target, delay in (("go", "a", "b", 2.0), ("on", "b", "c", 3.0),
                                        ("shortcut", "a", "c", 4.0), ("finish", "c", "done", 0.0)):
        net.add_transition(Transition(name))
        net.add_input(source, name, "()")
        net.add_output(target, name, "()", delay=delay)
    return net


def spinning() -> PetriNet:
    """A token may ``spin`` on ``p`` (1 s a turn) for ever, or ``finish`` after 2 s."""
    net = PetriNet("spinning")
    net.add_place(Place("p", UNIT.timed(), initial=[()]))
    net.add_place(Place("q", UNIT.timed()))
    net.add_place(Place("done", UNIT.timed()))
    net.add_transition(Transition("spin"))
    net.add_input("p", "spin", "()")
    net.add_output("p", "spin", "()", delay=1.0)
    net.add_transition(Transition("leave"))
    net.add_input("p", "leave", "()")
    net.add_output("q", "leave", "()", delay=2.0)
    net.add_transition(Transition("finish"))
    net.add_input("q", "finish", "()")
    net.add_output("done", "finish", "()")
    return net


def dead_end() -> PetriNet:
    """From ``p`` either ``good`` (done, 1 s later) or ``bad`` (to ``stuck``, 1 s later,
    then nothing can fire: a dead marking before the goal)."""
    net = PetriNet("dead_end")
    for place, initial in (("p", [()]), ("q", []), ("stuck", []), ("done", [])):
        net.add_place(Place(place, UNIT.timed(), initial=initial))
    net.add_transition(Transition("good"))
    net.add_input("p", "good", "()")
    net.add_output("q", "good", "()", delay=1.0)
    net.add_transition(Transition("arrive"))
    net.add_input("q", "arrive", "()")
    net.add_output("done", "arrive", "()")
    net.add_transition(Transition("bad"))
    net.add_input("p", "bad", "()")
    net.add_output("stuck", "bad", "()", delay=1.0)
    return net


def names(steps):
    return [step.transition for step in steps]


def test_a_chain_with_delays_by_hand():
    # finish fires at 4 after the shortcut, at 5 after go (0) and on (2)
    first, last = earliest(chain(), DONE), latest(chain(), DONE)
    assert (first.answer, first.value, names(first.evidence.stem)) == \
        ("true", 4.0, ["shortcut", "finish"])
    assert (last.answer, last.value, names(last.evidence.stem)) == \
        ("true", 5.0, ["go", "on", "finish"])
    assert [step.clock for step in last.evidence.stem] == [0.0, 2.0, 5.0]
    assert "TIMED" in first.technique and first.states == 5
    sim = Simulator(chain())  # the witness replays with its times
    for step in last.evidence.stem:
        sim.fire(step.transition, step.binding)
        assert sim.now == step.clock


def test_the_time_bounded_operators_on_the_chain():
    net = chain()
    expected = {"EF<=4 tokens(done) >= 1": "true", "EF<=3.9 tokens(done) >= 1": "false",
                "AF<=5 tokens(done) >= 1": "true", "AF<=4.9 tokens(done) >= 1": "false",
                # every run has nothing done before 4, some run has it at 4
                "AG<=3.9 tokens(done) == 0": "true", "AG<=4 tokens(done) == 0": "false",
                "EG<=4.9 tokens(done) == 0": "true", "EG<=5 tokens(done) == 0": "false"}
    for text, answer in expected.items():
        assert check(net, text).answer == answer, text
    # the objects say the same, and evidence shows the run
    refuted = check(net, AF(DONE, within_s=4.5))
    assert refuted.answer == "false" and names(refuted.evidence.stem) == ["go", "on", "finish"]
    assert check(net, EG(tokens("done").equals(0), within_s=4.5)).answer == "true"
    assert check(net, AG(tokens("done").equals(0), within_s=4.5)).answer == "false"
    assert check(net, EF(DONE, within_s=4)).answer == "true"
    # nested: b is marked when go fires, its token ready 2 s later; on then takes 3 s
    assert check(net, "AG (tokens(b) >= 1 -> AF<=5 tokens(done) >= 1)").answer == "true"
    assert check(net, "AG (tokens(b) >= 1 -> AF<=4.9 tokens(done) >= 1)").answer == "false"


def test_a_cycle_avoiding_the_goal_makes_the_latest_time_infinite():
    verdict = latest(spinning(), DONE)
    assert verdict.answer == "false" and verdict.value == math.inf
    assert names(verdict.evidence.stem) == ["spin"] and names(verdict.evidence.cycle) == ["spin"]
    assert verdict.reason == "a cycle of 1 s never reaches it"
    # the earliest: leave at 0, finish at 2
    assert earliest(spinning(), DONE).value == 2.0
    assert check(spinning(), "AF<=1000 tokens(done) >= 1").answer == "false"
    assert check(spinning(), "EG<=1000 tokens(done) == 0").answer == "true"


def test_a_cycle_that_lets_no_time_pass_never_reaches_the_goal_either():
    net = spinning()
    net.arcs = [arc for arc in net.arcs if not (arc.transition == "spin" and arc.delay)]
    net.add_output("p", "spin", "()")
    verdict = latest(net, DONE)
    assert verdict.value == math.inf and verdict.reason == "a cycle of 0 s never reaches it"


def test_a_dead_marking_before_the_goal():
    verdict = latest(dead_end(), DONE)
    assert verdict.answer == "false" and verdict.value == math.inf
    assert names(verdict.evidence.stem) == ["bad"] and verdict.evidence.cycle == []
    assert verdict.reason == "a run ends in a dead marking before it"
    assert earliest(dead_end(), DONE).value == 1.0
    refuted = check(dead_end(), "AF<=10 tokens(done) >= 1")
    assert refuted.answer == "false" and names(refuted.evidence.stem) == ["bad"]
    # the one-state-longer path that stops at stuck: done == 0 at every time on it
    assert check(dead_end(), "EG<=10 tokens(done) == 0").answer == "true"
    assert check(dead_end(), "EF<=1 tokens(done) >= 1").answer == "true"
    assert earliest(dead_end(), tokens("p") >= 2).answer == "false"  # never two tokens


@pytest.mark.parametrize(("delay_s", "timeout_s"), [(1.0, 3.0), (0.5, 2.5)])
def test_stop_and_wait_by_hand(delay_s, timeout_s):
    # no loss: segment 1 delivered at d, its ACK back at 2d, segment 2 delivered at 3d.
    # at most one loss: the worst is the loss of segment 1 or of its ACK (or of segment
    # 2): the timer expires at T, the resend arrives, segment 2 is delivered at T + 3d
    bounded = stop_and_wait(delay_s=delay_s, timeout_s=timeout_s, losses=1)
    first, last = earliest(bounded, DELIVERED_TWO), latest(bounded, DELIVERED_TWO)
    assert first.value == pytest.approx(3 * delay_s)
    assert last.value == pytest.approx(timeout_s + 3 * delay_s)
    assert names(first.evidence.stem) == ["send", "deliver", "receive_ack", "send", "deliver"]
    assert "lose_data" in names(last.evidence.stem) or "lose_ack" in names(last.evidence.stem)
    # any number of losses: the loss cycle (send, lose, wait for the timer) never delivers
    lossy = latest(stop_and_wait(delay_s=delay_s, timeout_s=timeout_s), DELIVERED_TWO)
    assert lossy.value == math.inf and names(lossy.evidence.cycle) == \
        ["send", "lose_data", "timeout"]
    assert lossy.evidence.cycle[-1].clock == pytest.approx(timeout_s)


def test_stop_and_wait_answers_on_its_small_relative_space():
    # the absolute-time space of the lossy net never closes (the clock grows on the loss
    # cycle); the relative one has 22 states, so the answer takes well under a second
    lossy = stop_and_wait()
    assert explore(lossy).n_states == 22
    assert explore(lossy, clock="absolute", max_states=2000).complete is False
    verdict = earliest(lossy, DELIVERED_TWO)
    assert (verdict.answer, verdict.value, verdict.states) == ("true", 3.0, 22)
    assert check(lossy, "EF<=3 tokens(delivered) >= 2").answer == "true"
    assert check(lossy, "AF<=100 tokens(delivered) >= 2").answer == "false"
    assert reachable_within(lossy, DELIVERED_TWO, 2.9).answer == "false"


def test_relative_and_absolute_spaces_give_the_same_times():
    # with at most one loss the absolute space is finite too: both must agree
    net = stop_and_wait(losses=1)
    for space in (explore(net), explore(net, clock="absolute")):
        assert space.complete
        assert earliest(space, DELIVERED_TWO).value == 3.0
        assert latest(space, DELIVERED_TWO).value == 6.0
    relative, absolute = explore(net), explore(net, clock="absolute")
    assert relative.n_states < absolute.n_states


def test_integer_intervals_are_exact_at_their_integer_points():
    # delays in [1, 3], timeout 4: timers may expire before their ACK (duplicates,
    # resends). Integer points against every half and every quarter of a second: the
    # same earliest and latest times (the integer-point argument), on spaces 5x larger
    integer = stop_and_wait(delay_s=Interval(1, 3), timeout_s=4, losses=0)
    first, last = earliest(integer, DELIVERED_TWO), latest(integer, DELIVERED_TWO)
    assert "INTEGER_POINTS" in first.technique and "INTEGER_POINTS" in last.technique
    assert (first.value, last.value) == (3.0, 9.0)
    halves = stop_and_wait(delay_s=Uniform(1, 3), timeout_s=4, losses=0)
    fine_first = earliest(halves, DELIVERED_TWO, delay_points=5)
    fine_last = latest(halves, DELIVERED_TWO, delay_points=5)
    assert "DELAY_POINTS" in fine_first.technique
    assert (fine_first.value, fine_last.value) == (first.value, last.value)
    assert fine_first.states > 4 * first.states
    assert check(integer, "AF<=9 tokens(delivered) >= 2").technique[-1] == "INTEGER_POINTS"
    assert check(integer, "AF<=9 tokens(delivered) >= 2").answer == "true"
    assert check(integer, "AF<=8.5 tokens(delivered) >= 2").answer == "false"


def test_other_random_delays_need_their_points():
    net = stop_and_wait(delay_s=Uniform(1, 3), timeout_s=4, losses=0)
    with pytest.raises(InputError, match="delay_points"):
        earliest(net, DELIVERED_TWO)
    # integer intervals, but a priority: rounding could reorder firings, so points only
    urgent = stop_and_wait(delay_s=Interval(1, 3), timeout_s=4, losses=0)
    urgent.transitions["timeout"] = replace(urgent.transitions["timeout"], priority=P_HIGH)
    with pytest.raises(InputError, match="delay_points"):
        earliest(urgent, DELIVERED_TWO)
    assert earliest(urgent, DELIVERED_TWO, delay_points=3).technique[-1] == "DELAY_POINTS"


def test_the_text_of_the_time_bounded_operators():
    for text in ("AF<=5.0 tokens(done) >= 1", "EF<=0.5 deadlock", "AG<=2.0 !deadlock",
                 "EG<=1.5 tokens(p) == 0", "AG (tokens(b) >= 1 -> AF<=3.0 tokens(done) >= 1)"):
        assert to_text(parse(text)) == to_text(parse(to_text(parse(text))))
    assert parse("AF<=5 deadlock") == AF(parse("deadlock"), within_s=5.0)
    assert parse("E F<=2 deadlock") == parse("EF<=2 deadlock")


@pytest.mark.parametrize(("text", "message"), [
    ("AF<=-1 tokens(done) >= 1", "AF<=-1.0: the time bound must be a finite number"),
    ("EG<=1e400 tokens(done) >= 1", "EG<=inf: the time bound must be a finite number"),
    ("AF<=3 F deadlock", "AF<=3.0: time-bounded operators are timed CTL"),
    ("A F F<=3 deadlock", "F<=3.0 must stand directly under A or E"),
    ("F<=3 deadlock", "F<=3.0 must stand directly under A or E"),
])
def test_bad_bounds_are_refused_naming_the_operator_and_the_bound(text, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        check(chain(), text)


def test_bad_bounds_from_python_and_untimed_nets_are_refused():
    for bound in (math.inf, math.nan, -0.5):
        with pytest.raises(InputError, match=f"F<={bound!r}: the time bound"):
            AF(DONE, within_s=bound)
    with pytest.raises(InputError, match="F<='3'"):
        FWithin(DONE, "3")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"EF<=2\.0: net counter is untimed"):
        check(counter(3), "EF<=2 deadlock")
    with pytest.raises(InputError, match="untimed"):
        earliest(counter(3), tokens("count") >= 1)
    with pytest.raises(InputError, match=r"AF<=2\.0: .* not checked under fairness"):
        check(chain(), "AF<=2 tokens(done) >= 1", fairness=Fairness(weak=("go",)))


def tcpn(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=300)


def test_the_command_line_checks_and_refuses_time_bounds(tmp_path):
    done = tcpn("check", "--python", "tcpn.petrinets.examples:stop_and_wait",
                "--ctl", "EF<=3 tokens(delivered) >= 2", "--ctl", "AF<=100 tokens(delivered) >= 2")
    assert done.returncode == 1, done.stderr  # the second is false
    assert "formula 1: TRUE  EF<=3.0 tokens(delivered) >= 2  (22 states" in done.stdout
    assert "formula 2: FALSE  AF<=100.0" in done.stdout and "cycle 2. lose_data" in done.stdout
    bad = tcpn("check", "--python", "tcpn.petrinets.examples:stop_and_wait",
               "--ctl", "AF<=-3 tokens(delivered) >= 2")
    assert bad.returncode == 3 and "AF<=-3.0: the time bound must be" in bad.stderr
    assert "Traceback" not in bad.stderr
    # a net with a time interval: explored at its integer points, stated
    script = tmp_path / "jitter.py"
    script.write_text("from tcpn.petrinets import Interval\n"
                      "from tcpn.petrinets.examples import stop_and_wait\n\n\n"
                      "def build():\n"
                      "    return stop_and_wait(delay_s=Interval(1, 3), timeout_s=4, losses=0)\n")
    done = tcpn("check", "--python", f"{script}:build", "--ctl", "AF<=9 tokens(delivered) >= 2")
    assert done.returncode == 0, done.stderr
    assert "TRUE  AF<=9.0" in done.stdout and "TIMED INTEGER_POINTS" in done.stdout


def test_an_infinite_latest_time_is_null_in_json():
    import json

    document = latest(spinning(), DONE).to_json()
    assert document["value"] is None and document["reason"] == "a cycle of 1 s never reaches it"
    json.dumps(document, allow_nan=False)


def test_the_command_line_answers_earliest_and_latest_with_their_runs(tmp_path):
    script = tmp_path / "nets.py"
    script.write_text("from tcpn.petrinets.examples import stop_and_wait\n"
                      "\n\ndef lossy():\n    return stop_and_wait(2, 1.0, 3.0, losses=1)\n")
    done = tcpn("check", "--python", f"{script}:lossy", "--earliest",
                "tokens(delivered) >= 2", "--latest", "tokens(delivered) >= 2")
    assert done.returncode == 0, done.stderr
    # by hand: d = 1, T = 3; quickest 3d, slowest the second segment lost once: T + 3d
    assert "formula 1: TRUE  earliest time of tokens(delivered) >= 2 = 3  (" in done.stdout
    assert "formula 2: TRUE  latest time of tokens(delivered) >= 2 = 6  (" in done.stdout
    assert "7. timeout <n=2> at 5" in done.stdout
    endless = tcpn("check", "--python", "tcpn.petrinets.examples:stop_and_wait",
                   "--latest", "tokens(delivered) >= 2")
    assert endless.returncode == 1 and "FALSE  latest time" in endless.stdout
    bad = tcpn("check", "--python", f"{script}:lossy", "--earliest",
               "EF tokens(delivered) >= 2")
    assert bad.returncode == 3 and "without a path quantifier" in bad.stderr
