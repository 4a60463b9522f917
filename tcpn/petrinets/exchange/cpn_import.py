"""Import a CPN Tools file (.cpn, format 6) into a tcpn net, reporting what tcpn can't express.

The file is read safely (:mod:`defusedxml`: no entities, no external references; a size
limit), checked (unique ids, arc ends that exist, declared colour sets, CPN ML that parses)
and flattened: each page instance's places and transitions get the instance path as a
prefix (``Server.Start``), ports merge with their sockets, fusion sets become one place.
Declarations, guards, delays, arc inscriptions and code segments are translated to Python
for the subset :mod:`~tcpn.petrinets.exchange.cpnml` covers. What isn't expressible (say,
SML with side effects) is left out *element by element* and listed in an
:class:`ImportReport`; the rest is kept. :attr:`ImportedNet.complete` says whether anything
was left out, and ``strict=True`` turns a left-out element into an error.

Malformed files raise :class:`CpnFormatError` naming the file, line and element id.

>>> from tcpn.petrinets.examples import counter
>>> from tcpn.petrinets.exchange.cpn_export import to_cpn
>>> imported = read_cpn(to_cpn(counter(3), layout="grid"))
>>> imported.complete, sorted(imported.net.places), imported.net.declarations["LIMIT"]
(True, ['count'], 3)
"""

from __future__ import annotations

import ast
import contextlib
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser
from lark import Token as LarkToken
from lark import Tree

from tcpn.errors import InputError
from tcpn.limits import Limits, UnreadableInput, limit_problem, limits, read_input
from tcpn.petrinets.cells import CELL_FUNCTIONS, Cell, ml_ref
from tcpn.petrinets.colours import (
    BoolSet,
    ClockSet,
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
    ml_field,
    record_class,
)
from tcpn.petrinets.distributions import (
    Discrete,
    Distribution,
    Exponential,
    Interval,
    TruncatedNormal,
    Uniform,
)
from tcpn.petrinets.engine.compiler import compile_net
from tcpn.petrinets.engine.initial_draws import DrawnTerm, InitialDraw, term_tokens
from tcpn.petrinets.exchange.cpnml import (
    BASIS_CONSTRUCTORS,
    ML_BASIS_DECLARATIONS,
    ML_MAX_INT,
    ML_MIN_INT,
    MLSyntaxError,
    MLToPython,
    MultisetTerm,
    UnsupportedConstruct,
    is_ml_identifier,
    ml_string,
    multiset_terms,
    parse_ml,
    py_name,
    split_delay,
)
from tcpn.petrinets.exchange.cpnml_forms import names_in
from tcpn.petrinets.exchange.functions import (
    CodeAction,
    DeclaredFunction,
    MLDatatype,
    MLLocal,
)
from tcpn.petrinets.exchange.ml_infix import Fixity, FixityError
from tcpn.petrinets.exchange.ml_use import (
    MAX_USE_DEPTH,
    UseFileError,
    UseFileMissing,
    split_declarations,
    use_file_text,
)
from tcpn.petrinets.inscriptions import Inscription, is_pattern_tree
from tcpn.petrinets.net import (
    P_HIGH,
    P_LOW,
    P_NORMAL,
    Arc,
    ArcKind,
    ModuleInstance,
    PetriNet,
    Place,
    Token,
    Transition,
)
from tcpn.petrinets.restricted import (
    EvaluationBudgetError,
    UntrustedCodeError,
    check_expression,
    check_net,
    evaluation_budget,
    restricted_namespace,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "CpnFormatError",
    "ImportReport",
    "ImportedNet",
    "IncompleteImportError",
    "ReportItem",
    "read_cpn",
]

#: Basis functions tcpn reads otherwise than CPN Tools on the modeller's machine, noted once
#: per file: Python name -> (what, how it is read).
_NOTED_BASIS = {
    "ml_date_from_time_local": ("Date.fromTimeLocal", "read in UTC, the same on every "
                                "machine (CPN Tools uses the time zone of the one it runs on)"),
    "ml_discard": ("TextIO", "what the model writes to files or prints is dropped: tcpn "
                   "opens no file a model names (the net reads nothing back from them)"),
}


_STANDARD_PRIORITIES = {"P_HIGH": P_HIGH, "P_NORMAL": P_NORMAL, "P_LOW": P_LOW}
#: CPN Tools 4's time interval (integer bounds), the delay of ``@+[a,b]``.
_INTERVAL = re.compile(r"^\[\s*(\d+)\s*,\s*(\d+)\s*\]$")
#: Files larger than this are refused before parsing (``tcpn.limits.Limits.net_file_bytes``).
DEFAULT_MAX_BYTES = Limits().net_file_bytes


class CpnFormatError(InputError):
    """A file that is not a well-formed CPN Tools net: names the file, line and element id."""

    def __init__(self, source: str, message: str, line: int | None = None,
                 element_id: str | None = None):
        self.source, self.line, self.element_id = source, line, element_id
        where = source + (f", line {line}" if line else "") + (
            f", element {element_id}" if element_id else "")
        super().__init__(f"{where}: {message}")


class IncompleteImportError(InputError):
    """``strict=True`` and some elements could not be imported (listed in the message)."""

    def __init__(self, report: ImportReport):
        self.report = report
        super().__init__(report.text(limit=20))


@dataclass
class ReportItem:
    """One element left out of (or changed in) the imported net, and why."""

    kind: str
    element_id: str
    name: str
    line: int | None
    reason: str
    #: the page the element is drawn on (empty for declarations and file-level items)
    page: str = ""
    #: the name it failed on because nothing declared it (empty otherwise)
    missing: str = ""
    #: the left-out element that took this one along (a place its arcs touch, the
    #: declaration or ``use`` file that would have given a name it uses); None for a root
    cause: ReportItem | None = field(default=None, compare=False, repr=False)
    #: the arcs left out with it (a transition's own arcs)
    arcs: int = 0
    #: the column in the file where the construct begins, when known (declarations)
    column: int | None = None
    #: the SML file the construct is written in when it is not the model (a file the
    #: model loads with ``use``: ``line`` and ``column`` are then in that file)
    file: str = ""

    @property
    def root(self) -> ReportItem:
        """The first element of the chain of causes that took this one along."""
        item = self
        while item.cause is not None:
            item = item.cause
        return item

    def __str__(self) -> str:
        line = f"line {self.line}" if self.line else ""
        if line and self.column:
            line += f", column {self.column}"
        where = " ".join(p for p in (_printable(self.element_id), _printable(self.file), line)
                         if p)
        page = f", page {_printable(self.page)}" if self.page else ""
        return f"{self.kind} {self.name!r} ({where}{page}): {self.reason}"


def _printable(text: str) -> str:
    """``text`` as it is when printable, else quoted with its escapes: an id or a page name
    holding a newline would start a line of its own in the report (one that could read as
    tcpn's).

    >>> _printable("ID1412"), _printable("p\\ninjected")
    ('ID1412', "'p\\\\ninjected'")
    """
    return text if text.isprintable() else repr(text)


@dataclass
class ImportReport:
    """What an import kept, left out and changed, element by element."""

    source: str
    imported: dict[str, int] = field(default_factory=dict)
    unsupported: list[ReportItem] = field(default_factory=list)
    notes: list[ReportItem] = field(default_factory=list)
    #: page -> what came in from it and what was left out: ``{"places": kept,
    #: "transitions": kept, "left out": items}``
    pages: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """True when nothing was left out."""
        return not self.unsupported

    def taken_along(self) -> dict[int, list[ReportItem]]:
        """``id(root)`` -> the left-out elements each root cause took along with it."""
        found: dict[int, list[ReportItem]] = {}
        for item in self.unsupported:
            if item.cause is not None:
                found.setdefault(id(item.root), []).append(item)
        return found

    def text(self, limit: int | None = None) -> str:
        """A readable summary: counts, then each left-out element that is a root cause
        (with the count of those it took along: they are not listed again), then each
        change."""
        kept = ", ".join(f"{n} {k}" for k, n in self.imported.items())
        along = self.taken_along()
        roots = [item for item in self.unsupported if item.cause is None]
        dependants = len(self.unsupported) - len(roots)
        lines = [f"{self.source}: imported {kept}; {len(self.unsupported)} element(s) left out"
                 + (f" ({dependants} taken along by the {len(along)} cause(s) shown)"
                    if dependants else "") + f", {len(self.notes)} note(s)"]
        lines.extend(f"  page {_printable(page)}: {tally['places']} place(s) and "
                     f"{tally['transitions']} transition(s) imported, {tally['left out']} "
                     "element(s) left out"
                     for page, tally in self.pages.items())
        for title, items in (("left out", roots), ("note", self.notes)):
            shown = items if limit is None else items[:limit]
            lines.extend(f"  {title}: {item}{_along(along.get(id(item), []))}"
                         for item in shown)
            if len(shown) < len(items):
                lines.append(f"  ... and {len(items) - len(shown)} more {title}")
        return "\n".join(lines)


def _along(items: list[ReportItem]) -> str:
    """`` -- took along N element(s) ...`` for a root cause, naming the first few."""
    if not items:
        return ""
    kinds: dict[str, int] = {}
    for item in items:
        kinds[item.kind] = kinds.get(item.kind, 0) + 1
    arcs = sum(item.arcs for item in items)
    counts = ", ".join(f"{n} {kind}(s)" for kind, n in kinds.items()) + (
        f" with their {arcs} arc(s)" if arcs else "")
    names = ", ".join(repr(item.name) for item in items[:5]) + (
        ", ..." if len(items) > 5 else "")
    return f" -- took along {len(items)} element(s): {counts} ({names})"


@dataclass
class ImportedNet:
    """The result of :func:`read_cpn`: the net, the report and the file's element ids."""

    net: PetriNet
    report: ImportReport
    ids: dict[str, str]
    real_time: bool
    #: place or transition name -> the file's label for it, where it differs in kind
    #: (PNML: names are ids, labels are the ``<name>`` texts)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether every element of the file is in :attr:`net`."""
        return self.report.complete


def read_cpn(source: str | Path | bytes, *, strict: bool = False,
             max_bytes: int | None = None) -> ImportedNet:
    """Read a CPN Tools file: a path, or the XML itself (``str`` starting with ``<`` or bytes).

    A ``use "file.sml"`` declaration reads that file when it lies in the directory of the
    model (read from a path), as declarations written in the model (:mod:`.ml_use`).

    Raises :class:`CpnFormatError` for a malformed file and, with ``strict=True``,
    :class:`IncompleteImportError` when some element could not be imported. The file's
    size (``max_bytes``, default ``limits().net_file_bytes``), nesting and initial markings
    are bounded by :mod:`tcpn.limits`.
    """
    data, name = read_net_file(source, max_bytes)
    text_starts: dict[ET.Element, tuple[int, int]] = {}
    root, lines = parse_xml(data, name, text_starts)
    model = None if isinstance(source, bytes) or name == "<string>" else Path(source)
    imported = _Importer(root, lines, name, text_starts, model).run()
    if strict and not imported.complete:
        raise IncompleteImportError(imported.report)
    return imported


def read_net_file(source: str | Path | bytes, max_bytes: int | None) -> tuple[bytes, str]:
    """The file's bytes and its name for messages, read within ``max_bytes`` (default
    ``limits().net_file_bytes``): a FIFO or a device is refused without reading it."""
    bound = limits().net_file_bytes if max_bytes is None else max_bytes
    if isinstance(source, bytes):
        data, name = source, "<bytes>"
    elif isinstance(source, str) and source.lstrip().startswith("<"):
        data, name = source.encode("iso-8859-1", errors="xmlcharrefreplace"), "<string>"
    else:
        try:
            data, name = read_input(source, "net_file_bytes", "net file", bound), str(source)
        except UnreadableInput as exc:
            raise CpnFormatError(exc.path, exc.problem) from None
    if len(data) > bound:
        raise CpnFormatError(name, f"input is {len(data):,} bytes, over the {bound}-byte limit "
                                   "net_file_bytes (raise it with --limit net_file_bytes=N)")
    return data, name


def parse_xml(data: bytes, source: str,
              text_starts: dict[ET.Element, tuple[int, int]] | None = None
              ) -> tuple[ET.Element, dict[ET.Element, int]]:
    """Parse XML safely, remembering the line of every element; nesting deeper than
    ``limits().xml_depth`` is refused (the readers recurse over terms). ``text_starts``,
    when given, receives the (line, 0-based column) where each element's text begins, so
    that a place in a declaration's text is a place in the file."""
    lines: dict[ET.Element, int] = {}
    open_elements: list[ET.Element] = []

    class _Builder(ET.TreeBuilder):
        def start(self, tag: str, attrs: dict[str, str]) -> ET.Element:
            element = super().start(tag, attrs)
            line = parser.parser.CurrentLineNumber
            lines[element] = line
            open_elements.append(element)
            problem = limit_problem("xml_depth", len(open_elements))
            if problem is not None:
                raise CpnFormatError(source, f"elements nested too deep: {problem}", line)
            return element

        def end(self, tag: str) -> ET.Element:
            open_elements.pop()
            return super().end(tag)

        def data(self, data: str) -> None:
            if text_starts is not None and open_elements and \
                    open_elements[-1] not in text_starts and len(open_elements[-1]) == 0:
                text_starts[open_elements[-1]] = (parser.parser.CurrentLineNumber,
                                                  parser.parser.CurrentColumnNumber)
            super().data(data)

    parser = DefusedXMLParser(target=_Builder(), forbid_dtd=False, forbid_entities=True,
                              forbid_external=True)
    if text_starts is not None:
        parser.parser.buffer_text = False  # each chunk reported where it starts
    try:
        parser.feed(data)
        root = parser.close()
    except ET.ParseError as exc:
        line, column = exc.position
        raise CpnFormatError(source, f"malformed XML at column {column}: {exc.msg}"
                             if hasattr(exc, "msg") else f"malformed XML: {exc}",
                             line) from None
    except DefusedXmlException as exc:
        raise CpnFormatError(source, f"refused unsafe XML: {exc}") from None
    except LookupError as exc:  # expat: an encoding Python does not know
        raise CpnFormatError(source, f"the XML declaration names an {exc}", 1) from None
    return root, lines


#: Elements whose ids other elements refer to (arcs, port/socket pairs, instances, fusion
#: sets); a duplicate id elsewhere (a bend point, an inscription) is tolerated and reported.
_REFERENCED_TAGS = frozenset({"page", "place", "trans", "arc", "instance", "instances",
                              "fusion"})


def _equation_patterns(condition: Any, variables: set[str]) -> list[tuple[Any, Any]]:
    """``(p, e)`` for each way ``condition``, an equation ``a = b``, reads as ``p = e`` with
    ``p`` a pattern naming a declared variable (none when it is not an equation)."""
    if not (isinstance(condition, Tree) and condition.data == "binop"
            and str(condition.children[1]) == "="):
        return []
    left, _, right = condition.children
    return [(side, other) for side, other in ((left, right), (right, left))
            if _is_guard_pattern(side) and _pattern_names(side) & variables]


#: expressions a pattern of a guard's ``p = e`` holds as constants
_PATTERN_CONSTANTS = frozenset({"int", "string", "char", "unit"})


def _is_guard_pattern(tree: Any) -> bool:
    """Whether ``tree``, read as an expression, is a pattern: a name, a constant, a tuple
    or a record of patterns."""
    while isinstance(tree, Tree) and tree.data == "typed":
        tree = tree.children[0]
    if not isinstance(tree, Tree):
        return False
    if tree.data == "name" or tree.data in _PATTERN_CONSTANTS:
        return True
    if tree.data == "neg":
        return isinstance(tree.children[0], Tree) and tree.children[0].data == "int"
    if tree.data == "tuple":
        return all(_is_guard_pattern(c) for c in tree.children)
    if tree.data == "record":
        return all(_is_guard_pattern(f.children[-1]) for f in tree.children)
    return False


def _pattern_names(tree: Any) -> set[str]:
    return set(names_in(tree))


def _project(pattern: Any, value: Any, parts: list[tuple[Any, Any]]) -> bool:
    """The leaves of ``pattern`` with the parts of ``value`` they match (``#2 e``,
    ``#owner e``, or the component itself when ``value`` is written as a tuple or record
    of the same shape); False when ``pattern`` is no pattern."""
    while isinstance(pattern, Tree) and pattern.data == "typed":
        pattern = pattern.children[0]
    if not isinstance(pattern, Tree):
        return False
    if pattern.data in ("name", "neg") or pattern.data in _PATTERN_CONSTANTS:
        parts.append((pattern, value))
        return True
    if pattern.data == "tuple":
        if isinstance(value, Tree) and value.data == "tuple" and \
                len(value.children) == len(pattern.children):
            pairs = list(zip(pattern.children, value.children, strict=True))
        else:
            pairs = [(p, _select(str(k), value)) for k, p in enumerate(pattern.children, 1)]
        return all(_project(p, v, parts) for p, v in pairs)
    if pattern.data == "record":
        labels = [str(f.children[0]) for f in pattern.children]
        given = {str(f.children[0]): f.children[-1] for f in value.children} \
            if isinstance(value, Tree) and value.data == "record" else {}
        if sorted(given) != sorted(labels):
            given = {label: _select(label, value) for label in labels}
        return all(_project(f.children[-1], given[str(f.children[0])], parts)
                   for f in pattern.children)
    return False


def _select(label: str, value: Any) -> Tree:
    """``#label value``."""
    return Tree("apply", [Tree("selector", [LarkToken("SELECTOR", f"#{label}")]), value])


def _free_names(tree: Any) -> set[str]:
    """The names ``tree`` reads that it does not bind itself (by ``fn``, ``case`` or
    ``let``)."""
    if not isinstance(tree, Tree):
        return set()
    if tree.data == "name":
        return {str(tree.children[0])}
    if tree.data == "rule":
        return _free_names(tree.children[1]) - {str(t) for t in
                                                 _pattern_tokens(tree.children[0])}
    if tree.data == "clause":
        params = {str(t) for p in tree.children[1:] for t in _pattern_tokens(p)}
        return _free_names(tree.children[-1]) - params - {str(tree.children[0])}
    found = set().union(*(_free_names(c) for c in tree.children)) if tree.children else set()
    if tree.data == "let":
        found -= {n for d in tree.children if isinstance(d, Tree) and d.data.endswith("_dec")
                  for n in _declared_names(d)}
    return found


def _binders_in(tree: Any) -> set[str]:
    """Every name a pattern or declaration inside ``tree`` binds."""
    if not isinstance(tree, Tree):
        return set()
    found = {str(t) for t in _pattern_tokens(tree)} if tree.data.endswith("_pat") else set()
    if tree.data == "clause":
        found.add(str(tree.children[0]))
    return found.union(*(_binders_in(c) for c in tree.children))


def _text(element: ET.Element | None) -> str:
    if element is None:
        return ""
    text = element.find("text")
    return "".join(text.itertext()).strip() if text is not None else ""


def _node_name(element: ET.Element) -> str:
    return " ".join((element.findtext("text") or "").split())


def _python_identifier(raw: str, fallback: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", " ".join(raw.split()).strip())
    name = re.sub(r"_+", "_", name).strip("_")
    if not name:
        return fallback
    return name if name[0].isalpha() else f"n_{name}"


def _node_identifier(raw: str, fallback: str) -> str:
    """A place's or transition's name: identifiers joined by dots stay as they are (tcpn
    writes a top-level place ``S1.R0.in`` so), anything else as :func:`_python_identifier`."""
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*", raw):
        return raw
    return _python_identifier(raw, fallback)


class _Unsupported(Exception):
    """An element tcpn can't express; becomes a report item (never escapes the module).
    ``missing``: the undeclared name it failed on; ``cause``: the left-out element it
    depends on (a place its arcs touch)."""

    def __init__(self, reason: str, missing: str = "", cause: ReportItem | None = None):
        super().__init__(reason)
        self.reason, self.missing, self.cause = reason, missing, cause

    @classmethod
    def of(cls, exc: UnsupportedConstruct) -> _Unsupported:
        """The report's form of a construct the translator refused."""
        return cls(exc.construct, exc.missing)


class _AlwaysEmpty(_Unsupported):
    """An arc whose inscription gives no token whatever the binding (``if c then empty
    else empty``): CPN Tools moves nothing on it. ``variables``: those it names."""

    def __init__(self, reason: str, variables: frozenset[str]):
        super().__init__(reason)
        self.variables = variables


# -- the importer ------------------------------------------------------------------------------
@dataclass
class _PlaceInfo:
    name: str  # tcpn name
    element: ET.Element
    colour: ColourSet | None
    item: ReportItem | None = None  # why it was left out, when it was


class _Importer:
    def __init__(self, root: ET.Element, lines: dict[ET.Element, int], source: str,
                 text_starts: Mapping[ET.Element, tuple[int, int]] | None = None,
                 model: Path | None = None):
        self.root, self.lines, self.source, self.model = root, lines, source, model
        self.text_starts = dict(text_starts or {})
        self.report = ImportReport(source)
        self.page_of: dict[ET.Element, str] = {}  # each element drawn on a page -> its page
        self.ids: dict[str, str] = {}
        self.colours: dict[str, ColourSet] = {}
        self.bad_colours: dict[str, str] = {}
        self.variables: dict[str, str] = {}  # ML variable -> colour set name
        self.constants: dict[str, Any] = {}  # ML name -> value
        self.functions: dict[str, int] = {}  # ML name -> arity
        self.inline: dict[str, tuple[tuple[str, ...], ast.expr]] = {}
        #: functions whose value is written as a multiset: expanded on arcs (one arc a term)
        self.multiset_functions: dict[str, Tree] = {}
        #: functions whose value is a timed multiset (``1`x@t``), read only where an arc
        #: inscription is a call of one: inlined there
        self.arc_only_functions: set[str] = set()
        self.index_constructors: set[str] = set()
        self.colour_members: dict[str, tuple[Any, ...]] = {}
        self.colour_shapes: dict[str, tuple[Any, ...]] = {}  # for CS.legal and CS.mkstr
        self.index_colours: dict[str, str] = {}  # index colour set -> its constructor
        self.time_colours: set[str] = set()  # the 'time' colour sets
        self.subset_members: dict[str, tuple[Any, ...]] = {}
        self.declarations: dict[str, Any] = {}  # python name -> value (the net's scope)
        #: id of a top-level declaration's tree -> (the tree, its text in the file)
        self.dec_sources: dict[int, tuple[Tree, str]] = {}
        self.records: dict[frozenset[str], str] = {}
        self.enum_constants: set[str] = set()
        #: names of the value of unit colour sets (``colset U = unit with u``)
        self.unit_values: set[str] = set()
        #: the expression of each ``val name = e`` (what it is written as)
        self.val_bodies: dict[str, Any] = {}
        # datatype, union and option constructors -> whether each carries a value
        self.constructors: dict[str, bool] = dict(BASIS_CONSTRUCTORS)
        self.subst_paths: dict[str, str] = {}  # substitution transition id -> instance path
        self.trees: dict[tuple[str, str], Tree] = {}  # (text, start) -> parse, once per text
        self.fixity = Fixity()  # the infix operators declared so far (infix, infixr)
        # (id(tree), variables) -> Python text and its translator, while the declarations
        # can no longer change (the trees are kept in self.trees)
        self.pythons: dict[tuple[int, frozenset[str]], tuple[str, MLToPython]] | None = None
        self.cached_trees: list[Any] = []  # every tree keyed in self.pythons, kept alive
        self.file_text: str | None = None  # the file's text without layouts (_only_read)
        #: declarations waiting for a name declared further on, and the element of each
        self.deferred: list[tuple[Tree, ET.Element]] = []
        self.uses: list[ReportItem] = []  # the ``use "file"`` declarations, left out
        #: the declarations read from used files (an element made for each, holding its
        #: text) -> the file's name; and the files being read, outermost first
        self.used_in: dict[ET.Element, str] = {}
        self.using: list[Path] = []
        self.used_bytes = 0  # of the used files read so far (limit ml_file_bytes)
        self.local_blocks = 0  # ``local`` blocks read so far (their names are renamed)
        #: the top-level ``local`` blocks: (element, text, their declarations as read)
        self.local_texts: list[tuple[ET.Element, str, list[Tree]]] = []
        self.function_trees: dict[str, Tree] = {}  # every fun read: its declaration

    def parse_ml(self, text: str, where: str, start: str = "expr", *,
                 fixed: bool = False) -> Tree:
        """:func:`~tcpn.petrinets.exchange.cpnml.parse_ml`, once per distinct text (a
        file repeats its inscriptions across pages; the trees are only read), after the
        infix operators the declarations so far made (:meth:`fixed`; already done when
        ``fixed``)."""
        if not fixed:
            text = self.fixed(text, where)
        tree = self.trees.get((text, start))
        if tree is None:
            try:
                tree = self.trees[(text, start)] = parse_ml(text, where, start)
            except MLSyntaxError:
                raise  # CPN Tools loads the file and marks the element: so do the callers
            except InputError as exc:  # nested too deep, an integer too long: refused
                raise self.fail(None, str(exc)) from None
        if self.unit_values:  # colset U = unit with u: the name u is the value ()
            tree = _substitute(tree, {n: Tree("unit", []) for n in self.unit_values})
        return tree

    def fail(self, element: ET.Element | None, message: str) -> CpnFormatError:
        line = self.lines.get(element) if element is not None else None
        element_id = element.get("id") if element is not None else None
        return CpnFormatError(self.source, message, line, element_id)

    @contextlib.contextmanager
    def located(self, element: ET.Element) -> Iterator[None]:
        """Refusals of the restricted evaluator inside the block name ``element``'s file,
        line and id (they end the import: a file that reaches for Python is not a model)."""
        try:
            yield
        except (UntrustedCodeError, EvaluationBudgetError) as exc:
            if str(exc).startswith(self.source):
                raise
            located = self.fail(element, str(exc))
            raise type(exc)(str(located)) from None

    def fixed(self, text: str, where: str) -> str:
        """``text`` with its fixity declarations (``infixr 9 >>=``) read and taken out and
        the applications of declared infix operators written as calls
        (:class:`~tcpn.petrinets.exchange.ml_infix.Fixity`); what it cannot read so is a
        syntax error of ``where``."""
        try:
            return self.fixity.rewrite(text)
        except FixityError as exc:
            raise MLSyntaxError(where, text, 1, 1, f"infix operators: {exc}") from None

    def skip(self, kind: str, element: ET.Element, name: str, reason: str, *,
             missing: str = "", cause: ReportItem | None = None, arcs: int = 0,
             at: tuple[int, int] | None = None) -> ReportItem:
        """Leave ``element`` out; ``at`` is where in the file the construct begins (line,
        column; the element's line when not given)."""
        item = ReportItem(kind, element.get("id") or "", name,
                          at[0] if at else self.lines.get(element), reason,
                          self.page_of.get(element, ""), missing, cause, arcs,
                          at[1] if at else None, self.used_in.get(element, ""))
        self.report.unsupported.append(item)
        return item

    def text_position(self, element: ET.Element, offset: int) -> tuple[int, int] | None:
        """The file's (line, 1-based column) of the character ``offset`` of ``element``'s
        text with its leading white space removed; None past the text before its first
        child (a ``<layout>`` inside a declaration) or when the start is unknown. An
        entity (``&lt;``) counts as the one character it stands for."""
        start = self.text_starts.get(element)
        raw = element.text or ""
        offset += len(raw) - len(raw.lstrip())
        if start is None or offset > len(raw):
            return None
        before = raw[:offset]
        newlines = before.count("\n")
        if not newlines:
            return start[0], start[1] + len(before) + 1
        return start[0] + newlines, len(before) - before.rfind("\n")

    def note(self, kind: str, element: ET.Element, name: str, reason: str) -> None:
        self.report.notes.append(ReportItem(kind, element.get("id") or "", name,
                                            self.lines.get(element), reason,
                                            self.page_of.get(element, "")))

    # -- structure --------------------------------------------------------------------------
    def run(self) -> ImportedNet:
        root = self.root
        if root.tag != "workspaceElements":
            raise self.fail(root, f"not a CPN Tools file: the root element is <{root.tag}>, "
                            "not <workspaceElements>")
        generator = root.find("generator")
        if generator is None:
            raise self.fail(root, "no <generator> element (CPN Tools refuses such a file)")
        file_format = generator.get("format")
        if file_format is None and generator.get("tool") == "CPN Tools":
            file_format = "2"  # what CPN Tools' loader assumes for its own files
        if file_format is None or not file_format.isdigit() or not 1 <= int(file_format) <= 6:
            raise self.fail(generator, f"file format {file_format!r} is not one CPN Tools "
                            "reads (1 to 6; CPN Tools 4 writes 6)")
        if int(file_format) < 6:
            # formats 2-5 (CPN Tools 1.x-2.x) hold the same elements; the loader only
            # rescales their coordinates, which carry no meaning for the net
            self.note("file", generator, f"format {file_format}",
                      f"written by {generator.get('tool', '?')} {generator.get('version', '')}"
                      .rstrip() + ", read as format 6 (older formats differ in coordinates)")
        cpnet = root.find("cpnet")
        if cpnet is None:
            raise self.fail(root, "no <cpnet> element")
        self.cpnet: ET.Element = cpnet
        self._label_pages()
        self._check_ids()
        self.real_time = self._real_time()
        globbox = self.cpnet.find("globbox")
        if globbox is not None:
            self._declarations(globbox)
            self._deferred_declarations()
            self._local_texts()
        for value in self.declarations.values():
            if isinstance(value, Cell):  # its declared value: after all the declarations
                value.initial, value.writes = value.value, 0
        for monitor in self.cpnet.iter("monitor"):
            self.skip("monitor", monitor, monitor.get("name", ""),
                      "monitors are not imported (use tcpn's monitors on the net)")
        pages = {p.get("id", ""): p for p in self.cpnet.findall("page")}
        if not pages:
            raise self.fail(self.cpnet, "the net has no page")
        primes = self._prime_pages(pages)
        net_name = _python_identifier(self._page_name(pages[primes[0]]), "net")
        self.net = PetriNet(net_name)
        self.net.declarations.update(self.declarations)
        self.declarations = self.net.declarations
        self.places: dict[str, _PlaceInfo] = {}  # element id + instance path -> place
        self.pending_arcs: list[tuple[ET.Element, str, str, str]] = []
        self.pending_transitions: list[tuple[ET.Element, str, str]] = []
        self.pending_names: set[str] = set()  # the names in pending_transitions
        for page_id in primes:
            path = "" if len(primes) == 1 else self._unique_child(
                "", _python_identifier(self._page_name(pages[page_id]), "page"))
            self._instance(pages, page_id, path, {}, [page_id])
        self._transitions()
        check_net(self.net, self.source)  # a second look at all of it, as a whole net
        self._validate()
        self._trace_causes()
        self._page_tallies()
        self.report.imported = {
            "places": len(self.net.places), "transitions": len(self.net.transitions),
            "arcs": len(self.net.arcs), "declarations": len(self.net.declarations),
            "modules": len(self.net.modules),
        }
        return ImportedNet(self.net, self.report, self.ids, self.real_time)

    def _label_pages(self) -> None:
        """Name each page for the report (its name, with its id when two share it)."""
        pages = self.cpnet.findall("page")
        names = [self._page_name(p) or p.get("id", "") for p in pages]
        for page, name in zip(pages, names, strict=True):
            label = name if names.count(name) == 1 else f"{name} ({page.get('id')})"
            for element in page.iter():
                self.page_of[element] = label

    def _page_tallies(self) -> None:
        """What came in from each page and what was left out of it."""
        tallies = {label: {"places": 0, "transitions": 0, "left out": 0}
                   for label in dict.fromkeys(self.page_of.values())}
        for key, element_id in self.ids.items():
            kind = key.split(":", 1)[0]
            element = self.by_id.get(element_id)
            if kind in ("place", "trans") and "@" not in key and element is not None \
                    and element in self.page_of:
                tallies[self.page_of[element]]["places" if kind == "place"
                                               else "transitions"] += 1
        for item in self.report.unsupported:
            if item.page in tallies:
                tallies[item.page]["left out"] += 1
        self.report.pages = tallies

    @staticmethod
    def _page_name(page: ET.Element) -> str:
        attr = page.find("pageattr")
        return attr.get("name", "") if attr is not None else ""

    def _check_ids(self) -> None:
        """Map ids to elements; a duplicate is an error only between elements that carry
        meaning (a bend point or an inscription's id is never referred to)."""
        seen: dict[str, ET.Element] = {}
        for element in self.root.iter():
            element_id = element.get("id")
            if element_id is None:
                continue
            first = seen.get(element_id)
            if first is None:
                seen[element_id] = element
                continue
            if element.tag in _REFERENCED_TAGS and first.tag in _REFERENCED_TAGS:
                raise self.fail(element, f"duplicate id {element_id!r} on <{element.tag}> "
                                f"(first used on <{first.tag}> at line "
                                f"{self.lines.get(first)})")
            ignored, kept = (first, element) if element.tag in _REFERENCED_TAGS else (
                element, first)
            seen[element_id] = kept
            self.note("id", ignored, element_id, f"the id of this <{ignored.tag}> is also "
                      f"the id of <{kept.tag}> at line {self.lines.get(kept)}: ignored on "
                      f"the <{ignored.tag}> (the ids of graphics and inscriptions are never "
                      "referred to)")
        self.by_id = seen

    def _real_time(self) -> bool:
        for option in self.cpnet.iter("option"):
            if option.get("name") == "realtimestamp":
                value = option.find("value/boolean")
                return value is not None and (value.text or "").strip() == "true"
        return False

    def _prime_pages(self, pages: dict[str, ET.Element]) -> list[str]:
        instances = self.cpnet.find("instances")
        primes: list[str] = []
        if instances is not None:
            # CPN Tools writes <instance page=..> per top page; some editors put the top
            # page on <instances page=..> itself, its subpages' <instance trans=..> inside
            records = [instances] if instances.get("page") else []
            records += [i for i in instances.findall("instance") if i.get("page")
                        or not i.get("trans")]
            for record in records:
                page_id = record.get("page", "")
                if page_id in pages:
                    primes.append(page_id)
                    continue
                if page_id and page_id in self.by_id:
                    raise self.fail(record, f"<{record.tag}> names {page_id!r} as its page, "
                                    f"but that id is a <{self.by_id[page_id].tag}>")
                self.note("instance", record, page_id, "an instance record of a page the "
                          "file does not have (no page id " + repr(page_id) + "): ignored")
            if instances.get("page"):
                self.note("instance", instances, instances.get("page", ""), "the top page "
                          "named on <instances> (CPN Tools names it on an <instance> inside)")
        if not primes:  # no instance records (older nets): every page no subst uses
            used = {s.get("subpage") for s in self.cpnet.iter("subst")}
            primes = [pid for pid in pages if pid not in used]
        # a top page with nothing drawn on it (a note page, say) holds nothing to import
        drawn = [pid for pid in primes if pages[pid].find("place") is not None
                 or pages[pid].find("trans") is not None]
        return drawn or primes[:1] or list(pages)[:1]

    # -- declarations -----------------------------------------------------------------------
    def _declarations(self, block: ET.Element) -> None:
        for element in block:
            tag = element.tag
            if tag == "block":
                self._declarations(element)
                continue
            with self.located(element):
                if tag == "color":
                    self._colour(element)
                elif tag == "var":
                    self._var(element)
                elif tag == "ml":
                    self._ml(element)
                elif tag == "globref":
                    self._globref(element)
                elif tag == "use":  # <use><ml>"file.sml"</ml></use>: use "file.sml"
                    self._use(element, f"use {(element.findtext('ml') or '').strip()}")
                elif tag in ("channel", "invariant"):
                    self.skip("declaration", element, tag,
                              f"<{tag}> declarations are not imported")

    def _colour(self, element: ET.Element) -> None:
        name = (element.findtext("id") or "").strip()
        if not name:
            raise self.fail(element, "a colour set declaration without a name")
        timed = element.find("timed") is not None
        try:
            colour = self._colour_body(element, name)
        except _Unsupported as exc:
            self.bad_colours[name] = exc.reason
            return
        if isinstance(colour, RecordSet):
            # CPN ML records are structural: a second record colour set with the same
            # fields (say the timed one of packets in flight) holds the same values
            same = next((c for c in self.colours.values() if isinstance(c, RecordSet)
                         and c.fields == colour.fields), None)
            colour = same.untimed(name) if same is not None else colour
        colour = colour.named(name) if colour.name != name else colour
        if timed:
            colour = colour.timed(name)
        self.colours[name] = colour
        self.colour_shapes[name] = ("int", None, None) if (
            name in self.time_colours and not self._real_time()) else _shape(
            colour, self.index_colours.get(name))
        members = self.subset_members.get(name, colour.members())
        if members is not None:
            self.colour_members[name] = tuple(members)
        if isinstance(colour, RecordSet):
            self.records.setdefault(frozenset(f for f, _ in colour.fields), py_name(name))
            self.declarations[py_name(name)] = colour.record_type
        if isinstance(colour, EnumSet):
            self.enum_constants.update(colour.values)
        if isinstance(colour, UnionSet):
            self.constructors.update((c, part is not None) for c, part in colour.fields)

    def _component(self, element: ET.Element, name: str | None) -> ColourSet:
        if name is None or not name.strip():
            raise self.fail(element, "a colour set refers to an unnamed colour set")
        name = name.strip()
        if name in self.colours:
            colour = self.colours[name]
            return colour
        if name in self.bad_colours:
            raise _Unsupported(f"uses colour set {name}, which tcpn can't express "
                               f"({self.bad_colours[name]})")
        raise self.fail(element, f"unknown colour set {name!r}")

    def _colour_body(self, element: ET.Element, name: str) -> ColourSet:
        body = next((c for c in element if c.tag not in ("id", "timed", "layout", "declare")),
                    None)
        if body is None:
            raise self.fail(element, f"colour set {name} has no type")
        kind, ranges = body.tag, body.find("with")
        # (a subset's <with> lists its members, not bounds: _subset reads it)
        bounds = [self._ml_int(m) for m in ranges.findall("ml")] \
            if ranges is not None and kind != "subset" else []
        if kind == "unit" and (ranges is None or (
                not ranges.findall("ml") and len(ranges.findall("id")) == 1)):
            # colset U = unit with u: u is the name of the one value, ()
            value_name = (ranges.findtext("id") or "").strip() if ranges is not None else ""
            if value_name:
                self.unit_values.add(value_name)  # read as () (parse_ml)
            return UnitSet(name=name)
        if kind == "bool" and ranges is None:
            return BoolSet(name=name)
        if kind in ("int", "intinf") and len(bounds) in (0, 2):
            if not bounds:
                return IntSet(name=name)
            low, high = bounds  # the ends of CPN Tools' int stand for "no bound"
            return IntSet(None if low == ML_MIN_INT else low,
                          None if high == ML_MAX_INT else high, name=name)
        if kind == "real" and ranges is None:
            return RealSet(name=name)
        if kind == "time" and ranges is None:
            # CPN Tools 3.5.5's time colour set: readings of the model's clock (integers or
            # reals as the net's time is; time() gives tcpn's clock, a float, in both)
            self.time_colours.add(name)
            return ClockSet(name=name)
        if kind == "string" and ranges is None:
            return StringSet(name=name)
        if kind == "enum":
            return EnumSet(tuple((i.text or "").strip() for i in body.findall("id")), name=name)
        if kind == "product":
            parts = [self._component(body, i.text) for i in body.findall("id")]
            return ProductSet(*(p.named(p.name) for p in parts), name=name)
        if kind == "record":
            fields = {}
            for rf in body.findall("recordfield"):
                ids = rf.findall("id")
                if len(ids) != 2:
                    raise self.fail(rf, "a record field needs a name and a colour set")
                label = (ids[0].text or "").strip()
                field_name = ml_field(label)  # a Python keyword ('from') gets a '_'
                if field_name in fields:
                    raise self.fail(rf, f"colour set {name}: record field {label!r} "
                                        "is given twice" + ("" if field_name == label else
                                                             f" (as {field_name!r})"))
                fields[field_name] = self._component(rf, ids[1].text)
            try:
                return RecordSet(name, False, **fields)
            except InputError as exc:
                raise self.fail(body, str(exc)) from None
        if kind == "list":
            element_colour = self._component(body, body.findtext("id"))
            if bounds and bounds[0] != 0:
                raise _Unsupported("a list colour set with a lower length bound")
            return ListSet(element_colour, bounds[1] if bounds else None, name=name)
        if kind == "alias":
            return self._component(body, body.findtext("id")).named(name)
        if kind == "index":
            # index ph with 1..n: ph(i) is kept as the integer i (a colour set's values are
            # never compared with another's, so nothing tells the two apart)
            ends, constructor = body.findall("ml"), (body.findtext("id") or "").strip()
            if len(ends) != 2 or not constructor:
                # CPN Tools reads the structure, not the <layout> text: it marks such a
                # declaration as an error and runs the rest of the net
                raise _Unsupported(f"<index> without its two bounds (<ml>) and its "
                                   f"constructor (<id>): {len(ends)} bound(s)"
                                   + ("" if constructor else ", no constructor"))
            low, high = (self._ml_int(m) for m in ends)
            self.index_constructors.add(constructor)
            self.index_colours[name] = constructor
            self.note("colour set", element, name, f"index {constructor} with {low}..{high} "
                      f"imported as the integers {low}..{high} ({constructor}(i) is i)")
            return IntSet(low, high, name=name)
        if kind == "subset":
            return self._subset(element, body, name)
        if kind == "union" and ranges is None:
            # union A:C + B: constructors, A(v) the pair ("A", v), B the string "B"
            alternatives: list[tuple[str, ColourSet | None]] = []
            for union_field in body.findall("unionfield"):
                constructor = (union_field.findtext("id") or "").strip()
                if not is_ml_identifier(constructor):
                    raise self.fail(union_field, f"colour set {name}: union constructor "
                                                 f"{constructor!r} is not a CPN ML name")
                part = union_field.findtext("type/id")
                alternatives.append((constructor, self._component(union_field, part)
                                     if part is not None and part.strip() else None))
            try:
                return UnionSet(tuple(alternatives), name=name)
            except InputError as exc:
                raise self.fail(body, str(exc)) from None
        raise _Unsupported(f"colour set kind <{kind}>{' with a restriction' if ranges else ''} "
                           "has no tcpn equivalent")

    def _subset(self, element: ET.Element, body: ET.Element, name: str) -> ColourSet:
        """``subset A by f`` / ``with [..]``: the values of A (CPN Tools checks membership
        when a token is made; tcpn does not), with the members listed for ``S.all()``."""
        parent = self._component(body, body.findtext("id"))
        members = parent.members()
        by, listed = body.findtext("by/ml"), body.findtext("with/ml")
        if listed is not None:
            values = self._constant_of(listed.strip(), f"colour set {name}")
            members = list(values) if isinstance(values, tuple) else None
        elif by is not None and members is not None:
            test = self.declarations.get(py_name(by.strip()))
            if not callable(test):
                raise _Unsupported(f"subset predicate {by.strip()!r} is not a function tcpn "
                                   "imported")
            members = [m for m in members if (test(*m) if isinstance(m, tuple) and
                                              len(getattr(test, "params", ())) == len(m)
                                              else test(m))]
        if members is not None:
            self.subset_members[name] = tuple(members)
        self.note("colour set", element, name, f"subset of {parent.describe()} imported as "
                  f"{parent.describe()} (tcpn does not check that tokens are in the subset)")
        return parent.named(name)

    def _ml_int(self, element: ET.Element) -> int:
        text = (element.text or "").strip()
        try:
            value = self._constant_of(text, "colour set bound")
        except UntrustedCodeError:
            raise
        except (_Unsupported, InputError):
            value = None
        if not isinstance(value, int):
            raise _Unsupported(f"bound {text!r} is not an integer tcpn can evaluate")
        return value

    def _var(self, element: ET.Element) -> None:
        colour = (element.findtext("type/id") or "").strip()
        names = [(ident.text or "").strip() for ident in element.findall("id")]
        if colour not in self.colours and colour not in self.bad_colours:
            # CPN Tools marks the declaration as an error and runs the rest of the net:
            # left out, with whatever uses these variables
            self.skip("declaration", element, f"var {', '.join(names)}",
                      f"variable(s) of colour set {colour!r}, which the file declares "
                      "nowhere (CPN Tools marks the declaration as an error)",
                      missing=colour)
            return
        for name in names:
            self.variables[name] = colour

    def _translator(self, variables: frozenset[str] = frozenset()) -> MLToPython:
        return MLToPython(
            cells=frozenset(n for n, v in self.constants.items() if isinstance(v, Cell)),
            variables=variables, constants=frozenset(self.constants),
            functions=dict(self.functions), enum_constants=frozenset(self.enum_constants),
            records=dict(self.records), inline=dict(self.inline),
            index_constructors=frozenset(self.index_constructors),
            colour_members=dict(self.colour_members), constructors=dict(self.constructors),
            colour_shapes=dict(self.colour_shapes),
        )

    def _constant_of(self, text: str, where: str) -> Any:
        tree = self.parse_ml(text, where)
        translator = self._translator()
        try:
            python = translator.expression(tree, where)
        except UnsupportedConstruct as exc:
            raise _Unsupported.of(exc) from None
        return self._evaluate(python, translator, where)

    def _evaluate(self, python: ast.expr, translator: MLToPython, where: str) -> Any:
        if translator.uses_random or translator.uses_time:
            raise _Unsupported("its value depends on random draws or the clock")
        self._declare_basis(translator)
        expression = ast.fix_missing_locations(ast.Expression(python))
        scope = {py_name(k): v for k, v in self.constants.items()}
        scope.update(self.declarations)
        try:
            with evaluation_budget(f"{self.source}: {where}"):
                return eval(compile(expression, where, "eval"), restricted_namespace(scope))
        except EvaluationBudgetError:
            raise
        except InputError as exc:  # a limit of tcpn's (call_depth, list_length) stopped it
            raise _Unsupported(f"evaluating it stopped: {exc}") from None
        except Exception as exc:  # the ML evaluated to something Python can't compute
            raise _Unsupported(f"evaluating it failed: {type(exc).__name__}: {exc}") from None

    def _declare_basis(self, translator: MLToPython) -> None:
        for name in translator.used_basis:
            if name in _NOTED_BASIS and name not in self.declarations:
                self.note("file", self.root, _NOTED_BASIS[name][0], _NOTED_BASIS[name][1])
            self.declarations.setdefault(name, ML_BASIS_DECLARATIONS[name])
        for labels, name in translator.anonymous_records.items():
            if labels not in self.records:  # a record type no colour set declares
                self.records[labels] = name
                self.declarations[name] = record_class(name, tuple(sorted(labels)))

    def _globref(self, element: ET.Element) -> None:
        """``<globref><id>x</id><ml>e</ml></globref>``: read as ``globref x = e``."""
        name = (element.findtext("id") or "").strip()
        text = (element.findtext("ml") or "").strip()
        try:
            (dec,) = self.parse_ml(f"globref {name} = {text}", f"globref {name}",
                                   start="decs").children
        except (MLSyntaxError, ValueError) as exc:
            self.skip("declaration", element, name, f"globref value {text!r}: {exc}")
            return
        self._dec(dec, element)

    def _reference(self, element: ET.Element, name: str, value: Any, kind: str) -> None:
        """Declare ``name``, a reference (``globref`` or ``val name = ref v``): a cell
        shared by every firing (:mod:`tcpn.petrinets.cells`), or the value it holds when
        nothing in the file but ``!name`` mentions it."""
        self.constants[name] = value
        self.declarations[py_name(name)] = value
        if isinstance(value, Cell):
            self._declare_cells()
            self.note("declaration", element, name, f"{kind}: a reference cell shared by "
                      "every firing (its contents are not part of a marking)")
        else:
            self.note("declaration", element, name, f"{kind}: a reference the file only "
                      "reads (!), imported as the value it holds")

    def _declare_cells(self) -> None:
        for function, value in CELL_FUNCTIONS.items():
            self.declarations.setdefault(function, value)

    def _only_read(self, name: str) -> bool:
        """Whether the file mentions ``name`` only as ``!name`` besides declaring it
        (comments, strings and other elements' names count as mentions: a cell then).
        A name of a ``local`` block (``c'local1``) is looked for as the file spells it."""
        name = re.sub(r"'local\d+$", "", name)
        if self.file_text is None:
            parts = []
            for node in self.root.iter():
                if node.tag != "layout" and node.text:  # a layout repeats its declaration
                    parts.append(node.text)
                if node.tail:
                    parts.append(node.tail)
            parts.extend(node.text or "" for node in self.used_in)
            self.file_text = "\n".join(parts)
        mentions = len(re.findall(rf"(?<![\w'.#]){re.escape(name)}(?![\w'])", self.file_text))
        reads = len(re.findall(rf"!\s*{re.escape(name)}(?![\w'])", self.file_text))
        return mentions - reads <= 1

    def _ml(self, element: ET.Element) -> None:
        # the declaration's text, around a <layout> child wherever the editor put it
        text = ((element.text or "") + "".join(c.tail or "" for c in element)).strip()
        if not text:
            return
        first_word = text.split(None, 1)[0]
        if first_word == "use":
            self._use(element, text)
            return
        if first_word not in ("val", "fun", "local", "globref", "exception", "datatype",
                              "type", "infix", "infixr", "nonfix"):
            self.skip("declaration", element, first_word,
                      f"SML '{first_word}' declarations are not imported",
                      at=self.text_position(element, 0))
            return
        try:
            text = self.fixed(text, f"declaration {element.get('id')}").strip()
            if not text:  # fixity declarations only
                return
            decs = self.parse_ml(text, f"declaration {element.get('id')}", start="decs",
                                 fixed=True).children
        except MLSyntaxError as exc:
            lines = text.split("\n")
            offset = sum(len(line) + 1 for line in lines[:exc.line - 1]) + exc.column - 1
            self.skip("declaration", element, text.split("=", 1)[0].strip(),
                      f"outside the CPN ML subset tcpn reads ({exc})",
                      at=self.text_position(element, offset))
            return
        for dec in decs:
            start, end = getattr(dec.meta, "start_pos", None), getattr(dec.meta, "end_pos", None)
            if start is not None and end is not None:
                self.dec_sources[id(dec)] = (dec, text[start:end].rstrip(" \t\n;") + ";")
        for top in decs:
            source = self._dec_source(top) if top.data == "local_dec" else None
            flat = list(self._flat([top], element))
            if source is not None:
                self.local_texts.append((element, source, flat))
            for dec in flat:
                self._dec(dec, element)

    def _local_texts(self) -> None:
        """Each top-level ``local`` block whose declarations were all read is kept as its
        text (:class:`MLLocal`): the export writes it as read, a ``datatype`` in it too."""
        skipped = {item.element_id for item in self.report.unsupported
                   if item.kind == "declaration"}
        for index, (element, text, decs) in enumerate(self.local_texts, 1):
            if (element.get("id") or "") in skipped:
                continue
            names = [n for d in decs for n in _declared_names(d)
                     if py_name(n) in self.declarations]
            shown = {py_name(n): n for n in names if "'local" not in n}
            constructors = {str(c.children[0]): len(c.children) > 1
                            for d in decs if d.data == "datatype_dec"
                            for b in d.children if isinstance(b, Tree) and b.data == "datbind"
                            for c in b.children if isinstance(c, Tree)
                            and c.data == "conbind" and "'local" not in str(c.children[0])}
            key = f"local {' '.join(sorted(shown.values())) or index}"
            self.declarations[key] = MLLocal(text, tuple(py_name(n) for n in names), shown,
                                             constructors)

    def _flat(self, decs: Iterable[Tree], element: ET.Element) -> Iterator[Tree]:
        """The declarations in order, those of ``local d1 in d2 end`` as top-level ones
        whose d1 names are renamed (``x`` is ``x'local1``) in d1 and d2: d2 sees them,
        nothing else does (tcpn's declarations share one scope)."""
        for dec in decs:
            if dec.data != "local_dec":
                yield dec
                continue
            hidden, shown = dec.children
            names = {n for d in hidden.children for n in _declared_names(d)}
            if names:
                self.local_blocks += 1
                renamed = {n: f"{n}'local{self.local_blocks}" for n in names}
                hidden, shown = (_renamed(hidden, renamed), _renamed(shown, renamed))
                self.note("declaration", element, ", ".join(sorted(names)), "declared "
                          f"'local' to {', '.join(_dec_name(d) for d in shown.children)}"
                          f"{' (nothing)' if not shown.children else ''}: visible to them "
                          "only")
            yield from self._flat([*hidden.children, *shown.children], element)

    def _dec(self, dec: Tree, element: ET.Element, last_try: bool = False) -> bool:
        """Read one ``val`` or ``fun``; one that uses a name not declared yet waits for
        the rest of the declarations (CPN Tools checks declarations in the order their
        dependencies need, not in the order of the index). Whether it was read."""
        try:
            if dec.data == "val_dec":
                self._val(dec, element)
            elif dec.data == "exception_dec":  # raise E stops the evaluation, naming E
                self.note("declaration", element, _dec_name(dec), "exception: 'raise' of it "
                          "stops the evaluation with an error naming it (no 'handle')")
            elif dec.data == "datatype_dec":
                self._datatype(dec, element)
            elif dec.data == "type_dec":  # an abbreviation: types are not checked
                names = [str(c) for b in dec.children for c in b.children
                         if isinstance(c, LarkToken) and c.type == "NAME"]
                self.note("declaration", element, ", ".join(names), "type abbreviation: "
                          "read (tcpn does not check the types of CPN ML values)")
            elif dec.data == "globref_dec":  # globref x = e is val x = ref e
                name, _, body = dec.children
                self._constant_valued(str(name), body, element, "globref")
            else:
                self._fun(dec, element)
        except _Unsupported as exc:
            if exc.missing and not last_try:
                self.deferred.append((dec, element))
            else:
                start = getattr(dec.meta, "start_pos", None)
                self.skip("declaration", element, _dec_name(dec), exc.reason,
                          missing=exc.missing, at=None if start is None
                          else self.text_position(element, start))
            return False
        return True

    def _deferred_declarations(self) -> None:
        """Read the declarations that waited for a name, while one more of them reads."""
        while self.deferred:
            waiting, self.deferred = self.deferred, []
            read = [self._dec(dec, element) for dec, element in waiting]
            if not any(read):
                self.deferred = []
                for dec, element in waiting:
                    self._dec(dec, element, last_try=True)
                return

    def _datatype(self, dec: Tree, element: ET.Element) -> None:
        """``datatype t = A | B of int * string``: its constructors make values (``A`` is
        ``"A"``, ``B (1, "x")`` is ``("B", (1, "x"))``) and match them in patterns; the
        type itself is no colour set (a place of type t is one of a ``union``)."""
        bindings = [c for datbind in dec.children if isinstance(datbind, Tree)
                    and datbind.data == "datbind" for c in datbind.children
                    if isinstance(c, Tree) and c.data == "conbind"]
        for binding in bindings:
            self.constructors[str(binding.children[0])] = len(binding.children) > 1
        source = self._dec_source(dec)
        names = [str(datbind.children[0]) for datbind in dec.children
                 if isinstance(datbind, Tree) and datbind.data == "datbind"]
        if source is not None and names:
            self.declarations[f"datatype {' '.join(names)}"] = MLDatatype(
                " ".join(names), source,
                {str(b.children[0]): len(b.children) > 1 for b in bindings})

    def _dec_source(self, dec: Tree) -> str | None:
        """A top-level declaration's text in the file (None inside ``local``)."""
        known = self.dec_sources.get(id(dec))
        return known[1] if known is not None and known[0] is dec else None

    def _use(self, element: ET.Element, text: str) -> None:
        """``use "file.sml"`` (or ``use (dir ^ "file.sml")`` of declared strings): the
        file's declarations are read as if written here when it lies next to the model
        (:func:`.ml_use.use_file_text`); otherwise the ``use`` is left out, and what it
        would have given is traced once the net is read (:meth:`_trace_causes`)."""
        written = text[3:].strip().rstrip(";").strip()
        try:
            file_name = self._constant_of(written, f"use {written}")
        except (_Unsupported, MLSyntaxError):
            file_name = None
        at = self.text_position(element, 0)
        if not isinstance(file_name, str):
            self.uses.append(self.skip(
                "declaration", element, f"use {written}", "loads an SML file whose name "
                f"{written} is not a string tcpn can work out from the declarations",
                at=at))
            return
        name = f"use {ml_string(file_name)}"
        try:
            if len(self.using) >= MAX_USE_DEPTH:
                raise UseFileError(f"files used from files more than {MAX_USE_DEPTH} deep")
            path, content = use_file_text(self.model, file_name,
                                          limits().ml_file_bytes - self.used_bytes)
            if path in self.using:
                raise UseFileError("the file is already being read (it uses itself)")
            self.used_bytes += len(content.encode("utf-8"))
        except UseFileMissing as exc:
            self.uses.append(self.skip("declaration", element, name, "loads an SML file "
                                       f"that is not in the model: {exc.reason}", at=at))
            return
        except UseFileError as exc:
            self.uses.append(self.skip("declaration", element, name, "loads an SML file "
                                       f"tcpn does not read: {exc.reason}", at=at))
            return
        self.note("declaration", element, name, f"read from {path.name} as declarations "
                  "of the model")
        self.using.append(path)
        self.file_text = None  # _only_read looks in the used file's text too
        try:
            for declaration in split_declarations(content):
                piece = ET.Element("ml", {"id": element.get("id") or ""})
                piece.text = declaration.text
                self.used_in[piece] = file_name
                self.lines[piece] = declaration.line
                self.text_starts[piece] = (declaration.line, declaration.column)
                try:
                    self._ml(piece)
                except (UntrustedCodeError, EvaluationBudgetError) as exc:
                    raise type(exc)(f"{file_name} line {declaration.line}: {exc}") from None
        finally:
            self.using.pop()

    def _val(self, dec: Tree, element: ET.Element) -> None:
        pattern, _, body = _strip_typed_val(dec)
        effects_only = isinstance(pattern, Tree) and pattern.data in ("wild_pat", "unit_pat")
        if not (isinstance(pattern, Tree) and pattern.data == "var_pat") and not effects_only:
            self._val_pattern(pattern, body, element)
            return
        name = "_" if effects_only else str(pattern.children[0])
        self.val_bodies[name] = body
        self._constant_valued(name, body, element, "val ... = ref")

    def _val_pattern(self, pattern: Tree, body: Tree, element: ET.Element) -> None:
        """``val (a, b) = e`` (any pattern): ``e`` evaluated once, each name bound to its
        part; a value the pattern does not match is SML's ``Bind``, left out."""
        names = [str(t) for t in _pattern_tokens(pattern)]
        where = f"declaration {', '.join(names) or '_'}"
        translator = self._translator()
        conditions: list[ast.expr] = []
        bindings: list[tuple[str, ast.expr]] = []
        subject = ast.Name("_v", ast.Load())
        try:
            value_python = translator.expression(body, where)
            translator.pattern(pattern, subject, where, conditions, bindings)
        except UnsupportedConstruct as exc:
            raise _Unsupported.of(exc) from None
        test = conditions[0] if len(conditions) == 1 else ast.BoolOp(ast.And(), conditions) \
            if conditions else ast.Constant(True)
        parts = ast.Tuple([value for _, value in bindings], ast.Load())
        matched = ast.Call(ast.Lambda(ast.arguments(
            posonlyargs=[], args=[ast.arg("_v")], vararg=None, kwonlyargs=[], kw_defaults=[],
            kwarg=None, defaults=[]), ast.Tuple([test, parts], ast.Load())),
            [value_python], [])
        ok, values = self._evaluate(matched, translator, where)
        if not ok:
            raise _Unsupported("the value does not match the pattern (SML's Bind)")
        for (name, _), value in zip(bindings, values, strict=True):
            self.constants[name] = value
            self.declarations[py_name(name)] = value

    def _constant_valued(self, name: str, body: Tree, element: ET.Element, kind: str) -> None:
        """Declare ``name`` as the value of ``body`` (``_``: evaluated for its effects
        on the cells declared so far); ``kind`` ``globref``: a reference to it."""
        where = f"declaration {name}"
        translator = self._translator()
        try:
            python = translator.expression(body, where)
        except UnsupportedConstruct as exc:
            if name == "_" and not exc.missing:
                raise _Unsupported("'val _ = ...' is evaluated for its side effects, and "
                                   f"these are outside what tcpn reads: {exc.construct}"
                                   ) from None
            raise _Unsupported.of(exc) from None
        value = self._evaluate(python, translator, where)
        if name == "_":
            return
        if kind == "globref":
            value = ml_ref(value)
        if isinstance(value, Cell):
            self._reference(element, name, value.value if self._only_read(name) else value,
                            kind)
            return
        self.constants[name] = value
        if _STANDARD_PRIORITIES.get(name) == self.constants[name]:
            return  # CPN Tools' standard priorities: tcpn priorities are plain ints
        self.declarations[py_name(name)] = self.constants[name]
        if py_name(name) != name and "'local" not in name:
            self.note("declaration", element, name, f"renamed {py_name(name)} in Python")

    def _fun(self, dec: Tree, element: ET.Element) -> None:
        stamped = _delays_as_stamps(dec)
        if stamped != dec:  # ms @+ d read as stamps; refused, it is named as written
            with contextlib.suppress(_Unsupported):
                self._fun_clauses(stamped, element)
                return
        self._fun_clauses(dec, element)

    def _fun_clauses(self, dec: Tree, element: ET.Element) -> None:
        clauses = dec.children
        name = str(clauses[0].children[0])
        where = f"function {name}"
        parts = clauses[0].children
        args = [p for p in parts[1:-2] if not (isinstance(p, Tree) and p.data.startswith("ty_"))]
        try:
            if len(clauses) > 1 or len(args) != 1:
                raise _Unsupported("clauses")
            params, colours = _parameters(args[0])
        except _Unsupported:
            # patterns or several clauses: the clauses are tried in order (cpnml_forms)
            translator = self._translator()
            try:
                _, py_params, python = translator.clauses(dec, where, frozenset())
            except UnsupportedConstruct as exc:
                raise _Unsupported.of(exc) from None
            # the clauses are matched outside translator.expression, which checks the rest
            try:
                translator.known_fields(python, where)
            except UnsupportedConstruct as exc:
                raise _Unsupported.of(exc) from None
            check_expression(python, where, fields=translator.record_labels(),
                             declared=translator.declared_names(frozenset(py_params) | {name}))
            params, colours = py_params, (None,) * len(py_params)
        else:
            self.functions[name] = len(params)
            translator = self._translator(frozenset(params))
            try:
                python = translator.expression(parts[-1], where)
            except UnsupportedConstruct as exc:
                del self.functions[name]
                if _is_multiset_body(dec) and _has_stamp(parts[-1]):
                    # 1`x@t: CPN Tools' timed value (time.sml: datatype 'a timed = @ of
                    # 'a * time), which has a meaning on an output arc only
                    self.multiset_functions[name] = dec
                    self.arc_only_functions.add(name)
                    self.note("declaration", element, name, "a timed multiset (v@t): read "
                              "where an output arc's inscription is a call of it, inlined "
                              "there")
                    return
                raise _Unsupported.of(exc) from None
            py_params = tuple(py_name(p) for p in params)
        self._declare_basis(translator)
        recursive = any(isinstance(n, ast.Name) and n.id == py_name(name)
                        for n in ast.walk(python))
        if translator.uses_random or translator.uses_time:
            self.functions.pop(name, None)
            if recursive:  # expanded at each call as a lambda that is passed itself
                python = _self_applied(py_name(name), tuple(py_name(p) for p in params),
                                       python)
                self.declarations.setdefault("ml_self_apply",
                                             ML_BASIS_DECLARATIONS["ml_self_apply"])
            self.inline[name] = (tuple(params), python)
            self.note("declaration", element, name, "draws random numbers or reads the clock: "
                      "expanded at each call instead of declared")
            return
        self.functions[name] = len(py_params)
        self.function_trees[name] = dec
        if _is_multiset_body(dec):
            self.multiset_functions[name] = dec
        lists = _list_arguments(dec, lambda ty: isinstance(self.colours.get(ty), ListSet), {
            n: (f.list_arguments, f.list_params) for n, f in (
                (ml, self.declarations.get(py_name(ml))) for ml in self.function_trees)
            if isinstance(f, DeclaredFunction)})
        self.declarations[py_name(name)] = DeclaredFunction(
            py_name(name), py_params, ast.unparse(python), self.declarations,
            tuple(c if c in self.colours else None for c in colours), tuple(params),
            ml_source=self._dec_source(dec), list_arguments=lists[0], list_params=lists[1])

    # -- pages ------------------------------------------------------------------------------
    def _unique_child(self, parent: str, name: str) -> str:
        taken = {m.name for m in self.net.modules} | {
            p.module for p in self.net.places.values()}
        path = f"{parent}.{name}" if parent else name
        candidate, suffix = path, 2
        while candidate in taken:
            candidate, suffix = f"{path}_{suffix}", suffix + 1
        return candidate

    def _instance(self, pages: dict[str, ET.Element], page_id: str, path: str,
                  sockets: dict[str, str], stack: list[str]) -> None:
        page = pages[page_id]
        self.ids.setdefault(f"page:{path}", page_id)
        local: dict[str, str] = {}  # element id -> tcpn place name, on this instance
        prefix = f"{path}." if path else ""
        for element in page.findall("place"):
            pid = element.get("id", "")
            if pid in sockets:
                local[pid] = sockets[pid]
                self.ids.setdefault(f"place:{sockets[pid]}@{path}", pid)
                continue
            fusion = element.find("fusioninfo")
            group = fusion.get("name") if fusion is not None else None
            if group and f"fusion:{group}" in self.places:
                info = self.places[f"fusion:{group}"]
                local[pid] = info.name
                self.ids.setdefault(f"place:{info.name}@{path}", pid)
                continue
            with self.located(element):
                info = self._place(element, prefix, path)
            local[pid] = info.name
            self.places[f"{pid}@{path}"] = info
            if group:
                self.places[f"fusion:{group}"] = info
                self.note("place", element, info.name, f"fusion set {group} imported as one place")
        transitions: dict[str, str] = {}
        for element in page.findall("trans"):
            tid = element.get("id", "")
            subst = element.find("subst")
            if subst is not None:
                self._substitution(pages, element, subst, path, local, stack)
                continue
            name = self._unique_node(prefix + _node_identifier(_node_name(element), tid))
            transitions[tid] = name
            self.pending_transitions.append((element, name, path))
            self.pending_names.add(name)
        for element in page.findall("arc"):
            t_end, p_end = element.find("transend"), element.find("placeend")
            tref = t_end.get("idref") if t_end is not None else None
            pref = p_end.get("idref") if p_end is not None else None
            if tref is None or pref is None:
                raise self.fail(element, "an arc needs <transend idref> and <placeend idref>")
            if pref not in local:
                raise self.fail(element, f"arc refers to place {pref!r}, which is not on its "
                                "page")
            if tref not in transitions:
                if self.by_id.get(tref) is not None and self.by_id[tref].tag == "trans" and \
                        self.by_id[tref] in page.findall("trans"):
                    self.ids.setdefault(f"arc:subst:{self.subst_paths.get(tref, '')}:"
                                        f"{local[pref]}", element.get("id", ""))
                    continue  # an arc of a substitution transition: its ports carry it
                raise self.fail(element, f"arc refers to transition {tref!r}, which is not on "
                                "its page")
            self.pending_arcs.append((element, transitions[tref], local[pref], path))

    def _unique_node(self, name: str) -> str:
        candidate, suffix = name, 2
        while candidate in self.net.places or candidate in self.pending_names:
            candidate, suffix = f"{name}_{suffix}", suffix + 1
        return candidate

    def _place(self, element: ET.Element, prefix: str, path: str) -> _PlaceInfo:
        pid = element.get("id", "")
        raw = _node_name(element)
        name = self._unique_node(prefix + _node_identifier(raw, f"P{pid}"))
        if raw and _node_identifier(raw, "") != raw:
            self.note("place", element, raw, f"renamed {name}")
        type_name = _text(element.find("type")) or "UNIT"
        if type_name not in self.colours and type_name not in self.bad_colours:
            unread = self.cpnet.find(".//errordecl")
            why = "" if unread is None else (
                f" (the file's declarations are an <errordecl> block, line "
                f"{self.lines.get(unread, '?')}: Design/CPN text the converter left "
                "untranslated, which tcpn does not read)")
            # CPN Tools marks such a place as an error: left out, with its arcs and the
            # transitions that need them, the rest of the net imported
            info = _PlaceInfo(name, element, None)
            info.item = self.skip("place", element, raw, f"colour set {type_name!r} is "
                                  f"declared nowhere in the file{why}", missing=type_name)
            return info
        colour = self.colours.get(type_name)
        info = _PlaceInfo(name, element, colour)
        if colour is None:
            info.item = self.skip("place", element, raw, f"colour set {type_name}: "
                                  f"{self.bad_colours[type_name]}")
            return info
        try:
            tokens = self._initial_marking(element, colour)
        except _Unsupported as exc:
            info.item = self.skip("place", element, raw, f"initial marking: {exc.reason}",
                                  missing=exc.missing)
            info.colour = None
            return info
        drawn = tokens if isinstance(tokens, InitialDraw) else None
        initial = [] if isinstance(tokens, InitialDraw) else tokens
        if drawn is not None:
            self.note("place", element, raw, f"initial marking {drawn.text!r} drawn at "
                      "random: each run draws it from its seed, as CPN Tools draws it at "
                      "initialisation (a state space needs one draw fixed first)")
        try:
            place = Place(name, colour, initial=initial, module=path, initial_draw=drawn)
        except InputError as exc:
            info.item = self.skip("place", element, raw, str(exc))
            info.colour = None
            return info
        self.net.add_place(place)
        self.ids[f"place:{name}"] = pid
        return info

    def _initial_marking(self, element: ET.Element, colour: ColourSet
                         ) -> list[Token] | InitialDraw:
        """The place's initial tokens; an :class:`InitialDraw` when the marking draws at
        random (``discrete(0, 99)``, ``CS.ran()``): CPN Tools evaluates it once, when the
        simulator initialises the net, and so does each tcpn run, from its seed."""
        text = _text(element.find("initmark"))
        if not text or text == "INIT MARK":
            return []
        where = f"initial marking of place {_node_name(element)!r}"
        value_text, op, delay_text = split_delay(text)
        base = 0.0
        if op is not None:
            base = self._number(delay_text, where)
        tree = self._parse(element.find("initmark"), value_text, where)
        terms: list[tuple[ast.expr, ast.expr | None, ast.expr | None, MLToPython]] = []
        for term in multiset_terms(tree) or []:
            translator = self._translator()
            try:
                terms.append((translator.expression(term.value, where),
                              None if term.count is None
                              else translator.expression(term.count, where),
                              None if term.stamp is None
                              else translator.expression(term.stamp, where), translator))
            except UnsupportedConstruct as exc:
                raise _Unsupported.of(exc) from None
        if any(t.uses_random for *_, t in terms) and not any(t.uses_time for *_, t in terms):
            for *_, translator in terms:
                self._declare_basis(translator)
            return InitialDraw(text, tuple(
                DrawnTerm(ast.unparse(value), None if count is None else ast.unparse(count),
                          None if stamp is None else ast.unparse(stamp))
                for value, count, stamp, _ in terms), self.declarations, base)
        tokens: list[Token] = []
        for value_python, count_python, stamp_python, translator in terms:
            value = self._evaluate(value_python, translator, where)
            count = None if count_python is None else self._evaluate(count_python, translator,
                                                                     where)
            stamp = base if stamp_python is None else float(
                self._evaluate(stamp_python, translator, where))
            try:
                tokens.extend(term_tokens(colour, value, count, stamp, where, len(tokens)))
            except InputError as exc:
                if "marking_tokens" in str(exc):
                    raise self.fail(element, str(exc)) from None
                raise _Unsupported(str(exc).removeprefix(f"{where}: ")) from None
        return tokens

    def _number(self, text: str, where: str) -> float:
        translator = self._translator()
        try:
            value = self._evaluate(translator.expression(self.parse_ml(text, where), where),
                                   translator, where)
        except UnsupportedConstruct as exc:
            raise _Unsupported.of(exc) from None
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise _Unsupported(f"{text!r} is not a number")
        return float(value)

    def _parse(self, element: ET.Element | None, text: str, where: str,
               start: str = "expr") -> Tree:
        try:
            return self.parse_ml(text, where, start)
        except MLSyntaxError as exc:
            # CPN Tools loads such a file and marks the element: so does tcpn, leaving out
            # the place or transition the inscription belongs to
            line = self.lines.get(element) if element is not None else None
            at = f" (<{element.tag}> {element.get('id')}, line {line})" \
                if element is not None else ""
            raise _Unsupported(f"{exc}{at}") from None

    def _substitution(self, pages: dict[str, ET.Element], element: ET.Element, subst: ET.Element,
                      path: str, local: dict[str, str], stack: list[str]) -> None:
        subpage = subst.get("subpage", "")
        if subpage not in pages:
            raise self.fail(element, f"substitution transition refers to unknown page "
                            f"{subpage!r}")
        if subpage in stack:
            raise self.fail(element, "the page hierarchy is recursive")
        child = self._unique_child(path, _python_identifier(_node_name(element),
                                                             element.get("id", "")))
        self.subst_paths[element.get("id", "")] = child
        self.ids[f"subst:{child}"] = element.get("id", "")
        sockets: dict[str, str] = {}
        ports: list[tuple[str, str]] = []
        for port_id, socket_id in re.findall(r"\(([^,()]+),([^,()]+)\)",
                                             subst.get("portsock", "")):
            # Design/CPN nets CPN Tools converted write "(id695, id357)": a space after ','
            port_id, socket_id = port_id.strip(), socket_id.strip()
            if socket_id not in local:
                raise self.fail(element, f"portsock names socket {socket_id!r}, which is not a "
                                "place on this page")
            port = self.by_id.get(port_id)
            if port is None or port.tag != "place" or port not in pages[subpage].findall("place"):
                raise self.fail(element, f"portsock names port {port_id!r}, which is not a "
                                "place of the subpage")
            sockets[port_id] = local[socket_id]
            ports.append((_node_identifier(_node_name(port), port_id), local[socket_id]))
        module = _python_identifier(self._page_name(pages[subpage]), subpage)
        self.net.modules.append(ModuleInstance(child, module, tuple(ports), ()))
        self._instance(pages, subpage, child, sockets, [*stack, subpage])

    # -- transitions and arcs ---------------------------------------------------------------
    def _transitions(self) -> None:
        arcs_of: dict[str, list[tuple[ET.Element, str]]] = {}
        for arc_element, transition_name, place, _path in self.pending_arcs:
            arcs_of.setdefault(transition_name, []).append((arc_element, place))
        self.arc_ids: list[tuple[Arc, str]] = []
        self.pythons = {}
        self.place_named: dict[str, _PlaceInfo] = {}  # the first place info of each name
        for info in self.places.values():
            self.place_named.setdefault(info.name, info)
        for element, name, path in self.pending_transitions:
            raw = _node_name(element)
            try:
                with self.located(element):
                    transition, arcs = self._transition(element, name, path,
                                                        arcs_of.get(name, []))
            except _Unsupported as exc:
                self.skip("transition", element, raw, exc.reason, missing=exc.missing,
                          cause=exc.cause, arcs=len(arcs_of.get(name, [])))
                continue
            self.net.add_transition(transition)
            self.ids[f"trans:{name}"] = element.get("id", "")
            for arc, arc_id in arcs:
                self.net.add_arc(arc)
                self.arc_ids.append((arc, arc_id))
            if raw and _node_identifier(raw, "") != raw:
                self.note("transition", element, raw, f"renamed {name}")
        self._in_id_order()

    def _in_id_order(self) -> None:
        """Transitions, arcs and places in the order of their ids when all are ``ID`` + digits.

        The simulator breaks ties between bindings enabled at the same time by the order
        of the transitions; tcpn writes transition ids increasing in the net's order (and
        CPN Tools numbers elements as they are made), while pages group transitions by
        module. Two instances of one page share ids and keep their order.
        """
        def numbers(ids: Iterable[tuple[Any, str]]) -> dict[Any, int] | None:
            found = {}
            for key, element_id in ids:
                number = re.fullmatch(r"(?:ID|id)(\d+)", element_id)
                if number is None:
                    return None
                found[key] = int(number.group(1))
            return found

        transitions = numbers((n, self.ids[f"trans:{n}"]) for n in self.net.transitions)
        if transitions is not None:
            order = sorted(self.net.transitions, key=transitions.__getitem__)
            self.net.transitions = {name: self.net.transitions[name] for name in order}
            arcs = numbers((id(arc), arc_id) for arc, arc_id in self.arc_ids)
            if arcs is not None and all(id(arc) in arcs for arc in self.net.arcs):
                # the arcs in the order of theirs (a double arc's two share one id)
                self.net.arcs.sort(key=lambda arc: arcs[id(arc)])
            else:
                rank = {name: index for index, name in enumerate(order)}
                self.net.arcs.sort(key=lambda arc: rank[arc.transition])
        places = numbers((n, self.ids[f"place:{n}"]) for n in self.net.places)
        if places is not None:  # the places too, so that a net written again is the same
            self.net.places = {name: self.net.places[name]
                               for name in sorted(self.net.places, key=places.__getitem__)}

    def _transition(self, element: ET.Element, name: str, path: str,
                    arcs: list[tuple[ET.Element, str]]) -> tuple[Transition, list[tuple[Arc, str]]]:
        raw = _node_name(element)
        where = f"transition {raw!r}"
        variables = frozenset(self.variables)
        for arc_element, place in arcs:
            info = self.place_named.get(place)
            if info is None or info.colour is None:
                raise _Unsupported(f"its arc {arc_element.get('id')} touches place {place}, "
                                   "which was left out", cause=info.item if info else None)
        channel = _text(element.find("channel"))
        if channel:
            raise _Unsupported("synchronisation channels are not imported")
        guard_text = _text(element.find("cond"))
        conditions = self._parse(element.find("cond"), guard_text, f"guard of {where}",
                                 "guard").children if guard_text else []
        bindings, conditions = self._guard_bindings(element, conditions, arcs,
                                                    f"guard of {where}", variables)
        guard = self._guard(element.find("cond"), conditions, f"guard of {where}", variables) \
            if conditions else None
        delay = self._transition_delay(element.find("time"), f"time of {where}", variables)
        priority = self._priority(element.find("priority"), f"priority of {where}")
        action, outputs = self._code(element.find("code"), f"code of {where}", variables, raw)
        if bindings:
            action, outputs = self._bound_by_guard(element, bindings, action, outputs,
                                                   f"guard of {where}", variables)
        built: list[tuple[Arc, str]] = []
        taken = dict(bindings)  # a multiset the guard binds, read by the input arcs
        for arc_element, place in arcs:
            try:
                made = self._arc(arc_element, name, place, variables, taken)
            except _AlwaysEmpty as exc:
                # no token moves on it: left out, unless it names a variable nothing else
                # of the transition does (a binding CPN Tools would still range over)
                others = " ".join([guard_text, _text(element.find("code"))] + [
                    _text(a.find("annot")) for a, _ in arcs if a is not arc_element])
                if any(not re.search(rf"(?<![\w']){re.escape(v)}(?![\w'])", others)
                       for v in exc.variables):
                    raise
                self.note("arc", arc_element, f"arc {arc_element.get('id')}",
                          "an arc inscription that is always empty: no token moves on it, "
                          "the arc is left out and its transition kept")
                continue
            for arc in made:
                built.append((arc, arc_element.get("id", "")))
        guard, built, action = _rewrite_list_patterns(guard, built, action)
        try:
            transition = Transition(name, guard=guard, delay=delay, priority=priority,
                                    action=action, outputs=outputs, module=path)
        except InputError as exc:
            raise _Unsupported(str(exc)) from None
        return transition, built

    def _python(self, element: ET.Element | None, tree: Any, where: str,
                variables: frozenset[str]) -> tuple[str, MLToPython]:
        key = (id(tree), variables)
        if self.pythons is not None and key in self.pythons:
            return self.pythons[key]
        translator = self._translator(variables)
        try:
            python = translator.expression(tree, where)
        except UnsupportedConstruct as exc:
            raise _Unsupported.of(exc) from None
        self._declare_basis(translator)
        if not (translator.uses_random or translator.uses_time):
            python = _FoldConstants(self._constant_scope()).visit(python)
        result = ast.unparse(python), translator
        if self.pythons is not None:
            self.pythons[key] = result
            # the key is the tree's id: keep the tree (one built here, by inlining a
            # function or merging branches, would otherwise free its id for another)
            self.cached_trees.append(tree)
        return result

    def _constant_scope(self) -> dict[str, Any]:
        """The net's constants (``val``, globrefs), for folding what is computed from
        them alone."""
        scope = {py_name(k): v for k, v in self.constants.items()}
        return {k: v for k, v in scope.items() if _literal(v)}

    def _guard_bindings(self, element: ET.Element, conditions: list[Any],
                        arcs: list[tuple[ET.Element, str]], where: str,
                        variables: frozenset[str]) -> tuple[list[tuple[str, Any]], list[Any]]:
        """The guard's conjuncts ``p = e`` (or ``e = p``) that bind the variables of the
        pattern ``p``, as CPN Tools' binding calculation does: ``p`` a variable, a
        constant, or a tuple or record of patterns (``{owner=o, balance=b} = s``); its
        variables declared ones that no input arc, code segment output, time or priority
        inscription names; every variable ``e`` reads already bound (by the arcs, by an
        earlier such conjunct, or free: no conjunct binds it). A conjunct binds once what it
        reads is bound, in whatever order the guard lists them. Each variable of ``p`` is
        then the part of ``e`` it stands for (``#owner s``), in terms of the variables
        the arcs bind; a constant in ``p`` is tested against its part. The other conjuncts
        read that part in place of the variable (a ``p`` whose ``e`` draws at random or
        reads the clock binds only a lone variable no other conjunct names).
        Returns the bindings (variable, its value) and the other conjuncts."""
        inputs = [(a, p) for a, p in arcs
                  if (a.get("orientation") or "").lower() in ("ptot", "bothdir")]
        texts = [_text(a.find("annot")) for a, _ in inputs]
        texts += [_text(element.find(tag)) for tag in ("time", "priority")]
        code = _text(element.find("code"))
        outputs = re.search(r"\boutput\s*\(?([^);]*)", code)
        texts.append(outputs.group(1) if outputs else "")

        def named(name: str, text: str) -> bool:
            return re.search(rf"(?<![\w'.#]){re.escape(name)}(?![\w'])", text) is not None

        declared = set(self.variables)
        mentioned = {n for c in conditions for n in _free_names(c)} & declared
        # a variable of a list colour set standing for a whole multiset on an input arc
        # ('a ms = 'a list) is not bound by that arc: CPN Tools binds it by the guard
        unbinding = [self._multiset_variables(a, p) for a, p in inputs]
        bound = {n for n in mentioned
                 if any(named(n, t) and n not in unbinding[k] for k, t in enumerate(texts[
                     :len(inputs)])) or any(named(n, t) for t in texts[len(inputs):])}
        sides = [_equation_patterns(c, declared) for c in conditions]
        binders = set().union(*(_binders_in(c) for c in conditions)) if conditions else set()
        # a variable no conjunct's pattern can bind is free: CPN Tools binds it first
        bound |= mentioned - {v for found in sides for p, _ in found
                              for v in _pattern_names(p) & declared}
        substitution: dict[str, Any] = {}
        bindings: list[tuple[str, Any]] = []
        tests: list[Any] = []
        used: set[int] = set()
        while True:
            progress = True
            while progress:
                progress = False
                for index, found in enumerate(sides):
                    if index not in used and self._bind_conjunct(
                            element, index, found, conditions, bound, binders, substitution,
                            bindings, tests, where, variables):
                        used.add(index)
                        progress = True
            # patterns whose expression reads a variable nothing binds: their variables
            # are free too (bound to every member of a small colour set), the conjunct a test
            stuck = {v for index, found in enumerate(sides) if index not in used
                     for p, _ in found for v in _pattern_names(p) & declared} - bound
            if not stuck:
                break
            bound |= stuck
        kept = [c for k, c in enumerate(conditions) if k not in used] + tests
        return bindings, [_substitute(c, substitution) for c in kept]

    def _lists_of_tokens(self, tree: Any, colour: ColourSet) -> Any:
        """On a place whose colour set is a list, ``[x]`` (or ``[x, y]``) whose elements
        are variables of that colour set is a multiset of them ('a ms = 'a list): the
        terms ``1`x ++ 1`y``, wherever the inscription gives a multiset (alone, a branch
        of ``if``/``case``, an operand of ``++``); a list of other values stays one
        token (the list itself)."""
        if not isinstance(tree, Tree):
            return tree
        if tree.data == "list" and tree.children and all(
                isinstance(c, Tree) and c.data == "name" and
                self.colours.get(self.variables.get(str(c.children[0]), "")) is colour
                for c in tree.children):
            terms = [Tree("binop", [Tree("int", [LarkToken("INT", "1")]),
                                    LarkToken("BQ", "`"), c], tree.meta)
                     for c in tree.children]
            result = terms[0]
            for term in terms[1:]:
                result = Tree("binop", [result, LarkToken("PLUSPLUS", "++"), term], tree.meta)
            return result
        if tree.data == "ifte":
            return Tree("ifte", [tree.children[0], *(self._lists_of_tokens(c, colour)
                                                     for c in tree.children[1:])], tree.meta)
        if tree.data == "case":
            rules = [Tree(r.data, [r.children[0], self._lists_of_tokens(r.children[1], colour)],
                          r.meta) for r in tree.children[1].children]
            return Tree("case", [tree.children[0], Tree(tree.children[1].data, rules,
                                                        tree.children[1].meta)], tree.meta)
        if tree.data == "binop" and str(tree.children[1]) == "++":
            return Tree("binop", [self._lists_of_tokens(tree.children[0], colour),
                                  tree.children[1],
                                  self._lists_of_tokens(tree.children[2], colour)], tree.meta)
        return tree

    def _multiset_variables(self, element: ET.Element, place: str) -> set[str]:
        """The variables of a list colour set that an input arc's inscription holds as a
        whole term (``paper_list``, ``1`x ++ rest``) on a place whose colour set is not a
        list: the multiset of the list's elements, which the arc cannot bind (CPN Tools
        enumerates tokens, not multisets); empty if the inscription does not parse."""
        info = self.place_named.get(place)
        if info is None or isinstance(info.colour, ListSet):
            return set()
        value_text = split_delay(_text(element.find("annot")))[0]
        try:
            tree = self.parse_ml(value_text, "arc", "expr")
        except MLSyntaxError:
            return set()
        found = set()
        for term in multiset_terms(tree) or []:
            value = term.value
            if term.count is None and term.stamp is None and isinstance(value, Tree) and \
                    value.data == "name" and str(value.children[0]) in self.variables and \
                    isinstance(self.colours.get(self.variables[str(value.children[0])]),
                               ListSet):
                found.add(str(value.children[0]))
        return found

    def _bind_conjunct(self, element: ET.Element, index: int, found: list[tuple[Any, Any]],
                       conditions: list[Any], bound: set[str], binders: set[str],
                       substitution: dict[str, Any], bindings: list[tuple[str, Any]],
                       tests: list[Any], where: str, variables: frozenset[str]) -> bool:
        """Bind by conjunct ``index`` (one of its sides ``found``) when it can: its
        pattern names a variable not bound yet, its expression reads bound ones only."""
        declared = set(self.variables)
        for pattern, expression in found:
            new = (_pattern_names(pattern) & declared) - bound
            if not new or not (_free_names(expression) & declared) <= bound:
                continue
            value = _substitute(expression, substitution)
            parts: list[tuple[Any, Any]] = []
            if not _project(pattern, value, parts):
                continue
            others = set().union(*(_free_names(c) for k, c in enumerate(conditions)
                                   if k != index))
            lone = isinstance(pattern, Tree) and pattern.data == "name"
            if not lone or new & others:
                _, translator = self._python(element, value, where, variables)
                if translator.uses_random or translator.uses_time:
                    continue
            if any(_free_names(part) & binders for _, part in parts):
                continue  # a name the part reads is bound again inside the guard
            for leaf, part in parts:
                name = str(leaf.children[0]) if isinstance(leaf, Tree) and \
                    leaf.data == "name" else None
                if name in new and name not in substitution:
                    substitution[name] = part
                    bindings.append((name, part))
                else:  # a constant, or a variable bound already: a test
                    tests.append(Tree("binop", [part, LarkToken("EQ", "="), leaf]))
            bound |= new
            return True
        return False

    def _bound_by_guard(self, element: ET.Element, bindings: list[tuple[str, Any]],
                        action: CodeAction | None, outputs: tuple[str, ...], where: str,
                        variables: frozenset[str]) -> tuple[CodeAction, tuple[str, ...]]:
        """An action giving the variables the guard binds (each its ``e``, computed when the
        transition occurs) before the code segment's own outputs, which may read them."""
        names = tuple(py_name(v) for v, _ in bindings)
        values = [self._python(element, e, where, variables)[0] for _, e in bindings]
        known = {py_name(v) for v in self.variables}
        inputs = {n for text in values for n in Inscription.parse(text, where).names
                  if n in known}
        every = names + outputs
        if action is None:  # the values themselves, as a code segment would give them
            body = values[0] if len(values) == 1 else f"({', '.join(values)})"
        else:
            inputs |= set(action.inputs) - set(names)
            params = ", ".join(names)
            bound = names[0] if len(names) == 1 else f"({params})"
            parts = ", ".join(f"code_result[{k}]" for k in range(len(action.outputs)))
            result = {0: f"(({action.body}), {bound})[1]",  # its effects, then the values
                      1: f"({params}, {action.body})"}.get(
                len(action.outputs),
                f"(lambda code_result: ({params}, {parts}))({action.body})")
            body = f"(lambda {params}: {result})({', '.join(values)})"
        self.note("transition", element, _node_name(element), "guard binds "
                  f"{', '.join(v for v, _ in bindings)} (computed when it occurs, as CPN "
                  "Tools binds a variable no input arc binds from a guard p = e)")
        return CodeAction(tuple(sorted(inputs)), every, body, self.declarations), every

    def _guard(self, element: ET.Element | None, conditions: list[Any], where: str,
               variables: frozenset[str]) -> str:
        parts = [self._python(element, c, where, variables) for c in conditions]
        if any(t.uses_random for _, t in parts):
            raise _Unsupported("a guard that draws random numbers")
        texts = [p for p, _ in parts]
        if len(texts) == 1:
            return texts[0]
        return " and ".join(f"({t})" for t in texts)

    def _transition_delay(self, element: ET.Element | None, where: str,
                          variables: frozenset[str]) -> Any:
        text = _text(element)
        if not text or text == "@+":
            return None
        match = re.match(r"^@\+\+?", text)
        if match is None:
            raise self.fail(element, f"{where}: a time inscription must start with @+ or @++, "
                            f"got {text!r}")
        return self._delay(element, text[match.end():].strip(), where, variables)

    def _delay(self, element: ET.Element | None, text: str, where: str,
               variables: frozenset[str]) -> Any:
        interval = _INTERVAL.match(text)
        if interval is not None:  # CPN Tools 4's time interval @+[a,b]
            return Interval(int(interval[1]), int(interval[2]))
        tree = self._parse(element, text, where)
        python, _ = self._python(element, tree, where, variables)
        distribution = _distribution(python, self.declarations)
        if distribution is not None:
            return distribution
        try:
            value = ast.literal_eval(python)
        except ValueError:
            return python
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Unsupported(f"delay {text!r} is not a number")
        return value

    def _priority(self, element: ET.Element | None, where: str) -> int:
        text = _text(element)
        if not text or text == "P_NORMAL":
            return P_NORMAL
        value = self._constant_or_unsupported(element, text, where)
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Unsupported(f"priority {text!r} is not an int")
        return value

    def _constant_or_unsupported(self, element: ET.Element | None, text: str, where: str) -> Any:
        tree = self._parse(element, text, where)
        python, translator = self._python(element, tree, where, frozenset())
        return self._evaluate(ast.parse(python, mode="eval").body, translator, where)

    def _code(self, element: ET.Element | None, where: str, variables: frozenset[str],
              name: str) -> tuple[CodeAction | None, tuple[str, ...]]:
        """The code segment as an action computing its outputs. What acts only by side
        effects (no outputs; MSC charts, files, prints before the result) is left out and
        reported; the transition is kept."""
        text = _text(element)
        if not text or re.sub(r"\s+", "", text).rstrip(";") == "input();output();action()":
            return None, ()  # CPN Tools' placeholder, however it is spaced
        assert element is not None
        # the ';' after the input and output parts may be left out, as CPN Tools allows
        names = r"\s*(?:\(([^)]*)\)|([A-Za-z][\w']*))\s*;?"
        match = re.fullmatch(rf"\s*(?:input{names})?\s*(?:output{names})?\s*action\b\s*(.*?)"
                             r";?\s*", text, re.DOTALL)
        if match is None:
            raise _Unsupported("a code segment other than 'input (..); output (..); action e;'")
        inputs = tuple(n.strip() for n in (match.group(1) or match.group(2) or "").split(",")
                       if n.strip())
        outputs = tuple(n.strip() for n in (match.group(3) or match.group(4) or "").split(",")
                        if n.strip())
        try:
            tree = self._parse(element, f"({match.group(5)})", where)
        except _Unsupported as exc:
            if outputs:
                raise
            self.skip("code segment", element, name, "a code segment without outputs acts "
                      "only by side effects, outside what tcpn reads (left out; the "
                      f"transition is kept): {exc.reason}")
            return None, ()
        if not outputs or tree.data == "sequence":
            # e1; e2; result: e1 and e2 act by side effects (on reference cells, the only
            # ones tcpn keeps); kept when they translate, else left out
            try:
                python, _ = self._python(element, tree, where, variables)
            except _Unsupported as exc:
                if not outputs:
                    self.skip("code segment", element, name, "a code segment without "
                              "outputs acts only by side effects, outside what tcpn reads "
                              f"(left out; the transition is kept): {exc.reason}",
                              missing=exc.missing)
                    return None, ()
                *effects, tree = tree.children
                self.skip("code segment", element, name, f"{len(effects)} expression(s) "
                          "before the result act only by side effects, outside what tcpn "
                          f"reads (left out): {exc.reason}", missing=exc.missing)
            else:
                body = python if outputs else f"({python}, ())[1]"
                return CodeAction(tuple(py_name(n) for n in inputs), tuple(
                    py_name(n) for n in outputs), body, self.declarations), tuple(
                    py_name(n) for n in outputs)
        if _is_gui_call(tree):
            # the result of a chart call (an event's id) only labels the chart: the outputs
            # get a neutral value of their colour set
            neutral = tuple(self._neutral(n) for n in outputs)
            self.skip("code segment", element, name, f"{_call_name(tree)} draws a message "
                      "sequence chart (GUI only): left out, output(s) "
                      f"{', '.join(outputs)} set to {', '.join(map(repr, neutral))}")
            python = repr(neutral[0] if len(neutral) == 1 else neutral)
        else:
            python, _ = self._python(element, tree, where, variables)
        return CodeAction(tuple(py_name(n) for n in inputs), tuple(py_name(n) for n in outputs),
                          python, self.declarations), tuple(py_name(n) for n in outputs)

    def _neutral(self, variable: str) -> Any:
        """A neutral value of a variable's colour set (its first member, 0, "", 0.0)."""
        colour = self.colours.get(self.variables.get(variable, ""))
        members = colour.members() if colour is not None else None
        if members:
            return members[0]
        neutral = {IntSet: 0, RealSet: 0.0, StringSet: "", ListSet: ()}
        for kind, value in neutral.items():
            if isinstance(colour, kind):
                return value
        raise _Unsupported(f"output {variable} of a chart call has no neutral value")

    def _arc(self, element: ET.Element, transition: str, place: str,
             variables: frozenset[str], taken: dict[str, Any] | None = None) -> list[Arc]:
        """The arcs one CPN Tools arc gives; ``taken``: the variables the guard binds, each
        its expression, which an input arc (that cannot bind them) reads in their place."""
        orientation = (element.get("orientation") or "").lower()
        text = _text(element.find("annot"))
        where = f"arc {element.get('id')}"
        colour = self.net.places[place].colour
        if orientation in ("inhibitor", "reset"):
            # CPN Tools ignores the multiset the inscription names: the place must be empty
            # (inhibitor) or is emptied (reset)
            kind = ArcKind.INHIBITOR if orientation == "inhibitor" else ArcKind.RESET
            return [Arc(kind, place, transition)]
        if orientation not in ("ptot", "ttop", "bothdir", "nodir"):
            raise self.fail(element, f"unknown arc orientation {element.get('orientation')!r}")
        if not text:
            if not isinstance(colour, UnitSet):
                raise _Unsupported(f"{where}: no inscription on an arc of a non-UNIT place")
            text = "()"
        value_text, op, delay_text = split_delay(text)
        delay = None
        if op is not None and orientation != "ttop":
            # CPN Tools' exp@+d on an input arc (d an integer, the place timed) lets the
            # transition take the tokens up to d time units before their time stamps;
            # tcpn's engines take a token once its stamp is reached, so only d = 0 is read
            if not colour.is_timed:
                raise _Unsupported(f"{where}: a time delay on an input arc of an untimed "
                                   "place (CPN Tools allows one only on a timed place)")
            try:
                value = self._constant_or_unsupported(element, delay_text,
                                                      f"delay of {where}")
            except _Unsupported:
                value = None  # it reads the binding: not 0 for every binding
            if op != "@+" or type(value) is not int or value != 0:
                raise _Unsupported(
                    f"{where}: a time delay on an input arc ({text!r}: CPN Tools lets the "
                    "transition take the tokens that many time units before their time "
                    "stamps; tcpn takes a token only once its time stamp is reached)")
            op = None
        if op is not None:
            delay = self._delay(element, delay_text, f"delay of {where}", variables)
        tree = _conditional_terms(self._parse(element.find("annot"), value_text, where))
        if isinstance(colour, ListSet):
            tree = self._lists_of_tokens(tree, self.net.places[place].colour)
        if taken and orientation in ("ptot", "bothdir"):
            tree = _substitute(tree, taken)
        arc_variables = frozenset(names_in(tree)) & frozenset(self.variables)
        called = self._multiset_call(tree, where) if isinstance(tree, Tree) and \
            tree.data == "apply" and isinstance(tree.children[0], Tree) and \
            str(tree.children[0].children[0]) in self.arc_only_functions else None
        if called is not None:
            tree = _conditional_terms(called)
        when = None
        if tree.data == "ifte" and _is_empty(tree.children[2]) and orientation == "ttop":
            when, _ = self._python(element, tree.children[0], where, variables)
            tree = tree.children[1]
        terms = self._expand_terms(tree, where)
        if not terms:
            raise _AlwaysEmpty(f"{where}: an arc inscription that is always empty",
                               arc_variables)
        # a term whose value is a list of the place's colours (CS.all(), List.map ...) is
        # the multiset of them, as CPN Tools reads it: a constant one, one term per
        # distinct colour; one written out, [e1, ..., en], the terms 1`e1 ... 1`en (an
        # element that is a pattern binds, as in 1`x ++ 1`y); another computed from the
        # binding, a multiset arc
        literals: list[tuple[str, int | str]] = []
        computed: list[str] = []
        if not isinstance(colour, ListSet):
            listed = [t for t in terms if t.count is None and t.stamp is None and
                      self._list_valued(t.value, 0)]
            elements: list[MultisetTerm] = []
            for term in listed:
                found = self._listed_colours(element, term.value, where, variables, colour)
                if isinstance(found, str) and isinstance(term.value, Tree) and \
                        term.value.data == "list":
                    elements.extend(MultisetTerm(None, e, None) for e in term.value.children)
                elif isinstance(found, str):
                    computed.append(found)
                else:
                    literals.extend(found)
            terms = [t for t in terms if not any(t is u for u in listed)] + elements
        arcs: list[Arc] = []

        def add(value: str, count: int | str, term_delay: Any, multiset: bool = False) -> None:
            try:
                add_arcs(value, count, term_delay, multiset)
            except InputError as exc:  # a count past the limits: its transition is left out
                raise _Unsupported(f"{where}: {exc}") from None

        def add_arcs(value: str, count: int | str, term_delay: Any, multiset: bool) -> None:
            if orientation == "ttop" and term_delay is not None and not colour.is_timed:
                # CPN Tools refuses it as well: an untimed token has no time to delay
                raise _Unsupported(f"{where}: a delay (@+) on an arc to place "
                                   f"{self.net.places[place].name!r}, whose colour set "
                                   f"{colour.describe()} is untimed")
            # what an arc that takes tokens binds with (a record written out is a pattern);
            # an output arc puts ``value`` itself
            taken = value if multiset or orientation == "ttop" else \
                _record_pattern(value, colour)
            if orientation == "ptot":
                arcs.append(Arc(ArcKind.INPUT, place, transition, taken, count,
                                multiset=multiset))
            elif orientation == "ttop":
                arcs.append(Arc(ArcKind.OUTPUT, place, transition, value, count, when,
                                term_delay, multiset))
            elif colour.is_timed:
                arcs.append(Arc(ArcKind.INPUT, place, transition, taken, count,
                                multiset=multiset))
                arcs.append(Arc(ArcKind.OUTPUT, place, transition, value, count,
                                multiset=multiset))
                self.note("arc", element, where, "a double arc on a timed place imported as an "
                          "input and an output arc (the token gets a new timestamp)")
            else:
                arcs.append(Arc(ArcKind.READ, place, transition, taken, count,
                                multiset=multiset))

        for literal, times in literals:
            add(literal, times, delay)
        for python in computed:
            add(python, 1, delay, multiset=True)
        split: list[MultisetTerm] = []
        for term in terms:  # branches of several terms: one conditional term per position
            slots = _branch_slots(term.value) if orientation == "ttop" and _branches(
                term.value) and term.count is None and term.stamp is None else None
            if slots is not None and not self._python(element, term.value, where,
                                                      variables)[1].uses_random:
                split.extend(MultisetTerm(None, slot, None) for slot in slots)
            else:
                split.append(term)
        for term in split:
            term_delay = delay
            if term.stamp is not None:
                # v@t on an output arc: the token's time stamp is t, a delay of t - now (a
                # stamp already past: ready now, as CPN Tools takes it)
                if orientation != "ttop" or delay is not None or not colour.is_timed:
                    raise _Unsupported(f"{where}: an explicit timestamp '@' on an input arc, "
                                       "with a delay or on an untimed place")
                stamp, _ = self._python(element, term.stamp, where, variables)
                term_delay = f"max(0, ({stamp}) - now)"
            count: int | str = 1
            if _branches(term.value):
                # if/case choosing among multisets of one value each: that value (chosen
                # the same way) and as many tokens as the chosen multiset has
                if term.count is not None:
                    raise _Unsupported(f"{where}: a count on a conditional multiset")
                value, _ = self._python(element, _branch_values(term.value, where,
                                                                       self.enum_constants), where,
                                        variables)
                stamps = _branch_stamps(term.value)
                if stamps is not None:
                    # branches stamping their tokens (a function of @+, inlined): the
                    # stamp chosen the same way, a branch without one stamped now
                    if orientation != "ttop" or delay is not None or not colour.is_timed:
                        raise _Unsupported(f"{where}: a timestamp '@' on an input arc, with "
                                           "a delay or on an untimed place")
                    stamp, _ = self._python(element, stamps, where, variables)
                    term_delay = f"max(0, ({stamp}) - now)"
                whole, _ = self._python(element, _without_stamps(term.value), where,
                                        variables)
                count = f"len({whole})"
            else:
                value, _ = self._python(element, term.value, where, variables)
            if term.count is not None:
                count_text, _ = self._python(element, term.count, where, variables)
                try:
                    count = int(ast.literal_eval(count_text))
                except ValueError:
                    # a declared integer constant (val n = 100; n`x) is that number: the
                    # arc's term can then bind, as a pattern with a fixed count
                    named = self.constants.get(str(term.count.children[0])) if isinstance(
                        term.count, Tree) and term.count.data == "name" else None
                    count = named if type(named) is int and named >= 0 else count_text
            if isinstance(colour, UnitSet) and term.count is None and value.isdigit():
                count, value = int(value), "()"
            add(value, count, term_delay)
        return arcs

    def _list_valued(self, tree: Any, depth: int) -> bool:
        """Whether ``tree`` is written as a list (``[..]``, ``CS.all()``, ``CS.mult``,
        ``List.map``, ``List.filter``, ``List.tabulate``, ``rev``, ``^^``, ``::``, ``--``, a
        ``val`` or a call of a function whose value is one): on an arc, the multiset of its
        elements."""
        if not isinstance(tree, Tree) or depth > 8:
            return False
        if tree.data == "list":
            return True
        if tree.data == "let" and _local_multiset_call(tree):
            return True
        if tree.data == "deref" and isinstance(tree.children[0], Tree) and \
                tree.children[0].data == "name":  # !cell of a cell holding a list
            cell = self.constants.get(str(tree.children[0].children[0]))
            return isinstance(cell, Cell) and isinstance(cell.value, tuple)
        if tree.data in ("let", "sequence"):
            return self._list_valued(tree.children[-1], depth + 1)
        if tree.data == "ifte":
            return all(self._list_valued(c, depth + 1) for c in tree.children[1:])
        if tree.data == "binop":
            return str(tree.children[1]) in ("^^", "::", "--")
        if tree.data == "name":
            name = str(tree.children[0])
            if name in self.variables:  # a variable of a list colour set: 'a ms = 'a list
                return isinstance(self.colours.get(self.variables[name]), ListSet)
            body = self.val_bodies.get(name)
            while isinstance(body, Tree) and body.data == "typed":
                body = body.children[0]
            if isinstance(body, Tree) and body.data in _NOT_LISTS:
                return False  # val u = () or val p = (1, 2): one value, held as a tuple
            return isinstance(self.constants.get(name), tuple)
        if tree.data != "apply":
            return False
        head = tree
        while isinstance(head, Tree) and head.data == "apply":
            head = head.children[0]
        if not (isinstance(head, Tree) and head.data == "name"):
            return False
        name = str(head.children[0])
        if name.endswith(".all") and name[:-4] in self.colour_members:
            return True
        if name.endswith(".mult") and name[:-5] in self.colour_shapes:
            return True
        if name in _LIST_FUNCTIONS and name not in self.functions:
            return True
        if name in self.multiset_functions and name in self.functions:
            return True  # a declared function whose value is written as a multiset
        dec = self.function_trees.get(name)
        return dec is not None and all(self._list_valued(c.children[-1], depth + 1)
                                       for c in dec.children)

    def _listed_colours(self, element: ET.Element, tree: Any, where: str,
                        variables: frozenset[str], colour: ColourSet
                        ) -> list[tuple[str, int | str]] | str:
        """The colours of a list-valued arc term: (Python literal, how many times), in the
        list's order, when it depends on no variable; else (it reads the binding or a
        reference cell, known when the transition fires) its Python expression, the
        inscription of a multiset arc (each element checked against the place's colour
        set when it fires)."""
        python, translator = self._python(element, tree, where, variables)
        names = {n.id for n in ast.walk(ast.parse(python, mode="eval"))
                 if isinstance(n, ast.Name)}
        if names & {py_name(v) for v in variables} or self._reads_cells(names):
            return python
        value = self._evaluate(ast.parse(python, mode="eval").body, translator, where)
        if not isinstance(value, tuple) or not all(colour.contains(v) for v in value):
            raise _Unsupported(f"{where}: a list whose elements are not of the place's "
                               f"colour set {colour.name}")
        counts: dict[str, int | str] = {}
        for item in value:
            literal = repr(item)
            counts[literal] = int(counts.get(literal, 0)) + 1
        return list(counts.items())

    def _reads_cells(self, names: set[str]) -> bool:
        """Whether an expression naming ``names`` reads a reference cell: ``!c`` itself or
        through the declared functions it calls."""
        seen: set[str] = set()
        pending = list(names)
        while pending:
            name = pending.pop()
            if name == "ml_deref":
                return True
            function = self.declarations.get(name)
            if name in seen or not isinstance(function, DeclaredFunction):
                continue
            seen.add(name)
            pending.extend(n.id for n in ast.walk(ast.parse(function.body, mode="eval"))
                           if isinstance(n, ast.Name))
        return False

    def _expand_terms(self, tree: Any, where: str, depth: int = 0) -> list[MultisetTerm]:
        """The terms of a multiset inscription, with calls of functions whose value is
        written as a multiset (``fun Chopsticks (ph i) = 1`cs(i) ++ 1`cs(i+1)``) replaced by
        their bodies, the arguments in place of the parameters."""
        terms = []
        for term in multiset_terms(tree) or []:
            body = self._multiset_call(term.value, where)
            if body is None:
                terms.append(term)
                continue
            if term.count is not None or term.stamp is not None or depth > 16:
                raise _Unsupported(f"{where}: a count, a timestamp or recursion on a call of a "
                                   "function whose value is a multiset")
            terms.extend(self._expand_terms(body, where, depth + 1))
        return terms

    def _multiset_call(self, tree: Any, where: str) -> Tree | None:
        if not (isinstance(tree, Tree) and tree.data == "apply" and isinstance(
                tree.children[0], Tree) and tree.children[0].data == "name"):
            return None
        dec = self.multiset_functions.get(str(tree.children[0].children[0]))
        if dec is None:
            return None
        if len(dec.children) != 1 and str(tree.children[0].children[0]) in self.functions:
            return None  # declared: its value is the list of its tokens (_list_valued)
        if len(dec.children) != 1:
            raise _Unsupported(f"{where}: a call of {tree.children[0].children[0]}, whose "
                               "multiset value is defined by several clauses")
        clause = dec.children[0]
        params = [p for p in clause.children[1:-2]
                  if not (isinstance(p, Tree) and p.data.startswith("ty_"))]
        substitution: dict[str, Any] = {}
        if len(params) != 1 or not _bind_argument(params[0], tree.children[1], substitution,
                                                  self.index_constructors):
            raise _Unsupported(f"{where}: a call of {tree.children[0].children[0]} whose "
                               "argument does not fit its parameter pattern")
        return _substitute(clause.children[-1], substitution)

    # -- validation -------------------------------------------------------------------------
    def _validate(self) -> None:
        """Compile the net; a transition that doesn't compile is left out and reported."""
        self._arc_ids()
        while True:
            try:
                compile_net(self.net)
                return
            except SyntaxError as exc:
                # code tcpn's compiler wrote for one transition does not parse: a fault of
                # tcpn, not of the file; that transition is left out, named, the rest kept
                match = re.fullmatch(r"<tcpn transition (.+)>", exc.filename or "")
                if match is None or match.group(1) not in self.net.transitions:
                    raise
                self._drop_transition(match.group(1), "tcpn's compiler could not translate "
                                      f"it (an internal fault, please report it): {exc.msg}")
                continue
            except InputError as exc:
                name = next((t for t in self.net.transitions
                             if re.search(rf"\btransition {re.escape(t)}\b", str(exc))
                             or re.search(rf"{re.escape(t)}->|->{re.escape(t)}\b", str(exc))),
                            None)
                if name is None:
                    raise self.fail(self.cpnet, f"the imported net does not compile: {exc}") \
                        from None
                reason = str(exc)
                unknown = re.search(r"unknown variable\(s\) ([\w, ]+) in", reason)
                declared = {py_name(n): n for n in self.variables}
                free = [v for v in (unknown.group(1).split(", ") if unknown else [])
                        if v in declared]
                if unknown and self._binders_first(name):
                    continue
                if free and self._bind_free(name, {v: declared[v] for v in free}):
                    continue
                if free:
                    reason = (f"free variable(s) {', '.join(free)}: CPN Tools binds them to "
                              "every value of their colour set, tcpn binds variables only "
                              f"from input arcs ({reason})")
                self._drop_transition(name, reason)

    def _binders_first(self, transition: str) -> bool:
        """Put the transition's input arcs that bind variables by a pattern before its other
        input arcs (CPN Tools binds in any order; tcpn's compiler takes the arcs in turn).
        False when they already are."""
        slots = [i for i, a in enumerate(self.net.arcs) if a.transition == transition]
        arcs = [self.net.arcs[i] for i in slots]

        def rank(arc: Arc) -> int:
            if arc.kind not in (ArcKind.INPUT, ArcKind.READ):
                return 2
            pattern = isinstance(arc.count, int) and arc.inscription is not None and \
                not arc.multiset and Inscription.parse(arc.inscription, arc.where).is_pattern
            return 0 if pattern else 1

        ordered = sorted(arcs, key=rank)
        if ordered == arcs:
            return False
        for slot, arc in zip(slots, ordered, strict=True):
            self.net.arcs[slot] = arc
        for key in [k for k in self.ids if k.startswith("arc:") and k[4:].isdigit()]:
            del self.ids[key]
        self._arc_ids()
        return True

    def _bind_free(self, transition: str, free: dict[str, str]) -> bool:
        """Bind variables no input arc binds to every member of their colour set, as CPN
        Tools does; False when a colour set is not small and finite (or a subset, whose
        members tcpn does not check)."""
        target = self.net.transitions[transition]
        colours = {v: self._binding_colour(self.variables[ml]) for v, ml in free.items()}
        if any(v in target.free_variables for v in free) or any(
                c is None or c.members() is None for c in colours.values()):
            return False
        target.free_variables.update({v: c for v, c in colours.items() if c is not None})
        element = self.by_id[self.ids[f"trans:{transition}"]]
        self.note("transition", element, _node_name(element), "free variable(s) "
                  f"{', '.join(free.values())} bound to every member of their colour set")
        return True

    def _binding_colour(self, name: str) -> ColourSet | None:
        """The values a free variable of colour set ``name`` is bound to: its members; for
        a subset of an enumeration, the listed members only (an enumeration of them);
        None for another subset (tcpn keeps no membership test to bind by)."""
        colour = self.colours.get(name)
        if colour is None or name not in self.subset_members:
            return colour
        members = self.subset_members[name]
        if isinstance(colour, EnumSet) and all(isinstance(m, str) for m in members):
            return EnumSet(tuple(members), name=name)
        return None

    def _arc_ids(self) -> None:
        """Key the file's arc ids by each arc's index in the net."""
        index_of: dict[int, int] = {}
        for i, a in enumerate(self.net.arcs):
            index_of.setdefault(id(a), i)
        for arc, arc_id in self.arc_ids:
            self.ids.setdefault(f"arc:{index_of[id(arc)]}", arc_id)

    def _trace_causes(self) -> None:
        """Tie each element left out for a name nothing declared to what would have
        declared it: a declaration left out under that name, else the ``use`` files (whose
        report then says which names they would have provided)."""
        declared: dict[str, ReportItem] = {}
        for item in self.report.unsupported:
            match = re.match(r"(?:val|fun|globref)\s+([A-Za-z][\w']*)", item.name)
            if item.kind == "declaration" and not any(item is u for u in self.uses):
                declared.setdefault(match.group(1) if match else item.name, item)
        provided: dict[str, list[ReportItem]] = {}
        for item in self.report.unsupported:
            if not item.missing or item.cause is not None:
                continue
            cause = declared.get(item.missing)
            if cause is None and self.uses:
                cause = self.uses[0]
                provided.setdefault(item.missing, []).append(item)
            if cause is not None and cause.root is not item:
                item.cause = cause
        files = " and ".join(u.name.removeprefix("use ") for u in self.uses)
        names = ", ".join(f"{n} (used by {len(items)} element(s): "
                          + ", ".join(repr(i.name) for i in items[:3])
                          + (", ..." if len(items) > 3 else "") + ")"
                          for n, items in sorted(provided.items())) or "none"
        for use in self.uses[:1]:  # the one that takes the elements needing them along
            use.reason += (f"; the names the model uses but declares nowhere, which {files} "
                           f"would have had to provide: {names}")
        for use in self.uses[1:]:
            use.reason += ("; the names the model uses but declares nowhere are listed "
                           f"under {self.uses[0].name}")

    def _drop_transition(self, name: str, reason: str) -> None:
        element = self.by_id[self.ids[f"trans:{name}"]]
        kept = [a for a in self.net.arcs if a.transition != name]
        self.skip("transition", element, _node_name(element), reason,
                  arcs=len(self.net.arcs) - len(kept))
        del self.net.transitions[name]
        del self.ids[f"trans:{name}"]
        self.net.arcs[:] = kept
        for key in [k for k in self.ids if k.startswith("arc:") and k[4:].isdigit()]:
            del self.ids[key]
        self.arc_ids = [(a, i) for a, i in self.arc_ids if a.transition != name]
        self._arc_ids()


def _self_applied(name: str, params: tuple[str, ...], body: ast.expr) -> ast.expr:
    """A recursive function's body as an expression over its parameters: the function
    is a lambda given itself as ``_self`` (``f(x - 1)`` in the body is
    ``_self(_self, x - 1)``), applied on the spot by ``ml_self_apply``."""

    class _Recurse(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.expr:
            self.generic_visit(node)
            if isinstance(node.func, ast.Name) and node.func.id == name:
                return ast.Call(ast.Name("_self", ast.Load()),
                                [ast.Name("_self", ast.Load()), *node.args], [])
            return node

    def arguments(names: tuple[str, ...]) -> ast.arguments:
        return ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names], vararg=None,
                             kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])

    function = ast.Lambda(arguments(("_self", *params)), _Recurse().visit(body))
    # ml_self_apply(f, args): f(f, args), with room on Python's stack for its recursion
    return ast.Call(ast.Name("ml_self_apply", ast.Load()), [function, *(
        ast.Name(p, ast.Load()) for p in params)], [])


#: Structures of CPN Tools' library that only draw or write (charts, files, the console).
_GUI_STRUCTURES = ("MSC.",)


def _call_name(tree: Any) -> str:
    head = tree.children[0] if isinstance(tree, Tree) and tree.data == "apply" else None
    return str(head.children[0]) if isinstance(head, Tree) and head.data == "name" else ""


def _is_gui_call(tree: Any) -> bool:
    return _call_name(tree).startswith(_GUI_STRUCTURES)


def _bind_argument(pattern: Any, argument: Any, substitution: dict[str, Any],
                   index_constructors: set[str]) -> bool:
    """Bind a parameter pattern's names to parts of the argument's tree (False when the
    argument can't be split that way)."""
    while isinstance(pattern, Tree) and pattern.data == "typed_pat":
        pattern = pattern.children[0]
    while isinstance(argument, Tree) and argument.data == "typed":
        argument = argument.children[0]
    kind = pattern.data if isinstance(pattern, Tree) else None
    if kind == "var_pat":
        substitution[str(pattern.children[0])] = argument
        return True
    if kind == "wild_pat":
        return True
    if kind == "unit_pat":  # f () = ...: called with ()
        return isinstance(argument, Tree) and argument.data == "unit"
    if kind == "con_pat" and str(pattern.children[0]) in index_constructors:
        return _bind_argument(pattern.children[1], argument, substitution, index_constructors)
    if kind == "tuple_pat" and isinstance(argument, Tree) and argument.data == "tuple" \
            and len(argument.children) == len(pattern.children):
        return all(_bind_argument(p, a, substitution, index_constructors)
                   for p, a in zip(pattern.children, argument.children, strict=True))
    return False


def _substitute(tree: Any, substitution: dict[str, Any]) -> Any:
    """``tree`` with each free ``name`` replaced (names bound inside are left alone: a
    pattern that rebinds one stops the replacement below it)."""
    if not isinstance(tree, Tree):
        return tree
    if tree.data == "name" and str(tree.children[0]) in substitution:
        return substitution[str(tree.children[0])]
    if tree.data == "rule":
        bound = {str(t) for t in _pattern_tokens(tree.children[0])}
        inner = {k: v for k, v in substitution.items() if k not in bound}
        return Tree("rule", [tree.children[0], _substitute(tree.children[1], inner)],
                    tree.meta)
    return Tree(tree.data, [_substitute(c, substitution) for c in tree.children], tree.meta)


def _branches(tree: Any) -> bool:
    """Whether ``tree`` is an if/case whose branches are multisets (``2`e``, ``empty``)."""
    if not (isinstance(tree, Tree) and tree.data in ("ifte", "case")):
        return False
    return any(_is_multiset_leaf(leaf) for leaf in _leaves(tree))


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, Tree) and tree.data == "ifte":
        return _leaves(tree.children[1]) + _leaves(tree.children[2])
    if isinstance(tree, Tree) and tree.data == "case":
        return [leaf for rule in tree.children[1].children for leaf in _leaves(rule.children[1])]
    return [tree]


def _is_multiset_leaf(tree: Any) -> bool:
    return _is_empty(tree) or (isinstance(tree, Tree) and tree.data == "binop"
                               and str(tree.children[1]) in ("`", "++", "+++"))


def _branch_values(tree: Any, where: str, constants: set[str]) -> Any:
    """The if/case with each branch's multiset replaced by its one value (an empty branch
    by any other branch's value: it gives no token)."""
    values = []
    for leaf in _leaves(tree):
        terms = multiset_terms(leaf)
        if terms is not None and len(terms) != 1:
            raise _Unsupported(f"{where}: a branch giving tokens of several values")
        values.append(terms[0].value if terms else None)
    known = [v for v in values if v is not None]
    if not known:
        raise _Unsupported(f"{where}: an arc inscription that is always empty")
    if all(v == known[0] for v in known) and not _binds_names(tree, constants):
        return known[0]
    filler = iter([v if v is not None else known[0] for v in values])

    return _with_leaves(tree, filler)


def _branch_stamps(tree: Any) -> Any:
    """The if/case with each branch's multiset replaced by its tokens' time stamp (``time
    ()``, now, for a branch without one); None when no branch stamps its tokens."""
    clock = _clock()
    stamps = []
    for leaf in _leaves(tree):
        terms = multiset_terms(leaf)
        stamps.append(terms[0].stamp if terms and terms[0].stamp is not None else None)
    if all(s is None for s in stamps):
        return None
    return _with_leaves(tree, iter([clock if s is None else s for s in stamps]))


def _without_stamps(tree: Any) -> Any:
    """The if/case with each branch's ``n`v@t`` read as ``n`v``."""
    leaves = []
    for leaf in _leaves(tree):
        terms = multiset_terms(leaf)
        if terms and len(terms) == 1 and terms[0].stamp is not None:
            count = terms[0].count if terms[0].count is not None else \
                Tree("int", [LarkToken("INT", "1")])
            leaf = Tree("binop", [count, LarkToken("BQ", "`"), terms[0].value])
        leaves.append(leaf)
    return _with_leaves(tree, iter(leaves))


def _with_leaves(tree: Any, leaves: Iterator[Any]) -> Any:
    """The if/case ``tree`` with its leaves (in :func:`_leaves`'s order) taken from
    ``leaves``."""
    if isinstance(tree, Tree) and tree.data == "ifte":
        return Tree("ifte", [tree.children[0], _with_leaves(tree.children[1], leaves),
                             _with_leaves(tree.children[2], leaves)], tree.meta)
    if isinstance(tree, Tree) and tree.data == "case":
        match = tree.children[1]
        rules = [Tree("rule", [r.children[0], _with_leaves(r.children[1], leaves)], r.meta)
                 for r in match.children]
        return Tree("case", [tree.children[0], Tree("match", rules, match.meta)], tree.meta)
    return next(leaves)


def _branch_slots(tree: Any) -> list[Any] | None:
    """An if/case whose branches are multisets of several terms (``if c then 1`a ++ 1`b
    else 1`c``) as a list of if/cases of one term each, the j-th giving each branch's j-th
    term (``empty`` past its last): their sum is the same multiset. None when every branch
    has at most one term (or a term has a time stamp)."""
    per_leaf = [multiset_terms(leaf) or [] for leaf in _leaves(tree)]
    if all(len(terms) <= 1 for terms in per_leaf) or any(
            t.stamp is not None for terms in per_leaf for t in terms):
        return None
    one = Tree("int", [LarkToken("INT", "1")])
    empty = Tree("name", [LarkToken("NAME", "empty")])
    slots = []
    for j in range(max(len(terms) for terms in per_leaf)):
        leaves = [Tree("binop", [terms[j].count or one, LarkToken("BQ", "`"), terms[j].value])
                  if j < len(terms) else empty for terms in per_leaf]
        slots.append(_with_leaves(tree, iter(leaves)))
    return slots


def _binds_names(tree: Any, constants: set[str]) -> bool:
    """Whether a case in ``tree`` binds names (then a branch's value may read them)."""
    return any(node.data == "var_pat" and str(node.children[0]) not in constants
               for node in tree.iter_subtrees()) if isinstance(tree, Tree) else False


def _is_multiset_body(dec: Tree, every: bool = True) -> bool:
    """Whether a function's value is written as a multiset (``1`x ++ 1`y``, ``empty``, or
    ``if``/``case`` branches that are): on an arc, its call stands for several tokens.
    With ``every`` each clause must be written so; without, one suffices (ML gives every
    clause one type, so the others are multisets too: ``walk 0 = Mes (0, p)``)."""

    def multiset(tree: Any) -> bool:
        if _is_empty(tree):
            return True
        if isinstance(tree, Tree) and tree.data == "binop":
            return str(tree.children[1]) in ("`", "++", "+++")
        if isinstance(tree, Tree) and tree.data == "ifte":
            return multiset(tree.children[1]) or multiset(tree.children[2])
        if isinstance(tree, Tree) and tree.data == "case":  # ML gives its rules one type
            return any(multiset(rule.children[1]) for rule in tree.children[1].children)
        return False

    clauses = (multiset(clause.children[-1]) for clause in dec.children)
    return all(clauses) if every else any(clauses)


def _local_multiset_call(let: Tree) -> bool:
    """Whether ``let ... fun f ... in f e end`` calls a function of its own whose value is
    written as a multiset (``fun walk 0 = 1`0 | walk p = 1`p ++ walk (p - 1)``; one clause
    so written is enough, see :func:`_is_multiset_body`)."""
    head = let.children[-1]
    while isinstance(head, Tree) and head.data == "apply":
        head = head.children[0]
    if not (isinstance(head, Tree) and head.data == "name"):
        return False
    return any(isinstance(dec, Tree) and dec.data == "fun_dec" and
               str(dec.children[0].children[0]) == str(head.children[0]) and
               _is_multiset_body(dec, every=False) for dec in let.children[:-1])


def _has_stamp(tree: Any) -> bool:
    """Whether ``tree`` holds CPN Tools' time stamp operator ``v@t``."""
    return isinstance(tree, Tree) and any(
        n.data == "binop" and str(n.children[1]) == "@" for n in tree.iter_subtrees())


def _clock() -> Tree:
    """``time ()``, CPN Tools' model time."""
    unit: Tree[Any] = Tree("unit", [])
    return Tree("apply", [Tree("name", [LarkToken("NAME", "time")]), unit])


def _delays_as_stamps(tree: Any) -> Any:
    """``tree`` with each ``ms @+ d`` whose multiset is written out (``n`v``, sums,
    ``empty``, if/case/let choosing among them) as the time stamps it gives its tokens,
    ``n`(v @ (time () + d))`` (CPN Tools' ``@+``: each token stamped now + d), the form a
    function read on an output arc holds; one whose multiset is not written so is left."""
    if not isinstance(tree, Tree):
        return tree
    children = [_delays_as_stamps(c) for c in tree.children]
    if tree.data == "binop" and str(children[1]) == "@+":
        stamp = Tree("binop", [_clock(), LarkToken("PLUS", "+"), children[2]])
        stamped = _stamped(children[0], stamp)
        if stamped is not None:
            return stamped
    return Tree(tree.data, children, tree.meta)


def _stamped(tree: Any, stamp: Tree) -> Any:
    """The multiset ``tree`` with each token stamped ``stamp``; None when it is not
    written out term by term."""
    if not isinstance(tree, Tree) or _is_empty(tree):
        return tree if _is_empty(tree) else None
    if tree.data == "binop" and str(tree.children[1]) in ("++", "+++"):
        parts = [_stamped(tree.children[0], stamp), _stamped(tree.children[2], stamp)]
        if parts[0] is None or parts[1] is None:
            return None
        return Tree("binop", [parts[0], tree.children[1], parts[1]], tree.meta)
    if tree.data == "binop" and str(tree.children[1]) == "`":
        count, op, value = tree.children
        if isinstance(value, Tree) and value.data == "binop" and str(value.children[1]) in (
                "@", "@+"):
            return None
        return Tree("binop", [count, op, Tree("binop", [value, LarkToken("AT", "@"), stamp])],
                    tree.meta)
    if tree.data == "ifte":
        branches = [_stamped(b, stamp) for b in tree.children[1:]]
        if any(b is None for b in branches):
            return None
        return Tree("ifte", [tree.children[0], *branches], tree.meta)
    return None


def _is_empty(tree: Any) -> bool:
    return isinstance(tree, Tree) and tree.data == "name" and str(tree.children[0]) == "empty"


def _conditional_terms(tree: Any) -> Any:
    """An arc inscription with CPN Tools' ``[b1, b2] % v`` terms (``1`v`` when every
    ``bi`` holds, else ``empty``; ms.sml, infix 7) written as ``if b1 andalso b2 then 1`v
    else empty``, the form the arcs read; anything else as it is."""
    if isinstance(tree, Tree) and tree.data == "binop" and str(tree.children[1]) in (
            "++", "+++"):
        left, op, right = tree.children
        new_left, new_right = _conditional_terms(left), _conditional_terms(right)
        return tree if (new_left, new_right) == (left, right) else Tree(
            "binop", [new_left, op, new_right], tree.meta)
    if not (isinstance(tree, Tree) and tree.data == "binop" and str(tree.children[1]) == "%"):
        return tree
    tests, _, value = tree.children
    conditions = tests.children if isinstance(tests, Tree) and tests.data == "list" else [tests]
    condition: Any = Tree("name", [LarkToken("NAME", "true")])
    for test in conditions:
        condition = test if condition.data == "name" and str(condition.children[0]) == "true" \
            else Tree("andalso", [condition, test])
    once = Tree("binop", [Tree("int", [LarkToken("INT", "1")]), LarkToken("BQ", "`"), value])
    return Tree("ifte", [condition, once, Tree("name", [LarkToken("NAME", "empty")])],
                tree.meta)


#: Basis functions whose value is a list (on an arc: a multiset of its elements).
_LIST_FUNCTIONS = frozenset({"List.map", "map", "List.filter", "filter", "List.tabulate",
                             "rev", "List.rev", "List.take", "List.drop", "list_to_ms",
                             "ext_col", "remdupl", "List.concat"})


def _strip_typed_val(dec: Tree) -> tuple[Any, Any, Any]:
    """A ``val`` declaration's (pattern, ``=``, body), the pattern's type dropped."""
    pattern, eq, body = dec.children
    while isinstance(pattern, Tree) and pattern.data == "typed_pat":
        pattern = pattern.children[0]
    return pattern, eq, body


def _shape(colour: ColourSet, index: str | None = None) -> tuple[Any, ...]:
    """A colour set's shape for ``CS.legal`` and ``CS.mkstr`` (ml_library.Shape)."""
    if isinstance(colour, IntSet):
        return ("index", index, colour.low, colour.high) if index else (
            "int", colour.low, colour.high)
    if isinstance(colour, EnumSet):
        return ("enum", colour.values)
    if isinstance(colour, ProductSet):
        return ("product", tuple(_shape(c) for c in colour.components))
    if isinstance(colour, RecordSet):
        return ("record", tuple((f, _shape(c)) for f, c in colour.fields))
    if isinstance(colour, ListSet):
        return ("list", _shape(colour.element), colour.max_length)
    if isinstance(colour, UnionSet):
        return ("union", tuple((n, None if c is None else _shape(c)) for n, c in colour.fields))
    kinds = ((RealSet, "real"), (StringSet, "string"), (BoolSet, "bool"), (UnitSet, "unit"))
    return (next((kind for cls, kind in kinds if isinstance(colour, cls)), "unit"),)


def _declared_names(dec: Tree) -> list[str]:
    """The value names a declaration declares (``val``'s, ``fun``'s, ``globref``'s, the
    constructors of a ``datatype``), those of a nested ``local``'s second part too."""
    if dec.data == "fun_dec":
        return [str(dec.children[0].children[0])]
    if dec.data == "val_dec":
        return [str(t) for t in _pattern_tokens(dec.children[0])]
    if dec.data == "globref_dec":
        return [str(dec.children[0])]
    if dec.data == "datatype_dec":
        return [str(c.children[0]) for b in dec.children if isinstance(b, Tree)
                and b.data == "datbind" for c in b.children
                if isinstance(c, Tree) and c.data == "conbind"]
    if dec.data == "local_dec":
        return [n for d in dec.children[1].children for n in _declared_names(d)]
    return []


def _pattern_tokens(pat: Any) -> list[Any]:
    """The names a pattern binds (its ``var_pat`` and ``as`` names), as tokens."""
    if not isinstance(pat, Tree):
        return []
    if pat.data == "var_pat" or (pat.data == "field_pat" and len(pat.children) == 1):
        return [pat.children[0]]
    found: list[Any] = [pat.children[0]] if pat.data == "as_pat" else []
    return found + [t for c in pat.children for t in _pattern_tokens(c)]


def _renamed(tree: Any, names: Mapping[str, str]) -> Any:
    """``tree`` with every name in ``names`` spelled as it maps it, except record labels
    (``{x = e}``, ``#x``); a label pattern ``{x}`` binding a renamed ``x`` becomes
    ``{x = x'}``."""
    if isinstance(tree, LarkToken):
        return tree.update(value=names[str(tree)]) if tree.type == "NAME" and \
            str(tree) in names else tree
    if not isinstance(tree, Tree):
        return tree
    if tree.data in ("field", "field_pat"):
        label, *rest = tree.children
        if tree.data == "field_pat" and not rest and str(label) in names:
            rest = [LarkToken("EQ", "="), Tree("var_pat", [_renamed(label, names)])]
        return Tree(tree.data, [label, *(_renamed(c, names) for c in rest)], tree.meta)
    return Tree(tree.data, [_renamed(c, names) for c in tree.children], tree.meta)


#: Expressions that are written as one value, never as a list (a tuple, a record, (), a
#: literal): Python holds tuples, records and () as tuples, as it holds lists.
_NOT_LISTS = frozenset({"unit", "tuple", "record", "int", "real", "string", "char"})


#: Basis functions whose last argument is a list (``foldl f b l``, ``length l``).
_LIST_LAST = frozenset({
    "foldl", "foldr", "List.foldl", "List.foldr", "map", "List.map", "List.filter",
    "List.exists", "List.all", "List.find", "List.partition", "List.mapPartial", "app",
    "List.app", "length", "List.length", "hd", "tl", "rev", "List.rev", "null",
    "List.null", "List.last", "List.concat", "List.hd", "List.tl"})


def _list_arguments(dec: Tree, is_list_type: Any = lambda ty: False,
                    known: Mapping[str, tuple[tuple[int, ...], tuple[int, ...]]] | None = None
                    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Which arguments of a ``fun`` are lists, as SML's types say: (the positions of its
    curried arguments, the positions of the components of its first argument when that
    is a tuple). A parameter is a list when its pattern is one (``[]``, ``x::xs``,
    ``[a, b]``), when it is annotated with a list type (``l:IL`` of a ``list`` colour set,
    ``int list``: ``is_list_type`` decides), or when the body uses it as one: the list of
    a basis function (``foldl f 0 l``, ``length l``), an operand of ``::`` (right) or
    ``^^``, or an argument of a declared function (``known``, the same pairs for the
    functions declared before) where that function takes a list. tcpn's Python writes a
    list and a tuple alike, SML does not: the export writes a value passed there as a
    list."""
    known = known or {}
    groups: set[int] = set()
    components: set[int] = set()
    for clause in dec.children:
        args = [p for p in clause.children[1:-1]
                if isinstance(p, Tree) and not p.data.startswith("ty_")]
        listed = _listed_names(clause.children[-1], known)
        for i, pattern in enumerate(args):
            if _is_list_pattern(pattern, listed, is_list_type):
                groups.add(i)
            bare = pattern
            while bare.data == "typed_pat":
                bare = bare.children[0]
            if i == 0 and bare.data == "tuple_pat":
                components.update(j for j, part in enumerate(bare.children)
                                  if _is_list_pattern(part, listed, is_list_type))
    return tuple(sorted(groups)), tuple(sorted(components))


def _is_list_pattern(pattern: Tree, listed: set[str], is_list_type: Any) -> bool:
    """Whether an argument pattern is a list: its shape, its annotation, or a name the
    body uses as a list."""
    while pattern.data == "typed_pat":
        inner, ty = pattern.children
        if isinstance(ty, Tree) and (
                (ty.data == "ty_name" and is_list_type(str(ty.children[0])))
                or (ty.data == "ty_app" and str(ty.children[-1]) == "list")):
            return True
        pattern = inner
    return pattern.data in ("nil_pat", "list_pat", "cons_pat") or (
        pattern.data == "var_pat" and str(pattern.children[0]) in listed)


def _listed_names(body: Any, known: Mapping[str, tuple[tuple[int, ...], tuple[int, ...]]]
                  ) -> set[str]:
    """The names a body uses as lists (see :func:`_list_arguments`)."""
    listed: set[str] = set()

    def name_of(node: Any) -> str | None:
        return str(node.children[0]) if isinstance(node, Tree) and node.data == "name" \
            else None

    for node in body.iter_subtrees() if isinstance(body, Tree) else ():
        if node.data == "binop" and len(node.children) == 3:
            left, op, right = node.children
            if str(op) == "::" or str(op) == "^^":
                listed.update(n for n in (name_of(right),) if n is not None)
            if str(op) == "^^":
                listed.update(n for n in (name_of(left),) if n is not None)
            continue
        if node.data != "apply":
            continue
        head: Any = node
        args: list[Any] = []
        while isinstance(head, Tree) and head.data == "apply":
            args.insert(0, head.children[-1])
            head = head.children[0]
        callee = name_of(head)
        if callee is None:
            continue
        if callee in _LIST_LAST and name_of(node.children[-1]) is not None:
            listed.add(str(name_of(node.children[-1])))
        positions, parts = known.get(callee, ((), ()))
        for i, arg in enumerate(args):
            if i in positions and name_of(arg) is not None:
                listed.add(str(name_of(arg)))
            if i == 0 and parts and isinstance(arg, Tree) and arg.data == "tuple":
                listed.update(str(name_of(c)) for j, c in enumerate(arg.children)
                              if j in parts and name_of(c) is not None)
    return listed


def _dec_name(dec: Tree) -> str:
    """The name a declaration declares (its first name; ``_`` for ``val _ = e``)."""
    for token in dec.scan_values(lambda v: True):
        return "_" if str(token) == "=" else str(token)
    return "?"


def _parameters(apat: Any) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """Parameter names (and colour set names when annotated) of one argument pattern."""

    def one(node: Any) -> tuple[str, str | None]:
        if isinstance(node, Tree) and node.data == "var_pat":
            return str(node.children[0]), None
        if isinstance(node, Tree) and node.data == "typed_pat":
            inner, ty = node.children
            name, _ = one(inner)
            colour = str(ty.children[0]) if isinstance(ty, Tree) and ty.data == "ty_name" \
                else None
            return name, colour
        raise _Unsupported("function parameters other than names, (names) or (name:TYPE)")

    if isinstance(apat, Tree) and apat.data == "unit_pat":
        return (), ()
    if isinstance(apat, Tree) and apat.data == "tuple_pat":
        pairs = [one(c) for c in apat.children]
    else:
        pairs = [one(apat)]
    return tuple(p for p, _ in pairs), tuple(c for _, c in pairs)


def _distribution(python: str, scope: dict[str, Any]) -> Distribution | None:
    """Recognise CPN Tools' random delays with constant parameters as tcpn distributions."""
    tree = ast.parse(python, mode="eval").body
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "max" \
            and len(tree.args) == 2 and isinstance(tree.args[0], ast.Constant) \
            and tree.args[0].value == 0.0:
        inner = tree.args[1]
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and \
                inner.func.id == "normal":
            args = _constants(inner.args, scope)
            if args is not None and len(args) == 2 and args[1] >= 0:
                return TruncatedNormal(float(args[0]), math.sqrt(float(args[1])))
        return None
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)):
        return None
    args = _constants(tree.args, scope)
    if args is None:
        return None
    try:
        if tree.func.id == "exponential" and len(args) == 1 and args[0] > 0:
            return Exponential(mean=1.0 / float(args[0]))
        if tree.func.id == "uniform" and len(args) == 2:
            return Uniform(float(args[0]), float(args[1]))
        if tree.func.id == "discrete" and len(args) == 2 and all(isinstance(a, int)
                                                                  for a in args):
            return Discrete(list(range(int(args[0]), int(args[1]) + 1)))
    except InputError:
        return None
    return None


def _constants(nodes: list[ast.expr], scope: dict[str, Any]) -> list[Any] | None:
    values = []
    for node in nodes:
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if any(not isinstance(scope.get(n), int | float) for n in names):
            return None
        try:
            with evaluation_budget("constant delay"):
                values.append(eval(compile(ast.Expression(node), "<delay>", "eval"),
                                   restricted_namespace(scope)))
        except EvaluationBudgetError:
            raise
        except Exception:  # not a constant after all
            return None
    return values


# -- list patterns on input arcs ---------------------------------------------------------------
def _rewrite_list_patterns(guard: str | None, arcs: list[tuple[Arc, str]],
                           action: Any = None
                           ) -> tuple[str | None, list[tuple[Arc, str]], Any]:
    """Turn input and read arc patterns with list heads (CPN ML ``h::t``, Python
    ``(h,) + t``, at any depth: ``((oid, its),) + ords``) into a variable and a guard.

    tcpn binds variables by matching tuples, not list heads; the token is bound to a new
    variable (``h_t``), the guard requires its shape (``len(h_t) >= 1``), and ``h``/``t``
    read ``h_t[0]`` and ``h_t[1:]`` wherever else the transition uses them: its other
    arcs, its guard and its code action (whose inputs become the new variables).
    """
    substitutions: dict[str, ast.expr] = {}
    conditions: list[str] = []
    rewritten: list[tuple[Arc, str]] = []
    rewritten_vars: set[str] = set()
    # names a plain pattern of another input arc binds: a list pattern compares with them
    bound_elsewhere = set().union(*(
        Inscription.parse(a.inscription, a.where).pattern_variables for a, _ in arcs
        if a.kind in (ArcKind.INPUT, ArcKind.READ) and a.inscription is not None
        and isinstance(a.count, int) and not a.multiset))
    for arc, arc_id in arcs:
        if arc.kind in (ArcKind.INPUT, ArcKind.READ) and arc.inscription is not None \
                and not arc.multiset:
            tree = ast.parse(arc.inscription, mode="eval").body
            if _has_cons(tree) and _is_cons_pattern(tree):
                names = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
                variable = "_".join(names) or "token"
                while variable in substitutions or variable in rewritten_vars:
                    variable += "_"
                rewritten_vars.add(variable)
                tests: list[str] = []
                _cons_match(tree, variable, tests, substitutions, bound_elsewhere)
                conditions.extend(tests)
                arc = Arc(arc.kind, arc.place, arc.transition, variable, arc.count)
        rewritten.append((arc, arc_id))
    if not substitutions:
        return guard, arcs, action

    def substitute(text: Any) -> Any:
        if not isinstance(text, str):
            return text
        tree = ast.parse(text, mode="eval")
        tree = _Substitute(substitutions).visit(tree)
        return ast.unparse(tree)

    out = []
    for arc, arc_id in rewritten:
        if arc.kind not in (ArcKind.INPUT, ArcKind.READ) or \
                arc.inscription not in rewritten_vars:
            arc = Arc(arc.kind, arc.place, arc.transition, substitute(arc.inscription),
                      substitute(arc.count), substitute(arc.when), substitute(arc.delay),
                      arc.multiset)
        out.append((arc, arc_id))
    new_guard = " and ".join(conditions + ([f"({substitute(guard)})"] if guard else []))
    if isinstance(action, CodeAction) and set(action.inputs) & set(substitutions):
        inputs = [n for n in action.inputs if n not in substitutions]
        for name in action.inputs:
            if name in substitutions:
                inputs.extend(sorted({n.id for n in ast.walk(substitutions[name])
                                      if isinstance(n, ast.Name)} - set(inputs)))
        action = CodeAction(tuple(inputs), action.outputs, substitute(action.body),
                            action.scope)
    return new_guard, out, action


def _is_cons(tree: ast.expr) -> bool:
    return isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Add) and \
        isinstance(tree.left, ast.Tuple) and len(tree.left.elts) == 1


def _has_cons(tree: ast.expr) -> bool:
    return any(_is_cons(node) for node in ast.walk(tree) if isinstance(node, ast.expr))


def _is_cons_pattern(tree: ast.expr) -> bool:
    """Names, constants, tuples and ``(head,) + tail`` of those."""
    if isinstance(tree, ast.Name | ast.Constant):
        return True
    if isinstance(tree, ast.Tuple):
        return all(_is_cons_pattern(e) for e in tree.elts)
    if _is_cons(tree):
        assert isinstance(tree, ast.BinOp) and isinstance(tree.left, ast.Tuple)
        return _is_cons_pattern(tree.left.elts[0]) and _is_cons_pattern(tree.right)
    return False


def _cons_match(tree: ast.expr, subject: str, tests: list[str],
                substitutions: dict[str, ast.expr], bound: set[str]) -> None:
    """The tests for ``tree`` to match the value ``subject`` and what its names read
    (a name in ``bound``, or met before, is compared instead)."""
    if isinstance(tree, ast.Name) and (tree.id in bound or tree.id in substitutions):
        tests.append(f"{subject} == {ast.unparse(substitutions.get(tree.id, tree))}")
    elif isinstance(tree, ast.Name):
        substitutions[tree.id] = ast.parse(subject, mode="eval").body
    elif isinstance(tree, ast.Constant):
        tests.append(f"{subject} == {tree.value!r}")
    elif isinstance(tree, ast.Tuple):
        tests.append(f"len({subject}) == {len(tree.elts)}")
        for i, element in enumerate(tree.elts):
            _cons_match(element, f"{subject}[{i}]", tests, substitutions, bound)
    else:
        assert isinstance(tree, ast.BinOp) and isinstance(tree.left, ast.Tuple)
        tests.append(f"len({subject}) >= 1")
        _cons_match(tree.left.elts[0], f"{subject}[0]", tests, substitutions, bound)
        _cons_match(tree.right, f"{subject}[1:]", tests, substitutions, bound)


def _literal(value: Any) -> bool:
    """Whether ``value`` prints as a Python literal that reads back equal."""
    if isinstance(value, bool | int | float | str) or value is None:
        return not isinstance(value, float) or math.isfinite(value)
    if type(value) is tuple:
        return all(_literal(v) for v in value)
    return False


class _FoldConstants(ast.NodeTransformer):
    """Replace a comprehension or a lambda call that reads constants only by its value
    (``tuple(_e[0] for _e in vCookBook)`` -> ``('Burger', ...)``): the value, not the
    computation, is what CPN ML export can write back."""

    def __init__(self, scope: dict[str, Any]):
        self.scope = scope

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.expr) and any(
                isinstance(n, ast.GeneratorExp | ast.Lambda) for n in ast.walk(node)):
            text = ast.unparse(node)
            names = Inscription.parse(text, "constant").names
            if names <= set(self.scope) | {"tuple", "any", "all", "len", "sum", "dict",
                                            "ValueError"}:
                try:
                    with evaluation_budget(f"constant {text[:60]!r}"):
                        value = eval(compile(ast.Expression(ast.fix_missing_locations(node)),
                                             "<constant>", "eval"),
                                     restricted_namespace(self.scope))
                except EvaluationBudgetError:
                    raise
                except Exception:  # evaluated at firing instead, where it fails the same
                    value = None
                else:
                    if _literal(value):
                        return ast.Constant(value)
        return self.generic_visit(node)


class _Substitute(ast.NodeTransformer):
    def __init__(self, substitutions: dict[str, ast.expr]):
        self.substitutions = substitutions

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.substitutions.get(node.id, node)



def _record_pattern(value: str, colour: ColourSet) -> str:
    """An input or read arc's record written field by field, ``{f1=p1, ..., fn=pn}`` with
    each ``pi`` a pattern (a variable, a constant, a tuple or record of them), as the tuple
    pattern ``(p1, ..., pn)`` in the colour set's field order: a record value is the tuple
    of its fields, and the pattern then binds its variables by matching tokens, as CPN
    Tools binds a record pattern's (``{id=i, state=ok}`` binds ``i``; a variable bound by
    another arc must match). Anything else is ``value`` unchanged (an expression)."""
    if not isinstance(colour, RecordSet):
        return value
    try:
        tree = ast.parse(value, mode="eval").body
    except SyntaxError:
        return value
    pattern = _record_tree_pattern(tree, colour)
    return value if pattern is None else ast.unparse(pattern)


def _record_tree_pattern(tree: ast.expr, colour: ColourSet) -> ast.expr | None:
    if isinstance(tree, ast.Name):
        return tree  # a variable takes a field whole, whatever its colour set (a record too)
    if not isinstance(colour, RecordSet):
        return tree if is_pattern_tree(tree) else None
    names = [name for name, _ in colour.fields]
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and not tree.args
            and sorted(k.arg or "" for k in tree.keywords) == sorted(names)):
        return None
    given = {k.arg: k.value for k in tree.keywords}
    parts = [_record_tree_pattern(given[name], field) for name, field in colour.fields]
    if any(p is None for p in parts):
        return None
    return ast.Tuple([p for p in parts if p is not None], ast.Load())
