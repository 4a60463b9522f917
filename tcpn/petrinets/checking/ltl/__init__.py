"""LTL model checking: Büchi automaton of the negated formula, product with the state graph,
emptiness by strongly connected components, lasso counterexamples.

``A φ`` holds when no path satisfies ``¬φ``. :func:`check_ltl` rewrites ``¬φ`` (in
negation normal form, its maximal temporal-free sub-formulas read as propositions, those
invariant over the reachable markings folded to constants) with the rules of
:mod:`tcpn.petrinets.checking.ltl.rewrite`, translates it to a generalised Büchi automaton with the
tableau construction of Gerth, Peled, Vardi and Wolper ("Simple on-the-fly automatic
verification of linear temporal logic", PSTV 1995), and reduces the automaton (useless
states removed, edges to directly simulated siblings dropped, bisimilar states merged).
The product with the state graph is first explored depth-first on the fly for
:data:`ON_THE_FLY_STATES` product states with Tarjan's algorithm (the graph kernel's,
:class:`~tcpn.petrinets.statespace.graph.OnTheFlyComponents`): the first strongly
connected component that is non-trivial, meets every acceptance set (one per ``U``) and
satisfies the fairness assumptions stops the search, and a path to it plus a cycle
through it is the counterexample. Beyond that the whole product is built and searched in
arrays (:mod:`tcpn.petrinets.checking.ltl.product`), with the same answers. ``E φ`` is ``¬A ¬φ``:
its witness is the same lasso.

**Dead markings.** A path that reaches a dead marking stays there forever (the marking
repeats, as if it had a silent self-loop): every maximal path is infinite. So ``X p`` at a
dead marking means ``p`` holds there, ``G p`` on a path into a deadlock needs ``p`` in the
deadlock, ``F p`` may be met in it. This is the convention of the Model Checking Contest
(whose oracle answers agree with it on all LTL formulas of the test set,
``benchmarks/mcc.py``).

**Fairness.** A transition assumed weakly fair (justice, ``weak_fair=``) discards an
infinite path on which it is enabled from some point on but never fires; strongly fair
(compassion, ``strong_fair=``) one on which it is enabled infinitely often but fires
finitely often. On a component: weakly fair when every
transition is either taken inside it or disabled somewhere in it; strongly fair when every
transition enabled somewhere in it is taken inside it; otherwise its states that enable an
untaken transition are removed and what remains is decomposed again (Emerson and Lei).
The deadlock's stutter takes no
transition and none is enabled there, so a path into a deadlock is always fair.

**Incomplete spaces.** On a space a budget stopped (states from ``n_expanded`` on
found but not expanded), a lasso of the product is still a path of the net: its states
were expanded (every edge of theirs is known) or are dead expanded markings, and the
unexpanded states have no successor and no repetition, so no lasso passes through them.
Such a lasso answers (``A φ`` false, ``E φ`` true); finding none answers nothing
(``unknown``), and no proposition is folded to a constant (what holds in every state found
need not hold in every reachable one).

>>> from tcpn.petrinets.examples import counter
>>> from tcpn.petrinets.checking.formulas import A, F, G, tokens
>>> from tcpn.petrinets.statespace.space import explore
>>> space = explore(counter(3))
>>> check_ltl(A(F(tokens("count", value=3) >= 1)), space).answer
'true'
>>> v = check_ltl(A(G(tokens("count", value=3) <= 0)), space)
>>> v.answer, [s.transition for s in v.evidence.stem], len(v.evidence.cycle)
('false', ['increment', 'increment', 'increment'], 0)
"""

from __future__ import annotations

import time as wallclock
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tcpn.errors import InputError, TcpnError
from tcpn.petrinets.checking.formulas import (
    TEMPORAL,
    A,
    And,
    Bool,
    E,
    F,
    Formula,
    G,
    Not,
    Or,
    R,
    U,
    W,
    X,
    is_ltl,
)
from tcpn.petrinets.checking.ltl.rewrite import simplify
from tcpn.petrinets.checking.verdicts import Evidence, Verdict
from tcpn.petrinets.statespace.graph import OnTheFlyComponents, walk_to_edge
from tcpn.petrinets.statespace.memory import MemoryBudget
from tcpn.petrinets.statespace.paths import Step
from tcpn.petrinets.statespace.protocol import AnyStateSpace

if TYPE_CHECKING:
    pass

__all__ = ["BuchiAutomaton", "TranslationTimeout", "check_ltl", "translate"]

#: The transitions assumed weakly fair and those assumed strongly fair.
FairSets = tuple[frozenset[str], frozenset[str]]
NO_FAIRNESS: FairSets = (frozenset(), frozenset())
#: An edge of the product: the transition and the state space's edge index, or STUTTER.
Label = tuple[str, int] | None
#: The silent self-loop of a dead marking (no transition fires on it).
STUTTER = None



# -- negation normal form --------------------------------------------------------------------
def _nnf(formula: Formula, negate: bool = False) -> Formula:
    """Negation normal form over temporal operators; temporal-free sub-formulas stay
    whole (a negated one becomes ``Not(sub)``)."""
    if not _temporal(formula):
        if isinstance(formula, Bool):
            return Bool(formula.value != negate)
        return Not(formula) if negate else formula
    if isinstance(formula, Not):
        return _nnf(formula.operand, not negate)
    if isinstance(formula, And | Or):
        dual = (formula.__class__ is And) == negate
        parts = tuple(_nnf(p, negate) for p in formula.operands)
        return Or(parts) if dual else And(parts)
    if isinstance(formula, X):
        return X(_nnf(formula.operand, negate))
    if isinstance(formula, F):
        inner = _nnf(formula.operand, negate)
        return R(Bool(False), inner) if negate else U(Bool(True), inner)
    if isinstance(formula, G):
        inner = _nnf(formula.operand, negate)
        return U(Bool(True), inner) if negate else R(Bool(False), inner)
    if isinstance(formula, U):
        left, right = _nnf(formula.left, negate), _nnf(formula.right, negate)
        return R(left, right) if negate else U(left, right)
    if isinstance(formula, R):
        left, right = _nnf(formula.left, negate), _nnf(formula.right, negate)
        return U(left, right) if negate else R(left, right)
    if isinstance(formula, W):
        # a W b == b R (a | b);  not(a W b) == (not b) U (not a & not b)
        if negate:
            nb = _nnf(formula.right, True)
            return U(nb, And((_nnf(formula.left, True), nb)))
        a, b = _nnf(formula.left), _nnf(formula.right)
        return R(b, Or((a, b)))
    raise InputError(f"{type(formula).__name__} is not an LTL operator")


def _temporal(formula: Formula) -> bool:
    if isinstance(formula, TEMPORAL):
        return True
    if isinstance(formula, A | E):
        raise InputError("a path quantifier inside an LTL formula")
    return any(_temporal(c) for c in formula.children())


def _negated(literal: Formula) -> Formula:
    if isinstance(literal, Bool):
        return Bool(not literal.value)
    return literal.operand if isinstance(literal, Not) else Not(literal)


# -- the tableau (GPVW) ----------------------------------------------------------------------
@dataclass(frozen=True)
class BuchiAutomaton:
    """A generalised Büchi automaton with labels on states: ``literals[q]`` are the state
    formulas a marking must satisfy to be read by state ``q``; ``successors[q]`` the states
    that may read the next marking; ``initial`` the states that may read the first;
    ``accepting`` one set of states per acceptance condition (an accepted run meets each
    set infinitely often)."""

    literals: list[tuple[Formula, ...]]
    successors: list[list[int]]
    initial: list[int]
    accepting: list[frozenset[int]]

    def __len__(self) -> int:
        return len(self.literals)


@dataclass
class _Node:
    incoming: set[int]
    new: list[Formula]
    old: set[Formula] = field(default_factory=set)
    next: set[Formula] = field(default_factory=set)


_INIT = -1


class TranslationTimeout(TcpnError):
    """The deadline passed while :func:`translate` built or reduced an automaton (the
    tableau of a formula can grow exponentially with its nesting of ``U``)."""


#: Steps of the tableau and of the reductions between two readings of the clock.
CLOCK_EVERY_STEPS = 256


def _clock(deadline: float | None, what: str, size: int) -> None:
    """Raise :class:`TranslationTimeout` when ``deadline`` (a ``perf_counter`` reading)
    has passed, saying what was being done and how far it got."""
    if deadline is not None and wallclock.perf_counter() > deadline:
        raise TranslationTimeout(f"while {what} ({size:,} automaton states so far)")


def translate(path_formula: Formula, reduce: bool = True,
              deadline: float | None = None) -> BuchiAutomaton:
    """The automaton of the paths satisfying a quantifier-free path formula: the formula
    rewritten by :func:`~tcpn.petrinets.checking.ltl.rewrite.simplify`, the tableau's automaton
    with useless states removed, edges to directly simulated siblings dropped and
    bisimilar states merged; with ``reduce`` false, the tableau's automaton with only
    bisimilar states merged (for comparisons). Past ``deadline`` (a
    :func:`time.perf_counter` reading, read every :data:`CLOCK_EVERY_STEPS` steps) it
    raises :class:`TranslationTimeout`.

    >>> from tcpn.petrinets.checking.formulas import F, tokens
    >>> automaton = translate(F(tokens("p") >= 1))
    >>> len(automaton), len(automaton.accepting)
    (3, 1)
    """
    root = simplify(_nnf(path_formula)) if reduce else _nnf(path_formula)
    done: list[_Node] = []
    index: dict[tuple[frozenset[Formula], frozenset[Formula]], int] = {}
    work = [_Node({_INIT}, [root])]
    steps = 0
    while work:
        steps += 1
        if not steps % CLOCK_EVERY_STEPS:
            _clock(deadline, "building the formula's tableau", len(done))
        node = work.pop()
        if not node.new:
            key = (frozenset(node.old), frozenset(node.next))
            if key in index:
                done[index[key]].incoming |= node.incoming
                continue
            index[key] = len(done)
            done.append(node)
            work.append(_Node({index[key]}, list(node.next)))
            continue
        eta = node.new.pop()
        if eta in node.old:
            work.append(node)
            continue
        if not _temporal(eta) and not isinstance(eta, And | Or):
            if eta == Bool(False) or _negated(eta) in node.old:
                continue
            node.old.add(eta)
            work.append(node)
        elif isinstance(eta, And):
            node.old.add(eta)
            node.new.extend(o for o in eta.operands if o not in node.old)
            work.append(node)
        elif isinstance(eta, Or):
            node.old.add(eta)
            for operand in eta.operands:
                work.append(_Node(set(node.incoming), [*node.new, operand], set(node.old),
                                  set(node.next)))
        elif isinstance(eta, X):
            node.old.add(eta)
            node.next.add(eta.operand)
            work.append(node)
        elif isinstance(eta, U | R):
            node.old.add(eta)
            first = [eta.left] if isinstance(eta, U) else [eta.right]
            second = [eta.right] if isinstance(eta, U) else [eta.left, eta.right]
            work.append(_Node(set(node.incoming), node.new + first, set(node.old),
                              node.next | {eta}))
            work.append(_Node(set(node.incoming), node.new + second, set(node.old),
                              set(node.next)))
        else:
            raise InputError(f"{type(eta).__name__} is not an LTL operator")
    untils = {f for n in done for f in n.old if isinstance(f, U)}
    accepting = [frozenset(i for i, n in enumerate(done)
                           if u not in n.old or u.right in n.old) for u in sorted(untils, key=repr)]
    successors: list[list[int]] = [[] for _ in done]
    for i, n in enumerate(done):
        for j in n.incoming:
            if j != _INIT:
                successors[j].append(i)
    literals = [tuple(sorted({f for f in n.old if not _temporal(f)
                              and not isinstance(f, And | Or | Bool)}, key=repr))
                for n in done]
    automaton = _merge_bisimilar(BuchiAutomaton(
        literals, successors, [i for i, n in enumerate(done) if _INIT in n.incoming],
        accepting), deadline)
    if not reduce:
        return automaton
    automaton = _prune(automaton)
    if len(automaton) <= MAX_SIMULATION_STATES:
        automaton = _merge_bisimilar(_prune(_drop_little_brothers(automaton, deadline)),
                                     deadline)
    return automaton


#: Automata larger than this skip the simulation reduction (its cost grows as n^2 x edges).
MAX_SIMULATION_STATES = 400


def _direct_simulation(automaton: BuchiAutomaton,
                       deadline: float | None = None) -> list[set[int]]:
    """``simulated_by[q]``: the states ``r`` that directly simulate ``q`` (``r`` reads
    every marking ``q`` reads, is in every acceptance set ``q`` is in, and each successor
    of ``q`` is simulated by a successor of ``r``): the greatest such relation."""
    n = len(automaton)
    member = [frozenset(i for i, acc in enumerate(automaton.accepting) if q in acc)
              for q in range(n)]
    labels = [frozenset(lits) for lits in automaton.literals]
    relation = [{r for r in range(n) if labels[r] <= labels[q] and member[q] <= member[r]}
                for q in range(n)]
    changed = True
    while changed:
        changed = False
        for q in range(n):
            _clock(deadline, "reducing the automaton by simulation", n)
            for r in list(relation[q]):
                if not all(relation[t] & set(automaton.successors[r])
                           for t in automaton.successors[q]):
                    relation[q].discard(r)
                    changed = True
    return relation


def _drop_little_brothers(automaton: BuchiAutomaton,
                          deadline: float | None = None) -> BuchiAutomaton:
    """The automaton without the edges (and initial states) to a state that a sibling
    directly simulates (Etessami and Holzmann): a run through the dropped edge has a
    twin through the sibling that reads the same markings and is accepted whenever it
    is. Of two states that simulate each other the one with the larger number goes."""
    simulated_by = _direct_simulation(automaton, deadline)

    def dominated(q: int, siblings: list[int]) -> bool:
        return any(r != q and r in simulated_by[q] and (q not in simulated_by[r] or r < q)
                   for r in siblings)

    return BuchiAutomaton(
        automaton.literals,
        [[r for r in succ if not dominated(r, succ)] for succ in automaton.successors],
        [q for q in automaton.initial if not dominated(q, automaton.initial)],
        automaton.accepting)


def _prune(automaton: BuchiAutomaton) -> BuchiAutomaton:
    """The automaton without the states from which no accepted run goes on (an accepted
    run ends in a strongly connected set of states that has a cycle and meets every
    acceptance set), and without acceptance sets that hold every remaining state."""
    import numpy as np

    from tcpn.petrinets.statespace.graph import StateGraph
    n = len(automaton)
    if n == 0:
        return automaton
    g = StateGraph.of_lists(automaton.successors)
    everywhere = np.ones(n, dtype=bool)
    component, cyclic = g.components(everywhere)
    good = np.zeros(n, dtype=bool)
    for c in np.flatnonzero(cyclic):
        members = component == c
        if all(members[sorted(acc)].any() for acc in automaton.accepting):
            good |= members
    # the states that reach a good component and are reached from an initial state
    live = set(np.flatnonzero(g.backward(good, everywhere)).tolist())
    initial = np.zeros(n, dtype=bool)
    initial[automaton.initial] = True
    reached = set(np.flatnonzero(g.reached(initial)).tolist())
    kept = sorted(live & reached)
    number = {q: i for i, q in enumerate(kept)}
    accepting = [frozenset(number[q] for q in acc if q in number)
                 for acc in automaton.accepting]
    return BuchiAutomaton(
        [automaton.literals[q] for q in kept],
        [[number[r] for r in automaton.successors[q] if r in number] for q in kept],
        [number[q] for q in automaton.initial if q in number],
        [acc for acc in accepting if len(acc) < len(kept)])


def _merge_bisimilar(automaton: BuchiAutomaton,
                     deadline: float | None = None) -> BuchiAutomaton:
    """The automaton with bisimilar states merged (same label, same acceptance sets,
    successors in the same classes): they accept the same runs, so the language is kept.
    The tableau makes many (its states differ in formulas already discharged)."""
    n = len(automaton)
    signature = [(automaton.literals[q], tuple(q in acc for acc in automaton.accepting))
                 for q in range(n)]
    classes = _numbered(signature)
    while True:
        _clock(deadline, "merging the automaton's bisimilar states", n)
        refined = _numbered([(classes[q], frozenset(classes[r] for r in
                                                    automaton.successors[q]))
                             for q in range(n)])
        if max(refined, default=-1) == max(classes, default=-1):
            break
        classes = refined
    count = max(classes, default=-1) + 1
    literals: list[tuple[Formula, ...]] = [()] * count
    successors: list[set[int]] = [set() for _ in range(count)]
    for q in range(n):
        literals[classes[q]] = automaton.literals[q]
        successors[classes[q]].update(classes[r] for r in automaton.successors[q])
    return BuchiAutomaton(literals, [sorted(x) for x in successors],
                          sorted({classes[q] for q in automaton.initial}),
                          [frozenset(classes[q] for q in acc) for acc in automaton.accepting])


def _numbered(keys: list[Any]) -> list[int]:
    """Each key's number in order of first appearance."""
    numbers: dict[Any, int] = {}
    return [numbers.setdefault(key, len(numbers)) for key in keys]


# -- the product and its emptiness -----------------------------------------------------------
Successors = Callable[[int], Sequence[tuple[int, Label]]]
#: Where a state formula holds: one boolean per state, indexed by state number.
Holds = Callable[[Formula], Sequence[bool]]


class _Budget(Exception):
    pass


def find_accepting_lasso(automaton: BuchiAutomaton, initial_state: int, successors: Successors,
                         holds: Holds, fair: FairSets = NO_FAIRNESS,
                         max_product_states: int | None = None,
                         deadline: float | None = None,
                         memory: MemoryBudget | None = None,
                         expanded: int | None = None,
                         on_frontier: Callable[[], None] | None = None
                         ) -> tuple[list[tuple[int, Label]], list[tuple[int, Label]],
                                    int] | None:
    """An accepted (and fair) lasso of the product, or None if there is none.

    Returns ``(stem, cycle, product_states)`` where stem and cycle are lists of
    ``(state, label)``: the label is the transition that leads *into* that state. Raises
    :class:`_Budget` when a budget is reached (the clock and ``memory``, the process's
    resident memory, are read every 4,096 steps). States numbered ``expanded`` and up
    (a budget's frontier) have no known successor: no path continues from them, not even
    a dead marking's repetition; ``on_frontier`` is called when the search reaches one.
    """
    n_q = len(automaton)
    readable: list[Sequence[bool]] = [holds(And(lits)) if len(lits) > 1 else holds(
        lits[0]) if lits else holds(Bool(True)) for lits in automaton.literals]
    # Which automaton states may read a marking, as one set per state (made on first use):
    # a product edge is then a set intersection instead of a test per automaton successor.
    readers: dict[int, frozenset[int]] = {}
    following = [frozenset(s) for s in automaton.successors]

    def product_successors(node: int) -> list[tuple[int, Label]]:
        state, q = divmod(node, n_q)
        if expanded is not None and state >= expanded and on_frontier is not None:
            on_frontier()
        out = successors(state) or (
            [(state, STUTTER)] if expanded is None or state < expanded else [])
        found = []
        nexts = following[q]
        for target, label in out:
            can = readers.get(target)
            if can is None:
                can = readers[target] = frozenset(
                    q2 for q2 in range(n_q) if readable[q2][target])
            for q2 in nexts & can:
                found.append((target * n_q + q2, label))
        return found

    roots = [initial_state * n_q + q for q in automaton.initial if readable[q][initial_state]]

    def before_new(count: int) -> None:
        if max_product_states is not None and count >= max_product_states:
            raise _Budget(f"product budget reached: {max_product_states} states")

    def pulse() -> None:
        # read every 4,096 steps of the search (edges followed or nodes closed), not only
        # when a product state is new: a dense product can follow millions of edges
        # between two new states
        if deadline is not None and wallclock.perf_counter() > deadline:
            raise _Budget("time budget reached")
        if memory is not None and memory.exceeded():
            raise _Budget(memory.reason())

    search: OnTheFlyComponents[int, Label] = OnTheFlyComponents(product_successors,
                                                                before_new, pulse)
    for component in search.components(roots):
        node = component[-1]
        if len(component) == 1 and node not in search.looping:
            continue
        if not all(any(n % n_q in acc for n in component) for acc in automaton.accepting):
            continue
        cycle = _fair_accepting_cycle(set(component), product_successors, automaton,
                                      n_q, fair, successors)
        if cycle is not None:
            start = cycle[0][0] if cycle else node
            stem: list[tuple[int, Label]] = []
            walker = start
            while walker in search.parent:
                up_node, label = search.parent[walker]
                stem.append((walker // n_q, label))
                walker = up_node
            stem.reverse()
            return stem, [(s // n_q, lab) for s, lab in cycle[1:]], search.count
    return None


def _fair_accepting_cycle(component: set[int], product_successors: Callable[
        [int], list[tuple[int, Label]]], automaton: BuchiAutomaton, n_q: int,
        fair: FairSets, successors: Successors
        ) -> list[tuple[int, Label]] | None:
    """A cycle in ``component`` meeting every acceptance set and the fairness assumption,
    as ``[(start, None), (next, label), ..., (start, label)]``, or None."""
    inner = {n: [(t, lab) for t, lab in product_successors(n) if t in component]
             for n in component}
    if not any(inner[n] for n in component):
        return None
    if not any(fair):  # the component is strongly connected: no refinement needed
        return _check_part(component, inner, automaton, n_q, fair, successors)
    for part in _subcomponents(inner):
        found = _check_part(part, inner, automaton, n_q, fair, successors)
        if found is not None:
            return found
    return None


def _check_part(part: set[int], inner: dict[int, list[tuple[int, Label]]],
                automaton: BuchiAutomaton, n_q: int, fair: FairSets,
                successors: Successors) -> list[tuple[int, Label]] | None:
    """A fair accepting cycle in one component (the transitions enabled in a state are the
    labels of its edges in the state graph)."""
    edges = {n: [(t, lab) for t, lab in inner[n] if t in part] for n in part}
    if not any(edges[n] for n in part):
        return None
    for accepting in automaton.accepting:
        if not any(n % n_q in accepting for n in part):
            return None
    taken = {lab[0] for n in part for _, lab in edges[n] if lab is not STUTTER}
    weak, strong = fair
    if weak or strong:
        enabled_at = {n: {lab[0] for _, lab in successors(n // n_q) if lab is not STUTTER}
                      for n in part}
        for t in (weak - taken):
            if all(t in enabled_at[n] for n in part):
                return None
        bad = {n for n in part if (enabled_at[n] & strong) - taken}
        if bad:
            rest = part - bad
            sub = {n: [(t, lab) for t, lab in edges[n] if t in rest] for n in rest}
            for smaller in _subcomponents(sub):
                found = _check_part(smaller, inner, automaton, n_q, fair, successors)
                if found is not None:
                    return found
            return None
    return _cycle_through(part, edges, automaton, n_q, taken if weak or strong else set())


def _subcomponents(edges: dict[int, list[tuple[int, Label]]]) -> list[set[int]]:
    """Strongly connected components of a small explicit graph (the kernel's Tarjan)."""
    search: OnTheFlyComponents[int, Label] = OnTheFlyComponents(
        lambda n: [(t, lab) for t, lab in edges[n] if t in edges])
    return [set(part) for part in search.components(edges)]


def _cycle_through(part: set[int], edges: dict[int, list[tuple[int, Label]]],
                   automaton: BuchiAutomaton, n_q: int, labels: set[str]
                   ) -> list[tuple[int, Label]]:
    """A cycle from a node of ``part`` through a node of every acceptance set and an edge
    of every label in ``labels``, back to its start."""
    start = min(part)
    path: list[tuple[int, Label]] = [(start, STUTTER)]
    here = start
    goals: list[Callable[[int, Label, int], bool]] = []
    for accepting in automaton.accepting:
        goals.append(lambda _u, _lab, v, acc=accepting: v % n_q in acc)  # type: ignore[misc]
    for label in sorted(labels, key=repr):
        goals.append(lambda _u, lab, _v, want=label:  # type: ignore[misc]
                     lab is not STUTTER and lab[0] == want)
    goals.append(lambda _u, _lab, v: v == start)
    for goal in goals:
        leg = walk_to_edge(edges.__getitem__, here, goal)
        path.extend(leg)
        here = leg[-1][0]
    return path


# -- the checker (tcpn.petrinets.checking.check.check calls it for LTL) ----------------------
def check_ltl(formula: Formula, space: AnyStateSpace, weak_fair: Iterable[str] = (),
              strong_fair: Iterable[str] = (), max_product_states: int | None = None,
              time_limit_s: float | None = None,
              max_memory_bytes: int | None = None) -> Verdict:
    """Check an LTL formula (``A(φ)`` or ``E(φ)``, φ quantifier-free) on a state space,
    over the paths fair to the transitions named weakly and strongly fair.

    Budgets (each reached gives ``unknown`` naming it): ``max_product_states``,
    ``time_limit_s``, and ``max_memory_bytes`` of resident memory for the whole process
    (:class:`~tcpn.petrinets.statespace.memory.MemoryBudget`; None: half of what the process may use
    when the check starts). The time limit covers the formula's translation into an
    automaton too (its tableau grows exponentially with nested ``U``).

    ``space`` is a :class:`~tcpn.petrinets.statespace.space.StateSpace` or a
    :class:`~tcpn.petrinets.statespace.ptspace.PTStateSpace` (complete: a budget-limited space gives
    ``unknown``). The verdict's evidence is the counterexample of ``A φ`` or the witness of
    ``E φ`` as a lasso of steps; a lasso that ends in a dead marking has an empty cycle
    (the marking repeats).
    """
    started = wallclock.perf_counter()
    text = repr(formula)
    if not is_ltl(formula):
        raise InputError(f"not an LTL formula (one A or E over a quantifier-free path "
                         f"formula): {text}")
    incomplete = "" if getattr(space, "complete", True) else "the state space is " \
        "incomplete: " + (getattr(space, "reason", "") or "budget reached")
    if incomplete and getattr(space, "n_expanded", None) is None:
        return Verdict("unknown", text, states=len(space), reason=incomplete,
                       technique=("EXPLICIT",))
    universal = isinstance(formula, A)
    assert isinstance(formula, A | E)
    searched = Not(formula.path) if universal else formula.path
    graph = _graph(space)
    deadline = None if time_limit_s is None else started + time_limit_s
    try:
        automaton = translate(searched if incomplete else _fold_invariants(searched, graph),
                              deadline=deadline)
    except TranslationTimeout as late:
        return Verdict("unknown", text, states=len(space),
                       reason=f"time budget reached ({time_limit_s:.3g} s left for the "
                       f"LTL check) {late}",
                       seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",))
    fair: FairSets = (frozenset(weak_fair), frozenset(strong_fair))
    memory = MemoryBudget.of(max_memory_bytes)
    frontier_reached: list[bool] = []
    try:
        found = _search(automaton, graph, fair, max_product_states, deadline, memory,
                        lambda: frontier_reached.append(True))
    except _Budget as budget:
        return Verdict("unknown", text, states=len(space), reason=str(budget),
                       seconds=wallclock.perf_counter() - started, technique=("EXPLICIT",))
    finally:
        graph.forget_lists()
    seconds = wallclock.perf_counter() - started
    technique = ("EXPLICIT", "LTL_NFA") + (("FAIRNESS",) if any(fair) else ())
    if found is None and incomplete and frontier_reached:
        return Verdict("unknown", text, states=len(space), seconds=seconds,
                       reason=f"{incomplete}; no lasso among the {graph.expanded:,} "
                       "states expanded", technique=("EXPLICIT",))
    if found is None:
        return Verdict("true" if universal else "false", text, states=len(space),
                       seconds=seconds, technique=technique)
    stem, cycle, _ = found
    evidence = Evidence(graph.steps(stem), graph.steps(cycle))
    return Verdict("false" if universal else "true", text, evidence=evidence,
                   states=len(space), seconds=seconds, technique=technique)


def _fold_invariants(path_formula: Formula, graph: _Graph) -> Formula:
    """The path formula with each proposition (maximal temporal-free sub-formula) that
    holds in every reachable marking, or in none, replaced by ``true`` or ``false``: every
    product state's marking is reachable, so the paths accepted are the same, and the
    rewriting rules (:mod:`tcpn.petrinets.checking.ltl.rewrite`) then shrink the automaton."""
    if isinstance(path_formula, Bool):
        return path_formula
    if not _temporal(path_formula):
        mask = graph.mask(path_formula)
        return Bool(True) if mask.all() else Bool(False) if not mask.any() else path_formula
    changes: dict[str, Any] = {}
    for name, value in vars(path_formula).items():
        if isinstance(value, Formula):
            changes[name] = _fold_invariants(value, graph)
        elif isinstance(value, tuple):
            changes[name] = tuple(_fold_invariants(v, graph) for v in value)
    return type(path_formula)(**changes)


#: Product states the on-the-fly search may visit before the array search takes over: a
#: counterexample near the initial state is found at once, a large product costs a few
#: array operations per layer instead of a Python loop turn per product state.
ON_THE_FLY_STATES = 300


def _search(automaton: BuchiAutomaton, graph: _Graph, fair: FairSets,
            max_product_states: int | None, deadline: float | None, memory: MemoryBudget,
            on_frontier: Callable[[], None] | None = None
            ) -> tuple[list[tuple[int, Label]], list[tuple[int, Label]], int] | None:
    """The on-the-fly search up to :data:`ON_THE_FLY_STATES` product states, then the
    whole product in arrays (:mod:`tcpn.petrinets.checking.ltl.product`); the on-the-fly search
    again, with the caller's budgets, where the arrays would not fit. ``on_frontier`` is
    called when the product reaches a state not expanded (a stopped search's)."""
    small = ON_THE_FLY_STATES if max_product_states is None else min(
        ON_THE_FLY_STATES, max_product_states)
    try:
        return find_accepting_lasso(automaton, 0, graph.successors, graph.holds, fair,
                                    small, deadline, memory, graph.expanded, on_frontier)
    except _Budget as budget:
        if small == max_product_states or str(budget).startswith("time"):
            raise
    from tcpn.petrinets.checking.ltl.product import ProductTooLarge, product_lasso
    try:
        found = product_lasso(automaton, *graph.arrays(), graph.mask, fair,
                              max_product_states, deadline, graph.state_graph(memory),
                              memory, graph.expanded, on_frontier)
    except ProductTooLarge as budget:
        if "array entries" not in str(budget):
            raise _Budget(str(budget)) from None
        return find_accepting_lasso(automaton, 0, graph.successors, graph.holds, fair,
                                    max_product_states, deadline, memory, graph.expanded,
                                    on_frontier)
    if found is None:
        return None
    stem, cycle, size = found
    return graph.labelled(stem), graph.labelled(cycle), size


class _Graph:
    """What the product needs of a state space: labelled successors, atoms, steps; one per
    state space (:func:`_graph`), shared by the formulas checked on it."""

    def __init__(self, space: Any):
        from tcpn.petrinets.checking.ptcheck import edge_arrays
        # weak: the cache keeping this graph is keyed weakly by the space (a strong
        # reference here would keep every space checked alive)
        self._space = weakref.ref(space)
        self.masks: dict[Formula, Any] = {}
        self.lists: dict[Formula, list[bool]] = {}
        from tcpn.petrinets.statespace.ptspace import PTStateSpace
        self.pt = isinstance(space, PTStateSpace)
        self.edge_arrays = edge_arrays(space)
        self._state_graph: Any = None
        #: states from this number on were found but not expanded (None: all expanded)
        self.expanded: int | None = None if getattr(space, "complete", True) else int(
            space.n_expanded)


    @property
    def space(self) -> Any:
        """The state space of this graph (alive while anyone holds it)."""
        space = self._space()
        if space is None:
            raise ReferenceError("the state space of this graph was freed")
        return space
    def arrays(self) -> tuple[Any, Any, Any, Sequence[str]]:
        """``(indptr, targets, labels, names)`` of the state space's edges."""
        return self.edge_arrays

    def state_graph(self, memory: MemoryBudget) -> Any:
        """The edges with each dead marking's repetition
        (:class:`~tcpn.petrinets.checking.ltl.product.StutteringGraph`), made once if they fit in
        ``memory`` (else :class:`_Budget`)."""
        if self._state_graph is None:
            from tcpn.petrinets.checking.ltl.product import STATE_GRAPH_EDGE_BYTES, StutteringGraph
            if memory.exceeded(STATE_GRAPH_EDGE_BYTES * len(self.edge_arrays[1])):
                raise _Budget(memory.reason())
            self._state_graph = StutteringGraph.of(*self.edge_arrays[:3],
                                                   expanded=self.expanded)
        return self._state_graph

    def mask(self, formula: Formula) -> Any:
        """Where a state formula holds, as a NumPy boolean vector."""
        return self._mask(formula)

    def labelled(self, path: list[tuple[int, int]]) -> list[tuple[int, Label]]:
        """``(state, edge index)`` steps as ``(state, label)`` (edge -1: a dead marking's
        repetition)."""
        _, _, labels, names = self.arrays()
        return [(state, STUTTER if edge < 0 else (names[int(labels[edge])], edge))
                for state, edge in path]

    def successors(self, state: int) -> Sequence[tuple[int, Label]]:
        """The labelled edges leaving ``state`` (read from the arrays: the on-the-fly
        search visits few states, so no list of every edge is made)."""
        indptr, targets, labels, names = self.edge_arrays
        lo, hi = int(indptr[state]), int(indptr[state + 1])
        return [(target, (names[label], k)) for k, target, label in
                zip(range(lo, hi), targets[lo:hi].tolist(), labels[lo:hi].tolist(),
                    strict=True)]

    def holds(self, formula: Formula) -> Sequence[bool]:
        """Where a conjunction of literals holds (each literal evaluated once)."""
        if formula not in self.lists:
            self.lists[formula] = self._mask(formula).tolist()
        return self.lists[formula]

    def forget_lists(self) -> None:
        """Drop the Python lists :meth:`holds` made (8 bytes a state each; the NumPy
        masks, one byte a state, stay for the next formula)."""
        self.lists.clear()

    def _mask(self, formula: Formula) -> Any:
        if formula not in self.masks:
            if isinstance(formula, And):
                import numpy as np
                self.masks[formula] = np.logical_and.reduce(
                    [self._mask(o) for o in formula.operands])
            else:
                from tcpn.petrinets.checking.ptcheck import state_mask
                self.masks[formula] = state_mask(formula, self.space)
        return self.masks[formula]

    def steps(self, path: list[tuple[int, Label]]) -> list[Step]:
        """The steps of a product path (the dead marking's stutter is no step)."""
        fired = [(state, label) for state, label in path if label is not STUTTER]
        if self.pt:
            return self.space.path_steps([label[1] for _, label in fired if label is not None])
        from tcpn.petrinets.checking.ctl import path_steps
        return path_steps(self.space, [label[1] for _, label in fired if label is not None])


#: The graphs of the state spaces checked lately (their edge arrays with the dead
#: markings' repetitions and their atoms' masks serve every formula of a space).
_GRAPHS: weakref.WeakKeyDictionary[Any, _Graph] = weakref.WeakKeyDictionary()


def _graph(space: AnyStateSpace) -> _Graph:
    found = _GRAPHS.get(space)
    if found is None:
        found = _GRAPHS[space] = _Graph(space)
    return found
