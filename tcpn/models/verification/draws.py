"""Fixed draws standing for a generator: how the state space enumerates a random choice.

A component's code action that draws from ``rng`` (RED's early verdict, 802.11's attempts,
TCP-L's reaction) becomes two transitions in a verification net: the action run with the
draw fixed at each end of NumPy's ``random()`` range (:data:`U_EARLY`, :data:`U_CALM`).
This module holds the stand-ins; :mod:`~tcpn.models.verification.choices` and the
variants that declare choices (``state_space_choices`` of
:func:`tcpn.models.register_variant`) build the twins with them.

>>> forced(lambda x, rng: x + rng.random(), FixedDraw(0.5))(x=1)
1.5
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

__all__ = ["REACT_SUFFIX", "UNOPENED_SUFFIX", "U_CALM", "U_EARLY", "FixedDraw", "FixedDraws",
           "forced"]

#: TCP-L's draw (react to a loss as congestion or not) as a choice: the reaction twin.
REACT_SUFFIX = "_react"

#: The twin of TCP-L's reporter tick for a connection not (or never) open.
UNOPENED_SUFFIX = "_unopened"

#: The uniform draws RED's choices stand for: the smallest positive and the largest that
#: NumPy's ``random()`` returns. Early is possible when the smallest gives it (probability
#: > 0), not early when the largest does not (probability < 1). (TCP-L reacts when its
#: probability exceeds the draw: 0.0 stands for "react whenever possible".)
U_EARLY, U_CALM = 2.0 ** -53, 1.0 - 2.0 ** -53


class FixedDraw:
    """A stand-in for the generator RED's code action draws from: one fixed value."""

    def __init__(self, u: float):
        self.u = u

    def random(self) -> float:
        return self.u


class FixedDraws:
    """A stand-in for the generator 802.11's code action draws from: fixed values."""

    def __init__(self, values: tuple[float, ...]):
        self.values = values

    def random(self, size: int | None = None) -> Any:
        if size is None:  # one draw, as ``rng.random()``
            return self.values[0]
        return np.array(self.values[:size])


def forced(action: Any, generator: FixedDraw | FixedDraws) -> Any:
    """``action`` with its generator replaced by ``generator``, a stand-in that returns
    fixed draws: the same parameters without ``rng`` (the compiler calls actions by
    keyword)."""
    signature = inspect.signature(action)

    def forced(**values: Any) -> Any:
        return action(**values, rng=generator)
    forced.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for p in signature.parameters.values() if p.name != "rng"])
    return forced
