"""Callables built from translated CPN ML: declared functions and code actions with their source.

An imported ``fun f (x:INT) = x mod 3 + 1`` becomes a :class:`DeclaredFunction` on the net's
declarations: it calls like a Python function and keeps its parameters and its body as a
Python expression, so the exporter writes it back as CPN ML without reading Python source.
A code segment ``input (x); output (y); action x + 1;`` becomes a :class:`CodeAction`, the
``action`` of a :class:`~tcpn.petrinets.net.Transition`. Both come from a file, so both run
with the restricted builtins (:mod:`~tcpn.petrinets.restricted`), and offer their source to
:func:`~tcpn.petrinets.restricted.check_net`.

>>> scope = {}
>>> delay = DeclaredFunction("delay", ("x",), "x % 3 + 1", scope=scope)
>>> scope["delay"] = delay
>>> delay(4)
2
>>> act = CodeAction(("x",), ("y",), "x + 1", scope=scope)
>>> act(x=2)
{'y': 3}
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Mapping
from typing import Any

import numpy as np

from tcpn.limits import limit_problem, limits
from tcpn.petrinets import ml_work
from tcpn.petrinets.engine.compiler import RandomDraws
from tcpn.petrinets.exchange.loops import LoopTurns, loop_source
from tcpn.petrinets.exchange.ml_exceptions import PYTHON_FRAMES, CallDepthError
from tcpn.petrinets.inscriptions import RANDOM_FUNCTIONS, Inscription
from tcpn.petrinets.restricted import restricted_namespace

__all__ = ["CallDepthError", "CodeAction", "DeclaredFunction", "MLDatatype", "MLLocal"]

#: Python frames allowed while a declared function runs (see ``PYTHON_FRAMES``).
_PYTHON_FRAMES = PYTHON_FRAMES


class DeclaredFunction:
    """A function of the net's declarations whose body is one Python expression.

    ``scope`` is the net's declarations (kept by reference, so the function may call
    itself and functions declared after it). ``param_colours`` names the declared colour
    set of each parameter when the source said it (``fun len (q:Queue)``), and
    ``ml_params`` its CPN ML spelling (``now`` for the Python ``now_``), for export.
    ``ml_source`` is the declaration as the file wrote it: the export writes it back when
    the Python body holds forms it does not translate (curried parameters, clauses over
    datatype constructors, ``foldl``, ``:=``, ``List.find``).
    ``list_arguments`` are the positions of its curried arguments whose ML type is a list
    (its patterns, annotations or body say so), ``list_params`` those of the components
    of its first argument when that is a tuple (``fun f (n, l)``): tcpn's Python holds an
    ML list and an ML tuple alike, so the export writes a value passed there as a list.
    A body that calls the function itself as a loop does (tail calls, list walks) runs
    as a Python loop (:func:`~tcpn.petrinets.exchange.loops.loop_source`), so a long list
    does not exhaust Python's stack; other recursion stays recursion. Every call and every
    turn of such a loop counts against the evaluation's bounds
    (:mod:`~tcpn.petrinets.ml_work`).
    """

    def __init__(self, name: str, params: tuple[str, ...], body: str,
                 scope: Mapping[str, Any] | None = None,
                 param_colours: tuple[str | None, ...] = (),
                 ml_params: tuple[str, ...] = (), ml_source: str | None = None,
                 list_arguments: tuple[int, ...] = (), list_params: tuple[int, ...] = ()):
        self.name = name
        self.ml_source = ml_source
        self.list_arguments = tuple(list_arguments)
        self.list_params = tuple(list_params)
        self.params = tuple(params)
        self.body = body
        self.param_colours = tuple(param_colours) or (None,) * len(self.params)
        self.ml_params = tuple(ml_params) or self.params
        self.scope: Mapping[str, Any] = scope if scope is not None else {}
        Inscription.parse(body, f"body of function {name}")
        self._loop = loop_source(name, self.params, body)
        self._code = compile(f"lambda {', '.join(self.params)}: ({body})" if self._loop is None
                             else self._loop.source, f"<tcpn function {name}>",
                             "eval" if self._loop is None else "exec")
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in self.params]
        )

    @property
    def is_loop(self) -> bool:
        """Whether its self-calls run as a loop
        (:func:`~tcpn.petrinets.exchange.loops.loop_source`)."""
        return self._loop is not None

    def restricted_source(self) -> list[tuple[str, tuple[str, ...]]]:
        """The body and the names it binds (:func:`~tcpn.petrinets.restricted.check_net`)."""
        return [(self.body, self.params)]

    def __call__(self, *args: Any) -> Any:
        """The function's value on ``args``; :class:`CallDepthError` past ``call_depth``
        nested calls (or when Python's stack runs out first), naming the function."""
        return self.guarded(lambda: self._evaluate(args))

    def guarded(self, run: Any) -> Any:
        """``run()`` as one nested call of this function: counted against ``call_depth``,
        with room on Python's stack for that many (the outermost call makes it), and its
        value, when a curried function gives the rest of itself, applied the same way."""
        if ml_work.depth():
            if ml_work.depth() >= limits().call_depth:
                raise self._too_deep(ml_work.depth() + 1)
            return self._nested(run)
        before = sys.getrecursionlimit()
        sys.setrecursionlimit(max(before, _PYTHON_FRAMES))
        try:
            return self._nested(run)
        except RecursionError:
            raise self._too_deep(None) from None
        finally:
            sys.setrecursionlimit(before)

    def _too_deep(self, calls: int | None) -> CallDepthError:
        if calls is not None:
            return CallDepthError(f"function {self.name}: {limit_problem('call_depth', calls)}")
        return CallDepthError(f"function {self.name}: Python's stack ran out under the limit "
                              f"call_depth = {limits().call_depth} (lower it with --limit "
                              "call_depth=N: each call of this recursion takes several "
                              "frames)")

    def _nested(self, run: Any) -> Any:
        try:
            ml_work.begin(self.name)
            value = ml_work.sized(self.name, run())
        finally:
            ml_work.end()
        if isinstance(value, types.FunctionType):
            # a curried function's rest (fun filter p [] = ... | filter p (x::xs) = ...):
            # its recursion runs when that is applied, so each application is a call too
            return CurriedRest(self, value)
        return value

    def _evaluate(self, args: tuple[Any, ...]) -> Any:
        namespace = restricted_namespace(self.scope)
        if self._loop is not None:  # the def was generated from the parsed and checked body
            namespace[self._loop.turn] = LoopTurns(self.name)
            exec(self._code, namespace)
            return namespace[self.name](*args)
        function = eval(self._code, namespace)  # the body was parsed and checked above
        return function(*args)

    def __repr__(self) -> str:
        return f"DeclaredFunction({self.name}({', '.join(self.params)}) = {self.body})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeclaredFunction) and (
            self.name, self.params, self.body, self.param_colours
        ) == (other.name, other.params, other.body, other.param_colours)

    def __hash__(self) -> int:
        return hash((self.name, self.params, self.body))


class CurriedRest:
    """What a curried declared function gives on its first argument: the rest of it,
    whose applications count as calls of the function (see :meth:`DeclaredFunction.
    guarded`): ``filter pred xs`` recurses in them, down a list of any length up to
    ``call_depth``, not in the call ``filter pred``."""

    __slots__ = ("function", "rest")

    def __init__(self, function: DeclaredFunction, rest: types.FunctionType):
        self.function = function
        self.rest = rest

    def __call__(self, *args: Any) -> Any:
        return self.function.guarded(lambda: self.rest(*args))

    def __repr__(self) -> str:
        return f"<{self.function.name} applied to its first argument(s)>"


class CodeAction:
    """A transition's code action: reads ``inputs``, returns a dict giving each of ``outputs``.

    ``body`` is a Python expression over the inputs whose value is the output (one output)
    or a tuple of the outputs in order. When it reads ``now`` or calls CPN Tools' random
    functions, the action asks the simulator for ``now`` and ``rng`` (the transition's
    seeded generator), so runs stay reproducible from their seed.
    """

    def __init__(self, inputs: tuple[str, ...], outputs: tuple[str, ...], body: str,
                 scope: Mapping[str, Any] | None = None):
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.body = body
        self.scope: Mapping[str, Any] = scope if scope is not None else {}
        names = Inscription.parse(body, "code action").names
        self.uses_time = "now" in names
        self.uses_random = bool(names & RANDOM_FUNCTIONS)
        self._code = compile(body, "<tcpn code action>", "eval")
        extra = (["now"] if self.uses_time else []) + (["rng"] if self.uses_random else [])
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY)
             for p in (*self.inputs, *extra)]
        )

    def restricted_source(self) -> list[tuple[str, tuple[str, ...]]]:
        """The body and the names it binds (:func:`~tcpn.petrinets.restricted.check_net`)."""
        return [(self.body, self.inputs)]

    def __call__(self, **values: Any) -> dict[str, Any]:
        env = restricted_namespace(self.scope)
        rng = values.pop("rng", None)
        if isinstance(rng, np.random.Generator):
            draws = RandomDraws(rng)
            env.update({name: getattr(draws, name) for name in RANDOM_FUNCTIONS})
        env.update(values)
        result = eval(self._code, env)  # the body was parsed and checked above
        if len(self.outputs) == 1:
            return {self.outputs[0]: result}
        return dict(zip(self.outputs, result, strict=True))

    def __repr__(self) -> str:
        return f"CodeAction({self.inputs} -> {self.outputs}: {self.body})"


class MLDatatype:
    """A ``datatype`` declaration read from a file, kept as its CPN ML text for export.

    Its values need no declaration in Python (``A`` is ``"A"``, ``B v`` is ``("B", v)``);
    ``constructors`` maps each constructor to whether it carries a value, so the export
    writes ``B(v)`` for ``("B", v)``.

    >>> MLDatatype("shape", "datatype shape = Dot | Box of int;", {"Dot": False, "Box": True})
    MLDatatype(datatype shape = Dot | Box of int;)
    """

    def __init__(self, name: str, text: str, constructors: Mapping[str, bool]):
        self.name = name
        self.text = text
        self.constructors = dict(constructors)

    def __repr__(self) -> str:
        return f"MLDatatype({self.text})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MLDatatype) and (self.name, self.text) == (
            other.name, other.text)

    def __lt__(self, other: object) -> bool:  # declarations are sorted for fingerprints
        return repr(self) < repr(other)

    def __hash__(self) -> int:
        return hash((self.name, self.text))


class MLLocal:
    """A ``local d1 in d2 end`` block read from a file, kept as its CPN ML text for export.

    Its declarations are on the net as top-level ones, those of ``d1`` renamed
    (``area'local1``, Python ``area_local1``) so that only ``d2`` sees them; ``names`` are
    the Python names of all of them, which the export writes as this one text instead
    (a ``datatype`` in ``d1`` has no other form: its constructors are renamed too).
    ``shown`` maps the Python names of ``d2``'s declarations to their names in the file,
    ``constructors`` those of ``d2``'s datatypes to whether they carry a value.

    >>> MLLocal("local val k = 2 in fun f x = x * k end;", ("k_local1", "f"), {"f": "f"})
    MLLocal(local val k = 2 in fun f x = x * k end;)
    """

    def __init__(self, text: str, names: tuple[str, ...], shown: Mapping[str, str],
                 constructors: Mapping[str, bool] | None = None):
        self.text = text
        self.names = tuple(names)
        self.shown = dict(shown)
        self.constructors = dict(constructors or {})

    def __repr__(self) -> str:
        return f"MLLocal({self.text})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MLLocal) and self.text == other.text

    def __lt__(self, other: object) -> bool:  # declarations are sorted for fingerprints
        return repr(self) < repr(other)

    def __hash__(self) -> int:
        return hash(self.text)
