"""Cost of the campaign machinery, and what more workers buy, on runs of about 1 s.

A sweep of ``--runs`` cells (a two-flow dumbbell through the net lens, bottleneck queue
limits 10, 11, ...; ``--horizon`` model seconds each) is run:

* **plain loop** (the baseline): ``run_once(make_run(...))`` per cell in this process,
  keeping the summaries;
* **campaign, 1 worker**: :func:`tcpn.experiments.sweep.run_campaign` into a fresh store, in
  this process (key hashing, the store's existence checks, JSON records written
  atomically, the results table loaded at the end);

alternating, ``--repeats`` times; then the machinery alone: the same campaign whose runs
replay one stored summary (a registered evaluation, so nothing but the campaign's own work
is timed); then once each:

* **2 local workers** (``local_executor(2)``: forkserver processes, their start included);
* **Dask LocalCluster, 2 workers** (cluster start reported apart, not included).

Prints the overhead per run of the campaign against the plain loop (wall and CPU time,
medians), the speed-ups against 1 worker, the CPU seconds of the runs (measured in the
worker processes and stored in each record) and the load average before and after: the
machine is shared, so a speed-up below 2 with a load above the core count says more about
the machine than about the executor.

    .venv/bin/python benchmarks/sweep_overhead.py [--runs 8] [--repeats 3] [--horizon 0.5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from tcpn.experiments.sweep import CampaignStore, load_results, register_evaluation, run_campaign
from tcpn.experiments.sweep.executors import dask_executor, local_executor
from tcpn.experiments.sweep.spec import Sweep, parse_sweep
from tcpn.lenses import make_run, run_once

#: the summary the "replay" evaluation returns (one real run's)
REPLAYED: dict = {}


def replay(scenario, seed, replication, options) -> dict:
    """A registered evaluation that costs nothing: the machinery's cost alone."""
    return REPLAYED


def sweep_text(runs: int, horizon_s: float, lens: str = "net") -> str:
    limits = list(range(10, 10 + runs))
    return f"""
links:
- {{a: S0, b: R1, rate_bps: 1.0e8, delay_s: 0.001}}
- {{a: S1, b: R1, rate_bps: 1.0e8, delay_s: 0.001}}
- {{a: R1, b: R2, rate_bps: 1.0e7, delay_s: 0.02, queue: {{kind: drop_tail, limit: 100}}}}
- {{a: R2, b: D0, rate_bps: 1.0e8, delay_s: 0.001}}
- {{a: R2, b: D1, rate_bps: 1.0e8, delay_s: 0.001}}
flows:
- {{id: f0, src: S0, dst: D0, variant: newreno}}
- {{id: f1, src: S1, dst: D1, variant: newreno, start_s: 0.1}}
horizon_s: {horizon_s}
sweep:
  axes:
    links[2].queue.limit: {limits}
  lenses: [{lens}]
"""


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def plain_loop(sweep: Sweep) -> tuple[float, float]:
    wall, cpu = clocks()
    summaries = []
    for cell in sweep.cells():
        assert cell.scenario is not None
        run = make_run(cell.scenario, cell.scenario.seed, 0)
        summaries.append(run_once(cell.scenario, "net", run).summary)
    return time.perf_counter() - wall, time.process_time() - cpu


def campaign(sweep: Sweep, root: Path, executor=None) -> tuple[float, float, float]:
    """Wall and CPU time of this process, and the runs' own CPU seconds (from the records)."""
    store = CampaignStore(root)
    wall, cpu = clocks()
    run_campaign(sweep, store, executor)
    results = load_results(sweep, store)
    results.table()
    elapsed = time.perf_counter() - wall, time.process_time() - cpu
    runs_cpu = float(results.runs()["cpu_time_s"].sum())
    assert results.missing == 0 and (results.runs()["error"] == "").all()
    return (*elapsed, runs_cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--horizon", type=float, default=0.5, help="model seconds per run")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    sweep = parse_sweep(sweep_text(args.runs, args.horizon), "benchmark")
    load_before = os.getloadavg()
    plain_loop(sweep)  # warm-up: imports, first compilations
    cell = sweep.cells()[0]
    REPLAYED.update(run_once(cell.scenario, "net", make_run(cell.scenario, 1, 0)).summary)
    register_evaluation("replay", "__main__:replay")
    replayed = parse_sweep(sweep_text(args.runs, args.horizon, "replay"), "benchmark")
    plain_w, plain_c, camp_w, camp_c = [], [], [], []
    one_runs_cpu = []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            w, c = plain_loop(sweep)
            plain_w.append(w)
            plain_c.append(c)
            w, c, r = campaign(sweep, Path(tmp) / f"one-{repeat}")
            camp_w.append(w)
            camp_c.append(c)
            one_runs_cpu.append(r)
        machinery = [campaign(replayed, Path(tmp) / f"replay-{k}")[1] for k in range(5)]
        executor = local_executor(2)
        try:
            two_w, _, two_cpu = campaign(sweep, Path(tmp) / "two", executor)
        finally:
            executor.shutdown()
        dask_line = "Dask LocalCluster: skipped (--no-dask)"
        if not args.no_dask:
            start = time.perf_counter()
            with dask_executor("local", workers=2) as on_dask:
                started = time.perf_counter() - start
                dask_w, _, dask_cpu = campaign(sweep, Path(tmp) / "dask", on_dask)
            dask_line = (f"Dask LocalCluster, 2 workers: {dask_w:.2f} s wall, speed-up "
                         f"{statistics.median(camp_w) / dask_w:.2f}x against 1 worker; "
                         f"runs' CPU {dask_cpu:.2f} s; cluster start {started:.1f} s "
                         "(not included)")
    runs = args.runs
    pw, pc = statistics.median(plain_w), statistics.median(plain_c)
    cw, cc = statistics.median(camp_w), statistics.median(camp_c)
    print(f"{runs} runs of {args.horizon:g} model s (net lens, 2-flow dumbbell), "
          f"medians of {args.repeats}; load average {load_before[0]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs")
    print(f"plain loop:           {pw / runs:.3f} s wall per run, {pc / runs:.3f} s CPU per run")
    print(f"campaign, 1 worker:   {cw / runs:.3f} s wall per run, {cc / runs:.3f} s CPU per run")
    print(f"overhead per run:     {100 * (cw - pw) / pw:+.1f} % wall, "
          f"{100 * (cc - pc) / pc:+.1f} % CPU ({1e3 * (cc - pc) / runs:+.1f} ms CPU per run)")
    print(f"machinery alone:      {1e3 * statistics.median(machinery) / runs:.1f} ms CPU per "
          f"run (runs replaced by a replayed summary; median of 5), "
          f"{100 * statistics.median(machinery) / pc:.1f} % of a plain run")
    print(f"2 local workers:      {two_w:.2f} s wall, speed-up {cw / two_w:.2f}x against "
          f"1 worker; runs' CPU {two_cpu:.2f} s (1 worker: "
          f"{statistics.median(one_runs_cpu):.2f} s)")
    print(dask_line)


if __name__ == "__main__":
    main()
