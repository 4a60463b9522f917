"""The closed-form machinery: a SymPy expression derived once, evaluated through NumPy.

Each model in :mod:`tcpn.solvers.closed_forms` is a plain Python function with units in
its parameter names that checks its assumptions and then evaluates a SymPy expression
compiled once with :func:`sympy.lambdify`. The :func:`closed_form` decorator turns such a
function into a :class:`ClosedForm`: still callable as before, and also carrying its
symbolic form (``mathis_pps.symbolic()``), its LaTeX, and inverses (``solve_for``) for
derivations such as "which loss rate gives this throughput".

Assumption checks raise :class:`AssumptionError` (an :class:`~tcpn.errors.InputError`)
when a formula is meaningless (p >= 1, RTT <= 0, N = 0) and warn with
:class:`AssumptionWarning` when it is defined but outside its validated range (Mathis at
p = 5 %).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import sympy as sp
from scipy.optimize import brentq

from tcpn.errors import InputError

__all__ = [
    "AssumptionError",
    "AssumptionWarning",
    "ClosedForm",
    "closed_form",
    "require",
    "require_positive",
    "require_probability",
    "warn_outside",
]


class AssumptionError(InputError):
    """A parameter violates an assumption without which a model has no meaning."""


class AssumptionWarning(UserWarning):
    """A parameter lies outside the range where a model was validated."""


def require(condition: Any, model: str, assumption: str) -> None:
    """Raise :class:`AssumptionError` naming ``model`` and ``assumption`` unless all hold.

    >>> require(np.array([0.1, 0.2]) < 1, "mathis", "loss_rate < 1")
    >>> require(False, "mathis", "loss_rate < 1")
    Traceback (most recent call last):
    ...
    tcpn.solvers.closed_forms.formula.AssumptionError: mathis: assumption violated: loss_rate < 1
    """
    if not bool(np.all(condition)):
        raise AssumptionError(f"{model}: assumption violated: {assumption}")


def require_positive(model: str, **values: Any) -> None:
    """Every named value must be > 0 (delays, rates, sizes, counts); +inf is allowed.

    >>> require_positive("m", rtt_s=0.0)
    Traceback (most recent call last):
    ...
    tcpn.solvers.closed_forms.formula.AssumptionError: m: assumption violated: rtt_s > 0 (got 0.0)
    """
    for name, value in values.items():
        arr = np.asarray(value, dtype=float)
        if not (np.all(~np.isnan(arr)) and np.all(arr > 0)):
            raise AssumptionError(f"{model}: assumption violated: {name} > 0 (got {value})")


def require_probability(model: str, *, open_upper: bool = True, **values: Any) -> None:
    """Every named value must be a probability in (0, 1) (or (0, 1] with ``open_upper=False``).

    >>> require_probability("m", p=1.0)
    Traceback (most recent call last):
    ...
    tcpn.solvers.closed_forms.formula.AssumptionError: m: assumption violated: 0 < p < 1 (got 1.0)
    """
    for name, value in values.items():
        arr = np.asarray(value, dtype=float)
        upper_ok = arr < 1 if open_upper else arr <= 1
        if not (np.all(arr > 0) and np.all(upper_ok)):
            bound = "< 1" if open_upper else "<= 1"
            raise AssumptionError(
                f"{model}: assumption violated: 0 < {name} {bound} (got {value})"
            )


def warn_outside(condition: Any, model: str, assumption: str) -> None:
    """Warn with :class:`AssumptionWarning` where ``condition`` (the validated range) fails.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_outside(0.05 <= 0.02, "mathis", "loss_rate <= 0.02 (timeouts ignored)")
    >>> str(caught[0].message)
    'mathis: outside the validated range: loss_rate <= 0.02 (timeouts ignored)'
    """
    if not bool(np.all(condition)):
        warnings.warn(f"{model}: outside the validated range: {assumption}",
                      AssumptionWarning, stacklevel=3)


class ClosedForm:
    """A documented model function paired with the SymPy expression it evaluates.

    Build one with :func:`closed_form`. Calling it runs the wrapped function (assumption
    checks, then :meth:`evaluate`); the symbolic side serves reports and derivations.
    """

    def __init__(self, func: Callable[..., Any], expr: sp.Expr, unit: str,
                 symbols: Mapping[str, sp.Symbol]) -> None:
        self.func = func
        self.expr = expr
        self.unit = unit
        self.symbols = dict(symbols)
        functools.update_wrapper(self, func)

    @functools.cached_property
    def _numeric(self) -> Callable[..., Any]:
        # Compiled on first use: lambdify of the larger forms costs a second at import.
        return sp.lambdify(list(self.symbols.values()), self.expr, modules="numpy")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<closed form {self.func.__name__} [{self.unit}] = {self.expr}>"

    def evaluate(self, **values: Any) -> Any:
        """The expression at ``values`` (by parameter name), without assumption checks.

        Scalars give a float, arrays broadcast and give an array.
        """
        missing = set(self.symbols) - set(values)
        if missing:
            raise InputError(f"{self.func.__name__}: missing parameters {sorted(missing)}")
        result = self._numeric(*(np.asarray(values[n], dtype=float) for n in self.symbols))
        result = np.asarray(result, dtype=float)
        return float(result) if result.ndim == 0 else result

    def symbolic(self) -> sp.Expr:
        """The SymPy expression; its symbols are listed in :attr:`symbols` by parameter name."""
        return self.expr

    def latex(self) -> str:
        """The expression as LaTeX, for reports."""
        return sp.latex(self.expr)

    def solve_symbolic(self, name: str) -> list[sp.Expr]:
        """Closed-form inverses: the expressions of parameter ``name`` giving output ``y``.

        The output is the symbol ``y``; SymPy may find no closed form (then the list is
        empty and :meth:`solve_for` still works numerically).
        """
        target = sp.Symbol("y", positive=True)
        return list(sp.solve(sp.Eq(self.expr, target), self._symbol(name)))

    def solve_for(self, name: str, target: float, bracket: tuple[float, float],
                  **known: float) -> float:
        """The value of parameter ``name`` in ``bracket`` at which the output equals ``target``.

        A numeric root (Brent) of the lambdified expression with the other parameters
        fixed at ``known``; the bracket must enclose a sign change.
        """
        self._symbol(name)
        lo, hi = bracket

        def gap(value: float) -> float:
            return float(self.evaluate(**{**known, name: value})) - target

        g_lo, g_hi = gap(lo), gap(hi)
        if g_lo * g_hi > 0:
            raise InputError(
                f"{self.func.__name__}: target {target} {self.unit} is not reached for "
                f"{name} in [{lo}, {hi}] (outputs {g_lo + target:.6g} .. {g_hi + target:.6g})"
            )
        return float(brentq(gap, lo, hi, xtol=1e-14 * max(1.0, abs(hi)), rtol=1e-12))

    def _symbol(self, name: str) -> sp.Symbol:
        if name not in self.symbols:
            raise InputError(f"{self.func.__name__} has no parameter {name!r}; "
                             f"parameters: {sorted(self.symbols)}")
        return self.symbols[name]


def closed_form(expr: sp.Expr, unit: str,
                **symbols: sp.Symbol) -> Callable[[Callable[..., Any]], ClosedForm]:
    """Decorate a model function with the SymPy expression it evaluates.

    ``symbols`` maps each parameter name of the function (with its unit) to the SymPy
    symbol standing for it in ``expr``; the function body checks assumptions and returns
    ``<name>.evaluate(...)``.

    >>> R, p = sp.symbols("R p", positive=True)
    >>> @closed_form(sp.sqrt(3 / (2 * p)) / R, "pkt/s", rtt_s=R, loss_rate=p)
    ... def periodic(rtt_s, loss_rate):
    ...     '''Mathis with b = 1.'''
    ...     return periodic.evaluate(rtt_s=rtt_s, loss_rate=loss_rate)
    >>> round(periodic(0.1, 0.01), 3)
    122.474
    >>> periodic.solve_symbolic("loss_rate")
    [3/(2*R**2*y**2)]
    >>> round(periodic.solve_for("loss_rate", 122.474487, (1e-6, 0.5), rtt_s=0.1), 6)
    0.01
    """

    def wrap(func: Callable[..., Any]) -> ClosedForm:
        return ClosedForm(func, expr, unit, symbols)

    return wrap
