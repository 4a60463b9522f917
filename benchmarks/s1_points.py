"""Study S1's experiments, net lens against ns-3: the observed A flows' kbit/s (each, and
their mean) per replication, and the mean over the runs (docs/validation.md, "S1 against
ns-3").

    python benchmarks/s1_points.py exp1_tahoe,exp3_tahoe 20 10 net,ns3
    python benchmarks/s1_points.py exp3_tahoe 20 3 ns3 1     # replications 1 and 2

Each run is ``tcpn.lenses.run.run_once`` on ``make_run(scenario, replication=r)`` of the
experiment's scenario (``s1.experiments`` with the quick profile's lenses) at the given
horizon (seconds), seed 1, measured by ``s1.a_flow_rates`` (from 5 s to the horizon).
One JSON line per run and per mean; ``timeouts`` and ``retx`` are the A flows' sums.
"""

from __future__ import annotations

import json
import sys
import time

from tcpn.lenses import make_run
from tcpn.lenses.run import run_once
from tcpn.models.scenario import Scenario, validate_scenario
from tcpn.reports.studies import s1
from tcpn.reports.studies.experiments import with_fields


def scenario(name: str, lens: str, horizon_s: float) -> Scenario:
    """Experiment ``name`` of S1 as ``lens`` runs it, over ``horizon_s``."""
    experiment = {e.name: e for e in s1.experiments(s1.SETTINGS["quick"])}[name]
    mapping = with_fields(experiment.scenario, experiment.lens_changes.get(lens, {}))
    return validate_scenario({**mapping, "horizon_s": horizon_s})


def main(names: list[str], horizon_s: float, reps: int, lenses: list[str], first: int) -> None:
    """Print the A flows' kbit/s per run and the mean of each experiment and lens."""
    for name in names:
        for lens in lenses:
            chosen = scenario(name, lens, horizon_s)
            means = []
            for r in range(first, reps):
                start = time.time()
                result = run_once(chosen, lens, make_run(chosen, replication=r))
                rates = s1.a_flow_rates(result, replication=1)
                flows = result.summary["flows"]
                a_flows = [flows[k] for k in flows if k in ("a0", "a1")]
                means.append(rates["a_kbps"])
                print(json.dumps({"exp": name, "lens": lens, "rep": r,
                                  "a0_kbps": round(rates["a0_kbps"], 1),
                                  "a1_kbps": round(rates["a1_kbps"], 1),
                                  "a_kbps": round(rates["a_kbps"], 1),
                                  "timeouts": sum(f["timeouts"] for f in a_flows),
                                  "retx": sum(f["retransmissions"] for f in a_flows),
                                  "wall_s": round(time.time() - start, 1)}), flush=True)
            print(json.dumps({"exp": name, "lens": lens,
                              "mean_a_kbps": round(sum(means) / len(means), 1)}), flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0].split(","), float(args[1]), int(args[2]), args[3].split(","),
         int(args[4]) if len(args) > 4 else 0)
