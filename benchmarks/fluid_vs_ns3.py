"""Wall time and accuracy of the fluid lens against ns-3 on the same scenario, in one process.

Two scenarios of ``scenarios/reference``: the dumbbell (``newreno_2flows.yaml``: 2 NewReno
flows, 10 Mbit/s 20 ms drop-tail, 30 s) and ``red_100flows.yaml`` (100 NewReno flows,
100 Mbit/s RED, 20 s). For each, the median over ``--repeats`` runs of: the fluid solver
alone (the DDE integration with its convergence check, i.e. a second integration at half
the step, and without it), the fluid lens end to end (model, solve, trace), ns-3's
``Simulator.Run()`` alone and the ns3 lens end to end (build, run, pcap reading, trace);
the ratios ns-3 / fluid (goal >= 1000x); and the fluid lens's
errors against ns-3 (run 0 of the scenario's seed in both) on the aggregate goodput, the
mean per-flow goodput and the bottleneck's mean queue (goal within 10 % where the model's
assumptions hold). ns-3's import and warm-up, and the fluid kernels' first (compiling)
call, are excluded and printed separately.

    .venv/bin/python benchmarks/fluid_vs_ns3.py [--repeats 3] [--horizon S]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from tcpn.models.lenses import make_run
from tcpn.models.scenario import load_scenario
from tcpn.models.traces import TraceWriter
from tcpn.solvers.fluid_lens import FluidLens
from tcpn.validation.metrics import summarize
from tcpn.validation.ns3 import Ns3Lens
from tcpn.validation.ns3.worker import Ns3Worker

REFERENCE = Path(__file__).resolve().parent.parent / "scenarios" / "reference"
CASES = {"dumbbell (2 flows, 10 Mbit/s)": "newreno_2flows.yaml",
         "RED, 100 flows, 100 Mbit/s": "red_100flows.yaml"}


def _fluid(scenario, check_convergence: bool = True):
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    start = time.perf_counter()
    info = FluidLens(check_convergence=check_convergence).run(run, writer, lambda _t: None)
    trace = writer.close()
    return time.perf_counter() - start, info["solve_s"], trace


def _ns3(scenario, worker):
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    start = time.perf_counter()
    info = Ns3Lens(worker=worker).run(run, writer, lambda _t: None)
    trace = writer.close()
    return time.perf_counter() - start, info["run_s"], trace


def _errors(fluid, ns3, queue: str) -> str:
    a, b = summarize(fluid), summarize(ns3)
    agg = a["aggregate"]["goodput_bps"] / b["aggregate"]["goodput_bps"] - 1
    per_flow_fluid = [f["goodput_bps"] for f in a["flows"].values()]
    per_flow_ns3 = [f["goodput_bps"] for f in b["flows"].values()]
    mean_flow = statistics.fmean(per_flow_fluid) / statistics.fmean(per_flow_ns3) - 1
    q_fluid, q_ns3 = a["queues"][queue]["mean_packets"], b["queues"][queue]["mean_packets"]
    return (f"aggregate goodput {a['aggregate']['goodput_bps'] / 1e6:.2f} vs "
            f"{b['aggregate']['goodput_bps'] / 1e6:.2f} Mbit/s ({agg * 100:+.1f} %), mean "
            f"flow goodput {mean_flow * 100:+.1f} %, mean queue {queue} {q_fluid:.1f} vs "
            f"{q_ns3:.1f} packets ({(q_fluid / q_ns3 - 1) * 100:+.1f} %)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--horizon", type=float, default=None,
                        help="model seconds (default: each scenario's)")
    args = parser.parse_args()
    scenarios = {}
    for label, file in CASES.items():
        scenario = load_scenario(REFERENCE / file)
        if args.horizon is not None:
            scenario = scenario.model_copy(update={"horizon_s": args.horizon})
        scenarios[label] = scenario
    first = next(iter(scenarios.values()))
    start = time.perf_counter()
    _fluid(first.model_copy(update={"horizon_s": 1.0 + first.measure.warmup_s}))
    print(f"fluid kernels' first call (compilation or cache load): "
          f"{time.perf_counter() - start:.2f} s")
    with Ns3Worker() as worker:
        start = time.perf_counter()
        worker.call(divmod, 1, 1)
        print(f"ns-3 worker start-up: {time.perf_counter() - start:.2f} s (import "
              f"{worker.startup.get('import_s', float('nan')):.2f} s, then a warm-up run)")
        for label, scenario in scenarios.items():
            fluid = [_fluid(scenario) for _ in range(args.repeats)]
            single = statistics.median(_fluid(scenario, False)[1] for _ in range(args.repeats))
            ns3 = [_ns3(scenario, worker) for _ in range(args.repeats)]
            lens_f = statistics.median(t for t, _, _ in fluid)
            solve_f = statistics.median(s for _, s, _ in fluid)
            lens_n = statistics.median(t for t, _, _ in ns3)
            run_n = statistics.median(r for _, r, _ in ns3)
            queue = scenario.concrete_flows()[0].data_queues[1]  # the bottleneck
            print(f"{label}, {scenario.horizon_s:g} s: fluid solve {solve_f * 1e3:.1f} ms | "
                  f"fluid lens {lens_f:.2f} s | ns-3 Run() {run_n:.2f} s | ns3 lens "
                  f"{lens_n:.2f} s | ns-3 Run() / fluid solve = {run_n / solve_f:.0f}x, "
                  f"ns3 lens / fluid lens = {lens_n / lens_f:.1f}x")
            print(f"    one fluid integration (no step-halving check) {single * 1e3:.1f} ms: "
                  f"ns-3 Run() / that = {run_n / single:.0f}x")
            print(f"    fluid vs ns-3: {_errors(fluid[0][2], ns3[0][2], queue)}")


if __name__ == "__main__":
    main()
