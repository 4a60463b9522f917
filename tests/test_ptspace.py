"""The P/T vector explorer and its checks: evidence that replays on the net it was read from
(under the formula names a contest model gives it), and the CTL fixpoints against the
coloured checker on the same nets."""

from __future__ import annotations

import pytest

from tcpn.petrinets import Simulator, explore
from tcpn.petrinets.checking.ctl import satisfying
from tcpn.petrinets.checking.formulas import AG, EF, A, E, F, G, U, X, fireable, tokens
from tcpn.petrinets.checking.ltl import check_ltl
from tcpn.petrinets.checking.ptcheck import ctl_mask
from tcpn.petrinets.examples import (
    dining_philosophers,
    left_first_philosophers,
    retransmission,
    token_ring,
)
from tcpn.petrinets.statespace.ptspace import explore_pt, pt_net


def renamed(net):
    """The net's matrices under other names, as a contest model's PNML ids are."""
    return pt_net(net, [f"p{i}" for i in range(len(net.places))],
                  [f"t{i}" for i in range(len(net.transitions))])


def test_counterexample_steps_replay_on_the_net_under_its_own_names():
    net = dining_philosophers(4)
    matrices = renamed(net)
    eat0 = matrices.places[list(net.places).index("eat0")]
    space = explore_pt(matrices)
    verdict = check_ltl(A(G(tokens(eat0) <= 0)), space)
    assert verdict.answer == "false"
    steps = verdict.evidence.stem + verdict.evidence.cycle
    assert steps and all(s.transition in net.transitions and s.binding == {} for s in steps)
    simulator = Simulator(net)
    for step in steps:
        simulator.fire(step.transition, step.binding)
        found = {p: [t.value for t in tokens_]
                 for p, tokens_ in simulator.marking_dict().items() if tokens_}
        assert found == step.marking
    assert any("eat0" in step.marking for step in steps)


def test_shortest_paths_replay_to_their_states():
    net = dining_philosophers(3)
    matrices = renamed(net)
    space = explore_pt(matrices)
    names = dict(zip(matrices.places, net.places, strict=True))
    for state in range(len(space)):
        simulator = Simulator(net)
        for transition, binding in space.path_to(state):
            simulator.fire(transition, binding)
        assert {p: simulator.count(p) for p in net.places if simulator.count(p)} == \
            {names[p]: n for p, n in space.counts(state).items()}


@pytest.mark.parametrize("net", [dining_philosophers(5), left_first_philosophers(4),
                                 retransmission()],
                         ids=["philosophers5", "left-first4", "retransmission"])
def test_ctl_fixpoints_agree_with_the_coloured_checker_in_every_state(net):
    ours, theirs = explore_pt(pt_net(net)), explore(net)
    # the two explorers number states in their own orders: match them by marking
    number = {tuple(sorted(ours.counts(s).items())): s for s in range(len(ours))}
    same = [number[tuple(sorted((p, len(t)) for p, t in theirs.marking(s).items() if t))]
            for s in range(len(theirs))]
    first, second = sorted(net.places)[:2]
    move = sorted(net.transitions)[0]
    for formula in (EF(tokens(first) >= 1), AG(tokens(first) <= tokens(second)),
                    E(G(~fireable(move))), A(F(fireable(move))),
                    E(U(tokens(first) <= 0, fireable(move))), A(X(tokens(second) >= 1)),
                    AG(EF(fireable(move)))):
        assert ctl_mask(formula, ours)[same].tolist() == satisfying(
            theirs, formula).tolist(), formula


def _same_space(dense, sparse) -> None:
    """Two explorations of one net that must agree in everything they found."""
    assert (len(sparse), sparse.n_edges, sparse.complete) == \
        (len(dense), dense.n_edges, dense.complete)
    for name in ("indptr", "targets", "labels", "parents", "parent_labels"):
        assert (getattr(sparse, name) == getattr(dense, name)).all(), name
    assert (sparse.markings.toarray() == dense.markings).all()
    assert sparse.token_statistics() == dense.token_statistics()
    places, transitions = list(dense.net.places), list(dense.net.transitions)
    assert (sparse.tokens(places[:3]) == dense.tokens(places[:3])).all()
    for t in transitions:
        assert (sparse.enabled([t]) == dense.enabled([t])).all(), t
    for state in range(0, len(dense), max(1, len(dense) // 20)):
        assert sparse.counts(state) == dense.counts(state)
        assert sparse.marking(state) == dense.marking(state)


@pytest.mark.parametrize("net", [dining_philosophers(5), left_first_philosophers(4),
                                 retransmission()],
                         ids=["philosophers5", "left-first4", "retransmission"])
def test_markings_kept_sparse_give_the_space_kept_dense(net, monkeypatch):
    """A wide net keeps its markings by marked places only (65,000 places x 10^5 states
    would be 6.5 GB as rows): forced on small nets, the same states, edges, parents,
    markings and atoms as the dense rows."""
    from tcpn.petrinets.statespace import ptspace
    dense = explore_pt(pt_net(net))
    monkeypatch.setattr(ptspace, "WIDE_PLACES", 0)
    monkeypatch.setattr(ptspace, "WIDE_BATCH_STATES", ptspace.BATCH_STATES)  # same order
    _same_space(dense, explore_pt(pt_net(net)))


def test_a_wide_net_with_a_small_space_stays_small():
    """20,000 places, 20,000 states: per state the bytes of its marked places (a row per
    state over every place would be 20 kB per state, 400 MB in all), and each state
    tests only the transitions its marked places may enable (testing all of them would
    be 4 x 10^8 tests)."""
    space = explore_pt(pt_net(token_ring(20_000)))
    assert (len(space), space.n_edges, space.complete) == (20_000, 20_000, True)
    assert space.bytes_per_state < 100
    assert space.peak_bytes_per_state < 1_000
    assert space.counts(12_345) == {"p12345": 1}
    assert space.token_statistics() == (1, 1, False)


def test_the_clock_of_a_pt_space_is_a_clear_error():
    """A P/T net's states have no clock: a formula reading it is refused by name (it was an
    AttributeError from the coloured space's store)."""
    from tcpn.errors import InputError
    from tcpn.petrinets.checking.formulas import Clock

    space = explore_pt(pt_net(dining_philosophers(3)))
    with pytest.raises(InputError, match="no clock"):
        ctl_mask(AG(Clock() <= 5), space)


def _random_pt_net(seed: int):
    """A small P/T net drawn from ``seed`` with weighted input, output and read arcs,
    inhibitor arcs and reset arcs, and a few transitions sharing one hub place."""
    import numpy as np

    from tcpn.petrinets.statespace.ptspace import PTNet

    rng = np.random.default_rng(seed)
    n_p, n_t = 9, 14
    arcs = rng.random((5, n_t, n_p))
    pre = np.where(arcs[0] < 0.2, rng.integers(1, 3, (n_t, n_p)), 0)
    post = np.where(arcs[1] < 0.2, rng.integers(1, 3, (n_t, n_p)), 0)
    test = np.where(arcs[2] < 0.06, rng.integers(1, 3, (n_t, n_p)), 0)
    inhibit = np.where(arcs[3] < 0.06, rng.integers(1, 4, (n_t, n_p)), 0)
    reset = arcs[4] < 0.04
    pre[:, 0] = np.where(rng.random(n_t) < 0.5, 1, pre[:, 0])  # the hub, read by many
    post[:, 0] = np.where(rng.random(n_t) < 0.5, 1, post[:, 0])
    return PTNet(tuple(f"p{i}" for i in range(n_p)), tuple(f"t{i}" for i in range(n_t)),
                 pre, post, test, inhibit, reset, rng.integers(0, 3, n_p))


@pytest.mark.parametrize("pair_test_s", [0.0, 1.0, 2e-7], ids=["pairs", "whole", "costed"])
@pytest.mark.parametrize("seed", range(6))
def test_incremental_enabling_finds_every_enabled_transition(seed, pair_test_s, monkeypatch):
    """A state is expanded from what its parent enabled, re-testing only the transitions
    reading a place the parent's firing changed: on random nets (weights, read, inhibitor
    and reset arcs, a hub place), in small batches, forced to test (state, transition)
    pairs, whole batches or left to choose, each expanded state has exactly the arcs that
    testing every transition on its marking gives, and :meth:`PTStateSpace.enabled` read
    off the arcs agrees with the markings, on the frontier too."""
    import numpy as np

    from tcpn.petrinets.statespace import ptspace

    monkeypatch.setattr(ptspace, "BATCH_STATES", 7)
    monkeypatch.setattr(ptspace, "PAIR_TEST_S", pair_test_s)
    net = _random_pt_net(seed)
    space = explore_pt(net, max_states=1500)
    assert len(space) > 20
    marks = np.asarray(space.markings, dtype=np.int64)
    for state in range(space.n_expanded):
        row = marks[state:state + 1]
        expected = sorted((t, tuple(net.fire(row, t)[0])) for t in range(len(net.transitions))
                          if net.enabled(row, t)[0])
        edges = range(space.indptr[state], space.indptr[state + 1])
        assert sorted((int(space.labels[e]), tuple(marks[space.targets[e]]))
                      for e in edges) == expected, state
    for t, name in enumerate(net.transitions):
        assert (space.enabled([name]) == net.enabled(marks, t)).all(), name
    assert (space.enabled(list(net.transitions[:5])) ==
            np.any([net.enabled(marks, t) for t in range(5)], axis=0)).all()


def test_a_net_without_transitions_has_its_initial_state_only():
    """Nothing to fire: one state, no arc, no transition enabled (the incremental test
    has no parent's firing to start from)."""
    import numpy as np

    from tcpn.petrinets.statespace.ptspace import PTNet

    none = np.zeros((0, 2), dtype=np.int64)
    space = explore_pt(PTNet(("p", "q"), (), none, none, none, none, none.astype(bool),
                             np.array([1, 0])))
    assert (len(space), space.n_edges, space.complete) == (1, 0, True)
    assert not space.enabled([]).any()


@pytest.mark.parametrize("net", [dining_philosophers(5), retransmission(), token_ring(40)],
                         ids=["philosophers5", "retransmission", "ring40"])
def test_token_sums_by_place_and_by_row_blocks_equal_the_plain_sum(net, monkeypatch):
    """Atoms read token sums by place (a sparse copy made once, for sparsely marked
    spaces) or a block of rows at a time; both give the sum over the plain matrix, for
    every place set (repeats included), also when the blocks split the states."""
    from tcpn.petrinets.statespace import ptspace
    monkeypatch.setattr(ptspace, "BLOCK_ROWS", 7)
    by_rows = explore_pt(pt_net(net))
    monkeypatch.setattr(ptspace, "PLACE_MAJOR_SHARE", 0)  # any copy is small enough
    by_place = explore_pt(pt_net(net))
    assert by_place._place_major() is not None
    monkeypatch.setattr(ptspace, "PLACE_MAJOR_SHARE", 10**9)  # no copy is
    assert by_rows._place_major() is None
    places = list(by_place.net.places)
    plain = by_place.markings.astype("int64")
    for chosen in ([places[0]], places[:3], places[::2], places, [places[1], places[1]]):
        columns = [places.index(p) for p in chosen]
        expected = plain[:, columns].sum(axis=1)
        assert (by_place.tokens(chosen) == expected).all(), chosen
        assert (by_rows.tokens(chosen) == expected).all(), chosen
        assert (by_rows.columns(columns) == plain[:, columns]).all()
        assert (by_place.columns(columns) == plain[:, columns]).all()
