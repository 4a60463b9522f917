"""A memory budget for explorations and model checks, read from the process's resident set.

A search that would outgrow the machine must stop with ``unknown`` naming the budget, not
be killed by the kernel or push the machine into swap. :class:`MemoryBudget` holds a limit
on the process's resident set size (RSS, as the operating system reports it through
:mod:`psutil`, not a guess from counts of states or edges); the explorer and the LTL product
call :meth:`MemoryBudget.exceeded` between batches. :meth:`MemoryBudget.default` allows the
process what it holds now plus :data:`AVAILABLE_SHARE` of the memory the system reports
available, and stops it too when the system has less than :data:`RESERVE_BYTES` left
available (other processes may be growing at the same time).

>>> budget = MemoryBudget(max_rss_bytes=1 << 60)
>>> budget.exceeded()
False
>>> MemoryBudget(max_rss_bytes=1 << 20).reason()
'memory budget reached: resident memory above 1 MiB'
"""

from __future__ import annotations

from dataclasses import dataclass

import psutil

__all__ = ["AVAILABLE_SHARE", "RESERVE_BYTES", "MemoryBudget"]

#: The share of the system's available memory (at the budget's creation) a default budget
#: lets the process add to what it holds.
AVAILABLE_SHARE = 0.7
#: The memory a default budget leaves available to the rest of the system.
RESERVE_BYTES = 512 << 20


def resident_bytes() -> int:
    """The process's resident set size now."""
    return int(psutil.Process().memory_info().rss)


@dataclass(frozen=True)
class MemoryBudget:
    """At most ``max_rss_bytes`` of resident memory for the whole process, and (when
    ``reserve_bytes`` is not 0) never less than ``reserve_bytes`` available to the
    system."""

    max_rss_bytes: int
    reserve_bytes: int = 0

    @classmethod
    def default(cls) -> MemoryBudget:
        """What the process holds now plus :data:`AVAILABLE_SHARE` of the available
        memory."""
        available = psutil.virtual_memory().available
        return cls(resident_bytes() + int(AVAILABLE_SHARE * available), RESERVE_BYTES)

    @classmethod
    def of(cls, max_memory_bytes: int | None) -> MemoryBudget:
        """A budget of ``max_memory_bytes`` of resident memory, or :meth:`default`."""
        return cls.default() if max_memory_bytes is None else cls(int(max_memory_bytes))

    def exceeded(self, more_bytes: int = 0) -> bool:
        """Whether the resident set, plus ``more_bytes`` about to be allocated, is above
        the budget (or the system's available memory would fall below the reserve)."""
        if resident_bytes() + more_bytes > self.max_rss_bytes:
            return True
        return bool(self.reserve_bytes) and \
            psutil.virtual_memory().available - more_bytes < self.reserve_bytes

    def reason(self) -> str:
        """The budget's name, as an ``unknown`` verdict gives it."""
        return (f"memory budget reached: resident memory above {_size(self.max_rss_bytes)}"
                + (f" or less than {_size(self.reserve_bytes)} available to the system"
                   if self.reserve_bytes else ""))


def _size(n_bytes: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20)):
        if n_bytes >= 1 << shift:
            value = n_bytes / (1 << shift)
            return f"{value:.1f} {unit}" if value < 10 and value != int(value) else \
                f"{value:.0f} {unit}"
    return f"{n_bytes} bytes"
