"""Transition fairness: assumptions for the checkers, and CPN Tools' fairness properties.

*As an assumption* (:class:`Fairness`), a fair path is one on which every transition named
``weak`` that is enabled continuously from some point on fires infinitely often, and every
transition named ``strong`` that is enabled infinitely often fires infinitely often. Finite
maximal paths (ending in a dead marking) are fair. "Enabled" is the state space's own
notion (:func:`~tcpn.petrinets.checking.formulas.fireable`). The checkers quantify over fair paths
only; a loss-and-retransmit cycle then no longer refutes "eventually delivered".

Fair cycles are found by the classical SCC analysis (Emerson and Lei; Lichtenstein and
Pnueli): inside a strongly connected component, a path that visits every state and edge
infinitely often is fair when every weak transition fires in the component or is disabled
somewhere in it, and every strong transition fires in it or is enabled nowhere in it. A
component failing the strong condition is refined by removing the states where the
offending transition is enabled, and its sub-components are examined again.

*As properties* (:func:`fairness_properties`), the categories of CPN Tools' standard
report, per transition: **impartial** (it occurs infinitely often on every infinite
occurrence sequence), **fair** (on every infinite sequence where it is enabled infinitely
often), **just** (on every infinite sequence where it is enabled continuously from some
point), or none of these. Each category implies the next; the report names the strongest.

>>> from tcpn.petrinets import explore
>>> from tcpn.petrinets.examples import dining_philosophers
>>> fairness_properties(explore(dining_philosophers(3)))
{'take0': 'just', 'put0': 'fair', 'take1': 'just', 'put1': 'fair', 'take2': 'just', 'put2': 'fair'}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tcpn.petrinets.checking.atoms import columns, edge_transitions
from tcpn.petrinets.statespace.graph import require_complete, state_graph

if TYPE_CHECKING:
    from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["Fairness", "fair_cycle", "fair_states", "fairness_properties"]


@dataclass(frozen=True)
class Fairness:
    """Transitions assumed weakly or strongly fair.

    ``Fairness.all_weak(net)`` / ``all_strong(net)`` assume it of every transition.
    """

    weak: tuple[str, ...] = ()
    strong: tuple[str, ...] = ()

    @property
    def transitions(self) -> tuple[str, ...]:
        """Every transition named."""
        return self.weak + self.strong

    @classmethod
    def all_weak(cls, names: Iterable[str]) -> Fairness:
        """Weak fairness of every transition named."""
        return cls(weak=tuple(names))

    @classmethod
    def all_strong(cls, names: Iterable[str]) -> Fairness:
        """Strong fairness of every transition named."""
        return cls(strong=tuple(names))

    def describe(self) -> str:
        """``weak(a, b) strong(c)``: for verdicts and reports."""
        parts = [f"{kind}({', '.join(names)})" for kind, names in
                 (("weak", self.weak), ("strong", self.strong)) if names]
        return " ".join(parts) or "none"


def _fair_labels(space: StateSpace, p: np.ndarray, fairness: Fairness) -> np.ndarray:
    """Per state, the number of the fair component of the ``p`` sub-graph it lies in (-1:
    none); numbers are distinct across refinement rounds."""
    g = state_graph(space)
    cols = columns(space)
    labels_out = np.full(g.n, -1, dtype=np.int64)
    names = {ct.name: ct.index for ct in space.compiled.transitions}
    edge_t = edge_transitions(space)
    checks = [(name, False) for name in fairness.weak] + [(name, True) for name in
                                                          fairness.strong]
    enabled = {name: cols.fireable(name) for name, _ in checks}  # validates the names
    next_label = 0
    work = [p.copy()]
    while work:
        mask = work.pop()
        labels, cyclic = g.components(mask)
        k = len(cyclic)
        safe = np.maximum(labels, 0)
        weak_ok, refine, remove = component_fairness(labels, mask, k, g.src, g.dst, edge_t,
                                                     names, enabled, checks)
        good = cyclic & weak_ok & ~refine
        chosen = mask & good[safe]
        labels_out[chosen] = labels[chosen] + next_label
        next_label += k
        again = mask & (refine & cyclic & weak_ok)[safe] & ~remove
        if again.any():
            work.append(again)
    return labels_out


def component_fairness(labels: np.ndarray, mask: np.ndarray, k: int, src: np.ndarray,
                       dst: np.ndarray, edge_transition: np.ndarray,
                       number: Mapping[str, int], enabled: Mapping[str, np.ndarray],
                       checks: Sequence[tuple[str, bool]]
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fairness of each of the ``k`` strongly connected components of a sub-graph
    (``labels``: a node's component, -1 outside; ``mask``: the sub-graph's nodes; edges
    ``src -> dst`` firing ``edge_transition``; ``checks``: (transition, strong?)).

    Returns, per component, whether every weakly fair transition fires inside it or is
    disabled somewhere in it; per component, whether a strongly fair transition is enabled
    in it but never fires inside (the component must be refined); and, per node, where
    such a transition is enabled (the nodes the refinement removes). Shared by the fair
    CTL fixpoints here and the LTL product (:mod:`tcpn.petrinets.checking.ltl.product`).
    """
    safe = np.maximum(labels, 0)
    sizes = np.bincount(safe[mask], minlength=k)
    inside = (labels[src] >= 0) & (labels[src] == labels[dst])
    weak_ok = np.ones(k, dtype=bool)
    refine = np.zeros(k, dtype=bool)
    remove = np.zeros(len(mask), dtype=bool)
    for name, strong in checks:
        fires = np.bincount(labels[src[inside & (edge_transition == number[name])]],
                            minlength=k) > 0
        on = enabled[name] & mask
        enabled_count = np.bincount(safe[on], minlength=k)
        if strong:
            offending = ~fires & (enabled_count > 0)
            refine |= offending
            remove |= on & offending[safe]
        else:
            weak_ok &= fires | (enabled_count < sizes)
    return weak_ok, refine, remove


def fair_states(space: StateSpace, p: np.ndarray, fairness: Fairness) -> np.ndarray:
    """States of the ``p`` sub-graph on a fair cycle inside it (an infinite fair path that
    stays in ``p`` can run through each of them forever)."""
    return _fair_labels(space, p, fairness) >= 0


def fair_cycle(space: StateSpace, p: np.ndarray, fairness: Fairness, state: int) -> list[int]:
    """Edges of a cycle from ``state`` back to it inside ``p`` that, repeated forever, is
    fair: it fires every fair transition that fires in the component, and passes a state
    where each weak transition that does not fire there is disabled."""
    g = state_graph(space)
    labels = _fair_labels(space, p, fairness)
    component = labels == labels[state]
    cols = columns(space)
    edge_t = edge_transitions(space)
    names = {ct.name: ct.index for ct in space.compiled.transitions}
    inside = component[g.src] & component[g.dst]
    waypoints: list[int] = []
    for name in fairness.transitions:
        fired = np.flatnonzero(inside & (edge_t == names[name]))
        if len(fired):
            waypoints.append(int(fired[0]))
            continue
        off = np.flatnonzero(component & ~cols.fireable(name))
        if len(off) and name in fairness.weak:
            out = np.flatnonzero(inside & (g.src == off[0]))
            waypoints.append(int(out[0]))
    return g.cycle_through(component, state, waypoints)


def fairness_properties(space: StateSpace) -> dict[str, str]:
    """Each transition's strongest fairness category: ``"impartial"``, ``"fair"``,
    ``"just"`` or ``"none"`` (CPN Tools' standard report; the space must be complete)."""
    from tcpn.petrinets.checking.ctl import GLOBAL_CTL

    require_complete(space, GLOBAL_CTL)
    g = state_graph(space)
    cols = columns(space)
    edge_t = edge_transitions(space)
    everywhere = np.ones(g.n, dtype=bool)
    out = {}
    for ct in space.compiled.transitions:
        avoid = edge_t != ct.index
        labels, cyclic = g.components(everywhere, avoid)
        on_cycle = cyclic[np.maximum(labels, 0)]
        enabled = cols.fireable(ct.name)
        if not on_cycle.any():
            out[ct.name] = "impartial"
        elif not (on_cycle & enabled).any():
            out[ct.name] = "fair"
        else:
            labels, cyclic = g.components(enabled, avoid)
            out[ct.name] = "none" if (cyclic[np.maximum(labels, 0)] & enabled).any() else "just"
    return out
