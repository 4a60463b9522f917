"""SML Basis list and option functions for nets read from CPN Tools files, as Python.

CPN ML's lists are tuples in tcpn and its functions take one argument (a tuple for
several): the translation of ``foldl f b l`` calls :func:`ml_foldl` with ``f`` a Python
function of one argument, the pair ``(x, acc)``, as SML's ``foldl`` passes it. A datatype's
values (``datatype t = A | B of int``, CPN Tools' ``union`` colour sets, SML's ``option``)
are ``"A"`` for a constructor without a value and ``("B", 3)`` for ``B 3``: ``NONE`` is
``"NONE"``, ``SOME x`` is ``("SOME", x)``.

The folds run as Python loops (a list of any length, no recursion); ``List.tabulate`` makes
at most ``limits().list_length`` elements, past which it stops with an error naming the
limit before building anything (in SML a huge count runs out of memory).

>>> ml_foldl(lambda p: p[0] - p[1], 0, (1, 2, 3))  # 3 - (2 - (1 - 0))
2
>>> ml_foldr(lambda p: p[0] - p[1], 0, (1, 2, 3))  # 1 - (2 - (3 - 0))
2
>>> ml_tabulate(3, lambda i: i * i)
(0, 1, 4)
>>> ml_valof(("SOME", 4))
4
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tcpn.limits import limit_problem, limits
from tcpn.petrinets.exchange.ml_exceptions import ListLimitError, ml_raise

__all__ = ["LIBRARY_FUNCTIONS", "ListLimitError", "ml_find", "ml_foldl", "ml_foldr",
           "ml_option_map", "ml_tabulate", "ml_valof"]


def ml_foldl(function: Callable[[Any], Any], initial: Any, items: Sequence[Any]) -> Any:
    """SML's ``foldl f b [x1, ..., xn]``: ``f (xn, ... f (x2, f (x1, b)))``."""
    value = initial
    for item in items:
        value = function((item, value))
    return value


def ml_foldr(function: Callable[[Any], Any], initial: Any, items: Sequence[Any]) -> Any:
    """SML's ``foldr f b [x1, ..., xn]``: ``f (x1, f (x2, ... f (xn, b)))``."""
    value = initial
    for item in reversed(items):
        value = function((item, value))
    return value


def ml_tabulate(count: int, function: Callable[[int], Any]) -> tuple[Any, ...]:
    """SML's ``List.tabulate (n, f)``: ``(f 0, ..., f (n-1))``; ``Size`` when ``n < 0``."""
    if count < 0:
        ml_raise("Size")
    bound = limits().list_length
    if count > bound:
        raise ListLimitError(f"List.tabulate of {count} elements: "
                             f"{limit_problem('list_length', count)}")
    return tuple(function(i) for i in range(count))


def ml_find(predicate: Callable[[Any], bool], items: Sequence[Any]) -> Any:
    """SML's ``List.find p l``: ``SOME x`` for the first ``x`` of ``l`` with ``p x``, else
    ``NONE``."""
    for item in items:
        if predicate(item):
            return ("SOME", item)
    return "NONE"


def ml_option_map(function: Callable[[Any], Any], option: Any) -> Any:
    """SML's ``Option.map f x``: ``SOME (f v)`` for ``SOME v``, ``NONE`` for ``NONE``."""
    return "NONE" if option == "NONE" else ("SOME", function(option[1]))


def ml_valof(option: Any) -> Any:
    """SML's ``Option.valOf``: ``x`` of ``SOME x``; ``NONE`` raises ``Option``."""
    if option == "NONE":
        ml_raise("Option")
    return option[1]


#: The names the translation calls, as declared on an imported net.
LIBRARY_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "ml_foldl": ml_foldl, "ml_foldr": ml_foldr, "ml_tabulate": ml_tabulate,
    "ml_valof": ml_valof, "ml_find": ml_find, "ml_option_map": ml_option_map,
}
