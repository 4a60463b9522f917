"""Errors raised while compiling or running a net; each names the element at fault."""

from __future__ import annotations

from typing import Any

from tcpn.errors import InputError, TcpnError

__all__ = ["FiringError", "InputError", "TcpnError"]


class FiringError(TcpnError):
    """An inscription failed while the net ran: names the element, binding and model time."""

    def __init__(self, where: str, binding: dict[str, Any], cause: BaseException | str,
                 time: float | None = None):
        self.where = where
        self.binding = binding
        self.cause = cause
        self.time = time
        super().__init__(str(self))

    def __str__(self) -> str:
        binding = ", ".join(f"{k}={v!r}" for k, v in self.binding.items()) or "no variables"
        when = f" at time {self.time:g}" if self.time is not None else ""
        cause = (
            self.cause if isinstance(self.cause, str)
            else f"{type(self.cause).__name__}: {self.cause}"
        )
        return f"{self.where}{when} with binding <{binding}>: {cause}"
