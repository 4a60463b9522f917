"""Benchmark CPN Tools export and import of scenario nets: CPU time, per-element rates.

Baseline measured in the same run: serialising the exported XML tree again with
ElementTree alone (parse excluded), so the ratio says how much the exporter/importer
costs over the bare XML work.

Usage: .venv/bin/python benchmarks/cpn_exchange.py [--repeat N] [scenario.yaml ...]
(default scenarios: scenarios/dumbbell_newreno.yaml; add
scenarios/reference/red_100flows.yaml for the large net, about a minute per export).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import xml.etree.ElementTree as ET

from tcpn.models.topology import scenario_net
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.loading import built_net


def _cpu(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenarios", nargs="*", default=["scenarios/dumbbell_newreno.yaml"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    for path in args.scenarios:
        net = built_net(scenario_net(path), path).net
        n = len(net.places) + len(net.transitions) + len(net.arcs)
        t_exp, xml = _cpu(lambda net=net: to_cpn(net), args.repeat)
        data = str(xml).encode("iso-8859-1")
        t_imp, _ = _cpu(lambda data=data: read_cpn(data), args.repeat)
        tree = ET.fromstring(data)
        t_base, _ = _cpu(lambda tree=tree: ET.tostring(tree), args.repeat)
        print(f"{path}: {n} elements, {len(data) / 1e6:.1f} MB")
        print(f"  export {t_exp:.2f} s CPU ({n / t_exp:.0f} elements/s, "
              f"{t_exp / t_base:.0f}x ElementTree write {t_base:.3f} s)")
        print(f"  import {t_imp:.2f} s CPU ({n / t_imp:.0f} elements/s, "
              f"{t_imp / t_base:.0f}x ElementTree write)")


if __name__ == "__main__":
    main()
