"""``EU`` and ``EG`` on a state graph: compiled loops over its reversed edges, kept once.

The answers are compared with the fixpoints written out state by state (the definitions,
on random small graphs with dead states, self-loops and repeated edges); and a fixpoint
must not build a sparse matrix of the graph's edges per call (that sort of every edge
for each operator was most of a CTL examination's time on 10^7 edges).
"""

from __future__ import annotations

import numpy as np
import pytest

from tcpn.petrinets.statespace import graph as graph_module
from tcpn.petrinets.statespace.graph import StateGraph


def until_by_definition(successors: list[list[int]], allowed: np.ndarray,
                        target: np.ndarray) -> np.ndarray:
    """Least fixpoint of Z = target | (allowed & EX Z), iterated to stability."""
    found = target.copy()
    changed = True
    while changed:
        changed = False
        for s, nexts in enumerate(successors):
            if not found[s] and allowed[s] and any(found[t] for t in nexts):
                found[s] = changed = True
    return found


def globally_by_definition(successors: list[list[int]], hold: np.ndarray) -> np.ndarray:
    """Greatest fixpoint of Z = hold & (dead | EX Z), iterated to stability."""
    inside = hold.copy()
    changed = True
    while changed:
        changed = False
        for s, nexts in enumerate(successors):
            if inside[s] and nexts and not any(inside[t] for t in nexts):
                inside[s] = False
                changed = True
    return inside


def random_graph(rng: np.random.Generator) -> list[list[int]]:
    n = int(rng.integers(1, 25))
    return [[int(t) for t in rng.integers(0, n, size=int(rng.integers(0, 4)))]
            for _ in range(n)]


def test_until_and_globally_are_their_fixpoints_on_random_graphs():
    rng = np.random.default_rng(36)
    for _ in range(400):
        successors = random_graph(rng)
        n = len(successors)
        g = StateGraph.of_lists(successors)
        hold, target, allowed = (rng.random(n) < 0.7, rng.random(n) < 0.2,
                                 rng.random(n) < 0.6)
        assert g.backward(target, allowed).tolist() == until_by_definition(
            successors, allowed, target).tolist()
        assert g.globally(hold).tolist() == globally_by_definition(
            successors, hold).tolist()


def test_a_dead_state_ends_a_globally_path_and_a_self_loop_keeps_one():
    g = StateGraph.of_lists([[1], [], [2], [0]])  # 1 dead, 2 loops on itself
    assert g.globally(np.array([True, True, True, False])).tolist() == [
        True, True, True, False]
    assert g.globally(np.array([True, False, False, True])).tolist() == [
        False, False, False, False]


def test_fixpoints_build_no_sparse_matrix_per_call(monkeypatch: pytest.MonkeyPatch):
    g = StateGraph.of_lists([[1], [2], [0, 3], []])

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a sparse matrix of the edges built for one fixpoint")

    monkeypatch.setattr(graph_module, "_csr", refuse)
    everywhere = np.ones(4, dtype=bool)
    assert g.backward(np.array([False, False, False, True]), everywhere).all()
    assert g.globally(np.array([True, True, True, False])).tolist() == [
        True, True, True, False]


def test_next_is_a_successor_in_the_set_and_false_at_a_dead_state():
    rng = np.random.default_rng(7)
    for _ in range(200):
        successors = random_graph(rng)
        target = rng.random(len(successors)) < 0.3
        g = StateGraph.of_lists(successors)
        assert g.pre_exists(target).tolist() == [any(target[t] for t in nexts)
                                                 for nexts in successors]
