"""CPU time and accuracy of the fluid lens against ns-3 on the same scenario, in one run.

Two scenarios of ``scenarios/reference``: the dumbbell (``newreno_2flows.yaml``: 2 NewReno
flows, 10 Mbit/s 20 ms drop-tail, 30 s) and ``red_100flows.yaml`` (100 NewReno flows,
100 Mbit/s RED, 20 s). For each, the median over ``--repeats`` rounds of: the fluid solver
(``simulate_bottleneck`` on the lens's model with the lens's defaults, i.e. with its
accuracy check; and once more without the check), CPU time in a fresh process per tree
and round, each process's median of ``--inner`` solves; ns-3's ``Simulator.Run()`` (CPU
time of the ns-3 worker); the ratio ns-3 ``Run()`` / fluid solve (goal >= 1000x); and the
fluid lens's errors against ns-3 (run 0 of the scenario's seed in both) on the aggregate
goodput, the mean per-flow goodput and the bottleneck's mean queue. ns-3's import and
warm-up, and the fluid kernels' first (compiling or cache-loading) call, are excluded.
CPU time, because on a shared machine wall time measures the other jobs too.

    .venv/bin/python benchmarks/fluid_vs_ns3.py [--repeats 3] [--horizon S]
    .venv/bin/python benchmarks/fluid_vs_ns3.py --against 11b830e

``--against REV`` also runs the fluid lens of git revision ``REV`` (its ``tcpn`` package
extracted with ``git archive``, each round in a fresh process, alternated with this
tree's) against the same ns-3 runs: the before/after table in one run.
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

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "scenarios" / "reference"
CASES = {"dumbbell (2 flows, 10 Mbit/s)": "newreno_2flows.yaml",
         "RED, 100 flows, 100 Mbit/s": "red_100flows.yaml"}


def _scenario(file: str, horizon_s: float | None) -> Any:
    from tcpn.models.scenario import load_scenario

    scenario = load_scenario(REFERENCE / file)
    if horizon_s is not None:
        scenario = scenario.model_copy(update={"horizon_s": horizon_s})
    return scenario


def _metrics(trace: Any, queue: str) -> dict[str, float]:
    """The compared metrics of a trace: aggregate and mean per-flow goodput, mean queue."""
    from tcpn.models.metrics import summarize

    summary = summarize(trace)
    flows = [f["goodput_bps"] for f in summary["flows"].values()]
    return {"goodput_bps": summary["aggregate"]["goodput_bps"],
            "flow_goodput_bps": statistics.fmean(flows),
            "queue_pkts": summary["queues"][queue]["mean_packets"]}


def fluid_case(file: str, horizon_s: float | None, inner: int) -> dict[str, Any]:
    """In this process: the fluid solve's CPU and wall medians over ``inner`` solves (with
    and without the accuracy check) and the lens's trace metrics."""
    from tcpn.lenses import make_run
    from tcpn.lenses.fluid import FluidLens
    from tcpn.models.traces import TraceWriter
    from tcpn.solvers.fluid.bottleneck import simulate_bottleneck

    scenario = _scenario(file, horizon_s)
    run = make_run(scenario)
    lens = FluidLens()
    model = lens.model(scenario, run.flows)

    def solve(check: bool) -> tuple[float, float]:
        cpu, wall = time.process_time(), time.perf_counter()
        simulate_bottleneck(model.classes, model.bottleneck, scenario.horizon_s, None, check,
                            scenario.measure.warmup_s)
        return time.process_time() - cpu, time.perf_counter() - wall

    solve(True)  # compiles or loads the kernels
    checked = [solve(True) for _ in range(inner)]
    single = [solve(False) for _ in range(inner)]
    writer = TraceWriter(scenario, run.flows)
    start = time.perf_counter()
    lens.run(run, writer, lambda _t: None)
    trace = writer.close()
    lens_s = time.perf_counter() - start
    return {"cpu_s": statistics.median(c for c, _ in checked),
            "wall_s": statistics.median(w for _, w in checked),
            "single_cpu_s": statistics.median(c for c, _ in single),
            "lens_s": lens_s, "metrics": _metrics(trace, model.bottleneck_queue)}


def fluid_in(tree: Path, file: str, horizon_s: float | None, inner: int) -> dict[str, Any]:
    """:func:`fluid_case` in a fresh process on the ``tcpn`` package found in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--json", file, str(horizon_s), str(inner)]
    out = subprocess.run(command, env=env, cwd=tree, check=True, capture_output=True,
                         text=True).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def ns3_case(file: str, horizon_s: float | None, worker: Any) -> dict[str, Any]:
    """One ns3 lens run: ``Run()`` CPU and wall seconds and the trace's metrics."""
    from tcpn.lenses import make_run
    from tcpn.lenses.ns3 import Ns3Lens
    from tcpn.models.traces import TraceWriter

    scenario = _scenario(file, horizon_s)
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    info = Ns3Lens(worker=worker).run(run, writer, lambda _t: None)
    queue = scenario.concrete_flows()[0].data_queues[1]  # the bottleneck
    return {"run_s": info["run_s"], "run_cpu_s": info["run_cpu_s"],
            "metrics": _metrics(writer.close(), queue)}


def extract(revision: str, tmp: str) -> Path:
    """Git revision ``revision``'s ``tcpn`` package extracted into directory ``tmp``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tcpn"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    return Path(tmp)


def _errors(fluid: dict[str, float], ns3: dict[str, float]) -> str:
    def rel(key: str) -> str:
        return f"{(fluid[key] / ns3[key] - 1) * 100:+.1f} %"
    return (f"aggregate goodput {fluid['goodput_bps'] / 1e6:.2f} vs "
            f"{ns3['goodput_bps'] / 1e6:.2f} Mbit/s ({rel('goodput_bps')}), mean flow goodput "
            f"{rel('flow_goodput_bps')}, mean queue {fluid['queue_pkts']:.1f} vs "
            f"{ns3['queue_pkts']:.1f} packets ({rel('queue_pkts')})")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="rounds (ns-3 runs per case)")
    parser.add_argument("--inner", type=int, default=5, help="fluid solves per round")
    parser.add_argument("--horizon", type=float, default=None,
                        help="model seconds (default: each scenario's)")
    parser.add_argument("--against", default=None, metavar="REV",
                        help="git revision whose fluid lens runs too (before/after in one run)")
    parser.add_argument("--json", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json is not None:
        file, horizon, inner = args.json
        print(json.dumps(fluid_case(file, None if horizon == "None" else float(horizon),
                                    int(inner))))
        return
    from tcpn.lenses.ns3.worker import Ns3Worker

    with tempfile.TemporaryDirectory() as tmp, Ns3Worker() as worker:
        trees = {"this tree": ROOT}
        if args.against is not None:
            trees[args.against] = extract(args.against, tmp)
        start = time.perf_counter()
        worker.call(divmod, 1, 1)
        print(f"ns-3 worker start-up: {time.perf_counter() - start:.2f} s (import "
              f"{worker.startup.get('import_s', float('nan')):.2f} s, then a warm-up run); "
              f"load average {os.getloadavg()[0]:.1f}")
        for label, file in CASES.items():
            fluid: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
            ns3 = []
            for _ in range(args.repeats):  # alternated, so a change of load hits all
                for name, tree in trees.items():
                    fluid[name].append(fluid_in(tree, file, args.horizon, args.inner))
                ns3.append(ns3_case(file, args.horizon, worker))
            run_cpu_s = statistics.median(r["run_cpu_s"] for r in ns3)
            horizon = args.horizon or _scenario(file, None).horizon_s
            print(f"{label}, {horizon:g} s: ns-3 Run() {run_cpu_s:.2f} s CPU "
                  f"({statistics.median(r['run_s'] for r in ns3):.2f} s wall); "
                  f"load average {os.getloadavg()[0]:.1f}")
            for name, runs in fluid.items():
                cpu_s = statistics.median(r["cpu_s"] for r in runs)
                single_s = statistics.median(r["single_cpu_s"] for r in runs)
                each = " ".join(f"{r['cpu_s'] * 1e3:.2f}" for r in runs)
                print(f"  fluid ({name}): solve {cpu_s * 1e3:.2f} ms CPU (rounds {each}; "
                      f"{statistics.median(r['wall_s'] for r in runs) * 1e3:.2f} ms wall) | "
                      f"ns-3 Run() / fluid solve = {run_cpu_s / cpu_s:.0f}x; without the "
                      f"accuracy check {single_s * 1e3:.2f} ms ({run_cpu_s / single_s:.0f}x); "
                      f"lens end to end {statistics.median(r['lens_s'] for r in runs):.2f} s")
                print(f"    vs ns-3: {_errors(runs[0]['metrics'], ns3[0]['metrics'])}")


if __name__ == "__main__":
    main()
