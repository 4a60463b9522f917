"""The text grammar of CTL and LTL formulas: :func:`parse` reads it, :func:`to_text` writes it.

One grammar for both logics (CTL* in shape, as :mod:`~tcpn.petrinets.checking.formulas`):

============================  ===========================================================
``tokens(p)``, ``tokens(p, q)``  token count of a place, or the sum over places
``tokens(p) <= 80``             comparisons ``<= < >= > == !=`` between sums (``+``) of
                                token counts, integers and ``clock()``
``fireable(t)``, ``fireable(t, u)``  one of the transitions can fire next
``deadlock``, ``true``, ``false``  atoms
``pred(name)``                  a Python predicate passed to :func:`parse` by name
``!f``  ``f & g``  ``f | g``     not (also ``not``, ``~``), and (``and``), or (``or``)
``f -> g``, ``f <-> g``          implication (right-associative), equivalence
``A f``, ``E f``                path quantifiers (all paths, some path)
``X f``  ``F f``  ``G f``        next, finally, globally
``f U g``  ``f R g``  ``f W g``  until, release, weak until (right-associative)
``AG f``, ``EF f``, ...         CTL shorthands: ``AX AF AG EX EF EG`` = ``A X f``, ...
``AF<=5 f``, ``EF<=2.5 f``      time-bounded (timed nets): ``AF<=T EF<=T AG<=T EG<=T``
                                (``F<=T``, ``G<=T`` directly under ``A``/``E``); ``T`` a
                                finite number of seconds >= 0
``A[f U g]``, ``E(f U g)``      brackets and parentheses group alike
============================  ===========================================================

Binding, tightest first: unary operators (``! X F G A E``, the shorthands, the
time-bounded ones), then
``U R W``, ``&``, ``|``, ``->``, ``<->``. A keyword ends where a word ends: ``AGX`` is one
unknown word (refused), never ``AG X``. Place and transition names are identifiers
(letters, digits, ``_ . ' -``, not starting with a digit) or double-quoted strings.
Errors are :class:`~tcpn.errors.InputError` naming the column; with ``net=`` given, an
unknown place or transition is named with its column too. A formula nested deeper than
``limits().expression_depth`` levels (:mod:`tcpn.limits`) is refused before it is built.

>>> parse("AG(tokens(q) <= 80)")
A(path=G(operand=Compare(op='<=', left=Tokens(places=('q',), value=None), right=Const(value=80))))
>>> to_text(parse("A[fireable(send) U tokens(acked, lost) >= 3]"))
'A[fireable(send) U tokens(acked, lost) >= 3]'
>>> to_text(parse("A G F (tokens(p) > 0) -> E X deadlock"))
'!AG F tokens(p) > 0 | EX deadlock'
>>> to_text(parse("AF<=5 tokens(delivered) >= 2 & EG<=0.5 !deadlock"))
'AF<=5.0 tokens(delivered) >= 2 & EG<=0.5 !deadlock'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, VisitError

from tcpn.errors import InputError
from tcpn.limits import integer_digits_problem, limit_problem
from tcpn.petrinets.checking.formulas import (
    A,
    And,
    Bool,
    Clock,
    Compare,
    Const,
    Deadlock,
    E,
    F,
    Fireable,
    Formula,
    FWithin,
    G,
    GWithin,
    Not,
    Numeric,
    Or,
    Predicate,
    R,
    Sum,
    Tokens,
    U,
    W,
    X,
    check_bound,
)

if TYPE_CHECKING:
    from tcpn.petrinets.net import PetriNet

__all__ = ["GRAMMAR", "parse", "to_text"]

#: What may follow a word: a keyword glued to letters, digits or a name's characters is
#: part of a longer word (``AGX`` is one word, never ``AG X``); ``->`` may follow directly.
_WORD_END = r"(?![A-Za-z0-9_.']|-(?!>))"

GRAMMAR = r"""
?start: iff
?iff: imp ("<->" imp)?
?imp: or_ ("->" imp)?
?or_: and_ (OR and_)*
?and_: until (AND until)*
?until: unary (BINARY until)?
?unary: NOT unary              -> negation
      | PREFIX unary           -> prefix
      | BOUNDED NUMBER unary   -> bounded
      | atom
?atom: "(" iff ")"
     | "[" iff "]"
     | _TRUE                   -> true
     | _FALSE                  -> false
     | _DEADLOCK               -> deadlock
     | _FIREABLE "(" names ")"  -> fireable
     | _PRED "(" name ")"      -> predicate
     | sum CMP sum             -> compare
sum: term ("+" term)*
?term: _TOKENS "(" names ")"   -> tokens
     | _CLOCK "(" ")"          -> clock
     | NUMBER                  -> number
names: name ("," name)*
name: NAME | STRING
_TRUE: /true/ END
_FALSE: /false/ END
_DEADLOCK: /deadlock/ END
_FIREABLE: /fireable/ END
_PRED: /pred/ END
_TOKENS: /tokens/ END
_CLOCK: /clock/ END
NOT: "!" | "~" | /not/ END
OR: "||" | "|" | /or/ END
AND: "&&" | "&" | /and/ END
BINARY: /[URW]/ END
PREFIX: /(?:AG|AF|AX|EG|EF|EX|A|E|X|F|G)/ END
BOUNDED.2: /(?:AG|AF|EG|EF|F|G)<=/
CMP: "<=" | ">=" | "==" | "!=" | "<" | ">" | "="
NAME: /[A-Za-z_][A-Za-z0-9_.'\-]*/
STRING: /"[^"]*"/
NUMBER: /-?\d+(\.\d+)?([eE][-+]?\d+)?/ END
END: /WORD_END/
%import common.WS
%ignore WS
""".replace("WORD_END", _WORD_END)
"""The grammar (Lark, LALR): every keyword and number ends where a word may end."""


@cache
def _parser() -> Lark:
    """The grammar's parser, built on the first parse (about 90 ms: not at import, since
    ``tcpn.petrinets`` exports ``check`` and every command imports the package)."""
    return Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False)


_UNARY: dict[str, Callable[[Formula], Formula]] = {
    "A": A, "E": E, "X": X, "F": F, "G": G,
    "AG": lambda f: A(G(f)), "AF": lambda f: A(F(f)), "AX": lambda f: A(X(f)),
    "EG": lambda f: E(G(f)), "EF": lambda f: E(F(f)), "EX": lambda f: E(X(f)),
}
_BINARY: dict[str, type[U] | type[R] | type[W]] = {"U": U, "R": R, "W": W}


class _Build(Transformer[Token, Formula]):
    """Parse tree -> formula objects; remembers where each place and transition was named."""

    def __init__(self, predicates: Mapping[str, Callable[..., bool]]):
        super().__init__()
        self.predicates = predicates
        self.places: list[tuple[str, int]] = []
        self.transitions: list[tuple[str, int]] = []

    def iff(self, items: list[Any]) -> Formula:
        left, right = items
        return Or((And((left, right)), And((Not(left), Not(right)))))

    def imp(self, items: list[Any]) -> Formula:
        left, right = items
        return Or((Not(left), right))

    def or_(self, items: list[Any]) -> Formula:
        return Or(tuple(items[::2]))

    def and_(self, items: list[Any]) -> Formula:
        return And(tuple(items[::2]))

    def until(self, items: list[Any]) -> Formula:
        left, op, right = items
        return _BINARY[str(op)](left, right)

    def negation(self, items: list[Any]) -> Formula:
        return Not(items[1])

    def prefix(self, items: list[Any]) -> Formula:
        return _UNARY[str(items[0])](items[1])

    def bounded(self, items: list[Any]) -> Formula:
        operator, number, operand = str(items[0])[:-2], items[1], items[2]
        bound_s = float(str(number))
        try:
            check_bound(operator, bound_s)
        except InputError as exc:
            raise InputError(f"formula, column {number.column}: {exc}") from None
        path = (FWithin if operator[-1] == "F" else GWithin)(operand, bound_s)
        quantifier = {"A": A, "E": E}.get(operator[0]) if len(operator) == 2 else None
        return path if quantifier is None else quantifier(path)

    def true(self, _: list[Any]) -> Formula:
        return Bool(True)

    def false(self, _: list[Any]) -> Formula:
        return Bool(False)

    def deadlock(self, _: list[Any]) -> Formula:
        return Deadlock()

    @v_args(meta=True)
    def fireable(self, meta: Any, items: list[Any]) -> Formula:
        names = items[0]
        self.transitions += names
        return Fireable(tuple(name for name, _ in names))

    def predicate(self, items: list[Any]) -> Formula:
        name, column = items[0]
        if name not in self.predicates:
            known = ", ".join(sorted(self.predicates)) or "none given"
            raise InputError(f"formula, column {column}: no predicate named {name!r} "
                             f"(predicates: {known})")
        return Predicate(name, self.predicates[name])

    def compare(self, items: list[Any]) -> Formula:
        left, op, right = items
        return Compare("==" if str(op) == "=" else str(op), left, right)  # type: ignore[arg-type]

    def sum(self, items: list[Any]) -> Numeric:
        return items[0] if len(items) == 1 else Sum(tuple(items))

    def tokens(self, items: list[Any]) -> Numeric:
        names = items[0]
        self.places += names
        return Tokens(tuple(name for name, _ in names))

    def clock(self, _: list[Any]) -> Numeric:
        return Clock()

    def number(self, items: list[Any]) -> Numeric:
        token = items[0]
        text = str(token)
        if re.search(r"[.eE]", text):
            return Const(float(text))
        problem = integer_digits_problem(text)
        if problem is not None:
            raise InputError(f"formula, column {token.column}: {problem}")
        return Const(int(text))

    def names(self, items: list[Any]) -> list[tuple[str, int]]:
        return items

    def name(self, items: list[Any]) -> tuple[str, int]:
        token = items[0]
        text = str(token)
        return (text[1:-1] if token.type == "STRING" else text), token.column


def parse(text: str, net: PetriNet | None = None,
          predicates: Mapping[str, Callable[..., bool]] | None = None) -> Formula:
    """The formula a text stands for (grammar in the module docstring).

    With ``net``, every place and transition named must exist in it. ``predicates`` maps
    the names ``pred(name)`` may use to functions ``(marking, clock) -> bool``.

    >>> parse("EF deadlock")
    E(path=F(operand=Deadlock()))
    >>> parse("AG tokens(q) <=")
    Traceback (most recent call last):
    ...
    tcpn.errors.InputError: formula, column 16: the formula ends too early (expected ...)
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError("formula: empty text")
    build = _Build(predicates or {})
    try:
        tree = _parser().parse(text)
        problem = limit_problem("expression_depth", _depth(tree))
        if problem is not None:
            raise InputError(f"formula: nested too deep: {problem}")
        formula = build.transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, InputError):
            raise exc.orig_exc from None
        raise
    except UnexpectedInput as exc:
        raise InputError(_syntax_message(text, exc)) from None
    if net is not None:
        for name, column in build.places:
            if name not in net.places:
                raise InputError(f"formula, column {column}: no place named {name!r} in net "
                                 f"{net.name} (places: {_some(net.places)})")
        for name, column in build.transitions:
            if name not in net.transitions:
                raise InputError(f"formula, column {column}: no transition named {name!r} "
                                 f"in net {net.name} (transitions: {_some(net.transitions)})")
    return formula


def _depth(tree: Tree[Token]) -> int:
    """Levels of nesting of a parse tree, counted without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack += [(child, level + 1) for child in node.children if isinstance(child, Tree)]
    return deepest


_EXPECTED = {"NUMBER": "a number", "TOKENS": "tokens(...)", "CLOCK": "clock()",
             "NAME": "a name", "STRING": "a quoted name", "LPAR": "'('", "RPAR": "')'",
             "RSQB": "']'", "CMP": "a comparison (<=, <, >=, >, ==, !=)"}


def _syntax_message(text: str, exc: UnexpectedInput) -> str:
    column = getattr(exc, "column", None)
    token = getattr(exc, "token", None)
    if isinstance(exc, UnexpectedEOF) or column in (None, -1) or (
            token is not None and token.type == "$END"):
        column = len(text.rstrip()) + 1
        what = "the formula ends too early"
    elif isinstance(exc, UnexpectedCharacters):
        what = f"unexpected character {text[exc.pos_in_stream or 0]!r}"
    elif token is not None and token.type == "NAME" and (split := _glued(str(token))):
        keyword, rest = split
        return (f"formula, column {column}: unexpected word {str(token)!r}: {keyword!r} and "
                f"{rest!r} need a space between them (a keyword ends where a word ends)")
    else:
        what = f"unexpected {str(token)!r}"
    expected = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ())
    named = [_EXPECTED[e] for e in expected if e in _EXPECTED]
    hint = f" (expected {', '.join(named[:4]) if len(named) < 4 else 'an operator or operand'})" \
        if named else ""
    return f"formula, column {column}: {what}{hint}"


_KEYWORDS = ("deadlock", "fireable", "tokens", "clock", "false", "true", "pred", "not", "and",
             "or", "AG", "AF", "AX", "EG", "EF", "EX", "A", "E", "X", "F", "G", "U", "R", "W")


def _glued(word: str) -> tuple[str, str] | None:
    """``(keyword, rest)`` when ``word`` is a keyword glued to more letters (``AGX``)."""
    for keyword in _KEYWORDS:  # longest first where one keyword starts another
        if word.startswith(keyword) and len(word) > len(keyword):
            return keyword, word[len(keyword):]
    return None


def _some(names: Any) -> str:
    ordered = sorted(names)
    return ", ".join(ordered[:8]) + (", ..." if len(ordered) > 8 else "")


def _name(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.'\-]*", name) and name not in (
        "true", "false", "deadlock", "not", "and", "or") else f'"{name}"'


def _numeric(expression: Numeric) -> str:
    if isinstance(expression, Const):
        return repr(expression.value)
    if isinstance(expression, Tokens):
        if expression.value is not None:
            raise InputError("tokens(..., value=...) has no text form")
        return f"tokens({', '.join(_name(p) for p in expression.places)})"
    if isinstance(expression, Clock):
        return "clock()"
    if isinstance(expression, Sum):
        return " + ".join(_numeric(t) for t in expression.terms)
    raise InputError(f"no text form for {expression!r}")


_SHORT = {(A, G): "AG", (A, F): "AF", (A, X): "AX", (E, G): "EG", (E, F): "EF", (E, X): "EX"}


def to_text(formula: Formula) -> str:
    """The text :func:`parse` reads back as the same formula (predicates as ``pred(name)``)."""
    return _text(formula, top=True)


def _text(f: Formula, top: bool = False) -> str:
    def group(inner: Formula) -> str:
        text = _text(inner)
        simple = isinstance(inner, Bool | Deadlock | Fireable | Predicate | Compare | Not) or (
            isinstance(inner, A | E | X | F | G) and not isinstance(
                inner.path if isinstance(inner, A | E) else inner.operand, U | R | W))
        return text if simple else f"({text})"

    if isinstance(f, Bool):
        return "true" if f.value else "false"
    if isinstance(f, Deadlock):
        return "deadlock"
    if isinstance(f, Fireable):
        return f"fireable({', '.join(_name(t) for t in f.transitions)})"
    if isinstance(f, Predicate):
        return f"pred({_name(f.name)})"
    if isinstance(f, Compare):
        return f"{_numeric(f.left)} {f.op} {_numeric(f.right)}"
    if isinstance(f, Not):
        return f"!{group(f.operand)}"
    if isinstance(f, And | Or):
        joiner = " & " if isinstance(f, And) else " | "
        return joiner.join(group(o) for o in f.operands)
    if isinstance(f, A | E):
        quantifier = "A" if isinstance(f, A) else "E"
        path = f.path
        if isinstance(path, U | R | W):
            return f"{quantifier}[{_text(path)}]"
        if isinstance(path, FWithin | GWithin):
            return f"{quantifier}{_text(path)}"
        short = _SHORT.get((type(f), type(path)))
        if short is not None:
            assert isinstance(path, X | F | G)
            return f"{short} {group(path.operand)}"
        return f"{quantifier} {group(path)}"
    if isinstance(f, X | F | G):
        return f"{type(f).__name__} {group(f.operand)}"
    if isinstance(f, FWithin | GWithin):
        return f"{type(f).__name__[0]}<={f.bound_s!r} {group(f.operand)}"
    if isinstance(f, U | R | W):
        return f"{group(f.left)} {type(f).__name__} {group(f.right)}"
    raise InputError(f"no text form for {f!r}")
