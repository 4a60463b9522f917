"""States/s of explore() on the contest's coloured (COL) nets against their P/T twins.

Each COL instance of ``../shared/data/mcc`` is read with ``read_pnml`` (kept coloured,
nothing unfolded) and explored; its P/T twin (``-PT-``, the same state space) is read and
explored in the same process, alternately, ``--repeats`` times. Printed per instance:
states and edges (checked against ``index.csv``), the median CPU seconds of ``explore()``
on each (compilation included, reading excluded), states/s, and COL time / PT time.

    .venv/bin/python benchmarks/pnml_col.py [--repeats 3] [--max-states 400000] [NAME ...]

Instances with more states than ``--max-states`` are skipped (say so in the output).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from tcpn.petrinets import explore
from tcpn.petrinets.exchange.pnml import read_pnml

MCC = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mcc"


def model(instance: str, into: Path) -> Path:
    """Extract ``instance``'s model.pnml into ``into`` (once) and return its path."""
    target = into / instance / "model.pnml"
    if not target.exists():
        with tarfile.open(MCC / "instances" / f"{instance}.tgz") as archive:
            member = archive.getmember(f"{instance}/model.pnml")
            archive.extractall(into, members=[member], filter="data")
    return target


def timed_explore(path: Path) -> tuple[float, int, int]:
    net = read_pnml(path).net
    started = time.process_time()
    space = explore(net)
    return time.process_time() - started, len(space), space.n_edges


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="COL instances (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-states", type=int, default=400_000)
    args = parser.parse_args()
    with open(MCC / "index.csv", newline="") as handle:
        rows = {r["instance"]: r for r in csv.DictReader(handle)}
    names = args.names or sorted(n for n, r in rows.items() if r["type"] == "COL")
    print("| instance | states | edges | COL s | PT s | COL states/s | PT states/s | COL/PT time |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    wrong = 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            row = rows[name]
            if int(row["states"]) > args.max_states:
                print(f"| {name} | {row['states']} | skipped (over --max-states) |||||")
                continue
            twin = name.replace("-COL-", "-PT-")
            col_path, pt_path = model(name, Path(scratch)), model(twin, Path(scratch))
            col_times, pt_times = [], []
            for _ in range(args.repeats):
                col_s, states, edges = timed_explore(col_path)
                pt_s, pt_states, pt_edges = timed_explore(pt_path)
                col_times.append(col_s)
                pt_times.append(pt_s)
            expected = (int(row["states"]), int(row["edges"]))
            if (states, edges) != expected or (pt_states, pt_edges) != expected:
                wrong += 1
                print(f"MISMATCH {name}: COL {states}/{edges}, PT {pt_states}/{pt_edges}, "
                      f"index.csv {expected}", file=sys.stderr)
            col, pt = statistics.median(col_times), statistics.median(pt_times)
            print(f"| {name} | {states:,} | {edges:,} | {col:.2f} | {pt:.2f} | "
                  f"{states / col:,.0f} | {states / pt:,.0f} | {col / pt:.2f} |", flush=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
