"""The one front door: evaluate a scenario with a lens (net, fluid or ns-3), get one result.

``evaluate(scenario, lens="net", seed=..., replications=...)`` is to tcpn what
``solve_ivp(..., method=...)`` is to SciPy: the lens is a class registered by name
(:mod:`tcpn.lenses.registry`), implementing one protocol (:mod:`tcpn.lenses.base`), every
lens returns the same :class:`~tcpn.models.traces.ScenarioResult`, and the metrics come
from one module (:mod:`tcpn.models.metrics`) whichever lens produced the trace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, overload

from tcpn.lenses.base import Progress, make_run
from tcpn.lenses.registry import get_lens
from tcpn.lenses.replications import ReplicationResult, replicate
from tcpn.lenses.run import run_once
from tcpn.models.scenario import Scenario, load_scenario
from tcpn.models.traces import ScenarioResult

__all__ = ["evaluate"]


def _as_scenario(scenario: Scenario | str | Path) -> Scenario:
    return scenario if isinstance(scenario, Scenario) else load_scenario(scenario)


@overload
def evaluate(scenario: Scenario | str | Path, lens: str = ..., seed: int | None = ...,
             replications: None = ..., output: str | Path | None = ...,
             workers: int | None = ..., progress: Progress | None = ...,
             overwrite: bool = ..., **options: Any) -> ScenarioResult: ...


@overload
def evaluate(scenario: Scenario | str | Path, lens: str = ..., seed: int | None = ...,
             replications: int = ..., output: str | Path | None = ...,
             workers: int | None = ..., progress: Progress | None = ...,
             overwrite: bool = ..., **options: Any) -> ReplicationResult: ...


def evaluate(scenario: Scenario | str | Path, lens: str = "net", seed: int | None = None,
             replications: int | None = None, output: str | Path | None = None,
             workers: int | None = None, progress: Progress | None = None,
             overwrite: bool = False, **options: Any) -> ScenarioResult | ReplicationResult:
    """Evaluate ``scenario`` (a :class:`Scenario` or a YAML path) with ``lens``.

    ``seed`` defaults to the scenario's. Without ``replications`` one run (run 0) gives a
    :class:`~tcpn.models.traces.ScenarioResult`; with ``replications=N`` runs 0..N-1 go
    to local worker processes (``workers``, default: CPU count) and a
    :class:`~tcpn.lenses.replications.ReplicationResult` gives means with 95 % confidence
    intervals. ``output`` is a directory for the result (``rep-000``... per run when
    replicated; written whole or not at all, replacing an existing tcpn output only with
    ``overwrite``). ``progress`` receives model time (single run; and ``firings=`` if it
    takes that keyword) or runs completed.
    Other keyword arguments are the lens's options.

    >>> evaluate("scenarios/dumbbell_newreno.yaml", lens="net")  # doctest: +SKIP
    """
    scenario = _as_scenario(scenario)
    get_lens(lens)  # fail fast on an unknown or unavailable lens
    if replications is None:
        run = make_run(scenario, seed)
        return run_once(scenario, lens, run, Path(output) if output is not None else None,
                        options, progress, overwrite)
    result: ReplicationResult = replicate(
        scenario, lens=lens, seed=seed, replications=replications, output=output,
        workers=workers, progress=progress, options=options, overwrite=overwrite)
    return result
