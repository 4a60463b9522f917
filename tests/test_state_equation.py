"""The state equation's bound on place counts: never below what is reachable, None where
it does not hold or does not exist."""

from __future__ import annotations

from itertools import pairwise

import pytest

from tcpn.petrinets.checking.contest.state_equation import (
    one_safe_by_state_equation,
    stable_place,
    state_equation_bound,
)
from tcpn.petrinets.colours import UNIT
from tcpn.petrinets.examples import dining_philosophers, left_first_philosophers, retransmission
from tcpn.petrinets.net import Arc, ArcKind, PetriNet, Place, Transition
from tcpn.petrinets.statespace.ptspace import explore_pt, pt_net


def p_t(places: dict[str, int], transitions: dict[str, tuple[dict[str, int],
                                                             dict[str, int]]]) -> PetriNet:
    """A P/T net: initial counts per place, (inputs, outputs) with weights per transition."""
    net = PetriNet("pt")
    for name, count in places.items():
        net.add_place(Place(name, UNIT, initial=[()] * count))
    for name, (inputs, outputs) in transitions.items():
        net.add_transition(Transition(name))
        for place, weight in inputs.items():
            net.add_input(place, name, "()", count=weight)
        for place, weight in outputs.items():
            net.add_output(place, name, "()", count=weight)
    return net


@pytest.mark.parametrize("net", [dining_philosophers(5), left_first_philosophers(4),
                                 retransmission()], ids=["philosophers5", "left-first4",
                                                         "retransmission"])
def test_the_bound_is_never_below_the_reachable_maximum(net):
    """Every place and every pair of neighbouring places: the bound holds (and on these
    safe nets is met)."""
    matrices = pt_net(net)
    space = explore_pt(matrices)
    names = list(matrices.places)
    for chosen in [[p] for p in names] + [list(pair) for pair in pairwise(names)]:
        most = int(space.tokens(chosen).max())
        assert state_equation_bound(matrices, chosen) >= most
    assert all(state_equation_bound(matrices, [p]) == int(space.tokens([p]).max())
               for p in names)


def test_weights_and_a_place_counted_twice():
    """a (3 tokens) -> t -> 2'b: b holds at most 6; a listed twice counts twice."""
    net = pt_net(p_t({"a": 3, "b": 0}, {"t": ({"a": 1}, {"b": 2})}))
    assert state_equation_bound(net, ["b"]) == 6
    assert state_equation_bound(net, ["a", "a"]) == 6
    assert state_equation_bound(net, ["a", "b"]) == 6


def test_the_bound_is_an_over_approximation():
    """One token going round a <-> b; u needs both to put 2 on e, so e stays empty; the
    state equation lets half a firing of u through (a + b = 1 - 2 x_u): bound 1, not 0."""
    net = pt_net(p_t({"a": 1, "b": 0, "e": 0}, {
        "t": ({"a": 1}, {"b": 1}), "back": ({"b": 1}, {"a": 1}),
        "u": ({"a": 1, "b": 1}, {"e": 2})}))
    assert int(explore_pt(net).tokens(["e"]).max()) == 0
    assert state_equation_bound(net, ["e"]) == 1


def test_no_bound_for_an_unbounded_place_or_with_a_reset_arc():
    assert state_equation_bound(pt_net(p_t({"a": 0}, {"make": ({}, {"a": 1})})), ["a"]) is None
    reset = p_t({"a": 1, "b": 0}, {"t": ({"a": 1}, {"b": 1})})
    reset.add_transition(Transition("clear"))
    reset.add_arc(Arc(ArcKind.RESET, "b", "clear"))
    assert state_equation_bound(pt_net(reset), ["b"]) is None


def test_a_place_no_firing_changes_is_stable():
    """``lock`` is only read (taken and put back): the same count in every marking."""
    net = p_t({"a": 1, "b": 0, "lock": 1}, {"t": ({"a": 1, "lock": 1}, {"b": 1, "lock": 1}),
                                            "back": ({"b": 1}, {"a": 1})})
    assert stable_place(pt_net(net)) == "lock"
    net.add_transition(Transition("clear"))
    net.add_arc(Arc(ArcKind.RESET, "lock", "clear"))
    assert stable_place(pt_net(net)) is None
    assert stable_place(pt_net(dining_philosophers(3))) is None


def test_one_safe_when_the_state_equation_bounds_every_place_by_one():
    assert one_safe_by_state_equation(pt_net(dining_philosophers(5)))
    assert not one_safe_by_state_equation(pt_net(p_t({"a": 2}, {})))
    assert not one_safe_by_state_equation(pt_net(p_t({"a": 1, "b": 0}, {
        "t": ({"a": 1}, {"b": 2})})))
    assert not one_safe_by_state_equation(pt_net(dining_philosophers(5)), time_limit_s=0.0)
