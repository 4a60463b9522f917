"""What every explored state space offers: the coloured/timed explorer's
:class:`~tcpn.petrinets.statespace.space.StateSpace` and the P/T vector explorer's
:class:`~tcpn.petrinets.statespace.ptspace.PTStateSpace` alike.

A checker written against :class:`ExploredSpace` works on both; one that needs more (the
P/T space's token vectors, the coloured space's store) says so by taking
:data:`AnyStateSpace` and branching on the class.

>>> from tcpn.petrinets import explore
>>> from tcpn.petrinets.examples import dining_philosophers
>>> from tcpn.petrinets.statespace.ptspace import explore_pt, pt_net
>>> spaces: list[ExploredSpace] = [explore(dining_philosophers(3)),
...                                explore_pt(pt_net(dining_philosophers(3)))]
>>> [(s.n_states, s.complete, s.dead_markings()) for s in spaces]
[(4, True, []), (4, True, [])]
"""

from __future__ import annotations

from typing import Any, Protocol, TypeAlias

from tcpn.petrinets.net import Token
from tcpn.petrinets.statespace.ptspace import PTStateSpace
from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["AnyStateSpace", "ExploredSpace"]


class ExploredSpace(Protocol):
    """A state space as the checkers read it: states numbered from 0 (the initial
    marking), their successors, markings and paths, and whether the exploration ended."""

    #: Whether every reachable state was found and expanded (no budget stopped it).
    complete: bool

    def __len__(self) -> int: ...

    @property
    def n_states(self) -> int:
        """States found."""

    @property
    def n_edges(self) -> int:
        """Edges (firings) found."""

    @property
    def bytes_per_state(self) -> float:
        """Memory held per state."""

    @property
    def states_per_s(self) -> float:
        """Exploration speed."""

    def successors(self, state: int) -> list[int]:
        """The states one firing leads to from ``state``."""

    def dead_markings(self) -> list[int]:
        """The states with no successor."""

    def marking(self, state: int) -> dict[str, list[Token]]:
        """The marking of ``state``, place by place."""

    def path_to(self, state: int) -> list[tuple[str, dict[str, Any]]]:
        """``(transition, binding)`` of each firing of a shortest path from the initial
        state to ``state``."""

    def adjacency(self) -> tuple[Any, Any]:
        """``(indptr, targets)``: state ``s``'s edges lead to ``targets[indptr[s]:indptr[s + 1]]``
        (what :func:`~tcpn.petrinets.statespace.graph.state_graph` reads)."""

    def matrix(self) -> Any:
        """The adjacency matrix (SciPy CSR array)."""


#: Either explorer's space, for a checker that branches on which it got.
AnyStateSpace: TypeAlias = StateSpace | PTStateSpace
