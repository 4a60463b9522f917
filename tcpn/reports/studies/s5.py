"""Study S5 (token-bucket rate limiter vs TCP): experiments, IP-level kbit/s, verdicts.

The study (Kang, Ha, Choi; ns-2): Reno flows over 700 kbit/s, 10 ms links with 592-byte
IP packets; one flow limited by a token bucket of 500 kbit/s, 16 kbyte, queue 3.
(a) the flow alone: 697 kbit/s without the limiter, 405 with it; (b) three flows, only
S1-D1 limited: 247 kbit/s (study-results.md S5.2). tcpn's scenarios::

    (a)  S1 --700k,10ms-- L ==limiter, 700k,10ms==> D1
    (b)  S1 --700k,10ms-- L ==limiter==> R0 ==700k,10ms== R1 --700k,10ms-- D1
         S2, S3 --700k,10ms-- R0                       R1 -- D2, D3

L is the rate limiter (the study's Fig 3.1(a) connects S1 and D1 directly to it); its
output queue is the token bucket. Throughput is counted at the IP level (payload plus
the 40-byte TCP/IP header of every data packet that reached the receiver), as the
study's 697 kbit/s of a 700 kbit/s link implies.

>>> m = scenario_mapping("a", limited=True)
>>> m["links"][1]["ab"]["queue"]["mode"], m["tcp"]["delack_count"]
('shaper', 1)
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
    axis_causes,
    judge,
    net_series,
    profile_settings,
    relative_difference,
    run_study,
    study_sections,
    summarise,
    with_ci,
)

__all__ = ["AXES", "PUBLISHED", "SETTINGS", "STUDY", "experiments", "ip_kbps",
           "scenario_mapping"]

LINK_BPS = 700e3
DELAY_S = 0.01
PAYLOAD_BYTES = 552  # 592-byte IP packets without TCP options
HEADER_BYTES = 40
LIMITER = {"kind": "token_bucket", "rate_bps": 500e3, "depth_bytes": 16000, "limit": 3,
           "mode": "shaper"}
LIMITED_FLOW = "f1"

#: The study's numbers (study-results.md S5.2): (experiment, kbit/s, source).
PUBLISHED = pd.DataFrame([
    ("a_unlimited", "(a) one flow, no limiter", 697.0, "S5 §5, Fig 5.1(a)"),
    ("a_limited", "(a) one flow, limiter 500 kbit/s", 405.0, "S5 §5, Fig 5.1(b)"),
    ("b_limited", "(b) three flows, S1-D1 limited", 247.0, "S5 §5, Fig 5.2(b)"),
], columns=["experiment", "condition", "published_kbps", "source"])

#: Tolerance for "the same number" (stated before any run): 10 % of the published value.
SAME_NUMBER = 0.10


def scenario_mapping(case: str, limited: bool, horizon_s: float = 100.0,
                     warmup_s: float = 10.0) -> dict[str, Any]:
    """The scenario of experiment (``case`` "a" or "b", with or without the limiter).

    Unstated by the study, chosen from its text and ns-2's defaults of its time: a
    shaper (ns-2's TBF; the study says the limiter "shapes") on the limiter node's
    output, queue 3 packets; other queues drop-tail 50 packets (ns-2 ``Queue limit_``);
    no delayed ACK (ns-2 ``TCPSink``); minimum RTO 0.2 s (ns-2 ``minrto_``), initial
    RTO 3 s (``rtxcur_init_``); window cap 20 packets (``window_``); initial window 1
    (``windowInit_``); no handshake (ns-2's one-way TCP); starts uniform in [0, 1] s;
    measured from ``warmup_s`` to ``horizon_s``.
    """
    queue = {"kind": "drop_tail", "limit": 50}
    first = {"a": "S1", "b": "L", "rate_bps": LINK_BPS, "delay_s": DELAY_S, "queue": queue}
    limiter_out: dict[str, Any] = {"a": "L", "b": "D1" if case == "a" else "R0",
                                   "rate_bps": LINK_BPS, "delay_s": DELAY_S, "queue": queue}
    if limited:
        limiter_out["ab"] = {"queue": dict(LIMITER)}
    links = [first, limiter_out]
    flows_from = ["S1"] if case == "a" else ["S1", "S2", "S3"]
    if case == "b":
        links.append({"a": "R0", "b": "R1", "rate_bps": LINK_BPS, "delay_s": DELAY_S,
                      "queue": queue})
        for k in (1, 2, 3):
            if k > 1:
                links.append({"a": f"S{k}", "b": "R0", "rate_bps": LINK_BPS,
                              "delay_s": DELAY_S, "queue": queue})
            links.append({"a": "R1", "b": f"D{k}", "rate_bps": LINK_BPS, "delay_s": DELAY_S,
                          "queue": queue})
    return {
        "name": f"s5_{case}_{'limited' if limited else 'unlimited'}",
        "description": f"S5 ({case}): {'limiter on S1-D1' if limited else 'no limiter'}",
        "links": links,
        "tcp": {"segment_size_bytes": PAYLOAD_BYTES, "timestamps": False, "sack": False,
                "delack_count": 1, "min_rto_s": 0.2, "initial_rto_s": 3.0,
                "initial_cwnd_segments": 1, "rcv_buf_bytes": 20 * PAYLOAD_BYTES,
                "snd_buf_bytes": 1 << 20, "handshake": False},
        "flows": [{"id": f"f{i + 1}", "src": src, "dst": f"D{i + 1}", "variant": "reno",
                   "start_s": {"dist": "uniform", "low_s": 0.0, "high_s": 1.0}}
                  for i, src in enumerate(flows_from)],
        "horizon_s": horizon_s,
        "measure": {"warmup_s": warmup_s, "bin_s": 1.0},
        "seed": 1,
    }


def experiments(settings: Settings) -> list[Experiment]:
    """The study's four experiments at the profile's horizon (the fluid and ns3 lenses
    model the connection handshake, so they run with it: one round trip at the start)."""
    horizon = 100.0 * settings.horizon_scale
    warmup = min(10.0, horizon / 4)
    lenses = ("net", "fluid", "ns3") if settings.other_lenses else ("net",)
    return [Experiment(f"{case}_{'limited' if limited else 'unlimited'}",
                       f"({case}) {'with' if limited else 'without'} the limiter",
                       scenario_mapping(case, limited, horizon, warmup), lenses,
                       {lens: {"tcp.handshake": True} for lens in ("fluid", "ns3")})
            for case in ("a", "b") for limited in (False, True)]


_LIMITER = "links.1.ab.queue"
#: The parameters the study left open, each varied alone on the limited experiment.
AXES: tuple[StudyAxis, ...] = (
    StudyAxis.over("limiter: policer or shaper", "a_limited", f"{_LIMITER}.mode",
              ["shaper", "policer"], "shaper",
              "The study says the limiter shapes, with a 3-long queue (ns-2's TBF)."),
    StudyAxis.over("limiter queue (packets)", "a_limited", f"{_LIMITER}.limit",
              [1, 3, 10, 30], 3, "The study's 'queue length 3', read as packets."),
    StudyAxis.over("bucket depth (bytes)", "a_limited", f"{_LIMITER}.depth_bytes",
              [4000, 16000, 64000], 16000, "The study's 16 kbyte, with K = 1000."),
    StudyAxis("limiter placement", "a_limited", (
        AxisPoint("limiter node L", {}),
        AxisPoint("sender's own link", {"links.0.ab": {"queue": dict(LIMITER)},
                                        "links.1.ab": {"queue": {"kind": "drop_tail",
                                                                 "limit": 50}}})),
         "limiter node L",
         "Fig 3.1(a) connects S1 and D1 to the limiter, a node of its own."),
    StudyAxis.over("delayed ACK (segments per ACK)", "a_limited", "tcp.delack_count", [1, 2], 1,
              "ns-2's TCPSink ACKs every segment; delayed ACKs are ns-3's and Linux's."),
    StudyAxis.over("minimum RTO (s)", "a_limited", "tcp.min_rto_s", [0.2, 1.0], 0.2,
              "ns-2's minrto_ 0.2 s; 1 s is RFC 6298's."),
    StudyAxis.over("window cap (segments)", "a_limited", "tcp.rcv_buf_bytes",
              [20 * PAYLOAD_BYTES, 64 * PAYLOAD_BYTES], 20 * PAYLOAD_BYTES,
              "ns-2's window_ 20 packets; 64 is an uncapped window here.",
              labels=["20", "64"]),
    StudyAxis("bucket x queue (bytes / packets), beyond the study", "a_limited", tuple(
        AxisPoint(f"{depth}/{limit}", {f"{_LIMITER}.depth_bytes": depth,
                                       f"{_LIMITER}.limit": limit})
        for depth in (4000, 16000, 64000) for limit in (1, 3, 30)), "16000/3",
         "Which (bucket, queue) lets TCP reach the contracted rate: the study's point is "
         "16 kbyte and 3 packets."),
    StudyAxis.over("limiter: policer or shaper, three flows", "b_limited", f"{_LIMITER}.mode",
              ["shaper", "policer"], "shaper", "As on (a)."),
)

#: Profiles: how many runs, how long (horizon 100 s at scale 1).
SETTINGS: dict[str, Settings] = {
    "quick": Settings(replications=4, axis_replications=2, other_lens_replications=2,
                      horizon_scale=0.5),
    "full": Settings(replications=10, axis_replications=5, horizon_scale=3.0),
}


def ip_kbps(result: Any, replication: int) -> dict[str, Any]:
    """Per-flow IP-level throughput (kbit/s) over the scenario's measurement window:
    data packets that reached the receiver, payload plus ``HEADER_BYTES`` each; and
    for run 0 the limited flow's series in 1 s bins."""
    trace = result.trace
    t0, t1 = trace.warmup_s, trace.horizon_s
    events = trace.events(event="recv")
    times = events["time_s"].to_numpy()
    window = events[(times >= t0) & (times <= t1)]
    header = result.scenario.tcp.header_bytes
    ip_bytes = window["bytes"] + window["count"] * header
    sums = ip_bytes.groupby(window["flow"].astype(str)).sum()
    out: dict[str, Any] = {f"{flow}_kbps": float(sums.get(flow, 0.0)) * 8 / (t1 - t0) / 1e3
                           for flow in trace.flow_ids}
    if replication == 0:
        edges = list(range(0, math.ceil(t1) + 1))
        all_times = events["time_s"].to_numpy()
        all_bytes = (events["bytes"] + events["count"] * header).to_numpy()
        flows = events["flow"].astype(str).to_numpy()
        out["series"] = [
            {"flow": flow, "time_s": float(edges[i]),
             "kbps": float(all_bytes[(flows == flow) & (all_times >= edges[i])
                                     & (all_times < edges[i + 1])].sum()) * 8 / 1e3}
            for flow in trace.flow_ids for i in range(len(edges) - 1)]
    return out


def run(profile: str, progress: StudyProgress, settings: Settings | None = None,
        ) -> StudyData:
    """Run the study's experiments and axes with ``profile``'s settings (or ``settings``)."""
    chosen = settings or profile_settings(SETTINGS, profile)
    return run_study("s5", experiments(chosen), AXES, ip_kbps, chosen, profile, progress,
                     horizon_s=100.0 * chosen.horizon_scale)


def _kbps_columns(runs: pd.DataFrame) -> list[str]:
    return [c for c in runs.columns if c.endswith("_kbps")]


def draw_series(data: pd.DataFrame) -> Any:
    """Per-flow IP kbit/s in 1 s bins, one panel per experiment, net lens run 0."""
    from matplotlib.figure import Figure as MplFigure

    names = list(dict.fromkeys(data["experiment"]))
    fig = MplFigure(figsize=(10, 2.4 * math.ceil(len(names) / 2)), layout="constrained")
    panels = fig.subplots(math.ceil(len(names) / 2), 2, squeeze=False).ravel()
    for ax, name in zip(panels, names, strict=False):
        part = data[data["experiment"] == name]
        for flow, rows in part.groupby("flow", sort=True):
            ax.plot(rows["time_s"], rows["kbps"], drawstyle="steps-post", linewidth=1,
                    label=str(flow))
        ax.axhline(500, color="grey", linestyle=":", linewidth=1)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("IP kbit/s")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    for ax in panels[len(names):]:
        ax.set_visible(False)
    return fig


def _published_table(summary: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, pub in PUBLISHED.iterrows():
        row = {"condition": pub["condition"], "published_kbps": pub["published_kbps"],
               "source": pub["source"]}
        for lens in ("net", "fluid", "ns3"):
            hit = summary[(summary["experiment"] == pub["experiment"])
                          & (summary["axis"] == "") & (summary["lens"] == lens)]
            row[f"{lens}_kbps"] = (with_ci(float(hit["f1_kbps"].iloc[0]),
                                           float(hit["f1_kbps_hw"].iloc[0]))
                                   if not hit.empty else "refused")
        rows.append(row)
    return pd.DataFrame(rows)


def _value(summary: pd.DataFrame, experiment: str, metric: str = "f1_kbps",
           ) -> tuple[float, float]:
    hit = summary[(summary["experiment"] == experiment) & (summary["axis"] == "")
                  & (summary["lens"] == "net")]
    if hit.empty:
        return math.nan, math.nan
    return float(hit[metric].iloc[0]), float(hit[f"{metric}_hw"].iloc[0])


def _cause(summary: pd.DataFrame, experiment: str, published: float) -> str | None:
    """The unstated parameters whose range (on this experiment) reaches the published
    value within :data:`SAME_NUMBER`: the difference is then within what the study left
    open."""
    return axis_causes(summary, AXES, experiment, "f1_kbps",
                       lambda x: abs(relative_difference(x, published)) <= SAME_NUMBER)


def verdicts(summary: pd.DataFrame) -> list[ClaimVerdict]:
    """One verdict per published claim (see the module docstring)."""
    out = []
    alone, alone_hw = _value(summary, "a_limited")
    free, free_hw = _value(summary, "a_unlimited")
    out.append(judge(
        "(a) without the limiter the flow fills the 700 kbit/s link (697 kbit/s)",
        None if math.isnan(free) else abs(relative_difference(free, 697.0)) <= SAME_NUMBER,
        f"tcpn (net): {with_ci(free, free_hw)} kbit/s at the IP level against 697.",
        "the window cap (20 packets of ns-2's window_) or the measurement window"))
    out.append(judge(
        "(a) the limited flow stays well below the contracted 500 kbit/s",
        None if math.isnan(alone) else alone + alone_hw < 0.9 * 500.0,
        f"tcpn (net): {with_ci(alone, alone_hw)} kbit/s against the 500 kbit/s limit "
        "(test: the CI's upper end below 450).",
        axis_causes(summary, AXES, "a_limited", "f1_kbps", lambda x: x < 450.0)))
    out.append(judge(
        "(a) the limited flow gets 405 kbit/s",
        None if math.isnan(alone) else abs(relative_difference(alone, 405.0)) <= SAME_NUMBER,
        f"tcpn (net): {with_ci(alone, alone_hw)} kbit/s against 405 (same number: within "
        f"{SAME_NUMBER:.0%}).", _cause(summary, "a_limited", 405.0)))
    shared, shared_hw = _value(summary, "b_limited")
    shared_free, _ = _value(summary, "b_unlimited")
    out.append(judge(
        "(b) sharing with two flows, the limited flow gets about half the limit (247 kbit/s)",
        None if math.isnan(shared)
        else abs(relative_difference(shared, 247.0)) <= SAME_NUMBER,
        f"tcpn (net): {with_ci(shared, shared_hw)} kbit/s against 247; without the limiter "
        f"the same flow gets {shared_free:.0f}, so the fair share of the link, not the "
        "limiter, sets most of it (study-results.md S5.5).",
        _cause(summary, "b_limited", 247.0) or (
            "tcpn's (b) topology (all three flows on one 700 kbit/s link, the limiter on "
            "S1's own path) is a reading of Fig 3.1(b), which the text does not describe")))
    return out


def sections(data: StudyData) -> list[Section]:
    """The report's sections, from ``data`` alone."""
    runs = data.tables["runs"]
    metrics = _kbps_columns(runs)
    summary = summarise(runs, metrics)
    main = summary[summary["axis"] == ""].drop(columns=["axis", "value"])
    shown = main[["experiment", "lens", *(c for m in metrics for c in (m, f"{m}_hw")),
                  "runs"]].round(1)
    return study_sections(
        "s5", data, [Paragraph(__doc__.split("\n\n>>>")[0] if __doc__ else ""),
                     Paragraph(scenario_mapping.__doc__ or "")],
        "results beside the published numbers", [
            Table("s5_published", _published_table(summary),
                  caption="Limited flow S1-D1, IP-level kbit/s: the study "
                          "(study-results.md S5.2) and each lens (mean ± 95 % CI)"),
            Table("s5_flows", shown.reset_index(drop=True),
                  caption="Every flow's IP-level kbit/s per experiment and lens "
                          "(means, 95 % half-widths)"),
            Figure("s5_series", net_series(data.tables["series"]), draw_series,
                   caption="IP-level kbit/s per flow in 1 s bins (net lens, run 0); "
                           "dotted: the 500 kbit/s limit")],
        axes_blocks("s5", AXES, summary, "f1_kbps", "limited flow, IP kbit/s"),
        verdicts(summary))


STUDY = ModuleStudy("s5", "S5: token-bucket rate limiter vs TCP", run, sections)
__all__ += ["draw_series", "run", "sections", "verdicts"]
