"""Progress on stderr for `tcpn run` and `tcpn validate`: drawn on a terminal, quiet otherwise.

The terminal is a real pseudo-terminal (``pty``); the scenario a 30 s dumbbell, long enough
for the net lens to report a few times (it reports every 0.2 s of wall-clock time).
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

TCPN = str(Path(sys.executable).parent / "tcpn")
SCENARIO = """name: thirty
links:
  - {a: R1, b: R2, rate_bps: 2.0e+6, delay_s: 0.010, queue: {kind: drop_tail, limit: 20}}
  - {a: S0, b: R1, rate_bps: 100.0e+6, delay_s: 0.001}
  - {a: R2, b: D0, rate_bps: 100.0e+6, delay_s: 0.001}
flows:
  - {id: f0, src: S0, dst: D0, variant: newreno, start_s: 0.0}
  - {id: f1, src: S0, dst: D0, variant: newreno, start_s: 0.2}
horizon_s: 30.0
"""
ENV = {**os.environ, "COLUMNS": "200", "TERM": "xterm"}
ENV.pop("NO_COLOR", None)
ENV.pop("TTY_COMPATIBLE", None)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "thirty.yaml"
    path.write_text(SCENARIO)
    return path


def on_a_terminal(*args: str | Path) -> tuple[int, str, str]:
    """Run tcpn with stderr on a pseudo-terminal: exit code, stdout, what stderr drew."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([TCPN, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=slave, text=True, env=ENV)
    os.close(slave)
    drawn = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            drawn += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    stdout, _ = proc.communicate(timeout=300)
    return proc.returncode, stdout, ANSI.sub("", drawn.decode(errors="replace"))


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_run_shows_model_time_firings_per_second_and_eta_on_a_terminal(scenario, tmp_path):
    code, stdout, drawn = on_a_terminal("run", scenario, "-o", tmp_path / "one")
    assert code == 0 and "result:" in stdout
    assert re.search(r"[\d.]+/30 s model time", drawn), drawn
    assert re.search(r"[\d,]+ firings/s", drawn) and "ETA" in drawn
    code, _, drawn = on_a_terminal("run", scenario, "-o", tmp_path / "reps",
                                   "--replications", "2", "--workers", "1")
    assert code == 0 and re.search(r"[0-2]/2 runs", drawn) and "ETA" in drawn, drawn


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_validate_shows_the_runs_done_on_a_terminal(scenario, tmp_path):
    code, _, drawn = on_a_terminal("validate", scenario, "--lenses", "net,fluid",
                                   "--replications", "1", "-o", tmp_path / "v")
    assert code in (0, 1) and re.search(r"[0-2]/2 runs", drawn) and "ETA" in drawn, drawn


def test_nothing_is_drawn_when_stderr_is_not_a_terminal(scenario, tmp_path):
    done = subprocess.run([TCPN, "run", str(scenario), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, env=ENV)
    assert done.returncode == 0 and done.stderr == ""
