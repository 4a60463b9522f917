"""A bulk sender's verification net: the reductions that make its state space finite.

A bulk (FTP-like) sender never runs out of data, so its sequence numbers, its queues'
positions and its links' frame counters grow without end, ``cwnd`` grows in congestion
avoidance, and the RTT estimator's floats converge only asymptotically. In relative time
(the clock reduction of :mod:`tcpn.petrinets.timevalues`) these are what is left; this
module declares each as an :class:`~tcpn.petrinets.statespace.offsets.OffsetGroup` of the scenario's
verification net:

* **sequence numbers**, one group per connection (base: the smallest live number, at
  most the sender's ``una``): the sender's ``una``, ``nxt``, ``high``, ``highrxt`` and
  SACK scoreboard, the receiver's ``nxt`` and out-of-order runs, the data segments'
  ``seq``, the ACKs' ``ack`` and SACK blocks (on every wire and queue place, by flow and
  direction). ``recover`` and ``cwr_high`` are *floors*: every read compares them with a
  number at least ``una`` (``una >= recover``, ``ack >= recover`` in recovery, ``una >=
  cwr_high``), so any value at most the base reads alike, and they are kept at the base
  when below it. Checked by the explorer's offset check (:mod:`tcpn.petrinets.statespace.offsets`).
* **queue positions**, one group per FIFO (base: the next position to leave): the
  ``fifo`` head and the ``buffer`` positions. Checked the same way. A drop-tail queue's
  "idle since" time (a ``CLOCK`` value only copied, read by RED alone) is kept at 0.
* **frame counters** ``(sent, failed)`` of the links are kept at ``(0, 0)``: only a
  scripted loss list reads them (refused with a bulk sender) and TCP-L (not a bulk
  variant here).
* **cwnd** is kept at most the receive window ``WINDOW``: the sender reads ``cwnd`` only
  through ``min(cwnd, WINDOW)``, ``cwnd + k`` with ``k >= 0`` under that same ``min``,
  ``grow`` (which never decreases it) and the limited-transmit count's ``flight + 1 >
  cwnd`` (false for both when ``flight + 1 <= WINDOW``), and every assignment that lowers
  it (loss, timeout, recovery exit) ignores its old value; so any ``cwnd >= WINDOW``
  behaves as ``WINDOW`` (``tests/test_bulk.py`` compares verdicts with and without the
  cap on finite transfers).
* **the RTT estimator** ``(srtt, rttvar, rto)`` is rounded to ``rtt_grain_s`` after every
  update: an abstraction (the verdicts cover the rounded estimator, whose RTO differs from
  the exact one by less than a few grains), without which ``srtt`` and ``rttvar`` approach
  their fixed point without reaching it in any number of steps the explorer can afford.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.packets import ACK_SEQ, PACKET_RECORD
from tcpn.models.components.queues import BUFFER, FIFO
from tcpn.models.components.sender import TCB
from tcpn.models.registered_variants import variant_names, variant_spec
from tcpn.petrinets import PetriNet
from tcpn.petrinets.colours import ProductSet, RecordSet
from tcpn.petrinets.statespace.offsets import OffsetField, OffsetGroup

__all__ = ["BULK_ABSTRACTIONS", "DEFAULT_RTT_GRAIN_S", "MAX_BULK_WINDOW", "bulk_offsets",
           "bulk_variants", "cwnd_cap"]


def bulk_variants() -> tuple[str, ...]:
    """The senders whose reads of ``cwnd``, ``recover`` and ``cwr_high`` the module
    docstring argues for (delay-based and TCP-L senders read more): the variants
    registered with ``bulk_state_space=True``.

    >>> bulk_variants()
    ('newreno', 'reno', 'sack', 'tahoe')
    """
    return tuple(name for name in variant_names() if variant_spec(name).bulk_state_space)

#: The grain the RTT estimator is rounded to unless told (1 ms: the scale of the
#: scenarios' delays is 1-100 ms, an RTO differs from the exact one by a few ms at most).
DEFAULT_RTT_GRAIN_S = 1e-3
#: A bulk sender's space grows with its window; a larger one is refused.
MAX_BULK_WINDOW = 64


def BULK_ABSTRACTIONS(rtt_grain_s: float) -> tuple[str, ...]:
    """What a bulk verification net's reductions abstract, for ``v.abstractions``."""
    return (
        "Sequence numbers are kept relative per connection (the smallest live one is 0: "
        "una, nxt, high, the receiver's next expected and buffered runs, segments' seq, "
        "ACKs' ack and SACK blocks); recover and cwr_high below it are kept at it (every "
        "read compares them with a number at least una); queue positions are kept "
        "relative to the head; link frame counters are dropped (nothing reads them "
        "without a scripted loss list). These are exact (a bisimulation), offset "
        "invariance checked by the explorer on the first shift_checks states.",
        "cwnd is kept at most the receive window (the sender reads it only through "
        "min(cwnd, rwnd) and monotone updates): exact.",
        f"The RTT estimator (srtt, rttvar, rto) is rounded to {rtt_grain_s:g} s after every "
        "update: an abstraction; verdicts cover the rounded estimator.",
        "Paths of a bulk space are in relative sequence numbers: they do not replay in the "
        "simulator as they are.",
    )


def _runs(runs: Any) -> list[int]:
    return [n for run in runs for n in run]


def _moved_runs(runs: Any, delta: int) -> tuple[tuple[int, int], ...]:
    return tuple((a + delta, b + delta) for a, b in runs)


def _floor(value: int, delta: int) -> int:
    return max(value + delta, 0) if delta < 0 else value + delta


def _sender_field(window: int, rtt_grain_s: float) -> OffsetField:
    def numbers(t: Any) -> list[int]:
        return [t.una, t.nxt, t.high, t.highrxt, *_runs(t.sacked)]

    def shift(t: Any, d: int) -> Any:
        return t._replace(una=t.una + d, nxt=t.nxt + d, high=t.high + d,
                          highrxt=t.highrxt + d, sacked=_moved_runs(t.sacked, d),
                          recover=_floor(t.recover, d), cwr_high=_floor(t.cwr_high, d))

    return OffsetField(numbers=numbers, shift=shift, normal=cwnd_cap(window))


def cwnd_cap(window: int) -> Any:
    """The normalisation of a ``Tcb`` that keeps ``cwnd`` at most ``window`` (see the
    module docstring for why it changes nothing observable).

    >>> from tcpn.models.components.sender import Tcb
    >>> cwnd_cap(4)(Tcb(9.5, 2.0, 0, 0, 0, 0, 0, False, 0, False, (), 0, False, 0)).cwnd
    4.0
    """
    cap = float(window)

    def normal(t: Any) -> Any:
        return t._replace(cwnd=cap) if t.cwnd > cap else t
    return normal


def _rounded_rtt(grain_s: float) -> Any:
    decimals = max(0, -math.floor(math.log10(grain_s)))

    def normal(r: Any) -> Any:
        def q(x: float) -> float:
            return round(round(x / grain_s) * grain_s, decimals) if x >= 0 else x
        return r._replace(srtt=q(r.srtt), rttvar=q(r.rttvar), rto=q(r.rto))
    return normal


def _packet_field(flow: int, sender_node: int) -> tuple[Any, Any]:
    """``(numbers, shift)`` of one packet of connection ``flow``: a data segment's ``seq``,
    an ACK's ``ack`` and SACK blocks (ACKs go to ``sender_node``; the handshake's
    SYN, SYN-ACK and ACK carry no sequence numbers of the transfer)."""
    def numbers(p: Any) -> list[int]:
        if p.flow != flow:
            return []
        if p.seq >= 0:
            return [p.seq]
        if p.seq == ACK_SEQ and p.dst == sender_node:
            return [p.ack, *_runs(p.sack)]
        return []

    def shift(p: Any, d: int) -> Any:
        if p.flow != flow:
            return p
        if p.seq >= 0:
            return p._replace(seq=p.seq + d)
        if p.seq == ACK_SEQ and p.dst == sender_node:
            return p._replace(ack=p.ack + d, sack=_moved_runs(p.sack, d))
        return p
    return numbers, shift


def _inside(i: int, numbers: Any, shift: Any) -> OffsetField:
    """The field of a product whose component ``i`` is a packet."""
    def numbers_at(v: Any) -> list[int]:
        return list(numbers(v[i]))

    def shift_at(v: Any, d: int) -> Any:
        return (*v[:i], shift(v[i], d), *v[i + 1:])
    return OffsetField(numbers=numbers_at, shift=shift_at)


def _is_packet(colour: Any) -> bool:
    return isinstance(colour, RecordSet) and colour.name in ("Pkt", "TPkt") and \
        colour.fields == PACKET_RECORD.fields


def _packet_places(net: PetriNet, flow: int, sender_node: int) -> dict[str, OffsetField]:
    """Every place holding packets (alone or in a product, e.g. a queue's ``(position,
    packet)``) with the field moving connection ``flow``'s numbers."""
    numbers, shift = _packet_field(flow, sender_node)
    out: dict[str, OffsetField] = {}
    for name, place in net.places.items():
        colour = place.colour
        if _is_packet(colour):
            out[name] = OffsetField(numbers=numbers, shift=shift)
        elif isinstance(colour, ProductSet):
            at = [i for i, c in enumerate(colour.components) if _is_packet(c)]
            if len(at) == 1:
                out[name] = _inside(at[0], numbers, shift)
    return out


def _queue_groups(net: PetriNet, drop_tail: Collection[str]) -> list[OffsetGroup]:
    """One group per FIFO (``X.fifo``/``X.buffer``, ``X.fifo0``/``X.buffer0``...); the
    queues ``drop_tail`` names (their prefixes ``X``) only copy the time they went idle,
    which is kept at 0 (a bulk sender's idle queue would push it ever further back)."""
    groups = []
    for name, place in net.places.items():
        prefix, _dot, last = name.rpartition(".")
        if place.colour != FIFO or not last.startswith("fifo"):
            continue
        buffer = f"{prefix}.buffer{last.removeprefix('fifo')}"
        if buffer not in net.places or net.places[buffer].colour != BUFFER:
            raise InputError(f"queue {prefix}: place {name} has no buffer {buffer} beside it; "
                             "cannot keep its positions relative")
        groups.append(OffsetGroup(f"{name} positions", {
            name: OffsetField(numbers=lambda v: (v[0],),
                              shift=lambda v, d: (v[0] + d, *v[1:]),
                              normal=(lambda v: (*v[:3], 0.0)) if prefix in drop_tail
                              else None),
            buffer: OffsetField(numbers=lambda v: (v[0],),
                                shift=lambda v, d: (v[0] + d, v[1]))}))
    return groups


def bulk_offsets(net: PetriNet, flows: int, sender_nodes: Mapping[int, int], window: int,
                 rtt_grain_s: float, drop_tail: Collection[str] = ()) -> list[OffsetGroup]:
    """The offset groups of a bulk verification net with ``flows`` connections (numbered
    ``flow{i}``, whose ACKs go to node ``sender_nodes[i]``), receive window ``window``
    segments and the RTT estimator rounded to ``rtt_grain_s`` (the module docstring)."""
    groups = []
    for i in range(flows):
        fields = _packet_places(net, i, sender_nodes[i])
        tcb, rcv, rtt = f"flow{i}.snd.tcb", f"flow{i}.rcv.rcv", f"flow{i}.snd.rtt"
        if net.places[tcb].colour != TCB:
            raise InputError(f"place {tcb}: not a loss-based sender's Tcb; a bulk sender "
                             f"must be one of {', '.join(bulk_variants())}")
        fields[tcb] = _sender_field(window, rtt_grain_s)
        fields[rcv] = OffsetField(
            numbers=lambda r: [r.nxt, *_runs(r.ooo)],
            shift=lambda r, d: r._replace(nxt=r.nxt + d, ooo=_moved_runs(r.ooo, d)))
        fields[rtt] = OffsetField(normal=_rounded_rtt(rtt_grain_s))
        # ``open`` creates the tcb with una = 0: the numbers start there
        groups.append(OffsetGroup(f"flow{i} sequence numbers", fields, anchor=tcb))
    groups += _queue_groups(net, drop_tail)
    frames = {name: OffsetField(normal=lambda v: (0, 0)) for name in net.places
              if name.endswith(".frames")}
    if frames:
        groups.append(OffsetGroup("link frame counters", frames))
    return groups
