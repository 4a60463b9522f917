"""tcpn's caches on disk: where they are, their size bounds, and what leaves first.

Two caches live under tcpn's cache directory (``$TCPN_CACHE_DIR``, else the user's, e.g.
``~/.cache/tcpn``):

- ``code``: the compiled code of the compiler's generated sources
  (:mod:`~tcpn.petrinets.engine.codecache`), a few kilobytes per transition, recompiled in
  milliseconds;
- ``native``: the native engine's built modules and transition shapes
  (:mod:`~tcpn.petrinets.engine.native`), 0.1-1 MB per module, rebuilt in seconds to minutes
  by the C compiler.

Each is bounded by its disk usage (as ``du`` counts it): :data:`CODE` by
``$TCPN_CODE_CACHE_MB`` (default 256 MB), :data:`NATIVE` by ``$TCPN_NATIVE_CACHE_MB``
(default 1024 MB); 1 MB = 10^6 bytes. Past its bound a cache drops its least recently
used entries until it fits. An entry's last use is its modification time, set when it is
written and again whenever it is found (``os.utime``: most mounts do not keep access
times); ``tcpn cache info`` and ``tcpn cache clear`` show and empty the caches.

When a cache is trimmed: the code cache after every 5 % of its bound written, by any
process (a counter in ``.code.written`` beside it: a trim reads every entry's size and
time, 0.3 s for 16,500 entries under load, too much for every write of a process that
compiles one net); the native cache when a build call that missed an entry ends (a
build costs seconds). So the code cache passes its bound by at most 5 % of it (and what is
written while a trim runs), the native cache by what the builds running at once write.

Processes share the caches. A trim or a clear runs under an exclusive lock
(``fcntl.flock`` on ``.<cache>.lock`` beside the cache), so one process evicts at a time.
The native engine holds the shared lock of its cache from looking an entry up until the
module is loaded (:meth:`BoundedCache.in_use`): no entry is removed between the two, and a
trim that finds the lock taken is skipped (the next one catches up); a module already
loaded keeps running when its file is removed (the process maps it; POSIX keeps an
unlinked file's data while it is open or mapped). The code cache needs no such lock: its
readers read an entry whole or find it gone and compile again. Entries are written whole
and renamed into place (:func:`~tcpn.petrinets.engine.codecache.write_atomically`), so no one
reads a half-written entry, and a removal is one ``unlink``, so no one reads a
half-removed one. Temporary files an interrupted writer left (``tmp*.part``,
``.build-*``) are removed once an hour old. Only files named as tcpn names its entries are
counted and removed: anything else in these directories (``$TCPN_CACHE_DIR`` may point
anywhere) is left alone.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import ParamSpec, TypeVar

from tcpn.petrinets.errors import InputError, TcpnError

try:
    import fcntl
except ImportError:  # not POSIX: no locks (a loaded module's file cannot be removed there)
    fcntl = None  # type: ignore[assignment]

__all__ = ["CACHES", "CODE", "NATIVE", "BoundedCache", "CacheBusy", "CacheUsage", "cache_root"]

P = ParamSpec("P")
R = TypeVar("R")
#: bytes in the bounds' megabyte
MB = 1_000_000
#: a temporary file or build directory this old is an interrupted writer's, not a live one
STALE_S = 3600.0
#: the code cache is trimmed again after this share of its bound has been written
CODE_TRIM_SHARE = 0.05


def cache_root() -> Path | None:
    """tcpn's cache directory: ``$TCPN_CACHE_DIR``, else the user's (``platformdirs``), else
    ``None``."""
    root = os.environ.get("TCPN_CACHE_DIR")
    if root:
        return Path(root)
    return _user_cache()


@cache
def _user_cache() -> Path | None:
    try:
        import platformdirs
    except ImportError:
        return None
    return Path(platformdirs.user_cache_dir("tcpn"))


class CacheBusy(TcpnError, TimeoutError):
    """A clear waited too long for other processes to stop loading from the cache."""


@dataclass(frozen=True)
class CacheUsage:
    """A cache's directory, entries and disk usage, and its bound (bytes)."""

    name: str
    directory: Path | None
    entries: int
    bytes: int
    bound_bytes: int
    #: entries and bytes removed by the trim or clear that measured this (0: none)
    removed_entries: int = 0
    removed_bytes: int = 0


class BoundedCache:
    """One cache directory under :func:`cache_root`, bounded by ``$<variable>`` megabytes
    (``default_mb`` unless set), least recently used entries removed first.

    Only files whose path in the directory matches ``entry`` (tcpn's own names) are
    entries: anything else there is neither counted nor removed.
    """

    def __init__(self, name: str, variable: str, default_mb: float, holds: str, entry: str):
        self.name, self.variable, self.default_mb, self.holds = name, variable, default_mb, holds
        self.entry = re.compile(entry)
        self._lock = threading.Lock()
        self._missed = False     # an entry was missed (and will be written) since the
        self._written = 0        # last trim, and the bytes all processes wrote since

    def directory(self) -> Path | None:
        """The cache's directory (``None``: tcpn has no cache directory here)."""
        root = cache_root()
        return None if root is None else root / self.name

    def bound_bytes(self) -> int:
        """The bound in bytes: ``$<variable>`` megabytes, else ``default_mb``."""
        text = os.environ.get(self.variable, "").strip()
        if not text:
            return int(self.default_mb * MB)
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not value >= 0 or value == float("inf"):
            raise InputError(f"${self.variable}={text!r}: the {self.name} cache's bound must "
                             f"be a number of megabytes >= 0 (default {self.default_mb:g})")
        return int(value * MB)

    # -- use ------------------------------------------------------------------------------
    def used(self, path: Path) -> bool:
        """Whether the entry ``path`` exists; marks it used now (a missing one is noted:
        the caller writes it, and the next :meth:`trim_if_due` trims)."""
        try:
            os.utime(path)
            return True
        except FileNotFoundError:
            with self._lock:
                self._missed = True
            return False
        except OSError:  # not ours to touch (a read-only cache): still usable
            return path.exists()

    def wrote(self, path: Path) -> None:
        """Counts the entry ``path`` just written (its disk usage) toward the next trim, in
        the count all processes share."""
        try:
            n_bytes = _disk_bytes(path.stat())
        except OSError:  # removed meanwhile
            n_bytes = 0
        total = self._count_written(n_bytes)
        with self._lock:
            self._missed, self._written = True, total

    def trim_if_due(self, slack_share: float = 0.0) -> CacheUsage | None:
        """:meth:`trim` when this process added to the cache since the last trim and the
        processes wrote at least ``slack_share`` of the bound since (0: any entry)."""
        with self._lock:
            if not self._missed or self._written < slack_share * self.bound_bytes():
                return None
        found = self.trim()
        if found is not None:  # else the cache was held: the next call tries again
            with self._lock:
                self._missed, self._written = False, 0
        return found

    def holding(self, function: Callable[P, R]) -> Callable[P, R]:
        """``function`` run with the cache :meth:`in_use`, then trimmed if it missed an
        entry (a build or a load of the native engine)."""
        @functools.wraps(function)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            with self.in_use():
                result = function(*args, **kwargs)
            self.trim_if_due()
            return result
        return run

    @contextlib.contextmanager
    def in_use(self) -> Iterator[None]:
        """No entry of this cache is removed inside the block (a shared lock: trims are
        skipped, clears wait for it)."""
        with contextlib.ExitStack() as held:
            with self._flock("gate", fcntl.LOCK_EX if fcntl else 0):  # a clear waits: wait
                held.enter_context(self._flock("lock", fcntl.LOCK_SH if fcntl else 0))
            yield

    # -- trim and clear -------------------------------------------------------------------
    def trim(self) -> CacheUsage | None:
        """Removes least recently used entries until the cache fits its bound; ``None``
        when another process holds the cache (it is loading from it, or trimming)."""
        bound = self.bound_bytes()
        with self._flock("lock", fcntl.LOCK_EX | fcntl.LOCK_NB if fcntl else 0) as held:
            return self._remove(bound, bound) if held else None

    def clear(self, timeout_s: float = 60.0) -> CacheUsage:
        """Removes every entry, waiting up to ``timeout_s`` for processes loading from the
        cache (new ones wait meanwhile); :class:`CacheBusy` if they still hold it then."""
        deadline = time.monotonic() + timeout_s
        with self._flock("gate", fcntl.LOCK_EX if fcntl else 0):
            while True:
                with self._flock("lock", fcntl.LOCK_EX | fcntl.LOCK_NB if fcntl else 0) as held:
                    if held:
                        return self._remove(None, self.bound_bytes())
                if time.monotonic() >= deadline:
                    raise CacheBusy(f"the {self.name} cache is in use by another process "
                                    f"(a build or a load) for more than {timeout_s:g} s")
                time.sleep(0.01)

    def usage(self) -> CacheUsage:
        """The cache's entries and disk usage now (no lock: a snapshot)."""
        entries, _temporaries = self._scan()
        return CacheUsage(self.name, self.directory(), len(entries),
                          sum(size for _, size, _ in entries), self.bound_bytes())

    # -- inside -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def _flock(self, kind: str, operation: int) -> Iterator[bool]:
        """``flock(operation)`` on the cache's ``.<name>.<kind>`` file beside it; yields
        whether it is held: False when ``LOCK_NB`` found it taken; True without a cache
        directory, one nobody can write, or locks (not POSIX), as nothing is shared then.

        ``lock``: shared while modules are looked up and loaded, exclusive to remove
        entries. ``gate``: taken by a clear while it waits for the lock, and briefly by
        every user before the lock, so that a stream of users cannot starve a clear.
        """
        root = cache_root()
        if root is None or fcntl is None:
            yield True
            return
        try:
            root.mkdir(parents=True, exist_ok=True)
            fd = os.open(root / f".{self.name}.{kind}", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            yield True
            return
        try:
            try:
                fcntl.flock(fd, operation)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # releases the lock

    def _count_written(self, n_bytes: int | None) -> int:
        """Adds ``n_bytes`` to the bytes written into the cache since its last trim, kept in
        ``.<name>.written`` beside it for all processes (``None``: back to 0); returns the
        count (this process's alone where no such file can be kept)."""
        root = cache_root()
        if root is None or fcntl is None:
            return 0 if n_bytes is None else self._written + n_bytes
        try:
            fd = os.open(root / f".{self.name}.written", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return 0 if n_bytes is None else self._written + n_bytes
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held for a read and a write
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            total = 0 if n_bytes is None else n_bytes + (int(text) if text.isdigit() else 0)
            os.pwrite(fd, f"{total:<20d}".encode(), 0)
            return total
        except OSError:
            return 0 if n_bytes is None else self._written + n_bytes
        finally:
            os.close(fd)

    def _scan(self) -> tuple[list[tuple[Path, int, int]], list[tuple[Path, int]]]:
        """The entries as (path, bytes on disk, last use in ns), and the temporary files
        and build directories as (path, last change in ns); the cache and its
        subdirectories (one level: the native cache's ``shapes``)."""
        directory = self.directory()
        entries: list[tuple[Path, int, int]] = []
        temporaries: list[tuple[Path, int]] = []
        if directory is None:
            return entries, temporaries
        folders = [directory]
        for folder in folders:
            try:
                listing = list(os.scandir(folder))
            except OSError:
                continue
            for item in listing:
                path = Path(item.path)
                name = path.relative_to(directory).as_posix()
                try:
                    stat = item.stat(follow_symlinks=False)
                    if item.is_dir(follow_symlinks=False):
                        if _BUILD.fullmatch(name):
                            temporaries.append((path, stat.st_mtime_ns))
                        elif folder == directory:
                            folders.append(path)
                    elif not item.is_file(follow_symlinks=False):
                        continue
                    elif _PART.fullmatch(name):
                        temporaries.append((path, stat.st_mtime_ns))
                    elif self.entry.fullmatch(name):
                        entries.append((path, _disk_bytes(stat), stat.st_mtime_ns))
                except OSError:  # removed meanwhile
                    continue
        return entries, temporaries

    def _remove(self, keep_bytes: int | None, bound: int) -> CacheUsage:
        """Under the exclusive lock: stale temporaries, then entries, least recently used
        first, until at most ``keep_bytes`` are left (``None``: every entry)."""
        self._count_written(None)
        entries, temporaries = self._scan()
        stale_ns = time.time_ns() - int(STALE_S * 1e9)
        for path, changed_ns in temporaries:
            if changed_ns < stale_ns:
                with contextlib.suppress(OSError):
                    shutil.rmtree(path) if path.is_dir() else path.unlink()
        total = sum(size for _, size, _ in entries)
        removed, removed_bytes = 0, 0
        for path, size, _last_use in sorted(entries, key=lambda entry: entry[2]):
            if keep_bytes is not None and total <= keep_bytes:
                break
            try:
                path.unlink()
            except FileNotFoundError:  # removed by an older tcpn (no lock) meanwhile
                pass
            except OSError:
                continue
            total -= size
            removed, removed_bytes = removed + 1, removed_bytes + size
        return CacheUsage(self.name, self.directory(), len(entries) - removed, total, bound,
                          removed, removed_bytes)


def _disk_bytes(stat: os.stat_result) -> int:
    """A file's disk usage, as ``du`` counts it (its size where blocks are not reported)."""
    blocks = getattr(stat, "st_blocks", None)
    return stat.st_size if blocks is None else blocks * 512


#: an interrupted writer's leftovers: ``write_atomically``'s files, the native builds'
#: directories (paths in the cache directory)
_PART = re.compile(r"(?:[^/]+/)?tmp[^/]*\.part")
_BUILD = re.compile(r"\.build-[^/]+")
#: the compiled code of generated sources (:mod:`~tcpn.petrinets.engine.codecache`)
CODE = BoundedCache("code", "TCPN_CODE_CACHE_MB", 256,
                    "compiled code of the nets' generated sources (recompiled in ms)",
                    entry=r"[0-9a-f]{32}\.marshal")
#: the native engine's built modules and shapes (:mod:`~tcpn.petrinets.engine.native`)
NATIVE = BoundedCache("native", "TCPN_NATIVE_CACHE_MB", 1024,
                      "native engine modules built by the C compiler (rebuilt in s to min)",
                      entry=r"_tcpn_[a-z]+_[0-9a-f]{24}\.[^/]+|shapes/[0-9a-f]{32}\.json")
#: every cache tcpn keeps, by name
CACHES = {cache.name: cache for cache in (CODE, NATIVE)}
