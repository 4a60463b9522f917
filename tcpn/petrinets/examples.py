"""Small example nets used by the demo, the documentation, the tests and the benchmarks."""

from __future__ import annotations

from tcpn.petrinets.colours import INT, UNIT
from tcpn.petrinets.distributions import Exponential
from tcpn.petrinets.net import PetriNet, Place, Transition

__all__ = ["counter", "single_server_queue"]


def counter(limit: int, timed: bool = False, delay: float | None = None) -> PetriNet:
    """One place holding an int and one transition ``x -> x + 1`` guarded by ``x < limit``.

    >>> from tcpn.petrinets import simulate
    >>> simulate(counter(10), seed=0).marking["count"][0].value
    10
    """
    net = PetriNet("counter")
    net.declare(LIMIT=limit)
    net.add_place(Place("count", INT.timed() if timed else INT, initial=[0]))
    net.add_transition(Transition("increment", guard="x < LIMIT", delay=delay))
    net.add_input("count", "increment", "x")
    net.add_output("count", "increment", "x + 1")
    return net


def single_server_queue(customers: int, mean_gap: float, mean_service: float) -> PetriNet:
    """An M/M/1 queue: exponential arrivals and service, one server, FIFO by timestamp.

    Places: ``source`` (the next customer's number, ready at its arrival time), ``queue``
    (waiting customers), ``idle`` (the free server), ``busy`` (the customer in service,
    ready when service ends).

    >>> from tcpn.petrinets import simulate
    >>> result = simulate(single_server_queue(50, 1.0, 0.5), seed=3)
    >>> result.firing_counts["depart"], result.stop_reason
    (50, 'dead')
    """
    net = PetriNet("mm1")
    net.declare(CUSTOMERS=customers)
    timed_int, timed_unit = INT.timed(), UNIT.timed()
    net.add_place(Place("source", timed_int, initial=[0]))
    net.add_place(Place("queue", timed_int))
    net.add_place(Place("idle", timed_unit, initial=[()]))
    net.add_place(Place("busy", timed_int))
    net.add_transition(Transition("arrive", guard="n < CUSTOMERS"))
    net.add_input("source", "arrive", "n")
    net.add_output("source", "arrive", "n + 1", delay=Exponential(mean_gap))
    net.add_output("queue", "arrive", "n")
    net.add_transition(Transition("start", delay=Exponential(mean_service)))
    net.add_input("queue", "start", "c")
    net.add_input("idle", "start", "()")
    net.add_output("busy", "start", "c")
    net.add_transition(Transition("depart"))
    net.add_input("busy", "depart", "c")
    net.add_output("idle", "depart", "()")
    return net
