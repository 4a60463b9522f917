"""``tcpn simulate`` and ``tcpn inspect``: any net from the command line (issue 34, item 4).

Real CPN Tools files from ``../shared/data/cpn`` and a shipped scenario; the Python engine
(``--engine python``, the reference) keeps the runs free of first-use native builds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tcpn.petrinets.exchange.cpn_import import read_cpn

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "dumbbell_newreno.yaml"


def tcpn(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "tcpn"), "--engine", "python",
                           *args], capture_output=True, text=True, cwd=cwd, timeout=300,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


@pytest.fixture
def queue_cpn(shared_dir: Path) -> Path:
    return shared_dir / "data" / "cpn" / "QueueSystem_inttime.cpn"


def test_simulate_a_cpn_tools_file_writes_one_row_per_run_from_the_seed(
        queue_cpn: Path, tmp_path: Path) -> None:
    first, again, other = (tmp_path / name for name in ("a.csv", "b.csv", "c.csv"))
    done = tcpn("simulate", str(queue_cpn), "--until", "2000", "--replications", "3",
                "--average", "Queue", "-o", str(first))
    assert done.returncode == 0, done.stderr
    runs = pd.read_csv(first)
    assert list(runs["replication"]) == [0, 1, 2]
    assert set(runs["stop_reason"]) == {"horizon"} and (runs["final_time"] == 2000).all()
    # every firing is counted once, by its transition
    fired = runs[[c for c in runs if c.startswith("fired:")]].sum(axis=1)
    assert (fired == runs["firings"]).all()
    # the queue holds one token (a list) whatever happens: its average is exactly 1
    assert (runs["average:Queue"] == 1.0).all()
    # customers arrive and complete: every completion was an arrival first
    assert (runs["tokens:Completed"] <= runs["fired:Arrivals.Arrive"]).all()
    assert "fired:Server.Start" in done.stdout and "mean ± 95 % CI" in done.stdout
    assert tcpn("simulate", str(queue_cpn), "--until", "2000", "--replications", "3",
                "--average", "Queue", "-o", str(again)).returncode == 0
    keep = [c for c in runs if c != "wall_s"]
    assert pd.read_csv(again)[keep].equals(runs[keep])  # the same seed, the same runs
    assert tcpn("simulate", str(queue_cpn), "--until", "2000", "--replications", "3",
                "--seed", "7", "-o", str(other)).returncode == 0
    assert not pd.read_csv(other)["firings"].equals(runs["firings"])


def test_simulate_logs_every_firing_of_one_run(queue_cpn: Path, tmp_path: Path) -> None:
    log, runs = tmp_path / "events.csv", tmp_path / "runs.csv"
    done = tcpn("simulate", str(queue_cpn), "--until", "500", "--events", str(log),
                "-o", str(runs))
    assert done.returncode == 0, done.stderr
    events = pd.read_csv(log)
    assert len(events) == int(pd.read_csv(runs)["firings"].iloc[0]) > 0
    assert events["time"].is_monotonic_increasing


def test_a_scenario_s_identical_runs_are_said_to_be_deterministic(tmp_path: Path) -> None:
    done = tcpn("simulate", str(SCENARIO), "--until", "0.5", "--replications", "2")
    assert done.returncode == 0, done.stderr
    assert "(identical)" in done.stdout and "± 0" not in done.stdout
    assert "tcpn run SCENARIO --replications N" in " ".join(done.stdout.split())


@pytest.mark.parametrize(("args", "message"), [
    (["--until", "10", "--average", "Queu"], "has no place 'Queu' (did you mean Queue"),
    ([], "give a horizon (--until, model time) or --max-firings"),
    (["--until", "10", "--replications", "2", "--events", "e.csv"],
     "use it with --replications 1"),
    (["--until", "10", "-o", "runs.txt"], "use a .csv or .parquet file"),
    (["--until", "-5"], "--until must be a positive finite model time"),
])
def test_simulate_bad_input_names_what_is_wrong(queue_cpn: Path, tmp_path: Path,
                                                args: list[str], message: str) -> None:
    done = tcpn("simulate", str(queue_cpn), *args, cwd=tmp_path)
    assert done.returncode == 3 and message in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr and list(tmp_path.iterdir()) == []


def test_simulate_never_replaces_a_users_file(queue_cpn: Path, tmp_path: Path) -> None:
    mine = tmp_path / "runs.csv"
    mine.write_text("my own work\n")
    done = tcpn("simulate", str(queue_cpn), "--until", "10", "-o", str(mine))
    assert done.returncode == 3 and "runs.csv" in done.stderr
    assert mine.read_text() == "my own work\n"


def test_simulate_runs_python_code_only_when_asked(tmp_path: Path) -> None:
    reference = "tcpn.petrinets.exchange.loading:example_net"
    done = tcpn("simulate", reference, "--until", "10")
    assert done.returncode == 3 and "--python" in done.stderr
    done = tcpn("simulate", reference, "--python", "--until", "10")
    assert done.returncode == 0 and "mm1" in done.stdout


def test_inspect_lists_what_formulas_and_monitors_name(queue_cpn: Path) -> None:
    done = tcpn("inspect", str(SCENARIO), "--show", "places")
    assert done.returncode == 0, done.stderr
    assert "R1.R2.buffer" in done.stdout and "TPkt" in done.stdout
    assert "transition" not in done.stdout.split("places")[0]  # only the places
    done = tcpn("inspect", str(queue_cpn))
    assert done.returncode == 0, done.stderr
    for name in ("Queue", "Server.Start", "colour sets", "modules"):
        assert name in done.stdout
    report = read_cpn(queue_cpn).report  # a partial import says what it left out
    said = f"the import left {len(report.unsupported)} element(s) out"
    assert (said in " ".join(done.stdout.split())) == (not report.complete)
    done = tcpn("inspect", str(queue_cpn), "--show", "arcs")
    assert done.returncode == 2 and "arcs" in done.stderr
