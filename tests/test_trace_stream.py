"""A run streams its trace to disk and its summary follows the chunks: same figures, flat memory.

``run_once`` with an output directory writes the trace chunk by chunk to Parquet and feeds
each chunk to a :class:`~tcpn.models.summary.SummaryStream`; the result's trace reads
its files only when used. The summary must be the one the whole trace gives: here against
the way ``summarize`` computed it before streaming (pandas on the whole trace, kept below
as ``whole_trace_summary``), bit for bit but for the time-weighted means, which are now
rounded once instead of summed by ``np.dot`` (a few units in the last place).
The callers that read a run and let it go (a study's measure, a sweep's record,
replications whose traces are not kept) stream it to a temporary directory
(``streamed_run``): the numbers of the run kept in memory, the directory gone afterwards.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml

from tcpn.errors import InputError
from tcpn.experiments.sweep.campaign import RunTask, execute
from tcpn.lenses import evaluate, make_run, run_once, streamed_run
from tcpn.lenses import net as net_lens
from tcpn.lenses import run as run_module
from tcpn.lenses.replications import replicate
from tcpn.models import metrics
from tcpn.models.fields import with_fields
from tcpn.models.scenario import dumbbell, load_scenario, validate_scenario
from tcpn.models.summary import SummaryStream
from tcpn.models.traces import SCHEMAS, Trace, TraceWriter
from tcpn.outputs import json_ready
from tcpn.reports.studies.experiments import measured_run

ROOT = Path(__file__).resolve().parents[1]
MEANS = ("cwnd_mean_bytes", "mean_packets", "mean_bytes")


def whole_trace_summary(trace: Trace) -> dict[str, Any]:
    """``metrics.summarize`` as it was before the summary was streamed: pandas over the
    whole trace, time-weighted means by ``np.dot``."""
    t0, t1 = trace.warmup_s, trace.horizon_s
    counts = metrics.event_counts(trace, t0, t1)
    sent = counts["send"] + counts["retransmit"]
    cwnd = dict.fromkeys(trace.flow_ids, np.nan)
    for key, group in trace.series("cwnd_bytes").groupby("flow", observed=True):
        times = group["time_s"].to_numpy()
        begin = max(t0, float(times[0]))
        if begin < t1:
            levels, durations = metrics._steps(times, group["value"].to_numpy(), begin, t1, 0.0)
            cwnd[str(key)] = float(np.dot(levels, durations) / (t1 - begin))
    flows = pd.DataFrame({
        "goodput_bps": metrics.goodput_bps(trace, t0, t1),
        "throughput_bps": metrics.throughput_bps(trace, t0, t1),
        "segments_sent": counts["send"], "retransmissions": counts["retransmit"],
        "drops": counts["drop"], "marks": counts["mark"], "timeouts": counts["timeout"],
        "loss_ratio": counts["drop"] / sent.where(sent > 0),
        "retransmission_ratio": counts["retransmit"] / sent.where(sent > 0),
        "mark_ratio": counts["mark"] / sent.where(sent > 0),
        "cwnd_mean_bytes": pd.Series(cwnd, dtype=float),
    })
    rtt = metrics.rtt_stats(trace, t0, t1)
    flows["rtt_mean_s"], flows["rtt_p95_s"], flows["rtt_min_s"] = (
        rtt["mean_s"], rtt["p95_s"], rtt["min_s"])
    sized = trace.flows.set_index("flow")["bytes"]
    flows["completion_s"] = [metrics.time_to_deliver_s(trace, f) if not pd.isna(sized[f])
                             else np.nan for f in flows.index]
    flows["segment_delay_mean_s"] = [
        float(metrics.segment_delays(trace, f)["delay_s"].mean()) if not pd.isna(sized[f])
        else np.nan for f in flows.index]
    fails = trace.flow_events[trace.flow_events["event"] == "connect_fail"]
    failed_at = fails.groupby(fails["flow"].astype(str))["time_s"].min()
    flows["connect_failed_s"] = [float(failed_at.get(f, np.nan)) for f in flows.index]
    queues = metrics.queue_stats(trace, t0, t1)
    for queue, frame in trace.queue_events.groupby("queue", observed=True):
        if str(queue) in queues.index:
            for unit in ("packets", "bytes"):
                levels, durations = metrics._steps(frame["time_s"].to_numpy(),
                                                   frame[f"length_{unit}"].to_numpy(), t0, t1,
                                                   0.0)
                queues.loc[str(queue), f"mean_{unit}"] = float(np.dot(levels, durations)
                                                               / (t1 - t0))
    total = float(sent.sum())
    aggregate = {
        "goodput_bps": float(flows["goodput_bps"].sum()),
        "throughput_bps": float(flows["throughput_bps"].sum()),
        "jain_index": metrics.jain_index(flows["goodput_bps"]),
        "loss_ratio": float(counts["drop"].sum()) / total if total else np.nan,
        "retransmission_ratio": float(counts["retransmit"].sum()) / total if total else np.nan,
        "mark_ratio": float(counts["mark"].sum()) / total if total else np.nan,
    }
    return {"window": {"start_s": t0, "end_s": t1}, "flows": _records(flows),
            "queues": _records(queues),
            "aggregate": {k: _plain(v) for k, v in aggregate.items()}}


def _plain(value: Any) -> Any:
    value = value.item() if isinstance(value, np.generic) else value
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _records(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {str(i): {c: _plain(row[c]) for c in frame.columns} for i, row in frame.iterrows()}


def assert_same_summary(streamed: dict[str, Any], whole: dict[str, Any]) -> None:
    """Equal, key order included; the time-weighted means within 1e-13 (relative)."""
    assert list(streamed) == list(whole)
    assert streamed["window"] == whole["window"]
    assert streamed["aggregate"] == whole["aggregate"]
    for scope in ("flows", "queues"):
        assert list(streamed[scope]) == list(whole[scope]), scope
        for name, row in whole[scope].items():
            got = streamed[scope][name]
            assert list(got) == list(row), (scope, name)
            for metric, value in row.items():
                if metric in MEANS and value is not None:
                    assert got[metric] == pytest.approx(value, rel=1e-13, abs=0), (name, metric)
                else:
                    assert got[metric] == value, (scope, name, metric)


SCENARIOS = {
    "dumbbell": lambda: dumbbell(pairs=2, horizon_s=3.0),
    "red_ecn": lambda: load_scenario(ROOT / "scenarios/reference/red_ecn.yaml"),
    "sized": lambda: load_scenario(ROOT / "scenarios/studies/s2_drop_tail_loss0.yaml"),
    "ber": lambda: load_scenario(ROOT / "scenarios/studies/s3_newreno_ber1e-4.yaml"),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_streamed_summary_is_the_whole_trace_summary(name: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # chunks of 97 rows: many chunks, cut anywhere, for every table
    monkeypatch.setattr(net_lens, "_CHUNK_ROWS", 97)
    scenario = SCENARIOS[name]()
    horizon = min(scenario.horizon_s, 3.0)
    scenario = scenario.model_copy(update={
        "horizon_s": horizon,
        "measure": scenario.measure.model_copy(update={
            "warmup_s": min(scenario.measure.warmup_s, horizon / 3)})})
    result = evaluate(scenario, lens="net", output=tmp_path / "run")
    assert result.trace.directory == (tmp_path / "run").absolute()
    trace = Trace.load(tmp_path / "run", result.trace.horizon_s, result.trace.warmup_s,
                       result.trace.bin_s)
    assert len(trace.flow_events) > 10 * 97
    assert_same_summary(result.summary, whole_trace_summary(trace))
    # the in-memory path (no output) feeds the same stream: the same summary, to the bit
    assert evaluate(scenario, lens="net").summary == result.summary
    assert metrics.summarize(trace) == result.summary


def test_a_streamed_trace_is_the_trace_kept_in_memory(tmp_path: Path) -> None:
    scenario = dumbbell(pairs=2, horizon_s=1.5)
    streamed = evaluate(scenario, lens="net", output=tmp_path / "run").trace
    kept = evaluate(scenario, lens="net").trace
    assert kept.directory is None and streamed.directory == (tmp_path / "run").absolute()
    copy = tmp_path / "copy"
    copy.mkdir()
    streamed.save(copy)  # not read yet: the files are copied as they are
    for table in ("flows", "queues", *SCHEMAS):
        assert (copy / f"{table}.parquet").read_bytes() == \
            (tmp_path / "run" / f"{table}.parquet").read_bytes()
    for table in ("flows", "queues", *SCHEMAS):
        pd.testing.assert_frame_equal(getattr(streamed, table), getattr(kept, table))


def test_rows_out_of_order_fall_back_to_the_sorted_trace(tmp_path: Path) -> None:
    # the fluid lens writes each queue's events kind by kind (not in time order): the
    # stream gives up and the run summarises the trace read back, sorted
    scenario = dumbbell(pairs=2, horizon_s=5.0)
    result = evaluate(scenario, lens="fluid", output=tmp_path / "run")
    assert result.summary == metrics.summarize(
        Trace.load(tmp_path / "run", 5.0, scenario.measure.warmup_s, scenario.measure.bin_s))
    writer = TraceWriter(scenario, scenario.concrete_flows(1))
    stream = SummaryStream(writer.flows, writer.queues, 0.0, 5.0)
    writer.observe(stream.add)
    for times in ([2.0, 3.0], [1.0]):
        writer.extend("queue_events", time_s=times, queue="R1->R2", event="enqueue",
                      length_packets=1.0, length_bytes=1500.0)
    assert stream.summary() is None
    assert metrics.summarize(writer.close())["queues"]["R1->R2"]["mean_packets"] == 0.8


def test_the_summary_does_not_depend_on_the_chunks() -> None:
    # a fluid trace (fractional bytes and counts), sorted, cut at random into chunks
    trace = evaluate(dumbbell(pairs=3, horizon_s=8.0), lens="fluid").trace
    whole = metrics.summarize(trace)
    rng = np.random.default_rng(5)
    for _ in range(3):
        stream = SummaryStream(trace.flows, trace.queues, trace.warmup_s, trace.horizon_s)
        for name in SCHEMAS:
            table = pa.Table.from_pandas(getattr(trace, name), schema=SCHEMAS[name],
                                         preserve_index=False)
            cuts = np.sort(rng.integers(0, len(table), size=20))
            for start, stop in zip([0, *cuts], [*cuts, len(table)], strict=True):
                stream.add(name, table.slice(start, stop - start))
        assert stream.summary() == whole
    fractional = trace.events(event="deliver")["bytes"]
    assert (fractional != fractional.round()).any()


def test_replications_keep_their_traces_in_the_renamed_directory(tmp_path: Path) -> None:
    scenario = dumbbell(pairs=1, horizon_s=1.0)
    result = replicate(scenario, "net", replications=2, workers=1, output=tmp_path / "reps")
    assert len(result.runs) == 2
    for run in result.runs:
        assert run.trace.directory is None
        assert len(run.trace.flow_events) > 100
    assert sorted(p.name for p in (tmp_path / "reps").iterdir() if p.is_dir()) == \
        ["rep-000", "rep-001"]


# ---------------------------------------------------------------------------- memory

#: What the trace cost ``tcpn run`` per second of model time before it streamed: peak RSS
#: +96.8 MiB from 2 s to 60 s of the reference dumbbell (10 Mbit/s), 1.67 MiB/s, at a8800c3
#: (benchmarks/run_memory.py --horizons 2 20 60 --against a8800c3); streamed: +0.8 MiB
#: from 20 s to 60 s. Tracing off, the peak does not move.
BEFORE_MIB_PER_S = 1.6


def peak_rss_mib(scenario: Path, out: Path) -> float:
    """Peak RSS of ``tcpn run scenario`` in a fresh process (ru_maxrss, KiB on Linux)."""
    command = [sys.executable, "-c", "import sys; from tcpn.cli import main; sys.exit(main())",
               "run", str(scenario), "--output", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, errors.decode()
    return usage.ru_maxrss / 1024


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_the_horizon(tmp_path: Path) -> None:
    # 2 s first: buffers, caches and the native engine's build settle; then 10 s and 40 s
    document = yaml.safe_load((ROOT / "scenarios/dumbbell_newreno.yaml").read_text())
    peaks = {}
    for horizon in (2.0, 10.0, 40.0):
        document["horizon_s"] = horizon
        path = tmp_path / f"{horizon:g}s.yaml"
        path.write_text(yaml.safe_dump(document))
        peaks[horizon] = peak_rss_mib(path, tmp_path / f"{horizon:g}s")
    growth_mib_per_s = (peaks[40.0] - peaks[10.0]) / 30.0
    assert growth_mib_per_s < BEFORE_MIB_PER_S / 10, peaks


def test_a_missing_table_is_named_when_first_read(tmp_path: Path) -> None:
    evaluate(dumbbell(pairs=1, horizon_s=0.5), lens="net", output=tmp_path / "run")
    (tmp_path / "run" / "queue_events.parquet").unlink()
    trace = Trace.load(tmp_path / "run", 0.5)
    assert len(trace.flow_events) > 0
    with pytest.raises(InputError, match=r"queue_events\.parquet: cannot read the "
                                         r"queue_events table"):
        _ = trace.queue_events


# ------------------------------------------------------------- runs read, then let go

def same(measured: Any, expected: Any) -> bool:
    """Equal, key order and types included, NaN equal to NaN (a measure's missing value)."""
    if isinstance(measured, float) and isinstance(expected, float):
        return measured == expected or (math.isnan(measured) and math.isnan(expected))
    if isinstance(measured, dict) and isinstance(expected, dict):
        return list(measured) == list(expected) and all(
            same(measured[k], expected[k]) for k in measured)
    if isinstance(measured, list | tuple) and isinstance(expected, list | tuple):
        return type(measured) is type(expected) and len(measured) == len(expected) and all(
            map(same, measured, expected))
    return type(measured) is type(expected) and measured == expected


def s1_point(horizon_s: float) -> Any:
    """S1's Exp 1 with Vegas (net-lens changes applied) cut to ``horizon_s``."""
    from tcpn.reports.studies import s1

    (experiment,) = [e for e in s1.experiments(s1.SETTINGS["quick"]) if e.name == "exp1_vegas"]
    mapping = dict(with_fields(experiment.scenario, experiment.lens_changes.get("net", {})))
    return validate_scenario(mapping | {"horizon_s": horizon_s})


@pytest.fixture
def writers(monkeypatch: pytest.MonkeyPatch) -> list[Path | None]:
    """The directory of every trace writer ``run_once`` makes (None: kept in memory)."""
    made: list[Path | None] = []

    class Recording(TraceWriter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self.directory)

    monkeypatch.setattr(run_module, "TraceWriter", Recording)
    return made


@pytest.mark.parametrize("lens", ["net", "fluid"])
def test_a_study_run_is_measured_on_a_streamed_trace_removed_afterwards(
        lens: str, monkeypatch: pytest.MonkeyPatch, writers: list[Path | None]) -> None:
    # S1's measure reads the trace (run 0's series); the fluid lens writes rows out of
    # time order, so its summary is computed from the trace read back from the directory
    from tcpn.reports.studies import s1

    measure = s1.a_flow_rates
    seen: list[Path | None] = []

    def spying(result: Any, replication: int) -> dict[str, Any]:
        seen.append(result.trace.directory)
        return measure(result, replication)

    monkeypatch.setattr(s1, "a_flow_rates", spying)
    scenario = s1_point(horizon_s=7.0)
    options = {"lens": lens, "measure": "tcpn.reports.studies.s1:a_flow_rates"}
    measured = measured_run(scenario, 1, 0, options)
    (directory,) = seen
    assert directory is not None and writers[0] is not None
    assert not directory.exists() and not writers[0].exists()
    kept = run_once(scenario, lens, make_run(scenario, 1, 0))  # the trace in memory
    assert kept.trace.directory is None and writers[1] is None
    expected = measure(kept, 0)
    assert measured["series"] and same(measured, expected)


def test_a_failed_measure_leaves_no_trace_behind(monkeypatch: pytest.MonkeyPatch,
                                                 writers: list[Path | None]) -> None:
    from tcpn.reports.studies import s1

    def failing(result: Any, replication: int) -> dict[str, Any]:
        raise ValueError(f"cannot measure {result.trace.directory}")

    monkeypatch.setattr(s1, "a_flow_rates", failing)
    options = {"lens": "net", "measure": "tcpn.reports.studies.s1:a_flow_rates"}
    with pytest.raises(ValueError, match="cannot measure /"):
        measured_run(s1_point(horizon_s=6.0), 1, 0, options)
    (directory,) = writers
    assert directory is not None and not directory.exists()


def test_sweep_runs_and_unkept_replications_stream_their_traces(
        writers: list[Path | None]) -> None:
    scenario = dumbbell(pairs=2, horizon_s=2.0)
    record, files = execute(RunTask("key", 0, scenario, "net", (), 3, 1))
    replicated = replicate(scenario, "net", seed=3, replications=2, workers=1,
                           keep_traces=False)
    assert files is None and replicated.runs == []
    assert len(writers) == 3
    assert all(d is not None and not d.exists() for d in writers), writers
    in_memory = [run_once(scenario, "net", make_run(scenario, 3, i)).summary for i in (0, 1)]
    assert record["summary"] == json_ready(in_memory[1])
    assert replicated.summaries == in_memory


KILLED_RUN = """
from tcpn.lenses import make_run, streamed_run
from tcpn.models.scenario import dumbbell
scenario = dumbbell(pairs=1, horizon_s=3600.0)
with streamed_run(scenario, "net", make_run(scenario)):
    pass
"""


def test_the_trace_of_a_killed_run_is_removed_by_the_next_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a worker its pool terminates cannot remove its directory; the next run does
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", KILLED_RUN], env=env, cwd=ROOT)
    try:
        for _ in range(600):  # until its trace is being written (at most a minute)
            written = list(tmp_path.glob(f"tcpn-run-pid{process.pid}-*/*/*.parquet"))
            if written or process.poll() is not None:
                break
            time.sleep(0.1)
        assert written, "the run wrote no trace"
    finally:
        process.kill()
        process.wait()
    killed = written[0].parents[1]
    assert killed.is_dir()
    scenario = dumbbell(pairs=1, horizon_s=0.5)
    with streamed_run(scenario, "net", make_run(scenario)) as result:
        assert result.trace.directory is not None
        assert result.trace.directory.parent.parent == tmp_path
        assert not killed.exists()
    assert list(tmp_path.iterdir()) == []
