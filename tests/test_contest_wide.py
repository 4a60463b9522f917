"""A wide net with a small state space through every contest examination, kept sparse.

The contest's largest models have tens of thousands of places and transitions and only
10^4-10^5 states; an array of states x places, edges x places or transitions x places
is then gigabytes. Here 20,000 places and 20,000 transitions (10,000 two-place cycles,
the first eight marked: 256 states, 2,048 edges) go through every examination from the
PNML file; the answers are known by hand, and the memory the examinations allocate on
the explored space is measured with ``tracemalloc`` (NumPy reports its arrays to it)
against the size of one dense states x places array of int64.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from scipy.sparse import csr_array
from wide_nets import write_cycles_model

from tcpn.petrinets.checking.contest.examinations import (
    EXAMINATIONS,
    check_examinations,
    explore_model,
)

CYCLES, MARKED = 10_000, 8


def tokens(place: str) -> str:
    return f"<tokens-count><place>{place}</place></tokens-count>"


def at_least_one(place: str) -> str:
    return f"<integer-le><integer-constant>1</integer-constant>{tokens(place)}</integer-le>"


def fireable(transition: str) -> str:
    return f"<is-fireable><transition>{transition}</transition></is-fireable>"


LAST = CYCLES - 1
#: per examination, (formula, expected answer): cycle i is a_i -> f_i -> b_i -> g_i -> a_i
FORMULAS = {
    "ReachabilityCardinality": [
        (f"<exists-path><finally>{at_least_one('b3')}</finally></exists-path>", "TRUE"),
        (f"<exists-path><finally>{at_least_one(f'b{LAST}')}</finally></exists-path>",
         "FALSE")],
    "ReachabilityFireability": [
        (f"<all-paths><globally>{fireable('g5')}</globally></all-paths>", "FALSE"),
        (f"<exists-path><finally>{fireable(f'f{LAST}')}</finally></exists-path>", "FALSE")],
    "CTLCardinality": [(f"<all-paths><globally><exists-path><finally>{at_least_one('b3')}"
                        "</finally></exists-path></globally></all-paths>", "TRUE")],
    "CTLFireability": [(f"<exists-path><globally><all-paths><finally>{fireable('f0')}"
                        "</finally></all-paths></globally></exists-path>", "TRUE")],
    # a run that cycles another component forever never marks b3 / leaves f0 disabled
    "LTLCardinality": [(f"<all-paths><globally><finally>{at_least_one('b3')}</finally>"
                        "</globally></all-paths>", "FALSE")],
    "LTLFireability": [
        (f"<all-paths><globally><finally>{fireable('f0')}</finally></globally></all-paths>",
         "FALSE"),
        (f"<all-paths><finally>{fireable(f'g{LAST}')}</finally></all-paths>", "FALSE")],
    "UpperBounds": [("<place-bound><place>b5</place></place-bound>", "1"),
                    (f"<place-bound><place>b{LAST}</place><place>a{LAST - 1}</place>"
                     "</place-bound>", "0")],
}
GLOBAL = {"ReachabilityDeadlock": "FALSE", "QuasiLiveness": "FALSE", "Liveness": "FALSE",
          "OneSafe": "TRUE", "StableMarking": "TRUE"}


@pytest.fixture(scope="module")
def wide_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wide")
    write_cycles_model(folder, CYCLES, MARKED)
    for examination, formulas in FORMULAS.items():
        properties = "".join(
            f"<property><id>wide-{examination}-{n:02d}</id><description>-</description>"
            f"<formula>{formula}</formula></property>" for n, (formula, _) in
            enumerate(formulas))
        (folder / f"{examination}.xml").write_text(
            f'<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/">{properties}'
            "</property-set>")
    return folder / "model.pnml"


def test_a_wide_net_answers_every_examination_without_a_dense_array(wide_model):
    model, space = explore_model(wide_model)
    states, places = 2 ** MARKED, 2 * CYCLES
    assert (len(space), space.n_edges, space.complete) == (states, MARKED * states, True)
    assert len(model.net.transitions) == 2 * CYCLES
    # markings kept by their marked places, the net's matrices sparse
    assert isinstance(space.markings, csr_array)
    assert space.markings.nnz == MARKED * states
    assert all(isinstance(m, csr_array) for m in (model.net.pre, model.net.post))
    dense_states_by_places = 8 * states * places  # 41 MB; edges x places would be 328 MB
    tracemalloc.start()
    try:
        answers = check_examinations(wide_model, list(EXAMINATIONS), explored=(model, space))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < dense_states_by_places / 4, peak
    assert answers["StateSpace"] == [
        f"STATE_SPACE {what} {n} TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING" for what, n in
        (("STATES", states), ("TRANSITIONS", MARKED * states), ("MAX_TOKEN_IN_PLACE", 1),
         ("MAX_TOKEN_PER_MARKING", MARKED))]
    for examination, expected in GLOBAL.items():
        assert answers[examination] == [
            f"FORMULA {examination} {expected} TECHNIQUES EXPLICIT SEQUENTIAL_PROCESSING"]
    for examination, formulas in FORMULAS.items():
        got = [line.split()[1:3] for line in answers[examination]]
        assert got == [[f"wide-{examination}-{n:02d}", expected]
                       for n, (_, expected) in enumerate(formulas)], examination
