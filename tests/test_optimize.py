"""Threshold search on the fluid lens, its closed-form companions, and bad requests."""

from __future__ import annotations

import math

import pytest

from tcpn.errors import InputError
from tcpn.models.scenario import dumbbell
from tcpn.solvers.closed_forms import ecn
from tcpn.solvers.fluid_lens import scenario_model
from tcpn.solvers.optimize import objective_value, optimize, with_parameter


@pytest.fixture(scope="module")
def ecn_dumbbell():
    return dumbbell(pairs=2, horizon_s=20.0, tcp={"ecn": True},
                    queue={"kind": "threshold_ecn", "limit": 200, "k": 50})


def test_goodput_search_finds_the_no_underflow_threshold(ecn_dumbbell):
    # Reno halves on a mark: the link stays busy iff K >= C RTT (1 - 1/2)/(1/2) = one BDP,
    # so goodput rises with K up to about one BDP and is flat (full) above it.
    result = optimize(ecn_dumbbell, "ecn_k", bounds=(2, 190), lens="fluid", points=7,
                      refine=False)
    values, objective, half = result.curve()
    assert (half == 0).all()  # a deterministic lens: one run per point
    model = scenario_model(ecn_dumbbell, ecn_dumbbell.concrete_flows())
    bdp = ecn.bdp_buffer_pkts(model.bottleneck.capacity_pps, model.classes[0].prop_rtt_s)
    assert result.predictions["aimd_no_underflow_k"] == pytest.approx(bdp)
    full = objective[values >= 1.2 * bdp]
    starved = objective[values <= 0.2 * bdp]
    assert full.min() > starved.max()
    assert result.best.value >= 0.5 * bdp


def test_power_objective_prefers_a_small_queue(ecn_dumbbell):
    result = optimize(ecn_dumbbell, "ecn_k", bounds=(2, 190), lens="fluid", objective="power",
                      points=5, refine=False)
    _, objective, _ = result.curve()
    assert objective[-1] < objective.max()  # a full buffer of delay costs power
    assert result.indistinguishable == (result.best.value, result.best.value)


def test_bad_requests_are_named(ecn_dumbbell):
    with pytest.raises(InputError, match="unknown parameter"):
        with_parameter(ecn_dumbbell, "magic", 1)
    with pytest.raises(InputError, match="no red"):
        optimize(ecn_dumbbell, "red_max_p", bounds=(0.01, 0.5))
    with pytest.raises(InputError, match="low < high"):
        optimize(ecn_dumbbell, "ecn_k", bounds=(10, 5))
    summary = {"aggregate": {"goodput_bps": 1e6, "loss_ratio": 0.0},
               "flows": {"f0": {"rtt_mean_s": 0.1}}}
    assert objective_value(summary, "power") == pytest.approx(math.log(1e6) + math.log(10))
    with pytest.raises(InputError, match="unknown objective"):
        objective_value(summary, "fun")  # type: ignore[arg-type]
