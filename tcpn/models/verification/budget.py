"""The loss budget of a verification net: how many packets the network may lose per run."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tcpn.errors import InputError

__all__ = ["BUDGET_PLACE", "LossBudget"]

#: The place holding the losses left, ``(data, ack)``.
BUDGET_PLACE = "losses"


@dataclass(frozen=True)
class LossBudget:
    """How many packets the network may lose in one run.

    At most ``data_losses`` data segments and ``ack_losses`` packets without data (ACKs;
    with the handshake also SYN, SYN-ACK and its ACK), on the link directions ``links``
    (queue ids ``"A->B"``; ``None``: every direction). Both counts are per run; they must
    be finite whole numbers, or the space would not close.

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

    def __post_init__(self) -> None:
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
