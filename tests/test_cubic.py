"""CUBIC (tcpn/models/components/congestion/cubic.py) against ns-3.44's ``TcpCubic``.

A short version of scenarios/reference/cubic_2flows.yaml: one CUBIC flow from a fixed
start, a few seconds, both lenses. Slow start, the losses it ends with and the cubic growth
after them are the same run in both: each lens's window drops at the same instants to the
same values (ssthresh = trunc(0.7 cwnd)), and the window then climbs as the cubic of the
time since the reduction. Expectations come from the algorithm (RFC 9438 as ns-3 computes
it), not from a previous run.
"""

from __future__ import annotations

import numpy as np
import pytest
from lens_traces import lens_trace

from tcpn.errors import InputError
from tcpn.lenses.fluid import FluidLens
from tcpn.lenses.net import NetLens
from tcpn.lenses.ns3 import Ns3Lens
from tcpn.lenses.ns3.loader import installed
from tcpn.models.metrics import goodput_bps
from tcpn.models.scenario import load_scenario, validate_scenario

REFERENCE = "scenarios/reference/cubic_2flows.yaml"
MSS = 1448
HORIZON_S = 4.0
#: Below the first loss's window (the path holds about 37 + 100 packets): congestion
#: avoidance from the start, no slow-start overshoot (whose many losses end in a timeout).
INITIAL_SSTHRESH = 100


def _short(flows: int = 1) -> dict:
    data = load_scenario(REFERENCE).model_dump()
    data["flows"] = data["flows"][:flows]
    for flow in data["flows"]:
        flow["start_s"] = 0.0
    data["tcp"]["initial_ssthresh_segments"] = INITIAL_SSTHRESH
    data["horizon_s"] = HORIZON_S
    data["measure"] = {"warmup_s": 0.0, "bin_s": 0.5}
    return data


def _window(trace, flow="f0", var="cwnd_bytes"):
    s = trace.series(var, flow)
    return s["time_s"].to_numpy(), s["value"].to_numpy() / MSS


def _reductions(times, cwnd):
    """(time, before, after) of every drop of the window."""
    return [(times[i], cwnd[i - 1], cwnd[i]) for i in range(1, len(cwnd))
            if cwnd[i] < cwnd[i - 1] - 0.5]


def test_reference_scenario_reads_as_cubic_without_hystart():
    scenario = load_scenario(REFERENCE)
    params = scenario.flows[0].params
    assert scenario.flows[0].variant == "cubic"
    assert (params.c, params.beta, params.fast_convergence, params.tcp_friendliness,
            params.hystart) == (0.4, 0.7, True, True, False)


def test_net_lens_refuses_hystart_and_fluid_lens_refuses_cubic():
    data = _short()
    data["flows"][0]["params"] = {"hystart": True}
    with pytest.raises(InputError, match="hystart"):
        NetLens().check(validate_scenario(data))
    data = _short()
    data["tcp"]["ecn"] = True
    with pytest.raises(InputError, match="no ECN reaction"):
        NetLens().check(validate_scenario(data))
    with pytest.raises(InputError, match="variant cubic has no fluid model"):
        FluidLens().check(validate_scenario(_short()))


def _cubic(w_max: float, tau_s: float) -> float:
    """RFC 9438's window ``tau_s`` after a reduction from ``w_max`` (C 0.4, beta 0.7)."""
    k = (0.3 * w_max / 0.4) ** (1 / 3)
    return w_max - 0.4 * (k - tau_s) ** 3


def test_net_window_is_cubic_after_a_loss():
    """After the first reduction at W_max the window climbs back along the cubic: at
    each step it lies between the cubic started when the window first grows again (the
    epoch, less 50 ms of delay_min) less 3 segments (ns-3's counter lags) and the cubic
    started at the reduction (plus 100 ms) plus 1. Reno's one segment per RTT would be
    ten segments below by the end."""
    times, cwnd = _window(lens_trace(NetLens(), _short()))
    (t0, w_max, w0), *rest = _reductions(times, cwnd)
    assert w0 == int(0.7 * w_max)
    end = rest[0][0] if rest else HORIZON_S
    after = (times > t0) & (times < end)
    t_grow = times[after][np.argmax(cwnd[after] > w0)]
    assert t_grow - t0 < 0.5
    later = after & (times > t_grow)
    assert later.sum() > 20 and end - t0 > 2.0
    for t, w in zip(times[later], cwnd[later], strict=True):
        low = _cubic(w_max, t - t_grow - 0.05) - 3
        high = _cubic(w_max, t - t0 + 0.1) + 1
        assert low <= w <= high, (t, w, low, high)


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_net_and_ns3_share_losses_and_cubic_growth():
    data = _short()
    net, ns3 = lens_trace(NetLens(), data), lens_trace(Ns3Lens(), data)
    (tn, wn), (ts, ws) = _window(net), _window(ns3)
    drops_net, drops_ns3 = _reductions(tn, wn), _reductions(ts, ws)
    assert len(drops_net) >= 1
    # the same reductions, at the same instants (1 ms), to the same windows
    first = min(len(drops_net), len(drops_ns3), 2)
    for (t1, b1, a1), (t2, b2, a2) in zip(drops_net[:first], drops_ns3[:first], strict=True):
        assert abs(t1 - t2) < 5e-3 and (b1, a1) == (b2, a2)
        assert a1 == int(0.7 * b1)
    # the cubic growth after the first one: the window every 0.25 s, within 1 segment
    for t_after in np.arange(drops_net[0][0] + 0.25, HORIZON_S, 0.25):
        at_net = wn[np.searchsorted(tn, t_after, side="right") - 1]
        at_ns3 = ws[np.searchsorted(ts, t_after, side="right") - 1]
        assert abs(at_net - at_ns3) <= 1, (t_after, at_net, at_ns3)
    # goodput over the run within 1 %
    good_net, good_ns3 = (goodput_bps(trace)["f0"] for trace in (net, ns3))
    assert good_net == pytest.approx(good_ns3, rel=0.01)
    # ssthresh: the same values in the same order
    assert list(_window(net, var="ssthresh_bytes")[1][:first]) == \
        list(_window(ns3, var="ssthresh_bytes")[1][:first])


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_ns3_window_after_a_timeout_grows_only_by_what_acks_deliver():
    """One flow in slow start from the first instant overshoots the path, loses much of a
    window and times out. After the timeout each ACK grows ns-3's window (slow start,
    every segment counted) by the segments it newly delivers: segments the receiver got
    after the sender last heard of its state before the timeout (its ACKs take 22 ms, a
    delayed one 200 ms more: 0.25 s is taken). No step of the window may exceed their
    count. Crediting every byte the ACK that ends CA_LOSS passes, SACKed ones included,
    made one step of 835 segments (the ns3 lens's ``TcpnSocket``, commit cdef433)."""
    data = _short()
    data["tcp"].pop("initial_ssthresh_segments")
    data["horizon_s"] = 2.6
    trace = lens_trace(Ns3Lens(), data)
    timeouts = trace.events("f0", "timeout")["time_s"].to_numpy()
    assert len(timeouts) >= 1, "the overshoot no longer ends in a timeout"
    heard = timeouts[0] - 0.25
    received = trace.events("f0", "recv")
    first = received.groupby("seq", observed=True)["time_s"].min()
    arrivals = np.sort(first[first > heard].to_numpy())
    times, cwnd = _window(trace)
    after = np.flatnonzero(times > timeouts[0])
    for i in after[1:]:
        new = np.searchsorted(arrivals, times[i], side="right")
        assert cwnd[i] - cwnd[i - 1] <= new, (times[i], cwnd[i - 1], cwnd[i], new)
    assert cwnd[after].max() > 2  # the window did grow again after the timeout


def _sends(trace) -> tuple[list[tuple[str, int]], np.ndarray]:
    """The data segments sent, new or again, in order, and their instants."""
    sent = trace.events("f0", ["send", "retransmit"]).sort_values("time_s", kind="stable")
    return ([(str(e), int(s) // MSS) for e, s in zip(sent["event"], sent["seq"], strict=True)],
            sent["time_s"].to_numpy())


@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_net_and_ns3_send_the_same_segments_through_the_overshoot_and_timeout():
    """One flow in slow start from the first instant (2.6 s): the overshoot's SACK
    recovery, its timeout (1.64 s) and the slow start after it. Both lenses send and
    resend the same segments in the same order (about 2,300), each within 7 ms: ns-3's
    times are its pcap's, a burst serialized on the access link, and the largest, 57
    segments at once at 2.33 s, takes 6.7 ms at 100 Mbit/s. With ns-3.44's pipe,
    which counts a retransmission the receiver SACKs until the cumulative ACK passes it,
    ns-3 sent nothing on the six ACKs of 0.970-0.976 s that SACK segments resent at
    0.804 s, where RFC 6675's pipe (the net lens) sends one on each: ns-3's lost segments
    878-879 at 0.98 s and the net lens's 883-885 (``tcp.pipe_counts_sacked_retransmits``;
    the ns3 lens follows RFC 6675 by default)."""
    data = _short()
    data["tcp"].pop("initial_ssthresh_segments")
    data["horizon_s"] = 2.6
    (net, net_s), (ns3, ns3_s) = (_sends(lens_trace(lens, data))
                                  for lens in (NetLens(), Ns3Lens()))
    assert len(net) > 2000
    assert net == ns3
    assert np.abs(net_s - ns3_s).max() < 7e-3


def test_net_window_stays_whole_through_the_recovery_exit():
    """CUBIC's window is whole segments (ns-3 grows it one segment at a time); the ACK
    that ends fast recovery grows it as CUBIC does, by the segments it passes. The base
    sender's NewReno step left ssthresh + 1 / ssthresh there, and the window a fraction
    of a segment off a whole one for the rest of the epoch."""
    times, cwnd = _window(lens_trace(NetLens(), _short()))
    assert _reductions(times, cwnd)
    assert np.all(cwnd == np.floor(cwnd)), cwnd[cwnd != np.floor(cwnd)][:5]


@pytest.mark.parametrize("lens", [
    NetLens,
    pytest.param(Ns3Lens, marks=[pytest.mark.ns3, pytest.mark.skipif(
        not installed(), reason="pip install 'tcpn[ns3]'")])])
def test_window_after_a_timeout_levels_at_the_timeouts_maximum(lens):
    """A timeout sets ``W_max`` as a fast retransmit does (ns-3's ``ReTxTimeout`` calls
    ``GetSsThresh``; ``CubicReset`` on ``CA_LOSS`` keeps ``m_lastMaxCwnd``). One flow in
    slow start from the first instant (7 s): a loss at 277 segments (``W_max`` 277), a
    timeout at 193 (below 277, fast convergence: ``W_max = trunc(193 * 1.7 / 2) = 164``),
    and the timeout's slow start overshoots to a loss at 141 (near 2.6 s), below 164:
    ``W_max = trunc(141 * 1.7 / 2) = 119``. The window climbs from 98 to 119 and holds
    there (the path holds 37 + 100 packets: no loss follows) until the cubic passes it,
    ``K + 1.36`` s after the epoch opens (``K = cbrt(21 / 0.4) = 3.74`` s; ``trunc(0.4
    x^3) >= 1`` from ``x = 1.36`` s): after 7 s, in both lenses. With ``W_max = 0`` after
    the timeout (the net lens until issue 34) the loss at 144 set ``W_max`` 144 and the
    window climbed to a fourth loss at 139 by 5.4 s."""
    data = _short()
    data["tcp"].pop("initial_ssthresh_segments")
    data["horizon_s"] = 7.0
    trace = lens_trace(lens(), data)
    assert len(trace.events("f0", "timeout")) == 1
    times, cwnd = _window(trace)
    drops = _reductions(times, cwnd)
    befores = [before for _, before, _ in drops]
    assert len(drops) == 3 and befores[1] < befores[0] and befores[2] < int(befores[1] * 0.85)
    last_max = int(befores[2] * (1 + 0.7) / 2)
    assert cwnd[times > drops[2][0]].max() == last_max == 119


# --------------------------------------------------------------------------- 100 Mbit/s

REFERENCE_100M = "scenarios/reference/cubic_2flows_100m.yaml"
HORIZON_100M_S = 8.0
#: Just below the most the path holds (BDP 367 + 1000 packets): slow start ends
#: without its overshoot (thousands of losses) and the window reaches the buffer's
#: limit a few seconds later, so the run holds two reductions and the cubic between.
INITIAL_SSTHRESH_100M = 1350


def _short_100m() -> dict:
    data = load_scenario(REFERENCE_100M).model_dump()
    data["flows"] = data["flows"][:1]
    data["flows"][0]["start_s"] = 0.0
    data["tcp"]["initial_ssthresh_segments"] = INITIAL_SSTHRESH_100M
    data["horizon_s"] = HORIZON_100M_S
    data["measure"] = {"warmup_s": 0.0, "bin_s": 0.5}
    return data


@pytest.mark.slow
@pytest.mark.ns3
@pytest.mark.skipif(not installed(), reason="pip install 'tcpn[ns3]'")
def test_net_and_ns3_share_the_cwnd_trajectory_at_100_mbps():
    """One flow of cubic_2flows_100m for 8 s (about 65 000 segments): the same two
    reductions (instant within 5 ms, window after equal, before within one segment), and
    the window every 0.25 s within one segment. Both reductions now come at the same
    instant in both lenses (0.6513 s from 1436 segments, 5.9006 s from 1373). Until the
    window stopped growing on an ACK of new data that is also a duplicate (it SACKs new
    data: RFC 6675 5 step 3.4, ns-3's ``CA_DISORDER``; ``growth_withheld`` in
    tcpn/models/components/sender.py), the net lens grew on the ACK of the segment before
    each hole: its second loss came 3.7 ms after ns-3's, one step later (1374 against
    1373); and once that ACK also counted as a duplicate (commit 9350583) it sent three
    segments on it, the third dropped, and the recovery ended 31 ms after ns-3's (966
    segments against 968 at 6.25 s). Before the recovery exit grew the window as CUBIC,
    the net lens lagged ns-3 by up to 4 segments for 150 ms after each reduction."""
    data = _short_100m()
    net, ns3 = lens_trace(NetLens(), data), lens_trace(Ns3Lens(), data)
    (tn, wn), (ts, ws) = _window(net), _window(ns3)
    drops_net, drops_ns3 = _reductions(tn, wn), _reductions(ts, ws)
    assert len(drops_net) == len(drops_ns3) == 2
    for (t1, b1, a1), (t2, b2, a2) in zip(drops_net, drops_ns3, strict=True):
        assert abs(t1 - t2) < 5e-3 and abs(b1 - b2) <= 1 and a1 == a2
    for t in np.arange(0.25, HORIZON_100M_S, 0.25):
        at_net = wn[np.searchsorted(tn, t, side="right") - 1]
        at_ns3 = ws[np.searchsorted(ts, t, side="right") - 1]
        assert abs(at_net - at_ns3) <= 1, (t, at_net, at_ns3)
    good_net, good_ns3 = (goodput_bps(trace)["f0"] for trace in (net, ns3))
    assert good_net == pytest.approx(good_ns3, rel=0.01)
