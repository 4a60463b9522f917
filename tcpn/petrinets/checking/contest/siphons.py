"""The places of a P/T net that stay empty forever, and the transitions that never fire.

A siphon is a set ``S`` of places such that every transition putting tokens into ``S``
needs a token from ``S`` (an input or read arc on a place of ``S``). A siphon empty in the
initial marking stays empty: no transition able to fill it can fire while it is empty.
:func:`empty_siphon` finds the largest such siphon among the initially empty places (a
fixpoint from the empty places, dropping each place some transition can fill without
needing ``S``), in time linear in the arcs: no state space, no dense matrix. Inhibitor
arcs only disable and reset arcs only empty, so neither can fill ``S``.

What follows without the state space, when a budget stops the search on a wide net:

* every place of the siphon holds 0 tokens in every reachable marking: StableMarking is
  TRUE, its place bounds are 0 (UpperBounds), and the state equation need not bound it;
* every transition needing a token from it is dead: QuasiLiveness and Liveness are FALSE.

>>> from tcpn.petrinets.statespace.ptspace import PTNet
>>> net = PTNet(("a", "b", "c"), ("t", "u"), pre=[[1, 0, 0], [0, 1, 0]],
...             post=[[0, 1, 0], [0, 0, 1]], test=[[0, 0, 0], [0, 0, 0]],
...             inhibit=[[0, 0, 0], [0, 0, 0]], reset=[[0, 0, 0], [0, 0, 0]],
...             initial=np.array([0, 0, 1]))
>>> empty = empty_siphon(net)
>>> [net.places[p] for p in np.flatnonzero(empty.places)]
['a', 'b']
>>> [net.transitions[t] for t in np.flatnonzero(empty.dead)]
['t', 'u']
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from tcpn.petrinets.statespace.ptspace import PTNet

__all__ = ["EmptySiphon", "empty_siphon"]


@dataclass(frozen=True)
class EmptySiphon:
    """``places``: a mask of the places empty in every reachable marking; ``dead``: a mask
    of the transitions that need a token from one of them (never enabled)."""

    places: np.ndarray
    dead: np.ndarray


def empty_siphon(net: PTNet) -> EmptySiphon:
    """The largest siphon of ``net`` that is empty in its initial marking (see the module)."""
    needs = (net.pre.maximum(net.test)).tocsr()  # transitions x places: a token needed
    needs_by_place = needs.tocsc()
    fills = net.post.tocsr()
    inside = np.asarray(net.initial) == 0
    # how many places of the current set each transition needs a token from
    waiting = np.asarray((needs > 0).astype(np.int64) @ inside.astype(np.int64),
                         dtype=np.int64)
    able = deque(np.flatnonzero(waiting == 0).tolist())
    while able:
        t = able.popleft()
        for p in fills.indices[fills.indptr[t]:fills.indptr[t + 1]].tolist():
            if not inside[p]:
                continue
            inside[p] = False  # t fills p without needing the set: p leaves it
            users = needs_by_place.indices[
                needs_by_place.indptr[p]:needs_by_place.indptr[p + 1]]
            waiting[users] -= 1
            able.extend(users[waiting[users] == 0].tolist())
    return EmptySiphon(inside, waiting > 0)
