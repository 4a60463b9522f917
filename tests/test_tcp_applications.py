"""Applications (stop time, paced source), lost ACKs and the limiters through the composer.

Two nodes A -- B (1 Gbit/s, 10 ms) as in ``test_tcp_senders``: MSS 1000, every segment
ACKed at once, timestamps off, initial cwnd 1; expectations derived by hand.
"""

from __future__ import annotations

import pytest

from tcpn.lenses import evaluate
from tcpn.models.scenario import dumbbell, validate_scenario

MSS = 1000


def scenario(flow: dict, horizon_s: float, ba: dict | None = None, **tcp: object):
    link: dict = {"a": "A", "b": "B", "rate_bps": 1e9, "delay_s": 0.01}
    if ba:
        link["ba"] = ba
    settings = {"segment_size_bytes": MSS, "timestamps": False, "sack": False,
                "delack_count": 1, "initial_cwnd_segments": 1,
                "initial_ssthresh_segments": 64, "handshake": False, "limited_transmit": False}
    settings.update(tcp)
    return validate_scenario({"name": "apps", "links": [link],
                              "flows": [{"id": "f", "src": "A", "dst": "B",
                                         "variant": "newreno", **flow}],
                              "tcp": settings, "horizon_s": horizon_s})


def run(s):
    result = evaluate(s, lens="net")
    counts = result.provenance["lens"]["census"]
    assert counts["sent"] == counts["received"] + counts["dropped"] + counts["in_flight"]
    return result


def test_stop_keeps_the_send_buffer():
    # Buffers of 4 segments (window 4). Seq 0 at 0; ACK 1 at 20 ms: cwnd 2, send 1, 2;
    # ACKs 2, 3 at 40 ms: cwnd 3 then 4, send 3, 4 then 5, 6 (window 4 from una 3).
    # At 50 ms the application closes: it has written una + 4 = 7 segments, so seqs 0..6
    # are all that is ever sent and delivered.
    s = scenario({"stop_s": 0.05}, 1.0, rcv_buf_bytes=4 * MSS, snd_buf_bytes=4 * MSS)
    events = run(s).trace.flow_events
    sends = events[events.event == "send"]
    assert sends["seq"].max() == 6 * MSS and len(sends) == 7
    assert events[events.event == "deliver"]["bytes"].sum() == 7 * MSS


def test_paced_application():
    # 800 kbit/s = one 1000-byte segment every 10 ms; with an initial window of 10 and a
    # 20 ms RTT at most 2 segments are ever in flight, so the window never holds a segment
    # back: one leaves at each production, 0, 10, ..., 90 ms before the 95 ms horizon.
    s = scenario({"app_rate_bps": 8e5}, 0.095, initial_cwnd_segments=10)
    sends = run(s).trace.events(event="send")
    assert sends["time_s"].to_list() == pytest.approx([k * 0.01 for k in range(10)])
    assert sends["seq"].to_list() == [k * MSS for k in range(10)]


def test_paced_fixed_transfer_stops_producing():
    # 3 segments at 10 ms intervals, then nothing more to send.
    s = scenario({"app_rate_bps": 8e5, "bytes": 3 * MSS}, 0.2, initial_cwnd_segments=10)
    sends = run(s).trace.events(event="send")
    assert sends["time_s"].to_list() == pytest.approx([0.0, 0.01, 0.02])


def test_lost_ack_is_an_ack_drop():
    # The first ACK (ACK 1, packet 0 on B->A) is lost: an ``ack_drop`` row with its ACK
    # number, no data ``drop``; the RTO (1 s) retransmits seq 0, whose ACK 1 gets through.
    s = scenario({"bytes": 2 * MSS}, 3.0, ba={"errors": {"kind": "list", "packets": [0]}})
    events = run(s).trace.flow_events
    lost = events[events.event == "ack_drop"]
    assert lost[["seq", "bytes", "where"]].values.tolist() == [[1 * MSS, 0.0, "B->A"]]
    assert not (events.event == "drop").any()
    assert events[events.event == "retransmit"]["seq"].to_list() == [0]
    assert events[events.event == "timeout"]["time_s"].to_list() == pytest.approx([1.0])


@pytest.mark.parametrize("queue", [
    {"kind": "sgpq", "limit": 50, "threshold_bytes": 64},
    {"kind": "token_bucket", "mode": "shaper", "rate_bps": 4e6, "depth_bytes": 15000,
     "limit": 20},
    {"kind": "token_bucket", "mode": "policer", "rate_bps": 4e6, "depth_bytes": 15000,
     "limit": 20},
])
def test_limiters_run_in_the_net_lens(queue):
    # A 1 s dumbbell whose bottleneck is the limiter: the lens accepts it, conservation
    # holds, and a limiter at 4 Mbit/s keeps the goodput below its rate (plus one bucket).
    s = dumbbell(pairs=1, horizon_s=1.0, queue=queue)
    result = run(s)
    delivered = result.trace.events(event="deliver")["bytes"].sum()
    limit_bps = queue.get("rate_bps", 10e6)
    assert 0 < delivered * 8 <= limit_bps * 1.0 + 8 * queue.get("depth_bytes", 0)
    assert (result.trace.queue("R1->R2", "enqueue").shape[0] > 0)
