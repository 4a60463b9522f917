"""A path through a state space, step by step: what a witness or a counterexample is made of.

>>> Step("put", {"x": 2}, {"q": [2, 2, 2]}).to_json()["marking"]
{'q': [2, 2, 2]}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcpn.outputs import json_ready

__all__ = ["Step"]


@dataclass(frozen=True)
class Step:
    """One firing on a path: the transition, its binding, and the marking it leads to."""

    transition: str
    binding: dict[str, Any]
    marking: dict[str, Any]
    clock: float | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (token values as ``repr`` where JSON has no form for them)."""
        out: dict[str, Any] = {"transition": self.transition,
                               "binding": json_ready(self.binding, repr),
                               "marking": json_ready(self.marking, repr)}
        if self.clock is not None:
            out["clock"] = self.clock
        return out

