"""An upper bound of a P/T net's place bounds without its state space: the state equation.

Every reachable marking ``M`` of a P/T net satisfies ``M = M0 + C x`` with ``C`` the
incidence matrix (post - pre) and ``x >= 0`` the firing counts of some sequence, and
``M >= 0``. The largest ``w . M`` over the reals under these constraints (a linear
program, solved by SciPy's HiGHS on the sparse matrix) is therefore at least the largest
over the reachable markings; its floor is a sound upper bound of a sum of token counts.
Read arcs and inhibitor arcs only take behaviours away, so the bound holds with them; a
reset arc empties a place whatever ``C`` says, so a net with one gets no bound here.

With the largest count seen in some reachable markings (a lower bound), the exact answer
is known when the two meet: a search stopped by a budget still answers UpperBounds then.
Two global properties follow from the structure alone: a place no firing changes makes
StableMarking true (:func:`stable_place`), a bound of one on every place makes the net
one-safe (:func:`one_safe_by_state_equation`).

>>> from tcpn.petrinets.examples import token_ring
>>> from tcpn.petrinets.statespace.ptspace import pt_net
>>> state_equation_bound(pt_net(token_ring(5)), ["p0", "p3"])
1
"""

from __future__ import annotations

import time as wallclock
from collections.abc import Sequence

import numpy as np

from tcpn.petrinets.statespace.ptspace import PTNet

__all__ = ["one_safe_by_state_equation", "stable_place", "state_equation_bound"]

#: slack on the LP optimum before its floor (HiGHS's feasibility tolerance is 1e-7)
TOLERANCE = 1e-6


def state_equation_bound(net: PTNet, places: Sequence[str],
                         time_limit_s: float | None = None) -> int | None:
    """The floor of the largest ``sum(M[p] for p in places)`` (a place listed twice
    counts twice) over the solutions of the state equation: at least the largest over
    the reachable markings. None when the program is unbounded, not solved within
    ``time_limit_s``, or the net has a reset arc."""
    if net.reset.nnz:
        return None
    index = {p: i for i, p in enumerate(net.places)}
    weights = np.zeros(len(net.places))
    np.add.at(weights, [index[p] for p in places], 1.0)
    incidence = (net.post - net.pre).T.astype(float).tocsr()  # places x transitions
    initial = np.asarray(net.initial, dtype=float)
    start = float(weights @ initial)
    if incidence.nnz == 0:
        return int(start)
    from scipy.optimize import linprog  # here: ~75 modules a complete search never needs

    objective = -(incidence.T @ weights)  # linprog minimises; w.M0 is a constant
    options = {} if time_limit_s is None else {"time_limit": max(0.1, time_limit_s)}
    found = linprog(objective, A_ub=-incidence, b_ub=initial, bounds=(0, None),
                    method="highs", options=options)
    if found.status != 0:  # 2 infeasible cannot be (x = 0), 3 unbounded, 1 time or steps
        return None
    return int(np.floor(start - found.fun + TOLERANCE))


def stable_place(net: PTNet) -> str | None:
    """A place no firing changes (every transition puts back what it takes from it, no
    reset arc on it), hence with the same count in every reachable marking; or None."""
    incidence = (net.post - net.pre).tocsc()  # transitions x places, by place
    incidence.eliminate_zeros()  # a self-loop's arcs cancel
    resets = net.reset.tocsc()
    unchanged = np.flatnonzero((np.diff(incidence.indptr) == 0) &
                               (np.diff(resets.indptr) == 0))
    return net.places[int(unchanged[0])] if len(unchanged) else None


def one_safe_by_state_equation(net: PTNet, time_limit_s: float | None = None,
                               known_empty: np.ndarray | None = None) -> bool:
    """True when the state equation bounds every place by one token (the net is then
    one-safe); False when it does not or the bounds took longer than ``time_limit_s``
    (one linear program per place: nothing is proved, not even the contrary). The places
    of the mask ``known_empty`` (proved empty in every reachable marking) need none."""
    if int(np.max(net.initial, initial=0)) > 1:
        return False
    deadline = None if time_limit_s is None else wallclock.perf_counter() + time_limit_s
    for i, place in enumerate(net.places):
        if known_empty is not None and known_empty[i]:
            continue
        left = None if deadline is None else deadline - wallclock.perf_counter()
        if left is not None and left <= 0:
            return False
        bound = state_equation_bound(net, [place], left)
        if bound is None or bound > 1:
            return False
    return True
