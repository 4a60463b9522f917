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

import itertools
import math
import re
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tcpn.limits import limit_problem, limits
from tcpn.petrinets.exchange.ml_exceptions import (
    PYTHON_FRAMES,
    CallDepthError,
    ListLimitError,
    ml_raise,
)

__all__ = [
    "LIBRARY_FUNCTIONS",
    "ListLimitError",
    "Shape",
    "ml_bool_from_string",
    "ml_char_contains",
    "ml_char_not_contains",
    "ml_col",
    "ml_concat_with",
    "ml_drop",
    "ml_extract",
    "ml_fields",
    "ml_find",
    "ml_foldl",
    "ml_foldr",
    "ml_get_item",
    "ml_hd",
    "ml_int_div",
    "ml_int_from_string",
    "ml_int_mod",
    "ml_int_string",
    "ml_intersect",
    "ml_intinf_to_real",
    "ml_is_alpha",
    "ml_is_alpha_num",
    "ml_is_digit",
    "ml_is_lower",
    "ml_is_prefix",
    "ml_is_space",
    "ml_is_substring",
    "ml_is_suffix",
    "ml_is_upper",
    "ml_last",
    "ml_legal",
    "ml_lt",
    "ml_map_partial",
    "ml_merge_sort",
    "ml_mkstr",
    "ml_ms_minus",
    "ml_mult",
    "ml_nth",
    "ml_option_map",
    "ml_ord",
    "ml_pair_all",
    "ml_pair_app",
    "ml_pair_exists",
    "ml_pair_foldl",
    "ml_pair_foldr",
    "ml_pair_map",
    "ml_pair_unzip",
    "ml_pair_zip",
    "ml_partition",
    "ml_quot",
    "ml_real_string",
    "ml_real_to_intinf",
    "ml_rem",
    "ml_rev_append",
    "ml_self_apply",
    "ml_set_field",
    "ml_sort_lt",
    "ml_sorted",
    "ml_string_map",
    "ml_string_translate",
    "ml_sub",
    "ml_substring",
    "ml_tabulate",
    "ml_take",
    "ml_tl",
    "ml_tokens",
    "ml_unique_sort",
    "ml_valof",
]


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


def ml_partition(predicate: Callable[[Any], bool], items: Sequence[Any]) -> tuple[Any, Any]:
    """SML's ``List.partition p l``: ``(pos, neg)``, the elements with and without ``p``,
    each in the order of ``l``."""
    verdicts = [(item, bool(predicate(item))) for item in items]
    return (tuple(x for x, keep in verdicts if keep), tuple(x for x, keep in verdicts
                                                            if not keep))


def ml_map_partial(function: Callable[[Any], Any], items: Sequence[Any]) -> tuple[Any, ...]:
    """SML's ``List.mapPartial f l``: the ``v`` of every ``f x = SOME v``, in order."""
    results = (function(item) for item in items)
    return tuple(r[1] for r in results if r != "NONE")


def ml_get_item(items: Sequence[Any]) -> Any:
    """SML's ``List.getItem l``: ``SOME (hd l, tl l)``, ``NONE`` for ``[]``."""
    return ("SOME", (items[0], tuple(items[1:]))) if items else "NONE"


def ml_pair_zip(pair: tuple[Sequence[Any], Sequence[Any]]) -> tuple[Any, ...]:
    """SML's ``ListPair.zip (l1, l2)``: the pairs, as long as the shorter list."""
    return tuple(zip(pair[0], pair[1], strict=False))


def ml_pair_unzip(items: Sequence[tuple[Any, Any]]) -> tuple[Any, Any]:
    """SML's ``ListPair.unzip l``: the list of first components and that of second ones."""
    return tuple(a for a, _ in items), tuple(b for _, b in items)


def ml_pair_map(function: Callable[[Any], Any], pair: tuple[Sequence[Any], Sequence[Any]]
                ) -> tuple[Any, ...]:
    """SML's ``ListPair.map f (l1, l2)``: ``f (a, b)`` for each pair, in order."""
    return tuple(function(p) for p in ml_pair_zip(pair))


def ml_pair_app(function: Callable[[Any], Any], pair: tuple[Sequence[Any], Sequence[Any]]
                ) -> tuple[()]:
    """SML's ``ListPair.app f (l1, l2)``: ``f (a, b)`` for its effects, in order; ``()``."""
    for p in ml_pair_zip(pair):
        function(p)
    return ()


def ml_pair_all(predicate: Callable[[Any], bool],
                pair: tuple[Sequence[Any], Sequence[Any]]) -> bool:
    """SML's ``ListPair.all p (l1, l2)``: ``p (a, b)`` for every pair (the longer list's
    excess ignored), stopping at the first false."""
    return all(predicate(p) for p in ml_pair_zip(pair))


def ml_pair_exists(predicate: Callable[[Any], bool],
                   pair: tuple[Sequence[Any], Sequence[Any]]) -> bool:
    """SML's ``ListPair.exists p (l1, l2)``: ``p (a, b)`` for some pair, from the left."""
    return any(predicate(p) for p in ml_pair_zip(pair))


def ml_pair_foldl(function: Callable[[Any], Any], initial: Any,
                  pair: tuple[Sequence[Any], Sequence[Any]]) -> Any:
    """SML's ``ListPair.foldl f b (l1, l2)``: ``f (an, bn, ... f (a1, b1, b))``."""
    value = initial
    for a, b in ml_pair_zip(pair):
        value = function((a, b, value))
    return value


def ml_pair_foldr(function: Callable[[Any], Any], initial: Any,
                  pair: tuple[Sequence[Any], Sequence[Any]]) -> Any:
    """SML's ``ListPair.foldr f b (l1, l2)``: ``f (a1, b1, ... f (an, bn, b))``."""
    value = initial
    for a, b in reversed(ml_pair_zip(pair)):
        value = function((a, b, value))
    return value


def ml_int_string(value: int) -> str:
    """SML's ``Int.toString``: ``~`` for the minus sign."""
    return str(value).replace("-", "~")


def ml_real_string(value: float) -> str:
    """SML/NJ's ``Real.toString``: 12 significant digits (``%.12g``), ``~`` for minus,
    ``E`` for the exponent, and ``.0`` on a whole number without one (``1.0``, ``1E20``,
    ``1.5E~07``, ``~0.5``)."""
    if value != value:
        return "nan"
    if value in (math.inf, -math.inf):
        return "inf" if value > 0 else "~inf"
    text = f"{value:.12g}".replace("e+", "E").replace("e-", "E~").replace("-", "~")
    return text if "." in text or "E" in text else text + ".0"


def ml_int_from_string(text: str) -> Any:
    """SML's ``Int.fromString``: ``SOME n`` for the integer at the start of ``text`` (after
    white space, a sign ``+``, ``~`` or ``-``), ``NONE`` when there is none."""
    match = re.match(r"\s*([+~-]?)(\d+)", text)
    if match is None:
        return "NONE"
    number = int(match.group(2))
    return ("SOME", -number if match.group(1) in ("~", "-") else number)


def ml_tokens(is_delimiter: Callable[[str], bool], text: str) -> tuple[str, ...]:
    """SML's ``String.tokens p s``: the non-empty runs of ``s`` between characters ``c``
    with ``p c`` (characters are one-character strings)."""
    return tuple(t for t in ml_fields(is_delimiter, text) if t)


def ml_fields(is_delimiter: Callable[[str], bool], text: str) -> tuple[str, ...]:
    """SML's ``String.fields p s``: the runs between delimiters, empty ones included."""
    parts: list[str] = []
    current: list[str] = []
    for char in text:
        if is_delimiter(char):
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return tuple(parts)


def ml_is_digit(char: str) -> bool:
    """SML's ``Char.isDigit``: an ASCII decimal digit."""
    return "0" <= char <= "9"


def ml_is_alpha(char: str) -> bool:
    """SML's ``Char.isAlpha``: an ASCII letter."""
    return "a" <= char.lower() <= "z"


def ml_is_space(char: str) -> bool:
    """SML's ``Char.isSpace``: space, tab, newline, vertical tab, form feed, return."""
    return char in " \t\n\v\f\r"


def ml_sub(pair: tuple[str, int]) -> str:
    """SML's ``String.sub (s, i)``: the character at ``i``; ``Subscript`` outside."""
    text, index = pair
    if not 0 <= index < len(text):
        ml_raise("Subscript")
    return text[index]


def ml_char_contains(text: str, char: str) -> bool:
    """SML's ``Char.contains s c``: whether ``c`` occurs in ``s``."""
    return char in text


def ml_char_not_contains(text: str, char: str) -> bool:
    """SML's ``Char.notContains s c``: whether ``c`` does not occur in ``s``."""
    return char not in text


def ml_hd(items: Sequence[Any]) -> Any:
    """SML's ``hd l``: the first element; ``Empty`` on ``[]``."""
    if len(items) == 0:
        ml_raise("Empty")
    return items[0]


def ml_tl(items: Sequence[Any]) -> Any:
    """SML's ``tl l``: all but the first element; ``Empty`` on ``[]``."""
    if len(items) == 0:
        ml_raise("Empty")
    return items[1:]


def ml_last(items: Sequence[Any]) -> Any:
    """SML's ``List.last l``: the last element; ``Empty`` on ``[]``."""
    if len(items) == 0:
        ml_raise("Empty")
    return items[-1]


def ml_nth(items: Sequence[Any], index: int) -> Any:
    """SML's ``List.nth (l, i)``: the element at ``i`` (from 0); ``Subscript`` when
    ``i < 0`` or ``i >= length l`` (never Python's count from the end)."""
    if not 0 <= index < len(items):
        ml_raise("Subscript")
    return items[index]


def ml_take(items: Sequence[Any], count: int) -> Any:
    """SML's ``List.take (l, n)``: the first ``n`` elements; ``Subscript`` when ``n < 0``
    or ``n > length l``."""
    if not 0 <= count <= len(items):
        ml_raise("Subscript")
    return items[:count]


def ml_drop(items: Sequence[Any], count: int) -> Any:
    """SML's ``List.drop (l, n)``: what follows the first ``n`` elements; ``Subscript``
    when ``n < 0`` or ``n > length l``."""
    if not 0 <= count <= len(items):
        ml_raise("Subscript")
    return items[count:]


def ml_substring(triple: tuple[str, int, int]) -> str:
    """SML's ``String.substring (s, i, n)``: ``n`` characters from ``i``; ``Subscript``
    when they are not all in ``s``."""
    text, start, count = triple
    if start < 0 or count < 0 or start + count > len(text):
        ml_raise("Subscript")
    return text[start:start + count]


def ml_is_prefix(prefix: str, text: str) -> bool:
    """SML's ``String.isPrefix s1 s2``: whether ``s2`` starts with ``s1``."""
    return text.startswith(prefix)


def ml_is_suffix(suffix: str, text: str) -> bool:
    """SML's ``String.isSuffix s1 s2``: whether ``s2`` ends with ``s1``."""
    return text.endswith(suffix)


def ml_is_substring(part: str, text: str) -> bool:
    """SML's ``String.isSubstring s1 s2``: whether ``s1`` occurs in ``s2`` (the empty
    string occurs in every string, as the Basis defines it; SML/NJ 110.79 says no for
    ``isSubstring "" ""``)."""
    return part in text


def ml_string_map(function: Callable[[str], str], text: str) -> str:
    """SML's ``String.map f s``: ``f`` applied to each character (a one-character string)."""
    return "".join(function(c) for c in text)


def ml_string_translate(function: Callable[[str], str], text: str) -> str:
    """SML's ``String.translate f s``: the strings ``f c`` of the characters, concatenated."""
    return "".join(function(c) for c in text)


def _merge_runs(runs: list[list[Any]], count: int, merge: Callable[[list[Any], list[Any]],
                list[Any]]) -> list[list[Any]]:
    """``mergepairs`` of SML/NJ's ``ListMergeSort``: merge the newest runs while ``count``
    is even (a binary counter of runs; ``runs`` newest first)."""
    while len(runs) > 1 and count % 2 == 0:
        runs[:2] = [merge(runs[1], runs[0])]
        count //= 2
    return runs


def _run_sort(items: Sequence[Any], ascends: Callable[[Any, Any], str],
              merge: Callable[[list[Any], list[Any]], list[Any]]) -> tuple[Any, ...]:
    """SML/NJ's ``ListMergeSort`` (smlnj-lib ``listsort.sml``): the ascending runs of
    ``items`` (``ascends (x, last)`` is ``"more"``, ``"same"`` (dropped) or ``"stop"``),
    merged as they come, the same merges in the same order."""
    if not items:
        return ()
    runs: list[list[Any]] = []
    index, count = 0, 0
    while index < len(items):
        run = [items[index]]
        index += 1
        while index < len(items):
            step = ascends(items[index], run[-1])
            if step == "stop":
                break
            if step == "more":
                run.append(items[index])
            index += 1
        count += 1
        runs = _merge_runs([run, *runs], count, merge)
    while len(runs) > 1:
        runs[:2] = [merge(runs[1], runs[0])]
    return tuple(runs[0])


def ml_merge_sort(greater: Callable[[tuple[Any, Any]], bool],
                  items: Sequence[Any]) -> tuple[Any, ...]:
    """SML/NJ's ``ListMergeSort.sort (op >) l`` (CPN Tools' simulator loads SML/NJ's
    library): ``l`` in ascending order by ``>``, by the smooth merge sort of SML/NJ 110
    up to 2014 (CPN Tools 4's), which keeps elements equal by ``>`` in their order in
    ``l``; SML/NJ's later sort may reverse them, the sorted values being the same.

    >>> ml_merge_sort(lambda p: p[0] > p[1], (3, 1, 2, 1))
    (1, 1, 2, 3)
    """
    def merge(left: list[Any], right: list[Any]) -> list[Any]:
        out, i, j = [], 0, 0
        while i < len(left) and j < len(right):
            if greater((left[i], right[j])):
                out.append(right[j])
                j += 1
            else:
                out.append(left[i])
                i += 1
        return out + left[i:] + right[j:]
    return _run_sort(items, lambda x, last: "more" if greater((x, last)) else "stop", merge)


def ml_unique_sort(compare: Callable[[tuple[Any, Any]], str],
                   items: Sequence[Any]) -> tuple[Any, ...]:
    """SML/NJ's ``ListMergeSort.uniqueSort cmp l``: ``l`` in ascending order by ``cmp``
    (``LESS``, ``EQUAL``, ``GREATER``), one element of each class of equal ones.

    >>> ml_unique_sort(lambda p: "LESS" if p[0] < p[1] else
    ...                ("GREATER" if p[0] > p[1] else "EQUAL"), (3, 1, 3, 2, 1))
    (1, 2, 3)
    """
    def merge(left: list[Any], right: list[Any]) -> list[Any]:
        out, i, j = [], 0, 0
        while i < len(left) and j < len(right):
            order = compare((left[i], right[j]))
            if order == "GREATER":
                out.append(right[j])
                j += 1
            elif order == "EQUAL":
                j += 1
            else:
                out.append(left[i])
                i += 1
        return out + left[i:] + right[j:]
    steps = {"GREATER": "more", "EQUAL": "same"}
    return _run_sort(items, lambda x, last: steps.get(compare((x, last)), "stop"), merge)


def ml_sorted(greater: Callable[[tuple[Any, Any]], bool], items: Sequence[Any]) -> bool:
    """SML/NJ's ``ListMergeSort.sorted (op >) l``: whether no element is ``>`` the next."""
    return not any(greater(pair) for pair in itertools.pairwise(items))


def ml_concat_with(separator: str, parts: Sequence[str]) -> str:
    """SML's ``String.concatWith sep l``: the strings of ``l`` with ``sep`` between."""
    return separator.join(parts)


def ml_extract(triple: tuple[str, int, Any]) -> str:
    """SML's ``String.extract (s, i, NONE)``: ``s`` from ``i``; ``SOME n``: ``n``
    characters from ``i``; ``Subscript`` when they are not all in ``s``."""
    text, start, count = triple
    if count == "NONE":
        if not 0 <= start <= len(text):
            ml_raise("Subscript")
        return text[start:]
    return ml_substring((text, start, count[1]))


def ml_is_upper(char: str) -> bool:
    """SML's ``Char.isUpper``: an ASCII upper-case letter."""
    return "A" <= char <= "Z"


def ml_is_lower(char: str) -> bool:
    """SML's ``Char.isLower``: an ASCII lower-case letter."""
    return "a" <= char <= "z"


def ml_is_alpha_num(char: str) -> bool:
    """SML's ``Char.isAlphaNum``: an ASCII letter or decimal digit."""
    return ml_is_alpha(char) or ml_is_digit(char)


def ml_bool_from_string(text: str) -> Any:
    """SML's ``Bool.fromString``: ``SOME b`` for ``true`` or ``false`` at the start of
    ``text`` (after white space), ``NONE`` otherwise."""
    rest = text.lstrip()
    for word, value in (("true", True), ("false", False)):
        if rest.startswith(word):
            return ("SOME", value)
    return "NONE"


def ml_rev_append(pair: tuple[Sequence[Any], Sequence[Any]]) -> tuple[Any, ...]:
    """SML's ``List.revAppend (l1, l2)``: ``l1`` reversed, then ``l2``."""
    first, second = pair
    return tuple(reversed(first)) + tuple(second)


#: The most digits after the point :func:`ml_real_to_intinf` writes (SML's strings stop
#: at ``String.maxSize``; a model asks for a few, this bounds what a file can ask for).
_MAX_PRECISION = 10_000
#: The prefix SML's ``Real.fromString`` reads: a sign, digits with a fraction, an exponent.
_REAL_PREFIX = re.compile(r"\s*([~+-]?)(\d+(?:\.\d+)?|\.\d+)(?:[eE]([~+-]?\d+))?")


def ml_real_to_intinf(precision: int, value: float) -> int:
    """CPN Tools' ``RealToIntInf p r`` (its simulator's time library): ``r`` written with
    ``p`` digits after the point (``Real.fmt (FIX (SOME p))``, rounded to nearest) and the
    point taken out, read as an integer: ``RealToIntInf 3 12.3456`` is 12346;
    ``RealToIntInf 0 2.5`` is 2 (the tie to even, as SML/NJ writes it).
    ``RealToIntInfExn`` when ``p`` is negative."""
    if precision < 0:
        ml_raise("RealToIntInfExn")
    if precision > _MAX_PRECISION:
        ml_raise("Size")
    if not math.isfinite(value):
        ml_raise("Fail")  # CPN Tools: "Internal error in RealToIntInf"
    return int(format(value, f".{precision}f").replace(".", ""))


def ml_intinf_to_real(precision: int, value: int) -> float:
    """CPN Tools' ``IntInfToReal p ii``: the digits of ``ii`` with a point put ``p`` of
    them from the right (zeros added in front as needed), read by ``Real.fromString``:
    ``IntInfToReal 2 12345`` is 123.45. As CPN Tools' own code does it: a negative
    ``ii`` with no more than ``p`` digits gives ``0.0...~d``, whose prefix reads 0.0.
    ``IntInfToRealExn`` when ``p`` is negative."""
    if precision < 0:
        ml_raise("IntInfToRealExn")
    if precision > _MAX_PRECISION:
        ml_raise("Size")
    chars = list(reversed(str(value).replace("-", "~")))
    # CPN Tools' indot, on the reversed digits: ``precision`` of them (zeros when they
    # run out), the point, then the rest (a 0 when none is left)
    fraction = chars[:precision] + ["0"] * (precision - len(chars[:precision]))
    whole = chars[precision:] or ["0"]
    text = "".join(reversed([*fraction, ".", *whole]))
    match = _REAL_PREFIX.match(text)
    if match is None:
        return float(ml_raise("IntInfToRealExn"))
    sign, digits, exponent = match.groups()
    number = float(digits + (f"e{exponent.replace('~', '-')}" if exponent else ""))
    return -number if sign in ("~", "-") else number


def ml_self_apply(function: Callable[..., Any], *args: Any) -> Any:
    """A recursive function the import expands where it is called (it draws at random or
    reads the clock): ``function(function, *args)``, the function given itself. SML runs
    its tail calls in constant stack (``wait (m - 1) (d + 1)`` once a unit of m): here
    with room for ``PYTHON_FRAMES`` Python frames, past which it stops with
    :class:`CallDepthError` rather than Python's own recursion error; a curried one's
    rest, applied later, gets the same room."""
    return _with_room(lambda: function(function, *args))


class _Rest:
    """The rest of a curried function :func:`ml_self_apply` expanded: applied with the
    same room on Python's stack (its recursion runs there)."""

    __slots__ = ("rest",)

    def __init__(self, rest: Callable[..., Any]):
        self.rest = rest

    def __call__(self, *args: Any) -> Any:
        return _with_room(lambda: self.rest(*args))


def _with_room(run: Callable[[], Any]) -> Any:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, PYTHON_FRAMES))
    try:
        value = run()
    except RecursionError:
        raise CallDepthError(f"a recursive function expanded where it is called went past "
                             f"{PYTHON_FRAMES} Python frames (limits: call_depth)") from None
    finally:
        sys.setrecursionlimit(before)
    return _Rest(value) if isinstance(value, types.FunctionType) else value


def ml_quot(pair: tuple[int, int]) -> int:
    """SML's ``Int.quot (a, b)``: ``a / b`` rounded towards zero; ``Div`` when ``b`` is 0."""
    a, b = pair
    if b == 0:
        ml_raise("Div")
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def ml_rem(pair: tuple[int, int]) -> int:
    """SML's ``Int.rem (a, b)``: ``a - b * Int.quot (a, b)`` (the sign of ``a``)."""
    a, b = pair
    return a - b * ml_quot(pair)


def ml_int_div(pair: tuple[int, int]) -> int:
    """SML's ``Int.div (a, b)``: ``a div b`` (rounded down); ``Div`` when ``b`` is 0."""
    a, b = pair
    if b == 0:
        ml_raise("Div")
    return a // b


def ml_int_mod(pair: tuple[int, int]) -> int:
    """SML's ``Int.mod (a, b)``: ``a mod b`` (the sign of ``b``); ``Div`` when ``b`` is 0."""
    a, b = pair
    if b == 0:
        ml_raise("Div")
    return a % b


def ml_intersect(left: Sequence[Any], right: Sequence[Any]) -> tuple[Any, ...]:
    """CPN Tools' list function ``intersect xs ys`` (cpntools.org): the elements of
    ``xs`` found in ``ys``, each taking one occurrence out of ``ys``.

    >>> ml_intersect((1, 2, 3, 2), (2, 3, 4))
    (2, 3)
    """
    rest, kept = list(right), []
    for item in left:
        if item in rest:
            rest.remove(item)
            kept.append(item)
    return tuple(kept)


def ml_sort_lt(less: Callable[[tuple[Any, Any]], bool],
               items: Sequence[Any]) -> tuple[Any, ...]:
    """CPN Tools' list function ``sort lt l``: ``l`` in ascending order by the less-than
    function ``lt`` (a colour set's ``CS.lt``, say)."""
    return ml_merge_sort(lambda pair: less((pair[1], pair[0])), items)


#: The colour-set kinds ``CS.lt`` orders (ml_lt).
ORDERED_KINDS = frozenset({"int", "index", "real", "string", "bool", "unit", "enum",
                           "product"})


def lt_orders(shape: Shape) -> bool:
    """Whether :func:`ml_lt` orders a colour set of ``shape`` (its components' too)."""
    if shape[0] == "product":
        return all(lt_orders(part) for part in shape[1])
    return shape[0] in ORDERED_KINDS


def ml_lt(name: str, shape: Shape, pair: tuple[Any, Any]) -> bool:
    """CPN Tools' ``CS.lt (a, b)``: whether colour ``a`` comes before ``b`` in the colour
    set's order (cpntools.org, colour sets: the usual order of integers, reals and strings,
    false before true, an enumeration's or index's values in their declared order, and
    products lexicographically, component by component).

    >>> ml_lt("P", ("product", (("int", None, None), ("enum", ("b", "a")))), ((1, "b"), (1, "a")))
    True
    """
    a, b = pair
    kind = shape[0]
    if kind == "enum":
        return shape[1].index(a) < shape[1].index(b)
    if kind == "unit":
        return False
    if kind == "product":
        for part, x, y in zip(shape[1], a, b, strict=True):
            if ml_lt(name, part, (x, y)):
                return True
            if ml_lt(name, part, (y, x)):
                return False
        return False
    if kind not in ORDERED_KINDS:
        raise ValueError(f"{name}.lt: colour set kind {kind!r}")
    return bool(a < b)


def ml_ms_minus(left: Sequence[Any], right: Sequence[Any]) -> tuple[Any, ...]:
    """CPN Tools' ``ms1 -- ms2`` (its simulator's ``ms.sml``; multisets are lists): ``ms1``
    with one occurrence of each element of ``ms2`` taken out, the first one from the
    left; ``Subtract`` when ``ms2`` is not contained in ``ms1``."""
    rest = list(left)
    for item in right:
        for index, candidate in enumerate(rest):
            if candidate == item:
                del rest[index]
                break
        else:
            ml_raise("Subtract")
    return tuple(rest)


def ml_mult(multisets: Sequence[Sequence[Any]]) -> tuple[Any, ...]:
    """CPN Tools' ``CS.mult (ms1, ..., msn)`` of a product colour set: the multiset of
    every ``(x1, ..., xn)``, ``xi`` from ``msi`` (with its multiplicity), the first
    component outermost."""
    return tuple(itertools.product(*multisets))


#: A colour set's shape, a Python literal (:func:`colour_shape`): ("int", low, high),
#: ("real",), ("string",), ("bool",), ("unit",), ("enum", values), ("index", constructor,
#: low, high), ("product", shapes), ("record", ((field, shape), ...)), ("list", shape,
#: max_length), ("union", ((constructor, shape or None), ...)).
Shape = tuple[Any, ...]


def ml_mkstr(name: str, shape: Shape, value: Any) -> str:
    """CPN Tools' ``CS.mkstr c`` for colour set ``name`` of ``shape`` (its simulator's
    ``cs.sml``): ints in parentheses when negative (``(~3)``), strings quoted, products
    ``(a,b)``, records ``{f=a,g=b}``, lists ``[a,b]``, union values ``C(v)``, index
    values ``ph(2)``."""
    kind = shape[0]
    if kind == "int":  # a time colour set's value in an integer-time net may be a float
        value = int(value)
        return f"({ml_int_string(value)})" if value < 0 else str(value)
    if kind == "real":
        return ml_real_string(value)
    if kind == "string":
        return f'"{value}"'
    if kind == "bool":
        return "true" if value else "false"
    if kind == "unit":
        return "()"
    if kind == "enum":
        return str(value)
    if kind == "index":
        return f"{shape[1]}({value})"
    if kind == "product":
        return "(" + ",".join(ml_mkstr(name, s, v) for s, v in zip(shape[1], value,
                                                                    strict=True)) + ")"
    if kind == "record":
        return "{" + ",".join(f"{f}={ml_mkstr(name, s, getattr(value, f))}"
                              for f, s in shape[1]) + "}"
    if kind == "list":
        return "[" + ",".join(ml_mkstr(name, shape[1], v) for v in value) + "]"
    if kind == "union":
        parts = dict(shape[1])
        if isinstance(value, str):
            return value
        return f"{value[0]}({ml_mkstr(name, parts[value[0]], value[1])})"
    raise ValueError(f"{name}.mkstr: colour set kind {kind!r}")


def ml_legal(name: str, shape: Shape, value: Any) -> bool:
    """CPN Tools' ``CS.legal v``: whether ``v`` is within ``name``'s restrictions (ranges,
    a list's length, the components')."""
    kind = shape[0]
    if kind in ("int", "index"):
        low, high = shape[-2], shape[-1]
        return (low is None or low <= value) and (high is None or value <= high)
    if kind == "enum":
        return value in shape[1]
    if kind == "product":
        return all(ml_legal(name, s, v) for s, v in zip(shape[1], value, strict=True))
    if kind == "record":
        return all(ml_legal(name, s, getattr(value, f)) for f, s in shape[1])
    if kind == "list":
        return (shape[2] is None or len(value) <= shape[2]) and all(
            ml_legal(name, shape[1], v) for v in value)
    if kind == "union":
        parts = dict(shape[1])
        return isinstance(value, str) or parts.get(value[0]) is None or ml_legal(
            name, parts[value[0]], value[1])
    return True


def ml_set_field(name: str, shape: Shape, label: str, record: Any, value: Any) -> Any:
    """CPN Tools' ``CS.set_f r v`` of a record colour set: ``r`` with field ``f`` made
    ``v``; a ``v`` outside the field's colour set raises (CPN Tools: "illegal")."""
    if not ml_legal(name, dict(shape[1])[label], value):
        raise ValueError(f"{name}.set_{label}: {value!r} is not a legal value of the field")
    return record._replace(**{label: value})


def ml_ord(name: str, members: Sequence[Any], value: Any) -> int:
    """CPN Tools' ``CS.ord c`` of a small colour set: ``c``'s position in ``CS.all()``,
    from 0; a value outside raises (CPN Tools: "out of range")."""
    for position, member in enumerate(members):
        if member == value:
            return position
    raise IndexError(f"{name}.ord: {value!r} is not a member")


def ml_col(name: str, members: Sequence[Any], position: int) -> Any:
    """CPN Tools' ``CS.col i`` of a small colour set: the member at position ``i`` (from
    0); a position outside raises (CPN Tools: "out of range")."""
    if not 0 <= position < len(members):
        raise IndexError(f"{name}.col: position {position} is out of range")
    return members[position]


#: The names the translation calls, as declared on an imported net.
LIBRARY_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "ml_foldl": ml_foldl, "ml_foldr": ml_foldr, "ml_tabulate": ml_tabulate,
    "ml_valof": ml_valof, "ml_find": ml_find, "ml_option_map": ml_option_map,
    "ml_partition": ml_partition, "ml_map_partial": ml_map_partial,
    "ml_get_item": ml_get_item, "ml_pair_zip": ml_pair_zip, "ml_pair_unzip": ml_pair_unzip,
    "ml_pair_map": ml_pair_map, "ml_pair_app": ml_pair_app, "ml_pair_all": ml_pair_all,
    "ml_pair_exists": ml_pair_exists, "ml_pair_foldl": ml_pair_foldl,
    "ml_pair_foldr": ml_pair_foldr, "ml_int_string": ml_int_string,
    "ml_real_string": ml_real_string, "ml_int_from_string": ml_int_from_string,
    "ml_mkstr": ml_mkstr, "ml_legal": ml_legal, "ml_ord": ml_ord, "ml_col": ml_col,
    "ml_tokens": ml_tokens, "ml_fields": ml_fields, "ml_is_digit": ml_is_digit,
    "ml_is_alpha": ml_is_alpha, "ml_is_space": ml_is_space, "ml_sub": ml_sub,
    "ml_substring": ml_substring, "ml_is_prefix": ml_is_prefix, "ml_is_suffix": ml_is_suffix,
    "ml_ms_minus": ml_ms_minus, "ml_mult": ml_mult, "ml_is_substring": ml_is_substring,
    "ml_string_map": ml_string_map, "ml_string_translate": ml_string_translate,
    "ml_merge_sort": ml_merge_sort, "ml_unique_sort": ml_unique_sort, "ml_sorted": ml_sorted,
    "ml_sort_lt": ml_sort_lt, "ml_lt": ml_lt, "ml_intersect": ml_intersect,
    "ml_concat_with": ml_concat_with, "ml_extract": ml_extract, "ml_is_upper": ml_is_upper,
    "ml_is_lower": ml_is_lower, "ml_is_alpha_num": ml_is_alpha_num,
    "ml_bool_from_string": ml_bool_from_string, "ml_rev_append": ml_rev_append,
    "ml_self_apply": ml_self_apply, "ml_real_to_intinf": ml_real_to_intinf,
    "ml_intinf_to_real": ml_intinf_to_real,
    "ml_quot": ml_quot, "ml_rem": ml_rem, "ml_int_div": ml_int_div, "ml_int_mod": ml_int_mod,
    "ml_char_contains": ml_char_contains, "ml_char_not_contains": ml_char_not_contains,
    "ml_set_field": ml_set_field, "ml_hd": ml_hd, "ml_tl": ml_tl, "ml_last": ml_last,
    "ml_nth": ml_nth, "ml_take": ml_take, "ml_drop": ml_drop,
}
