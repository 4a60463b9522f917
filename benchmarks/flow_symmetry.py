"""The symmetry reduction of identical flows: states, orbits, CPU time, same verdicts.

For each scenario (``scenarios/verification/two_flows.yaml``, ``three_flows.yaml``), each
transfer length ``n`` and each budget of ``k`` data losses, the verification net (with the
property observers) is explored unreduced and reduced by the exchanges of its identical
flows (``flow_symmetry``), the reduction's automorphism check on its first
``--shift-checks`` states (default 1,000, as ``verify`` runs it). One row prints both
sizes, the reduction factor (states), the CPU seconds of each exploration
(``time.process_time``, the median of ``--repeats`` runs alternated in this process) and
whether ``all_flows_complete`` answers alike on both, with the CPU seconds of that
``verify`` call (exploration, the reduction's checks and the model check; one run). The
load average is printed first (the machine is shared). Run::

    .venv/bin/python benchmarks/flow_symmetry.py [--scenarios two_flows,three_flows]
        [--segments 2,3] [--losses 1,2] [--repeats 3] [--shift-checks 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from tcpn.models.verification.check import property_net, verify
from tcpn.models.verification.flow_symmetry import flow_symmetry

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios/verification"


def _numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="two_flows,three_flows")
    parser.add_argument("--segments", default="2,3")
    parser.add_argument("--losses", default="1,2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shift-checks", type=int, default=1000)
    parser.add_argument("--max-states", type=int, default=2_000_000)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| scenario | n | k | states | orbits | factor | CPU s unreduced | CPU s reduced "
          "| all_flows_complete | verify CPU s unreduced | reduced |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for name in args.scenarios.split(","):
        path = SCENARIOS / f"{name}.yaml"
        for n in _numbers(args.segments):
            for k in _numbers(args.losses):
                prepared = property_net(path, segments=n, losses=k)
                symmetry = flow_symmetry(prepared.verification)
                cpu: dict[bool, list[float]] = {False: [], True: []}
                sizes = {}
                for _ in range(args.repeats):
                    for reduced in (False, True):
                        started = time.process_time()
                        space = prepared.verification.explore(
                            max_states=args.max_states, shift_checks=args.shift_checks,
                            symmetry=symmetry if reduced else None)
                        cpu[reduced].append(time.process_time() - started)
                        sizes[reduced] = space.n_states if space.complete else -1
                answers, checked = [], []
                for s in (False, True):
                    started = time.process_time()
                    answers.append(verify(path, "all_flows_complete", segments=n, losses=k,
                                          max_states=args.max_states, symmetry=s).answer)
                    checked.append(time.process_time() - started)
                plain, reduced_s = statistics.median(cpu[False]), statistics.median(cpu[True])
                print(f"| {name} | {n} | {k} | {sizes[False]:,} | {sizes[True]:,} | "
                      f"{sizes[False] / sizes[True]:.2f} | {plain:.2f} | {reduced_s:.2f} | "
                      f"{answers[0]} / {answers[1]} | {checked[0]:.2f} | {checked[1]:.2f} |",
                      flush=True)


if __name__ == "__main__":
    main()
