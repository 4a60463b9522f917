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
    EnumSet,
    FiringError,
    IntSet,
    ListSet,
    PetriNet,
    Place,
    ProductSet,
    RecordSet,
    Transition,
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
