"""Study S3's points, net lens against ns-3: TCP1 goodput per replication, or the 802.11
hop's frames sent and lost per direction (docs/validation.md, "S3 against ns-3").

    python benchmarks/s3_points.py goodput newreno_ber0,ackless_tcp_l_138 20 3 net,ns3
    python benchmarks/s3_points.py goodput newreno_ber0 20 6 net 3     # replications 3-5
    python benchmarks/s3_points.py frames ackless_tcp_l_138 5
    python benchmarks/s3_points.py starts newreno_ber0_noretry 30 10 0.0517 0 net,ns3

Each run is ``tcpn.lenses.run.run_once`` on ``make_run(scenario, replication=r)`` of the
experiment's scenario (``s3.experiments`` of the quick profile, with the lens's
``lens_changes``) at the given horizon (seconds), seed 1. One JSON line per run and per
mean. ``frames``: the net's ``frames`` tokens (sent, lost) per 802.11 direction, and
ns-3's sender MAC transmissions and the station PHY's receptions begun (a frame it never
began to receive collided), the frames its link error models counted (``arrivals``, of
which ``collided``), and TCP1's TCP-L state in both lenses (segments sent and resent, the
latest report's frames sent and failed; ns-3 adds its reactions and windows kept).
``starts``: replication 0 with TCP2's start moved to ``0.1 + offset + k * step`` s for k
= 0..N-1, TCP1's goodput per start and the mean and standard deviation over the starts:
an ensemble of trajectories where a point's replications are one trajectory (nothing
random acts at BER 0; docs/validation.md, "S3 without link retries at BER 0").
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

from tcpn.lenses import make_run
from tcpn.lenses.run import run_once
from tcpn.models.scenario import Scenario, validate_scenario
from tcpn.reports.studies import s3
from tcpn.reports.studies.experiments import with_fields


def scenario(name: str, lens: str, horizon_s: float,
             changes: dict[str, Any] | None = None) -> Scenario:
    """Experiment ``name`` of S3 as ``lens`` runs it, over ``horizon_s``, with the dotted
    field ``changes``."""
    experiment = {e.name: e for e in s3.experiments(s3.SETTINGS["quick"])}[name]
    mapping = with_fields(experiment.scenario, {**experiment.lens_changes.get(lens, {}),
                                                **(changes or {})})
    return validate_scenario({**mapping, "horizon_s": horizon_s})


def goodput(names: list[str], horizon_s: float, reps: int, lenses: list[str],
            first: int) -> None:
    """Print TCP1's and TCP2's goodput (KB/s), TCP1's timeouts and retransmissions per
    run, and TCP1's mean."""
    for name in names:
        for lens in lenses:
            chosen = scenario(name, lens, horizon_s)
            values = []
            for r in range(first, reps):
                start = time.time()
                flows = run_once(chosen, lens, make_run(chosen, replication=r)).summary["flows"]
                tcp1 = flows[next(k for k in flows if "tcp1" in k)]
                tcp2_kBps = (flows["tcp2"]["goodput_bps"] or 0.0) / 8000
                values.append(tcp1["goodput_bps"] / 8000)
                print(json.dumps({"exp": name, "lens": lens, "rep": r,
                                  "kBps": round(values[-1], 2),
                                  "tcp2_kBps": round(tcp2_kBps, 2),
                                  "timeouts": tcp1["timeouts"],
                                  "retx": tcp1["retransmissions"],
                                  "wall_s": round(time.time() - start, 1)}), flush=True)
            print(json.dumps({"exp": name, "lens": lens,
                              "mean": round(sum(values) / len(values), 2)}), flush=True)


def starts(name: str, horizon_s: float, count: int, step_s: float, offset_s: float,
           lenses: list[str]) -> None:
    """Print TCP1's goodput (KB/s) and timeouts for each start of TCP2, and their mean
    and standard deviation per lens."""
    for lens in lenses:
        values = []
        for k in range(count):
            start_s = round(0.1 + offset_s + k * step_s, 9)
            chosen = scenario(name, lens, horizon_s, {"flows.1.start_s": start_s})
            flows = run_once(chosen, lens, make_run(chosen)).summary["flows"]
            values.append(flows["tcp1"]["goodput_bps"] / 8000)
            print(json.dumps({"exp": name, "lens": lens, "tcp2_start_s": start_s,
                              "kBps": round(values[-1], 2),
                              "timeouts": flows["tcp1"]["timeouts"]}), flush=True)
        print(json.dumps({"exp": name, "lens": lens, "starts": count,
                          "mean": round(statistics.mean(values), 2),
                          "sd": round(statistics.pstdev(values), 2)}), flush=True)


def frames(name: str, horizon_s: float) -> None:
    """Print the hop's frames per direction in both lenses (replication 0)."""
    from tcpn.lenses.ns3 import Ns3Lens
    from tcpn.models.topology import compose
    from tcpn.models.traces import TraceWriter
    from tcpn.petrinets import Simulator

    net_scenario = scenario(name, "net", horizon_s)
    run = make_run(net_scenario)
    composed = compose(net_scenario, run.flows)
    sim = Simulator(composed.net, seed=run.lens_seed)
    sim.run(until=horizon_s)
    found: dict[str, Any] = {}
    for qid, prefix in composed.interfaces.items():
        if f"{prefix}.airtime" in sim.compiled.place_index:
            (sent, lost), = (t.value for t in sim.tokens(f"{prefix}.frames"))
            found[qid] = {"sent": sent, "lost": lost}
    tcp_l = {p: t.value._asdict() for p in sim.compiled.place_index if p.endswith(".tcpl")
             for t in sim.tokens(p)}
    print(json.dumps({"exp": name, "lens": "net", "frames": found, "tcp_l": tcp_l}),
          flush=True)
    ns3_scenario = scenario(name, "ns3", horizon_s)
    run = make_run(ns3_scenario)
    lens = Ns3Lens()
    writer = TraceWriter(ns3_scenario, run.flows)
    lens.run(run, writer, lambda _t: None)
    writer.close()
    counted = {qid: {k: v for k, v in losses.items() if k in ("arrivals", "collided")}
               for qid, losses in lens.raw["losses"].items()}
    tcp_l = {fid: {k: v for k, v in flow["variant"].items() if isinstance(v, int)}
             for fid, flow in lens.raw["flows"].items() if flow["variant"]}
    print(json.dumps({"exp": name, "lens": "ns3", "mac": lens.raw["wifi_mac"],
                      "station": lens.raw["wifi_station"], "link": counted,
                      "tcp_l": tcp_l}), flush=True)


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "goodput":
        goodput(args[0].split(","), float(args[1]), int(args[2]), args[3].split(","),
                int(args[4]) if len(args) > 4 else 0)
    elif mode == "frames":
        frames(args[0], float(args[1]))
    elif mode == "starts":
        starts(args[0], float(args[1]), int(args[2]), float(args[3]), float(args[4]),
               args[5].split(","))
    else:
        sys.exit(f"unknown mode {mode!r}: goodput, frames or starts")


if __name__ == "__main__":
    main()
