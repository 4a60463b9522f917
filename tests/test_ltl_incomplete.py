"""LTL on a state space a budget stopped: a lasso among the expanded states answers, the
unexpanded frontier is never read as a deadlock.

The nets are unbounded counters (hand-written PNML in ``tmp_path``), so no budget ever
completes their space: ``grow`` adds a token to ``count`` forever; with ``stay`` (a
self-loop on ``run``) a path may also stay put. ``A F count >= 100`` is then false (stay
forever: a lasso at the initial marking) with ``stay``, and true without it (the only
path grows without end) though the frontier of a stopped search has no successor: read as
a dead marking repeating forever, it would wrongly refute the formula. The same on a
coloured counter (an integer token incremented up to 1,000) on the coloured explorer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tcpn.petrinets.checking.contest.examinations import check_examinations, load_model
from tcpn.petrinets.checking.formulas import A, F, tokens
from tcpn.petrinets.checking.ltl import check_ltl
from tcpn.petrinets.examples import counter
from tcpn.petrinets.net import Transition
from tcpn.petrinets.statespace.ptspace import explore_pt
from tcpn.petrinets.statespace.space import explore

AT_LEAST_100 = ("<integer-le><integer-constant>100</integer-constant><tokens-count>"
                "<place>count</place></tokens-count></integer-le>")


def write_counter(folder: Path, stay: bool) -> Path:
    """``folder/model.pnml``: ``run`` (one token) enables ``grow`` (run -> run + count)
    and, with ``stay``, a self-loop ``stay`` (run -> run); and LTLCardinality.xml asking
    ``A F count >= 100``."""
    arcs = ('<arc id="a1" source="run" target="grow"/><arc id="a2" source="grow" '
            'target="run"/><arc id="a3" source="grow" target="count"/>')
    if stay:
        arcs += ('<transition id="stay"/><arc id="a4" source="run" target="stay"/>'
                 '<arc id="a5" source="stay" target="run"/>')
    (folder / "model.pnml").write_text(
        '<?xml version="1.0"?><pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">'
        '<net id="counter" type="http://www.pnml.org/version-2009/grammar/ptnet"><page '
        'id="g"><place id="run"><initialMarking><text>1</text></initialMarking></place>'
        f'<place id="count"/><transition id="grow"/>{arcs}</page></net></pnml>')
    (folder / "LTLCardinality.xml").write_text(
        '<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/"><property><id>'
        'counter-LTLCardinality-00</id><description>-</description><formula><all-paths>'
        f'<finally>{AT_LEAST_100}</finally></all-paths></formula></property></property-set>')
    return folder / "model.pnml"


def test_a_lasso_among_the_expanded_states_refutes_the_formula(tmp_path: Path):
    model = load_model(write_counter(tmp_path, stay=True))
    space = explore_pt(model.net, max_states=20)
    assert not space.complete
    verdict = check_ltl(A(F(tokens("count") >= 100)), space)
    assert verdict.answer == "false"
    assert verdict.evidence is not None and [s.transition for s in verdict.evidence.cycle] \
        == ["stay"]


def test_the_frontier_of_a_stopped_search_is_not_a_deadlock(tmp_path: Path):
    model = load_model(write_counter(tmp_path, stay=False))
    space = explore_pt(model.net, max_states=20)
    assert not space.complete and space.n_expanded < len(space)
    verdict = check_ltl(A(F(tokens("count") >= 100)), space)
    assert verdict.answer == "unknown"
    assert "no lasso among the" in (verdict.reason or "")


def test_the_ltl_examination_answers_from_a_stopped_search(tmp_path: Path):
    path = write_counter(tmp_path, stay=True)
    answers = check_examinations(path, ["LTLCardinality"], max_states=20)
    assert answers["LTLCardinality"][0].startswith(
        "FORMULA counter-LTLCardinality-00 FALSE TECHNIQUES EXPLICIT")
    write_counter(tmp_path, stay=False)
    answers = check_examinations(path, ["LTLCardinality"], max_states=20)
    assert answers["LTLCardinality"] == ["FORMULA counter-LTLCardinality-00 CANNOT_COMPUTE"]


@pytest.mark.parametrize(("stay", "answer"), [(True, "false"), (False, "unknown")])
def test_a_coloured_space_stopped_answers_by_a_lasso_only(stay: bool, answer: str):
    net = counter(1000)
    if stay:
        net.add_transition(Transition("stay"))
        net.add_input("count", "stay", "x")
        net.add_output("count", "stay", "x")
    space = explore(net, max_states=20)
    assert not space.complete
    assert check_ltl(A(F(tokens("count", value=500) >= 1)), space).answer == answer


def random_path(rng, net, depth: int = 3):  # type: ignore[no-untyped-def]
    """A random LTL path formula over the net's atoms (X F G U R W, not, and, or)."""
    from test_contest_unreachable import random_state_formula

    from tcpn.petrinets.checking.formulas import G, Not, R, U, W, X
    if depth == 0 or rng.random() < 0.25:
        return random_state_formula(rng, net, 1)
    kind = int(rng.integers(6))
    if kind < 4:
        return (X, F, G, Not)[kind](random_path(rng, net, depth - 1))
    left, right = random_path(rng, net, depth - 1), random_path(rng, net, depth - 1)
    return (U, R, W)[int(rng.integers(3))](left, right) if kind == 4 else (
        left & right if rng.random() < 0.5 else left | right)


def test_a_product_that_never_reaches_the_frontier_decides_the_formula():
    """No lasso in a product that reaches no state left unexpanded is no lasso in the
    whole product (every state it passes has all its successors): ``A φ`` is then true.
    Checked on random bounded nets and random formulas against the complete space, with
    enough decided for the check not to be vacuous; before, a stopped search answered
    only by a lasso (``false``)."""
    import numpy as np
    from test_contest_partial_ctl import bounded_net

    decided_true = asked = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        net = bounded_net(rng)
        whole = explore_pt(net)
        if len(whole) < 20:
            continue
        part = explore_pt(net, max_states=len(whole) // 2)
        assert not part.complete
        for _ in range(20):
            formula = A(random_path(rng, net))
            asked += 1
            found = check_ltl(formula, part).answer
            if found != "unknown":
                assert found == check_ltl(formula, whole).answer, (seed, formula)
                decided_true += found == "true"
    assert asked > 300 and decided_true > asked // 20, (decided_true, asked)
