"""CPN Tools' ASK-CTL queries, read into tcpn formulas where they use the standard operators.

ASK-CTL (Christensen and Mortensen) writes CTL as SML terms over *node functions*:

================================  ====================
ASK-CTL                           tcpn
================================  ====================
``TT``, ``FF``                    ``true``, ``false``
``NOT(A)``, ``AND(A, B)``,        ``!A``, ``A & B``, ``A | B``, ``A -> B``,
``OR(A, B)``, ``IMP(A, B)``,      ``A <-> B``, ``(A & !B) | (!A & B)``
``EQV(A, B)``, ``XOR(A, B)``
``POS(A)``, ``INV(A)``            ``EF A``, ``AG A``
``EV(A)``, ``ALONG(A)``           ``AF A``, ``EG A``
``EXIST_NEXT(A)``,                ``EX A``, ``AX A``
``FORALL_NEXT(A)``
``EXIST_UNTIL(A, B)``,            ``E[A U B]``, ``A[A U B]``
``FORALL_UNTIL(A, B)``
``NF("label", f)``                the node function ``f`` as an atom
================================  ====================

A node function is SML, which tcpn does not run; ``NF`` reads these forms:

* a name given in ``functions`` (a formula, or a Python ``(marking, clock) -> bool``);
* ``fn n => (OutArcs n) = []`` (a dead marking), or a name whose definition in the text
  is that (``fun IsDead n = (OutArcs n) = []``);
* ``fn n => Mark.Page'Place 1 n = empty`` / ``<> empty`` (the place is empty / not);
* ``fn n => size (Mark.Page'Place 1 n) OP k`` with ``OP`` among ``= <> < <= > >=``;
* a string: a formula in tcpn's text grammar (``NF("q", "tokens(q) <= 3")``).

Arc formulas (``AF``, ``MODAL``, ``EXIST_MODAL`` over arc functions) are refused with a
clear message. The text may hold ``val name = ...;`` definitions and an ``eval_node name
InitNode`` line: the formula evaluated there is the one returned.

>>> from tcpn.petrinets.checking.text import to_text
>>> to_text(read_askctl('INV(NOT(NF("dead", fn n => (OutArcs n) = [])))'))
'AG !deadlock'
>>> to_text(read_askctl("POS(NF(\\"full\\", fn n => size (Mark.Top'buffer 1 n) >= 3))"))
'EF tokens(buffer) >= 3'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from tcpn.errors import InputError
from tcpn.limits import integer_digits_problem, limit_problem
from tcpn.petrinets.checking.formulas import (
    AF,
    AG,
    AX,
    EF,
    EG,
    EX,
    A,
    And,
    Bool,
    Compare,
    Const,
    Deadlock,
    E,
    Formula,
    Not,
    Or,
    Predicate,
    Tokens,
    U,
)
from tcpn.petrinets.checking.text import parse

if TYPE_CHECKING:
    from tcpn.petrinets.net import PetriNet

__all__ = ["read_askctl"]

_UNARY: dict[str, Callable[[Formula], Formula]] = {
    "NOT": Not, "POS": EF, "INV": AG, "EV": AF, "ALONG": EG, "EXIST_NEXT": EX,
    "FORALL_NEXT": AX,
}
_BINARY: dict[str, Callable[[Formula, Formula], Formula]] = {
    "AND": lambda a, b: And((a, b)), "OR": lambda a, b: Or((a, b)),
    "IMP": lambda a, b: Or((Not(a), b)),
    "EQV": lambda a, b: Or((And((a, b)), And((Not(a), Not(b))))),
    "XOR": lambda a, b: Or((And((a, Not(b))), And((Not(a), b)))),
    "EXIST_UNTIL": lambda a, b: E(U(a, b)), "FORALL_UNTIL": lambda a, b: A(U(a, b)),
}
_ARC = {"AF", "MODAL", "EXIST_MODAL", "FORALL_MODAL", "AND_ARC", "ANY"}
_SML_COMPARE = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _Reader:
    def __init__(self, text: str, net: PetriNet | None,
                 functions: Mapping[str, Formula | Callable[..., bool]]):
        self.text = text
        self.net = net
        self.functions = functions
        self.values: dict[str, str] = {}
        self.node_functions: dict[str, str] = {}
        self.pos = 0
        self.depth = 0

    def fail(self, message: str, at: int | None = None) -> InputError:
        where = self.pos if at is None else at
        line = self.text.count("\n", 0, where) + 1
        column = where - (self.text.rfind("\n", 0, where) + 1) + 1
        return InputError(f"ASK-CTL query, line {line}, column {column}: {message}")

    # -- lexing helpers ---------------------------------------------------------------------
    def skip(self) -> None:
        while True:
            match = re.compile(r"\s+|\(\*.*?\*\)", re.S).match(self.text, self.pos)
            if not match or not match.group():
                return
            self.pos = match.end()

    def expect(self, token: str) -> None:
        self.skip()
        if not self.text.startswith(token, self.pos):
            raise self.fail(f"expected {token!r}")
        self.pos += len(token)

    def word(self) -> str:
        self.skip()
        match = re.compile(r"[A-Za-z_][A-Za-z0-9_']*").match(self.text, self.pos)
        if not match:
            raise self.fail("expected an ASK-CTL operator or a name")
        self.pos = match.end()
        return match.group()

    def string(self) -> str:
        self.skip()
        match = re.compile(r'"((?:[^"\\]|\\.)*)"').match(self.text, self.pos)
        if not match:
            raise self.fail("expected a string")
        self.pos = match.end()
        return match.group(1).replace('\\"', '"')

    def argument_text(self) -> tuple[str, int]:
        """The raw text up to the ``,`` or ``)`` that closes this argument."""
        self.skip()
        start, depth = self.pos, 0
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif char == "," and depth == 0:
                break
            self.pos += 1
        return self.text[start:self.pos].strip(), start

    # -- the query ---------------------------------------------------------------------------
    def read(self) -> Formula:
        body = self.text
        for match in re.finditer(r"\bfun\s+([A-Za-z_][\w']*)\s+\w+\s*=\s*([^;]*);", body):
            self.node_functions[match.group(1)] = match.group(2).strip()
        for match in re.finditer(r"\bval\s+([A-Za-z_][\w']*)\s*=\s*([^;]*);", body):
            self.values[match.group(1)] = match.group(2).strip()
        evaluated = re.search(r"\beval_node\s+([A-Za-z_][\w']*|\()", body)
        if evaluated:
            name = evaluated.group(1)
            if name in self.values:
                return self.sub(self.values[name], self.text.find(self.values[name]))
            if name == "(":
                self.pos = evaluated.start(1)
                return self.formula()
            raise self.fail(f"eval_node names {name!r}, which no val defines",
                            evaluated.start(1))
        if self.values:
            last = list(self.values.values())[-1]
            return self.sub(last, self.text.rfind(last))
        definitions = list(re.finditer(r"\bfun\b[^;]*;", body))
        self.pos = definitions[-1].end() if definitions else 0
        formula = self.formula()
        self.skip()
        if self.text[self.pos:].strip(" ;\n"):
            raise self.fail("unexpected text after the formula")
        return formula

    def sub(self, text: str, offset: int) -> Formula:
        self.pos = offset
        return self.formula()

    def formula(self) -> Formula:
        """The formula at ``pos``; nesting (operators, and ``val`` names used inside their
        own definitions) deeper than ``limits().expression_depth`` is refused."""
        self.depth += 1
        try:
            problem = limit_problem("expression_depth", self.depth)
            if problem is not None:
                raise self.fail(f"nested too deep: {problem}")
            return self._formula()
        finally:
            self.depth -= 1

    def _formula(self) -> Formula:
        start = self.pos
        name = self.word()
        if name in ("TT", "FF"):
            return Bool(name == "TT")
        if name in self.values:
            saved = self.pos
            found = self.sub(self.values[name], self.text.find(self.values[name]))
            self.pos = saved
            return found
        if name in _ARC:
            raise self.fail(f"{name} is an arc formula: tcpn reads ASK-CTL state formulas "
                            "only (use EXIST_NEXT/FORALL_NEXT with fireable(...) instead)",
                            start)
        if name == "NF":
            self.expect("(")
            self.string()
            self.expect(",")
            atom = self.node_function()
            self.expect(")")
            return atom
        if name in _UNARY:
            self.expect("(")
            operand = self.formula()
            self.expect(")")
            return _UNARY[name](operand)
        if name in _BINARY:
            self.expect("(")
            left = self.formula()
            self.expect(",")
            right = self.formula()
            self.expect(")")
            return _BINARY[name](left, right)
        raise self.fail(f"unknown ASK-CTL operator {name!r}", start)

    def node_function(self) -> Formula:
        self.skip()
        if self.text.startswith('"', self.pos):
            at = self.pos
            source = self.string()
            try:
                return parse(source, self.net)
            except InputError as exc:
                raise self.fail(f"in the formula {source!r}: {exc}", at) from None
        text, at = self.argument_text()
        return self.sml_atom(text, at)

    def sml_atom(self, text: str, at: int) -> Formula:
        if text in self.functions:
            found = self.functions[text]
            return found if isinstance(found, Formula) else Predicate(text, found)
        if re.fullmatch(r"[A-Za-z_][\w']*", text) and text in self.node_functions:
            return self.sml_atom("fn n => " + self.node_functions[text], at)
        match = re.fullmatch(r"fn\s+(\w+)\s*=>\s*(.*)", text, re.S)
        if not match:
            raise self.fail(f"node function {text!r}: give its name in functions=..., or "
                            "write it as one of the forms tcpn reads (see tcpn.petrinets."
                            "askctl)", at)
        var, body = match.group(1), " ".join(match.group(2).split())
        if re.fullmatch(rf"\(?\s*OutArcs\s+{var}\s*\)?\s*=\s*\[\]", body):
            return Deadlock()
        mark = rf"Mark\.(\w+)'(\w+)\s+\d+\s+{var}"
        match = re.fullmatch(rf"\(?\s*{mark}\s*\)?\s*(=|<>)\s*empty", body)
        if match:
            place = self.place(match.group(1), match.group(2), at)
            op = "==" if match.group(3) == "=" else "!="
            return Compare(op, Tokens((place,)), Const(0))  # type: ignore[arg-type]
        match = re.fullmatch(rf"size\s*\(\s*{mark}\s*\)\s*(<>|<=|>=|=|<|>)\s*(\d+)", body)
        if match:
            place = self.place(match.group(1), match.group(2), at)
            problem = integer_digits_problem(match.group(4))
            if problem is not None:
                raise self.fail(f"node function {text!r}: {problem}", at)
            return Compare(_SML_COMPARE[match.group(3)], Tokens((place,)),  # type: ignore[arg-type]
                           Const(int(match.group(4))))
        raise self.fail(f"node function {text!r} is SML tcpn does not evaluate: give it by "
                        "name in functions=..., or as a tcpn formula string", at)

    def place(self, page: str, name: str, at: int) -> str:
        if self.net is None:
            return name
        for candidate in (name, f"{page}_{name}", f"{page}.{name}"):
            if candidate in self.net.places:
                return candidate
        raise self.fail(f"no place {page}'{name} in net {self.net.name}", at)


def read_askctl(text: str, net: PetriNet | None = None,
                functions: Mapping[str, Formula | Callable[..., bool]] | None = None
                ) -> Formula:
    """The formula of an ASK-CTL query (see the module docstring for what is read).

    With ``net``, places named by ``Mark.Page'Place`` must exist (as ``Place``, or as
    ``Page_Place`` the way the CPN Tools importer names places of sub-pages). Errors are
    :class:`InputError` naming the line and column.
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError("ASK-CTL query: empty text")
    return _Reader(text, net, functions or {}).read()

