"""Scratch directories of processes that ended, killed or not, are removed by the next one."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tcpn.scratch import scratch, scratch_directory


def _killed_process_id() -> int:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    process.kill()
    process.wait()
    return process.pid


def test_a_killed_owners_directory_goes_a_living_ones_stays():
    root = Path(tempfile.gettempdir())
    orphan = root / f"tcpn-ns3-run-pid{_killed_process_id()}-abcd1234"
    orphan.mkdir()
    (orphan / "trace.csv").write_text("left behind")
    living = Path(tempfile.mkdtemp(prefix=f"tcpn-ns3-run-pid{os.getppid()}-"))
    foreign = Path(tempfile.mkdtemp(prefix="someone-else-pid1-"))
    try:
        made = scratch_directory("ns3-worker")
        assert made.is_dir() and made.name.startswith(f"tcpn-ns3-worker-pid{os.getpid()}-")
        assert not orphan.exists()
        assert living.is_dir() and foreign.is_dir()
    finally:
        for path in (living, foreign, made):
            path.rmdir()


def test_the_with_form_removes_its_directory_even_on_an_error():
    try:
        with scratch("notices") as path:
            (path / "said").write_text("x")
            raise RuntimeError
    except RuntimeError:
        pass
    assert not path.exists()
