"""The BBR v1 fluid model (tcpn.solvers.fluid.bbr) and the fluid lens running BBR flows.

The properties are the ones the model's sources derive (Scherrer et al., IMC 2022; the
BBR draft): one flow paces at the bottleneck rate and queues only while probing; several
flows overestimate their shares, their inflight caps (2 BDP in all) bind, and about one
BDP stands in a deep buffer; in a buffer smaller than that excess they lose packets
persistently, BBR v1 not reacting to loss; PROBE_RTT cuts the window to 4 packets for
200 ms about every 10 s.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from tcpn.errors import InputError
from tcpn.lenses import evaluate
from tcpn.lenses.fluid import FluidLens, fluid_problems
from tcpn.models.scenario import load_scenario, validate_scenario
from tcpn.solvers.fluid.bbr import BbrSettings, simulate_bbr
from tcpn.solvers.fluid.bottleneck import Bottleneck, FlowClass, simulate_bottleneck

REFERENCE = Path(__file__).resolve().parent.parent / "scenarios" / "reference" / "bbr_2flows.yaml"
CAPACITY_PPS = 1000.0
RTT_S = 0.05
BDP_PKTS = CAPACITY_PPS * RTT_S  # 50 packets


def _flows(n: int, phases: tuple[tuple[int, ...], ...] | None = None,
           starts: tuple[float, ...] | None = None) -> list[FlowClass]:
    """``n`` BBR flows of one RTT; by default they start 0.3 s apart in different phases
    (as ns-3's draws would put them)."""
    phases = phases or tuple(((3 + 2 * j) % 8 or 2, 4 + j % 3, 5) for j in range(n))
    starts = starts or tuple(0.3 * j for j in range(n))
    return [FlowClass(prop_rtt_s=RTT_S, variant="bbr", initial_cwnd_pkts=10, start_s=s,
                      name=f"f{j}", bbr=BbrSettings(phases=p))
            for j, (p, s) in enumerate(zip(phases, starts, strict=True))]


def _run(classes: list[FlowClass], buffer_pkts: float, **options):
    return simulate_bbr(classes, Bottleneck(capacity_pps=CAPACITY_PPS, buffer_pkts=buffer_pkts),
                        horizon_s=30.0, warmup_s=10.0, **options)


def test_one_flow_paces_at_the_link_rate_and_queues_only_while_probing():
    """Alone, the flow's delivery rate is the link's: it paces at C, the 1.25 phase (one
    min RTT) queues at most 0.25 BDP, the 0.75 phase drains it; the link stays full but
    for PROBE_RTT (200 ms at 4 packets, every 10 s)."""
    run = _run(_flows(1), 4 * BDP_PKTS)
    summary = run.summary
    assert summary["utilisation"] > 0.97
    assert summary["queue_max_pkts"] <= 0.25 * BDP_PKTS + 1.0
    assert summary["queue_mean_pkts"] < 0.1 * BDP_PKTS
    assert summary["f0_loss_ratio"] == 0.0


@pytest.mark.parametrize("flows", [2, 4])
def test_flows_through_a_deep_buffer_keep_about_one_bdp_queued(flows):
    """Each flow's max filter holds the share it had while probing, so their estimates
    sum above C; the inflight caps, 2 x estimate x min RTT, then bind and the queue holds
    what they cap beyond the pipe: about one BDP (it would be two with a window gain of
    3, none if the windows did not bind)."""
    run = _run(_flows(flows), 8 * BDP_PKTS)
    summary = run.summary
    assert summary["utilisation"] > 0.97
    assert 0.8 * BDP_PKTS < summary["queue_mean_pkts"] < 1.25 * BDP_PKTS
    assert all(summary[f"f{j}_loss_ratio"] == 0.0 for j in range(flows))


def test_identical_flows_share_equally_and_a_class_of_them_is_the_same():
    """Three flows that start together in the same phases get C/3 each, the same as one
    class of three synchronised flows."""
    same = ((3, 5, 4),) * 3
    apart = _run(_flows(3, same, (0.0, 0.0, 0.0)), 8 * BDP_PKTS).summary
    goodputs = [apart[f"f{j}_goodput_pps"] for j in range(3)]
    assert max(goodputs) - min(goodputs) < 1e-9 * CAPACITY_PPS
    assert sum(goodputs) == pytest.approx(apart["goodput_total_pps"])
    assert sum(goodputs) > 0.97 * CAPACITY_PPS
    one_class = dataclasses.replace(_flows(1, same[:1], (0.0,))[0], flows=3)
    together = _run([one_class], 8 * BDP_PKTS).summary
    assert together["f0_goodput_pps"] == pytest.approx(goodputs[0], rel=1e-9)
    assert together["queue_mean_pkts"] == pytest.approx(apart["queue_mean_pkts"], rel=1e-9)


def test_a_buffer_below_the_excess_loses_packets_persistently():
    """Through 0.2 BDP of buffer the two flows' inflight caps exceed pipe and buffer: the
    queue overflows in every cycle after STARTUP, and BBR v1 does not slow down for it
    (the link stays full); the same flows through a deep buffer lose nothing."""
    shallow = _run(_flows(2), 0.2 * BDP_PKTS).summary
    assert shallow["f0_loss_ratio"] > 0.005 and shallow["f1_loss_ratio"] > 0.005
    assert shallow["utilisation"] > 0.95
    deep = _run(_flows(2), 8 * BDP_PKTS).summary
    assert deep["f0_loss_ratio"] == deep["f1_loss_ratio"] == 0.0


def test_probe_rtt_holds_four_packets_for_200_ms_about_every_10_s():
    run = _run(_flows(2), 8 * BDP_PKTS)
    t = run.t
    low = run.cwnd_pkts[:, 0] <= 4.0 + 1e-9
    edges = np.flatnonzero(np.diff(low.astype(int)))
    starts, ends = t[edges[::2] + 1], t[edges[1::2] + 1]
    assert len(starts) == 2  # min RTT taken in STARTUP, expired at ~10 and ~20 s
    assert np.all(np.diff(starts) > 10.0)
    assert np.all((ends - starts[:len(ends)] >= 0.2) & (ends - starts[:len(ends)] < 0.4))


def test_ns3_quanta_add_their_packets_to_the_standing_queue():
    """ns-3's inflight targets add 3 packets per flow (5 in the 1.25 phase): with the caps
    binding, the queue grows by at least that much and the link stays full. (Measured
    +15.6 packets, not 6: the larger targets also end the phases later and let the
    probing flow's estimate grow further.)"""
    plain = _run(_flows(2), 8 * BDP_PKTS).summary
    quanta = [dataclasses.replace(c, bbr=dataclasses.replace(
        c.bbr, quanta_pkts=3.0, probe_quanta_pkts=2.0)) for c in _flows(2)]
    padded = _run(quanta, 8 * BDP_PKTS).summary
    assert padded["queue_mean_pkts"] - plain["queue_mean_pkts"] > 2 * 3.0
    assert padded["utilisation"] > 0.97


def test_the_solvers_refuse_each_other_s_classes():
    with pytest.raises(InputError, match="variant bbr is integrated by"):
        simulate_bottleneck(_flows(1), Bottleneck(capacity_pps=CAPACITY_PPS), 1.0)
    with pytest.raises(InputError, match="runs BBR classes only"):
        simulate_bbr([FlowClass(prop_rtt_s=RTT_S)], Bottleneck(capacity_pps=CAPACITY_PPS), 1.0)
    with pytest.raises(InputError, match="drop-tail queue only"):
        simulate_bbr(_flows(1), Bottleneck(capacity_pps=CAPACITY_PPS, aqm="red"), 1.0)
    with pytest.raises(InputError, match=r"phases in 0\.\.7"):
        simulate_bbr(_flows(1, ((9,),)), Bottleneck(capacity_pps=CAPACITY_PPS), 1.0)


# --------------------------------------------------------------------------- the lens


def _reference(**changes) -> dict:
    data = load_scenario(REFERENCE).model_dump(mode="json", exclude_none=True)
    data.update(changes)
    return data


def test_the_lens_runs_the_reference_scenario_through_the_common_metrics():
    result = evaluate(REFERENCE, lens="fluid")
    summary = result.summary
    assert result.provenance["lens"]["engine"] == "tcpn.solvers.fluid.bbr"
    assert summary["aggregate"]["goodput_bps"] > 9.0e6
    assert set(summary["flows"]) == {"f0", "f1"}
    assert all(f["goodput_bps"] > 3.0e6 for f in summary["flows"].values())
    # BDP 37.9 packets (45.5 ms x 832 packets/s): about one stands in the 100-packet buffer
    assert 30.0 < summary["queues"]["R1->R2"]["mean_packets"] < 60.0
    assert summary["aggregate"]["loss_ratio"] < 1e-3
    classes = result.provenance["lens"]["classes"]
    assert [c["bbr"]["quanta_pkts"] for c in classes] == [3.0, 3.0]  # ns-3's, the default


def test_the_lens_draws_each_flow_s_phases_from_the_run_seed():
    scenario = load_scenario(REFERENCE)
    flows = scenario.concrete_flows()
    lens = FluidLens()
    one = lens.model(scenario, flows, np.random.default_rng(1))
    again = lens.model(scenario, flows, np.random.default_rng(1))
    other = lens.model(scenario, flows, np.random.default_rng(2))
    assert [c.bbr for c in one.classes] == [c.bbr for c in again.classes]
    assert [c.bbr for c in one.classes] != [c.bbr for c in other.classes]
    assert len(one.classes) == 2 and all(c.flows == 1 for c in one.classes)
    # one phase per PROBE_BW episode: the first, one per 10 s of the 30 s, and one more
    assert all(len(c.bbr.phases) == 5 and 1 not in c.bbr.phases for c in one.classes)


def test_the_lens_refuses_what_the_bbr_model_cannot_run():
    mixed = _reference()
    mixed["flows"][1].update(variant="newreno", params=None)
    problems = " ".join(fluid_problems(scenario := validate_scenario(mixed),
                                       scenario.concrete_flows()))
    assert "runs BBR flows only" in problems and "(f0)" in problems
    red = _reference()
    red["links"][0]["ab"]["queue"] = {"kind": "red", "limit": 100, "min_th": 10,
                                      "max_th": 30, "max_p": 0.1}
    with pytest.raises(InputError, match=r"queue R1->R2: red: .* drop-tail bottleneck only"):
        FluidLens().check(validate_scenario(red))
    with pytest.raises(InputError, match="bbr_quanta must be 'paper' or 'ns3'"):
        FluidLens(bbr_quanta="linux")
