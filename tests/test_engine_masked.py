"""After a firing, the simulator re-enumerates only readers of the places it really wrote.

A transition's conditional output arcs (``when``) may leave their places untouched; its
``fire_tracked`` returns a mask of the places only such arcs write, and the simulator
skips their readers when the bit is clear (``CompiledNet.affected_by``). These tests
check, at every step of random nets that route tokens through conditional arcs, that the
simulator offers exactly what a from-scratch enumeration finds, that runs are the same
firing for firing as with every reader re-enumerated (the conservative rule), and that a
broken mask is caught.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_engine_incremental import check_run  # the tests directory is on pytest's path

from tcpn.petrinets import INT, UNIT, PetriNet, Place, Simulator, Token, Transition, compile_net
from tcpn.petrinets.engine.compiler import RandomDraws


def random_routed_net(seed: int, timed: bool) -> PetriNet:
    """Routers that send a counter's value to some of several outputs (conditions that
    overlap or leave every output untouched), consumers and readers of those outputs,
    an inhibitor on one, and a place one router writes both with and without condition."""
    rng = np.random.default_rng(seed)
    net = PetriNet(f"routed{seed}")
    number = INT.timed() if timed else INT
    n_out = int(rng.integers(2, 5))
    net.add_place(Place("src", number, initial=[Token(0, 0.0)] if timed else [0]))
    net.add_place(Place("mixed", number))
    for j in range(n_out):
        net.add_place(Place(f"out{j}", number))
    limit = int(rng.integers(30, 60))
    for r in range(int(rng.integers(1, 3))):
        router = f"route{r}"
        net.add_transition(Transition(router, guard=f"n < {limit}"))
        net.add_input("src", router, "n")
        net.add_output("src", router, "n + 1",
                       delay=float(rng.uniform(0.1, 1.0)) if timed else None)
        for j in range(n_out):
            if rng.random() < 0.8:
                modulus, rest = int(rng.integers(2, 5)), int(rng.integers(0, 2))
                net.add_output(f"out{j}", router, f"n % {modulus + 1}",
                               when=f"n % {modulus} == {rest}",
                               delay=float(rng.integers(0, 4)) if timed else None)
        net.add_output("mixed", router, "n % 2", when="n % 3 == 0")
        if r == 0:
            net.add_output("mixed", router, "n % 5")  # also written without condition
    for j in range(n_out):
        net.add_transition(Transition(f"take{j}", guard=f"x != {j % 3}"))
        net.add_input(f"out{j}", f"take{j}", "x")
        if rng.random() < 0.5:
            net.add_output(f"out{(j + 1) % n_out}", f"take{j}", "x + 1", when="x % 2 == 0")
        net.add_transition(Transition(f"look{j}", guard="x == 1"))
        net.add_read(f"out{j}", f"look{j}", "x")
        net.add_input("mixed", f"look{j}", "m")
    net.add_transition(Transition("drain"))
    net.add_input("mixed", "drain", "m")
    net.add_inhibitor("out0", "drain", "m")  # no out0 token equal to m
    net.add_place(Place("flag", UNIT, initial=[()]))
    net.add_transition(Transition("flip", guard="x == 0"))
    net.add_input("out1", "flip", "x")
    net.add_input("flag", "flip", "()")
    net.add_output("flag", "flip", "()", when="x == 0")
    return net


def conservative(compiled) -> None:
    """Make every ``fire_tracked`` return ``None``: every reader of every place the
    transition may write is re-enumerated, as before masks existed."""
    for t in compiled.transitions:
        t.fire_tracked = lambda *a, fire=t.fire_tracked: fire(*a) and None


def run_log(compiled, seed: int, steps: int = 300) -> list[tuple]:
    sim = Simulator(compiled, seed=seed)
    log = [(f.time, f.transition, tuple(f.binding.items())) for f in
           (sim.step() for _ in range(steps)) if f is not None]
    sim.run(max_firings=steps)  # many firings in one loop: the in-loop refresh
    return [log, sim.now, sim.firings, sim.firing_counts, sim.marking_dict()]


def test_masks_by_hand():
    """``route`` writes ``a`` always, ``b`` when n is even, ``c`` when n % 3 == 0: bits
    0 (b) and 1 (c); ``b``'s reader is left out when bit 0 is clear."""
    net = PetriNet("hand")
    for name in "sabc":
        net.add_place(Place(name, INT, initial=[0] if name == "s" else []))
    net.add_transition(Transition("route"))
    net.add_input("s", "route", "n")
    net.add_output("s", "route", "n + 1")
    net.add_output("a", "route", "n")
    net.add_output("b", "route", "n", when="n % 2 == 0")
    net.add_output("c", "route", "n", when="n % 3 == 0")
    for name in "abc":
        net.add_transition(Transition(f"read_{name}"))
        net.add_input(name, f"read_{name}", "x")
    compiled = compile_net(net)
    route = compiled.transition("route")
    index = compiled.place_index
    assert route.cond_places == (index["b"], index["c"])
    marking = compiled.initial_marking()
    in_order, latest = compiled.timestamp_order(marking)
    masks = []
    draw = RandomDraws(np.random.default_rng(0))
    for _ in range(6):  # n = 0..5
        masks.append(route.fire_tracked(marking, route.enumerate(marking)[0][1], 0.0, draw,
                                        in_order, latest))
    assert masks == [0b11, 0b00, 0b01, 0b10, 0b01, 0b00]
    names = {i: t.name for i, t in enumerate(compiled.transitions)}
    by_mask = {m: {names[u] for u in compiled.affected_by(route.index, m)} for m in range(4)}
    assert by_mask[0] == {"route", "read_a"}
    assert by_mask[0b01] == {"route", "read_a", "read_b"}
    assert by_mask[0b11] == {"route", "read_a", "read_b", "read_c"}
    assert compiled.affected_by(route.index, None) == compiled.body_affected[route.index]
    assert compiled.transition("read_a").cond_places == ()


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("timed", [False, True])
def test_routed_nets_offer_what_enumeration_finds(seed, timed):
    net = random_routed_net(seed, timed)
    assert any(t.cond_places for t in compile_net(net).transitions)
    assert check_run(net, seed, steps=300) > 40


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("timed", [False, True])
def test_masked_runs_equal_conservative_runs(seed, timed):
    """Same seed, same firings, clock and marking, with or without the masks."""
    net = random_routed_net(seed, timed)
    masked = run_log(compile_net(net), seed)
    compiled = compile_net(net)
    conservative(compiled)
    assert len(masked[0]) > 40
    assert masked == run_log(compiled, seed)


def test_a_broken_mask_is_caught():
    """Mutant: report no conditional place written. Readers of routed tokens keep stale
    bindings, and the step-by-step comparison fails."""
    caught = 0
    for seed in range(6):
        compiled = compile_net(random_routed_net(seed, timed=seed % 2 == 1))
        for t in compiled.transitions:
            if t.cond_places:
                t.fire_tracked = lambda *a, fire=t.fire_tracked: fire(*a) and 0
        try:
            check_run(compiled, seed, steps=300)
        except AssertionError:
            caught += 1
    assert caught == 6
