"""The registered TCP variants: tcpn's own and the installed packages', and what lenses ask.

The shipped variants are registered by their own modules (:data:`BUILTIN_MODULES`) with
:func:`~tcpn.models.variant_registry.register_variant`, as an installed package registers
its own through the entry point group ``tcpn.variants`` (:data:`ENTRY_POINT_GROUP`: an
entry names a module that registers on import, or a function called with no argument).
Both are read once, the first time a variant is asked for.

A lens asks :func:`lens_problems` what it cannot do with a variant: the net lens needs the
sender builder (always given), the fluid lens a :class:`~tcpn.models.variant_registry.
FluidLaw`, the ns3 lens an :class:`~tcpn.models.variant_registry.Ns3Congestion`; a
refusal names the variant and the missing mechanism.

>>> variant_spec("cubc")
Traceback (most recent call last):
...
tcpn.errors.InputError: unknown variant 'cubc' (did you mean 'cubic'?); registered: ...
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import threading
from typing import Any

from tcpn.errors import InputError
from tcpn.models.variant_registry import VariantSpec, registered, registered_spec

__all__ = ["BUILTIN_MODULES", "ENTRY_POINT_GROUP", "base_recovery", "lens_problems",
           "recovery_variant", "unknown_variant_message", "variant_names", "variant_spec"]

ENTRY_POINT_GROUP = "tcpn.variants"
"""Entry point group of the variants installed packages add."""
BUILTIN_MODULES = (
    "tcpn.models.components.congestion.loss_based",
    "tcpn.models.components.congestion.vegas",
    "tcpn.models.components.congestion.westwood",
    "tcpn.models.components.congestion.tcp_l",
    "tcpn.models.components.congestion.cubic",
    "tcpn.models.components.congestion.bbr",
    "tcpn.models.components.congestion.dctcp",
    "tcpn.models.components.congestion.linux_reno",
)
"""The modules of tcpn's own variants, each registering its own."""

_LOADED = False
_FAILURE: str | None = None
_LOCK = threading.RLock()


def _load() -> None:
    """Import the shipped variants, then the installed packages' (once; a plugin that
    failed is named again at every later call)."""
    global _LOADED, _FAILURE
    with _LOCK:
        if _FAILURE is not None:
            raise InputError(_FAILURE)
        if _LOADED:
            return
        _LOADED = True  # set first: the modules imported below call register_variant
        from tcpn.models.components.congestion import (  # noqa: F401  (each registers itself)
            bbr,
            cubic,
            dctcp,
            loss_based,
            tcp_l,
            vegas,
            westwood,
        )
        for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            origin = f"variant plugin {entry.name!r} ({entry.value}"
            origin += f", distribution {entry.dist.name})" if entry.dist else ")"
            try:
                loaded = entry.load()
                if callable(loaded):
                    loaded()
            except Exception as exc:  # any failure of a plugin is named, not a traceback
                _FAILURE = f"{origin} failed to load: {type(exc).__name__}: {exc}"
                raise InputError(_FAILURE) from None


def variant_names() -> tuple[str, ...]:
    """Every registered variant name, sorted.

    >>> {"reno", "cubic", "vegas"} <= set(variant_names())
    True
    """
    _load()
    return tuple(sorted(registered()))


def variant_spec(name: str) -> VariantSpec:
    """The registered variant ``name``; an :class:`~tcpn.errors.InputError` naming the
    registered ones (and the closest, if one is close) for any other name."""
    _load()
    spec = registered_spec(name) if isinstance(name, str) else None
    if spec is None:
        raise InputError(unknown_variant_message(name))
    return spec


def unknown_variant_message(name: Any) -> str:
    """Why ``name`` is no variant: the registered names, with the closest one."""
    names = variant_names()
    close = difflib.get_close_matches(str(name), names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown variant {name!r}{hint}; registered: {', '.join(names)}"


def base_recovery(variant: str, params: Any) -> str:
    """The loss-based recovery of ``variant`` with ``params``, before SACK.

    >>> base_recovery("tcp_l", None), base_recovery("tahoe", None)
    ('newreno', 'tahoe')
    """
    spec = variant_spec(variant)
    return spec.base_recovery(params if params is not None else spec.params(variant=variant))


def recovery_variant(variant: str, sack: bool, params: Any = None) -> str:
    """The loss-based sender that ``variant`` runs on (or is), with SACK negotiated
    (``sack``) or not: its recovery.

    With SACK, ns-3 recovers with its RFC 6675 scoreboard whatever the congestion control,
    so every variant whose recovery is NewReno's runs on the ``sack`` sender when
    ``tcp.sack`` is on (NewReno's window arithmetic, RFC 6675 pipe and NextSeg). Reno
    recovery has no scoreboard: it ignores the SACK blocks.

    >>> recovery_variant("newreno", True), recovery_variant("newreno", False)
    ('sack', 'newreno')
    >>> recovery_variant("ecn_newreno", True), recovery_variant("tahoe", True)
    ('sack', 'tahoe')
    >>> recovery_variant("westwood_plus", True), recovery_variant("vegas", True)
    ('sack', 'sack')
    >>> recovery_variant("cubic", True), recovery_variant("cubic", False)
    ('sack', 'newreno')
    """
    base = base_recovery(variant, params)
    return "sack" if sack and base in ("newreno", "ecn_newreno") else base


def lens_problems(lens: str, flow: Any, tcp: Any) -> list[str]:
    """What ``lens`` (``net``, ``fluid`` or ``ns3``) cannot run of ``flow``'s variant (a
    concrete flow, or a scenario flow group with its effective ``tcp``), each message
    starting with the field at fault (``variant``, ``params.x``, ``tcp.x``)."""
    spec = variant_spec(flow.variant)
    params = flow.params if flow.params is not None else spec.params(variant=spec.name)
    problems = []
    missing = {"fluid": spec.fluid is None, "ns3": spec.ns3 is None}.get(lens, False)
    if missing:
        mechanism = {"fluid": ("fluid model", "fluid=FluidLaw(...)"),
                     "ns3": ("ns-3 congestion control", "ns3=Ns3Congestion('ns3::...')")}[lens]
        why = spec.unsupported.get(lens)
        closed = f"; its closed form is {spec.closed_form.__module__}." \
            f"{spec.closed_form.__qualname__}" if lens == "fluid" and \
            spec.closed_form is not None else ""
        having = [n for n, v in sorted(registered().items())
                  if (v.fluid if lens == "fluid" else v.ns3) is not None]
        problems.append(f"variant {spec.name} has no {mechanism[0]} (its registration gives "
                        f"no {mechanism[1]}{': ' + why if why else ''}){closed}; variants "
                        f"with one: {', '.join(having)}")
    elif lens in spec.unsupported:
        problems.append(f"variant {spec.name}: {spec.unsupported[lens]}")
    check = spec.checks.get(lens)
    if check is not None:
        problems += check(params, tcp)
    return problems
