"""One direction of an 802.11 last hop as a sub-net: medium access (DCF), link-layer
retries, frame errors, airtime and the station's energy (study S3's "ACK-less 802.11").

The interface is :func:`~tcpn.models.components.link.interface_net`'s (a queue discipline
feeding a transmitter, routes on ``out0``...) with a radio instead of a wire. Each packet
is sent as a frame of ``size + l2_header_bytes`` bytes (the frame the byte error model
and the energy model count) that fails with ``PER = 1 - (1 - BER) ** frame_bytes`` (byte
error model, the study's formula) or ``rate`` (packet model); on air it is the PLCP
preamble and header (``plcp_s``) and then the packet with 36 bytes of MAC framing
(``MAC_FRAMING_BYTES``) at the data rate, as ns-2 sizes a frame for its error model
(``ch->size()``, PLCP and MAC header counted) apart from the bytes its ``txtime`` sends at
the data rate.
With ``link_retransmissions`` (acknowledged 802.11) a failed frame is sent again, at most
``retry_limit`` more times; without them (ACK-less 802.11) one attempt, no MAC ACK.

Medium access: the distributed coordination function of IEEE Std 802.11 (§10.3 of
802.11-2016; the timing of the 802.11b DSSS PHY by default, §16.4.4), with the rules of
:mod:`~tcpn.models.components.dcf`: each of the hop's two stations (the link's two
directions, ``station`` 0 and 1, sharing the ``medium`` record) counts its own backoff
down, ``b`` uniform on ``0..CW`` slots, CW from ``cw_min`` doubling (``2 CW + 1``, at most
``cw_max``) at every retry, while the medium is idle, starting DIFS (SIFS + 2 slots) after
a frame it decoded or EIFS (``eifs_s``) after one it did not; the counter freezes while
the medium is busy; two counters ending in the same slot send two frames that collide
(neither gets through, no MAC ACK). Every frame is preceded by the PLCP preamble and
header (``plcp_s``, 192 us long preamble at 1 Mbit/s), then its MPDU at the data rate;
an acknowledged attempt that got through is followed by SIFS + the MAC ACK (``mac_ack_s``),
one that failed by the ACK timeout (SIFS + slot + PLCP, §10.3.2.9). After an exchange the
sender draws its next backoff from CWmin ("post-backoff"), so a frame that arrives later
to an idle medium with that counter run out goes at once. What is left out
(docs/validation.md): rate adaptation, RTS/CTS, more than two stations on one medium.
``medium_access=False`` is the earlier model: the attempts of one packet are drawn at once
and each costs its MPDU's serialisation + ``mac_ack_s`` (also when it failed), no preamble, no
DIFS, no backoff.

Places: ``frames`` counts ``(packets sent, packets lost)`` as the wired link's does (what
TCP-L's receiver reports; a packet is lost when all its attempts failed) and ``airtime``
counts ``(attempts, bytes on air, MAC ACKs, busy seconds)``, busy being every attempt's
preamble and frame and its SIFS + MAC ACK or ACK timeout (the medium time less DIFS and
backoff). :func:`station_energy` turns the counters of both directions into the station's
joules: per transmitted and received frame and byte (every attempt is received, corrupted
or not) and per idle second.

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
>>> " ".join(sorted(net.places))
'airtime arrivals buffer contending fifo frames idle medium out0 sending'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.dcf import (
    AIR,
    EPSILON_S,
    air_start,
    backoff_slots,
    dcf_access,
    dcf_arm,
    dcf_due,
    dcf_finish,
    dcf_goes,
    frame_through,
)
from tcpn.models.components.link import ByteErrors, ListErrors, PacketErrors, Transmitter
from tcpn.models.components.packets import FUNCTIONS, PACKET
from tcpn.models.components.queues import QueueDiscipline
from tcpn.petrinets import INT, REAL, UNIT, PetriNet, Place, ProductSet, Transition
from tcpn.petrinets.net_functions import net_function

__all__ = ["AIRTIME", "Energy", "Radio", "attempts", "backoff_slots", "exchange",
           "mean_exchange_s", "medium_place", "station_energy", "wireless_interface_net"]

AIRTIME = ProductSet(INT, INT, INT, REAL, name="Airtime")
#: Size of an 802.11 MAC ACK frame in bytes (frame control, duration, RA, FCS).
MAC_ACK_BYTES = 14
#: Bytes a data frame carries at the data rate besides its IP packet: the 24-byte MAC
#: header of a data frame between two stations (802.11-2016 §9.3.2.1, three addresses, no
#: QoS control), the 8-byte LLC/SNAP header (IEEE 802.2, RFC 1042 encapsulation) and the
#: 4-byte FCS (§9.2.4.8). ns-3.44's MPDU is this (its QoS data frames of the ACK-less hop
#: 2 bytes more); ns-2's ``Mac802_11`` sends 34 (a 30-byte header with four addresses,
#: the FCS, no LLC/SNAP: ``getHdrLen11`` less the PLCP's 24 bytes, which ``txtime`` sends
#: at the PLCP rate, as ``plcp_s`` here).
MAC_FRAMING_BYTES = 24 + 8 + 4


@dataclass(frozen=True)
class Radio:
    """Link-layer behaviour of an 802.11 hop (see the module docstring; the timing
    defaults are IEEE 802.11b's DSSS PHY: slot 20 us, SIFS 10 us, CW 31..1023, long PLCP
    preamble and header 192 us, EIFS 364 us = SIFS + an ACK at the 1 Mbit/s basic rate
    (192 + 112 us) + DIFS, 802.11-2016 §10.3.2.3.7)."""

    link_retransmissions: bool = True
    retry_limit: int = 7
    mac_ack_s: float = 314e-6
    medium_access: bool = True
    slot_s: float = 20e-6
    sifs_s: float = 10e-6
    plcp_s: float = 192e-6
    cw_min: int = 31
    cw_max: int = 1023
    eifs_s: float = 364e-6

    def __post_init__(self) -> None:
        if self.retry_limit < 0 or self.mac_ack_s < 0:
            raise InputError(f"wireless link: need retry_limit >= 0 and mac_ack_s >= 0, got "
                             f"{self.retry_limit}, {self.mac_ack_s}")
        if min(self.slot_s, self.sifs_s, self.plcp_s, self.eifs_s) < 0 or not \
                0 <= self.cw_min <= self.cw_max:
            raise InputError("wireless link: need slot_s, sifs_s, plcp_s, eifs_s >= 0 and 0 <= "
                             f"cw_min <= cw_max, got {self.slot_s}, {self.sifs_s}, "
                             f"{self.plcp_s}, {self.eifs_s}, {self.cw_min}, {self.cw_max}")

    @property
    def difs_s(self) -> float:
        """DIFS = SIFS + 2 slots (802.11-2016 §10.3.7): 50 us on 802.11b."""
        return self.sifs_s + 2 * self.slot_s

    @property
    def ack_timeout_s(self) -> float:
        """How long a sender waits for a MAC ACK that does not come: SIFS + slot + the PLCP
        preamble and header (802.11-2016 §10.3.2.9): 222 us on 802.11b."""
        return self.sifs_s + self.slot_s + self.plcp_s


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


def exchange(air_s: float, tries: int, lost: bool, ack_s: float) -> tuple[float, float]:
    """Without medium access, one packet's exchange: ``(held, delivered)``, seconds from
    its start. Every attempt is its frame (``air_s``) and ``ack_s``, also a failed one;
    the frame that got through ends ``ack_s`` before the exchange (0 if none did).

    >>> held, delivered = exchange(1e-3, 2, False, 3e-4)
    >>> round(held * 1e6, 3), round(delivered * 1e6, 3), exchange(1e-3, 2, True, 3e-4)[1]
    (2600.0, 2300.0, 0.0)
    """
    held = tries * (air_s + ack_s)
    return held, 0.0 if lost else held - ack_s


def mean_exchange_s(frame_bytes: int, rate_bps: float, radio: Radio) -> float:
    """The mean medium time of a frame that gets through at its first attempt: DIFS +
    ``cw_min / 2`` slots of backoff + preamble + frame + SIFS and MAC ACK (without the
    ACK when ACK-less): 2013.6 us for 1578 bytes at 11 Mbit/s on 802.11b.

    >>> round(mean_exchange_s(1578, 11e6, Radio()) * 1e6, 1)
    2013.6
    """
    ack_s = radio.mac_ack_s if radio.link_retransmissions else 0.0
    return (radio.difs_s + radio.slot_s * radio.cw_min / 2 + radio.plcp_s
            + frame_bytes * 8 / rate_bps + ack_s)


@net_function
def _draw_attempts(p: Any, ERROR_RATE: float, BYTE_ERRORS: bool, L2_BYTES: int,
                   MAC_BYTES: int, TRIES: int, RATE_BPS: float, ACK_S: float,
                   rng: Any) -> dict[str, Any]:
    """Code action of ``transmit`` without medium access: the attempts this packet takes
    (``TRIES`` draws) and its exchange."""
    per = 1.0 - (1.0 - ERROR_RATE) ** (p.size + L2_BYTES) if BYTE_ERRORS else ERROR_RATE
    tries, lost = attempts(per, TRIES, rng.random(TRIES).tolist())
    held, delivered = exchange((p.size + MAC_BYTES) * 8.0 / RATE_BPS, tries, lost, ACK_S)
    return {"tries": tries, "lost": lost, "held": held, "delivered": delivered,
            "busy": held}


@net_function
def _arm(m: Any, S: int, SLOT_S: float, CW_MIN: int, CW_MAX: int, now: float,
         rng: Any) -> dict[str, Any]:
    """Code action of ``transmit`` with medium access: when the head packet's first
    attempt is due (:func:`~tcpn.models.components.dcf.dcf_arm`)."""
    m2 = dcf_arm(m, S, now, float(rng.random()), CW_MIN, CW_MAX)
    due = dcf_due(m2, S, now, SLOT_S)
    return {"m2": m2, "due": due, "wait": due - now}


@net_function
def _access(m: Any, e: int, p: Any, S: int, SLOT_S: float, PLCP_S: float, MAC_BYTES: int,
            RATE_BPS: float, now: float) -> dict[str, Any]:
    """Code action of ``access``: the attempt goes (alone or into a collision) or waits
    for its frozen counter (:func:`~tcpn.models.components.dcf.dcf_access`)."""
    air = PLCP_S + (p.size + MAC_BYTES) * 8.0 / RATE_BPS
    due = dcf_due(m, S, now, SLOT_S)
    return {"m2": dcf_access(m, S, e, now, air, SLOT_S), "goes": dcf_goes(m, S, e),
            "due2": due, "wait": due - now, "air": air}


@net_function
def _finish(m: Any, p: Any, k: int, S: int, ERROR_RATE: float, BYTE_ERRORS: bool,
            L2_BYTES: int, MAC_BYTES: int, TRIES: int, LL_ACKS: bool, ACK_S: float,
            TIMEOUT_S: float,
            DIFS_S: float, EIFS_S: float, SLOT_S: float, PLCP_S: float, RATE_BPS: float,
            CW_MIN: int, CW_MAX: int, now: float, rng: Any) -> dict[str, Any]:
    """Code action of ``finish``: the attempt's frame error (one draw) and its outcome on
    the medium (:func:`~tcpn.models.components.dcf.dcf_finish`, one draw for the next
    backoff)."""
    per = 1.0 - (1.0 - ERROR_RATE) ** (p.size + L2_BYTES) if BYTE_ERRORS else ERROR_RATE
    u = rng.random(2).tolist()
    delivered = frame_through(m, S, u[0] >= per)
    done = delivered or k + 1 >= TRIES or not LL_ACKS
    m2 = dcf_finish(m, S, k, u[0] >= per, done, LL_ACKS, now, u[1], ACK_S, TIMEOUT_S,
                    DIFS_S, EIFS_S, CW_MIN, CW_MAX)
    due = dcf_due(m2, S, now, SLOT_S)
    air = PLCP_S + (p.size + MAC_BYTES) * 8.0 / RATE_BPS
    return {"m2": m2, "delivered": delivered, "done": done, "due": due, "wait": due - now,
            "busy": air + (ACK_S if delivered else TIMEOUT_S) if LL_ACKS else air}


def medium_place(radio: Radio, name: str = "medium", port: str | None = None) -> Place:
    """The place of the air a hop's two directions share (its ``medium`` port): the DCF's
    record (:data:`~tcpn.models.components.dcf.AIR`) with medium access, else a timed
    ``()`` held by each exchange."""
    if radio.medium_access:
        return Place(name, AIR, initial=[air_start()], port=port)
    return Place(name, UNIT.timed(), initial=[()], port=port)


def wireless_interface_net(queue: QueueDiscipline, link: Transmitter, radio: Radio,
                           routes: Sequence[str], name: str = "wireless",
                           station: int = 0) -> PetriNet:
    """The module net of one radio interface (ports ``arrivals``, ``out0``... and
    ``medium``, the air the link's two directions share: fuse both directions' ``medium``
    with one :func:`medium_place`); ``station`` (0 or 1) is this direction's sender's
    index in the medium's record."""
    if not routes:
        raise InputError(f"{name}: an interface needs at least one route")
    if station not in (0, 1):
        raise InputError(f"{name}: station must be 0 or 1 (a hop has two), got {station}")
    errors = link.errors
    if isinstance(errors, ListErrors):
        raise InputError(f"{name}: a wireless link takes a rate error model (byte or packet), "
                         "not a list")
    acked, dcf = radio.link_retransmissions, radio.medium_access
    ack_s = float(radio.mac_ack_s) if acked else 0.0
    net = PetriNet(name)
    net.declare(RATE_BPS=float(link.rate_bps), DELAY_S=float(link.delay_s),
                L2_BYTES=int(link.l2_header_bytes), MAC_BYTES=MAC_FRAMING_BYTES,
                ERROR_RATE=float(errors.rate) if isinstance(errors, ByteErrors | PacketErrors)
                else 0.0, BYTE_ERRORS=isinstance(errors, ByteErrors),
                TRIES=1 + radio.retry_limit if acked else 1, ACK_S=ack_s, LL_ACKS=acked,
                **FUNCTIONS)
    if dcf:
        net.declare(S=station, TIMEOUT_S=radio.ack_timeout_s if acked else 0.0,
                    PLCP_S=radio.plcp_s, DIFS_S=radio.difs_s, SLOT_S=radio.slot_s,
                    EIFS_S=float(radio.eifs_s), CW_MIN=radio.cw_min, CW_MAX=radio.cw_max)
    queue.build(net)
    net.add_place(Place("idle", UNIT.timed(), initial=[()]))
    net.add_place(medium_place(radio, port="io"))
    net.add_place(Place("frames", ProductSet(INT, INT, name="Frames"), initial=[(0, 0)]))
    net.add_place(Place("airtime", AIRTIME, initial=[(0, 0, 0, 0.0)]))
    for i in range(len(routes)):
        net.add_place(Place(f"out{i}", PACKET, port="out"))
    if dcf:
        _contention(net, queue, routes)
    else:
        _exchanges(net, queue, routes)
    return net


def _contention(net: PetriNet, queue: QueueDiscipline, routes: Sequence[str]) -> None:
    """With medium access: ``transmit`` takes the head packet when the station is free and
    no frame is on the air and puts it on ``contending``, due when the station's counter
    reaches zero; ``access`` sends it then (or, another frame having gone first, puts it
    back due at its frozen counter's new end); ``finish``, at the end of the frame,
    delivers it, retries it (back on ``contending``) or gives it up, and frees the
    station."""
    net.add_place(Place("contending", ProductSet(PACKET, INT, INT, REAL, name="Contending",
                                                 is_timed=True)))
    net.add_place(Place("sending", ProductSet(PACKET, INT, name="Sending", is_timed=True)))
    ways = queue.dequeues()
    for k, way in enumerate(ways):
        tname = "transmit" if len(ways) == 1 else f"transmit{k}"
        guard = "m.on_air == 0" if way.guard is None else f"({way.guard}) and m.on_air == 0"
        net.add_transition(Transition(tname, guard=guard, action=_arm,
                                      outputs=("m2", "due", "wait")))
        for place, inscription in way.inputs:
            net.add_input(place, tname, inscription)
        for place, inscription in way.reads:  # the small-packets class a large one waits on
            net.add_read(place, tname, inscription)
        net.add_input("idle", tname, "()")
        net.add_input("medium", tname, "m")
        for place, inscription in way.outputs:
            net.add_output(place, tname, inscription)
        for place, inscription, delay in way.delayed:  # the shaper's bucket
            net.add_output(place, tname, inscription, delay=delay)
        net.add_output("medium", tname, "m2")
        net.add_output("contending", tname, "(p, 0, m2.epoch, due)", delay="wait")
    net.add_transition(Transition(
        "access", guard=f"m.on_air == 0 or (e + 1 == m.epoch and abs(due - m.start_s) < "
        f"{EPSILON_S!r})", action=_access, outputs=("m2", "goes", "due2", "wait", "air")))
    net.add_input("contending", "access", "(p, k, e, due)")
    net.add_input("medium", "access", "m")
    net.add_output("medium", "access", "m2")
    net.add_output("sending", "access", "(p, k)", when="goes", delay="air")
    net.add_output("contending", "access", "(p, k, m2.epoch, due2)", when="not goes",
                   delay="wait")
    net.add_transition(Transition("finish", action=_finish,
                                  outputs=("m2", "delivered", "done", "due", "wait", "busy")))
    net.add_input("sending", "finish", "(p, k)")
    net.add_input("medium", "finish", "m")
    net.add_output("medium", "finish", "m2")
    net.add_output("idle", "finish", "()", when="done")
    net.add_output("contending", "finish", "(p, k + 1, m2.epoch, due)", when="not done",
                   delay="wait")
    net.add_input("frames", "finish", "(sent, failed)")
    net.add_output("frames", "finish", "(sent + (1 if done else 0), "
                   "failed + (1 if done and not delivered else 0))")
    net.add_input("airtime", "finish", "(tries_n, on_air, acks, busy_s)")
    net.add_output("airtime", "finish",
                   "(tries_n + 1, on_air + (p.size + L2_BYTES), "
                   "acks + (1 if LL_ACKS and delivered else 0), busy_s + busy)")
    for i, condition in enumerate(routes):
        when = "delivered" if condition == "True" else f"({condition}) and delivered"
        net.add_output(f"out{i}", "finish", "p", when=when, delay="DELAY_S")


def _exchanges(net: PetriNet, queue: QueueDiscipline, routes: Sequence[str]) -> None:
    """Without medium access: ``transmit`` draws all attempts of the head packet at once
    and holds the station and the medium for the whole exchange."""
    ways = queue.dequeues()
    frame = "(p.size + L2_BYTES)"
    for k, way in enumerate(ways):
        tname = "transmit" if len(ways) == 1 else f"transmit{k}"
        net.add_transition(Transition(tname, guard=way.guard, action=_draw_attempts,
                                      outputs=("tries", "lost", "held", "delivered", "busy")))
        for place, inscription in way.inputs:
            net.add_input(place, tname, inscription)
        for place, inscription in way.reads:  # the small-packets class a large one waits on
            net.add_read(place, tname, inscription)
        net.add_input("idle", tname, "()")
        net.add_input("medium", tname, "()")
        for place, inscription in way.outputs:
            net.add_output(place, tname, inscription)
        for place, inscription, delay in way.delayed:  # the shaper's bucket
            net.add_output(place, tname, inscription, delay=delay)
        net.add_output("idle", tname, "()", delay="held")
        net.add_output("medium", tname, "()", delay="held")
        net.add_input("frames", tname, "(sent, failed)")
        net.add_output("frames", tname, "(sent + 1, failed + (1 if lost else 0))")
        net.add_input("airtime", tname, "(tries_n, on_air, acks, busy_s)")
        net.add_output("airtime", tname,
                       f"(tries_n + tries, on_air + tries * {frame}, "
                       f"acks + (1 if LL_ACKS and not lost else 0), busy_s + busy)")
        for i, condition in enumerate(routes):
            when = "not lost" if condition == "True" else f"({condition}) and not lost"
            net.add_output(f"out{i}", tname, "p", when=when, delay="delivered + DELAY_S")


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
