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
import importlib
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tcpn import __version__
from tcpn.errors import InputError
from tcpn.limits import integer_digits_problem, limit_problem
from tcpn.outputs import atomic_file, check_output_file
from tcpn.petrinets.colours import (
    BOOL,
    BoolSet,
    ColourSet,
    EnumSet,
    IntSet,
    ProductSet,
    RecordSet,
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
    ReportItem,
    parse_xml,
    read_net_file,
)
from tcpn.petrinets.exchange.pnml.binding import TransitionArcs
from tcpn.petrinets.exchange.pnml.multiset import Multiset
from tcpn.petrinets.exchange.pnml.ptstream import ReadStopped
from tcpn.petrinets.exchange.pnml.symmetric import SymmetricTerms
from tcpn.petrinets.exchange.pnml.tcpn import (
    colour_from_spec,
    colour_spec,
    constant_from_json,
    constant_json,
    tokens_from_json,
    tokens_json,
)
from tcpn.petrinets.net import (
    NODE_NAME,
    P_NORMAL,
    Arc,
    ArcKind,
    PetriNet,
    Place,
    Token,
    Transition,
)
from tcpn.petrinets.net_functions import reference_of, registered
from tcpn.petrinets.restricted import check_net

__all__ = ["PNMLCORE", "PTNET", "SYMMETRICNET", "read_pnml", "to_pnml", "write_pnml"]

PNML_NS = "http://www.pnml.org/version-2009/grammar/pnml"
PTNET = "http://www.pnml.org/version-2009/grammar/ptnet"
PNMLCORE = "http://www.pnml.org/version-2009/grammar/pnmlcoremodel"
SYMMETRICNET = "http://www.pnml.org/version-2009/grammar/symmetricnet"
_TOOL = "tcpn"
_DISTRIBUTIONS = {"Exponential": Exponential, "Uniform": Uniform, "Discrete": Discrete,
                  "TruncatedNormal": TruncatedNormal, "Empirical": Empirical}
_COMPARISONS = {ast.Eq: "equality", ast.NotEq: "inequality", ast.Lt: "lessthan",
                ast.LtE: "lessthanorequal", ast.Gt: "greaterthan", ast.GtE: "greaterthanorequal"}


def write_pnml(net: PetriNet, path: str | Path, net_type: str = "auto", *,
               strict: bool = False, overwrite: bool = False) -> Path:
    """Write ``net`` to ``path`` as PNML (see :func:`to_pnml`): whole or not at all, an
    existing file replaced only with ``overwrite`` (:func:`tcpn.outputs.atomic_file`)."""
    check_output_file(path, overwrite)
    text = to_pnml(net, net_type, strict=strict)
    with atomic_file(path, overwrite) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def to_pnml(net: PetriNet, net_type: str = "auto", *, strict: bool = False) -> str:
    """The PNML of ``net``: ``net_type`` is ``"pt"``, ``"symmetric"`` or ``"auto"``.

    With ``strict=True`` anything outside the standard P/T and symmetric-net grammars (and
    tcpn's timing) is an :class:`InputError` naming the element. Otherwise such parts are
    written with their readable ``<text>`` and tcpn's exact form in ``toolspecific``
    (``docs/exchange.md`` lists what another reader loses); :func:`read_pnml` restores
    them, but for Python functions (code actions, function declarations), which it reports
    as left out.
    """
    if net_type not in ("auto", "pt", "symmetric"):
        raise InputError(f"net_type must be 'auto', 'pt' or 'symmetric', got {net_type!r}")
    uncoloured = all(isinstance(p.colour, UnitSet) for p in net.places.values())
    if net_type == "pt" and not uncoloured:
        coloured = next(p for p in net.places.values() if not isinstance(p.colour, UnitSet))
        raise InputError(f"place {coloured.name}: colour set {coloured.colour.describe()} in "
                         "a P/T net (use net_type='symmetric')")
    symmetric = net_type == "symmetric" or (net_type == "auto" and not uncoloured)
    return _Writer(net, symmetric, exact=not strict).run()


def _check_ncname(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", name) else \
        "n_" + re.sub(r"[^A-Za-z0-9_.\-]", "_", name)


class _Writer:
    def __init__(self, net: PetriNet, symmetric: bool, exact: bool = False):
        self.net = net
        self.symmetric = symmetric
        #: write what the standard cannot say in toolspecific instead of refusing it
        self.exact = exact
        self.exact_transitions: set[str] = set()
        #: declared dicts that are successor, predecessor or order tables of an enumeration
        #: (as the symmetric-net reader declares them): written as standard terms
        self.tables, self.cyclic = _enumeration_tables(net)
        self.sorts: dict[ColourSet, str] = {}  # untimed colour set -> namedsort id
        #: feconstant ids: by (untimed enumeration, value), and by value alone while only
        #: one enumeration has it (``None`` once two do)
        self.constants: dict[Any, str | None] = {}
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
        if self.exact:
            self._declarations(net_element)
            self.exact_transitions = {t for t in self.net.transitions
                                      if not self._standard(self.net.transitions[t])}
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
        untimed = untimed.copy_with(is_timed=False) if untimed.is_timed else untimed
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
            body = ET.Element("cyclicenumeration" if colour in self.cyclic
                              else "finiteenumeration")
            taken = set(self.constants.values())
            for value in colour.values:
                constant_id = _check_ncname(f"c_{value}")
                if value in self.constants or constant_id in taken:  # in two enumerations
                    self.constants[value] = None
                    constant_id = _check_ncname(f"c_{colour.name}_{value}")
                    while constant_id in taken:
                        constant_id += "_"
                else:
                    self.constants[value] = constant_id
                taken.add(constant_id)
                self.constants[(colour, value)] = constant_id
                ET.SubElement(body, "feconstant", id=constant_id, name=value)
            return body
        if isinstance(colour, ProductSet):
            body = ET.Element("productsort")
            body.extend([self._sort(c, where) for c in colour.components])
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
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            untimed = colour.copy_with(is_timed=False) if colour is not None and \
                colour.is_timed else colour
            constant_id = self.constants.get((untimed, node.value)) or self.constants.get(
                node.value)
            if constant_id is not None:
                return ET.Element("useroperator", declaration=constant_id)
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
        table = self._table(node)
        if table is not None and table[0] != "order":
            assert isinstance(node, ast.Subscript)
            element = ET.Element(table[0])
            ET.SubElement(element, "subterm").append(
                self._term(node.slice, table[1], scope, transition, where))
            return element
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(
                node.ops[0]) in _COMPARISONS:
            left, right = node.left, node.comparators[0]
            left_table, right_table = self._table(left), self._table(right)
            if left_table and right_table and left_table == right_table and \
                    left_table[0] == "order":  # _ord_S[a] < _ord_S[b]: a < b in S's order
                assert isinstance(left, ast.Subscript) and isinstance(right, ast.Subscript)
                left, right = left.slice, right.slice
            side = self._colour_of(left, scope) or self._colour_of(right, scope)
            element = ET.Element(_COMPARISONS[type(node.ops[0])])
            for operand in (left, right):
                ET.SubElement(element, "subterm").append(
                    self._term(operand, side, scope, transition, where))
            return element
        raise InputError(f"{where}: PNML symmetric nets have no term for "
                         f"{ast.unparse(node)!r} (variables, constants, tuples, comparisons "
                         "and boolean logic only); export to CPN Tools instead")

    def _table(self, node: ast.expr) -> tuple[str, ColourSet] | None:
        """``(kind, enumeration)`` when ``node`` looks up one of :attr:`tables`."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            return self.tables.get(node.value.id)
        return None

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
        for name, colour in transition.free_variables.items():
            scope.setdefault(name, colour)
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
        if place.initial_draw is not None:
            raise InputError(f"place {place.name}: its initial marking is drawn at random "
                             f"when a run starts ({place.initial_draw.text}), which PNML can't "
                             "write; fix one draw first (tcpn.petrinets.engine.initial_draws."
                             "fix_initial_draws)")
        groups: list[list[Any]] = []
        for token in place.initial_tokens:
            if groups and groups[-1][0] == token.value and groups[-1][1] == token.time:
                groups[-1][2] += 1
            else:
                groups.append([token.value, token.time, 1])
        where = f"place {place.name}"
        if self.symmetric and self.exact and not self._standard_place(place, groups, where):
            label = ET.SubElement(element, "type")
            ET.SubElement(label, "text").text = place.colour.describe()
            if groups:
                ET.SubElement(ET.SubElement(element, "hlinitialMarking"), "text").text = \
                    " ++ ".join(f"{n}'{v!r}" for v, _, n in groups)
            tool = _toolspecific(element)
            ET.SubElement(tool, "colour").text = colour_spec(place.colour)
            ET.SubElement(tool, "tokens").text = tokens_json(
                place.colour, [(t.value, t.time) for t in place.initial_tokens])
        elif self.symmetric:
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
            tool = _tool(element) or _toolspecific(element)
            ET.SubElement(tool, "timed")
            if any(t.time for t in place.initial_tokens):
                ET.SubElement(tool, "timestamps").text = " ".join(
                    repr(float(time)) for _, time, _ in groups)
        return element

    def _transition(self, transition: Transition, element_id: str) -> ET.Element:
        element = ET.Element("transition", id=element_id)
        _name(element, transition.name)
        where = f"transition {transition.name}"
        if transition.name in self.exact_transitions:
            self._exact_transition(transition, element)
        elif transition.guard is not None:
            if not self.symmetric:
                raise InputError(f"guard of {where}: a P/T net has no guards")
            condition = ET.SubElement(element, "condition")
            ET.SubElement(condition, "text").text = transition.guard
            ET.SubElement(condition, "structure").append(self._term(
                ast.parse(transition.guard, mode="eval").body, BOOL, self._scope(transition),
                transition.name, f"guard of {where}"))
        if transition.delay is not None or transition.priority != P_NORMAL:
            tool = _tool(element) or _toolspecific(element)
            if transition.delay is not None:
                tool.append(_delay_element(transition.delay))
            if transition.priority != P_NORMAL:
                ET.SubElement(tool, "priority").text = str(transition.priority)
        return element

    def _arc(self, arc: Arc, element_id: str, ids: Mapping[str, str]) -> ET.Element:
        where = arc.where
        if arc.transition in self.exact_transitions:
            return self._exact_arc(arc, element_id, ids)
        if arc.kind in (ArcKind.INHIBITOR, ArcKind.RESET):
            raise InputError(f"{where}: PNML P/T and symmetric nets have no {arc.kind.value} "
                             "arcs; export to CPN Tools")
        if arc.when is not None or isinstance(arc.count, str):
            raise InputError(f"{where}: a condition or a computed count has no PNML form")
        if arc.multiset:
            raise InputError(f"{where}: a multiset computed from the binding has no standard "
                             "PNML form")
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


    # -- tcpn's exact forms (not strict) ----------------------------------------------------
    def _standard(self, transition: Transition) -> bool:
        """Whether the standard grammar says all of ``transition``: guard, arcs, no action.

        Trying may declare variables that end up unused; they are harmless.
        """
        if transition.action is not None or transition.params:
            return False
        saved = (len(self.decls) if self.decls is not None else 0, dict(self.sorts),
                 dict(self.constants), dict(self.variables))
        try:
            if transition.guard is not None:
                if not self.symmetric:
                    return False
                self._term(ast.parse(transition.guard, mode="eval").body, BOOL,
                           self._scope(transition), transition.name, transition.name)
            for arc in self.net.arcs_of(transition.name):
                self._arc(arc, "probe", {n: n for n in (arc.place, arc.transition)})
        except InputError:
            self._forget(saved)
            return False
        return True

    def _forget(self, saved: tuple[int, dict[Any, str], dict[Any, str | None],
                                   dict[Any, str]]) -> None:
        """Drop the declarations a failed attempt made (sorts, constants, variables)."""
        n_decls, self.sorts, self.constants, self.variables = saved
        if self.decls is not None:
            del self.decls[n_decls:]

    def _standard_place(self, place: Place, groups: list[list[Any]], where: str) -> bool:
        saved = (len(self.decls) if self.decls is not None else 0, dict(self.sorts),
                 dict(self.constants), dict(self.variables))
        try:
            self._sort(place.colour, where)
            for value, _, _ in groups:
                self._term(ast.parse(repr(value), mode="eval").body, place.colour, {}, "",
                           where)
        except (InputError, SyntaxError):
            self._forget(saved)
            return False
        return True

    def _declarations(self, net_element: ET.Element) -> None:
        if not self.net.declarations:
            return
        tool = _toolspecific(net_element)
        for name, value in self.net.declarations.items():
            _declaration(tool, name, value)

    def _exact_transition(self, transition: Transition, element: ET.Element) -> None:
        if transition.guard is not None:
            ET.SubElement(ET.SubElement(element, "condition"), "text").text = transition.guard
        tool = _toolspecific(element)
        ET.SubElement(tool, "exact")
        if transition.guard is not None:
            ET.SubElement(tool, "guard").text = transition.guard
        if transition.action is not None:
            ET.SubElement(tool, "action", ref=reference_of(transition.action),
                          outputs=" ".join(transition.outputs))
        for name, value in transition.params.items():
            _declaration(tool, name, value, tag="param")
        for name, colour in transition.free_variables.items():
            ET.SubElement(tool, "free", name=name).text = colour_spec(colour)

    def _exact_arc(self, arc: Arc, element_id: str, ids: Mapping[str, str]) -> ET.Element:
        place, transition = ids[arc.place], ids[arc.transition]
        source, target = (transition, place) if arc.kind is ArcKind.OUTPUT else (place,
                                                                                  transition)
        element = ET.Element("arc", id=element_id, source=source, target=target)
        text = f"{arc.count}'({arc.inscription})" if arc.inscription is not None else ""
        if arc.multiset:  # the multiset itself (no count: its value gives them)
            text = f"({arc.inscription})"
        if arc.when is not None:
            text = f"if {arc.when} then {text} else empty"
        if self.symmetric and text:
            ET.SubElement(ET.SubElement(element, "hlinscription"), "text").text = text
        elif isinstance(arc.count, int) and arc.count != 1:
            ET.SubElement(ET.SubElement(element, "inscription"), "text").text = str(arc.count)
        if arc.kind in (ArcKind.INHIBITOR, ArcKind.RESET):  # pm4py's and ProM's convention
            ET.SubElement(ET.SubElement(element, "arctype"), "text").text = arc.kind.value
        tool = _toolspecific(element)
        exact = ET.SubElement(tool, "arc", kind=arc.kind.value, count=str(arc.count))
        if arc.inscription is not None:
            exact.set("inscription", arc.inscription)
        if arc.when is not None:
            exact.set("when", arc.when)
        if arc.multiset:
            exact.set("multiset", "true")
        if arc.delay is not None:
            tool.append(_delay_element(arc.delay))
        return element


def _enumeration_tables(net: PetriNet) -> tuple[dict[str, tuple[str, ColourSet]],
                                                 set[ColourSet]]:
    """Declared dicts that are the successor, predecessor or order of an enumeration, and
    the enumerations that have a successor or predecessor (cyclic ones).

    Enumerations with the same values share tables: the one the table's name ends with
    is its sort (``_succ_Philo``), and every one of them is cyclic.
    """
    enumerations: list[EnumSet] = []

    def collect(colour: ColourSet) -> None:
        if isinstance(colour, EnumSet):
            untimed = colour.copy_with(is_timed=False) if colour.is_timed else colour
            if untimed not in enumerations:
                enumerations.append(untimed)  # type: ignore[arg-type]
        elif isinstance(colour, ProductSet):
            for component in colour.components:
                collect(component)

    for place in net.places.values():
        collect(place.colour)
    tables: dict[str, tuple[str, ColourSet]] = {}
    cyclic: set[ColourSet] = set()
    for name, value in net.declarations.items():
        if not isinstance(value, dict):
            continue
        for colour in sorted(enumerations, key=lambda c: not name.endswith(f"_{c.name}")):
            values, n = colour.values, len(colour.values)
            shapes = {"successor": {v: values[(i + 1) % n] for i, v in enumerate(values)},
                      "predecessor": {v: values[(i - 1) % n] for i, v in enumerate(values)},
                      "order": {v: i for i, v in enumerate(values)}}
            kind = next((k for k, table in shapes.items() if value == table), None)
            if kind is not None:
                tables.setdefault(name, (kind, colour))
                if kind != "order":
                    cyclic.add(colour)
    return tables, cyclic


def _trusted_function(reference: str) -> Any:
    """The function any importable ``module:qualname`` names, for a file the user trusts
    (``read_pnml(..., trusted=True)``, the CLI's ``--trust``), else None."""
    module_name, _, qualname = reference.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError, ValueError):
        return None
    return value if callable(value) else None


def _declaration(tool: ET.Element, name: str, value: Any, tag: str = "declaration") -> None:
    data = constant_json(value)
    if data is not None:
        ET.SubElement(tool, tag, name=name).text = data
    else:
        ET.SubElement(tool, "function" if tag == "declaration" else f"{tag}function",
                      name=name, ref=reference_of(value))


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
def read_pnml(source: str | Path | bytes, *, max_bytes: int | None = None,
              trusted: bool = False, stop: Callable[[], str | None] | None = None
              ) -> ImportedNet:
    """Read a PNML P/T net, core-model net or symmetric net (with tcpn's timing, if any).

    Places and transitions are named by their PNML ids (the names other tools and the
    Model Checking Contest's formulas use); the ``<name>`` labels are kept in
    :attr:`ImportedNet.labels` (ProM repeats labels such as ``tau``). Symmetric nets stay
    coloured (see :mod:`~tcpn.petrinets.exchange.pnml.symmetric`). Raises
    :class:`~tcpn.petrinets.exchange.cpn_import.CpnFormatError` naming the line and
    element for malformed files, dangling arcs, duplicate ids, unknown sorts and terms
    outside the symmetric-net grammar.

    A file is data: the Python inscriptions of tcpn's ``toolspecific`` must stay in the
    restricted subset (:mod:`~tcpn.petrinets.restricted`; else
    :class:`~tcpn.petrinets.restricted.UntrustedCodeError` names the element) and
    function references restore only tcpn's registered component functions
    (:mod:`~tcpn.petrinets.net_functions`). ``trusted=True`` lifts both, for a file you
    wrote or read: its inscriptions then run as any Python, and its references may name any
    importable function (``docs/security.md``).

    ``stop`` (a budget) is called before each place, arc and sort listing of a symmetric
    net is built, and the reading ends with
    :class:`~tcpn.petrinets.exchange.pnml.ptstream.ReadStopped` when it names a reason:
    ``all`` over large sorts makes a small file a large net.
    """
    data, name = read_net_file(source, max_bytes)
    root, lines = parse_xml(data, name)
    imported = _Reader(root, lines, name, trusted, stop).run()
    if not trusted:
        check_net(imported.net, name)
    return imported


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


class _Reader:
    def __init__(self, root: ET.Element, lines: dict[ET.Element, int], source: str,
                 trusted: bool = False, stop: Callable[[], str | None] | None = None):
        self.root, self.lines, self.source = root, lines, source
        self.stop = stop
        self.restore = _trusted_function if trusted else registered
        for element in root.iter():
            element.tag = _local(element.tag)
        self.parents = {child: parent for parent in root.iter() for child in parent}
        self.terms = SymmetricTerms(self.fail, self.check_budget)
        self.ids: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.renamed: list[ReportItem] = []
        self.left_out: list[ReportItem] = []
        self.missing_functions: set[str] = set()  # reported once each
        self.records: dict[str, RecordSet] = {}  # record colour sets, shared by places

    def _integer(self, element: ET.Element | None, what: str, text: str | None = None) -> int:
        """The integer ``text`` (default: ``element``'s text) of ``what``; an error naming
        the element when it is not one or has more digits than Python reads."""
        assert element is not None
        text = (element.text or "" if text is None else text).strip()
        if not re.fullmatch(r"-?[0-9]+", text):
            raise self.fail(element, f"{what} {text[:40]!r} is not an integer")
        problem = integer_digits_problem(text)
        if problem is not None:
            raise self.fail(element, f"{what}: {problem}")
        return int(text)

    def check_budget(self) -> None:
        """End the reading (:class:`ReadStopped`) when ``stop`` names a budget."""
        reason = self.stop() if self.stop is not None else None
        if reason is not None:
            raise ReadStopped(reason)

    def fail(self, element: ET.Element, message: str) -> CpnFormatError:
        """The error for ``element``: its line, and the id of it or of its nearest holder."""
        holder: ET.Element | None = element
        while holder is not None and holder.get("id") is None:
            holder = self.parents.get(holder)
        element_id = None if holder is None else holder.get("id")
        if holder is not element and element_id is not None:
            message = f"<{element.tag}>: {message}"
        return CpnFormatError(self.source, message, self.lines.get(element), element_id)

    def run(self) -> ImportedNet:
        if self.root.tag != "pnml":
            raise self.fail(self.root, f"not PNML: the root element is <{self.root.tag}>")
        nets = self.root.findall("net")
        if len(nets) != 1:
            raise self.fail(self.root, f"expected one <net>, found {len(nets)}")
        net_element = nets[0]
        net_type = net_element.get("type")
        if net_type not in (PTNET, PNMLCORE, SYMMETRICNET):
            raise self.fail(net_element, f"net type {net_type!r} is neither a P/T net, a "
                            "core-model net nor a symmetric net")
        seen: dict[str, ET.Element] = {}
        for element in net_element.iter():
            element_id = element.get("id")
            if element_id is not None and element.tag not in ("feconstant",):
                if element_id in seen:
                    raise self.fail(element, f"duplicate id {element_id!r}")
                seen[element_id] = element
        self.symmetric = net_type == SYMMETRICNET
        name = _label_text(net_element, "name") or net_element.get("id", "net")
        net_name = re.sub(r"[^A-Za-z0-9_.]", "_", name or "net") or "net"
        net = PetriNet(net_name if re.match(r"[A-Za-z_]", net_name) else f"n_{net_name}")
        self.terms.declare(*net_element.iter("declarations"))
        nodes: dict[str, str] = {}
        elements = [e for page in net_element.iter("page") for e in page]
        for element in elements:
            if element.tag in ("referencePlace", "referenceTransition"):
                raise self.fail(element, f"<{element.tag}> (modular PNML) is outside what "
                                "tcpn reads")
            if element.tag == "place":
                place = self._place(element)
                self._add(element, net.add_place, place)
                nodes[element.get("id", "")] = place.name
                self.ids[f"place:{place.name}"] = element.get("id", "")
        net_tool = _tool(net_element)  # after the places: their record types are known
        if net_tool is not None:
            net.declare(**self._exact_declarations(net_tool, net_element))
        guards: dict[str, ET.Element] = {}
        for element in elements:
            if element.tag == "transition":
                transition = self._transition(element)
                self._add(element, net.add_transition, transition)
                nodes[element.get("id", "")] = transition.name
                guards[transition.name] = element
                self.ids[f"trans:{transition.name}"] = element.get("id", "")
        arcs = []
        for element in (e for e in elements if e.tag == "arc"):
            tool = _tool(element)
            exact = tool.find("arc") if tool is not None else None
            if exact is not None:
                self._add(element, net.add_arc, self._exact_arc(element, exact, nodes, net))
            else:
                arcs.append(element)
        if self.symmetric:
            self._symmetric_arcs(net, arcs, nodes, guards)
        else:
            for element in arcs:
                self._add(element, net.add_arc, self._pt_arc(element, nodes, net))
        net.declare(**self.terms.declarations)
        report = ImportReport(self.source, {"places": len(net.places),
                                            "transitions": len(net.transitions),
                                            "arcs": len(net.arcs)}, notes=self.renamed,
                              unsupported=self.left_out)
        return ImportedNet(net, report, self.ids, real_time=False, labels=self.labels)

    def _add(self, element: ET.Element, add: Any, item: Any) -> None:
        """``add(item)``, its :class:`InputError` naming ``element``'s line and id."""
        try:
            add(item)
        except InputError as exc:
            raise self.fail(element, str(exc)) from None

    # -- nodes ------------------------------------------------------------------------------
    def _node_name(self, element: ET.Element) -> str:
        """The PNML id (tcpn's own files may carry the original name in ``toolspecific``)."""
        label = _label_text(element, "name")
        element_id = element.get("id", "")
        tool = _tool(element)
        own = tool.findtext("name") if tool is not None else None
        name = own or element_id
        if not NODE_NAME.match(name):
            name = re.sub(r"[^A-Za-z0-9_.'-]", "_", name)
            name = name if re.match(r"[A-Za-z_]", name) else f"n_{name}"
            self.renamed.append(ReportItem(element.tag, element_id, name,
                                           self.lines.get(element), f"id {element_id!r} is "
                                           f"no tcpn name: named {name!r}"))
        if label is not None and not _invisible(element):
            self.labels[name] = label
        return name

    def _place(self, element: ET.Element) -> Place:
        name = self._node_name(element)
        tool = _tool(element)
        timed = tool is not None and tool.find("timed") is not None
        stamps = [float(s) for s in (tool.findtext("timestamps") or "").split()] \
            if tool is not None else []
        values: list[tuple[int, Any]]
        exact = tool.find("colour") if tool is not None else None
        if exact is not None:  # tcpn's own form (see pnml/tcpn)
            assert tool is not None
            try:
                colour = colour_from_spec(exact.text or "", self.records)
                tokens = tokens_from_json(colour, tool.findtext("tokens") or "[]")
                return Place(name, colour, initial=tokens)
            except InputError as exc:
                raise self.fail(exact, str(exc)) from None
        if self.symmetric:
            self.check_budget()
            sort = element.find("type/structure")
            if sort is None or len(sort) != 1:
                raise self.fail(element, f"place {name} has no sort")
            colour = self.terms.sort(sort[0])
            structure = _structure(element, "hlinitialMarking", self)
            values = [(n, v) for v, n in self.terms.values(_only_child(structure, self))] \
                if structure is not None else []
        else:
            colour = UnitSet()
            text = (_label_text(element, "initialMarking") or "0").strip()
            if not text.isascii() or not text.isdigit():
                raise self.fail(element, f"initial marking {text[:40]!r} is not a natural "
                                         "number")
            problem = integer_digits_problem(text)
            if problem is not None:
                raise self.fail(element, f"initial marking: {problem}")
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
        tool = _tool(element)
        delay, priority, guard = None, P_NORMAL, None
        params: dict[str, Any] = {}
        free: dict[str, ColourSet] = {}
        actions: dict[str, Any] = {}
        if tool is not None:
            if tool.find("delay") is not None:
                delay = self._delay(tool.find("delay"))
            if tool.findtext("priority"):
                priority = self._integer(tool.find("priority"), "priority")
            guard = tool.findtext("guard")
            params = self._exact_declarations(tool, element, "param")
            for variable in tool.findall("free"):
                try:
                    free[variable.get("name", "")] = colour_from_spec(variable.text or "",
                                                                      self.records)
                except InputError as exc:
                    raise self.fail(variable, str(exc)) from None
            for action in tool.findall("action"):
                code = self.restore(action.get("ref", ""))
                if code is None:
                    self.left_out.append(ReportItem(
                        "code action", element.get("id", ""), action.get("ref", ""),
                        self.lines.get(action), "a Python function: not restored from PNML "
                        "(only tcpn's registered component functions are); the transition "
                        "is left without it"))
                else:
                    actions = {"action": code,
                               "outputs": tuple((action.get("outputs") or "").split())}
        try:
            return Transition(name, guard=guard, delay=delay, priority=priority,
                              params=params, free_variables=free, **actions)
        except InputError as exc:
            raise self.fail(element, str(exc)) from None

    def _exact_declarations(self, tool: ET.Element, owner: ET.Element, tag: str = "declaration"
                            ) -> dict[str, Any]:
        """Constants tcpn wrote in ``tool``; functions are reported as left out."""
        values = {}
        function_tag = f"{tag}function" if tag != "declaration" else "function"
        for item in tool:  # in file order, as the net declared them
            if item.tag == tag:
                try:
                    values[item.get("name", "")] = constant_from_json(item.text or "")
                except InputError as exc:
                    raise self.fail(item, str(exc)) from None
                continue
            if item.tag != function_tag:
                continue
            ref = item.get("ref", "")
            record = self.records.get(ref.partition(":")[2])
            found = record.record_type if record is not None and ref.startswith(
                "tcpn.petrinets.colours:") else self.restore(ref)
            if found is not None:
                values[item.get("name", "")] = found
            elif ref not in self.missing_functions:
                self.missing_functions.add(ref)
                self.left_out.append(ReportItem(
                    "function", owner.get("id", ""), item.get("name", ""),
                    self.lines.get(item), f"Python function {ref}: not restored from "
                    "PNML (only tcpn's registered component functions are); declare it on "
                    "the net again"))
        return values

    def _exact_arc(self, element: ET.Element, exact: ET.Element, nodes: dict[str, str],
                   net: PetriNet) -> Arc:
        """An arc in tcpn's own form (kind, inscription, count, condition, delay)."""
        place, transition, _kind = self._ends(element, nodes, net)
        count_text = exact.get("count", "1")
        count: int | str = self._integer(exact, "count", count_text) \
            if count_text.isascii() and count_text.isdigit() else count_text
        try:
            kind = ArcKind(exact.get("kind", ""))
            return Arc(kind, place, transition, exact.get("inscription"), count,
                       exact.get("when"), self._arc_delay(element, kind),
                       exact.get("multiset") == "true")
        except (InputError, ValueError) as exc:
            raise self.fail(exact, str(exc)) from None

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

    def _ends(self, element: ET.Element, nodes: dict[str, str], net: PetriNet
              ) -> tuple[str, str, ArcKind]:
        source, target = element.get("source", ""), element.get("target", "")
        for end in (source, target):
            if end not in nodes:
                raise self.fail(element, f"arc refers to {end!r}, which is not a node")
        if nodes[source] in net.places:
            place, transition, kind = nodes[source], nodes[target], ArcKind.INPUT
        else:
            place, transition, kind = nodes[target], nodes[source], ArcKind.OUTPUT
        if place not in net.places or transition not in net.transitions:
            raise self.fail(element, "an arc must join a place and a transition")
        tool = _tool(element)
        if tool is not None and tool.find("read") is not None:
            kind = ArcKind.READ
        return place, transition, kind

    def _arc_delay(self, element: ET.Element, kind: ArcKind) -> Any:
        tool = _tool(element)
        if tool is None or tool.find("delay") is None or kind is not ArcKind.OUTPUT:
            return None
        return self._delay(tool.find("delay"))

    def _pt_arc(self, element: ET.Element, nodes: dict[str, str], net: PetriNet) -> Arc:
        place, transition, kind = self._ends(element, nodes, net)
        text = (_label_text(element, "inscription") or "1").strip()
        if not text.isascii() or not text.isdigit() or self._integer(
                element, "arc inscription", text) < 1:
            raise self.fail(element, f"arc inscription {text[:40]!r} is not a positive number")
        # pm4py's and ProM's extension: <arctype><text>inhibitor|reset</text></arctype>
        arc_type = (_label_text(element, "arctype") or "normal").strip()
        if arc_type not in ("normal", "inhibitor", "reset"):
            raise self.fail(element, f"arc type {arc_type!r} is not normal, inhibitor or reset")
        if arc_type != "normal" and kind is not ArcKind.INPUT:
            raise self.fail(element, f"a {arc_type} arc must go from a place to a transition")
        try:
            if arc_type == "reset":
                return Arc(ArcKind.RESET, place, transition)
            if arc_type == "inhibitor":  # disabled from `inscription` tokens on
                return Arc(ArcKind.INHIBITOR, place, transition, "()", int(text))
            return Arc(kind, place, transition, "()", int(text),
                       delay=self._arc_delay(element, kind))
        except InputError as exc:
            raise self.fail(element, str(exc)) from None

    # -- symmetric nets ---------------------------------------------------------------------
    def _symmetric_arcs(self, net: PetriNet, arcs: list[ET.Element], nodes: dict[str, str],
                        transitions: dict[str, ET.Element]) -> None:
        """Build each transition's guard and arcs together (see :class:`TransitionArcs`)."""
        by_transition: dict[str, list[tuple[ET.Element, str, ArcKind, Multiset]]] = {
            name: [] for name in transitions}
        for element in arcs:
            self.check_budget()
            place, transition, kind = self._ends(element, nodes, net)
            structure = element.find("hlinscription/structure")
            if structure is None:
                raise self.fail(element, "a symmetric-net arc needs an inscription")
            terms = self.terms.multiset_tree(_only_child(structure, self))
            by_transition[transition].append((element, place, kind, terms))
        for name, element in transitions.items():
            tool = _tool(element)
            if tool is not None and tool.find("exact") is not None:
                continue  # guard and arcs in tcpn's own form, read already
            condition = _structure(element, "condition", self)
            guard = self.terms.term(_only_child(condition, self))[0] \
                if condition is not None else None
            binding = TransitionArcs(self.terms, guard)
            for arc_element, place, kind, terms in by_transition[name]:
                binding.add(arc_element, place, kind, terms)
            try:
                built = binding.arcs(name, self.fail, element)
                if binding.guard is not None or binding.free:
                    net.transitions[name] = replace(net.transitions[name], guard=binding.guard,
                                                    free_variables=binding.free)
                for arc_element, arc in built:
                    arc.delay = self._arc_delay(arc_element, arc.kind)
                    net.add_arc(arc)
            except CpnFormatError:
                raise
            except InputError as exc:
                raise self.fail(element, str(exc)) from None


def _invisible(element: ET.Element) -> bool:
    """A ProM/pm4py silent transition (``activity="$invisible$"``)."""
    return any(t.get("activity") == "$invisible$" for t in element.findall("toolspecific"))


def _structure(element: ET.Element, label: str, reader: _Reader) -> ET.Element | None:
    """The ``<structure>`` of ``element``'s label ``label`` (None without the label): a
    label with only its ``<text>`` is refused, not read as empty (an initial marking of
    no token, a guard always true would change the state space without a word)."""
    found = element.find(label)
    if found is None:
        return None
    structure = found.find("structure")
    if structure is None:
        raise reader.fail(found, "no <structure> (its <text> alone is not "
                          "read: the symmetric-net term is)")
    return structure


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
