"""Python source without annotations, for Cython: the compiled engine's code and the
compiled twins of the nets' functions are the Python engine's code with its annotations
dropped, so that Cython types nothing the Python code does not (an ``int`` annotation
would make Cython reject a float where Python accepts it)."""

from __future__ import annotations

import ast
from typing import TypeVar

__all__ = ["plain_definition"]

Node = TypeVar("Node", bound=ast.AST)


class _Plain(ast.NodeTransformer):
    """Drops argument and return annotations; an annotated assignment becomes a plain
    one (or ``pass`` when it assigns nothing)."""

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)


def plain_definition(tree: Node) -> Node:
    """``tree`` (a module or a definition) with every annotation dropped, locations fixed.

    >>> import ast
    >>> source = "def f(x: int) -> int:\\n    y: int = x\\n    return y"
    >>> ast.unparse(plain_definition(ast.parse(source)))
    'def f(x):\\n    y = x\\n    return y'
    """
    plain = _Plain().visit(tree)
    assert isinstance(plain, type(tree))
    return ast.fix_missing_locations(plain)
