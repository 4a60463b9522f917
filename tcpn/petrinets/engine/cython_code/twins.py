"""Compiled twins of the Python functions a net's inscriptions call, for the native engine.

The native engine compiles each transition's generated code; the functions its
inscriptions and code actions call (a TCP sender's SACK scoreboard and RTT update, a
receiver's reassembly) would still run as Python bytecode. This module gathers those
functions, with the functions of theirs they call in turn, into the source of one Cython
module (the same code: decorators and annotations dropped, their other globals set
after import, as the simulator's loop is), and maps each function to its compiled twin,
which :func:`tcpn.petrinets.engine.native.build_native` hands the transitions instead.

A function is compiled only where its source alone defines it: a plain module-level
function of one of tcpn's own modules (no closure, no ``global`` statement, constant
defaults, no decorator but :func:`~tcpn.petrinets.net_functions.net_function`, which
returns it unchanged), whose name and globals agree with the others'. Any other
function stays Python, so a net may call anything. The twins read the globals' values
of the build: a module that rebinds a global later (a ``global`` statement in another
of its functions) would need its functions kept Python; no module of tcpn's net
functions does (``tcpn/models/registered_variants.py`` does, and has none).

>>> from tcpn.models.components.packets import covers
>>> [f.__name__ for f in gather([covers])]
['covers', '_run_at']
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterable
from functools import lru_cache
from types import FunctionType, ModuleType
from typing import Any

from tcpn.petrinets.engine.codecache import derived_cached, file_digest, function_key
from tcpn.petrinets.engine.cython_code import plain_code
from tcpn.petrinets.engine.cython_code.plain_code import plain_definition

__all__ = ["gather", "twins_of", "twins_source"]

#: the decorators a compiled function may carry (they return the function unchanged)
_KEPT_DECORATORS = frozenset({"net_function"})


def _plain_enough(function: FunctionType) -> bool:
    """Whether the function may be compiled, as far as its object tells (see the module)."""
    return (function.__module__.startswith("tcpn.") and not function.__closure__
            and function.__qualname__ == function.__name__ and not function.__kwdefaults__)


def _tree(function: FunctionType) -> ast.FunctionDef | None:
    """The function's definition, if its source alone defines it (see the module)."""
    if not _plain_enough(function):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None
    definition = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(definition, ast.FunctionDef) or definition.name != function.__name__:
        return None
    if any(not (isinstance(d, ast.Name) and d.id in _KEPT_DECORATORS)
           for d in definition.decorator_list):
        return None
    if any(not isinstance(d, ast.Constant)
           for d in (*definition.args.defaults, *definition.args.kw_defaults)):
        return None
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(definition)):
        return None
    definition.decorator_list = []  # net_function's, applied already
    return definition


@lru_cache(maxsize=1024)
def _analysis(function: FunctionType) -> tuple[str, tuple[str, ...]] | None:
    """The function's source as compiled (decorators and annotations dropped) and the
    names it reads, or ``None`` if it stays Python (parsed once per process, and kept in
    the code cache across processes, keyed by the function's file and this code's:
    reading a function's source is most of the cost)."""
    if not _plain_enough(function):
        return None
    key = function_key(function)
    if key is None or None in _DERIVING:  # a file unread: derived without the cache
        return _derived(function)
    stored = derived_cached("twin", (*key, *map(str, _DERIVING)), lambda: _derived(function))
    return None if stored is None else (stored[0], tuple(stored[1]))


#: the code that derives a twin's source: this module's and :mod:`.plain_code`'s files
_DERIVING = tuple(file_digest(path) for path in (__file__, plain_code.__file__ or ""))


def _derived(function: FunctionType) -> tuple[str, tuple[str, ...]] | None:
    """:func:`_analysis` computed."""
    definition = _tree(function)
    if definition is None:
        return None
    plain = plain_definition(definition)
    names = tuple(sorted({n.id for n in ast.walk(plain) if isinstance(n, ast.Name)}))
    return ast.unparse(plain), names


def _globals_read(function: FunctionType, names: tuple[str, ...]) -> dict[str, Any]:
    """The ``names`` that are the function's module's globals, with their values."""
    return {n: function.__globals__[n] for n in names if n in function.__globals__}


def gather(roots: Iterable[Any]) -> list[FunctionType]:
    """The functions among ``roots`` that can be compiled, with those they call in turn,
    each once, callers first. Every name means one object in the module: a function
    whose name or globals would mean another than those gathered before stays Python."""
    gathered: dict[str, FunctionType] = {}
    bound: dict[str, Any] = {}  # every name the module defines or reads, with its object
    pending = list({id(f): f for f in roots if isinstance(f, FunctionType)}.values())
    while pending:
        function = pending.pop(0)
        if function.__name__ in gathered:
            continue
        analysis = _analysis(function)
        if analysis is None:
            continue
        names = {**_globals_read(function, analysis[1]), function.__name__: function}
        if any(bound.get(n, v) is not v for n, v in names.items()):
            continue
        gathered[function.__name__] = function
        bound.update(names)
        pending.extend(v for v in names.values() if isinstance(v, FunctionType))
    return list(gathered.values())


def twins_source(functions: list[FunctionType], header: str) -> tuple[str, dict[str, Any]]:
    """The Cython module source of ``functions`` (after ``header``) and the globals to set
    in it once loaded (placeholders in the source)."""
    definitions, reads = [], {}
    compiled = {f.__name__ for f in functions}
    for function in functions:
        analysis = _analysis(function)
        assert analysis is not None
        definitions.append(analysis[0])
        reads.update({n: v for n, v in _globals_read(function, analysis[1]).items()
                      if n not in compiled})
    placeholders = "".join(f"{name} = None\n" for name in sorted(reads))
    return header + placeholders + "\n\n".join(definitions) + "\n", reads


def twins_of(module: ModuleType, functions: list[FunctionType],
             reads: dict[str, Any]) -> dict[int, Callable[..., Any]]:
    """``id(function) -> compiled twin`` for the built ``module`` of :func:`twins_source`
    (its globals set from ``reads``)."""
    vars(module).update(reads)
    return {id(f): getattr(module, f.__name__) for f in functions}
