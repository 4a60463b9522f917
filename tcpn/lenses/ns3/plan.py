"""An ns-3 simulation in plain, picklable terms: what the builder builds in a worker.

The lens (:mod:`tcpn.lenses.ns3.lens`) translates a scenario into an :class:`Ns3Plan`
without touching ns-3; the builder (:mod:`tcpn.lenses.ns3.builder`) turns the plan
into ns-3 objects inside a worker process. Queue discs, congestion controls and socket
options are named by their ns-3 TypeIds and attribute strings, exactly as ns-3 reads them.

>>> q = QueuePlan("tcpn::TailQueueDisc", (("Limit", "100"),))
>>> link = LinkPlan("A", "B", rate_bps=1e6, delay_s=0.01, queue_ab=q, queue_ba=q)
>>> flow = FlowPlan("f0", "A", "B", start_s=0.0, stop_s=1.0, port=10000)
>>> plan = Ns3Plan("tiny", links=(link,), flows=(flow,), horizon_s=1.0)
>>> plan.nodes(), plan.queue_ids(), plan.endpoint_devices()
(('A', 'B'), ('A->B', 'B->A'), (('A', 'B'), ('B', 'A')))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tcpn.lenses.ns3.wireless import WifiPlan

__all__ = ["ErrorPlan", "FlowPlan", "LinkPlan", "Ns3Plan", "QueuePlan"]

Attributes = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class QueuePlan:
    """Root queue disc of one link direction: its TypeId and attribute strings."""

    type_id: str
    attributes: Attributes = ()


@dataclass(frozen=True)
class ErrorPlan:
    """Losses at the receiving end of a link direction (``tcpn::LinkErrorModel``).

    ``rate`` per packet, or per byte of the frame (IP size + ``l2_bytes``) when
    ``per_byte``; a non-empty ``drop_list`` (0-based arrival numbers) replaces the random
    losses. The handshake packets of the flows in ``skip_handshake`` (flow indices: a
    connection the scenario starts established) are neither lost nor counted.
    """

    rate: float = 0.0
    per_byte: bool = False
    drop_list: tuple[int, ...] = ()
    l2_bytes: int = 2
    skip_handshake: tuple[int, ...] = ()


@dataclass(frozen=True)
class LinkPlan:
    """A point-to-point (or 802.11: ``wifi``) link; ``*_ab`` is the direction a->b (queue
    on a, errors at b). ``device_rate_ab_bps``/``device_rate_ba_bps`` (0: ``rate_bps``) are
    the DataRate of each direction's device when it differs from the scenario's rate (a
    link-layer header other than PPP's 2 bytes, see the lens)."""

    a: str
    b: str
    rate_bps: float
    delay_s: float
    queue_ab: QueuePlan
    queue_ba: QueuePlan
    errors_ab: ErrorPlan | None = None
    errors_ba: ErrorPlan | None = None
    wifi: WifiPlan | None = None  # an 802.11 hop instead of point-to-point
    device_rate_ab_bps: float = 0.0
    device_rate_ba_bps: float = 0.0


@dataclass(frozen=True)
class FlowPlan:
    """One TCP connection from ``src`` to ``dst``, received on ``port`` at ``dst``.

    ``max_bytes`` 0 means bulk; ``app_rate_bps`` 0 means the application writes as fast as
    the socket takes data. ``socket_attributes`` configure the sender's socket,
    ``sink_attributes`` the receiver's listening socket. The receiver's timestamp clock
    reads ``receiver_clock_rate * t + receiver_clock_offset_s``. ``report_interval_s`` > 0
    makes the receiver report the frame counters of the error model on ``report_link``
    (a queue id, TCP-L). ``socket`` is the sender socket's TypeId (a ``TcpSocketBase``
    subclass; empty: ns-3's own), ``sink_socket`` the receiver's listening socket's.
    ``sink_congestion`` (empty: the node's) and ``sink_congestion_attributes`` are the
    receiver's congestion control, for a variant whose receiver echo lives there (DCTCP).
    ``first_write_s`` >= 0: the application writes from that
    time, not from the connection's opening (the connection opens at ``start_s``, before).
    """

    id: str
    src: str
    dst: str
    start_s: float
    stop_s: float
    port: int
    max_bytes: int = 0
    send_size_bytes: int = 536
    app_rate_bps: float = 0.0
    congestion: str = "ns3::TcpNewReno"
    congestion_attributes: Attributes = ()
    recovery: str = "ns3::TcpClassicRecovery"
    socket: str = ""
    socket_attributes: Attributes = ()
    sink_attributes: Attributes = ()
    receiver_clock_rate: float = 1.0
    receiver_clock_offset_s: float = 0.0
    report_interval_s: float = 0.0
    report_link: str = ""
    first_write_s: float = -1.0
    sink_socket: str = ""
    sink_congestion: str = ""
    sink_congestion_attributes: Attributes = ()


@dataclass(frozen=True)
class Ns3Plan:
    """A whole simulation: topology, flows, horizon, RNG run, what to record.

    ``rng_run`` is ns-3's ``RngRun`` (the seed stays 1): every random stream is also
    assigned explicitly, so a plan gives the same result in any process.
    ``traced_queues`` lists the queue ids (``"A->B"``) whose packet events are recorded;
    pcap files (``snap_bytes`` per record) are written on every flow's two end devices.
    Every time of the plan is ns-3's clock, which runs ``time_offset_s`` ahead of the
    scenario's (room for handshakes before time 0); ``notes`` name each approximation the
    plan makes of the scenario (the lens's provenance repeats them).
    """

    name: str
    links: tuple[LinkPlan, ...]
    flows: tuple[FlowPlan, ...]
    horizon_s: float
    rng_run: int = 1
    traced_queues: tuple[str, ...] = ()
    snap_bytes: int = 96
    flow_monitor: bool = False
    initial_rto_s: float = 1.0
    time_offset_s: float = 0.0
    notes: tuple[str, ...] = ()

    def nodes(self) -> tuple[str, ...]:
        """Node names in order of first appearance."""
        return tuple(dict.fromkeys(n for link in self.links for n in (link.a, link.b)))

    def queue_ids(self) -> tuple[str, ...]:
        """Every link direction as ``"A->B"``."""
        return tuple(q for link in self.links for q in (f"{link.a}->{link.b}",
                                                        f"{link.b}->{link.a}"))

    def endpoint_devices(self) -> tuple[tuple[str, str], ...]:
        """``(node, neighbour)`` of the devices where flows start or end (pcap points):
        the source's device toward its first hop and the receiver's toward its last hop."""
        neighbours: dict[str, list[str]] = {}
        for link in self.links:
            neighbours.setdefault(link.a, []).append(link.b)
            neighbours.setdefault(link.b, []).append(link.a)
        devices: dict[tuple[str, str], None] = {}
        for flow in self.flows:
            for end in (flow.src, flow.dst):
                if len(neighbours[end]) != 1:
                    raise ValueError(f"flow {flow.id}: end node {end} has "
                                     f"{len(neighbours[end])} links; the ns3 lens captures "
                                     "at hosts with exactly one link")
                devices[(end, neighbours[end][0])] = None
        return tuple(devices)
