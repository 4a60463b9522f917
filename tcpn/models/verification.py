"""Verification mode: a scenario's net with losses as bounded choices, for the explorer.

:func:`verification_net` composes the simulator's net of a scenario (the same components,
:func:`~tcpn.models.topology.compose`) for a *finite* transfer of ``segments`` segments per
connection, and turns the network's losses into nondeterministic choices bounded by a
:class:`LossBudget`: beside every transmission transition ``A.B.transmit`` (which delivers)
stands a twin ``A.B.transmit_lost`` with the same inputs and the same serialisation that
puts the packet nowhere; it may fire only while the budget place ``losses`` has a loss of
the packet's kind left. The net's transitions are the simulator's plus these choices; the
explorer (:func:`tcpn.petrinets.explore`) then covers every loss pattern within the budget
and every order of simultaneous events. Scripted loss lists (``errors: {kind: list}``) stay
scripted; random error models (``kind: rate``) become choices; what cannot be turned into a
choice yet is refused with an :class:`~tcpn.errors.InputError` naming it.

Time: every delay of a drop-tail scenario is deterministic and stays exact. The senders
keep absolute times (timestamps on packets, the RTT estimator's samples ``now - echo``),
so the net is explored with ``clock="absolute"`` (CPN Tools' default timed state space):
the space closes because the transfer is finite and the budget bounded, not by a time
reduction (``docs/statespace.md``, "Verification nets", says what a verdict covers).

>>> from tcpn.models.scenario import validate_scenario
>>> s = validate_scenario({"name": "p2p", "horizon_s": 10.0,
...     "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01}],
...     "flows": [{"src": "A", "dst": "B", "variant": "reno"}],
...     "tcp": {"handshake": False, "initial_cwnd_segments": 2}})
>>> v = verification_net(s, segments=2, losses=LossBudget(data_losses=1))
>>> v.choices
('A.B.transmit_lost', 'A.B.direct_lost', 'B.A.transmit_lost', 'B.A.direct_lost')
>>> space = v.explore()
>>> space.complete, len(space.dead_markings())
(True, 3)
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.queues import _red_decide
from tcpn.models.scenario import ConcreteFlow, ListErrors, RateErrors, Scenario, UniformTime
from tcpn.models.topology import ComposedNet, compose
from tcpn.petrinets import (
    INT,
    UNIT,
    Firing,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Transition,
    explore,
)
from tcpn.petrinets.net import ArcKind
from tcpn.petrinets.statespace import StateSpace

__all__ = ["BUDGET_PLACE", "EARLY_SUFFIX", "LOSS_SUFFIX", "REACT_SUFFIX", "UNOPENED_SUFFIX",
           "LossBudget", "Role", "VerificationNet", "verification_net"]

#: The place holding the losses left, ``(data, ack)``.
BUDGET_PLACE = "losses"
#: A loss choice is named after the transmission it stands beside, with this suffix.
LOSS_SUFFIX = "_lost"
#: What a data loss is: a packet carrying a data segment (``seq >= 0``); every other packet
#: (pure ACKs, and with the handshake SYN, SYN-ACK and its ACK) is an ACK loss.
_IS_DATA = "p.seq >= 0"
#: A RED arrival's early verdict (drop or mark) is a choice named after ``decide``.
EARLY_SUFFIX = "_early"
#: TCP-L's draw (react to a loss as congestion or not) as a choice: the reaction twin.
REACT_SUFFIX = "_react"
#: The twin of TCP-L's reporter tick for a connection not (or never) open.
UNOPENED_SUFFIX = "_unopened"
#: The uniform draws RED's choices stand for: the smallest and the largest that NumPy's
#: ``random()`` returns. Early is possible when the smallest gives it (probability > 0),
#: not early when the largest does not (probability < 1).
U_EARLY, U_CALM = 2.0 ** -53, 1.0 - 2.0 ** -53
#: Variables the choices add to a binding (the budget's counters, the reporter's read of
#: the sender) that the simulator's transitions do not have.
_ADDED_VARS = ("data_left", "acks_left", "t_sender")
#: The senders' and receivers' places and transitions a role lists (module-relative).
_SENDER_PLACES = ("tcb", "rtt", "timer", "start", "app", "connecting", "failed")
_RECEIVER_PLACES = ("rcv", "delack")


@dataclass(frozen=True)
class LossBudget:
    """How many packets the network may lose in one run.

    At most ``data_losses`` data segments and ``ack_losses`` packets without data (ACKs;
    with the handshake also SYN, SYN-ACK and its ACK), on the link directions ``links``
    (queue ids ``"A->B"``; ``None``: every direction). Both counts are per run; they must
    be finite whole numbers, or the space would not close.

    >>> LossBudget(data_losses=1).total
    1
    >>> LossBudget(data_losses=-1)
    Traceback (most recent call last):
    ...
    tcpn.errors.InputError: loss budget: data_losses must be a whole number >= 0, got -1
    """

    data_losses: int = 0
    ack_losses: int = 0
    links: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in ("data_losses", "ack_losses"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                extra = (" (an unbounded budget makes the state space infinite)"
                         if isinstance(value, float) and math.isinf(value) else "")
                raise InputError(f"loss budget: {name} must be a whole number >= 0, got "
                                 f"{value!r}{extra}")
        if self.links is not None:
            object.__setattr__(self, "links", tuple(self.links))

    @property
    def total(self) -> int:
        """Losses of both kinds together."""
        return self.data_losses + self.ack_losses


@dataclass(frozen=True)
class Role:
    """One part of the scenario in the verification net: what properties and lanes read.

    ``kind`` is ``"sender"``, ``"receiver"``, ``"queue"``, ``"link"`` or ``"budget"``;
    ``places`` maps a role name (``"tcb"``, ``"rcv"``, ``"budget"``...) to the net's place;
    ``transitions`` lists the net's transitions of that part (choices included).
    """

    kind: str
    places: Mapping[str, str]
    transitions: tuple[str, ...]
    flow: str | None = None


@dataclass(frozen=True)
class VerificationNet:
    """A scenario's net built for exploration (see the module docstring).

    ``roles`` names the parts (keys below, ``i`` the connection number, ``A->B`` a link
    direction):

    * ``flow{i}.sender``: places ``tcb`` (a ``Tcb``: ``cwnd``, ``ssthresh`` in segments,
      ``una``, ``nxt``, ``high``, ``dupacks``, ``inrec``...; the flight is ``high - una``),
      ``rtt`` (``srtt``, ``rttvar``, ``rto``), ``timer`` (marked while data is
      unacknowledged), ``start``, ``out`` (segments leaving), ``acks`` (ACKs arriving);
      with the handshake ``connecting``, ``failed``; ``flow`` is the flow id;
    * ``flow{i}.receiver``: ``rcv`` (a ``Rcv``: ``nxt`` is the number of segments
      delivered in order to the application, ``ooo`` the buffered runs), ``delack``,
      ``data`` (segments arriving), ``out`` (ACKs leaving);
    * ``A->B.queue``: the queue's places (``in`` the arrivals) and its transitions;
    * ``A->B.link``: ``idle`` (the transmitter), ``frames`` (``(sent, failed)``), the
      transmissions and their loss choices;
    * ``losses``: ``budget``, the place holding ``(data losses left, ACK losses left)``.

    ``choices`` are the transitions added to the simulator's; ``twins`` maps each loss (or
    RED early verdict, TCP-L reaction, reporter tick of an unopened connection) to the
    simulator transition it stands beside; ``draws`` gives the uniform draw each
    transition whose simulator twin draws one stands for; ``start_choices``
    maps each start-time choice (``group{g}.start{j}``) to ``(g, start_s)``: flow group
    ``g`` (the scenario's ``flows[g]``) starts at ``start_s``.
    """

    net: PetriNet
    scenario: Scenario
    segments: int
    losses: LossBudget
    roles: Mapping[str, Role]
    choices: tuple[str, ...]
    abstractions: tuple[str, ...]
    flows: tuple[ConcreteFlow, ...] = ()
    twins: Mapping[str, str] = field(default_factory=dict)
    clock: str = "absolute"
    start_choices: Mapping[str, tuple[int, float]] = field(default_factory=dict)
    draws: Mapping[str, float] = field(default_factory=dict)

    def explore(self, **limits: Any) -> StateSpace:
        """The state space (``limits``: those of :func:`tcpn.petrinets.explore`)."""
        return explore(self.net, clock=self.clock, **limits)

    def simulator_transition(self, transition: str) -> str:
        """The simulator's transition a verification-net transition fires as (a choice fires
        as the transmission it stands beside; every other transition as itself)."""
        return self.twins.get(transition, transition)

    def scripted_losses(self, path: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[
            str, tuple[int, ...]]:
        """The packets a path loses, per link direction, as a scripted list numbers them
        (arrival numbers from 0 over that direction: the ``sent`` count the choice read)."""
        prefixes = {role.places["idle"].rsplit(".", 1)[0]: key.removesuffix(".link")
                    for key, role in self.roles.items() if role.kind == "link"}
        lost: dict[str, list[int]] = {}
        for transition, binding in path:
            if transition in self.twins and transition.endswith(LOSS_SUFFIX):
                direction = prefixes[transition.rsplit(".", 1)[0]]
                lost.setdefault(direction, []).append(int(binding["sent"]))
        return {direction: tuple(sorted(numbers)) for direction, numbers in lost.items()}

    def chosen_starts(self, path: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[int, float]:
        """The start time a path chose for each flow group with a random start."""
        return dict(self.start_choices[t] for t, _b in path if t in self.start_choices)

    def simulation_scenario(self, losses: Mapping[str, Sequence[int]] | None = None,
                            starts: Mapping[int, float] | None = None) -> Scenario:
        """The scenario the simulator runs for this net with the given scripted ``losses``
        (per direction, added to the scenario's own lists) and ``starts`` (flow group ->
        start time, for the groups whose start is drawn at random): the transfer is finite
        and every direction that may lose has a scripted list."""
        return _scripted(self.scenario, self.segments, self.losses, losses or {},
                         starts or {})

    def simulation_net(self, losses: Mapping[str, Sequence[int]] | None = None,
                       starts: Mapping[int, float] | None = None) -> PetriNet:
        """The simulator's net of :meth:`simulation_scenario`."""
        scenario = self.simulation_scenario(losses, starts)
        flows = scenario.concrete_flows() if starts else self.flows
        return compose(scenario, _finite_flows(scenario, flows, self.segments)).net

    def replay(self, path: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Firing]:
        """Fire ``path`` (a firing sequence of this net, e.g. ``space.path_to(s)``) in the
        simulator's own net of :meth:`simulation_scenario` with the path's losses scripted
        and start times chosen: each loss fires as the transmission it stands beside, RED's
        draws are forced, start choices are not fired. Raises
        :class:`InputError` at the first step the simulator would not take."""
        sim = Simulator(self.simulation_net(self.scripted_losses(path),
                                            self.chosen_starts(path)), seed=0)
        # the simulator's uniform draws forced to those the path's choices stand for
        draws = [self.draws[t] for t, _b in path if t in self.draws]
        sim._draw.generator = _Script(draws)  # type: ignore[assignment]
        firings = []
        for step, (transition, binding) in enumerate(path):
            if transition in self.start_choices:  # the scenario's start time says it
                continue
            values = {k: v for k, v in binding.items() if k not in _ADDED_VARS}
            try:
                firings.append(sim.fire(self.simulator_transition(transition), values))
            except InputError as exc:
                raise InputError(f"replay step {step} ({transition}): {exc}") from None
        return firings


def _finite_flows(scenario: Scenario, flows: Sequence[ConcreteFlow], segments: int
                  ) -> list[ConcreteFlow]:
    return [f.model_copy(update={"bytes": segments * f.tcp.segment_size_bytes}) for f in flows]


def _chosen(budget: LossBudget, direction: str) -> bool:
    return budget.total > 0 and (budget.links is None or direction in budget.links)


def _scripted(scenario: Scenario, segments: int, budget: LossBudget,
              extra: Mapping[str, Sequence[int]], starts: Mapping[int, float]) -> Scenario:
    """``scenario`` with scripted lists on the directions that may lose (see
    :meth:`VerificationNet.simulation_scenario`)."""
    links = []
    for link in scenario.links:
        update = {}
        for side, (a, b, direction) in zip(("ab", "ba"), link.directions(), strict=True):
            qid = f"{a}->{b}"
            errors = direction.errors
            if not _chosen(budget, qid) and qid not in extra:
                continue
            own = list(errors.packets) if isinstance(errors, ListErrors) else []
            packets = sorted(set(own) | set(extra.get(qid, ())))
            update[side] = direction.model_copy(update={"errors": ListErrors(packets=packets)})
        links.append(link.model_copy(update=update) if update else link)
    flows = [f.model_copy(update={"bytes": segments * scenario.flow_tcp(f).segment_size_bytes,
                                  **({"start_s": starts[g]} if g in starts else {})})
             for g, f in enumerate(scenario.flows)]
    return scenario.model_copy(update={"links": links, "flows": flows})


def _refuse(scenario: Scenario, flows: Sequence[ConcreteFlow], segments: int,
            budget: LossBudget) -> None:
    """Raise :class:`InputError` naming what verification mode cannot handle."""
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise InputError(f"segments must be a whole number >= 1 (a finite transfer), got "
                         f"{segments!r}; a bulk transfer's space never closes")
    directions = {f"{a}->{b}" for link in scenario.links for a, b, _d in link.directions()}
    for qid in budget.links or ():
        if qid not in directions:
            raise InputError(f"loss budget: link direction {qid!r} is not in scenario "
                             f"{scenario.name} (directions: {', '.join(sorted(directions))})")
    for li, link in enumerate(scenario.links):
        if link.wireless is not None:
            raise InputError(f"links[{li}].wireless: an 802.11 hop (MAC retries) cannot be "
                             "turned into choices yet; verification needs point-to-point links")
        for side, (a, b, direction) in zip(("ab", "ba"), link.directions(), strict=True):
            kind = direction.queue.kind
            if kind not in ("drop_tail", "threshold_ecn", "red"):
                raise InputError(f"links[{li}].{side}.queue: {kind} decides by rates not "
                                 "turned into choices yet; verification takes drop_tail, "
                                 "threshold_ecn and red queues")
            if isinstance(direction.errors, RateErrors) and not _chosen(budget, f"{a}->{b}") \
                    and direction.errors.rate > 0:
                raise InputError(f"links[{li}].{side}.errors: random losses (rate "
                                 f"{direction.errors.rate:g}) on {a}->{b} become choices only "
                                 "where the loss budget allows losses; give a budget > 0 that "
                                 "covers this direction, or remove the error model")
    for i, group in enumerate(scenario.flows):
        for name in ("gap_s", "receiver_clock_offset_s"):
            if not isinstance(getattr(group, name), int | float):
                raise InputError(f"flows[{i}].{name}: drawn at random; verification needs a "
                                 "fixed time (a number)")
        if group.app_rate_bps is not None:
            raise InputError(f"flows[{i}].app_rate_bps: a paced application is not supported "
                             "in verification mode (the transfer is the `segments` given)")
    for flow in flows:
        if flow.receiver_clock_skew != 0.0:
            raise InputError(f"flow {flow.id}: receiver_clock_skew makes timestamps drift with "
                             "absolute time; verification needs 0")


def _add_choices(composed: ComposedNet, budget: LossBudget) -> dict[str, str]:
    """Add the budget place and one loss choice beside each transmission of the directions
    that may lose; return choice -> transmission."""
    net = composed.net
    net.add_place(Place(BUDGET_PLACE, ProductSet(INT, INT, name="Budget"),
                        initial=[(budget.data_losses, budget.ack_losses)]))
    twins: dict[str, str] = {}
    for qid, prefix in composed.interfaces.items():
        decide = f"{prefix}.decide"
        if composed.events[qid].get("decide") == "meter" and decide in net.transitions:
            _red_choice(net, decide)
            twins[decide + EARLY_SUFFIX] = decide
        if not _chosen(budget, qid):
            continue
        inside = f"{prefix}."
        for tname, kind in composed.events[qid].items():
            if kind not in ("transmit", "direct"):
                continue
            original = f"{prefix}.{tname}"
            twin = f"{original}{LOSS_SUFFIX}"
            _lose_twin(net, original, twin, inside)
            twins[twin] = original
    return twins


class _Script:
    """A stand-in for the simulator's generator: the draws a path's RED choices forced."""

    def __init__(self, draws: Iterable[float]):
        self.draws = iter(draws)

    def random(self) -> float:
        return next(self.draws)


class _Draw:
    """A stand-in for the generator RED's code action draws from: one fixed value."""

    def __init__(self, u: float):
        self.u = u

    def random(self) -> float:
        return self.u


def _red_forced(u: float) -> Any:
    """RED's code action with the uniform draw fixed at ``u`` (no ``rng``)."""
    def decide(p: Any, n: int, b: int, e: float, avg: float, count: int, old: int,
               now: float, RED_MIN_TH: float, RED_MAX_TH: float, RED_MAX_P: float,
               RED_WEIGHT: float, RED_GENTLE: bool, RED_WAIT: bool, RED_PTC: float,
               RED_ECN: bool, RED_HARD_DROP: bool, RED_BYTES: bool) -> dict[str, Any]:
        return _red_decide(p, n, b, e, avg, count, old, now, _Draw(u), RED_MIN_TH,
                           RED_MAX_TH, RED_MAX_P, RED_WEIGHT, RED_GENTLE, RED_WAIT, RED_PTC,
                           RED_ECN, RED_HARD_DROP, RED_BYTES)
    return decide


def red_early_verdict(*args: Any) -> str:
    """The verdict of an early RED decision (``"drop"`` or ``"mark"``) when the arrival
    may get one and may also be accepted, else ``""`` (arguments: those of RED's code
    action without ``rng``)."""
    early = _red_forced(U_EARLY)(*args)["verdict"]
    calm = _red_forced(U_CALM)(*args)["verdict"]
    return str(early) if early != calm else ""


_RED_ARGS = ("p, n, b, e, avg, count, old, now, RED_MIN_TH, RED_MAX_TH, RED_MAX_P, "
             "RED_WEIGHT, RED_GENTLE, RED_WAIT, RED_PTC, RED_ECN, RED_HARD_DROP, RED_BYTES")


def _red_choice(net: PetriNet, decide: str) -> None:
    """RED's draw as a choice: ``decide`` takes the verdict of the largest draw (early only
    when certain), ``decide_early`` the early verdict when it is possible but not certain;
    an early drop takes a loss of the packet's kind from the budget."""
    source = net.transitions[decide]
    twin = decide + EARLY_SUFFIX
    # a guard may not read the clock; RED reads it only for the idle time of an empty
    # queue, where every arrival is accepted whatever the draw (``n_queued > 1`` fails):
    # ``e`` in place of ``now`` changes no verdict that differs between the two draws
    verdict = f"red_early_verdict({_RED_ARGS.replace('now', 'e')})"
    data = f"{_IS_DATA} and data_left > 0 or not {_IS_DATA} and acks_left > 0"
    net.transitions[decide] = replace(source, action=_red_forced(U_CALM))
    net.add_transition(replace(
        source, name=twin, action=_red_forced(U_EARLY),
        guard=f"{verdict} == 'mark' or {verdict} == 'drop' and ({data})",
        params={**source.params, "red_early_verdict": red_early_verdict}))
    for arc in net.arcs_of(decide):
        net.add_arc(replace(arc, transition=twin))
    net.add_input(BUDGET_PLACE, twin, "(data_left, acks_left)")
    net.add_output(BUDGET_PLACE, twin, "(data_left, acks_left) if verdict != 'drop' else "
                   f"(data_left - 1, acks_left) if {_IS_DATA} else (data_left, acks_left - 1)")


def _lose_twin(net: PetriNet, original: str, twin: str, inside: str) -> None:
    """``twin``: ``original`` with its routed outputs dropped, the frame counted as failed
    and one loss of the packet's kind taken from the budget."""
    source = net.transitions[original]
    if source.action is not None:  # only scripted (action-free) transmissions get here
        raise InputError(f"transition {original}: decides losses in a code action; cannot "
                         "add a loss choice beside it")
    scripted = "not (sent in LOSSES)"
    guard = f"({_IS_DATA} and data_left > 0 or not {_IS_DATA} and acks_left > 0) " \
        f"and {scripted}"
    if source.guard:
        guard = f"({source.guard}) and {guard}"
    net.add_transition(replace(source, name=twin, guard=guard))
    for arc in net.arcs_of(original):
        routed = arc.kind is ArcKind.OUTPUT and (not arc.place.startswith(inside)
                                                  or arc.place == f"{inside}in")
        if routed:
            continue
        if arc.place.endswith(".frames") and arc.kind is ArcKind.OUTPUT:
            net.add_output(arc.place, twin, "(sent + 1, failed + 1)")
            continue
        net.add_arc(replace(arc, transition=twin))
    net.add_input(BUDGET_PLACE, twin, "(data_left, acks_left)")
    net.add_output(BUDGET_PLACE, twin, f"(data_left - 1, acks_left) if {_IS_DATA} else "
                   "(data_left, acks_left - 1)")


def _forced(action: Any, u: float) -> Any:
    """``action`` with its generator replaced by one whose ``random()`` is ``u``: the same
    parameters without ``rng`` (the compiler calls actions by keyword)."""
    signature = inspect.signature(action)

    def forced(**values: Any) -> Any:
        return action(**values, rng=_Draw(u))
    forced.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for p in signature.parameters.values() if p.name != "rng"])
    return forced


def _tcp_l_choices(net: PetriNet, i: int, segments: int) -> tuple[dict[str, str],
                                                                 dict[str, float]]:
    """TCP-L of connection ``i``: its reaction draw at a fast retransmit or a timeout as a
    choice (the original reacts only when certain, ``_react`` whenever possible), and its
    reporter stopped once the sender has every segment acknowledged (nothing after that
    reads a report) or has given up. Returns the twins and the draws they stand for."""
    twins: dict[str, str] = {}
    draws: dict[str, float] = {}
    for name in (f"flow{i}.snd.fast_retransmit", f"flow{i}.snd.timeout"):
        source = net.transitions[name]
        inputs = [n for n in source.action_inputs if n != "rng"]
        calm, react = _forced(source.action, U_CALM), _forced(source.action, 0.0)

        def reaction_open(calm: Any = calm, react: Any = react, **values: Any) -> bool:
            return bool(calm(**values)["react"] != react(**values)["react"])
        twin = name + REACT_SUFFIX
        call = ", ".join(f"{n}={n}" for n in inputs)
        guard = f"reaction_open({call})"
        net.transitions[name] = replace(source, action=calm)
        net.add_transition(replace(
            source, name=twin, action=react,
            guard=guard if source.guard is None else f"({source.guard}) and {guard}",
            params={**source.params, "reaction_open": reaction_open}))
        for arc in net.arcs_of(name):
            net.add_arc(replace(arc, transition=twin))
        twins[twin] = name
        draws.update({name: U_CALM, twin: 0.0})
    tick = f"flow{i}.rep.take_report"
    source = net.transitions[tick]
    unopened = tick + UNOPENED_SUFFIX
    net.add_transition(replace(source, name=unopened))
    for arc in net.arcs_of(tick):
        net.add_arc(replace(arc, transition=unopened))
    net.add_inhibitor(f"flow{i}.snd.tcb", unopened)
    if f"flow{i}.snd.failed" in net.places:
        net.add_inhibitor(f"flow{i}.snd.failed", unopened)
    net.add_read(f"flow{i}.snd.tcb", tick, "t_sender")
    net.transitions[tick] = replace(source, guard=f"t_sender.una < {segments}")
    twins[unopened] = tick
    return twins, draws


def _roles(composed: ComposedNet, twins: Mapping[str, str]) -> dict[str, Role]:
    net = composed.net
    roles: dict[str, Role] = {}

    def under(prefix: str) -> tuple[str, ...]:
        return tuple(t for t in net.transitions if t.startswith(prefix))

    for i, flow in enumerate(composed.flows):
        snd = f"flow{i}.snd."
        places = {name: snd + name for name in _SENDER_PLACES if snd + name in net.places}
        places.update(out=f"{composed.interfaces[flow.data_queues[0]]}.in",
                      acks=f"flow{i}.acks")
        roles[f"flow{i}.sender"] = Role("sender", places, under(snd), flow.id)
        rcv = f"flow{i}.rcv."
        places = {name: rcv + name for name in _RECEIVER_PLACES}
        places.update(data=f"flow{i}.data",
                      out=f"{composed.interfaces[flow.ack_queues[0]]}.in")
        roles[f"flow{i}.receiver"] = Role("receiver", places, under(rcv), flow.id)
    for qid, prefix in composed.interfaces.items():
        kinds = composed.events[qid]
        sends = tuple(f"{prefix}.{t}" for t, k in kinds.items() if k in ("transmit", "direct"))
        lost = tuple(t for t, original in twins.items() if original in sends)
        queue_places = {p.removeprefix(prefix + "."): p for p in net.places
                        if p.startswith(prefix + ".") and p not in
                        (f"{prefix}.idle", f"{prefix}.frames")}
        roles[f"{qid}.queue"] = Role("queue", queue_places, tuple(
            f"{prefix}.{t}" for t, k in kinds.items() if k not in ("transmit",)))
        link_places = {"idle": f"{prefix}.idle"}
        if f"{prefix}.frames" in net.places:
            link_places["frames"] = f"{prefix}.frames"
        roles[f"{qid}.link"] = Role("link", link_places, sends + lost)
    roles["losses"] = Role("budget", {"budget": BUDGET_PLACE}, tuple(twins))
    return roles


def _abstractions(scenario: Scenario, segments: int, budget: LossBudget,
                  points: Mapping[int, tuple[float, ...]]) -> tuple[str, ...]:
    where = "every link direction" if budget.links is None else ", ".join(budget.links)
    return (
        f"Each connection sends a finite transfer of {segments} segments; the scenario's "
        f"horizon ({scenario.horizon_s:g} s) and byte counts are not used (a stop time "
        "before the horizon still closes the application).",
        f"Losses are choices: at most {budget.data_losses} data segment(s) and "
        f"{budget.ack_losses} ACK(s) (SYN, SYN-ACK count as ACKs) per run, on {where}; "
        "a scripted loss list still loses exactly its packets; error rates are not "
        "probabilities here, only whether a loss can happen.",
        *(["RED's early drop or mark is a choice wherever its probability is strictly "
           "between 0 and 1 (early drops within the data/ACK budget, marks unbounded); "
           "the probability's value is not kept."]
          if any(d.queue.kind == "red" for link in scenario.links
                 for _a, _b, d in link.directions()) else []),
        *(f"Flow group {scenario.flows[g].id or f'f{g}'} starts at one of "
          f"{', '.join(f'{t:g}' for t in times)} s (its random start discretised), not "
          "at the times between." for g, times in points.items()),
        "Every other delay is the simulator's deterministic one (serialisation, propagation, "
        "timers); simultaneous events are explored in every order.",
        "Time is absolute (CPN Tools' timed state space): the space is finite because the "
        "transfer ends and the losses are bounded.",
    )


def _start_points(scenario: Scenario, start_points: int | None) -> dict[int, tuple[float, ...]]:
    """Flow group -> the start times a random ``start_s`` is discretised to: ``start_points``
    equally spaced times from ``low_s`` to ``high_s`` of a uniform start."""
    points: dict[int, tuple[float, ...]] = {}
    for g, group in enumerate(scenario.flows):
        spec = group.start_s
        if isinstance(spec, int | float):
            continue
        where = f"flows[{g}].start_s"
        if not isinstance(spec, UniformTime):
            raise InputError(f"{where}: an unbounded random start ({spec.dist}) cannot be "
                             "discretised; give a number or a uniform interval")
        if start_points is None:
            raise InputError(f"{where}: drawn at random; give verification_net(..., "
                             "start_points=m) to choose among m times in its interval, or a "
                             "number")
        if isinstance(start_points, bool) or not isinstance(start_points, int) or \
                start_points < 1:
            raise InputError(f"start_points must be a whole number >= 1, got {start_points!r}")
        step = (spec.high_s - spec.low_s) / max(1, start_points - 1)
        points[g] = tuple(sorted({round(spec.low_s + j * step, 9)
                                  for j in range(start_points)}))
    return points


def _add_start_choices(composed: ComposedNet, scenario: Scenario,
                       points: Mapping[int, tuple[float, ...]]) -> dict[str, tuple[int, float]]:
    """One choice per start time of each group with a random start: it puts the start token
    of every connection of the group (``gap_s`` apart) at that time."""
    net = composed.net
    ids = {(flow.id if flow.id is not None else f"f{g}"): g
           for g, flow in enumerate(scenario.flows)}
    choices: dict[str, tuple[int, float]] = {}
    for g, times in points.items():
        members = [(i, f) for i, f in enumerate(composed.flows) if ids[f.group] == g]
        gap = float(scenario.flows[g].gap_s)  # type: ignore[arg-type]
        unstarted = f"group{g}.unstarted"
        net.add_place(Place(unstarted, UNIT, initial=[()]))
        for i, _flow in members:
            start = f"flow{i}.snd.start"
            net.places[start] = replace(net.places[start], initial=[])
        for j, start_s in enumerate(times):
            name = f"group{g}.start{j}"
            net.add_transition(Transition(name))
            net.add_input(unstarted, name, "()")
            for i, flow in members:
                net.add_output(f"flow{i}.snd.start", name, "()",
                               delay=round(start_s + flow.index * gap, 9))
            choices[name] = (g, start_s)
    return choices


def verification_net(scenario: Scenario, *, segments: int,
                     losses: LossBudget | None = None, start_points: int | None = None,
                     seed: int | None = None) -> VerificationNet:
    """The verification net of ``scenario``: every connection sends ``segments`` segments,
    the network may lose what ``losses`` allows (see the module docstring).

    A flow group whose ``start_s`` is drawn uniformly from an interval starts at one of
    ``start_points`` equally spaced times in it, a choice made at time 0 (the explorer
    covers each, and every order of the events they make simultaneous). ``seed`` draws
    the scenario's other random choices (none are allowed yet).
    """
    budget = losses if losses is not None else LossBudget()
    if not isinstance(budget, LossBudget):
        raise InputError(f"losses must be a LossBudget, got {budget!r}")
    points = _start_points(scenario, start_points)
    flows = scenario.concrete_flows(seed)
    _refuse(scenario, flows, segments, budget)
    prepared = _scripted(scenario, segments, budget, {},
                         {g: times[0] for g, times in points.items()})
    finite = _finite_flows(prepared, prepared.concrete_flows(seed), segments)
    composed = compose(prepared, finite)
    twins = _add_choices(composed, budget)
    draws = {name: (U_EARLY if name.endswith(EARLY_SUFFIX) else U_CALM)
             for twin, original in twins.items() if original.endswith(".decide")
             for name in (twin, original)}
    for i, flow in enumerate(finite):
        if flow.variant == "tcp_l":
            tcp_l_twins, tcp_l_draws = _tcp_l_choices(composed.net, i, segments)
            twins.update(tcp_l_twins)
            draws.update(tcp_l_draws)
    starts = _add_start_choices(composed, scenario, points)
    return VerificationNet(
        net=composed.net, scenario=scenario, segments=segments, losses=budget,
        roles=_roles(composed, twins), choices=(*twins, *starts),
        abstractions=_abstractions(scenario, segments, budget, points), flows=tuple(finite),
        twins=twins, start_choices=starts, draws=draws)
