"""The TCP property library: named formulas over a scenario net's places, and their registry.

A :class:`Property` is a name, a sentence, the places it reads (relative to one flow's
modules: ``snd.tcb`` is ``flow0.snd.tcb`` for flow 0), a function building its formula
(:mod:`tcpn.petrinets.checking.formulas` objects, often
:class:`~tcpn.petrinets.checking.formulas.Predicate`
atoms over token values) from a :class:`FlowRoles`, the fairness it assumes, and which loss
budgets it speaks about (``no_spurious_retransmission`` only means something when nothing
may be lost). :data:`PROPERTIES` holds the library; :func:`register_property` adds one:

>>> from tcpn.petrinets.checking.formulas import AG
>>> @register_property("cwnd_at_most_64", "cwnd never exceeds 64 segments",
...                    places=("snd.tcb",))
... def cwnd_at_most_64(flow):
...     return AG(flow.holds("cwnd <= 64", lambda m: flow.tcb(m).cwnd <= 64))
>>> "cwnd_at_most_64" in PROPERTIES
True
>>> del PROPERTIES["cwnd_at_most_64"]

Observer places, which :func:`tcpn.models.verification.check.observe` adds beside
the components (the components themselves are unchanged: their arcs only gain a counter),
make the history visible to state formulas: ``flowI.app`` (the segments passed to the
application, in the order the receiver released them: the arriving segment, then those it
had buffered), ``flowI.retx`` (segments sent again), ``flowI.reductions`` (firings that
lowered ``cwnd``), ``flowI.syns`` (SYNs sent), ``flowI.rules`` (Vegas decisions outside
the rules), ``flowI.blind_cuts`` (Vegas cuts with the data path's queues empty) and
``verify.drops`` (queue drops).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.sender import sack_pipe
from tcpn.petrinets import PetriNet
from tcpn.petrinets.checking.fairness import Fairness
from tcpn.petrinets.checking.formulas import AF, AG, EF, Deadlock, Formula, Predicate

__all__ = ["PROPERTIES", "FlowRoles", "Property", "register_property",
           "retransmission_fairness", "select_properties", "share_ratio_of"]

Marking = Mapping[str, Any]


@dataclass(frozen=True)
class FlowRoles:
    """Where one flow's parts live in a scenario net, and the transfer's parameters.

    ``prefix`` is the flow's module prefix (``flow0``); ``segments`` the transfer's
    length; ``window_segments`` the receive window (``WINDOW``); ``queues`` maps each
    interface's ``fifo`` place to ``(limit, unit)``; ``loss_places`` the ``frames`` places
    of the lossy links; ``drops`` the observer counting queue drops; ``name`` the flow's id;
    ``flows`` every flow of the scenario (itself included), which cross-flow properties
    read.
    """

    net: PetriNet
    prefix: str
    segments: int
    window_segments: int
    queues: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    loss_places: tuple[str, ...] = ()
    drops: str = "verify.drops"
    name: str = ""
    flows: tuple[FlowRoles, ...] = field(default=(), repr=False, compare=False)
    #: a bulk sender's space: only the window observers (:mod:`~tcpn.models.verification.window`)
    bulk: bool = False
    #: the ``W`` of ``flowI.since_loss`` (a bulk space checked with a cwnd target)
    cwnd_target_segments: int | None = None
    #: the ``R`` of ``window_share`` (``--share-ratio R``): no window above ``R`` times another
    share_ratio: float | None = None

    def place(self, role: str) -> str:
        """The net's place for ``role`` (``snd.tcb`` -> ``flow0.snd.tcb``); an
        :class:`InputError` names it when the net has none."""
        name = f"{self.prefix}.{role}"
        if name not in self.net.places:
            raise InputError(f"place {name!r} (role {role!r}) is not in net {self.net.name}: "
                             "this scenario's components do not have it")
        return name

    def value(self, marking: Marking, role: str) -> Any:
        """The value of the one token on ``role``'s place (``None`` when it is empty)."""
        tokens = marking[f"{self.prefix}.{role}"]
        return tokens[0].value if tokens else None

    def tcb(self, marking: Marking) -> Any:
        """The sender's ``Tcb`` record (``None`` before the connection opens)."""
        return self.value(marking, "snd.tcb")

    def delivered(self, marking: Marking) -> tuple[int, ...]:
        """The segments passed to the application so far, in order."""
        return tuple(self.value(marking, "app"))

    def lost(self, marking: Marking) -> int:
        """Packets lost so far: link losses (the ``frames`` counters) and queue drops."""
        link = sum(tokens[0].value[1] for place in self.loss_places
                   if (tokens := marking[place]))
        drops = marking[self.drops]
        return link + (drops[0].value if drops else 0)

    def complete(self, marking: Marking) -> bool:
        """Every segment delivered and acknowledged, or the connection given up."""
        failed = f"{self.prefix}.snd.failed"
        if marking.get(failed):
            return True
        t = self.tcb(marking)
        return (t is not None and t.una >= self.segments
                and len(self.delivered(marking)) == self.segments)

    def holds(self, name: str, test: Callable[[Marking], bool]) -> Predicate:
        """An atom named ``flowI: name`` testing the marking."""
        return Predicate(f"{self.prefix}: {name}", lambda marking, _clock: test(marking))

    def avoiding(self, marking: Marking) -> bool:
        """Whether the flow is open, not complete, and in congestion avoidance: ``cwnd >=
        ssthresh`` (RFC 5681 section 3.1: slow start is ``cwnd < ssthresh``)."""
        t = self.tcb(marking)
        return t is not None and not self.complete(marking) and t.cwnd >= t.ssthresh


@dataclass(frozen=True)
class Property:
    """A named property: its formula over a flow's places, and what it assumes."""

    name: str
    description: str
    places: tuple[str, ...]
    build: Callable[[FlowRoles], Formula]
    fairness: Callable[[FlowRoles], Fairness | None] = lambda _flow: None
    #: whether the property speaks about a run with this many data and ACK losses
    budgets: Callable[[int, int], bool] = lambda _data, _ack: True
    assumes: str = ""
    #: a cross-flow property reads every flow (``flow.flows``), not only the one named
    cross: bool = False
    #: a bulk property reads the window observers of a bulk space (and only runs there)
    bulk: bool = False

    def formula(self, flow: FlowRoles) -> Formula:
        """The formula for ``flow``; an :class:`InputError` names a missing place (a bulk
        property's builder first names the observer it lacks)."""
        formula = self.build(flow) if self.bulk else None
        for each in (flow.flows or (flow,)) if self.cross else (flow,):
            for role in self.places:
                each.place(role)
        return formula if formula is not None else self.build(flow)

    def applies_to(self, flow: FlowRoles) -> bool:
        """Whether the flow's net has every place the property reads."""
        every = (flow.flows or (flow,)) if self.cross else (flow,)
        return all(f"{each.prefix}.{role}" in flow.net.places
                   for each in every for role in self.places)


PROPERTIES: dict[str, Property] = {}


def register_property(name: str, description: str, places: Sequence[str] = (), *,
                      fairness: Callable[[FlowRoles], Fairness | None] | None = None,
                      budgets: Callable[[int, int], bool] | None = None,
                      assumes: str = "", cross: bool = False, bulk: bool = False
                      ) -> Callable[[Callable[[FlowRoles], Formula]],
                                    Callable[[FlowRoles], Formula]]:
    """Decorator: register the formula builder it decorates as property ``name``
    (``cross``: it reads every flow, ``flow.flows``, and needs none named; ``bulk``: it
    reads a bulk space's window observers)."""
    def register(build: Callable[[FlowRoles], Formula]) -> Callable[[FlowRoles], Formula]:
        PROPERTIES[name] = Property(name, description, tuple(places), build,
                                    fairness or (lambda _flow: None),
                                    budgets or (lambda _data, _ack: True), assumes, cross,
                                    bulk)
        return build
    return register


def select_properties(name: str) -> list[Property]:
    """``all`` (every property), or the one named; an unknown name is an
    :class:`InputError` listing the library."""
    if name == "all":
        return list(PROPERTIES.values())
    if name not in PROPERTIES:
        raise InputError(f"--property {name!r}: no such property (known: "
                         f"{', '.join(PROPERTIES)}, or all)")
    return [PROPERTIES[name]]


def retransmission_fairness(flow: FlowRoles) -> Fairness:
    """Weak fairness of the sender's timer and retransmissions (a timer that stays armed
    expires; a repair that stays enabled happens)."""
    names = [f"{flow.prefix}.snd.{t}" for t in ("timeout", "fast_retransmit", "partial_ack",
                                               "later_partial_ack", "sack_retransmit",
                                               "syn_timeout", "give_up")]
    return Fairness(weak=tuple(n for n in names if n in flow.net.transitions))


@register_property("delivered_once_in_order",
                   "every segment is delivered to the application exactly once and in order",
                   places=("app",))
def _delivered_once_in_order(flow: FlowRoles) -> Formula:
    def prefix(marking: Marking) -> bool:
        delivered = flow.delivered(marking)
        return delivered == tuple(range(len(delivered))) and len(delivered) <= flow.segments
    return AG(flow.holds("delivered in order, none twice", prefix)) & AF(flow.holds(
        f"all {flow.segments} delivered",
        lambda m: len(flow.delivered(m)) == flow.segments))


@register_property("no_deadlock_but_completion",
                   "no dead marking other than completion (all delivered and acknowledged, "
                   "or the handshake given up)",
                   places=("app", "snd.tcb"))
def _no_deadlock(flow: FlowRoles) -> Formula:
    return AG(Deadlock().implies(flow.holds("complete", flow.complete)))


@register_property("completes",
                   "the transfer completes (or the handshake gives up) on every fair path",
                   places=("app", "snd.tcb"), fairness=retransmission_fairness,
                   assumes="weak fairness of the sender's timers and retransmissions")
def _completes(flow: FlowRoles) -> Formula:
    return AF(flow.holds("complete", flow.complete))


@register_property("no_spurious_retransmission",
                   "no segment is sent again before some packet was lost",
                   places=("retx",), budgets=lambda data, ack: data == 0 and ack == 0,
                   assumes="nothing is lost by the links (queue drops count as losses)")
def _no_spurious(flow: FlowRoles) -> Formula:
    return AG(flow.holds("retransmission only after a loss",
                         lambda m: flow.value(m, "retx") == 0 or flow.lost(m) > 0))


@register_property("flight_within_windows", "the flight size never exceeds min(cwnd, rwnd) "
                   "(nxt - una; RFC 6675's pipe in SACK recovery, as the sender counts it)",
                   places=("snd.tcb",))
def _flight(flow: FlowRoles) -> Formula:
    send = f"{flow.prefix}.snd.send"
    dupthresh = (int(flow.net.scope_of(send).get("DUPTHRESH", 3))
                 if send in flow.net.transitions else 3)
    scoreboard = f"{flow.prefix}.snd.sack_retransmit" in flow.net.transitions

    def within(marking: Marking) -> bool:
        t = flow.tcb(marking)
        if t is None:
            return True
        flight = sack_pipe(t, dupthresh) if scoreboard and t.inrec else t.nxt - t.una
        return flight <= min(t.cwnd, flow.window_segments)
    return AG(flow.holds("flight <= min(cwnd, rwnd)", within))


@register_property("queue_within_limit", "no queue ever holds more than its limit")
def _queue(flow: FlowRoles) -> Formula:
    def within(marking: Marking) -> bool:
        for place, (limit, unit) in flow.queues.items():
            _head, packets, size_bytes, _empty_since = marking[place][0].value
            if (packets if unit == "packets" else size_bytes) > limit:
                return False
        return True
    return AG(flow.holds("every queue within its limit", within))


@register_property("ssthresh_at_least_2", "ssthresh never falls below 2 segments",
                   places=("snd.tcb",))
def _ssthresh(flow: FlowRoles) -> Formula:
    return AG(flow.holds("ssthresh >= 2",
                         lambda m: (t := flow.tcb(m)) is None or t.ssthresh >= 2))


@register_property("vegas_window_rules", "Vegas: in congestion avoidance each round's "
                   "decision moves cwnd by at most one segment",
                   places=("snd.vegas", "rules"))
def _vegas(flow: FlowRoles) -> Formula:
    return AG(flow.holds("no decision outside the rules",
                         lambda m: flow.value(m, "rules") == 0))


@register_property("vegas_cuts_on_forward_queue",
                   "Vegas: no congestion-avoidance decision lowers cwnd while every queue on "
                   "the flow's data path is empty (a cut its forward path does not explain)",
                   places=("snd.vegas", "blind_cuts"))
def _vegas_blind(flow: FlowRoles) -> Formula:
    return AG(flow.holds("no cut with the data path's queues empty",
                         lambda m: flow.value(m, "blind_cuts") == 0))


@register_property("tcp_l_keeps_window_on_link_loss",
                   "TCP-L never reduces cwnd when every loss is a link loss",
                   places=("snd.tcpl", "reductions"))
def _tcp_l(flow: FlowRoles) -> Formula:
    def kept(marking: Marking) -> bool:
        drops = marking[flow.drops]
        return bool(drops and drops[0].value) or flow.value(marking, "reductions") == 0
    return AG(flow.holds("no reduction while only links lose", kept))


@register_property("handshake_settles",
                   "the handshake establishes the connection, or gives up after exactly the "
                   "configured SYN retries", places=("snd.tcb", "snd.failed", "syns"),
                   fairness=retransmission_fairness,
                   assumes="weak fairness of the SYN timer")
def _handshake(flow: FlowRoles) -> Formula:
    connect = f"{flow.prefix}.snd.connect"
    if connect not in flow.net.transitions:
        raise InputError(f"property handshake_settles: net {flow.net.name} has no transition "
                         f"{connect!r} (its sender models no handshake)")
    retries = int(flow.net.scope_of(connect)["SYN_RETRIES"])
    failed = flow.place("snd.failed")
    settled = AF(flow.holds("established or given up",
                            lambda m: flow.tcb(m) is not None or bool(m[failed])))
    return settled & AG(flow.holds(f"given up only after {retries} SYNs",
                                   lambda m: not m[failed] or flow.value(m, "syns") == retries))


def _every(flow: FlowRoles) -> tuple[FlowRoles, ...]:
    return flow.flows or (flow,)


def _all_retransmitting(flow: FlowRoles) -> Fairness:
    """Weak fairness of every flow's timers and retransmissions."""
    return Fairness(weak=tuple(t for each in _every(flow)
                               for t in retransmission_fairness(each).weak))


@register_property("all_flows_complete",
                   "every flow's transfer completes (or its handshake gives up) on every fair "
                   "path", places=("app", "snd.tcb"), fairness=_all_retransmitting,
                   assumes="weak fairness of every sender's timers and retransmissions",
                   cross=True)
def _all_complete(flow: FlowRoles) -> Formula:
    every = _every(flow)
    return AF(Predicate("every flow complete",
                        lambda m, _clock: all(each.complete(m) for each in every)))


@register_property("no_flow_starves",
                   "from every reachable state, each flow that has not completed can still "
                   "complete, whatever the others do", places=("app", "snd.tcb"), cross=True)
def _no_starvation(flow: FlowRoles) -> Formula:
    formula: Formula | None = None
    for each in _every(flow):
        done = each.holds("complete", each.complete)
        term = AG((~done).implies(EF(done)))
        formula = term if formula is None else formula & term
    assert formula is not None
    return formula


def share_ratio_of(flow: FlowRoles, name: str) -> float:
    """The ``R`` of ``window_share`` and ``share_settles``; an :class:`InputError` names
    the property when it is not given."""
    if flow.share_ratio is None:
        raise InputError(f"property {name}: its ratio R is not given (--share-ratio R, "
                         "share_ratio=R: no flow's window above R times another's)")
    return flow.share_ratio


@register_property("window_share",
                   "while every flow is in congestion avoidance (cwnd >= ssthresh) and none "
                   "has completed, no flow's cwnd exceeds R times another's (--share-ratio R;"
                   " with one path RTT, the throughput ratio)", places=("app", "snd.tcb"),
                   cross=True)
def _window_share(flow: FlowRoles) -> Formula:
    return AG(_shared(flow, "window_share"))


def _shared(flow: FlowRoles, name: str) -> Predicate:
    """``max cwnd <= R x min cwnd`` wherever every flow is in congestion avoidance, none
    complete (true elsewhere)."""
    every = _every(flow)
    ratio = share_ratio_of(flow, name)

    def within(marking: Marking) -> bool:
        if not all(each.avoiding(marking) for each in every):
            return True
        windows = [each.tcb(marking).cwnd for each in every]
        return max(windows) <= ratio * min(windows)
    return Predicate(f"in congestion avoidance, max cwnd <= {ratio:g} x min cwnd",
                     lambda m, _clock: within(m))


@register_property("share_settles",
                   "the windows settle within R of each other: on every path some moment with"
                   " every flow in congestion avoidance and none complete is reached after "
                   "which every such moment has max cwnd <= R x min cwnd (--share-ratio R)",
                   places=("app", "snd.tcb"), cross=True)
def _share_settles(flow: FlowRoles) -> Formula:
    every = _every(flow)
    joint = Predicate("every flow in congestion avoidance, none complete",
                      lambda m, _clock: all(each.avoiding(m) for each in every))
    return AF(joint & AG(_shared(flow, "share_settles")))
