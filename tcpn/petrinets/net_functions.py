"""The functions a net file may name: an explicit registry, never a walk through modules.

tcpn's component nets call Python functions (a SACK scoreboard update, a token bucket's
level, a code action deciding a RED drop). A PNML file tcpn writes names each one by its
reference ``module:qualname``; reading the file back restores a function only when that
reference is in this registry, where tcpn's component modules put their functions with
:func:`net_function`. ``tcpn.cli:os.system`` names a module tcpn imports, but no function
registered here, so it restores nothing: a file never makes tcpn call what it likes.

>>> @net_function
... def double(x: int) -> int:
...     return 2 * x
>>> registered(reference_of(double)) is double
True
>>> registered("tcpn.cli:os.system") is None
True
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["is_restorable", "net_function", "reference_of", "registered"]

F = TypeVar("F", bound=Callable[..., Any])

_REGISTRY: dict[str, Callable[..., Any]] = {}
#: a module of tcpn's own: the only modules a reference may make tcpn import (importing
#: them runs tcpn's code, which registers its functions, nothing from the file)
_TCPN_MODULE = re.compile(r"tcpn(?:\.[a-z_][a-z0-9_]*)+")


def net_function(function: F) -> F:
    """Register ``function`` as one a net file may name (a decorator; returns it unchanged)."""
    _REGISTRY[reference_of(function)] = function
    return function


def reference_of(function: Any) -> str:
    """``module:qualname``, the name a net file gives ``function``."""
    return f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', '?')}"


def registered(reference: str) -> Callable[..., Any] | None:
    """The registered function ``reference`` names, else None.

    When the reference names a module of tcpn's own that is not imported yet, it is
    imported first (its functions register themselves); no other module is ever imported.
    """
    if reference not in _REGISTRY:
        module, _, _ = reference.partition(":")
        if _TCPN_MODULE.fullmatch(module) and _exists(module):
            importlib.import_module(module)
    return _REGISTRY.get(reference)


def is_restorable(function: Any) -> bool:
    """Whether a net read from a file may hold ``function`` as a code action: a registered
    function, or one translated from the file's own text (it offers its source)."""
    return callable(getattr(function, "restricted_source", None)) or any(
        f is function for f in _REGISTRY.values())


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent is not a package, or not found
        return False
