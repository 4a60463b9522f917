"""Atoms over explored state spaces, against the state space's own edges and markings."""

from __future__ import annotations

import numpy as np
import pytest

from tcpn.errors import InputError
from tcpn.petrinets import INT, P_HIGH, PetriNet, Place, Transition, explore
from tcpn.petrinets.checking.atoms import edge_transitions, truth
from tcpn.petrinets.checking.formulas import Deadlock, Predicate, clock, fireable, tokens
from tcpn.petrinets.examples import counter, dining_philosophers, interleaving_grid


def _by_edges(space):
    """Per state, the transitions of its stored edges (expanded states only)."""
    return [sorted({e.transition for e in space.edges(s)}) for s in range(space.n_states)]


@pytest.mark.parametrize("net", [dining_philosophers(5), interleaving_grid(3), counter(4),
                                 dining_philosophers(22)], ids=["phil5", "grid", "counter",
                                                                "phil22-wide-keys"])
@pytest.mark.parametrize("kept", [True, False], ids=["labels-kept", "labels-recomputed"])
def test_fireability_and_labels_match_the_edges(net, kept):
    """The explorer keeps each edge's transition; without them (a space made elsewhere)
    the atoms recompute them from the markings: both give each state's own edges."""
    space = explore(net)
    assert space.edge_labels is not None
    if not kept:
        space.edge_labels = None
    names = [ct.name for ct in space.compiled.transitions]
    edges = _by_edges(space) if space.n_states < 500 else None
    labels = edge_transitions(space)
    step = max(1, space.n_states // 300)
    for s in range(0, space.n_states, step):
        found = sorted({e.transition for e in space.edges(s)}) if edges is None else edges[s]
        assert [names[t] for t in labels[space.edge_start[s]:space.edge_start[s + 1]]] == \
            [e.transition for e in space.edges(s)]
        for name in names:
            assert truth(space, fireable(name))[s] == (name in found)
    assert np.flatnonzero(truth(space, Deadlock())).tolist() == space.dead_markings()


def test_token_counts_by_hand():
    space = explore(dining_philosophers(5))
    eating = truth(space, tokens(*(f"eat{i}" for i in range(5))) >= 2)
    assert eating.sum() == 5  # two non-neighbours of five: 5 ways
    forks = truth(space, tokens(*(f"fork{i}" for i in range(5))).equals(1))
    assert forks.sum() == 5  # the same markings: four forks taken


def test_colour_filter_and_predicate():
    net = PetriNet("colours")
    net.add_place(Place("p", INT, initial=[1, 1, 2]))
    net.add_place(Place("q", INT))
    net.add_transition(Transition("move"))
    net.add_input("p", "move", "x")
    net.add_output("q", "move", "x")
    space = explore(net)
    ones = truth(space, tokens("q", value=1).equals(2))
    pred = truth(space, Predicate("two ones", lambda m, _: sum(t.value == 1 for t in m["q"]) == 2))
    assert ones.tolist() == pred.tolist()
    assert ones.sum() == 2  # q = {1,1} and q = {1,1,2}


def test_priorities_hide_lower_transitions():
    net = PetriNet("prio")
    net.add_place(Place("p", INT, initial=[0]))
    net.add_transition(Transition("urgent", guard="x < 2", priority=P_HIGH))
    net.add_transition(Transition("lazy"))
    for t in ("urgent", "lazy"):
        net.add_input("p", t, "x")
        net.add_output("p", t, "x + 1")
    space = explore(net, max_states=10)
    urgent, lazy = truth(space, fireable("urgent")), truth(space, fireable("lazy"))
    assert not (urgent & lazy).any()
    assert lazy[np.flatnonzero(~urgent)].all()


def test_clock_needs_absolute_time_and_a_timed_net():
    with pytest.raises(InputError, match="untimed"):
        truth(explore(counter(2)), clock() <= 1.0)
    with pytest.raises(InputError, match="absolute"):
        truth(explore(counter(2, timed=True, delay=1.0)), clock() <= 1.0)
    space = explore(counter(3, timed=True, delay=1.5), clock="absolute")
    assert truth(space, clock() <= 3.0).tolist() == [space.clock(s) <= 3.0
                                                     for s in range(space.n_states)]


def test_unknown_names_are_named():
    space = explore(counter(2))
    with pytest.raises(InputError, match="no place named 'cnt'"):
        truth(space, tokens("cnt") <= 1)
    with pytest.raises(InputError, match="no transition named 'inc'"):
        truth(space, fireable("inc"))


def test_explore_stops_at_a_default_limit_and_reports_progress(monkeypatch):
    import tcpn.petrinets.statespace.space as statespace

    monkeypatch.setattr(statespace, "PROGRESS_EVERY_S", 0.0)
    calls = []
    space = explore(counter(10**9), max_states=3000,
                    progress=lambda states, expanded, seconds: calls.append((states, expanded)))
    assert not space.complete and space.limit == "max_states=3000"
    assert "stopped at the limit max_states=3000" in space.summary()
    assert calls and all(s >= e for s, e in calls)
    assert explore.__defaults__[0] == statespace.DEFAULT_MAX_STATES


def test_a_checked_space_is_freed_with_its_last_reference():
    """The per-space caches of the atoms and of the CTL checker are weak: a process that
    checks one space after another (the evidence table, a contest run) frees each when it
    is done with it. The cached columns once held the space strongly, so every space
    checked stayed in memory to the end of the process."""
    import gc
    import weakref

    from tcpn.petrinets.checking.check import check
    from tcpn.petrinets.checking.formulas import AG, EF, F
    from tcpn.petrinets.checking.ltl import check_ltl

    space = explore(counter(3))
    assert truth(space, Deadlock()).tolist() == [False, False, False, True]
    assert check(space, EF(Deadlock())).holds and not check(space, AG(~Deadlock())).holds
    assert check_ltl(AG(F(Deadlock())), space).holds  # the LTL product's graph cache
    freed = weakref.ref(space)
    del space
    gc.collect()
    assert freed() is None
