"""The native engine (Cython-built generated code) fires exactly what the Python engine fires.

The Python engine is the reference: with the same seed, both must give the same firing
sequence, firing by firing (time, transition, binding), on every reference scenario's
net and on the benchmark nets; the first divergence is reported. Without a C compiler
the engine says so and runs in Python (tested by hiding the compiler), and a transition
whose code Cython rejects stays in Python, named with the inscription at fault.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tcpn.errors import InputError
from tcpn.lenses import make_run
from tcpn.models.scenario import load_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import (
    INT,
    UNIT,
    Exponential,
    PetriNet,
    Place,
    ProductSet,
    Simulator,
    Token,
    Transition,
    compile_net,
)
from tcpn.petrinets.colours import RecordSet, StringSet
from tcpn.petrinets.engine import native
from tcpn.petrinets.engine.cython_code import shapes
from tcpn.petrinets.engine.monitors import FiringRecord
from tcpn.petrinets.engine.native import NativeUnavailable, cache_dir, why_unavailable

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = sorted((ROOT / "scenarios" / "reference").glob("*.yaml"))


def native_or_skip() -> None:
    """Skips where no native engine can be built at all (no Cython, no C compiler)."""
    reason = why_unavailable()
    if reason is not None:
        pytest.skip(f"the native engine cannot be built here: {reason}")


def sequences(net: PetriNet, seed: int, max_firings: int,
              until: float | None = None) -> dict[str, Simulator]:
    """Both engines run ``net`` with ``seed``; their simulators, by engine."""
    sims = {}
    for engine in ("python", "native"):
        record = FiringRecord()
        sim = Simulator(net, seed=seed, monitors=[record], engine=engine)
        sim.run(until=until, max_firings=max_firings)
        sims[engine] = sim
    assert sims["python"].native.engine == "python"
    assert sims["native"].native.engine == "native", sims["native"].native.reason
    return sims


def assert_same_firings(sims: dict[str, Simulator]) -> None:
    """Firing by firing; the message names the first divergence."""
    python, native = (sims[e].monitors[0].firings for e in ("python", "native"))
    for index, (a, b) in enumerate(zip(python, native, strict=False)):
        assert a == b, f"firing {index}: python fired {a}, native fired {b}"
    assert len(python) == len(native), f"python fired {len(python)}, native {len(native)}"
    assert sims["python"].marking_dict() == sims["native"].marking_dict()
    assert sims["python"].now == sims["native"].now


def scenario_net(path: Path) -> PetriNet:
    scenario = load_scenario(path)
    return compose(scenario, make_run(scenario).flows).net


@pytest.mark.slow
@pytest.mark.parametrize("path", REFERENCE, ids=[p.stem for p in REFERENCE])
def test_reference_scenarios_fire_the_same_sequence(path: Path) -> None:
    net = scenario_net(path)
    native_or_skip()
    sims = sequences(net, seed=load_scenario(path).seed, max_firings=20_000)
    assert len(sims["python"].monitors[0].firings) > 1_000
    assert_same_firings(sims)


@pytest.mark.slow
def test_the_dumbbell_fires_the_same_sequence() -> None:
    """The reference dumbbell (the net lens's benchmark) over its first 5,000 firings
    (slow: a cold build compiles 45 modules, 1-2 min of CPU on a quiet 2-core machine)."""
    net = scenario_net(ROOT / "scenarios" / "reference" / "newreno_2flows.yaml")
    native_or_skip()
    assert_same_firings(sequences(net, seed=1, max_firings=5_000))



@pytest.mark.parametrize("index", range(6))
def test_benchmark_nets_fire_the_same_sequence(
        index: int, benchmark_nets: Callable[[], list[PetriNet]]) -> None:
    net = benchmark_nets()[index]
    native_or_skip()
    for seed in (0, 1):
        assert_same_firings(sequences(net, seed=seed, max_firings=3_000))


def gated_net() -> PetriNet:
    """Gates (a lock, an inhibitor), priorities, conditional arcs, random delays."""
    net = PetriNet("gated")
    pair = ProductSet(INT, INT).timed()
    net.add_place(Place("src", INT.timed(), initial=[0, 0, 1]))
    net.add_place(Place("lock", INT.timed(), initial=[1]))
    net.add_place(Place("wire", pair))
    net.add_place(Place("odd", INT.timed()))
    net.add_place(Place("stop", INT))
    net.add_transition(Transition("send", guard="n < 400", priority=2))
    net.add_input("src", "send", "n")
    net.add_input("lock", "send", "1")
    net.add_inhibitor("stop", "send")
    net.add_output("lock", "send", "1", delay=Exponential(mean=0.5))
    net.add_output("src", "send", "n + 1", delay=Exponential(mean=1.0))
    net.add_output("wire", "send", "(n % 3, n)", delay=2.0)
    net.add_output("odd", "send", "n", when="n % 2 == 1")
    net.add_transition(Transition("recv"))
    net.add_input("wire", "recv", "(k, n)")
    net.add_transition(Transition("drain", priority=1))
    net.add_input("odd", "drain", "n")
    return net


def test_gates_priorities_and_conditional_arcs_fire_the_same_sequence() -> None:
    net = gated_net()
    native_or_skip()
    for seed in range(3):
        sims = sequences(net, seed=seed, max_firings=5_000, until=300.0)
        assert_same_firings(sims)


def partition_net() -> PetriNet:
    """A counter and a FIFO wire read by four transitions that split the packets by
    guards: on the packet (tested inside the wire's loop), on the counter alone (tested
    before it) and none; a fifth reads other places (no group)."""
    net = PetriNet("partition")
    net.add_place(Place("clock", UNIT.timed(), initial=[()]))
    net.add_place(Place("n", INT, initial=[0]))
    net.add_place(Place("wire", INT.timed()))
    net.add_place(Place("count", INT, initial=[0]))
    net.add_transition(Transition("send", guard="k < 600"))
    net.add_input("clock", "send", "()")
    net.add_input("n", "send", "k")
    net.add_output("n", "send", "k + 1")
    net.add_output("clock", "send", "()", delay=Exponential(mean=0.4))
    net.add_output("wire", "send", "discrete(0, 9)", delay=1.5)
    guards = {"take_low": "x < 3", "take_mid": "3 <= x < 7 and c % 2 == 0",
              "take_even": "c % 2 == 0", "take_any": None}
    for name, guard in guards.items():
        net.add_transition(Transition(name, guard=guard))
        net.add_input("count", name, "c")
        net.add_input("wire", name, "x")
        net.add_output("count", name, "c + 1")
    return net


def test_guard_partitions_run_as_groups_and_fire_the_same_sequence() -> None:
    """The native loop takes the members' bindings from their group's one function
    (``tcpn.petrinets.engine.cython_code.groups``): a member given another's list, a shared cut or a
    stale list fires another sequence."""
    net = partition_net()
    native_or_skip()
    for seed in range(3):
        sims = sequences(net, seed=seed, max_firings=1_500)
        grouped = sims["native"].compiled
        assert [[grouped.transitions[t].name for t in members]
                for _fn, members in grouped.enumerate_groups] == [
            ["take_low", "take_mid", "take_even", "take_any"]]
        assert not sims["python"].compiled.enumerate_groups  # the reference has none
        assert_same_firings(sims)


def record_net() -> PetriNet:
    """Records read by field in guards, output arcs, delays and conditions, also where a
    comprehension or a lambda binds a record variable's name."""
    point = RecordSet("Point", x=INT, y=INT, label=StringSet())
    net = PetriNet("records")
    net.declare(Point=point.record_type, xs=(1, 2, 3))
    net.add_place(Place("points", point.timed(),
                        initial=[point.record_type(i, 10 - i, f"p{i}") for i in range(4)]))
    net.add_place(Place("seen", INT))
    net.add_transition(Transition("move", guard="p.x < 40 and p.label != 'stop'"))
    net.add_input("points", "move", "p")
    net.add_output("points", "move", "p._replace(x=p.x + p.y % 3 + 1, y=p.y - 1)",
                   delay="0.5 + (p.x % 4) * 0.25")
    net.add_output("seen", "move", "sum(p.x for p in [Point(v, 0, 'c') for v in xs])",
                   when="p.y % 2 == 0")
    net.add_transition(Transition("stop", guard="p.x >= 40"))
    net.add_input("points", "stop", "p")
    net.add_output("seen", "stop", "(lambda p: p.y)(p) + p.x")
    return net


def test_record_field_reads_fire_the_same_sequence() -> None:
    """The native shapes read a record variable's fields as its items, but where a
    comprehension or a lambda binds its name: a wrong index fires another sequence, and
    the shapes' text shows the rebound names left as they are."""
    net = record_net()
    native_or_skip()
    compiled = compile_net(net)
    move, stop = compiled.transitions
    assert dict(move.records)["p"] == ("x", "y", "label")
    move_body, _ = shapes.transition_shape(move)
    assert "_tcpn_field(p, 0, 'x')" in move_body
    assert "p.x for p in" in move_body  # the comprehension's own p is left as it is
    stop_body, _ = shapes.transition_shape(stop)
    assert "(lambda p: p.y)(p) + _tcpn_field(p, 0, 'x')" in stop_body
    for seed in range(3):
        assert_same_firings(sequences(net, seed=seed, max_firings=2_000))


def test_item_reads_of_tuples_and_records_fire_the_same_sequence() -> None:
    """The native shapes read ``v[i]`` of a tuple or a record in C, but through the type's
    own ``__getitem__`` where it has one: a record subclass that mirrors its items gives
    other sums if read as a plain tuple, and the shapes' text shows the rewrite."""
    pair = RecordSet("Pair", a=INT, b=INT)

    class Mirrored(pair.record_type):  # type: ignore[misc, name-defined]
        def __getitem__(self, index: int) -> int:
            return tuple.__getitem__(self, 1 - index)

    net = PetriNet("items")
    values = [pair.record_type(k, 10 + k) for k in range(3)] + \
        [Mirrored(k, 20 + k) for k in range(3)]
    net.add_place(Place("pairs", pair, initial=values))
    net.add_place(Place("sums", INT))
    net.add_transition(Transition("read", guard="p[0] != p[1]"))
    net.add_input("pairs", "read", "p")
    net.add_output("sums", "read", "p[0] * 100 + p[1]")
    native_or_skip()
    body, _ = shapes.transition_shape(compile_net(net).transitions[0])
    assert "_tcpn_item(p, 0) * 100 + _tcpn_item(p, 1)" in body
    for seed in range(4):
        sims = sequences(net, seed=seed, max_firings=100)
        assert_same_firings(sims)
        assert sorted(t.value for t in sims["native"].marking_dict()["sums"]) == \
            sorted([k * 100 + 10 + k for k in range(3)] + [(20 + k) * 100 + k for k in range(3)])


def test_a_run_on_the_native_engine_computes_the_fingerprint_once(monkeypatch) -> None:
    """The native engine's compiled net keeps the fingerprint ``compile_net`` computed, so a
    run's provenance does not read the whole net again (15 ms of a dumbbell's setup)."""
    from tcpn.petrinets.engine import result

    native_or_skip()
    calls = []
    real = result.net_fingerprint
    monkeypatch.setattr(result, "net_fingerprint", lambda n: calls.append(n) or real(n))
    net = record_net()
    net.name = "records, fingerprinted once"  # not a net compile_net holds already
    outcome = Simulator(net, seed=1, engine="native").run(max_firings=10)
    assert outcome.metadata["net_hash"] == real(net)
    assert len(calls) == 1


def test_token_counts_move_with_one_hash_and_fire_the_same_sequence() -> None:
    """The native shapes move tokens of an untimed place with ``_tcpn_take`` and
    ``_tcpn_put`` (one hash of the value): counts of several tokens per value, arcs of 2
    and 3 tokens, values that leave and come back (their place in the dict's order,
    which decides the bindings' order, moves then and only then), records as values."""
    pair = RecordSet("Pair", a=INT, b=INT)
    net = PetriNet("counts")
    net.add_place(Place("bag", pair, initial=[pair.record_type(k % 3, k % 2) for k in range(9)]))
    net.add_place(Place("out", INT))
    net.add_transition(Transition("one"))
    net.add_input("bag", "one", "p")
    net.add_output("bag", "one", "p._replace(a=(p.a + 1) % 3)")
    net.add_output("out", "one", "p.a + p.b")
    net.add_transition(Transition("two", guard="p.b == 1"))
    net.add_input("bag", "two", "p", count=2)
    net.add_output("bag", "two", "p._replace(b=0)", count=3)
    net.add_transition(Transition("drain", guard="n > 3"))
    net.add_input("out", "drain", "n", count=2)
    native_or_skip()
    compiled = compile_net(net)
    bodies = [shapes.transition_shape(t)[0] for t in compiled.transitions]
    assert all("_tcpn_take(" in body for body in bodies)
    assert "_tcpn_put(" in bodies[0] and "_tcpn_put(" in bodies[1]
    for seed in range(4):
        assert_same_firings(sequences(net, seed=seed, max_firings=400))


def wireless_pair_net(acked: bool) -> PetriNet:
    """Two 802.11 radio interfaces contending for one medium (DCF), 40 packets of two
    sizes queued on each, frames failing at a byte error rate of 1e-4."""
    from tcpn.models.components.link import ByteErrors, Transmitter
    from tcpn.models.components.packets import PACKET, Pkt
    from tcpn.models.components.queues import DropTailQueue
    from tcpn.models.components.wireless import Radio, medium_place, wireless_interface_net

    radio = Radio(link_retransmissions=acked)
    net = PetriNet("air")
    net.add_place(medium_place(radio))
    for d in range(2):
        packets = [Pkt(flow=0, dst=1, seq=k, ack=0, size=(1500, 40)[(k + d) % 2], ts=0.0,
                       echo=0.0, ecn=0, ece=False, cwr=False, retx=False, sack=())
                   for k in range(40)]
        net.add_place(Place(f"in{d}", PACKET, initial=[Token(p, 1e-4 * k)
                                                       for k, p in enumerate(packets)]))
        net.add_place(Place(f"out{d}", PACKET))
        net.add_module(wireless_interface_net(
            DropTailQueue(limit=50), Transmitter(11e6, 0.0, 78, ByteErrors(1e-4)), radio,
            ["True"], station=d), f"d{d}",
            {"arrivals": f"in{d}", "out0": f"out{d}", "medium": "medium"})
    return net


@pytest.mark.slow
@pytest.mark.parametrize("acked", [True, False], ids=["acked", "ackless"])
def test_the_80211_contention_fires_the_same_sequence(acked: bool) -> None:
    """The 802.11 hop's DCF (backoffs, collisions, retries: code actions drawing from the
    run's generators) fires the same sequence in both engines."""
    net = wireless_pair_net(acked)
    native_or_skip()
    for seed in range(2):
        sims = sequences(net, seed=seed, max_firings=5_000)
        assert len(sims["python"].monitors[0].firings) > 300
        assert_same_firings(sims)


def test_step_and_enabled_agree_after_native_runs() -> None:
    net = gated_net()
    native_or_skip()
    sims = {e: Simulator(net, seed=4, engine=e) for e in ("python", "native")}
    for _ in range(200):
        assert sims["python"].enabled() == sims["native"].enabled()
        assert sims["python"].step() == sims["native"].step()


def counter_net(variable: str = "x", outside_c: bool = False) -> PetriNet:
    """Two counters; ``outside_c`` adds a place of strings, outside the C engine's subset
    (the net then runs the Cython-built code)."""
    net = PetriNet("counter")
    if outside_c:
        net.add_place(Place("names", StringSet(name="NAME"), initial=["a"]))
    net.add_place(Place("count", INT, initial=[0]))
    net.add_place(Place("other", INT, initial=[0]))
    net.add_transition(Transition("increment", guard=f"{variable} < 5"))
    net.add_input("count", "increment", variable)
    net.add_output("count", "increment", f"{variable} + 1")
    net.add_transition(Transition("tick", guard="y < 3"))
    net.add_input("other", "tick", "y")
    net.add_output("other", "tick", "y + 1")
    return net


def test_a_transition_cython_rejects_stays_in_python_named_with_its_inscription(
        caplog: pytest.LogCaptureFixture) -> None:
    """``cdef`` is a Python name but a Cython keyword: that transition runs in Python."""
    net = counter_net("cdef", outside_c=True)
    native_or_skip()
    with caplog.at_level(logging.WARNING, logger="tcpn.native"):
        sim = Simulator(net, seed=0, engine="native")
    assert sim.native.engine == "native"
    assert set(sim.native.fallbacks) == {"increment"}
    assert "cdef" in sim.native.fallbacks["increment"]
    assert "transition increment stays in Python" in caplog.text
    result = sim.run()
    assert result.firing_counts == {"increment": 5, "tick": 3}
    assert result.marking["count"][0].value == 5


def test_without_a_compiler_auto_says_so_once_per_machine_and_runs_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no gcc, no cc
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path / "cache"))
    # said once per process (and per command): an earlier test of this worker may have
    monkeypatch.setattr(native, "_SAID", set())
    monkeypatch.delenv(native.NOTICES_VARIABLE, raising=False)
    with caplog.at_level(logging.INFO, logger="tcpn.native"):
        sim = Simulator(counter_net(), seed=0, engine="auto")
    assert sim.native.engine == "python"
    assert "no C compiler" in (sim.native.reason or "")
    assert "cannot be built, nets run in Python: no C compiler" in caplog.text
    assert "said once on this machine" in caplog.text
    assert sim.run().firing_counts == {"increment": 5, "tick": 3}
    with pytest.raises(NativeUnavailable, match=r"net counter: .*no C compiler"):
        Simulator(counter_net(), engine="native")
    monkeypatch.delenv("TCPN_ENGINE")  # the simulator's default: auto
    monkeypatch.setattr(native, "_SAID", set())  # another process, another command
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tcpn.native"):
        assert Simulator(counter_net(), seed=0).run().firing_counts == {"increment": 5,
                                                                         "tick": 3}
    assert "Python" not in caplog.text  # said once, for the machine (its cache directory)
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(native, "_SAID", set())
    with caplog.at_level(logging.INFO, logger="tcpn.native"):
        assert Simulator(counter_net(), seed=0).native.engine == "python"
    assert "nets run in Python: no C compiler" in caplog.text
    assert not (tmp_path / "cache" / "native").exists()


def test_a_failing_build_is_said_once_per_command(tmp_path: Path) -> None:
    """Processes of one command (a report's or a sweep's workers share the directory the
    CLI names in ``$TCPN_NOTICES_DIR``) say once between them that nets run in Python
    because their build failed, whichever nets; processes without it say it per net."""
    native_or_skip()
    script = textwrap.dedent("""
        import logging, sys
        sys.path.insert(0, sys.argv[1])  # the tests directory
        from test_native import counter_net
        from tcpn.petrinets import Simulator
        logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
        for name in sys.argv[2:]:
            net = counter_net(outside_c=True)
            net.name = name
            assert Simulator(net, seed=0).native.engine == "python"
    """)
    env = {k: v for k, v in os.environ.items()
           if k not in ("TCPN_ENGINE", native.NOTICES_VARIABLE)}
    # a compiler that fails: the build stops at the first module
    env.update(TCPN_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT), CC="false")

    def said(n_processes: int, shared: Path | None) -> int:
        extra = {} if shared is None else {native.NOTICES_VARIABLE: str(shared)}
        running = [subprocess.Popen([sys.executable, "-c", script, str(ROOT / "tests"),
                                     "a", "b", "a"],
                                    env={**env, **extra}, stderr=subprocess.PIPE, text=True)
                   for _ in range(n_processes)]
        errors = [p.communicate(timeout=300)[1] for p in running]
        assert all(p.returncode == 0 for p in running), errors
        return sum(e.count("runs in Python: the C compiler failed") for e in errors)

    (tmp_path / "said").mkdir()
    assert said(3, tmp_path / "said") == 1
    assert said(2, None) == 4  # each process, once per net
    assert not list((tmp_path / "cache" / "native").glob("*.so"))


def test_auto_the_default_builds_what_a_net_needs_in_parallel_then_runs_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The simulator's default, ``auto``, builds every module the net lacks, in worker
    processes (one per usable core), with one progress line counting them, then runs
    them; later nets find them cached (nothing rebuilt) and fire what Python fires.
    :func:`build_nets` builds many nets' modules at once, each module once."""
    native_or_skip()
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TCPN_ENGINE")
    monkeypatch.delenv(native.NOTICES_VARIABLE, raising=False)  # set by in-process CLI tests
    assert native.resolve_engine(None, native.SIMULATOR_DEFAULT) == "auto"
    typed, untyped = counter_net("auto"), counter_net("auto", outside_c=True)
    plan = [len(native._plan(compile_net(n)).modules) for n in (typed, untyped)]
    assert plan == [1, 4]  # the C engine's module; Cython's utility code, the loop, 2 shapes
    with caplog.at_level(logging.INFO, logger="tcpn.native"):
        sim = Simulator(untyped, seed=0)
    assert (sim.native.engine, sim.native.backend) == ("native", "cython")
    progress = [r.progress for r in caplog.records if hasattr(r, "progress")]
    assert progress == [0, 1, 2, 3, 4], caplog.text  # one line, counting the modules
    assert "building 4 modules" in caplog.text and "of 4" in caplog.text
    assert f"({min(4, native.build_workers())} process" in caplog.text
    summary = native.build_nets([compile_net(typed), compile_net(untyped)], "two nets")
    assert (summary.nets, summary.modules, summary.built) == (2, 5, 1)  # the C engine's
    assert "2 nets need 5 modules: 1 built" in summary.text()
    assert native.build_nets([compile_net(untyped)]).built == 0
    built = {p: p.stat().st_ino for p in (tmp_path / "native").glob("*.so")}  # a rebuild: new file
    assert len(built) == 5
    assert not list((tmp_path / "native").glob(".build-*"))  # the build's private directory
    for net in (typed, untyped):
        record, reference = FiringRecord(), FiringRecord()
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="tcpn.native"):
            sim = Simulator(net, seed=3, monitors=[record])
        assert "building" not in caplog.text
        assert sim.native.engine == "native"
        sim.run()
        Simulator(net, seed=3, monitors=[reference], engine="python").run()
        assert record.firings == reference.firings
    assert {p: p.stat().st_ino for p in (tmp_path / "native").glob("*.so")} == built


def test_auto_runs_a_short_bounded_run_in_python_rather_than_build_for_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A caller that bounds its firings (``tcpn simulate --max-firings``) gets ``auto``'s
    cost model: a run cheaper in Python than building the missing modules runs in
    Python, saying why once; a long enough one builds them; built, any run is native."""
    native_or_skip()
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TCPN_ENGINE")
    monkeypatch.delenv(native.NOTICES_VARIABLE, raising=False)
    net = counter_net("short", outside_c=True)  # 4 modules
    needed = len(native._plan(compile_net(net)).modules)
    break_even = needed * native.AUTO_BUILD_MODULE_S / min(needed, native.build_workers()) \
        / native.AUTO_PYTHON_FIRING_S
    with caplog.at_level(logging.INFO, logger="tcpn.native"):
        short = Simulator(net, seed=0, firings=300)
    def built_now() -> bool:  # a build's progress line was said
        return any(hasattr(r, "progress") for r in caplog.records)

    assert short.native.engine == "python" and not built_now()
    assert f"a run of at most 300 firings takes less in Python than building its " \
           f"{needed} native modules" in caplog.text
    assert not (tmp_path / "native").exists() or not list((tmp_path / "native").glob("*.so"))
    record, reference = FiringRecord(), FiringRecord()
    Simulator(net, seed=3, monitors=[record], firings=300).run(max_firings=300)
    Simulator(net, seed=3, monitors=[reference], engine="python").run(max_firings=300)
    assert record.firings == reference.firings
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tcpn.native"):
        long = Simulator(net, seed=0, firings=int(break_even) + 1)
    assert long.native.engine == "native" and built_now()
    assert Simulator(net, seed=0, firings=1).native.engine == "native"  # built: no cost
    assert Simulator(counter_net("short2", outside_c=True), seed=0, firings=300,
                     engine="native").native.engine == "native"  # asked for: built


def test_the_engine_comes_from_the_argument_or_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCPN_ENGINE", "python")
    assert Simulator(counter_net()).native.engine == "python"
    monkeypatch.setenv("TCPN_ENGINE", "fast")
    with pytest.raises(InputError, match=r"\$TCPN_ENGINE='fast': choose one of python"):
        Simulator(counter_net())
    with pytest.raises(InputError, match="engine='C': choose one of python, native, auto"):
        Simulator(counter_net(), engine="C")


def test_the_default_cache_is_the_users_not_the_source_tree(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TCPN_CACHE_DIR", raising=False)
    assert ROOT not in cache_dir().parents


def test_builds_are_cached_and_concurrent_builds_are_safe(tmp_path: Path) -> None:
    """Two processes build the same net into an empty cache at once; a third reuses it."""
    native_or_skip()
    script = ("import sys; sys.path.insert(0, sys.argv[1]); "
              "from tests.test_native import counter_net; "
              "from tcpn.petrinets import Simulator; "
              "s = Simulator(counter_net('z'), engine='native'); "
              "print(s.native.engine, s.run().firings)")
    env = {"TCPN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(ROOT)}
    runs = [subprocess.Popen([sys.executable, "-c", script, str(ROOT)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    for run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
        assert out.split() == ["native", "8"]
    built = sorted((tmp_path / "native").glob("*.so"))
    assert len(built) == 1  # the C engine's module (tests/test_cnet.py)
    assert not [p for p in (tmp_path / "native").iterdir() if p.name.startswith(".build-")]
    files = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in built]
    third = subprocess.run([sys.executable, "-c", script, str(ROOT)], env=env,
                           capture_output=True, text=True, timeout=600, check=True)
    assert third.stdout.split() == ["native", "8"]
    # the same files (a rebuild renames a new one into place), marked used (the cache's
    # eviction order, tcpn.petrinets.engine.caches)
    for p, (inode, mtime_ns) in zip(built, files, strict=True):
        assert p.stat().st_ino == inode and p.stat().st_mtime_ns > mtime_ns
    assert sorted((tmp_path / "native").glob("*.so")) == built


def test_processes_starting_together_build_each_module_once(tmp_path: Path) -> None:
    """Two processes need the same modules of an empty cache at once: one builds them,
    the other waits for its build (the cache directory's lock) and loads them."""
    native_or_skip()
    script = ("import logging, sys; sys.path.insert(0, sys.argv[1]); "
              "logging.basicConfig(level=logging.INFO, format='%(message)s'); "
              "from tests.test_native import counter_net; "
              "from tcpn.petrinets import Simulator; "
              "s = Simulator(counter_net('w', outside_c=True), engine='native'); "
              "print(s.native.engine, s.native.backend, s.run().firings)")
    env = {"TCPN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(ROOT)}
    runs = [subprocess.Popen([sys.executable, "-c", script, str(ROOT)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    logs = []
    for run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
        assert out.split() == ["native", "cython", "8"]
        logs.append(err)
    assert sum(log.count("native engine: built 4 modules") for log in logs) == 1, logs
    assert len(list((tmp_path / "native").glob("*.so"))) == 4


def test_transition_shapes_are_cached_and_a_damaged_entry_is_computed_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewritten code of each transition (its shape) is stored beside the modules;
    a build in a fresh process reads it, and an entry that cannot be read is rewritten."""
    native_or_skip()
    monkeypatch.setenv("TCPN_CACHE_DIR", str(tmp_path))
    net = counter_net("shapes")
    transition = compile_net(net).transitions[0]
    namespace = frozenset(transition.enumerate.__globals__)
    computed = shapes._shape_of(transition.source, namespace)
    shapes.stored_shape_of.cache_clear()
    assert shapes.stored_shape_of(transition.source, namespace) == computed
    (entry,) = (tmp_path / "native" / "shapes").glob("*.json")
    shapes.stored_shape_of.cache_clear()
    assert shapes.stored_shape_of(transition.source, namespace) == computed
    entry.write_text('{"body": "truncated')
    shapes.stored_shape_of.cache_clear()
    assert shapes.stored_shape_of(transition.source, namespace) == computed
    assert json.loads(entry.read_text())["body"] == computed[0]
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]
    assert Simulator(net, engine="native").run().firings == 8


def test_the_cli_option_sets_the_engine_for_the_run(tmp_path: Path) -> None:
    """``tcpn --engine python run``: the run's provenance names the engine that ran."""
    scenario = tmp_path / "short.yaml"
    text = (ROOT / "scenarios" / "dumbbell_newreno.yaml").read_text()
    scenario.write_text(text.replace("horizon_s: 60.0", "horizon_s: 0.5"))
    tcpn = str(Path(sys.executable).parent / "tcpn")
    env = {**os.environ, "COLUMNS": "60"}
    done = subprocess.run([tcpn, "--engine", "python", "run", str(scenario), "--lens", "net",
                           "-o", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert '"simulator_engine": "python"' in "".join(
        p.read_text() for p in (tmp_path / "out").rglob("*.json"))
    bad = subprocess.run([tcpn, "--engine", "C", "run", str(scenario)],
                         env=env, capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2
    assert "choose one of python, native, auto" in " ".join(bad.stderr.replace("│", " ").split())


def test_tcpn_build_teaches_and_without_a_compiler_says_so(tmp_path: Path,
                                                          shared_dir: Path) -> None:
    """``tcpn build --help`` shows how to build for the studies and for scenarios; a
    missing target is a usage error; without a compiler it says so and succeeds (the
    runs use the Python engine), building nothing."""
    tcpn = str(Path(sys.executable).parent / "tcpn")
    env = {**os.environ, "COLUMNS": "200", "TCPN_CACHE_DIR": str(tmp_path / "cache")}

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([tcpn, *args], env={**env, **extra}, capture_output=True,
                              text=True, timeout=600)

    shown = run("build", "--help")
    assert shown.returncode == 0
    assert "tcpn build study all" in shown.stdout and "make run" in shown.stdout
    assert run("build").returncode == 2
    assert "unknown study 's9'" in run("build", "study", "s9").stderr
    bare = tmp_path / "bin"
    bare.mkdir()
    done = run("build", str(ROOT / "scenarios" / "dumbbell_newreno.yaml"), PATH=str(bare),
               CC="")
    assert done.returncode == 0, done.stderr
    assert "runs use the Python engine: no C compiler" in done.stderr
    assert not (tmp_path / "cache" / "native").exists()
    assert "tcpn build model.cpn" in shown.stdout
    cpn = run("build", str(shared_dir / "data" / "cpn" / "skeleton_minimal_timed.cpn"),
              PATH=str(bare),
              CC="")
    assert cpn.returncode == 0 and "runs use the Python engine" in cpn.stderr, cpn.stderr
    assert run("build", str(tmp_path / "missing.cpn")).returncode == 3


@pytest.mark.slow
def test_tcpn_build_then_the_default_engine_runs_native_without_building(
        tmp_path: Path) -> None:
    """``tcpn build SCENARIO`` builds the net's modules (a cold cache: about a minute of
    CPU); a run on the default engine then runs native and builds nothing."""
    native_or_skip()
    scenario = tmp_path / "short.yaml"
    text = (ROOT / "scenarios" / "dumbbell_newreno.yaml").read_text()
    scenario.write_text(text.replace("horizon_s: 60.0", "horizon_s: 0.5"))
    tcpn = str(Path(sys.executable).parent / "tcpn")
    env = {k: v for k, v in os.environ.items() if k != "TCPN_ENGINE"}
    env["TCPN_CACHE_DIR"] = str(tmp_path / "cache")
    built = subprocess.run([tcpn, "build", str(scenario)], env=env, capture_output=True,
                           text=True, timeout=1800)
    assert built.returncode == 0, built.stderr
    assert "building" in built.stderr and " 0 were cached" in built.stdout
    done = subprocess.run([tcpn, "run", str(scenario), "-o", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "building" not in done.stderr and "Python" not in done.stderr
    assert '"simulator_engine": "native"' in "".join(
        p.read_text() for p in (tmp_path / "out").rglob("*.json"))
    again = subprocess.run([tcpn, "build", str(scenario)], env=env, capture_output=True,
                           text=True, timeout=600)
    assert "all cached" in again.stdout and "building" not in again.stderr


def test_a_builds_progress_is_one_line_on_a_terminal() -> None:
    """The CLI shows a build's progress records as one line rewritten in place on a
    terminal, ended by the next notice; in a log (not a terminal) the first and the
    notices that follow only."""
    import io

    from tcpn.cli import _Notices

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def shown(stream: io.StringIO) -> str:
        handler = _Notices()
        saved, sys.stderr = sys.stderr, stream
        try:
            for done in range(3):
                handler.emit(logging.makeLogRecord({"msg": f"{done} of 2", "progress": done}))
            handler.emit(logging.makeLogRecord({"msg": "built 2 modules"}))
        finally:
            sys.stderr = saved
        return stream.getvalue()

    assert shown(Terminal()) == ("\rtcpn: 0 of 2\x1b[K\rtcpn: 1 of 2\x1b[K\rtcpn: 2 of 2\x1b[K"
                                 "\rtcpn: built 2 modules\x1b[K\n")
    assert shown(io.StringIO()) == "tcpn: 0 of 2\ntcpn: built 2 modules\n"


def test_tcpn_build_study_plans_the_studys_net_runs_with_its_seed() -> None:
    """``tcpn build study s5`` builds for each distinct net run of the study (its
    experiments and axis points, the net lens's changes applied) with the study's seed,
    from which its runs draw their flows."""
    from tcpn.reports.studies import s5
    from tcpn.reports.study_report import study_net_mappings

    mappings = study_net_mappings(["s5"], "quick")
    seed = s5.SETTINGS["quick"].seed
    assert len(mappings) == len({repr(sorted(m.items())) for m in mappings}) > 1
    assert all(m["seed"] == seed for m in mappings)
    names = {m["name"] for m in mappings}
    assert {e.scenario["name"] for e in s5.experiments(s5.SETTINGS["quick"])} <= names
