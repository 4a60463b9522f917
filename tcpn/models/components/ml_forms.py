"""CPN ML forms of the components' helper functions: the same values, recursion for loops.

The simulator runs the helpers as written (bisection over sorted runs, loops over the
window); CPN ML has no loops, so each such helper gets a twin in the subset the exporter
translates (:func:`~tcpn.petrinets.exchange.cpnml.set_ml_form`), written with recursion
over lists and ranges. ``tests/test_exchange_components.py`` checks every twin against its
helper on generated inputs, and the CPN ML the exporter writes for them with cpncheck's
evaluator.

Runs (out-of-order buffers, SACK scoreboards) are sorted, disjoint, non-adjacent
``(start, end)`` pairs, ``end`` exclusive, as :func:`~tcpn.models.components.packets.add_segment`
keeps them.

>>> covers_ml(((3, 5), (9, 10)), 4), advance_ml(5, ((5, 7), (9, 10)))
(True, 7)
"""

from __future__ import annotations

from typing import Any

from tcpn.models.components import dcf, packets, sender, wireless
from tcpn.models.components.congestion import ns2_vegas, tcp_l, vegas, vegas_record
from tcpn.models.components.congestion.vegas import HULL_LIMIT, hull_floor
from tcpn.models.components.congestion.vegas_record import drop_acked, forget_segment
from tcpn.models.components.packets import add_segment, advance, covers, runs_above
from tcpn.petrinets.exchange.cpnml import set_ml_form

__all__ = ["add_hull_point_ml", "add_segment_ml", "advance_ml", "attempts_ml",
           "backoff_slots_ml", "covers_ml", "drop_acked_ml",
           "forget_segment_ml", "hull_floor_ml", "last_sent_ml", "merge_sack_ml", "mst_slope_ml",
           "runs_above_ml", "sack_blocks_ml", "sack_hole_ml", "sack_pipe_ml", "sacked_count_ml",
           "sent_time_ml",
           "tcp_l_adopt_ml"]

Runs = Any  # a tuple of (start, end) pairs


def covers_ml(runs: Runs, seq: int) -> bool:
    """:func:`~tcpn.models.components.packets.covers` by recursion."""
    return len(runs) > 0 and ((runs[0][0] <= seq and seq < runs[0][1])
                              or covers(runs[1:], seq))


def advance_ml(nxt: int, runs: Runs) -> int:
    """:func:`~tcpn.models.components.packets.advance` by recursion."""
    if len(runs) == 0:
        return nxt
    if runs[0][0] <= nxt and nxt < runs[0][1]:
        return runs[0][1]
    return advance(nxt, runs[1:])


def runs_above_ml(runs: Runs, nxt: int) -> Runs:
    """:func:`~tcpn.models.components.packets.runs_above` by recursion."""
    if len(runs) == 0:
        return runs
    if runs[0][0] <= nxt:
        return runs_above(runs[1:], nxt)
    return runs


def add_segment_ml(runs: Runs, seq: int) -> Runs:
    """:func:`~tcpn.models.components.packets.add_segment` by recursion."""
    if len(runs) == 0:
        return ((seq, seq + 1),)
    if seq + 1 < runs[0][0]:
        return ((seq, seq + 1), *runs)
    if seq + 1 == runs[0][0]:
        return ((seq, runs[0][1]), *runs[1:])
    if seq < runs[0][1]:
        return runs
    if seq == runs[0][1]:
        return _join_next((runs[0][0], seq + 1), runs[1:])
    return (runs[0], *add_segment(runs[1:], seq))


def _join_next(run: Any, rest: Runs) -> Runs:
    """``run`` before ``rest``, merged with the first of ``rest`` if they touch."""
    if len(rest) > 0 and rest[0][0] == run[1]:
        return ((run[0], rest[0][1]), *rest[1:])
    return (run, *rest)


def _trim(runs: Runs, una: int) -> Runs:
    """The parts of ``runs`` at or above ``una``."""
    if len(runs) == 0:
        return runs
    if runs[0][1] <= una:
        return _trim(runs[1:], una)
    return ((max(runs[0][0], una), runs[0][1]), *_trim(runs[1:], una))


def _add_range(runs: Runs, start: int, end: int) -> Runs:
    """``runs`` with segments ``start`` to ``end - 1`` added."""
    if start >= end:
        return runs
    return _add_range(add_segment(runs, start), start + 1, end)


def _add_blocks(runs: Runs, blocks: Runs, una: int) -> Runs:
    if len(blocks) == 0:
        return runs
    return _add_blocks(_add_range(runs, max(blocks[0][0], una), blocks[0][1]), blocks[1:], una)


def merge_sack_ml(sacked: Runs, blocks: Runs, una: int) -> Runs:
    """:func:`~tcpn.models.components.packets.merge_sack` by recursion."""
    return _add_blocks(_trim(sacked, una), blocks, una)


def _holding(runs: Runs, latest: int) -> Runs:
    if len(runs) == 0:
        return runs
    if runs[0][0] <= latest and latest < runs[0][1]:
        return (runs[0],)
    return _holding(runs[1:], latest)


def _not_holding(runs: Runs, latest: int) -> Runs:
    if len(runs) == 0:
        return runs
    if runs[0][0] <= latest and latest < runs[0][1]:
        return _not_holding(runs[1:], latest)
    return (runs[0], *_not_holding(runs[1:], latest))


def _first(runs: Runs, n: int) -> Runs:
    if n == 0 or len(runs) == 0:
        return ()
    return (runs[0], *_first(runs[1:], n - 1))


def sack_blocks_ml(runs: Runs, latest: int) -> Runs:
    """:func:`~tcpn.models.components.packets.sack_blocks` (3 blocks) by recursion."""
    return _first(_holding(runs, latest) + _not_holding(runs, latest)[::-1], 3)


def _sacked_above(runs: Runs, s: int) -> int:
    """Segments of ``runs`` above ``s``."""
    if len(runs) == 0:
        return 0
    return max(0, runs[0][1] - max(runs[0][0], s + 1)) + _sacked_above(runs[1:], s)


def _pipe_from(t: Any, s: int, dupthresh: int) -> int:
    if s >= t.high:
        return 0
    here = 0 if covers(t.sacked, s) else (
        (0 if _sacked_above(t.sacked, s) >= dupthresh else 1) + (1 if s < t.highrxt else 0))
    return here + _pipe_from(t, s + 1, dupthresh)


def sacked_count_ml(runs: Runs, low: int, high: int) -> int:
    """:func:`~tcpn.models.components.sender.sacked_count` by recursion."""
    if len(runs) == 0:
        return 0
    return (max(0, min(runs[0][1], high) - max(runs[0][0], low))
            + sacked_count_ml(runs[1:], low, high))


def sack_pipe_ml(t: Any, dupthresh: int) -> int:
    """:func:`~tcpn.models.components.sender.sack_pipe` (RFC 6675 SetPipe) by recursion."""
    return _pipe_from(t, t.una, dupthresh)


def _hole_from(t: Any, s: int, dupthresh: int) -> int:
    if s >= t.high:
        return -1
    if not covers(t.sacked, s) and _sacked_above(t.sacked, s) >= dupthresh:
        return s
    return _hole_from(t, s + 1, dupthresh)


def sack_hole_ml(t: Any, dupthresh: int) -> int:
    """:func:`~tcpn.models.components.sender.sack_hole` (RFC 6675 NextSeg 1) by recursion."""
    return _hole_from(t, max(t.una, t.highrxt), dupthresh)


def _adopt_from(st: Any, reports: Any, ack_ts: float) -> Any:
    """The first of ``reports`` (newest first) taken at or before ``ack_ts``, if newer."""
    if len(reports) == 0:
        return st
    if reports[0][0] <= ack_ts:
        if reports[0][0] > st.report_time:
            return st._replace(report_time=reports[0][0], link_sent=reports[0][1],
                               link_failed=reports[0][2])
        return st
    return _adopt_from(st, reports[1:], ack_ts)


def tcp_l_adopt_ml(st: Any, reports: Any, ack_ts: float) -> Any:
    """:func:`~tcpn.models.components.congestion.tcp_l.tcp_l_adopt` by recursion."""
    return _adopt_from(st, reports[::-1], ack_ts)


def _attempts_from(per: float, k: int, tries_allowed: int, u: Any) -> Any:
    if k >= tries_allowed:
        return tries_allowed, True
    if u[k] >= per:
        return k + 1, False
    return _attempts_from(per, k + 1, tries_allowed, u)


def attempts_ml(per: float, tries_allowed: int, u: Any) -> Any:
    """:func:`~tcpn.models.components.wireless.attempts` by recursion."""
    return _attempts_from(per, 0, tries_allowed, u)


def _window(retry: int, cw_min: int, cw_max: int) -> int:
    if retry == 0:
        return cw_min
    return min(2 * _window(retry - 1, cw_min, cw_max) + 1, cw_max)


def backoff_slots_ml(u: float, retry: int, cw_min: int, cw_max: int) -> int:
    """:func:`~tcpn.models.components.dcf.backoff_slots` by recursion."""
    cw = _window(retry, cw_min, cw_max)
    return min(int(u * float(cw + 1)), cw)


# -- Vegas: the send record and the delay hulls --------------------------------------------
def _time_of(sent: Any, seq: int) -> float:
    if len(sent) == 0:
        return -1.0
    if sent[0][0] == seq:
        return sent[0][1]
    return _time_of(sent[1:], seq)


def sent_time_ml(v: Any, seq: int) -> float:
    """:func:`~tcpn.models.components.congestion.vegas_record.sent_time` by recursion."""
    return _time_of(v.sent, seq)


def last_sent_ml(v: Any, seq: int) -> float:
    """:func:`~tcpn.models.components.congestion.ns2_vegas.last_sent` by recursion."""
    if any(s == seq for s, _ in v.resent):
        return _time_of(v.resent, seq)
    return _time_of(v.sent, seq)


def forget_segment_ml(sent: Any, seq: int) -> Any:
    """:func:`~tcpn.models.components.congestion.vegas_record.forget_segment` by recursion."""
    if len(sent) == 0:
        return sent
    if sent[0][0] == seq:
        return forget_segment(sent[1:], seq)
    return (sent[0], *forget_segment(sent[1:], seq))


def drop_acked_ml(sent: Any, ack: int) -> Any:
    """:func:`~tcpn.models.components.congestion.vegas_record.drop_acked` by recursion."""
    if len(sent) == 0:
        return sent
    if sent[0][0] < ack:
        return drop_acked(sent[1:], ack)
    return (sent[0], *drop_acked(sent[1:], ack))


def hull_floor_ml(hull: Any, slope: float) -> float:
    """:func:`~tcpn.models.components.congestion.vegas.hull_floor` by recursion (``hull``
    not empty)."""
    here = hull[0][1] - slope * hull[0][0]
    if len(hull) == 1:
        return here
    return min(here, hull_floor(hull[1:], slope))


def _before(p: Any, q: Any) -> bool:
    """``p < q`` in Python's order of pairs."""
    return p[0] < q[0] or (p[0] == q[0] and p[1] < q[1])


def _insert(points: Any, p: Any) -> Any:
    """``p`` into the sorted distinct ``points``, keeping them sorted and distinct."""
    if len(points) == 0:
        return (p,)
    if points[0][0] == p[0] and points[0][1] == p[1]:
        return points
    if _before(p, points[0]):
        return (p, *points)
    return (points[0], *_insert(points[1:], p))


def _turn(a: Any, b: Any, p: Any) -> float:
    """Cross product of ``b - a`` and ``p - a``: > 0 when ``a, b, p`` turn left."""
    return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])


def _push(stack: Any, p: Any) -> Any:
    """Andrew's monotone chain step; ``stack`` holds the hull so far, newest first."""
    if len(stack) >= 2 and _turn(stack[1], stack[0], p) <= 0.0:
        return _push(stack[1:], p)
    return (p, *stack)


def _chain(stack: Any, points: Any) -> Any:
    if len(points) == 0:
        return stack[::-1]
    return _chain(_push(stack, points[0]), points[1:])


def add_hull_point_ml(hull: Any, x: float, y: float) -> Any:
    """:func:`~tcpn.models.components.congestion.vegas.add_hull_point` by recursion (``hull`` sorted
    and distinct, as that function leaves it)."""
    points = _insert(hull, (x, y))
    new = _chain(points[:1], points[1:])
    return new[-HULL_LIMIT:]


def _slope(p: Any, q: Any) -> float:
    return (q[1] - p[1]) / (q[0] - p[0])


def _slope_over(hull: Any, mean_x: float) -> float:
    if len(hull) == 2 or (hull[0][0] <= mean_x and mean_x <= hull[1][0]):
        return _slope(hull[0], hull[1])
    return _slope_over(hull[1:], mean_x)


def mst_slope_ml(hull: Any, mean_x: float) -> float:
    """:func:`~tcpn.models.components.congestion.vegas.mst_slope` by recursion."""
    if len(hull) < 2:
        return 0.0
    if mean_x < hull[0][0]:
        return _slope(hull[0], hull[1])
    return _slope_over(hull, mean_x)


#: helper -> its CPN ML form
FORMS = {
    packets.covers: covers_ml, packets.advance: advance_ml,
    packets.runs_above: runs_above_ml, packets.add_segment: add_segment_ml,
    packets.merge_sack: merge_sack_ml, packets.sack_blocks: sack_blocks_ml,
    sender.sack_pipe: sack_pipe_ml, sender.sack_hole: sack_hole_ml,
    sender.sacked_count: sacked_count_ml,
    tcp_l.tcp_l_adopt: tcp_l_adopt_ml, wireless.attempts: attempts_ml,
    dcf.backoff_slots: backoff_slots_ml,
    vegas_record.sent_time: sent_time_ml, ns2_vegas.last_sent: last_sent_ml,
    vegas_record.forget_segment: forget_segment_ml,
    vegas_record.drop_acked: drop_acked_ml, vegas.hull_floor: hull_floor_ml,
    vegas.add_hull_point: add_hull_point_ml, vegas.mst_slope: mst_slope_ml,
}
for _helper, _form in FORMS.items():
    set_ml_form(_helper, _form)
