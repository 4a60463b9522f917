"""The simulator's early-stopping enumeration (``enumerate_due``) loses no firing.

``enumerate_due`` stops scanning a timed place whose values are in timestamp order once
it has passed the earliest future binding. Running the same seeded net with the complete
``enumerate`` instead must give exactly the same firing sequence, for nets that keep their
places in order (FIFO wires) and nets that do not (random delays, partial consumption).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from tcpn.petrinets import (
    INT,
    UNIT,
    Exponential,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Token,
    Transition,
    Uniform,
    compile_net,
)


def random_timed_net(seed: int, deterministic: bool = False) -> PetriNet:
    """Sources feed timed 'wires' (constant or random delays) drained by sinks that may
    consume two tokens at once, read a timed gate, or match values across wires."""
    rng = np.random.default_rng(seed)
    net = PetriNet(f"random{seed}")
    pair = ProductSet(INT, INT).timed()
    n_wires = int(rng.integers(1, 4))
    for w in range(n_wires):
        net.add_place(Place(f"src{w}", INT.timed(), initial=[0]))
        net.add_place(Place(f"wire{w}", pair))
        delay = (float(rng.integers(1, 20)) if rng.random() < 0.5
                 else Exponential(mean=float(rng.uniform(1, 10))))
        gap = rng.uniform(0.5, 3.0)
        if deterministic:  # constant delays: a replay needs no random draws
            delay = delay if isinstance(delay, float) else float(rng.integers(1, 20))
        net.add_transition(Transition(f"send{w}", guard=f"n < {int(rng.integers(20, 60))}"))
        net.add_input(f"src{w}", f"send{w}", "n")
        net.add_output(f"src{w}", f"send{w}", "n + 1",
                       delay=float(gap) if deterministic else Uniform(0.0, float(gap)))
        # the second component repeats values when `spread` is small: one value then holds
        # several timestamps, and partial consumption can put the place out of order
        spread = int(rng.choice([1, 2, 1000]))
        net.add_output(f"wire{w}", f"send{w}",
                       f"(n % {int(rng.integers(1, 6))}, n % {spread})", delay=delay)
        consume = int(rng.integers(1, 3))
        net.add_transition(Transition(f"recv{w}", delay=float(rng.integers(0, 3))))
        net.add_input(f"wire{w}", f"recv{w}", "(k, n)", count=consume)
        net.add_place(Place(f"sink{w}", INT.timed()))
        net.add_output(f"sink{w}", f"recv{w}", "k")
        if rng.random() < 0.5:
            net.add_place(Place(f"gate{w}", UNIT.timed(), initial=[Token((), 5.0)]))
            net.add_read(f"gate{w}", f"recv{w}", "()")
    if n_wires > 1:
        net.add_transition(Transition("join"))
        net.add_input("sink0", "join", "k")
        net.add_input("sink1", "join", "k")
        net.add_place(Place("joined", INT))
        net.add_output("joined", "join", "k")
    return net


def firing_sequence(net: PetriNet, seed: int, complete: bool) -> list[tuple]:
    compiled = compile_net(net)
    if complete:  # with the clock at infinity nothing is in the future: no early stop
        for t in compiled.transitions:
            t.enumerate_due = lambda M, now, inord, due=t.enumerate_due: due(M, math.inf, inord)
    sim = Simulator(compiled, seed=seed)
    return [(f.time, f.transition, tuple(f.binding.items()))
            for f in iter(sim.step, None)]


@pytest.mark.parametrize("seed", range(25))
def test_due_enumeration_matches_complete_enumeration(seed):
    net = random_timed_net(seed)
    due = firing_sequence(net, seed, complete=False)
    complete = firing_sequence(net, seed, complete=True)
    assert len(due) > 10
    assert due == complete


def test_fifo_wire_stays_in_order_and_out_of_order_wire_is_detected():
    net = PetriNet("wires")
    net.add_place(Place("fifo", INT.timed(), initial=[Token(1, 1.0), Token(2, 2.0)]))
    net.add_place(Place("mixed", INT.timed(), initial=[Token(1, 5.0), Token(2, 2.0)]))
    compiled = compile_net(net)
    in_order, latest = compiled.timestamp_order(compiled.initial_marking())
    assert in_order == [True, False] and latest == [2.0, 5.0]


@pytest.mark.parametrize("seed", range(10))
def test_hot_loop_and_query_methods_agree(seed):
    """Every binding ``step()`` fires is one ``enabled()`` offers in a twin replaying it
    through ``fire()``, at the same time: the inlined loop and the query path agree.
    Delays are constant so that the replay needs none of the runner's random draws."""
    net = random_timed_net(seed, deterministic=True)
    runner, replayer = Simulator(net, seed=seed), Simulator(net, seed=seed + 1)
    for firing in iter(runner.step, None):
        assert replayer.peek() == firing.time
        assert (firing.transition, firing.binding) in replayer.enabled()
        replayer.fire(firing.transition, firing.binding)
    assert replayer.peek() == float("inf")
    assert replayer.marking_dict() == runner.marking_dict()


def ties_in_step_with_the_full_scan(net: PetriNet, seed: int) -> int:
    """Runs ``net`` to the end checking, at every firing, that the hot loop fires the
    binding the full scan of ``_candidates`` (every binding of every live transition, in
    their order) and the next random index pick; returns how many choices had ties."""
    sim = Simulator(net, seed=seed)
    ties = 0
    while True:
        sim._refresh()
        at, chosen = sim._candidates()
        if not chosen:
            break
        ties += len(chosen) > 1
        t, binding = (chosen[0] if len(chosen) == 1
                      else chosen[copy.deepcopy(sim._draw).choose(len(chosen))])
        firing = sim.step()
        assert firing is not None
        assert (firing.time, firing.transition) == (at, sim.compiled.transitions[t].name)
        assert firing.binding == sim._binding_dict(t, binding)
    assert sim.step() is None and sim.firings > 10
    return ties


@pytest.mark.parametrize("seed", range(12))
def test_the_loops_choice_is_the_full_scans_choice(seed):
    """The loop's first pass over each transition's earliest binding, and its second
    pass over the tied ones only, change the work, not the choice. Half the seeds give
    the transitions random priorities."""
    net = random_timed_net(seed, deterministic=True)
    if seed % 2:
        rng = np.random.default_rng(seed)
        for transition in net.transitions.values():
            transition.priority = int(rng.integers(0, 3))
    ties_in_step_with_the_full_scan(net, seed)


def test_the_loops_choice_breaks_ties_as_the_full_scan():
    """Tokens ready at the same times on two wires, drained by two transitions of one
    priority and a third of a lower one, one of them behind a gate: most choices tie."""
    net = PetriNet("ties")
    for w in range(2):
        net.add_place(Place(f"wire{w}", INT.timed(),
                            initial=[Token(k % 4, float(k // 3)) for k in range(30)]))
        net.add_place(Place(f"out{w}", INT))
        net.add_transition(Transition(f"take{w}", priority=w))
        net.add_input(f"wire{w}", f"take{w}", "k")
        net.add_output(f"out{w}", f"take{w}", "k")
    net.add_place(Place("gate", UNIT.timed(), initial=[Token((), 4.0)]))
    net.add_transition(Transition("late"))
    net.add_read("gate", "late", "()")
    net.add_input("wire1", "late", "k")
    net.add_output("out0", "late", "k")
    assert ties_in_step_with_the_full_scan(net, seed=3) > 20
