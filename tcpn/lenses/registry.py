"""The lenses by name: the three shipped with tcpn, and any registered at run time.

:func:`get_lens` imports a shipped lens's module when it is first asked for (the ns-3 lens
imports ns-3 only when it runs, the fluid lens SciPy's solvers): ``tcpn --help`` and a
net-only run never pay for the others. A lens of one's own is a class (or its
``"module:Class"`` path, imported on first use) given to :func:`register_lens`.

>>> lens_names()[:3]
['net', 'fluid', 'ns3']
"""

from __future__ import annotations

import importlib

from tcpn.lenses.base import LensError

__all__ = ["LENSES", "SHIPPED", "get_lens", "lens_names", "register_lens"]

SHIPPED = ("net", "fluid", "ns3", "capture")
"""The lenses tcpn ships, in the order they are listed (``capture`` reads a user's packet
capture instead of simulating: :mod:`tcpn.lenses.capture`)."""

LENSES: dict[str, str | type] = {}
"""Lenses registered at run time: name -> class, or ``"module:Class"`` imported on first
use. A name here takes precedence over a shipped lens of that name."""

INSTALL_HINTS = {"ns": "pip install 'tcpn[ns3]'", "cppyy": "pip install 'tcpn[ns3]'"}


def lens_names() -> list[str]:
    """Every lens name a scenario, a sweep or the command line may use."""
    return [*SHIPPED, *(name for name in LENSES if name not in SHIPPED)]


def register_lens(name: str, target: str | type) -> None:
    """Register a lens class (or its ``"module:Class"`` path) under ``name``."""
    LENSES[name] = target


def _shipped(name: str) -> type:
    """A shipped lens's class, its module imported now."""
    if name == "net":
        from tcpn.lenses.net import NetLens

        return NetLens
    if name == "fluid":
        from tcpn.lenses.fluid import FluidLens

        return FluidLens
    if name == "capture":
        from tcpn.lenses.capture import CaptureLens

        return CaptureLens
    from tcpn.lenses.ns3 import Ns3Lens

    return Ns3Lens


def _missing(exc: ModuleNotFoundError, what: str, module_name: str) -> LensError:
    """The error for a lens whose module, or a package it needs, is not installed."""
    if exc.name is not None and module_name.startswith(exc.name):
        return LensError(f"{what} is not available: module {module_name} is missing from "
                         "this installation")
    hint = INSTALL_HINTS.get((exc.name or "").split(".")[0])
    return LensError(f"{what} needs the Python package {exc.name!r}"
                     + (f": {hint}" if hint else ""))


def _resolve(target: str, what: str) -> type:
    """The class a ``"module:Class"`` registration names."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise _missing(exc, what, module_name) from None
    try:
        found: type = getattr(module, attr)
    except AttributeError:
        raise LensError(f"{what}: {module_name} defines no {attr}") from None
    return found


def get_lens(name: str) -> type:
    """The lens class registered as ``name``.

    >>> get_lens("telepathy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tcpn.lenses.base.LensError: unknown lens 'telepathy'; lenses: net, fluid, ns3...
    """
    target = LENSES.get(name)
    if target is None:
        if name not in SHIPPED:
            raise LensError(f"unknown lens {name!r}; lenses: {', '.join(lens_names())}")
        try:
            return _shipped(name)
        except ModuleNotFoundError as exc:
            raise _missing(exc, f"lens {name!r}", f"tcpn.lenses.{name}") from None
    if isinstance(target, str):
        target = _resolve(target, f"lens {name!r}")
        LENSES[name] = target
    return target
