"""The 802.11 last hop: link-layer retries against their distribution, ACK-less frames, and
the station's energy against a hand count; the study scenarios run (short horizons)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from tcpn.lenses import evaluate, make_run
from tcpn.models.scenario import load_scenario, validate_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import Simulator

MSS = 1000
RATE = 2e6


def wireless(radio, errors=None, horizon_s=2.0, segments=None, variant="newreno"):
    link = {"a": "A", "b": "B", "rate_bps": RATE, "delay_s": 0.001, "l2_header_bytes": 78,
            "wireless": {"station": "B", **radio}}
    if errors:
        link["errors"] = errors
    flow = {"id": "f", "src": "A", "dst": "B", "variant": variant}
    if segments:
        flow["bytes"] = segments * MSS
    return validate_scenario({
        "name": "wifi", "horizon_s": horizon_s, "links": [link], "flows": [flow],
        "tcp": {"segment_size_bytes": MSS, "timestamps": False, "sack": False,
                "delack_count": 1, "initial_cwnd_segments": 2, "handshake": False,
                "limited_transmit": False}})


def counters(scenario):
    run = make_run(scenario)
    composed = compose(scenario, run.flows)
    sim = Simulator(composed.net, seed=run.lens_seed)
    sim.run(until=scenario.horizon_s)

    def token(place):
        (value,) = list(sim.marking[sim.compiled.place_index[place]])
        return value
    return {d: (token(f"{d}.frames"), token(f"{d}.airtime")) for d in ("A.B", "B.A")}


def test_energy_of_a_clean_transfer_by_hand():
    # 10 segments, no errors, every segment ACKed: 10 data frames of 1040 + 78 bytes to the
    # station, 10 ACK frames of 40 + 78 bytes from it, and a MAC ACK for each of the 20.
    # Station: tx = 420 uJ * (10 ACKs + 10 MAC ACKs) + 1.9 uJ/B * (10 * 118 + 10 * 14);
    # rx = 330 uJ * (10 + 10) + 0.42 uJ/B * (10 * 1118 + 10 * 14); idle = 0.8 W * (2 s -
    # airtime), airtime = 10 (1118 + 118) * 8 / 2e6 + 20 * (192 us PLCP + 314 us SIFS and
    # MAC ACK) (DIFS and backoff are not airtime).
    result = evaluate(wireless({}, segments=10), lens="net")
    report = result.provenance["lens"]["wireless"]["A-B"]
    tx = 420e-6 * 20 + 1.9e-6 * (1180 + 140)
    rx = 330e-6 * 20 + 0.42e-6 * (11180 + 140)
    busy = 10 * (1118 + 118) * 8 / RATE + 20 * (192e-6 + 314e-6)
    assert report["tx_j"] == pytest.approx(tx)
    assert report["rx_j"] == pytest.approx(rx)
    assert report["idle_s"] == pytest.approx(2.0 - busy)
    assert report["energy_j"] == pytest.approx(tx + rx + 0.8 * (2.0 - busy))
    assert report["delivered_bytes"] == 10 * MSS
    assert report["bytes_per_joule"] == pytest.approx(10 * MSS / (tx + rx + 0.8 * (2 - busy)))


def test_link_retries_follow_their_distribution():
    # PER 0.3 per attempt, 2 retries: a packet is lost with 0.3^3 = 0.027; attempts K:
    # P(1) = 0.7, P(2) = 0.21, P(3) = 0.09, E[K] = 1.39, Var K = 2.35 - 1.39^2 = 0.4179.
    found = counters(wireless({"retry_limit": 2}, {"unit": "packet", "rate": 0.3},
                              horizon_s=6.0))
    sent = failed = tries = 0
    for (s, f), (attempts, *_rest) in found.values():
        sent, failed, tries = sent + s, failed + f, tries + attempts
    assert sent > 800
    assert abs(failed / sent - 0.027) < 4 * math.sqrt(0.027 * 0.973 / sent)
    assert abs(tries / sent - 1.39) < 4 * math.sqrt(0.4179 / sent)


def test_ackless_link_loses_one_frame_in_per():
    # Link-layer retransmission off: one attempt per packet, lost with the byte model's
    # PER = 1 - (1 - 1e-4)^(size + 78), no MAC ACK, no ACK time: airtime is the frames
    # and their 192 us PLCP preambles.
    found = counters(wireless({"link_retransmissions": False}, {"unit": "byte", "rate": 1e-4},
                              horizon_s=6.0))
    (sent, failed), (attempts, on_air, mac_acks, busy) = found["A.B"]
    assert attempts == sent and mac_acks == 0
    assert busy == pytest.approx(on_air * 8 / RATE + attempts * 192e-6)
    per = 1 - (1 - 1e-4) ** (1040 + 78)
    assert abs(failed / sent - per) < 4 * math.sqrt(per * (1 - per) / sent)


STUDIES = sorted((Path(__file__).parent.parent / "scenarios" / "studies").glob("*.yaml"))
ONE_PER_FAMILY = ("s1_exp3_modvegas_both", "s3_ackless_tcp_l", "s4_wl_westwood_plus_per1e-2_reno")


def short_run(path: Path) -> None:
    """Run a study scenario for half a second after its first start; check the census."""
    scenario = load_scenario(path)
    first = min(f.start_s for f in scenario.concrete_flows())
    short = scenario.model_copy(update={"horizon_s": first + 0.5})
    result = evaluate(validate_scenario(short.model_dump()), lens="net")
    census = result.provenance["lens"]["census"]
    assert census["sent"] > 0
    assert census["sent"] == census["received"] + census["dropped"] + census["in_flight"]


@pytest.mark.parametrize("name", ONE_PER_FAMILY)
def test_study_scenarios_run(name):
    short_run(Path(__file__).parent.parent / "scenarios" / "studies" / f"{name}.yaml")


@pytest.mark.slow
@pytest.mark.parametrize("path", STUDIES, ids=[p.stem for p in STUDIES])
def test_every_study_scenario_runs(path):
    short_run(path)


def _saturated(directions: int, frames: int, seed: int = 3):
    """``frames`` 1500-byte packets queued at time 0 on each of ``directions`` radio
    interfaces (802.11b, 11 Mbit/s, 78 bytes of framing, no errors) sharing one medium;
    the delivery times per direction."""
    from tcpn.models.components.link import Transmitter
    from tcpn.models.components.packets import PACKET, Pkt
    from tcpn.models.components.queues import DropTailQueue
    from tcpn.models.components.wireless import Radio, wireless_interface_net
    from tcpn.petrinets import UNIT, PetriNet, Place, Token

    net = PetriNet("air")
    net.add_place(Place("medium", UNIT.timed(), initial=[()]))
    for d in range(directions):
        packets = [Pkt(flow=0, dst=1, seq=k, ack=0, size=1500, ts=0.0, echo=0.0, ecn=0,
                       ece=False, cwr=False, retx=False, sack=()) for k in range(frames)]
        net.add_place(Place(f"in{d}", PACKET, initial=[Token(p, 0.0) for p in packets]))
        net.add_place(Place(f"out{d}", PACKET))
        net.add_module(wireless_interface_net(DropTailQueue(limit=frames + 1),
                                              Transmitter(11e6, 0.0, 78), Radio(), ["True"]),
                       f"d{d}", {"arrivals": f"in{d}", "out0": f"out{d}", "medium": "medium"})
    sim = Simulator(net, seed=seed)
    sim.run()
    return [sorted(t.time for t in sim.tokens(f"out{d}")) for d in range(directions)]


def test_a_queued_frame_takes_the_standards_mean_exchange():
    # 802.11b by hand: a frame that waits behind another takes DIFS 50 us + a backoff of
    # 0..31 slots of 20 us (mean 15.5: 310 us) + the 192 us PLCP preamble + 1578 bytes at
    # 11 Mbit/s (1147.6 us) + SIFS and MAC ACK 314 us: 2013.6 us on average, 1703.6 us at
    # least, 2323.6 at most; the backoff's standard deviation is 20 us x sqrt((32^2 -
    # 1) / 12) = 184.7 us per frame.
    (times,) = _saturated(1, 400)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 400
    least = 50e-6 + 192e-6 + 1578 * 8 / 11e6 + 314e-6
    assert min(gaps) >= least - 1e-9 and max(gaps) <= least + 31 * 20e-6 + 1e-9
    mean = sum(gaps) / len(gaps)
    assert abs(mean - (least + 15.5 * 20e-6)) < 4 * 184.7e-6 / math.sqrt(len(gaps))
    assert times[0] == pytest.approx(192e-6 + 1578 * 8 / 11e6)  # an idle medium: at once


def test_the_two_directions_share_the_medium():
    # Half duplex: two saturated directions take turns, so both finish after about twice
    # one direction's time: 400 exchanges of 2013.6 us on average (within 4 sigma and
    # one exchange, the last one's delivery coming before its ACK and backoff).
    both = _saturated(2, 200)
    end = max(max(t) for t in both)
    assert abs(end - 400 * 2013.6e-6) < 4 * 184.7e-6 * math.sqrt(400) + 2013.6e-6
    assert all(len(t) == 200 for t in both)
    assert _saturated(2, 200) == both  # the same seed, the same backoffs
