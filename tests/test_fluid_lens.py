"""The fluid lens through the front door: scenario mapping, common metrics, refusals."""

from __future__ import annotations

import pytest

from tcpn.errors import InputError
from tcpn.lenses import evaluate
from tcpn.lenses.fluid import FluidLens, scenario_model
from tcpn.models.scenario import Measure, dumbbell, validate_scenario
from tcpn.solvers.closed_forms import ecn, token_bucket


@pytest.fixture(scope="module")
def dumbbell_result():
    return evaluate(dumbbell(pairs=2, horizon_s=30.0), lens="fluid")


def test_buffer_of_one_bdp_keeps_the_bottleneck_busy(dumbbell_result):
    scenario = dumbbell_result.scenario
    model = scenario_model(scenario, scenario.concrete_flows())
    rtt = model.classes[0].prop_rtt_s
    bdp = ecn.bdp_buffer_pkts(model.bottleneck.capacity_pps, rtt)
    assert model.bottleneck.buffer_pkts >= bdp  # 100 packets >= C RTT: Reno never underflows
    payload_bps = model.bottleneck.capacity_pps * scenario.tcp.segment_size_bytes * 8
    # after the first second (slow start) the link carries payload at full rate
    late = evaluate(scenario.model_copy(update={"measure": Measure(warmup_s=5.0)}),
                    lens="fluid")
    assert late.summary["aggregate"]["goodput_bps"] == pytest.approx(payload_bps, rel=5e-3)


def test_trace_metrics_equal_the_models_own_means(dumbbell_result):
    fluid = dumbbell_result.provenance["lens"]["fluid_summary"]
    flows = dumbbell_result.summary["flows"]
    mss_bits = dumbbell_result.scenario.tcp.segment_size_bytes * 8
    duration_s = dumbbell_result.scenario.horizon_s
    for i, flow in enumerate(("f0", "f1")):
        # The model counts data when sent, the trace when it reaches the receiver: they
        # differ by what is in flight at the window's edges (here about one window).
        in_flight_pkts = fluid[f"{flow}_goodput_pps"] * fluid[f"{flow}_rtt_mean_s"]
        assert flows[flow]["goodput_bps"] == pytest.approx(
            fluid[f"{flow}_goodput_pps"] * mss_bits,
            abs=2 * in_flight_pkts * mss_bits / duration_s), i
        assert flows[flow]["goodput_bps"] < fluid[f"{flow}_goodput_pps"] * mss_bits, i
        assert flows[flow]["loss_ratio"] == pytest.approx(fluid[f"{flow}_loss_ratio"], rel=1e-2)
    queue = dumbbell_result.summary["queues"]["R1->R2"]
    assert queue["mean_packets"] == pytest.approx(fluid["queue_mean_pkts"], rel=1e-2)
    assert queue["max_packets"] <= 100
    assert dumbbell_result.lens == "fluid"
    assert dumbbell_result.provenance["lens"]["convergence"]["tolerance"] == 0.005


def test_goodput_of_a_short_window_stays_below_the_bottleneck():
    # 2 s on 1 Mbit/s: slow start overfills the queue; deliveries leave it at line rate.
    for pairs in (1, 2):
        result = evaluate(dumbbell(pairs=pairs, horizon_s=2.0, bottleneck_rate_bps=1e6),
                          lens="fluid")
        goodput = result.summary["aggregate"]["goodput_bps"]
        assert 0.5e6 < goodput < 1e6, pairs


def test_red_with_ecn_marks_instead_of_dropping():
    scenario = dumbbell(pairs=4, horizon_s=20.0, tcp={"ecn": True},
                        queue={"kind": "red", "limit": 100, "min_th": 20, "max_th": 60,
                               "max_p": 0.1, "ecn": True})
    # after slow start, whose overshoot may fill the buffer before the marks act
    scenario = scenario.model_copy(update={"measure": Measure(warmup_s=5.0)})
    result = evaluate(scenario, lens="fluid")
    queue = result.summary["queues"]["R1->R2"]
    assert queue["marks"] > 0 and queue["drops"] == 0


def test_policer_scenario_matches_the_closed_form():
    # S5-like: one flow through a policer (rate 500 kbit/s) on a fast path.
    size = 592
    depth_bytes = 16_000
    data = {
        "links": [
            {"a": "S", "b": "R", "rate_bps": 100e6, "delay_s": 0.01,
             "queue": {"kind": "token_bucket", "rate_bps": 5e6, "depth_bytes": depth_bytes,
                       "mode": "policer"}},
            {"a": "R", "b": "D", "rate_bps": 100e6, "delay_s": 0.04}],
        "tcp": {"segment_size_bytes": size - 52, "delack_count": 1,
                "rcv_buf_bytes": 1 << 22, "snd_buf_bytes": 1 << 22},
        "flows": [{"id": "f", "src": "S", "dst": "D", "variant": "newreno"}],
        "horizon_s": 200.0, "measure": {"warmup_s": 50.0}}
    scenario = validate_scenario(data)
    result = evaluate(scenario, lens="fluid", reno_model="sawtooth")
    model = scenario_model(scenario, scenario.concrete_flows(), reno_model="sawtooth")
    bucket = model.classes[0].limiter
    assert bucket is not None
    rtt = model.classes[0].prop_rtt_s
    expected = token_bucket.policer_pps(bucket.rate_pps, bucket.depth_pkts, rtt)
    assert expected < bucket.rate_pps  # 16 kB is too small: the flow cannot reach 5 Mbit/s
    got = result.summary["flows"]["f"]["goodput_bps"] / ((size - 52) * 8)
    # fluid reacts one RTT late and after one whole dropped packet (test_fluid.py): 2/W_r
    assert got == pytest.approx(expected, rel=2 / (bucket.rate_pps * rtt))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"variant": "tahoe"}, "flow f0: variant tahoe has no fluid model"),
    ({"reverse_pairs": 1}, "different bottlenecks"),
    ({"queue": {"kind": "sgpq"}}, "sgpq"),
])
def test_unsupported_features_are_named(kwargs, message):
    scenario = dumbbell(pairs=2, horizon_s=5.0, **kwargs)
    with pytest.raises(InputError, match=message):
        evaluate(scenario, lens="fluid")


def test_sized_transfers_are_refused():
    scenario = validate_scenario({
        "links": [{"a": "A", "b": "B", "rate_bps": 1e6, "delay_s": 0.01}],
        "flows": [{"src": "A", "dst": "B", "variant": "reno", "bytes": 100_000}],
        "horizon_s": 5.0})
    with pytest.raises(InputError, match="bytes: sized transfers"):
        FluidLens().check(scenario)
    with pytest.raises(InputError, match="reno_model"):
        FluidLens(reno_model="exact")  # type: ignore[arg-type]


def _lossy_vegas(params):
    """One Vegas flow over a lossy 2 Mbit/s hop (1 % of packets lost), Reno's recovery."""
    return validate_scenario({
        "links": [{"a": "S", "b": "D", "rate_bps": 2e6, "delay_s": 0.02,
                   "ab": {"errors": {"kind": "rate", "rate": 0.01, "unit": "packet"}}}],
        "tcp": {"sack": False},
        "flows": [{"id": "f", "src": "S", "dst": "D", "variant": "vegas",
                   "params": {"recovery": "reno", "alpha": 1, "beta": 3, **params}}],
        "horizon_s": 60.0, "measure": {"warmup_s": 10.0}})


def test_ns2_vegas_loss_cut_leaves_three_quarters_of_the_window():
    """``params.loss_cut: ns2`` in the fluid model: a loss leaves three quarters of the
    window (ns-2's ``win - (win >> 2)``) where Reno's leaves half, so on a lossy hop the
    flow gets more; the model's class says so."""
    halve, ns2 = (_lossy_vegas({"loss_cut": cut}) for cut in ("halve", "ns2"))
    assert [scenario_model(s, s.concrete_flows()).classes[0].decrease_factor
            for s in (halve, ns2)] == [0.5, 0.75]
    rates = [evaluate(s, lens="fluid").summary["flows"]["f"]["goodput_bps"]
             for s in (halve, ns2)]
    assert rates[1] > rates[0] * 1.05, rates


def test_ns2_vegas_fine_timer_is_refused_naming_the_field():
    with pytest.raises(InputError, match=r"params\.fine_timer: .*no retransmission timer"):
        evaluate(_lossy_vegas({"loss_cut": "ns2", "fine_timer": True}), lens="fluid")
