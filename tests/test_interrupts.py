"""Ctrl-C (SIGINT) and SIGTERM in ``tcpn check``, ``report`` and ``export``: one line saying
the command was interrupted and what is left, exit 130 (SIGINT) or 143 (SIGTERM), as
``run`` and ``sweep`` do; real processes, real signals."""

from __future__ import annotations

import functools
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tcpn.petrinets.colours import UNIT
from tcpn.petrinets.exchange.loading import built_net, save_net
from tcpn.petrinets.net import PetriNet, Place, Transition

TCPN = str(Path(sys.executable).parent / "tcpn")
SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "dumbbell_newreno.yaml"
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="POSIX signals")


def net_file(path: Path, places: int, doubling: bool) -> Path:
    """A chain of ``places`` places (long to export), or (``doubling``) three places whose
    token doubles at each firing (a state space without end)."""
    net = PetriNet(path.stem)
    names = ["a", "b", "c"] if doubling else [f"p{i}" for i in range(places)]
    for number, name in enumerate(names):
        net.add_place(Place(name, UNIT, initial=[()] if doubling or not number else []))
    for number, name in enumerate(names if doubling else names[:-1]):
        net.add_transition(Transition(f"t{number}"))
        net.add_input(name, f"t{number}", "()")
        net.add_output(name if doubling else names[number + 1], f"t{number}", "()",
                       count=2 if doubling else 1)
    return save_net(built_net(net, path.stem), path)


@functools.cache
def startup_cpu_s() -> float:
    """The user CPU seconds ``tcpn`` spends before a command starts (imports, parsing:
    over a second where no bytecode is cached), measured once on ``tcpn export --help``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    subprocess.run([TCPN, "export", "--help"], capture_output=True, check=True, timeout=120)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def interrupted(args: list[str], sig: signal.Signals, cpu_s: float
                ) -> tuple[subprocess.CompletedProcess[str], list[psutil.Process]]:
    """Run ``tcpn args``, send ``sig`` once it has used ``cpu_s`` of CPU beyond its
    start-up (it is at work in the command), and return how it ended and the child
    processes it had then. SIGINT starts at its default (a background job of a shell
    would inherit it ignored)."""
    at_work_s = startup_cpu_s() + cpu_s
    running = subprocess.Popen([TCPN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    process = psutil.Process(running.pid)
    deadline = time.monotonic() + 240
    while running.poll() is None and process.cpu_times().user < at_work_s \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.poll() is None, running.communicate()
    children = process.children(recursive=True)
    running.send_signal(sig)
    out, err = running.communicate(timeout=120)
    return subprocess.CompletedProcess(args, running.returncode, out, err), children


def assert_said_once(done: subprocess.CompletedProcess[str], sig: signal.Signals,
                     output: Path) -> None:
    assert done.returncode == EXIT[sig], done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("tcpn: interrupted")]
    assert lines == ["tcpn: interrupted: no partial output is left; nothing was written to "
                     f"{output}"], done.stderr
    assert not output.exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_check_interrupted_says_so_and_exits_130_or_143(tmp_path, sig):
    net = net_file(tmp_path / "grow.pnml", 3, doubling=True)
    output = tmp_path / "verdicts.json"
    done, _ = interrupted(["check", str(net), "--ctl", "AG !deadlock", "--max-states",
                           "1000000000", "--json", str(output)], sig, cpu_s=2.0)
    assert_said_once(done, sig, output)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_export_interrupted_says_so(tmp_path, sig):
    net = net_file(tmp_path / "chain.pnml", 20000, doubling=False)
    output = tmp_path / "chain.cpn"
    done, _ = interrupted(["export", str(net), "-o", str(output), "--layout", "grid"], sig,
                          cpu_s=1.0)
    assert_said_once(done, sig, output)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_report_interrupted_says_so_and_leaves_no_worker(tmp_path, sig):
    output = tmp_path / "report"
    done, children = interrupted(["report", str(SCENARIO), "--replications", "2",
                                  "--workers", "2", "--no-pdf", "-o", str(output)], sig,
                                 cpu_s=0.5)  # its workers run the replications
    assert_said_once(done, sig, output)
    _, alive = psutil.wait_procs(children, timeout=30)
    assert alive == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_command_without_its_own_message_says_interrupted_and_exits_130_or_143(sig):
    """Every other command (here ``demo``, which writes nothing): one line, and SIGTERM is
    143 as the docs say (typer made every interrupt a silent 130)."""
    done, _ = interrupted(["demo", "--customers", "10000000"], sig, cpu_s=2.0)
    assert done.returncode == EXIT[sig], done.stderr
    assert done.stderr.splitlines()[-1] == "tcpn: interrupted", done.stderr
