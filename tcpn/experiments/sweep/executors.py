"""Where a campaign's runs execute: this process, local worker processes, or Dask.

Any :class:`concurrent.futures.Executor` will do; these make the usual ones. A Dask
cluster is reached through :meth:`distributed.Client.get_executor`, so the campaign's
code is the same on a laptop and on a cluster.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import logging
import multiprocessing
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from tcpn.errors import InputError, TcpnError
from tcpn.workers import end_pool, process_pool

__all__ = ["InlineExecutor", "dask_executor", "executor_for", "local_executor"]


class InlineExecutor(cf.Executor):
    """Runs each task in this process when it is submitted (one worker, no pickling)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # the future carries it, as a pool's would
            future.set_exception(exc)
        return future


def local_executor(workers: int) -> cf.Executor:
    """``workers`` local processes; one worker runs in this process.

    The workers leave Ctrl-C and SIGTERM to the campaign, which ends them, and end with
    it (:mod:`tcpn.workers`: the same rule as every local pool of tcpn).

    Where the platform can fork, the workers are forked at once, here, so that they start
    with tcpn already imported (milliseconds, not seconds per worker) and before a
    progress bar starts its thread; elsewhere they are spawned.
    """
    if workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    if workers == 1:
        return InlineExecutor()
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    pool = process_pool(workers, method)
    pool.submit(int).result()  # starts the workers now
    return pool


@contextlib.contextmanager
def dask_executor(address: str, workers: int | None = None, timeout_s: float = 10.0,
                  ) -> Iterator[cf.Executor]:
    """An executor on a Dask cluster: ``"local"`` starts a ``LocalCluster`` of ``workers``
    single-threaded processes; ``"tcp://host:8786"`` connects to a running scheduler (a
    clear error after ``timeout_s`` when it does not answer)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise TcpnError("--dask needs Dask distributed: pip install 'tcpn[dist]'") from None
    cluster = None
    if address == "local":
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        if not re.fullmatch(r"(tcp|tls|ws|wss|inproc|ucx)://[^\s/]+", address):
            raise InputError(f"--dask {address!r}: give 'local' or a scheduler address such "
                             "as tcp://scheduler:8786")
        try:
            client = Client(address, timeout=f"{timeout_s}s")
        except (OSError, TimeoutError) as exc:
            raise TcpnError(f"cannot reach the Dask scheduler at {address} within "
                            f"{timeout_s:g} s ({type(exc).__name__}); is it running, and "
                            "is the address right?") from None
        except Exception as exc:  # something answered, but not as a Dask scheduler does
            raise TcpnError(f"{address} does not answer as a Dask scheduler "
                            f"({type(exc).__name__}: {str(exc)[:120]})") from None
    try:
        yield client.get_executor(pure=False)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


@contextlib.contextmanager
def executor_for(workers: int = 1, dask: str | None = None, timeout_s: float = 10.0,
                 ) -> Iterator[cf.Executor]:
    """The executor the command line asks for: Dask when ``dask`` is given, else
    ``workers`` local processes; shut down on exit (pending runs cancelled)."""
    if dask is not None:
        with dask_executor(dask, workers, timeout_s) as executor:
            yield executor
        return
    executor = local_executor(workers)
    try:
        yield executor
    except BaseException:
        _stop(executor)
        raise
    executor.shutdown(wait=True)


def _stop(executor: cf.Executor) -> None:
    """Cancel what is queued and end the worker processes now (after Ctrl-C or an error):
    a run cut short is simply not stored, and the next campaign runs it again."""
    # no public handle on the processes before Python 3.14; shutdown() drops this one
    end_pool(executor, list((getattr(executor, "_processes", None) or {}).values()))
