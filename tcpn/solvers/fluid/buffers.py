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
"""

from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["HISTORIES", "BufferPool"]


class BufferPool:
    """Up to ``keep`` float64 buffers; :meth:`take` returns an array backed by a free one."""

    def __init__(self, keep: int = 4):
        self.keep = keep
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
            # Forget free buffers beyond ``keep``, the smallest first.
            spare = sorted((i for i in free if self._buffers[i] is not buffer),
                           key=lambda i: self._buffers[i].size)
            drop = set(spare[:max(0, len(self._buffers) - self.keep)])
            if drop:
                self._buffers = [b for i, b in enumerate(self._buffers) if i not in drop]
            return buffer[:size].reshape(columns, rows).T

    def _free(self, i: int) -> bool:
        # References: the list's and getrefcount's argument; any other is a holder's.
        return sys.getrefcount(self._buffers[i]) == 2


#: The pool of the fluid solvers' histories (one per process).
HISTORIES = BufferPool()
