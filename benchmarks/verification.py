"""How far verification nets scale: states, edges and CPU seconds per sender, n and k.

For each sender, a point-to-point scenario (A -> B, 8 Mb/s, 10 ms, drop-tail, the
scenario defaults: handshake, initial window 10 (``--initial-window``), delayed ACKs; SACK
negotiated only for ``sack``, so that NewReno and the Vegas family recover as RFC 6582
says rather than on the scoreboard) becomes ``verification_net(scenario, segments=n,
losses=LossBudget(data_losses=k, ack_losses=j))`` and is explored to the end (or to
``--max-states``). Each row gives states, edges, dead markings, how many of those have
every segment delivered in order to the application (``rcv.nxt == n``), the explorer's CPU
seconds (``time.process_time``, compilation included), and whether the space closed. A
cell is skipped once a smaller cell of the same sender and ``j`` ran out of
``--cpu-budget``: the growth per cell says where the state count comes from (the loss
patterns, ``C(packets, k)``, times the events of each run). Rows also go to stderr as they
come.

    .venv/bin/python benchmarks/verification.py                       # minutes
    .venv/bin/python benchmarks/verification.py --quick               # n <= 4, k <= 1
    .venv/bin/python benchmarks/verification.py --variants reno --segments 3-8 --losses 0-3
    .venv/bin/python benchmarks/verification.py --variants newreno --segments 12,16,24,32 \\
        --losses 3-6 --max-states 3000000 --cpu-budget 200      # how far it scales
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from rich.console import Console
from rich.table import Table

from tcpn.models.scenario import Scenario, validate_scenario
from tcpn.models.verification import LossBudget, verification_net

VARIANTS = ("tahoe", "reno", "newreno", "sack", "ecn_newreno", "vegas", "modified_vegas",
            "adaptive_vegas", "westwood_plus", "tcp_l")


def scenario(variant: str, initial_window: int = 10) -> Scenario:
    """The point-to-point scenario every row uses."""
    return validate_scenario({
        "name": "p2p", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01}],
        "flows": [{"src": "A", "dst": "B", "variant": variant}],
        # each sender recovers its own way
        "tcp": {"sack": variant == "sack", "initial_cwnd_segments": initial_window}})


def span(text: str) -> list[int]:
    """``"3-8"`` or ``"12,16,24"`` (or both: ``"3-5,8"``) as a list of numbers."""
    numbers: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        numbers.extend(range(int(low), int(high or low) + 1))
    return numbers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--segments", default="3-8", help="n values, e.g. 3-8 or 12,16,24")
    parser.add_argument("--losses", default="0-3", help="k (data losses) range")
    parser.add_argument("--ack-losses", default="0", help="j (ACK losses) range")
    parser.add_argument("--max-states", type=int, default=2_000_000)
    parser.add_argument("--cpu-budget", type=float, default=120.0,
                        help="CPU seconds after which larger cells are skipped")
    parser.add_argument("--initial-window", type=int, default=10,
                        help="initial cwnd in segments (10, ns-3's default: a transfer of "
                             "n <= 10 leaves in one flight)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    segments, losses = span(args.segments), span(args.losses)
    if args.quick:
        segments, losses = [3, 4], [0, 1]
    console = Console()
    table = Table(title=f"verification nets, initial window {args.initial_window} (load "
                        f"average {os.getloadavg()[0]:.1f} at start)")
    for column in ("sender", "n", "k", "j", "states", "edges", "dead", "delivered all",
                   "CPU s", "closed"):
        table.add_column(column, justify="left" if column == "sender" else "right")
    for variant in args.variants.split(","):
        for j in span(args.ack_losses):
            too_big: set[tuple[int, int]] = set()
            for n in segments:
                for k in losses:
                    if any(n >= n0 and k >= k0 for n0, k0 in too_big):
                        continue
                    try:
                        v = verification_net(scenario(variant, args.initial_window),
                                             segments=n,
                                             losses=LossBudget(data_losses=k, ack_losses=j))
                    except Exception as exc:  # an InputError: the reason goes in the table
                        table.add_row(variant, str(n), str(k), str(j), str(exc)[:60], "", "",
                                      "", "", "")
                        break
                    start = time.process_time()
                    space = v.explore(max_states=args.max_states)
                    cpu = time.process_time() - start
                    dead = space.dead_markings()
                    rcv = v.roles["flow0.receiver"].places["rcv"]
                    done = sum(space.marking(d)[rcv][0].value.nxt == n for d in dead)
                    row = (variant, str(n), str(k), str(j), f"{len(space):,}",
                           f"{space.n_edges:,}", f"{len(dead):,}", f"{done:,}", f"{cpu:.1f}",
                           "yes" if space.complete else str(space.limit))
                    table.add_row(*row)
                    print(" | ".join(row), file=sys.stderr, flush=True)  # as rows come
                    if cpu > args.cpu_budget or not space.complete:
                        too_big.add((n, k))
                else:
                    continue
                break
    console.print(table)


if __name__ == "__main__":
    main()
