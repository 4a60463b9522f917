"""Which connections a scenario treats alike (:mod:`tcpn.experiments.exchangeable`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tcpn.experiments.exchangeable import exchangeable_flows
from tcpn.models.scenario import load_scenario, validate_scenario

REFERENCE = Path(__file__).resolve().parent.parent / "scenarios" / "reference"


def _dumbbell(**changes: Any) -> dict[str, Any]:
    """Two pairs through R1 -> R2, every flow drawn from the same start distribution."""
    start = {"dist": "uniform", "low_s": 0.0, "high_s": 1.0}
    spec: dict[str, Any] = {
        "name": "pairs",
        "links": [{"a": "S0", "b": "R1", "rate_bps": 1e8, "delay_s": 0.001},
                  {"a": "S1", "b": "R1", "rate_bps": 1e8, "delay_s": 0.001},
                  {"a": "R1", "b": "R2", "rate_bps": 1e7, "delay_s": 0.02},
                  {"a": "R2", "b": "D0", "rate_bps": 1e8, "delay_s": 0.001},
                  {"a": "R2", "b": "D1", "rate_bps": 1e8, "delay_s": 0.001}],
        "flows": [{"id": "a", "src": "S0", "dst": "D0", "variant": "newreno", "start_s": start},
                  {"id": "b", "src": "S1", "dst": "D1", "variant": "newreno", "start_s": start}],
        "horizon_s": 5.0}
    for key, value in changes.items():
        spec[key] = value(spec[key]) if callable(value) else value
    return spec


def _edit(index: int, **fields: Any) -> Any:
    def change(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**item, **fields} if k == index else item for k, item in enumerate(items)]
    return change


def test_two_pairs_alike_are_exchangeable() -> None:
    assert exchangeable_flows(validate_scenario(_dumbbell())) == [("a", "b")]


@pytest.mark.parametrize("changes", [
    {"flows": _edit(1, variant="reno")},                           # another variant
    {"flows": _edit(1, start_s=0.3)},                              # a start of its own
    {"flows": _edit(1, bytes=100_000)},                            # a finite transfer
    {"flows": lambda flows: [{**f, "variant": "vegas", "params": {"alpha": 1 + k}}
                             for k, f in enumerate(flows)]},      # other parameters
    {"flows": _edit(1, tcp={"min_rto_s": 0.2})},                   # its own TCP
    {"links": _edit(1, delay_s=0.002)},                            # a longer access link
    {"links": _edit(4, queue={"kind": "drop_tail", "limit": 5})},  # its own last queue
])
def test_a_difference_between_the_two_breaks_it(changes: dict[str, Any]) -> None:
    assert exchangeable_flows(validate_scenario(_dumbbell(**changes))) == []


def test_other_traffic_on_one_flows_own_link_breaks_it() -> None:
    # a third flow from S0 shares a's access link only: swapping a and b would move it
    third = {"id": "c", "src": "S0", "dst": "R1", "variant": "newreno"}
    scenario = validate_scenario(_dumbbell(flows=lambda flows: [*flows, third]))
    assert exchangeable_flows(scenario) == []
    # traffic on the shared link only meets both alike
    shared = {"id": "c", "src": "R1", "dst": "R2", "variant": "newreno"}
    scenario = validate_scenario(_dumbbell(flows=lambda flows: [*flows, shared]))
    assert exchangeable_flows(scenario) == [("a", "b")]


def test_connections_of_one_entry_start_together_or_in_order() -> None:
    together = _dumbbell(flows=lambda flows: [{**flows[0], "count": 3}])
    assert exchangeable_flows(validate_scenario(together)) == [("a.0", "a.1", "a.2")]
    in_order = _dumbbell(flows=lambda flows: [{**flows[0], "count": 3, "gap_s": 0.1}])
    assert exchangeable_flows(validate_scenario(in_order)) == []


def test_the_reference_pairs() -> None:
    assert exchangeable_flows(load_scenario(REFERENCE / "cubic_2flows_100m.yaml")) == [
        ("f0", "f1")]
    # study S1's experiment 1 gives its two flows paths of different delays
    assert exchangeable_flows(load_scenario(REFERENCE / "s1_exp1_tahoe.yaml")) == []
