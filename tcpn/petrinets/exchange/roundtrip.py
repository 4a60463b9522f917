"""Two runs of one seed compared firing by firing: where a net and its round trip part.

A net written to a file and read back should fire the same (time, transition, binding)
sequence for a seed as the net itself. :func:`compare_runs` runs both side by side, a block
of firings at a time (memory stays flat over long runs), and returns the first firing where
they differ, with both sides, or ``None`` as the divergence when they agree to the end and
end in the same marking. An error in either run (say a ``RecursionError`` in a translated
function) is a divergence too, reported with its message.

Bindings are compared value by value in the order of the transition's variables: CPN ML
declares each variable once with one colour set, so the exporter renames a variable a net
uses with two colour sets (``p`` for a packet, ``p_2`` for a timed one); the renamings met
are listed in :attr:`RunComparison.renamed`. Values compare with ``==`` (a record read back
is a named tuple of another class, equal field by field); times compare exactly.

>>> from tcpn.petrinets.examples import counter
>>> from tcpn.petrinets.exchange.cpn_export import to_cpn
>>> from tcpn.petrinets.exchange.cpn_import import read_cpn
>>> net = counter(3)
>>> comparison = compare_runs(net, read_cpn(to_cpn(net, layout="grid")).net, seed=1,
...                           max_firings=100)
>>> comparison.firings, comparison.divergence
(3, None)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tcpn.petrinets.engine.monitors import Monitor
from tcpn.petrinets.engine.simulator import Simulator
from tcpn.petrinets.net import PetriNet

__all__ = ["Divergence", "RunComparison", "compare_runs"]

#: Firings recorded per block before the two sides are compared and forgotten.
BLOCK_FIRINGS = 5_000


@dataclass(frozen=True)
class Step:
    """One side of a firing: what fired, or how the run stopped instead."""

    time: float
    transition: str
    variables: tuple[str, ...]
    values: tuple[Any, ...]
    stop: str = ""  # 'dead', 'horizon', or an error message: no firing

    def __str__(self) -> str:
        if self.stop:
            return f"no firing at time {self.time!r}: {self.stop}"
        binding = ", ".join(f"{v}={value!r}" for v, value in zip(self.variables, self.values,
                                                                  strict=True))
        return f"time {self.time!r}, {self.transition} <{binding}>"


@dataclass(frozen=True)
class Divergence:
    """The first firing (counted from 1) where the two runs differ, with both sides."""

    firing: int
    original: Step
    again: Step

    def __str__(self) -> str:
        return (f"firing {self.firing} differs:\n  original: {self.original}\n"
                f"  again:    {self.again}")


@dataclass
class RunComparison:
    """How far two runs of one seed agree (``divergence`` is ``None`` if to the end)."""

    firings: int = 0  # firings compared equal
    divergence: Divergence | None = None
    same_marking: bool = True  # at the end (checked when no firing differs)
    renamed: dict[str, dict[str, str]] = field(default_factory=dict)

    def __str__(self) -> str:
        if self.divergence is not None:
            return f"{self.firings} firings equal, then {self.divergence}"
        marking = "the same marking" if self.same_marking else "DIFFERENT markings"
        return f"{self.firings} firings equal, ending in {marking}"


class _Steps(Monitor):
    """Every firing as a :class:`Step`."""

    def __init__(self) -> None:
        super().__init__("steps")
        self.steps: list[Step] = []

    def observe(self, sim: Simulator, transition: Any, binding: tuple[Any, ...]) -> None:
        self.steps.append(Step(sim.now, transition.name, tuple(transition.variables),
                               tuple(binding)))

    def result(self) -> list[Step]:
        return self.steps


def _advance(sim: Simulator, steps: _Steps, firings: int, until: float | None) -> str:
    """Fire up to ``firings`` more; '' while the run goes on, else why it stopped."""
    try:
        reason = sim.run(until=until, max_firings=firings).stop_reason
    except Exception as exc:  # any failure of the run is what the comparison reports
        return f"{type(exc).__name__}: {exc}"[:2000]
    return "" if reason == "max_firings" else reason


def compare_runs(original: PetriNet, again: PetriNet, *, seed: int, max_firings: int,
                 until: float | None = None) -> RunComparison:
    """Run ``original`` and ``again`` from ``seed`` and compare them firing by firing."""
    sides = [(_Steps(), net) for net in (original, again)]
    sims = [Simulator(net, seed=seed, monitors=[steps]) for steps, net in sides]
    comparison = RunComparison()
    stops = ["", ""]
    while comparison.firings < max_firings:
        block = min(BLOCK_FIRINGS, max_firings - comparison.firings)
        for k in range(2):
            stops[k] = stops[k] or _advance(sims[k], sides[k][0], block, until)
        ours, theirs = sides[0][0].steps, sides[1][0].steps
        for a, b in zip(ours, theirs, strict=False):
            if (a.time, a.transition, a.values) != (b.time, b.transition, b.values):
                comparison.divergence = Divergence(comparison.firings + 1, a, b)
                return comparison
            if a.variables != b.variables:
                comparison.renamed.setdefault(a.transition, dict(
                    zip(a.variables, b.variables, strict=False)))
            comparison.firings += 1
        if len(ours) != len(theirs) or stops[0] != stops[1]:
            short = [len(ours) <= len(theirs), len(theirs) <= len(ours)]
            first, second = (
                steps.steps[len(ours) if len(ours) < len(theirs) else len(theirs)]
                if not short[k] else Step(sims[k].now, "", (), (), stops[k] or "stopped")
                for k, (steps, _) in enumerate(sides))
            comparison.divergence = Divergence(comparison.firings + 1, first, second)
            return comparison
        ours.clear()
        theirs.clear()
        if stops[0]:
            break
    comparison.same_marking = (sims[0].marking_dict(), sims[0].now) == (
        sims[1].marking_dict(), sims[1].now)
    return comparison
