"""Every public writer follows tcpn's output rules (tcpn/outputs.py): an existing file is
replaced only with ``overwrite``, and a writer that fails leaves nothing behind."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tcpn.cli import app
from tcpn.experiments.compare import compare, plot_timeseries, write_comparison
from tcpn.experiments.optimize import OptimizationResult, Point
from tcpn.lenses import evaluate
from tcpn.models.scenario import dumbbell
from tcpn.outputs import OutputError
from tcpn.petrinets import INT, PetriNet, Place, Transition, simulate
from tcpn.petrinets.engine.monitors import EventLog
from tcpn.petrinets.exchange.cpn_export import write_cpn
from tcpn.petrinets.exchange.pnml import write_pnml
from tcpn.reports.search_record import search_figure, write_search
from tcpn.reports.studies.ecn_threshold import STUDY_FILES, delay_figure

MINE = "a user's file\n"


def counter() -> PetriNet:
    net = PetriNet("counter")
    net.add_place(Place("n", INT, initial=[0]))
    net.add_transition(Transition("add", guard="k < 3"))
    net.add_input("n", "add", "k")
    net.add_output("n", "add", "k + 1")
    return net


def search() -> OptimizationResult:
    points = [Point(float(v), o, 0.0, 1) for v, o in ((10, 1.0), (20, 2.0), (30, 2.0))]
    return OptimizationResult("ecn_k", "goodput", "fluid", points, points[1], (20.0, 30.0),
                              {}, near_optimal=(20.0, 30.0), integer=True)


def delays() -> dict[str, pd.DataFrame]:
    return {stem: pd.DataFrame({"delay_s": [0.1, 0.2, 0.3]}) for stem in STUDY_FILES}


@pytest.fixture(scope="module")
def fluid_trace():
    return evaluate(dumbbell(pairs=1, horizon_s=1.0), lens="fluid").trace


def _event_log(path: Path, overwrite: bool) -> None:
    simulate(counter(), monitors=[EventLog(path, overwrite=overwrite)])


#: name -> (file name, write(path, overwrite))
WRITERS: dict[str, tuple[str, Callable[..., object]]] = {
    "write_pnml": ("net.pnml", lambda p, o, _t: write_pnml(counter(), p, overwrite=o)),
    "write_cpn": ("net.cpn", lambda p, o, _t: write_cpn(counter(), p, layout="grid",
                                                        overwrite=o)),
    "delay_figure": ("delay.png", lambda p, o, _t: delay_figure(delays(), p, overwrite=o)),
    "search_figure": ("search.png", lambda p, o, _t: search_figure(search(), p, overwrite=o)),
    "plot_timeseries": ("ts.png", lambda p, o, t: plot_timeseries({"fluid": t}, p,
                                                                  overwrite=o)),
    "EventLog": ("log.csv", lambda p, o, _t: _event_log(p, o)),
}


@pytest.mark.parametrize("name", WRITERS)
def test_a_writer_replaces_an_existing_file_only_with_overwrite(tmp_path, name, fluid_trace):
    file_name, write = WRITERS[name]
    path = tmp_path / file_name
    path.write_text(MINE)
    with pytest.raises(OutputError, match=re.escape(f"{file_name} exists: pass overwrite")):
        write(path, False, fluid_trace)
    assert path.read_text() == MINE
    write(path, True, fluid_trace)
    assert path.read_bytes() != MINE.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == [file_name]  # no partial left
    (tmp_path / "new").mkdir()
    write(tmp_path / "new" / file_name, False, fluid_trace)  # a new file: no option needed
    assert (tmp_path / "new" / file_name).stat().st_size > 0


def test_an_event_log_of_a_failing_run_leaves_no_file(tmp_path):
    net = counter()
    net.add_transition(Transition("boom"))
    net.add_input("n", "boom", "k")
    net.add_output("n", "boom", "k // 0")
    path = tmp_path / "log.csv"
    with pytest.raises(Exception, match="division"):
        simulate(net, seed=1, monitors=[EventLog(path)])
    import gc

    gc.collect()
    assert list(tmp_path.iterdir()) == []


def test_write_search_writes_its_three_files_together(tmp_path):
    write_search(search(), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["search.csv", "search.json",
                                                          "search.png"]
    (tmp_path / "search.json").write_text(MINE)
    (tmp_path / "search.csv").unlink()
    with pytest.raises(OutputError, match=r"search\.json exists"):
        write_search(search(), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["search.json", "search.png"]
    assert (tmp_path / "search.json").read_text() == MINE
    write_search(search(), tmp_path, overwrite=True)
    assert json.loads((tmp_path / "search.json").read_text())["parameter"] == "ecn_k"


def test_write_comparison_refuses_an_existing_record_and_leaves_nothing_half(tmp_path):
    # the fluid lens refuses reverse traffic: one net run makes the record
    found = compare(dumbbell(pairs=1, reverse_pairs=1, horizon_s=0.5), ["net", "fluid"],
                    replications=1, output=tmp_path / "runs-dir")
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "timeseries.png").write_text(MINE)
    with pytest.raises(OutputError, match=r"timeseries\.png exists"):
        write_comparison(found, out)
    assert sorted(p.name for p in out.iterdir()) == ["timeseries.png"]  # nor the CSV
    write_comparison(found, out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["comparison.csv", "comparison.json",
                                                     "timeseries.png"]
    assert (out / "timeseries.png").read_bytes()[:4] == b"\x89PNG"


def test_check_json_is_replaced_only_with_overwrite(tmp_path):
    path = tmp_path / "verdicts.json"
    path.write_text(MINE)
    net = write_pnml(counter(), tmp_path / "counter.pnml")
    args = ["check", str(net), "--ctl", "EF deadlock", "--json", str(path)]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code != 0 and path.read_text() == MINE
    assert "exists" in str(refused.exception)
    replaced = CliRunner().invoke(app, [*args, "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    assert json.loads(path.read_text())["verdicts"][0]["answer"] == "true"
