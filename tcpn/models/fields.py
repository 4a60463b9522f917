"""Field paths into raw scenario data, and the one function that sets a field by its path.

A sweep's axis (``links[1].ab.queue.limit``) and a study's point
(``links.1.ab.queue.limit``) both change a scenario given as data (the mapping a scenario
file holds) before it is validated; both go through :func:`set_field`, so the two cannot
read one path differently.

>>> data = {"links": [{"ab": {"queue": {"limit": 5}}}]}
>>> set_field(data, parse_path("links[0].ab.queue.limit"), 3)
>>> data["links"][0]["ab"]["queue"]["limit"]
3
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tcpn.errors import InputError

__all__ = ["PathPart", "parse_path", "path_text", "set_field", "with_fields"]

_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\])*")
_PART = re.compile(r"([A-Za-z_]\w*)|\[(\d+)\]")

PathPart = str | int


def parse_path(text: str) -> tuple[PathPart, ...]:
    """``"links[1].ab.queue.limit"`` as ``("links", 1, "ab", "queue", "limit")``.

    >>> parse_path("flows[0].params.alpha")
    ('flows', 0, 'params', 'alpha')
    >>> parse_path("flows[0]..alpha")
    Traceback (most recent call last):
    ...
    ValueError: 'flows[0]..alpha' is not a field path (names joined by '.', list \
indices in [ ]), e.g. links[1].ab.queue.limit
    """
    if _PATH.fullmatch(text) is None:
        raise ValueError(f"{text!r} is not a field path (names joined by '.', list indices "
                         "in [ ]), e.g. links[1].ab.queue.limit")
    return tuple(int(index) if index else name for name, index in _PART.findall(text))


def path_text(path: Sequence[PathPart]) -> str:
    """The inverse of :func:`parse_path`."""
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p)
                   for i, p in enumerate(path))


def set_field(data: Any, path: Sequence[PathPart], value: Any, create: bool = False,
              shown: str | None = None) -> None:
    """Set the field at ``path`` of ``data`` to a deep copy of ``value``, in place.

    A part indexes a list where the data holds a list there (``"0"`` as well as ``0``), and
    names a key of a mapping otherwise. A missing or scalar section on the way is created
    with ``create`` (a dict, or a list before an index: the sweep, whose paths are checked
    against the schema first) and an :class:`~tcpn.errors.InputError` naming the first
    missing part otherwise (``shown``: how the path reads to the user).
    """
    node, last = _parent(data, path, create, shown)
    node[last] = copy.deepcopy(value)


def with_fields(mapping: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``mapping`` with each dotted ``path: value`` set (integers index
    lists; a value ``None`` deletes the key).

    >>> m = {"tcp": {"sack": True, "min_rto_s": 1.0}}
    >>> with_fields(m, {"tcp.min_rto_s": 0.2, "tcp.sack": None})
    {'tcp': {'min_rto_s': 0.2}}
    """
    out = copy.deepcopy(dict(mapping))
    for path, value in changes.items():
        parts = path.split(".")
        if value is None:
            node, last = _parent(out, parts, False, path)
            if isinstance(node, dict):
                node.pop(last, None)
                continue
        set_field(out, parts, value, shown=path)
    return out


def _parent(data: Any, path: Sequence[PathPart], create: bool,
            shown: str | None) -> tuple[Any, Any]:
    """The section holding the field at ``path`` and the field's key or index in it."""
    node: Any = data
    for i, part in enumerate(path[:-1]):
        try:
            key: Any = int(part) if isinstance(node, list) else part
            if create and isinstance(node, dict) and not isinstance(node.get(key), dict | list):
                node[key] = [] if isinstance(path[i + 1], int) else {}
            node = node[key]
        except (KeyError, IndexError, TypeError, ValueError):
            where = ".".join(str(p) for p in path[:i + 1])
            raise InputError(f"field {where!r} of {shown or path_text(path)!r} does not "
                             "exist in the base scenario") from None
    return node, int(path[-1]) if isinstance(node, list) else path[-1]
