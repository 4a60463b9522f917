"""Verification nets: losses as bounded choices, hand-derived spaces, replay in the simulator."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tcpn.errors import InputError
from tcpn.models.scenario import Scenario, validate_scenario
from tcpn.models.verification import LossBudget, verification_net
from tcpn.petrinets import Simulator
from tcpn.petrinets.statespace.space import StateSpace


def p2p(variant: str = "reno", **tcp: Any) -> Scenario:
    """A -> B over one 8 Mb/s, 10 ms link; one connection; no handshake; initial cwnd 2."""
    settings = {"handshake": False, "initial_cwnd_segments": 2,
                "sack": variant not in ("reno", "tahoe"), **tcp}
    return validate_scenario({
        "name": "p2p", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01}],
        "flows": [{"src": "A", "dst": "B", "variant": variant}], "tcp": settings})


def names(path: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [t for t, _b in path]


def maximal_paths(space: StateSpace) -> list[list[str]]:
    """Every path from the initial state to a dead marking (the spaces here are acyclic)."""
    paths: list[list[str]] = []
    stack: list[tuple[int, list[str]]] = [(0, [])]
    while stack:
        state, prefix = stack.pop()
        edges = space.edges(state)
        if not edges:
            paths.append(prefix)
        stack.extend((e.target, [*prefix, e.transition]) for e in edges)
    return sorted(paths)


# The two-segment transfer without loss, derived by hand: ``open`` at 0, segment 0 cuts
# through the empty queue (``direct``), segment 1 waits for the transmitter (``enqueue``,
# then ``transmit`` 590 bytes * 8 / 8 Mb/s = 0.59 ms later); the receiver holds segment 0
# (delayed ACK, count 2) and acknowledges both at segment 1 (``ack_now``); the ACK comes back
# (``direct``) and the sender takes it (``new_ack``): 10 firings.
OPEN = ["flow0.snd.open", "flow0.snd.send", "A.B.direct", "flow0.snd.send", "A.B.enqueue"]
NO_LOSS = [*OPEN, "A.B.transmit", "flow0.rcv.hold", "flow0.rcv.ack_now", "B.A.direct",
           "flow0.snd.new_ack"]
# Segment 0 lost: segment 1 arrives out of order, its duplicate ACK is the only one (no fast
# retransmit with 1 duplicate), the RTO (1 s) resends segment 0, which fills the gap.
LOSE_FIRST = [*OPEN[:2], "A.B.direct_lost", *OPEN[3:], "A.B.transmit", "flow0.rcv.out_of_order",
              "B.A.direct", "flow0.snd.dup_ack", "flow0.snd.timeout", "flow0.snd.send",
              "A.B.direct", "flow0.rcv.ack_now", "B.A.direct", "flow0.snd.new_ack"]
# Segment 1 lost: segment 0 is acknowledged by the delayed-ACK timer (0.2 s), the RTO
# restarted by that ACK resends segment 1, acknowledged by the delayed-ACK timer again.
LOSE_SECOND = [*OPEN, "A.B.transmit_lost", "flow0.rcv.hold", "flow0.rcv.delack_timeout",
               "B.A.direct", "flow0.snd.new_ack", "flow0.snd.timeout", "flow0.snd.send",
               "A.B.direct", "flow0.rcv.hold", "flow0.rcv.delack_timeout", "B.A.direct",
               "flow0.snd.new_ack"]
# The single ACK lost: the RTO resends segment 0 (go-back-N from una), a duplicate at the
# receiver, which acknowledges both at once.
LOSE_ACK = [*NO_LOSS[:8], "B.A.direct_lost", "flow0.snd.timeout", "flow0.snd.send",
            "A.B.direct", "flow0.rcv.duplicate", "B.A.direct", "flow0.snd.new_ack"]


def test_no_budget_is_the_simulators_single_chain():
    space = verification_net(p2p(), segments=2).explore()
    assert (len(space), space.n_edges, space.complete) == (11, 10, True)
    assert maximal_paths(space) == [NO_LOSS]
    (end,) = space.dead_markings()
    # 2 serialisations of 590 bytes + 10 ms + one 54-byte ACK + 10 ms
    assert space.clock(end) == pytest.approx(2 * 590 * 8 / 8e6 + 0.01 + 54 * 8 / 8e6 + 0.01)


def test_two_segments_one_data_loss_has_exactly_the_hand_enumerated_paths():
    v = verification_net(p2p(), segments=2, losses=LossBudget(data_losses=1))
    space = v.explore()
    assert maximal_paths(space) == sorted([NO_LOSS, LOSE_FIRST, LOSE_SECOND])
    # a tree: 1 initial state + 10 + the 13 firings after the 2 shared ones of LOSE_FIRST
    # + the 12 after the 5 shared ones of LOSE_SECOND
    assert (len(space), space.n_edges) == (1 + 10 + 13 + 12, 35)
    for end in space.dead_markings():
        marking = space.marking(end)
        assert marking["flow0.rcv.rcv"][0].value.nxt == 2
    lost = sorted(v.scripted_losses(space.path_to(e)).get("A->B", ())
                  for e in space.dead_markings())
    assert lost == [(), (0,), (1,)]


def test_one_ack_loss_and_two_data_losses():
    space = verification_net(p2p(), segments=2, losses=LossBudget(ack_losses=1)).explore()
    assert maximal_paths(space) == sorted([NO_LOSS, LOSE_ACK])
    assert (len(space), space.n_edges) == (1 + 10 + 7, 17)
    space = verification_net(p2p(), segments=2, losses=LossBudget(data_losses=2)).explore()
    # the three above, the retransmission of either lost too, and both originals lost
    assert len(space.dead_markings()) == 6
    budgets = {space.marking(e)["losses"][0].value for e in space.dead_markings()}
    assert budgets == {(2, 0), (1, 0), (0, 0)}


def test_a_budget_per_window_counts_losses_by_segment_window():
    """One loss per window of one segment: each original may be lost, not a segment
    twice (its retransmission is in its window); per run, two losses also take a
    retransmission (the six of the test above)."""
    v = verification_net(p2p(), segments=2, losses=LossBudget(data_losses=1, per_window=1))
    space = v.explore()
    lost = sorted(v.scripted_losses(space.path_to(e)).get("A->B", ())
                  for e in space.dead_markings())
    assert lost == [(), (0,), (0, 1), (1,)]
    assert space.marking(0)["losses"][0].value == ((1, 1), 0)
    v = verification_net(p2p(), segments=2, losses=LossBudget(data_losses=1, per_window=2))
    assert len(v.explore().dead_markings()) == 3  # one window: as per run


def test_losses_only_on_the_directions_named():
    v = verification_net(p2p(), segments=2, losses=LossBudget(ack_losses=1, data_losses=1,
                                                              links=("A->B",)))
    assert v.choices == ("A.B.transmit_lost", "A.B.direct_lost")
    assert maximal_paths(v.explore()) == sorted([NO_LOSS, LOSE_FIRST, LOSE_SECOND])


def test_scripted_list_still_loses_exactly_its_packets():
    s = p2p()
    data = s.model_dump(exclude_none=True)
    data["links"][0]["ab"]["errors"] = {"kind": "list", "packets": [1]}
    scripted = validate_scenario({**data, "flows": [{"src": "A", "dst": "B",
                                                     "variant": "reno"}]})
    space = verification_net(scripted, segments=2).explore()
    expected = [t.replace("transmit_lost", "transmit") for t in LOSE_SECOND]
    assert maximal_paths(space) == [expected]


def test_roles_name_places_of_the_net():
    v = verification_net(p2p("newreno", handshake=True), segments=2,
                         losses=LossBudget(data_losses=1))
    assert v.roles["flow0.sender"].places["tcb"] == "flow0.snd.tcb"
    assert v.roles["flow0.receiver"].places["rcv"] == "flow0.rcv.rcv"
    assert set(v.roles["A->B.link"].transitions) >= {"A.B.transmit", "A.B.transmit_lost"}
    assert v.roles["losses"].places["budget"] == "losses"
    for role in v.roles.values():
        assert set(role.places.values()) <= set(v.net.places)
        assert set(role.transitions) <= set(v.net.transitions)
    assert all(v.simulator_transition(c) in v.net.transitions for c in v.choices)


@pytest.mark.parametrize("scenario", [lambda: p2p("sack", handshake=True),
                                      lambda: red(True), lambda: shared_bottleneck()])
def test_transitions_are_the_simulators_plus_the_choices(scenario):
    v = verification_net(scenario(), segments=2, losses=LossBudget(1, 1), delay_points=2)
    simulator = v.simulation_net()
    assert set(v.net.transitions) - set(v.choices) == set(simulator.transitions)
    assert set(v.choices) == set(v.twins) | set(v.delay_choices)
    for name, transition in simulator.transitions.items():  # same guards and priorities
        assert (v.net.transitions[name].guard, v.net.transitions[name].priority) == (
            transition.guard, transition.priority)


VARIANTS = ["tahoe", "reno", "newreno", "sack", "ecn_newreno", "vegas", "modified_vegas",
            "adaptive_vegas", "westwood_plus", "tcp_l", "cubic"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_path_replays_in_the_simulator(variant):
    """Each path to a dead marking, fired in the simulator's own net with the path's losses
    scripted (choices forced), is taken step by step (each binding among those the
    simulator may fire next) and ends in the same marking at the same time."""
    v = verification_net(p2p(variant, handshake=True), segments=2,
                         losses=LossBudget(data_losses=1, ack_losses=1))
    space = v.explore()
    assert space.complete
    ends = space.dead_markings()
    assert len(ends) > 10
    for end in ends:
        path = space.path_to(end)
        firings = v.replay(path)
        assert [f.transition for f in firings] == [v.simulator_transition(t) for t in
                                                   names(path)]
        assert firings[-1].time == pytest.approx(space.clock(end))
        assert space.marking(end)["flow0.rcv.rcv"][0].value.nxt == 2


def test_simulator_runs_are_paths_of_the_space():
    """The other way round: the simulator, its ties broken at random, with losses scripted
    within the budget, follows edges of the space and stops in one of its dead markings."""
    v = verification_net(p2p("newreno", handshake=True), segments=4,
                         losses=LossBudget(data_losses=2, links=("A->B",)))
    space = v.explore()
    for lost in ([], [2], [3, 4], [2, 5]):  # frame 0 is the SYN, 1 the handshake's ACK
        for seed in (1, 2):
            sim = Simulator(v.simulation_net({"A->B": lost}), seed=seed)
            state = 0
            while (firing := sim.step()) is not None:
                choice = f"{firing.transition}_lost" if firing.transition.endswith(
                    ("transmit", "direct")) and firing.binding.get("sent") in lost else None
                matches = [e for e in space.edges(state)
                           if e.transition == (choice or firing.transition)
                           and all(e.binding[k] == x for k, x in firing.binding.items())]
                assert matches, f"{firing} is no edge of state {state} (losses {lost})"
                state = matches[0].target
            assert state in space.dead_markings()


@pytest.mark.parametrize(("call", "message"), [
    (lambda: LossBudget(data_losses=-1), "data_losses must be a whole number >= 0"),
    (lambda: LossBudget(ack_losses=math.inf), "unbounded budget makes the state space infinite"),
    (lambda: LossBudget(data_losses=True), "data_losses must be a whole number"),
    (lambda: LossBudget(data_losses=1, per_window=0), "per_window must be a whole number"),
    (lambda: verification_net(p2p(), segments=0), "segments must be a whole number >= 1"),
    (lambda: verification_net(p2p(), segments=None), "bulk transfer's space never closes"),
    (lambda: verification_net(p2p(), segments=2, losses=LossBudget(1, links=("B->C",))),
     "link direction 'B->C' is not in scenario p2p"),
])
def test_budgets_that_cannot_close_are_refused(call, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        call()


def _with(**changes: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "p2p", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01}],
        "flows": [{"src": "A", "dst": "B", "variant": "reno"}],
        "tcp": {"handshake": False, "sack": False}}
    for key, value in changes.items():
        if key in ("queue", "errors"):
            data["links"][0][key] = value
        else:
            data["flows"][0][key] = value
    return validate_scenario(data)


@pytest.mark.parametrize(("scenario", "message"), [
    (lambda: _with(errors={"kind": "rate", "unit": "packet", "rate": 0.01}),
     r"links\[0\].ab.errors: random losses \(rate 0.01\) on A->B"),
    (lambda: _with(start_s={"dist": "uniform", "low_s": 0.0, "high_s": 1.0}),
     r"flows\[0\].start_s: drawn at random; give verification_net\(..., delay_points=m\)"),
    (lambda: _with(start_s={"dist": "exponential", "mean_s": 1.0}),
     r"flows\[0\].start_s: an unbounded random time \(exponential\) cannot be"),
    (lambda: _with(count=2, gap_s={"dist": "exponential", "mean_s": 1.0}),
     r"flows\[0\].gap_s: an unbounded random time \(exponential\)"),
    (lambda: _with(receiver_clock_offset_s={"dist": "uniform", "low_s": 0.0, "high_s": 1.0}),
     r"flows\[0\].receiver_clock_offset_s: drawn at random; it offsets"),
])
def test_random_elements_that_are_not_choices_yet_are_named(scenario, message):
    with pytest.raises(InputError, match=message):
        verification_net(scenario(), segments=2)


def test_random_error_model_becomes_a_choice_where_the_budget_allows():
    s = _with(errors={"kind": "rate", "unit": "packet", "rate": 0.01})
    v = verification_net(s, segments=2, losses=LossBudget(data_losses=1))
    assert "A.B.transmit_lost" in v.choices
    assert v.explore().complete


def red(ecn: bool) -> Scenario:
    """Six segments in one window into a RED queue whose average is the instantaneous
    length (weight 1): arrivals 5 and 6 meet an early-drop probability strictly between 0
    and 1 (no ``wait``; arrival 4 is the first above ``min_th``, accepted as RED's first),
    so each may be accepted or dropped (marked, with ECN)."""
    return validate_scenario({
        "name": "red", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01,
                   "queue": {"kind": "red", "limit": 20, "min_th": 0, "max_th": 10,
                             "max_p": 0.1, "q_weight": 1.0, "wait": False, "ecn": ecn}}],
        "flows": [{"src": "A", "dst": "B", "variant": "ecn_newreno" if ecn else "newreno"}],
        "tcp": {"handshake": False, "initial_cwnd_segments": 6}})


def early_decisions(space: StateSpace) -> list[int]:
    """The number of early RED verdicts on each path to a dead marking."""
    return sorted(sum(t == "A.B.decide_early" for t in path) for path in maximal_paths(space))


def test_red_early_drops_are_choices_within_the_loss_budget():
    v = verification_net(red(False), segments=6, losses=LossBudget(links=()))
    space = v.explore()
    assert early_decisions(space) == [0]  # no budget: RED may not drop early
    v = verification_net(red(False), segments=6, losses=LossBudget(data_losses=1, links=()))
    space = v.explore()
    assert early_decisions(space) == [0, 1, 1]  # arrival 5 or 6 dropped early
    for end in space.dead_markings():
        assert space.marking(end)["flow0.rcv.rcv"][0].value.nxt == 6
        v.replay(space.path_to(end))


def test_red_marks_are_choices_outside_the_budget_and_replay():
    v = verification_net(red(True), segments=6, losses=LossBudget(links=()))
    space = v.explore()
    # arrival 5, 6 or both marked; one reduction per window whichever, so paths merge
    assert early_decisions(space) == [0, 1, 1, 2]
    for end in space.dead_markings():
        firings = v.replay(space.path_to(end))
        assert firings[-1].time == pytest.approx(space.clock(end))


def shared_bottleneck() -> Scenario:
    """Two 4-segment transfers into a 2 Mb/s bottleneck holding 3 packets; the second
    starts at a time drawn uniformly from [0, 4 ms]."""
    return validate_scenario({
        "name": "two", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "R", "rate_bps": 8e6, "delay_s": 0.001},
                  {"a": "C", "b": "R", "rate_bps": 8e6, "delay_s": 0.001},
                  {"a": "R", "b": "B", "rate_bps": 2e6, "delay_s": 0.01,
                   "queue": {"kind": "drop_tail", "limit": 3}}],
        "flows": [{"src": "A", "dst": "B", "variant": "newreno"},
                  {"src": "C", "dst": "B", "variant": "newreno",
                   "start_s": {"dist": "uniform", "low_s": 0.0, "high_s": 0.004}}],
        "tcp": {"handshake": False, "initial_cwnd_segments": 4}})


def test_a_random_start_becomes_a_choice_among_discrete_times():
    v = verification_net(shared_bottleneck(), segments=4, delay_points=3)
    assert v.start_chain == {"group1.start": (1, 0)}
    assert {t: c.delays for t, c in v.delay_choices.items()} == {
        "group1.start'0": (0.0,), "group1.start'1": (0.002,), "group1.start'2": (0.004,)}
    assert "starts after one of 0, 0.002, 0.004 s" in " ".join(v.abstractions)
    space = v.explore()
    starts = set()
    for end in space.dead_markings():
        path = space.path_to(end)
        starts.add(v.chosen_starts(path)[1])  # connection 1 is flows[1]'s
        firings = v.replay(path)  # the simulator with connection 1's start fixed at the choice
        assert firings[-1].time == pytest.approx(space.clock(end))
        marking = space.marking(end)
        assert [marking[f"flow{i}.rcv.rcv"][0].value.nxt for i in (0, 1)] == [4, 4]
    assert starts == {0.0, 0.002, 0.004}
    # both starting at 0: the order of simultaneous arrivals decides which segments the
    # full queue drops, and the explorer keeps both outcomes
    assert len(space.dead_markings()) == 4


def test_a_random_gap_chains_the_connections_start_times():
    """Two connections of one group, the first at 0, the second a uniform [0, 0.004] gap
    later: with 2 points the second starts at 0 or 0.004, and each replays."""
    s = validate_scenario({
        "name": "gap", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01}],
        "flows": [{"src": "A", "dst": "B", "variant": "newreno", "count": 2,
                   "gap_s": {"dist": "uniform", "low_s": 0.0, "high_s": 0.004}}],
        "tcp": {"handshake": False, "initial_cwnd_segments": 2}})
    v = verification_net(s, segments=1, delay_points=2)
    assert v.start_chain == {"group0.start": (0, 0), "group0.gap1": (0, 1)}
    space = v.explore()
    seen = set()
    for end in space.dead_markings():
        path = space.path_to(end)
        starts = v.chosen_starts(path)
        seen.add((starts[0], starts[1]))
        assert v.replay(path)[-1].time == pytest.approx(space.clock(end))
    assert seen == {(0.0, 0.0), (0.0, 0.004)}


def test_tcp_l_reaction_is_a_choice_only_where_its_probability_is_open():
    """TCP-L reacts to a loss with probability P_congestion: the draw becomes a choice
    (``_react``) only where 0 < P < 1; before any link report P = 1 (always react), so a
    single loss is never a choice, and the reporter stops once all is acknowledged, so the
    space closes."""
    scenario = p2p("tcp_l", handshake=True)
    v = verification_net(scenario, segments=4, losses=LossBudget(data_losses=1, ack_losses=1))
    assert {"flow0.snd.fast_retransmit_react", "flow0.snd.timeout_react",
            "flow0.rep.take_report_unopened"} <= set(v.choices)
    space = v.explore()
    assert space.complete
    assert not any(e.transition.endswith("_react") for s in range(len(space))
                   for e in space.edges(s))
    v = verification_net(scenario, segments=4, losses=LossBudget(data_losses=2, ack_losses=1))
    space = v.explore()
    reacting = [space.path_to(e) for e in space.dead_markings()
                if any(t.endswith("_react") for t in names(space.path_to(e)))]
    assert reacting  # two losses after a report: P strictly between 0 and 1
    for path in reacting:
        # the simulator's draw forced to 0: it reacts, and every later binding (which
        # holds the sender's tcb) must be the one the explorer found
        assert len(v.replay(path)) == len(path)


def _queued(queue: dict[str, Any]) -> Scenario:
    return _with(queue=queue, variant="reno")


@pytest.mark.parametrize("queue", [
    {"kind": "sgpq", "limit": 3},
    {"kind": "token_bucket", "limit": 3, "rate_bps": 1e6, "depth_bytes": 600},
    {"kind": "token_bucket", "limit": 3, "rate_bps": 1e6, "depth_bytes": 3000,
     "mode": "policer"},
])
def test_small_first_and_token_bucket_queues_are_explored_and_replay(queue):
    """Their decisions are deterministic (sizes, the bucket's level at ``now``), so with
    one data loss the ends are the three hand-counted ones: nothing lost, segment 0 lost,
    segment 1 lost; every path replays in the simulator and delivers both segments."""
    s = _queued(queue)
    s = s.model_copy(update={"tcp": s.tcp.model_copy(update={"initial_cwnd_segments": 2})})
    v = verification_net(s, segments=2, losses=LossBudget(data_losses=1))
    space = v.explore()
    ends = space.dead_markings()
    assert sorted(v.scripted_losses(space.path_to(e)).get("A->B", ()) for e in ends) == [
        (), (0,), (1,)]
    for end in ends:
        path = space.path_to(end)
        assert v.replay(path)[-1].time == pytest.approx(space.clock(end))
        assert space.marking(end)["flow0.rcv.rcv"][0].value.nxt == 2


def test_a_policer_drop_counts_as_a_loss_for_the_properties():
    """A 600-byte bucket polices the second segment of the initial window (a deterministic
    drop, outside the budget): its retransmission is not spurious."""
    from tcpn.models.verification.check import verify
    s = _queued({"kind": "token_bucket", "limit": 3, "rate_bps": 1e6, "depth_bytes": 600,
                 "mode": "policer"})
    s = s.model_copy(update={"tcp": s.tcp.model_copy(update={"initial_cwnd_segments": 2})})
    assert verify(s, "no_spurious_retransmission", segments=2).answer == "true"


def _wifi() -> Scenario:
    """A -> B over an 802.11 hop, 3 attempts per frame (retry limit 2), 10 % frame errors
    on the data direction, none on the ACKs'."""
    return validate_scenario({
        "name": "wifi", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01,
                   "wireless": {"station": "B", "retry_limit": 2},
                   "ab": {"errors": {"kind": "rate", "unit": "packet", "rate": 0.1}}}],
        "flows": [{"src": "A", "dst": "B", "variant": "reno"}],
        "tcp": {"handshake": False, "initial_cwnd_segments": 2, "sack": False}})


def test_802_11_attempts_are_choices_with_hand_counted_ends():
    """One segment, one data loss: the frame gets through at attempt 1, 2 or 3, or fails
    all 3 (a loss) and its retransmission gets through at attempt 1, 2 or 3: 6 ends. Each
    extra attempt costs the failed one's 192 us preamble + 624 bytes at 8 Mbit/s (the
    588-byte IP packet, timestamps on, and 36 bytes of MAC framing) + the 222 us ACK
    timeout (SIFS 10 + slot 20 + preamble 192), after which the retry's backoff runs at
    once (the medium idle for more than DIFS; the verification net's backoffs are 0 slots)
    = 1.038 ms; the ACK direction has no errors, so its attempts are no choice."""
    v = verification_net(_wifi(), segments=1, losses=LossBudget(1, links=("A->B",)),
                         delay_points=3)
    assert {c for c in v.choices if v.twins.get(c) == "A.B.finish"} == {
        "A.B.finish_failed", "A.B.finish_lost"}
    space = v.explore()
    ends = sorted(space.dead_markings(), key=space.clock)
    first = space.clock(ends[0])
    assert [round(space.clock(e) - first, 6) for e in ends] == [
        0.0, 0.001038, 0.002076, 1.0, 1.001038, 1.002076]
    assert not any(t.startswith("B.A.finish_") for e in ends for t in names(space.path_to(e)))
    for end in ends:  # the simulator, its attempts' draws forced, takes the same steps
        path = space.path_to(end)
        assert v.replay(path)[-1].time == pytest.approx(space.clock(end))
    # the default points are the interval's ends: 1 or 3 attempts
    assert len(verification_net(_wifi(), segments=1, losses=LossBudget(1, links=("A->B",))
                                ).explore().dead_markings()) == 4


def test_802_11_losses_need_a_budget_on_their_direction():
    with pytest.raises(InputError, match=r"links\[0\].ab.errors: random losses \(rate 0.1\)"):
        verification_net(_wifi(), segments=1)


def test_a_paced_application_is_verifiable_with_hand_computed_times():
    """236 kbit/s pacing writes a 536-byte segment every 536 * 8 / 236000 s: without loss
    the transfer of 2 ends when the second segment (sent at that time, 0.59 ms on the
    wire, 10 ms away) is acknowledged at once (delayed ACK count 2) and the 54-byte ACK is
    back 10.054 ms later; one data loss gives the two other ends."""
    v = verification_net(_with(app_rate_bps=236000.0, variant="reno").model_copy(
        update={"tcp": _with().tcp.model_copy(update={"initial_cwnd_segments": 2})}),
        segments=2, losses=LossBudget(data_losses=1))
    space = v.explore()
    ends = space.dead_markings()
    assert sorted(v.scripted_losses(space.path_to(e)).get("A->B", ()) for e in ends) == [
        (), (0,), (1,)]
    clean = next(e for e in ends if not v.scripted_losses(space.path_to(e)))
    assert space.clock(clean) == pytest.approx(536 * 8 / 236000 + 0.00059 + 0.01 + 0.000054
                                               + 0.01)
    for end in ends:
        assert v.replay(space.path_to(end))[-1].time == pytest.approx(space.clock(end))
