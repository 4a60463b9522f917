"""Statistical checking: how likely a time-bounded property is, from simulated runs.

Exhaustive search answers "on every path"; a bulk sender over a lossy path, or a net whose
space does not close, needs "on how many runs". This module answers ``P[phi] >= p`` for a
time-bounded path formula ``phi`` (``F<=T f`` or ``G<=T f``, with ``f`` propositional:
token counts, sums, ``true``/``false``, Python predicates and their boolean combinations),
with the probability of the **simulator's** semantics (CPN Tools' simulation rule: at each
step every enabled binding is equally likely, random delays drawn from their distributions):

* :func:`estimate`: ``n`` runs, the share that satisfy ``phi`` with its exact
  (Clopper-Pearson) confidence interval;
* :func:`probability_at_least`: Wald's sequential probability ratio test of
  ``P >= p + delta`` against ``P <= p - delta`` (``delta`` the indifference half-width)
  with error bounds ``alpha`` (saying FALSE when ``P >= p + delta``) and ``beta`` (saying
  TRUE when ``P <= p - delta``): it runs until the evidence decides, at most ``max_runs``
  runs, and says UNKNOWN if they do not suffice. Inside the indifference region either
  answer may come (Wald, "Sequential tests of statistical hypotheses", Ann. Math. Statist.
  16, 1945; Younes and Simmons, "Statistical probabilistic model checking with a focus on
  time-bounded properties", Inf. Comput. 204, 2006).

A run is decided as soon as it can be: ``F<=T f`` when ``f`` first holds at a model time
``<= T`` (every firing at a time ``<= T`` counts, the initial marking included), ``G<=T f``
when ``f`` first fails; a run that dies (no binding ever enabled again) keeps its last
marking for ever. A run stopped by ``max_firings`` before ``T`` (a net that lets no time
pass) is *undecided*: counted and reported, never taken as a success or a failure.
Run ``i`` draws from ``SeedSequence(seed).spawn`` 's ``i``-th stream, as replication ``i``
of a simulation with that seed, so results are reproducible and a longer test extends a
shorter one.

>>> from tcpn.petrinets.examples import stop_and_wait
>>> from tcpn.petrinets.checking.formulas import FWithin, tokens
>>> found = estimate(stop_and_wait(), FWithin(tokens("delivered") >= 2, 3.0), runs=400)
>>> found.runs, 0.05 < found.probability < 0.2  # exactly 1/8: three fair choices
(400, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import binomtest

from tcpn.errors import InputError
from tcpn.petrinets.checking.formulas import (
    COMPARISONS,
    A,
    And,
    Bool,
    Compare,
    Const,
    E,
    Formula,
    FWithin,
    GWithin,
    Not,
    Numeric,
    Or,
    Predicate,
    Sum,
    Tokens,
)
from tcpn.petrinets.checking.text import to_text
from tcpn.petrinets.checking.verdicts import Verdict
from tcpn.petrinets.engine.compiler import CompiledNet, compile_net
from tcpn.petrinets.engine.simulator import Simulator
from tcpn.petrinets.net import PetriNet

__all__ = ["Estimate", "SequentialVerdict", "estimate", "path_formula",
           "probability_at_least"]

#: Firings one run may take before it counts as undecided (a net that lets no time pass).
DEFAULT_MAX_FIRINGS = 1_000_000


@dataclass(frozen=True)
class Estimate:
    """The share of decided runs that satisfy the formula, with its exact interval."""

    formula: Formula
    runs: int
    satisfied: int
    undecided: int
    confidence: float
    low: float
    high: float

    @property
    def probability(self) -> float:
        """The point estimate ``satisfied / decided runs``."""
        decided = self.runs - self.undecided
        return self.satisfied / decided if decided else math.nan

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (the probability is null when no run decided)."""
        decided = self.runs - self.undecided
        return {"formula": to_text(self.formula),
                "probability": self.probability if decided else None,
                "runs": self.runs, "satisfied": self.satisfied, "undecided": self.undecided,
                "confidence": self.confidence, "low": self.low, "high": self.high}

    def __str__(self) -> str:
        undecided = f", {self.undecided} undecided" if self.undecided else ""
        return (f"P = {self.probability:.4f} ({self.satisfied} of "
                f"{self.runs - self.undecided} runs{undecided}), "
                f"{self.confidence:.0%} interval [{self.low:.4f}, {self.high:.4f}]")


@dataclass(frozen=True)
class SequentialVerdict:
    """The answer of Wald's test of ``P[formula] >= threshold``, with the runs it took."""

    answer: Literal["TRUE", "FALSE", "UNKNOWN"]
    threshold: float
    indifference: float
    alpha: float
    beta: float
    estimate: Estimate

    def to_verdict(self, seconds: float = 0.0) -> Verdict:
        """As the checkers' :class:`Verdict`: the answer, ``P>=p [path]`` as the formula,
        the estimate as its value and, in its reason, the runs and the test's errors."""
        return Verdict(self.answer.lower(),  # type: ignore[arg-type]
                       f"P>={self.threshold:g} [{to_text(self.estimate.formula)}]",
                       seconds=seconds, technique=("STATISTICAL", "SPRT"),
                       reason=(f"{self.estimate}; indifference +-{self.indifference:g}, "
                               f"alpha {self.alpha:g}, beta {self.beta:g}"),
                       value=self.estimate.probability)

    def __str__(self) -> str:
        return (f"P >= {self.threshold:g}: {self.answer} after {self.estimate.runs} runs "
                f"(indifference +-{self.indifference:g}, errors alpha {self.alpha:g}, "
                f"beta {self.beta:g}); {self.estimate}")


def path_formula(formula: Formula) -> FWithin | GWithin:
    """The time-bounded path formula a statistical check reads: ``F<=T f`` or ``G<=T f``,
    given bare or under one path quantifier (``AF<=T f`` is read as ``F<=T f``: the
    probability takes the quantifier's place). Anything else is refused, named."""
    inner = formula.path if isinstance(formula, (A, E)) else formula
    if not isinstance(inner, (FWithin, GWithin)):
        raise InputError("a statistical check reads one time-bounded path formula, "
                         f"F<=T f or G<=T f (also written AF<=T f); got {type(inner).__name__}")
    _require_propositional(inner.operand)
    return inner


def estimate(net: PetriNet | CompiledNet, formula: Formula, *, runs: int = 1000,
             confidence: float = 0.95, seed: int = 0,
             max_firings: int = DEFAULT_MAX_FIRINGS, engine: str | None = None) -> Estimate:
    """``runs`` simulated runs of ``net``: how many satisfy ``formula`` (see the module
    docstring), with the Clopper-Pearson interval at ``confidence``; ``engine`` as the
    simulator's (the same runs on every engine)."""
    if runs < 1:
        raise InputError(f"runs must be >= 1, got {runs}")
    _check_level("confidence", confidence)
    path = path_formula(formula)
    decide = _run_decider(_compiled(net), path, max_firings, engine)
    outcomes = [decide(stream) for stream in np.random.SeedSequence(seed).spawn(runs)]
    return _estimate(path, outcomes, confidence)


def probability_at_least(net: PetriNet | CompiledNet, formula: Formula, threshold: float, *,
                         indifference: float = 0.01, alpha: float = 0.05,
                         beta: float = 0.05, max_runs: int = 100_000, seed: int = 0,
                         confidence: float = 0.95,
                         max_firings: int = DEFAULT_MAX_FIRINGS,
                         engine: str | None = None) -> SequentialVerdict:
    """Whether ``P[formula] >= threshold`` by Wald's sequential test (module docstring):
    TRUE, FALSE, or UNKNOWN after ``max_runs`` runs; with the estimate of the runs made."""
    _check_level("threshold", threshold, closed=True)
    for name, value in (("alpha", alpha), ("beta", beta)):
        _check_level(name, value)
    if not 0 < indifference < 0.5:
        raise InputError(f"indifference must be in (0, 0.5), got {indifference}")
    if max_runs < 1:
        raise InputError(f"max_runs must be >= 1, got {max_runs}")
    path = path_formula(formula)
    decide = _run_decider(_compiled(net), path, max_firings, engine)
    high = min(threshold + indifference, 1.0 - 1e-12)  # H0: P >= high
    low = max(threshold - indifference, 1e-12)         # H1: P <= low
    step_success = math.log(low / high)
    step_failure = math.log((1 - low) / (1 - high))
    accept_h1, accept_h0 = math.log((1 - beta) / alpha), math.log(beta / (1 - alpha))
    ratio, answer = 0.0, "UNKNOWN"
    outcomes: list[bool | None] = []
    root = np.random.SeedSequence(seed)
    while len(outcomes) < max_runs:
        outcome = decide(root.spawn(1)[0])
        outcomes.append(outcome)
        if outcome is None:
            continue
        ratio += step_success if outcome else step_failure
        if ratio >= accept_h1:
            answer = "FALSE"
            break
        if ratio <= accept_h0:
            answer = "TRUE"
            break
    return SequentialVerdict(answer, threshold, indifference, alpha, beta,  # type: ignore[arg-type]
                             _estimate(path, outcomes, confidence))


def _compiled(net: PetriNet | CompiledNet) -> CompiledNet:
    return net if isinstance(net, CompiledNet) else compile_net(net)


def _run_decider(compiled: CompiledNet, path: FWithin | GWithin, max_firings: int,
                 engine: str | None) -> Callable[[np.random.SeedSequence], bool | None]:
    """A function of a run's random stream: whether the run satisfies ``path`` (None:
    stopped by ``max_firings`` before deciding)."""
    if not any(compiled.timed):
        raise InputError(f"{'F' if isinstance(path, FWithin) else 'G'}<={path.bound_s:g} "
                         f"on net {compiled.net.name!r}: a time bound needs a timed net "
                         "(no place here is timed)")
    holds = _state_test(path.operand)
    looking_for = isinstance(path, FWithin)  # F: the first state where it holds

    def decide(stream: np.random.SeedSequence) -> bool | None:
        sim = Simulator(compiled, seed=stream, engine=engine)
        if holds(sim) == looking_for:
            return looking_for
        result = sim.run(until=path.bound_s, max_firings=max_firings,
                         stop_when=lambda s: holds(s) == looking_for)
        if result.stop_reason == "predicate":
            return looking_for
        if result.stop_reason == "max_firings":
            return None
        return not looking_for

    return decide


def _state_test(formula: Formula) -> Callable[[Simulator], bool]:
    """``formula`` (propositional) as a test of the simulator's current marking."""
    if isinstance(formula, Bool):
        value = formula.value
        return lambda sim: value
    if isinstance(formula, Not):
        inner = _state_test(formula.operand)
        return lambda sim: not inner(sim)
    if isinstance(formula, (And, Or)):
        parts = [_state_test(f) for f in formula.operands]
        combine = all if isinstance(formula, And) else any
        return lambda sim: combine(part(sim) for part in parts)
    if isinstance(formula, Compare):
        left, right = _number(formula.left), _number(formula.right)
        compare = COMPARISONS[formula.op]
        return lambda sim: compare(left(sim), right(sim))
    if isinstance(formula, Predicate):
        function = formula.function
        return lambda sim: bool(function(sim.marking_dict(), sim.now))
    raise InputError(_not_propositional(formula))


def _number(expression: Numeric) -> Callable[[Simulator], float]:
    if isinstance(expression, Const):
        value = expression.value
        return lambda sim: value
    if isinstance(expression, Sum):
        terms = [_number(t) for t in expression.terms]
        return lambda sim: sum(term(sim) for term in terms)
    if isinstance(expression, Tokens):
        places, colour = expression.places, expression.value
        if colour is None:
            return lambda sim: sum(sim.count(p) for p in places)
        return lambda sim: sum(1 for p in places for token in sim.tokens(p)
                               if token.value == colour)
    raise InputError(_not_propositional(expression))


def _require_propositional(formula: Formula) -> None:
    _state_test(formula)  # builds the test, refusing what it cannot read


def _not_propositional(node: Any) -> str:
    return (f"a statistical check reads token counts, sums, constants, predicates and their "
            f"boolean combinations inside F<=T / G<=T; {type(node).__name__} is not one of "
            "them (fireability, deadlock and the clock are read by exhaustive checking)")




def _estimate(path: Formula, outcomes: list[bool | None], confidence: float) -> Estimate:
    satisfied = sum(1 for o in outcomes if o)
    undecided = sum(1 for o in outcomes if o is None)
    decided = len(outcomes) - undecided
    if decided:
        interval = binomtest(satisfied, decided).proportion_ci(confidence, method="exact")
        low, high = float(interval.low), float(interval.high)
    else:
        low, high = 0.0, 1.0
    return Estimate(path, len(outcomes), satisfied, undecided, confidence, low, high)


def _check_level(name: str, value: float, closed: bool = False) -> None:
    inside = 0 <= value <= 1 if closed else 0 < value < 1
    if not (isinstance(value, (int, float)) and math.isfinite(value) and inside):
        bounds = "[0, 1]" if closed else "(0, 1)"
        raise InputError(f"{name} must be a number in {bounds}, got {value!r}")
