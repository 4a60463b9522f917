"""The timed choice rule: which bindings the next firing is chosen among.

A binding whose tokens are ready at ``ready`` can fire at ``max(ready, floor)``, its time
(``floor``: the clock, or the later time the transition's gate opens). The next firing
happens at the earliest such time; among the bindings that can fire then, only those of
the most urgent priority (the lowest number) are candidates, in the order offered. The
simulator draws one of them, the explorer fires each: both take them from
:func:`candidates`, so what the simulator may do and what the explorer enumerates cannot
drift apart. (The simulator's inlined hot loop repeats this rule for speed;
``tests/test_calendar.py`` replays runs through the simulator's query methods, which call
:func:`candidates`, to keep it in step.)

>>> candidates([(2.0, 1, "a"), (1.0, 2, "b"), (1.0, 1, "c"), (1.0, 1, "d")])
(1.0, ['c', 'd'])
>>> candidates([])
(inf, [])
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TypeVar

__all__ = ["candidates"]

T = TypeVar("T")


def candidates(options: Iterable[tuple[float, float, T]]) -> tuple[float, list[T]]:
    """The time of the next firing and the ``item``s that may fire then, from ``options``
    of ``(time, priority, item)`` (``time``: the binding's ``max(ready, floor)``); no
    option: ``(inf, [])``."""
    best_time, best_priority = math.inf, math.inf
    chosen: list[T] = []
    for at, priority, item in options:
        if at < best_time or (at == best_time and priority < best_priority):
            best_time, best_priority = at, priority
            chosen = [item]
        elif at == best_time and priority == best_priority:
            chosen.append(item)
    return best_time, chosen
