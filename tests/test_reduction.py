"""Stubborn sets: the same verdicts as the full state space, fewer states."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcpn.petrinets import Simulator, explore
from tcpn.petrinets.checking.atoms import truth
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.formulas import AG, EF, Deadlock, Not, tokens
from tcpn.petrinets.checking.reduction import explore_stubborn
from tcpn.petrinets.examples import interleaving_grid, left_first_philosophers

sys.path.insert(0, str(Path(__file__).parent))
from test_ctl import small_nets, state_formulas


def dead(space):
    """The dead markings as comparable values (keys differ between two explorations)."""
    return {tuple((p, tuple(sorted(repr(t.value) for t in tokens)))
                  for p, tokens in sorted(space.marking(s).items()))
            for s in space.dead_markings()}


def test_philosophers_deadlock_kept_with_fewer_states():
    net = left_first_philosophers(8)
    full, reduced = explore(net), explore_stubborn(net, [Deadlock()])
    assert reduced.n_states < full.n_states / 4
    assert dead(reduced) == dead(full) and len(dead(full)) == 1
    verdict = check(net, "AG !deadlock", reduction="stubborn")
    assert verdict.answer == "false" and "STUBBORN_SETS" in verdict.technique
    sim = Simulator(net)
    for step in verdict.evidence.stem:
        sim.fire(step.transition, step.binding)
    assert sim.enabled() == []


def test_grid_reachability_with_the_proviso():
    net = interleaving_grid(10)
    goal = tokens("count1", value=7).equals(1)  # count2 is invisible: one order suffices
    reduced = explore_stubborn(net, [goal])
    assert (reduced.n_states, explore(net).n_states) == (21, 121)
    assert truth(reduced, goal).any()
    assert check(net, EF(goal), reduction="stubborn").answer == "true"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_same_verdicts_as_the_full_space(data):
    net = data.draw(small_nets())
    full = explore(net, max_states=200)
    if not full.complete:
        return
    reduced = explore_stubborn(net, [Deadlock()])
    assert dead(reduced) == dead(full)
    atoms = state_formulas(sorted(net.places), sorted(net.transitions)).filter(
        lambda f: not any(type(n).__name__ in "AE" for n in _walk(f)))
    p = data.draw(atoms)
    seen = explore_stubborn(net, [p])
    assert bool(truth(seen, p).any()) == bool(truth(full, p).any())
    for formula in (EF(p), AG(p), EF(Deadlock()), Not(EF(p))):
        assert check(net, formula, reduction="stubborn").holds == \
            check(full, formula).holds
    assert np.all(truth(seen, Deadlock())[seen.dead_markings()])


def _walk(f):
    yield f
    for c in f.children():
        yield from _walk(c)


def test_a_disabled_conflicting_transition_brings_in_what_enables_it():
    """t and u compete for p; u also needs q, which only w fills. Firing t alone first
    (ignoring that w can enable u) would lose the dead marking reached by w, u."""
    from tcpn.petrinets import UNIT, PetriNet, Place, Transition

    net = PetriNet("d2")
    for place, tokens_ in (("p", 1), ("q", 0), ("r", 1), ("s", 0)):
        net.add_place(Place(place, UNIT, initial=[()] * tokens_))
    # x competes with w for r, so that t (not w) is the cheapest key transition
    for name, takes, puts in (("t", ["p"], []), ("w", ["r"], ["q"]), ("u", ["p", "q"], ["s"]),
                              ("x", ["r"], [])):
        net.add_transition(Transition(name))
        for place in takes:
            net.add_input(place, name, "()")
        for place in puts:
            net.add_output(place, name, "()")
    full = explore(net)
    assert len(dead(full)) == 3
    assert dead(explore_stubborn(net, [Deadlock()])) == dead(full)
