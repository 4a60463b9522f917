"""Study S2 (ECN marking threshold): the shipped scenarios, hand-derived facts of the
experiment, the transfer objectives of ``optimize`` and equation 1 read off a scenario.

Path (1 tu = 1 ms): S -(100 Mbit/s, 4.5784 tu)- R -(400 kbit/s, 50 tu)- D; data packets
500 bytes (TPS = 500 * 8 / 400e3 s = 10 tu), ACKs 40 bytes (0.8 tu); application one
segment every 5 tu, 300 segments.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcpn.cli import app
from tcpn.errors import InputError
from tcpn.experiments.optimize import optimize, study_threshold_inputs, study_threshold_predictions
from tcpn.lenses import evaluate
from tcpn.models.scenario import load_scenario
from tcpn.reports.studies.ecn_threshold import (
    STUDY_FILES,
    TU_S,
    s2_scenario,
    s2_yaml,
    unloaded_rtt_tu,
)

STUDIES = Path(__file__).resolve().parent.parent / "scenarios" / "studies"


@pytest.mark.parametrize("stem", list(STUDY_FILES))
def test_shipped_files_are_the_generated_experiments(stem):
    path = STUDIES / f"{stem}.yaml"
    assert path.read_text(encoding="utf-8") == s2_yaml(stem)
    scenario = load_scenario(path)
    # unloaded round trip: 0.04 (S->R) + 4.5784 + 10 (TPS) + 50, back 0.8 + 50 + 0.0032
    # + 4.5784 = 120 tu
    assert unloaded_rtt_tu(scenario) == pytest.approx(120.0, abs=1e-9)
    inputs = study_threshold_inputs(scenario) if "drop_tail" not in stem else None
    if inputs is not None:
        assert inputs["arrival_gap_s"] / TU_S == pytest.approx(5.0)
        assert inputs["service_time_s"] / TU_S == pytest.approx(10.0)
    if "eq1" in stem:  # K = 80 - (120/5 - 120/10) = 68
        assert scenario.direction("R->D").queue.k == 68.0
        assert study_threshold_predictions(scenario) == pytest.approx(
            {"study_eq1_k": 68.0, "self_consistent_k": (80 - (0.2 - 0.1) * 120) * 0.5})


def test_without_loss_the_queue_never_reaches_equation_1():
    # cwnd <= 64 + 300/64 < 69 (slow start ends at ssthresh 64, then +1/cwnd per ACK);
    # at least (120 - 10)/10 = 11 packets or ACKs are on the links, so the queue holds at
    # most 58 < K = 68 < B = 80: equation 1 never marks, drop-tail never drops, and the
    # two runs are the same run. K = 50 is reached: marks, and lower delays.
    drop_tail, eq1, k50 = (evaluate(s2_scenario(m, 0.0), lens="net").summary
                           for m in ("drop_tail", "eq1", "k50"))
    assert drop_tail["queues"]["R->D"]["max_packets"] <= 58
    assert drop_tail["flows"]["tcp"]["drops"] == 0 and eq1["flows"]["tcp"]["marks"] == 0
    assert eq1["flows"]["tcp"] == drop_tail["flows"]["tcp"] | {"marks": 0.0}
    assert k50["flows"]["tcp"]["marks"] > 0 and k50["flows"]["tcp"]["retransmissions"] == 0
    assert k50["flows"]["tcp"]["segment_delay_mean_s"] < \
        drop_tail["flows"]["tcp"]["segment_delay_mean_s"]
    # the router sends one segment per 10 tu: all 300 need >= 300 * 10 + 50 tu after the
    # first reaches it (4.6184 tu)
    for summary in (drop_tail, eq1, k50):
        assert summary["flows"]["tcp"]["completion_s"] >= (4.6184 + 3000 + 50) * TU_S


def test_transfer_objectives_need_a_sized_transfer():
    bulk = s2_scenario(40.0, bulk=True, horizon_s=5.0)
    with pytest.raises(InputError, match="objective completion needs a sized transfer"):
        optimize(bulk, "ecn_k", (1, 79), lens="fluid", objective="completion", points=3)


def test_optimize_reports_equation_1_beside_the_search():
    found = optimize(s2_scenario("k50", 0.0), "ecn_k", (20, 79), lens="net",
                     objective="segment_delay", points=3, refine=False, replications=1)
    assert [p.value for p in found.points] == [20.0, 50.0, 79.0]  # K is a whole number
    assert found.predictions == pytest.approx({"study_eq1_k": 68.0, "self_consistent_k": 34.0})
    # K = 79 never marks (queue <= 58): the drop-tail delay; K = 20 marks early
    by_k = {p.value: -p.objective for p in found.points}
    assert by_k[20.0] < by_k[79.0] and found.best.value == 20.0


def test_tcpn_run_prints_the_studys_outputs(tmp_path):
    out = CliRunner().invoke(app, ["run", str(STUDIES / "s2_k50_loss0.yaml"), "-o",
                                   str(tmp_path / "run")])
    assert out.exit_code == 0, out.output
    for column in ("all delivered s", "segment delay ms", "retx"):
        assert column in out.output


def test_the_study_runs_from_any_directory_and_fails_in_one_line(tmp_path):
    # the example: outside the repository root the relative default
    # scenarios/studies was not found and a traceback ended the run
    def study(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tcpn.reports.studies.ecn_threshold", "study",
                               *args], capture_output=True, text=True, cwd=tmp_path,
                              timeout=600, env={**os.environ, "COLUMNS": "60"})

    done = study("--figure", "delay.png")
    assert done.returncode == 0, done.stderr
    assert f"experiments: {STUDIES}" in done.stderr
    assert (tmp_path / "delay.png").read_bytes()[:4] == b"\x89PNG"
    again = study("--figure", "delay.png")
    assert again.returncode == 3 and "delay.png exists: pass overwrite" in again.stderr
    nowhere = study("--directory", "nowhere", "--figure", "other.png")
    assert nowhere.returncode == 3 and "Traceback" not in nowhere.stderr
    assert f"{tmp_path / 'nowhere'}: no S2 scenario files s2_drop_tail_loss0.yaml" in \
        nowhere.stderr
    assert len(nowhere.stderr.splitlines()) == 1 and not (tmp_path / "other.png").exists()
