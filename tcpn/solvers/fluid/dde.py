"""A delay-differential solver on a uniform grid: history buffer, step check, failure checks.

The state ``y`` lives on a uniform grid ``t_k = k h``; the whole history is kept in an
array, so a delayed value ``y(t - tau)`` (``tau`` may depend on the state, as an RTT
does) is a linear interpolation between two grid points, and before ``t = 0`` the initial
state is the history. Each step is Heun's method (explicit trapezoid, second order). A model
is three compiled (Numba) functions,

- ``signals``: algebraic outputs at a state (rates, marking and loss fluxes...), stored
  in a second history array ``S`` so that delayed feedback terms are interpolated, not
  recomputed;
- ``rhs``: the derivative, with boundary-aware terms (a queue at 0 does not drain
  further, a full one does not grow);
- ``jump``: discrete events after an accepted step (a window halving of a synchronised
  sawtooth, leaving slow start), editing the state in place;

and a compiled loop that fills preallocated histories by calling them around
:func:`heun_predict` and :func:`heun_correct` (the loop lives in the model's module so
that Numba can cache it), behind a Python callable ``integrate(step_s, n_steps) ->
Trajectory`` (:class:`DdeSystem`). Every stage is projected onto the state box ``[lower,
upper]`` (queue in [0, B], window >= 1): that is how clamping at a boundary stays exact.

The kernels are compiled without Numba's reference counting (``_nrt=False``: they
allocate nothing, the caller does): with it, every array passed to a helper or sliced
out of the history cost an atomic increment and decrement, 80 % of a step's time.

The grid is where the history is stored, not the step: a model may take one Heun step
over several rows where its embedded error estimate allows (the bottleneck model's
error-controlled strides, up to the shortest delay it reads), interpolating the rows in
between. The estimate is local (one step's Heun-Euler difference); it does not replace
the check below, whose contract is the measured change of every summary metric when the
discretisation is coarsened: the error of a time mean is carried by the delayed feedback
from step to step, which a sum of local estimates neither bounds nor reports per metric.

:func:`solve` refuses a step the model's fastest rate makes unstable (:class:`StiffModelError`,
naming the component), rejects non-finite or grid-scale oscillating results
(:class:`IntegrationError`), and by default checks the run against one at twice the step
(Richardson's comparison on the coarser grid, half the cost of a run at half the step)
and, if a summary metric moved by 0.5 % or more, halves the step until it moves by less,
raising :class:`ConvergenceError` if it never does.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numba import njit

from tcpn.errors import TcpnError

__all__ = [
    "ConvergenceError",
    "ConvergenceReport",
    "DdeSystem",
    "IntegrationError",
    "StiffModelError",
    "Trajectory",
    "heun_correct",
    "heun_predict",
    "lagged",
    "solve",
]

CheckStep = Literal["double", "half"]

#: Relative change allowed between a run and the run at half the step.
CONVERGENCE_TOLERANCE = 0.005
#: Heun is accurate (not just stable) while h times the fastest rate stays below this.
STEP_RATE_BOUND = 0.1
#: Compiled kernels: cached on disk, no reference counting (they allocate nothing), and
#: a division by a value that does not change in a loop (the step, the capacity, a round
#: trip read several times) may become a multiplication by its reciprocal (LLVM's
#: ``arcp``: 8-10 % off the bottleneck model's kernels, measured). Only that: the other
#: fast-math flags would let the compiler assume no infinity or NaN, which the kernels
#: test for (an unlimited buffer, a diverged state), or reorder sums, which would tie the
#: results to the vector width of the machine.
KERNEL: dict[str, Any] = {"cache": True, "_nrt": False, "fastmath": {"arcp"}}


class IntegrationError(TcpnError):
    """The integration produced something that is not a solution (non-finite, grid noise)."""


class StiffModelError(IntegrationError):
    """The model's fastest time scale needs a step too small for the step budget."""


class ConvergenceError(IntegrationError):
    """Halving the step changed a summary metric by more than the tolerance."""


@njit(cache=True, inline="always")
def lagged(hist: np.ndarray, k: int, h: float, t: float, tau: float, j: int) -> float:
    """Column ``j`` of the history at time ``t - tau``, linearly interpolated on the grid.

    Before time 0 the history is the initial row; past the newest accepted row ``k``
    (a delay shorter than the step) it is that row.
    """
    s = (t - tau) / h
    if s <= 0.0:
        return hist[0, j]
    i = int(s)
    if i >= k:
        return hist[k, j]
    f = s - i
    return hist[i, j] * (1.0 - f) + hist[i + 1, j] * f


@njit(**KERNEL, inline="always")
def heun_predict(y: np.ndarray, f1: np.ndarray, h: float, lower: np.ndarray,
                 upper: np.ndarray, pred: np.ndarray, cols: np.ndarray, n_cols: int) -> None:
    """Heun's predictor (an Euler step) projected onto the state box, into ``pred``;
    only the columns ``cols[:n_cols]`` (the others are not being integrated)."""
    for jj in range(n_cols):
        j = cols[jj]
        pred[j] = min(max(y[j] + h * f1[j], lower[j]), upper[j])


@njit(**KERNEL, inline="always")
def heun_correct(y: np.ndarray, f1: np.ndarray, f2: np.ndarray, h: float,
                 lower: np.ndarray, upper: np.ndarray, nxt: np.ndarray, cols: np.ndarray,
                 n_cols: int) -> None:
    """Heun's corrector (the trapezoid of both slopes) projected onto the box, into
    ``nxt``; only the columns ``cols[:n_cols]``."""
    for jj in range(n_cols):
        j = cols[jj]
        nxt[j] = min(max(y[j] + 0.5 * h * (f1[j] + f2[j]), lower[j]), upper[j])


@dataclass(frozen=True)
class DdeSystem:
    """A compiled DDE model ready for :func:`solve`.

    ``integrate(step_s, n_steps)`` runs the model's compiled loop on the grid and returns
    its :class:`Trajectory`; ``stiff_rates`` names each fast linear rate of the model
    (1/s) so that a refused step says which component forces it; ``summary`` turns a
    :class:`Trajectory` into the metrics the convergence check compares (name -> (value,
    absolute floor)); ``oscillation_columns`` are the state columns checked for grid-scale
    oscillation.
    """

    integrate: Callable[[float, int], Trajectory]
    min_delay_s: float
    stiff_rates: Mapping[str, float]
    summary: Callable[[Trajectory], Mapping[str, tuple[float, float]]]
    oscillation_columns: tuple[int, ...] = ()


@dataclass(frozen=True)
class Trajectory:
    """States ``y`` and signals ``s`` on the grid ``t_k = k step_s`` (rows are times).

    A model that skips entries (classes not started yet, classes merged into another,
    rows inside a multi-row step of columns it did not read there) says so in ``layout``
    and reports the first row with a non-finite state it computed
    in ``nonfinite_row`` (-1: none); with ``nonfinite_row`` None every entry of ``y`` is
    checked. A model whose steps may span several rows names the rows its steps ended
    at in ``step_rows`` (None: every row).
    """

    y: np.ndarray
    s: np.ndarray
    step_s: float
    nonfinite_row: int | None = None
    layout: Any = None
    step_rows: np.ndarray | None = None

    @functools.cached_property
    def t(self) -> np.ndarray:
        """The grid times (s), made on first use (a convergence check's run needs none)."""
        return np.arange(self.y.shape[0]) * self.step_s

    def first_row_at(self, time_s: float) -> int:
        """The first row whose time is >= ``time_s`` (the last row if none is): what
        ``np.searchsorted(t, time_s)`` finds, without making ``t``."""
        last = self.y.shape[0] - 1
        if not time_s > 0.0:
            return 0
        row = min(math.ceil(time_s / self.step_s), last)
        while row > 0 and float(row - 1) * self.step_s >= time_s:
            row -= 1
        while row < last and float(row) * self.step_s < time_s:
            row += 1
        return row


@dataclass
class ConvergenceReport:
    """How much each summary metric moved when the step was halved."""

    step_s: float
    half_step_s: float
    changes: dict[str, float] = field(default_factory=dict)
    tolerance: float = CONVERGENCE_TOLERANCE

    @property
    def worst(self) -> tuple[str, float]:
        """The metric that moved most and its relative change."""
        if not self.changes:
            return ("", 0.0)
        name = max(self.changes, key=lambda n: self.changes[n])
        return name, self.changes[name]

    @property
    def converged(self) -> bool:
        """Every metric moved by less than the tolerance."""
        return self.worst[1] < self.tolerance


def _integrate(system: DdeSystem, step_s: float, horizon_s: float) -> Trajectory:
    traj = system.integrate(step_s, math.ceil(horizon_s / step_s - 1e-9))
    _check_finite_and_smooth(system, traj)
    return traj


@njit(**KERNEL)
def _direction_flips(values: np.ndarray) -> tuple[int, int]:
    """Steps of ``values`` that reverse the previous step's direction, and steps that
    could (both moving by more than rounding noise of the column's range)."""
    low = high = values[0]
    top = 0.0
    for v in values:
        low = min(low, v)
        high = max(high, v)
        top = max(top, abs(v))
    noise = 1e-9 * max(high - low, 1e-6 * top, 1e-12)
    flips = both = 0
    for i in range(2, values.shape[0]):
        d0 = values[i - 1] - values[i - 2]
        d1 = values[i] - values[i - 1]
        if abs(d0) > noise and abs(d1) > noise:
            both += 1
            if d0 * d1 < 0:
                flips += 1
    return flips, both


def _check_finite_and_smooth(system: DdeSystem, traj: Trajectory) -> None:
    first = traj.nonfinite_row
    if first is None and not np.isfinite(traj.y).all():
        first = int(np.argmax(~np.isfinite(traj.y).all(axis=1)))
    if first is not None and first >= 0:
        raise IntegrationError(
            f"the integration diverged: non-finite state at t = {traj.t[first]:.6g} s "
            f"(step {traj.step_s:.3g} s); the model or its parameters are unstable")
    for col in system.oscillation_columns:
        # A smooth solution changes direction only at its extrema, a handful of steps; an
        # explicit method past its stability limit flips at almost every step. (Rows
        # inside a multi-row step are interpolated: they can neither flip nor show one.)
        values = traj.y[:, col] if traj.step_rows is None else traj.y[traj.step_rows, col]
        flips, both = _direction_flips(np.ascontiguousarray(values))
        share = flips / max(both, 1)
        if share > 0.25 and flips > 10:
            raise IntegrationError(
                f"numerical instability: state column {col} alternates direction at "
                f"{share:.0%} of the steps (grid step {traj.step_s:.3g} s)")


def choose_step(system: DdeSystem, step_s: float | None, horizon_s: float,
                max_steps: int) -> float:
    """The step to use: the requested one, bounded by the delays and the fastest rate."""
    fastest_name, fastest = max(system.stiff_rates.items(), key=lambda kv: kv[1])
    bound = min(system.min_delay_s / 10, STEP_RATE_BOUND / fastest)
    step = bound if step_s is None else float(step_s)
    if step <= 0:
        raise StiffModelError(f"the step must be > 0 (got {step_s})")
    if step > bound:
        raise StiffModelError(
            f"step {step:.3g} s is too coarse: {fastest_name} has rate {fastest:.4g} 1/s and "
            f"the shortest delay is {system.min_delay_s:.4g} s, so the step must be "
            f"<= {bound:.3g} s")
    # The convergence check runs at half this step, so budget for that run.
    if horizon_s / (step / 2) > max_steps:
        raise StiffModelError(
            f"stiff model: {fastest_name} has rate {fastest:.4g} 1/s, which needs a step "
            f"<= {bound:.3g} s, i.e. {horizon_s / (step / 2):.3g} steps for {horizon_s} s "
            f"(budget {max_steps}); shorten the horizon, raise max_steps or slow the component")
    return step


def compare(system: DdeSystem, coarse: Trajectory, fine: Trajectory) -> ConvergenceReport:
    """Relative change of each summary metric between two runs (floors avoid 0/0)."""
    a, b = system.summary(coarse), system.summary(fine)
    report = ConvergenceReport(coarse.step_s, fine.step_s)
    for name, (value, floor) in b.items():
        ref = max(abs(value), floor)
        report.changes[name] = abs(a[name][0] - value) / ref
    return report


def solve(system: DdeSystem, horizon_s: float, step_s: float | None = None,
          check_convergence: bool = True, max_steps: int = 20_000_000,
          refinements: int = 3, check_step: CheckStep = "double"
          ) -> tuple[Trajectory, ConvergenceReport | None]:
    """Integrate ``system`` to ``horizon_s``; with ``check_convergence`` check the step.

    ``check_step="double"`` (the default) compares the run with one at twice the step:
    Richardson's comparison on the coarser grid, half the cost of a second run at half
    the step, and the returned run is the finer of the two. ``"half"`` compares it with a
    run at half the step and returns that one (twice the cost; the reference the default
    is tested against). Either way, if a summary metric moved by 0.5 % or more (or the
    coarser run is not a solution), the step is halved until none does, up to
    ``refinements`` times (sliding modes at a full queue or a marking threshold converge
    only at first order); then :class:`ConvergenceError` names the metric. Returns the
    finest trajectory and the last comparison.
    """
    if not horizon_s > 0:
        raise StiffModelError(f"the horizon must be > 0 s (got {horizon_s})")
    if check_step not in ("double", "half"):
        raise ValueError(f"check_step must be 'double' or 'half' (got {check_step!r})")
    step = choose_step(system, step_s, horizon_s, max_steps)
    coarse = _integrate(system, step, horizon_s)
    if not check_convergence:
        return coarse, None
    if check_step == "double":
        try:
            report = compare(system, _integrate(system, 2 * step, horizon_s), coarse)
        except IntegrationError:
            pass  # twice the step is past the method's stability: check at half the step
        else:
            if report.converged:
                return coarse, report
    for _ in range(refinements + 1):
        if horizon_s / (coarse.step_s / 2) > max_steps:
            break
        fine = _integrate(system, coarse.step_s / 2, horizon_s)
        report = compare(system, coarse, fine)
        if report.converged:
            return fine, report
        coarse = fine
    name, change = report.worst
    raise ConvergenceError(
        f"not converged: halving the step from {report.step_s:.3g} s still changed {name} "
        f"by {change:.2%} (tolerance {report.tolerance:.1%}); pass a smaller step_s or a "
        "larger max_steps")
