"""Dumbbell benchmark of the net lens: 2 NewReno flows, 10 Mbit/s 20 ms bottleneck, 60 s.

Prints the wall and CPU time of the net lens on ``scenarios/dumbbell_newreno.yaml``, its
firings per second, and, as a baseline measured in the same run, the firings per second of
the simulator on the M/M/1 example net (the core's speed on a trivial net): the ratio says
how much the component nets cost per firing over the bare engine. ``--against REV`` also
runs the same measurement on git revision ``REV`` of this repository (extracted with
``git archive`` into a temporary directory, same scenario file, same Python; each run in
a fresh process) and prints
the ratio of the two CPU times: a before/after measured in the same run. CPU time is
less disturbed than wall time by other work on the machine. ``--repeats N`` alternates
the two N times and reports medians.

    .venv/bin/python benchmarks/dumbbell.py [--horizon 60] [--against 8e28553] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tcpn.lenses import make_run
from tcpn.lenses.net import NetLens
from tcpn.models.scenario import load_scenario
from tcpn.models.traces import TraceWriter
from tcpn.petrinets import Simulator
from tcpn.petrinets.examples import single_server_queue

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "dumbbell_newreno.yaml"


def measure(horizon_s: float | None) -> dict[str, Any]:
    """One run of the net lens on the dumbbell: times, firings, goodput."""
    scenario = load_scenario(SCENARIO)
    if horizon_s is not None:
        scenario = scenario.model_copy(update={"horizon_s": horizon_s})
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    cpu, start = time.process_time(), time.perf_counter()
    info = NetLens().run(run, writer, lambda *_a, **_k: None)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    trace = writer.close()
    delivered = float(trace.events(event="deliver")["bytes"].sum())
    return {"name": scenario.name, "horizon_s": scenario.horizon_s, "wall_s": wall,
            "cpu_s": cpu, "build_s": info["build_s"], "simulate_s": info["simulate_s"],
            "firings": info["firings"], "firings_per_s": info["firings_per_s"],
            "places": info["net"]["places"], "transitions": info["net"]["transitions"],
            "goodput_bps": delivered * 8 / scenario.horizon_s}


def measure_in(tree: Path, horizon_s: float | None) -> dict[str, Any]:
    """:func:`measure` in a fresh process on the ``tcpn`` package found in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = [sys.executable, __file__, "--json"]
    if horizon_s is not None:
        args += ["--horizon", str(horizon_s)]
    out = subprocess.run(args, env=env, cwd=tree, check=True, capture_output=True,
                         text=True).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def extract(revision: str, tmp: str) -> Path:
    """Git revision ``revision``'s ``tcpn`` package extracted into directory ``tmp``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tcpn"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    return Path(tmp)


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median CPU time among ``runs`` of the same work."""
    cpu = statistics.median_low(m["cpu_s"] for m in runs)
    return next(m for m in runs if m["cpu_s"] == cpu)


def report(label: str, m: dict[str, Any]) -> None:
    print(f"{label}: {m['places']} places, {m['transitions']} transitions")
    print(f"  wall {m['wall_s']:.2f} s, cpu {m['cpu_s']:.2f} s (build {m['build_s']:.2f} s, "
          f"simulate {m['simulate_s']:.2f} s)")
    print(f"  firings: {m['firings']:,} ({m['firings_per_s']:,.0f} firings/s); goodput "
          f"{m['goodput_bps'] / 1e6:.2f} Mbit/s total")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--horizon", type=float, default=None, help="model seconds (60)")
    parser.add_argument("--against", default=None, metavar="REV",
                        help="git revision to measure too (before/after in one run)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each (alternated with --against); medians")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.horizon)))
        return
    runs, before_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        old = extract(args.against, tmp) if args.against is not None else None
        for _ in range(args.repeats):  # each in a fresh process, alternated
            runs.append(measure_in(ROOT, args.horizon))
            if old is not None:
                before_runs.append(measure_in(old, args.horizon))
    if args.repeats > 1:
        print("cpu s, this tree:", " ".join(f"{m['cpu_s']:.2f}" for m in runs))
        if before_runs:
            print(f"cpu s, {args.against}:", " ".join(f"{m['cpu_s']:.2f}" for m in before_runs))
    now = median_run(runs)
    print(f"net lens, {now['name']}, {now['horizon_s']:g} s model time"
          + (f", median CPU time of {args.repeats}" if args.repeats > 1 else ""))
    report("this tree", now)
    if before_runs:
        before = median_run(before_runs)
        report(f"revision {args.against}", before)
        print(f"  cpu time ratio this tree / {args.against}: "
              f"{now['cpu_s'] / before['cpu_s']:.3f} (speed-up "
              f"{before['cpu_s'] / now['cpu_s']:.3f}x); firings ratio "
              f"{now['firings'] / before['firings']:.2f}; same goodput: "
              f"{now['goodput_bps'] == before['goodput_bps']}")
    baseline = Simulator(single_server_queue(100_000, 1.0, 0.9), seed=1).run()
    base_rate = baseline.firings / baseline.metadata["wall_time_s"]
    print(f"baseline M/M/1 net: {base_rate:,.0f} firings/s; ratio dumbbell/baseline "
          f"{now['firings_per_s'] / base_rate:.2f}")


if __name__ == "__main__":
    main()
