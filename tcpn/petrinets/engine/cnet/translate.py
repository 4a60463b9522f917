"""Typed inscriptions to C: the subset of colour sets and expressions the C engine runs.

A token value is a row of 64-bit slots, one per scalar component: integers (``IntSet``),
booleans (``BoolSet``, 0 or 1), unit (``UnitSet``, always 0) and enumerations (``EnumSet``,
the index of the member), alone or in a ``ProductSet`` of them. Expressions are ints and
bools built from names, constants, arithmetic (``+ - * // %``, with Python's meaning of
``//`` and ``%``; 64-bit overflow is an error), comparisons, ``and``/``or``/``not``,
``x if c else y``, ``abs``, ``min`` and ``max``. Whatever falls outside raises
:class:`Unsupported`, whose message names the inscription and the reason.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass
from typing import Any

from tcpn.petrinets.colours import BoolSet, ColourSet, EnumSet, IntSet, ProductSet, UnitSet

__all__ = ["Scalar", "Translator", "Typed", "Unsupported", "decode", "encode", "layout"]

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Unsupported(Exception):
    """A net element the C engine does not run; the message names it and says why."""


#: a scalar colour set: one slot of a token value
Scalar = IntSet | BoolSet | UnitSet | EnumSet


def layout(colour: ColourSet, where: str) -> list[Scalar]:
    """The scalar components of ``colour``, one per slot."""
    if isinstance(colour, IntSet | BoolSet | UnitSet | EnumSet):
        return [colour]
    if isinstance(colour, ProductSet) and all(
            isinstance(c, IntSet | BoolSet | UnitSet | EnumSet) for c in colour.components):
        return list(colour.components)  # type: ignore[arg-type]
    raise Unsupported(f"{where}: colour set {colour.describe()} "
                      f"({type(colour).__name__}) is outside the C engine's subset")


def _encode_scalar(colour: Scalar, value: Any) -> int:
    if isinstance(colour, UnitSet):
        return 0
    if isinstance(colour, EnumSet):
        return colour.values.index(value)
    slot = int(value)
    if not INT64_MIN <= slot <= INT64_MAX:
        raise OverflowError(f"{value!r} does not fit in 64 bits")
    return slot


def encode(slots: list[Scalar], product: bool, value: Any) -> tuple[int, ...]:
    """A token value as its slots (``product``: the place holds tuples)."""
    if not product:
        return (_encode_scalar(slots[0], value),)
    return tuple(_encode_scalar(c, v) for c, v in zip(slots, value, strict=True))


def _decode_scalar(colour: Scalar, slot: int) -> Any:
    if isinstance(colour, UnitSet):
        return ()
    if isinstance(colour, BoolSet):
        return bool(slot)
    if isinstance(colour, EnumSet):
        return colour.values[slot]
    return slot


def decode(slots: list[Scalar], product: bool, row: tuple[int, ...]) -> Any:
    """The token value of a row of slots (``product``: the place holds tuples)."""
    if not product:
        return _decode_scalar(slots[0], row[0])
    return tuple(_decode_scalar(c, s) for c, s in zip(slots, row, strict=True))


@dataclass(frozen=True)
class Typed:
    """A C expression and its type: ``"int"``, ``"bool"``, ``"unit"`` or an ``EnumSet``."""

    code: str
    type: Any


def _kind(colour: Scalar) -> Any:
    if isinstance(colour, IntSet):
        return "int"
    if isinstance(colour, BoolSet):
        return "bool"
    if isinstance(colour, UnitSet):
        return "unit"
    return colour


_ARITH = {ast.Add: "py_add", ast.Sub: "py_sub", ast.Mult: "py_mul", ast.FloorDiv: "py_floordiv",
          ast.Mod: "py_mod"}
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!="}
_BITS = {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}


class Translator:
    """Translates one transition's inscriptions, given the C names and types of its variables.

    ``variables`` maps a transition variable to ``(C expression, type)``; ``scope`` holds
    the declarations visible to the transition (ints, bools and enumeration members
    become constants).
    """

    def __init__(self, variables: dict[str, tuple[str, Any]], scope: dict[str, Any]):
        self.variables = variables
        self.scope = scope

    def expression(self, text: str, where: str) -> Typed:
        """``text`` (a Python expression) as C."""
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as exc:
            raise Unsupported(f"{where}: {text!r} does not parse: {exc.msg}") from None
        return self._expr(tree, where, text)

    def value(self, text: str, slots: list[Scalar], where: str) -> list[Typed]:
        """``text`` as the slots of a token of a place laid out as ``slots``."""
        tree = ast.parse(text.strip(), mode="eval").body
        if len(slots) == 1 and not (isinstance(tree, ast.Tuple) and len(tree.elts) == 1):
            parts = [tree]
        elif isinstance(tree, ast.Tuple) and len(tree.elts) == len(slots):
            parts = list(tree.elts)
        else:
            raise Unsupported(f"{where}: {text!r} is not a tuple of {len(slots)} components")
        out = []
        for part, colour in zip(parts, slots, strict=True):
            typed = self._expr(part, where, text, expect=colour)
            self._check_type(typed, colour, where, text)
            out.append(typed)
        return out

    @staticmethod
    def _check_type(typed: Typed, colour: Scalar, where: str, text: str) -> None:
        want = _kind(colour)
        if typed.type is want or typed.type == want:
            return
        raise Unsupported(f"{where}: {text!r} gives a {_name(typed.type)} where the place "
                          f"holds {colour.describe()}")

    # -- expressions ----------------------------------------------------------------------
    def _constant(self, value: Any, where: str, text: str, expect: Any = None) -> Typed:
        if type(value) is bool:
            return Typed("1" if value else "0", "bool")
        if type(value) is int:
            if not INT64_MIN < value <= INT64_MAX:
                raise Unsupported(f"{where}: {value} in {text!r} does not fit in 64 bits")
            return Typed(f"INT64_C({value})", "int")
        if value == () and isinstance(expect, UnitSet):
            return Typed("0", "unit")
        if isinstance(value, str) and isinstance(expect, EnumSet) and value in expect.values:
            return Typed(str(expect.values.index(value)), expect)
        raise Unsupported(f"{where}: the constant {value!r} in {text!r} is outside the C "
                          "engine's subset (ints, bools, enumeration members)")

    def _expr(self, node: ast.AST, where: str, text: str, expect: Any = None) -> Typed:
        if isinstance(node, ast.Constant):
            return self._constant(node.value, where, text, expect)
        if isinstance(node, ast.Tuple) and not node.elts and isinstance(expect, UnitSet):
            return Typed("0", "unit")
        if isinstance(node, ast.Name):
            if node.id in self.variables:
                code, kind = self.variables[node.id]
                return Typed(code, kind)
            if node.id in self.scope:
                return self._constant(self.scope[node.id], where, text, expect)
            raise Unsupported(f"{where}: the name {node.id!r} in {text!r} is not a variable "
                              "or a declared int, bool or enumeration member")
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id in self.scope and node.value.id not in self.variables:
            return self._lookup(node, self.scope[node.value.id], where, text, expect)
        if isinstance(node, ast.BinOp):
            left = self._expr(node.left, where, text)
            right = self._expr(node.right, where, text)
            op = type(node.op)
            if op in _BITS and left.type == right.type == "bool":
                return Typed(f"({left.code} {_BITS[op]} {right.code})", "bool")
            if op in _ARITH and _numeric(left) and _numeric(right):
                return Typed(f"{_ARITH[op]}(s, {left.code}, {right.code})", "int")
            if op in _BITS and _numeric(left) and _numeric(right):
                return Typed(f"({left.code} {_BITS[op]} {right.code})", "int")
            raise self._outside(node, where, text)
        if isinstance(node, ast.UnaryOp):
            operand = self._expr(node.operand, where, text)
            if isinstance(node.op, ast.Not) and operand.type in ("int", "bool"):
                return Typed(f"(!{operand.code})", "bool")
            if isinstance(node.op, ast.USub) and _numeric(operand):
                return Typed(f"py_neg(s, {operand.code})", "int")
            if isinstance(node.op, ast.UAdd) and _numeric(operand):
                return Typed(f"((int64_t){operand.code})", "int")
            raise self._outside(node, where, text)
        if isinstance(node, ast.Compare):
            return self._compare(node, where, text)
        if isinstance(node, ast.BoolOp):
            values = [self._expr(v, where, text) for v in node.values]
            if any(v.type != "bool" for v in values):
                raise Unsupported(f"{where}: {ast.unparse(node)!r} in {text!r}: 'and'/'or' "
                                  "of non-booleans is outside the C engine's subset")
            joiner = " && " if isinstance(node.op, ast.And) else " || "
            return Typed("(" + joiner.join(v.code for v in values) + ")", "bool")
        if isinstance(node, ast.IfExp):
            test = self._expr(node.test, where, text)
            body = self._expr(node.body, where, text, expect)
            orelse = self._expr(node.orelse, where, text, expect)
            if test.type not in ("int", "bool") or body.type != orelse.type:
                raise self._outside(node, where, text)
            return Typed(f"({test.code} ? {body.code} : {orelse.code})", body.type)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("abs", "min", "max") and node.func.id not in self.scope \
                and node.func.id not in self.variables and not node.keywords:
            args = [self._expr(a, where, text) for a in node.args]
            if not all(_numeric(a) for a in args):
                raise self._outside(node, where, text)
            if node.func.id == "abs" and len(args) == 1:
                a = args[0].code
                return Typed(f"({a} < 0 ? py_neg(s, {a}) : (int64_t){a})", "int")
            if node.func.id in ("min", "max") and len(args) == 2 \
                    and args[0].type == args[1].type == "int":
                a, b = args[0].code, args[1].code
                # Python returns the first of equal arguments; for ints the value is the same
                sign = "<" if node.func.id == "min" else ">"
                return Typed(f"({b} {sign} {a} ? {b} : {a})", "int")
            raise self._outside(node, where, text)
        raise self._outside(node, where, text)

    def _lookup(self, node: ast.Subscript, table: Any, where: str, text: str,
                expect: Any) -> Typed:
        """``table[index]``: a declared dict from every member of an enumeration to ints,
        bools or members of one enumeration (the contest's ``_succ_X``, ``_pred_X`` and
        ``_ord_X``), as a constant C array indexed by the member's slot."""
        index = self._expr(node.slice, where, text)
        if not isinstance(table, dict) or not isinstance(index.type, EnumSet) \
                or set(table) != set(index.type.values):
            raise Unsupported(f"{where}: {ast.unparse(node)!r} in {text!r}: a lookup is in the "
                              "C engine's subset when it maps every member of the index's "
                              "enumeration")
        values = [table[member] for member in index.type.values]
        kind: Any = None
        if all(type(v) is bool for v in values):
            kind, codes = "bool", ["1" if v else "0" for v in values]
        elif all(type(v) is int and INT64_MIN < v <= INT64_MAX for v in values):
            kind, codes = "int", [f"INT64_C({v})" for v in values]
        else:
            for enum in (expect, index.type):
                if isinstance(enum, EnumSet) and all(
                        isinstance(v, str) and v in enum.values for v in values):
                    kind, codes = enum, [str(enum.values.index(v)) for v in values]
                    break
        if kind is None:
            raise Unsupported(f"{where}: {ast.unparse(node)!r} in {text!r}: the table's values "
                              "are not all ints, bools or members of one enumeration")
        return Typed(f"((const int64_t[]){{{', '.join(codes)}}})[{index.code}]", kind)

    def _compare(self, node: ast.Compare, where: str, text: str) -> Typed:
        operands = [node.left, *node.comparators]
        # an enumeration member spelled as a string compares with an enumeration value:
        # type the other operands first, then the strings after their neighbour
        strings = {i for i, o in enumerate(operands)
                   if isinstance(o, ast.Constant) and isinstance(o.value, str)}
        typed: list[Typed | None] = [None if i in strings else self._expr(o, where, text)
                                     for i, o in enumerate(operands)]
        for i in sorted(strings):
            neighbours = [typed[j] for j in (i - 1, i + 1) if 0 <= j < len(typed)]
            enum = next((n.type for n in neighbours
                         if n is not None and isinstance(n.type, EnumSet)), None)
            typed[i] = self._constant(operands[i].value, where, text,  # type: ignore[attr-defined]
                                      enum)
        parts = []
        for (a, b), op in zip(itertools.pairwise(typed), node.ops, strict=True):
            assert a is not None and b is not None
            symbol = _COMPARE.get(type(op))
            equality = isinstance(op, ast.Eq | ast.NotEq)
            comparable = (_numeric(a) and _numeric(b)) or (equality and a.type == b.type and (
                isinstance(a.type, EnumSet) or a.type == "unit"))
            if symbol is None or not comparable:
                raise self._outside(node, where, text)
            parts.append(f"({a.code} {symbol} {b.code})")
        return Typed("(" + " && ".join(parts) + ")", "bool")

    @staticmethod
    def _outside(node: ast.AST, where: str, text: str) -> Unsupported:
        return Unsupported(f"{where}: {ast.unparse(node)!r} in {text!r} is outside the C "
                           "engine's typed subset")


def _numeric(typed: Typed) -> bool:
    return typed.type in ("int", "bool")


def _name(kind: Any) -> str:
    return kind.describe() if isinstance(kind, ColourSet) else kind

