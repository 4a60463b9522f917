"""Forced draws: a stand-in for the simulator's random generator that returns given values.

``Simulator(net, forced_draws=[u0, u1, ...])`` makes every random draw of the net (the
random functions of inscriptions, distributions' delays, the ``rng`` of code actions) come
from the given uniform numbers in ``[0, 1]``, in order (1, which a generator never returns,
stands for the upper end of an interval, as an explored interval's endpoint needs); the
simulator's own choice among enabled bindings keeps its seeded stream. A path found by
the state-space explorer, whose choices stand for particular draws, is then replayed in
the simulator with exactly those draws. Each draw is made from one uniform number by
inversion: ``uniform(a, b)`` is ``a + u (b - a)``, ``exponential`` is
``-mean log(1 - u)``, ``integers(a, b)`` is ``min(a + floor(u (b - a)), b - 1)``,
``choice(n, p)`` the index whose cumulative probability first exceeds ``u``, ``normal``
the normal quantile of ``u``.

>>> draws = ForcedDraws([0.25, 0.5, 0.75])
>>> draws.uniform(0.0, 4.0), draws.random(2).tolist()
(1.0, [0.5, 0.75])
>>> draws.random()
Traceback (most recent call last):
...
tcpn.errors.InputError: forced draws: the run asked for draw 4, only 3 were given
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable
from statistics import NormalDist
from typing import Any

import numpy as np

from tcpn.petrinets.errors import InputError

__all__ = ["ForcedDraws"]


class ForcedDraws:
    """The methods of :class:`numpy.random.Generator` the nets use, each drawing its
    uniform numbers from a given sequence (an :class:`InputError` when it runs out)."""

    def __init__(self, draws: Iterable[float]):
        values = [float(u) for u in draws]
        for i, u in enumerate(values):
            if not 0.0 <= u <= 1.0:
                raise InputError(f"forced draws: draw {i} is {u!r}; a uniform draw is in [0, 1]")
        self.values = values
        self.used = 0

    def _next(self) -> float:
        if self.used >= len(self.values):
            raise InputError(f"forced draws: the run asked for draw {self.used + 1}, only "
                             f"{len(self.values)} were given")
        self.used += 1
        return self.values[self.used - 1]

    def _many(self, size: Any, inverse: Any) -> Any:
        if size is None:
            return inverse(self._next())
        count = int(np.prod(size))
        return np.array([inverse(self._next()) for _ in range(count)]).reshape(size)

    def random(self, size: Any = None) -> Any:
        """``size`` uniform numbers in ``[0, 1)`` (one float when ``size`` is None)."""
        return self._many(size, lambda u: u)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> Any:
        """Uniform on ``[low, high)``."""
        return self._many(size, lambda u: low + u * (high - low))

    def exponential(self, scale: float = 1.0, size: Any = None) -> Any:
        """Exponential with mean ``scale``."""
        return self._many(size, lambda u: -scale * math.log1p(-u))

    def integers(self, low: int, high: int | None = None, size: Any = None) -> Any:
        """Integers in ``[low, high)`` (``[0, low)`` when ``high`` is None)."""
        lo, hi = (0, low) if high is None else (low, high)
        return self._many(size, lambda u: min(lo + int(u * (hi - lo)), hi - 1))

    def choice(self, a: Any, size: Any = None, p: Any = None) -> Any:
        """An index of ``range(a)`` (or a member of ``a``) with probabilities ``p``."""
        members = list(range(a)) if isinstance(a, int) else list(a)
        weights = [1.0 / len(members)] * len(members) if p is None else [float(w) for w in p]
        edges = list(itertools.accumulate(weights))

        def pick(u: float) -> Any:
            index = bisect.bisect_right(edges, u * edges[-1])
            return members[min(index, len(members) - 1)]
        return self._many(size, pick)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> Any:
        """Normal with mean ``loc`` and standard deviation ``scale``."""
        return self._many(size, lambda u: NormalDist(loc, scale).inv_cdf(max(u, 1e-300))
                          if scale > 0 else loc)
