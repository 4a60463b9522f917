"""PNML: P/T nets and symmetric nets both ways, tcpn timing in its tool-specific element."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tcpn.errors import InputError
from tcpn.petrinets import (
    INT,
    P_HIGH,
    UNIT,
    EnumSet,
    Exponential,
    IntSet,
    PetriNet,
    Place,
    ProductSet,
    Token,
    Transition,
    explore,
    simulate,
)
from tcpn.petrinets.exchange.cpn_import import CpnFormatError
from tcpn.petrinets.exchange.pnml import PTNET, SYMMETRICNET, read_pnml, to_pnml

NS = {"p": "http://www.pnml.org/version-2009/grammar/pnml"}


def mutex() -> PetriNet:
    """Two processes and one lock: a P/T net with a timed critical section."""
    net = PetriNet("mutex")
    net.add_place(Place("lock", UNIT, initial=[()]))
    for i in (1, 2):
        net.add_place(Place(f"idle{i}", UNIT, initial=[()]))
        net.add_place(Place(f"busy{i}", UNIT.timed()))
        net.add_transition(Transition(f"enter{i}", priority=P_HIGH if i == 1 else 1000))
        net.add_transition(Transition(f"leave{i}", delay=3))
        net.add_input(f"idle{i}", f"enter{i}", "()")
        net.add_input("lock", f"enter{i}", "()")
        net.add_output(f"busy{i}", f"enter{i}", "()", delay=1)
        net.add_input(f"busy{i}", f"leave{i}", "()")
        net.add_output("lock", f"leave{i}", "()")
        net.add_output(f"idle{i}", f"leave{i}", "()")
    return net


def coloured() -> PetriNet:
    """Finite colours only: a symmetric net."""
    colour = EnumSet(("red", "green"), name="Colour")
    pair = ProductSet(colour, IntSet(0, 3, name="Small"), name="Pair")
    net = PetriNet("sym")
    net.add_place(Place("a", pair.timed(), initial=[Token(("red", 1), 0),
                                                      Token(("green", 2), 5)]))
    net.add_place(Place("b", colour))
    net.add_transition(Transition("t", guard="c == 'red' or x >= 2", delay=Exponential(2.0)))
    net.add_input("a", "t", "(c, x)")
    net.add_output("b", "t", "c", count=2)
    net.add_read("b", "t", "'green'")
    return net


def test_pt_net_round_trip_keeps_timing_in_toolspecific():
    text = to_pnml(mutex())
    root = ET.fromstring(text.split("\n", 1)[1])
    net = root.find("p:net", NS)
    assert net.get("type") == PTNET
    assert net.find("p:page/p:place[@id='lock']/p:initialMarking/p:text", NS).text == "1"
    assert net.find("p:page/p:transition[@id='leave1']/p:toolspecific[@tool='tcpn']/p:delay",
                    NS).get("value") == "3"
    again = read_pnml(text).net
    assert to_pnml(again) == text
    assert again.places["busy1"].colour.is_timed and again.transitions["enter1"].priority == P_HIGH
    # enter1 is more urgent whenever both may enter, so process 2 starves: enter1 at 0,
    # busy1 stamped 0 + 1, leave1 at 1 (its delay stamps only untimed places), enter1 at 1,
    # leave1 at 2
    result = simulate(again, seed=0, max_firings=4)
    assert result.firing_counts == {"enter1": 2, "leave1": 2, "enter2": 0, "leave2": 0}
    assert result.final_time == 2.0


def test_symmetric_net_round_trip_with_standard_terms():
    text = to_pnml(coloured())
    root = ET.fromstring(text.split("\n", 1)[1])
    net = root.find("p:net", NS)
    assert net.get("type") == SYMMETRICNET
    sorts = {s.get("name"): s[0].tag.split("}")[1]
             for s in net.iter(f"{{{NS['p']}}}namedsort")}
    assert sorts == {"Colour": "finiteenumeration", "Small": "finiteintrange",
                     "TPair": "productsort"}
    guard = net.find("p:page/p:transition/p:condition/p:structure/p:or", NS)
    assert [c[0].tag.split("}")[1] for c in guard] == ["equality", "greaterthanorequal"]
    imported = read_pnml(text).net
    assert to_pnml(imported) == text
    assert imported.places["a"].initial_tokens == (Token(("red", 1), 0.0),
                                                   Token(("green", 2), 5.0))
    assert imported.transitions["t"].delay == Exponential(2.0)
    assert [a.kind.value for a in imported.arcs] == ["input", "output", "read"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda n: n.add_output("b", "t", "c", when="x > 1"), "condition or a computed count"),
    (lambda n: n.add_output("b", "t", "[c, c]", multiset=True),
     "multiset computed from the binding has no standard PNML form"),
    (lambda n: n.add_place(Place("big", INT)), "colour set INT is not a finite sort"),
    (lambda n: n.add_inhibitor("b", "t"), "no inhibitor arcs"),
    (lambda n: n.transitions["t"].__setattr__("guard", "x + 1 > 2"),
     r"no term for 'x \+ 1'"),
])
def test_what_pnml_cannot_say_is_refused_with_the_element_when_strict(change, message):
    net = coloured()
    change(net)
    with pytest.raises(InputError, match=message):
        to_pnml(net, strict=True)
    # not strict: written, and read back the same (tcpn's form in toolspecific)
    text = to_pnml(net)
    again = read_pnml(text)
    assert again.complete and to_pnml(again.net) == text


def test_pt_net_written_by_another_tool():
    text = """<?xml version="1.0"?>
<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">
 <net id="n1" type="http://www.pnml.org/version-2009/grammar/ptnet">
  <page id="top">
   <place id="p1"><name><text>ready</text></name>
     <graphics><position x="10" y="20"/></graphics>
     <initialMarking><text>3</text></initialMarking></place>
   <place id="p2"/>
   <transition id="t1"><name><text>go</text></name></transition>
   <arc id="a1" source="p1" target="t1"><inscription><text>2</text></inscription></arc>
   <arc id="a2" source="t1" target="p2"/>
  </page>
 </net>
</pnml>"""
    imported = read_pnml(text)
    net = imported.net
    assert sorted(net.places) == ["p1", "p2"]  # names are ids, as other tools refer to them
    assert imported.labels == {"p1": "ready", "t1": "go"}
    result = simulate(net, seed=0)
    assert result.firing_counts == {"t1": 1}  # 3 tokens, 2 per firing
    assert len(result.marking["p1"]) == 1 and len(result.marking["p2"]) == 1


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace('target="t"', 'target="nowhere"', 1),
     "arc refers to 'nowhere', which is not a node"),
    (lambda t: t.replace('<place id="b">', '<place id="a">'), "duplicate id 'a'"),
    (lambda t: t.replace('<usersort declaration="sort_Colour_0"', '<usersort declaration="zz"',
                         1), "unknown sort 'zz'"),
])
def test_bad_pnml_names_line_and_element(edit, message):
    text = to_pnml(coloured())
    bad = edit(text)
    assert bad != text
    with pytest.raises(CpnFormatError, match=rf"line \d+.*{message}"):
        read_pnml(bad)


def arrivals() -> PetriNet:
    """The README's ten-line net: timed integers, arithmetic, an exponential delay."""
    net = PetriNet("arrivals")
    net.add_place(Place("clock", INT.timed(), initial=[0]))
    net.add_place(Place("arrived", INT))
    net.add_transition(Transition("arrive", guard="n < 100"))
    net.add_input("clock", "arrive", "n")
    net.add_output("clock", "arrive", "n + 1", delay=Exponential(mean=2.0))
    net.add_output("arrived", "arrive", "n")
    return net


def test_a_timed_integer_net_is_written_with_tcpn_s_form_in_toolspecific():
    net = arrivals()
    with pytest.raises(InputError, match="colour set TINT is not a finite sort"):
        to_pnml(net, strict=True)
    text = to_pnml(net)
    root = ET.fromstring(text.split("\n", 1)[1])
    page = root.find("p:net/p:page", NS)
    # the structure any PNML reader gets: nodes by id, arcs between them, readable labels
    assert [p.get("id") for p in page.findall("p:place", NS)] == ["clock", "arrived"]
    assert page.find("p:transition[@id='arrive']/p:condition/p:text", NS).text == "n < 100"
    assert [(a.get("source"), a.get("target")) for a in page.findall("p:arc", NS)] == [
        ("clock", "arrive"), ("arrive", "clock"), ("arrive", "arrived")]
    assert page.find("p:arc[@id='arc1']/p:hlinscription/p:text", NS).text == "1'(n + 1)"
    again = read_pnml(text)
    assert again.complete and to_pnml(again.net) == text
    ours, theirs = simulate(net, seed=11), simulate(again.net, seed=11)
    assert ours.firing_counts == theirs.firing_counts == {"arrive": 100}
    assert ours.final_time == theirs.final_time and ours.marking == theirs.marking


@pytest.mark.parametrize("firings", [5_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_a_tcp_scenario_net_survives_pnml_with_the_same_run(firings):
    from tcpn.models.topology import scenario_net

    net = scenario_net(str(Path(__file__).parents[1] / "scenarios" / "dumbbell_newreno.yaml"))
    text = to_pnml(net)
    again = read_pnml(text)
    assert again.complete, again.report.text(limit=5)  # tcpn's own functions come back
    ours = simulate(net, seed=5, max_firings=firings)
    theirs = simulate(again.net, seed=5, max_firings=firings)
    assert ours.firing_counts == theirs.firing_counts
    assert (ours.final_time, ours.marking) == (theirs.final_time, theirs.marking)


def test_a_function_from_elsewhere_is_reported_left_out():
    net = coloured()
    net.declare(double=lambda x: 2 * x)
    net.transitions["t"].guard = "double(x) > 2"
    again = read_pnml(to_pnml(net))
    assert not again.complete
    assert "Python function test_exchange_pnml:" in again.report.text()
    with pytest.raises(InputError, match="double"):  # the PNML file does not hold code
        to_pnml(net, strict=True)


def test_inhibitor_and_reset_arcs_reach_pm4py_as_arc_types(tmp_path):
    import pm4py
    from pm4py.objects.petri_net.inhibitor_reset.semantics import InhibitorResetSemantics
    from pm4py.objects.petri_net.utils.reachability_graph import Parameters, marking_flow_petri

    net = PetriNet("guarded")
    for name, tokens in (("work", 3), ("done", 0), ("stop", 0), ("trigger", 1)):
        net.add_place(Place(name, UNIT, initial=[()] * tokens))
    net.add_transition(Transition("step"))
    net.add_transition(Transition("flush"))
    net.add_input("work", "step", "()")
    net.add_output("done", "step", "()")
    net.add_inhibitor("stop", "step")
    net.add_input("trigger", "flush", "()")
    net.add_reset("done", "flush")
    net.add_output("stop", "flush", "()", count=2)
    path = tmp_path / "guarded.pnml"
    path.write_text(to_pnml(net))
    theirs, initial, _ = pm4py.read_pnml(str(path))
    incoming, _, _ = marking_flow_petri(theirs, initial, parameters={
        Parameters.PETRI_SEMANTICS: InhibitorResetSemantics()})
    assert len(incoming) == len(explore(read_pnml(path).net)) == len(explore(net)) == 8
