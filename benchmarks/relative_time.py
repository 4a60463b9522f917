"""Verification nets in absolute and relative time: states, edges, dead markings, CPU time.

For each sender on ``scenarios/verification/one_flow.yaml``, each transfer length ``n`` and
each budget of ``k`` data and ``j`` other losses, the verification net is explored with
``clock="absolute"`` (a state: the timed marking and the clock) and ``clock="relative"``
(timestamps and CLOCK values relative to the state's clock; the default 1,000 states
checked for translation invariance), and one row prints both sizes, the ratio of states
and the ratio of CPU seconds (``time.process_time``, the median of ``--repeats`` runs
alternated in this process). Where the relative space is smaller, the markings that merged
are runs that reach one marking at different absolute times. Run::

    .venv/bin/python benchmarks/relative_time.py [--segments 3,5,7] [--losses 1,2]
        [--ack-losses 0,1] [--variants newreno,sack] [--repeats 3] [--shift-checks 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from tcpn.models.scenario import load_scenario
from tcpn.models.verification import LossBudget, verification_net

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios/verification/one_flow.yaml"
VARIANTS = ("tahoe", "reno", "newreno", "sack", "ecn_newreno", "vegas", "modified_vegas",
            "adaptive_vegas", "westwood_plus", "tcp_l")


def _numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", default="3,5,7")
    parser.add_argument("--losses", default="1,2")
    parser.add_argument("--ack-losses", default="0,1")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--max-states", type=int, default=200_000)
    parser.add_argument("--shift-checks", type=int, default=1000,
                        help="states checked for translation invariance in relative time")
    args = parser.parse_args()
    base = load_scenario(SCENARIO)
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print("| sender | n | k | j | states abs | states rel | rel/abs | edges abs | edges rel "
          "| dead abs | dead rel | CPU s abs | CPU s rel | CPU rel/abs |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for variant in args.variants.split(","):
        data = base.model_dump()
        data["flows"][0] = {**{k: v for k, v in data["flows"][0].items() if k != "params"},
                            "variant": variant}
        scenario = base.model_validate(data)
        for n in _numbers(args.segments):
            for k in _numbers(args.losses):
                for j in _numbers(args.ack_losses):
                    budget = LossBudget(data_losses=k, ack_losses=j)
                    nets = {clock: verification_net(scenario, segments=n, losses=budget,
                                                    clock=clock)
                            for clock in ("absolute", "relative")}
                    cpu: dict[str, list[float]] = {clock: [] for clock in nets}
                    sizes = {}
                    for _ in range(args.repeats):
                        for clock, net in nets.items():
                            started = time.process_time()
                            checks = {"shift_checks": args.shift_checks} \
                                if clock == "relative" else {}
                            space = net.explore(max_states=args.max_states, **checks)
                            cpu[clock].append(time.process_time() - started)
                            sizes[clock] = (len(space), space.n_edges,
                                            len(space.dead_markings()), space.complete)
                    a, r = sizes["absolute"], sizes["relative"]
                    ca, cr = statistics.median(cpu["absolute"]), statistics.median(cpu["relative"])
                    mark = "" if a[3] and r[3] else " (budget)"
                    print(f"| {variant} | {n} | {k} | {j} | {a[0]:,}{mark} | {r[0]:,} | "
                          f"{r[0] / a[0]:.3f} | {a[1]:,} | {r[1]:,} | {a[2]} | {r[2]} | "
                          f"{ca:.2f} | {cr:.2f} | {cr / ca:.2f} |", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
