"""Compact marking storage for the state-space explorer: hash-consed place contents in one int.

Each place's content (a compiled-marking dict) gets a canonical hashable *content key*;
the store interns every distinct key once per place and numbers it (0 is the empty
place). A marking is then one Python ``int``: the content numbers of the places packed
side by side in bit fields. An untimed content is *found* by a key that needs no sorting
(:func:`untimed_lookup`: the value itself for one token, else the frozenset of the
``(value, count)`` items), so a multiset already seen costs one hash; only a new one is
sorted into its canonical key, and its dict is kept to be copied for the next firing.
Field widths grow when a place sees more contents than its field can number;
:meth:`MarkingStore.widen` then says how to re-pack the keys already stored. Keys of nets
whose fields fit 64 bits become NumPy ``uint64`` arrays once the exploration ends, others
fixed-width byte strings.

>>> store = MarkingStore(timed=(False, True))
>>> key = store.pack([store.encode(0, {"b": 1, "a": 2}), store.encode(1, {7: [0.0, 1.5]})])
>>> store.marking(key), store.encode(0, {"a": 2, "b": 1}) == store.field(key, 0)
([{'a': 2, 'b': 1}, {7: [0.0, 1.5]}], True)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

__all__ = [
    "MarkingStore", "sampled_size", "timed_content", "timed_key", "untimed_content", "untimed_key",
    "untimed_lookup",
]


class _Tag:
    """A private marker opening a tagged content key (compares by identity only)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


_ONE = _Tag("one")  # (_ONE, value, count): one value, several tokens or a tuple value
_MULTI = _Tag("multi")  # (_MULTI, v1, c1, v2, c2, ...) sorted by value
_TIMED = _Tag("timed")  # (_TIMED, v1, stamps1, v2, stamps2, ...) sorted by value


def _sorted_items(place: dict[Any, Any]) -> list[tuple[Any, Any]]:
    """The items of ``place`` in a canonical order (by value, else by type and repr)."""
    try:
        return sorted(place.items(), key=itemgetter(0))
    except TypeError:
        return sorted(place.items(), key=lambda item: (type(item[0]).__qualname__,
                                                       repr(item[0])))


def untimed_key(place: dict[Any, int]) -> Hashable:
    """The canonical key of an untimed place's content (``value -> count``).

    An empty place is ``None`` and one token of a non-tuple value is the value itself,
    the two commonest contents, so that they cost no extra object.

    >>> untimed_key({}), untimed_key({3: 1}), untimed_key({"b": 1, "a": 2})
    (None, 3, (<multi>, 'a', 2, 'b', 1))
    """
    if not place:
        return None
    if len(place) == 1:
        ((value, count),) = place.items()
        if count == 1 and type(value) is not tuple:
            return value
        return (_ONE, value, count)
    return (_MULTI, *chain.from_iterable(_sorted_items(place)))


def untimed_lookup(place: dict[Any, int]) -> Hashable:
    """The key :class:`MarkingStore` finds an untimed content by, whatever the order of
    its items: ``None`` when empty, the value for one token of a value that is neither a
    tuple nor a frozenset, else the frozenset of its ``(value, count)`` items.

    >>> untimed_lookup({"b": 1, "a": 2}) == untimed_lookup({"a": 2, "b": 1})
    True
    """
    if not place:
        return None
    if len(place) == 1:
        ((value, count),) = place.items()
        if count == 1 and type(value) is not tuple and type(value) is not frozenset:
            return value
    return frozenset(place.items())


def untimed_content(key: Hashable) -> dict[Any, int]:
    """A fresh compiled-marking dict for an untimed content key (inverse of :func:`untimed_key`).

    >>> untimed_content(untimed_key({(1, 2): 3}))
    {(1, 2): 3}
    """
    if key is None:
        return {}
    if type(key) is tuple:
        if key[0] is _ONE:
            return {key[1]: key[2]}
        rest = iter(key[1:])
        return dict(zip(rest, rest, strict=True))
    return {key: 1}


def timed_key(place: dict[Any, list[float]]) -> Hashable:
    """The canonical key of a timed place's content (``value -> sorted timestamps``).

    >>> timed_key({1: [0.0, 2.0]})
    (<timed>, 1, (0.0, 2.0))
    """
    if not place:
        return None
    if len(place) == 1:  # one value: nothing to sort
        ((value, stamps),) = place.items()
        return (_TIMED, value, tuple(stamps))
    return (_TIMED, *chain.from_iterable((v, tuple(ts)) for v, ts in _sorted_items(place)))


def timed_content(key: Hashable) -> dict[Any, list[float]]:
    """A fresh compiled-marking dict for a timed content key (inverse of :func:`timed_key`)."""
    if key is None:
        return {}
    assert type(key) is tuple
    rest = iter(key[1:])
    return {value: list(stamps) for value, stamps in zip(rest, rest, strict=True)}


class MarkingStore:
    """Interned place contents and the bit layout that packs a marking into one int.

    ``timed[p]`` says whether place ``p`` holds timestamps; extra fields (the clock of
    absolute timed state spaces) are interned like places but never decoded as one.
    """

    def __init__(self, timed: Sequence[bool], extra_fields: int = 0) -> None:
        self.timed = tuple(timed)
        n = len(self.timed) + extra_fields
        # an untimed place's index is keyed by untimed_lookup(), a timed one's (and an
        # extra field's) by the content key itself
        self.index: list[dict[Hashable, int]] = [{None: 0} for _ in range(n)]
        self.contents: list[list[Hashable]] = [[None] for _ in range(n)]
        #: per untimed place, the dict of each content whose key is a tuple (several
        #: tokens or a tuple value), by content number: copied, not rebuilt, to fire
        self.multisets: list[dict[int, dict[Any, int]]] = [{} for _ in range(n)]
        self.widths = [1] * n
        self.shifts: list[int] = []
        self.masks: list[int] = []
        self.total_bits = 0
        self.overflow = False
        self._layout()

    def _layout(self) -> None:
        self.shifts, self.masks, shift = [], [], 0
        for width in self.widths:
            self.shifts.append(shift)
            self.masks.append((1 << width) - 1)
            shift += width
        self.total_bits = shift

    def intern(self, p: int, key: Hashable) -> int:
        """The number of content ``key`` in field ``p`` (numbering new keys as they come):
        a timed place or an extra field (untimed places go through :meth:`encode`)."""
        index = self.index[p]
        number = index.get(key)
        if number is None:
            contents = self.contents[p]
            number = index[key] = len(contents)
            contents.append(key)
            if number >> self.widths[p]:
                self.overflow = True
        return number

    def pack(self, numbers: Sequence[int]) -> int:
        """One int holding every field's content number."""
        key = 0
        for number, shift in zip(numbers, self.shifts, strict=True):
            key |= number << shift
        return key

    def unpack(self, key: int) -> list[int]:
        """The content number of every field of a packed key."""
        return [(key >> s) & m for s, m in zip(self.shifts, self.masks, strict=True)]

    def field(self, key: int, p: int) -> int:
        """The content number of field ``p`` in ``key``."""
        return (key >> self.shifts[p]) & self.masks[p]

    def decode(self, p: int, number: int) -> dict[Any, Any]:
        """A fresh compiled-marking dict for content ``number`` of place ``p``."""
        key = self.contents[p][number]
        return timed_content(key) if self.timed[p] else untimed_content(key)

    def encode(self, p: int, place: dict[Any, Any]) -> int:
        """Intern the content of compiled-marking dict ``place`` of place ``p``."""
        if self.timed[p]:
            return self.intern(p, timed_key(place))
        lookup = untimed_lookup(place)
        number = self.index[p].get(lookup)
        return self.add_untimed(p, lookup, place) if number is None else number

    def add_untimed(self, p: int, lookup: Hashable, place: dict[Any, int]) -> int:
        """Number a new content of untimed place ``p`` (``lookup`` its
        :func:`untimed_lookup`); sets :attr:`overflow` when its field is outgrown."""
        contents = self.contents[p]
        number = self.index[p][lookup] = len(contents)
        key = untimed_key(place)
        contents.append(key)
        if type(key) is tuple:
            self.multisets[p][number] = untimed_content(key)
        if number >> self.widths[p]:
            self.overflow = True
        return number

    def add_sorted(self, p: int, place: dict[Any, int]) -> int:
        """:meth:`add_untimed` for a new content whose items are in canonical order already
        (the C explorer's, :mod:`tcpn.petrinets.statespace.cexplore.explorer`): the same number,
        key and
        kept dict (``place`` itself, which the store owns from now on), without sorting."""
        contents = self.contents[p]
        number = len(contents)
        if len(place) == 1:
            ((value, count),) = place.items()
            if count == 1 and type(value) is not tuple and type(value) is not frozenset:
                self.index[p][value] = number
                contents.append(value)
            else:
                self.index[p][frozenset(place.items())] = number
                contents.append((_ONE, value, count))
                self.multisets[p][number] = place
        else:
            self.index[p][frozenset(place.items()) if place else None] = number
            contents.append((_MULTI, *chain.from_iterable(place.items())) if place else None)
            if place:
                self.multisets[p][number] = place
        if number >> self.widths[p]:
            self.overflow = True
        return number

    def marking(self, key: int) -> list[dict[Any, Any]]:
        """The compiled marking (one fresh dict per place) a key stands for."""
        numbers = self.unpack(key)
        return [self.decode(p, numbers[p]) for p in range(len(self.timed))]

    def widen(self) -> Callable[[int], int]:
        """Widen the fields that overflowed; return the function re-packing an old key.

        A field grows to at least twice its width, so a place is widened a handful of
        times at most; re-packing moves the fields above it with two shifts. Fields more
        than half full grow in the same pass, as they would soon on their own: every
        re-pack costs a pass over all the keys stored so far.
        """
        moves = []  # (end of the old field, extra bits), highest field first
        for p in range(len(self.widths) - 1, -1, -1):
            need = max(1, (len(self.contents[p]) - 1).bit_length())
            if need > self.widths[p] or (self.overflow and len(self.contents[p]) > 2 and
                                         (2 * len(self.contents[p]) - 1).bit_length()
                                         > self.widths[p]):
                new_width = max(need, 2 * self.widths[p])
                moves.append((self.shifts[p] + self.widths[p], new_width - self.widths[p]))
                self.widths[p] = new_width
        self._layout()
        self.overflow = False

        def repack(key: int) -> int:
            for end, extra in moves:
                key = (key & ((1 << end) - 1)) | ((key >> end) << (end + extra))
            return key

        return repack

    def key_array(self, keys: list[int]) -> np.ndarray:
        """The keys as a compact NumPy array: ``uint64`` when they fit, else byte strings."""
        if self.total_bits <= 64:
            return np.array(keys, dtype=np.uint64)
        size = (self.total_bits + 7) // 8
        return np.array([k.to_bytes(size, "little") for k in keys], dtype=f"S{size}")

    def key_at(self, keys: np.ndarray, i: int) -> int:
        """Key ``i`` of an array made by :meth:`key_array`, as an int again."""
        item = keys[i]
        if isinstance(item, bytes):  # trailing zero bytes were stripped: little-endian is safe
            return int.from_bytes(item, "little")
        return int(item)

    def nbytes(self) -> int:
        """Bytes held by the interned contents: tables, numbers, keys and the values inside.

        Large tables are measured on an evenly spaced sample of 1024 keys.
        """
        total = 0
        for index, contents, multisets in zip(self.index, self.contents, self.multisets,
                                              strict=True):
            total += sys.getsizeof(index) + sys.getsizeof(contents)
            total += max(0, len(contents) - 257) * sys.getsizeof(len(contents))  # numbers
            total += sampled_size(contents, _deep_size)
            # the lookup keys of multisets (frozensets) and their dicts
            total += 2 * sampled_size(list(multisets.values()), sys.getsizeof) + \
                sys.getsizeof(multisets)
        return total


def sampled_size(items: Sequence[Any], size: Callable[[Any], int]) -> int:
    """``sum(size(x) for x in items)``, estimated from 1024 evenly spaced items when many."""
    step = max(1, len(items) // 1024)
    sample = items[::step]
    return round(sum(size(x) for x in sample) * len(items) / len(sample)) if sample else 0


def _deep_size(obj: Any) -> int:
    """Bytes of ``obj`` and of what its tuples hold (shared singletons aside)."""
    if obj is None or isinstance(obj, _Tag | bool) or (type(obj) is int and -5 <= obj <= 256):
        return 0
    size = sys.getsizeof(obj)
    if isinstance(obj, tuple):
        size += sum(_deep_size(item) for item in obj)
    return size
