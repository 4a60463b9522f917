"""Bad nets and bad runs: every error names the element, and at run time the binding and time."""

from __future__ import annotations

import math

import pytest

from tcpn.errors import InputError
from tcpn.petrinets import (
    INT,
    UNIT,
    Discrete,
    Exponential,
    FiringError,
    IntSet,
    PetriNet,
    Place,
    Simulator,
    Token,
    Transition,
    TruncatedNormal,
    Uniform,
    compile_net,
    simulate,
)


def net_with(place_colour=INT, initial=(1,), **transition_kwargs) -> PetriNet:
    net = PetriNet("bad")
    net.add_place(Place("a", place_colour, initial=list(initial)))
    net.add_place(Place("b", place_colour))
    net.add_transition(Transition("t", **transition_kwargs))
    return net


def test_unknown_variable_in_output_arc_names_arc_and_variable():
    net = net_with()
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "y + 1")
    with pytest.raises(InputError, match=r"output arc t->b: unknown variable\(s\) y"):
        compile_net(net)


def test_unknown_variable_in_guard():
    net = net_with(guard="x < limit")
    net.add_input("a", "t", "x")
    with pytest.raises(InputError, match=r"guard of transition t: unknown variable.*limit"):
        compile_net(net)


def test_guard_raising_names_binding_and_time():
    net = net_with(place_colour=INT.timed(), initial=[Token(0, 2.5)], guard="10 // x > 1")
    net.add_input("a", "t", "x")
    with pytest.raises(FiringError) as info:
        simulate(net)
    message = str(info.value)
    assert "guard of transition t" in message and "x=0" in message
    assert "ZeroDivisionError" in message


def test_output_expression_raising_at_runtime_names_time():
    net = net_with(place_colour=INT.timed(), initial=[Token(0, 1.5)])
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "1 // x")
    with pytest.raises(FiringError, match=r"output arc t->b at time 1.5 with binding <x=0>"):
        simulate(net)


def test_token_of_wrong_colour_names_place_and_value():
    net = PetriNet("bad")
    net.add_place(Place("a", INT, initial=[1]))
    net.add_place(Place("small", IntSet(0, 5, name="SMALL")))
    net.add_transition(Transition("t"))
    net.add_input("a", "t", "x")
    net.add_output("small", "t", "x + 10")
    with pytest.raises(FiringError, match=r"output arc t->small.*token 11 is not of colour set "
                                          r"SMALL \(0..5\)"):
        simulate(net)


def test_string_token_on_int_place():
    net = net_with()
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "str(x)")
    with pytest.raises(FiringError, match="token '1' is not of colour set INT"):
        simulate(net)


def test_initial_marking_of_wrong_colour():
    with pytest.raises(InputError, match="place a: initial token 'x' is not of colour set INT"):
        Place("a", INT, initial=["x"])


def test_timestamp_on_untimed_place():
    with pytest.raises(InputError, match="has a timestamp but the colour set is untimed"):
        Place("a", INT, initial=[Token(1, 3.0)])


def test_arc_delay_to_untimed_place_is_refused():
    net = net_with()
    net.add_input("a", "t", "x")
    with pytest.raises(InputError, match="output arc t->b: has a delay but place b is untimed"):
        net.add_output("b", "t", "x", delay=2.0)


@pytest.mark.parametrize("delay", [math.inf, math.nan, -1.0])
def test_non_finite_or_negative_constant_delay(delay):
    with pytest.raises(InputError, match="delay of transition t"):
        Transition("t", delay=delay)


def test_non_finite_delay_expression_at_run_time():
    net = net_with(place_colour=INT.timed(), delay="1e308 * x")
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "x")
    net.places["a"].initial = (Token(10),)
    with pytest.raises(FiringError, match=r"delay of transition t at time 0 .*is not finite"):
        simulate(net)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Exponential(mean=0), "Exponential: mean must be > 0"),
        (lambda: Exponential(mean=math.inf), "Exponential: mean must be a finite number"),
        (lambda: Uniform(-1.0, 2.0), "Uniform: low must be >= 0"),
        (lambda: TruncatedNormal(1.0, -2.0), "TruncatedNormal: sigma must be >= 0"),
        (lambda: TruncatedNormal(-100.0, 1.0), "puts almost no mass"),
        (lambda: Discrete([1, 2], [0.5]), "Discrete: 2 values but 1 weights"),
        (lambda: Discrete([1, -2]), "negative delay"),
    ],
)
def test_distribution_parameters_are_checked(build, message):
    with pytest.raises(InputError, match=message):
        build()


def test_duplicate_names_are_refused():
    net = PetriNet("dup")
    net.add_place(Place("p"))
    with pytest.raises(InputError, match="duplicate name 'p': a place"):
        net.add_place(Place("p"))
    with pytest.raises(InputError, match="duplicate name 'p': a place"):
        net.add_transition(Transition("p"))


def test_arc_to_unknown_place_or_transition():
    net = PetriNet("n")
    net.add_place(Place("p"))
    with pytest.raises(InputError, match="unknown transition 'nope'"):
        net.add_input("p", "nope", "()")
    net.add_transition(Transition("t"))
    with pytest.raises(InputError, match="unknown place 'q'"):
        net.add_output("q", "t", "()")


def test_random_function_in_guard_is_refused():
    net = net_with(guard="uniform(0, 1) < 0.5")
    net.add_input("a", "t", "x")
    with pytest.raises(InputError, match="random function 'uniform' can't be used here"):
        compile_net(net)


def test_now_in_guard_is_read_but_refused_on_input_arcs():
    net = net_with(guard="now > 3")
    net.add_input("a", "t", "x")
    assert compile_net(net).clock_readers == (0,)
    net = net_with()
    net.add_input("a", "t", "x")
    net.add_input("a", "t", "x + int(now)")
    with pytest.raises(InputError, match=r"input arc a->t: 'now' can't be used here "
                                         r"\(CPN ML's time\(\)\): only a guard"):
        compile_net(net)


def test_syntax_error_names_the_arc():
    net = net_with()
    with pytest.raises(InputError, match=r"input arc a->t: invalid inscription 'x \+'"):
        net.add_input("a", "t", "x +")


def test_action_with_unknown_parameter():
    net = net_with(action=lambda x, mystery: {"y": x}, outputs=("y",))
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "y")
    with pytest.raises(InputError, match="parameter 'mystery' is neither a variable"):
        compile_net(net)


def test_action_raising_names_binding():
    net = net_with(action=lambda x: {"y": 1 // (x - 1)}, outputs=("y",))
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "y")
    with pytest.raises(FiringError,
                       match="code action of transition t at time 0 with binding <x=1>"):
        simulate(net)


def test_action_missing_output_is_an_error():
    net = net_with(action=lambda x: {}, outputs=("y",))
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "y")
    with pytest.raises(FiringError, match="KeyError: 'y'"):
        simulate(net)


def test_negative_count_expression():
    net = net_with()
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "x", count="x - 5")
    with pytest.raises(FiringError, match=r"count of output arc t->b .*count -4 is not an int"):
        simulate(net)


def test_module_port_colour_mismatch():
    module = PetriNet("m")
    module.add_place(Place("inp", INT, port="in"))
    net = PetriNet("outer")
    net.add_place(Place("u", UNIT))
    with pytest.raises(InputError, match="port inp has colour set INT but socket u has UNIT"):
        net.add_module(module, "m1", ports={"inp": "u"})


def test_module_unknown_parameter():
    module = PetriNet("m")
    module.declare(K=1)
    with pytest.raises(InputError, match="parameter 'J' is not one of its declarations"):
        PetriNet("outer").add_module(module, "m1", params={"J": 2})


def test_run_arguments_are_checked():
    from tcpn.petrinets.examples import counter

    sim = Simulator(counter(3))
    with pytest.raises(InputError, match="until=inf must be finite"):
        sim.run(until=math.inf)
    with pytest.raises(InputError, match="max_firings must be >= 0"):
        sim.run(max_firings=-1)
    with pytest.raises(InputError, match="no place named 'nope'"):
        sim.tokens("nope")
