"""States/s and bytes/state of explore() on verification nets and contest COL nets, old and new.

Each case is explored in a fresh process (CPU time of ``explore()``, compilation
included, building or reading the net excluded); with ``--against REV`` the ``tcpn``
package of git revision ``REV`` (extracted with ``git archive``) explores the same case
in turn, alternated with this tree ``--repeats`` times, and the medians are compared.
Both trees must find the same states, edges and dead markings: a difference is printed
and the exit status is 1.

Cases: ``ver:SENDER:N:K`` is ``verification_net`` of ``benchmarks/verification.py``'s
point-to-point scenario with N segments and K data losses (absolute clock, as
``VerificationNet.explore``); ``col:INSTANCE`` is a Model Checking Contest coloured net of
``../shared/data/mcc`` read with ``read_pnml``; ``ex:chain``, ``ex:grid`` and
``ex:philosophers`` are ``benchmarks/statespace_vs_snakes.py``'s nets (10,000 states in a
line, the 100 x 100 interleaving grid, 29 dining philosophers: 1,149,851 states).

    .venv/bin/python benchmarks/explorer_speed.py --against 11b830e --new HEAD --repeats 3
    .venv/bin/python benchmarks/explorer_speed.py ver:newreno:12:6 col:TokenRing-COL-010
    .venv/bin/python benchmarks/explorer_speed.py --against 8031cab --engine auto col:...

``--engine native|auto`` explores the new tree's cases with ``explore(engine=...)`` (the C
explorer for untimed nets of the C engine's subset); its module is built (and cached) by
a first run that is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MCC = ROOT.parent / "shared" / "data" / "mcc"
DEFAULT_CASES = ("ver:newreno:8:3", "ver:newreno:12:4", "ver:reno:10:3", "ver:sack:10:3",
                 "ver:vegas:10:3", "col:Philosophers-COL-000010", "col:TokenRing-COL-010",
                 "col:Sudoku-COL-AN03", "col:GlobalResAllocation-COL-03",
                 "col:PGCD-COL-D02N006", "col:AirplaneLD-COL-0020",
                 "col:BridgeAndVehicles-COL-V10P10N10", "ex:chain", "ex:grid",
                 "ex:philosophers")


def build(case: str, scratch: Path) -> tuple[Any, str]:
    """The net (or verification net) of ``case`` and the clock it is explored with."""
    kind, _, rest = case.partition(":")
    if kind == "ver":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from verification import scenario  # type: ignore[import-not-found]

        from tcpn.models.verification import LossBudget, verification_net

        sender, n, k = rest.split(":")
        v = verification_net(scenario(sender), segments=int(n),
                             losses=LossBudget(data_losses=int(k), ack_losses=0))
        return v.net, v.clock
    if kind == "col":
        from tcpn.petrinets.exchange.pnml import read_pnml

        target = scratch / rest / "model.pnml"
        if not target.exists():
            with tarfile.open(MCC / "instances" / f"{rest}.tgz") as archive:
                member = archive.getmember(f"{rest}/model.pnml")
                archive.extractall(scratch, members=[member], filter="data")
        return read_pnml(target).net, "relative"
    if kind == "ex":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from statespace_vs_snakes import chain_net  # type: ignore[import-not-found]

        from tcpn.petrinets.examples import dining_philosophers, interleaving_grid

        nets = {"chain": lambda: chain_net(10_000), "grid": lambda: interleaving_grid(100),
                "philosophers": lambda: dining_philosophers(29)}
        if rest in nets:
            return nets[rest](), "relative"
    raise SystemExit(f"unknown case {case!r}: ver:SENDER:N:K, col:INSTANCE or "
                     "ex:chain|grid|philosophers")


def measure(case: str, scratch: Path) -> dict[str, Any]:
    """Explore ``case`` in this process: CPU seconds, sizes, bytes per state."""
    from tcpn.petrinets import explore

    net, clock = build(case, scratch)
    started = time.process_time()
    space = explore(net, clock=clock, max_states=None)
    cpu_s = time.process_time() - started
    return {"cpu_s": cpu_s, "states": len(space), "edges": space.n_edges,
            "dead": len(space.dead_markings()), "bytes": space.bytes_per_state,
            "peak": space.peak_bytes_per_state}


def measure_in(tree: Path, case: str, scratch: Path, engine: str | None = None
               ) -> dict[str, Any]:
    """:func:`measure` in a fresh process on the ``tcpn`` package found in ``tree``
    (``engine``: ``$TCPN_ENGINE`` there, which ``explore`` reads)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if engine is not None:
        env["TCPN_ENGINE"] = engine
    out = subprocess.run([sys.executable, __file__, "--json", case, "--scratch", str(scratch)],
                         env=env, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def extract(revision: str, into: Path) -> Path:
    """Git revision ``revision``'s ``tcpn`` package extracted into ``into``."""
    into.mkdir(exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tcpn"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("cases", nargs="*", default=list(DEFAULT_CASES))
    parser.add_argument("--against", metavar="REV", help="a git revision to compare with")
    parser.add_argument("--new", metavar="REV",
                        help="the revision to measure (default: this working tree)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engine", choices=("python", "native", "auto"),
                        help="explore(engine=...) of the new tree (the old one runs its "
                             "default); a first run, not counted, builds its module")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.cases[0], Path(args.scratch))))
        return 0
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "mcc"
        scratch.mkdir()
        trees = {"new": ROOT}
        if args.new:
            trees["new"] = extract(args.new, Path(tmp) / "new")
        if args.against:
            old = Path(tmp) / "old"
            trees = {"old": extract(args.against, old), "new": trees["new"]}
        print(f"explore() CPU s, median of {args.repeats}, trees alternated; load average "
              f"{load:.1f} at start" + (f"; old = {args.against}" if args.against else "")
              + (f"; new = {args.new}" if args.new else "")
              + (f"; new tree's engine = {args.engine}" if args.engine else ""))
        head = "| case | states | edges | dead |" + "".join(
            f" {t} s | {t} states/s | {t} B/state |" for t in trees)
        print(head + (" speed-up | same space |" if args.against else ""))
        print("|---" * (head.count("|") - 1 + (2 if args.against else 0)) + "|")
        differ = False
        for case in args.cases:
            runs: dict[str, list[dict[str, Any]]] = {t: [] for t in trees}
            engines = {"new": args.engine}
            if args.engine not in (None, "python"):
                measure_in(trees["new"], case, scratch, args.engine)  # the build, cached
            for _ in range(args.repeats):
                for name, tree in trees.items():
                    runs[name].append(measure_in(tree, case, scratch, engines.get(name)))
            first = runs["new"][0]
            same = all((r["states"], r["edges"], r["dead"]) ==
                       (first["states"], first["edges"], first["dead"])
                       for rs in runs.values() for r in rs)
            differ |= not same
            row = f"| {case} | {first['states']:,} | {first['edges']:,} | {first['dead']:,} |"
            cpu = {}
            for name in trees:
                cpu[name] = statistics.median(r["cpu_s"] for r in runs[name])
                row += (f" {cpu[name]:.2f} | {first['states'] / cpu[name]:,.0f} | "
                        f"{runs[name][0]['bytes']:.0f} |")
            if args.against:
                row += f" {cpu['old'] / cpu['new']:.2f}x | {'yes' if same else 'NO'} |"
            print(row, flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
