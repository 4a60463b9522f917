"""CPU time of the net lens against ns-3 on the same scenario, in the same run.

For the reference dumbbell (``scenarios/dumbbell_newreno.yaml``: 2 NewReno flows,
10 Mbit/s 20 ms bottleneck, 60 s) and its 100 Mbit/s variant, prints the median over
``--repeats`` runs of: the net lens (simulation + trace, CPU time of a fresh process),
ns-3's ``Simulator.Run()`` alone (CPU and wall time of the ns-3 worker), the ns3 lens end
to end (wall), and the ratio net / ns-3 ``Run()`` in CPU time. The last line compares the
ratio at 100 Mbit/s with the ratio at 10 Mbit/s: a net lens whose cost per packet does not
grow with the window and the queue keeps them close (floor: within 1.5x). ns-3's import
and warm-up are excluded and printed separately. CPU time, because on a shared machine
wall time measures the other jobs too.

    .venv/bin/python benchmarks/net_vs_ns3.py [--horizon 60] [--repeats 3] [--only-10M]
    .venv/bin/python benchmarks/net_vs_ns3.py --horizon 20 --against de2a1b8

``--against REV`` also runs the net lens of git revision ``REV`` (its ``tcpn`` package
extracted with ``git archive``, each run in a fresh process, alternated with this tree's)
against the same ns-3 runs: the before/after table in one run. Both trees must fire the
same sequence, so their firings are printed side by side.

``--engines python,native`` runs this tree's net lens with each simulator engine
(``$TCPN_ENGINE``; the default: ``auto``, the simulator's default, which runs ``native``;
``native``: the Cython-built engine of ``tcpn.petrinets.engine.native``; both built into its
cache before timing), alternated like the trees; ``--against REV`` then runs
``REV``'s net lens with each of them too (before/after for every engine in one run).
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
from tcpn.models.scenario import Scenario, load_scenario
from tcpn.models.traces import TraceWriter

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "dumbbell_newreno.yaml"
RATES_BPS = {"10 Mbit/s": 10e6, "100 Mbit/s": 100e6}


def case(horizon_s: float, rate_bps: float) -> Scenario:
    """The reference dumbbell over ``horizon_s`` with a ``rate_bps`` bottleneck."""
    base = load_scenario(SCENARIO)
    links = [link.model_copy(update={"rate_bps": rate_bps}) if (link.a, link.b) ==
             ("R1", "R2") else link for link in base.links]
    return base.model_copy(update={"horizon_s": horizon_s, "links": links})


def net_lens(horizon_s: float, rate_bps: float) -> dict[str, Any]:
    """One net lens run in this process: CPU and wall seconds, firings."""
    scenario = case(horizon_s, rate_bps)
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    cpu, start = time.process_time(), time.perf_counter()
    info = NetLens().run(run, writer, lambda *_a, **_k: None)
    writer.close()
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - start,
            "firings": info["firings"]}


def net_lens_in(tree: Path, horizon_s: float, rate_bps: float,
                engine: str = "python") -> dict[str, Any]:
    """:func:`net_lens` in a fresh process on the ``tcpn`` package found in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "TCPN_ENGINE": engine}
    out = subprocess.run([sys.executable, __file__, "--json", str(horizon_s), str(rate_bps)],
                         env=env, cwd=tree, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def ns3_run(scenario: Scenario, worker: Any) -> dict[str, Any]:
    """One ns3 lens run: ``Run()`` CPU and wall seconds, events, end-to-end wall seconds."""
    from tcpn.lenses.ns3 import Ns3Lens

    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    start = time.perf_counter()
    info = Ns3Lens(worker=worker).run(run, writer, lambda *_a, **_k: None)
    writer.close()
    return {"lens_s": time.perf_counter() - start, "run_s": info["run_s"],
            "run_cpu_s": info["run_cpu_s"], "events": info["events"]}


def extract(revision: str, tmp: str) -> Path:
    """Git revision ``revision``'s ``tcpn`` package extracted into directory ``tmp``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tcpn"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    return Path(tmp)


def median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--horizon", type=float, default=60.0, help="model seconds")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only-10M", action="store_true", help="skip the 100 Mbit/s case")
    parser.add_argument("--against", default=None, metavar="REV",
                        help="git revision whose net lens runs too (before/after in one run)")
    parser.add_argument("--engines", default="auto",
                        help="simulator engines of this tree's net lens, comma-separated "
                             "(default: auto, the simulator's default)")
    parser.add_argument("--json", nargs=2, type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json is not None:
        print(json.dumps(net_lens(*args.json)))
        return
    from tcpn.lenses.ns3.worker import Ns3Worker

    rates = {k: v for k, v in RATES_BPS.items() if not (args.only_10M and v > 10e6)}
    ratios: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp, Ns3Worker() as worker:
        trees = {f"this tree, {engine}": (ROOT, engine)
                 for engine in args.engines.split(",") if engine}
        if args.against is not None:
            before = extract(args.against, tmp)
            trees.update({f"{args.against}, {engine}": (before, engine)
                          for engine in args.engines.split(",") if engine})
        for tree, engine in trees.values():  # native builds (cached) before timing, each
            for rate_bps in rates.values():  # tree by its own code, each rate's net
                net_lens_in(tree, 0.01, rate_bps, engine)
        start = time.perf_counter()
        worker.call(divmod, 1, 1)
        print(f"ns-3 worker start-up: {time.perf_counter() - start:.2f} s (import "
              f"{worker.startup.get('import_s', float('nan')):.2f} s, then a warm-up run); "
              f"load average {os.getloadavg()[0]:.1f}")
        for label, rate_bps in rates.items():
            scenario = case(args.horizon, rate_bps)
            net: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
            ns3 = []
            for _ in range(args.repeats):  # alternated, so a change of load hits all
                for name, (tree, engine) in trees.items():
                    net[name].append(net_lens_in(tree, args.horizon, rate_bps, engine))
                ns3.append(ns3_run(scenario, worker))
            run_cpu_s = median(ns3, "run_cpu_s")
            print(f"{label}, {args.horizon:g} s: ns-3 Run() {run_cpu_s:.2f} s CPU "
                  f"({median(ns3, 'run_s'):.2f} s wall, {ns3[0]['events']:,} events), "
                  f"ns3 lens end to end {median(ns3, 'lens_s'):.2f} s wall; "
                  f"load average {os.getloadavg()[0]:.1f}")
            for name, runs in net.items():
                cpu_s = median(runs, "cpu_s")
                each = " ".join(f"{r['cpu_s']:.2f}" for r in runs)
                ratios.setdefault(name, {})[label] = cpu_s / run_cpu_s
                print(f"  net lens ({name}): {cpu_s:.2f} s CPU ({median(runs, 'wall_s'):.2f} s "
                      f"wall, {runs[0]['firings']:,} firings; CPU s "
                      f"{each}) | net / ns-3 Run() "
                      f"= {cpu_s / run_cpu_s:.2f}")
    if len(rates) > 1:
        for name, by_rate in ratios.items():
            slow, fast = by_rate["10 Mbit/s"], by_rate["100 Mbit/s"]
            print(f"{name}: (net / ns-3 at 100 Mbit/s) / (net / ns-3 at 10 Mbit/s) = "
                  f"{fast:.2f} / {slow:.2f} = {fast / slow:.2f} (floor <= 1.5)")


if __name__ == "__main__":
    main()
