"""``tcp.pipe_counts_sacked_retransmits``: whether fast recovery's pipe still counts a
retransmitted segment once the receiver SACKs it, the same in the net and the ns3 lens
(issue 34).

RFC 6675's ``SetPipe`` counts nothing for a SACKed segment (the default); ns-3.44's
``TcpTxBuffer::BytesInFlight`` keeps counting a retransmission the receiver SACKs until the
cumulative ACK passes it (``TcpTxBuffer::Update`` leaves its retransmitted flag set).

The hand case: one NewReno flow with SACK across the dumbbell, one ACK per segment.
Segments 0-9 leave in the first round; 1 and 3 are lost (packets 3 and 5 of the first
link: packets 0 and 1 are the handshake's), and so is the retransmission of 1 (packet 16).
The ACK of 0 sends 10 and 11, limited transmit 12 and 13, and the third duplicate ACK
(0.0956 s) retransmits 1 with ``ssthresh = cwnd = (14 - 1 - 2) // 2 = 5`` (FlightSize less
the two limited-transmit segments). 3 is sent again at 0.1351 s, 14-16 on the next ACKs.
Before the ACK of the retransmitted 3 (0.1806 s) five segments are out, 1 and 3 (sent
again) and 14-16: the pipe is 5, the window. That ACK SACKs 3: RFC 6675's pipe falls to 4
and segment 17 leaves on it; ns-3.44's stays 5 (3 is still counted) and 17 waits for the
next ACK (0.1818 s). The cumulative ACK stays at 1 (its retransmission was lost), so from
there every round sends one segment fewer.
"""

from __future__ import annotations

import pytest
from test_native import assert_same_firings, native_or_skip, sequences

from tcpn.lenses import make_run, run_once
from tcpn.lenses.ns3 import Ns3Lens
from tcpn.lenses.ns3.loader import installed
from tcpn.models.components.sender import Tcb, recovery_pipe, sack_pipe, sacked_count
from tcpn.models.scenario import Scenario, dumbbell, validate_scenario
from tcpn.models.topology import compose
from tcpn.models.traces import TraceWriter

MSS = 1448
#: The ACK that SACKs the retransmitted segment 3, and the next one (s).
SACKING_ACK_S, NEXT_ACK_S = 0.1806, 0.1818
#: The new segments each rule sends from the ACK that SACKs the retransmitted 3 to the
#: end of that round (0.175-0.19 s), with the instant of the first.
SENT = {False: ([17, 18, 19, 20], SACKING_ACK_S), True: ([17, 18, 19], NEXT_ACK_S)}


def _hand_case(counts: bool) -> Scenario:
    tcp = {"segment_size_bytes": MSS, "snd_buf_bytes": 1 << 20, "rcv_buf_bytes": 1 << 20,
           "delack_count": 1, "sack": True, "pipe_counts_sacked_retransmits": counts}
    data = dumbbell(pairs=1, variant="newreno", horizon_s=0.3, tcp=tcp).model_dump()
    data["flows"][0].pop("params", None)
    data["links"][0]["ab"]["errors"] = {"kind": "list", "packets": [3, 5, 16]}
    return validate_scenario(data)


def _round(trace) -> tuple[list[int], float]:
    """The new segments sent in 0.175-0.19 s and the instant of the first."""
    sent = trace.events("f0", "send")
    sent = sent[(sent["time_s"] > 0.175) & (sent["time_s"] < 0.19)]
    return [int(s) // MSS for s in sent["seq"]], float(sent["time_s"].iloc[0])


def test_the_default_is_rfc_6675s_pipe():
    assert dumbbell(pairs=1).tcp.pipe_counts_sacked_retransmits is False


def test_ns3s_pipe_adds_the_sacked_retransmissions():
    """Segments 0-19 sent, SND.UNA 1, 1-3 sent again (HighRxt 4), then 3 and 5-17 SACKed
    (4 lost, not yet resent). RFC 6675: 1 and 2 (lost, resent) and 18, 19 (not lost) = 4;
    ns-3 counts 3 too (resent, then SACKed): 5; had 3 been SACKed when NextSeg passed over
    it (``skipped``), it was never resent, and neither counts it."""
    t = Tcb(5.0, 5.0, 1, 20, 20, 0, 20, True, 0, False, ((3, 4), (5, 18)), 4, False, 0)
    assert sack_pipe(t, 3) == 4
    k = ()  # nothing was passed over below HighRxt
    scope = {"t": t, "k": k, "DUPTHRESH": 3, "sack_pipe": sack_pipe,
             "sacked_count": sacked_count}
    assert eval(recovery_pipe(False), scope) == 4
    assert eval(recovery_pipe(True), scope) == 5
    # 3 SACKed before HighRxt passed it: never resent, not counted
    assert eval(recovery_pipe(True), {**scope, "k": ((3, 4),)}) == 4


@pytest.mark.parametrize("counts", [False, True])
def test_net_lens_sends_on_the_ack_that_sacks_a_retransmission_only_by_rfc_6675(counts):
    sent, first_s = _round(run_once(_hand_case(counts), "net", make_run(_hand_case(counts)))
                           .trace)
    assert sent == SENT[counts][0]
    assert first_s == pytest.approx(SENT[counts][1], abs=5e-4)


def test_ns3s_pipe_fires_the_same_sequence_in_both_engines():
    """The hand case's net with ns-3's pipe (the place ``skipped`` and its arcs): the
    native engine fires what the Python engine fires, through the recovery."""
    scenario = _hand_case(True)
    net = compose(scenario, make_run(scenario).flows).net
    assert any(place.endswith(".skipped") for place in net.places)
    native_or_skip()
    sims = sequences(net, seed=scenario.seed, max_firings=5_000)
    fired = {name for _, name, _ in sims["python"].monitors[0].firings}
    assert any(name.endswith("sack_retransmit") for name in fired), sorted(fired)
    assert_same_firings(sims)


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
@pytest.mark.parametrize("counts", [False, True])
def test_both_lenses_send_the_same_round_after_the_sacked_retransmission(counts):
    """The hand case in ns-3: ``true`` is ns-3.44's own pipe, ``false`` the ns3 lens's
    ``SackedRetransmitsOut`` (``cpp/variants.h``)."""
    scenario = _hand_case(counts)
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    Ns3Lens().run(run, writer, lambda _t: None)
    sent, first_s = _round(writer.close())
    assert sent == SENT[counts][0]
    assert first_s == pytest.approx(SENT[counts][1], abs=5e-4)


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_the_ns3_lens_records_what_the_acks_sack_of_what_was_sent_again():
    """``SackedRetransmitsOut``'s two records (``tcpn::HeldBlocks``): what was sent again,
    and what of it the SACK blocks cover; a timeout forgets both."""
    import cppyy

    from tcpn.lenses.ns3.loader import load_ns3

    load_ns3()
    resent, sacked = cppyy.gbl.tcpn.HeldBlocks(), cppyy.gbl.tcpn.HeldBlocks()
    for held in (resent, sacked):
        held.Advance(1000)
    resent.Add(2000, 4000)
    resent.Add(6000, 7000)
    sacked.AddHeld(resent, 3000, 6500)  # a block over the end of one and into the other
    assert sacked.Bytes(1000, 9000) == 1000 + 500
    sacked.AddHeld(resent, 8000, 9000)  # nothing sent again there
    assert sacked.Bytes(1000, 9000) == 1500
    for held in (resent, sacked):
        held.Advance(3500)
    assert sacked.Bytes(3500, 9000) == 1000
    sacked.Clear()
    assert sacked.Bytes(3500, 9000) == 0 and sacked.Blocks() == 0
