"""Self-recursion that is a loop, as a Python loop: the code of an imported CPN ML function.

CPN ML has no loops: a walk down a list or a count up to a bound is a function that calls
itself, and the Python translation of ``fun f (...) = ...`` is one expression that does
the same. Python's stack is shallow (1,000 frames by default), so a list of a thousand
SACK runs, or a pipe counted over a thousand segments, would end in ``RecursionError``
where SML runs on. :func:`loop_source` rewrites the two shapes such recursion takes:

* **tail calls**: ``f(...)`` as the whole value of a branch (of ``x if c else y``, of the
  last operand of ``and``/``or``, of a ``let``, written ``(lambda v: body)(e)``) becomes
  new parameter values and another turn of the loop;
* **list walks**: ``left op f(...)`` (``(runs[0],) + f(runs[1:])``, ``n + f(s + 1)``): the
  left operands are kept on a stack, in the order the recursion computes them, and
  combined from the innermost value outwards once the walk ends, so the result is the
  recursion's to the last bit (the same operations on the same values in the same order).

Anything else that mentions the function (two calls in one branch, a call in a test, the
function passed as a value) is not a loop: :func:`loop_source` returns ``None`` and the
function stays recursive.

Each turn's new parameter values pass through ``turn(...)``, a name the caller binds to a
:class:`LoopTurns` (``fun f x = f x`` runs for ever in SML, ``fun f s = f (s ^ s)`` also
fills the memory: here the turns stop past ``while_iterations``, each counts against
``evaluation_steps``, and a value longer than ``list_length`` is refused):

>>> loop = loop_source("total", ("xs",), "0 if len(xs) == 0 else xs[0] + total(xs[1:])")
>>> print(loop.source)
def total(xs):
    _stack = []
    while True:
        if len(xs) == 0:
            _value = 0
            break
        else:
            _stack.append(xs[0])
            xs, = _turn((xs[1:],))
            continue
    while _stack:
        _left = _stack.pop()
        _value = _left + _value
    return _value
>>> namespace = {loop.turn: LoopTurns("total")}
>>> exec(loop.source, namespace)
>>> namespace["total"](tuple(range(5000)))
12497500
"""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

from tcpn.limits import limit_problem, limits
from tcpn.petrinets import ml_work
from tcpn.petrinets.cells import LoopLimitError

__all__ = ["Loop", "LoopTurns", "loop_source"]


class _NotALoop(Exception):
    """The recursion has a shape :func:`loop_source` does not rewrite."""


class Loop(NamedTuple):
    """A function's loop: its ``def``, and the name it passes each turn's new parameter
    values through (bind it to a new :class:`LoopTurns` for each call)."""

    source: str
    turn: str


def loop_source(name: str, params: tuple[str, ...], body: str) -> Loop | None:
    """``def name(params)`` computing ``body`` with its self-calls as a loop.

    ``None`` when ``body`` does not call ``name`` or calls it in a way that is not a loop.
    """
    tree = ast.parse(body, mode="eval").body
    if not _mentions(tree, name):
        return None
    try:
        writer = _LoopWriter(name, params, tree)
        return Loop(writer.source(), writer.turn)
    except _NotALoop:
        return None


class LoopTurns:
    """The turns of one call of ``function``'s loop: at most ``while_iterations`` (a walk
    down a list of that many elements), each a step of the evaluation
    (:mod:`~tcpn.petrinets.ml_work`), each turn's values at most ``list_length`` long; one
    more turn is a :class:`~tcpn.petrinets.cells.LoopLimitError` naming the function."""

    __slots__ = ("bound", "function", "turns")

    def __init__(self, function: str):
        self.function = function
        self.turns = 0
        self.bound = limits().while_iterations

    def __call__(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """``values``, the next turn's parameters, once counted and checked."""
        self.turns += 1
        if self.turns > self.bound:
            raise LoopLimitError(f"function {self.function} calls itself without end: "
                                 f"{limit_problem('while_iterations', self.turns)}")
        ml_work.turn(self.function)
        return ml_work.sized(self.function, values)


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _let(node: ast.expr) -> tuple[list[str], list[ast.expr], ast.expr] | None:
    """``(lambda a, b: body)(x, y)`` as (names, values, body), else ``None``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Lambda)):
        return None
    arguments = node.func.args
    if (arguments.posonlyargs or arguments.vararg or arguments.kwonlyargs or arguments.kwarg
            or arguments.defaults or node.keywords
            or any(isinstance(a, ast.Starred) for a in node.args)
            or len(arguments.args) != len(node.args)):
        return None
    return [a.arg for a in arguments.args], list(node.args), node.func.body


def _free_names(node: ast.AST, bound: frozenset[str] = frozenset()) -> set[str]:
    """The names ``node`` reads that no lambda or comprehension inside it binds."""
    if isinstance(node, ast.Name):
        return set() if node.id in bound else {node.id}
    if isinstance(node, ast.Lambda):
        inner = bound | {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        return _free_names(node.body, inner)
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        targets = {n.id for g in node.generators for n in ast.walk(g.target)
                   if isinstance(n, ast.Name)}
        # conservative: every part of the comprehension sees its targets as bound
        return set().union(*(_free_names(child, bound | targets)
                             for child in ast.iter_child_nodes(node)))
    return set().union(*(_free_names(child, bound) for child in ast.iter_child_nodes(node)))


class _LoopWriter:
    def __init__(self, name: str, params: tuple[str, ...], tree: ast.expr):
        self.name, self.params, self.tree = name, params, tree
        self.free = _free_names(tree)
        taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | set(params) | {
            a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
        prefix = "_"
        while any(n.startswith(prefix) for n in taken):
            prefix += "_"
        self.stack, self.value, self.left = (f"{prefix}stack", f"{prefix}value",
                                             f"{prefix}left")
        self.temp_prefix = f"{prefix}t"
        self.turn = f"{prefix}turn"
        self.temps = 0
        self.sites: list[ast.operator] = []  # the operator of each list-walk site
        # operators whose right operand mentions the function: the list-walk sites there
        # may be (one: the stack holds left operands; more: (site, left operand) pairs)
        self.walk_operators = sum(isinstance(n, ast.BinOp) and _mentions(n.right, name)
                                  for n in ast.walk(tree))
        self.lines: list[str] = []

    def source(self) -> str:
        self._tail(self.tree, 2)
        walks = bool(self.walk_operators)
        head = [f"def {self.name}({', '.join(self.params)}):"]
        if walks:
            head.append(f"    {self.stack} = []")
        head.append("    while True:")
        lines = head + self.lines
        if walks:
            lines.append(f"    while {self.stack}:")
            if self.walk_operators == 1:
                lines.append(f"        {self.left} = {self.stack}.pop()")
                lines.append(f"        {self.value} = {self._combine(self.sites[0])}")
            else:
                lines.append(f"        {self.temp_prefix}site, {self.left} = {self.stack}.pop()")
                for site, operator in enumerate(self.sites):
                    keyword = "if" if site == 0 else "elif"
                    lines.append(f"        {keyword} {self.temp_prefix}site == {site}:")
                    lines.append(f"            {self.value} = {self._combine(operator)}")
            lines.append(f"    return {self.value}")
        return "\n".join(lines)

    def _combine(self, operator: ast.operator) -> str:
        return ast.unparse(ast.BinOp(ast.Name(self.left), operator, ast.Name(self.value)))

    def _plain(self, node: ast.expr) -> str:
        """An expression evaluated as it is: it must not mention the function."""
        if _mentions(node, self.name):
            raise _NotALoop
        return ast.unparse(node)

    def _emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def _result(self, indent: int, text: str) -> None:
        if self.walk_operators:
            self._emit(indent, f"{self.value} = {text}")
            self._emit(indent, "break")
        else:
            self._emit(indent, f"return {text}")

    def _tail(self, node: ast.expr, indent: int) -> None:
        """Statements computing ``node`` in tail position: a value, or another turn."""
        if not _mentions(node, self.name):
            self._result(indent, ast.unparse(node))
            return
        if isinstance(node, ast.IfExp):
            keyword = "if"
            branch: ast.expr = node
            while isinstance(branch, ast.IfExp):  # a chain of conditions: if/elif/else
                self._emit(indent, f"{keyword} {self._plain(branch.test)}:")
                self._tail(branch.body, indent + 1)
                keyword, branch = "elif", branch.orelse
            self._emit(indent, "else:")
            self._tail(branch, indent + 1)
            return
        if isinstance(node, ast.BoolOp):
            for operand in node.values[:-1]:
                temp = f"{self.temp_prefix}{self.temps}"
                self.temps += 1
                self._emit(indent, f"{temp} = {self._plain(operand)}")
                stop = f"not {temp}" if isinstance(node.op, ast.And) else temp
                self._emit(indent, f"if {stop}:")
                self._result(indent + 1, temp)
            self._tail(node.values[-1], indent)
            return
        let = _let(node)
        if let is not None:
            names, values, body = let
            # a let becomes assignments: safe when no name it binds is also read, outside
            # it, as a global (the assignment makes the name local to the whole loop)
            if self.name in names or any(n in self.free and n not in self.params
                                         for n in names):
                raise _NotALoop
            rendered = ", ".join(self._plain(v) for v in values)
            self._emit(indent, f"{', '.join(names)}, = ({rendered},)")
            self._tail(body, indent)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == self.name:
            if node.keywords or len(node.args) != len(self.params) or any(
                    isinstance(a, ast.Starred) for a in node.args):
                raise _NotALoop
            rendered = ", ".join(self._plain(a) for a in node.args)
            self._emit(indent, f"{', '.join(self.params)}, = {self.turn}(({rendered},))")
            self._emit(indent, "continue")
            return
        if isinstance(node, ast.BinOp) and not _mentions(node.left, self.name):
            left = self._plain(node.left)
            self.sites.append(node.op)
            site = len(self.sites) - 1
            self._emit(indent, f"{self.stack}.append(({site}, {left}))"
                       if self.walk_operators > 1 else f"{self.stack}.append({left})")
            self._tail(node.right, indent)
            return
        raise _NotALoop
