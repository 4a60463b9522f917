"""Forced draws: the simulator's public way to replay a run whose random draws are known."""

import pytest

from tcpn.errors import InputError
from tcpn.petrinets import REAL, PetriNet, Place, Simulator, Transition, Uniform
from tcpn.petrinets.errors import FiringError


def _roller() -> PetriNet:
    net = PetriNet("roller")
    net.add_place(Place("x", REAL, initial=[0.0]))
    net.add_place(Place("y", REAL.timed()))
    net.add_transition(Transition("roll", guard="v < 2.0"))
    net.add_input("x", "roll", "v")
    net.add_output("x", "roll", "v + 1.0")
    net.add_output("y", "roll", "uniform(0.0, 10.0)", delay=Uniform(1.0, 3.0))
    return net


def test_forced_draws_feed_functions_and_delays_in_order() -> None:
    sim = Simulator(_roller(), forced_draws=[0.1, 0.5, 0.2, 0.0])
    sim.run()
    # per firing: the output's uniform(0, 10) then the arc's Uniform(1, 3) delay
    assert sorted((t.value, t.time) for t in sim.tokens("y")) == [(1.0, 2.0), (2.0, 1.0)]


def test_forced_draws_run_out_with_a_clear_error() -> None:
    sim = Simulator(_roller(), forced_draws=[0.1, 0.5, 0.2])
    # the firing that needs a fourth draw fails, naming the arc and the shortage
    with pytest.raises(FiringError, match=r"roll->y.*asked for draw 4, only 3 were given"):
        sim.run()


def test_forced_draws_must_be_uniform_numbers() -> None:
    with pytest.raises(InputError, match=r"draw 1 is 1.5"):
        Simulator(_roller(), forced_draws=[0.5, 1.5])


def test_forced_draws_run_on_the_python_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCPN_ENGINE", "native")
    assert Simulator(_roller(), forced_draws=[0.5]).native.engine == "python"
    assert Simulator(_roller(), forced_draws=[0.5], engine="native").native.engine == "python"
