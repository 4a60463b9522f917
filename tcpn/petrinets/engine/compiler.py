"""Compile a net once into specialised Python: one enabling and one firing function per transition.

The simulator and the state-space explorer share this compiled form. A marking is a list
with one dict per place: ``value -> count`` for untimed places, ``value -> sorted list of
timestamps`` for timed places (the list's length is the count). Entries never hold zero
tokens, so ``bool(place)`` says whether a place is marked.

For each transition the compiler generates

* ``enumerate(M) -> list[(ready_time, binding)]``: every binding whose guard holds and
  whose input and read tokens are present, with the time at which its tokens are ready
  (``-inf`` when no timed token is involved); inhibitor arcs are checked too;
* ``fire(M, binding, now, draw) -> None``: consume, run the code action, produce (with
  colour checks and delays);

and, for the simulator, ``enumerate_due`` (the same bindings, but those on the *gate*
places, and possibly without bindings later than the earliest future one), ``gate`` (the
arcs that name fixed tokens, such as ``()`` from a lock or an inhibitor without
inscription: whether, and from when, they are satisfied, the same for every binding) and
``fire_tracked`` (``fire`` that also keeps each timed place's timestamp order and, for a
transition with conditional output arcs, returns which of the places only those arcs
write it wrote: see ``CompiledNet.affected_by``).

Variables are bound by *pattern* input arcs (a variable, a constant, or a tuple of them);
names are checked in arc order, and the enumerators visit binders on untimed places
before those on timed places (the set of bindings is the same). The guard is tested as
soon as its variables are bound.
"""

from __future__ import annotations

import ast
import bisect
import collections
import functools
import itertools
import math
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

import numpy as np

from tcpn.limits import limit_problem, limits
from tcpn.petrinets.cells import Cell
from tcpn.petrinets.colours import (
    BoolSet,
    ColourSet,
    EnumSet,
    IntSet,
    ListSet,
    ProductSet,
    RealSet,
    RecordSet,
    StringSet,
    UnitSet,
)
from tcpn.petrinets.distributions import Distribution
from tcpn.petrinets.engine.codecache import compile_cached
from tcpn.petrinets.errors import FiringError, InputError
from tcpn.petrinets.inscriptions import RANDOM_FUNCTIONS, Inscription
from tcpn.petrinets.net import Arc, ArcKind, PetriNet

__all__ = ["CodeLines", "CompiledNet", "CompiledTransition", "KeyedTokens", "Marking",
           "RandomDraws", "compile_net", "multiset_counts"]

Marking = list[dict[Any, Any]]
Binding = tuple[Any, ...]
EnumerateFn = Callable[[Marking], list[tuple[float, Binding]]]
FireFn = Callable[[Marking, Binding, float, "RandomDraws"], None]


_CHOICE_BUFFER = 1024


class RandomDraws:
    """The random functions inscriptions may call, drawing from one NumPy generator.

    CPN Tools' names and parameters: ``uniform(a, b)``, ``exponential(rate)``,
    ``normal(mean, variance)``, ``bernoulli(p)``, ``discrete(a, b)`` (integers, inclusive).
    """

    def __init__(self, generator: np.random.Generator, choices: np.random.Generator | None = None):
        self.generator = generator
        #: the stream of the simulator's choice among bindings (``generator`` unless given:
        #: forced draws replace ``generator`` and leave the choice its own stream)
        self.choices = generator if choices is None else choices
        self._buffer: list[float] = []
        self._next = 0

    def uniform(self, low: float, high: float) -> float:
        return float(self.generator.uniform(low, high))

    def exponential(self, rate: float) -> float:
        if not rate > 0:
            raise ValueError(f"exponential(rate) needs rate > 0, got {rate!r}")
        return float(self.generator.exponential(1.0 / rate))

    def normal(self, mean: float, variance: float) -> float:
        if variance < 0:
            raise ValueError(f"normal(mean, variance) needs variance >= 0, got {variance!r}")
        return float(self.generator.normal(mean, math.sqrt(variance)))

    def bernoulli(self, p: float) -> bool:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"bernoulli(p) needs 0 <= p <= 1, got {p!r}")
        return bool(self.generator.random() < p)

    def discrete(self, low: int, high: int) -> int:
        if low > high:
            raise ValueError(f"discrete(a, b) needs a <= b, got {low}, {high}")
        return int(self.generator.integers(low, high + 1))

    def delay(self, distribution: Distribution) -> float:
        return distribution.sample(self.generator)

    def choice_buffer(self) -> tuple[list[float], int]:
        """The uniform doubles buffered for :meth:`choose` and the index of the next one
        (an engine that draws the choice itself continues from there)."""
        return self._buffer, self._next

    def resume_choices(self, values: list[float] | None, next_index: int) -> None:
        """Continue :meth:`choose` from ``values[next_index]`` (``values`` None: the same
        buffer), after an engine drew from it."""
        if values is not None:
            self._buffer = values
        self._next = next_index

    def choose(self, n: int) -> int:
        """A uniform index in ``range(n)`` (the simulator's choice among bindings).

        Drawn from a buffer of uniform doubles refilled from the generator, because the
        choice happens at almost every firing and a NumPy call per draw would dominate.
        """
        if self._next >= len(self._buffer):
            self._buffer = self.choices.random(_CHOICE_BUFFER).tolist()
            self._next = 0
        u = self._buffer[self._next]
        self._next += 1
        return int(u * n)


def multiset_counts(value: Any) -> dict[Any, int]:
    """A multiset arc's value as ``token value -> count`` (counts >= 1, in the order the
    values first appear): a list or tuple counts its elements (CPN ML's ``'a ms = 'a
    list``), a dict (a ``collections.Counter``) gives counts >= 0.

    >>> multiset_counts(["fries", "cola", "fries"])
    {'fries': 2, 'cola': 1}
    >>> multiset_counts({"a": 0, "b": 2}), multiset_counts(())
    ({'b': 2}, {})
    """
    counts: dict[Any, int] = {}
    if isinstance(value, dict):
        for token, count in value.items():
            if type(count) is not int or count < 0:
                raise ValueError(f"a multiset's count must be an int >= 0, got {count!r} "
                                 f"for {token!r}")
            problem = limit_problem("marking_tokens", count)
            if problem is not None:
                raise ValueError(f"a multiset's count for {token!r}: {problem}")
            if count:
                counts[token] = count
        return counts
    if not isinstance(value, list | tuple):
        raise TypeError("a multiset arc's value must be a list, a tuple or a dict value -> "
                        f"count, got {type(value).__name__} {value!r}")
    for token in value:
        counts[token] = counts.get(token, 0) + 1
    return counts


class KeyedTokens(dict[Any, Any]):
    """An untimed place's tokens (``value -> count``) indexed by the values' first component.

    ``by_key[k]`` holds the values whose first component is ``k``, in the order they
    appeared on the place (an ordered set: a dict to ``None``). A binder such as ``(h, p)``
    on a queue's buffer, with ``h`` already bound by the queue's counters, then visits the
    one packet at position ``h`` instead of every queued packet, in the order a scan of the
    whole place would have found them. The simulator keeps the index up to date through
    ``fire_tracked``; ``CompiledNet.keyed_places`` says which places have one.

    >>> place = KeyedTokens({(0, "a"): 1, (1, "b"): 2})
    >>> place.by_key[1]
    {(1, 'b'): None}
    """

    __slots__ = ("by_key",)

    def __init__(self, tokens: dict[Any, Any] | None = None):
        super().__init__(tokens or {})
        self.by_key: dict[Any, dict[Any, None]] = {}
        for value in self:
            self.by_key.setdefault(value[0], {})[value] = None


@dataclass
class CompiledTransition:
    """The generated functions and metadata of one transition."""

    name: str
    index: int
    priority: int
    variables: tuple[str, ...]
    enumerate: EnumerateFn
    fire: FireFn
    reads_places: tuple[int, ...]
    writes_places: tuple[int, ...]
    source: str = field(repr=False)
    #: places an input or read arc takes a fixed number (>= 1) of tokens from: while one of
    #: them is empty the transition has no binding, whatever the rest of the marking
    required_places: tuple[int, ...] = ()
    #: like ``enumerate``, possibly without bindings after the earliest future one
    enumerate_due: Callable[[Marking, float, list[bool]], list[tuple[float, Binding]]] = \
        field(default=None, repr=False)  # type: ignore[assignment]
    #: like ``fire``; returns ``None``, or with ``cond_places`` a mask: bit ``i`` set when
    #: the firing wrote ``cond_places[i]``
    fire_tracked: Callable[..., int | None] = field(default=None, repr=False)  # type: ignore[assignment]
    #: the places among ``writes_places`` that only conditional output arcs write
    cond_places: tuple[int, ...] = ()
    #: ``gate(M)``: from when the arcs on ``gate_places`` (fixed tokens: ``()`` from a lock,
    #: an inhibitor without inscription) are satisfied, ``None`` when they are not.
    #: ``enumerate_due`` leaves those arcs out; ``enumerate`` keeps them.
    gate: Callable[[Marking], float | None] | None = field(default=None, repr=False)
    gate_places: tuple[int, ...] = ()
    #: transitions with equal keys have the same gate (tested once per change)
    gate_key: Any = field(default=None, repr=False)
    #: ``cut[0]``: whether the last ``enumerate_due`` stopped early (left bindings out)
    cut: list[bool] = field(default_factory=lambda: [False], repr=False)
    #: the variables known to hold records (their places' or free colour sets are record
    #: sets), each with its record's field names in order: a field read ``v.f`` is the
    #: record's item (the native engine reads it so)
    records: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: whether the guard reads the clock (``now``, CPN ML's ``time()``): ``enumerate_due``
    #: tests it at the time each binding would fire, ``max(now, its readiness)``, and the
    #: engines enumerate the transition again whenever the clock advances
    reads_clock: bool = False


@dataclass
class CompiledNet:
    """A net compiled for the engines: place layout, transitions and dependencies."""

    net: PetriNet
    place_names: tuple[str, ...]
    place_index: dict[str, int]
    timed: tuple[bool, ...]
    transitions: tuple[CompiledTransition, ...]
    dependents: tuple[tuple[int, ...], ...]  # place index -> transitions to re-check
    affected: tuple[tuple[int, ...], ...] = ()  # transition -> transitions to re-check after it

    #: the distinct gates: ``(gate function, its places, the transitions it gates)``
    gates: tuple[tuple[Callable[[Marking], float | None], tuple[int, ...], tuple[int, ...]],
                 ...] = ()
    gate_of: tuple[int, ...] = ()  # transition -> index in ``gates``, -1 without a gate
    #: transition -> transitions whose ``enumerate_due`` places it writes (gate places aside)
    body_affected: tuple[tuple[int, ...], ...] = ()
    gate_affected: tuple[tuple[int, ...], ...] = ()  # transition -> gates to re-test after it
    #: gate -> the transitions it guards whose ``enumerate_due`` may stop early (they read
    #: a timed place besides the gate): see ``Simulator._refresh``
    gate_cut: tuple[tuple[int, ...], ...] = ()
    #: untimed places whose tokens the simulator keeps as :class:`KeyedTokens`: a binder
    #: of some ``enumerate_due`` names their first component already bound
    keyed_places: tuple[int, ...] = ()
    #: the guard partitions the native engine enumerates together
    #: (:mod:`~tcpn.petrinets.engine.cython_code.groups`): per group, its ``_enumerate_due`` and its
    #: members; the Python engine, the reference, has none
    enumerate_groups: tuple[tuple[Callable[..., Any], tuple[int, ...]], ...] = ()
    #: transition -> its index in ``enumerate_groups``, -1 without one (empty: no groups)
    group_of: tuple[int, ...] = ()

    #: engine -> the native build :func:`~tcpn.petrinets.engine.native.select_engine` chose
    #: for this net: a net run many times in one process (replications, a statistical
    #: check's thousands of short runs) looks its modules up once (4 ms a run, measured)
    selected: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        #: whether the net holds reference cells (:mod:`tcpn.petrinets.cells`): a guard or
        #: an arc may read one that any firing writes, so every transition is enumerated
        #: again after each firing, whatever places it touched
        self.volatile = any(isinstance(v, Cell) for v in self.net.declarations.values())
        everyone = tuple(range(len(self.transitions)))
        self.affected = tuple(
            everyone if self.volatile else
            tuple(sorted({d for p in t.writes_places for d in self.dependents[p]}))
            for t in self.transitions
        )
        keys: dict[Any, int] = {}
        gates: list[tuple[Callable[[Marking], float | None], tuple[int, ...], list[int]]] = []
        gate_of = []
        for t in self.transitions:
            if t.gate is None:
                gate_of.append(-1)
                continue
            g = keys.setdefault(t.gate_key, len(gates))
            if g == len(gates):
                gates.append((t.gate, t.gate_places, []))
            gates[g][2].append(t.index)
            gate_of.append(g)
        self.gates = tuple((fn, places, tuple(members)) for fn, places, members in gates)
        self.gate_of = tuple(gate_of)
        body_readers: list[set[int]] = [set() for _ in self.place_names]
        for t in self.transitions:
            for p in set(t.reads_places) - set(t.gate_places):
                body_readers[p].add(t.index)
        self._body_readers = body_readers
        #: transition -> mask -> :meth:`affected_by`'s answer, filled as masks occur (the
        #: simulator's loop reads it directly and calls ``affected_by`` on a miss)
        self.by_mask: list[dict[int, tuple[int, ...]]] = [{} for _ in self.transitions]
        self.body_affected = tuple(
            everyone if self.volatile else
            tuple(sorted({d for p in t.writes_places for d in body_readers[p]}))
            for t in self.transitions
        )
        # a member whose guard reads the clock tested it at a time its gate's readiness
        # may have changed: its ``cut`` flag is always set, and it is enumerated again
        self.gate_cut = tuple(
            tuple(t for t in members
                  if self.transitions[t].reads_clock
                  or any(self.timed[p] for p in set(self.transitions[t].reads_places)
                         - set(self.transitions[t].gate_places)))
            for _, _, members in self.gates
        )
        #: the transitions whose guard reads the clock: enumerated again whenever the
        #: clock advances (besides the firings that touch their places)
        self.clock_readers = tuple(t.index for t in self.transitions if t.reads_clock)
        self.gate_affected = tuple(
            tuple(g for g, (_, places, _) in enumerate(self.gates)
                  if set(places) & set(t.writes_places))
            for t in self.transitions
        )

    def affected_by(self, t: int, mask: int | None) -> tuple[int, ...]:
        """The transitions to enumerate again after ``t`` fired, ``fire_tracked`` gave ``mask``.

        ``body_affected[t]`` without the readers of the conditional places (see
        ``CompiledTransition.cond_places``) whose bit is clear: a place the firing left
        untouched leaves their bindings as they were. ``mask=None``: ``body_affected[t]``.
        """
        if mask is None or self.volatile:
            return self.body_affected[t]
        cached = self.by_mask[t].get(mask)
        if cached is None:
            transition = self.transitions[t]
            skipped = {p for i, p in enumerate(transition.cond_places) if not mask >> i & 1}
            cached = self.by_mask[t][mask] = tuple(sorted(
                {d for p in transition.writes_places if p not in skipped
                 for d in self._body_readers[p]}))
        return cached

    def initial_marking(self, keyed: bool = False) -> Marking:
        """A fresh copy of the net's initial marking in compiled form; with ``keyed``, the
        places of ``keyed_places`` as :class:`KeyedTokens` (what ``enumerate_due`` and
        ``fire_tracked`` expect). Refused while an initial marking is still to be drawn
        (:mod:`tcpn.petrinets.engine.initial_draws`: a simulator draws it before it compiles)."""
        from tcpn.petrinets.engine.initial_draws import undrawn_error

        undrawn = undrawn_error(self.net, f"net {self.net.name}")
        if undrawn is not None:
            raise undrawn
        marking: Marking = []
        for name, timed in zip(self.place_names, self.timed, strict=True):
            place: dict[Any, Any] = {}
            for token in self.net.places[name].initial_tokens:
                if timed:
                    bisect.insort(place.setdefault(token.value, []), float(token.time))
                else:
                    place[token.value] = place.get(token.value, 0) + 1
            marking.append(place)
        if keyed:
            for p in self.keyed_places:
                marking[p] = KeyedTokens(marking[p])
        return marking

    def timestamp_order(self, marking: Marking) -> tuple[list[bool], list[float]]:
        """For each place: are its values in timestamp order, and the latest timestamp.

        The simulator keeps these up to date through ``fire_tracked``; see
        ``enumerate_due``. Untimed places count as in order.
        """
        in_order, latest = [], []
        for timed, place in zip(self.timed, marking, strict=True):
            earliest = [times[0] for times in place.values()] if timed else []
            in_order.append(all(a <= b for a, b in itertools.pairwise(earliest)))
            latest.append(max((t for times in place.values() for t in times), default=-math.inf)
                          if timed else -math.inf)
        return in_order, latest

    @functools.cached_property
    def fingerprint(self) -> str:
        """:func:`~tcpn.petrinets.engine.result.net_fingerprint` of the net, computed once
        (every run's provenance names it; 1.4 ms of a short run on a small net, measured)."""
        from tcpn.petrinets.engine.result import net_fingerprint

        return net_fingerprint(self.net)

    def transition(self, name: str) -> CompiledTransition:
        """The compiled transition called ``name``."""
        for t in self.transitions:
            if t.name == name:
                return t
        raise InputError(f"no transition named {name!r} in net {self.net.name}")


def _clock_renamed(guard: Inscription) -> str:
    """The source of ``guard`` reading the clock from ``_gnow`` instead of ``now``."""

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.copy_location(ast.Name("_gnow", node.ctx), node) \
                if node.id == "now" else node

    return ast.unparse(Rename().visit(ast.parse(guard.text, mode="eval")).body)


def _tuple_components(colour: ColourSet | None, n: int) -> list[ColourSet | None]:
    """The colour sets of the ``n`` components of a product or record, when known."""
    if isinstance(colour, ProductSet) and len(colour.components) == n:
        return list(colour.components)
    if isinstance(colour, RecordSet) and len(colour.fields) == n:
        return [cs for _, cs in colour.fields]
    return [None] * n


#: The nets this process compiled last, by fingerprint, name and ``keyed``: a net built
#: again for the next replication of a scenario (the same places, inscriptions,
#: declarations and captured values) is compiled once (0.2-0.35 s of a 0.6-1.5 s run of
#: the reference dumbbell, measured). A compiled net keeps no run's state, so runs may
#: share it; the name is in the key because runs report it. A net with reference cells
#: is compiled afresh: its runs write the cells of the net they were given.
_COMPILED: collections.OrderedDict[tuple[str, str, bool], CompiledNet] = \
    collections.OrderedDict()
_COMPILED_KEPT = 4


def compile_net(net: PetriNet, keyed: bool = True) -> CompiledNet:
    """Check ``net`` and generate its enabling and firing code.

    Each transition's generated source is compiled once per machine: its code object
    comes from :mod:`~tcpn.petrinets.engine.codecache` when a process compiled that source before.
    A net equal to one of the last few this process compiled (its
    :func:`~tcpn.petrinets.engine.result.net_fingerprint`) gets that one's compiled net.

    ``keyed=False`` leaves out the :class:`KeyedTokens` indexes (every binder scans its
    place): the same firings, the reference the tests compare the indexed code with.

    Raises :class:`InputError` naming the element for unknown variables, random
    functions in guards and input arcs, ``now`` in input arcs, and delays on untimed
    places. A guard may read ``now``: see ``CompiledTransition.reads_clock``.
    """
    from tcpn.petrinets.engine.result import net_fingerprint

    if any(isinstance(value, Cell) for value in net.declarations.values()):
        # its code writes this net's own cells, which its runs leave for the user to read
        return _compile_net(net, keyed)
    fingerprint = net_fingerprint(net)
    key = (fingerprint, net.name, keyed)
    known = _COMPILED.get(key)
    if known is not None:
        _COMPILED.move_to_end(key)
        return known
    compiled = _compile_net(net, keyed)
    compiled.__dict__["fingerprint"] = fingerprint  # the cached property, known already
    _COMPILED[key] = compiled
    while len(_COMPILED) > _COMPILED_KEPT:
        _COMPILED.popitem(last=False)
    return compiled


def _compile_net(net: PetriNet, keyed: bool) -> CompiledNet:
    place_names = tuple(net.places)
    place_index = {n: i for i, n in enumerate(place_names)}
    timed = tuple(net.places[n].colour.is_timed for n in place_names)
    compiled = []
    dependents: list[set[int]] = [set() for _ in place_names]
    arcs_of: dict[str, list[Arc]] = {name: [] for name in net.transitions}
    for arc in net.arcs:  # net.arcs_of per transition would be quadratic in big nets
        arcs_of.setdefault(arc.transition, []).append(arc)
    compilers: list[TransitionCompiler | None] = []
    for index, name in enumerate(net.transitions):
        try:
            compilers.append(TransitionCompiler(net, name, index, place_index, timed,
                                                 arcs_of[name]))
        except InputError:  # raised again below, in transition order
            compilers.append(None)
    keyed_places = {p for c in compilers if c is not None for p in c.keyed_binders()} \
        if keyed else set()
    for index, name in enumerate(net.transitions):
        compiler = compilers[index] or TransitionCompiler(net, name, index, place_index,
                                                           timed, arcs_of[name])
        compiler.keyed = keyed_places
        ct = compiler.compile()
        compiled.append(ct)
        for p in ct.reads_places:
            dependents[p].add(index)
    return CompiledNet(
        net, place_names, place_index, timed, tuple(compiled),
        tuple(tuple(sorted(d)) for d in dependents),
        keyed_places=tuple(sorted(keyed_places)),
    )


class CodeLines:
    """A tiny indented source builder."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _colour_test(colour: ColourSet, var: str, namespace: dict[str, Any], depth: int = 0) -> str:
    """A Python expression that is true when ``var`` is a member of ``colour``.

    Generated inline so that checking every produced token stays cheap; objects the
    expression needs (record types, enumeration sets, unknown colour sets) are put into
    ``namespace`` under fresh names.
    """

    def register(value: Any) -> str:
        name = f"_colour{len(namespace)}"
        namespace[name] = value
        return name

    if isinstance(colour, IntSet):
        low = "" if colour.low is None else f" and {colour.low} <= {var}"
        high = "" if colour.high is None else f" and {var} <= {colour.high}"
        return f"(type({var}) is int{low}{high})"
    if isinstance(colour, UnitSet):
        return f"({var} == ())"
    if isinstance(colour, BoolSet):
        return f"(type({var}) is bool)"
    if isinstance(colour, StringSet):
        return f"(type({var}) is str)"
    if isinstance(colour, RealSet):
        # v - v == 0.0 is false for inf and nan
        return f"((type({var}) is float and {var} - {var} == 0.0) or type({var}) is int)"
    if isinstance(colour, EnumSet):
        return f"(type({var}) is str and {var} in {register(frozenset(colour.values))})"
    if isinstance(colour, ProductSet):
        parts = [f"type({var}) is tuple", f"len({var}) == {len(colour.components)}"]
        parts += [_colour_test(c, f"{var}[{i}]", namespace, depth)
                  for i, c in enumerate(colour.components)]
        return "(" + " and ".join(parts) + ")"
    if isinstance(colour, RecordSet):
        # the record type is a named tuple: fields by position are cheaper than by name
        parts = [f"type({var}) is {register(colour.record_type)}"]
        parts += [_colour_test(c, f"{var}[{i}]", namespace, depth)
                  for i, (_name, c) in enumerate(colour.fields)]
        return "(" + " and ".join(parts) + ")"
    if isinstance(colour, ListSet):
        element = f"_e{depth}"
        parts = [f"type({var}) is tuple"]
        if colour.max_length is not None:
            parts.append(f"len({var}) <= {colour.max_length}")
        parts.append(f"(not {var} or all("
                     f"{_colour_test(colour.element, element, namespace, depth + 1)} "
                     f"for {element} in {var}))")
        return "(" + " and ".join(parts) + ")"
    return f"{register(colour)}.contains({var})"


#: what :meth:`TransitionCompiler._constant` returns for an expression that is not one
_UNKNOWN = object()


def _immutable(value: Any) -> bool:
    """Whether ``value`` is an int, float, bool, string or a tuple of them (a declaration
    holding one cannot change between compilation and firing)."""
    if type(value) is tuple:
        return all(_immutable(v) for v in value)
    return type(value) in (int, float, bool, str)


#: the nodes whose ``ast.literal_eval`` can be an immutable value (:func:`_immutable`):
#: of the others it accepts, lists, sets and dicts are mutable, ``set()`` too and
#: ``BinOp`` gives complex numbers only; every other node is refused
_LITERAL_NODES = (ast.Constant, ast.Tuple, ast.UnaryOp, ast.Expression)


@functools.lru_cache(maxsize=1024)
def _compiled_test(test: str) -> CodeType:
    """``test``, a membership test's expression, compiled (a net tests the same few
    thousands of times: compiling them was a tenth of :func:`compile_net`)."""
    return compile(test, "<colour test>", "eval")


def _passes(colour: ColourSet, value: Any) -> bool:
    """Whether ``value`` passes the membership test the firing code would run."""
    namespace: dict[str, Any] = {}
    test = _colour_test(colour, "_x", namespace)
    try:
        # the generated test itself
        return bool(eval(_compiled_test(test), {**namespace, "_x": value}))
    except Exception:
        return False


def _implies(a: ColourSet, b: ColourSet) -> bool:
    """Whether every value passing ``a``'s membership test passes ``b``'s: the same test,
    integer bounds within ``b``'s, or an integer where ``b`` takes reals."""
    if _same_test(a, b):
        return True
    if type(a) is IntSet and type(b) is IntSet:
        return ((b.low is None or (a.low is not None and a.low >= b.low))
                and (b.high is None or (a.high is not None and a.high <= b.high)))
    return type(a) is IntSet and isinstance(b, RealSet)  # the real test takes ``int``


def _same_test(a: ColourSet, b: ColourSet) -> bool:
    """Whether members of ``a`` pass ``b``'s membership test (the same test: names and
    timedness aside, the tests are equal)."""
    if a == b:
        return True
    mine: dict[str, Any] = {}
    theirs: dict[str, Any] = {}
    return (_colour_test(a, "_x", mine) == _colour_test(b, "_x", theirs)
            and list(mine.values()) == list(theirs.values()))


class TransitionCompiler:
    """Compiles one transition of a net into the generated functions of a
    :class:`CompiledTransition` (binding enumeration, guard, firing); the C engine's code
    generator reuses its analysis of the arcs (binding order, which arcs bind)."""

    def __init__(self, net: PetriNet, name: str, index: int, place_index: dict[str, int],
                 timed: tuple[bool, ...], arcs: list[Arc] | None = None):
        self.net = net
        self.t = net.transitions[name]
        self.name = name
        self.index = index
        self.place_index = place_index
        self.timed = timed
        self.where = f"transition {name}"
        self.scope = net.scope_of(name)
        self.globals: dict[str, Any] = {
            "__builtins__": __builtins__,
            "_FiringError": FiringError,
            "_insort": bisect.insort,
            "_inf": math.inf,
            "_ONE_PASS": (None,),
            "_cut": [False],
            "_multiset": multiset_counts,
            "_count_bound": limits().marking_tokens,
        }
        self.globals.update(self.scope)
        self.arcs = net.arcs_of(name) if arcs is None else arcs
        self.declared = set(self.scope)
        # free variables: those of ``Transition.free_variables`` no input pattern binds
        patterns: set[str] = set()
        for arc in self.arcs:
            if arc.kind in (ArcKind.INPUT, ArcKind.READ) and isinstance(arc.count, int) \
                    and not arc.multiset:
                patterns |= Inscription.parse(arc.inscription or "", arc.where).pattern_variables
        self.free = {v: c for v, c in self.t.free_variables.items()
                     if v not in patterns and v not in self.declared}
        #: the net's places kept as ``KeyedTokens`` by the simulator (see ``keyed_binders``)
        self.keyed: AbstractSet[int] = frozenset()

    # -- checks ---------------------------------------------------------------------------
    def _check_names(self, ins: Inscription, bound: set[str], where: str, *,
                     firing: bool, clock: bool = False) -> None:
        unknown = ins.free_variables(self.declared) - bound
        if unknown:
            raise InputError(
                f"{where}: unknown variable(s) {', '.join(sorted(unknown))} in {ins.text!r}; "
                f"bound here: {', '.join(sorted(bound)) or 'none'}"
            )
        if not firing:
            random_used = (ins.names & RANDOM_FUNCTIONS) - self.declared
            if random_used:
                raise InputError(
                    f"{where}: random function {sorted(random_used)[0]!r} can't be used here: "
                    "enabling must depend on the marking only (draw in an output arc, a "
                    "delay or a code action)"
                )
            if "now" in ins.names and "now" not in self.declared and not clock:
                raise InputError(
                    f"{where}: 'now' can't be used here (CPN ML's time()): only a guard may "
                    "read the clock (the engines test a guard again as the clock advances, "
                    "not an arc's tokens)"
                )

    @property
    def reads_clock(self) -> bool:
        """Whether the guard reads the clock (``now``, not a declaration of that name)."""
        if not self.t.guard or "now" in self.declared:
            return False
        return "now" in Inscription.parse(self.t.guard, f"guard of {self.where}").names

    # -- compilation ----------------------------------------------------------------------
    def compile(self) -> CompiledTransition:
        gate_places = self.gated_places()
        cond_places = self._cond_places()
        enum_source, bound, needs = self._compile_enumerate(due=False)
        due_source, _, _ = self._compile_enumerate(due=True, skip=gate_places)
        sources = [
            enum_source, due_source,
            self._compile_fire(bound, needs, tracked=False),
            self._compile_fire(bound, needs, tracked=True, cond_places=cond_places),
        ]
        gate_source = self._compile_gate(gate_places) if gate_places else None
        if gate_source is not None:
            sources.append(gate_source)
        source = "\n".join(sources)
        namespace = self.globals
        exec(compile_cached(source, f"<tcpn transition {self.name}>"), namespace)
        reads = sorted({self.place_index[a.place] for a in self.arcs
                        if a.kind in (ArcKind.INPUT, ArcKind.READ, ArcKind.INHIBITOR)})
        writes = sorted({self.place_index[a.place] for a in self.arcs
                         if a.kind in (ArcKind.INPUT, ArcKind.OUTPUT, ArcKind.RESET)})
        gate_key: Any = None
        if gate_source is not None:
            # gates over constants only (``()``, ``1``) are shared by every transition
            # that tests the same tokens; others may read module-specific declarations
            gate_arcs = [a for a in self.arcs if self.place_index[a.place] in gate_places
                         and a.kind in (ArcKind.INPUT, ArcKind.READ, ArcKind.INHIBITOR)]
            literal = all(a.inscription is None
                          or Inscription.parse(a.inscription, a.where).is_constant
                          for a in gate_arcs)
            gate_key = (tuple((a.kind.value, a.place, a.inscription, a.count, a.multiset)
                              for a in gate_arcs)
                        if literal else ("transition", self.index))
        return CompiledTransition(
            self.name, self.index, self.t.priority, tuple(bound),
            namespace["_enumerate"], namespace["_fire"], tuple(reads), tuple(writes), source,
            enumerate_due=namespace["_enumerate_due"], fire_tracked=namespace["_fire_tracked"],
            required_places=tuple(sorted({
                self.place_index[a.place] for a in self.arcs
                if a.kind in (ArcKind.INPUT, ArcKind.READ) and isinstance(a.count, int)
                and not a.multiset and self.place_index[a.place] not in gate_places
            })),
            gate=namespace.get("_gate") if gate_source is not None else None,
            gate_places=tuple(sorted(gate_places)),
            gate_key=gate_key,
            cut=namespace["_cut"],
            records=tuple(sorted((name, tuple(f for f, _c in colour.fields))
                                 for name, colour in self.known_colours.items()
                                 if isinstance(colour, RecordSet))),
            cond_places=cond_places,
            reads_clock=self.reads_clock,
        )

    def keyed_binders(self) -> set[int]:
        """The untimed places on which ``enumerate_due`` binds a tuple pattern whose first
        component is already known (a bound variable, a declaration or a constant): a
        queue's ``(h, p)`` after its counters bound ``h``. An index by that component
        (:class:`KeyedTokens`) finds the matching tokens without a scan of the place.

        A net with errors has none here; :meth:`compile` reports the errors.
        """
        try:
            order = self.input_arcs_in_binding_order(self.gated_places())
        except InputError:
            return set()
        bound = set(self.free)
        found = set()
        for arc in order:
            p = self.place_index[arc.place]
            if not self.is_binder(arc, bound):
                continue
            ins = Inscription.parse(arc.inscription or "", arc.where)
            tree = ins.tree
            if (not self.timed[p] and isinstance(tree, ast.Tuple) and tree.elts
                    and self._shape_guaranteed(self.net.places[arc.place].colour,
                                               len(tree.elts))
                    and self.key_source(tree.elts[0], bound) is not None):
                found.add(p)
            bound |= ins.pattern_variables
        return found

    def key_source(self, element: Any, bound: AbstractSet[str]) -> str | None:
        """Python source of a pattern element already known before its binder, or None."""
        if isinstance(element, ast.Name) and (element.id in bound or element.id in self.declared):
            return element.id
        if isinstance(element, ast.Constant):
            return repr(element.value)
        return None

    def _cond_places(self) -> tuple[int, ...]:
        """The places only conditional output arcs (``when``) of this transition write."""
        always = {self.place_index[a.place] for a in self.arcs
                  if a.kind in (ArcKind.INPUT, ArcKind.RESET)
                  or (a.kind is ArcKind.OUTPUT and a.when is None)}
        return tuple(sorted({self.place_index[a.place] for a in self.arcs
                             if a.kind is ArcKind.OUTPUT and a.when is not None} - always))

    def gated_places(self) -> set[int]:
        """Places all of whose input, read and inhibitor arcs name fixed tokens.

        Such arcs (``()`` from a lock, an inhibitor without inscription, a constant
        value) take no part in binding variables: whether they are satisfied, and from
        when, is the same for every binding. The simulator tests them once per change
        of those places (the *gate*) instead of re-enumerating the bindings.
        """
        closed: dict[int, bool] = {}
        for arc in self.arcs:
            if arc.kind not in (ArcKind.INPUT, ArcKind.READ, ArcKind.INHIBITOR):
                continue
            p = self.place_index[arc.place]
            ok = isinstance(arc.count, int) and (
                arc.inscription is None
                or not Inscription.parse(arc.inscription, arc.where).free_variables(
                    self.declared)
            )
            closed[p] = closed.get(p, True) and ok
        return {p for p, ok in closed.items() if ok}

    def _compile_gate(self, gate_places: set[int]) -> str:
        """Source of ``_gate(M)``: the time from which the arcs on ``gate_places`` are
        satisfied (``-inf`` when no timed token is involved), or ``None``."""
        code = CodeLines()
        code.line("def _gate(M):")
        code.depth += 1
        for p in sorted(gate_places):
            code.line(f"_p{p} = M[{p}]")
        code.line("for _once in _ONE_PASS:")
        code.depth += 1
        code.line("_ready = -_inf")
        needs: dict[int, list[tuple[str, str, Arc]]] = {}
        arcs = [a for a in self.arcs if a.kind in (ArcKind.INPUT, ArcKind.READ)
                and self.place_index[a.place] in gate_places]
        for n_arc, arc in enumerate(arcs):
            ins = Inscription.parse(arc.inscription or "", arc.where)
            value_var = f"_v{n_arc}"
            self.emit_eval(code, value_var, ins.text, arc.where, [], arc)
            needs.setdefault(self.place_index[arc.place], []).append(
                (value_var, str(arc.count), arc))
        for p, items in needs.items():
            self.emit_availability(code, p, items, {})
        for arc in self.arcs:
            if arc.kind is ArcKind.INHIBITOR and self.place_index[arc.place] in gate_places:
                self.emit_inhibitor(code, arc, [])
        code.line("return _ready")
        code.depth -= 1
        code.line("return None")
        return code.text()

    def input_arcs_in_binding_order(self, skip: AbstractSet[int] = frozenset()) -> list[Arc]:
        """Input and read arcs (but those on ``skip``) in the order the enumerator visits them.

        The order does not change the set of bindings, only the work to find them:
        binders on untimed places come first (their guards and tests prune early, like a
        queue's counters before the packets on a wire), then binders on timed places,
        whose loops ``enumerate_due`` can cut short; every other arc (an expression, a
        pattern whose variables are bound) comes as soon as its variables are bound.
        The names are checked in arc order beforehand (a timed binder first, as
        ``docs/semantics.md`` describes), so the order never turns an error into a net.
        """
        input_like = [a for a in self.arcs if a.kind in (ArcKind.INPUT, ArcKind.READ)]
        for i, arc in enumerate(input_like):
            if self.timed[self.place_index[arc.place]] and self.is_binder(arc, set()):
                input_like = [arc, *input_like[:i], *input_like[i + 1:]]
                break
        bound: set[str] = set(self.free)
        for arc in input_like:
            if self.is_binder(arc, bound):
                bound |= Inscription.parse(arc.inscription or "", arc.where).pattern_variables
            else:
                self._check_names(Inscription.parse(arc.inscription or "", arc.where), bound,
                                  arc.where, firing=False)
            if isinstance(arc.count, str):
                self._check_names(Inscription.parse(arc.count, arc.where), bound,
                                  f"count of {arc.where}", firing=False)
        remaining = [a for a in input_like if self.place_index[a.place] not in skip]
        order: list[Arc] = []
        bound = set(self.free)
        while remaining:
            tests = [a for a in remaining if not self.is_binder(a, bound)
                     and not self._arc_names(a) - bound]
            if tests:
                order += tests
                remaining = [a for a in remaining if a not in tests]
                continue
            binders = [a for a in remaining if self.is_binder(a, bound)]
            pick = next((a for a in binders if not self.timed[self.place_index[a.place]]),
                        binders[0])
            order.append(pick)
            remaining.remove(pick)
            bound |= Inscription.parse(pick.inscription or "", pick.where).pattern_variables
        return order

    def _arc_names(self, arc: Arc) -> frozenset[str]:
        """The transition variables an arc's inscription and count read."""
        names = Inscription.parse(arc.inscription or "", arc.where).free_variables(self.declared)
        if isinstance(arc.count, str):
            names |= Inscription.parse(arc.count, arc.where).free_variables(self.declared)
        return names

    def is_binder(self, arc: Arc, bound: set[str]) -> bool:
        ins = Inscription.parse(arc.inscription or "", arc.where)
        return (ins.is_pattern and isinstance(arc.count, int) and not arc.multiset
                and bool(ins.pattern_variables - bound - self.declared))

    def _compile_enumerate(
        self, due: bool, skip: AbstractSet[int] = frozenset()
    ) -> tuple[str, list[str], dict[int, list[tuple[str, str, Arc]]]]:
        """Source of ``_enumerate(M)`` or, with ``due``, of ``_enumerate_due(M, now, inord)``.

        The due variant leaves out the arcs on the gate places ``skip`` (the simulator
        tests those with ``_gate``), and it may leave out bindings that become ready after
        the earliest future binding it found (``_rstar``): in every binder loop over a
        timed place that holds its values in timestamp order (``inord[p]``), it stops at
        the first value later than both the clock and ``_rstar`` (every binding from the
        values after it would be later still). The simulator re-enumerates a transition
        before the clock can pass ``_rstar``, so nothing is lost. With ``now = inf`` it
        enumerates completely.
        """
        bound: list[str] = []
        code = CodeLines()
        code.line("def _enumerate_due(M, now, _inord):" if due else "def _enumerate(M):")
        code.depth += 1
        code.line("_out = []")
        input_like = self.input_arcs_in_binding_order(skip)
        # only loops over timed places can stop early
        early = due and any(self.timed[self.place_index[a.place]] for a in input_like)
        if early:
            code.line("_rstar = _inf")
            code.line("_cut[0] = False")
        if due and self.reads_clock:  # enumerated again at every clock advance and gate change
            code.line("_cut[0] = True")
        for p in sorted({self.place_index[a.place] for a in self.arcs
                         if a.kind in (ArcKind.INPUT, ArcKind.READ, ArcKind.INHIBITOR)}
                        - skip):
            code.line(f"_p{p} = M[{p}]")
        for variable, colour in self.free.items():  # every member, outermost
            self.globals[f"_members_{variable}"] = tuple(colour.members() or ())
            code.line(f"for {variable} in _members_{variable}:")
            code.depth += 1
            bound.append(variable)
        guard = Inscription.parse(self.t.guard, f"guard of {self.where}") if self.t.guard else None
        clock_guard = guard if guard is not None and self.reads_clock else None
        if clock_guard is not None:  # tested last, once the binding's readiness is known
            guard = None
        # a guard naming no variable, or only free ones (bound by the loops above), is
        # tested before any arc: an input arc's expression may hold only where it holds
        early_guard = guard is not None and not guard.free_variables(self.declared) - set(bound)
        if not (input_like and self.is_binder(input_like[0], set())) or early_guard:
            # a one-pass loop so that a failed test before any binder loop can `continue`
            code.line("for _once in _ONE_PASS:")
            code.depth += 1
        guard_done = guard is None
        if guard is not None and early_guard:
            self._check_names(guard, set(bound), f"guard of {self.where}", firing=False)
            self._emit_guard(code, guard.text, bound)
            guard_done = True
        # needs[place] = list of (value_expr, count_expr, arc) for input and read arcs
        needs: dict[int, list[tuple[str, str, Arc]]] = {}
        #: binder value variable -> the variable holding its timestamps (a timed place's
        #: loop takes them with the value: one hash of the value less per token and use)
        binders: dict[str, str | None] = {}
        for n_arc, arc in enumerate(input_like):
            ins = Inscription.parse(arc.inscription or "", arc.where)
            p = self.place_index[arc.place]
            value_var = f"_v{n_arc}"
            if self.is_binder(arc, set(bound)):
                # a binder: try every distinct token value of the place
                fifo = early and self.timed[p]
                if fifo:
                    code.line(f"_fifo{n_arc} = _inord[{p}]")
                key = (self.key_source(ins.tree.elts[0], set(bound))
                       if due and p in self.keyed and isinstance(ins.tree, ast.Tuple)
                       else None)
                times = f"_tv{n_arc}" if self.timed[p] and key is None else None
                if key is not None:  # KeyedTokens: the tokens with that first component
                    code.line(f"for {value_var} in _p{p}.by_key.get({key}, ()):")
                elif times is not None:
                    code.line(f"for {value_var}, {times} in _p{p}.items():")
                else:
                    code.line(f"for {value_var} in _p{p}:")
                code.depth += 1
                if fifo:
                    code.line(f"if _fifo{n_arc}:")
                    code.line(f"    _et = {times or f'_p{p}[{value_var}]'}[0]")
                    code.line("    if _et > now and _et > _rstar: _cut[0] = True; break")
                binders[value_var] = times
                new_vars = ins.pattern_variables - set(bound) - self.declared
                self.emit_match(code, ins.tree, value_var, set(bound),
                                 self.net.places[arc.place].colour)
                bound.extend(sorted(new_vars, key=lambda v: ins.text.find(v)))
            else:
                self._check_names(ins, set(bound), arc.where, firing=False)
                self.emit_eval(code, value_var, ins.text, arc.where, bound, arc)
            count = arc.count if isinstance(arc.count, int) else f"({arc.count})"
            if isinstance(arc.count, str):
                self._check_names(Inscription.parse(arc.count, arc.where), set(bound),
                                  f"count of {arc.where}", firing=False)
            needs.setdefault(p, []).append((value_var, str(count), arc))
            if (not guard_done and guard is not None
                    and not guard.free_variables(self.declared) - set(bound)):
                self._check_names(guard, set(bound), f"guard of {self.where}", firing=False)
                self._emit_guard(code, guard.text, bound)
                guard_done = True
        if guard is not None and not guard_done:
            # its variables bound by the free variables' loops alone, no binder arc after
            # them (a transition without input arcs, or whose only ones are on gate places,
            # which the due variant leaves to ``_gate``): tested here, once they are bound
            self._check_names(guard, set(bound), f"guard of {self.where}", firing=False)
            self._emit_guard(code, guard.text, bound)
        # availability and readiness of input/read tokens
        code.line("_ready = -_inf")
        for p, items in needs.items():
            self.emit_availability(code, p, items, binders)
        for arc in self.arcs:
            if arc.kind is ArcKind.INHIBITOR and self.place_index[arc.place] not in skip:
                self.emit_inhibitor(code, arc, bound)
        if clock_guard is not None:
            self._check_names(clock_guard, set(bound), f"guard of {self.where}",
                              firing=False, clock=True)
            # the clock at which the binding would fire (``_enumerate``, which knows no
            # clock, tests it at the binding's readiness)
            code.line("_gnow = _ready if _ready > now else now" if due else "_gnow = _ready")
            self._emit_guard(code, _clock_renamed(clock_guard), bound, "_gnow")
        if early:
            code.line("if now < _ready < _rstar: _rstar = _ready")
        binding_tuple = "(" + "".join(f"{v}, " for v in bound) + ")"
        code.line(f"_out.append((_ready, {binding_tuple}))")
        code.depth = 1
        code.line("return _out")
        return code.text(), bound, needs

    def binding_dict_source(self, bound: list[str]) -> str:
        return "{" + ", ".join(f"{v!r}: {v}" for v in bound) + "}"

    @staticmethod
    def _shape_guaranteed(colour: ColourSet | None, n: int) -> bool:
        """Whether every member of ``colour`` is a tuple of length ``n``."""
        if isinstance(colour, ProductSet):
            return len(colour.components) == n
        return isinstance(colour, RecordSet) and len(colour.fields) == n

    def emit_match(self, code: CodeLines, tree: Any, value: str, already: set[str],
                    colour: ColourSet | None = None) -> None:
        """Match ``value`` (a member of ``colour`` when known) against a pattern.

        A failed match ``continue``s the enclosing loop.
        """

        if isinstance(tree, ast.Name):
            if tree.id in already or tree.id in self.declared:
                code.line(f"if {value} != {tree.id}: continue")
            else:
                code.line(f"{tree.id} = {value}")
                already.add(tree.id)
        elif isinstance(tree, ast.Constant):
            code.line(f"if {value} != {tree.value!r}: continue")
        else:
            n = len(tree.elts)
            if not self._shape_guaranteed(colour, n):
                code.line(f"if not isinstance({value}, tuple) or len({value}) != {n}: continue")
            inner = _tuple_components(colour, n)
            names = [e.id for e in tree.elts if isinstance(e, ast.Name)]
            if n and len(names) == n and len(set(names)) == n and not (set(names) & already) \
                    and not (set(names) & self.declared):
                code.line(", ".join(names) + f", = {value}")
                already.update(names)
                return
            for i, elt in enumerate(tree.elts):
                self.emit_match(code, elt, f"{value}[{i}]", already, inner[i])

    def emit_eval(self, code: CodeLines, var: str, expr: str, where: str, bound: list[str],
                   arc: Arc | None = None) -> None:
        """``var = expr``, an error naming ``where``; for a multiset ``arc``, ``var`` holds
        its ``value -> count`` and each value is tested against the place's colour set (a
        value outside it is an error, as CPN Tools' type check would have it, not a binding
        that waits for a token that cannot come)."""
        multiset = arc is not None and arc.multiset
        code.line("try:")
        code.line(f"    {var} = _multiset({expr})" if multiset else f"    {var} = {expr}")
        code.line("except Exception as _e:")
        binding = self.binding_dict_source(bound)
        code.line(f"    raise _FiringError({where!r}, {binding}, _e) from _e")
        if multiset:
            assert arc is not None
            self._emit_multiset_test(code, var, arc, self.binding_dict_source(bound))

    def _emit_multiset_test(self, code: CodeLines, var: str, arc: Arc, binding: str) -> None:
        """Test each value of multiset ``var`` (``value -> count``) against ``arc``'s
        place's colour set, an error naming the arc (its place and transition)."""
        colour = self.net.places[arc.place].colour
        code.line(f"for _mv in {var}:")
        code.line(f"    if not {_colour_test(colour, '_mv', self.globals)}:")
        why = f" is not of place {arc.place}'s colour set {colour.describe()}"
        code.line(f"        raise _FiringError({arc.where!r}, {binding}, "
                  f"'multiset token ' + repr(_mv) + {why!r})")

    def _emit_guard(self, code: CodeLines, expr: str, bound: list[str],
                    clock: str | None = None) -> None:
        """``continue`` unless guard ``expr`` holds; an error names the guard, the binding
        and, for a guard that reads the clock, the time it was tested at (``clock``)."""
        code.line("try:")
        code.line(f"    _g = {expr}")
        code.line("except Exception as _e:")
        at = "" if clock is None else f", {clock}"
        code.line(
            f"    raise _FiringError({'guard of ' + self.where!r}, "
            f"{self.binding_dict_source(bound)}, _e{at}) from _e"
        )
        code.line("if not _g: continue")

    def emit_availability(self, code: CodeLines, p: int, items: list[tuple[str, str, Arc]],
                           binders: dict[str, str | None]) -> None:
        timed = self.timed[p]
        if len(items) == 1 and items[0][0] in binders and items[0][1] == "1" \
                and not items[0][2].multiset:
            # the binder loop iterated over present values: one token is there
            if timed:
                code.line(f"_r = {binders[items[0][0]] or f'_p{p}[{items[0][0]}]'}[0]")
                code.line("if _r > _ready: _ready = _r")
            return
        # a computed count may be 0 (no token needed, as a PNML multiset difference)
        if len(items) == 1 and not items[0][2].multiset:
            value, count, _arc = items[0]
            some = "" if count.isdigit() else f"{count} > 0 and "
            code.line(f"_have = _p{p}.get({value})")
            if timed:
                code.line(f"if {some}(_have is None or len(_have) < {count}): continue")
                if count != "0":
                    code.line(f"if {count} > 0 and _have[{count} - 1] > _ready: "
                              f"_ready = _have[{count} - 1]")
            else:
                code.line(f"if {some}(_have is None or _have < {count}): continue")
            return
        # several arcs on one place: add up what they need per value
        some = "" if all(count.isdigit() for _, count, _ in items) else "_k > 0 and "
        code.line("_need = {}")
        for value, count, arc in items:
            if arc.multiset:  # ``value -> count``, every count >= 1
                code.line(f"for _mv, _mk in {value}.items(): _need[_mv] = _need.get(_mv, 0) + _mk")
            else:
                code.line(f"_need[{value}] = _need.get({value}, 0) + {count}")
        code.line("_ok = True")
        code.line("for _val, _k in _need.items():")
        code.line(f"    _have = _p{p}.get(_val)")
        if timed:
            code.line(f"    if {some}(_have is None or len(_have) < _k): _ok = False; break")
            code.line("    if _k > 0 and _have[_k - 1] > _ready: _ready = _have[_k - 1]")
        else:
            code.line(f"    if {some}(_have is None or _have < _k): _ok = False; break")
        code.line("if not _ok: continue")

    def emit_inhibitor(self, code: CodeLines, arc: Arc, bound: list[str]) -> None:
        p = self.place_index[arc.place]
        if arc.inscription is None:
            code.line(f"if _p{p}: continue")
            return
        ins = Inscription.parse(arc.inscription, arc.where)
        self._check_names(ins, set(bound), arc.where, firing=False)
        self.emit_eval(code, "_inh", ins.text, arc.where, bound)
        count = arc.count if isinstance(arc.count, int) else f"({arc.count})"
        if self.timed[p]:
            code.line(f"if len(_p{p}.get(_inh, ())) >= {count}: continue")
        else:
            code.line(f"if _p{p}.get(_inh, 0) >= {count}: continue")

    def _delay_expr(self, delay: Any, name: str, where: str, bound: set[str]) -> str | None:
        """Python source for a delay, registering distributions in the namespace."""
        if delay is None:
            return None
        if isinstance(delay, Distribution):
            self.globals[name] = delay
            return f"_draw.delay({name})"
        if isinstance(delay, str):
            self._check_names(Inscription.parse(delay, where), bound, where, firing=True)
            return f"({delay})"
        return repr(float(delay))

    def _compile_fire(self, bound: list[str], needs: dict[int, list[tuple[str, str, Arc]]],
                      tracked: bool, cond_places: tuple[int, ...] = ()) -> str:
        """Source of ``_fire(M, b, now, draw)``, or with ``tracked`` of ``_fire_tracked``.

        The tracked variant also keeps, for each timed place, whether its values are in
        timestamp order in the dict (``_inord``) and the latest timestamp added (``_last``),
        which ``enumerate_due`` relies on; with ``cond_places`` it returns the mask of those
        it wrote (bit ``i``: ``cond_places[i]``).
        """
        masked = tracked and bool(cond_places)
        code = CodeLines()
        code.line("def _fire_tracked(M, _b, now, _draw, _inord, _last):" if tracked
                  else "def _fire(M, _b, now, _draw):")
        code.depth += 1
        if bound:
            code.line(", ".join(bound) + ", = _b")
        for p in sorted({self.place_index[a.place] for a in self.arcs
                         if a.kind in (ArcKind.INPUT, ArcKind.OUTPUT, ArcKind.RESET)}):
            code.line(f"_p{p} = M[{p}]")
        for fn in sorted((self._names_used_at_firing() & RANDOM_FUNCTIONS) - self.declared):
            code.line(f"{fn} = _draw.{fn}")
        if "rng" in self.t.action_inputs:
            code.line("rng = _draw.generator")
        if masked:
            code.line("_wm = 0")
        after_action = set(bound) | {"now"}
        binding = self.binding_dict_source(bound)
        # recompute consumed values (cheap) instead of passing them from enumeration
        for p, items in needs.items():
            for _value, count, arc in items:
                if arc.kind is not ArcKind.INPUT:
                    continue
                if arc.multiset:  # every value of the multiset, as many as it counts
                    code.line(f"for _val, _mk in _multiset({arc.inscription}).items():")
                    code.depth += 1
                    count = "_mk"
                else:
                    code.line(f"_val = {arc.inscription}")
                computed = not count.isdigit()
                if computed:  # a computed count of 0 takes nothing
                    code.line(f"if {count} > 0:")
                    code.depth += 1
                if self.timed[p]:
                    code.line(f"_lst = _p{p}[_val]")
                    code.line("del _lst[0]" if count == "1" else f"del _lst[:{count}]")
                    if tracked:
                        # a value whose earliest token left may now be out of order
                        code.line("if not _lst:")
                        code.line(f"    del _p{p}[_val]")
                        code.line(f"    if not _p{p}: _inord[{p}] = True; _last[{p}] = -_inf")
                        code.line(f"elif len(_p{p}) > 1: _inord[{p}] = False")
                    else:
                        code.line(f"if not _lst: del _p{p}[_val]")
                else:
                    code.line(f"_c = _p{p}[_val] - {count}")
                    code.line(f"if _c: _p{p}[_val] = _c")
                    if tracked and p in self.keyed:
                        code.line("else:")
                        code.line(f"    del _p{p}[_val]")
                        code.depth += 1
                        self._emit_unindex(code, p)
                        code.depth -= 1
                    else:
                        code.line(f"else: del _p{p}[_val]")
                if computed:
                    code.depth -= 1
                if arc.multiset:
                    code.depth -= 1
        for arc in self.arcs:
            if arc.kind is ArcKind.RESET:
                p = self.place_index[arc.place]
                code.line(f"_p{p}.clear()")
                if tracked and p in self.keyed:
                    code.line(f"_p{p}.by_key.clear()")
                if tracked and self.timed[p]:
                    code.line(f"_inord[{p}] = True; _last[{p}] = -_inf")
        if self.t.action is not None:
            for name in self.t.action_inputs:
                if name not in after_action and name not in self.declared and name != "rng":
                    raise InputError(
                        f"code action of {self.where}: parameter {name!r} is neither a "
                        f"variable of the transition ({', '.join(bound) or 'none'}), a "
                        "declaration, 'now' nor 'rng'"
                    )
            self.globals["_action"] = self.t.action
            args = ", ".join(f"{n}={n}" for n in self.t.action_inputs)
            code.line("try:")
            code.line(f"    _res = _action({args})")
            for name in self.t.outputs:
                code.line(f"    {name} = _res[{name!r}]")
            code.line("except Exception as _e:")
            code.line(
                f"    raise _FiringError({'code action of ' + self.where!r}, {binding}, "
                "_e) from _e"
            )
            after_action |= set(self.t.outputs)
        known = self.known_colours
        has_delay = self.t.delay is not None
        delay_src = self._delay_expr(self.t.delay, "_tdelay", f"delay of {self.where}",
                                     after_action)
        if delay_src is not None:
            self._emit_checked(code, "_d", delay_src, f"delay of {self.where}", binding,
                               check_delay=True)
        for n_out, arc in enumerate(a for a in self.arcs if a.kind is ArcKind.OUTPUT):
            p = self.place_index[arc.place]
            colour = self.net.places[arc.place].colour
            ins = Inscription.parse(arc.inscription or "", arc.where)
            self._check_names(ins, after_action, arc.where, firing=True)
            indent = 0
            if arc.when is not None:
                cond = Inscription.parse(arc.when, f"condition of {arc.where}")
                self._check_names(cond, after_action, f"condition of {arc.where}", firing=True)
                self._emit_checked(code, "_w", f"({arc.when})", f"condition of {arc.where}",
                                   binding)
                code.line("if _w:")
                code.depth += 1
                indent = 1
                if masked and p in cond_places:
                    code.line(f"_wm |= {1 << cond_places.index(p)}")
            if arc.multiset:
                # every value tested before any is put; the delay drawn once for all
                self._emit_checked(code, "_ms", f"_multiset({ins.text})", arc.where, binding)
                self._emit_multiset_test(code, "_ms", arc, binding)
            else:
                self._emit_checked(code, "_val", ins.text, arc.where, binding)
                test = self._output_test(colour, ins.tree, known, after_action)
                if test is not None:
                    code.line(f"if not {test}:")
                    # the colour set's name as a literal: CPN ML names may hold quotes
                    why = f" is not of colour set {colour.describe()}"
                    code.line(f"    raise _FiringError({arc.where!r}, {binding}, "
                              f"'token ' + repr(_val) + {why!r})")
            if isinstance(arc.count, int):
                count = str(arc.count)
            else:
                self._check_names(Inscription.parse(arc.count, arc.where), after_action,
                                  f"count of {arc.where}", firing=True)
                self._emit_checked(code, "_k", f"({arc.count})", f"count of {arc.where}",
                                   binding, check_count=True)
                count = "_k"
            stamp = "now"
            if self.timed[p]:
                if has_delay:
                    stamp += " + _d"
                arc_delay = self._delay_expr(arc.delay, f"_adelay{n_out}",
                                             f"delay of {arc.where}", after_action)
                if arc_delay is not None:
                    self._emit_checked(code, "_ad", arc_delay, f"delay of {arc.where}", binding,
                                       check_delay=True)
                    stamp += " + _ad"
            if arc.multiset:
                code.line("for _val, _k in _ms.items():")
                code.depth += 1
                indent += 1
                count = "_k"
            if self.timed[p]:
                # one hash of the value (a record hashes all its fields) where get-then-set
                # took two for a new value; the same insertion order
                code.line(f"_lst = _p{p}.setdefault(_val, [])")
                code.line(f"_ts = {stamp}")
                if tracked:
                    code.line(f"if _ts >= _last[{p}]: _last[{p}] = _ts")
                    code.line(f"else: _inord[{p}] = False")
                if count == "1":
                    code.line("_insort(_lst, _ts)")
                else:
                    code.line(f"for _i in range({count}): _insort(_lst, _ts)")
                    code.line(f"if not _lst: del _p{p}[_val]")
            elif tracked and p in self.keyed:
                code.line(f"_c0 = _p{p}.get(_val, 0)")
                code.line(f"_c = _c0 + {count}")
                code.line("if _c:")
                code.line(f"    _p{p}[_val] = _c")
                code.line("    if not _c0: "
                          f"_p{p}.by_key.setdefault(_val[0], {{}})[_val] = None")
            elif isinstance(arc.count, int) and arc.count > 0:
                code.line(f"_p{p}[_val] = _p{p}.get(_val, 0) + {count}")
            else:
                code.line(f"_c = _p{p}.get(_val, 0) + {count}")
                code.line(f"if _c: _p{p}[_val] = _c")
            code.depth -= indent
        code.line("return _wm" if masked else "return None")
        return code.text()

    @functools.cached_property
    def known_colours(self) -> dict[str, ColourSet]:
        """The variables whose values are members of a known colour set when it fires
        (read, not changed: the firing code of both kinds and the record variables share it).

        A variable an input or read arc's pattern binds holds (a component of) a token
        of that place, which was checked against the place's colour set when it was put
        there (an initial token or an output arc's test); a variable of a free colour set
        runs over its members. A variable a code action assigns is left out.
        """
        known: dict[str, ColourSet] = dict(self.free)
        for arc in self.input_arcs_in_binding_order():
            ins = Inscription.parse(arc.inscription or "", arc.where)
            if not self.is_binder(arc, set(known)):
                continue
            self._pattern_colours(ins.tree, self.net.places[arc.place].colour, known)
        for name in self.t.outputs:
            known.pop(name, None)
        return known

    def _pattern_colours(self, tree: Any, colour: ColourSet | None,
                         known: dict[str, ColourSet]) -> None:
        """Adds to ``known`` the colour sets of the names pattern ``tree`` binds first."""
        if isinstance(tree, ast.Name):
            if colour is not None and tree.id not in known and tree.id not in self.declared:
                known[tree.id] = colour
        elif isinstance(tree, ast.Tuple):
            for element, component in zip(tree.elts,
                                           _tuple_components(colour, len(tree.elts)),
                                           strict=True):
                self._pattern_colours(element, component, known)

    def _output_test(self, colour: ColourSet, tree: Any, known: dict[str, ColourSet],
                     local: AbstractSet[str] = frozenset()) -> str | None:
        """The membership test of an output arc's value ``_val`` (``None``: none needed).

        Parts the expression guarantees are left out (see :meth:`_guaranteed`): a
        variable of ``known`` whose colour set's test implies the place's, integer
        arithmetic within the place's bounds, a tuple display's type and
        length (``(h + n, p)`` into a product: only ``h + n`` is tested), a constant
        that passes the test (``()`` into a unit place), a call of the place's record
        type with every field named (``Pkt(flow=FLOW, seq=t.nxt, ts=now, ...)``: its type
        is the record's, and only the fields whose expression is not guaranteed, see
        :meth:`_guaranteed`, are tested), and the fields a record's ``_replace`` keeps
        (``t._replace(nxt=t.nxt + 1, cwr_pending=False)`` of a ``t`` known to be a member
        of the place's record colour set: only ``nxt`` is tested). ``local`` names the
        firing code's locals (variables, code action outputs), which hide declarations.
        Why: a packet's 12-field test was most of the firing code of a sender's ``send``.
        """
        if self._guaranteed(tree, colour, known, local):
            return None
        if isinstance(colour, RecordSet) and isinstance(tree, ast.Call) \
                and isinstance(tree.func, ast.Name) and tree.func.id not in local \
                and self.scope.get(tree.func.id) is colour.record_type and not tree.args:
            index = {name: i for i, (name, _c) in enumerate(colour.fields)}
            named = [k.arg for k in tree.keywords]
            if sorted(n for n in named if n is not None) == sorted(index) \
                    and len(named) == len(index):  # every field once, no ``**fields``
                parts = [_colour_test(colour.fields[index[str(k.arg)]][1],
                                      f"_val[{index[str(k.arg)]}]", self.globals)
                         for k in sorted(tree.keywords, key=lambda k: index[str(k.arg)])
                         if not self._guaranteed(k.value, colour.fields[index[str(k.arg)]][1],
                                                 known, local)]
                return "(" + " and ".join(parts) + ")" if parts else None
        if isinstance(colour, RecordSet) and isinstance(tree, ast.Call) \
                and isinstance(tree.func, ast.Attribute) and tree.func.attr == "_replace" \
                and isinstance(tree.func.value, ast.Name) and tree.func.value.id in known \
                and not tree.args and _same_test(known[tree.func.value.id], colour):
            index = {name: i for i, (name, _c) in enumerate(colour.fields)}
            replaced = [k for k in tree.keywords if k.arg is not None]  # not **fields
            if len(replaced) == len(tree.keywords) and all(k.arg in index for k in replaced):
                # ``_replace`` keeps the exact record type of a known member
                parts = [_colour_test(colour.fields[index[str(k.arg)]][1],
                                      f"_val[{index[str(k.arg)]}]", self.globals)
                         for k in sorted(replaced, key=lambda k: index[str(k.arg)])
                         if not self._guaranteed(k.value, colour.fields[index[str(k.arg)]][1],
                                                 known, local)]
                return "(" + " and ".join(parts) + ")" if parts else None
        if isinstance(tree, ast.Tuple) and not any(isinstance(e, ast.Starred)
                                                   for e in tree.elts) \
                and isinstance(colour, ProductSet) \
                and len(colour.components) == len(tree.elts):
            parts = [_colour_test(c, f"_val[{i}]", self.globals)
                     for i, (c, e) in enumerate(zip(colour.components, tree.elts, strict=True))
                     if not self._guaranteed(e, c, known, local)]
            return "(" + " and ".join(parts) + ")" if parts else None
        return _colour_test(colour, "_val", self.globals)

    def _constant(self, tree: Any, local: AbstractSet[str]) -> Any:
        """The value of a literal or of a declaration holding an immutable value (ints,
        floats, bools, strings and tuples of them), else ``_UNKNOWN``."""
        if isinstance(tree, ast.Name):
            if tree.id in local or tree.id not in self.scope:
                return _UNKNOWN
            value = self.scope[tree.id]
            return value if _immutable(value) else _UNKNOWN
        if isinstance(tree, ast.AST) and not isinstance(tree, _LITERAL_NODES):
            return _UNKNOWN  # ``literal_eval`` refuses it or gives a mutable or complex value
        try:
            value = ast.literal_eval(tree)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _UNKNOWN
        return value if _immutable(value) else _UNKNOWN

    def _kind(self, tree: Any, known: dict[str, ColourSet],
              local: AbstractSet[str]) -> ColourSet | None:
        """A colour set whose test every value of ``tree`` passes, when one is evident:
        a known variable or a field of one, the clock ``now``, an integer constant, sums
        and differences of integers (with their bounds), ``min``/``max`` of integers,
        ``a if c else b`` of two such, comparisons of plain values and ``not``."""
        if isinstance(tree, ast.Name) and tree.id in known:
            return known[tree.id]
        if isinstance(tree, ast.Name) and tree.id == "now" and "now" not in self.t.outputs:
            # the clock the engines fire at: a finite float (a start time is checked
            # finite and every delay finite and >= 0)
            return RealSet()
        if isinstance(tree, ast.Attribute) and isinstance(tree.value, ast.Name) \
                and tree.value.id in known and isinstance(known[tree.value.id], RecordSet):
            return dict(known[tree.value.id].fields).get(tree.attr)  # type: ignore[attr-defined]
        value = self._constant(tree, local)
        if value is not _UNKNOWN:
            if type(value) is int:
                return IntSet(low=value, high=value)
            if type(value) is bool:
                return BoolSet()
            return None
        if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not):
            return BoolSet()  # ``not`` gives a bool or raises
        if isinstance(tree, ast.Compare):
            operands = [self._kind(e, known, local) for e in [tree.left, *tree.comparators]]
            if all(isinstance(k, IntSet | RealSet | BoolSet | StringSet | EnumSet)
                   for k in operands):
                return BoolSet()  # plain values compare to a bool
            return None
        if isinstance(tree, ast.IfExp):
            a, b = self._kind(tree.body, known, local), self._kind(tree.orelse, known, local)
            if type(a) is IntSet and type(b) is IntSet:
                return IntSet(low=None if a.low is None or b.low is None else min(a.low, b.low),
                              high=None if a.high is None or b.high is None
                              else max(a.high, b.high))
            return a if a is not None and b is not None and _same_test(a, b) else None
        if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) \
                and tree.func.id in ("min", "max") and tree.func.id not in local \
                and tree.func.id not in self.scope and len(tree.args) >= 2 \
                and not tree.keywords and not any(isinstance(a, ast.Starred) for a in tree.args):
            kinds = [self._kind(a, known, local) for a in tree.args]
            if all(type(k) is IntSet for k in kinds):  # the builtin returns one of them
                lows = [k.low for k in kinds]  # type: ignore[union-attr]
                highs = [k.high for k in kinds]  # type: ignore[union-attr]
                known_lows = [v for v in lows if v is not None]
                known_highs = [v for v in highs if v is not None]
                if tree.func.id == "max":  # at least every low, at most the largest high
                    low = max(known_lows) if known_lows else None
                    high = max(known_highs) if len(known_highs) == len(highs) else None
                else:  # at most every high, at least the smallest low
                    high = min(known_highs) if known_highs else None
                    low = min(known_lows) if len(known_lows) == len(lows) else None
                return IntSet(low=low, high=high)
            return None
        if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Add | ast.Sub):
            a, b = self._kind(tree.left, known, local), self._kind(tree.right, known, local)
            if type(a) is IntSet and type(b) is IntSet:  # int +- int is an int
                if isinstance(tree.op, ast.Sub):
                    b = IntSet(low=None if b.high is None else -b.high,
                               high=None if b.low is None else -b.low)
                low = None if a.low is None or b.low is None else a.low + b.low
                high = None if a.high is None or b.high is None else a.high + b.high
                return IntSet(low=low, high=high)
        return None

    def _guaranteed(self, tree: Any, colour: ColourSet, known: dict[str, ColourSet],
                    local: AbstractSet[str]) -> bool:
        """Whether every value ``tree`` evaluates to passes ``colour``'s membership test
        (evaluation errors aside: they are raised before the test)."""
        if isinstance(tree, ast.IfExp):
            return (self._guaranteed(tree.body, colour, known, local)
                    and self._guaranteed(tree.orelse, colour, known, local))
        value = self._constant(tree, local)
        if value is not _UNKNOWN:
            return _passes(colour, value)
        kind = self._kind(tree, known, local)
        return kind is not None and _implies(kind, colour)

    @staticmethod
    def _emit_unindex(code: CodeLines, p: int) -> None:
        """Drop value ``_val``, just gone from keyed place ``p``, from its index."""
        code.line(f"_kv = _p{p}.by_key[_val[0]]")
        code.line("del _kv[_val]")
        code.line(f"if not _kv: del _p{p}.by_key[_val[0]]")

    def _names_used_at_firing(self) -> set[str]:
        texts: list[Any] = [a.inscription for a in self.arcs if a.kind is ArcKind.OUTPUT]
        texts += [a.when for a in self.arcs] + [a.delay for a in self.arcs]
        texts += [a.count for a in self.arcs] + [self.t.delay]
        names: set[str] = set()
        for text in texts:
            if isinstance(text, str):
                names |= Inscription.parse(text, self.where).names
        return names

    def _emit_checked(self, code: CodeLines, var: str, expr: str, where: str, binding: str, *,
                      check_delay: bool = False, check_count: bool = False) -> None:
        code.line("try:")
        code.line(f"    {var} = {expr}")
        code.line("except Exception as _e:")
        code.line(f"    raise _FiringError({where!r}, {binding}, _e) from _e")
        if check_delay:
            code.line(f"if not (0.0 <= {var} < _inf):")
            code.line(
                f"    raise _FiringError({where!r}, {binding}, "
                f"f'delay {{{var}!r}} is not finite and >= 0')"
            )
        if check_count:  # a timed place keeps one timestamp per token: counts are bounded
            code.line(f"if type({var}) is not int or not 0 <= {var} <= _count_bound:")
            code.line(
                f"    raise _FiringError({where!r}, {binding}, "
                f"f'count {{{var}!r}} is not an int from 0 to {{_count_bound}}, the limit "
                "marking_tokens (raise it with --limit marking_tokens=N)')"
            )
