"""The fluid lens: a scenario mapped onto the bottleneck fluid model, run, written as a trace.

:class:`FluidLens` implements the lens protocol of :mod:`tcpn.lenses.base`.
:func:`scenario_model` maps a scenario onto :mod:`tcpn.solvers.fluid.bottleneck` (BBR
flows onto :mod:`tcpn.solvers.fluid.bbr`, which writes the same run):

- the **bottleneck** is the slowest link direction every flow's data crosses (one shared
  bottleneck; token-bucket directions are limiters, not candidates); its capacity in
  packets/s is ``rate_bps / ((data packet + L2 header) * 8)``; drop-tail, RED (gentle,
  ECN; with ``red_count_correction`` ns-3's count-based spacing scales p by 2/3 with
  ``wait``, by 2 without, analytics.md 10) or threshold ECN (K);
- each flow's **propagation RTT** is the sum of the delays and per-hop serialisation of a
  data packet out and an ACK back;
- a **token bucket** on a flow's data path is that flow's limiter (policer: no queue;
  shaper: its ``limit``), rate and depth in data packets;
- **rate error models** on the data path become an independent packet error rate;
- identical flows (variant, parameters, RTT, start, stop, TCP settings, limiter, errors)
  form one class of N flows; each BBR flow is a class of its own, its PROBE_BW phases
  drawn from the run's lens stream (``bbr_quanta``: ns-3's inflight targets or the
  paper's).

What the model cannot express is refused by :meth:`FluidLens.check`, each problem naming
the field: several bottlenecks, ACKs queueing behind data, ACK-path or scripted losses,
small-get-priority queues, sized or paced transfers, Tahoe, adaptive Vegas, Westwood+,
TCP-L, mixed segment sizes; BBR beside flows of another law, through RED or a threshold
marker, or behind a token bucket. Modified Vegas is Vegas here: without ACK queueing their
RTT estimates coincide. What the model has no state for it ignores, without refusing:
``tcp.sack_after_timeout`` (no SACK scoreboard, no timeouts: every loss is sent again
once, whatever a timeout would resend).

The trace holds aggregated rows (``seq = -1``, fractional counts) every ``sample_s``:
``send`` (new data, = delivered), ``retransmit`` (= lost, every loss is sent again),
``recv``/``deliver`` when the data reaches the receiver (after the data path's delay and
the queueing delay at the sending time) and ``ack`` one RTT after the sending time,
``drop`` and ``mark`` with their place; ``cwnd_bytes`` and
``rtt_s`` samples; ``sample``, ``enqueue``, ``drop`` and ``mark`` rows for the bottleneck.

>>> from tcpn.lenses import evaluate
>>> from tcpn.models.scenario import dumbbell
>>> result = evaluate(dumbbell(pairs=2, horizon_s=20.0), lens="fluid")
>>> round(result.summary["aggregate"]["goodput_bps"] / 1e6, 1)  # of a 10 Mbit/s bottleneck
9.0
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from tcpn.errors import InputError
from tcpn.models.registered_variants import lens_problems, variant_spec
from tcpn.models.scenario import ConcreteFlow, RateErrors, Red, Scenario, ThresholdEcn
from tcpn.models.scenario import TokenBucket as ScenarioBucket
from tcpn.solvers.fluid.bbr import NS3_QUANTA_PKTS, BbrSettings, probe_bw_phase, simulate_bbr
from tcpn.solvers.fluid.bottleneck import (
    Bottleneck,
    BottleneckRun,
    FlowClass,
    TokenBucket,
    simulate_bottleneck,
)

if TYPE_CHECKING:
    from tcpn.lenses.base import Progress, Run
    from tcpn.models.traces import TraceWriter

__all__ = ["FluidLens", "FluidModel", "fluid_problems", "scenario_model"]

@dataclass(frozen=True)
class FluidModel:
    """A scenario as the fluid model sees it."""

    classes: tuple[FlowClass, ...]
    bottleneck: Bottleneck
    bottleneck_queue: str
    flow_class: dict[str, int]          # flow id -> class index
    packet_bytes: int                   # IP size of a data packet
    limiter_queue: dict[int, str]       # class index -> token-bucket queue id
    error_queue: dict[int, str]         # class index -> link direction losing packets
    data_path_delay_s: dict[str, float] = dataclasses.field(default_factory=dict)
    # flow id -> propagation and serialisation of a data packet from sender to receiver


def _capacity_pps(scenario: Scenario, queue_id: str, packet_bytes: int) -> float:
    a, b = queue_id.split("->")
    link = scenario.link_between(a, b)
    return link.rate_bps / ((packet_bytes + link.l2_header_bytes) * 8)


def _serialisation_s(scenario: Scenario, queues: Sequence[str], size: int) -> float:
    total = 0.0
    for q in queues:
        a, b = q.split("->")
        link = scenario.link_between(a, b)
        total += link.delay_s + (size + link.l2_header_bytes) * 8 / link.rate_bps
    return total


def fluid_problems(scenario: Scenario, flows: Sequence[ConcreteFlow]) -> list[str]:
    """Every feature of ``scenario`` the fluid lens cannot model, each naming its field."""
    problems = [f"{feature} is not modelled by the fluid lens"
                for feature in scenario.net_only_features()]
    sizes = {f.tcp.data_packet_bytes for f in flows}
    if len(sizes) > 1:
        problems.append(f"flows: data packets of different sizes {sorted(sizes)} B (the fluid "
                        "model counts one packet size)")
    for f in flows:
        where = f"flow {f.id}"
        # the variant's fluid law, or why it has none (the registry's answer)
        problems += [f"{where}: {p}" for p in lens_problems("fluid", f, f.tcp)]
        if f.bytes is not None:
            problems.append(f"{where}: bytes: sized transfers are not modelled by the fluid "
                            "lens (bulk flows only)")
        if f.app_rate_bps is not None:
            problems.append(f"{where}: app_rate_bps: paced applications are not modelled")
        for q in f.data_queues + f.ack_queues:
            direction = scenario.direction(q)
            if direction.queue.kind == "sgpq":
                problems.append(f"queue {q}: sgpq (small-get-priority) is not modelled by the "
                                "fluid lens")
            errors = direction.errors
            if errors is not None and errors.kind == "list":
                problems.append(f"queue {q}: errors: scripted (list) losses have no fluid "
                                "meaning")
        for q in f.ack_queues:
            errors = scenario.direction(q).errors
            if isinstance(errors, RateErrors) and errors.rate > 0:
                problems.append(f"queue {q}: errors on the ACK path of flow {f.id} (ACK loss "
                                "is not modelled)")
    if not problems and flows:
        try:
            queue = _bottleneck_queue(scenario, flows)
        except InputError as exc:
            problems.append(str(exc))
        else:
            problems += _bbr_problems(scenario, flows, queue)
    return problems


def _law_kind(f: ConcreteFlow) -> str | None:
    law = variant_spec(f.variant).fluid_law(f.params)
    return None if law is None else law.kind


def _bbr_problems(scenario: Scenario, flows: Sequence[ConcreteFlow], queue: str) -> list[str]:
    """What the BBR fluid model (:mod:`tcpn.solvers.fluid.bbr`) cannot run of these flows:
    it has BBR flows only, through a drop-tail queue, without token buckets."""
    bbr = [f.id for f in flows if _law_kind(f) == "bbr"]
    if not bbr:
        return []
    problems = []
    others = [f.id for f in flows if f.id not in bbr]
    if others:
        problems.append(f"flows: BBR flows ({', '.join(bbr)}) share the bottleneck with "
                        f"flows of another fluid law ({', '.join(others)}): the fluid lens's "
                        "BBR model (tcpn.solvers.fluid.bbr) runs BBR flows only")
    disc = scenario.direction(queue).queue
    if isinstance(disc, (Red, ThresholdEcn)):
        problems.append(f"queue {queue}: {disc.kind}: the fluid lens's BBR model has a "
                        "drop-tail bottleneck only")
    for f in flows:
        buckets = [q for q in f.data_queues
                   if isinstance(scenario.direction(q).queue, ScenarioBucket)]
        if f.id in bbr and buckets:
            problems.append(f"queue {buckets[0]}: token bucket on BBR flow {f.id}'s path: the "
                            "fluid lens's BBR model has no limiter")
    return problems


def _bottleneck_queue(scenario: Scenario, flows: Sequence[ConcreteFlow]) -> str:
    size = flows[0].tcp.data_packet_bytes
    common: set[str] | None = None
    for f in flows:
        candidates = [q for q in f.data_queues
                      if not isinstance(scenario.direction(q).queue, ScenarioBucket)]
        caps = {q: _capacity_pps(scenario, q, size) for q in candidates}
        slowest = min(caps.values())
        mine = {q for q, c in caps.items() if c <= slowest * (1 + 1e-9)}
        common = mine if common is None else common & mine
    if not common:
        raise InputError("links: the flows have different bottlenecks; the fluid lens models "
                         "one shared bottleneck queue")
    queue = next(q for q in flows[0].data_queues if q in common)
    for f in flows:
        if queue in f.ack_queues:
            raise InputError(f"flow {f.id}: its ACKs queue behind data at the bottleneck {queue}"
                             " (reverse traffic); the fluid lens does not model ACK queueing")
    return queue


def _bottleneck(scenario: Scenario, queue_id: str, packet_bytes: int,
                red_count_correction: bool) -> Bottleneck:
    disc = scenario.direction(queue_id).queue
    cap = _capacity_pps(scenario, queue_id, packet_bytes)
    per_unit = 1.0 if disc.unit == "packets" else 1.0 / packet_bytes
    limit = disc.limit * per_unit
    if isinstance(disc, Red):
        scale = (2 / 3 if disc.wait else 2.0) if red_count_correction else 1.0
        return Bottleneck(capacity_pps=cap, buffer_pkts=limit, aqm="red",
                          min_th_pkts=disc.min_th * per_unit, max_th_pkts=disc.max_th * per_unit,
                          max_p=disc.max_p, queue_weight=min(disc.q_weight, 1 - 1e-12),
                          gentle=disc.gentle, ecn=disc.ecn, red_signal_scale=scale)
    if isinstance(disc, ThresholdEcn):
        return Bottleneck(capacity_pps=cap, buffer_pkts=limit, aqm="threshold",
                          threshold_pkts=disc.k * per_unit, ecn=True)
    return Bottleneck(capacity_pps=cap, buffer_pkts=limit)


def scenario_model(scenario: Scenario, flows: Sequence[ConcreteFlow],
                   reno_model: Literal["mgt", "sawtooth"] = "mgt", timeouts: bool = False,
                   red_count_correction: bool = True,
                   rng: np.random.Generator | None = None,
                   bbr_quanta: Literal["paper", "ns3"] = "ns3") -> FluidModel:
    """Map ``scenario`` (with its drawn ``flows``) onto the fluid bottleneck model.

    Each BBR flow is a class of its own, the first phase of each of its PROBE_BW episodes
    (one per ``rtt_window_s`` of the horizon, and two) drawn from ``rng`` by ns-3's rule
    (:func:`~tcpn.solvers.fluid.bbr.probe_bw_phase`; default: a generator seeded 0), in
    the order of ``flows``; its inflight targets are ns-3.44's (``bbr_quanta="ns3"``,
    the default: ``gain x BDP`` and 3 segments, 2 more in the 1.25 phase,
    :data:`~tcpn.solvers.fluid.bbr.NS3_QUANTA_PKTS`, as the scenario's TCP is ns-3's)
    or the paper's (``"paper"``: ``gain x BDP``).

    >>> from tcpn.models.scenario import dumbbell
    >>> s = dumbbell(pairs=2, horizon_s=10.0)
    >>> m = scenario_model(s, s.concrete_flows(1))
    >>> m.bottleneck_queue, [c.flows for c in m.classes], round(m.bottleneck.capacity_pps)
    ('R1->R2', [1, 1], 2119)
    """
    problems = fluid_problems(scenario, flows)
    if problems:
        raise InputError("; ".join(problems))
    size = flows[0].tcp.data_packet_bytes
    queue = _bottleneck_queue(scenario, flows)
    link = _bottleneck(scenario, queue, size, red_count_correction)
    groups: dict[tuple[Any, ...], list[ConcreteFlow]] = defaultdict(list)
    specs: dict[tuple[Any, ...], tuple[FlowClass, str | None, str | None]] = {}
    phases = np.random.default_rng(0) if rng is None else rng
    for f in flows:
        spec, bucket_q, error_q = _flow_class(scenario, f, reno_model, timeouts, size, phases,
                                              bbr_quanta)
        # BBR flows are not merged: each runs its own gain cycle.
        key = (dataclasses.astuple(spec), bucket_q, error_q,
               f.id if spec.variant == "bbr" else None)
        groups[key].append(f)
        specs[key] = (spec, bucket_q, error_q)
    classes: list[FlowClass] = []
    flow_class: dict[str, int] = {}
    limiter_queue: dict[int, str] = {}
    error_queue: dict[int, str] = {}
    buckets_seen: dict[str, int] = {}
    for key, members in groups.items():
        spec, bucket_q, error_q = specs[key]
        index = len(classes)
        classes.append(dataclasses.replace(spec, flows=len(members), name=members[0].id
                                           if len(members) == 1 else f"{members[0].group}*"))
        for f in members:
            flow_class[f.id] = index
        if bucket_q is not None:
            if bucket_q in buckets_seen:
                raise InputError(f"queue {bucket_q}: a token bucket shared by flows that differ "
                                 "(start, variant or RTT) is not modelled by the fluid lens")
            buckets_seen[bucket_q] = index
            limiter_queue[index] = bucket_q
        if error_q is not None:
            error_queue[index] = error_q
    data_path_delay_s = {f.id: _serialisation_s(scenario, f.data_queues, size) for f in flows}
    return FluidModel(tuple(classes), link, queue, flow_class, size, limiter_queue, error_queue,
                      data_path_delay_s)


def _flow_class(scenario: Scenario, f: ConcreteFlow, reno_model: str, timeouts: bool,
                size: int, phases: np.random.Generator, bbr_quanta: str
                ) -> tuple[FlowClass, str | None, str | None]:
    tcp = f.tcp
    rtt = (_serialisation_s(scenario, f.data_queues, size)
           + _serialisation_s(scenario, f.ack_queues, tcp.ack_packet_bytes))
    bucket: TokenBucket | None = None
    bucket_q: str | None = None
    keep = 1.0
    error_q: str | None = None
    for q in f.data_queues:
        direction = scenario.direction(q)
        disc = direction.queue
        if isinstance(disc, ScenarioBucket):
            bucket_q = q
            bucket = TokenBucket(rate_pps=disc.rate_bps / (size * 8),
                                 depth_pkts=disc.depth_bytes / size,
                                 queue_pkts=0.0 if disc.mode == "policer" else
                                 float(disc.limit if disc.unit == "packets"
                                       else disc.limit / size))
        if isinstance(direction.errors, RateErrors) and direction.errors.rate > 0:
            keep *= 1 - direction.errors.packet_error_rate(size)
            error_q = error_q or q
    window = min(tcp.rcv_buf_bytes, tcp.snd_buf_bytes) / tcp.segment_size_bytes
    ssthresh = math.inf if tcp.initial_ssthresh_segments is None \
        else float(tcp.initial_ssthresh_segments)
    spec = FlowClass(prop_rtt_s=rtt, acks_per_packet=float(tcp.delack_count), ecn=f.ecn,
                     initial_cwnd_pkts=float(tcp.initial_cwnd_segments),
                     initial_ssthresh_pkts=ssthresh, max_window_pkts=max(window, 1.0),
                     limiter=bucket, packet_error_rate=1 - keep, start_s=f.start_s,
                     stop_s=f.stop_s, timeouts=timeouts,
                     variant="reno" if reno_model == "mgt" else "reno_sawtooth")
    law = variant_spec(f.variant).fluid_law(f.params)
    if law is not None and law.kind == "vegas":
        spec = dataclasses.replace(
            spec, variant="vegas", timeouts=False, vegas_alpha_pkts=law.alpha_pkts,
            vegas_beta_pkts=law.beta_pkts, vegas_gamma_pkts=law.gamma_pkts,
            decrease_factor=law.decrease_factor)
    elif law is not None and law.kind == "bbr":
        spec = dataclasses.replace(
            spec, variant="bbr", timeouts=False, slow_start=False, bbr=BbrSettings(
                high_gain=law.high_gain, bw_window_rounds=law.bw_window_rounds,
                rtt_window_s=law.rtt_window_s, probe_rtt_duration_s=law.probe_rtt_duration_s,
                phases=tuple(probe_bw_phase(float(u)) for u in phases.random(
                    2 + math.ceil(scenario.horizon_s / law.rtt_window_s))),
                **_quanta(bbr_quanta)))
    return spec, bucket_q, error_q


def _quanta(bbr_quanta: str) -> dict[str, float]:
    quanta, probe = NS3_QUANTA_PKTS if bbr_quanta == "ns3" else (0.0, 0.0)
    return {"quanta_pkts": quanta, "probe_quanta_pkts": probe}


class FluidLens:
    """The fluid (delay-differential) lens; options are those of :func:`scenario_model`
    plus the solver's ``step_s``, ``check_convergence``, ``max_steps`` and the trace's
    ``sample_s`` (default: 10 ms, or the solver step if coarser)."""

    name: ClassVar[str] = "fluid"

    def __init__(self, reno_model: Literal["mgt", "sawtooth"] = "mgt", timeouts: bool = False,
                 red_count_correction: bool = True, step_s: float | None = None,
                 check_convergence: bool = True, max_steps: int = 20_000_000,
                 sample_s: float = 0.01, bbr_quanta: Literal["paper", "ns3"] = "ns3"):
        if reno_model not in ("mgt", "sawtooth"):
            raise InputError(f"fluid lens: reno_model must be 'mgt' or 'sawtooth' "
                             f"(got {reno_model!r})")
        if bbr_quanta not in ("paper", "ns3"):
            raise InputError(f"fluid lens: bbr_quanta must be 'paper' or 'ns3' "
                             f"(got {bbr_quanta!r})")
        if not sample_s > 0:
            raise InputError(f"fluid lens: sample_s must be > 0 (got {sample_s})")
        self.reno_model: Literal["mgt", "sawtooth"] = reno_model
        self.timeouts = timeouts
        self.red_count_correction = red_count_correction
        self.step_s = step_s
        self.check_convergence = check_convergence
        self.max_steps = max_steps
        self.sample_s = sample_s
        self.bbr_quanta: Literal["paper", "ns3"] = bbr_quanta

    def check(self, scenario: Scenario) -> None:
        """Raise :class:`InputError` naming every feature the fluid model cannot express."""
        problems = fluid_problems(scenario, scenario.concrete_flows())
        if problems:
            raise InputError("; ".join(problems))

    def model(self, scenario: Scenario, flows: Sequence[ConcreteFlow],
              rng: np.random.Generator | None = None) -> FluidModel:
        """The fluid model of ``scenario`` with this lens's options (``rng``: the BBR
        flows' first phases, :func:`scenario_model`)."""
        return scenario_model(scenario, flows, self.reno_model, self.timeouts,
                              self.red_count_correction, rng, self.bbr_quanta)

    def run(self, run: Run, trace: TraceWriter, progress: Progress) -> dict[str, Any]:
        """Integrate the model over the horizon and write aggregated trace rows."""
        scenario = run.scenario
        model = self.model(scenario, run.flows, run.rng())
        bbr = model.classes[0].variant == "bbr"  # BBR classes come alone (fluid_problems)
        simulate = simulate_bbr if bbr else simulate_bottleneck
        fluid = simulate(model.classes, model.bottleneck, scenario.horizon_s, self.step_s,
                         self.check_convergence, scenario.measure.warmup_s, self.max_steps)
        progress(scenario.horizon_s)
        _write_trace(scenario, run.flows, model, fluid, trace, self.sample_s)
        report = fluid.convergence
        return {
            "engine": "tcpn.solvers.fluid.bbr" if bbr else "tcpn.solvers.fluid.bottleneck",
            "reno_model": self.reno_model, "timeouts": self.timeouts,
            "red_count_correction": self.red_count_correction, "bbr_quanta": self.bbr_quanta,
            "bottleneck_queue": model.bottleneck_queue,
            "bottleneck": dataclasses.asdict(model.bottleneck),
            "classes": [dataclasses.asdict(c) for c in model.classes],
            "step_s": float(fluid.t[1] - fluid.t[0]),
            "convergence": None if report is None else {
                "step_s": report.step_s, "half_step_s": report.half_step_s,
                "changes": report.changes, "tolerance": report.tolerance},
            "solve_s": fluid.wall_time_s,
            "fluid_summary": fluid.summary,
        }


def _cumulative(t: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Running trapezoid integral of ``rate`` (rows are times) from 0."""
    widths = np.diff(t).reshape(-1, *([1] * (rate.ndim - 1)))
    steps = 0.5 * (rate[1:] + rate[:-1]) * widths
    return np.concatenate([np.zeros((1, *rate.shape[1:])), np.cumsum(steps, axis=0)])


def _counts_on_arrival(cumulative: np.ndarray, arrival_s: np.ndarray,
                       samples: np.ndarray) -> np.ndarray:
    """Packets arriving in each sample interval, from the running count sent by each grid
    time and the (FIFO, so non-decreasing) time at which what was sent then arrives."""
    arrived = np.interp(samples, np.maximum.accumulate(arrival_s), cumulative, left=0.0)
    return np.diff(arrived)


def _write_trace(scenario: Scenario, flows: Sequence[ConcreteFlow], model: FluidModel,
                 fluid: BottleneckRun, trace: TraceWriter, sample_s: float) -> None:
    t = fluid.t
    step = max(sample_s, float(t[1] - t[0]))
    samples = np.append(np.arange(0.0, scenario.horizon_s, step), scenario.horizon_s)
    index = np.minimum(np.searchsorted(t, samples - 1e-12), t.size - 1)
    per = np.array([c.packet_error_rate for c in model.classes])
    # Where packets are lost: the link error model (delivered-before-error x PER), the
    # token bucket, and the bottleneck queue (the rest).
    random = fluid.goodput_pps * per / (1 - per)
    queue_loss = np.maximum(fluid.loss_pps - random - fluid.limiter_drop_pps, 0.0)

    def counts(rate: np.ndarray) -> np.ndarray:
        return np.diff(_cumulative(t, rate)[index], axis=0)

    good_sent = _cumulative(t, fluid.goodput_pps)

    delta = {"good": counts(fluid.goodput_pps), "loss": counts(fluid.loss_pps),
             "mark": counts(fluid.mark_pps), "random": counts(random),
             "limiter": counts(fluid.limiter_drop_pps), "queue": counts(queue_loss)}
    times = samples[1:]
    for f in flows:
        i = model.flow_class[f.id]
        mss = f.tcp.segment_size_bytes
        active = (times > f.start_s) & (times - step < f.stop_s)
        # A packet sent at t reaches the receiver after the data path's delay and the
        # queueing delay it found (the RTT's part above the propagation RTT); its ACK is
        # back at t + RTT(t). Counting deliveries at send time would let the goodput of a
        # short window exceed the bottleneck while slow start fills the queue.
        queueing_s = fluid.rtt_s[:, i] - model.classes[i].prop_rtt_s
        at_receiver = t + model.data_path_delay_s[f.id] + queueing_s
        flow_delta = {source: rows_[:, i] for source, rows_ in delta.items()}
        flow_delta["received"] = _counts_on_arrival(good_sent[:, i], at_receiver, samples)
        flow_delta["acked"] = _counts_on_arrival(good_sent[:, i], t + fluid.rtt_s[:, i],
                                                 samples)
        rows: list[tuple[str, str, str]] = [
            ("send", "good", ""), ("retransmit", "loss", ""), ("recv", "received", ""),
            ("deliver", "received", ""), ("ack", "acked", ""),
            ("drop", "queue", model.bottleneck_queue), ("mark", "mark", model.bottleneck_queue)]
        if i in model.limiter_queue:
            rows.append(("drop", "limiter", model.limiter_queue[i]))
        if i in model.error_queue:
            rows.append(("drop", "random", model.error_queue[i]))
        arrived = times > f.start_s  # what is in flight at the stop still arrives
        for event, source, where in rows:
            when = arrived if source in ("received", "acked") else active
            count = flow_delta[source][when]
            keep = count > 0
            if keep.any():
                trace.extend("flow_events", time_s=times[when][keep], flow=f.id, event=event,
                             bytes=count[keep] * mss, count=count[keep], where=where)
        on = (samples >= f.start_s) & (samples <= f.stop_s)
        if scenario.trace.cwnd:
            trace.extend("flow_series", time_s=samples[on], flow=f.id, var="cwnd_bytes",
                         value=fluid.cwnd_pkts[index[on], i] * mss)
        if scenario.trace.rtt:
            trace.extend("flow_series", time_s=samples[on], flow=f.id, var="rtt_s",
                         value=fluid.rtt_s[index[on], i])
    traced = set(scenario.traced_queues())
    size = model.packet_bytes
    if model.bottleneck_queue in traced:
        qid = model.bottleneck_queue
        q = fluid.queue_pkts[index]
        trace.extend("queue_events", time_s=samples, queue=qid, event="sample",
                     length_packets=q, length_bytes=q * size, count=0.0)
        drops = counts(fluid.queue_drop_pps)
        for event, count in (("drop", drops), ("mark", counts(fluid.queue_mark_pps)),
                             ("enqueue", np.maximum(counts(fluid.queue_inflow_pps) - drops,
                                                    0.0))):
            keep = count > 0
            if keep.any():
                trace.extend("queue_events", time_s=times[keep], queue=qid, event=event,
                             length_packets=q[1:][keep], length_bytes=q[1:][keep] * size,
                             count=count[keep], bytes=count[keep] * size)
    for i, qid in model.limiter_queue.items():
        if qid in traced:
            lq = fluid.limiter_queue_pkts[index, i]
            trace.extend("queue_events", time_s=samples, queue=qid, event="sample",
                         length_packets=lq, length_bytes=lq * size, count=0.0)
