"""Study S2's 20 % loss point in the net model and ns-3: independent runs, and paired runs
on the same losses.

Independent runs (``--runs N``): replications 0..N-1 of ``noecn_loss20`` in each lens,
each lens drawing its own losses; prints mean +- 95 % half-width, median, timeouts and
Welch's p. Paired runs (``--pairs N``): pair ``i`` draws one Bernoulli(``loss``) list over
the arrival numbers on R -> D (numpy generator seeded ``1000 + i``; with ``--ack-loss``
another over D -> R, seeded ``5000 + i``) and gives it to both lenses as a ``list``
error model, so that the two lenses see the same losses and their difference is the
rules' (docs/validation.md, S2's 20 % loss points). A run not done by the 600 s horizon
counts as NaN and is left out of the means.

Usage: .venv/bin/python benchmarks/s2_loss_pairs.py [--rto-tu 1000] [--runs 10]
[--pairs 30] [--ack-loss]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from tcpn.lenses import make_run, run_once
from tcpn.models.fields import with_fields
from tcpn.models.scenario import validate_scenario
from tcpn.reports.studies import s2
from tcpn.reports.studies.ecn_threshold import TU_S

LOSS = 0.2
ARRIVALS = 3000  # more than any run's transmissions on one direction


def _scenario(rto_tu: float, ack_loss: bool) -> dict[str, Any]:
    changes: dict[str, Any] = {"tcp.min_rto_s": rto_tu * TU_S, "tcp.initial_rto_s": rto_tu * TU_S}
    if ack_loss:
        changes["links.1.ba"] = {"errors": {"kind": "rate", "unit": "packet", "rate": LOSS}}
    return with_fields(s2.scenario_mapping("noecn", LOSS), changes)


def _lists(mapping: Mapping[str, Any], pair: int, ack_loss: bool) -> dict[str, Any]:
    def drawn(seed: int) -> dict[str, Any]:
        lost = np.flatnonzero(np.random.default_rng(seed).random(ARRIVALS) < LOSS)
        return {"kind": "list", "packets": lost.tolist()}

    changes = {"links.1.ab.errors": drawn(1000 + pair)}
    if ack_loss:
        changes["links.1.ba.errors"] = drawn(5000 + pair)
    return with_fields(mapping, changes)


def _job(mapping: Mapping[str, Any], lens: str, replication: int) -> dict[str, Any]:
    scenario = validate_scenario(dict(mapping))
    result = run_once(scenario, lens, make_run(scenario, 1, replication))
    return dict(s2.s2_measure(result, replication))


def _half_width(x: np.ndarray) -> float:
    return float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def independent(mapping: Mapping[str, Any], runs: int) -> None:
    """Print each lens's replications 0..runs-1 and Welch's p between them."""
    done: dict[str, np.ndarray] = {}
    for lens in ("net", "ns3"):
        rows = [_job(mapping, lens, i) for i in range(runs)]
        times = np.array([r["all_acked_tu"] for r in rows])
        done[lens] = times[np.isfinite(times)]
        print(f"{lens}: {len(done[lens])}/{runs} done, all ACKed {done[lens].mean():,.0f} +- "
              f"{_half_width(done[lens]):,.0f} tu (median {np.median(done[lens]):,.0f}), "
              f"timeouts {np.mean([r['timeouts'] for r in rows]):.1f}")
    print(f"Welch p = {stats.ttest_ind(done['net'], done['ns3'], equal_var=False).pvalue:.2f}")


def paired(mapping: Mapping[str, Any], pairs: int, ack_loss: bool) -> None:
    """Print each pair on the same losses and the mean paired difference."""
    rows = []
    for pair in range(pairs):
        scripted = _lists(mapping, pair, ack_loss)
        found = [_job(scripted, lens, 0) for lens in ("net", "ns3")]
        rows.append([m[key] for key in ("all_acked_tu", "timeouts") for m in found])
        print(f"pair {pair}: net {rows[-1][0]:,.0f} tu, ns-3 {rows[-1][1]:,.0f} tu; timeouts "
              f"{rows[-1][2]:.0f} / {rows[-1][3]:.0f}")
    table = np.array(rows)
    both = table[np.isfinite(table[:, 0]) & np.isfinite(table[:, 1])]
    diff = both[:, 0] - both[:, 1]
    print(f"{len(both)}/{pairs} pairs done in both: net {both[:, 0].mean():,.0f}, ns-3 "
          f"{both[:, 1].mean():,.0f} tu, paired difference {diff.mean():,.0f} +- "
          f"{_half_width(diff):,.0f} tu; timeouts {table[:, 2].mean():.1f} / "
          f"{table[:, 3].mean():.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rto-tu", type=float, default=1000.0, help="min and initial RTO (tu)")
    parser.add_argument("--runs", type=int, default=10, help="independent runs per lens (0: none)")
    parser.add_argument("--pairs", type=int, default=30, help="paired runs (0: none)")
    parser.add_argument("--ack-loss", action="store_true", help="lose ACKs (D -> R) too")
    args = parser.parse_args()
    mapping = _scenario(args.rto_tu, args.ack_loss)
    if args.runs > 1:
        independent(mapping, args.runs)
    if args.pairs > 1:
        paired(mapping, args.pairs, args.ack_loss)


if __name__ == "__main__":
    main()
