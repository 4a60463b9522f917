"""The 802.11 last hop: link-layer retries against their distribution, ACK-less frames, and
the station's energy against a hand count; the study scenarios run (short horizons)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from tcpn.lenses import evaluate, make_run
from tcpn.models.components.wireless import Radio
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
    # airtime), airtime = 10 (1076 + 76) * 8 / 2e6 (on air: IP + 36 bytes of MAC framing)
    # + 20 * (192 us PLCP + 314 us SIFS and MAC ACK) (DIFS and backoff are not airtime).
    result = evaluate(wireless({}, segments=10), lens="net")
    report = result.provenance["lens"]["wireless"]["A-B"]
    tx = 420e-6 * 20 + 1.9e-6 * (1180 + 140)
    rx = 330e-6 * 20 + 0.42e-6 * (11180 + 140)
    busy = 10 * (1076 + 76) * 8 / RATE + 20 * (192e-6 + 314e-6)
    assert report["tx_j"] == pytest.approx(tx)
    assert report["rx_j"] == pytest.approx(rx)
    assert report["idle_s"] == pytest.approx(2.0 - busy)
    assert report["energy_j"] == pytest.approx(tx + rx + 0.8 * (2.0 - busy))
    assert report["delivered_bytes"] == 10 * MSS
    assert report["bytes_per_joule"] == pytest.approx(10 * MSS / (tx + rx + 0.8 * (2 - busy)))


def test_without_medium_access_an_attempt_is_its_frame_and_the_mac_ack():
    # medium_access: none, the same clean transfer: no preamble, no DIFS, no backoff; each
    # of the 20 frames is its IP bytes + 36 at 2 Mbit/s + 314 us, all counted busy.
    result = evaluate(wireless({"medium_access": "none"}, segments=10), lens="net")
    report = result.provenance["lens"]["wireless"]["A-B"]
    busy = 10 * (1076 + 76) * 8 / RATE + 20 * 314e-6
    assert report["idle_s"] == pytest.approx(2.0 - busy)
    assert report["delivered_bytes"] == 10 * MSS


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
    # (their IP bytes + 36 on air, where the error model counts 78) and their 192 us PLCP
    # preambles.
    found = counters(wireless({"link_retransmissions": False}, {"unit": "byte", "rate": 1e-4},
                              horizon_s=6.0))
    (sent, failed), (attempts, on_air, mac_acks, busy) = found["A.B"]
    assert attempts == sent and mac_acks == 0
    assert busy == pytest.approx((on_air - attempts * (78 - 36)) * 8 / RATE
                                 + attempts * 192e-6)
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


def _saturated(directions: int, frames: int, seed: int = 3, sizes=(1542, 1542),
               radio=None):
    """``frames`` packets of ``sizes[d]`` bytes queued at time 0 on each of ``directions``
    radio interfaces (802.11b, 11 Mbit/s, no errors) sharing one medium: the delivery times
    per direction and each direction's ``airtime`` counters. On air a packet carries 36
    bytes of MAC framing (1542 + 36 = 1578 bytes at the data rate); the frame the error
    and energy models count has 78 (``l2_header_bytes``)."""
    from tcpn.models.components.link import Transmitter
    from tcpn.models.components.packets import PACKET, Pkt
    from tcpn.models.components.queues import DropTailQueue
    from tcpn.models.components.wireless import Radio, medium_place, wireless_interface_net
    from tcpn.petrinets import PetriNet, Place, Token

    radio = radio or Radio()
    net = PetriNet("air")
    net.add_place(medium_place(radio))
    for d in range(directions):
        packets = [Pkt(flow=0, dst=1, seq=k, ack=0, size=sizes[d], ts=0.0, echo=0.0, ecn=0,
                       ece=False, cwr=False, retx=False, sack=()) for k in range(frames)]
        net.add_place(Place(f"in{d}", PACKET, initial=[Token(p, 0.0) for p in packets]))
        net.add_place(Place(f"out{d}", PACKET))
        net.add_module(wireless_interface_net(DropTailQueue(limit=frames + 1),
                                              Transmitter(11e6, 0.0, 78), radio, ["True"],
                                              station=d),
                       f"d{d}", {"arrivals": f"in{d}", "out0": f"out{d}", "medium": "medium"})
    sim = Simulator(net, seed=seed)
    sim.run()
    times = [sorted(t.time for t in sim.tokens(f"out{d}")) for d in range(directions)]
    return times, [next(iter(sim.tokens(f"d{d}.airtime"))).value for d in range(directions)]


def test_a_queued_frame_takes_the_standards_mean_exchange():
    # 802.11b by hand: a frame that waits behind another takes DIFS 50 us + a backoff of
    # 0..31 slots of 20 us (mean 15.5: 310 us) + the 192 us PLCP preamble + 1578 bytes at
    # 11 Mbit/s (1147.6 us) + SIFS and MAC ACK 314 us: 2013.6 us on average, 1703.6 us at
    # least, 2323.6 at most; the backoff's standard deviation is 20 us x sqrt((32^2 -
    # 1) / 12) = 184.7 us per frame.
    (times,), _ = _saturated(1, 400)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) == 400
    least = 50e-6 + 192e-6 + 1578 * 8 / 11e6 + 314e-6
    assert min(gaps) >= least - 1e-9 and max(gaps) <= least + 31 * 20e-6 + 1e-9
    mean = sum(gaps) / len(gaps)
    assert abs(mean - (least + 15.5 * 20e-6)) < 4 * 184.7e-6 / math.sqrt(len(gaps))
    assert times[0] == pytest.approx(192e-6 + 1578 * 8 / 11e6)  # an idle medium: at once


def test_two_stations_whose_backoffs_end_together_collide_then_take_turns():
    # CW 0..0: every backoff is 0 slots, so two stations with a frame each at time 0 both
    # go at once and collide (802.11-2016 §10.3.4.3). A: 1542 + 36 bytes, 192 + 1147.64 =
    # 1339.64 us on air; B: 82 + 36 bytes, 192 + 85.82 = 277.82 us. No MAC ACK comes; A's
    # ACK timeout (222 us) ends at 1561.64 us, B's at 499.82 us, but A's frame is on the
    # air until 1339.64, so B counts from DIFS after it, 1389.64 us, goes alone, is
    # through at 1389.64 + 277.82 = 1667.45 us, MAC ACK until 1981.45; A's counter (0)
    # runs again DIFS after that ACK: A goes at 2031.45, through at 2031.45 + 1339.64 =
    # 3371.09 us. Two attempts each; without MAC ACKs both frames are simply lost.
    radio = Radio(cw_min=0, cw_max=0)
    (a, b), (air_a, air_b) = _saturated(2, 1, sizes=(1542, 82), radio=radio)
    assert b == [pytest.approx(1667.45e-6, abs=0.01e-6)]
    assert a == [pytest.approx(3371.09e-6, abs=0.01e-6)]
    assert air_a[:3] == (2, 2 * (1542 + 78), 1) and air_b[:3] == (2, 2 * (82 + 78), 1)
    assert air_a[3] == pytest.approx(2 * 1339.64e-6 + 222e-6 + 314e-6, abs=0.01e-6)
    (a, b), (air_a, air_b) = _saturated(2, 1, sizes=(1542, 82), radio=Radio(
        cw_min=0, cw_max=0, link_retransmissions=False))
    assert a == b == [] and air_a[0] == air_b[0] == 1


#: Bianchi's fixed point for two saturated 802.11b stations (W = 32, m = 5 doublings, 1578
#: bytes at 11 Mbit/s): an attempt collides with p = 0.0570; one success per 1916.2 us
#: (slot 20 us; a success 1339.6 + 314 + DIFS 50 us; a collision 1339.6 + the ACK
#: timeout 222 us, after which the counters run) (G. Bianchi, "Performance analysis of the
#: IEEE 802.11 distributed coordination function", IEEE JSAC 18(3), 2000, eqs. 7, 9, 13)
BIANCHI_P, BIANCHI_SUCCESS_S = 0.0570, 1916.2e-6


def test_two_saturated_stations_contend_as_bianchi_predicts():
    # Two saturated directions count their backoffs down together: 400 frames take about
    # 400 x 1916.2 us, less than taking turns (400 x 2013.6 us, 5 % more), and about 5.7 %
    # of the attempts collide. Bianchi's model is a mean-field approximation (about 1 %
    # off for two stations), and three runs of 400 frames vary by about 1.5 %: within 3 %.
    ends, collided, attempts = [], 0, 0
    for seed in (1, 2, 3):
        both, airtime = _saturated(2, 200, seed)
        assert all(len(t) == 200 for t in both)
        ends.append(max(max(t) for t in both))
        tries = sum(a[0] for a in airtime)
        attempts, collided = attempts + tries, collided + tries - 400
    assert abs(sum(ends) / 3 / (400 * BIANCHI_SUCCESS_S) - 1) < 0.03
    # collisions come in pairs: the variance of the collided count is about 2 p attempts
    assert abs(collided / attempts - BIANCHI_P) < 4 * math.sqrt(2 * BIANCHI_P / attempts)
    assert _saturated(2, 200, 1)[0] == _saturated(2, 200, 1)[0]  # same seed, same run
