"""Read the Model Checking Contest's property files into :mod:`tcpn.petrinets.checking.formulas`.

A contest property file (``CTLCardinality.xml``, ``LTLFireability.xml``, ``UpperBounds.xml``
...) is a ``<property-set>`` in the ``http://mcc.lip6.fr/`` namespace; each ``<property>``
has an ``<id>`` and a ``<formula>``. The formula language: ``all-paths``/``exists-path``
(:class:`~tcpn.petrinets.checking.formulas.A`/:class:`~tcpn.petrinets.checking.formulas.E`),
``globally``,
``finally``, ``next``, ``until`` (children ``before`` and ``reach``), ``negation``,
``conjunction``, ``disjunction``, ``true``/``false``, the atoms ``is-fireable`` (any of the
listed transitions is enabled) and ``integer-le`` over ``tokens-count`` (the summed tokens
of the listed places) or ``integer-constant``; an UpperBounds property is a
``place-bound`` (the largest summed count of its places over the reachable markings), read
as a :class:`~tcpn.petrinets.checking.formulas.Tokens` expression. Names are the PNML ``id`` s.

>>> text = b'''<property-set xmlns="http://mcc.lip6.fr/"><property><id>f-00</id>
... <formula><exists-path><finally><is-fireable><transition>t1</transition>
... </is-fireable></finally></exists-path></formula></property></property-set>'''
>>> read_properties(text)[0]
ContestProperty(id='f-00', formula=E(path=F(operand=Fireable(transitions=('t1',)))), bound=None)
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from tcpn.errors import InputError
from tcpn.limits import integer_digits_problem, limit_problem
from tcpn.petrinets.checking.formulas import (
    A,
    And,
    Bool,
    Compare,
    Const,
    E,
    F,
    Fireable,
    Formula,
    G,
    Not,
    Numeric,
    Or,
    Tokens,
    U,
    X,
)
from tcpn.petrinets.exchange.cpn_import import parse_xml

__all__ = ["ContestProperty", "read_properties"]

#: The largest contest property files are tens of MB (thousands of fireability atoms).
MAX_PROPERTY_BYTES = 500_000_000


@dataclass(frozen=True)
class ContestProperty:
    """One property of a contest file: a formula, or for UpperBounds the places whose
    summed tokens are bounded (``bound``)."""

    id: str
    formula: Formula | None
    bound: Tokens | None = None


def read_properties(source: str | Path | bytes) -> list[ContestProperty]:
    """The properties of a contest property file, in file order.

    Raises :class:`~tcpn.errors.InputError` naming the file, the line and the element for
    anything outside the contest's formula language.
    """
    if isinstance(source, bytes):
        data, name = source, "<property file>"
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(f"{path}: no such property file")
        if path.stat().st_size > MAX_PROPERTY_BYTES:
            raise InputError(f"{path}: larger than {MAX_PROPERTY_BYTES} bytes")
        data, name = path.read_bytes(), str(path)
    root, lines = parse_xml(data, name)
    return _Reader(name, lines).read(root)


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


class _Reader:
    """Reads one file strictly: every element is one the reader uses, so nothing is dropped
    (a ``<true>`` holding a subtree, text beside child elements, an element inside a name)."""

    def __init__(self, source: str, lines: dict[ET.Element, int]):
        self.source, self.lines = source, lines
        self.property_id: str | None = None

    def fail(self, element: ET.Element, message: str) -> InputError:
        line = self.lines.get(element)
        where = f"{self.source}, line {line}" if line else self.source
        if self.property_id is not None:
            where += f": property {self.property_id!r}"
        return InputError(f"{where}: <{_local(element.tag)}>: {message}")

    def children(self, element: ET.Element) -> list[ET.Element]:
        """The child elements that carry meaning; text beside them is refused."""
        for text in (element.text, *(c.tail for c in element)):
            if text is not None and text.strip():
                raise self.fail(element, f"holds text {text.strip()[:40]!r} beside its "
                                "child elements")
        return [c for c in element if _local(c.tag) not in ("description", "explanation")]

    def text(self, element: ET.Element) -> str:
        """The text of a leaf (a name, a number, an id): child elements are refused."""
        if len(element):
            raise self.fail(element, f"holds a <{_local(element[0].tag)}> element; it "
                            "takes only text")
        return (element.text or "").strip()

    def only(self, element: ET.Element) -> ET.Element:
        kids = self.children(element)
        if len(kids) != 1:
            raise self.fail(element, f"expected one child element, found {len(kids)}")
        return kids[0]

    def read(self, root: ET.Element) -> list[ContestProperty]:
        if _local(root.tag) != "property-set":
            raise self.fail(root, "not a contest property file (expected <property-set>)")
        found: list[ContestProperty] = []
        first_line: dict[str, int | None] = {}
        for prop in self.children(root):
            self.property_id = None
            if _local(prop.tag) != "property":
                raise self.fail(prop, "expected <property>")
            parts = self.children(prop)
            ids = [c for c in parts if _local(c.tag) == "id"]
            formulas = [c for c in parts if _local(c.tag) == "formula"]
            if len(ids) != 1 or len(formulas) != 1 or not self.text(ids[0]):
                raise self.fail(prop, "a property needs one <id> and one <formula>")
            ident = self.text(ids[0])
            if ident in first_line:
                raise self.fail(ids[0], f"property id {ident!r} is given twice (first at "
                                f"line {first_line[ident]})")
            first_line[ident] = self.lines.get(ids[0])
            self.property_id = ident
            for extra in parts:
                if _local(extra.tag) not in ("id", "formula"):
                    raise self.fail(extra, "is not part of a contest property")
            body = self.only(formulas[0])
            if _local(body.tag) == "place-bound":
                found.append(ContestProperty(ident, None, Tokens(self.names(body, "place"))))
            else:
                found.append(ContestProperty(ident, self.formula(body)))
        self.property_id = None
        if not found:
            raise self.fail(root, "no <property>: the file asks nothing")
        return found

    def names(self, element: ET.Element, tag: str) -> tuple[str, ...]:
        """The ``<tag>`` names listed in ``element``: none is a sum of nothing (an empty
        ``<place-bound/>`` or ``<tokens-count/>`` is 0, an empty ``<is-fireable/>`` false),
        as the contest's own answers read the empty lists its 2021 Sudoku files hold."""
        kids = self.children(element)
        names = tuple(self.text(k) for k in kids)
        if any(_local(k.tag) != tag for k in kids) or not all(names):
            raise self.fail(element, f"expected <{tag}> names only, each with its name")
        return names

    def formula(self, element: ET.Element, depth: int = 1) -> Formula:
        """The formula of ``element``, ``depth`` levels down its property's tree (deeper
        than ``limits().expression_depth`` is refused: the checker recurses over it)."""
        problem = limit_problem("expression_depth", depth)
        if problem is not None:
            raise self.fail(element, f"the formula is nested too deep: {problem}")
        tag = _local(element.tag)
        if tag in ("all-paths", "exists-path"):
            quantifier = A if tag == "all-paths" else E
            return quantifier(self.formula(self.only(element), depth + 1))
        if tag in ("globally", "finally", "next", "negation"):
            operator = {"globally": G, "finally": F, "next": X, "negation": Not}[tag]
            return operator(self.formula(self.only(element), depth + 1))
        if tag == "until":
            kids = self.children(element)
            parts = {_local(c.tag): c for c in kids}
            if set(parts) != {"before", "reach"} or len(kids) != 2:
                raise self.fail(element, "until needs one <before> and one <reach>")
            return U(self.formula(self.only(parts["before"]), depth + 1),
                     self.formula(self.only(parts["reach"]), depth + 1))
        if tag in ("conjunction", "disjunction"):
            kids = self.children(element)
            if not kids:
                raise self.fail(element, "needs at least one operand")
            operands = tuple(self.formula(k, depth + 1) for k in kids)
            if len(operands) == 1:
                return operands[0]
            return And(operands) if tag == "conjunction" else Or(operands)
        if tag in ("true", "false"):
            if self.text(element):
                raise self.fail(element, f"holds text {self.text(element)[:40]!r}; "
                                f"<{tag}/> is a constant")
            return Bool(tag == "true")
        if tag == "is-fireable":
            return Fireable(self.names(element, "transition"))
        if tag == "integer-le":
            kids = self.children(element)
            if len(kids) != 2:
                raise self.fail(element, f"expected two operands, found {len(kids)}")
            return Compare("<=", self.numeric(kids[0]), self.numeric(kids[1]))
        raise self.fail(element, "is not in the contest's formula language")

    def numeric(self, element: ET.Element) -> Numeric:
        tag = _local(element.tag)
        if tag == "tokens-count":
            return Tokens(self.names(element, "place"))
        if tag == "integer-constant":
            text = self.text(element)
            if not re.fullmatch(r"-?[0-9]+", text):
                raise self.fail(element, f"{text[:40]!r} is not an integer")
            problem = integer_digits_problem(text)
            if problem is not None:
                raise self.fail(element, problem)
            return Const(int(text))
        raise self.fail(element, "expected <tokens-count> or <integer-constant>")
