"""Replications, the lens front door and `tcpn run`: seeds, intervals, determinism, failure.

The lens here is a small, complete implementation of the protocol (a paced sender with
Bernoulli losses, retransmitting each lost segment one RTT later), so that these tests
exercise evaluate/replicate/the CLI without depending on the real lenses.
"""

from __future__ import annotations

import doctest
import json
import math
import multiprocessing
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from typer.testing import CliRunner

from tcpn.cli import app
from tcpn.errors import InputError
from tcpn.lenses import LensError, Run, evaluate, get_lens, register_lens, replications, run_seeds
from tcpn.lenses import registry as lenses
from tcpn.lenses.replications import ReplicationResult, flow_table, mean_ci, replicate
from tcpn.models.scenario import Scenario, dumbbell
from tcpn.models.traces import ScenarioResult, TraceWriter

LOSS = 0.05


class PacedLossLens:
    """Each flow sends a segment every ``gap_s``; each is lost with probability ``LOSS``
    at the bottleneck and then retransmitted one RTT later; deliveries stay in order."""

    name: ClassVar[str] = "paced"

    def __init__(self, gap_s: float = 0.01, fail_replication: int | None = None):
        self.gap_s = gap_s
        self.fail_replication = fail_replication

    def check(self, scenario: Scenario) -> None:
        for i, link in enumerate(scenario.links):
            if link.ab.queue.kind != "drop_tail" or link.ba.queue.kind != "drop_tail":
                raise InputError(f"links[{i}]: the paced lens models drop-tail queues only")

    def run(self, run: Run, trace: TraceWriter, progress: Any) -> dict[str, Any]:
        if run.replication == self.fail_replication:
            raise RuntimeError(f"replication {run.replication} crashed")
        rng = run.rng()
        horizon = run.scenario.horizon_s
        for flow in run.flows:
            mss = flow.tcp.segment_size_bytes
            one_way = sum(run.scenario.link_between(a, b).delay_s
                          for a, b in zip(flow.data_route, flow.data_route[1:], strict=False))
            t, seq, pending = flow.start_s, 0, 0.0
            trace.flow_value(t, flow.id, "cwnd_bytes", mss)
            while t < min(flow.stop_s, horizon):
                trace.flow_event(t, flow.id, "send", seq=seq, bytes=mss)
                arrive = t + one_way
                if rng.random() < LOSS:
                    trace.flow_event(t, flow.id, "drop", seq=seq, bytes=mss,
                                     where=flow.data_queues[1])
                    retx = t + 2 * one_way
                    trace.flow_event(retx, flow.id, "retransmit", seq=seq, bytes=mss)
                    arrive = retx + one_way
                pending = max(pending, arrive)  # in order: wait for every earlier segment
                if pending <= horizon:
                    trace.flow_event(arrive, flow.id, "recv", seq=seq, bytes=mss)
                    trace.flow_event(pending, flow.id, "deliver", seq=seq, bytes=mss)
                    trace.flow_value(arrive + one_way, flow.id, "rtt_s", 2 * one_way)
                seq += mss
                t += self.gap_s
            progress(horizon)
        return {"engine": "paced", "gap_s": self.gap_s}


register_lens("paced", PacedLossLens)


@pytest.fixture
def scenario() -> Scenario:
    return dumbbell(pairs=2, horizon_s=2.0, tcp={"segment_size_bytes": 1000})


def test_mean_ci_by_hand():
    mean, half = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert half == pytest.approx(4.302652729911275 / math.sqrt(3))  # t(0.975, 2) * 1 / sqrt 3
    assert mean_ci([5.0, 5.0]) == (5.0, 0.0)
    assert math.isnan(mean_ci([7.0])[1])
    assert mean_ci([1.0, None, float("nan"), 3.0])[0] == 2.0  # undefined runs left out
    with pytest.raises(InputError):
        mean_ci([1.0, 2.0], confidence=1.0)


def test_mean_ci_covers_the_mean_95_percent_of_the_time():
    rng = np.random.default_rng(12)
    samples = rng.normal(10.0, 3.0, size=(4000, 5))
    covered = 0
    for row in samples:
        mean, half = mean_ci(row.tolist())
        covered += abs(mean - 10.0) <= half
    # binomial(4000, 0.95): standard deviation 0.0034
    assert abs(covered / 4000 - 0.95) < 4 * 0.0034


def test_run_seeds_are_spawned_children():
    spawned = np.random.SeedSequence(9).spawn(3)
    for mine, theirs in zip(run_seeds(9, 3), spawned, strict=True):
        assert mine.generate_state(2).tolist() == theirs.generate_state(2).tolist()


def test_single_run_is_replication_zero(scenario):
    single = evaluate(scenario, lens="paced", seed=4)
    assert isinstance(single, ScenarioResult)
    assert single.seed == {"entropy": 4, "spawn_key": [0], "replication": 0}
    assert single.provenance["lens"] == {"engine": "paced", "gap_s": 0.01}
    reps = replicate(scenario, lens="paced", seed=4, replications=3, workers=1)
    assert reps.summaries[0] == single.summary
    assert reps.summaries[0] != reps.summaries[1]


def test_results_do_not_depend_on_the_number_of_workers(scenario):
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the test lens is registered at run time: needs fork")
    one = replicate(scenario, lens="paced", seed=11, replications=4, workers=1)
    two = replicate(scenario, lens="paced", seed=11, replications=4, workers=2)
    assert one.summaries == two.summaries
    assert one.seeds == two.seeds
    assert [s["replication"] for s in two.seeds] == [0, 1, 2, 3]


def test_replication_table_is_the_t_interval_of_the_runs(scenario):
    reps = replicate(scenario, lens="paced", seed=2, replications=5, workers=1)
    assert isinstance(reps, ReplicationResult)
    values = [s["flows"]["f0"]["goodput_bps"] for s in reps.summaries]
    row = reps.table().loc[("flow", "f0", "goodput_bps")]
    mean, half = mean_ci(values)
    assert (row["mean"], row["half_width"], row["n"]) == (mean, half, 5)
    # the loss ratio estimates LOSS: mean of 5 runs x 2 flows x 200 segments
    loss = reps.table().loc[("aggregate", "all", "loss_ratio")]
    assert abs(loss["mean"] - LOSS) < 4 * math.sqrt(LOSS * (1 - LOSS) / 2000)
    table = flow_table(reps)
    assert table.loc["f0", "goodput_bps"] == mean
    assert "jain_index" in table.columns


def test_evaluate_with_replications_and_output(scenario, tmp_path):
    out = tmp_path / "reps"
    reps = evaluate(scenario, lens="paced", seed=3, replications=2, output=out, workers=1)
    assert sorted(p.name for p in out.iterdir()) == [".tcpn-output", "rep-000", "rep-001",
                                                     "replications.json"]
    record = json.loads((out / "replications.json").read_text())
    assert record["replications"] == 2 and record["scenario_hash"] == scenario.content_hash()
    back = ScenarioResult.load(out / "rep-001")
    assert back.summary == json.loads(json.dumps(reps.summaries[1]))
    assert back.seed["spawn_key"] == [1]


def test_a_failed_run_leaves_no_complete_result(scenario, tmp_path):
    out = tmp_path / "reps"
    with pytest.raises(RuntimeError, match="replication 1 crashed"):
        replicate(scenario, lens="paced", replications=3, output=out, workers=1,
                  options={"fail_replication": 1})
    assert not out.exists()  # not even rep-000, which had finished: whole or not at all
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError):
        evaluate(scenario, lens="paced", output=tmp_path / "one", fail_replication=0)
    assert not (tmp_path / "one").exists()


def test_lens_check_refuses_before_running(tmp_path):
    red = dumbbell(pairs=1, horizon_s=1.0, queue={"kind": "red"})
    with pytest.raises(InputError, match=r"links\[0\]: the paced lens models drop-tail"):
        evaluate(red, lens="paced", output=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_unknown_and_missing_lenses():
    with pytest.raises(LensError, match="unknown lens 'nope'; lenses: net, fluid, ns3"):
        get_lens("nope")
    register_lens("ghost", "tcpn.models.no_such_lens:Ghost")
    with pytest.raises(LensError, match=r"module tcpn\.models\.no_such_lens is missing"):
        get_lens("ghost")
    register_lens("needs_pkg", "tests_missing_pkg_xyz.lens:Lens")
    with pytest.raises(LensError, match="is missing"):
        get_lens("needs_pkg")


def test_cli_run_prints_table_and_writes_result(scenario, tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(scenario.to_yaml())
    out = tmp_path / "out"
    done = CliRunner().invoke(app, ["run", str(path), "--lens", "paced", "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert "goodput" in done.output and "f1" in done.output
    result = ScenarioResult.load(out)
    assert f"{result.summary['flows']['f0']['goodput_bps'] / 1e6:.3f}" in done.output
    done = CliRunner().invoke(app, ["run", str(path), "--lens", "paced", "--replications", "3",
                                    "--workers", "1", "-o", str(tmp_path / "reps")])
    assert done.exit_code == 0, done.output
    assert " ± " in done.output
    assert (tmp_path / "reps" / "replications.json").exists()


def test_default_output_directory(scenario, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("s.yaml")
    path.write_text(scenario.to_yaml())
    done = CliRunner().invoke(app, ["run", str(path), "--lens", "paced", "--seed", "5"])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "results" / "dumbbell-paced-seed5" / "result.json").exists()


def test_doctests():
    for module in (lenses, replications):
        assert doctest.testmod(module).failed == 0
