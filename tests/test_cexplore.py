"""The C explorer (``explore(net, engine="native")`` on an untimed net of the C engine's
subset) against the Python explorer: the same states in the same order (the same packed
keys), the same edges, dead markings, stop reason and depth, and the same store of place
contents, on the benchmark nets, random small nets and contest COL nets; the Python path
where the C explorer cannot run, saying why."""

from __future__ import annotations

import random
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tcpn.petrinets import PetriNet, Place, Transition, explore
from tcpn.petrinets.colours import EnumSet, IntSet, ProductSet
from tcpn.petrinets.engine.native import NativeUnavailable, why_unavailable
from tcpn.petrinets.statespace.space import StateSpace

MCC = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mcc" / "instances"
INT = IntSet()


@pytest.fixture(autouse=True)
def _c_engine_or_skip(request: pytest.FixtureRequest) -> None:
    """Skips where nothing can be built, but for the test of exactly that case."""
    reason = why_unavailable()
    if reason is not None and "without_a_compiler" not in request.node.name:
        pytest.skip(f"the native engine cannot be built here: {reason}")


def assert_same_space(net: Any, **limits: Any) -> StateSpace:
    """The C explorer's space is the Python explorer's, key for key and edge for edge."""
    c = explore(net, engine="native", **limits)
    python = explore(net, engine="python", **limits)
    assert c.explorer_reason is None, c.explorer_reason
    assert python.explorer_reason == "engine='python'"
    assert c.n_states == python.n_states
    assert np.array_equal(c.keys, python.keys)
    assert np.array_equal(c.edge_dst, python.edge_dst)
    assert np.array_equal(c.edge_start, python.edge_start)
    assert np.array_equal(c.edge_labels, python.edge_labels)
    assert (c.n_expanded, c.depth, c.stop_reason, c.limit) == \
        (python.n_expanded, python.depth, python.stop_reason, python.limit)
    assert c.dead_markings() == python.dead_markings()
    ours, theirs = c.generator.store, python.generator.store
    assert ours.contents == theirs.contents
    assert ours.widths == theirs.widths
    assert [list(m.items()) for m in ours.multisets] == \
        [list(m.items()) for m in theirs.multisets]
    for state in sorted({0, c.n_states // 2, c.n_states - 1}):
        assert c.marking(state) == python.marking(state)
        assert c.edges(state) == python.edges(state)
    return c


def test_the_benchmark_nets_untimed(benchmark_nets: Callable[[], list[PetriNet]]) -> None:
    """engine_vs_snakes.py's nets (unbounded counters: cut by states and by depth)."""
    for net in benchmark_nets()[0::2]:
        assert_same_space(net, max_states=3_000)
        assert_same_space(net, max_depth=6)


def test_the_limits_cut_where_the_python_explorer_cuts(
        benchmark_nets: Callable[[], list[PetriNet]]) -> None:
    net = benchmark_nets()[4]  # contention, untimed: a gate on the lock
    for cap in (1, 2, 10, 999):
        assert assert_same_space(net, max_states=cap).stop_reason == "max_states"
    for depth in (0, 1, 4):
        assert assert_same_space(net, max_depth=depth).stop_reason == "max_depth"
    assert_same_space(net, time_budget_s=0.0)  # stopped before expanding state 0
    space = explore(net, engine="native", time_budget_s=0.0)
    assert space.stop_reason == "time_budget" and space.n_expanded == 0
    # a budget not reached: the C search runs in slices of 256 states, the same space
    assert assert_same_space(net, max_states=20_000, time_budget_s=600.0).stop_reason \
        == "max_states"


def test_the_memory_budget_stops_both_searches_alike(
        benchmark_nets: Callable[[], list[PetriNet]]) -> None:
    """A budget already passed: both stop before expanding state 0, the same space. A
    budget of 40 MB more than the process holds, on a net of unbounded counters: each
    stops at it (``"memory_budget"``, the limit named), the process then within the
    budget but for one reading interval's growth and the result's arrays (the C search
    counts the store it fills afterwards), and their states agree as far as both went."""
    from tcpn.petrinets.statespace.memory import MemoryBudget, resident_bytes

    net = benchmark_nets()[0]  # the counter, untimed: no end
    space = assert_same_space(net, max_memory_bytes=1, max_states=None)
    assert (space.stop_reason, space.n_expanded, space.complete) == ("memory_budget", 0, False)
    assert space.limit == "resident memory above 1 bytes"
    assert "stopped at the limit resident memory above 1 bytes" in space.summary()
    for engine in ("native", "python"):  # the module built and loaded, the code compiled
        explore(net, engine=engine, max_states=1000)
    spaces = {}
    for engine in ("native", "python"):
        budget = resident_bytes() + 40_000_000
        found = spaces[engine] = explore(net, engine=engine, max_states=None,
                                         max_memory_bytes=budget)
        assert found.stop_reason == "memory_budget" and not found.complete
        assert found.limit == MemoryBudget(budget).reason().split(": ")[1]
        assert 0 < found.n_expanded < found.n_states
        assert resident_bytes() <= budget + 10_000_000, engine
    c, python = spaces["native"], spaces["python"]
    assert c.explorer_reason is None and python.explorer_reason == "engine='python'"
    common = min(c.n_states, python.n_states)
    assert np.array_equal(c.keys[:common], python.keys[:common])
    expanded = min(c.n_expanded, python.n_expanded)
    assert np.array_equal(c.edge_start[:expanded + 1], python.edge_start[:expanded + 1])


def test_keys_past_64_bits() -> None:
    """75 places: the keys are byte strings, packed from the C states as the store does."""
    from tcpn.petrinets.examples import dining_philosophers

    space = assert_same_space(dining_philosophers(25), max_states=5_000)
    assert space.generator.store.total_bits > 64 and space.keys.dtype.kind == "S"


def random_net(seed: int) -> PetriNet:
    """A random untimed net of the subset: bounded ints, pairs, an enumeration with a
    successor table, guards, read arcs, arc counts, shared places and priorities."""
    rnd = random.Random(seed)
    colour = EnumSet(name="Colour", values=("red", "green", "blue", "10", "2"))
    succ = dict(zip(colour.values, colour.values[1:] + colour.values[:1], strict=True))
    net = PetriNet(f"random{seed}")
    net.declare(MOD=rnd.choice([3, 4, 5]), _succ_Colour=succ)
    net.add_place(Place("n0", INT, initial=[rnd.randrange(3) for _ in range(rnd.randrange(1, 4))]))
    net.add_place(Place("n1", INT, initial=[0, 1]))
    net.add_place(Place("pairs", ProductSet(INT, INT),
                        initial=[(i, rnd.randrange(3)) for i in range(rnd.randrange(1, 4))]))
    net.add_place(Place("colours", colour, initial=["red", "10", "red"]))
    specs = [
        ("inc", [("n0", "x", 1)], [("n0", "(x + 1) % MOD", 1)], "x < MOD", []),
        ("move", [("n0", "x", 1)], [("n1", "x", 1)], None, []),
        ("back", [("n1", "y", 1)], [("n0", "(y * 2) % MOD", 1)], "y != 1", []),
        ("pair", [("pairs", "(i, k)", 1)], [("pairs", "(i, (k + i + 1) % MOD)", 1)],
         "k <= i + 1", [("n1", "1")]),
        ("spin", [("colours", "c", 1)], [("colours", "_succ_Colour[c]", 1)], None, []),
        ("two", [("colours", "'red'", 2)], [("colours", "'blue'", 1)], None, []),
        ("swap", [("n0", "x", 1), ("pairs", "(i, k)", 1)],
         [("n0", "k", 1), ("pairs", "(i, x % MOD)", 1)], "x != k", []),
    ]
    rnd.shuffle(specs)
    for name, inputs, outputs, guard, reads in specs[:rnd.randrange(3, len(specs) + 1)]:
        net.add_transition(Transition(name, guard=guard, priority=rnd.choice([0, 0, 0, 1])))
        for place, text, count in inputs:
            net.add_input(place, name, text, count=count)
        for place, text in reads:
            net.add_read(place, name, text)
        for place, text, count in outputs:
            net.add_output(place, name, text, count=count)
    return net


def test_random_small_nets() -> None:
    # each net is compiled to C (a few seconds): 12 here, 28 more in the slow set
    for seed in range(12):
        assert_same_space(random_net(seed), max_states=4_000)


@pytest.mark.slow
def test_more_random_small_nets() -> None:
    for seed in range(12, 40):
        assert_same_space(random_net(seed), max_states=4_000)


def _contest(name: str, tmp_path: Path) -> PetriNet:
    from tcpn.petrinets.exchange.pnml import read_pnml

    archive_path = MCC / f"{name}.tgz"
    if not archive_path.exists():
        pytest.skip(f"{archive_path} is not here")
    with tarfile.open(archive_path) as archive:
        archive.extractall(tmp_path, members=[archive.getmember(f"{name}/model.pnml")],
                           filter="data")
    return read_pnml(tmp_path / name / "model.pnml").net


@pytest.mark.parametrize("name", ["Philosophers-COL-000005", "TokenRing-COL-005",
                                  "LamportFastMutEx-COL-2", "Sudoku-COL-AN02",
                                  "SafeBus-COL-03", "Peterson-COL-2",
                                  "AirplaneLD-COL-0010"])
def test_contest_nets(name: str, tmp_path: Path) -> None:
    """Whole spaces of COL nets (their sizes are index.csv's, checked by pnml_col.py)."""
    net = _contest(name, tmp_path)
    assert assert_same_space(net, max_states=None).complete


def test_a_net_outside_the_subset_is_explored_in_python_saying_why(tmp_path: Path) -> None:
    net = PetriNet("outside")
    net.add_place(Place("p", INT, initial=[0]))
    net.add_transition(Transition("t", guard="x < 3", action=lambda x: {"y": x + 1},
                                  outputs=("y",)))
    net.add_input("p", "t", "x")
    net.add_output("p", "t", "y")
    space = explore(net, engine="auto")
    assert "code action" in (space.explorer_reason or "")
    assert space.n_states == explore(net, engine="python").n_states == 4


def test_a_timed_net_is_explored_in_python_saying_why(
        benchmark_nets: Callable[[], list[PetriNet]]) -> None:
    net = benchmark_nets()[1]  # counter, timed
    space = explore(net, engine="auto", max_states=20)
    assert "timed" in (space.explorer_reason or "")
    assert space.n_states == 20


def test_an_error_of_the_generated_code_is_the_python_explorers(
        benchmark_nets: Callable[[], list[PetriNet]]) -> None:
    """A firing outside its colour set: the C explorer stops, the Python path raises."""
    net = PetriNet("overflow")
    net.add_place(Place("p", IntSet(low=0, high=3), initial=[0]))
    net.add_transition(Transition("t"))
    net.add_input("p", "t", "x")
    net.add_output("p", "t", "x + 1")
    with pytest.raises(Exception) as python:
        explore(net, engine="python")
    with pytest.raises(type(python.value)) as native:
        explore(net, engine="native")
    assert str(native.value) == str(python.value)


def test_without_a_compiler_python_explores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            benchmark_nets: Callable[[], list[PetriNet]]
                                            ) -> None:
    net = benchmark_nets()[4]
    reference = explore(net, engine="python", max_states=500)
    monkeypatch.setenv("PATH", str(tmp_path))  # no gcc, no cc
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path / "cache"))
    space = explore(net, engine="auto", max_states=500)
    assert "no C compiler" in (space.explorer_reason or "")
    assert np.array_equal(space.keys, reference.keys)
    with pytest.raises(NativeUnavailable):
        explore(net, engine="native", max_states=500)
