"""CTL checking: hand-derived answers and paths, replayed evidence, and random nets and
formulas against a brute-force evaluation over every lasso-shaped path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcpn.errors import InputError
from tcpn.petrinets import UNIT, PetriNet, Place, Simulator, Transition, explore
from tcpn.petrinets.checking.check import UnsupportedFormula, check
from tcpn.petrinets.checking.ctl import evidence, satisfying
from tcpn.petrinets.checking.formulas import (
    AF,
    AG,
    AX,
    EF,
    EG,
    EX,
    A,
    And,
    Bool,
    Deadlock,
    E,
    F,
    Fireable,
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
from tcpn.petrinets.checking.text import parse, to_text
from tcpn.petrinets.checking.verdicts import Evidence
from tcpn.petrinets.examples import counter, dining_philosophers


def replay(net, found: Evidence) -> None:
    """Fire the evidence from the initial marking; each step's marking must match, and a
    cycle must come back to the marking where the stem ended."""
    sim = Simulator(net)
    start_of_cycle = None
    for k, step in enumerate(found.stem + found.cycle):
        if k == len(found.stem):
            start_of_cycle = sim.marking_dict()
        sim.fire(step.transition, step.binding)
        assert _values(sim.marking_dict()) == _values_of_step(step.marking), step
    if found.cycle:
        if start_of_cycle is None:
            start_of_cycle = sim.marking_dict()
        assert _values(sim.marking_dict()) == _values(start_of_cycle)


def _values(marking):
    return {p: sorted(map(repr, (t.value for t in tokens))) for p, tokens in marking.items()
            if tokens}


def _values_of_step(marking):
    return {p: sorted(repr(getattr(t, "value", t)) for t in tokens)
            for p, tokens in marking.items() if tokens}


# -- hand-derived answers ------------------------------------------------------------------

def test_counter_chain_by_hand():
    space = explore(counter(3))  # 0 -> 1 -> 2 -> 3 (dead)
    at = lambda f: satisfying(space, f).tolist()  # noqa: E731
    three = tokens("count").equals(1) & Bool(True)  # every state holds one token
    assert at(AF(Deadlock())) == [True] * 4
    assert at(EX(three)) == [True, True, True, False]  # strong next: false at the deadlock
    assert at(AX(three)) == [True] * 4  # every successor (there is none): true
    assert at(AX(Bool(False))) == [False, False, False, True]
    assert at(EG(Not(Deadlock()))) == [False] * 4  # every maximal path ends dead
    assert at(EG(three)) == [True] * 4  # the finite maximal path counts
    assert at(AG(fireable("increment"))) == [False] * 4
    stutter = satisfying(space, EX(three), next_at_deadlock="stutter").tolist()
    assert stutter == [True] * 4
    assert satisfying(space, AX(Bool(False)), next_at_deadlock="stutter").tolist() == [False] * 4


def test_philosophers_by_hand_with_paths():
    net = dining_philosophers(5)
    space = explore(net)
    both = And((tokens("eat0") >= 1, tokens("eat2") >= 1))
    found = evidence(space, EF(both))
    assert [s.transition for s in found.stem] == ["take0", "take2"]
    replay(net, found)
    neighbours = And((tokens("eat0") >= 1, tokens("eat1") >= 1))
    assert check(net, AG(Not(neighbours))).answer == "true"
    refuted = check(net, AG(Not(both)))
    assert refuted.answer == "false" and len(refuted.evidence.stem) == 2
    replay(net, refuted.evidence)
    # nobody is forced to eat: a lasso where philosopher 0 never eats
    never = check(net, AF(tokens("eat0") >= 1))
    assert never.answer == "false" and never.evidence.is_lasso
    assert all(step.transition not in ("take0",) for step in never.evidence.cycle)
    replay(net, never.evidence)


def test_deadlocking_philosophers_counterexample():
    """Philosophers who take the left fork, then the right: the classic deadlock."""
    net = PetriNet("left_first")
    n = 3
    for i in range(n):
        for place in (f"think{i}", f"fork{i}"):
            net.add_place(Place(place, UNIT, initial=[()]))
        net.add_place(Place(f"hasleft{i}", UNIT))
        net.add_place(Place(f"eat{i}", UNIT))
    for i in range(n):
        left, right = f"fork{i}", f"fork{(i + 1) % n}"
        net.add_transition(Transition(f"left{i}"))
        net.add_input(f"think{i}", f"left{i}", "()")
        net.add_input(left, f"left{i}", "()")
        net.add_output(f"hasleft{i}", f"left{i}", "()")
        net.add_transition(Transition(f"right{i}"))
        net.add_input(f"hasleft{i}", f"right{i}", "()")
        net.add_input(right, f"right{i}", "()")
        net.add_output(f"eat{i}", f"right{i}", "()")
        net.add_transition(Transition(f"put{i}"))
        net.add_input(f"eat{i}", f"put{i}", "()")
        for place in (f"think{i}", left, right):
            net.add_output(place, f"put{i}", "()")
    verdict = check(net, "AG !deadlock")
    assert verdict.answer == "false"
    assert sorted(s.transition for s in verdict.evidence.stem) == ["left0", "left1", "left2"]
    replay(net, verdict.evidence)
    assert check(net, "EF deadlock").answer == "true"


def test_unknown_when_the_budget_is_reached():
    verdict = check(counter(10**6), "EF tokens(count) < 0", max_states=100)
    assert verdict.answer == "unknown" and "max_states=100" in verdict.reason
    assert check(counter(10**6), "AF deadlock", max_states=100).answer == "unknown"
    found = check(counter(10**6), "EF deadlock", max_states=50_000)
    assert found.answer == "unknown"


def test_bad_formulas_are_named():
    net = counter(2)
    with pytest.raises(InputError, match="column 12: no place named 'cont'"):
        check(net, "AG (tokens(cont) <= 1)")
    with pytest.raises(InputError, match="no transition named 'inc'"):
        check(net, "EF fireable(inc)")
    with pytest.raises(InputError, match="column"):
        check(net, "AG (tokens(count) <= )")
    with pytest.raises(InputError, match="untimed"):
        check(net, "EF clock() > 1")
    with pytest.raises(UnsupportedFormula, match="neither CTL nor LTL"):
        check(net, "A (G F fireable(increment) | EF deadlock)")


def test_every_evidence_replays_on_random_formulas():
    net = dining_philosophers(4)
    space = explore(net)
    formulas = ["EF (tokens(eat0) >= 1 & tokens(eat2) >= 1)", "AG tokens(eat1) == 0",
                "AF fireable(put3)", "EG !fireable(put0)", "A[!fireable(put1) U tokens(eat0) >= 1]",
                "E[tokens(think0) >= 1 U tokens(eat1) >= 1]", "AX tokens(eat2) >= 1",
                "EX tokens(eat3) >= 1", "!EG true | AF deadlock"]
    for text in formulas:
        formula = parse(text)
        found = evidence(space, formula)
        if found is not None:
            replay(net, found)


# -- random nets and formulas against brute force -------------------------------------------

@st.composite
def small_nets(draw):
    """Nets whose transitions produce no more tokens than they consume (so bounded), some
    of them dropping tokens (so dead markings appear)."""
    n_places = draw(st.integers(2, 4))
    n_transitions = draw(st.integers(2, 4))
    net = PetriNet("random")
    for p in range(n_places):
        net.add_place(Place(f"p{p}", UNIT, initial=[()] * draw(st.integers(p == 0, 3))))
    for t in range(n_transitions):
        net.add_transition(Transition(f"t{t}"))
        inputs = draw(st.lists(st.integers(0, n_places - 1), min_size=1, max_size=2,
                               unique=True))
        consumed = 0
        for p in inputs:
            count = draw(st.integers(1, 2))
            consumed += count
            net.add_input(f"p{p}", f"t{t}", "()", count=count)
        outputs = draw(st.lists(st.integers(0, n_places - 1), max_size=2, unique=True))
        for k, p in enumerate(outputs):
            if consumed:
                last = k == len(outputs) - 1 and draw(st.booleans())
                count = consumed if last else draw(st.integers(1, consumed))
                consumed -= count
                net.add_output(f"p{p}", f"t{t}", "()", count=count)
    return net


def state_formulas(places, transitions):
    atoms = st.one_of(
        st.builds(lambda p, c: tokens(p) >= c, st.sampled_from(places), st.integers(1, 2)),
        st.builds(lambda t: fireable(t), st.sampled_from(transitions)),
        st.just(Deadlock()), st.just(Bool(True)))

    def extend(inner):
        unary = st.sampled_from([EX, AX, EF, AF, EG, AG, Not])
        binary = st.sampled_from(["EU", "AU", "ER", "AR", "EW", "AW", "and", "or"])
        return st.one_of(
            st.builds(lambda op, f: op(f), unary, inner),
            st.builds(_binary, binary, inner, inner))

    return st.recursive(atoms, extend, max_leaves=5)


def _binary(op, left, right):
    if op == "and":
        return And((left, right))
    if op == "or":
        return Or((left, right))
    path = {"U": U, "R": R, "W": W}[op[1]](left, right)
    return E(path) if op[0] == "E" else A(path)


class BruteForce:
    """CTL by definition: quantify over every lasso (a simple path closed by an edge back
    into it, or ending in a dead marking) and evaluate the path formula on it."""

    def __init__(self, space):
        self.space = space
        self.n = space.n_states
        graph = space.to_networkx(labels=True)  # paths over NetworkX, not the CSR arrays
        self.succ = [sorted(graph.successors(s)) for s in range(self.n)]
        self.fires = [{name for _, _, data in graph.out_edges(s, data=True)
                       for name, _ in data["labels"]} for s in range(self.n)]

    def lassos(self, s):
        out = []

        def walk(path):
            v = path[-1]
            if not self.succ[v]:
                out.append((list(path), None))
            for w in self.succ[v]:
                if w in path:
                    out.append((list(path), path.index(w)))
                else:
                    walk([*path, w])

        walk([s])
        return out

    def sat(self, f):
        if isinstance(f, Bool):
            return [f.value] * self.n
        if isinstance(f, Deadlock):
            return [not self.succ[s] for s in range(self.n)]
        if isinstance(f, Fireable):
            return [bool(set(f.transitions) & self.fires[s]) for s in range(self.n)]
        if isinstance(f, Not):
            return [not v for v in self.sat(f.operand)]
        if isinstance(f, And):
            parts = [self.sat(o) for o in f.operands]
            return [all(p[s] for p in parts) for s in range(self.n)]
        if isinstance(f, Or):
            parts = [self.sat(o) for o in f.operands]
            return [any(p[s] for p in parts) for s in range(self.n)]
        if isinstance(f, E | A):
            path = f.path
            operands = [self.sat(c) for c in path.children()]
            results = []
            for s in range(self.n):
                # X under A is the weak next (a finite path without a next state satisfies
                # it), under E the strong one: AX p = not EX not p, the contest's reading
                values = [self.on_path(path, operands, lasso, weak_next=isinstance(f, A))
                          for lasso in self.lassos(s)]
                results.append(any(values) if isinstance(f, E) else all(values))
            return results
        # a comparison atom
        counts = [sum(len(self.space.marking(s)[p]) for p in f.left.places)
                  for s in range(self.n)]
        return [c >= f.right.value for c in counts]

    @staticmethod
    def on_path(path, operands, lasso, weak_next):
        states, loop = lasso
        k = len(states) - 1
        value = [lambda i, o=o: o[states[i]] for o in operands]
        if isinstance(path, X):
            nxt = 1 if k >= 1 else (0 if loop is not None else None)
            return weak_next if nxt is None else value[0](nxt)
        if isinstance(path, F):
            return any(value[0](i) for i in range(k + 1))
        if isinstance(path, G):
            return all(value[0](i) for i in range(k + 1))
        p, q = value

        def until(p, q):
            for j in range(k + 1):
                if q(j):
                    return True
                if not p(j):
                    return False
            return False

        if isinstance(path, U):
            return until(p, q)
        if isinstance(path, W):
            return until(p, q) or all(p(i) for i in range(k + 1))
        # p R q = not (not p U not q)
        return not until(lambda i: not p(i), lambda i: not q(i))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.data_too_large])
@given(st.data())
def test_global_algorithm_matches_brute_force(data):
    net = data.draw(small_nets())
    space = explore(net, max_states=12)
    if not space.complete:
        return
    places, transitions = sorted(net.places), sorted(net.transitions)
    brute = BruteForce(space)
    for _ in range(3):
        formula = data.draw(state_formulas(places, transitions))
        expected = brute.sat(formula)
        assert satisfying(space, formula).tolist() == expected, to_text(formula)
        verdict = check(net, formula)
        assert verdict.holds == expected[0], to_text(formula)
        if verdict.evidence is not None:
            replay(net, verdict.evidence)
    # on the fly (EF, AG) against global
    atom = data.draw(state_formulas(places, transitions).filter(
        lambda f: not any(isinstance(n, A | E) for n in _walk(f))))
    for formula in (EF(atom), AG(atom), Not(EF(atom))):
        assert check(net, formula).holds == bool(satisfying(space, formula)[0])


def _walk(f):
    yield f
    for c in f.children():
        yield from _walk(c)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_dualities(data):
    net = data.draw(small_nets())
    space = explore(net, max_states=30)
    if not space.complete:
        return
    fs = state_formulas(sorted(net.places), sorted(net.transitions))
    p, q = data.draw(fs), data.draw(fs)
    sat = lambda f: satisfying(space, f)  # noqa: E731
    dead = sat(Deadlock())
    assert np.array_equal(sat(AG(p)), ~sat(EF(Not(p))))
    assert np.array_equal(sat(AF(p)), ~sat(EG(Not(p))))
    assert np.array_equal(sat(AX(p)), ~sat(EX(Not(p))))
    assert np.array_equal(sat(EF(p)), sat(E(U(Bool(True), p))))
    assert np.array_equal(sat(A(U(p, q))), sat(q) | (sat(p) & ~dead & sat(AX(A(U(p, q))))))
    assert np.array_equal(sat(E(U(p, q))), sat(q) | (sat(p) & sat(EX(E(U(p, q))))))
    assert np.array_equal(sat(EG(p)), sat(p) & (dead | sat(EX(EG(p)))))
