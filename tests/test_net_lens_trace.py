"""The net lens's trace monitor writes the same tables whatever its chunk size.

The simulator calls the monitor's per-transition handlers directly
(``Monitor.observer``); the tables flush themselves when a chunk is full. A run with
chunks of a few rows (every table flushed many times, at every kind of handler) must
give exactly the trace of a run that flushes once at the end.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tcpn.models import net_lens
from tcpn.models.lenses import make_run
from tcpn.models.net_lens import NetLens
from tcpn.models.scenario import dumbbell
from tcpn.models.traces import Trace, TraceWriter


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
