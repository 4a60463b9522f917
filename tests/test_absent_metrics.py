"""A metric that cannot be computed is absent with its reason, never 0 (issue 27).

With ``trace: {flow_events: false}`` the net lens reported goodput 0.000 for every flow
(the fluid lens 6.4 Mbit/s on the same scenario). Now every lens's trace lacks the flow
events, and every metric computed from them is ``None`` in the summary with the reason,
an error when asked for directly, and "n/a" with the reason in the tables.
"""

from __future__ import annotations

import pytest
from cli_process import run_tcpn as _tcpn

from tcpn.errors import InputError
from tcpn.lenses import evaluate
from tcpn.models import metrics
from tcpn.models.scenario import Scenario, dumbbell
from tcpn.models.traces import ScenarioResult

REASON = "trace.flow_events is off"


def _scenario(**trace: bool) -> Scenario:
    base = dumbbell(pairs=2, horizon_s=2.0)
    return Scenario.model_validate({**base.model_dump(), "trace": trace})


@pytest.mark.parametrize("lens", ["net", "fluid"])
def test_metrics_from_flow_events_are_absent_with_the_reason(lens):
    result = evaluate(_scenario(flow_events=False), lens)
    summary = result.summary
    assert set(summary["absent"]) == set(metrics.NEEDS["flow_events"])
    assert set(summary["absent"].values()) == {REASON}
    for flow in summary["flows"].values():
        assert all(flow[m] is None for m in metrics.NEEDS["flow_events"] if m in flow), flow
        assert flow["rtt_mean_s"] is not None and flow["cwnd_mean_bytes"] is not None
    assert all(v is None for v in summary["aggregate"].values())
    assert len(result.trace.flow_events) == 0  # whichever lens wrote them
    with pytest.raises(InputError, match=REASON):
        metrics.goodput_bps(result.trace)
    with pytest.raises(InputError, match=REASON):
        metrics.loss_ratio(result.trace)


@pytest.mark.parametrize("lens", ["net", "fluid"])
def test_the_same_run_with_flow_events_has_them(lens):
    summary = evaluate(_scenario(), lens).summary
    assert "absent" not in summary
    assert summary["aggregate"]["goodput_bps"] > 1e6


def test_rtt_and_cwnd_off_are_absent_with_their_reasons():
    summary = evaluate(_scenario(rtt=False, cwnd=False), "net").summary
    assert summary["absent"] == {"cwnd_mean_bytes": "trace.cwnd is off",
                                 "rtt_mean_s": "trace.rtt is off",
                                 "rtt_p95_s": "trace.rtt is off",
                                 "rtt_min_s": "trace.rtt is off"}
    assert summary["aggregate"]["goodput_bps"] > 1e6


def test_a_saved_result_keeps_what_is_absent(tmp_path):
    evaluate(_scenario(flow_events=False), "net", output=tmp_path / "r")
    loaded = ScenarioResult.load(tmp_path / "r")
    assert loaded.summary["absent"]["goodput_bps"] == REASON
    with pytest.raises(InputError, match=REASON):
        metrics.goodput_bps(loaded.trace)


def test_tcpn_run_and_tcpn_table_print_n_a_with_the_reason(tmp_path):
    path = tmp_path / "off.yaml"
    path.write_text(_scenario(flow_events=False).to_yaml())
    run = _tcpn("run", str(path), "-o", str(tmp_path / "r"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines()
            if line.lstrip("│ ").startswith(("f0 ", "f1 "))]
    assert rows and all("n/a" in row and "0.000" not in row for row in rows), run.stdout
    assert REASON in run.stdout
    table = _tcpn("table", str(path), "--workers", "1", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "n/a" in table.stdout and REASON in table.stdout


def test_an_objective_that_needs_an_absent_metric_is_refused():
    from tcpn.experiments.optimize import objective_value

    summary = evaluate(_scenario(flow_events=False), "fluid").summary
    with pytest.raises(InputError, match=r"'goodput' needs goodput_bps.*" + REASON):
        objective_value(summary, "goodput")
    assert objective_value(summary, "delay") < 0  # the RTT is there


def test_the_scenario_report_is_refused_before_any_run(tmp_path):
    from tcpn.reports.scenario_report import scenario_parts

    ran = []
    with pytest.raises(InputError, match=REASON):
        scenario_parts(_scenario(flow_events=False), "net", replications=1,
                       progress=ran.append)
    assert ran == []


def test_a_cross_validation_is_refused_before_any_run():
    from tcpn.experiments.compare import compare

    ran = []
    with pytest.raises(InputError, match=REASON):
        compare(_scenario(flow_events=False), ["net", "fluid"], replications=1,
                progress=ran.append)
    assert ran == []
