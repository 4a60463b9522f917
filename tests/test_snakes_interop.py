"""SNAKES interoperability: both engines agree on enabled bindings along random firings."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
import snakes.nets as sn
import snakes.typing as st

from tcpn.errors import InputError
from tcpn.petrinets import (
    INT,
    STRING,
    UNIT,
    Exponential,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Token,
    Transition,
    simulate,
)
from tcpn.petrinets.examples import counter, single_server_queue
from tcpn.petrinets.exchange.snakes import (
    ANY,
    SnakesConversionError,
    Timing,
    from_snakes,
    snakes_binding,
    timing_of,
    to_snakes,
)

Binding = tuple[tuple[str, Any], ...]


# -- the two engines, observed the same way ---------------------------------------------
def _freeze(binding: dict[str, Any]) -> Binding:
    return tuple(sorted(binding.items()))


def snakes_enabled(snet: sn.PetriNet) -> dict[tuple[str, Binding], sn.Substitution]:
    """Every (transition, binding) SNAKES' modes() lists, with one mode to fire it."""
    found = {}
    for t in snet.transition():
        for mode in t.modes():
            found[(t.name, _freeze(snakes_binding(mode)))] = mode
    return found


def tcpn_enabled(sim: Simulator) -> set[tuple[str, Binding]]:
    pairs = sim.enabled()
    found = {(name, _freeze(b)) for name, b in pairs}
    assert len(found) == len(pairs), "tcpn listed a binding twice"
    return found


def snakes_fire(t: sn.Transition, mode: sn.Substitution) -> None:
    """``t.fire(mode)``, working around SNAKES' inhibitor check (see test below)."""
    if any(isinstance(label, sn.Inhibitor) for _, label in t.input()) and mode.dict():
        assert mode in t.modes()
        for place, label in t.input():
            place.remove(label.flow(mode))
        for place, label in t.output():
            place.add(label.flow(mode))
    else:
        t.fire(mode)


def snakes_marking(snet: sn.PetriNet) -> dict[str, Counter]:
    return {p.name: Counter(() if v is sn.dot else v for v in p.tokens) for p in snet.place()}


def tcpn_marking(sim: Simulator) -> dict[str, Counter]:
    return {name: Counter(tok.value for tok in tokens)
            for name, tokens in sim.marking_dict().items()}


def walk_both(net: PetriNet, snet: sn.PetriNet, steps: int, seed: int) -> int:
    """Fire the same random sequence in both engines, comparing at every step.

    Returns the number of firings (the walk stops early at a dead marking).
    """
    rng = random.Random(seed)
    sim = Simulator(net, seed=seed)
    for step in range(steps):
        in_snakes = snakes_enabled(snet)
        in_tcpn = tcpn_enabled(sim)
        assert set(in_snakes) == in_tcpn, f"step {step}: enabled bindings differ"
        assert snakes_marking(snet) == tcpn_marking(sim), f"step {step}: markings differ"
        if not in_tcpn:
            return step
        name, binding = rng.choice(sorted(in_tcpn, key=repr))
        sim.fire(name, dict(binding))
        snakes_fire(snet.transition(name), in_snakes[(name, binding)])
    return steps


# -- nets ---------------------------------------------------------------------------------
def tuple_net() -> PetriNet:
    """Three places of (id, hops) tokens; a declared limit; a constant in a pattern."""
    net = PetriNet("relay")
    pair = ProductSet(INT, INT)
    net.declare(LIMIT=4, HOME=0)
    net.add_place(Place("a", pair, initial=[(0, 0), (1, 0), (2, 1)]))
    net.add_place(Place("b", pair))
    net.add_place(Place("c", pair))
    net.add_place(Place("log", STRING))
    net.add_transition(Transition("ab", guard="k < LIMIT"))
    net.add_input("a", "ab", "(i, k)")
    net.add_output("b", "ab", "(i, k + 1)")
    net.add_transition(Transition("bc"))
    net.add_input("b", "bc", "(i, k)")
    net.add_output("c", "bc", "(i, k)")
    net.add_output("log", "bc", "'home'", when="i == HOME")
    net.add_transition(Transition("ca"))
    net.add_input("c", "ca", "(i, k)")
    net.add_output("a", "ca", "(i, k)")
    net.add_transition(Transition("pair_up"))          # two tokens with equal hops
    net.add_input("c", "pair_up", "(i, k)")
    net.add_input("a", "pair_up", "(j, k)")
    net.add_output("a", "pair_up", "(j, k)")
    net.add_output("b", "pair_up", "(i, 0)")
    return net


def contention_net(workers: int = 4, locks: int = 2) -> PetriNet:
    """Workers competing for a pool of unit locks; a two-token batch release."""
    net = PetriNet("contention")
    net.declare(ROUNDS=3)
    net.add_place(Place("lock", UNIT, initial=[()] * locks))
    for w in range(workers):
        net.add_place(Place(f"idle{w}", INT, initial=[0]))
        net.add_place(Place(f"busy{w}", INT))
        net.add_transition(Transition(f"acquire{w}", guard="n < ROUNDS"))
        net.add_input(f"idle{w}", f"acquire{w}", "n")
        net.add_input("lock", f"acquire{w}", "()")
        net.add_output(f"busy{w}", f"acquire{w}", "n")
        net.add_transition(Transition(f"release{w}"))
        net.add_input(f"busy{w}", f"release{w}", "n")
        net.add_output(f"idle{w}", f"release{w}", "n + 1")
        net.add_output("lock", f"release{w}", "()")
    net.add_place(Place("spent", UNIT))
    net.add_transition(Transition("retire"))  # two locks leave together, one comes back
    net.add_input("lock", "retire", "()", count=2)
    net.add_output("spent", "retire", "()")
    net.add_output("lock", "retire", "()")
    return net


def arc_kinds_net() -> PetriNet:
    """Read, inhibitor, reset, counted and conditional arcs, variable counts."""
    net = PetriNet("kinds")
    net.declare(STOP=3)
    net.add_place(Place("n", INT, initial=[0]))
    net.add_place(Place("mode", STRING, initial=["run"]))
    net.add_place(Place("trash", INT, initial=[7, 7, 8]))
    net.add_place(Place("stop", INT))
    net.add_place(Place("out", INT))
    net.add_transition(Transition("step"))
    net.add_input("n", "step", "x")
    net.add_read("mode", "step", "'run'")
    net.add_inhibitor("stop", "step", "STOP")        # constant: fine in SNAKES
    net.add_output("n", "step", "x + 1")
    net.add_output("out", "step", "x", count="x % 3")  # 0, 1 or 2 copies
    net.add_output("stop", "step", "x", when="x >= 2")
    net.add_transition(Transition("flush"))
    net.add_inhibitor("out", "flush")                # only when out is empty
    net.add_reset("trash", "flush")
    net.add_transition(Transition("eat"))
    net.add_input("out", "eat", "y", count=2)
    net.add_read("n", "eat", "z")
    net.add_output("trash", "eat", "y + z")
    return net


def inhibited_net() -> PetriNet:
    """A transition with variables and an inhibitor arc: SNAKES can't fire it."""
    net = PetriNet("inhibited")
    net.add_place(Place("jobs", INT, initial=[1, 2, 3]))
    net.add_place(Place("alarm", UNIT))
    net.add_place(Place("done", INT))
    net.add_transition(Transition("work"))
    net.add_input("jobs", "work", "j")
    net.add_inhibitor("alarm", "work")
    net.add_output("done", "work", "j")
    net.add_output("alarm", "work", "()", when="j == 2")
    return net


def module_net() -> PetriNet:
    """Two instances of one module with different parameters."""
    stage = PetriNet("stage")
    stage.declare(CAP=1)
    stage.add_place(Place("inp", INT, port="in"))
    stage.add_place(Place("outp", INT, port="out"))
    stage.add_transition(Transition("move", guard="v <= CAP"))
    stage.add_input("inp", "move", "v")
    stage.add_output("outp", "move", "v")
    net = PetriNet("pipeline")
    net.declare(CAP=1)
    net.add_place(Place("src", INT, initial=[0, 1, 2, 3, 4]))
    net.add_place(Place("mid", INT))
    net.add_place(Place("dst", INT))
    net.add_module(stage, "s1", ports={"inp": "src", "outp": "mid"}, params={"CAP": 3})
    net.add_module(stage, "s2", ports={"inp": "mid", "outp": "dst"})
    return net


NETS = {
    "counter": lambda: counter(6),
    "tuple": tuple_net,
    "contention": contention_net,
    "arc kinds": arc_kinds_net,
    "inhibited": inhibited_net,
    "modules": module_net,
}


# -- round trips --------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(NETS))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_snakes_and_tcpn_agree_along_random_firings(name, seed):
    net = NETS[name]()
    fired = walk_both(net, to_snakes(net), steps=60, seed=seed)
    assert fired > 0


@pytest.mark.parametrize("name", sorted(NETS))
def test_from_snakes_of_to_snakes_behaves_as_the_original(name):
    net = NETS[name]()
    back = from_snakes(to_snakes(net))
    assert set(back.places) == set(net.places)
    assert set(back.transitions) == set(net.transitions)
    assert walk_both(back, to_snakes(net), steps=60, seed=5) > 0


def test_counter_walk_reaches_the_limit_by_hand():
    # x -> x + 1 while x < 6: six firings, then dead, in both engines
    assert walk_both(counter(6), to_snakes(counter(6)), steps=100, seed=0) == 6


def test_module_parameters_stay_per_instance():
    snet = to_snakes(module_net())
    # s1 moves v <= 3 (its parameter), s2 keeps the net's CAP = 1
    assert sorted(snakes_binding(m)["v"] for m in snet.transition("s1.move").modes()) == \
        [0, 1, 2, 3]
    assert str(snet.transition("s1.move").guard) == "v <= CAP_s1_move"
    assert str(snet.transition("s2.move").guard) == "v <= CAP"


def test_timed_net_round_trips_with_its_timing():
    net = single_server_queue(200, mean_gap=1.0, mean_service=0.7)
    back = from_snakes(to_snakes(net), timing_of(net))
    assert back.transitions["start"].delay == Exponential(0.7)
    for place in net.places:
        assert back.places[place].colour == net.places[place].colour
    first, again = simulate(net, seed=11), simulate(back, seed=11)
    assert (first.firing_counts, first.final_time) == (again.firing_counts, again.final_time)
    assert first.firing_counts["depart"] == 200


def test_timing_applies_delays_priorities_and_timestamps():
    snet = sn.PetriNet("clock")
    snet.add_place(sn.Place("tick", [0], st.tInteger))
    snet.add_place(sn.Place("seen", [], st.tInteger))
    snet.add_transition(sn.Transition("advance", sn.Expression("n < 3")))
    snet.add_input("tick", "advance", sn.Variable("n"))
    snet.add_output("tick", "advance", sn.Expression("n + 1"))
    snet.add_output("seen", "advance", sn.Variable("n"))
    timing = Timing(timed={"tick", "seen"}, delays={"advance": 2.0},
                    arc_delays={("advance", "seen"): 0.5}, priorities={"advance": 50},
                    initial={"tick": [Token(0, 1.0)]})
    net = from_snakes(snet, timing)
    result = simulate(net, seed=0)
    # starts at 1.0, fires at 1, 3, 5; 'seen' tokens stamped firing time + 2 + 0.5
    assert result.firings == 3 and result.final_time == 5.0
    assert sorted(t.time for t in result.marking["seen"]) == [3.5, 5.5, 7.5]
    assert net.transitions["advance"].priority == 50


def test_snakes_types_become_colour_sets():
    snet = sn.PetriNet("typed")
    snet.add_place(sn.Place("i", [1], st.tInteger))
    snet.add_place(sn.Place("s", ["a"], st.tString))
    snet.add_place(sn.Place("black", [sn.dot, sn.dot]))
    snet.add_place(sn.Place("anything", [1, "a"]))
    net = from_snakes(snet)
    assert net.places["i"].colour == INT and net.places["s"].colour == STRING
    assert net.places["black"].colour == UNIT
    assert [t.value for t in net.places["black"].initial_tokens] == [(), ()]
    assert net.places["anything"].colour == ANY


def test_native_snakes_net_with_tests_multiarcs_and_flush():
    snet = sn.PetriNet("native")
    snet.add_place(sn.Place("p", [1, 1, 2, 3]))
    snet.add_place(sn.Place("q", [(1, "a"), (2, "b")]))
    snet.add_place(sn.Place("r", []))
    snet.add_place(sn.Place("junk", [9, 9]))
    snet.add_place(sn.Place("ban", [5]))
    snet.add_transition(sn.Transition("t", sn.Expression("x + y > 2")))
    snet.add_input("p", "t", sn.MultiArc([sn.Variable("x"), sn.Variable("x")]))
    snet.add_input("q", "t", sn.Test(sn.Tuple([sn.Variable("y"), sn.Variable("s")])))
    snet.add_output("r", "t", sn.MultiArc([sn.Expression("(s, x)"), sn.Value("z")]))
    snet.add_transition(sn.Transition("clean"))
    snet.add_input("junk", "clean", sn.Flush("all"))
    snet.add_input("ban", "clean", sn.Inhibitor(sn.Value(4)))
    net = from_snakes(snet)
    kinds = sorted((a.kind.value, a.inscription, a.count) for a in net.arcs)
    assert kinds == [
        ("inhibitor", "4", 1), ("input", "x", 2), ("output", "'z'", 1),
        ("output", "(s, x)", 1), ("read", "(y, s)", 1), ("reset", None, 1),
    ]
    assert walk_both(net, snet, steps=10, seed=3) >= 2


def test_snakes_inhibitor_bug_and_tcpn_inhibitor_with_variables():
    net = inhibited_net()
    snet = to_snakes(net)
    work = snet.transition("work")
    modes = work.modes()
    assert sorted(snakes_binding(m)["j"] for m in modes) == [1, 2, 3]
    # SNAKES 0.9.33 lists the modes but refuses to fire any of them
    with pytest.raises(ValueError, match="not enabled"):
        work.fire(modes[0])
    # tcpn: firing j=2 raises the alarm, which then inhibits the two other jobs
    sim = Simulator(net)
    sim.fire("work", {"j": 2})
    assert sim.enabled() == []
    assert [t.value for t in sim.tokens("done")] == [2]


# -- what can't be represented ----------------------------------------------------------
def _one_transition(**arcs: Any) -> PetriNet:
    net = PetriNet("bad")
    net.add_place(Place("p", INT, initial=[1]))
    net.add_place(Place("q", INT))
    net.add_transition(Transition("t", **arcs))
    return net


def test_refuses_code_action_with_outputs():
    net = _one_transition(action=lambda x: {"y": x + 1}, outputs=("y",))
    net.add_input("p", "t", "x")
    net.add_output("q", "t", "y")
    with pytest.raises(SnakesConversionError, match="transition t: its code action"):
        to_snakes(net)


@pytest.mark.parametrize(("build", "message"), [
    (lambda n: (n.add_input("p", "t", "x"), n.add_input("q", "t", "x + 1")),
     "input arc q->t: inscription 'x \\+ 1' is an expression"),
    (lambda n: (n.add_input("p", "t", "x"), n.add_read("p", "t", "y")),
     "place p is joined to it by input and read arcs"),
    (lambda n: (n.add_input("p", "t", "x"), n.add_inhibitor("q", "t", "x")),
     "inhibitor arc q->t: the inhibitor reads the transition's variables \\(x\\)"),
    (lambda n: (n.add_input("p", "t", "x"), n.add_output("q", "t", "x + uniform(0, 1)")),
     "uses 'uniform'"),
    (lambda n: n.add_input("p", "t", "x", count="2"),
     "count '2' is an expression"),
])
def test_refuses_what_snakes_cannot_express(build, message):
    net = _one_transition()
    build(net)
    with pytest.raises(SnakesConversionError, match=message):
        to_snakes(net)


@pytest.mark.parametrize(("label", "message"), [
    (sn.Inhibitor(sn.Variable("v"), sn.Expression("v > 3")), "inhibitor condition 'v > 3'"),
    (sn.Flush("v"), "flush arc binds 'v' to the whole marking"),
])
def test_from_snakes_refuses_inputs_tcpn_cannot_express(label, message):
    snet = sn.PetriNet("bad")
    snet.add_place(sn.Place("p", [1]))
    snet.add_place(sn.Place("q", []))
    snet.add_transition(sn.Transition("t"))
    snet.add_input("p", "t", label)
    snet.add_output("q", "t", sn.Expression("len(v)") if isinstance(label, sn.Flush)
                    else sn.Value(0))
    with pytest.raises(SnakesConversionError, match=message):
        from_snakes(snet)


def test_from_snakes_refuses_arbitrary_flush_output_and_bad_timing():
    snet = sn.PetriNet("bad")
    snet.add_place(sn.Place("p", [1]))
    snet.add_place(sn.Place("q", []))
    snet.add_transition(sn.Transition("t"))
    snet.add_output("p", "t", sn.Flush("[1, 2]"))
    with pytest.raises(SnakesConversionError, match="arbitrary multiset"):
        from_snakes(snet)
    snet.remove_output("p", "t")
    snet.add_output("p", "t", sn.Value(2))
    with pytest.raises(InputError, match="timing for net bad: delays names no 'u'"):
        from_snakes(snet, Timing(delays={"u": 1.0}))
    with pytest.raises(InputError, match=r"arc_delays names \('t', 'q'\)"):
        from_snakes(snet, Timing(arc_delays={("t", "q"): 1.0}, timed={"q"}))


def test_snakes_tools_work_on_converted_nets():
    import snakes.pnml

    # SNAKES' own state graph: the counter 0..6 has seven markings
    graph = sn.StateGraph(to_snakes(counter(6)))
    graph.build()
    assert len(graph) == 7
    # through SNAKES' PNML and back, colour sets survive
    text = snakes.pnml.dumps(to_snakes(tuple_net()))
    back = from_snakes(snakes.pnml.loads(text))
    assert back.places["a"].colour == ProductSet(INT, INT)
    assert walk_both(back, to_snakes(tuple_net()), steps=30, seed=4) > 0
