"""Packet colour set and the small pure functions inscriptions share (CPN ML ``fun`` declarations).

Segments are numbered from 0; an ACK carries the next expected segment number (cumulative)
and ``seq = -1`` (:data:`ACK_SEQ`); the handshake's SYN and SYN-ACK carry no data and
``seq`` :data:`SYN_SEQ` (-2) and :data:`SYN_ACK_SEQ` (-3). ``size`` is the IP packet size
in bytes (payload + IP/TCP headers); ``ecn`` is the IP ECN field (0 Not-ECT, 2 ECT(0),
3 CE); ``ece``/``cwr`` are the TCP ECN flags; ``ts`` is the sender's clock when the packet
left (the timestamp option) and ``echo`` the timestamp an ACK echoes (a data segment or
SYN, which echoes nothing here, carries its own ``ts``: both are ``CLOCK`` values, which
relative state spaces keep relative to the clock); ``retx`` marks a
retransmitted data segment (or SYN) and, on an ACK, echoes the flag of the segment whose
timestamp it echoes (Karn's rule without timestamps); ``sack`` lists SACK blocks
``(start, end)`` with ``end`` exclusive.

>>> p = Pkt(flow=0, dst=1, seq=4, ack=0, size=1500, ts=0.5, echo=0.0, ecn=0, ece=False,
...         cwr=False, retx=False, sack=())
>>> PACKET.contains(p), is_ack(p)
(True, False)
>>> merge_sack(((3, 4),), ((7, 9),), 2)
((3, 4), (7, 9))
>>> sack_blocks(((3, 5), (7, 8), (9, 11)), 9)
((9, 11), (7, 8), (3, 5))
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

from tcpn.petrinets import BOOL, CLOCK, INT, IntSet, ListSet, ProductSet, RecordSet
from tcpn.petrinets.net_functions import net_function

__all__ = [
    "ACK_SEQ",
    "CE",
    "ECT",
    "FUNCTIONS",
    "NOT_ECT",
    "PACKET",
    "PACKET_RECORD",
    "SYN_ACK_SEQ",
    "SYN_SEQ",
    "Pkt",
    "add_segment",
    "advance",
    "covers",
    "is_ack",
    "merge_sack",
    "runs_above",
    "sack_blocks",
]

NOT_ECT, ECT, CE = 0, 2, 3
#: ``seq`` of the packets that carry no data: a pure ACK, a SYN, a SYN-ACK.
ACK_SEQ, SYN_SEQ, SYN_ACK_SEQ = -1, -2, -3

PACKET_RECORD = RecordSet(
    "Pkt", flow=IntSet(0), dst=IntSet(0), seq=IntSet(SYN_ACK_SEQ), ack=IntSet(0),
    size=IntSet(1, 65535),
    ts=CLOCK, echo=CLOCK, ecn=IntSet(0, 3), ece=BOOL, cwr=BOOL, retx=BOOL,
    sack=ListSet(ProductSet(INT, INT), max_length=4, name="Blocks"),
)
#: Packets waiting in a buffer are untimed ``Pkt`` records.
#: Packets in flight or queued are timed tokens: the timestamp says when they are there.
PACKET = PACKET_RECORD.timed("TPkt")
#: The record type; inscriptions build packets with ``Pkt(...)`` and update with ``_replace``.
Pkt: Any = PACKET_RECORD.record_type


@net_function
def is_ack(p: Any) -> bool:
    """Whether ``p`` is a pure ACK (it carries no data segment)."""
    return bool(p.seq < 0)


# Runs are kept sorted, disjoint and not adjacent (``add_segment`` merges): a run holding
# ``seq`` is then the last one starting at or before it, found by bisection.


def _run_at(runs: tuple[tuple[int, int], ...], seq: int) -> int:
    """Index of the last run starting at or before ``seq`` (-1 if none)."""
    return bisect_right(runs, (seq, math.inf)) - 1


@net_function
def advance(nxt: int, runs: tuple[tuple[int, int], ...]) -> int:
    """The next expected segment once segment ``nxt - 1`` arrived, given the buffered
    out-of-order ``runs`` (sorted ``(start, end)`` ranges, ``end`` exclusive).

    >>> advance(5, ((5, 7), (9, 10))), advance(8, ((5, 7), (9, 10)))
    (7, 8)
    """
    if not runs:  # in-order delivery, the common case: no bisection
        return nxt
    i = _run_at(runs, nxt)
    return runs[i][1] if i >= 0 and nxt < runs[i][1] else nxt


@net_function
def add_segment(runs: tuple[tuple[int, int], ...], seq: int) -> tuple[tuple[int, int], ...]:
    """``runs`` with segment ``seq`` added, adjacent ranges merged.

    >>> add_segment(((3, 5), (6, 8)), 5), add_segment(((3, 5),), 9), add_segment(((3, 5),), 4)
    (((3, 8),), ((3, 5), (9, 10)), ((3, 5),))
    >>> add_segment(((3, 5), (9, 10)), 8), add_segment((), 0)
    (((3, 5), (8, 10)), ((0, 1),))
    """
    i = _run_at(runs, seq)
    left = runs[i] if i >= 0 else None
    if left is not None and seq < left[1]:
        return runs
    right = runs[i + 1] if i + 1 < len(runs) else None
    joins_left = left is not None and left[1] == seq
    joins_right = right is not None and right[0] == seq + 1
    if joins_left and joins_right:
        return (*runs[:i], (runs[i][0], runs[i + 1][1]), *runs[i + 2:])
    if joins_left:
        return (*runs[:i], (runs[i][0], seq + 1), *runs[i + 1:])
    if joins_right:
        return (*runs[:i + 1], (seq, runs[i + 1][1]), *runs[i + 2:])
    return (*runs[:i + 1], (seq, seq + 1), *runs[i + 1:])


@net_function
def covers(runs: tuple[tuple[int, int], ...], seq: int) -> bool:
    """Whether segment ``seq`` lies in one of ``runs``.

    >>> covers(((3, 5), (9, 10)), 4), covers(((3, 5), (9, 10)), 5)
    (True, False)
    """
    if not runs:
        return False
    i = _run_at(runs, seq)
    return i >= 0 and seq < runs[i][1]


def runs_above(runs: tuple[tuple[int, int], ...], nxt: int) -> tuple[tuple[int, int], ...]:
    """The runs starting after ``nxt`` (what stays buffered once ``nxt`` is expected).

    >>> runs_above(((3, 5), (9, 10)), 7)
    ((9, 10),)
    """
    return runs[_run_at(runs, nxt) + 1:] if runs else runs


@net_function
def merge_sack(sacked: tuple[tuple[int, int], ...], blocks: tuple[tuple[int, int], ...],
               una: int) -> tuple[tuple[int, int], ...]:
    """The sender's scoreboard after an ACK: SACKed ranges at or above ``una``, merged.

    The same runs as adding every segment of ``blocks`` to ``sacked`` with
    :func:`add_segment` (the CPN ML form does that), merged a range at a time.

    >>> merge_sack(((3, 5), (9, 10)), ((5, 7), (12, 14)), 4)
    ((4, 7), (9, 10), (12, 14))
    """
    if not sacked and not blocks:  # no SACK information, the common case
        return ()
    runs = tuple((max(s, una), e) for s, e in sacked if e > una)
    added = [(max(s, una), e) for s, e in blocks if e > max(s, una)]
    if not added:
        return runs
    merged: list[tuple[int, int]] = []
    for start, end in sorted((*runs, *added)):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return tuple(merged)


@net_function
def sack_blocks(runs: tuple[tuple[int, int], ...], latest: int,
                limit: int = 3) -> tuple[tuple[int, int], ...]:
    """RFC 2018 blocks for the buffered ``runs``: the block holding ``latest`` first, then
    the others from the highest down, at most ``limit`` blocks."""
    if not runs:  # nothing buffered out of order, the common case
        return ()
    first = [r for r in runs if r[0] <= latest < r[1]]
    rest = sorted((r for r in runs if r not in first), reverse=True)
    return tuple((first + rest)[:limit])


#: The functions component nets declare for their inscriptions.
FUNCTIONS: dict[str, Any] = {
    "Pkt": Pkt,
    "add_segment": add_segment,
    "advance": advance,
    "covers": covers,
    "is_ack": is_ack,
    "merge_sack": merge_sack,
    "sack_blocks": sack_blocks,
}
