"""Queue and link component nets with scripted arrivals, against hand-computed outcomes."""

from __future__ import annotations

import math

import pytest

from tcpn.models.components.link import ByteErrors, ListErrors, Transmitter, interface_net
from tcpn.models.components.packets import ECT, PACKET, Pkt
from tcpn.models.components.queues import DropTailQueue, ThresholdEcnQueue, red_decision
from tcpn.petrinets import PetriNet, Place, Simulator, Token

# 998-byte packets + 2-byte PPP header = 8000 bits: 1 ms at 8 Mbit/s; 10 ms propagation.
LINK = Transmitter(rate_bps=8e6, delay_s=0.01)


def packet(seq: int, ecn: int = 0, size: int = 998) -> Pkt:
    return Pkt(flow=0, dst=1, seq=seq, ack=0, size=size, ts=0.0, echo=0.0, ecn=ecn, ece=False,
               cwr=False, retx=False, sack=())


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
