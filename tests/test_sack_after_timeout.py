"""``tcp.sack_after_timeout``: what a retransmission timeout does with the SACK scoreboard,
the same in the net and the ns3 lens (issue 29).

The hand case: one NewReno flow with SACK across the dumbbell, a receive window of 6
segments, a duplicate-ACK threshold of 10 (so no fast retransmit) and one ACK per
segment. Segments 0-5 leave in the first round; 0, 1 and 3 are lost (packets 2, 3 and 5
of the first link: packets 0 and 1 are the handshake's), the receiver holds and SACKs 2,
4 and 5, and the timer fires at 1.044 s. ``forget`` (RFC 2018 8, ns-2) clears the
scoreboard and goes back N: 0; on its ACK (of 1, cwnd 2) 1 and 2; on the ACK of 3 (cwnd 3)
3, 4 and 5: six retransmissions, the three the receiver holds included. ``keep`` (ns-3's
own rule, Linux) resends only what the scoreboard does not hold: 0; then 1 and 3.
"""

from __future__ import annotations

import pytest

from tcpn.lenses import make_run, run_once
from tcpn.lenses.ns3 import Ns3Lens
from tcpn.lenses.ns3.loader import installed
from tcpn.models.components.congestion.cubic import cubic_sender_net
from tcpn.models.components.sender import SenderConfig
from tcpn.models.scenario import Scenario, ScenarioError, dumbbell, validate_scenario
from tcpn.models.traces import TraceWriter

MSS = 1448
TCP = {"segment_size_bytes": MSS, "snd_buf_bytes": 1 << 20, "rcv_buf_bytes": 6 * MSS,
       "delack_count": 1, "dupack_threshold": 10, "sack": True}
#: The segments each setting sends again after the timeout (the module docstring).
RESENT = {"forget": [0, 1, 2, 3, 4, 5], "keep": [0, 1, 3]}


def _hand_case(setting: str) -> Scenario:
    data = dumbbell(pairs=1, variant="newreno", horizon_s=1.2,
                    tcp={**TCP, "sack_after_timeout": setting}).model_dump()
    data["flows"][0].pop("params", None)
    data["links"][0]["ab"]["errors"] = {"kind": "list", "packets": [2, 3, 5]}
    return validate_scenario(data)


def _resent(trace) -> tuple[float, list[int], list[float]]:
    """The timeout's instant, and the segments sent again after it with their times."""
    (timeout,) = trace.events(event="timeout")["time_s"]
    resent = trace.events(event="retransmit")
    resent = resent[resent["time_s"] >= timeout - 1e-5]  # ns-3's pcap: 1 us
    return timeout, [int(s) // MSS for s in resent["seq"]], list(resent["time_s"])


def test_the_default_forgets_and_keep_needs_sack():
    assert dumbbell(pairs=1).tcp.sack_after_timeout == "forget"
    with pytest.raises(ScenarioError, match=r"tcp\.sack_after_timeout: keep needs sack"):
        dumbbell(pairs=1, tcp={"sack": False, "sack_after_timeout": "keep"})
    # forget without SACK is the only rule there is: accepted, changes nothing
    validate_scenario(dumbbell(pairs=1, tcp={"sack": False}).model_dump())


@pytest.mark.parametrize("setting", ["forget", "keep"])
def test_net_lens_resends_the_sacked_segments_only_when_it_forgets(setting):
    timeout, segments, _ = _resent(run_once(_hand_case(setting), "net",
                                            make_run(_hand_case(setting))).trace)
    assert timeout == pytest.approx(1.044, abs=1e-3)
    assert segments == RESENT[setting]


def test_cubic_keeps_no_copy_of_a_scoreboard_the_sender_keeps():
    """CUBIC counts out what the receiver held before a timeout with the scoreboard;
    ``kept`` holds only what the base sender forgot."""
    def timeout_state(keep: bool) -> str:
        net = cubic_sender_net(SenderConfig(flow=0, dst=1, variant="sack", sack_keep=keep))
        (arc,) = [a for a in net.arcs_of("timeout") if a.place == "cubic" and
                  "cubic_timeout" in a.inscription]
        return arc.inscription
    timeout = "cubic_timeout(c, t.cwnd, CUBIC_BETA, FAST_CONV, {}, t.una)"
    assert timeout_state(False) == timeout.format("t.sacked")
    assert timeout_state(True) == timeout.format("c.kept")


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
@pytest.mark.parametrize("setting", ["forget", "keep"])
def test_both_lenses_resend_the_same_segments_after_a_timeout(setting):
    """The hand case in both lenses: the same timeout, the same segments sent again in
    the same order within a few milliseconds. ns-3.44 alone keeps the scoreboard
    (``SetSentListLost(false)`` in ``ReTxTimeout``): ``forget`` is the ns3 lens's
    ``ForgetSack``."""
    scenario = _hand_case(setting)
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    Ns3Lens().run(run, writer, lambda _t: None)
    ns3 = _resent(writer.close())
    net = _resent(run_once(scenario, "net", make_run(scenario)).trace)
    assert ns3[0] == pytest.approx(net[0], abs=1e-3)
    assert ns3[1] == net[1] == RESENT[setting]
    assert max(abs(a - b) for a, b in zip(ns3[2], net[2], strict=True)) < 5e-3


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_forget_sack_holds_the_blocks_across_the_sequence_number_wrap():
    """``ForgetSack``'s record of the blocks the receiver SACKed (``tcpn::HeldBlocks``,
    ``cpp/variants.h``) compares sequence numbers by their distance from SND.UNA: a
    connection past 4 GiB wraps them (a test sending 4 GiB would take minutes, ns-3 starts
    every connection at sequence number 0 and the lens has no other ISN, so the record is
    driven directly with numbers around 2^32). Keyed by the raw numbers, the block
    ``[2^32 - 1000, 500)`` would end before it starts and the blocks above the wrap would
    sort below SND.UNA."""
    import cppyy

    from tcpn.lenses.ns3.loader import load_ns3

    load_ns3()
    top = 1 << 32
    held = cppyy.gbl.tcpn.HeldBlocks()
    assert held.Bytes(5, 10) == 0  # nothing held before the first ACK
    una = top - 3000
    held.Advance(una)
    held.Add(top - 1000, 500)  # across the wrap
    held.Add(1500, 2500)
    assert held.Blocks() == 2
    assert held.Bytes(una, top - 1000) == 0
    assert held.Bytes(una, 2000) == 1000 + 500 + 500
    assert held.Bytes(una, 3000) == 2500
    held.Advance(0)  # SND.UNA at the wrap: [2^32 - 1000, 0) is passed
    assert held.Bytes(0, 3000) == 1500
    held.Add(400, 1600)  # joins [0, 500) and [1500, 2500)
    assert held.Blocks() == 1 and held.Bytes(0, 3000) == 2500
    held.Advance(top - 100)  # an older ACK changes nothing
    held.Add(top - 50, 100)  # nor does a block below SND.UNA, but for its part above it
    assert held.Blocks() == 1 and held.Bytes(0, 3000) == 2500
    held.Advance(2000)
    assert held.Bytes(2000, 3000) == 500 and held.Bytes(0, 3000) == 500
