"""Study S4's adaptive Vegas points on the study's fixed starts, one run per lens, side by
side: the adaptive flow's kbit/s while both flows run (``f1_kbps``), and each flow's
drops and timeouts (docs/validation.md, "What the misses come from", item 7).

The quick report runs each point twice, and with fixed starts and no random loss both
runs are the same sequence of events; this prints that one run per lens, so a gap between
the lenses is one sequence against another, to be traced to its first divergence.

Usage: .venv/bin/python benchmarks/s4_fixed_starts.py [--point NAME ...]
(points: buffer100, buffer25, base, w0.5, c3; default all). A point takes about 1 min in
the net lens and 1-3 min in ns-3.
"""

from __future__ import annotations

import argparse
from typing import Any

from tcpn.lenses import make_run, run_once
from tcpn.models.scenario import validate_scenario
from tcpn.reports.studies.s4 import s4_measure, scenario_mapping


def point_scenario(name: str) -> Any:
    """The c1 (or c3) scenario of S4 with one parameter of the point changed."""
    if name == "c3":
        data = scenario_mapping("adaptive_vegas", "reno", second_start_s=100.0,
                                second_stop_s=300.0, horizon_s=400.0)
    else:
        data = scenario_mapping("adaptive_vegas", "reno", second_start_s=50.0,
                                horizon_s=300.0)
    if name.startswith("buffer"):
        data["links"][0]["queue"]["limit"] = int(name.removeprefix("buffer"))
    if name == "w0.5":
        data["flows"][0]["params"]["weight"] = 0.5
    return validate_scenario(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", nargs="*",
                        default=["buffer100", "buffer25", "base", "w0.5", "c3"])
    for name in parser.parse_args().point:
        scenario = point_scenario(name)
        for lens in ("net", "ns3"):
            result = run_once(scenario, lens, make_run(scenario))
            events = result.trace.events()
            counts = {f: {e: int(((events["flow"].astype(str) == f)
                                  & (events["event"] == e)).sum())
                          for e in ("drop", "timeout")} for f in ("f1", "f2")}
            print(f"{name:10s} {lens:4s} f1_kbps {s4_measure(result, 1)['f1_kbps']:7.1f}  "
                  f"{counts}", flush=True)


if __name__ == "__main__":
    main()
