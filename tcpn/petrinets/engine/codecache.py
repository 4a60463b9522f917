"""The compiled code of the compiler's generated sources, kept on disk between processes.

:func:`~tcpn.petrinets.engine.compiler.compile_net` generates Python source for every transition
and compiles it; a fresh process that builds the same net (every run of a study, every
benchmark round) compiles the same sources again. ``compile()`` of the reference
dumbbell's 84 transitions costs about 0.12 s of CPU, a tenth of its 20 s net lens run
(benchmarks/README.md, Session 6); reading the code objects back with :mod:`marshal`
costs a few milliseconds.

An entry is keyed by the source, the file name the code reports, this module's own code
(which fixes the compile flags) and Python's bytecode version (``importlib``'s magic
number): a changed net or a changed compiler gives another source, so another key. It is
written whole and renamed into place (concurrent writers of one key write equal bytes),
and it carries a SHA-256 of its payload: an entry that is damaged or cannot be read is
compiled again and rewritten. Where no cache directory can be found (no ``$TCPN_CACHE_DIR``
and no ``platformdirs``) or it cannot be written, the code is compiled as before.

The cache is bounded (``$TCPN_CODE_CACHE_MB``, 256 MB unless set): an entry found is
marked used, and past the bound the least recently used entries are removed
(:data:`tcpn.petrinets.engine.caches.CODE`); ``tcpn cache info`` shows it, ``tcpn cache clear``
empties it.

The same cache keeps what tcpn derives from its own functions' source
(:func:`derived_cached`: the simulator loop's Cython source, the compiled twins' sources,
a function's ``inspect.getsource`` for a net's fingerprint): a fresh process would
otherwise tokenise and parse the same files again (about 0.04 s of CPU per native run of
the reference dumbbell, benchmarks/README.md, issue 32). Such an entry is keyed by the
SHA-256 of every file the derivation reads (the function's source file, read afresh, and
the modules of the code that derives), the function's first line and name, and Python's
version: any change that could change the result changes the key.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from types import CodeType, FunctionType
from typing import Any

from tcpn.petrinets.engine.caches import CODE, CODE_TRIM_SHARE, cache_root

__all__ = ["cache_root", "compile_cached", "derived_cached", "file_digest", "function_key",
           "write_atomically"]

#: this module's code and Python's bytecode version: an entry is valid for both only
_VERSION = hashlib.sha256(Path(__file__).read_bytes() + importlib.util.MAGIC_NUMBER).digest()
_CHECK_BYTES = 32  # the SHA-256 of the payload, in front of it


def _entry(source: str, filename: str) -> Path | None:
    directory = CODE.directory()
    if directory is None:
        return None
    digest = hashlib.sha256(_VERSION)
    digest.update(filename.encode() + b"\0" + source.encode())
    return directory / f"{digest.hexdigest()[:32]}.marshal"


def compile_cached(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, read from the cache when it holds it."""
    path = _entry(source, filename)
    if path is not None:
        with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
            code = _read_entry(path)
            if isinstance(code, CodeType):
                CODE.used(path)  # its last use, for the bound's eviction order
                return code
    code = compile(source, filename, "exec")
    if path is not None:
        _write_entry(path, code)
    return code


def _read_entry(path: Path) -> Any:
    """The payload of the checked entry at ``path`` (:exc:`ValueError` when damaged)."""
    stored = path.read_bytes()
    payload = stored[_CHECK_BYTES:]
    if hashlib.sha256(payload).digest() != stored[:_CHECK_BYTES]:
        raise ValueError(path)
    return marshal.loads(payload)


def _write_entry(path: Path, value: Any) -> None:
    payload = marshal.dumps(value)
    with contextlib.suppress(OSError):
        write_atomically(path, hashlib.sha256(payload).digest() + payload)
        CODE.wrote(path)
        CODE.trim_if_due(CODE_TRIM_SHARE)


#: (path, size, mtime) -> the SHA-256 of the file's bytes
_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: str | Path) -> str | None:
    """The SHA-256 of the file at ``path`` (read again when its size or time changes), or
    ``None`` when it cannot be read."""
    try:
        status = os.stat(path)
        key = (str(path), status.st_size, status.st_mtime_ns)
        found = _DIGESTS.get(key)
        if found is None:
            found = _DIGESTS[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
    return found


def function_key(function: Any) -> tuple[str, ...] | None:
    """What fixes ``inspect.getsource(function)``: its file's digest, first line, names;
    ``None`` for a function whose source is not a Python file (its source is then read
    without the cache)."""
    if not isinstance(function, FunctionType) or hasattr(function, "__wrapped__"):
        return None  # ``inspect.getsource`` reads the wrapped function's
    code = function.__code__
    if not code.co_filename.endswith(".py"):
        return None
    digest = file_digest(code.co_filename)
    if digest is None:
        return None
    return (digest, code.co_filename, str(code.co_firstlineno), function.__qualname__,
            function.__name__, function.__module__)


def derived_cached(kind: str, parts: Iterable[str], derive: Callable[[], Any]) -> Any:
    """``derive()``, a value :mod:`marshal` can write, read from the cache when it holds
    it for ``kind`` and ``parts``, which must name everything ``derive`` reads (see the
    module); computed again when the entry is missing or damaged."""
    directory = CODE.directory()
    if directory is None:
        return derive()
    digest = hashlib.sha256(_VERSION + sys.version.encode() + b"\0" + kind.encode())
    for part in parts:
        digest.update(b"\0" + part.encode())
    path = directory / f"derived-{digest.hexdigest()[:32]}.marshal"
    with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
        value = _read_entry(path)
        CODE.used(path)
        return value
    value = derive()
    _write_entry(path, value)
    return value


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` into ``path`` by a rename: readers see the whole entry or none (a cache
    entry; concurrent writers of one key write equal bytes, the last rename wins)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".part", delete=False) as part:
        try:
            part.write(data)
            part.close()
            os.replace(part.name, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part.name)
