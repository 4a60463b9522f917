"""TCP Westwood+ as a sub-net: bandwidth estimate from ACKs, once per RTT; ssthresh after loss.

The filter is **ns-3's** ``TcpWestwoodPlus`` (ns-3.44), not Linux's ``tcp_westwood.c``:

* each ACK adds to ``acked`` the segments ns-3.44 passes to ``PktsAcked``
  (``TcpSocketBase::ProcessAck``): a duplicate ACK (``ack == SND.UNA < SND.MAX``, with SACK
  whether or not it is RFC 6675's duplicate) one, "after all, one segment has been ACKed";
  a partial ACK in fast recovery one ("all others have been processed when they come
  under the form of dupACKs"); an ACK of new data after duplicate ACKs outside a recovery
  (``CA_DISORDER``) the segments it acknowledges less those duplicate ACKs (none when
  fewer); any other ACK of new data the segments it acknowledges. This is Westwood's own
  accounting (Casetti et al., MobiCom 2001, the study's ref. [6]: a duplicate ACK stands
  for a segment delivered, the cumulative ACK that follows counts only what they did not;
  Linux's ``westwood_acked_count`` does the same). Until issue 29 the net model counted
  the ACKs of new data only: on study S4's lossy hop against Reno (replication 0) its
  estimate at the first timeout (1.30 s, after a recovery of 31 duplicate ACKs) set
  ssthresh 2.9 segments where ns-3 set 3.3, and the runs parted from there;
* the first such ACK when no window is open opens one lasting the sender's smoothed RTT
  (SRTT, RFC 6298, after this ACK's sample): a timed token on ``bw_window``, ready at
  ``now + srtt`` (ns-3 schedules ``EstimateBW`` after the ``rtt`` ``TcpSocketBase`` passes
  to ``PktsAcked``, which is ``m_tcb->m_srtt``); ``estimate_bw`` fires then: sample ``b =
  acked / srtt`` (segments/s), ``acked = 0``;
* Tustin filter (``filter: tustin``, ns-3's default): ``BWE = 0.9 BWE + 0.05 (b +
  b_prev)``, starting from 0; ``filter: none`` takes ``BWE = b``. (Linux uses
  ``BWE = 7/8 BWE + 1/8 b`` once per RTT, with a 50 ms minimum window.)

On three duplicate ACKs and on a timeout ``ssthresh = max(2, BWE * RTTmin)`` segments
(``RTTmin`` the smallest SRTT, ns-3's ``m_minRtt = min(m_srtt, m_minRtt)`` in
``TcpSocketBase::EstimateRtt``, the SYN-ACK's included: :func:`westwood_handshake`):
NewReno then sets ``cwnd = ssthresh + 3`` (fast recovery) or 1 (timeout). The rest is
NewReno (ns-3's Westwood+ is a ``TcpNewReno``; the ns3 lens runs ``tcpn::WestwoodPlus``,
which keeps the fraction of a byte in congestion avoidance as the net model does). A
window that closes at the instant an ACK arrives closes first (``estimate_bw`` has
priority ``P_HIGH``): that ACK counts in the next window.

The smoothed RTT, not the latest sample, is also the study's simulator's: ns-2's TCP-Linux
runs Linux 2.6.22.6's ``tcp_westwood.c``, whose ``tcp_westwood_pkts_acked`` keeps ``w->rtt =
tp->srtt >> 3`` for the window and ``update_rtt_min`` the minimum of it (Linux took the
RTT sample from 2.6.24 on).

>>> from tcpn.models.components.sender import SenderConfig
>>> net = westwood_sender_net(SenderConfig(flow=0, dst=1), filter_type="tustin")
>>> sorted(t for t in net.transitions if t not in ("open", "send"))[:3]
['dup_ack', 'estimate_bw', 'fast_retransmit']
"""

from __future__ import annotations

from typing import Any, Literal

from tcpn.errors import InputError
from tcpn.models.components.extend import add_action, track, wrap_output
from tcpn.models.components.packets import SYN_ACK_SEQ
from tcpn.models.components.sender import (
    ACK_TRANSITIONS,
    NEW_DATA_ACKS,
    PARTIAL_ACKS,
    SenderConfig,
    sender_net,
)
from tcpn.models.schema_base import VariantParams
from tcpn.models.variant_registry import Ns3Congestion, register_variant
from tcpn.petrinets import BOOL, P_HIGH, REAL, IntSet, PetriNet, Place, RecordSet, Transition
from tcpn.petrinets.net_functions import net_function

__all__ = ["WESTWOOD", "WestwoodPlusParams", "westwood_ack", "westwood_estimate",
           "westwood_handshake", "westwood_sender_net",
           "westwood_ssthresh", "westwood_start"]

WESTWOOD = RecordSet("Westwood", bwe=REAL, last_sample=REAL, acked=IntSet(0), counting=BOOL,
                     min_rtt=REAL, last_rtt=REAL)
Westwood: Any = WESTWOOD.record_type

#: Tustin filter gain of ns-3's ``TcpWestwoodPlus::EstimateBW`` (``ALPHA``).
TUSTIN_ALPHA = 0.9


def westwood_start() -> Any:
    """The state of a connection with no sample: no estimate, no window open."""
    return Westwood(0.0, 0.0, 0, False, 0.0, 0.0)


def westwood_ack(w: Any, acked: int, srtt: float) -> tuple[Any, float]:
    """State after an ACK of ``acked`` new segments, the sender's smoothed RTT being
    ``srtt`` after it (< 0: no RTT measured yet), and the length of the window it opens
    (0: none).

    >>> w, window = westwood_ack(westwood_start(), 2, 0.1)
    >>> w.acked, w.counting, w.min_rtt, window
    (2, True, 0.1, 0.1)
    """
    if srtt > 0:
        w = w._replace(last_rtt=srtt,
                       min_rtt=srtt if w.min_rtt <= 0 else min(w.min_rtt, srtt))
    if w.last_rtt <= 0:  # ns-3: no RTT measured yet (m_srtt zero), PktsAcked returns
        return w, 0.0
    w = w._replace(acked=w.acked + acked)
    if w.counting:
        return w, 0.0
    return w._replace(counting=True), w.last_rtt


@net_function
def westwood_estimate(w: Any, window_s: float, filter_type: str) -> Any:
    """State when a window of ``window_s`` closes: the sample and the filtered estimate.

    >>> w = westwood_estimate(westwood_start()._replace(acked=10, counting=True), 0.1,
    ...                       "tustin")
    >>> round(w.bwe, 9), w.last_sample, w.acked, w.counting
    (5.0, 100.0, 0, False)
    """
    sample = w.acked / window_s
    bwe = sample if filter_type == "none" else (
        TUSTIN_ALPHA * w.bwe + (1.0 - TUSTIN_ALPHA) * 0.5 * (sample + w.last_sample))
    return w._replace(bwe=bwe, last_sample=sample, acked=0, counting=False)


@net_function
def westwood_handshake(w: Any, srtt: float) -> Any:
    """State after the SYN-ACK's RTT sample: ``RTTmin`` starts at that SRTT (< 0: none).

    ns-3's ``TcpSocketBase::ProcessSynSent`` runs ``EstimateRtt`` on the SYN-ACK, which sets
    ``m_minRtt = min(m_srtt, m_minRtt)``: the handshake's round trip, of packets without
    payload, is the smallest SRTT of the connection (on study S4's dumbbell 1.6 % below
    the SRTT after the first data ACK, and Westwood+'s ssthresh with it).

    >>> westwood_handshake(westwood_start(), 0.0445).min_rtt
    0.0445
    """
    return w._replace(min_rtt=srtt) if srtt > 0 else w


@net_function
def westwood_ssthresh(w: Any) -> float:
    """``max(2, BWE * RTTmin)`` segments.

    >>> westwood_ssthresh(westwood_start()._replace(bwe=150.0, min_rtt=0.1))
    15.0
    """
    return max(2.0, w.bwe * w.min_rtt)


def _on_new_data(w: Any, t: Any, a: Any, r2: Any) -> dict[str, Any]:
    """An ACK of new data outside fast recovery (or the one that ends it)."""
    disorder = not t.inrec and t.una >= t.recover and t.dupacks > 0  # ns-3's CA_DISORDER
    acked = a.ack - t.una - (t.dupacks if disorder else 0)
    if acked < 0:  # fewer than the duplicate ACKs counted: ns-3 calls no PktsAcked
        return {"w2": w, "bw_window_s": 0.0}
    w2, window = westwood_ack(w, acked, r2.srtt)
    return {"w2": w2, "bw_window_s": window}


def _on_partial(w: Any, r2: Any) -> dict[str, Any]:
    """A partial ACK of fast recovery: one segment."""
    w2, window = westwood_ack(w, 1, r2.srtt)
    return {"w2": w2, "bw_window_s": window}


def _on_other(w: Any, t: Any, a: Any, r: Any) -> dict[str, Any]:
    """An ACK of no new data: one segment if it is a duplicate ACK (a late SYN-ACK is
    none)."""
    if not (a.ack == t.una and t.high > t.una and a.seq != SYN_ACK_SEQ):
        return {"w2": w, "bw_window_s": 0.0}
    w2, window = westwood_ack(w, 1, r.srtt)
    return {"w2": w2, "bw_window_s": window}


def westwood_sender_net(config: SenderConfig, filter_type: str = "tustin",
                        name: str = "sender") -> PetriNet:
    """The Westwood+ sender module on the NewReno sender ``config.variant`` (``newreno``, or
    ``sack``: NewReno with the RFC 6675 scoreboard); ports ``out`` and ``acks``. Every ACK
    feeds the bandwidth sample as ns-3's counts it (module docstring)."""
    if filter_type not in ("tustin", "none"):
        raise InputError(f"westwood+ of flow {config.flow}: filter {filter_type!r} is not "
                         "'tustin' or 'none'")
    if config.variant not in ("newreno", "sack"):
        raise InputError(f"westwood+ of flow {config.flow}: recovery {config.variant!r} is "
                         "not newreno or sack")
    net = sender_net(config, name)
    net.declare(FILTER=filter_type, westwood_ssthresh=westwood_ssthresh,
                westwood_estimate=westwood_estimate)
    net.add_place(Place("westwood", WESTWOOD, initial=[westwood_start()]))
    net.add_place(Place("bw_window", REAL.timed("TReal")))
    for tname in (t for t in ACK_TRANSITIONS if t in net.transitions):
        track(net, tname, "westwood", "w", "w2")
        if tname in PARTIAL_ACKS:
            add_action(net, tname, _on_partial, ("w2", "bw_window_s"))
        elif tname in NEW_DATA_ACKS:
            add_action(net, tname, _on_new_data, ("w2", "bw_window_s"))
        else:
            net.add_read("rtt", tname, "r")
            add_action(net, tname, _on_other, ("w2", "bw_window_s"))
        net.add_output("bw_window", tname, "bw_window_s", when="bw_window_s > 0",
                       delay="bw_window_s")
    if "open" in net.transitions and config.handshake:
        net.declare(westwood_handshake=westwood_handshake)
        track(net, "open", "westwood", "w", "westwood_handshake(w, r2.srtt)")
    net.add_transition(Transition("estimate_bw", priority=P_HIGH))
    net.add_input("bw_window", "estimate_bw", "d")
    track(net, "estimate_bw", "westwood", "w", "westwood_estimate(w, d, FILTER)")
    # fast_retransmit takes ``w`` (above): ssthresh from the estimate before its own count,
    # as ns-3 calls DupAck before PktsAcked
    # SACK recovery enters at cwnd = ssthresh (RFC 6675), NewReno's inflates by DUPTHRESH
    inflation = "" if config.variant == "sack" else " + DUPTHRESH"
    wrap_output(net, "fast_retransmit", "tcb",
                "({base})._replace(ssthresh=westwood_ssthresh(w), "
                f"cwnd=westwood_ssthresh(w){inflation})")
    net.add_read("westwood", "timeout", "w")
    wrap_output(net, "timeout", "tcb", "({base})._replace(ssthresh=westwood_ssthresh(w))")
    return net


# --------------------------------------------------------------------------- registration


class WestwoodPlusParams(VariantParams):
    """Westwood+ bandwidth filter (ns-3 ``TcpWestwoodPlus::FilterType``, default Tustin)."""

    variant: Literal["westwood_plus"]
    filter: Literal["tustin", "none"] = "tustin"


def _ns3(params: WestwoodPlusParams) -> Ns3Congestion:
    return Ns3Congestion("tcpn::WestwoodPlus", (
        ("FilterType", "Tustin" if params.filter == "tustin" else "None"),))


register_variant("westwood_plus", WestwoodPlusParams,
                 lambda config, params: westwood_sender_net(config, params.filter),
                 recovery="newreno", ns3=_ns3,
                 unsupported={"fluid": "the fluid model has no bandwidth estimate"})
