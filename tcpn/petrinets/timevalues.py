"""Clock-valued token fields (colour set ``CLOCK``) and how relative state spaces move them.

A relative state space (:func:`~tcpn.petrinets.statespace.space.explore`, ``clock="relative"``)
keeps every timestamp relative to the state's own clock, so that states that differ only
in absolute time are one. Token *values* may hold absolute times too: a packet's send
time, the moment a queue went idle. A net says which by giving those fields the colour set
:data:`~tcpn.petrinets.colours.CLOCK` (a record field, a product component, a list
element, or the whole value); the explorer then keeps them relative as well. When time
passes by ``d`` every ``CLOCK`` value moves by ``-d`` (rounded like timestamps; unlike
timestamps it is not clamped at 0: a send time in the past stays in the past), and ``now``
reads the firing time relative to the state's clock.

This is a bisimulation (the relative space has the futures of the absolute one) exactly
when every transition is **translation invariant**: moving the clock, every timestamp and
every ``CLOCK`` value by one amount ``D`` moves its enabling time by ``D``, keeps the same
bindings enabled, and moves the timestamps and ``CLOCK`` values it produces by ``D`` while
leaving every other value unchanged. In practice: ``now`` and ``CLOCK`` values enter only
differences of two times (``now - p.ts``: an RTT) or are copied into ``CLOCK`` fields
(``ts=now``, ``echo=p.ts``); a guard ``now > 5`` or a field ``ts=2 * now`` breaks it.
How it is checked:

* statically (:func:`clock_reads`): in relative time ``now`` is refused in guards, delays,
  arc conditions, counts and input arcs (they would decide by absolute time), and is
  allowed in output arcs and code actions only when the net has ``CLOCK`` values at all;
* dynamically (:func:`translation_mismatch`): the explorer fires the successors of its
  first ``shift_checks`` states again with the clock, every timestamp and every ``CLOCK``
  value moved by :data:`CHECK_OFFSET_S` and refuses the net, naming the transition and the
  place, when the results differ by more than the moved time.

The second check covers what a code action does inside, but only on the states it fires
(``explore(..., shift_checks=None)`` checks every state; the tests of the TCP verification
nets do).

>>> from tcpn.petrinets.colours import CLOCK, INT, ProductSet
>>> move = clock_shift(ProductSet(INT, CLOCK), decimals=9)
>>> move((3, 1.25), -0.25)
(3, 1.0)
>>> clock_shift(INT, decimals=9) is None
True
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tcpn.petrinets.colours import ClockSet, ColourSet, ListSet, ProductSet, RecordSet
from tcpn.petrinets.inscriptions import Inscription
from tcpn.petrinets.net import ArcKind, PetriNet

__all__ = ["CHECK_OFFSET_S", "TOLERANCE", "ClockValues", "Shift", "alike", "binding_shifts",
           "clock_reads", "clock_shift", "close", "shifted_binding", "split_floats",
           "translation_mismatch"]

#: How far the translation check moves the clock: far from every time a model uses, so
#: that a guard or code action comparing ``now`` with a constant decides differently.
CHECK_OFFSET_S = 1000.0
#: How far apart two floats computed along different routes may be and still count as
#: equal (absolute below 1, relative above): moved clocks change the last bits, and
#: relative times are rounded to ``TIME_DECIMALS``.
TOLERANCE = 1e-7

#: ``shift(value, delta)``: ``value`` with every ``CLOCK`` part moved by ``delta``.
Shift = Callable[[Any, float], Any]


def clock_shift(colour: ColourSet, decimals: int) -> Shift | None:
    """How to move the ``CLOCK`` parts of a value of ``colour`` (``None``: it has none)."""
    if isinstance(colour, ClockSet):
        return lambda value, delta: round(value + delta, decimals)
    if isinstance(colour, RecordSet | ProductSet):
        parts = colour.fields if isinstance(colour, RecordSet) else enumerate(colour.components)
        moves = tuple((i, f) for i, (_name, c) in enumerate(parts)
                      if (f := clock_shift(c, decimals)) is not None)
        if not moves:
            return None
        record = isinstance(colour, RecordSet)

        def move_parts(value: Any, delta: float) -> Any:
            items = list(value)
            for i, f in moves:
                items[i] = f(items[i], delta)
            return type(value)._make(items) if record else tuple(items)
        return move_parts
    if isinstance(colour, ListSet):
        element = clock_shift(colour.element, decimals)
        if element is None:
            return None
        return lambda value, delta: tuple(element(v, delta) for v in value)
    return None


class ClockValues:
    """The places of a net whose token values hold ``CLOCK`` parts, and how to move them.

    ``places[p]`` is the :data:`Shift` of place number ``p`` (in ``place_names`` order).
    """

    def __init__(self, net: PetriNet, place_names: Sequence[str], decimals: int):
        self.places: dict[int, Shift] = {}
        for p, name in enumerate(place_names):
            move = clock_shift(net.places[name].colour, decimals)
            if move is not None:
                self.places[p] = move

    def __bool__(self) -> bool:
        return bool(self.places)

    def move(self, p: int, place: dict[Any, Any], delta: float, timed: bool) -> dict[Any, Any]:
        """Place ``p``'s content (compiled form) with its values' ``CLOCK`` parts moved by
        ``delta`` (timestamps are left as they are)."""
        move = self.places[p]
        out: dict[Any, Any] = {}
        for value, tokens in place.items():
            moved = move(value, delta)
            if moved in out:  # two values a rounding step apart become one
                out[moved] = sorted(out[moved] + list(tokens)) if timed else out[moved] + tokens
            else:
                out[moved] = list(tokens) if timed else tokens
        return out


def clock_reads(net: PetriNet, has_clock_values: bool) -> list[tuple[str, str]]:
    """``(element, why)`` for every element that reads ``now`` where relative time cannot
    allow it (see the module docstring); empty when the net may be explored relatively."""
    found = []
    for name, t in net.transitions.items():
        declared = set(net.scope_of(name))
        if "now" in declared:  # a declaration named ``now`` shadows the clock
            continue
        if "now" in t.action_inputs and not has_clock_values:
            found.append((f"code action of transition {name}", "no place holds CLOCK values"))
        # (element, text, whether it may read ``now``: only what writes tokens may)
        texts: list[tuple[str, Any, bool]] = [(f"guard of transition {name}", t.guard, False),
                                              (f"delay of transition {name}", t.delay, False)]
        for arc in net.arcs_of(name):
            texts += [(arc.where, arc.inscription, arc.kind is ArcKind.OUTPUT),
                      (f"condition of {arc.where}", arc.when, False),
                      (f"count of {arc.where}", arc.count, False),
                      (f"delay of {arc.where}", arc.delay, False)]
        for where, text, writes in texts:
            if isinstance(text, str) and not (writes and has_clock_values) and \
                    "now" in Inscription.parse(text, where).names:
                why = "no place holds CLOCK values" if writes else "it decides by absolute time"
                found.append((f"{where}: {text!r}", why))
    return found


class _Float:
    """Where a float stood in a value split by :func:`split_floats`."""

    def __repr__(self) -> str:
        return "<float>"


_FLOAT = _Float()


def split_floats(value: Any) -> tuple[str, tuple[float, ...]]:
    """``value`` as its form without floats (a string) and its floats in order: two values
    computed along different routes (absolute or relative times, moved clocks) are alike
    when their forms are equal and their floats :func:`close`.

    >>> split_floats((3, 0.25, {"a": 1.5}))
    ("(3, <float>, (('a', <float>),))", (0.25, 1.5))
    """
    floats: list[float] = []

    def walk(v: Any) -> Any:
        if isinstance(v, float):
            floats.append(v)
            return _FLOAT
        if isinstance(v, tuple | list):
            return tuple(walk(x) for x in v)
        if isinstance(v, dict):
            return tuple(sorted(((walk(k), walk(x)) for k, x in v.items()), key=repr))
        return v

    form = repr(walk(value))
    return form, tuple(floats)


def close(one: tuple[float, ...], other: tuple[float, ...]) -> bool:
    """Whether two float vectors agree within :data:`TOLERANCE` (absolute and relative)."""
    return len(one) == len(other) and all(
        abs(x - y) <= TOLERANCE * max(1.0, abs(x), abs(y)) for x, y in zip(one, other,
                                                                            strict=True))


def alike(one: Any, other: Any) -> bool:
    """Whether two values are equal up to float noise (:func:`split_floats`)."""
    (form_a, floats_a), (form_b, floats_b) = split_floats(one), split_floats(other)
    return form_a == form_b and close(floats_a, floats_b)


def translation_mismatch(base: Sequence[tuple[str, list[dict[Any, Any]]]],
                         moved: Sequence[tuple[str, list[dict[Any, Any]]]],
                         place_names: Sequence[str]) -> str | None:
    """Compare the successors of a state (``(transition, marking relative to the firing
    time)``) with those of the same state moved in time; ``None`` when they agree, else a
    sentence naming the transition and the place that differ."""
    def keyed(items: Sequence[tuple[str, list[dict[Any, Any]]]]
              ) -> dict[str, list[list[tuple[str, tuple[float, ...]]]]]:
        out: dict[str, list[list[tuple[str, tuple[float, ...]]]]] = {}
        for name, marking in items:
            out.setdefault(name, []).append([split_floats(place) for place in marking])
        return {name: sorted(markings) for name, markings in out.items()}

    at_base, at_moved = keyed(base), keyed(moved)
    for name in sorted(set(at_base) | set(at_moved)):
        one, other = at_base.get(name, []), at_moved.get(name, [])
        if len(one) != len(other):
            return (f"transition {name} has {len(one)} firing(s) next at this state and "
                    f"{len(other)} when the clock reads {CHECK_OFFSET_S:g} s more")
        for a, b in zip(one, other, strict=True):
            for place, (form_a, floats_a), (form_b, floats_b) in zip(place_names, a, b,
                                                                     strict=True):
                if form_a != form_b or not close(floats_a, floats_b):
                    return (f"transition {name} puts {form_a} {floats_a} on place {place} at "
                            f"this state and {form_b} {floats_b} (moved back) when the clock "
                            f"reads {CHECK_OFFSET_S:g} s more")
    return None


def binding_shifts(net: PetriNet, transition: str, decimals: int) -> dict[str, Shift]:
    """The variables of ``transition`` bound by an input arc to a value with ``CLOCK``
    parts (an arc ``p`` or ``(h, p)`` on a place of such a colour), with their shifts:
    what turns a binding of a relative state space into the simulator's at a given clock."""
    out: dict[str, Shift] = {}
    for arc in net.arcs_of(transition):
        if arc.kind is ArcKind.OUTPUT or not isinstance(arc.inscription, str):
            continue
        colour = net.places[arc.place].colour
        try:
            tree = ast.parse(arc.inscription, mode="eval").body
        except SyntaxError:
            continue
        pairs: list[tuple[ast.expr, ColourSet]] = [(tree, colour)]
        if isinstance(tree, ast.Tuple) and isinstance(colour, ProductSet) and len(
                tree.elts) == len(colour.components):
            pairs = list(zip(tree.elts, colour.components, strict=True))
        for node, part in pairs:
            if isinstance(node, ast.Name):
                move = clock_shift(part, decimals)
                if move is not None:
                    out[node.id] = move
    return out


def shifted_binding(binding: Mapping[str, Any], shifts: Mapping[str, Shift],
                    delta: float) -> dict[str, Any]:
    """``binding`` with the ``CLOCK`` parts of its variables moved by ``delta``."""
    return {k: shifts[k](v, delta) if k in shifts else v for k, v in binding.items()}
