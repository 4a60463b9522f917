"""One direction of an 802.11 last hop as a sub-net: link-layer retries, frame errors, airtime
and the station's energy (study S3's "ACK-less 802.11").

The interface is :func:`~tcpn.models.components.link.interface_net`'s (a queue discipline
feeding a transmitter, routes on ``out0``...) with a radio instead of a wire. Each packet
is sent as a frame of ``size + l2_header_bytes`` bytes that fails with ``PER = 1 - (1 -
BER) ** frame_bytes`` (byte error model, the study's formula) or ``rate`` (packet model).
With ``link_retransmissions`` (acknowledged 802.11) a failed frame is sent again, at most
``retry_limit`` more times, and every attempt occupies the medium for its serialisation
plus ``mac_ack_s`` (SIFS + the MAC ACK, or the ACK timeout when it failed); without them
(ACK-less 802.11) one attempt, no MAC ACK. The attempts of one packet are drawn at once
(the head of the queue holds the medium during its retries); contention, back-off and
rate adaptation are not modelled.

Places: ``frames`` counts ``(packets sent, packets lost)`` as the wired link's does (what
TCP-L's receiver reports; a packet is lost when all its attempts failed) and ``airtime``
counts ``(attempts, bytes on air, MAC ACKs, busy seconds)``. :func:`station_energy` turns
the counters of both directions into the station's joules: per transmitted and received
frame and byte (every attempt is received, corrupted or not) and per idle second.

Energy defaults: L. M. Feeney and M. Nilsson, "Investigating the energy consumption of a
wireless network interface in an ad hoc networking environment", IEEE INFOCOM 2001
(Lucent WaveLAN IEEE 802.11, point-to-point traffic): send ``1.9 uJ/byte + 420 uJ``,
receive ``0.42 uJ/byte + 330 uJ``, idle ``0.8 W`` (the linear model ``m * size + b`` as
tabulated by T. Kunz, Carleton University,
http://kunz-pc.sce.carleton.ca/talks/Energy_files/slide0041.htm). ``mac_ack_s`` default
``314 us``: SIFS 10 us + a 14-byte ACK at the 1 Mbit/s basic rate after a 192 us long PLCP
preamble (IEEE 802.11b).

>>> from tcpn.models.components.queues import DropTailQueue
>>> from tcpn.models.components.link import ByteErrors, Transmitter
>>> net = wireless_interface_net(DropTailQueue(limit=10),
...                              Transmitter(11e6, 1e-6, 78, ByteErrors(1e-4)), Radio(),
...                              routes=["True"])
>>> sorted(net.places)
['airtime', 'arrivals', 'buffer', 'fifo', 'frames', 'idle', 'out0']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.link import ByteErrors, ListErrors, PacketErrors, Transmitter
from tcpn.models.components.packets import FUNCTIONS, PACKET
from tcpn.models.components.queues import QueueDiscipline
from tcpn.petrinets import INT, REAL, UNIT, PetriNet, Place, ProductSet, Transition
from tcpn.petrinets.net_functions import net_function

__all__ = ["AIRTIME", "Energy", "Radio", "attempts", "station_energy", "wireless_interface_net"]

AIRTIME = ProductSet(INT, INT, INT, REAL, name="Airtime")
#: Size of an 802.11 MAC ACK frame in bytes (frame control, duration, RA, FCS).
MAC_ACK_BYTES = 14


@dataclass(frozen=True)
class Radio:
    """Link-layer behaviour of an 802.11 hop (see the module docstring for the defaults)."""

    link_retransmissions: bool = True
    retry_limit: int = 7
    mac_ack_s: float = 314e-6

    def __post_init__(self) -> None:
        if self.retry_limit < 0 or self.mac_ack_s < 0:
            raise InputError(f"wireless link: need retry_limit >= 0 and mac_ack_s >= 0, got "
                             f"{self.retry_limit}, {self.mac_ack_s}")


@dataclass(frozen=True)
class Energy:
    """Joules per transmitted/received frame and byte, and watts while idle."""

    tx_frame_j: float = 420e-6
    tx_byte_j: float = 1.9e-6
    rx_frame_j: float = 330e-6
    rx_byte_j: float = 0.42e-6
    idle_w: float = 0.8


def attempts(per: float, tries_allowed: int, u: Sequence[float]) -> tuple[int, bool]:
    """Attempts used and whether the packet is lost, given one uniform draw per attempt.

    >>> attempts(0.5, 3, [0.1, 0.7, 0.2]), attempts(0.5, 2, [0.1, 0.3])
    ((2, False), (2, True))
    """
    for k in range(tries_allowed):
        if u[k] >= per:
            return k + 1, False
    return tries_allowed, True


@net_function
def _draw_attempts(p: Any, ERROR_RATE: float, BYTE_ERRORS: bool, L2_BYTES: int, TRIES: int,
                   rng: Any) -> dict[str, Any]:
    """Code action of ``transmit``: the attempts this packet takes."""
    per = 1.0 - (1.0 - ERROR_RATE) ** (p.size + L2_BYTES) if BYTE_ERRORS else ERROR_RATE
    tries, lost = attempts(per, TRIES, rng.random(TRIES).tolist())
    return {"tries": tries, "lost": lost}


def wireless_interface_net(queue: QueueDiscipline, link: Transmitter, radio: Radio,
                           routes: Sequence[str], name: str = "wireless") -> PetriNet:
    """The module net of one radio interface (ports ``arrivals`` and ``out0``...)."""
    if not routes:
        raise InputError(f"{name}: an interface needs at least one route")
    errors = link.errors
    if isinstance(errors, ListErrors):
        raise InputError(f"{name}: a wireless link takes a rate error model (byte or packet), "
                         "not a list")
    net = PetriNet(name)
    net.declare(RATE_BPS=float(link.rate_bps), DELAY_S=float(link.delay_s),
                L2_BYTES=int(link.l2_header_bytes),
                ERROR_RATE=float(errors.rate) if isinstance(errors, ByteErrors | PacketErrors)
                else 0.0, BYTE_ERRORS=isinstance(errors, ByteErrors),
                TRIES=1 + radio.retry_limit if radio.link_retransmissions else 1,
                ACK_S=float(radio.mac_ack_s) if radio.link_retransmissions else 0.0,
                LL_ACKS=radio.link_retransmissions, **FUNCTIONS)
    queue.build(net)
    net.add_place(Place("idle", UNIT.timed(), initial=[()]))
    net.add_place(Place("frames", ProductSet(INT, INT, name="Frames"), initial=[(0, 0)]))
    net.add_place(Place("airtime", AIRTIME, initial=[(0, 0, 0, 0.0)]))
    for i in range(len(routes)):
        net.add_place(Place(f"out{i}", PACKET, port="out"))
    ways = queue.dequeues()
    frame = "(p.size + L2_BYTES)"
    attempt = f"({frame} * 8.0 / RATE_BPS + ACK_S)"
    for k, way in enumerate(ways):
        tname = "transmit" if len(ways) == 1 else f"transmit{k}"
        net.add_transition(Transition(tname, guard=way.guard, action=_draw_attempts,
                                      outputs=("tries", "lost")))
        for place, inscription in way.inputs:
            net.add_input(place, tname, inscription)
        for place, inscription in way.reads:  # the small-packets class a large one waits on
            net.add_read(place, tname, inscription)
        net.add_input("idle", tname, "()")
        for place, inscription in way.outputs:
            net.add_output(place, tname, inscription)
        for place, inscription, delay in way.delayed:  # the shaper's bucket
            net.add_output(place, tname, inscription, delay=delay)
        net.add_output("idle", tname, "()", delay=f"tries * {attempt}")
        net.add_input("frames", tname, "(sent, failed)")
        net.add_output("frames", tname, "(sent + 1, failed + (1 if lost else 0))")
        net.add_input("airtime", tname, "(tries_n, on_air, acks, busy)")
        net.add_output("airtime", tname,
                       f"(tries_n + tries, on_air + tries * {frame}, "
                       f"acks + (1 if LL_ACKS and not lost else 0), busy + tries * {attempt})")
        for i, condition in enumerate(routes):
            when = "not lost" if condition == "True" else f"({condition}) and not lost"
            net.add_output(f"out{i}", tname, "p", when=when,
                           delay=f"tries * {attempt} - ACK_S + DELAY_S")
    return net


def station_energy(to_station: tuple[int, int, int, float],
                   from_station: tuple[int, int, int, float], horizon_s: float,
                   energy: Energy) -> dict[str, float]:
    """The station's energy from the ``airtime`` counters of both directions.

    It receives every attempt towards it and sends a MAC ACK for each delivered one; it
    transmits every attempt from it and receives the MAC ACKs. Idle is the rest of the
    horizon (the busy times include the ACKs).

    >>> e = station_energy((10, 15000, 10, 0.011), (10, 600, 10, 0.001), 1.0, Energy())
    >>> round(e["energy_j"], 6), round(e["idle_s"], 3)
    (0.813165, 0.988)
    """
    rx_frames, rx_bytes, acks_sent, rx_busy = to_station
    tx_frames, tx_bytes, acks_received, tx_busy = from_station
    tx_j = (energy.tx_frame_j * (tx_frames + acks_sent)
            + energy.tx_byte_j * (tx_bytes + MAC_ACK_BYTES * acks_sent))
    rx_j = (energy.rx_frame_j * (rx_frames + acks_received)
            + energy.rx_byte_j * (rx_bytes + MAC_ACK_BYTES * acks_received))
    idle_s = max(0.0, horizon_s - rx_busy - tx_busy)
    return {"tx_j": tx_j, "rx_j": rx_j, "idle_j": energy.idle_w * idle_s, "idle_s": idle_s,
            "energy_j": tx_j + rx_j + energy.idle_w * idle_s}
