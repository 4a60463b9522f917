"""Fluid models against their closed-form fixed points and analytic limits; solver checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcpn.errors import InputError
from tcpn.solvers.closed_forms import loss_throughput as lt
from tcpn.solvers.closed_forms import token_bucket as tb
from tcpn.solvers.fluid import dde
from tcpn.solvers.fluid.bottleneck import (
    Bottleneck,
    FlowClass,
    TokenBucket,
    build_system,
    simulate_bottleneck,
)
from tcpn.solvers.stability import operating_point

UNLIMITED = Bottleneck(capacity_pps=1e6)  # a link that never queues


def test_mgt_red_equilibrium_is_the_hmtg_fixed_point():
    op = operating_point(60, 3750, 0.2, 50, 550, 0.1, acks_per_packet=1)
    run = simulate_bottleneck(
        [FlowClass(flows=60, prop_rtt_s=0.2, acks_per_packet=1, slow_start=False)],
        Bottleneck(capacity_pps=3750, aqm="red", min_th_pkts=50, max_th_pkts=550, max_p=0.1,
                   queue_weight=1e-4), horizon_s=150, warmup_s=100)
    s = run.summary
    assert s["queue_mean_pkts"] == pytest.approx(op.queue_pkts, rel=1e-3)
    assert s["class0_cwnd_mean_pkts"] == pytest.approx(op.window_pkts, rel=1e-3)
    assert s["class0_rtt_mean_s"] == pytest.approx(op.rtt_s, rel=1e-4)
    assert s["class0_loss_ratio"] == pytest.approx(op.drop_prob, rel=1e-3)
    assert run.convergence is not None and run.convergence.converged


@pytest.mark.parametrize("b", [1, 2])
def test_mgt_under_random_loss_has_w2p_equal_2_over_b(b):
    p = 0.01
    run = simulate_bottleneck(
        [FlowClass(prop_rtt_s=0.1, acks_per_packet=b, packet_error_rate=p, slow_start=False)],
        UNLIMITED, horizon_s=60, warmup_s=40)
    window = math.sqrt(2 / (b * p))  # Poisson-loss mean field: dW/dt = 1/(bR) - W^2 p/(2R)
    assert run.summary["class0_cwnd_mean_pkts"] == pytest.approx(window, rel=1e-3)
    assert run.summary["class0_goodput_pps"] == pytest.approx(window / 0.1 * (1 - p), rel=1e-3)


@pytest.mark.parametrize(("p", "b"), [(1e-3, 1), (1e-2, 1), (1e-2, 2)])
def test_sawtooth_under_periodic_loss_is_mathis(p, b):
    # One loss every 1/p packets, halving once per loss: exactly Mathis' derivation.
    run = simulate_bottleneck(
        [FlowClass(prop_rtt_s=0.1, variant="reno_sawtooth", acks_per_packet=b,
                   packet_error_rate=p, slow_start=False, initial_cwnd_pkts=10)],
        UNLIMITED, horizon_s=300, warmup_s=100)
    assert run.summary["class0_send_pps"] == pytest.approx(lt.mathis_pps(0.1, p, b), rel=5e-3)


@pytest.mark.parametrize(("depth", "queue"), [(100, 0), (600, 0), (0, 50), (50, 20), (300, 10)])
def test_token_bucket_sawtooth_against_the_derived_closed_forms(depth, queue):
    # The closed forms halve at the overflow instant; the fluid model reacts one RTT
    # later (the window has grown by <= 1 packet) and detects the loss after one whole
    # packet is dropped: two packets of a W_r = 100 packet window, 2 %.
    run = simulate_bottleneck(
        [FlowClass(prop_rtt_s=0.1, variant="reno_sawtooth", acks_per_packet=1, slow_start=False,
                   initial_cwnd_pkts=10, limiter=TokenBucket(1000, depth, queue))],
        UNLIMITED, horizon_s=200, warmup_s=60)
    expected = tb.shaper_pps(1000, depth, queue, 0.1)
    assert run.summary["class0_goodput_pps"] == pytest.approx(expected, rel=2 / 100)
    assert np.all(run.tokens_pkts >= 0) and np.all(run.tokens_pkts <= depth)
    assert np.all(run.limiter_queue_pkts >= 0) and np.all(run.limiter_queue_pkts <= queue)


def test_vegas_equilibrium_has_no_rtt_bias():
    # alpha = beta: the queue holds sum(alpha) packets and each source gets C/N.
    classes = [FlowClass(prop_rtt_s=d, variant="vegas", vegas_alpha_pkts=3, vegas_beta_pkts=3,
                         name=f"d{d}") for d in (0.02, 0.1)]
    run = simulate_bottleneck(classes, Bottleneck(capacity_pps=1000, buffer_pkts=200),
                              horizon_s=60, warmup_s=40)
    s = run.summary
    assert s["queue_mean_pkts"] == pytest.approx(6, rel=1e-2)
    assert s["d0.02_goodput_pps"] == pytest.approx(500, rel=1e-2)
    assert s["d0.1_goodput_pps"] == pytest.approx(500, rel=1e-2)


def test_drop_tail_clamps_and_reno_beats_vegas_in_a_big_buffer():
    classes = [FlowClass(prop_rtt_s=0.05, flows=1, name="reno"),
               FlowClass(prop_rtt_s=0.05, variant="vegas", vegas_alpha_pkts=1,
                         vegas_beta_pkts=3, name="vegas")]
    run = simulate_bottleneck(classes, Bottleneck(capacity_pps=1000, buffer_pkts=100),
                              horizon_s=120, warmup_s=60)
    assert run.queue_pkts.min() >= 0 and run.queue_pkts.max() <= 100
    assert run.cwnd_pkts.min() >= 1
    assert run.summary["vegas_goodput_pps"] < 0.25 * run.summary["reno_goodput_pps"]


def test_threshold_marking_marks_and_never_drops_ecn_flows():
    run = simulate_bottleneck(
        [FlowClass(prop_rtt_s=0.05, flows=4, ecn=True)],
        Bottleneck(capacity_pps=1000, buffer_pkts=100, aqm="threshold", threshold_pkts=30,
                   ecn=True), horizon_s=60, warmup_s=20)
    s = run.summary
    assert s["queue_drop_pps"] == 0 and s["queue_mark_pps"] > 0
    assert s["utilisation"] > 0.95 and s["queue_max_pkts"] < 100


def test_stiff_red_average_is_refused_and_named():
    classes = [FlowClass(prop_rtt_s=0.1, flows=10)]
    link = Bottleneck(capacity_pps=10_000, aqm="red", min_th_pkts=5, max_th_pkts=15,
                      max_p=0.1, queue_weight=0.9)
    with pytest.raises(dde.StiffModelError, match="RED average"):
        simulate_bottleneck(classes, link, horizon_s=10, step_s=0.001)
    with pytest.raises(dde.StiffModelError, match=r"stiff model: the RED average"):
        simulate_bottleneck(classes, link, horizon_s=1000, max_steps=1_000_000)


def test_grid_scale_oscillation_is_detected():
    # Explicit Euler on y' = -k y with h k = 2.5 flips sign and grows at every step: the
    # detector must call it an instability, not return it.
    k, h = 2.5, 1.0
    y = np.array([(1 - h * k) ** n for n in range(200)])[:, None]
    system = build_system([FlowClass(prop_rtt_s=0.1)], UNLIMITED)
    traj = dde.Trajectory(y, np.zeros((200, 1)), h)
    with pytest.raises(dde.IntegrationError, match="numerical instability"):
        dde._check_finite_and_smooth(
            dde.DdeSystem(**{**system.__dict__, "oscillation_columns": (0,)}), traj)
    smooth = dde.Trajectory(np.sin(traj.t / 10)[:, None], traj.s, h)
    dde._check_finite_and_smooth(
        dde.DdeSystem(**{**system.__dict__, "oscillation_columns": (0,)}), smooth)


@given(step_s=st.floats(1e-5, 1.0), rows=st.integers(1, 5000),
       share=st.floats(-0.1, 1.2), nudge=st.integers(-2, 2))
def test_the_first_row_after_a_time_is_the_one_searchsorted_finds(step_s, rows, share,
                                                                  nudge):
    # Found by arithmetic, without making the grid's times; times on a grid point, a
    # last bit either side of one, before the start and past the end included.
    traj = dde.Trajectory(np.zeros((rows + 1, 1)), np.zeros((rows + 1, 1)), step_s)
    time_s = float(np.round(share * rows)) * step_s if nudge == 0 else \
        float(np.nextafter(share * rows * step_s, math.copysign(math.inf, nudge)))
    expected = min(int(np.searchsorted(traj.t, time_s)), rows)
    assert traj.first_row_at(time_s) == expected


def test_halving_the_step_is_checked():
    run = simulate_bottleneck([FlowClass(prop_rtt_s=0.1, flows=5)],
                              Bottleneck(capacity_pps=1000, buffer_pkts=50), horizon_s=30)
    report = run.convergence
    assert report is not None and report.half_step_s == report.step_s / 2
    assert set(report.changes) >= {"queue_mean_pkts", "class0_goodput_pps"}
    assert report.worst[1] < dde.CONVERGENCE_TOLERANCE


@pytest.mark.parametrize(("classes", "link", "message"), [
    ([], UNLIMITED, "N = 0"),
    ([FlowClass(prop_rtt_s=0.1, flows=0)], UNLIMITED, "flows must be >= 1"),
    ([FlowClass(prop_rtt_s=0.0)], UNLIMITED, "prop_rtt_s must be > 0"),
    ([FlowClass(prop_rtt_s=0.1, packet_error_rate=1.0)], UNLIMITED, "packet_error_rate"),
    ([FlowClass(prop_rtt_s=0.1, variant="vegas", vegas_alpha_pkts=3, vegas_beta_pkts=1)],
     UNLIMITED, "vegas_alpha_pkts <= vegas_beta_pkts"),
    ([FlowClass(prop_rtt_s=0.1)], Bottleneck(capacity_pps=0), "capacity_pps"),
    ([FlowClass(prop_rtt_s=0.1)], Bottleneck(capacity_pps=10, aqm="red", min_th_pkts=9,
                                             max_th_pkts=3), "min_th_pkts < max_th_pkts"),
])
def test_bad_parameters_are_named(classes, link, message):
    with pytest.raises(InputError, match=message):
        simulate_bottleneck(classes, link, horizon_s=1)


def test_classes_that_converge_merge_and_their_means_match_their_filled_series():
    # 20 identical flows starting 50 ms apart converge to one trajectory: they merge, and
    # the summary (computed without writing the merged rows) equals the time means of
    # the series written afterwards.
    classes = [FlowClass(prop_rtt_s=0.05, flows=1 + i % 3, start_s=0.05 * i, name=f"c{i}")
               for i in range(20)]
    link = Bottleneck(capacity_pps=2000, buffer_pkts=300, aqm="red", min_th_pkts=20,
                      max_th_pkts=80, max_p=0.1, queue_weight=0.002, gentle=True)
    run = simulate_bottleneck(classes, link, horizon_s=20, warmup_s=5)
    merges = run.trajectory.layout.merged
    assert (merges[:, 0] >= 0).sum() >= 15
    first = int(np.searchsorted(run.t, 5.0))
    weights = np.full(run.t[first:].shape, 1.0)
    weights[[0, -1]] = 0.5
    for i, c in enumerate(classes):
        series = run.goodput_pps[first:, i]
        assert run.summary[f"{c.name}_goodput_pps"] == pytest.approx(
            (series * weights).sum() / weights.sum(), rel=1e-9)
        assert run.summary[f"{c.name}_cwnd_mean_pkts"] == pytest.approx(
            (run.cwnd_pkts[first:, i] * weights).sum() / weights.sum(), rel=1e-9)
    apart = simulate_bottleneck(classes, link, horizon_s=20, warmup_s=5, merge_tolerance=0)
    for name, value in apart.summary.items():
        assert run.summary[name] == pytest.approx(value, rel=1e-4, abs=1e-9), name


def _series(run):
    """Every series a run exposes (the token columns are NaN for classes without one)."""
    return {name: getattr(run, name) for name in (
        "cwnd_pkts", "rtt_s", "send_pps", "goodput_pps", "loss_pps", "mark_pps",
        "limiter_drop_pps", "tokens_pkts", "limiter_queue_pkts", "queue_pkts",
        "red_average_pkts", "queue_drop_pps", "queue_mark_pps", "queue_inflow_pps")}


_MIXED = ([FlowClass(prop_rtt_s=0.05, flows=2, start_s=0.1 * i, name=f"r{i}") for i in range(6)]
          + [FlowClass(prop_rtt_s=0.08, variant="vegas", name="vegas"),
             FlowClass(prop_rtt_s=0.06, name="shaped", limiter=TokenBucket(150, 20, 10)),
             FlowClass(prop_rtt_s=0.07, name="ecn", ecn=True)])


def _poisoned(value):
    """A history pool whose arrays come filled with ``value``."""
    from tcpn.solvers.fluid import buffers

    class Poisoned(buffers.BufferPool):
        def take(self, rows, columns):
            array = super().take(rows, columns)
            array.fill(value)
            return array
    return Poisoned()


@pytest.mark.parametrize(("classes", "link"), [
    (_MIXED, Bottleneck(capacity_pps=1000, buffer_pkts=120, aqm="red", min_th_pkts=10,
                        max_th_pkts=60, max_p=0.1, queue_weight=0.01, gentle=True, ecn=True)),
    ([FlowClass(prop_rtt_s=0.045, initial_cwnd_pkts=10, start_s=s) for s in (0.88, 0.89)],
     Bottleneck(capacity_pps=832, buffer_pkts=100)),
], ids=["merges-limiter-vegas-ecn", "dumbbell"])
def test_no_unwritten_history_is_read(monkeypatch, classes, link):
    # Histories come from a pool that reuses memory: a run whose fresh arrays hold NaN
    # and one whose arrays hold 1e300 must give the same series and summary, or the
    # solver read (or returned) memory it had not written.
    from tcpn.solvers.fluid import bottleneck

    runs = []
    for value in (np.nan, 1e300):
        monkeypatch.setattr(bottleneck, "HISTORIES", _poisoned(value))
        runs.append(simulate_bottleneck(classes, link, horizon_s=15, warmup_s=5))
    assert runs[0].trajectory.layout.strides.shape[0] > 0  # strides were taken
    assert runs[0].summary == runs[1].summary
    for name, series in _series(runs[0]).items():
        np.testing.assert_array_equal(series, _series(runs[1])[name], err_msg=name)
    assert np.isfinite(runs[0].cwnd_pkts).all() and np.isfinite(runs[0].queue_drop_pps).all()


def test_the_pool_never_hands_out_memory_still_referenced():
    from tcpn.solvers.fluid.buffers import BufferPool

    pool = BufferPool(keep=2)
    first = pool.take(10, 3)
    assert first.shape == (10, 3) and first.flags.f_contiguous
    column = first[:, 1]
    del first
    assert not np.shares_memory(pool.take(10, 3), column)  # a view keeps it busy
    del column
    again = pool.take(5, 3)  # now free: reused (no new memory)
    assert any(np.shares_memory(again, b) for b in pool._buffers)
    assert len(pool._buffers) == 2


def test_the_pool_keeps_at_most_its_bytes_and_releases_free_buffers():
    from tcpn.solvers.fluid.buffers import BufferPool

    pool = BufferPool(keep=4, keep_bytes=1000)
    first = pool.take(10, 10)  # 800 bytes: kept
    assert pool.kept_bytes == 800
    second = pool.take(10, 10)  # the first is busy; 1600 bytes would pass: fresh memory
    assert pool.kept_bytes == 800 and not np.shares_memory(first, second)
    del first, second
    again = pool.take(5, 10)  # the kept one, free again
    assert any(np.shares_memory(again, b) for b in pool._buffers)
    big = pool.take(20, 10)  # 1600 bytes alone: never kept
    assert pool.kept_bytes == 800 and not any(np.shares_memory(big, b) for b in pool._buffers)
    del again
    later = pool.take(12, 10)  # 960 bytes: the free 800 are forgotten to make room
    assert pool.kept_bytes == 960 and len(pool._buffers) == 1
    assert pool.release() == 0  # busy: kept
    del later
    assert pool.release() == 960 and pool.kept_bytes == 0


def test_the_pools_bound_comes_from_the_environment(monkeypatch):
    from tcpn.solvers.fluid import buffers

    pool = buffers.BufferPool()
    monkeypatch.setenv("TCPN_FLUID_POOL_MB", "0")
    pool.take(10, 10)
    assert pool.kept_bytes == 0
    monkeypatch.setenv("TCPN_FLUID_POOL_MB", "0.001")  # 1000 bytes
    pool.take(10, 10)
    assert pool.kept_bytes == 800
    monkeypatch.delenv("TCPN_FLUID_POOL_MB")
    pool.take(100, 1000)
    assert pool.kept_bytes == 800_800  # default 128 MB
    assert buffers.DEFAULT_KEEP_MB == 128
    monkeypatch.setenv("TCPN_FLUID_POOL_MB", "lots")
    with pytest.raises(InputError, match=r"\$TCPN_FLUID_POOL_MB='lots'"):
        pool.take(10, 10)


def test_a_solve_within_a_small_pool_bound_gives_the_same_run(monkeypatch):
    """The bound changes which memory a history uses, never what a run computes; after
    the solves the pool holds no more than its bound."""
    from tcpn.solvers.fluid import bottleneck, buffers

    classes = [FlowClass(prop_rtt_s=0.045, initial_cwnd_pkts=10, start_s=s) for s in (0.8, 0.9)]
    link = Bottleneck(capacity_pps=832, buffer_pkts=100)
    runs = []
    for keep_bytes in (None, 300_000, 0):
        pool = buffers.BufferPool(keep_bytes=keep_bytes)
        monkeypatch.setattr(bottleneck, "HISTORIES", pool)
        for _ in range(2):  # the second solve reuses what the first left
            runs.append(simulate_bottleneck(classes, link, horizon_s=15, warmup_s=5))
        assert pool.kept_bytes <= (keep_bytes if keep_bytes is not None else 128_000_000)
    for run in runs[1:]:
        assert run.summary == runs[0].summary
        np.testing.assert_array_equal(run.cwnd_pkts, runs[0].cwnd_pkts)


def test_means_over_step_ends_equal_the_means_of_the_filled_series():
    # Strides write only the history columns; the summary weighs the step ends. It must
    # equal the trapezoid mean of the series written afterwards.
    run = simulate_bottleneck(
        [FlowClass(prop_rtt_s=0.045, initial_cwnd_pkts=10, start_s=s, name=f"f{i}")
         for i, s in enumerate((0.88, 0.89))],
        Bottleneck(capacity_pps=832, buffer_pkts=100), horizon_s=30, warmup_s=5.3)
    assert run.trajectory.layout.strides.shape[0] > 100
    first = int(np.searchsorted(run.t, 5.3))
    weights = np.full(run.t[first:].shape, 1.0)
    weights[[0, -1]] = 0.5

    def mean(series):
        return (series[first:] * weights).sum() / weights.sum()

    s = run.summary
    assert s["queue_drop_pps"] == pytest.approx(mean(run.queue_drop_pps), rel=1e-9)
    assert s["queue_mean_pkts"] == pytest.approx(mean(run.queue_pkts), rel=1e-9)
    for i in range(2):
        assert s[f"f{i}_goodput_pps"] == pytest.approx(mean(run.goodput_pps[:, i]), rel=1e-9)
        assert s[f"f{i}_cwnd_mean_pkts"] == pytest.approx(mean(run.cwnd_pkts[:, i]), rel=1e-9)
        assert s[f"f{i}_send_pps"] == pytest.approx(mean(run.send_pps[:, i]), rel=1e-9)


def test_strides_converge_to_the_fixed_grid_as_their_tolerance_shrinks():
    # The step-size control: the tighter its tolerance, the closer the run to the one
    # with a step of one row everywhere (same grid), and slow start ends on the same row.
    classes = [FlowClass(prop_rtt_s=0.045, initial_cwnd_pkts=10, start_s=s, name=f"f{i}")
               for i, s in enumerate((0.88, 0.89))]
    link = Bottleneck(capacity_pps=832, buffer_pkts=100)

    def run(tolerance):
        return simulate_bottleneck(classes, link, horizon_s=30, warmup_s=5,
                                   check_convergence=False, stride_tolerance=tolerance)

    grid = run(0.0)
    assert grid.trajectory.layout.strides.shape[0] == 0

    def distance(other):
        return max(abs(other.summary[k] - v) / max(abs(v), 1.0) for k, v in grid.summary.items())

    distances = [distance(run(tolerance)) for tolerance in (1e-3, 1e-4, 1e-5, 1e-6)]
    assert distances == sorted(distances, reverse=True) and distances[-1] < 1e-4
    strided = run(1e-5)
    m = len(classes)
    for i in range(m):
        exits = [int(np.argmax(r._filled().y[:, 3 * m + 2 + i] < 0.5)) for r in (grid, strided)]
        assert exits[0] == exits[1] > 0


def test_rows_before_a_late_join_are_written_when_a_mean_reads_them(monkeypatch):
    # A class joining late writes only the rows its delays can read (a round trip
    # through a full buffer before its join); the earlier ones are written when a mean
    # or a series needs them. From row 0 on (no warm-up), runs on histories poisoned
    # with NaN and with 1e300 must agree, and each mean must be its filled series' mean.
    from tcpn.solvers.fluid import bottleneck

    classes = [FlowClass(prop_rtt_s=0.05, name="early"),
               FlowClass(prop_rtt_s=0.05, flows=2, start_s=3.0, name="late")]
    link = Bottleneck(capacity_pps=1000, buffer_pkts=50)
    runs = []
    for value in (np.nan, 1e300):
        monkeypatch.setattr(bottleneck, "HISTORIES", _poisoned(value))
        runs.append(simulate_bottleneck(classes, link, horizon_s=8, warmup_s=0))
    run = runs[0]
    assert run.trajectory.layout.joins.join_from[1] > 0  # rows were left out at the join
    assert run.summary == runs[1].summary
    assert all(np.isfinite(v) for v in run.summary.values())
    weights = np.full(run.t.shape, 1.0)
    weights[[0, -1]] = 0.5
    for i, c in enumerate(classes):
        for name, series in (("goodput_pps", run.goodput_pps), ("cwnd_mean_pkts", run.cwnd_pkts),
                             ("rtt_mean_s", run.rtt_s)):
            assert run.summary[f"{c.name}_{name}"] == pytest.approx(
                (series[:, i] * weights).sum() / weights.sum(), rel=1e-9), (c.name, name)
    for name, series in _series(run).items():
        np.testing.assert_array_equal(series, _series(runs[1])[name], err_msg=name)
