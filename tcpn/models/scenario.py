"""The scenario schema: one experiment description that every lens (net, fluid, ns-3) reads.

A scenario names the nodes, the links between them (rate, propagation delay, per-direction
queue discipline and error model), the flows (source, destination, TCP variant and its
parameters, start/stop times, bytes to send), the TCP parameters, the horizon, the seed and
what to trace. Defaults equal ns-3.44's where ns-3 has one, so that one YAML file means one
experiment in every lens; ``docs/scenarios.md`` lists each default with its source.

Loading keeps YAML line numbers: every validation error names the field *and* the line::

    scenarios/bad.yaml:14: flows[0].params.beta: beta (2) must be >= alpha (3)

Queues are named by direction, ``"R1->R2"`` (at most one link joins two nodes). Routes are
hop-count shortest paths (what ns-3's global routing computes); an ambiguous route (two
equal-length paths) is an error, so no lens ever picks a different path silently.

Randomness of the scenario itself (start-time distributions, receiver clock offsets) is
drawn by :meth:`Scenario.concrete_flows` from the run's seed, identically in every lens.

>>> s = dumbbell(pairs=2, variant="newreno", horizon_s=10.0)
>>> [f.id for f in s.flows], s.route("S0", "D0")
(['f0', 'f1'], ['S0', 'R1', 'R2', 'D0'])
>>> s.queue_ids_on(s.route("S0", "D0"))
['S0->R1', 'R1->R2', 'R2->D0']
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import networkx as nx
import numpy as np
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    SerializeAsAny,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcpn.errors import InputError
from tcpn.limits import integer_digits_problem, limit_problem, read_input
from tcpn.models.routing import RouteTable
from tcpn.models.schema_base import FieldProblem, VariantParams
from tcpn.models.schema_base import FieldProblem as _FieldProblem
from tcpn.models.schema_base import Strict as _Strict

__all__ = [
    "AGGREGATE_NAME", "ConcreteFlow", "DropTail", "ExponentialTime", "FieldProblem", "Flow",
    "Link", "LinkDirection", "ListErrors", "Measure", "RateErrors", "Red", "Scenario",
    "ScenarioError", "Sgpq", "TcpConfig", "ThresholdEcn", "TokenBucket", "TraceSelection",
    "UniformTime", "VariantParams", "Wireless", "dumbbell", "load_scenario", "parking_lot",
    "parse_scenario", "read_yaml", "scenario_rng", "validate_scenario",
]

#: The largest IPv4 packet (the total length field has 16 bits).
IPV4_MAX_PACKET_BYTES = 65_535
#: The name of the aggregate row of a result (beside one row per flow id): no flow may take it.
AGGREGATE_NAME = "all"
#: The largest window TCP can advertise: 65,535 bytes scaled by 2^14 (RFC 7323, 2.3); an
#: initial window beyond it can never be used, and its burst would cost a run minutes.
TCP_MAX_WINDOW_BYTES = 65_535 << 14
#: Spawn-key suffix of the stream that draws the scenario's own randomness.
SCENARIO_STREAM = 0
#: Spawn-key suffix of the stream a lens uses for its own randomness.
LENS_STREAM = 1


# --------------------------------------------------------------------------- queues


class DropTail(_Strict):
    """First-in first-out, drop arrivals when full (ns-3 ``DropTailQueue``, default ``100p``)."""

    kind: Literal["drop_tail"] = "drop_tail"
    limit: PositiveInt = 100
    unit: Literal["packets", "bytes"] = "packets"


class Red(_Strict):
    """Random Early Detection with ns-3.44 ``RedQueueDisc`` parameters and defaults.

    Thresholds are in ``unit`` like ``limit`` (ns-3 reads them in the queue's mode);
    ``max_p`` is ns-3's ``1/LInterm``. ``ecn`` marks ECN-capable packets instead of
    dropping them below ``max_th``; ``hard_drop`` drops (never marks) above ``max_th``.
    ``min_th = max_th = K`` with ``q_weight: 1``, ``gentle: false``, ``ecn: true`` and
    ``hard_drop: false`` is DCTCP's step marking: every ECN-capable arrival finding at
    least K packets queued is marked (ns-3's forced verdict, marked without hard drop).
    """

    kind: Literal["red"] = "red"
    limit: PositiveInt = 25
    unit: Literal["packets", "bytes"] = "packets"
    min_th: float = Field(default=5.0, ge=0)
    max_th: float = Field(default=15.0, gt=0)
    max_p: float = Field(default=0.02, gt=0, le=1)
    q_weight: float = Field(default=0.002, gt=0, le=1)
    gentle: bool = True
    wait: bool = True
    mean_packet_size_bytes: PositiveInt = 500
    idle_packet_size_bytes: int = Field(default=0, ge=0)
    ecn: bool = False
    hard_drop: bool = True

    @model_validator(mode="after")
    def _thresholds(self) -> Red:
        if self.max_th < self.min_th:
            raise _FieldProblem(("max_th",), f"max_th ({self.max_th:g}) must not be below "
                                              f"min_th ({self.min_th:g})")
        if self.max_th == self.min_th and self.gentle:
            raise _FieldProblem(("gentle",), f"min_th = max_th ({self.max_th:g}) is step "
                                             "marking: it needs gentle: false (a gentle "
                                             "ramp above max_th would start at max_p)")
        return self


class ThresholdEcn(_Strict):
    """Drop-tail queue that CE-marks an arriving packet when it already holds more than K.

    Marks only ECN-capable packets; others are enqueued unmarked (drop-tail when full).
    """

    kind: Literal["threshold_ecn"] = "threshold_ecn"
    limit: PositiveInt = 100
    unit: Literal["packets", "bytes"] = "packets"
    k: float = Field(ge=0, description="marking threshold in `unit`")

    @model_validator(mode="after")
    def _k_below_limit(self) -> ThresholdEcn:
        if self.k >= self.limit:
            raise _FieldProblem(("k",), f"k ({self.k:g}) must be below the limit ({self.limit})"
                                        " or no packet is ever marked")
        return self


class Sgpq(_Strict):
    """Small-get-priority queue: packets of at most ``threshold_bytes`` (IP size) go first.

    ``buffer`` ``shared``: one limit for both classes (the arrival is dropped when the total
    is full); ``split``: ``limit`` each.
    """

    kind: Literal["sgpq"] = "sgpq"
    limit: PositiveInt = 100
    unit: Literal["packets", "bytes"] = "packets"
    threshold_bytes: PositiveInt = 64
    buffer: Literal["shared", "split"] = "shared"


class TokenBucket(_Strict):
    """Token-bucket rate limiter: tokens at ``rate_bps``, bucket ``depth_bytes``.

    ``policer`` drops a non-conforming packet; ``shaper`` holds it in a FIFO of ``limit``
    packets until tokens suffice (ns-3 ``TbfQueueDisc``: defaults Burst 125000 B, Rate
    1 Mbit/s, MaxSize 1000p). The limiter sends on into the link at the link rate.
    """

    kind: Literal["token_bucket"] = "token_bucket"
    rate_bps: PositiveFloat = 1e6
    depth_bytes: PositiveInt = 125_000
    limit: PositiveInt = 1000
    unit: Literal["packets", "bytes"] = "packets"
    mode: Literal["policer", "shaper"] = "shaper"


QueueDiscipline = Annotated[
    DropTail | Red | ThresholdEcn | Sgpq | TokenBucket, Field(discriminator="kind")
]

# --------------------------------------------------------------------------- error models


class RateErrors(_Strict):
    """Independent losses at the receiving end of a link direction (ns-3 ``RateErrorModel``).

    ``unit: packet`` loses each packet with probability ``rate``; ``unit: byte`` with
    ``1 - (1 - rate)**size_bytes`` where the size is the frame's: IP size + the link's
    ``l2_header_bytes`` (ns-3 tests the frame before stripping its PPP header). ns-3's
    default unit is byte.
    """

    kind: Literal["rate"] = "rate"
    unit: Literal["packet", "byte"] = "byte"
    rate: float = Field(default=0.0, ge=0.0, le=1.0)

    def packet_error_rate(self, size_bytes: int) -> float:
        """Loss probability of one frame of ``size_bytes`` (IP size + L2 header).

        >>> round(RateErrors(unit="byte", rate=1e-4).packet_error_rate(1500), 4)
        0.1393
        """
        if self.unit == "packet":
            return self.rate
        return 1.0 - (1.0 - self.rate) ** size_bytes


class ListErrors(_Strict):
    """Scripted losses: drop the packets with these arrival numbers at the receiving end.

    Numbers count every packet (data and ACK) that arrives over the direction, starting at
    0 (ns-3 ``ReceiveListErrorModel`` drops arrival ``k`` when ``k`` is listed, counting
    from 0). Deterministic: for hand-checked scenarios.
    """

    kind: Literal["list"] = "list"
    packets: list[NonNegativeInt]


def _error_model_tag(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, Mapping) else getattr(value, "kind", None)
    if kind is None and isinstance(value, Mapping):
        kind = "list" if "packets" in value else "rate"
    return {"rate": "RateErrors", "list": "ListErrors"}.get(str(kind), str(kind))


ErrorModel = Annotated[
    Annotated[RateErrors, Tag("RateErrors")] | Annotated[ListErrors, Tag("ListErrors")],
    Discriminator(_error_model_tag),
]


# --------------------------------------------------------------------------- links


class LinkDirection(_Strict):
    """What one direction of a link does to packets: its queue and its error model."""

    queue: QueueDiscipline = Field(default_factory=DropTail)
    errors: ErrorModel | None = None


class Wireless(_Strict):
    """An 802.11 hop (study S3): ``station`` is the mobile end whose energy is reported.

    ``link_retransmissions`` false is "ACK-less 802.11" (one attempt per frame); true
    retries a failed frame up to ``retry_limit`` times. ``medium_access: dcf`` (the
    default) is the standard's distributed coordination function, timed by ``slot_s``,
    ``sifs_s`` (DIFS = SIFS + 2 slots), the PLCP preamble and header ``plcp_s`` and the
    contention window ``cw_min``..``cw_max`` (doubled per retry), with the link's two
    directions sharing the medium; an acknowledged attempt ends with ``mac_ack_s`` (SIFS +
    MAC ACK) or the ACK timeout (SIFS + slot + PLCP). The defaults are IEEE 802.11b's
    (DSSS, long preamble); ``eifs_s`` (364 us: SIFS + an ACK at 1 Mbit/s + DIFS) is how
    long a station waits after a frame it could not decode, and the two stations' backoffs
    run together and collide when they end in the same slot. ``none`` is the older model:
    each attempt costs its serialisation + ``mac_ack_s`` and nothing else, each direction
    with its own medium.
    ``delay_s`` of the link is the radio's propagation delay. Frame errors come from the
    direction's ``errors`` (byte model: ``PER = 1 - (1 - BER) ** (IP size +
    l2_header_bytes)``). Energy: joules per transmitted/received frame and byte, watts
    idle (defaults: Feeney and Nilsson, INFOCOM 2001; see ``docs/variants.md``).
    """

    station: str
    link_retransmissions: bool = True
    retry_limit: NonNegativeInt = 7
    mac_ack_s: float = Field(default=314e-6, ge=0.0)
    medium_access: Literal["dcf", "none"] = "dcf"
    slot_s: float = Field(default=20e-6, ge=0.0)
    sifs_s: float = Field(default=10e-6, ge=0.0)
    plcp_s: float = Field(default=192e-6, ge=0.0)
    cw_min: NonNegativeInt = 31
    cw_max: NonNegativeInt = 1023
    eifs_s: float = Field(default=364e-6, ge=0.0)
    tx_frame_j: float = Field(default=420e-6, ge=0.0)
    tx_byte_j: float = Field(default=1.9e-6, ge=0.0)
    rx_frame_j: float = Field(default=330e-6, ge=0.0)
    rx_byte_j: float = Field(default=0.42e-6, ge=0.0)
    idle_w: float = Field(default=0.8, ge=0.0)

    @model_validator(mode="after")
    def _window(self) -> Wireless:
        if self.cw_max < self.cw_min:
            raise _FieldProblem(("cw_max",), f"cw_max {self.cw_max} is below cw_min "
                                f"{self.cw_min}")
        return self


class Link(_Strict):
    """A full-duplex point-to-point link between nodes ``a`` and ``b``.

    ``rate_bps`` and ``delay_s`` apply to both directions; ``ab`` / ``ba`` hold the
    direction a->b / b->a. Shorthand: ``queue`` and ``errors`` at link level set both
    directions. Serialisation of a packet takes ``(size + l2_header_bytes) * 8 / rate_bps``
    (ns-3's point-to-point device adds a 2-byte PPP header).
    """

    a: str
    b: str
    rate_bps: PositiveFloat
    delay_s: float = Field(ge=0.0)
    l2_header_bytes: int = Field(default=2, ge=0)
    ab: LinkDirection = Field(default_factory=LinkDirection)
    ba: LinkDirection = Field(default_factory=LinkDirection)
    wireless: Wireless | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or not ({"queue", "errors"} & set(data)):
            return data
        data = dict(data)
        shared = {k: data.pop(k) for k in ("queue", "errors") if k in data}
        for side in ("ab", "ba"):
            direction = dict(data.get(side) or {})
            for key, value in shared.items():
                direction.setdefault(key, value)
            data[side] = direction
        return data

    @model_validator(mode="after")
    def _distinct_ends(self) -> Link:
        if self.a == self.b:
            raise _FieldProblem(("b",), f"a link joins two different nodes, got {self.a!r} twice")
        if self.wireless is not None and self.wireless.station not in (self.a, self.b):
            raise _FieldProblem(("wireless", "station"), f"station {self.wireless.station!r} "
                                f"is not an end of the link ({self.a}, {self.b})")
        return self

    def directions(self) -> Iterator[tuple[str, str, LinkDirection]]:
        """The two directions as ``(from, to, LinkDirection)``."""
        yield self.a, self.b, self.ab
        yield self.b, self.a, self.ba


# --------------------------------------------------------------------------- TCP


class TcpConfig(_Strict):
    """TCP parameters; defaults are ns-3.44's (``docs/scenarios.md`` lists each source).

    Windows are in segments of ``segment_size_bytes`` (payload); ``initial_ssthresh_segments``
    ``None`` means unbounded (ns-3: 0xffffffff bytes). ``rcv_buf_bytes`` is the receive
    window and ``snd_buf_bytes`` bounds unacknowledged data, as in ns-3. ``recovery``
    ``classic`` is RFC 5681/6582 fast recovery (ns-3 ``TcpClassicRecovery``; ns-3's own
    default PRR is available as ``prr`` to the ns-3 lens only). ``handshake``: a connection
    opens with SYN, SYN-ACK, ACK as in ns-3 (a lost SYN is sent again after
    ``syn_timeout_s``, ns-3's ``ConnTimeout``, doubled at each retry; after ``syn_retries``
    SYNs in all, ns-3's ``ConnCount`` (SynRetries), the first included, the next expiry
    gives up and the connection never opens); ``false`` starts it established at its start
    time (the ns3 lens runs the handshake before the start, out of sight of the
    experiment, when every flow starts at the same time: docs/validation.md).
    ``ssthresh_whole_segments``: the ssthresh of a loss, half the
    FlightSize (RFC 5681 eq. 4), is rounded down to whole segments, as ns-2 (the studies'
    simulator: ``ssthresh_ = (int) halfwin`` of its integer ``window()``), 4.4BSD
    (``min(snd_wnd, snd_cwnd) / 2 / t_maxseg``) and Linux (``tcp_reno_ssthresh``, in
    packets) do; ``false`` keeps the half segment of RFC 5681's byte arithmetic (net lens;
    ns-3 halves FlightSize in bytes either way, docs/validation.md).
    ``recovery_exit_growth``: the ACK that ends fast recovery deflates the window to
    ssthresh (RFC 5681 3.2 step 6, RFC 6582 3.2 step 6) and then grows it as any ACK of new
    data (+1/cwnd in congestion avoidance), as ns-2 (its Reno and NewReno agents reset
    ``dupwnd_`` and call ``opencwnd()`` from ``recv_newack_helper``) and ns-3.44
    (``ProcessAck`` calls ``IncreaseWindow`` after the deflation) do; ``false``: cwnd is
    ssthresh exactly after that ACK (RFC 5681's words; Vegas senders follow their own law
    either way).
    ``ecn_cwr`` (with ECN): how the window reacts to an ECN echo. ``ns2`` (the default;
    ns-2's ``TcpAgent::ecn``, the studies' simulator): ssthresh and cwnd are half the
    flight before the echoing ACK, and the window grows on every new ACK after it.
    ``ns3`` (ns-3.44's ``TcpSocketBase::EnterCwr`` and ``CA_CWR``, as Linux): half the
    flight after the ACK's segments have left it, and no growth until an ACK passes the
    highest segment sent at the reaction (ns-3 brings the window down by PRR over that
    round; the net lens sets it at once). ns-3's windows restart lower, so they react less
    often. The ns3 lens runs either: ``ns2`` on tcpn's socket (``EcnNs2Reaction``,
    ``cpp/variants.h``) for the loss-based variants, ``ns3`` as ns-3 does; other
    congestion controls keep ns-3's rule (DCTCP's own in both lenses; with ``ns2`` the
    plan's notes name any other flows). docs/validation.md, ``red_ecn``, compares both.
    ``ns3_reno_sack`` (ns3 lens only): without SACK, run ns-3.44's own socket, whose
    scoreboard guessed from duplicate ACKs retransmits on a new ACK and sets ssthresh at a
    timeout from that guess; ``false`` (the default) runs it with RFC 5681/6582's rules
    (``tcpn::Rfc5681Socket``, docs/validation.md), as the net lens does.
    ``ns3_rto_reset`` (ns3 lens only): run ns-3.44's own RTO rule, which recomputes the RTO
    from SRTT and RTTVAR at every new ACK and so ends a timeout's exponential backoff at
    the ACK of the retransmission; ``false`` (the default) keeps the backed-off RTO until
    an ACK gives a valid RTT sample (RFC 6298 and Karn; ns-2's ``TcpAgent::newack``), as
    the net lens does (``tcpn::TcpnSocket`` with ``KeepBackoff``, docs/validation.md).
    ``sack_after_timeout`` (with ``sack``): what a retransmission timeout does with the SACK
    scoreboard. ``forget`` (the default) clears it and goes back N from the first
    unacknowledged segment over every segment sent before the timeout, SACKed or not,
    until the ACKs pass the highest one (RFC 2018 8: the sender SHOULD turn off the SACKed
    bits, since the receiver may renege; RFC 6675 5.1: it MUST ignore prior SACK
    information in deciding what to retransmit; ns-2's ``Sack1TcpAgent::timeout``, the
    studies' simulator, clears its scoreboard); ``keep`` keeps it and resends only the
    segments it does not hold, as ns-3.44 and Linux do (RFC 6675's note on its errata).
    Both lenses follow the option (the ns3 lens's ``ForgetSack``, docs/validation.md);
    the fluid lens has no scoreboard and ignores it; ``keep`` without ``sack`` is refused
    (there is no scoreboard to keep). A variant registered with
    ``keeps_sack_after_timeout`` (BBR) keeps its scoreboard whatever the option says, in
    both lenses: for its flows neither the default nor a stated ``forget`` applies (the
    rule a flow runs is :attr:`ConcreteFlow.sack_after_timeout`). A stated ``forget`` is
    not refused for them: a scenario written out with every default
    (:meth:`Scenario.to_yaml`, the sweeps' and fits' copies) states it for every flow,
    and could then not be read back.
    ``pipe_counts_sacked_retransmits`` (with ``sack``): fast recovery's pipe (the segments
    presumed in the network, which the window must exceed for a segment to leave) keeps
    counting a segment retransmitted in the recovery after the receiver SACKs it, until the
    cumulative ACK passes it, as ns-3.44's ``TcpTxBuffer::BytesInFlight`` does
    (``TcpTxBuffer::Update`` leaves the SACKed segment's retransmitted flag set; ns-3-dev
    fixed it after ns-3.48, issue 1190); ``false`` (the default) counts it out when SACKed,
    as RFC 6675's ``SetPipe`` does. Both lenses follow the option (the ns3 lens's
    ``TcpnSocket`` with ``SackedRetransmitsOut``, docs/validation.md, ``cubic_2flows_100m``).
    ``data_retries``: ``None`` (the default) never gives a connection up, however often one
    segment's retransmission times out, as ns-2's ``TcpAgent`` (the studies' simulator,
    which backs off to ``maxrto_`` and keeps sending) and the net model do; a number closes
    the connection after that many retransmissions of one segment, ns-3's ``DataRetries``
    (ns-3.44's default 6; ns3 lens only).
    """

    segment_size_bytes: PositiveInt = 536
    ip_header_bytes: PositiveInt = 20
    tcp_header_bytes: PositiveInt = 20
    initial_cwnd_segments: PositiveInt = 10
    initial_ssthresh_segments: PositiveInt | None = None
    delack_count: PositiveInt = 2
    delack_timeout_s: float = Field(default=0.2, ge=0.0)
    min_rto_s: PositiveFloat = 1.0
    initial_rto_s: PositiveFloat = 1.0
    clock_granularity_s: PositiveFloat = 0.001
    rcv_buf_bytes: PositiveInt = 131_072
    snd_buf_bytes: PositiveInt = 131_072
    sack: bool = True
    timestamps: bool = True
    window_scaling: bool = True
    ecn: bool = False
    limited_transmit: bool = True
    dupack_threshold: PositiveInt = 3
    recovery: Literal["classic", "prr"] = "classic"
    handshake: bool = True
    syn_timeout_s: PositiveFloat = 3.0
    syn_retries: PositiveInt = 6
    ssthresh_whole_segments: bool = True
    recovery_exit_growth: bool = True
    ecn_cwr: Literal["ns2", "ns3"] = "ns2"
    ns3_reno_sack: bool = False
    ns3_rto_reset: bool = False
    sack_after_timeout: Literal["forget", "keep"] = "forget"
    pipe_counts_sacked_retransmits: bool = False
    data_retries: PositiveInt | None = None

    @property
    def options_bytes(self) -> int:
        """Bytes of TCP options on every segment: 12 with timestamps (10 + 2 padding)."""
        return 12 if self.timestamps else 0

    @property
    def data_packet_bytes(self) -> int:
        """IP size of a full data segment (1500 for MSS 1448 with timestamps).

        >>> TcpConfig(segment_size_bytes=1448).data_packet_bytes
        1500
        """
        return self.segment_size_bytes + self.header_bytes

    @property
    def header_bytes(self) -> int:
        """IP + TCP header + options bytes carried by every segment."""
        return self.ip_header_bytes + self.tcp_header_bytes + self.options_bytes

    @property
    def syn_packet_bytes(self) -> int:
        """IP size of a SYN or SYN-ACK: its options (window scale 3, SACK permitted 2,
        timestamps 10 bytes, when on) padded to 4 bytes, as ns-3 writes them.

        >>> TcpConfig().syn_packet_bytes, TcpConfig(sack=False).syn_packet_bytes
        (56, 56)
        >>> TcpConfig(timestamps=False, window_scaling=False).syn_packet_bytes
        44
        """
        options = 3 * self.window_scaling + 2 * self.sack + 10 * self.timestamps
        return self.ip_header_bytes + self.tcp_header_bytes + -(-options // 4) * 4

    @property
    def ack_packet_bytes(self) -> int:
        """IP size of a pure ACK without SACK blocks (40, or 52 with timestamps)."""
        return self.header_bytes

    @model_validator(mode="after")
    def _windows(self) -> TcpConfig:
        if self.data_packet_bytes > IPV4_MAX_PACKET_BYTES:
            raise _FieldProblem(("segment_size_bytes",), f"a segment of "
                                f"{self.segment_size_bytes} bytes makes {self.data_packet_bytes}"
                                f"-byte IP packets; IPv4 carries at most {IPV4_MAX_PACKET_BYTES}")
        if self.initial_cwnd_segments * self.segment_size_bytes > TCP_MAX_WINDOW_BYTES:
            raise _FieldProblem(("initial_cwnd_segments",), f"an initial window of "
                                f"{self.initial_cwnd_segments:,} segments of "
                                f"{self.segment_size_bytes} B is more than TCP's largest "
                                f"window, {TCP_MAX_WINDOW_BYTES:,} bytes (65,535 << 14, RFC "
                                "7323): no receiver can advertise it")
        if self.rcv_buf_bytes < self.segment_size_bytes:
            raise _FieldProblem(("rcv_buf_bytes",), f"rcv_buf_bytes ({self.rcv_buf_bytes}) is "
                                f"smaller than one segment ({self.segment_size_bytes} B)")
        if self.snd_buf_bytes < self.segment_size_bytes:
            raise _FieldProblem(("snd_buf_bytes",), f"snd_buf_bytes ({self.snd_buf_bytes}) is "
                                f"smaller than one segment ({self.segment_size_bytes} B)")
        if self.initial_rto_s < self.min_rto_s:
            raise _FieldProblem(("initial_rto_s",), f"initial_rto_s ({self.initial_rto_s:g}) is "
                                f"below min_rto_s ({self.min_rto_s:g})")
        if self.sack_after_timeout == "keep" and not self.sack:
            raise _FieldProblem(("sack_after_timeout",), "keep needs sack: true (without SACK "
                                "there is no scoreboard to keep across a timeout)")
        return self


# --------------------------------------------------------------------------- variants


# --------------------------------------------------------------------------- flows


class UniformTime(_Strict):
    """A time drawn uniformly from ``[low_s, high_s]``."""

    dist: Literal["uniform"]
    low_s: float = Field(ge=0.0, allow_inf_nan=False)
    high_s: float = Field(ge=0.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _ordered(self) -> UniformTime:
        if self.high_s < self.low_s:
            raise _FieldProblem(("high_s",), f"high_s ({self.high_s:g}) is below low_s "
                                             f"({self.low_s:g})")
        return self

    @property
    def min_s(self) -> float:
        """Smallest possible value."""
        return self.low_s

    def draw(self, rng: np.random.Generator) -> float:
        """One value."""
        return float(rng.uniform(self.low_s, self.high_s))


class ExponentialTime(_Strict):
    """A time ``offset_s`` + an exponential with mean ``mean_s``."""

    dist: Literal["exponential"]
    mean_s: float = Field(gt=0.0, allow_inf_nan=False)
    offset_s: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)

    @property
    def min_s(self) -> float:
        """Smallest possible value."""
        return self.offset_s

    def draw(self, rng: np.random.Generator) -> float:
        """One value."""
        return self.offset_s + float(rng.exponential(self.mean_s))


TimeSpec = Annotated[
    float | Annotated[UniformTime | ExponentialTime, Field(discriminator="dist")],
    Field(union_mode="left_to_right"),
]


def _min_time(spec: float | UniformTime | ExponentialTime) -> float:
    return float(spec) if isinstance(spec, int | float) else spec.min_s


def _draw_time(spec: float | UniformTime | ExponentialTime, rng: np.random.Generator) -> float:
    return float(spec) if isinstance(spec, int | float) else spec.draw(rng)


class Flow(_Strict):
    """A group of ``count`` identical TCP connections from ``src`` to ``dst``.

    The first starts at ``start_s`` (a number or a distribution), each next one ``gap_s``
    later (a number or a distribution, e.g. exponential with mean 0.05 s); all stop at
    ``stop_s`` (default: the horizon). ``bytes`` is the amount to send (``None``: bulk).
    ``app_rate_bps`` paces the application (``None``: as fast as TCP allows).
    ``params`` holds the variant's parameters; ``tcp`` overrides the scenario's TCP
    parameters for this group. ``receiver_clock_offset_s`` offsets the receiver's
    timestamp clock (Modified Vegas study); ``receiver_clock_skew`` makes it drift: the
    receiver's clock reads ``(1 + skew) * t + offset`` (must be > -1, or it runs backwards).
    """

    id: str | None = None
    src: str
    dst: str
    variant: str
    params: SerializeAsAny[VariantParams] | None = None
    count: PositiveInt = 1
    start_s: TimeSpec = 0.0
    gap_s: TimeSpec = 0.0
    stop_s: PositiveFloat | None = None
    bytes: PositiveInt | None = None
    app_rate_bps: PositiveFloat | None = None
    receiver_clock_offset_s: TimeSpec = 0.0
    receiver_clock_skew: float = 0.0
    tcp: TcpConfig | None = None

    @model_validator(mode="before")
    @classmethod
    def _params_variant(cls, data: Any) -> Any:
        """Tell ``params`` which variant it belongs to (the YAML does not repeat it)."""
        if isinstance(data, Mapping) and "variant" in data:
            data = dict(data)
            params = data.get("params")
            if params is None or isinstance(params, Mapping):
                data["params"] = {**(params or {}), "variant": data["variant"]}
        return data

    @field_validator("variant")
    @classmethod
    def _registered(cls, v: str) -> str:
        """A registered variant (:mod:`tcpn.models.registered_variants`), or the registered
        names with the closest one."""
        from tcpn.models.registered_variants import variant_spec

        try:
            variant_spec(v)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        return v

    @field_validator("params", mode="plain")
    @classmethod
    def _variant_params(cls, v: Any, info: ValidationInfo) -> VariantParams | None:
        """The parameters as the variant's own model (its ``params`` of
        :func:`tcpn.models.register_variant`); an unknown variant's error says it all."""
        from tcpn.models.registered_variants import variant_spec

        variant = info.data.get("variant")
        if variant is None:
            return None
        model = variant_spec(variant).params
        if isinstance(v, model):
            return v
        try:
            return model.model_validate(v)
        except ValidationError as exc:
            err = exc.errors()[0]
            cause = (err.get("ctx") or {}).get("error")
            path = tuple(err["loc"]) + (cause.path if isinstance(cause, _FieldProblem) else ())
            message = str(cause) if isinstance(cause, _FieldProblem) else \
                err["msg"].removeprefix("Value error, ")
            raise _FieldProblem(path, message) from None

    @field_validator("start_s", "gap_s", "receiver_clock_offset_s")
    @classmethod
    def _non_negative(cls, v: Any) -> Any:
        if isinstance(v, int | float) and v < 0:  # non-finite numbers never get here
            raise ValueError(f"must be >= 0, got {v:g}")
        return v

    @field_validator("receiver_clock_skew")
    @classmethod
    def _clock_runs_forward(cls, v: float) -> float:
        if not v > -1.0:  # non-finite numbers never get here
            raise ValueError(f"skew {v:g} makes the receiver clock (1 + skew) * t + offset "
                             "stop or run backwards: it must be > -1")
        return v


#: A connection id of a group with count > 1: ``<group>.<k>`` (k as written by
#: :func:`_connection_ids`: no leading zero; counts stay below 2**53, 16 digits).
_NUMBERED_ID = re.compile(r"(.+)\.(0|[1-9][0-9]{0,16})")


def _group_id(flow: Flow, index: int) -> str:
    """The id of ``flows[index]``: its own, else ``f<index>``."""
    return flow.id if flow.id is not None else f"f{index}"


def _connection_ids(group: str, count: int) -> list[str]:
    """The ids of a group's connections: the group id when ``count`` is 1, else
    ``<group>.<k>``."""
    return [group] if count == 1 else [f"{group}.{k}" for k in range(count)]


class ConcreteFlow(BaseModel):
    """One TCP connection with every random choice drawn: what a lens simulates.

    ``data_route`` / ``ack_route`` list the nodes crossed by data and by ACKs;
    ``data_queues`` / ``ack_queues`` the queue ids (``"A->B"``) they enter in order.
    ``tcp`` is the effective TCP configuration (scenario defaults + the flow's overrides).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    group: str
    index: int
    src: str
    dst: str
    variant: str
    params: SerializeAsAny[VariantParams]
    tcp: TcpConfig
    start_s: float
    stop_s: float
    bytes: int | None
    app_rate_bps: float | None
    receiver_clock_offset_s: float
    receiver_clock_skew: float = 0.0
    data_route: tuple[str, ...]
    ack_route: tuple[str, ...]
    data_queues: tuple[str, ...]
    ack_queues: tuple[str, ...]

    @property
    def ecn(self) -> bool:
        """Whether the flow negotiates ECN (its TCP ``ecn`` flag, or a variant registered
        with ``ecn=True``: ``ecn_reno``, ``ecn_newreno``)."""
        from tcpn.models.registered_variants import variant_spec

        return self.tcp.ecn or variant_spec(self.variant).ecn

    @property
    def sack_after_timeout(self) -> Literal["forget", "keep"]:
        """What a retransmission timeout does with the SACK scoreboard of this connection,
        the rule both lenses run: ``tcp.sack_after_timeout``, except ``keep`` whatever it
        says for a variant registered with ``keeps_sack_after_timeout`` (BBR;
        :func:`tcpn.models.register_variant`)."""
        from tcpn.models.registered_variants import variant_spec

        if variant_spec(self.variant).keeps_sack_after_timeout:
            return "keep"
        return self.tcp.sack_after_timeout


# --------------------------------------------------------------------------- trace, measure


class TraceSelection(_Strict):
    """What the lenses record. ``queues``: ``"all"``, ``"none"`` or a list of queue ids."""

    flow_events: bool = True
    cwnd: bool = True
    rtt: bool = True
    queues: Literal["all", "none"] | list[str] = "all"


class Measure(_Strict):
    """How summary metrics are computed: the window starts at ``warmup_s`` and ends at the
    horizon; time series use bins of ``bin_s``."""

    warmup_s: float = Field(default=0.0, ge=0.0)
    bin_s: PositiveFloat = 1.0


# --------------------------------------------------------------------------- scenario

#: Bytes of a scenario's name: it starts file names, which hold 255 bytes.
_NAME_BYTES = 200


class Scenario(_Strict):
    """A whole experiment. Load one with :func:`load_scenario`; see the module docstring."""

    _checks_its_text = frozenset({"name"})  # one file name: _one_file_name
    name: str = "scenario"
    description: str = ""
    nodes: list[str] = Field(default_factory=list)
    links: list[Link] = Field(min_length=1)
    flows: list[Flow] = Field(min_length=1)
    tcp: TcpConfig = Field(default_factory=lambda: TcpConfig())
    horizon_s: PositiveFloat
    seed: int = Field(default=1, ge=0)
    trace: TraceSelection = Field(default_factory=TraceSelection)
    measure: Measure = Field(default_factory=lambda: Measure())

    @field_validator("name")
    @classmethod
    def _one_file_name(cls, v: str) -> str:
        """The name starts the default output directories (``results/NAME-net-seed1``,
        ``reports/NAME-net``): one file name, so that they stay where they belong."""
        if v in ("", ".", "..") or any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in v):
            raise ValueError(f"{v!r} is not a single file name (it starts the default result "
                             "directory results/NAME-...): no '/', '\\' or control "
                             "characters, and not empty, '.' or '..'")
        if len(v.encode()) > _NAME_BYTES:
            raise ValueError(f"a name of {len(v.encode())} bytes: at most {_NAME_BYTES} bytes "
                             "(it starts a file name, which holds 255)")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        self._check_nodes()
        graph = self.graph()
        self._check_queues()
        self._check_flows(graph)
        self._check_trace()
        if self.measure.warmup_s >= self.horizon_s:
            raise _FieldProblem(("measure", "warmup_s"), f"warmup_s ({self.measure.warmup_s:g})"
                                f" leaves nothing of the horizon ({self.horizon_s:g} s)")
        self._check_delivery()
        self._check_cost()
        return self

    # ---- checks (each raises _FieldProblem naming the path)

    def _check_nodes(self) -> None:
        if len(set(self.nodes)) != len(self.nodes):
            second = next(i for i, n in enumerate(self.nodes) if n in self.nodes[:i])
            raise _FieldProblem(("nodes", second), f"node {self.nodes[second]!r} is listed "
                                "twice")
        declared = set(self.nodes)
        seen_pairs: dict[frozenset[str], int] = {}
        for i, link in enumerate(self.links):
            for end in ("a", "b"):
                node = getattr(link, end)
                if declared and node not in declared:
                    raise _FieldProblem(("links", i, end), f"unknown node {node!r} (declared: "
                                        f"{', '.join(self.nodes)})")
            pair = frozenset((link.a, link.b))
            if pair in seen_pairs:
                raise _FieldProblem(("links", i), f"a second link between {link.a} and {link.b}"
                                    f" (first: links[{seen_pairs[pair]}])")
            seen_pairs[pair] = i
        if not declared:
            self.__dict__["nodes"] = sorted({n for link in self.links for n in (link.a, link.b)})

    def _check_queues(self) -> None:
        biggest = max(self.flow_tcp(f).data_packet_bytes for f in self.flows)
        ack = max(self.flow_tcp(f).ack_packet_bytes for f in self.flows)
        for i, link in enumerate(self.links):
            for side, direction in (("ab", link.ab), ("ba", link.ba)):
                q = direction.queue
                if isinstance(q, Sgpq) and q.threshold_bytes < ack:
                    raise _FieldProblem(("links", i, side, "queue", "threshold_bytes"),
                                        f"threshold_bytes ({q.threshold_bytes}) is below the "
                                        f"{ack}-byte pure ACK: no ACK would get priority")
                if q.unit == "bytes" and q.limit < biggest:
                    raise _FieldProblem(("links", i, side, "queue", "limit"),
                                        f"a queue of {q.limit} bytes cannot hold one "
                                        f"{biggest}-byte data packet")
                if isinstance(q, TokenBucket) and q.depth_bytes < biggest:
                    raise _FieldProblem(("links", i, side, "queue", "depth_bytes"),
                                        f"a bucket of {q.depth_bytes} bytes never conforms a "
                                        f"{biggest}-byte data packet")

    def _check_flow_ids(self) -> None:
        """Every connection id (:meth:`concrete_flows`: the group id, or ``<group>.<k>``
        when ``count`` > 1) is unique, and none is empty or the aggregate row's name.
        Checked without listing the connections: a count may be huge (the cost check,
        later, refuses it)."""
        seen: dict[str, tuple[int, int]] = {}  # group id -> (index, count)
        numbered: dict[str, dict[int, int]] = {}  # "<g>.<k>" ids of single flows: g -> k -> i

        def clash(flow_id: str, first: int, i: int) -> _FieldProblem:
            return _FieldProblem(("flows", i, "id"), f"flow id {flow_id!r} is used twice: "
                                 f"flows[{first}] and flows[{i}] both give it (a group with "
                                 "count > 1 is <id>.0, <id>.1, ...)")

        for i, flow in enumerate(self.flows):
            group = _group_id(flow, i)
            if not group.strip():
                raise _FieldProblem(("flows", i, "id"), "an empty flow id: give it a name "
                                    "(or leave id out: f<index>)")
            if group == AGGREGATE_NAME and flow.count == 1:
                raise _FieldProblem(("flows", i, "id"), f"flow id {AGGREGATE_NAME!r} is the "
                                    "name of the aggregate row of every result: choose another")
            if group in seen:
                raise clash(group, seen[group][0], i)
            match = _NUMBERED_ID.fullmatch(group)
            if match and flow.count == 1:
                prefix, k = match.group(1), int(match.group(2))
                owner = seen.get(prefix)
                if owner is not None and owner[1] > 1 and k < owner[1]:
                    raise clash(group, owner[0], i)
                numbered.setdefault(prefix, {})[k] = i
            if flow.count > 1:
                taken = sorted(k for k in numbered.get(group, {}) if k < flow.count)
                if taken:
                    raise clash(f"{group}.{taken[0]}", numbered[group][taken[0]], i)
            seen[group] = (i, flow.count)

    def _check_flows(self, graph: nx.Graph) -> None:
        self._check_flow_ids()
        earliest = math.inf
        for i, flow in enumerate(self.flows):
            for end in ("src", "dst"):
                if getattr(flow, end) not in graph:
                    raise _FieldProblem(("flows", i, end), f"unknown node {getattr(flow, end)!r}")
            if flow.src == flow.dst:
                raise _FieldProblem(("flows", i, "dst"), f"a flow from {flow.src} to itself")
            if self._route_table.route(flow.src, flow.dst) is None:
                raise _FieldProblem(("flows", i, "dst"), f"no route from {flow.src} to "
                                    f"{flow.dst}: the nodes are not connected")
            if not self._route_table.unique(flow.src, flow.dst):
                # two are enough to show: a grid has exponentially many
                paths = itertools.islice(nx.all_shortest_paths(graph, flow.src, flow.dst), 2)
                shown = " and ".join("-".join(p) for p in paths)
                raise _FieldProblem(("flows", i, "dst"), f"ambiguous route from {flow.src} to "
                                    f"{flow.dst}: {shown} have equal length; remove a link")
            first = _min_time(flow.start_s)
            stop = flow.stop_s if flow.stop_s is not None else self.horizon_s
            if flow.stop_s is not None and flow.stop_s <= first:
                raise _FieldProblem(("flows", i, "stop_s"), f"stop_s ({flow.stop_s:g}) is not "
                                    f"after the earliest start ({first:g})")
            if first < stop:
                earliest = min(earliest, first)
        if earliest >= self.horizon_s:
            starts = ", ".join(f"{_min_time(f.start_s):g}" for f in self.flows)
            raise _FieldProblem(("horizon_s",), f"horizon_s ({self.horizon_s:g}) ends before any"
                                f" flow can start (earliest starts: {starts} s)")

    def _check_delivery(self) -> None:
        """Refuse an experiment in which no flow's first data packet can arrive before the
        horizon, even through empty queues: it could not tell anything. (One late flow is
        fine: a study cut short to its first seconds has them.)"""
        best: tuple[float, int, str] | None = None
        for i, flow in enumerate(self.flows):
            tcp = self.flow_tcp(flow)
            data_route, ack_route = self.route(flow.src, flow.dst), self.route(flow.dst, flow.src)
            start = _min_time(flow.start_s)
            setup = (self._transit_s(data_route, tcp.syn_packet_bytes)
                     + self._transit_s(ack_route, tcp.syn_packet_bytes)) if tcp.handshake else 0.0
            first = self._transit_s(data_route, tcp.data_packet_bytes)
            arrival = start + setup + first
            if best is None or arrival < best[0]:
                best = (arrival, i, f"start {start:g} s + connection set-up {setup:.3g} s + "
                                    f"{first:.3g} s to carry {tcp.data_packet_bytes} bytes over "
                                    f"{len(data_route) - 1} hops at "
                                    f"{min(self._rates(data_route)):g} bit/s at the slowest")
        if best is not None and best[0] > self.horizon_s:
            arrival, i, why = best
            raise _FieldProblem(("flows", i), f"no packet can arrive before horizon_s "
                                f"({self.horizon_s:g} s): the first data packet of the "
                                f"earliest flow arrives at {arrival:.3g} s at the earliest "
                                f"({why})")

    def _rates(self, route: Sequence[str]) -> list[float]:
        return [link.rate_bps for link in self.route_links(route)]

    def _transit_s(self, route: Sequence[str], size_bytes: int) -> float:
        """Time for one packet of ``size_bytes`` (IP) to cross ``route`` with empty queues."""
        total = 0.0
        for link in self.route_links(route):
            total += (size_bytes + link.l2_header_bytes) * 8 / link.rate_bps + link.delay_s
        return total

    def packet_hops_estimate(self) -> int:
        """An upper bound on the events a run must simulate, before it starts: packets
        times hops, and the reports of TCP-L receivers (:meth:`cost_by_field`).

        >>> dumbbell(pairs=1, variant="reno", horizon_s=10.0).packet_hops_estimate()
        127490
        """
        return math.ceil(sum(self.cost_by_field().values()))

    def cost_by_field(self) -> dict[tuple[str | int, ...], float]:
        """The estimated events of a run by the scenario field that makes them grow.

        ``("horizon_s",)``, the traffic: each connection sends at most its slowest link's
        rate (or its application rate) from its start to its stop; each link direction
        carries at most its rate over the horizon; ACKs are counted like data (the
        reference dumbbell: about 5 * 10^5). The initial window (``tcp`` or
        ``flows[i].tcp``, ``initial_cwnd_segments``): a connection sends it at once,
        within its receive and send buffers, so the packets of it beyond what its links
        can carry are still sent to the first hop (queued or dropped there). A TCP-L
        receiver's reporter (``flows[i].params.report_interval_s``) fires every interval
        over the horizon, with or without traffic.

        >>> spec = dumbbell(pairs=1, variant="reno", horizon_s=10.0)
        >>> {field: round(events) for field, events in spec.cost_by_field().items()}
        {('horizon_s',): 127490}
        """
        carried: dict[str, float] = {}
        smallest: dict[str, int] = {}
        costs: dict[tuple[str | int, ...], float] = {}
        for i, flow in enumerate(self.flows):
            tcp = self.flow_tcp(flow)
            data_route = self.route(flow.src, flow.dst)
            rate = min([*self._rates(data_route), flow.app_rate_bps or math.inf])
            stop = flow.stop_s if flow.stop_s is not None else self.horizon_s
            span = max(stop - _min_time(flow.start_s), 0.0)
            packets = flow.count * (rate * span / (8 * tcp.data_packet_bytes) + 2)
            for route, size in ((data_route, tcp.data_packet_bytes),
                                (self.route(flow.dst, flow.src), tcp.ack_packet_bytes)):
                for queue in self.queue_ids_on(route):
                    carried[queue] = carried.get(queue, 0.0) + packets
                    smallest[queue] = min(smallest.get(queue, size), size)
            burst = min(tcp.initial_cwnd_segments, tcp.rcv_buf_bytes // tcp.segment_size_bytes,
                        tcp.snd_buf_bytes // tcp.segment_size_bytes) * flow.count
            if burst > packets:
                field = ("flows", i, "tcp", "initial_cwnd_segments") if flow.tcp is not None \
                    and "initial_cwnd_segments" in flow.tcp.model_fields_set \
                    else ("tcp", "initial_cwnd_segments")
                costs[field] = costs.get(field, 0.0) + burst - packets
            interval = getattr(flow.params, "report_interval_s", None)
            if interval is not None:  # a variant reporting periodically (TCP-L)
                costs[("flows", i, "params", "report_interval_s")] = \
                    flow.count * (self.horizon_s / interval + 1)
        total = 0.0
        ends = self._links_by_ends
        for queue, packets in carried.items():
            a, b = _split_queue_id(queue)
            link = ends[(a, b)]
            capacity = link.rate_bps * self.horizon_s / (8 * (smallest[queue]
                                                              + link.l2_header_bytes)) + 1
            total += min(packets, capacity)
        return {("horizon_s",): total, **costs}

    def _check_cost(self) -> None:
        """Refuse more connections than ``limits().flows`` and a run estimated at more
        than ``limits().packet_hops`` events (:meth:`cost_by_field`), naming the field
        that contributes most, with the figures."""
        connections = sum(flow.count for flow in self.flows)
        problem = limit_problem("flows", connections)
        if problem is not None:
            biggest = max(range(len(self.flows)), key=lambda i: self.flows[i].count)
            raise _FieldProblem(("flows", biggest, "count"), f"the scenario opens "
                                f"{connections:,} connections: {problem}")
        costs = self.cost_by_field()
        problem = limit_problem("packet_hops", math.ceil(sum(costs.values())))
        if problem is None:
            return
        field = max(costs, key=lambda name: costs[name])
        if field == ("horizon_s",):
            raise _FieldProblem(field, f"too long a run: an estimated {problem}; estimated "
                                f"for {self.horizon_s:g} s over links of up to "
                                f"{max(link.rate_bps for link in self.links):g} bit/s with "
                                f"{connections} connection(s)")
        what = ("TCP-L reports, one every report_interval_s over "
                f"{self.horizon_s:g} s" if field[-1] == "report_interval_s" else
                "packets of initial windows sent at once beyond what the links carry")
        raise _FieldProblem(field, f"too many events: an estimated {problem}, "
                            f"{costs[field]:,.0f} of them {what}")

    def _check_trace(self) -> None:
        if isinstance(self.trace.queues, list):
            known = set(self.queue_ids())
            for j, q in enumerate(self.trace.queues):
                if q not in known:
                    raise _FieldProblem(("trace", "queues", j), f"unknown queue {q!r}; queues "
                                        f"are named 'A->B', e.g. {sorted(known)[0]!r}")

    # ---- topology

    def graph(self) -> nx.Graph:
        """The topology as an undirected NetworkX graph; edges carry their :class:`Link`.

        Built once per scenario (the scenario is frozen) and frozen itself, so that the
        checks, the routes and the lenses share it: rebuilt for every route, a chain of
        5,000 links with 1,000 flows took minutes to check.
        """
        return self._graph

    def model_copy(self, *, update: Mapping[str, Any] | None = None,
                   deep: bool = False) -> Scenario:
        """A copy (pydantic's), without the topology cached from this scenario's links."""
        copied = super().model_copy(update=update, deep=deep)
        for cached in ("_graph", "_route_table", "_links_by_ends"):
            copied.__dict__.pop(cached, None)
        return copied

    @functools.cached_property
    def _graph(self) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from(self.nodes)
        for link in self.links:
            g.add_edge(link.a, link.b, link=link)
        return nx.freeze(g)

    def route(self, src: str, dst: str) -> list[str]:
        """Nodes from ``src`` to ``dst`` on the hop-count shortest path (ns-3 global routing).

        >>> dumbbell(pairs=1, variant="reno", horizon_s=1.0).route("D0", "S0")
        ['D0', 'R2', 'R1', 'S0']
        """
        found = self._route_table.route(src, dst)
        if found is None:
            raise InputError(f"scenario {self.name}: no route from {src} to {dst}")
        return list(found)

    @functools.cached_property
    def _route_table(self) -> RouteTable:
        return RouteTable(self.nodes, ((link.a, link.b) for link in self.links))

    def link_between(self, a: str, b: str) -> Link:
        """The link joining ``a`` and ``b`` (in either orientation)."""
        return self.route_links((a, b))[0]

    def route_links(self, route: Sequence[str]) -> list[Link]:
        """The links along ``route`` (nodes), in order.

        >>> [f"{l.a}-{l.b}" for l in dumbbell(pairs=1, horizon_s=1.0).route_links(
        ...     ["S0", "R1", "R2"])]
        ['S0-R1', 'R1-R2']
        """
        ends = self._links_by_ends
        links = []
        for a, b in itertools.pairwise(route):
            link = ends.get((a, b))
            if link is None:
                raise InputError(f"scenario {self.name}: no link between {a} and {b}")
            links.append(link)
        return links

    @functools.cached_property
    def _links_by_ends(self) -> dict[tuple[str, str], Link]:
        """Each link by its two ends, in both orders (the first, if two join the same
        nodes), built once per scenario: a scan of every link per hop made a chain of
        10,000 links take minutes to check."""
        ends: dict[tuple[str, str], Link] = {}
        for link in self.links:
            ends.setdefault((link.a, link.b), link)
            ends.setdefault((link.b, link.a), link)
        return ends

    def direction(self, queue_id: str) -> LinkDirection:
        """The :class:`LinkDirection` of queue ``"A->B"``."""
        a, b = _split_queue_id(queue_id)
        link = self.link_between(a, b)
        return link.ab if (link.a, link.b) == (a, b) else link.ba

    def queue_ids(self) -> list[str]:
        """Every queue (one per link direction) as ``"A->B"``, in link order."""
        return [f"{a}->{b}" for link in self.links for a, b, _ in link.directions()]

    @staticmethod
    def queue_ids_on(route: Sequence[str]) -> list[str]:
        """The queues a packet following ``route`` enters, in order."""
        return [f"{a}->{b}" for a, b in itertools.pairwise(route)]

    def traced_queues(self) -> list[str]:
        """The queue ids selected by ``trace.queues``."""
        if self.trace.queues == "all":
            return self.queue_ids()
        if self.trace.queues == "none":
            return []
        return list(self.trace.queues)

    # ---- flows

    def net_only_features(self) -> list[str]:
        """Features only the net lens models, each naming its field.

        A lens that does not model one of them must refuse the scenario (listing these)
        rather than run a different experiment.
        """
        found = [f"links[{i}].wireless: the 802.11 last hop (link-layer retries, energy)"
                 for i, link in enumerate(self.links) if link.wireless is not None]
        found += [f"flows[{i}].receiver_clock_skew: a drifting receiver timestamp clock"
                  for i, flow in enumerate(self.flows) if flow.receiver_clock_skew != 0.0]
        where = [f"flows[{i}].tcp.handshake" if flow.tcp is not None
                 and "handshake" in flow.tcp.model_fields_set else "tcp.handshake"
                 for i, flow in enumerate(self.flows) if not self.flow_tcp(flow).handshake]
        found += [f"{field}: false (connections that start established, without SYN)"
                  for field in dict.fromkeys(where)]
        return found

    def flow_tcp(self, flow: Flow) -> TcpConfig:
        """Effective TCP configuration of ``flow``: the scenario's, then the flow's overrides."""
        if flow.tcp is None:
            return self.tcp
        merged = self.tcp.model_dump()
        merged.update({k: getattr(flow.tcp, k) for k in flow.tcp.model_fields_set})
        return TcpConfig.model_validate(merged)

    def concrete_flows(self, seed: np.random.SeedSequence | int | None = None) -> list[
            ConcreteFlow]:
        """Every connection with its random choices drawn from ``seed``'s scenario stream.

        The draws use :func:`scenario_rng` (``seed`` spawn key + ``SCENARIO_STREAM``), so
        every lens sees the same start times for the same run seed. Flow ids: the group id
        when ``count`` is 1, else ``"<group>.<k>"``.

        >>> s = dumbbell(pairs=2, variant="reno", horizon_s=5.0)
        >>> [(f.id, f.start_s, f.data_queues[1]) for f in s.concrete_flows(1)]
        [('f0', 0.0, 'R1->R2'), ('f1', 0.1, 'R1->R2')]
        """
        rng = scenario_rng(seed if seed is not None else self.seed)
        out: list[ConcreteFlow] = []
        for i, flow in enumerate(self.flows):
            group = _group_id(flow, i)
            tcp = self.flow_tcp(flow)
            params = flow.params
            assert params is not None  # filled by Flow._params_variant
            data_route = tuple(self.route(flow.src, flow.dst))
            ack_route = tuple(self.route(flow.dst, flow.src))
            start = _draw_time(flow.start_s, rng)
            for k, flow_id in enumerate(_connection_ids(group, flow.count)):
                if k:
                    start += _draw_time(flow.gap_s, rng)
                out.append(ConcreteFlow(
                    id=flow_id, group=group, index=k,
                    src=flow.src, dst=flow.dst, variant=flow.variant, params=params, tcp=tcp,
                    start_s=start, stop_s=flow.stop_s if flow.stop_s is not None
                    else self.horizon_s, bytes=flow.bytes, app_rate_bps=flow.app_rate_bps,
                    receiver_clock_offset_s=_draw_time(flow.receiver_clock_offset_s, rng),
                    receiver_clock_skew=flow.receiver_clock_skew,
                    data_route=data_route, ack_route=ack_route,
                    data_queues=tuple(self.queue_ids_on(data_route)),
                    ack_queues=tuple(self.queue_ids_on(ack_route)),
                ))
        return out

    # ---- identity, serialisation

    def content_hash(self) -> str:
        """SHA-256 of what determines the dynamics: every field with defaults filled in,
        except ``name``, ``description``, ``seed``, ``trace`` and ``measure``.

        Stable across key order, omitted defaults, node order and YAML formatting.

        >>> a = dumbbell(pairs=1, variant="reno", horizon_s=3.0)
        >>> b = a.model_copy(update={"name": "renamed", "seed": 9})
        >>> a.content_hash() == b.content_hash()
        True
        """
        payload = self.model_dump(mode="json", exclude={"name", "description", "seed", "trace",
                                                        "measure"})
        payload["nodes"] = sorted(payload["nodes"])  # a set: its order means nothing
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def to_yaml(self) -> str:
        """The scenario as YAML with every default written out (reloads to an equal one)."""
        return yaml.safe_dump(_strip_params_variant(self.model_dump(mode="json")),
                              sort_keys=False)


def _strip_params_variant(data: dict[str, Any]) -> dict[str, Any]:
    for flow in data.get("flows", []):
        if isinstance(flow.get("params"), dict):
            flow["params"].pop("variant", None)
            if not flow["params"]:
                flow["params"] = None
    return data


def _split_queue_id(queue_id: str) -> tuple[str, str]:
    a, sep, b = queue_id.partition("->")
    if not sep or not a or not b:
        raise InputError(f"queue id {queue_id!r} is not of the form 'A->B'")
    return a, b


def scenario_rng(seed: np.random.SeedSequence | int) -> np.random.Generator:
    """The generator for the scenario's own random choices in the run seeded by ``seed``.

    An int ``seed`` means replication 0 of that seed, as in :func:`tcpn.lenses.base.run_seeds`.

    >>> float(scenario_rng(1).random()) == float(scenario_rng(1).random())
    True
    """
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(
        seed, spawn_key=(0,))
    child = np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, SCENARIO_STREAM))
    return np.random.default_rng(child)


# --------------------------------------------------------------------------- loading


class ScenarioError(InputError):
    """A scenario is invalid; ``problems`` lists ``(location, message)`` pairs.

    The location reads ``file:line: field.path`` when the scenario came from a file.
    """

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("\n".join(f"{where}: {msg}" for where, msg in problems))


def _loc_text(path: Sequence[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "scenario"


def _yaml_marks(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                out[(*path, key.value)] = key.start_mark.line + 1
                _yaml_marks(value, (*path, key.value), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _yaml_marks(item, (*path, i), out)


def _closest_line(marks: Mapping[tuple[Any, ...], int], loc: Sequence[Any]) -> tuple[
        int | None, tuple[Any, ...]]:
    """Line of the deepest YAML node on ``loc`` and the path to show.

    Parts of ``loc`` that are neither in the YAML nor a schema field name are pydantic's
    union tags (``'vegas'``, ``'float'``, ``'tagged-union[...]'``) and are skipped.
    """
    path: tuple[Any, ...] = ()
    shown: tuple[Any, ...] = ()
    line = marks.get(())
    for i, part in enumerate(loc):
        if (*path, part) in marks:
            path = (*path, part)
            shown = (*shown, part)
            line = marks[path]
        elif i + 1 < len(loc) and (*path, loc[i + 1]) in marks:
            continue  # a level the schema added (link-level ``queue`` copied into ab/ba)
        elif isinstance(part, int) or part in _field_names() or part in _variant_field_names():
            path = (*path, part)
            shown = (*shown, part)
    return line, shown


@functools.cache
def _field_names() -> frozenset[str]:
    models: tuple[type[BaseModel], ...] = (
        Scenario, Link, LinkDirection, DropTail, Red, ThresholdEcn, Sgpq, TokenBucket,
        RateErrors, ListErrors, TcpConfig, Flow, Wireless, UniformTime, ExponentialTime,
        TraceSelection, Measure)
    return frozenset(name for model in models for name in model.model_fields)


def _variant_field_names() -> frozenset[str]:
    """The fields of every registered variant's parameters (the registry may grow)."""
    from tcpn.models.registered_variants import variant_names, variant_spec

    return frozenset(name for variant in variant_names()
                     for name in variant_spec(variant).params.model_fields)


def _problems(exc: ValidationError, marks: Mapping[tuple[Any, ...], int] | None,
              source: str | None) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for err in exc.errors():
        loc: tuple[Any, ...] = tuple(err["loc"])
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, _FieldProblem):
            loc = loc + cause.path
            message = str(cause)
        else:
            message = err["msg"].removeprefix("Value error, ")
        line, shown = _closest_line(marks or {}, loc)
        where = _loc_text(shown)
        if source is not None:
            where = f"{source}:{line}: {where}" if line is not None else f"{source}: {where}"
        problems.append((where, message))
    # a union error repeats once per alternative: keep the distinct ones
    return list(dict.fromkeys(problems))


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses nesting deeper than ``limits().nesting_depth``
    while composing (the composer recurses: a 1000-deep document would exhaust the stack)."""

    def __init__(self, text: str, where: str):
        super().__init__(text)
        self.where, self.depth = where, 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.depth += 1
        try:
            problem = limit_problem("nesting_depth", self.depth)
            if problem is not None:
                line = self.peek_event().start_mark.line + 1
                raise ScenarioError([(f"{self.where}:{line}", f"nesting too deep: {problem}")])
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _check_tree(node: yaml.Node, where: str) -> None:
    """Refuse keys given twice (naming both lines), recursive aliases, a document of
    more than ``limits().yaml_nodes`` nodes once aliases are expanded (an alias bomb) and
    integers of more digits than Python reads, all on the composed graph, before anything
    is built from it."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def expanded(node: yaml.Node, path: tuple[Any, ...]) -> int:
        line = node.start_mark.line + 1
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in open_nodes:
            raise ScenarioError([(f"{where}:{line}", "a recursive alias: the node contains "
                                                     "itself")])
        open_nodes.add(id(node))
        total = 1
        if isinstance(node, yaml.MappingNode):
            first: dict[str, yaml.Node] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in first and key.tag != "tag:yaml.org,2002:merge":
                        raise ScenarioError([(f"{where}:{key.start_mark.line + 1}",
                                              f"{_loc_text((*path, key.value))}: given twice, "
                                              f"on {_place(first[key.value])} and on "
                                              f"{_place(key)}; remove one (YAML would keep "
                                              "the last silently)")])
                    first[key.value] = key
                total += expanded(key, path) + expanded(value, (*path, key.value)
                                                        if isinstance(key, yaml.ScalarNode)
                                                        else path)
        elif isinstance(node, yaml.SequenceNode):
            total += sum(expanded(item, (*path, i)) for i, item in enumerate(node.value))
        elif node.tag == "tag:yaml.org,2002:int":
            problem = integer_digits_problem(node.value)
            if problem is not None:  # PyYAML's int() would raise a bare ValueError
                raise ScenarioError([(f"{where}:{line}", f"{_loc_text(path)}: {problem}")])
        open_nodes.discard(id(node))
        sizes[id(node)] = total
        problem = limit_problem("yaml_nodes", total)
        if problem is not None:
            raise ScenarioError([(f"{where}:{line}", f"the document is too large once its "
                                                     f"aliases are expanded: {problem}")])
        return total

    expanded(node, ())


def _place(node: yaml.Node) -> str:
    return f"line {node.start_mark.line + 1}, column {node.start_mark.column + 1}"


def read_yaml(text: str, where: str) -> tuple[Any, yaml.Node]:
    """The data of one YAML document and its composed node tree (for line numbers), with
    every check of a scenario file's YAML: keys given twice, recursive aliases, nesting
    deeper than ``limits().nesting_depth``, more than ``limits().yaml_nodes`` nodes once
    aliases are expanded, control characters. Errors are :class:`ScenarioError` naming
    ``where`` and the line. Scenario and sweep files are read through here.

    >>> read_yaml("a: 1\\na: 2\\n", "x.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tcpn.models.scenario.ScenarioError: x.yaml:2: a: given twice, on line 1, column 1 and ...
    """
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text, where)
        node = loader.get_single_node()
        if node is None:
            raise ScenarioError([(f"{where}:1", "the file is empty (a scenario is a mapping "
                                                "of fields: name, links, flows, horizon_s...)")])
        _check_tree(node, where)
        data = loader.construct_document(node)
    except yaml.reader.ReaderError as exc:
        at = text.count("\n", 0, max(exc.position, 0)) + 1
        raise ScenarioError([(f"{where}:{at}", f"not valid YAML: unacceptable character "
                                                 f"#x{exc.character:04x} (control characters "
                                                 "such as NUL are not allowed)")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ScenarioError([(f"{where}{line}", f"not valid YAML: "
                                                f"{getattr(exc, 'problem', exc)}")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    return data, node


def parse_scenario(text: str, source: str | None = None) -> Scenario:
    """A :class:`Scenario` from YAML ``text``; errors name ``source``, the line and the field.

    Keys given twice, recursive aliases, nesting deeper than ``limits().nesting_depth`` and
    documents larger than ``limits().yaml_nodes`` nodes (aliases expanded) are refused
    before anything is built (:mod:`tcpn.limits`).

    >>> parse_scenario("links: [{a: A, b: B, rate_bps: 1.0e6, delay_s: -1}]\\n"
    ...                "flows: [{src: A, dst: B, variant: reno}]\\nhorizon_s: 1", "x.yaml")
    Traceback (most recent call last):
    ...
    tcpn.models.scenario.ScenarioError: x.yaml:1: links[0].delay_s: Input should be greater \
than or equal to 0
    """
    where = source or "<scenario>"
    data, node = read_yaml(text, where)
    if not isinstance(data, dict):
        raise ScenarioError([(f"{where}:1", "a scenario is a mapping of fields (name, links, "
                                            "flows, horizon_s...)")])
    data.pop("sweep", None)  # a sweep section is tcpn sweep's; the rest is the scenario
    marks: dict[tuple[Any, ...], int] = {}
    _yaml_marks(node, (), marks)
    if "name" not in data and source is not None:
        data["name"] = Path(source).stem
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(_problems(exc, marks, where)) from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file (``name`` defaults to the file's stem).

    The file must be a regular file of UTF-8 text of at most ``limits().scenario_bytes``
    (:mod:`tcpn.limits`); a FIFO or a device is refused without reading it.

    >>> load_scenario("scenarios/dumbbell_newreno.yaml").horizon_s  # doctest: +SKIP
    60.0
    """
    path = Path(path)
    data = read_input(path, "scenario_bytes", "scenario")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ScenarioError([(f"{path}:{line}", f"not UTF-8 text (byte 0x{data[exc.start]:02x}"
                                                f" at offset {exc.start}): save the scenario "
                                                "as UTF-8")]) from None
    return parse_scenario(text, str(path))


def validate_scenario(data: Mapping[str, Any]) -> Scenario:
    """A :class:`Scenario` from a mapping, with errors as :class:`ScenarioError`."""
    try:
        return Scenario.model_validate(dict(data))
    except ValidationError as exc:
        raise ScenarioError(_problems(exc, None, None)) from None


# --------------------------------------------------------------------------- builders


def dumbbell(pairs: int = 2, variant: str = "newreno", horizon_s: float = 60.0, *,
             bottleneck_rate_bps: float = 10e6, bottleneck_delay_s: float = 0.02,
             access_rate_bps: float = 100e6, access_delay_s: float = 0.001,
             queue: Mapping[str, Any] | None = None, reverse_pairs: int = 0,
             start_gap_s: float = 0.1, tcp: Mapping[str, Any] | None = None,
             name: str = "dumbbell", seed: int = 1) -> Scenario:
    """Senders S0..S{n-1} -> R1 ==bottleneck== R2 -> receivers D0..D{n-1}.

    Forward flow ``f{i}`` goes S{i}->D{i} and starts at ``i * start_gap_s``; reverse flow
    ``r{j}`` goes D{j}->S{j} (its data shares R2->R1 with the forward ACKs). ``queue`` is
    the bottleneck's queue in both directions (default drop-tail 100 packets).

    >>> s = dumbbell(pairs=2, reverse_pairs=1, horizon_s=5.0)
    >>> [(f.id, f.src, f.dst) for f in s.flows]
    [('f0', 'S0', 'D0'), ('f1', 'S1', 'D1'), ('r0', 'D0', 'S0')]
    """
    if pairs < 1 or reverse_pairs < 0 or reverse_pairs > pairs:
        raise InputError(f"dumbbell: need pairs >= 1 and 0 <= reverse_pairs <= pairs, got "
                         f"pairs={pairs}, reverse_pairs={reverse_pairs}")
    links: list[dict[str, Any]] = [{"a": "R1", "b": "R2", "rate_bps": bottleneck_rate_bps,
                                    "delay_s": bottleneck_delay_s,
                                    "queue": dict(queue or {"kind": "drop_tail"})}]
    for i in range(pairs):
        links.append({"a": f"S{i}", "b": "R1", "rate_bps": access_rate_bps,
                      "delay_s": access_delay_s})
        links.append({"a": "R2", "b": f"D{i}", "rate_bps": access_rate_bps,
                      "delay_s": access_delay_s})
    flows: list[dict[str, Any]] = [
        {"id": f"f{i}", "src": f"S{i}", "dst": f"D{i}", "variant": variant,
         "start_s": round(i * start_gap_s, 9)} for i in range(pairs)]
    flows += [{"id": f"r{j}", "src": f"D{j}", "dst": f"S{j}", "variant": variant,
               "start_s": round((j + 0.5) * start_gap_s, 9)} for j in range(reverse_pairs)]
    return validate_scenario({"name": name, "links": links, "flows": flows,
                              "tcp": dict(tcp or {}), "horizon_s": horizon_s, "seed": seed})


def parking_lot(hops: int = 3, variant: str = "newreno", horizon_s: float = 60.0, *,
                rate_bps: float = 10e6, delay_s: float = 0.01,
                access_rate_bps: float = 100e6, access_delay_s: float = 0.001,
                queue: Mapping[str, Any] | None = None, tcp: Mapping[str, Any] | None = None,
                name: str = "parking_lot", seed: int = 1) -> Scenario:
    """Routers R0..R{hops} in a chain; flow ``long`` crosses every hop (S->D), flow
    ``x{i}`` crosses hop i only (X{i}->Y{i}, attached to R{i} and R{i+1}).

    >>> s = parking_lot(hops=2, horizon_s=5.0)
    >>> s.route("S", "D"), s.route("X1", "Y1")
    (['S', 'R0', 'R1', 'R2', 'D'], ['X1', 'R1', 'R2', 'Y1'])
    """
    if hops < 1:
        raise InputError(f"parking_lot: hops must be >= 1, got {hops}")
    q = dict(queue or {"kind": "drop_tail"})
    links: list[dict[str, Any]] = [
        {"a": f"R{i}", "b": f"R{i + 1}", "rate_bps": rate_bps, "delay_s": delay_s, "queue": q}
        for i in range(hops)]
    access = {"rate_bps": access_rate_bps, "delay_s": access_delay_s}
    links += [{"a": "S", "b": "R0", **access}, {"a": f"R{hops}", "b": "D", **access}]
    flows: list[dict[str, Any]] = [{"id": "long", "src": "S", "dst": "D", "variant": variant}]
    for i in range(hops):
        links += [{"a": f"X{i}", "b": f"R{i}", **access}, {"a": f"R{i + 1}", "b": f"Y{i}",
                                                           **access}]
        flows.append({"id": f"x{i}", "src": f"X{i}", "dst": f"Y{i}", "variant": variant,
                      "start_s": round(0.1 * (i + 1), 9)})
    return validate_scenario({"name": name, "links": links, "flows": flows,
                              "tcp": dict(tcp or {}), "horizon_s": horizon_s, "seed": seed})
