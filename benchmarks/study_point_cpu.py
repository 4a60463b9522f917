"""CPU seconds and peak memory of one net-lens run of a study point, in a fresh process.

S3's 802.11 points and S4's 300 s points are most of the studies' CPU (issue 32); this
runs one replication of one point of a study profile (quick by default) the way the
study runs it: :func:`tcpn.reports.studies.experiments.measured_run`, the net lens run and
measured by the study's own measurement (the net built and simulated, the trace written,
the summary and the measure computed; imports excluded), on the engine ``$TCPN_ENGINE``
names (the simulator's default ``auto`` when unset), its modules built before timing.

    .venv/bin/python benchmarks/study_point_cpu.py [s3:newreno_ber0.0001 s4:c1_vegas ...]
    .venv/bin/python benchmarks/study_point_cpu.py --repeats 3 --horizon 30
    .venv/bin/python benchmarks/study_point_cpu.py --profile full s3:ackless_tcp_l_138

One JSON line per run (``cpu_s``; ``peak_rss_mib``, the process's peak resident memory
after the run, and ``rss_before_mib``, its peak before the run began: the run's own
growth is the difference; ``measured``, the measure's returned metrics, time
series left out) and one per point with the medians. ``--horizon`` overrides the
point's horizon (seconds) to keep a diagnosis short. The tcpn measured is the one
``PYTHONPATH`` names (another tree: ``PYTHONPATH=../other``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_POINTS = ("s3:newreno_ber0.0001", "s4:c1_vegas")
MEASURES = {"s1": "a_flow_rates", "s2": "s2_measure", "s3": "s3_measure",
            "s4": "s4_measure", "s5": "ip_kbps"}
"""Each study's measurement function (in ``tcpn.reports.studies.<study>``)."""
SEED = 1
"""The studies' seed (``Settings.seed``)."""


def point_mapping(point: str, profile: str, horizon_s: float | None) -> dict[str, Any]:
    """The scenario mapping of ``study:experiment`` in ``profile`` (net lens)."""
    from tcpn.reports.studies.experiments import with_fields

    study, _, name = point.partition(":")
    module = importlib.import_module(f"tcpn.reports.studies.{study}")
    experiment = {e.name: e for e in module.experiments(module.SETTINGS[profile])}[name]
    mapping = dict(with_fields(experiment.scenario, experiment.lens_changes.get("net", {})))
    if horizon_s is not None:
        mapping["horizon_s"] = horizon_s
    return mapping


def peak_rss_mib() -> float:
    """This process's peak resident memory so far (Linux: ``ru_maxrss`` in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_point(point: str, profile: str, horizon_s: float | None) -> dict[str, Any]:
    """One net-lens run of ``point`` as its study runs it, in this process: CPU seconds,
    peak memory before and after, firings, and what the study's measure returned."""
    from tcpn.lenses.native_build import build_scenario_nets
    from tcpn.models.scenario import validate_scenario
    from tcpn.reports.studies.experiments import measured_run

    study = point.partition(":")[0]
    scenario = validate_scenario(point_mapping(point, profile, horizon_s))
    build_scenario_nets([scenario])  # a first build is not the run's cost
    options = {"lens": "net", "measure": f"tcpn.reports.studies.{study}:{MEASURES[study]}"}
    importlib.import_module(f"tcpn.reports.studies.{study}")
    before = peak_rss_mib()
    cpu = time.process_time()
    measured = measured_run(scenario, SEED, 0, options)
    cpu_s = time.process_time() - cpu
    measured.pop("series", None)
    return {"point": point, "profile": profile, "horizon_s": scenario.horizon_s,
            "cpu_s": cpu_s, "rss_before_mib": round(before, 1),
            "peak_rss_mib": round(peak_rss_mib(), 1), "measured": measured}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("points", nargs="*", default=list(DEFAULT_POINTS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--profile", default="quick", help="the study profile (quick, full)")
    parser.add_argument("--horizon", type=float, default=None)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(run_point(args.one, args.profile, args.horizon)))
        return
    for point in args.points:
        runs = []
        for _ in range(args.repeats):
            command = [sys.executable, __file__, "--one", point, "--profile", args.profile]
            if args.horizon is not None:
                command += ["--horizon", str(args.horizon)]
            out = subprocess.run(command, cwd=ROOT, env=dict(os.environ), check=True,
                                 capture_output=True, text=True).stdout
            runs.append(json.loads(out.splitlines()[-1]))
            print(json.dumps(runs[-1]), flush=True)
        print(json.dumps({
            "point": point, "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
            "median_peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in runs),
            "median_rss_before_mib": statistics.median(r["rss_before_mib"] for r in runs),
            "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
