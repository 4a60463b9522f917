"""Memory over a long run: 10 million firings with monitors on, peak RSS printed as it goes.

The net is an M/M/1 queue (``tcpn.petrinets.examples.single_server_queue``, arrivals
every 1.0 on average, service 0.8: utilisation 0.8, so the queue itself stays short)
with as many customers as the run needs. Monitors: ``TimeAverage`` of the queue and of
the server, ``FiringCount`` of departures, a ``DataCollector`` kept bounded by recording
one departure in 100,000, and an ``EventLog`` of every firing written to a Parquet file in
a temporary directory. At every tenth of the run the script prints the firings, the
firing rate, the current and the peak resident set size (RSS); at the end it prints how
much the peak grew from 20% of the run (buffers warmed up) to the end, per million
firings, and fails (exit 1) above 2 MiB per million.
A flat line is the point: the event log goes to disk in batches, monitors keep running
sums. The run takes several minutes (the event log dominates); ``--firings`` shortens it.

    .venv/bin/python benchmarks/long_run_memory.py
    .venv/bin/python benchmarks/long_run_memory.py --firings 1000000 --no-event-log
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from rich.console import Console
from rich.table import Table

from tcpn.petrinets import DataCollector, EventLog, FiringCount, Simulator, TimeAverage
from tcpn.petrinets.examples import single_server_queue

MIB = 2**20
GROWTH_LIMIT_MIB_PER_MILLION = 2.0  # beyond this the run is not flat


def peak_rss_bytes() -> int:
    """The process's peak resident set size so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--firings", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-event-log", action="store_true",
                        help="leave the Parquet event log out (a much faster run)")
    args = parser.parse_args(argv)
    console = Console()
    process = psutil.Process()
    checkpoints = [args.firings * k // 10 for k in range(1, 11)]
    rows: list[tuple[int, float, float, int, int]] = []
    started = time.perf_counter()

    def report(sim: Simulator) -> None:
        while checkpoints and sim.firings >= checkpoints[0]:
            checkpoints.pop(0)
            wall = time.perf_counter() - started
            rows.append((sim.firings, sim.now, wall, process.memory_info().rss,
                         peak_rss_bytes()))
            console.print(f"{sim.firings:>11,} firings {sim.firings / wall:>8,.0f}/s  "
                          f"RSS {rows[-1][3] / MIB:6.1f} MiB  peak {rows[-1][4] / MIB:6.1f} MiB")

    customers = args.firings // 3 + 10  # three firings per customer: never dead early
    net = single_server_queue(customers, mean_gap=1.0, mean_service=0.8)
    with tempfile.TemporaryDirectory() as folder:
        log_path = Path(folder) / "events.parquet"
        monitors: list[Any] = [
            TimeAverage("queue"), TimeAverage("busy"), FiringCount("depart"),
            DataCollector("depart", lambda b, now: b["c"] if b["c"] % 100_000 == 0 else None),
        ]
        if not args.no_event_log:
            monitors.append(EventLog(log_path, batch_size=10_000))
        sim = Simulator(net, seed=args.seed, monitors=monitors)
        console.print(f"start: RSS {process.memory_info().rss / MIB:.1f} MiB, "
                      f"{args.firings:,} firings to go, event log "
                      f"{'off' if args.no_event_log else log_path}")
        result = sim.run(max_firings=args.firings, progress=report)
        report(sim)
        log_bytes = log_path.stat().st_size if log_path.exists() else 0
        log_rows = result.monitors.get("event_log", {}).get("rows", 0)
    table = Table(title=f"{result.firings:,} firings, stopped: {result.stop_reason}")
    for column in ("firings", "firings/s", "RSS MiB", "peak RSS MiB"):
        table.add_column(column, justify="right")
    for firings, _now, wall, rss, peak in rows:
        table.add_row(f"{firings:,}", f"{firings / wall:,.0f}", f"{rss / MIB:.1f}",
                      f"{peak / MIB:.1f}")
    console.print(table)
    average = result.monitors["average(queue)"]["average"]
    console.print(f"mean queue {average:.3f} (M/M/1: 0.8^2/(1-0.8) = 3.2); event log "
                  f"{log_rows:,} rows, {log_bytes / MIB:.1f} MiB")
    if len(rows) < 3:
        return 0
    first, last = rows[1], rows[-1]  # from 20% of the run: buffers and caches have warmed up
    growth = (last[4] - first[4]) / MIB
    per_million = growth / ((last[0] - first[0]) / 1e6)
    flat = per_million <= GROWTH_LIMIT_MIB_PER_MILLION
    console.print(f"peak RSS {growth:+.1f} MiB from {first[0]:,} to {last[0]:,} firings: "
                  f"{per_million:+.2f} MiB per million, {'flat' if flat else 'NOT flat'}")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
