"""Random walks: witnesses of ``EF p`` and counter-examples of ``AG p`` beyond a budget.

A net of independent two-place cycles (2^k interleavings, which a small state budget stops
near the initial marking) beside a chain of places one token has to run down: the chain's
end is reached only after many firings, deeper than the budgeted search gets. The walks
find it (``EF`` TRUE, ``AG`` FALSE, each witness replayed by the net's own rules), they give
the same witness from the same seed, and they never answer a formula whose witness does
not exist (two tokens at the chain's end: the state equation proves it FALSE, not a
walk). On random nets with read,
inhibitor and reset arcs the vectorised enabling agrees with the net's transition-by-
transition rule, and every goal a walk meets is one the complete state space reaches.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from tcpn.petrinets.checking.contest import walks
from tcpn.petrinets.checking.contest.examinations import check_examination, load_model
from tcpn.petrinets.checking.contest.walks import (
    Walks,
    _Enabling,
    _holds,
    goal_of,
    random_walks,
    replay,
)
from tcpn.petrinets.checking.formulas import AG, EF, Compare, Const, Deadlock, fireable, tokens
from tcpn.petrinets.checking.ptcheck import ctl_mask
from tcpn.petrinets.statespace.ptspace import PTNet, explore_pt

CYCLES, CHAIN = 10, 40


def write_deep_model(folder: Path, cycles_return: bool = True) -> Path:
    """``folder/model.pnml``: :data:`CYCLES` marked two-place cycles a_i <-> b_i (with
    ``cycles_return`` false, one-way steps a_i -> b_i: the net then dies), and a
    chain c0 -> m0 -> c1 -> ... -> c{CHAIN} with one token in c0; and
    ``ReachabilityCardinality.xml``: EF c{CHAIN} >= 1 (true, CHAIN firings deep),
    AG c{CHAIN} <= 0 (false, the same witness), EF c{CHAIN} >= 2 (false: one token)."""
    nodes = []
    for i in range(CYCLES):
        nodes.append(
            f'<place id="a{i}"><initialMarking><text>1</text></initialMarking></place>'
            f'<place id="b{i}"/><transition id="f{i}"/>'
            f'<arc id="af{i}" source="a{i}" target="f{i}"/>'
            f'<arc id="fb{i}" source="f{i}" target="b{i}"/>' + (
                f'<transition id="g{i}"/><arc id="bg{i}" source="b{i}" target="g{i}"/>'
                f'<arc id="ga{i}" source="g{i}" target="a{i}"/>' if cycles_return else ""))
    nodes.append('<place id="c0"><initialMarking><text>1</text></initialMarking></place>')
    for i in range(CHAIN):
        nodes.append(f'<place id="c{i + 1}"/><transition id="m{i}"/>'
                     f'<arc id="cm{i}" source="c{i}" target="m{i}"/>'
                     f'<arc id="mc{i}" source="m{i}" target="c{i + 1}"/>')
    path = folder / "model.pnml"
    path.write_text(
        '<?xml version="1.0"?><pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">'
        '<net id="deep" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="g">'
        + "\n".join(nodes) + "</page></net></pnml>")
    end = f"<tokens-count><place>c{CHAIN}</place></tokens-count>"

    def at_least(n: int) -> str:
        return f"<integer-le><integer-constant>{n}</integer-constant>{end}</integer-le>"

    formulas = [f"<exists-path><finally>{at_least(1)}</finally></exists-path>",
                f"<all-paths><globally><integer-le>{end}<integer-constant>0"
                "</integer-constant></integer-le></globally></all-paths>",
                f"<exists-path><finally>{at_least(2)}</finally></exists-path>"]
    (folder / "ReachabilityCardinality.xml").write_text(
        '<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/">' + "".join(
            f"<property><id>deep-{n:02d}</id><formula>{f}</formula></property>"
            for n, f in enumerate(formulas)) + "</property-set>")
    return path


def test_walks_decide_a_witness_deeper_than_the_budgeted_search(tmp_path, monkeypatch):
    monkeypatch.setattr(walks, "WALK_UNITS", 4_000)  # the false formula walks this long
    model = write_deep_model(tmp_path)
    lines = check_examination(model, "ReachabilityCardinality", max_states=2_000,
                              time_limit_s=60)
    assert [line.split()[2] for line in lines] == ["TRUE", "FALSE", "FALSE"]
    assert all(line.endswith("TECHNIQUES RANDOM_WALK") for line in lines[:2])
    assert lines[2].endswith("STATE_EQUATION")  # one token in the chain: never two
    # without walks (a complete search is the only other way) the budget decides nothing
    net = load_model(model).net
    assert not explore_pt(net, max_states=2_000).complete


def test_a_bound_the_budgeted_search_stays_below_is_met_by_a_walk(tmp_path, monkeypatch):
    """UpperBounds: the search's states never put a token at the chain's end, the state
    equation bounds it by one, and a walk reaches a marking with that one: the bound is
    exact (1). A bound above what the net can reach (two ends' sum, at most one since
    one token runs down the chain) is met by the search's own states."""
    monkeypatch.setattr(walks, "WALK_UNITS", 4_000)
    model = write_deep_model(tmp_path)
    (tmp_path / "UpperBounds.xml").write_text(
        '<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/">'
        f'<property><id>end</id><formula><place-bound><place>c{CHAIN}</place>'
        '</place-bound></formula></property>'
        '<property><id>start</id><formula><place-bound><place>c0</place>'
        f'<place>c{CHAIN}</place></place-bound></formula></property></property-set>')
    lines = check_examination(model, "UpperBounds", max_states=2_000, time_limit_s=60)
    assert lines == [
        "FORMULA end 1 TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING STATE_EQUATION RANDOM_WALK",
        "FORMULA start 1 TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING STATE_EQUATION"]
    monkeypatch.setattr(walks, "WALK_UNITS", 1)  # no walk: the bound is not proved
    assert check_examination(model, "UpperBounds", max_states=2_000,
                             time_limit_s=60)[0] == "FORMULA end CANNOT_COMPUTE"


def test_a_deadlock_beyond_the_budgeted_search_is_met_by_a_walk(tmp_path):
    """ReachabilityDeadlock: with one-way steps every run ends dead, deeper than 2,000
    states reach; a walk meets the dead marking (TRUE). With the cycles the net never
    dies, and nothing answers FALSE for it (CANNOT_COMPUTE)."""
    (tmp_path / "dies").mkdir()
    dies = write_deep_model(tmp_path / "dies", cycles_return=False)
    assert check_examination(dies, "ReachabilityDeadlock", max_states=2_000,
                             time_limit_s=60) == [
        "FORMULA ReachabilityDeadlock TRUE TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING "
        "RANDOM_WALK"]
    lives = write_deep_model(tmp_path)
    assert check_examination(lives, "ReachabilityDeadlock", max_states=2_000,
                             time_limit_s=60) == ["FORMULA ReachabilityDeadlock CANNOT_COMPUTE"]


def test_walks_make_quasiliveness_true_and_liveness_false_beyond_the_search(tmp_path):
    """The chain's last transitions fire deeper than 2,000 states reach: walks that
    enable each of them make QuasiLiveness TRUE; a walk to the dead marking of the
    one-way net makes Liveness FALSE (nothing fires again from there). Liveness of the
    net with cycles is not decided (it is false, the chain runs out, but no dead marking
    or dead transition shows it)."""
    lives = write_deep_model(tmp_path)
    assert check_examination(lives, "QuasiLiveness", max_states=2_000, time_limit_s=60) == [
        "FORMULA QuasiLiveness TRUE TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING RANDOM_WALK"]
    assert check_examination(lives, "Liveness", max_states=2_000, time_limit_s=60) == [
        "FORMULA Liveness CANNOT_COMPUTE"]
    (tmp_path / "dies").mkdir()
    dies = write_deep_model(tmp_path / "dies", cycles_return=False)
    assert check_examination(dies, "Liveness", max_states=2_000, time_limit_s=60) == [
        "FORMULA Liveness FALSE TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING RANDOM_WALK"]


def test_the_walks_budget_is_work_not_seconds(tmp_path, monkeypatch):
    """The walks stop after a count of steps set by the net's width, not after seconds:
    the same answers on a loaded machine as on a quiet one (a false goal walked to the
    end of its budget in both)."""
    monkeypatch.setattr(walks, "WALK_UNITS", 3_000)
    net = load_model(write_deep_model(tmp_path)).net
    formulas = {"deep": EF(tokens(f"c{CHAIN}") >= 1), "never": EF(tokens(f"c{CHAIN}") >= 2)}
    answers = []
    for seconds in (1_000.0, 10_000.0):
        found = Walks(net, formulas, seconds, seed=7)
        answers.append((found.answer("deep"), found.answer("never")))
    assert answers[0] == answers[1] and answers[0][1] is None and answers[0][0] is not None
    assert walks.walk_steps(net) == int(3_000 / (1 + max(len(net.places),
                                                          len(net.transitions)) / 256))
    assert walks.walk_steps(net, 10**9) > walks.walk_steps(net)


def test_the_witness_replays_and_is_the_same_from_the_same_seed(tmp_path):
    net = load_model(write_deep_model(tmp_path)).net
    goal = tokens(f"c{CHAIN}") >= 1
    first = random_walks(net, [goal], seed=5, max_steps=5_000)[0]
    assert first is not None and len(first) >= CHAIN
    end = replay(net, first)
    assert end[net.places.index(f"c{CHAIN}")] == 1
    assert random_walks(net, [goal], seed=5, max_steps=5_000)[0] == first
    with pytest.raises(ValueError, match="step 0 of the walk: m1 is not enabled"):
        replay(net, ["m1"])


def test_walks_never_meet_an_unreachable_goal(tmp_path):
    net = load_model(write_deep_model(tmp_path)).net
    found = random_walks(net, [tokens(f"c{CHAIN}") >= 2, Deadlock()], max_steps=3_000,
                         walkers=8, max_length=200)
    assert found == [None, None]


def test_only_ef_and_ag_over_state_formulas_are_walked():
    p = tokens("c1") >= 1
    assert goal_of(EF(p)) == (p, True)
    assert goal_of(AG(p)) == (~p, False)
    assert goal_of(EF(EF(p))) is None
    assert goal_of(EF(Compare(">=", tokens("c1", value=1), Const(1)))) is None


def random_net(seed: int, places: int = 6, transitions: int = 6) -> PTNet:
    """A random P/T net with input, output, read, inhibitor and reset arcs."""
    rng = np.random.default_rng(seed)

    def arcs(density: float, most: int = 2) -> np.ndarray:
        return (rng.random((transitions, places)) < density) * rng.integers(
            1, most + 1, (transitions, places))

    return PTNet(tuple(f"p{i}" for i in range(places)),
                 tuple(f"t{i}" for i in range(transitions)), pre=arcs(0.3), post=arcs(0.3),
                 test=arcs(0.1, 1), inhibit=arcs(0.1, 3), reset=arcs(0.05, 1) > 0,
                 initial=rng.integers(0, 3, places))


@pytest.mark.parametrize("seed", range(30))
def test_walks_agree_with_the_complete_state_space(seed):
    net = random_net(seed)
    rng = np.random.default_rng(seed)
    markings = rng.integers(0, 4, (50, len(net.places)))
    expected = np.stack([net.enabled(markings, t) for t in range(len(net.transitions))],
                        axis=1)
    assert (_Enabling(net)(markings) == expected).all()
    space = explore_pt(net, max_states=5_000)
    if not space.complete:
        pytest.skip("unbounded random net")
    goals = [tokens(p) >= k for p in net.places for k in (1, 3)] + [
        Deadlock(), fireable("t0") & ~fireable("t1")]
    found = random_walks(net, goals, seed=seed, max_steps=300, walkers=4, max_length=50)
    for goal, path in zip(goals, found, strict=True):
        reachable = bool(ctl_mask(EF(goal), space)[0])
        if path is None:
            continue
        assert reachable, goal
        end = replay(net, path)[None, :]
        assert _holds(goal, end, _Enabling(net)(end), {p: i for i, p in enumerate(net.places)},
                      {t: i for i, t in enumerate(net.transitions)})[0]


def test_the_states_of_a_stopped_search_are_read_in_one_pass_with_the_same_verdicts(
        tmp_path):
    """All of an examination's ``EF p`` / ``AG p`` read on the states in one pass, a block
    at a time, give what reading them one formula at a time gives; past the deadline the
    pass decides nothing (and one formula's reading stops too), never a late answer."""
    from tcpn.petrinets.checking.contest.examinations import (
        _reachability,
        _seen_in_one_pass,
    )
    from tcpn.petrinets.checking.ptcheck import BudgetReached, state_mask

    net = load_model(write_deep_model(tmp_path)).net
    space = explore_pt(net, max_states=2_000)
    assert not space.complete
    formulas = [EF(tokens("b0") >= 1), EF(tokens(f"c{CHAIN}") >= 1), AG(tokens("a1") <= 1),
                AG(tokens("a1") + tokens("b1") <= 0), EF(fireable("m3") & fireable("g2")),
                AG(~fireable("f5") | (tokens("c0") >= 1)), EF(Deadlock()),
                EF(fireable(f"m{CHAIN - 1}"))]
    one_pass = _seen_in_one_pass(formulas, space, net, None)
    assert one_pass == {f: _reachability(f, space) for f in formulas}
    assert set(one_pass.values()) == {True, False, None}  # each verdict kind is met
    past = time.perf_counter() - 1.0
    assert set(_seen_in_one_pass(formulas, space, net, past).values()) == {None}
    with pytest.raises(BudgetReached):
        state_mask(fireable("m3"), space, past)
