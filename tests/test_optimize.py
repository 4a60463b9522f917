"""Threshold search on the fluid lens, its closed-form companions, and bad requests."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.experiments.optimize import objective_value, optimize, with_parameter
from tcpn.lenses.fluid import scenario_model
from tcpn.models.scenario import dumbbell
from tcpn.solvers.closed_forms import ecn


def tcpn(*args: str | Path):
    return run_tcpn(*args, columns=60)


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


def test_integer_parameters_are_searched_on_whole_values_and_a_plateau_is_a_range(
        ecn_dumbbell):
    # the example: "ecn_k = 8.13737" (K counts packets); goodput is flat above one
    # BDP, so the answer is the plateau, not one arbitrary point of it
    result = optimize(ecn_dumbbell, "ecn_k", bounds=(2.5, 190), lens="fluid", points=7)
    values, objective, _ = result.curve()
    assert result.integer and all(v == round(v) for v in values) and values.min() == 3
    assert result.format_value(result.best.value) == f"{result.best.value:.0f}"
    low, high = result.near_optimal
    inside = (values >= low) & (values <= high)
    assert (objective[inside] >= 0.99 * result.best.objective).all()
    assert high == 190 and low < result.best.value  # the plateau reaches the top bound
    below = values[values < low]
    assert objective[values == below.max()][0] < 0.99 * result.best.objective
    model = scenario_model(ecn_dumbbell, ecn_dumbbell.concrete_flows())
    bdp = ecn.bdp_buffer_pkts(model.bottleneck.capacity_pps, model.classes[0].prop_rtt_s)
    assert low <= 2 * bdp  # the plateau starts near one BDP, not at the best point
    tight = optimize(ecn_dumbbell, "ecn_k", bounds=(2.5, 190), lens="fluid", points=7,
                     tolerance=0.0)
    assert tight.near_optimal == (tight.best.value, tight.best.value)
    with pytest.raises(InputError, match="whole values"):
        optimize(ecn_dumbbell, "ecn_k", bounds=(2.2, 2.8))


def test_cli_writes_the_search_and_prints_whole_values(ecn_dumbbell, tmp_path):
    path = tmp_path / "ecn.yaml"
    path.write_text(dumbbell(pairs=2, horizon_s=5.0, tcp={"ecn": True}, queue={
        "kind": "threshold_ecn", "limit": 200, "k": 50}).to_yaml())
    out = tmp_path / "search"
    done = tcpn("optimize", path, "--parameter", "ecn_k", "--low", "2", "--high", "190",
                "--points", "3", "-o", out)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^optimum: ecn_k = \d+$", done.stdout, re.M), done.stdout
    assert re.search(r"^near-optimal \(within 1% of the best goodput\): \d+ to \d+$",
                     done.stdout, re.M)
    frame = pd.read_csv(out / "search.csv")
    record = json.loads((out / "search.json").read_text())
    assert frame["value"].tolist() == [p["value"] for p in record["points"]]
    assert {2.0, 96.0, 190.0} <= set(frame["value"])  # the grid, then the refinement
    assert (frame["value"] == frame["value"].round()).all()
    assert record["best"] in frame["value"].tolist() and record["integer"] is True
    assert (out / "search.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = tcpn("optimize", path, "--parameter", "ecn_k", "--low", "2", "--high", "190",
                 "--points", "3", "-o", out)
    assert again.returncode == 3 and "pass overwrite" in again.stderr
    for option, value in (("--parameter", "magic"), ("--objective", "fun"),
                          ("--lens", "foo")):
        args = {"--parameter": "ecn_k", "--objective": "goodput", "--lens": "fluid",
                option: value}
        usage = tcpn("optimize", path, "--low", "2", "--high", "9", "-o", tmp_path / "u",
                     *[x for pair in args.items() for x in pair])
        assert usage.returncode == 2, (option, usage.stderr)
        said = " ".join(re.sub(r"(?<=\s)[│|]|[│|](?=\s|$)", " ", usage.stderr).split())
        assert f"'{value}' is not one of" in said  # however the box wrapped
