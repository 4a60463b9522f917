"""ns-2's ``Agent/TCP/Vegas`` (ns-2.35 ``tcp/tcp-vegas.cc``) on tcpn's Vegas senders.

The studies' simulator reacts to a loss in its own way, and each part is a field of a
Vegas flow's ``params``:

* ``loss_cut: ns2``: a fast retransmit cuts the window by a quarter (by half for a segment
  already resent, to 2 below 4), only if it has not changed since that segment left
  (:func:`ns2_vegas_window`, :func:`add_ns2_loss_cut`);
* ``fine_timer``: a segment older than Vegas's own timeout goes again without waiting
  for three duplicate ACKs (:func:`add_fine_timer`, rules F1-F6 in the helpers'
  docstrings);
* ``ns2_fix_level``: ns-2's ``ns_vegas_fix_level_``, which ns-2.35 binds without a
  default (:func:`ns2_exit_window`).

The ns3 lens runs the same rules (``tcpn::SampledVegas`` and ``tcpn::Rfc5681Socket`` in
``cpp/variants.h``); ``tests/test_vegas_fine_timer.py`` and
``tests/test_tcp_recovery_variants.py`` check both lenses against each other and by hand.
"""

from __future__ import annotations

from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.congestion.vegas_record import (
    clock_sample,
    forget_segment,
    sent_once,
    sent_time,
    vegas_sent,
)
from tcpn.models.components.extend import track, wrap_output
from tcpn.models.components.sender import (
    FINE_RETRANSMITS,
    RETRANSMITTED,
    SenderConfig,
    data_segment,
)
from tcpn.petrinets import P_HIGH, UNIT, PetriNet, Place
from tcpn.petrinets import Transition as T
from tcpn.petrinets.net_functions import net_function

__all__ = ["add_fine_timer", "add_ns2_loss_cut", "fine_expired", "fine_inflated",
           "fine_new_ack", "fine_retransmitted", "fine_sent", "fine_timed", "last_sent",
           "ns2_exit_window", "ns2_vegas_cuts", "ns2_vegas_window", "worried_resend",
           "worried_tcb"]

@net_function
def ns2_vegas_cuts(v: Any, t: Any) -> bool:
    """Whether ns-2's Vegas cuts its window at this retransmission by duplicate ACKs: not
    for a segment first sent before the window last changed there (``t_cwnd_changed_ <
    sendTime`` in ns-2's ``tcp-vegas.cc``, read on sequence numbers: the segments from
    ``cut_seq`` on were first sent after it); a segment already resent is taken as resent
    after it.

    >>> from tcpn.models.components.congestion.vegas_record import VegasTcb, vegas_start
    >>> v = vegas_sent(vegas_start(), 4, 0.5, True)._replace(cut_seq=5)
    >>> ns2_vegas_cuts(v, VegasTcb(cwnd=8.0, ssthresh=9.0, nxt=9, una=4))
    False
    >>> ns2_vegas_cuts(v._replace(cut_seq=4), VegasTcb(cwnd=8.0, ssthresh=9.0, nxt=9, una=4))
    True
    """
    return not sent_once(v, t.una) or t.una >= v.cut_seq


@net_function
def ns2_vegas_window(v: Any, t: Any) -> float:
    """The window ns-2's ``Agent/TCP/Vegas`` keeps after a loss detected by duplicate
    ACKs (``tcp-vegas.cc``, ``recv``): ``win = int(cwnd)`` (``window()``); when
    :func:`ns2_vegas_cuts`, 2 segments if ``win <= 3``, else half of it if the lost segment
    had been sent more than once, else ``win - (win >> 2)``, a cut by a quarter; else
    ``win`` itself. The window leaves fast recovery there (``vegas_inflate_cwnd``:
    ``v_newcwnd_ = win``, ``cwnd_ = win + dupacks_``; ns-2 then sets ``ssthresh_ = 2``,
    keeping Vegas in congestion avoidance, as ``ssthresh`` = this window does here).

    >>> from tcpn.models.components.congestion.vegas_record import VegasTcb, vegas_start
    >>> v = vegas_sent(vegas_start(), 4, 0.5, True)
    >>> ns2_vegas_window(v, VegasTcb(cwnd=9.5, ssthresh=20.0, nxt=12, una=4))   # 9 - 9 // 4
    7.0
    >>> ns2_vegas_window(vegas_start(), VegasTcb(cwnd=9.5, ssthresh=20.0, nxt=12, una=4))
    4.0
    >>> ns2_vegas_window(v, VegasTcb(cwnd=3.9, ssthresh=20.0, nxt=12, una=4))
    2.0
    >>> ns2_vegas_window(v._replace(cut_seq=5), VegasTcb(cwnd=8.5, ssthresh=9.0, nxt=12, una=4))
    8.0
    """
    win = int(t.cwnd)
    if not ns2_vegas_cuts(v, t):
        return float(win)
    if win <= 3:
        return 2.0
    if not sent_once(v, t.una):
        return float(win >> 1)
    return float(win - (win >> 2))


@net_function
def ns2_exit_window(t: Any, deflated: Any, deflate_from: int) -> Any:
    """The control block ``deflated`` the ACK that ends ns-2's Vegas recovery leaves
    (``tcp-vegas.cc``, ``recv``: ``cwnd_ = v_newcwnd_`` when the window was inflated), or
    that block with the window kept as it was: ns-2 deflates only after ``deflate_from``
    duplicate ACKs or more (``dupacks_ > NUMDUPACKS``; with ``ns_vegas_fix_level_ >= 3``
    also ``dupacks_ == NUMDUPACKS``) and a window above the one to restore (``cwnd_ >
    v_newcwnd_``, here ``ssthresh``). ``t`` is the block before the ACK.

    >>> from tcpn.models.components.congestion.vegas_record import VegasTcb
    >>> inflated = VegasTcb(cwnd=10.0, ssthresh=7.0, nxt=20, una=12)._replace(dupacks=3)
    >>> ns2_exit_window(inflated, inflated._replace(cwnd=7.0), 4).cwnd  # fix level < 3
    10.0
    >>> ns2_exit_window(inflated, inflated._replace(cwnd=7.0), 3).cwnd
    7.0
    """
    if t.dupacks >= deflate_from and t.cwnd > t.ssthresh:
        return deflated
    return deflated._replace(cwnd=t.cwnd)


@net_function
def fine_sent(v: Any, seq: int, now: float, fresh: bool) -> Any:
    """:func:`vegas_sent`, and a resend's time kept in ``resent``: ns-2's fine-grained timer
    (``v_sendtime_``) times every transmission, a resend too.

    >>> from tcpn.models.components.congestion.vegas_record import vegas_start
    >>> v = fine_sent(fine_sent(vegas_start(), 0, 0.5, True), 0, 2.0, False)
    >>> v.sent, v.resent
    ((), ((0, 2.0),))
    """
    if fresh:
        return vegas_sent(v, seq, now, True)
    return v._replace(sent=forget_segment(v.sent, seq),
                      resent=(*forget_segment(v.resent, seq), (seq, now)))


@net_function
def fine_timed(v: Any, ack: int, now: float) -> Any:
    """``v`` with ns-2's fine-grained timer after an ACK of new data up to ``ack`` at
    ``now``: the sample of segment ``ack - 1`` if it was sent once (``v_sa_``, ``v_sd_``,
    ``v_timeout_`` of ``tcp-vegas.cc``, in seconds: ``srtt = v_sa_ / 8``, ``rttvar = v_sd_ /
    4``, gains 1/8 and 1/4, timeout ``(srtt + 2 rttvar) * 17/16``). The first sample
    starts ``srtt`` at the sample and ``rttvar`` at a quarter of it (ns-2: ``v_sa_ = 8 rtt,
    v_sd_ = rtt`` from the first ACK's time) before the update.

    >>> from tcpn.models.components.congestion.vegas_record import vegas_start
    >>> v = fine_timed(vegas_sent(vegas_start(), 0, 0.0, True), 1, 0.08)
    >>> round(v.fine_srtt, 9), round(v.fine_rttvar, 9), round(v.fine_rto, 9)
    (0.08, 0.015, 0.116875)
    """
    if not sent_once(v, ack - 1):
        return v
    sample = clock_sample(now, sent_time(v, ack - 1))
    srtt = sample if v.fine_srtt < 0.0 else v.fine_srtt
    rttvar = sample / 4.0 if v.fine_srtt < 0.0 else v.fine_rttvar
    err = sample - srtt
    srtt = srtt + err / 8.0
    rttvar = rttvar + (abs(err) - rttvar) / 4.0
    return v._replace(fine_srtt=srtt, fine_rttvar=rttvar,
                      fine_rto=(srtt + 2.0 * rttvar) * 17.0 / 16.0)


def last_sent(v: Any, seq: int) -> float:
    """When segment ``seq`` last left: its latest resend, else its only transmission
    (:func:`sent_time`, -1 if unknown).

    >>> from tcpn.models.components.congestion.vegas_record import vegas_start
    >>> last_sent(fine_sent(vegas_start(), 3, 0.25, True), 3)
    0.25
    """
    for s, time in v.resent:
        if s == seq:
            return float(time)
    return sent_time(v, seq)


@net_function
def fine_expired(v: Any, seq: int, now: float) -> bool:
    """Whether segment ``seq`` left (its latest transmission) at least the fine-grained
    timeout ago (ns-2's ``vegas_expire``); a segment not on record has not.

    >>> from tcpn.models.components.congestion.vegas_record import vegas_start
    >>> v = fine_sent(vegas_start(), 3, 1.0, True)._replace(fine_rto=0.25)
    >>> fine_expired(v, 3, 1.25), fine_expired(v, 3, 1.2), fine_expired(v, 4, 9.0)
    (True, False, False)
    """
    known = sent_once(v, seq) or any(s == seq for s, _ in v.resent)
    return known and clock_sample(now, last_sent(v, seq)) >= v.fine_rto


@net_function
def worried_resend(v: Any, ack: int, now: float, high: int) -> bool:
    """Whether an ACK of new data up to ``ack`` sends segment ``ack`` again: one of the
    ``worried`` ACKs after a retransmission, and that segment, sent, has expired by the
    timeout after this ACK's sample (ns-2's ``v_worried_`` check in ``recv``)."""
    return v.worried > 0 and ack < high and fine_expired(fine_timed(v, ack, now), ack, now)


@net_function
def fine_new_ack(v: Any, after: Any, ack: int, now: float, resend: bool) -> Any:
    """``after`` (the record an ACK of new data leaves by the other rules, derived from
    ``v``) with the fine timer's sample of the ACK (:func:`fine_timed`) and its worry
    spent: one fewer worried ACK when it sends the next segment again (``resend``), else
    none (ns-2: ``--v_worried_``, and ``v_worried_ = 0`` when nothing had expired)."""
    timed = fine_timed(v, ack, now)
    return after._replace(fine_srtt=timed.fine_srtt, fine_rttvar=timed.fine_rttvar,
                          fine_rto=timed.fine_rto, worried=v.worried - 1 if resend else 0)


@net_function
def fine_retransmitted(after: Any, v: Any, t: Any) -> Any:
    """``after`` with what a retransmission of the head by duplicate ACKs does to the fine
    timer (ns-2's branch ``expired >= 0 || dupacks_ == NUMDUPACKS``): the timeout backed
    off, doubled for a segment already sent more than once, else by an eighth; and the
    next ``min(2, nxt - una + 1)`` ACKs of new data worried (``v_worried_ = MIN(2,
    t_seqno_ - last_ack_)``: ns-2 numbers an ACK by the last segment received, one below
    ``una``).

    >>> from tcpn.models.components.congestion.vegas_record import VegasTcb, vegas_start
    >>> v = vegas_sent(vegas_start(), 4, 0.5, True)._replace(fine_rto=0.2)
    >>> a = fine_retransmitted(v, v, VegasTcb(cwnd=8.0, ssthresh=9.0, nxt=9, una=4))
    >>> round(a.fine_rto, 9), a.worried
    (0.225, 2)
    """
    rto = v.fine_rto * 9.0 / 8.0 if sent_once(v, t.una) else v.fine_rto * 2.0
    return after._replace(fine_rto=rto, worried=min(2, t.nxt - t.una + 1))


@net_function
def fine_inflated(t: Any, window: int) -> float:
    """The window of a retransmission inside recovery, read after the duplicate ACK that
    found it due inflated ``cwnd`` by one: ns-2's ``win = window()`` before that, the
    inflated window in whole segments, at most the receive window; no cut, since the
    segment left after the window last changed.

    >>> from tcpn.models.components.congestion.vegas_record import VegasTcb
    >>> fine_inflated(VegasTcb(cwnd=19.0, ssthresh=15.0, nxt=30), 64)
    18.0
    """
    return float(int(min(t.cwnd - 1.0, float(window))))


@net_function
def worried_tcb(t: Any, dupthresh: int) -> Any:
    """``t`` back in recovery after the worried resend of its head: the window kept as the
    next new ACK's (ns-2 deflates to it then), the duplicate ACKs counted from the
    threshold (``dupacks_ = NUMDUPACKS``), the segment resent (Karn's rule)."""
    return t._replace(inrec=True, dupacks=dupthresh, ssthresh=t.cwnd,
                      highrxt=max(t.highrxt, t.una + 1))


def add_ns2_loss_cut(net: PetriNet, config: SenderConfig) -> None:
    """ns-2's Vegas reaction to a loss (:func:`ns2_vegas_window`) on Reno's or NewReno's
    recovery: the fast retransmit enters recovery at that window, inflated by the three
    duplicate ACKs (ns-2's ``cwnd_ = v_newcwnd_ + dupacks_``, cut or not), and marks the
    window changed (``cut_seq``, ns-2's ``t_cwnd_changed_``); a timeout restarts from 2
    segments (``v_slowstart_``) with the segments in flight counted as sent before the
    change. ns-2's fine-grained timer is ``fine_timer`` (:func:`_fine_timer`). ns-2 counts
    a segment sent at the very instant of the change as sent before it (its send time is
    not below ``t_cwnd_changed_``); the sequence numbers here count the segments sent
    after the retransmission at that instant as sent after it."""
    if config.variant not in ("reno", "newreno"):
        raise InputError(f"vegas sender of flow {config.flow}: params.loss_cut ns2 runs on "
                         f"Reno's or NewReno's recovery without SACK (ns-2's Vegas has no "
                         f"scoreboard), not {config.variant!r}")
    net.declare(ns2_vegas_cuts=ns2_vegas_cuts, ns2_vegas_window=ns2_vegas_window)
    wrap_output(net, "fast_retransmit", "tcb",
                "({base})._replace(ssthresh=ns2_vegas_window(v, t), cwnd="
                "ns2_vegas_window(v, t) + DUPTHRESH)")
    wrap_output(net, "fast_retransmit", "vegas", "({base})._replace(cut_seq=t.nxt)")
    wrap_output(net, "timeout", "tcb", "({base})._replace(cwnd=2.0)")
    wrap_output(net, "timeout", "vegas", "({base})._replace(cut_seq=t.high)")


def add_fine_timer(net: PetriNet, fix_level: int) -> None:
    """ns-2's fine-grained retransmission (``params.fine_timer``, ``tcp-vegas.cc``'s
    ``recv``) on the ns-2 loss cut of Reno's recovery. Every transmission is timed
    (:func:`fine_sent`), every ACK of new data samples the fine timer (:func:`fine_timed`),
    and a segment whose latest transmission is older than its timeout
    (:func:`fine_expired`) goes again without waiting for three duplicate ACKs. The ACK
    that finds it due leaves a token on ``fine_due`` or ``worried_due`` (the decision reads
    the clock, which a guard may not), and the retransmission is the next firing, at the
    same instant (high priority):

    * ``fine_retransmit``: the first or second duplicate ACK found the head expired (one
      that a fast retransmit may follow, ``una >= recover``): a fast retransmit at ns-2's
      window, inflated by the duplicate ACKs so far, counted as three from then on;
    * ``fine_recovery_retransmit``: a duplicate ACK in recovery found the retransmission
      itself expired: it goes again, the window the inflated one in whole segments, not
      cut (:func:`fine_inflated`), inflated again by the duplicate ACKs;
    * ``worried_retransmit``: one of the first two ACKs of new data after a
      retransmission by duplicate ACKs found the next segment expired
      (:func:`worried_resend`): it goes again, back in recovery at the window the ACK left
      (:func:`worried_tcb`).

    Each retransmission by duplicate ACKs (the three-duplicate one too) backs the fine
    timeout off (:func:`fine_retransmitted`) and restarts the retransmission timer with the
    current RTO (ns-2's ``reset_rtx_timer(1, 0)``); a timeout forgets the resends, and the
    worry from ``fix_level`` 1 on (``ns_vegas_fix_level_ >= 1``); below ``fix_level`` 3 the
    ACK that ends a recovery of exactly three duplicate ACKs leaves the window inflated
    (:func:`ns2_exit_window`). Not modelled: ns-2
    sends a segment already resent more than once again at the third duplicate ACK after
    its fine retransmission."""
    net.declare(fine_timed=fine_timed, fine_expired=fine_expired,
                worried_resend=worried_resend, fine_new_ack=fine_new_ack,
                fine_retransmitted=fine_retransmitted, fine_inflated=fine_inflated,
                worried_tcb=worried_tcb)
    net.add_place(Place("fine_due", UNIT))
    net.add_place(Place("worried_due", UNIT))
    worried = "worried_resend(v, a.ack, now, t.high)"
    for tname in ("new_ack", "recovery_exit"):
        wrap_output(net, tname, "vegas", f"fine_new_ack(v, {{base}}, a.ack, now, {worried})")
        net.add_output("worried_due", tname, "()", when=worried)
    expired = "fine_expired(v, t.una, now)"
    for tname, condition in (("dup_ack", f"t.una >= t.recover and {expired}"),
                             ("recovery_dup_ack", expired)):
        net.add_read("vegas", tname, "v")
        net.add_output("fine_due", tname, "()", when=condition)
    early, in_recovery, worried_resent = FINE_RETRANSMITS
    resent = "fine_sent(v, t.una, now, False)"
    retransmissions_of = {
        early: ("fine_due", "not t.inrec",
                "t._replace(ssthresh=ns2_vegas_window(v, t), cwnd=ns2_vegas_window(v, t) + "
                "t.dupacks, dupacks=DUPTHRESH, inrec=True, recover=t.high, "
                "highrxt=t.una + 1, partial=False)",
                f"{resent}._replace(cut_seq=t.nxt)"),
        in_recovery: ("fine_due", "t.inrec",
                      "t._replace(ssthresh=fine_inflated(t, WINDOW), cwnd=fine_inflated(t, "
                      "WINDOW) + t.dupacks, highrxt=max(t.highrxt, t.una + 1))",
                      f"{resent}._replace(cut_seq=t.nxt)"),
        worried_resent: ("worried_due", None, "worried_tcb(t, DUPTHRESH)", resent)}
    for tname, (due, guard, tcb, vegas) in retransmissions_of.items():
        net.add_transition(T(tname, guard=guard, priority=P_HIGH))
        net.add_input(due, tname, "()")
        track(net, tname, "tcb", "t", tcb)
        track(net, tname, "vegas", "v", vegas)
        net.add_output("out", tname, data_segment(RETRANSMITTED[tname], "False"))
    for tname in ("fast_retransmit", early, in_recovery):
        wrap_output(net, tname, "vegas", "fine_retransmitted({base}, v, t)")
        net.add_read("rtt", tname, "r")
        net.add_reset("timer", tname)
        net.add_output("timer", tname, "()", delay="r.rto")
    forgets = "worried=0, " if fix_level >= 1 else ""
    wrap_output(net, "timeout", "vegas", f"({{base}})._replace({forgets}resent=())")
    if fix_level < 3:
        net.declare(ns2_exit_window=ns2_exit_window)
        wrap_output(net, "recovery_exit", "tcb", "ns2_exit_window(t, {base}, DUPTHRESH + 1)")
