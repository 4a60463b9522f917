"""Vegas's base-RTT error and reverse-path RTT ambiguity, found by the model checker and
confirmed in the net lens and ns-3.

Two identical Vegas flows (alpha 2, beta 4) share a 1 Mbit/s bottleneck; the second starts
0.6 s late, when the first already keeps its segments queued, so its BaseRTT includes that
queue and it settles with a larger window (Mo, La, Anantharam and Walrand, INFOCOM 1999).
``share_settles`` with ``R = 1.5`` is false there and true when both start together (each
measures the true base RTT) or with ``R = 1.6`` (the late flow settles 1.58 times the
first's window); the counterexample replays in both lenses with the same windows. A
reverse flow whose data queues where the Vegas flow's ACKs wait makes it cut its window with
nothing queued on its forward path (study S1), unless S1's fixes are in place.
"""

from pathlib import Path

import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.experiments.confirm import confirm
from tcpn.lenses import evaluate
from tcpn.models.scenario import Scenario, dumbbell, load_scenario, validate_scenario
from tcpn.models.trace_properties import trace_verdict
from tcpn.models.traces import TraceWriter
from tcpn.models.verification import verification_net
from tcpn.models.verification.check import property_net, verify, verify_all

LATE = Path(__file__).resolve().parent.parent / "scenarios/verification/vegas_late_start.yaml"
SEGMENTS = 300


def starting(f1_start_s: float) -> Scenario:
    """The late-start scenario with flow f1 starting at ``f1_start_s``."""
    scenario = load_scenario(LATE)
    flows = [f.model_copy(update={"start_s": f1_start_s}) if f.id == "f1" else f
             for f in scenario.flows]
    return scenario.model_copy(update={"flows": flows})


def last_joint_windows(evidence) -> tuple[float, float]:
    """Both flows' cwnd at the path's last state with both open, in congestion avoidance
    and not complete (read from the path's markings)."""
    found = None
    for step in evidence.stem:
        tcbs = [step.marking.get(f"flow{i}.snd.tcb", []) for i in (0, 1)]
        if all(t and t[0].cwnd >= t[0].ssthresh and t[0].una < SEGMENTS for t in tcbs):
            found = (tcbs[0][0].cwnd, tcbs[1][0].cwnd)
    assert found is not None
    return found


def test_the_checker_finds_the_late_flow_settling_with_more():
    result = verify(LATE, "share_settles", segments=SEGMENTS, share_ratio=1.5)
    assert result.answer == "false"
    assert result.lost == {}  # nothing lost: the unfairness is Vegas's own
    early, late = last_joint_windows(result.verdict.evidence)
    assert late > 1.5 * early  # the flow that started second has the larger window
    assert (round(early, 2), round(late, 2)) == (5.0, 7.93)
    # why: f1's BaseRTT includes the three 8.4 ms segments f0 kept queued when it started
    end = result.verdict.evidence.stem[-1].marking
    base_ms = [end[f"flow{i}.snd.vegas"][0].base_rtt * 1000 for i in (0, 1)]
    assert base_ms == pytest.approx([33.75, 59.02], abs=0.01)


def test_equal_starts_settle_within_the_ratio_and_the_late_start_within_1_6():
    assert verify(starting(0.0), "share_settles", segments=SEGMENTS,
                  share_ratio=1.5).answer == "true"
    assert verify(LATE, "share_settles", segments=SEGMENTS, share_ratio=1.6).answer == "true"


def test_window_share_also_fails_on_the_slow_start_exit_and_holds_for_equal_starts():
    # "never above R" reads the transient too: f1 leaves slow start below f0's window
    late = verify(LATE, "window_share", segments=SEGMENTS, share_ratio=1.5)
    assert late.answer == "false"
    assert verify(starting(0.0), "window_share", segments=SEGMENTS,
                  share_ratio=1.5).answer == "true"


def test_the_counterexample_replays_in_the_net_lens_and_in_ns3_with_the_same_windows():
    prepared = property_net(LATE, segments=SEGMENTS, share_ratio=1.5)
    result = verify_all(LATE, "share_settles", segments=SEGMENTS, prepared=prepared)[0]
    confirmation = confirm(prepared, result, lenses=("net", "ns3"))
    assert [r.lens for r in confirmation.replays] == ["net", "ns3"]
    for replay in confirmation.replays:
        assert replay.verdict.shows is True, replay.lens
        assert "cwnd f0 5.00, f1 7.93 segments" in replay.verdict.evidence, replay.lens
        assert replay.lost == ()
    control = property_net(starting(0.0), segments=SEGMENTS, share_ratio=1.5)
    scenario = control.verification.simulation_scenario()
    for lens in ("net", "ns3"):
        trace = evaluate(scenario, lens).trace
        assert trace_verdict("share_settles", trace, "f0", 1.5).shows is False, lens


def test_the_trace_readings_of_the_share_properties():
    def run(windows):
        s = dumbbell(pairs=2, horizon_s=2.0)
        w = TraceWriter(s, s.concrete_flows(1))
        for time_s, flow, cwnd in windows:
            w.flow_value(time_s, flow, "ssthresh_bytes", 2 * 536)
            w.flow_value(time_s, flow, "cwnd_bytes", cwnd * 536)
        return w.close()
    trace = run([(0.1, "f0", 10), (0.2, "f1", 4), (0.5, "f1", 8)])
    flows = trace.flow_ids
    assert trace_verdict("window_share", trace, flows[0], 2.0).shows is True
    assert "2.50 x" in trace_verdict("window_share", trace, flows[0], 2.0).evidence
    assert "1.25 x" in trace_verdict("share_settles", trace, flows[0], 1.2).evidence
    assert trace_verdict("share_settles", trace, flows[0], 2.0).shows is False
    assert trace_verdict("share_settles", trace, flows[0], 1.2).shows is True
    assert trace_verdict("share_settles", trace, flows[0], None).shows is None


def test_a_missing_or_meaningless_ratio_is_refused_naming_it():
    with pytest.raises(InputError, match="property share_settles: its ratio R is not given"):
        verify(LATE, "share_settles", segments=4)
    with pytest.raises(InputError, match=r"share ratio 0\.5"):
        verify(LATE, "window_share", segments=4, share_ratio=0.5)
    results = {r.property.name: r for r in verify_all(LATE, "all", segments=2, flow="f0")}
    assert results["share_settles"].answer == "n/a"
    assert "--share-ratio" in results["window_share"].reason


def test_cli_share_ratio_goes_with_property():
    result = run_tcpn("check", str(LATE), "--share-ratio", "1.5")
    assert result.returncode == 3
    assert "--share-ratio go with --property" in result.stderr


def test_a_third_arrival_squeezes_the_first_flow_beyond_twice():
    three = LATE.with_name("vegas_three_arrivals.yaml")
    result = verify(three, "share_settles", segments=400, share_ratio=2.0)
    assert result.answer == "false"
    last = None
    for step in result.verdict.evidence.stem:
        tcbs = [step.marking.get(f"flow{i}.snd.tcb", []) for i in (0, 1, 2)]
        if all(t and t[0].cwnd >= t[0].ssthresh and t[0].una < 400 for t in tcbs):
            last = [round(t[0].cwnd, 2) for t in tcbs]
    assert last == [4.0, 6.93, 9.52]  # in the order of arrival: the first has least
    assert verify(LATE, "share_settles", segments=SEGMENTS, share_ratio=2.0).answer == "true"


REVERSE = LATE.with_name("vegas_reverse_path.yaml")


def reverse_with(change) -> Scenario:
    """The reverse-path scenario changed by ``change`` (a function of its dict)."""
    data = load_scenario(REVERSE).model_dump(exclude_unset=True)
    change(data)
    return validate_scenario(data)


def test_reverse_path_queueing_makes_vegas_cut_with_its_forward_path_empty():
    # study S1: the ACKs wait behind the reverse flow's data at R2 -> R1
    result = verify(REVERSE, "vegas_cuts_on_forward_queue", segments=SEGMENTS, flow="f0")
    assert result.answer == "false" and result.lost == {}
    end = result.verdict.evidence.stem[-1].marking
    assert end["flow0.blind_cuts"] == [1]
    assert round(end["flow0.snd.tcb"][0].cwnd, 2) == 6.58
    # where it holds: f0 cuts only with packets queued ahead of it (the late start: the
    # cuts find 7 and 9), or S1's fixes take the reverse queue out of its samples: small
    # packets first at R2 -> R1, or Modified Vegas's forward-only RTT
    assert verify(LATE, "vegas_cuts_on_forward_queue", segments=SEGMENTS,
                  flow="f0").answer == "true"

    def sgpq(data):
        data["links"][2]["ba"] = {"queue": {"kind": "sgpq", "limit": 50}}

    def modified(data):
        data["flows"][0]["variant"] = "modified_vegas"
    for change in (sgpq, modified):
        assert verify(reverse_with(change), "vegas_cuts_on_forward_queue",
                      segments=SEGMENTS, flow="f0").answer == "true", change.__name__


def test_the_blind_cut_observer_changes_no_state():
    prepared = property_net(REVERSE, segments=200)  # f1 starts after f0 sent ~120
    plain = prepared.verification.explore()
    bare = verification_net(load_scenario(REVERSE), segments=200).explore()
    assert (plain.n_states, plain.n_edges, len(plain.dead_markings())) == (
        bare.n_states, bare.n_edges, len(bare.dead_markings()))


def test_the_reverse_path_counterexample_shows_in_the_net_lens_and_in_ns3():
    prepared = property_net(REVERSE, segments=SEGMENTS, flow="f0")
    result = verify_all(REVERSE, "vegas_cuts_on_forward_queue", segments=SEGMENTS,
                        prepared=prepared)[0]
    confirmation = confirm(prepared, result, lenses=("net", "ns3"))
    assert confirmation.path_lost == ()  # f1's queue drops are not f0's losses
    for replay in confirmation.replays:
        assert replay.verdict.shows is True, replay.lens
        assert replay.verdict.evidence.startswith(
            "f0's cwnd 7.58 -> 6.58 segments at 2.126 s with A->R1, R1->R2, R2->D empty "
            "(4 of 5 cuts"), replay.lens
