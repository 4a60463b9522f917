"""tcpn's exact forms inside PNML ``toolspecific``: colour sets, tokens, arcs, declarations.

PNML's standard grammars (P/T nets, symmetric nets) have no integers without bounds, no
reals, strings, records or lists, no arithmetic, no time, no inhibitor or reset arcs.
When a net needs them, :func:`~tcpn.petrinets.exchange.pnml.to_pnml` writes the
structure PNML holds (places, transitions, arcs, names, the readable ``<text>`` of every
label) and puts tcpn's exact form of the rest in ``<toolspecific tool="tcpn">``, encoded
here as JSON so that reading it back never evaluates code.

>>> from tcpn.petrinets.colours import INT, RecordSet, StringSet
>>> packet = RecordSet("Packet", seq=INT, flow=StringSet()).timed()
>>> spec = colour_spec(packet)
>>> colour_from_spec(spec) == packet
True
>>> text = tokens_json(packet, [(packet.make(seq=1, flow="a"), 2.5)])
>>> tokens_from_json(packet, text)
[Token(value=Packet(seq=1, flow='a'), time=2.5)]
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from tcpn.errors import InputError
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
from tcpn.petrinets.net import Token

__all__ = ["colour_from_spec", "colour_spec", "constant_from_json", "constant_json",
           "tokens_from_json", "tokens_json"]


def colour_spec(colour: ColourSet) -> str:
    """The JSON form of ``colour`` (name and timing included)."""
    return json.dumps(_spec(colour), separators=(",", ":"))


def _spec(colour: ColourSet) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": colour.name, "timed": colour.is_timed}
    if isinstance(colour, UnitSet):
        spec["kind"] = "unit"
    elif isinstance(colour, BoolSet):
        spec["kind"] = "bool"
    elif isinstance(colour, IntSet):
        spec.update(kind="int", low=colour.low, high=colour.high)
    elif isinstance(colour, RealSet):
        spec["kind"] = "real"
    elif isinstance(colour, StringSet):
        spec["kind"] = "string"
    elif isinstance(colour, EnumSet):
        spec.update(kind="enum", values=list(colour.values))
    elif isinstance(colour, ProductSet):
        spec.update(kind="product", components=[_spec(c) for c in colour.components])
    elif isinstance(colour, RecordSet):
        spec.update(kind="record", fields=[[n, _spec(c)] for n, c in colour.fields],
                    type=colour.record_type.__name__)
    elif isinstance(colour, ListSet):
        spec.update(kind="list", element=_spec(colour.element), max_length=colour.max_length)
    else:
        raise InputError(f"colour set {colour.describe()} ({type(colour).__name__}) has no "
                         "PNML form")
    return spec


def colour_from_spec(text: str, records: dict[str, RecordSet] | None = None) -> ColourSet:
    """The colour set :func:`colour_spec` wrote; :class:`InputError` for anything else.

    ``records`` (name -> record set) is shared by the colour sets of one net: a record's
    values are instances of its one ``record_type``, whichever place holds them.
    """
    try:
        return _colour(json.loads(text), {} if records is None else records)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"tcpn colour set {text[:80]!r} is malformed ({exc})") from None


def _colour(spec: dict[str, Any], records: dict[str, RecordSet]) -> ColourSet:
    kind, name, timed = spec["kind"], str(spec["name"]), bool(spec["timed"])
    if kind == "record":
        fields = {str(n): _colour(c, records) for n, c in spec["fields"]}
        if len(fields) != len(spec["fields"]):
            raise InputError(f"colour set {name}: a record field is given twice")
        type_name = str(spec.get("type", name))
        record = records.get(type_name)
        if record is None or dict(record.fields) != fields:
            record = records[type_name] = RecordSet(type_name, False, **fields)
        return record.copy_with(is_timed=timed, name=name)
    colour: ColourSet
    if kind == "unit":
        colour = UnitSet(name=name)
    elif kind == "bool":
        colour = BoolSet(name=name)
    elif kind == "int":
        colour = IntSet(spec["low"], spec["high"], name=name)
    elif kind == "real":
        colour = RealSet(name=name)
    elif kind == "string":
        colour = StringSet(name=name)
    elif kind == "enum":
        colour = EnumSet(tuple(str(v) for v in spec["values"]), name=name)
    elif kind == "product":
        return ProductSet(*(_colour(c, records) for c in spec["components"]), name=name,
                          is_timed=timed)
    elif kind == "list":
        colour = ListSet(_colour(spec["element"], records), spec["max_length"], name=name)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return colour.copy_with(is_timed=True) if timed else colour


def _plain(value: Any) -> Any:
    """A token value as JSON data: tuples and records as lists."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _value(colour: ColourSet, data: Any) -> Any:
    """The token value of ``colour`` that :func:`_plain` gave ``data``."""
    if isinstance(colour, ProductSet):
        return tuple(_value(c, d) for c, d in zip(colour.components, data, strict=True))
    if isinstance(colour, RecordSet):
        return colour.record_type(*(_value(c, d) for (_, c), d in zip(colour.fields, data,
                                                                       strict=True)))
    if isinstance(colour, ListSet):
        return tuple(_value(colour.element, d) for d in data)
    if isinstance(colour, UnitSet):
        return ()
    return data


def tokens_json(colour: ColourSet, tokens: Iterable[tuple[Any, float]]) -> str:
    """``[[value, timestamp], ...]`` as JSON."""
    return json.dumps([[_plain(v), t] for v, t in tokens], separators=(",", ":"))


def tokens_from_json(colour: ColourSet, text: str) -> list[Token]:
    """The tokens :func:`tokens_json` wrote, rebuilt as members of ``colour``."""
    try:
        return [Token(_value(colour, v), float(t)) for v, t in json.loads(text)]
    except (ValueError, TypeError) as exc:
        raise InputError(f"tcpn tokens {text[:80]!r} are malformed ({exc})") from None


def constant_json(value: Any) -> str | None:
    """A declaration's value as JSON when it is plain data (numbers, strings, tuples and
    dicts of them), else None (functions and other objects have no PNML form)."""
    data = _constant_data(value)
    return None if data is _NO_DATA else json.dumps(data)


_NO_DATA = object()


def _constant_data(value: Any) -> Any:
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, tuple):
        items = [_constant_data(v) for v in value]
        return _NO_DATA if any(i is _NO_DATA for i in items) else {"tuple": items}
    if isinstance(value, dict):  # e.g. a symmetric net's successor table
        pairs = [[_constant_data(k), _constant_data(v)] for k, v in value.items()]
        return _NO_DATA if any(x is _NO_DATA for p in pairs for x in p) else {"dict": pairs}
    return _NO_DATA


def constant_from_json(text: str) -> Any:
    """The value :func:`constant_json` wrote."""
    def rebuild(data: Any) -> Any:
        if isinstance(data, dict) and "dict" in data:
            return {rebuild(k): rebuild(v) for k, v in data["dict"]}
        if isinstance(data, dict):
            return tuple(rebuild(d) for d in data["tuple"])
        return data

    try:
        return rebuild(json.loads(text))
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"tcpn constant {text[:80]!r} is malformed ({exc})") from None
