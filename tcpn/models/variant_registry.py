"""Where a TCP variant is declared: :func:`register_variant` and what it records.

A variant is one file: its parameters (a :class:`~tcpn.models.schema_base.VariantParams`
subclass), the builder of its sender module, and what each lens needs to run it, passed
to :func:`register_variant`. tcpn's own variants register through the same call (their
modules are listed in :mod:`~tcpn.models.registered_variants`, which loads them and the
installed packages' and answers the lenses' questions).

>>> from tcpn.models.registered_variants import variant_spec
>>> spec = variant_spec("cubic")
>>> spec.params.__name__, spec.base_recovery(spec.params(variant="cubic"))
('CubicParams', 'newreno')
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tcpn.errors import InputError
from tcpn.models.schema_base import VariantParams

if TYPE_CHECKING:
    from tcpn.models.components.sender import SenderConfig
    from tcpn.petrinets import PetriNet

__all__ = ["LOSS_RECOVERIES", "FluidLaw", "Ns3Congestion", "VariantSpec", "register_variant",
           "registered", "registered_spec"]

LOSS_RECOVERIES = ("tahoe", "reno", "newreno", "sack", "ecn_reno", "ecn_newreno")
"""The recoveries of the loss-based sender a variant's sender runs on (``config.variant``
of :class:`~tcpn.models.components.sender.SenderConfig`)."""

SenderBuilder = Callable[["SenderConfig", Any], "PetriNet"]
"""``builder(config, params)``: the sender module of a connection (ports ``out`` and
``acks``), ``config.variant`` being the loss-based recovery it runs on."""
FlowChecks = Callable[[Any, Any], list[str]]
"""``checks(params, tcp)``: what a lens cannot run for this variant, each message naming
the field (``params.x`` or ``tcp.x``)."""


@dataclass(frozen=True)
class FluidLaw:
    """The window law the fluid lens runs for a variant: ``reno`` (AIMD, increase 1 per
    RTT, decrease by half; with ECN marks when the flow negotiates ECN), ``vegas``
    (Low, Peterson and Wang's model with thresholds ``alpha``, ``beta``, ``gamma`` in
    packets; ``decrease_factor``, the share of the window a loss leaves: ns-2's Vegas,
    three quarters) or ``bbr`` (Scherrer et al.'s BBR v1 fluid model,
    :mod:`tcpn.solvers.fluid.bbr`, with STARTUP's ``high_gain``, the bandwidth filter's
    ``bw_window_rounds``, the min-RTT filter's ``rtt_window_s`` and
    ``probe_rtt_duration_s``)."""

    kind: Literal["reno", "vegas", "bbr"]
    alpha_pkts: float = 2.0
    beta_pkts: float = 4.0
    gamma_pkts: float = 1.0
    decrease_factor: float = 0.5
    high_gain: float = 2.89
    bw_window_rounds: int = 10
    rtt_window_s: float = 10.0
    probe_rtt_duration_s: float = 0.2


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
    closed_form: Callable[..., Any] | None = None
    flow_modules: Callable[..., None] | None = None
    state_space_choices: Callable[..., tuple[dict[str, str], dict[str, float]]] | None = None
    bulk_state_space: bool = False
    checks: Mapping[str, FlowChecks] = field(default_factory=dict)
    unsupported: Mapping[str, str] = field(default_factory=dict)
    origin: str = ""
    exact_ecn_echo: bool = False
    keeps_sack_after_timeout: bool = False

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
_LOCK = threading.RLock()


def register_variant(name: str, params: type[VariantParams], sender: SenderBuilder, *,
                     recovery: str | Callable[[Any], str] = "newreno", ecn: bool = False,
                     ns3: Ns3Congestion | Callable[[Any], Ns3Congestion] | None = None,
                     fluid: FluidLaw | Callable[[Any], FluidLaw] | None = None,
                     closed_form: Callable[..., Any] | None = None,
                     flow_modules: Callable[..., None] | None = None,
                     state_space_choices: Callable[..., tuple[dict[str, str],
                                                              dict[str, float]]] | None = None,
                     bulk_state_space: bool = False,
                     checks: Mapping[str, FlowChecks] | None = None,
                     unsupported: Mapping[str, str] | None = None,
                     exact_ecn_echo: bool = False,
                     keeps_sack_after_timeout: bool = False,
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
    * ``closed_form``: its published response function (throughput against RTT and loss,
      e.g. from :mod:`tcpn.solvers.closed_forms`), named in the fluid lens's refusal;
    * ``flow_modules(net, i, flow, interfaces)``: modules added beside sender and
      receiver (TCP-L's reporter); ``state_space_choices(net, i, segments)``: the
      transitions whose random draw the state space enumerates (their twins and draws);
    * ``bulk_state_space``: the bulk (infinite transfer) reductions hold for its sender;
    * ``checks``: per lens (``net``, ``fluid``, ``ns3``), ``checks(params, tcp)`` listing
      what that lens cannot run; ``unsupported``: per lens, why the variant has no
      mechanism there (shown in the refusal);
    * ``exact_ecn_echo``: the receiver echoes CE exactly (RFC 8257 3.2: every ACK's ECE is
      the CE state of the data it acknowledges, an ACK sent at once when the state
      changes with a delayed ACK pending) instead of RFC 3168's ECE-until-CWR; the ns3
      lens gives the receiver the variant's congestion control, where ns-3 keeps that
      state machine;
    * ``keeps_sack_after_timeout``: a retransmission timeout keeps the SACK scoreboard
      whatever ``tcp.sack_after_timeout`` says (its default, ``forget``, does not apply:
      :attr:`~tcpn.models.scenario.ConcreteFlow.sack_after_timeout` is ``keep`` for every
      flow of the variant), because the variant's model needs it (BBR: its delivery-rate
      samples count a segment once, when it is first SACKed or acknowledged, and ns-3's
      rate sampler, which ``TcpBbr`` reads, would count again each held segment a
      go-back-N over a forgotten scoreboard resends). The net lens builds its sender
      with ``sack_keep`` (a sender module with keep rules of its own may build its base
      sender without them, as BBR's does), the ns3 lens runs ns-3's own rule (no
      ``ForgetSack``);
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
    spec = VariantSpec(name, params, sender, recovery, ecn, ns3, fluid, closed_form,
                       flow_modules, state_space_choices, bulk_state_space,
                       dict(checks or {}), dict(unsupported or {}),
                       getattr(sender, "__module__", "") or "", exact_ecn_echo,
                       bool(keeps_sack_after_timeout))
    with _LOCK:
        old = _REGISTRY.get(name)
        if old is not None and not replace:
            raise InputError(f"register_variant: variant {name!r} is already registered by "
                             f"{old.origin}; pass replace=True to replace it")
        _REGISTRY[name] = spec
    return spec


def registered_spec(name: str) -> VariantSpec | None:
    """The variant registered as ``name`` so far (None: none)."""
    return _REGISTRY.get(name)


def registered() -> dict[str, VariantSpec]:
    """The variants registered so far, by name (a copy; the shipped ones and the installed
    packages' are loaded by :func:`tcpn.models.registered_variants.variant_spec`)."""
    with _LOCK:
        return dict(_REGISTRY)
