"""State-space exploration: hand-derived state counts for each arc kind, guards, priorities,
timed nets in relative and absolute time, limits, refusal of random nets, path replay."""

from __future__ import annotations

import doctest
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from tcpn.errors import InputError
from tcpn.petrinets import (
    INT,
    P_HIGH,
    UNIT,
    Exponential,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Token,
    Transition,
    Uniform,
)
from tcpn.petrinets.examples import counter, dining_philosophers
from tcpn.petrinets.statespace import graph as statespace_graph
from tcpn.petrinets.statespace import space as statespace
from tcpn.petrinets.statespace import store as statespace_store
from tcpn.petrinets.statespace.space import explore

TUNIT = UNIT.timed()


# -- nets ------------------------------------------------------------------------------------
def grid(k: int) -> PetriNet:
    """Two independent counters 0..k: the k x k interleaving grid, (k+1)^2 states."""
    net = PetriNet("grid")
    for i in (1, 2):
        net.add_place(Place(f"p{i}", INT, initial=[0]))
        net.add_transition(Transition(f"t{i}", guard=f"x < {k}"))
        net.add_input(f"p{i}", f"t{i}", "x")
        net.add_output(f"p{i}", f"t{i}", "x + 1")
    return net


def coloured_philosophers(n: int, guarded: bool = False) -> PetriNet:
    """The same system folded: one place per role, philosophers and forks as colours.

    The right fork is an expression on the input arc, or (``guarded``) a variable the
    guard ties to the philosopher, the form SNAKES accepts.
    """
    net = PetriNet("coloured_philosophers")
    net.declare(N=n)
    net.add_place(Place("think", INT, initial=list(range(n))))
    net.add_place(Place("eat", INT))
    net.add_place(Place("forks", INT, initial=list(range(n))))
    net.add_transition(Transition("take", guard="q == (p + 1) % N" if guarded else None))
    net.add_input("think", "take", "p")
    net.add_input("forks", "take", "p")
    net.add_input("forks", "take", "q" if guarded else "(p + 1) % N")
    net.add_output("eat", "take", "p")
    net.add_transition(Transition("put"))
    net.add_input("eat", "put", "p")
    net.add_output("think", "put", "p")
    net.add_output("forks", "put", "p")
    net.add_output("forks", "put", "(p + 1) % N")
    return net


def lucas(n: int) -> int:
    a, b = 2, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def two_clocks() -> PetriNet:
    """Two timed self-loops of delays 1 and 2 (derivation in test_timed_two_clocks)."""
    net = PetriNet("two_clocks")
    for name, delay in (("a", 1), ("b", 2)):
        net.add_place(Place(name, TUNIT, initial=[()]))
        net.add_transition(Transition(f"t{name}", delay=delay))
        net.add_input(name, f"t{name}", "()")
        net.add_output(name, f"t{name}", "()")
    return net


def timed_choice() -> PetriNet:
    """p -> q at once (fast) or p -> r -> q one time unit later (slow)."""
    net = PetriNet("timed_choice")
    net.add_place(Place("p", TUNIT, initial=[()]))
    net.add_place(Place("r", TUNIT))
    net.add_place(Place("q", TUNIT))
    for name in ("fast", "slow", "finish"):
        net.add_transition(Transition(name, delay=1 if name == "slow" else None))
    net.add_input("p", "fast", "()")
    net.add_output("q", "fast", "()")
    net.add_input("p", "slow", "()")
    net.add_output("r", "slow", "()")
    net.add_input("r", "finish", "()")
    net.add_output("q", "finish", "()")
    return net


def markings(space) -> list[dict[str, Counter]]:
    """Every state's marking as place -> Counter of (value, time)."""
    return [{p: Counter(tokens) for p, tokens in space.marking(s).items()}
            for s in range(len(space))]


def counts(space, place: str) -> list[int]:
    return sorted(len(space.marking(s)[place]) for s in range(len(space)))


# -- documentation examples run ----------------------------------------------------------------
@pytest.mark.parametrize("module", [statespace, statespace_graph, statespace_store])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# -- untimed nets, one arc kind at a time ------------------------------------------------------
def test_chain_of_input_and_output_arcs():
    space = explore(counter(7))
    assert (len(space), space.n_edges, space.depth, space.complete) == (8, 7, 7, True)
    assert space.dead_markings() == [7]
    assert [space.marking(s)["count"][0].value for s in range(8)] == list(range(8))
    assert space.successors(3) == [4] and space.predecessors(4) == [3]


@pytest.mark.parametrize("k", [1, 5, 30])
def test_interleaving_grid(k):
    space = explore(grid(k))
    assert len(space) == (k + 1) ** 2
    assert space.n_edges == 2 * k * (k + 1)
    assert space.depth == 2 * k
    (dead,) = space.dead_markings()
    assert {p: [t.value for t in ts] for p, ts in space.marking(dead).items()} == {
        "p1": [k], "p2": [k]}
    assert space.home_markings() == [dead]
    assert len(set(space.keys.tolist())) == len(space)  # packed markings are unique


def test_read_arc_binds_without_consuming():
    net = PetriNet("read")
    net.add_place(Place("count", INT, initial=[0]))
    net.add_place(Place("limit", INT, initial=[3]))
    net.add_transition(Transition("inc", guard="x < n"))
    net.add_input("count", "inc", "x")
    net.add_read("limit", "inc", "n")
    net.add_output("count", "inc", "x + 1")
    space = explore(net)
    assert len(space) == 4 and space.dead_markings() == [3]
    assert all(space.marking(s)["limit"] == space.marking(0)["limit"] for s in range(4))


def test_inhibitor_arc_without_inscription():
    # move 3 tokens p -> q one by one until `halt` marks `stop`, which inhibits `move`:
    # (moved 0..3) x (halted or not) = 8 states; halted ones are dead.
    net = PetriNet("inhibit")
    net.add_place(Place("p", UNIT, initial=[(), (), ()]))
    net.add_place(Place("q", UNIT))
    net.add_place(Place("armed", UNIT, initial=[()]))
    net.add_place(Place("stop", UNIT))
    net.add_transition(Transition("move"))
    net.add_input("p", "move", "()")
    net.add_output("q", "move", "()")
    net.add_inhibitor("stop", "move")
    net.add_transition(Transition("halt"))
    net.add_input("armed", "halt", "()")
    net.add_output("stop", "halt", "()")
    space = explore(net)
    assert len(space) == 8
    dead = space.dead_markings()
    assert len(dead) == 4 and all(space.marking(s)["stop"] for s in dead)


@pytest.mark.parametrize(("initial", "count", "states"), [
    # count 1: a value moves only while q lacks it; p={1,1,2}:
    # {112|-}, {12|1}, {11|2}, {1|12}: 4 states, the last dead
    ([1, 1, 2], 1, 4),
    # count 2: up to two 1s may sit in q: q holds 0, 1 or 2 ones: 3 states
    ([1, 1, 1], 2, 3),
])
def test_inhibitor_arc_with_inscription(initial, count, states):
    net = PetriNet("inhibit_value")
    net.add_place(Place("p", INT, initial=initial))
    net.add_place(Place("q", INT))
    net.add_transition(Transition("move"))
    net.add_input("p", "move", "x")
    net.add_output("q", "move", "x")
    net.add_inhibitor("q", "move", "x", count=count)
    space = explore(net)
    assert len(space) == states
    assert len(space.dead_markings()) == 1


def test_reset_arc():
    # fill moves src -> bag (2 tokens); clear (once) empties bag. Before clear: 3 states
    # (s + b = 2); after: every (s, b) with s + b <= 2, 6 states; dead: after, s = 0: 3.
    net = PetriNet("reset")
    net.add_place(Place("src", UNIT, initial=[(), ()]))
    net.add_place(Place("bag", UNIT))
    net.add_place(Place("once", UNIT, initial=[()]))
    net.add_transition(Transition("fill"))
    net.add_input("src", "fill", "()")
    net.add_output("bag", "fill", "()")
    net.add_transition(Transition("clear"))
    net.add_input("once", "clear", "()")
    net.add_reset("bag", "clear")
    space = explore(net)
    assert len(space) == 9
    dead = space.dead_markings()
    assert sorted(len(space.marking(s)["bag"]) for s in dead) == [0, 1, 2]
    assert all(not space.marking(s)["src"] for s in dead)


def test_guard_filters_bindings():
    # only even values move: subsets of {2, 4} moved, 4 states
    net = PetriNet("guard")
    net.add_place(Place("p", INT, initial=[1, 2, 3, 4]))
    net.add_place(Place("q", INT))
    net.add_transition(Transition("even", guard="x % 2 == 0"))
    net.add_input("p", "even", "x")
    net.add_output("q", "even", "x")
    space = explore(net)
    assert len(space) == 4 and space.n_edges == 4
    assert sorted(sorted(t.value for t in m["q"]) for m in map(space.marking, range(4))) == [
        [], [2], [2, 4], [4]]


def test_multiset_arc_consumes_two_tokens():
    net = PetriNet("pairs")
    net.add_place(Place("p", UNIT, initial=[()] * 5))
    net.add_place(Place("q", UNIT))
    net.add_transition(Transition("pair"))
    net.add_input("p", "pair", "()", count=2)
    net.add_output("q", "pair", "()")
    space = explore(net)
    assert counts(space, "p") == [1, 3, 5]
    assert len(space.dead_markings()) == 1


def test_priority_blocks_less_urgent_transitions():
    net = PetriNet("priority")
    net.add_place(Place("p", UNIT, initial=[()]))
    net.add_place(Place("a", UNIT))
    net.add_place(Place("b", UNIT))
    net.add_transition(Transition("urgent", priority=P_HIGH))
    net.add_transition(Transition("normal"))
    for t, out in (("urgent", "a"), ("normal", "b")):
        net.add_input("p", t, "()")
        net.add_output(out, t, "()")
    space = explore(net)
    assert len(space) == 2 and [e.transition for e in space.edges(0)] == ["urgent"]


@pytest.mark.parametrize("n", [5, 6])
def test_dining_philosophers_lucas_numbers(n):
    # take edges: pairs (independent set T, member of T); put edges as many.
    # n=5: 5 singletons + 5 pairs -> sum |T| = 15 -> 30 edges; n=6: 6 + 9*2 + 2*3 = 30 -> 60
    edges = {5: 30, 6: 60}[n]
    for net in (dining_philosophers(n), coloured_philosophers(n),
                coloured_philosophers(n, guarded=True)):
        space = explore(net)
        assert (len(space), space.n_edges) == (lucas(n), edges), net.name
        assert space.dead_markings() == [] and space.home_markings() == list(range(lucas(n)))


def test_markings_wider_than_64_bits():
    # 66 places of one bit each: packed markings are stored as byte strings
    space = explore(dining_philosophers(22))
    assert space.keys.dtype.kind == "S"
    assert len(space) == lucas(22) == 39603
    assert len(space.marking(len(space) - 1)["eat0"]) in (0, 1)


def test_two_terminal_components_have_no_home_marking():
    net = PetriNet("fork")
    net.add_place(Place("p", UNIT, initial=[()]))
    net.add_place(Place("a", UNIT))
    net.add_place(Place("b", UNIT))
    for out in ("a", "b"):
        net.add_transition(Transition(f"to_{out}"))
        net.add_input("p", f"to_{out}", "()")
        net.add_output(out, f"to_{out}", "()")
    space = explore(net)
    assert space.home_markings() == [] and space.dead_markings() == [1, 2]
    assert statespace_graph.terminal_components(space) == [1, 2]


def test_no_enabled_transition():
    net = PetriNet("stuck")
    net.add_place(Place("p", UNIT))
    net.add_transition(Transition("t"))
    net.add_input("p", "t", "()")
    space = explore(net)
    assert (len(space), space.n_edges, space.dead_markings(), space.complete) == (1, 0, [0], True)


# -- timed nets -----------------------------------------------------------------------------------
def test_timed_two_clocks_relative():
    # Hand derivation, (a, b) = timestamps relative to the state's clock:
    # S0 (0,0): ta, tb both at 0 -> S1 (1,0), S2 (0,2)
    # S1 (1,0): only tb (ta waits) -> S3 (1,2);  S2 (0,2): only ta -> S3
    # S3 (1,2): ta at +1 -> (2-1, 2-1) = S4 (1,1)
    # S4 (1,1): ta and tb at +1 -> (1,0) = S1 and (0,2) = S2
    space = explore(two_clocks())
    stamps = [(space.marking(s)["a"][0].time, space.marking(s)["b"][0].time)
              for s in range(len(space))]
    assert stamps == [(0, 0), (1, 0), (0, 2), (1, 2), (1, 1)]
    edges = sorted((e.source, e.target, e.transition, e.elapsed)
                   for s in range(len(space)) for e in space.edges(s))
    assert edges == [(0, 1, "ta", 0), (0, 2, "tb", 0), (1, 3, "tb", 0), (2, 3, "ta", 0),
                     (3, 4, "ta", 1), (4, 1, "ta", 1), (4, 2, "tb", 1)]
    assert space.home_markings() == [1, 2, 3, 4] and space.dead_markings() == []
    components = space.scc_graph()
    assert [components.nodes[c]["members"] for c in components] == [[0], [1, 2, 3, 4]]


def test_timed_two_clocks_absolute_is_infinite():
    # with the clock in the state, the cycle never closes: every limit bites
    space = explore(two_clocks(), clock="absolute", max_states=40)
    assert not space.complete and space.stop_reason == "max_states"
    assert 30 < len(space) <= 40
    assert space.clock(4) == 1.0 and space.marking(4)["a"][0].time == 2.0


def test_timed_choice_relative_merges_what_absolute_keeps_apart():
    # fast: q at clock 0; slow: r@1, then q at clock 1. Relative time: q ready now in both,
    # one state (3 in all); absolute time: clocks 0 and 1 differ (4 states).
    relative = explore(timed_choice())
    absolute = explore(timed_choice(), clock="absolute")
    assert len(relative) == 3 and len(absolute) == 4
    assert len(relative.dead_markings()) == 1
    assert sorted(absolute.clock(s) for s in absolute.dead_markings()) == [0.0, 1.0]


def test_timed_tokens_ready_in_the_past_count_as_now():
    # initial tokens stamped 5 and 3: the net waits until 3, then 5; relative stamps shift
    net = PetriNet("past")
    net.add_place(Place("p", INT.timed(), initial=[Token(1, 5.0), Token(2, 3.0)]))
    net.add_place(Place("done", INT))
    net.add_transition(Transition("consume"))
    net.add_input("p", "consume", "x")
    net.add_output("done", "consume", "x")
    space = explore(net)
    # S0: p {1@5, 2@3}; 2 fires at 3 -> S1: p {1@2}, done {2}; 1 fires -> S2: done {1, 2}
    assert len(space) == 3 and space.n_edges == 2
    assert space.marking(1)["p"][0].time == 2.0
    assert [e.elapsed for e in space.edges(0)] == [3.0]


def test_timed_float_delays_do_not_split_states():
    # a delay of 0.1 against one of 0.3: three 0.1 steps must meet the 0.3 token exactly
    net = PetriNet("tenths")
    for name, delay in (("a", 0.1), ("b", 0.3)):
        net.add_place(Place(name, TUNIT, initial=[()]))
        net.add_transition(Transition(f"t{name}", delay=delay))
        net.add_input(name, f"t{name}", "()")
        net.add_output(name, f"t{name}", "()")
    # by hand, as for two_clocks: (0,0) (.1,0) (0,.3) (.1,.3) (.1,.2) (.1,.1), then back to
    # (.1,0) and (0,.3); unrounded float arithmetic would find 11 states here
    space = explore(net)
    stamps = [(space.marking(s)["a"][0].time, space.marking(s)["b"][0].time)
              for s in range(len(space))]
    assert stamps == [(0, 0), (0.1, 0), (0, 0.3), (0.1, 0.3), (0.1, 0.2), (0.1, 0.1)]
    assert space.complete and space.n_edges == 8


# -- limits --------------------------------------------------------------------------------------
def test_max_states_leaves_frontier_unexpanded():
    space = explore(grid(10), max_states=10)
    assert not space.complete and space.stop_reason == "max_states"
    assert len(space) <= 10
    expanded = [s for s in range(len(space)) if space.is_expanded(s)]
    assert expanded == list(range(space.n_expanded))
    assert all(len(space.successors(s)) == 2 for s in expanded)
    assert space.dead_markings() == []  # frontier states are not dead, merely unknown
    with pytest.raises(InputError, match="home markings need the whole state space"):
        space.home_markings()


def test_max_depth_keeps_states_within_depth():
    space = explore(grid(10), max_depth=3)
    assert not space.complete and space.stop_reason == "max_depth"
    assert len(space) == 10  # (i, j) with i + j <= 3
    assert space.n_expanded == 6  # those with i + j <= 2


def test_time_budget_stops_cleanly():
    space = explore(grid(10), time_budget_s=0.0)
    assert (space.stop_reason, len(space), space.n_expanded) == ("time_budget", 1, 0)


def test_the_memory_budget_stops_cleanly_on_both_python_paths():
    """The untimed path and the general one (a timed net) stop at the memory budget as
    at the time budget: before the state that passed it, the limit named."""
    timed = _timed_loop(delay="1")
    for net in (grid(10), timed):
        space = explore(net, max_memory_bytes=1)
        assert (space.stop_reason, len(space), space.n_expanded) == ("memory_budget", 1, 0)
        assert space.limit == "resident memory above 1 bytes"
    from tcpn.petrinets.checking.check import budget_reason
    assert budget_reason(space).startswith(
        "memory budget reached (resident memory above 1 bytes) after 1 states")
    assert explore(grid(3), max_memory_bytes=1 << 50).complete


def test_limits_not_reached_leave_space_complete():
    space = explore(grid(3), max_states=16, max_depth=7, time_budget_s=60)
    assert space.complete and len(space) == 16 and space.dead_markings() == [15]
    # at max_depth=6 the last state (depth 6) stays unexpanded: not known to be dead
    space = explore(grid(3), max_depth=6)
    assert not space.complete and space.dead_markings() == [] and not space.is_expanded(15)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_states": 0}, "max_states must be an int >= 1"),
    ({"max_depth": -1}, "max_depth must be an int >= 0"),
    ({"time_budget_s": float("nan")}, "time_budget_s must be a finite number"),
    ({"max_memory_bytes": 0}, "max_memory_bytes must be an int >= 1 or None"),
    ({"max_memory_bytes": 1.5e9}, "max_memory_bytes must be an int >= 1 or None"),
    ({"clock": "wall"}, "clock must be one of"),
])
def test_bad_limits(kwargs, message):
    with pytest.raises(InputError, match=message):
        explore(counter(3), **kwargs)


# -- refusal of random nets ---------------------------------------------------------------------
def _timed_loop(**transition) -> PetriNet:
    net = PetriNet("loop")
    net.add_place(Place("p", INT.timed(), initial=[0]))
    net.add_transition(Transition("step", guard="x < 3", **transition))
    net.add_input("p", "step", "x")
    return net


def test_refuses_random_transition_delay():
    net = _timed_loop(delay=Exponential(mean=1.0))
    net.add_output("p", "step", "x + 1")
    with pytest.raises(InputError, match=r"delay of transition step: .*drawn at random"):
        explore(net)


def test_refuses_random_arc_delay():
    net = _timed_loop()
    net.add_output("p", "step", "x + 1", delay=Uniform(0.0, 1.0))
    with pytest.raises(InputError, match=r"delay of output arc step->p: .*drawn at random"):
        explore(net)


def test_refuses_random_function_in_inscription():
    net = _timed_loop()
    net.add_output("p", "step", "x + 1", delay="uniform(0, 1)")
    with pytest.raises(InputError, match=r"delay of output arc step->p: .*'uniform'"):
        explore(net)
    net = _timed_loop()
    net.add_output("p", "step", "x + discrete(1, 2)")
    with pytest.raises(InputError, match=r"output arc step->p: .*'discrete'"):
        explore(net)


def test_refuses_code_action_drawing_from_rng():
    net = _timed_loop(action=lambda x, rng: {"y": x + 1}, outputs=("y",))
    net.add_output("p", "step", "y")
    with pytest.raises(InputError, match="code action of transition step draws from 'rng'"):
        explore(net)


def test_now_needs_absolute_time():
    net = _timed_loop(delay=1)
    net.add_output("p", "step", "x + 1")
    net.add_place(Place("log", ProductSet(INT, INT)))
    net.add_output("log", "step", "(x, int(now))")
    with pytest.raises(InputError, match=r"output arc step->log: .*reads 'now'.*absolute"):
        explore(net)
    space = explore(net, clock="absolute")
    (dead,) = space.dead_markings()
    assert sorted(t.value for t in space.marking(dead)["log"]) == [(0, 0), (1, 1), (2, 2)]


def test_deterministic_code_action_is_accepted():
    net = PetriNet("action")
    net.add_place(Place("p", INT, initial=[0]))
    net.add_transition(Transition("double", guard="x < 10",
                                  action=lambda x: {"y": 2 * x + 1}, outputs=("y",)))
    net.add_input("p", "double", "x")
    net.add_output("p", "double", "y")
    assert [space_value for space_value in _values(explore(net), "p")] == [0, 1, 3, 7, 15]


def _values(space, place):
    return [space.marking(s)[place][0].value for s in range(len(space))]


# -- paths, graphs, memory ----------------------------------------------------------------------
def _replay(net, steps) -> Simulator:
    sim = Simulator(net)
    for transition, binding in steps:
        sim.fire(transition, binding)
    return sim


@pytest.mark.parametrize("make", [lambda: grid(6), lambda: coloured_philosophers(5),
                                  lambda: dining_philosophers(4)])
def test_path_replays_in_simulator_untimed(make):
    net = make()
    space = explore(net)
    for state in (len(space) - 1, len(space) // 2, 0):
        sim = _replay(net, space.path_to(state))
        assert {p: Counter(ts) for p, ts in sim.marking_dict().items()} == markings(space)[state]


def test_path_replays_in_simulator_timed():
    net = two_clocks()
    space = explore(net)
    for state in range(len(space)):
        steps = space.path_to(state)
        sim = _replay(net, steps)
        relative = {p: Counter((t.value, max(0.0, t.time - sim.now)) for t in ts)
                    for p, ts in sim.marking_dict().items()}
        assert relative == markings(space)[state]
    assert len(space.path_to(4)) == 3  # ta, tb, ta: the shortest way round

    absolute = explore(net, clock="absolute", max_states=20)
    last = len(absolute) - 1
    sim = _replay(net, absolute.path_to(last))
    assert sim.now == absolute.clock(last)
    assert {p: Counter(ts) for p, ts in sim.marking_dict().items()} == markings(absolute)[last]


def test_path_to_rejects_unknown_state():
    with pytest.raises(InputError, match=r"no state 9: states are 0\.\.3"):
        explore(counter(3)).path_to(9)


def test_networkx_view():
    space = explore(grid(3))
    graph = space.to_networkx()
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (16, 24)
    assert nx.is_directed_acyclic_graph(graph)
    labelled = space.to_networkx(labels=True)
    assert labelled.edges[0, 1]["labels"] == [("t1", {"x": 0})]
    assert space.scc_graph().number_of_nodes() == 16


def test_memory_is_reported_per_state():
    space = explore(grid(30))
    assert 0 < space.bytes_per_state < space.peak_bytes_per_state
    # the packed markings, edges and starts alone: 8 + 2 * 4 * (2k(k+1)/(k+1)^2) + 4 bytes
    floor = (space.keys.nbytes + space.edge_dst.nbytes + space.edge_start.nbytes) / len(space)
    assert space.bytes_per_state >= floor
    assert np.array_equal(space.matrix().sum(axis=1), [len(space.successors(s))
                                                        for s in range(len(space))])


@pytest.mark.slow
def test_a_million_states():
    # 29 philosophers: L(29) = 1,149,851 states, markings of 87 one-bit fields
    space = explore(dining_philosophers(29))
    assert space.complete and len(space) == lucas(29) == 1_149_851
    assert space.dead_markings() == []
    assert space.bytes_per_state < 200


def test_same_state_counts_as_snakes():
    # an independent tool on the same nets (SNAKES' StateGraph on to_snakes(net))
    import snakes.nets as sn

    from tcpn.petrinets.exchange.snakes import to_snakes

    for net in (grid(4), coloured_philosophers(6, guarded=True), dining_philosophers(5),
                counter(12)):
        graph = sn.StateGraph(to_snakes(net))
        graph.build()
        space = explore(net)
        assert len(space) == len(graph), net.name
        assert space.n_edges == sum(len(list(graph.successors(s))) for s in graph), net.name
