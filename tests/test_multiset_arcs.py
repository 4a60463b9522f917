"""Multiset arcs: an inscription that is a whole multiset computed from the binding.

CPN ML's multisets are lists (``'a ms = 'a list``): an arc whose expression gives a list
of the place's colours moves every token of it. On an input arc every one must be there
(with its multiplicity) and all are taken; on an output arc all are put, each with the
arc's delay; ``[]`` is no token. A value outside the place's colour set is an error
naming the arc (its place and transition) when the transition fires, never a token. The
Python engine is the reference; the native engine fires the same sequence.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from test_exchange_cpn_field import colset, cpn_file, ml, spaces, var  # tests/ is on the path

from tcpn.errors import InputError
from tcpn.petrinets import (
    INT,
    STRING,
    Arc,
    ArcKind,
    Exponential,
    FiringError,
    ListSet,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Token,
    Transition,
    explore,
)
from tcpn.petrinets.engine.compiler import multiset_counts
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.pnml import read_pnml, to_pnml
from tcpn.petrinets.exchange.snakes import SnakesConversionError, to_snakes
from tcpn.petrinets.statespace.ptspace import is_pt_net, pt_net

ORDER = ProductSet(INT, ListSet(STRING))


def restaurant(orders: list[tuple[int, tuple[str, ...]]], delay: object = None) -> PetriNet:
    """Orders (number, items); ``split`` puts each order's items (a multiset) on the
    kitchen's place, with ``delay``; ``serve`` takes an order's items back when all are
    cooked (an input multiset arc, its variable bound by the order's token)."""
    net = PetriNet("restaurant")
    net.add_place(Place("orders", ORDER, initial=orders))
    net.add_place(Place("waiting", ORDER))
    net.add_place(Place("cooked", STRING.timed()))
    net.add_place(Place("served", INT))
    net.add_transition(Transition("split"))
    net.add_input("orders", "split", "(n, its)")
    net.add_output("waiting", "split", "(n, its)")
    net.add_output("cooked", "split", "its", multiset=True, delay=delay)
    net.add_transition(Transition("serve"))
    net.add_input("waiting", "serve", "(n, its)")
    net.add_input("cooked", "serve", "its", multiset=True)
    net.add_output("served", "serve", "n")
    return net


def tokens(sim: Simulator, place: str) -> list[tuple[object, float]]:
    return sorted((t.value, t.time) for t in sim.tokens(place))


def test_multiset_counts_reads_lists_tuples_and_dicts() -> None:
    assert multiset_counts(["a", "b", "a"]) == {"a": 2, "b": 1}
    assert multiset_counts(Counter({"x": 3, "y": 0})) == {"x": 3}
    assert multiset_counts([]) == {} == multiset_counts(())
    with pytest.raises(TypeError, match="list, a tuple or a dict"):
        multiset_counts(3)
    with pytest.raises(ValueError, match="int >= 0"):
        multiset_counts({"a": -1})


def test_an_output_multiset_arc_puts_every_token_with_its_multiplicity() -> None:
    net = restaurant([(1, ("fries", "cola", "fries"))])
    sim = Simulator(net, seed=0, engine="python")
    sim.step()  # split
    assert tokens(sim, "cooked") == [("cola", 0.0), ("fries", 0.0), ("fries", 0.0)]


def test_an_input_multiset_arc_needs_every_token_and_takes_them_all() -> None:
    """Order 1 needs two fries and a cola: with one fries on hand it waits; with both it
    is served, and the extra cola stays."""
    net = restaurant([])
    net.places["waiting"].initial = (Token((1, ("fries", "cola", "fries"))),)
    net.places["cooked"].initial = (Token("fries"), Token("cola"), Token("cola"))
    sim = Simulator(net, seed=0, engine="python")
    assert sim.enabled() == []
    net.places["cooked"].initial += (Token("fries"),)
    sim = Simulator(net, seed=0, engine="python")
    sim.run(max_firings=10)
    assert tokens(sim, "served") == [(1, 0.0)]
    assert tokens(sim, "cooked") == [("cola", 0.0)]


def test_an_empty_list_is_no_token_on_either_side() -> None:
    net = restaurant([(7, ())])
    sim = Simulator(net, seed=0, engine="python")
    assert [sim.step().transition for _ in range(2)] == ["split", "serve"]  # type: ignore[union-attr]
    assert sim.step() is None
    assert tokens(sim, "served") == [(7, 0.0)]
    assert tokens(sim, "cooked") == []


def test_the_arc_delay_applies_to_each_token_and_the_input_waits_for_the_last() -> None:
    """``its@+n``: every item of order n is ready at n; serving waits for all of them, so
    order 2's items (ready at 2) are served at 2, not at the first one's time."""
    net = restaurant([(2, ("fries", "cola"))], delay="n")
    sim = Simulator(net, seed=0, engine="python")
    sim.step()
    assert tokens(sim, "cooked") == [("cola", 2.0), ("fries", 2.0)]
    sim.step()
    assert sim.now == 2.0
    assert tokens(sim, "served") == [(2, 0.0)]


def test_a_random_arc_delay_is_drawn_once_for_all_the_tokens_of_the_multiset() -> None:
    net = restaurant([(1, ("fries", "cola", "fries"))], delay=Exponential(mean=1.0))
    sim = Simulator(net, seed=4, engine="python")
    sim.step()
    times = {time for _value, time in tokens(sim, "cooked")}
    assert len(tokens(sim, "cooked")) == 3 and len(times) == 1 and times != {0.0}


def test_the_input_is_ready_when_its_kth_token_is() -> None:
    """Two fries needed, three on hand ready at 1, 5 and 9: the two earliest (ready at 5)."""
    net = restaurant([])
    net.places["waiting"].initial = (Token((1, ("fries", "fries"))),)
    net.places["cooked"].initial = (Token("fries", 9.0), Token("fries", 1.0),
                                    Token("fries", 5.0))
    sim = Simulator(net, seed=0, engine="python")
    sim.step()
    assert sim.now == 5.0
    assert tokens(sim, "cooked") == [("fries", 9.0)]


@pytest.mark.parametrize("side", ["output", "input"])
def test_a_value_outside_the_places_colour_set_names_the_arc_place_and_transition(
        side: str) -> None:
    net = PetriNet("wrong")
    net.add_place(Place("bag", ListSet(INT), initial=[(1, 2), (3,)]))
    net.add_place(Place("strings", STRING, initial=["a"]))
    net.add_transition(Transition("t"))
    net.add_input("bag", "t", "l")
    if side == "output":
        net.add_output("strings", "t", "l", multiset=True)
    else:
        net.add_input("strings", "t", "l", multiset=True)
    sim = Simulator(net, seed=0, engine="python")
    with pytest.raises(FiringError) as caught:
        sim.run(max_firings=5)
    arrow = "t->strings" if side == "output" else "strings->t"
    assert f"{side} arc {arrow}" in str(caught.value)
    assert "is not of place strings's colour set STRING" in str(caught.value)
    # nothing was put: every value is tested before the first token goes
    assert [t.value for t in sim.tokens("strings")] == ["a"]


def test_a_value_that_is_no_multiset_is_a_firing_error() -> None:
    net = PetriNet("scalar")
    net.add_place(Place("src", INT, initial=[1]))
    net.add_place(Place("dst", INT))
    net.add_transition(Transition("t"))
    net.add_input("src", "t", "x")
    net.add_output("dst", "t", "x + 1", multiset=True)
    with pytest.raises(FiringError, match=r"output arc t->dst.*list, a tuple or a dict"):
        Simulator(net, seed=0, engine="python").run(max_firings=1)


def test_a_multiset_arc_binds_no_variable_and_counts_nothing_else() -> None:
    net = PetriNet("unbound")
    net.add_place(Place("p", INT, initial=[1]))
    net.add_transition(Transition("t"))
    net.add_input("p", "t", "xs", multiset=True)
    with pytest.raises(InputError, match=r"unknown variable.*xs"):
        Simulator(net, seed=0, engine="python")
    with pytest.raises(InputError, match="count 2 must be 1"):
        net.add_input("p", "t", "[x]", count=2, multiset=True)
    with pytest.raises(InputError, match="only input, read and output arcs"):
        Arc(ArcKind.INHIBITOR, "p", "t", "[1]", multiset=True)


def test_a_read_multiset_arc_needs_the_tokens_and_leaves_them() -> None:
    net = PetriNet("menu")
    net.add_place(Place("menu", STRING, initial=["fries", "cola"]))
    net.add_place(Place("asks", ListSet(STRING), initial=[("fries", "cola"), ("tea",)]))
    net.add_place(Place("ok", ListSet(STRING)))
    net.add_transition(Transition("check"))
    net.add_input("asks", "check", "l")
    net.add_read("menu", "check", "l", multiset=True)
    net.add_output("ok", "check", "l")
    sim = Simulator(net, seed=0, engine="python")
    sim.run(max_firings=5)
    assert [t.value for t in sim.tokens("ok")] == [("fries", "cola")]
    assert sorted(t.value for t in sim.tokens("menu")) == ["cola", "fries"]


def test_a_dict_of_counts_is_a_multiset_too() -> None:
    net = PetriNet("counts")
    net.add_place(Place("n", INT, initial=[3]))
    net.add_place(Place("out", STRING))
    net.add_transition(Transition("t"))
    net.add_input("n", "t", "k")
    net.add_output("out", "t", "{'a': k, 'b': 1, 'c': 0}", multiset=True)
    sim = Simulator(net, seed=0, engine="python")
    sim.run(max_firings=5)
    assert Counter(t.value for t in sim.tokens("out")) == {"a": 3, "b": 1}


def test_the_state_space_holds_every_multiset_firing() -> None:
    """Two orders, (1: a, b) and (2: a): either split first, each order served once its
    items are there, and the items are interchangeable tokens (order 2 may be served with
    the a that order 1 put): 9 markings, 12 arcs, 1 dead (both served), by hand."""
    space = explore(restaurant([(1, ("a", "b")), (2, ("a",))]), clock="absolute")
    assert space.complete
    assert (len(space), space.n_edges, len(space.dead_markings())) == (9, 12, 1)


def restaurant_cpn(serve: str) -> str:
    """:func:`restaurant` as CPN Tools writes it, ``serve`` the inscription of the arc
    from cooked to serve."""
    return cpn_file(
        colset("C1", "INT", "<int/>") + colset("C2", "STRING", "<string/>")
        + colset("C3", "ITEMS", "<list><id>STRING</id></list>")
        + colset("C4", "ORDER", "<product><id>INT</id><id>ITEMS</id></product>")
        + var("V1", "INT", "n") + var("V2", "ITEMS", "its"),
        [("P1", "orders", "ORDER", '1`(1, ["a", "b"]) ++ 1`(2, ["a"])'),
         ("P2", "waiting", "ORDER", ""), ("P3", "cooked", "STRING", ""),
         ("P4", "served", "INT", "")],
        [("T1", "split", "", ""), ("T2", "serve", "", "")],
        [("A1", "PtoT", "T1", "P1", "(n, its)"), ("A2", "TtoP", "T1", "P2", "(n, its)"),
         ("A3", "TtoP", "T1", "P3", "its"), ("A4", "PtoT", "T2", "P2", "(n, its)"),
         ("A5", "PtoT", "T2", "P3", serve), ("A6", "TtoP", "T2", "P4", "n")])


def test_a_cpn_tools_file_with_lists_on_arcs_has_cpnchecks_state_space(tmp_path: Path) -> None:
    """The restaurant in CPN Tools' form, computed lists on an output and an input arc of
    a STRING place (a large colour set): 9 markings, 12 arcs, 1 dead, as worked out by
    hand (either order of the two splits, each order served when its items are there,
    items interchangeable) and as cpncheck builds it. cpncheck reads a bare variable on
    an input arc as a pattern whatever its type (``its`` there: never enabled, 4 / 4),
    so the input arc is written ``rev its``, the same multiset."""
    for serve in ("its", "rev its"):
        imported = read_cpn(restaurant_cpn(serve))
        assert imported.complete, imported.report.text()
        assert sorted(a.where for a in imported.net.arcs if a.multiset) == [
            "input arc cooked->serve", "output arc split->cooked"]
        space = explore(imported.net, clock="absolute")
        assert (len(space), space.n_edges, len(space.dead_markings())) == (9, 12, 1)
    ours, theirs = spaces(tmp_path, restaurant_cpn("rev its"))
    assert ours == theirs == (9, 12, 1)


def test_export_to_cpn_tools_writes_the_list_and_reads_back_a_multiset_arc(
        tmp_path: Path) -> None:
    """The export writes ``its`` (a list, CPN ML's multiset); read back it is a multiset
    arc again, with the same state space (9 / 12, see above)."""
    net = restaurant([(1, ("a", "b")), (2, ("a",))])
    path = tmp_path / "restaurant.cpn"
    path.write_text(to_cpn(net), encoding="iso-8859-1")
    again = read_cpn(path)
    assert again.complete, again.report.text()
    assert sorted(a.where for a in again.net.arcs if a.multiset) == [
        "input arc cooked->serve", "output arc split->cooked"]
    ours, first = explore(again.net, clock="absolute"), explore(net, clock="absolute")
    assert (len(ours), ours.n_edges) == (len(first), first.n_edges) == (9, 12)


def test_export_refuses_a_multiset_cpn_ml_cannot_write_by_name() -> None:
    net = PetriNet("counts")
    net.add_place(Place("n", INT, initial=[3]))
    net.add_place(Place("out", STRING))
    net.add_transition(Transition("t"))
    net.add_input("n", "t", "k")
    net.add_output("out", "t", "{'a': k}", multiset=True)
    with pytest.raises(InputError, match="output arc t->out"):
        to_cpn(net)


def test_pnml_keeps_a_multiset_arc_in_tcpns_form_and_other_formats_refuse_it() -> None:
    net = restaurant([(1, ("a", "b"))], delay=Exponential(mean=1.0))
    again = read_pnml(to_pnml(net)).net
    assert [(a.where, a.multiset) for a in again.arcs] == [
        (a.where, a.multiset) for a in net.arcs]
    with pytest.raises(SnakesConversionError, match="output arc split->cooked: a multiset"):
        to_snakes(net)
    pt = PetriNet("pt")
    pt.add_place(Place("p"))
    pt.add_transition(Transition("t"))
    pt.add_output("p", "t", "[(), ()]", multiset=True)
    assert not is_pt_net(pt)
    with pytest.raises(InputError, match="output arc t->p: a P/T arc"):
        pt_net(pt)


def test_python_and_native_engines_fire_the_same_multiset_sequence() -> None:
    """Random delays on the multiset output, random order choices: the native engine (the
    generated code compiled; the C engine's subset has no multiset arcs and says so)
    fires what the Python engine fires, firing by firing."""
    from test_native import assert_same_firings, native_or_skip, sequences

    net = restaurant([(k, ("a", "b", "a")[: 1 + k % 3]) for k in range(12)],
                     delay=Exponential(mean=1.0))
    net.add_transition(Transition("reorder", guard="n < 40"))
    net.add_input("served", "reorder", "n")
    net.add_output("orders", "reorder", "(n + 12, ('a',) * (n % 4))")
    native_or_skip()
    for seed in (0, 1):
        sims = sequences(net, seed=seed, max_firings=400)
        assert len(sims["python"].monitors[0].firings) > 100
        assert_same_firings(sims)
    # integers only, in the C engine's subset but for the multiset arc: it says which arc
    # keeps it out, and the compiled generated code runs the net
    counter = PetriNet("counter")
    counter.add_place(Place("n", INT.timed(), initial=[0]))
    counter.add_place(Place("seen", INT))
    counter.add_transition(Transition("t", guard="k < 200"))
    counter.add_input("n", "t", "k")
    counter.add_output("n", "t", "k + 1", delay=Exponential(mean=1.0))
    counter.add_output("seen", "t", "[k % 3] * (k % 4)", multiset=True)
    sims = sequences(counter, seed=3, max_firings=500)
    assert_same_firings(sims)
    assert "output arc t->seen: a multiset computed from the binding" in str(
        sims["native"].native.c_reason)


def test_export_writes_a_conditional_delayed_multiset_as_cpn_ml_reads_it(tmp_path: Path
                                                                         ) -> None:
    """``if k > 0 then ["c", "c"] else empty`` (no ``1`` before the list: it is the
    multiset) and ``(if k > 1 then ["a", "b"] else [])@+k``: read back, the same tokens at
    the same times, and cpncheck builds the same state space from the file."""
    net = PetriNet("x")
    net.add_place(Place("p", INT, initial=[2]))
    net.add_place(Place("q", STRING.timed()))
    net.add_transition(Transition("t"))
    net.add_input("p", "t", "k")
    net.add_output("q", "t", "('a', 'b') if k > 1 else ()", multiset=True, delay="k")
    net.add_output("q", "t", "['c', 'c']", multiset=True, when="k > 0")
    text = to_cpn(net)
    assert 'if k &gt; 0 then ["c", "c"] else empty' in text
    assert '(if k &gt; 1 then ["a", "b"] else [])@+k' in text
    again = read_cpn(text)
    assert again.complete, again.report.text()
    runs = []
    for each in (net, again.net):
        sim = Simulator(each, seed=0, engine="python")
        sim.run()
        runs.append(tokens(sim, "q"))
    assert runs[0] == runs[1] == [("a", 2.0), ("b", 2.0), ("c", 0.0), ("c", 0.0)]
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (2, 1, 1)


def test_a_local_function_with_one_clause_written_as_a_multiset_gives_a_multiset() -> None:
    """``walk 0 = Two 0 | walk n = Two n ++ walk (n - 1)``: ML gives both clauses one type,
    so the first (a call) is a multiset too and ``All 2`` on an arc of an INT place is the
    tokens 0, 1, 1, 2, 2, 3 (as the distributed database model with an init transition
    writes its messages), not one token holding a list."""
    text = cpn_file(
        colset("C1", "INT", "<int/>")
        + var("V1", "INT", "p")
        + ml("M1", "fun Two(p) = 1`p ++ 1`(p + 1);")
        + ml("M2", "fun All(p) = let fun walk 0 = Two(0) | walk n = Two(n) ++ walk (n - 1)"
             " in walk p end;"),
        [("P1", "P", "INT", "1`2"), ("P2", "Q", "INT", "")], [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "p"), ("A2", "TtoP", "T1", "P2", "All(p)")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert [a.multiset for a in imported.net.arcs] == [False, True]
    sim = Simulator(imported.net, seed=0, engine="python")
    sim.run()
    assert sorted(t.value for t in sim.tokens("Q")) == [0, 1, 1, 2, 2, 3]


def test_a_list_written_out_on_an_input_arc_binds_its_elements() -> None:
    """``[x, y]`` is ``1`x ++ 1`y``: on an input arc its elements are patterns, one arc
    each, binding x and y, not a multiset arc waiting for variables nothing binds.
    (cpncheck reads ``[x, y]`` there as one token holding a list: never enabled.)"""
    text = cpn_file(
        colset("C1", "INT", "<int/>") + var("V1", "INT", "x", "y"),
        [("P1", "P", "INT", "1`1 ++ 1`2 ++ 1`3"), ("P2", "Q", "INT", "")],
        [("T1", "T", "x &lt; y", "")],
        [("A1", "PtoT", "T1", "P1", "[x, y]"), ("A2", "TtoP", "T1", "P2", "[x + y, x * y]")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert [(a.inscription, a.multiset) for a in imported.net.arcs] == [
        ("x", False), ("y", False), ("x + y", False), ("x * y", False)]
    space = explore(imported.net, clock="absolute")
    # x < y among {1, 2, 3}: (1, 2), (1, 3), (2, 3), each leaving one token: 4 markings
    assert (len(space), space.n_edges, len(space.dead_markings())) == (4, 3, 3)


def test_a_multiset_arc_read_from_a_file_is_held_to_the_restricted_evaluator() -> None:
    """A multiset arc's inscription in a file is checked like any other before anything
    runs: one reaching for ``__mro__`` ends the read, naming the arc."""
    from tcpn.petrinets.restricted import UntrustedCodeError

    net = PetriNet("hostile")
    net.add_place(Place("p", INT, initial=[1]))
    net.add_place(Place("q", INT))
    net.add_transition(Transition("t"))
    net.add_input("p", "t", "k")
    net.add_output("q", "t", "[k.__class__.__mro__]", multiset=True)
    with pytest.raises(UntrustedCodeError, match=r"output arc t->q, inscription.*__mro__"):
        read_pnml(to_pnml(net))
