"""CPN ML forms beyond plain expressions, as Python: patterns, ``case``, ``fn``, clausal ``fun``.

:class:`~tcpn.petrinets.exchange.cpnml.MLToPython` inherits :class:`MatchForms`. A pattern
becomes a list of conditions on the value it matches and the names it binds (``h::t`` on
``s``: ``len(s) >= 1``, ``h = s[0]``, ``t = s[1:]``); rules tried in order become a chain
of conditional expressions, the bindings lambda parameters, and a value no rule matches
raises (SML's ``Match``). The same compilation serves ``case e of p => a | q => b``,
``fn p => e``, functions defined by several clauses (``fun f 0 = 1 | f n = n * f (n-1)``),
``let`` with a pattern or a local ``fun``, and sequences ``(e1; e2)`` (each evaluated in
turn, for its effects on reference cells, :mod:`tcpn.petrinets.cells`; the value of the
last). Curried list functions of CPN Tools' library
(``mem l x``, ``rm x l``, ``List.filter p l``, ``List.map f l``, ``List.exists``,
``List.all``, ``ms_to_col``, ...) are Python comprehensions and slices; multisets inside
expressions are tuples, as CPN ML's ``'a ms`` is a list.

>>> from tcpn.petrinets.exchange.cpnml import to_python
>>> to_python("case q of [] => 0 | h::t => h", "arc")  # doctest: +NORMALIZE_WHITESPACE
"0 if len(q) == 0 else (lambda h, t: h)(q[0], q[1:]) if len(q) >= 1 else \
(_ for _ in ()).throw(ValueError('arc: no rule matches'))"
>>> to_python("List.filter (fn (a, b) => a > k) l", "arc")
'tuple(((a, b) for a, b in l if a > k))'
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lark import Token as LarkToken
from lark import Tree

from tcpn.petrinets.colours import ml_field
from tcpn.petrinets.exchange.ml_calendar import CALENDAR_CALLS
from tcpn.petrinets.exchange.ml_library import lt_orders

__all__ = ["MatchForms", "match_failure"]

#: CPN Tools' list functions of two curried arguments, as Python over tuples
#: (``a``: the first argument, ``b``: the second).
_CURRIED_LISTS: dict[str, Callable[[ast.expr, ast.expr], str]] = {
    "mem": lambda a, b: f"({_src(b)}) in ({_src(a)})",
    "List.mem": lambda a, b: f"({_src(b)}) in ({_src(a)})",
    "contains": lambda a, b: f"all(_x in ({_src(a)}) for _x in ({_src(b)}))",
    "ins": lambda a, b: f"({_src(a)}) + (({_src(b)}),)",
    "ins_new": lambda a, b: f"(lambda _l, _x: _l if _x in _l else _l + (_x,))"
                            f"({_src(a)}, {_src(b)})",
    "rm": lambda a, b: f"(lambda _x, _l: _l[:_l.index(_x)] + _l[_l.index(_x) + 1:] "
                       f"if _x in _l else _l)({_src(a)}, {_src(b)})",
    "rmall": lambda a, b: f"tuple(_y for _y in ({_src(b)}) if _y != ({_src(a)}))",
    "union": lambda a, b: f"({_src(a)}) + ({_src(b)})",
    # contains_all ys xs: every x of xs in ys, as often (CPN Tools' list functions)
    "contains_all": lambda a, b: f"(lambda _l, _m: all(_l.count(_x) >= _m.count(_x) "
                                 f"for _x in _m))({_src(a)}, {_src(b)})",
}
#: One-argument list functions.
_LIST_UNARY: dict[str, Callable[[ast.expr], str]] = {
    "null": lambda a: f"len({_src(a)}) == 0",
    "List.null": lambda a: f"len({_src(a)}) == 0",
    "ms_to_col": lambda a: f"({_src(a)})[0]",
    "remdupl": lambda a: f"tuple(dict.fromkeys({_src(a)}))",
    "List.concat": lambda a: f"sum(({_src(a)}), ())",
    "size_ms": lambda a: f"len({_src(a)})",
    # a list of colours is the multiset of them (tcpn's multisets are lists)
    "list_to_ms": lambda a: _src(a),
    "ms_to_list": lambda a: _src(a),
    # characters are one-character strings (MLToPython._t_char)
    "explode": lambda a: f"tuple({_src(a)})",
    "String.explode": lambda a: f"tuple({_src(a)})",
    "implode": lambda a: f"''.join({_src(a)})",
    "String.implode": lambda a: f"''.join({_src(a)})",
    "str": lambda a: _src(a),
    "String.str": lambda a: _src(a),
    "Char.ord": lambda a: f"ord({_src(a)})",
    "ord": lambda a: f"ord({_src(a)})",
    "Char.chr": lambda a: f"chr({_src(a)})",
    "chr": lambda a: f"chr({_src(a)})",
    "Char.toUpper": lambda a: f"({_src(a)}).upper()",
    "Char.toLower": lambda a: f"({_src(a)}).lower()",
    "Bool.toString": lambda a: f"('true' if ({_src(a)}) else 'false')",
    "Int.sign": lambda a: f"(lambda _n: (_n > 0) - (_n < 0))({_src(a)})",
}
#: Higher-order list functions: name -> (Python form, whether the function's result is kept).
_HIGHER_ORDER = {"List.map": "map", "map": "map", "List.filter": "filter",
                 "filter": "filter", "List.exists": "any", "exists": "any",
                 "List.all": "all", "List.app": "app", "app": "app",
                 "ext_col": "map"}  # CPN Tools' ext_col f ms is List.map (ms.sml)
#: Basis functions with curried arguments that run as a function of ml_library:
#: name -> (that function, how many arguments).
_RUNTIME = {"foldl": ("ml_foldl", 3), "List.foldl": ("ml_foldl", 3),
            "foldr": ("ml_foldr", 3), "List.foldr": ("ml_foldr", 3),
            "List.find": ("ml_find", 2), "Option.map": ("ml_option_map", 2),
            "List.partition": ("ml_partition", 2), "List.mapPartial": ("ml_map_partial", 2),
            "List.getItem": ("ml_get_item", 1), "ListPair.zip": ("ml_pair_zip", 1),
            "ListPair.unzip": ("ml_pair_unzip", 1), "ListPair.map": ("ml_pair_map", 2),
            "ListPair.app": ("ml_pair_app", 2), "ListPair.all": ("ml_pair_all", 2),
            "ListPair.exists": ("ml_pair_exists", 2), "ListPair.foldl": ("ml_pair_foldl", 3),
            "ListPair.foldr": ("ml_pair_foldr", 3), "Int.fromString": ("ml_int_from_string", 1),
            "String.tokens": ("ml_tokens", 2), "String.fields": ("ml_fields", 2),
            "Char.isDigit": ("ml_is_digit", 1), "Char.isAlpha": ("ml_is_alpha", 1),
            "Char.isSpace": ("ml_is_space", 1), "String.sub": ("ml_sub", 1),
            "List.last": ("ml_last", 1), "Char.contains": ("ml_char_contains", 2),
            "Char.notContains": ("ml_char_not_contains", 2),
            "String.substring": ("ml_substring", 1), "substring": ("ml_substring", 1),
            "String.isPrefix": ("ml_is_prefix", 2),
            "String.isSuffix": ("ml_is_suffix", 2),
            "String.isSubstring": ("ml_is_substring", 2),
            "String.map": ("ml_string_map", 2), "String.translate": ("ml_string_translate", 2),
            # SML/NJ's library, which CPN Tools' simulator loads
            "ListMergeSort.sort": ("ml_merge_sort", 2),
            "ListMergeSort.uniqueSort": ("ml_unique_sort", 2),
            "ListMergeSort.sorted": ("ml_sorted", 2),
            # CPN Tools' list functions: listsub xs ys takes one of each y out of xs
            # (Subtract when one is missing: its multiset difference), sort lt l
            "listsub": ("ml_ms_minus", 2), "sort": ("ml_sort_lt", 2),
            "intersect": ("ml_intersect", 2),
            "String.concatWith": ("ml_concat_with", 2), "String.extract": ("ml_extract", 1),
            "Char.isUpper": ("ml_is_upper", 1), "Char.isLower": ("ml_is_lower", 1),
            "Char.isAlphaNum": ("ml_is_alpha_num", 1),
            "Bool.fromString": ("ml_bool_from_string", 1),
            "List.revAppend": ("ml_rev_append", 1), "Int.quot": ("ml_quot", 1),
            "Int.rem": ("ml_rem", 1), "Int.div": ("ml_int_div", 1),
            "Int.mod": ("ml_int_mod", 1),
            # CPN Tools' simulator (its time library): reals as IntInfs of p decimals
            "RealToIntInf": ("ml_real_to_intinf", 2), "IntInfToReal": ("ml_intinf_to_real", 2),
            **CALENDAR_CALLS}
#: The library functions :meth:`MatchForms.library_call` applies, which a model may also
#: pass as values (``List.map Int.toString l``, ``String.map Char.toUpper s``).
LIBRARY_CALLS = frozenset({*_CURRIED_LISTS, *_LIST_UNARY, *_HIGHER_ORDER, *_RUNTIME})
#: How many curried arguments the library's functions take, to name a partial application.
_CURRIED_ARITY = {**dict.fromkeys(_CURRIED_LISTS, 2), **dict.fromkeys(_HIGHER_ORDER, 2),
                  **{name: count for name, (_, count) in _RUNTIME.items()}}


def unescape_ml_string(token: str) -> str:
    """The characters of SML string literal ``token`` (quotes included): ``\\n``,
    ``\\t``, ``\\ddd`` (decimal) and the other escapes SML defines read."""
    body = token[1:-1]
    out, i = [], 0
    simple = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "r": "\r",
              "v": "\v", "f": "\f"}
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif nxt.isdigit():
            out.append(chr(int(body[i + 1:i + 4])))
            i += 4
        else:  # \^C control characters and \f...f\ gaps are rare: keep the text as it is
            out.append(ch)
            i += 1
    return "".join(out)


def _src(node: ast.expr) -> str:
    return ast.unparse(node)


def match_failure(where: str) -> ast.expr:
    """An expression that raises ``ValueError`` (SML's ``Match``): no rule matched."""
    return ast.parse(f"(_ for _ in ()).throw(ValueError({f'{where}: no rule matches'!r}))",
                     mode="eval").body


def _call(params: tuple[str, ...], body: ast.expr, args: list[ast.expr]) -> ast.expr:
    arguments = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None,
                              kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.Call(ast.Lambda(arguments, body), args, [])


def _lambda(params: tuple[str, ...], body: ast.expr) -> ast.expr:
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                    vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                    defaults=[]), body)


def _strip_typed(pat: Any) -> Any:
    while isinstance(pat, Tree) and pat.data == "typed_pat":
        pat = pat.children[0]
    return pat


def names_in(tree: Any) -> Iterator[str]:
    """Every name a parsed CPN ML expression mentions, at any depth (repeats kept)."""
    if isinstance(tree, Tree):
        if tree.data == "name":
            yield str(tree.children[0])
        for child in tree.children:
            yield from names_in(child)


class MatchForms:
    """Pattern matching and the forms built on it, for :class:`MLToPython`."""

    enum_constants: frozenset[str]
    #: index colour sets' constructors (``ph`` of ``index ph with 1..n``): ``ph(i)`` is i
    index_constructors: frozenset[str]
    #: finite colour sets' members, for ``CS.all()``
    colour_members: Mapping[str, tuple[Any, ...]]
    #: every colour set's shape (ml_library.Shape), for ``CS.legal`` and ``CS.mkstr``
    colour_shapes: Mapping[str, tuple[Any, ...]]
    local_functions: dict[str, int]
    #: record colour sets (labels -> constructor) and record types no colour set declares
    records: Mapping[frozenset[str], str]
    anonymous_records: dict[frozenset[str], str]
    #: the model's declared functions (their names hide the library's)
    functions: Mapping[str, int]
    inline: Mapping[str, tuple[tuple[str, ...], ast.expr]]
    #: datatype constructors -> whether each carries a value (MLToPython)
    constructors: Mapping[str, bool]
    used_basis: set[str]
    fresh: Iterator[int]
    uses_random: bool

    # provided by MLToPython
    def _expr(self, tree: Any, where: str, local: frozenset[str]) -> ast.expr:
        raise NotImplementedError

    def _unsupported(self, tree: Any, where: str, what: str, missing: str = "") -> Exception:
        raise NotImplementedError

    def _py(self, name: str) -> str:
        raise NotImplementedError

    def _args(self, arg: Any, where: str, local: frozenset[str]) -> list[ast.expr]:
        raise NotImplementedError

    # -- patterns ---------------------------------------------------------------------------
    def pattern(self, pat: Any, subject: ast.expr, where: str, conditions: list[ast.expr],
                bindings: list[tuple[str, ast.expr]]) -> None:
        """Add the conditions for ``pat`` to match ``subject`` and the names it binds."""
        pat = _strip_typed(pat)
        kind = pat.data if isinstance(pat, Tree) else None

        def equal(value: Any) -> None:
            conditions.append(ast.Compare(subject, [ast.Eq()], [ast.Constant(value)]))

        def length(op: ast.cmpop, n: int) -> None:
            conditions.append(ast.Compare(ast.Call(ast.Name("len", ast.Load()), [subject], []),
                                          [op], [ast.Constant(n)]))

        def item(index: int | ast.expr) -> ast.expr:
            key = ast.Constant(index) if isinstance(index, int) else index
            return ast.Subscript(subject, key, ast.Load())

        if kind == "var_pat":
            name = str(pat.children[0])
            if name in ("true", "false"):
                equal(name == "true")
            elif name in self.constructors:
                if self.constructors[name]:
                    raise self._unsupported(pat, where, f"constructor {name} without the "
                                            "value it carries, in a pattern")
                equal(name)
            elif name in self.enum_constants:
                equal(name)
            elif name == "nil":
                length(ast.Eq(), 0)
            else:
                bindings.append((name, subject))
        elif kind in ("wild_pat", "unit_pat"):
            pass
        elif kind == "const_pat":
            token = str(pat.children[0])
            # a string or a character (#"c", the one-character string) in SML's escapes
            equal(int(token.replace("~", "-")) if token[0] in "~0123456789"
                  else unescape_ml_string(token.removeprefix("#")))
        elif kind in ("tuple_pat", "list_pat"):
            if kind == "list_pat":
                length(ast.Eq(), len(pat.children))
            for i, child in enumerate(pat.children):
                self.pattern(child, item(i), where, conditions, bindings)
        elif kind == "nil_pat":
            length(ast.Eq(), 0)
        elif kind == "cons_pat":
            head, _, tail = pat.children
            length(ast.GtE(), 1)
            self.pattern(head, item(0), where, conditions, bindings)
            self.pattern(tail, item(ast.Slice(ast.Constant(1), None, None)), where,
                         conditions, bindings)
        elif kind == "con_pat":
            constructor, inner = pat.children
            name = str(constructor)
            if self.constructors.get(name):  # C p on ("C", v): p on v
                conditions.append(ast.Compare(
                    ast.Subscript(subject, ast.Slice(None, ast.Constant(1), None), ast.Load()),
                    [ast.Eq()], [ast.Tuple([ast.Constant(name)], ast.Load())]))
                self.pattern(inner, item(1), where, conditions, bindings)
                return
            if name not in self.index_constructors:
                raise self._unsupported(pat, where, f"constructor pattern {constructor} ... "
                                        "(not a constructor of a datatype, union colour set "
                                        "or option tcpn imported)", name)
            self.pattern(inner, subject, where, conditions, bindings)
        elif kind == "as_pat":  # x as p: x is the whole value, which p matches
            bindings.append((str(pat.children[0]), subject))
            self.pattern(pat.children[-1], subject, where, conditions, bindings)
        elif kind == "record_pat":
            labels = frozenset(ml_field(str(f.children[0])) for f in pat.children
                               if isinstance(f, Tree))
            known = any(labels <= fields for fields in (*self.records, *self.anonymous_records))
            if not known:  # a record type of its own (MLToPython._t_record)
                self.anonymous_records[labels] = "record_" + "_".join(
                    self._py(n) for n in sorted(labels))
            for field_pat in pat.children:
                if not isinstance(field_pat, Tree):
                    continue  # the '...' of a flexible record pattern
                label = str(field_pat.children[0])
                value = ast.Attribute(subject, ml_field(label), ast.Load())
                if len(field_pat.children) == 1:
                    bindings.append((label, value))
                else:
                    self.pattern(field_pat.children[2], value, where, conditions, bindings)
        else:
            raise self._unsupported(pat, where, f"pattern {kind!r} is outside the subset tcpn "
                                    "translates")

    def _pattern_on(self, pat: Any, subjects: list[ast.expr], where: str,
                    conditions: list[ast.expr], bindings: list[tuple[str, ast.expr]]) -> None:
        """Match ``pat`` against a function's parameters (a tuple pattern, one per one)."""
        if len(subjects) == 1:
            self.pattern(pat, subjects[0], where, conditions, bindings)
            return
        bare = _strip_typed(pat)
        kind = bare.data if isinstance(bare, Tree) else None
        if kind == "tuple_pat" and len(bare.children) == len(subjects):
            for child, subject in zip(bare.children, subjects, strict=True):
                self.pattern(child, subject, where, conditions, bindings)
        elif kind in ("unit_pat", "wild_pat") or not subjects:
            pass
        else:
            self.pattern(pat, ast.Tuple(list(subjects), ast.Load()), where, conditions,
                         bindings)

    def rules(self, rules: list[tuple[Any, Any]], subjects: list[ast.expr], where: str,
              local: frozenset[str]) -> ast.expr:
        """Rules ``pat => body`` tried in order on ``subjects`` (names or simple values)."""
        result = match_failure(where)
        branches = []
        for pat, body in rules:
            conditions: list[ast.expr] = []
            bindings: list[tuple[str, ast.expr]] = []
            self._pattern_on(pat, subjects, where, conditions, bindings)
            names = [n for n, _ in bindings]
            value = self._expr(body, where, local | frozenset(names))
            if bindings:
                value = _call(tuple(self._py(n) for n in names), value,
                              [v for _, v in bindings])
            branches.append((conditions, value))
        for conditions, value in reversed(branches):
            if not conditions:
                result = value
            else:
                test = conditions[0] if len(conditions) == 1 else ast.BoolOp(ast.And(),
                                                                              conditions)
                result = ast.IfExp(test, value, result)
        return result

    def _on_value(self, value: ast.expr, build: Callable[[ast.expr], ast.expr]) -> ast.expr:
        """``build(subject)`` where ``subject`` names ``value`` once (evaluated once)."""
        if isinstance(value, ast.Name):
            return build(value)
        temp = f"_m{next(self.fresh)}"
        return _call((temp,), build(ast.Name(temp, ast.Load())), [value])

    def _t_case(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        subject_tree, match = tree.children
        subject = self._expr(subject_tree, where, local)
        pairs = [(r.children[0], r.children[1]) for r in match.children]
        return self._on_value(subject, lambda s: self.rules(pairs, [s], where, local))

    def _t_fn(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        temp = f"_m{next(self.fresh)}"
        return _lambda((temp,), self.rules(self._fn_rules(tree), [ast.Name(temp, ast.Load())],
                                           where, local))

    @staticmethod
    def _fn_rules(tree: Tree) -> list[tuple[Any, Any]]:
        return [(r.children[0], r.children[1]) for r in tree.children[0].children]

    def _t_sequence(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        # (e1; e2; e3): all three in turn (a tuple's items are evaluated left to right), the
        # value of e3; e1 and e2 act by their effects on reference cells
        values = [self._expr(c, where, local) for c in tree.children]
        return ast.Subscript(ast.Tuple(values, ast.Load()), ast.Constant(-1), ast.Load())

    # -- let, clausal functions -------------------------------------------------------------
    def _t_let(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr:
        *decs, body = tree.children
        scope = set(local)
        wrappers: list[tuple[tuple[str, ...], list[ast.expr]]] = []
        saved = dict(self.local_functions)
        try:
            for dec in decs:
                if dec.data == "val_dec":
                    pat, _, value_tree = dec.children
                    value = self._expr(value_tree, where, frozenset(scope))
                    conditions: list[ast.expr] = []
                    bindings: list[tuple[str, ast.expr]] = []
                    temp = f"_m{next(self.fresh)}"
                    self.pattern(pat, ast.Name(temp, ast.Load()), where, conditions, bindings)
                    names = tuple(n for n, _ in bindings)
                    if len(bindings) == 1 and isinstance(bindings[0][1], ast.Name) \
                            and bindings[0][1].id == temp:
                        wrappers.append(((self._py(names[0]),), [value]))
                    else:
                        wrappers.append(((temp,), [value]))
                        wrappers.append((tuple(self._py(n) for n in names),
                                         [v for _, v in bindings]))
                    scope.update(names)
                elif dec.data == "fun_dec":
                    name, function, arity = self.local_function(dec, where, frozenset(scope))
                    wrappers.append(((self._py(name),), [function]))
                    self.local_functions[name] = arity
                    scope.add(name)
                else:
                    raise self._unsupported(dec, where, f"'let' with a {dec.data}")
            result = self._expr(body, where, frozenset(scope))
        finally:
            self.local_functions.clear()
            self.local_functions.update(saved)
        for params, values in reversed(wrappers):
            result = _call(params, result, values) if params else result
        return result

    def clauses(self, dec: Tree, where: str, local: frozenset[str]
                ) -> tuple[str, tuple[str, ...], ast.expr]:
        """A ``fun`` declaration's name, Python parameters and body (its clauses matched
        in order). A curried function (``fun add x y = x + y``) takes its first argument
        group as the parameters and gives a function of the next (``lambda y: x + y``)."""
        name = str(dec.children[0].children[0])
        rules = []
        groups = {len(self._clause_args(clause)) for clause in dec.children}
        if len(groups) != 1:
            raise self._unsupported(dec, where, f"clauses of {name} with different numbers "
                                    "of curried arguments")
        (count,) = groups
        if count > 1:
            return self._curried(dec, name, count, where, local)
        for clause in dec.children:
            parts = clause.children
            rules.append((self._clause_args(clause)[0], parts[-1]))
        first = _strip_typed(rules[0][0])
        kind = first.data if isinstance(first, Tree) else None
        arity = len(first.children) if kind == "tuple_pat" else 0 if kind == "unit_pat" else 1
        self.local_functions[name] = arity
        parts = list(first.children) if kind == "tuple_pat" else [first]
        if len(rules) == 1 and kind != "unit_pat" and all(
                self._is_simple_target(c) and _strip_typed(c).data == "var_pat"
                for c in parts):
            params = tuple(self._py(str(_strip_typed(c).children[0])) for c in parts)
            names = frozenset(str(_strip_typed(c).children[0]) for c in parts)
            return name, params, self._expr(rules[0][1], where, local | names)
        params = tuple(f"_a{i}" for i in range(arity))
        subjects: list[ast.expr] = [ast.Name(p, ast.Load()) for p in params]
        return name, params, self.rules(rules, subjects, where, local)

    @staticmethod
    def _clause_args(clause: Tree) -> list[Any]:
        """A clause's argument patterns (``f p1 p2 : t = e``: p1, p2)."""
        return [p for p in clause.children[1:-2] if not (isinstance(p, Tree)
                                                         and p.data.startswith("ty_"))]

    def _curried(self, dec: Tree, name: str, count: int, where: str, local: frozenset[str]
                 ) -> tuple[str, tuple[str, ...], ast.expr]:
        """``fun f p1 ... pn = e | ...`` (n > 1): parameters for p1 (its components when
        every first pattern is one tuple of names), then one lambda per further group;
        the clauses are matched once all n arguments are there, as in SML."""
        firsts = [_strip_typed(self._clause_args(c)[0]) for c in dec.children]
        first = firsts[0]
        arity = len(first.children) if isinstance(first, Tree) and \
            first.data == "tuple_pat" else 0 if isinstance(first, Tree) and \
            first.data == "unit_pat" else 1
        self.local_functions[name] = arity
        params = tuple(f"_a{i}" for i in range(arity))
        head: ast.expr = ast.Tuple([ast.Name(p, ast.Load()) for p in params], ast.Load()) \
            if arity != 1 else ast.Name(params[0], ast.Load())
        rest = [f"_c{next(self.fresh)}" for _ in range(count - 1)]
        subjects = [head, *(ast.Name(p, ast.Load()) for p in rest)]
        rules = [(Tree("tuple_pat", self._clause_args(c)), c.children[-1])
                 for c in dec.children]
        body = self.rules(rules, subjects, where, local)
        for param in reversed(rest):
            body = _lambda((param,), body)
        return name, params, body

    def local_function(self, dec: Tree, where: str, local: frozenset[str]
                       ) -> tuple[str, ast.expr, int]:
        """A ``fun`` inside ``let``: a lambda. A recursive one, which a lambda can't name,
        is given itself: ``(lambda _rec: lambda p: _rec(_rec, p))(lambda _self, p: e)``
        with ``f`` in ``e`` read as ``lambda p: _self(_self, p)``."""
        name = str(dec.children[0].children[0])
        recursive = any(n == name for clause in dec.children
                        for n in names_in(clause.children[-1]))
        name, params, body = self.clauses(dec, where, local)
        if not recursive:
            return name, _lambda(params, body), len(params)
        fresh = tuple(f"_r{next(self.fresh)}" for _ in params)

        def itself(owner: str) -> ast.expr:
            return _lambda(fresh, ast.Call(ast.Name(owner, ast.Load()), [
                ast.Name(owner, ast.Load()), *(ast.Name(p, ast.Load()) for p in fresh)], []))

        target = self._py(name)

        class _Itself(ast.NodeTransformer):
            def visit_Lambda(self, node: ast.Lambda) -> ast.expr:
                if any(a.arg == target for a in node.args.args):
                    return node  # a parameter of that name hides the function
                self.generic_visit(node)
                return node

            def visit_Name(self, node: ast.Name) -> ast.expr:
                return itself("_self") if node.id == target else node

        recursion = _lambda(("_self", *params), _Itself().visit(body))
        function = _call(("_rec",), itself("_rec"), [recursion])
        return name, function, len(params)

    # -- library functions ------------------------------------------------------------------
    def library_call(self, tree: Tree, where: str, local: frozenset[str]) -> ast.expr | None:
        """A call of a curried list function or a higher-order one, else None."""
        spine: list[Any] = []
        head: Any = tree
        while isinstance(head, Tree) and head.data == "apply":
            spine.insert(0, head.children[1])
            head = head.children[0]
        if not (isinstance(head, Tree) and head.data == "name"):
            return None
        name = str(head.children[0])
        if name in self.local_functions or name in local or name in self.functions or \
                name in self.inline:
            return None  # the model's own function of that name
        if name.endswith((".all", ".size", ".ran")) and \
                name.split(".")[0] in self.colour_members and len(spine) == 1 and \
                isinstance(spine[0], Tree) and spine[0].data == "unit":
            members = self.colour_members[name.split(".")[0]]
            if name.endswith(".all"):
                try:  # a tuple of literals reads back from its repr
                    return ast.parse(repr(tuple(members)), mode="eval").body
                except SyntaxError:
                    raise self._unsupported(tree, where, f"{name}() of records") from None
            if name.endswith(".size"):
                return ast.Constant(len(members))
            self.uses_random = True  # a member drawn uniformly
            if all(isinstance(m, int) and not isinstance(m, bool) for m in members) and \
                    list(members) == list(range(members[0], members[0] + len(members))):
                return ast.parse(f"discrete({members[0]}, {members[-1]})", mode="eval").body
            return ast.parse(f"{list(members)!r}[discrete(0, {len(members) - 1})]",
                             mode="eval").body
        colour, _, operation = name.rpartition(".")
        if operation in ("ord", "col", "legal", "mkstr", "lt") and len(spine) == 1 and (
                colour in self.colour_shapes):
            return self._colour_function(colour, operation, spine[0], tree, where, local)
        if operation == "mult" and len(spine) == 1 and colour in self.colour_shapes:
            # CS.mult (ms1, ..., msn) of a product: every (x1, ..., xn), the first
            # component outermost (CPN Tools' create_decl.sml)
            if self.colour_shapes[colour][0] != "product":
                raise self._unsupported(tree, where, f"{name} of a colour set that is not a "
                                        "product")
            self.used_basis.add("ml_mult")
            return ast.Call(ast.Name("ml_mult", ast.Load()),
                            [self._expr(spine[0], where, local)], [])
        if operation.startswith("set_") and len(spine) == 2 and \
                self.colour_shapes.get(colour, ("",))[0] == "record" and \
                ml_field(operation[4:]) in dict(self.colour_shapes[colour][1]):
            # CS.set_f r v: r with field f made v, checked legal (create_decl.sml)
            self.used_basis.add("ml_set_field")
            data = ast.parse(repr(self.colour_shapes[colour]), mode="eval").body
            return ast.Call(ast.Name("ml_set_field", ast.Load()), [
                ast.Constant(colour), data, ast.Constant(ml_field(operation[4:])),
                *(self._expr(s, where, local) for s in spine)], [])
        if operation == "output" and len(spine) == 1 and colour in self.colour_shapes:
            # CS.output (s, c) writes c to a stream: dropped, as TextIO's output
            self.used_basis.add("ml_discard")
            return ast.Call(ast.Name("ml_discard", ast.Load()),
                            [self._expr(spine[0], where, local)], [])
        if name in _CURRIED_LISTS and len(spine) == 2:
            a, b = (self._expr(s, where, local) for s in spine)
            return ast.parse(_CURRIED_LISTS[name](a, b), mode="eval").body
        if name in _LIST_UNARY and len(spine) == 1:
            return ast.parse(_LIST_UNARY[name](self._expr(spine[0], where, local)),
                             mode="eval").body
        if name in _HIGHER_ORDER and len(spine) == 2:
            return self._higher_order(_HIGHER_ORDER[name], spine[0], spine[1], where, local)
        if name in _RUNTIME and len(spine) == _RUNTIME[name][1]:
            function = _RUNTIME[name][0]
            self.used_basis.add(function)
            return ast.Call(ast.Name(function, ast.Load()),
                            [self._expr(s, where, local) for s in spine], [])
        if name in _CURRIED_ARITY and len(spine) < _CURRIED_ARITY[name]:
            return self._partial(head, spine, _CURRIED_ARITY[name], where, local)
        if name in _CURRIED_ARITY:
            raise self._unsupported(tree, where, f"{name} applied to {len(spine)} "
                                    f"arguments (it takes {_CURRIED_ARITY[name]})", name)
        return None

    def _colour_function(self, colour: str, operation: str, arg: Any, tree: Tree, where: str,
                         local: frozenset[str]) -> ast.expr:
        """CPN Tools' ``CS.ord c``, ``CS.col i`` (small colour sets: positions from 0 in
        ``CS.all()``), ``CS.legal v`` and ``CS.mkstr c`` (any colour set): a call of the
        library function with the colour set's name and its members or shape, literals."""
        value = self._expr(arg, where, local)
        if operation == "lt" and not lt_orders(self.colour_shapes[colour]):
            raise self._unsupported(tree, where, f"{colour}.lt of a colour set of records, "
                                    "lists or unions (tcpn orders their values no way yet)")
        if operation in ("ord", "col"):
            members = self.colour_members.get(colour)
            if members is None:
                raise self._unsupported(tree, where, f"{colour}.{operation} of a colour set "
                                        "with no list of members (a large one)")
            try:
                data = ast.parse(repr(tuple(members)), mode="eval").body
            except SyntaxError:
                raise self._unsupported(tree, where, f"{colour}.{operation} of records") from None
        else:
            data = ast.parse(repr(self.colour_shapes[colour]), mode="eval").body
        function = f"ml_{operation}"
        self.used_basis.add(function)
        return ast.Call(ast.Name(function, ast.Load()), [ast.Constant(colour), data, value], [])

    def _partial(self, head: Tree, spine: list[Any], arity: int, where: str,
                 local: frozenset[str]) -> ast.expr:
        """A library function applied to fewer than its ``arity`` curried arguments
        (``foldl f 0``, ``List.map f``): the arguments given are evaluated now, as in SML,
        and the result is a function of the next one."""
        given = [f"_s{next(self.fresh)}" for _ in spine]
        missing = [f"_r{next(self.fresh)}" for _ in range(arity - len(spine))]
        call: Any = head
        for name in (*given, *missing):
            call = Tree("apply", [call, Tree("name", [LarkToken("NAME", name)])])
        body = self._expr(call, where, local | frozenset(given) | frozenset(missing))
        for name in reversed(missing):
            body = _lambda((name,), body)
        return _call(tuple(given), body, [self._expr(s, where, local) for s in spine]) \
            if given else body

    def _higher_order(self, form: str, function: Any, items_tree: Any, where: str,
                      local: frozenset[str]) -> ast.expr:
        items = self._expr(items_tree, where, local)
        simple = None
        if isinstance(function, Tree) and function.data == "fn":
            rules = self._fn_rules(function)
            pat = _strip_typed(rules[0][0])
            if len(rules) == 1 and self._is_simple_target(pat):
                simple = (pat, rules[0][1])
        if simple is not None:
            pat, body = simple
            names = [str(t) for t in _pattern_names(pat)]
            target = self._target(pat)
            value = self._expr(body, where, local | frozenset(names))
            element = ast.unparse(target)
        else:
            call = self._expr(function, where, local)
            element = "_e"
            target = ast.Name("_e", ast.Store())
            value = ast.Call(call, [ast.Name("_e", ast.Load())], [])
        # built as trees, not text: a conditional or a lambda in ``value`` then needs no
        # parentheses to stand in a comprehension's ``if``
        loaded = ast.parse(element, mode="eval").body

        def generator(elt: ast.expr, ifs: list[ast.expr]) -> ast.GeneratorExp:
            return ast.GeneratorExp(elt, [ast.comprehension(target, items, ifs, 0)])

        def named(name: str, argument: ast.expr) -> ast.expr:
            return ast.Call(ast.Name(name, ast.Load()), [argument], [])

        tree: ast.expr
        if form == "filter":
            tree = named("tuple", generator(loaded, [value]))
        elif form in ("any", "all"):
            tree = named(form, generator(value, []))
        elif form == "app":  # for its effects (on reference cells), in list order: ()
            tree = ast.Subscript(ast.Tuple([named("tuple", generator(value, [])),
                                            ast.Tuple([], ast.Load())], ast.Load()),
                                 ast.Constant(1), ast.Load())
        else:  # map
            tree = named("tuple", generator(value, []))
        return ast.fix_missing_locations(tree)

    def _is_simple_target(self, pat: Any) -> bool:
        """A pattern Python's ``for`` can bind: names, and tuples of them."""
        pat = _strip_typed(pat)
        if isinstance(pat, Tree) and pat.data == "var_pat":
            name = str(pat.children[0])
            return name not in self.enum_constants and name not in ("true", "false", "nil")
        if isinstance(pat, Tree) and pat.data == "tuple_pat":
            return all(self._is_simple_target(c) for c in pat.children)
        return False

    def _target(self, pat: Any) -> ast.expr:
        pat = _strip_typed(pat)
        if pat.data == "var_pat":
            return ast.Name(self._py(str(pat.children[0])), ast.Store())
        return ast.Tuple([self._target(c) for c in pat.children], ast.Store())


def _pattern_names(pat: Any) -> list[LarkToken]:
    pat = _strip_typed(pat)
    if pat.data == "var_pat":
        return [pat.children[0]]
    return list(itertools.chain.from_iterable(_pattern_names(c) for c in pat.children))
