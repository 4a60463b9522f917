"""LTL checking on the Model Checking Contest's instances: CPU time per instance and
automaton sizes, before (the tableau automaton as translated, the product searched on the
fly in Python) and now (:func:`tcpn.petrinets.checking.ltl.check_ltl`: formulas rewritten,
invariant propositions folded, the product in arrays), and the answers against the oracle.

Both run in the same process, formula by formula, alternating which goes first; CPU time
is ``time.process_time``; each is cut at ``--formula-limit`` seconds of wall time
(CANNOT_COMPUTE). ``--now-only`` skips the before column (for a count over many
instances). Archives are extracted to a cache directory, never into the project.

    python benchmarks/ltl.py --instances RwMutex-PT-r0010w0020 --formula-limit 60
    python benchmarks/ltl.py --all --now-only --formula-limit 60
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tcpn.petrinets.checking.formulas import Not

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "mcc"
EXAMINATIONS = ("LTLCardinality", "LTLFireability")


def before(formula, space, limit_s: float) -> tuple[str, float, int]:
    """The answer, CPU seconds and automaton size of the on-the-fly search alone on the
    tableau automaton as translated (the checker before the array product)."""
    from tcpn.petrinets.checking import ltl
    started, cpu = time.perf_counter(), time.process_time()
    automaton = ltl.translate(Not(formula.path), reduce=False)
    graph = ltl._Graph(space)
    try:
        found = ltl.find_accepting_lasso(automaton, 0, graph.successors, graph.holds,
                                         ltl.NO_FAIRNESS, None, started + limit_s)
        answer = "TRUE" if found is None else "FALSE"
    except ltl._Budget:
        answer = "CANNOT_COMPUTE"
    return answer, time.process_time() - cpu, len(automaton)


def now(formula, space, limit_s: float) -> tuple[str, float, int]:
    """The same for :func:`check_ltl` (the automaton size after rewriting and folding)."""
    from tcpn.petrinets.checking import ltl
    cpu = time.process_time()
    verdict = ltl.check_ltl(formula, space, time_limit_s=limit_s)
    seconds = time.process_time() - cpu
    size = len(ltl.translate(ltl._fold_invariants(Not(formula.path), ltl._Graph(space))))
    answer = "CANNOT_COMPUTE" if verdict.answer == "unknown" else verdict.answer.upper()
    return answer, seconds, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "tcpn-mcc-cache")
    parser.add_argument("--instances", nargs="*", default=[])
    parser.add_argument("--all", action="store_true", help="every instance, smallest first")
    parser.add_argument("--max-states", type=int, default=2_000_000)
    parser.add_argument("--formula-limit", type=float, default=60.0,
                        help="wall seconds per formula and checker")
    parser.add_argument("--now-only", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from mcc import extract

    from tcpn.petrinets.checking.contest.answers import read_answers
    from tcpn.petrinets.checking.contest.examinations import _renamed, explore_model
    from tcpn.petrinets.checking.contest.properties import read_properties

    rows = sorted(csv.DictReader((args.data / "index.csv").open()),
                  key=lambda r: int(r["states"]))
    chosen = [r["instance"] for r in rows if args.all or r["instance"] in args.instances]
    args.cache.mkdir(parents=True, exist_ok=True)
    print(f"{len(chosen)} instances, {args.formula_limit:g} s per formula, load average "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cpus")
    columns = ("before", "now") if not args.now_only else ("now",)
    print(f"{'instance':40} {'states':>8} " + " ".join(
        f"{c + ' cpu s':>11} {c + ' |A|':>10} {c + ' r/w/c':>11}" for c in columns))
    totals = {c: {"right": 0, "wrong": 0, "cannot": 0, "sizes": []} for c in columns}
    for k, instance in enumerate(chosen):
        folder = extract(args.data, instance, args.cache)
        try:
            model, space = explore_model(folder / "model.pnml", args.max_states)
        except Exception as error:  # a net the explorer refuses: say so, go on
            print(f"{instance:40} not explored: {error}")
            continue
        if not space.complete:
            print(f"{instance:40} {len(space):8} state space incomplete: {space.reason}")
            continue
        cpu = {c: 0.0 for c in columns}
        counts = {c: [0, 0, 0] for c in columns}
        sizes: dict[str, list[int]] = {c: [] for c in columns}
        for examination in EXAMINATIONS:
            known = read_answers(folder, examination)
            for i, prop in enumerate(read_properties(folder / f"{examination}.xml")):
                prop = _renamed(prop, model)
                order = columns if (i + k) % 2 == 0 else columns[::-1]
                for column in order:
                    run = before if column == "before" else now
                    answer, seconds, size = run(prop.formula, space, args.formula_limit)
                    cpu[column] += seconds
                    sizes[column].append(size)
                    expected = known.get(prop.id)
                    if expected is None:
                        continue
                    slot = 2 if answer == "CANNOT_COMPUTE" else 0 if answer == expected else 1
                    counts[column][slot] += 1
                    if slot == 1:
                        print(f"  WRONG {column} {prop.id}: {answer}, oracle {expected}")
        cells = []
        for column in columns:
            for key, value in zip(("right", "wrong", "cannot"), counts[column], strict=True):
                totals[column][key] += value  # type: ignore[operator]
            totals[column]["sizes"] += sizes[column]  # type: ignore[operator]
            cells.append(f"{cpu[column]:11.2f} {statistics.mean(sizes[column]):10.1f} "
                         f"{'/'.join(map(str, counts[column])):>11}")
        print(f"{instance:40} {len(space):8} " + " ".join(cells), flush=True)
    for column in columns:
        t = totals[column]
        sizes_all = sorted(t["sizes"])  # type: ignore[arg-type]
        print(f"{column}: right {t['right']}, wrong {t['wrong']}, cannot compute "
              f"{t['cannot']}; automaton states mean "
              f"{statistics.mean(sizes_all) if sizes_all else 0:.1f}, max "
              f"{max(sizes_all, default=0)}")


if __name__ == "__main__":
    main()
