"""Loads ns-3 lean: only the modules a TCP study needs, plus tcpn's own C++ classes.

``from ns import ns`` parses all 42 module headers (8-13 s, 640 MB) after a recursive glob
of the working directory for libraries (it hangs when started from ``/``).
:func:`load_ns3` includes only :data:`MODULES` (about 2-3 s, 300 MB), from a scratch
working directory, then compiles tcpn's C++ sources (``cpp/*.h``: recorders, apps, queue
disc, error model, variants) with cppyy and registers their TypeIds. The two harmless
``[runStaticInitializersOnce]: Failed to materialize symbols`` lines of cling are filtered
out of stderr (see ``../shared/design/ns3-notes.md`` §0); anything else is passed on.

>>> installed()  # doctest: +SKIP
True
"""

from __future__ import annotations

import contextlib
import functools
import glob
import importlib.metadata
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tcpn.errors import TcpnError
from tcpn.scratch import scratch

__all__ = ["CPP_SOURCES", "MODULES", "Ns3NotInstalled", "installed", "load_ns3",
           "ns3_version"]

MODULES = ("core", "network", "traffic-control", "internet", "point-to-point",
           "applications", "flow-monitor")
"""ns-3 modules whose headers and libraries are loaded (dependencies first)."""

CPP_DIR = Path(__file__).with_name("cpp")
CPP_SOURCES = ("recorders.h", "queues.h", "variants.h", "apps.h", "build.h")
"""tcpn's C++ sources, compiled in this order into namespace ``tcpn``."""

_HARMLESS = ("[runStaticInitializersOnce]: Failed to materialize symbols",)

IMPORT_SECONDS: dict[str, float] = {}
"""Wall time of the last :func:`load_ns3` in this process (``"import_s"``)."""


class Ns3NotInstalled(TcpnError):
    """The ``ns3`` extra is missing."""

    def __init__(self, message: str = "the ns3 lens needs ns-3's Python bindings: "
                 "pip install 'tcpn[ns3]'") -> None:
        # the message is an argument so that the error crosses a process pool (pickling
        # re-creates it with its args)
        super().__init__(message)


def installed() -> bool:
    """Whether the ``ns3`` wheel and cppyy are importable (without importing them).

    >>> isinstance(installed(), bool)
    True
    """
    return all(importlib.util.find_spec(m) is not None for m in ("cppyy", "ns3"))


def ns3_version() -> str:
    """Version of the installed ``ns3`` wheel, e.g. ``"3.44.post0"``."""
    try:
        return importlib.metadata.version("ns3")
    except importlib.metadata.PackageNotFoundError:
        raise Ns3NotInstalled() from None


@contextlib.contextmanager
def _scratch_cwd() -> Iterator[None]:
    """Run in an empty temporary directory: cppyy and ns-3 glob the working directory."""
    old = os.getcwd()
    with scratch("ns3-cwd") as tmp:
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(old)


@contextlib.contextmanager
def _filtered_stderr() -> Iterator[None]:
    """Capture fd 2 (C++ writes there too) and re-emit all but the known harmless lines."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            for line in capture.read().decode(errors="replace").splitlines():
                if line.strip() and not line.startswith(_HARMLESS):
                    print(line, file=sys.stderr)


@functools.cache
def load_ns3() -> Any:
    """The ``ns3`` C++ namespace (cppyy), loaded once per process; tcpn's classes are in
    ``cppyy.gbl.tcpn``. Raises :class:`Ns3NotInstalled` without the extra."""
    if not installed():
        raise Ns3NotInstalled()
    start = time.perf_counter()
    with _scratch_cwd(), _filtered_stderr():
        import cppyy
        import libcppyy
        import ns3 as wheel  # the namespace package that holds include/ and lib64/

        prefix = Path(next(iter(wheel.__path__)))
        lib = prefix / "lib64"
        libcppyy.AddSmartPtrType("Ptr")
        cppyy.add_library_path(str(lib))
        cppyy.add_include_path(str(prefix / "include"))
        cppyy.add_include_path(str(CPP_DIR))
        cppyy.cppexec("#define HAVE_GSL 1\n#define HAVE_SQLITE3 1\n#define HAVE_LIBXML2 1\n")
        for module in MODULES:
            cppyy.include(f"ns3/{module}-module.h")
        for module in MODULES:
            (library,) = glob.glob(str(lib / f"libns3.*-{module}.so"))
            cppyy.load_library(library)
        for source in CPP_SOURCES:
            cppyy.include(source)
        cppyy.gbl.tcpn.RegisterTypes()  # JIT code runs no static initialiser to do it
    IMPORT_SECONDS["import_s"] = time.perf_counter() - start
    return cppyy.gbl.ns3
