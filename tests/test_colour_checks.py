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
from tcpn.petrinets.engine.compiler import _colour_test

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


def test_a_record_replace_tests_the_replaced_fields_only():
    """``p._replace(size=...)`` of a ``p`` known to be a Packet: the fields it keeps
    passed the place's test and ``_replace`` keeps ``p``'s exact type; ``size`` (field 1)
    is tested."""
    fire = fire_source(replacing_net("p._replace(size=p.size + 10)"))
    assert "_val[1]" in fire and "_val[0]" not in fire and "_val[2]" not in fire
    assert "type(_val) is" not in fire
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


def counting_net(expression: str, out: ColourSet, **declarations: object) -> PetriNet:
    """``emit`` takes each of the tokens 0..3 of ``src`` (colour ``0..3``) and puts
    ``expression`` (over that token ``n``) on ``out``."""
    net = PetriNet("counting")
    net.declare(**declarations)
    net.add_place(Place("src", IntSet(0, 3), initial=[0, 1, 2, 3]))
    net.add_place(Place("out", out))
    net.add_transition(Transition("emit"))
    net.add_input("src", "emit", "n")
    net.add_output("out", "emit", expression)
    return net


def emit_tested(net: PetriNet) -> bool:
    source = compile_net(net).transition("emit").source
    return "is not of colour set" in source[source.index("def _fire_tracked"):]


GUARANTEED = [  # expression, output colour set: every value passes, no test is generated
    ("n + 1", IntSet(1, 4)), ("n - 1", IntSet(-1, 2)), ("n + n", IntSet(0, 6)),
    ("max(n, 2)", IntSet(2, 3)), ("min(n, 2)", IntSet(0, 2)), ("max(n, 2)", REAL),
    ("n + 1 if n < 2 else 0", IntSet(0, 4)), ("n < 2", BOOL), ("not n", BOOL),
    ("()", UNIT), ("7", IntSet(7, 7)), ("K", IntSet(0, 9)), ("(n, K, 'a')",
                                                            ProductSet(INT, INT, STRING)),
    ("now", REAL),
]
TESTED = [  # the same expressions where a value may fall outside: the test stays
    ("n + 1", IntSet(0, 3)), ("n - 1", IntSet(0, 3)), ("max(n, 2)", IntSet(3, 3)),
    ("min(n, 2)", IntSet(1, 2)), ("n + 1 if n < 2 else 0", IntSet(1, 3)), ("n < 2", INT),
    ("7", IntSet(0, 5)), ("K", IntSet(0, 5)), ("(n, K, 'a')", ProductSet(INT, BOOL, STRING)),
    ("n * 1", INT), ("len((n,))", INT), ("now", INT), ("-n", IntSet(-3, 0)),
]


@pytest.mark.parametrize("expression, out", GUARANTEED + TESTED,
                         ids=[f"{e}->{c.describe()}" for e, c in GUARANTEED + TESTED])
def test_an_untested_output_never_leaves_its_colour_set(expression, out):
    """Soundness of the tests left out: each output either passes ``contains`` or the
    firing raises; and the compiler leaves out exactly the tests of ``GUARANTEED``."""
    net = counting_net(expression, out, K=7)
    assert emit_tested(net) == ((expression, out) in TESTED)
    try:
        result = simulate(net)
    except FiringError as exc:
        assert (expression, out) in TESTED and "is not of colour set" in str(exc)
        return
    assert result.firings == 4
    assert all(out.contains(token.value) for token in result.marking["out"])


def test_a_declaration_is_a_constant_only_when_immutable_and_not_hidden():
    """A declaration holding a list, or hidden by a code action's output, is tested; so
    is ``now`` when a code action assigns it."""
    assert not emit_tested(counting_net("K", IntSet(0, 9), K=7))
    assert emit_tested(counting_net("K[0]", IntSet(0, 9), K=[7]))
    net = counting_net("K", IntSet(0, 9), K=7)
    net.transitions["emit"] = Transition("emit", action=lambda n: {"K": 99}, outputs=("K",))
    assert emit_tested(net)
    with pytest.raises(FiringError, match="is not of colour set"):
        simulate(net)
    clock = counting_net("now", REAL)  # the clock, unless a code action assigns ``now``
    assert not emit_tested(clock)
    clock.transitions["emit"] = Transition("emit", action=lambda n: {"now": math.inf},
                                           outputs=("now",))
    assert emit_tested(clock)
    with pytest.raises(FiringError, match="is not of colour set"):
        simulate(clock)


def constructing_net(expression: str) -> PetriNet:
    """``build`` takes a packet ``p`` (a Packet) and a number ``n`` (0..3) and puts
    ``expression`` on ``out`` (colour Packet)."""
    net = PetriNet("constructing")
    net.declare(Packet=Packet.record_type, ACK="ack", BIG=9000)
    net.add_place(Place("wire", Packet, initial=[Packet.make(seq=1, size=40, kind="ack")]))
    net.add_place(Place("num", IntSet(0, 3), initial=[2]))
    net.add_place(Place("out", Packet))
    net.add_transition(Transition("build"))
    net.add_input("wire", "build", "p")
    net.add_input("num", "build", "n")
    net.add_output("out", "build", expression)
    return net


def build_test(net: PetriNet) -> str:
    """The membership test of ``build``'s output (empty when there is none)."""
    source = compile_net(net).transition("build").source
    fire = source[source.index("def _fire_tracked"):]
    lines = [line.strip() for line in fire.splitlines() if line.strip().startswith("if not (")]
    return " ".join(lines)


def test_a_record_constructor_tests_only_the_fields_it_cannot_vouch_for():
    """``Packet(seq=..., size=..., kind=...)`` with every field named: the type is the
    record's; a field from a known variable, a constant that passes or bounded integer
    arithmetic is not tested; the others are (field 1, ``size``, here)."""
    assert build_test(constructing_net("Packet(seq=p.seq + n, size=p.size, kind=ACK)")) == ""
    test = build_test(constructing_net("Packet(seq=n, size=p.size + n, kind='ack')"))
    assert "_val[1]" in test and "_val[0]" not in test and "_val[2]" not in test
    assert "type(_val)" not in test
    assert simulate(constructing_net("Packet(seq=n, size=p.size + n, kind='ack')")) \
        .marking["out"][0].value.size == 42
    for bad in ("Packet(seq=n, size=BIG, kind='ack')", "Packet(seq=n, size=40, kind='nak')",
                "Packet(seq=n, size=p.size - 40 + n, kind=ACK)"):
        with pytest.raises(FiringError, match="is not of colour set Packet"):
            simulate(constructing_net(bad))


def test_a_constructor_the_compiler_cannot_vouch_for_is_tested_whole():
    """Fields by position, ``**fields`` or another callable: the whole test."""
    for expression in ("Packet(1, 40, 'ack')", "Packet(**{'seq': 1, 'size': 40, 'kind': 'ack'})",
                       "p._make((1, 40, 'ack'))"):
        test = build_test(constructing_net(expression))
        assert all(part in test for part in ("type(_val)", "_val[0]", "_val[1]", "_val[2]"))
        assert simulate(constructing_net(expression)).firings == 1
