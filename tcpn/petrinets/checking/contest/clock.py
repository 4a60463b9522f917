"""The examinations' time limit, read cooperatively: every long step asks the clock first.

A worker killed at its limit loses every answer it had not yet written; an examination
that reads the clock instead ends in CANNOT_COMPUTE naming the time budget and keeps the
answers already decided.
"""

from __future__ import annotations

import time as wallclock
from dataclasses import dataclass, field

__all__ = ["Clock", "TimeUp"]


class TimeUp(Exception):
    """The time budget is spent: ``reason`` names it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Clock:
    """``limit_s`` seconds (None: no limit) from ``started`` (``time.perf_counter``);
    ``share_of``: the limit of the clock this one is a share of (:meth:`share`)."""

    limit_s: float | None
    started: float = field(default_factory=wallclock.perf_counter)
    share_of: float | None = None

    def share(self, parts: int, fraction: float = 1.0) -> Clock:
        """A clock of one of ``parts`` equal shares of ``fraction`` of the time left
        (itself without a limit): what one of ``parts`` examinations still to run may
        take first."""
        left = self.left()
        if left is None:
            return self
        return Clock(fraction * left / max(1, parts), share_of=self.limit_s)

    def left(self) -> float | None:
        """Seconds left (0 once spent), None without a limit."""
        if self.limit_s is None:
            return None
        return max(0.0, self.limit_s - (wallclock.perf_counter() - self.started))

    def reason(self) -> str:
        if self.share_of is not None:
            return (f"time budget reached: {self.limit_s:g} s, this examination's share "
                    f"of {self.share_of:g} s")
        return f"time budget reached: {self.limit_s:g} s"

    def check(self, needs_s: float = 0.0, what: str = "") -> None:
        """Raise :class:`TimeUp` when the time is spent, or when a step that cannot stop
        midway (``what``, about ``needs_s`` seconds) would end past it."""
        left = self.left()
        if left is None:
            return
        if left <= 0.0:
            raise TimeUp(self.reason())
        if needs_s > left:
            raise TimeUp(f"{self.reason()} ({what} needs about {needs_s:,.1f} s, "
                         f"{left:,.1f} s left)")
