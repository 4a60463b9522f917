"""Time properties: earliest, latest, time-bounded reachability, and ``clock()`` formulas on
absolute-time state spaces (relative-time answers: ``test_timed_relative.py``)."""

from __future__ import annotations

import pytest

from tcpn.errors import InputError
from tcpn.petrinets import INT, UNIT, PetriNet, Place, Simulator, Transition
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.formulas import tokens
from tcpn.petrinets.checking.timed import earliest, latest, reachable_within
from tcpn.petrinets.examples import counter


def two_routes() -> PetriNet:
    """A segment goes by a fast (1 s) or a slow (3 s) route, then its ACK takes 0.5 s."""
    net = PetriNet("routes")
    net.add_place(Place("sent", INT.timed(), initial=[1]))
    net.add_place(Place("arrived", INT.timed()))
    net.add_place(Place("acked", INT.timed()))
    for name, delay in (("fast", 1.0), ("slow", 3.0)):
        net.add_transition(Transition(name, delay=delay))
        net.add_input("sent", name, "n")
        net.add_output("arrived", name, "n")
    net.add_transition(Transition("ack", delay=0.5))
    net.add_input("arrived", "ack", "n")
    net.add_output("acked", "ack", "n")
    return net


ACKED = tokens("acked") >= 1


def test_earliest_and_latest_by_hand():
    # ack fires at 1 (fast) or 3 (slow); the acked token is there from that firing on
    first, last = earliest(two_routes(), ACKED), latest(two_routes(), ACKED)
    assert (first.answer, first.value) == ("true", 1.0)
    assert (last.answer, last.value) == ("true", 3.0)
    assert [s.transition for s in first.evidence.stem] == ["fast", "ack"]
    assert [s.transition for s in last.evidence.stem] == ["slow", "ack"]
    sim = Simulator(two_routes())
    for step in last.evidence.stem:
        sim.fire(step.transition, step.binding)
        assert sim.now == step.clock
    assert reachable_within(two_routes(), ACKED, 1.0).answer == "true"
    assert reachable_within(two_routes(), ACKED, 0.99).answer == "false"
    assert check(two_routes(), "AG (tokens(acked) >= 1 -> clock() <= 3)").answer == "true"
    assert check(two_routes(), "AG (tokens(acked) >= 1 -> clock() <= 2.5)").answer == "false"


def test_latest_is_unbounded_when_a_run_avoids_the_goal():
    net = two_routes()
    net.add_transition(Transition("drop"))
    net.add_input("sent", "drop", "n")
    verdict = latest(net, ACKED)
    assert verdict.answer == "false"
    assert [s.transition for s in verdict.evidence.stem] == ["drop"]


def test_clock_needs_time():
    untimed = PetriNet("u")
    untimed.add_place(Place("p", UNIT, initial=[()]))
    with pytest.raises(InputError, match="untimed"):
        earliest(untimed, tokens("p") >= 1)
    with pytest.raises(InputError, match="untimed"):
        check(counter(2), "EF clock() >= 1")
    endless = counter(10**9, timed=True, delay=1.0)
    assert earliest(endless, tokens("count", value=5).equals(1), max_states=50).answer == \
        "unknown"
