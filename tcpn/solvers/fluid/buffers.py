"""Float arrays for a solver's histories, reused once nothing refers to them any more.

A fresh history is fresh memory: the kernel maps it page by page, zeroing each page (and,
with large folios, tens of kilobytes around each column it touches) before the solver
writes it. On ``red_100flows`` that zeroing was 5 to 7 ms of a 14 to 16 ms solve: 100
classes' columns, each touched over its first seconds only. :class:`BufferPool` keeps the
memory of histories nobody holds any more and hands it out again, so a second solve in the
same process (the accuracy check's run, the next run of a study) writes into pages already
mapped.

A buffer is free when the pool's own reference is the only one left: a trajectory, and
every view taken of its arrays, refers to the buffer (NumPy views keep their base), so a
history is never reused while something can still read it.

The pool is bounded in count and in bytes, so that a long-lived process (a Dask worker, a
Jupyter kernel) does not keep large histories for ever: it keeps at most ``keep`` buffers
of at most ``keep_bytes`` in all (``$TCPN_FLUID_POOL_MB`` megabytes, else
:data:`DEFAULT_KEEP_MB`); a history that would pass the bound is fresh memory, freed when
its run is. The default keeps a ``red_100flows`` solve's four histories (110 MB, the
largest shipped scenario's; its run and its accuracy check at twice the step), so its
speed stays; :meth:`BufferPool.release` gives the free ones back at once.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

from tcpn.errors import InputError

__all__ = ["DEFAULT_KEEP_MB", "HISTORIES", "KEEP_VARIABLE", "BufferPool"]

#: the pool's bound in megabytes (10^6 bytes) unless ``$TCPN_FLUID_POOL_MB`` says otherwise
DEFAULT_KEEP_MB = 128
KEEP_VARIABLE = "TCPN_FLUID_POOL_MB"


def _keep_bytes_from_environment() -> int:
    text = os.environ.get(KEEP_VARIABLE, "").strip()
    if not text:
        return DEFAULT_KEEP_MB * 1_000_000
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise InputError(f"${KEEP_VARIABLE}={text!r}: the fluid solver's history pool "
                         f"bound must be a number of megabytes >= 0 (default "
                         f"{DEFAULT_KEEP_MB})")
    return int(value * 1_000_000)


class BufferPool:
    """Up to ``keep`` float64 buffers of at most ``keep_bytes`` in all (``None``:
    ``$TCPN_FLUID_POOL_MB``, read at each :meth:`take`); :meth:`take` returns an array
    backed by a free one."""

    def __init__(self, keep: int = 4, keep_bytes: int | None = None):
        self.keep = keep
        self.keep_bytes = keep_bytes
        self._buffers: list[np.ndarray] = []
        # solves may run in threads (a Dask worker's): choosing a free buffer and taking
        # a view of it must not interleave, or two solves would write one history
        self._lock = threading.Lock()

    def take(self, rows: int, columns: int) -> np.ndarray:
        """An uninitialised (rows, columns) column-major float64 array."""
        with self._lock:
            size = rows * columns
            free = [i for i in range(len(self._buffers)) if self._free(i)]
            fits = [i for i in free if self._buffers[i].size >= size]
            if fits:
                buffer = self._buffers[min(fits, key=lambda i: self._buffers[i].size)]
            else:
                buffer = np.empty(size)
                self._buffers.append(buffer)
            # Forget free buffers beyond ``keep`` or the bytes bound, the smallest first;
            # then, if still beyond, the new buffer (its run holds it as long as it needs)
            limit = self.keep_bytes if self.keep_bytes is not None \
                else _keep_bytes_from_environment()
            count, total = len(self._buffers), sum(b.nbytes for b in self._buffers)
            drop = set()
            for i in sorted((i for i in free if self._buffers[i] is not buffer),
                            key=lambda i: self._buffers[i].size):
                if count <= self.keep and total <= limit:
                    break
                drop.add(i)
                count, total = count - 1, total - self._buffers[i].nbytes
            if not fits and (count > self.keep or total > limit):
                drop.add(len(self._buffers) - 1)
            if drop:
                self._buffers = [b for i, b in enumerate(self._buffers) if i not in drop]
            return buffer[:size].reshape(columns, rows).T

    def release(self) -> int:
        """Forgets every free buffer (their memory goes back when nothing else holds it);
        returns the bytes forgotten."""
        with self._lock:
            free = [i for i in range(len(self._buffers)) if self._free(i)]
            released = sum(self._buffers[i].nbytes for i in free)
            self._buffers = [b for i, b in enumerate(self._buffers) if i not in set(free)]
            return released

    @property
    def kept_bytes(self) -> int:
        """The bytes of the buffers the pool refers to (free or in use)."""
        with self._lock:
            return sum(b.nbytes for b in self._buffers)

    def _free(self, i: int) -> bool:
        # References: the list's and getrefcount's argument; any other is a holder's.
        return sys.getrefcount(self._buffers[i]) == 2


#: The pool of the fluid solvers' histories (one per process).
HISTORIES = BufferPool()
