"""A coloured net with finite colour sets unfolded into the equivalent P/T net, as the
Model Checking Contest's tools unfold its ``-COL-`` models.

One P/T place per (place, colour) pair, one P/T transition per (transition, binding)
whose guard holds, and its arcs the tokens each arc's inscription and count denote under
that binding. The markings of the P/T net are those of the coloured one read colour by
colour, and its firings the coloured firings, binding by binding: the two state spaces
are the same graph.

The bindings run over the product of the transition's variables' colour sets (the
variables its input and read arcs bind, and its free variables), in the order the
compiled net binds them (:mod:`tcpn.petrinets.engine.compiler`); each conjunct of the
guard is tested as soon as its variables are bound, so a guard such as ``y == _succ[x]``
cuts the product at once. The arcs are evaluated by the compiled net's own firing code,
run on a copy of the net whose output, read and inhibitor arcs lead to places of their
own, on markings that count what each firing takes and puts (no second evaluator).

Memory stays in the unfolded net's size (sparse matrices); :func:`unfold` stops with
:class:`UnfoldingRefused`, naming why, where the net is not a finite symmetric-style net
(a colour set it cannot list, time, priorities, code actions), where the P/T net would
pass :data:`MAX_PLACES` places or :data:`MAX_TRANSITIONS` transitions, where the
bindings tried pass :data:`MAX_TRIED`, or when ``stop`` names a reason.

>>> from tcpn.petrinets import EnumSet, PetriNet, Place, Transition
>>> net = PetriNet("ring")
>>> net.declare(_succ={"a": "b", "b": "a"})
>>> net.add_place(Place("p", EnumSet(("a", "b"), name="AB"), initial=["a"]))
>>> net.add_transition(Transition("t"))
>>> net.add_input("p", "t", "x")
>>> net.add_output("p", "t", "_succ[x]")
>>> found = unfold(net)
>>> found.net.places, found.net.transitions, found.net.initial.tolist()
(('p[a]', 'p[b]'), ('t{x=a}', 't{x=b}'), [1, 0])
>>> found.transitions["t"]
('t{x=a}', 't{x=b}')
"""

from __future__ import annotations

import ast
import itertools
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcpn.errors import InputError
from tcpn.petrinets.cells import Cell
from tcpn.petrinets.colours import ColourSet, IntSet, ProductSet, UnitSet
from tcpn.petrinets.engine.compiler import TransitionCompiler, compile_net
from tcpn.petrinets.net import Arc, ArcKind, PetriNet, Place, Transition
from tcpn.petrinets.statespace.ptspace import PTNet

__all__ = ["MAX_PLACES", "MAX_TRANSITIONS", "MAX_TRIED", "Unfolding", "UnfoldingRefused",
           "unfold"]

#: The most P/T places an unfolding makes.
MAX_PLACES = 2_000_000
#: The most P/T transitions an unfolding makes.
MAX_TRANSITIONS = 2_000_000
#: The most bindings (partial ones counted: each value given to a variable) tried in
#: all, about a minute of work: a product of colour sets the guards do not cut stops here.
MAX_TRIED = 30_000_000
#: Bindings tried between two calls of ``stop``.
STOP_EVERY = 4096
#: The suffixes of the places a copy of the net gives output, read and inhibitor arcs.
_SHADOWS = {ArcKind.OUTPUT: "__tcpn_put", ArcKind.READ: "__tcpn_read",
            ArcKind.INHIBITOR: "__tcpn_inhibit"}


class UnfoldingRefused(InputError):
    """Why a net is not unfolded (the caller keeps it coloured)."""


@dataclass(frozen=True)
class Unfolding:
    """An unfolded net: the P/T net, and for each coloured place (transition), named as
    the caller named it, its P/T places in its colour set's order (its P/T transitions
    in binding order; none when no binding satisfies the guard). ``colours[place]``
    maps each colour of a coloured place to its P/T place."""

    net: PTNet
    places: dict[str, tuple[str, ...]]
    transitions: dict[str, tuple[str, ...]]
    colours: dict[str, dict[Any, str]] = field(repr=False)


class _Tally(dict[Any, int]):
    """A place of the counting markings: a missing value holds 0 tokens, so a firing
    leaves ``-n`` where it took ``n`` and ``+n`` where it put ``n``."""

    __slots__ = ()

    def __missing__(self, value: Any) -> int:
        return 0


def unfold(net: PetriNet, place_names: Sequence[str] | None = None,
           transition_names: Sequence[str] | None = None,
           stop: Callable[[], str | None] | None = None,
           max_places: int | None = None, max_transitions: int | None = None,
           max_tried: int | None = None) -> Unfolding:
    """The P/T unfolding of ``net`` (see the module docstring); ``place_names`` and
    ``transition_names`` rename the net's places and transitions in order (the contest
    names them by their PNML ids), and the P/T names are built on them:
    ``place[colour]`` (``place`` alone for a black-token place) and
    ``transition{x=v,...}``. ``stop()`` is called now and then; a reason it returns
    stops the unfolding. The limits default to the module's constants.

    Raises :class:`UnfoldingRefused` naming why the net is not unfolded.
    """
    max_places = MAX_PLACES if max_places is None else max_places
    max_transitions = MAX_TRANSITIONS if max_transitions is None else max_transitions
    max_tried = MAX_TRIED if max_tried is None else max_tried
    _check_kind(net)
    place_id = dict(zip(net.places, place_names or net.places, strict=True))
    transition_id = dict(zip(net.transitions, transition_names or net.transitions,
                             strict=True))
    # the P/T places, a place's colours in order
    names: list[str] = []
    colours: dict[str, dict[Any, str]] = {}
    number: dict[str, dict[Any, int]] = {}
    for name, place in net.places.items():
        members = _members(place.colour, max_places - len(names),
                           f"place {place_id[name]}")
        texts = _unique([place_id[name] if isinstance(place.colour, UnitSet)
                         else f"{place_id[name]}[{_text(v)}]" for v in members])
        number[name] = {v: len(names) + i for i, v in enumerate(members)}
        colours[place_id[name]] = dict(zip(members, texts, strict=True))
        names += texts
    _stopped(stop)
    initial = np.zeros(len(names), dtype=np.int64)
    for name, place in net.places.items():
        for value, count in Counter(t.value for t in place.initial_tokens).items():
            if value not in number[name]:
                raise UnfoldingRefused(f"place {place_id[name]}: initial token {value!r} "
                                       "is not among the colours listed")
            initial[number[name][value]] += count
    copy, kinds = _counting_copy(net)
    try:
        compiled = compile_net(copy, keyed=False)
    except InputError as error:
        raise UnfoldingRefused(f"the net does not compile: {error}") from error
    arcs_of: dict[str, list[Arc]] = {t: [] for t in copy.transitions}
    for arc in copy.arcs:
        arcs_of[arc.transition].append(arc)
    entries = {kind: (array("q"), array("q"), array("q")) for kind in ArcKind}
    t_names: list[str] = []
    groups: dict[str, tuple[str, ...]] = {}
    tried = [0]
    marking = [_Tally() for _ in compiled.place_names]
    place_of = [kinds[compiled.place_index[p]] for p in compiled.place_names]
    for index, ct in enumerate(compiled.transitions):
        name = ct.name
        analysis = TransitionCompiler(copy, name, index, compiled.place_index,
                                      compiled.timed, arcs_of[name])
        known = analysis.known_colours
        domains = []
        for variable in ct.variables:
            if variable not in known:
                raise UnfoldingRefused(f"transition {transition_id[name]}: variable "
                                       f"{variable} has no colour set to run over")
            domains.append(_members(known[variable], max_tried,
                                    f"transition {transition_id[name]}: variable {variable}"))
        tests = _guard_tests(net.transitions[name].guard, ct.variables,
                             f"guard of transition {transition_id[name]}")
        namespace = ct.fire.__globals__
        fixed = [(a.kind, a.place) for a in net.arcs_of(name)
                 if a.kind is ArcKind.RESET
                 or (a.kind is ArcKind.INHIBITOR and a.inscription is None)]
        first = len(t_names)
        for binding in _bindings(ct.variables, domains, tests, namespace, tried, max_tried,
                                 stop, f"transition {transition_id[name]}"):
            for p in ct.writes_places:
                marking[p].clear()
            try:
                ct.fire(marking, binding, 0.0, None)  # type: ignore[arg-type]
            except Exception as error:
                raise UnfoldingRefused(f"transition {transition_id[name]} binding "
                                       f"{_binding_text(ct.variables, binding)}: {error}"
                                       ) from error
            row = len(t_names)
            cells = _cells(marking, ct.writes_places, place_of, number, fixed)
            if cells is None:  # it takes or reads a value no place can hold: never enabled
                continue
            if row >= max_transitions:
                raise UnfoldingRefused(f"the unfolding passes {max_transitions:,} P/T "
                                       "transitions")
            for kind, column, value in cells:
                rows, cols, values = entries[kind]
                rows.append(row)
                cols.append(column)
                values.append(value)
            t_names.append(transition_id[name] + (
                "{" + _binding_text(ct.variables, binding) + "}" if binding else ""))
        groups[transition_id[name]] = tuple(t_names[first:])
    _stopped(stop)
    if len(set(t_names)) != len(t_names):
        raise UnfoldingRefused("two P/T transitions would have the same name")
    shape = (len(t_names), len(names))
    matrices = {kind: _matrix(entries[kind], shape) for kind in ArcKind}
    pt = PTNet(tuple(names), tuple(t_names), matrices[ArcKind.INPUT],
               matrices[ArcKind.OUTPUT], matrices[ArcKind.READ],
               matrices[ArcKind.INHIBITOR], matrices[ArcKind.RESET].astype(bool), initial)
    return Unfolding(pt, {place_id[p]: tuple(colours[place_id[p]].values())
                          for p in net.places}, groups, colours)


def _check_kind(net: PetriNet) -> None:
    """Refuses what a P/T net has no counterpart for."""
    if net.is_timed:
        raise UnfoldingRefused("a timed net has no P/T unfolding")
    if len({t.priority for t in net.transitions.values()}) > 1:
        raise UnfoldingRefused("transitions of several priorities: a P/T net has none")
    for name, transition in net.transitions.items():
        if transition.action is not None or transition.delay not in (None, 0):
            raise UnfoldingRefused(f"transition {name}: a code action or a delay is "
                                   "beyond a P/T net")
    for arc in net.arcs:
        if arc.delay is not None:
            raise UnfoldingRefused(f"{arc.where}: a delay is beyond a P/T net")
    for declared, value in net.declarations.items():
        if isinstance(value, Cell):
            raise UnfoldingRefused(f"declaration {declared} is a reference cell: a firing "
                                   "may change what the inscriptions read")


def _members(colour: ColourSet, limit: int, where: str) -> list[Any]:
    """Every member of ``colour`` (products of any size up to ``limit``)."""
    if isinstance(colour, ProductSet):
        parts = [_members(c, limit, where) for c in colour.components]
        if math.prod(len(p) for p in parts) > limit:
            raise UnfoldingRefused(f"{where}: colour set {colour.describe()} has more than "
                                   f"{limit:,} members")
        return [tuple(v) for v in itertools.product(*parts)]
    if isinstance(colour, IntSet) and colour.low is not None and colour.high is not None:
        if colour.high - colour.low + 1 > limit:
            raise UnfoldingRefused(f"{where}: colour set {colour.describe()} has more than "
                                   f"{limit:,} members")
        return list(range(colour.low, colour.high + 1))
    members = colour.members()
    if members is None:
        raise UnfoldingRefused(f"{where}: colour set {colour.describe()} is not finite or "
                               "cannot be listed")
    if len(members) > limit:
        raise UnfoldingRefused(f"{where}: colour set {colour.describe()} has more than "
                               f"{limit:,} members")
    return members


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(_text(v) for v in value)
    return str(value)


def _unique(texts: list[str]) -> list[str]:
    """``texts``, any repeated one told apart by its position (values printing alike)."""
    if len(set(texts)) == len(texts):
        return texts
    return [f"{t}#{i}" for i, t in enumerate(texts)]


def _binding_text(variables: Sequence[str], binding: Sequence[Any]) -> str:
    return ",".join(f"{v}={_text(b)}" for v, b in zip(variables, binding, strict=True))


def _counting_copy(net: PetriNet) -> tuple[PetriNet, list[tuple[ArcKind, str]]]:
    """A copy of ``net`` whose firing code counts what each arc moves: output, read and
    inhibitor arcs (those with an inscription) lead to places of their own, read and
    inhibitor arcs as input arcs, so that a firing on counting markings leaves, per
    value, minus what the input arcs take, and minus what each read (inhibitor) arc
    names on its place, and plus what the output arcs put on theirs. Reset arcs and
    inhibitor arcs without inscription are left out (they name whole places). With it,
    per place of the copy, its kind and the net's place it stands for."""
    copy = PetriNet(net.name)
    copy.declarations = dict(net.declarations)
    kinds: list[tuple[ArcKind, str]] = []
    used = set(net.places) | set(net.transitions)
    shadow: dict[tuple[ArcKind, str], str] = {}
    for name, place in net.places.items():
        copy.add_place(Place(name, place.colour))
        kinds.append((ArcKind.INPUT, name))
        for kind, suffix in _SHADOWS.items():
            other = name + suffix
            while other in used:
                other += "_"
            used.add(other)
            shadow[kind, name] = other
            copy.add_place(Place(other, place.colour))
            kinds.append((kind, name))
    for transition in net.transitions.values():
        copy.add_transition(Transition(transition.name, guard=transition.guard,
                                       params=dict(transition.params),
                                       free_variables=dict(transition.free_variables)))
    for arc in net.arcs:
        if arc.kind is ArcKind.RESET or (arc.kind is ArcKind.INHIBITOR
                                         and arc.inscription is None):
            continue
        if arc.kind is ArcKind.INPUT:
            copy.add_arc(arc)
        elif arc.kind is ArcKind.OUTPUT:
            copy.add_arc(Arc(ArcKind.OUTPUT, shadow[arc.kind, arc.place], arc.transition,
                             arc.inscription, arc.count, arc.when, None, arc.multiset))
        else:
            copy.add_arc(Arc(ArcKind.INPUT, shadow[arc.kind, arc.place], arc.transition,
                             arc.inscription, arc.count, None, None, arc.multiset))
    return copy, kinds


def _guard_tests(guard: str | None, variables: Sequence[str], where: str
                 ) -> list[list[Any]]:
    """The guard's conjuncts compiled, by the number of variables bound before each is
    tested (``tests[k]``: once the first ``k`` variables have values)."""
    tests: list[list[Any]] = [[] for _ in range(len(variables) + 1)]
    if guard is None:
        return tests
    position = {v: i for i, v in enumerate(variables)}
    pending = [ast.parse(guard, mode="eval").body]
    while pending:
        part = pending.pop(0)
        if isinstance(part, ast.BoolOp) and isinstance(part.op, ast.And):
            pending = list(part.values) + pending
            continue
        level = max((position[n.id] + 1 for n in ast.walk(part)
                     if isinstance(n, ast.Name) and n.id in position), default=0)
        tests[level].append(compile(ast.Expression(part), where, "eval"))
    return tests


def _bindings(variables: Sequence[str], domains: list[list[Any]], tests: list[list[Any]],
              namespace: dict[str, Any], tried: list[int], max_tried: int,
              stop: Callable[[], str | None] | None, where: str
              ) -> Iterator[tuple[Any, ...]]:
    """The bindings (tuples in ``variables`` order) whose every guard conjunct holds,
    depth first; ``tried[0]`` counts the values given, against ``max_tried``."""
    env: dict[str, Any] = {}

    def holds(level: int) -> bool:
        for test in tests[level]:
            try:
                if not eval(test, namespace, env):
                    return False
            except Exception as error:
                raise UnfoldingRefused(f"{where}: the guard fails on "
                                       f"{_binding_text(list(env), list(env.values()))}: "
                                       f"{error}") from error
        return True

    if not holds(0):
        return
    n = len(variables)
    if n == 0:
        yield ()
        return
    iterators = [iter(domains[0])]
    while iterators:
        level = len(iterators)
        value = next(iterators[-1], _END)
        if value is _END:
            iterators.pop()
            env.pop(variables[level - 1], None)
            continue
        tried[0] += 1
        if tried[0] > max_tried:
            raise UnfoldingRefused(f"more than {max_tried:,} bindings tried ({where})")
        if tried[0] % STOP_EVERY == 0:
            _stopped(stop)
        env[variables[level - 1]] = value
        if not holds(level):
            continue
        if level == n:
            yield tuple(env[v] for v in variables)
        else:
            iterators.append(iter(domains[level]))


_END = object()


def _cells(marking: list[_Tally], touched: Sequence[int],
           place_of: list[tuple[ArcKind, str]], number: dict[str, dict[Any, int]],
           fixed: Sequence[tuple[ArcKind, str]]) -> list[tuple[ArcKind, int, int]] | None:
    """One binding's arcs as (matrix, P/T place, weight) from the counting markings a
    firing left (None: it takes or reads a value its place cannot hold)."""
    cells: list[tuple[ArcKind, int, int]] = []
    inhibit: dict[int, int] = {}  # the least threshold on each place
    for p in touched:
        kind, place = place_of[p]
        index = number[place]
        for value, count in marking[p].items():
            if not count:
                continue
            column = index.get(value)
            if column is None:
                if kind is ArcKind.INHIBITOR:
                    continue  # no such token ever: the inhibitor never holds it back
                if kind is ArcKind.OUTPUT:
                    raise UnfoldingRefused(f"place {place}: a firing puts {value!r}, not "
                                           "among its colours")
                return None
            if kind is ArcKind.INHIBITOR:
                inhibit[column] = min(inhibit.get(column, -count), -count)
            else:
                cells.append((kind, column, -count if kind is not ArcKind.OUTPUT else count))
    for kind, place in fixed:  # reset arcs, inhibitors of any token: every colour
        for column in number[place].values():
            if kind is ArcKind.INHIBITOR:
                inhibit[column] = 1
            else:
                cells.append((kind, column, 1))
    cells += [(ArcKind.INHIBITOR, column, least) for column, least in inhibit.items()]
    return cells


def _stopped(stop: Callable[[], str | None] | None) -> None:
    reason = stop() if stop is not None else None
    if reason:
        raise UnfoldingRefused(reason)


def _matrix(entries: tuple[array, array, array], shape: tuple[int, int]) -> Any:
    """A CSR matrix of the (row, column, value) entries; inhibitor thresholds on one cell
    keep the least, every other weight adds up."""
    from scipy.sparse import csr_array

    rows, cols, values = (np.frombuffer(e, dtype=np.int64) if len(e) else
                          np.zeros(0, dtype=np.int64) for e in entries)
    return csr_array((values, (rows, cols)), shape=shape, dtype=np.int64)
