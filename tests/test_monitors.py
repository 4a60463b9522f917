"""Monitors measure what they claim, event logs land on disk, seeds reproduce across processes."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from tcpn.petrinets import (
    INT,
    DataCollector,
    EventLog,
    FiringCount,
    PetriNet,
    Place,
    Simulator,
    TimeAverage,
    Token,
    Transition,
    independent_seeds,
    simulate,
)
from tcpn.petrinets.examples import single_server_queue


def staircase() -> PetriNet:
    """'stock' gains one token at times 1, 2 and 4 (scripted by timed tokens on 'script')."""
    net = PetriNet("staircase")
    net.add_place(Place("script", INT.timed(), initial=[Token(1, 1.0), Token(2, 2.0),
                                                         Token(3, 4.0)]))
    net.add_place(Place("stock", INT))
    net.add_transition(Transition("add"))
    net.add_input("script", "add", "k")
    net.add_output("stock", "add", "k")
    return net


def test_time_average_of_a_place_by_hand():
    # stock count: 0 on [0,1), 1 on [1,2), 2 on [2,4), 3 on [4,6]; horizon 6
    # area = 0 + 1 + 4 + 6 = 11 over 6 time units
    result = simulate(staircase(), until=6.0, monitors=[TimeAverage("stock", record=True)])
    measured = result.monitors["average(stock)"]
    assert measured["average"] == pytest.approx(11 / 6)
    assert list(measured["times"]) == [0.0, 1.0, 2.0, 4.0]
    assert list(measured["values"]) == [0.0, 1.0, 2.0, 3.0]


def test_time_average_of_a_function():
    avg = TimeAverage(function=lambda sim: sum(t.value for t in sim.tokens("stock")),
                      name="sum")
    result = simulate(staircase(), until=8.0, monitors=[avg])
    # sum: 0 on [0,1), 1 on [1,2), 3 on [2,4), 6 on [4,8] -> (1 + 6 + 24) / 8
    assert result.monitors["sum"]["average"] == pytest.approx(31 / 8)


def test_firing_count_and_data_collector():
    monitors = [FiringCount("add"),
                DataCollector("add", lambda b, now: b["k"] * 10, name="tenfold")]
    result = simulate(staircase(), monitors=monitors)
    assert result.monitors["count(add)"] == 3
    data = result.monitors["tenfold"]
    assert list(data["times"]) == [1.0, 2.0, 4.0]
    assert list(data["values"]) == [10, 20, 30]
    frame = result.frame("tenfold")
    assert list(frame.columns) == ["time", "value"] and frame["value"].sum() == 60
    with pytest.raises(ValueError, match="recorded no series"):
        result.frame("count(add)")


def test_monitor_on_unknown_transition_is_refused():
    with pytest.raises(ValueError, match="monitor count\\(nope\\): no transition named 'nope'"):
        Simulator(staircase(), monitors=[FiringCount("nope")])


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_event_log_formats(tmp_path, suffix):
    path = tmp_path / f"log{suffix}"
    simulate(staircase(), monitors=[EventLog(path, batch_size=2)])
    if suffix == ".csv":
        frame = pd.read_csv(path)
    elif suffix == ".parquet":
        frame = pd.read_parquet(path)
    else:
        frame = pd.DataFrame([json.loads(line) for line in path.read_text().splitlines()])
    assert list(frame["time"]) == [1.0, 2.0, 4.0]
    assert list(frame["transition"]) == ["add"] * 3
    first_consumed = frame["consumed"][0]
    consumed = first_consumed if isinstance(first_consumed, dict) else json.loads(first_consumed)
    assert consumed == {"script": [[1, 1.0]]}
    produced = frame["produced"][2]
    produced = produced if isinstance(produced, dict) else json.loads(produced)
    assert produced == {"stock": [3]}


def test_event_log_rejects_unknown_format(tmp_path):
    with pytest.raises(ValueError, match=r"use a \.csv, \.jsonl or \.parquet file"):
        EventLog(tmp_path / "log.txt")


def test_independent_seeds_give_distinct_reproducible_streams():
    seeds = independent_seeds(7, 3)
    net = single_server_queue(100, 1.0, 0.5)
    times = [simulate(net, seed=s).final_time for s in seeds]
    again = [simulate(net, seed=s).final_time for s in independent_seeds(7, 3)]
    assert times == again and len(set(times)) == 3


def test_same_seed_in_another_process_gives_the_same_run():
    code = (
        "from tcpn.petrinets import simulate\n"
        "from tcpn.petrinets.examples import single_server_queue\n"
        "r = simulate(single_server_queue(300, 1.0, 0.9), seed=2024)\n"
        "print(repr(r.final_time), r.firings)\n"
    )
    here = simulate(single_server_queue(300, 1.0, 0.9), seed=2024)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [repr(here.final_time), str(here.firings)]
