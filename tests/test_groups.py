"""Guard partitions enumerated together give each member what its own ``enumerate_due`` gives.

:mod:`tcpn.petrinets.engine.cython_code.groups` generates one function for transitions that differ
only in their guards; the native engine's loop takes each member's bindings and cut flag
from it. Here the group's Python code is compared with the members' own functions at
every firing of a run (the Python engine's), with the clock, a later floor and ``inf``
(a complete enumeration): the same bindings in the same order and the same cut flag, on
a small net whose guards are tested at different depths (before and inside a loop over
a timestamp-ordered place, where each member stops on its own) and on the reference
dumbbell's TCP partitions (a sender's ACK transitions, a receiver's data transitions).
The native engine's firings with the groups: ``tests/test_native.py``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from test_native import partition_net  # the tests directory is on pytest's path

from tcpn.lenses import make_run
from tcpn.models.scenario import load_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import Simulator, compile_net
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.engine.cython_code.groups import find_groups, group_function

ROOT = Path(__file__).resolve().parent.parent


def assert_groups_agree(compiled: CompiledNet, sim: Simulator) -> int:
    """Every group against its members' own functions, now; the bindings compared."""
    compared = 0
    for members in find_groups(compiled):
        group = group_function(compiled, members)
        for floor in (sim.now, sim.now + 0.7, math.inf):
            results = group(sim.marking, floor, sim._in_order)
            assert len(results) == len(members)
            for t, (found, cut) in zip(members, results, strict=True):
                transition = compiled.transitions[t]
                own = transition.enumerate_due(sim.marking, floor, sim._in_order)
                assert found == own, (transition.name, floor, found, own)
                assert cut == transition.cut[0], (transition.name, floor)
                compared += len(own)
    return compared


def run_and_compare(compiled: CompiledNet, seed: int, max_firings: int,
                    every: int = 1) -> int:
    sim = Simulator(compiled, seed=seed, engine="python")
    compared = [0]

    def check(s: Simulator) -> bool:
        if s.firings % every == 0:
            compared[0] += assert_groups_agree(compiled, s)
        return False

    sim.run(max_firings=max_firings, stop_when=check)
    return compared[0]


def test_the_partition_is_found_and_the_others_are_left_alone() -> None:
    compiled = compile_net(partition_net())
    names = [[compiled.transitions[t].name for t in g] for g in find_groups(compiled)]
    assert names == [["take_low", "take_mid", "take_even", "take_any"]]


@pytest.mark.parametrize("seed", range(3))
def test_a_group_gives_each_member_its_own_bindings_and_cut(seed: int) -> None:
    compiled = compile_net(partition_net())
    compared = run_and_compare(compiled, seed, max_firings=1_500)
    assert compared > 1_000  # bindings were there to compare, not only empty lists
    # the wire's loop stopped early for some member somewhere (the cut was exercised)
    cuts = 0
    sim = Simulator(compiled, seed=seed, engine="python")
    while sim.step() is not None and sim.firings < 400:
        for members in find_groups(compiled):
            for _found, cut in group_function(compiled, members)(sim.marking, sim.now,
                                                                 sim._in_order):
                cuts += cut
    assert cuts > 0


def test_the_dumbbells_tcp_partitions_agree_with_their_members() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "reference" / "newreno_2flows.yaml")
    compiled = compile_net(compose(scenario, make_run(scenario).flows).net)
    groups = find_groups(compiled)
    names = {compiled.transitions[t].name for g in groups for t in g}
    assert {"flow0.snd.new_ack", "flow0.snd.partial_ack", "flow0.snd.dup_ack",
            "flow1.rcv.out_of_order"} <= names
    assert run_and_compare(compiled, seed=1, max_firings=4_000, every=3) > 500
