"""The net lens's trace monitor compiled, for runs on the native engine.

The trace monitor's handlers (:class:`tcpn.lenses.net.TraceMonitor`) run in Python once
per firing of a traced transition: measured 0.45 s of a 3.2 s native run of the 100
Mbit/s dumbbell (5 s simulated), about 14 % of it. Cython compiles
``tcpn/lenses/net.py`` unchanged (the same code, as the native engine compiles the
simulator's loop), built once per machine into the native engine's cache
(:func:`~tcpn.petrinets.engine.native.build_compiled_python`, keyed by the source);
its monitor writes the same trace (``tests/test_compiled_trace.py``) at about a fifth
of the cost. Runs on the Python engine (``TCPN_ENGINE=python``, the reference) keep the
Python monitor, and so does any run where the module cannot be built (no compiler: the
simulator says why, once).
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path
from typing import TypeVar

from tcpn.petrinets.engine.native import (
    SIMULATOR_DEFAULT,
    build_compiled_python,
    resolve_engine,
)

__all__ = ["compiled_trace_monitor", "trace_monitor_class"]

#: the Cython directives of the compiled module (those of the native engine's loop)
_HEADER = "# cython: language_level=3, binding=True, annotation_typing=False\n"
_log = logging.getLogger("tcpn.native")

M = TypeVar("M")


#: ``tcpn.lenses.net.float_rows`` typed for Cython: the buffered numbers read one by one
#: as C doubles (what NumPy computes for floats, ints and bools: the double nearest the
#: value), where ``np.array`` of a list finds each item's type and packs it through its
#: generic path: 9 % of the machine instructions of a 10 Mbit/s dumbbell run's loop,
#: counted. A value that is not a number is left to NumPy, as in Python. Its indices stay
#: below the list's length, which nothing changes meanwhile: no bounds checks.
_ROWS_SOURCE = _HEADER.replace("\n", ", boundscheck=False, wraparound=False\n") + """
import numpy as np

def float_rows(list values, Py_ssize_t width):
    cdef Py_ssize_t i, n = len(values)
    block = np.empty(n, dtype=np.float64)
    cdef double[::1] out = block
    try:
        for i in range(n):
            out[i] = values[i]
    except TypeError:
        return np.array(values, dtype=np.float64).reshape(-1, width)
    return block.reshape(-1, width)
"""


@cache
def compiled_trace_monitor() -> type | None:
    """The ``TraceMonitor`` of ``tcpn/lenses/net.py`` compiled (built on first use, then
    cached), or ``None`` where it cannot be built."""
    source = _HEADER + Path(__file__).with_name("net.py").read_text(encoding="utf-8")
    module = build_compiled_python(source, "trace")
    if isinstance(module, str):
        _log.info("the trace monitor stays in Python: %s", module)
        return None
    rows = build_compiled_python(_ROWS_SOURCE, "rows")
    if not isinstance(rows, str):
        module.__dict__["float_rows"] = rows.float_rows  # the monitor reads its rows by it
    monitor: type = module.TraceMonitor
    return monitor


def trace_monitor_class(python_class: type[M]) -> type[M]:
    """The monitor class a run uses: the compiled one unless the engine is ``python``
    (``$TCPN_ENGINE``; the simulator's default runs native) or it cannot be built."""
    if resolve_engine(None, SIMULATOR_DEFAULT) == "python":
        return python_class
    compiled = compiled_trace_monitor()
    return python_class if compiled is None else compiled
