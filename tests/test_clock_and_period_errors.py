"""Issue #6's bad input, each a clear error naming the field and the line: receiver clocks
that would stop, run backwards or never be defined (skew, offsets, drawn offsets), an
adaptive-Vegas weight outside (0, 1], a TCP-L report period that is zero, negative or
never ends, an SGPQ threshold below the pure-ACK size. Then the same checks where a
component is built without a scenario."""

from __future__ import annotations

import pytest

from tcpn.errors import InputError
from tcpn.models.components.congestion.tcp_l import reporter_net
from tcpn.models.scenario import ScenarioError, parse_scenario

BASE = """links:
  - {a: A, b: B, rate_bps: 1.0e6, delay_s: 0.01%s}
flows:
  - {src: A, dst: B, variant: %s}
tcp: {timestamps: %s}
horizon_s: 5
"""


def error(link: str, flow: str, timestamps: bool = True) -> str:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(BASE % (link, flow, str(timestamps).lower()), "bad.yaml")
    return str(err.value)


@pytest.mark.parametrize(("flow", "expected"), [
    ("receiver_clock_skew: -1.0", "flows[0].receiver_clock_skew: skew -1 makes the receiver "
     "clock (1 + skew) * t + offset stop or run backwards: it must be > -1"),
    ("receiver_clock_skew: -2.5", "flows[0].receiver_clock_skew: skew -2.5 makes"),
    ("receiver_clock_skew: .nan", "flows[0].receiver_clock_skew: Input should be a finite number"),
    ("receiver_clock_skew: .inf", "flows[0].receiver_clock_skew: Input should be a finite number"),
    ("receiver_clock_offset_s: -3", "flows[0].receiver_clock_offset_s: must be >= 0, got -3"),
    ("receiver_clock_offset_s: .nan",
     "flows[0].receiver_clock_offset_s: Input should be a finite number"),
    ("receiver_clock_offset_s: .inf",
     "flows[0].receiver_clock_offset_s: Input should be a finite number"),
    ("receiver_clock_offset_s: {dist: uniform, low_s: -1, high_s: 2}",
     "flows[0].receiver_clock_offset_s.low_s: Input should be greater than or equal to 0"),
    ("receiver_clock_offset_s: {dist: uniform, low_s: 2, high_s: 1}",
     "flows[0].receiver_clock_offset_s.high_s: high_s (1) is below low_s (2)"),
    ("receiver_clock_offset_s: {dist: exponential, mean_s: .inf}",
     "flows[0].receiver_clock_offset_s.mean_s: Input should be a finite number"),
    ("receiver_clock_offset_s: {dist: exponential, mean_s: 1, offset_s: -0.5}",
     "flows[0].receiver_clock_offset_s.offset_s: Input should be greater than or equal to 0"),
])
def test_receiver_clocks_that_stop_or_run_backwards(flow, expected):
    assert f"bad.yaml:4: {expected}" in error("", f"modified_vegas, {flow}")


def test_a_slow_but_forward_clock_is_fine():
    s = parse_scenario(BASE % ("", "modified_vegas, receiver_clock_skew: -0.5, "
                               "receiver_clock_offset_s: 2.5", "true"), "ok.yaml")
    assert s.flows[0].receiver_clock_skew == -0.5


@pytest.mark.parametrize("weight", ["0", "-0.1", "1.5", ".nan", ".inf"])
def test_adaptive_vegas_weight_outside_zero_one(weight):
    assert "bad.yaml:4: flows[0].params.weight: Input should be" in error(
        "", f"adaptive_vegas, params: {{weight: {weight}}}")


@pytest.mark.parametrize(("period", "expected"), [
    ("0", "greater than 0"), ("-1", "greater than 0"), (".nan", "a finite number"),
    (".inf", "a finite number")])
def test_tcp_l_report_period(period, expected):
    assert f"bad.yaml:4: flows[0].params.report_interval_s: Input should be {expected}" in \
        error("", f"tcp_l, params: {{report_interval_s: {period}}}")


@pytest.mark.parametrize(("timestamps", "threshold", "ack_bytes"), [
    (True, 51, 52), (False, 39, 40)])
def test_sgpq_threshold_below_the_pure_ack(timestamps, threshold, ack_bytes):
    # a pure ACK is 40 bytes of IP + TCP header, 52 with the timestamp option
    text = error(f", queue: {{kind: sgpq, threshold_bytes: {threshold}}}", "reno", timestamps)
    assert (f"bad.yaml:2: links[0].queue.threshold_bytes: threshold_bytes ({threshold}) is "
            f"below the {ack_bytes}-byte pure ACK") in text


def test_sgpq_threshold_equal_to_the_pure_ack_is_fine():
    parse_scenario(BASE % (", queue: {kind: sgpq, threshold_bytes: 40}", "reno", "false"),
                   "ok.yaml")


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"interval_s": 0.0}, "report_interval_s must be a finite number > 0, got 0.0"),
    ({"interval_s": float("inf")}, "report_interval_s must be a finite number > 0, got inf"),
    ({"interval_s": 1.0, "clock_rate": 0.0}, "clock rate 0.0 (1 + skew) stops or reverses"),
    ({"interval_s": 1.0, "clock_rate": -0.5}, "clock rate -0.5 (1 + skew) stops or reverses"),
])
def test_reporter_component_refuses_what_the_schema_refuses(kwargs, expected):
    with pytest.raises(InputError, match="tcp-l reporter: " + expected.replace("(", r"\(")
                       .replace(")", r"\)").replace("+", r"\+")):
        reporter_net(**kwargs)
