"""Wide P/T nets with small spaces: markings kept sparse against rows over every place.

``token_ring(n)``, one token going round ``n`` places, has ``n`` states, each marking one
place: the shape of the contest's large models (tens of thousands of places, 10^4-10^5
states). For each ``n`` the vector explorer runs with its markings kept as rows over every
place (``WIDE_PLACES`` above ``n``) and kept sparse (``WIDE_PLACES`` 0), alternated in one
process; it prints the medians of ``time.process_time``, the bytes held per state and the
peak bytes per state, and the ratios dense / sparse, after checking that both found the
same states and edges. Run: ``.venv/bin/python benchmarks/wide_pt.py [--sizes 1000,4000]
[--repeats 3]`` (about a minute).
"""

from __future__ import annotations

import argparse
import statistics
import time

from tcpn.petrinets.examples import token_ring
from tcpn.petrinets.statespace import ptspace
from tcpn.petrinets.statespace.ptspace import PTNet, explore_pt, pt_net


def run(net: PTNet, wide_places: int) -> tuple[float, ptspace.PTStateSpace]:
    saved = ptspace.WIDE_PLACES
    ptspace.WIDE_PLACES = wide_places
    try:
        started = time.process_time()
        space = explore_pt(net)
        return time.process_time() - started, space
    finally:
        ptspace.WIDE_PLACES = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,4000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'places':>7} {'dense s':>8} {'sparse s':>8} {'time ratio':>10} "
          f"{'dense B/st':>10} {'sparse B/st':>11} {'peak ratio':>10}")
    for n in (int(s) for s in args.sizes.split(",")):
        net = pt_net(token_ring(n))
        dense_times, sparse_times = [], []
        for _ in range(args.repeats):
            seconds, dense = run(net, n + 1)
            dense_times.append(seconds)
            seconds, sparse = run(net, 0)
            sparse_times.append(seconds)
        assert (len(dense), dense.n_edges) == (len(sparse), sparse.n_edges) == (n, n)
        d, s = statistics.median(dense_times), statistics.median(sparse_times)
        print(f"{n:>7} {d:>8.2f} {s:>8.2f} {d / s:>10.2f} {dense.bytes_per_state:>10.0f} "
              f"{sparse.bytes_per_state:>11.0f} "
              f"{dense.peak_bytes_per_state / sparse.peak_bytes_per_state:>10.1f}")


if __name__ == "__main__":
    main()
