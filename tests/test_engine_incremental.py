"""The simulator's incremental state (gates, live transitions, running totals) is exact.

After every firing the simulator re-tests only the gates and re-enumerates only the
transitions the firing affected. These tests recompute, at every step, what must be
enabled from scratch (every transition's complete ``enumerate`` on the current marking,
the earliest time, the most urgent priority) and compare it with what the simulator
offers, on random nets built around gates: locks taken as ``()``, inhibitors without
inscription, timed link tokens guarding a FIFO wire (whose enumeration may stop early).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_calendar import firing_sequence  # the tests directory is on pytest's path

from tcpn.petrinets import (
    INT,
    P_HIGH,
    P_NORMAL,
    UNIT,
    Exponential,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Token,
    Transition,
    compile_net,
)


def random_gated_net(seed: int, timed: bool, priorities: bool = False,
                     gates: bool = True) -> PetriNet:
    """Workers sharing locks (gated ``acquire``), a halt place inhibiting some of them,
    and, when timed, a link token gating the service of a FIFO wire and a ticker (whose
    firings move the link's readiness while the wire stays as it is)."""
    rng = np.random.default_rng(seed)
    net = PetriNet(f"gated{seed}")
    unit = UNIT.timed() if timed else UNIT
    number = INT.timed() if timed else INT
    n_locks = int(rng.integers(1, 4))
    for j in range(n_locks):
        net.add_place(Place(f"lock{j}", unit, initial=[()] * int(rng.integers(1, 3))))
    net.add_place(Place("halt", number))
    for w in range(int(rng.integers(2, 6))):
        priority = int(rng.choice([P_HIGH, P_NORMAL])) if priorities else P_NORMAL
        net.add_place(Place(f"idle{w}", number, initial=[0]))
        net.add_place(Place(f"busy{w}", number))
        net.add_transition(Transition(f"acquire{w}", guard=f"n < {int(rng.integers(5, 30))}",
                                      priority=priority,
                                      delay=float(rng.integers(0, 3)) if timed else None))
        net.add_input(f"idle{w}", f"acquire{w}", "n")
        locks = rng.choice(n_locks, size=int(rng.integers(1, n_locks + 1)), replace=False)
        if gates:
            for j in locks:
                net.add_input(f"lock{j}", f"acquire{w}", "()")
        if rng.random() < 0.3 and gates:
            net.add_inhibitor("halt", f"acquire{w}")
        net.add_output(f"busy{w}", f"acquire{w}", "n")
        net.add_transition(Transition(f"release{w}",
                                      delay=Exponential(1.0 + w) if timed else None))
        net.add_input(f"busy{w}", f"release{w}", "n")
        net.add_output(f"idle{w}", f"release{w}", "n + 1")
        if gates:
            for j in locks:
                net.add_output(f"lock{j}", f"release{w}", "()")
        if rng.random() < 0.3:
            net.add_output("halt", f"release{w}", "n", when="n % 4 == 3")
    net.add_transition(Transition("resume"))
    net.add_input("halt", "resume", "k")
    if timed:
        pair = ProductSet(INT, INT).timed()
        net.add_place(Place("src", number, initial=[0]))
        net.add_place(Place("wire", pair))
        net.add_place(Place("link", unit, initial=[Token((), 3.0)]))
        net.add_transition(Transition("send", guard=f"n < {int(rng.integers(20, 50))}"))
        net.add_input("src", "send", "n")
        net.add_output("src", "send", "n + 1", delay=float(rng.uniform(0.2, 1.0)))
        wire_delay = float(rng.integers(1, 8))
        net.add_output("wire", "send", "(n, n % 3)", delay=wire_delay)
        # a second token with the same timestamp: ties on the wire at future times
        net.add_output("wire", "send", "(n, 3)", delay=wire_delay)
        # serving the wire needs the link: its token's readiness moves at every service
        net.add_transition(Transition("serve", guard="k != 1"))
        net.add_input("wire", "serve", "(n, k)")
        net.add_input("link", "serve", "()")
        net.add_output("link", "serve", "()", delay=float(rng.uniform(0.5, 4.0)))
        net.add_transition(Transition("skip", guard="k == 1"))
        net.add_input("wire", "skip", "(n, k)")
        net.add_read("link", "skip", "()")
        # the link also serves ticks: its readiness moves while the wire stays as it is
        net.add_place(Place("ticks", number, initial=[Token(0, 1.0)]))
        net.add_transition(Transition("tick", guard="n < 40"))
        net.add_input("ticks", "tick", "n")
        net.add_input("link", "tick", "()")
        net.add_output("link", "tick", "()", delay=float(rng.uniform(2.0, 6.0)))
        net.add_output("ticks", "tick", "n + 1", delay=float(rng.uniform(0.5, 3.0)))
    return net


def from_scratch(sim: Simulator) -> tuple[float, set[tuple[str, tuple]]]:
    """The earliest firing time and the most urgent bindings enabled then, computed from
    every transition's complete enumeration of the current marking."""
    found = []
    for t in sim.compiled.transitions:
        for ready, binding in t.enumerate(sim.marking):
            found.append((max(ready, sim.now), t.priority, t.name,
                          tuple(zip(t.variables, binding, strict=True))))
    if not found:
        return math.inf, set()
    at = min(f[0] for f in found)
    urgent = min(f[1] for f in found if f[0] == at)
    return at, {(f[2], f[3]) for f in found if f[0] == at and f[1] == urgent}


def check_run(net: PetriNet, seed: int, steps: int = 400) -> int:
    sim = Simulator(net, seed=seed)
    simple = not any(sim.compiled.timed) and len({t.priority
                                                 for t in sim.compiled.transitions}) == 1
    fired = 0
    for _ in range(steps):
        at, expected = from_scratch(sim)
        offered = {(name, tuple(b.items())) for name, b in sim.enabled()}
        assert sim.peek() == at
        assert offered == expected, (sim.now, fired)
        if simple:  # the running total the choice draws from
            assert sim._total == len(expected)
        firing = sim.step()
        if firing is None:
            assert not expected
            break
        assert firing.time == at
        assert (firing.transition, tuple(firing.binding.items())) in expected
        fired += 1
    return fired


@pytest.mark.parametrize("seed", range(12))
def test_untimed_gated_nets_offer_what_enumeration_finds(seed):
    assert check_run(random_gated_net(seed, timed=False), seed) > 50


@pytest.mark.parametrize("seed", range(6))
def test_untimed_nets_without_gates(seed):
    net = random_gated_net(seed, timed=False, gates=False)
    assert not compile_net(net).gates
    assert check_run(net, seed) > 50


@pytest.mark.parametrize("seed", range(12))
def test_untimed_gated_nets_with_priorities(seed):
    assert check_run(random_gated_net(seed, timed=False, priorities=True), seed) > 50


@pytest.mark.parametrize("seed", range(12))
def test_timed_gated_nets_offer_what_enumeration_finds(seed):
    assert check_run(random_gated_net(seed, timed=True, priorities=seed % 2 == 1), seed) > 50


@pytest.mark.parametrize("seed", range(8))
def test_gated_due_enumeration_matches_complete_enumeration(seed):
    """Same seed, early-stopping vs complete enumeration: the same firings."""
    net = random_gated_net(seed, timed=True)
    due = firing_sequence(net, seed, complete=False)
    assert len(due) > 50
    assert due == firing_sequence(net, seed, complete=True)


def test_a_lock_is_one_gate_shared_by_its_transitions():
    net = random_gated_net(0, timed=False)
    net.add_place(Place("x", INT, initial=[1]))
    net.add_transition(Transition("uses_x"))
    net.add_input("x", "uses_x", "v")  # a binder: its place is no gate
    net.add_input("lock0", "uses_x", "()")
    compiled = compile_net(net)
    lock0 = compiled.place_index["lock0"]
    uses_x = compiled.transition("uses_x")
    assert uses_x.gate_places == (lock0,)
    assert compiled.place_index["x"] not in uses_x.gate_places
    gated_by_lock0 = [t.index for t in compiled.transitions if t.gate_places == (lock0,)]
    # every transition whose only fixed-token arcs are on lock0 shares one gate
    assert len({compiled.gate_of[t] for t in gated_by_lock0}) == 1
    resume = compiled.transition("resume")
    assert resume.gate is None and compiled.gate_of[resume.index] == -1


def test_choice_is_uniform_over_bindings_of_gated_and_free_transitions():
    """Two gated transitions with one binding each and a free one with two: 1/4 each."""
    net = PetriNet("mix")
    net.add_place(Place("lock", UNIT, initial=[()]))
    net.add_place(Place("a", INT, initial=[1]))
    net.add_place(Place("b", INT, initial=[2]))
    net.add_place(Place("c", INT, initial=[3, 4]))
    for name, place in (("ta", "a"), ("tb", "b")):
        net.add_transition(Transition(name))
        net.add_input(place, name, "x")
        net.add_input("lock", name, "()")
    net.add_transition(Transition("tc"))
    net.add_input("c", "tc", "x")
    compiled = compile_net(net)
    runs = 4000
    counts = {1: 0, 2: 0, 3: 0, 4: 0}
    for seed in range(runs):
        counts[Simulator(compiled, seed=seed).step().binding["x"]] += 1
    sd = math.sqrt(runs * 0.25 * 0.75)  # binomial(4000, 1/4): 27.4
    for value, n in counts.items():
        assert abs(n - runs / 4) < 4 * sd, (value, n)


def test_gate_closing_and_reopening_in_a_timed_net():
    """By hand: one lock token at 0, two workers with tokens at 0 and 1, hold 5 each.

    A takes the lock at 0 (B's token is not ready), returns it at 5; B takes it at 5
    (A's next token is at 5 + 2 = 7), returns it at 10; A takes it at 10."""
    net = PetriNet("handoff")
    net.add_place(Place("lock", UNIT.timed(), initial=[()]))
    for name, start in (("A", 0.0), ("B", 1.0)):
        net.add_place(Place(f"idle{name}", INT.timed(), initial=[Token(0, start)]))
        net.add_place(Place(f"busy{name}", INT.timed()))
        net.add_transition(Transition(f"take{name}", guard="n < 2"))
        net.add_input(f"idle{name}", f"take{name}", "n")
        net.add_input("lock", f"take{name}", "()")
        net.add_output(f"busy{name}", f"take{name}", "n")
        net.add_transition(Transition(f"give{name}", delay=5.0))
        net.add_input(f"busy{name}", f"give{name}", "n")
        net.add_output("lock", f"give{name}", "()")
        net.add_output(f"idle{name}", f"give{name}", "n + 1", delay=2.0)
    firings = [(f.time, f.transition) for f in iter(Simulator(net).step, None)]
    assert firings == [(0.0, "takeA"), (0.0, "giveA"), (5.0, "takeB"), (5.0, "giveB"),
                       (10.0, "takeA"), (10.0, "giveA"), (15.0, "takeB"), (15.0, "giveB")]


def test_early_stop_keeps_bindings_tied_with_the_earliest_future_one():
    """A FIFO wire holds 1@5, 2@5, 3@7 at time 0: the enumeration may stop at 3 (later
    than the earliest future binding), not at 2 (tied with it): both fire at 5, first in
    either order, and 3 fires at 7."""
    net = PetriNet("ties")
    net.add_place(Place("wire", INT.timed(),
                        initial=[Token(1, 5.0), Token(2, 5.0), Token(3, 7.0)]))
    net.add_place(Place("out", INT.timed()))
    net.add_transition(Transition("take"))
    net.add_input("wire", "take", "x")
    net.add_output("out", "take", "x")
    compiled = compile_net(net)
    take = compiled.transition("take")
    in_order, _ = compiled.timestamp_order(compiled.initial_marking())
    assert in_order == [True, True]
    assert take.enumerate_due(compiled.initial_marking(), 0.0, in_order) == [
        (5.0, (1,)), (5.0, (2,))]
    assert take.cut == [True]
    sim = Simulator(compiled)
    assert sim.peek() == 5.0
    assert sorted(b["x"] for _, b in sim.enabled()) == [1, 2]
    assert [(f.time, f.binding["x"]) for f in iter(sim.step, None)][2:] == [(7.0, 3)]
