"""Study S5 (token-bucket rate limiter vs TCP): experiments, IP-level kbit/s, verdicts.

The study: S. Kang, S. Ha, Y. Choi, "Investigating the effect of rate-limiting to TCP
flows" (in Korean; Seoul National University; venue and year not printed, its latest
reference is from December 2002; ns-2). Reno flows over 700 kbit/s, 10 ms
links with 592-byte IP packets; one flow limited by a token bucket of 500 kbit/s, 16
kbyte, queue 3 (§4). (a) the flow alone: 697 kbit/s without the limiter, 405 with it
(§5, Fig. 5.1); (b) three flows, only S1-D1 limited: 247 kbit/s (§5, Fig. 5.2(b)).
tcpn's scenarios::

    (a)  S1 --700k,10ms-- L ==limiter, 700k,10ms==> D1
    (b)  S1 --700k,10ms-- L1 ==limiter==> R0 ==700k,10ms== R1 --700k,10ms-- D1
         S2 -- L2 --> R0, S3 -- L3 --> R0 (no limiter)       R1 -- D2, D3

L is the rate limiter (§3: Fig 3.1(a) "connects the source and the destination directly
to the rate-limiter", which "represents the ISP"); its output queue is the token bucket.
(b)'s paths: §3 says "the contracted rate is guaranteed only on the link between *each*
source and the ISP", so every source reaches R0 through an edge node of its own and the
three paths have the same hops and round trip; only S1's edge limits (the limiter's
"flow id is the S1-D1 flow", §4). The other reading, S2 and S3 attached to R0 directly
(S1's path one hop and 20 ms of round trip longer), is an axis.

Counting: the study's figures give "throughput" without saying what they count (§5).
Two readings, both measured on every run: *received* counts every data packet that
reached the receiver, duplicates (spurious retransmissions) included, payload plus the
40-byte TCP/IP header (what an ns-2 trace of the receiver's link counts; the headline,
as before); *goodput* counts the bytes delivered to the application once, with the
same header share (592/552). 697 kbit/s of a 700 kbit/s link fits both. The limited
flow runs in a limit cycle of retransmission timeouts, so its rate over 10 s windows is
shown as a band (the 10th to 90th percentile of the windows of every run) beside the
mean.

>>> m = scenario_mapping("a", limited=True)
>>> m["links"][1]["ab"]["queue"]["mode"], m["tcp"]["delack_count"]
('shaper', 1)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tcpn.reports.document import ClaimVerdict, Figure, Paragraph, Section, Table
from tcpn.reports.studies import StudyData, StudyProgress
from tcpn.reports.studies.estimates import (
    Decision,
    Estimate,
    above,
    estimate_of,
    estimates_frame,
    relative_difference,
    summarise,
    within,
)
from tcpn.reports.studies.experiments import (
    AxisPoint,
    Experiment,
    MeasuredCause,
    ModuleStudy,
    Settings,
    StudyAxis,
    axes_blocks,
    axis_causes,
    judge,
    judge_lenses,
    lens_blocks,
    net_series,
    profile_settings,
    run_study,
    study_sections,
)

__all__ = ["AXES", "PUBLISHED", "SETTINGS", "STUDY", "experiments", "ip_kbps",
           "same_number", "scenario_mapping", "window_band"]

LINK_BPS = 700e3
DELAY_S = 0.01
PAYLOAD_BYTES = 552  # 592-byte IP packets without TCP options
HEADER_BYTES = 40
LIMITER = {"kind": "token_bucket", "rate_bps": 500e3, "depth_bytes": 16000, "limit": 3,
           "mode": "shaper"}
LIMITED_FLOW = "f1"

#: Length of the windows whose rates make the limited flow's band (s).
BAND_WINDOW_S = 10.0
#: The study's numbers: (experiment, kbit/s, source).
PUBLISHED = pd.DataFrame([
    ("a_unlimited", "(a) one flow, no limiter", 697.0, "S5 §5, Fig 5.1(a)"),
    ("a_limited", "(a) one flow, limiter 500 kbit/s", 405.0, "S5 §5, Fig 5.1(b)"),
    ("b_limited", "(b) three flows, S1-D1 limited", 247.0, "S5 §5, Fig 5.2(b)"),
], columns=["experiment", "condition", "published_kbps", "source"])

#: Tolerance for "the same number" (stated before any run): 10 % of the published value.
SAME_NUMBER = 0.10
#: "Well below" the contracted rate (stated before any run): at most 90 % of it.
WELL_BELOW = 0.9


def scenario_mapping(case: str, limited: bool, horizon_s: float = 100.0,
                     warmup_s: float = 10.0, paths: str = "symmetric") -> dict[str, Any]:
    """The scenario of experiment (``case`` "a" or "b", with or without the limiter;
    ``paths`` of (b): ``symmetric``, every source through an edge node of its own, or
    ``asymmetric``, S2 and S3 attached to R0 directly).

    Unstated by the study, chosen from its text and ns-2's defaults of its time: a
    shaper (ns-2's TBF; the study says the limiter "shapes") on the limiter node's
    output, queue 3 packets; other queues drop-tail 50 packets (ns-2 ``Queue limit_``);
    no delayed ACK (ns-2 ``TCPSink``); minimum RTO 0.2 s (ns-2 ``minrto_``), initial
    RTO 3 s (``rtxcur_init_``); window cap 20 packets (``window_``); initial window 1
    (``windowInit_``); no handshake (ns-2's one-way TCP); starts uniform in [0, 1] s;
    measured from ``warmup_s`` to ``horizon_s``.

    >>> [link["a"] for link in scenario_mapping("b", True)["links"] if link["b"] == "R0"]
    ['L1', 'L2', 'L3']
    >>> [link["a"] for link in scenario_mapping("b", True, paths="asymmetric")["links"]
    ...  if link["b"] == "R0"]
    ['L', 'S2', 'S3']
    """
    if paths not in ("symmetric", "asymmetric"):
        raise ValueError(f"paths must be symmetric or asymmetric, got {paths!r}")
    queue = {"kind": "drop_tail", "limit": 50}

    def link(a: str, b: str) -> dict[str, Any]:
        return {"a": a, "b": b, "rate_bps": LINK_BPS, "delay_s": DELAY_S, "queue": queue}

    edge = "L1" if case == "b" and paths == "symmetric" else "L"
    limiter_out = link(edge, "D1" if case == "a" else "R0")
    if limited:
        limiter_out["ab"] = {"queue": dict(LIMITER)}
    links = [link("S1", edge), limiter_out]
    flows_from = ["S1"] if case == "a" else ["S1", "S2", "S3"]
    if case == "b":
        links.append(link("R0", "R1"))
        for k in (1, 2, 3):
            if k > 1 and paths == "symmetric":
                links += [link(f"S{k}", f"L{k}"), link(f"L{k}", "R0")]
            elif k > 1:
                links.append(link(f"S{k}", "R0"))
            links.append(link("R1", f"D{k}"))
    return {
        "name": f"s5_{case}_{'limited' if limited else 'unlimited'}"
                + ("_asymmetric" if case == "b" and paths == "asymmetric" else ""),
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
    return [Experiment(f"{case}_{'limited' if limited else 'unlimited'}",
                       f"({case}) {'with' if limited else 'without'} the limiter",
                       scenario_mapping(case, limited, horizon, warmup), settings.lenses,
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
    StudyAxis("(b) paths", "b_limited", (
        AxisPoint("symmetric", {}),
        AxisPoint("asymmetric", {"links": scenario_mapping("b", True,
                                                            paths="asymmetric")["links"]})),
         "symmetric", "§3: the contracted rate holds on the link between each source and the "
         "ISP, so each source has an edge link; asymmetric: S2 and S3 attached to R0, S1's "
         "path one hop longer."),
)

#: Profiles: how many runs, how long (horizon 100 s at scale 1).
SETTINGS: dict[str, Settings] = {
    "quick": Settings(replications=5, axis_replications=5,
                      horizon_scale=0.5),
    "full": Settings(replications=10, axis_replications=5, horizon_scale=3.0),
}


def window_band(times_s: Any, ip_bytes: Any, t0: float, t1: float,
                window_s: float = BAND_WINDOW_S) -> tuple[float, float]:
    """The 10th and 90th percentiles (kbit/s) of the rates over the whole ``window_s``
    windows of ``[t0, t1]`` (NaN with none).

    >>> window_band([1.0, 2.0, 11.0, 12.0, 13.0], [1000] * 5, 0.0, 20.0)
    (1.68, 2.32)
    """
    count = int((t1 - t0) // window_s)
    if count < 1:
        return math.nan, math.nan
    edges = t0 + window_s * np.arange(count + 1)
    binned, _ = np.histogram(np.asarray(times_s, dtype=float), bins=edges,
                             weights=np.asarray(ip_bytes, dtype=float))
    rates = binned * 8 / window_s / 1e3
    return (round(float(np.percentile(rates, 10)), 6),
            round(float(np.percentile(rates, 90)), 6))


def ip_kbps(result: Any, replication: int) -> dict[str, Any]:
    """Per-flow IP-level kbit/s over the scenario's measurement window, as the two
    countings of the module docstring: ``<flow>_kbps`` every data packet that reached
    the receiver (payload plus ``HEADER_BYTES`` each), ``<flow>_goodput_kbps`` the bytes
    delivered to the application once (plus the same header share); the limited flow's
    band over 10 s windows (received counting); for run 0 every flow's series in 1 s
    bins."""
    trace = result.trace
    t0, t1 = trace.warmup_s, trace.horizon_s
    header = result.scenario.tcp.header_bytes
    payload = result.scenario.tcp.segment_size_bytes
    out: dict[str, Any] = {}
    for name, event, scale in (("kbps", "recv", None), ("goodput_kbps", "deliver",
                                                         (payload + header) / payload)):
        events = trace.events(event=event)
        times = events["time_s"].to_numpy()
        window = events[(times >= t0) & (times <= t1)]
        ip_bytes = (window["bytes"] + window["count"] * header if scale is None
                    else window["bytes"] * scale)
        sums = ip_bytes.groupby(window["flow"].astype(str)).sum()
        out |= {f"{flow}_{name}": float(sums.get(flow, 0.0)) * 8 / (t1 - t0) / 1e3
                for flow in trace.flow_ids}
    events = trace.events(event="recv")
    mine = events[events["flow"].astype(str) == LIMITED_FLOW]
    out["f1_band_p10_kbps"], out["f1_band_p90_kbps"] = window_band(
        mine["time_s"], mine["bytes"] + mine["count"] * header, t0, t1)
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


def _row(summary: pd.DataFrame, experiment: str, lens: str = "net") -> Any:
    hit = summary[(summary["experiment"] == experiment) & (summary["axis"] == "")
                  & (summary["lens"] == lens)]
    return None if hit.empty else hit.iloc[0]


def _published_table(summary: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, pub in PUBLISHED.iterrows():
        row = {"condition": pub["condition"], "published_kbps": pub["published_kbps"],
               "source": pub["source"]}
        net = _row(summary, pub["experiment"])
        row["net_received_kbps"] = estimate_of(net, "f1_kbps").text()
        row["net_goodput_kbps"] = estimate_of(net, "f1_goodput_kbps").text()
        for lens in ("fluid", "ns3"):
            hit = _row(summary, pub["experiment"], lens)
            row[f"{lens}_received_kbps"] = ("refused" if hit is None
                                            else estimate_of(hit, "f1_kbps").text())
        rows.append(row)
    return pd.DataFrame(rows)


def _value(summary: pd.DataFrame, experiment: str, metric: str = "f1_kbps") -> Estimate:
    return estimate_of(_row(summary, experiment), metric)


def _band(summary: pd.DataFrame, experiment: str) -> str:
    low = _value(summary, experiment, "f1_band_p10_kbps").mean
    high = _value(summary, experiment, "f1_band_p90_kbps").mean
    return (f"its 10 s windows run from {low:.0f} to {high:.0f} kbit/s (10th-90th "
            "percentile, mean over runs)" if math.isfinite(low) else "no 10 s window")


def same_number(estimate: Estimate, published: float) -> Decision | None:
    """Whether the runs give the published number: the interval within
    :data:`SAME_NUMBER` of it (undecided when it straddles the band; None when the
    experiment did not run)."""
    if math.isnan(estimate.mean):
        return None
    return within(estimate, (1 - SAME_NUMBER) * published, (1 + SAME_NUMBER) * published)


def _cause(summary: pd.DataFrame, experiment: str, published: float,
           ) -> MeasuredCause | None:
    """The unstated parameters whose range (on this experiment) reaches the published
    value within :data:`SAME_NUMBER`: the difference is then within what the study left
    open."""
    return axis_causes(summary, AXES, experiment, "f1_kbps",
                       lambda x: abs(relative_difference(x, published)) <= SAME_NUMBER)


def _counting_cause(summary: pd.DataFrame, experiment: str, published: float,
                    ) -> MeasuredCause | None:
    """The other counting (goodput), measured on the same runs, when it reaches the
    published value within :data:`SAME_NUMBER` (the study's counting is unstated)."""
    goodput = _value(summary, experiment, "f1_goodput_kbps")
    if same_number(goodput, published) is Decision.HOLDS:
        return MeasuredCause(
            f"the study does not say what it counts (§5); counted as goodput (bytes "
            f"delivered once) the same runs give {goodput.text()} kbit/s, within "
            f"{SAME_NUMBER:.0%} of {published:g}", (experiment,))
    return None


def verdicts(summary: pd.DataFrame) -> list[ClaimVerdict]:
    """One verdict per published claim (see the module docstring). The test reads the
    received counting; the goodput counting, measured on the same runs, is the cause
    when it alone reaches the published number."""
    out = []
    alone = _value(summary, "a_limited")
    free = _value(summary, "a_unlimited")
    out.append(judge(
        "(a) without the limiter the flow fills the 700 kbit/s link (697 kbit/s)",
        same_number(free, 697.0),
        f"tcpn: {free.text()} kbit/s received at the IP level against 697 (goodput "
        f"{_value(summary, 'a_unlimited', 'f1_goodput_kbps').text()}).",
        _counting_cause(summary, "a_unlimited", 697.0), {"a_unlimited_kbps": free}))
    out.append(judge(
        "(a) the limited flow stays well below the contracted 500 kbit/s",
        None if math.isnan(alone.mean) else ~above(alone, WELL_BELOW * 500.0),
        f"tcpn: {alone.text()} kbit/s against the 500 kbit/s limit (test: the "
        f"interval at or below {WELL_BELOW * 500.0:g}, undecided when it straddles it); "
        f"{_band(summary, 'a_limited')}.",
        axis_causes(summary, AXES, "a_limited", "f1_kbps",
                    lambda x: x < WELL_BELOW * 500.0),
        {"a_limited_kbps": alone}))
    out.append(judge(
        "(a) the limited flow gets 405 kbit/s",
        same_number(alone, 405.0),
        f"tcpn: {alone.text()} kbit/s received against 405 (same number: the interval "
        f"within {SAME_NUMBER:.0%}); goodput "
        f"{_value(summary, 'a_limited', 'f1_goodput_kbps').text()}; "
        f"{_band(summary, 'a_limited')}.",
        _counting_cause(summary, "a_limited", 405.0) or _cause(summary, "a_limited", 405.0),
        {"a_limited_kbps": alone}))
    shared = _value(summary, "b_limited")
    shared_free = _value(summary, "b_unlimited")
    out.append(judge(
        "(b) sharing with two flows, the limited flow gets about half the limit (247 kbit/s)",
        same_number(shared, 247.0),
        f"tcpn (symmetric paths): {shared.text()} kbit/s received against 247 (goodput "
        f"{_value(summary, 'b_limited', 'f1_goodput_kbps').text()}); without the limiter "
        f"the same flow gets {shared_free.mean:.0f}, so the fair share of the link, not the "
        f"limiter, sets most of it; {_band(summary, 'b_limited')}.",
        _counting_cause(summary, "b_limited", 247.0) or _cause(summary, "b_limited", 247.0),
        {"b_limited_kbps": shared, "b_unlimited_kbps": shared_free}))
    return out


def sections(data: StudyData) -> list[Section]:
    """The report's sections, from ``data`` alone."""
    runs = data.tables["runs"]
    metrics = _kbps_columns(runs)
    summary = summarise(runs, metrics)
    main = summary[summary["axis"] == ""]
    flows = [m for m in metrics if not m.startswith("f1_band")]
    return study_sections(
        "s5", data, [Paragraph(__doc__.split("\n\n>>>")[0] if __doc__ else ""),
                     Paragraph(scenario_mapping.__doc__.split("\n\n    >>>")[0]
                               if scenario_mapping.__doc__ else "")],
        "results beside the published numbers", [
            Table("s5_published", _published_table(summary),
                  caption="Limited flow S1-D1, IP-level kbit/s: the study (§5, Figs 5.1 "
                          "and 5.2) and each lens, both countings (mean [95 % CI], n)"),
            Table("s5_flows", estimates_frame(main, flows).reset_index(drop=True),
                  caption="Every flow's IP-level kbit/s per experiment and lens, received "
                          "and goodput (mean [95 % CI]; n: runs)"),
            Figure("s5_series", net_series(data.tables["series"]), draw_series,
                   caption="IP-level kbit/s per flow in 1 s bins (net lens, run 0); "
                           "dotted: the 500 kbit/s limit")],
        axes_blocks("s5", AXES, summary, "f1_kbps", "limited flow, IP kbit/s"),
        judge_lenses(summary, verdicts),
        lens_blocks("s5", data, summary, "f1_kbps", "limited flow IP kbit/s"))


STUDY = ModuleStudy("s5", "S5: token-bucket rate limiter vs TCP", run, sections)
__all__ += ["draw_series", "run", "sections", "verdicts"]
