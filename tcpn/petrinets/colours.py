"""Colour sets: the types of tokens, as in CPN ML's ``colset`` declarations.

A colour set says which Python values a place may hold and whether its tokens carry
timestamps (``timed``). Values are plain Python objects so that inscriptions stay plain
Python: ``int``, ``float``, ``bool``, ``str``, enumeration constants as ``str``, products
as ``tuple``, records as instances of a generated :class:`typing.NamedTuple`, lists as
``tuple`` (tokens must be hashable), unit as ``()``.

>>> INT.contains(3), IntSet(0, 5).contains(7)
(True, False)
>>> Packet = RecordSet("Packet", seq=INT, size=IntSet(1, 1500))
>>> Packet.make(seq=1, size=40)
Packet(seq=1, size=40)
>>> ProductSet(INT, STRING).timed().is_timed
True
"""

from __future__ import annotations

import copy
import functools
import itertools
import keyword
import math
from collections import namedtuple
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tcpn.errors import InputError

__all__ = [
    "BOOL",
    "CLOCK",
    "INT",
    "REAL",
    "STRING",
    "UNIT",
    "BoolSet",
    "ClockSet",
    "ColourSet",
    "EnumSet",
    "IntSet",
    "ListSet",
    "ProductSet",
    "RealSet",
    "RecordSet",
    "StringSet",
    "UnionSet",
    "UnitSet",
    "record_class",
]


@dataclass(frozen=True)
class ColourSet:
    """Base of all colour sets; ``name`` is what declarations and exports call it."""

    name: str = field(default="", kw_only=True)
    is_timed: bool = field(default=False, kw_only=True)

    def timed(self, name: str | None = None) -> ColourSet:
        """The same set with timestamped tokens (CPN ML ``colset T = ... timed``)."""
        return self.copy_with(is_timed=True, name=name if name is not None else self._timed_name())

    def named(self, name: str) -> ColourSet:
        """The same set under another declaration name."""
        return self.copy_with(name=name)

    def untimed(self, name: str) -> ColourSet:
        """The same set with plain tokens, under the declaration name ``name``."""
        return self.copy_with(is_timed=False, name=name)

    def copy_with(self, **changes: Any) -> ColourSet:
        """A copy of this colour set with the given fields changed (the exchange formats
        re-declare a set under its file's name and timing)."""
        twin = copy.copy(self)
        for key, value in changes.items():
            object.__setattr__(twin, key, value)
        return twin

    def _timed_name(self) -> str:
        return f"T{self.name}" if self.name else ""

    def contains(self, value: Any) -> bool:
        """Whether ``value`` is a member of this colour set."""
        raise NotImplementedError

    def describe(self) -> str:
        """A short human-readable form, used in error messages."""
        return self.name or type(self).__name__

    def members(self) -> list[Any] | None:
        """Every member when the set is small and finite (used for free variables), else None."""
        return None


@dataclass(frozen=True)
class UnitSet(ColourSet):
    """The one-value set; its value is ``()``. Black tokens of place/transition nets."""

    name: str = field(default="UNIT", kw_only=True)

    def contains(self, value: Any) -> bool:
        return value == ()

    def members(self) -> list[Any]:
        return [()]


@dataclass(frozen=True)
class BoolSet(ColourSet):
    """``True`` and ``False``."""

    name: str = field(default="BOOL", kw_only=True)

    def contains(self, value: Any) -> bool:
        return isinstance(value, bool)

    def members(self) -> list[Any]:
        return [False, True]


@dataclass(frozen=True)
class IntSet(ColourSet):
    """Integers, optionally bounded to ``low..high`` (both inclusive)."""

    low: int | None = None
    high: int | None = None
    name: str = field(default="INT", kw_only=True)

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and self.low > self.high:
            raise InputError(f"colour set {self.name}: bounds {self.low}..{self.high} are empty")

    def contains(self, value: Any) -> bool:
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        if self.low is not None and value < self.low:
            return False
        return not (self.high is not None and value > self.high)

    def describe(self) -> str:
        if self.low is None and self.high is None:
            return self.name
        return f"{self.name} ({self.low}..{self.high})"

    def members(self) -> list[Any] | None:
        if self.low is None or self.high is None or self.high - self.low > 10_000:
            return None
        return list(range(self.low, self.high + 1))


@dataclass(frozen=True)
class RealSet(ColourSet):
    """Finite real numbers (``float``; ``int`` values are accepted too)."""

    name: str = field(default="REAL", kw_only=True)

    def contains(self, value: Any) -> bool:
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
        )


@dataclass(frozen=True)
class ClockSet(RealSet):
    """Reals that are readings of the global clock (absolute times), such as a packet's
    send time: a :class:`RealSet` to the simulator and to exchange formats, but relative
    state spaces keep such values relative to the state's clock, as they keep timestamps
    (:mod:`tcpn.petrinets.timevalues`). Durations (an RTT, a timeout) are plain ``REAL``."""

    name: str = field(default="CLOCK", kw_only=True)


@dataclass(frozen=True)
class StringSet(ColourSet):
    """Python strings."""

    name: str = field(default="STRING", kw_only=True)

    def contains(self, value: Any) -> bool:
        return isinstance(value, str)


@dataclass(frozen=True)
class EnumSet(ColourSet):
    """A finite set of named constants, represented by their names as strings."""

    values: tuple[str, ...] = ()
    name: str = field(default="ENUM", kw_only=True)

    def __post_init__(self) -> None:
        if not self.values:
            raise InputError(f"colour set {self.name}: an enumeration needs at least one value")
        if len(set(self.values)) != len(self.values):
            raise InputError(f"colour set {self.name}: duplicate enumeration values")

    def contains(self, value: Any) -> bool:
        return isinstance(value, str) and value in self._value_set

    @functools.cached_property
    def _value_set(self) -> frozenset[str]:
        """The values as a set: membership in constant time (the contest's enumerations
        reach 10^5 constants, a token check each)."""
        return frozenset(self.values)

    def members(self) -> list[Any]:
        return list(self.values)


@dataclass(frozen=True)
class ProductSet(ColourSet):
    """Tuples whose components belong to the given sets (CPN ML ``product A * B``)."""

    components: tuple[ColourSet, ...] = ()
    name: str = field(default="", kw_only=True)

    def __init__(self, *components: ColourSet, name: str = "", is_timed: bool = False):
        object.__setattr__(self, "components", tuple(components))
        object.__setattr__(self, "name", name or "*".join(c.describe() for c in components))
        object.__setattr__(self, "is_timed", is_timed)
        if len(self.components) < 2:
            raise InputError(f"colour set {self.name}: a product needs two or more components")

    def contains(self, value: Any) -> bool:
        return (
            isinstance(value, tuple)
            and len(value) == len(self.components)
            and all(c.contains(v) for c, v in zip(self.components, value, strict=True))
        )

    def members(self) -> list[Any] | None:
        parts = [c.members() for c in self.components]
        if any(p is None for p in parts) or math.prod(len(p or ()) for p in parts) > 10_000:
            return None
        return [tuple(v) for v in itertools.product(*(p or () for p in parts))]


@dataclass(frozen=True)
class RecordSet(ColourSet):
    """Records with named fields; values are instances of the generated ``record_type``."""

    fields: tuple[tuple[str, ColourSet], ...] = ()
    record_type: Any = field(default=None, compare=False, repr=False)

    def __init__(self, name: str, is_timed: bool = False, /, **fields: ColourSet):
        # name and is_timed are positional only: a record may have fields of those names
        if not fields:
            raise InputError(f"colour set {name}: a record needs at least one field")
        for field_name in fields:
            problem = _field_problem(field_name)
            if problem is not None:
                raise InputError(f"colour set {name}: record field {field_name!r} {problem}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "is_timed", is_timed)
        object.__setattr__(self, "fields", tuple(fields.items()))
        object.__setattr__(self, "record_type", record_class(name, tuple(fields)))

    def make(self, **values: Any) -> Any:
        """Build a record value, checking every field."""
        record = self.record_type(**values)
        if not self.contains(record):
            raise InputError(f"{record!r} is not a member of record colour set {self.name}")
        return record

    def contains(self, value: Any) -> bool:
        return isinstance(value, self.record_type) and all(
            cs.contains(getattr(value, fname)) for fname, cs in self.fields
        )


def ml_field(label: str) -> str:
    """The Python name of the record field a CPN ML label names.

    SML's labels are identifiers of letters, digits, ``'`` and ``_`` and may be Python
    keywords (``{from = 1, to = 2}``): a ``'`` is spelled ``_`` and a keyword gets a trailing
    ``_``, as a variable's name does (``cpnml.py_name``). Two labels of one record spelled
    alike are refused where the record is declared.

    >>> ml_field("from"), ml_field("seq"), ml_field("x'"), ml_field("None")
    ('from_', 'seq', 'x_', 'None_')
    """
    name = label.replace("'", "_")
    return name + "_" if keyword.iskeyword(name) else name


def _field_problem(name: str) -> str | None:
    """Why ``name`` cannot be a field of a record value (a named tuple), or None.

    >>> _field_problem("seq"), _field_problem("name"), _field_problem("class")
    (None, None, 'is a Python keyword: rename the field')
    """
    if not name.isidentifier() or not name.isascii():
        return "is not a name of letters, digits and '_' (not starting with a digit): " \
               "rename the field"
    if keyword.iskeyword(name):
        return "is a Python keyword: rename the field"
    if name.startswith("_"):
        return "starts with '_' (tcpn's own names do): rename the field"
    return None


#: ``namedtuple`` for classes whose names and fields are known at run time only (a
#: type checker reads a call of ``namedtuple`` itself as a class definition)
_named_tuple: Callable[..., Any] = namedtuple


@functools.cache
def record_class(name: str, field_names: tuple[str, ...]) -> Any:
    """One named-tuple class per record name and fields: a record set rebuilt from a file
    (PNML, CPN Tools) holds the same values as the one the model's code builds.

    Its ``_replace`` is generated for its fields (:func:`_fast_replace`).
    """
    # the class's name only shows in a value's repr: a colour set's name that is not a
    # Python identifier (CPN ML allows ``Job'``) is spelled with '_' there
    type_name = name if name.isidentifier() and not keyword.iskeyword(name) else \
        "R_" + "".join(c if c.isalnum() and c.isascii() else "_" for c in name)
    record = _named_tuple(type_name, list(field_names))
    record._replace = _fast_replace(record)
    return record


class _Keep:
    """The default of :func:`_fast_replace`'s parameters: the field keeps its value."""

    def __repr__(self) -> str:
        return "<keep>"


_KEEP = _Keep()


def _fast_replace(record: Any) -> Any:
    """``record._replace`` with one keyword-only parameter per field.

    The same result as the named tuple's own (a new record, the fields not named kept)
    at about half its cost: inscriptions update state records with it at most firings
    (measured: 1.0 -> 0.55 us for 4 of 15 fields). A name that is not a field raises
    ``TypeError`` naming it, where the named tuple's raises ``ValueError``.

    >>> Point = record_class("Point", ("x", "y"))
    >>> Point(1, 2)._replace(y=5)
    Point(x=1, y=5)
    >>> record_class("Node", ("self", "next"))(1, 2)._replace(self=0)
    Node(self=0, next=2)
    """
    fields = record._fields
    parameters = ", ".join(f"{f}=_KEEP" for f in fields)
    # the names of its own start with "_", which no field name may (namedtuple's rule)
    values = "".join(f"_self[{i}] if {f} is _KEEP else {f}, " for i, f in enumerate(fields))
    namespace = {"_KEEP": _KEEP, "_new": tuple.__new__, "_record": record}
    exec(f"def _replace(_self, /, *, {parameters}):\n    return _new(_record, ({values}))\n",
         namespace)
    replace = namespace["_replace"]
    replace.__qualname__ = f"{record.__name__}._replace"
    replace.__doc__ = f"A new {record.__name__} with the given fields replaced."
    return replace


@dataclass(frozen=True)
class ListSet(ColourSet):
    """Lists of members of ``element``, as tuples; ``max_length`` bounds their length."""

    element: ColourSet = field(default_factory=UnitSet)
    max_length: int | None = None
    name: str = field(default="", kw_only=True)

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", f"{self.element.describe()} list")

    def contains(self, value: Any) -> bool:
        if not isinstance(value, tuple):
            return False
        if self.max_length is not None and len(value) > self.max_length:
            return False
        return all(self.element.contains(v) for v in value)


@dataclass(frozen=True)
class UnionSet(ColourSet):
    """CPN ML's ``union A:C + B``: one value of several kinds, each named by a constructor.

    As a datatype's values in an imported net (:mod:`~tcpn.petrinets.exchange.ml_library`):
    a constructor without a colour set is its name (``"B"``), one with a colour set ``C``
    the pair of its name and a member of ``C`` (``("A", 3)`` for ``A(3)``).
    """

    fields: tuple[tuple[str, ColourSet | None], ...] = ()
    name: str = field(default="UNION", kw_only=True)

    def __post_init__(self) -> None:
        names = [n for n, _ in self.fields]
        if not names:
            raise InputError(f"colour set {self.name}: a union needs at least one constructor")
        if len(set(names)) != len(names):
            raise InputError(f"colour set {self.name}: duplicate union constructors")

    def contains(self, value: Any) -> bool:
        if isinstance(value, str):
            return (value, None) in self.fields
        if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)):
            return False
        colour = dict(self.fields).get(value[0])
        return colour is not None and colour.contains(value[1])

    def members(self) -> list[Any] | None:
        found: list[Any] = []
        for constructor, colour in self.fields:
            if colour is None:
                found.append(constructor)
                continue
            values = colour.members()
            if values is None or len(found) + len(values) > 10_000:
                return None
            found.extend((constructor, v) for v in values)
        return found


def check_members(colour: ColourSet, values: Iterable[Any], where: str) -> None:
    """Raise :class:`InputError` naming ``where`` for the first value outside ``colour``."""
    for value in values:
        if not colour.contains(value):
            raise InputError(f"{where}: token {value!r} is not of colour set {colour.describe()}")


UNIT = UnitSet()
BOOL = BoolSet()
INT = IntSet()
REAL = RealSet()
CLOCK = ClockSet()
STRING = StringSet()
