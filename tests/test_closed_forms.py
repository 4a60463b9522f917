"""Closed forms against the computed oracle tables of analytics.md 9.2 and analytic limits."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
import sympy as sp

from tcpn.errors import InputError
from tcpn.solvers.closed_forms import ecn, random_loss, token_bucket, vegas
from tcpn.solvers.closed_forms import loss_throughput as lt
from tcpn.solvers.closed_forms.formula import AssumptionError, AssumptionWarning

# analytics.md 9.2, RTT = 0.2 s, T0 = 1 s, b = 2:
# p, Mathis b=1, Mathis b=2, TD-only, full, approx, full W_m=12, approx W_m=12
TABLE_B2 = [
    (1e-4, 612.372, 433.013, 431.780, 431.298, 432.526, 59.626, 60.000),
    (1e-3, 193.649, 136.931, 135.733, 134.249, 135.407, 56.482, 60.000),
    (0.005, 86.603, 61.237, 60.094, 57.020, 57.974, 46.067, 57.974),
    (0.01, 61.237, 43.301, 42.191, 38.162, 38.910, 37.864, 38.910),
    (0.02, 43.301, 30.619, 29.547, 24.535, 24.936, 24.535, 24.936),
    (0.05, 27.386, 19.365, 18.345, 12.452, 12.047, 12.452, 12.047),
    (0.1, 19.365, 13.693, 12.701, 6.820, 5.510, 6.820, 5.510),
    (0.2, 13.693, 9.682, 8.685, 3.371, 1.788, 3.371, 1.788),
    (0.3, 11.180, 7.906, 6.877, 1.998, 0.775, 1.998, 0.775),
]
# RTT = 0.1 s, T0 = 0.4 s, b = 1, W_m = 64: p, Mathis, TD-only, full, approx, E[W]
TABLE_B1 = [
    (1e-4, 1224.745, 1222.327, 604.665, 640.000, 164.294),
    (1e-3, 387.298, 385.043, 381.635, 383.844, 52.624),
    (0.01, 122.474, 120.629, 110.960, 112.332, 17.279),
    (0.03, 70.711, 69.165, 55.238, 55.339, 10.339),
    (0.1, 38.730, 37.500, 21.130, 17.701, 6.000),
    (0.3, 22.361, 21.172, 6.015, 1.960, 3.687),
]


@pytest.fixture(autouse=True)
def _quiet_validity_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AssumptionWarning)
        yield


@pytest.mark.parametrize("row", TABLE_B2)
def test_pftk_and_mathis_table_b2(row):
    p, m1, m2, td, full, approx, full12, approx12 = row
    got = [lt.mathis_pps(0.2, p, 1), lt.mathis_pps(0.2, p, 2), lt.td_only_pps(0.2, p, 2),
           lt.pftk_full_pps(0.2, p, 1.0, 2), lt.pftk_approx_pps(0.2, p, 1.0, 2),
           lt.pftk_full_pps(0.2, p, 1.0, 2, 12), lt.pftk_approx_pps(0.2, p, 1.0, 2, 12)]
    assert got == pytest.approx([m1, m2, td, full, approx, full12, approx12], abs=6e-4)


@pytest.mark.parametrize("row", TABLE_B1)
def test_pftk_table_b1(row):
    p, mathis, td, full, approx, ew = row
    got = [lt.mathis_pps(0.1, p), lt.td_only_pps(0.1, p), lt.pftk_full_pps(0.1, p, 0.4, 1, 64),
           lt.pftk_approx_pps(0.1, p, 0.4, 1, 64), lt.pftk_expected_window(p)]
    assert got == pytest.approx([mathis, td, full, approx, ew], abs=6e-4)


def test_spot_values():
    assert [round(lt.pftk_expected_window(p, 2), 3) for p in (0.001, 0.01, 0.1)] == \
        [37.169, 12.175, 4.194]
    assert [round(lt.pftk_timeout_probability(w, 0.01), 4) for w in (5, 10, 20)] == \
        [0.6177, 0.3311, 0.1880]
    assert round(lt.tfrc_bytes_per_s(1000, 0.1, 0.01)) == 112332
    assert [round(lt.aimd_pps(0.1, 0.01, decrease_factor=b), 2) for b in (0.5, 0.7, 0.8)] == \
        [122.47, 168.33, 212.13]


def test_mathis_and_pftk_agree_at_low_loss():
    # As p -> 0 timeouts vanish: PFTK full -> TD-only -> Mathis sqrt(3/(2bp))/RTT.
    p = np.array([1e-6, 1e-7])
    mathis = lt.mathis_pps(0.1, p, 2)
    assert lt.pftk_full_pps(0.1, p, 1.0, 2) == pytest.approx(mathis, rel=2e-3)
    assert lt.td_only_pps(0.1, p, 2) == pytest.approx(mathis, rel=2e-3)


def test_aimd_half_is_mathis_symbolically():
    a, beta = lt.a_inc, lt.beta
    reduced = lt.aimd_pps.symbolic().subs({a: 1, beta: sp.Rational(1, 2)})
    assert sp.simplify(reduced - lt.mathis_pps.symbolic().subs(lt.b, 1)) == 0


def test_inverse_loss_rate_for_target_throughput():
    # Closed-form inverse of Mathis: p = 3/(2 b R^2 y^2); numeric inverse of PFTK full.
    (inverse,) = lt.mathis_pps.solve_symbolic("loss_rate")
    p = float(inverse.subs({lt.R: 0.1, lt.b: 1, sp.Symbol("y", positive=True): 122.474487}))
    assert p == pytest.approx(0.01, rel=1e-6)
    p_full = lt.pftk_full_pps.solve_for("loss_rate", 38.162, (1e-5, 0.5), rtt_s=0.2,
                                        rto_s=1.0, acks_per_packet=2, max_window_pkts=1e9)
    assert p_full == pytest.approx(0.01, rel=1e-4)


@pytest.mark.parametrize(("call", "assumption"), [
    (lambda: lt.mathis_pps(0.1, 1.0), "0 < loss_rate < 1"),
    (lambda: lt.pftk_full_pps(0.0, 0.01, 1.0), "rtt_s > 0"),
    (lambda: lt.westwood_pps(0.1, 0.1, 0.01), "min_rtt_s < rtt_s"),
    (lambda: ecn.study_threshold_pkts(5, 120, 1, 6), "K >= 0"),
    (lambda: ecn.ca_overshoot_threshold_pkts(100, 0), "flows > 0"),
    (lambda: vegas.persistent_congestion(0, 1, 1), "n_flows >= 1"),
])
def test_meaningless_parameters_name_the_assumption(call, assumption):
    with pytest.raises(AssumptionError, match=re.escape(assumption)):
        call()
    assert issubclass(AssumptionError, InputError)


def test_outside_validated_range_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lt.mathis_pps(0.1, 0.05)
        ecn.study_threshold_pkts(80, 120, 7, 6)  # TBA > TPS: measured on a stable queue
    messages = [str(w.message) for w in caught if issubclass(w.category, AssumptionWarning)]
    assert any("loss_rate <= 0.02" in m for m in messages)
    assert any("arrival_gap_s < service_time_s" in m for m in messages)


def test_study_threshold_is_the_fluid_headroom():
    # K = B - (RTT/TBA - RTT/TPS) = B - (lambda - mu) RTT, for any numbers.
    b, rtt, tba, tps = 80.0, 120.0, 5.0, 6.0
    k = ecn.study_threshold_pkts(b, rtt, tba, tps)
    assert k == pytest.approx(b - ecn.feedback_headroom_pkts(1 / tba, 1 / tps, rtt))
    # Self-consistent RTT = d + K TPS reproduces K when plugged back in.
    k_sc = ecn.self_consistent_threshold_pkts(b, 120.0, tba, tps)
    assert k_sc == pytest.approx(b - (1 / tba - 1 / tps) * (120.0 + k_sc * tps))


def test_dctcp_and_buffer_rules():
    bdp = 10e9 / 12000 * 100e-6
    assert ecn.dctcp_min_threshold_pkts(10e9 / 12000, 100e-6) == pytest.approx(bdp / 7)
    s = ecn.dctcp_sawtooth(83.3, 20, 2)
    assert (round(s.window_pkts, 2), round(s.alpha, 3), round(s.amplitude_pkts, 2),
            s.queue_max_pkts, round(s.queue_min_pkts, 2)) == (51.65, 0.197, 10.16, 22, 11.84)
    # Q_min over N is smallest at N = (BDP + K)/8 where it equals (7K - BDP)/8.
    n_star = (83.3 + 20) / 8
    q_min = 20 + n_star - 0.5 * math.sqrt(2 * n_star * (83.3 + 20))
    assert q_min == pytest.approx((7 * 20 - 83.3) / 8)
    assert round(ecn.red_max_weight_for_burst(5, 50), 4) == 0.0042
    assert ecn.aimd_no_underflow_threshold_pkts(1000, 0.1, 0.7) == pytest.approx(100 * 0.3 / 0.7)
    assert ecn.mm1b_blocking_probability(1.0, 9) == pytest.approx(0.1)


def test_vegas_equilibria():
    eq = vegas.single_link_equilibrium(1000, [2, 2, 2], [0.01, 0.1, 0.3])
    assert eq.queue_pkts == 6 and eq.rates_pps == pytest.approx((1000 / 3,) * 3)
    # analytics.md 3.3 table: queue in units of alpha, first/last rate ratio
    for n, queue, ratio in [(2, 2.62, 0.62), (5, 9.29, 0.26), (10, 23.6, 0.13)]:
        pc = vegas.persistent_congestion(n, alpha_pkts=1, capacity_pps=1)
        assert round(pc.queue_pkts, 2 if n < 10 else 1) == queue
        assert round(pc.first_to_last_rate_ratio, 2) == ratio


def test_token_bucket_cases():
    assert token_bucket.policer_pps(1000, 100, 0.1) == pytest.approx(856.07, abs=0.01)
    assert token_bucket.policer_pps(1000, token_bucket.policer_min_depth_pkts(1000, 0.1),
                                    0.1) == 1000
    # Shaper with Q = 0 is the policer; with b = 0 full rate needs Q >= r T.
    assert token_bucket.shaper_pps(1000, 100, 0, 0.1) == pytest.approx(
        token_bucket.policer_pps(1000, 100, 0.1))
    assert token_bucket.shaper_reaches_rate(1000, 0, 100, 0.1)
    assert not token_bucket.shaper_reaches_rate(1000, 0, 99, 0.1)
    # Marker: b never binding and A -> 0 gives Mathis with b = 1.
    assert token_bucket.marker_pps(1e-9, 1e6, 0.1, 0.01) == pytest.approx(
        lt.mathis_pps(0.1, 0.01), rel=1e-6)


def test_random_loss():
    assert round(random_loss.per_from_byte_error_rate(1e-5, 40), 4) == 0.0004
    assert random_loss.per_from_bit_error_rate(1e-5, 100) == pytest.approx(
        random_loss.per_from_byte_error_rate(1 - (1 - 1e-5) ** 8, 100))
    assert random_loss.random_loss_pps(0.01, 0.1, 1e6, model="pftk_full") == pytest.approx(
        lt.pftk_full_pps(0.1, 0.01, 1.0))
    with pytest.raises(InputError, match="unknown model"):
        random_loss.random_loss_pps(0.01, 0.1, 100, model="magic")  # type: ignore[arg-type]
