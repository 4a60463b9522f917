"""The inline membership tests the compiler generates agree with ``ColourSet.contains``."""

from __future__ import annotations

import math

import pytest

from tcpn.petrinets import (
    BOOL,
    INT,
    REAL,
    STRING,
    UNIT,
    ColourSet,
    EnumSet,
    FiringError,
    IntSet,
    ListSet,
    PetriNet,
    Place,
    ProductSet,
    RecordSet,
    Transition,
    compile_net,
    simulate,
)
from tcpn.petrinets.compiler import _colour_test

Packet = RecordSet("Packet", seq=INT, size=IntSet(40, 1500), kind=EnumSet(("data", "ack")))
COLOURS = [
    INT, IntSet(0, 5), IntSet(low=3), IntSet(high=-1), REAL, BOOL, STRING, UNIT,
    EnumSet(("a", "b")), ProductSet(INT, STRING), ProductSet(INT, ProductSet(BOOL, REAL)),
    Packet, ListSet(INT), ListSet(ProductSet(INT, INT), max_length=2), ListSet(Packet),
]
VALUES = [
    0, 1, 3, 7, -2, True, False, 1.5, math.inf, math.nan, -0.0, "a", "c", "", (), (1,),
    (1, "x"), (1, (True, 2.5)), (1, (True, "x")), (1, 2), ((1, 2), (3, 4)),
    ((1, 2), (3, 4), (5, 6)), Packet.make(seq=1, size=40, kind="ack"),
    Packet.record_type(seq=1, size=20, kind="ack"), (Packet.make(seq=2, size=99, kind="data"),),
    [1, 2], None,
]


@pytest.mark.parametrize("colour", COLOURS, ids=lambda c: c.describe())
def test_generated_test_agrees_with_contains(colour):
    namespace: dict = {}
    source = _colour_test(colour, "v", namespace)
    check = eval(f"lambda v: {source}", namespace)
    for value in VALUES:
        assert bool(check(value)) == colour.contains(value), (colour.describe(), value)


def test_record_token_of_wrong_field_is_refused_at_run_time():
    net = PetriNet("records")
    net.declare(Packet=Packet.record_type)
    net.add_place(Place("go", UNIT, initial=[()]))
    net.add_place(Place("out", Packet))
    net.add_transition(Transition("send"))
    net.add_input("go", "send", "()")
    net.add_output("out", "send", "Packet(seq=1, size=9000, kind='data')")
    with pytest.raises(FiringError, match="is not of colour set Packet"):
        simulate(net)


def forwarding_net(target: ColourSet) -> PetriNet:
    """``forward`` moves a packet ``p`` from ``wire`` (a timed Packet place) to ``out``
    (colour ``target``) and its ``(n, p)`` pair to ``queued``."""
    net = PetriNet("forwarding")
    net.add_place(Place("wire", Packet.timed(), initial=[Packet.make(seq=1, size=40,
                                                                      kind="ack")]))
    net.add_place(Place("count", INT, initial=[0]))
    net.add_place(Place("out", target))
    net.add_place(Place("queued", ProductSet(INT, Packet)))
    net.add_transition(Transition("forward"))
    net.add_input("wire", "forward", "p")
    net.add_input("count", "forward", "n")
    net.add_output("count", "forward", "n + 1")
    net.add_output("out", "forward", "p")
    net.add_output("queued", "forward", "(n * 2, p)")
    return net


def test_a_token_moved_to_a_place_of_the_same_colour_set_is_not_tested_again():
    """Its input place's test already held; the pair's packet neither, its int is."""
    fire = compile_net(forwarding_net(Packet)).transition("forward").source
    fire = fire[fire.index("def _fire_tracked"):]
    assert "is not of colour set Packet" not in fire
    assert "_val[0]) is int" in fire and "_val[1]" not in fire
    assert simulate(forwarding_net(Packet)).marking["out"][0].value.seq == 1


def test_a_token_moved_to_a_place_of_another_colour_set_is_still_tested():
    small = RecordSet("Packet", seq=INT, size=IntSet(40, 100), kind=EnumSet(("data", "ack")))
    assert small.record_type is Packet.record_type  # same class, narrower test
    simulate(forwarding_net(small))  # size 40 fits
    net = forwarding_net(small)
    net.places["wire"] = Place("wire", Packet.timed(),
                               initial=[Packet.make(seq=1, size=999, kind="ack")])
    with pytest.raises(FiringError, match="is not of colour set Packet"):
        simulate(net)


def test_a_variable_a_code_action_assigns_is_tested():
    net = PetriNet("action")
    net.add_place(Place("inp", IntSet(0, 5), initial=[1]))
    net.add_place(Place("out", IntSet(0, 5)))
    net.add_transition(Transition("bump", action=lambda x: {"x": x + 10}, outputs=("x",)))
    net.add_input("inp", "bump", "x")
    net.add_output("out", "bump", "x")
    with pytest.raises(FiringError, match="is not of colour set"):
        simulate(net)


def replacing_net(expression: str, place_colour: RecordSet = Packet,
                  size: int = 40) -> PetriNet:
    """``grow`` takes a packet from ``wire`` (colour ``place_colour``) and puts
    ``expression`` (over the packet ``p``) on ``out`` (colour Packet)."""
    net = PetriNet("replacing")
    net.add_place(Place("wire", place_colour.timed(),
                        initial=[Packet.record_type(seq=1, size=size, kind="ack")]))
    net.add_place(Place("out", Packet))
    net.add_transition(Transition("grow"))
    net.add_input("wire", "grow", "p")
    net.add_output("out", "grow", expression)
    return net


def fire_source(net: PetriNet) -> str:
    source = compile_net(net).transition("grow").source
    return source[source.index("def _fire_tracked"):]


def test_a_record_replace_tests_the_type_and_the_replaced_fields_only():
    """``p._replace(size=...)`` of a ``p`` known to be a Packet: the fields it keeps
    passed the place's test; the type and ``size`` (field 1) are tested."""
    fire = fire_source(replacing_net("p._replace(size=p.size + 10)"))
    assert "_val[1]" in fire and "_val[0]" not in fire and "_val[2]" not in fire
    assert "type(_val) is" in fire
    assert simulate(replacing_net("p._replace(size=p.size + 10)")).marking["out"][0] \
        .value.size == 50
    with pytest.raises(FiringError, match="is not of colour set Packet"):
        simulate(replacing_net("p._replace(size=p.size + 9000)"))
    with pytest.raises(FiringError, match="is not of colour set Packet"):
        simulate(replacing_net("p._replace(kind='nak')"))


def test_a_replace_the_compiler_cannot_vouch_for_is_tested_whole():
    """Another input colour set, ``**fields`` or an unknown field: the whole test."""
    wide = RecordSet("Packet", seq=INT, size=INT, kind=EnumSet(("data", "ack")))
    assert wide.record_type is Packet.record_type
    whole = ("_val[0]", "_val[1]", "_val[2]")
    for net in (replacing_net("p._replace(seq=2)", place_colour=wide, size=9000),
                replacing_net("p._replace(**{'seq': 2})")):
        fire = fire_source(net)
        assert all(part in fire for part in whole)
    # from a wider place, the size the replace keeps is still tested
    with pytest.raises(FiringError, match="is not of colour set Packet"):
        simulate(replacing_net("p._replace(seq=2)", place_colour=wide, size=9000))
    with pytest.raises(FiringError, match="output arc grow->out"):
        simulate(replacing_net("p._replace(colour=1)"))
