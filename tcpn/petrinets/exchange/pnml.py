"""PNML (ISO/IEC 15909-2) export and import: place/transition nets and symmetric nets.

A net whose places are all ``UNIT`` (black tokens) is written as a P/T net
(``.../grammar/ptnet``); a net whose colour sets are finite (``UNIT``, ``BOOL``,
enumerations, bounded ints and products of those) and whose inscriptions are variables,
constants, tuples, comparisons and boolean logic is written as a symmetric net
(``.../grammar/symmetricnet``) with the standard term structure. PNML has no time: tcpn's
timestamps, delays, priorities and read arcs go in ``<toolspecific tool="tcpn">``
elements, which other tools ignore. Anything else (arithmetic in inscriptions, unbounded
colour sets, code actions, inhibitor and reset arcs) is refused with an
:class:`~tcpn.errors.InputError` naming the element: export such nets to CPN Tools instead.

>>> from tcpn.petrinets import UNIT, PetriNet, Place, Transition
>>> net = PetriNet("flip")
>>> net.add_place(Place("a", UNIT, initial=[(), ()]))
>>> net.add_place(Place("b", UNIT))
>>> net.add_transition(Transition("t", delay=2))
>>> net.add_input("a", "t", "()", count=2)
>>> net.add_output("b", "t", "()")
>>> text = to_pnml(net)
>>> "ptnet" in text and '<toolspecific tool="tcpn"' in text
True
>>> again = read_pnml(text).net
>>> again.places["a"].initial_tokens, again.transitions["t"].delay, again.arcs[0].count
((Token(value=(), time=0.0), Token(value=(), time=0.0)), 2, 2)
"""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tcpn import __version__
from tcpn.errors import InputError
from tcpn.limits import limit_problem
from tcpn.petrinets.colours import (
    BOOL,
    BoolSet,
    ColourSet,
    EnumSet,
    IntSet,
    ProductSet,
    UnitSet,
)
from tcpn.petrinets.distributions import (
    Discrete,
    Distribution,
    Empirical,
    Exponential,
    TruncatedNormal,
    Uniform,
)
from tcpn.petrinets.exchange.cpn_import import (
    CpnFormatError,
    ImportedNet,
    ImportReport,
    _load,
    parse_xml,
)
from tcpn.petrinets.inscriptions import Inscription
from tcpn.petrinets.net import P_NORMAL, Arc, ArcKind, PetriNet, Place, Token, Transition

__all__ = ["PTNET", "SYMMETRICNET", "read_pnml", "to_pnml", "write_pnml"]

PNML_NS = "http://www.pnml.org/version-2009/grammar/pnml"
PTNET = "http://www.pnml.org/version-2009/grammar/ptnet"
SYMMETRICNET = "http://www.pnml.org/version-2009/grammar/symmetricnet"
_TOOL = "tcpn"
_DISTRIBUTIONS = {"Exponential": Exponential, "Uniform": Uniform, "Discrete": Discrete,
                  "TruncatedNormal": TruncatedNormal, "Empirical": Empirical}
_COMPARISONS = {ast.Eq: "equality", ast.NotEq: "inequality", ast.Lt: "lessthan",
                ast.LtE: "lessthanorequal", ast.Gt: "greaterthan", ast.GtE: "greaterthanorequal"}


def write_pnml(net: PetriNet, path: str | Path, net_type: str = "auto") -> Path:
    """Write ``net`` to ``path`` as PNML; see :func:`to_pnml`."""
    target = Path(path)
    target.write_text(to_pnml(net, net_type), encoding="utf-8")
    return target


def to_pnml(net: PetriNet, net_type: str = "auto") -> str:
    """The PNML of ``net``: ``net_type`` is ``"pt"``, ``"symmetric"`` or ``"auto"``."""
    if net_type not in ("auto", "pt", "symmetric"):
        raise InputError(f"net_type must be 'auto', 'pt' or 'symmetric', got {net_type!r}")
    uncoloured = all(isinstance(p.colour, UnitSet) for p in net.places.values())
    if net_type == "pt" and not uncoloured:
        coloured = next(p for p in net.places.values() if not isinstance(p.colour, UnitSet))
        raise InputError(f"place {coloured.name}: colour set {coloured.colour.describe()} in "
                         "a P/T net (use net_type='symmetric')")
    symmetric = net_type == "symmetric" or (net_type == "auto" and not uncoloured)
    return _Writer(net, symmetric).run()


def _check_ncname(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", name) else \
        "n_" + re.sub(r"[^A-Za-z0-9_.\-]", "_", name)


class _Writer:
    def __init__(self, net: PetriNet, symmetric: bool):
        self.net = net
        self.symmetric = symmetric
        self.sorts: dict[ColourSet, str] = {}  # untimed colour set -> namedsort id
        self.constants: dict[str, str] = {}  # enum value -> feconstant id
        self.variables: dict[tuple[str, str], str] = {}  # (transition, var) -> variabledecl id
        self.variable_sorts: dict[str, ColourSet] = {}
        self.decls: ET.Element | None = None

    def run(self) -> str:
        root = ET.Element("pnml", xmlns=PNML_NS)
        net_element = ET.SubElement(root, "net", id=_check_ncname(self.net.name),
                                    type=SYMMETRICNET if self.symmetric else PTNET)
        _name(net_element, self.net.name)
        if self.symmetric:
            declaration = ET.SubElement(net_element, "declaration")
            self.decls = ET.SubElement(ET.SubElement(declaration, "structure"), "declarations")
        page = ET.SubElement(net_element, "page", id="page0")
        ids: dict[str, str] = {}
        for place in self.net.places.values():
            ids[place.name] = _check_ncname(place.name)
            page.append(self._place(place, ids[place.name]))
        for transition in self.net.transitions.values():
            ids[transition.name] = _check_ncname(transition.name)
            page.append(self._transition(transition, ids[transition.name]))
        for index, arc in enumerate(self.net.arcs):
            page.append(self._arc(arc, f"arc{index}", ids))
        ET.indent(root, "  ")
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"

    # -- sorts ------------------------------------------------------------------------------
    def _sort(self, colour: ColourSet, where: str) -> ET.Element:
        """A ``usersort`` referring to the named sort of ``colour`` (declared on first use)."""
        untimed = colour.named(colour.name)
        untimed = untimed._copy_with(is_timed=False) if untimed.is_timed else untimed
        if untimed not in self.sorts:
            assert self.decls is not None
            body = self._sort_body(untimed, where)  # declares the components first
            sort_id = _check_ncname(f"sort_{colour.name or 'S'}_{len(self.sorts)}")
            named = ET.SubElement(self.decls, "namedsort", id=sort_id,
                                  name=untimed.name or sort_id)
            named.append(body)
            self.sorts[untimed] = sort_id
        return ET.Element("usersort", declaration=self.sorts[untimed])

    def _sort_body(self, colour: ColourSet, where: str) -> ET.Element:
        if isinstance(colour, UnitSet):
            return ET.Element("dot")
        if isinstance(colour, BoolSet):
            return ET.Element("bool")
        if isinstance(colour, IntSet) and colour.low is not None and colour.high is not None:
            return ET.Element("finiteintrange", start=str(colour.low), end=str(colour.high))
        if isinstance(colour, EnumSet):
            body = ET.Element("finiteenumeration")
            for value in colour.values:
                if value in self.constants:
                    raise InputError(f"{where}: enumeration value {value!r} appears in two "
                                     "colour sets")
                self.constants[value] = _check_ncname(f"c_{value}")
                ET.SubElement(body, "feconstant", id=self.constants[value], name=value)
            return body
        if isinstance(colour, ProductSet):
            body = ET.Element("productsort")
            body.extend(self._sort(c, where) for c in colour.components)
            return body
        raise InputError(f"{where}: colour set {colour.describe()} is not a finite sort of "
                         "PNML symmetric nets (dot, bool, enumerations, bounded ints, products)"
                         "; export to CPN Tools instead")

    # -- terms ------------------------------------------------------------------------------
    def _term(self, node: ast.expr, colour: ColourSet | None, scope: dict[str, ColourSet],
              transition: str, where: str) -> ET.Element:
        if isinstance(node, ast.Name) and node.id in scope:
            return ET.Element("variable", refvariable=self._variable(transition, node.id,
                                                                     scope[node.id], where))
        if isinstance(node, ast.Tuple) and not node.elts:
            return ET.Element("dotconstant")
        if isinstance(node, ast.Tuple) and isinstance(colour, ProductSet) and len(
                colour.components) == len(node.elts):
            element = ET.Element("tuple")
            for sub, sub_colour in zip(node.elts, colour.components, strict=True):
                ET.SubElement(element, "subterm").append(
                    self._term(sub, sub_colour, scope, transition, where))
            return element
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return ET.Element("booleanconstant", value=str(node.value).lower())
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value in self.constants:
            return ET.Element("useroperator", declaration=self.constants[node.value])
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and isinstance(
                colour, IntSet) and colour.low is not None and colour.high is not None:
            element = ET.Element("finiteintrangeconstant", value=str(node.value))
            ET.SubElement(element, "finiteintrange", start=str(colour.low), end=str(colour.high))
            return element
        if isinstance(node, ast.BoolOp):
            element = ET.Element("and" if isinstance(node.op, ast.And) else "or")
            for value in node.values:
                ET.SubElement(element, "subterm").append(
                    self._term(value, BOOL, scope, transition, where))
            return element
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            element = ET.Element("not")
            ET.SubElement(element, "subterm").append(
                self._term(node.operand, BOOL, scope, transition, where))
            return element
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(
                node.ops[0]) in _COMPARISONS:
            left, right = node.left, node.comparators[0]
            side = self._colour_of(left, scope) or self._colour_of(right, scope)
            element = ET.Element(_COMPARISONS[type(node.ops[0])])
            for operand in (left, right):
                ET.SubElement(element, "subterm").append(
                    self._term(operand, side, scope, transition, where))
            return element
        raise InputError(f"{where}: PNML symmetric nets have no term for "
                         f"{ast.unparse(node)!r} (variables, constants, tuples, comparisons "
                         "and boolean logic only); export to CPN Tools instead")

    @staticmethod
    def _colour_of(node: ast.expr, scope: dict[str, ColourSet]) -> ColourSet | None:
        return scope.get(node.id) if isinstance(node, ast.Name) else None

    def _variable(self, transition: str, name: str, colour: ColourSet, where: str) -> str:
        key = (transition, name)
        if key not in self.variables:
            assert self.decls is not None
            var_id = _check_ncname(f"v_{transition}_{name}")
            element = ET.SubElement(self.decls, "variabledecl", id=var_id, name=name)
            element.append(self._sort(colour, where))
            self.variables[key] = var_id
        return self.variables[key]

    def _scope(self, transition: Transition) -> dict[str, ColourSet]:
        scope: dict[str, ColourSet] = {}
        for arc in self.net.arcs_of(transition.name):
            if arc.kind in (ArcKind.INPUT, ArcKind.READ) and arc.inscription is not None:
                tree = ast.parse(arc.inscription, mode="eval").body
                _bind(tree, self.net.places[arc.place].colour, scope)
        return scope

    def _multiset(self, count: int, term: ET.Element) -> ET.Element:
        numberof = ET.Element("numberof")
        constant = ET.SubElement(ET.SubElement(numberof, "subterm"), "numberconstant",
                                 value=str(count))
        ET.SubElement(constant, "positive")
        ET.SubElement(numberof, "subterm").append(term)
        return numberof

    # -- nodes ------------------------------------------------------------------------------
    def _place(self, place: Place, element_id: str) -> ET.Element:
        element = ET.Element("place", id=element_id)
        _name(element, place.name)
        groups: list[list[Any]] = []
        for token in place.initial_tokens:
            if groups and groups[-1][0] == token.value and groups[-1][1] == token.time:
                groups[-1][2] += 1
            else:
                groups.append([token.value, token.time, 1])
        where = f"place {place.name}"
        if self.symmetric:
            label = ET.SubElement(element, "type")
            ET.SubElement(label, "text").text = place.colour.name
            ET.SubElement(label, "structure").append(self._sort(place.colour, where))
            if groups:
                marking = ET.SubElement(element, "hlinitialMarking")
                ET.SubElement(marking, "text").text = " ++ ".join(
                    f"{n}'{v!r}" for v, _, n in groups)
                add = ET.SubElement(ET.SubElement(marking, "structure"), "add")
                for value, _, count in groups:
                    term = self._term(ast.parse(repr(value), mode="eval").body, place.colour,
                                      {}, "", where)
                    ET.SubElement(add, "subterm").append(self._multiset(count, term))
        elif groups:
            ET.SubElement(ET.SubElement(element, "initialMarking"), "text").text = str(
                len(place.initial_tokens))
        if place.colour.is_timed:
            tool = _toolspecific(element)
            ET.SubElement(tool, "timed")
            if any(t.time for t in place.initial_tokens):
                ET.SubElement(tool, "timestamps").text = " ".join(
                    repr(float(time)) for _, time, _ in groups)
        return element

    def _transition(self, transition: Transition, element_id: str) -> ET.Element:
        element = ET.Element("transition", id=element_id)
        _name(element, transition.name)
        where = f"transition {transition.name}"
        if transition.action is not None:
            raise InputError(f"{where}: a code action has no PNML form; export to CPN Tools")
        if transition.guard is not None:
            if not self.symmetric:
                raise InputError(f"guard of {where}: a P/T net has no guards")
            condition = ET.SubElement(element, "condition")
            ET.SubElement(condition, "text").text = transition.guard
            ET.SubElement(condition, "structure").append(self._term(
                ast.parse(transition.guard, mode="eval").body, BOOL, self._scope(transition),
                transition.name, f"guard of {where}"))
        if transition.delay is not None or transition.priority != P_NORMAL:
            tool = _toolspecific(element)
            if transition.delay is not None:
                tool.append(_delay_element(transition.delay))
            if transition.priority != P_NORMAL:
                ET.SubElement(tool, "priority").text = str(transition.priority)
        return element

    def _arc(self, arc: Arc, element_id: str, ids: Mapping[str, str]) -> ET.Element:
        where = arc.where
        if arc.kind in (ArcKind.INHIBITOR, ArcKind.RESET):
            raise InputError(f"{where}: PNML P/T and symmetric nets have no {arc.kind.value} "
                             "arcs; export to CPN Tools")
        if arc.when is not None or isinstance(arc.count, str):
            raise InputError(f"{where}: a condition or a computed count has no PNML form")
        place, transition = ids[arc.place], ids[arc.transition]
        source, target = (transition, place) if arc.kind is ArcKind.OUTPUT else (place,
                                                                                  transition)
        element = ET.Element("arc", id=element_id, source=source, target=target)
        assert arc.inscription is not None
        if self.symmetric:
            label = ET.SubElement(element, "hlinscription")
            ET.SubElement(label, "text").text = f"{arc.count}'{arc.inscription}"
            colour = self.net.places[arc.place].colour
            term = self._term(ast.parse(arc.inscription, mode="eval").body, colour,
                              self._scope(self.net.transitions[arc.transition]),
                              arc.transition, where)
            ET.SubElement(label, "structure").append(self._multiset(arc.count, term))
        elif arc.count != 1:
            ET.SubElement(ET.SubElement(element, "inscription"), "text").text = str(arc.count)
        if arc.kind is ArcKind.READ or arc.delay is not None:
            tool = _toolspecific(element)
            if arc.kind is ArcKind.READ:
                ET.SubElement(tool, "read")
            if arc.delay is not None:
                tool.append(_delay_element(arc.delay))
        return element


def _bind(tree: ast.expr, colour: ColourSet, scope: dict[str, ColourSet]) -> None:
    if isinstance(tree, ast.Name):
        scope.setdefault(tree.id, colour)
    elif isinstance(tree, ast.Tuple) and isinstance(colour, ProductSet) and len(
            tree.elts) == len(colour.components):
        for sub, sub_colour in zip(tree.elts, colour.components, strict=True):
            _bind(sub, sub_colour, scope)


def _name(element: ET.Element, text: str) -> None:
    ET.SubElement(ET.SubElement(element, "name"), "text").text = text


def _toolspecific(element: ET.Element) -> ET.Element:
    return ET.SubElement(element, "toolspecific", tool=_TOOL, version=__version__)


def _delay_element(delay: Any) -> ET.Element:
    element = ET.Element("delay")
    if isinstance(delay, Distribution):
        element.set("distribution", repr(delay))
    elif isinstance(delay, str):
        element.set("expression", delay)
    else:
        element.set("value", repr(delay))
    return element


# -- reading ---------------------------------------------------------------------------------
def read_pnml(source: str | Path | bytes, *, max_bytes: int | None = None) -> ImportedNet:
    """Read a PNML P/T net or symmetric net (with tcpn's tool-specific timing, if any).

    Raises :class:`~tcpn.petrinets.exchange.cpn_import.CpnFormatError` naming the line and
    element for malformed files, dangling arcs, duplicate ids, unknown sorts and terms
    outside the symmetric-net grammar.
    """
    data, name = _load(source, max_bytes)
    root, lines = parse_xml(data, name)
    return _Reader(root, lines, name).run()


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


class _Reader:
    def __init__(self, root: ET.Element, lines: dict[ET.Element, int], source: str):
        self.root, self.lines, self.source = root, lines, source
        for element in root.iter():
            element.tag = _local(element.tag)
        self.sorts: dict[str, ColourSet] = {}
        self.sort_elements: dict[str, ET.Element] = {}
        self.constants: dict[str, str] = {}
        self.variables: dict[str, str] = {}
        self.ids: dict[str, str] = {}

    def fail(self, element: ET.Element, message: str) -> CpnFormatError:
        return CpnFormatError(self.source, message, self.lines.get(element), element.get("id"))

    def run(self) -> ImportedNet:
        if self.root.tag != "pnml":
            raise self.fail(self.root, f"not PNML: the root element is <{self.root.tag}>")
        nets = self.root.findall("net")
        if len(nets) != 1:
            raise self.fail(self.root, f"expected one <net>, found {len(nets)}")
        net_element = nets[0]
        net_type = net_element.get("type")
        if net_type not in (PTNET, SYMMETRICNET):
            raise self.fail(net_element, f"net type {net_type!r} is neither a P/T net nor a "
                            "symmetric net")
        seen: dict[str, ET.Element] = {}
        for element in net_element.iter():
            element_id = element.get("id")
            if element_id is not None and element.tag not in ("feconstant",):
                if element_id in seen:
                    raise self.fail(element, f"duplicate id {element_id!r}")
                seen[element_id] = element
        self.symmetric = net_type == SYMMETRICNET
        name = _label_text(net_element, "name") or net_element.get("id", "net")
        net = PetriNet(re.sub(r"[^A-Za-z0-9_.]", "_", name or "net") or "net")
        for decls in net_element.iter("declarations"):
            self.sort_elements.update({e.get("id", ""): e for e in decls
                                       if e.tag == "namedsort"})
        for decls in net_element.iter("declarations"):
            self._declarations(decls)
        nodes: dict[str, str] = {}
        pages = net_element.iter("page")
        elements = [e for page in pages for e in page]
        for element in elements:
            if element.tag == "place":
                place = self._place(element)
                net.add_place(place)
                nodes[element.get("id", "")] = place.name
                self.ids[f"place:{place.name}"] = element.get("id", "")
            elif element.tag == "transition":
                transition = self._transition(element)
                net.add_transition(transition)
                nodes[element.get("id", "")] = transition.name
                self.ids[f"trans:{transition.name}"] = element.get("id", "")
        for element in elements:
            if element.tag == "arc":
                net.add_arc(self._arc(element, nodes, net))
        report = ImportReport(self.source, {"places": len(net.places),
                                            "transitions": len(net.transitions),
                                            "arcs": len(net.arcs)})
        return ImportedNet(net, report, self.ids, real_time=False)

    # -- declarations -----------------------------------------------------------------------
    def _declarations(self, decls: ET.Element) -> None:
        for element in decls:
            if element.tag == "namedsort":
                self._named_sort(element.get("id", ""), element)
            elif element.tag == "variabledecl":
                sort = element.find("usersort")
                if sort is None:
                    raise self.fail(element, "a variable without a sort")
                self._usersort(sort)
                self.variables[element.get("id", "")] = element.get("name") or element.get(
                    "id") or "v"

    def _named_sort(self, sort_id: str, element: ET.Element) -> ColourSet:
        if sort_id not in self.sorts:
            body = next(iter(element), None)
            if body is None:
                raise self.fail(element, "a named sort without a sort")
            self.sorts[sort_id] = self._sort_body(body, element.get("name") or sort_id)
        return self.sorts[sort_id]

    def _sort_body(self, body: ET.Element, name: str) -> ColourSet:
        if body.tag == "dot":
            return UnitSet(name=name)
        if body.tag == "bool":
            return BoolSet(name=name)
        if body.tag == "finiteintrange":
            return IntSet(int(body.get("start", "0")), int(body.get("end", "0")), name=name)
        if body.tag in ("finiteenumeration", "cyclicenumeration"):
            values = []
            for constant in body.findall("feconstant"):
                value = constant.get("name") or constant.get("id") or ""
                self.constants[constant.get("id") or ""] = value
                values.append(value)
            return EnumSet(tuple(values), name=name)
        if body.tag == "productsort":
            return ProductSet(*(self._usersort(s) for s in body), name=name)
        if body.tag == "usersort":
            return self._usersort(body).named(name)
        raise self.fail(body, f"sort <{body.tag}> is not a symmetric-net sort tcpn reads")

    def _usersort(self, element: ET.Element) -> ColourSet:
        declaration = element.get("declaration") or ""
        if element.tag != "usersort" or declaration not in self.sort_elements:
            raise self.fail(element, f"unknown sort {declaration!r}")
        return self._named_sort(declaration, self.sort_elements[declaration])

    # -- terms ------------------------------------------------------------------------------
    def _term(self, element: ET.Element) -> ast.expr:
        tag = element.tag
        subterms = [self._term(_only_child(s, self)) for s in element.findall("subterm")]
        if tag == "variable":
            ref = element.get("refvariable", "")
            if ref not in self.variables:
                raise self.fail(element, f"unknown variable {ref!r}")
            return ast.Name(self.variables[ref], ast.Load())
        if tag == "dotconstant":
            return ast.Tuple([], ast.Load())
        if tag == "booleanconstant":
            return ast.Constant(element.get("value") == "true")
        if tag == "useroperator":
            ref = element.get("declaration", "")
            if ref not in self.constants:
                raise self.fail(element, f"unknown constant {ref!r}")
            return ast.Constant(self.constants[ref])
        if tag in ("finiteintrangeconstant", "numberconstant"):
            return ast.Constant(int(element.get("value", "0")))
        if tag == "tuple":
            return ast.Tuple(subterms, ast.Load())
        if tag in ("and", "or"):
            return ast.BoolOp(ast.And() if tag == "and" else ast.Or(), subterms)
        if tag == "not" and len(subterms) == 1:
            return ast.UnaryOp(ast.Not(), subterms[0])
        comparisons = {v: k for k, v in _COMPARISONS.items()}
        if tag in comparisons and len(subterms) == 2:
            return ast.Compare(subterms[0], [comparisons[tag]()], [subterms[1]])
        raise self.fail(element, f"term <{tag}> is outside the symmetric-net subset tcpn reads")

    def _multiset(self, element: ET.Element) -> list[tuple[int, ast.expr]]:
        if element.tag == "add":
            return [pair for s in element.findall("subterm")
                    for pair in self._multiset(_only_child(s, self))]
        if element.tag == "numberof":
            count, term = (_only_child(s, self) for s in element.findall("subterm"))
            return [(int(count.get("value", "1")), self._term(term))]
        return [(1, self._term(element))]

    # -- nodes ------------------------------------------------------------------------------
    def _node_name(self, element: ET.Element) -> str:
        raw = _label_text(element, "name") or element.get("id", "")
        return re.sub(r"[^A-Za-z0-9_.']", "_", raw) if raw else f"n_{element.get('id')}"

    def _place(self, element: ET.Element) -> Place:
        name = self._node_name(element)
        tool = _tool(element)
        timed = tool is not None and tool.find("timed") is not None
        stamps = [float(s) for s in (tool.findtext("timestamps") or "").split()] \
            if tool is not None else []
        if self.symmetric:
            sort = element.find("type/structure/usersort")
            if sort is None:
                raise self.fail(element, f"place {name} has no sort")
            colour = self._usersort(sort)
            structure = element.find("hlinitialMarking/structure")
            groups = self._multiset(_only_child(structure, self)) if structure is not None \
                else []
            values = [(n, ast.literal_eval(ast.unparse(t))) for n, t in groups]
        else:
            colour = UnitSet()
            text = _label_text(element, "initialMarking") or "0"
            if not text.strip().isdigit():
                raise self.fail(element, f"initial marking {text!r} is not a natural number")
            values = [(int(text), ())] if int(text) else []
        self._check_marking_size(element, name, sum(n for n, _ in values))
        if timed:
            colour = colour.timed(colour.name)
        stamps = stamps or [0.0] * len(values)
        if len(stamps) != len(values):
            raise self.fail(element, "tcpn timestamps do not match the initial marking")
        tokens = [Token(v, s) for (n, v), s in zip(values, stamps, strict=True) for _ in range(n)]
        try:
            return Place(name, colour, initial=tokens)
        except InputError as exc:
            raise self.fail(element, str(exc)) from None

    def _check_marking_size(self, element: ET.Element, place: str, tokens: int) -> None:
        """Refuse an initial marking over ``limits().marking_tokens`` before building it."""
        problem = limit_problem("marking_tokens", tokens)
        if problem is not None:
            raise self.fail(element, f"initial marking of place {place}: {problem}")

    def _transition(self, element: ET.Element) -> Transition:
        name = self._node_name(element)
        guard = None
        condition = element.find("condition/structure")
        if condition is not None:
            guard = ast.unparse(self._term(_only_child(condition, self)))
        tool = _tool(element)
        delay, priority = None, P_NORMAL
        if tool is not None:
            if tool.find("delay") is not None:
                delay = self._delay(tool.find("delay"))
            if tool.findtext("priority"):
                priority = int(tool.findtext("priority") or P_NORMAL)
        try:
            return Transition(name, guard=guard, delay=delay, priority=priority)
        except InputError as exc:
            raise self.fail(element, str(exc)) from None

    def _delay(self, element: ET.Element | None) -> Any:
        assert element is not None
        if element.get("expression") is not None:
            return element.get("expression")
        if element.get("value") is not None:
            try:
                return ast.literal_eval(element.get("value", "0"))
            except (ValueError, SyntaxError):
                raise self.fail(element, f"delay {element.get('value')!r} is not a number"
                                ) from None
        return _distribution(element.get("distribution", ""), lambda m: self.fail(element, m))

    def _arc(self, element: ET.Element, nodes: dict[str, str], net: PetriNet) -> Arc:
        source, target = element.get("source", ""), element.get("target", "")
        for end in (source, target):
            if end not in nodes:
                raise self.fail(element, f"arc refers to {end!r}, which is not a node")
        if source in nodes and nodes[source] in net.places:
            place, transition, kind = nodes[source], nodes[target], ArcKind.INPUT
        else:
            place, transition, kind = nodes[target], nodes[source], ArcKind.OUTPUT
        if place not in net.places or transition not in net.transitions:
            raise self.fail(element, "an arc must join a place and a transition")
        tool = _tool(element)
        delay = None
        if tool is not None:
            if tool.find("read") is not None:
                kind = ArcKind.READ
            if tool.find("delay") is not None:
                delay = self._delay(tool.find("delay"))
        if self.symmetric:
            structure = element.find("hlinscription/structure")
            if structure is None:
                raise self.fail(element, "a symmetric-net arc needs an inscription")
            terms = self._multiset(_only_child(structure, self))
            if len(terms) != 1:
                raise self.fail(element, "tcpn reads one term per arc inscription")
            count, term = terms[0]
            inscription = ast.unparse(term)
        else:
            text = _label_text(element, "inscription") or "1"
            if not text.strip().isdigit():
                raise self.fail(element, f"arc inscription {text!r} is not a natural number")
            count, inscription = int(text), "()"
        Inscription.parse(inscription, f"arc {element.get('id')}")
        try:
            return Arc(kind, place, transition, inscription, count,
                       delay=delay if kind is ArcKind.OUTPUT else None)
        except InputError as exc:
            raise self.fail(element, str(exc)) from None


def _only_child(element: ET.Element, reader: _Reader) -> ET.Element:
    children = list(element)
    if len(children) != 1:
        raise reader.fail(element, f"<{element.tag}> must hold exactly one term")
    return children[0]


def _label_text(element: ET.Element, label: str) -> str | None:
    found = element.find(f"{label}/text")
    return found.text if found is not None else None


def _tool(element: ET.Element) -> ET.Element | None:
    for tool in element.findall("toolspecific"):
        if tool.get("tool") == _TOOL:
            return tool
    return None


def _distribution(text: str, fail: Any) -> Distribution:
    """Rebuild a distribution from its repr, accepting only tcpn's classes and literals."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise fail(f"delay distribution {text!r} does not parse") from None
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)
            and tree.func.id in _DISTRIBUTIONS):
        raise fail(f"delay distribution {text!r} is not one of {sorted(_DISTRIBUTIONS)}")
    try:
        args = [ast.literal_eval(a) for a in tree.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in tree.keywords if k.arg}
    except ValueError:
        raise fail(f"delay distribution {text!r} has non-literal parameters") from None
    field_names = {"mean_value": "mean"}
    kwargs = {field_names.get(k, k): v for k, v in kwargs.items()}
    try:
        distribution: Distribution = _DISTRIBUTIONS[tree.func.id](*args, **kwargs)
    except (InputError, TypeError) as exc:
        raise fail(f"delay distribution {text!r}: {exc}") from None
    return distribution
