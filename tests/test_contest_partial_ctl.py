"""CTL on a stopped search, three-valued: what the states found prove of a formula
(surely true, surely false, unknown), checked against the complete state space.

On random nets (input, output, read and inhibitor arcs) whose state space is complete,
the same net is explored again with a state budget that stops it; every random CTL
formula the stopped space decides must have the complete space's answer, and enough are
decided for the check not to be vacuous. A frontier state is neither dead nor live: a
budget that stops next to a deadlock decides nothing about ``AX false`` there.
"""

from __future__ import annotations

import numpy as np
from test_contest_unreachable import random_state_formula  # tests on the path

from tcpn.petrinets.checking.contest.examinations import check_examination
from tcpn.petrinets.checking.contest.partial_ctl import partial_ctl
from tcpn.petrinets.checking.formulas import AF, AG, AX, EF, EG, EX, A, E, Formula, R, U, W
from tcpn.petrinets.checking.formulas import Bool as Const
from tcpn.petrinets.checking.ptcheck import ctl_mask
from tcpn.petrinets.statespace.ptspace import PTNet, explore_pt

UNARY = (EX, AX, EF, AF, EG, AG)


def bounded_net(rng: np.random.Generator, places: int = 7, transitions: int = 8) -> PTNet:
    """A random net whose transitions each move one or two tokens (sometimes taking two
    and giving one back: runs may die), with a few read and inhibitor arcs: bounded,
    with tens to hundreds of markings."""
    pre = np.zeros((transitions, places), dtype=np.int64)
    post, test, inhibit = pre.copy(), pre.copy(), pre.copy()
    for t in range(transitions):
        taken = rng.choice(places, size=int(rng.integers(1, 3)), replace=False)
        pre[t, taken] = 1
        given = rng.choice(places, size=len(taken) - int(rng.random() < 0.2), replace=False)
        post[t, given] = 1
        if rng.random() < 0.2:
            test[t, rng.integers(places)] = 1
        if rng.random() < 0.2:
            inhibit[t, rng.integers(places)] = int(rng.integers(1, 3))
    test[pre > 0] = 0
    return PTNet(tuple(f"p{i}" for i in range(places)),
                 tuple(f"t{i}" for i in range(transitions)), pre=pre, post=post, test=test,
                 inhibit=inhibit, reset=pre < 0,
                 initial=np.bincount(rng.integers(0, places, 4), minlength=places))


def random_ctl(rng: np.random.Generator, net: PTNet, depth: int = 3) -> Formula:
    if depth == 0 or rng.random() < 0.25:
        return random_state_formula(rng, net, 1)
    kind = int(rng.integers(len(UNARY) + 3))
    if kind < len(UNARY):
        return UNARY[kind](random_ctl(rng, net, depth - 1))
    left, right = random_ctl(rng, net, depth - 1), random_ctl(rng, net, depth - 1)
    path = (U, W, R)[kind - len(UNARY)](left, right)
    return A(path) if rng.random() < 0.5 else E(path)


def test_what_a_stopped_search_decides_is_what_the_complete_space_says():
    decided = asked = 0
    for seed in range(80):
        rng = np.random.default_rng(seed)
        net = bounded_net(rng)
        whole = explore_pt(net)
        if len(whole) < 20:
            continue
        for budget in (len(whole) // 4, len(whole) // 2):
            part = explore_pt(net, max_states=budget)
            assert not part.complete
            for _ in range(30):
                formula = random_ctl(rng, net)
                asked += 1
                found = partial_ctl(formula, part)
                if found is not None:
                    decided += 1
                    assert found == bool(ctl_mask(formula, whole)[0]), (seed, formula)
    assert asked > 500 and decided > asked // 4, (decided, asked)


def test_a_frontier_state_is_neither_dead_nor_live():
    """A producer (t: a -> a + q, for ever) stopped after 50 states: every expanded state
    has its successor, the frontier's are unknown, so neither ``AG EX true`` nor ``EG
    true`` is decided (no known path is infinite); ``AX true`` and ``EX false`` are."""
    z = np.zeros((1, 2), dtype=np.int64)
    producer = PTNet(("a", "q"), ("t",), pre=np.array([[1, 0]]), post=np.array([[1, 1]]),
                     test=z, inhibit=z, reset=z > 0, initial=np.array([1, 0]))
    space = explore_pt(producer, max_states=50)
    assert not space.complete
    assert partial_ctl(AX(Const(True)), space) is True
    assert partial_ctl(EX(Const(False)), space) is False
    assert partial_ctl(AG(EX(Const(True))), space) is None  # the frontier: unknown
    assert partial_ctl(EG(Const(True)), space) is None  # no known infinite path


def test_the_ctl_examination_of_a_stopped_search_reads_what_its_states_prove(tmp_path):
    """Ten two-place cycles and a chain (a search stopped at 2,000 states): ``EX a0 = 0``
    is witnessed by one firing, ``AX c0 >= 1`` refuted by one, ``E[c0 >= 1 U c1 >= 1]``
    witnessed; none folds (each atom holds in some reachable marking and fails in
    another), none is ``EF``/``AG``: before, all three were CANNOT_COMPUTE."""
    from test_contest_walks import write_deep_model

    model = write_deep_model(tmp_path)

    def count(place: str, at_least: int) -> str:
        return (f"<integer-le><integer-constant>{at_least}</integer-constant><tokens-count>"
                f"<place>{place}</place></tokens-count></integer-le>")

    formulas = [
        "<exists-path><next><integer-le><tokens-count><place>a0</place></tokens-count>"
        "<integer-constant>0</integer-constant></integer-le></next></exists-path>",
        f"<all-paths><next>{count('c0', 1)}</next></all-paths>",
        f"<exists-path><until><before>{count('c0', 1)}</before><reach>{count('c1', 1)}"
        "</reach></until></exists-path>"]
    (tmp_path / "CTLCardinality.xml").write_text(
        '<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/">' + "".join(
            f"<property><id>ctl-{n}</id><formula>{f}</formula></property>"
            for n, f in enumerate(formulas)) + "</property-set>")
    lines = check_examination(model, "CTLCardinality", max_states=2_000, time_limit_s=60)
    assert [line.split()[2] for line in lines] == ["TRUE", "FALSE", "TRUE"]
