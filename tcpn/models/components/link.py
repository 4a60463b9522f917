"""One direction of a point-to-point link as a sub-net: queue, transmitter, wire, errors.

The transmitter takes the head of the queue when it is idle (the ``idle`` token is ready),
stays busy for the serialisation time ``(size + l2_header_bytes) * 8 / rate_bps`` and puts
the packet on the far end's place after that plus the propagation delay ``delay_s``. The far
end is chosen by routing conditions, one output port ``out0``, ``out1``... per condition
(the composer fuses each with the next hop's arrival place). Packets stay in order: the
wire is FIFO because every packet of a direction has the same propagation delay.

Error models (decided at transmission, as ns-3 decides at reception; the lost packet still
occupies the link): ``PacketErrors`` (each packet lost with probability ``rate``),
``ByteErrors`` (``PER = 1 - (1 - BER) ** size``, ``size`` the IP size), ``ListErrors``
(the packets with these numbers, counting every packet that crosses from 0, as the
scenario schema and the ns-3 lens number them). With an error model the place ``frames`` counts
``(sent, failed)`` frames (TCP-L reads it).

>>> from tcpn.models.components.queues import DropTailQueue
>>> net = interface_net(DropTailQueue(limit=10), Transmitter(rate_bps=8e6, delay_s=0.01),
...                     routes=["True"])
>>> len(net.places), len(net.transitions)
(5, 4)
>>> interface_events(DropTailQueue(limit=10), net)["direct"]
'direct'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.packets import FUNCTIONS, PACKET
from tcpn.models.components.queues import P_LINE, Dequeue, QueueDiscipline
from tcpn.petrinets import INT, UNIT, PetriNet, Place, ProductSet, Transition

__all__ = ["ByteErrors", "ErrorModel", "ListErrors", "PacketErrors", "Transmitter",
           "interface_events", "interface_net"]


@dataclass(frozen=True)
class PacketErrors:
    """Each packet is lost with probability ``rate``."""

    rate: float

    @staticmethod
    def draw_loss(p: Any, ERROR_RATE: float, rng: Any) -> dict[str, Any]:
        """Code action: one Bernoulli draw with probability ``ERROR_RATE``."""
        return {"lost": bool(rng.random() < ERROR_RATE)}


@dataclass(frozen=True)
class ByteErrors:
    """Each byte is corrupt with probability ``rate``: ``PER = 1 - (1 - rate) ** size``."""

    rate: float

    @staticmethod
    def draw_loss(p: Any, ERROR_RATE: float, rng: Any) -> dict[str, Any]:
        """Code action: one Bernoulli draw with ``PER = 1 - (1 - ERROR_RATE) ** p.size``."""
        return {"lost": bool(rng.random() < 1.0 - (1.0 - ERROR_RATE) ** p.size)}


@dataclass(frozen=True)
class ListErrors:
    """The packets numbered ``packets`` (0 = the first packet to cross) are lost."""

    packets: tuple[int, ...]


ErrorModel = PacketErrors | ByteErrors | ListErrors


@dataclass(frozen=True)
class Transmitter:
    """Rate, propagation delay, layer-2 header and error model of one link direction."""

    rate_bps: float
    delay_s: float
    l2_header_bytes: int = 2
    errors: ErrorModel | None = field(default=None)

    def __post_init__(self) -> None:
        if not self.rate_bps > 0:
            raise InputError(f"link: rate_bps must be > 0, got {self.rate_bps!r}")
        if not self.delay_s >= 0:
            raise InputError(f"link: delay_s must be >= 0, got {self.delay_s!r}")
        errors = self.errors
        if isinstance(errors, PacketErrors | ByteErrors) and not 0.0 <= errors.rate <= 1.0:
            raise InputError(f"link: error rate must be in [0, 1], got {errors.rate!r}")


def interface_net(queue: QueueDiscipline, link: Transmitter, routes: Sequence[str],
                  name: str = "interface") -> PetriNet:
    """The module net of one output interface: ``queue`` feeding ``link``.

    ``routes[i]`` is a condition over the packet ``p`` saying it goes to port ``out{i}``.
    Ports: ``arrivals`` (in) and ``out0``... (out).
    """
    if not routes:
        raise InputError(f"{name}: an interface needs at least one route")
    net = PetriNet(name)
    net.declare(RATE_BPS=float(link.rate_bps), DELAY_S=float(link.delay_s),
                L2_BYTES=int(link.l2_header_bytes), **FUNCTIONS)
    queue.build(net)
    net.add_place(Place("idle", UNIT.timed(), initial=[()]))
    for i in range(len(routes)):
        net.add_place(Place(f"out{i}", PACKET, port="out"))
    errors = link.errors
    if errors is not None:
        net.add_place(Place("frames", ProductSet(INT, INT, name="Frames"), initial=[(0, 0)]))
    if isinstance(errors, PacketErrors | ByteErrors):
        net.declare(ERROR_RATE=float(errors.rate))
    if isinstance(errors, ListErrors):
        net.declare(LOSSES=frozenset(errors.packets))
    ways = queue.dequeues()
    named: list[tuple[str, Dequeue]] = [
        ("transmit" if len(ways) == 1 else f"transmit{k}", way) for k, way in enumerate(ways)]
    cut_through = queue.direct()
    if cut_through is not None:
        named.append(("direct", cut_through))
    for tname, way in named:
        _transmission(net, tname, way, link, routes)
    return net


def _transmission(net: PetriNet, tname: str, way: Dequeue, link: Transmitter,
                  routes: Sequence[str]) -> None:
    """The transition that puts one packet (``p``, taken by ``way``) on the line."""
    errors = link.errors
    action: Any = None
    outputs: tuple[str, ...] = ()
    if isinstance(errors, PacketErrors | ByteErrors):
        action, outputs = errors.draw_loss, ("lost",)
    net.add_transition(Transition(tname, guard=way.guard, action=action, outputs=outputs,
                                  priority=P_LINE if way.priority is None else way.priority))
    for place, inscription in way.inputs:
        net.add_input(place, tname, inscription)
    for place, inscription in way.reads:
        net.add_read(place, tname, inscription)
    net.add_input("idle", tname, "()")
    for place, inscription in way.outputs:
        net.add_output(place, tname, inscription)
    for place, inscription, delay in way.delayed:
        net.add_output(place, tname, inscription, delay=delay)
    serialise = "(p.size + L2_BYTES) * 8.0 / RATE_BPS"
    net.add_output("idle", tname, "()", delay=serialise)
    delivered = None
    if errors is not None:
        net.add_input("frames", tname, "(sent, failed)")
        lost = "lost" if action is not None else "sent in LOSSES"
        net.add_output("frames", tname, f"(sent + 1, failed + (1 if {lost} else 0))")
        delivered = f"not ({lost})"
    for i, condition in enumerate(routes):
        when = condition if delivered is None else f"({condition}) and {delivered}"
        net.add_output(f"out{i}", tname, "p", when=None if when == "True" else when,
                       delay=f"{serialise} + DELAY_S")


def interface_events(queue: QueueDiscipline, net: PetriNet) -> dict[str, str]:
    """What each transition of the interface module ``net`` (built by
    :func:`interface_net` for ``queue``) means for the trace: the queue's arrival events
    (:meth:`QueueDiscipline.events`), ``transmit`` (leaves the queue), ``direct``
    (cut through an empty queue: enqueued and sent at once) and, on a radio interface with
    medium access, ``finish`` (a frame's attempt ends: the packet may be lost there)."""
    events = dict(queue.events())
    for name in net.transitions:
        if name.startswith("transmit"):
            events[name] = "transmit"
        elif name == "direct":
            events[name] = "direct"
        elif name == "finish":
            events[name] = "finish"
    return events
