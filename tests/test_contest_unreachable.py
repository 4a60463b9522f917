"""Answers without the state space: the state equation proves state formulas unreachable,
and formulas fold around what is constant over the reachable markings.

The translation is checked against complete explorations of random P/T nets: whatever
the equation proves (a formula unreachable, an atom constant) holds on every reachable
marking, for every comparison, negation, conjunction and fireability atom. Then the
folding rules one by one, and the contest's oracle on a shared instance whose formulas
the equation settles. Last, the examinations on a search a budget stopped: the lines the
structure gives are the oracle's.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest

from tcpn.petrinets.checking.contest.folding import fold
from tcpn.petrinets.checking.contest.unreachable import StateEquation, linear_cases
from tcpn.petrinets.checking.formulas import (
    A,
    And,
    Bool,
    E,
    F,
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
from tcpn.petrinets.checking.ptcheck import state_mask
from tcpn.petrinets.statespace.ptspace import PTNet, explore_pt

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mcc"
OPS = ("<=", "<", ">=", ">", "==", "!=")


def random_net(rng: np.random.Generator, places: int = 6, transitions: int = 6) -> PTNet:
    """A random P/T net with input, output, read and inhibitor arcs (no reset arc: the
    equation answers nothing on a net with one)."""
    def arcs(density: float, most: int = 2) -> np.ndarray:
        return (rng.random((transitions, places)) < density) * rng.integers(
            1, most + 1, (transitions, places))

    zero = np.zeros((transitions, places), dtype=np.int64)
    return PTNet(tuple(f"p{i}" for i in range(places)),
                 tuple(f"t{i}" for i in range(transitions)), pre=arcs(0.3), post=arcs(0.3),
                 test=arcs(0.05, 1), inhibit=arcs(0.05, 3), reset=zero > 0,
                 initial=(rng.random(places) < 0.5) * rng.integers(1, 3, places))


def random_atom(rng: np.random.Generator, net: PTNet) -> Formula:
    if rng.random() < 0.3:
        chosen = rng.choice(len(net.transitions), size=rng.integers(1, 3), replace=False)
        return fireable(*(net.transitions[t] for t in chosen))
    chosen = rng.choice(len(net.places), size=rng.integers(1, 3), replace=False)
    left = tokens(*(net.places[p] for p in chosen))
    right: object = int(rng.integers(0, 4))
    if rng.random() < 0.3:
        right = tokens(net.places[int(rng.integers(len(net.places)))])
    return left._compare(str(rng.choice(OPS)), right)  # type: ignore[arg-type]


def random_state_formula(rng: np.random.Generator, net: PTNet, depth: int = 2) -> Formula:
    if depth == 0 or rng.random() < 0.4:
        return random_atom(rng, net)
    kind = rng.integers(3)
    if kind == 0:
        return Not(random_state_formula(rng, net, depth - 1))
    parts = tuple(random_state_formula(rng, net, depth - 1) for _ in range(2))
    return And(parts) if kind == 1 else Or(parts)


def test_what_the_state_equation_proves_holds_on_every_reachable_marking():
    """Each proof (unreachable, unreachable negated, constant) on random formulas over 40
    random nets is checked on the complete space; a wrong sign, a strict comparison off
    by one or a wrong negation of a fireability atom fails here. Many proofs are made
    (the count is checked), so the check is not vacuous."""
    proofs = nets = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        net = random_net(rng)
        space = explore_pt(net, max_states=3_000)
        if not space.complete:
            continue  # unbounded
        nets += 1
        equation = StateEquation(net)
        for _ in range(40):
            formula = random_state_formula(rng, net)
            holds = np.asarray(state_mask(formula, space), dtype=bool)
            if equation.unreachable(formula):
                proofs += 1
                assert not holds.any(), (seed, formula)
            if equation.unreachable(formula, negated=True):
                proofs += 1
                assert holds.all(), (seed, formula)
            value = equation.constant(formula)
            if value is not None:
                assert (holds == value).all(), (seed, formula)
    assert nets >= 20 and proofs >= 100, (nets, proofs)


def test_the_translation_is_exact_over_the_integers():
    """``a < b`` is ``a <= b - 1`` on token counts; ``!=`` is two cases; not fireable is
    one case per arc; a formula past the case limit gives nothing."""
    net = PTNet(("a", "b"), ("t", "u"), pre=[[2, 0], [0, 0]], post=[[0, 1], [1, 0]],
                test=[[0, 1], [0, 0]], inhibit=[[0, 0], [0, 3]],
                reset=[[0, 0], [0, 0]], initial=np.array([2, 0]))
    (strict,), = linear_cases(tokens("a") < tokens("b"), net)
    assert (strict.places, strict.weights, strict.bound) == ((0, 1), (1.0, -1.0), -1.0)
    assert len(linear_cases(tokens("a").differs(1), net)) == 2
    (enabled,) = linear_cases(fireable("t"), net)
    assert {(c.places, c.weights, c.bound) for c in enabled} == {
        ((0,), (-1.0,), -2.0), ((1,), (-1.0,), -1.0)}
    disabled = linear_cases(fireable("t"), net, negated=True)
    assert {c[0].bound for c in disabled} == {1.0, 0.0}  # a <= 1 or b <= 0
    assert linear_cases(fireable("u"), net, negated=True)[0][0].bound == -3.0  # b >= 3
    wide = And(tuple(tokens("a").differs(k) for k in range(8)))  # 2^8 cases
    assert linear_cases(wide, net) is None


def test_a_net_with_a_reset_arc_gets_no_answer():
    net = PTNet(("a",), ("t",), pre=[[0]], post=[[1]], test=[[0]], inhibit=[[0]],
                reset=[[1]], initial=np.array([0]))
    assert StateEquation(net).unreachable(tokens("a") >= 5) is None


def test_folding_rules():
    a, b = tokens("a") >= 1, tokens("b") >= 1
    true, false = (lambda f: True if f == a else None), (lambda f: False if f == a else None)
    assert fold(A(G(Or((a, b)))), true) == Bool(True)
    assert fold(E(F(And((a, b)))), false) == Bool(False)
    assert fold(E(U(a, b)), true) == E(F(b))  # true U b
    assert fold(E(U(a, b)), false) == E(b)  # false U b: b now
    assert fold(A(U(b, a)), true) == Bool(True)
    assert fold(A(R(a, b)), false) == A(G(b))  # never released
    assert fold(A(W(a, b)), false) == A(b)
    assert fold(A(W(b, a)), false) == A(G(b))
    # X is left: at a dead marking EX true is false in CTL and true in LTL
    assert fold(E(X(Or((a, b)))), true) == E(X(Bool(True)))
    assert fold(A(G(b)), true) == A(G(b))


def oracle_verdicts(instance: str, folder: Path) -> list[tuple[str, str, str]]:
    """``(formula id, what the folding settles, the oracle's answer)`` for each formula of
    ``instance`` that the siphon and the state equation settle and the oracle knows."""
    from tcpn.petrinets.checking.contest.answers import read_answers
    from tcpn.petrinets.checking.contest.examinations import (
        FORMULA_EXAMINATIONS,
        _renamed,
        load_model,
    )
    from tcpn.petrinets.checking.contest.folding import first_known
    from tcpn.petrinets.checking.contest.properties import read_properties
    from tcpn.petrinets.checking.contest.siphons import empty_siphon, siphon_constant

    with tarfile.open(SHARED / "instances" / f"{instance}.tgz") as archive:
        archive.extractall(folder, filter="data")
    folder = folder / instance
    model = load_model(folder / "model.pnml")
    constant = first_known(siphon_constant(model.net, empty_siphon(model.net)),
                           StateEquation(model.net).constant)
    found = []
    for examination in FORMULA_EXAMINATIONS:
        if examination == "UpperBounds":
            continue
        known = read_answers(folder, examination)
        source = folder / f"{examination}.xml"
        for prop in read_properties(source):
            formula = _renamed(prop, model, source).formula
            assert formula is not None
            settled = fold(formula, constant)
            if isinstance(settled, Bool) and prop.id in known:
                found.append((prop.id, "TRUE" if settled.value else "FALSE", known[prop.id]))
    return found


@pytest.mark.parametrize("instance", ["AirplaneLD-PT-0010"] if SHARED.is_dir() else [])
def test_formulas_the_structure_settles_agree_with_the_oracle(instance, tmp_path):
    """The siphon and the state equation settle 31 of this instance's 96 formulas
    without a state (the siphon alone: none); each is the contest's answer."""
    verdicts = oracle_verdicts(instance, tmp_path)
    assert len(verdicts) == 31
    assert [(i, got) for i, got, known in verdicts] == [(i, known) for i, _, known in verdicts]


@pytest.mark.slow
@pytest.mark.parametrize("instance", ["AutoFlight-PT-02a", "AirplaneLD-PT-0020",
                                      "BridgeAndVehicles-PT-V10P10N10",
                                      "AutonomousCar-PT-03a", "Angiogenesis-PT-01"]
                         if SHARED.is_dir() else [])
def test_formulas_the_structure_settles_agree_with_the_oracle_elsewhere(instance, tmp_path):
    verdicts = oracle_verdicts(instance, tmp_path)
    assert verdicts
    assert [(i, got) for i, got, known in verdicts] == [(i, known) for i, _, known in verdicts]
