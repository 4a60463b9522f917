"""Checking the property library on a scenario: every loss pattern within a budget.

:func:`verify` answers whether a property holds for one flow of a scenario whatever the
network loses, within a budget of ``losses`` data-direction and ``ack_losses``
ACK-direction losses on the last link before the receiver (the link that reaches the
flow's destination; its two directions get a scripted loss list). The transfer is
``segments`` segments long (the flow's ``bytes`` is replaced).

Loss is enumerated, not drawn: a run with a given set of lost packet ordinals is
deterministic (every delay of these scenarios is fixed), so its state space is one path;
:func:`loss_patterns` extends each pattern only by ordinals of packets that actually
crossed the link in that run, with ordinals above the pattern's last one. So the patterns
explored are exactly the distinct behaviours with at most ``losses`` + ``ack_losses``
losses, and a verdict ``true`` covers all of them; ``false`` comes with the first run (the
fewest losses, then the earliest) that refutes the property, as a path that
:meth:`tcpn.petrinets.Simulator.fire` replays. States and edges are summed over runs (a
prefix two runs share counts twice). Timing is exact, as the simulator's; a random
element (a random error model elsewhere, TCP-L's reaction draw) is refused by the
explorer with the element named.

>>> from tcpn.models.scenario import dumbbell
>>> result = verify(dumbbell(pairs=1, horizon_s=5.0), "delivered_once_in_order",
...                 segments=3, losses=1)
>>> result.answer, result.runs     # no loss, or one of SYN, handshake ACK, 3 segments
('true', 6)
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.sender import RETRANSMITTED
from tcpn.models.properties import FlowRoles, Property, select_properties
from tcpn.models.scenario import Scenario, load_scenario, validate_scenario
from tcpn.models.topology import ComposedNet, compose
from tcpn.petrinets import INT, ListSet, PetriNet, Place, Token
from tcpn.petrinets.checking import check
from tcpn.petrinets.compiler import CompiledNet, compile_net
from tcpn.petrinets.net import ArcKind
from tcpn.petrinets.statespace import StateSpace, explore
from tcpn.petrinets.verdicts import Verdict

__all__ = [
    "LossyLink",
    "PropertyResult",
    "VerificationNet",
    "loss_patterns",
    "verification_scenario",
    "verification_scenario_net",
    "verify",
    "verify_all",
]

#: Losses per direction the enumeration accepts (beyond, the patterns grow too fast).
MAX_LOSSES = 8


@dataclass(frozen=True)
class LossyLink:
    """The link direction that loses packets: its interface prefix (``R.D``), the
    transitions that put a packet on it, its ``frames`` counter place, and the place
    holding the ordinals of the packets it loses (``verify.R.D.losses``)."""

    interface: str
    transmitters: tuple[str, ...]
    frames: str
    losses: str


@dataclass
class VerificationNet:
    """A scenario's net prepared for :func:`verify`: the observers added, the lossy link
    directions named, the flow's roles.

    The lossy transmitters read the packets to lose from a place (``LossyLink.losses``)
    instead of a declaration, so that every loss pattern runs on one compiled net whose
    initial marking alone changes.
    """

    net: PetriNet
    composed: ComposedNet
    flow: FlowRoles
    data_link: LossyLink
    ack_link: LossyLink
    segments: int
    _runner: tuple[PetriNet, CompiledNet] | None = field(default=None, repr=False)

    def with_losses(self, data: tuple[int, ...], ack: tuple[int, ...]) -> PetriNet:
        """A copy of the net whose lossy links lose the packets numbered ``data`` (forward)
        and ``ack`` (backward); 0 is the first packet to cross."""
        net = copy.copy(self.net)
        net.places = dict(net.places)
        self._set_losses(net, data, ack)
        return net

    def _set_losses(self, net: PetriNet, data: tuple[int, ...], ack: tuple[int, ...]) -> None:
        for link, lost in ((self.data_link, data), (self.ack_link, ack)):
            twin = copy.copy(net.places[link.losses])
            twin.initial = (Token(tuple(sorted(lost)), 0.0),)
            net.places[link.losses] = twin

    def explore(self, data: tuple[int, ...], ack: tuple[int, ...],
                max_states: int | None) -> StateSpace:
        """The state space of one loss pattern (one path: the run is deterministic), on the
        net compiled once."""
        if self._runner is None:
            private = copy.copy(self.net)
            private.places = dict(private.places)
            self._runner = (private, compile_net(private))
        private, compiled = self._runner
        self._set_losses(private, data, ack)
        return explore(compiled, clock="absolute", max_states=max_states)


@dataclass
class PropertyResult:
    """The answer for one property over every loss pattern within the budget."""

    property: Property
    answer: str
    runs: int = 0
    states: int = 0
    edges: int = 0
    seconds: float = 0.0
    verdict: Verdict | None = None
    data_losses: tuple[int, ...] = ()
    ack_losses: tuple[int, ...] = ()
    reason: str = ""
    net: PetriNet | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (the counterexample as the checker's evidence)."""
        out: dict[str, Any] = {"property": self.property.name, "answer": self.answer,
                               "runs": self.runs, "states": self.states, "edges": self.edges,
                               "seconds": round(self.seconds, 3)}
        if self.reason:
            out["reason"] = self.reason
        if self.answer == "false":
            out["lost_data_packets"] = list(self.data_losses)
            out["lost_ack_packets"] = list(self.ack_losses)
        if self.verdict is not None and self.verdict.evidence is not None:
            out["evidence"] = self.verdict.evidence.to_json()
        return out


def verification_scenario(scenario: Scenario | str | Path, segments: int) -> Scenario:
    """``scenario`` (one flow) sending ``segments`` segments, with a scripted (empty) loss
    list on both directions of the link that reaches the flow's destination."""
    if isinstance(scenario, str | Path):
        scenario = load_scenario(scenario)
    if segments < 1:
        raise InputError(f"--segments must be >= 1, got {segments}")
    if len(scenario.flows) != 1 or scenario.flows[0].count != 1:
        raise InputError(f"scenario {scenario.name}: verification takes exactly one flow "
                         f"(count 1); it has {sum(f.count for f in scenario.flows)}")
    data = scenario.model_dump(exclude_unset=True)
    flow = data["flows"][0]
    segment_bytes = scenario.flow_tcp(scenario.flows[0]).segment_size_bytes
    flow["bytes"] = segments * segment_bytes
    flow.pop("stop_s", None)
    dst = flow["dst"]
    last = [i for i, link in enumerate(data["links"]) if dst in (link["a"], link["b"])]
    if len(last) != 1:
        raise InputError(f"scenario {scenario.name}: the destination {dst} must have exactly "
                         f"one link (it has {len(last)})")
    link = data["links"][last[0]]
    if link.get("wireless"):
        raise InputError(f"scenario {scenario.name}: links[{last[0]}] is wireless; "
                         "verification loses packets on point-to-point links only")
    for side in ("ab", "ba"):
        link.setdefault(side, {})["errors"] = {"kind": "list", "packets": []}
    return validate_scenario(data)


def verification_scenario_net(scenario: Scenario | str | Path, segments: int,
                              composed: ComposedNet | None = None) -> VerificationNet:
    """The net of :func:`verification_scenario` with the observer places of
    :mod:`tcpn.models.properties`; ``composed`` is that scenario's composed net when the
    caller built (or changed) it."""
    prepared = verification_scenario(scenario, segments)
    if composed is None:
        composed = compose(prepared, prepared.concrete_flows(prepared.seed))
    flow = prepared.flows[0]
    link = next(link for link in prepared.links if flow.dst in (link.a, link.b))
    into_dst = f"{_ident(link.a if link.b == flow.dst else link.b)}.{_ident(flow.dst)}"
    out_of_dst = ".".join(reversed(into_dst.split(".")))
    roles = _add_observers(composed, prepared, segments)
    return VerificationNet(composed.net, composed, roles, _lossy(composed.net, into_dst),
                           _lossy(composed.net, out_of_dst), segments)


def _ident(node: str) -> str:
    from tcpn.models.topology import _ident as ident

    return ident(node)


def _lossy(net: PetriNet, interface: str) -> LossyLink:
    """Name the lossy direction ``interface``; its transmitters read ``LOSSES`` from a new
    place (initially empty: nothing lost) instead of their declaration."""
    losses = f"verify.{interface}.losses"
    net.add_place(Place(losses, ListSet(INT, name="Losses"), initial=[()]))
    transmitters = []
    for name, transition in list(net.transitions.items()):
        if name.startswith(interface + ".") and "LOSSES" in transition.params:
            twin = copy.copy(transition)
            twin.params = {k: v for k, v in transition.params.items() if k != "LOSSES"}
            net.transitions[name] = twin
            net.add_read(losses, name, "LOSSES")
            transmitters.append(name)
    return LossyLink(interface, tuple(transmitters), f"{interface}.frames", losses)


def _input_variable(net: PetriNet, transition: str, place: str) -> str | None:
    for arc in net.arcs_of(transition):
        if (arc.kind is ArcKind.INPUT and arc.place == place and arc.inscription is not None
                and arc.inscription.isidentifier()):
            return arc.inscription
    return None


def _output_expression(net: PetriNet, transition: str, place: str) -> str | None:
    for arc in net.arcs_of(transition):
        if arc.kind is ArcKind.OUTPUT and arc.place == place and arc.when is None:
            return arc.inscription
    return None


def _count(net: PetriNet, place: str, transition: str, increment: str) -> None:
    """Add ``increment`` to the counter on ``place`` at each firing of ``transition`` (a
    variable of its own per counter: two counters on one transition must not unify)."""
    variable = "_" + place.replace(".", "_")
    net.add_input(place, transition, variable)
    net.add_output(place, transition, f"{variable} + ({increment})")


def _add_observers(composed: ComposedNet, scenario: Scenario, segments: int) -> FlowRoles:
    """Add ``flow0.app``, ``flow0.retx``, ``flow0.reductions``, ``flow0.syns``,
    ``flow0.rules`` (Vegas) and ``verify.drops``; return the flow's roles."""
    net, prefix = composed.net, "flow0"
    net.add_place(Place(f"{prefix}.app", ListSet(INT, name="Delivered"), initial=[()]))
    net.add_place(Place(f"{prefix}.retx", INT, initial=[0]))
    net.add_place(Place(f"{prefix}.reductions", INT, initial=[0]))
    net.add_place(Place(f"{prefix}.syns", INT, initial=[0]))
    net.add_place(Place("verify.drops", INT, initial=[0]))
    rcv, tcb = f"{prefix}.rcv.rcv", f"{prefix}.snd.tcb"
    for name in list(net.transitions):
        if name.startswith(f"{prefix}.rcv."):
            old, new = _input_variable(net, name, rcv), _output_expression(net, name, rcv)
            data = _input_variable(net, name, f"{prefix}.data")
            if old and new and data:
                net.add_input(f"{prefix}.app", name, "_app")
                net.add_output(f"{prefix}.app", name,
                               f"_app + (({data}.seq,) + tuple(range({data}.seq + 1, "
                               f"({new}).nxt)) if ({new}).nxt > {old}.nxt else ())")
        if name.startswith(f"{prefix}.snd."):
            local = name.removeprefix(f"{prefix}.snd.")
            sends = any(a.kind is ArcKind.OUTPUT and not a.place.startswith(f"{prefix}.snd.")
                        for a in net.arcs_of(name))
            if local in ("connect", "syn_timeout"):
                _count(net, f"{prefix}.syns", name, "1")
            if local == "timeout" or (local in RETRANSMITTED and sends):
                _count(net, f"{prefix}.retx", name, "1")
            old, new = _input_variable(net, name, tcb), _output_expression(net, name, tcb)
            if old and new:
                _count(net, f"{prefix}.reductions", name,
                       f"1 if ({new}).cwnd < {old}.cwnd else 0")
    for queue, interface in composed.interfaces.items():
        for local, event in composed.events.get(queue, {}).items():
            if event == "drop" and f"{interface}.{local}" in net.transitions:
                _count(net, "verify.drops", f"{interface}.{local}", "1")
    vegas = f"{prefix}.snd.vegas"
    decide = f"{prefix}.snd.new_ack"
    if vegas in net.places and decide in net.transitions:
        net.add_place(Place(f"{prefix}.rules", INT, initial=[0]))
        t_old, t_new = _input_variable(net, decide, tcb), _output_expression(net, decide, tcb)
        v_old, v_new = (_input_variable(net, decide, vegas),
                        _output_expression(net, decide, vegas))
        if not (t_old and t_new and v_old and v_new):
            raise InputError(f"transition {decide}: the Vegas rule observer needs its tcb "
                             "and vegas arcs as a variable in and an expression out")
        _count(net, f"{prefix}.rules", decide,
               f"1 if (({v_new}).round_end != {v_old}.round_end and {t_old}.cwnd >= "
               f"{t_old}.ssthresh and not {t_old}.inrec and abs(({t_new}).cwnd - "
               f"{t_old}.cwnd) > 1 + 1e-9) else 0")
    send = f"{prefix}.snd.send"
    window = int(net.scope_of(send)["WINDOW"]) if send in net.transitions else 1 << 20
    units = {f"{a}->{b}": str(getattr(direction.queue, "unit", "packets"))
             for link in scenario.links for a, b, direction in link.directions()}
    queues = {}
    for interface in composed.interfaces.values():
        fifo = f"{interface}.fifo"
        if fifo in net.places:
            scope = net.scope_of(next(t for t in net.transitions
                                      if t.startswith(interface + ".")))
            queue = next(q for q, i in composed.interfaces.items() if i == interface)
            queues[fifo] = (int(scope["LIMIT"]), units.get(queue, "packets"))
    frames = tuple(p for p in net.places if p.endswith(".frames"))
    return FlowRoles(net, prefix, segments, window, queues, frames)


def loss_patterns(run: Callable[[tuple[int, ...], tuple[int, ...]], tuple[int, int]],
                  losses: int, ack_losses: int) -> Iterator[tuple[tuple[int, ...],
                                                               tuple[int, ...]]]:
    """Every distinct pair of loss patterns within the budget, fewest losses first.

    ``run(data, ack)`` runs one pattern and returns how many packets crossed the data and
    the ACK link; a pattern is extended only by ordinals above its last one and below that
    count (a loss of a packet that never crosses changes nothing).

    >>> crossing = lambda data, ack: (3 + len(data), 2)    # a resend per loss
    >>> [p for p in loss_patterns(crossing, 1, 0)]
    [((), ()), ((0,), ()), ((1,), ()), ((2,), ())]
    """
    for budget, limit in (("losses", losses), ("ack_losses", ack_losses)):
        if not 0 <= limit <= MAX_LOSSES:
            raise InputError(f"--{budget.replace('_', '-')} {limit}: must be 0..{MAX_LOSSES} "
                             "(each loss multiplies the runs by the packets that cross)")
    level: list[tuple[tuple[int, ...], tuple[int, ...]]] = [((), ())]
    seen = set(level)
    while level:
        following = []
        for data, ack in level:
            yield data, ack
            if len(data) == losses and len(ack) == ack_losses:
                continue
            crossed_data, crossed_ack = run(data, ack)
            # a lost packet crosses in the run without that loss too (the runs agree until
            # it crosses): every pattern extends one with a loss fewer
            wider = []
            if len(data) < losses:
                wider += [((*data, k), ack)
                          for k in range(data[-1] + 1 if data else 0, crossed_data)]
            if len(ack) < ack_losses:
                wider += [(data, (*ack, k))
                          for k in range(ack[-1] + 1 if ack else 0, crossed_ack)]
            for pattern in wider:
                if pattern not in seen:
                    seen.add(pattern)
                    following.append(pattern)
        level = following


def verify_all(scenario: Scenario | str | Path, properties: str, *, segments: int,
               losses: int = 0, ack_losses: int = 0, max_states: int | None = 1_000_000,
               prepared: VerificationNet | None = None) -> list[PropertyResult]:
    """Check the named property (or ``all``) over every loss pattern within the budget;
    with ``all``, properties whose places the scenario lacks or whose budget they do not
    speak about answer ``n/a``."""
    chosen = select_properties(properties)
    target = prepared or verification_scenario_net(scenario, segments)
    flow = target.flow
    formulas = {}
    results: dict[str, PropertyResult] = {}
    for prop in chosen:
        if properties == "all" and not prop.applies_to(flow):
            results[prop.name] = PropertyResult(prop, "n/a", reason="the scenario's "
                                                "components do not have its places")
            continue
        formulas[prop.name] = prop.formula(flow)
        fits = prop.budgets(losses, ack_losses)
        if not fits and properties != "all":
            raise InputError(f"--property {prop.name}: {prop.assumes}; run it with "
                             "--losses 0 --ack-losses 0")
        if not fits:
            results[prop.name] = PropertyResult(prop, "n/a", reason=prop.assumes)
            del formulas[prop.name]
            continue
        results[prop.name] = PropertyResult(prop, "true")
    started = time.process_time()
    cache: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, int]] = {}
    remaining = max_states

    def run(data: tuple[int, ...], ack: tuple[int, ...]) -> tuple[int, int]:
        nonlocal remaining
        if (data, ack) in cache:
            return cache[(data, ack)]
        space = target.explore(data, ack, remaining)
        if remaining is not None:
            remaining = max(1, remaining - space.n_states)
        for name, formula in formulas.items():
            result = results[name]
            result.runs += 1
            result.states += space.n_states
            result.edges += space.n_edges
            if result.answer == "false":
                continue
            verdict = check(space, formula, fairness=result.property.fairness(flow))
            if verdict.answer == "false":
                result.answer, result.verdict = "false", verdict
                result.net = target.with_losses(data, ack)
                result.data_losses, result.ack_losses = data, ack
            elif verdict.answer == "unknown" and result.answer == "true":
                result.answer, result.reason = "unknown", verdict.reason or (
                    f"state budget reached after {space.n_states} states")
        final = space.marking(space.n_states - 1) if space.complete else None
        crossed = (_sent(final, target.data_link.frames) if final else 0,
                   _sent(final, target.ack_link.frames) if final else 0)
        if not space.complete:
            for name in formulas:
                if results[name].answer == "true":
                    results[name].answer = "unknown"
                    results[name].reason = (f"state budget reached (max_states={max_states})"
                                            " before every loss pattern was explored")
        cache[(data, ack)] = crossed
        return crossed

    if formulas:
        for data, ack in loss_patterns(run, losses, ack_losses):
            if remaining is not None and remaining <= 1:
                for name in formulas:
                    if results[name].answer == "true":
                        results[name].answer = "unknown"
                        results[name].reason = (f"state budget reached (max_states="
                                                f"{max_states}) before every loss pattern "
                                                "was explored")
                break
            run(data, ack)
    seconds = time.process_time() - started
    for name in formulas:
        results[name].seconds = seconds
    return [results[p.name] for p in chosen]


def _sent(marking: dict[str, Any], frames: str) -> int:
    tokens = marking.get(frames) or []
    return int(tokens[0].value[0]) if tokens else 0


def verify(scenario: Scenario | str | Path, property_name: str, *, segments: int,
           losses: int = 0, ack_losses: int = 0,
           max_states: int | None = 1_000_000) -> PropertyResult:
    """One property over every loss pattern within the budget (see the module docstring)."""
    return verify_all(scenario, property_name, segments=segments, losses=losses,
                      ack_losses=ack_losses, max_states=max_states)[0]
