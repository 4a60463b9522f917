"""The TCP variants a scenario may name: one registry, filled by :func:`register_variant`.

A variant is one file: its parameters (a :class:`~tcpn.models.scenario.VariantParams`
subclass), the builder of its sender module, and what each lens needs to run it, passed
to :func:`register_variant`. The shipped variants register through that same call (the
modules of :data:`BUILTIN_MODULES`); an installed package adds its own through the entry
point group ``tcpn.variants`` (:data:`ENTRY_POINT_GROUP`), whose entries name a module
that registers on import or a function called with no argument. Both are read once, the
first time the registry is asked (:func:`variant_spec`, :func:`variant_names`).

A lens asks the registry what it can do with a variant and refuses what the variant does
not declare, naming the variant and the missing mechanism (:func:`lens_problems`): the
net lens needs the sender builder (always given), the fluid lens a :class:`FluidLaw`, the
ns3 lens an :class:`Ns3Congestion`, the bulk state space ``bulk_state_space``.

>>> spec = variant_spec("cubic")
>>> spec.params.__name__, spec.base_recovery(spec.params(variant="cubic"))
('CubicParams', 'newreno')
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tcpn.errors import InputError
from tcpn.models.scenario import VariantParams

if TYPE_CHECKING:
    from tcpn.models.components.sender import SenderConfig
    from tcpn.models.scenario import ConcreteFlow, TcpConfig
    from tcpn.petrinets import PetriNet

__all__ = ["BUILTIN_MODULES", "ENTRY_POINT_GROUP", "LOSS_RECOVERIES", "FluidLaw",
           "Ns3Congestion", "VariantSpec", "base_recovery", "lens_problems",
           "recovery_variant", "register_variant", "variant_names", "variant_spec"]

ENTRY_POINT_GROUP = "tcpn.variants"
"""Entry point group of the variants installed packages add."""
BUILTIN_MODULES = (
    "tcpn.models.components.loss_based",
    "tcpn.models.components.vegas",
    "tcpn.models.components.westwood",
    "tcpn.models.components.tcp_l",
    "tcpn.models.components.cubic",
)
"""The modules of tcpn's own variants, each registering its own with :func:`register_variant`."""
LOSS_RECOVERIES = ("tahoe", "reno", "newreno", "sack", "ecn_reno", "ecn_newreno")
"""The recoveries of the loss-based sender a variant's sender runs on (``config.variant``
of :class:`~tcpn.models.components.sender.SenderConfig`)."""

SenderBuilder = Callable[["SenderConfig", Any], "PetriNet"]
"""``builder(config, params)``: the sender module of a connection (ports ``out`` and
``acks``), ``config.variant`` being the loss-based recovery it runs on."""
FlowChecks = Callable[[Any, "TcpConfig"], list[str]]
"""``checks(params, tcp)``: what a lens cannot run for this variant, each message naming
the field (``params.x`` or ``tcp.x``)."""


@dataclass(frozen=True)
class FluidLaw:
    """The window law the fluid lens runs for a variant: ``reno`` (AIMD, increase 1 per
    RTT, decrease by half; with ECN marks when the flow negotiates ECN) or ``vegas``
    (Low, Peterson and Wang's model with thresholds ``alpha``, ``beta``, ``gamma`` in
    packets)."""

    kind: Literal["reno", "vegas"]
    alpha_pkts: float = 2.0
    beta_pkts: float = 4.0
    gamma_pkts: float = 1.0


@dataclass(frozen=True)
class Ns3Congestion:
    """How the ns3 lens runs a variant: the ns-3 ``TypeId`` of its congestion control and
    its attributes, the recovery ``TypeId`` (None: the scenario's ``tcp.recovery``), and a
    receiver report period in seconds (0: none; TCP-L's frame-error reports)."""

    type_id: str
    attributes: tuple[tuple[str, str], ...] = ()
    recovery: str | None = None
    report_interval_s: float = 0.0


@dataclass(frozen=True)
class VariantSpec:
    """A registered variant: see :func:`register_variant` for every field."""

    name: str
    params: type[VariantParams]
    sender: SenderBuilder
    recovery: str | Callable[[Any], str] = "newreno"
    ecn: bool = False
    ns3: Ns3Congestion | Callable[[Any], Ns3Congestion] | None = None
    fluid: FluidLaw | Callable[[Any], FluidLaw] | None = None
    closed_form: str | None = None
    flow_modules: Callable[..., None] | None = None
    state_space_choices: Callable[..., tuple[dict[str, str], dict[str, float]]] | None = None
    bulk_state_space: bool = False
    checks: Mapping[str, FlowChecks] = field(default_factory=dict)
    unsupported: Mapping[str, str] = field(default_factory=dict)
    origin: str = ""

    def base_recovery(self, params: Any) -> str:
        """The loss-based recovery this variant runs on with ``params`` (before SACK)."""
        base = self.recovery(params) if callable(self.recovery) else self.recovery
        if base not in LOSS_RECOVERIES:
            raise InputError(f"variant {self.name} ({self.origin}): recovery {base!r} is not "
                             f"one of {', '.join(LOSS_RECOVERIES)}")
        return base

    def ns3_congestion(self, params: Any) -> Ns3Congestion | None:
        """The ns-3 congestion control of this variant with ``params`` (None: none)."""
        return self.ns3(params) if callable(self.ns3) else self.ns3

    def fluid_law(self, params: Any) -> FluidLaw | None:
        """The fluid law of this variant with ``params`` (None: none)."""
        return self.fluid(params) if callable(self.fluid) else self.fluid


_REGISTRY: dict[str, VariantSpec] = {}
_LOADED = False
_FAILURE: str | None = None
_LOCK = threading.RLock()


def register_variant(name: str, params: type[VariantParams], sender: SenderBuilder, *,
                     recovery: str | Callable[[Any], str] = "newreno", ecn: bool = False,
                     ns3: Ns3Congestion | Callable[[Any], Ns3Congestion] | None = None,
                     fluid: FluidLaw | Callable[[Any], FluidLaw] | None = None,
                     closed_form: str | None = None,
                     flow_modules: Callable[..., None] | None = None,
                     state_space_choices: Callable[..., tuple[dict[str, str],
                                                              dict[str, float]]] | None = None,
                     bulk_state_space: bool = False,
                     checks: Mapping[str, FlowChecks] | None = None,
                     unsupported: Mapping[str, str] | None = None,
                     replace: bool = False) -> VariantSpec:
    """Make ``name`` a value of ``flows[].variant`` in every scenario.

    * ``params``: the model of ``flows[].params`` (a :class:`VariantParams` subclass; its
      ``variant`` field is filled with the name, the YAML does not repeat it);
    * ``sender(config, params)``: the sender module (the net lens, the state space and the
      property library, CPN Tools export: they all read the composed net);
    * ``recovery``: the loss-based recovery it runs on (one of :data:`LOSS_RECOVERIES`,
      or a function of the params); with ``tcp.sack`` a NewReno recovery runs on the RFC
      6675 scoreboard (:func:`recovery_variant`);
    * ``ecn``: the variant negotiates ECN whatever ``tcp.ecn`` says;
    * ``ns3``: the ns-3 congestion control (or a function of the params giving it);
      without it the ns3 lens refuses the variant;
    * ``fluid``: the :class:`FluidLaw` the fluid lens runs (or a function of the params);
      without it the fluid lens refuses the variant;
    * ``closed_form``: where its published response function (throughput against RTT and
      loss) is, ``"module:function"`` (named in the fluid lens's refusal: the models layer
      does not import the solvers);
    * ``flow_modules(net, i, flow, interfaces)``: modules added beside sender and
      receiver (TCP-L's reporter); ``state_space_choices(net, i, segments)``: the
      transitions whose random draw the state space enumerates (their twins and draws);
    * ``bulk_state_space``: the bulk (infinite transfer) reductions hold for its sender;
    * ``checks``: per lens (``net``, ``fluid``, ``ns3``), ``checks(params, tcp)`` listing
      what that lens cannot run; ``unsupported``: per lens, why the variant has no
      mechanism there (shown in the refusal);
    * ``replace``: replace a variant of the same name (else that is an error).

    Returns the registered :class:`VariantSpec`.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(f"register_variant: the name {name!r} is not an identifier (letters, "
                         "digits and underscores, as a scenario file writes it)")
    if not (isinstance(params, type) and issubclass(params, VariantParams)):
        raise InputError(f"register_variant({name!r}): params must be a subclass of "
                         f"tcpn.models.scenario.VariantParams, got {params!r}")
    if not callable(sender):
        raise InputError(f"register_variant({name!r}): sender must be callable "
                         "(config, params) -> PetriNet")
    unknown_lenses = (set(checks or {}) | set(unsupported or {})) - {"net", "fluid", "ns3"}
    if unknown_lenses:
        raise InputError(f"register_variant({name!r}): checks and unsupported are keyed by "
                         f"lens (net, fluid, ns3), not {', '.join(sorted(unknown_lenses))}")
    if isinstance(recovery, str) and recovery not in LOSS_RECOVERIES:
        raise InputError(f"register_variant({name!r}): recovery {recovery!r} is not one of "
                         f"{', '.join(LOSS_RECOVERIES)}")
    _load()  # the shipped names first: a user's variant cannot take one of them silently
    spec = VariantSpec(name, params, sender, recovery, ecn, ns3, fluid, closed_form,
                       flow_modules, state_space_choices, bulk_state_space,
                       dict(checks or {}), dict(unsupported or {}),
                       getattr(sender, "__module__", "") or "")
    with _LOCK:
        old = _REGISTRY.get(name)
        if old is not None and not replace:
            raise InputError(f"register_variant: variant {name!r} is already registered by "
                             f"{old.origin}; pass replace=True to replace it")
        _REGISTRY[name] = spec
    return spec


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
        for module in BUILTIN_MODULES:
            importlib.import_module(module)
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
    return tuple(sorted(_REGISTRY))


def variant_spec(name: str) -> VariantSpec:
    """The registered variant ``name``; an :class:`~tcpn.errors.InputError` naming the
    registered ones (and the closest, if one is close) for any other name."""
    _load()
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise InputError(unknown_variant_message(name)) from None


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


def lens_problems(lens: str, flow: ConcreteFlow | Any, tcp: TcpConfig) -> list[str]:
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
        closed = f"; its closed form is {spec.closed_form}" if lens == "fluid" and \
            spec.closed_form is not None else ""
        problems.append(f"variant {spec.name} has no {mechanism[0]} (its registration gives "
                        f"no {mechanism[1]}{': ' + why if why else ''}){closed}")
    elif lens in spec.unsupported:
        problems.append(f"variant {spec.name}: {spec.unsupported[lens]}")
    check = spec.checks.get(lens)
    if check is not None:
        problems += check(params, tcp)
    return problems
