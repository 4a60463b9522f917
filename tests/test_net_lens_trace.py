"""The net lens's trace monitor writes the same tables whatever its chunk size and buffering.

The simulator calls the monitor's per-transition handlers directly
(``Monitor.observer``); each handler adds a row as numbers with a code for its strings,
and the tables flush themselves when a chunk is full. A run with chunks of a few rows
(every table flushed many times, at every kind of handler) must give exactly the trace of
a run that flushes once at the end, and the chunked, dictionary-encoded path must write
what the writer's row-at-a-time calls write for the same rows.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tcpn.lenses import make_run
from tcpn.lenses import net as net_lens
from tcpn.lenses.net import NetLens
from tcpn.models.scenario import dumbbell
from tcpn.models.traces import Trace, TraceError, TraceWriter, encoded


def net_trace(chunk_rows: int, monkeypatch: pytest.MonkeyPatch) -> Trace:
    monkeypatch.setattr(net_lens, "_CHUNK_ROWS", chunk_rows)
    scenario = dumbbell(pairs=2, horizon_s=1.5)
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    NetLens().run(run, writer, lambda *_a, **_k: None)
    return writer.close()


def test_small_chunks_give_the_same_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = net_trace(1 << 30, monkeypatch)
    chunked = net_trace(7, monkeypatch)
    for table in ("flow_events", "flow_series", "queue_events"):
        frame = getattr(whole, table)
        assert len(frame) > 50, table
        pd.testing.assert_frame_equal(getattr(chunked, table), frame)
    assert set(whole.flow_events["event"]) >= {"send", "ack", "recv", "deliver"}
    assert set(whole.flow_series["var"]) >= {"cwnd_bytes", "rtt_s"}


def test_numeric_rows_write_what_row_calls_write(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same run twice: the monitor's own chunked path (numbers to NumPy, codes to
    # dictionary columns, TraceWriter.extend), then every row decoded and written with
    # the writer's row calls (strings per row, the writer's own dictionary encoding).
    whole = net_trace(1 << 15, monkeypatch)

    def row_by_row(self: Any, final: bool = False) -> None:
        values, width = self.values, self.width
        rows = [values[i:i + width] for i in range(0, len(values), width)]
        values.clear()
        write = {"flow_events": self.writer.flow_event, "flow_series": self.writer.flow_value,
                 "queue_events": self.writer.queue_event}[self.table]
        for time_s, code, *numbers in rows:
            write(time_s=time_s, **dict(zip(self.strings, self.keys[code], strict=True)),
                  **dict(zip(self.numbers, numbers, strict=True)), **self.constants)

    monkeypatch.setattr(net_lens._Rows, "flush", row_by_row)
    by_row = net_trace(1 << 15, monkeypatch)
    for table in ("flow_events", "flow_series", "queue_events"):
        pd.testing.assert_frame_equal(getattr(by_row, table), getattr(whole, table))


def test_encoded_is_pyarrows_dictionary_encoding() -> None:
    rng = random.Random(3)
    for _ in range(200):
        names = [rng.choice("abcde") * rng.randint(1, 2) for _ in range(rng.randint(1, 8))]
        codes = np.array([rng.randrange(len(names)) for _ in range(rng.randint(0, 40))],
                         dtype=np.intp)
        expected = pa.array([names[c] for c in codes], type=pa.string()).dictionary_encode()
        got = encoded(names, codes)
        assert got.type == expected.type
        assert got.equals(expected), (names, codes)


def test_an_integer_column_refuses_fractions_given_as_floats() -> None:
    scenario = dumbbell(pairs=1, horizon_s=1.0)
    writer = TraceWriter(scenario, scenario.concrete_flows(1))
    writer.extend("flow_events", time_s=np.array([0.0, 1.0]), flow="f0", event="send",
                  seq=np.array([0.0, 1448.0]))
    with pytest.raises(TraceError, match="whole numbers"):
        writer.extend("flow_events", time_s=np.array([0.0]), flow="f0", event="send",
                      seq=np.array([0.5]))
    with pytest.raises(TraceError, match="whole numbers"):
        writer.extend("flow_events", time_s=np.array([0.0]), flow="f0", event="send",
                      seq=np.array([2.0**60]))
    assert writer.close().flow_events["seq"].tolist() == [0, 1448]
