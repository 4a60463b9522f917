"""Guards that read the clock (``now``; CPN ML's ``time()``), with CPN Tools' semantics.

A guard is tested at the model time at which its binding would fire: the clock, or the
time its tokens become ready when that is later. The clock moves on only to the time at
which some binding's tokens are ready and its guard holds then: a guard that would turn
true later while no token ripens does not move it (docs/semantics.md). So a transition
whose guard waits for the clock fires at the first clock advance at or after the moment
its guard holds, made by some other transition; the engines (Python, and its
Cython-built form: the C engine leaves such nets to it) enumerate such transitions again
at every clock advance.
"""

from __future__ import annotations

import re

import pytest
from test_exchange_cpn_field import colset, cpn_file, var
from test_native import assert_same_firings, native_or_skip, sequences

from tcpn.errors import InputError
from tcpn.petrinets import (
    INT,
    P_HIGH,
    P_LOW,
    UNIT,
    Exponential,
    PetriNet,
    Place,
    Simulator,
    Token,
    Transition,
)
from tcpn.petrinets.engine.cnet import build_cnet
from tcpn.petrinets.engine.compiler import compile_net
from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.statespace.space import explore


def waiting_net(period: float | None = 3.0, guard: str = "now >= 5") -> PetriNet:
    """``job`` holds a token ready at 2 that ``Go`` takes when ``guard`` holds; ``Tick``
    (when ``period`` is given) moves the clock on by ``period`` at each firing."""
    net = PetriNet("waiting")
    net.add_place(Place("job", INT.timed(), initial=[Token(1, 2.0)]))
    net.add_place(Place("done", INT))
    net.add_transition(Transition("Go", guard=guard))
    net.add_input("job", "Go", "n")
    net.add_output("done", "Go", "n")
    if period is not None:
        net.add_place(Place("tick", INT.timed(), initial=[0]))
        net.add_transition(Transition("Tick", guard="k < 5", delay=period))
        net.add_input("tick", "Tick", "k")
        net.add_output("tick", "Tick", "k + 1")
    return net


def firings(sim: Simulator) -> list[tuple[float, str]]:
    return [(f.time, f.transition) for f in iter(sim.step, None)]


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_ripe_token_waits_for_the_first_clock_advance_at_which_its_guard_holds(engine):
    """The job is ready at 2, the guard holds from 5, the clock moves 0, 3, 6, ...: Go
    fires at 6 (not at 2, when its token ripened; not at 5, which no token makes a firing
    time; not never)."""
    if engine == "native":
        native_or_skip()
    for seed in range(4):  # Go and Tick tie at 6: either order
        sim = Simulator(waiting_net(), seed=seed, engine=engine)
        fired = firings(sim)
        assert [f for f in fired if f[1] == "Go"] == [(6.0, "Go")], fired
        assert [t for t, name in fired if name == "Tick"] == [0.0, 3.0, 6.0, 9.0, 12.0]
        assert sim.tokens("done") == [Token(1, 0.0)]


def test_a_guard_waiting_for_the_clock_alone_does_not_move_it():
    """Without Tick no token ripens after 2, so the clock never reaches 5: a dead marking
    (CPN Tools: no enabled transitions) with the clock still at 0."""
    sim = Simulator(waiting_net(period=None), engine="python")
    result = sim.run()
    assert (result.stop_reason, result.final_time, result.firing_counts) == (
        "dead", 0.0, {"Go": 0})
    assert sim.peek() == float("inf") and sim.enabled() == []


def test_a_window_reads_the_clock_at_each_advance():
    """``2 <= now <= 4``: false at 2 (the job ripens, but the clock is at 0 when Tick fires;
    at 2 no binding fires), true at 3: Go fires at 3."""
    sim = Simulator(waiting_net(guard="2.5 <= now <= 4"), seed=0, engine="python")
    assert [f for f in firings(sim) if f[1] == "Go"] == [(3.0, "Go")]


def expiry_net(server_free_at: float, expire: bool = True) -> PetriNet:
    """A request made at 0 (its value is its time) is served if the server takes it within
    30 time units (``now - r <= 30``), else it expires (without ``expire``: it stays); the
    server is free at ``server_free_at``."""
    net = PetriNet("expiry")
    net.add_place(Place("request", INT.timed(), initial=[0]))
    # a server bound by a variable, not a fixed token (a gate, whose readiness the
    # engines take as the clock's floor before the guard is tested)
    net.add_place(Place("server", INT.timed(), initial=[Token(7, server_free_at)]))
    net.add_place(Place("served", INT))
    net.add_place(Place("expired", INT))
    net.add_transition(Transition("Serve", guard="now - r <= 30"))
    net.add_input("request", "Serve", "r")
    net.add_input("server", "Serve", "s")
    net.add_output("served", "Serve", "r")
    if not expire:
        return net
    net.add_transition(Transition("Expire", guard="now - r > 30"))
    net.add_input("request", "Expire", "r")
    net.add_input("server", "Expire", "s")
    net.add_output("expired", "Expire", "r")
    return net


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_guard_true_now_but_false_when_the_tokens_ripen_does_not_fire(engine):
    """At time 0 ``now - r <= 30`` holds, but the server is free only at 40, when it does
    not: Expire fires at 40, Serve never. With the server free at 20, Serve fires at 20."""
    if engine == "native":
        native_or_skip()
    assert firings(Simulator(expiry_net(40.0), engine=engine)) == [(40.0, "Expire")]
    assert firings(Simulator(expiry_net(20.0), engine=engine)) == [(20.0, "Serve")]
    sim = Simulator(expiry_net(40.0), engine=engine)
    assert sim.peek() == 40.0 and sim.enabled() == [("Expire", {"r": 0, "s": 7})]
    # without Expire nothing is enabled at 40 (the guard is tested then, not at 0): the
    # clock does not move there for a binding that could not fire
    result = Simulator(expiry_net(40.0, expire=False), engine=engine).run()
    assert (result.stop_reason, result.final_time, result.firings) == ("dead", 0.0, 0)


def queue_net() -> PetriNet:
    """Requests stamped with their arrival time queue for a server behind a lock (a gate);
    one served within 2.0 of its arrival leaves, one older expires (less urgent); an audit
    with a clock window reads an untimed counter; random delays everywhere."""
    net = PetriNet("deadlines")
    net.add_place(Place("source", INT.timed(), initial=[0]))
    net.add_place(Place("queue", INT.timed()))
    net.add_place(Place("lock", UNIT.timed(), initial=[()]))
    net.add_place(Place("count", INT, initial=[0]))
    net.add_place(Place("audits", INT, initial=[0]))
    net.add_transition(Transition("arrive", guard="n < 300"))
    net.add_input("source", "arrive", "n")
    net.add_output("source", "arrive", "n + 1", delay=Exponential(mean=0.7))
    net.add_output("queue", "arrive", "int(now * 1000)")
    net.add_transition(Transition("serve", guard="now * 1000 - r <= 2000", priority=P_HIGH))
    net.add_input("queue", "serve", "r")
    net.add_input("lock", "serve", "()")
    net.add_input("count", "serve", "c")
    net.add_output("count", "serve", "c + 1")
    net.add_output("lock", "serve", "()", delay=Exponential(mean=1.0))
    net.add_transition(Transition("expire", guard="now * 1000 - r > 2000", priority=P_LOW))
    net.add_input("queue", "expire", "r")
    net.add_transition(Transition("audit", guard="int(now) % 7 == 3 and a < int(now)"))
    net.add_input("audits", "audit", "a")
    net.add_read("count", "audit", "c")
    net.add_output("audits", "audit", "int(now)")
    return net


def test_clock_guards_fire_the_same_sequence_in_python_and_native():
    net = queue_net()
    native_or_skip()
    for seed in range(3):
        sims = sequences(net, seed=seed, max_firings=2_000, until=400.0)
        counts = dict(zip([t.name for t in sims["python"].compiled.transitions],
                          sims["python"].firing_counts, strict=True))
        assert counts["serve"] and counts["expire"] and counts["audit"], counts
        assert_same_firings(sims)


def test_the_c_engine_leaves_a_clock_guard_to_the_cython_build_naming_it():
    reason = build_cnet(compile_net(expiry_net(40.0)), lambda *args: None)
    assert reason is not None and "transition Serve: its guard reads the clock" in reason


def test_state_spaces_refuse_a_clock_guard_naming_it():
    net = expiry_net(40.0)
    with pytest.raises(InputError, match=r"guard of transition Serve: 'now - r <= 30' reads "
                                         r"the clock .*a state space does not: model"):
        explore(net, clock="absolute")
    with pytest.raises(InputError, match=r"guard of transition Serve: 'now - r <= 30' reads "
                                         r"the clock .*does not \(and a relative one holds no "
                                         r"absolute time\)"):
        explore(net, clock="relative")


def cpn_expiry(server_delay: int, serve: str = "time() - r &lt;= 30") -> str:
    """:func:`expiry_net` as a CPN Tools file: guards ``[time() - r <= 30]`` (or ``serve``)
    and ``[(IntInf.toInt (time ())) - r > 30]``."""
    declarations = (colset("C1", "INT", "<int/>") + colset("C2", "TINT", "<int/><timed/>")
                    + var("V1", "INT", "r") + var("V2", "INT", "s"))
    return cpn_file(
        declarations,
        [("P1", "request", "TINT", "1`0"), ("P2", "server", "TINT", f"1`0@{server_delay}"),
         ("P3", "served", "INT", ""), ("P4", "expired", "INT", "")],
        [("T1", "Serve", f"[{serve}]", ""),
         ("T2", "Expire", "[(IntInf.toInt (time ())) - r &gt; 30]", "")],
        [("A1", "PtoT", "T1", "P1", "r"), ("A2", "PtoT", "T1", "P2", "s"),
         ("A3", "TtoP", "T1", "P3", "r"), ("A4", "PtoT", "T2", "P1", "r"),
         ("A5", "PtoT", "T2", "P2", "s"), ("A6", "TtoP", "T2", "P4", "r")])


@pytest.mark.parametrize(("server_delay", "fired"), [(40, "Expire"), (20, "Serve")])
def test_a_cpn_tools_time_guard_imports_simulates_and_exports_as_time(server_delay, fired):
    imported = read_cpn(cpn_expiry(server_delay))
    assert imported.complete, imported.report.text()
    assert "now" in imported.net.transitions["Serve"].guard
    sim = Simulator(imported.net, engine="python")
    assert firings(sim) == [(float(server_delay), fired)]
    text = to_cpn(imported.net)
    # the net's time is integral here: the clock read as an int, as CPN ML types it
    assert re.search(r"<cond .*?\[IntInf\.toInt\(time\(\)\) - r &lt;= 30\]", text, re.S)
    again = read_cpn(text)
    assert again.complete, again.report.text()
    assert firings(Simulator(again.net, engine="python")) == [(float(server_delay), fired)]


def test_a_failing_clock_guard_names_the_time_it_was_tested_at():
    """The token ripens at 3 while the clock stands at 0: the guard is tested at 3."""
    net = PetriNet("broken")
    net.add_place(Place("q", INT.timed(), initial=[Token(0, 3.0)]))
    net.add_transition(Transition("Take", guard="int(now) // r > 0"))
    net.add_input("q", "Take", "r")
    with pytest.raises(FiringError, match=r"^guard of transition Take at time 3 with binding "
                                          r"<r=0>: ZeroDivisionError"):
        Simulator(net, engine="python").run()


def test_model_time_spelled_through_its_structure_reads_the_clock():
    text = cpn_expiry(40, serve="IntInf.toInt (ModelTime.time ()) - r &lt;= 30")
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert imported.net.transitions["Serve"].guard == "int(now) - r <= 30"
    assert firings(Simulator(imported.net, engine="python")) == [(40.0, "Expire")]
