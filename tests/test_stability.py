"""HMTG linearisation: operating point, design numbers, and the nonlinear model agreeing.

The nonlinear check derives its test points from the linear analysis (a quarter and four
times the critical RED weight, and a weight in the second stable band the analysis
finds), then asks the MGT fluid model, started 10 % off the operating point, whether the
perturbation dies out (stable) or keeps its amplitude (a limit cycle).
"""

from __future__ import annotations

import numpy as np
import pytest

from tcpn.errors import InputError
from tcpn.solvers.fluid.bottleneck import Bottleneck, FlowClass, simulate_bottleneck
from tcpn.solvers.stability import (
    analyse_red,
    critical_queue_weight,
    hmtg_red_design,
    operating_point,
)

RED = {"min_th_pkts": 50, "max_th_pkts": 550, "max_p": 0.1}


@pytest.fixture(scope="module")
def op():
    return operating_point(60, 3750, 0.2, acks_per_packet=1, **RED)


@pytest.mark.parametrize(("red", "q0", "r0", "w0", "p0"), [
    ((50, 550, 0.1), 99.85, 0.22663, 14.164, 0.009969),
    ((150, 700, 0.1), 194.40, 0.25184, 15.740, 0.008073),
    ((20, 60, 0.1), 24.80, 0.20661, 12.913, 0.011994),
])
def test_operating_points_match_analytics_table(red, q0, r0, w0, p0):
    point = operating_point(60, 3750, 0.2, *red, acks_per_packet=1)
    # to the digits the table gives
    assert point.queue_pkts == pytest.approx(q0, abs=0.006)
    assert point.rtt_s == pytest.approx(r0, abs=6e-6)
    assert point.window_pkts == pytest.approx(w0, abs=6e-4)
    assert point.drop_prob == pytest.approx(p0, abs=6e-7)


def test_hmtg_design_example():
    design = hmtg_red_design(60, 0.246, 3750, filter_rate_rad_s=0.005)
    assert design.crossover_rad_s == pytest.approx(0.0529, abs=1e-4)
    assert design.dc_gain_per_slope == pytest.approx(54518, rel=1e-4)
    assert design.max_slope == pytest.approx(1.95e-4, rel=5e-3)
    assert design.max_slope >= 1.86e-4  # the paper's L_red satisfies the bound
    assert design.queue_weight == pytest.approx(1.33e-6, rel=5e-3)


def test_recommended_design_is_stable_where_it_promises(op):
    design = hmtg_red_design(60, op.rtt_s, 3750)
    slope = 0.1 / 500  # RED 50/550/0.1 has L_red = 2e-4
    report = analyse_red(op, design.queue_weight)
    assert report.stable
    assert report.hmtg_sufficient == (slope <= design.max_slope)


def test_simplified_and_full_loops_agree_away_from_the_boundary(op):
    for weight in (1e-6, 1e-5, 1e-3):
        report = analyse_red(op, weight)
        assert report.stable == report.simplified_stable
        assert (report.phase_margin_deg > 0) == report.stable


def _amplitudes(weight: float, op, horizon_s: float) -> tuple[float, float]:
    run = simulate_bottleneck(
        [FlowClass(flows=op.flows, prop_rtt_s=op.prop_delay_s, acks_per_packet=1,
                   slow_start=False, initial_cwnd_pkts=1.1 * op.window_pkts)],
        Bottleneck(capacity_pps=op.capacity_pps, aqm="red", queue_weight=weight,
                   initial_queue_pkts=op.queue_pkts, **RED),
        horizon_s=horizon_s)
    q, t = run.queue_pkts, run.t
    tenth = horizon_s / 10
    first = np.ptp(q[t < 2 * tenth])
    last = np.ptp(q[t >= horizon_s - 2 * tenth])
    return float(first), float(last)


def test_nonlinear_model_oscillates_exactly_where_the_linear_analysis_says(op):
    critical = critical_queue_weight(op)
    assert 1e-4 < critical < 3e-4  # analytics.md: 1e-4 settles, 0.002 oscillates
    cases = [(critical / 4, 200.0), (critical * 4, 100.0), (0.05, 150.0)]
    for weight, horizon in cases:
        stable = analyse_red(op, weight).stable
        first, last = _amplitudes(weight, op, horizon)
        if stable:
            assert last < 0.01 * first, (weight, first, last)
        else:
            assert last > 0.5 * first and last > 0.1 * op.queue_pkts, (weight, first, last)
    assert [analyse_red(op, w).stable for w, _ in cases] == [True, False, True]


def test_bad_inputs_are_named():
    with pytest.raises(InputError, match="flows >= 1"):
        operating_point(0, 3750, 0.2, **RED)
    with pytest.raises(InputError, match="no operating point with p < 1"):
        operating_point(2000, 3750, 0.2, **RED)
    with pytest.raises(InputError, match="queue_weight"):
        analyse_red(operating_point(60, 3750, 0.2, **RED), 1.5)
