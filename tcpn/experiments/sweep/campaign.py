"""Running a campaign: every run of a sweep that the store lacks, on any executor.

A campaign is a :class:`~tcpn.experiments.sweep.spec.Sweep` against a
:class:`~tcpn.experiments.sweep.store.CampaignStore`: each (cell, lens, replication) is one
run with its own key; :func:`run_campaign` submits only the runs the store does not hold
(so a campaign cut short resumes where it stopped, and a grid extended by new values runs
only the new cells), stores each result as it arrives, and a run that fails stores its
error in its record while the others go on. The worker returns the record and the parent
writes it, so workers need no access to the store (a remote Dask cluster does not share
the disk).

Run ``r`` of a cell uses ``SeedSequence(seed, spawn_key=(r,))``, as ``tcpn run
--replications``; a run's result depends only on its key, never on the executor, the
worker count or the order runs finish in.

What a cell evaluates is a *lens* of :data:`tcpn.lenses.registry.LENSES`, or any function
registered in :data:`EVALUATIONS` (``name -> "module:function"``; the function takes
``(scenario, seed, replication, options)`` and returns a JSON-ready summary), so another
evaluation (a model-checking verdict per cell) is one registry entry.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcpn import __version__
from tcpn.experiments.sweep.spec import Sweep
from tcpn.experiments.sweep.store import RECORD_FORMAT, CampaignStore, run_key
from tcpn.lenses import get_lens, make_run, streamed_run
from tcpn.lenses.ns3.worker import jobs_cpu_s
from tcpn.models.scenario import Scenario
from tcpn.outputs import json_ready
from tcpn.source import source_id

__all__ = ["EVALUATIONS", "CampaignPlan", "RunTask", "execute", "plan_campaign",
           "register_evaluation", "run_campaign", "run_summaries", "run_tasks", "sweep_tasks"]

EVALUATIONS: dict[str, str] = {}
"""Evaluations other than lenses: name -> ``"module:function"`` (see the module docstring)."""

Progress = Callable[[int, int, int], None]
"""Called with (runs done, of which failed, runs remaining)."""


def register_evaluation(name: str, target: str) -> None:
    """Make ``name`` usable in a sweep's ``lenses`` (``target`` is ``"module:function"``)."""
    EVALUATIONS[name] = target


@dataclass(frozen=True)
class RunTask:
    """One run, as sent to a worker (picklable)."""

    key: str
    cell: int
    scenario: Scenario
    lens: str
    options: tuple[tuple[str, Any], ...]
    seed: int
    replication: int
    keep_trace: bool = False
    evaluation: str | None = None


def execute(task: RunTask) -> tuple[dict[str, Any], dict[str, bytes] | None]:
    """Run ``task`` (in a worker): its record, and its trace files when asked to keep them.

    An exception of the run becomes the record's ``error``; Ctrl-C is not caught. Its
    CPU time counts the ns-3 jobs the run sent to its worker process. A lens's trace
    streams to a temporary directory removed once the record is made
    (:func:`~tcpn.lenses.run.streamed_run`), so a worker's memory does not grow with the
    horizon.
    """
    wall, cpu = time.perf_counter(), time.process_time() + jobs_cpu_s()
    summary: Any = None
    wireless: Any = None
    provenance: Any = {}
    error: str | None = None
    trace_files: dict[str, bytes] | None = None
    try:
        if task.evaluation is not None:
            module, _, name = task.evaluation.partition(":")
            evaluate = getattr(importlib.import_module(module), name)
            summary = evaluate(task.scenario, task.seed, task.replication, dict(task.options))
        else:
            run = make_run(task.scenario, task.seed, task.replication)
            with streamed_run(task.scenario, task.lens, run, dict(task.options)) as result:
                summary, provenance = result.summary, result.provenance
                wireless = result.provenance.get("lens", {}).get("wireless") or None
                if task.keep_trace:
                    with tempfile.TemporaryDirectory() as tmp:
                        result.trace.save(Path(tmp))
                        trace_files = {p.name: p.read_bytes()
                                       for p in sorted(Path(tmp).iterdir())}
    except Exception as exc:  # the run's record says what went wrong; the others go on
        error = f"{type(exc).__name__}: {exc}"
        summary, trace_files = None, None
    measure = task.scenario.measure
    record = {
        "format": RECORD_FORMAT, "key": task.key, "tcpn_version": __version__,
        "tcpn_source": source_id(),
        "lens": task.lens, "options": dict(task.options), "seed": task.seed,
        "replication": task.replication, "scenario_hash": task.scenario.content_hash(),
        "scenario": task.scenario.model_dump(mode="json", exclude={"name", "description"}),
        "measure": {"horizon_s": task.scenario.horizon_s, "warmup_s": measure.warmup_s,
                    "bin_s": measure.bin_s},
        "summary": summary, "wireless": wireless, "error": error,
        "trace": trace_files is not None,
        # how the run went, not what it found: left out of every results table
        "run": {"wall_time_s": time.perf_counter() - wall,
                "cpu_time_s": time.process_time() + jobs_cpu_s() - cpu,
                "provenance": provenance},
    }
    return json_ready(record), trace_files


@dataclass
class CampaignPlan:
    """Every run of a sweep, and which of them the store lacks."""

    sweep: Sweep
    tasks: list[RunTask]
    missing: list[RunTask]

    @property
    def invalid_cells(self) -> int:
        """Cells whose values make an invalid scenario (nothing to run)."""
        return sum(cell.error is not None for cell in self.sweep.cells())


def sweep_tasks(sweep: Sweep, keep_traces: bool = False) -> list[RunTask]:
    """Every run of ``sweep`` (cells in order, then lenses, then replications)."""
    tasks = []
    for cell in sweep.cells():
        if cell.scenario is None:
            continue
        for lens in sweep.lenses:
            evaluation = EVALUATIONS.get(lens.name)
            if evaluation is None:
                get_lens(lens.name)  # an unknown or unavailable lens fails before any run
            for replication in range(sweep.replications):
                seed = cell.scenario.seed
                tasks.append(RunTask(
                    run_key(cell.scenario, lens.name, dict(lens.options), seed, replication),
                    cell.index, cell.scenario, lens.name, lens.options, seed, replication,
                    keep_traces, evaluation))
    return tasks


def _needed(store: CampaignStore, task: RunTask, retry_failed: bool) -> bool:
    record = store.get(task.key)
    if record is None:
        return True
    if record.get("error") is not None:
        return retry_failed
    return task.keep_trace and not store.trace_path(task.key).is_dir()


def plan_campaign(sweep: Sweep, store: CampaignStore, keep_traces: bool = False,
                  retry_failed: bool = False) -> CampaignPlan:
    """The runs of ``sweep`` and those ``store`` lacks (a failed run counts as stored
    unless ``retry_failed``; a run stored without its trace is missing when traces are
    kept)."""
    tasks = sweep_tasks(sweep, keep_traces)
    return CampaignPlan(sweep, tasks, [t for t in tasks if _needed(store, t, retry_failed)])


def run_campaign(sweep: Sweep, store: CampaignStore, executor: cf.Executor | None = None,
                 keep_traces: bool = False, retry_failed: bool = False,
                 progress: Progress | None = None, window: int = 64) -> CampaignPlan:
    """Run what ``store`` lacks of ``sweep`` on ``executor`` (default: this process), as
    :func:`run_tasks` does. Returns the plan; the results are
    :func:`tcpn.experiments.sweep.results.load_results`.
    """
    plan = plan_campaign(sweep, store, keep_traces, retry_failed)
    run_tasks(plan.missing, store, executor, retry_failed=retry_failed, progress=progress,
              window=window)
    return plan


def run_tasks(tasks: Sequence[RunTask], store: CampaignStore | None,
              executor: cf.Executor | None = None, *, retry_failed: bool = False,
              progress: Progress | None = None, window: int = 64,
              on_record: Callable[[RunTask, dict[str, Any]], None] | None = None) -> None:
    """Run each of ``tasks`` that ``store`` lacks on ``executor`` (default: this process),
    storing each record as it arrives (without a store, every task runs) and handing it to
    ``on_record`` (a task another campaign stored meanwhile: its stored record).

    At most ``window`` runs are in flight at once (memory stays flat on large sweeps), and
    each is checked against the store again just before it is submitted, so two campaigns
    sharing a store skip what the other has stored meanwhile. One loop for every kind of
    campaign: a sweep file's (:func:`run_campaign`) and a study's experiments and axes.
    """
    from tcpn.experiments.sweep.executors import InlineExecutor

    pool = executor or InlineExecutor()
    queue = iter(tasks)
    pending: dict[cf.Future[Any], RunTask] = {}
    counts = [0, 0, len(tasks)]  # done, failed, remaining
    if progress is not None:
        progress(*counts)

    def finish(future: cf.Future[Any] | None, task: RunTask) -> None:
        record: dict[str, Any] | None
        if future is not None:
            record, trace_files = _outcome(future, task)
            if store is not None and record["tcpn_source"] is not None:
                store.put(record, trace_files)  # None: the worker itself failed
            counts[1] += record.get("error") is not None
        else:
            record = store.get(task.key) if store is not None else None
        if on_record is not None and record is not None:
            on_record(task, record)
        counts[0] += 1
        counts[2] -= 1
        if progress is not None:
            progress(*counts)

    def refill() -> None:
        while len(pending) < window:
            task = next(queue, None)
            if task is None:
                return
            if store is not None and not _needed(store, task, retry_failed):
                finish(None, task)  # another campaign stored it
                continue
            future = pool.submit(execute, task)
            if future.done():  # run in this process: store it now, not at the end
                finish(future, task)
            else:
                pending[future] = task

    refill()
    while pending:
        finished, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
        for future in finished:
            finish(future, pending.pop(future))
        refill()


def _outcome(future: cf.Future[Any], task: RunTask) -> tuple[dict[str, Any],
                                                              dict[str, bytes] | None]:
    """The worker's record; a worker that died or runs another tcpn gives an error record
    (not stored: the run is tried again next time)."""
    try:
        record, trace_files = future.result()
    except Exception as exc:
        return {"key": task.key, "tcpn_source": None,
                "error": f"the worker failed: {type(exc).__name__}: {exc}"}, None
    if record.get("tcpn_source") != source_id():
        return {"key": task.key, "tcpn_source": None,
                "error": f"the worker runs tcpn {record.get('tcpn_source')}, this campaign "
                         f"tcpn {source_id()}: results of two sources are never mixed"}, None
    return record, trace_files


def run_summaries(scenario: Scenario, store: CampaignStore, lens: str = "net",
                  seed: int | None = None, replications: int = 1,
                  options: Mapping[str, Any] | None = None,
                  executor: cf.Executor | None = None) -> list[dict[str, Any]]:
    """The summaries of runs ``0..replications-1`` of ``scenario``, computed only when the
    store lacks them: how a search (``tcpn optimize --store``) caches its evaluations.

    Without ``executor`` the missing runs go to local processes (one per run, at most the
    CPU count). A failed run raises :class:`~tcpn.errors.TcpnError` with its error.
    """
    from tcpn.errors import InputError, TcpnError
    from tcpn.experiments.sweep.spec import LensSpec

    base = scenario.model_dump(mode="json")
    if seed is not None:
        base["seed"] = seed
    sweep = Sweep(name=scenario.name, source="<search>", base=base, axes=[],
                  lenses=[LensSpec(lens, tuple(sorted((options or {}).items())))],
                  replications=replications)
    problem = sweep.cells()[0].error
    if problem is not None:
        raise InputError(problem)
    if executor is None:
        import os

        from tcpn.experiments.sweep.executors import executor_for

        missing = len(plan_campaign(sweep, store, retry_failed=True).missing)
        with executor_for(max(1, min(missing, os.cpu_count() or 1))) as pool:
            plan = run_campaign(sweep, store, pool, retry_failed=True)
    else:
        plan = run_campaign(sweep, store, executor, retry_failed=True)
    out = []
    for task in plan.tasks:
        record = store.get(task.key)
        if record is None or record.get("error") is not None:
            error = record.get("error") if record else "the run was not stored"
            raise TcpnError(f"{scenario.name}: {lens} run {task.replication} failed: {error}")
        out.append(record["summary"])
    return out
