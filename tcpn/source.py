"""Which tcpn computes: its version and a digest of the source that computes results.

A stored run is reused only by the same code: ``0.1.0`` names a release, not the model that
ran (a changed rule in a sender, a queue or the ns-3 glue changes results while the version
stays). :func:`source_id` adds a digest of the package's own computing source (Python,
Cython, C and C++ files; not templates or docs), so a campaign store or a Dask worker never
mixes runs of two different models under one name.

>>> source_id().startswith(__version__ + "+") and len(source_id().split("+")[1]) == 12
True
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from tcpn import __version__

__all__ = ["SOURCE_SUFFIXES", "source_digest", "source_id"]

#: The files whose content decides what tcpn computes.
SOURCE_SUFFIXES = (".py", ".pyx", ".c", ".h")


@functools.cache
def source_id() -> str:
    """``<version>+<12 hex digits>``: the version and the :func:`source_digest` of this
    package; computed once per process (about 3 MB read)."""
    return f"{__version__}+{source_digest(Path(__file__).resolve().parent)[:12]}"


def source_digest(package: Path) -> str:
    """The SHA-256 (hex) of every computing source file under ``package`` (relative path
    and bytes, in path order)."""
    digest = hashlib.sha256()
    files = sorted(p for p in package.rglob("*")
                   if p.suffix in SOURCE_SUFFIXES and p.is_file()
                   and "__pycache__" not in p.parts)
    for path in files:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()
