"""tcpn's caches on disk (``tcpn.petrinets.engine.caches``): bounded, least recently used first,
safe to share between processes, shown and emptied by ``tcpn cache``.

The eviction order must follow last use (a hit counts), a trim must leave the cache
within its bound, a clear must empty it, processes reading, writing, trimming and
clearing at once must never fail nor read a removed entry, a loaded native module must
keep running when the cache is cleared, and the command must say what it did.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cli_process import run_tcpn as tcpn

from tcpn.petrinets.engine import codecache
from tcpn.petrinets.engine.caches import CODE, MB, NATIVE, BoundedCache
from tcpn.petrinets.engine.native import why_unavailable
from tcpn.petrinets.errors import InputError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path))
    return tmp_path


def entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if p.is_file())


def so(name: str) -> str:
    """A native module's file name as the cache names them."""
    return f"_tcpn_cnet_{name.encode().hex():0>24}.cpython-311-x86_64-linux-gnu.so"


def shape(name: str) -> str:
    return f"shapes/{name.encode().hex():0>32}.json"


def marshal(name: str) -> str:
    return f"{name.encode().hex():0>32}.marshal"


def fill(cache: BoundedCache, names: list[str], size: int = 10_000) -> None:
    """Entries named ``names``, last used one second apart in that order."""
    directory = cache.directory()
    assert directory is not None
    (directory / "shapes").mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        path = directory / name
        path.write_bytes(os.urandom(size))
        os.utime(path, ns=(1_000_000_000_000 + i * 10**9,) * 2)


def test_the_least_recently_used_entries_go_first_and_a_hit_counts(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [so(f"e{i}") for i in range(6)] + [shape("s0"), shape("s1")]
    fill(NATIVE, names)
    one = NATIVE.usage().bytes // len(names)  # disk usage per entry (blocks)
    assert NATIVE.used(root / "native" / so("e0"))  # the oldest, used now: the newest
    assert not NATIVE.used(root / "native" / so("missing"))
    monkeypatch.setenv("TCPN_NATIVE_CACHE_MB", str(4.5 * one / MB))
    trimmed = NATIVE.trim()
    assert trimmed is not None and trimmed.removed_entries == 4
    # removed: e1..e4 (oldest uses); kept: e5, the two shapes, and e0 (just used)
    assert entries(root / "native") == sorted(
        [so("e0"), so("e5"), shape("s0")[7:], shape("s1")[7:]])
    assert NATIVE.usage().bytes <= 4.5 * one


def test_a_trim_respects_the_bound_and_the_code_cache_trims_as_it_writes(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bound = 0.1 * MB
    monkeypatch.setenv("TCPN_CODE_CACHE_MB", str(bound / MB))
    sources = [f"def _f(x):\n    return x * {i} + {'1' * 2000}\n" for i in range(120)]
    for source in sources:
        namespace: dict[str, object] = {}
        exec(codecache.compile_cached(source, "<bound>"), namespace)
        assert namespace["_f"](0) == int("1" * 2000)  # type: ignore[operator]
    usage = CODE.usage()
    largest = max(p.stat().st_blocks * 512 for p in (root / "code").iterdir())
    # past its bound by at most what was written since the last trim (5 % of the bound)
    assert 0 < usage.bytes <= bound * 1.05 + largest
    assert usage.entries < len(sources)  # without the bound all 120 would be there
    kept = set(entries(root / "code"))
    newest = {codecache._entry(s, "<bound>").name for s in sources[-5:]}  # type: ignore[union-attr]
    assert newest <= kept  # the most recently written stay
    trimmed = CODE.trim()
    assert trimmed is not None and trimmed.bytes <= bound


def test_the_bytes_written_are_counted_across_processes(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writers (two caches' objects: what two processes share is the count beside the
    cache) each below the slack (5 % of the bound: 1.5 entries), together above it: the
    second trims."""
    fill(CODE, [marshal("c"), marshal("d")], size=3000)
    entry = (root / "code" / marshal("c")).stat().st_blocks * 512
    monkeypatch.setenv("TCPN_CODE_CACHE_MB", str(30 * entry / MB))
    first, second = (BoundedCache("code", "TCPN_CODE_CACHE_MB", 256, "", CODE.entry.pattern)
                     for _ in range(2))
    first.wrote(root / "code" / marshal("c"))
    assert first.trim_if_due(0.05) is None  # one entry of the slack's 1.5
    second.wrote(root / "code" / marshal("d"))
    trimmed = second.trim_if_due(0.05)  # two entries since the last trim, by the two
    assert trimmed is not None and trimmed.entries == 2
    assert (root / ".code.written").read_text().strip() == "0"


def test_a_stale_temporary_goes_a_fresh_one_stays(root: Path) -> None:
    fill(NATIVE, [so("a")])
    stale, fresh = root / "native" / ".build-old", root / "native" / ".build-now"
    for directory in (stale, fresh):
        directory.mkdir()
        (directory / "m.c").write_text("int x;")
    os.utime(stale, ns=(1_000_000_000,) * 2)
    part = root / "native" / "shapes" / "tmpx.part"
    part.write_text("{")
    os.utime(part, ns=(1_000_000_000,) * 2)
    NATIVE.trim()
    assert not stale.exists() and not part.exists() and fresh.exists()
    assert (root / "native" / so("a")).exists()  # within the bound


def test_clear_removes_every_entry_and_says_how_many(root: Path) -> None:
    fill(CODE, [marshal("a"), marshal("b")], size=5000)
    fill(NATIVE, [so("m")])
    for mine in ("code/notes.txt", "native/build.log", "native/shapes/x.json"):
        (root / mine).write_text("a user's file, not tcpn's")
    cleared = CODE.clear()
    assert (cleared.removed_entries, cleared.entries, cleared.bytes) == (2, 0, 0)
    assert cleared.removed_bytes >= 10_000
    assert entries(root / "code") == ["notes.txt"]
    assert entries(root / "native") == sorted([so("m"), "build.log", "x.json"])
    NATIVE.clear()
    assert entries(root / "native") == ["build.log", "x.json"]  # never another's file


def test_a_bad_bound_names_its_variable(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in ("lots", "-1", "nan", "inf"):
        monkeypatch.setenv("TCPN_NATIVE_CACHE_MB", text)
        with pytest.raises(InputError, match=r"\$TCPN_NATIVE_CACHE_MB="):
            NATIVE.bound_bytes()
    monkeypatch.setenv("TCPN_NATIVE_CACHE_MB", "2.5")
    assert NATIVE.bound_bytes() == 2_500_000
    monkeypatch.delenv("TCPN_NATIVE_CACHE_MB")
    assert NATIVE.bound_bytes() == 1024 * MB


def _processes(tmp_path: Path, scripts: dict[str, str], env: dict[str, str]
               ) -> dict[str, subprocess.CompletedProcess[str]]:
    """Runs the scripts at once, each in its own interpreter; their results by name."""
    environment = {**os.environ, "TCPN_CACHE_DIR": str(tmp_path / "cache"),
                   "PYTHONPATH": str(ROOT), **env}
    running = {name: subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                                      env=environment, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
               for name, script in scripts.items()}
    done = {}
    for name, process in running.items():
        out, err = process.communicate(timeout=600)
        done[name] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    return done


def test_processes_reading_writing_trimming_and_clearing_the_code_cache_at_once(
        tmp_path: Path) -> None:
    """Three processes compile 300 sources each (shared and their own) into a cache
    bounded to a few entries, while a fourth clears it in a loop: every code object they
    get computes what its source says."""
    worker = """
        import sys
        from tcpn.petrinets.engine.codecache import compile_cached
        me = sys.argv[1] if len(sys.argv) > 1 else "w"
        for round in range(3):
            for i in range(100):
                for owner in ("shared", me):
                    source = f"def _f(x):\\n    return x * {i} + {len(owner)}  # {owner}\\n"
                    namespace = {}
                    exec(compile_cached(source, "<" + owner + ">"), namespace)
                    assert namespace["_f"](2) == 2 * i + len(owner), (owner, i)
        print("ok")
    """
    clearer = """
        import time
        from tcpn.petrinets.engine.caches import CODE
        removed, end = 0, time.monotonic() + 4
        while time.monotonic() < end:
            removed += CODE.clear().removed_entries
        print("ok", removed)
    """
    done = _processes(tmp_path, {"a": worker.replace('"w"', '"a"'),
                                 "b": worker.replace('"w"', '"bb"'),
                                 "c": worker.replace('"w"', '"ccc"'), "clear": clearer},
                      {"TCPN_CODE_CACHE_MB": "0.02"})
    for name, run in done.items():
        assert run.returncode == 0, (name, run.stderr)
        assert run.stdout.startswith("ok"), (name, run.stdout)


LOADER = """
    import time
    from pathlib import Path
    from tcpn.petrinets.engine.caches import NATIVE
    from tcpn.petrinets.engine.codecache import write_atomically
    directory = NATIVE.directory()
    seen = built = 0
    for round in range(400):
        path = directory / f"_tcpn_cnet_{round % 7:024x}.so"
        with NATIVE.in_use():  # as build_native: look up, build if missing, load
            if not NATIVE.used(path):
                write_atomically(path, path.name.encode() * 100)
                built += 1
            time.sleep(0.002)  # a build of the other modules, a compiler's start
            assert path.read_bytes() == path.name.encode() * 100  # "load" it
            seen += 1
        if round % 10 == 9:
            NATIVE.trim_if_due()
    print("ok", seen, built)
"""


def test_processes_loading_from_the_native_cache_never_lose_an_entry_to_a_trim_or_clear(
        tmp_path: Path) -> None:
    """The native engine's protocol with real processes: two loaders look an entry up,
    write it if missing, and read it 2 ms later, in the cache's shared lock; every tenth
    round they trim the cache bounded to nothing, and a third process clears it in a
    loop. No loader may find its entry gone between the look-up and the read (without
    the lock one soon does)."""
    clearer = """
        import time
        from tcpn.petrinets.engine.caches import NATIVE
        removed, end = 0, time.monotonic() + 3
        while time.monotonic() < end:
            removed += NATIVE.clear(timeout_s=60).removed_entries
            time.sleep(0.001)
        print("ok", removed)
    """
    done = _processes(tmp_path, {"a": LOADER, "b": LOADER, "clear": clearer},
                      {"TCPN_NATIVE_CACHE_MB": "0"})
    for name, run in done.items():
        assert run.returncode == 0, (name, run.stderr)
        assert run.stdout.startswith("ok"), (name, run.stdout)
    assert int(done["clear"].stdout.split()[1]) > 0  # it did remove entries meanwhile
    assert sum(int(done[n].stdout.split()[2]) for n in "ab") > 14  # rebuilt after removals


def test_a_loaded_native_module_keeps_running_when_the_cache_is_cleared(
        tmp_path: Path) -> None:
    """A process runs a net on the native engine, the cache is cleared by ``tcpn cache
    clear`` meanwhile, and the process fires on with the module it loaded: the same
    firings as an uninterrupted run."""
    reason = why_unavailable()
    if reason is not None:
        pytest.skip(f"the native engine cannot be built here: {reason}")
    script = """
        import sys, time
        from pathlib import Path
        sys.path.insert(0, sys.argv[1])  # the tests directory
        from test_native import counter_net
        from tcpn.petrinets import Simulator
        from tcpn.petrinets.engine.monitors import FiringRecord
        signal = Path(sys.argv[2])
        record = FiringRecord()
        sim = Simulator(counter_net("q"), seed=5, monitors=[record], engine="native")
        assert sim.native.engine == "native"
        sim.run(max_firings=3)
        signal.write_text("loaded")
        while signal.read_text() != "cleared":
            time.sleep(0.05)
        sim.run()
        print(sim.native.backend, record.firings)
    """
    signal = tmp_path / "signal"
    env = {**os.environ, "TCPN_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    running = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script),
                                str(ROOT / "tests"), str(signal)], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(6000):
            if signal.exists() and signal.read_text() == "loaded":
                break
            if running.poll() is not None:
                break
            time.sleep(0.1)
        assert list((tmp_path / "cache" / "native").glob("*.so"))
        cleared = tcpn("cache", "clear", "native", env=env)
        assert cleared.returncode == 0, cleared.stderr
        assert not list((tmp_path / "cache" / "native").glob("*.so"))
        signal.write_text("cleared")
        out, err = running.communicate(timeout=600)
    finally:
        running.kill()
    assert running.returncode == 0, err
    from test_native import counter_net  # the tests directory is on pytest's path

    from tcpn.petrinets import Simulator
    from tcpn.petrinets.engine.monitors import FiringRecord

    record = FiringRecord()
    Simulator(counter_net("q"), seed=5, monitors=[record], engine="python").run()
    assert out.strip() == f"c {record.firings}"


def test_the_cache_command_shows_and_clears_each_cache(tmp_path: Path) -> None:
    env = {"TCPN_CACHE_DIR": str(tmp_path)}
    (tmp_path / "code").mkdir()
    (tmp_path / "native" / "shapes").mkdir(parents=True)
    for name in ("code/" + marshal("a"), "code/" + marshal("b"), "native/" + so("m"),
                 "native/" + shape("s")):
        (tmp_path / name).write_bytes(b"x" * 5000)
    info = tcpn("cache", "info", env=env)
    assert info.returncode == 0, info.stderr
    rows = {cells[1]: line for line in info.stdout.splitlines()  # the table's rows
            if (cells := line.split())[:1] in (["│"], ["|"])
            and cells[1:2] in (["code"], ["native"])}
    assert "native: native engine modules built by the C compiler" in info.stdout
    assert str(tmp_path / "code") in rows["code"] and "$TCPN_CODE_CACHE_MB" in rows["code"]
    assert " 2 " in rows["code"] and " 2 " in rows["native"] and "1,024.0 MB" in rows["native"]
    cleared = tcpn("cache", "clear", "native", env=env)
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.startswith("native: removed 2 entries")
    assert entries(tmp_path / "native") == [] and len(entries(tmp_path / "code")) == 2
    assert tcpn("cache", "clear", env=env).stdout.startswith("code: removed 2 entries")
    assert entries(tmp_path / "code") == []


def test_the_cache_command_teaches_and_refuses_bad_input(tmp_path: Path) -> None:
    env = {"TCPN_CACHE_DIR": str(tmp_path)}
    helped = tcpn("cache", "--help", env=env)
    assert helped.returncode == 0
    for words in ("$TCPN_CODE_CACHE_MB", "$TCPN_NATIVE_CACHE_MB", "least", "info", "clear"):
        assert words in helped.stdout
    assert "--wait" in tcpn("cache", "clear", "--help", env=env).stdout
    wrong = tcpn("cache", "clear", "everything", env=env)
    assert wrong.returncode == 2 and "not one of code, native" in wrong.stderr
    bad = tcpn("cache", "info", env={**env, "TCPN_CODE_CACHE_MB": "big"})
    assert bad.returncode == 3
    assert bad.stderr.strip() == ("tcpn: invalid input: $TCPN_CODE_CACHE_MB='big': the code "
                                  "cache's bound must be a number of megabytes >= 0 "
                                  "(default 256)")
