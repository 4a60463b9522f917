"""Cost of the common trace: recording rows, loading them, computing every metric.

Records a synthetic 60 s two-flow dumbbell trace (per data segment: send, recv, deliver,
ack, a cwnd value, and an enqueue/dequeue pair at the bottleneck; about 52,000 segments as
at 10 Mbit/s with MSS 1448) through :class:`tcpn.models.traces.TraceWriter`, in memory
and streamed to Parquet, and times :func:`tcpn.models.metrics.summarize` on it.

Baseline, measured in the same run: appending the same rows as tuples to one Python list
(the least any Python lens can do per event). Prints the writer's cost per row, its ratio
to the baseline, the Parquet size per row and the summary's rows per second. Medians of
``--repeats`` runs.

    .venv/bin/python benchmarks/trace_io.py [--segments 52000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tcpn.models.metrics import summarize
from tcpn.models.scenario import dumbbell
from tcpn.models.traces import TraceWriter

MSS = 1448


def rows(segments: int) -> list[tuple[str, tuple]]:
    """The synthetic event stream: (kind, arguments) in time order."""
    out: list[tuple[str, tuple]] = []
    for k in range(segments):
        t = k * 60.0 / segments
        flow = "f0" if k % 2 else "f1"
        seq = (k // 2) * MSS
        q = k % 100
        out += [("fe", (t, flow, "send", seq, MSS)),
                ("qe", (t + 1e-4, "R1->R2", "enqueue", q + 1, (q + 1) * 1500.0, flow, 1500.0)),
                ("qe", (t + 2e-3, "R1->R2", "dequeue", q, q * 1500.0, flow, 1500.0)),
                ("fe", (t + 0.02, flow, "recv", seq, MSS)),
                ("fe", (t + 0.02, flow, "deliver", seq, MSS)),
                ("fe", (t + 0.04, flow, "ack", seq + MSS, MSS)),
                ("fs", (t + 0.04, flow, "cwnd_bytes", 10.0 * MSS))]
    return out


def baseline(events: list[tuple[str, tuple]]) -> float:
    sink: list[tuple] = []
    start = time.perf_counter()
    for _, args in events:
        sink.append(args)
    return time.perf_counter() - start


def record(events: list[tuple[str, tuple]], directory: Path | None):
    scenario = dumbbell(pairs=2, horizon_s=60.0, tcp={"segment_size_bytes": MSS})
    writer = TraceWriter(scenario, scenario.concrete_flows(1), directory=directory)
    calls = {"fe": writer.flow_event, "qe": writer.queue_event, "fs": writer.flow_value}
    start = time.perf_counter()
    for kind, args in events:
        calls[kind](*args)
    recorded = time.perf_counter() - start
    trace = writer.close()
    return recorded, time.perf_counter() - start - recorded, trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=52_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    events = rows(args.segments)
    n = len(events)
    base, mem, disk, close_mem, close_disk, summary = [], [], [], [], [], []
    size = 0
    for _ in range(args.repeats):
        base.append(baseline(events))
        t_rec, t_close, trace = record(events, None)
        mem.append(t_rec)
        close_mem.append(t_close)
        with tempfile.TemporaryDirectory() as tmp:
            t_rec, t_close, _ = record(events, Path(tmp))
            disk.append(t_rec)
            close_disk.append(t_close)
            size = sum(p.stat().st_size for p in Path(tmp).glob("*.parquet"))
        start = time.perf_counter()
        summarize(trace)
        summary.append(time.perf_counter() - start)
    med = statistics.median
    print(f"{n:,} rows ({args.segments:,} segments), median of {args.repeats}")
    print(f"baseline list.append       {med(base) / n * 1e9:8.0f} ns/row")
    for label, rec, close in (("TraceWriter in memory", mem, close_mem),
                              ("TraceWriter -> Parquet", disk, close_disk)):
        print(f"{label:26s} {med(rec) / n * 1e9:8.0f} ns/row  "
              f"({med(rec) / med(base):.1f}x baseline), close {med(close):.2f} s")
    print(f"Parquet on disk            {size / n:8.1f} bytes/row")
    print(f"summarize                  {n / med(summary):8,.0f} rows/s ({med(summary):.2f} s)")


if __name__ == "__main__":
    main()
