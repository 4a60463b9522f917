"""The choices a verification net adds to the simulator's net: losses within the budget,
RED's and TCP-L's uniform draws, random start times as delays to discretise.

Each choice is a twin of a simulator transition (same inputs, guard, priority and delays)
or, for start times, a chain of transitions whose random delays place the connections'
start tokens (discretised by :func:`tcpn.petrinets.statespace.intervals.discretise_delays`); see
:mod:`tcpn.models.verification` and ``docs/statespace.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.queues import red_decide
from tcpn.models.scenario import Scenario, UniformTime
from tcpn.models.topology import ComposedNet
from tcpn.models.verification.budget import BUDGET_PLACE, LossBudget
from tcpn.models.verification.draws import (
    REACT_SUFFIX,
    U_CALM,
    U_EARLY,
    UNOPENED_SUFFIX,
    FixedDraw,
    FixedDraws,
    forced,
)
from tcpn.petrinets import UNIT, Distribution, Interval, PetriNet, Place, Transition, Uniform
from tcpn.petrinets.net import ArcKind
from tcpn.petrinets.statespace.intervals import delay_points

__all__ = ["ADDED_VARS", "EARLY_SUFFIX", "FAILED_SUFFIX", "LOSS_SUFFIX", "REACT_SUFFIX",
           "TRIES_SUFFIX", "UNOPENED_SUFFIX", "U_CALM", "U_EARLY", "add_loss_choices",
           "add_start_delays", "random_times", "red_early_verdict", "wireless_choices"]

#: A loss choice is named after the transmission it stands beside, with this suffix.
LOSS_SUFFIX = "_lost"

#: What a data loss is: a packet carrying a data segment (``seq >= 0``); every other packet
#: (pure ACKs, and with the handshake SYN, SYN-ACK and its ACK) is an ACK loss.
_IS_DATA = "p.seq >= 0"

#: A RED arrival's early verdict (drop or mark) is a choice named after ``decide``.
EARLY_SUFFIX = "_early"

#: Variables the choices add to a binding (the budget's counters, the reporter's read of
#: the sender) that the simulator's transitions do not have.
ADDED_VARS = ("data_left", "acks_left", "t_sender")


def add_loss_choices(composed: ComposedNet, budget: LossBudget, segments: int
                     ) -> dict[str, str]:
    """Add the budget place, one loss choice beside each transmission of the directions
    that may lose and RED's early-verdict choice beside each ``decide``; return choice ->
    the simulator transition it stands beside."""
    net = composed.net
    net.add_place(Place(BUDGET_PLACE, budget.colour(), initial=[budget.initial(segments)]))
    twins: dict[str, str] = {}
    for qid, prefix in composed.interfaces.items():
        decide = f"{prefix}.decide"
        if composed.events[qid].get("decide") == "meter" and decide in net.transitions:
            _red_choice(net, decide, budget)
            twins[decide + EARLY_SUFFIX] = decide
        if not budget.covers(qid) or f"{prefix}.airtime" in net.places:
            continue  # an 802.11 hop's losses are among its attempts (wireless_choices)
        inside = f"{prefix}."
        for tname, kind in composed.events[qid].items():
            if kind not in ("transmit", "direct"):
                continue
            original = f"{prefix}.{tname}"
            twin = f"{original}{LOSS_SUFFIX}"
            _lose_twin(net, original, twin, inside, budget)
            twins[twin] = original
    return twins


def _red_forced(u: float) -> Any:
    """RED's code action with the uniform draw fixed at ``u`` (no ``rng``)."""
    def decide(p: Any, n: int, b: int, e: float, avg: float, count: int, old: int,
               now: float, RED_MIN_TH: float, RED_MAX_TH: float, RED_MAX_P: float,
               RED_WEIGHT: float, RED_GENTLE: bool, RED_WAIT: bool, RED_PTC: float,
               RED_ECN: bool, RED_HARD_DROP: bool, RED_BYTES: bool) -> dict[str, Any]:
        return red_decide(p, n, b, e, avg, count, old, now, FixedDraw(u), RED_MIN_TH,
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


def _red_choice(net: PetriNet, decide: str, budget: LossBudget) -> None:
    """RED's draw as a choice: ``decide`` takes the verdict of the largest draw (early only
    when certain), ``decide_early`` the early verdict when it is possible but not certain;
    an early drop takes a loss of the packet's kind from the budget."""
    source = net.transitions[decide]
    twin = decide + EARLY_SUFFIX
    # a guard may not read the clock; RED reads it only for the idle time of an empty
    # queue, where every arrival is accepted whatever the draw (``n_queued > 1`` fails):
    # ``e`` in place of ``now`` changes no verdict that differs between the two draws
    verdict = f"red_early_verdict({_RED_ARGS.replace('now', 'e')})"
    may_lose, after = budget.inscriptions(_IS_DATA)
    net.transitions[decide] = replace(source, action=_red_forced(U_CALM))
    net.add_transition(replace(
        source, name=twin, action=_red_forced(U_EARLY),
        guard=f"{verdict} == 'mark' or {verdict} == 'drop' and {may_lose}",
        params={**source.params, "red_early_verdict": red_early_verdict}))
    for arc in net.arcs_of(decide):
        net.add_arc(replace(arc, transition=twin))
    net.add_input(BUDGET_PLACE, twin, "(data_left, acks_left)")
    net.add_output(BUDGET_PLACE, twin, f"(data_left, acks_left) if verdict != 'drop' else "
                   f"{after}")


def _lose_twin(net: PetriNet, original: str, twin: str, inside: str,
               budget: LossBudget) -> None:
    """``twin``: ``original`` with its routed outputs dropped, the frame counted as failed
    and one loss of the packet's kind taken from the budget."""
    source = net.transitions[original]
    if source.action is not None:  # only scripted (action-free) transmissions get here
        raise InputError(f"transition {original}: decides losses in a code action; cannot "
                         "add a loss choice beside it")
    scripted = "not (sent in LOSSES)"
    may_lose, after = budget.inscriptions(_IS_DATA)
    guard = f"{may_lose} and {scripted}"
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
    net.add_output(BUDGET_PLACE, twin, after)


def random_times(scenario: Scenario, delay_points: int | None) -> dict[int, tuple[
        Distribution | float, Distribution | float]]:
    """Flow group -> ``(start, gap)`` for the groups whose ``start_s`` or ``gap_s`` is drawn
    at random: a uniform time as a :class:`~tcpn.petrinets.Uniform` delay (explored at
    ``delay_points`` points), a fixed one as its number. An unbounded time, or a random one
    without ``delay_points``, is an :class:`InputError` naming the field."""
    times: dict[int, tuple[Distribution | float, Distribution | float]] = {}
    for g, group in enumerate(scenario.flows):
        specs = {"start_s": group.start_s, "gap_s": group.gap_s if group.count > 1 else 0.0}
        if all(isinstance(spec, int | float) for spec in specs.values()):
            continue
        delays: list[Distribution | float] = []
        for name, spec in specs.items():
            where = f"flows[{g}].{name}"
            if isinstance(spec, int | float):
                delays.append(float(spec))
                continue
            if not isinstance(spec, UniformTime):
                raise InputError(f"{where}: an unbounded random time ({spec.dist}) cannot be "
                                 "discretised; give a number or a uniform interval")
            if delay_points is None:
                raise InputError(f"{where}: drawn at random; give verification_net(..., "
                                 "delay_points=m) (tcpn check --delay-points m) to choose "
                                 "among m times in its interval, or a number")
            delays.append(Uniform(spec.low_s, spec.high_s))
        times[g] = (delays[0], delays[1])
    return times


def add_start_delays(composed: ComposedNet, scenario: Scenario,
                     times: Mapping[int, tuple[Distribution | float, Distribution | float]]
                     ) -> dict[str, tuple[int, int]]:
    """The start times of the groups in ``times`` as a chain of delays: at time 0
    ``group{g}.start`` (delay: the group's start) puts the start token of its first
    connection, and for each next connection ``group{g}.gap{j}`` (delay: the gap) puts
    that connection's, a gap after the previous one. Returns each chain transition ->
    ``(g, position of the connection it starts in the group)``."""
    net = composed.net
    ids = {(flow.id if flow.id is not None else f"f{g}"): g
           for g, flow in enumerate(scenario.flows)}
    chain: dict[str, tuple[int, int]] = {}
    for g, (start, gap) in times.items():
        members = sorted((f.index, i) for i, f in enumerate(composed.flows) if ids[f.group] == g)
        previous = f"group{g}.unstarted"
        net.add_place(Place(previous, UNIT.timed(), initial=[()]))
        for j, i in members:
            place = f"flow{i}.snd.start"
            net.places[place] = replace(net.places[place], initial=[])
            name = f"group{g}.start" if j == 0 else f"group{g}.gap{j}"
            net.add_transition(Transition(name, delay=start if j == 0 else gap))
            net.add_input(previous, name, "()")
            net.add_output(place, name, "()")
            if j < len(members) - 1:
                previous = f"group{g}.started{j}"
                net.add_place(Place(previous, UNIT.timed()))
                net.add_output(previous, name, "()")
            chain[name] = (g, j)
    return chain


#: An 802.11 transmission's attempts as a choice: the twin delivering after ``k`` attempts
#: is named after ``transmit`` with this suffix and ``k``.
TRIES_SUFFIX = "_tries"


def _attempt_draws(tries: int, lost: bool, allowed: int) -> tuple[float, ...]:
    """The uniform draws of one 802.11 transmission without medium access (one per allowed
    attempt) with which ``attempts`` fails the first ``tries - 1`` attempts and succeeds at
    attempt ``tries`` (or, ``lost``, fails them all): 0 fails whenever the frame error rate
    is above 0, the largest draw succeeds unless the rate is 1."""
    failed = allowed if lost else tries - 1
    return (0.0,) * failed + (U_CALM,) * (allowed - failed)


def wireless_choices(composed: ComposedNet, budget: LossBudget, points: int | None
                     ) -> tuple[dict[str, str], dict[str, tuple[float, ...]]]:
    """The attempts of every 802.11 transmission as a choice. Without medium access the
    simulator's ``transmit`` takes the draws that deliver at the first attempt, a twin
    ``transmit_tries{k}`` those that deliver at attempt ``k`` (``k`` among the points of
    ``[1, attempts allowed]``, :func:`tcpn.petrinets.statespace.intervals.delay_points`:
    both ends, ``points`` in all), and, on a direction the budget covers,
    ``transmit_lost`` those that fail every attempt (a loss of the packet's kind). With
    medium access (:func:`_dcf_choices`) each attempt's end is the choice. Each twin is
    enabled only where its outcome differs from the first-attempt one (a frame error rate
    above 0). Returns twin -> transmission and transition -> the draws it stands for."""
    net = composed.net
    twins: dict[str, str] = {}
    draws: dict[str, tuple[float, ...]] = {}
    for qid, prefix in composed.interfaces.items():
        if f"{prefix}.airtime" not in net.places:
            continue
        if f"{prefix}.finish" in net.transitions:
            _dcf_choices(composed, qid, prefix, budget, points, twins, draws)
            continue
        for tname, kind in composed.events[qid].items():
            if kind != "transmit":
                continue
            original = f"{prefix}.{tname}"
            source = net.transitions[original]
            allowed = int(net.scope_of(original)["TRIES"])
            tries = [int(k) for k in delay_points(Interval(1, allowed), points or 2,
                                                  f"attempts of {original}")]
            outcomes = [(f"{original}{TRIES_SUFFIX}{k}", k, False) for k in tries if k > 1]
            if budget.covers(qid):
                outcomes.append((f"{original}{LOSS_SUFFIX}", allowed, True))
            calm = _attempt_draws(1, False, allowed)
            net.transitions[original] = replace(source, action=forced(source.action,
                                                                       FixedDraws(calm)))
            draws[original] = calm
            inputs = [n for n in source.action_inputs if n != "rng"]
            call = ", ".join(f"{n}={n}" for n in inputs)
            for twin, k, lost in outcomes:
                attempt = forced(source.action, FixedDraws(_attempt_draws(k, lost, allowed)))
                calm_action = net.transitions[original].action

                def differs(attempt: Any = attempt, calm_action: Any = calm_action,
                            **values: Any) -> bool:
                    return bool(attempt(**values) != calm_action(**values))
                guard = f"attempts_differ({call})"
                if lost:
                    may_lose, after = budget.inscriptions(_IS_DATA)
                    guard = f"{guard} and {may_lose}"
                net.add_transition(replace(
                    source, name=twin, action=attempt,
                    guard=guard if source.guard is None else f"({source.guard}) and {guard}",
                    params={**source.params, "attempts_differ": differs}))
                for arc in net.arcs_of(original):
                    net.add_arc(replace(arc, transition=twin))
                if lost:
                    net.add_input(BUDGET_PLACE, twin, "(data_left, acks_left)")
                    net.add_output(BUDGET_PLACE, twin, after)
                twins[twin] = original
                draws[twin] = _attempt_draws(k, lost, allowed)
    return twins, draws


#: a failed attempt's choice is named after the attempt's end with this suffix
FAILED_SUFFIX = "_failed"


def _dcf_choices(composed: ComposedNet, qid: str, prefix: str, budget: LossBudget,
                 points: int | None, twins: dict[str, str],
                 draws: dict[str, tuple[float, ...]]) -> None:
    """The choices of an 802.11 interface with medium access: every backoff is 0 slots
    (the state space covers the orders of the transmissions, not the backoffs' lengths;
    two stations with frames due together therefore collide); ``finish`` (an attempt
    ends) takes the draw that gets the frame through, its twin ``finish_failed`` the one
    that fails it with attempts left, and, on a direction the budget covers,
    ``finish_lost`` the one that fails the last attempt (a loss of the packet's kind).
    A frame gets through only at an attempt among the points of ``[1, attempts
    allowed]`` (:func:`tcpn.petrinets.statespace.intervals.delay_points`: both ends,
    ``points`` in all), unless its outcome is no choice (no frame errors, a collision)."""
    net = composed.net
    for tname, kind in composed.events[qid].items():
        if kind == "transmit":  # the first backoff's draw: 0 slots
            original = f"{prefix}.{tname}"
            net.transitions[original] = replace(net.transitions[original], action=forced(
                net.transitions[original].action, FixedDraws((0.0,))))
            draws[original] = (0.0,)
    finish = f"{prefix}.finish"
    source = net.transitions[finish]
    allowed = int(net.scope_of(finish)["TRIES"])
    tries = tuple(int(k) for k in delay_points(Interval(1, allowed), points or 2,
                                               f"attempts of {finish}"))
    calm, failing = (U_CALM, 0.0), (0.0, 0.0)
    calm_action = forced(source.action, FixedDraws(calm))
    failing_action = forced(source.action, FixedDraws(failing))

    def differs(**values: Any) -> bool:  # (enabling may not read the clock: any instant)
        return bool(failing_action(now=0.0, **values) != calm_action(now=0.0, **values))
    inputs = [n for n in source.action_inputs if n not in ("rng", "now")]
    call = f"attempts_differ({', '.join(f'{n}={n}' for n in inputs)})"
    params = {**source.params, "attempts_differ": differs}
    net.transitions[finish] = replace(source, action=calm_action, params=params,
                                      guard=f"k + 1 in {tries!r} or not {call}")
    draws[finish] = calm
    outcomes = [(f"{finish}{FAILED_SUFFIX}", f"{call} and k + 1 < TRIES", False)]
    if budget.covers(qid):
        outcomes.append((f"{finish}{LOSS_SUFFIX}", f"{call} and k + 1 >= TRIES", True))
    for twin, guard, lost in outcomes:
        if lost:
            may_lose, after = budget.inscriptions(_IS_DATA)
            guard = f"{guard} and {may_lose}"
        net.add_transition(replace(source, name=twin, action=failing_action, guard=guard,
                                   params=params))
        for arc in net.arcs_of(finish):
            net.add_arc(replace(arc, transition=twin))
        if lost:
            net.add_input(BUDGET_PLACE, twin, "(data_left, acks_left)")
            net.add_output(BUDGET_PLACE, twin, after)
        twins[twin] = finish
        draws[twin] = failing
