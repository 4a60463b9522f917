"""Stubborn-set reduction: states and CPU seconds with and without it, same answers.

For each net: the full state space (``explore``) and the reduced one
(``explore_stubborn``) for dead markings (D1/D2 only) and for the reachability of one
atom (D1/D2 + visibility + the cycle proviso); the ratio full/reduced of states, the
medians of ``time.process_time`` over ``--repeats`` alternated runs, and a check that the
dead markings (and the atom's reachability) are the same. Run:
``.venv/bin/python benchmarks/stubborn_sets.py [--repeats 3]`` (under a minute).
"""

from __future__ import annotations

import argparse
import statistics
import time

from tcpn.petrinets import explore
from tcpn.petrinets.checking.atoms import truth
from tcpn.petrinets.checking.formulas import Deadlock, tokens
from tcpn.petrinets.checking.reduction import explore_stubborn
from tcpn.petrinets.examples import dining_philosophers, interleaving_grid, left_first_philosophers


def dead(space):
    return {tuple((p, tuple(sorted(repr(t.value) for t in toks)))
                  for p, toks in sorted(space.marking(s).items()))
            for s in space.dead_markings()}


def cpu(run, repeats):
    times, result = [], None
    for _ in range(repeats):
        started = time.process_time()
        result = run()
        times.append(time.process_time() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cases = [("left-first philosophers 10", left_first_philosophers(10), tokens("eat0") >= 1),
             ("left-first philosophers 12", left_first_philosophers(12), tokens("eat0") >= 1),
             ("dining philosophers 16", dining_philosophers(16), tokens("eat0") >= 1),
             ("interleaving grid 60", interleaving_grid(60),
              tokens("count1", value=40).equals(1))]
    print(f"{'net':28} {'full':>9} {'deadlock':>9} {'ratio':>6} {'atom':>9} {'ratio':>6} "
          f"{'full s':>7} {'dl s':>7} {'atom s':>7}  same answers")
    for name, net, atom in cases:
        full_s, full = cpu(lambda net=net: explore(net), args.repeats)
        dl_s, reduced = cpu(lambda net=net: explore_stubborn(net, [Deadlock()]), args.repeats)
        at_s, seen = cpu(lambda net=net, atom=atom: explore_stubborn(net, [atom]), args.repeats)
        same = dead(full) == dead(reduced) and bool(truth(full, atom).any()) == bool(
            truth(seen, atom).any())
        print(f"{name:28} {full.n_states:>9,} {reduced.n_states:>9,} "
              f"{full.n_states / reduced.n_states:>6.1f} {seen.n_states:>9,} "
              f"{full.n_states / seen.n_states:>6.1f} {full_s:>7.2f} {dl_s:>7.2f} {at_s:>7.2f}"
              f"  {same}")


if __name__ == "__main__":
    main()
