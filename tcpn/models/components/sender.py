"""TCP senders as sub-nets: Tahoe, Reno, NewReno, SACK recovery, ECN; RTO; applications.

Control state lives on places: ``tcb`` holds one ``Tcb`` record (``cwnd`` and ``ssthresh``
in segments, ``una`` oldest unacknowledged segment, ``nxt`` next to send, ``high`` one
past the highest ever sent, ``dupacks``, ``recover`` (RFC 6582), ``inrec`` (in fast
recovery), ``cwr_high``/``cwr_pending`` (RFC 3168), ``sacked`` (the SACK scoreboard) and
``highrxt`` (one past the highest segment retransmitted by fast recovery: RFC 6675
HighRxt with SACK; NewReno's fast retransmit and partial ACKs set it too, for Karn's
rule), ``partial`` (a partial ACK came in this recovery),
``limited`` (segments sent by limited transmit since the last new ACK));
``rtt`` holds ``(srtt, rttvar, rto)``; the
retransmission timer is a timed token on ``timer`` (marked exactly when ``una < nxt``);
``start`` holds the application's start, a token ready at the start time.

Each protocol event is a transition: ``open``, ``send``, ``new_ack``, ``dup_ack``,
``fast_retransmit``, ``recovery_dup_ack``, ``partial_ack`` and ``later_partial_ack``
(NewReno, SACK), ``recovery_exit``, ``ecn_reduce`` (ECN), ``sack_retransmit`` (SACK), ``stale_ack``,
``timeout``. The variant only chooses which transitions exist and their guards.

With ``handshake`` the connection opens as ns-3's does: ``connect`` sends a SYN at the start
time (``connecting`` counts the SYNs sent, ``syn_timer`` is their timer), ``syn_timeout``
sends it again after ``syn_timeout_s * 2 ** (SYNs sent - 1)`` while fewer than
``syn_retries`` have left (ns-3's ``SynRetries`` counts the first); the expiry after the
last one is ``give_up`` (ns-3 closes the socket then): the token on ``failed`` says the
connection never opened and the flow sends nothing more. ``open`` takes the
SYN-ACK: it sends the handshake's ACK, takes the first RTT sample (Karn's rule as for data;
after a retransmitted SYN without timestamps none, and the RTO is then 3 s, RFC 6298 (5.7))
and creates ``tcb``, so data flows one round trip after the start. Without it, ``open``
fires at the start time. A SYN-ACK that comes after ``open`` (a retransmitted SYN's) is a
``stale_ack``.

Limited transmit (RFC 3042, ``limited_transmit``): on each duplicate ACK below the
threshold ``DUPTHRESH`` one new segment may go beyond cwnd (``send`` allows ``cwnd +
dupacks`` outstanding while ``dupacks < DUPTHRESH`` and not in fast recovery; ns-3 does the
same through its "Reno SACK" scoreboard), and the ``ssthresh`` of the fast retransmit leaves
those segments out of FlightSize (RFC 5681 3.2 step 2). With SACK a duplicate ACK is
one that SACKs new data, a cumulative one too (RFC 6675 5: the ACK a receiver holding a
delayed ACK sends for the first segment above a hole is the first duplicate; the window
does not grow on it, :func:`growth_withheld`), and a
duplicate ACK that leaves the first unacknowledged segment lost by the scoreboard starts
the fast retransmit before ``DUPTHRESH`` (RFC 6675 5 step 2; ns-3's ``DupAck`` does both).
A partial ACK restarts the count of
duplicate ACKs, but inside fast recovery only the inflated window lets segments out (ns-2's
NewReno agent counts those duplicate ACKs in ``dupwnd_``; ns-3 in its recovery).

Window arithmetic, in segments, as ns-3's ``TcpNewReno`` does it in bytes: an ACK that
acknowledges new data adds 1 segment in slow start (``cwnd < ssthresh``) whatever it
acknowledges (no appropriate byte counting), and ``1/cwnd`` in congestion avoidance;
when one ACK crosses ``ssthresh`` and acknowledges more than one segment, the remainder
makes one congestion-avoidance step. On loss ``ssthresh = max(2, FlightSize / 2)`` with
``FlightSize = high - una`` (RFC 5681 eq. 4), rounded down to whole segments with
``whole_segments`` (the default: ns-2's ``TcpAgent::slowdown`` sets ``ssthresh_ = (int)
halfwin`` of its integer ``window()``, 4.4BSD ``min(snd_wnd, snd_cwnd) / 2 / t_maxseg``
segments, Linux ``tcp_reno_ssthresh`` counts packets; RFC 5681 asks for "no more than" the
half). The half segment matters where a standing queue decides: on study S5's token
bucket (scenarios/reference/s5a_tbf_nosack.yaml) the exact half keeps the flow in a cycle
of five losses and a timeout every three seconds, the whole segment in one of two or three
losses without timeouts, as ns-3 (docs/validation.md). The RTO follows RFC 6298 (``alpha = 1/8``,
``beta = 1/4``, ``K = 4``, granularity ``G``, bounded by ``min_rto_s``/``max_rto_s``,
doubled at each expiry) with Karn's rule (:func:`karn_sample`): an ACK gives an RTT
sample only if it acknowledges new data and, without timestamps, the oldest segment it
covers was never retransmitted and was sent after the last timeout (the ACK passes
``recover``). Every
ACK of new data restarts the timer except partial ACKs after the first one of a recovery
(RFC 6582 3.2 step 5, the "Impatient" variant, as ns-3 does it), so a window with many
holes ends in a timeout instead of one repair per RTT forever.

A SACK sender's timeout clears the scoreboard by default: the sender goes back N from
``una`` and resends every segment sent before it, those the receiver SACKed included, as
RFC 2018 8 asks (the receiver may renege) and ns-2's ``Sack1TcpAgent::timeout`` does; the
SACK blocks of the ACKs that follow are recorded but choose nothing until the ACKs pass
``recover`` (ns-2 updates no scoreboard while ``timeout_`` holds). With ``sack_keep`` the
scoreboard stays and the go-back-N skips what it holds (``send`` moves ``nxt`` past SACKed
runs with ``advance``; the window counts :func:`resent_flight`), ns-3's and Linux's rule:
its timeout marks every unSACKed segment lost and NextSeg resends only those.

>>> net = sender_net(SenderConfig(flow=0, dst=1, variant="newreno"))
>>> len(net.places), len(net.transitions)
(6, 11)
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from tcpn.errors import InputError
from tcpn.models.components.extend import track
from tcpn.models.components.packets import (
    ACK_SEQ,
    ECT,
    FUNCTIONS,
    PACKET,
    SYN_ACK_SEQ,
    SYN_SEQ,
)
from tcpn.petrinets import (
    BOOL,
    INT,
    REAL,
    UNIT,
    IntSet,
    ListSet,
    PetriNet,
    Place,
    ProductSet,
    RecordSet,
    Token,
)
from tcpn.petrinets import Transition as T
from tcpn.petrinets.net import ArcKind
from tcpn.petrinets.net_functions import net_function

__all__ = ["ACK_TRANSITIONS", "FINE_RETRANSMITS", "INITIAL_TCB", "LOSS_BASED", "NEW_DATA_ACKS",
           "PARTIAL_ACKS", "RETRANSMITTED", "RTT", "RUNS", "TCB", "SenderConfig",
           "data_segment", "duplicate_new_ack", "grow", "growth_withheld", "half_flight",
           "karn_sample", "recovery_pipe", "resent_flight", "retransmissions", "rto_after",
           "sack_hole", "sack_pipe", "sacked_count", "sender_net", "unless_withheld"]

LOSS_BASED = ("tahoe", "reno", "newreno", "sack", "ecn_reno", "ecn_newreno")
#: The partial-ACK transitions of NewReno and SACK recovery: the first of a recovery
#: restarts the retransmission timer, the later ones leave it running (RFC 6582).
PARTIAL_ACKS = ("partial_ack", "later_partial_ack")
#: The transitions that take an ACK of new data (they sample the RTT); a sender has those of
#: its variant.
NEW_DATA_ACKS = ("new_ack", "ecn_reduce", *PARTIAL_ACKS, "recovery_exit")
#: Every transition that takes an ACK off ``acks``.
ACK_TRANSITIONS = (*NEW_DATA_ACKS, "dup_ack", "fast_retransmit", "recovery_dup_ack", "stale_ack")
#: The retransmissions a variant adds after an ACK found a segment due (ns-2's Vegas
#: fine-grained timer, :mod:`~tcpn.models.components.congestion.ns2_vegas`): the head again
#: before the third duplicate ACK, inside recovery, or after an ACK of new data.
FINE_RETRANSMITS = ("fine_retransmit", "fine_recovery_retransmit", "worried_retransmit")
#: The segment each retransmitting transition sends again (an expression over the binding).
#: ``partial_ack`` retransmits only in RFC 6582 NewReno; SACK recovery leaves holes to
#: ``sack_retransmit`` (:func:`retransmissions` reads which ones a built sender has).
RETRANSMITTED = {"fast_retransmit": "t.una", "partial_ack": "a.ack",
                 "later_partial_ack": "a.ack", "sack_retransmit": "sack_hole(t, DUPTHRESH)",
                 **dict.fromkeys(FINE_RETRANSMITS, "t.una")}

#: Runs of segments, sorted and disjoint ``(start, end)`` pairs (a SACK scoreboard).
RUNS = ListSet(ProductSet(INT, INT), name="Runs")
TCB = RecordSet("Tcb", cwnd=REAL, ssthresh=REAL, una=IntSet(0), nxt=IntSet(0), high=IntSet(0),
                dupacks=IntSet(0), recover=IntSet(0), inrec=BOOL, cwr_high=IntSet(0),
                cwr_pending=BOOL, sacked=RUNS,
                highrxt=IntSet(0), partial=BOOL, limited=IntSet(0))
Tcb: Any = TCB.record_type
#: The ``tcb`` a connection opens with (an inscription over the sender's declarations).
INITIAL_TCB = ("Tcb(INIT_CWND, INIT_SSTHRESH, 0, 0, 0, 0, 0, False, 0, False, (), 0, False, 0)")
RTT = RecordSet("Rtt", srtt=REAL, rttvar=REAL, rto=REAL)
Rtt: Any = RTT.record_type


@dataclass(frozen=True)
class SenderConfig:
    """One sender: its flow number, destination node index, variant and TCP parameters.

    ``total_segments`` is the application: ``None`` for a bulk (FTP-like) source, else a
    fixed-size transfer. ``window_segments`` is the receive/send buffer limit.
    ``app_rate_bps`` paces the application (one segment every ``segment_bytes * 8 /
    app_rate_bps`` from ``start_s``); at ``stop_s`` the application closes: TCP still
    delivers what its send buffer (``send_buffer_segments``, default ``window_segments``)
    holds, as after ``close()`` (and as the ns-3 lens's source does). ``limited_transmit``
    is RFC 3042; ``handshake`` opens with SYN (``syn_bytes`` long), SYN-ACK and ACK, the SYN
    sent again after ``syn_timeout_s`` (doubled at each retry) until ``syn_retries`` SYNs
    have left, as ns-3 does. ``ecn_reaction`` is what an ECN echo does to the window:
    ``halve`` (RFC 3168) or ``slow_start`` (cwnd 1, ssthresh half the flight: study S2).
    ``whole_segments`` rounds the ssthresh of a loss down to whole segments (ns-2, BSD).
    ``exit_growth``: the ACK that ends fast recovery, after deflating cwnd to ssthresh,
    grows it as any ACK of new data (ns-2's ``opencwnd()`` on every new ACK, ns-3's
    ``IncreaseWindow``); false leaves cwnd at ssthresh (RFC 5681 3.2 step 6's words).
    ``ecn_cwr``: how a window reacts to an ECN echo. ``"ns2"`` (ns-2's ``TcpAgent::ecn``,
    which the studies ran): a new ACK with ECE reacts once ``una`` has reached the
    ``cwr_high`` of the last reaction, ssthresh is half the flight before that ACK, and the
    window grows on every new ACK after it. ``"ns3"`` (ns-3.44's ``TcpSocketBase::EnterCwr``
    and ``CA_CWR``, as Linux): ssthresh is half the flight after the ACK's segments have
    left it, the window does not grow until an ACK passes ``cwr_high``, and such an ACK may
    react again (ns-3 brings the window down by PRR over the round; here it is set at once).
    ``sack_keep`` (SACK senders): a timeout keeps the scoreboard (ns-3's and Linux's rule)
    and the go-back-N after it skips what the scoreboard holds; false (the default) clears
    it there (RFC 2018 8, ns-2's ``Sack1TcpAgent``): see :func:`sender_net`.
    ``pipe_counts_sacked_retransmits`` (SACK senders): fast recovery's pipe keeps counting
    a segment retransmitted in the recovery once the receiver SACKs it, until the
    cumulative ACK passes it (ns-3.44's ``BytesInFlight``); false (the default) counts
    it out when SACKed (RFC 6675 ``SetPipe``): see :func:`recovery_pipe`.
    """

    flow: int
    dst: int
    variant: str = "newreno"
    segment_bytes: int = 536
    header_bytes: int = 40
    initial_cwnd: float = 10.0
    initial_ssthresh: float = 1e9
    window_segments: int = 1 << 20
    min_rto_s: float = 1.0
    initial_rto_s: float = 1.0
    max_rto_s: float = 60.0
    granularity_s: float = 0.001
    dupack_threshold: int = 3
    timestamps: bool = True
    ecn: bool = False
    start_s: float = 0.0
    total_segments: int | None = None
    stop_s: float | None = None
    app_rate_bps: float | None = None
    send_buffer_segments: int | None = None
    limited_transmit: bool = False
    handshake: bool = False
    syn_bytes: int = 40
    syn_timeout_s: float = 3.0
    syn_retries: int = 6
    ecn_reaction: str = "halve"
    ecn_cwr: str = "ns2"
    whole_segments: bool = True
    exit_growth: bool = True
    sack_keep: bool = False
    pipe_counts_sacked_retransmits: bool = False

    def __post_init__(self) -> None:
        where = f"sender of flow {self.flow}"
        if self.variant not in LOSS_BASED:
            raise InputError(f"{where}: variant {self.variant!r} is not one of "
                             f"{', '.join(LOSS_BASED)}")
        if self.initial_cwnd < 1 or self.initial_ssthresh < 2:
            raise InputError(f"{where}: need initial_cwnd >= 1 and initial_ssthresh >= 2")
        if self.total_segments is not None and self.total_segments < 1:
            raise InputError(f"{where}: total_segments must be >= 1 or None (bulk)")
        if self.start_s < 0 or self.min_rto_s <= 0 or self.initial_rto_s < self.min_rto_s:
            raise InputError(f"{where}: need start_s >= 0 and initial_rto_s >= min_rto_s > 0")
        if self.app_rate_bps is not None and not self.app_rate_bps > 0:
            raise InputError(f"{where}: app_rate_bps must be > 0 or None, got "
                             f"{self.app_rate_bps!r}")
        if self.handshake and not (self.syn_timeout_s > 0 and self.syn_bytes >= 40
                                   and self.syn_retries >= 1):
            raise InputError(f"{where}: need syn_timeout_s > 0, syn_bytes >= 40 and "
                             f"syn_retries >= 1, got {self.syn_timeout_s!r}, "
                             f"{self.syn_bytes!r} and {self.syn_retries!r}")
        if self.ecn_reaction not in ("halve", "slow_start"):
            raise InputError(f"{where}: ecn_reaction must be halve or slow_start, got "
                             f"{self.ecn_reaction!r}")
        if self.ecn_cwr not in ("ns2", "ns3"):
            raise InputError(f"{where}: ecn_cwr must be ns2 or ns3, got {self.ecn_cwr!r}")
        if self.stop_s is not None and self.stop_s < self.start_s:
            raise InputError(f"{where}: stop_s ({self.stop_s:g}) is before start_s "
                             f"({self.start_s:g})")

    @property
    def has_application(self) -> bool:
        """Whether the application is a net of its own (paced or stopping), rather than the
        constant ``TOTAL``."""
        return self.app_rate_bps is not None or self.stop_s is not None

    @property
    def uses_ecn(self) -> bool:
        """Whether the sender is ECN-capable (an ``ecn_*`` variant or the ``ecn`` flag)."""
        return self.ecn or self.variant.startswith("ecn_")


@net_function
def grow(cwnd: float, ssthresh: float, acked: int) -> float:
    """The window after an ACK of ``acked`` new segments (ns-3 ``TcpNewReno::IncreaseWindow``).

    >>> grow(2.0, 8.0, 1), grow(8.0, 8.0, 1), grow(7.0, 8.0, 2)
    (3.0, 8.125, 8.125)
    """
    if cwnd < ssthresh:
        cwnd += 1.0
        acked -= 1
    if cwnd >= ssthresh and acked > 0:
        cwnd += 1.0 / cwnd
    return cwnd


def half_flight(flight: str, whole_segments: bool) -> str:
    """The inscription of the ssthresh of a loss: half the ``flight`` (an integer
    expression, in segments), at least 2, rounded down to whole segments or not.

    >>> half_flight("t.high - t.una", True)
    'max(2.0, float((t.high - t.una) // 2))'
    """
    if whole_segments:
        return f"max(2.0, float(({flight}) // 2))"
    return f"max(2.0, ({flight}) / 2.0)"


def rto_after(r: Any, sample: float, min_rto: float, max_rto: float, g: float) -> Any:
    """The ``Rtt`` record after an RTT ``sample`` (RFC 6298 (2.2)-(2.4); no sample if < 0).

    >>> rto_after(Rtt(-1.0, 0.0, 1.0), 0.1, 0.2, 60.0, 0.001)
    Rtt(srtt=0.1, rttvar=0.05, rto=0.30000000000000004)
    """
    if sample < 0:
        return r
    if r.srtt < 0:
        srtt, rttvar = sample, sample / 2.0
    else:
        rttvar = 0.75 * r.rttvar + 0.25 * abs(r.srtt - sample)
        srtt = 0.875 * r.srtt + 0.125 * sample
    return Rtt(srtt, rttvar, min(max_rto, max(min_rto, srtt + max(g, 4.0 * rttvar))))


def _not_lost_from(runs: tuple[tuple[int, int], ...], dupthresh: int) -> float:
    """The segment from which no unSACKed segment is lost (RFC 6675 ``IsLost``).

    ``IsLost(s)``: at least ``dupthresh`` SACKed segments above ``s``. Every hole below
    the end of the highest run with ``dupthresh`` SACKed segments from it up has that
    many above it; no hole from there does. Found from the top, so the cost is the
    fewer than ``dupthresh`` runs above it, not the window.
    """
    if dupthresh <= 0:
        return math.inf
    above = 0
    for start, end in reversed(runs):
        above += end - start
        if above >= dupthresh:
            return end
    return -math.inf


def sacked_count(runs: tuple[tuple[int, int], ...], low: int, high: int) -> int:
    """The SACKed segments in ``[low, high)`` (runs sorted and disjoint), found from the
    first run that reaches ``low`` by bisection (its CPN ML form recurses over the runs:
    :mod:`~tcpn.models.components.ml_forms`).

    >>> sacked_count(((3, 5), (9, 12)), 4, 10)
    2
    """
    count = 0
    for i in range(max(0, bisect_right(runs, (low, math.inf)) - 1), len(runs)):
        start, end = runs[i]
        if start >= high:
            break
        count += max(0, min(end, high) - max(start, low))
    return count


@net_function
def resent_flight(t: Any) -> int:
    """After a timeout that kept the scoreboard (``sack_keep``), until the ACKs pass
    ``recover``: the segments sent again since the timeout and not SACKed, ``[una, nxt)``
    less what the scoreboard holds there. ns-3's pipe then: its timeout marks every
    unSACKed segment lost, so only those it has sent again count (``TcpTxBuffer::
    BytesInFlight``); without a kept scoreboard it is ``nxt - una``, the window the net
    model's go-back-N fills.

    >>> t = Tcb(4.0, 8.0, 10, 16, 30, 0, 30, False, 0, False, ((12, 14), (20, 25)), 10,
    ...         False, 0)
    >>> resent_flight(t)
    4
    """
    return t.nxt - t.una - sacked_count(t.sacked, t.una, t.nxt)


@net_function
def sack_pipe(t: Any, dupthresh: int) -> int:
    """RFC 6675 ``SetPipe``: segments presumed in the network.

    Every segment of ``[una, high)`` the scoreboard does not hold counts once unless
    ``IsLost``, and once more if it was retransmitted (below ``highrxt``): the unSACKed
    segments from :func:`_not_lost_from` to ``high`` plus those from ``una`` to
    ``highrxt``, counted by range, not segment by segment.
    """
    runs, una, high = t.sacked, t.una, t.high
    pipe = 0
    not_lost = max(una, _not_lost_from(runs, dupthresh))  # una, a run's end, or inf
    if not_lost < high:
        low = int(not_lost)
        pipe += high - low - sacked_count(runs, low, high)
    top = min(high, t.highrxt)
    if una < top:
        pipe += top - una - sacked_count(runs, una, top)
    return pipe


@net_function
def sack_hole(t: Any, dupthresh: int) -> int:
    """RFC 6675 ``NextSeg`` rule 1: the first lost, not yet retransmitted segment, or -1.

    The first unSACKed segment from ``max(una, highrxt)`` (found by bisection), if it is
    lost: below :func:`_not_lost_from`.
    """
    runs = t.sacked
    seq = max(t.una, t.highrxt)
    i = bisect_right(runs, (seq, math.inf)) - 1
    while 0 <= i < len(runs) and runs[i][0] <= seq < runs[i][1]:  # SACKed: after its run
        seq = runs[i][1]
        i += 1
    return seq if seq < min(t.high, _not_lost_from(runs, dupthresh)) else -1


@net_function
def karn_sample(t: Any, a: Any, timestamps: bool) -> bool:
    """Whether the ACK of new data ``a``, reaching the sender ``t`` (its ``Tcb`` before the
    ACK), gives an RTT sample: Karn's algorithm (RFC 6298 3).

    With timestamps every ACK of new data is a measurement (RFC 7323). Without, the sender
    cannot tell which copy of a segment an ACK answers, so it takes no sample when the
    oldest segment the ACK covers, ``una``, was retransmitted (below ``highrxt``), even if
    the copy that drew the ACK was the original (``a.retx``, the echoed flag, is what only
    the model knows); nor, after a timeout, from an ACK up to ``recover``, the segments sent
    before it. ns-3's ``TcpSocketBase::EstimateRtt`` times the head of its send history
    and takes no sample when that entry was retransmitted (``RttHistory::retx``, set by
    ``UpdateRttHistory``); ns-2's ``TcpAgent::reset_rtx_timer``, at a fast retransmit as at
    a timeout, stops timing (``rtt_active_ = 0``) until a new segment leaves; Linux skips
    the sample when retransmitted data is acknowledged (``FLAG_RETRANS_DATA_ACKED``).

    >>> from types import SimpleNamespace as S
    >>> in_recovery = S(una=383, highrxt=384, inrec=True, recover=430)
    >>> karn_sample(in_recovery, S(ack=384, retx=False), False)
    False
    >>> karn_sample(S(una=384, highrxt=384, inrec=False, recover=383), S(ack=385, retx=False),
    ...             False)
    True
    """
    return timestamps or (not a.retx and t.una >= t.highrxt and
                          (t.inrec or a.ack > t.recover))


@net_function
def _new_ack(r: Any, t: Any, a: Any, now: float, TIMESTAMPS: bool, MIN_RTO: float,
             MAX_RTO: float, G: float) -> dict[str, Any]:
    """Code action of an ACK of new data: Karn's rule (:func:`karn_sample`) and the RFC
    6298 update.

    The sample is the echoed segment's round trip. The receiver echoes its last in-order
    segment's send time (RFC 7323), so a retransmitted segment it already holds (its ACK
    was lost) brings back the first copy's time, a "round trip" that spans the timeout:
    hence no sample, after a timeout, until the ACK passes ``recover`` (the highest
    segment sent before it; ns-2 times no segment sent before a timeout, ns-3 clears its
    RTT history).
    """
    valid = karn_sample(t, a, TIMESTAMPS)
    return {"r2": rto_after(r, now - a.echo if valid else -1.0, MIN_RTO, MAX_RTO, G)}


#: The RTO data starts with after the SYN's timer expired and no valid RTT sample came
#: back (RFC 6298 (5.7): "re-initialized to 3 seconds when data transmission begins";
#: Linux's ``TCP_TIMEOUT_FALLBACK``), when the initial RTO is shorter.
SYN_FALLBACK_RTO_S = 3.0


@net_function
def _handshake_rtt(a: Any, n: int, now: float, TIMESTAMPS: bool, INIT_RTO: float,
                   MIN_RTO: float, MAX_RTO: float, G: float,
                   SYN_FALLBACK_RTO: float) -> dict[str, Any]:
    """Code action of ``open``: the first RTT sample, from the SYN-ACK (Karn's rule: none
    when it answers a retransmitted SYN, without timestamps); with none after ``n`` > 1
    SYNs, the RTO of RFC 6298 (5.7)."""
    valid = TIMESTAMPS or not a.retx
    start = INIT_RTO if n <= 1 else max(INIT_RTO, SYN_FALLBACK_RTO)
    return {"r2": rto_after(Rtt(-1.0, 0.0, start), now - a.echo if valid else -1.0,
                            MIN_RTO, MAX_RTO, G)}


def _handshake(net: PetriNet, config: SenderConfig) -> None:
    """``connect``, ``syn_timeout`` and ``open`` (see the module docstring)."""
    net.declare(SYN=SYN_SEQ, SYN_ACK=SYN_ACK_SEQ, ACK=ACK_SEQ, SYN_BYTES=config.syn_bytes,
                SYN_RTO=config.syn_timeout_s, SYN_RETRIES=config.syn_retries,
                ACK_BYTES=config.header_bytes, SYN_FALLBACK_RTO=SYN_FALLBACK_RTO_S)
    net.add_place(Place("connecting", INT))
    net.add_place(Place("syn_timer", UNIT.timed()))

    def syn(retx: str) -> str:
        return (f"Pkt(flow=FLOW, dst=DST, seq=SYN, ack=0, size=SYN_BYTES, ts=now, echo=now, "
                f"ecn=0, ece=False, cwr=False, retx={retx}, sack=())")

    net.add_transition(T("connect"))
    net.add_input("start", "connect", "()")
    net.add_output("connecting", "connect", "1")
    net.add_output("out", "connect", syn("False"))
    net.add_output("syn_timer", "connect", "()", delay="SYN_RTO")
    net.add_transition(T("syn_timeout", guard="n < SYN_RETRIES"))
    net.add_input("syn_timer", "syn_timeout", "()")
    net.add_input("connecting", "syn_timeout", "n")
    net.add_output("connecting", "syn_timeout", "n + 1")
    net.add_output("out", "syn_timeout", syn("True"))
    net.add_output("syn_timer", "syn_timeout", "()", delay="SYN_RTO * 2 ** n")
    net.add_place(Place("failed", UNIT))
    net.add_transition(T("give_up", guard="n >= SYN_RETRIES"))
    net.add_input("syn_timer", "give_up", "()")
    net.add_input("connecting", "give_up", "n")
    net.add_output("failed", "give_up", "()")
    net.add_transition(T("open", guard="a.seq == SYN_ACK", action=_handshake_rtt,
                         outputs=("r2",)))
    net.add_input("connecting", "open", "n")
    net.add_input("acks", "open", "a")
    net.add_reset("syn_timer", "open")
    net.add_output("tcb", "open", INITIAL_TCB)
    net.add_output("rtt", "open", "r2")
    net.add_output("out", "open", "Pkt(flow=FLOW, dst=DST, seq=ACK, ack=0, size=ACK_BYTES, "
                   "ts=now, echo=a.ts, ecn=0, ece=False, cwr=False, retx=False, sack=())")


def _application(net: PetriNet, config: SenderConfig) -> None:
    """The application as places and transitions: ``app`` holds how many segments it has
    written (-1: without end); ``produce`` writes one more at each ``tick`` (paced source);
    ``close`` (at ``stop_s``) keeps what the send buffer holds and ends ``produce``."""
    paced = config.app_rate_bps is not None
    initial = 0 if paced else (config.total_segments or -1)
    net.declare(SNDBUF=config.send_buffer_segments or config.window_segments)
    net.add_place(Place("app", INT, initial=[initial]))
    if paced:
        assert config.app_rate_bps is not None
        net.declare(SEGMENT_S=config.segment_bytes * 8.0 / config.app_rate_bps)
        net.add_place(Place("tick", UNIT.timed(), initial=[Token((), config.start_s)]))
        net.add_transition(T("produce", guard="TOTAL < 0 or w < TOTAL"))
        net.add_input("tick", "produce", "()")
        net.add_input("app", "produce", "w")
        net.add_output("app", "produce", "w + 1")
        net.add_output("tick", "produce", "()", delay="SEGMENT_S")
    if config.stop_s is not None:
        net.add_place(Place("stop", UNIT.timed(), initial=[Token((), config.stop_s)]))
        net.add_transition(T("close"))
        net.add_input("stop", "close", "()")
        net.add_input("app", "close", "w")
        net.add_read("tcb", "close", "t")
        net.add_output("app", "close", "t.una + SNDBUF if w < 0 else min(w, t.una + SNDBUF)")
        if paced:
            net.add_reset("tick", "close")


def data_segment(seq: str, fresh: str) -> str:
    """The inscription of data segment ``seq`` sent by a transition that binds ``t`` (the
    control block), a first transmission where ``fresh`` holds (RFC 3168 6.1.5:
    retransmissions are not ECN-capable).

    >>> data_segment("t.una", "False")[:44]
    'Pkt(flow=FLOW, dst=DST, seq=t.una, ack=0, si'
    """
    return (f"Pkt(flow=FLOW, dst=DST, seq={seq}, ack=0, size=DATA_BYTES, ts=now, "
            f"echo=now, ecn=ECT_BITS if {fresh} else 0, ece=False, "
            f"cwr=t.cwr_pending, retx=not ({fresh}), sack=())")


def retransmissions(net: PetriNet) -> dict[str, str]:
    """The transitions of a built sender that send a segment again, each with the
    expression of that segment (:data:`RETRANSMITTED`): what variants extending the sender
    count (TCP-L) or must not time (Vegas, Karn's rule).

    >>> sorted(retransmissions(sender_net(SenderConfig(flow=0, dst=1, variant="newreno"))))
    ['fast_retransmit', 'later_partial_ack', 'partial_ack']
    >>> sorted(retransmissions(sender_net(SenderConfig(flow=0, dst=1, variant="sack"))))
    ['fast_retransmit', 'sack_retransmit']
    """
    sending = {a.transition for a in net.arcs if a.place == "out" and a.kind is ArcKind.OUTPUT}
    return {t: seq for t, seq in RETRANSMITTED.items() if t in sending}


def duplicate_new_ack(sack: bool) -> str:
    """The condition (over the ACK ``a`` of new data and the control block ``t`` before
    it) under which that ACK, outside a recovery, is also a duplicate ACK: with SACK, RFC
    6675 2 makes an ACK a duplicate when its SACK blocks identify data not SACKed before,
    and 5 counts it "regardless of its status as a cumulative acknowledgment" (the ACK
    that the first segment above a hole draws from a receiver holding a delayed ACK
    acknowledges the segment before the hole and SACKs the one above it). Without SACK a
    cumulative ACK is never a duplicate.

    >>> duplicate_new_ack(False)
    'False'
    """
    if not sack:
        return "False"
    return "(merge_sack(t.sacked, a.sack, a.ack) != merge_sack(t.sacked, (), a.ack))"


def growth_withheld(sack: bool) -> str:
    """The condition (over ``a`` and ``t``, as :func:`duplicate_new_ack`) under which an
    ACK of new data outside fast recovery leaves the window as it is.

    An ACK that is also a duplicate (:func:`duplicate_new_ack`) is processed as one, RFC
    6675 5 steps (1)-(3) (fast retransmit, or limited transmit), which end "(3.4) Terminate
    processing of this ACK": the window does not grow on it. ns-3.44 does the same
    (``TcpSocketBase::ProcessAck``: ``isDupack = scoreboardUpdated`` whatever the ACK
    number, ``DupAck`` moves ``CA_OPEN`` to ``CA_DISORDER`` first, the ``CA_DISORDER``
    branch goes back to ``CA_OPEN`` only for an ACK that is not a duplicate, and
    ``IncreaseWindow`` runs only in ``CA_OPEN``). After a timeout, until the ACKs pass its
    recovery point, every ACK of new data grows the window (RFC 5681 3.1; ns-3's
    ``DupAck`` returns at once in ``CA_LOSS``, whose branch calls ``IncreaseWindow``).
    Growing the window on such an ACK too sent three segments on it (the segment it
    acknowledged, the limited-transmit one and the growth's) where ns-3 sends two: on one
    CUBIC flow at 100 Mbit/s (tests/test_cubic.py) the third overflowed the buffer, a drop
    more than ns-3's, and the window after that recovery lagged ns-3's by 2 segments; the
    growth steps taken there had also put the net lens's second loss 3.7 ms after ns-3's.

    >>> growth_withheld(False)
    'False'
    """
    if not sack:
        return "False"
    return f"({duplicate_new_ack(sack)} and t.una >= t.recover)"


def unless_withheld(sack: bool, grown: str, kept: str) -> str:
    """The inscription ``grown`` of an ACK of new data outside fast recovery, or ``kept``
    on an ACK that :func:`growth_withheld` keeps from growing the window: every sender
    whose window (or the congestion state that grows it) is written on ``new_ack`` keeps
    it through this, as ns-3's senders skip ``IncreaseWindow`` in ``CA_DISORDER``.
    Without SACK it is ``grown``.

    >>> unless_withheld(False, "grow(t)", "t.cwnd")
    'grow(t)'
    """
    if not sack:
        return grown
    return f"({kept} if {growth_withheld(sack)} else {grown})"


def _opening_dupacks(sack: bool) -> str:
    """The duplicate-ACK count after a cumulative ACK outside a recovery (an expression
    over the ACK ``a`` and the control block ``t`` before it).

    RFC 6675 5 resets it, then counts the ACK if it is also a duplicate
    (:func:`duplicate_new_ack`; ns-3: ``m_dupAckCount`` kept, "At the third one we will
    retransmit"). Counting it from 0 left the fast retransmit waiting for a fourth ACK,
    which a small window often has no segment left to draw, so the hole waited a round trip
    longer or for the timer.

    >>> _opening_dupacks(False)
    '0'
    """
    if not sack:
        return "0"
    return f"(1 if {duplicate_new_ack(sack)} else 0)"


def _recovery_entry(sack: bool) -> str:
    """The guard (over the duplicate ACK ``a`` and the control block ``t`` before it) under
    which a duplicate ACK outside a recovery starts one, the recovery point aside.

    ``DUPTHRESH`` duplicate ACKs (RFC 5681 3.2, RFC 6675 5 step 1) or, with SACK, the
    first unacknowledged segment lost by the scoreboard the ACK leaves (RFC 6675 5 step 2,
    ``IsLost(HighACK + 1)``: ``DUPTHRESH`` segments SACKed above it, as when one ACK
    SACKs several segments; ns-3's ``DupAck`` does the same with ``IsLost``).

    >>> _recovery_entry(False)
    't.dupacks + 1 >= DUPTHRESH'
    """
    counted = "t.dupacks + 1 >= DUPTHRESH"
    if not sack:
        return counted
    lost = ("sack_hole(t._replace(sacked=merge_sack(t.sacked, a.sack, t.una)), DUPTHRESH) "
            "== t.una")
    return f"({counted} or {lost})"


def recovery_pipe(sacked_retransmits: bool) -> str:
    """The inscription of fast recovery's pipe, the segments presumed in the network (over
    the control block ``t`` and, with ``sacked_retransmits``, the runs ``k`` of the place
    ``skipped``).

    RFC 6675 ``SetPipe`` (:func:`sack_pipe`) counts nothing for a SACKed segment. ns-3.44
    keeps counting a retransmitted one after the receiver SACKs it (``sacked_retransmits``,
    the scenario's ``tcp.pipe_counts_sacked_retransmits``): its pipe,
    ``TcpTxBuffer::BytesInFlight``, is ``m_sentSize - m_sackedOut - m_lostOut +
    m_retrans``, and ``TcpTxBuffer::Update`` (src/internet/model/tcp-tx-buffer.cc), when it
    marks a segment SACKed, clears its lost flag but not its retransmitted one, which only
    ``RemoveFromCounts`` (the cumulative ACK) and ``SetSentListLost`` (a timeout) clear. Each
    retransmission the receiver SACKs stays a segment of the pipe until the ACKs pass it,
    and holds back a segment that RFC 6675's step (C) would send (ns-3's own
    ``BytesInFlightRFC``, unused, skips it; ns-3-dev fixed it after ns-3.48, commit
    380573ef1, issue 1190).

    Every unSACKed segment of ``[una, highrxt)`` was sent again in this recovery (the fast
    retransmit sends ``una``, ``sack_retransmit`` the first lost segment at or above
    ``highrxt``, a partial ACK moves ``highrxt`` up to ``una``), so the SACKed ones there
    are those retransmitted and then SACKed, and those NextSeg passed over because they were
    SACKed already: ``skipped`` holds the latter (``sack_retransmit`` adds the run from
    ``max(una, highrxt)`` to its hole, the fast retransmit empties it). ns-3 counts the
    former.

    >>> recovery_pipe(False)
    'sack_pipe(t, DUPTHRESH)'
    """
    if not sacked_retransmits:
        return "sack_pipe(t, DUPTHRESH)"
    return ("(sack_pipe(t, DUPTHRESH) + sacked_count(t.sacked, t.una, t.highrxt) "
            "- sacked_count(k, t.una, t.highrxt))")


def sender_net(config: SenderConfig, name: str = "sender") -> PetriNet:
    """The sender module. Ports: ``out`` (data segments out) and ``acks`` (ACKs in)."""
    variant = config.variant.removeprefix("ecn_")
    ecn, sack = config.uses_ecn, variant == "sack"
    sacked_retransmits = sack and config.pipe_counts_sacked_retransmits
    net = PetriNet(name)
    net.declare(
        FLOW=config.flow, DST=config.dst, DATA_BYTES=config.segment_bytes + config.header_bytes,
        WINDOW=config.window_segments, TOTAL=config.total_segments or -1,
        DUPTHRESH=config.dupack_threshold, TIMESTAMPS=config.timestamps,
        MIN_RTO=config.min_rto_s, MAX_RTO=config.max_rto_s, G=config.granularity_s,
        ECT_BITS=ECT if ecn else 0, INIT_CWND=float(config.initial_cwnd),
        INIT_SSTHRESH=float(config.initial_ssthresh), INIT_RTO=config.initial_rto_s,
        grow=grow, sack_pipe=sack_pipe, sack_hole=sack_hole, Tcb=Tcb, Rtt=Rtt,
        **({"resent_flight": resent_flight} if sack and config.sack_keep else {}),
        **({"sacked_count": sacked_count} if sacked_retransmits else {}),
        **FUNCTIONS)
    net.add_place(Place("start", UNIT.timed(), initial=[Token((), config.start_s)]))
    net.add_place(Place("tcb", TCB))
    net.add_place(Place("rtt", RTT))
    net.add_place(Place("timer", UNIT.timed()))
    net.add_place(Place("out", PACKET, port="out"))
    net.add_place(Place("acks", PACKET, port="in"))
    if config.has_application:
        _application(net, config)

    if config.handshake:
        _handshake(net, config)
    else:
        net.add_transition(T("open"))
        net.add_input("start", "open", "()")
        net.add_output("tcb", "open", INITIAL_TCB)
        net.add_output("rtt", "open", "Rtt(-1.0, 0.0, INIT_RTO)")

    has_data = "(w < 0 or t.nxt < w)" if config.has_application else "(TOTAL < 0 or t.nxt < TOTAL)"
    # sack_keep: after a timeout (until the ACKs pass recover) what the kept scoreboard
    # holds is neither in flight nor sent again (ns-3's NextSeg over segments marked lost)
    # (the receive window still bounds all that is outstanding)
    keep = sack and config.sack_keep
    window_open = "t.nxt - t.una + 1 <= min(t.cwnd, WINDOW)"
    if config.limited_transmit:
        window_open = ("t.nxt - t.una + 1 <= min(t.cwnd + (t.dupacks if not t.inrec and "
                       "t.dupacks < DUPTHRESH and t.nxt >= t.high else 0), WINDOW)")
    if keep:
        window_open = (f"((t.una < t.recover and resent_flight(t) + 1 <= t.cwnd and "
                       f"t.nxt - t.una + 1 <= WINDOW) or (t.una >= t.recover and "
                       f"{window_open}))")
    pipe_open = f"{recovery_pipe(sacked_retransmits)} + 1 <= min(t.cwnd, WINDOW)"
    if sacked_retransmits:  # what NextSeg passed over, SACKed (recovery_pipe)
        net.add_place(Place("skipped", RUNS, initial=[()]))
    send_guard = f"{has_data} and {window_open}"
    if sack:
        send_guard = (f"{has_data} and ((not t.inrec and {window_open}) or (t.inrec and "
                      f"t.nxt - t.una + 1 <= WINDOW and {pipe_open} and "
                      "sack_hole(t, DUPTHRESH) < 0))")
    net.add_transition(T("send", guard=send_guard))
    net.add_input("tcb", "send", "t")
    net.add_read("rtt", "send", "r")
    if sacked_retransmits:
        net.add_read("skipped", "send", "k")
    if config.has_application:
        net.add_read("app", "send", "w")
    beyond_cwnd = ", limited=t.limited + (1 if not t.inrec and t.nxt - t.una + 1 > t.cwnd " \
        "else 0)" if config.limited_transmit else ""
    after = "advance(t.nxt + 1, t.sacked)" if keep else "t.nxt + 1"
    net.add_output("tcb", "send", f"t._replace(nxt={after}, high=max(t.high, t.nxt + 1), "
                   f"cwr_pending=False{beyond_cwnd})")
    net.add_output("out", "send", data_segment("t.nxt", "t.nxt >= t.high"))
    net.add_output("timer", "send", "()", when="t.una == t.nxt", delay="r.rto")

    def scoreboard(ack: str) -> str:
        return f"merge_sack(t.sacked, a.sack, {ack})" if sack else "()"

    def ack_transition(tname: str, guard: str, tcb: str, *, new_data: bool,
                       retransmit: str | None = None, restart: bool = True) -> None:
        """One ACK-driven transition; ``new_data`` ones sample the RTT and, unless
        ``restart`` is false, restart the timer."""
        action = _new_ack if new_data else None
        net.add_transition(T(tname, guard=guard, action=action,
                             outputs=("r2",) if new_data else ()))
        net.add_input("acks", tname, "a")
        net.add_input("tcb", tname, "t")
        net.add_output("tcb", tname, tcb)
        if new_data:
            net.add_input("rtt", tname, "r")
            net.add_output("rtt", tname, "r2")
        if new_data and restart:
            net.add_reset("timer", tname)
            net.add_output("timer", tname, "()", when="a.ack < max(t.nxt, a.ack)",
                           delay="r2.rto")
        if retransmit is not None:
            net.add_output("out", tname, data_segment(retransmit, "False"))

    new = "a.ack > t.una"
    dup = "a.ack == t.una and t.high > t.una"
    stale = "a.ack < t.una or (a.ack == t.una and t.high == t.una)"
    if config.handshake:  # a late SYN-ACK (ack 0) is no duplicate ACK
        dup, stale = f"a.seq == ACK and {dup}", f"a.seq == SYN_ACK or {stale}"
    if sack:
        # RFC 6675 2: with SACK a duplicate ACK is one whose SACK blocks identify data not
        # SACKed before; outside a recovery, an ACK of snd.una without them (the answer to a
        # segment the receiver already holds) counts for nothing (ns-3: isDupack =
        # scoreboardUpdated in TcpSocketBase::ProcessAck)
        unchanged = "merge_sack(t.sacked, a.sack, t.una) == t.sacked"
        stale = f"{stale} or ({dup} and not t.inrec and {unchanged})"
        dup = f"{dup} and (t.inrec or not ({unchanged}))"
    linux_cwr = ecn and config.ecn_cwr == "ns3"
    passed_cwr = "a.ack > t.cwr_high" if linux_cwr else "t.una >= t.cwr_high"
    echo = f"ECN and a.ece and {passed_cwr}" if ecn else "False"
    net.declare(ECN=ecn)
    advance_una = (f"una=a.ack, nxt=max(t.nxt, a.ack), dupacks=0, "
                   f"sacked={scoreboard('a.ack')}, highrxt=max(t.highrxt, a.ack)"
                   f"{', limited=0' if config.limited_transmit else ''}")
    # outside a recovery, a cumulative ACK that SACKs new data also counts as a duplicate
    advance_open = advance_una.replace("dupacks=0", f"dupacks={_opening_dupacks(sack)}")
    grown = "grow(t.cwnd, t.ssthresh, a.ack - t.una)"
    if linux_cwr:  # no growth in the reduced round (ns-3's CA_CWR)
        grown = f"({grown} if {passed_cwr} else t.cwnd)"
    # no growth on an ACK that is also a duplicate (RFC 6675 5 step 3.4)
    grown = unless_withheld(sack, grown, "t.cwnd")
    ack_transition("new_ack", f"{new} and not t.inrec and not ({echo})",
                   f"t._replace(cwnd={grown}, {advance_open})", new_data=True)
    # RFC 5681 3.2 step 2: what limited transmit sent is not part of FlightSize
    flight_fr = "t.high - t.una - t.limited" if config.limited_transmit else "t.high - t.una"
    halve, halve_fr = (half_flight(flight, config.whole_segments)
                       for flight in ("t.high - t.una", flight_fr))
    if ecn:
        # RFC 3168 halves; study S2's sender restarts slow start (neither retransmits)
        halve_ecn = (half_flight("t.high - a.ack", config.whole_segments) if linux_cwr
                     else halve)
        reduced = "1.0" if config.ecn_reaction == "slow_start" else halve_ecn
        ack_transition("ecn_reduce", f"{new} and not t.inrec and {echo}",
                       f"t._replace(ssthresh={halve_ecn}, cwnd={reduced}, cwr_high=t.nxt, "
                       f"cwr_pending=True, {advance_open})", new_data=True)
    ack_transition("stale_ack", stale, "t", new_data=False)
    # RFC 6582 4: no fast retransmit until the ACKs pass ``recover`` (set at the last
    # timeout and fast retransmit). Reno too, for the duplicate ACKs that a timeout's
    # go-back-N draws from segments the receiver holds (ns-2's Reno agent, bug_fix_, and
    # ns-3's socket, CA_LOSS); Reno's recovery_exit lowers ``recover`` to its ACK, so a
    # second fast retransmit in one window stays possible (RFC 5681, ns-3's RenoRecovery)
    may_recover = "t.una >= t.recover"
    if variant == "tahoe":
        # ns-2's TcpAgent::dupack_action (tahoe_action): cwnd 1, and reset_rtx_timer(0, 0)
        # restarts the timer (set_rtx_timer, no backoff) and resumes the sequence one past
        # the last packet acked (go-back-N, "mild is 0 for timeouts and Tahoe dup acks"),
        # so each ACK of the slow start that follows sends the next hole, and the timer
        # runs a whole RTO from the retransmission (RFC 6298 5.1 would leave it running
        # from the last new ACK). bug_fix_ allows no second fast retransmit until an ACK passes
        # ``recover`` (highest_ack_ > recover_, one past NewReno's test: the duplicate ACKs
        # that the resent segments draw end exactly at ``recover``, and would start a
        # fast retransmit, and another go-back-N, at every loss)
        tahoe_fr = f"{dup} and t.dupacks + 1 == DUPTHRESH and t.una > t.recover"
        ack_transition("dup_ack", f"{dup} and not ({tahoe_fr})",
                       "t._replace(dupacks=t.dupacks + 1)", new_data=False)
        ack_transition("fast_retransmit", tahoe_fr,
                       f"t._replace(ssthresh={halve_fr}, cwnd=1.0, dupacks=t.dupacks + 1, "
                       "recover=t.high, nxt=t.una + 1)", new_data=False, retransmit="t.una")
        net.add_read("rtt", "fast_retransmit", "r")
        net.add_reset("timer", "fast_retransmit")
        net.add_output("timer", "fast_retransmit", "()", delay="r.rto")
    else:
        enter = _recovery_entry(sack)
        ack_transition("dup_ack", f"{dup} and not t.inrec and "
                       f"(not ({enter}) or not ({may_recover}))",
                       f"t._replace(dupacks=t.dupacks + 1, sacked={scoreboard('t.una')})",
                       new_data=False)
        entry = f"{halve_fr}" if sack else f"{halve_fr} + DUPTHRESH"
        ack_transition("fast_retransmit", f"{dup} and not t.inrec and "
                       f"{enter} and {may_recover}",
                       f"t._replace(ssthresh={halve_fr}, cwnd={entry}, dupacks=t.dupacks + 1, "
                       f"inrec=True, recover=t.high, highrxt=t.una + 1, partial=False, "
                       f"sacked={scoreboard('t.una')})", new_data=False,
                       retransmit=RETRANSMITTED["fast_retransmit"])
        if sacked_retransmits:
            track(net, "fast_retransmit", "skipped", "k", "()")
        inflate = "t.cwnd" if sack else "t.cwnd + 1.0"
        ack_transition("recovery_dup_ack", f"{dup} and t.inrec",
                       f"t._replace(cwnd={inflate}, dupacks=t.dupacks + 1, "
                       f"sacked={scoreboard('t.una')})", new_data=False)
        full, lowered = (("a.ack >= t.recover", "") if variant in ("newreno", "sack")
                         else ("True", "recover=min(t.recover, a.ack), "))
        # RFC 5681 3.2 step 6 deflates to ssthresh; ns-2 and ns-3 then grow the window on
        # that ACK as on any ACK of new data (exit_growth)
        deflated = ("grow(t.ssthresh, t.ssthresh, a.ack - t.una)" if config.exit_growth
                    else "t.ssthresh")
        ack_transition("recovery_exit", f"{new} and t.inrec and {full}",
                       f"t._replace(cwnd={deflated}, inrec=False, {lowered}{advance_una})",
                       new_data=True)
        if variant in ("newreno", "sack"):
            # RFC 6582 3.2 step 5: retransmit the next hole, deflate by the amount acked;
            # only the first partial ACK of a recovery restarts the timer (ns-3 does the
            # same with SACK recovery)
            deflate = "" if sack else "cwnd=max(1.0, t.cwnd - (a.ack - t.una) + 1.0), "
            partial = f"{new} and t.inrec and a.ack < t.recover"
            for tname, first in zip(PARTIAL_ACKS, (True, False), strict=True):
                # the retransmitted a.ack is below highrxt: its ACK gives no RTT sample
                advance = advance_una if sack else advance_una.replace(
                    "highrxt=max(t.highrxt, a.ack)", "highrxt=a.ack + 1")
                ack_transition(tname, f"{partial} and {'not ' if first else ''}t.partial",
                               f"t._replace({deflate}partial=True, {advance})",
                               new_data=True,
                               retransmit=None if sack else RETRANSMITTED[tname],
                               restart=first)
        if sack:
            net.add_transition(T("sack_retransmit", guard=f"t.inrec and {pipe_open} and "
                                 "sack_hole(t, DUPTHRESH) >= 0"))
            net.add_input("tcb", "sack_retransmit", "t")
            hole = RETRANSMITTED["sack_retransmit"]
            net.add_output("tcb", "sack_retransmit", f"t._replace(highrxt={hole} + 1)")
            net.add_output("out", "sack_retransmit", data_segment(hole, "False"))
            if sacked_retransmits:
                track(net, "sack_retransmit", "skipped", "k",
                      f"merge_sack(k, ((max(t.una, t.highrxt), {hole}),), t.una)")

    net.add_transition(T("timeout"))
    net.add_input("timer", "timeout", "()")
    net.add_input("tcb", "timeout", "t")
    net.add_input("rtt", "timeout", "r")
    # RFC 2018 8 and ns-2 forget the scoreboard here; sack_keep keeps it (ns-3, Linux)
    net.add_output("tcb", "timeout",
                   f"t._replace(ssthresh={halve}, cwnd=1.0, nxt=t.una, dupacks=0, "
                   f"recover=t.high, inrec=False, sacked={'t.sacked' if keep else '()'}, "
                   "highrxt=t.una, partial=False"
                   f"{', limited=0' if config.limited_transmit else ''})")
    net.add_output("rtt", "timeout", "r._replace(rto=min(2.0 * r.rto, MAX_RTO))")
    return net
