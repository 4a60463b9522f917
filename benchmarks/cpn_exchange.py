"""Benchmark CPN Tools export and import of scenario nets: CPU time, per-element rates.

Baseline measured in the same run: serialising the exported XML tree again with
ElementTree alone (parse excluded), so the ratio says how much the exporter/importer
costs over the bare XML work. With ``--against DIR`` (a checkout of another commit, say
``git worktree add /tmp/wt-old COMMIT``), each repetition also runs export and import with
that checkout's code, alternating with this one's in fresh processes (same
``PYTHONHASHSEED``), and the ratios old/new are printed.

Usage: .venv/bin/python benchmarks/cpn_exchange.py [--repeat N] [--against DIR]
[scenario.yaml ...] (default scenarios: scenarios/dumbbell_newreno.yaml; add
scenarios/reference/red_100flows.yaml for the large net).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _cpu(fn: Any, repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def measure(path: str, repeat: int) -> dict[str, float]:
    """Median CPU seconds of export, import and the ElementTree write of one scenario."""
    from tcpn.models.topology import scenario_net
    from tcpn.petrinets.exchange.cpn_export import to_cpn
    from tcpn.petrinets.exchange.cpn_import import read_cpn
    from tcpn.petrinets.exchange.loading import built_net

    net = built_net(scenario_net(path), path).net
    read_cpn(to_cpn(counter_net(), layout="grid"))  # one-off setup (the ML grammar) out
    t_exp, xml = _cpu(lambda: to_cpn(net), repeat)
    data = str(xml).encode("iso-8859-1")
    t_imp, _ = _cpu(lambda: read_cpn(data), repeat)
    tree = ET.fromstring(data)
    t_base, _ = _cpu(lambda: ET.tostring(tree), repeat)
    return {"elements": len(net.places) + len(net.transitions) + len(net.arcs),
            "mb": len(data) / 1e6, "export": t_exp, "import": t_imp, "et_write": t_base}


def counter_net() -> Any:
    from tcpn.petrinets.examples import counter

    return counter(3)


def _worker(code: Path, path: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(code), "PYTHONHASHSEED": "0"}
    out = subprocess.run([sys.executable, __file__, "--worker", path], env=env, check=True,
                         capture_output=True, text=True, cwd=ROOT).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenarios", nargs="*", default=["scenarios/dumbbell_newreno.yaml"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", help="a checkout whose code is the old side of an A/B")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(args.scenarios[0], 1)))
        return
    print(f"load average {os.getloadavg()[0]:.2f}")
    for path in args.scenarios:
        if args.against is None:
            runs = [measure(path, args.repeat)]
        else:
            runs, old = [], []
            for _ in range(args.repeat):
                runs.append(_worker(ROOT, path))
                old.append(_worker(Path(args.against).resolve(), path))
        n, base = runs[0]["elements"], _median(runs, "et_write")
        print(f"{path}: {n} elements, {runs[0]['mb']:.1f} MB")
        for step in ("export", "import"):
            t = _median(runs, step)
            line = (f"  {step} {t:.2f} s CPU ({n / t:.0f} elements/s, "
                    f"{t / base:.1f}x ElementTree write {base:.3f} s)")
            if args.against is not None:
                t_old = _median(old, step)
                line += f"; {args.against}: {t_old:.2f} s, {t_old / t:.1f}x this one"
            print(line)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
