"""PNML core-model files as pm4py (and ProM) write them: read as P/T nets, same reachability graph.

The files are written by pm4py itself (``pm4py.write_pnml``) from nets pm4py discovered
or built; each is read back by pm4py and by tcpn, and the two reachability graphs (every
marking, every firing ``marking --transition--> marking``) must be the same, transition
ids and place ids on both sides.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pm4py
import pytest
from pm4py.objects.petri_net.inhibitor_reset.semantics import InhibitorResetSemantics
from pm4py.objects.petri_net.obj import Marking, PetriNet, ResetInhibitorNet
from pm4py.objects.petri_net.utils import petri_utils
from pm4py.objects.petri_net.utils.reachability_graph import Parameters, marking_flow_petri

from tcpn.petrinets import explore
from tcpn.petrinets.exchange.pnml import read_pnml

Graph = set[tuple[frozenset, str, frozenset]]


def pm4py_graph(path: Path, reset_inhibitor: bool = False) -> tuple[set[frozenset], Graph]:
    """pm4py's own reachability graph of the file pm4py reads back."""
    net, initial, _final = pm4py.read_pnml(str(path))
    parameters = {Parameters.PETRI_SEMANTICS: InhibitorResetSemantics()} if reset_inhibitor \
        else None
    incoming, outgoing, _ = marking_flow_petri(net, initial, parameters=parameters)

    def key(marking: Counter) -> frozenset:
        return frozenset((p.name, n) for p, n in marking.items() if n)

    states = {key(m) for m in incoming}
    edges = {(key(m), t.name, key(after)) for m, out in outgoing.items()
             for t, after in out.items()}
    return states, edges


def tcpn_graph(path: Path) -> tuple[set[frozenset], Graph]:
    """tcpn's, with node names mapped back to the file's ids (see the uuid test)."""
    imported = read_pnml(path)
    space = explore(imported.net)
    ids = {name.partition(":")[2]: element_id for name, element_id in imported.ids.items()}

    def key(state: int) -> frozenset:
        return frozenset((ids[p], len(tokens)) for p, tokens in space.marking(state).items()
                         if tokens)

    states = {key(s) for s in range(len(space))}
    edges = {(key(e.source), ids[e.transition], key(e.target))
             for s in range(len(space)) for e in space.edges(s)}
    assert len(edges) == space.n_edges  # no firing counted twice
    return states, edges


def discovered(tmp_path: Path) -> Path:
    """An inductive-miner net (silent tau splits/joins, a loop, a choice) in pm4py's PNML."""
    traces = [["a", "b", "c", "d"], ["a", "c", "b", "d"], ["a", "e", "d"],
              ["a", "b", "c", "b", "c", "d"]]
    log = pd.DataFrame([
        {"case:concept:name": str(i), "concept:name": activity,
         "time:timestamp": pd.Timestamp("2024-01-01") + pd.Timedelta(minutes=10 * i + j)}
        for i, trace in enumerate(traces) for j, activity in enumerate(trace)])
    net, initial, final = pm4py.discover_petri_net_inductive(log)
    path = tmp_path / "discovered.pnml"
    pm4py.write_pnml(net, initial, final, str(path))
    return path


def test_a_discovered_net_has_pm4py_s_reachability_graph(tmp_path):
    path = discovered(tmp_path)
    assert "pnmlcoremodel" in path.read_text()
    ours, theirs = tcpn_graph(path), pm4py_graph(path)
    assert ours == theirs
    assert len(ours[0]) > 5 and len(ours[1]) > len(ours[0])  # a net worth comparing


def test_ids_are_names_and_repeated_labels_stay_labels(tmp_path):
    net = PetriNet("prom_like")
    places = [PetriNet.Place(n) for n in ("source", "middle", "sink")]
    for place in places:
        net.places.add(place)
    # ProM labels several transitions "tau"; pm4py marks silent ones with label None
    steps = [PetriNet.Transition("t1", "tau"), PetriNet.Transition("t2", "tau"),
             PetriNet.Transition("t3", "tau"), PetriNet.Transition("t4", None)]
    for step in steps:
        net.transitions.add(step)
    for step, (a, b) in zip(steps, [(0, 1), (0, 1), (1, 2), (1, 2)], strict=True):
        petri_utils.add_arc_from_to(places[a], step, net)
        petri_utils.add_arc_from_to(step, places[b], net, weight=2 if step.name == "t1" else 1)
    path = tmp_path / "tau.pnml"
    pm4py.write_pnml(net, Marking({places[0]: 2}), Marking({places[2]: 1}), str(path))
    imported = read_pnml(path)
    assert sorted(imported.net.transitions) == ["t1", "t2", "t3", "t4"]
    assert imported.labels["t1"] == imported.labels["t2"] == imported.labels["t3"] == "tau"
    assert "t4" not in imported.labels  # silent: no label
    assert tcpn_graph(path) == pm4py_graph(path)


def test_reset_and_inhibitor_arcs_as_pm4py_writes_them(tmp_path):
    net = ResetInhibitorNet("guarded")
    work, done, stop, trigger = (PetriNet.Place(n) for n in ("work", "done", "stop",
                                                             "trigger"))
    for place in (work, done, stop, trigger):
        net.places.add(place)
    step, flush = PetriNet.Transition("step", "step"), PetriNet.Transition("flush", "flush")
    net.transitions.update({step, flush})
    petri_utils.add_arc_from_to(work, step, net)
    petri_utils.add_arc_from_to(step, done, net)
    petri_utils.add_arc_from_to(stop, step, net, type="inhibitor")  # only while no stop
    petri_utils.add_arc_from_to(trigger, flush, net)
    petri_utils.add_arc_from_to(done, flush, net, type="reset")  # empties done
    petri_utils.add_arc_from_to(flush, stop, net)
    path = tmp_path / "reset.pnml"
    pm4py.write_pnml(net, Marking({work: 3, trigger: 1}), Marking(), str(path))
    assert "<arctype>" in path.read_text()
    ours = tcpn_graph(path)
    assert ours == pm4py_graph(path, reset_inhibitor=True)
    assert len(ours[0]) == 8  # 4 before the flush, 4 after it


def test_ids_that_are_no_tcpn_names_are_renamed_and_reported(tmp_path):
    """pm4py names discovered transitions by uuid, which may start with a digit."""
    net = PetriNet("uuids")
    start, end = PetriNet.Place("start"), PetriNet.Place("end")
    net.places.update({start, end})
    step = PetriNet.Transition("7c9e6679-7425-40de-944b-e07fc1f90ae7", "register")
    net.transitions.add(step)
    petri_utils.add_arc_from_to(start, step, net)
    petri_utils.add_arc_from_to(step, end, net)
    path = tmp_path / "uuid.pnml"
    pm4py.write_pnml(net, Marking({start: 1}), Marking({end: 1}), str(path))
    imported = read_pnml(path)
    name = "n_7c9e6679-7425-40de-944b-e07fc1f90ae7"
    assert list(imported.net.transitions) == [name]
    assert imported.ids[f"trans:{name}"] == step.name and imported.labels[name] == "register"
    (note,) = imported.report.notes
    assert note.element_id == step.name and "no tcpn name" in note.reason
    assert tcpn_graph(path) == pm4py_graph(path)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("<text>2</text>", "<text>two</text>", 1),
     "initial marking 'two' is not a natural number"),
    (lambda t: t.replace("<text>2</text>", "<text>0</text>", 2),
     "arc inscription '0' is not a positive number"),
    (lambda t: t.replace('type="http://www.pnml.org/version-2009/grammar/pnmlcoremodel"',
                         'type="http://example.org/timednet"'), "net type .* is neither a P/T"),
])
def test_bad_core_model_files_name_the_element(tmp_path, edit, message):
    test_ids_are_names_and_repeated_labels_stay_labels(tmp_path)
    bad = tmp_path / "bad.pnml"
    bad.write_text(edit((tmp_path / "tau.pnml").read_text()))
    with pytest.raises(Exception, match=rf"bad\.pnml, line \d+, element \w+: {message}"):
        read_pnml(bad)
