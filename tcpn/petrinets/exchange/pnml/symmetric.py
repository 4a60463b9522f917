"""PNML symmetric nets to tcpn: sorts as colour sets, terms as Python inscriptions.

The Model Checking Contest's coloured instances are symmetric nets (ISO/IEC 15909-2). They
stay coloured here, nothing is unfolded: a sort becomes a colour set (``dot`` -> ``UNIT``,
``bool``, a finite or cyclic enumeration -> :class:`EnumSet` of the constants' names, a
finite int range -> bounded :class:`IntSet`, a product -> :class:`ProductSet`, a partition
-> an enumeration of its elements), a term becomes a Python expression, and the helpers
the expressions need are net declarations, plain dicts built once:

* ``_succ_S`` / ``_pred_S``: successor and predecessor in the cyclic sort ``S``
  (``x++`` is ``_succ_S[x]``);
* ``_ord_S``: the position of each member of an ordered sort, for ``lessthan`` and the
  like between enumeration constants;
* ``_part_P``: the partition element of each member, for ``partitionelementof``.

A multiset (an arc inscription or an initial marking) becomes a tree
(:class:`~tcpn.petrinets.exchange.pnml.multiset.Multiset`): ``add`` and ``subtract`` of any
number of subterms (``subtract`` from the left), ``numberof`` and ``scalarproduct``
multiply, ``empty`` is no term, and ``all`` (alone or inside a tuple) stands for every
member of its sort, one term per member (the arc, not the net, is expanded). A tree whose
subtractions all lie on its left spine reads as ``(coefficient, term)`` pairs; a difference
nested in a sum is counted where it is (truncated at zero). ``cardinality``,
``cardinalityof`` and ``contains`` of multisets are terms (guards use them), ``and`` and
``or`` take any number of subterms, comparisons order enumerations as declared and
partition elements as listed, and a partition element may list any closed term of its
sort (an int-range constant as well as an enumeration constant).

The grammar is read as the standard writes it, not as the files seen use it: a product of
one sort is that sort (and a one-component tuple its component), products nest, a named
operator (``namedoperator``, a term with parameters) is expanded where ``useroperator``
applies it to arguments, and declarations may come in any order and in several blocks.
How the pairs become arcs is the reader's business (:mod:`tcpn.petrinets.exchange.pnml`).

>>> import xml.etree.ElementTree as ET
>>> terms = SymmetricTerms(lambda element, message: ValueError(message))
>>> terms.declare(ET.fromstring(
...     '<declarations><namedsort id="P" name="Philo"><cyclicenumeration>'
...     '<feconstant id="p1" name="1"/><feconstant id="p2" name="2"/></cyclicenumeration>'
...     '</namedsort><variabledecl id="vx" name="x"><usersort declaration="P"/>'
...     '</variabledecl></declarations>'))
>>> from tcpn.petrinets.exchange.pnml.multiset import pairs
>>> found = pairs(terms.multiset_tree(ET.fromstring(
...     '<add><subterm><variable refvariable="vx"/></subterm><subterm><predecessor>'
...     '<subterm><variable refvariable="vx"/></subterm></predecessor></subterm></add>')))
>>> [(n, ast.unparse(t)) for n, t in found]
[(1, 'x'), (1, '_pred_Philo[x]')]
>>> terms.declarations["_pred_Philo"]
{'1': '2', '2': '1'}
"""

from __future__ import annotations

import ast
import itertools
import keyword
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from tcpn.limits import LimitReached
from tcpn.petrinets.colours import BoolSet, ColourSet, EnumSet, IntSet, ProductSet, UnitSet
from tcpn.petrinets.exchange.pnml.multiset import (
    Count,
    Multiset,
    cardinality,
    count_of,
    counted,
    evaluate,
)
from tcpn.petrinets.inscriptions import BUILTIN_NAMES, RANDOM_FUNCTIONS, RESERVED_NAMES

__all__ = ["MAX_MEMBERS", "SymmetricTerms", "Terms"]

#: a multiset as ``(coefficient, term)`` pairs; a negative coefficient is subtracted
Terms = list[tuple[int, ast.expr]]
#: the most members tcpn lists for one sort (``all``, partitions, free variables)
MAX_MEMBERS = 100_000
Fail = Callable[[ET.Element, str], Exception]
#: how deep named operators may use one another (the standard forbids recursion)
MAX_OPERATOR_DEPTH = 32

_COMPARE = {"equality": ast.Eq, "inequality": ast.NotEq, "lessthan": ast.Lt,
            "lessthanorequal": ast.LtE, "greaterthan": ast.Gt, "greaterthanorequal": ast.GtE,
            "ltp": ast.Lt, "gtp": ast.Gt}
#: the standard's integer operators (numbers count tokens in a symmetric net)
_ARITHMETIC: dict[str, ast.operator | ast.cmpop] = {
    "addition": ast.Add(), "subtraction": ast.Sub(), "mult": ast.Mult(),
    "div": ast.FloorDiv(), "mod": ast.Mod(), "lt": ast.Lt(), "leq": ast.LtE(),
    "gt": ast.Gt(), "geq": ast.GtE()}
_ORDERED = ("lessthan", "lessthanorequal", "greaterthan", "greaterthanorequal", "ltp", "gtp")


class SymmetricTerms:
    """The sorts, constants and variables of one symmetric net, and its term translator.

    ``fail(element, message)`` builds the exception raised for an element tcpn does not
    read (the reader's, which names the file, line and id); ``check_budget()`` raises when
    a budget says the reading must end (called before a sort's members are listed).
    """

    def __init__(self, fail: Fail, check_budget: Callable[[], None] = lambda: None):
        self.fail = fail
        self.check_budget = check_budget
        self.sort_elements: dict[str, ET.Element] = {}
        self.sorts: dict[str, ColourSet] = {}
        self.members: dict[ColourSet, list[Any]] = {}
        self.sizes: dict[ColourSet, int] = {}  # of int ranges and products, listed lazily
        self.cyclic: set[ColourSet] = set()
        self.constants: dict[str, tuple[Any, ColourSet]] = {}  # feconstant id -> value, sort
        self.variables: dict[str, tuple[str, ColourSet]] = {}  # variabledecl id -> name, sort
        self.partitions: dict[str, tuple[ColourSet, dict[Any, Any]]] = {}
        #: each partition element's members, by its id (it stands for them in a multiset)
        self.partition_members: dict[str, list[Any]] = {}
        #: helper dicts the inscriptions use, to declare on the net
        self.declarations: dict[str, Any] = {}
        self._helper_names: dict[tuple[str, ColourSet | str], str] = {}
        #: namedoperator id -> its declaration, expanded where it is used
        self.operators: dict[str, ET.Element] = {}
        #: while a named operator's definition is expanded: its parameters' arguments
        self._arguments: list[dict[str, tuple[ast.expr, ColourSet | None]]] = []
        self._taken: set[str] = set()
        self._sorts_open: list[str] = []  # named sorts being read (a cycle is refused)

    # -- declarations -----------------------------------------------------------------------
    def declare(self, *blocks: ET.Element) -> None:
        """Read the net's ``<declarations>`` elements, all of them at once: every sort of
        every block first, so that a variable or a sort may use a sort declared after it,
        in the same block or in another (the standard does not order declarations)."""
        elements = [element for block in blocks for element in block]
        for element in elements:
            if element.tag in ("namedsort", "partition"):
                self.sort_elements[element.get("id", "")] = element
        for element in elements:
            if element.tag in ("namedsort", "partition"):
                self._named(element.get("id", ""))
            elif element.tag == "variabledecl":
                self._variable(element)
            elif element.tag == "namedoperator":
                self.operators[element.get("id", "")] = element
            else:
                raise self.fail(element, f"declaration <{element.tag}> is outside the "
                                "symmetric-net subset tcpn reads (sorts, partitions, variables, "
                                "named operators)")

    def _variable(self, element: ET.Element) -> None:
        body = next(iter(element), None)
        if body is None:
            raise self.fail(element, "a variable without a sort")
        sort = self.sort(body)
        raw = element.get("name") or element.get("id") or "v"
        name = re.sub(r"\W", "_", raw)
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or \
                name in BUILTIN_NAMES | RANDOM_FUNCTIONS | RESERVED_NAMES:
            name = f"v_{name.lstrip('_')}"
        self.variables[element.get("id", "")] = (self._fresh(name), sort)

    def _fresh(self, name: str) -> str:
        unique, n = name, 1
        while unique in self._taken:
            n += 1
            unique = f"{name}_{n}"
        self._taken.add(unique)
        return unique

    def fresh_variable(self, hint: str) -> str:
        """A variable name no declared variable uses (for the reader's rewritten arcs)."""
        return self._fresh(re.sub(r"\W", "_", hint).strip("_") or "v")

    def _named(self, sort_id: str) -> ColourSet:
        if sort_id not in self.sorts:
            element = self.sort_elements[sort_id]
            name = element.get("name") or sort_id
            if sort_id in self._sorts_open:  # the standard forbids recursion in usersort
                cycle = " -> ".join([*self._sorts_open[self._sorts_open.index(sort_id):],
                                     sort_id])
                raise self.fail(element, f"sort {name} is defined through itself ({cycle}): "
                                "a user sort may not be recursive")
            self._sorts_open.append(sort_id)
            try:
                if element.tag == "partition":
                    self.sorts[sort_id] = self._partition(element, name)
                else:
                    body = next(iter(element), None)
                    if body is None:
                        raise self.fail(element, "a named sort without a sort")
                    self.sorts[sort_id] = self._sort_body(body, name)
            finally:
                self._sorts_open.pop()
        return self.sorts[sort_id]

    def sort(self, element: ET.Element, name: str = "") -> ColourSet:
        """The colour set of a sort element (``usersort`` or an inline sort)."""
        if element.tag == "usersort":
            declaration = element.get("declaration") or ""
            if declaration not in self.sort_elements:
                raise self.fail(element, f"unknown sort {declaration!r}")
            return self._named(declaration)
        return self._sort_body(element, name or element.tag)

    def _sort_body(self, body: ET.Element, name: str) -> ColourSet:
        colour: ColourSet
        if body.tag == "dot":
            colour = UnitSet(name=name)
            self.members[colour] = [()]
        elif body.tag == "bool":
            colour = BoolSet(name=name)
            self.members[colour] = [False, True]
        elif body.tag == "finiteintrange":
            try:
                low, high = int(body.get("start", "")), int(body.get("end", ""))
            except ValueError:
                raise self.fail(body, "a finite int range needs integer start and end") \
                    from None
            if high < low:
                raise self.fail(body, f"finite int range {low}..{high} is empty")
            colour = IntSet(low, high, name=name)
            self.sizes[colour] = high - low + 1  # members listed only when needed
        elif body.tag in ("finiteenumeration", "cyclicenumeration"):
            constants = body.findall("feconstant")
            if not constants:
                raise self.fail(body, "an enumeration without constants")
            names = [c.get("name") or c.get("id") or "" for c in constants]
            if len(set(names)) != len(names):  # names may repeat; ids may not
                names = [c.get("id") or "" for c in constants]
            colour = EnumSet(tuple(names), name=name)
            self.members[colour] = names
            for constant, value in zip(constants, names, strict=True):
                self.constants[constant.get("id") or ""] = (value, colour)
            if body.tag == "cyclicenumeration":
                self.cyclic.add(colour)
        elif body.tag == "productsort":
            components = [self.sort(s) for s in body]
            if len(components) == 1:
                return components[0]
            if not components:
                raise self.fail(body, "a product sort without components")
            colour = ProductSet(*components, name=name)
            self.sizes[colour] = math.prod(self._size(c, body) for c in components)
        elif body.tag == "usersort":
            return self.sort(body)
        else:
            raise self.fail(body, f"sort <{body.tag}> is not a finite sort of symmetric nets "
                            "(dot, bool, enumerations, finite int ranges, products, "
                            "partitions)")
        return colour

    def _partition(self, element: ET.Element, name: str) -> ColourSet:
        parts = element.findall("partitionelement")
        base_element = element.find("usersort")
        if base_element is None or not parts:
            raise self.fail(element, "a partition needs a sort and partition elements")
        base = self.sort(base_element)
        members = self._members_of(base, element)
        names = [p.get("name") or p.get("id") or "" for p in parts]
        colour = EnumSet(tuple(names), name=name)
        self.members[colour] = names
        of: dict[Any, Any] = {}
        for part, part_name in zip(parts, names, strict=True):
            self.constants[part.get("id") or ""] = (part_name, colour)
            listed = self.partition_members[part.get("id") or ""] = []
            for member in part:
                value = self._value(member, self.term(member)[0])
                if value not in members:
                    raise self.fail(member, f"partition element {part_name} lists {value!r}, "
                                    f"not a member of {base.describe()}")
                of[value] = part_name
                listed.append(value)
        missing = [v for v in members if v not in of]
        if missing:
            raise self.fail(element, f"partition {name} leaves out {missing[0]!r}")
        self.partitions[element.get("id", "")] = (colour, of)
        return colour

    def _size(self, colour: ColourSet, where: ET.Element) -> int:
        if colour in self.members:
            return len(self.members[colour])
        if colour not in self.sizes:
            raise self.fail(where, f"sort {colour.describe()} is not finite")
        return self.sizes[colour]

    def _members_of(self, colour: ColourSet, where: ET.Element) -> list[Any]:
        """Every member of a finite sort, refused beyond :data:`MAX_MEMBERS` (``all`` on
        a product of large ranges would otherwise expand without bound)."""
        size = self._size(colour, where)
        if size > MAX_MEMBERS:
            refused = self.fail(where, f"sort {colour.describe()} has {size} members, over "
                                f"the {MAX_MEMBERS} tcpn lists for <all>, a partition or a "
                                "free variable")
            raise LimitReached(str(refused))
        if colour not in self.members:
            self.check_budget()
            if isinstance(colour, IntSet):
                assert colour.low is not None and colour.high is not None
                self.members[colour] = list(range(colour.low, colour.high + 1))
            else:
                assert isinstance(colour, ProductSet)
                self.members[colour] = [tuple(v) for v in itertools.product(
                    *(self._members_of(c, where) for c in colour.components))]
        return self.members[colour]

    def _constant(self, element: ET.Element) -> tuple[Any, ColourSet]:
        ref = element.get("declaration", "")
        if ref not in self.constants:
            raise self.fail(element, f"unknown operator {ref!r}: no enumeration constant, "
                            "partition element or named operator has this id")
        return self.constants[ref]

    def _helper(self, kind: str, key: ColourSet | str, build: Callable[[], dict[Any, Any]],
                label: str) -> str:
        """The name of the helper dict ``kind`` for ``key``, declared on first use."""
        if (kind, key) not in self._helper_names:
            name = self._fresh(f"_{kind}_" + (re.sub(r"\W", "_", label) or "S"))
            self._helper_names[(kind, key)] = name
            self.declarations[name] = build()
        return self._helper_names[(kind, key)]

    # -- terms ------------------------------------------------------------------------------
    def term(self, element: ET.Element) -> tuple[ast.expr, ColourSet | None]:
        """A term as a Python expression and its sort (``None`` when not known)."""
        tag = element.tag
        sort: ColourSet | None
        if tag == "variable":
            ref = element.get("refvariable", "")
            if self._arguments and ref in self._arguments[-1]:
                return self._arguments[-1][ref]
            if ref not in self.variables:
                raise self.fail(element, f"unknown variable {ref!r}")
            name, sort = self.variables[ref]
            return ast.Name(name, ast.Load()), sort
        if tag == "useroperator" and element.get("declaration", "") in self.operators:
            return self._operator(element)
        if tag == "useroperator":
            value, sort = self._constant(element)
            return ast.Constant(value), sort
        if tag == "dotconstant":
            return ast.Tuple([], ast.Load()), None
        if tag == "booleanconstant":
            return ast.Constant(element.get("value") == "true"), None
        if tag == "finiteintrangeconstant":
            return self._range_constant(element)
        if tag == "tuple":
            parts = [self.term(s) for s in self._subterms(element)]
            if not parts:
                raise self.fail(element, "a tuple needs one subterm per component of its "
                                "product sort (a product has at least one)")
            if len(parts) == 1:  # a product of one sort is that sort: its tuple, the value
                return parts[0]
            return ast.Tuple([p for p, _ in parts], ast.Load()), None
        if tag in ("successor", "predecessor"):
            (operand, sort), = self._terms(element, 1)
            return self._shift(element, operand, sort, tag), sort
        if tag == "partitionelementof":
            (operand, _sort), = self._terms(element, 1)
            ref = element.get("refpartition", "")
            if ref not in self.partitions:
                raise self.fail(element, f"unknown partition {ref!r}")
            colour, of = self.partitions[ref]
            helper = self._helper("part", colour, lambda: dict(of), colour.name)
            return self._lookup(helper, operand), colour
        if tag in ("and", "or"):  # n-ary: and() is true, or() is false
            values = [t for t, _ in self._terms(element)]
            if len(values) < 2:
                return (values[0] if values else ast.Constant(tag == "and")), None
            return ast.BoolOp(ast.And() if tag == "and" else ast.Or(), values), None
        if tag == "not":
            (operand, _sort), = self._terms(element, 1)
            return ast.UnaryOp(ast.Not(), operand), None
        if tag == "imply":
            (left, _), (right, _) = self._terms(element, 2)
            return ast.BoolOp(ast.Or(), [ast.UnaryOp(ast.Not(), left), right]), None
        if tag == "numberconstant":
            return ast.Constant(self._int(element)), None
        if tag in _ARITHMETIC:
            return self._arithmetic(element), None
        if tag in ("cardinality", "cardinalityof", "contains"):
            return self._multiset_test(element), None
        if tag in _COMPARE:
            (left, left_sort), (right, right_sort) = self._terms(element, 2)
            sort = left_sort or right_sort
            if tag in _ORDERED and isinstance(sort, EnumSet):
                helper = self._helper("ord", sort, lambda: {
                    v: i for i, v in enumerate(self.members[sort])}, sort.name)
                left, right = self._lookup(helper, left), self._lookup(helper, right)
            return ast.Compare(left, [_COMPARE[tag]()], [right]), None
        raise self.fail(element, f"term <{tag}> is outside the symmetric-net subset tcpn reads")

    def _range_constant(self, element: ET.Element) -> tuple[ast.expr, ColourSet | None]:
        """A ``finiteintrangeconstant``: its value, which must lie in the range it names."""
        value = self._int(element)
        sort_element = element.find("finiteintrange")
        if sort_element is None:
            raise self.fail(element, "a finite int range constant names its range "
                            "(<finiteintrange start end>)")
        sort = self._sort_body(sort_element, "range")
        assert isinstance(sort, IntSet) and sort.low is not None and sort.high is not None
        if not sort.low <= value <= sort.high:
            raise self.fail(element, f"constant {value} is outside its range "
                            f"{sort.low}..{sort.high}")
        return ast.Constant(value), sort

    def _arithmetic(self, element: ET.Element) -> ast.expr:
        """An operator of the standard's integers (``addition``, ``subtraction``, ``mult``,
        ``div``, ``mod`` of two numbers, ``lt``, ``leq``, ``gt``, ``geq`` between them):
        numbers are multiplicities in a symmetric net, so these are closed terms."""
        (left, _), (right, _) = self._terms(element, 2)
        operator = _ARITHMETIC[element.tag]
        if isinstance(operator, ast.cmpop):
            return ast.Compare(left, [operator], [right])
        if isinstance(operator, ast.FloorDiv | ast.Mod) and \
                isinstance(right, ast.Constant) and right.value == 0:
            raise self.fail(element, f"<{element.tag}> by zero")
        return ast.BinOp(left, operator, right)

    def _multiset_test(self, element: ET.Element) -> ast.expr:
        """``cardinality`` (how many values a multiset holds), ``cardinalityof`` (how many
        times a value is in a multiset; either subterm may be the multiset: with two
        single terms both readings agree) and ``contains`` (the first multiset holds the
        second), as expressions over the binding."""
        subterms = self._subterms(element)
        if element.tag == "cardinality":
            if len(subterms) != 1:
                raise self.fail(element, "<cardinality> takes one multiset")
            return _as_expr(cardinality(self.multiset_tree(subterms[0])))
        if len(subterms) != 2:
            raise self.fail(element, f"<{element.tag}> takes two subterms")
        if element.tag == "cardinalityof":
            first, second = subterms
            if second.tag in _MULTISET_TAGS and first.tag not in _MULTISET_TAGS:
                first, second = second, first
            value = self.term(second)[0]
            return _as_expr(count_of(self.multiset_tree(first), value))
        whole, part = (self.multiset_tree(s) for s in subterms)
        tests: list[ast.expr] = [
            ast.Compare(_as_expr(count_of(whole, term)), [ast.GtE()], [_as_expr(count)])
            for term, count in counted(part)]
        if not tests:
            return ast.Constant(True)
        return tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)

    def _operator(self, element: ET.Element) -> tuple[ast.expr, ColourSet | None]:
        """A named operator applied: its definition with each parameter replaced by the
        argument given (the translation of the argument, evaluated once per use)."""
        definition, arguments = self._operator_definition(element)
        self._arguments.append(arguments)
        try:
            return self.term(definition)
        finally:
            self._arguments.pop()

    def _operator_definition(self, element: ET.Element) -> tuple[
            ET.Element, dict[str, tuple[ast.expr, ColourSet | None]]]:
        """The definition of the named operator ``element`` applies, and its parameters'
        arguments (translated in the caller's scope)."""
        declaration = self.operators[element.get("declaration", "")]
        name = declaration.get("name") or declaration.get("id", "")
        parameters = [p for block in declaration.findall("parameter") for p in block
                      if p.tag == "variabledecl"]
        definition = declaration.find("def")
        if definition is None or len(definition) != 1:
            raise self.fail(declaration, f"named operator {name} needs one <def> term")
        arguments = self._terms(element)
        if len(arguments) != len(parameters):
            raise self.fail(element, f"named operator {name} takes {len(parameters)} "
                            f"argument(s), given {len(arguments)}")
        if len(self._arguments) >= MAX_OPERATOR_DEPTH:
            raise self.fail(element, f"named operator {name} nests more than "
                            f"{MAX_OPERATOR_DEPTH} deep (a definition that uses itself?)")
        return definition[0], {p.get("id", ""): a for p, a in zip(parameters, arguments,
                                                                   strict=True)}

    def _shift(self, element: ET.Element, operand: ast.expr, sort: ColourSet | None,
               tag: str) -> ast.expr:
        if sort not in self.cyclic:
            raise self.fail(element, f"<{tag}> of a term whose sort is not a cyclic "
                            "enumeration")
        assert sort is not None
        values = self.members[sort]
        step = 1 if tag == "successor" else -1
        helper = self._helper("succ" if step == 1 else "pred", sort, lambda: {
            v: values[(i + step) % len(values)] for i, v in enumerate(values)}, sort.name)
        return self._lookup(helper, operand)

    def _lookup(self, helper: str, operand: ast.expr) -> ast.expr:
        table = self.declarations[helper]
        if isinstance(operand, ast.Constant) and operand.value in table:
            return ast.Constant(table[operand.value])  # a constant folds
        return ast.Subscript(ast.Name(helper, ast.Load()), operand, ast.Load())

    def _subterms(self, element: ET.Element) -> list[ET.Element]:
        """The argument terms of an operator, one per ``<subterm>``. A subterm whose only
        child is another subterm (the contest's FileSystem-COL wraps arguments twice) is
        that subterm: the redundant wrappers are dropped, at any depth."""
        out = []
        for sub in element.findall("subterm"):
            children = list(sub)
            while len(children) == 1 and children[0].tag == "subterm":
                sub, children = children[0], list(children[0])
            if len(children) != 1:
                raise self.fail(sub, "<subterm> must hold exactly one term")
            out.append(children[0])
        return out

    def _terms(self, element: ET.Element, n: int | None = None
               ) -> list[tuple[ast.expr, ColourSet | None]]:
        subterms = self._subterms(element)
        if n is not None and len(subterms) != n:
            raise self.fail(element, f"<{element.tag}> takes {n} subterm(s), not "
                            f"{len(subterms)}")
        return [self.term(s) for s in subterms]

    def _int(self, element: ET.Element) -> int:
        try:
            return int(element.get("value", ""))
        except ValueError:
            raise self.fail(element, f"<{element.tag}> needs an integer value") from None

    # -- multisets --------------------------------------------------------------------------
    def multiset_tree(self, element: ET.Element) -> Multiset:
        """A multiset term as a tree of sums, differences and multiples, ``all`` expanded.

        ``add`` and ``subtract`` take any number of subterms (``subtract`` from the left:
        ``a - b - c``), ``numberof`` and ``scalarproduct`` a number and a multiset."""
        tag = element.tag
        if tag == "add":
            return Multiset.add([self.multiset_tree(s) for s in self._subterms(element)])
        if tag == "subtract":  # n-ary, from the left: a - b - c
            subterms = self._subterms(element)
            if len(subterms) < 2:
                raise self.fail(element, "takes two or more subterms, not "
                                f"{len(subterms)}")
            return Multiset.subtract([self.multiset_tree(s) for s in subterms])
        if tag == "empty":  # the empty multiset of a sort
            if len(element) != 1:
                raise self.fail(element, "takes one sort")
            self.sort(element[0])
            return Multiset.add([])
        if tag == "useroperator" and element.get("declaration", "") in self.operators:
            definition, arguments = self._operator_definition(element)
            self._arguments.append(arguments)
            try:  # a named operator may stand for a multiset (its definition one)
                return self.multiset_tree(definition)
            finally:
                self._arguments.pop()
        if tag in ("numberof", "scalarproduct"):
            subterms = self._subterms(element)
            if len(subterms) != 2:
                raise self.fail(element, f"<{tag}> takes a number and a multiset")
            return Multiset.scale(self._number(subterms[0]), self.multiset_tree(subterms[1]))
        return Multiset.add([Multiset.leaf(t) if n == 1 else Multiset.scale(n, Multiset.leaf(t))
                             for t, n in self._expanded(element)])

    def _number(self, element: ET.Element) -> int:
        """A closed natural-number term (``numberconstant``, ``cardinality`` of a closed
        multiset...), the multiplier of ``numberof`` and ``scalarproduct``."""
        tree, _sort = self.term(element)
        value = self._value(element, tree)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(element, f"a multiplicity must be a natural number, not {value!r}")
        return value

    def _value(self, element: ET.Element, tree: ast.expr) -> Any:
        """The value of a closed term (a literal read at once: ``all`` of a large sort
        gives 10^5 of them)."""
        if isinstance(tree, ast.Constant):
            return tree.value
        if isinstance(tree, ast.Tuple):
            parts = [e for e in tree.elts if isinstance(e, ast.Constant)]
            if len(parts) == len(tree.elts):
                return tuple(e.value for e in parts)
        try:
            code = compile(ast.fix_missing_locations(ast.Expression(tree)), "<pnml>", "eval")
            return eval(code, {"__builtins__": {"max": max}}, dict(self.declarations))
        except NameError as exc:
            raise self.fail(element, f"the term must be closed (no variable): {exc}") from None
        except (KeyError, TypeError) as exc:
            raise self.fail(element, f"the term has no value: {exc!r}") from None

    def _expanded(self, element: ET.Element) -> list[tuple[ast.expr, int]]:
        """The terms ``element`` stands for, with their multiplicities: one, or one per
        member where ``all`` appears.

        A tuple whose components are multisets (``<p, all>``, ``<p, b1 + b2>``,
        ``<p, 2'b1>``) stands for the product of its components: every choice of one term
        per component, the multiplicities multiplied (``<p, b1 + b2>`` is
        ``<p, b1> + <p, b2>``), as the contest's own unfoldings read it."""
        tag = element.tag
        if tag == "all":
            sorts = list(element)
            if len(sorts) != 1:
                raise self.fail(element, "<all> takes one sort")
            return [(_literal(v), 1) for v in self._members_of(self.sort(sorts[0]), element)]
        if tag == "useroperator" and element.get("declaration") in self.partition_members:
            # a partition element where a multiset of its sort is written: its members
            return [(_literal(v), 1)
                    for v in self.partition_members[element.get("declaration", "")]]
        if not self._holds_multiset(element):
            return [(self.term(element)[0], 1)]
        if tag == "tuple":
            choices = [self._expanded(s) for s in self._subterms(element)]
            if len(choices) == 1:  # a product of one sort is that sort (see term)
                return choices[0]
            return [(ast.Tuple([t for t, _ in parts], ast.Load()), math.prod(n for _, n in parts))
                    for parts in itertools.product(*choices)]
        if tag == "add":
            return [found for s in self._subterms(element) for found in self._expanded(s)]
        if tag in ("numberof", "scalarproduct"):
            subterms = self._subterms(element)
            if len(subterms) != 2:
                raise self.fail(element, f"<{tag}> takes a number and a multiset")
            factor = self._number(subterms[0])
            return [(t, factor * n) for t, n in self._expanded(subterms[1])]
        if tag == "empty":
            return []
        raise self.fail(element, f"<{tag}> inside a tuple's component: only sums, multiples "
                        "and <all> are read there (a tuple of multisets is their product)")

    def _holds_multiset(self, element: ET.Element) -> bool:
        """Whether ``element`` is or holds a multiset: an operator of multisets, or a
        partition element standing for its members."""
        return any(e.tag in _MULTISET_TAGS or (e.tag == "useroperator" and e.get(
            "declaration") in self.partition_members) for e in element.iter())

    def values(self, element: ET.Element) -> list[tuple[Any, int]]:
        """A closed multiset (an initial marking) as ``(value, count)``, counts > 0: nested
        differences truncated where they are (``a + (b - a)`` is ``a + b``)."""
        counts = evaluate(self.multiset_tree(element), lambda tree: self._value(element, tree))
        return [(v, n) for v, n in counts.items() if n > 0]


#: the tags of multiset operators (a multiset, not a single term)
_MULTISET_TAGS = ("add", "subtract", "all", "numberof", "scalarproduct", "empty")


def _as_expr(count: Count) -> ast.expr:
    return ast.Constant(count) if isinstance(count, int) else count


def _literal(value: Any) -> ast.expr:
    if isinstance(value, tuple):
        return ast.Tuple([_literal(v) for v in value], ast.Load())
    return ast.Constant(value)
