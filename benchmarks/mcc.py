"""The Model Checking Contest scoreboard: tcpn's answers against the contest's oracle.

Runs every examination of every instance in ``../shared/data/mcc`` (or ``--sample N`` of
them, or ``--instances A B``), each instance in a fresh process with a wall-clock limit
(``--time-limit``, seconds per instance for all 13 examinations) and a budget of resident
memory (``--max-memory-mb`` per worker; by default 70 % of the machine's memory shared among
the jobs: the explorer and the LTL checks stop there with CANNOT_COMPUTE instead of being
killed), ``--jobs N`` instances at a time. Each instance's records (its answer lines, the
budget behind each CANNOT_COMPUTE, the exploration's size and speed, CPU seconds and peak
memory per examination) are written as JSON lines to ``RESULTS/<instance>.jsonl`` the
moment the instance finishes (whole or not at all), so a run that stops is continued with
``--resume RESULTS`` (the instances already there are kept, the others run with the
limits the directory was started with). The scoreboard is
printed from the directory: per examination right, wrong, cannot compute (budget or time
limit), unknown in the oracle and CPU seconds; then the exploration speed (states/s).
``--scoreboard RESULTS`` prints it without running anything.

With ``--cpncheck N`` it also explores the first N states of each P/T instance with
cpncheck (after exporting the net to CPN Tools' format) and prints both speeds and their
ratio, measured in the same process.

Archives are extracted to a cache directory (``--cache``, default a folder in the system's
temporary directory), never into the project.

    python benchmarks/mcc.py --results /tmp/mcc-run --jobs 2 --time-limit 120
    python benchmarks/mcc.py --resume /tmp/mcc-run
    python benchmarks/mcc.py --scoreboard /tmp/mcc-run
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
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tcpn.errors import InputError
from tcpn.petrinets.checking.contest.answers import SUFFIX, answer_key, read_answers

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "mcc"
#: Seconds a worker may run past its limit before it is killed: a last resort (the reading,
#: the exploration and every examination read the clock and end in CANNOT_COMPUTE).
KILL_GRACE_S = 30.0
SETTINGS = "run.json"


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


def worker(folder: str, max_states: int, time_limit_s: float,
           max_memory_mb: float) -> None:
    """Answer every examination of one instance: one JSON line per answer line, per
    examination its CPU seconds, first the exploration's size and cost."""
    import resource

    from tcpn.petrinets.checking.contest.examinations import (
        EXAMINATIONS,
        check_examinations,
        explore_model,
    )

    def emit(record: dict[str, Any]) -> None:
        print(json.dumps(record), flush=True)

    def peak_mb() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    import psutil

    # the limit counts from the process's start, as the runner's clock does (start-up
    # and imports take seconds on a loaded machine)
    started = time.perf_counter() - max(0.0, time.time() - psutil.Process().create_time())
    cpu = time.process_time()
    memory = int(max_memory_mb * 2**20)
    model, space = explore_model(Path(folder) / "model.pnml", max_states,
                                 max(0.0, time_limit_s - (time.perf_counter() - started)),
                                 memory)
    emit({"states": len(space), "edges": int(space.n_edges),
          "explore_s": getattr(space, "seconds", None) or getattr(space, "wall_s", None),
          "explore_cpu_s": time.process_time() - cpu, "complete": bool(space.complete),
          "bytes_per_state": getattr(space, "bytes_per_state", None),
          "peak_mb": peak_mb()})
    # the LTL products are the costliest checks: last, so that a limit reached there
    # costs no other examination its answers; each examination runs first on its share
    # of the time left, what a share cut again at the end (check_examinations)
    order = sorted(EXAMINATIONS, key=lambda e: e.startswith("LTL"))
    current: list[str] = []
    cpu = time.process_time()

    def begin(examination: str) -> None:
        nonlocal cpu
        if current:  # the CPU time since the last start is the last examination's
            emit({"examination": current[-1], "cpu_s": time.process_time() - cpu,
                  "peak_mb": peak_mb()})
        current.append(examination)
        cpu = time.process_time()

    # what is left, none once spent: the examinations read the clock and say
    # CANNOT_COMPUTE naming it (what the states read off answer is still given)
    check_examinations(Path(folder) / "model.pnml", order, max_states,
                       max(0.0, time_limit_s - (time.perf_counter() - started)),
                       on_line=lambda line: emit({"examination": current[-1], "line": line}),
                       explored=(model, space), max_memory_bytes=memory,
                       on_reason=lambda ident, why: emit(
                           {"examination": current[-1], "cannot": ident, "reason": why}),
                       on_examination=begin)
    begin("")  # the last examination's CPU time


def run_instance(folder: Path, max_states: int, time_limit_s: float,
                 max_memory_mb: float) -> list[dict]:
    """The worker's records for one instance, cut at the time limit, and its wall time."""
    command = [sys.executable, __file__, "--worker", str(folder), "--max-states",
               str(max_states), "--time-limit", str(time_limit_s), "--max-memory-mb",
               str(max_memory_mb)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    try:
        out, err = process.communicate(timeout=time_limit_s + KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    records = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    if process.returncode not in (0, None) and err.strip():
        records.append({"error": err.strip().splitlines()[-1]})
    elif process.returncode:
        records.append({"error": f"worker ended with code {process.returncode}"})
    records.append({"wall_s": time.perf_counter() - started,
                    "load": os.getloadavg()[0], "commit": commit()})
    return records


def default_memory_mb(jobs: int) -> float:
    """A worker's share of 70 % of the machine's memory when ``jobs`` run at once."""
    import psutil
    return 0.7 * psutil.virtual_memory().total / 2**20 / jobs


def commit() -> str:
    """The commit of the code the workers run (``+`` when the tree has changes)."""
    def git(*words: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *words], capture_output=True,
                              text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain",
                                                                "tcpn") else "")


def write_whole(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed into place)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def results_of(results: Path) -> dict[str, list[dict]]:
    """The records of every finished instance in a results directory."""
    return {path.stem: [json.loads(line) for line in path.read_text().splitlines() if line]
            for path in sorted(results.glob("*.jsonl"))}


def score(folder: Path, records: list[dict]) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Per examination right / wrong / cannot / unknown / CPU seconds of one instance's
    records, and the wrong answers as lines."""
    answered: dict[str, dict[str, str]] = {}
    board = {e: {"right": 0, "wrong": 0, "cannot": 0, "unknown": 0, "cpu_s": 0.0}
             for e in SUFFIX}
    for record in records:
        if "line" in record:
            pair = answer_key(record["line"])
            if pair:
                answered.setdefault(record["examination"], {})[pair[0]] = pair[1]
        elif "cpu_s" in record:
            board[record["examination"]]["cpu_s"] += record["cpu_s"]
    wrong = []
    for examination in SUFFIX:
        got = answered.get(examination, {})
        for key, expected in read_answers(folder, examination, keep_unknown=True).items():
            value = got.get(key, "CANNOT_COMPUTE")
            counts = board[examination]
            if expected == "?":
                counts["unknown"] += 1
            elif value == "CANNOT_COMPUTE":
                counts["cannot"] += 1
            elif value == expected:
                counts["right"] += 1
            else:
                counts["wrong"] += 1
                wrong.append(f"{folder.name} {examination} {key}: {value}, oracle {expected}")
    return board, wrong


def scoreboard(results: Path, data: Path, cache: Path, per_instance: bool = False) -> int:
    """Print the scoreboard of a results directory (and, with ``per_instance``, each
    instance's answers, CPU seconds and peak memory); the number of wrong answers."""
    settings = json.loads((results / SETTINGS).read_text())
    done = results_of(results)
    board = {e: {"right": 0, "wrong": 0, "cannot": 0, "unknown": 0, "cpu_s": 0.0}
             for e in SUFFIX}
    wrong_lines: list[str] = []
    speeds, explore_cpu, wall, peaks, cannot = [], 0.0, 0.0, [], []
    for instance, records in done.items():
        mine, wrong = score(extract(data, instance, cache), records)
        wrong_lines += wrong
        if (missed := sum(c["cannot"] for c in mine.values())):
            cannot.append(f"{instance} ({missed:.0f})")
        for examination, counts in mine.items():
            for key, value in counts.items():
                board[examination][key] += value
        for record in records:
            if "states" in record:
                explore_cpu += record.get("explore_cpu_s") or 0.0
                if record.get("complete") and record.get("explore_s"):
                    speeds.append(record["states"] / max(record["explore_s"], 1e-9))
            wall += record.get("wall_s", 0.0)
            if "peak_mb" in record:
                peaks.append((record["peak_mb"], instance))
    loads = [r["load"] for records in done.values() for r in records if "load" in r]
    commits = sorted({r["commit"] for records in done.values() for r in records
                      if "commit" in r})
    print(f"{len(done)} of {len(settings['instances'])} instances in {results}, "
          f"--max-states {settings['max_states']}, --time-limit {settings['time_limit_s']:g} s "
          f"per instance, --jobs {'/'.join(str(r['jobs']) for r in settings['runs'])}, "
          + (f"{settings['max_memory_mb']:,.0f} MB per worker, " if settings.get(
              "max_memory_mb") else "no memory budget, ") +
          f"{settings['cpus']} cpus, load average "
          f"{min(loads, default=0):.1f}-{max(loads, default=0):.1f} at the instances' ends, "
          f"code {', '.join(commits)}")
    print(f"{'examination':26} {'right':>6} {'wrong':>6} {'cannot':>7} {'unknown':>8} "
          f"{'CPU s':>8}")
    total = {"right": 0, "wrong": 0, "cannot": 0, "unknown": 0, "cpu_s": 0.0}
    for examination, counts in board.items():
        print(f"{examination:26} {counts['right']:6.0f} {counts['wrong']:6.0f} "
              f"{counts['cannot']:7.0f} {counts['unknown']:8.0f} {counts['cpu_s']:8.1f}")
        for key in total:
            total[key] += counts[key]
    known = total["right"] + total["wrong"] + total["cannot"]
    print(f"{'total':26} {total['right']:6.0f} {total['wrong']:6.0f} {total['cannot']:7.0f} "
          f"{total['unknown']:8.0f} {total['cpu_s']:8.1f}")
    print(f"answered right: {100 * total['right'] / max(known, 1):.2f} % of {known:.0f} known "
          f"answers; exploration {explore_cpu:.0f} CPU s; instances' wall time {wall:.0f} s")
    for line in wrong_lines:
        print("WRONG", line)
    if cannot:
        print("cannot compute in:", ", ".join(cannot))
    if speeds:
        speeds.sort()
        print(f"exploration: median {speeds[len(speeds) // 2]:,.0f} states/s over "
              f"{len(speeds)} complete instances")
    if peaks:
        peak, where = max(peaks)
        print(f"largest peak memory of a worker: {peak:,.0f} MB ({where})")
    if per_instance:
        print(f"\n{'instance':36} {'right':>6} {'wrong':>6} {'cannot':>7} {'CPU s':>8} "
              f"{'peak MB':>8}")
        for instance, records in done.items():
            mine, wrong = score(extract(data, instance, cache), records)
            cpu = sum(r.get("explore_cpu_s") or 0.0 for r in records) + sum(
                c["cpu_s"] for c in mine.values())
            peak_mb = max((r["peak_mb"] for r in records if "peak_mb" in r), default=0.0)
            print(f"{instance:36} {sum(c['right'] for c in mine.values()):6.0f} "
                  f"{len(wrong):6} {sum(c['cannot'] for c in mine.values()):7.0f} "
                  f"{cpu:8.1f} {peak_mb:8,.0f}")
    return len(wrong_lines)


def start(results: Path, resume: bool, args: argparse.Namespace,
          instances: list[str]) -> dict[str, Any]:
    """The run's settings: a new results directory's, or those it was started with."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if resume:
        if not (results / SETTINGS).is_file():
            sys.exit(f"--resume {results}: no {SETTINGS} there (not a results directory)")
        settings = json.loads((results / SETTINGS).read_text())
        if "data" in settings and args.data.resolve() != Path(settings["data"]):
            sys.exit(f"--resume {results}: it was started on --data {settings['data']}, "
                     f"not {args.data}")
        settings["runs"].append({"started": now, "jobs": args.jobs})
        write_whole(results / SETTINGS, json.dumps(settings, indent=1) + "\n")
        return settings
    if results.exists() and any(results.iterdir()):
        sys.exit(f"--results {results}: the directory is not empty; continue it with "
                 f"--resume {results} or choose a new one")
    results.mkdir(parents=True, exist_ok=True)
    settings = {"data": str(args.data.resolve()),
                "max_states": args.max_states, "time_limit_s": args.time_limit,
                "max_memory_mb": args.max_memory_mb or default_memory_mb(args.jobs),
                "cpus": os.cpu_count(), "instances": instances,
                "runs": [{"started": now, "jobs": args.jobs}]}
    write_whole(results / SETTINGS, json.dumps(settings, indent=1) + "\n")
    return settings


def run(results: Path, settings: dict[str, Any], jobs: int, data: Path, cache: Path) -> None:
    """Run the instances of ``settings`` not yet in ``results``, ``jobs`` at a time."""
    done = set(results_of(results))
    todo = [i for i in settings["instances"] if i not in done]
    print(f"{len(todo)} instances to run ({len(done)} done), --jobs {jobs}, --time-limit "
          f"{settings['time_limit_s']:g} s, load average {os.getloadavg()[0]:.1f}",
          flush=True)
    printing = threading.Lock()

    def one(instance: str) -> None:
        folder = extract(data, instance, cache)
        records = run_instance(folder, settings["max_states"], settings["time_limit_s"],
                               settings.get("max_memory_mb") or default_memory_mb(jobs))
        write_whole(results / f"{instance}.jsonl",
                    "".join(json.dumps(r) + "\n" for r in records))
        try:
            mine, wrong = score(folder, records)
        except InputError as exc:  # the instance's own files disagree: say so, go on
            with printing:
                print(f"  {instance}: not scored: {exc}", flush=True)
            return
        right = sum(c["right"] for c in mine.values())
        cannot = sum(c["cannot"] for c in mine.values())
        errors = [r["error"] for r in records if "error" in r]
        with printing:
            print(f"  {instance}: {records[-1]['wall_s']:.1f} s, right {right}, wrong "
                  f"{len(wrong)}, cannot {cannot}{'  ' + errors[0] if errors else ''}",
                  flush=True)
            for line in wrong:
                print("    WRONG", line, flush=True)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for finished in pool.map(one, todo):
            del finished


def cpncheck_speed(folder: Path, max_nodes: int) -> tuple[float, float, int] | None:
    """(tcpn states/s, cpncheck states/s, states) over the first ``max_nodes`` states."""
    from cpncheck import CPNModelChecker

    from tcpn.petrinets.checking.contest.examinations import load_model
    from tcpn.petrinets.exchange.cpn_export import write_cpn
    from tcpn.petrinets.exchange.pnml import read_pnml
    from tcpn.petrinets.statespace.ptspace import explore_pt

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


def cpncheck_table(instances: list[dict], data: Path, cache: Path, nodes: int) -> None:
    """Both explorers' states/s over the first ``nodes`` states of each P/T instance."""
    print(f"\n{'instance':40} {'states':>7} {'tcpn st/s':>11} {'cpncheck st/s':>14} "
          f"{'ratio':>7}")
    ratios = []
    for row in instances:
        if row["type"] != "PT":
            continue
        try:
            measured = cpncheck_speed(extract(data, row["instance"], cache), nodes)
        except Exception as exc:
            print(f"{row['instance']:40} cpncheck: {type(exc).__name__}: {str(exc)[:60]}")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path,
                        help="the instances (default ../shared/data/mcc; a --resume or "
                             "--scoreboard run reads the one its directory was started on)")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "tcpn-mcc-cache")
    parser.add_argument("--sample", type=int, help="this many instances, chosen by --seed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--instances", nargs="*", help="these instances only")
    parser.add_argument("--max-states", type=int, default=2_000_000)
    parser.add_argument("--time-limit", type=float, default=300.0,
                        help="seconds per instance, all examinations")
    parser.add_argument("--jobs", type=int, default=1, help="instances run at once")
    parser.add_argument("--max-memory-mb", type=float,
                        help="resident memory per worker, then CANNOT_COMPUTE (default: "
                             "70 %% of the machine's memory shared among the jobs)")
    parser.add_argument("--results", type=Path,
                        help="a new (or empty) directory for the per-instance results "
                             "(default: a new temporary directory)")
    parser.add_argument("--resume", type=Path, metavar="RESULTS",
                        help="continue the run of this results directory")
    parser.add_argument("--scoreboard", type=Path, metavar="RESULTS",
                        help="only print the scoreboard of this results directory")
    parser.add_argument("--cpncheck", type=int, default=0, metavar="N",
                        help="also time cpncheck over the first N states of P/T instances")
    parser.add_argument("--per-instance", action="store_true",
                        help="also print each instance's answers, CPU seconds and peak "
                             "memory")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.max_states, args.time_limit,
               args.max_memory_mb or default_memory_mb(1))
        return
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.scoreboard:
        if args.data is None and (args.scoreboard / SETTINGS).is_file():
            args.data = Path(json.loads((args.scoreboard / SETTINGS).read_text()).get(
                "data", str(DATA)))
        sys.exit(1 if scoreboard(args.scoreboard, args.data or DATA, args.cache,
                                 args.per_instance) else 0)
    if args.resume is not None and args.data is None and (args.resume / SETTINGS).is_file():
        args.data = Path(json.loads((args.resume / SETTINGS).read_text()).get(
            "data", str(DATA)))
    args.data = args.data or DATA
    index = list(csv.DictReader((args.data / "index.csv").open()))
    chosen = [r for r in index if not args.instances or r["instance"] in args.instances]
    if args.sample:
        chosen = sorted(random.Random(args.seed).sample(chosen, min(args.sample, len(chosen))),
                        key=lambda r: r["instance"])
    chosen.sort(key=lambda r: int(r["states"]))  # small first: most answers soonest
    results = args.resume or args.results or Path(tempfile.mkdtemp(prefix="tcpn-mcc-"))
    settings = start(results, args.resume is not None, args, [r["instance"] for r in chosen])
    run(results, settings, args.jobs, args.data, args.cache)
    print()
    wrong = scoreboard(results, args.data, args.cache, args.per_instance)
    if args.cpncheck:
        cpncheck_table(chosen, args.data, args.cache, args.cpncheck)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
