"""Small example nets used by the demo, the documentation, the tests and the benchmarks."""

from __future__ import annotations

from tcpn.petrinets.colours import INT, UNIT
from tcpn.petrinets.distributions import Distribution, Exponential
from tcpn.petrinets.net import PetriNet, Place, Transition

__all__ = ["counter", "dining_philosophers", "interleaving_grid", "left_first_philosophers",
           "retransmission", "single_server_queue", "stop_and_wait", "token_ring"]


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


def interleaving_grid(k: int) -> PetriNet:
    """Two independent counters ``0..k``: ``(k + 1)^2`` reachable markings.

    >>> from tcpn.petrinets import explore
    >>> explore(interleaving_grid(3)).n_states
    16
    """
    net = PetriNet("grid")
    net.declare(K=k)
    for i in (1, 2):
        net.add_place(Place(f"count{i}", INT, initial=[0]))
        net.add_transition(Transition(f"increment{i}", guard="x < K"))
        net.add_input(f"count{i}", f"increment{i}", "x")
        net.add_output(f"count{i}", f"increment{i}", "x + 1")
    return net


def token_ring(n: int) -> PetriNet:
    """One black token going round ``n`` places: ``n`` reachable markings, each marking one
    place. The shape of a wide net with a small state space (the contest's largest
    models: tens of thousands of places, 10^4-10^5 states).

    >>> from tcpn.petrinets import explore
    >>> explore(token_ring(4)).n_states
    4
    """
    net = PetriNet("ring")
    for i in range(n):
        net.add_place(Place(f"p{i}", UNIT, initial=[()] if i == 0 else []))
    for i in range(n):
        net.add_transition(Transition(f"t{i}"))
        net.add_input(f"p{i}", f"t{i}", "()")
        net.add_output(f"p{(i + 1) % n}", f"t{i}", "()")
    return net


def dining_philosophers(n: int) -> PetriNet:
    """``n`` dining philosophers taking both forks at once, one place per state of each.

    The reachable markings are the sets of eating philosophers with no two neighbours:
    the independent sets of a cycle of ``n`` vertices, counted by the Lucas number L(n).

    >>> from tcpn.petrinets import explore
    >>> explore(dining_philosophers(5)).n_states  # L(5)
    11
    """
    net = PetriNet("philosophers")
    for i in range(n):
        net.add_place(Place(f"think{i}", UNIT, initial=[()]))
        net.add_place(Place(f"eat{i}", UNIT))
        net.add_place(Place(f"fork{i}", UNIT, initial=[()]))
    for i in range(n):
        forks = (f"fork{i}", f"fork{(i + 1) % n}")
        net.add_transition(Transition(f"take{i}"))
        net.add_transition(Transition(f"put{i}"))
        for place in (f"think{i}", *forks):
            net.add_input(place, f"take{i}", "()")
            net.add_output(place, f"put{i}", "()")
        net.add_output(f"eat{i}", f"take{i}", "()")
        net.add_input(f"eat{i}", f"put{i}", "()")
    return net


def retransmission(lost_place: bool = False) -> PetriNet:
    """One segment over a lossy channel, resent until it is delivered (a model-checking
    example: "eventually delivered" fails on the loss cycle unless fairness is assumed).

    Places ``channel`` (the segment in flight) and ``delivered``. ``deliver`` moves it from
    the channel; ``lose`` loses it and the sender resends at once (the channel holds a copy
    again). With ``lost_place=True`` the loss and the resend are two steps (``lose`` to a
    place ``lost``, then ``resend``), so ``deliver`` is not enabled all along the cycle.

    >>> from tcpn.petrinets import explore
    >>> explore(retransmission()).n_states, explore(retransmission(lost_place=True)).n_states
    (2, 3)
    """
    net = PetriNet("retransmission")
    net.add_place(Place("channel", UNIT, initial=[()]))
    net.add_place(Place("delivered", UNIT))
    net.add_transition(Transition("deliver"))
    net.add_input("channel", "deliver", "()")
    net.add_output("delivered", "deliver", "()")
    net.add_transition(Transition("lose"))
    net.add_input("channel", "lose", "()")
    if lost_place:
        net.add_place(Place("lost", UNIT))
        net.add_output("lost", "lose", "()")
        net.add_transition(Transition("resend"))
        net.add_input("lost", "resend", "()")
        net.add_output("channel", "resend", "()")
    else:
        net.add_output("channel", "lose", "()")
    return net


def left_first_philosophers(n: int) -> PetriNet:
    """``n`` philosophers who take the left fork, then the right one: the classic deadlock
    (every philosopher holds a left fork). Places ``think{i}``, ``fork{i}``, ``left{i}``
    (holding the left fork), ``eat{i}``; transitions ``takeleft{i}``, ``takeright{i}``,
    ``put{i}``.

    >>> from tcpn.petrinets import explore
    >>> space = explore(left_first_philosophers(3))
    >>> space.n_states, space.dead_markings()
    (14, [12])
    """
    net = PetriNet("left_first_philosophers")
    for i in range(n):
        net.add_place(Place(f"think{i}", UNIT, initial=[()]))
        net.add_place(Place(f"fork{i}", UNIT, initial=[()]))
        net.add_place(Place(f"left{i}", UNIT))
        net.add_place(Place(f"eat{i}", UNIT))
    for i in range(n):
        left, right = f"fork{i}", f"fork{(i + 1) % n}"
        net.add_transition(Transition(f"takeleft{i}"))
        net.add_input(f"think{i}", f"takeleft{i}", "()")
        net.add_input(left, f"takeleft{i}", "()")
        net.add_output(f"left{i}", f"takeleft{i}", "()")
        net.add_transition(Transition(f"takeright{i}"))
        net.add_input(f"left{i}", f"takeright{i}", "()")
        net.add_input(right, f"takeright{i}", "()")
        net.add_output(f"eat{i}", f"takeright{i}", "()")
        net.add_transition(Transition(f"put{i}"))
        net.add_input(f"eat{i}", f"put{i}", "()")
        for place in (f"think{i}", left, right):
            net.add_output(place, f"put{i}", "()")
    return net


def stop_and_wait(segments: int = 2, delay_s: float | Distribution = 1.0,
                  timeout_s: float = 3.0, losses: int | None = None) -> PetriNet:
    """A stop-and-wait sender over a lossy channel with a retransmission timeout.

    The sender sends segment ``n`` (``send``: to ``data``, ready ``delay_s`` later, and a
    timer on ``timer``, ready ``timeout_s`` later) and waits (``awaiting``). The channel
    either delivers the segment (``deliver`` when the receiver ``expected`` it: a token on
    ``delivered``; ``duplicate`` otherwise) with an ACK ready ``delay_s`` later on ``acks``,
    or loses it (``lose_data``); ACKs are lost alike (``lose_ack``). ``receive_ack`` moves the
    sender on to the next segment (to ``done`` after the last); ``timeout`` resends the
    awaited segment when its timer expires, ``discard_timer`` drops the timer of a segment
    already acknowledged. 8 places, 8 transitions; every delay sits on an output arc.

    ``losses=None`` lets the channel lose any number of segments and ACKs (the loss cycle
    runs for ever); ``losses=k`` adds a place ``loss_budget`` holding ``k`` tokens, one
    consumed per loss. With ``timeout_s > 2 * delay_s`` no timer expires before its ACK could
    arrive, so the sender never resends a segment still in flight (with a shorter timer, an
    ACK of a segment already acknowledged stays on ``acks``, where only a loss takes it;
    so does the timer of the last segment on ``timer``). ``delay_s`` may be a
    time interval (``Interval(1, 3)``, CPN Tools' ``@+[1,3]``): each crossing then takes
    any delay in it.

    >>> from tcpn.petrinets import explore
    >>> explore(stop_and_wait()).n_states
    22
    """
    net = PetriNet("stop_and_wait")
    net.declare(SEGMENTS=segments)
    for place, initial in (("to_send", [1]), ("awaiting", []), ("timer", []), ("data", []),
                           ("acks", []), ("expected", [1]), ("delivered", []), ("done", [])):
        net.add_place(Place(place, INT.timed(), initial=initial))
    net.add_transition(Transition("send"))
    net.add_input("to_send", "send", "n")
    net.add_output("awaiting", "send", "n")
    net.add_output("data", "send", "n", delay=delay_s)
    net.add_output("timer", "send", "n", delay=timeout_s)
    net.add_transition(Transition("deliver", guard="n == e"))
    net.add_transition(Transition("duplicate", guard="n != e"))
    for name in ("deliver", "duplicate"):
        net.add_input("data", name, "n")
        net.add_input("expected", name, "e")
        net.add_output("acks", name, "n", delay=delay_s)
    net.add_output("expected", "deliver", "e + 1")
    net.add_output("delivered", "deliver", "n")
    net.add_output("expected", "duplicate", "e")
    net.add_transition(Transition("receive_ack"))
    net.add_input("acks", "receive_ack", "n")
    net.add_input("awaiting", "receive_ack", "n")
    net.add_output("to_send", "receive_ack", "n + 1", when="n < SEGMENTS")
    net.add_output("done", "receive_ack", "n", when="n == SEGMENTS")
    net.add_transition(Transition("timeout"))
    net.add_input("timer", "timeout", "n")
    net.add_input("awaiting", "timeout", "n")
    net.add_output("to_send", "timeout", "n")
    net.add_transition(Transition("discard_timer", guard="n != m"))
    net.add_input("timer", "discard_timer", "n")
    net.add_read("awaiting", "discard_timer", "m")
    for name, place in (("lose_data", "data"), ("lose_ack", "acks")):
        net.add_transition(Transition(name))
        net.add_input(place, name, "n")
    if losses is not None:
        net.add_place(Place("loss_budget", UNIT, initial=[()] * losses))
        for name in ("lose_data", "lose_ack"):
            net.add_input("loss_budget", name, "()")
    return net
