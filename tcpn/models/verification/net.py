"""The verification net of a scenario and what it is built of: roles, choices, replay.

See :mod:`tcpn.models.verification` for the whole story and an example.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tcpn.errors import InputError
from tcpn.models.registered_variants import variant_spec
from tcpn.models.scenario import ConcreteFlow, ListErrors, RateErrors, Scenario, UniformTime
from tcpn.models.topology import ComposedNet, compose
from tcpn.models.verification.budget import BUDGET_PLACE, LossBudget
from tcpn.models.verification.bulk import (
    BULK_ABSTRACTIONS,
    DEFAULT_RTT_GRAIN_S,
    MAX_BULK_WINDOW,
    bulk_offsets,
    bulk_variants,
)
from tcpn.models.verification.bulk_replay import replay_bulk
from tcpn.models.verification.choices import (
    ADDED_VARS,
    EARLY_SUFFIX,
    LOSS_SUFFIX,
    U_CALM,
    U_EARLY,
    add_loss_choices,
    add_start_delays,
    random_times,
    wireless_choices,
)
from tcpn.models.verification.window import add_flight_refill
from tcpn.petrinets import Distribution, Firing, PetriNet, Simulator, explore
from tcpn.petrinets.statespace.intervals import DelayChoice, discretise_delays
from tcpn.petrinets.statespace.intervals import delay_points as points_of
from tcpn.petrinets.statespace.offsets import OffsetGroup
from tcpn.petrinets.statespace.space import CLOCK_MODES, TIME_DECIMALS, StateSpace
from tcpn.petrinets.timevalues import alike, binding_shifts, shifted_binding

__all__ = ["Role", "VerificationNet", "verification_net"]

#: The senders' and receivers' places and transitions a role lists (module-relative).
_SENDER_PLACES = ("tcb", "rtt", "timer", "start", "app", "connecting", "failed")

_RECEIVER_PLACES = ("rcv", "delack")


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
    #: for a queue: what each of its arrival-side transitions means (``enqueue``, ``drop``,
    #: ``mark``, ``meter``), as the trace has it
    events: Mapping[str, str] = field(default_factory=dict)


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
    transition whose simulator twin draws one stands for; ``delay_choices`` maps each
    transition copy that fixes a random delay (``t'k``, see
    :mod:`tcpn.petrinets.statespace.intervals`) to its
    :class:`~tcpn.petrinets.statespace.intervals.DelayChoice`;
    ``start_chain`` maps each transition of a random start's chain (``group{g}.start``,
    ``group{g}.gap{j}``) to ``(g, j)``: it starts connection ``j`` of flow group ``g``
    (the scenario's ``flows[g]``). ``clock`` is how :meth:`explore` treats time:
    ``"absolute"`` (CPN Tools' timed state space) or ``"relative"`` (timestamps and the
    components' ``CLOCK`` values kept relative to each state's clock;
    ``docs/statespace.md``, "Clock values").
    """

    net: PetriNet
    scenario: Scenario
    segments: int | None
    losses: LossBudget
    roles: Mapping[str, Role]
    choices: tuple[str, ...]
    abstractions: tuple[str, ...]
    flows: tuple[ConcreteFlow, ...] = ()
    twins: Mapping[str, str] = field(default_factory=dict)
    clock: str = "absolute"
    draws: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    delay_choices: Mapping[str, DelayChoice] = field(default_factory=dict)
    start_chain: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: a bulk sender's reductions (:mod:`tcpn.models.verification.bulk`), else empty
    offsets: tuple[OffsetGroup, ...] = ()

    def explore(self, **limits: Any) -> StateSpace:
        """The state space (``limits``: those of :func:`tcpn.petrinets.explore`, e.g. a
        ``symmetry`` from :func:`~tcpn.models.verification.flow_symmetry.flow_symmetry`)."""
        return explore(self.net, clock=self.clock, offsets=self.offsets, **limits)

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
        """The start time a path chose for each connection (by its number) of a flow group
        with a random start or gap."""
        position = {(self.scenario.flows[g].id or f"f{g}", f.index): i
                    for i, f in enumerate(self.flows) for g in range(len(self.scenario.flows))
                    if (self.scenario.flows[g].id or f"f{g}") == f.group}
        ends: dict[tuple[int, int], float] = {}
        for transition, _b in path:
            choice = self.delay_choices.get(transition)
            original = transition if choice is None else choice.original
            if original not in self.start_chain:
                continue
            g, j = self.start_chain[original]  # the copy's delay is fixed: the chosen one
            delay = float(self.net.transitions[transition].delay)  # type: ignore[arg-type]
            ends[g, j] = round(ends.get((g, j - 1), 0.0) + delay, 9)
        return {position[self.scenario.flows[g].id or f"f{g}", j]: start_s
                for (g, j), start_s in ends.items()}

    def simulation_scenario(self, losses: Mapping[str, Sequence[int]] | None = None
                            ) -> Scenario:
        """The scenario the simulator runs for this net with the given scripted ``losses``
        (per direction, added to the scenario's own lists): the transfer is finite and
        every direction that may lose has a scripted list."""
        return _scripted(self.scenario, self.segments, self.losses, losses or {})

    def simulation_net(self, losses: Mapping[str, Sequence[int]] | None = None,
                       starts: Mapping[int, float] | None = None) -> PetriNet:
        """The simulator's net of :meth:`simulation_scenario`, connection ``i`` starting at
        ``starts[i]`` where given (:meth:`chosen_starts`)."""
        scenario = self.simulation_scenario(losses)
        flows = [f.model_copy(update={"start_s": starts[i]}) if starts and i in starts else f
                 for i, f in enumerate(self.flows)]
        return compose(scenario, _finite_flows(scenario, flows, self.segments)).net

    def forced_draws(self, path: Iterable[tuple[str, Mapping[str, Any]]]) -> list[float]:
        """The uniform draws the simulator makes along ``path``, in order: those the path's
        choices stand for (``Simulator(..., forced_draws=...)`` replays them)."""
        return [u for t, _b in path for u in self.draws.get(t, ())]

    def replay(self, path: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Firing]:
        """Fire ``path`` (a firing sequence of this net, e.g. ``space.path_to(s)``) in the
        simulator's own net of :meth:`simulation_scenario` with the path's losses scripted
        and start times chosen: each loss fires as the transmission it stands beside, RED's
        draws are forced, start choices are not fired. Raises
        :class:`InputError` at the first step the simulator would not take. A bulk
        sender's path (``segments=None``) fires in the simulator on this net itself,
        matched step by step once made relative
        (:func:`~tcpn.models.verification.bulk_replay.replay_bulk`)."""
        if self.segments is None:  # a bulk space's path: relative numbers and time
            return replay_bulk(self.net, self.offsets, path)
        # the simulator's uniform draws forced to those the path's choices stand for
        sim = Simulator(self.simulation_net(self.scripted_losses(path),
                                            self.chosen_starts(path)), seed=0,
                        forced_draws=self.forced_draws(path))
        firings = []
        for step, (transition, binding) in enumerate(path):
            choice = self.delay_choices.get(transition)
            if (transition if choice is None else choice.original) in self.start_chain:
                continue  # the connection's start time in the simulator's net says it
            name = self.simulator_transition(transition)
            values = {k: v for k, v in binding.items() if k not in ADDED_VARS}
            if self.clock == "relative":
                values = _absolute_binding(sim, name, values)
            try:
                firings.append(sim.fire(name, values))
            except InputError as exc:
                raise InputError(f"replay step {step} ({transition}): {exc}") from None
        return firings


def _absolute_binding(sim: Simulator, transition: str, binding: Mapping[str, Any]
                      ) -> dict[str, Any]:
    """The simulator's binding of ``transition`` that a relative space's ``binding`` stands
    for: its ``CLOCK`` values are relative to the state's clock, which is the simulator's
    clock on a replayed path (rounded to ``TIME_DECIMALS``, so matched up to float noise);
    ``binding`` unchanged when the simulator has none such (``fire`` then says why)."""
    shifts = binding_shifts(sim.compiled.net, transition, TIME_DECIMALS)
    wanted = shifted_binding(binding, shifts, sim.now)
    for name, candidate in sim.enabled():
        if name == transition and alike(candidate, wanted):
            return candidate
    return dict(binding)


def _finite_flows(scenario: Scenario, flows: Sequence[ConcreteFlow], segments: int | None
                  ) -> list[ConcreteFlow]:
    return [f.model_copy(update={"bytes": None if segments is None else
                                 segments * f.tcp.segment_size_bytes}) for f in flows]


def _scripted(scenario: Scenario, segments: int | None, budget: LossBudget,
              extra: Mapping[str, Sequence[int]]) -> Scenario:
    """``scenario`` with scripted lists on the directions that may lose (see
    :meth:`VerificationNet.simulation_scenario`)."""
    links = []
    for link in scenario.links:
        if link.wireless is not None:  # its losses are forced draws of its attempts
            links.append(link)
            continue
        update = {}
        for side, (a, b, direction) in zip(("ab", "ba"), link.directions(), strict=True):
            qid = f"{a}->{b}"
            errors = direction.errors
            if not budget.covers(qid) and qid not in extra:
                continue
            own = list(errors.packets) if isinstance(errors, ListErrors) else []
            packets = sorted(set(own) | set(extra.get(qid, ())))
            update[side] = direction.model_copy(update={"errors": ListErrors(packets=packets)})
        links.append(link.model_copy(update=update) if update else link)
    # a random start or gap is fixed at its lower end: the start chain times the
    # verification net's connections, chosen_starts the simulator's
    flows = [f.model_copy(update={"bytes": None if segments is None else
                                  segments * scenario.flow_tcp(f).segment_size_bytes,
                                  **{name: spec.low_s for name in ("start_s", "gap_s")
                                     if isinstance(spec := getattr(f, name), UniformTime)}})
             for f in scenario.flows]
    return scenario.model_copy(update={"links": links, "flows": flows})


def _refuse(scenario: Scenario, segments: int, budget: LossBudget) -> None:
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
        for side, (a, b, direction) in zip(("ab", "ba"), link.directions(), strict=True):
            if isinstance(direction.errors, RateErrors) and not budget.covers(f"{a}->{b}") \
                    and direction.errors.rate > 0:
                raise InputError(f"links[{li}].{side}.errors: random losses (rate "
                                 f"{direction.errors.rate:g}) on {a}->{b} become choices only "
                                 "where the loss budget allows losses; give a budget > 0 that "
                                 "covers this direction, or remove the error model")
    for i, group in enumerate(scenario.flows):
        if not isinstance(group.receiver_clock_offset_s, int | float):
            raise InputError(f"flows[{i}].receiver_clock_offset_s: drawn at random; it offsets "
                             "the receiver's timestamps (a value, not a delay), and "
                             "verification needs a fixed one (a number)")


def _refuse_clock(scenario: Scenario, clock: str) -> None:
    """Raise :class:`InputError` for a clock mode the scenario's components cannot take."""
    if clock not in CLOCK_MODES:
        raise InputError(f"clock must be one of {CLOCK_MODES}, got {clock!r}")
    if clock == "absolute":
        return
    for i, group in enumerate(scenario.flows):
        if group.receiver_clock_skew != 0.0:
            raise InputError(f"flows[{i}].receiver_clock_skew: a drifting receiver clock "
                             "stamps (1 + skew) * now, which no relative state space can "
                             "shift; use clock='absolute'")
        if getattr(group.params, "skew_estimation", False):
            raise InputError(f"flows[{i}].params.skew_estimation: the skew estimate fits a "
                             "line to absolute send times; use clock='absolute'")


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
            f"{prefix}.{t}" for t, k in kinds.items() if k not in ("transmit",)),
            events={f"{prefix}.{t}": k for t, k in kinds.items()
                    if k not in ("transmit", "direct")})
        link_places = {"idle": f"{prefix}.idle"}
        if f"{prefix}.frames" in net.places:
            link_places["frames"] = f"{prefix}.frames"
        roles[f"{qid}.link"] = Role("link", link_places, sends + lost)
    roles["losses"] = Role("budget", {"budget": BUDGET_PLACE}, tuple(twins))
    return roles


def _abstractions(scenario: Scenario, segments: int | None, budget: LossBudget,
                  times: Mapping[int, tuple[Distribution | float, Distribution | float]],
                  delay_points: int | None, clock: str) -> tuple[str, ...]:
    where = "every link direction" if budget.links is None else ", ".join(budget.links)
    return (
        ("Each connection is a bulk sender (it never runs out of data)"
         if segments is None else
         f"Each connection sends a finite transfer of {segments} segments") + "; the scenario's "
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
        *(f"Flow group {scenario.flows[g].id or f'f{g}'} "
          + "; ".join([_points_text(start, delay_points, "starts")]
                      + [_points_text(gap, delay_points, "each next connection starts")
                         ] * (scenario.flows[g].count > 1))
          + " (random times discretised to these points, not the times between)."
          for g, (start, gap) in times.items()),
        "Every other delay is the simulator's deterministic one (serialisation, propagation, "
        "timers); simultaneous events are explored in every order.",
        "Time is absolute (CPN Tools' timed state space): the space is finite because the "
        "transfer ends and the losses are bounded." if clock == "absolute" else
        "Time is relative: a state keeps its timestamps and the components' CLOCK values "
        "(send times, echoes, idle-since times) relative to its own clock, so runs that "
        "reach one marking at different times are one state; when a state is reached is "
        "not kept (a path's times are the sums of its waits).",
    )


def _points_text(delay: Distribution | float, points: int | None, what: str) -> str:
    """``what`` happens after ``delay``: its points when random."""
    if isinstance(delay, Distribution):
        times = points_of(delay, points or 2, what)
        return f"{what} after one of {', '.join(f'{t:g}' for t in times)} s"
    return f"{what} after {delay:g} s"


def verification_net(scenario: Scenario, *, segments: int | None,
                     losses: LossBudget | None = None, delay_points: int | None = None,
                     seed: int | None = None, clock: str = "absolute",
                     rtt_grain_s: float = DEFAULT_RTT_GRAIN_S) -> VerificationNet:
    """The verification net of ``scenario``: every connection sends ``segments`` segments,
    the network may lose what ``losses`` allows (see the module docstring).

    A flow group whose ``start_s`` (or ``gap_s`` between its connections) is drawn
    uniformly from an interval starts at one of ``delay_points`` equally spaced times in
    it, both ends included (:mod:`tcpn.petrinets.statespace.intervals`; the explorer covers each,
    and
    every order of the events they make simultaneous). ``seed`` draws the scenario's other
    random choices (none are allowed yet). ``clock`` is how
    :meth:`VerificationNet.explore` treats time (``"absolute"`` or ``"relative"``; relative
    time refuses a receiver clock that drifts and Modified Vegas's skew estimation, which
    read absolute times).

    ``segments=None`` is a **bulk** sender (no end of data): its space closes only with
    ``clock="relative"`` and the reductions of :mod:`tcpn.models.verification.bulk`
    (sequence numbers and queue positions relative, cwnd capped at the receive window, the
    RTT estimator rounded to ``rtt_grain_s``).
    """
    budget = losses if losses is not None else LossBudget()
    if not isinstance(budget, LossBudget):
        raise InputError(f"losses must be a LossBudget, got {budget!r}")
    if segments is None:
        return _bulk(scenario, budget, delay_points, seed, clock, rtt_grain_s)
    times = random_times(scenario, delay_points)
    if budget.per_flight or budget.unbounded:
        raise InputError(f"segments={segments!r}: a loss budget per_flight or unbounded is "
                         "for a bulk sender (segments=None), whose runs never end")
    _refuse(scenario, segments, budget)
    _refuse_clock(scenario, clock)
    return _build(scenario, segments, budget, times, delay_points, seed, clock)


def _build(scenario: Scenario, segments: int | None, budget: LossBudget,
           times: Mapping[int, tuple[Distribution | float, Distribution | float]],
           delay_points: int | None, seed: int | None, clock: str) -> VerificationNet:
    prepared = _scripted(scenario, segments, budget, {})
    finite = _finite_flows(prepared, prepared.concrete_flows(seed), segments)
    composed = compose(prepared, finite)
    # (a bulk net's budget is per run: the segment count is not read)
    twins = add_loss_choices(composed, budget, segments or 1)
    draws: dict[str, tuple[float, ...]] = {
        name: (U_EARLY if name.endswith(EARLY_SUFFIX) else U_CALM,)
        for twin, original in twins.items() if original.endswith(".decide")
        for name in (twin, original)}
    radio_twins, radio_draws = wireless_choices(composed, budget, delay_points)
    twins.update(radio_twins)
    draws.update(radio_draws)
    for i, flow in enumerate(finite):
        variant_choices = variant_spec(flow.variant).state_space_choices
        if variant_choices is not None:
            assert segments is not None  # a bulk sender with random choices is refused
            variant_twins, variant_draws = variant_choices(composed.net, i, segments)
            twins.update(variant_twins)
            draws.update({name: (u,) for name, u in variant_draws.items()})
    chain = add_start_delays(composed, scenario, times)
    roles = _roles(composed, twins)
    net, delay_choices = discretise_delays(composed.net, delay_points or 2)
    return VerificationNet(
        net=net, scenario=scenario, segments=segments, losses=budget,
        roles=roles, choices=(*twins, *delay_choices,
                              *(t for t in chain if t in net.transitions)),
        abstractions=_abstractions(scenario, segments, budget, times, delay_points, clock),
        flows=tuple(finite), twins=twins, draws=draws, delay_choices=delay_choices,
        start_chain=chain, clock=clock)



def _bulk(scenario: Scenario, budget: LossBudget, delay_points: int | None,
          seed: int | None, clock: str, rtt_grain_s: float) -> VerificationNet:
    """The bulk verification net (``segments=None``), refusing what it cannot close."""
    _refuse_clock(scenario, clock)
    if clock != "relative":
        raise InputError("segments=None (a bulk sender): a bulk transfer's space never "
                         "closes in absolute time; use clock='relative' (send times and "
                         "timers relative to the clock, sequence numbers to the window)")
    if budget.per_window is not None:
        raise InputError("segments=None (a bulk sender): a per-window loss budget counts "
                         "windows of a finite transfer; give a per-run budget or "
                         "per_flight=True")
    if not rtt_grain_s > 0:
        raise InputError(f"rtt_grain_s must be > 0 for a bulk sender, got {rtt_grain_s!r}")
    times = random_times(scenario, delay_points)
    _refuse(scenario, 1, budget)
    for li, link in enumerate(scenario.links):
        for side, (_a, _b, direction) in zip(("ab", "ba"), link.directions(), strict=True):
            if isinstance(direction.errors, ListErrors) and direction.errors.packets:
                raise InputError(f"links[{li}].{side}.errors: a scripted loss list numbers "
                                 "packets from the start, which a bulk sender's space keeps "
                                 "relative; use a loss budget")
    for i, group in enumerate(scenario.flows):
        tcp = scenario.flow_tcp(group)
        window = max(1, min(tcp.rcv_buf_bytes, tcp.snd_buf_bytes) // tcp.segment_size_bytes)
        if not variant_spec(group.variant).bulk_state_space:
            raise InputError(f"flows[{i}].variant: {group.variant} as a bulk sender is not "
                             f"supported (its registration does not give bulk_state_space: "
                             f"the reductions are argued for {', '.join(bulk_variants())})")
        if window > MAX_BULK_WINDOW:
            raise InputError(f"flows[{i}]: the receive window is {window} segments "
                             f"(tcp.rcv_buf_bytes / segment_size_bytes); a bulk sender's "
                             f"space grows with it, give at most {MAX_BULK_WINDOW} segments")
        if tcp.handshake:
            raise InputError(f"flows[{i}]: tcp.handshake is on; after it the receiver "
                             "acknowledges segment 0 at once (a test of an absolute sequence "
                             "number, which the relative numbers cannot keep); set "
                             "tcp.handshake: false for a bulk sender")
        if group.stop_s is not None or group.app_rate_bps is not None:
            raise InputError(f"flows[{i}]: a bulk sender has no stop time and no paced "
                             "application (both count segments from the start)")
    built = _build(scenario, None, budget, times, delay_points, seed, clock)
    windows = {int(built.net.scope_of(t)["WINDOW"]) for t in built.net.transitions
               if t.endswith(".snd.send")}
    nodes = {i: int(built.net.scope_of(f"flow{i}.rcv.delack_timeout")["SRC"])
             for i in range(len(built.flows))}
    drop_tail = {f"{a}.{b}" for link in scenario.links for a, b, d in link.directions()
                 if d.queue.kind == "drop_tail"}
    offsets = bulk_offsets(built.net, len(built.flows), nodes, max(windows), rtt_grain_s,
                           drop_tail)
    if budget.per_flight:
        if len(built.flows) != 1:
            raise InputError(f"loss budget per_flight: scenario {scenario.name} has "
                             f"{len(built.flows)} connections; a per-window budget is one "
                             "flow's (its window), give a per-run budget")
        offsets[0] = add_flight_refill(built.net, "flow0", budget, offsets[0])
    return replace(built, offsets=tuple(offsets), abstractions=(
        *built.abstractions, *BULK_ABSTRACTIONS(rtt_grain_s)))
