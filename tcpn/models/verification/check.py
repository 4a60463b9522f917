"""Checking the property library on a scenario's verification net, within a loss budget.

:func:`verify` answers whether a property of :mod:`tcpn.models.properties` holds for the
flow of a one-flow scenario whatever the network loses within a budget of ``losses`` data
segments and ``ack_losses`` other packets (ACKs, SYN, SYN-ACK) per run: it builds the
scenario's verification net (:func:`tcpn.models.verification.verification_net`: the
simulator's components for a transfer of ``segments`` segments, every loss a bounded
choice, every simultaneous order explored), adds the observer places the properties read
(:func:`observe`), explores it once (in the ``clock`` asked) and model-checks each property's
formula under the fairness it assumes. A ``false`` comes with its path (a firing sequence
of the verification net, replayed by :meth:`VerificationNet.replay` in the simulator) and
the packets it loses, per link direction, numbered as a scripted loss list numbers them.

With ``segments=None`` the sender is a bulk one (relative clock): the observers are the
bounded ones of :mod:`tcpn.models.verification.window`, only the bulk properties
(:mod:`tcpn.models.bulk_properties`) run, the loss budget may be per window
(``per_flight``), and a counterexample's losses are numbered on its replay in the
simulator (:mod:`tcpn.models.verification.bulk_replay`).

>>> from tcpn.models.scenario import dumbbell
>>> result = verify(dumbbell(pairs=1, horizon_s=5.0), "delivered_once_in_order",
...                 segments=3, losses=1)
>>> result.answer, result.states > 100
('true', True)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tcpn.models.bulk_properties  # noqa: F401  (registers the bulk properties)
from tcpn.errors import InputError
from tcpn.models.components.sender import RETRANSMITTED
from tcpn.models.properties import PROPERTIES, FlowRoles, Property, select_properties
from tcpn.models.scenario import Scenario, load_scenario
from tcpn.models.verification import LossBudget, VerificationNet, verification_net
from tcpn.models.verification.bulk import DEFAULT_RTT_GRAIN_S
from tcpn.models.verification.flow_symmetry import asymmetric_atom, flow_symmetry, lift_evidence
from tcpn.models.verification.window import (
    OBSERVER_VARIABLE,
    add_window_observers,
    input_variable,
    output_expression,
)
from tcpn.petrinets import INT, Firing, ListSet, PetriNet, Place
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.fairness import Fairness
from tcpn.petrinets.checking.formulas import Formula
from tcpn.petrinets.checking.verdicts import Verdict
from tcpn.petrinets.net import ArcKind
from tcpn.petrinets.statespace.space import StateSpace
from tcpn.petrinets.statespace.symmetry import Symmetry

__all__ = ["OBSERVER_VARIABLE", "PropertyNet", "PropertyResult", "observe", "property_net",
           "verify", "verify_all"]


@dataclass
class PropertyNet:
    """A verification net with the observer places added, and its flow's roles."""

    verification: VerificationNet
    flow: FlowRoles
    #: whether ``flow`` was named (or is the only one): per-flow properties need it
    named: bool = True

    @property
    def net(self) -> PetriNet:
        """The net explored (the verification net, observers included)."""
        return self.verification.net

    def replay(self, path: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Firing]:
        """Fire ``path`` in the simulator's own net (:meth:`VerificationNet.replay`), the
        observers' variables left out of each binding: the simulator takes the same steps."""
        return self.verification.replay([
            (transition, {k: v for k, v in binding.items()
                          if not k.startswith(OBSERVER_VARIABLE)})
            for transition, binding in path])


@dataclass
class PropertyResult:
    """The answer for one property, the space it was checked on, and its counterexample."""

    property: Property
    answer: str
    states: int = 0
    edges: int = 0
    dead: int = 0
    seconds: float = 0.0
    verdict: Verdict | None = None
    lost: dict[str, tuple[int, ...]] = field(default_factory=dict)
    reason: str = ""
    #: the flow exchanges the space was reduced by (``verify(..., symmetry=True)``), or ""
    symmetry: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (the counterexample as the checker's evidence)."""
        out: dict[str, Any] = {"property": self.property.name, "answer": self.answer,
                               "states": self.states, "edges": self.edges,
                               "dead_markings": self.dead,
                               "seconds": round(self.seconds, 3)}
        if self.reason:
            out["reason"] = self.reason
        if self.symmetry:
            out["symmetry"] = self.symmetry
        if self.answer == "false":
            out["lost_packets"] = {k: list(v) for k, v in self.lost.items()}
        if self.verdict is not None and self.verdict.evidence is not None:
            out["evidence"] = self.verdict.evidence.to_json()
        return out


def property_net(scenario: Scenario | str | Path, *, segments: int | None, losses: int = 0,
                 ack_losses: int = 0, links: tuple[str, ...] | None = None,
                 flow: str | None = None, delay_points: int | None = None,
                 clock: str = "absolute", per_flight: bool = False,
                 unbounded: bool = False, cwnd_target_segments: int | None = None,
                 rtt_grain_s: float = DEFAULT_RTT_GRAIN_S,
                 share_ratio: float | None = None) -> PropertyNet:
    """The verification net of ``scenario`` with the property observers of every flow;
    ``links`` (link directions ``"A->B"``) confines the losses to those directions, ``flow``
    (a connection's id, as ``tcpn run`` lists it) names the flow the per-flow properties
    speak of (needed when the scenario has several; an unknown one is an
    :class:`InputError` listing them); ``delay_points`` discretises random start times
    (:func:`~tcpn.models.verification.verification_net`); ``clock`` is the exploration's
    time (``"absolute"`` or ``"relative"``). ``segments=None`` is a bulk sender (relative
    clock only): ``per_flight`` makes the loss counts per window, ``unbounded`` lets every
    kind with a count above 0 be lost without limit, and ``cwnd_target_segments`` adds the
    ``since_loss`` observer (:mod:`tcpn.models.verification.window`); ``rtt_grain_s`` is
    the grain its RTT estimator is rounded to (:mod:`tcpn.models.verification.bulk`);
    ``share_ratio`` is the ``R`` of ``window_share`` (at least 1)."""
    if share_ratio is not None and not share_ratio >= 1.0:
        raise InputError(f"share ratio {share_ratio!r}: window_share's R must be a number >= "
                         "1 (no window above R times another's; below 1 no two windows pass)")
    if isinstance(scenario, str | Path):
        scenario = load_scenario(scenario)
    verification = verification_net(
        scenario, segments=segments,
        losses=LossBudget(losses, ack_losses, links, per_flight=per_flight,
                          unbounded=unbounded),
        delay_points=delay_points, clock=clock, rtt_grain_s=rtt_grain_s)
    ids = [f.id for f in verification.flows]
    if flow is not None and flow not in ids:
        raise InputError(f"--flow {flow!r}: scenario {scenario.name} has no such flow "
                         f"(flows: {', '.join(ids)})")
    roles = [replace(r, share_ratio=share_ratio)
             for r in observe(verification, cwnd_target_segments)]
    everyone = tuple(roles)
    roles = [replace(r, flows=everyone) for r in roles]
    chosen = roles[ids.index(flow)] if flow is not None else roles[0]
    return PropertyNet(verification, chosen, named=flow is not None or len(ids) == 1)


def _count(net: PetriNet, place: str, transition: str, increment: str) -> None:
    """Add ``increment`` to the counter on ``place`` at each firing of ``transition`` (a
    variable of its own per counter: two counters on one transition must not unify)."""
    variable = OBSERVER_VARIABLE + place.replace(".", "_")
    net.add_input(place, transition, variable)
    net.add_output(place, transition, f"{variable} + ({increment})")


def observe(verification: VerificationNet,
            cwnd_target_segments: int | None = None) -> list[FlowRoles]:
    """Add the observer places of :mod:`tcpn.models.properties` to the verification net
    (per connection ``i``: ``flow{i}.app``, ``flow{i}.retx``, ``flow{i}.reductions``,
    ``flow{i}.syns``, ``flow{i}.rules`` and ``flow{i}.blind_cuts`` for Vegas;
    ``verify.drops``) and return each
    connection's roles (each knowing all: ``FlowRoles.flows``). Each observer adds a
    counter arc pair to transitions that fire anyway: it enables and disables nothing.
    A bulk sender's net (``segments=None``) gets the bounded window observers instead
    (:func:`observe_bulk`)."""
    if verification.segments is None:
        return observe_bulk(verification, cwnd_target_segments)
    if cwnd_target_segments is not None:
        raise InputError("cwnd_target_segments: the since_loss observer is a bulk sender's "
                         "(segments=None); a finite transfer's properties read its counters")
    segments = verification.segments
    net = verification.net
    net.add_place(Place("verify.drops", INT, initial=[0]))
    queues, frames = _queue_observers(verification)
    roles = [_observe_flow(verification, segments, f"flow{i}", flow.id, queues, frames,
                           _data_fifos(verification, flow.data_queues, queues))
             for i, flow in enumerate(verification.flows)]
    everyone = tuple(roles)
    return [replace(r, flows=everyone) for r in roles]


def observe_bulk(verification: VerificationNet,
                 cwnd_target_segments: int | None = None) -> list[FlowRoles]:
    """The window observers of a bulk sender's net (``flowI.progress``, and
    ``flowI.since_loss`` with a cwnd target) and each connection's roles, marked ``bulk``.
    A target above a receive window is refused: ``cwnd`` is kept at most that window."""
    net = verification.net
    roles = []
    for i, flow in enumerate(verification.flows):
        prefix = f"flow{i}"
        window = int(net.scope_of(f"{prefix}.snd.send")["WINDOW"])
        if cwnd_target_segments is not None and not 1 <= cwnd_target_segments <= window:
            raise InputError(f"cwnd target {cwnd_target_segments!r}: observer since_loss of "
                             f"{flow.id} needs a target from 1 to its receive window "
                             f"({window} segments; cwnd is kept at most that)")
        add_window_observers(net, prefix, i, cwnd_target_segments)
        roles.append(FlowRoles(net, prefix, 0, window, name=flow.id, bulk=True,
                               cwnd_target_segments=cwnd_target_segments))
    everyone = tuple(roles)
    return [replace(r, flows=everyone) for r in roles]


def _data_fifos(verification: VerificationNet, data_queues: Sequence[str],
                queues: Mapping[str, tuple[int, str]]) -> tuple[str, ...]:
    """The ``fifo`` places of the queues a connection's data enters (those with a limit)."""
    fifos = []
    for queue in data_queues:
        role = verification.roles.get(f"{queue}.queue")
        if role is not None and role.places.get("fifo") in queues:
            fifos.append(role.places["fifo"])
    return tuple(fifos)


def _observe_flow(verification: VerificationNet, segments: int, prefix: str, flow_id: str,
                  queues: dict[str, tuple[int, str]], frames: tuple[str, ...],
                  data_fifos: tuple[str, ...] = ()) -> FlowRoles:
    """The observers of one connection (``prefix``: ``flow{i}``) and its roles
    (``data_fifos``: the queues its data enters, which ``blind_cuts`` reads)."""
    net = verification.net
    net.add_place(Place(f"{prefix}.app", ListSet(INT, name="Delivered"), initial=[()]))
    for counter in ("retx", "reductions", "syns"):
        net.add_place(Place(f"{prefix}.{counter}", INT, initial=[0]))
    rcv, tcb = f"{prefix}.rcv.rcv", f"{prefix}.snd.tcb"
    for name in list(net.transitions):
        if name.startswith(f"{prefix}.rcv."):
            old, new = input_variable(net, name, rcv), output_expression(net, name, rcv)
            data = input_variable(net, name, f"{prefix}.data")
            if old and new and data:
                app = f"{OBSERVER_VARIABLE}app"
                net.add_input(f"{prefix}.app", name, app)
                net.add_output(f"{prefix}.app", name,
                               f"{app} + (({data}.seq,) + tuple(range({data}.seq + 1, "
                               f"({new}).nxt)) if ({new}).nxt > {old}.nxt else ())")
        if name.startswith(f"{prefix}.snd."):
            local = name.removeprefix(f"{prefix}.snd.")
            sends = any(a.kind is ArcKind.OUTPUT and not a.place.startswith(f"{prefix}.snd.")
                        for a in net.arcs_of(name))
            if local in ("connect", "syn_timeout"):
                _count(net, f"{prefix}.syns", name, "1")
            if local == "timeout" or (local in RETRANSMITTED and sends):
                _count(net, f"{prefix}.retx", name, "1")
            old, new = input_variable(net, name, tcb), output_expression(net, name, tcb)
            if old and new:
                _count(net, f"{prefix}.reductions", name,
                       f"1 if ({new}).cwnd < {old}.cwnd else 0")
    _vegas_rules(net, prefix)
    _vegas_blind_cuts(net, prefix, data_fifos)
    send = f"{prefix}.snd.send"
    window = int(net.scope_of(send)["WINDOW"]) if send in net.transitions else 1 << 20
    return FlowRoles(net, prefix, segments, window, queues, frames,
                     name=flow_id)


def _queue_observers(verification: VerificationNet) -> tuple[dict[str, tuple[int, str]],
                                                              tuple[str, ...]]:
    """Count the queues' drops on ``verify.drops``; return each queue's ``fifo`` place with
    its limit and unit, and the links' ``frames`` places."""
    net = verification.net
    queues: dict[str, tuple[int, str]] = {}
    units = {f"{a}->{b}": str(getattr(direction.queue, "unit", "packets"))
             for link in verification.scenario.links for a, b, direction in link.directions()}
    frames = []
    for key, role in verification.roles.items():
        if role.kind == "queue":
            for name in role.transitions:  # drop-tail and RED overflows, policing...
                if role.events.get(name) == "drop":
                    _count(net, "verify.drops", name, "1")
            if "fifo" in role.places:
                limit = net.scope_of(role.transitions[0]).get("LIMIT")
                if limit is not None:
                    queues[role.places["fifo"]] = (int(limit), units.get(
                        key.removesuffix(".queue"), "packets"))
        if role.kind == "link" and "frames" in role.places:
            frames.append(role.places["frames"])
    return queues, tuple(frames)


def _vegas_rules(net: PetriNet, prefix: str) -> None:
    """``flow0.rules``: Vegas decisions in congestion avoidance that moved ``cwnd`` by more
    than one segment (a decision: an ACK of new data that moves ``round_end``)."""
    vegas, tcb, decide = f"{prefix}.snd.vegas", f"{prefix}.snd.tcb", f"{prefix}.snd.new_ack"
    if vegas not in net.places or decide not in net.transitions:
        return
    net.add_place(Place(f"{prefix}.rules", INT, initial=[0]))
    t_old, t_new = input_variable(net, decide, tcb), output_expression(net, decide, tcb)
    v_old, v_new = input_variable(net, decide, vegas), output_expression(net, decide, vegas)
    if not (t_old and t_new and v_old and v_new):
        raise InputError(f"transition {decide}: the Vegas rule observer needs its tcb and "
                         "vegas arcs as a variable in and an expression out")
    _count(net, f"{prefix}.rules", decide,
           f"1 if (({v_new}).round_end != {v_old}.round_end and {t_old}.cwnd >= "
           f"{t_old}.ssthresh and not {t_old}.inrec and abs(({t_new}).cwnd - "
           f"{t_old}.cwnd) > 1 + 1e-9) else 0")


def _vegas_blind_cuts(net: PetriNet, prefix: str, data_fifos: tuple[str, ...]) -> None:
    """``flow0.blind_cuts``: Vegas decisions in congestion avoidance that lowered ``cwnd``
    while every queue on the flow's data path was empty: a cut its forward path does not
    explain. ``new_ack`` reads each ``fifo`` token and puts it back unchanged (the place
    is untimed and always holds exactly one token, so enabling and the states' contents
    other than the counter are those of the net without the observer)."""
    tcb, decide = f"{prefix}.snd.tcb", f"{prefix}.snd.new_ack"
    if f"{prefix}.snd.vegas" not in net.places or decide not in net.transitions \
            or not data_fifos:
        return
    for fifo in data_fifos:
        if net.places[fifo].colour.is_timed or len(list(net.places[fifo].initial)) != 1:
            raise InputError(f"place {fifo}: the blind_cuts observer reads it as one untimed "
                             "token")
    net.add_place(Place(f"{prefix}.blind_cuts", INT, initial=[0]))
    t_old, t_new = input_variable(net, decide, tcb), output_expression(net, decide, tcb)
    if not (t_old and t_new):
        raise InputError(f"transition {decide}: the blind-cut observer needs its tcb arcs "
                         "as a variable in and an expression out")
    read = []
    for fifo in data_fifos:
        variable = f"{OBSERVER_VARIABLE}read_{fifo.replace('.', '_')}"
        net.add_input(fifo, decide, variable)
        net.add_output(fifo, decide, variable)
        read.append(f"{variable}[1]")
    _count(net, f"{prefix}.blind_cuts", decide,
           f"1 if ({t_old}.cwnd >= {t_old}.ssthresh and not {t_old}.inrec and "
           f"({t_new}).cwnd < {t_old}.cwnd - 1e-9 and {' + '.join(read)} == 0) else 0")


def verify_all(scenario: Scenario | str | Path, properties: str, *, segments: int | None,
               losses: int = 0, ack_losses: int = 0, links: tuple[str, ...] | None = None,
               max_states: int | None = 1_000_000,
               prepared: PropertyNet | None = None, flow: str | None = None,
               delay_points: int | None = None, clock: str = "absolute",
               per_flight: bool = False, unbounded: bool = False,
               cwnd_target_segments: int | None = None,
               rtt_grain_s: float = DEFAULT_RTT_GRAIN_S,
               symmetry: bool = False,
               share_ratio: float | None = None) -> list[PropertyResult]:
    """Check the named property (or ``all``) on one exploration of the verification net;
    with ``all``, a property whose places the scenario lacks, that speaks about another
    budget, or a cross-flow property of a one-flow scenario, answers ``n/a``. A per-flow
    property of a scenario with several flows needs ``flow`` named. A transfer of more
    segments than ``max_states`` is refused (:class:`InputError`): every segment sent is a
    state of its own, so its exploration could only answer unknown. ``segments=None``
    checks a bulk sender (:func:`property_net` says what ``per_flight``, ``unbounded`` and
    ``cwnd_target_segments`` do): only the bulk properties run there, and only there.
    ``symmetry`` explores one state per orbit of the exchanges of identical flows that keep
    the flow a per-flow property names in place
    (:mod:`~tcpn.models.verification.flow_symmetry`; refused with the reason when there is
    none); a property whose atoms or fairness tell exchanged flows apart is refused (``n/a``
    with ``all``), and a counterexample is lifted to a path of the net and replayed in the
    simulator. ``share_ratio`` is ``window_share``'s ``R`` (``n/a`` with ``all`` when not
    given)."""
    if max_states is not None and isinstance(segments, int) and segments > max_states:
        raise InputError(f"segments {segments:,}: a transfer of that many segments has more "
                         f"states than max_states = {max_states:,} (every segment sent is a "
                         "state of its own), so the answer could only be unknown: check "
                         "fewer segments or raise --max-states")
    chosen = select_properties(properties)
    target = prepared or property_net(scenario, segments=segments, losses=losses,
                                      ack_losses=ack_losses, links=links, flow=flow,
                                      delay_points=delay_points, clock=clock,
                                      per_flight=per_flight, unbounded=unbounded,
                                      cwnd_target_segments=cwnd_target_segments,
                                      rtt_grain_s=rtt_grain_s, share_ratio=share_ratio)
    roles = target.flow
    several = len(roles.flows) > 1
    if not target.named and any(not prop.cross for prop in chosen):
        ids = ", ".join(each.name for each in roles.flows)
        raise InputError(f"scenario {target.verification.scenario.name} has several flows "
                         f"({ids}): name the one the per-flow properties speak of with "
                         "--flow NAME (cross-flow properties: "
                         f"{', '.join(p.name for p in PROPERTIES.values() if p.cross)})")
    results: list[PropertyResult] = []
    formulas = {}
    for prop in chosen:
        if properties == "all" and prop.cross and not several:
            results.append(PropertyResult(prop, "n/a", reason="a cross-flow property; the "
                                          "scenario has one flow"))
            continue
        if prop.bulk != roles.bulk:
            why = (f"observer {prop.places[0]} belongs to a bulk sender's space "
                   "(segments=None)" if prop.bulk else
                   f"its observers ({', '.join(prop.places) or 'the transfer length'}) "
                   "count from the start and grow without bound on a bulk sender; its "
                   "properties: " + ", ".join(p.name for p in PROPERTIES.values() if p.bulk))
            if properties != "all":
                raise InputError(f"--property {prop.name}: {why}")
            results.append(PropertyResult(prop, "n/a", reason=why))
            continue
        if properties == "all" and not prop.applies_to(roles):
            results.append(PropertyResult(prop, "n/a", reason="the scenario's components "
                                          "do not have its places"))
            continue
        try:
            formula = prop.formula(roles)
        except InputError as missing:  # a parameter the property needs was not given
            if properties != "all":
                raise
            results.append(PropertyResult(prop, "n/a", reason=str(missing)))
            continue
        if not prop.budgets(losses, ack_losses):
            if properties != "all":
                raise InputError(f"--property {prop.name}: {prop.assumes}; run it with "
                                 "--losses 0 --ack-losses 0")
            results.append(PropertyResult(prop, "n/a", reason=prop.assumes))
            continue
        formulas[prop.name] = formula
        results.append(PropertyResult(prop, "unknown"))
    if not formulas:
        return results
    started = time.process_time()
    reduction = None
    if symmetry:
        named = any(not r.property.cross for r in results if r.property.name in formulas)
        reduction = flow_symmetry(target.verification,
                                  fixed=(int(roles.prefix.removeprefix("flow")),) if named
                                  else ())
    space = target.verification.explore(max_states=max_states, symmetry=reduction)
    # every Predicate atom reads whole markings, one per state: decode each state once for
    # all the properties (the checker only reads them)
    space.marking = functools.lru_cache(maxsize=None)(space.marking)  # type: ignore[method-assign]
    explored = time.process_time() - started
    dead = len(space.dead_markings())
    for result in results:
        if result.property.name not in formulas:
            continue
        started = time.process_time()
        fairness = result.property.fairness(roles)
        if reduction is not None:
            result.symmetry = reduction.description
            problem = _asymmetric(space, formulas[result.property.name], fairness, reduction)
            if problem is not None:
                why = (f"--symmetry: property {result.property.name} tells exchanged flows "
                       f"apart ({problem}); check it without --symmetry")
                if properties != "all":
                    raise InputError(why)
                result.answer, result.reason = "n/a", why
                continue
        verdict = check(space, formulas[result.property.name], fairness=fairness)
        result.answer, result.verdict = verdict.answer, verdict
        result.states, result.edges, result.dead = space.n_states, space.n_edges, dead
        result.seconds = explored + time.process_time() - started
        result.reason = verdict.reason
        if verdict.answer == "false" and verdict.evidence is not None:
            evidence = verdict.evidence
            if reduction is not None:  # a path of the net, confirmed by the simulator
                evidence = lift_evidence(space, evidence)
                result.verdict = replace(verdict, evidence=evidence)
                target.replay([(s.transition, s.binding) for s in evidence.stem])
            path = [(s.transition, s.binding) for s in (*evidence.stem, *evidence.cycle)]
            if roles.bulk:  # relative frame numbers: count them on the path's replay
                path = [(f.transition, f.binding) for f in target.replay(path)]
            result.lost = target.verification.scripted_losses(path)
    return results


def _asymmetric(space: StateSpace, formula: Formula, fairness: Fairness | None,
                symmetry: Symmetry) -> str | None:
    """What tells exchanged flows apart in a property: an atom, or a fair transition set
    that an exchange does not map onto itself; ``None`` when nothing does."""
    for element in symmetry.elements:
        for kind, names in (("weak", fairness.weak if fairness else ()),
                            ("strong", fairness.strong if fairness else ())):
            if {element.transition(t) for t in names} != set(names):
                return f"the {kind} fairness of its transitions under {element.name}"
    return asymmetric_atom(space, formula, symmetry)


def verify(scenario: Scenario | str | Path, property_name: str, *, segments: int | None,
           losses: int = 0, ack_losses: int = 0, links: tuple[str, ...] | None = None,
           max_states: int | None = 1_000_000, flow: str | None = None,
           delay_points: int | None = None, clock: str = "absolute",
           per_flight: bool = False, unbounded: bool = False,
           cwnd_target_segments: int | None = None,
           rtt_grain_s: float = DEFAULT_RTT_GRAIN_S, symmetry: bool = False,
           share_ratio: float | None = None) -> PropertyResult:
    """One property within the loss budget (see the module docstring); ``flow`` names the
    flow of a scenario with several; ``segments=None`` a bulk sender, ``symmetry`` the
    reduction by identical flows, ``share_ratio`` the ``R`` of ``window_share``
    (:func:`verify_all`)."""
    return verify_all(scenario, property_name, segments=segments, losses=losses,
                      ack_losses=ack_losses, links=links, max_states=max_states, flow=flow,
                      delay_points=delay_points, clock=clock, per_flight=per_flight,
                      unbounded=unbounded, cwnd_target_segments=cwnd_target_segments,
                      rtt_grain_s=rtt_grain_s, symmetry=symmetry,
                      share_ratio=share_ratio)[0]
