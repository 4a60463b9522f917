"""LTL checking: answers against CTL where the two logics agree, every counterexample
evaluated on its own lasso by an independent evaluator, fairness, dead markings, and the
P/T explorer against the coloured one."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpn.petrinets import explore
from tcpn.petrinets.checking import ltl as ltl_module
from tcpn.petrinets.checking.ctl import satisfying
from tcpn.petrinets.checking.formulas import (
    A,
    And,
    Bool,
    Compare,
    Const,
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
from tcpn.petrinets.checking.ltl import _nnf, check_ltl, translate
from tcpn.petrinets.checking.ltl.rewrite import simplify
from tcpn.petrinets.checking.ptcheck import ctl_mask, state_mask
from tcpn.petrinets.colours import UNIT
from tcpn.petrinets.examples import counter, dining_philosophers, interleaving_grid
from tcpn.petrinets.net import PetriNet, Place, Transition
from tcpn.petrinets.statespace.ptspace import PTNet, PTStateSpace, explore_pt, pt_net

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


# -- the translation against the semantics, on random small Kripke structures ----------------
#: How each engine sets the searches: product states searched on the fly first; product
#: edges before the array product's first search of a part of itself, and its growth
#: factor between searches (1: after every breadth-first layer; 10**18: only when whole).
ENGINES = {"on the fly": (10**9, 10**18, 4), "arrays": (0, 10**18, 4),
           "arrays, searched while growing": (0, 1, 1)}


@contextlib.contextmanager
def engine(name: str):
    """Run check_ltl with the on-the-fly search only, the whole array product only, or
    the array product searched after every layer."""
    from tcpn.petrinets.checking.ltl import product as ltl_product
    saved = (ltl_module.ON_THE_FLY_STATES, ltl_product.FIRST_CHECK_EDGES,
             ltl_product.CHECK_GROWTH)
    (ltl_module.ON_THE_FLY_STATES, ltl_product.FIRST_CHECK_EDGES,
     ltl_product.CHECK_GROWTH) = ENGINES[name]
    try:
        yield
    finally:
        (ltl_module.ON_THE_FLY_STATES, ltl_product.FIRST_CHECK_EDGES,
         ltl_product.CHECK_GROWTH) = saved


def kripke(valuations: list[tuple[int, int]], successors: list[list[int]]) -> PTStateSpace:
    """A state space whose state ``s`` marks places ``p``, ``q`` with ``valuations[s]``
    and leads to ``successors[s]`` (each edge a firing of transition ``step``)."""
    n = len(valuations)
    zeros = np.zeros((1, 2), dtype=np.int64)
    net = PTNet(("p", "q"), ("step",), zeros, zeros, zeros, zeros, zeros.astype(bool),
                np.array(valuations[0]))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(s) for s in successors], out=indptr[1:])
    targets = np.array([t for s in successors for t in s], dtype=np.int32)
    return PTStateSpace(net, np.array(valuations, dtype=np.uint8), indptr, targets,
                        np.zeros(len(targets), dtype=np.int32), np.zeros(n, dtype=np.int64),
                        np.zeros(n, dtype=np.int32), True, 0.0, "")


def small_kripke():
    def build(n: int):
        return st.tuples(
            st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=n, max_size=n),
            st.lists(st.lists(st.integers(0, n - 1), max_size=3), min_size=n,
                     max_size=n))
    return st.integers(1, 4).flatmap(build)


KRIPKE_ATOMS = [tokens("p") >= 1, tokens("q") >= 1]


def valuation_atom(f: Formula, valuation: tuple[int, int]) -> bool:
    if isinstance(f, Bool):
        return f.value
    return bool(valuation[0 if f == KRIPKE_ATOMS[0] else 1])


def lassos(successors: list[list[int]], longest: int):
    """Every lasso from state 0 with at most ``longest`` states (a dead state repeats)."""
    def step(s: int) -> list[int]:
        return successors[s] or [s]

    def extend(path: list[int]):
        for t in step(path[-1]):
            if t in path:
                yield path, path.index(t)
        if len(path) < longest:
            for t in step(path[-1]):
                yield from extend([*path, t])
    yield from extend([0])


@settings(max_examples=300, deadline=None)
@given(structure=small_kripke(), phi=path_formulas(KRIPKE_ATOMS))
def test_translation_agrees_with_the_semantics_on_small_kripke_structures(structure, phi):
    valuations, successors = structure
    space = kripke(valuations, successors)
    answers = set()
    for name in ENGINES:
        with engine(name):
            verdict = check_ltl(A(phi), space)
        answers.add(verdict.answer)
        if verdict.answer == "false":  # its lasso, read as a word of valuations, refutes phi
            word = [valuations[0]] + [(s.marking.get("p", 0), s.marking.get("q", 0))
                                      for s in verdict.evidence.stem + verdict.evidence.cycle]
            if verdict.evidence.cycle:
                word, loop = word[:-1], len(verdict.evidence.stem)
            else:
                loop = len(word) - 1
            assert not holds_on_lasso(phi, word, loop, valuation_atom), name
    assert len(answers) == 1, "the engines disagree"
    refuted = any(not holds_on_lasso(phi, [valuations[s] for s in path], loop,
                                     valuation_atom)
                  for path, loop in lassos(successors, 6))
    if refuted:
        assert answers == {"false"}


@settings(max_examples=300, deadline=None)
@given(phi=path_formulas(KRIPKE_ATOMS),
       word=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1,
                     max_size=5), data=st.data())
def test_rewriting_keeps_the_meaning(phi, word, data):
    loop = data.draw(st.integers(0, len(word) - 1))
    rewritten = simplify(_nnf(phi))
    assert holds_on_lasso(rewritten, word, loop, valuation_atom) == \
        holds_on_lasso(phi, word, loop, valuation_atom), rewritten


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_both_engines_take_fairness_into_account(name):
    space = explore(retransmission())
    delivered = A(F(tokens("delivered") >= 1))
    with engine(name):
        unfair = check_ltl(delivered, space)
        assert unfair.answer == "false"
        assert sorted(s.transition for s in unfair.evidence.cycle) == ["lose", "send"]
        assert check_ltl(delivered, space, weak_fair=["deliver"]).answer == "false"
        assert check_ltl(delivered, space, strong_fair=["deliver"]).answer == "true"
        fair_lose = check_ltl(delivered, space, strong_fair=["lose"])
        assert fair_lose.answer == "false"
        # the lasso repeats a cycle that takes the strongly fair transition
        assert "lose" in [s.transition for s in fair_lose.evidence.cycle]


def test_invariant_propositions_fold_to_constants():
    space = explore_pt(pt_net(dining_philosophers(3)))
    always = Compare("<=", tokens(sorted(space.net.places)[0]), Const(1))  # 1-safe net
    automaton = translate(ltl_module._fold_invariants(
        Not(U(always, X(Not(always)))), ltl_module._Graph(space)))
    assert len(automaton) == 1 and check_ltl(A(G(always)), space).answer == "true"


def test_a_time_limit_gives_unknown_naming_the_time_budget() -> None:
    from tcpn.petrinets.checking.formulas import A, F, G, tokens
    from tcpn.petrinets.checking.ltl import check_ltl
    from tcpn.petrinets.examples import dining_philosophers
    from tcpn.petrinets.statespace.space import explore

    space = explore(dining_philosophers(16))  # 2,207 markings
    formula = A(G(F(tokens("eat0") >= 1)))
    assert check_ltl(formula, space).answer == "false"
    verdict = check_ltl(formula, space, time_limit_s=0.0)
    assert verdict.answer == "unknown" and verdict.reason.startswith("time budget reached")


def test_a_memory_budget_gives_unknown_naming_it() -> None:
    from tcpn.petrinets.checking.formulas import A, G, X, tokens
    from tcpn.petrinets.checking.ltl import check_ltl
    from tcpn.petrinets.examples import dining_philosophers
    from tcpn.petrinets.statespace.memory import resident_bytes
    from tcpn.petrinets.statespace.space import explore

    space = explore(dining_philosophers(16))
    # true, and not foldable: while 0 eats (holding fork 1), 1 is not eating one step later
    formula = A(G((tokens("eat0") >= 1).implies(X(tokens("eat1") <= 0))))
    assert check_ltl(formula, space).answer == "true"
    below = resident_bytes() // 2  # less than the process already holds
    verdict = check_ltl(formula, space, max_memory_bytes=below)
    assert verdict.answer == "unknown"
    assert verdict.reason.startswith("memory budget reached: resident memory above ")


def test_a_product_searched_while_growing_never_concludes_from_a_part() -> None:
    """A chain of 40 markings whose only cycle (the last marking's loop, the only one
    with a token in p) is in the product's last layer: the searches of the parts find no
    lasso, and "no lasso" is concluded from the whole product only. The counterexample of
    ``A G p <= 0`` walks the whole chain; ``A F p >= 1`` holds."""
    k = 40
    space = kripke([(0, 0)] * k + [(1, 0)], [[s + 1] for s in range(k)] + [[k]])
    for name in ENGINES:
        with engine(name):
            never = check_ltl(A(G(tokens("p") <= 0)), space)
            assert never.answer == "false", name
            assert len(never.evidence.stem) >= k, name  # the counterexample walks the chain
            assert check_ltl(A(F(tokens("p") >= 1)), space).answer == "true", name


def test_a_layer_of_the_product_is_cut_in_slices_of_bounded_edges(monkeypatch) -> None:
    """A product layer is expanded in slices of at most SLICE_EDGES product edges (one
    state at least): states of many edges (a stopped search's, 80 a state on a contest
    model) made one slice of 10^8 edges, past the memory budget between two readings.
    The verdicts do not depend on the slicing."""
    from tcpn.petrinets.checking.ltl import product

    space = explore_pt(pt_net(dining_philosophers(16)))  # beyond the on-the-fly search
    formulas = [A(G((tokens("eat0") >= 1).implies(X(tokens("eat1") <= 0)))),
                A(F(tokens("eat0") >= 1))]
    whole = [check_ltl(f, space).answer for f in formulas]
    sizes: list[tuple[int, int]] = []
    original = product._Product._slice_edges

    def spied(self, ids):  # type: ignore[no-untyped-def]
        found = original(self, ids)
        sizes.append((len(ids), len(found[0])))
        return found

    monkeypatch.setattr(product, "SLICE_EDGES", 16)
    monkeypatch.setattr(product._Product, "_slice_edges", spied)
    assert [check_ltl(f, space).answer for f in formulas] == whole == ["true", "false"]
    assert sizes and all(edges <= 16 or states == 1 for states, edges in sizes)
    assert max(states for states, _ in sizes) > 1
