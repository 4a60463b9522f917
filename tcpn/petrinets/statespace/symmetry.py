"""Symmetry reduction: one state per orbit of a group of net renamings.

A net that repeats one component (identical flows, philosophers) has states that differ
only by which copy does what. A :class:`Renaming` says how one copy becomes another:
a bijection of place names, one of transition names, and a map on token values (a
packet's flow number, its destination node), applied to every token and binding value.
A :class:`Symmetry` lists a group of them (the identity included, closed under
composition: checked on their place permutations, an :class:`~tcpn.errors.InputError`
otherwise; the value maps are the declaring model's to get right, which the automorphism
check below tests).
``explore(net, symmetry=...)`` keeps every state *canonical*: of the images of a marking
under the group's renamings, the one whose place contents have the smallest content
numbers, place by place (a fixed function of the orbit: a content's number never changes
once given), so the space has one state per orbit (up to ``n!`` fewer for ``n``
interchangeable copies).

The quotient is exact (a bisimulation, the renamings mapping edges to edges) when every
renaming is an **automorphism** of the net's behaviour: at the image of a state the
firings possible next are the images of those at the state (transition renamed, marking
after renamed), priorities and the earliest-time rule included. The explorer checks it
like translation in time: at the first ``shift_checks`` states (``None``: all) every
firing of every renaming's image is computed and compared with the renamed firings; a
difference is an :class:`~tcpn.errors.InputError` naming the renaming, the transition
and the place. Checked at every representative and every element, it covers every
reachable state (each is the image of a representative).

What a quotient answers: reachability, dead markings (up to renaming) and CTL/LTL
properties whose atoms read the same at a marking and at every image of it; a property
about one copy is preserved only by the renamings that keep that copy in place (the
declaring model passes that subgroup). Paths of the quotient are turned back into paths
of the net by :func:`lift_path`, which applies the renamings along them.

>>> from tcpn.petrinets.colours import INT
>>> from tcpn.petrinets.net import PetriNet, Place, Transition
>>> net = PetriNet("two")
>>> for i in (0, 1):
...     net.add_place(Place(f"c{i}", INT, initial=[0]))
...     net.add_transition(Transition(f"up{i}", guard="x < 2"))
...     net.add_input(f"c{i}", f"up{i}", "x")
...     net.add_output(f"c{i}", f"up{i}", "x + 1")
>>> swap = Renaming("c0<->c1", {"c0": "c1", "c1": "c0"}, {"up0": "up1", "up1": "up0"})
>>> from tcpn.petrinets.statespace.space import explore
>>> explore(net).n_states, explore(net, symmetry=Symmetry((IDENTITY, swap))).n_states
(9, 6)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tcpn.errors import InputError
from tcpn.petrinets.net import PetriNet, Token
from tcpn.petrinets.statespace.paths import Step

if TYPE_CHECKING:
    from tcpn.petrinets.statespace.store import MarkingStore

# the explorer (statespace.space) imports this module: its StateSpace and
# SuccessorGenerator are read here as they are, not imported
StateSpace = Any
SuccessorGenerator = Any

__all__ = ["IDENTITY", "Renaming", "Symmetry", "SymmetryIndex", "lift_path"]

Marking = list[dict[Any, Any]]

#: How many (renaming, place, content) images the canonical form memoises before it
#: forgets them all (memory stays bounded, the numbers stay valid).
_MEMO_SIZE = 1 << 19


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Renaming:
    """One element of a symmetry group: ``places`` and ``transitions`` map names to their
    images (names left out map to themselves), ``value`` maps a token or binding value to
    its image (the identity by default), ``value_places`` names the places whose values
    ``value`` may change (``None``: every place)."""

    name: str
    places: Mapping[str, str] = field(default_factory=dict)
    transitions: Mapping[str, str] = field(default_factory=dict)
    value: Callable[[Any], Any] = _same
    value_places: frozenset[str] | None = None

    def place(self, name: str) -> str:
        """The image of place ``name``."""
        return self.places.get(name, name)

    def transition(self, name: str) -> str:
        """The image of transition ``name``."""
        return self.transitions.get(name, name)

    def marking(self, marking: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
        """A marking as :meth:`StateSpace.marking` gives it (``place -> tokens``), renamed."""
        return {self.place(name): [Token(self.value(t.value), t.time) for t in tokens]
                for name, tokens in marking.items()}



#: The renaming that changes nothing (every group holds it).
IDENTITY = Renaming("identity")


@dataclass(frozen=True)
class Symmetry:
    """A group of renamings, every element listed (:data:`IDENTITY` among them), and what
    they exchange, said in words (``description``: shown in summaries and errors)."""

    elements: tuple[Renaming, ...]
    description: str = ""

    def __post_init__(self) -> None:
        if not self.elements or not any(e is IDENTITY or (not e.places and not e.transitions
                                                          and e.value is _same)
                                        for e in self.elements):
            raise InputError(f"symmetry {self.description or ''}: the group must list the "
                             "identity among its elements")

    def __len__(self) -> int:
        return len(self.elements)


def _move(place: dict[Any, Any], value: Callable[[Any], Any]) -> dict[Any, Any]:
    """A compiled place content (untimed: value -> count; timed: value -> stamps) with its
    values mapped (two values that become one merge)."""
    out: dict[Any, Any] = {}
    for v, tokens in place.items():
        image = value(v)
        if image in out:
            out[image] = sorted(out[image] + tokens) if isinstance(tokens, list) \
                else out[image] + tokens
        else:
            out[image] = list(tokens) if isinstance(tokens, list) else tokens
    return out


def _closed(symmetry: Symmetry, permutations: Sequence[tuple[int, ...]]) -> None:
    """Refuse a list of renamings whose place permutations are not closed under
    composition: the smallest image over a set that is not a group is not a function of
    the orbit (two states of one orbit could keep two representatives)."""
    known = set(permutations)
    for a, first in zip(permutations, symmetry.elements, strict=True):
        for b, then in zip(permutations, symmetry.elements, strict=True):
            if tuple(b[q] for q in a) not in known:
                raise InputError(f"symmetry {symmetry.description or ''}: the renamings are "
                                 f"not a group: {first.name} then {then.name} is none of "
                                 "them (list every composition)")


class SymmetryIndex:
    """A :class:`Symmetry` on one compiled net (places by number): what the explorer calls
    to make a packed marking canonical and to check that the renamings are automorphisms."""

    def __init__(self, net: PetriNet, place_names: Sequence[str], symmetry: Symmetry):
        if not isinstance(symmetry, Symmetry):
            raise InputError(f"symmetry: expected a Symmetry, got {symmetry!r}")
        self.symmetry = symmetry
        number = {name: p for p, name in enumerate(place_names)}
        #: per element: the image place of each place, and whether its values move
        self.permutations: list[tuple[int, ...]] = []
        self.valued: list[tuple[bool, ...]] = []
        for element in symmetry.elements:
            images = []
            for name in place_names:
                image = element.place(name)
                if image not in number:
                    raise InputError(f"symmetry {element.name}: place {name}'s image "
                                     f"{image!r} is not a place of net {net.name}")
                if net.places[image].colour != net.places[name].colour:
                    raise InputError(f"symmetry {element.name}: place {name} and its image "
                                     f"{image} have different colour sets")
                images.append(number[image])
            if len(set(images)) != len(images):
                raise InputError(f"symmetry {element.name}: two places have the same image")
            for t, image in element.transitions.items():
                if t not in net.transitions or image not in net.transitions:
                    raise InputError(f"symmetry {element.name}: transition {t} -> {image} "
                                     f"names a transition net {net.name} does not have")
            self.permutations.append(tuple(images))
            self.valued.append(tuple(element.value is not _same and (
                element.value_places is None or name in element.value_places)
                for name in place_names))
        _closed(symmetry, self.permutations)
        moved = {p for perm, valued in zip(self.permutations, self.valued, strict=True)
                 for p, q in enumerate(perm) if p != q or valued[p]}
        #: the places some renaming moves or changes (the others are left as they are)
        self.places = tuple(sorted(moved))
        self.place_names = tuple(place_names)
        #: per element: the place each place's image comes from
        self.inverses = [tuple(sorted(range(len(perm)), key=perm.__getitem__))
                         for perm in self.permutations]
        self.forget()

    def __bool__(self) -> bool:
        return len(self.symmetry.elements) > 1

    def image(self, e: int, place: dict[Any, Any], p: int) -> dict[Any, Any]:
        """Place ``p``'s content as element ``e`` puts it on its image place."""
        return _move(place, self.symmetry.elements[e].value) if self.valued[e][p] else place

    def marking(self, e: int, marking: Marking) -> Marking:
        """A whole compiled marking (``marking[p]``: place ``p``'s content) renamed by
        element ``e``."""
        out: Marking = list(marking)
        for p, q in enumerate(self.permutations[e]):
            out[q] = self.image(e, marking[p], p)
        return out

    def forget(self) -> None:
        """Empty the memo of images (the store's layout changed, or it grew too large)."""
        #: per element and place: content number -> the number of its image (on the
        #: image place)
        self.memo: list[list[dict[int, int]]] = [[{} for _ in self.place_names]
                                                 for _ in self.permutations]
        self.memo_size = 0

    def _image_number(self, store: MarkingStore, e: int, p: int, number: int) -> int:
        """The number of content ``number`` of place ``p`` renamed by element ``e``, on its
        image place (memoised; may set ``store.overflow``)."""
        image = self.memo[e][p].get(number)
        if image is None:
            image = store.encode(self.permutations[e][p],
                                 self.image(e, store.decode(p, number), p))
            if self.memo_size >= _MEMO_SIZE:
                self.forget()
            self.memo[e][p][number] = image
            self.memo_size += 1
        return image

    def image_key(self, store: MarkingStore, key: int, e: int) -> int:
        """The packed marking ``key`` renamed by element ``e`` (in ``store``; may set
        ``store.overflow``, after which the result is not to be used)."""
        shifts, masks = store.shifts, store.masks
        perm = self.permutations[e]
        out = key
        for p in self.places:
            q = perm[p]
            image = self._image_number(store, e, p, (key >> shifts[p]) & masks[p])
            out += (image - ((key >> shifts[q]) & masks[q])) << shifts[q]
        return out

    def canonical(self, store: MarkingStore, key: int) -> int:
        """The representative of ``key``'s orbit: the image whose content numbers, read in
        place order, are smallest. An image is given up at its first place above the best
        so far, so most cost a few memo look-ups."""
        shifts, masks, places = store.shifts, store.masks, self.places
        fields = [0] * len(self.place_names)
        for p in places:
            fields[p] = (key >> shifts[p]) & masks[p]
        best = [fields[q] for q in places]
        chosen = 0
        for e in range(1, len(self.permutations)):
            inverse, memo = self.inverses[e], self.memo[e]
            image: list[int] = []
            below = False
            for position, q in enumerate(places):
                p = inverse[q]
                number = memo[p].get(fields[p])
                if number is None:
                    number = self._image_number(store, e, p, fields[p])
                    if store.overflow:
                        return key
                if not below:
                    if number > best[position]:
                        break
                    below = number < best[position]
                image.append(number)
            else:
                if below:
                    chosen, best = e, image
        if not chosen:
            return key
        for position, q in enumerate(places):
            key += (best[position] - fields[q]) << shifts[q]
        return key

    def mismatch(self, marking: Marking,
                 fire_next: Callable[[Marking], list[tuple[str, float, Marking]]]) -> str | None:
        """``None`` when every element maps the firings possible next at ``marking`` onto
        those at its image, else a sentence naming the renaming, the transition, the place."""
        base = fire_next(marking)
        for e, element in enumerate(self.symmetry.elements):
            if not element.places and not element.transitions and element.value is _same:
                continue
            expected: dict[str, list[Marking]] = {}
            for name, _at, after in base:
                expected.setdefault(element.transition(name), []).append(
                    self.marking(e, after))
            found: dict[str, list[Marking]] = {}
            for name, _at, after in fire_next(self.marking(e, marking)):
                found.setdefault(name, []).append(after)
            for name in sorted(set(expected) | set(found)):
                one, other = expected.get(name, []), found.get(name, [])
                if len(one) != len(other):
                    return (f"symmetry {element.name}: transition {name} has {len(other)} "
                            f"firing(s) next at the image of this state and {len(one)} are "
                            "the images of the firings here")
                for after in one:
                    if after in other:
                        other.remove(after)
                        continue
                    near = other[0]
                    place = next(self.place_names[q] for q in range(len(after))
                                 if after[q] != near[q])
                    return (f"symmetry {element.name}: transition {name} puts "
                            f"{near[self.place_names.index(place)]!r} on place {place} at the "
                            f"image of this state, where the renamed firing puts "
                            f"{after[self.place_names.index(place)]!r}")
        return None


def _element_to(index: SymmetryIndex, source: tuple[Marking, float],
                target: tuple[Marking, float]) -> int | None:
    """The element renaming marking ``source`` into ``target`` (with their clocks), if any."""
    if source[1] != target[1]:
        return None
    for e in range(len(index.permutations)):
        if index.marking(e, source[0]) == target[0]:
            return e
    return None


class _Unreduced:
    """The net's own successors, in a store of their own (the reduced space's store keeps
    its layout: real markings bring contents it never met)."""

    def __init__(self, gen: SuccessorGenerator):
        self.gen = type(gen)(gen.compiled, "relative" if gen.relative else "absolute")

    def pack(self, marking: Marking, clock: float) -> int:
        gen = self.gen
        while True:
            numbers = [gen.store.encode(p, place) for p, place in enumerate(marking)]
            if gen.absolute:
                numbers.append(gen.store.intern(gen.clock_field, clock))
            if not gen.store.overflow:
                return gen.store.pack(numbers)
            gen.store.widen()
            gen.relayout()

    def successors(self, state: tuple[Marking, float]) -> list[tuple[str, dict[str, Any],
                                                                   Marking, float]]:
        """``(transition, binding, marking after, clock after)`` of every firing next."""
        gen = self.gen
        while True:
            found = gen.successors(self.pack(*state))
            if not gen.store.overflow:
                return [(ct.name, dict(zip(ct.variables, b, strict=True)),
                         gen.store.marking(new), gen.clock_of(new))
                        for ct, b, _elapsed, new in found]
            gen.store.widen()
            gen.relayout()


def lift_path(space: StateSpace, states: Sequence[int], steps: Sequence[Step],
              cycle_start: int | None = None) -> tuple[list[Step], list[Step]]:
    """Turn a path of a symmetry-reduced space into a path of the net, from its real
    initial marking: ``states`` are the quotient states the path visits (the initial one
    first, one more than ``steps``), ``steps`` its firings there. Each step fires, in the
    real marking reached so far, the renamed transition and binding; the renaming is the
    one mapping the quotient's state onto the real one, carried along. Returns the real
    stem, and with ``cycle_start`` (a lasso: ``steps[cycle_start:]`` lead from
    ``states[cycle_start]`` back to it) a real lasso: the quotient's cycle is followed round
    after round, each round ending in the same orbit, until a real marking at a round's end
    comes back (within the group's order); the rounds before it join the stem, the rounds
    from it are the real cycle."""
    index = space.generator.symmetry
    if index is None:
        return list(steps), []
    net = _Unreduced(space.generator)
    store = space.generator.store

    def quotient(position: int) -> tuple[Marking, float]:
        key = space.key(states[position])
        return store.marking(key), space.clock(states[position])

    initial = net.gen.initial_key()
    real = (net.gen.store.marking(initial), 0.0)
    rho = _element_to(index, quotient(0), real)
    if rho is None:
        raise RuntimeError("lift_path: no renaming maps the quotient's initial state onto the "
                           "net's initial marking")

    def fire(position: int, rho: int,
             real: tuple[Marking, float]) -> tuple[Step, int, tuple[Marking, float]]:
        step = steps[position]
        element = index.symmetry.elements[rho]
        # the image's variables may be renamed too (an observer's per-flow variable): the
        # binding is matched by its values in the transition's variable order
        name, values = element.transition(step.transition), \
            [element.value(v) for v in step.binding.values()]
        binding, after = next(((b, (m, c)) for t, b, m, c in net.successors(real)
                               if t == name and list(b.values()) == values), ({}, None))
        if after is None:
            raise RuntimeError(f"lift_path: the renamed step {name} is not possible at the "
                               f"real marking of step {position}")
        nxt = _element_to(index, quotient(position + 1), after)
        if nxt is None:
            raise RuntimeError(f"lift_path: step {position} reaches a marking no renaming "
                               "maps the quotient's next state onto")
        return Step(name, binding, _tokens(space, after[0]), step.clock), nxt, after

    cycle = cycle_start is not None
    start = len(steps) if cycle_start is None else cycle_start
    stem: list[Step] = []
    for position in range(start):
        step, rho, real = fire(position, rho, real)
        stem.append(step)
    if not cycle:
        return stem, []
    # each round of the quotient's cycle maps the real marking at its start to one of the
    # same orbit: the rounds' ends repeat within the orbit's size (the group's order)
    ends, rounds = [real], []
    for _round in range(len(index.permutations) + 1):
        this_round = []
        for position in range(start, len(steps)):
            step, rho, real = fire(position, rho, real)
            this_round.append(step)
        rounds.append(this_round)
        if real in ends:
            first = ends.index(real)
            return ([*stem, *(s for r in rounds[:first] for s in r)],
                    [s for r in rounds[first:] for s in r])
        ends.append(real)
    raise RuntimeError("lift_path: the cycle did not close within the group's order")


def _tokens(space: StateSpace, marking: Marking) -> dict[str, list[Any]]:
    """``place -> tokens`` of a compiled marking (as :meth:`StateSpace.marking`)."""
    compiled = space.generator.compiled
    out: dict[str, list[Any]] = {}
    for name, timed, place in zip(compiled.place_names, compiled.timed, marking, strict=True):
        out[name] = [Token(v, float(t)) for v, stamps in place.items() for t in stamps] \
            if timed else [Token(v, 0.0) for v, n in place.items() for _ in range(n)]
    return out
