"""Campaigns on Dask: a real LocalCluster gives the same bytes as one local process; an
unreachable scheduler is a clear error."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from tcpn.experiments.sweep import CampaignStore, load_results, load_sweep, run_campaign
from tcpn.experiments.sweep.executors import executor_for

SWEEP = """\
links:
- {a: S, b: R, rate_bps: 1.0e7, delay_s: 0.001}
- {a: R, b: D, rate_bps: 2.0e6, delay_s: 0.01, queue: {kind: drop_tail, limit: 20}}
flows:
- {id: f0, src: S, dst: D, variant: newreno, start_s: {dist: uniform, low_s: 0, high_s: 0.05}}
- {id: f1, src: S, dst: D, variant: newreno, start_s: {dist: uniform, low_s: 0, high_s: 0.05}}
horizon_s: 0.5
sweep:
  axes:
    links[1].queue.limit: [5, 20]
  lenses: [net]
  replications: 2
"""


def deterministic(results) -> list[str]:
    return [json.dumps({k: v for k, v in record.items() if k != "run"}, sort_keys=True)
            for _, record in results.records]


def test_a_local_cluster_runs_the_campaign_with_the_same_results(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SWEEP)
    sweep = load_sweep(path)
    local = CampaignStore(tmp_path / "local")
    run_campaign(sweep, local)
    on_dask = CampaignStore(tmp_path / "dask")
    with executor_for(2, dask="local") as executor:  # what tcpn sweep --dask local uses
        plan = run_campaign(sweep, on_dask, executor)
    assert len(plan.missing) == 4
    first, second = load_results(sweep, local), load_results(sweep, on_dask)
    assert second.missing == 0
    assert first.table().to_csv() == second.table().to_csv()
    assert deterministic(first) == deterministic(second)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SWEEP)
    tcpn = str(Path(sys.executable).parent / "tcpn")
    address = f"tcp://127.0.0.1:{free_port()}"
    done = subprocess.run([tcpn, "sweep", str(path), "--store", str(tmp_path / "store"),
                           "--dask", address, "--dask-timeout", "2"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert f"cannot reach the Dask scheduler at {address} within 2 s" in done.stderr
    assert "Traceback" not in done.stderr
    done = subprocess.run([tcpn, "sweep", str(path), "--store", str(tmp_path / "store"),
                           "--dask", "scheduler:8786"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3 and "tcp://scheduler:8786" in done.stderr


def test_a_study_runs_on_a_local_cluster_with_the_numbers_of_a_local_run():
    """``tcpn report study ... --dask local``: the study's runs go to a real LocalCluster
    and give the numbers the study's own loop gives (gathered by job index)."""
    import pandas as pd

    from tcpn.reports.studies import s5
    from tcpn.reports.studies.experiments import Settings, running_on

    settings = Settings(replications=2, axis_replications=0, horizon_scale=0.05,
                        other_lenses=False, workers=1)
    here = s5.run("quick", lambda *_: None, settings=settings)
    with executor_for(2, dask="local") as executor, running_on(executor):
        there = s5.run("quick", lambda *_: None, settings=settings)
    columns = ["experiment", "lens", "replication", "f1_kbps", "f1_goodput_kbps"]
    assert len(here.tables["runs"]) == 8
    pd.testing.assert_frame_equal(here.tables["runs"][columns], there.tables["runs"][columns])
