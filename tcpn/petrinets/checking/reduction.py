"""Stubborn-set reduction: a smaller state space with the same dead markings and the same
reachable truth values of the atoms a formula reads.

:func:`explore_stubborn` explores breadth-first like :func:`~tcpn.petrinets.explore` but
fires, in each state, only the enabled transitions of a *stubborn set* (Valmari), computed
from the net's structure at the level of transitions (all bindings of a transition count
as one):

* **D1/D2** (deadlocks): start from one enabled transition; an enabled transition in the
  set brings in every transition in conflict with it (one takes tokens from a place the
  other takes from or reads, or puts tokens where the other has an inhibitor arc); a
  disabled one brings in every transition that can enable it (puts tokens where it needs
  some, or takes them from where its inhibitor arcs look). Firing the enabled members
  only keeps every dead marking.
* **V** (visibility, for reachability of atoms): the transitions that write a place the
  atoms read (or a place a ``fireable`` atom's transition reads) are *visible*; a set
  with an enabled visible transition takes them all.
* **C** (no ignoring; only when atoms are watched): a state with a reduced successor at
  or before it in breadth-first order is expanded fully, so every cycle of the reduced
  space has a fully expanded state.

D1, D2, V and C preserve the reachability of markings satisfying propositional formulas
over those atoms (stuttering-equivalent visible behaviour), D1 and D2 alone the dead
markings. Untimed nets with one priority only; the reduced space serves
:func:`~tcpn.petrinets.checking.check.check` for ``EF``/``AG`` formulas and deadlock questions.

>>> from tcpn.petrinets import explore
>>> from tcpn.petrinets.examples import left_first_philosophers
>>> full = explore(left_first_philosophers(6))
>>> reduced = explore_stubborn(left_first_philosophers(6), [Deadlock()])
>>> full.n_states, reduced.n_states, len(full.dead_markings()), len(reduced.dead_markings())
(198, 74, 1, 1)
"""

from __future__ import annotations

import time as wallclock
from array import array
from collections.abc import Sequence

from tcpn.errors import InputError
from tcpn.petrinets.checking.formulas import Deadlock, Fireable, Formula, places_of, walk
from tcpn.petrinets.engine.compiler import CompiledNet, compile_net
from tcpn.petrinets.net import ArcKind, PetriNet
from tcpn.petrinets.statespace.explorable import check_explorable
from tcpn.petrinets.statespace.space import (
    DEFAULT_MAX_STATES,
    Edge,
    StateSpace,
    SuccessorGenerator,
)

__all__ = ["ReducedStateSpace", "explore_stubborn", "stubborn_set"]


class _Structure:
    """Per transition: what it depends on, what can enable it, whether it is visible."""

    def __init__(self, compiled: CompiledNet, formulas: Sequence[Formula]):
        transitions = compiled.transitions
        n = len(transitions)
        net, place = compiled.net, compiled.place_index
        kinds: list[dict[ArcKind, set[int]]] = []
        for t in transitions:
            arcs: dict[ArcKind, set[int]] = {kind: set() for kind in ArcKind}
            for arc in net.arcs_of(t.name):
                arcs[arc.kind].add(place[arc.place])
            kinds.append(arcs)
        takes = [k[ArcKind.INPUT] | k[ArcKind.RESET] for k in kinds]
        puts = [k[ArcKind.OUTPUT] for k in kinds]
        needs = [takes[t] | kinds[t][ArcKind.READ] for t in range(n)]
        inhibited = [k[ArcKind.INHIBITOR] for k in kinds]
        # u may disable t (or t disable u): one takes tokens the other needs, or puts
        # tokens where the other's inhibitor arc forbids them
        self.dependent = [sorted(u for u in range(n) if u != t and (
            takes[u] & needs[t] or takes[t] & needs[u]
            or puts[u] & inhibited[t] or puts[t] & inhibited[u])) for t in range(n)]
        # only these can enable a disabled t: they put tokens where t needs some, or take
        # tokens from where t's inhibitor arcs look
        self.enablers = [sorted(u for u in range(n) if u != t and (
            puts[u] & needs[t] or takes[u] & inhibited[t])) for t in range(n)]
        # a disabled t with an empty place it takes a fixed number of tokens from can only
        # be enabled by a transition putting tokens there (that place is its scapegoat)
        self.required = [tuple(t.required_places) for t in transitions]
        self.producers = {p: sorted(u for u in range(n) if p in puts[u])
                          for t in transitions for p in t.required_places}
        reads = [needs[t] | inhibited[t] for t in range(n)]
        writes = [takes[t] | puts[t] for t in range(n)]
        watched: set[int] = set()
        everything = False
        # dead markings alone need no proviso; atoms' reachability needs C
        self.proviso = any(not isinstance(f, Deadlock) for f in formulas)
        names = {t.name: t.index for t in transitions}
        for formula in formulas:
            watched |= {compiled.place_index[p] for p in places_of(formula)}
            for node in walk(formula):
                if isinstance(node, Fireable):
                    watched |= {p for name in node.transitions for p in reads[names[name]]}
                elif isinstance(node, Deadlock) and node != formula:
                    everything = True  # deadlock inside a larger formula: no reduction
        self.visible = sorted(range(n)) if everything else sorted(
            t for t in range(n) if writes[t] & watched)


def stubborn_set(structure: _Structure, enabled: set[int],
                 empty: Sequence[bool]) -> set[int]:
    """A stubborn set (D1, D2, V) of transitions for a state whose enabled transitions are
    ``enabled`` (non-empty) and whose places are empty where ``empty`` says so: the
    smallest closure among the first few enabled transitions taken as the key."""
    best: set[int] | None = None
    for key in sorted(enabled, key=lambda t: len(structure.dependent[t]))[:4]:
        chosen = {key}
        work = [key]
        visible_added = False
        while work:
            t = work.pop()
            if t in enabled:
                more = structure.dependent[t]
                if not visible_added and t in structure.visible:
                    more = [*more, *structure.visible]
                    visible_added = True
            else:
                scapegoats = [structure.producers[p] for p in structure.required[t]
                              if empty[p]]
                more = min(scapegoats, key=len) if scapegoats else structure.enablers[t]
            for u in more:
                if u not in chosen:
                    chosen.add(u)
                    work.append(u)
        if best is None or len(chosen & enabled) < len(best & enabled):
            best = chosen
    assert best is not None
    return best


def explore_stubborn(net: PetriNet | CompiledNet, formulas: Sequence[Formula] = (), *,
                     max_states: int | None = DEFAULT_MAX_STATES,
                     time_budget_s: float | None = None) -> ReducedStateSpace:
    """The stubborn-set reduced state space of an untimed net for the given formulas'
    atoms (none, or only ``Deadlock()``: dead markings alone are preserved)."""
    compiled = net if isinstance(net, CompiledNet) else compile_net(net)
    if any(compiled.timed):
        raise InputError(f"net {compiled.net.name} is timed: stubborn sets are implemented for "
                         "untimed nets only")
    if len({t.priority for t in compiled.transitions}) > 1:
        raise InputError(f"net {compiled.net.name} uses priorities: stubborn sets are "
                         "implemented for nets with one priority only")
    check_explorable(compiled.net, "relative")
    structure = _Structure(compiled, formulas)
    started = wallclock.perf_counter()
    deadline = None if time_budget_s is None else started + time_budget_s
    cap = float("inf") if max_states is None else max_states
    gen = SuccessorGenerator(compiled, "relative")
    init = gen.initial_key()
    index, order = {init: 0}, [init]
    edge_dst, edge_start = array("I"), array("I", [0])
    reason, i = "complete", 0
    while i < len(order):
        if deadline is not None and not i & 255 and wallclock.perf_counter() >= deadline:
            reason = "time_budget"
            break
        found = gen.successors(order[i])
        if gen.store.overflow:  # a place outgrew its field: re-pack every key, redo
            repack = gen.store.widen()
            order = [repack(k) for k in order]
            index = {k: n for n, k in enumerate(order)}
            gen.relayout()
            continue
        enabled = {ct.index for ct, *_ in found}
        if enabled:
            empty = [number == 0 for number in gen.store.unpack(order[i])]
            chosen = stubborn_set(structure, enabled, empty)
            reduced = [f for f in found if f[0].index in chosen]
            targets = [index.get(f[3]) for f in reduced]
            if structure.proviso and len(reduced) < len(found) and any(
                    t is not None and t <= i for t in targets):
                reduced = found  # proviso C: a cycle may close here, expand fully
            n_before = len(order)
            for *_, new in reduced:
                target = index.get(new)
                if target is None:
                    target = index[new] = len(order)
                    order.append(new)
                edge_dst.append(target)
            if len(order) > cap:
                for new in order[n_before:]:
                    del index[new]
                del order[n_before:]
                del edge_dst[edge_start[-1]:]
                reason = "max_states"
                break
        edge_start.append(len(edge_dst))
        i += 1
    limit = {"max_states": f"max_states={max_states}",
             "time_budget": f"time_budget_s={time_budget_s}"}.get(reason, "")
    return ReducedStateSpace(gen, order, edge_dst, edge_start, n_expanded=i,
                             stop_reason=reason, depth=0,
                             explore_s=wallclock.perf_counter() - started, peak_bytes=0,
                             clock="untimed", limit=limit)


class ReducedStateSpace(StateSpace):
    """A state space whose states fire only their stubborn transitions."""

    def edges(self, state: int) -> list[Edge]:
        """The stored (reduced) edges of ``state``, labelled by recomputing its firings."""
        s = self._check(state)
        if s >= self.n_expanded:
            return []
        targets = self.successors(s)
        keys = [self.key(t) for t in targets]
        found = iter(self.generator.successors(self.key(s)))
        out = []
        for target, key in zip(targets, keys, strict=True):
            ct, binding, elapsed, _ = next(f for f in found if f[3] == key)
            out.append(Edge(s, target, ct.name, dict(zip(ct.variables, binding, strict=True)),
                            elapsed))
        return out
