"""Queue disciplines as sub-nets: drop-tail, RED (gentle, ECN), threshold ECN marking.

A queue holds its packets as one token each on place ``buffer``, ``(position, packet)``,
and its counters as one token on place ``fifo``: ``(head, count, bytes, empty_since)``
(the next position to leave, how many packets and bytes are queued, and when the queue
last became empty, which RED needs). Arriving packets wait, ready at their arrival time,
on the port place ``arrivals``; each discipline adds the transitions that take them:
``enqueue``, ``drop`` and, for the marking disciplines, ``mark``.

The interface with the transmitter of :mod:`tcpn.models.components.link` is
:meth:`QueueDiscipline.dequeues`: the arcs and expressions by which one packet leaves. A
discipline with several classes (a small-packets-first queue) returns one
:class:`Dequeue` per class, with guards that order them.

>>> from tcpn.petrinets import PetriNet
>>> net = PetriNet("q")
>>> DropTailQueue(limit=2).build(net)
>>> sorted(net.transitions)
['drop', 'enqueue']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.packets import ECT, FUNCTIONS, PACKET, PACKET_RECORD
from tcpn.petrinets import (
    INT,
    P_HIGH,
    REAL,
    EnumSet,
    PetriNet,
    Place,
    ProductSet,
    Transition,
)

__all__ = [
    "BUFFER",
    "FIFO",
    "Dequeue",
    "DropTailQueue",
    "QueueDiscipline",
    "RedQueue",
    "ThresholdEcnQueue",
    "red_decision",
]

#: One queued packet: its position in the queue and the packet.
BUFFER = ProductSet(INT, PACKET_RECORD, name="Queued")
#: The queue's counters: next position to leave, packets, bytes, time it became empty.
FIFO = ProductSet(INT, INT, INT, REAL, name="Fifo")
VERDICT = ProductSet(PACKET_RECORD, EnumSet(("accept", "mark", "drop"), name="Verdict"),
                     name="Decided")


@dataclass(frozen=True)
class Dequeue:
    """How one packet leaves a queue: arcs for the transmitter transition to add.

    ``inputs`` are ``(place, inscription)`` input arcs binding the packet as ``p``;
    ``outputs`` are ``(place, inscription)`` output arcs restoring the queue's state;
    ``guard`` (or None) orders several classes.
    """

    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    guard: str | None = None


@dataclass
class QueueDiscipline:
    """Base of the disciplines: the FIFO buffer, its counters and the dequeue interface.

    ``limit`` is in ``unit`` (``"packets"`` or ``"bytes"``).
    """

    limit: int = 100
    unit: str = "packets"
    kind: str = field(default="drop_tail", init=False)

    def __post_init__(self) -> None:
        if self.unit not in ("packets", "bytes"):
            raise InputError(f"{self.kind} queue: unit must be 'packets' or 'bytes', "
                             f"got {self.unit!r}")
        if not isinstance(self.limit, int) or self.limit < 1:
            raise InputError(f"{self.kind} queue: limit must be an int >= 1, got {self.limit!r}")

    @property
    def fits(self) -> str:
        """Guard: the arriving packet ``p`` fits beside the ``n`` packets / ``b`` bytes queued."""
        return "n < LIMIT" if self.unit == "packets" else "b + p.size <= LIMIT"

    @property
    def length(self) -> str:
        """The queue length in ``unit``, over the fifo variables."""
        return "n" if self.unit == "packets" else "b"

    def build(self, net: PetriNet) -> None:
        """Add the queue's places and arrival transitions to ``net``."""
        net.declare(LIMIT=self.limit, **FUNCTIONS)
        net.add_place(Place("arrivals", PACKET, port="in"))
        net.add_place(Place("buffer", BUFFER))
        net.add_place(Place("fifo", FIFO, initial=[(0, 0, 0, 0.0)]))
        self._arrival_transitions(net)

    def _arrival_transitions(self, net: PetriNet) -> None:
        _enqueue(net, "enqueue", "arrivals", "p", self.fits)
        _drop(net, "drop", "arrivals", "p", f"not ({self.fits})")

    def dequeues(self) -> tuple[Dequeue, ...]:
        """The ways a packet leaves (one class: one way)."""
        return (Dequeue(
            inputs=(("fifo", "(h, n, b, e)"), ("buffer", "(h, p)")),
            outputs=(("fifo", "(h + 1, n - 1, b - p.size, now if n == 1 else e)"),),
        ),)


#: Arrivals are taken before anything else that may happen at the same instant, so that
#: packets a sender emits back to back (at one model time) keep their order.
P_ARRIVAL = P_HIGH
#: RED's second step (enqueue, mark or drop a decided packet) comes before the next arrival.
P_DECIDED = P_HIGH // 2


def _enqueue(net: PetriNet, name: str, source: str, pattern: str, guard: str,
             packet: str = "p", priority: int = P_ARRIVAL) -> None:
    """A transition moving an arrival onto the tail of the buffer."""
    net.add_transition(Transition(name, guard=guard, priority=priority))
    net.add_input(source, name, pattern)
    net.add_input("fifo", name, "(h, n, b, e)")
    net.add_output("buffer", name, f"(h + n, {packet})")
    net.add_output("fifo", name, "(h, n + 1, b + p.size, e)")


def _drop(net: PetriNet, name: str, source: str, pattern: str, guard: str,
          priority: int = P_ARRIVAL) -> None:
    """A transition discarding an arrival; it reads the counters for its guard."""
    net.add_transition(Transition(name, guard=guard, priority=priority))
    net.add_input(source, name, pattern)
    net.add_read("fifo", name, "(h, n, b, e)")


@dataclass
class DropTailQueue(QueueDiscipline):
    """FIFO; an arrival that does not fit is dropped."""

    kind: str = field(default="drop_tail", init=False)


@dataclass
class ThresholdEcnQueue(QueueDiscipline):
    """Drop-tail that CE-marks an ECN-capable arrival when the queue holds more than ``k``.

    Arrivals that are not ECN-capable are queued unmarked (they are dropped only when the
    buffer is full).
    """

    k: float = 0.0
    kind: str = field(default="threshold_ecn", init=False)

    def build(self, net: PetriNet) -> None:
        net.declare(K=self.k)
        super().build(net)

    def _arrival_transitions(self, net: PetriNet) -> None:
        above = f"{self.length} > K and p.ecn >= {ECT}"
        _enqueue(net, "enqueue", "arrivals", "p", f"{self.fits} and not ({above})")
        _enqueue(net, "mark", "arrivals", "p", f"{self.fits} and {above}",
                 packet=f"p._replace(ecn={3})")
        _drop(net, "drop", "arrivals", "p", f"not ({self.fits})")


def red_decision(avg: float, count: int, old: int, n_queued: float, idle_s: float,
                 u: float, *, min_th: float, max_th: float, max_p: float, q_weight: float,
                 gentle: bool, wait: bool, ptc: float, ecn: bool, hard_drop: bool,
                 ect: bool) -> tuple[float, int, int, str]:
    """One arrival at a RED queue, as ns-3's ``RedQueueDisc::DoEnqueue`` computes it.

    ``avg``/``count``/``old`` are RED's state, ``n_queued`` the length (in the queue's
    unit) before the arrival, ``idle_s`` how long the queue has been empty (negative: not
    empty), ``u`` a uniform draw in [0, 1), ``ptc`` packets per second the link sends.
    Returns the new state and the verdict ``"accept"``, ``"mark"`` or ``"drop"``.

    >>> red_decision(0.0, 0, 0, 0, -1.0, 0.5, min_th=5, max_th=15, max_p=0.02,
    ...              q_weight=0.002, gentle=True, wait=True, ptc=1000, ecn=False,
    ...              hard_drop=True, ect=False)
    (0.0, 1, 0, 'accept')
    """
    m = int(ptc * idle_s) if idle_s >= 0 else 0
    avg = avg * (1.0 - q_weight) ** (m + 1) + q_weight * n_queued
    count += 1
    verdict = "accept"
    if avg >= min_th and n_queued > 1:
        if (not gentle and avg >= max_th) or (gentle and avg >= 2 * max_th):
            forced = True
            early = True
        elif old == 0:
            count, old, forced, early = 1, 1, False, False
        else:
            forced = False
            if avg >= max_th:  # gentle region
                p = max_p + (1.0 - max_p) * (avg - max_th) / max_th
            else:
                p = max_p * (avg - min_th) / (max_th - min_th)
            p = min(p, 1.0)
            if wait:
                p = 0.0 if count * p < 1.0 else (p / (2.0 - count * p) if count * p < 2.0
                                                 else 1.0)
            else:
                p = p / (1.0 - count * p) if count * p < 1.0 else 1.0
            early = u <= min(p, 1.0)
        if early:
            count = 0
            may_mark = ecn and ect and (not forced or not hard_drop)
            verdict = "mark" if may_mark else "drop"
    else:
        old = 0
    return avg, count, old, verdict


@dataclass
class RedQueue(QueueDiscipline):
    """Random Early Detection with ns-3's parameters and algorithm (gentle, wait, ECN).

    An arrival first meets ``decide`` (RED's average and verdict, one uniform draw), then
    ``enqueue``, ``mark`` or ``drop`` takes the decided packet; ``overflow`` drops one
    RED accepted that no longer fits. ``link_rate_bps`` and ``mean_packet_size_bytes``
    set how fast the average decays while the queue is idle.
    """

    min_th: float = 5.0
    max_th: float = 15.0
    max_p: float = 0.02
    q_weight: float = 0.002
    gentle: bool = True
    wait: bool = True
    ecn: bool = False
    hard_drop: bool = True
    mean_packet_size_bytes: int = 500
    link_rate_bps: float = 1e6
    kind: str = field(default="red", init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.min_th < self.max_th:
            raise InputError(f"red queue: need 0 <= min_th < max_th, got {self.min_th}, "
                             f"{self.max_th}")
        if not (0 < self.max_p <= 1 and 0 < self.q_weight <= 1):
            raise InputError("red queue: max_p and q_weight must be in (0, 1]")

    def decision(self) -> Callable[..., dict[str, Any]]:
        """The code action of ``decide``: RED's arithmetic, nothing else."""
        params: dict[str, Any] = dict(min_th=self.min_th, max_th=self.max_th, max_p=self.max_p,
                      q_weight=self.q_weight, gentle=self.gentle, wait=self.wait,
                      ptc=self.link_rate_bps / (8.0 * self.mean_packet_size_bytes),
                      ecn=self.ecn, hard_drop=self.hard_drop)
        length_of_bytes = self.unit == "bytes"

        def decide(p: Any, n: int, b: int, e: float, avg: float, count: int, old: int,
                   now: float, rng: Any) -> dict[str, Any]:
            queued = b if length_of_bytes else n
            idle = now - e if n == 0 else -1.0
            avg2, count2, old2, verdict = red_decision(
                avg, count, old, queued, idle, float(rng.random()), ect=p.ecn >= ECT, **params)
            return {"state": (avg2, count2, old2), "verdict": verdict}

        return decide

    def build(self, net: PetriNet) -> None:
        super().build(net)

    def _arrival_transitions(self, net: PetriNet) -> None:
        net.add_place(Place("red", ProductSet(REAL, INT, INT, name="RedState"),
                            initial=[(0.0, 0, 0)]))
        net.add_place(Place("decided", VERDICT))
        net.add_transition(Transition("decide", action=self.decision(),
                                      outputs=("state", "verdict"), priority=P_ARRIVAL))
        net.add_input("arrivals", "decide", "p")
        net.add_read("fifo", "decide", "(h, n, b, e)")
        net.add_input("red", "decide", "(avg, count, old)")
        net.add_output("red", "decide", "state")
        net.add_output("decided", "decide", "(p, verdict)")
        _enqueue(net, "enqueue", "decided", "(p, 'accept')", self.fits, priority=P_DECIDED)
        _enqueue(net, "mark", "decided", "(p, 'mark')", self.fits,
                 packet="p._replace(ecn=3)", priority=P_DECIDED)
        _drop(net, "drop", "decided", "(p, 'drop')", "True", priority=P_DECIDED)
        _drop(net, "overflow", "decided", "(p, v)", f"v != 'drop' and not ({self.fits})",
              priority=P_DECIDED)
