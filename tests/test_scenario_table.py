"""`tcpn table`: many scenarios through one lens, one row each, no result lost to a bad file."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tcpn.errors import InputError
from tcpn.lenses import evaluate
from tcpn.reports.scenario_table import ScenarioRow, run_scenarios, scenario_frame, to_markdown

SHORT = """name: {name}
links:
  - {{a: R1, b: R2, rate_bps: 2.0e+6, delay_s: 0.010, queue: {{kind: drop_tail, limit: 20}}}}
  - {{a: S0, b: R1, rate_bps: 100.0e+6, delay_s: 0.001}}
  - {{a: R2, b: D0, rate_bps: 100.0e+6, delay_s: 0.001}}
flows:
  - {{id: f0, src: S0, dst: D0, variant: {variant}, start_s: 0.0}}
  - {{id: f1, src: S0, dst: D0, variant: {variant}, start_s: 0.2}}
horizon_s: 2.0
seed: {seed}
"""


@pytest.fixture
def files(tmp_path):
    paths = []
    for name, variant, seed in (("a_newreno", "newreno", 1), ("b_vegas", "vegas", 2),
                                ("c_tahoe", "tahoe", 3)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(SHORT.format(name=name, variant=variant, seed=seed))
        paths.append(path)
    return paths


def test_rows_follow_the_files_and_equal_single_runs_whatever_the_workers(files):
    rows = run_scenarios(files, workers=2)
    assert [r.name for r in rows] == ["a_newreno", "b_vegas", "c_tahoe"]
    assert [r.seed for r in rows] == [1, 2, 3]
    for row, path in zip(rows, files, strict=True):
        assert row.error is None
        assert row.summary == evaluate(path, "net").summary
    one = scenario_frame(run_scenarios(files, workers=1)).drop(columns="CPU s")
    two = scenario_frame(rows).drop(columns="CPU s")
    assert one.equals(two)
    frame = scenario_frame(rows)
    summary = rows[1].summary
    assert frame.loc[1, "goodput Mbit/s"] == summary["aggregate"]["goodput_bps"] * 1e-6
    assert frame.loc[1, "per flow Mbit/s"] == " ".join(
        f"{f}={m['goodput_bps'] * 1e-6:.3f}" for f, m in summary["flows"].items())
    assert frame.loc[1, "flows"] == 2
    assert math.isnan(frame.loc[1, "all delivered s"])  # long-running flows deliver no "all"


def test_a_seed_for_all_overrides_each_files_own(files):
    rows = run_scenarios(files[:2], seed=7, workers=1)
    assert [r.seed for r in rows] == [7, 7]
    assert rows[0].summary == evaluate(files[0], "net", seed=7).summary


def test_a_bad_file_gets_its_error_in_its_row_and_the_others_still_run(files, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nlinks: []\nflows: []\nhorizon_s: -1\n")
    rows = run_scenarios([files[0], bad, files[2]], workers=2)
    assert rows[0].summary is not None and rows[2].summary is not None
    assert rows[1].summary is None and "bad.yaml:4: horizon_s" in (rows[1].error or "")
    markdown = to_markdown(scenario_frame(rows))
    assert len(markdown.splitlines()) == 2 + 3  # a multi-line error stays on its row


def test_missing_files_and_empty_lists_are_refused_by_name(tmp_path):
    with pytest.raises(InputError, match=r"cannot read scenario .*nowhere\.yaml: no such file"):
        run_scenarios([tmp_path / "nowhere.yaml"])
    with pytest.raises(InputError, match="no scenario files"):
        run_scenarios([])


def test_cli_prints_the_table_writes_markdown_and_csv_and_exits_1_on_a_failed_file(
        files, tmp_path):
    # a narrow terminal and a long path: the row still names the failing file
    deep = tmp_path.joinpath(*["a_rather_long_directory_name"] * 6)
    deep.mkdir(parents=True)
    tcpn = str(Path(sys.executable).parent / "tcpn")
    env = {**os.environ, "COLUMNS": "60"}
    md, csv = deep / "t.md", deep / "t.csv"
    done = subprocess.run([tcpn, "table", *map(str, files[:2]), "--workers", "1",
                           "--markdown", str(md), "--csv", str(csv)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "a_newreno" in done.stdout and "b_vegas" in done.stdout
    assert md.read_text().startswith("| scenario | flows | goodput Mbit/s |")
    frame = pd.read_csv(csv)
    assert frame["scenario"].tolist() == ["a_newreno", "b_vegas"]
    bad = deep / "bad.yaml"
    bad.write_text("name: bad\n")
    done = subprocess.run([tcpn, "table", str(files[0]), str(bad), "--workers", "1",
                           "--csv", str(csv)], capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 3 and f"{csv} exists: pass overwrite" in " ".join(
        done.stderr.split())  # refused before any run
    done = subprocess.run([tcpn, "table", str(files[0]), str(bad), "--workers", "1",
                           "--csv", str(csv), "--overwrite"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 3  # invalid input: the file's fault, not the run's
    # a row starts with its name, whatever box Rich draws (ASCII in a non-UTF-8 locale)
    assert re.search(r"^\W+ bad\.yaml\s", done.stdout, re.M), done.stdout
    assert f"{bad}: ScenarioError: " in done.stdout  # the whole error on a line of its own
    frame = pd.read_csv(csv, keep_default_na=False)
    assert frame["scenario"].tolist() == ["a_newreno", "bad.yaml"]
    assert str(bad) in frame.loc[1, "error"] and frame.loc[0, "error"] == ""


def test_the_busiest_queue_never_prints_a_maximum_below_its_mean():
    # the example: "6.2/6" for a mean of 6.2 packets and a maximum of 6.4
    summary = {"queues": {"R1->R2": {"mean_packets": 6.2, "max_packets": 6.4},
                          "R2->R1": {"mean_packets": 0.5, "max_packets": 1.0}},
               "aggregate": {"goodput_bps": 1e6}, "flows": {}}
    row = ScenarioRow("x.yaml", "x", "fluid", 1, 0.0, summary=summary)
    assert scenario_frame([row]).loc[0, "busiest queue mean/max pkts"] == "R1->R2 6.2/6.4"
    summary["queues"]["R1->R2"] = {"mean_packets": 6.96, "max_packets": 7.0}
    assert scenario_frame([row]).loc[0, "busiest queue mean/max pkts"] == "R1->R2 7.0/7"


WIRELESS = """name: w
links:
  - {a: S, b: R, rate_bps: 10.0e+6, delay_s: 0.005}
  - {a: R, b: M, rate_bps: 2.0e+6, delay_s: 0.001, wireless: {station: M}}
flows:
  - {id: f, src: S, dst: M, variant: newreno, bytes: 30000}
horizon_s: 2.0
"""


def test_wireless_scenarios_get_the_stations_bytes_per_joule(files, tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(WIRELESS)
    rows = run_scenarios([files[0], path], workers=1)
    report = evaluate(path, "net").provenance["lens"]["wireless"]
    assert rows[1].wireless == report
    # the energy model's own arithmetic: delivered bytes over the station's joules
    (link,) = report.values()
    assert link["delivered_bytes"] == 30000
    assert link["bytes_per_joule"] == pytest.approx(30000 / link["energy_j"])
    frame = scenario_frame(rows)
    assert frame.loc[1, "802.11 bytes/J"] == f"R-M={link['bytes_per_joule']:.0f}"
    assert frame.loc[0, "802.11 bytes/J"] == ""
    assert "802.11 bytes/J" not in scenario_frame(rows[:1]).columns  # wired only: no column
    tcpn = str(Path(sys.executable).parent / "tcpn")
    run = subprocess.run([tcpn, "run", str(path), "-o", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=300, check=True)
    assert "802.11 stations" in run.stdout
    assert f"{link['bytes_per_joule']:.0f}" in run.stdout
