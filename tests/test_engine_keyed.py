"""Binders whose first component is already bound look tokens up by key (``KeyedTokens``).

A queue's ``(h, p)`` on its buffer, with ``h`` bound by the counters, visited every queued
packet; the compiler now keeps such places indexed by their values' first component in the
simulator. These tests check that the index finds what a scan finds, in the same order:
random nets that put pairs on keyed places (with counts, conditions, resets, read arcs,
constant keys) fire the same sequence compiled with and without the index, the index
equals one rebuilt from the place after every firing, and the composed dumbbell (whose
queues are keyed) fires as without the index.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tcpn.lenses import make_run
from tcpn.models.scenario import load_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import INT, PetriNet, Place, ProductSet, Simulator, Transition
from tcpn.petrinets.engine.compiler import KeyedTokens, compile_net
from tcpn.petrinets.engine.monitors import FiringRecord

PAIR = ProductSet(INT, INT, name="Pair")
SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "dumbbell_newreno.yaml"


def random_keyed_net(seed: int, timed_counter: bool) -> PetriNet:
    """Counters ``head{i}`` whose value keys the pairs taken from ``pairs{i}``: producers
    add pairs at keys near the head (counts of 1 or 2, some conditional), takers consume
    the pair at the head key, readers test it, one taker looks at key 0 by constant, and a
    reset empties a place now and then."""
    rng = np.random.default_rng(seed)
    net = PetriNet(f"keyed{seed}")
    n_places = int(rng.integers(1, 4))
    net.add_place(Place("clock", INT.timed() if timed_counter else INT, initial=[0]))
    for i in range(n_places):
        net.add_place(Place(f"pairs{i}", PAIR, initial=[(0, 1), (1, 2), (0, 3)][: i + 1]))
        net.add_place(Place(f"head{i}", INT, initial=[0]))
    for i in range(n_places):
        producer = f"put{i}"
        net.add_transition(Transition(producer, guard="c < 400"))
        net.add_input("clock", producer, "c")
        net.add_output("clock", producer, "c + 1",
                       delay=float(rng.uniform(0.1, 1.0)) if timed_counter else None)
        net.add_output(f"pairs{i}", producer, f"(c % {int(rng.integers(2, 5))}, c % 7)",
                       count="1 + c % 2")
        net.add_output(f"pairs{(i + 1) % n_places}", producer, "(c % 3, c)",
                       when=f"c % {int(rng.integers(2, 4))} == 0")
        taker = f"take{i}"
        net.add_transition(Transition(taker, guard=f"x != {int(rng.integers(0, 7))}"))
        net.add_input(f"head{i}", taker, "h")
        net.add_input(f"pairs{i}", taker, "(h, x)")
        net.add_output(f"head{i}", taker, f"(h + 1) % {int(rng.integers(2, 5))}")
        reader = f"look{i}"
        net.add_transition(Transition(reader, guard="x % 2 == 1"))
        net.add_read(f"head{i}", reader, "h")
        net.add_read(f"pairs{i}", reader, "(h, x)")
        net.add_input("clock", reader, "c")
        net.add_output("clock", reader, "c + 1")
        net.add_transition(Transition(f"zero{i}", guard="y > 4"))
        net.add_input(f"pairs{i}", f"zero{i}", "(0, y)")
        if rng.random() < 0.5:
            net.add_transition(Transition(f"flush{i}", guard="c % 50 == 49"))
            net.add_input("clock", f"flush{i}", "c")
            net.add_output("clock", f"flush{i}", "c + 1")
            net.add_reset(f"pairs{i}", f"flush{i}")
    return net


class FiringLog(FiringRecord):
    """Every firing, and a check of every keyed place's index after it."""

    def observe(self, sim: Simulator, transition: Any, binding: tuple[Any, ...]) -> None:
        super().observe(sim, transition, binding)
        for p in sim.compiled.keyed_places:
            place = sim.marking[p]
            rebuilt = KeyedTokens(dict(place))
            assert {k: list(v) for k, v in place.by_key.items()} == \
                {k: list(v) for k, v in rebuilt.by_key.items()}, sim.compiled.place_names[p]


def run(net: PetriNet, keyed: bool, seed: int, **until: Any) -> list[Any]:
    log = FiringLog()
    Simulator(compile_net(net, keyed=keyed), seed=seed, monitors=[log]).run(**until)
    return log.firings


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("timed", [False, True])
def test_keyed_nets_fire_as_scanned(seed: int, timed: bool) -> None:
    net = random_keyed_net(seed, timed)
    compiled = compile_net(net)
    assert {compiled.place_names[p] for p in compiled.keyed_places} == {
        name for name in net.places if name.startswith("pairs")}
    indexed = run(net, True, seed, max_firings=3000)
    assert len(indexed) > 100
    assert indexed == run(net, False, seed, max_firings=3000)


def test_the_explorer_and_an_unkeyed_compile_see_plain_places() -> None:
    net = random_keyed_net(0, False)
    assert compile_net(net, keyed=False).keyed_places == ()
    marking = compile_net(net).initial_marking()
    assert all(type(place) is dict for place in marking)
    keyed = compile_net(net).initial_marking(keyed=True)
    assert isinstance(keyed[net_place(net, "pairs0")], KeyedTokens)


def net_place(net: PetriNet, name: str) -> int:
    return list(net.places).index(name)


def test_dumbbell_queues_are_keyed_and_fire_as_scanned() -> None:
    scenario = load_scenario(SCENARIO).model_copy(update={"horizon_s": 3.0})
    flows = make_run(scenario)
    net = compose(scenario, flows.flows).net
    compiled = compile_net(net)
    assert {compiled.place_names[p].rsplit(".", 1)[-1] for p in compiled.keyed_places} \
        == {"buffer"}
    logs = []
    for keyed in (True, False):
        log = FiringLog()
        Simulator(compile_net(net, keyed=keyed), seed=flows.lens_seed,
                  monitors=[log]).run(until=scenario.horizon_s)
        logs.append(log.firings)
    assert len(logs[0]) > 10_000
    assert logs[0] == logs[1]
