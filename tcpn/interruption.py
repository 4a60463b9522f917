"""The interruption a signal handler asked for, kept where it cannot be lost.

A handler for SIGTERM (or SIGINT) raises its exception in the main thread at the next
bytecode, wherever that is. If it lands while a weak-reference callback or a destructor
runs (an import's module-lock callback, seen under load), Python prints "Exception
ignored" and goes on: the command would finish and write its result as if nothing had
happened. The handler therefore also records the interruption here, and the code that
moves a result into place (:mod:`tcpn.outputs`) raises it again first: a result never
appears after its command was told to stop.

>>> request_stop(RuntimeError("told to stop"))  # a handler raises KeyboardInterrupt
>>> honour_stop()
Traceback (most recent call last):
...
RuntimeError: told to stop
>>> request_stop(None); honour_stop()
"""

from __future__ import annotations

__all__ = ["honour_stop", "request_stop"]

#: The interruption asked for, or None.
_REQUESTED: list[BaseException | None] = [None]


def request_stop(interruption: BaseException | None) -> None:
    """Record ``interruption``, the exception a signal handler raises (None: forget it)."""
    _REQUESTED[0] = interruption


def honour_stop() -> None:
    """Raise the interruption asked for, if any (before a result is moved into place)."""
    if _REQUESTED[0] is not None:
        raise _REQUESTED[0]
