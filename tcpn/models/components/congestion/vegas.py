"""TCP Vegas, Modified Vegas (timestamp samples, clock skew) and Reno-friendly Vegas as sub-nets.

Each is a loss-based sender of :mod:`~tcpn.models.components.sender` (fast retransmit and
recovery, RTO, Karn's rule): NewReno's by default (ns-3's ``TcpVegas``), on the RFC 6675
scoreboard when SACK is on, or Reno's (``params.recovery: reno``: "losses are handled as
in Reno", study S1); with one more place,
``vegas``, holding a ``Vegas`` record, and a different window law on ``new_ack``:

* every ACK of new data gives an RTT sample and updates ``BaseRTT``, the smallest sample.
  As Brakmo and Peterson's Vegas (and ns-2's port of it), the sender times its own
  segments: the sample is ``now`` minus the send time of the *newest* segment the ACK
  covers, from the ``sent`` table of the ``Vegas`` record (first transmissions only:
  Karn's rule). Not the timestamp echo: RFC 7323 echoes the *earliest* segment an ACK
  covers, so with delayed ACKs a sample would carry the receiver's wait for the second
  segment of its pair, or, for the odd last segment of a flight, the wait for the next
  flight; the ACK that ends a round was often that one, and Vegas read a queue that did
  not exist and settled far below the bandwidth-delay product (``docs/validation.md``,
  vegas_2flows). With one ACK per segment both are the same;
* once per RTT, when the ACK acknowledges the first segment sent after the previous
  decision (``a.ack > round_end``), :func:`vegas_decision` compares
  ``Diff = (W / BaseRTT - W / RTT) * BaseRTT`` (segments queued) with ``alpha``/``beta``
  (congestion avoidance: +1 / -1 / unchanged per RTT) or
  ``gamma`` (slow start: leave it with ``W = min(W, W * BaseRTT / RTT + gamma)`` and
  ``ssthresh = max(2, min(ssthresh, W - 1))``, as ns-3's ``TcpVegas``, which also lowers
  ``ssthresh`` so on a decrease, keeping the connection in congestion avoidance);
* slow start grows +1 per ACK of new data only in every other RTT (the decision toggles
  ``grow``); congestion avoidance does not grow between decisions.
* with SACK, an ACK of new data that is also a duplicate (it SACKs new data) runs none of
  this: no sample, no decision, no growth (RFC 6675 5 step 3.4;
  :func:`~tcpn.models.components.sender.growth_withheld`).

``recovery_exit`` and ``timeout`` restart the round (``round_end = high``) so that the
first decision after a loss uses samples taken after it.

**Modified Vegas** (study S1, fix 2) reads each ACK as ``<ts, tr, ta>``: ``ts`` the sender's
clock when the newest segment the ACK covers left (the one whose arrival released the
ACK; with one ACK per segment, the echoed timestamp), ``tr = a.ts`` (receiver clock when
the ACK left),
``ta = now``; ``Tf0 = min(tr - ts)``, ``Tb0 = min(ta - tr)``, ``BaseRTT = Tf0 + Tb0`` and
the RTT of ``Diff`` is ``tr - ts + Tb0`` (forward queueing only). A constant receiver
offset cancels: with times and offsets exactly representable the trajectory is the same
bit for bit (``tests/test_tcp_delay_based.py``). With ``skew_estimation`` the sender also
estimates a linear receiver-clock drift ``s`` (``R(t) = (1 + s) t + To``) as Moon, Skelly
and Towsley (1999) do: minus the slope of the lower convex hull of the backward samples
``(ts, ta - tr)`` at the mean ``ts`` (their linear programme's optimum); samples are then
corrected by ``-/+ s * ts`` and the minima taken over the corrected lower hulls of both
directions. Only the ACK direction is used because Vegas itself keeps ``alpha`` to
``beta`` segments queued on the forward path after slow start: the floor of the forward
samples rises once and the forward hull's slope overestimates the drift (measured: 1.6e-3
for a true 2e-4 over 12 s; the backward hull gave 1.99e-4). Queueing of the ACKs that
persists (reverse-path congestion) biases the backward estimate the same way: a
limitation. The estimate is used once the samples span ``skew_min_span_s``.

**Reno-friendly (adaptive) Vegas** (study S4) keeps ``aveRTT = (1 - w) aveRTT + w RTT`` on
every sample and, in congestion avoidance, compares ``Diff`` with the adaptive target
``N = W - W * BaseRTT / aveRTT`` (:func:`adaptive_target`) instead of ``alpha``/``beta``.

>>> net = vegas_sender_net(SenderConfig(flow=0, dst=1), VegasLaw(kind="modified_vegas"))
>>> sorted(p for p in net.places if p not in ("start", "out", "acks"))
['rtt', 'tcb', 'timer', 'vegas']
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import Field, model_validator

from tcpn.errors import InputError
from tcpn.models.components.congestion.ns2_vegas import (
    add_fine_timer,
    add_ns2_loss_cut,
    fine_sent,
)
from tcpn.models.components.congestion.vegas_record import (
    VEGAS,
    Vegas,
    clock_sample,
    sent_once,
    sent_time,
    vegas_acked,
    vegas_sent,
    vegas_start,
)
from tcpn.models.components.extend import add_action, track, wrap_output
from tcpn.models.components.sender import (
    PARTIAL_ACKS,
    SenderConfig,
    retransmissions,
    sender_net,
    unless_withheld,
)
from tcpn.models.schema_base import FieldProblem, VariantParams
from tcpn.models.variant_registry import FluidLaw, Ns3Congestion, register_variant
from tcpn.petrinets import (
    PetriNet,
    Place,
)

__all__ = ["LOSS_CUTS", "RECOVERIES", "AdaptiveVegasParams", "VegasLaw", "VegasParams",
           "adaptive_target", "add_hull_point", "hull_floor", "lower_hull",
           "modified_vegas_on_ack", "mst_slope", "skew_vegas_on_ack", "slow_start_growth",
           "vegas_decision", "vegas_on_ack", "vegas_round", "vegas_sender_net"]


#: The loss-based senders the Vegas family runs on (``params.recovery`` and ``tcp.sack``).
RECOVERIES = ("reno", "newreno", "sack")
#: The window after a loss (``params.loss_cut``): the loss-based sender's halving, or
#: ns-2's Vegas rule (:func:`ns2_vegas_window`).
LOSS_CUTS = ("halve", "ns2")
#: Hull vertices kept per direction (the oldest go first); enough for hours of samples.
HULL_LIMIT = 64
#: Samples a round needs for a decision. One: the samples time the newest segment an ACK
#: covers, so delayed ACKs do not inflate them (ns-3 and Linux, which sample the echo,
#: ask for three and take the round's minimum).
MIN_ROUND_SAMPLES = 1


@dataclass(frozen=True)
class VegasLaw:
    """Which Vegas and its parameters (segments; ``weight`` of the adaptive EWMA)."""

    kind: str = "vegas"
    alpha: float = 1.0
    beta: float = 3.0
    gamma: float = 1.0
    weight: float = 0.125
    skew_estimation: bool = False
    skew_min_span_s: float = 5.0
    #: the window after a loss: ``halve`` (the loss-based sender's, Reno's and NewReno's)
    #: or ``ns2`` (ns-2's ``Agent/TCP/Vegas``: :func:`ns2_vegas_window`)
    loss_cut: str = "halve"
    #: ns-2's fine-grained retransmission (:func:`_fine_timer`), on ``loss_cut`` ``ns2``
    fine_timer: bool = False
    #: ns-2's ``ns_vegas_fix_level_`` (0-3), with ``fine_timer``: from 1 a timeout
    #: forgets the worry (:func:`_fine_timer`), from 3 the ACK that ends a recovery of
    #: exactly three duplicate ACKs deflates the window (:func:`ns2_exit_window`)
    fix_level: int = 3

    def __post_init__(self) -> None:
        if self.kind not in ("vegas", "modified_vegas", "adaptive_vegas"):
            raise InputError(f"vegas: kind {self.kind!r} is not vegas, modified_vegas or "
                             "adaptive_vegas")
        if not 0 <= self.alpha <= self.beta or self.gamma < 0:
            raise InputError(f"vegas: need 0 <= alpha <= beta and gamma >= 0, got alpha="
                             f"{self.alpha}, beta={self.beta}, gamma={self.gamma}")
        if not 0.0 < self.weight <= 1.0:
            raise InputError(f"adaptive vegas: weight must be in (0, 1], got {self.weight}")
        if self.skew_estimation and self.kind != "modified_vegas":
            raise InputError("vegas: skew_estimation needs kind modified_vegas (the <ts, tr, ta>"
                             " samples)")
        if self.loss_cut not in LOSS_CUTS:
            raise InputError(f"vegas: loss_cut {self.loss_cut!r} is not one of "
                             f"{', '.join(LOSS_CUTS)}")
        if self.fine_timer and self.loss_cut != "ns2":
            raise InputError("vegas: fine_timer (ns-2's) runs on loss_cut ns2")
        if self.fix_level not in range(4):
            raise InputError(f"vegas: fix_level (ns-2's ns_vegas_fix_level_) is 0, 1, 2 or 3, "
                             f"not {self.fix_level}")
        if self.fix_level < 3 and not self.fine_timer:
            raise InputError("vegas: fix_level below 3 (ns-2's) runs with fine_timer")

    @property
    def adaptive(self) -> bool:
        """Whether the bounds of ``Diff`` are adaptive Vegas's target."""
        return self.kind == "adaptive_vegas"


def lower_hull(points: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
    """The lower convex hull of ``points`` (sorted by x, collinear points dropped).

    >>> lower_hull(((0.0, 1.0), (1.0, 0.5), (2.0, 2.0), (3.0, 1.0)))
    ((0.0, 1.0), (1.0, 0.5), (3.0, 1.0))
    """
    hull: list[tuple[float, float]] = []
    for x, y in sorted(set(points)):
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append((x, y))
    return tuple(hull)


def mst_slope(hull: tuple[tuple[float, float], ...], mean_x: float) -> float:
    """Slope of the hull edge over ``mean_x`` (Moon-Skelly-Towsley's LP optimum; 0 if none).

    >>> round(mst_slope(((0.0, 0.0), (10.0, 0.001), (20.0, 0.004)), 12.0), 12)
    0.0003
    """
    for (x1, y1), (x2, y2) in itertools.pairwise(hull):
        if x1 <= mean_x <= x2:
            return (y2 - y1) / (x2 - x1)
    if len(hull) >= 2:  # mean outside the hull's span: the nearest edge
        (x1, y1), (x2, y2) = hull[:2] if mean_x < hull[0][0] else hull[-2:]
        return (y2 - y1) / (x2 - x1)
    return 0.0


def add_hull_point(hull: tuple[tuple[float, float], ...], x: float,
                   y: float) -> tuple[tuple[float, float], ...]:
    """``hull`` with ``(x, y)`` added, its last :data:`HULL_LIMIT` vertices."""
    return lower_hull((*hull, (x, y)))[-HULL_LIMIT:]


def hull_floor(hull: tuple[tuple[float, float], ...], slope: float) -> float:
    """The smallest ``y - slope * x`` over the vertices of ``hull`` (the minimum of
    samples corrected for a drift ``slope`` lies on their lower hull).

    >>> hull_floor(((0.0, 1.0), (10.0, 1.5)), 0.1)
    0.5
    """
    return min(y - slope * x for x, y in hull)


def vegas_on_ack(v: Any, a: Any, now: float, valid: bool, weight: float) -> Any:
    """The ``Vegas`` record after the RTT sample of ACK ``a`` arriving at ``now`` (Vegas and
    adaptive Vegas, whose ``aveRTT`` moves by ``weight``).

    ``a.echo`` is when the sampled segment left (the net passes the newest segment the
    ACK covers, :func:`sent_time`), ``valid`` says the sample may be used (that segment
    was sent once).

    >>> from tcpn.models.components.congestion.vegas_record import VegasAck
    >>> v = vegas_on_ack(vegas_start(), VegasAck(echo=1.0, ts=0.0), 1.25, True, 0.5)
    >>> v = vegas_on_ack(v, VegasAck(echo=2.0, ts=0.0), 2.5, True, 0.5)
    >>> v.base_rtt, v.rtt, v.ave_rtt
    (0.25, 0.5, 0.375)
    """
    if not valid:
        return v
    sample = clock_sample(now, a.echo)
    base = sample if v.n == 0 else min(v.base_rtt, sample)
    ave = sample if v.n == 0 else (1.0 - weight) * v.ave_rtt + weight * sample
    return v._replace(n=v.n + 1, base_rtt=base, rtt=sample, samples=v.samples + 1, ave_rtt=ave)


def modified_vegas_on_ack(v: Any, a: Any, now: float, valid: bool) -> Any:
    """Modified Vegas's sample ``<ts, tr, ta>``: ``ts = a.echo``, ``tr = a.ts``, ``ta = now``.

    >>> from tcpn.models.components.congestion.vegas_record import VegasAck
    >>> v = modified_vegas_on_ack(vegas_start(), VegasAck(echo=1.0, ts=7.25), 1.5, True)
    >>> v.tf0, v.tb0, v.base_rtt, v.rtt
    (6.25, -5.75, 0.5, 0.5)
    """
    if not valid:
        return v
    fwd, bwd = a.ts - a.echo, now - a.ts
    tf0 = fwd if v.n == 0 else min(v.tf0, fwd)
    tb0 = bwd if v.n == 0 else min(v.tb0, bwd)
    return v._replace(n=v.n + 1, tf0=tf0, tb0=tb0, base_rtt=tf0 + tb0, rtt=fwd + tb0, fwd=fwd,
                      samples=v.samples + 1)


def skew_vegas_on_ack(v: Any, a: Any, now: float, valid: bool, min_span_s: float) -> Any:
    """Modified Vegas's sample with the receiver's clock drift estimated (module docstring)
    once the samples span ``min_span_s``.

    >>> from tcpn.models.components.congestion.vegas_record import VegasAck
    >>> v = skew_vegas_on_ack(vegas_start(), VegasAck(echo=1.0, ts=7.25), 1.5, True, 5.0)
    >>> v.tf0, v.tb0, v.skew, v.fhull
    (6.25, -5.75, 0.0, ((1.0, 6.25),))
    """
    if not valid:
        return v
    ts, tr, ta = a.echo, a.ts, now
    fwd, bwd = tr - ts, ta - tr
    n = v.n + 1
    first = ts if v.n == 0 else v.first_ts
    fhull, bhull = add_hull_point(v.fhull, ts, fwd), add_hull_point(v.bhull, ts, bwd)
    sum_ts = v.sum_ts + ts
    skew = -mst_slope(bhull, sum_ts / n) if ts - first >= min_span_s else 0.0
    tf0, tb0 = hull_floor(fhull, skew), hull_floor(bhull, -skew)
    return v._replace(n=n, tf0=tf0, tb0=tb0, base_rtt=tf0 + tb0,
                      rtt=fwd - skew * ts + tb0, fwd=fwd, samples=v.samples + 1,
                      first_ts=first, sum_ts=sum_ts, skew=skew, fhull=fhull, bhull=bhull)


def adaptive_target(cwnd: float, base_rtt: float, ave_rtt: float) -> float:
    """Reno-friendly Vegas's target ``N = W - W * BaseRTT / aveRTT`` (segments queued),
    with ``aveRTT`` on the samples' clock of whole nanoseconds (:func:`clock_sample`).

    The law is ``+1`` when ``Diff < N``, ``-1`` when ``Diff > N`` (S4 eq. 6), that is,
    when the latest RTT is below or above its mean; with a standing queue the samples are
    equal and the mean reaches them only to the last bit of a double, so each round's
    decision was that bit's (study S4, w = 0.5: ns-3 held the flow alone at 46 segments,
    the net swung 44-48 on differences of 1e-16 s). A mean within half a nanosecond of
    the sample is the sample, and ``N`` is computed as ``Diff`` is (``W * (1 - BaseRTT /
    RTT)``, :func:`vegas_decision`), so that an equal mean gives ``Diff == N`` to the
    last bit: no change, in both lenses (``W - W * BaseRTT / aveRTT`` rounds differently,
    and the sign of that rounding decided the round).

    >>> round(adaptive_target(20.0, 0.1, 0.125), 12)
    4.0
    >>> adaptive_target(24.0131, 0.05, 0.0958639995) == 24.0131 * (1.0 - 0.05 / 0.095864)
    True
    """
    return cwnd * (1.0 - base_rtt / (float(round(ave_rtt * 1e9)) * 1e-9))


def vegas_decision(cwnd: float, ssthresh: float, base_rtt: float, rtt: float, low: float,
                   high: float, gamma: float) -> tuple[float, float, bool]:
    """The once-per-RTT decision: ``(cwnd, ssthresh, still_in_slow_start)``; in congestion
    avoidance ``Diff`` is kept between ``low`` and ``high`` (Vegas's alpha and beta, or
    adaptive Vegas's target for both).

    >>> vegas_decision(10.0, 5.0, 0.1, 0.105, 1, 3, 1)   # Diff = 10 * (1 - 0.1/0.105) < 1: +1
    (11.0, 5.0, False)
    >>> vegas_decision(10.0, 9.5, 0.1, 0.15, 1, 3, 1)    # Diff = 3.33 > 3: -1, ssthresh <= W - 1
    (9.0, 8.0, False)
    >>> vegas_decision(10.0, 64.0, 0.1, 0.125, 1, 3, 1)  # slow start, Diff = 2 > gamma: leave
    (9.0, 8.0, False)
    """
    diff = cwnd * (1.0 - base_rtt / rtt)
    if cwnd < ssthresh:
        if diff > gamma:
            left = min(cwnd, cwnd * base_rtt / rtt + gamma)
            return left, max(2.0, min(ssthresh, left - 1.0)), False
        return cwnd, ssthresh, True
    if diff < low:
        return cwnd + 1.0, ssthresh, False
    if diff > high:
        lower = max(2.0, cwnd - 1.0)
        return lower, max(2.0, min(ssthresh, lower - 1.0)), False
    return cwnd, ssthresh, False


def vegas_round(v: Any, t: Any, ack: int, alpha: float, beta: float, gamma: float,
                adaptive: bool) -> tuple[Any, float, float]:
    """``(v, cwnd, ssthresh)`` after an ACK of new data up to ``ack`` whose sample is in
    ``v``: the decision when the ACK ends a round (:func:`vegas_decision`, with
    :func:`adaptive_target` for both bounds when ``adaptive``), then slow start's growth.

    >>> from tcpn.models.components.congestion.vegas_record import VegasTcb
    >>> v = vegas_start()._replace(base_rtt=0.1, rtt=0.105, samples=1, round_end=5)
    >>> t = VegasTcb(cwnd=10.0, ssthresh=5.0, nxt=20)
    >>> v2, cwnd, ssthresh = vegas_round(v, t, 6, 1.0, 3.0, 1.0, False)
    >>> cwnd, ssthresh, v2.round_end, v2.samples
    (11.0, 5.0, 20, 0)
    """
    if ack > v.round_end and v.samples >= MIN_ROUND_SAMPLES:
        low = adaptive_target(t.cwnd, v.base_rtt, v.ave_rtt) if adaptive else alpha
        high = low if adaptive else beta
        cwnd, ssthresh, slow = vegas_decision(t.cwnd, t.ssthresh, v.base_rtt, v.rtt, low,
                                              high, gamma)
        return slow_start_growth(v._replace(samples=0, round_end=t.nxt,
                                            grow=slow and not v.grow), cwnd, ssthresh)
    return slow_start_growth(v, t.cwnd, t.ssthresh)


def slow_start_growth(v: Any, cwnd: float, ssthresh: float) -> tuple[Any, float, float]:
    """Vegas's slow start: +1 per ACK of new data in every other RTT (``v.grow``)."""
    grown = cwnd + 1.0 if cwnd < ssthresh and v.grow else cwnd
    return v, float(grown), float(ssthresh)


def _law_action(law: VegasLaw) -> Any:
    """The code action of ``new_ack`` for ``law``: its sample rule, then :func:`vegas_round`.

    Specialised to the law so that its parameters are constants of the action (the CPN
    Tools export writes them as such).
    """
    def plain_sample(v: Any, a: Any, now: float, valid: bool) -> Any:
        return vegas_on_ack(v, a, now, valid, law.weight)

    def skew_sample(v: Any, a: Any, now: float, valid: bool) -> Any:
        return skew_vegas_on_ack(v, a, now, valid, law.skew_min_span_s)

    sample = modified_vegas_on_ack if law.kind == "modified_vegas" else plain_sample
    if law.skew_estimation:
        sample = skew_sample

    def vegas_law(v: Any, t: Any, a: Any, now: float) -> dict[str, Any]:
        # the sample is the newest segment the ACK covers, timed by the sender's own clock
        # (whether it is on record, not whether its time is >= 0: a send time is a CLOCK
        # value, kept relative to the clock in relative state spaces, so it may be < 0)
        sent = sent_time(v, a.ack - 1)
        known = sent_once(v, a.ack - 1)
        sampled = vegas_acked(sample(v, a._replace(echo=sent), now, known), a.ack)
        v2, cwnd, ssthresh = vegas_round(sampled, t, a.ack, law.alpha, law.beta, law.gamma,
                                         law.adaptive)
        return {"v2": v2, "vegas_cwnd": cwnd, "vegas_ssthresh": ssthresh}
    return vegas_law


def vegas_sender_net(config: SenderConfig, law: VegasLaw, name: str = "sender") -> PetriNet:
    """The Vegas sender module on the loss-based sender ``config.variant`` (its recovery:
    ``newreno``; ``sack``, NewReno with the RFC 6675 scoreboard; or ``reno``, study S1's).

    Ports as :func:`~tcpn.models.components.sender.sender_net`: ``out`` and ``acks``. Every
    transition that sends a segment again forgets its send time (Karn's rule); the ACKs of
    new data during recovery drop what they acknowledge from the send record.

    >>> net = vegas_sender_net(SenderConfig(flow=0, dst=1, variant="sack"), VegasLaw())
    >>> [a.inscription for a in net.arcs_of("sack_retransmit") if a.place == "vegas"][1]
    'vegas_sent(v, sack_hole(t, DUPTHRESH), now, False)'
    """
    if config.variant not in RECOVERIES:
        raise InputError(f"vegas sender of flow {config.flow}: recovery {config.variant!r} "
                         f"is not one of {', '.join(RECOVERIES)}")
    # the window leaves recovery at ssthresh: its growth is the law's, which the ACK ending
    # recovery does not run (the ns3 lens's SampledVegas skips it too)
    net = sender_net(replace(config, exit_growth=False), name)
    net.declare(Vegas=Vegas)
    net.add_place(Place("vegas", VEGAS, initial=[vegas_start()]))
    # an ACK that is also a duplicate runs no law: no sample, no decision, no growth (the
    # ns3 lens's SampledVegas runs it all in IncreaseWindow, not called in CA_DISORDER)
    sack = config.variant == "sack"
    track(net, "new_ack", "vegas", "v", unless_withheld(sack, "v2", "v"))
    add_action(net, "new_ack", _law_action(law), ("v2", "vegas_cwnd", "vegas_ssthresh"))
    wrap_output(net, "new_ack", "tcb",
                f"({{base}})._replace(cwnd={unless_withheld(sack, 'vegas_cwnd', 't.cwnd')}, "
                f"ssthresh={unless_withheld(sack, 'vegas_ssthresh', 't.ssthresh')})")
    sent = "fine_sent" if law.fine_timer else "vegas_sent"
    net.declare(vegas_sent=vegas_sent, vegas_acked=vegas_acked, fine_sent=fine_sent)
    track(net, "send", "vegas", "v", f"{sent}(v, t.nxt, now, t.nxt >= t.high)")
    resent = retransmissions(net)
    for tname in dict.fromkeys((*PARTIAL_ACKS, *resent)):
        if tname not in net.transitions:
            continue
        record = "vegas_acked(v, a.ack)" if tname in PARTIAL_ACKS else "v"
        track(net, tname, "vegas", "v", f"{sent}({record}, {resent[tname]}, now, False)"
              if tname in resent else record)
    track(net, "recovery_exit", "vegas", "v",
          "vegas_acked(v, a.ack)._replace(samples=0, round_end=t.high)")
    track(net, "timeout", "vegas", "v", "v._replace(samples=0, round_end=t.high, sent=())")
    if law.loss_cut == "ns2":
        add_ns2_loss_cut(net, config)
    if law.fine_timer:
        add_fine_timer(net, law.fix_level)
    return net


# --------------------------------------------------------------------------- registration


class VegasParams(VariantParams):
    """Vegas and Modified Vegas thresholds, in segments (ns-3 ``TcpVegas`` defaults 2, 4, 1;
    Brakmo and Peterson used 1, 3, 1: set them explicitly to reproduce the study), and the
    loss recovery: ``newreno`` (ns-3's ``TcpVegas``; on the RFC 6675 scoreboard when
    ``tcp.sack`` is on, as ns-3) or ``reno`` (Reno's recovery, no SACK scoreboard; the
    S1 and S4 reproductions use it). ``loss_cut``: the window after a loss, ``halve``
    (the recovery's own) or ``ns2``, ns-2's ``Agent/TCP/Vegas`` rule on Reno's or
    NewReno's recovery without SACK (a cut by a quarter, once per window:
    :func:`ns2_vegas_window`; the ns3 lens runs it in ``tcpn::SampledVegas``, with a
    timeout restarting from 2 segments on tcpn's socket). ``fine_timer`` (with
    ``loss_cut: ns2`` and ``recovery: reno``) adds ns-2's fine-grained retransmission: a
    segment older than Vegas's own timeout goes again on the first or second duplicate
    ACK, or on one of the two ACKs of new data after a retransmission
    (:func:`fine_expired`). ``ns2_fix_level`` (with ``fine_timer``) is ns-2's
    ``ns_vegas_fix_level_``, which ns-2.35 binds without a default (its value is whatever
    the agent's memory held, a warning says so): below 3 the ACK that ends a recovery of
    exactly three duplicate ACKs leaves the window inflated (:func:`ns2_exit_window`),
    below 1 a timeout leaves the worry of ``fine_timer``; 3, the default, applies both
    fixes. Neither study states Vegas's loss reaction. ``law`` (variant ``vegas``):
    ``brakmo`` decides on the sender's own RTT samples, as Brakmo and Peterson and ns-2
    (both lenses: the ns3 lens runs the net model's law in C++, ``tcpn::Vegas``); ``ns3``
    runs ns-3.44's ``TcpVegas``, which decides on the smoothed RTT (ns3 lens only)."""

    variant: Literal["vegas", "modified_vegas"]
    recovery: Literal["reno", "newreno"] = "newreno"
    loss_cut: Literal["halve", "ns2"] = "halve"
    fine_timer: bool = False
    ns2_fix_level: int = Field(default=3, ge=0, le=3)
    law: Literal["brakmo", "ns3"] = "brakmo"
    alpha: int = Field(default=2, ge=0)
    beta: int = Field(default=4, ge=0)
    gamma: int = Field(default=1, ge=0)
    skew_estimation: bool = False
    skew_min_span_s: float = Field(default=5.0, ge=0.0)

    @model_validator(mode="after")
    def _ordered(self) -> VegasParams:
        if self.beta < self.alpha:
            raise FieldProblem(("beta",), f"beta ({self.beta}) must be >= alpha ({self.alpha})")
        if self.skew_estimation and self.variant != "modified_vegas":
            raise FieldProblem(("skew_estimation",), "skew_estimation needs the <ts, tr, ta> "
                                "samples of variant modified_vegas")
        if self.fine_timer and (self.loss_cut != "ns2" or self.recovery != "reno"):
            raise FieldProblem(("fine_timer",), "fine_timer is ns-2's Agent/TCP/Vegas "
                                "retransmission rule: it needs loss_cut ns2 and recovery reno "
                                "(ns-2's Vegas ends recovery at the first new ACK)")
        if self.ns2_fix_level < 3 and not self.fine_timer:
            raise FieldProblem(("ns2_fix_level",), "ns2_fix_level is ns-2's Agent/TCP/Vegas "
                                "ns_vegas_fix_level_: it needs ns-2's Vegas whole (fine_timer, "
                                "loss_cut ns2, recovery reno)")
        if self.law == "ns3" and self.loss_cut == "ns2":
            raise FieldProblem(("loss_cut",), "loss_cut ns2 is a rule of tcpn's Vegas; law "
                                "ns3 (ns-3's TcpVegas) keeps its own")
        if self.law == "ns3" and self.variant != "vegas":
            raise FieldProblem(("law",), f"law ns3 (ns-3's TcpVegas) is a law of variant "
                                f"vegas, not {self.variant}")
        return self


class AdaptiveVegasParams(VegasParams):
    """Reno-friendly Vegas: EWMA ``weight`` of the average RTT (not stated in the study;
    tcpn's default 0.125 is RFC 6298's SRTT gain)."""

    variant: Literal["adaptive_vegas"]  # type: ignore[assignment]
    weight: float = Field(default=0.125, gt=0.0, le=1.0)


def _sender(kind: str) -> Any:
    def build(config: SenderConfig, params: VegasParams) -> PetriNet:
        law = VegasLaw(kind=kind, alpha=float(params.alpha), beta=float(params.beta),
                       gamma=float(params.gamma),
                       weight=float(getattr(params, "weight", 0.125)),
                       skew_estimation=params.skew_estimation,
                       skew_min_span_s=params.skew_min_span_s, loss_cut=params.loss_cut,
                       fine_timer=params.fine_timer, fix_level=params.ns2_fix_level)
        return vegas_sender_net(config, law)
    return build


def _ns3(params: VegasParams) -> Ns3Congestion:
    """ns-3's ``TcpVegas`` (``law: ns3``) or tcpn's C++ Vegas family (``cpp/variants.h``:
    the net model's law, samples of the sender's own segments)."""
    thresholds = (("Alpha", str(params.alpha)), ("Beta", str(params.beta)),
                  ("Gamma", str(params.gamma)))
    if params.law == "ns3":
        return Ns3Congestion("ns3::TcpVegas", thresholds)
    own = {"vegas": "tcpn::Vegas", "modified_vegas": "tcpn::ModifiedVegas",
           "adaptive_vegas": "tcpn::AdaptiveVegas"}[params.variant]
    weight = (("Weight", repr(params.weight)),) if isinstance(params, AdaptiveVegasParams) \
        else ()
    cut = (("Ns2LossCut", "true"),) if params.loss_cut == "ns2" else ()
    # ns-2's fine-grained retransmission: the timer here, the resends by Rfc5681Socket
    fine = (("Ns2FineTimer", "true"),) if params.fine_timer else ()
    level = (("Ns2FixLevel", str(params.ns2_fix_level)),) if params.ns2_fix_level < 3 else ()
    attributes = (*thresholds, ("MinRoundSamples", str(MIN_ROUND_SAMPLES)), *weight, *cut,
                  *fine, *level)
    return Ns3Congestion(own, attributes)


def _fluid(params: VegasParams) -> FluidLaw:
    """Low, Peterson and Wang's Vegas; a loss leaves half the window, or three quarters on
    ns-2's rule (``loss_cut: ns2``, :func:`ns2_vegas_window` read as a fluid)."""
    kept = 0.75 if params.loss_cut == "ns2" else 0.5
    return FluidLaw("vegas", float(params.alpha), float(params.beta), float(params.gamma),
                    decrease_factor=kept)


def _fluid_checks(params: VegasParams, tcp: Any) -> list[str]:
    """What the fluid model of Vegas cannot express."""
    if params.fine_timer:
        return ["params.fine_timer: ns-2's fine-grained retransmissions time each segment; "
                "the fluid model has no retransmission timer (its Vegas answers a loss one "
                "RTT later and never times out)"]
    return []


def _net_checks(params: VegasParams, tcp: Any) -> list[str]:
    problems = ["params.law ns3: ns-3's TcpVegas (decisions on the smoothed RTT) is run by "
                "the ns3 lens only"] if params.law == "ns3" else []
    return problems + _loss_cut_problems(params, tcp)


def _loss_cut_problems(params: VegasParams, tcp: Any) -> list[str]:
    """What keeps ``params.loss_cut: ns2`` from running, in every lens."""
    if params.loss_cut == "ns2" and tcp.sack:
        return ["params.loss_cut ns2 runs on Reno's or NewReno's recovery without SACK "
                "(ns-2's Vegas has no scoreboard): set tcp.sack: false"]
    return []


def _ns3_checks(params: VegasParams, tcp: Any) -> list[str]:
    """What tcpn's ns-3 Vegas family cannot run (see ``cpp/variants.h``)."""
    problems = _loss_cut_problems(params, tcp)
    if params.variant == "modified_vegas":
        if not tcp.timestamps:
            problems.append("variant modified_vegas reads the receiver's TSval: it needs "
                            "tcp.timestamps: true")
        if params.skew_estimation:
            problems.append("params.skew_estimation: the ns3 lens's Modified Vegas has no "
                            "clock-skew estimator")
    return problems


for _kind, _params in (("vegas", VegasParams), ("modified_vegas", VegasParams),
                       ("adaptive_vegas", AdaptiveVegasParams)):
    register_variant(
        _kind, _params, _sender(_kind), recovery=lambda params: str(params.recovery),
        ns3=_ns3, fluid=None if _kind == "adaptive_vegas" else _fluid,
        checks={"net": _net_checks, "ns3": _ns3_checks, "fluid": _fluid_checks},
        unsupported={"fluid": "the fluid model has no adaptive target"}
        if _kind == "adaptive_vegas" else None)
