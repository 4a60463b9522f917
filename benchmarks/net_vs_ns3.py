"""Wall time of the net lens against ns-3 on the same scenario, in the same process.

For the reference dumbbell (``scenarios/dumbbell_newreno.yaml``: 2 NewReno flows,
10 Mbit/s 20 ms bottleneck, 60 s) and its 100 Mbit/s variant, prints the median over
``--repeats`` runs of: the net lens (simulation + trace), ns-3's ``Simulator.Run()`` alone,
the ns3 lens end to end (build, run, pcap reading, trace), and the ratio net / ns-3
(wall times; the net lens's CPU time too, which load disturbs less).
ns-3's import and warm-up are excluded and printed separately. Floor: net <= 3x ns-3;
goal: faster than ns-3.

    .venv/bin/python benchmarks/net_vs_ns3.py [--horizon 60] [--repeats 3] [--only-10M]

``--engines python,native`` times the net lens with each simulator engine (``native``:
the Cython-built one of ``tcpn.petrinets.native``, through ``$TCPN_ENGINE``; its build,
cached, happens before timing), alternating within each repeat. To compare trees, run it
twice with ``PYTHONPATH`` on the ``tcpn`` of each (e.g. a ``git worktree`` of the older
commit): ns-3 runs again each time, so compare the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from tcpn.models.lenses import make_run
from tcpn.models.net_lens import NetLens
from tcpn.models.scenario import load_scenario
from tcpn.models.topology import compose
from tcpn.models.traces import TraceWriter
from tcpn.petrinets import Simulator
from tcpn.validation.ns3 import Ns3Lens
from tcpn.validation.ns3.worker import Ns3Worker

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "dumbbell_newreno.yaml"


def _net(scenario, engine):
    os.environ["TCPN_ENGINE"] = engine
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    start, cpu = time.perf_counter(), time.process_time()
    NetLens().run(run, writer, lambda *_args, **_kwargs: None)
    writer.close()
    return time.perf_counter() - start, time.process_time() - cpu


def _ns3(scenario, worker):
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    lens = Ns3Lens(worker=worker)
    start = time.perf_counter()
    info = lens.run(run, writer, lambda *_args, **_kwargs: None)
    writer.close()
    return time.perf_counter() - start, info["run_s"], info["events"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=float, default=60.0, help="model seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only-10M", action="store_true", help="skip the 100 Mbit/s case")
    parser.add_argument("--engines", default="python",
                        help="simulator engines for the net lens, comma-separated")
    args = parser.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    base = load_scenario(SCENARIO).model_copy(update={"horizon_s": args.horizon})
    fast_links = [link.model_copy(update={"rate_bps": 100e6}) if (link.a, link.b) ==
                  ("R1", "R2") else link for link in base.links]
    cases = {"10 Mbit/s": base,
             "100 Mbit/s": base.model_copy(update={"links": fast_links,
                                                   "name": "dumbbell_100M"})}
    if args.only_10M:
        del cases["100 Mbit/s"]
    with Ns3Worker() as worker:
        start = time.perf_counter()
        worker.call(divmod, 1, 1)
        print(f"ns-3 worker start-up: {time.perf_counter() - start:.2f} s (import "
              f"{worker.startup.get('import_s', float('nan')):.2f} s, then a warm-up run)")
        for label, scenario in cases.items():
            for engine in engines:  # the native build (cached) before timing
                Simulator(compose(scenario, make_run(scenario).flows).net, engine=engine)
            net = {engine: [] for engine in engines}
            for _ in range(args.repeats):
                for engine in engines:
                    net[engine].append(_net(scenario, engine))
            ns3 = [_ns3(scenario, worker) for _ in range(args.repeats)]
            lens_s = statistics.median(t for t, _, _ in ns3)
            run_s = statistics.median(r for _, r, _ in ns3)
            for engine, times in net.items():
                net_s = statistics.median(wall for wall, _ in times)
                cpu_s = statistics.median(cpu for _, cpu in times)
                print(f"{label}, {args.horizon:g} s, engine {engine}: net lens {net_s:.2f} s "
                      f"(CPU {cpu_s:.2f} s) | "
                      f"ns-3 Run() {run_s:.2f} s ({ns3[0][2]} events) | ns3 lens end to end "
                      f"{lens_s:.2f} s | net / ns-3 Run() = {net_s / run_s:.2f}, net / ns3 "
                      f"lens = {net_s / lens_s:.2f}")

if __name__ == "__main__":
    main()
