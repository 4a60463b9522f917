"""ns-2's Vegas fine-grained retransmission (``params.fine_timer``), the same in both lenses.

Path of tests/test_tcp_recovery_variants.py: A -(1 Gbit/s, 20 ms)- R -(10 Mbit/s, 20 ms)- B,
MSS 1000 bytes, one ACK per segment, ``lost`` = packets dropped on A -> R (each
transmission counts). Vegas (alpha 1, beta 3) with ns-2's loss cut on Reno's recovery. The
window (about 16 segments) is far below the path's hundred, so the segments of a round go
out together and the ACKs, duplicate ones too, come back in bursts a round trip (about
81 ms) apart: the sender resends on the first duplicate ACK that finds the head expired,
which is the first of a burst, far from the instant fine_rto runs out.

The expected instants come from the trace itself: :func:`fine_rto` replays rule F1 of the
rule sheet on it (every new ACK whose newest segment was sent once is a sample, ack time -
send time), and the backoff of a resend (F2-F4: 9/8 for a segment sent once) is applied by
hand. The coarse RTO is at least ``min_rto_s`` (1 s) past the last new ACK.
"""

from __future__ import annotations

import pytest

from tcpn.lenses import make_run
from tcpn.lenses.run import run_once
from tcpn.models.scenario import validate_scenario

MSS = 1000
PARAMS = {"recovery": "reno", "alpha": 1, "beta": 3, "loss_cut": "ns2"}
LENSES = ["net", pytest.param("ns3", marks=pytest.mark.ns3)]


def _ns3_or_skip(lens):
    from tcpn.lenses.ns3.loader import installed

    if lens == "ns3" and not installed():
        pytest.skip("pip install 'tcpn[ns3]'")


def run(lens, lost, *, fine=True, segments=80, fix_level=3):
    """The trace's events (time, event, segment number) of a transfer of ``segments``, and
    the ssthresh samples (time, segments)."""
    _ns3_or_skip(lens)
    scenario = validate_scenario({
        "name": "fine", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "R", "rate_bps": 1e9, "delay_s": 0.02,
                   "ab": {"errors": {"kind": "list", "packets": lost}}},
                  {"a": "R", "b": "B", "rate_bps": 1e7, "delay_s": 0.02}],
        "flows": [{"id": "f", "src": "A", "dst": "B", "variant": "vegas",
                   "bytes": segments * MSS, "params": {**PARAMS, "fine_timer": fine,
                                                       **fixed(fix_level)}}],
        "tcp": {"segment_size_bytes": MSS, "delack_count": 1, "sack": False,
                "handshake": False, "limited_transmit": True, "timestamps": True,
                "initial_cwnd_segments": 4, "initial_ssthresh_segments": 64}})
    result = run_once(scenario, lens, make_run(scenario))
    events = result.trace.flow_events
    events = events.assign(seg=events.seq // MSS)[["time_s", "event", "seg"]]
    return events, series(result, "ssthresh_bytes")


def fixed(level):
    return {} if level == 3 else {"ns2_fix_level": level}


def series(result, var):
    """``var``'s samples (time, segments) in a run's trace."""
    rows = result.trace.flow_series
    rows = rows[rows["var"] == var]
    return [(float(t), v / MSS) for t, v in zip(rows.time_s, rows.value, strict=True)]


def times(events, event, seg=None):
    rows = events[events.event == event]
    return [float(t) for t in (rows if seg is None else rows[rows.seg == seg]).time_s]


def fine_rto(events, until):
    """Rule F1 replayed on the trace up to ``until``: the fine RTO (s)."""
    sent, resent = {}, set()
    for t, event, seg in events[events.time_s <= until].itertuples(index=False):
        if event == "send":
            sent.setdefault(seg, t)
        elif event == "retransmit":
            resent.add(seg)
    srtt = rttvar = rto = None
    highest = 0
    acks = events[(events.event == "ack") & (events.time_s <= until)]
    for t, _, ack in acks.itertuples(index=False):
        if ack <= highest:
            continue
        highest = ack
        if ack - 1 in resent or ack - 1 not in sent:
            continue
        sample = t - sent[ack - 1]
        if srtt is None:
            srtt, rttvar = sample, sample / 4
        err = sample - srtt
        srtt += err / 8
        rttvar += (abs(err) - rttvar) / 4
        rto = (srtt + 2 * rttvar) * 17 / 16
    assert rto is not None
    return rto


def assert_resent_on_first_expired_dupack(events, seg, since, rto, resend):
    """``resend`` is the first duplicate ACK of ``seg`` at or past ``since`` + ``rto``."""
    dupacks = [t for t in times(events, "ack", seg) if since < t <= resend + 1e-9]
    assert dupacks and dupacks[-1] == pytest.approx(resend, abs=2e-5)
    assert resend - since >= rto - 1e-4
    assert all(t - since < rto for t in dupacks[:-1])


@pytest.mark.parametrize("lens", LENSES)
def test_a_lost_retransmission_goes_again_on_a_duplicate_ack_after_fine_rto(lens):
    """Segment 40 is lost, and so is its fast retransmit (packet 62: segments 0-61 left
    before it, 60 and 61 on the first two duplicate ACKs). The fast retransmit backs
    fine_rto off by 9/8 (segment 40 had left once). Duplicate ACKs keep coming in the
    recovery: the burst of about 80 ms after the retransmission finds it younger than
    9/8 fine_rto (at least 9/8 * 17/16 * 80 ms = 96 ms), the next, about 156 ms after it,
    resends it (F4), far before the coarse timer (1 s). F4's window is ns-2's window(),
    the inflated one, which becomes ssthresh: the fast retransmit's 15 (a window of 20 cut
    by a quarter) + one segment per duplicate ACK before this one. Without the fine
    timer, the coarse timer resends it."""
    lost = [40, 62]
    events, ssthresh = run(lens, lost)
    first, second = times(events, "retransmit", 40)[:2]
    rto = 9 / 8 * fine_rto(events, first)
    assert rto >= 9 / 8 * 17 / 16 * 0.080
    assert_resent_on_first_expired_dupack(events, 40, first, rto, second)
    assert second - first < 2 * 0.081 + 0.005
    assert not times(events, "timeout")
    dupacks = [t for t in times(events, "ack", 40) if t < second - 1e-9]
    cut = [v for t, v in ssthresh if abs(t - first) < 1e-4][-1]
    assert cut == 15.0
    assert [v for t, v in ssthresh if abs(t - second) < 1e-4][-1] == cut + len(dupacks) - 1

    events, _ = run(lens, lost, fine=False)
    first, second = times(events, "retransmit", 40)[:2]
    (timeout,) = times(events, "timeout")[:1]
    assert second == pytest.approx(timeout, abs=1e-4) and second - first > 0.9


@pytest.mark.parametrize("lens", LENSES)
@pytest.mark.parametrize(("lost", "k"), [(35, 1), (34, 2)])
def test_b_a_loss_with_one_or_two_duplicate_acks_goes_again_after_fine_rto(lens, lost, k):
    """A transfer of 37 segments. Segment 35 ends the burst of the fourth round (sent at
    about 0.25 s), 36 opens the next (0.32 s): losing 35, its only duplicate ACK comes a
    round trip after 36 left, about 156 ms after 35, past fine_rto (F2 on the first
    duplicate ACK). Losing 34, the first duplicate ACK (from 35, sent with it) comes
    about 81 ms after it, before fine_rto (at least 17/16 * 80 ms = 85 ms), the second
    (from 36) past it: F2 on the second. Without the fine timer, the segment waits for
    the coarse timer (a second)."""
    events, _ = run(lens, [lost], segments=37)
    sent = times(events, "send", lost)[0]
    (resend,) = times(events, "retransmit", lost)
    assert 17 / 16 * 0.080 <= fine_rto(events, resend) < resend - sent
    assert_resent_on_first_expired_dupack(events, lost, sent, fine_rto(events, resend),
                                          resend)
    dupacks = [t for t in times(events, "ack", lost) if t <= resend + 1e-9]
    assert len(dupacks) == k + 1  # the new ACK of `lost` too
    assert not times(events, "timeout")

    events, _ = run(lens, [lost], segments=37, fine=False)
    (resend,) = times(events, "retransmit", lost)
    (timeout,) = times(events, "timeout")
    assert resend == pytest.approx(timeout, abs=1e-4) and resend - sent > 0.9


@pytest.mark.parametrize("lens", LENSES)
def test_c_the_second_loss_of_a_window_goes_again_on_the_ack_that_ends_the_recovery(lens):
    """Segments 40 and 45 lost in one window. The fast retransmit of 40 (third duplicate
    ACK) leaves the sender worried; the ACK of new data that ends its recovery (ACK 45,
    a round trip later) finds 45 sent about 160 ms before, past 9/8 fine_rto: 45 goes at
    once (F5), with no window change (ssthresh changes once, at the fast retransmit:
    20 - 20 // 4 = 15). Without the fine timer it waits for the third duplicate ACK
    after that ACK."""
    events, ssthresh = run(lens, [40, 45])
    (first,) = times(events, "retransmit", 40)
    (resend,) = times(events, "retransmit", 45)
    ends = min(t for t in times(events, "ack", 45) if t > first)
    assert resend == pytest.approx(ends, abs=2e-5)
    assert resend - times(events, "send", 45)[0] >= 9 / 8 * fine_rto(events, first)
    assert [v for _, v in ssthresh[1:]] == [15.0]
    assert not times(events, "timeout")

    events, _ = run(lens, [40, 45], fine=False)
    (resend,) = times(events, "retransmit", 45)
    dupacks = [t for t in times(events, "ack", 45) if ends < t < resend + 1e-9]
    assert len(dupacks) == 3


@pytest.mark.ns3
@pytest.mark.parametrize(("lost", "fix_level"), [
    ([21, 137, 156, 248, 331, 376, 389, 410, 412], 3),
    ([104, 110, 183, 214, 236, 258, 289, 306], 3),
    ([132, 138, 139, 168, 196, 255, 273, 303, 366, 409], 3),
    ([132, 138, 139, 168, 196, 255, 273, 303, 366, 409], 0)])
def test_both_lenses_resend_the_same_segments_at_the_same_instants(lost, fix_level):
    """Losses drawn at random over a transfer of 400 segments (two of them end in
    timeouts): with the fine timer the two lenses resend the same segments at the same
    instants (within a millisecond: ns-3 stamps a segment as it reaches the wire) and
    time out alike, at ns-2's fix level 3 and 0. The second pattern parted the lenses by
    6 ms while the net model did not inflate the window at a fast retransmit without a cut
    (ns-2 does: ``cwnd_ = win + dupacks_`` either way)."""
    (net, _), (ns3, _) = (run(lens, lost, segments=400, fix_level=fix_level)
                          for lens in ("net", "ns3"))
    for event in ("retransmit", "timeout"):
        a, b = (e[e.event == event] for e in (net, ns3))
        assert a.seg.tolist() == b.seg.tolist()
        assert a.time_s.to_numpy() == pytest.approx(b.time_s.to_numpy(), abs=1e-3)


def test_fine_timer_is_refused_without_the_ns2_rules():
    from tcpn.models.scenario import ScenarioError

    for params in ({**PARAMS, "loss_cut": "halve"}, {**PARAMS, "recovery": "newreno"}):
        with pytest.raises(ScenarioError, match=r"params\.fine_timer"):
            validate_scenario({
                "name": "x", "horizon_s": 1.0,
                "links": [{"a": "A", "b": "B", "rate_bps": 1e6, "delay_s": 0.01}],
                "flows": [{"id": "f", "src": "A", "dst": "B", "variant": "vegas",
                           "params": {**params, "fine_timer": True}}]})


@pytest.mark.parametrize("lens", LENSES)
def test_below_fix_level_3_a_recovery_of_three_duplicate_acks_ends_inflated(lens):
    """Segment 76 of 80 is lost when the window is 32 segments: segments 77-79 draw
    exactly three duplicate ACKs, the third a fast retransmit at ns-2's window 32 - 32 // 4
    = 24, inflated to 27. The ACK of the resent segment ends the recovery: ns-2's
    ``ns_vegas_fix_level_`` 3 deflates to 24; below 3 (ns-2.35 binds it without a default)
    the window stays at 27, as ``dupacks_ > NUMDUPACKS`` is false."""
    _ns3_or_skip(lens)
    ends = {}
    for level in (3, 0):
        scenario = validate_scenario({
            "name": "three", "horizon_s": 10.0,
            "links": [{"a": "A", "b": "R", "rate_bps": 1e9, "delay_s": 0.02,
                       "ab": {"errors": {"kind": "list", "packets": [76]}}},
                      {"a": "R", "b": "B", "rate_bps": 1e7, "delay_s": 0.02}],
            "flows": [{"id": "f", "src": "A", "dst": "B", "variant": "vegas",
                       "bytes": 80 * MSS, "params": {**PARAMS, "fine_timer": True,
                                                     **fixed(level)}}],
            "tcp": {"segment_size_bytes": MSS, "delack_count": 1, "sack": False,
                    "handshake": False, "limited_transmit": True, "timestamps": True,
                    "initial_cwnd_segments": 4, "initial_ssthresh_segments": 64}})
        result = run_once(scenario, lens, make_run(scenario))
        events = result.trace.flow_events
        resent = events[events.event == "retransmit"]
        assert (resent.seq // MSS).tolist() == [76]
        assert len(events[(events.event == "ack") & (events.seq == 76 * MSS)]) == 4
        ended = float(events[events.event == "ack"].time_s.max())
        # ns-3 records the window a few microseconds after the ACK it logs
        cwnd = [v for t, v in series(result, "cwnd_bytes") if t <= ended + 1e-3]
        assert max(cwnd) == 32
        ends[level] = cwnd[-1]
    assert ends == {3: 24, 0: 27}


def test_fix_level_needs_the_fine_timer():
    from tcpn.models.scenario import ScenarioError

    with pytest.raises(ScenarioError, match=r"params\.ns2_fix_level"):
        validate_scenario({
            "name": "x", "horizon_s": 1.0,
            "links": [{"a": "A", "b": "B", "rate_bps": 1e6, "delay_s": 0.01}],
            "flows": [{"id": "f", "src": "A", "dst": "B", "variant": "vegas",
                       "params": {**PARAMS, "ns2_fix_level": 0}}]})
