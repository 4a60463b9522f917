"""Dumbbell benchmark of the net lens: 2 NewReno flows, 10 Mbit/s 20 ms bottleneck, 60 s.

Prints the wall time of the net lens on ``scenarios/dumbbell_newreno.yaml``, its firings
per second, and, as a baseline measured in the same run, the firings per second of the
simulator on the M/M/1 example net (the core's speed on a trivial net): the ratio says how
much the component nets cost per firing over the bare engine.

    .venv/bin/python benchmarks/dumbbell.py [--horizon 60]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tcpn.models.lenses import make_run
from tcpn.models.net_lens import NetLens
from tcpn.models.scenario import load_scenario
from tcpn.models.traces import TraceWriter
from tcpn.petrinets import Simulator
from tcpn.petrinets.examples import single_server_queue

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "dumbbell_newreno.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=float, default=None, help="model seconds (60)")
    args = parser.parse_args()
    scenario = load_scenario(SCENARIO)
    if args.horizon is not None:
        scenario = scenario.model_copy(update={"horizon_s": args.horizon})
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    start = time.perf_counter()
    info = NetLens().run(run, writer, lambda _t: None)
    wall = time.perf_counter() - start
    trace = writer.close()
    baseline = Simulator(single_server_queue(100_000, 1.0, 0.9), seed=1).run()
    base_rate = baseline.firings / baseline.metadata["wall_time_s"]
    rate = info["firings_per_s"]
    delivered = trace.events(event="deliver")["bytes"].sum()
    print(f"net lens, {scenario.name}, {scenario.horizon_s:g} s model time")
    print(f"  net: {info['net']['places']} places, {info['net']['transitions']} transitions")
    print(f"  wall time: {wall:.2f} s (build {info['build_s']:.2f} s, simulate "
          f"{info['simulate_s']:.2f} s)")
    print(f"  firings: {info['firings']:,} ({rate:,.0f} firings/s)")
    print(f"  goodput: {delivered * 8 / scenario.horizon_s / 1e6:.2f} Mbit/s total")
    print(f"  baseline M/M/1 net: {base_rate:,.0f} firings/s; ratio dumbbell/baseline "
          f"{rate / base_rate:.2f}")


if __name__ == "__main__":
    main()
