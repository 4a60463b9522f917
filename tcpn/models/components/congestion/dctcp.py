"""DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) as a sub-net, as ns-3.44's ``TcpDctcp``.

The sender is the ECN NewReno sender (its recovery, RTO; SACK with ``tcp.sack``) with
one more place, ``dctcp`` (a ``Dctcp`` record: ``alpha``, the segments ``acked`` and
``marked`` in the current observation window, and its end ``next_seq``):

* every ACK of new data counts the segments it acknowledges, as marked when it carries
  ECE (ns-3's ``PktsAcked``, RFC 8257 3.3 steps 1-3); when its cumulative ACK reaches
  ``next_seq`` (the next segment to send when the window opened) ``alpha = (1 - g) alpha
  + g F``, ``F`` the marked fraction, and a new window opens at the next segment to
  send (:func:`dctcp_ack`);
* an ACK of new data outside recovery and CWR grows the window as Linux Reno
  (:func:`linux_reno_grow`), unless it is also a duplicate ACK (it SACKs new data:
  :func:`~tcpn.models.components.sender.growth_withheld`, ns-3's ``CA_DISORDER``);
* an ECE ACK outside CWR (once per window of data) sets ``ssthresh = cwnd = trunc((1 -
  alpha / 2) cwnd)`` bytes (:func:`dctcp_cut`, ns-3's ``GetSsThresh``; the ``alpha``
  before this ACK's update, as ns-3 enters CWR before ``PktsAcked``) and stays in CWR,
  not growing, until an ACK passes the highest segment sent then (ns-3's ``m_recover``);
  that ACK may enter CWR again when it carries ECE;
* a fast retransmit and a timeout take the same ``ssthresh`` (ns-3 asks the congestion
  control's ``GetSsThresh`` on a loss too).

The receiver echoes CE exactly (``exact_ecn_echo``: RFC 8257 3.2, see
:mod:`tcpn.models.components.receiver`). ``alpha`` starts at ``alpha_init`` (ns-3's
``DctcpAlphaOnInit``, 1: the first reaction halves). The window grows as ns-3's
``TcpDctcp`` (a ``TcpLinuxReno``) grows it on an ACK of new data outside recovery:
one segment per ``trunc(cwnd)`` acknowledged segments (:func:`linux_reno_grow`), not the
base sender's ``1 / cwnd`` per ACK. Not modelled: ns-3's DCTCP sends retransmissions
and pure ACKs ECT too (the base sender does not).

>>> from tcpn.models.components.sender import SenderConfig
>>> net = dctcp_sender_net(SenderConfig(flow=0, dst=1, variant="newreno", ecn=True))
>>> len([a for a in net.arcs if a.place == "dctcp" and a.kind.name == "INPUT"])
7
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import Field

from tcpn.errors import InputError
from tcpn.models.components.congestion.linux_reno import linux_reno_grow
from tcpn.models.components.extend import track, wrap_output
from tcpn.models.components.sender import (
    NEW_DATA_ACKS,
    SenderConfig,
    sender_net,
    unless_withheld,
)
from tcpn.models.schema_base import VariantParams
from tcpn.models.variant_registry import Ns3Congestion, register_variant
from tcpn.petrinets import INT, REAL, IntSet, PetriNet, Place, RecordSet
from tcpn.petrinets.net_functions import net_function

__all__ = ["DCTCP", "DctcpParams", "dctcp_ack", "dctcp_cut", "dctcp_new_ack", "dctcp_sender_net",
           "dctcp_start"]

DCTCP = RecordSet("Dctcp", alpha=REAL, acked=IntSet(0), marked=IntSet(0), next_seq=INT,
                  cnt=IntSet(0), window=REAL)
Dctcp: Any = DCTCP.record_type

#: The base sender's once-per-window condition on an ECE ACK (RFC 3168: ``una`` past the
#: window of the last reaction) and DCTCP's as ns-3 runs it (the ACK passes ``m_recover``).
_RFC3168_WINDOW = "t.una >= t.cwr_high"
_NS3_WINDOW = "a.ack > t.cwr_high"


def dctcp_start(alpha_init: float) -> Any:
    """The state of a new connection: ``alpha_init``, no window open yet (-1)."""
    return Dctcp(alpha_init, 0, 0, -1, 0, 0.0)


@net_function
def dctcp_ack(c: Any, t: Any, a: Any, g: float) -> Any:
    """The state after ACK ``a`` of new data (ns-3's ``TcpDctcp::PktsAcked``).

    A window opened at segment 10 (``next_seq``); 6 segments of 10 were marked, the ACK
    of segment 10 (2 more, ECE) closes it: ``F = 8 / 12``, ``alpha = 15/16 * 0.5 + 1/16 *
    2/3 = 0.5104``, the next window ends at ``t.nxt`` (14):

    >>> from tcpn.models.components.sender import Tcb
    >>> from tcpn.models.components.packets import Pkt
    >>> t = Tcb(10.0, 5.0, 9, 14, 14, 0, 0, False, 0, False, (), 0, False, 0)
    >>> ack = Pkt(flow=0, dst=0, seq=-1, ack=11, size=40, ts=0.0, echo=0.0, ecn=0,
    ...           ece=True, cwr=False, retx=False, sack=())
    >>> c = dctcp_ack(Dctcp(0.5, 10, 6, 10, 0, 0.0), t, ack, 1.0 / 16)
    >>> round(c.alpha, 4), c.acked, c.marked, c.next_seq
    (0.5104, 0, 0, 14)
    >>> dctcp_ack(dctcp_start(0.5), t, ack._replace(ece=False), 1.0 / 16)[:4]
    (0.5, 2, 0, 14)
    """
    acked = c.acked + a.ack - t.una
    marked = c.marked + (a.ack - t.una if a.ece else 0)
    next_seq = t.nxt if c.next_seq < 0 else c.next_seq
    if a.ack >= next_seq:
        fraction = marked / acked if acked > 0 else 0.0
        return c._replace(alpha=(1.0 - g) * c.alpha + g * fraction, acked=0, marked=0,
                          next_seq=t.nxt)
    return c._replace(acked=acked, marked=marked, next_seq=next_seq)


@net_function
def dctcp_new_ack(c: Any, t: Any, a: Any, g: float) -> Any:
    """The state after ACK ``a`` of new data outside recovery: :func:`dctcp_ack`, then
    :func:`linux_reno_grow` by the segments it acknowledges unless the sender is in CWR
    (``a.ack`` not past ``t.cwr_high``: ns-3 does not grow there), ``window`` the new
    window."""
    counted = dctcp_ack(c, t, a, g)
    if a.ack > t.cwr_high:
        return linux_reno_grow(counted, t.cwnd, t.ssthresh, a.ack - t.una)
    return counted._replace(window=t.cwnd)


@net_function
def dctcp_cut(cwnd: float, alpha: float, mss: int) -> float:
    """ns-3's ``TcpDctcp::GetSsThresh``: ``trunc((1 - alpha / 2) cwnd)`` in bytes, here in
    segments of ``mss`` bytes (at least one segment).

    >>> dctcp_cut(20.0, 1.0, 1448), dctcp_cut(20.0, 0.25, 1448)
    (10.0, 17.5)
    >>> round(dctcp_cut(7.0, 0.1, 1000), 3)
    6.65
    """
    bytes_cwnd = float(int(cwnd * mss))  # ns-3's window is whole bytes
    return max(1.0, float(int((1.0 - alpha / 2.0) * bytes_cwnd)) / mss)


def _ns3_window(net: PetriNet, transition: str) -> None:
    """Make ``transition``'s once-per-window test ns-3's (see :data:`_NS3_WINDOW`)."""
    t = net.transitions[transition]
    if t.guard is None or _RFC3168_WINDOW not in t.guard:
        raise InputError(f"dctcp: the sender's {transition!r} has no ECN window test "
                         f"{_RFC3168_WINDOW!r} to replace")
    net.transitions[transition] = dataclasses.replace(
        t, guard=t.guard.replace(_RFC3168_WINDOW, _NS3_WINDOW))


def dctcp_sender_net(config: SenderConfig, g: float = 1.0 / 16, alpha_init: float = 1.0,
                     name: str = "sender") -> PetriNet:
    """The DCTCP sender module on the ECN NewReno sender ``config.variant`` (``newreno``
    or ``sack``); ports ``out`` and ``acks``."""
    if config.variant not in ("newreno", "sack") or not config.uses_ecn:
        raise InputError(f"dctcp of flow {config.flow}: recovery {config.variant!r} "
                         f"{'' if config.uses_ecn else 'without ECN '}is not modelled "
                         "(newreno or sack, with ECN)")
    net = sender_net(config, name)
    net.declare(DCTCP_G=g, MSS_BYTES=config.segment_bytes, dctcp_ack=dctcp_ack,
                dctcp_cut=dctcp_cut, dctcp_new_ack=dctcp_new_ack)
    net.add_place(Place("dctcp", DCTCP, initial=[dctcp_start(alpha_init)]))
    # an ACK that is also a duplicate is counted (ns-3's PktsAcked in CA_DISORDER) but
    # does not grow the window (no IncreaseWindow there)
    new_ack = unless_withheld(config.variant == "sack", "dctcp_new_ack(c, t, a, DCTCP_G)",
                              "dctcp_ack(c, t, a, DCTCP_G)._replace(window=t.cwnd)")
    track(net, "new_ack", "dctcp", "c", new_ack)
    for tname in (t for t in NEW_DATA_ACKS if t in net.transitions and t != "new_ack"):
        track(net, tname, "dctcp", "c", "dctcp_ack(c, t, a, DCTCP_G)")
    cut = "dctcp_cut(t.cwnd, c.alpha, MSS_BYTES)"
    for tname in ("new_ack", "ecn_reduce"):
        _ns3_window(net, tname)
    wrap_output(net, "ecn_reduce", "tcb", f"({{base}})._replace(ssthresh={cut}, cwnd={cut}, "
                                          "cwr_high=t.high)")
    wrap_output(net, "new_ack", "tcb", f"({{base}})._replace(cwnd=({new_ack}).window)")
    inflation = "" if config.variant == "sack" else " + DUPTHRESH"
    for tname in ("fast_retransmit", "timeout"):
        track(net, tname, "dctcp", "c", "c")
    wrap_output(net, "fast_retransmit", "tcb",
                f"({{base}})._replace(ssthresh={cut}, cwnd={cut}{inflation})")
    wrap_output(net, "timeout", "tcb", f"({{base}})._replace(ssthresh={cut})")
    return net


# --------------------------------------------------------------------------- registration


class DctcpParams(VariantParams):
    """DCTCP as ns-3.44's ``TcpDctcp``: ``g`` the EWMA gain of ``alpha`` (``DctcpShiftG``,
    1/16), ``alpha_init`` its initial value (``DctcpAlphaOnInit``, 1) and ``ect0``
    (``UseEct0``: ECT(0), else ECT(1); the net lens's queues treat both alike)."""

    g: float = Field(default=1.0 / 16, gt=0.0, le=1.0)
    alpha_init: float = Field(default=1.0, ge=0.0, le=1.0)
    ect0: bool = True


def _sender(config: SenderConfig, params: DctcpParams) -> PetriNet:
    return dctcp_sender_net(config, float(params.g), float(params.alpha_init))


def _ns3(params: DctcpParams) -> Ns3Congestion:
    return Ns3Congestion("ns3::TcpDctcp", (
        ("DctcpShiftG", repr(float(params.g))),
        ("DctcpAlphaOnInit", repr(float(params.alpha_init))),
        ("UseEct0", str(params.ect0).lower())))


register_variant("dctcp", DctcpParams, _sender, recovery="newreno", ecn=True,
                 exact_ecn_echo=True, ns3=_ns3,
                 unsupported={"fluid": "its reaction is proportional to the marked fraction "
                                       "alpha, an EWMA over windows of data; the fluid "
                                       "lens's ECN law halves per mark. DCTCP's steady state "
                                       "is tcpn.solvers.closed_forms.ecn.dctcp_sawtooth"})
