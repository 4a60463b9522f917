"""The TCP receiver as a sub-net: cumulative and delayed ACKs, reordering, SACK, echoes.

State (one token on ``rcv``, a ``Rcv`` record): ``nxt`` the next segment expected,
``ooo`` the out-of-order segments buffered (sorted ``(start, end)`` runs), ``pending``
in-order segments not yet acknowledged, ``echo``/``echo_retx`` the timestamp (and
retransmission flag) the next ACK echoes (RFC 7323: of the earliest unacknowledged
segment, or of the segment that filled a gap), ``ece`` whether ACKs carry ECN-Echo
(from a CE mark until a CWR, RFC 3168; with ``exact_ecn_echo``, DCTCP's CE state, RFC
8257 3.2: the last segment's mark, and ``ce_flip`` ACKs at once when it changes with an
ACK pending).
The delayed-ACK timer is a timed token on ``delack``; it is marked exactly when
``pending > 0``.

Transitions: ``hold`` (in order, ACK delayed), ``ack_now`` (in order and the
``delack_count``-th segment or filling a gap: ACK at once, RFC 5681), ``out_of_order``
(buffer and send a duplicate ACK with SACK blocks), ``duplicate`` (already received: ACK
at once), ``delack_timeout``. Pure ACKs are ``ack_bytes`` long (+ 8 bytes per SACK block
and 2 for the option when SACK blocks are present).

With ``handshake``, ``syn`` answers every SYN (a retransmitted one too) with a SYN-ACK
(``syn_bytes`` long, echoing the SYN's timestamp and retransmission flag),
``established`` takes the handshake's ACK, and the first data segment is acknowledged at
once, as ns-3 does (its delayed-ACK counter starts full when the connection is
established).

>>> net = receiver_net(ReceiverConfig(flow=0, src=0))
>>> sorted(net.transitions)
['ack_now', 'delack_timeout', 'duplicate', 'hold', 'out_of_order']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.packets import (
    ACK_SEQ,
    FUNCTIONS,
    PACKET,
    SYN_ACK_SEQ,
    SYN_SEQ,
    add_segment,
    advance,
    covers,
    runs_above,
)
from tcpn.petrinets import (
    BOOL,
    CLOCK,
    INT,
    UNIT,
    IntSet,
    ListSet,
    PetriNet,
    Place,
    ProductSet,
    RecordSet,
)
from tcpn.petrinets import Transition as T
from tcpn.petrinets.net_functions import net_function

__all__ = ["RCV", "ReceiverConfig", "receiver_net"]

RCV = RecordSet("Rcv", nxt=IntSet(0), ooo=ListSet(ProductSet(INT, INT), name="Runs"),
                pending=IntSet(0), echo=CLOCK, echo_retx=BOOL, ece=BOOL)
Rcv: Any = RCV.record_type


@dataclass(frozen=True)
class ReceiverConfig:
    """Parameters of one receiver; ``flow`` numbers the connection, ``src`` is the node
    index of its sender (where ACKs go). Its timestamp clock reads ``(1 + clock_skew) *
    now + clock_offset_s``."""

    flow: int
    src: int
    ack_bytes: int = 40
    delack_count: int = 2
    delack_timeout_s: float = 0.2
    sack: bool = False
    ecn: bool = False
    clock_offset_s: float = 0.0
    clock_skew: float = 0.0
    handshake: bool = False
    syn_bytes: int = 40
    exact_ecn_echo: bool = False

    def __post_init__(self) -> None:
        if not self.clock_skew > -1.0:
            raise InputError(f"receiver of flow {self.flow}: clock_skew {self.clock_skew} makes "
                             "its clock (1 + skew) * t + offset run backwards; need > -1")
        if self.delack_count < 1:
            raise InputError(f"receiver of flow {self.flow}: delack_count must be >= 1")
        if self.delack_timeout_s < 0:
            raise InputError(f"receiver of flow {self.flow}: delack_timeout_s must be >= 0")


@net_function
def _after_data(r: Any, p: Any, ECN: bool, EXACT_ECE: bool) -> dict[str, Any]:
    """Code action of every data arrival: the receiver's new state (RFC 5681/7323/3168;
    with ``EXACT_ECE`` the CE state of RFC 8257 3.2: the last segment's CE mark)."""
    ece = ECN and (p.ecn == 3 or (not EXACT_ECE and r.ece and not p.cwr))
    if p.seq == r.nxt:
        nxt = advance(p.seq + 1, r.ooo)
        fresh = r.pending == 0 or bool(r.ooo)
        return {"r2": r._replace(
            nxt=nxt, ooo=runs_above(r.ooo, nxt), pending=r.pending + 1,
            echo=p.ts if fresh else r.echo, echo_retx=p.retx if fresh else r.echo_retx,
            ece=ece)}
    if p.seq > r.nxt and not covers(r.ooo, p.seq):
        return {"r2": r._replace(ooo=add_segment(r.ooo, p.seq), ece=ece)}
    return {"r2": r._replace(ece=ece)}


def _handshake(net: PetriNet) -> None:
    """``syn`` and ``established`` (see the module docstring)."""
    net.add_transition(T("syn", guard="p.seq == SYN"))
    net.add_input("data", "syn", "p")
    net.add_output("out", "syn", "Pkt(flow=FLOW, dst=SRC, seq=SYN_ACK, ack=0, size=SYN_BYTES, "
                   "ts=now * CLOCK_RATE + OFFSET_S, echo=p.ts, ecn=0, ece=False, cwr=False, "
                   "retx=p.retx, sack=())")
    net.add_transition(T("established", guard="p.seq == ACK"))
    net.add_input("data", "established", "p")


#: RFC 8257 3.2: a data segment whose CE mark differs from the receiver's CE state while
#: a delayed ACK is pending.
CE_FLIP = "p.seq >= 0 and r.pending > 0 and (p.ecn == 3) != r.ece"


def _ce_flip(net: PetriNet, guards: dict[str, str]) -> None:
    """``ce_flip`` (DCTCP's receiver, RFC 8257 3.2, as ns-3's ``TcpDctcp::CeState0to1`` and
    ``CeState1to0``): when a segment's CE mark changes the CE state and a delayed ACK is
    pending, the segments received so far are ACKed at once with the old state's ECE
    (their cumulative ACK, ``r.nxt`` before the segment); the state takes the segment's
    mark and the segment (put back as it was) is then received as any other, by the
    transition its guard selects (the others wait for the flip)."""
    net.add_transition(T("ce_flip", guard=CE_FLIP))
    # taken and put back at once (CPN Tools has no read arc on a timed place)
    net.add_input("data", "ce_flip", "p")
    net.add_output("data", "ce_flip", "p")
    net.add_input("rcv", "ce_flip", "r")
    net.add_output("rcv", "ce_flip", "r._replace(pending=0, ece=p.ecn == 3)")
    net.add_reset("delack", "ce_flip")
    net.add_output("out", "ce_flip",
                   "Pkt(flow=FLOW, dst=SRC, seq=-1, ack=r.nxt, size=ACK_BYTES, "
                   "ts=now * CLOCK_RATE + OFFSET_S, echo=r.echo, ecn=0, ece=r.ece, cwr=False, "
                   "retx=r.echo_retx, sack=())")
    for tname in guards:
        guards[tname] = f"{guards[tname]} and not ({CE_FLIP})"


def receiver_net(config: ReceiverConfig, name: str = "receiver") -> PetriNet:
    """The receiver module. Ports: ``data`` (in, data segments) and ``out`` (ACKs out)."""
    net = PetriNet(name)
    net.declare(FLOW=config.flow, SRC=config.src, ACK_BYTES=config.ack_bytes,
                DELACK_COUNT=config.delack_count, DELACK_S=config.delack_timeout_s,
                SACK=config.sack, ECN=config.ecn, OFFSET_S=config.clock_offset_s,
                CLOCK_RATE=1.0 + config.clock_skew, Rcv=Rcv, SYN=SYN_SEQ, SYN_ACK=SYN_ACK_SEQ,
                ACK=ACK_SEQ, SYN_BYTES=config.syn_bytes,
                EXACT_ECE=config.ecn and config.exact_ecn_echo, **FUNCTIONS)
    net.add_place(Place("data", PACKET, port="in"))
    net.add_place(Place("out", PACKET, port="out"))
    net.add_place(Place("rcv", RCV, initial=[Rcv(0, (), 0, 0.0, False, False)]))
    net.add_place(Place("delack", UNIT.timed()))
    # The ACK every ACK-sending transition emits, from the new state r2 (p: the trigger).
    blocks = "(sack_blocks(r2.ooo, p.seq) if SACK else ())"
    ack = (f"Pkt(flow=FLOW, dst=SRC, seq=-1, ack=r2.nxt, size=ACK_BYTES + "
           f"(8 * len({blocks}) + 2 if {blocks} else 0), ts=now * CLOCK_RATE + OFFSET_S, "
           f"echo=r2.echo, "
           f"ecn=0, ece=r2.ece, cwr=False, retx=r2.echo_retx, sack={blocks})")
    in_order = "p.seq == r.nxt"
    guards = {
        "hold": f"{in_order} and not r.ooo and r.pending + 1 < DELACK_COUNT",
        "ack_now": f"{in_order} and (bool(r.ooo) or r.pending + 1 >= DELACK_COUNT)",
        "out_of_order": "p.seq > r.nxt and not covers(r.ooo, p.seq)",
        "duplicate": "p.seq < r.nxt or covers(r.ooo, p.seq)",
    }
    if config.handshake:
        guards["hold"] += " and p.seq > 0"
        guards["ack_now"] = f"{in_order} and (bool(r.ooo) or r.pending + 1 >= DELACK_COUNT or " \
            "p.seq == 0)"
        guards["duplicate"] = f"p.seq >= 0 and ({guards['duplicate']})"
        _handshake(net)
    if config.ecn and config.exact_ecn_echo:
        _ce_flip(net, guards)
    for tname, guard in guards.items():
        net.add_transition(T(tname, guard=guard, action=_after_data, outputs=("r2",)))
        net.add_input("data", tname, "p")
        net.add_input("rcv", tname, "r")
        if tname == "hold":
            net.add_output("rcv", tname, "r2")
            net.add_output("delack", tname, "()", when="r.pending == 0", delay="DELACK_S")
        else:
            net.add_output("rcv", tname, "r2._replace(pending=0)")
            net.add_reset("delack", tname)
            net.add_output("out", tname, ack)
    net.add_transition(T("delack_timeout"))
    net.add_input("delack", "delack_timeout", "()")
    net.add_input("rcv", "delack_timeout", "r")
    net.add_output("rcv", "delack_timeout", "r._replace(pending=0)")
    net.add_output("out", "delack_timeout",
                   "Pkt(flow=FLOW, dst=SRC, seq=-1, ack=r.nxt, size=ACK_BYTES, "
                   "ts=now * CLOCK_RATE + OFFSET_S,"
                   " echo=r.echo, ecn=0, ece=r.ece, cwr=False, retx=r.echo_retx, sack=())")
    return net
