"""Offset groups: integer token fields kept relative to a moving base (sequence numbers).

Some nets count without end: a sender numbers its segments 0, 1, 2, ... and a queue its
arrivals; their state spaces never close although nothing they do depends on the numbers'
absolute values, only on their differences. An :class:`OffsetGroup` declares such numbers:
for each of its places, which integers a token value holds (``numbers``) and how to move
them all by one amount (``shift``). The explorer (``explore(..., offsets=[...])``) then
keeps every state *canonical*: the smallest number of the group is subtracted from every
number of the group, so that states that differ only by a common offset are one.

A place may also declare ``normal``: a value-level normalisation applied after the shift
(a cap, a rounding): an abstraction the declaring model states and justifies; the
explorer applies it to every state and does not check it.

The quotient is a bisimulation exactly when every transition is **offset invariant**:
adding ``D`` to every number of the group keeps the same bindings enabled and adds ``D``
to the numbers it produces, leaving everything else unchanged. A guard ``n < 10`` on a
group number breaks it (a finite counter). It is checked like translation in time
(:mod:`~tcpn.petrinets.timevalues`): the successors of the first ``shift_checks`` states
are fired again with every number moved by :data:`OFFSET_CHECK` and their canonical forms
compared; a difference is an :class:`~tcpn.errors.InputError` naming the group, the
transition and the place.

A ``shift`` may treat a number below the base as the base (a "floor": a mark that only
ever meets comparisons with numbers at least the base reads alike anywhere below it);
that is the declaring model's claim, which the check covers on the states it fires.

>>> group = OffsetGroup("count", {"n": OffsetField(numbers=lambda v: (v,),
...                                                shift=lambda v, d: v + d)})
>>> from tcpn.petrinets.colours import INT
>>> from tcpn.petrinets.net import PetriNet, Place
>>> net = PetriNet("c")
>>> net.add_place(Place("n", INT, initial=[5]))
>>> Offsets(net, ["n"], [group]).canonical([{5: 1}])
[{0: 1}]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tcpn.errors import InputError
from tcpn.petrinets.net import PetriNet
from tcpn.petrinets.timevalues import split_floats

__all__ = ["OFFSET_CHECK", "OffsetField", "OffsetGroup", "Offsets"]

#: How far the offset check moves every number of a group: far beyond what the small
#: transfers of the tests reach, so that a comparison with a constant decides differently.
OFFSET_CHECK = 1_000_003

Marking = list[dict[Any, Any]]


def _same(value: Any, delta: int) -> Any:
    return value


@dataclass(frozen=True)
class OffsetField:
    """The numbers of an offset group that one place's token values hold.

    ``numbers(value)``: the numbers that set the base (a floor is not one of them);
    ``shift(value, delta)``: ``value`` with every number of the group moved by ``delta``;
    ``normal(value)``: an optional normalisation after the shift (see the module docstring).
    """

    numbers: Callable[[Any], Iterable[int]] = field(default=lambda value: ())
    shift: Callable[[Any, int], Any] = _same
    normal: Callable[[Any], Any] | None = None


def _mover(f: OffsetField, delta: int, normal: bool) -> Callable[[Any], Any]:
    """A value's move by ``delta`` (then ``f.normal`` when ``normal``)."""
    shift, then = f.shift, f.normal if normal else None

    def move(value: Any) -> Any:
        moved = shift(value, delta)
        return moved if then is None else then(moved)
    return move


@dataclass(frozen=True)
class OffsetGroup:
    """Named numbers that move together: ``fields`` maps a place name to its
    :class:`OffsetField`; ``anchor`` (optional) names the place that starts them."""

    name: str
    fields: Mapping[str, OffsetField]
    #: a place whose marking starts the group (e.g. a connection's control block, created
    #: with absolute initial numbers): while it is empty the numbers are left absolute
    anchor: str | None = None


class Offsets:
    """The offset groups of a net, by place number (``place_names`` order): what the
    explorer calls to make a marking canonical and to check offset invariance."""

    def __init__(self, net: PetriNet, place_names: Sequence[str],
                 groups: Iterable[OffsetGroup]):
        number = {name: p for p, name in enumerate(place_names)}
        self.groups: list[tuple[str, tuple[tuple[int, OffsetField], ...]]] = []
        #: the anchor place of each group (by group position), if any
        self.anchors: list[int | None] = []
        for group in groups:
            if not isinstance(group, OffsetGroup):
                raise InputError(f"offsets: expected OffsetGroup values, got {group!r}")
            for name in [*group.fields, *([group.anchor] if group.anchor else [])]:
                if name not in net.places:
                    raise InputError(f"offset group {group.name}: net {net.name} has no "
                                     f"place {name!r}")
            self.groups.append((group.name, tuple((number[n], f) for n, f in
                                                  group.fields.items())))
            self.anchors.append(None if group.anchor is None else number[group.anchor])
        #: the places some group touches (their contents may change when made canonical)
        self.places = tuple(sorted({p for _n, fields in self.groups for p, _f in fields}
                                   | {a for a in self.anchors if a is not None}))

    def __bool__(self) -> bool:
        return bool(self.groups)

    @staticmethod
    def _move(place: dict[Any, Any], move: Callable[[Any], Any]) -> dict[Any, Any]:
        """``place`` (untimed: value -> count; timed: value -> stamps) with its values moved."""
        out: dict[Any, Any] = {}
        for value, tokens in place.items():
            moved = move(value)
            if moved in out:  # two values that become one
                out[moved] = sorted(out[moved] + tokens) if isinstance(tokens, list) \
                    else out[moved] + tokens
            else:
                out[moved] = list(tokens) if isinstance(tokens, list) else tokens
        return out

    def canonical(self, marking: Marking) -> Marking:
        """``marking`` (only the group places need be decoded) with each group's smallest
        number made 0 and its normalisations applied; the places not touched are kept."""
        out = list(marking)
        for (_name, fields), anchor in zip(self.groups, self.anchors, strict=True):
            if anchor is not None and not marking[anchor]:
                continue
            numbers = [n for p, f in fields for value in out[p] for n in f.numbers(value)]
            base = min(numbers) if numbers else 0
            for p, f in fields:
                if base or f.shift is not _same or f.normal is not None:
                    out[p] = self._move(out[p], _mover(f, -base, normal=True))
        return out

    def moved(self, marking: Marking, delta: int) -> Marking:
        """``marking`` with every number of every group moved by ``delta``."""
        out = list(marking)
        for (_name, fields), anchor in zip(self.groups, self.anchors, strict=True):
            if anchor is not None and not marking[anchor]:
                continue
            for p, f in fields:
                out[p] = self._move(out[p], _mover(f, delta, normal=False))
        return out

    def mismatch(self, base: Sequence[tuple[str, Marking]], moved: Sequence[tuple[str, Marking]],
                 place_names: Sequence[str]) -> str | None:
        """Compare the canonical successors of a state with those of the same state with
        every number moved by :data:`OFFSET_CHECK`; ``None`` when they agree, else a
        sentence naming the transition and the place."""
        def keyed(items: Sequence[tuple[str, Marking]]) -> dict[str, list[list[Any]]]:
            out: dict[str, list[list[Any]]] = {}
            for name, marking in items:
                out.setdefault(name, []).append(
                    [split_floats(place) for place in self.canonical(marking)])
            return {name: sorted(markings) for name, markings in out.items()}

        at_base, at_moved = keyed(base), keyed(moved)
        groups = ", ".join(name for name, _f in self.groups)
        for name in sorted(set(at_base) | set(at_moved)):
            one, other = at_base.get(name, []), at_moved.get(name, [])
            if len(one) != len(other):
                return (f"offset groups ({groups}): transition {name} has {len(one)} "
                        f"firing(s) next at this state and {len(other)} when every number "
                        f"is {OFFSET_CHECK} more")
            for a, b in zip(one, other, strict=True):
                for place, x, y in zip(place_names, a, b, strict=True):
                    if x != y:
                        return (f"offset groups ({groups}): transition {name} puts {x[0]} on "
                                f"place {place} at this state and {y[0]} (made canonical) "
                                f"when every number is {OFFSET_CHECK} more")
        return None
