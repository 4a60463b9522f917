"""Unboundedness proved by random walks (UpperBounds ``inf``): a path to ``M`` and a
sequence from ``M`` to ``M' >= M`` that grows a place, on a net without inhibitor and
reset arcs (monotone), each witness fired again by the net's own rule.

The checks: a producer loop beside many independent cycles (a search stopped by its
state budget) answers ``inf`` for the produced place and the state equation's exact
bound for the loop's own places; an inhibitor arc that caps the produced place makes the
same walk prove nothing (the pump would be wrong there: the place holds at most two);
on random monotone nets whose state space is complete (bounded) no walk ever claims a
pump, and on unbounded ones every pump claimed replays.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcpn.petrinets.checking.contest.examinations import check_examination
from tcpn.petrinets.checking.contest.pumping import monotone, pump_of, pumping_walks
from tcpn.petrinets.checking.contest.walks import replay
from tcpn.petrinets.statespace.ptspace import PTNet, explore_pt

CYCLES = 10


def write_producer_model(folder: Path) -> Path:
    """``folder/model.pnml``: :data:`CYCLES` marked two-place cycles (2^10 markings) and a
    loop a -> t1 -> b -> t2 -> a whose t2 also puts a token on q (q grows without end);
    ``UpperBounds.xml``: q (inf), a + b (1), q + a (inf)."""
    nodes = [f'<place id="c{i}"><initialMarking><text>1</text></initialMarking></place>'
             f'<place id="d{i}"/><transition id="f{i}"/><transition id="g{i}"/>'
             f'<arc id="cf{i}" source="c{i}" target="f{i}"/>'
             f'<arc id="fd{i}" source="f{i}" target="d{i}"/>'
             f'<arc id="dg{i}" source="d{i}" target="g{i}"/>'
             f'<arc id="gc{i}" source="g{i}" target="c{i}"/>' for i in range(CYCLES)]
    nodes.append('<place id="a"><initialMarking><text>1</text></initialMarking></place>'
                 '<place id="b"/><place id="q"/><transition id="t1"/><transition id="t2"/>'
                 '<arc id="a1" source="a" target="t1"/><arc id="a2" source="t1" target="b"/>'
                 '<arc id="a3" source="b" target="t2"/><arc id="a4" source="t2" target="a"/>'
                 '<arc id="a5" source="t2" target="q"/>')
    path = folder / "model.pnml"
    path.write_text(
        '<?xml version="1.0"?><pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">'
        '<net id="producer" type="http://www.pnml.org/version-2009/grammar/ptnet">'
        '<page id="g">' + "\n".join(nodes) + "</page></net></pnml>")
    bounds = {"q": ["q"], "ab": ["a", "b"], "qa": ["q", "a"]}
    (folder / "UpperBounds.xml").write_text(
        '<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/">' + "".join(
            f"<property><id>{ident}</id><formula><place-bound>"
            + "".join(f"<place>{p}</place>" for p in places)
            + "</place-bound></formula></property>" for ident, places in bounds.items())
        + "</property-set>")
    return path


def test_a_produced_place_is_proved_unbounded_and_a_bounded_one_is_not(tmp_path):
    lines = check_examination(write_producer_model(tmp_path), "UpperBounds",
                              max_states=2_000, time_limit_s=60)
    assert lines == [
        "FORMULA q inf TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING RANDOM_WALK",
        "FORMULA ab 1 TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING STATE_EQUATION",
        "FORMULA qa inf TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING RANDOM_WALK"]


def loop(inhibited: bool) -> PTNet:
    """a -> t1 -> b + q, b -> t2 -> a; with ``inhibited``, t2 only while q < 2 (q is
    then bounded by 2, though the cycle t1 t2 grows it from a marking it covers)."""
    z = np.zeros((2, 3), dtype=np.int64)
    inhibit = z.copy()
    if inhibited:
        inhibit[1, 2] = 2
    return PTNet(("a", "b", "q"), ("t1", "t2"), pre=np.array([[1, 0, 0], [0, 1, 0]]),
                 post=np.array([[0, 1, 1], [1, 0, 0]]), test=z, inhibit=inhibit,
                 reset=z > 0, initial=np.array([1, 0, 0]))


def test_an_inhibitor_arc_breaks_the_pumping_argument_and_nothing_is_claimed():
    free, capped = loop(False), loop(True)
    assert monotone(free) and not monotone(capped)
    found = pumping_walks(free, [np.array([2])], max_steps=100, walkers=2)[0]
    assert found is not None and found.grows.tolist() == [False, False, True]
    assert pumping_walks(capped, [np.array([2])], max_steps=100, walkers=2) == [None]
    assert pump_of(capped, (), ("t1", "t2")) is None  # the cycle fires once, not forever
    assert explore_pt(capped).complete  # q holds at most two tokens
    assert pump_of(free, (), ("t1",)) is None  # ends at a marking not covering its start
    assert pump_of(free, ("t1",), ("t2", "t1")) is not None


def random_monotone_net(seed: int, places: int = 5, transitions: int = 5) -> PTNet:
    """A random P/T net with input, output and read arcs (no inhibitor, no reset)."""
    rng = np.random.default_rng(seed)

    def arcs(density: float, most: int = 2) -> np.ndarray:
        return (rng.random((transitions, places)) < density) * rng.integers(
            1, most + 1, (transitions, places))

    z = np.zeros((transitions, places), dtype=np.int64)
    return PTNet(tuple(f"p{i}" for i in range(places)),
                 tuple(f"t{i}" for i in range(transitions)), pre=arcs(0.35),
                 post=arcs(0.35), test=arcs(0.1, 1), inhibit=z, reset=z > 0,
                 initial=rng.integers(0, 3, places))


@pytest.mark.parametrize("seed", range(40))
def test_no_pump_on_a_bounded_net_and_every_pump_replays(seed):
    net = random_monotone_net(seed)
    goals = [np.array([p]) for p in range(len(net.places))]
    found = pumping_walks(net, goals, seed=seed, max_steps=400, walkers=4, max_length=60)
    space = explore_pt(net, max_states=3_000)
    if space.complete:  # bounded: no marking covers an earlier one strictly on a path
        assert found == [None] * len(goals)
        return
    for goal, pump in zip(goals, found, strict=True):
        if pump is None:
            continue
        start = replay(net, pump.path)
        end = replay(net, pump.cycle, start)
        assert (end >= start).all() and (end > start)[goal].any()
        # fired again from the larger marking: larger again by the same difference
        assert (replay(net, pump.cycle, end) == 2 * end - start).all()
