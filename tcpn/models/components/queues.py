"""Queue disciplines as sub-nets: drop-tail, RED (gentle, ECN), threshold ECN marking,
small packets first (two classes) and the token bucket (policer or shaper).

A queue holds its packets as one token each on place ``buffer``, ``(position, packet)``,
and its counters as one token on place ``fifo``: ``(head, count, bytes, empty_since)``
(the next position to leave, how many packets and bytes are queued, and when the queue
last became empty, which RED needs; RED's wired queue counts from the end of the line's
last packet). Arriving packets wait, ready at their arrival time,
on the port place ``arrivals``; each discipline adds the transitions that take them:
``enqueue``, ``drop`` and, for the marking disciplines, ``mark``.

The interface with the transmitter of :mod:`tcpn.models.components.link` is
:meth:`QueueDiscipline.dequeues`: the arcs and expressions by which one packet leaves. A
discipline with several classes (:class:`SmallFirstQueue`) returns one :class:`Dequeue`
per class, with guards that order them; the token-bucket shaper returns two, whose
output arcs time its bucket. :meth:`QueueDiscipline.direct` is the cut-through way: an
arrival that finds the queue empty goes straight to an idle line (one firing instead of
an ``enqueue`` and a ``transmit`` at the same instant; the trace still shows both).
:meth:`QueueDiscipline.events` tells monitors what each transition means.

>>> from tcpn.petrinets import PetriNet
>>> net = PetriNet("q")
>>> DropTailQueue(limit=2).build(net)
>>> sorted(net.transitions)
['drop', 'enqueue']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.packets import ECT, FUNCTIONS, PACKET, PACKET_RECORD
from tcpn.petrinets import (
    BOOL,
    CLOCK,
    INT,
    P_HIGH,
    REAL,
    EnumSet,
    PetriNet,
    Place,
    ProductSet,
    Transition,
)
from tcpn.petrinets.net_functions import net_function

__all__ = [
    "BUCKET",
    "BUFFER",
    "FIFO",
    "Dequeue",
    "DropTailQueue",
    "QueueDiscipline",
    "RedQueue",
    "SmallFirstQueue",
    "ThresholdEcnQueue",
    "TokenBucketQueue",
    "bucket_level",
    "bucket_wait",
    "red_decision",
    "red_probability",
]

#: One queued packet: its position in the queue and the packet.
BUFFER = ProductSet(INT, PACKET_RECORD, name="Queued")
#: The queue's counters: next position to leave, packets, bytes, time it became empty.
FIFO = ProductSet(INT, INT, INT, CLOCK, name="Fifo")
VERDICT = ProductSet(PACKET_RECORD, EnumSet(("accept", "mark", "drop"), name="Verdict"),
                     name="Decided")
#: A token bucket: bytes of tokens and the time they were counted.
BUCKET = ProductSet(REAL, CLOCK, name="Bucket")
#: A packet the policer has metered, and whether it conforms.
METERED = ProductSet(PACKET_RECORD, BOOL, name="Metered")


@dataclass(frozen=True)
class Dequeue:
    """How one packet leaves a queue: arcs for the transmitter transition to add.

    ``inputs`` are ``(place, inscription)`` input arcs binding the packet as ``p``;
    ``outputs`` are ``(place, inscription)`` output arcs restoring the queue's state;
    ``guard`` (or None) orders several classes; ``reads`` are test arcs; ``delayed`` are
    output arcs ``(place, inscription, delay)`` to timed places; ``priority`` (None: the
    net's normal priority) lets a cut-through way pre-empt the enqueue it replaces.
    """

    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]
    guard: str | None = None
    reads: tuple[tuple[str, str], ...] = ()
    delayed: tuple[tuple[str, str, str], ...] = ()
    priority: int | None = None


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

    @property
    def idle_from(self) -> str:
        """When the queue the leaving packet ``p`` empties becomes idle (an expression of
        the firing, a name or parenthesised): ``now``, when it leaves."""
        return "now"

    def dequeues(self) -> tuple[Dequeue, ...]:
        """The ways a packet leaves (one class: one way)."""
        return (Dequeue(
            inputs=(("fifo", "(h, n, b, e)"), ("buffer", "(h, p)")),
            outputs=(("fifo", f"(h + 1, n - 1, b - p.size, {self.idle_from} "
                              "if n == 1 else e)"),),
        ),)

    def direct(self) -> Dequeue | None:
        """The cut-through way: an arrival finding the queue empty leaves at once (None:
        every packet is queued first)."""
        return Dequeue(inputs=(("arrivals", "p"),), outputs=(),
                       reads=(("fifo", "(h, n, b, e)"),), guard="n == 0",
                       priority=P_ARRIVAL - 1)

    def events(self) -> dict[str, str]:
        """What each arrival-side transition means for the trace: ``enqueue``, ``mark``
        (CE-marked and queued), ``drop`` or ``meter`` (nothing visible)."""
        return {"enqueue": "enqueue", "drop": "drop"}


#: Arrivals are taken before anything else that may happen at the same instant, so that
#: packets a sender emits back to back (at one model time) keep their order.
P_ARRIVAL = P_HIGH
#: RED's second step (enqueue, mark or drop a decided packet) comes before the next arrival.
P_DECIDED = P_HIGH // 2
#: The line takes its next packet before the arrivals of the same instant: in ns-3 and
#: ns-2 the end of a transmission is an event scheduled when the transmission started,
#: and events of one instant run in the order they were scheduled, so at a bottleneck fed
#: by faster links (serialisation here longer than upstream serialisation plus delay) the
#: departure makes room before the arrival is counted against the limit.
P_LINE = P_HIGH // 4


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

    def events(self) -> dict[str, str]:
        return {**super().events(), "mark": "mark"}


def red_decision(avg: float, count: int, old: int, n_queued: float, idle_s: float,
                 u: float, min_th: float, max_th: float, max_p: float, q_weight: float,
                 gentle: bool, wait: bool, ptc: float, ecn: bool, hard_drop: bool,
                 ect: bool) -> tuple[float, int, int, str]:
    """One arrival at a RED queue, as ns-3's ``RedQueueDisc::DoEnqueue`` computes it.

    ``avg``/``count``/``old`` are RED's state, ``n_queued`` the length (in the queue's
    unit) before the arrival, ``idle_s`` how long the queue has been empty (negative: not
    empty), ``u`` a uniform draw in [0, 1), ``ptc`` packets per second the link sends.
    Returns the new state and the verdict ``"accept"``, ``"mark"`` or ``"drop"``. (Written
    as assignments, ``if`` and ``return`` only, so that it is a CPN ML function too.)

    >>> red_decision(0.0, 0, 0, 0, -1.0, 0.5, min_th=5, max_th=15, max_p=0.02,
    ...              q_weight=0.002, gentle=True, wait=True, ptc=1000, ecn=False,
    ...              hard_drop=True, ect=False)
    (0.0, 1, 0, 'accept')
    """
    m = int(ptc * idle_s) if idle_s >= 0 else 0
    avg = avg * (1.0 - q_weight) ** (m + 1) + q_weight * n_queued
    count = count + 1
    if not (avg >= min_th and n_queued > 1):
        return avg, count, 0, "accept"
    forced = (not gentle and avg >= max_th) or (gentle and avg >= 2 * max_th)
    if not forced and old == 0:
        return avg, 1, 1, "accept"
    early = forced or u <= min(red_probability(avg, count, min_th, max_th, max_p, wait), 1.0)
    if not early:
        return avg, count, old, "accept"
    may_mark = ecn and ect and (not forced or not hard_drop)
    return avg, 0, old, "mark" if may_mark else "drop"


def red_probability(avg: float, count: int, min_th: float, max_th: float, max_p: float,
                    wait: bool) -> float:
    """RED's early-drop probability for ``avg`` between the thresholds (gentle above
    ``max_th``), spread by ``count`` packets since the last drop (ns-3 ``ModifyP``).

    >>> red_probability(10.0, 0, 5.0, 15.0, 0.02, False)
    0.01
    """
    if avg >= max_th:
        p = max_p + (1.0 - max_p) * (avg - max_th) / max_th
    else:
        p = max_p * (avg - min_th) / (max_th - min_th)
    p = min(p, 1.0)
    if wait:
        return 0.0 if count * p < 1.0 else (p / (2.0 - count * p) if count * p < 2.0 else 1.0)
    return p / (1.0 - count * p) if count * p < 1.0 else 1.0


@net_function
def red_decide(p: Any, n: int, b: int, e: float, avg: float, count: int, old: int,
                now: float, rng: Any, RED_MIN_TH: float, RED_MAX_TH: float, RED_MAX_P: float,
                RED_WEIGHT: float, RED_GENTLE: bool, RED_WAIT: bool, RED_PTC: float,
                RED_ECN: bool, RED_HARD_DROP: bool, RED_BYTES: bool) -> dict[str, Any]:
    """Code action of ``decide``: RED's arithmetic on the arrival ``p``, one uniform draw."""
    # the length as a real, as red_decision takes it (CPN ML has no implicit int -> real)
    state = red_decision(avg, count, old, float(b if RED_BYTES else n),
                         now - e if n == 0 else -1.0,
                         rng.random(), RED_MIN_TH, RED_MAX_TH, RED_MAX_P, RED_WEIGHT,
                         RED_GENTLE, RED_WAIT, RED_PTC, RED_ECN, RED_HARD_DROP, p.ecn >= ECT)
    return {"state": (state[0], state[1], state[2]), "verdict": state[3]}


@dataclass
class RedQueue(QueueDiscipline):
    """Random Early Detection with ns-3's parameters and algorithm (gentle, wait, ECN).

    An arrival first meets ``decide`` (RED's average and verdict, one uniform draw), then
    ``enqueue``, ``mark`` or ``drop`` takes the decided packet; ``overflow`` drops one
    RED accepted that no longer fits. ``link_rate_bps`` and ``mean_packet_size_bytes``
    set how fast the average decays while the queue is idle.

    The idle period starts when the line has finished the packet that emptied the queue
    (``idle_after_line``, wired links), as in ns-2, whose link asks RED for a packet only
    once it is free (``REDQueue::deque`` marks the queue idle when that finds it empty);
    an arrival while that packet is still on the line decays nothing. A wireless
    station's frame has no end known when it leaves the queue: there the idle period
    starts when the last packet leaves (``idle_after_line`` False).
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
    idle_after_line: bool = True
    kind: str = field(default="red", init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (0 <= self.min_th < self.max_th or (0 <= self.min_th == self.max_th
                                                    and not self.gentle)):
            raise InputError(f"red queue: need 0 <= min_th < max_th (or min_th = max_th, "
                             f"step marking, without gentle), got {self.min_th}, "
                             f"{self.max_th}")
        if not (0 < self.max_p <= 1 and 0 < self.q_weight <= 1):
            raise InputError("red queue: max_p and q_weight must be in (0, 1]")

    def build(self, net: PetriNet) -> None:
        net.declare(RED_MIN_TH=float(self.min_th), RED_MAX_TH=float(self.max_th),
                    RED_MAX_P=float(self.max_p), RED_WEIGHT=float(self.q_weight),
                    RED_GENTLE=self.gentle, RED_WAIT=self.wait,
                    RED_PTC=self.link_rate_bps / (8.0 * self.mean_packet_size_bytes),
                    RED_ECN=self.ecn, RED_HARD_DROP=self.hard_drop,
                    RED_BYTES=self.unit == "bytes")
        super().build(net)

    @property
    def idle_from(self) -> str:
        """When the line has finished ``p`` (the interface net declares ``L2_BYTES`` and
        ``RATE_BPS``: the line's serialisation time), or ``now`` on a wireless station."""
        return "(now + (p.size + L2_BYTES) * 8.0 / RATE_BPS)" if self.idle_after_line else "now"

    def direct(self) -> Dequeue | None:
        # RED has decided (an empty queue always accepts); leaving restarts the idle time
        return Dequeue(inputs=(("decided", "(p, v)"), ("fifo", "(h, n, b, e)")),
                       outputs=(("fifo", f"(h, n, b, {self.idle_from})"),),
                       guard="v == 'accept' and n == 0", priority=P_DECIDED - 1)

    def events(self) -> dict[str, str]:
        return {"decide": "meter", "enqueue": "enqueue", "mark": "mark", "drop": "drop",
                "overflow": "drop"}

    def _arrival_transitions(self, net: PetriNet) -> None:
        net.add_place(Place("red", ProductSet(REAL, INT, INT, name="RedState"),
                            initial=[(0.0, 0, 0)]))
        net.add_place(Place("decided", VERDICT))
        net.add_transition(Transition("decide", action=red_decide,
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


@dataclass
class SmallFirstQueue(QueueDiscipline):
    """Two FIFO classes, small packets (IP size <= ``threshold_bytes``) served first.

    Class 0 (small) and class 1 (large) each have a ``buffer{k}`` and a ``fifo{k}``
    place. ``buffer`` ``"shared"``: an arrival is dropped when the two classes together
    hold ``limit``; ``"split"``: when its own class does. ``transmit1`` serves the large
    class only while the small one is empty (strict priority, no pre-emption).
    """

    threshold_bytes: int = 64
    buffer: str = "shared"
    kind: str = field(default="sgpq", init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.buffer not in ("shared", "split"):
            raise InputError(f"sgpq queue: buffer must be 'shared' or 'split', got "
                             f"{self.buffer!r}")
        if self.threshold_bytes < 1:
            raise InputError(f"sgpq queue: threshold_bytes must be >= 1, got "
                             f"{self.threshold_bytes!r}")

    def _fits(self, k: int) -> str:
        """Guard: the arrival fits in class ``k`` (fifo variables ``n0``, ``b0``...)."""
        if self.buffer == "split":
            return f"n{k} < LIMIT" if self.unit == "packets" else f"b{k} + p.size <= LIMIT"
        return "n0 + n1 < LIMIT" if self.unit == "packets" else "b0 + b1 + p.size <= LIMIT"

    def build(self, net: PetriNet) -> None:
        net.declare(LIMIT=self.limit, SMALL=self.threshold_bytes, **FUNCTIONS)
        net.add_place(Place("arrivals", PACKET, port="in"))
        for k in (0, 1):
            net.add_place(Place(f"buffer{k}", BUFFER))
            net.add_place(Place(f"fifo{k}", FIFO, initial=[(0, 0, 0, 0.0)]))
        classes = ("p.size <= SMALL", "p.size > SMALL")
        for k in (0, 1):
            name = f"enqueue{k}"
            net.add_transition(Transition(name, guard=f"{classes[k]} and {self._fits(k)}",
                                          priority=P_ARRIVAL))
            net.add_input("arrivals", name, "p")
            net.add_input(f"fifo{k}", name, f"(h{k}, n{k}, b{k}, e{k})")
            if self.buffer == "shared":
                net.add_read(f"fifo{1 - k}", name, f"(h{1 - k}, n{1 - k}, b{1 - k}, e{1 - k})")
            net.add_output(f"buffer{k}", name, f"(h{k} + n{k}, p)")
            net.add_output(f"fifo{k}", name, f"(h{k}, n{k} + 1, b{k} + p.size, e{k})")
        net.add_transition(Transition(
            "drop", priority=P_ARRIVAL,
            guard=" or ".join(f"({c} and not ({self._fits(k)}))" for k, c in enumerate(classes))))
        net.add_input("arrivals", "drop", "p")
        for k in (0, 1):
            net.add_read(f"fifo{k}", "drop", f"(h{k}, n{k}, b{k}, e{k})")

    def dequeues(self) -> tuple[Dequeue, ...]:
        def way(k: int) -> Dequeue:
            fifo = f"(h{k}, n{k}, b{k}, e{k})"
            return Dequeue(
                inputs=((f"fifo{k}", fifo), (f"buffer{k}", f"(h{k}, p)")),
                outputs=((f"fifo{k}", f"(h{k} + 1, n{k} - 1, b{k} - p.size, "
                                      f"now if n{k} == 1 else e{k})"),),
                reads=(("fifo0", "(h0, n0, b0, e0)"),) if k else (),
                guard="n0 == 0" if k else None)
        return way(0), way(1)

    def direct(self) -> Dequeue | None:
        return Dequeue(inputs=(("arrivals", "p"),), outputs=(),
                       reads=(("fifo0", "(h0, n0, b0, e0)"), ("fifo1", "(h1, n1, b1, e1)")),
                       guard="n0 == 0 and n1 == 0", priority=P_ARRIVAL - 1)

    def events(self) -> dict[str, str]:
        return {"enqueue0": "enqueue", "enqueue1": "enqueue", "drop": "drop"}


@net_function
def bucket_level(level: float, stamp: float, now: float, rate: float, depth: float) -> float:
    """Bytes of tokens at ``now`` in a bucket that held ``level`` at ``stamp``, filling at
    ``rate`` bytes/s up to ``depth``.

    >>> bucket_level(0.0, 1.0, 1.5, 1000.0, 300.0), bucket_level(100.0, 1.0, 1.125, 1000.0, 300.0)
    (300.0, 225.0)
    """
    return min(depth, level + (now - stamp) * rate)


@net_function
def bucket_wait(level: float, size: int, rate: float) -> float:
    """Seconds until a bucket holding ``level`` bytes has ``size`` (0 if it has them).

    >>> bucket_wait(200.0, 500, 1000.0), bucket_wait(600.0, 500, 1000.0)
    (0.3, 0.0)
    """
    return max(0.0, (size - level) / rate)


def _police(p: Any, level: float, stamp: float, now: float, TB_RATE: float,
            TB_DEPTH: float) -> dict[str, Any]:
    """Code action of ``meter``: refill the bucket; take the packet's bytes if it has them."""
    tokens = bucket_level(level, stamp, now, TB_RATE, TB_DEPTH)
    conform = tokens >= p.size
    return {"conform": conform, "tokens": tokens - p.size if conform else tokens}


@dataclass
class TokenBucketQueue(QueueDiscipline):
    """A token bucket (``rate_bps``, ``depth_bytes``, full at the start) with a FIFO of
    ``limit`` (in ``unit``).

    ``policer``: ``meter`` refills the bucket (arithmetic of a code action) and takes the
    arrival's bytes when it has them; ``police`` drops a non-conforming packet, ``enqueue``
    queues a conforming one (``overflow`` drops it when the FIFO is full: the tokens are
    spent, as in the ns-3 lens's policer). ``shaper`` (ns-3 ``TbfQueueDisc`` without peak
    rate): every packet is queued (``drop`` when full) and the head leaves when the line is
    idle *and* the bucket holds its size. The bucket is a timed token whose timestamp is
    when it will hold the head's size: ``enqueue_head`` (into an empty queue) and the
    transmission that leaves a next head behind time it; with an empty queue it is ready.
    """

    rate_bps: float = 1e6
    depth_bytes: int = 125_000
    mode: str = "shaper"
    limit: int = 1000
    kind: str = field(default="token_bucket", init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in ("policer", "shaper"):
            raise InputError(f"token_bucket queue: mode must be 'policer' or 'shaper', got "
                             f"{self.mode!r}")
        if not self.rate_bps > 0 or not self.depth_bytes > 0:
            raise InputError(f"token_bucket queue: need rate_bps > 0 and depth_bytes > 0, got "
                             f"{self.rate_bps!r}, {self.depth_bytes!r}")

    @property
    def policer(self) -> bool:
        """Whether the bucket polices (drops) rather than shapes (delays)."""
        return self.mode == "policer"

    def build(self, net: PetriNet) -> None:
        net.declare(TB_RATE=self.rate_bps / 8.0, TB_DEPTH=float(self.depth_bytes),
                    bucket_level=bucket_level, bucket_wait=bucket_wait)
        super().build(net)

    def _arrival_transitions(self, net: PetriNet) -> None:
        full = (float(self.depth_bytes), 0.0)
        if self.policer:
            net.add_place(Place("bucket", BUCKET, initial=[full]))
            net.add_place(Place("metered", METERED))
            net.add_transition(Transition("meter", action=_police, priority=P_ARRIVAL,
                                          outputs=("conform", "tokens")))
            net.add_input("arrivals", "meter", "p")
            net.add_input("bucket", "meter", "(level, stamp)")
            net.add_output("bucket", "meter", "(tokens, now)")
            net.add_output("metered", "meter", "(p, conform)")
            _enqueue(net, "enqueue", "metered", "(p, True)", self.fits, priority=P_DECIDED)
            _drop(net, "overflow", "metered", "(p, True)", f"not ({self.fits})",
                  priority=P_DECIDED)
            net.add_transition(Transition("police", priority=P_DECIDED))
            net.add_input("metered", "police", "(p, False)")
            return
        net.add_place(Place("bucket", BUCKET.timed(), initial=[full]))
        refill = "bucket_level(level, stamp, now, TB_RATE, TB_DEPTH)"
        _enqueue(net, "enqueue_head", "arrivals", "p", f"n == 0 and {self.fits}")
        net.add_input("bucket", "enqueue_head", "(level, stamp)")
        net.add_output("bucket", "enqueue_head", f"({refill}, now)",
                       delay=f"bucket_wait({refill}, p.size, TB_RATE)")
        _enqueue(net, "enqueue", "arrivals", "p", f"n > 0 and {self.fits}")
        _drop(net, "drop", "arrivals", "p", f"not ({self.fits})")

    def dequeues(self) -> tuple[Dequeue, ...]:
        if self.policer:
            return super().dequeues()
        (base,) = super().dequeues()
        spent = "bucket_level(level, stamp, now, TB_RATE, TB_DEPTH) - p.size"
        inputs = (*base.inputs, ("bucket", "(level, stamp)"))
        last = Dequeue(inputs=inputs, outputs=(*base.outputs, ("bucket", f"({spent}, now)")),
                       guard="n == 1")
        more = Dequeue(inputs=inputs, outputs=base.outputs, reads=(("buffer", "(h2, q)"),),
                       delayed=(("bucket", f"({spent}, now)",
                                 f"bucket_wait({spent}, q.size, TB_RATE)"),),
                       guard="n > 1 and h2 == h + 1")
        return last, more

    def direct(self) -> Dequeue | None:
        if not self.policer:
            return None
        return Dequeue(inputs=(("metered", "(p, True)"),), outputs=(),
                       reads=(("fifo", "(h, n, b, e)"),), guard="n == 0",
                       priority=P_DECIDED - 1)

    def events(self) -> dict[str, str]:
        if self.policer:
            return {"meter": "meter", "enqueue": "enqueue", "overflow": "drop",
                    "police": "drop"}
        return {"enqueue_head": "enqueue", "enqueue": "enqueue", "drop": "drop"}
