"""Study S2 (ECN marking threshold) as runnable experiments: scenarios, table, figure, best K.

The study's model is one TCP sender, a router with a buffer of B segments and a receiver,
in abstract **time units** (tu). tcpn maps **1 tu = 1 ms** (every ``*_s`` field of the
scenarios is the study's number divided by 1000), so times printed in ms read as tu.
:func:`s2_scenario` builds one experiment from the study's parameters and the values
chosen for what it left unstated (:data:`UNSTATED`, also in each file's header):

    S --(100 Mbit/s, d)-- R ==(TPS per segment, 50 tu, segment loss)== D

The router R serves the data direction R->D: a 500-byte data packet (460-byte payload +
40 bytes of IP/TCP header, no options, no L2 header) takes TPS = 10 tu at 400 kbit/s;
the 40-byte ACK takes 0.8 tu back over the same link; ``d`` (sender processing) makes
the unloaded round trip 120 tu exactly. The application writes one segment every 5 tu
(TBA), 300 in all; losses hit data segments on the R->D link.

:func:`study_table` runs the experiments through the net lens and tabulates the study's
outputs (time to deliver all segments, mean per-segment delay, retransmissions);
:func:`delay_figure` plots the delay of every segment; :func:`best_threshold_table`
searches the best K with :func:`tcpn.experiments.optimize.optimize` across RTT, B and error
rate and sets it beside equation 1. ``python -m tcpn.reports.studies.ecn_threshold --help``.

>>> s = s2_scenario("eq1")
>>> s.direction("R->D").queue.k, round(unloaded_rtt_tu(s), 6)
(68.0, 120.0)
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import yaml

from tcpn.errors import InputError, TcpnError
from tcpn.models.scenario import Scenario, ThresholdEcn, validate_scenario
from tcpn.outputs import atomic_file, check_output_file, save_figure
from tcpn.solvers.closed_forms.ecn import study_threshold_pkts

__all__ = ["CASES", "STUDY_FILES", "TU_S", "UNSTATED", "best_threshold_table", "delay_figure",
           "main", "s2_mapping", "s2_scenario", "s2_yaml", "shipped_study_directory",
           "study_table", "unloaded_rtt_tu", "write_study_files"]

#: One study time unit in seconds.
TU_S = 1e-3
PAYLOAD_BYTES = 460
HEADER_BYTES = 40
ACCESS_RATE_BPS = 100e6

Marking = Literal["drop_tail", "k50", "eq1"]

#: What the study left unstated and the value chosen (written into each file's header).
UNSTATED = (
    "1 time unit = 1 ms (every *_s field is the study's number / 1000)",
    "router service time TPS = 10 tu per segment: the router forwards at half the offered "
    "rate (TBA = 5), the ratio of a slow-start burst (analytics.md 8, case 4); TPS < 20 "
    "because the 20 tu of processing in the 120-tu round trip include it",
    "topology S -- R -- D; the router's queue is its output onto the 50-tu link R -> D, whose "
    "serialisation is TPS (400 kbit/s for a 500-byte packet)",
    "segments of 460 payload bytes + 40 header bytes (no TCP options, no L2 header); "
    "ACKs of 40 bytes (0.8 tu on the 400 kbit/s link)",
    "access link S - R 100 Mbit/s with delay d = 4.5784 tu, so that the unloaded round "
    "trip is 120 tu (sender processing)",
    "segment loss on the link: independent, data segments only (R -> D); ACKs are not lost",
    "TCP: NewReno (ECN: RFC 3168 NewReno, halves at most once per RTT, no retransmission); "
    "initial cwnd 1 segment; every segment ACKed (no delayed ACK); no SACK, no timestamps; "
    "min and initial RTO 1 s = 1000 tu (RFC 6298); buffers of 1 MiB (never limiting); no "
    "connection handshake (the study's model starts with the data)",
    "other queues drop-tail 100 packets (never fill); horizon 600 s (ends early when done); "
    "seed 1",
    "K from equation 1 with the unloaded RTT (120 tu), TBA = 5 tu, TPS = 10 tu: "
    "K = 80 - (120/5 - 120/10) = 68",
)

#: The study's experiments: file stem -> (marking, segment loss).
STUDY_FILES: dict[str, tuple[Marking, float]] = {
    f"s2_{marking}_loss{round(loss * 100)}": (marking, loss)
    for loss in (0.0, 0.2) for marking in ("drop_tail", "k50", "eq1")
}


def s2_scenario(marking: Marking | float = "eq1", loss: float = 0.0, **options: Any,
                ) -> Scenario:
    """One S2 experiment: ``marking`` ``drop_tail``, ``k50``, ``eq1`` (K from equation 1
    with ``rtt_tu``, ``gap_tu``, ``service_tu``) or a number (K); ``loss`` the segment loss.

    The one-way transmission time is what the 120-tu round trip leaves: (RTT - 20)/2 tu
    (50 for the study). Times in tu (1 tu = 1 ms).

    >>> s = s2_scenario("drop_tail", 0.2, rtt_tu=240)
    >>> s.direction("R->D").errors.rate, s.link_between("R", "D").delay_s
    (0.2, 0.11)
    """
    return validate_scenario(s2_mapping(marking, loss, **options))


def s2_mapping(marking: Marking | float = "eq1", loss: float = 0.0, *, rtt_tu: float = 120.0,
               buffer_pkts: int = 80, service_tu: float = 10.0, gap_tu: float = 5.0,
               segments: int = 300, initial_ssthresh: int = 64, horizon_s: float = 600.0,
               seed: int = 1, name: str | None = None, bulk: bool = False) -> dict[str, Any]:
    """The scenario mapping of :func:`s2_scenario` (what its YAML file holds); ``bulk``:
    the long-lived analogue on the same path (no pacing, no size: the fluid lens's view)."""
    if not 0.0 <= loss < 1.0:
        raise InputError(f"s2_scenario: loss must be in [0, 1), got {loss!r}")
    if not rtt_tu > 20.0 + service_tu:
        raise InputError(f"s2_scenario: rtt_tu ({rtt_tu:g}) must exceed the 20 tu of "
                         f"processing plus TPS ({service_tu:g})")
    data_bits = (PAYLOAD_BYTES + HEADER_BYTES) * 8
    ack_bits = HEADER_BYTES * 8
    link_rate = data_bits / (service_tu * TU_S)
    one_way_s = (rtt_tu - 20.0) / 2 * TU_S
    fixed_s = (2 * one_way_s + service_tu * TU_S + ack_bits / link_rate
               + (data_bits + ack_bits) / ACCESS_RATE_BPS)
    access_delay_s = round((rtt_tu * TU_S - fixed_s) / 2, 12)
    if access_delay_s < 0:
        raise InputError(f"s2_scenario: rtt_tu ({rtt_tu:g}) is too short for TPS "
                         f"{service_tu:g} tu")
    queue: dict[str, Any] = {"kind": "drop_tail", "limit": buffer_pkts}
    if marking != "drop_tail":
        k = 50.0 if marking == "k50" else float(study_threshold_pkts(
            buffer_pkts, rtt_tu, gap_tu, service_tu)) if marking == "eq1" else float(marking)
        queue = {"kind": "threshold_ecn", "limit": buffer_pkts, "k": k}
    forward: dict[str, Any] = {"queue": queue}
    if loss > 0:
        forward["errors"] = {"kind": "rate", "unit": "packet", "rate": loss}
    ecn = marking != "drop_tail"
    return {
        "name": name or f"s2_{marking}_loss{round(loss * 100)}",
        "description": f"S2: {'drop-tail' if not ecn else 'threshold ECN'}, B = "
                       f"{buffer_pkts}, segment loss {loss * 100:g} %",
        "links": [
            {"a": "S", "b": "R", "rate_bps": ACCESS_RATE_BPS, "delay_s": access_delay_s,
             "l2_header_bytes": 0},
            {"a": "R", "b": "D", "rate_bps": round(link_rate, 9), "delay_s": round(one_way_s, 12),
             "l2_header_bytes": 0, "ab": forward},
        ],
        "tcp": {"segment_size_bytes": PAYLOAD_BYTES, "timestamps": False, "sack": False,
                "delack_count": 1, "initial_cwnd_segments": 1,
                "initial_ssthresh_segments": initial_ssthresh, "min_rto_s": 1.0,
                "initial_rto_s": 1.0, "rcv_buf_bytes": 1 << 20, "snd_buf_bytes": 1 << 20}
        | ({} if bulk else {"handshake": False}),  # the fluid lens models the handshake
        "flows": [{"id": "tcp", "src": "S", "dst": "D",
                   "variant": "ecn_newreno" if ecn else "newreno"} | ({} if bulk else {
                       "bytes": segments * PAYLOAD_BYTES,
                       "app_rate_bps": round(PAYLOAD_BYTES * 8 / (gap_tu * TU_S), 6)})],
        "horizon_s": horizon_s,
        "measure": {"bin_s": 0.1} | ({"warmup_s": horizon_s / 5} if bulk else {}),
        "seed": seed,
    }


def unloaded_rtt_tu(scenario: Scenario) -> float:
    """The round trip of one data segment and its ACK through empty queues, in tu."""
    flow = scenario.concrete_flows()[0]
    total = 0.0
    for queues, size in ((flow.data_queues, flow.tcp.data_packet_bytes),
                         (flow.ack_queues, flow.tcp.ack_packet_bytes)):
        for q in queues:
            a, b = q.split("->")
            link = scenario.link_between(a, b)
            total += link.delay_s + (size + link.l2_header_bytes) * 8 / link.rate_bps
    return total / TU_S


_DIAGRAM = """\
#   S --(100 Mbit/s, d = 4.5784 tu)-- R ==(400 kbit/s: TPS = 10 tu/segment, 50 tu)==> D
#                                      router queue R->D: B = 80 segments
"""


def s2_yaml(stem: str) -> str:
    """The shipped file ``scenarios/studies/<stem>.yaml``: header (experiment, diagram, the
    unstated parameters and their values) and the scenario of :func:`s2_scenario`.

    >>> print(s2_yaml("s2_k50_loss20").splitlines()[0])
    # Study S2 (ECN marking threshold): threshold ECN, K = 50; segment loss 20 %.
    """
    try:
        marking, loss = STUDY_FILES[stem]
    except KeyError:
        raise InputError(f"no S2 experiment {stem!r}; experiments: "
                         f"{', '.join(STUDY_FILES)}") from None
    what = {"drop_tail": "no ECN (drop-tail)", "k50": "threshold ECN, K = 50",
            "eq1": "threshold ECN, K from equation 1 (68)"}[marking]
    lines = [f"# Study S2 (ECN marking threshold): {what}; segment loss {loss * 100:g} %.",
             "#", "# One TCP sender paced at one segment every 5 tu, 300 segments, initial "
             "ssthresh 64;", "# one-way transmission 50 tu each way, unloaded round trip "
             "120 tu, router buffer B = 80.", "#", *_DIAGRAM.splitlines(), "#",
             "# Unstated by the study, chosen here:"]
    for item in UNSTATED:
        words, line = item.split(), "#   -"
        for word in words:
            if len(line) + 1 + len(word) > 92:
                lines.append(line)
                line = "#    "
            line += " " + word
        lines.append(line)
    lines.append("# Generated by tcpn.reports.studies.ecn_threshold.write_study_files "
                 "(a test keeps them equal).")
    body = yaml.safe_dump(s2_mapping(marking, loss, name=stem), sort_keys=False,
                          default_flow_style=None, width=92)
    return "\n".join(lines) + "\n" + body


def write_study_files(directory: str | Path = "scenarios/studies",
                      overwrite: bool = False) -> list[Path]:
    """Write every S2 experiment's file into ``directory`` (existing files are replaced
    only with ``overwrite``); returns the paths."""
    paths = [Path(directory) / f"{stem}.yaml" for stem in STUDY_FILES]
    for path in paths:
        check_output_file(path, overwrite)  # all or none
    for stem, path in zip(STUDY_FILES, paths, strict=True):
        with atomic_file(path, overwrite) as tmp:
            tmp.write_text(s2_yaml(stem), encoding="utf-8")
    return paths


def shipped_study_directory() -> Path | None:
    """``scenarios/studies`` of the source tree this tcpn runs from, when there is one
    (an installed copy without the scenario files: None)."""
    directory = Path(__file__).resolve().parents[3] / "scenarios" / "studies"
    return directory if directory.is_dir() else None


def _study_files(directory: str | Path) -> Path:
    """``directory`` if it holds every S2 file, else an :class:`InputError` naming it."""
    path = Path(directory)
    missing = [f"{stem}.yaml" for stem in STUDY_FILES if not (path / f"{stem}.yaml").is_file()]
    if missing:
        raise InputError(f"{path.resolve()}: no S2 scenario file{'s' * (len(missing) > 1)} "
                         f"{', '.join(missing)} (give --directory where the s2_*.yaml files "
                         "are, or omit it: the shipped files, else the built experiments)")
    return path


def study_table(lens: str = "net", replications: int = 1, seed: int | None = None,
                directory: str | Path | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The study's outputs for every experiment of :data:`STUDY_FILES` (from the shipped
    files in ``directory``, else built): time to deliver all 300 segments and mean
    per-segment delay in tu, retransmissions, timeouts, marks and drops (means over
    ``replications`` runs), plus the per-segment delays of the first run of each.

    Returns the table (one row per experiment) and ``{stem: segment_delays frame}``.
    """
    from tcpn.lenses import make_run, replicate, streamed_run
    from tcpn.lenses.replications import mean_ci
    from tcpn.models.metrics import segment_delays
    from tcpn.models.scenario import load_scenario

    rows, delays = {}, {}
    for stem, (marking, loss) in STUDY_FILES.items():
        path = Path(directory) / f"{stem}.yaml" if directory is not None else None
        scenario = load_scenario(path) if path is not None else s2_scenario(marking, loss,
                                                                          name=stem)
        with streamed_run(scenario, lens, make_run(scenario, seed)) as single:
            summaries = [single.summary]
            delays[stem] = segment_delays(single.trace, "tcp")
        if replications > 1:  # only the summaries: the traces are not kept
            summaries = replicate(scenario, lens=lens, seed=seed, replications=replications,
                                  keep_traces=False).summaries
        flows = [s["flows"]["tcp"] for s in summaries]

        def mean(key: str, scale: float = 1.0, rows_: list[dict[str, Any]] = flows) -> float:
            values = [r[key] for r in rows_ if r.get(key) is not None]
            return float(sum(values) / len(values)) * scale if values else math.nan

        queue = scenario.direction("R->D").queue
        rows[stem] = {
            "marking": {"drop_tail": "drop-tail", "k50": "K = 50", "eq1": "K = eq. 1"}[marking],
            "k": queue.k if isinstance(queue, ThresholdEcn) else math.nan,
            "loss": loss, "deliver_all_tu": mean("completion_s", 1 / TU_S),
            "deliver_all_tu_hw": mean_ci([f.get("completion_s") for f in flows])[1] / TU_S,
            "segment_delay_tu": mean("segment_delay_mean_s", 1 / TU_S),
            "retransmissions": mean("retransmissions"), "timeouts": mean("timeouts"),
            "marks": mean("marks"), "drops": mean("drops"),
            "queue_max_pkts": mean("max_packets", 1.0,
                                   [s["queues"]["R->D"] for s in summaries]),
            "runs": len(summaries)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("experiment"), delays


def delay_figure(delays: dict[str, pd.DataFrame], path: str | Path,
                 overwrite: bool = False) -> Path:
    """Delay of every segment (tu) against its number, one panel per segment loss, written
    to ``path`` whole or not at all (an existing file only with ``overwrite``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    losses = sorted({STUDY_FILES[stem][1] for stem in delays})
    fig, axes = plt.subplots(1, len(losses), figsize=(6 * len(losses), 4), squeeze=False)
    for ax, loss in zip(axes[0], losses, strict=True):
        for stem, frame in delays.items():
            marking, stem_loss = STUDY_FILES[stem]
            if stem_loss != loss:
                continue
            label = {"drop_tail": "drop-tail", "k50": "K = 50", "eq1": "K = eq. 1 (68)"}[marking]
            ax.plot(range(1, len(frame) + 1), frame["delay_s"] / TU_S, label=label,
                    drawstyle="steps-mid", linewidth=1.0)
        ax.set_xlabel("segment")
        ax.set_ylabel("delay (tu)")
        if loss > 0:  # timeouts back off exponentially: a log axis keeps the rest visible
            ax.set_yscale("log")
        ax.set_title(f"S2: segment loss {loss * 100:g} %")
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path, 120, overwrite)


#: The one-factor-at-a-time cases of :func:`best_threshold_table` around the study's point.
CASES: tuple[dict[str, float], ...] = (
    {"rtt_tu": 120, "buffer_pkts": 80, "loss": 0.0},
    {"rtt_tu": 60, "buffer_pkts": 80, "loss": 0.0},
    {"rtt_tu": 240, "buffer_pkts": 80, "loss": 0.0},
    {"rtt_tu": 120, "buffer_pkts": 40, "loss": 0.0},
    {"rtt_tu": 120, "buffer_pkts": 160, "loss": 0.0},
    {"rtt_tu": 120, "buffer_pkts": 80, "loss": 0.01},
    {"rtt_tu": 120, "buffer_pkts": 80, "loss": 0.05},
    {"rtt_tu": 120, "buffer_pkts": 80, "loss": 0.2},
)


def best_threshold_table(cases: Sequence[dict[str, float]] = CASES,
                         lenses: Sequence[str] = ("net", "fluid"), points: int = 9,
                         replications: int = 5, seed: int = 1) -> pd.DataFrame:
    """Best K by search (:func:`tcpn.experiments.optimize.optimize`) beside equation 1.

    Per case (RTT and B in tu and segments, segment loss): equation 1 and its
    self-consistent form (``study_threshold_predictions``). The **net** lens searches K in
    [0, B - 1] on the S2 experiment itself twice (one run per point without loss, the
    experiment is then deterministic; ``replications`` with loss): ``completion`` (the
    study's "smaller K wastes capacity": the K range that delivers all segments soonest,
    within the noise; its low end is the smallest K that wastes nothing) and
    ``transfer_power`` (``-log(time to deliver all) - log(mean segment delay)``). The
    **fluid** lens searches the long-lived analogue on the same path (no pacing, no size:
    what the fluid model expresses) for Kleinrock's power ``log goodput - log RTT``, and
    gives the closed form of the smallest K that keeps a Reno link busy (one BDP,
    ``aimd_no_underflow_k``).
    """
    from tcpn.experiments.optimize import optimize, study_threshold_predictions

    rows = []
    for case in cases:
        rtt, buffer, loss = float(case["rtt_tu"]), int(case["buffer_pkts"]), float(case["loss"])
        base = s2_scenario(buffer / 2, loss, rtt_tu=rtt, buffer_pkts=buffer)
        row: dict[str, Any] = {"rtt_tu": rtt, "buffer_pkts": buffer, "loss": loss}
        predictions = study_threshold_predictions(base)
        row["eq1_k"] = predictions.get("study_eq1_k", math.nan)
        row["self_consistent_k"] = predictions.get("self_consistent_k", math.nan)
        bounds = (0.0, buffer - 1.0)
        if "net" in lenses:
            runs = replications if loss > 0 else 1
            for objective in ("completion", "transfer_power"):
                found = optimize(base, "ecn_k", bounds, lens="net", objective=objective,
                                 points=points, replications=runs, seed=seed)
                row[f"net_{objective}_k"] = found.best.value
                row[f"net_{objective}_low"], row[f"net_{objective}_high"] = \
                    found.indistinguishable
                if objective == "completion":
                    row["net_fastest_tu"] = -found.best.objective / TU_S
        if "fluid" in lenses:
            bulk = s2_scenario(buffer / 2, loss, rtt_tu=rtt, buffer_pkts=buffer, bulk=True,
                               horizon_s=60.0)
            found = optimize(bulk, "ecn_k", bounds, lens="fluid", objective="power",
                             points=points, seed=seed)
            row["fluid_power_k"] = found.best.value
            row["fluid_bdp_k"] = found.predictions.get("aimd_no_underflow_k", math.nan)
        rows.append(row)
        print(f"best K: {row}", file=sys.stderr)
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m tcpn.reports.studies.ecn_threshold [study|best-k|write]``: see ``--help``.

    Errors are one line on stderr (exit 3 for bad input or a refused output, 1 for a
    failure), never a traceback; an output that exists is replaced only with --overwrite.
    """
    parser = argparse.ArgumentParser(prog="python -m tcpn.reports.studies.ecn_threshold",
                                     description="Study S2 (ECN marking threshold).")
    sub = parser.add_subparsers(dest="command", required=True)
    study = sub.add_parser("study", help="the six experiments: table and delay figure")
    study.add_argument("--directory", default=None,
                       help="where the s2_*.yaml files are (default: the shipped files, "
                       "else the experiments built by s2_scenario)")
    study.add_argument("--replications", type=int, default=1)
    study.add_argument("--figure", default="results/s2/segment_delay.png")
    best = sub.add_parser("best-k", help="best K by search against equation 1")
    best.add_argument("--lenses", default="net,fluid")
    best.add_argument("--points", type=int, default=9)
    best.add_argument("--replications", type=int, default=5)
    best.add_argument("--csv", default="results/s2/best_k.csv")
    write = sub.add_parser("write", help="write the s2_*.yaml files")
    write.add_argument("--directory", default="scenarios/studies")
    for command in (study, best, write):
        command.add_argument("--overwrite", action="store_true",
                             help="replace existing output files")
    args = parser.parse_args(argv)
    try:
        _run(args)
    except TcpnError as exc:
        print(f"{parser.prog}: {'invalid input: ' * isinstance(exc, InputError)}{exc}",
              file=sys.stderr)
        sys.exit(3 if isinstance(exc, InputError) else 1)


def _run(args: argparse.Namespace) -> None:
    pd.set_option("display.width", 200)
    if args.command == "write":
        for path in write_study_files(args.directory, args.overwrite):
            print(path)
    elif args.command == "study":
        check_output_file(args.figure, args.overwrite)  # before the runs, not after
        directory = (_study_files(args.directory) if args.directory is not None
                     else shipped_study_directory())
        print(f"experiments: {directory or 'built by s2_scenario (no shipped files here)'}",
              file=sys.stderr)
        table, delays = study_table(replications=args.replications, directory=directory)
        print(table.round(1).to_string())
        delay_figure(delays, args.figure, args.overwrite)
        print(f"figure: {args.figure}")
    else:
        check_output_file(args.csv, args.overwrite)
        found = best_threshold_table(lenses=args.lenses.split(","), points=args.points,
                                     replications=args.replications)
        with atomic_file(args.csv, args.overwrite) as tmp:
            found.to_csv(tmp, index=False)
        print(found.round(2).to_string(index=False))
        print(f"table: {args.csv}")


if __name__ == "__main__":
    main()
