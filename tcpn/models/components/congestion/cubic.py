"""TCP CUBIC (RFC 9438) as a sub-net: the window as a cubic function of the time since the
last reduction, as ns-3.44's ``TcpCubic`` (the Linux 3.14 arithmetic) computes it.

The window is in whole segments, grown one segment at a time:

* an ACK counts the segments it newly acknowledges (:func:`cubic_delivered`: not already
  on the scoreboard, as ns-3's ``currentDelivered``);
* an ACK of new data that is also a duplicate (it SACKs new data) takes only the RTT
  sample (ns-3's ``PktsAcked`` in ``CA_DISORDER``) and leaves the window and the counter
  as they are (:func:`~tcpn.models.components.sender.growth_withheld`);
* slow start (``cwnd < ssthresh``) adds every segment an ACK delivers (ns-3 counts
  bytes there, RFC 3465, to stand for Linux's quick ACKs); the ACK makes no
  congestion-avoidance step;
* in congestion avoidance each ACK of ``acked`` segments adds them to the counter
  ``cnt`` (ns-3's ``m_cWndCnt``) and asks :func:`cubic_update` for ``n``, the ACKs per
  segment of growth; when ``cnt >= n`` the window grows by one segment and ``cnt -= n``;
* :func:`cubic_update` opens an epoch at the first step after a reduction (``epoch``,
  ``K = cbrt((W_max - cwnd) / C)`` and the origin ``W_max`` when the window is below the
  last maximum, else ``K = 0`` and the origin the window), then takes the target
  ``origin -/+ trunc(C |t - K|^3)`` at ``t = now + delay_min - epoch`` and ``n = cwnd /
  (target - cwnd)`` (``100 cwnd`` when the target is not above the window), at most 20
  before the first loss (``CntClamp``); with TCP-friendliness it counts the ACKs into a
  Reno window ``tcp_cwnd`` growing one segment per ``trunc(cwnd * s) >> 3`` acknowledged
  segments, ``s = trunc(8 (1024 + 1024 beta) / 3 / (1024 - 1024 beta))`` (15 for beta
  0.7), and bounds ``n`` by ``cwnd / (tcp_cwnd - cwnd)`` when that window is ahead; ``n``
  is at least 2;
* ``delay_min`` is the smallest RTT ns-3 passes to ``PktsAcked``: its ``m_lastRtt``, the
  smoothed RTT after the ACK (``rtt`` place's ``srtt``), skipped in the first
  ``CUBIC_DELTA`` (10 ms) of an epoch;
* a fast retransmit and a timeout set ``W_max`` to the window (``cwnd (1 + beta) / 2``
  with fast convergence when the window is below the last maximum), end the epoch and set
  ``ssthresh = max(2, trunc(beta cwnd))`` (:func:`cubic_ssthresh`); the recovery is
  NewReno's or SACK's (the base sender) and leaves at ``cwnd = ssthresh``, then grows as
  ns-3's ``IncreaseWindow`` by every segment the exit ACK passes (:func:`cubic_exit`:
  the count left in ``cnt`` grows the window one segment on each of the next ACKs;
  with the base sender's NewReno step the window lagged ns-3's by up to 4 segments for
  150 ms after each recovery at 100 Mbit/s, tests/test_cubic.py). A timeout sets
  ``W_max`` as a fast retransmit does (ns-3's ``ReTxTimeout`` calls ``GetSsThresh``),
  then forgets the rest but the counter (``CubicReset`` on ``CA_LOSS`` keeps
  ``m_lastMaxCwnd`` and ``m_cWndCnt``): no epoch, no ``delay_min``, no Reno window. With
  ``W_max = 0`` there (this model until issue 34) the window after the timeout's slow
  start grew at ``CntClamp``'s pace, 5 % a round, with no plateau: on
  cubic_2flows_100m the flow that timed out at 405 segments reached 1075 in 2.6 s where
  ns-3's levelled at 344, and the two flows' split stayed unequal for the 60 s. What the
  receiver held before the timeout is not delivered
  again when a retransmission fills the hole below it: :func:`cubic_delivered` counts
  it out with the base sender's scoreboard, kept across the timeout with
  ``tcp.sack_after_timeout: keep``; with ``forget`` (the default) the base sender clears
  its scoreboard there and ``kept`` holds what it forgot (the ns3 lens counts the same:
  ``ForgetSack`` in ``cpp/variants.h``).

HyStart (ns-3's default) is not modelled: a scenario runs CUBIC here with ``hystart:
false``, the ns3 lens with ns-3's ``HyStart`` attribute false.

>>> from tcpn.models.components.sender import SenderConfig
>>> net = cubic_sender_net(SenderConfig(flow=0, dst=1, variant="sack"))
>>> [a.inscription for a in net.arcs_of("new_ack") if a.place == "cubic"][0]
'c'
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from tcpn.errors import InputError
from tcpn.models.components.extend import track, wrap_output
from tcpn.models.components.packets import merge_sack
from tcpn.models.components.sender import (
    NEW_DATA_ACKS,
    SenderConfig,
    sacked_count,
    sender_net,
    unless_withheld,
)
from tcpn.models.schema_base import VariantParams
from tcpn.models.variant_registry import Ns3Congestion, register_variant
from tcpn.petrinets import INT, REAL, IntSet, ListSet, PetriNet, Place, ProductSet, RecordSet
from tcpn.petrinets.net_functions import net_function

__all__ = ["CUBIC", "CubicParams", "cubic_ack", "cubic_delivered", "cubic_exit", "cubic_grow",
           "cubic_loss",
           "cubic_rtt",
           "cubic_sender_net", "cubic_ssthresh", "cubic_start", "cubic_timeout", "cubic_update",
           "friendly_scale"]

CUBIC = RecordSet("Cubic", cnt=IntSet(0), last_max=IntSet(0), origin=IntSet(0), k=REAL,
                  epoch=REAL, delay_min=REAL, ack_cnt=IntSet(0), tcp_cwnd=IntSet(0),
                  kept=ListSet(ProductSet(INT, INT), name="KeptRuns"), n=IntSet(0),
                  window=REAL)
Cubic: Any = CUBIC.record_type

#: ns-3's ``CntClamp``: the largest ACKs-per-segment count before the first loss.
CNT_CLAMP = 20
#: ns-3's ``CubicDelta``: RTT samples this soon after an epoch opens are not taken.
CUBIC_DELTA_S = 0.010


def cubic_start() -> Any:
    """The state of a new connection: no epoch, no maximum, no RTT (-1: none)."""
    return Cubic(0, 0, 0, 0.0, -1.0, -1.0, 0, 0, (), 0, 0.0)


@net_function
def friendly_scale(beta: float) -> int:
    """ns-3's (Linux's) Reno-friendly scale, ``trunc(8 (1024 + 1024 beta) / 3 / (1024 -
    1024 beta))``: eight times the ACKs per segment of a Reno window growing at CUBIC's
    AIMD rate ``3 (1 - beta) / (1 + beta)``.

    >>> friendly_scale(0.7), friendly_scale(0.5)
    (15, 8)
    """
    return int(8 * (1024 + beta * 1024) / 3 / (1024 - beta * 1024))


@net_function
def cubic_delivered(c: Any, t: Any, a: Any) -> int:
    """The ``segmentsAcked`` CUBIC grows by: the segments ACK ``a`` acknowledges that the
    sender's scoreboard (``t.sacked``, and the one kept across a timeout, ``c.kept``) did
    not hold (ns-3 counts what an ACK newly delivers; segments it SACKs above the
    cumulative ACK do not count here: with them the window of the first loss of
    tests/test_cubic.py is one segment above ns-3's).

    >>> from tcpn.models.components.sender import Tcb
    >>> from tcpn.models.components.packets import Pkt
    >>> t = Tcb(10.0, 5.0, 0, 20, 20, 0, 0, False, 0, False, (), 0, False, 0)
    >>> ack = Pkt(flow=0, dst=0, seq=-1, ack=12, size=40, ts=0.0, echo=0.0, ecn=0, ece=False,
    ...           cwr=False, retx=False, sack=())
    >>> cubic_delivered(cubic_start(), t, ack)
    12
    >>> cubic_delivered(cubic_start()._replace(kept=((1, 11),)), t, ack)
    2
    """
    return a.ack - t.una - sacked_count(merge_sack(t.sacked, c.kept, t.una), t.una, a.ack)


@net_function
def cubic_rtt(c: Any, rtt_s: float, now: float, delta_s: float) -> Any:
    """State after ns-3's ``PktsAcked`` with RTT ``rtt_s`` (< 0: none): the smallest one,
    except in the first ``delta_s`` of an epoch.

    >>> cubic_rtt(cubic_start(), 0.05, 1.0, 0.01).delay_min
    0.05
    >>> cubic_rtt(cubic_start()._replace(epoch=0.995, delay_min=0.06), 0.05, 1.0, 0.01).delay_min
    0.06
    """
    if rtt_s < 0 or (c.epoch >= 0 and now - c.epoch < delta_s):
        return c
    if c.delay_min < 0 or c.delay_min > rtt_s:
        return c._replace(delay_min=rtt_s)
    return c


@net_function
def cubic_update(c: Any, seg_cwnd: int, acked: int, now: float, scaling: float, beta: float,
                 friendly: bool) -> Any:
    """ns-3's ``TcpCubic::Update``: the state after an ACK of ``acked`` at ``now`` with a
    window of ``seg_cwnd`` segments, ``n`` the ACKs per segment of growth it returns.

    An epoch opening at 1 s below a maximum of 50 (``K = cbrt(15 / 0.4) = 3.347``; ``t =
    0.04`` s, target ``50 - trunc(0.4 * 3.307^3) = 50 - 14 = 36``, ``n = 35 / 1 = 35``;
    the Reno window 35 has not grown):

    >>> c0 = cubic_start()._replace(last_max=50, delay_min=0.04)
    >>> c = cubic_update(c0, 35, 2, 1.0, 0.4, 0.7, True)
    >>> (c.epoch, c.origin, round(c.k, 3), c.ack_cnt, c.tcp_cwnd, c.n)
    (1.0, 50, 3.347, 2, 35, 35)

    Before the first loss ``n`` is at most 20; a Reno window ahead bounds it (here 10
    segments, 2 ahead: ``n <= 10 // 2 = 5``):

    >>> cubic_update(cubic_start()._replace(epoch=0.0), 10, 1, 0.1, 0.4, 0.7, False).n
    20
    >>> c1 = cubic_start()._replace(epoch=0.0, last_max=10, origin=10, tcp_cwnd=12)
    >>> cubic_update(c1, 10, 1, 0.1, 0.4, 0.7, True).n
    5
    """
    opening = c.epoch < 0
    above = c.last_max <= seg_cwnd
    k = c.k if not opening else (
        0.0 if above else ((c.last_max - seg_cwnd) / scaling) ** (1.0 / 3.0))
    origin = c.origin if not opening else (seg_cwnd if above else c.last_max)
    epoch = now if opening else c.epoch
    ack_cnt = acked if opening else c.ack_cnt + acked
    tcp_cwnd = seg_cwnd if opening else c.tcp_cwnd
    t = now + max(c.delay_min, 0.0) - epoch
    delta = int(scaling * abs(t - k) ** 3.0)
    target = origin - delta if t < k else origin + delta
    n = seg_cwnd // (target - seg_cwnd) if target > seg_cwnd else 100 * seg_cwnd
    n = min(n, CNT_CLAMP) if c.last_max == 0 else n
    per_segment = max(1, (seg_cwnd * friendly_scale(beta)) // 8)  # ns-3 loops on 0
    grown = max(0, (ack_cnt - 1) // per_segment) if friendly else 0  # ns-3's loop, at once
    tcp_cwnd = tcp_cwnd + grown
    ack_cnt = ack_cnt - grown * per_segment
    n = min(n, seg_cwnd // (tcp_cwnd - seg_cwnd)) if friendly and tcp_cwnd > seg_cwnd else n
    return c._replace(k=k, origin=origin, epoch=epoch, ack_cnt=ack_cnt, tcp_cwnd=tcp_cwnd,
                      n=max(n, 2))


@net_function
def cubic_grow(c: Any, cwnd: float, ssthresh: float, acked: int, now: float,
               scaling: float, beta: float, friendly: bool) -> Any:
    """ns-3's ``TcpCubic::IncreaseWindow``: the state after an ACK of ``acked`` new
    segments, ``window`` the window (whole segments in slow start; one segment once
    ``cnt`` reaches ``n``).

    >>> cubic_grow(cubic_start(), 10.0, 1e9, 2, 0.5, 0.4, 0.7, True).window
    12.0
    >>> c = cubic_grow(cubic_start()._replace(epoch=0.0, cnt=19), 10.0, 10.0, 1, 0.1,
    ...                0.4, 0.7, False)
    >>> c.window, c.cnt
    (11.0, 0)
    """
    if cwnd < ssthresh or acked <= 0:
        return c._replace(window=cwnd + acked)
    u = cubic_update(c, int(cwnd), acked, now, scaling, beta, friendly)
    cnt = u.cnt + acked
    if cnt >= u.n:
        return u._replace(cnt=cnt - u.n, window=cwnd + 1.0)
    return u._replace(cnt=cnt, window=cwnd)


@net_function
def cubic_ssthresh(cwnd: float, beta: float) -> float:
    """ns-3's ``TcpCubic::GetSsThresh``: ``max(2, trunc(beta cwnd))`` segments.

    >>> cubic_ssthresh(50.0, 0.7), cubic_ssthresh(2.0, 0.7)
    (35.0, 2.0)
    """
    return float(max(int(int(cwnd) * beta), 2))


@net_function
def cubic_loss(c: Any, cwnd: float, beta: float, fast_convergence: bool) -> Any:
    """State after a loss at window ``cwnd``: ``W_max`` (fast convergence: ``trunc(cwnd (1
    + beta) / 2)`` below the last maximum), no epoch.

    >>> cubic_loss(cubic_start()._replace(last_max=50, epoch=3.0), 40.0, 0.7, True)[1:5]
    (34, 0, 0.0, -1.0)
    """
    seg_cwnd = int(cwnd)
    last_max = int(seg_cwnd * (1 + beta) / 2) if (
        seg_cwnd < c.last_max and fast_convergence) else seg_cwnd
    return c._replace(last_max=last_max, epoch=-1.0)


@net_function
def cubic_timeout(c: Any, cwnd: float, beta: float, fast_convergence: bool,
                  sacked: tuple[tuple[int, int], ...], una: int) -> Any:
    """State after a timeout at window ``cwnd``: ``W_max`` as :func:`cubic_loss` sets it
    (ns-3's ``ReTxTimeout`` calls ``GetSsThresh`` before ``CongestionStateSet(CA_LOSS)``,
    whose ``CubicReset`` leaves ``m_lastMaxCwnd`` alone), the counter ``cnt``, and the
    scoreboard ``sacked`` the sender forgets there (its own empty ``kept`` when it keeps
    it): what the receiver holds is not delivered again. The rest is reset.

    A timeout at 405 segments below a maximum of 579 (fast convergence: ``trunc(405 *
    1.7 / 2) = 344``):

    >>> c = cubic_timeout(Cubic(3, 579, 579, 2.0, 1.5, 0.05, 7, 40, (), 5, 60.0), 405.0,
    ...                   0.7, True, ((5, 9),), 2)
    >>> c == cubic_start()._replace(cnt=3, last_max=344, kept=((5, 9),))
    True
    """
    return cubic_start()._replace(cnt=c.cnt,
                                  last_max=cubic_loss(c, cwnd, beta, fast_convergence).last_max,
                                  kept=merge_sack(sacked, c.kept, una))


@net_function
def cubic_ack(c: Any, t: Any, a: Any, srtt: float, now: float, scaling: float, beta: float,
              friendly: bool, delta_s: float) -> Any:
    """State after ACK ``a`` of new data outside recovery, ``window`` the new window:
    ``PktsAcked`` (:func:`cubic_rtt`) then ``IncreaseWindow`` (:func:`cubic_grow`) by the
    segments it delivers; the kept scoreboard loses what the ACK passes."""
    grown = cubic_grow(cubic_rtt(c, srtt, now, delta_s), t.cwnd, t.ssthresh,
                       cubic_delivered(c, t, a), now, scaling, beta, friendly)
    return grown._replace(kept=merge_sack(c.kept, (), a.ack))


@net_function
def cubic_exit(c: Any, t: Any, a: Any, srtt: float, now: float, scaling: float, beta: float,
               friendly: bool, delta_s: float) -> Any:
    """State after ACK ``a`` that ends fast recovery, ``window`` the new window: ns-3's
    ``ProcessAck`` leaving ``CA_RECOVERY`` sets the window to ssthresh, then runs
    ``PktsAcked`` and ``IncreaseWindow`` with every segment the cumulative ACK passes,
    counted from the old head (the segments the scoreboard held included, unlike a new
    ACK's :func:`cubic_delivered`). The count goes into ``cnt`` whole: the window grows
    one segment on this ACK and the rest of the count grows it one segment on each of
    the next ACKs while ``cnt >= n``.

    >>> from tcpn.models.components.sender import Tcb
    >>> from tcpn.models.components.packets import Pkt
    >>> t = Tcb(40.0, 35.0, 100, 150, 150, 0, 0, True, 0, False, (), 0, False, 0)
    >>> ack = Pkt(flow=0, dst=0, seq=-1, ack=150, size=40, ts=0.0, echo=0.0, ecn=0,
    ...           ece=False, cwr=False, retx=False, sack=())
    >>> c = cubic_exit(cubic_start()._replace(last_max=50, delay_min=0.04), t, ack, 0.05,
    ...                1.0, 0.4, 0.7, True, 0.01)
    >>> c.window, c.n, c.cnt
    (36.0, 35, 15)
    """
    grown = cubic_grow(cubic_rtt(c, srtt, now, delta_s), t.ssthresh, t.ssthresh,
                       a.ack - t.una, now, scaling, beta, friendly)
    return grown._replace(kept=merge_sack(c.kept, (), a.ack))


def cubic_sender_net(config: SenderConfig, scaling: float = 0.4, beta: float = 0.7,
                     fast_convergence: bool = True, friendly: bool = True,
                     name: str = "sender") -> PetriNet:
    """The CUBIC sender module on the NewReno sender ``config.variant`` (``newreno`` or
    ``sack``); ports ``out`` and ``acks``."""
    if config.variant not in ("newreno", "sack") or config.uses_ecn:
        raise InputError(f"cubic of flow {config.flow}: recovery {config.variant!r} "
                         f"{'with ECN ' if config.uses_ecn else ''}is not modelled (newreno "
                         "or sack, without ECN)")
    net = sender_net(config, name)
    net.declare(CUBIC_C=scaling, CUBIC_BETA=beta, FAST_CONV=fast_convergence,
                FRIENDLY=friendly, CUBIC_DELTA=CUBIC_DELTA_S, cubic_rtt=cubic_rtt,
                cubic_loss=cubic_loss, cubic_ssthresh=cubic_ssthresh,
                cubic_timeout=cubic_timeout, cubic_ack=cubic_ack, cubic_exit=cubic_exit)
    net.add_place(Place("cubic", CUBIC, initial=[cubic_start()]))
    ack = "cubic_ack(c, t, a, r2.srtt, now, CUBIC_C, CUBIC_BETA, FRIENDLY, CUBIC_DELTA)"
    window = f"({ack}).window"
    # only PktsAcked on an ACK that is also a duplicate
    sack = config.variant == "sack"
    ack = unless_withheld(sack, ack, "cubic_rtt(c, r2.srtt, now, CUBIC_DELTA)")
    window = unless_withheld(sack, window, "t.cwnd")
    track(net, "new_ack", "cubic", "c", ack)
    wrap_output(net, "new_ack", "tcb", f"({{base}})._replace(cwnd={window})")
    # the ACK that ends fast recovery grows the window as CUBIC (ns-3's IncreaseWindow),
    # not by the base sender's NewReno step (a fraction of a segment on CUBIC's window)
    exit_growth = config.exit_growth and "recovery_exit" in net.transitions
    if exit_growth:
        leave = "cubic_exit(c, t, a, r2.srtt, now, CUBIC_C, CUBIC_BETA, FRIENDLY, CUBIC_DELTA)"
        track(net, "recovery_exit", "cubic", "c", leave)
        wrap_output(net, "recovery_exit", "tcb", f"({{base}})._replace(cwnd=({leave}).window)")
    for tname in (t for t in NEW_DATA_ACKS if t in net.transitions and t != "new_ack"
                  and not (exit_growth and t == "recovery_exit")):
        track(net, tname, "cubic", "c", "cubic_rtt(c, r2.srtt, now, CUBIC_DELTA)")
    # SACK recovery enters at cwnd = ssthresh (RFC 6675), NewReno's inflates by DUPTHRESH
    inflation = "" if config.variant == "sack" else " + DUPTHRESH"
    track(net, "fast_retransmit", "cubic", "c", "cubic_loss(c, t.cwnd, CUBIC_BETA, FAST_CONV)")
    wrap_output(net, "fast_retransmit", "tcb",
                "({base})._replace(ssthresh=cubic_ssthresh(t.cwnd, CUBIC_BETA), "
                f"cwnd=cubic_ssthresh(t.cwnd, CUBIC_BETA){inflation})")
    # kept holds what the base sender's timeout forgets; with sack_keep it forgets nothing
    # and its scoreboard alone serves cubic_delivered: kept stays empty, and is passed as
    # what is forgotten (an empty list of runs; a literal () would be read as CPN ML's
    # unit by the export's type inference)
    forgotten = "c.kept" if config.sack_keep and config.variant == "sack" else "t.sacked"
    track(net, "timeout", "cubic", "c",
          f"cubic_timeout(c, t.cwnd, CUBIC_BETA, FAST_CONV, {forgotten}, t.una)")
    wrap_output(net, "timeout", "tcb",
                "({base})._replace(ssthresh=cubic_ssthresh(t.cwnd, CUBIC_BETA))")
    return net


# --------------------------------------------------------------------------- registration


class CubicParams(VariantParams):
    """CUBIC (RFC 9438) as ns-3.44's ``TcpCubic``: scaling factor ``c`` (``C``, 0.4),
    multiplicative decrease ``beta`` (``Beta``, 0.7), ``fast_convergence``
    (``FastConvergence``, on) and ``tcp_friendliness`` (``TcpFriendliness``, on: the
    Reno-friendly region). ``hystart`` is ns-3's ``HyStart`` (ns-3's default is on); the
    net lens does not model HyStart and runs only ``hystart: false``, tcpn's default, so
    both lenses leave slow start at the first loss."""

    variant: Literal["cubic"]
    c: float = Field(default=0.4, gt=0.0, allow_inf_nan=False)
    beta: float = Field(default=0.7, gt=0.0, lt=1.0)
    fast_convergence: bool = True
    tcp_friendliness: bool = True
    hystart: bool = False


def _sender(config: SenderConfig, params: CubicParams) -> PetriNet:
    return cubic_sender_net(config, float(params.c), float(params.beta),
                            params.fast_convergence, params.tcp_friendliness)


def _ns3(params: CubicParams) -> Ns3Congestion:
    return Ns3Congestion("ns3::TcpCubic", (
        ("C", repr(params.c)), ("Beta", repr(params.beta)),
        ("FastConvergence", str(params.fast_convergence).lower()),
        ("TcpFriendliness", str(params.tcp_friendliness).lower()),
        ("HyStart", str(params.hystart).lower())))


def _net_checks(params: CubicParams, tcp: Any) -> list[str]:
    problems = []
    if tcp.ecn:
        problems.append("tcp.ecn: the net lens's CUBIC has no ECN reaction (ns-3's TcpCubic "
                        "with ECN runs in the ns3 lens only)")
    if params.hystart:
        problems.append("params.hystart: CUBIC's HyStart (ns-3's delay and ACK-train "
                        "detection) is run by the ns3 lens only; hystart: false runs in both")
    return problems


register_variant("cubic", CubicParams, _sender, recovery="newreno", ns3=_ns3,
                 checks={"net": _net_checks},
                 unsupported={"fluid": "its window is a cubic function of the time since the "
                                       "last loss, not a rate law of the current RTT and "
                                       "loss: the fluid equations have no epoch clock; CUBIC's "
                                       "closed form is tcpn.solvers.closed_forms.cubic"})
