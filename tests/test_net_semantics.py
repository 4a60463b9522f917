"""Hand-derived behaviour of small nets: each arc kind, guards, time, priorities, choice."""

from __future__ import annotations

import math

import pytest

from tcpn.petrinets import (
    INT,
    P_HIGH,
    P_LOW,
    STRING,
    UNIT,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Token,
    Transition,
    simulate,
)


def values(result, place):
    return sorted(t.value for t in result.marking[place])


def one_transition_net(**transition_kwargs) -> PetriNet:
    net = PetriNet("t1")
    net.add_transition(Transition("t", **transition_kwargs))
    return net


class TestArcs:
    def test_input_output_moves_tokens_and_stops_dead(self):
        net = one_transition_net()
        net.add_place(Place("a", INT, initial=[1, 2, 3]))
        net.add_place(Place("b", INT))
        net.add_input("a", "t", "x")
        net.add_output("b", "t", "x * 10")
        result = simulate(net, seed=0)
        assert result.stop_reason == "dead"
        assert result.firings == 3
        assert values(result, "a") == []
        assert values(result, "b") == [10, 20, 30]

    def test_read_arc_requires_but_keeps_the_token(self):
        net = one_transition_net(guard="n < limit")
        net.add_place(Place("limit", INT, initial=[4]))
        net.add_place(Place("n", INT, initial=[0]))
        net.add_read("limit", "t", "limit")
        net.add_input("n", "t", "n")
        net.add_output("n", "t", "n + 1")
        result = simulate(net, seed=0)
        assert result.firings == 4
        assert values(result, "limit") == [4]
        assert values(result, "n") == [4]

    def test_read_arc_without_token_disables(self):
        net = one_transition_net()
        net.add_place(Place("flag", UNIT))
        net.add_place(Place("a", UNIT, initial=[()]))
        net.add_read("flag", "t", "()")
        net.add_input("a", "t", "()")
        assert simulate(net, seed=0).firings == 0

    def test_inhibitor_without_inscription_needs_empty_place(self):
        # t moves tokens from a to b while 'stop' is empty; u puts a token on stop once.
        net = PetriNet("inh")
        net.add_place(Place("a", INT, initial=[1, 2]))
        net.add_place(Place("b", INT))
        net.add_place(Place("stop", UNIT, initial=[()]))
        net.add_transition(Transition("t"))
        net.add_input("a", "t", "x")
        net.add_output("b", "t", "x")
        net.add_inhibitor("stop", "t")
        assert simulate(net, seed=0).firings == 0

    def test_inhibitor_with_variable_blocks_only_matching_values(self):
        # SNAKES' inhibitor arcs fail for transitions with variables; these must work.
        net = one_transition_net()
        net.add_place(Place("a", INT, initial=[1, 2, 3]))
        net.add_place(Place("blocked", INT, initial=[2]))
        net.add_place(Place("b", INT))
        net.add_input("a", "t", "x")
        net.add_inhibitor("blocked", "t", "x")
        net.add_output("b", "t", "x")
        result = simulate(net, seed=0)
        assert values(result, "b") == [1, 3]
        assert values(result, "a") == [2]

    def test_inhibitor_with_count_allows_fewer_tokens(self):
        # enabled while 'queue' holds fewer than 3 tokens: fills the queue to exactly 3
        net = one_transition_net()
        net.add_place(Place("queue", UNIT))
        net.add_inhibitor("queue", "t", "()", count=3)
        net.add_output("queue", "t", "()")
        result = simulate(net, seed=0, max_firings=10)
        assert result.firings == 3 and result.stop_reason == "dead"

    def test_reset_arc_empties_the_place(self):
        net = one_transition_net()
        net.add_place(Place("go", UNIT, initial=[()]))
        net.add_place(Place("junk", INT, initial=[1, 1, 5, 7]))
        net.add_place(Place("done", UNIT))
        net.add_input("go", "t", "()")
        net.add_reset("junk", "t")
        net.add_output("done", "t", "()")
        result = simulate(net, seed=0)
        assert result.marking["junk"] == [] and len(result.marking["done"]) == 1

    def test_counts_constant_and_expression(self):
        net = one_transition_net()
        net.add_place(Place("a", INT, initial=[3, 3, 3, 3, 3]))
        net.add_place(Place("b", STRING))
        net.add_input("a", "t", "x", count=2)
        net.add_output("b", "t", "'k'", count="x - 1")
        result = simulate(net, seed=0)
        # two firings consume 4 of the five 3s, each produces 2 tokens 'k'
        assert result.firings == 2
        assert values(result, "a") == [3]
        assert values(result, "b") == ["k"] * 4

    def test_when_condition_produces_conditionally(self):
        net = one_transition_net()
        net.add_place(Place("a", INT, initial=list(range(6))))
        net.add_place(Place("even", INT))
        net.add_place(Place("odd", INT))
        net.add_input("a", "t", "x")
        net.add_output("even", "t", "x", when="x % 2 == 0")
        net.add_output("odd", "t", "x", when="x % 2 == 1")
        result = simulate(net, seed=0)
        assert values(result, "even") == [0, 2, 4]
        assert values(result, "odd") == [1, 3, 5]

    def test_tuple_patterns_with_constants_and_joins(self):
        pair = ProductSet(STRING, INT)
        net = one_transition_net()
        net.add_place(Place("msgs", pair, initial=[("ack", 1), ("data", 2), ("ack", 3)]))
        net.add_place(Place("expected", INT, initial=[3]))
        net.add_place(Place("got", INT))
        net.add_input("msgs", "t", "('ack', n)")
        net.add_input("expected", "t", "n")
        net.add_output("got", "t", "n")
        result = simulate(net, seed=0)
        assert values(result, "got") == [3]
        assert sorted(t.value for t in result.marking["msgs"]) == [("ack", 1), ("data", 2)]

    def test_two_arcs_from_one_place_need_both_tokens(self):
        net = one_transition_net(guard="x < y")
        net.add_place(Place("a", INT, initial=[5]))
        net.add_place(Place("b", INT))
        net.add_input("a", "t", "x")
        net.add_input("a", "t", "y")
        net.add_output("b", "t", "x + y")
        # a single token cannot be both x and y: x < y excludes x == y anyway, and the
        # count check excludes binding one token twice
        assert simulate(net, seed=0).firings == 0
        net.places["a"].initial = (Token(5), Token(5), Token(7))
        result = simulate(net, seed=0)
        assert values(result, "b") == [12] and values(result, "a") == [5]

    def test_code_action_outputs_feed_output_arcs(self):
        def halve(cwnd):
            return {"ssthresh": max(cwnd // 2, 2)}

        net = one_transition_net(action=halve, outputs=("ssthresh",))
        net.add_place(Place("cwnd", INT, initial=[17]))
        net.add_place(Place("ssthresh", INT))
        net.add_input("cwnd", "t", "cwnd")
        net.add_output("ssthresh", "t", "ssthresh")
        assert values(simulate(net, seed=0), "ssthresh") == [8]

    def test_declarations_and_module_parameters(self):
        module = PetriNet("stage")
        module.declare(GAIN=2)
        module.add_place(Place("inp", INT, port="in"))
        module.add_place(Place("out", INT, port="out"))
        module.add_transition(Transition("scale"))
        module.add_input("inp", "scale", "x")
        module.add_output("out", "scale", "x * GAIN")
        net = PetriNet("chain")
        net.add_place(Place("a", INT, initial=[1]))
        net.add_place(Place("b", INT))
        net.add_place(Place("c", INT))
        net.add_module(module, "s1", ports={"inp": "a", "out": "b"})
        net.add_module(module, "s2", ports={"inp": "b", "out": "c"}, params={"GAIN": 10})
        result = simulate(net, seed=0)
        assert values(result, "c") == [20]
        assert set(net.transitions) == {"s1.scale", "s2.scale"}
        assert [m.name for m in net.modules] == ["s1", "s2"]


class TestTime:
    def test_skeleton_timed_net_by_hand(self):
        """The shared skeleton_minimal_timed.cpn, derived by hand.

        Waiting holds 1@0 and 2@5. Serve (guard n > 0, @+2) puts n on Done with arc
        delay n mod 3 + 1: n=1 fires at 0 and lands at 0+2+2 = 4; n=2 fires at 5 and
        lands at 5+2+3 = 10. Then the net is dead at time 5.
        """
        net = PetriNet("skeleton")
        net.declare(delay=lambda x: x % 3 + 1)
        tint = INT.timed()
        net.add_place(Place("Waiting", tint, initial=[Token(1, 0), Token(2, 5)]))
        net.add_place(Place("Done", tint))
        net.add_transition(Transition("Serve", guard="n > 0", delay=2))
        net.add_input("Waiting", "Serve", "n")
        net.add_output("Done", "Serve", "n", delay="delay(n)")
        sim = Simulator(net, seed=0)
        first = sim.step()
        assert (first.time, first.binding) == (0.0, {"n": 1})
        second = sim.step()
        assert (second.time, second.binding) == (5.0, {"n": 2})
        assert sim.step() is None
        assert sorted(sim.tokens("Done")) == [Token(1, 4.0), Token(2, 10.0)]

    def test_clock_jumps_to_the_earliest_ready_token(self):
        net = one_transition_net(delay=1.5)
        net.add_place(Place("p", INT.timed(), initial=[Token(0, 3.0)]))
        net.add_input("p", "t", "x")
        net.add_output("p", "t", "x + 1", when="x < 3")
        sim = Simulator(net)
        times = [sim.step().time for _ in range(4)]
        assert times == [3.0, 4.5, 6.0, 7.5]
        assert sim.step() is None

    def test_horizon_fires_everything_up_to_and_including_it(self):
        net = one_transition_net(delay=1.0)
        net.add_place(Place("p", INT.timed(), initial=[0]))
        net.add_input("p", "t", "x")
        net.add_output("p", "t", "x + 1")
        result = simulate(net, until=10.0)
        # firings at 0, 1, ..., 10: eleven of them; the clock stops at the horizon
        assert result.firings == 11 and result.final_time == 10.0
        assert result.stop_reason == "horizon"

    def test_untimed_tokens_are_always_ready(self):
        net = one_transition_net()
        net.add_place(Place("u", UNIT, initial=[()]))
        net.add_place(Place("timed", INT.timed(), initial=[Token(7, 2.0)]))
        net.add_input("u", "t", "()")
        net.add_input("timed", "t", "x")
        sim = Simulator(net)
        assert sim.step().time == 2.0

    def test_now_is_the_firing_time(self):
        net = one_transition_net()
        net.add_place(Place("p", INT.timed(), initial=[Token(0, 4.0)]))
        net.add_place(Place("log", INT))
        net.add_input("p", "t", "x")
        net.add_output("log", "t", "int(now)")
        assert values(simulate(net), "log") == [4]

    def test_priority_wins_among_bindings_enabled_now_only(self):
        net = PetriNet("prio")
        net.add_place(Place("a", UNIT.timed(), initial=[()]))
        net.add_place(Place("b", UNIT.timed(), initial=[Token((), 1.0)]))
        net.add_place(Place("log", STRING))
        net.add_transition(Transition("low", priority=P_LOW))
        net.add_transition(Transition("high", priority=P_HIGH))
        net.add_input("a", "low", "()")
        net.add_output("log", "low", "'low'")
        net.add_input("b", "high", "()")
        net.add_output("log", "high", "'high'")
        sim = Simulator(net)
        # 'high' is more urgent but only ready at time 1: 'low' fires first, at time 0
        assert [sim.step().transition for _ in range(2)] == ["low", "high"]

    def test_priority_blocks_less_urgent_at_the_same_time(self):
        net = PetriNet("prio2")
        net.add_place(Place("a", UNIT, initial=[()]))
        net.add_place(Place("log", STRING))
        net.add_transition(Transition("low", priority=P_LOW))
        net.add_transition(Transition("high", priority=P_HIGH))
        for name in ("low", "high"):
            net.add_input("a", name, "()")
            net.add_output("log", name, repr(name))
        for seed in range(20):
            assert values(simulate(net, seed=seed), "log") == ["high"]

    def test_timed_token_consumption_takes_the_earliest_timestamps(self):
        net = one_transition_net()
        net.add_place(Place("p", INT.timed(), initial=[Token(1, 5.0), Token(1, 0.0),
                                                        Token(1, 2.0)]))
        net.add_place(Place("q", INT))
        net.add_input("p", "t", "x", count=2)
        net.add_output("q", "t", "x")
        sim = Simulator(net)
        assert sim.step().time == 2.0  # the two earliest tokens, at 0 and 2
        assert sim.tokens("p") == [Token(1, 5.0)]


class TestChoice:
    def test_choice_is_uniform_over_bindings(self):
        """Three bindings enabled at once: each is fired first in about 1/3 of seeds."""
        net = one_transition_net()
        net.add_place(Place("a", INT, initial=[1, 2, 3]))
        net.add_place(Place("b", INT))
        net.add_input("a", "t", "x")
        net.add_output("b", "t", "x")
        runs = 3000
        counts = {1: 0, 2: 0, 3: 0}
        for seed in range(runs):
            counts[Simulator(net, seed=seed).step().binding["x"]] += 1
        # binomial(3000, 1/3): sd = 25.8; 4 sd either side
        for value, n in counts.items():
            assert abs(n - runs / 3) < 4 * math.sqrt(runs * (1 / 3) * (2 / 3)), (value, n)

    def test_same_seed_same_run_other_seed_other_run(self):
        from tcpn.petrinets.examples import single_server_queue

        net = single_server_queue(200, 1.0, 0.7)
        a = simulate(net, seed=42)
        b = simulate(net, seed=42)
        c = simulate(net, seed=43)
        assert a.final_time == b.final_time and a.marking == b.marking
        assert a.final_time != c.final_time


@pytest.mark.parametrize("limit", [0, 3])
def test_guard_on_declarations_only(limit):
    """A guard without transition variables disables or enables every binding at once."""
    net = PetriNet("switch")
    net.declare(K=limit)
    net.add_place(Place("a", INT, initial=[1, 2]))
    net.add_place(Place("b", INT))
    net.add_transition(Transition("t", guard="K > 1"))
    net.add_input("a", "t", "x")
    net.add_output("b", "t", "x")
    assert simulate(net).firings == (2 if limit > 1 else 0)


def test_max_firings_and_predicate_stop_cleanly():
    from tcpn.petrinets.examples import counter

    assert simulate(counter(100), max_firings=7).stop_reason == "max_firings"
    sim = Simulator(counter(100))
    result = sim.run(stop_when=lambda s: s.tokens("count")[0].value == 12)
    assert result.stop_reason == "predicate" and result.firings == 12


def test_result_metadata_records_provenance():
    from tcpn import __version__
    from tcpn.petrinets.examples import counter

    result = simulate(counter(3), seed=9)
    meta = result.metadata
    assert meta["seed"] == 9 and meta["tcpn_version"] == __version__
    assert len(meta["net_hash"]) == 64 and meta["wall_time_s"] >= 0
    assert simulate(counter(4)).metadata["net_hash"] != meta["net_hash"]


@pytest.mark.parametrize("limit", [0, 1, 5])
def test_counter_reaches_its_limit(limit):
    from tcpn.petrinets.examples import counter

    result = simulate(counter(limit))
    assert result.firings == limit and result.marking["count"] == [Token(limit, 0.0)]


def test_free_variables_bind_every_member_and_a_computed_zero_count_takes_nothing():
    """A transition with a declared free variable has one binding per member; an input
    arc whose computed count is 0 needs no token (a PNML multiset difference)."""
    from tcpn.errors import InputError
    from tcpn.petrinets import EnumSet, explore

    site = EnumSet(("a", "b", "c"), name="Site")
    net = PetriNet("free")
    net.add_place(Place("idle", site, initial=["a"]))
    net.add_place(Place("acks", site, initial=["b", "c"]))  # no ack from "a" itself
    net.add_place(Place("sent", site))
    net.add_transition(Transition("send", free_variables={"to": site}))
    net.add_input("idle", "send", "s")
    net.add_output("sent", "send", "to")
    net.add_transition(Transition("collect"))
    net.add_input("sent", "collect", "s")
    for other in site.values:  # every ack but the sender's own: all - s
        net.add_input("acks", "collect", repr(other), count=f"1 if s != {other!r} else 0")
    space = explore(net)
    # send: 3 bindings (to = a, b, c); collect fires only for s = "a" (acks b and c held)
    assert space.n_edges == 4 and len(space) == 5
    assert sorted(e.binding["to"] for e in space.edges(0)) == ["a", "b", "c"]
    with pytest.raises(InputError, match="free variable 'to' needs a small finite"):
        Transition("send", free_variables={"to": INT})
