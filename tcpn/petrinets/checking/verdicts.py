"""What a model checker answers: a verdict, its evidence, and the budget it ran under.

Every checker (CTL, LTL, the global properties) returns a :class:`Verdict`: ``"true"``,
``"false"`` or ``"unknown"`` (a budget was reached: :attr:`Verdict.reason` names it; never
a guess). Where a path proves the answer (a witness of ``EF p``, a counterexample of
``AG p``, a lasso refuting ``A(F p)`` or an LTL property), :attr:`Verdict.evidence` holds
it as :class:`Step` s that :meth:`tcpn.petrinets.Simulator.fire` can replay from the
initial marking; a ``"true"`` that no path can show says what makes it checked
(:attr:`Verdict.states` visited, or the invariant used, in :attr:`Verdict.technique`).

>>> v = Verdict("false", formula="AG(tokens('q') <= 2)", states=4,
...             evidence=Evidence(stem=[Step("put", {"x": 2}, {"q": [2, 2, 2]})]))
>>> v.holds, bool(v), v.to_json()["evidence"]["stem"][0]["transition"]
(False, False, 'put')

A verdict's truth value is its answer (``if check(net, f):`` runs for ``"true"`` only);
an ``"unknown"`` has none, so that a budget reached never reads as an answer:

>>> bool(Verdict("unknown", "AF deadlock", reason="state budget reached"))
Traceback (most recent call last):
ValueError: the verdict on AF deadlock is unknown (state budget reached) and has no truth ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tcpn.outputs import json_ready
from tcpn.petrinets.statespace.paths import Step

Answer = Literal["true", "false", "unknown"]


@dataclass(frozen=True)
class Evidence:
    """A finite path (``stem`` only) or a lasso: the ``stem`` from the initial marking, then
    a ``cycle`` that returns to the state the stem ends in and repeats forever."""

    stem: list[Step] = field(default_factory=list)
    cycle: list[Step] = field(default_factory=list)

    @property
    def is_lasso(self) -> bool:
        """Whether the path ends in a cycle (liveness and LTL evidence)."""
        return bool(self.cycle)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"stem": [s.to_json() for s in self.stem],
                "cycle": [s.to_json() for s in self.cycle]}


@dataclass(frozen=True)
class Verdict:
    """A checker's answer about one formula, with its evidence and its cost."""

    answer: Answer
    formula: str = ""
    evidence: Evidence | None = None
    states: int = 0
    seconds: float = 0.0
    technique: tuple[str, ...] = ()
    reason: str = ""
    value: int | float | None = None  # an integer answer, or a model time

    @property
    def holds(self) -> bool | None:
        """``True``/``False`` for a definite answer, ``None`` for ``"unknown"``."""
        return None if self.answer == "unknown" else self.answer == "true"

    def __bool__(self) -> bool:
        """The answer, so that ``if check(net, f):`` reads as "if f holds": ``True`` for
        ``"true"``, ``False`` for ``"false"``. An ``"unknown"`` has no truth value: a
        :class:`ValueError` (naming the formula and the budget), never a silent pass."""
        if self.answer == "unknown":
            raise ValueError(
                f"the verdict on {self.formula or 'the formula'} is unknown "
                f"({self.reason or 'a budget was reached'}) and has no truth value: read "
                "verdict.holds (True, False or None) or verdict.answer ('true', 'false' or "
                "'unknown')")
        return self.answer == "true"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {"answer": self.answer, "formula": self.formula,
                               "states": self.states, "seconds": self.seconds,
                               "technique": list(self.technique)}
        if self.value is not None:  # an infinite latest time: None, as JSON has no inf
            out["value"] = json_ready(self.value)
        if self.reason:
            out["reason"] = self.reason
        if self.evidence is not None:
            out["evidence"] = self.evidence.to_json()
        return out
