"""Runs ns-3 work in a worker process, so that an ns-3 abort never takes the caller down.

An ``NS_ASSERT`` or ``NS_FATAL`` in ns-3 calls ``abort()``: no Python exception, the whole
interpreter dies. :class:`Ns3Worker` loads ns-3 once in a separate process and runs each
job there; with ``isolate=True`` (the default) every job runs in a child forked from the
loaded (and warmed-up) worker, so a job starts in a clean ns-3 whose JIT-compiled code is
already there, and a crash kills only that child. A crashed or hung job raises
:class:`Ns3Crash` / :class:`Ns3Timeout` naming the job and quoting ns-3's last stderr
lines; the worker goes on serving (or is restarted on the next call).

A job is a picklable top-level function and its arguments; its result comes back pickled.
:func:`shared_worker` is one worker per process, started on first use and stopped at exit.
:func:`jobs_cpu_s` counts the CPU time of the jobs this process's workers ran (the job's
forked child, measured when it is reaped), which the caller's own CPU clock never sees.

>>> with Ns3Worker(load=False) as worker:
...     worker.call(divmod, 17, 5, label="arithmetic")
(3, 2)
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import pickle
import select
import shutil
import signal
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tcpn.errors import TcpnError
from tcpn.scratch import scratch_directory

__all__ = ["Ns3Crash", "Ns3Timeout", "Ns3Worker", "Ns3WorkerError", "jobs_cpu_s",
           "shared_worker"]

_jobs_cpu_s = 0.0  # the CPU seconds of every job this process's workers ran


def jobs_cpu_s() -> float:
    """CPU seconds (user and system) of the ns-3 jobs this process's workers have run."""
    return _jobs_cpu_s

_HARMLESS = "[runStaticInitializersOnce]"
_TAIL_LINES = 15


class Ns3WorkerError(TcpnError):
    """An ns-3 job did not return: the worker or its child died, or time ran out."""


class Ns3Crash(Ns3WorkerError):
    """The process running a job died (ns-3 aborted, or a signal killed it)."""


class Ns3Timeout(Ns3WorkerError):
    """A job ran longer than its time limit and was killed."""


def _log_tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    kept = [line for line in lines if line.strip() and not line.startswith(_HARMLESS)]
    return "\n".join(kept[-_TAIL_LINES:])


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        return f"killed by {signal.Signals(number).name}"
    return f"exited with status {os.WEXITSTATUS(status)} without a result"


@contextlib.contextmanager
def _output_to(path: str) -> Iterator[None]:
    """Send fds 1 and 2 (ns-3's C++ messages too) to ``path`` while a job runs."""
    saved = [os.dup(1), os.dup(2)]
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        for target, old in zip((1, 2), saved, strict=True):
            os.dup2(old, target)
            os.close(old)


def _default_crash_signals() -> None:
    """Undo cppyy's crash handlers (they run gdb and exit with 133): an ns-3 abort then
    ends the process with SIGABRT, which the caller reports."""
    for number in (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE,
                   signal.SIGILL):
        signal.signal(number, signal.SIG_DFL)


def _outcome(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "ok", fn(*args)
    except Exception as exc:
        exc.add_note("in the ns-3 worker:\n" + traceback.format_exc())
        try:
            pickle.dumps(exc)
        except Exception:
            return "error", TcpnError(f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        return "error", exc


def _run_here(fn: Callable[..., Any], args: tuple[Any, ...], log: str,
              ) -> tuple[str, Any, float]:
    start = time.process_time()
    with _output_to(log):
        kind, payload = _outcome(fn, args)
    return kind, payload, time.process_time() - start


def _reap(pid: int) -> tuple[int, float]:
    """Wait for child ``pid``: its exit status and the CPU seconds it used."""
    _, status, usage = os.wait4(pid, 0)
    return status, usage.ru_utime + usage.ru_stime


def _run_forked(fn: Callable[..., Any], args: tuple[Any, ...], log: str,
                timeout_s: float | None) -> tuple[str, Any, float]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, pickle the outcome into the pipe, leave without cleanup
        os.close(read_end)
        try:
            with _output_to(log):
                payload = pickle.dumps(_outcome(fn, args))
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([pipe], [], [], wait)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                return "timeout", timeout_s, _reap(pid)[1]
            chunk = os.read(pipe.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    status, cpu_s = _reap(pid)
    if not chunks:
        return "crashed", _describe(status), cpu_s
    kind, payload = pickle.loads(b"".join(chunks))
    return kind, payload, cpu_s


def _serve(conn: Connection, isolate: bool, load: bool, warm: bool) -> None:
    """The worker's main loop: load ns-3, warm up, then run jobs until told to stop."""
    try:
        if load:
            from tcpn.lenses.ns3.loader import IMPORT_SECONDS, load_ns3

            load_ns3()
            _default_crash_signals()
            if warm:
                from tcpn.lenses.ns3.builder import warm_up

                warm_up()
            conn.send(("ready", dict(IMPORT_SECONDS)))
        else:
            conn.send(("ready", {}))
    except Exception as exc:
        conn.send(("error", exc))
        return
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        fn, args, log, timeout_s, prepare = message
        if prepare is not None:
            prepare(*args)
        if isolate:
            conn.send(_run_forked(fn, args, log, timeout_s))
        else:
            conn.send(_run_here(fn, args, log))


class Ns3Worker:
    """A process with ns-3 loaded that runs jobs (see the module docstring).

    ``isolate``: fork a child per job (crash isolation, clean state) or run jobs in the
    worker itself; ``start_method``: how the worker starts (``"spawn"``, ``"forkserver"``
    or ``"fork"``); ``load``/``warm``: load ns-3 and run a tiny simulation at start, so
    forked jobs inherit the compiled code; ``timeout_s``: default time limit of a job.
    """

    def __init__(self, *, isolate: bool = True, start_method: str = "spawn",
                 load: bool = True, warm: bool = True, timeout_s: float | None = None):
        self.isolate = isolate
        self.start_method = start_method
        self.load = load
        self.warm = warm
        self.timeout_s = timeout_s
        self.startup: dict[str, float] = {}
        self._logs = scratch_directory("ns3-worker")
        weakref.finalize(self, shutil.rmtree, self._logs, True)
        self._jobs = 0
        self._lock = threading.Lock()
        self._process: Any = None
        self._conn: Connection | None = None
        self._owner_pid = os.getpid()

    def _start(self) -> Connection:
        if self._owner_pid != os.getpid():
            # inherited through a fork (e.g. a replication pool): the worker process and
            # its pipe belong to the parent, which still uses them; start our own
            self._process, self._conn, self._owner_pid = None, None, os.getpid()
            self._lock = threading.Lock()
        if self._conn is not None and self._process is not None and self._process.is_alive():
            return self._conn
        self._stop_process()
        context: Any = multiprocessing.get_context(self.start_method)
        parent, child = context.Pipe()
        log = self._logs / "startup.log"
        process = context.Process(target=_serve, args=(child, self.isolate, self.load,
                                                       self.warm), daemon=True)
        with _output_to(str(log)):
            start = time.perf_counter()
            process.start()
        child.close()
        try:
            kind, payload = parent.recv()
        except EOFError:
            process.join()
            raise Ns3Crash(f"the ns-3 worker died while loading ns-3 (exit code "
                           f"{process.exitcode}):\n{_log_tail(log)}") from None
        if kind == "error":
            process.join()
            raise payload
        self.startup = {**payload, "startup_s": time.perf_counter() - start}
        self._process, self._conn = process, parent
        return parent

    def call(self, fn: Callable[..., Any], *args: Any, label: str = "ns-3 job",
             timeout_s: float | None = None,
             prepare: Callable[..., None] | None = None) -> Any:
        """Run ``fn(*args)`` in the worker and return its result; its exceptions are
        re-raised here. ``label`` names the job in errors (e.g. the scenario).
        ``prepare(*args)`` runs in the worker itself before the job is forked: what it
        compiles stays for every later job (a forked job's JIT output dies with it)."""
        limit = self.timeout_s if timeout_s is None else timeout_s
        with self._lock:
            conn = self._start()
            self._jobs += 1
            log = self._logs / f"job-{os.getpid()}-{self._jobs}.log"
            conn.send((fn, args, str(log), limit if self.isolate else None, prepare))
            # a forked job times itself out; the worker answers shortly after
            grace = None if limit is None else limit + (5.0 if self.isolate else 0.0)
            if not conn.poll(grace):
                self._stop_process()
                raise Ns3Timeout(f"{label}: ns-3 ran longer than {limit:g} s and was "
                                 f"stopped\n{_log_tail(log)}")
            try:
                kind, payload, cpu_s = conn.recv()
            except EOFError:
                self._process.join()
                status = self._process.exitcode
                self._stop_process()
                raise Ns3Crash(f"{label}: the ns-3 worker died (exit code {status})"
                               f"\n{_log_tail(log)}") from None
        global _jobs_cpu_s
        _jobs_cpu_s += cpu_s
        if kind == "ok":
            return payload
        if kind == "error":
            raise payload
        if kind == "timeout":
            raise Ns3Timeout(f"{label}: ns-3 ran longer than {payload:g} s and was "
                             f"stopped\n{_log_tail(log)}")
        raise Ns3Crash(f"{label}: ns-3 crashed ({payload})\n{_log_tail(log)}")

    def _stop_process(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.send(None)
            self._conn.close()
        if self._process is not None:
            self._process.join(timeout=5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
        self._process, self._conn = None, None

    def close(self) -> None:
        """Stop the worker process and remove its logs."""
        self._stop_process()
        shutil.rmtree(self._logs, ignore_errors=True)

    def __enter__(self) -> Ns3Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_SHARED: dict[str, Ns3Worker] = {}


def shared_worker() -> Ns3Worker:
    """The process's shared worker (isolated jobs, warmed up), started on first use.

    >>> shared_worker() is shared_worker()
    True
    """
    if "worker" not in _SHARED:
        _SHARED["worker"] = Ns3Worker()
        atexit.register(_SHARED["worker"].close)
    return _SHARED["worker"]
