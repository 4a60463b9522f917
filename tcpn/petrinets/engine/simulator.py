"""The timed simulator: a clock, a calendar of ready bindings, ``step()`` and ``run()``.

CPN Tools' timed semantics (see ``docs/semantics.md``): among the bindings enabled at
the current model time, one of the most urgent priority is chosen uniformly at random and
fired; when none is enabled now, the clock moves to the earliest time at which one is.

The loop stays small: compilation lives in :mod:`~tcpn.petrinets.engine.compiler`, monitors
and event logs in :mod:`~tcpn.petrinets.engine.monitors`, and results in
:mod:`~tcpn.petrinets.engine.result`.

>>> from tcpn.petrinets import INT, PetriNet, Place, Transition
>>> net = PetriNet("counter")
>>> net.add_place(Place("count", INT, initial=[0]))
>>> net.add_transition(Transition("increment", guard="x < 5"))
>>> net.add_input("count", "increment", "x")
>>> net.add_output("count", "increment", "x + 1")
>>> result = simulate(net, seed=1)
>>> result.firings, result.stop_reason, result.marking["count"]
(5, 'dead', [Token(value=5, time=0.0)])
"""

from __future__ import annotations

import math
import time as wallclock
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import MethodType
from typing import Any

import numpy as np

from tcpn.petrinets.cells import reset_cells
from tcpn.petrinets.engine.choice import candidates
from tcpn.petrinets.engine.compiler import CompiledNet, CompiledTransition, RandomDraws, compile_net
from tcpn.petrinets.engine.forced import ForcedDraws
from tcpn.petrinets.engine.initial_draws import fix_initial_draws
from tcpn.petrinets.engine.monitors import Monitor
from tcpn.petrinets.engine.native import SIMULATOR_DEFAULT, select_engine
from tcpn.petrinets.engine.result import SimulationResult, run_metadata
from tcpn.petrinets.errors import FiringError, InputError
from tcpn.petrinets.net import PetriNet, Token

__all__ = ["Firing", "Simulator", "independent_seeds", "simulate"]

Seed = int | np.random.SeedSequence | None
#: the containers of the hot loop's per-transition numbers (priorities, earliest
#: readiness, gate indices): a list and a tuple here; the native engine's loop swaps in
#: typed arrays and reads them as C arrays (``tcpn.petrinets.engine.native._LOOP_ARRAYS``)
_float_array: Callable[[list[float]], Any] = list
_int_array: Callable[[tuple[int, ...]], Any] = tuple


@dataclass(frozen=True)
class Firing:
    """One occurrence: when, which transition, with which binding."""

    time: float
    transition: str
    binding: dict[str, Any]


def independent_seeds(seed: int, replications: int) -> list[np.random.SeedSequence]:
    """Independent, reproducible random streams for ``replications`` runs from one seed."""
    if replications < 1:
        raise InputError(f"replications must be >= 1, got {replications}")
    return np.random.SeedSequence(seed).spawn(replications)


class Simulator:
    """Runs a compiled net from its initial marking under CPN Tools' timed semantics.

    ``seed`` seeds every random draw; ``forced_draws`` (uniform numbers in ``[0, 1]``)
    replaces the net's own draws (random functions, distributions, code actions' ``rng``)
    by these, in order, to replay a run whose draws are known
    (:class:`~tcpn.petrinets.engine.forced.ForcedDraws`); the choice among enabled bindings still
    follows ``seed``. Forced draws run on the ``python`` engine (whatever
    ``$TCPN_ENGINE`` says; another ``engine`` is an :class:`InputError`). ``firings``
    bounds the firings the caller will run on the net (all its runs), so that ``auto``
    runs a short command in Python rather than first build native modules for it
    (:func:`~tcpn.petrinets.engine.native.select_engine`).

    >>> from tcpn.petrinets import REAL, PetriNet, Place, Transition
    >>> net = PetriNet("draw")
    >>> net.add_place(Place("x", REAL, initial=[0.0]))
    >>> net.add_transition(Transition("roll", guard="v == 0.0"))
    >>> net.add_input("x", "roll", "v")
    >>> net.add_output("x", "roll", "uniform(1.0, 3.0)")
    >>> sim = Simulator(net, forced_draws=[0.25])
    >>> sim.step().transition, sim.tokens("x")
    ('roll', [Token(value=1.5, time=0.0)])
    """

    def __init__(self, net: PetriNet | CompiledNet, seed: Seed = 0,
                 monitors: Iterable[Monitor] = (), start_time: float = 0.0,
                 engine: str | None = None, forced_draws: Iterable[float] | None = None,
                 firings: int | None = None):
        check_seed(seed)
        # an initial marking drawn at random: drawn here, once, from this run's seed
        source = net.net if isinstance(net, CompiledNet) else net
        drawn = fix_initial_draws(source, seed)
        compiled = net if isinstance(net, CompiledNet) and drawn is source else \
            compile_net(drawn)
        if forced_draws is not None:
            # the compiled engines draw from NumPy's generator itself, not from a stand-in:
            # forced draws run the Python loop, the reference, which fires the same sequence
            engine = "python"
        #: the native build (``tcpn.petrinets.engine.native``): its ``engine``, ``reason`` and
        #: ``fallbacks`` say what runs compiled; ``engine=None`` reads ``$TCPN_ENGINE``,
        #: else ``"auto"`` (native when built or cheap to build, else Python)
        self.native = select_engine(compiled, engine, default=SIMULATOR_DEFAULT,
                                    firings=firings)
        self.compiled = self.native.compiled
        #: the loop that runs: the selected engine's (a
        #: :class:`~tcpn.petrinets.engine.contract.Loop` bound to this simulator), else
        #: :meth:`loop`
        self._engine_loop: Callable[..., str] = (
            self.loop if self.native.loop is None else MethodType(self.native.loop, self))
        if not math.isfinite(start_time):
            raise InputError(f"start_time must be finite, got {start_time!r}")
        self.seed = seed
        reset_cells(self.compiled.net.declarations)  # a run starts from the declared values
        self.now = float(start_time)
        self.firings = 0
        self.marking = self.compiled.initial_marking(keyed=True)
        self.firing_counts = [0] * len(self.compiled.transitions)
        generator = np.random.default_rng(seed)
        self._draw = RandomDraws(generator if forced_draws is None
                                 else ForcedDraws(forced_draws),  # type: ignore[arg-type]
                                 choices=generator)
        self.reset_calendar()
        #: ``(time, transition index, binding)`` of the last firing the loop made
        #: (index -1: none yet)
        self.last_firing: tuple[float, int, tuple[Any, ...]] = (self.now, -1, ())
        #: what the engine keeps between runs of its loop (``None``: nothing yet; the
        #: engine owns it, see :mod:`~tcpn.petrinets.engine.contract`)
        self.engine_state: Any = None
        #: called with the transition's index after :meth:`fire` fires a binding outside
        #: the engine's loop (an engine that keeps its own state takes the firing in)
        self.fired_outside: Callable[[int], None] | None = None
        self.monitors = list(monitors)
        #: per transition, the functions called with ``(self, binding)`` after it fires
        self._after: list[list[Callable[[Simulator, tuple[Any, ...]], None]]] = [
            [] for _ in self.compiled.transitions]
        self._before: list[list[Monitor]] = [[] for _ in self.compiled.transitions]
        for monitor in self.monitors:
            monitor.start(self)
            for t in self.compiled.transitions:
                if monitor.watches(t.name):
                    self._after[t.index].append(monitor.observer(t) or _observe(monitor, t))
                    if monitor.wants_before:
                        self._before[t.index].append(monitor)

    # -- what an engine reads (tcpn.petrinets.engine.contract.EngineHost) -------------------
    @property
    def draws(self) -> RandomDraws:
        """The random draws of the net's inscriptions and of the choice among bindings."""
        return self._draw

    @property
    def monitors_before(self) -> list[list[Monitor]]:
        """Per transition, the monitors told before it fires."""
        return self._before

    @property
    def observers_after(self) -> list[list[Callable[[Simulator, tuple[Any, ...]], None]]]:
        """Per transition, the functions called with ``(simulator, binding)`` after it fires."""
        return self._after

    def reset_calendar(self) -> None:
        """Forget every binding found so far: the next choice enumerates every transition and
        tests every gate again from the marking (after an engine changed the marking
        behind the calendar's back)."""
        self._in_order, self._latest = self.compiled.timestamp_order(self.marking)
        n_transitions, n_gates = len(self.compiled.transitions), len(self.compiled.gates)
        self._bindings: list[list[tuple[float, tuple[Any, ...]]]] = [
            [] for _ in range(n_transitions)
        ]
        self._live: set[int] = set()
        self._gate_ready: list[float | None] = [None] * n_gates
        self._group_sum = [0] * n_gates
        self._total = 0
        self._dirty: set[int] = set(range(n_transitions))
        self._dirty_gates: set[int] = set(range(n_gates))

    # -- marking queries ------------------------------------------------------------------
    def place_number(self, name: str) -> int:
        """The index of place ``name`` in :attr:`marking` (an :class:`InputError` if none)."""
        try:
            return self.compiled.place_index[name]
        except KeyError:
            raise InputError(f"no place named {name!r} in net {self.compiled.net.name}") from None

    def count(self, place: str) -> int:
        """The number of tokens on ``place`` (ready or not)."""
        p = self.place_number(place)
        values = self.marking[p].values()
        return sum(len(v) for v in values) if self.compiled.timed[p] else sum(values)

    def tokens(self, place: str) -> list[Token]:
        """The tokens on ``place``, with timestamps (0 for untimed places)."""
        p = self.place_number(place)
        if self.compiled.timed[p]:
            return [Token(v, t) for v, times in self.marking[p].items() for t in times]
        return [Token(v, 0.0) for v, n in self.marking[p].items() for _ in range(n)]

    def marking_dict(self) -> dict[str, list[Token]]:
        """The whole marking as ``place -> tokens``."""
        return {name: self.tokens(name) for name in self.compiled.place_names}

    # -- the core ------------------------------------------------------------------------
    #
    # State kept between firings: ``_bindings[t]``, the bindings ``enumerate_due`` found
    # for t (its gate arcs aside); ``_gate_ready[g]``, from when gate g is satisfied
    # (``None``: not satisfied); ``_live``, the transitions with bindings whose gate, if
    # any, is satisfied; ``_group_sum[g]``, the bindings of the transitions gate g guards,
    # and ``_total``, the bindings of the live transitions (both kept up to date only for
    # nets that take the simple choice, see ``loop``); ``_dirty`` and ``_dirty_gates``,
    # what must be re-enumerated and re-tested before the next choice.

    def _refresh(self) -> None:
        """Re-test the dirty gates and re-enumerate the dirty transitions."""
        compiled, marking, now = self.compiled, self.marking, self.now
        gate_ready, group_sum, gate_of = self._gate_ready, self._group_sum, compiled.gate_of
        bindings, live = self._bindings, self._live
        try:
            for g in self._dirty_gates:
                ready = compiled.gates[g][0](marking)
                old = gate_ready[g]
                gate_ready[g] = ready
                if ready is None:
                    if old is not None:
                        self._total -= group_sum[g]
                        live.difference_update(compiled.gates[g][2])
                    continue
                if old is None:
                    self._total += group_sum[g]
                    live.update(t for t in compiled.gates[g][2] if bindings[t])
                if old is None or (ready != old and ready > now):
                    self._dirty.update(t for t in compiled.gate_cut[g]
                                       if compiled.transitions[t].cut[0])
            self._dirty_gates.clear()
            for t in self._dirty:
                transition = compiled.transitions[t]
                g = gate_of[t]
                floor = now
                if g >= 0:
                    ready = gate_ready[g]
                    if ready is not None and ready > now:
                        floor = ready
                if all(marking[p] for p in transition.required_places):
                    found = transition.enumerate_due(marking, floor, self._in_order)
                else:
                    found = []
                change = len(found) - len(bindings[t])
                bindings[t] = found
                if g >= 0:
                    group_sum[g] += change
                if g < 0 or gate_ready[g] is not None:
                    self._total += change
                    if found:
                        live.add(t)
                    else:
                        live.discard(t)
            self._dirty.clear()
        except FiringError as exc:
            if exc.time is None:  # a guard reading the clock says when it was tested
                exc.time = now
            raise

    def _candidates(self) -> tuple[float, list[tuple[int, tuple[Any, ...]]]]:
        """The earliest firing time and the most urgent bindings enabled at that time.

        When that time is ahead of the clock, the guards that read the clock are tested
        at it (as the loop does once it advances the clock there), and the clock is left
        where it was.
        """
        at, chosen = self._options_at(self.now)
        readers = self.compiled.clock_readers
        if readers and self.now < at < math.inf:
            clock = self.now
            self.now = at
            self._dirty.update(readers)
            try:
                self._refresh()
                at, chosen = self._options_at(at)
            finally:
                self.now = clock
                self._dirty.update(readers)
        return at, chosen

    def _options_at(self, now: float) -> tuple[float, list[tuple[int, tuple[Any, ...]]]]:
        transitions, gate_of = self.compiled.transitions, self.compiled.gate_of

        def options() -> Iterator[tuple[float, float, tuple[int, tuple[Any, ...]]]]:
            for t in self._live:
                priority = transitions[t].priority
                floor = now
                gate = self._gate_ready[gate_of[t]] if gate_of[t] >= 0 else None
                if gate is not None and gate > now:  # live: a gate it has is satisfied
                    floor = gate
                for ready, binding in self._bindings[t]:
                    yield (ready if ready > floor else floor), priority, (t, binding)

        return candidates(options())

    def _fire(self, at: float, t: int, binding: tuple[Any, ...]) -> None:
        if at != self.now:  # the guards that read the clock are tested again
            self._dirty.update(self.compiled.clock_readers)
        self.now = at
        transition = self.compiled.transitions[t]
        for monitor in self._before[t]:
            monitor.before(self, transition, binding)
        try:
            mask = transition.fire_tracked(self.marking, binding, at, self._draw,
                                           self._in_order, self._latest)
        except FiringError as exc:
            exc.time = at
            raise
        self._dirty.update(self.compiled.affected_by(t, mask))
        self._dirty_gates.update(self.compiled.gate_affected[t])
        self.firings += 1
        self.firing_counts[t] += 1
        for observe in self._after[t]:
            observe(self, binding)

    def loop(self, horizon: float, limit: float,
             stop_when: Callable[[Simulator], bool] | None,
             progress: Callable[[Simulator], None] | None) -> str:
        """The Python engine's loop, the reference every engine's loop fires alike
        (:class:`~tcpn.petrinets.engine.contract.Loop`): fire until the clock would pass
        ``horizon``, ``limit`` firings, ``stop_when(self)`` or a dead marking; return which.

        The hot loop: ``_refresh``, ``_candidates`` and ``_fire`` inlined, plus the choice.

        It computes exactly what those methods do (they serve the one-off queries); the
        inlining keeps method calls and attribute look-ups out of the per-firing path.
        After a firing it re-tests the gates and re-enumerates the transitions that
        firing affected, from precomputed tuples. With one priority and no timed place,
        every binding is enabled now: the choice draws an index below the running total
        of bindings and walks the live transitions to it. The native engine's guard
        partitions (``CompiledNet.enumerate_groups``) are enumerated once per refresh, their
        members' bindings taken from the group. ``tests/test_calendar.py``
        replays runs through the query methods to keep the two in step.
        """
        self._refresh()
        compiled = self.compiled
        transitions = compiled.transitions
        enumerate_fns = [tr.enumerate_due for tr in transitions]
        fire_fns = [tr.fire_tracked for tr in transitions]
        in_order, latest = self._in_order, self._latest
        priorities = _float_array([tr.priority for tr in transitions])
        body_affected = compiled.body_affected
        # the transitions whose guard reads the clock, enumerated again when it advances:
        # the loop then refreshes as after a firing of the pseudo-transition ``advanced``,
        # which touches no gate
        clock_readers = compiled.clock_readers
        clocked = bool(clock_readers)
        advanced = len(transitions)
        gate_affected = (*compiled.gate_affected, ()) if clocked else compiled.gate_affected
        affected_by, by_mask = compiled.affected_by, compiled.by_mask
        masked = [bool(tr.cond_places) for tr in transitions]
        gate_fns = [gate[0] for gate in compiled.gates]
        members = [gate[2] for gate in compiled.gates]
        gate_of, gate_cut = _int_array(compiled.gate_of), compiled.gate_cut
        gated = bool(compiled.gates)
        cuts = [tr.cut for tr in transitions]
        # the guard partitions enumerated together (the native engine's: see
        # tcpn.petrinets.engine.cython_code.groups): the first member re-enumerated after a
        # firing calls its group, which leaves each member's bindings and cut flag in
        # ``stash``, marked with the firing count in ``stamps``; the others take theirs
        # from there
        grouped = bool(compiled.enumerate_groups)
        group_of = _int_array(compiled.group_of or (-1,))
        group_fns = [group[0] for group in compiled.enumerate_groups]
        group_members = [group[1] for group in compiled.enumerate_groups]
        stamps = array("l", [-1] * len(transitions))
        stash: list[Any] = [None] * len(transitions)
        gate_ready: list[Any] = self._gate_ready  # floats for the satisfied gates
        group_sum = self._group_sum
        bindings, live = self._bindings, self._live
        before, after = self._before, self._after
        marking, draw, counts = self.marking, self._draw, self.firing_counts
        choose = draw.choose
        required = [tr.required_places for tr in transitions]
        simple = not any(compiled.timed) and len(set(priorities)) <= 1
        # the earliest readiness of each live transition's bindings (the choice's first
        # pass reads one number per transition)
        earliest = _float_array([min([r for r, _b in found]) if found and not simple
                                 else math.inf for found in bindings])
        now, firings, total = self.now, self.firings, self._total
        inf = math.inf
        next_progress = wallclock.perf_counter() + 0.2
        reason = "dead"
        t = fired = -1
        todo: tuple[int, ...] = ()
        binding: tuple[Any, ...] = ()
        try:
            while True:
                if fired >= 0 and not gated:
                    # bring the state up to date after the previous firing (no gates)
                    for u in todo:
                        for p in required[u]:
                            if not marking[p]:
                                found = []
                                break
                        else:
                            if grouped and group_of[u] >= 0:
                                if stamps[u] != firings:
                                    results = group_fns[group_of[u]](marking, now, in_order)
                                    for i, v in enumerate(group_members[group_of[u]]):
                                        stash[v] = results[i]
                                        stamps[v] = firings
                                found, cuts[u][0] = stash[u]
                            else:
                                found = enumerate_fns[u](marking, now, in_order)
                        if simple:
                            total += len(found) - len(bindings[u])
                        bindings[u] = found
                        if found:
                            live.add(u)
                            if not simple:
                                earliest[u] = (found[0][0] if len(found) == 1
                                               else min([r for r, _b in found]))
                        else:
                            live.discard(u)
                    fired = -1
                elif fired >= 0:
                    # the same, with gates: re-test those the firing touched first
                    for g in gate_affected[fired]:
                        ready = gate_fns[g](marking)
                        old = gate_ready[g]
                        gate_ready[g] = ready
                        if ready is None:
                            if old is not None:
                                total -= group_sum[g]
                                live.difference_update(members[g])
                            continue
                        if old is None:
                            total += group_sum[g]
                            for u in members[g]:
                                if bindings[u]:
                                    live.add(u)
                        if gate_cut[g] and (old is None or (ready != old and ready > now)):
                            # members whose last enumeration stopped early at a time the
                            # gate's new readiness may now tie with: enumerate them again
                            for u in gate_cut[g]:
                                if cuts[u][0]:
                                    todo += (u,)
                    for u in todo:
                        g = gate_of[u]
                        for p in required[u]:
                            if not marking[p]:
                                found = []
                                break
                        else:
                            floor = now
                            if g >= 0 and gate_ready[g] is not None and gate_ready[g] > now:
                                floor = gate_ready[g]
                            if grouped and group_of[u] >= 0:
                                # a group's members share their gate, hence the floor
                                if stamps[u] != firings:
                                    results = group_fns[group_of[u]](marking, floor, in_order)
                                    for i, v in enumerate(group_members[group_of[u]]):
                                        stash[v] = results[i]
                                        stamps[v] = firings
                                found, cuts[u][0] = stash[u]
                            else:
                                found = enumerate_fns[u](marking, floor, in_order)
                        if simple:  # the running totals serve the simple choice only
                            if g >= 0:
                                group_sum[g] += len(found) - len(bindings[u])
                            if g < 0 or gate_ready[g] is not None:
                                total += len(found) - len(bindings[u])
                        bindings[u] = found
                        if found and not simple:
                            earliest[u] = (found[0][0] if len(found) == 1
                                           else min([r for r, _b in found]))
                        if g >= 0 and gate_ready[g] is None:
                            continue
                        if found:
                            live.add(u)
                        else:
                            live.discard(u)
                    fired = -1
                if firings >= limit:
                    reason = "max_firings"
                    break
                if simple:
                    # every binding is enabled now: draw an index below the total
                    if not total:
                        reason = "dead"
                        break
                    k = choose(total) if total > 1 else 0
                    for t in live:
                        found = bindings[t]
                        if k < len(found):
                            binding = found[k][1]
                            break
                        k -= len(found)
                else:
                    # the earliest time and most urgent priority, per transition from its
                    # earliest binding (a binding's time is its readiness or its gate's,
                    # whichever is later); then the bindings at that time and priority, in
                    # the order of ``live`` and of the transitions' bindings
                    best_time = best_priority = inf
                    best = -1
                    tied = False
                    for t in live:
                        at = earliest[t]
                        if at < now:
                            at = now
                        if gated:
                            g = gate_of[t]
                            if g >= 0:
                                opens = gate_ready[g]
                                if opens > at:
                                    at = opens
                        priority = priorities[t]
                        if at < best_time or (at == best_time and priority < best_priority):
                            best_time, best_priority, best, tied = at, priority, t, False
                        elif at == best_time and priority == best_priority:
                            tied = True
                    if best < 0:
                        reason = "dead"
                        break
                    if best_time > horizon:
                        now = horizon
                        reason = "horizon"
                        break
                    if clocked and best_time > now:
                        # the clock advances: the guards reading it are tested at the new
                        # time before the choice, which then takes every binding enabled
                        now = self.now = best_time
                        todo, fired = clock_readers, advanced
                        continue
                    now = self.now = best_time
                    if not tied and len(bindings[best]) == 1:
                        t, binding = best, bindings[best][0][1]
                    else:
                        chosen: list[tuple[int, tuple[Any, ...]]] = []
                        for t in live if tied else (best,):
                            if priorities[t] != best_priority:
                                continue
                            if gated:
                                g = gate_of[t]
                                if g >= 0:
                                    opens = gate_ready[g]
                                    if opens > best_time:
                                        continue
                            for at, binding in bindings[t]:
                                if at <= best_time:
                                    chosen.append((t, binding))
                        t, binding = (chosen[0] if len(chosen) == 1
                                      else chosen[choose(len(chosen))])
                if before[t]:
                    for monitor in before[t]:
                        monitor.before(self, transitions[t], binding)
                mask = fire_fns[t](marking, binding, now, draw, in_order, latest)
                fired = t
                # the transitions to enumerate again: those reading a place it wrote
                if masked[t]:  # its fire_tracked returns an int mask
                    hit = by_mask[t].get(mask)  # type: ignore[arg-type]
                    todo = hit if hit is not None else affected_by(t, mask)
                else:
                    todo = body_affected[t]
                firings += 1
                counts[t] += 1
                if after[t]:
                    self.firings = firings
                    for observe in after[t]:
                        observe(self, binding)
                if stop_when is not None:
                    self.firings = firings
                    if stop_when(self):
                        reason = "predicate"
                        break
                if progress is not None and (firings & 1023) == 0:
                    clock = wallclock.perf_counter()
                    if clock >= next_progress:
                        self.firings = firings
                        progress(self)
                        next_progress = clock + 0.2
        except FiringError as exc:
            if exc.time is None:
                exc.time = now
            raise
        finally:
            self.now, self.firings, self._total = now, firings, total
            if fired >= 0:
                self._dirty.update(todo)
                self._dirty_gates.update(gate_affected[fired])
            if clocked:  # the clock may move before the next run (``run``'s horizon)
                self._dirty.update(clock_readers)
        self.last_firing = (now, t, binding)
        return reason

    def peek(self) -> float:
        """The time of the next firing (``inf`` at a dead marking)."""
        self._refresh()
        return self._candidates()[0]

    def enabled(self) -> list[tuple[str, dict[str, Any]]]:
        """The bindings that may fire next, as ``(transition, binding)`` pairs."""
        self._refresh()
        _, chosen = self._candidates()
        return [(self.compiled.transitions[t].name, self._binding_dict(t, b)) for t, b in chosen]

    def _binding_dict(self, t: int, binding: tuple[Any, ...]) -> dict[str, Any]:
        return dict(zip(self.compiled.transitions[t].variables, binding, strict=True))

    def step(self) -> Firing | None:
        """Fire one binding and return it; ``None`` at a dead marking."""
        if self._engine_loop(math.inf, self.firings + 1, None, None) != "max_firings":
            return None
        at, t, binding = self.last_firing
        return Firing(at, self.compiled.transitions[t].name, self._binding_dict(t, binding))

    def fire(self, transition: str, binding: dict[str, Any]) -> Firing:
        """Fire one given binding now, if it is among those :meth:`enabled` returns.

        This replays firing sequences (for example a path found by the state-space
        explorer); a binding that may not fire next is an :class:`InputError`.
        """
        self._refresh()
        at, candidates = self._candidates()
        for t, values in candidates:
            ct = self.compiled.transitions[t]
            if ct.name == transition and self._binding_dict(t, values) == binding:
                self._fire(at, t, values)
                if self.fired_outside is not None:
                    self.fired_outside(t)
                return Firing(at, transition, binding)
        raise InputError(
            f"transition {transition} with binding {binding} may not fire next at time "
            f"{self.now:g}; enabled: {self.enabled()}"
        )

    def run(self, until: float | None = None, max_firings: int | None = None,
            stop_when: Callable[[Simulator], bool] | None = None,
            progress: Callable[[Simulator], None] | None = None) -> SimulationResult:
        """Fire until the horizon ``until``, ``max_firings``, ``stop_when(sim)`` or a dead marking.

        Every binding enabled at a time ``<= until`` fires; the clock then stands at
        ``until``. ``progress`` is called about every 0.2 s of wall time.
        """
        if until is not None and (not math.isfinite(until) or until < self.now):
            raise InputError(f"until={until!r} must be finite and >= the clock ({self.now})")
        if max_firings is not None and max_firings < 0:
            raise InputError(f"max_firings must be >= 0, got {max_firings}")
        horizon = math.inf if until is None else until
        limit = math.inf if max_firings is None else self.firings + max_firings
        started = wallclock.perf_counter()
        reason = self._engine_loop(horizon, limit, stop_when, progress)
        if reason == "dead" and until is not None:
            self.now = max(self.now, horizon)
        wall_s = wallclock.perf_counter() - started
        for monitor in self.monitors:
            monitor.finish(self)
        return SimulationResult(
            stop_reason=reason,
            final_time=self.now,
            firings=self.firings,
            firing_counts={t.name: n for t, n in zip(self.compiled.transitions,
                                                      self.firing_counts, strict=True)},
            marking=self.marking_dict(),
            monitors={m.name: m.result() for m in self.monitors},
            metadata=run_metadata(self.compiled.net, self.seed, wall_s,
                                  self.compiled.fingerprint),
        )


def _observe(monitor: Monitor, transition: CompiledTransition
             ) -> Callable[[Simulator, tuple[Any, ...]], None]:
    """``monitor.observe`` for firings of ``transition``, as the loop calls observers."""
    observe = monitor.observe
    return lambda sim, binding: observe(sim, transition, binding)


def check_seed(seed: object) -> None:
    """Refuse a seed NumPy cannot take (a negative integer, a bool), naming it, before it
    reaches a generator that would fail with a bare ``ValueError``.

    >>> check_seed(-1)
    Traceback (most recent call last):
    tcpn.errors.InputError: seed must be a non-negative integer, got -1
    """
    if isinstance(seed, bool) or (isinstance(seed, int) and seed < 0):
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")


def simulate(net: PetriNet | CompiledNet, seed: Seed = 0, until: float | None = None,
             max_firings: int | None = None, monitors: Iterable[Monitor] = (),
             stop_when: Callable[[Simulator], bool] | None = None) -> SimulationResult:
    """Run ``net`` once from its initial marking; see :meth:`Simulator.run`."""
    return Simulator(net, seed=seed, monitors=monitors).run(
        until=until, max_firings=max_firings, stop_when=stop_when
    )

