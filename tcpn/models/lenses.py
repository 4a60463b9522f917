"""The one front door: evaluate a scenario with a lens (net, fluid or ns-3), get one result.

``evaluate(scenario, lens="net", seed=..., replications=...)`` is to tcpn what
``solve_ivp(..., method=...)`` is to SciPy: the lens is a class registered by name, every
lens returns the same :class:`~tcpn.models.traces.ScenarioResult`, and the metrics come
from one module (:mod:`tcpn.validation.metrics`) whichever lens produced the trace.

The lens protocol
-----------------
A lens is a class, constructed with the keyword ``options`` given to :func:`evaluate`
(e.g. ``max_step_s`` for the fluid lens), with two methods::

    class MyLens:
        name = "mine"

        def check(self, scenario: Scenario) -> None:
            # raise tcpn.errors.InputError naming every feature this lens cannot express
            # (e.g. "links[3].ab.queue: sgpq is not supported by the fluid lens");
            # never run a silently different experiment.

        def run(self, run: Run, trace: TraceWriter, progress: Progress) -> dict[str, Any]:
            # simulate run.flows (concrete connections, start times already drawn) over
            # [0, run.scenario.horizon_s], writing events into ``trace``; use only
            # run.rng() / run.lens_seed for randomness; call progress(model_time_s) now and
            # then; return provenance (versions, solver settings...) as JSON-ready data.

What every lens must write into the trace (see :mod:`tcpn.models.traces`):

* ``flow_events`` ``send``, ``retransmit``, ``recv``, ``deliver``, ``ack`` and, when they
  happen, ``drop`` (data segments only), ``ack_drop``, ``mark``, ``timeout``, with sequence
  numbers as byte offsets (packet lenses), or aggregated rows with ``seq = -1`` and
  fractional ``bytes``/``count`` (fluid);
* ``flow_series`` ``cwnd_bytes`` and ``ssthresh_bytes`` at every change (when
  ``trace.cwnd``), ``rtt_s`` samples (when ``trace.rtt``);
* ``queue_events`` of the queues in ``run.scenario.traced_queues()``: ``enqueue``,
  ``dequeue``, ``drop``, ``mark`` with the length after the event (or ``sample`` rows).

Do not compute summary metrics in a lens: :func:`evaluate` does, with
:func:`tcpn.validation.metrics.summarize`. Register a lens by adding one entry to
:data:`LENSES` (a dotted path, imported only when used, so :mod:`tcpn.models` never imports
the higher layers) or at run time with :func:`register_lens`.

Seeds
-----
Run ``i`` of seed ``s`` uses ``SeedSequence(s).spawn(N)[i]`` (= ``SeedSequence(s,
spawn_key=(i,))``, as :func:`tcpn.petrinets.independent_seeds`); a single run is run 0.
The scenario's own draws (start times...) use that sequence's child
``SCENARIO_STREAM`` and the lens its child ``LENS_STREAM``, so all lenses see the same
start times for the same seed, and a run's result does not depend on how many runs there
are or on which worker ran it.

>>> from tcpn.models.scenario import dumbbell
>>> run = make_run(dumbbell(pairs=1, horizon_s=1.0), seed=7, replication=2)
>>> run.seed.spawn_key, run.lens_seed.spawn_key
((2,), (2, 1))
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, overload, runtime_checkable

import numpy as np

from tcpn.errors import InputError, TcpnError
from tcpn.models.scenario import (
    LENS_STREAM,
    ConcreteFlow,
    Scenario,
    load_scenario,
)
from tcpn.models.traces import ScenarioResult, TraceWriter, atomic_directory, provenance

if TYPE_CHECKING:
    from tcpn.solvers.replications import ReplicationResult

__all__ = [
    "LENSES", "Lens", "LensError", "Progress", "Run", "evaluate", "get_lens", "make_run",
    "register_lens", "run_once", "run_seeds",
]

Progress = Callable[..., None]
"""Called by a lens with the model time reached (seconds) and, when the lens counts them,
``firings=`` the events simulated so far (the net lens: transition firings). A callback
given to :func:`evaluate` may take the model time alone: :func:`run_once` adapts it."""

LENSES: dict[str, str | type] = {
    "net": "tcpn.models.net_lens:NetLens",
    "fluid": "tcpn.solvers.fluid_lens:FluidLens",
    "ns3": "tcpn.validation.ns3:Ns3Lens",
}
"""Lens name -> class, or ``"module:Class"`` imported on first use."""

INSTALL_HINTS = {"ns": "pip install 'tcpn[ns3]'", "cppyy": "pip install 'tcpn[ns3]'"}

_METRICS = "tcpn.validation.metrics:summarize"
_SUMMARY = "tcpn.validation.summary:SummaryStream"
_REPLICATE = "tcpn.solvers.replications:replicate"


class LensError(TcpnError):
    """A lens cannot be used here (unknown name, module missing, optional extra absent)."""


@runtime_checkable
class Lens(Protocol):
    """What a lens implements (see the module docstring)."""

    name: ClassVar[str]

    def check(self, scenario: Scenario) -> None:
        """Raise :class:`~tcpn.errors.InputError` for features this lens cannot express."""

    def run(self, run: Run, trace: TraceWriter, progress: Progress) -> dict[str, Any]:
        """Simulate ``run`` into ``trace``; return provenance."""


@dataclass(frozen=True)
class Run:
    """One run handed to a lens: the scenario, its concrete flows, its seed."""

    scenario: Scenario
    flows: tuple[ConcreteFlow, ...]
    seed: np.random.SeedSequence
    replication: int

    @property
    def lens_seed(self) -> np.random.SeedSequence:
        """The lens's own stream (child ``LENS_STREAM`` of the run's seed)."""
        return np.random.SeedSequence(self.seed.entropy,
                                      spawn_key=(*self.seed.spawn_key, LENS_STREAM))

    def rng(self) -> np.random.Generator:
        """A fresh generator on the lens's stream."""
        return np.random.default_rng(self.lens_seed)

    def int_seed(self, bits: int = 31) -> int:
        """A positive integer derived from the lens's stream, for engines that want an int
        (e.g. ns-3's ``RngRun``)."""
        return int(self.lens_seed.generate_state(1, np.uint64)[0] % ((1 << bits) - 1)) + 1

    def seed_record(self) -> dict[str, Any]:
        """JSON-ready description of the seed, stored in the result."""
        return {"entropy": self.seed.entropy, "spawn_key": list(self.seed.spawn_key),
                "replication": self.replication}


def run_seeds(seed: int, replications: int) -> list[np.random.SeedSequence]:
    """Seed sequences of runs ``0 .. replications-1`` of ``seed``.

    >>> [s.spawn_key for s in run_seeds(5, 3)]
    [(0,), (1,), (2,)]
    """
    if replications < 1:
        raise InputError(f"replications must be >= 1, got {replications}")
    return [np.random.SeedSequence(seed, spawn_key=(i,)) for i in range(replications)]


def make_run(scenario: Scenario, seed: int | None = None, replication: int = 0) -> Run:
    """The :class:`Run` for replication ``replication`` of ``seed`` (default: the scenario's)."""
    base = scenario.seed if seed is None else seed
    seq = np.random.SeedSequence(base, spawn_key=(replication,))
    return Run(scenario=scenario, flows=tuple(scenario.concrete_flows(seq)), seed=seq,
               replication=replication)


def register_lens(name: str, target: str | type) -> None:
    """Register a lens class (or its ``"module:Class"`` path) under ``name``."""
    LENSES[name] = target


def _resolve(target: str, what: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise LensError(f"{what} is not available: module {module_name} is missing from "
                            "this installation") from None
        hint = INSTALL_HINTS.get((exc.name or "").split(".")[0])
        raise LensError(f"{what} needs the Python package {exc.name!r}"
                        + (f": {hint}" if hint else "")) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise LensError(f"{what}: {module_name} defines no {attr}") from None


def get_lens(name: str) -> type:
    """The lens class registered as ``name``.

    >>> get_lens("telepathy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tcpn.models.lenses.LensError: unknown lens 'telepathy'; lenses: net, fluid, ns3...
    """
    try:
        target = LENSES[name]
    except KeyError:
        raise LensError(f"unknown lens {name!r}; lenses: {', '.join(LENSES)}") from None
    if isinstance(target, str):
        target = _resolve(target, f"lens {name!r}")
        LENSES[name] = target
    return target


def _as_scenario(scenario: Scenario | str | Path) -> Scenario:
    return scenario if isinstance(scenario, Scenario) else load_scenario(scenario)


def run_once(scenario: Scenario, lens: str, run: Run, output: Path | None = None,
             options: dict[str, Any] | None = None, progress: Progress | None = None,
             overwrite: bool = False) -> ScenarioResult:
    """Run one lens on one :class:`Run`; summarise; write to ``output`` if given.

    With ``output`` the trace streams to Parquet in a temporary directory renamed to
    ``output`` only when the result is complete (an existing tcpn output is replaced only
    with ``overwrite``: :func:`tcpn.outputs.atomic_directory`); the summary metrics follow
    the chunks as they are written (:class:`~tcpn.validation.summary.SummaryStream`), and
    the result's trace reads its files only when used, so memory does not grow with the
    horizon.
    """
    engine = get_lens(lens)(**(options or {}))
    engine.check(scenario)
    tick = _progress_hook(progress)
    start = time.perf_counter()
    if output is None:
        writer = TraceWriter(scenario, run.flows)
        stream = _summary_stream(scenario, writer)
        lens_provenance = _run_lens(engine, run, writer, tick)
        return _finish(scenario, lens, run, writer, lens_provenance, start, stream)
    with atomic_directory(Path(output), overwrite) as tmp:
        writer = TraceWriter(scenario, run.flows, directory=tmp)
        stream = _summary_stream(scenario, writer)
        lens_provenance = _run_lens(engine, run, writer, tick)
        result = _finish(scenario, lens, run, writer, lens_provenance, start, stream)
        result.write_json(tmp)
    result.trace.moved(Path(output).absolute())
    return result


def _summary_stream(scenario: Scenario, writer: TraceWriter) -> Any:
    """The summary of the scenario's measurement window, fed every chunk ``writer`` writes."""
    stream = _resolve(_SUMMARY, "the metrics module")(
        writer.flows, writer.queues, scenario.measure.warmup_s, scenario.horizon_s,
        writer.untraced)
    writer.observe(stream.add)
    return stream


def _progress_hook(progress: Progress | None) -> Progress:
    """``progress`` as a lens calls it (``firings=`` dropped for a callback without it)."""
    if progress is None:
        return lambda _t, firings=None: None
    try:
        takes_firings = "firings" in inspect.signature(progress).parameters
    except (TypeError, ValueError):
        takes_firings = False
    if takes_firings:
        return progress
    return lambda now_s, firings=None: progress(now_s)


def _run_lens(engine: Any, run: Run, writer: TraceWriter, tick: Progress) -> dict[str, Any]:
    try:
        return dict(engine.run(run, writer, tick) or {})
    except BaseException:
        writer.abort()
        raise


def _finish(scenario: Scenario, lens: str, run: Run, writer: TraceWriter,
            lens_provenance: dict[str, Any], start: float, stream: Any) -> ScenarioResult:
    """The result; its summary from ``stream``, or from the trace read back and sorted when
    the lens wrote a queue's or a flow's rows out of time order."""
    trace = writer.close()
    wall = time.perf_counter() - start
    result = ScenarioResult(scenario=scenario, lens=lens, seed=run.seed_record(),
                            wall_time_s=wall, trace=trace,
                            provenance=provenance(lens=lens_provenance))
    summary = stream.summary()
    result.summary = summary if summary is not None else \
        _resolve(_METRICS, "the metrics module")(trace)
    return result


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
    :class:`~tcpn.solvers.replications.ReplicationResult` gives means with 95 % confidence
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
    replicate = _resolve(_REPLICATE, "replications")
    result: ReplicationResult = replicate(
        scenario, lens=lens, seed=seed, replications=replications, output=output,
        workers=workers, progress=progress, options=options, overwrite=overwrite)
    return result
