"""TCP-L as sub-nets: the NewReno sender that reduces only with probability P_congestion,
and the receiver-side reporter of the last hop's frame counters.

Sender state (place ``tcpl``, a ``TcpL`` record): segments ``sent`` and ``retx``
(retransmitted), and the latest report adopted: ``link_sent``/``link_failed`` frames of the
receiver's last-hop link and ``report_time`` (receiver clock). Every ``send``,
``fast_retransmit`` and NewReno partial ACK (the first and the later ones of a recovery)
counts what it transmits, and so does every ``sack_retransmit`` on SACK recovery. The
base is NewReno (the study; on the RFC 6675 scoreboard when ``tcp.sack`` is on) or Reno
(``base``).

Reports (study S3: "the receiver periodically reports its link's frame error rate in a TCP
option"): the reporter module fires every ``report_interval_s``, reads the last-hop
interface's ``frames`` counters ``(sent, failed)`` and appends ``(time, sent, failed)``
(``time`` on the receiver's clock) to the list on the sender's ``report`` place (the last
:data:`REPORT_HISTORY` reports). An ACK carries the newest report taken before it left
the receiver (``time <= a.ts``): the sender adopts it when that ACK arrives, so a report is
delayed, queued and lost with the ACKs that carry it.

Reaction, on three duplicate ACKs and on a timeout (:func:`tcp_l_reacts`):
``Loss_tcp = (retx + 1) / (sent + 1)`` (counting the retransmission this loss is about to
cause, so that the first loss is classified too: tcpn's reading), ``Loss_link =
failed / sent`` from the latest report (0 before any report),
:func:`p_congestion` ``= clamp((Loss_tcp - Loss_link) / Loss_tcp, 0, 1)`` (1 when
``Loss_tcp = 0``); draw ``X ~ U[0, 1)``: ``P > X`` reacts like NewReno (``ssthresh =
FlightSize / 2``, ``cwnd = ssthresh + 3``; timeout: ``cwnd = 1``, ``ssthresh`` halves,
go-back-N), otherwise the segment is retransmitted and the window kept. Fast retransmit:
NewReno recovery with ``ssthresh = cwnd``, so recovery ends at the same window.

Timeout without a reaction, ``params.timeout``: ``go_back_n`` (the default) is the study's
simulator's, ns-2's TCP-Linux (``LinuxTcpAgent::timeout``: ``enter_loss`` marks every
outstanding segment lost, ``scb_->MarkLoss(highest_ack_ + 1, t_seqno_)``, sets
``recover_ = maxseq_`` and enters ``TCP_CA_Loss``; ``send_much`` then resends the marked
segments before new data while the window allows): the study's pseudo-code (§3.2, Table
1) makes only the window's reduction (``cwin = 1; ssthresh /= 2``) depend on the draw, so
without a reaction every segment from ``una`` goes again (``nxt = una``, as
:func:`~tcpn.models.components.sender.sender_net`'s timeout, and as ns-2's
``TcpAgent::timeout``: ``reset_rtx_timer(0, 1)``, ``t_seqno_ = highest_ack_ + 1``) with
the window it had (``cwnd`` before any recovery inflation, ``ssthresh`` unchanged), and
every one of them counts in ``Loss_tcp`` (§3.2: "the segments retransmitted" over "the
segments sent"). ``retransmit_only`` (tcpn's earlier reading, the net lens only): the
segment at ``una`` is sent again at once and nothing else (no
go-back-N: ``nxt`` resumes where it was); the sender enters NewReno recovery with
``ssthresh = cwnd`` (the window before any inflation), so partial ACKs repair further
holes one per ACK and recovery ends at the same window; and until the data outstanding
at the timeout is acknowledged and one window is out again, new segments are **paced**
one every ``srtt / min(cwnd, window)`` (place ``pace``; the current RTO stands in for
``srtt`` before the first sample). Without pacing, the ACK that ends the repair would
free the whole window at once (the ACK clock is lost during the timeout) and the sender
would burst ``cwnd`` segments into the path, the burst the study's "retransmit only"
does not ask for. So ``Loss_link = 0`` always reduces and ``Loss_link >= Loss_tcp`` never
does.

>>> from tcpn.models.components.sender import SenderConfig
>>> net = tcp_l_sender_net(SenderConfig(flow=0, dst=1))
>>> sorted(p for p in net.places if p not in ("start", "out", "acks"))
['report', 'rtt', 'tcb', 'tcpl', 'timer']
>>> only = tcp_l_sender_net(SenderConfig(flow=0, dst=1), timeout="retransmit_only")
>>> sorted(p for p in only.places if p not in net.places)
['pace', 'repair']
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field

from tcpn.errors import InputError
from tcpn.models.components.extend import add_action, or_guard, track, wrap_output
from tcpn.models.components.sender import (
    ACK_TRANSITIONS,
    SenderConfig,
    retransmissions,
    sender_net,
)
from tcpn.models.schema_base import VariantParams
from tcpn.models.variant_registry import Ns3Congestion, register_variant
from tcpn.petrinets import (
    BOOL,
    CLOCK,
    INT,
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
from tcpn.petrinets.net_functions import net_function

__all__ = ["REPAIR", "REPORT", "REPORTS", "REPORT_HISTORY", "TCP_L", "TcpLParams", "p_congestion",
           "reporter_net", "tcp_l_adopt", "tcp_l_choices", "tcp_l_reacts", "tcp_l_sender_net"]

TCP_L = RecordSet("TcpL", sent=IntSet(0), retx=IntSet(0), link_sent=IntSet(0),
                  link_failed=IntSet(0), report_time=CLOCK)
TcpL: Any = TCP_L.record_type
#: The repair after a timeout judged a link loss: ``resume`` (``nxt`` to go on from once
#: ``una`` is sent again; 0: none), ``paced`` (new segments paced) and ``pace_end`` (the
#: data outstanding at the timeout ends at this segment).
REPAIR = RecordSet("TcpLRepair", resume=IntSet(0), paced=BOOL, pace_end=IntSet(0))
Repair: Any = REPAIR.record_type
#: A last-hop report: receiver clock when taken, frames sent, frames failed.
REPORT = ProductSet(CLOCK, INT, INT, name="Report")
#: Reports kept for ACKs still in flight (enough for a reverse path 64 periods long).
REPORT_HISTORY = 64
#: The reports taken so far (newest last).
REPORTS = ListSet(REPORT, max_length=REPORT_HISTORY, name="Reports")

def p_congestion(loss_tcp: float, loss_link: float) -> float:
    """``clamp((Loss_tcp - Loss_link) / Loss_tcp, 0, 1)``, 1 when ``Loss_tcp = 0``.

    >>> p_congestion(0.5, 0.375), p_congestion(0.02, 0.02), p_congestion(0.02, 0.0)
    (0.25, 0.0, 1.0)
    >>> p_congestion(0.0, 0.01), p_congestion(0.01, 0.05)
    (1.0, 0.0)
    """
    if loss_tcp <= 0.0:
        return 1.0
    return min(1.0, max(0.0, (loss_tcp - loss_link) / loss_tcp))


def tcp_l_adopt(st: Any, reports: tuple[tuple[float, int, int], ...], ack_ts: float) -> Any:
    """The state after an ACK sent at receiver time ``ack_ts``: it carries the newest of
    ``reports`` taken before it left, adopted if newer than the one held.

    >>> st = TcpL(10, 1, 0, 0, -1.0)
    >>> reports = ((1.0, 40, 0), (2.0, 50, 1))
    >>> tcp_l_adopt(st, reports, 1.5).link_sent, tcp_l_adopt(st, reports, 2.5).link_sent
    (40, 50)
    """
    for time, sent, failed in reversed(reports):
        if time <= ack_ts:
            if time > st.report_time:
                return st._replace(report_time=time, link_sent=sent, link_failed=failed)
            break
    return st


def tcp_l_reacts(st: Any, u: float) -> bool:
    """Whether the loss being signalled gets a congestion reaction, for the uniform draw
    ``u`` (see the module docstring).

    >>> tcp_l_reacts(TcpL(99, 0, 100, 1, 1.0), 0.999)  # Loss_link = Loss_tcp: never
    False
    >>> tcp_l_reacts(TcpL(99, 0, 100, 0, 1.0), 0.999)  # Loss_link = 0: always
    True
    """
    loss_tcp = (st.retx + 1) / (st.sent + 1)
    loss_link = st.link_failed / st.link_sent if st.link_sent > 0 else 0.0
    return p_congestion(loss_tcp, loss_link) > u


@net_function
def _adopt(st: Any, reports: Any, a: Any) -> dict[str, Any]:
    return {"st2": tcp_l_adopt(st, reports, a.ts)}


@net_function
def _adopt_and_decide(st: Any, reports: Any, a: Any, rng: Any) -> dict[str, Any]:
    st2 = tcp_l_adopt(st, reports, a.ts)
    return {"st2": st2, "react": tcp_l_reacts(st2, float(rng.random()))}


@net_function
def _decide(st: Any, rng: Any) -> dict[str, Any]:
    return {"react": tcp_l_reacts(st, float(rng.random()))}


def tcp_l_sender_net(config: SenderConfig, name: str = "sender",
                     timeout: str = "go_back_n") -> PetriNet:
    """The TCP-L sender module on the loss-based sender ``config.variant`` (``newreno``, the
    study's; ``sack``, NewReno on the RFC 6675 scoreboard; or ``reno``); ports ``out`` and
    ``acks``. Its place ``report`` is the socket of :func:`reporter_net`'s ``report`` port.
    ``timeout`` is the repair after a timeout without a reaction (module docstring).

    >>> net = tcp_l_sender_net(SenderConfig(flow=0, dst=1, variant="sack"))
    >>> [a.inscription for a in net.arcs_of("sack_retransmit") if a.place == "tcpl"]
    ['st', 'st._replace(sent=st.sent + 1, retx=st.retx + 1)']
    """
    if config.variant not in ("reno", "newreno", "sack"):
        raise InputError(f"tcp-l of flow {config.flow}: base {config.variant!r} is not reno, "
                         "newreno or sack")
    sack = config.variant == "sack"
    net = sender_net(config, name)
    net.add_place(Place("tcpl", TCP_L, initial=[TcpL(0, 0, 0, 0, -1.0)]))
    net.add_place(Place("report", REPORTS, initial=[()]))
    track(net, "send", "tcpl", "st",
          "st._replace(sent=st.sent + 1, retx=st.retx + (1 if t.nxt < t.high else 0))")
    resent = retransmissions(net)
    for tname in (t for t in ACK_TRANSITIONS if t in net.transitions):
        net.add_read("report", tname, "reports")
        update = "st2._replace(sent=st2.sent + 1, retx=st2.retx + 1)" if tname in resent \
            else "st2"
        track(net, tname, "tcpl", "st", update)
        if tname == "fast_retransmit":
            add_action(net, tname, _adopt_and_decide, ("st2", "react"))
        else:
            add_action(net, tname, _adopt, ("st2",))
    for tname in (t for t in resent if t not in ACK_TRANSITIONS):  # SACK's hole repairs
        track(net, tname, "tcpl", "st", "st._replace(sent=st.sent + 1, retx=st.retx + 1)")
    # no reaction: recovery at the window it had (SACK recovery enters at cwnd = ssthresh,
    # NewReno's inflates it by the duplicate-ACK threshold)
    inflation = "" if sack else " + DUPTHRESH"
    wrap_output(net, "fast_retransmit", "tcb",
                "({base}) if react else ({base})._replace(ssthresh=max(2.0, t.cwnd), "
                f"cwnd=max(2.0, t.cwnd){inflation})")
    net.add_read("tcpl", "timeout", "st")
    add_action(net, "timeout", _decide, ("react",))
    if timeout == "retransmit_only":
        _retransmit_only_timeout(net, sack)
    elif timeout == "go_back_n":
        # the base timeout's go-back-N, the window kept (before any recovery inflation)
        wrap_output(net, "timeout", "tcb",
                    "({base}) if react else ({base})._replace("
                    "cwnd=t.ssthresh if t.inrec else t.cwnd, ssthresh=t.ssthresh)")
    else:
        raise InputError(f"tcp-l of flow {config.flow}: timeout {timeout!r} is not go_back_n "
                         "or retransmit_only")
    return net


def _retransmit_only_timeout(net: PetriNet, sack: bool) -> None:
    """A timeout that does not react: una again, nxt resumes, recovery at the same window,
    new segments paced until one window is out after the repair (module docstring). On
    SACK recovery the scoreboard is kept and una counts as retransmitted; una leaves
    whatever the pipe says (it is the repair), what follows obeys the pipe."""
    net.add_place(Place("repair", REPAIR, initial=[Repair(0, False, 0)]))
    net.add_place(Place("pace", UNIT.timed(), initial=[Token((), 0.0)]))
    window = "(t.ssthresh if t.inrec else t.cwnd)"  # before any recovery inflation
    scoreboard = ", sacked=t.sacked, highrxt=t.una + 1" if sack else ""
    wrap_output(net, "timeout", "tcb",
                f"({{base}}) if react else ({{base}})._replace(cwnd={window}, "
                f"ssthresh=max(2.0, {window}), inrec=True{scoreboard})")
    if sack:
        or_guard(net, "send", "rp.resume > 0")
    track(net, "timeout", "repair", "rp",
          "rp._replace(resume=0, paced=False) if react else "
          "rp._replace(resume=t.nxt, paced=True, pace_end=t.high)")
    # send: the first send after such a timeout is una; nxt then jumps back to resume
    resumed = "max(t.nxt + 1, rp.resume)"
    wrap_output(net, "send", "tcb", f"({{base}})._replace(nxt={resumed})")
    track(net, "send", "repair", "rp",
          f"rp._replace(resume=0, paced=rp.paced and not (t.una >= rp.pace_end and "
          f"{resumed} - t.una >= min(t.cwnd, WINDOW)))")
    net.add_input("pace", "send", "()")
    net.add_output("pace", "send", "()", delay="(r.srtt if r.srtt > 0 else r.rto) / "
                   "max(1.0, min(t.cwnd, WINDOW)) if rp.paced else 0.0")


def reporter_net(interval_s: float, clock_rate: float = 1.0, clock_offset_s: float = 0.0,
                 name: str = "reporter") -> PetriNet:
    """The receiver's reporter: every ``interval_s`` (first at ``interval_s``) it copies the
    ``frames`` counters onto the list ``report`` with its clock ``clock_rate * now +
    clock_offset_s``. Ports: ``frames`` (read; unfused it stays at ``(0, 0)``) and
    ``report`` (the sender's place).

    >>> sorted(reporter_net(0.5).transitions)
    ['take_report']
    """
    if not (math.isfinite(interval_s) and interval_s > 0):
        raise InputError(f"tcp-l reporter: report_interval_s must be a finite number > 0, "
                         f"got {interval_s!r}")
    if not (math.isfinite(clock_rate) and clock_rate > 0):
        raise InputError(f"tcp-l reporter: clock rate {clock_rate!r} (1 + skew) stops or "
                         "reverses the receiver clock; need a finite rate > 0")
    net = PetriNet(name)
    net.declare(INTERVAL_S=float(interval_s), CLOCK_RATE=float(clock_rate),
                OFFSET_S=float(clock_offset_s))
    net.add_place(Place("tick", UNIT.timed(), initial=[Token((), float(interval_s))]))
    net.add_place(Place("frames", ProductSet(INT, INT, name="Frames"), initial=[(0, 0)],
                        port="in"))
    net.add_place(Place("report", REPORTS, initial=[()], port="io"))
    net.add_transition(T("take_report"))
    net.add_input("tick", "take_report", "()")
    net.add_output("tick", "take_report", "()", delay="INTERVAL_S")
    net.add_read("frames", "take_report", "(sent, failed)")
    net.add_input("report", "take_report", "old")
    net.add_output("report", "take_report",
                   f"(*old[-{REPORT_HISTORY - 1}:], (now * CLOCK_RATE + OFFSET_S, sent, failed))")
    return net


# --------------------------------------------------------------------------- registration


class TcpLParams(VariantParams):
    """TCP-L: the receiver reports its last hop's frame error rate every
    ``report_interval_s`` (not stated in the study; tcpn's choice) and the sender reacts
    like ``base`` with probability P_congestion."""

    variant: Literal["tcp_l"]
    report_interval_s: float = Field(default=1.0, gt=0.0, allow_inf_nan=False)
    base: Literal["reno", "newreno"] = "newreno"
    #: the repair after a timeout without a reaction: every segment from ``una`` again
    #: with the window kept (ns-2's TCP-Linux, the study's simulator), or ``una`` alone
    #: (tcpn's earlier reading; the net lens only)
    timeout: Literal["go_back_n", "retransmit_only"] = "go_back_n"


def add_reporter(net: PetriNet, i: int, flow: Any, interfaces: dict[str, str]) -> None:
    """Add connection ``i``'s reporter at its receiver, reading the last hop's ``frames``
    (an 802.11 hop's, when the last hop is one)."""
    frames = f"{interfaces[flow.data_queues[-1]]}.frames"
    ports = {"report": f"flow{i}.snd.report"}
    if frames in net.places:
        ports["frames"] = frames
    params = flow.params
    assert isinstance(params, TcpLParams)  # the registry's model of variant tcp_l
    net.add_module(reporter_net(params.report_interval_s, 1.0 + flow.receiver_clock_skew,
                                flow.receiver_clock_offset_s), f"flow{i}.rep", ports)


def tcp_l_choices(net: PetriNet, i: int, segments: int) -> tuple[dict[str, str],
                                                                 dict[str, float]]:
    """TCP-L of connection ``i``: its reaction draw at a fast retransmit or a timeout as a
    choice (the original reacts only when certain, ``_react`` whenever possible), and its
    reporter stopped once the sender has every segment acknowledged (nothing after that
    reads a report) or has given up. Returns the twins and the draws they stand for."""
    # read when the state space asks: tcpn.models.verification imports the composer,
    # which imports this module
    from tcpn.models.verification.draws import (
        REACT_SUFFIX,
        U_CALM,
        UNOPENED_SUFFIX,
        FixedDraw,
        forced,
    )

    twins: dict[str, str] = {}
    draws: dict[str, float] = {}
    for name in (f"flow{i}.snd.fast_retransmit", f"flow{i}.snd.timeout"):
        source = net.transitions[name]
        inputs = [n for n in source.action_inputs if n != "rng"]
        calm = forced(source.action, FixedDraw(U_CALM))
        react = forced(source.action, FixedDraw(0.0))

        def reaction_open(calm: Any = calm, react: Any = react, **values: Any) -> bool:
            return bool(calm(**values)["react"] != react(**values)["react"])
        twin = name + REACT_SUFFIX
        call = ", ".join(f"{n}={n}" for n in inputs)
        guard = f"reaction_open({call})"
        net.transitions[name] = replace(source, action=calm)
        net.add_transition(replace(
            source, name=twin, action=react,
            guard=guard if source.guard is None else f"({source.guard}) and {guard}",
            params={**source.params, "reaction_open": reaction_open}))
        for arc in net.arcs_of(name):
            net.add_arc(replace(arc, transition=twin))
        twins[twin] = name
        draws.update({name: U_CALM, twin: 0.0})
    tick = f"flow{i}.rep.take_report"
    source = net.transitions[tick]
    unopened = tick + UNOPENED_SUFFIX
    net.add_transition(replace(source, name=unopened))
    for arc in net.arcs_of(tick):
        net.add_arc(replace(arc, transition=unopened))
    net.add_inhibitor(f"flow{i}.snd.tcb", unopened)
    if f"flow{i}.snd.failed" in net.places:
        net.add_inhibitor(f"flow{i}.snd.failed", unopened)
    net.add_read(f"flow{i}.snd.tcb", tick, "t_sender")
    net.transitions[tick] = replace(source, guard=f"t_sender.una < {segments}")
    twins[unopened] = tick
    return twins, draws


def _ns3_checks(params: TcpLParams, tcp: Any) -> list[str]:
    problems = ["tcp.ecn: the ns3 lens's TCP-L does not combine its randomised reaction "
                "with ECN"] if tcp.ecn else []
    if params.timeout == "retransmit_only":
        problems.append("params.timeout: retransmit_only: ns-3's socket resends every "
                        "outstanding segment after a timeout (go_back_n)")
    return problems


register_variant("tcp_l", TcpLParams,
                 lambda config, params: tcp_l_sender_net(config, timeout=params.timeout),
                 recovery=lambda params: str(params.base),
                 ns3=lambda params: Ns3Congestion(
                     "tcpn::TcpL", report_interval_s=params.report_interval_s),
                 flow_modules=add_reporter, state_space_choices=tcp_l_choices,
                 checks={"ns3": _ns3_checks},
                 unsupported={"fluid": "the fluid model has no randomised loss reaction"})
