"""Study S3 (TCP-L, link-error-aware congestion control): goodput, fairness and
retransmissions across the byte error rate, and Table 2's goodput and bytes per joule.

The study (Oh, Park, Park, Jung; ns-2 with TCP-Linux): TCP1 crosses a wireless last hop
whose byte error rate is swept from 0 to 5e-4; TCP2, a wired flow, shares the wired
bottleneck; 100 s bulk transfers; TCP1 is TCP-L, NewReno or Westwood (Figs 3-5, no
numbers). Table 2: TCP-L over "ACK-less" 802.11 (no link-layer retransmission) against
NewReno over acknowledged 802.11, at error rate 1e-4, with 138- and 1578-byte data frames:
goodput (KB/s) and energy efficiency (KB/J) (study-results.md S3.2). tcpn's scenario::

    S1 (tcp1) --\\                                   /-- D2   (tcp2: wired NewReno)
                 R1 ==5 Mbit/s, 20 ms== R2 (AP) ---
    S2 (tcp2) --/                                   \\~~ M    (tcp1: 802.11, 11 Mbit/s)

Energy model (the study states none): the mobile station M's radio, per frame and per
byte sent and received plus idle power (Feeney and Nilsson, INFOCOM 2001: 420 uJ + 1.9
uJ/B sent, 330 uJ + 0.42 uJ/B received, 0.8 W idle) over the whole run; bytes per joule =
application bytes delivered to M / that energy. Idle power is most of the energy of a
100 s run, so bytes per joule *with* idle power tracks goodput; the report gives it
without idle power beside it (the radio's active energy only). K = 1000.

Frames: the study's 138 and 1578 bytes are the sizes of the **data** frames. In tcpn's
802.11 framing (78 bytes of PHY/MAC/LLC per frame, tcpn's ns-3-matched choice) a
1578-byte frame carries a 1500-byte IP packet; with 20-byte IP and 28-byte TCP headers
(the 8-byte TCP-L report option on every flow) and no timestamps (ns-2's default), that
is 1452 payload bytes, and a 138-byte frame carries 12. The framing is an axis (36
bytes: MAC header, FCS and LLC/SNAP only, the PHY preamble as time) because the study
does not say what its frame size counts.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from tcpn.reports.document import ClaimVerdict, Figure, Paragraph, Section, Table
from tcpn.reports.studies import StudyData, StudyProgress
from tcpn.reports.studies.experiments import (
    AxisPoint,
    Experiment,
    ModuleStudy,
    Settings,
    StudyAxis,
    axes_blocks,
    judge,
    profile_settings,
    run_study,
    study_sections,
    summarise,
    with_ci,
)

__all__ = ["AXES", "PUBLISHED", "SETTINGS", "STUDY", "experiments", "run", "s3_measure",
           "scenario_mapping", "sections", "verdicts"]

L2_BYTES = 78
HEADERS_BYTES = 20 + 28  # IP + TCP with the 8-byte report option, no timestamps
BERS = (0.0, 1e-4, 2e-4, 3e-4, 5e-4)
VARIANTS = ("tcp_l", "newreno", "westwood_plus")
WIRELESS_LINK = 4

#: Table 2 (study-results.md S3.2): (experiment, frame bytes, goodput KB/s, KB/J).
PUBLISHED = pd.DataFrame([
    ("ackless_tcp_l_138", "TCP-L, ACK-less", 138, 61.0, 299.0),
    ("acked_newreno_138", "NewReno, ACKed", 138, 56.0, 148.0),
    ("ackless_tcp_l_1578", "TCP-L, ACK-less", 1578, 265.0, 1224.0),
    ("acked_newreno_1578", "NewReno, ACKed", 1578, 365.0, 760.0),
], columns=["experiment", "configuration", "frame_bytes", "goodput_kBps", "kB_per_j"])


def segment_bytes(frame_bytes: int, l2_bytes: int = L2_BYTES) -> int:
    """TCP payload of a data frame of ``frame_bytes`` (see the module docstring).

    >>> segment_bytes(1578), segment_bytes(138), segment_bytes(138, 36)
    (1452, 12, 54)
    """
    return frame_bytes - l2_bytes - HEADERS_BYTES


def scenario_mapping(variant: str, ber: float, *, link_retransmissions: bool = False,
                     frame_bytes: int = 1578, horizon_s: float = 100.0) -> dict[str, Any]:
    """One S3 experiment: TCP1 ``variant`` over the wireless hop at byte error rate
    ``ber`` (both directions), with or without link-layer retransmission (7 retries).

    Unstated, chosen: wired bottleneck 5 Mbit/s, 20 ms, drop-tail 50 packets; access
    links 100 Mbit/s, 1 ms; the hop 11 Mbit/s, 1 ms; link-layer retransmission off in the
    error sweep (with 7 retries the hop hides nearly every error from TCP); TCP-L reports
    every 1 s on NewReno; Westwood+ with ns-3's Tustin filter; every segment ACKed
    (ns-2's TCP-Linux examples use ``TCPSink/Sack1``, which does not delay ACKs); TCP2
    NewReno from 0.1 s; buffers 1 MiB.
    """
    hop: dict[str, Any] = {"a": "R2", "b": "M", "rate_bps": 11e6, "delay_s": 0.001,
                           "l2_header_bytes": L2_BYTES,
                           "wireless": {"station": "M",
                                        "link_retransmissions": link_retransmissions}}
    if ber > 0:
        hop["errors"] = {"unit": "byte", "rate": ber}
    tcp1: dict[str, Any] = {"id": "tcp1", "src": "S1", "dst": "M", "variant": variant}
    if variant == "tcp_l":
        tcp1["params"] = {"report_interval_s": 1.0}
    return {
        "name": f"s3_{variant}_ber{ber:g}",
        "description": f"S3: TCP1 {variant}, BER {ber:g}",
        "links": [{"a": "R1", "b": "R2", "rate_bps": 5e6, "delay_s": 0.02,
                   "queue": {"kind": "drop_tail", "limit": 50}},
                  {"a": "S1", "b": "R1", "rate_bps": 100e6, "delay_s": 0.001},
                  {"a": "S2", "b": "R1", "rate_bps": 100e6, "delay_s": 0.001},
                  {"a": "R2", "b": "D2", "rate_bps": 100e6, "delay_s": 0.001}, hop],
        "tcp": {"segment_size_bytes": segment_bytes(frame_bytes), "tcp_header_bytes": 28,
                "timestamps": False, "sack": False, "delack_count": 1,
                "rcv_buf_bytes": 1 << 20,
                "snd_buf_bytes": 1 << 20},
        "flows": [tcp1, {"id": "tcp2", "src": "S2", "dst": "D2", "variant": "newreno",
                         "start_s": 0.1}],
        "horizon_s": horizon_s,
        "measure": {"warmup_s": 0.0, "bin_s": 1.0},
        "seed": 1,
    }


def experiments(settings: Settings) -> list[Experiment]:
    """The error sweep (three TCP1 variants x five byte error rates) and Table 2's four."""
    horizon = 100.0 * settings.horizon_scale
    others = ("net", "ns3") if settings.other_lenses else ("net",)
    out = [Experiment(f"{v}_ber{ber:g}", f"TCP1 {v}, BER {ber:g}",
                      scenario_mapping(v, ber, horizon_s=horizon), ("net",))
           for v in VARIANTS for ber in BERS]
    for frame in (138, 1578):
        out.append(Experiment(f"ackless_tcp_l_{frame}", f"TCP-L, ACK-less, {frame} B",
                              scenario_mapping("tcp_l", 1e-4, frame_bytes=frame,
                                               horizon_s=horizon), others))
        out.append(Experiment(f"acked_newreno_{frame}", f"NewReno, ACKed, {frame} B",
                              scenario_mapping("newreno", 1e-4, link_retransmissions=True,
                                               frame_bytes=frame, horizon_s=horizon),
                              others))
    return out


_HOP = f"links.{WIRELESS_LINK}"
AXES: tuple[StudyAxis, ...] = (
    StudyAxis.over("idle power (W), TCP-L ACK-less 1578 B", "ackless_tcp_l_1578",
              f"{_HOP}.wireless.idle_w", [0.0, 0.8], 0.8,
              "The study states no energy model; 0.8 W is Feeney and Nilsson's idle power "
              "(headline: KB/J).", labels=["0", "0.8"]),
    StudyAxis.over("idle power (W), NewReno ACKed 1578 B", "acked_newreno_1578",
              f"{_HOP}.wireless.idle_w", [0.0, 0.8], 0.8, "As above.", labels=["0", "0.8"]),
    StudyAxis("802.11 framing (bytes per frame), TCP-L ACK-less 138 B", "ackless_tcp_l_138", (
        AxisPoint("78", {}),
        AxisPoint("36", {f"{_HOP}.l2_header_bytes": 36,
                         "tcp.segment_size_bytes": segment_bytes(138, 36)})),
         "78", "What the study's frame size counts is not stated (the payload of a 138-byte "
         "frame follows)."),
    StudyAxis.over("MAC retry limit, NewReno ACKed 1578 B", "acked_newreno_1578",
              f"{_HOP}.wireless.retry_limit", [3, 7], 7,
              "The ACKed case's retry limit is not stated; 7 is 802.11's short retry limit."),
    StudyAxis.over("delayed ACK (segments per ACK), TCP-L BER 1e-4", "tcp_l_ber0.0001",
              "tcp.delack_count", [1, 2], 1,
              "ns-2's TCPSink/Sack1 ACKs every segment; 2 is Linux's and ns-3's delayed "
              "ACK."),
    StudyAxis.over("SACK, NewReno BER 1e-4", "newreno_ber0.0001", "tcp.sack", [False, True],
              False, "TCP-Linux in ns-2 can run SACK; the study does not say.",
              labels=["off", "on"]),
)

SETTINGS: dict[str, Settings] = {
    "quick": Settings(replications=2, axis_replications=2, other_lens_replications=2,
                      horizon_scale=0.3),
    "full": Settings(replications=10, axis_replications=5, horizon_scale=1.0),
}


def s3_measure(result: Any, replication: int) -> dict[str, Any]:
    """Goodput of both flows (KB/s, application bytes delivered over the run), TCP1/TCP2,
    TCP1's retransmission ratio, and the station's KB/J with and without idle power."""
    summary = result.summary
    flows = summary["flows"]
    out: dict[str, Any] = {
        "tcp1_kBps": (flows["tcp1"]["goodput_bps"] or 0.0) / 8 / 1e3,
        "tcp2_kBps": (flows["tcp2"]["goodput_bps"] or 0.0) / 8 / 1e3,
        "tcp1_retx_ratio": float(flows["tcp1"].get("retransmission_ratio") or 0.0)}
    out["fairness"] = out["tcp1_kBps"] / out["tcp2_kBps"] if out["tcp2_kBps"] else math.nan
    wireless = (result.provenance.get("lens") or {}).get("wireless") or {}
    station = next(iter(wireless.values()), None)
    if station:
        energy, idle = float(station["energy_j"]), float(station.get("idle_j") or 0.0)
        delivered = float(station["delivered_bytes"])
        out["kB_per_j"] = delivered / energy / 1e3 if energy else math.nan
        out["kB_per_active_j"] = delivered / (energy - idle) / 1e3 if energy > idle \
            else math.nan
        out["idle_share"] = idle / energy if energy else math.nan
    return out


METRICS = ["tcp1_kBps", "tcp2_kBps", "fairness", "tcp1_retx_ratio", "kB_per_j",
           "kB_per_active_j", "idle_share"]


def run(profile: str, progress: StudyProgress, settings: Settings | None = None,
        ) -> StudyData:
    """Run the experiments and the axes with ``profile``'s settings (or ``settings``)."""
    chosen = settings or profile_settings(SETTINGS, profile)
    return run_study("s3", experiments(chosen), AXES, s3_measure, chosen, profile, progress,
                     keep_series=False, horizon_s=100.0 * chosen.horizon_scale)


def _net(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[(summary["axis"] == "") & (summary["lens"] == "net")].set_index("experiment")


def _get(main: pd.DataFrame, name: str, metric: str) -> tuple[float, float]:
    if name not in main.index or metric not in main:
        return math.nan, math.nan
    return float(main.loc[name, metric]), float(main.loc[name, f"{metric}_hw"])


def sweep_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """The error sweep, one row per (variant, BER): means and half-widths (net lens)."""
    main = _net(summary)
    rows = []
    for v in VARIANTS:
        for ber in BERS:
            row: dict[str, Any] = {"variant": v, "ber": ber}
            for metric in ("tcp1_kBps", "fairness", "tcp1_retx_ratio"):
                row[metric], row[f"{metric}_hw"] = _get(main, f"{v}_ber{ber:g}", metric)
            rows.append(row)
    return pd.DataFrame(rows)


def draw_sweep(data: pd.DataFrame) -> Any:
    """Figs 3-5's three panels: TCP1 goodput, TCP1/TCP2 and TCP1's retransmission ratio
    against the byte error rate, one line per TCP1 variant, 95 % CI bars."""
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(12, 3.4), layout="constrained")
    panels = fig.subplots(1, 3)
    labels = {"tcp1_kBps": "TCP1 goodput (KB/s)", "fairness": "TCP1 / TCP2 goodput",
              "tcp1_retx_ratio": "TCP1 retransmission ratio"}
    for ax, (metric, label) in zip(panels, labels.items(), strict=True):
        for v, rows in data.groupby("variant", sort=False):
            ax.errorbar(rows["ber"], rows[metric], yerr=rows[f"{metric}_hw"].fillna(0.0),
                        marker="o", markersize=3, capsize=2, label=str(v))
        ax.set_xlabel("byte error rate")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    panels[0].legend(fontsize=7)
    return fig


def _published_table(summary: pd.DataFrame) -> pd.DataFrame:
    main = _net(summary)
    rows = []
    for _, pub in PUBLISHED.iterrows():
        name = pub["experiment"]
        rows.append({
            "configuration": pub["configuration"], "frame_bytes": pub["frame_bytes"],
            "payload_bytes": segment_bytes(int(pub["frame_bytes"])),
            "published_kBps": pub["goodput_kBps"],
            "tcpn_kBps": with_ci(*_get(main, name, "tcp1_kBps")),
            "published_kB_per_j": pub["kB_per_j"],
            "tcpn_kB_per_j": with_ci(*_get(main, name, "kB_per_j")),
            "tcpn_kB_per_active_j": with_ci(*_get(main, name, "kB_per_active_j")),
            "tcpn_idle_share": with_ci(*_get(main, name, "idle_share")),
            "source": "S3 §5, Table 2"})
    return pd.DataFrame(rows)


def verdicts(summary: pd.DataFrame) -> list[ClaimVerdict]:
    """One verdict per claim (Figs 3-5 and Table 2)."""
    main = _net(summary)
    if "tcp_l_ber0" not in main.index:
        return [judge("S3's claims", None, "The experiments did not run.")]
    good = {(v, b): _get(main, f"{v}_ber{b:g}", "tcp1_kBps")[0] for v in VARIANTS
            for b in BERS}
    high = [b for b in BERS if b >= 2e-4]
    out = [judge(
        "Fig 3: at high error rates TCP-L's goodput is above NewReno's and Westwood's",
        all(good[("tcp_l", b)] > max(good[("newreno", b)], good[("westwood_plus", b)])
            for b in high),
        "TCP1 KB/s at BER " + "; ".join(
            f"{b:g}: TCP-L {good[('tcp_l', b)]:.0f}, NewReno {good[('newreno', b)]:.0f}, "
            f"Westwood+ {good[('westwood_plus', b)]:.0f}" for b in high) + ".", None)]
    fair0 = {v: _get(main, f"{v}_ber0", "fairness")[0] for v in VARIANTS}
    out.append(judge(
        "Fig 4: without errors TCP-L and NewReno share fairly with TCP2, Westwood takes more",
        abs(fair0["tcp_l"] - 1) <= 0.2 and abs(fair0["newreno"] - 1) <= 0.2
        and fair0["westwood_plus"] > 1.2,
        f"TCP1/TCP2 at BER 0: TCP-L {fair0['tcp_l']:.2f}, NewReno {fair0['newreno']:.2f}, "
        f"Westwood+ {fair0['westwood_plus']:.2f} (fair: within 0.2 of 1).",
        "the study's Westwood unfairness comes from ACK compression, which needs ACKs "
        "queued behind data; tcpn's wired path queues no ACKs behind TCP2's data"
        if fair0["westwood_plus"] <= 1.2 else None))
    retx = {v: _get(main, f"{v}_ber0.0005", "tcp1_retx_ratio")[0] for v in VARIANTS}
    out.append(judge(
        "Fig 5: TCP-L's retransmission ratio is similar to the others' even at high errors",
        retx["tcp_l"] <= 1.5 * max(retx["newreno"], retx["westwood_plus"]),
        f"at BER 5e-4: TCP-L {retx['tcp_l']:.3f}, NewReno {retx['newreno']:.3f}, "
        f"Westwood+ {retx['westwood_plus']:.3f} (similar: at most 1.5 x the larger).", None))
    for frame, claim, test in (
            (1578, "Table 2, 1578 B: TCP-L over ACK-less keeps about 72 % of NewReno's "
             "goodput over ACKed 802.11 (265 vs 365 KB/s)", (0.6, 0.85)),
            (138, "Table 2, 138 B: TCP-L over ACK-less has about 9 % more goodput than "
             "NewReno over ACKed 802.11 (61 vs 56 KB/s)", (1.0, 1.2))):
        ackless = _get(main, f"ackless_tcp_l_{frame}", "tcp1_kBps")[0]
        acked = _get(main, f"acked_newreno_{frame}", "tcp1_kBps")[0]
        ratio = ackless / acked if acked else math.nan
        out.append(judge(claim, test[0] <= ratio <= test[1],
                         f"tcpn: {ackless:.1f} vs {acked:.1f} KB/s, ratio {ratio:.2f} (test: "
                         f"{test[0]}-{test[1]}).",
                         "a 138-byte data frame carries 12 payload bytes in tcpn's 78-byte "
                         "framing, so per-frame costs dominate both configurations (the "
                         "framing axis)" if frame == 138 else
                         "without link retries 1 - (1 - 1e-4)^1578 = 15 % of the 1578-byte "
                         "frames are lost, each a TCP loss"))
    for frame in (138, 1578):
        with_idle = [_get(main, f"{c}_{frame}", "kB_per_j")[0]
                     for c in ("ackless_tcp_l", "acked_newreno")]
        active = [_get(main, f"{c}_{frame}", "kB_per_active_j")[0]
                  for c in ("ackless_tcp_l", "acked_newreno")]
        share = _get(main, f"ackless_tcp_l_{frame}", "idle_share")[0]
        out.append(judge(
            f"Table 2, {frame} B: TCP-L over ACK-less is more energy-efficient (KB/J) than "
            "NewReno over ACKed 802.11",
            with_idle[0] > with_idle[1],
            f"tcpn KB/J with idle power {with_idle[0]:.1f} vs {with_idle[1]:.1f}; radio's "
            f"active energy only {active[0]:.1f} vs {active[1]:.1f}.",
            f"idle power is {share:.0%} of the station's energy, so KB/J with it follows "
            "goodput; the study's energy model is not stated" if share == share else None))
    return out


def sections(data: StudyData) -> list[Section]:
    """The report's sections, from ``data`` alone."""
    runs = data.tables["runs"]
    summary = summarise(runs, [m for m in METRICS if m in runs])
    table = summary[summary["axis"] == ""].drop(columns=["axis", "value"]).round(4)
    sweep = sweep_frame(summary)
    return study_sections(
        "s3", data, [Paragraph((__doc__ or "").strip()), Paragraph(scenario_mapping.__doc__ or "")],
        "Table 2 and Figs 3-5 beside tcpn", [
            Table("s3_published", _published_table(summary),
                  caption="Table 2 (study-results.md S3.2) and tcpn's net lens (mean ± "
                          "95 % CI); KB/J with idle power, and of the radio's active energy"),
            Table("s3_sweep", sweep.round(4),
                  caption="The error sweep: TCP1 goodput (KB/s), TCP1/TCP2, TCP1's "
                          "retransmission ratio (the study's Figs 3-5 give no values)"),
            Figure("s3_sweep_figure", sweep, draw_sweep,
                   caption="Figs 3-5 as tcpn computes them (net lens, 95 % CI)"),
            Table("s3_experiments", table.reset_index(drop=True),
                  caption="Every experiment and lens"),
            Paragraph("The fluid lens has no 802.11 hop and no TCP-L, so it runs none of "
                      "S3; the ns3 lens is offered Table 2's four experiments.")],
        axes_blocks("s3", AXES, summary, "kB_per_j", "station KB/J (with idle)")
        + axes_blocks("s3_goodput", AXES, summary, "tcp1_kBps", "TCP1 KB/s")[-2:],
        verdicts(summary))


STUDY = ModuleStudy("s3", "S3: TCP-L, link-error-aware congestion control", run, sections)
