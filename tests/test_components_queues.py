"""Queue and link component nets with scripted arrivals, against hand-computed outcomes."""

from __future__ import annotations

import math

import pytest

from tcpn.errors import InputError
from tcpn.models.components.link import ByteErrors, ListErrors, Transmitter, interface_net
from tcpn.models.components.packets import ECT, PACKET, Pkt
from tcpn.models.components.queues import (
    DropTailQueue,
    RedQueue,
    SmallFirstQueue,
    ThresholdEcnQueue,
    TokenBucketQueue,
    red_decision,
)
from tcpn.petrinets import PetriNet, Place, Simulator, Token

# 998-byte packets + 2-byte PPP header = 8000 bits: 1 ms at 8 Mbit/s; 10 ms propagation.
LINK = Transmitter(rate_bps=8e6, delay_s=0.01)


def packet(seq: int, ecn: int = 0, size: int = 998) -> Pkt:
    return Pkt(flow=0, dst=1, seq=seq, ack=0, size=size, ts=0.0, echo=0.0, ecn=ecn, ece=False,
               cwr=False, retx=False, sack=())


def departures(sim):
    """``(seq, time)`` of the packets that reached the far end, in time order."""
    return [(t.value.seq, t.time) for t in sorted(sim.tokens("out"), key=lambda t: t.time)]


def fired(sim, transition):
    return sim.firing_counts[sim.compiled.transition(transition).index]


def run_interface(queue, arrivals, link=LINK, seed=0):
    """Feed ``(time, packet)`` arrivals to one interface; return the simulator after."""
    net = PetriNet("bench")
    net.add_place(Place("in", PACKET, initial=[Token(p, t) for t, p in arrivals]))
    net.add_place(Place("out", PACKET))
    net.add_module(interface_net(queue, link, ["True"]), "q", {"arrivals": "in", "out0": "out"})
    sim = Simulator(net, seed=seed)
    sim.run()
    return sim


def test_drop_tail_scripted_arrivals():
    # Arrivals 0.1 ms apart, limit 2 waiting packets. Seq 0 is sent at once (queue empty
    # again), 1 and 2 wait, 3 finds 2 queued and is dropped. Departures end at 1, 2, 3 ms;
    # arrivals at the far end 10 ms later.
    sim = run_interface(DropTailQueue(limit=2), [(k * 1e-4, packet(k)) for k in range(4)])
    out = sorted((t.time, t.value.seq) for t in sim.tokens("out"))
    assert [s for _, s in out] == [0, 1, 2]
    assert [t for t, _ in out] == pytest.approx([0.011, 0.012, 0.013])
    assert sim.firing_counts[sim.compiled.transition("q.drop").index] == 1
    assert sim.tokens("q.fifo")[0].value[1:3] == (0, 0)  # empty: 0 packets, 0 bytes


def test_a_departure_makes_room_for_an_arrival_of_the_same_instant():
    # Limit 1. Seq 0 leaves at once (line busy until 1 ms), seq 1 (0.5 ms) waits, seq 2
    # comes at 1 ms, the instant seq 0's transmission ends: the line takes seq 1 first
    # (as in ns-3 and ns-2, whose end-of-transmission event was scheduled before the
    # arrival's), so seq 2 finds room and nothing is dropped.
    sim = run_interface(DropTailQueue(limit=1), [(0.0, packet(0)), (5e-4, packet(1)),
                                                 (1e-3, packet(2))])
    assert fired(sim, "q.drop") == 0
    assert departures(sim) == [(0, pytest.approx(0.011)), (1, pytest.approx(0.012)),
                               (2, pytest.approx(0.013))]


def test_drop_tail_in_bytes():
    # Limit 2500 bytes: 998 + 998 fit, a third 998 would make 2994 > 2500: dropped.
    sim = run_interface(DropTailQueue(limit=2500, unit="bytes"),
                        [(k * 1e-4, packet(k)) for k in range(4)])
    assert sorted(t.value.seq for t in sim.tokens("out")) == [0, 1, 2]


def test_threshold_ecn_marks_above_k():
    # K = 1: seq 0 leaves at once; 1 finds 0 queued, 2 finds 1 (not > 1), 3 finds 2 and 4
    # finds 3 (> 1): CE. The non-ECT seq 5 finds 4 queued: not marked, still queued.
    arrivals = [(k * 1e-4, packet(k, ECT)) for k in range(5)] + [(5e-4, packet(5, 0))]
    sim = run_interface(ThresholdEcnQueue(limit=10, k=1), arrivals)
    out = sorted((t.value.seq, t.value.ecn) for t in sim.tokens("out"))
    assert out == [(0, 2), (1, 2), (2, 2), (3, 3), (4, 3), (5, 0)]


def test_list_errors_count_crossing_packets():
    # numbered from 0 as the scenario schema says: packets 1 and 3 are seqs 1 and 3
    link = Transmitter(rate_bps=8e6, delay_s=0.01, errors=ListErrors((1, 3)))
    sim = run_interface(DropTailQueue(limit=10), [(k * 2e-3, packet(k)) for k in range(5)],
                        link=link)
    assert sorted(t.value.seq for t in sim.tokens("out")) == [0, 2, 4]
    assert sim.tokens("q.frames")[0].value == (5, 2)


def test_byte_error_model_rate():
    # PER = 1 - (1 - 1e-4)^998 = 0.0950; 3000 packets: the failed count lies within
    # 4 standard deviations of 3000 * PER.
    link = Transmitter(rate_bps=8e6, delay_s=0.0, errors=ByteErrors(1e-4))
    n = 3000
    sim = run_interface(DropTailQueue(limit=n), [(k * 2e-3, packet(k)) for k in range(n)],
                        link=link, seed=5)
    sent, failed = sim.tokens("q.frames")[0].value
    per = 1 - (1 - 1e-4) ** 998
    assert sent == n and len(sim.tokens("out")) == n - failed
    assert abs(failed - n * per) < 4 * math.sqrt(n * per * (1 - per))


RED = dict(min_th=5, max_th=15, max_p=0.02, q_weight=0.002, gentle=True, wait=True, ptc=1000,
           ecn=False, hard_drop=True, ect=False)


def test_red_average_and_idle_decay():
    # Busy: avg' = avg (1 - w) + w n = 4 * 0.998 + 0.002 * 10 = 4.012 (< min_th: accept).
    avg, _count, _old, verdict = red_decision(4.0, 3, 0, 10, -1.0, 0.0, **RED)
    assert (avg, verdict) == (pytest.approx(4.012), "accept")
    # Idle 10 ms at 1000 packets/s: m = 10, avg' = avg (1 - w)^(m + 1) + w * 0.
    avg, *_ = red_decision(8.0, 3, 1, 0, 0.010, 0.0, **RED)
    assert avg == pytest.approx(8.0 * 0.998 ** 11)


def test_red_idle_period_starts_when_the_line_is_free():
    # ns-2's RED: the link asks REDQueue::deque for a packet when it has finished the one
    # before, and deque marks the queue idle when it finds it empty; REDQueue::enque then
    # decays the average by (1 - w)^(m + 1), m = int(ptc * idle time). Here w = 0.5, ptc
    # = 1000 packets/s (8 Mbit/s, 1000-byte mean), 1 ms per packet on the line. Seq 0
    # (t = 0) leaves at once; 1 (0.1 ms) and 2 (0.2 ms, finding 1 waiting: avg 0.5)
    # wait; 2 leaves the queue at 2 ms and the line at 3 ms. Seq 3 comes at 3.9 ms: idle
    # 0.9 ms, m = 0, avg = 0.5 * 0.5 = 0.25 (counting from 2 ms, when 2 left the queue,
    # m would be 1 and avg 0.125).
    queue = RedQueue(limit=10, min_th=5, max_th=15, q_weight=0.5, mean_packet_size_bytes=1000,
                     link_rate_bps=8e6)
    sim = run_interface(queue, [(0.0, packet(0)), (1e-4, packet(1)), (2e-4, packet(2)),
                                (3.9e-3, packet(3))])
    (state,) = sim.tokens("q.red")
    assert state.value[0] == pytest.approx(0.25)
    # on a wireless station's queue the idle time runs from when the packet left it
    queue.idle_after_line = False
    (state,) = run_interface(queue, [(0.0, packet(0)), (1e-4, packet(1)), (2e-4, packet(2)),
                                     (3.9e-3, packet(3))]).tokens("q.red")
    assert state.value[0] == pytest.approx(0.125)


def test_red_early_drop_with_wait():
    # avg stays 10 (n = 10): p_b = 0.02 * (10 - 5) / 10 = 0.01. With wait, count 150
    # (149 + this arrival): count p_b = 1.5 -> p = 0.01 / (2 - 1.5) = 0.02.
    for u, expected in ((0.0199, "drop"), (0.0201, "accept")):
        *_, verdict = red_decision(10.0, 149, 1, 10, -1.0, u, **RED)
        assert verdict == expected
    # count p_b < 1: p = 0, no early drop for any u > 0.
    assert red_decision(10.0, 50, 1, 10, -1.0, 1e-9, **RED)[3] == "accept"
    # First time above min_th: count restarts at 1, no drop.
    assert red_decision(10.0, 149, 0, 10, -1.0, 0.0, **RED)[1:] == (1, 1, "accept")


def test_red_forced_and_ecn():
    # Gentle: forced above 2 max_th = 30; with ECN, an ECT packet is marked unless
    # hard_drop; below 2 max_th in gentle mode p = 0.02 + 0.98 (avg - 15) / 15.
    forced = {**RED, "ecn": True, "ect": True}
    assert red_decision(31.0, 5, 1, 31, -1.0, 0.5, **forced)[3] == "drop"
    assert red_decision(31.0, 5, 1, 31, -1.0, 0.5, **{**forced, "hard_drop": False})[3] == "mark"
    p = 0.02 + 0.98 * (20 - 15) / 15  # 0.3467; count 4: 1 <= 4 p < 2 -> p / (2 - 4 p)
    p_wait = p / (2 - 4 * p)  # 0.5655
    assert red_decision(20.0, 3, 1, 20, -1.0, p_wait - 1e-3, **forced)[3] == "mark"
    assert red_decision(20.0, 3, 1, 20, -1.0, p_wait + 1e-3, **forced)[3] == "accept"


def test_cut_through_only_when_empty_and_idle():
    # Seq 0 finds an empty queue and an idle line: it leaves at once by ``direct``; seq 1
    # (0.1 ms) finds the line busy: enqueued, sent at 1 ms. Seq 2 comes at 5 ms, after the
    # line and the queue emptied (2 ms): direct again.
    sim = run_interface(DropTailQueue(limit=5), [(0.0, packet(0)), (1e-4, packet(1)),
                                                 (5e-3, packet(2))])
    assert fired(sim, "q.direct") == 2 and fired(sim, "q.enqueue") == 1
    assert departures(sim) == [(0, pytest.approx(0.011)), (1, pytest.approx(0.012)),
                               (2, pytest.approx(0.016))]


def small(seq: int) -> Pkt:
    return packet(seq, size=40)


def test_small_packets_first():
    # Big b0 (seq 0) leaves at once (line busy until 1 ms); big 1..3 and small 10, 11 wait.
    # At 1 ms the small class goes first: 10 and 11 (42 bytes with the PPP header: 42 us
    # each), then 1, 2, 3 (1 ms each). Far end = departure end + 10 ms.
    arrivals = [(k * 1e-4, packet(k)) for k in range(4)] + [(4e-4, small(10)),
                                                            (5e-4, small(11))]
    sim = run_interface(SmallFirstQueue(limit=10, threshold_bytes=64), arrivals)
    assert departures(sim) == [(0, pytest.approx(0.011)), (10, pytest.approx(0.011042)),
                               (11, pytest.approx(0.011084)), (1, pytest.approx(0.012084)),
                               (2, pytest.approx(0.013084)), (3, pytest.approx(0.014084))]


@pytest.mark.parametrize(("buffer", "kept"), [("shared", [0, 1, 2, 3]),
                                              ("split", [0, 1, 2, 3, 10])])
def test_small_first_buffers(buffer, kept):
    # Limit 3: big 1..3 fill the large class (0 is on the line). Shared: the small 10 finds
    # 3 packets queued and is dropped; split: the small class has its own 3.
    arrivals = [(k * 1e-4, packet(k)) for k in range(4)] + [(4e-4, small(10))]
    sim = run_interface(SmallFirstQueue(limit=3, buffer=buffer), arrivals)
    assert sorted(seq for seq, _ in departures(sim)) == kept
    assert fired(sim, "q.drop") == (1 if buffer == "shared" else 0)


# Token bucket: 800 kbit/s = 100 bytes per ms, depth 3000 bytes, full at 0; 998-byte
# packets every 0.1 ms; line 1 ms per packet, 10 ms propagation.
BUCKET = dict(rate_bps=8e5, depth_bytes=3000)


def test_policer_conformance():
    # Tokens at each arrival (+10 bytes per 0.1 ms), minus 998 when it conforms:
    # 0: 3000 -> 2002; 1: 2012 -> 1014; 2: 1024 -> 26; 3: 36, 4: 46, 5: 56 (< 998: policed).
    # 6 at 10 ms: 56 + 9.5 ms * 100 = 1006 >= 998: conforms. Seq 0 and 6 cut through an
    # idle line; 1, 2 are queued behind 0.
    arrivals = [(k * 1e-4, packet(k)) for k in range(6)] + [(0.01, packet(6))]
    sim = run_interface(TokenBucketQueue(limit=10, mode="policer", **BUCKET), arrivals)
    assert departures(sim) == [(0, pytest.approx(0.011)), (1, pytest.approx(0.012)),
                               (2, pytest.approx(0.013)), (6, pytest.approx(0.021))]
    assert fired(sim, "q.police") == 3
    assert sim.tokens("q.bucket")[0].value == pytest.approx((1006 - 998, 0.01))


def test_policer_overflow_spends_tokens():
    # Limit 1: seq 0 goes to the line, 1 is queued, 2 conforms (tokens 1024 -> 26) but
    # finds the queue full: overflow (the tokens are spent, as the ns-3 lens's policer).
    arrivals = [(k * 1e-4, packet(k)) for k in range(3)]
    sim = run_interface(TokenBucketQueue(limit=1, mode="policer", **BUCKET), arrivals)
    assert sorted(seq for seq, _ in departures(sim)) == [0, 1]
    assert fired(sim, "q.overflow") == 1
    assert sim.tokens("q.bucket")[0].value[0] == pytest.approx(26.0)


def test_shaper_conformance():
    # All six are queued (limit 10). Leaving at max(line idle, bucket holds 998 bytes):
    # 0 at 0 (3000 -> 2002), 1 at 1 ms (2012 + 90 = 2102 -> 1104), 2 at 2 ms (1204 -> 206),
    # 3 when 206 + 100 t = 998: t = 7.92 ms -> 9.92 ms (-> 0), 4 at 9.92 + 9.98 = 19.90 ms,
    # 5 at 29.88 ms. Far end: + 1 ms serialisation + 10 ms.
    arrivals = [(k * 1e-4, packet(k)) for k in range(6)]
    sim = run_interface(TokenBucketQueue(limit=10, mode="shaper", **BUCKET), arrivals)
    expected = [0.011, 0.012, 0.013, 0.02092, 0.0309, 0.04088]
    assert departures(sim) == [(k, pytest.approx(t)) for k, t in enumerate(expected)]
    bucket = sim.tokens("q.bucket")[0]
    assert bucket.value[0] == pytest.approx(0.0, abs=1e-9)


def test_shaper_queue_limit():
    # Limit 2 packets: 0 leaves at once; 1, 2 wait; 3 finds 2 queued and is dropped.
    arrivals = [(k * 1e-4, packet(k)) for k in range(4)]
    sim = run_interface(TokenBucketQueue(limit=2, mode="shaper", **BUCKET), arrivals)
    assert sorted(seq for seq, _ in departures(sim)) == [0, 1, 2]
    assert fired(sim, "q.drop") == 1


def test_token_bucket_bad_parameters():
    with pytest.raises(InputError, match="mode must be 'policer' or 'shaper'"):
        TokenBucketQueue(mode="meter")
    with pytest.raises(InputError, match="buffer must be 'shared' or 'split'"):
        SmallFirstQueue(buffer="both")
