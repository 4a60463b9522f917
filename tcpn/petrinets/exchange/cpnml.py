"""CPN ML <-> Python: translate tcpn's Python inscriptions to CPN ML and back, for a subset.

Both directions cover the documented subset (docs/exchange.md): arithmetic, comparisons,
boolean logic, tuples, records, lists, ``if``-``then``-``else``, ``let`` (a Python lambda
called on the spot), calls of declared functions, ``min``/``max``, integer division and
modulo, and CPN Tools' random functions. Python -> CPN ML walks Python's :mod:`ast` with
the colour sets of the variables at hand (CPN ML is typed: ``+`` on strings is ``^``, on
lists ``^^``; a tuple is a product or a list depending on where it goes). CPN ML -> Python
parses with a real grammar (:mod:`lark`, LALR) and builds Python :mod:`ast` nodes, so the
text it gives back is what :func:`ast.unparse` prints.

>>> to_python("if n = k andalso p <> stop then s ^ p else s", where="arc")
's + p if n == k and p != stop else s'
>>> translator = PythonToML()
>>> translator.expression("x // 2 + 1", "guard", variables={"x": INT_T})
'x div 2 + 1'
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import itertools
import keyword
import math
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from lark import Lark, Tree
from lark import Token as LarkToken
from lark.exceptions import UnexpectedInput

from tcpn.errors import InputError
from tcpn.limits import integer_digits_problem, limit_problem
from tcpn.petrinets.cells import CELL_FUNCTIONS
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
    UnionSet,
    UnitSet,
    ml_field,
)
from tcpn.petrinets.exchange.cpnml_forms import LIBRARY_CALLS, MatchForms, unescape_ml_string
from tcpn.petrinets.exchange.ml_calendar import (
    CALENDAR_FUNCTIONS,
    CALENDAR_VALUES,
    ORDER_CONSTRUCTORS,
)
from tcpn.petrinets.exchange.ml_exceptions import EXCEPTION_FUNCTIONS
from tcpn.petrinets.exchange.ml_library import LIBRARY_FUNCTIONS
from tcpn.petrinets.restricted import (
    FORBIDDEN_ATTRIBUTES,
    SAFE_BUILTINS,
    SAFE_METHODS,
    check_expression,
)

_GRAMMAR = r"""
// The CPN ML subset tcpn reads: expressions, multiset inscriptions and val/fun declarations.
// Precedences follow SML and CPN Tools (tms.sml): ` infix 8, @ infix 9, @+ @++ infix 7,
// ++ +++ -- infix 6, :: ^^ infixr 5, comparisons infix 4; andalso, orelse, if, let below.

start_expr: expr
start_decs: dec+
// a guard is a boolean expression or a list of them, bracketed or bare (CPN Tools reads
// "[b1, b2]" and "b1, b2" alike as their conjunction)
start_guard: expr ("," expr)*

?expr: "if" expr "then" expr "else" expr        -> ifte
     | "while" expr "do" expr                  -> while_loop
     | "raise" expr                            -> raise_exn
     | "fn" match                              -> fn
     | "case" expr "of" match                  -> case
     | handled
?handled: orelse
        | handled "handle" match               -> handle

?let_body: expr
         | expr (";" expr)+                    -> sequence
match: rule ("|" rule)*
rule: pat "=>" expr

?orelse: andalso
       | orelse "orelse" andalso               -> orelse
?andalso: typed
        | andalso "andalso" typed              -> andalso
?typed: before
      | typed ":" ty                           -> typed
// SML's infix 0 (before) and infix 3 (:= and o, function composition), below the
// comparisons (infix 4)
?before: assign
       | before "before" assign                -> before
?assign: cmp
       | cmp ASSIGN cmp                        -> assign
       | assign COMPOSE cmp                    -> compose
?cmp: cons
    | cmp EQ cons                              -> binop
    | cmp NE cons                              -> binop
    | cmp LT cons                              -> binop
    | cmp GT cons                              -> binop
    | cmp LE cons                              -> binop
    | cmp GE cons                              -> binop
?cons: add
     | add CONS cons                           -> binop
     | add CARETCARET cons                     -> binop
?add: mul
    | add PLUS mul                             -> binop
    | add MINUS mul                            -> binop
    | add CARET mul                            -> binop
    | add PLUSPLUS mul                         -> binop
    | add PLUSPLUSPLUS mul                     -> binop
    | add MINUSMINUS mul                       -> binop
?mul: bq
    | mul STAR bq                              -> binop
    | mul SLASH bq                             -> binop
    | mul DIV bq                               -> binop
    | mul MOD bq                               -> binop
    | mul ATPLUS bq                            -> binop
    | mul ATPLUSPLUS bq                        -> binop
    | mul PERCENT bq                           -> binop
?bq: stamp
   | bq BQ stamp                               -> binop
?stamp: app
      | stamp AT app                           -> binop
?app: atom
    | app atom                                 -> apply
    | "~" atom                                 -> neg
    | "!" atom                                 -> deref

?atom: INT                                     -> int
     | REAL                                    -> real
     | STRING                                  -> string
     | CHAR                                    -> char
     | NAME                                    -> name
     | LONGID                                  -> name
     | SELECTOR                                -> selector
     | "op" (PLUS | MINUS | STAR | SLASH | DIV | MOD | CARET | CARETCARET | CONS | EQ | NE
             | LT | GT | LE | GE | PLUSPLUS)   -> op_fn
     | "(" ")"                                 -> unit
     | "(" expr ")"
     | "(" expr ("," expr)+ ")"                -> tuple
     | "(" expr (";" expr)+ ")"                -> sequence
     | "[" "]"                                 -> list
     | "[" expr ("," expr)* "]"                -> list
     | "{" field ("," field)* "}"              -> record
     | "{" "}"                                 -> unit
     | "let" dec* "in" let_body "end"          -> let

field: NAME EQ expr

// declarations
?dec: "val" pat EQ expr ";"*                   -> val_dec
    | "fun" clause ("|" clause)* ";"*          -> fun_dec
    | "local" dec_block "in" dec_block "end" ";"* -> local_dec
    | "globref" NAME EQ expr ";"*              -> globref_dec
    | "exception" NAME ("of" ty)? ";"*         -> exception_dec
    | "datatype" datbind ("and" datbind)* withtype? ";"* -> datatype_dec
    | "type" typbind ("and" typbind)* ";"*     -> type_dec
dec_block: dec*
tyvars: TYVAR
      | "(" TYVAR ("," TYVAR)* ")"
datbind: tyvars? NAME EQ conbind ("|" conbind)*
typbind: tyvars? NAME EQ ty
withtype: "withtype" typbind ("and" typbind)*
conbind: NAME ("of" ty)?
clause: NAME apat+ (":" ty)? EQ expr

?pat: apat
    | apat CONS pat                            -> cons_pat
    | pat ":" ty                               -> typed_pat
    | NAME apat                                -> con_pat
    | NAME "as" pat                            -> as_pat
    | LONGID apat                              -> con_pat
?apat: NAME                                    -> var_pat
     | "_"                                     -> wild_pat
     | INT                                     -> const_pat
     | STRING                                  -> const_pat
     | CHAR                                    -> const_pat
     | "(" ")"                                 -> unit_pat
     | "{" "}"                                 -> unit_pat
     | "(" pat ")"
     | "(" pat ("," pat)+ ")"                  -> tuple_pat
     | "[" "]"                                 -> nil_pat
     | "[" pat ("," pat)* "]"                  -> list_pat
     | "{" field_pat ("," field_pat)* ("," ELLIPSIS)? "}" -> record_pat
field_pat: NAME (EQ pat)?
         | NAME ":" ty                         -> typed_field_pat

// types are read and ignored, except simple names on function parameters
?ty: tyapp
   | tyapp STAR ty                             -> ty_product
   | tyapp "->" ty                             -> ty_arrow
?tyapp: tyatom
      | tyapp NAME                             -> ty_app
      | tyapp LONGID                           -> ty_app
?tyatom: NAME                                  -> ty_name
       | LONGID                                -> ty_name
       | TYVAR                                 -> ty_name
       | "(" ty ")"
       | "(" ty ("," ty)+ ")" (NAME | LONGID)  -> ty_app
       | "{" NAME ":" ty ("," NAME ":" ty)* "}" -> ty_record

ELLIPSIS: "..."
ASSIGN: ":="
COMPOSE: "o"
EQ: "="
NE: "<>"
LT: "<"
GT: ">"
LE: "<="
GE: ">="
CONS: "::"
CARETCARET: "^^"
CARET: "^"
PLUS: "+"
PLUSPLUS: "++"
PLUSPLUSPLUS: "+++"
MINUS: "-"
MINUSMINUS: "--"
STAR: "*"
SLASH: "/"
DIV: "div"
MOD: "mod"
ATPLUS: "@+"
ATPLUSPLUS: "@++"
PERCENT: "%"
AT: "@"
BQ: "`"

REAL.2: /~?\d+\.\d+([eE]~?\d+)?/ | /~?\d+[eE]~?\d+/
INT: /~?\d+/
STRING: /"([^"\\\n]|\\.)*"/
CHAR.3: /#"([^"\\]|\\.)*"/
// SML's labels: a numeral from 1 or an identifier; '#' may stand apart (# 1 x), and a
// numeral label ends where a letter starts (#6n is #6 n); a leading '_' (not SML) is read
// so that the restricted evaluator refuses #__class__ by name
SELECTOR.2: /#[ \t]*([1-9][0-9]*|[A-Za-z_][A-Za-z0-9_']*)/
// (and the Basis' symbolic Real.== and Real.!=: IEEE equality of reals)
// (SML/NJ, CPN Tools' compiler, lets white space stand around the dot: L'CNT .mkstr)
LONGID.2: /[A-Za-z][A-Za-z0-9_']*(\s*\.\s*[A-Za-z][A-Za-z0-9_']*)+/ | /Real\.(==|!=)/
NAME: /[A-Za-z][A-Za-z0-9_']*/
TYVAR: /'[A-Za-z0-9_']*/

COMMENT: /\(\*(.|\n)*?\*\)/
%import common.WS
%ignore WS
%ignore COMMENT
"""

__all__ = [
    "BOOL_T",
    "COMMS_CPN_NAMES",
    "INT_T",
    "ML_MAX_INT",
    "ML_MIN_INT",
    "REAL_T",
    "STRING_T",
    "UNIT_T",
    "MLSyntaxError",
    "MLToPython",
    "MultisetTerm",
    "PythonToML",
    "UnsupportedConstruct",
    "colour_type",
    "comms_cpn",
    "ml_real",
    "ml_string",
    "ml_tokens",
    "multiset_terms",
    "parse_ml",
    "py_name",
    "set_ml_form",
    "split_delay",
    "to_python",
]

INT_T, REAL_T, BOOL_T, STRING_T, UNIT_T = "int", "real", "bool", "string", "unit"
#: The range of CPN Tools' int (SML/NJ's 31-bit Int.int).
ML_MIN_INT, ML_MAX_INT = -(2**30), 2**30 - 1
#: An ML type: one of the names above, ``("enum", name, values)``, ``("product", types)``,
#: ``("record", name, ((field, type), ...))``, ``("list", type)``, or None when unknown.
MLType = Any


class MLSyntaxError(InputError):
    """CPN ML text that does not parse; names the element, line and column in the text."""

    def __init__(self, where: str, text: str, line: int, column: int, detail: str):
        self.where, self.text, self.line, self.column = where, text, line, column
        super().__init__(
            f"{where}: CPN ML syntax error at line {line}, column {column} of {text!r}: {detail}"
        )


class UnsupportedConstruct(InputError):
    """A construct one side can't express in the other; names the element and the construct.
    ``missing`` is the name it failed on when that name is declared nowhere in scope (an
    unknown name or function): the importer traces it to the declaration that would give it.
    """

    def __init__(self, where: str, construct: str, missing: str = ""):
        self.where, self.construct, self.missing = where, construct, missing
        super().__init__(f"{where}: {construct}")


# -- names -------------------------------------------------------------------------------------
#: SML reserved words and CPN ML names an exported identifier must not take.
ML_RESERVED = frozenset(
    {"abstype", "and", "andalso", "as", "case", "datatype", "do", "else", "end", "eqtype",
     "exception", "fn", "fun", "functor", "handle", "if", "in", "include", "infix", "infixr",
     "let", "local", "nonfix", "of", "op", "open", "orelse", "raise", "rec", "sharing", "sig",
     "signature", "struct", "structure", "then", "type", "val", "where", "while", "with",
     "withtype", "not", "div", "mod", "o", "before", "empty", "true", "false", "time", "size",
     "length", "hd", "tl", "rev", "nil", "ref", "real", "floor", "ceil", "round", "trunc",
     "print", "abs", "min", "max", "ms", "tms", "colset", "var", "globref", "use", "channel",
     "NONE", "SOME", "valOf", "isSome", "getOpt", "foldl", "foldr", "map", "app"}
)
#: Python names the CPN ML -> Python translation itself produces: an ML identifier spelled
#: like one of these gets a trailing ``_``.
_PY_GENERATED = frozenset(
    {"len", "float", "str", "int", "min", "max", "abs", "round", "floor", "ceil", "now", "rng",
     "tuple", "bool", "sum", "range", "sorted", "any", "all", "uniform", "exponential",
     "normal", "discrete", "bernoulli"}
)


def py_name(ml: str) -> str:
    """The Python spelling of a CPN ML identifier.

    A Python builtin the restricted evaluator refuses (``id``, ``type``, ``input``) gets
    a trailing ``_`` too: in CPN ML it is an ordinary name (``var id : INT``).

    >>> py_name("x'"), py_name("lambda"), py_name("len"), py_name("Arrivals'Arrive")
    ('x_', 'lambda_', 'len_', 'Arrivals_Arrive')
    >>> py_name("id"), py_name("ml_ref")
    ('id_', 'ml_ref_')
    """
    name = ml.replace("'", "_")
    taken = keyword.iskeyword(name) or name in _PY_GENERATED or name in ML_BASIS_DECLARATIONS
    if taken or name in ("None", "True", "False") or (
            hasattr(builtins, name) and name not in SAFE_BUILTINS):
        name += "_"
    return name


_ML_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_']*$")


def is_ml_identifier(name: str) -> bool:
    """Whether ``name`` can stand as an ML identifier exactly as written."""
    return bool(_ML_ID.match(name)) and name not in ML_RESERVED


# -- literals ----------------------------------------------------------------------------------
def ml_string(text: str) -> str:
    r"""An SML string literal.

    >>> print(ml_string('say "hi"\n'))
    "say \"hi\"\n"
    """
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        elif ord(ch) < 256:
            out.append(f"\\{ord(ch):03d}")
        else:
            raise UnsupportedConstruct("string literal", f"character {ch!r} has no SML spelling")
    return '"' + "".join(out) + '"'


def ml_int(value: int) -> str:
    """An SML integer literal (``~`` for minus)."""
    return f"~{-value}" if value < 0 else str(value)


def ml_real(value: float) -> str:
    """An SML real literal: always with a point, ``~`` for minus, ``E`` for the exponent.

    >>> ml_real(2.0), ml_real(-0.25), ml_real(1e-12)
    ('2.0', '~0.25', '1.0E~12')
    """
    if not math.isfinite(value):
        raise UnsupportedConstruct("real literal", f"{value!r} has no SML literal")
    text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    text = mantissa + (f"E{int(exponent)}" if exponent else "")
    return text.replace("-", "~")


def _ml_number(token: str) -> int | float:
    text = token.replace("~", "-")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return float(text.replace("E", "e"))


# -- parsing -----------------------------------------------------------------------------------
def _compact_long_id(token: LarkToken) -> LarkToken:
    """A long identifier written with white space around its dots, as its name."""
    return token.update(value=re.sub(r"\s+", "", token)) if re.search(r"\s", token) \
        else token


@functools.cache
def _parser() -> Lark:
    return Lark(_GRAMMAR, parser="lalr", start=["start_expr", "start_decs", "start_guard"],
                propagate_positions=True, lexer_callbacks={"LONGID": _compact_long_id})


def ml_tokens(text: str) -> Iterator[LarkToken]:
    """The tokens of CPN ML ``text`` (comments and white space dropped), lexed as
    :func:`parse_ml` lexes them; raises :class:`lark.exceptions.LarkError` at text no
    token matches.

    >>> [str(t) for t in ml_tokens("let val a = 1 (* c *) in a end")]
    ['let', 'val', 'a', '=', '1', 'in', 'a', 'end']
    """
    return _parser().lex(text)


def parse_ml(text: str, where: str, start: str = "expr") -> Tree:
    """Parse CPN ML ``text`` (``start``: ``"expr"``, ``"decs"`` or ``"guard"``, whose
    conditions, bracketed or bare, come as one ``list``); errors name ``where``.

    >>> [c.data for c in parse_ml("x > 1, y = {}", "guard of t", "guard").children]
    ['binop', 'binop']

    >>> parse_ml("x + 1", "arc").data
    'binop'
    >>> parse_ml("x +", "guard of t")
    Traceback (most recent call last):
    ...
    tcpn.petrinets.exchange.cpnml.MLSyntaxError: guard of t: CPN ML syntax error at line 1, \
column 4 of 'x +': unexpected end of text
    """
    try:
        tree = _parser().parse(text, start="start_" + start)
    except UnexpectedInput as exc:
        token = getattr(exc, "token", None)
        if token is not None and getattr(token, "type", "") == "$END":
            detail = "unexpected end of text"
            line, column = _end_position(text)
        else:
            position = exc.pos_in_stream or 0
            shown = token if token is not None else text[position:position + 1]
            detail = f"unexpected {str(shown)!r}"
            line, column = exc.line, exc.column
        raise MLSyntaxError(where, text, line, column, detail) from None
    _check_tree(tree, where)
    if start == "expr":
        expr = tree.children[0]
        return expr if isinstance(expr, Tree) else Tree("name", [expr])
    if start == "guard":
        conditions = [c if isinstance(c, Tree) else Tree("name", [c]) for c in tree.children]
        if len(conditions) == 1 and conditions[0].data == "list":
            return conditions[0]  # [b1, b2]
        return Tree("list", conditions)
    return tree


_SUMS = ("++", "+++")


def _check_tree(tree: Tree, where: str) -> None:
    """Refuse, before anything recurses over it, a tree nested deeper than
    ``limits().expression_depth`` (a chain of multiset sums ``a ++ b ++ ...`` is one level:
    an initial marking may list hundreds of tokens) or an integer literal of more digits
    than Python reads. Walks without recursion, and on its way reads a record pattern's
    typed field ``{l : ty, ...}`` as ``{l, ...}`` (types are checked by CPN Tools, not
    here)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if node.data == "typed_field_pat":
            node.data, node.children = "field_pat", node.children[:1]
        sum_chain = node.data == "binop" and _op(node) in _SUMS
        for child in node.children:
            if isinstance(child, Tree):
                flat = sum_chain and child.data == "binop" and _op(child) in _SUMS
                stack.append((child, level if flat else level + 1))
            elif isinstance(child, LarkToken) and child.type == "INT":
                problem = integer_digits_problem(child)
                if problem is not None:
                    raise InputError(f"{where}: CPN ML at line {child.line}, column "
                                     f"{child.column}: {problem}")
    problem = limit_problem("expression_depth", deepest)
    if problem is not None:
        raise InputError(f"{where}: CPN ML expression nested too deep: {problem}")


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def split_delay(text: str) -> tuple[str, str | None, str]:
    """Split an arc inscription at its first top-level ``@+``/``@++`` (as CPN Tools does).

    CPN Tools' ``check_output`` rewrites ``e @+ d`` to ``(e)@+d`` where ``e`` is everything
    before the first ``@+``: in ``if b then 1`x else empty @+ 7`` the delay covers both
    branches.

    >>> split_delay("if b then 1`x else empty @+7")
    ('if b then 1`x else empty', '@+', '7')
    >>> split_delay("(n,p)")
    ('(n,p)', None, '')
    """
    depth, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("(*", i):
            end = text.find("*)", i + 2)
            i = n if end < 0 else end + 1
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith("@+", i):
            op = "@++" if text.startswith("@++", i) else "@+"
            return text[:i].strip(), op, text[i + len(op):].strip()
        i += 1
    return text.strip(), None, ""


@dataclass(frozen=True)
class MultisetTerm:
    """One term ``count`value@stamp`` of a multiset expression (trees, None when absent)."""

    count: Tree | LarkToken | None
    value: Tree | LarkToken
    stamp: Tree | LarkToken | None


def multiset_terms(tree: Tree | LarkToken) -> list[MultisetTerm] | None:
    """The terms of ``a ++ b +++ c`` (``n`x``, ``x@t``, ``x``); None for ``empty``.

    >>> [t.count is not None for t in multiset_terms(parse_ml("1`5@0 +++ 2`7", "m"))]
    [True, True]
    """
    if _is_name(tree, "empty"):
        return None
    if isinstance(tree, Tree) and tree.data == "binop" and _op(tree) in _SUMS:
        terms: list[MultisetTerm] = []
        pending: list[Tree | LarkToken] = [tree]  # a stack: a long sum must not recurse
        while pending:
            part = pending.pop()
            if isinstance(part, Tree) and part.data == "binop" and _op(part) in _SUMS:
                pending += [part.children[2], part.children[0]]
            else:
                terms += multiset_terms(part) or []
        return terms
    count = None
    if isinstance(tree, Tree) and tree.data == "binop" and _op(tree) == "`":
        count, tree = tree.children[0], tree.children[2]
    stamp = None
    if isinstance(tree, Tree) and tree.data == "binop" and _op(tree) == "@":
        tree, stamp = tree.children[0], tree.children[2]
    return [MultisetTerm(count, tree, stamp)]


def _op(tree: Tree) -> str:
    return str(tree.children[1])


def _is_name(tree: Any, name: str) -> bool:
    return isinstance(tree, Tree) and tree.data == "name" and str(tree.children[0]) == name


def _line_of(tree: Any) -> str:
    meta = getattr(tree, "meta", None)
    if meta is not None and not getattr(meta, "empty", True):
        return f" (line {meta.line}, column {meta.column})"
    if isinstance(tree, LarkToken) and tree.line is not None:
        return f" (line {tree.line}, column {tree.column})"
    return ""


# -- CPN ML -> Python --------------------------------------------------------------------------
_ML_COMPARE = {"=": ast.Eq, "<>": ast.NotEq, "<": ast.Lt, ">": ast.Gt, "<=": ast.LtE,
               ">=": ast.GtE}
_ML_ARITH = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "div": ast.FloorDiv,
             "mod": ast.Mod, "^": ast.Add, "^^": ast.Add}
#: CPN ML basis functions of one argument and their Python spelling.
_ML_UNARY = {
    "Real.fromInt": "float", "real": "float", "IntInf.toInt": "int", "IntInf.fromInt": "int",
    "Int.toString": "ml_int_string", "Real.toString": "ml_real_string",
    "ModelTime.toString": "str", "IntInf.toString": "ml_int_string", "size": "len",
    "String.size": "len", "length": "len",
    "List.length": "len", "abs": "abs", "Int.abs": "abs", "Real.abs": "abs", "round": "round",
    "Real.round": "round", "trunc": "int", "Real.trunc": "int", "floor": "floor",
    "Real.floor": "floor", "ceil": "ceil", "Real.ceil": "ceil",
    # CPN Tools' time structure (simulator/sim/time.sml), opened at the top level of every
    # timed model and also named ModelTime (tms.sml): toReal t is the time t as a real
    "toReal": "float", "ModelTime.toReal": "float", "ModelTime.fromInt": "int",
}
_ML_BINARY = {"Int.min": "min", "Int.max": "max", "Real.min": "min", "Real.max": "max"}
#: SML's Math structure (reals): each function by its library name, and its constants.
#: Python's math raises where SML gives NaN or an infinity (Math.sqrt ~1.0, Math.ln 0.0):
#: a firing error naming the transition rather than a NaN travelling on.
MATH_FUNCTIONS: dict[str, Callable[..., float]] = {
    "ml_sqrt": math.sqrt, "ml_exp": math.exp, "ml_ln": math.log, "ml_log10": math.log10,
    "ml_sin": math.sin, "ml_cos": math.cos, "ml_tan": math.tan, "ml_asin": math.asin,
    "ml_acos": math.acos, "ml_atan": math.atan, "ml_atan2": math.atan2,
    "ml_sinh": math.sinh, "ml_cosh": math.cosh, "ml_tanh": math.tanh}
_ML_MATH = {f"Math.{name.removeprefix('ml_')}": name for name in MATH_FUNCTIONS}
_ML_MATH_CONSTANTS = {"Math.pi": math.pi, "Math.e": math.e}
#: The other basis functions :meth:`MLToPython._basis` translates (for its error message).
_BASIS_NAMES = frozenset({
    "time", "ModelTime.time", "not", "ref", "ignore", "hd", "List.hd", "tl", "List.tl", "rev",
    "List.rev",
    "List.tabulate", "valOf", "Option.valOf", "isSome", "Option.isSome", "Option.isNone",
    "getOpt", "Option.getOpt", "List.nth", "List.drop", "List.take", "String.concat",
    "concat", "Math.pow", "cf"})
#: CPN Tools' Comms/CPN library (its ConnManagementLayer structure, the functions it
#: also declares at top level, and its encoders): a connection to an external process
#: over TCP, which tcpn never opens (a model file runs no I/O); a call is left out, named.
COMMS_CPN_NAMES = frozenset({
    "ConnManagementLayer", "openConnection", "acceptConnection", "closeConnection",
    "canReceive", "stringEncode", "stringDecode", "integerEncode",
    "integerDecode"})


def comms_cpn(name: str) -> bool:
    """Whether ``name`` (a name no declaration of the model gives) is Comms/CPN's."""
    head = name.split(".", 1)[0]
    return head == "ConnManagementLayer" or name in COMMS_CPN_NAMES


def _unknown(name: str, what: str) -> str:
    """Why ``name`` is not read: Comms/CPN's, named as such, or ``what``."""
    if comms_cpn(name):
        return (f"{name!r} is CPN Tools' Comms/CPN library: a connection to an external "
                "process, which tcpn never opens (a model file runs no I/O)")
    return what


_ML_RANDOM = {"uniform": 2, "exponential": 1, "normal": 2, "discrete": 2}
#: Basis and library functions a model may pass as a value (not the clock, nor ``ref``).
_FUNCTION_VALUES = frozenset({*_ML_UNARY, *_ML_BINARY, *_ML_MATH, *LIBRARY_CALLS,
                              *_BASIS_NAMES}) - {"time", "ModelTime.time", "ref"}
#: Python callables an imported net declares for the ML basis functions it uses (the
#: reference cells' among them: :mod:`tcpn.petrinets.cells`).
ML_BASIS_DECLARATIONS: dict[str, Callable[..., Any]] = {
    "floor": math.floor, "ceil": math.ceil, **MATH_FUNCTIONS, **CELL_FUNCTIONS,
    **EXCEPTION_FUNCTIONS,
    **LIBRARY_FUNCTIONS, **CALENDAR_FUNCTIONS}
#: How the export's refusals name the library functions the import translates to.
_LIBRARY_SPELLING = {"ml_deref": "!r (a reference cell)", "ml_assign": ":= (a reference cell)",
                     "ml_ref": "ref", "ml_while": "while", "ml_handle": "handle",
                     "ml_raise": "raise", "ml_valof": "valOf", "ml_find": "List.find",
                     "ml_option_map": "Option.map", "ml_tabulate": "List.tabulate",
                     "ml_partition": "List.partition", "ml_map_partial": "List.mapPartial",
                     "ml_get_item": "List.getItem", "ml_int_from_string": "Int.fromString",
                     "ml_mkstr": "CS.mkstr", "ml_legal": "CS.legal", "ml_ord": "CS.ord",
                     "ml_col": "CS.col", "ml_tokens": "String.tokens",
                     "ml_fields": "String.fields", "ml_sub": "String.sub",
                     "ml_substring": "String.substring", "ml_ms_minus": "--",
                     "ml_is_substring": "String.isSubstring", "ml_string_map": "String.map",
                     "ml_string_translate": "String.translate",
                     "ml_merge_sort": "ListMergeSort.sort",
                     "ml_unique_sort": "ListMergeSort.uniqueSort",
                     "ml_sorted": "ListMergeSort.sorted", "ml_sort_lt": "sort",
                     "ml_lt": "CS.lt", "ml_intersect": "intersect",
                     "ml_concat_with": "String.concatWith", "ml_extract": "String.extract",
                     "ml_is_upper": "Char.isUpper", "ml_is_lower": "Char.isLower",
                     "ml_is_alpha_num": "Char.isAlphaNum",
                     "ml_bool_from_string": "Bool.fromString",
                     "ml_rev_append": "List.revAppend", "ml_quot": "Int.quot",
                     "ml_rem": "Int.rem", "ml_int_div": "Int.div", "ml_int_mod": "Int.mod",
                     "ml_real_to_intinf": "RealToIntInf",
                     "ml_intinf_to_real": "IntInfToReal", "ml_hd": "hd", "ml_tl": "tl",
                     "ml_last": "List.last", "ml_nth": "List.nth", "ml_take": "List.take",
                     "ml_drop": "List.drop", "ml_char_contains": "Char.contains",
                     "ml_char_not_contains": "Char.notContains"}
#: The import's list functions that raise SML's exceptions: name -> how many arguments.
_LIST_ACCESS: Mapping[str, int] = {"ml_hd": 1, "ml_tl": 1, "ml_last": 1, "ml_nth": 2,
                                   "ml_take": 2, "ml_drop": 2}
#: Library functions of plain values the export writes back as the CPN ML call the import
#: read: name -> (CPN ML function, whether it takes its arguments curried, result type).
_WRITTEN_BACK: dict[str, tuple[str, bool, str]] = {
    "ml_is_prefix": ("String.isPrefix", True, BOOL_T),
    "ml_is_suffix": ("String.isSuffix", True, BOOL_T),
    "ml_is_substring": ("String.isSubstring", True, BOOL_T),
    "ml_concat_with": ("String.concatWith", True, STRING_T),
    "ml_substring": ("String.substring", False, STRING_T),
    "ml_is_digit": ("Char.isDigit", False, BOOL_T), "ml_is_alpha": ("Char.isAlpha", False, BOOL_T),
    "ml_is_space": ("Char.isSpace", False, BOOL_T), "ml_is_upper": ("Char.isUpper", False, BOOL_T),
    "ml_is_lower": ("Char.isLower", False, BOOL_T),
    "ml_is_alpha_num": ("Char.isAlphaNum", False, BOOL_T),
    "ml_quot": ("Int.quot", False, INT_T), "ml_rem": ("Int.rem", False, INT_T),
    "ml_int_div": ("Int.div", False, INT_T), "ml_int_mod": ("Int.mod", False, INT_T),
}
#: The library functions of options and reference cells the export writes back as CPN ML.
_OPTIONS_AND_CELLS = frozenset({"ml_valof", "ml_find", "ml_option_map", "ml_deref",
                                "ml_assign"})
#: SML's option datatype, always in scope: constructor -> whether it carries a value.
OPTION_CONSTRUCTORS: Mapping[str, bool] = {"NONE": False, "SOME": True}
#: The Basis's datatypes always in scope (option and order): constructor -> carries a value.
BASIS_CONSTRUCTORS: Mapping[str, bool] = {**OPTION_CONSTRUCTORS, **ORDER_CONSTRUCTORS}


@dataclass
class MLToPython(MatchForms):
    """Translate parsed CPN ML expressions to Python :mod:`ast` expressions.

    ``variables``, ``constants`` and ``functions`` are the ML names in scope (functions map
    to their parameter count); ``enum_constants`` become Python strings; ``records`` maps a
    record's field names to the Python constructor; ``inline`` holds functions to expand at
    each call (those that draw random numbers or read the clock, which a Python function
    declared on the net can't do). ``used_basis`` collects the basis functions that need a
    declaration (``floor``, ``ceil``). ``index_constructors`` are the constructors of
    index colour sets (``ph`` of ``index ph with 1..n``, whose values tcpn keeps as the
    integers: ``ph(i)`` is ``i``); ``colour_members`` gives ``CS.all()`` for finite sets.
    Patterns, ``case``, ``fn``, clausal functions and list functions: :class:`MatchForms`.
    """

    variables: frozenset[str] = frozenset()
    constants: frozenset[str] = frozenset()
    functions: Mapping[str, int] = field(default_factory=dict)
    enum_constants: frozenset[str] = frozenset()
    records: Mapping[frozenset[str], str] = field(default_factory=dict)
    inline: Mapping[str, tuple[tuple[str, ...], ast.expr]] = field(default_factory=dict)
    used_basis: set[str] = field(default_factory=set)
    uses_time: bool = False
    uses_random: bool = False
    index_constructors: frozenset[str] = frozenset()
    colour_members: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    colour_shapes: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    #: records whose fields no record colour set has (labels -> the constructor's name):
    #: the importer declares them (SML's records need no declaration)
    anonymous_records: dict[frozenset[str], str] = field(default_factory=dict)
    local_functions: dict[str, int] = field(default_factory=dict)
    #: the declared names that hold reference cells (``val l = ref []``): ``!l`` reads them
    cells: frozenset[str] = frozenset()
    #: datatype constructors (``datatype``, ``union`` colour sets, ``option``) -> whether
    #: each carries a value: ``A`` is ``"A"``, ``B v`` is ``("B", v)`` (ml_library)
    constructors: Mapping[str, bool] = field(default_factory=lambda: dict(BASIS_CONSTRUCTORS))
    fresh: Any = field(default_factory=itertools.count, repr=False)

    def _py(self, name: str) -> str:
        return py_name(name)

    def expression(self, tree: Tree | LarkToken, where: str,
                   local: frozenset[str] = frozenset()) -> ast.expr:
        """The Python expression for ``tree``; :class:`UnsupportedConstruct` otherwise.

        The translation is held to the restricted subset
        (:func:`~tcpn.petrinets.restricted.check_expression`): an ML text that would reach
        anything else (``#__class__ x``) raises
        :class:`~tcpn.petrinets.restricted.UntrustedCodeError`, before anything runs.
        """
        try:
            node = self._expr(tree, where, local)
        except SyntaxError as exc:  # a form written as Python text that does not parse
            raise UnsupportedConstruct(where, f"tcpn's translation of this form is not "
                                       f"valid Python ({exc.msg}): a fault of tcpn's, "
                                       "please report it") from None
        self.known_fields(node, where)
        check_expression(node, where, declared=self.declared_names(local),
                         fields=self.record_labels())
        return node

    def record_labels(self) -> frozenset[str]:
        """The fields of every record colour set and record type in scope."""
        return frozenset().union(*self.records, *self.anonymous_records)

    def known_fields(self, node: ast.expr, where: str) -> None:
        """Refuse, as a construct tcpn does not translate, a selector ``#f`` whose field
        is a harmless name no imported record colour set has (its colour set was left
        out); a name the restricted evaluator forbids stays for it to refuse."""
        fields = self.record_labels() | SAFE_METHODS
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr not in fields and \
                    not sub.attr.startswith("_") and sub.attr not in FORBIDDEN_ATTRIBUTES:
                raise UnsupportedConstruct(where, f"selector #{sub.attr}: no record colour "
                                           "set tcpn imported has that field")

    def declared_names(self, local: frozenset[str] = frozenset()) -> frozenset[str]:
        """The Python names of everything in scope: variables, constants, functions,
        record constructors and ``local``."""
        ml = (self.variables | self.constants | set(self.functions) | set(self.inline)
              | set(self.local_functions) | self.index_constructors | local)
        return frozenset(map(py_name, ml)) | frozenset(self.records.values()) | frozenset(
            self.used_basis) | frozenset(self.anonymous_records.values())

    def text(self, tree: Tree | LarkToken, where: str) -> str:
        """Like :meth:`expression`, as Python source text."""
        return ast.unparse(self.expression(tree, where))

    def _unsupported(self, tree: Any, where: str, what: str,
                     missing: str = "") -> UnsupportedConstruct:
        return UnsupportedConstruct(where, f"{what}{_line_of(tree)}", missing)

    def _expr(self, tree: Any, where: str, local: frozenset[str]) -> ast.expr:
        kind = tree.data if isinstance(tree, Tree) else None
        handler = getattr(self, f"_t_{kind}", None)
        if handler is None:
            raise self._unsupported(tree, where, f"CPN ML construct {kind!r} is outside the "
                                    "subset tcpn translates")
        node: ast.expr = handler(tree, where, local)
        return node

    # literals
    def _t_int(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        return ast.Constant(_ml_number(str(tree.children[0])))

    def _t_real(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        return ast.Constant(float(_ml_number(str(tree.children[0]))))

    def _t_string(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        return ast.Constant(unescape_ml_string(str(tree.children[0])))

    def _t_unit(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        return ast.Tuple([], ast.Load())

    def _t_tuple(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        return ast.Tuple([self._expr(c, where, local) for c in tree.children], ast.Load())

    _t_list = _t_tuple

    def _t_record(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        fields = [(ml_field(str(f.children[0])), f.children[2]) for f in tree.children]
        labels = frozenset(name for name, _ in fields)
        constructor = self.records.get(labels) or self.anonymous_records.get(labels)
        if constructor is None:
            # SML's records are structural: one no colour set declares (a 'type' or no
            # type at all) is a record type of its own, declared with the net (its fields
            # in label order)
            if any(not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_")
                   or n in FORBIDDEN_ATTRIBUTES for n in labels):
                raise self._unsupported(tree, where, "record with fields "
                                        f"{sorted(labels)} matches no record colour set")
            constructor = "record_" + "_".join(py_name(n) for n in sorted(labels))
            self.anonymous_records[labels] = constructor
        return ast.Call(ast.Name(constructor, ast.Load()), [], [
            ast.keyword(name, self._expr(value, where, local)) for name, value in fields
        ])

    def _t_name(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        name = str(tree.children[0])
        if name in ("true", "false"):
            return ast.Constant(name == "true")
        if name in self.local_functions:  # a function being declared, itself as a value
            return _one_argument(py_name(name), self.local_functions[name])
        if name in local or name in self.variables or name in self.constants:
            return ast.Name(py_name(name), ast.Load())
        if name in self.constructors:  # a constant, or a function making a value
            return _one_argument("", 1, name) if self.constructors[name] else \
                ast.Constant(name)
        if name in self.enum_constants:
            return ast.Constant(name)
        if name in ("empty", "nil"):
            return ast.Tuple([], ast.Load())  # inside an expression, a multiset is a list
        if name in _ML_MATH_CONSTANTS:
            return ast.Constant(_ML_MATH_CONSTANTS[name])
        if name in CALENDAR_VALUES:  # Date.Jan, TextIO.stdOut ...
            return ast.parse(repr(CALENDAR_VALUES[name]), mode="eval").body
        if name in self.functions:  # a function passed as a value: of one argument
            return _one_argument(py_name(name), self.functions[name])
        if name in self.inline:  # one drawing at random or reading the clock, as a value
            params, body = self.inline[name]
            self._note_inline(body)
            function = _lambda(tuple(py_name(p) for p in params), body)
            if len(params) == 1:
                return function
            return _lambda(("_p",), ast.Call(function, [ast.Starred(
                ast.Name("_p", ast.Load()), ast.Load())] if params else [], []))
        colour, _, operation = name.rpartition(".")
        if name in _FUNCTION_VALUES or (operation in ("lt", "ord", "col", "legal", "mkstr")
                                        and colour in self.colour_shapes):
            # a basis or library function passed as a value: fn x => name x, which the
            # application translates (a curried one applied to its first argument only)
            arg = LarkToken("NAME", f"_v{next(self.fresh)}")
            return self._expr(Tree("fn", [Tree("match", [Tree("rule", [
                Tree("var_pat", [arg]), Tree("apply", [tree, Tree("name", [arg])])])])]),
                where, local)
        raise self._unsupported(tree, where, _unknown(name, (
            f"unknown name {name!r} (not a variable, constant, function or enumeration "
            "value tcpn imported)")), name)

    # reference cells, side effects and exceptions (tcpn.petrinets.cells, ml_exceptions)
    def _cell_call(self, function: str, *args: ast.expr) -> ast.expr:
        self.used_basis.add(function)
        return ast.Call(ast.Name(function, ast.Load()), list(args), [])

    def _t_deref(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        target = tree.children[0]
        if isinstance(target, Tree) and target.data == "name":
            name = str(target.children[0])
            if name in self.constants and name not in self.cells and name not in local:
                # a reference no inscription writes, imported as the value it holds
                return ast.Name(py_name(name), ast.Load())
        return self._cell_call("ml_deref", self._expr(target, where, local))

    def _t_assign(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        target, _, value = tree.children
        if isinstance(target, Tree) and target.data == "name" and \
                str(target.children[0]) in self.constants and \
                str(target.children[0]) not in self.cells | local:
            raise self._unsupported(tree, where, f"':=' on {target.children[0]}, a reference "
                                    "imported as a constant")
        return self._cell_call("ml_assign", self._expr(target, where, local),
                               self._expr(value, where, local))

    def _t_before(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # e1 before e2: both, left to right (a tuple's items are), the value of e1
        first, second = (self._expr(c, where, local) for c in tree.children)
        return ast.Subscript(ast.Tuple([first, second], ast.Load()), ast.Constant(0),
                             ast.Load())

    def _t_raise_exn(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # raise E / raise Fail "msg": an MLRaise naming E (ml_exceptions)
        return self._cell_call("ml_raise", ast.Constant(self._exception_name(tree.children[0])))

    @staticmethod
    def _exception_name(exn: Any) -> str:
        while isinstance(exn, Tree) and exn.data in ("apply", "con_pat"):
            exn = exn.children[0]
        if isinstance(exn, LarkToken):
            return str(exn)
        if isinstance(exn, Tree) and exn.data in ("name", "var_pat"):
            return str(exn.children[0])
        return "_"

    def _t_handle(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # e handle E => a | _ => b: ml_handle(lambda: e, (("E", lambda: a), ("_", lambda: b)))
        body, match = tree.children
        rules: list[ast.expr] = []
        for rule in match.children:
            pat, value = rule.children
            name = self._exception_name(pat)
            if name[:1].islower():  # a variable: any exception (it is not bound here)
                name = "_"
            rules.append(ast.Tuple([ast.Constant(name),
                                    _thunk(self._expr(value, where, local))], ast.Load()))
        return self._cell_call("ml_handle", _thunk(self._expr(body, where, local)),
                               ast.Tuple(rules, ast.Load()))

    def _t_while_loop(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # while e1 do e2: the loop over two functions of nothing, e1's and e2's
        test, body = (_thunk(self._expr(c, where, local)) for c in tree.children)
        return self._cell_call("ml_while", test, body)

    def _t_compose(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # f o g: fn x => f (g x), f and g evaluated once, first
        first, _, second = tree.children
        inner = _lambda(("_x",), ast.Call(ast.Name("_f", ast.Load()), [ast.Call(
            ast.Name("_g", ast.Load()), [ast.Name("_x", ast.Load())], [])], []))
        return _call_lambda(("_f", "_g"), inner, [self._expr(first, where, local),
                                                  self._expr(second, where, local)])

    def _t_neg(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        operand = self._expr(tree.children[0], where, local)
        if isinstance(operand, ast.Constant) and isinstance(operand.value, int | float):
            return ast.Constant(-operand.value)
        return ast.UnaryOp(ast.USub(), operand)

    def _t_typed(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        return self._expr(tree.children[0], where, local)

    def _t_ifte(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        cond, then, other = (self._expr(c, where, local) for c in tree.children)
        return ast.IfExp(cond, then, other)

    def _t_andalso(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        return self._boolop(ast.And(), tree, where, local)

    def _t_orelse(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        return self._boolop(ast.Or(), tree, where, local)

    def _boolop(self, op: ast.boolop, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        values = []
        for child in tree.children:
            value = self._expr(child, where, local)
            if isinstance(value, ast.BoolOp) and type(value.op) is type(op):
                values.extend(value.values)
            else:
                values.append(value)
        return ast.BoolOp(op, values)

    def _t_binop(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        left_tree, op_token, right_tree = tree.children
        op = str(op_token)
        if op in ("@", "@+", "@++"):
            raise self._unsupported(tree, where, f"time stamp operator {op!r} inside an "
                                    "expression (tcpn reads it only at the top of an arc "
                                    "inscription or an initial marking)")
        left = self._expr(left_tree, where, local)
        right = self._expr(right_tree, where, local)
        if op == "--":  # inside an expression, multisets are lists (ms.sml)
            return self._cell_call("ml_ms_minus", left, right)
        if op == "`":  # CPN ML's multisets are lists: n`v is n copies of v
            return ast.BinOp(ast.Tuple([right], ast.Load()), ast.Mult(), left)
        if op == "%":  # CPN Tools' bs % v: 1`v when every boolean of bs holds, else empty
            return ast.IfExp(ast.Call(ast.Name("all", ast.Load()), [left], []),
                             ast.Tuple([right], ast.Load()), ast.Tuple([], ast.Load()))
        if op in ("++", "+++"):
            return ast.BinOp(left, ast.Add(), right)
        if op in _ML_COMPARE:
            return ast.Compare(left, [_ML_COMPARE[op]()], [right])
        if op == "::":
            return ast.BinOp(ast.Tuple([left], ast.Load()), ast.Add(), right)
        return ast.BinOp(left, _ML_ARITH[op](), right)

    def _t_op_fn(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # op+ (any infix operator made a function of a pair): fn (a, b) => a + b
        pair: Tree[Any] = Tree("tuple_pat", [Tree("var_pat", [LarkToken("NAME", "_a")]),
                                             Tree("var_pat", [LarkToken("NAME", "_b")])])
        body: Tree[Any] = Tree("binop", [Tree("name", [LarkToken("NAME", "_a")]),
                                         tree.children[0],
                                         Tree("name", [LarkToken("NAME", "_b")])])
        return self._expr(Tree("fn", [Tree("match", [Tree("rule", [pair, body])])]), where,
                          local)

    def _t_char(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # #"c": a character is the string of that one character (SML's types keep the
        # two apart, so they are never compared with each other)
        text = unescape_ml_string(str(tree.children[0])[1:])
        if len(text) != 1:
            raise self._unsupported(tree, where, f"character literal {tree.children[0]} is "
                                    "not one character")
        return ast.Constant(text)

    def _t_selector(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # #2 or #field as a function value (map #1 l)
        label = _label(tree.children[0])
        part: ast.expr = ast.Subscript(ast.Name("_r", ast.Load()), ast.Constant(
            int(label) - 1), ast.Load()) if label.isdigit() else ast.Attribute(
            ast.Name("_r", ast.Load()), label, ast.Load())
        return ast.Lambda(ast.arguments(posonlyargs=[], args=[ast.arg("_r")], vararg=None,
                                        kwonlyargs=[], kw_defaults=[], kwarg=None,
                                        defaults=[]), part)

    def _t_apply(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        head, arg = tree.children
        if _is_name(head, "List.tabulate") and isinstance(arg, Tree) and arg.data == "tuple" \
                and len(arg.children) == 2 and isinstance(arg.children[1], Tree) \
                and arg.children[1].data == "fn" and self._tabulate_var(arg.children[1]):
            return self._tabulate(arg.children[0], arg.children[1], where, local)
        library = self.library_call(tree, where, local)
        if library is not None:
            return library
        if isinstance(head, Tree) and head.data == "name" and \
                str(head.children[0]) in self.index_constructors:
            return self._expr(arg, where, local)  # ph(i): index values are their integers
        if isinstance(head, Tree) and head.data == "name" and \
                str(head.children[0]) in self.constructors and \
                str(head.children[0]) not in local:
            name = str(head.children[0])
            if not self.constructors[name]:
                raise self._unsupported(tree, where, f"constructor {name} applied to a value "
                                        "(it takes none)")
            return ast.Tuple([ast.Constant(name), self._expr(arg, where, local)], ast.Load())
        if not (isinstance(head, Tree) and head.data in ("name", "selector")) or (
                str(head.children[0]) in local | self.variables | self.constants
                and str(head.children[0]) not in self.local_functions):
            # a function value (a variable, a val, fn, a partial application, f o g)
            # applied to its one argument, as SML applies every function
            return ast.Call(self._expr(head, where, local), [self._expr(arg, where, local)],
                            [])
        args = self._args(arg, where, local)
        if isinstance(head, Tree) and head.data == "name" and \
                str(head.children[0]) in self.local_functions:
            name = str(head.children[0])
            args = self._fit(tree, where, name, self.local_functions[name], args)
            return ast.Call(ast.Name(py_name(name), ast.Load()), args, [])
        if isinstance(head, Tree) and head.data == "selector":
            label = _label(head.children[0])
            if len(args) != 1:
                if not label.isdigit() or not 1 <= int(label) <= len(args):
                    raise self._unsupported(tree, where, f"selector #{label} on a tuple of "
                                            f"{len(args)} values")
                args = [ast.Tuple(args, ast.Load())]  # #2 (a, b): every part evaluated
            if label.isdigit():
                return ast.Subscript(args[0], ast.Constant(int(label) - 1), ast.Load())
            return ast.Attribute(args[0], label, ast.Load())
        name = str(head.children[0])
        if name in self.inline:
            params, body = self.inline[name]
            self._note_inline(body)
            args = self._fit(tree, where, name, len(params), args)
            return _call_lambda(tuple(py_name(p) for p in params), body, args) if params \
                else body
        if name in self.functions:
            args = self._fit(tree, where, name, self.functions[name], args)
            return ast.Call(ast.Name(py_name(name), ast.Load()), args, [])
        return self._basis(tree, where, name, args)

    def _note_inline(self, body: ast.expr) -> None:
        """Whether an inlined function's ``body`` reads the clock or draws at random (one
        that does neither draws through a function that does)."""
        called = {n.id for n in ast.walk(body) if isinstance(n, ast.Name)}
        self.uses_time = self.uses_time or "now" in called
        self.uses_random = self.uses_random or bool(called & set(_ML_RANDOM)) or \
            "now" not in called

    @staticmethod
    def _tabulate_var(fn: Tree) -> str | None:
        """The one variable (or ``_``) of ``fn i => e``, else None."""
        rules = fn.children[0].children
        if len(rules) != 1 or not isinstance(rules[0].children[0], Tree):
            return None
        pat = rules[0].children[0]
        return str(pat.children[0]) if pat.data == "var_pat" else (
            "_" if pat.data == "wild_pat" else None)

    def _tabulate(self, count: Any, fn: Tree, where: str, local: frozenset[str]) -> ast.expr:
        """``List.tabulate(n, fn i => e)``: ``ml_tabulate(n, lambda i: e)``, which the
        export writes back as it was (:meth:`_Emitter._builtin`)."""
        var = self._tabulate_var(fn) or "_"
        body = fn.children[0].children[0].children[1]
        inner = self._expr(body, where, local | {var})
        return self._cell_call("ml_tabulate", self._expr(count, where, local),
                               _lambda((py_name(var) if var != "_" else "_",), inner))

    def _fit(self, tree: Tree, where: str, name: str, expected: int,
             args: list[ast.expr]) -> list[ast.expr]:
        """The Python arguments of a call of ``name``, whose ML definition takes a tuple
        of ``expected`` components (one value when ``expected`` is 1). SML functions take
        one argument: ``fun f (a, b, c) = ...`` applied to a tuple-valued expression
        (``f t``) passes its components (``f(*t)``), and ``fun g t = ...`` applied to a
        written tuple (``g (x, y)``) receives that tuple (``g((x, y))``)."""
        if expected == len(args):
            return args
        if len(args) == 1 and expected > 1:
            return [ast.Starred(args[0], ast.Load())]
        if expected == 1 and len(args) > 1:
            return [ast.Tuple(args, ast.Load())]
        raise self._unsupported(tree, where, f"{name} takes {expected} argument(s), "
                                f"called with {len(args)}")

    def _args(self, arg: Any, where: str, local: frozenset[str]) -> list[ast.expr]:
        if isinstance(arg, Tree) and arg.data == "unit":
            return []
        if isinstance(arg, Tree) and arg.data == "tuple":
            return [self._expr(c, where, local) for c in arg.children]
        return [self._expr(arg, where, local)]

    def _basis(self, tree: Tree, where: str, name: str, args: list[ast.expr]) -> ast.expr:
        def call(fn: str, *params: ast.expr) -> ast.expr:
            return ast.Call(ast.Name(fn, ast.Load()), list(params), [])

        if name in ("time", "ModelTime.time") and not args:
            self.uses_time = True
            return ast.Name("now", ast.Load())
        if name in _ML_UNARY and len(args) == 1:
            target = _ML_UNARY[name]
            if target in ML_BASIS_DECLARATIONS:
                self.used_basis.add(target)
            if target == "int" and isinstance(args[0], ast.Name) and args[0].id == "now":
                return call("int", args[0])
            return call(target, args[0])
        if name in _ML_BINARY and len(args) == 2:
            return call(_ML_BINARY[name], *args)
        if name in ("Real.==", "Real.!=") and len(args) == 2:  # IEEE: nan differs from all
            return ast.Compare(args[0], [ast.Eq() if name == "Real.==" else ast.NotEq()],
                               [args[1]])
        if name in _ML_MATH and len(args) == (2 if name == "Math.atan2" else 1):
            self.used_basis.add(_ML_MATH[name])
            return call(_ML_MATH[name], *args)
        if name in _ML_RANDOM and len(args) == _ML_RANDOM[name]:
            self.uses_random = True
            return call(name, *args)
        if name == "bernoulli" and len(args) == 1:  # CPN Tools': 1 with probability p, else 0
            self.uses_random = True
            return call("int", call("bernoulli", args[0]))
        if name in _ML_RANDOM and len(args) == 1 and _ML_RANDOM[name] > 1:
            self.uses_random = True  # uniform(bounds), bounds a pair
            return call(name, ast.Starred(args[0], ast.Load()))
        if name == "not" and len(args) == 1:
            return ast.UnaryOp(ast.Not(), args[0])
        if name in ("ref", "ignore"):  # one argument, whatever its shape
            value = args[0] if len(args) == 1 else ast.Tuple(args, ast.Load())
            if name == "ref":
                return self._cell_call("ml_ref", value)
            return ast.Subscript(ast.Tuple([value, ast.Tuple([], ast.Load())], ast.Load()),
                                 ast.Constant(1), ast.Load())
        if name in ("hd", "List.hd", "tl", "List.tl") and len(args) == 1:
            # Empty on [], as SML raises it (not Python's [0] or [1:])
            return self._cell_call(f"ml_{name.removeprefix('List.')}", args[0])
        if name in ("rev", "List.rev") and len(args) == 1:
            return ast.Subscript(args[0], ast.Slice(None, None, ast.UnaryOp(
                ast.USub(), ast.Constant(1))), ast.Load())
        if name == "List.tabulate" and len(args) == 2:
            return self._cell_call("ml_tabulate", *args)
        if name in ("valOf", "Option.valOf") and len(args) == 1:
            return self._cell_call("ml_valof", args[0])
        if name in ("isSome", "Option.isSome", "Option.isNone") and len(args) == 1:
            op = ast.Eq() if name == "Option.isNone" else ast.NotEq()
            return ast.Compare(args[0], [op], [ast.Constant("NONE")])
        if name in ("getOpt", "Option.getOpt") and len(args) == 2:
            return _call_lambda(("_o", "_d"), ast.IfExp(
                ast.Compare(ast.Name("_o", ast.Load()), [ast.Eq()], [ast.Constant("NONE")]),
                ast.Name("_d", ast.Load()), ast.Subscript(ast.Name("_o", ast.Load()),
                                                          ast.Constant(1), ast.Load())), args)
        if name == "cf" and len(args) == 2:  # CPN Tools' cf (c, ms): how many c in ms
            return ast.Call(ast.Attribute(args[1], "count", ast.Load()), [args[0]], [])
        if name in ("List.nth", "List.drop", "List.take") and len(args) == 2:
            # Subscript outside the list, as SML raises it (not Python's count from the end)
            return self._cell_call(f"ml_{name.removeprefix('List.')}", *args)
        if name in ("String.concat", "concat") and len(args) == 1:
            return ast.Call(ast.Attribute(ast.Constant(""), "join", ast.Load()), args, [])
        if name == "Math.pow" and len(args) == 2:
            return ast.BinOp(args[0], ast.Pow(), args[1])
        if name in _ML_UNARY or name in _ML_BINARY or name in _ML_RANDOM or \
                name in _BASIS_NAMES:
            raise self._unsupported(tree, where, f"{name} applied to {len(args)} argument(s), "
                                    "a form of it tcpn does not translate")
        if name.startswith(("TextIO.open", "TextIO.input")) or name == "TextIO.endOfStream":
            raise self._unsupported(tree, where, f"{name} reads a file, and a file the model "
                                    "names is not part of it (tcpn reads only the .cpn file)",
                                    name)
        raise self._unsupported(tree, where, _unknown(name, (
            f"function {name!r} is not a declared function tcpn imported nor part of the "
            "basis subset it translates")), name)


def _has_real(t: MLType) -> bool:
    """Whether values of type ``t`` contain a real (no equality type in SML). Lists are
    still compared (``q = []``, as CPN models write it); a product or record is refused."""
    if t == REAL_T:
        return True
    if isinstance(t, tuple) and t[0] == "product":
        return any(_has_real(s) for s in t[1])
    if isinstance(t, tuple) and t[0] == "list":
        return _has_real(t[1])
    if isinstance(t, tuple) and t[0] == "record":
        return any(_has_real(s) for _, s in t[2])
    return False


def _thunk(body: ast.expr) -> ast.expr:
    """``lambda: body``."""
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                    kw_defaults=[], kwarg=None, defaults=[]), body)


def _label(token: Any) -> str:
    """The label of a selector token (``#2``, ``# name``)."""
    label = str(token)[1:].strip()
    return label if label.isdigit() else ml_field(label)


def _lambda(params: tuple[str, ...], body: ast.expr) -> ast.expr:
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                    vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                    defaults=[]), body)


def _no_rule_matches(node: ast.expr) -> bool:
    """Whether ``node`` is the import's ``(_ for _ in ()).throw(...)``: no rule matched."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        node.func.attr == "throw" and isinstance(node.func.value, ast.GeneratorExp)


def _one_argument(function: str, arity: int, constructor: str = "") -> ast.expr:
    """A Python function of one argument, as every SML function is: ``function`` itself
    when it takes one, else ``lambda _p: function(*_p)`` (a tuple's components) or
    ``lambda _p: function()`` (unit); with ``constructor``, ``lambda _p: (C, _p)``."""
    argument = ast.Name("_p", ast.Load())
    if constructor:
        return _lambda(("_p",), ast.Tuple([ast.Constant(constructor), argument], ast.Load()))
    if arity == 1:
        return ast.Name(function, ast.Load())
    args: list[ast.expr] = [ast.Starred(argument, ast.Load())] if arity else []
    return _lambda(("_p",), ast.Call(ast.Name(function, ast.Load()), args, []))


def _call_lambda(params: tuple[str, ...], body: ast.expr, args: list[ast.expr]) -> ast.expr:
    arguments = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None,
                              kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.Call(ast.Lambda(arguments, body), args, [])


def to_python(text: str, where: str, **scope: Any) -> str:
    """Translate CPN ML ``text`` to Python source; names not in ``scope`` count as variables.

    A convenience over :class:`MLToPython` for documentation and tests: every name in the
    text that isn't an ML keyword or basis function is taken as a variable.

    >>> to_python("x::q", "arc")
    '(x,) + q'
    >>> to_python("#2 p + Int.min(a, b) div 2", "arc")
    'p[1] + min(a, b) // 2'
    """
    tree = parse_ml(text, where)
    names = frozenset(
        str(tok) for tok in tree.scan_values(lambda v: isinstance(v, LarkToken)
                                             and v.type == "NAME")
    ) - {"true", "false", "not", "time", "empty", "hd", "tl", "rev", "ref", "ignore",
          "valOf", "isSome", "getOpt", "foldl", "foldr", "map", "app"} \
        - set(OPTION_CONSTRUCTORS) - set(_ML_UNARY) - set(_ML_RANDOM) \
        - set(scope.get("functions", ()))
    translator = MLToPython(variables=names, **scope)
    return translator.text(tree, where)


# -- Python -> CPN ML --------------------------------------------------------------------------
def colour_type(colour: ColourSet) -> MLType:
    """The ML type of a colour set's values (timedness aside).

    >>> colour_type(ProductSet(IntSet(), StringSet()))
    ('product', ('int', 'string'))
    """
    if isinstance(colour, BoolSet):
        return BOOL_T
    if isinstance(colour, IntSet):
        return INT_T
    if isinstance(colour, RealSet):
        return REAL_T
    if isinstance(colour, StringSet):
        return STRING_T
    if isinstance(colour, UnitSet):
        return UNIT_T
    if isinstance(colour, EnumSet):
        return ("enum", colour.name, colour.values)
    if isinstance(colour, ProductSet):
        return ("product", tuple(colour_type(c) for c in colour.components))
    if isinstance(colour, RecordSet):
        return ("record", colour.name, tuple((f, colour_type(c)) for f, c in colour.fields))
    if isinstance(colour, ListSet):
        return ("list", colour_type(colour.element))
    if isinstance(colour, UnionSet):
        return ("union", colour.name, tuple((c, None if part is None else colour_type(part))
                                            for c, part in colour.fields))
    raise UnsupportedConstruct(f"colour set {colour.describe()}",
                               "this kind of colour set has no CPN ML form")


def _constructor_test(test: ast.expr) -> tuple[ast.expr, str] | None:
    """(x, C) for ``x[:1] == ('C',)``, the import's test that ``x`` is ``C v``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
            test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Subscript) and isinstance(left.slice, ast.Slice) and \
            left.slice.lower is None and left.slice.step is None and isinstance(
            left.slice.upper, ast.Constant) and left.slice.upper.value == 1 and isinstance(
            right, ast.Tuple) and len(right.elts) == 1 and isinstance(
            right.elts[0], ast.Constant) and isinstance(right.elts[0].value, str):
        return left.value, right.elts[0].value
    return None


def _known(t: MLType) -> bool:
    """Whether ``t`` is a type with no unknown part."""
    if t is None:
        return False
    if isinstance(t, str) or t[0] in ("enum", "record"):
        return True
    if t[0] == "product":
        return all(_known(s) for s in t[1])
    return bool(_known(t[1]))


def _kind(t: MLType) -> str | None:
    if t is None:
        return None
    return t if isinstance(t, str) else str(t[0])


def value_type(value: Any) -> MLType:
    """The ML type of a plain Python constant, or None when it has none."""
    if isinstance(value, bool):
        return BOOL_T
    if isinstance(value, int):
        return INT_T
    if isinstance(value, float):
        return REAL_T
    if isinstance(value, str):
        return STRING_T
    if value == ():
        return UNIT_T
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        parts = tuple(value_type(v) for v in value)
        return None if None in parts else ("product", parts)
    if isinstance(value, frozenset | set) and value:
        elements = {value_type(v) for v in value}
        return ("list", elements.pop()) if len(elements) == 1 and None not in elements else None
    return None


# ML precedence levels of the text the translator writes
_IF, _ORELSE, _ANDALSO, _CMP, _CONS, _ADD, _MUL, _APP, _ATOM = 0, 1, 2, 4, 5, 6, 7, 10, 11
_PY_COMPARE = {ast.Eq: "=", ast.NotEq: "<>", ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=",
               ast.GtE: ">="}


@dataclass(frozen=True)
class FunctionInfo:
    """What the translator knows of a declared function: its ML name and types."""

    ml_name: str
    params: tuple[MLType, ...] | None = None
    returns: MLType = None
    #: the types of a curried function's successive arguments, where known
    curried: tuple[MLType, ...] = ()


@dataclass
class PythonToML:
    """Translate tcpn's Python expressions to CPN ML, guided by the types of the names.

    ``constants`` and ``functions`` describe the net's declarations, ``records`` maps a
    record constructor's Python name to its ML type, ``enum_constants`` the enumeration
    values (a Python string equal to one of them becomes the bare ML constant unless a
    ``string`` is expected), ``real_time`` says whether model time is real (``time()``
    is then a real; otherwise an IntInf converted with ``IntInf.toInt``).
    ``constant_values`` gives the values of constants a membership test ``x in C`` spells
    out, ``generators`` the names of NumPy generators an action draws from with
    ``g.random()`` (CPN ML ``uniform(0.0, 1.0)``, the same draw).

    ``memo``, when given, keeps each translation for the next translator with the same
    names and types (an exporter translates a net several times while it learns the
    types of functions): a repeat costs a dictionary look-up, and the types it taught
    ``call_types`` are taught again.
    """

    constants: Mapping[str, MLType] = field(default_factory=dict)
    constant_names: Mapping[str, str] = field(default_factory=dict)
    functions: Mapping[str, FunctionInfo] = field(default_factory=dict)
    records: Mapping[str, MLType] = field(default_factory=dict)
    enum_constants: Mapping[str, MLType] = field(default_factory=dict)
    real_time: bool = False
    constant_values: Mapping[str, Any] = field(default_factory=dict)
    generators: frozenset[str] = frozenset()
    call_types: dict[str, list[MLType]] = field(default_factory=dict)
    memo: dict[Any, Any] | None = field(default=None, compare=False, repr=False)
    #: constructors of the ``datatype`` declarations read from a file -> whether each
    #: carries a value: where no type is expected, ``"A"`` is ``A`` and ``("B", v)`` is
    #: ``B(v)``, as the import read them
    datatype_constructors: Mapping[str, bool] = field(default_factory=dict)
    #: whether ``valOf``/``List.find``/``Option.map``, ``!``, ``:=`` and sequences, the
    #: import's readings of them, are written back (in inscriptions; a function read
    #: from a file that uses them is written as the file wrote it instead)
    option_forms: bool = True

    def __post_init__(self) -> None:
        self._taught: list[tuple[Any, ...]] | None = None  # while memo records a translation
        self._key: Any = None

    def expression(self, text: str, where: str, variables: Mapping[str, MLType] | None = None,
                   expected: MLType = None, renames: Mapping[str, str] | None = None) -> str:
        """CPN ML for the Python expression ``text``; refusals name ``where`` and the construct."""
        out, _, _ = self.typed(text, where, variables, expected, renames)
        return out

    def typed(self, text: str, where: str, variables: Mapping[str, MLType] | None = None,
              expected: MLType = None, renames: Mapping[str, str] | None = None
              ) -> tuple[str, int, MLType]:
        """Like :meth:`expression`, with the precedence level and the inferred ML type."""
        if self.memo is None:
            return self._typed(text, where, variables, expected, renames)
        names = self._names_key(text)
        if names is None:  # not Python: the translation says why
            return self._typed(text, where, variables, expected, renames)
        key = (names, text, expected, tuple((variables or {}).items()),
               tuple((renames or {}).items()))
        known = self.memo.get(key)
        if known is not None:
            result, taught = known
            for lesson in taught:
                self._teach(*lesson)
            return result
        outer, self._taught = self._taught, []
        try:
            result = self._typed(text, where, variables, expected, renames)
            taught = self._taught
        finally:
            self._taught = outer
        if outer is not None:
            outer.extend(taught)
        self.memo[key] = (result, tuple(taught))
        return result

    def _typed(self, text: str, where: str, variables: Mapping[str, MLType] | None,
               expected: MLType, renames: Mapping[str, str] | None) -> tuple[str, int, MLType]:
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as exc:
            raise InputError(f"{where}: invalid Python expression {text!r}: {exc.msg}") from None
        return _Emitter(self, where, dict(variables or {}), dict(renames or {})).emit(
            tree, expected)

    def _names_key(self, text: str) -> Any:
        """What translating ``text`` reads of this translator (not ``call_types``, which it
        only writes), hashable: which names are in scope, and what is known of those the
        text spells. Translators that agree on these translate ``text`` alike."""
        if self._key is None:
            self._key = (frozenset(self.constants), frozenset(self.functions),
                         frozenset(self.records), frozenset(self.enum_constants.items()),
                         self.real_time, self.generators,
                         frozenset(self.datatype_constructors.items()), self.option_forms)
        assert self.memo is not None
        names = self.memo.get(("names", text))
        if names is None:
            try:
                tree = ast.parse(text.strip(), mode="eval")
            except SyntaxError:
                return None
            names = self.memo[("names", text)] = tuple(sorted(
                {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}))
        return self._key, tuple(
            (self.constants.get(n), self.constant_names.get(n), self.functions.get(n),
             self.records.get(n), id(self.constant_values.get(n))) for n in names)

    def _teach(self, kind: str, ml_name: str, *detail: Any) -> None:
        """Learn of a call of function ``ml_name`` into :attr:`call_types`: its arity
        (``"call"``), the type its caller expects (``"returns"``), an argument's type
        (``"arg"``: position and type, kept if that position's type is still unknown)."""
        if self._taught is not None:
            self._taught.append((kind, ml_name, *detail))
        if kind == "call":
            self.call_types.setdefault(ml_name, [None] * detail[0])
        elif kind == "returns":
            self.call_types.setdefault(f"{ml_name}:returns", [detail[0]])
        else:
            seen = self.call_types[ml_name]
            position, t = detail
            if position < len(seen) and seen[position] is None:
                seen[position] = t

    def infer(self, text: str, where: str, variables: Mapping[str, MLType] | None = None
              ) -> MLType:
        """The ML type of the Python expression ``text`` (None when unknown)."""
        return self.typed(text, where, variables)[2]

    def value(self, value: Any, colour: ColourSet | MLType, where: str) -> str:
        """The CPN ML literal of a token ``value`` of the given colour set (or ML type).

        >>> PythonToML().value((1, "a"), ProductSet(IntSet(), StringSet()), "marking")
        '(1, "a")'
        """
        t = colour_type(colour) if isinstance(colour, ColourSet) else colour
        return _literal(value, t, where)

    def pattern_types(self, text: str, colour_t: MLType, where: str) -> dict[str, MLType]:
        """The variables an input-arc pattern binds and their ML types."""
        key = ("pattern", text, colour_t)
        if self.memo is not None and key in self.memo:
            return dict(self.memo[key])
        tree = ast.parse(text.strip(), mode="eval").body
        found: dict[str, MLType] = {}
        _bind_pattern(tree, colour_t, found, where)
        if self.memo is not None:
            self.memo[key] = dict(found)
        return found


def _bind_pattern(tree: ast.expr, t: MLType, found: dict[str, MLType], where: str) -> None:
    if isinstance(tree, ast.Name):
        found.setdefault(tree.id, t)
    elif isinstance(tree, ast.Tuple):
        if _kind(t) == "product" and len(t[1]) == len(tree.elts):
            for elt, sub in zip(tree.elts, t[1], strict=True):
                _bind_pattern(elt, sub, found, where)
        elif _kind(t) == "record" and len(t[2]) == len(tree.elts):  # its fields in order
            for elt, (_, sub) in zip(tree.elts, t[2], strict=True):
                _bind_pattern(elt, sub, found, where)
        elif _kind(t) == "unit" and not tree.elts:
            return
        else:
            for elt in tree.elts:
                _bind_pattern(elt, None, found, where)


def _literal(value: Any, t: MLType, where: str) -> str:
    kind = _kind(t)
    if kind is None:
        t = value_type(value)
        if t is None:
            raise UnsupportedConstruct(where, f"value {value!r} has no CPN ML literal")
        kind = _kind(t)
    if kind == UNIT_T:
        return "()"
    if kind == BOOL_T:
        return "true" if value else "false"
    if kind == INT_T:
        return ml_int(int(value))
    if kind == REAL_T:
        return ml_real(float(value))
    if kind == STRING_T:
        return ml_string(value)
    if kind == "enum":
        return str(value)
    if kind == "product":
        return "(" + ", ".join(_literal(v, s, where) for v, s in zip(value, t[1], strict=True)) \
            + ")"
    if kind == "record":
        return "{" + ", ".join(f"{f} = {_literal(getattr(value, f), s, where)}"
                               for f, s in t[2]) + "}"
    if kind == "list":
        items = sorted(value) if isinstance(value, frozenset | set) else value
        return "[" + ", ".join(_literal(v, t[1], where) for v in items) + "]"
    if kind == "union":  # "B" is the constructor B, ("A", v) is A(v)
        parts = dict(t[2])
        if isinstance(value, str) and parts.get(value, 0) is None:
            return value
        if isinstance(value, tuple) and len(value) == 2 and parts.get(value[0]) is not None:
            return f"{value[0]}({_literal(value[1], parts[value[0]], where)})"
    raise UnsupportedConstruct(where, f"value {value!r} has no CPN ML literal")


def _wrap(text: str, prec: int, need: int) -> str:
    return text if prec >= need else f"({text})"


Emitted = tuple[str, int, MLType]


class _Emitter:
    """One translation: the variables in scope and the element named in refusals."""

    def __init__(self, owner: PythonToML, where: str, variables: dict[str, MLType],
                 renames: dict[str, str]):
        self.o = owner
        self.where = where
        self.variables = variables
        self.renames = renames

    def refuse(self, node: ast.AST, what: str) -> UnsupportedConstruct:
        source = ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__
        return UnsupportedConstruct(self.where, f"CPN ML has no translation for {source!r}: "
                                    f"{what}")

    def emit(self, node: ast.expr, expected: MLType = None) -> Emitted:
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is None:
            raise self.refuse(node, f"{type(node).__name__} is outside the translated subset")
        result: Emitted = handler(node, expected)
        return result

    def _Constant(self, node: ast.Constant, expected: MLType) -> Emitted:
        value = node.value
        if isinstance(value, bool):
            return ("true" if value else "false"), _ATOM, BOOL_T
        if isinstance(value, int):
            if expected == REAL_T:
                return ml_real(float(value)), _ATOM, REAL_T
            return ml_int(value), _ATOM, INT_T
        if isinstance(value, float):
            try:
                return ml_real(value), _ATOM, REAL_T
            except UnsupportedConstruct:
                raise self.refuse(node, "not a finite number") from None
        if isinstance(value, str):
            if _kind(expected) == "enum" and value in expected[2]:
                return value, _ATOM, expected
            if _kind(expected) == "union" and dict(expected[2]).get(value, 0) is None:
                return value, _ATOM, expected  # a union constructor without a value
            if expected != STRING_T and value in self.o.enum_constants:
                return value, _ATOM, self.o.enum_constants[value]
            if expected is None and self.o.datatype_constructors.get(value) is False:
                return value, _ATOM, None
            try:
                return ml_string(value), _ATOM, STRING_T
            except UnsupportedConstruct as exc:
                raise self.refuse(node, exc.construct) from None
        raise self.refuse(node, f"constant {value!r} has no CPN ML form")

    def _Name(self, node: ast.Name, expected: MLType) -> Emitted:
        name = node.id
        if name in self.variables:
            return self.renames.get(name, name), _ATOM, self.variables[name]
        if name == "now":
            if self.o.real_time:
                return "time()", _APP, REAL_T
            return "IntInf.toInt(time())", _APP, INT_T
        if name in self.o.constants:
            return self.o.constant_names.get(name, name), _ATOM, self.o.constants[name]
        if name in self.o.functions:
            raise self.refuse(node, "a function used as a value")
        raise self.refuse(node, f"unknown name {name!r}")

    def _Tuple(self, node: ast.Tuple, expected: MLType) -> Emitted:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return self._spliced(node, expected)
        if _kind(expected) == "list":
            return self._List(node, expected)
        if not node.elts:
            return "()", _ATOM, UNIT_T
        if expected is None and len(node.elts) == 2 and isinstance(
                node.elts[0], ast.Constant) and isinstance(node.elts[0].value, str) and \
                self.o.datatype_constructors.get(node.elts[0].value):
            # ("B", v) where no type is expected: the datatype constructor B applied to v
            text, _, _ = self.emit(node.elts[1], None)
            return f"{node.elts[0].value}({text})", _APP, None
        if _kind(expected) == "union" and len(node.elts) == 2 and isinstance(
                node.elts[0], ast.Constant) and dict(expected[2]).get(node.elts[0].value):
            # ("A", v) where a union value is expected: the constructor A applied to v
            constructor = str(node.elts[0].value)
            text, _, _ = self.emit(node.elts[1], dict(expected[2])[constructor])
            return f"{constructor}({text})", _APP, expected
        if _kind(expected) == "record" and len(expected[2]) == len(node.elts):
            # a record read as a tuple of its fields (an input arc's record pattern, as
            # the import writes it): written back as the record, field by field
            fields = [self.emit(e, t) for e, (_, t) in zip(node.elts, expected[2],
                                                            strict=True)]
            return "{" + ", ".join(f"{name}={text}" for (name, _), (text, _, _) in zip(
                expected[2], fields, strict=True)) + "}", _ATOM, expected
        subs = expected[1] if _kind(expected) == "product" and len(expected[1]) == len(
            node.elts) else [None] * len(node.elts)
        parts = [self.emit(e, s) for e, s in zip(node.elts, subs, strict=True)]
        return "(" + ", ".join(p[0] for p in parts) + ")", _ATOM, ("product", tuple(
            p[2] for p in parts))

    def _spliced(self, node: ast.Tuple, expected: MLType) -> Emitted:
        """``(x, *q, y)``: a list built of elements and lists (``x::(q ^^ [y])``)."""
        list_t = expected if _kind(expected) == "list" else None
        for e in node.elts:
            if isinstance(e, ast.Starred) and list_t is None:
                t = self.emit(e.value)[2]
                list_t = t if _kind(t) == "list" else None
        element = list_t[1] if list_t is not None else None
        pieces: list[tuple[str, int, bool]] = []  # (text, precedence, is a list)
        for e in node.elts:
            if isinstance(e, ast.Starred):
                text, prec, t = self.emit(e.value, list_t)
                if _kind(t) not in ("list", None):
                    raise self.refuse(node, f"'*' of a {_kind(t)} value")
                pieces.append((text, prec, True))
            else:
                text, prec, t = self.emit(e, element)
                element = element if element is not None else t
                pieces.append((text, prec, False))
        text, prec, is_list = pieces[-1]
        if not is_list:
            text, prec = f"[{text}]", _ATOM
        for head, head_prec, head_list in reversed(pieces[:-1]):
            op = "^^" if head_list else "::"
            text = f"{_wrap(head, head_prec, _CONS + 1)} {op} {_wrap(text, prec, _CONS)}"
            prec = _CONS
        return text, prec, list_t if list_t is not None else ("list", element)

    def _List(self, node: ast.Tuple | ast.List, expected: MLType) -> Emitted:
        element = expected[1] if _kind(expected) == "list" else None
        parts = []
        for e in node.elts:
            text, _, t = self.emit(e, element)
            element = element if element is not None else t
            parts.append(text)
        return "[" + ", ".join(parts) + "]", _ATOM, ("list", element)

    def _numeric(self, left: Emitted, right: Emitted) -> tuple[str, str, MLType]:
        """Coerce an int side to real when the other is real."""
        (lt, _, ltype), (rt, _, rtype) = left, right
        if ltype == REAL_T and rtype == INT_T:
            return lt, f"Real.fromInt({rt})", REAL_T
        if ltype == INT_T and rtype == REAL_T:
            return f"Real.fromInt({lt})", rt, REAL_T
        return lt, rt, ltype if ltype is not None else rtype

    def _operands(self, left_node: ast.expr, right_node: ast.expr, expected: MLType
                  ) -> tuple[Emitted, Emitted]:
        """Emit two numeric operands, each typed by the other when one type is known."""
        hint = expected if expected in (INT_T, REAL_T) else None
        left = self.emit(left_node, hint)
        right = self.emit(right_node, left[2] if left[2] in (INT_T, REAL_T) else hint)
        if left[2] is None and right[2] is not None:
            left = self.emit(left_node, right[2])
        return left, right

    def _condition(self, node: ast.expr) -> Emitted:
        """Emit a boolean; a list's truthiness is ``l <> []``, an int's ``n <> 0``; other
        values have no CPN ML truth value."""
        result = self.emit(node, BOOL_T)
        kind = _kind(result[2])
        if kind == "list":
            return f"{_wrap(result[0], result[1], _CONS)} <> []", _CMP, BOOL_T
        if kind == INT_T:
            return f"{_wrap(result[0], result[1], _CONS)} <> 0", _CMP, BOOL_T
        if result[2] not in (BOOL_T, None):
            raise self.refuse(node, f"a {kind} value used as a condition "
                              "(compare it explicitly)")
        return result

    def _BinOp(self, node: ast.BinOp, expected: MLType) -> Emitted:
        op = node.op
        if isinstance(op, ast.Add):
            return self._add(node, expected)
        if isinstance(op, ast.Sub | ast.Mult):
            prec = _ADD if isinstance(op, ast.Sub) else _MUL
            left, right = self._operands(node.left, node.right, expected)
            lt, rt, t = self._numeric(left, right)
            if _kind(t) not in (INT_T, REAL_T, None):
                raise self.refuse(node, f"arithmetic on {_kind(t)} values")
            lt = _wrap(lt, left[1] if lt == left[0] else _APP, prec)
            rt = _wrap(rt, right[1] if rt == right[0] else _APP, prec + 1)
            return f"{lt} {'-' if prec == _ADD else '*'} {rt}", prec, t
        if isinstance(op, ast.Div):
            left, right = self.emit(node.left, REAL_T), self.emit(node.right, REAL_T)
            lt = left[0] if left[2] != INT_T else f"Real.fromInt({left[0]})"
            rt = right[0] if right[2] != INT_T else f"Real.fromInt({right[0]})"
            lp = left[1] if left[2] != INT_T else _APP
            rp = right[1] if right[2] != INT_T else _APP
            return f"{_wrap(lt, lp, _MUL)} / {_wrap(rt, rp, _MUL + 1)}", _MUL, REAL_T
        if isinstance(op, ast.RShift | ast.LShift):
            # by a constant: a floor division (Python's >> and SML's div both floor) or a
            # product by that power of two; CPN ML's int has no shift
            shift = node.right
            if not (isinstance(shift, ast.Constant) and type(shift.value) is int
                    and 0 <= shift.value < 62):
                raise self.refuse(node, "a shift by other than a constant 0..61 (CPN ML's "
                                  "int has no shift operator)")
            power = ast.Constant(2 ** shift.value)
            return self._BinOp(ast.BinOp(node.left, ast.FloorDiv() if isinstance(
                op, ast.RShift) else ast.Mult(), power), expected)
        if isinstance(op, ast.FloorDiv | ast.Mod):
            left, right = self.emit(node.left, INT_T), self.emit(node.right, INT_T)
            if REAL_T in (left[2], right[2]):
                raise self.refuse(node, "'//' and '%' on reals (CPN ML's div and mod take ints)")
            word = "div" if isinstance(op, ast.FloorDiv) else "mod"
            return (f"{_wrap(left[0], left[1], _MUL)} {word} {_wrap(right[0], right[1], _MUL + 1)}",
                    _MUL, INT_T)
        if isinstance(op, ast.Pow):
            left, right = self.emit(node.left, REAL_T), self.emit(node.right)
            if left[2] != REAL_T:
                raise self.refuse(node, "'**' translates for a real base only (Math.pow); "
                                  "CPN ML has no integer power")
            exponent = f"Real.fromInt({right[0]})" if right[2] == INT_T else right[0]
            return f"Math.pow({left[0]}, {exponent})", _APP, REAL_T
        raise self.refuse(node, f"operator {type(op).__name__}")

    def _add(self, node: ast.BinOp, expected: MLType) -> Emitted:
        left_node, right_node = node.left, node.right
        if isinstance(left_node, ast.Tuple) and len(left_node.elts) == 1:
            hint = expected if _kind(expected) == "list" else None
            rest = self.emit(right_node, hint)
            list_t = rest[2] if _kind(rest[2]) == "list" else hint
            element = list_t[1] if list_t is not None and _kind(list_t) == "list" else None
            head = self.emit(left_node.elts[0], element)
            t = list_t if list_t is not None else ("list", head[2])
            return f"{_wrap(head[0], head[1], _CONS + 1)} :: {_wrap(rest[0], rest[1], _CONS)}", \
                _CONS, t
        hint = expected if _kind(expected) in (INT_T, REAL_T, STRING_T, "list") else None
        left = self.emit(left_node, hint)
        right = self.emit(right_node, left[2] if left[2] is not None else hint)
        if left[2] is None and right[2] is not None:
            left = self.emit(left_node, right[2])
        kind = _kind(left[2]) or _kind(right[2])
        if kind == STRING_T:
            return f"{_wrap(left[0], left[1], _ADD)} ^ {_wrap(right[0], right[1], _ADD + 1)}", \
                _ADD, STRING_T
        if kind == "list":
            t = left[2] if _kind(left[2]) == "list" else right[2]
            return f"{_wrap(left[0], left[1], _CONS + 1)} ^^ {_wrap(right[0], right[1], _CONS)}", \
                _CONS, t
        if kind not in (INT_T, REAL_T, None):
            raise self.refuse(node, f"'+' on {kind} values")
        lt, rt, t = self._numeric(left, right)
        lp = left[1] if lt == left[0] else _APP
        rp = right[1] if rt == right[0] else _APP
        return f"{_wrap(lt, lp, _ADD)} + {_wrap(rt, rp, _ADD + 1)}", _ADD, t

    def _UnaryOp(self, node: ast.UnaryOp, expected: MLType) -> Emitted:
        if isinstance(node.op, ast.Not):
            emitted = self.emit(node.operand, BOOL_T)
            if _kind(emitted[2]) == "list":
                return f"{_wrap(emitted[0], emitted[1], _CONS)} = []", _CMP, BOOL_T
            text, _, _ = self._condition(node.operand)
            return f"not({text})", _APP, BOOL_T
        if isinstance(node.op, ast.UAdd):
            return self.emit(node.operand, expected)
        if isinstance(node.op, ast.USub):
            operand = node.operand
            if isinstance(operand, ast.Constant) and isinstance(operand.value, int | float) \
                    and not isinstance(operand.value, bool):
                return self._Constant(ast.Constant(-operand.value), expected)
            text, _, t = self.emit(operand, expected)
            return f"~({text})", _APP, t
        raise self.refuse(node, "bitwise inversion")

    def _BoolOp(self, node: ast.BoolOp, expected: MLType) -> Emitted:
        word, prec = ("andalso", _ANDALSO) if isinstance(node.op, ast.And) else ("orelse",
                                                                                   _ORELSE)
        # (a and b) and c is written a andalso b andalso c, as the importer reads it back
        values: list[ast.expr] = []
        pending = list(node.values)
        while pending:
            value = pending.pop(0)
            if isinstance(value, ast.BoolOp) and type(value.op) is type(node.op):
                pending[:0] = value.values
            else:
                values.append(value)
        parts = [self._condition(v) for v in values]
        # andalso in andalso (a real's equality) needs no parentheses: the same value
        return f" {word} ".join(_wrap(t, p, prec) for t, p, _ in parts), prec, BOOL_T

    def _Compare(self, node: ast.Compare, expected: MLType) -> Emitted:
        pieces: list[tuple[str, int]] = []  # each comparison and its precedence
        left_node = node.left
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                pieces.append(self._membership(node, left_node, right_node,
                                               isinstance(op, ast.NotIn)))
                left_node = right_node
                continue
            if type(op) not in _PY_COMPARE:
                raise self.refuse(node, f"comparison {type(op).__name__} ('is')")
            left = self.emit(left_node)
            right = self.emit(right_node, left[2])
            if left[2] is None and right[2] is not None:
                left = self.emit(left_node, right[2])
            lt, rt, t = self._numeric(left, right)
            lp = left[1] if lt == left[0] else _APP
            rp = right[1] if rt == right[0] else _APP
            a, b = _wrap(lt, lp, _CONS), _wrap(rt, rp, _CONS)
            if isinstance(op, ast.Eq | ast.NotEq) and t == REAL_T:
                # SML's real is no equality type: '=' on reals doesn't type-check; both
                # '<=' and '>=' is Python's '==' (NaN included)
                same = f"{a} <= {b} andalso {a} >= {b}"
                pieces.append((same, _ANDALSO) if isinstance(op, ast.Eq) else
                              (f"not({same})", _APP))
            elif isinstance(op, ast.Eq | ast.NotEq) and _has_real(left[2] or right[2]) \
                    and _kind(left[2] or right[2]) != "list":
                raise self.refuse(node, "equality of values that hold reals (SML's real is "
                                  "no equality type): compare the real components")
            else:
                pieces.append((f"{a} {_PY_COMPARE[type(op)]} {b}", _CMP))
            left_node = right_node
        if len(pieces) == 1:
            return pieces[0][0], pieces[0][1], BOOL_T
        # no parentheses that the importer would not keep: 1 < x andalso x <= 4
        return " andalso ".join(_wrap(p, prec, _ANDALSO) for p, prec in pieces), _ANDALSO, \
            BOOL_T

    def _membership(self, node: ast.Compare, left_node: ast.expr, right_node: ast.expr,
                    negated: bool) -> tuple[str, int]:
        """``x in C`` for a literal tuple or a constant collection ``C``: one equality per
        member (``false`` for none)."""
        if isinstance(right_node, ast.Tuple | ast.List | ast.Set):
            members: list[ast.expr] = list(right_node.elts)
        elif isinstance(right_node, ast.Name) and right_node.id not in self.variables and \
                isinstance(self.o.constant_values.get(right_node.id), tuple | frozenset | set):
            values = self.o.constant_values[right_node.id]
            members = [ast.Constant(v) for v in (sorted(values) if isinstance(
                values, frozenset | set) else values)]
        else:
            # a list the binding gives (the import's mem l x): CPN Tools' mem
            collection = self.emit(right_node)
            if _kind(collection[2]) != "list":
                raise self.refuse(node, "'in' tests membership of a literal tuple, a constant "
                                  "collection or a list only")
            element_type = collection[2][1] if isinstance(collection[2], tuple) else None
            element = self.emit(left_node, element_type)
            if _has_real(element_type or element[2]):
                raise self.refuse(node, "membership of values that hold reals (SML's real "
                                  "is no equality type)")
            text = (f"mem {_wrap(collection[0], collection[1], _ATOM)} "
                    f"{_wrap(element[0], element[1], _ATOM)}")
            return (f"not({text})" if negated else text), _APP
        left = self.emit(left_node)
        tests = []
        for member in members:
            right = self.emit(member, left[2])
            lt, rt, _ = self._numeric(left, right)
            tests.append(f"{_wrap(lt, left[1], _CONS)} = {_wrap(rt, right[1], _CONS)}")
        text = " orelse ".join(tests) if tests else "false"
        if negated:
            return f"not({text})", _APP
        return text, _ORELSE if len(tests) > 1 else _CMP if tests else _ATOM

    def _IfExp(self, node: ast.IfExp, expected: MLType) -> Emitted:
        matched = self._case(node, expected)
        if matched is not None:
            return matched
        if _constructor_test(node.test) is not None:
            raise self.refuse(node, "a match on a constructor (SOME v, a datatype's C v) "
                              "other than 'C name' and 'C _' in an inscription")
        cond = self._condition(node.test)
        then = self.emit(node.body, expected)
        other = self.emit(node.orelse, expected if expected is not None else then[2])
        # a tuple literal beside a list is a list: (x,) if c else q
        if (then[2] is None or _kind(then[2]) in (UNIT_T, "product")) and _kind(
                other[2]) not in (None, UNIT_T, "product"):
            then = self.emit(node.body, other[2])
        elif _kind(other[2]) in (UNIT_T, "product") and _kind(then[2]) == "list":
            other = self.emit(node.orelse, then[2])
        then_text, other_text, t = self._numeric(then, other)
        return f"if {cond[0]} then {then_text} else {other_text}", _IF, t

    def _case(self, node: ast.IfExp, expected: MLType) -> Emitted | None:
        """``a if x == c1 else b if x == c2 else <no rule matches>``, the import's reading
        of ``case x of c1 => a | c2 => b``: written back as it (no rule matching is SML's
        ``Match``, as the Python's error); None for other conditionals."""
        branches: list[tuple[ast.expr, ast.expr]] = []
        current: ast.expr = node
        while isinstance(current, ast.IfExp):
            branches.append((current.test, current.body))
            current = current.orelse
        constructors = [_constructor_test(test) for test, _ in branches]
        if any(constructors) and not self.o.option_forms:
            return None  # a function read from a file that matches them: written as read
        # a match on constructors may end in a wildcard (| _ => e); others in no match
        if not _no_rule_matches(current) and not any(constructors):
            return None
        subjects = set()
        for (test, _), constructor in zip(branches, constructors, strict=True):
            if constructor is not None:
                subjects.add(ast.dump(constructor[0]))
                continue
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
                    test.ops[0], ast.Eq) and isinstance(test.comparators[0], ast.Constant)):
                return None
            subjects.add(ast.dump(test.left))
        if len(subjects) != 1:
            return None
        first = constructors[0][0] if constructors[0] else branches[0][0]
        subject_node = first if constructors[0] else first.left  # type: ignore[attr-defined]
        subject_text, _, subject_type = self.emit(subject_node)
        rules = []
        t = expected
        for (test, body), constructor in zip(branches, constructors, strict=True):
            if constructor is not None:
                rule = self._constructor_rule(constructor[1], body, subject_node, t)
                if rule is None:
                    return None
                pattern, text, body_type = rule
            else:
                assert isinstance(test, ast.Compare)
                value = test.comparators[0]
                known = {**OPTION_CONSTRUCTORS, **self.o.datatype_constructors}
                if isinstance(value, ast.Constant) and isinstance(value.value, str) and \
                        known.get(value.value) is False:
                    pattern = value.value  # a constructor without a value: NONE, Dot
                else:
                    pattern = self.emit(value, subject_type)[0]
                text, _, body_type = self.emit(body, t)
            t = t if t is not None else body_type
            rules.append(f"{pattern} => {text}")
        if not _no_rule_matches(current):
            text, _, body_type = self.emit(current, t)
            t = t if t is not None else body_type
            rules.append(f"_ => {text}")
        return f"(case {subject_text} of {' | '.join(rules)})", _ATOM, t

    def _constructor_rule(self, constructor: str, body: ast.expr, subject: ast.expr,
                          expected: MLType) -> tuple[str, str, MLType] | None:
        """The rule ``C v => e`` of a match: the import binds the payload as
        ``(lambda v: e)(x[1])`` (``C _ => e`` when it does not); None for other forms."""
        def payload(node: ast.AST) -> bool:
            return isinstance(node, ast.Subscript) and ast.dump(node.value) == ast.dump(
                subject) and isinstance(node.slice, ast.Constant) and node.slice.value == 1

        if isinstance(body, ast.Call) and isinstance(body.func, ast.Lambda) and \
                len(body.args) == 1 and len(body.func.args.args) == 1 and \
                payload(body.args[0]) and not body.keywords:
            param = body.func.args.args[0].arg
            inner = body.func.body
            if any(payload(n) for n in ast.walk(inner)):
                return None
            taken = set(self.variables) | set(self.renames.values()) | set(self.o.constants)
            base = re.sub(r"^[^A-Za-z]+", "", param) or "v"
            name, suffix = base, 2
            while name in taken or not is_ml_identifier(name):
                name, suffix = f"{base}_{suffix}", suffix + 1
            emitter = _Emitter(self.o, self.where, {**self.variables, param: None},
                               {**self.renames, param: name})
            text, _, t = emitter.emit(inner, expected)
            return f"{constructor} {name}", text, t
        if any(payload(n) for n in ast.walk(body)):
            return None
        text, _, t = self.emit(body, expected)
        return f"{constructor} _", text, t

    def _count(self, node: ast.expr) -> ast.expr | None:
        """``len`` of a multiset the import wrote as a repeated tuple (``(v,) * k``, a
        tuple, or a conditional of them) as an int expression (``k``); None otherwise."""
        if isinstance(node, ast.Tuple) and not any(isinstance(e, ast.Starred)
                                                   for e in node.elts):
            return ast.Constant(len(node.elts))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for repeated, times in ((node.left, node.right), (node.right, node.left)):
                if isinstance(repeated, ast.Tuple) and len(repeated.elts) == 1:
                    return times
            return None
        if isinstance(node, ast.IfExp):
            body, orelse = self._count(node.body), (
                node.orelse if _no_rule_matches(node.orelse) else self._count(node.orelse))
            if body is None or orelse is None:
                return None
            return ast.IfExp(node.test, body, orelse)
        return None

    def _Attribute(self, node: ast.Attribute, expected: MLType) -> Emitted:
        text, _, t = self.emit(node.value)
        field_t = None
        if _kind(t) == "record":
            fields = dict(t[2])
            if node.attr not in fields:
                raise self.refuse(node, f"record {t[1]} has no field {node.attr!r}")
            field_t = fields[node.attr]
        elif t is not None:
            raise self.refuse(node, f"attribute of a {_kind(t)} value")
        return f"#{node.attr}({text})", _APP, field_t

    def _Subscript(self, node: ast.Subscript, expected: MLType) -> Emitted:
        index = node.slice
        if isinstance(node.value, ast.Tuple) and len(node.value.elts) > 1 and isinstance(
                index, ast.UnaryOp) and isinstance(index.op, ast.USub) and isinstance(
                index.operand, ast.Constant) and index.operand.value == 1:
            # (e1, ..., en)[-1], the import's reading of the sequence (e1; ...; en)
            *effects, last = node.value.elts
            texts = [self.emit(e)[0] for e in effects]
            text, _, t = self.emit(last, expected)
            return "(" + "; ".join([*texts, text]) + ")", _ATOM, t
        text, _, t = self.emit(node.value)
        if isinstance(index, ast.Slice):
            step_back = (index.lower is None and index.upper is None and isinstance(
                index.step, ast.UnaryOp) and isinstance(index.step.op, ast.USub)
                and isinstance(index.step.operand, ast.Constant) and index.step.operand.value == 1)
            if _kind(t) in ("list", None) and step_back:
                return f"rev({text})", _APP, t
            if (_kind(t) in ("list", None) and isinstance(index.lower, ast.Constant)
                    and index.lower.value == 1 and index.upper is None and index.step is None):
                return f"tl({text})", _APP, t
            if _kind(t) in ("list", None) and index.step is None and index.lower is not None \
                    and index.upper is None:
                start, _, _ = self.emit(index.lower, INT_T)
                if isinstance(index.lower, ast.UnaryOp) and isinstance(index.lower.op, ast.USub):
                    # q[-n:]: the last n (all of q when it is shorter)
                    count, _, _ = self.emit(index.lower.operand, INT_T)
                    return (f"List.drop({text}, Int.max(0, length({text}) - {count}))", _APP, t)
                return f"List.drop({text}, {start})", _APP, t
            if _kind(t) in ("list", None) and index.step is None and index.lower is None \
                    and index.upper is not None:
                count, _, _ = self.emit(index.upper, INT_T)
                return f"List.take({text}, {count})", _APP, t
            raise self.refuse(node, "slices other than [1:] (tl), [::-1] (rev), [k:] and [:k] "
                              "(List.drop, List.take)")
        constant = index.value if isinstance(index, ast.Constant) and isinstance(
            index.value, int) and not isinstance(index.value, bool) else None
        if _kind(t) == "list":
            if constant == 0:
                return f"hd({text})", _APP, t[1]
            position = self.emit(index, INT_T)[0]
            return f"List.nth({text}, {position})", _APP, t[1]
        if constant is None or constant < 0:
            raise self.refuse(node, "a tuple index must be a non-negative int constant")
        if _kind(t) == "product":
            if constant >= len(t[1]):
                raise self.refuse(node, f"index {constant} out of a {len(t[1])}-tuple")
            return f"#{constant + 1}({text})", _APP, t[1][constant]
        if _kind(t) == "record":
            name, sub = t[2][constant]
            return f"#{name}({text})", _APP, sub
        if t is None:
            return f"#{constant + 1}({text})", _APP, None
        raise self.refuse(node, f"indexing a {_kind(t)} value")

    def _Call(self, node: ast.Call, expected: MLType) -> Emitted:
        func = node.func
        if isinstance(func, ast.Lambda):
            return self._let(node, func, expected)
        if isinstance(func, ast.Attribute):
            return self._method(node, func, expected)
        if isinstance(func, ast.Call):
            return self._curried(node, expected)
        if not isinstance(func, ast.Name):
            raise self.refuse(node, "only calls of named functions translate")
        if node.keywords and func.id not in self.o.records:
            raise self.refuse(node, "keyword arguments")
        name = func.id
        if name in self.o.records:
            return self._record(node, self.o.records[name])
        if name in ("ml_int_string", "ml_real_string", "ml_tabulate") or \
                name in MATH_FUNCTIONS:  # read back as written
            return self._builtin(node, name, expected)
        if name == "len" and len(node.args) == 1 and name not in self.o.functions:
            count = self._count(node.args[0])
            if count is not None and not isinstance(node.args[0], ast.Tuple):
                return self.emit(count, INT_T)
        if name in ("ml_foldl", "ml_foldr") and len(node.args) == 3 and not node.keywords:
            return self._fold(node, name.removeprefix("ml_"), expected)
        if name in _OPTIONS_AND_CELLS and not node.keywords:
            return self._option_or_cell(node, name, expected)
        if name in _LIST_ACCESS and not node.keywords:
            return self._list_access(node, name, expected)
        if name in _WRITTEN_BACK and not node.keywords:
            function, curried, result = _WRITTEN_BACK[name]
            if len(node.args) != (2 if curried else 1):
                raise self.refuse(node, f"{function} with {len(node.args)} argument(s)")
            emitted = [self.emit(a) for a in node.args]
            return (" ".join([function, *(_wrap(text, prec, _ATOM)
                                          for text, prec, _ in emitted)]), _APP, result)
        if name in ML_BASIS_DECLARATIONS and name not in ("floor", "ceil", "ml_tabulate"):
            spelling = _LIBRARY_SPELLING.get(name, name.removeprefix("ml_"))
            raise self.refuse(node, f"{spelling} (SML or CPN Tools, read from a file) is not "
                              "written back by the export")
        if name in self.o.functions:
            info = self.o.functions[name]
            params = info.params or (None,) * len(node.args)
            if len(params) != len(node.args):
                raise self.refuse(node, f"{name} takes {len(params)} argument(s)")
            self.o._teach("call", info.ml_name, len(params))
            if _known(expected) and expected != BOOL_T and info.returns is None:
                self.o._teach("returns", info.ml_name, expected)
            args = []
            for i, (a, p) in enumerate(zip(node.args, params, strict=True)):
                text, _, t = self.emit(a, p)
                if p == REAL_T and t == INT_T:
                    text, t = f"Real.fromInt({text})", REAL_T
                if _known(t):
                    self.o._teach("arg", info.ml_name, i, t)
                args.append(text)
            return f"{info.ml_name}({', '.join(args)})", _APP, info.returns
        if name in self.variables or name in self.o.constants:
            raise self.refuse(node, f"{name!r} is not a function")
        return self._builtin(node, name, expected)

    def _list_access(self, node: ast.Call, name: str, expected: MLType) -> Emitted:
        """The import's readings of ``hd``, ``tl``, ``List.last``, ``List.nth``,
        ``List.take`` and ``List.drop`` (``ml_hd(l)``, ``ml_nth(l, i)``...), which raise
        SML's ``Empty``/``Subscript``, written back as the same calls."""
        args = node.args
        if len(args) != _LIST_ACCESS[name]:
            raise self.refuse(node, f"{_LIBRARY_SPELLING[name]} with {len(args)} argument(s)")
        text, _, t = self.emit(args[0])
        element = t[1] if _kind(t) == "list" else None
        if name in ("ml_hd", "ml_last"):
            function = "hd" if name == "ml_hd" else "List.last"
            return f"{function}({text})", _APP, element if element is not None else expected
        if name == "ml_tl":
            return f"tl({text})", _APP, t
        position, _, _ = self.emit(args[1], INT_T)
        spelling = _LIBRARY_SPELLING[name]
        if name == "ml_nth":
            return (f"{spelling}({text}, {position})", _APP,
                    element if element is not None else expected)
        return f"{spelling}({text}, {position})", _APP, t

    def _option_or_cell(self, node: ast.Call, name: str, expected: MLType) -> Emitted:
        """The import's readings of ``valOf e``, ``List.find f l``, ``Option.map f e``,
        ``!r`` and ``r := e`` (``ml_valof(e)``...), written back as CPN ML. A cell is a
        ``val r = ref v`` of the net's declarations: ``!r`` has the type of ``v``."""
        args = node.args
        if not self.o.option_forms:
            raise self.refuse(node, f"{_LIBRARY_SPELLING[name]} (SML or CPN Tools, read from "
                              "a file) is not written back by the export")
        arity = {"ml_valof": 1, "ml_deref": 1, "ml_find": 2, "ml_option_map": 2,
                 "ml_assign": 2}[name]
        if len(args) != arity:
            raise self.refuse(node, f"{_LIBRARY_SPELLING[name]} with {len(args)} argument(s)")
        if name == "ml_valof":
            text, element = self._option(args[0])
            return f"valOf({text})", _APP, element if element is not None else expected
        if name in ("ml_find", "ml_option_map"):
            # an option: valOf's argument or the subject of a case (_case)
            return self._option(node)[0], _APP, None
        cell = args[0]
        if not isinstance(cell, ast.Name) or cell.id not in self.o.constants:
            raise self.refuse(node, f"{_LIBRARY_SPELLING[name]} of something other than a "
                              "reference cell of the declarations")
        held = self.o.constant_values.get(cell.id)
        held_type = value_type(getattr(held, "initial", None)) if hasattr(held, "initial") \
            else None
        ref, _, _ = self.emit(cell)
        if name == "ml_deref":
            return f"(!{ref})", _ATOM, held_type if held_type is not None else expected
        text, _, _ = self.emit(args[1], held_type)
        return f"({ref} := {text})", _ATOM, UNIT_T

    def _option(self, node: ast.expr) -> tuple[str, MLType]:
        """An option valOf takes: ``List.find f l`` (its value of the type of ``l``'s
        elements), ``Option.map f o`` (of unknown type), or any other expression."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("ml_find", "ml_option_map") and len(node.args) == 2 and \
                not node.keywords:
            fn = self._function_value(node.args[0])
            if node.func.id == "ml_option_map":
                return f"Option.map ({fn}) ({self._option(node.args[1])[0]})", None
            text, _, listed = self.emit(node.args[1], ("list", None))
            element = listed[1] if listed is not None and _kind(listed) == "list" else None
            return f"List.find ({fn}) ({text})", element
        return self.emit(node)[0], None

    def _curried(self, node: ast.Call, expected: MLType) -> Emitted:
        """``f(a)(b)``, the import's reading of a curried call ``f a b`` of a declared
        function: written back as one; its type is the declaration's business."""
        groups: list[list[ast.expr]] = []
        head: ast.expr = node
        while isinstance(head, ast.Call):
            if head.keywords:
                raise self.refuse(node, "keyword arguments")
            groups.append(head.args)
            head = head.func
        if not isinstance(head, ast.Name) or head.id not in self.o.functions:
            raise self.refuse(node, "only curried calls of declared functions translate")
        info = self.o.functions[head.id]
        parts = [info.ml_name]
        for i, args in enumerate(reversed(groups)):
            known = info.curried[i] if i < len(info.curried) and len(args) == 1 else None
            texts = [self.emit(a, known)[0] for a in args]
            parts.append(f"({', '.join(texts)})")
        return " ".join(parts), _APP, None

    def _mapped(self, gen: ast.GeneratorExp, expected: MLType, spelling: str = "List.map"
                ) -> Emitted | None:
        """``tuple(e for v in l)`` over a list ``l`` (not ``range``), the import's reading
        of ``List.map (fn v => e) l``, and ``any(...)``/``all(...)`` of the same form, its
        reading of ``List.exists``/``List.all`` (``spelling``; ``expected`` is then bool):
        written back as they were; None for other generators."""
        if len(gen.generators) != 1:
            return None
        loop = gen.generators[0]
        target = loop.target
        names = tuple(e.id for e in target.elts if isinstance(e, ast.Name)) \
            if isinstance(target, ast.Tuple) else ()
        flat = isinstance(target, ast.Tuple) and len(names) == len(target.elts)
        if loop.ifs or loop.is_async or not (isinstance(target, ast.Name) or flat) or (
                isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
                and loop.iter.func.id == "range"):
            return None
        if isinstance(target, ast.Name):
            fn = self._function_value(_lambda((target.id,), gen.elt))
        else:  # for a, b in l: fn (a, b) => e, in the import's spelling of it
            parts: list[ast.expr] = [ast.Subscript(ast.Name("_m", ast.Load()), ast.Constant(i),
                                                   ast.Load()) for i in range(len(names))]
            fn = self._function_value(_lambda(("_m",), ast.Call(
                _lambda(names, gen.elt), parts, [])))
        listed = self.emit(loop.iter, ("list", None))[0]
        if spelling != "List.map":
            return f"{spelling} ({fn}) ({listed})", _APP, BOOL_T
        return f"List.map ({fn}) ({listed})", _APP, expected if _kind(expected) == "list" \
            else ("list", None)

    def _fold(self, node: ast.Call, name: str, expected: MLType) -> Emitted:
        """``ml_foldl(f, b, l)``, the import's reading of ``foldl f b l``: written back as
        it, ``f`` an ``fn`` (:meth:`_function_value`); its value has the type of ``b``."""
        function, initial, items = node.args
        base = self.emit(initial, expected)
        listed = self.emit(items, ("list", None))
        fn = self._function_value(function)
        return (f"{name} ({fn}) ({base[0]}) ({listed[0]})", _APP,
                base[2] if base[2] is not None else expected)

    def _function_value(self, node: ast.expr) -> str:
        """A function passed as a value, as the import writes ``fn`` (a declared function
        by its name; ``lambda _m: (lambda a, b: e)(_m[0], _m[1])`` is ``fn (a, b) => e``,
        ``lambda _m: (lambda a: e)(_m)`` is ``fn a => e``); its body's types unknown."""
        if isinstance(node, ast.Name) and node.id in self.o.functions:
            return self.o.functions[node.id].ml_name
        if not isinstance(node, ast.Lambda) or len(node.args.args) != 1 or \
                node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            raise self.refuse(node, "a function value other than a declared function or "
                              "an 'fn' read from a file")
        outer = node.args.args[0].arg
        params: list[str] = [outer]
        body = node.body
        if isinstance(body, ast.Call) and isinstance(body.func, ast.Lambda) and \
                not body.keywords and len(body.func.args.args) == len(body.args):
            inner = [a.arg for a in body.func.args.args]
            single = len(body.args) == 1 and isinstance(body.args[0], ast.Name) and \
                body.args[0].id == outer
            parts = all(isinstance(a, ast.Subscript) and isinstance(a.value, ast.Name) and
                        a.value.id == outer and isinstance(a.slice, ast.Constant) and
                        a.slice.value == i for i, a in enumerate(body.args))
            if single or (parts and len(inner) > 1):
                params, body = inner, body.func.body
        taken = set(self.variables) | set(self.renames.values()) | set(self.o.constants) | {
            info.ml_name for info in self.o.functions.values()}
        variables = dict(self.variables)
        renames = dict(self.renames)
        names = []
        for param in params:
            base = re.sub(r"^[^A-Za-z]+", "", param) or "v"
            ml_name, suffix = base, 2
            while ml_name in taken or not is_ml_identifier(ml_name):
                ml_name, suffix = f"{base}_{suffix}", suffix + 1
            taken.add(ml_name)
            variables[param] = None
            renames[param] = ml_name
            names.append(ml_name)
        text = _Emitter(self.o, self.where, variables, renames).emit(body)[0]
        pattern = names[0] if len(names) == 1 else f"({', '.join(names)})"
        return f"fn {pattern} => {text}"

    def _method(self, node: ast.Call, func: ast.Attribute, expected: MLType) -> Emitted:
        """``r._replace(f=e)`` on a record (a new record: the others fields copied),
        ``rng.random()`` on an action's generator (``uniform(0.0, 1.0)``) and
        ``''.join(l)`` (``String.concat l``)."""
        owner = func.value
        if func.attr == "join" and isinstance(owner, ast.Constant) and owner.value == "" \
                and len(node.args) == 1 and not node.keywords:
            # the import's reading of String.concat l (a list of strings)
            listed = self.emit(node.args[0], ("list", STRING_T))[0]
            return f"String.concat ({listed})", _APP, STRING_T
        if func.attr == "tolist" and not node.args and isinstance(owner, ast.Call) and \
                isinstance(owner.func, ast.Attribute) and owner.func.attr == "random" and \
                isinstance(owner.func.value, ast.Name) and owner.func.value.id in \
                self.o.generators and len(owner.args) == 1:
            # n draws at once: the same stream as n draws one by one
            count = self.emit(owner.args[0], INT_T)[0]
            return f"List.tabulate({count}, fn _ => uniform(0.0, 1.0))", _APP, ("list", REAL_T)
        if isinstance(owner, ast.Name) and owner.id in self.o.generators \
                and owner.id not in self.variables:
            if func.attr == "random" and not node.args and not node.keywords:
                return "uniform(0.0, 1.0)", _APP, REAL_T
            raise self.refuse(node, "of a NumPy generator only random() translates (CPN ML "
                              "uniform(0.0, 1.0)); call uniform/exponential/normal/discrete")
        if func.attr != "_replace":
            raise self.refuse(node, "only calls of named functions and a record's _replace "
                              "translate")
        if node.args:
            raise self.refuse(node, "_replace takes keyword arguments")
        text, prec, t = self.emit(owner, expected if _kind(expected) == "record" else None)
        if _kind(t) != "record":
            raise self.refuse(node, "_replace of a value that is not a record of a declared "
                              "record colour set")
        fields = dict(t[2])
        given = {}
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in fields:
                raise self.refuse(node, f"record {t[1]} has no field {kw.arg!r}")
            given[kw.arg] = self.emit(kw.value, fields[kw.arg])[0]
        if isinstance(owner, ast.Name) or prec >= _ATOM:
            return "{" + ", ".join(f"{f} = {given.get(f, f'#{f}({text})')}"
                                   for f, _ in t[2]) + "}", _ATOM, t
        taken = set(self.variables) | set(self.renames.values()) | set(self.o.constants)
        source, suffix = "rec_", 2
        while source in taken:
            source, suffix = f"rec_{suffix}", suffix + 1
        body = "{" + ", ".join(f"{f} = {given.get(f, f'#{f}({source})')}"
                               for f, _ in t[2]) + "}"
        return f"let val {source} = {text} in {body} end", _ATOM, t

    def _record(self, node: ast.Call, t: MLType) -> Emitted:
        fields = dict(t[2])
        given: dict[str, ast.expr] = {}
        for (fname, _), arg in zip(t[2], node.args, strict=False):
            given[fname] = arg
        for kw in node.keywords:
            if kw.arg is None or kw.arg not in fields:
                raise self.refuse(node, f"record {t[1]} has no field {kw.arg!r}")
            given[kw.arg] = kw.value
        missing = [f for f, _ in t[2] if f not in given]
        if missing or len(node.args) > len(t[2]):
            raise self.refuse(node, f"record {t[1]} needs exactly its fields "
                              f"{[f for f, _ in t[2]]}")
        parts = [f"{f} = {self.emit(given[f], fields[f])[0]}" for f, _ in t[2]]
        return "{" + ", ".join(parts) + "}", _ATOM, t

    def _let(self, node: ast.Call, func: ast.Lambda, expected: MLType) -> Emitted:
        matched = self._case_of(node, func, expected)
        if matched is not None:
            return matched
        vals, body = self._let_parts(node, func, expected)
        if not vals:
            return body
        return f"let {' '.join(vals)} in {body[0]} end", _ATOM, body[2]

    def _case_of(self, node: ast.Call, func: ast.Lambda, expected: MLType) -> Emitted | None:
        """``(lambda _m: <match on _m>)(e)``, the import's reading of ``case e of ...``
        when ``e`` is not a name: written back as that ``case`` when ``_m`` is only the
        match's subject (``e`` evaluated once either way); None otherwise."""
        if len(func.args.args) != 1 or len(node.args) != 1 or node.keywords or \
                func.args.vararg or func.args.kwarg or func.args.kwonlyargs or \
                not isinstance(func.body, ast.IfExp):
            return None
        param = func.args.args[0].arg
        allowed = 0
        current: ast.expr = func.body
        while isinstance(current, ast.IfExp):
            test, body = current.test, current.body
            constructor = _constructor_test(test)
            subject = constructor[0] if constructor else (
                test.left if isinstance(test, ast.Compare) else None)
            if not (isinstance(subject, ast.Name) and subject.id == param):
                return None
            allowed += 1
            if constructor and isinstance(body, ast.Call) and len(body.args) == 1 and \
                    isinstance(body.args[0], ast.Subscript):
                allowed += 1  # the payload, (lambda v: e)(_m[1])
            current = current.orelse
        uses = sum(isinstance(n, ast.Name) and n.id == param for n in ast.walk(func.body))
        if uses != allowed:
            return None
        text, _, t = self.emit(node.args[0])
        emitter = _Emitter(self.o, self.where, {**self.variables, param: t},
                           {**self.renames, param: f"({text})"})
        return emitter._case(func.body, expected)

    def _let_parts(self, node: ast.Call, func: ast.Lambda,
                   expected: MLType) -> tuple[list[str], Emitted]:
        """The ``val`` declarations of a let and its body; a let right inside a let joins it
        (``let val a = x val b = y in e end``: CPN ML's vals are sequential, as nested
        lambdas are), the form the importer reads as nested lambdas, so that a function
        written, read and written again is the same text."""
        params = [a.arg for a in func.args.args]
        if (func.args.vararg or func.args.kwarg or func.args.kwonlyargs or func.args.defaults
                or node.keywords or len(params) != len(node.args)):
            raise self.refuse(node, "a lambda called on the spot with exactly its positional "
                              "arguments (CPN ML 'let')")
        vals = []
        inner = dict(self.variables)
        renames = dict(self.renames)
        # a declaration the let's scope never mentions can't be shadowed: its name stays
        # free (a function read back from a file that declares 'sample' keeps its
        # 'val sample', as written from Python)
        mentioned = {n.id for n in ast.walk(func.body) if isinstance(n, ast.Name)} - set(params)
        taken = set(inner) | set(renames.values()) | {
            n for n in (*self.o.constants, *self.o.functions) if n in mentioned} | {
            info.ml_name for n, info in self.o.functions.items() if n in mentioned}
        for param, arg in zip(params, node.args, strict=True):
            text, _, t = self.emit(arg)
            # a fresh ML name rather than shadowing one in scope (readers differ on shadowing)
            base = re.sub(r"^[^A-Za-z]+", "", param) or "v"  # _m0 -> m0: ML names a letter first
            ml_name, suffix = base, 2
            while ml_name in taken or not is_ml_identifier(ml_name):
                ml_name, suffix = f"{base}_{suffix}", suffix + 1
            taken.add(ml_name)
            vals.append(f"val {ml_name} = {text}")
            inner[param] = t
            renames[param] = ml_name
        emitter = _Emitter(self.o, self.where, inner, renames)
        if isinstance(func.body, ast.Call) and isinstance(func.body.func, ast.Lambda):
            more, body = emitter._let_parts(func.body, func.body.func, expected)
            return vals + more, body
        return vals, emitter.emit(func.body, expected)

    def _builtin(self, node: ast.Call, name: str, expected: MLType) -> Emitted:
        args = node.args

        def one() -> Emitted:
            if len(args) != 1:
                raise self.refuse(node, f"{name}() with {len(args)} arguments")
            return self.emit(args[0])

        if name in ("min", "max"):
            if len(args) < 2:
                raise self.refuse(node, f"{name}() of an iterable (give the values)")
            parts = [self.emit(a, expected if expected in (INT_T, REAL_T) else None)
                     for a in args]
            kind = REAL_T if any(p[2] == REAL_T for p in parts) else INT_T
            texts = [p[0] if p[2] == kind or kind == INT_T else f"Real.fromInt({p[0]})"
                     for p in parts]
            module = "Real" if kind == REAL_T else "Int"
            text = texts[0]
            for other in texts[1:]:
                text = f"{module}.{name}({text}, {other})"
            return text, _APP, kind
        if name == "abs":
            text, _, t = one()
            return f"abs({text})", _APP, t
        if name in ("any", "all") and len(args) == 1 and isinstance(args[0], ast.GeneratorExp):
            tested = self._mapped(args[0], BOOL_T, "List.exists" if name == "any" else "List.all")
            if tested is not None:
                return tested
        if name == "tuple" and len(args) == 1 and isinstance(args[0], ast.GeneratorExp):
            mapped = self._mapped(args[0], expected)
            if mapped is not None:
                return mapped
            return self._tabulate(node, args[0], expected)
        if name == "ml_tabulate" and len(args) == 2 and isinstance(args[1], ast.Lambda) \
                and len(args[1].args.args) == 1:
            # an imported List.tabulate(n, fn i => e), written back as it was read
            loop = ast.comprehension(ast.Name(args[1].args.args[0].arg, ast.Store()),
                                     ast.Call(ast.Name("range", ast.Load()), [args[0]], []),
                                     [], 0)
            return self._tabulate(node, ast.GeneratorExp(args[1].body, [loop]), expected)
        if name == "bool":
            if len(args) != 1:
                raise self.refuse(node, f"bool() with {len(args)} arguments")
            return self._condition(args[0])
        if name == "len":
            text, _, t = one()
            if t == STRING_T:
                return f"size({text})", _APP, INT_T
            if _kind(t) in ("list", None):
                return f"length({text})", _APP, INT_T
            raise self.refuse(node, f"len() of a {_kind(t)} value")
        if name == "float":
            text, _, t = one()
            return (text, _ATOM, REAL_T) if t == REAL_T else (f"Real.fromInt({text})", _APP,
                                                               REAL_T)
        if name == "int":
            if len(args) == 1 and isinstance(args[0], ast.Call) and isinstance(
                    args[0].func, ast.Name) and args[0].func.id == "bernoulli" and \
                    len(args[0].args) == 1:  # the import's reading of CPN Tools' bernoulli
                return f"bernoulli({self._real_arg(args[0].args[0])})", _APP, INT_T
            text, prec, t = one()
            if t == INT_T:
                return text, prec, INT_T
            if t == REAL_T:
                return f"trunc({text})", _APP, INT_T
            raise self.refuse(node, f"int() of a {_kind(t) or 'value of unknown type'}")
        if name == "round":
            text, _, t = one()
            return (f"round({text})", _APP, INT_T) if t == REAL_T else (text, _ATOM, t)
        if name in MATH_FUNCTIONS:  # read from Math.f
            texts = [self._real_arg(a) for a in args]
            return f"Math.{name.removeprefix('ml_')}({', '.join(texts)})", _APP, REAL_T
        if name in ("ml_int_string", "ml_real_string"):  # read from Int/Real.toString
            text, _, _ = one()
            module = "Int" if name == "ml_int_string" else "Real"
            return f"{module}.toString({text})", _APP, STRING_T
        if name == "str":
            text, _, t = one()
            if t == INT_T:
                return f"Int.toString({text})", _APP, STRING_T
            if t == REAL_T:
                return f"Real.toString({text})", _APP, STRING_T
            if t == STRING_T:
                return text, _ATOM, STRING_T
            raise self.refuse(node, f"str() of a {_kind(t) or 'value of unknown type'}")
        if name in ("uniform", "normal"):
            if len(args) != 2:
                raise self.refuse(node, f"{name}() takes 2 arguments")
            reals = [self._real_arg(a) for a in args]
            return f"{name}({reals[0]}, {reals[1]})", _APP, REAL_T
        if name == "exponential":
            if len(args) != 1:
                raise self.refuse(node, "exponential() takes the rate")
            return f"exponential({self._real_arg(args[0])})", _APP, REAL_T
        if name == "discrete":
            if len(args) != 2:
                raise self.refuse(node, "discrete() takes 2 arguments")
            a, b = (self.emit(x, INT_T)[0] for x in args)
            return f"discrete({a}, {b})", _APP, INT_T
        if name == "bernoulli":
            if len(args) != 1:
                raise self.refuse(node, "bernoulli() takes the probability")
            return f"(bernoulli({self._real_arg(args[0])}) = 1)", _ATOM, BOOL_T
        raise self.refuse(node, f"{name!r} is neither a declared function nor a builtin with "
                          "a CPN ML equivalent")

    def _tabulate(self, node: ast.Call, gen: ast.GeneratorExp, expected: MLType) -> Emitted:
        """``tuple(e for i in range(n))``: ``List.tabulate(n, fn i => e)``."""
        (loop,) = gen.generators if len(gen.generators) == 1 else (None,)
        if loop is None or loop.ifs or not isinstance(loop.target, ast.Name) or not (
                isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
                and loop.iter.func.id == "range" and len(loop.iter.args) == 1):
            raise self.refuse(node, "only tuple(e for i in range(n)) translates (List.tabulate)")
        count = self.emit(loop.iter.args[0], INT_T)[0]
        var = loop.target.id
        inner = _Emitter(self.o, self.where, {**self.variables, var: INT_T},
                         {**self.renames, var: var})
        element = expected[1] if _kind(expected) == "list" else None
        text, _, t = inner.emit(gen.elt, element)
        return f"List.tabulate({count}, fn {var} => {text})", _APP, ("list", t)

    def _real_arg(self, node: ast.expr) -> str:
        text, _, t = self.emit(node, REAL_T)
        return f"Real.fromInt({text})" if t == INT_T else text


# -- Python functions and code actions -> CPN ML -----------------------------------------------
_ANNOTATION_TYPES = {"int": INT_T, "float": REAL_T, "str": STRING_T, "bool": BOOL_T}


@dataclass(frozen=True)
class FunctionSource:
    """A Python function reduced to what CPN ML can say: parameters and one expression.

    ``body`` is a Python expression; local assignments before the ``return`` are folded in
    as lambdas called on the spot (CPN ML ``let``), and ``if``/``else`` with a ``return``
    in each branch becomes a conditional expression.
    """

    params: tuple[str, ...]
    annotations: tuple[MLType, ...]
    returns: MLType
    body: str


def set_ml_form(fn: Any, form: Any) -> None:
    """Give ``fn`` a CPN ML form: ``form``, a function of the same parameters and values
    written in the translated subset (recursion instead of loops), which the export
    translates in place of ``fn``; ``fn`` stays what the simulator runs.

    Use it for a helper whose Python is written for speed (bisection, loops) and check
    that the two agree (tests/test_exchange_components.py does, on generated inputs).

    >>> def total(xs):
    ...     return sum(xs)
    >>> def total_ml(xs):
    ...     return 0 if len(xs) == 0 else xs[0] + total(xs[1:])
    >>> set_ml_form(total, total_ml)
    >>> function_source(total, "declaration total").body
    '0 if len(xs) == 0 else xs[0] + total(xs[1:])'
    """
    fn.__cpn_ml__ = form


def function_source(fn: Callable[..., Any], where: str) -> FunctionSource:
    """Reduce a Python function (``def`` or ``lambda``) to a :class:`FunctionSource`.

    >>> def delay(x: int) -> int:
    ...     y = x % 3
    ...     return y + 1
    >>> function_source(delay, "declaration delay").body
    '(lambda y: y + 1)(x % 3)'
    """
    node = _function_node(getattr(fn, "__cpn_ml__", fn), where)
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        raise UnsupportedConstruct(where, "only plain positional parameters translate to CPN ML")
    params = tuple(a.arg for a in args.args)
    annotations = tuple(_annotation(a.annotation) for a in args.args)
    if isinstance(node, ast.Lambda):
        return FunctionSource(params, annotations, None, ast.unparse(node.body))
    body = _fold_statements(_strip_docstring(node.body), where)
    return FunctionSource(params, annotations, _annotation(node.returns), ast.unparse(body))


def _annotation(node: ast.expr | None) -> MLType:
    if isinstance(node, ast.Name):
        return _ANNOTATION_TYPES.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _ANNOTATION_TYPES.get(node.value)
    return None


def _function_node(fn: Callable[..., Any], where: str) -> ast.FunctionDef | ast.Lambda:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        raise UnsupportedConstruct(where, f"the source of {fn!r} is not available, so it "
                                   "can't be translated to CPN ML") from None
    name = getattr(fn, "__name__", "")
    module: ast.AST | None
    try:
        module = ast.parse(source)
    except SyntaxError:
        module = None
    if module is None:  # a lambda in the middle of a statement: parse the smallest piece
        start = source.find("lambda")
        for end in range(len(source), start, -1):
            try:
                module = ast.parse(source[start:end].strip().rstrip(","), mode="eval")
                break
            except SyntaxError:
                continue
    if module is None:
        raise UnsupportedConstruct(where, f"could not parse the source of {name}")
    if name != "<lambda>":
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return node
    arity = len(inspect.signature(fn).parameters)
    lambdas = [n for n in ast.walk(module) if isinstance(n, ast.Lambda)
               and len(n.args.args) == arity]
    if len(lambdas) != 1:
        raise UnsupportedConstruct(where, f"could not find the one lambda of {arity} "
                                   "parameter(s) in its source line")
    return lambdas[0]


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def _fold_statements(body: list[ast.stmt], where: str) -> ast.expr:
    """Fold ``x = e; x += f; ...; return r`` and ``if c: return a else: return b`` into one
    expression."""
    if not body:
        raise UnsupportedConstruct(where, "a function body must end with 'return'")
    first, rest = body[0], body[1:]
    if isinstance(first, ast.Return) and first.value is not None:
        if rest:
            raise UnsupportedConstruct(where, f"statements after 'return' (line {first.lineno})")
        return first.value
    if isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(
            first.targets[0], ast.Name):
        inner = _fold_statements(rest, where)
        return _call_lambda((first.targets[0].id,), inner, [first.value])
    if isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(
            first.targets[0], ast.Tuple) and all(isinstance(e, ast.Name)
                                                 for e in first.targets[0].elts):
        # a, b = x, y assigns both at once: one lambda of both names
        names = tuple(e.id for e in first.targets[0].elts if isinstance(e, ast.Name))
        inner = _fold_statements(rest, where)
        if isinstance(first.value, ast.Tuple) and len(first.value.elts) == len(names):
            return _call_lambda(names, inner, list(first.value.elts))
        packed = "_".join(names) + "_"
        return _call_lambda((packed,), _call_lambda(names, inner, [
            ast.Subscript(ast.Name(packed, ast.Load()), ast.Constant(i), ast.Load())
            for i in range(len(names))]), [first.value])
    if isinstance(first, ast.AugAssign) and isinstance(first.target, ast.Name):
        name = first.target.id
        value = ast.BinOp(ast.Name(name, ast.Load()), first.op, first.value)
        return _call_lambda((name,), _fold_statements(rest, where), [value])
    if isinstance(first, ast.If) and not any(isinstance(n, ast.Return) for n in ast.walk(first)):
        return _fold_branch_assignments(first, rest, where)
    if isinstance(first, ast.If):
        then = _fold_statements(first.body, where)
        other = _fold_statements(first.orelse + rest if first.orelse else rest, where)
        if first.orelse and rest:
            raise UnsupportedConstruct(where, f"statements after an if/else that returns "
                                       f"(line {first.lineno})")
        return ast.IfExp(first.test, then, other)
    raise UnsupportedConstruct(where, f"statement {type(first).__name__} (line "
                               f"{first.lineno}) has no CPN ML expression form: use "
                               "assignments, if/else and return")


def _fold_branch_assignments(branch: ast.If, rest: list[ast.stmt], where: str) -> ast.expr:
    """``if c: x += 1`` (no return inside): the branch yields the new values of what it sets.

    ``if c: a = e1; b = e2`` then ``rest`` becomes ``(lambda a_b_: (lambda a, b: REST)
    (a_b_[0], a_b_[1]))((e1, e2) if c else (a, b))``: CPN ML's ``let val`` of a tuple.
    """
    names: list[str] = []
    for node in ast.walk(branch):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AugAssign) else [])
        for target in targets:
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            for element in elements:
                if not isinstance(element, ast.Name):
                    raise UnsupportedConstruct(where, f"assignment to {ast.unparse(target)!r} "
                                               f"(line {getattr(node, 'lineno', '?')})")
                if element.id not in names:
                    names.append(element.id)
    if not names:
        raise UnsupportedConstruct(where, f"an if statement (line {branch.lineno}) that "
                                   "neither returns nor assigns")
    values: ast.expr = ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load()) \
        if len(names) > 1 else ast.Name(names[0], ast.Load())
    then = _fold_statements([*branch.body, ast.Return(values)], where)
    other = _fold_statements([*branch.orelse, ast.Return(values)], where)
    chosen = ast.IfExp(branch.test, then, other)
    inner = _fold_statements(rest, where)
    if len(names) == 1:
        return _call_lambda((names[0],), inner, [chosen])
    packed = "_".join(names) + "_"
    unpacked = _call_lambda(tuple(names), inner, [
        ast.Subscript(ast.Name(packed, ast.Load()), ast.Constant(i), ast.Load())
        for i in range(len(names))])
    return _call_lambda((packed,), unpacked, [chosen])


def action_body(fn: Callable[..., Any], outputs: Iterable[str], where: str,
                body: str | None = None) -> str:
    """The Python expression a code action computes: a tuple of its outputs, in order.

    The action must return a dict literal (or ``dict(...)``) giving each output. ``body``
    is the function already reduced to one expression (:func:`function_source`), if known.

    >>> def act(x):
    ...     return {"y": x + 1, "z": x * 2}
    >>> action_body(act, ("y", "z"), "code action of t")
    '(x + 1, x * 2)'
    """
    if body is None:
        body = function_source(fn, where).body
    outputs = tuple(outputs)
    tree = ast.parse(body, mode="eval").body
    tree = _map_result(tree, outputs, where)
    return ast.unparse(tree)


def _map_result(tree: ast.expr, outputs: tuple[str, ...], where: str) -> ast.expr:
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Lambda):
        tree.func.body = _map_result(tree.func.body, outputs, where)
        return tree
    if isinstance(tree, ast.IfExp):
        tree.body = _map_result(tree.body, outputs, where)
        tree.orelse = _map_result(tree.orelse, outputs, where)
        return tree
    given: dict[str, ast.expr] = {}
    if isinstance(tree, ast.Dict) and all(isinstance(k, ast.Constant) for k in tree.keys):
        given = {str(k.value): v for k, v in zip(tree.keys, tree.values, strict=True)
                 if isinstance(k, ast.Constant)}
    elif isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and \
            tree.func.id == "dict" and not tree.args:
        given = {kw.arg: kw.value for kw in tree.keywords if kw.arg is not None}
    else:
        raise UnsupportedConstruct(where, "a code action must return a dict literal of its "
                                   f"outputs, got {ast.unparse(tree)!r}")
    if set(given) != set(outputs):
        raise UnsupportedConstruct(where, f"the action returns {sorted(given)} but the "
                                   f"transition's outputs are {list(outputs)}")
    if len(outputs) == 1:
        return given[outputs[0]]
    return ast.Tuple([given[o] for o in outputs], ast.Load())
