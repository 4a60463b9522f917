"""Coloured contest models unfolded into P/T nets (:mod:`tcpn.petrinets.checking.contest.
unfolding`): the unfolded net's state space is the coloured one (the shared instances'
numbers of states and edges, and the coloured explorer's on hand-made nets with read,
inhibitor and reset arcs), its answers are the contest's, and a net beyond a budget or
with a colour set that cannot be listed stays coloured, the reason named.
"""

from __future__ import annotations

import csv
import tarfile
from pathlib import Path

import pytest

from tcpn.petrinets import INT, UNIT, EnumSet, IntSet, PetriNet, Place, ProductSet, Transition
from tcpn.petrinets.checking.contest import unfolding
from tcpn.petrinets.checking.contest.answers import answer_key, read_answers
from tcpn.petrinets.checking.contest.examinations import (
    EXAMINATIONS,
    _renamed,
    check_examinations,
    load_model,
)
from tcpn.petrinets.checking.contest.properties import read_properties
from tcpn.petrinets.checking.contest.unfolding import UnfoldingRefused, unfold
from tcpn.petrinets.checking.formulas import Tokens, walk
from tcpn.petrinets.exchange.pnml import write_pnml
from tcpn.petrinets.statespace.ptspace import explore_pt
from tcpn.petrinets.statespace.space import explore

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mcc"
#: small coloured instances that answer everything in about a second each
FAST = ["Philosophers-COL-000005", "TokenRing-COL-005", "DatabaseWithMutex-COL-02",
        "LamportFastMutEx-COL-2"]


def index() -> dict[str, dict[str, str]]:
    if not SHARED.is_dir():
        return {}
    with open(SHARED / "index.csv", newline="") as handle:
        return {row["instance"]: row for row in csv.DictReader(handle)}


def col_instances() -> list[str]:
    return [name for name, row in index().items() if row["type"] == "COL"]


def extract(instance: str, folder: Path) -> Path:
    with tarfile.open(SHARED / "instances" / f"{instance}.tgz") as archive:
        archive.extractall(folder, filter="data")
    return folder / instance


def wrong_answers(folder: Path, answers: dict[str, list[str]]) -> list[str]:
    """The lines that contradict a known answer, and the CANNOT_COMPUTE ones."""
    wrong = []
    for examination, lines in answers.items():
        known = read_answers(folder, examination)
        for line in lines:
            pair = answer_key(line)
            if pair is None or (pair[0] in known and known[pair[0]] != pair[1]):
                wrong.append(f"{line} (known: {known.get(pair[0]) if pair else '?'})")
    return wrong


def check_instance(instance: str, tmp_path: Path) -> None:
    folder = extract(instance, tmp_path)
    model = load_model(folder / "model.pnml")
    assert model.is_pt and model.unfolded, model.coloured_because
    space = explore_pt(model.net, max_states=2_000_000)
    row = index()[instance]
    assert space.complete
    assert (len(space), space.n_edges) == (int(row["states"]), int(row["edges"]))
    answers = check_examinations(folder / "model.pnml", list(EXAMINATIONS),
                                 explored=(model, space))
    assert wrong_answers(folder, answers) == []


@pytest.mark.parametrize("instance", FAST if SHARED.is_dir() else [])
def test_unfolded_instances_have_the_contest_state_space_and_answers(instance, tmp_path):
    check_instance(instance, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("instance", col_instances())
def test_every_shared_coloured_instance_unfolds_to_its_answers(instance, tmp_path):
    check_instance(instance, tmp_path)


@pytest.mark.skipif(not SHARED.is_dir(), reason="no shared contest data")
def test_the_coloured_explorer_agrees_and_formulas_name_every_colour(tmp_path):
    folder = extract("Philosophers-COL-000005", tmp_path)
    model = load_model(folder / "model.pnml")
    coloured = explore(unfolding_source(folder))
    space = explore_pt(model.net)
    assert (len(space), space.n_edges) == (len(coloured), coloured.n_edges)
    # a formula's coloured place is the sum over its five colours
    props = read_properties(folder / "UpperBounds.xml")
    renamed = _renamed(props[0], model, folder / "UpperBounds.xml")
    assert renamed.bound is not None and props[0].bound is not None
    assert len(renamed.bound.places) == 5 * len(props[0].bound.places)
    props = read_properties(folder / "CTLCardinality.xml")
    for prop in props:
        formula = _renamed(prop, model, folder / "CTLCardinality.xml").formula
        assert formula is not None
        for node in walk(formula):
            for value in vars(node).values():
                if isinstance(value, Tokens):
                    assert all(p in model.net.places for p in value.places)


def unfolding_source(folder: Path) -> PetriNet:
    from tcpn.petrinets.exchange.pnml import read_pnml
    return read_pnml(folder / "model.pnml").net


def arcs_net() -> PetriNet:
    """Read, inhibitor (with and without inscription) and reset arcs, a guard and a free
    variable, on an enumeration and a product."""
    colour = EnumSet(("a", "b", "c"), name="ABC")
    net = PetriNet("arcs")
    net.declare(_succ={"a": "b", "b": "c", "c": "a"})
    net.add_place(Place("p", colour, initial=["a", "a", "b"]))
    net.add_place(Place("q", ProductSet(colour, colour), initial=[("a", "b")]))
    net.add_place(Place("flag", UNIT))
    net.add_place(Place("sink", colour))
    net.add_transition(Transition("move", guard="x != 'c'"))
    net.add_input("p", "move", "x")
    net.add_output("p", "move", "_succ[x]")
    net.add_transition(Transition("pair", guard="y == _succ[x]"))
    net.add_read("p", "pair", "x")
    net.add_input("q", "pair", "(x, y)")
    net.add_output("q", "pair", "(y, x)")
    net.add_inhibitor("sink", "pair", "x", count=2)
    net.add_transition(Transition("drop", free_variables={"z": colour}))
    net.add_input("p", "drop", "z")
    net.add_output("sink", "drop", "z")
    net.add_inhibitor("flag", "drop")
    net.add_transition(Transition("raise"))
    net.add_output("flag", "raise", "()")
    net.add_inhibitor("flag", "raise")
    net.add_transition(Transition("clear"))
    net.add_input("flag", "clear", "()")
    net.add_reset("sink", "clear")
    return net


def test_read_inhibitor_and_reset_arcs_unfold_to_the_same_state_space():
    net = arcs_net()
    found = unfold(net)
    coloured = explore(net)
    space = explore_pt(found.net)
    assert coloured.complete and space.complete
    assert (len(space), space.n_edges) == (len(coloured), coloured.n_edges)
    assert found.transitions["pair"] == ("pair{x=a,y=b}", "pair{x=b,y=c}", "pair{x=c,y=a}")
    assert found.places["q"][:2] == ("q[a,a]", "q[a,b]")
    assert found.net.inhibit.sum() == 3 * 2 + 3 + 1  # pair: x<2 on sink; drop, raise: flag


def test_a_budget_keeps_the_model_coloured_and_it_still_answers(tmp_path, monkeypatch):
    if not SHARED.is_dir():
        pytest.skip("no shared contest data")
    folder = extract("Philosophers-COL-000005", tmp_path)
    monkeypatch.setattr(unfolding, "MAX_TRANSITIONS", 10)
    model = load_model(folder / "model.pnml")
    assert not model.is_pt
    assert "passes 10 P/T transitions" in (model.coloured_because or "")
    answers = check_examinations(folder / "model.pnml", ["StateSpace", "ReachabilityDeadlock",
                                                         "UpperBounds"])
    assert wrong_answers(folder, answers) == []
    with pytest.raises(UnfoldingRefused, match="no more time"):
        unfold(arcs_net(), stop=lambda: "no more time")
    with pytest.raises(UnfoldingRefused, match="bindings tried"):
        unfold(arcs_net(), max_tried=5)


def test_a_colour_set_that_cannot_be_listed_is_named():
    net = PetriNet("counter")
    net.add_place(Place("count", INT, initial=[0]))
    net.add_transition(Transition("keep"))
    net.add_input("count", "keep", "x")
    net.add_output("count", "keep", "x")
    with pytest.raises(UnfoldingRefused, match="place count: colour set INT is not finite"):
        unfold(net)


def test_a_model_too_large_to_unfold_stays_coloured(tmp_path):
    net = PetriNet("wide")
    net.add_place(Place("big", IntSet(0, 10**8, name="Big"), initial=[0, 7]))
    net.add_transition(Transition("keep"))
    net.add_input("big", "keep", "x")
    net.add_output("big", "keep", "x")
    write_pnml(net, tmp_path / "model.pnml")
    model = load_model(tmp_path / "model.pnml")
    assert not model.is_pt
    assert "more than 10,000 members" in (model.coloured_because or "")  # MAX_UNFOLDED_PLACES
    answers = check_examinations(tmp_path / "model.pnml", ["StateSpace"])
    assert answers["StateSpace"][0].startswith("STATE_SPACE STATES 1 ")


@pytest.mark.parametrize("instance", FAST[:1] if SHARED.is_dir() else [])
def test_a_stopped_search_of_an_unfolding_answers_only_what_is_known(instance, tmp_path):
    """The siphon, the state equation and the walks on the unfolding, with a search
    stopped at 50 states: every answer given is the contest's."""
    folder = extract(instance, tmp_path)
    answers = check_examinations(folder / "model.pnml", list(EXAMINATIONS), max_states=50,
                                 time_limit_s=120)
    wrong = [w for w in wrong_answers(folder, answers) if "CANNOT_COMPUTE" not in w]
    assert wrong == []
    assert sum("CANNOT_COMPUTE" not in line for lines in answers.values()
               for line in lines) > 30
