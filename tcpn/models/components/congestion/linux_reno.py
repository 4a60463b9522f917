"""Linux's Reno (ns-3.44's ``TcpLinuxReno``): NewReno's losses with the window growth Linux
counts in acknowledged segments (RFC 3465's byte counting).

The sender is the NewReno sender (its recovery and RTO; RFC 6675's scoreboard with
``tcp.sack``) with one more place, ``linux_reno`` (a ``LinuxReno`` record: the count
``cnt`` of acknowledged segments towards the next increase, and the ``window`` an ACK
leaves). An ACK of new data outside recovery grows the window by what it acknowledges
(:func:`linux_reno_grow`, Linux's ``tcp_slow_start`` and ``tcp_cong_avoid_ai``): slow
start adds the segments acknowledged, up to ``ssthresh``, and congestion avoidance one
segment per ``trunc(cwnd)`` acknowledged segments (not on an ACK that is also a
duplicate, :func:`~tcpn.models.components.sender.growth_withheld`); a loss halves the
window, not the flight (:func:`linux_reno_ssthresh`). With delayed ACKs (two segments per
ACK) that doubles the window per round trip in slow start and adds a segment per round
trip after it, where NewReno's one segment per ACK (RFC 5681's formula, ns-3's
``TcpNewReno``) grows it by half and adds half a segment. Linux's own reno is this growth;
``tcpn testbed`` runs this variant on it (docs/validation.md, "Real Linux TCP").

>>> from tcpn.models.components.sender import SenderConfig
>>> net = linux_reno_sender_net(SenderConfig(flow=0, dst=1, variant="newreno"))
>>> [a.transition for a in net.arcs if a.place == "linux_reno" and a.kind.name == "INPUT"]
['new_ack', 'recovery_exit']
"""

from __future__ import annotations

from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.extend import track, wrap_output
from tcpn.models.components.sender import SenderConfig, sender_net, unless_withheld
from tcpn.models.schema_base import VariantParams
from tcpn.models.variant_registry import Ns3Congestion, register_variant
from tcpn.petrinets import REAL, IntSet, PetriNet, Place, RecordSet
from tcpn.petrinets.net_functions import net_function

__all__ = ["LINUX_RENO", "LinuxReno", "LinuxRenoParams", "linux_reno_grow",
           "linux_reno_sender_net", "linux_reno_ssthresh"]

LINUX_RENO = RecordSet("LinuxReno", cnt=IntSet(0), window=REAL)
LinuxReno: Any = LINUX_RENO.record_type


@net_function
def linux_reno_grow(c: Any, cwnd: float, ssthresh: float, acked: int) -> Any:
    """ns-3's ``TcpLinuxReno::IncreaseWindow`` (also ``TcpDctcp``'s growth), ``window`` the
    new window in segments: slow start adds the ``acked`` segments up to ``ssthresh``; in
    congestion avoidance the counter ``cnt`` counts acknowledged segments and the window
    grows by one segment per ``w = trunc(cwnd)`` of them (one per RTT with delayed ACKs,
    where NewReno's ``1 / cwnd`` per ACK gives one per two RTTs).

    >>> linux_reno_grow(LinuxReno(0, 0.0), 10.0, 12.5, 4).window
    12.5
    >>> c = linux_reno_grow(LinuxReno(9, 0.0), 10.0, 5.0, 2)
    >>> c.window, c.cnt
    (11.0, 1)
    """
    if cwnd < ssthresh:
        return c._replace(window=min(cwnd + acked, ssthresh))
    w = max(1, int(cwnd))
    grown = cwnd + 1.0 if c.cnt >= w else cwnd
    cnt = (0 if c.cnt >= w else c.cnt) + acked
    delta = cnt // w
    return c._replace(cnt=cnt - delta * w, window=grown + delta)



@net_function
def linux_reno_ssthresh(cwnd: float, mss: int) -> float:
    """ns-3's ``TcpLinuxReno::GetSsThresh`` (Linux's ``tcp_reno_ssthresh``: half the
    window, at least two segments), on a window of whole bytes, in segments of ``mss``.

    >>> linux_reno_ssthresh(45.0, 1448), linux_reno_ssthresh(3.0, 1000)
    (22.5, 2.0)
    """
    return max(2.0, float(int(cwnd * mss) // 2) / mss)


def linux_reno_sender_net(config: SenderConfig, name: str = "sender") -> PetriNet:
    """The Linux Reno sender module on the NewReno sender ``config.variant`` (``newreno``
    or ``sack``); ports ``out`` and ``acks``. A loss sets ``ssthresh`` to half the window
    (:func:`linux_reno_ssthresh`, not half the flight); the ACK that ends a recovery grows
    the restored window as any ACK of new data (when the sender's ``exit_growth`` does)."""
    if config.variant not in ("newreno", "sack"):
        raise InputError(f"linux_reno of flow {config.flow}: recovery {config.variant!r} is "
                         "not modelled (newreno, or sack with tcp.sack)")
    net = sender_net(config, name)
    net.declare(linux_reno_grow=linux_reno_grow, linux_reno_ssthresh=linux_reno_ssthresh,
                MSS_BYTES=config.segment_bytes)
    net.add_place(Place("linux_reno", LINUX_RENO, initial=[LinuxReno(0, 0.0)]))
    grown = "linux_reno_grow(c, t.cwnd, t.ssthresh, a.ack - t.una)"
    # an ACK that is also a duplicate leaves the window and the count as they are
    # (ns-3's IncreaseWindow is not called in CA_DISORDER)
    sack = config.variant == "sack"
    track(net, "new_ack", "linux_reno", "c", unless_withheld(sack, grown, "c"))
    window = unless_withheld(sack, f"({grown}).window", "t.cwnd")
    wrap_output(net, "new_ack", "tcb", f"({{base}})._replace(cwnd={window})")
    if config.exit_growth:
        restored = "linux_reno_grow(c, t.ssthresh, t.ssthresh, a.ack - t.una)"
        track(net, "recovery_exit", "linux_reno", "c", restored)
        wrap_output(net, "recovery_exit", "tcb", f"({{base}})._replace(cwnd=({restored}).window)")
    cut = "linux_reno_ssthresh(t.cwnd, MSS_BYTES)"
    inflation = "" if config.variant == "sack" else " + DUPTHRESH"
    wrap_output(net, "fast_retransmit", "tcb",
                f"({{base}})._replace(ssthresh={cut}, cwnd={cut}{inflation})")
    wrap_output(net, "timeout", "tcb", f"({{base}})._replace(ssthresh={cut})")
    return net


# --------------------------------------------------------------------------- registration


class LinuxRenoParams(VariantParams):
    """Linux's Reno has no parameters of its own (ns-3.44's ``TcpLinuxReno``)."""


def _sender(config: SenderConfig, params: LinuxRenoParams) -> PetriNet:
    return linux_reno_sender_net(config)


register_variant("linux_reno", LinuxRenoParams, _sender, recovery="newreno",
                 ns3=lambda params: Ns3Congestion("ns3::TcpLinuxReno", ()),
                 unsupported={"fluid": "the fluid lens's AIMD grows by one segment per round "
                                       "trip and ACK ratio; Linux's counts acknowledged "
                                       "segments (run newreno with tcp.delack_count 1 for "
                                       "its fluid approximation)"})
