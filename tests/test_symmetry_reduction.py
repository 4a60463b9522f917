"""The generic symmetry reduction (``explore(..., symmetry=...)``) on a cyclic net of
identical processes, untimed and timed: orbits, dead markings and CTL answers against the
unreduced space, refusals, and lassos lifted to real cycles that the simulator fires.

The net: ``n`` processes ``idle{i} -> wait{i} -> crit{i} -> idle{i}`` around one mutex;
entering writes the process's number on the shared place ``log`` (so a renaming must map
token values too). Exchanging processes is a symmetry when it renames places, transitions
and the numbers on ``log`` alike.
"""

from __future__ import annotations

import itertools
from typing import Any

import networkx as nx
import pytest

from tcpn.errors import InputError
from tcpn.models.verification.flow_symmetry import asymmetric_atom
from tcpn.petrinets import INT, UNIT, PetriNet, Place, Token, Transition
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.formulas import AG, EF, Formula, tokens
from tcpn.petrinets.engine.simulator import Simulator
from tcpn.petrinets.statespace.paths import Step
from tcpn.petrinets.statespace.space import StateSpace, explore
from tcpn.petrinets.statespace.symmetry import IDENTITY, Renaming, Symmetry, lift_path


def mutex(n: int, timed: bool) -> PetriNet:
    net = PetriNet(f"mutex{n}")
    net.add_place(Place("mutex", UNIT, initial=[()]))
    net.add_place(Place("log", INT, initial=[-1]))
    for i in range(n):
        idle = UNIT.timed() if timed else UNIT
        net.add_place(Place(f"idle{i}", idle, initial=[Token((), 0.0) if timed else ()]))
        net.add_place(Place(f"wait{i}", UNIT))
        net.add_place(Place(f"crit{i}", UNIT))
        net.add_transition(Transition(f"request{i}"))
        net.add_input(f"idle{i}", f"request{i}", "()")
        net.add_output(f"wait{i}", f"request{i}", "()")
        net.add_transition(Transition(f"enter{i}"))
        net.add_input(f"wait{i}", f"enter{i}", "()")
        net.add_input("mutex", f"enter{i}", "()")
        net.add_input("log", f"enter{i}", "x")
        net.add_output("log", f"enter{i}", str(i))
        net.add_output(f"crit{i}", f"enter{i}", "()")
        net.add_transition(Transition(f"leave{i}"))
        net.add_input(f"crit{i}", f"leave{i}", "()")
        net.add_output("mutex", f"leave{i}", "()")
        if timed:
            net.add_output(f"idle{i}", f"leave{i}", "()", delay=1.0)
        else:
            net.add_output(f"idle{i}", f"leave{i}", "()")
    return net


def exchanges(n: int, with_values: bool = True) -> Symmetry:
    elements = [IDENTITY]
    for perm in itertools.permutations(range(n)):
        if list(perm) == sorted(perm):
            continue
        places = {f"{kind}{i}": f"{kind}{perm[i]}" for i in range(n)
                  for kind in ("idle", "wait", "crit")}
        transitions = {f"{kind}{i}": f"{kind}{perm[i]}" for i in range(n)
                       for kind in ("request", "enter", "leave")}

        def value(v: Any, perm: tuple[int, ...] = perm) -> Any:
            return perm[v] if isinstance(v, int) and v >= 0 else v
        elements.append(Renaming(str(perm), places, transitions,
                                 value if with_values else (lambda v: v),
                                 frozenset({"log"})))
    return Symmetry(tuple(elements), f"permutations of {n} processes")


def form(space: StateSpace, state: int, symmetry: Symmetry) -> str:
    marking = space.marking(state)
    return min(repr(sorted((p, sorted(repr(t) for t in ts))
                           for p, ts in e.marking(marking).items()))
               for e in symmetry.elements)


@pytest.mark.parametrize(("n", "timed"), [(2, False), (3, False), (3, True), (4, True)])
def test_orbits_dead_markings_and_ctl_match_the_unreduced(n: int, timed: bool) -> None:
    net, symmetry = mutex(n, timed), exchanges(n)
    full = explore(net)
    reduced = explore(net, symmetry=symmetry, shift_checks=None)
    orbits = {form(full, s, symmetry) for s in range(full.n_states)}
    assert reduced.n_states == len(orbits) < full.n_states
    assert {form(reduced, s, symmetry) for s in range(reduced.n_states)} == orbits
    assert {form(full, s, symmetry) for s in full.dead_markings()} == \
        {form(reduced, s, symmetry) for s in reduced.dead_markings()}
    crit = tokens(*(f"crit{i}" for i in range(n)))
    formulas: list[Formula] = [AG(crit <= 1), AG(crit <= 0), EF(crit >= 1),
                               AG(EF(tokens("mutex") >= 1))]
    for formula in formulas:
        assert asymmetric_atom(reduced, formula, symmetry) is None
        assert check(reduced, formula).answer == check(full, formula).answer


def test_an_atom_naming_one_process_is_found() -> None:
    net, symmetry = mutex(3, False), exchanges(3)
    reduced = explore(net, symmetry=symmetry)
    assert asymmetric_atom(reduced, AG(tokens("crit0") <= 0), symmetry) is not None
    assert asymmetric_atom(reduced, AG(tokens("log", value=1) <= 0), symmetry) is not None


def test_renaming_places_without_values_is_refused() -> None:
    with pytest.raises(InputError, match="not an automorphism"):
        explore(mutex(3, False), symmetry=exchanges(3, with_values=False), shift_checks=None)


def fires(net: PetriNet, steps: list[Step]) -> None:
    sim = Simulator(net)
    for step in steps:
        sim.fire(step.transition, step.binding)


@pytest.mark.parametrize("timed", [False, True])
def test_lassos_lift_to_real_cycles(timed: bool) -> None:
    """Every state's shortest path, then a shortest cycle back to it: lifted, the stem and
    the real cycle (the quotient's repeated until the real marking returns) fire in the
    simulator, the cycle twice."""
    net, symmetry = mutex(3, timed), exchanges(3)
    reduced = explore(net, symmetry=symmetry)
    graph = nx.DiGraph([(s, t) for s in range(reduced.n_states)
                        for t in reduced.successors(s)])
    longer = 0
    for state in range(reduced.n_states):
        returns = [t for t in reduced.successors(state) if nx.has_path(graph, t, state)]
        if not returns:  # the initial marking (log = -1) is never met again
            continue
        back = min((nx.shortest_path(graph, t, state) for t in returns), key=len)
        states = [0]
        steps: list[Step] = []
        route = [*nx.shortest_path(graph, 0, state)[1:], *back]
        for target in route:
            edge = next(e for e in reduced.edges(states[-1]) if e.target == target)
            steps.append(Step(edge.transition, edge.binding, {}))
            states.append(target)
        start = len(nx.shortest_path(graph, 0, state)) - 1
        stem, cycle = lift_path(reduced, states, steps, start)
        rounds = len(steps) - start
        assert (len(stem) - start) % rounds == 0 and len(cycle) % rounds == 0
        longer += len(cycle) > rounds
        fires(net, [*stem, *cycle, *cycle])
        assert cycle[-1].marking == stem[-1].marking  # the real cycle closes
    assert longer > 0  # some cycles only close after going round several times


def test_renamings_that_are_not_a_group_are_refused() -> None:
    """A rotation of three processes without its square: the smallest image over such a
    set is no function of the orbit."""
    rotation = next(e for e in exchanges(3).elements if e.name == "(1, 2, 0)")
    with pytest.raises(InputError, match="not a group"):
        explore(mutex(3, False), symmetry=Symmetry((IDENTITY, rotation)))
