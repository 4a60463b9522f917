"""Threshold optimisation: search the value of one scenario parameter that maximises an objective.

:func:`optimize` evaluates the scenario through any lens (:func:`tcpn.lenses.evaluate`)
on a grid over the parameter's bounds, then refines around the best grid point: with
bounded Brent (SciPy) for a deterministic lens (``fluid``), with a finer grid for a
stochastic one (``net``, ``ns3``), where every point is ``replications`` independent runs
and carries a 95 % confidence interval; the optimum is then reported with the set of
values whose intervals overlap the best one's (what the noise cannot tell apart) and the
range of near-optimal values (within a relative tolerance of the best: on a flat
objective, the plateau rather than one arbitrary point of it).

Parameters (:data:`PARAMETERS`): ``ecn_k`` (threshold ECN K, packets), ``red_min_th``,
``red_max_th``, ``red_max_p``, ``red_q_weight``, ``tb_depth_bytes``, ``tb_limit``
(token-bucket depth and queue), ``vegas_alpha``, ``vegas_beta`` (all Vegas flows, whole
segments), ``vegas_weight`` (adaptive Vegas EWMA weight); those counted in whole packets,
bytes or segments (``ecn_k``, ``tb_depth_bytes``, ``tb_limit``, ``vegas_alpha``,
``vegas_beta``) are searched on whole values only. Objectives, from the common
summary: ``goodput`` (aggregate, bit/s), ``delay`` (minus the flows' mean RTT), ``power``
(``log goodput - w log RTT``; w = 1 is Kleinrock's power); for sized transfers (study S2)
``completion`` (minus the mean time to deliver them), ``segment_delay`` (minus the mean
per-segment delay) and ``transfer_power`` (``-log completion - w log segment delay``: the
power of a transfer, its rate over its delay); a transfer that does not complete makes
the point infeasible. ``loss_cap`` makes points whose aggregate loss ratio exceeds it
infeasible.

The closed-form predictions for the parameter (e.g. for K: one BDP for Reno, C RTT/7 for
DCTCP, B - N, B - BDP) are computed from the scenario's fluid model and printed beside
the searched optimum.

>>> from tcpn.models.scenario import dumbbell
>>> s = dumbbell(pairs=2, horizon_s=20.0, tcp={"ecn": True},
...              queue={"kind": "threshold_ecn", "limit": 200, "k": 50})
>>> r = optimize(s, "ecn_k", bounds=(5, 190), lens="fluid", points=5, refine=False)
>>> sorted(r.predictions)
['aimd_no_underflow_k', 'ca_overshoot_k', 'dctcp_min_k', 'slow_start_overshoot_k']
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from scipy.optimize import minimize_scalar

from tcpn.errors import InputError
from tcpn.models.scenario import Scenario, validate_scenario

__all__ = ["PARAMETERS", "TRANSFER_OBJECTIVES", "OptimizationResult", "Point",
           "closed_form_predictions", "evaluate_point", "objective_value", "optimize",
           "study_threshold_inputs", "study_threshold_predictions", "with_parameter"]

Objective = Literal["goodput", "delay", "power", "completion", "segment_delay",
                    "transfer_power"]
#: The objectives computed from the sized flows' ``completion_s`` and
#: ``segment_delay_mean_s``.
TRANSFER_OBJECTIVES = ("completion", "segment_delay", "transfer_power")

#: parameter -> (queue kind or flow variants it edits, field, integer-valued)
PARAMETERS: dict[str, tuple[str, str, bool]] = {
    "ecn_k": ("threshold_ecn", "k", True),
    "red_min_th": ("red", "min_th", False),
    "red_max_th": ("red", "max_th", False),
    "red_max_p": ("red", "max_p", False),
    "red_q_weight": ("red", "q_weight", False),
    "tb_depth_bytes": ("token_bucket", "depth_bytes", True),
    "tb_limit": ("token_bucket", "limit", True),
    "vegas_alpha": ("vegas", "alpha", True),
    "vegas_beta": ("vegas", "beta", True),
    "vegas_weight": ("adaptive_vegas", "weight", False),
}
_VEGAS = {"vegas": ("vegas", "modified_vegas", "adaptive_vegas"),
          "adaptive_vegas": ("adaptive_vegas",)}
STOCHASTIC_LENSES = ("net", "ns3")


def with_parameter(scenario: Scenario, parameter: str, value: float,
                   queue: str | None = None) -> Scenario:
    """A copy of ``scenario`` with ``parameter`` set to ``value`` (on ``queue``, or on every
    queue/flow it applies to).

    >>> from tcpn.models.scenario import dumbbell
    >>> s = dumbbell(pairs=1, horizon_s=5.0, queue={"kind": "threshold_ecn", "k": 20})
    >>> with_parameter(s, "ecn_k", 35).direction("R1->R2").queue.k
    35.0
    """
    if parameter not in PARAMETERS:
        raise InputError(f"unknown parameter {parameter!r}; parameters: {', '.join(PARAMETERS)}")
    target, name, integer = PARAMETERS[parameter]
    number: float | int = round(value) if integer else float(value)
    data = scenario.model_dump(mode="json")
    hits = 0
    if target in _VEGAS:
        for flow in data["flows"]:
            if flow["variant"] in _VEGAS[target]:
                flow["params"] = {**(flow.get("params") or {}), name: number}
                flow["params"].pop("variant", None)
                hits += 1
    else:
        for link in data["links"]:
            for side, (a, b) in (("ab", (link["a"], link["b"])), ("ba", (link["b"], link["a"]))):
                disc = link[side]["queue"]
                if disc["kind"] == target and queue in (None, f"{a}->{b}"):
                    disc[name] = number
                    hits += 1
    if not hits:
        where = f" on queue {queue}" if queue else ""
        raise InputError(f"parameter {parameter}: the scenario has no {target}{where} to set")
    for flow in data["flows"]:
        if isinstance(flow.get("params"), dict):
            flow["params"].pop("variant", None)
    return validate_scenario(data)


def objective_value(summary: dict[str, Any], objective: Objective = "goodput",
                    delay_weight: float = 1.0, loss_cap: float | None = None) -> float:
    """The objective (to maximise) of one run's common summary; ``-inf`` if infeasible.

    >>> objective_value({"aggregate": {"goodput_bps": 8e6, "loss_ratio": 0.02},
    ...                  "flows": {"f0": {"rtt_mean_s": 0.05}}}, "goodput", loss_cap=0.01)
    -inf
    >>> transfer = {"aggregate": {"goodput_bps": 1e3, "loss_ratio": 0.0},
    ...             "flows": {"f0": {"completion_s": 4.0, "segment_delay_mean_s": 0.5}}}
    >>> objective_value(transfer, "completion"), round(objective_value(transfer,
    ...                                                                "transfer_power"), 4)
    (-4.0, -0.6931)
    """
    absent = summary.get("absent", {})
    needed = ("completion_s", "segment_delay_mean_s") if objective in TRANSFER_OBJECTIVES \
        else ("goodput_bps",) if objective == "goodput" else ("goodput_bps", "rtt_mean_s") \
        if objective == "power" else ("rtt_mean_s",)
    for metric in (*needed, *(("loss_ratio",) if loss_cap is not None else ())):
        if metric in absent:
            raise InputError(f"objective {objective!r} needs {metric}, which the runs could "
                             f"not compute: {absent[metric]}")
    aggregate = summary["aggregate"]
    loss = aggregate.get("loss_ratio") or 0.0
    if loss_cap is not None and loss > loss_cap:
        return -math.inf
    if objective in TRANSFER_OBJECTIVES:
        return _transfer_objective(summary, objective, delay_weight)
    goodput = float(aggregate["goodput_bps"]) if objective in ("goodput", "power") else math.nan
    rtts = [f["rtt_mean_s"] for f in summary["flows"].values() if f.get("rtt_mean_s")]
    rtt = float(np.mean(rtts)) if rtts else math.nan
    if objective == "goodput":
        return goodput
    if objective == "delay":
        return -rtt
    if objective == "power":
        return math.log(max(goodput, 1e-300)) - delay_weight * math.log(rtt)
    raise InputError(f"unknown objective {objective!r}; objectives: goodput, delay, power, "
                     f"{', '.join(TRANSFER_OBJECTIVES)}")


def _transfer_objective(summary: dict[str, Any], objective: str, delay_weight: float) -> float:
    """Transfer objectives over the sized flows (those with a mean segment delay)."""
    sized = [f for f in summary["flows"].values() if f.get("segment_delay_mean_s") is not None]
    if not sized or any(f.get("completion_s") is None for f in sized):
        return -math.inf  # nothing delivered, or a transfer did not complete
    completion = float(np.mean([f["completion_s"] for f in sized]))
    delay = float(np.mean([f["segment_delay_mean_s"] for f in sized]))
    if objective == "completion":
        return -completion
    if objective == "segment_delay":
        return -delay
    return -math.log(completion) - delay_weight * math.log(delay)


@dataclass(frozen=True)
class Point:
    """The objective at one parameter value: mean and 95 % half-width (0: deterministic)."""

    value: float
    objective: float
    half_width: float
    runs: int


@dataclass
class OptimizationResult:
    """The searched optimum, the objective curve, and the closed-form predictions.

    ``indistinguishable`` is the range of searched values whose 95 % interval overlaps the
    best one's (what the runs cannot tell apart); ``near_optimal`` the contiguous range of
    searched values around the best whose objective is within ``tolerance`` (relative)
    of the best or indistinguishable from it: on a flat objective, the whole plateau.
    ``integer`` says the parameter takes whole values only.
    """

    parameter: str
    objective: str
    lens: str
    points: list[Point]
    best: Point
    indistinguishable: tuple[float, float]
    predictions: dict[str, float] = field(default_factory=dict)
    near_optimal: tuple[float, float] = (math.nan, math.nan)
    tolerance: float = 0.01
    integer: bool = False

    def curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Parameter values, objective means and half-widths, sorted by value."""
        pts = sorted(self.points, key=lambda p: p.value)
        return (np.array([p.value for p in pts]), np.array([p.objective for p in pts]),
                np.array([p.half_width for p in pts]))

    def format_value(self, value: float) -> str:
        """A parameter value as the parameter is: whole numbers for an integer one.

        >>> OptimizationResult("ecn_k", "goodput", "fluid", [], Point(8.0, 1.0, 0.0, 1),
        ...                    (8.0, 8.0), integer=True).format_value(8.0)
        '8'
        """
        return f"{value:.0f}" if self.integer else f"{value:.6g}"


def evaluate_point(scenario: Scenario, parameter: str, value: float, lens: str = "fluid",
                   objective: Objective = "goodput", delay_weight: float = 1.0,
                   loss_cap: float | None = None, replications: int = 5,
                   queue: str | None = None, seed: int | None = None,
                   lens_options: dict[str, Any] | None = None,
                   store: str | Path | None = None) -> Point:
    """The objective at ``parameter = value`` (rounded for an integer parameter): one run on
    a deterministic lens, ``replications`` runs with a 95 % interval on a stochastic one.
    Every evaluation of :func:`optimize` goes through here; with ``store`` the runs come
    from (and go to) that campaign store."""
    from tcpn.lenses import evaluate

    edited = with_parameter(scenario, parameter, value, queue)
    value = float(round(value)) if PARAMETERS[parameter][2] else float(value)
    if store is not None:
        from tcpn.experiments.sweep import CampaignStore, run_summaries
        summaries = run_summaries(edited, CampaignStore(store), lens, seed, replications
                                  if lens in STOCHASTIC_LENSES else 1, lens_options)
    elif lens in STOCHASTIC_LENSES:
        summaries = evaluate(edited, lens=lens, seed=seed, replications=replications,
                             **(lens_options or {})).summaries
    else:
        summaries = [evaluate(edited, lens=lens, seed=seed, **(lens_options or {})).summary]
    values = [objective_value(s, objective, delay_weight, loss_cap) for s in summaries]
    mean, half = _mean_ci(values)
    return Point(value, mean, half, len(values))


def _integer_grid(low: float, high: float, points: int) -> list[float]:
    """At most ``points`` whole values spread over [low, high], both ends included.

    >>> _integer_grid(2, 10, 5), _integer_grid(0.5, 3.5, 9)
    ([2.0, 4.0, 6.0, 8.0, 10.0], [1.0, 2.0, 3.0])
    """
    first, last = math.ceil(low), math.floor(high)
    return sorted({float(v) for v in np.round(np.linspace(first, last, points))
                   if first <= v <= last})


def optimize(scenario: Scenario, parameter: str, bounds: tuple[float, float],
             lens: str = "fluid", objective: Objective = "goodput", delay_weight: float = 1.0,
             loss_cap: float | None = None, points: int = 9, replications: int = 5,
             refine: bool = True, queue: str | None = None, log_scale: bool = False,
             seed: int | None = None, tolerance: float = 0.01,
             store: str | Path | None = None, **lens_options: Any) -> OptimizationResult:
    """Maximise ``objective`` over ``parameter`` in ``bounds`` (see the module docstring).

    An integer parameter (:data:`PARAMETERS`: ``ecn_k``, ``tb_limit``...) is searched on
    whole values only. ``tolerance`` (relative) defines :attr:`OptimizationResult.near_optimal`.
    With ``store`` (a campaign store directory, as ``tcpn sweep``'s) every run is looked up
    there first and stored when computed: a search run again, or cut short and resumed,
    computes nothing that was stored.
    """
    lo, hi = map(float, bounds)
    if not lo < hi or (log_scale and lo <= 0):
        raise InputError(f"optimize: bounds must satisfy low < high (and low > 0 on a log "
                         f"scale), got {bounds}")
    if points < 3:
        raise InputError(f"optimize: at least 3 grid points are needed (got {points})")
    if not 0.0 <= tolerance < 1.0:
        raise InputError(f"optimize: tolerance must be in [0, 1), got {tolerance!r}")
    with_parameter(scenario, parameter, lo, queue)  # fail fast on a parameter with no target
    integer = PARAMETERS[parameter][2]
    if integer and math.floor(hi) < math.ceil(lo):
        raise InputError(f"optimize: {parameter} takes whole values and [{lo:g}, {hi:g}] "
                         "holds none")
    if objective in TRANSFER_OBJECTIVES and all(f.bytes is None for f in scenario.flows):
        raise InputError(f"optimize: objective {objective} needs a sized transfer (a flow "
                         "with bytes); every flow of the scenario is bulk")
    cache: dict[float, Point] = {}

    def measure(value: float) -> Point:
        value = float(round(value)) if integer else float(value)
        if value not in cache:
            cache[value] = evaluate_point(scenario, parameter, value, lens, objective,
                                          delay_weight, loss_cap, replications, queue, seed,
                                          lens_options, store)
        return cache[value]

    if integer:
        grid = _integer_grid(lo, hi, points)
    else:
        grid = list(np.geomspace(lo, hi, points) if log_scale else np.linspace(lo, hi, points))
    for v in grid:
        measure(float(v))
    best = max(cache.values(), key=lambda p: p.objective)
    if refine:
        ordered = sorted(cache)
        k = ordered.index(best.value)
        left, right = ordered[max(k - 1, 0)], ordered[min(k + 1, len(ordered) - 1)]
        if integer:
            for v in _integer_grid(left, right, points):
                measure(v)
        elif lens in STOCHASTIC_LENSES:
            for v in np.linspace(left, right, points):
                measure(float(v))
        else:
            _brent(lambda v: -measure(v).objective, left, right)
        best = max(cache.values(), key=lambda p: p.objective)
    ordered_points = sorted(cache.values(), key=lambda p: p.value)
    tied = [p.value for p in ordered_points
            if p.objective + p.half_width >= best.objective - best.half_width]
    return OptimizationResult(parameter, objective, lens, ordered_points, best,
                              (min(tied), max(tied)),
                              closed_form_predictions(scenario, parameter, queue),
                              near_optimal=_near_optimal(ordered_points, best, tolerance),
                              tolerance=tolerance, integer=integer)


def _near_optimal(ordered: list[Point], best: Point, tolerance: float) -> tuple[float, float]:
    """The contiguous range of values around ``best`` that are within ``tolerance`` of it
    (or whose interval overlaps its own).

    >>> pts = [Point(v, o, 0.0, 1) for v, o in ((1, 5.0), (2, 9.95), (3, 10.0), (4, 9.0))]
    >>> _near_optimal(pts, pts[2], 0.01)
    (2, 3)
    """
    if not math.isfinite(best.objective):
        return (best.value, best.value)
    floor = best.objective - tolerance * abs(best.objective)

    def near(p: Point) -> bool:
        return p.objective >= floor or p.objective + p.half_width >= (
            best.objective - best.half_width)

    k = ordered.index(best)
    low = high = k
    while low > 0 and near(ordered[low - 1]):
        low -= 1
    while high < len(ordered) - 1 and near(ordered[high + 1]):
        high += 1
    return (ordered[low].value, ordered[high].value)


def _brent(func: Callable[[float], float], left: float, right: float) -> None:
    if right > left:
        minimize_scalar(func, bounds=(left, right), method="bounded",
                        options={"xatol": 1e-3 * (right - left), "maxiter": 20})


def _mean_ci(values: Sequence[float]) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < len(values):
        return -math.inf, 0.0
    if len(values) == 1:
        return float(values[0]), 0.0
    from tcpn.lenses.replications import mean_ci
    return mean_ci(list(values))


def closed_form_predictions(scenario: Scenario, parameter: str,
                            queue: str | None = None) -> dict[str, float]:
    """What the closed forms say the parameter should be, from the scenario's fluid model
    (and, for ``ecn_k`` with a paced flow, study S2's equation 1 from the scenario itself).

    Empty when the scenario is outside the fluid model and not a paced S2-like transfer
    (the search still runs).
    """
    from tcpn.lenses.fluid import scenario_model
    from tcpn.solvers.closed_forms import ecn, token_bucket

    study = study_threshold_predictions(scenario, queue) if parameter == "ecn_k" else {}
    try:
        model = scenario_model(scenario, scenario.concrete_flows())
    except InputError:
        return study
    link = model.bottleneck
    rtt = min(c.prop_rtt_s for c in model.classes)
    flows = sum(c.flows for c in model.classes)
    bdp = float(ecn.bdp_buffer_pkts(link.capacity_pps, rtt))
    out: dict[str, float] = {}
    if parameter == "ecn_k":
        out["aimd_no_underflow_k"] = float(ecn.aimd_no_underflow_threshold_pkts(
            link.capacity_pps, rtt, 0.5))
        out["dctcp_min_k"] = float(ecn.dctcp_min_threshold_pkts(link.capacity_pps, rtt))
        out["ca_overshoot_k"] = link.buffer_pkts - flows
        # slow start doubles per RTT: the queue grows by one BDP during the feedback delay
        out["slow_start_overshoot_k"] = link.buffer_pkts - bdp
        out.update(study)
    elif parameter.startswith("red_"):
        from tcpn.solvers.stability import hmtg_red_design
        design = hmtg_red_design(flows, rtt + link.buffer_pkts / link.capacity_pps,
                                 link.capacity_pps)
        out["hmtg_q_weight"] = design.queue_weight
        out["hmtg_max_slope_per_pkt"] = design.max_slope
    elif parameter == "tb_depth_bytes":
        for i, c in enumerate(model.classes):
            if c.limiter is not None:
                depth = token_bucket.policer_min_depth_pkts(c.limiter.rate_pps, c.prop_rtt_s)
                out[f"policer_min_depth_bytes[{model.limiter_queue[i]}]"] = float(
                    depth * model.packet_bytes)
    elif parameter.startswith("vegas_"):
        out["vegas_queue_per_unit_alpha_pkts"] = float(sum(
            c.flows for c in model.classes if c.variant == "vegas"))
    return out


def study_threshold_inputs(scenario: Scenario, queue: str | None = None,
                           ) -> dict[str, float] | None:
    """Study S2's equation-1 inputs read off the scenario: ``buffer_pkts`` (the threshold
    queue's limit), ``rtt_s`` (the unloaded round trip of the first paced flow through it),
    ``arrival_gap_s`` (TBA: its application's gap between segments) and
    ``service_time_s`` (TPS: a data packet's serialisation out of that queue).

    None without a packet-unit threshold-ECN queue crossed by a paced flow.

    >>> from tcpn.models.scenario import validate_scenario
    >>> s = validate_scenario({"links": [{"a": "S", "b": "D", "rate_bps": 4e5, "delay_s": 0.05,
    ...     "l2_header_bytes": 0, "queue": {"kind": "threshold_ecn", "limit": 80, "k": 50}}],
    ...     "tcp": {"segment_size_bytes": 460, "timestamps": False}, "horizon_s": 10,
    ...     "flows": [{"src": "S", "dst": "D", "variant": "ecn_newreno", "bytes": 46000,
    ...                "app_rate_bps": 736000}]})
    >>> {k: round(v, 6) for k, v in study_threshold_inputs(s).items()}
    {'buffer_pkts': 80.0, 'rtt_s': 0.1108, 'arrival_gap_s': 0.005, 'service_time_s': 0.01}
    """
    for flow in scenario.concrete_flows():
        if flow.app_rate_bps is None:
            continue
        for q in flow.data_queues:
            disc = scenario.direction(q).queue
            if getattr(disc, "kind", "") != "threshold_ecn" or disc.unit != "packets" or \
                    queue not in (None, q):
                continue
            a, b = q.split("->")
            link = scenario.link_between(a, b)
            rtt = 0.0
            for queues, size in ((flow.data_queues, flow.tcp.data_packet_bytes),
                                 (flow.ack_queues, flow.tcp.ack_packet_bytes)):
                for hop in queues:
                    hop_link = scenario.link_between(*hop.split("->"))
                    rtt += hop_link.delay_s + (size + hop_link.l2_header_bytes) * 8 / \
                        hop_link.rate_bps
            return {"buffer_pkts": float(disc.limit), "rtt_s": rtt,
                    "arrival_gap_s": flow.tcp.segment_size_bytes * 8 / flow.app_rate_bps,
                    "service_time_s": (flow.tcp.data_packet_bytes + link.l2_header_bytes) * 8
                    / link.rate_bps}
    return None


def study_threshold_predictions(scenario: Scenario, queue: str | None = None,
                                ) -> dict[str, float]:
    """Equation 1 of study S2 (``study_eq1_k``) and its self-consistent form
    (``self_consistent_k``, RTT at the threshold) for the scenario's paced flow; empty when
    :func:`study_threshold_inputs` finds none or the formula refuses (K < 0)."""
    from tcpn.solvers.closed_forms import ecn
    from tcpn.solvers.closed_forms.formula import AssumptionError

    inputs = study_threshold_inputs(scenario, queue)
    if inputs is None:
        return {}
    out: dict[str, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TBA >= TPS: reported as K >= B, the degenerate case
        with contextlib.suppress(AssumptionError):
            out["study_eq1_k"] = float(ecn.study_threshold_pkts(**inputs))
        with contextlib.suppress(AssumptionError):
            out["self_consistent_k"] = float(ecn.self_consistent_threshold_pkts(
                inputs["buffer_pkts"], inputs["rtt_s"], inputs["arrival_gap_s"],
                inputs["service_time_s"]))
    return out
