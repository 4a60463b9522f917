"""Study S4's lossy-hop points against Reno, net lens and ns3 lens run against run
(docs/validation.md, "What the misses come from", item 9).

    python benchmarks/s4_lossy_trace.py points                 # the three points, 5 runs
    python benchmarks/s4_lossy_trace.py points --variants sack --runs 2
    python benchmarks/s4_lossy_trace.py diverge sack           # replication 0, PER 0
    python benchmarks/s4_lossy_trace.py diverge westwood_plus --per 1e-4 --replication 3

``points``: per run and lens, the studied flow's kbit/s while both run (``f1_kbps``, the
quick profile's 30 s), each flow's drops and timeouts, and the lossy hop's losses (each
lens draws its own). ``diverge``: the first drop, timeout and ssthresh change that differs
between the lenses, per flow (ns-3 records packets at the wire: times within 2 ms count as
the same), with the rows around it. A run takes 1-3 s per lens after ns-3's first load.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from tcpn.lenses import make_run, run_once
from tcpn.models.scenario import validate_scenario
from tcpn.reports.studies.s4 import LOSSY_SECOND_START_S, s4_measure, scenario_mapping

LENSES = ("net", "ns3")
#: ns-3's packet times are read at the wire, the net lens's at the sender (s)
SAME_INSTANT_S = 2e-3


def trace_of(variant: str, lens: str, replication: int, per: float, horizon_s: float) -> Any:
    """The run of ``variant`` against Reno (from 0 s and 1 us) in ``lens``, the study's
    seed."""
    scenario = validate_scenario(scenario_mapping(variant, "reno",
                                                  second_start_s=LOSSY_SECOND_START_S,
                                                  horizon_s=horizon_s, per=per))
    return run_once(scenario, lens, make_run(scenario, 1, replication)).trace


def points(variants: list[str], runs: int, per: float, horizon_s: float) -> None:
    """One line per point, run and lens."""
    for variant in variants:
        for replication in range(runs):
            for lens in LENSES:
                scenario = validate_scenario(scenario_mapping(
                    variant, "reno", second_start_s=LOSSY_SECOND_START_S, horizon_s=horizon_s,
                    per=per))
                result = run_once(scenario, lens, make_run(scenario, 1, replication))
                events = result.trace.events()
                counts = {f"{f} {e}s": int(((events["flow"].astype(str) == f)
                                            & (events["event"] == e)).sum())
                          for f in ("f1", "f2") for e in ("drop", "timeout")}
                lossy = events[(events["event"] == "drop")
                               & (events["where"].astype(str) == "R2->D1")]
                print(f"{variant} run {replication} {lens:4s} f1_kbps "
                      f"{s4_measure(result, 1)['f1_kbps']:7.1f} {counts} lossy hop "
                      f"{[round(float(t), 3) for t in lossy['time_s']]}", flush=True)


def _rows(trace: Any, flow: str, what: str) -> np.ndarray:
    """``(time_s, value)`` of a flow's drops or timeouts (value: seq) or ssthresh changes."""
    if what == "ssthresh":
        series = trace.series("ssthresh_bytes", flow=flow)[["time_s", "value"]].to_numpy()
        return series[1:][np.diff(series[:, 1]) != 0]
    events = trace.events()
    mine = events[(events["flow"].astype(str) == flow) & (events["event"] == what)]
    return mine[["time_s", "seq"]].to_numpy(dtype=float)


def diverge(variant: str, replication: int, per: float, horizon_s: float) -> None:
    """The first difference of each kind, per flow, with its neighbours."""
    traces = {lens: trace_of(variant, lens, replication, per, horizon_s) for lens in LENSES}
    for flow in ("f1", "f2"):
        for what in ("drop", "timeout", "ssthresh"):
            net, ns3 = (_rows(traces[lens], flow, what) for lens in LENSES)
            n = min(len(net), len(ns3))
            apart = np.nonzero((np.abs(net[:n, 0] - ns3[:n, 0]) > SAME_INSTANT_S)
                               | (np.abs(net[:n, 1] - ns3[:n, 1]) > 1.0))[0]
            first = int(apart[0]) if len(apart) else n
            print(f"{flow} {what}: {len(net)} net, {len(ns3)} ns-3, first difference at "
                  f"{first}" + (" (none)" if first == n and len(net) == len(ns3) else ""))
            for k in range(max(0, first - 2), min(first + 3, max(len(net), len(ns3)))):
                left = f"{net[k, 0]:10.6f} {net[k, 1]:10.0f}" if k < len(net) else " " * 21
                right = f"{ns3[k, 0]:10.6f} {ns3[k, 1]:10.0f}" if k < len(ns3) else ""
                print(f"  {k:4d} {left} | {right}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("points", "diverge"))
    parser.add_argument("variant", nargs="?", default="sack")
    parser.add_argument("--variants", default="sack,westwood_plus,adaptive_vegas")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--replication", type=int, default=0)
    parser.add_argument("--per", type=float, default=None,
                        help="packet error rate (points: 1e-4, diverge: 0)")
    parser.add_argument("--horizon", type=float, default=30.0)
    args = parser.parse_args()
    if args.what == "points":
        points(args.variants.split(","), args.runs, 1e-4 if args.per is None else args.per,
               args.horizon)
    else:
        diverge(args.variant, args.replication, 0.0 if args.per is None else args.per,
                args.horizon)


if __name__ == "__main__":
    main()
