"""Study S1 (TCP Vegas's RTT ambiguity under reverse-path congestion): per-flow throughput
of the observed flows, Tahoe against Vegas, and the two fixes.

The study: J.-D. Kim, C.-K. Kim, "TCP Vegas RTT Ambiguity Problem and Its Solutions" (in
Korean; Seoul National University; a journal paper, manuscript 99481-1130 received 30
November 1999; simulated with ns, §II). Observed flows A -> X (two), competing forward
flows B -> X, reverse flows Z -> C whose data queues where the A flows' ACKs travel; MSS 500 bytes,
40-byte pure ACKs, drop-tail. Exp 1: nA = 2; Exp 2: nA = 2 at 1 s, nB = 1 at 3 s; Exp 3:
nA = 2 at 1 s, nZ = 8 at 3 s; starts within a group 50 ms apart on average
(exponential). Fixes: Small-Get-Priority Queue (SGPQ) in the routers, and Modified
Vegas (timestamps, forward-path-only Actual) on the first, the second or both A flows.
It publishes no number: every claim is a reading of Figs 3-13 (§II-III).

Vegas's reaction to a loss: the study states none (§II describes only congestion
avoidance), nor does S4. Brakmo and Peterson's Vegas, as ns-2's ``Agent/TCP/Vegas`` (the
studies' simulator, ``tcp-vegas.cc``) implements it, retransmits on the third duplicate
ACK or on a duplicate ACK whose segment's fine-grained timer expired, and then cuts the
window by a quarter (by half for a segment already retransmitted; to 2 below 4), only if
it has not changed since that segment left; a coarse timeout restarts from 2 segments.
The reproduction uses Reno's recovery (halving); NewReno's partial ACKs and ns-2's rule
(``params.loss_cut: ns2`` and ``params.fine_timer``: the quarter cut once per window, the
restart from 2 and the fine-grained retransmissions, in both lenses) are an axis. None is
"the study's". ns-2.35 binds ``ns_vegas_fix_level_`` without a default (``tcp-vegas.cc``;
``ns-default.tcl`` sets none, so the agent keeps whatever its memory held and ns-2 warns
"no class variable"): at 3 the ACK that ends a recovery of exactly three duplicate ACKs
deflates the window and a timeout forgets the fine timer's worry, below 3 or 1 they do not
(``params.ns2_fix_level``); the axis runs ns-2's rule at 3 and at 0 (measured on Exp 3's
Vegas, net lens, seeds 1-2: 109 and 83 retransmissions at 3, 127 and 137 at 0, the bytes
delivered within 1 %).

tcpn's scenario::

    A (a0, a1 -> X) --\\                                  /-- X
    B (b -> X) -------- R1 ==1.5 Mbit/s, 20 ms== R2 ------
    C <- (z.0..z.7) --/                                  \\-- Z (z.* data Z -> C)

Measurement as the study's figures: each observed flow's throughput in 0.2 s bins
(bytes delivered to the application in the bin) and its cumulative bytes, read from 5 s
(after the reverse flows of Exp 3 have started at 3 s and left slow start) to the end;
the A flows' mean rate over that window is the headline. Reading aggregate goodput over
0-10 s (the shipped files' window) hides the effect: the reverse flows start at 3 s.

Readings that decide verdicts (the study's words):

* *Modified Vegas solves the problem* (§III.2, Figs 11-13: "수정 Vegas 구현이 ... Vegas RTT
  Ambiguity 문제를 잘 해결하고 있음") has no number; the study's yardstick for a drop that is
  *too large* is §II's, on Exp 3: the eight reverse flows' ACKs take less of the forward
  link than Exp 2's one B connection, so Vegas's A flows should do no worse than under
  Exp 2's forward congestion. The test: each modified flow alone clearly above the plain
  flow in its place (Figs 11, 12), and both modified (Fig 13) not below Vegas in Exp 2.
  (An earlier reading asked for 80 % of Exp 1's rate, a bar the study does not set.)
* Exp 2 (§II, Figs 5-6) states the B connection's direction and start only: its variant
  and the bottleneck buffer are axes (the buffer on every experiment at once), and the
  Exp 2 verdict names what each gives.
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
    estimate_at,
    estimates_frame,
    ratio,
    short_text,
    summarise,
)
from tcpn.reports.studies.experiments import (
    DECIDING_LENSES,
    JOINT,
    AxisPoint,
    Experiment,
    MeasuredCause,
    ModuleStudy,
    Settings,
    StudyAxis,
    at_point,
    axes_blocks,
    judge,
    judge_lenses,
    lens_blocks,
    net_rows,
    net_series,
    point_label,
    profile_settings,
    run_study,
    study_sections,
)

__all__ = ["AXES", "BUFFER_EXPERIMENTS", "PUBLISHED", "SETTINGS", "STUDY", "a_flow_rates",
           "b_variant_axis", "buffer_axis", "exp2_settings", "experiments", "run",
           "scenario_mapping", "sections", "verdicts"]

BIN_S = 0.2
WINDOW_START_S = 5.0
VEGAS_PARAMS = {"alpha": 1, "beta": 3, "gamma": 1, "recovery": "reno"}
OBSERVED = ("a0", "a1")
#: "Far more" (Exp 3, stated before any run): Vegas's A flows lose a share of their Exp 1
#: rate at least this much (0.1: ten percentage points) larger than Tahoe's.
FAR_MORE_POINTS = 0.1

#: What the study says, figure by figure (it prints no number).
PUBLISHED = pd.DataFrame([
    ("Exp 1", "Vegas slightly better than Tahoe, and stable", "S1 §II, Figs 3-4"),
    ("Exp 2", "Vegas better and more stable than Tahoe under forward congestion",
     "S1 §II, Figs 5-6"),
    ("Exp 3", "Tahoe: an 'appropriate' drop from Exp 1; Vegas: a sharp drop",
     "S1 §II, Figs 7-8"),
    ("Exp 3 + SGPQ", "both Tahoe and Vegas improve over plain Exp 3", "S1 §III.1, Figs 9-10"),
    ("Exp 3 + Modified Vegas", "solves the RTT ambiguity (first, second or both flows)",
     "S1 §III.2, Figs 11-13"),
], columns=["experiment", "published (qualitative)", "source"])


def scenario_mapping(exp: int, variant: str, *, sgpq: bool = False,
                     modified: tuple[int, ...] = (), horizon_s: float = 20.0,
                     ) -> dict[str, Any]:
    """One experiment (``exp`` 1, 2 or 3; ``variant`` tahoe or vegas; SGPQ on the
    bottleneck's two router queues; Modified Vegas on the A flows in ``modified``).

    Unstated, chosen: bottleneck 1.5 Mbit/s,
    20 ms, access links 10 Mbit/s, 1 ms; drop-tail 25 packets; no delayed ACK (one 40-byte
    pure ACK per segment, ns-2's TCPSink); timestamps off except on Modified Vegas flows
    (52-byte ACKs, still under SGPQ's 64-byte threshold); initial window 2; minimum RTO
    1 s; Vegas alpha/beta/gamma 1/3/1 (Brakmo and Peterson) with Reno recovery (not
    stated: see the module docstring); receive window 64 KiB; Modified Vegas's receiver clock offset
    uniform in [0, 100] s per flow.
    """
    queue: dict[str, Any] = ({"kind": "sgpq", "limit": 25, "threshold_bytes": 64} if sgpq
                             else {"kind": "drop_tail", "limit": 25})
    access = {"rate_bps": 10e6, "delay_s": 0.001, "queue": {"kind": "drop_tail", "limit": 25}}
    links = [{"a": "R1", "b": "R2", "rate_bps": 1.5e6, "delay_s": 0.02, "queue": queue},
             *({"a": node, "b": "R1"} | access for node in ("A", "B", "C")),
             *({"a": "R2", "b": node} | access for node in ("X", "Z"))]

    def flow(fid: str, src: str, dst: str, start: Any, i: int | None = None,
             ) -> dict[str, Any]:
        out: dict[str, Any] = {"id": fid, "src": src, "dst": dst, "variant": variant,
                               "start_s": start}
        if variant == "vegas":
            out["params"] = dict(VEGAS_PARAMS)
        if i is not None and i in modified:
            out |= {"variant": "modified_vegas", "tcp": {"timestamps": True},
                    "receiver_clock_offset_s": {"dist": "uniform", "low_s": 0.0,
                                                "high_s": 100.0}}
        return out

    flows = [flow("a0", "A", "X", 1.0, 0),
             flow("a1", "A", "X", {"dist": "exponential", "mean_s": 0.05, "offset_s": 1.0}, 1)]
    if exp == 2:
        flows.append(flow("b", "B", "X", 3.0))
    if exp == 3:
        flows.append(flow("z", "Z", "C", 3.0) | {"count": 8,
                                                 "gap_s": {"dist": "exponential",
                                                           "mean_s": 0.05}})
    fixes = ("_sgpq" if sgpq else "") + (f"_mod{''.join(map(str, modified))}"
                                         if modified else "")
    return {
        "name": f"s1_exp{exp}_{variant}{fixes}",
        "description": f"S1 Exp {exp}, {variant}{fixes}",
        "links": links,
        "tcp": {"segment_size_bytes": 500, "timestamps": False, "sack": False,
                "delack_count": 1, "initial_cwnd_segments": 2, "min_rto_s": 1.0,
                "initial_rto_s": 1.0, "rcv_buf_bytes": 65536, "snd_buf_bytes": 65536},
        "flows": flows,
        "horizon_s": horizon_s,
        "measure": {"warmup_s": WINDOW_START_S, "bin_s": BIN_S},
        "seed": 1,
    }


def experiments(settings: Settings) -> list[Experiment]:
    """Exp 1-3 with Tahoe and Vegas, Exp 3 with SGPQ, Exp 3 with Modified Vegas on the
    first, the second and both A flows."""
    horizon = 20.0 * settings.horizon_scale
    out = [Experiment(f"exp{exp}_{v}", f"Exp {exp}, {v}",
                      scenario_mapping(exp, v, horizon_s=horizon), settings.lenses)
           for exp in (1, 2, 3) for v in ("tahoe", "vegas")]
    out += [Experiment(f"exp3_sgpq_{v}", f"Exp 3 + SGPQ, {v}",
                       scenario_mapping(3, v, sgpq=True, horizon_s=horizon), settings.lenses)
            for v in ("tahoe", "vegas")]
    out += [Experiment(f"exp3_modvegas_{name}", f"Exp 3, Modified Vegas on {name}",
                       scenario_mapping(3, "vegas", modified=which, horizon_s=horizon),
                       settings.lenses)
            for name, which in (("first", (0,)), ("second", (1,)), ("both", (0, 1)))]
    return out


def _all_vegas(path: str) -> list[str]:
    return [f"flows.{i}.params.{path}" for i in range(3)]


#: ns-2's ``Agent/TCP/Vegas`` reaction to a loss on every Vegas flow: Reno's recovery, the
#: quarter cut once per window and the fine-grained retransmissions.
_NS2_VEGAS = {**dict.fromkeys(_all_vegas("loss_cut"), "ns2"),
              **dict.fromkeys(_all_vegas("fine_timer"), True)}


#: The experiments the bottleneck buffer is varied on together (one router in the study):
#: all of them, so that a buffer that moves one claim is read against every other claim
#: at the same buffer.
BUFFER_EXPERIMENTS = ("exp1_tahoe", "exp1_vegas", "exp2_tahoe", "exp2_vegas", "exp3_tahoe",
                      "exp3_vegas", "exp3_sgpq_tahoe", "exp3_sgpq_vegas", "exp3_modvegas_first",
                      "exp3_modvegas_second", "exp3_modvegas_both")
BUFFER_PKTS = ("10", "25", "50")
OTHER_VARIANT = {"tahoe": "vegas", "vegas": "tahoe"}


def buffer_axis(experiment: str) -> str:
    """The name of the bottleneck-buffer axis on ``experiment``."""
    return f"bottleneck buffer (packets), {experiment}"


def b_variant_axis(experiment: str) -> str:
    """The name of the axis on the B flow's variant in ``experiment`` (exp2_*)."""
    return f"B flow's variant, {experiment}"


def _b_variant_points(variant: str) -> tuple[AxisPoint, ...]:
    other = OTHER_VARIANT[variant]
    return (AxisPoint(variant, {}),
            AxisPoint(other, {"flows.2.variant": other,
                              "flows.2.params": dict(VEGAS_PARAMS) if other == "vegas"
                              else {}}))


AXES: tuple[StudyAxis, ...] = (
    *(StudyAxis.over(f"bottleneck rate (Mbit/s), {e}", e, "links.0.rate_bps", [0.8e6, 1.5e6, 3e6],
                1.5e6, "Not stated; 1.5 Mbit/s (a T1) is the design's suggestion.",
                labels=["0.8", "1.5", "3"]) for e in ("exp1_vegas", "exp3_vegas")),
    *(StudyAxis.over(buffer_axis(e), e, "links.0.queue.limit",
                     [int(b) for b in BUFFER_PKTS], 25,
                     "Not stated (§II: the routers are drop-tail, nothing more); 25 packets "
                     "is about two bandwidth-delay products of the chosen bottleneck. Run on "
                     "every experiment, so that one buffer is read against every claim; "
                     "net and ns-3 only (the lenses that decide).", lenses=DECIDING_LENSES)
      for e in BUFFER_EXPERIMENTS),
    *(StudyAxis(b_variant_axis(f"exp2_{v}"), f"exp2_{v}", _b_variant_points(v), v,
                "Not stated: §II names Exp 2's B connection only by its direction and "
                "start (nB = 1, tB = 3.0 s); the reproduction runs it with the A flows' "
                "variant, the axis with the other one.") for v in ("tahoe", "vegas")),
    StudyAxis.over("delayed ACK (segments per ACK), exp3_vegas", "exp3_vegas",
              "tcp.delack_count", [1, 2], 1,
              "The study's ACKs are 'TCP header size only' and ns's sink ACKs every "
              "segment; delayed ACKs halve the reverse-path load of ACKs."),
    StudyAxis("Vegas loss reaction, exp3_vegas", "exp3_vegas", (
        AxisPoint("reno", {}),
        AxisPoint("newreno", dict.fromkeys(_all_vegas("recovery"), "newreno")),
        AxisPoint("ns2", _NS2_VEGAS),
        AxisPoint("ns2 fix 0", {**_NS2_VEGAS,
                                **dict.fromkeys(_all_vegas("ns2_fix_level"), 0)})),
        "reno", "Not stated by the study (module docstring): Reno's halving, NewReno's "
        "partial ACKs, and ns-2's Vegas (a cut by a quarter, once per window, and its "
        "fine-grained retransmissions), with ns-2's ns_vegas_fix_level_ at 3 or, as "
        "ns-2.35 leaves it unset, 0."),
    StudyAxis("Vegas alpha/beta, exp3_vegas", "exp3_vegas", (
        AxisPoint("1/3", {}),
        AxisPoint("2/4", {**dict.fromkeys(_all_vegas("alpha"), 2),
                          **dict.fromkeys(_all_vegas("beta"), 4)})),
         "1/3", "Not stated; 1/3 is Brakmo and Peterson's, 2/4 ns-3's."),
)

SETTINGS: dict[str, Settings] = {
    "quick": Settings(replications=5, axis_replications=5,
                      horizon_scale=0.625),
    "full": Settings(replications=10, axis_replications=5, horizon_scale=1.5),
}


def a_flow_rates(result: Any, replication: int) -> dict[str, Any]:
    """Each observed flow's delivered kbit/s over ``[WINDOW_START_S, horizon]``, the mean
    of the two, the coefficient of variation of their 0.2 s rates, the other groups'
    kbit/s; for run 0 the 0.2 s rates and cumulative bytes of the observed flows."""
    trace = result.trace
    t0, t1 = trace.warmup_s, trace.horizon_s
    rows = trace.events(event="deliver")
    times, sizes = rows["time_s"].to_numpy(), rows["bytes"].to_numpy()
    flows = rows["flow"].astype(str).to_numpy()
    edges = t0 + BIN_S * np.arange(round((t1 - t0) / BIN_S) + 1)
    out: dict[str, Any] = {}
    rates = {}
    for fid in OBSERVED:
        mine = flows == fid
        inside = mine & (times >= t0) & (times <= t1)
        out[f"{fid}_kbps"] = float(sizes[inside].sum()) * 8 / (t1 - t0) / 1e3
        binned, _ = np.histogram(times[mine], bins=edges, weights=sizes[mine])
        rates[fid] = binned * 8 / BIN_S / 1e3
    out["a_kbps"] = (out["a0_kbps"] + out["a1_kbps"]) / 2
    mean_rate = (rates["a0"] + rates["a1"]) / 2
    out["a_cv"] = float(np.std(mean_rate) / np.mean(mean_rate)) if mean_rate.mean() > 0 \
        else math.nan
    window = (times >= t0) & (times <= t1)
    out["b_kbps"] = float(sizes[window & (flows == "b")].sum()) * 8 / (t1 - t0) / 1e3
    reverse = window & np.char.startswith(flows.astype(str), "z.")
    out["z_kbps"] = float(sizes[reverse].sum()) * 8 / (t1 - t0) / 1e3
    if replication == 0:
        series = []
        for fid in OBSERVED:
            mine = flows == fid
            cumulative = np.cumsum(np.histogram(times[mine], bins=np.append(0.0, edges),
                                                weights=sizes[mine])[0])[1:]
            series += [{"flow": fid, "time_s": float(edges[i]), "kbps": float(rates[fid][i]),
                        "cumulative_kbytes": float(cumulative[i]) / 1e3}
                       for i in range(len(edges) - 1)]
        out["series"] = series
    return out


METRICS = ["a0_kbps", "a1_kbps", "a_kbps", "a_cv", "b_kbps", "z_kbps"]


def run(profile: str, progress: StudyProgress, settings: Settings | None = None,
        ) -> StudyData:
    """Run the experiments and the axes with ``profile``'s settings (or ``settings``)."""
    chosen = settings or profile_settings(SETTINGS, profile)
    return run_study("s1", experiments(chosen), AXES, a_flow_rates, chosen, profile, progress,
                     horizon_s=20.0 * chosen.horizon_scale)


def _get(main: pd.DataFrame, name: str, metric: str = "a_kbps") -> Estimate:
    """The A flows' kbit/s (or ``metric``) of experiment ``name``."""
    return estimate_at(main, name, metric)


def _text(main: pd.DataFrame, name: str, metric: str = "a_kbps") -> str:
    return f"{name} {_get(main, name, metric).text()}"


def _better(main: pd.DataFrame, exp: str) -> Decision:
    """Vegas's A flows above Tahoe's and steadier in ``exp``, the runs separating both
    (Exp 1 and 2's claims; undecided where their intervals overlap)."""
    return (above(_get(main, f"{exp}_vegas"), _get(main, f"{exp}_tahoe"))
            & above(_get(main, f"{exp}_tahoe", "a_cv"), _get(main, f"{exp}_vegas", "a_cv")))


def exp2_settings() -> list[tuple[str, str]]:
    """The settings of what the study left open in Exp 2, each as (label, point): the
    bottleneck buffer on every experiment of Exp 1-3 at once (a :data:`JOINT` point)
    and the B flow's variant fixed for both of Exp 2's runs."""
    out = [(f"buffer {b} packets", JOINT.join(point_label(e, buffer_axis(e), b)
                                              for e in BUFFER_EXPERIMENTS))
           for b in BUFFER_PKTS if b != "25"]
    out += [(f"B runs {v.capitalize()} in both", point_label(
        f"exp2_{OTHER_VARIANT[v]}", b_variant_axis(f"exp2_{OTHER_VARIANT[v]}"), v))
        for v in ("tahoe", "vegas")]
    return out


def _exp2_tried(summary: pd.DataFrame) -> tuple[str, MeasuredCause | None]:
    """Exp 2's claim read at each of :func:`exp2_settings` whose runs the report has: a
    sentence of what they give, and the cause when one gives the claim (the rule then
    checks the other claims there)."""
    tried, cause = [], None
    for label, point in exp2_settings():
        try:
            there = net_rows(at_point(summary, point))
        except ValueError:  # the axis did not run
            continue
        runs = min(_get(there, f"exp2_{v}").defined for v in ("tahoe", "vegas"))
        tried.append(f"{label} (n >= {runs}): Vegas "
                     f"{_get(there, 'exp2_vegas').mean:.0f} vs Tahoe "
                     f"{_get(there, 'exp2_tahoe').mean:.0f} kbit/s, CV "
                     f"{_get(there, 'exp2_vegas', 'a_cv').mean:.2f} vs "
                     f"{_get(there, 'exp2_tahoe', 'a_cv').mean:.2f}")
        if cause is None and _better(there, "exp2") is Decision.HOLDS:
            cause = MeasuredCause(f"with {label} the runs give the claim", (point,), (point,))
    if not tried:
        return "", None
    return (" Tried where the study is silent (the same test): "
            + "; ".join(tried) + "."), cause


def verdicts(summary: pd.DataFrame) -> list[ClaimVerdict]:
    """One verdict per claim (the study's readings of its figures)."""
    main = net_rows(summary)
    if "exp3_vegas" not in main.index:
        return [judge("S1's figures", None, "The experiments did not run.")]
    g = {name: _get(main, name).mean for name in main.index}
    cv = {name: _get(main, name, "a_cv").mean for name in main.index}
    exp2_holds = _better(main, "exp2")
    tried, exp2_cause = (("", None) if exp2_holds is Decision.HOLDS
                         else _exp2_tried(summary))
    out = [judge(
        "Exp 1: Vegas does slightly better than Tahoe, with a stable rate",
        _better(main, "exp1"),
        f"A flows' mean kbit/s: {_text(main, 'exp1_vegas')} vs {_text(main, 'exp1_tahoe')}; "
        f"CV of the 0.2 s rate {cv['exp1_vegas']:.2f} vs {cv['exp1_tahoe']:.2f} (test: the "
        "95 % intervals separate both).", None,
        {"vegas_kbps": _get(main, "exp1_vegas"), "tahoe_kbps": _get(main, "exp1_tahoe"),
         "vegas_cv": _get(main, "exp1_vegas", "a_cv"),
         "tahoe_cv": _get(main, "exp1_tahoe", "a_cv")}),
        judge(
        "Exp 2: under forward congestion Vegas does better and more stably than Tahoe",
        exp2_holds,
        f"{_text(main, 'exp2_vegas')} vs {_text(main, 'exp2_tahoe')} kbit/s; CV "
        f"{cv['exp2_vegas']:.2f} vs {cv['exp2_tahoe']:.2f} (test: the 95 % intervals "
        f"separate both); the B flow (the A flows' variant) gets "
        f"{_get(main, 'exp2_vegas', 'b_kbps').mean:.0f} kbit/s beside Vegas, "
        f"{_get(main, 'exp2_tahoe', 'b_kbps').mean:.0f} beside Tahoe.{tried}", exp2_cause,
        {"vegas_kbps": _get(main, "exp2_vegas"), "tahoe_kbps": _get(main, "exp2_tahoe"),
         "vegas_cv": _get(main, "exp2_vegas", "a_cv"),
         "tahoe_cv": _get(main, "exp2_tahoe", "a_cv")})]
    # the share of Exp 1's rate kept in Exp 3 (1 - the drop), separate runs: the ratio's
    # interval holds every ratio of values within the two experiments' intervals
    kept = {v: ratio(_get(main, f"exp3_{v}"), _get(main, f"exp1_{v}"))
            for v in ("tahoe", "vegas")}
    drop = {v: 1 - k.mean for v, k in kept.items()}
    out.append(judge(
        "Exp 3: reverse traffic costs Vegas's observed flows far more than Tahoe's",
        above(kept["tahoe"], kept["vegas"].shifted(FAR_MORE_POINTS)),
        f"Exp 1 -> Exp 3: Vegas {drop['vegas']:.0%}, Tahoe {drop['tahoe']:.0%} (share of "
        f"Exp 1 kept: Vegas {short_text(kept['vegas'], 3)}, Tahoe "
        f"{short_text(kept['tahoe'], 3)}; test: Vegas's drop more than "
        f"{FAR_MORE_POINTS * 100:g} points larger, the intervals apart by that).", None,
        {"vegas_drop": drop["vegas"], "tahoe_drop": drop["tahoe"],
         "vegas_kept": kept["vegas"], "tahoe_kept": kept["tahoe"]}))
    sgpq = {v: above(_get(main, f"exp3_sgpq_{v}"), _get(main, f"exp3_{v}"))
            for v in ("tahoe", "vegas")}
    out.append(judge(
        "SGPQ: both Tahoe and Vegas improve over plain Exp 3",
        sgpq["tahoe"] & sgpq["vegas"],
        f"Tahoe {_text(main, 'exp3_tahoe')} -> {_text(main, 'exp3_sgpq_tahoe')}; Vegas "
        f"{_text(main, 'exp3_vegas')} -> {_text(main, 'exp3_sgpq_vegas')} kbit/s (test: the "
        "95 % intervals separate).", None,
        {f"{name}_kbps": _get(main, name) for name in ("exp3_tahoe", "exp3_sgpq_tahoe",
                                                       "exp3_vegas", "exp3_sgpq_vegas")}))
    first = _get(main, "exp3_modvegas_first", "a0_kbps")
    second = _get(main, "exp3_modvegas_second", "a1_kbps")
    plain = (_get(main, "exp3_vegas", "a0_kbps"), _get(main, "exp3_vegas", "a1_kbps"))
    both, forward = _get(main, "exp3_modvegas_both"), _get(main, "exp2_vegas")
    out.append(judge(
        "Modified Vegas solves the RTT ambiguity on whichever A flow runs it",
        above(first, plain[0]) & above(second, plain[1])
        & (above(forward, both) is not Decision.HOLDS),
        f"modified flow alone: a0 {first.text()} (plain {plain[0].mean:.0f}), a1 "
        f"{second.text()} (plain {plain[1].mean:.0f}) kbit/s; both modified: {both.text()} "
        f"against Vegas under Exp 2's forward congestion {forward.text()} (test: each "
        "modified flow clearly above the plain one in its place, and the runs do not put "
        f"Exp 2's rate above both modified flows': §II's yardstick); Exp 1: "
        f"{g['exp1_vegas']:.0f}.", None,
        {"a0_modified_kbps": first, "a0_plain_kbps": plain[0], "a1_modified_kbps": second,
         "a1_plain_kbps": plain[1], "both_modified_kbps": both, "exp2_vegas_kbps": forward,
         "exp1_vegas_kbps": g["exp1_vegas"]}))
    return out


def _table(summary: pd.DataFrame) -> pd.DataFrame:
    main = summary[summary["axis"] == ""]
    return estimates_frame(main, [m for m in METRICS if m in main]).reset_index(drop=True)


def _published_table(summary: pd.DataFrame) -> pd.DataFrame:
    main = net_rows(summary)
    pairs = {"Exp 1": ("exp1_tahoe", "exp1_vegas"), "Exp 2": ("exp2_tahoe", "exp2_vegas"),
             "Exp 3": ("exp3_tahoe", "exp3_vegas"),
             "Exp 3 + SGPQ": ("exp3_sgpq_tahoe", "exp3_sgpq_vegas"),
             "Exp 3 + Modified Vegas": ("exp3_modvegas_first", "exp3_modvegas_both")}
    rows = []
    for _, pub in PUBLISHED.iterrows():
        a, b = pairs[pub["experiment"]]
        rows.append({**pub.to_dict(),
                     "tcpn A flows kbit/s (net)": f"{_text(main, a)}; {_text(main, b)}"})
    return pd.DataFrame(rows)


def draw_series(data: pd.DataFrame) -> Any:
    """Per experiment: the observed flows' 0.2 s rates and their mean (top), cumulative
    kbytes (bottom); net lens, run 0."""
    from matplotlib.figure import Figure as MplFigure

    names = list(dict.fromkeys(data["experiment"]))
    columns = min(4, max(1, len(names)))
    rows = math.ceil(len(names) / columns)
    fig = MplFigure(figsize=(3.3 * columns, 4.2 * rows), layout="constrained")
    panels = fig.subplots(2 * rows, columns, squeeze=False)
    for k, name in enumerate(names):
        part = data[data["experiment"] == name]
        top, bottom = panels[2 * (k // columns)][k % columns], \
            panels[2 * (k // columns) + 1][k % columns]
        for marker, (fid, flow_rows) in zip("*+", part.groupby("flow", sort=True),
                                            strict=False):
            top.plot(flow_rows["time_s"], flow_rows["kbps"], marker=marker, linestyle="none",
                     markersize=3, label=str(fid))
            bottom.plot(flow_rows["time_s"], flow_rows["cumulative_kbytes"], label=str(fid))
        mean = part.groupby("time_s")["kbps"].mean()
        top.plot(mean.index, mean.to_numpy(), "o", markersize=2, color="k", label="mean")
        top.set_title(name, fontsize=8)
        top.set_ylabel("kbit/s per 0.2 s", fontsize=7)
        bottom.set_ylabel("cumulative kbytes", fontsize=7)
        bottom.set_xlabel("time (s)", fontsize=7)
        top.grid(alpha=0.3)
        bottom.grid(alpha=0.3)
    for k in range(len(names), rows * columns):
        panels[2 * (k // columns)][k % columns].set_visible(False)
        panels[2 * (k // columns) + 1][k % columns].set_visible(False)
    panels[0][0].legend(fontsize=6)
    return fig


def sections(data: StudyData) -> list[Section]:
    """The report's sections, from ``data`` alone."""
    runs = data.tables["runs"]
    summary = summarise(runs, [m for m in METRICS if m in runs])
    return study_sections(
        "s1", data, [Paragraph((__doc__ or "").strip()), Paragraph(scenario_mapping.__doc__ or "")],
        "the study's figures beside tcpn", [
            Table("s1_published", _published_table(summary),
                  caption="What the study reads off its figures (§II-III) and tcpn's "
                          "observed-flow kbit/s (mean [95 % CI], n)"),
            Table("s1_experiments", _table(summary),
                  caption="Every experiment and lens: each observed flow's kbit/s from "
                          f"{WINDOW_START_S:g} s, their mean, the CV of the 0.2 s rate, "
                          "the competing and reverse groups' kbit/s"),
            Figure("s1_series", net_series(data.tables["series"]), draw_series,
                   caption="Observed flows' throughput per 0.2 s (markers * +, mean o) and "
                           "cumulative bytes (net lens, run 0), as the study's Figs 3-13"),
            Paragraph("The ns3 lens runs every experiment: tcpn's reproduction runs Vegas "
                      "on Reno's recovery (a choice: neither the study nor ns-2's Vegas "
                      "recovers as Reno does, see above), which ns-3.44 lacks, so its "
                      "sockets are tcpn's (Reno recovery, the net model's Vegas law; "
                      "docs/validation.md); the fluid lens models one shared bottleneck "
                      "queue and no Tahoe, while S1's reverse flows load the other "
                      "direction's queue.")],
        axes_blocks("s1", AXES, summary, "a_kbps", "A flows' mean kbit/s"),
        judge_lenses(summary, verdicts),
        lens_blocks("s1", data, summary, "a_kbps", "A flows' mean kbit/s"))


STUDY = ModuleStudy("s1", "S1: TCP Vegas's RTT ambiguity under reverse-path congestion",
                    run, sections)
