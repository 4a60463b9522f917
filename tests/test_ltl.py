"""LTL checking: answers against CTL where the two logics agree, every counterexample
evaluated on its own lasso by an independent evaluator, fairness, dead markings, and the
P/T explorer against the coloured one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpn.petrinets import explore
from tcpn.petrinets.colours import UNIT
from tcpn.petrinets.ctl import satisfying
from tcpn.petrinets.examples import counter, dining_philosophers, interleaving_grid
from tcpn.petrinets.formulas import (
    A,
    And,
    Bool,
    Compare,
    E,
    F,
    Fireable,
    Formula,
    G,
    Not,
    Or,
    R,
    U,
    W,
    X,
    fireable,
    tokens,
)
from tcpn.petrinets.ltl import check_ltl, translate
from tcpn.petrinets.net import PetriNet, Place, Transition
from tcpn.petrinets.ptcheck import ctl_mask, state_mask
from tcpn.petrinets.ptspace import explore_pt, pt_net

NETS = {"philosophers4": dining_philosophers(4), "grid2": interleaving_grid(2),
        "counter3": counter(3)}


def retransmission() -> PetriNet:
    """send -> (lose -> ready | deliver -> delivered): lossy channel with retransmission."""
    net = PetriNet("retransmission")
    for name, initial in (("ready", [()]), ("in_transit", []), ("delivered", [])):
        net.add_place(Place(name, UNIT, initial=initial))
    for name in ("send", "lose", "deliver"):
        net.add_transition(Transition(name))
    net.add_input("ready", "send", "()")
    net.add_output("in_transit", "send", "()")
    net.add_input("in_transit", "lose", "()")
    net.add_output("ready", "lose", "()")
    net.add_input("in_transit", "deliver", "()")
    net.add_output("delivered", "deliver", "()")
    return net


# -- an independent evaluator of LTL on one lasso --------------------------------------------
def holds_on_lasso(formula: Formula, states: list[int], loop_start: int, atom) -> bool:
    """Whether the ultimately periodic path ``states[:loop_start] (states[loop_start:])^w``
    satisfies ``formula`` (positions folded onto the lasso; least/greatest fixpoints by
    iterating over the positions)."""
    n = len(states)

    def nxt(i: int) -> int:
        return i + 1 if i + 1 < n else loop_start

    def value(f: Formula) -> list[bool]:
        if isinstance(f, Not):
            return [not v for v in value(f.operand)]
        if isinstance(f, And):
            parts = [value(o) for o in f.operands]
            return [all(p[i] for p in parts) for i in range(n)]
        if isinstance(f, Or):
            parts = [value(o) for o in f.operands]
            return [any(p[i] for p in parts) for i in range(n)]
        if isinstance(f, X):
            inner = value(f.operand)
            return [inner[nxt(i)] for i in range(n)]
        if isinstance(f, F):
            return value(U(Bool(True), f.operand))
        if isinstance(f, G):
            return value(Not(F(Not(f.operand))))
        if isinstance(f, R):
            return value(Not(U(Not(f.left), Not(f.right))))
        if isinstance(f, W):
            return value(Or((U(f.left, f.right), G(f.left))))
        if isinstance(f, U):
            left, right = value(f.left), value(f.right)
            result = list(right)
            for _ in range(2 * n + 2):  # least fixpoint
                result = [right[i] or (left[i] and result[nxt(i)]) for i in range(n)]
            return result
        return [atom(f, s) for s in states]

    return value(formula)[0]


def lasso_states(space, verdict) -> tuple[list[int], int]:
    """The state numbers along a verdict's lasso (replayed through the state space)."""
    state, states = 0, [0]
    by_marking = {}
    for i in range(len(space)):
        by_marking.setdefault(repr(sorted(space.marking(i).items())), i)
    for step in verdict.evidence.stem + verdict.evidence.cycle:
        following = [e.target for e in space.edges(state) if e.transition == step.transition
                     and e.binding == step.binding]
        assert following, f"{step.transition} is not enabled in state {state}"
        state = following[0]
        states.append(state)
    if verdict.evidence.cycle:
        loop_start = len(verdict.evidence.stem)
        assert states[-1] == states[loop_start], "the cycle returns to where the stem ends"
        return states[:-1], loop_start
    assert not space.successors(state), "a lasso without cycle ends in a dead marking"
    return states, len(states) - 1


# -- formulas -------------------------------------------------------------------------------
def atoms_of(net: PetriNet) -> list[Formula]:
    places, transitions = sorted(net.places), sorted(net.transitions)
    return [tokens(p) >= 1 for p in places[:4]] + [fireable(t) for t in transitions[:3]]


def path_formulas(atoms: list[Formula]):
    leaf = st.sampled_from(atoms)
    return st.recursive(leaf, lambda inner: st.one_of(
        inner.map(Not), inner.map(X), inner.map(F), inner.map(G),
        st.tuples(inner, inner).map(lambda p: U(*p)),
        st.tuples(inner, inner).map(lambda p: R(*p)),
        st.tuples(inner, inner).map(lambda p: W(*p)),
        st.tuples(inner, inner).map(lambda p: And(p)),
        st.tuples(inner, inner).map(lambda p: Or(p))), max_leaves=5)


@pytest.mark.parametrize("name", sorted(NETS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_verdict_is_shown_by_its_lasso(name, data):
    net = NETS[name]
    space = explore(net)
    phi = data.draw(path_formulas(atoms_of(net)))
    quantifier = data.draw(st.sampled_from([A, E]))
    verdict = check_ltl(quantifier(phi), space)
    assert verdict.answer in ("true", "false")
    shown = (verdict.answer == "false") if quantifier is A else (verdict.answer == "true")
    if shown:  # a counterexample of A phi / a witness of E phi: check it on the lasso
        states, loop_start = lasso_states(space, verdict)
        masks: dict[Formula, list[bool]] = {}

        def atom(f: Formula, s: int) -> bool:
            if f not in masks:
                masks[f] = state_mask(f, space).tolist()
            return masks[f][s]
        assert holds_on_lasso(phi, states, loop_start, atom) == (quantifier is E)
    # duality: A phi == not E not phi
    dual = check_ltl(E(Not(phi)) if quantifier is A else A(Not(phi)), space)
    assert dual.answer != verdict.answer


@pytest.mark.parametrize("name", sorted(NETS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_ltl_agrees_with_ctl_where_the_logics_coincide(name, data):
    net = NETS[name]
    space = explore(net)
    atoms = atoms_of(net)
    p, q = data.draw(st.sampled_from(atoms)), data.draw(st.sampled_from(atoms))
    for path in (F(p), G(p), U(p, q)):
        for quantifier in (A, E):
            ltl = check_ltl(quantifier(path), space).answer == "true"
            assert ltl == bool(satisfying(space, quantifier(path))[0]), quantifier(path)


def test_fairness_lets_eventual_delivery_hold_only_when_retransmission_is_strongly_fair():
    space = explore(retransmission())
    delivered = A(F(tokens("delivered") >= 1))
    unfair = check_ltl(delivered, space)
    assert unfair.answer == "false"
    assert [s.transition for s in unfair.evidence.cycle] in (["send", "lose"],
                                                             ["lose", "send"])
    # deliver is disabled at every other state of the loss loop: weak fairness is no help
    assert check_ltl(delivered, space, weak_fair=["deliver"]).answer == "false"
    assert check_ltl(delivered, space, strong_fair=["deliver"]).answer == "true"
    assert check_ltl(delivered, space, strong_fair=["lose"]).answer == "false"


def test_dead_markings_repeat_forever():
    space = explore(counter(3))
    last = tokens("count", value=3) >= 1
    assert check_ltl(A(F(G(last))), space).answer == "true"
    assert check_ltl(A(F(X(last))), space).answer == "true"  # X at the deadlock: itself
    assert check_ltl(E(G(Not(Fireable(("increment",))))), space).answer == "false"


def test_non_ltl_formulas_are_refused():
    from tcpn.errors import InputError
    with pytest.raises(InputError, match="not an LTL formula"):
        check_ltl(A(G(E(F(tokens("count") >= 1)))), explore(counter(2)))


def test_translation_is_small_for_simple_formulas():
    p = tokens("p") >= 1
    assert len(translate(G(p))) == 1
    assert len(translate(F(p))) <= 3


def test_budget_gives_unknown_naming_it():
    space = explore(dining_philosophers(6))
    verdict = check_ltl(A(G(F(fireable("take0")))), space, max_product_states=5)
    assert verdict.answer == "unknown" and "product budget" in verdict.reason


@pytest.mark.parametrize("make", [lambda: dining_philosophers(6), retransmission])
def test_pt_explorer_finds_the_coloured_explorers_states_edges_and_answers(make):
    net = make()
    ours, theirs = explore_pt(pt_net(net)), explore(net)
    assert (ours.n_states, ours.n_edges) == (theirs.n_states, theirs.n_edges)
    formula = A(G(F(fireable(sorted(net.transitions)[0]))))
    assert check_ltl(formula, ours).answer == check_ltl(formula, theirs).answer
    ctl = A(G(E(F(Compare("<=", tokens(sorted(net.places)[0]), tokens(sorted(net.places)[1]))))))
    assert bool(ctl_mask(ctl, ours)[0]) == bool(satisfying(theirs, ctl)[0])
