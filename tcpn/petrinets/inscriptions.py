"""Inscriptions: Python expressions on arcs, guards and delays, parsed once and checked.

An inscription is a string of Python expression syntax (``"x + 1"``, ``"(seq, size)"``,
``"cwnd < ssthresh"``). Parsing it here gives the names it uses and, for input arcs,
whether it is a *pattern* (a variable, a constant, or a tuple of patterns) that binds
variables by matching tokens. Anything else on an input arc is an expression evaluated
from variables bound elsewhere.

>>> e = Inscription.parse("(seq, size)", "arc p->t")
>>> e.is_pattern, sorted(e.pattern_variables)
(True, ['seq', 'size'])
>>> Inscription.parse("x +", "guard of t")
Traceback (most recent call last):
...
tcpn.errors.InputError: guard of t: invalid inscription 'x +': invalid syntax
"""

from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass, field

from tcpn.errors import InputError
from tcpn.limits import limit_problem

__all__ = ["BUILTIN_NAMES", "RANDOM_FUNCTIONS", "RESERVED_NAMES", "Inscription",
           "is_pattern_tree"]

#: Names every inscription may use without declaring them.
BUILTIN_NAMES = frozenset(
    {"abs", "min", "max", "len", "int", "float", "round", "sum", "bool", "str", "tuple",
     "sorted", "range", "any", "all", "True", "False", "None"}
)
#: Functions that draw from the simulator's stream: allowed where a binding fires (output
#: arcs, delays, code actions), never in guards or input arcs (enabling must be a function
#: of the marking).
RANDOM_FUNCTIONS = frozenset({"uniform", "exponential", "normal", "bernoulli", "discrete"})
#: ``now`` is the model time at firing; ``rng`` is the NumPy generator (code actions only).
RESERVED_NAMES = frozenset({"now", "rng"})


@dataclass(frozen=True)
class Inscription:
    """A parsed Python expression with the names it reads.

    Parses are cached by text, so ``tree`` is shared: read it, never mutate it.
    """

    text: str
    tree: ast.expr = field(compare=False, repr=False)
    names: frozenset[str] = field(compare=False, repr=False)

    @classmethod
    def parse(cls, text: str, where: str) -> Inscription:
        """Parse ``text``; ``where`` names the net element for error messages."""
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: an inscription must be a non-empty string, got {text!r}")
        try:
            return _parse(text.strip())
        except SyntaxError as exc:
            raise InputError(f"{where}: invalid inscription {text!r}: {exc.msg}") from None

    @functools.cached_property
    def is_pattern(self) -> bool:
        """True for a variable, a constant, or a (nested) tuple of those."""
        return is_pattern_tree(self.tree)

    @functools.cached_property
    def pattern_variables(self) -> frozenset[str]:
        """The variables a pattern binds (empty when it is not a pattern)."""
        if not self.is_pattern:
            return frozenset()
        return frozenset(n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name))

    @property
    def is_constant(self) -> bool:
        """True when the inscription reads no name at all."""
        return not self.names

    def free_variables(self, declared: frozenset[str] | set[str]) -> frozenset[str]:
        """Names that are neither declared, built in, random functions nor reserved."""
        return frozenset(
            n
            for n in self.names
            if n not in declared
            and n not in BUILTIN_NAMES
            and n not in RANDOM_FUNCTIONS
            and n not in RESERVED_NAMES
            and not hasattr(builtins, n)
        )


def is_pattern_tree(node: ast.expr) -> bool:
    """Whether ``node`` is an input-arc pattern: a variable, a constant, or a (nested)
    tuple of those."""
    if isinstance(node, ast.Name | ast.Constant):
        return True
    if isinstance(node, ast.Tuple):
        return all(is_pattern_tree(e) for e in node.elts)
    return False


@functools.lru_cache(maxsize=65536)
def _parse(text: str) -> Inscription:
    """Parse once per distinct text (nets repeat the same inscriptions many times).

    Nesting deeper than ``limits().expression_depth`` is refused: the translators, the
    code generator and Python's own compiler recurse over the tree (the deepest
    inscription of tcpn's TCP models has 13 levels)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except (RecursionError, MemoryError):  # the parser's own stack, thousands of levels
        raise SyntaxError("nested too deep for Python's parser") from None
    problem = limit_problem("expression_depth", _depth(tree))
    if problem is not None:
        raise SyntaxError(f"nested too deep: {problem}")
    for node in ast.walk(tree):
        if isinstance(node, ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom):
            raise SyntaxError("an inscription must not assign or yield")
    local = _comprehension_names(tree)
    names = frozenset(
        node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id not in local
    )
    return Inscription(text, tree, names)


def _depth(tree: ast.AST) -> int:
    """Levels of nesting of an expression tree, counted without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack += [(child, level + 1) for child in ast.iter_child_nodes(node)]
    return deepest


def _comprehension_names(tree: ast.expr) -> set[str]:
    """Names bound inside the expression by comprehensions and lambdas."""
    local: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            for gen in node.generators:
                local.update(t.id for t in ast.walk(gen.target) if isinstance(t, ast.Name))
        elif isinstance(node, ast.Lambda):
            local.update(a.arg for a in node.args.args)
    return local
