"""The restricted evaluator: a net read from a file is data, never code that runs as it likes.

A net's inscriptions are Python expressions. In a net built in Python they are the user's
own code and run as such. In a net read from a file (CPN ML translated by the CPN Tools
importer, the Python inscriptions of a tcpn PNML file) they come from elsewhere, so tcpn
holds them to a restricted subset before it evaluates anything, and evaluates them with a
restricted set of builtins:

* **names**: the net's declarations, its variables, the vetted functions in
  :data:`SAFE_BUILTINS`, CPN Tools' random functions and ``now``; no name that starts with
  ``_`` unless the expression itself binds it (a lambda's parameter, a comprehension's
  variable);
* **attributes**: the fields of the net's record colour sets and the plain data methods
  in :data:`SAFE_METHODS` (``_replace`` is the record update); never an attribute that
  starts with ``_`` otherwise, nor the internals of frames, code, generators and
  tracebacks (:data:`FORBIDDEN_ATTRIBUTES`), whatever the net declares;
* **builtins**: only :data:`SAFE_BUILTINS` (no ``__import__``, ``open``, ``getattr``,
  ``type``, ``eval``...): an expression that names anything else is refused before it
  runs, and the namespace it runs in (:func:`restricted_namespace`) has nothing else.

An expression outside the subset raises :class:`UntrustedCodeError` (an
:class:`~tcpn.errors.InputError`: the CLI's exit 3) naming the element and what it
reached for. ``docs/security.md`` is the threat model these rules serve.

>>> check_expression("len(q) < LIMIT", "guard of send", declared={"q", "LIMIT"})
>>> for text in ("x.__class__", "__import__('os')", "(g for g in ()).gi_frame"):
...     try:
...         check_expression(text, "guard of send", declared={"x"})
...     except UntrustedCodeError as exc:
...         print(str(exc).partition(", which")[0])
guard of send: 'x.__class__' reaches for attribute '__class__'
guard of send: "__import__('os')" reaches for name '__import__'
guard of send: '(g for g in ()).gi_frame' reaches for attribute 'gi_frame'
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import math
import resource
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tcpn.errors import InputError
from tcpn.limits import limits
from tcpn.petrinets.inscriptions import RANDOM_FUNCTIONS, RESERVED_NAMES

if TYPE_CHECKING:
    from tcpn.petrinets.net import PetriNet

__all__ = [
    "FORBIDDEN_ATTRIBUTES",
    "SAFE_BUILTINS",
    "SAFE_METHODS",
    "EvaluationBudgetError",
    "UntrustedCodeError",
    "check_expression",
    "check_net",
    "evaluation_budget",
    "record_fields",
    "restricted_namespace",
]


class UntrustedCodeError(InputError):
    """An expression read from a file reaches outside the restricted subset."""


class EvaluationBudgetError(InputError):
    """Evaluating a value of a file ran past the ``import_evaluation_ms`` or the
    ``import_evaluation_bytes`` limit."""


#: The builtins an expression read from a file may call: pure functions over data. Left out
#: on purpose: anything that reaches objects by name (``getattr``, ``vars``, ``type``,
#: ``globals``), imports, evaluates or compiles code, touches files or the terminal, or
#: builds classes.
SAFE_BUILTINS: Mapping[str, Any] = MappingProxyType({
    name: getattr(builtins, name) for name in (
        "abs", "all", "any", "bool", "chr", "dict", "divmod", "enumerate", "filter", "float",
        "frozenset", "int", "isinstance", "len", "list", "map", "max", "min", "ord", "range",
        "repr", "reversed", "round", "set", "sorted", "str", "sum", "tuple", "zip",
        "ArithmeticError", "IndexError", "KeyError", "ValueError", "ZeroDivisionError",
        "True", "False", "None",
    )
} | {"floor": math.floor, "ceil": math.ceil})

_BUILTINS_DICT = dict(SAFE_BUILTINS)  # what eval takes; no expression can name it

#: Methods of plain data (numbers, strings, tuples, dicts, sets, records) an expression
#: read from a file may call, besides the fields of the net's records. ``_replace`` is a
#: record's update (CPN ML's ``{r with f = e}``), ``throw`` raises SML's ``Match`` in the
#: translation of a pattern match that fails.
SAFE_METHODS = frozenset({
    "_replace", "count", "index", "get", "keys", "values", "items", "fromkeys", "throw",
    "startswith", "endswith", "upper", "lower", "strip", "split", "join", "replace",
    "union", "intersection", "difference", "issubset", "issuperset", "real", "imag",
    "is_integer", "bit_length",
})

#: Attributes never allowed, even as a record's field: they lead from a value to the
#: interpreter (frames and their globals, code objects, generator internals, tracebacks)
#: or format arbitrary attributes by name (``"{0.__class__}".format(x)``).
FORBIDDEN_ATTRIBUTES = frozenset({
    "format", "format_map", "mro",
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
    "cr_frame", "cr_code", "cr_await", "cr_origin", "cr_running", "cr_suspended",
    "ag_frame", "ag_code", "ag_await", "ag_running",
    "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "f_lasti",
    "f_lineno", "tb_frame", "tb_next", "tb_lasti", "tb_lineno",
    "co_code", "co_consts", "co_names", "co_varnames", "co_filename",
    "func_globals", "func_code", "im_func", "im_self",
})

#: Names an expression may use besides its net's declarations and the safe builtins: CPN
#: Tools' random functions (drawn from the simulator's seeded stream) and the clock, as
#: every inscription may (:mod:`~tcpn.petrinets.inscriptions`).
_ALWAYS_NAMES = RANDOM_FUNCTIONS | RESERVED_NAMES
#: The nodes of Python's expression grammar an expression read from a file may hold: no
#: assignment expressions, ``await`` or ``yield``.
_FORBIDDEN_NODES = (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)


def check_expression(source: str | ast.AST, where: str, *,
                     declared: Iterable[str] = (), fields: Iterable[str] = ()) -> None:
    """Refuse ``source`` unless it stays in the restricted subset (see the module docstring).

    ``declared`` are the names the net provides (declarations, variables, functions);
    ``fields`` the field names of its record colour sets. ``where`` names the element.
    """
    if isinstance(source, str):
        text = source
        reaches = _reaches_of_text(source.strip(), where)
    else:
        text = _text(source)
        reaches = _reaches(source)
    if not reaches:
        return
    names = frozenset(declared)
    allowed_attributes = (frozenset(fields) | SAFE_METHODS) - FORBIDDEN_ATTRIBUTES
    for kind, name in reaches:
        if kind == "assignment":
            raise UntrustedCodeError(f"{where}: {text!r} assigns or yields, which a net read "
                                     "from a file may not do")
        if (kind == "attribute" and name not in allowed_attributes) or (
                kind == "name" and _forbidden_name(name, names)) or kind == "keyword":
            raise _reach(where, text, kind, name)


def _reaches_of_text(text: str, where: str) -> tuple[tuple[str, str], ...]:
    try:
        return _parsed_reaches(text)
    except SyntaxError as exc:
        raise UntrustedCodeError(f"{where}: {text!r} does not parse: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise UntrustedCodeError(f"{where}: {text[:80]!r}... is nested too deeply") from None


@functools.lru_cache(maxsize=65536)
def _parsed_reaches(text: str) -> tuple[tuple[str, str], ...]:
    """:func:`_reaches` once per distinct text (a net repeats its inscriptions)."""
    return _reaches(ast.parse(text, mode="eval"))


def _reaches(tree: ast.AST) -> tuple[tuple[str, str], ...]:
    """What ``tree`` reaches for, in the order met: ``(kind, name)`` for every attribute,
    every name it does not bind itself, every keyword argument starting with ``__``, and
    ``("assignment", "")`` for an assignment expression, ``await`` or ``yield``."""
    bound = _bound_names(tree)
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, _FORBIDDEN_NODES):
            found.append(("assignment", ""))
        elif isinstance(node, ast.Attribute):
            found.append(("attribute", node.attr))
        elif isinstance(node, ast.Name) and node.id not in bound:
            found.append(("name", node.id))
        elif isinstance(node, ast.keyword) and node.arg is not None and \
                node.arg.startswith("__"):
            found.append(("keyword", node.arg))
    return tuple(dict.fromkeys(found))


def check_net(net: PetriNet, source: str) -> None:
    """Refuse ``net`` (read from ``source``) unless every expression in it stays in the subset.

    Guards, delays, arc inscriptions, counts and conditions, and the bodies of the
    functions and code actions translated from the file are checked with
    :func:`check_expression`; a transition's code action must be one tcpn restored (a
    translated :class:`~tcpn.petrinets.exchange.functions.CodeAction` or a registered
    component function, see :mod:`tcpn.petrinets.net_functions`).
    """
    from tcpn.petrinets.colours import ColourSet
    from tcpn.petrinets.net_functions import is_restorable

    colours = [p.colour for p in net.places.values()]
    colours += [v for v in net.declarations.values() if isinstance(v, ColourSet)]
    # a record colour set no place uses is declared as its record type (the constructor
    # its declarations call): its fields are the net's too
    fields = record_fields(colours) | frozenset(
        str(f) for v in net.declarations.values() if isinstance(v, type)
        and issubclass(v, tuple) for f in getattr(v, "_fields", ()))
    bad = sorted(f for f in fields if f.startswith("_") or f in FORBIDDEN_ATTRIBUTES)
    if bad:
        raise UntrustedCodeError(f"{source}: record field {bad[0]!r} is a name a net read "
                                 "from a file may not use")
    declared = frozenset(net.declarations)
    for name, value in net.declarations.items():
        _check_value(value, f"{source}: declaration {name}", declared, fields)
    for place in net.places.values():
        _check_value(place.initial_draw, f"{source}: place {place.name}, initial marking",
                     declared, fields)
    names_of: dict[str, frozenset[str]] = {}
    for transition in net.transitions.values():
        where = f"{source}: transition {transition.name}"
        names = names_of[transition.name] = declared | frozenset(
            (*transition.params, *transition.free_variables, *transition.outputs))
        for name, value in transition.params.items():
            _check_value(value, f"{where}, parameter {name}", names, fields)
        for text, what in ((transition.guard, "guard"), (transition.delay, "delay")):
            if isinstance(text, str):
                check_expression(text, f"{where}, {what}", declared=names, fields=fields)
        if transition.action is not None:
            if not is_restorable(transition.action):
                raise UntrustedCodeError(f"{where}: its code action "
                                         f"{transition.action!r} is not one tcpn restores")
            _check_value(transition.action, f"{where}, code action", names, fields)
    for arc in net.arcs:
        names = names_of[arc.transition]
        for text, what in ((arc.inscription, "inscription"), (arc.count, "count"),
                           (arc.when, "condition"), (arc.delay, "delay")):
            if isinstance(text, str):
                check_expression(text, f"{source}: {arc.where}, {what}", declared=names,
                                 fields=fields)


def record_fields(colours: Iterable[Any]) -> frozenset[str]:
    """The field names of every record colour set in ``colours`` or inside them."""
    from tcpn.petrinets.colours import ListSet, ProductSet, RecordSet, UnionSet

    found: set[str] = set()
    todo = list(colours)
    seen: set[int] = set()
    while todo:
        colour = todo.pop()
        if id(colour) in seen:
            continue
        seen.add(id(colour))
        if isinstance(colour, RecordSet):
            found.update(name for name, _ in colour.fields)
            todo.extend(c for _, c in colour.fields)
        elif isinstance(colour, ProductSet):
            todo.extend(colour.components)
        elif isinstance(colour, ListSet):
            todo.append(colour.element)
        elif isinstance(colour, UnionSet):
            todo.extend(c for _, c in colour.fields if c is not None)
    return frozenset(found)


def _check_value(value: Any, where: str, declared: Iterable[str],
                 fields: Iterable[str]) -> None:
    """The translated source of a function or code action declared from a file."""
    body = getattr(value, "restricted_source", None)
    if callable(body):
        for text, names in body():
            check_expression(text, where, declared={*declared, *names}, fields=fields)


def restricted_namespace(scope: Mapping[str, Any]) -> dict[str, Any]:
    """``scope`` as the globals of code read from a file: its builtins are the safe ones.

    >>> eval("open", restricted_namespace({}))
    Traceback (most recent call last):
    ...
    NameError: name 'open' is not defined
    """
    namespace = dict(scope)
    namespace["__builtins__"] = _BUILTINS_DICT
    return namespace


def _reach(where: str, text: str, kind: str, name: str) -> UntrustedCodeError:
    return UntrustedCodeError(f"{where}: {text!r} reaches for {kind} {name!r}, which a net "
                              "read from a file may not use")


def _forbidden_name(name: str, declared: frozenset[str]) -> bool:
    """A name the expression may not read (it does not bind it): one starting with ``_``,
    or a Python builtin outside :data:`SAFE_BUILTINS`, that the net does not declare itself.
    Other names are the net's variables (the compiler refuses those no arc binds)."""
    if name in SAFE_BUILTINS or name in _ALWAYS_NAMES:
        return False
    if name in declared and not name.startswith("__"):
        return False
    return name.startswith("_") or hasattr(builtins, name)


def _bound_names(tree: ast.AST) -> frozenset[str]:
    """Names the expression binds itself: lambda parameters and comprehension variables."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            arguments = node.args
            for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                        *(a for a in (arguments.vararg, arguments.kwarg) if a is not None)):
                bound.add(arg.arg)
        elif isinstance(node, ast.comprehension):
            bound.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    return frozenset(n for n in bound if not n.startswith("__"))


def _text(tree: ast.AST) -> str:
    try:
        return ast.unparse(tree)
    except (ValueError, RecursionError):  # an incomplete tree: name it by its node type
        return f"<{type(tree).__name__}>"


@contextlib.contextmanager
def evaluation_budget(where: str, milliseconds: int | None = None) -> Iterator[None]:
    """Stop the evaluation inside the block after ``milliseconds`` (default: the limit
    ``import_evaluation_ms``), or when it needs more than ``import_evaluation_bytes`` of
    memory, with :class:`EvaluationBudgetError` naming ``where``.

    A ``val`` of a file may loop forever (``fun f x = f x; val v = f 1``); the importer
    must still return. In the main thread a real-time timer interrupts the evaluation; in
    another thread (where signals can't be delivered) a trace function checks the clock.

    >>> def forever():
    ...     while True:
    ...         pass
    >>> with evaluation_budget("val v", milliseconds=50):
    ...     forever()
    Traceback (most recent call last):
    ...
    tcpn.petrinets.restricted.EvaluationBudgetError: val v: evaluating it took over 50 ms, \
the limit import_evaluation_ms (raise it with --limit import_evaluation_ms=N)
    """
    with _address_space_capped(where), _time_capped(where, milliseconds):
        yield


@contextlib.contextmanager
def _address_space_capped(where: str) -> Iterator[None]:
    """Inside the block the process may grow by at most ``import_evaluation_bytes`` of
    address space (``RLIMIT_AS`` lowered to its size now plus that, unless already lower):
    a value that doubles a string 40 times fails its allocation with ``MemoryError``,
    which becomes an :class:`EvaluationBudgetError` naming ``where``, instead of filling
    the machine's memory within the time budget. Only in the main thread (the limit is
    the whole process's: another thread's allocations must not fail for this one), and
    where the process's size can be read (Linux)."""
    size = _address_space_bytes()
    if threading.current_thread() is not threading.main_thread() or size is None:
        yield
        return
    budget = limits().import_evaluation_bytes
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + budget
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    lowered = soft == resource.RLIM_INFINITY or cap < soft
    if lowered:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    except MemoryError:
        raise EvaluationBudgetError(
            f"{where}: evaluating it needed more than {budget:,} bytes, the limit "
            "import_evaluation_bytes (raise it with --limit import_evaluation_bytes=N)"
        ) from None
    finally:
        if lowered:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _address_space_bytes() -> int | None:
    """The process's virtual size now (Linux's ``/proc/self/statm``), or None elsewhere."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * resource.getpagesize()


@contextlib.contextmanager
def _time_capped(where: str, milliseconds: int | None) -> Iterator[None]:
    """Inside the block, at most ``milliseconds`` of evaluation (:func:`evaluation_budget`)."""
    budget_ms = limits().import_evaluation_ms if milliseconds is None else milliseconds
    error = EvaluationBudgetError(
        f"{where}: evaluating it took over {budget_ms} ms, the limit import_evaluation_ms "
        "(raise it with --limit import_evaluation_ms=N)")
    if threading.current_thread() is threading.main_thread() and \
            signal.getitimer(signal.ITIMER_REAL)[0] == 0:
        def expire(_signum: int, _frame: Any) -> None:
            raise error

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, budget_ms / 1000)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    deadline = time.monotonic() + budget_ms / 1000

    def trace(_frame: Any, _event: str, _arg: Any) -> Any:
        if time.monotonic() > deadline:
            raise error
        return trace

    previous_trace = sys.gettrace()
    sys.settrace(trace)
    try:
        yield
    finally:
        sys.settrace(previous_trace)
