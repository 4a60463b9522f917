"""Export a tcpn net to a CPN Tools file (.cpn, format 6) that CPN Tools and cpncheck open.

Everything the net says that CPN Tools can express is written: colour sets (timed,
products, records, enumerations, lists, bounded ints), variables, constants and functions
(translated from Python, see :mod:`~tcpn.petrinets.exchange.cpnml`), places with initial
markings and timestamps, transitions with guards, delays (``@+`` for integer delays,
``@++`` with real model time), priorities and code segments, arcs with multiplicities,
conditions and delays, inhibitor and reset arcs, and module instances as pages joined by
substitution transitions with port/socket assignments (fusion sets where an arc crosses
into a page that isn't an ancestor). Positions come from Graphviz ``dot``. What CPN Tools
can't express is an :class:`~tcpn.errors.InputError` naming the element and the construct.

>>> from tcpn.petrinets.examples import counter
>>> text = to_cpn(counter(3), layout="grid")
>>> '<generator tool="tcpn"' in text and "x + 1" in text and "[x &lt; LIMIT]" in text
True
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import graphlib
import math
import re
import shutil
import sys
import types
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcpn import __version__
from tcpn.errors import InputError
from tcpn.outputs import atomic_file, check_output_file
from tcpn.petrinets.cells import Cell
from tcpn.petrinets.colours import (
    BOOL,
    INT,
    REAL,
    STRING,
    UNIT,
    BoolSet,
    ColourSet,
    EnumSet,
    IntSet,
    ListSet,
    ProductSet,
    RealSet,
    RecordSet,
    StringSet,
    UnionSet,
    UnitSet,
)
from tcpn.petrinets.distributions import Discrete, Distribution, Interval
from tcpn.petrinets.exchange.cpnml import (
    INT_T,
    ML_BASIS_DECLARATIONS,
    ML_MAX_INT,
    ML_MIN_INT,
    ML_RESERVED,
    REAL_T,
    FunctionInfo,
    MLType,
    PythonToML,
    UnsupportedConstruct,
    action_body,
    colour_type,
    function_source,
    is_ml_identifier,
    ml_int,
    ml_real,
    value_type,
)
from tcpn.petrinets.exchange.functions import (
    CodeAction,
    DeclaredFunction,
    MLDatatype,
    MLLocal,
)
from tcpn.petrinets.inscriptions import Inscription
from tcpn.petrinets.net import P_HIGH, P_LOW, P_NORMAL, Arc, ArcKind, PetriNet, Place, Transition

__all__ = ["to_cpn", "write_cpn"]

_DOCTYPE = ('<!DOCTYPE workspaceElements PUBLIC "-//CPN//DTD CPNXML 1.0//EN" '
            '"http://cpntools.org/DTD/6/cpn.dtd">')
_STANDARD_COLOURS = (UNIT, BOOL, INT, None, None, REAL, STRING)  # INTINF, TIME written as is
_STANDARD_NAMES = ("UNIT", "BOOL", "INT", "INTINF", "TIME", "REAL", "STRING")
#: the standard colour set of each simple ML type, always declared in the file
_STANDARD_FOR_TYPE = {INT_T: "INT", REAL_T: "REAL", "bool": "BOOL", "string": "STRING",
                      "unit": "UNIT"}
_POINTS_PER_INCH = 72.0


def write_cpn(net: PetriNet, path: str | Path, *, real_time: bool | None = None,
              ids: Mapping[str, str] | None = None, layout: str = "dot",
              overwrite: bool = False) -> Path:
    """Write ``net`` to ``path`` as a CPN Tools file (see :func:`to_cpn` for the options):
    whole or not at all, an existing file replaced only with ``overwrite``
    (:func:`tcpn.outputs.atomic_file`)."""
    check_output_file(path, overwrite)
    data = to_cpn(net, real_time=real_time, ids=ids, layout=layout).encode("iso-8859-1")
    with atomic_file(path, overwrite) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def to_cpn(net: PetriNet, *, real_time: bool | None = None,
           ids: Mapping[str, str] | None = None, layout: str = "dot") -> str:
    """The CPN Tools XML of ``net``.

    ``real_time`` picks CPN Tools' time type (``realtimestamp``): None decides from the net
    (real as soon as a delay, a timestamp or a distribution is not an integer). ``ids``
    reuses element ids (keys ``place:NAME``, ``trans:NAME``, ``arc:INDEX``, ``page:PATH``,
    as :func:`~tcpn.petrinets.exchange.cpn_import.read_cpn` returns them) so that a net read
    from a file keeps its ids. ``layout`` is ``"dot"`` (Graphviz) or ``"grid"``.
    """
    if layout not in ("dot", "grid"):
        raise InputError(f"layout must be 'dot' or 'grid', got {layout!r}")
    shared = _Shared(net)
    if real_time is None:
        try:
            return _export(net, None, dict(ids or {}), layout, shared)
        except _NeedsRealTime:
            real_time = True
    return _export(net, real_time, dict(ids or {}), layout, shared)


class _NeedsRealTime(InputError):
    """A real-valued delay in a net exported with integer time (CPN Tools' default)."""


class _Shared:
    """What every translation pass of one export computes alike, computed once: the arcs
    of each transition, functions reduced to expressions, colour sets' ML types, and the
    translations themselves (a pass re-translates only what reads a type learnt since)."""

    def __init__(self, net: PetriNet):
        self.arcs_of: dict[str, list[Arc]] = {name: [] for name in net.transitions}
        for arc in net.arcs:
            self.arcs_of[arc.transition].append(arc)
        self.sources: dict[int, tuple[Any, _Source]] = {}  # id(fn) -> (fn, source)
        self.action_bodies: dict[tuple[int, tuple[str, ...], str], str] = {}
        self.colour_types: dict[int, tuple[ColourSet, MLType]] = {}
        self.translations: dict[Any, Any] = {}  # PythonToML.memo
        self.inputs: dict[str, tuple[str, ...]] = {}  # transition -> its action's inputs

    def action_inputs(self, transition: Transition) -> tuple[str, ...]:
        known = self.inputs.get(transition.name)
        if known is None:
            known = self.inputs[transition.name] = tuple(transition.action_inputs)
        return known

    def colour_type(self, colour: ColourSet) -> MLType:
        known = self.colour_types.get(id(colour))
        if known is None:
            known = self.colour_types[id(colour)] = (colour, colour_type(colour))
        return known[1]


def _export(net: PetriNet, real_time: bool | None, ids: dict[str, str], layout: str,
            shared: _Shared) -> str:
    # Python is untyped: the types of declared functions' parameters come from their call
    # sites and their results from their bodies, so translate until what is learnt of
    # them no longer changes, then write the file. A pass that learnt nothing and skipped
    # nothing is what the writing pass would compute again: it writes the file.
    learned: dict[str, Any] = {"calls": {}, "returns": {}}
    for _ in range(6):
        before = repr(learned)
        exporter = _Exporter(net, real_time, dict(ids), layout, learned, tolerant=True,
                             shared=shared)
        exporter.run(xml=False)
        if repr(learned) == before:
            if not exporter.skipped:
                return exporter.write()
            break
    return _Exporter(net, real_time, ids, layout, learned, shared=shared).run()


# -- colour sets ---------------------------------------------------------------------------------
def _ml_name_for(colour: ColourSet) -> str:
    """A readable ML name derived from a colour set's own name."""
    if isinstance(colour, ProductSet) and not is_ml_identifier(colour.name):
        base = "x".join(_ml_name_for(c) for c in colour.components)
    elif isinstance(colour, ListSet) and not is_ml_identifier(colour.name):
        base = f"{_ml_name_for(colour.element)}_list"
    else:
        base = re.sub(r"[^A-Za-z0-9_']", "_", colour.name or type(colour).__name__)
    if colour.is_timed and isinstance(colour, ProductSet | ListSet) and not is_ml_identifier(
            colour.name):
        base = "T" + base
    if not base or not base[0].isalpha():
        base = "C" + base
    if base in _STANDARD_NAMES and colour != _standard_colour(base):
        base = _unshadowed(colour, base)
    return base if base not in ML_RESERVED else base + "_cs"


def _standard_colour(name: str) -> ColourSet | None:
    """CPN Tools' standard colour set ``name`` as tcpn declares it (None: INTINF, TIME)."""
    standard = dict(zip(_STANDARD_NAMES, _STANDARD_COLOURS, strict=True))[name]
    return None if standard is None else standard.named(name)


def _unshadowed(colour: ColourSet, base: str) -> str:
    """A name for a colour set called like a standard one but not it (a bounded or timed
    ``INT``): the file must not redeclare CPN Tools' ``INT``, which every other model and
    function in the tool means by that name.

    >>> _unshadowed(IntSet(0), "INT"), _unshadowed(IntSet(-3, 5), "INT")
    ('INT0', 'INTm3_5')
    >>> _unshadowed(INT.timed(), "INT")
    'TINT'
    """
    if colour.is_timed:
        return "T" + base
    if isinstance(colour, IntSet):
        def bound(value: int | None) -> str:
            return "" if value is None else str(value).replace("-", "m")
        return base + bound(colour.low) + ("" if colour.high is None else f"_{bound(colour.high)}")
    return base + "_cs"


class _Colours:
    """The colour sets the file declares: ML names, dependency order, XML and layout text."""

    def __init__(self) -> None:
        self.names: dict[ColourSet, str] = {}
        self.order: list[ColourSet] = []
        self.taken: set[str] = set()
        self.by_type: dict[Any, str] = {}

    def add(self, colour: ColourSet, where: str) -> str:
        if colour in self.names:
            return self.names[colour]
        for part in _components(colour):
            self.add(part, where)
        if isinstance(colour, EnumSet):
            bad = [v for v in colour.values if not is_ml_identifier(v)]
            if bad:
                raise InputError(f"{where}: enumeration {colour.name} value(s) {bad} are not "
                                 "CPN ML identifiers")
        if isinstance(colour, UnionSet):
            bad = [c for c, _ in colour.fields if not is_ml_identifier(c)]
            if bad:
                raise InputError(f"{where}: union {colour.name} constructor(s) {bad} are not "
                                 "CPN ML identifiers")
        if not isinstance(colour, BoolSet | IntSet | RealSet | StringSet | UnitSet | EnumSet
                          | ProductSet | RecordSet | ListSet | UnionSet):
            raise InputError(f"{where}: colour set {colour.describe()} "
                             f"({type(colour).__name__}) has no CPN ML form")
        name = base = _ml_name_for(colour)
        suffix = 2
        while name in self.taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.names[colour] = name
        self.taken.add(name)
        self.order.append(colour)
        self.by_type.setdefault(colour_type(colour), name)
        return name

    def for_type(self, t: MLType, where: str) -> str:
        """The name of a declared colour set whose values have type ``t``: CPN Tools'
        standard one for a simple type (``INT``, not a bounded set that shares its type)."""
        if isinstance(t, str) and t in _STANDARD_FOR_TYPE:
            return _STANDARD_FOR_TYPE[t]
        if t in self.by_type:
            return self.by_type[t]
        colour = _colour_of_type(t, self, where)
        return self.add(colour, where)

    def name(self, colour: ColourSet) -> str:
        return self.names[colour]


def _components(colour: ColourSet) -> list[ColourSet]:
    if isinstance(colour, ProductSet):
        return list(colour.components)
    if isinstance(colour, RecordSet):
        return [c for _, c in colour.fields]
    if isinstance(colour, ListSet):
        return [colour.element]
    if isinstance(colour, UnionSet):
        return [part for _, part in colour.fields if part is not None]
    return []


def _colour_of_type(t: MLType, colours: _Colours, where: str) -> ColourSet:
    simple = {INT_T: INT, REAL_T: REAL, "bool": BOOL, "string": STRING, "unit": UNIT}
    if isinstance(t, str) and t in simple:
        return simple[t]
    if isinstance(t, tuple) and t[0] == "product":
        return ProductSet(*(_colour_of_type(s, colours, where) for s in t[1]))
    if isinstance(t, tuple) and t[0] == "list":
        return ListSet(_colour_of_type(t[1], colours, where))
    for colour in colours.order:
        if colour_type(colour) == t:
            return colour
    raise InputError(f"{where}: can't tell which colour set a value of type {t!r} belongs to")


def _colour_xml(colour: ColourSet, colours: _Colours) -> tuple[list[ET.Element], str]:
    """The structure elements (after ``<id>``) and the layout text of a colour set."""

    def ident(text: str) -> ET.Element:
        element = ET.Element("id")
        element.text = text
        return element

    def with_range(low: str, high: str) -> ET.Element:
        element = ET.Element("with")
        for bound in (low, high):
            ET.SubElement(element, "ml").text = bound
        return element

    body: ET.Element
    if isinstance(colour, UnitSet):
        body, text = ET.Element("unit"), "unit"
    elif isinstance(colour, BoolSet):
        body, text = ET.Element("bool"), "bool"
    elif isinstance(colour, IntSet):
        body, text = ET.Element("int"), "int"
        if colour.low is not None or colour.high is not None:
            # CPN ML's 'with a..b' needs both bounds: a missing one is the end of CPN Tools'
            # 31-bit int (SML/NJ), which the import reads back as no bound
            low = ml_int(ML_MIN_INT if colour.low is None else colour.low)
            high = ml_int(ML_MAX_INT if colour.high is None else colour.high)
            body.append(with_range(low, high))
            text = f"int with {low}..{high}"
    elif isinstance(colour, RealSet):
        body, text = ET.Element("real"), "real"
    elif isinstance(colour, StringSet):
        body, text = ET.Element("string"), "string"
    elif isinstance(colour, EnumSet):
        body = ET.Element("enum")
        body.extend(ident(v) for v in colour.values)
        text = "with " + " | ".join(colour.values)
    elif isinstance(colour, ProductSet):
        body = ET.Element("product")
        names = [colours.name(c) for c in colour.components]
        body.extend(ident(n) for n in names)
        text = "product " + " * ".join(names)
    elif isinstance(colour, RecordSet):
        body = ET.Element("record")
        parts = []
        for fname, fcolour in colour.fields:
            rf = ET.SubElement(body, "recordfield")
            rf.extend([ident(fname), ident(colours.name(fcolour))])
            parts.append(f"{fname}:{colours.name(fcolour)}")
        text = "record " + " * ".join(parts)
    elif isinstance(colour, UnionSet):
        body = ET.Element("union")
        alternatives = []
        for constructor, part in colour.fields:
            union_field = ET.SubElement(body, "unionfield")
            union_field.append(ident(constructor))
            if part is not None:
                ET.SubElement(union_field, "type").append(ident(colours.name(part)))
            alternatives.append(constructor if part is None
                                else f"{constructor}:{colours.name(part)}")
        text = "union " + " + ".join(alternatives)
    else:
        assert isinstance(colour, ListSet)
        body = ET.Element("list")
        element_name = colours.name(colour.element)
        text = f"list {element_name}"
        if colour.max_length is not None:
            body.append(with_range("0", str(colour.max_length)))
            text += f" with 0..{colour.max_length}"
        body.append(ident(element_name))
    parts_out = [ET.Element("timed")] if colour.is_timed else []
    parts_out.append(body)
    timed = " timed" if colour.is_timed else ""
    return parts_out, f"colset {colours.name(colour)} = {text}{timed};"


# -- the pages of a hierarchical net -------------------------------------------------------------
@dataclass
class _PlaceOut:
    key: str
    name: str
    place: Place
    initmark: str = ""
    port: str | None = None  # "In", "Out", "I/O"
    socket: _PlaceOut | None = None
    fusion: str | None = None


@dataclass
class _TransOut:
    key: str
    name: str
    guard: str = ""
    time: str = ""
    code: str = ""
    priority: str = ""
    subpage: str | None = None  # instance path of the subpage, for substitution transitions


@dataclass
class _ArcOut:
    key: str
    orientation: str
    trans: _TransOut
    place: _PlaceOut
    text: str


@dataclass
class _Page:
    path: str
    name: str
    places: list[_PlaceOut] = field(default_factory=list)
    transitions: list[_TransOut] = field(default_factory=list)
    arcs: list[_ArcOut] = field(default_factory=list)
    children: list[str] = field(default_factory=list)


def _parent(path: str) -> str:
    return path.rpartition(".")[0]


def _local(name: str, path: str) -> str:
    return name[len(path) + 1:] if path and name.startswith(path + ".") else name


# -- the exporter ------------------------------------------------------------------------------
class _Ids:
    """``ID`` + digits, reusing the ids a caller gives for named elements."""

    def __init__(self, given: dict[str, str]):
        bad = [v for v in given.values() if not re.fullmatch(r"(ID|id)\d+", v)]
        if bad:
            raise InputError(f"ids must be ID (or id) followed by digits, got {bad[:3]}")
        self.given = given
        self.used: set[str] = set()
        self.reserved = set(given.values())
        self.counter = 1000

    def take(self, key: str | None = None) -> str:
        if key is not None and key in self.given and self.given[key] not in self.used:
            self.used.add(self.given[key])
            return self.given[key]
        while True:
            self.counter += 1
            candidate = f"ID{self.counter}"
            if candidate not in self.used and candidate not in self.reserved:
                self.used.add(candidate)
                return candidate


class _Exporter:
    def __init__(self, net: PetriNet, real_time: bool | None, ids: dict[str, str], layout: str,
                 learned: dict[str, Any] | None = None, tolerant: bool = False,
                 shared: _Shared | None = None):
        self.net = net
        self.shared = shared if shared is not None else _Shared(net)
        self.tolerant = tolerant  # a learning pass: skip what fails, the last pass reports it
        self.skipped = False  # whether this (learning) pass skipped something that failed
        self.fresh_from: dict[str, int] = {}  # base name -> the first suffix _fresh tries
        self.auto_time = real_time is None
        self.learned = learned if learned is not None else {"calls": {}, "returns": {}}
        self.sources: dict[int, _Source] = {}
        self.ids = _Ids(ids)
        self.layout = layout
        self.colours = _Colours()
        self.real_time = self._needs_real_time() if real_time is None else real_time
        self.variables: dict[str, str] = {}  # ML variable name -> colour set name
        self.renames: dict[str, dict[str, str]] = {}  # transition -> python var -> ML var
        self.globals: dict[tuple[str, int], str] = {}  # (python name, value id) -> ML name
        self.global_names: set[str] = set()  # the python names in self.globals
        self.translators: dict[tuple[str, Any], PythonToML] = {}  # while inscriptions
        self.global_values: dict[str, Any] = {}  # ML name -> value
        self.global_types: dict[str, MLType] = {}
        self.taken: set[str] = set(ML_RESERVED) | {"P_HIGH", "P_NORMAL", "P_LOW"}
        self.function_info: dict[str, FunctionInfo] = {}
        self.place_ids: dict[str, str] = {}
        self.trans_ids: dict[str, str] = {}
        self.arc_ids: dict[str, str] = {}

    # -- time type ------------------------------------------------------------------------
    def _needs_real_time(self) -> bool:
        def real(delay: Any) -> bool:
            if delay is None or isinstance(delay, Discrete):
                return False
            if isinstance(delay, Interval):
                return not delay.integer
            if isinstance(delay, Distribution):
                return True
            if isinstance(delay, int | float):
                return not float(delay).is_integer()
            return False

        for place in self.net.places.values():
            if any(not float(t.time).is_integer() for t in place.initial_tokens):
                return True
        if any(real(t.delay) for t in self.net.transitions.values()):
            return True
        return any(real(a.delay) for a in self.net.arcs)

    # -- names ----------------------------------------------------------------------------
    def _fresh(self, base: str) -> str:
        name = re.sub(r"[^A-Za-z0-9_']", "_", base).lstrip("_'") or "v"
        if not name[0].isalpha():
            name = "v" + name
        # names are never given back: the suffixes tried before stay taken
        suffix = self.fresh_from.get(name, 1)
        candidate = name if suffix == 1 else f"{name}_{suffix}"
        while candidate in self.taken or candidate in self.colours.taken:
            suffix += 1
            candidate = f"{name}_{suffix}"
        self.fresh_from[name] = suffix + 1
        self.taken.add(candidate)
        return candidate

    # -- run ------------------------------------------------------------------------------
    def run(self, xml: bool = True) -> str:
        net = self.net
        for place in net.places.values():
            self.colours.add(place.colour, f"place {place.name}")
        self._declare_globals()
        pages = self._pages()
        self.pages_by_path = pages
        self.page_names = {path: page.name for path, page in pages.items()}
        self._translate(pages)
        return self.write() if xml else ""

    def write(self) -> str:
        """The file, once :meth:`run` has translated the net."""
        return self._xml(self.pages_by_path)

    # -- declarations ---------------------------------------------------------------------
    def _scope_entries(self) -> Iterator[tuple[str, Any, str]]:
        """(python name, value, instance path) of every declaration an inscription may use."""
        for name, value in self.net.declarations.items():
            yield name, value, ""
        for transition in self.net.transitions.values():
            for name, value in transition.params.items():
                yield name, value, transition.module

    def _declare_globals(self) -> None:
        record_types = {c.record_type: c for c in self.colours.order if isinstance(c, RecordSet)}
        self.record_constructors: dict[int, RecordSet] = {}
        self.basis: dict[int, str] = {id(fn): name for name, fn in ML_BASIS_DECLARATIONS.items()}
        self.record_types = record_types
        for name, value, module in self._scope_entries():
            self._register(name, value, module)
        # the Python functions declared or used as actions, and what they call in their
        # own modules (or closures), become declarations too
        pending = [v for v in list(self.global_values.values()) if _is_python_function(v)]
        for transition in self.net.transitions.values():
            pending.extend(_action_parts(transition.action))
        while pending:
            fn = pending.pop()
            if id(fn) in self.sources:
                continue
            try:
                source = self._source(fn)
            except InputError:  # refused later, if something uses it
                continue
            for name, value in source.scope.items():
                if self._register(name, value, "") and _is_python_function(value):
                    pending.append(value)

    def _register(self, name: str, value: Any, module: str) -> bool:
        """Give a declaration its ML name; False when it needs none (colour sets, records,
        basis functions, objects whose attributes are inlined)."""
        key = (name, id(value))
        if key in self.globals:
            return True
        if isinstance(value, type) and value in self.record_types:
            self.record_constructors[id(value)] = self.record_types[value]
            return False
        if isinstance(value, RecordSet):
            self.colours.add(value, f"declaration {name}")
            self.record_constructors[id(value.record_type)] = value
            return False
        if id(value) in self.basis or isinstance(value, ColourSet):
            return False
        if not callable(value) and value_type(value) is None and not isinstance(
                value, frozenset | set | tuple | Cell):
            return False
        # a function read from a file keeps the name the file gave it (len, not len_)
        name_ml = _name_as_read(value, name)
        clash = name in self.global_names or name_ml in self.taken or \
            name_ml in self.colours.taken
        if not clash and is_ml_identifier(name_ml):
            ml = name_ml
            self.taken.add(ml)
        else:
            ml = self._fresh(f"{module.replace('.', '_')}_{name}" if module else name)
        self.globals[key] = ml
        self.global_names.add(name)
        self.global_values[ml] = value
        return True

    def _source(self, fn: Any, where: str | None = None) -> _Source:
        """``fn`` reduced to one expression, with the names it reads from its module or
        closure resolved (attributes of plain objects there inlined as constants)."""
        cached = self.sources.get(id(fn))
        if cached is not None:
            return cached
        known = self.shared.sources.get(id(fn))
        if known is not None:
            self.sources[id(fn)] = known[1]
            return known[1]
        where = where or f"declaration {getattr(fn, '__name__', fn)}"
        try:
            source = function_source(fn, where)
        except UnsupportedConstruct as exc:
            raise InputError(str(exc)) from None
        tree = ast.parse(source.body, mode="eval").body
        context = _python_context(fn)
        bound = set(source.params) | {a.arg for node in ast.walk(tree)
                                      if isinstance(node, ast.Lambda) for a in node.args.args}
        tree = _inline_attributes(tree, context, bound)
        scope: dict[str, Any] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id not in bound and node.id in context:
                scope[node.id] = context[node.id]
        result = _Source(source.params, source.annotations, source.returns, ast.unparse(tree),
                         scope)
        self.sources[id(fn)] = result
        self.shared.sources[id(fn)] = (fn, result)
        return result

    def _constant_entries(self) -> list[tuple[str, Any]]:
        return [(ml, v) for ml, v in self.global_values.items() if not callable(v)]

    def _function_entries(self) -> list[tuple[str, Any]]:
        return [(ml, v) for ml, v in self.global_values.items() if callable(v)]

    def _translator(self, transition: Transition | None,
                    own: Mapping[str, Any] | None = None) -> PythonToML:
        """A translator for the names ``transition`` sees (the net's globals when None),
        ``own`` (a Python function's module names) over them."""
        key = (transition.name if transition is not None else "",
               tuple(sorted((k, id(v)) for k, v in own.items())) if own else ())
        cached = self.translators.get(key)
        if cached is not None:
            return cached
        translator = self._new_translator(transition, own)
        if not self.function_info:  # functions translated: their types may still change
            self.translators[key] = translator
        return translator

    def _new_translator(self, transition: Transition | None,
                        own: Mapping[str, Any] | None) -> PythonToML:
        scope = dict(self.net.declarations)
        if transition is not None:
            scope.update(transition.params)
        if own is not None:
            scope.update(own)
        constants: dict[str, MLType] = {}
        constant_names: dict[str, str] = {}
        functions: dict[str, FunctionInfo] = {}
        records: dict[str, MLType] = {}
        values: dict[str, Any] = {}
        for name, value in scope.items():
            if id(value) in self.record_constructors:
                records[name] = self.shared.colour_type(self.record_constructors[id(value)])
                continue
            if isinstance(value, RecordSet):
                records[name] = self.shared.colour_type(value)
                continue
            if id(value) in self.basis:
                functions[name] = FunctionInfo(self.basis[id(value)], (REAL_T,), INT_T)
                continue
            ml = self.globals.get((name, id(value)))
            if ml is None:
                continue
            if callable(value):
                functions[name] = self._function_info(ml)
            else:
                constants[name] = self.global_types.get(ml, value_type(value))
                constant_names[name] = ml
                values[name] = value
        enums = {v: self.shared.colour_type(c) for c in self.colours.order
                 if isinstance(c, EnumSet)
                 for v in c.values}
        return PythonToML(constants=constants, constant_names=constant_names,
                          functions=functions, records=records, enum_constants=enums,
                          real_time=self.real_time, constant_values=values,
                          call_types=self.learned["calls"], memo=self.shared.translations,
                          option_forms=transition is not None,
                          datatype_constructors={
                              c: carries for v in self.net.declarations.values()
                              if isinstance(v, MLDatatype | MLLocal)
                              for c, carries in v.constructors.items()})

    def _function_info(self, ml: str) -> FunctionInfo:
        known = self.function_info.get(ml)
        if known is not None:
            return known
        calls = self.learned["calls"].get(ml)
        expected_by_callers = self.learned["calls"].get(f"{ml}:returns")
        returns = expected_by_callers[0] if expected_by_callers \
            else self.learned["returns"].get(ml)
        value = self.global_values.get(ml)
        if isinstance(value, DeclaredFunction):
            # the types the import knew: a parameter's colour set (``l:IL``), and which
            # arguments are lists (tcpn's Python holds an ML list and tuple alike)
            declared: list[MLType] = [self._named_colour_type(c) for c in value.param_colours]
            for i in value.list_params:
                if i < len(declared) and _kind_of(declared[i]) != "list":
                    declared[i] = ("list", None)
            if len(declared) == 1 and 0 in value.list_arguments and \
                    _kind_of(declared[0]) != "list":
                declared[0] = ("list", None)
            if any(t is not None for t in declared):
                learned = list(calls) if calls else []
                calls = [d if d is not None else (learned[i] if i < len(learned) else None)
                         for i, d in enumerate(declared)]
            if value.list_arguments:
                lists = tuple(("list", None) if i in value.list_arguments else None
                              for i in range(max(value.list_arguments) + 1))
                return FunctionInfo(ml, tuple(calls) if calls else None, returns, lists)
        return FunctionInfo(ml, tuple(calls) if calls else None, returns)

    def _declaration_texts(self) -> list[tuple[str, str]]:
        """("datatype"/"val"/"fun", ML text) for every declaration: datatypes read from a
        file first, then constants, then functions sorted."""
        out: list[tuple[str, str]] = []
        translator = self._translator(None)
        # datatypes read from a file, as it wrote them: constants and functions use them
        out.extend(("datatype", value.text) for value in self.net.declarations.values()
                   if isinstance(value, MLDatatype))
        blocks = self._blocks()
        in_block = {ml: key for key, members in blocks.items() for ml in members[1]}
        for ml, value in self._constant_entries():
            if ml in in_block:
                continue
            cell = isinstance(value, Cell)
            t = value_type(value.initial if cell else value)
            try:
                literal = translator.value(value.initial if cell else value, t,
                                           f"declaration {ml}")
            except UnsupportedConstruct as exc:
                if self._is_used(ml):
                    raise InputError(f"declaration {ml}: {exc.construct}") from None
                continue
            if cell:  # a reference cell: its declared value, not what a run left in it
                out.append(("val", f"val {ml} = ref ({literal});"))
                continue
            self.global_types[ml] = t
            out.append(("val", f"val {ml} = {literal};"))
        texts: dict[str, str] = {}
        deps: dict[str, list[str]] = {}
        used = self._reachable()
        # a Python function nothing calls is left out (its parameters' types would be
        # unknown); functions read from a CPN file are kept
        entries = {ml: v for ml, v in self._function_entries()
                   if ml in used or not _is_python_function(v)}
        for ml, value in entries.items():
            try:
                # sorted: a set's order changes with the process's string hash seed,
                # and the file must not; a call of a local block's function depends on
                # the block
                calls = {in_block.get(u, u) for u in self._calls(value)}
                if isinstance(value, DeclaredFunction):
                    calls |= {key for key, (block, _) in blocks.items() if any(
                        f"'{c}'" in value.body or f'"{c}"' in value.body
                        for c in block.constructors)}
                deps[in_block.get(ml, ml)] = sorted(
                    set(deps.get(in_block.get(ml, ml), [])) | {
                        u for u in calls if u != in_block.get(ml, ml) and (
                            u in entries or u in blocks)})
            except InputError:
                if self._is_used(ml):
                    raise
        for key, (block, _) in blocks.items():
            deps.setdefault(key, [])
            texts[key] = block.text
        sorter = graphlib.TopologicalSorter(deps)
        try:
            sorter.prepare()
        except graphlib.CycleError as exc:
            raise InputError(f"declarations {exc.args[1]} call each other in a cycle; CPN ML "
                             "needs 'fun ... and ...', which tcpn does not write") from None
        # callees first, by name among those ready together: the order depends on the calls
        # only, not on the order of the net's declarations (a file read back lists them in
        # its own order), so a net written, read and written again gives the same text
        order: list[str] = []
        while sorter.is_active():
            ready = sorted(sorter.get_ready())
            order.extend(ready)
            sorter.done(*ready)
        # callers first, so that each function learns its parameters' types from its callers
        for ml in reversed(order):
            if ml in blocks:
                continue
            where = f"declaration {ml}"
            try:
                texts[ml] = self._function_text(ml, entries[ml], where)
            except (UnsupportedConstruct, InputError) as exc:
                as_read = self._as_read(ml, entries[ml])
                if as_read is not None:
                    texts[ml] = as_read
                    continue
                if self._is_used(ml) and not self.tolerant:
                    raise InputError(str(exc)) from None
                self.skipped = True
                continue
        out.extend(("fun", texts[ml]) for ml in order if ml in texts)
        return out

    def _blocks(self) -> dict[str, tuple[MLLocal, set[str]]]:
        """The ``local`` blocks read from a file that are written as read, each with the
        ML names of the declarations it makes (nothing else is written for them). A block
        whose shown declaration has another name in this file (one taken here) is not:
        its text would not name it; its declarations are then written one by one."""
        blocks: dict[str, tuple[MLLocal, set[str]]] = {}
        for block in (v for v in self.net.declarations.values() if isinstance(v, MLLocal)):
            members = {(name, ml) for (name, value_id), ml in self.globals.items()
                       if name in block.names
                       and id(self.net.declarations.get(name)) == value_id}
            if all(block.shown.get(name, ml) == ml for name, ml in members):
                blocks[f"local {len(blocks)}"] = (block, {ml for _, ml in members})
        return blocks

    def _as_read(self, ml: str, value: Any) -> str | None:
        """A function read from a CPN file as the file wrote it, when tcpn does not
        translate its Python body back (curried parameters, clauses over datatype
        constructors, ``foldl``, ``:=``, ``List.find``): CPN Tools read that text. None
        when it has none, or when its name or a declaration it calls has another ML name
        in this file than in the one it was read from (the text would not name them)."""
        if not isinstance(value, DeclaredFunction) or value.ml_source is None:
            return None
        if not re.match(rf"fun\s+{re.escape(ml)}(?![\w'])", value.ml_source):
            return None
        python_names = Inscription.parse(value.body, f"function {value.name}").names
        for (name, _), spelled in self.globals.items():
            if name in python_names and spelled != _name_as_read(
                    self.global_values.get(spelled), name):
                return None
        return value.ml_source

    def _reachable(self) -> set[str]:
        """The ML names of the functions the inscriptions and actions call, transitively."""
        names: set[str] = set()
        for text in self._all_texts():
            names |= Inscription.parse(text, "inscription").names
        ml_of: dict[str, set[str]] = {}
        for (name, _), ml in self.globals.items():
            ml_of.setdefault(name, set()).add(ml)
        found = {ml for n in names for ml in ml_of.get(n, ())}
        for transition in self.net.transitions.values():
            if transition.action is not None and not isinstance(transition.action, CodeAction):
                found |= {self.globals[(n, id(v))] for n, v in self._action_scope(
                    transition).items() if (n, id(v)) in self.globals}
        pending = list(found)
        while pending:
            value = self.global_values.get(pending.pop())
            if not _is_python_function(value):
                continue
            try:
                callees = self._calls(value)
            except InputError:
                continue
            for callee in callees - found:
                found.add(callee)
                pending.append(callee)
        return found

    def _calls(self, value: Any) -> set[str]:
        """The ML names of the declarations a function calls."""
        if isinstance(value, DeclaredFunction):
            # a parameter named like a declaration (rto_after's sample) is no call of it
            uses = Inscription.parse(value.body, f"function {value.name}").names - set(
                value.params)
            return {self.globals[(n, id(v))] for n, v in self.net.declarations.items()
                    if n in uses and (n, id(v)) in self.globals}
        source = self._source(value)
        return {self.globals[(n, id(v))] for n, v in source.scope.items()
                if (n, id(v)) in self.globals}

    def _is_used(self, ml: str) -> bool:
        python_names = {k[0] for k, v in self.globals.items() if v == ml}
        for text in self._all_texts():
            if Inscription.parse(text, "inscription").names & python_names:
                return True
        value = self.global_values.get(ml)
        return any(value is v for source in self.sources.values() for v in source.scope.values())

    def _all_texts(self) -> Iterator[str]:
        for t in self.net.transitions.values():
            if t.guard:
                yield t.guard
            if isinstance(t.delay, str):
                yield t.delay
            if isinstance(t.action, CodeAction):
                yield t.action.body
        for a in self.net.arcs:
            for text in (a.inscription, a.when, a.delay, a.count):
                if isinstance(text, str):
                    yield text
        for value in self.global_values.values():
            if isinstance(value, DeclaredFunction):
                yield value.body

    def _function_text(self, ml: str, value: Any, where: str) -> str:
        module_scope: Mapping[str, Any] | None = None
        if isinstance(value, DeclaredFunction):
            params, body = value.params, value.body
            annotations: tuple[MLType, ...] = tuple(
                self._named_colour_type(c) for c in value.param_colours)
            returns: MLType = None
        else:
            source = self._source(value, where)
            params, body, annotations, returns = (source.params, source.body,
                                                  source.annotations, source.returns)
            module_scope = source.scope
        calls = self.learned["calls"].get(ml) or ()
        annotations = tuple(a if a is not None else (calls[i] if i < len(calls) else None)
                            for i, a in enumerate(annotations))
        expected_by_callers = self.learned["calls"].get(f"{ml}:returns")
        if returns is None and expected_by_callers:
            returns = expected_by_callers[0]
        translator = self._translator(None, module_scope)
        variables = dict(zip(params, annotations, strict=True))
        functions = dict(translator.functions)
        # a recursive call needs the function's own name in scope
        own = FunctionInfo(ml, annotations if any(annotations) else None, returns)
        for python_name, value2 in [(k[0], self.global_values[v]) for k, v in self.globals.items()
                                    if v == ml]:
            if value2 is value:
                functions[python_name] = own
        translator = dataclasses.replace(translator, functions=functions)
        # a parameter spelled like an SML reserved word (end, val...) gets another name
        renames = {p: self._fresh(f"{p}_") for p in params if not is_ml_identifier(p)}
        if isinstance(value, DeclaredFunction):  # an imported function keeps its ML names
            renames.update({p: spelled for p, spelled in zip(params, value.ml_params,
                                                             strict=True)
                            if spelled != p and is_ml_identifier(spelled)})
        text, _, inferred = translator.typed(body, where, variables, returns, renames)
        self.function_info[ml] = FunctionInfo(ml, annotations if any(annotations) else None,
                                              returns or inferred)
        if (returns or inferred) is not None:
            self.learned["returns"][ml] = returns or inferred
        params_text = ", ".join(
            f"{renames.get(p, p)}:{self.colours.for_type(a, where)}" if a is not None
            else renames.get(p, p) for p, a in zip(params, annotations, strict=True))
        return f"fun {ml} ({params_text}) = {text};"

    def _named_colour_type(self, name: str | None) -> MLType:
        if name is None:
            return None
        for colour, ml in self.colours.names.items():
            if ml == name:
                return colour_type(colour)
        return None

    # -- pages ----------------------------------------------------------------------------
    def _pages(self) -> dict[str, _Page]:
        net = self.net
        paths: list[str] = [""]

        def add_path(path: str) -> None:
            if path and path not in paths:
                add_path(_parent(path))
                paths.append(path)

        for module in [*(p.module for p in net.places.values()),
                       *(t.module for t in net.transitions.values())]:
            add_path(module)
        for instance in net.modules:
            add_path(instance.name)
        module_of = {m.name: m.module for m in net.modules}
        names_used: set[str] = set()
        pages: dict[str, _Page] = {}
        for path in paths:
            base = net.name if not path else module_of.get(path, path.rpartition(".")[2])
            name = base if base not in names_used else f"{base}_{path.replace('.', '_')}"
            candidate, suffix = name, 2
            while candidate in names_used:
                candidate, suffix = f"{name}_{suffix}", suffix + 1
            name = candidate
            names_used.add(name)
            pages[path] = _Page(path, name)
            if path:
                pages[_parent(path)].children.append(path)
        self.places_on: dict[tuple[str, str], _PlaceOut] = {}
        for place in net.places.values():
            out = _PlaceOut(f"place:{place.name}", _local(place.name, place.module), place)
            pages[place.module].places.append(out)
            self.places_on[(place.module, place.name)] = out
        for transition in net.transitions.values():
            pages[transition.module].transitions.append(
                _TransOut(f"trans:{transition.name}", _local(transition.name,
                                                             transition.module)))
        self.trans_out = {t.key[len("trans:"):]: t for p in pages.values()
                          for t in p.transitions}
        port_names = {(m.name, outer): inner for m in net.modules for inner, outer in m.ports}
        usage: dict[tuple[str, str], set[str]] = {}
        for index, arc in enumerate(net.arcs):
            transition = net.transitions[arc.transition]
            page = transition.module
            place_out = self._place_on(pages, page, net.places[arc.place], port_names)
            for path in self._chain(net.places[arc.place].module, page):
                usage.setdefault((path, arc.place), set()).add(arc.kind.value)
            pages[page].arcs.append(_ArcOut(f"arc:{index}", "", self.trans_out[arc.transition],
                                            place_out, ""))
        for (path, place_name), kinds in usage.items():
            port = self.places_on[(path, place_name)]
            port.port = ("In" if kinds <= {"input", "read", "reset"} else
                         "Out" if kinds == {"output"} else "I/O")
        for path in paths[1:]:
            parent = pages[_parent(path)]
            subst = _TransOut(f"subst:{path}", path.rpartition(".")[2], subpage=path)
            parent.transitions.append(subst)
            for port in pages[path].places:
                if port.socket is not None:
                    orientation = {"In": "PtoT", "Out": "TtoP"}.get(port.port or "", "BOTHDIR")
                    parent.arcs.append(_ArcOut(f"arc:subst:{path}:{port.place.name}",
                                               orientation, subst, port.socket, ""))
        return pages

    def _chain(self, owner: str, page: str) -> list[str]:
        """The pages below ``owner`` down to ``page`` where a port stands for a place."""
        if owner == page or not (owner == "" or page.startswith(owner + ".")):
            return []
        chain = []
        while page != owner:
            chain.append(page)
            page = _parent(page)
        return chain

    def _place_on(self, pages: dict[str, _Page], page: str, place: Place,
                  port_names: Mapping[tuple[str, str], str]) -> _PlaceOut:
        """The drawing of ``place`` on ``page``: itself, a port, or a fusion member."""
        key = (page, place.name)
        if key in self.places_on:
            return self.places_on[key]
        owner = place.module
        if owner == "" or page.startswith(owner + "."):
            parent_out = self._place_on(pages, _parent(page), place, port_names)
            local = port_names.get((page, place.name), parent_out.name)
            out = _PlaceOut(f"place:{place.name}@{page}", self._unique_on(pages[page], local),
                            place, socket=parent_out)
        else:
            original = self.places_on[(owner, place.name)]
            original.fusion = original.fusion or self._fresh(f"fusion_{place.name}")
            out = _PlaceOut(f"place:{place.name}@{page}",
                            self._unique_on(pages[page], _local(place.name, owner)), place,
                            fusion=original.fusion)
        pages[page].places.append(out)
        self.places_on[key] = out
        return out

    @staticmethod
    def _unique_on(page: _Page, name: str) -> str:
        names = {p.name for p in page.places}
        candidate, suffix = name, 2
        while candidate in names:
            candidate, suffix = f"{name}_{suffix}", suffix + 1
        return candidate

    # -- inscriptions ---------------------------------------------------------------------
    def _translate(self, pages: dict[str, _Page]) -> None:
        for page in pages.values():
            for place_out in page.places:
                # a port shows its socket's tokens; fusion members share one marking
                if place_out.socket is None:
                    place_out.initmark = self._initmark(place_out.place)
        for transition in self.net.transitions.values():
            with self._learning():
                self._translate_transition(transition)
        by_key = {a.key: a for p in pages.values() for a in p.arcs}
        for index, arc in enumerate(self.net.arcs):
            out = by_key[f"arc:{index}"]
            with self._learning():
                out.orientation, out.text = self._arc(arc)
        self.declarations = self._declaration_texts()

    @contextlib.contextmanager
    def _learning(self) -> Iterator[None]:
        try:
            yield
        except InputError:
            if not self.tolerant or isinstance(sys.exc_info()[1], _NeedsRealTime):
                raise
            self.skipped = True

    def _initmark(self, place: Place) -> str:
        where = f"initial marking of place {place.name}"
        if place.initial_draw is not None:  # drawn at initialisation: written as read
            return place.initial_draw.text
        translator = self._translator(None)
        tokens = place.initial_tokens
        if not tokens:
            return ""
        groups: list[list[Any]] = []  # [value, time, count], consecutive equal tokens merged
        for token in tokens:
            if groups and groups[-1][0] == token.value and groups[-1][1] == token.time:
                groups[-1][2] += 1
            else:
                groups.append([token.value, token.time, 1])
        stamped = place.colour.is_timed and any(t.time != 0 for t in tokens)
        terms = []
        for value, time, count in groups:
            literal = translator.value(value, place.colour, where)
            # '`~' would lex as one SML symbol: a negative literal goes in parentheses
            literal = literal if _atomic(literal) and not literal.startswith("~") \
                else f"({literal})"
            term = f"{count}`{literal}"
            if stamped:
                term += "@" + self._time_literal(time)
            terms.append(term)
        return (" +++ " if stamped else "++").join(terms)

    def _time_literal(self, time: float) -> str:
        if self.real_time:
            return ml_real(float(time))
        return ml_int(int(time))

    def _variables(self, transition: Transition) -> dict[str, MLType]:
        """The transition's variables and their ML types, from its pattern input arcs."""
        where = f"transition {transition.name}"
        found: dict[str, MLType] = {}
        translator = self._translator(transition)
        declared = set(self.net.scope_of(transition.name))
        for arc in self.shared.arcs_of[transition.name]:
            if arc.kind not in (ArcKind.INPUT, ArcKind.READ) or arc.inscription is None:
                continue
            ins = Inscription.parse(arc.inscription, arc.where)
            if not ins.is_pattern:
                continue
            colour = self.net.places[arc.place].colour
            for name, t in translator.pattern_types(arc.inscription,
                                                    self.shared.colour_type(colour),
                                                    arc.where).items():
                if name in declared:
                    continue
                found.setdefault(name, t)
        for name, colour in transition.free_variables.items():  # bound to every member
            found.setdefault(name, self.shared.colour_type(colour))
        if transition.action is not None:
            for name in transition.outputs:
                found[name] = self._output_type(transition, name, found, translator)
        for name, t in found.items():
            if t is None:
                raise InputError(f"{where}: can't tell the colour set of variable {name!r} "
                                 "(a tuple pattern that doesn't match its place's colour set)")
        return found

    def _output_type(self, transition: Transition, name: str, known: dict[str, MLType],
                     translator: PythonToML) -> MLType:
        for arc in self.shared.arcs_of[transition.name]:
            if arc.kind is ArcKind.OUTPUT and arc.inscription == name:
                return self.shared.colour_type(self.net.places[arc.place].colour)
        where = f"code action of transition {transition.name}"
        body = self._action_body(transition, where)
        inputs = {n: known.get(n) for n in self._action_inputs(transition, where)}
        try:
            result = self._code_translator(transition).infer(body, where, inputs)
        except UnsupportedConstruct as exc:
            raise InputError(str(exc)) from None
        if len(transition.outputs) == 1:
            return result
        if isinstance(result, tuple) and result[0] == "product":
            return result[1][transition.outputs.index(name)]
        return None

    def _action_inputs(self, transition: Transition, where: str) -> tuple[str, ...]:
        if isinstance(transition.action, CodeAction):
            return transition.action.inputs
        declared = set(self.net.scope_of(transition.name))
        # the generator 'rng' becomes CPN Tools' random functions; declarations are globals
        return tuple(n for n in self.shared.action_inputs(transition)
                     if n not in ("now", "rng") and n not in declared)

    def _code_translator(self, transition: Transition) -> PythonToML:
        translator = self._translator(transition, self._action_scope(transition))
        return dataclasses.replace(translator, generators=frozenset(
            {"rng"} if "rng" in self.shared.action_inputs(transition) else set()))

    def _action_scope(self, transition: Transition) -> dict[str, Any]:
        """The names the action's Python reads from its module or closure."""
        scope: dict[str, Any] = {}
        for part in _action_parts(transition.action):
            scope.update(self._source(part).scope)
        return scope

    def _action_body(self, transition: Transition, where: str) -> str:
        """The action as one Python expression giving its outputs (a tuple if several).

        An action made of parts (:func:`action_parts`) runs them in turn: each later part
        sees the outputs of the earlier ones under their names.
        """
        action = transition.action
        if isinstance(action, CodeAction):
            return action.body
        assert action is not None
        parts = getattr(action, "action_parts", None) or ((action, transition.outputs),)
        try:
            bodies = [(self._part_body(fn, tuple(outputs), where), outputs)
                      for fn, outputs in parts]
        except UnsupportedConstruct as exc:
            raise InputError(str(exc)) from None
        text, outputs = bodies[-1]
        for body, part_outputs in reversed(bodies[:-1]):
            if len(outputs) == 1:
                inner = f"({', '.join(part_outputs)}, {text})"
            else:
                later = ", ".join(f"later_[{i}]" for i in range(len(outputs)))
                inner = f"(lambda later_: ({', '.join(part_outputs)}, {later}))({text})"
            if len(part_outputs) == 1:
                text = f"(lambda {part_outputs[0]}: {inner})({body})"
            else:
                unpacked = ", ".join(f"first_[{i}]" for i in range(len(part_outputs)))
                text = (f"(lambda first_: (lambda {', '.join(part_outputs)}: {inner})"
                        f"({unpacked}))({body})")
            outputs = (*part_outputs, *outputs)
        return text

    def _part_body(self, fn: Any, outputs: tuple[str, ...], where: str) -> str:
        """:func:`action_body` of one Python function of an action, once per export."""
        source = self._source(fn, where).body
        key = (id(fn), outputs, source)
        body = self.shared.action_bodies.get(key)
        if body is None:
            body = self.shared.action_bodies[key] = action_body(fn, outputs, where, source)
        return body

    def _var_names(self, transition: Transition, variables: dict[str, MLType]) -> dict[str, str]:
        renames = {}
        for name, t in variables.items():
            where = f"variable {name} of transition {transition.name}"
            free = transition.free_variables.get(name)
            # a free variable ranges over its own colour set (Person = int with 1..100),
            # not over the first one of its ML type (INT)
            colour = self.colours.add(free, where) if free is not None and \
                self.shared.colour_type(free) == t else self.colours.for_type(t, where)
            if self.variables.get(name) == colour:
                renames[name] = name
                continue
            candidate = name if (is_ml_identifier(name) and name not in self.variables
                                 and name not in self.taken) else None
            if candidate is None:
                same = [v for v, c in self.variables.items()
                        if c == colour and v.startswith(_ml_base(name))]
                candidate = same[0] if same else self._fresh(name)
            self.variables[candidate] = colour
            self.taken.add(candidate)
            renames[name] = candidate
        return renames

    def _translate_transition(self, transition: Transition) -> None:
        where = f"transition {transition.name}"
        out = self.trans_out[transition.name]
        variables = self._variables_cached(transition)
        renames = self._var_names(transition, variables)
        self.renames[transition.name] = renames
        translator = self._translator(transition)
        self._current = (translator, variables, renames)
        if transition.guard:
            out.guard = "[" + self._ml(transition.guard, f"guard of {where}") + "]"
        delay = self._delay(transition.delay, f"delay of {where}")
        out.time = delay
        if transition.priority != P_NORMAL:
            out.priority = {P_HIGH: "P_HIGH", P_LOW: "P_LOW"}.get(transition.priority,
                                                                  ml_int(transition.priority))
        if transition.action is not None:
            out.code = self._code(transition)

    def _ml(self, text: str, where: str, expected: MLType = None) -> str:
        translator, variables, renames = self._current
        try:
            return translator.expression(text, where, variables, expected, renames)
        except UnsupportedConstruct as exc:
            raise InputError(str(exc)) from None

    def _ml_typed(self, text: str, where: str, expected: MLType = None) -> tuple[str, int, MLType]:
        translator, variables, renames = self._current
        try:
            return translator.typed(text, where, variables, expected, renames)
        except UnsupportedConstruct as exc:
            raise InputError(str(exc)) from None

    def _delay(self, delay: Any, where: str) -> str:
        if delay is None:
            return ""
        if isinstance(delay, Discrete | Interval):  # CPN Tools 4 writes @+[a,b]
            return "@+" + self._distribution(delay, where)
        if isinstance(delay, Distribution):
            self._need_real(where, "a random delay other than discrete()")
            return "@++" + self._distribution(delay, where)
        if isinstance(delay, int | float):
            if float(delay).is_integer():
                return f"@+{int(delay)}"
            self._need_real(where, f"the delay {delay!r}")
            return f"@++{ml_real(float(delay))}"
        text, prec, t = self._ml_typed(delay, where)
        text = text if prec >= 10 else f"({text})"
        if t == REAL_T:
            self._need_real(where, f"the real-valued delay {delay!r}")
            return f"@++{text}"
        return f"@+{text}"

    def _distribution(self, delay: Distribution, where: str) -> str:
        try:
            return delay.cpn_ml()
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None

    def _need_real(self, where: str, what: str) -> None:
        if not self.real_time:
            raise _NeedsRealTime(f"{where}: {what} needs real model time; export with "
                                 "real_time=True (CPN Tools' realtimestamp option)")

    def _code(self, transition: Transition) -> str:
        where = f"code action of transition {transition.name}"
        inputs = self._action_inputs(transition, where)
        body = self._action_body(transition, where)
        renames = self.renames[transition.name]
        expected: MLType = None
        variables = self._current[1]
        if len(transition.outputs) == 1:
            expected = variables.get(transition.outputs[0])
        else:
            expected = ("product", tuple(variables.get(o) for o in transition.outputs))
        saved = self._current
        self._current = (self._code_translator(transition), *saved[1:])
        try:
            action = self._ml(body, where, expected)
        finally:
            self._current = saved
        lines = []
        if inputs:
            lines.append(f"input ({', '.join(renames.get(n, n) for n in inputs)});")
        lines.append(f"output ({', '.join(renames[n] for n in transition.outputs)});")
        lines.append(f"action\n{action};")
        return "\n".join(lines)

    def _arc(self, arc: Arc) -> tuple[str, str]:
        transition = self.net.transitions[arc.transition]
        place = self.net.places[arc.place]
        self._current = (self._translator(transition), self._variables_cached(transition),
                         self.renames[transition.name])
        where = arc.where
        # CPN Tools compiles an inhibitor or reset arc only with an inscription, and then
        # ignores which multiset it names (the place must be empty / is emptied): 'empty'
        # type-checks on every place
        if arc.kind is ArcKind.RESET:
            return "Reset", "empty"
        if arc.kind is ArcKind.INHIBITOR:
            if arc.inscription is not None or arc.count != 1:
                raise InputError(f"{where}: CPN Tools' inhibitor arcs test that the place is "
                                 "empty; an inscription or count has no CPN Tools form")
            return "Inhibitor", "empty"
        if arc.kind is ArcKind.READ and place.colour.is_timed:
            raise InputError(f"{where}: CPN Tools has no read arc for a timed place (a double "
                             "arc would give the token a new timestamp)")
        assert arc.inscription is not None
        expected = self.shared.colour_type(place.colour)
        # a multiset computed from the binding is a list of the place's colours in CPN ML
        # ('a ms = 'a list); a value ML can't write (a dict of counts) is refused by name
        value, prec, _ = self._ml_typed(arc.inscription, where,
                                        ("list", expected) if arc.multiset else expected)
        if isinstance(arc.count, str):
            count_text, count_prec, _ = self._ml_typed(arc.count, f"count of {where}", INT_T)
            count = count_text if count_prec >= 10 else f"({count_text})"
        else:
            count = str(arc.count)
        value_atom = value if prec >= 10 and not value.startswith("~") else f"({value})"
        # a multiset arc's list is already a multiset: no ``1`` before it
        text = value if count == "1" and (arc.when is None or arc.multiset) \
            else f"{count}`{value_atom}"
        if arc.when is not None:
            cond = self._ml(arc.when, f"condition of {where}", "bool")
            text = f"if {cond} then {text} else empty"
        if arc.delay is not None:
            delay = self._delay(arc.delay, f"delay of {where}")
            if arc.when is None and prec < 10 and count == "1":
                text = f"({text})"
            text = f"{text}{delay}"
        orientation = {ArcKind.INPUT: "PtoT", ArcKind.OUTPUT: "TtoP", ArcKind.READ: "BOTHDIR"}
        return orientation[arc.kind], text

    def _variables_cached(self, transition: Transition) -> dict[str, MLType]:
        cache = self.__dict__.setdefault("_var_cache", {})
        if transition.name not in cache:
            cache[transition.name] = self._variables(transition)
        result: dict[str, MLType] = cache[transition.name]
        return result

    # -- XML ------------------------------------------------------------------------------
    def _xml(self, pages: dict[str, _Page]) -> str:
        root = ET.Element("workspaceElements")
        ET.SubElement(root, "generator", tool="tcpn", version=__version__, format="6")
        cpnet = ET.SubElement(root, "cpnet")
        cpnet.append(self._globbox())
        positions = {path: self._layout(page) for path, page in pages.items()}
        page_ids = {path: self.ids.take(f"page:{path}") for path in pages}
        # transition ids increase in the net's order, which the importer restores from
        # them: the simulator breaks ties by that order (pages can't hold it: they group
        # the transitions by module)
        for name in self.net.transitions:
            self.trans_ids[f"trans:{name}"] = self.ids.take(f"trans:{name}")
        for name in self.net.places:  # likewise the places (their first drawing) and arcs
            self.place_ids[f"place:{name}"] = self.ids.take(f"place:{name}")
        for index in range(len(self.net.arcs)):
            self.arc_ids[f"arc:{index}"] = self.ids.take(f"arc:{index}")
        for page in pages.values():
            for place_out in page.places:
                if place_out.key not in self.place_ids:  # a port or a fusion member
                    self.place_ids[place_out.key] = self.ids.take(place_out.key)
            for trans_out in page.transitions:
                if trans_out.key not in self.trans_ids:  # a substitution transition
                    self.trans_ids[trans_out.key] = self.ids.take(trans_out.key)
            for arc_out in page.arcs:
                if arc_out.key not in self.arc_ids:  # an arc of a substitution transition
                    self.arc_ids[arc_out.key] = self.ids.take(arc_out.key)
        for path, page in pages.items():
            cpnet.append(self._page_xml(page, page_ids, positions[path]))
        fusions: dict[str, list[str]] = {}
        for page in pages.values():
            for place_out in page.places:
                if place_out.fusion:
                    fusions.setdefault(place_out.fusion, []).append(self.place_ids[place_out.key])
        for name, members in fusions.items():
            fusion = ET.SubElement(cpnet, "fusion", id=self.ids.take(), name=name)
            for member in members:
                ET.SubElement(fusion, "fusion_elm", idref=member)
        instances = ET.SubElement(cpnet, "instances")
        top_instance = self.ids.take()
        top = ET.SubElement(instances, "instance", id=top_instance, page=page_ids[""])

        def nest(element: ET.Element, path: str) -> None:
            for child in pages[path].children:
                sub = ET.SubElement(element, "instance", id=self.ids.take(),
                                    trans=self.trans_ids[f"subst:{child}"])
                nest(sub, child)

        nest(top, "")
        options = ET.SubElement(cpnet, "options")
        option = ET.SubElement(options, "option", name="realtimestamp")
        ET.SubElement(ET.SubElement(option, "value"), "boolean").text = (
            "true" if self.real_time else "false")
        binders = ET.SubElement(cpnet, "binders")
        binder = ET.SubElement(binders, "cpnbinder", id=self.ids.take(), x="100", y="100",
                               width="800", height="600")
        sheet = ET.SubElement(ET.SubElement(binder, "sheets"), "cpnsheet", id=self.ids.take(),
                              panx="0.000000", pany="0.000000", zoom="1.000000",
                              instance=top_instance)
        ET.SubElement(ET.SubElement(sheet, "zorder"), "position", value="0")
        ET.SubElement(ET.SubElement(binder, "zorder"), "position", value="0")
        ET.SubElement(cpnet, "monitorblock", name="Monitors")
        ET.SubElement(cpnet, "IndexNode", expanded="true")
        ET.indent(root, "  ")
        body = ET.tostring(root, encoding="unicode")
        return f'<?xml version="1.0" encoding="iso-8859-1"?>\n{_DOCTYPE}\n{body}\n'

    def _globbox(self) -> ET.Element:
        globbox = ET.Element("globbox")
        block = ET.SubElement(globbox, "block", id=self.ids.take())
        ET.SubElement(block, "id").text = "Standard priorities"
        for name, value in (("P_HIGH", P_HIGH), ("P_NORMAL", P_NORMAL), ("P_LOW", P_LOW)):
            _ml_element(block, self.ids.take(), f"val {name} = {value};")
        block = ET.SubElement(globbox, "block", id=self.ids.take())
        ET.SubElement(block, "id").text = "Standard declarations"
        own = {self.colours.name(c) for c in self.colours.order if not self._is_standard(c)}
        for name, standard in zip(_STANDARD_NAMES, _STANDARD_COLOURS, strict=True):
            if name in own:  # the net declares its own colour set of that name
                continue
            if standard is None:
                element = ET.SubElement(block, "color", id=self.ids.take())
                ET.SubElement(element, "id").text = name
                ET.SubElement(element, name.lower())
                ET.SubElement(element, "layout").text = f"colset {name} = {name.lower()};"
                continue
            self._colour_element(block, standard.named(name), name)
        block = ET.SubElement(globbox, "block", id=self.ids.take())
        ET.SubElement(block, "id").text = "Declarations"
        for colour in self.colours.order:
            if self._is_standard(colour):
                continue
            self._colour_element(block, colour, self.colours.name(colour))
        by_colour: dict[str, list[str]] = {}
        for variable, colour_name in self.variables.items():
            by_colour.setdefault(colour_name, []).append(variable)
        for colour_name, names in by_colour.items():
            var = ET.SubElement(block, "var", id=self.ids.take())
            ET.SubElement(ET.SubElement(var, "type"), "id").text = colour_name
            for variable in names:
                ET.SubElement(var, "id").text = variable
            ET.SubElement(var, "layout").text = f"var {', '.join(names)} : {colour_name};"
        for _, text in self.declarations:
            _ml_element(block, self.ids.take(), text)
        return globbox

    def _is_standard(self, colour: ColourSet) -> bool:
        name = self.colours.name(colour)
        if name not in _STANDARD_NAMES or colour.is_timed:
            return False
        standard = dict(zip(_STANDARD_NAMES, _STANDARD_COLOURS, strict=True))[name]
        return standard is not None and colour == standard.named(name)

    def _colour_element(self, parent: ET.Element, colour: ColourSet, name: str) -> None:
        element = ET.SubElement(parent, "color", id=self.ids.take())
        ET.SubElement(element, "id").text = name
        saved = self.colours.names.get(colour)
        self.colours.names[colour] = name
        parts, layout = _colour_xml(colour, self.colours)
        if saved is not None:
            self.colours.names[colour] = saved
        element.extend(parts)
        ET.SubElement(element, "layout").text = layout

    def _layout(self, page: _Page) -> dict[str, tuple[float, float]]:
        nodes = [p.key for p in page.places] + [t.key for t in page.transitions]
        if not nodes:
            return {}
        if self.layout == "grid" or shutil.which("dot") is None:
            if self.layout == "dot":
                raise InputError("Graphviz's 'dot' is not installed: install it (apt-get "
                                 "install graphviz) or export with layout='grid'")
            width = max(1, math.ceil(math.sqrt(len(nodes))))
            return {key: (150.0 * (i % width), -120.0 * (i // width))
                    for i, key in enumerate(nodes)}
        import graphviz

        graph = graphviz.Digraph(graph_attr={"rankdir": "TB", "nodesep": "1.2",
                                             "ranksep": "1.0"})
        index = {key: f"n{i}" for i, key in enumerate(nodes)}
        for p in page.places:
            graph.node(index[p.key], label="", shape="ellipse", width="0.84", height="0.56",
                       fixedsize="true")
        for t in page.transitions:
            graph.node(index[t.key], label="", shape="box", width="0.84", height="0.56",
                       fixedsize="true")
        for a in page.arcs:
            ends = (index[a.place.key], index[a.trans.key])
            graph.edge(*(ends if a.orientation != "TtoP" else ends[::-1]))
        positions: dict[str, tuple[float, float]] = {}
        by_name = {v: k for k, v in index.items()}
        for line in graph.pipe(format="plain").decode().splitlines():
            parts = line.split()
            if parts and parts[0] == "node":
                positions[by_name[parts[1]]] = (float(parts[2]) * _POINTS_PER_INCH,
                                                float(parts[3]) * _POINTS_PER_INCH)
        # dot's plain output has y pointing up, as CPN files do (CPN Tools negates y when it
        # draws): keep the sign, only centre the drawing on the origin
        cx = sum(x for x, _ in positions.values()) / len(positions)
        cy = sum(y for _, y in positions.values()) / len(positions)
        return {k: (round(x - cx, 6), round(y - cy, 6)) for k, (x, y) in positions.items()}

    def _page_xml(self, page: _Page, page_ids: dict[str, str],
                  positions: dict[str, tuple[float, float]]) -> ET.Element:
        element = ET.Element("page", id=page_ids[page.path])
        ET.SubElement(element, "pageattr", name=page.name)
        for place_out in page.places:
            x, y = positions[place_out.key]
            place = ET.SubElement(element, "place", id=self.place_ids[place_out.key])
            _objatts(place, x, y)
            ET.SubElement(place, "text").text = place_out.name
            ET.SubElement(place, "ellipse", w="60.000000", h="40.000000")
            ET.SubElement(place, "token", x="-10.000000", y="0.000000")
            ET.SubElement(place, "marking", x="0.000000", y="0.000000", hidden="false")
            _inscription(place, "type", self.ids.take(), x + 40, y - 24,
                         self.colours.name(place_out.place.colour))
            _inscription(place, "initmark", self.ids.take(), x + 40, y + 24,
                         place_out.initmark)
            if place_out.port:
                port = ET.SubElement(place, "port", id=self.ids.take(), type=place_out.port)
                _objatts(port, x - 30, y - 20, inscription=True)
            if place_out.fusion:
                info = ET.SubElement(place, "fusioninfo", id=self.ids.take(),
                                     name=place_out.fusion)
                _objatts(info, x - 30, y + 20, inscription=True)
        for trans_out in page.transitions:
            x, y = positions[trans_out.key]
            trans = ET.SubElement(element, "trans", id=self.trans_ids[trans_out.key],
                                  explicit="false")
            _objatts(trans, x, y)
            ET.SubElement(trans, "text").text = trans_out.name
            ET.SubElement(trans, "box", w="60.000000", h="40.000000")
            if trans_out.subpage is not None:
                self._subst_xml(trans, trans_out, page_ids, x, y)
            ET.SubElement(trans, "binding", x="7.200000", y="-3.000000")
            _inscription(trans, "cond", self.ids.take(), x - 40, y + 30, trans_out.guard)
            _inscription(trans, "time", self.ids.take(), x + 45, y + 30, trans_out.time)
            _inscription(trans, "code", self.ids.take(), x + 60, y - 40, trans_out.code)
            _inscription(trans, "priority", self.ids.take(), x - 60, y - 30,
                         trans_out.priority)
        for arc_out in page.arcs:
            arc = ET.SubElement(element, "arc", id=self.arc_ids[arc_out.key],
                                orientation=arc_out.orientation, order="1")
            px, py = positions[arc_out.place.key]
            tx, ty = positions[arc_out.trans.key]
            _objatts(arc, 0.0, 0.0)
            ET.SubElement(arc, "arrowattr", headsize="1.200000", currentcyckle="2")
            ET.SubElement(arc, "transend", idref=self.trans_ids[arc_out.trans.key])
            ET.SubElement(arc, "placeend", idref=self.place_ids[arc_out.place.key])
            _inscription(arc, "annot", self.ids.take(), (px + tx) / 2 + 12, (py + ty) / 2,
                         arc_out.text)
        ET.SubElement(element, "constraints")
        return element

    def _subst_xml(self, trans: ET.Element, trans_out: _TransOut, page_ids: dict[str, str],
                   x: float, y: float) -> None:
        assert trans_out.subpage is not None
        path = trans_out.subpage
        pairs = []
        for place_out in self._subpage_ports(path):
            assert place_out.socket is not None
            pairs.append(f"({self.place_ids[place_out.key]},"
                         f"{self.place_ids[place_out.socket.key]})")
        subst = ET.SubElement(trans, "subst", subpage=page_ids[path], portsock="".join(pairs))
        info = ET.SubElement(subst, "subpageinfo", id=self.ids.take(),
                             name=self.page_names[path])
        _objatts(info, x, y - 30, inscription=True)

    def _subpage_ports(self, path: str) -> list[_PlaceOut]:
        return [p for p in self.pages_by_path[path].places if p.socket is not None]


def _name_as_read(value: Any, python_name: str) -> str:
    """The name a function read from a CPN file has in it (``len`` for the Python
    ``len_``); ``python_name`` for anything else."""
    if isinstance(value, DeclaredFunction) and value.ml_source is not None:
        match = re.match(r"fun\s+([A-Za-z][\w']*)", value.ml_source)
        if match:
            return match.group(1)
    return python_name


def _ml_base(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_']", "_", name).lstrip("_'") or "v"


def _atomic(text: str) -> bool:
    return bool(re.fullmatch(r"~?[A-Za-z0-9_'.]+|\(.*\)|\[.*\]|\{.*\}|\"[^\"]*\"", text))


def _ml_element(parent: ET.Element, element_id: str, text: str) -> None:
    element = ET.SubElement(parent, "ml", id=element_id)
    element.text = text
    ET.SubElement(element, "layout").text = text


def _objatts(element: ET.Element, x: float, y: float, *, inscription: bool = False) -> None:
    ET.SubElement(element, "posattr", x=f"{x:.6f}", y=f"{y:.6f}")
    ET.SubElement(element, "fillattr", colour="White", pattern="Solid" if inscription else "",
                  filled="false")
    ET.SubElement(element, "lineattr", colour="Black", thick="0" if inscription else "1",
                  type="Solid")
    ET.SubElement(element, "textattr", colour="Black", bold="false")


def _inscription(parent: ET.Element, tag: str, element_id: str, x: float, y: float,
                 text: str) -> None:
    element = ET.SubElement(parent, tag, id=element_id)
    _objatts(element, x, y, inscription=True)
    ET.SubElement(element, "text", tool="CPN Tools", version="4.0.1").text = text



@dataclass(frozen=True)
class _Source:
    """A Python function as one expression, and the names it reads from its module."""

    params: tuple[str, ...]
    annotations: tuple[MLType, ...]
    returns: MLType
    body: str
    scope: dict[str, Any]


def _is_python_function(value: Any) -> bool:
    return isinstance(value, types.FunctionType)


def _action_parts(action: Any) -> list[Any]:
    """The Python functions an action runs (several for one made by parts)."""
    if action is None or isinstance(action, CodeAction):
        return []
    parts = getattr(action, "action_parts", None)
    if parts:
        return [fn for fn, _ in parts]
    return [action] if callable(action) else []


def _python_context(fn: Any) -> dict[str, Any]:
    """The names a Python function can read besides its parameters: its closure over its
    module's globals, as Python resolves them."""
    target = getattr(fn, "__cpn_ml__", fn)
    context: dict[str, Any] = dict(getattr(target, "__globals__", {}))
    closure = getattr(target, "__closure__", None) or ()
    for name, cell in zip(target.__code__.co_freevars, closure, strict=True):
        try:
            context[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    return context


def _inline_attributes(tree: ast.expr, context: Mapping[str, Any], bound: set[str]) -> ast.expr:
    """Replace ``obj.attr`` by its value when ``obj`` is a plain object of ``context`` (a
    configuration such as a dataclass instance) and the value is a number, string or
    bool: CPN ML has no objects, only the values they hold."""

    class Inline(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if isinstance(node.value, ast.Name) and node.value.id not in bound:
                owner = context.get(node.value.id, _MISSING)
                if owner is not _MISSING and not isinstance(owner, type | types.ModuleType) \
                        and not callable(owner) and value_type(owner) is None:
                    value = getattr(owner, node.attr, _MISSING)
                    if isinstance(value, bool | int | float | str):
                        return ast.copy_location(ast.Constant(value), node)
            return self.generic_visit(node)

    result: ast.expr = Inline().visit(tree)
    return result


_MISSING = object()


def _kind_of(t: MLType) -> str | None:
    """An ML type's kind (``"list"``, ``"product"``, ``"int"``...), None when unknown."""
    return t if t is None or isinstance(t, str) else str(t[0])
