"""CLOCK values in relative state spaces: hand-counted cases, refusals, and the TCP
verification nets explored in relative and absolute time giving the same answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcpn.errors import InputError
from tcpn.models.scenario import Scenario, load_scenario
from tcpn.models.verification import LossBudget, verification_net
from tcpn.models.verification.check import property_net, verify_all
from tcpn.petrinets import CLOCK, INT, REAL, UNIT, PetriNet, Place, RecordSet, Token, Transition
from tcpn.petrinets.statespace.space import TIME_DECIMALS, StateSpace, explore
from tcpn.petrinets.timevalues import clock_shift, close, split_floats

ONE_FLOW = Path(__file__).resolve().parent.parent / "scenarios/verification/one_flow.yaml"
SENDERS = ("tahoe", "reno", "newreno", "sack", "ecn_newreno", "vegas", "modified_vegas",
           "adaptive_vegas", "westwood_plus", "tcp_l")


def stamper(stamp: object = CLOCK, stamp_expr: str = "now") -> PetriNet:
    """A tick every 1 then 2 time units (alternately); each tick writes ``now`` into
    ``last`` and the time since the previous tick into ``gap``."""
    net = PetriNet("stamper")
    net.add_place(Place("tick", UNIT.timed(), initial=[Token((), 0.0)]))
    net.add_place(Place("phase", INT, initial=[0]))
    net.add_place(Place("last", stamp, initial=[0.0]))  # type: ignore[arg-type]
    net.add_place(Place("gap", REAL, initial=[0.0]))
    net.add_transition(Transition("beat"))
    net.add_input("tick", "beat", "()")
    net.add_input("phase", "beat", "k")
    net.add_input("last", "beat", "s")
    net.add_input("gap", "beat", "g")
    net.add_output("tick", "beat", "()", delay="1.0 if k == 0 else 2.0")
    net.add_output("phase", "beat", "1 - k")
    net.add_output("last", "beat", stamp_expr)
    net.add_output("gap", "beat", "now - s")
    return net


def test_hand_counted_stamper() -> None:
    # (tick ready in, phase, last relative, gap):
    # S0 (0, 0, 0, 0) -beat at 0-> S1 (1, 1, 0, 0) -beat after 1-> S2 (2, 0, 0, 1)
    # -beat after 2-> S3 (1, 1, 0, 2) -beat after 1-> S2: 4 states, 4 edges, no dead marking
    space = explore(stamper(), shift_checks=None)
    assert (len(space), space.n_edges, space.complete) == (4, 4, True)
    assert space.dead_markings() == []
    seen = {(space.marking(s)["tick"][0].time, space.marking(s)["phase"][0].value,
             space.marking(s)["last"][0].value, space.marking(s)["gap"][0].value)
            for s in range(4)}
    assert seen == {(0.0, 0, 0.0, 0.0), (1.0, 1, 0.0, 0.0), (2.0, 0, 0.0, 1.0),
                    (1.0, 1, 0.0, 2.0)}
    assert [e.elapsed for e in space.edges(2)] == [2.0]
    # absolute time: the clock (and ``last``) grow for ever
    absolute = explore(stamper(), clock="absolute", max_states=50)
    assert not absolute.complete and absolute.stop_reason == "max_states"


def test_clock_values_left_behind_stay_negative() -> None:
    # a CLOCK value not rewritten moves back with the clock (it is not clamped like a
    # timestamp): the initial ``last`` of 0 is -1 after the first wait of 1
    net = stamper()
    net.add_place(Place("born", CLOCK, initial=[0.0]))
    space = explore(net, shift_checks=None, max_states=20)
    assert space.marking(2)["born"][0].value == -1.0
    assert not space.complete  # ``born`` records absolute time: nothing repeats


def test_now_without_clock_values_refused() -> None:
    with pytest.raises(InputError, match=r"output arc beat->last: 'now' reads 'now' \(no "
                                         r"place holds CLOCK values\)"):
        explore(stamper(stamp=REAL))


def test_now_in_a_delay_or_condition_refused() -> None:
    # (a guard reading ``now`` is refused in every mode: tests/test_clock_guards.py)
    net = stamper()
    net.transitions["beat"].delay = "1.0 if now < 5 else 2.0"
    with pytest.raises(InputError, match=r"delay of transition beat: .* reads 'now' "
                                         r"\(it decides by absolute time\)"):
        explore(net)
    assert explore(net, clock="absolute", max_states=50).n_states == 50  # absolute takes it
    net = stamper()
    net.add_output("phase", "beat", "k", when="now < 5")
    with pytest.raises(InputError, match=r"condition of output arc beat->phase: 'now < 5' "
                                         r"reads 'now'"):
        explore(net)


def test_reading_absolute_time_found_by_the_shift_check() -> None:
    with pytest.raises(InputError, match=r"transition beat puts .* on place last .* reads? "
                                         r"absolute time"):
        explore(stamper(stamp_expr="2 * now"))


def test_a_code_action_comparing_now_found_by_the_shift_check() -> None:
    net = stamper()

    def late(now: float) -> dict[str, bool]:
        return {"late": now > 100.0}

    net.transitions["beat"].action = late
    net.transitions["beat"].outputs = ("late",)
    net.add_place(Place("late", INT, initial=[0]))
    net.add_input("late", "beat", "n")
    net.add_output("late", "beat", "n + (1 if late else 0)")
    with pytest.raises(InputError, match="transition beat puts"):
        explore(net, max_states=100)
    # without the check the (wrong) relative space is built: the check is what refuses it
    assert len(explore(net, max_states=100, shift_checks=0)) == 4


def test_shift_checks_validated() -> None:
    with pytest.raises(InputError, match="shift_checks must be an int >= 0 or None"):
        explore(stamper(), shift_checks=-1)


def test_clock_shift_of_nested_colours() -> None:
    record = RecordSet("Sample", seq=INT, sent=CLOCK, rtt=REAL)
    move = clock_shift(record, TIME_DECIMALS)
    assert move is not None
    value = record.make(seq=3, sent=2.5, rtt=0.25)
    assert move(value, -0.5) == record.make(seq=3, sent=2.0, rtt=0.25)
    assert type(move(value, 1.0)) is type(value)


# -- the TCP verification nets ---------------------------------------------------------------

@pytest.fixture(scope="module")
def one_flow() -> Scenario:
    return load_scenario(ONE_FLOW)


def with_variant(scenario: Scenario, variant: str) -> Scenario:
    flow = scenario.flows[0].model_copy(update={"variant": variant, "params": None})
    return scenario.model_validate({**scenario.model_dump(), "flows": [
        {**flow.model_dump(exclude={"params"}), "variant": variant}]})


def relative_form(space: StateSpace, state: int) -> list[tuple[str, list[Token]]]:
    """An absolute-time state as the relative space keeps it: timestamps minus the clock
    (the past as 0), CLOCK values minus the clock."""
    clock = space.clock(state)
    out = []
    for name, tokens in sorted(space.marking(state).items()):
        move = clock_shift(space.net.places[name].colour, TIME_DECIMALS)
        out.append((name, sorted((Token(move(t.value, -clock) if move else t.value,
                                        max(0.0, t.time - clock)) for t in tokens),
                                 key=repr)))
    return out


def as_kept(space: StateSpace, state: int) -> list[tuple[str, list[Token]]]:
    return [(name, sorted(tokens, key=repr))
            for name, tokens in sorted(space.marking(state).items())]


def same_up_to_float_noise(one: list[object], other: list[object]) -> bool:
    """Whether two lists of markings are one set, floats compared with a tolerance."""
    def grouped(markings: list[object]) -> dict[str, list[tuple[float, ...]]]:
        out: dict[str, list[tuple[float, ...]]] = {}
        for marking in markings:
            form, floats = split_floats(marking)
            out.setdefault(form, []).append(floats)
        return {form: sorted(set(vectors)) for form, vectors in out.items()}

    a, b = grouped(one), grouped(other)
    return a.keys() == b.keys() and all(
        len(a[f]) == len(b[f]) and all(close(x, y) for x, y in zip(a[f], b[f], strict=True))
        for f in a)


@pytest.mark.parametrize("variant", [
    variant if variant in ("newreno", "sack", "vegas", "tcp_l") else
    pytest.param(variant, marks=pytest.mark.slow) for variant in SENDERS])
def test_every_state_translation_invariant_and_dead_markings_agree(one_flow: Scenario,
                                                                   variant: str) -> None:
    scenario = with_variant(one_flow, variant)
    budget = LossBudget(data_losses=1, ack_losses=1)
    absolute = verification_net(scenario, segments=3, losses=budget).explore()
    relative_net = verification_net(scenario, segments=3, losses=budget, clock="relative")
    relative = relative_net.explore(shift_checks=None)  # every state checked
    assert absolute.complete and relative.complete
    assert len(relative) <= len(absolute)
    assert same_up_to_float_noise([relative_form(absolute, s) for s in absolute.dead_markings()],
                                  [as_kept(relative, s) for s in relative.dead_markings()])
    # paths to dead markings of the relative space replay in the simulator (every fifth:
    # each replay composes the simulator's net)
    for state in relative.dead_markings()[::5]:
        path = relative.path_to(state)
        assert len(relative_net.replay(path)) == len(path)


@pytest.mark.parametrize(("variant", "segments", "losses", "ack_losses"), [
    ("newreno", 4, 1, 1), ("vegas", 3, 1, 0),
    pytest.param("sack", 5, 2, 0, marks=pytest.mark.slow),
    pytest.param("reno", 5, 2, 0, marks=pytest.mark.slow),
    pytest.param("tcp_l", 4, 1, 0, marks=pytest.mark.slow),
    pytest.param("tahoe", 4, 1, 1, marks=pytest.mark.slow)])
def test_same_verdicts_in_relative_time(one_flow: Scenario, variant: str, segments: int,
                                        losses: int, ack_losses: int) -> None:
    scenario = with_variant(one_flow, variant)
    answers = {}
    for clock in ("absolute", "relative"):
        results = verify_all(scenario, "all", segments=segments, losses=losses,
                             ack_losses=ack_losses, clock=clock)
        answers[clock] = {r.property.name: r.answer for r in results}
        states = {r.states for r in results if r.answer in ("true", "false")}
        assert len(states) == 1
    assert answers["relative"] == answers["absolute"]
    assert "unknown" not in answers["relative"].values()


def test_relative_counterexample_replays_and_keeps_its_times() -> None:
    from tcpn.models.scenario import parse_scenario
    from tcpn.reports.checks.msc import msc_events, msc_text

    scenario = parse_scenario("""
name: one_flow
links:
  - {a: S, b: R, rate_bps: 10.0e+6, delay_s: 0.005, queue: {kind: drop_tail, limit: 8}}
  - {a: R, b: D, rate_bps: 1.0e+6, delay_s: 0.010}
tcp: {segment_size_bytes: 1000, syn_retries: 2}
flows:
  - {src: S, dst: D, variant: newreno}
horizon_s: 30.0
""")
    charts = {}
    for clock in ("absolute", "relative"):
        prepared = property_net(scenario, segments=2, ack_losses=2, clock=clock)
        result = verify_all(scenario, "delivered_once_in_order", segments=2, ack_losses=2,
                            prepared=prepared)[0]
        assert result.answer == "false" and result.verdict is not None
        evidence = result.verdict.evidence
        assert evidence is not None
        path = [(s.transition, s.binding) for s in evidence.stem]
        prepared.replay(path)
        charts[clock] = msc_text(msc_events(prepared, evidence))
    assert charts["relative"] == charts["absolute"]
    assert "9.000" in charts["relative"]


def test_relative_time_refuses_a_drifting_receiver_clock(one_flow: Scenario) -> None:
    data = one_flow.model_dump()
    data["flows"][0]["receiver_clock_skew"] = 1e-4
    skewed = one_flow.model_validate(data)
    with pytest.raises(InputError, match=r"flows\[0\]\.receiver_clock_skew: a drifting"):
        verification_net(skewed, segments=2, clock="relative")
    with pytest.raises(InputError, match="clock must be one of"):
        verification_net(one_flow, segments=2, clock="wall")


def test_cli_clock_option() -> None:
    import os
    import subprocess
    import sys

    def tcpn(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(Path(sys.executable).parent / "tcpn"), *args],
                              capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "60"})

    scenario = str(ONE_FLOW)
    lines = {}
    for clock in ("absolute", "relative"):
        result = tcpn("check", scenario, "--property", "completes", "--segments", "3",
                      "--losses", "1", "--ack-losses", "1", "--clock", clock)
        assert result.returncode == 0, result.stderr
        lines[clock] = next(line for line in result.stdout.splitlines()
                            if line.startswith("completes:"))
    assert lines["absolute"].startswith("completes: TRUE  (1,562 states")
    assert lines["relative"].startswith("completes: TRUE  (1,550 states")
    wrong = tcpn("check", scenario, "--property", "completes", "--clock", "wall")
    assert wrong.returncode == 3 and "clock must be one of" in wrong.stderr
    alone = tcpn("check", scenario, "--ctl", "AG true", "--clock", "relative")
    assert alone.returncode == 3 and "--clock" in alone.stderr
