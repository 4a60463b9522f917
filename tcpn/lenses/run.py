"""One run of one lens: the lens simulates into a trace, the summary follows the trace.

:func:`run_once` is what every caller of a lens goes through (:func:`tcpn.lenses.evaluate`,
replications, sweeps, the studies), so that every lens's result is summarised by the one
metrics module (:mod:`tcpn.models.summary`, :mod:`tcpn.models.metrics`) and written whole
or not at all. :func:`streamed_run` is the run whose caller reads its result and lets it
go (a study's measure, a sweep's record, a replication's summary): its trace goes to a
private temporary directory, so its memory does not grow with the horizon.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tcpn.lenses.base import Progress, Run
from tcpn.lenses.registry import get_lens
from tcpn.models.metrics import summarize
from tcpn.models.scenario import Scenario
from tcpn.models.summary import SummaryStream
from tcpn.models.traces import ScenarioResult, TraceWriter, atomic_directory, provenance
from tcpn.scratch import scratch

__all__ = ["run_once", "streamed_run"]


def run_once(scenario: Scenario, lens: str, run: Run, output: Path | None = None,
             options: dict[str, Any] | None = None, progress: Progress | None = None,
             overwrite: bool = False) -> ScenarioResult:
    """Run one lens on one :class:`Run`; summarise; write to ``output`` if given.

    With ``output`` the trace streams to Parquet in a temporary directory renamed to
    ``output`` only when the result is complete (an existing tcpn output is replaced only
    with ``overwrite``: :func:`tcpn.outputs.atomic_directory`); the summary metrics follow
    the chunks as they are written (:class:`~tcpn.models.summary.SummaryStream`), and
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


@contextlib.contextmanager
def streamed_run(scenario: Scenario, lens: str, run: Run,
                 options: dict[str, Any] | None = None) -> Iterator[ScenarioResult]:
    """:func:`run_once` with its trace streamed to a private temporary directory, the
    result valid within the block; the directory is removed when the block ends, also on
    error, and that of a process killed mid-run (a worker its pool terminated) by the
    next run's (:func:`tcpn.scratch.scratch`).

    For a caller that reads the result and keeps only what it read: held in memory, a
    long run's trace grows with the horizon (S3's heaviest 802.11 point, 100 s: a peak of
    1.5 GiB, 0.34 GiB streamed; benchmarks/study_point_cpu.py);
    on disk the summary follows the chunks as they are written and the trace's tables are
    read only when used (a measure that reads the series), or when the summary must be
    computed from the trace read back (a lens that wrote rows out of time order). The
    numbers are those of an in-memory run: the same chunks, the same tables when read.
    """
    with scratch("run") as directory:
        yield run_once(scenario, lens, run, directory / "result", options)


def _summary_stream(scenario: Scenario, writer: TraceWriter) -> SummaryStream:
    """The summary of the scenario's measurement window, fed every chunk ``writer`` writes."""
    stream = SummaryStream(
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
            lens_provenance: dict[str, Any], start: float, stream: SummaryStream) -> ScenarioResult:
    """The result; its summary from ``stream``, or from the trace read back and sorted when
    the lens wrote a queue's or a flow's rows out of time order."""
    trace = writer.close()
    wall = time.perf_counter() - start
    result = ScenarioResult(scenario=scenario, lens=lens, seed=run.seed_record(),
                            wall_time_s=wall, trace=trace,
                            provenance=provenance(lens=lens_provenance))
    summary = stream.summary()
    result.summary = without(summary if summary is not None else summarize(trace),
                             lens_provenance.get("unobserved") or {})
    return result


def without(summary: dict[str, Any], unobserved: dict[str, str]) -> dict[str, Any]:
    """``summary`` with the metrics a lens cannot observe (``unobserved``: metric, or
    ``queues``, -> why; a capture sees no drops) given as None with the reason under
    ``absent``, never as the 0 an empty part of its trace would give.

    >>> s = {"flows": {"f": {"drops": 0, "goodput_bps": 5.0}}, "queues": {"q": {}},
    ...      "aggregate": {"loss_ratio": 0.0}}
    >>> out = without(s, {"drops": "unseen", "loss_ratio": "unseen", "queues": "unseen"})
    >>> out["flows"], out["queues"], out["aggregate"], sorted(out["absent"])
    ({'f': {'drops': None, 'goodput_bps': 5.0}}, {}, {'loss_ratio': None}, \
['drops', 'loss_ratio', 'queues'])
    """
    if not unobserved:
        return summary
    out = dict(summary)
    out["flows"] = {flow: {m: None if m in unobserved else v for m, v in metrics.items()}
                    for flow, metrics in summary.get("flows", {}).items()}
    out["aggregate"] = {m: None if m in unobserved else v
                        for m, v in summary.get("aggregate", {}).items()}
    if "queues" in unobserved:
        out["queues"] = {}
    out["absent"] = {**summary.get("absent", {}), **unobserved}
    return out
