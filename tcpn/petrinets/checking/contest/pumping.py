"""Proofs that places of a P/T net are unbounded, found by random walks: a marking ``M``
reached from the initial marking, then a sequence ``s`` fired from ``M`` to ``M' >= M``.

Without inhibitor and reset arcs a P/T net is monotone: a transition enabled at ``M`` is
enabled at every larger marking, and fires to the larger marking by the same difference.
So ``s`` fires again from ``M'`` to ``M' + (M' - M)``, and again without end: every place
where ``M'`` exceeds ``M`` takes unboundedly many tokens, and an UpperBounds question
over a set holding one of them has no finite answer (the contest's ``inf``). This is the
pumping argument of Karp and Miller's coverability tree (*Parallel program schemata*,
JCSS 3(2), 1969), here on the paths of random walks rather than on a tree: an answer is
given only with the witness ``(path to M, s)``, fired again by the net's own rule
(:func:`~tcpn.petrinets.checking.contest.walks.replay`) before it answers. Not finding
one proves nothing (the place may be bounded, or the walks unlucky).

The walkers (rows of one markings matrix, as in
:mod:`~tcpn.petrinets.checking.contest.walks`) keep the markings they passed every
:data:`STRIDE` firings (the last :data:`ANCHORS` of them) and at every power of two of
their length (Brent's cycle search: a cycle of any length is met), and compare their
marking with those every :data:`CHECK_STEPS` steps.

>>> from tcpn.petrinets.examples import token_ring
>>> from tcpn.petrinets.statespace.ptspace import pt_net
>>> net = pt_net(token_ring(3))
>>> pumping_walks(net, [np.array([0])], max_steps=200)  # one token goes round: bounded
[None]
"""

from __future__ import annotations

import time as wallclock
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tcpn.petrinets.checking.contest.walks import (
    MAX_LENGTH,
    WALKERS,
    enabling_of,
    replay,
    step_walkers,
    walk_steps,
)
from tcpn.petrinets.statespace.ptspace import PTNet

__all__ = ["ANCHORS", "CHECK_STEPS", "STRIDE", "Pump", "Pumps", "monotone",
           "pumping_walks"]

#: Firings between two markings a walker keeps to compare with ...
STRIDE = 8
#: ... the last this many of them (and one more, at the last power of two of its length).
ANCHORS = 16
#: Steps between two comparisons of the walkers' markings with those they keep.
CHECK_STEPS = 4
#: At most this many counts compared at once (walkers x kept markings x places).
COMPARE_CELLS = 1 << 22


@dataclass(frozen=True)
class Pump:
    """A proof of unboundedness: ``path`` from the initial marking to ``M``, then
    ``cycle`` from ``M`` to ``M' >= M``; ``grows``: the places where ``M' > M``."""

    path: tuple[str, ...]
    cycle: tuple[str, ...]
    grows: np.ndarray


def monotone(net: PTNet) -> bool:
    """Whether the pumping argument holds on ``net``: no inhibitor and no reset arc."""
    return not net.inhibit.nnz and not net.reset.nnz


def pump_of(net: PTNet, path: Sequence[str], cycle: Sequence[str]) -> Pump | None:
    """The :class:`Pump` of ``path`` then ``cycle`` when the net fires both, one transition
    at a time by its own rule, and the cycle ends at a marking at least its start's and
    larger somewhere (None otherwise, or on a net that is not :func:`monotone`)."""
    if not monotone(net) or not cycle:
        return None
    try:
        start = replay(net, path)
        end = replay(net, cycle, start)
    except ValueError:
        return None
    if (end < start).any() or not (end > start).any():
        return None
    return Pump(tuple(path), tuple(cycle), end > start)


def pumping_walks(net: PTNet, goals: Sequence[np.ndarray], seed: int = 0,
                  stop: Callable[[], bool] = lambda: False, max_steps: int | None = None,
                  walkers: int = WALKERS, max_length: int = MAX_LENGTH
                  ) -> list[Pump | None]:
    """For each goal (place indices), a checked :class:`Pump` growing one of its places,
    or None when no walk found one before ``stop()`` or ``max_steps`` steps (each step
    fires one transition in every walker). Seeded by ``seed``; nothing on a net that is
    not :func:`monotone`."""
    found: list[Pump | None] = [None] * len(goals)
    if not monotone(net) or not goals:
        return found
    pending = list(range(len(goals)))
    enabling = enabling_of(net)
    rng = np.random.default_rng(seed)
    initial = np.asarray(net.initial, dtype=np.int64)
    n_places = len(initial)
    kept = max(1, min(ANCHORS, COMPARE_CELLS // max(1, walkers * n_places) - 1))
    markings = np.tile(initial, (walkers, 1))
    anchors = np.zeros((walkers, kept + 1, n_places), dtype=np.int64)
    anchor_at = np.full((walkers, kept + 1), -1, dtype=np.int64)
    trace = np.zeros((walkers, max_length), dtype=np.int64)
    length = np.zeros(walkers, dtype=np.int64)
    step = 0
    while pending and not stop() and (max_steps is None or step < max_steps):
        step += 1
        alive = step_walkers(net, markings, enabling(markings), rng, trace, length, max_length)
        restart = ~alive
        markings[restart], length[restart], anchor_at[restart] = initial, 0, -1
        if step % CHECK_STEPS == 0:
            for w, k in np.argwhere((anchor_at >= 0) & (anchor_at < length[:, None]) & (
                    markings[:, None, :] >= anchors).all(axis=2)).tolist():
                grows = markings[w] > anchors[w, k]
                wanted = [g for g in pending if grows[goals[g]].any()]
                if not wanted:
                    continue
                at = int(anchor_at[w, k])
                pump = pump_of(net, [net.transitions[t] for t in trace[w, :at]],
                               [net.transitions[t] for t in trace[w, at:length[w]]])
                for g in wanted if pump is not None else ():
                    if pump.grows[goals[g]].any():  # type: ignore[union-attr]
                        found[g] = pump
                        pending.remove(g)
        # keep the marking every STRIDE firings, and at each power of two of the length
        for chosen_rows, slots in (
                (np.flatnonzero(alive & (length % STRIDE == 0)),
                 (length // STRIDE) % kept),
                (np.flatnonzero(alive & (length & (length - 1) == 0)),
                 np.full(walkers, kept))):
            anchors[chosen_rows, slots[chosen_rows]] = markings[chosen_rows]
            anchor_at[chosen_rows, slots[chosen_rows]] = length[chosen_rows]
    return found


class Pumps:
    """The unboundedness proofs of a set of UpperBounds questions, walked once for all of
    them at the first question: ``goals`` (place indices) by identifier, walked on
    ``net`` for :func:`~tcpn.petrinets.checking.contest.walks.walk_steps` steps (the same
    answers on any machine), cut short only if ``seconds`` pass from the first question."""

    def __init__(self, net: PTNet, goals: dict[str, np.ndarray], seconds: float,
                 seed: int = 0):
        self.net, self.goals, self.seconds, self.seed = net, goals, seconds, seed
        self.answers: dict[str, Pump] | None = None

    def answer(self, ident: str) -> Pump | None:
        """A checked :class:`Pump` growing a place of question ``ident``, or None."""
        if ident not in self.goals:
            return None
        if self.answers is None:
            idents = list(self.goals)
            deadline = wallclock.perf_counter() + self.seconds
            pumps = pumping_walks(self.net, [self.goals[i] for i in idents], self.seed,
                                  lambda: wallclock.perf_counter() > deadline,
                                  max_steps=walk_steps(self.net))
            self.answers = {i: p for i, p in zip(idents, pumps, strict=True)
                            if p is not None}
        return self.answers.get(ident)
