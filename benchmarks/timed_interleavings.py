"""How much a partial-order reduction could save on the verification nets: their branching.

A stubborn-set reduction removes interleavings of independent firings; it cannot remove a
choice between a transmission and its loss twin (they conflict: one takes the packet the
other takes). For each scenario, transfer length ``n`` and data-loss budget ``k``, this
explores the verification net (absolute time, the property observers included) and counts
the states with two firings or more (``branching``) and, among them, those whose firings
are not all one transmission and its loss twins (``interleaving``: two different
simulator transitions could go next, the only place a reduction could act). Run::

    .venv/bin/python benchmarks/timed_interleavings.py [--cells one_flow:4:1,two_flows:3:1]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tcpn.models.verification.check import property_net

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios/verification"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="one_flow:4:1,one_flow:6:2,two_flows:3:1,"
                        "two_flows:3:2,three_flows:2:1,three_flows:3:1")
    args = parser.parse_args()
    print("| scenario | n | k | states | edges | branching | interleaving |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for cell in args.cells.split(","):
        name, n, k = cell.split(":")
        prepared = property_net(SCENARIOS / f"{name}.yaml", segments=int(n), losses=int(k))
        verification = prepared.verification
        space = verification.explore()
        branching = interleaving = 0
        for state in range(space.n_states):
            names = {edge.transition for edge in space.edges(state)}
            if len(names) < 2 and len(space.successors(state)) < 2:
                continue
            branching += 1
            interleaving += len({verification.simulator_transition(t) for t in names}) > 1
        print(f"| {name} | {n} | {k} | {space.n_states:,} | {space.n_edges:,} | "
              f"{branching:,} | {interleaving:,} |", flush=True)


if __name__ == "__main__":
    main()
