"""The explorer's memos change nothing: the same states, in the same order, the same edges.

Each net is explored twice: as usual, and with every memo of the successor computation
off (enumerations by input contents, firings by their places' contents and time, contents
moved back in time, untimed firings per place). Both spaces must have the same markings
(and clocks) state by state and the same labelled edges.
"""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import pytest

from tcpn.models.scenario import validate_scenario
from tcpn.models.verification import LossBudget, verification_net
from tcpn.petrinets import INT, UNIT, PetriNet, Place, Transition
from tcpn.petrinets.examples import dining_philosophers
from tcpn.petrinets.exchange.pnml import read_pnml
from tcpn.petrinets.statespace import space as statespace
from tcpn.petrinets.statespace.space import StateSpace, explore


class _Forgetful(dict):  # type: ignore[type-arg]
    """A memo that never keeps anything."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _without_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    relayout = statespace.SuccessorGenerator.relayout

    def forgetful_relayout(gen: Any) -> None:
        relayout(gen)
        for rule in [*(r for group in gen.groups for r in group), *gen.rules]:
            rule.memo_on = False
        for group in gen.groups:
            for rule in group:
                rule.placed_on = False
        gen.fired = _Forgetful()
        gen.shifted = _Forgetful()

    monkeypatch.setattr(statespace.SuccessorGenerator, "relayout", forgetful_relayout)


def _same(a: StateSpace, b: StateSpace) -> None:
    assert (len(a), a.n_edges, a.dead_markings()) == (len(b), b.n_edges, b.dead_markings())
    for s in range(len(a)):
        assert a.marking(s) == b.marking(s)
        assert a.clock(s) == b.clock(s)
        assert a.edges(s) == b.edges(s)


def _clocks() -> tuple[PetriNet, str]:
    """Three timed clocks (delays 0.1, 0.3, 0.7) and a count of firings modulo 5."""
    net = PetriNet("clocks")
    net.add_place(Place("count", INT, initial=[0]))
    for name, delay in (("a", 0.1), ("b", 0.3), ("c", 0.7)):
        net.add_place(Place(name, UNIT.timed(), initial=[()]))
        net.add_transition(Transition(f"t{name}", delay=delay))
        net.add_input(name, f"t{name}", "()")
        net.add_output(name, f"t{name}", "()")
        net.add_input("count", f"t{name}", "n")
        net.add_output("count", f"t{name}", "(n + 1) % 5")
    return net, "relative"


def _stamps() -> tuple[PetriNet, str]:
    """Absolute time: ``emit`` fires once per tick, on the same input contents in two
    ticks out of two, and writes half the time (a firing memo that forgot the time would
    repeat the earlier firing)."""
    net = PetriNet("stamps")
    net.add_place(Place("clock", UNIT.timed(), initial=[()]))
    net.add_place(Place("go", UNIT, initial=[()]))
    net.add_place(Place("last", INT, initial=[0]))
    net.add_transition(Transition("tick", delay=1))
    net.add_input("clock", "tick", "()")
    net.add_output("clock", "tick", "()")
    net.add_output("go", "tick", "()")
    net.add_transition(Transition("emit"))
    net.add_input("go", "emit", "()")
    net.add_input("last", "emit", "x")
    net.add_output("last", "emit", "int(now) // 2")
    return net, "absolute"


def _verification(clock: str = "absolute") -> tuple[Any, str]:
    scenario = validate_scenario({
        "name": "p2p", "horizon_s": 10.0,
        "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01}],
        "flows": [{"src": "A", "dst": "B", "variant": "newreno"}]})
    v = verification_net(scenario, segments=3, losses=LossBudget(data_losses=2), clock=clock)
    return v.net, v.clock


@pytest.mark.parametrize("build", [
    _clocks,
    _stamps,
    lambda: (dining_philosophers(5), "relative"),
    _verification,
    lambda: _verification("relative"),  # CLOCK values moved back through the memos too
], ids=["clocks-relative", "stamps-absolute", "philosophers", "verification-newreno-absolute",
        "verification-newreno-relative"])
def test_memos_change_nothing(build, monkeypatch):
    net, clock = build()
    usual = explore(net, clock=clock, max_states=5000)
    assert len(usual) > 10
    _without_memos(monkeypatch)
    _same(usual, explore(net, clock=clock, max_states=5000))


@pytest.mark.parametrize("instance", ["Philosophers-COL-000005", "SharedMemory-COL-000005"])
def test_memos_change_nothing_on_contest_nets(instance, shared_dir, tmp_path, monkeypatch):
    with tarfile.open(Path(shared_dir) / "data" / "mcc" / "instances" /
                      f"{instance}.tgz") as archive:
        archive.extractall(tmp_path, members=[archive.getmember(f"{instance}/model.pnml")],
                           filter="data")
    net = read_pnml(tmp_path / instance / "model.pnml").net
    usual = explore(net)
    _without_memos(monkeypatch)
    _same(usual, explore(net))


def test_native_engine_explores_the_same_space():
    """``engine="native"`` runs the built code: the same states and edges, in order."""
    from tcpn.petrinets.engine.native import why_unavailable

    reason = why_unavailable()
    if reason is not None:
        pytest.skip(f"the native engine cannot be built here: {reason}")
    for net, clock in (_clocks(), (dining_philosophers(5), "relative")):
        _same(explore(net, clock=clock, engine="python"),
              explore(net, clock=clock, engine="native"))
