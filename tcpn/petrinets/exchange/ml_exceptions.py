"""SML's exceptions for CPN ML read from a file: ``raise E`` and ``e handle p => e'``.

An imported ``raise E`` (``raise Fail "msg"``) raises :class:`MLRaise` naming ``E``;
``e handle E => a | _ => b`` evaluates ``e`` and, when it raises, the first rule whose
name matches: a name matches an :class:`MLRaise` of that name or the Python error SML's
basis exception of that name becomes in the translation (``Empty``/``Subscript``: an
index out of range, ``Div``: a division by zero, ``Match``: no rule matched, whose
translation raises ``ValueError``); ``_`` or a variable matches any. An exception no rule
matches goes on. The evaluation budget of an import (``import_evaluation_ms``), a
loop past ``while_iterations``, a ``List.tabulate`` past ``list_length``, a recursion past
``call_depth``, an evaluation past ``evaluation_steps`` and memory exhaustion are never
caught: a handler must not keep a loop past its bounds.

>>> ml_handle(lambda: ml_raise("Full"), (("Full", lambda: 0),))
0
>>> ml_handle(lambda: (1,)[3], (("Empty", lambda: -1), ("_", lambda: -2)))
-1
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tcpn.errors import InputError
from tcpn.petrinets.cells import LoopLimitError
from tcpn.petrinets.ml_work import WorkLimitError
from tcpn.petrinets.restricted import EvaluationBudgetError

__all__ = ["EXCEPTION_FUNCTIONS", "CallDepthError", "ListLimitError", "MLRaise", "ml_handle",
           "ml_raise"]

#: SML basis exceptions and the Python errors their cases become in the translation.
_BASIS_ERRORS: Mapping[str, tuple[type[Exception], ...]] = {
    "Empty": (IndexError,), "Subscript": (IndexError,), "Div": (ZeroDivisionError,),
    "Match": (ValueError,), "Overflow": (OverflowError,),
}


class ListLimitError(InputError):
    """``List.tabulate`` asked for more elements than ``list_length``; an SML ``handle``
    never catches it (it is tcpn's bound, not an exception of the model)."""


#: Python frames allowed while an imported net's functions run: enough for ``call_depth``
#: nested calls of a few frames each, few enough that the interpreter's own stack never
#: overflows (the process would die instead of raising).
PYTHON_FRAMES = 8_000


class CallDepthError(InputError):
    """Nested calls of an imported net's functions went past the limit ``call_depth``
    (:class:`~tcpn.petrinets.exchange.functions.DeclaredFunction`); never caught either."""


#: What a handler never catches.
_NEVER_CAUGHT = (EvaluationBudgetError, LoopLimitError, ListLimitError, CallDepthError,
                 WorkLimitError, RecursionError, MemoryError)


class MLRaise(Exception):
    """An SML exception raised by ``raise E``; ``name`` is ``E``."""

    def __init__(self, name: str):
        super().__init__(f"uncaught SML exception {name}")
        self.name = name


def ml_raise(name: str) -> Any:
    """``raise E``: raise :class:`MLRaise` named ``name`` (never returns)."""
    raise MLRaise(name)


def ml_handle(body: Callable[[], Any],
              rules: Sequence[tuple[str, Callable[[], Any]]]) -> Any:
    """``body() handle E1 => r1 | ...``: ``body()``, or the value of the first rule whose
    name (``"_"``: any) matches what it raised."""
    try:
        return body()
    except _NEVER_CAUGHT:
        raise
    except Exception as exc:  # SML's handle: the rules decide what is caught
        for name, handler in rules:
            if name == "_" or (isinstance(exc, MLRaise) and exc.name == name) or (
                    not isinstance(exc, MLRaise) and isinstance(exc, _BASIS_ERRORS.get(
                        name, ()))):
                return handler()
        raise


#: The names the translation calls, as declared on an imported net.
EXCEPTION_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "ml_raise": ml_raise, "ml_handle": ml_handle,
}
