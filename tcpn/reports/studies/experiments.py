"""What the five study modules share: experiments, axes, the run loop, verdicts.

A study is a set of :class:`Experiment` (a name and a scenario mapping, as a YAML file
would hold it) and a set of :class:`StudyAxis` (a base experiment, the scenario fields a
parameter the study left unstated lives in, and the values to try). :func:`run_points`
runs every (point, lens, replication) as one campaign of the sweep engine
(:func:`tcpn.experiments.sweep.campaign.run_tasks`): each run has the content key of its
concrete scenario, lens, seed, replication and measurement, is measured by the study's own
measurement function on the run's trace (:func:`measured_run`), and is kept in the
campaign store when one is given (a profile cut short resumes), on local worker processes
or a Dask cluster; the numbers never depend on the executor or the worker count. A lens
that cannot express a point is recorded with the reason its ``check`` gave, not run.
:mod:`~tcpn.reports.studies.estimates` turns the per-run rows into estimates;
:func:`judge` turns a claim's test into a :class:`~tcpn.reports.document.ClaimVerdict`.

>>> m = {"links": [{"a": "S", "b": "R", "ab": {"queue": {"kind": "drop_tail"}}}]}
>>> with_fields(m, {"links.0.ab.queue.kind": "sgpq"})["links"][0]["ab"]["queue"]["kind"]
'sgpq'
>>> m["links"][0]["ab"]["queue"]["kind"]  # the base is not changed
'drop_tail'
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import importlib
import math
import os
import resource
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcpn.errors import InputError, TcpnError
from tcpn.models.fields import with_fields
from tcpn.reports.document import ClaimVerdict, LensReading, Section
from tcpn.reports.studies import StudyData, StudyProgress
from tcpn.reports.studies.estimates import (
    MIN_HEADLINE_RUNS,
    Decision,
    Estimate,
    estimate_of,
    short_text,
)

__all__ = [
    "ALL_LENSES",
    "JOINT",
    "AxisPoint",
    "Experiment",
    "MeasuredCause",
    "Settings",
    "StudyAxis",
    "StudyPoint",
    "at_point",
    "axis_points",
    "error_bars",
    "judge",
    "judge_lenses",
    "lens_refusal",
    "point_label",
    "run_points",
    "running_on",
    "storing_runs",
    "with_fields",
]

Measurement = Callable[[Any, int], dict[str, Any]]
"""Measures one run: ``measure(result: ScenarioResult, replication) -> {metric: value}``,
plus optionally ``"series": [row, ...]`` (time series rows, kept for the figures). It must
be a module-level function (jobs go to worker processes)."""


@dataclass(frozen=True)
class Experiment:
    """One experiment of a study: its name, a one-line label, its scenario mapping, the
    lenses to run, and per lens the field changes that lens needs (e.g. the handshake a
    lens always models; the report states them)."""

    name: str
    label: str
    scenario: Mapping[str, Any]
    lenses: tuple[str, ...] = ("net",)
    lens_changes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class AxisPoint:
    """One value of an axis: its label and the scenario fields it sets (dotted paths)."""

    label: str
    changes: Mapping[str, Any]


@dataclass(frozen=True)
class StudyAxis:
    """A parameter the study left open: the experiment it varies, its points, the point
    the study's reproduction uses (``default``, a label) and why that one; ``lenses``,
    when set, keeps only those of the experiment's lenses on the axis (e.g. the lenses
    that decide a verdict, for an axis read only by the rule)."""

    name: str
    experiment: str
    points: tuple[AxisPoint, ...]
    default: str
    why: str
    lenses: tuple[str, ...] | None = None

    @classmethod
    def over(cls, name: str, experiment: str, path: str | Sequence[str],
             values: Sequence[Any], default: Any, why: str,
             labels: Sequence[str] | None = None,
             lenses: tuple[str, ...] | None = None) -> StudyAxis:
        """An axis on one field (or several set to the same value), one point per value."""
        paths = [path] if isinstance(path, str) else list(path)
        names = list(labels) if labels is not None else [f"{v:g}" if isinstance(v, float)
                                                         else str(v) for v in values]
        points = tuple(AxisPoint(label, {p: value for p in paths})
                       for label, value in zip(names, values, strict=True))
        return cls(name, experiment, points, names[list(values).index(default)], why, lenses)


@dataclass(frozen=True)
class StudyPoint:
    """A scenario to run: its key (experiment, or axis and value), mapping and lenses."""

    experiment: str
    axis: str
    value: str
    scenario: Mapping[str, Any]
    lenses: tuple[str, ...]
    lens_changes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, experiment: Experiment) -> StudyPoint:
        """The point that runs ``experiment`` itself."""
        return cls(experiment.name, "", "", experiment.scenario, experiment.lenses,
                   experiment.lens_changes)


@dataclass(frozen=True)
class Settings:
    """How much a profile runs: replications of the experiments and of the axes' points
    (at most ``other_lens_replications`` of them with a lens other than net, when set), a
    horizon scale (study-specific meaning), the lenses besides net, worker processes."""

    replications: int
    axis_replications: int
    horizon_scale: float = 1.0
    other_lenses: bool = True
    other_lens_replications: int | None = None
    workers: int | None = None
    seed: int = 1
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def lenses(self) -> tuple[str, ...]:
        """The lenses offered every experiment and axis point: all of them (a lens that
        cannot express one refuses it, with the reason, before running), or net alone."""
        return ALL_LENSES if self.other_lenses else ("net",)


ALL_LENSES: tuple[str, ...] = ("net", "fluid", "ns3")


def axis_points(experiments: Sequence[Experiment], axes: Sequence[StudyAxis],
                ) -> list[StudyPoint]:
    """The points of every axis, each on its base experiment with that experiment's
    lenses (those among the axis's ``lenses``, when it names them) and per-lens changes."""
    by_name = {e.name: e for e in experiments}
    points = []
    for axis in axes:
        base = by_name[axis.experiment]
        lenses = tuple(lens for lens in base.lenses
                       if axis.lenses is None or lens in axis.lenses)
        for p in axis.points:
            points.append(StudyPoint(axis.experiment, axis.name, p.label,
                                     with_fields(base.scenario, p.changes), lenses,
                                     base.lens_changes))
    return points


def lens_refusal(scenario: Any, lens: str) -> str | None:
    """Why ``lens`` cannot express ``scenario`` (its ``check``'s message), or None."""
    from tcpn.lenses import get_lens

    try:
        get_lens(lens)().check(scenario)
    except (InputError, TcpnError) as exc:
        return str(exc)
    return None


RUN_STORE: ContextVar[str | None] = ContextVar("study_run_store", default=None)
"""The campaign store (a directory) :func:`run_points` reads runs from and writes them to,
when set (:func:`storing_runs`); None: every run is made."""

_MADE_IN_SITTING: ContextVar[set[str] | None] = ContextVar("study_runs_made", default=None)
"""The keys of the runs made within the current :func:`storing_runs` block: one of them
read back from the store (an axis point whose scenario is an experiment's) is a run
shared within the sitting, whose CPU is already counted, not a run made earlier."""


@contextlib.contextmanager
def storing_runs(directory: str | Path | None) -> Iterator[None]:
    """Within the block, the studies' runs are kept in the campaign store ``directory``
    (:class:`~tcpn.experiments.sweep.store.CampaignStore`): a run already there is read,
    not made again, and each new run is stored as it completes, so a profile cut short
    (Ctrl-C, a crash, a time limit) resumes where it stopped. Checked writable first."""
    if directory is None:
        yield
        return
    from tcpn.experiments.sweep.store import CampaignStore

    CampaignStore(directory).check_writable()
    token, made = RUN_STORE.set(str(directory)), _MADE_IN_SITTING.set(set())
    try:
        yield
    finally:
        _MADE_IN_SITTING.reset(made)
        RUN_STORE.reset(token)


RUN_EXECUTOR: ContextVar[cf.Executor | None] = ContextVar("study_run_executor", default=None)
"""Where :func:`run_points` sends its jobs when set (:func:`running_on`): an executor of
:mod:`tcpn.experiments.sweep.executors` (local processes, or a Dask cluster); None: the
study's own worker processes (``Settings.workers``)."""


@contextlib.contextmanager
def running_on(executor: cf.Executor | None) -> Iterator[None]:
    """Within the block, the studies' runs go to ``executor`` (``tcpn report study ...
    --dask local``); results are gathered by job index, so the numbers are those of a
    local run."""
    token = RUN_EXECUTOR.set(executor)
    try:
        yield
    finally:
        RUN_EXECUTOR.reset(token)


#: the key of a run that failed in a lens other than the net's: its error, in the place of
#: the measured metrics (the study goes on; a later run of the same store tries it again)
FAILED = "failed"

#: the campaign evaluation a study's run is (:func:`measured_run`)
MEASURED_RUN = "tcpn.reports.studies.experiments:measured_run"


def measured_run(scenario: Any, seed: int, replication: int,
                 options: Mapping[str, Any]) -> dict[str, Any]:
    """A study's run as an evaluation of the sweep engine's campaigns
    (:func:`tcpn.experiments.sweep.campaign.run_tasks`): the lens ``options["lens"]`` run
    once, measured by the study's measurement ``options["measure"]`` (``module:function``);
    the campaign stores what it returns under the run's content key. The run's trace is
    streamed to a temporary directory that is removed once measured
    (:func:`~tcpn.lenses.run.streamed_run`): a worker's memory does not grow with the
    horizon, and a measure that reads the trace reads the tables it uses."""
    from tcpn.lenses import make_run, streamed_run

    module, _, name = str(options["measure"]).partition(":")
    measure = getattr(importlib.import_module(module), name)
    with streamed_run(scenario, str(options["lens"]),
                      make_run(scenario, seed, replication)) as result:
        return dict(measure(result, replication))


def _cpu_s() -> float:
    """The CPU seconds of this process, of its ended children (a pool's workers, with
    the ns-3 jobs their ns-3 workers ran), and of the ns-3 jobs run from this process
    (``--workers 1``: its ns-3 worker is reaped only at exit, so the rusage of children
    does not hold them yet; :func:`~tcpn.lenses.ns3.worker.jobs_cpu_s`)."""
    from tcpn.lenses.ns3.worker import jobs_cpu_s

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime + jobs_cpu_s()


def _expected_work(task: Any) -> float:
    """A run's expected cost, to start the longest first: simulated seconds times flows
    (the net lens's events grow with both), ns-3 and the fluid model at a third of it."""
    scale = 1.0 if task.lens == "net" else 1.0 / 3.0
    return scale * task.scenario.horizon_s * max(1, len(task.scenario.flows))


def run_points(points: Sequence[StudyPoint], measure: Measurement, replications: int,
               settings: Settings, progress: StudyProgress, what: str,
               ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Run every point with each of its lenses ``replications`` times, as one campaign of
    the sweep engine (:func:`~tcpn.experiments.sweep.campaign.run_tasks`: content-keyed
    runs, the store of :func:`storing_runs` when set, the executor of :func:`running_on`
    or ``Settings.workers`` local processes).

    Returns the per-run rows (``experiment``, ``axis``, ``value``, ``lens``,
    ``replication`` and the measured metrics), the time-series rows the measurement
    returned (same keys), the refusals (``experiment``, ``axis``, ``value``, ``lens``,
    ``reason``: a lens that cannot express the point, or whose runs there failed) and the
    cost (``wall_s``, ``cpu_s``: this process and its workers, and ``runs``; of the runs
    read from the store, ``stored_runs`` and ``stored_cpu_s``, the CPU time each recorded
    when it was made, so that a profile made in several sittings states its whole cost,
    and ``shared_runs``, those this sitting made for another point with the same scenario,
    whose CPU is already in ``cpu_s``).
    A net-lens run that fails is tcpn's own failure and ends the study, naming the run.
    """
    from tcpn.experiments.sweep.campaign import RunTask, run_tasks
    from tcpn.experiments.sweep.executors import executor_for
    from tcpn.experiments.sweep.store import CampaignStore, run_key
    from tcpn.models.scenario import validate_scenario

    start_wall, start_cpu = time.perf_counter(), _cpu_s()
    tasks: list[RunTask] = []
    keys: list[dict[str, Any]] = []
    mappings: list[Mapping[str, Any]] = []  # each task's scenario as written
    refusals: list[dict[str, Any]] = []
    if "." in measure.__qualname__ or "<" in measure.__qualname__:
        raise TypeError(f"{measure.__qualname__}: a study's measurement must be a function "
                        "at the top of its module (its runs go to other processes by name)")
    measure_path = f"{measure.__module__}:{measure.__qualname__}"
    for point in points:
        for lens in point.lenses:
            mapping = with_fields(point.scenario, point.lens_changes.get(lens, {}))
            scenario = validate_scenario(mapping)
            reason = lens_refusal(scenario, lens)
            key = {"experiment": point.experiment, "axis": point.axis, "value": point.value,
                   "lens": lens}
            if reason is not None:
                refusals.append(key | {"reason": reason})
                continue
            count = replications if lens == "net" or settings.other_lens_replications is None \
                else min(replications, settings.other_lens_replications)
            options = (("lens", lens), ("measure", measure_path))
            for i in range(count):
                tasks.append(RunTask(run_key(scenario, lens, dict(options), settings.seed, i),
                                     len(tasks), scenario, lens, options, settings.seed, i,
                                     evaluation=MEASURED_RUN))
                keys.append(key | {"replication": i})
                mappings.append(mapping)
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    store = None if RUN_STORE.get() is None else CampaignStore(str(RUN_STORE.get()))
    stored_cpu_s = 0.0  # what the runs read from the store cost when they were made
    made = _MADE_IN_SITTING.get()
    shared = 0  # runs this sitting made for another point, read back
    if store is not None:
        for task in tasks:
            record = store.get(task.key)
            if record is not None and record.get("error") is None:
                results[task.cell] = dict(record["summary"])
                if made is not None and task.key in made:
                    shared += 1
                else:
                    stored_cpu_s += float(record.get("run", {}).get("cpu_time_s", 0.0))
    # longest first, so that the pool's last minutes are not one long run alone; results
    # are gathered by cell, so the order changes no number
    todo = sorted((task for task in tasks if results[task.cell] is None),
                  key=_expected_work, reverse=True)
    done = len(tasks) - len(todo)
    progress(what, done, len(tasks))

    if RUN_EXECUTOR.get() is None and todo:  # a cluster's workers build in their own caches
        from tcpn.lenses.native_build import build_mappings

        build_mappings([mappings[task.cell] for task in todo if task.lens == "net"],
                       settings.seed, what,
                       lambda built, total: progress(f"{what}: native modules", built, total))
        progress(what, done, len(tasks))

    def gathered(task: RunTask, record: Mapping[str, Any]) -> None:
        nonlocal done
        if record.get("error") is None:
            results[task.cell] = dict(record["summary"])
            if made is not None:
                made.add(task.key)
        elif task.lens == "net":
            where = ", ".join(f"{k} {v}" for k, v in keys[task.cell].items() if v != "")
            raise TcpnError(f"{what}: the net lens's run ({where}) failed: {record['error']}")
        else:  # the lens's other runs at this point are left out too
            results[task.cell] = {FAILED: record["error"]}
        done += 1
        progress(what, done, len(tasks))

    executor = RUN_EXECUTOR.get()
    workers = max(1, min(len(todo), settings.workers or os.cpu_count() or 1))
    with (contextlib.nullcontext(executor) if executor is not None
          else executor_for(workers)) as pool:
        run_tasks(todo, store, pool, retry_failed=True, on_record=gathered)
    rows: list[dict[str, Any]] = []
    series: list[dict[str, Any]] = []
    failed: dict[tuple[Any, ...], list[str]] = {}
    for key, result in zip(keys, results, strict=True):
        measured = dict(result or {})
        if FAILED in measured:
            failed.setdefault(_point_lens(key), []).append(measured[FAILED])
            continue
        series += [key | row for row in measured.pop("series", [])]
        rows.append(key | measured)
    if failed:
        rows = [row for row in rows if _point_lens(row) not in failed]
        series = [row for row in series if _point_lens(row) not in failed]
        for (experiment, axis, value, lens), errors in failed.items():
            refusals.append({"experiment": experiment, "axis": axis, "value": value,
                             "lens": lens,
                             "reason": f"{len(errors)} of its runs failed: {errors[0]}"})
    cost = {"wall_s": time.perf_counter() - start_wall, "cpu_s": _cpu_s() - start_cpu,
            "runs": float(len(todo)), "stored_runs": float(len(tasks) - len(todo) - shared),
            "stored_cpu_s": stored_cpu_s, "shared_runs": float(shared)}
    refusal_frame = pd.DataFrame(refusals, columns=["experiment", "axis", "value", "lens",
                                                    "reason"])
    return pd.DataFrame(rows), pd.DataFrame(series), refusal_frame, cost


def _point_lens(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return row["experiment"], row["axis"], row["value"], row["lens"]


@dataclass(frozen=True)
class MeasuredCause:
    """Why tcpn's result differs from the published one, as runs in the report show it:
    a sentence, and the points (``experiment``, or ``experiment | axis = value``) whose
    runs carry it. :func:`judge` accepts no other cause: a sentence with no run behind it
    makes no verdict *differs (measured cause)*.

    >>> MeasuredCause("the buffer", ())
    Traceback (most recent call last):
    ...
    ValueError: a measured cause names the runs behind it: 'the buffer'
    """

    text: str
    points: tuple[str, ...]
    #: the axis points (``experiment | axis = value``) that move the result: there the
    #: study is read again, and the cause stands only if the study's other claims that
    #: hold at the defaults still hold (:func:`judge_lenses`); empty for a cause that is
    #: another reading of the study's words run beside it, not a parameter's value
    moves: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.points or not self.text:
            raise ValueError(f"a measured cause names the runs behind it: {self.text!r}")
        if not set(self.moves) <= set(self.points):
            raise ValueError(f"a measured cause's moving points are among its runs: "
                             f"{sorted(set(self.moves) - set(self.points))}")


def point_label(experiment: str, axis: str = "", value: str = "") -> str:
    """How reports and ``report.json`` name a point: the experiment, or ``experiment |
    axis = value`` for an axis point.

    >>> point_label("a_limited"), point_label("a_limited", "queue", "3")
    ('a_limited', 'a_limited | queue = 3')
    """
    return f"{experiment} | {axis} = {value}" if axis else experiment


UNDECIDED_NOTE = ("The runs do not decide: a 95 % interval straddles the test's bound "
                  "(more runs would tell).")


def judge(claim: str, holds: bool | Decision | None, evidence: str,
          cause: MeasuredCause | None = None,
          values: Mapping[str, float | Estimate] | None = None) -> ClaimVerdict:
    """The verdict on one published claim.

    ``holds`` is the claim's test on tcpn's numbers: a ``bool`` (a test on means), a
    :class:`~tcpn.reports.studies.estimates.Decision` (a test on the runs' intervals,
    which may leave it *undecided*), or None (the experiment did not run). When it fails,
    ``cause`` (a :class:`MeasuredCause`: e.g. an axis point that moves the result to the
    published value, or the other reading of an ambiguous sentence, run in the report)
    makes it *differs (measured cause)*; without one it is *differs (unexplained)*. A
    claim the runs do not decide is *undecided* whatever its cause: it is not shown to
    differ. ``values`` are the measured numbers the test compared (``report.json`` lists
    them per lens).

    >>> judge("K = 67 is best", True, "67 beats 50.").status
    'reproduced'
    >>> v = judge("K = 67 is best", False, "50 beats 67.",
    ...           cause=MeasuredCause("the ECN reaction", ("th67_rfc3168",)))
    >>> v.status, v.cause_points
    ('differs (measured cause)', ('th67_rfc3168',))
    >>> v.evidence
    '50 beats 67. Cause: the ECN reaction (runs: th67_rfc3168).'
    >>> judge("K = 67 is best", False, "50 beats 67.").status
    'differs (unexplained)'
    >>> judge("K = 67 is best", Decision.UNDECIDED, "67 and 50 overlap.").status
    'undecided'
    >>> judge("K = 67 is best", None, "no run.").status
    'not run'
    """
    measured = {k: v.record() if isinstance(v, Estimate) else float(v)
                for k, v in (values or {}).items()}
    if holds is None:
        return ClaimVerdict(claim, "not run", evidence, measured)
    decision = Decision.of(holds)
    if decision is Decision.HOLDS:
        return ClaimVerdict(claim, "reproduced", evidence, measured)
    if decision is Decision.UNDECIDED:
        return ClaimVerdict(claim, "undecided", f"{evidence} {UNDECIDED_NOTE}", measured)
    if cause is not None:
        if not isinstance(cause, MeasuredCause):
            raise TypeError(f"the cause of {claim!r} is not a MeasuredCause: {cause!r}")
        return ClaimVerdict(claim, "differs (measured cause)",
                            f"{evidence} Cause: {cause.text.rstrip('.')} (runs: "
                            f"{', '.join(cause.points)}).", measured,
                            cause_points=cause.points, cause_moves=cause.moves)
    return ClaimVerdict(claim, "differs (unexplained)", evidence, measured)


LENS_NAMES = {"net": "net", "ns3": "ns-3", "fluid": "fluid"}
DECIDING_LENSES = ("net", "ns3")
"""The lenses whose readings decide a verdict: the net model and packet-level ns-3. The
fluid lens's reading is shown beside them (a mean-field model: it answers claims about
averages, not the dynamics most claims are about)."""


def lens_summary(summary: pd.DataFrame, lens: str) -> pd.DataFrame:
    """``lens``'s rows of ``summary`` labelled as the net lens's, so that a study's claim
    tests (written on the net lens's rows) read that lens's numbers."""
    rows = summary[summary["lens"] == lens].copy()
    rows["lens"] = "net"
    return rows


def missing_experiments(summary: pd.DataFrame, lens: str) -> list[str]:
    """The study's own experiments (not axis points) the net lens ran and ``lens`` did
    not (refused, or no run gave a value)."""
    main = summary[summary["axis"] == ""]
    ran = set(main.loc[main["lens"] == lens, "experiment"])
    return [e for e in dict.fromkeys(main.loc[main["lens"] == "net", "experiment"])
            if e not in ran]


def judge_lenses(summary: pd.DataFrame,
                 claims: Callable[[pd.DataFrame], list[ClaimVerdict]],
                 lenses: Sequence[str] = ("net", "ns3", "fluid")) -> list[ClaimVerdict]:
    """Each claim's test (``claims``: the study's verdicts on a summary's net rows) read on
    every lens that ran all of the study's experiments, and the verdict the rule gives.

    The rule: *reproduced* when the claim holds on the net lens and on ns-3 (or ns-3 did
    not run the study, which the verdict says); *undecided* when the runs of either lens
    do not decide it (its test's interval straddles the bound); *lenses disagree* when it
    holds on one of the two and the other's runs contradict it (both readings in the
    evidence); otherwise the net lens's status (*differs* with its measured cause, or
    *unexplained*), with ns-3's reading beside it. A lens that did not run every
    experiment the net lens ran is *not run* for every claim (its partial numbers would
    make claims fail for want of a run).

    >>> s = pd.DataFrame({"experiment": ["a", "a"], "axis": ["", ""], "value": ["", ""],
    ...                   "lens": ["net", "ns3"], "x": [2.0, 0.5]})
    >>> def claims(summary):
    ...     x = float(summary[summary["lens"] == "net"]["x"].iloc[0])
    ...     return [judge("x above 1", x > 1, f"x = {x}.", values={"x": x})]
    >>> (v,) = judge_lenses(s, claims)
    >>> v.status, v.lenses["ns3"].values, v.lenses["fluid"].status
    ('lenses disagree', {'x': 0.5}, 'not run')
    """
    net = claims(summary)
    readings: dict[str, dict[str, ClaimVerdict]] = {}
    absent: dict[str, str] = {}
    for lens in lenses:
        if lens == "net":
            continue
        missing = missing_experiments(summary, lens)
        if missing:
            absent[lens] = (f"{LENS_NAMES.get(lens, lens)} did not run "
                            f"{len(missing)} of the study's experiments ({', '.join(missing[:4])}"
                            f"{', ...' if len(missing) > 4 else ''})")
            continue
        try:
            rows = lens_summary(summary, lens)
            read = claims(rows)
            readings[lens] = {v.claim: _cause_checked(v, rows, claims, read) for v in read}
        except (KeyError, IndexError, ValueError, ZeroDivisionError) as exc:
            absent[lens] = f"{LENS_NAMES.get(lens, lens)}'s runs miss a number a test needs ({exc})"
    net = [_cause_checked(verdict, summary, claims, net) for verdict in net]
    out = []
    for verdict in net:
        found: dict[str, LensReading] = {"net": LensReading(verdict.status, verdict.evidence,
                                                            verdict.values)}
        for lens in lenses:
            if lens == "net":
                continue
            other = readings.get(lens, {}).get(verdict.claim)
            found[lens] = (LensReading(other.status, other.evidence, other.values)
                           if other is not None else
                           LensReading("not run", absent.get(lens, "no reading") + "."))
        out.append(_combined(verdict, found))
    return out


JOINT = " & "
"""Joins the points of one setting of a study-wide parameter (one axis point per
experiment it applies to) into one point label that :func:`at_point` reads at once."""


def at_point(summary: pd.DataFrame, point: str) -> pd.DataFrame:
    """``summary`` with the axis point ``point`` (``experiment | axis = value``) in place
    of its experiment's own rows: the study as it reads when the unstated parameter takes
    that value (the axis points' own rows stay). Lenses the point did not run lose the
    experiment's row. Points joined by :data:`JOINT` are put in place together (a
    parameter the study's experiments share, set to one value in all of them).

    >>> s = pd.DataFrame({"experiment": ["e", "e", "f", "f"], "axis": ["", "w", "", "v"],
    ...                   "value": ["", "2", "", "2"], "lens": ["net"] * 4,
    ...                   "x": [1.0, 9.0, 5.0, 7.0]})
    >>> moved = at_point(s, "e | w = 2")
    >>> moved[moved["axis"] == ""][["experiment", "x"]].to_dict("records")
    [{'experiment': 'e', 'x': 9.0}, {'experiment': 'f', 'x': 5.0}]
    >>> both = at_point(s, "e | w = 2 & f | v = 2")
    >>> sorted(both[both["axis"] == ""]["x"])
    [7.0, 9.0]
    """
    if JOINT in point:
        for part in point.split(JOINT):
            summary = at_point(summary, part)
        return summary
    experiment, _, setting = point.partition(" | ")
    axis, _, value = setting.partition(" = ")
    rows = summary[(summary["experiment"] == experiment) & (summary["axis"] == axis)
                   & (summary["value"].astype(str) == value)]
    if not axis or rows.empty:
        raise ValueError(f"no runs of the axis point {point!r}")
    moved = rows.assign(axis="", value="")
    own = (summary["experiment"] == experiment) & (summary["axis"] == "")
    return pd.concat([moved, summary[~own]], ignore_index=True)


def _cause_checked(verdict: ClaimVerdict, summary: pd.DataFrame,
                   claims: Callable[[pd.DataFrame], list[ClaimVerdict]],
                   at_defaults: Sequence[ClaimVerdict]) -> ClaimVerdict:
    """``verdict`` if its measured cause stands: at each point that moves the result, the
    study's other claims that hold at the defaults still hold; otherwise *differs
    (unexplained)*, naming the point and the claims it breaks (a parameter value that
    explains one number by breaking another explains nothing)."""
    if verdict.status != "differs (measured cause)" or not verdict.cause_moves:
        return verdict
    holding = {v.claim for v in at_defaults if v.status == "reproduced"} - {verdict.claim}
    for point in verdict.cause_moves:
        try:
            there = {v.claim: v.status for v in claims(at_point(summary, point))}
        except (KeyError, IndexError, ValueError, ZeroDivisionError) as exc:
            return replace(verdict, status="differs (unexplained)", cause_points=(),
                           cause_moves=(), evidence=f"{verdict.evidence} The cause does not "
                           f"stand: the study cannot be read again at {point} ({exc}).")
        broken = sorted(c for c in holding if there.get(c) != "reproduced")
        if broken:
            return replace(verdict, status="differs (unexplained)", cause_points=(),
                           cause_moves=(), evidence=f"{verdict.evidence} The cause does not "
                           f"stand: at {point} the study's other claims "
                           + "; ".join(repr(c) for c in broken) + " no longer hold.")
    return replace(verdict, evidence=f"{verdict.evidence} Read again at "
                   f"{', '.join(verdict.cause_moves)}, the {len(holding)} other claims that "
                   "hold at the defaults still hold.")


def _combined(net: ClaimVerdict, found: Mapping[str, LensReading]) -> ClaimVerdict:
    ns3 = found.get("ns3", LensReading("not run", "ns-3 was not asked."))
    if net.status == "not run":
        return replace(net, lenses=dict(found))
    if ns3.status == "not run":
        return replace(net, evidence=f"{net.evidence} (ns-3: not run: "
                                     f"{ns3.evidence.rstrip('.')}.)", lenses=dict(found))
    statuses = {found[lens].status for lens in DECIDING_LENSES}
    both = f"Net: {net.evidence} ns-3: {ns3.evidence}"
    if statuses == {"reproduced"}:
        return replace(net, evidence=both, lenses=dict(found))
    if "undecided" in statuses:
        return replace(net, status="undecided", evidence=both, lenses=dict(found),
                       cause_points=(), cause_moves=())
    if "reproduced" in statuses:
        return replace(net, status="lenses disagree", evidence=both, lenses=dict(found))
    return replace(net, evidence=both, lenses=dict(found))


def axis_span(summary: pd.DataFrame, metric: str, axis: str) -> tuple[float, float, str, str]:
    """The smallest and largest mean of ``metric`` along ``axis`` (net lens) and the
    labels of the points where they occur."""
    rows = summary[(summary["axis"] == axis) & (summary["lens"] == "net")]
    if rows.empty or rows[metric].isna().all():
        return math.nan, math.nan, "", ""
    low, high = rows.loc[rows[metric].idxmin()], rows.loc[rows[metric].idxmax()]
    return float(low[metric]), float(high[metric]), str(low["value"]), str(high["value"])


# --------------------------------------------------------------------------- report blocks


def axes_frame(axes: Sequence[StudyAxis], summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Long table of one metric along every axis: ``axis``, ``value``, ``default``,
    ``mean``, ``low``, ``high`` (95 % interval), ``n`` (runs that gave it), ``runs`` and
    ``completed`` ("k of n", with the runs censored at their bound: the mean is then a
    lower bound, without an interval) (net lens), in the axes' point order.

    >>> from tcpn.reports.studies.estimates import summarise
    >>> runs = pd.DataFrame({"experiment": "e", "axis": "w", "value": ["1", "1", "1"],
    ...                      "lens": "net", "t": [5.0, 7.0, None],
    ...                      "t_censored_at": [None, None, 10.0]})
    >>> axis = StudyAxis.over("w", "e", "p", [1], 1, "")
    >>> row = axes_frame([axis], summarise(runs, ["t"]), "t").iloc[0]
    >>> round(float(row["mean"]), 3), row["completed"]
    (7.333, '2 of 3 (1 censored: mean is a lower bound)')
    """
    rows = []
    for axis in axes:
        for p in axis.points:
            hit = summary[(summary["axis"] == axis.name) & (summary["value"] == p.label)
                          & (summary["lens"] == "net")]
            estimate = estimate_of(None if hit.empty else hit.iloc[0], metric)
            completed = f"{estimate.defined} of {estimate.runs}" + (
                f" ({estimate.censored} censored: mean is a lower bound)"
                if estimate.censored else "")
            rows.append({"axis": axis.name, "value": p.label, "default": p.label == axis.default,
                         "mean": estimate.mean, "low": estimate.low, "high": estimate.high,
                         "n": estimate.defined, "runs": estimate.runs, "completed": completed})
    return pd.DataFrame(rows, columns=["axis", "value", "default", "mean", "low", "high", "n",
                                       "runs", "completed"])


def error_bars(mean: pd.Series, low: pd.Series, high: pd.Series) -> np.ndarray:
    """Matplotlib's asymmetric ``yerr`` (2 x N) of intervals ``[low, high]`` around
    ``mean``; no bar where there is no interval (one run, or a deterministic one).

    >>> error_bars(pd.Series([2.0, 5.0]), pd.Series([0.0, None]), pd.Series([4.5, None]))
    array([[2. , 0. ],
           [2.5, 0. ]])
    """
    m = mean.to_numpy(dtype=float)
    below = np.nan_to_num(m - low.to_numpy(dtype=float), nan=0.0)
    above = np.nan_to_num(high.to_numpy(dtype=float) - m, nan=0.0)
    return np.vstack([below, above])


def draw_axes(data: pd.DataFrame, ylabel: str = "") -> Any:
    """One small panel per axis: the metric's mean and 95 % CI at each point; the
    study's default point filled, the others open."""
    from matplotlib.figure import Figure

    names = list(dict.fromkeys(data["axis"]))
    columns = min(3, max(1, len(names)))
    rows = math.ceil(len(names) / columns)
    fig = Figure(figsize=(4.2 * columns, 3.0 * rows), layout="constrained")
    panels = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, name in zip(panels, names, strict=False):
        part = data[data["axis"] == name].reset_index(drop=True)
        x = range(len(part))
        ax.errorbar(x, part["mean"], yerr=error_bars(part["mean"], part["low"], part["high"]),
                    fmt="-", color="tab:blue", capsize=3, linewidth=1)
        for i, row in part.iterrows():
            ax.plot([i], [row["mean"]], "o", color="tab:blue",
                    markerfacecolor="tab:blue" if row["default"] else "white")
        ax.set_xticks(list(x), [str(v) for v in part["value"]], rotation=20, fontsize=8)
        ax.set_title(name, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(alpha=0.3)
    for ax in panels[len(names):]:
        ax.set_visible(False)
    return fig


def axes_blocks(key: str, axes: Sequence[StudyAxis], summary: pd.DataFrame, metric: str,
                ylabel: str) -> list[Any]:
    """The blocks of an axes section: why each default, the table, the figure."""
    from functools import partial

    from tcpn.reports.document import Figure, Paragraph, Table

    frame = axes_frame(axes, summary, metric)
    blocks: list[Any] = [Paragraph(
        "Each parameter the study left open, varied alone around the reproduction "
        f"(the filled point is the default used everywhere else): {ylabel}, net lens, "
        "means with 95 % CI (n: the runs behind each point).")]
    for axis in axes:
        part = frame[frame["axis"] == axis.name]
        span = (f"{part['mean'].min():.4g} to {part['mean'].max():.4g}"
                if part["mean"].notna().any() else "not run")
        blocks.append(Paragraph(f"*{axis.name}* (on `{axis.experiment}`): default "
                                f"{axis.default}. {axis.why} Across the range: {span}."))
    blocks.append(Table(f"{key}_axes", frame.round(4),
                        caption=f"{ylabel} along each unstated parameter"))
    blocks.append(Figure(f"{key}_axes_figure", frame, partial(draw_axes, ylabel=ylabel),
                         caption=f"{ylabel} along each unstated parameter (95 % CI)"))
    return blocks


def refusal_blocks(key: str, refusals: pd.DataFrame) -> list[Any]:
    """What each lens could not express, with the reason its check gave."""
    from tcpn.reports.document import Paragraph, Table

    if refusals.empty:
        return [Paragraph("Every lens ran every experiment it was given.")]
    frame = refusals[refusals["axis"] == ""][["experiment", "lens", "reason"]]
    return [Paragraph("Lenses that cannot express an experiment refuse it before running "
                      "(`evaluate` raises InputError naming the feature); the reasons:"),
            Table(f"{key}_refusals", frame.reset_index(drop=True),
                  caption="Experiments a lens refused, and why")]


def cost_paragraph(metadata: Mapping[str, Any]) -> Any:
    """The profile and what the runs cost (wall and CPU seconds, runs)."""
    from tcpn.reports.document import Paragraph

    cost = metadata.get("cost", {})
    counts = [c for c in (metadata.get("replications"), metadata.get("axis_replications"))
              if isinstance(c, int)]
    stored = (f" {int(cost['stored_runs'])} more were read from the run store; they "
              f"recorded {cost.get('stored_cpu_s', 0.0):.1f} s CPU when they were made."
              if cost.get("stored_runs") else "")
    if cost.get("shared_runs"):
        stored += (f" {int(cost['shared_runs'])} points used again a run this sitting made "
                   "for another point with the same scenario (its CPU counted once).")
    few = (f" **Warning: fewer than {MIN_HEADLINE_RUNS} runs per number** in this profile; "
           "each number says its n, intervals from so few runs are wide and unreliable."
           if counts and min(counts) < MIN_HEADLINE_RUNS else "")
    return Paragraph(
        f"Profile *{metadata.get('profile', '?')}*: {metadata.get('replications', '?')} "
        f"replications per experiment, {metadata.get('axis_replications', '?')} per axis "
        f"point, seed {metadata.get('seed', '?')}; {int(cost.get('runs', 0))} runs took "
        f"{cost.get('wall_s', math.nan):.1f} s wall, {cost.get('cpu_s', math.nan):.1f} s "
        "CPU (this process and its workers)." + stored + few)


AGREE_WITHIN = 0.05
"""Two lenses agree on a point when their means differ by at most this fraction (of the
net lens's) or, both from at least :data:`MIN_HEADLINE_RUNS` runs, their 95 % intervals
overlap (intervals from fewer runs are so wide that they would overlap almost always)."""


def lens_coverage(runs: pd.DataFrame, refusals: pd.DataFrame) -> pd.DataFrame:
    """Per point (``experiment``, ``axis``, ``value``) and lens: ``ran`` (runs made) or
    the refusal's ``reason``, one row each, in the study's order."""
    rows = []
    if not runs.empty:
        for key, group in runs.groupby(["experiment", "axis", "value", "lens"], sort=False):
            rows.append(dict(zip(("experiment", "axis", "value", "lens"), key, strict=True))
                        | {"ran": len(group), "reason": ""})
    for _, r in refusals.iterrows():
        rows.append({"experiment": r["experiment"], "axis": r["axis"], "value": r["value"],
                     "lens": r["lens"], "ran": 0, "reason": r["reason"]})
    return pd.DataFrame(rows, columns=["experiment", "axis", "value", "lens", "ran", "reason"])


def same_runs(runs: pd.DataFrame, metric: str, lens: str = "ns3") -> dict[tuple[Any, ...],
                                                                          tuple[int, int]]:
    """Per point: of the replications both the net lens and ``lens`` ran, how many gave
    the same ``metric`` to the last digits (relative 1e-9) in both. Two exact
    discrete-event models of the same scenario give the same runs when nothing random
    acts but what both draw from the same seed (start times, per-replication
    parameters): identical values are the models agreeing event for event, not one lens's
    numbers shown twice, and the report says how many."""
    found: dict[tuple[Any, ...], tuple[int, int]] = {}
    if runs.empty or metric not in runs or "replication" not in runs:
        return found
    keys = ["experiment", "axis", "value"]
    for key, group in runs[runs["lens"].isin(["net", lens])].groupby(keys, sort=False,
                                                                       dropna=False):
        by_lens = {name: dict(zip(g["replication"], g[metric], strict=True))
                   for name, g in group.groupby("lens")}
        net, other = by_lens.get("net", {}), by_lens.get(lens, {})
        both = [r for r in net if r in other]
        same = sum(1 for r in both if _same_value(net[r], other[r]))
        found[tuple(key)] = (same, len(both))
    return found


def _same_value(a: Any, b: Any) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    except (TypeError, ValueError):
        return False


def agreement_frame(summary: pd.DataFrame, metric: str, lens: str = "ns3",
                    runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per point both lenses ran: ``metric`` on the net lens and on ``lens`` (mean [95 %
    CI], n), their relative difference (``lens`` against net), whether they agree
    (:data:`AGREE_WITHIN`, or the intervals overlap) and, given the ``runs``, how many
    runs are the same in both (:func:`same_runs`)."""
    columns = ["experiment", "axis", "value", "net", lens, "difference", "agree",
               "same runs"]
    identical = same_runs(runs, metric, lens) if runs is not None else {}
    if summary.empty or metric not in summary:
        return pd.DataFrame(columns=columns)
    keys = ["experiment", "axis", "value"]
    net = summary[summary["lens"] == "net"].set_index(keys)
    other = summary[summary["lens"] == lens].set_index(keys)
    rows = []
    for key in other.index:
        if key not in net.index:
            continue
        a, b = estimate_of(net.loc[key], metric), estimate_of(other.loc[key], metric)
        if not (math.isfinite(a.mean) and math.isfinite(b.mean)):
            continue
        difference = (b.mean - a.mean) / a.mean if a.mean else math.nan
        overlap = all(math.isfinite(x) for x in (a.low, a.high, b.low, b.high)) \
            and a.low <= b.high and b.low <= a.high \
            and min(a.defined, b.defined) >= MIN_HEADLINE_RUNS
        agree = overlap or (math.isfinite(difference) and abs(difference) <= AGREE_WITHIN) \
            or a.mean == b.mean
        rows.append(dict(zip(keys, key, strict=True))
                    | {"net": short_text(a) + f" (n = {a.defined})",
                       lens: short_text(b) + f" (n = {b.defined})",
                       "difference": f"{difference:+.1%}" if math.isfinite(difference) else "-",
                       "agree": "yes" if agree else "no",
                       "same runs": _of(identical.get(tuple(key)))})
    return pd.DataFrame(rows, columns=columns)


def _of(counts: tuple[int, int] | None) -> str:
    return "-" if counts is None else f"{counts[0]} of {counts[1]}"


def lens_blocks(key: str, data: StudyData, summary: pd.DataFrame, metric: str,
                label: str, gaps: str = "") -> list[Any]:
    """How far the packet level backs the net model in this study: how many points
    (experiments and axis points) each lens ran, the headline ``metric`` (``label``) of
    net and ns-3 side by side at every point both ran, and ``gaps``: the causes of their
    differences found so far (per-packet traces side by side, docs/validation.md)."""
    from tcpn.reports.document import Paragraph, Table

    coverage = lens_coverage(data.tables["runs"], data.tables["refusals"])
    points = coverage.drop_duplicates(["experiment", "axis", "value"])
    counts = [f"{LENS_NAMES.get(lens, lens)} {int((group['ran'] > 0).sum())}"
              for lens, group in coverage.groupby("lens", sort=False)]
    agreement = agreement_frame(summary, metric, runs=data.tables["runs"])
    agreed = int((agreement["agree"] == "yes").sum())
    alike = [c.split(" of ") for c in agreement["same runs"] if c != "-"]
    every = sum(1 for k, n in alike if k == n and n != "0")
    blocks: list[Any] = [Paragraph(
        f"Points run by each lens, of the {len(points)} (experiments and axis points): "
        f"{', '.join(counts)}. On the {len(agreement)} points that net and ns-3 both ran, "
        f"{label} agrees on {agreed} (means within {AGREE_WITHIN:.0%} of each other, or "
        f"95 % intervals overlapping when both come from at least {MIN_HEADLINE_RUNS} "
        "runs); the table lists each, and the refusals below say why a lens did not run "
        f"a point. At {every} of these points every run gives the same value in both "
        "lenses (column 'same runs'): nothing random acts there but what both lenses "
        "draw from the same seed, and the two models run the same events; elsewhere the "
        "runs part, on a draw one lens makes alone (a random loss, a collision, the net's "
        "order of simultaneous firings) or on a difference of the two models."
        + (f" Where they differ: {gaps}" if gaps else ""))]
    if not agreement.empty:
        blocks.append(Table(f"{key}_lenses", agreement.reset_index(drop=True),
                            caption=f"{label}: net and ns-3 at every point both ran "
                                    "(mean [95 % CI], n; difference: ns-3 against net)"))
    return blocks


def study_sections(key: str, data: StudyData, intro: Sequence[Any], results_title: str,
                   results: Sequence[Any], open_parameters: Sequence[Any],
                   verdicts: Iterable[Any], lenses: Sequence[Any] = ()) -> list[Section]:
    """The four sections of every study's report, in order: the study and tcpn's
    experiments (``intro``, then the profile and what the runs cost), ``results_title``
    (``results``, then the lenses side by side, ``lenses``, then what each lens refused),
    the parameters the study left open (``open_parameters``), and the ``verdicts``."""
    name = key.upper()
    return [
        Section(f"{name}: the study and tcpn's experiments",
                [*intro, cost_paragraph(data.metadata)]),
        Section(f"{name}: {results_title}",
                [*results, *lenses, *refusal_blocks(key, data.tables["refusals"])]),
        Section(f"{name}: the parameters the study left open", list(open_parameters)),
        Section(f"{name}: verdicts", list(verdicts)),
    ]


def net_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """The net lens's rows of a study summary on its own experiments (not the axes'
    points), indexed by experiment: what the claims' tests read."""
    return net_series(summary).set_index("experiment")


def net_series(series: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``series`` (run 0's time series) of the net lens on the study's own
    experiments, not on the axes' points."""
    if series.empty:
        return series
    return series[(series["axis"] == "") & (series["lens"] == "net")]


def axis_causes(summary: pd.DataFrame, axes: Sequence[StudyAxis], experiment: str, metric: str,
                holds: Callable[[float], bool]) -> MeasuredCause | None:
    """The axes on ``experiment`` with a point where the claim's test ``holds`` for the
    net lens's mean ``metric`` (so the difference lies within what the study left open),
    as one sentence; None when no axis reaches it.

    >>> s = pd.DataFrame({"axis": ["w", "w"], "value": ["1", "2"], "lens": ["net", "net"],
    ...                   "x": [0.1, 0.9]})
    >>> cause = axis_causes(s, [StudyAxis.over("w", "e", "p", [1, 2], 1, "")], "e", "x",
    ...                     lambda v: v > 0.5)
    >>> cause.text, cause.points
    ('w = 2 gives 0.9 (default 1: 0.1)', ('e | w = 2', 'e | w = 1'))
    """
    found, points, moves = [], [], []
    for axis in axes:
        if axis.experiment != experiment:
            continue
        rows = summary[(summary["axis"] == axis.name) & (summary["lens"] == "net")]
        values = {str(v): float(x) for v, x in zip(rows["value"], rows[metric], strict=True)}
        hits = [label for label, x in values.items() if math.isfinite(x) and holds(x)
                and label != axis.default]
        if hits:
            default = values.get(axis.default, math.nan)
            found.append(f"{axis.name} = {hits[0]} gives {values[hits[0]]:.3g} (default "
                         f"{axis.default}: {default:.3g})")
            moves.append(point_label(experiment, axis.name, hits[0]))
            points += [moves[-1], point_label(experiment, axis.name, axis.default)]
    return MeasuredCause("; ".join(found), tuple(points), tuple(moves)) if found else None


def profile_settings(settings: Mapping[str, Settings], profile: str) -> Settings:
    """The settings of ``profile``, or InputError naming the profiles there are.

    >>> profile_settings({"quick": Settings(1, 1)}, "slow")
    Traceback (most recent call last):
    ...
    tcpn.errors.InputError: unknown profile 'slow'; profiles: quick
    """
    try:
        return settings[profile]
    except KeyError:
        raise InputError(f"unknown profile {profile!r}; profiles: "
                         f"{', '.join(settings)}") from None



def run_study(key: str, found: Sequence[Experiment], axes: Sequence[StudyAxis],
              measure: Measurement, settings: Settings, profile: str,
              progress: StudyProgress, keep_series: bool = True,
              **metadata: Any) -> StudyData:
    """A study's runs: its experiments with ``settings.replications``, then its axes'
    points with ``settings.axis_replications``; the runs, the refusals (and the series,
    unless ``keep_series`` is false) as tables, the profile, seeds, the experiments'
    scenario mappings (so that the report can draw the nets from the data alone) and summed
    cost (and ``metadata``) as metadata."""
    label = key.upper()
    runs, series, refusals, cost = run_points([StudyPoint.of(e) for e in found], measure,
                                              settings.replications, settings, progress,
                                              f"{label} experiments")
    axis_runs, _, axis_refusals, axis_cost = run_points(
        axis_points(found, axes), measure, settings.axis_replications, settings, progress,
        f"{label} unstated parameters")
    tables = {"runs": pd.concat([runs, axis_runs], ignore_index=True)}
    if keep_series:
        tables["series"] = series
    tables["refusals"] = pd.concat([refusals, axis_refusals], ignore_index=True)
    return StudyData(
        tables=tables,
        metadata={"profile": profile, "replications": settings.replications,
                  "axis_replications": settings.axis_replications, "seed": settings.seed,
                  "experiment_scenarios": {e.name: dict(e.scenario) for e in found},
                  **metadata, "cost": {k: cost[k] + axis_cost[k] for k in cost}})

@dataclass(frozen=True)
class ModuleStudy:
    """A study whose ``run`` and ``sections`` are its module's functions (the
    :class:`~tcpn.reports.studies.Study` protocol, one class for all five modules)."""

    key: str
    title: str
    run_study: Callable[[Any, StudyProgress], StudyData]
    build_sections: Callable[[StudyData], list[Section]]

    def run(self, profile: Any, progress: StudyProgress) -> StudyData:
        """Simulate the study's experiments (its module's ``run``)."""
        return self.run_study(profile, progress)

    def sections(self, data: StudyData) -> list[Section]:
        """The report's sections from ``data`` alone (its module's ``sections``)."""
        return self.build_sections(data)
