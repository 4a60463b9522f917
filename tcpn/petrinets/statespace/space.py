"""Reachable markings of a net by breadth-first search, on the simulator's compiled code.

:func:`explore` builds the state space of an untimed net, or the *timed* state space of a
net whose delays are deterministic: the successors of a state are the firings of the
bindings the simulator could pick next there (the earliest enabling time, then the most
urgent priority; see :meth:`~tcpn.petrinets.engine.simulator.Simulator._candidates`). Enabling
and firing run the code :func:`~tcpn.petrinets.engine.compiler.compile_net` generates for the
simulator, so the two engines cannot disagree on what a transition does.

Time (``clock=``), see ``docs/statespace.md``:

* ``"relative"`` (default): a state holds timestamps relative to its own clock, and a
  token ready in the past counts as ready now (relative stamp 0). Two states that differ
  only in absolute time are one state, so cyclic timed nets get finite state spaces.
  This is the *time equivalence* of Christensen, Kristensen and Mailund (ICATPN 2001) and
  CPN Tools 4's time reduction option; CPN Tools' default timed state space keeps absolute
  time and is infinite for such nets. Inscriptions may not read ``now`` here.
* ``"absolute"``: a state is the marking with absolute timestamps plus the global clock,
  as CPN Tools' default timed state space.

Storage is compact: place contents are interned once and a marking is one int packing
their numbers (:mod:`~tcpn.petrinets.statespace.store`); edges keep only their target,
their labels (transition, binding) are recomputed when asked for. Untimed nets run a
specialised path that memoises, per transition, the successors of each combination of the
contents of the places the transition reads or writes. Timed nets memoise bindings by the
contents of the places read and firings by those contents and the time, and decode only
the places read (``docs/statespace.md``, "Speed"); every memo is bounded.

>>> from tcpn.petrinets.examples import counter
>>> space = explore(counter(3))
>>> len(space), space.complete, space.dead_markings()
(4, True, [3])
>>> space.marking(3)
{'count': [Token(value=3, time=0.0)]}
>>> space.path_to(2)
[('increment', {'x': 0}), ('increment', {'x': 1})]
"""

from __future__ import annotations

import logging
import math
import sys
import time as wallclock
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.cells import reset_cells, written_cells
from tcpn.petrinets.engine.choice import candidates
from tcpn.petrinets.engine.compiler import (
    CompiledNet,
    CompiledTransition,
    Marking,
    RandomDraws,
    compile_net,
)
from tcpn.petrinets.engine.native import resolve_engine, select_engine, why_unavailable
from tcpn.petrinets.net import PetriNet, Token
from tcpn.petrinets.statespace.cexplore.explorer import CExplorer, CExplorerError
from tcpn.petrinets.statespace.explorable import check_explorable
from tcpn.petrinets.statespace.intervals import DelayChoice, discretise_delays
from tcpn.petrinets.statespace.memory import MemoryBudget
from tcpn.petrinets.statespace.offsets import OFFSET_CHECK, OffsetGroup, Offsets
from tcpn.petrinets.statespace.store import MarkingStore, sampled_size
from tcpn.petrinets.statespace.symmetry import Symmetry, SymmetryIndex
from tcpn.petrinets.timevalues import (
    CHECK_OFFSET_S,
    ClockValues,
    translation_mismatch,
)

if TYPE_CHECKING:
    import networkx as nx
    from scipy.sparse import csr_array

_log = logging.getLogger("tcpn.native")

__all__ = ["CLOCK_MODES", "DEFAULT_MAX_STATES", "DEFAULT_SHIFT_CHECKS", "Edge", "StateSpace",
           "explore"]

#: explore()'s state budget when none is given (about 0.5 GB at 100 bytes per state):
#: an unbounded net stops here, ``stop_reason == "max_states"``, instead of running on.
DEFAULT_MAX_STATES = 5_000_000
#: Seconds between two progress reports.
PROGRESS_EVERY_S = 0.5
#: Seconds between two readings of the resident memory for the memory budget (a reading
#: costs about 50 us: every 256 states it would cost the C search a quarter of its time).
MEMORY_EVERY_S = 0.02
#: ... and at least once every this many bytes the result will take grows (the C search
#: fills hundreds of thousands of states in an interval: measured 28 MB past a budget)
MEMORY_EVERY_BYTES = 4 << 20
#: States whose firings explore() checks to be translation invariant when the net has
#: CLOCK values (relative time; see :mod:`~tcpn.petrinets.timevalues`).
DEFAULT_SHIFT_CHECKS = 1000
#: How timed state spaces treat the clock (see the module docstring).
CLOCK_MODES = ("relative", "absolute")
#: Relative timestamps are rounded to this many decimals so that float noise
#: (0.1 + 0.2 - 0.3) does not split one state into several.
TIME_DECIMALS = 9
#: A transition's memo is checked when it reaches these sizes and dropped when most
#: look-ups missed (every state gave a new combination, as in a chain).
_MEMO_FIRST_CHECK = 1024
#: A memo reaching this many entries is emptied (and refilled): its memory stays bounded
#: whatever the number of states.
_MEMO_MAX_ENTRIES = 1 << 19
#: At most this many (place, content, elapsed time) -> shifted content entries are kept.
_SHIFT_MEMO_SIZE = 1 << 16
#: The firing memo of timed paths is emptied when it reaches this many entries.
_FIRED_MEMO_SIZE = 1 << 16


@dataclass(frozen=True)
class Edge:
    """One arc of the state space: ``source`` fires ``transition`` with ``binding``.

    ``elapsed`` is the model time the firing waited (0 in untimed nets).
    """

    source: int
    target: int
    transition: str
    binding: dict[str, Any]
    elapsed: float


Successor = tuple[CompiledTransition, tuple[Any, ...], float, int]


class _Rule:
    """One transition as the untimed path uses it: its field mask and its memo."""

    __slots__ = ("ct", "deltas", "mask", "memo", "memo_on", "missed", "next_check", "placed",
                 "placed_on", "rw")

    def __init__(self, ct: CompiledTransition):
        self.ct = ct
        self.rw = tuple(sorted(set(ct.reads_places) | set(ct.writes_places)))
        self.mask = 0
        self.memo: dict[int, tuple[int, ...]] = {}
        self.memo_on = True
        self.next_check = _MEMO_FIRST_CHECK
        self.placed: dict[tuple[int, int, tuple[Any, ...]], int] = {}
        self.placed_on = True
        #: firings that missed ``placed``, firings looked up, when to judge the hit rate
        self.missed = [0, 0, _MEMO_FIRST_CHECK]
        self.deltas: Callable[[int], tuple[int, ...]] = lambda key: ()  # set by relayout


class _Bindings:
    """Transitions that read the same places, their bindings memoised by those places'
    contents (the timed path; the untimed one memoises whole firings in :class:`_Rule`)."""

    __slots__ = ("mask", "memo", "memo_on", "next_check", "reads", "transitions")

    def __init__(self, reads: tuple[int, ...]):
        self.reads = reads
        #: ``(position in the exploration order, transition)``
        self.transitions: list[tuple[int, CompiledTransition]] = []
        self.mask = 0
        #: reads' contents -> ``(position, transition, ready, binding, firing id, mask of
        #: the places the firing reads or writes)`` of every binding
        self.memo: dict[int, tuple[_Found, ...]] = {}
        self.memo_on = True
        self.next_check = _MEMO_FIRST_CHECK

    def bindings(self, marking: Marking, masks: dict[int, int]) -> tuple[_Found, ...]:
        """Every binding of the group's transitions in ``marking``, in exploration order."""
        out: list[_Found] = []
        for position, ct in self.transitions:
            for j, (ready, binding) in enumerate(ct.enumerate(marking)):
                out.append((position, ct, ready, binding, (position, j), masks[position]))
        return tuple(out)


_Found = tuple[int, CompiledTransition, float, tuple[Any, ...], tuple[int, int], int]


class SuccessorGenerator:
    """Successor computation of one compiled net: the generic path and the untimed memo path."""

    def __init__(self, compiled: CompiledNet, clock: str,
                 offsets: Sequence[OffsetGroup] = (), symmetry: Symmetry | None = None):
        self.compiled = compiled
        #: the offset groups whose numbers every state keeps canonical (:mod:`.offsets`)
        self.offsets = Offsets(compiled.net, compiled.place_names, offsets)
        #: the renamings whose orbits are one state each (:mod:`.symmetry`), or ``None``
        self.symmetry = SymmetryIndex(compiled.net, compiled.place_names, symmetry) \
            if symmetry is not None and len(symmetry) > 1 else None
        if self.symmetry is not None and self.offsets:
            raise InputError("symmetry and offset groups are not combined: explore with one")
        self.n_places = len(compiled.place_names)
        self.timed_net = any(compiled.timed)
        self.relative = self.timed_net and clock == "relative"
        self.absolute = self.timed_net and clock == "absolute"
        self.clock_field = self.n_places  # only used when absolute
        self.store = MarkingStore(compiled.timed, extra_fields=1 if self.absolute else 0)
        self.timed_places = tuple(p for p, t in enumerate(compiled.timed) if t)
        #: the places whose values hold CLOCK parts (moved with the clock in relative time)
        self.clock_values = ClockValues(compiled.net, compiled.place_names, TIME_DECIMALS) \
            if self.relative else ClockValues(compiled.net, (), TIME_DECIMALS)
        #: relative time: the places whose contents change when the clock moves on
        self.moving = tuple(sorted(set(self.timed_places) | set(self.clock_values.places))) \
            if self.relative else ()
        # a stable sort keeps net order within one priority: every path enumerates alike
        self.ordered = tuple(sorted(compiled.transitions, key=lambda t: t.priority))
        self.draw = RandomDraws(np.random.default_rng(0))  # never drawn from: checked above
        self.groups: list[list[_Rule]] = []
        for ct in self.ordered:
            if not self.groups or self.groups[-1][0].ct.priority != ct.priority:
                self.groups.append([])
            self.groups[-1].append(_Rule(ct))
        # a transition joins the group of the first transition (largest input sets first)
        # that reads all its places: one memo look-up per group and state
        self.rules: list[_Bindings] = []
        for position, ct in sorted(enumerate(self.ordered),
                                   key=lambda item: -len(set(item[1].reads_places))):
            reads = set(ct.reads_places)
            group = next((g for g in self.rules if reads <= set(g.reads)), None)
            if group is None:
                group = _Bindings(tuple(sorted(reads)))
                self.rules.append(group)
            group.transitions.append((position, ct))
        for group in self.rules:
            group.transitions.sort(key=itemgetter(0))
        #: (firing id, contents of the places it reads or writes, time) -> key delta
        self.fired: dict[tuple[tuple[int, int], int, float], int] = {}
        #: (place, content, elapsed) -> the content moved back by elapsed (relative time)
        self.shifted: dict[tuple[int, int, float], int] = {}
        self.expanded = 0  # calls of successors(): what the memos' hit rates are judged by
        self.relayout()

    def relayout(self) -> None:
        """Recompute the rules' masks after the store's fields moved; forget the memos."""
        store = self.store
        for group in self.groups:
            for rule in group:
                rule.mask = sum(store.masks[p] << store.shifts[p] for p in rule.rw)
                rule.memo.clear()
                rule.deltas = self.deltas_function(rule)
        for bindings in self.rules:
            bindings.mask = sum(store.masks[p] << store.shifts[p] for p in bindings.reads)
            bindings.memo.clear()
        self.fire_masks = {
            position: sum(store.masks[p] << store.shifts[p]
                          for p in set(ct.reads_places) | set(ct.writes_places))
            for position, ct in enumerate(self.ordered)}
        self.fired.clear()
        if self.symmetry is not None:
            self.symmetry.forget()
        # what the untimed loop reads per transition, without attribute look-ups
        self.plan = [[(rule.mask, rule.memo.get, rule) for rule in group]
                     for group in self.groups]

    def initial_key(self) -> int:
        marking = self.compiled.initial_marking()
        if self.relative:
            marking = [self._shift(place, 0.0) if timed else place
                       for place, timed in zip(marking, self.compiled.timed, strict=True)]
        if self.offsets:
            marking = self.offsets.canonical(marking)
        numbers = [self.store.encode(p, place) for p, place in enumerate(marking)]
        if self.absolute:
            numbers.append(self.store.intern(self.clock_field, 0.0))
        key = self.store.pack(numbers)
        while self.symmetry is not None:
            made = self.symmetry.canonical(self.store, key)
            if not self.store.overflow:
                return made
            key = self.store.widen()(key)
            self.relayout()
        return key

    @staticmethod
    def _shift(place: dict[Any, list[float]], elapsed: float) -> dict[Any, list[float]]:
        """Timestamps relative to a clock moved on by ``elapsed`` (the past counts as 0)."""
        return {value: [max(0.0, round(stamp - elapsed, TIME_DECIMALS)) for stamp in stamps]
                for value, stamps in place.items()}

    def _relative(self, p: int, place: dict[Any, Any], elapsed: float) -> dict[Any, Any]:
        """Place ``p``'s content relative to a clock moved on by ``elapsed`` (one of
        :attr:`moving`): its timestamps, the past counting as 0, and its ``CLOCK`` values
        (:mod:`~tcpn.petrinets.timevalues`), the past kept as it is."""
        if self.compiled.timed[p]:
            place = self._shift(place, elapsed)
        if p in self.clock_values.places:
            place = self.clock_values.move(p, place, -elapsed, self.compiled.timed[p])
        return place

    def clock_of(self, key: int) -> float:
        if not self.absolute:
            return 0.0
        store = self.store
        return float(store.contents[self.clock_field][store.field(key, self.clock_field)])  # type: ignore[arg-type]

    def successors(self, key: int, check_shift: bool = False) -> list[Successor]:
        """``(transition, binding, elapsed, successor key)`` of every firing possible next;
        with ``check_shift``, first check that they are translation invariant
        (:meth:`_check_shift`).

        Transitions that read the same places are enumerated together, and only when
        those places' contents form a combination not met before: otherwise the bindings
        come from the group's memo (most firings change two or three places, so most
        groups see the same inputs as in the state before). A firing's effect on the key
        is memoised too, by the contents of the places it reads or writes and the time.
        Only the places an enumeration or a firing reads are decoded.
        """
        store = self.store
        shifts, masks, decode = store.shifts, store.masks, store.decode
        if check_shift:
            whole = [decode(p, (key >> shifts[p]) & masks[p]) for p in range(self.n_places)]
            if self.clock_values:
                self._check_shift(whole)
            if self.offsets:
                self._check_offsets(whole)
            if self.symmetry is not None:
                self._check_symmetry(whole, self.clock_of(key))
        now = self.clock_of(key)
        self.expanded += 1
        marking: Marking = [None] * self.n_places  # type: ignore[list-item]  # decoded lazily
        enabled: list[_Found] = []
        for group in self.rules:
            found = group.memo.get(key & group.mask)
            if found is None:
                for p in group.reads:
                    if marking[p] is None:
                        marking[p] = decode(p, (key >> shifts[p]) & masks[p])
                found = group.bindings(marking, self.fire_masks)
                if group.memo_on:
                    _remember(group, key, found, self.expanded)
            enabled.extend(found)
        best_time, chosen = candidates(((e[2] if e[2] > now else now), e[1].priority, e)
                                       for e in enabled)
        if len(chosen) > 1:
            chosen.sort(key=itemgetter(0))  # stable: a transition's bindings stay in order
        elapsed = best_time - now
        if self.relative:
            elapsed = round(elapsed, TIME_DECIMALS)
        fired = self.fired
        out: list[Successor] = []
        for _, ct, _, binding, firing, rw_mask in chosen:
            memo_key = (firing, key & rw_mask, best_time)
            delta = fired.get(memo_key)
            if delta is None:
                delta = self._fire(key, ct, binding, best_time, elapsed)
                if not store.overflow:
                    if len(fired) >= _FIRED_MEMO_SIZE:
                        fired.clear()
                    fired[memo_key] = delta
            new = key + delta
            if self.relative:
                # (after an overflow ``new``'s fields run into each other: the expansion
                # is redone once the store has widened)
                if elapsed > 0 and not store.overflow:
                    new = self._shift_unwritten(new, ct.writes_places, elapsed)
            elif self.absolute:
                shift = shifts[self.clock_field]
                new += (store.intern(self.clock_field, best_time)
                        - ((key >> shift) & masks[self.clock_field])) << shift
            if self.offsets and not store.overflow:
                new = self._canonical(new)
            if self.symmetry is not None and not store.overflow:
                new = self.symmetry.canonical(store, new)
            out.append((ct, binding, elapsed, new))
        return out

    def _fire(self, key: int, ct: CompiledTransition, binding: tuple[Any, ...], at: float,
              elapsed: float) -> int:
        """How firing ``ct`` with ``binding`` at time ``at`` changes the places it writes."""
        store = self.store
        shifts, masks, decode = store.shifts, store.masks, store.decode
        after: Marking = [None] * self.n_places  # type: ignore[list-item]  # fire writes only
        for p in ct.writes_places:
            after[p] = decode(p, (key >> shifts[p]) & masks[p])
        ct.fire(after, binding, at, self.draw)
        delta = 0
        for p in ct.writes_places:
            place = after[p]
            if elapsed > 0 and p in self.moving:
                place = self._relative(p, place, elapsed)
            shift = shifts[p]
            delta += (store.encode(p, place) - ((key >> shift) & masks[p])) << shift
        return delta

    def _fire_next(self, marking: Marking, now: float) -> list[tuple[str, float, Marking]]:
        """The reference path: every binding the simulator could pick next at the whole
        ``marking`` (clock ``now``), fired: ``(transition, firing time, marking after)``."""
        best_time, chosen = candidates(((ready if ready > now else now), ct.priority,
                                        (ct, binding))
                                       for ct in self.ordered
                                       for ready, binding in ct.enumerate(marking))
        timed = self.compiled.timed
        fired = []
        for ct, binding in chosen:
            after = list(marking)
            for p in ct.writes_places:  # firing changes the places it writes: copies
                after[p] = {v: list(s) for v, s in marking[p].items()} if timed[p] \
                    else dict(marking[p])
            ct.fire(after, binding, best_time, self.draw)
            fired.append((ct.name, best_time, after))
        return fired

    def _check_shift(self, marking: Marking) -> None:
        """Raise :class:`InputError` unless the firings of ``marking`` with the clock, every
        timestamp and every ``CLOCK`` value moved by
        :data:`~tcpn.petrinets.timevalues.CHECK_OFFSET_S` are those of ``marking``, moved."""
        timed = self.compiled.timed

        def moved(p: int, place: dict[Any, Any], by: float) -> dict[Any, Any]:
            if timed[p]:
                place = {v: [stamp + by for stamp in stamps] for v, stamps in place.items()}
            if p in self.clock_values.places:
                place = self.clock_values.move(p, place, by, timed[p])
            return place

        def relative(fired: list[tuple[str, float, Marking]]) -> list[tuple[str, Marking]]:
            """Each firing's marking after, relative to its firing time (past stamps 0)."""
            out = []
            for name, at, after in fired:
                back = [moved(p, place, -at) for p, place in enumerate(after)]
                for p in self.timed_places:
                    back[p] = {v: [max(0.0, s) for s in stamps] for v, stamps in back[p].items()}
                out.append((name, back))
            return out

        offset = CHECK_OFFSET_S
        shifted = [moved(p, place, offset) for p, place in enumerate(marking)]
        problem = translation_mismatch(relative(self._fire_next(marking, 0.0)),
                                       relative(self._fire_next(shifted, offset)),
                                       self.compiled.place_names)
        if problem is not None:
            raise InputError(f"{problem}: its inscriptions or code action read absolute time "
                             "(now, or a CLOCK value) other than through differences, so a "
                             "relative state space would be wrong; use "
                             "explore(..., clock='absolute')")

    def _canonical(self, key: int) -> int:
        """``key`` with its offset groups made canonical (:mod:`.offsets`)."""
        store = self.store
        shifts, masks = store.shifts, store.masks
        marking: Marking = [{}] * self.n_places
        for p in self.offsets.places:
            marking[p] = store.decode(p, (key >> shifts[p]) & masks[p])
        made = self.offsets.canonical(marking)
        for p in self.offsets.places:
            if made[p] is not marking[p]:
                number = (key >> shifts[p]) & masks[p]
                key += (store.encode(p, made[p]) - number) << shifts[p]
        return key

    def _check_offsets(self, marking: Marking) -> None:
        """Raise :class:`InputError` unless the firings of ``marking`` with every number of
        its offset groups moved by :data:`~tcpn.petrinets.statespace.offsets.OFFSET_CHECK` are those
        of ``marking`` once both are made canonical."""
        def after(fired: list[tuple[str, float, Marking]]) -> list[tuple[str, Marking]]:
            return [(name, m) for name, _at, m in fired]

        problem = self.offsets.mismatch(
            after(self._fire_next(marking, 0.0)),
            after(self._fire_next(self.offsets.moved(marking, OFFSET_CHECK), 0.0)),
            self.compiled.place_names)
        if problem is not None:
            raise InputError(f"{problem}: its inscriptions or code action read these numbers "
                             "other than through differences, so the offset reduction would be "
                             "wrong; explore without offsets (a finite counter needs its "
                             "absolute values)")

    def _check_symmetry(self, marking: Marking, now: float) -> None:
        """Raise :class:`InputError` unless every renaming maps the firings of ``marking``
        onto those of its image (:meth:`.symmetry.SymmetryIndex.mismatch`)."""
        assert self.symmetry is not None
        problem = self.symmetry.mismatch(
            marking, lambda m: self._fire_next(m, now))
        if problem is not None:
            raise InputError(f"{problem}: the renaming is not an automorphism of the net, so "
                             "the symmetry reduction would be wrong; explore without it")

    def _shift_unwritten(self, key: int, written: tuple[int, ...], elapsed: float) -> int:
        """``key`` with the places a firing did not write moved ``elapsed`` back."""
        store = self.store
        shifts, masks, memo = store.shifts, store.masks, self.shifted
        for p in self.moving:
            if p in written:
                continue
            shift = shifts[p]
            number = (key >> shift) & masks[p]
            if not number:
                continue
            moved = memo.get((p, number, elapsed))
            if moved is None:
                moved = store.encode(p, self._relative(p, store.decode(p, number), elapsed))
                if len(memo) < _SHIFT_MEMO_SIZE:
                    memo[(p, number, elapsed)] = moved
            key += (moved - number) << shift
            if store.overflow:  # the fields above may be corrupt: the expansion is redone
                break
        return key

    def deltas_function(self, rule: _Rule) -> Callable[[int], tuple[int, ...]]:
        """Untimed path: ``deltas(key)``, how each binding of ``rule`` changes ``key``.

        A closure over the current field layout (rebuilt when it changes), since it runs
        once per state wherever the memo does not help.
        """
        store = self.store
        contents, index, multisets = store.contents, store.index, store.multisets
        widths, add = store.widths, store.add_untimed
        fields = tuple((p, store.shifts[p], store.masks[p]) for p in rule.rw)
        # (place, shift, position in ``fields``) of every place a firing changes
        writes = tuple((p, store.shifts[p], rule.rw.index(p)) for p in rule.ct.writes_places)
        template: Marking = [{}] * self.n_places  # only rw places are read or written
        enumerate_bindings, fire, draw = rule.ct.enumerate, rule.ct.fire, self.draw
        # (position in ``fields``, content, binding) -> the content after the firing: a
        # firing's effect on a place depends on nothing else, so a content seen before
        # with the same binding needs neither a firing nor a content key
        placed, missed = rule.placed, rule.missed
        placed_get = placed.get

        def deltas(key: int) -> tuple[int, ...]:
            marking = template.copy()
            numbers = []
            for p, shift, mask in fields:
                number = (key >> shift) & mask
                numbers.append(number)
                content = contents[p][number]
                # untimed_content inlined: one token of a value, empty, or a kept multiset
                # (not copied: enumeration only reads, firings get copies)
                marking[p] = {content: 1} if content is not None and type(content) is not \
                    tuple else {} if content is None else multisets[p][number]
            found = enumerate_bindings(marking)
            if not found:
                return ()
            out = []
            use_placed = rule.placed_on
            for _ready, binding in found:
                if use_placed:
                    delta = 0
                    for _, shift, at in writes:
                        new = placed_get((at, numbers[at], binding))
                        if new is None:
                            break
                        delta += (new - numbers[at]) << shift
                    else:  # every place it writes was seen with this content and binding
                        out.append(delta)
                        continue
                    missed[0] += 1
                after = marking.copy()
                for p, _, at in writes:
                    number = numbers[at]
                    content = contents[p][number]
                    after[p] = {content: 1} if content is not None and type(content) \
                        is not tuple else {} if content is None else \
                        multisets[p][number].copy()
                fire(after, binding, 0.0, draw)
                delta = 0
                for p, shift, at in writes:
                    place = after[p]
                    if len(place) == 1:  # untimed_lookup inlined
                        ((value, count),) = place.items()
                        lookup = value if count == 1 and type(value) is not tuple and \
                            type(value) is not frozenset else frozenset(place.items())
                    else:
                        lookup = frozenset(place.items()) if place else None
                    new = index[p].get(lookup)
                    if new is None:
                        new = add(p, lookup, place)
                        if new >> widths[p]:
                            raise _Outgrown
                    if use_placed:
                        placed[(at, numbers[at], binding)] = new
                    delta += (new - numbers[at]) << shift
                out.append(delta)
            if use_placed:
                missed[1] += len(found)
                if missed[1] >= missed[2]:  # two firings in three missed: stop looking
                    if 3 * missed[0] > 2 * missed[1]:
                        rule.placed_on = False
                        placed.clear()
                    missed[2] *= 4
                if len(placed) >= _MEMO_MAX_ENTRIES:
                    placed.clear()
            return tuple(out)

        return deltas


class _Outgrown(Exception):
    """A place saw more contents than its field can number: the keys must be re-packed."""


def _remember(rule: _Rule | _Bindings, key: int, found: Any, expanded: int) -> None:
    """Store a memo entry; drop the memo when most look-ups miss (every state is new),
    empty it when it reaches :data:`_MEMO_MAX_ENTRIES`."""
    memo = rule.memo
    memo[key & rule.mask] = found
    if len(memo) >= rule.next_check:
        if 2 * len(memo) > expanded + 1:
            rule.memo_on = False
            memo.clear()
        elif len(memo) >= _MEMO_MAX_ENTRIES:
            memo.clear()
        rule.next_check = min(4 * rule.next_check, _MEMO_MAX_ENTRIES)


def _forget(index: dict[int, int], order: list[int], edge_dst: array, edge_labels: array,
            n_states: int, n_edges: int) -> None:
    """Undo the current expansion: drop the states and edges it added."""
    for new in order[n_states:]:
        del index[new]
    del order[n_states:]
    del edge_dst[n_edges:]
    del edge_labels[n_edges:]


def explore(net: PetriNet | CompiledNet, max_states: int | None = DEFAULT_MAX_STATES,
            max_depth: int | None = None, time_budget_s: float | None = None,
            clock: str = "relative",
            progress: Callable[[int, int, float], None] | bool | None = None,
            delay_points: int | None = None,
            shift_checks: int | None = DEFAULT_SHIFT_CHECKS,
            engine: str | None = None,
            offsets: Sequence[OffsetGroup] = (),
            max_memory_bytes: int | None = None,
            symmetry: Symmetry | None = None) -> StateSpace:
    """Build the state space of ``net`` breadth-first, within the limits given.

    ``max_states`` caps the number of states (a state whose successors would pass it is
    left unexpanded; :data:`DEFAULT_MAX_STATES` unless given, ``None`` for no cap),
    ``max_depth`` the number of firings from the initial marking, ``time_budget_s`` the
    wall time, ``max_memory_bytes`` the process's resident memory
    (:class:`~tcpn.petrinets.statespace.memory.MemoryBudget`, as the P/T explorer and the model
    checker's; ``None``: half of what the process may use, its cgroup's limit, its
    ``ulimit -v`` or the memory available, :meth:`MemoryBudget.default`), read every
    :data:`MEMORY_EVERY_S` seconds
    by either search (the C search's tables are the process's memory). The result says
    whether it is ``complete`` and, if not, which limit stopped it (``stop_reason``:
    ``"max_states"``, ``"max_depth"``, ``"time_budget"``, ``"memory_budget"``; and
    ``limit``, e.g. ``"max_states=5000000"`` or ``"resident memory above 2 GiB"``). ``progress`` is
    called as ``progress(states, expanded, seconds)`` about every 0.5 s; ``True`` prints a
    progress line on stderr when it is a terminal (``None``, the default, prints
    nothing). ``clock`` picks relative or absolute
    time for timed nets (ignored for untimed ones). In relative time, a net whose token
    values hold absolute times (colour set ``CLOCK``) has them kept relative too, and the
    successors of its first ``shift_checks`` states (``None``: all) are checked to be
    translation invariant (:mod:`~tcpn.petrinets.timevalues`). ``offsets`` (a list of
    :class:`~tcpn.petrinets.statespace.offsets.OffsetGroup`) keeps unbounded counters such as
    sequence
    numbers relative to their group's smallest one, checked the same way on the first
    ``shift_checks`` states (:mod:`~tcpn.petrinets.statespace.offsets`). ``symmetry`` (a
    :class:`~tcpn.petrinets.statespace.symmetry.Symmetry`) keeps one state per orbit of its
    renamings, checked to be automorphisms on the first ``shift_checks`` states
    (:mod:`~tcpn.petrinets.statespace.symmetry`). Nets whose firings draw at
    random
    (distributions, ``uniform(...)`` and the like, code actions using ``rng``) are refused
    with an :class:`InputError` naming the element, except random *delays* when
    ``delay_points`` is given: each bounded one (``Uniform``, ``Interval``, ``Discrete``,
    ``Empirical``) becomes a choice among its points, ``delay_points`` of an interval with
    both ends (:mod:`tcpn.petrinets.statespace.intervals`; the space's transitions are then the
    copies
    ``t'k``, ``space.delay_choices`` says what each fixes). ``engine`` runs the transitions'
    generated code in Python (``"python"``) or built into a C extension (``"native"``,
    ``"auto"``; ``None`` reads ``$TCPN_ENGINE``), as for the
    :class:`~tcpn.petrinets.engine.simulator.Simulator`: the same space either way. With
    ``"native"`` or ``"auto"``, an untimed net of the C engine's subset is explored by the
    search in C (:mod:`tcpn.petrinets.statespace.cexplore.explorer`), the same states in the same
    order;
    ``space.explorer_reason`` says why another net took the Python path (``None``: C).

    >>> from tcpn.petrinets.examples import counter
    >>> space = explore(counter(10), max_states=5)
    >>> len(space), space.complete, space.stop_reason
    (5, False, 'max_states')
    """
    for name, limit in (("max_states", max_states), ("max_depth", max_depth)):
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < (1 if name == "max_states" else 0)):
            raise InputError(f"{name} must be an int >= {1 if name == 'max_states' else 0} "
                             f"or None, got {limit!r}")
    if time_budget_s is not None and not (time_budget_s >= 0 and math.isfinite(time_budget_s)):
        raise InputError(f"time_budget_s must be a finite number >= 0, got {time_budget_s!r}")
    if max_memory_bytes is not None and (isinstance(max_memory_bytes, bool) or not isinstance(
            max_memory_bytes, int) or max_memory_bytes < 1):
        raise InputError(f"max_memory_bytes must be an int >= 1 or None, got "
                         f"{max_memory_bytes!r}")
    memory = _MemoryWatch(MemoryBudget.of(max_memory_bytes))
    if clock not in CLOCK_MODES:
        raise InputError(f"clock must be one of {CLOCK_MODES}, got {clock!r}")
    delay_choices: dict[str, DelayChoice] = {}
    if delay_points is not None:
        source = net.net if isinstance(net, CompiledNet) else net
        discretised, delay_choices = discretise_delays(source, delay_points)
        if delay_choices:
            net = discretised
    if shift_checks is not None and (isinstance(shift_checks, bool) or not isinstance(
            shift_checks, int) or shift_checks < 0):
        raise InputError(f"shift_checks must be an int >= 0 or None, got {shift_checks!r}")
    compiled = net if isinstance(net, CompiledNet) else compile_net(net)
    gen = SuccessorGenerator(compiled, clock, offsets, symmetry)
    check_explorable(compiled.net, clock, bool(gen.clock_values))
    searcher: CExplorer | str | None = None
    if resolve_engine(engine) != "python":
        searcher = _c_explorer(gen)
        if isinstance(searcher, str):
            _log.info("net %s: explored in Python, not in C: %s", compiled.net.name, searcher)
    if not isinstance(searcher, CExplorer):
        compiled = select_engine(compiled, engine).compiled
        gen = SuccessorGenerator(compiled, clock, offsets, symmetry)
    started = wallclock.perf_counter()
    checks_left = (math.inf if shift_checks is None else shift_checks) \
        if gen.clock_values or gen.offsets or gen.symmetry else 0
    store = gen.store
    deadline = None if time_budget_s is None else started + time_budget_s
    state_cap = math.inf if max_states is None else max_states
    depth_cap = math.inf if max_depth is None else max_depth

    report = _progress_line if progress is True else progress or None
    if report is _progress_line and not sys.stderr.isatty():
        report = None
    next_report = started + PROGRESS_EVERY_S

    reset_cells(compiled.net.declarations)
    if isinstance(searcher, CExplorer):
        try:
            return _cells_untouched(_explore_in_c(
                searcher, gen, state_cap, depth_cap, deadline, memory, report, started,
                (max_states, max_depth, time_budget_s), delay_choices), compiled.net)
        except CExplorerError as exc:  # the Python path runs (and reports an error itself)
            _log.warning("net %s: the C explorer stopped, explored in Python: %s",
                         compiled.net.name, exc)
            searcher = str(exc)
            gen = SuccessorGenerator(compiled, clock, offsets, symmetry)
            store = gen.store
            started = wallclock.perf_counter()
    init = gen.initial_key()
    index = {init: 0}  # packed marking -> state number
    order = [init]  # packed markings in state (BFS) order
    edge_dst = array("I")  # edge targets, grouped by source
    edge_start = array("I", [0])  # state s's edges are edge_dst[edge_start[s]:edge_start[s + 1]]
    edge_labels = array("i")  # the transition of each edge
    plan = gen.plan
    # offsets, symmetry: the generic path makes canonical
    untimed = not gen.timed_net and not gen.offsets and gen.symmetry is None
    i, depth, level_end = 0, 0, 1
    reason = "complete"
    while i < len(order):
        if i == level_end:
            depth += 1
            level_end = len(order)
        if depth >= depth_cap:
            reason = "max_depth"
            break
        if not i & 255:
            now_s = wallclock.perf_counter()
            if deadline is not None and now_s >= deadline:
                reason = "time_budget"
                break
            if memory.exceeded(now_s):
                reason = "memory_budget"
                break
            if report is not None and now_s >= next_report:
                report(len(order), i, now_s - started)
                next_report = now_s + PROGRESS_EVERY_S
        key = order[i]
        n_before, first_edge = len(order), len(edge_dst)
        try:
            if untimed:
                for group in plan:
                    for mask, memo_get, rule in group:
                        found = memo_get(key & mask)
                        if found is None:
                            found = rule.deltas(key)
                            if rule.memo_on:
                                _remember(rule, key, found, i)
                        for delta in found:
                            new = key + delta
                            target = index.get(new)
                            if target is None:
                                target = index[new] = len(order)
                                order.append(new)
                            edge_dst.append(target)
                            edge_labels.append(rule.ct.index)
                    if len(edge_dst) != first_edge:
                        break
            else:
                for ct, *_, new in gen.successors(key, check_shift=i < checks_left):
                    target = index.get(new)
                    if target is None:
                        target = index[new] = len(order)
                        order.append(new)
                    edge_dst.append(target)
                    edge_labels.append(ct.index)
                if store.overflow:
                    raise _Outgrown
        except _Outgrown:  # a place outgrew its field: re-pack everything, redo this state
            _forget(index, order, edge_dst, edge_labels, n_before, first_edge)
            repack = store.widen()
            order = [repack(k) for k in order]
            index = {k: n for n, k in enumerate(order)}
            gen.relayout()
            plan = gen.plan
            continue
        if len(order) > state_cap:
            _forget(index, order, edge_dst, edge_labels, n_before, first_edge)
            reason = "max_states"
            break
        edge_start.append(len(edge_dst))
        i += 1
    explored_s = wallclock.perf_counter() - started
    if report is _progress_line and explored_s > PROGRESS_EVERY_S:
        sys.stderr.write("\r\033[K")
    stopped_by = {"max_states": f"max_states={max_states}",
                  "max_depth": f"max_depth={max_depth}",
                  "time_budget": f"time_budget_s={time_budget_s}",
                  "memory_budget": memory.limit()}.get(reason, "")
    peak = _exploration_bytes(index, order, edge_dst, edge_start, gen)
    del index
    space = StateSpace(gen, order, edge_dst, edge_start, edge_labels=edge_labels, depth=depth,
                       n_expanded=i, stop_reason=reason, explore_s=explored_s, peak_bytes=peak,
                       clock=clock if gen.timed_net else "untimed", limit=stopped_by)
    space.delay_choices = delay_choices
    space.explorer_reason = searcher if isinstance(searcher, str) else "engine='python'"
    return _cells_untouched(space, compiled.net)


def _cells_untouched(space: StateSpace, net: PetriNet) -> StateSpace:
    """``space``, unless exploring it wrote the net's reference cells: their contents are
    not part of a state (:mod:`tcpn.petrinets.cells`), so such a space would depend on the
    order the states were expanded in."""
    written = written_cells(net.declarations)
    if written:
        reset_cells(net.declarations)
        raise InputError(
            f"net {net.name}: its firings write the reference cell(s) {', '.join(written)}, "
            "whose contents are not part of a state (as in CPN Tools): the state space "
            "would depend on the order states are expanded in; simulate the net instead")
    return space


def _c_explorer(gen: SuccessorGenerator) -> CExplorer | str:
    """The C explorer for ``gen``'s net (:mod:`tcpn.petrinets.statespace.cexplore.explorer`), or
    why the
    Python path explores it."""
    if gen.timed_net:
        return "the net is timed: the C explorer explores untimed nets"
    if gen.offsets or gen.symmetry is not None:
        return "offset groups or symmetry: the Python path keeps states canonical"
    reason = why_unavailable()
    if reason is not None:
        return reason
    from tcpn.petrinets.engine.native import build_module
    from tcpn.petrinets.statespace.cexplore.explorer import build_cexplorer

    return build_cexplorer(gen.compiled, build_module)


class _MemoryWatch:
    """A :class:`MemoryBudget` read every :data:`MEMORY_EVERY_S` seconds, and sooner when
    what the result will take grows by :data:`MEMORY_EVERY_BYTES`."""

    def __init__(self, budget: MemoryBudget):
        self.budget = budget
        self.next_s = -math.inf
        self.read_more_bytes = 0

    def exceeded(self, now_s: float, more_bytes: int = 0) -> bool:
        """Whether the budget is passed, with ``more_bytes`` about to be allocated (read
        now unless read in the last interval and ``more_bytes`` grew by less than
        :data:`MEMORY_EVERY_BYTES` since)."""
        if now_s < self.next_s and more_bytes - self.read_more_bytes < MEMORY_EVERY_BYTES:
            return False
        self.next_s, self.read_more_bytes = now_s + MEMORY_EVERY_S, more_bytes
        return self.budget.exceeded(more_bytes)

    def limit(self) -> str:
        """The budget as ``StateSpace.limit`` names it (:meth:`MemoryBudget.limit`)."""
        return self.budget.limit()


def _explore_in_c(searcher: CExplorer, gen: SuccessorGenerator, state_cap: float, depth_cap: float,
                  deadline: float | None, memory: _MemoryWatch,
                  report: Callable[[int, int, float], None] | None,
                  started: float, limits: tuple[int | None, int | None, float | None],
                  delay_choices: dict[str, DelayChoice]) -> StateSpace:
    """:func:`explore`'s breadth-first search run by the C explorer: the same states in
    the same order, the same edges, the same store; the same limits, checked at the same
    states (every 256 expanded, from state 0). The memory budget counts the C tables (they
    are the process's resident memory) and what the result will take once the search
    stops (the store filled afterwards,
    :func:`~tcpn.petrinets.statespace.cexplore.explorer.pending_bytes`), which the Python search
    holds as
    it goes."""
    next_report = [started + PROGRESS_EVERY_S]

    def pause(states: int, expanded: int, pending_bytes: int) -> str | None:
        now_s = wallclock.perf_counter()
        if deadline is not None and now_s >= deadline:
            return "time_budget"
        if memory.exceeded(now_s, pending_bytes):  # its tables resident, the store to come
            return "memory_budget"
        if report is not None and now_s >= next_report[0]:
            report(states, expanded, now_s - started)
            next_report[0] = now_s + PROGRESS_EVERY_S
        return None

    found = searcher.run(gen.store, None if state_cap == math.inf else int(state_cap),
                         None if depth_cap == math.inf else int(depth_cap), pause)
    gen.relayout()
    explored_s = wallclock.perf_counter() - started
    if report is _progress_line and explored_s > PROGRESS_EVERY_S:
        sys.stderr.write("\r\033[K")
    max_states, max_depth, time_budget_s = limits
    stopped_by = {"max_states": f"max_states={max_states}",
                  "max_depth": f"max_depth={max_depth}",
                  "time_budget": f"time_budget_s={time_budget_s}",
                  "memory_budget": memory.limit()}.get(found.stop_reason, "")
    space = StateSpace(gen, found.keys, found.edge_dst, found.edge_start,
                       edge_labels=found.edge_labels,
                       n_expanded=found.n_expanded, stop_reason=found.stop_reason,
                       depth=found.depth, explore_s=explored_s, peak_bytes=found.peak_bytes,
                       clock="untimed", limit=stopped_by)
    space.delay_choices = delay_choices
    space.explorer_reason = None
    return space


def _progress_line(states: int, expanded: int, seconds: float) -> None:
    """One overwritten stderr line: states found, expanded, rate."""
    sys.stderr.write(f"\rexplore: {states:,} states, {expanded:,} expanded, "
                     f"{states / max(seconds, 1e-9):,.0f} states/s, {seconds:.0f} s\033[K")
    sys.stderr.flush()


def _exploration_bytes(index: dict[int, int], order: list[int], edge_dst: array,
                       edge_start: array, gen: SuccessorGenerator) -> int:
    """Bytes the exploration's stores held at the end (its peak, before compaction).

    The interned contents are left out (the result keeps them and counts them).
    """
    total = sys.getsizeof(index) + sys.getsizeof(order) + 2 * sys.getsizeof(edge_dst)  # + labels
    total += sampled_size(order, sys.getsizeof) + sys.getsizeof(edge_start)
    total += max(0, len(order) - 257) * sys.getsizeof(len(order))  # the state numbers
    rules: list[_Rule | _Bindings] = [r for group in gen.groups for r in group]
    for rule in [*rules, *gen.rules]:
        memo = list(rule.memo.items())
        total += sys.getsizeof(rule.memo) + sampled_size(
            memo, lambda item: sys.getsizeof(item[0]) + sys.getsizeof(item[1])
            + sum(sys.getsizeof(d) for d in item[1]))
    total += sys.getsizeof(gen.fired) + sampled_size(
        list(gen.fired), lambda item: sys.getsizeof(item) + sys.getsizeof(item[1]))
    total += sys.getsizeof(gen.shifted) + sampled_size(
        list(gen.shifted), lambda item: sys.getsizeof(item) + sys.getsizeof(item[1]))
    return total


class StateSpace:
    """The reachable states of a net, their edges, and the queries a model checker needs.

    States are numbered ``0 .. len(space) - 1`` in breadth-first order (0 is the initial
    marking). ``complete`` says whether every state was expanded; if not,
    ``stop_reason`` names the limit (``"max_states"``, ``"max_depth"``,
    ``"time_budget"``, ``"memory_budget"``) and the states at the frontier
    (``is_expanded(s)`` false) have unknown successors. ``bytes_per_state`` is the memory
    the result holds per state (packed markings, edge arrays, interned contents);
    ``peak_bytes_per_state`` is what the exploration's stores held per state just before
    they were compacted.
    """

    def __init__(self, gen: SuccessorGenerator, order: list[int] | np.ndarray,
                 edge_dst: array | bytes, edge_start: array | bytes, *,
                 edge_labels: array | bytes | None = None, n_expanded: int,
                 stop_reason: str, depth: int,
                 explore_s: float, peak_bytes: int, clock: str, limit: str = ""):
        store = gen.store
        #: the successor generator that explored the space (its store holds the markings)
        self.generator = gen
        self.compiled = gen.compiled
        self.net = gen.compiled.net
        self.clock_mode = clock
        self.n_expanded = n_expanded
        self.stop_reason = stop_reason
        self.complete = stop_reason == "complete"
        #: the limit that stopped the exploration, as given (``"max_states=5000000"``)
        self.limit = limit
        #: with ``explore(..., delay_points=m)``: each copy ``t'k`` of a transition with
        #: random delays and what it fixes
        #: (:class:`~tcpn.petrinets.statespace.intervals.DelayChoice`)
        self.delay_choices: dict[str, DelayChoice] = {}
        self.depth = depth
        #: ``None`` when the C explorer built the space, else why the Python path did
        self.explorer_reason: str | None = "engine='python'"
        self.keys = order if isinstance(order, np.ndarray) else store.key_array(order)
        n = len(order)
        self.edge_dst = np.frombuffer(edge_dst, dtype=np.uint32)
        #: the transition (its compiled index) of each edge, when the explorer kept them
        self.edge_labels = None if edge_labels is None else np.frombuffer(edge_labels, "i4")
        starts = np.frombuffer(edge_start, dtype=np.uint32)
        self.edge_start = np.concatenate([starts, np.full(n - n_expanded, starts[-1],
                                                          dtype=np.uint32)])
        self.wall_s = explore_s
        self._peak_bytes = peak_bytes
        self._predecessors: csr_array | None = None
        self._bfs_parent: np.ndarray | None = None

    # -- sizes and summary -----------------------------------------------------------------
    @cached_property
    def _contents_bytes(self) -> int:
        """Bytes of the interned contents (measured when first asked: it walks them)."""
        return self.generator.store.nbytes()

    @property
    def bytes_per_state(self) -> float:
        """Memory the result holds per state: packed markings, edge arrays, contents."""
        labels = 0 if self.edge_labels is None else self.edge_labels.nbytes
        return (self.keys.nbytes + self.edge_dst.nbytes + self.edge_start.nbytes + labels
                + self._contents_bytes) / len(self.keys)

    @property
    def peak_bytes_per_state(self) -> float:
        """What the exploration's stores held per state just before they were compacted."""
        return (self._peak_bytes + self._contents_bytes) / len(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def n_states(self) -> int:
        """The number of states found."""
        return len(self.keys)

    @property
    def n_edges(self) -> int:
        """The number of edges (firings) found."""
        return len(self.edge_dst)

    @property
    def states_per_s(self) -> float:
        """States found per second of exploration."""
        return self.n_states / self.wall_s if self.wall_s > 0 else math.inf

    def summary(self) -> str:
        """One line: size, completeness, speed and memory.

        >>> from tcpn.petrinets.examples import counter
        >>> explore(counter(3)).summary().split(",")[0]
        'counter: 4 states'
        """
        status = "complete" if self.complete else f"stopped at the limit {self.limit}"
        reduced = self.generator.symmetry
        what = "states" if reduced is None else \
            f"orbits ({reduced.symmetry.description or 'symmetry'})"
        return (
            f"{self.net.name}: {self.n_states} {what}, {self.n_edges} edges, depth "
            f"{self.depth}, {status}, {len(self.dead_markings())} dead, "
            f"{self.states_per_s:,.0f} states/s, {self.bytes_per_state:.0f} bytes/state"
        )

    def __repr__(self) -> str:
        return f"<StateSpace {self.summary()}>"

    # -- states ----------------------------------------------------------------------------
    def _check(self, state: int) -> int:
        if isinstance(state, bool) or not isinstance(state, int | np.integer) or not (
                0 <= state < len(self.keys)):
            raise InputError(f"no state {state!r}: states are 0..{len(self.keys) - 1}")
        return int(state)

    def key(self, state: int) -> int:
        """The packed marking of ``state`` (equal keys, equal states)."""
        return self.generator.store.key_at(self.keys, self._check(state))

    def marking(self, state: int) -> dict[str, list[Token]]:
        """The marking of ``state`` as ``place -> tokens``.

        Timestamps are relative to the state's clock in relative time (0 means ready),
        absolute in absolute time, 0 in untimed places.
        """
        compiled = self.generator.compiled
        places = self.generator.store.marking(self.key(state))
        out: dict[str, list[Token]] = {}
        for name, timed, place in zip(compiled.place_names, compiled.timed, places,
                                      strict=True):
            if timed:
                out[name] = [Token(v, float(t)) for v, stamps in place.items() for t in stamps]
            else:
                out[name] = [Token(v, 0.0) for v, n in place.items() for _ in range(n)]
        return out

    def clock(self, state: int) -> float:
        """The global clock of ``state`` (absolute time; 0.0 in relative and untimed spaces)."""
        return self.generator.clock_of(self.key(state))

    def is_expanded(self, state: int) -> bool:
        """Whether the successors of ``state`` were computed (false at a limit's frontier)."""
        return self._check(state) < self.n_expanded

    def dead_markings(self) -> list[int]:
        """Expanded states without successors, in state order."""
        return self._dead().tolist()

    def _dead(self) -> np.ndarray:
        out_degree = np.diff(self.edge_start.astype(np.int64))
        return np.flatnonzero(out_degree[: self.n_expanded] == 0)

    # -- edges -----------------------------------------------------------------------------
    def successors(self, state: int) -> list[int]:
        """The states one firing away from ``state`` (one entry per edge)."""
        s = self._check(state)
        return self.edge_dst[self.edge_start[s]:self.edge_start[s + 1]].tolist()

    def predecessors(self, state: int) -> list[int]:
        """The states with an edge to ``state`` (one entry per edge)."""
        s = self._check(state)
        if self._predecessors is None:
            self._predecessors = self.matrix().T.tocsr()
        rows = self._predecessors
        return rows.indices[rows.indptr[s]:rows.indptr[s + 1]].tolist()

    def edges(self, state: int) -> list[Edge]:
        """The labelled edges leaving ``state``: transition, binding, elapsed time, target.

        Labels are not stored: the state's successors are recomputed (the same compiled
        code in the same order), so this costs one expansion.
        """
        s = self._check(state)
        if s >= self.n_expanded:
            return []
        targets = self.successors(s)
        found = self.generator.successors(self.key(s))
        if len(found) != len(targets):
            raise RuntimeError(f"state {s}: recomputed {len(found)} successors, stored "
                               f"{len(targets)} (a code action is not deterministic?)")
        return [Edge(s, target, ct.name, dict(zip(ct.variables, binding, strict=True)), elapsed)
                for target, (ct, binding, elapsed, _) in zip(targets, found, strict=True)]

    def adjacency(self) -> tuple[Any, Any]:
        """``(indptr, targets)``: state ``s``'s edges: ``targets[indptr[s]:indptr[s + 1]]``."""
        return self.edge_start, self.edge_dst

    def matrix(self) -> csr_array:
        """The adjacency matrix (``scipy.sparse.csr_array``; entry = number of edges)."""
        from scipy.sparse import csr_array

        n = self.n_states
        data = np.ones(len(self.edge_dst), dtype=np.int32)
        return csr_array((data, self.edge_dst, self.edge_start), shape=(n, n))

    def path_to(self, state: int) -> list[tuple[str, dict[str, Any]]]:
        """A shortest firing sequence from the initial marking to ``state``.

        Each step is ``(transition, binding)``; :meth:`Simulator.fire
        <tcpn.petrinets.engine.simulator.Simulator.fire>` replays it from the initial marking.
        """
        s = self._check(state)
        from tcpn.petrinets.statespace.graph import bfs_tree, tree_path

        if self._bfs_parent is None:
            _, self._bfs_parent = bfs_tree(self.matrix(), 0)
        steps = []
        for source, target in pairwise(tree_path(self._bfs_parent, 0, s)):
            edge = next(e for e in self.edges(source) if e.target == target)
            steps.append((edge.transition, edge.binding))
        return steps

    # -- graph views -----------------------------------------------------------------------
    def to_networkx(self, labels: bool = False) -> nx.DiGraph:
        """The state space as a NetworkX ``DiGraph``; see :func:`statespace_graph.to_networkx`."""
        from tcpn.petrinets.statespace.graph import to_networkx

        return to_networkx(self, labels=labels)

    def scc_graph(self) -> nx.DiGraph:
        """The graph of strongly connected components; see :mod:`statespace_graph`."""
        from tcpn.petrinets.statespace.graph import scc_graph

        return scc_graph(self)

    def home_markings(self) -> list[int]:
        """States reachable from every state; see :func:`statespace_graph.home_markings`."""
        from tcpn.petrinets.statespace.graph import home_markings

        return home_markings(self)

