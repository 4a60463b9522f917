"""Local worker processes that stop when told: at Ctrl-C, SIGTERM, an error, or their parent's end.

A :class:`concurrent.futures.ProcessPoolExecutor` shut down after an interruption waits
for the runs its workers have started (and, in Python 3.11, a worker that receives the
terminal's Ctrl-C reports it as the run's error and takes the next run). Here the workers
ignore Ctrl-C, the parent terminates them at once on any exception or interruption, and
on Linux a worker also ends when its parent is killed (``PR_SET_PDEATHSIG``), so no run
outlives the command that started it.

>>> results = {}
>>> run_in_workers(pow, [(2, 3), (3, 2)], 2, lambda i, r: results.__setitem__(i, r))
>>> results == {0: 8, 1: 9}
True
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import multiprocessing as mp
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["end_pool", "process_pool", "run_in_workers"]

_PR_SET_PDEATHSIG = 1


def _worker_signals(parent_pid: int) -> None:
    """In a worker: Ctrl-C and SIGTERM are the parent's to handle (it terminates us), and
    on Linux the worker ends with its parent, even a parent killed by SIGKILL."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)


def process_pool(workers: int, start_method: str | None = None) -> cf.ProcessPoolExecutor:
    """A pool of ``workers`` processes that leave Ctrl-C and SIGTERM to this process and end
    with it (the module's rule; every local pool of tcpn is made here). ``start_method``:
    ``"fork"`` or ``"spawn"``, the platform's default when None."""
    context = None if start_method is None else mp.get_context(start_method)
    return cf.ProcessPoolExecutor(max_workers=workers, initializer=_worker_signals,
                                  initargs=(os.getpid(),), mp_context=context)


def run_in_workers(func: Callable[..., Any], jobs: Sequence[tuple[Any, ...]], workers: int,
                   on_result: Callable[[int, Any], None]) -> None:
    """Run ``func(*job)`` for every job in ``workers`` processes and call
    ``on_result(index, result)`` in this process as each completes (any order).

    An exception in a job, in ``on_result`` or an interruption terminates the workers at
    once and is raised here.
    """
    before = set(mp.active_children())
    pool = process_pool(workers)
    try:
        futures = {pool.submit(func, *job): i for i, job in enumerate(jobs)}
        for future in cf.as_completed(futures):
            on_result(futures[future], future.result())
    except BaseException:
        end_pool(pool, [p for p in mp.active_children() if p not in before])
        raise
    pool.shutdown()


def end_pool(pool: cf.Executor, processes: Sequence[Any]) -> None:
    """End ``pool`` now: terminate its worker ``processes`` (killed after 5 s), cancel what
    is queued and wait for its manager thread to finish.

    The wait matters at exit: the manager thread closes the pool's wake-up pipe while
    Python's exit hook writes to it, unlocked in CPython 3.11, so a command interrupted
    while the thread was still closing printed a "Bad file descriptor" traceback.
    """
    manager = getattr(pool, "_executor_manager_thread", None)  # no public handle
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=5.0)
        if process.is_alive():
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is not None:
        manager.join(timeout=10.0)
