"""Random delays as choices in the explorer (delay_points): hand-counted cases."""

import pytest

from tcpn.errors import InputError
from tcpn.petrinets import (
    INT,
    STRING,
    Discrete,
    Exponential,
    Interval,
    ListSet,
    PetriNet,
    Place,
    Simulator,
    Transition,
    Uniform,
    explore,
)
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.statespace.intervals import delay_points


def _one_delay(delay: object) -> PetriNet:
    net = PetriNet("one")
    net.add_place(Place("p", INT.timed(), initial=[0]))
    net.add_place(Place("q", INT.timed()))
    net.add_transition(Transition("go", delay=delay))
    net.add_input("p", "go", "x")
    net.add_output("q", "go", "x")
    return net


def _arrival_times(net: PetriNet, points: int) -> list[float]:
    space = explore(net, clock="absolute", delay_points=points)
    return sorted(space.marking(s)["q"][0].time for s in space.dead_markings())


def test_an_interval_is_explored_at_its_points_with_both_ends() -> None:
    assert _arrival_times(_one_delay(Uniform(1.0, 3.0)), 2) == [1.0, 3.0]
    assert _arrival_times(_one_delay(Uniform(1.0, 3.0)), 5) == [1.0, 1.5, 2.0, 2.5, 3.0]
    # CPN Tools' integer interval: integer points, both ends
    assert _arrival_times(_one_delay(Interval(0, 10)), 4) == [0.0, 4.0, 8.0, 10.0]
    # a finite support is explored whole, whatever the number of points
    assert _arrival_times(_one_delay(Discrete([2.0, 5.0, 7.0])), 2) == [2.0, 5.0, 7.0]


def test_without_delay_points_a_random_delay_is_refused_naming_it() -> None:
    with pytest.raises(InputError, match=r"delay of transition go.*delay_points=m"):
        explore(_one_delay(Uniform(1.0, 3.0)))


def test_an_unbounded_delay_is_refused_naming_the_transition() -> None:
    with pytest.raises(InputError, match=r"delay of transition go.*unbounded support"):
        explore(_one_delay(Exponential(mean=1.0)), delay_points=3)
    with pytest.raises(InputError, match=r"delay_points must be a whole number >= 2"):
        delay_points(Uniform(0.0, 1.0), 1, "x")


def _race(b_delay: object) -> PetriNet:
    """``a`` arrives after 1, ``b`` after ``b_delay``; ``log`` records the arrival order."""
    net = PetriNet("race")
    net.add_place(Place("start", STRING.timed(), initial=["a", "b"]))
    net.add_place(Place("arrived", STRING.timed()))
    net.add_place(Place("seen", ListSet(STRING), initial=[()]))
    net.add_transition(Transition("move_a", guard="x == 'a'", delay=1.0))
    net.add_transition(Transition("move_b", guard="x == 'b'", delay=b_delay))
    for t in ("move_a", "move_b"):
        net.add_input("start", t, "x")
        net.add_output("arrived", t, "x")
    net.add_transition(Transition("log"))
    net.add_input("arrived", "log", "y")
    net.add_input("seen", "log", "s")
    net.add_output("seen", "log", "s + (y,)")
    return net


def _orders(net: PetriNet, points: int | None = None) -> set[tuple[str, ...]]:
    space = explore(net, delay_points=points)
    return {space.marking(s)["seen"][0].value for s in space.dead_markings()}


def test_an_interval_explores_the_orderings_it_makes_possible() -> None:
    # fixed delays: b (2) always after a (1)
    assert _orders(_race(2.0)) == {("a", "b")}
    # b within [0, 2]: before a (0), with it (1: both orders), after it (2)
    assert _orders(_race(Uniform(0.0, 2.0)), 3) == {("a", "b"), ("b", "a")}
    # b within [1.5, 2]: never before a, whatever the points
    assert _orders(_race(Uniform(1.5, 2.0)), 5) == {("a", "b")}


@pytest.mark.parametrize("delay", [Uniform(0.0, 2.0), Discrete([0.0, 1.0, 2.0], [1, 2, 1]),
                                   Interval(0, 2)])
def test_a_path_replays_in_the_simulator_with_forced_draws(delay: object) -> None:
    net = _race(delay)
    space = explore(net, clock="absolute", delay_points=3)
    for s in space.dead_markings():
        path = space.path_to(s)
        draws = [u for t, _b in path if t in space.delay_choices
                 for u in space.delay_choices[t].draws()]
        sim = Simulator(net, forced_draws=draws)
        for t, binding in path:
            sim.fire(space.delay_choices[t].original if t in space.delay_choices else t,
                     dict(binding))
        assert sim.tokens("seen") == space.marking(s)["seen"]
        assert sim.now == space.clock(s)


def test_an_integer_interval_exports_as_cpn_tools_4_writes_it_and_reads_back() -> None:
    text = to_cpn(_one_delay(Interval(1, 3)))
    assert "@+[1,3]" in text
    back = read_cpn(text.encode())
    assert [t.delay for t in back.net.transitions.values()] == [Interval(1, 3)]
    assert _arrival_times(back.net, 3) == [1.0, 2.0, 3.0]
