"""SML's user-declared infix operators in CPN ML: ``infix``, ``infixr``, ``nonfix``.

``infix n id ...`` (``infixr``: right-associative; ``n`` from 0 to 9, 0 when left out)
makes ``a id b`` mean ``id (a, b)`` in all later text, at precedence ``n`` among SML's own
infixes (``before`` 0; ``:=``, ``o`` 3; comparisons 4; ``::`` 5, right; ``+ - ^`` and CPN
Tools' ``++ --`` 6; ``* / div mod`` 7; CPN Tools' `` ` `` 8 and ``@`` 9); ``nonfix id``
undoes it; ``op id`` is the function itself (a fixity declaration of one of SML's own
infixes leaves it as the grammar reads it). :class:`Fixity` reads a text before the
grammar does (:func:`~tcpn.petrinets.exchange.cpnml.parse_ml`, whose LALR grammar has
SML's own infixes only): it takes the fixity declarations out (remembering them for later
text, as SML does) and writes each application of a declared operator as the call of a
function named after it (``a >>= f`` is ``op_gt_gt_eq (a, f)``), the operands found by
SML's precedence and associativity rules (an operand is an application: ``fn``, ``case``
or ``if`` stands in parentheses, as SML requires); ``fun a >>= f = ...`` and
``fun (a >>= f) = ...`` declare that function, and a datatype's constructor declared infix
(``datatype L = E | ::: of int * L``) is that name too. A text with no declared operator and no
fixity declaration comes back unchanged. A fixity declaration holds from where it stands
to the end of its scope, as in SML (Definition of Standard ML, §2.6 and §4.7): inside
``let ... in ... end`` up to the ``end``; in ``local d1 in d2 end`` those of ``d1`` in
``d2`` only, those of ``d2`` after the ``end`` too; ``nonfix`` likewise.

>>> fixity = Fixity()
>>> fixity.rewrite("infixr 9 >>= fun a >>= f = f a")
'fun op_gt_gt_eq ( a , f ) = f a'
>>> fixity.rewrite("x + a >>= g >>= h")
'(x + ( op_gt_gt_eq ( a , ( op_gt_gt_eq ( g , h ) ) ) ) )'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tcpn.errors import InputError

__all__ = ["Fixity", "FixityError", "infix_name"]

#: SML's own infixes (and CPN Tools'): text -> (precedence, right-associative).
_BUILTIN: dict[str, tuple[int, bool]] = {
    "before": (0, False), ":=": (3, False), "o": (3, False),
    **{op: (4, False) for op in ("=", "<>", "<", ">", "<=", ">=")},
    "::": (5, True), "^^": (5, True),
    **{op: (6, False) for op in ("+", "-", "^", "++", "+++", "--")},
    **{op: (7, False) for op in ("*", "/", "div", "mod", "@+", "@++", "%")},
    "`": (8, False), "@": (9, False),
}
#: Tokens that end an operand sequence (no infix expression runs across them).
_DELIMITERS = frozenset({
    ",", ";", "=>", "|", "then", "else", "of", "do", "in", "andalso", "orelse", "handle",
    "if", "case", "fn", "while", "raise", "val", "fun", "and", "type", "datatype",
    "exception", "local", "withtype", ":", "->", "as", "globref", "infix", "infixr",
    "nonfix", "end", "let"})
_CLOSING = {"(": ")", "[": "]", "{": "}", "let": "end", "local": "end"}
_TOKEN = re.compile(r"""
    (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<char>\#"(?:[^"\\]|\\.)*")
  | (?P<selector>\#\s*(?:\d+|[A-Za-z_][A-Za-z0-9_']*))
  | (?P<real>\d+\.\d+(?:[eE]~?\d+)?|\d+[eE]~?\d+)
  | (?P<int>\d+)
  | (?P<name>[A-Za-z][A-Za-z0-9_']*(?:\s*\.\s*[A-Za-z][A-Za-z0-9_']*)*|Real\.(?:==|!=))
  | (?P<tyvar>'[A-Za-z0-9_']*)
  | (?P<ellipsis>\.\.\.)
  | (?P<symbol>[!%&$\#+\-/:<=>?@\\~`^|*]+)
  | (?P<punct>[()\[\]{},;_.])
""", re.VERBOSE)
_SYMBOL_NAMES = {"!": "bang", "%": "pct", "&": "amp", "$": "dollar", "#": "hash",
                 "+": "plus", "-": "minus", "/": "slash", ":": "colon", "<": "lt", "=": "eq",
                 ">": "gt", "?": "qm", "@": "at", "\\": "bs", "~": "tilde", "`": "bq",
                 "^": "caret", "|": "bar", "*": "star"}
#: Nesting of brackets and operator trees a text may have here (the grammar's own bound
#: refuses deeper text anyway).
_MAX_DEPTH = 200


class FixityError(InputError):
    """A fixity declaration or an infix application tcpn cannot read (named)."""


def infix_name(op: str) -> str:
    """The function a declared infix ``op`` is called as: itself when alphanumeric,
    else ``op_`` and its characters' names (``>>=``: ``op_gt_gt_eq``)."""
    if op[0].isalpha():
        return op
    return "op_" + "_".join(_SYMBOL_NAMES[c] for c in op)


#: Operators declared infix where a token stands: name -> (precedence, right-associative).
_Table = dict[str, tuple[int, bool]]


@dataclass
class _Tok:
    text: str
    pre: str = " "  # the white space and comments before it, kept when written back
    table: _Table | None = None  # the declared infixes in effect here (None: made here)

    def __str__(self) -> str:
        return self.pre + self.text


def _lex(text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos, pre = 0, ""
    while pos < len(text):
        ch = text[pos]
        if ch.isspace():
            pre += ch
            pos += 1
            continue
        if text.startswith("(*", pos):  # SML comments nest
            depth, start = 0, pos
            while pos < len(text):
                if text.startswith("(*", pos):
                    depth, pos = depth + 1, pos + 2
                elif text.startswith("*)", pos):
                    depth, pos = depth - 1, pos + 2
                    if depth == 0:
                        break
                else:
                    pos += 1
            pre += text[start:pos]
            continue
        match = _TOKEN.match(text, pos)
        if match is None:
            raise FixityError(f"unexpected {ch!r} at offset {pos}")
        tokens.append(_Tok(match.group(), pre))
        pre, pos = "", match.end()
    tokens.append(_Tok("", pre))  # the end, holding what trails
    return tokens


@dataclass
class Fixity:
    """The infix operators declared so far in one import: name -> (precedence,
    right-associative)."""

    declared: dict[str, tuple[int, bool]] = field(default_factory=dict)

    def rewrite(self, text: str) -> str:
        """``text`` with its fixity declarations taken out (and remembered) and each
        application of a declared operator written as a call; raises
        :class:`FixityError` for text it cannot read so."""
        if not self.declared and not re.search(r"\b(infixr?|nonfix)\b", text):
            return text
        tokens = _lex(text)
        if not any(t.text in ("infix", "infixr", "nonfix") or t.text in self.declared
                   for t in tokens):
            return text
        end = tokens.pop()
        items = self._declarations(tokens)
        out = self._sequence(items, 0)
        return "".join(str(t) for t in out).lstrip() + str(end).rstrip()

    def _declarations(self, tokens: list[_Tok]) -> list[_Tok]:
        """The tokens without their fixity declarations, each holding the table of
        declared infixes in effect where it stands; ``declared`` ends as the table in
        effect after the text."""
        kept: list[_Tok] = []
        current: _Table = dict(self.declared)
        scopes: list[_Scope] = []
        i = 0
        while i < len(tokens):
            word = tokens[i].text
            if word not in ("infix", "infixr", "nonfix"):
                current = _enter_or_leave(scopes, word, current)
                tokens[i].table = current
                kept.append(tokens[i])
                i += 1
                continue
            current = dict(current)
            blank = " " * len(tokens[i].text) + tokens[i].pre
            i += 1
            precedence = 0
            if word != "nonfix" and i < len(tokens) and tokens[i].text.isdigit():
                if len(tokens[i].text) != 1:
                    raise FixityError(f"{word} {tokens[i].text}: a precedence is 0 to 9")
                precedence = int(tokens[i].text)
                blank += tokens[i].pre + " " * len(tokens[i].text)
                i += 1
            names = 0
            while i < len(tokens) and _operator_like(tokens[i].text):
                name = tokens[i].text
                blank += tokens[i].pre + " " * len(name)
                if name not in _BUILTIN:  # SML's own keep the grammar's reading
                    change = None if word == "nonfix" else (precedence, word == "infixr")
                    _declare(current, name, change)
                    if scopes:
                        scopes[-1].changes.append((name, change))
                names += 1
                i += 1
            if names == 0:
                raise FixityError(f"{word} without an identifier")
            while i < len(tokens) and tokens[i].text == ";":
                blank += tokens[i].pre + " "
                i += 1
            if i < len(tokens):
                tokens[i] = _Tok(tokens[i].text, blank + tokens[i].pre)
            else:
                kept.append(_Tok("", blank, current))
        self.declared = current
        return kept

    @staticmethod
    def _infix(tok: _Tok) -> tuple[int, bool] | None:
        return _declared(tok).get(tok.text) or _BUILTIN.get(tok.text)

    def _sequence(self, tokens: list[_Tok], depth: int) -> list[_Tok]:
        """A run of tokens: groups read inside, then each stretch between delimiters."""
        if depth > _MAX_DEPTH:
            raise FixityError("text nested too deep")
        items: list[_Tok | list[_Tok]] = []
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok.text == "op" and i + 1 < len(tokens) and \
                    tokens[i + 1].text in _declared(tokens[i + 1]):
                items.append(_Tok(infix_name(tokens[i + 1].text), tok.pre))
                i += 2
                continue
            closer = _CLOSING.get(tok.text)
            if closer is None:
                items.append(tok)
                i += 1
                continue
            j = _matching(tokens, i)
            inner = self._sequence(tokens[i + 1:j], depth + 1)
            items.append([tok, *inner, tokens[j]])
            i = j + 1
        return self._stretches(items, depth)

    def _stretches(self, items: list[_Tok | list[_Tok]], depth: int) -> list[_Tok]:
        out: list[_Tok] = []
        stretch: list[_Tok | list[_Tok]] = []
        head = False  # in a val/fun/datatype binding's head: its first = ends it
        construct = ""  # the last of fun/case/fn/handle/datatype, while it lasts
        constructor = False  # the stretch names a datatype's constructor
        i = 0
        while i < len(items):
            item = items[i]
            text = item.text if isinstance(item, _Tok) else None
            ends_head = head and text == "="
            if text in _DELIMITERS or ends_head:
                resolved = self._constructor(stretch, depth) if constructor else \
                    self._resolve(stretch, depth)
                out.extend(self._head(resolved) if head and construct == "fun" else resolved)
                stretch = []
                if construct == "datatype" and text not in ("|", "of", "and", "->") and \
                        not ends_head:
                    construct = ""
                if text in ("fun", "case", "fn", "handle", "datatype"):
                    construct = text or ""
                constructor = construct == "datatype" and (ends_head or text == "|")
                head = text in ("val", "fun", "and", "datatype") or \
                    (text == "|" and construct == "fun")
                if ends_head:
                    head = False
                assert isinstance(item, _Tok)
                out.append(item)
            else:
                stretch.append(item)
            i += 1
        out.extend(self._constructor(stretch, depth) if constructor else
                   self._resolve(stretch, depth))
        return out

    def _constructor(self, stretch: list[_Tok | list[_Tok]], depth: int) -> list[_Tok]:
        """A datatype binding's constructor: a declared infix (``datatype L = E | ::: of
        int * L``, as SML allows) is named as its applications are written
        (``op_colon_colon_colon``)."""
        if len(stretch) == 1 and isinstance(tok := stretch[0], _Tok) and \
                tok.text in _declared(tok):
            return [_Tok(infix_name(tok.text), tok.pre)]
        return self._resolve(stretch, depth)

    def _head(self, tokens: list[_Tok]) -> list[_Tok]:
        """A ``fun`` clause's head ``(a >>= f)``, read as ``(op_gt_gt_eq (a, f))``: the
        parentheses around the call taken off (``fun op_gt_gt_eq (a, f) = ...``)."""
        names = {infix_name(op) for tok in tokens for op in _declared(tok)}
        inner = tokens
        while len(inner) > 2 and inner[0].text == "(" and _closes(inner) == len(inner) - 1:
            inner = inner[1:-1]
            if inner and inner[0].text in names:
                return [_Tok(inner[0].text, tokens[0].pre), *inner[1:]]
        return tokens

    def _resolve(self, stretch: list[_Tok | list[_Tok]], depth: int) -> list[_Tok]:
        """One stretch between delimiters: operands (applications) and infixes, its
        declared operators written as calls by precedence climbing."""
        if not any(isinstance(t, _Tok) and t.text in _declared(t) for t in stretch):
            return _flatten(stretch)
        operands: list[list[_Tok]] = [[]]
        operators: list[_Tok] = []
        for item in stretch:
            if isinstance(item, _Tok) and self._infix(item) is not None and \
                    operands[-1] and operands[-1][-1].text != "op":
                operators.append(item)
                operands.append([])
            else:
                operands[-1].extend(item if isinstance(item, list) else [item])
        if any(not o for o in operands):
            names = " ".join(op.text for op in operators)
            raise FixityError(f"infix {names}: an operator without its operand")
        position = [0]

        def climb(minimum: int, level: int) -> list[_Tok]:
            if level > _MAX_DEPTH:
                raise FixityError("infix expression nested too deep")
            left = operands[position[0]]
            while position[0] < len(operators):
                op = operators[position[0]]
                precedence, right = self._infix(op) or (0, False)
                if precedence < minimum:
                    break
                position[0] += 1
                level += 1  # each application nests the left operand one deeper
                if level > _MAX_DEPTH:
                    raise FixityError("infix expression nested too deep")
                rhs = climb(precedence if right else precedence + 1, level + 1)
                left = self._apply(op, left, rhs)
            return left

        result = climb(0, 0)
        return result

    @staticmethod
    def _apply(op: _Tok, left: list[_Tok], right: list[_Tok]) -> list[_Tok]:
        if op.text in _declared(op):
            return [_Tok("(", op.pre), _Tok(infix_name(op.text)), _Tok("("), *left,
                    _Tok(","), *right, _Tok(")"), _Tok(")")]
        return [_Tok("("), *left, op, *right, _Tok(")")]


@dataclass
class _Scope:
    """An open ``let`` or ``local``: the table in effect before it, whether its ``in``
    has been passed, and the fixity changes made at its level since then (a ``local``'s
    body declarations outlive its ``end``)."""

    opener: str
    before: _Table
    in_body: bool = False
    changes: list[tuple[str, tuple[int, bool] | None]] = field(default_factory=list)


def _declare(table: _Table, name: str, change: tuple[int, bool] | None) -> None:
    if change is None:
        table.pop(name, None)
    else:
        table[name] = change


def _enter_or_leave(scopes: list[_Scope], word: str, current: _Table) -> _Table:
    """The table in effect after ``word``: a ``let`` or ``local`` opens a scope, its
    ``in`` starts the part whose declarations a ``local`` keeps, its ``end`` restores the
    table from before it (with a ``local`` body's changes made again)."""
    if word in ("let", "local"):
        scopes.append(_Scope(word, current))
    elif word == "in" and scopes and not scopes[-1].in_body:
        scopes[-1].in_body = True
        scopes[-1].changes = []
    elif word == "end" and scopes:
        scope = scopes.pop()
        if scope.opener == "let" or not scope.changes:
            return scope.before
        current = dict(scope.before)
        for name, change in scope.changes:
            _declare(current, name, change)
        if scopes:
            scopes[-1].changes.extend(scope.changes)
    return current


def _declared(tok: _Tok) -> _Table:
    return tok.table or {}


#: SML's reserved words: never an identifier a fixity declaration names.
_RESERVED = frozenset({
    "abstype", "and", "andalso", "as", "case", "datatype", "do", "else", "end", "eqtype",
    "exception", "fn", "fun", "functor", "handle", "if", "in", "include", "infix", "infixr",
    "let", "local", "nonfix", "of", "op", "open", "orelse", "raise", "rec", "sharing", "sig",
    "signature", "struct", "structure", "then", "type", "val", "where", "while", "with",
    "withtype", "globref", "=>", "->", "|", ":", ":>", "#"})


def _operator_like(text: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9_']*|[!%&$#+\-/:<=>?@\\~`^|*]+", text)) \
        and text not in _RESERVED


def _closes(tokens: list[_Tok]) -> int:
    """Where the parenthesis opening ``tokens`` closes (-1: it does not)."""
    depth = 0
    for k, tok in enumerate(tokens):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(tok.text, 0)
        if depth == 0:
            return k
    return -1


def _matching(tokens: list[_Tok], start: int) -> int:
    """Where the bracket (or ``let``/``local``) at ``start`` closes."""
    stack = [_CLOSING[tokens[start].text]]
    for k in range(start + 1, len(tokens)):
        text = tokens[k].text
        if text in _CLOSING:
            stack.append(_CLOSING[text])
        elif text in (")", "]", "}", "end"):
            if text != stack[-1]:
                raise FixityError(f"unbalanced {text!r}")
            stack.pop()
            if not stack:
                return k
    raise FixityError(f"{tokens[start].text!r} that does not close")


def _flatten(items: list[_Tok | list[_Tok]]) -> list[_Tok]:
    out: list[_Tok] = []
    for item in items:
        out.extend(item if isinstance(item, list) else [item])
    return out
