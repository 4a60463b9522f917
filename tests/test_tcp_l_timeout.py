"""TCP-L's timeout without a reaction, against a hand derivation: by default (ns-2's
TCP-Linux, the study's simulator) every segment from una again with the window kept;
with ``params.timeout: retransmit_only`` one segment again, no go-back-N, the window
kept, and the window that the repair frees paced, not burst.

Path A -(1 Gbit/s, 5 ms)- R -(1 Mbit/s, 5 ms)- B, MSS 1000, every segment ACKed, initial
cwnd 4, ssthresh 64, receive window 8 segments (so at most 8 in flight), no handshake.
The last hop R->B loses its arrivals 20 and 28. The sender's report place starts with a
report "every frame failed" (Loss_link = 1) and no later report comes (interval 100 s):
P_congestion = 0 at every loss, so TCP-L never reacts (no draw can make it).

Hand derivation. Slow start: the ACKs of segments 0..19 raise cwnd from 4 to 24; the
window of 8 has segments 20..27 in flight when 20 is lost (arrival 20); 21..27 bring 7
duplicate ACKs; limited transmit is blocked by the window of 8, so the third one fast-
retransmits 20 as arrival 28 (28 segments went before it), which is lost: no reduction
(ssthresh = cwnd = 24, cwnd = 27, then +1 per duplicate ACK). Nothing more may be sent
(una 20, nxt 28, window 8); the timer, last restarted by the ACK of segment 19, expires
min RTO = 1 s later. By default the timeout goes back to 20 with cwnd = ssthresh = 24 (the
window before the recovery's inflation): 20..27 leave at once (the receive window of 8),
21..27 again though the receiver holds them; the ACK of 20 acknowledges up to 27 and the
next ACKs send 28 on. Retransmit only: TCP-L's timeout sends segment 20 once, resumes at
28 with cwnd = ssthresh = 24 (in recovery); the ACK of 20 acknowledges 21..27 too (recovery ends,
cwnd 24) and frees the whole window of 8: those 8 segments (28..35) leave one every
srtt / 8, not at once.

With SACK (the same run on the RFC 6675 scoreboard) the derivation is the same but for the
window in recovery: fast retransmit enters at cwnd = ssthresh = 24, no inflation, and the
timeout resends 20 with the scoreboard (21..27 SACKed) kept; the ACK of 20 ends recovery
at 24 and frees the same 8 segments, paced alike.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from tcpn.lenses import make_run
from tcpn.models.components.congestion.tcp_l import TcpL
from tcpn.models.scenario import validate_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import Simulator

MSS = 1000
WATCHED = ("send", "timeout", "fast_retransmit", "recovery_exit", "partial_ack")


def firings(sack, lost=(20, 28), timeout="retransmit_only"):
    """(time, transition, binding) of the sender's watched transitions over 4 s."""
    scenario = validate_scenario({
        "name": "tcp_l_timeout", "horizon_s": 4.0,
        "links": [{"a": "A", "b": "R", "rate_bps": 1e9, "delay_s": 0.005},
                  {"a": "R", "b": "B", "rate_bps": 1e6, "delay_s": 0.005,
                   "ab": {"errors": {"kind": "list", "packets": list(lost)}}}],
        "flows": [{"id": "f", "src": "A", "dst": "B", "variant": "tcp_l", "bytes": 60 * MSS,
                   "params": {"report_interval_s": 100.0, "timeout": timeout}}],
        "tcp": {"segment_size_bytes": MSS, "delack_count": 1, "sack": sack,
                "initial_cwnd_segments": 4, "initial_ssthresh_segments": 64,
                "rcv_buf_bytes": 8 * MSS, "snd_buf_bytes": 8 * MSS, "handshake": False}})
    run = make_run(scenario)
    net = compose(scenario, run.flows).net
    place = "flow0.snd.tcpl"  # a report "1 frame sent, 1 failed" taken before the start
    net.places[place] = dataclasses.replace(net.places[place], initial=[TcpL(0, 0, 1, 1, -1.0)])
    sim = Simulator(net, seed=run.lens_seed)
    out = []
    while (f := sim.step()) is not None and f.time <= 4.0:
        kind = f.transition.rsplit(".", 1)[-1]
        if f.transition.startswith("flow0.snd.") and kind in WATCHED:
            out.append((f.time, kind, f.binding))
    return out


def test_timeout_judged_link_loss_goes_back_n_with_the_window_kept():
    fired = firings(False, timeout="go_back_n")
    sends = [(t, b["t"].nxt, b) for t, k, b in fired if k == "send"]
    ((t_to, _, b_to),) = [(t, k, b) for t, k, b in fired if k == "timeout"]
    assert b_to["t"].ssthresh == 24.0 and b_to["t"].cwnd == 24.0 + 3 + 4  # inflated
    after = [(t, seq, b) for t, seq, b in sends if t >= t_to]
    # 20..27 at the timeout (the receive window of 8), cwnd 24 (not 1, not inflated)
    assert [(t, seq) for t, seq, _b in after[:8]] == [(t_to, seq) for seq in range(20, 28)]
    assert all(b["t"].cwnd == 24.0 and b["t"].ssthresh == 24.0 for _t, _s, b in after[:8])
    assert after[8][0] > t_to and after[8][1] == 28
    assert sorted(seq for _t, seq, _b in sends) == sorted([*range(60), *range(20, 28)])
    later = [b["t"] for t, _k, b in fired if t > t_to]
    assert min(t.ssthresh for t in later) == 24.0 and min(t.cwnd for t in later) >= 24.0


@pytest.mark.parametrize("sack", [False, True])
def test_timeout_judged_link_loss_retransmits_once_and_paces_the_freed_window(sack):
    fired = firings(sack)
    sends = [(t, b["t"].nxt, b) for t, k, b in fired if k == "send"]
    ((t_fr, _, b_fr),) = [(t, k, b) for t, k, b in fired if k == "fast_retransmit"]
    ((t_to, _, b_to),) = [(t, k, b) for t, k, b in fired if k == "timeout"]
    assert b_fr["t"].una == 20 and b_fr["t"].cwnd == 24.0      # 4 + 20 ACKs of slow start
    # the timer was last restarted when the ACK of segment 19 arrived
    ack_of_19 = max(t for t, k, b in fired if k == "send" and b["t"].nxt == 27)
    assert t_to == pytest.approx(ack_of_19 + 1.0, abs=1e-12)
    # NewReno inflates by 3 at fast retransmit and 1 per later duplicate (21..27: 4 more)
    assert b_to["t"].ssthresh == 24.0 and b_to["t"].cwnd == (24.0 if sack else 24.0 + 3 + 4)
    # at the timeout: segment 20 once, then the next send is 28 (no go-back-N)
    after = [(t, seq, b) for t, seq, b in sends if t >= t_to]
    assert [seq for _t, seq, _b in after[:2]] == [20, 28]
    assert after[0][0] == t_to and after[0][2]["t"].cwnd == 24.0
    if sack:  # the scoreboard survives the timeout; 20 counts as resent
        assert after[0][2]["t"].sacked == ((21, 28),) and after[0][2]["t"].highrxt == 21
    assert sorted(seq for _t, seq, _b in sends) == sorted([*range(60), 20])  # no go-back-N
    # the window never shrinks: ssthresh and cwnd stay >= 24 from the loss on
    later = [b["t"] for t, _k, b in fired if t > t_fr]
    assert min(t.ssthresh for t in later) == 24.0 and min(t.cwnd for t in later) >= 24.0
    # the ACK of 20 ends recovery at cwnd 24 and frees 8 segments: one every srtt / 8
    ((t_exit, _, _),) = [(t, k, b) for t, k, b in fired if k == "recovery_exit"]
    freed = after[1:9]
    assert [seq for _t, seq, _b in freed] == list(range(28, 36))
    assert freed[0][0] == t_exit
    for (t0, _s0, b0), (t1, _s1, _b1) in itertools.pairwise(freed):
        assert t1 - t0 == pytest.approx(b0["r"].srtt / 8, abs=1e-12)
        assert t1 - t0 > 0.005                                     # no burst


@pytest.mark.parametrize("sack", [False, True])
def test_timeout_after_a_lost_window_resends_una_at_once(sack):
    # The whole window 20..27 lost on the last hop: no duplicate ACK, nothing SACKed, so
    # the timeout finds 8 segments presumed in flight (RFC 6675 pipe 8 = the receive
    # window): the repair of una must still leave at the timeout, not wait for the pipe.
    fired = firings(sack, lost=range(20, 28))
    ((t_to, _, b_to),) = [(t, k, b) for t, k, b in fired if k == "timeout"][:1]
    assert b_to["t"].una == 20 and b_to["t"].nxt == 28
    after = [(t, b["t"].nxt) for t, k, b in fired if k == "send" and t >= t_to]
    assert after[0] == (t_to, 20)
