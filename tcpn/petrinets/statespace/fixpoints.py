"""The CTL operators ``EX a``, ``E[a U b]`` and ``EG a`` as compiled loops over a state
graph's edges.

:class:`~tcpn.petrinets.statespace.graph.StateGraph` answers ``EX``, ``EF``, ``EU`` and
``EG`` with these: each is one pass over the edges it touches (each state's edges up to
the first into the goal; a search backwards from the goal; the pruning of states with no
successor left), on the graph's edges reversed once
(:func:`reverse`) and kept. Building a sparse matrix of the admitted edges for each
fixpoint instead costs a sort of every edge per operator, which on spaces of 10^7 edges
was most of a CTL examination's time.

A dead marking ends a maximal path, so ``EG a`` holds there where ``a`` does (the
contest's reading, :mod:`tcpn.petrinets.checking.ptcheck`): the pruning keeps it.

>>> import numpy as np
>>> start, dst = np.array([0, 1, 2, 2]), np.array([1, 0], dtype=np.int32)  # 0 <-> 1, 2 dead
>>> successor_in(start, dst, np.array([True, False, False])).tolist()
[False, True, False]
>>> rstart, rsrc = reverse(start, dst)
>>> backward(rstart, rsrc, np.array([False, True, False]), np.ones(3, dtype=bool)).tolist()
[True, True, False]
>>> globally(start, dst, rstart, rsrc, np.array([True, True, True]),
...          np.array([False, False, True])).tolist()
[True, True, True]
>>> globally(start, dst, rstart, rsrc, np.array([True, False, False]),
...          np.array([False, False, True])).tolist()
[False, False, False]
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["backward", "globally", "reverse", "successor_in"]


@njit(cache=True)
def successor_in(start: np.ndarray, dst: np.ndarray, target: np.ndarray) -> np.ndarray:
    """States with at least one successor in ``target`` (``EX target``; false at a dead
    state), each state's edges read up to the first that enters ``target``."""
    n = start.shape[0] - 1
    found = np.zeros(n, dtype=np.bool_)
    for s in range(n):
        for e in range(start[s], start[s + 1]):
            if target[dst[e]]:
                found[s] = True
                break
    return found


@njit(cache=True)
def reverse(start: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reversed edges: ``(rstart, rsrc)``, state ``s``'s predecessors being
    ``rsrc[rstart[s]:rstart[s + 1]]`` (one per edge, so a repeated edge appears twice),
    by a counting sort over ``dst`` (no sort of the edges, no int64 copy of them)."""
    n = start.shape[0] - 1
    rstart = np.zeros(n + 1, dtype=np.int64)
    for e in range(dst.shape[0]):
        rstart[dst[e] + 1] += 1
    for s in range(n):
        rstart[s + 1] += rstart[s]
    fill = rstart[:-1].copy()
    rsrc = np.empty(dst.shape[0], dtype=np.int32)
    for s in range(n):
        for e in range(start[s], start[s + 1]):
            t = dst[e]
            rsrc[fill[t]] = s
            fill[t] += 1
    return rstart, rsrc


@njit(cache=True)
def backward(rstart: np.ndarray, rsrc: np.ndarray, target: np.ndarray,
             allowed: np.ndarray) -> np.ndarray:
    """States from which a path through ``allowed`` states reaches a ``target`` state
    (``E[allowed U target]``; the ``target`` states included): a search backwards from
    the targets, each state entered once."""
    found = target.copy()
    stack = np.empty(target.shape[0], dtype=np.int32)
    top = 0
    for s in range(target.shape[0]):
        if found[s]:
            stack[top] = s
            top += 1
    while top > 0:
        top -= 1
        s = stack[top]
        for e in range(rstart[s], rstart[s + 1]):
            p = rsrc[e]
            if allowed[p] and not found[p]:
                found[p] = True
                stack[top] = p
                top += 1
    return found


@njit(cache=True)
def globally(start: np.ndarray, dst: np.ndarray, rstart: np.ndarray, rsrc: np.ndarray,
             hold: np.ndarray, dead: np.ndarray) -> np.ndarray:
    """``EG hold`` on maximal paths: the greatest set of ``hold`` states each of which is
    dead or has a successor in the set. Every ``hold`` state counts its successors in
    ``hold``; a live state whose count falls to zero leaves, and lowers its predecessors'
    counts (each edge is counted and discounted once)."""
    n = hold.shape[0]
    inside = hold.copy()
    count = np.zeros(n, dtype=np.int32)
    stack = np.empty(n, dtype=np.int32)
    top = 0
    for s in range(n):
        if inside[s]:
            c = 0
            for e in range(start[s], start[s + 1]):
                if hold[dst[e]]:
                    c += 1
            count[s] = c
            if c == 0 and not dead[s]:
                inside[s] = False
                stack[top] = s
                top += 1
    while top > 0:
        top -= 1
        s = stack[top]
        for e in range(rstart[s], rstart[s + 1]):
            p = rsrc[e]
            if inside[p]:
                count[p] -= 1
                if count[p] == 0:  # it had a successor, so it is not dead
                    inside[p] = False
                    stack[top] = p
                    top += 1
    return inside
