"""Output directories and files: never over what is not tcpn's, whole or not at all, signals.

Every test drives a real ``tcpn`` subprocess (real signals, real files); the scenario is a
two-flow dumbbell of 1 s (a run takes well under a second) or, where a run must still be
going when the signal arrives, of 3000 s.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tcpn.outputs import (
    MARKER,
    OutputError,
    OutputWarning,
    atomic_directory,
    atomic_file,
    is_tcpn_output,
)

TCPN = str(Path(sys.executable).parent / "tcpn")
SCENARIO = """name: {name}
links:
  - {{a: R1, b: R2, rate_bps: 2.0e+6, delay_s: 0.010, queue: {{kind: drop_tail, limit: 20}}}}
  - {{a: S0, b: R1, rate_bps: 100.0e+6, delay_s: 0.001}}
  - {{a: R2, b: D0, rate_bps: 100.0e+6, delay_s: 0.001}}
flows:
  - {{id: f0, src: S0, dst: D0, variant: newreno, start_s: 0.0}}
  - {{id: f1, src: S0, dst: D0, variant: newreno, start_s: 0.2}}
horizon_s: {horizon_s}
"""


@pytest.fixture
def short(tmp_path: Path) -> Path:
    path = tmp_path / "short.yaml"
    path.write_text(SCENARIO.format(name="short", horizon_s=1.0))
    return path


@pytest.fixture
def long(tmp_path: Path) -> Path:
    path = tmp_path / "long.yaml"
    path.write_text(SCENARIO.format(name="long", horizon_s=3000.0))
    return path


def tcpn(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TCPN, *map(str, args)], capture_output=True, text=True, errors="replace",
                          timeout=300, cwd=cwd, env={**os.environ, "COLUMNS": "60"})


def one_line(text: str) -> str:
    return " ".join(text.split())  # Rich may wrap a long path: compare words


def siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}."))


def test_an_unrelated_directory_is_refused_by_name_and_left_untouched(short, tmp_path):
    # the example: a thesis.txt and a sub/data.csv were deleted, exit 0
    thesis = tmp_path / "thesis"
    (thesis / "sub").mkdir(parents=True)
    (thesis / "thesis.txt").write_text("three years")
    (thesis / "sub" / "data.csv").write_text("1,2\n")
    for flags in ([], ["--overwrite"]):
        done = tcpn("run", short, "-o", thesis, *flags)
        assert done.returncode == 3, done.stderr
        assert f"{thesis} exists and is not a tcpn output directory" in one_line(done.stderr)
        assert (thesis / "thesis.txt").read_text() == "three years"
        assert (thesis / "sub" / "data.csv").read_text() == "1,2\n"
        assert siblings(thesis) == []


def test_a_file_is_never_replaced_by_a_directory(short, tmp_path):
    paper = tmp_path / "paper.txt"
    paper.write_text("draft")
    done = tcpn("run", short, "-o", paper, "--overwrite")
    assert done.returncode == 3 and "is a file, not a directory" in done.stderr
    assert paper.read_text() == "draft"


def test_dot_as_output_is_refused_clearly(short, tmp_path):
    done = tcpn("run", short, "-o", ".", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "empty name" not in done.stderr
    assert f"{tmp_path} exists and is not a tcpn output directory" in one_line(done.stderr)
    done = tcpn("run", short, "-o", "/")
    assert done.returncode == 3 and "has no name to write under" in one_line(done.stderr)


def test_a_tcpn_result_is_replaced_only_with_overwrite_and_leaves_no_stale_runs(
        short, tmp_path):
    out = tmp_path / "out"
    done = tcpn("run", short, "-o", out, "--replications", "3", "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "rep-000", "rep-001", "rep-002",
                                                     "replications.json"]
    done = tcpn("run", short, "-o", out, "--replications", "2", "--workers", "2")
    assert done.returncode == 3 and "pass overwrite (--overwrite)" in one_line(done.stderr)
    assert (out / "rep-002").is_dir()
    done = tcpn("run", short, "-o", out, "--replications", "2", "--workers", "2",
                "--overwrite")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "rep-000", "rep-001",
                                                     "replications.json"]
    assert siblings(out) == []
    empty = tmp_path / "empty"
    empty.mkdir()
    assert tcpn("run", short, "-o", empty).returncode == 0  # nothing in it to lose
    assert (empty / "result.json").is_file()


def test_an_unwritable_target_fails_before_the_run(long, tmp_path):
    # /sys refuses new entries even to root; a 3000 s run would take minutes
    done = tcpn("run", long, "-o", "/sys/tcpn-test-output")
    assert done.returncode == 3, done.stderr
    assert "cannot write /sys/tcpn-test-output" in one_line(done.stderr)
    under_a_file = tmp_path / "notes.txt"
    under_a_file.write_text("")
    done = tcpn("run", long, "-o", under_a_file / "out", "--replications", "2")
    assert done.returncode == 3
    assert f"{under_a_file} is a file, not a directory" in one_line(done.stderr)
    if os.geteuid() != 0:  # root writes into read-only directories
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        done = tcpn("run", long, "-o", locked / "out")
        assert done.returncode == 3 and "Permission denied" in done.stderr


def start(args: list[str | Path]) -> subprocess.Popen[str]:
    """``tcpn args`` in a session of its own, SIGINT at its default as at a terminal: a
    child inherits an ignored SIGINT (a pytest-xdist worker may have one, as a shell's
    background job does; a CI run then waited 60 s for a Ctrl-C the run never saw)."""
    return subprocess.Popen([TCPN, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for_runs_to_start(proc: subprocess.Popen[str], out: Path, running: int) -> Path:
    """The partial directory once ``running`` runs are writing into it."""
    partial = out.with_name(f".{out.name}.partial-{proc.pid}")
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if partial.is_dir() and len([p for p in partial.iterdir()
                                     if p.name.startswith(".rep-")]) >= running:
            return partial
        time.sleep(0.1)
    raise AssertionError("the runs never started")


def group_members(pgid: int) -> list[int]:
    """Processes still in process group ``pgid`` (the command and its workers)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def wait_for_group_to_end(pgid: int) -> list[int]:
    deadline = time.monotonic() + 30
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return group_members(pgid)


@pytest.mark.skipif(sys.platform != "linux", reason="reads process groups from /proc")
@pytest.mark.parametrize(("how", "code"), [("ctrl-c", 130), ("sigint", 130),
                                           ("sigterm", 143)])
def test_an_interrupted_replicated_run_stops_its_workers_and_leaves_nothing(
        long, tmp_path, how, code):
    out = tmp_path / "out"
    proc = start(["run", long, "-o", out, "--replications", "4", "--workers", "2"])
    wait_for_runs_to_start(proc, out, running=2)
    if how == "ctrl-c":  # a terminal's Ctrl-C reaches the whole foreground group
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT if how == "sigint" else signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)  # a run of 3000 s would take minutes
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr
    assert "interrupted after 0 of 4 runs had finished: no partial output is left; " \
        f"nothing was written to {out}" in one_line(stderr)
    assert wait_for_group_to_end(proc.pid) == []  # no worker outlives the command
    assert not out.exists() and siblings(out) == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads process groups from /proc")
def test_the_leftovers_of_a_killed_run_are_removed_and_reported_next_time(
        long, short, tmp_path):
    out = tmp_path / "out"
    proc = start(["run", long, "-o", out, "--replications", "4", "--workers", "2"])
    partial = wait_for_runs_to_start(proc, out, running=2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert wait_for_group_to_end(proc.pid) == []  # the workers die with their parent
    assert siblings(out) == [partial.name] and not out.exists()
    done = tcpn("run", short, "-o", out)
    assert done.returncode == 0, done.stderr
    assert f"removed {partial}: the partial output of a run (PID {proc.pid}) that was " \
        "killed" in one_line(done.stderr)
    assert siblings(out) == [] and (out / "result.json").is_file()


def test_leftovers_of_live_processes_and_half_replaced_results_are_kept(tmp_path):
    out = tmp_path / "out"
    live = tmp_path / f".out.partial-{os.getppid()}"  # pytest's parent runs
    live.mkdir()
    (live / MARKER).write_text("")
    old = tmp_path / ".out.old-999999999"
    old.mkdir()
    with pytest.warns(OutputWarning) as caught, atomic_directory(out) as tmp:
        (tmp / "x").write_text("")
    messages = " ".join(str(w.message) for w in caught)
    assert f"process {os.getppid()} is still writing" in messages
    assert f"{old} is the previous content of {out}" in messages
    assert live.is_dir() and old.is_dir() and is_tcpn_output(out)


def test_a_failing_block_leaves_nothing_and_the_old_result_intact(tmp_path):
    out = tmp_path / "out"
    with atomic_directory(out) as tmp:
        (tmp / "a").write_text("first")
    with pytest.raises(RuntimeError), atomic_directory(out, overwrite=True) as tmp:
        (tmp / "a").write_text("second")
        raise RuntimeError("the run failed")
    assert (out / "a").read_text() == "first" and siblings(out) == []


def test_files_are_written_whole_and_replaced_only_with_overwrite(tmp_path):
    path = tmp_path / "table.csv"
    with atomic_file(path) as tmp:
        tmp.write_text("a\n")
    with pytest.raises(OutputError, match=r"table\.csv exists: pass overwrite"), \
            atomic_file(path) as tmp:
        tmp.write_text("b\n")
    with pytest.raises(OutputError, match="is a directory"), atomic_file(tmp_path):
        pass
    with atomic_file(path, overwrite=True) as tmp:
        tmp.write_text("c\n")
    assert path.read_text() == "c\n" and siblings(path) == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads process groups from /proc")
def test_ctrl_c_stops_tcpn_tables_workers_and_writes_no_table(long, tmp_path):
    other = tmp_path / "long2.yaml"
    other.write_text(long.read_text().replace("name: long", "name: long2"))
    csv = tmp_path / "t.csv"
    proc = start(["table", long, other, "--workers", "2", "--csv", csv])
    deadline = time.monotonic() + 240
    while len(group_members(proc.pid)) < 3 and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)  # the command and its two workers
    time.sleep(1.0)  # let the workers start their runs
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in stderr, stderr
    assert wait_for_group_to_end(proc.pid) == []
    assert not csv.exists() and siblings(csv) == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads process groups from /proc")
def test_an_interrupted_single_run_leaves_the_previous_result(long, short, tmp_path):
    out = tmp_path / "out"
    assert tcpn("run", short, "-o", out).returncode == 0
    before = (out / "result.json").read_text()
    proc = start(["run", long, "-o", out, "--overwrite"])
    partial = out.with_name(f".out.partial-{proc.pid}")
    deadline = time.monotonic() + 240
    while not partial.is_dir() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)  # the partial directory exists from before the run starts
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert f"no partial output is left; {out} keeps its previous content" in one_line(stderr)
    assert (out / "result.json").read_text() == before and siblings(out) == []


def test_an_interrupt_while_the_sibling_is_being_set_up_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C between the partial directory's mkdir and the block (found by a CI run under
    load: the signal landed while the marker was being written) removes it too."""
    write_text = Path.write_text

    def interrupted(self: Path, *args: object, **kwargs: object) -> int:
        if self.name == MARKER:
            raise KeyboardInterrupt
        return write_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", interrupted)
    with pytest.raises(KeyboardInterrupt), atomic_directory(tmp_path / "out"):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# ---------------------------------------------------------------- what --overwrite replaces

def test_a_users_directory_with_a_tcpn_result_json_survives_overwrite(short, tmp_path):
    # issue 27: a small result.json of a tcpn format was enough for --overwrite to delete
    # thesis.tex and .ssh/ beside it
    mine = tmp_path / "mine"
    (mine / ".ssh").mkdir(parents=True)
    (mine / ".ssh" / "id_ed25519").write_text("secret")
    (mine / "thesis.tex").write_text("three years")
    (mine / "result.json").write_text('{"format": "tcpn-result/1", "notes": "mine"}')
    (mine / "replications.json").write_text('{"format": "tcpn-replications/1"}')
    before = {p.relative_to(mine): p.read_bytes() for p in mine.rglob("*") if p.is_file()}
    done = tcpn("run", short, "-o", mine, "--overwrite")
    assert done.returncode == 3, done.stderr
    message = one_line(done.stderr)
    assert f"{mine} exists and is not a tcpn output directory" in message
    assert "thesis.tex" in message and ".ssh" in message and "Traceback" not in message
    assert {p.relative_to(mine): p.read_bytes() for p in mine.rglob("*")
            if p.is_file()} == before
    assert siblings(mine) == []


def test_overwrite_replaces_tcpns_own_run_but_not_a_file_added_or_edited(short, tmp_path):
    out = tmp_path / "out"
    for _ in range(2):  # a run into its own earlier output, replaced whole
        done = tcpn("run", short, "-o", out, "--overwrite")
        assert done.returncode == 0, done.stderr
        assert siblings(out) == []
    result = (out / "result.json").read_text()
    (out / "thesis.tex").write_text("notes on the run")
    done = tcpn("run", short, "-o", out, "--overwrite")
    assert done.returncode == 3, done.stderr
    message = one_line(done.stderr)
    assert f"{out} holds {out / 'thesis.tex'}, which tcpn did not write" in message
    assert "move it out of the directory or choose a new directory" in message
    assert (out / "thesis.tex").read_text() == "notes on the run"
    assert (out / "result.json").read_text() == result and siblings(out) == []
    (out / "thesis.tex").unlink()
    (out / "result.json").write_text(result + "\n")  # a result the user added notes to
    done = tcpn("run", short, "-o", out, "--overwrite")
    assert done.returncode == 3, done.stderr
    assert f"{out / 'result.json'}, which changed since tcpn wrote it" in one_line(done.stderr)
    assert (out / "result.json").read_text() == result + "\n"


def test_the_marker_lists_every_file_tcpn_wrote_with_its_size_and_sha256(tmp_path):
    import hashlib
    import json

    out = tmp_path / "out"
    with atomic_directory(out) as tmp:
        (tmp / "runs" / "rep-000").mkdir(parents=True)
        (tmp / "runs" / "rep-000" / "t.parquet").write_bytes(b"\x00table")
        (tmp / "empty").mkdir()
        (tmp / "result.json").write_text("{}")
    marker = json.loads((out / MARKER).read_text())
    files = {"result.json": b"{}", "runs/rep-000/t.parquet": b"\x00table"}
    assert marker["files"] == {name: {"size": len(data),
                                      "sha256": hashlib.sha256(data).hexdigest()}
                               for name, data in files.items()}
    assert marker["directories"] == ["empty", "runs", "runs/rep-000"]
    assert is_tcpn_output(out)


def _tcpn_output(out: Path) -> None:
    with atomic_directory(out) as tmp:
        (tmp / "sub").mkdir()
        (tmp / "sub" / "a.csv").write_text("1\n")
        (tmp / "result.json").write_text('{"format": "tcpn-result/1"}')


@pytest.mark.parametrize(("change", "named", "why"), [
    (lambda out: (out / "sub" / "notes.md").write_text("mine"), "sub/notes.md",
     "which tcpn did not write"),
    (lambda out: (out / "sub" / "a.csv").write_text("2\n"), "sub/a.csv",
     "which changed since tcpn wrote it"),
    (lambda out: (out / "sub" / "a.csv").write_text("1\n\n"), "sub/a.csv",
     "which changed since tcpn wrote it"),
    (lambda out: (out / ".ssh").mkdir(), ".ssh", "which tcpn did not write"),
    (lambda out: (out / "link").symlink_to("/etc"), "link", "which tcpn did not write"),
])
def test_a_tcpn_output_holding_anything_tcpn_did_not_write_is_never_replaced(
        tmp_path, change, named, why):
    out = tmp_path / "out"
    _tcpn_output(out)
    change(out)
    before = sorted((p.relative_to(out), p.is_file() and p.read_bytes())
                    for p in out.rglob("*"))
    with pytest.raises(OutputError) as info, atomic_directory(out, overwrite=True) as tmp:
        (tmp / "new").write_text("")
    assert f"{out} holds {out / named}, {why}" in str(info.value)
    assert sorted((p.relative_to(out), p.is_file() and p.read_bytes())
                  for p in out.rglob("*")) == before
    assert siblings(out) == []


def test_a_file_added_while_the_new_result_is_made_is_seen_and_kept(tmp_path):
    out = tmp_path / "out"
    _tcpn_output(out)
    with pytest.raises(OutputError) as info, atomic_directory(out, overwrite=True) as tmp:
        (tmp / "new").write_text("")
        (out / "notes.md").write_text("written during the run")
    assert f"{out} holds {out / 'notes.md'}, which tcpn did not write" in str(info.value)
    assert (out / "notes.md").read_text() == "written during the run"
    assert (out / "sub" / "a.csv").read_text() == "1\n" and siblings(out) == []


def test_a_removed_file_is_no_loss_and_the_directory_is_replaced(tmp_path):
    out = tmp_path / "out"
    _tcpn_output(out)
    (out / "sub" / "a.csv").unlink()
    with atomic_directory(out, overwrite=True) as tmp:
        (tmp / "new").write_text("")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "new"]


@pytest.mark.parametrize("marker", ['{"format": "tcpn-output/1"}\n', "", "not json",
                                    '{"format": "tcpn-output/2", "files": [1]}'])
def test_a_result_of_an_older_tcpn_or_a_damaged_marker_is_refused_not_guessed(
        tmp_path, marker):
    old = tmp_path / "old"
    old.mkdir()
    (old / MARKER).write_text(marker)  # tcpn before its marker listed the files it wrote
    (old / "result.json").write_text('{"format": "tcpn-result/1"}')
    with pytest.raises(OutputError) as info, atomic_directory(old, overwrite=True):
        pass
    assert f"{old}: its {MARKER} does not list the files tcpn wrote" in str(info.value)
    assert "move or delete it yourself" in str(info.value)
    assert sorted(p.name for p in old.iterdir()) == [MARKER, "result.json"]


# ---------------------------------------------------------------- leftovers of single files

KILLED_WRITE = """
import os, signal, sys
from tcpn.outputs import atomic_file
with atomic_file(sys.argv[1]) as tmp:
    tmp.write_text("half a table")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_partial_file_of_a_killed_write_is_removed_and_reported_next_time(tmp_path):
    path = tmp_path / "table.csv"
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(path)], timeout=60)
    assert killed.returncode == -signal.SIGKILL
    leftover = [p for p in tmp_path.iterdir() if p.name.startswith(".table.partial-")]
    assert len(leftover) == 1 and leftover[0].read_text() == "half a table"
    live = tmp_path / f".table.partial-{os.getppid()}.csv"  # pytest's parent runs
    live.write_text("being written")
    with pytest.warns(OutputWarning) as caught, atomic_file(path) as tmp:
        tmp.write_text("a\n")
    messages = " ".join(str(w.message) for w in caught)
    assert f"removed {leftover[0]}: the partial output of a write" in messages
    assert f"{live}: process {os.getppid()} is still writing {path}" in messages
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "table.csv"]
    assert path.read_text() == "a\n"


@pytest.mark.parametrize("writer", [atomic_directory, atomic_file])
def test_a_stop_asked_for_while_the_block_ran_leaves_no_result(tmp_path, writer):
    """A signal handler's exception that Python lost (raised inside a weak-reference
    callback: SIGTERM during an import, seen under load) is raised again before the result
    is moved into place: nothing appears, nothing partial is left."""
    from tcpn.interruption import request_stop

    target = tmp_path / "result"
    try:
        with pytest.raises(KeyboardInterrupt), writer(target) as tmp:
            (tmp / "a.csv" if writer is atomic_directory else tmp).write_text("a\n")
            request_stop(KeyboardInterrupt())  # the handler ran; its raise was swallowed
    finally:
        request_stop(None)
    assert sorted(tmp_path.iterdir()) == []
    with writer(target) as tmp:  # and nothing is held against the next command
        (tmp / "a.csv" if writer is atomic_directory else tmp).write_text("a\n")
    assert target.exists()
