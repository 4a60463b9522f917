"""Study S4's diagnostic points (tcpn.reports.studies.s4, module docstring: "RTT
variation" and "Lossy last hop"), one run per point and seed, kbit/s or ms per line.

    python benchmarks/s4_points.py rtt net            # c1 adaptive vs Reno, two adaptive
    python benchmarks/s4_points.py rtt net 20000      # the same at a 20-packet window
    python benchmarks/s4_points.py rtt net 262144 2   # the same with delayed ACKs (2)
    python benchmarks/s4_points.py lossy net 100 as_specified,window20,both_lossy,alone 1,2

``rtt``: the adaptive flow's RTT while both flows run (60-300 s): the median swing over
spans of 5-80 s, the whole window's range, the two flows' ratio and the drops (the two-flow
timelines have fixed starts and no random loss: one run is the point). ``lossy``: the
studied flow's kbit/s over the lossy R2 -> D1 hop for the five TCPs at each PER, under a
reading (``as_specified``: the study's module; ``window20``: every flow's window capped at
20 packets, ns-2's ``window_``; ``both_lossy``: R2 -> D2 lossy too; ``delack2``: one
ACK per two segments; ``alone``: no Reno; ``ns2_cut``: the Vegas flows react to a loss
as ns-2's Vegas, ``params.loss_cut: ns2``; ``ns2_fine``: that and ns-2's fine-grained
retransmissions, ``params.fine_timer``; joined by ``+``, several at once),
one value per seed (``scenario["seed"]``). A 100 s point takes 2-5 s in the net lens.
"""

from __future__ import annotations

import sys
from typing import Any

from tcpn.lenses import make_run
from tcpn.lenses.run import run_once
from tcpn.models.scenario import validate_scenario
from tcpn.reports.studies.s4 import (
    PERS,
    WIRELESS_VARIANTS,
    rtt_swing_ms,
    s4_measure,
    scenario_mapping,
)

SPANS_S = (5.0, 10.0, 20.0, 40.0, 80.0)


def rtt_points(lens: str, rcv_buf_bytes: int, delack_count: int) -> None:
    """The adaptive flow's RTT swing per span, range, ratio and drops, against Reno and
    against another adaptive flow; Vegas's ratio against Reno in conditions 1 and 2."""
    for first, second in (("adaptive_vegas", "reno"), ("adaptive_vegas", "adaptive_vegas"),
                          ("vegas", "reno"), ("reno", "vegas")):
        mapping = scenario_mapping(first, second, second_start_s=50.0, horizon_s=300.0)
        mapping["tcp"]["rcv_buf_bytes"] = rcv_buf_bytes
        mapping["tcp"]["delack_count"] = delack_count
        scenario = validate_scenario(mapping)
        result = run_once(scenario, lens, make_run(scenario))
        rtt = result.trace.series("rtt_s", flow="f1")
        times, values = rtt["time_s"].to_numpy(), rtt["value"].to_numpy()
        swings = "/".join(f"{rtt_swing_ms(times, values, 60.0, 300.0, s):.0f}"
                          for s in SPANS_S)
        out = s4_measure(result, 1)
        drops = int((result.trace.events()["event"] == "drop").sum())
        print(f"{lens} window {rcv_buf_bytes} B delack {delack_count} {first} vs {second}: "
              f"f1 swing ms over "
              f"{'/'.join(f'{s:g}' for s in SPANS_S)} s spans {swings}, range "
              f"{out['f1_rtt_range_ms']:.0f} ms, ratio {out['ratio_both']:.2f}, drops {drops}",
              flush=True)


def lossy_mapping(variant: str, per: float, reading: str, seed: int,
                  horizon_s: float) -> dict[str, Any]:
    """The lossy-hop scenario of ``variant`` under ``reading`` (readings joined by ``+``
    apply together, e.g. ``alone+ns2_cut``)."""
    mapping = scenario_mapping(variant, "reno", second_start_s=0.0, horizon_s=horizon_s,
                               per=per)
    for part in reading.split("+"):
        _apply_reading(mapping, variant, per, part)
    mapping["seed"] = seed
    return mapping


def _apply_reading(mapping: dict[str, Any], variant: str, per: float, reading: str) -> None:
    """Change ``mapping`` as the one reading ``reading`` says."""
    if reading == "alone":
        mapping["flows"] = mapping["flows"][:1]
    elif reading == "window20":
        mapping["tcp"]["rcv_buf_bytes"] = 20000
    elif reading == "delack2":
        mapping["tcp"]["delack_count"] = 2
    elif reading == "both_lossy":
        mapping["links"][4]["ab"] = {"errors": {"unit": "packet", "rate": per}}
    elif reading in ("ns2_cut", "ns2_fine"):
        if "vegas" in variant:
            params = mapping["flows"][0].setdefault("params", {})
            params["loss_cut"] = "ns2"
            params["fine_timer"] = reading == "ns2_fine"
    elif reading != "as_specified":
        raise SystemExit(f"unknown reading {reading!r}")


def lossy_points(lens: str, horizon_s: float, readings: list[str], seeds: list[int]) -> None:
    """One line per reading and PER: each variant's kbit/s per seed."""
    for reading in readings:
        for per in PERS:
            cells = []
            for variant in WIRELESS_VARIANTS:
                values = []
                for seed in seeds:
                    scenario = validate_scenario(lossy_mapping(variant, per, reading, seed,
                                                               horizon_s))
                    result = run_once(scenario, lens, make_run(scenario))
                    values.append(s4_measure(result, 1)["f1_kbps"])
                cells.append(f"{variant} " + ",".join(f"{v:.0f}" for v in values))
            print(f"{reading} {lens} PER {per:g}: " + " | ".join(cells), flush=True)


def main() -> None:
    what, lens, *rest = sys.argv[1:]
    if what == "rtt":
        rtt_points(lens, int(rest[0]) if rest else 262144, int(rest[1]) if len(rest) > 1 else 1)
    elif what == "lossy":
        lossy_points(lens, float(rest[0]), rest[1].split(","),
                     [int(s) for s in rest[2].split(",")])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
