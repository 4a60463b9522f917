"""The work one evaluation of an imported net's CPN ML may do: nested calls, calls and turns.

SML bounds neither: ``fun f x = f x`` runs for ever (a tail call is a jump), and
``fun fib n = if n < 2 then n else fib (n - 1) + fib (n - 2)`` asked for ``fib 60`` makes
2^60 calls without ever nesting deeper than 60. A net read from a file evaluates its
functions in guards, arc inscriptions and code actions at every firing, and its values
at import, so every evaluation is held to two bounds that count work, not time (the
same answer on any machine, loaded or not):

* ``call_depth``: nested calls of the file's functions under way at once;
* ``evaluation_steps``: calls of the file's functions plus turns of its loops (a
  ``while``, a function that calls itself as a loop does) since the outermost of them
  began. Each outermost call starts a new count: a guard that calls a function once per
  token pays for each call apart.

and what it builds is held to ``list_length``: a string, list or tuple a function returns,
a loop carries to its next turn or a reference cell is given (``fun f s = f (s ^ s)``
fills the memory in 40 turns) has at most that many characters or elements, and so
has each component of a tuple of them (:func:`sized`).

Past any, :class:`WorkLimitError` names the function and the limit; an SML ``handle``
never catches it (it is tcpn's bound, not an exception of the model).

>>> from tcpn.limits import using_limits
>>> with using_limits(evaluation_steps=3):
...     begin("f"); begin("g"); turn("g")
...     try:
...         turn("g")
...     except WorkLimitError as exc:
...         print(exc)
...     finally:
...         end(); end()
function g: 4 steps is over the limit evaluation_steps = 3 (raise it with \
--limit evaluation_steps=N, or tcpn.limits.set_limits(evaluation_steps=N))
"""

from __future__ import annotations

from typing import Any

from tcpn.errors import InputError
from tcpn.limits import limit_problem, limits

__all__ = ["WorkLimitError", "begin", "depth", "end", "sized", "turn"]


class WorkLimitError(InputError):
    """An evaluation went past ``evaluation_steps`` (or, for the caller's error,
    ``call_depth``); never caught by a model's ``handle``."""


class _Work:
    """The evaluation under way (one at a time: the engines evaluate one firing at a time)."""

    depth = 0
    steps = 0
    bound = 0


def depth() -> int:
    """How many calls or loops of the file's code are under way (0: none)."""
    return _Work.depth


def begin(where: str) -> None:
    """A call of the file's function (or a loop) named ``where`` starts: one step; the
    outermost starts a new count, reading the limit once. Call it inside the ``try``
    whose ``finally`` calls :func:`end`: the step it counts may be refused."""
    if _Work.depth == 0:
        _Work.steps = 0
        _Work.bound = limits().evaluation_steps
    _Work.depth += 1
    turn(where)


def end() -> None:
    """The call or loop :func:`begin` started is over (also when it raised)."""
    _Work.depth -= 1


def turn(where: str) -> None:
    """One more turn of a loop of ``where`` (or a call): a step, refused past the limit.
    A loop run outside any call :func:`begin` counted (a test's) counts nothing."""
    if _Work.depth == 0:
        return
    _Work.steps += 1
    if _Work.steps > _Work.bound:
        raise WorkLimitError(f"function {where}: "
                             f"{limit_problem('evaluation_steps', _Work.steps)}")


#: Components of a tuple :func:`sized` looks into (a function's arguments, a record):
#: a longer tuple is a list of SML's, measured as a whole.
_COMPONENTS = 64


def sized(where: str, value: Any) -> Any:
    """``value``, refused when it, or a component of it as a tuple, is a string, list or
    tuple longer than ``list_length``."""
    bound = limits().list_length
    parts = (value, *value) if isinstance(value, tuple) and len(value) <= _COMPONENTS \
        else (value,)
    for part in parts:
        if isinstance(part, str | tuple | list) and len(part) > bound:
            unit = "characters" if isinstance(part, str) else "elements"
            raise WorkLimitError(f"function {where}: a value of {len(part):,} {unit} is "
                                 f"over the limit list_length = {bound} (raise it with "
                                 "--limit list_length=N)")
    return value
