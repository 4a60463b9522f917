"""SNAKES interoperability: a tcpn net as a SNAKES ``PetriNet`` (untimed view), and back.

:func:`to_snakes` gives the *untimed view* of a net: the same places, tokens, transitions,
guards and arcs as SNAKES objects, so SNAKES' ``modes()`` and ``fire()`` (and its
``StateGraph``) see the bindings tcpn's :meth:`~tcpn.petrinets.Simulator.enabled` sees
when time and priorities play no part. :func:`from_snakes` builds a tcpn net from a
SNAKES net plus optional :class:`Timing` annotations; :func:`timing_of` extracts those
annotations from a tcpn net, so ``from_snakes(to_snakes(net), timing_of(net))`` rebuilds
a net that behaves as ``net`` (code actions aside, see below).

How the elements map (tcpn -> SNAKES):

============================  ===========================================================
tcpn                          SNAKES
============================  ===========================================================
place, colour set ``C``       ``Place`` typed ``TypeCheck(C.contains)`` (UNIT: ``dot``)
guard                         ``Expression`` guard
input arc, pattern            ``Variable`` / ``Value`` / ``Tuple`` (declared names become
                              ``Value`` of their declared value)
``count=k`` (an int)          ``MultiArc`` of ``k`` copies
several arcs, same place      one ``MultiArc`` (SNAKES allows one arc per place and way)
read arc                      ``Test``
inhibitor arc, no inscription ``Inhibitor(Variable(...))``: the place must be empty
inhibitor arc, constant ``v`` ``Inhibitor(Value(v))`` (``count=k``: ``k`` copies)
reset arc                     input ``Flush`` of a fresh variable (consumes every token)
output arc                    ``Variable`` / ``Value`` / ``Expression``
output ``when`` / count expr  output ``Flush('[e] * (k) if (c) else []')``
declarations                  the net's globals; module parameters that differ from the
                              net's declarations are renamed ``NAME_transition``
============================  ===========================================================

Dropped by :func:`to_snakes` (SNAKES has no time): token timestamps, transition and arc
delays, priorities (SNAKES lists every mode; tcpn fires the most urgent first), and code
actions that produce no output values. Refused with :class:`SnakesConversionError`,
because SNAKES can't express them faithfully: code actions with outputs; ``now`` or the
random functions in inscriptions (SNAKES evaluates output arcs while computing modes and
again when firing, so draws would not belong to one firing); input arcs that are
expressions rather than patterns (rewrite ``n + 1`` as a variable ``m`` and a guard
``m == n + 1``); counts that are expressions on input, read or inhibitor arcs; inhibitor
inscriptions that read the transition's variables (a SNAKES inhibitor binds its own
variables and never sees the transition's binding); and a place joined to one transition
by arcs of different kinds (say input and read: tcpn counts the read tokens apart from
the consumed ones, SNAKES' ``MultiArc`` of a ``Test`` does not).

Two SNAKES behaviours to know:

* SNAKES 0.9.33's ``Transition.fire`` rejects every non-empty mode of a transition that
  has an ``Inhibitor`` arc (``Inhibitor.check`` compares the whole binding with the
  inhibitor's own empty substitution), although ``modes()`` lists those modes. tcpn's
  inhibitor arcs work with variables; the tests show both.
* SNAKES drops a mode whose output tokens fall outside a place's type while listing
  modes; tcpn raises :class:`~tcpn.petrinets.FiringError` when such a binding fires. On
  nets whose outputs respect their colour sets the two agree.

>>> from tcpn.petrinets import INT, PetriNet, Place, Transition
>>> net = PetriNet("counter")
>>> net.add_place(Place("count", INT.timed(), initial=[0]))
>>> net.add_transition(Transition("inc", guard="x < 3", delay=2.0))
>>> net.add_input("count", "inc", "x")
>>> net.add_output("count", "inc", "x + 1")
>>> snet = to_snakes(net)
>>> snet.transition("inc").modes()
[Substitution(x=0)]
>>> back = from_snakes(snet, timing_of(net))
>>> back.transitions["inc"].delay, back.places["count"].colour.is_timed
(2.0, True)
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import snakes.nets as sn
import snakes.typing as st

from tcpn.errors import InputError
from tcpn.petrinets.colours import BOOL, INT, STRING, UNIT, ColourSet, IntSet, UnitSet
from tcpn.petrinets.inscriptions import RANDOM_FUNCTIONS, Inscription
from tcpn.petrinets.net import P_NORMAL, Arc, ArcKind, Delay, PetriNet, Place, Token, Transition

__all__ = [
    "ANY",
    "AnySet",
    "SnakesConversionError",
    "Timing",
    "from_snakes",
    "snakes_binding",
    "timing_of",
    "to_snakes",
]

_SNAKES_VARIABLE = re.compile(r"^[a-zA-Z]\w*$")


class SnakesConversionError(InputError):
    """A net element has no faithful counterpart on the other side; the message names it."""


@dataclass(frozen=True)
class AnySet(ColourSet):
    """Every hashable value: the colour set of a SNAKES place typed ``tAll``."""

    name: str = field(default="ANY", kw_only=True)

    def contains(self, value: Any) -> bool:
        try:
            hash(value)
        except TypeError:
            return False
        return True


ANY = AnySet()


@dataclass
class Timing:
    """What a SNAKES net lacks to be a timed tcpn net.

    ``timed``: places whose tokens carry timestamps. ``delays``: transition delays
    (CPN Tools' ``@+``). ``arc_delays``: delays of the output arcs from a transition to a
    place, keyed ``(transition, place)``. ``priorities``: transition priorities (lower is
    more urgent). ``colours``: colour sets for places, overriding the one read from the
    SNAKES type. ``initial``: initial tokens with timestamps, replacing a place's SNAKES
    marking.
    """

    timed: frozenset[str] | set[str] = frozenset()
    delays: Mapping[str, Delay] = field(default_factory=dict)
    arc_delays: Mapping[tuple[str, str], Delay] = field(default_factory=dict)
    priorities: Mapping[str, int] = field(default_factory=dict)
    colours: Mapping[str, ColourSet] = field(default_factory=dict)
    initial: Mapping[str, Sequence[Token]] = field(default_factory=dict)


def timing_of(net: PetriNet) -> Timing:
    """The timing annotations (and colour sets) :func:`to_snakes` leaves out of ``net``.

    >>> from tcpn.petrinets.examples import single_server_queue
    >>> timing = timing_of(single_server_queue(5, 1.0, 0.5))
    >>> sorted(timing.timed), sorted(timing.delays)
    (['busy', 'idle', 'queue', 'source'], ['start'])
    """
    arc_delays: dict[tuple[str, str], Delay] = {}
    for arc in net.arcs:
        if arc.kind is not ArcKind.OUTPUT or arc.delay is None:
            continue
        key = (arc.transition, arc.place)
        if key in arc_delays and arc_delays[key] != arc.delay:
            raise SnakesConversionError(
                f"{arc.where}: two output arcs from {arc.transition} to {arc.place} have "
                "different delays; Timing keys arc delays by (transition, place)"
            )
        arc_delays[key] = arc.delay
    return Timing(
        timed=frozenset(p.name for p in net.places.values() if p.colour.is_timed),
        delays={t.name: t.delay for t in net.transitions.values() if t.delay is not None},
        arc_delays=arc_delays,
        priorities={t.name: t.priority for t in net.transitions.values()
                    if t.priority != P_NORMAL},
        colours={p.name: p.colour for p in net.places.values()},
        initial={p.name: p.initial_tokens for p in net.places.values()
                 if any(tok.time != 0.0 for tok in p.initial_tokens)},
    )


# -- tcpn -> SNAKES ---------------------------------------------------------------------
class _ColourCheck:
    """A SNAKES type predicate that remembers its tcpn colour set (for the way back)."""

    def __init__(self, colour: ColourSet):
        self.colour = colour
        self.__name__ = colour.describe()  # SNAKES' TypeCheck repr names its function

    def __call__(self, value: Any) -> bool:
        if isinstance(self.colour, UnitSet):
            return value is sn.dot
        return self.colour.contains(value)

    def __repr__(self) -> str:
        return self.colour.describe()


def to_snakes(net: PetriNet) -> sn.PetriNet:
    """The untimed view of ``net`` as a SNAKES ``PetriNet`` (see the module docstring).

    Raises :class:`SnakesConversionError` naming the element SNAKES can't represent.

    >>> from tcpn.petrinets.examples import counter
    >>> snet = to_snakes(counter(2))
    >>> t = snet.transition("increment")
    >>> t.fire(t.modes()[0]); snet.place("count").tokens
    MultiSet([1])
    """
    snet = sn.PetriNet(net.name)
    if "dot" in net.declarations:
        raise SnakesConversionError(
            f"net {net.name}: the declaration 'dot' would hide SNAKES' black token"
        )
    for name, value in net.declarations.items():
        snet.globals[name] = value
    snet.globals["dot"] = sn.dot
    for place in net.places.values():
        if place.initial_draw is not None:
            raise InputError(f"place {place.name}: its initial marking is drawn at random "
                             f"when a run starts ({place.initial_draw.text}), which SNAKES "
                             "can't hold; fix one draw first (tcpn.petrinets.engine."
                             "initial_draws.fix_initial_draws)")
        unit = isinstance(place.colour, UnitSet)
        tokens = [sn.dot if unit else token.value for token in place.initial_tokens]
        snet.add_place(sn.Place(place.name, tokens, st.TypeCheck(_ColourCheck(place.colour))))
    taken = set(net.declarations) | {"dot"}
    for transition in net.transitions.values():
        renames = {}
        for key, value in transition.params.items():
            if key in net.declarations and _same(net.declarations[key], value):
                continue
            renames[key] = _fresh(f"{key}_{_identifier(transition.name)}", taken)
            taken.add(renames[key])
            snet.globals[renames[key]] = value
        _TransitionExport(net, snet, transition, renames).run()
    return snet


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # values whose == is not a bool (arrays): treat as different
        return False


def _identifier(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _fresh(stem: str, taken: Iterable[str]) -> str:
    used = set(taken)
    name, n = stem, 1
    while name in used:
        n += 1
        name = f"{stem}{n}"
    return name


def _rename(text: str, renames: Mapping[str, str]) -> str:
    """``text`` with the names in ``renames`` replaced (module parameters made global)."""
    if not renames:
        return text
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in renames:
            node.id = renames[node.id]
    return ast.unparse(tree)


class _TransitionExport:
    """Adds one transition and its arcs to a SNAKES net."""

    def __init__(self, net: PetriNet, snet: sn.PetriNet, transition: Transition,
                 renames: Mapping[str, str]):
        self.net = net
        self.snet = snet
        self.t = transition
        self.where = f"transition {transition.name}"
        self.scope = net.scope_of(transition.name)
        self.renames = renames
        self.arcs = net.arcs_of(transition.name)
        names: set[str] = set(self.scope)
        for text in self._texts():
            names |= Inscription.parse(text, self.where).names
        self.taken = names

    def _texts(self) -> list[str]:
        texts = [self.t.guard] if self.t.guard else []
        for arc in self.arcs:
            texts += [x for x in (arc.inscription, arc.when, arc.count) if isinstance(x, str)]
        return texts

    def run(self) -> None:
        if self.t.action is not None and self.t.outputs:
            raise SnakesConversionError(
                f"{self.where}: its code action produces {', '.join(self.t.outputs)}; SNAKES "
                "has no code actions (write the outputs as arc expressions)"
            )
        for text in self._texts():
            ins = Inscription.parse(text, self.where)
            bad = (ins.names & (RANDOM_FUNCTIONS | {"now", "rng"})) - set(self.scope)
            if bad:
                raise SnakesConversionError(
                    f"{self.where}: inscription {text!r} uses {sorted(bad)[0]!r}; SNAKES "
                    "evaluates output arcs while listing modes and again when firing, and "
                    "has no clock"
                )
        guard = sn.Expression(_rename(self.t.guard, self.renames)) if self.t.guard else None
        self.snet.add_transition(sn.Transition(self.t.name, guard))
        by_place: dict[tuple[str, bool], list[Arc]] = {}
        for arc in self.arcs:
            if arc.multiset:
                raise SnakesConversionError(
                    f"{arc.where}: a multiset computed from the binding "
                    f"({arc.inscription!r}); the SNAKES conversion does not take one"
                )
            by_place.setdefault((arc.place, arc.kind is ArcKind.OUTPUT), []).append(arc)
        for (place, is_output), arcs in by_place.items():
            if is_output:
                parts = [p for arc in arcs for p in self._output(arc)]
                self.snet.add_output(place, self.t.name, _combine(parts))
            else:
                self.snet.add_input(place, self.t.name, self._input(place, arcs))

    # inputs ------------------------------------------------------------------------------
    def _input(self, place: str, arcs: list[Arc]) -> sn.ArcAnnotation:
        kinds = {arc.kind for arc in arcs}
        if len(kinds) > 1:
            raise SnakesConversionError(
                f"{self.where}: place {place} is joined to it by "
                f"{' and '.join(sorted(k.value for k in kinds))} arcs; SNAKES takes one arc "
                "per place and a MultiArc mixing them has other semantics"
            )
        kind = arcs[0].kind
        if kind is ArcKind.RESET:
            return sn.Flush(_fresh(f"reset_{_identifier(place)}", self.taken))
        if kind is ArcKind.INHIBITOR:
            if len(arcs) > 1:
                raise SnakesConversionError(
                    f"{self.where}: several inhibitor arcs from {place}; SNAKES takes one"
                )
            return self._inhibitor(arcs[0])
        parts = []
        for arc in arcs:
            if not isinstance(arc.count, int):
                raise SnakesConversionError(
                    f"{arc.where}: count {arc.count!r} is an expression; SNAKES input arcs "
                    "take a fixed number of tokens"
                )
            parts += [self._pattern(arc)] * arc.count
        annotation = _combine(parts)
        return sn.Test(annotation) if kind is ArcKind.READ else annotation

    def _pattern(self, arc: Arc) -> sn.ArcAnnotation:
        ins = Inscription.parse(arc.inscription or "", arc.where)
        if not ins.is_pattern:
            raise SnakesConversionError(
                f"{arc.where}: inscription {ins.text!r} is an expression; SNAKES input arcs "
                "take variables, values and tuples of them (bind a new variable and test "
                "it in the guard)"
            )
        unit = isinstance(self.net.places[arc.place].colour, UnitSet)
        return self._pattern_node(ins.tree, arc, unit)

    def _pattern_node(self, node: ast.expr, arc: Arc, unit: bool) -> sn.ArcAnnotation:
        if isinstance(node, ast.Name):
            if node.id in self.scope:
                return _value(self.scope[node.id], unit)
            if not _SNAKES_VARIABLE.match(node.id):
                raise SnakesConversionError(
                    f"{arc.where}: variable {node.id!r} is not a SNAKES variable name "
                    "(a letter, then letters, digits or '_')"
                )
            return sn.Variable(node.id)
        if isinstance(node, ast.Constant):
            return _value(node.value, unit)
        assert isinstance(node, ast.Tuple)
        if not node.elts:
            return _value((), unit)
        return sn.Tuple([self._pattern_node(e, arc, False) for e in node.elts])

    def _inhibitor(self, arc: Arc) -> sn.ArcAnnotation:
        if arc.inscription is None:
            return sn.Inhibitor(sn.Variable(_fresh("inhibiting", self.taken)))
        ins = Inscription.parse(arc.inscription, arc.where)
        reads = ins.free_variables(set(self.scope))
        if reads or not isinstance(arc.count, int):
            raise SnakesConversionError(
                f"{arc.where}: the inhibitor reads the transition's variables "
                f"({', '.join(sorted(reads)) or arc.count}); a SNAKES Inhibitor binds its "
                "own variables and can't see the transition's binding"
            )
        value = eval(compile(ins.text, arc.where, "eval"), dict(self.scope))
        unit = isinstance(self.net.places[arc.place].colour, UnitSet)
        return sn.Inhibitor(_combine([_value(value, unit)] * arc.count))

    # outputs -----------------------------------------------------------------------------
    def _output(self, arc: Arc) -> list[sn.ArcAnnotation]:
        unit = isinstance(self.net.places[arc.place].colour, UnitSet)
        text = _rename(arc.inscription or "", self.renames)
        if arc.when is None and isinstance(arc.count, int):
            ins = Inscription.parse(text, arc.where)
            tree = ins.tree
            if isinstance(tree, ast.Name) and tree.id not in self.scope and \
                    tree.id not in self.renames.values():
                one: sn.ArcAnnotation = sn.Variable(tree.id)
            elif ins.is_constant and _is_literal(tree):
                one = _value(ast.literal_eval(tree), unit)
            else:
                one = sn.Expression(text)
            return [one] * arc.count
        token = "dot" if unit else text
        expr = f"[{token}]"
        if arc.count != 1:
            expr += f" * ({_rename(str(arc.count), self.renames)})"
        if arc.when is not None:
            expr += f" if ({_rename(arc.when, self.renames)}) else []"
        return [sn.Flush(expr)]


def _is_literal(tree: ast.expr) -> bool:
    try:
        ast.literal_eval(tree)
    except ValueError:
        return False
    return True


def _value(value: Any, unit: bool) -> sn.Value:
    return sn.Value(sn.dot if unit and value == () else value)


def _combine(parts: list[sn.ArcAnnotation]) -> sn.ArcAnnotation:
    return parts[0] if len(parts) == 1 else sn.MultiArc(parts)


def snakes_binding(mode: sn.Substitution) -> dict[str, Any]:
    """The tcpn binding of a SNAKES mode of a :func:`to_snakes` net.

    Drops the variables bound by flush arcs (tcpn's reset arcs bind nothing) and turns
    SNAKES' black token ``dot`` back into tcpn's unit value ``()``.

    >>> snakes_binding(sn.Substitution(x=1, u=sn.dot, r=sn.MultiSet([3])))
    {'x': 1, 'u': ()}
    """
    return {
        name: (() if value is sn.dot else value)
        for name, value in mode.dict().items()
        if not isinstance(value, sn.MultiSet)
    }


# -- SNAKES -> tcpn ---------------------------------------------------------------------
_SNAKES_TYPES: list[tuple[Any, ColourSet]] = [
    (st.tAll, ANY),
    (st.tInteger, INT),
    (st.tNatural, IntSet(0, None, name="NAT")),
    (st.tString, STRING),
    (st.tBoolean, BOOL),
    (st.Instance(sn.BlackToken), UNIT),
]


def _colour_of(place: sn.Place) -> ColourSet:
    check = place.checker()
    if isinstance(check, st.TypeCheck) and isinstance(check._check, _ColourCheck):
        return check._check.colour
    tokens = list(place.tokens)
    if check == st.tAll and tokens and all(t is sn.dot for t in tokens):
        return UNIT
    for snakes_type, colour in _SNAKES_TYPES:
        if check == snakes_type:
            return colour
    raise SnakesConversionError(
        f"place {place.name}: no tcpn colour set for SNAKES type {check!r}; give one in "
        "Timing(colours={...})"
    )


def _with_timing(colour: ColourSet, timed: bool) -> ColourSet:
    if colour.is_timed == timed:
        return colour
    if timed:
        return colour.timed()
    twin = copy.copy(colour)
    object.__setattr__(twin, "is_timed", False)
    return twin


def from_snakes(snet: sn.PetriNet, timing: Timing | None = None) -> PetriNet:
    """A tcpn net from the SNAKES net ``snet`` and the annotations in ``timing``.

    Colour sets come from ``timing.colours``, else from the place's SNAKES type (a net
    made by :func:`to_snakes` gives its colour sets back; ``tAll`` gives :data:`ANY`).
    Raises :class:`SnakesConversionError` for SNAKES constructs tcpn can't express (an
    inhibitor with a condition, a flush arc whose multiset is used, a ``MultiArc`` mixing
    tests and inputs, an output flush that is not of the form :func:`to_snakes` writes).

    >>> snet = sn.PetriNet("n")
    >>> snet.add_place(sn.Place("p", [1, 2], st.tInteger))
    >>> snet.add_place(sn.Place("q", []))
    >>> snet.add_transition(sn.Transition("t", sn.Expression("x > 1")))
    >>> snet.add_input("p", "t", sn.Variable("x"))
    >>> snet.add_output("q", "t", sn.Expression("x * 10"))
    >>> net = from_snakes(snet, Timing(timed={"q"}, delays={"t": 5.0}))
    >>> [(a.kind.value, a.inscription) for a in net.arcs]
    [('input', 'x'), ('output', 'x * 10')]
    >>> net.places["q"].colour.describe(), net.transitions["t"].delay
    ('TANY', 5.0)
    """
    timing = timing or Timing()
    places = {p.name for p in snet.place()}
    transitions = {t.name for t in snet.transition()}
    _check_timing(snet.name, timing, places, transitions)
    net = PetriNet(snet.name)
    for name, value in snet.globals:
        if name.startswith("__") or (name == "dot" and value is sn.dot):
            continue
        net.declare(**{name: value})
    for place in snet.place():
        colour = timing.colours.get(place.name) or _colour_of(place)
        colour = _with_timing(colour, place.name in timing.timed)
        if place.name in timing.initial:
            initial: list[Any] = list(timing.initial[place.name])
        else:
            initial = [() if v is sn.dot else v for v in place.tokens]
        net.add_place(Place(place.name, colour, initial=initial))
    for t in snet.transition():
        guard = str(t.guard).strip()
        net.add_transition(Transition(
            t.name, guard=None if guard == "True" else guard,
            delay=timing.delays.get(t.name), priority=timing.priorities.get(t.name, P_NORMAL),
        ))
        _TransitionImport(net, t, timing).run()
    return net


def _check_timing(net: str, timing: Timing, places: set[str], transitions: set[str]) -> None:
    def known(kind: str, names: Iterable[str], pool: set[str]) -> None:
        for name in names:
            if name not in pool:
                raise InputError(f"timing for net {net}: {kind} names no {name!r} in the net")

    known("timed", timing.timed, places)
    known("colours", timing.colours, places)
    known("initial", timing.initial, places)
    known("delays", timing.delays, transitions)
    known("priorities", timing.priorities, transitions)
    for t, p in timing.arc_delays:
        known("arc_delays", [t], transitions)
        known("arc_delays", [p], places)


class _TransitionImport:
    """Adds the arcs of one SNAKES transition to a tcpn net."""

    def __init__(self, net: PetriNet, t: sn.Transition, timing: Timing):
        self.net = net
        self.t = t
        self.timing = timing
        self.where = f"SNAKES transition {t.name}"
        used: set[str] = set(t.guard.vars())
        for _, label in t.input() + t.output():
            if not isinstance(label, sn.Flush):
                used |= set(label.vars())
        self.used = used

    def run(self) -> None:
        outputs = {place.name for place, _ in self.t.output()}
        for transition, place in self.timing.arc_delays:
            if transition == self.t.name and place not in outputs:
                raise InputError(
                    f"timing: arc_delays names ({transition!r}, {place!r}) but there is no "
                    "output arc from that transition to that place"
                )
        for place, label in self.t.input():
            self._input(place.name, label)
        for place, label in self.t.output():
            self._output(place.name, label)

    def _unit(self, place: str) -> bool:
        return isinstance(self.net.places[place].colour, UnitSet)

    def _add_counted(self, kind: ArcKind, place: str, texts: list[str],
                     delay: Delay = None) -> None:
        for text in dict.fromkeys(texts):
            count = texts.count(text)
            if kind is ArcKind.OUTPUT:
                self.net.add_output(place, self.t.name, text, count, delay=delay)
            else:
                self.net.add_arc(Arc(kind, place, self.t.name, text, count))

    def _input(self, place: str, label: sn.ArcAnnotation) -> None:
        where = f"{self.where}, input arc from {place}"
        if isinstance(label, sn.Inhibitor):
            self._inhibitor(place, label, where)
        elif isinstance(label, sn.Test):
            inner = label._annotation
            parts = list(inner) if type(inner) is sn.MultiArc else [inner]
            self._add_counted(ArcKind.READ, place,
                              [self._pattern(p, place, where) for p in parts])
        elif isinstance(label, sn.Flush):
            name = label._expr
            if name in self.used:
                raise SnakesConversionError(
                    f"{where}: flush arc binds {name!r} to the whole marking and the "
                    "transition uses it; tcpn binds variables to single tokens (a flush whose "
                    "variable is unused is a reset arc)"
                )
            self.net.add_reset(place, self.t.name)
        elif type(label) is sn.MultiArc:
            self._add_counted(ArcKind.INPUT, place,
                              [self._pattern(p, place, where) for p in label])
        else:
            self._add_counted(ArcKind.INPUT, place, [self._pattern(label, place, where)])

    def _pattern(self, label: sn.ArcAnnotation, place: str, where: str) -> str:
        if isinstance(label, sn.Variable):
            return label.name
        if isinstance(label, sn.Value):
            return _literal(label.value, where)
        if isinstance(label, sn.Tuple):
            inner = [self._pattern(c, place, where) for c in label]
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        raise SnakesConversionError(
            f"{where}: {label!r} has no tcpn counterpart here (a MultiArc mixing tests, "
            "inhibitors or flushes with inputs counts tokens differently)"
        )

    def _inhibitor(self, place: str, label: sn.Inhibitor, where: str) -> None:
        if str(label._condition).strip() != "True":
            raise SnakesConversionError(
                f"{where}: inhibitor condition {str(label._condition)!r}; tcpn inhibitors "
                "test for given tokens or for an empty place, without conditions"
            )
        inner = label._annotation
        if isinstance(inner, sn.Variable):
            self.net.add_inhibitor(place, self.t.name)
            return
        parts = list(inner) if type(inner) is sn.MultiArc else [inner]
        if not all(isinstance(p, sn.Value) for p in parts) or len(set(parts)) != 1:
            raise SnakesConversionError(
                f"{where}: inhibitor {label!r}; tcpn inhibitors take one value (with a "
                "count) or none"
            )
        self.net.add_inhibitor(place, self.t.name, _literal(parts[0].value, where), len(parts))

    def _output(self, place: str, label: sn.ArcAnnotation) -> None:
        where = f"{self.where}, output arc to {place}"
        delay = self.timing.arc_delays.get((self.t.name, place))
        parts = list(label) if type(label) is sn.MultiArc else [label]
        plain = []
        for part in parts:
            if isinstance(part, sn.Flush):
                self._flush_output(place, part, where, delay)
            else:
                plain.append(self._expression(part, place, where))
        self._add_counted(ArcKind.OUTPUT, place, plain, delay)

    def _expression(self, label: sn.ArcAnnotation, place: str, where: str) -> str:
        if isinstance(label, sn.Variable):
            return label.name
        if isinstance(label, sn.Value):
            return _literal(label.value, where)
        if isinstance(label, sn.Expression):
            text = str(label).strip()
            return "()" if text == "dot" and self._unit(place) else text
        if isinstance(label, sn.Tuple):
            inner = [self._expression(c, place, where) for c in label]
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        raise SnakesConversionError(f"{where}: {label!r} has no tcpn counterpart")

    def _flush_output(self, place: str, label: sn.Flush, where: str, delay: Delay) -> None:
        """Read back ``[e] * (k) if (c) else []``, the form :func:`to_snakes` writes."""
        refuse = SnakesConversionError(
            f"{where}: flush {label._expr!r} produces an arbitrary multiset; tcpn output "
            "arcs produce count copies of one value, optionally under a condition: "
            "'[e] * (k) if (c) else []'"
        )
        try:
            tree = ast.parse(label._expr, mode="eval").body
        except SyntaxError:
            raise refuse from None
        when = None
        if isinstance(tree, ast.IfExp):
            if not (isinstance(tree.orelse, ast.List) and not tree.orelse.elts):
                raise refuse
            when, tree = ast.unparse(tree.test), tree.body
        count: int | str = 1
        if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Mult):
            k = tree.right
            count = k.value if isinstance(k, ast.Constant) and isinstance(k.value, int) \
                else ast.unparse(k)
            tree = tree.left
        if not (isinstance(tree, ast.List) and len(tree.elts) == 1):
            raise refuse
        text = ast.unparse(tree.elts[0])
        if text == "dot" and self._unit(place):
            text = "()"
        self.net.add_output(place, self.t.name, text, count, when=when, delay=delay)


def _literal(value: Any, where: str) -> str:
    if value is sn.dot:
        return "()"
    text = repr(value)
    try:
        same = ast.literal_eval(text) == value
    except (ValueError, SyntaxError):
        same = False
    if not same:
        raise SnakesConversionError(
            f"{where}: value {value!r} can't be written as a Python literal; declare it "
            "in the SNAKES net and use its name in an expression"
        )
    return text
