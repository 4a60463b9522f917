"""CPU seconds of one net-lens run of a study point (S3, S4) in a fresh process.

S3's 802.11 points and S4's 300 s points are most of the studies' CPU (issue 32); this
times one replication of one point of the quick profile, the run alone (the net built
and simulated, the trace written; imports excluded), on the engine ``$TCPN_ENGINE``
names (the simulator's default ``auto`` when unset), its modules built before timing.

    .venv/bin/python benchmarks/study_point_cpu.py [s3:newreno_ber0.0001 s4:c1_vegas ...]
    .venv/bin/python benchmarks/study_point_cpu.py --repeats 3 --horizon 30

One JSON line per run (``cpu_s``, ``firings``) and one per point with the median.
``--horizon`` overrides the point's horizon (seconds) to keep a diagnosis short.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_POINTS = ("s3:newreno_ber0.0001", "s4:c1_vegas")


def point_mapping(point: str, horizon_s: float | None) -> dict[str, Any]:
    """The scenario mapping of ``study:experiment`` in the quick profile (net lens)."""
    from tcpn.reports.studies import s3, s4
    from tcpn.reports.studies.experiments import with_fields

    study, _, name = point.partition(":")
    module = {"s3": s3, "s4": s4}[study]
    experiment = {e.name: e for e in module.experiments(module.SETTINGS["quick"])}[name]
    mapping = dict(with_fields(experiment.scenario, experiment.lens_changes.get("net", {})))
    if horizon_s is not None:
        mapping["horizon_s"] = horizon_s
    return mapping


def run_point(point: str, horizon_s: float | None) -> dict[str, Any]:
    """One net-lens run of ``point`` in this process: CPU seconds and firings."""
    from tcpn.lenses import make_run
    from tcpn.lenses.native_build import build_scenario_nets
    from tcpn.lenses.net import NetLens
    from tcpn.models.scenario import validate_scenario
    from tcpn.models.traces import TraceWriter

    scenario = validate_scenario(point_mapping(point, horizon_s))
    build_scenario_nets([scenario])  # a first build is not the run's cost
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    cpu = time.process_time()
    info = NetLens().run(run, writer, lambda *_a, **_k: None)
    writer.close()
    return {"point": point, "cpu_s": time.process_time() - cpu, "firings": info["firings"],
            "engine": info["simulator_engine"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="*", default=list(DEFAULT_POINTS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--horizon", type=float, default=None)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(run_point(args.one, args.horizon)))
        return
    for point in args.points:
        runs = []
        for _ in range(args.repeats):
            command = [sys.executable, __file__, "--one", point]
            if args.horizon is not None:
                command += ["--horizon", str(args.horizon)]
            out = subprocess.run(command, cwd=ROOT, env=dict(os.environ), check=True,
                                 capture_output=True, text=True).stdout
            runs.append(json.loads(out.splitlines()[-1]))
            print(json.dumps(runs[-1]), flush=True)
        print(json.dumps({"point": point, "median_cpu_s":
                          statistics.median(r["cpu_s"] for r in runs),
                          "firings": runs[0]["firings"], "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
