"""The Model Checking Contest scoreboard: tcpn's answers against the contest's oracle.

Runs every examination of every instance in ``../shared/data/mcc`` (or ``--sample N`` of
them, or ``--instances A B``), each instance in a fresh process with a wall-clock limit
(``--time-limit``, seconds per instance for all 13 examinations), and prints per
examination: right, wrong, cannot compute (budget or time limit), unknown in the oracle,
time; then the exploration speed (states/s) per instance. With ``--cpncheck N`` it also
explores the first N states of each P/T instance with cpncheck (after exporting the net to
CPN Tools' format) and prints both speeds and their ratio, measured in the same process.

Archives are extracted to a cache directory (``--cache``, default a folder in the system's
temporary directory), never into the project.

    python benchmarks/mcc.py --sample 20 --time-limit 120
    python benchmarks/mcc.py --instances Philosophers-PT-000010 --cpncheck 20000
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from tcpn.petrinets.exchange.mcc_answers import SUFFIX, answer_key, read_answers

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "mcc"


def extract(data: Path, instance: str, cache: Path) -> Path:
    """The instance's folder in the cache, extracted once (atomically)."""
    folder = cache / instance
    if not (folder / "model.pnml").is_file():
        staging = Path(tempfile.mkdtemp(dir=cache))
        with tarfile.open(data / "instances" / f"{instance}.tgz") as archive:
            archive.extractall(staging, filter="data")
        os.replace(staging / instance, folder)
        staging.rmdir()
    return folder


def worker(folder: str, max_states: int, time_limit_s: float) -> None:
    """Answer every examination of one instance, one JSON line per answer line."""
    from tcpn.petrinets.contest import EXAMINATIONS, check_examinations

    def emit(examination: str):
        return lambda line: print(json.dumps({"examination": examination, "line": line}),
                                  flush=True)

    started = time.perf_counter()
    from tcpn.petrinets.contest import explore_model
    model, space = explore_model(Path(folder) / "model.pnml", max_states, time_limit_s)
    print(json.dumps({"states": len(space), "explore_s": space.seconds
                      if hasattr(space, "seconds") else None,
                      "complete": bool(space.complete)}), flush=True)
    for examination in EXAMINATIONS:
        left = max(1.0, time_limit_s - (time.perf_counter() - started))
        check_examinations(Path(folder) / "model.pnml", [examination], max_states, left,
                           on_line=emit(examination), explored=(model, space))


def run_instance(folder: Path, max_states: int, time_limit_s: float) -> tuple[list[dict], float]:
    """The worker's records for one instance, cut at the time limit."""
    command = [sys.executable, __file__, "--worker", str(folder), "--max-states",
               str(max_states), "--time-limit", str(time_limit_s)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    try:
        out, err = process.communicate(timeout=time_limit_s + 30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    records = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    if process.returncode not in (0, None) and err.strip():
        records.append({"error": err.strip().splitlines()[-1]})
    return records, time.perf_counter() - started


def cpncheck_speed(folder: Path, max_nodes: int) -> tuple[float, float, int] | None:
    """(tcpn states/s, cpncheck states/s, states) over the first ``max_nodes`` states."""
    from cpncheck import CPNModelChecker

    from tcpn.petrinets.contest import load_model
    from tcpn.petrinets.exchange.cpn_export import write_cpn
    from tcpn.petrinets.exchange.pnml import read_pnml
    from tcpn.petrinets.ptspace import explore_pt

    model = load_model(folder / "model.pnml")
    if not model.is_pt:
        return None
    net = read_pnml(folder / "model.pnml", max_bytes=500_000_000).net
    with tempfile.TemporaryDirectory() as scratch:
        path = write_cpn(net, Path(scratch) / "model.cpn", layout="grid")
        checker = CPNModelChecker(str(path), max_nodes=max_nodes)
        started = time.perf_counter()
        theirs = checker.state_space()
        theirs_s = time.perf_counter() - started
    ours = explore_pt(model.net, max_states=theirs.n_nodes)
    return ours.states_per_s, theirs.n_nodes / theirs_s, theirs.n_nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "tcpn-mcc-cache")
    parser.add_argument("--sample", type=int, help="this many instances, chosen by --seed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--instances", nargs="*", help="these instances only")
    parser.add_argument("--max-states", type=int, default=2_000_000)
    parser.add_argument("--time-limit", type=float, default=300.0,
                        help="seconds per instance, all examinations")
    parser.add_argument("--cpncheck", type=int, default=0, metavar="N",
                        help="also time cpncheck over the first N states of P/T instances")
    parser.add_argument("--json", type=Path, help="write every instance's records here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.max_states, args.time_limit)
        return
    args.cache.mkdir(parents=True, exist_ok=True)
    index = list(csv.DictReader((args.data / "index.csv").open()))
    chosen = [r for r in index if not args.instances or r["instance"] in args.instances]
    if args.sample:
        chosen = sorted(random.Random(args.seed).sample(chosen, min(args.sample, len(chosen))),
                        key=lambda r: r["instance"])
    chosen.sort(key=lambda r: int(r["states"]))  # small first: most answers soonest
    load = os.getloadavg()[0]
    print(f"{len(chosen)} instances, --max-states {args.max_states}, --time-limit "
          f"{args.time_limit:g} s per instance, load average {load:.1f}, {os.cpu_count()} cpus")
    board: dict[str, dict[str, float]] = {e: {"right": 0, "wrong": 0, "cannot": 0,
                                              "unknown": 0, "seconds": 0.0} for e in SUFFIX}
    speeds, wrong_lines, everything = [], [], {}
    for row in chosen:
        instance = row["instance"]
        folder = extract(args.data, instance, args.cache)
        records, seconds = run_instance(folder, args.max_states, args.time_limit)
        everything[instance] = records
        answered: dict[str, dict[str, str]] = {}
        for record in records:
            if "states" in record and record.get("explore_s"):
                speeds.append((instance, row["type"], record["states"],
                               record["states"] / max(record["explore_s"], 1e-9)))
            if "line" in record:
                pair = answer_key(record["line"])
                if pair:
                    answered.setdefault(record["examination"], {})[pair[0]] = pair[1]
        mine = {"right": 0, "wrong": 0, "cannot": 0}
        for examination in SUFFIX:
            known = read_answers(folder, examination, keep_unknown=True)
            got = answered.get(examination, {})
            for key, expected in known.items():
                value = got.get(key, "CANNOT_COMPUTE")
                if expected == "?":
                    board[examination]["unknown"] += 1
                elif value == "CANNOT_COMPUTE":
                    board[examination]["cannot"] += 1
                    mine["cannot"] += 1
                elif value == expected:
                    board[examination]["right"] += 1
                    mine["right"] += 1
                else:
                    board[examination]["wrong"] += 1
                    mine["wrong"] += 1
                    wrong_lines.append(f"{instance} {examination} {key}: {value}, "
                                       f"oracle {expected}")
        board["StateSpace"]["seconds"] += seconds  # instance wall time, all examinations
        errors = [r["error"] for r in records if "error" in r]
        print(f"  {instance}: {seconds:.1f} s, right {mine['right']}, wrong {mine['wrong']}, "
              f"cannot {mine['cannot']}{'  ' + errors[0] if errors else ''}", flush=True)
        for line in wrong_lines[len(wrong_lines) - mine["wrong"]:]:
            print("    WRONG", line, flush=True)
    print()
    print(f"{'examination':26} {'right':>6} {'wrong':>6} {'cannot':>7} {'unknown':>8}")
    total = {"right": 0, "wrong": 0, "cannot": 0, "unknown": 0}
    for examination, counts in board.items():
        print(f"{examination:26} {counts['right']:6.0f} {counts['wrong']:6.0f} "
              f"{counts['cannot']:7.0f} {counts['unknown']:8.0f}")
        for key in total:
            total[key] += int(counts[key])
    known = total["right"] + total["wrong"] + total["cannot"]
    print(f"{'total':26} {total['right']:6} {total['wrong']:6} {total['cannot']:7} "
          f"{total['unknown']:8}   answered right: {100 * total['right'] / max(known, 1):.2f} %"
          f" of {known} known answers; wall time {board['StateSpace']['seconds']:.0f} s")
    for line in wrong_lines:
        print("WRONG", line)
    if speeds:
        rates = sorted(s[3] for s in speeds)
        print(f"\nexploration: median {rates[len(rates) // 2]:,.0f} states/s over "
              f"{len(rates)} instances")
    if args.cpncheck:
        print(f"\n{'instance':40} {'states':>7} {'tcpn st/s':>11} {'cpncheck st/s':>14} "
              f"{'ratio':>7}")
        ratios = []
        for row in chosen:
            if row["type"] != "PT":
                continue
            try:
                measured = cpncheck_speed(extract(args.data, row["instance"], args.cache),
                                          args.cpncheck)
            except Exception as exc:
                print(f"{row['instance']:40} cpncheck: {type(exc).__name__}: "
                      f"{str(exc)[:60]}")
                continue
            if measured:
                ours, theirs, n = measured
                ratios.append(ours / theirs)
                print(f"{row['instance']:40} {n:7} {ours:11,.0f} {theirs:14,.0f} "
                      f"{ours / theirs:7.1f}")
        if ratios:
            ratios.sort()
            print(f"median ratio tcpn/cpncheck: {ratios[len(ratios) // 2]:.1f} "
                  f"over {len(ratios)} instances")
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))


if __name__ == "__main__":
    main()
