"""The loss budget of a verification net: how many packets the network may lose per run."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tcpn.errors import InputError
from tcpn.petrinets import INT, ColourSet, ListSet, ProductSet

__all__ = ["BUDGET_PLACE", "LossBudget"]

#: The place holding the losses left, ``(data, ack)`` (``data`` a tuple, one count per
#: window, with ``per_window``).
BUDGET_PLACE = "losses"


@dataclass(frozen=True)
class LossBudget:
    """How many packets the network may lose in one run.

    At most ``data_losses`` data segments and ``ack_losses`` packets without data (ACKs;
    with the handshake also SYN, SYN-ACK and its ACK), on the link directions ``links``
    (queue ids ``"A->B"``; ``None``: every direction). Both counts are per run; with
    ``per_window`` = ``W`` the data count is per window of ``W`` segment numbers instead
    (segment ``s`` is in window ``s // W``; a retransmission counts in its segment's
    window), so a transfer of ``n`` segments may lose up to ``data_losses * ceil(n / W)``.
    Counts must be finite whole numbers, or the space would not close.

    Two scopes are for a bulk sender's space (:mod:`tcpn.models.verification.window`),
    whose runs never end: with ``per_flight`` the counts are per *window* of the flow,
    and the window observer refills the budget each time every segment outstanding when
    the window began is acknowledged; with ``unbounded`` a kind with a count above 0
    may be lost any number of times (the budget place's token never changes).

    >>> LossBudget(data_losses=1).total
    1
    >>> LossBudget(data_losses=-1)
    Traceback (most recent call last):
    ...
    tcpn.errors.InputError: loss budget: data_losses must be a whole number >= 0, got -1
    """

    data_losses: int = 0
    ack_losses: int = 0
    links: tuple[str, ...] | None = None
    per_window: int | None = None
    per_flight: bool = False
    unbounded: bool = False

    def __post_init__(self) -> None:
        if sum((self.per_window is not None, self.per_flight, self.unbounded)) > 1:
            raise InputError("loss budget: per_window, per_flight and unbounded are "
                             "different scopes; give at most one")
        if self.per_window is not None and (isinstance(self.per_window, bool) or not isinstance(
                self.per_window, int) or self.per_window < 1):
            raise InputError(f"loss budget: per_window must be a whole number of segments >= 1 "
                             f"or None (per run), got {self.per_window!r}")
        for name in ("data_losses", "ack_losses"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                extra = (" (an unbounded budget makes the state space infinite)"
                         if isinstance(value, float) and math.isinf(value) else "")
                raise InputError(f"loss budget: {name} must be a whole number >= 0, got "
                                 f"{value!r}{extra}")
        if self.links is not None:
            object.__setattr__(self, "links", tuple(self.links))

    @property
    def total(self) -> int:
        """Losses of both kinds together."""
        return self.data_losses + self.ack_losses

    def covers(self, direction: str) -> bool:
        """Whether losses may be chosen on the link direction ``direction`` (``"A->B"``)."""
        return self.total > 0 and (self.links is None or direction in self.links)

    def initial(self, segments: int) -> tuple[Any, int]:
        """The budget place's token for a transfer of ``segments`` segments."""
        if self.per_window is None:
            return (self.data_losses, self.ack_losses)
        windows = -(-segments // self.per_window)
        return (tuple([self.data_losses] * windows), self.ack_losses)

    def colour(self) -> ColourSet:
        """The budget place's colour set."""
        data = INT if self.per_window is None else ListSet(INT, name="Windows")
        return ProductSet(data, INT, name="Budget")

    def inscriptions(self, is_data: str) -> tuple[str, str]:
        """``(may_lose, after)``: a condition that a packet ``p`` (a data segment when
        ``is_data`` holds) may be lost, and the budget after losing it, over the budget
        bound as ``(data_left, acks_left)``."""
        if self.unbounded:
            return (f"({is_data} and data_left > 0 or not ({is_data}) and acks_left > 0)",
                    "(data_left, acks_left)")
        if self.per_window is None:
            return (f"({is_data} and data_left > 0 or not ({is_data}) and acks_left > 0)",
                    f"((data_left - 1, acks_left) if {is_data} else "
                    "(data_left, acks_left - 1))")
        w = f"p.seq // {self.per_window}"
        return (f"({is_data} and data_left[{w}] > 0 or not ({is_data}) and acks_left > 0)",
                f"((data_left[:{w}] + (data_left[{w}] - 1,) + data_left[{w} + 1:], acks_left) "
                f"if {is_data} else (data_left, acks_left - 1))")
