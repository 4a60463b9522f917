"""A memory budget for explorations and model checks, read from what the process may use.

A search that would outgrow the memory it may use must stop with ``unknown`` naming the
budget, not be killed by the kernel, fail on a ``MemoryError`` or push the machine into
swap. :func:`usable_memory` says how many more bytes this process may really allocate: the
least of what its cgroup's limit leaves (v2 ``memory.max`` less ``memory.current``, v1
``memory.limit_in_bytes`` less ``memory.usage_in_bytes``, at every level up to the root),
what its address-space limit leaves (``RLIMIT_AS``, ``ulimit -v``, less the virtual size
it has now) and the system's ``MemAvailable``. :meth:`MemoryBudget.default` lets a search
take :data:`DEFAULT_SHARE` of that; it is read again between batches, each limit by its
own measure (the cgroup's usage, the virtual size, the memory available), so whichever
limit the search would reach first stops it. :meth:`MemoryBudget.of` with a number is a
budget on the process's resident set size instead (what a caller asks for).

>>> budget = MemoryBudget(max_rss_bytes=1 << 60)
>>> budget.exceeded()
False
>>> MemoryBudget(max_rss_bytes=1 << 20).reason()
'memory budget reached: resident memory above 1 MiB'
>>> MemoryBudget.default().reason().startswith("memory budget reached: ")
True
"""

from __future__ import annotations

import functools
import resource
from dataclasses import dataclass, field
from pathlib import Path

import psutil

__all__ = ["DEFAULT_SHARE", "MemoryBudget", "Usable", "out_of_memory_reason", "resident_bytes",
           "usable_memory"]

#: The share of :func:`usable_memory` (at the budget's creation) a default budget lets a
#: search take. Half: what a search has allocated when it stops is still held while its
#: caller turns it into an answer (the edge arrays, the report), and the limits move
#: under it (other processes take memory available to this one).
DEFAULT_SHARE = 0.5
#: cgroup v1 writes "no limit" as the largest page-aligned 63-bit number.
_NO_CGROUP_LIMIT = 1 << 62
_MEMINFO = "MemAvailable (/proc/meminfo)"
_RLIMIT = "RLIMIT_AS (ulimit -v)"


def resident_bytes() -> int:
    """The process's resident set size now."""
    return int(psutil.Process().memory_info().rss)


@dataclass(frozen=True)
class Usable:
    """How many more bytes the process may allocate (``bytes``) and the limit that says
    so (``source``); ``by_limit`` holds each limit in force with what it leaves."""

    bytes: int
    source: str
    by_limit: dict[str, int] = field(default_factory=dict)


def usable_memory(cgroup_root: Path = Path("/sys/fs/cgroup"),
                  proc_cgroup: Path = Path("/proc/self/cgroup")) -> Usable:
    """What this process may still allocate before one of its limits stops it: the least
    of what its cgroups (v2 and v1, every level up to the root), its ``RLIMIT_AS`` and the
    system's available memory leave; the limit named is the one that leaves least.

    >>> usable = usable_memory()
    >>> usable.bytes > 0 and usable.by_limit[usable.source] == usable.bytes
    True
    """
    left = {_MEMINFO: int(psutil.virtual_memory().available)}
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        left[_RLIMIT] = soft - int(psutil.Process().memory_info().vms)
    left.update(_cgroup_left(cgroup_root, proc_cgroup))
    source = min(left, key=lambda name: left[name])
    return Usable(max(0, left[source]), source, left)


def _cgroup_left(root: Path, proc_cgroup: Path) -> dict[str, int]:
    """What each cgroup limit over the process leaves (its limit less its usage), by the
    name of the file holding the limit; none when there is no limit or no cgroup."""
    left: dict[str, int] = {}
    for limit_file, usage_file in _cgroup_limits(root, proc_cgroup):
        limit, usage = _number(limit_file), _number(usage_file)
        if limit is not None and usage is not None:
            left[f"the cgroup's {limit_file.name} ({limit_file})"] = limit - usage
    return left


@functools.lru_cache(maxsize=8)
def _cgroup_limits(root: Path, proc_cgroup: Path) -> tuple[tuple[Path, Path], ...]:
    """The (limit, usage) files of the cgroups over the process that set a memory limit:
    its own and their parents, v2 (``memory.max``) and v1 (``memory.limit_in_bytes``),
    found once (a process does not change cgroups; a container may see its own cgroup
    as the mount's root, whose files are read then)."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return ()
    found: list[tuple[Path, Path]] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # v2, unified
            mount = root if (root / "cgroup.controllers").exists() else root / "unified"
            files = ("memory.max", "memory.current")
        elif "memory" in controllers.split(","):  # v1, its own hierarchy
            mount, files = root / "memory", ("memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        directory = mount / path.strip("/")
        if not directory.is_dir():
            directory = mount
        while True:
            limit = _number(directory / files[0])
            if limit is not None and limit < _NO_CGROUP_LIMIT:
                found.append((directory / files[0], directory / files[1]))
            if directory == mount or directory.parent == directory:
                break
            directory = directory.parent
    return tuple(found)


def _number(path: Path) -> int | None:
    """The integer in a cgroup file, None when absent, unreadable or ``max``."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _measures() -> dict[str, int]:
    """What :func:`usable_memory` leaves per limit, now."""
    return usable_memory().by_limit


@dataclass(frozen=True)
class MemoryBudget:
    """At most ``max_rss_bytes`` of resident memory for the whole process; or, when
    ``allowance_bytes`` is set (a default budget), at most that many bytes more, by any
    limit's measure, than each limit of ``start`` left when the budget was made."""

    max_rss_bytes: int = 0
    allowance_bytes: int = 0
    source: str = ""
    start: dict[str, int] = field(default_factory=dict)

    @classmethod
    def default(cls) -> MemoryBudget:
        """:data:`DEFAULT_SHARE` of :func:`usable_memory`, named after the limit it comes
        from."""
        usable = usable_memory()
        return cls(allowance_bytes=max(1, int(DEFAULT_SHARE * usable.bytes)),
                   source=usable.source,
                   start=dict(usable.by_limit))

    @classmethod
    def of(cls, max_memory_bytes: int | None) -> MemoryBudget:
        """A budget of ``max_memory_bytes`` of resident memory within :meth:`default`
        (what a caller asks for may be more than the process may really use: a machine
        shared with others, a cgroup or ``ulimit -v`` below it), or :meth:`default`."""
        default = cls.default()
        if max_memory_bytes is None:
            return default
        return cls(int(max_memory_bytes), default.allowance_bytes, default.source,
                   default.start)

    def exceeded(self, more_bytes: int = 0) -> bool:
        """Whether the process, with ``more_bytes`` about to be allocated, is past the
        budget: its resident memory past ``max_rss_bytes``, or (with an allowance) more
        taken, by some limit's measure, than the allowance since the budget was made."""
        return self._over_rss(more_bytes) or self._over_allowance(more_bytes)

    def _over_rss(self, more_bytes: int = 0) -> bool:
        return bool(self.max_rss_bytes) and resident_bytes() + more_bytes > self.max_rss_bytes

    def _over_allowance(self, more_bytes: int = 0) -> bool:
        return bool(self.allowance_bytes and self.start) and self._allowance_left() < more_bytes

    def _allowance_left(self) -> int:
        """Bytes the allowance leaves, by the measure of the limit that leaves the least."""
        now = _measures()
        return min((self.allowance_bytes - (before - now.get(name, before))
                    for name, before in self.start.items()), default=self.allowance_bytes)

    def limit(self) -> str:
        """The budget with its figure and the limit it comes from: ``"812 MB, 50 % of
        what RLIMIT_AS (ulimit -v) left"``, or ``"resident memory above 1 GiB"``; with
        both, the one that leaves the least (the one the process is past, or nearer to
        passing: a search stops before it allocates what would pass one)."""
        rss = f"resident memory above {_size(self.max_rss_bytes)}"
        allowance = (f"{self.allowance_bytes / 1e6:,.0f} MB, {DEFAULT_SHARE * 100:.0f} % of "
                     f"what {self.source} left")
        if not self.allowance_bytes:
            return rss
        if not self.max_rss_bytes or \
                self._allowance_left() < self.max_rss_bytes - resident_bytes():
            return allowance
        return rss

    def reason(self) -> str:
        """The budget's name, as an ``unknown`` verdict gives it."""
        return f"memory budget reached: {self.limit()}"


def _size(n_bytes: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20)):
        if n_bytes >= 1 << shift:
            value = n_bytes / (1 << shift)
            return f"{value:.1f} {unit}" if value < 10 and value != int(value) else \
                f"{value:.0f} {unit}"
    return f"{n_bytes} bytes"


def out_of_memory_reason() -> str:
    """What an ``unknown`` says when an allocation inside a search failed (a
    ``MemoryError``: a limit refused it before the budget was read): the limit, named as a
    budget is, with what it leaves now that the search's memory is freed."""
    usable = usable_memory()
    return (f"memory budget reached: an allocation failed (MemoryError) under "
            f"{usable.source}, which leaves {usable.bytes / 1e6:,.0f} MB")
