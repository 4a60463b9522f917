"""The shared metrics and the trace schema, on small traces whose metrics are worked by hand."""

from __future__ import annotations

import doctest
import json
import math

import numpy as np
import pandas as pd
import pytest

from tcpn.errors import InputError
from tcpn.models import metrics, traces
from tcpn.models.metrics import (
    event_counts,
    goodput_bps,
    goodput_series_bps,
    jain_index,
    loss_ratio,
    mark_ratio,
    queue_stats,
    retransmission_ratio,
    rtt_stats,
    segment_delays,
    summarize,
    throughput_bps,
    time_to_deliver_s,
)
from tcpn.models.scenario import dumbbell, validate_scenario
from tcpn.models.traces import ScenarioResult, Trace, TraceError, TraceWriter

MSS = 1000


def _scenario(horizon_s: float = 10.0, warmup_s: float = 0.0, bytes_f1: int | None = None):
    flows = [{"id": "f0", "src": "S0", "dst": "D0", "variant": "newreno"},
             {"id": "f1", "src": "S1", "dst": "D1", "variant": "reno", "start_s": 1.0}]
    if bytes_f1 is not None:
        flows[1]["bytes"] = bytes_f1
    base = dumbbell(pairs=2, horizon_s=horizon_s)
    data = base.model_dump(exclude={"flows", "measure", "tcp"})
    return validate_scenario({**data, "flows": flows, "tcp": {"segment_size_bytes": MSS},
                              "measure": {"warmup_s": warmup_s, "bin_s": 2.0}})


def _writer(**kwargs) -> TraceWriter:
    s = _scenario(**kwargs)
    return TraceWriter(s, s.concrete_flows(1))


@pytest.fixture
def trace() -> Trace:
    """f0 sends 10 segments at t = 0..9 s, each delivered 0.5 s later; f1 (from t = 1 s)
    sends 4 segments at 1, 2, 3, 4 s, the second is dropped and retransmitted at 5 s, and
    delivery stalls until then (in-order release of 3000 bytes at 5.5 s)."""
    w = _writer()
    for k in range(10):
        w.flow_event(k, "f0", "send", seq=k * MSS, bytes=MSS)
        w.flow_event(k + 0.5, "f0", "recv", seq=k * MSS, bytes=MSS)
        w.flow_event(k + 0.5, "f0", "deliver", seq=k * MSS, bytes=MSS)
        w.flow_value(k + 0.6, "f0", "rtt_s", 0.1 * (k % 4 + 1))  # 0.1 0.2 0.3 0.4 0.1 ...
    for k in range(4):
        w.flow_event(1.0 + k, "f1", "send", seq=k * MSS, bytes=MSS)
    w.flow_event(1.5, "f1", "recv", seq=0, bytes=MSS)
    w.flow_event(1.5, "f1", "deliver", seq=0, bytes=MSS)
    w.flow_event(2.2, "f1", "drop", seq=MSS, bytes=MSS, where="R1->R2")
    w.flow_event(3.5, "f1", "recv", seq=2 * MSS, bytes=MSS)
    w.flow_event(3.6, "f1", "mark", seq=2 * MSS, bytes=MSS, where="R1->R2")
    w.flow_event(4.5, "f1", "recv", seq=3 * MSS, bytes=MSS)
    w.flow_event(5.0, "f1", "retransmit", seq=MSS, bytes=MSS)
    w.flow_event(5.5, "f1", "recv", seq=MSS, bytes=MSS)
    w.flow_event(5.5, "f1", "deliver", seq=MSS, bytes=3 * MSS)
    w.flow_value(0.0, "f0", "cwnd_bytes", 2 * MSS)
    w.flow_value(4.0, "f0", "cwnd_bytes", 4 * MSS)  # 2 MSS for 4 s, 4 MSS for 6 s: mean 3.2
    # R1->R2 length: 0 on [0,1), 1 on [1,2), 3 on [2,4), 0 from 4 s
    q = "R1->R2"
    w.queue_event(1.0, q, "enqueue", 1, 1040, flow="f0", bytes=1040)
    w.queue_event(2.0, q, "enqueue", 2, 2080, flow="f0", bytes=1040)
    w.queue_event(2.0, q, "mark", 2, 2080, flow="f1", bytes=1040)
    w.queue_event(2.0, q, "enqueue", 3, 3120, flow="f1", bytes=1040)
    w.queue_event(2.2, q, "drop", 3, 3120, flow="f1", bytes=1040)
    w.queue_event(4.0, q, "dequeue", 2, 2080)
    w.queue_event(4.0, q, "dequeue", 1, 1040)
    w.queue_event(4.0, q, "dequeue", 0, 0)
    return w.close()


def test_goodput_and_throughput_by_hand(trace):
    # f0 delivers 10 x 1000 B in 10 s = 8000 bit/s; f1 delivers 4000 B = 3200 bit/s
    assert goodput_bps(trace).to_dict() == {"f0": 8000.0, "f1": 3200.0}
    # f1's receiver gets 4 segments (the dropped one only as its retransmission), and a
    # duplicate arrival also counts as throughput
    assert throughput_bps(trace).to_dict() == {"f0": 8000.0, "f1": 3200.0}
    trace.flow_events.loc[len(trace.flow_events)] = [6.0, "f1", "recv", 0, MSS, 1.0, ""]
    assert throughput_bps(trace)["f1"] == 4000.0
    # window [5, 10]: f0 delivers at 5.5 .. 9.5 (5 segments); f1 its 3000 B at 5.5
    assert goodput_bps(trace, 5.0, 10.0).to_dict() == {"f0": 8000.0, "f1": 4800.0}


def test_warmup_sets_the_default_window():
    w = _writer(warmup_s=4.0)
    w.flow_event(3.0, "f0", "deliver", seq=0, bytes=MSS)
    w.flow_event(4.0, "f0", "deliver", seq=MSS, bytes=MSS)
    t = w.close()
    assert goodput_bps(t)["f0"] == MSS * 8 / 6.0  # only the one at 4.0, over 6 s


def test_ratios_by_hand(trace):
    # f1 transmitted 5 segments (4 new + 1 retransmission): 1 drop, 1 mark, 1 retransmission
    assert loss_ratio(trace)["f1"] == pytest.approx(1 / 5)
    assert mark_ratio(trace)["f1"] == pytest.approx(1 / 5)
    assert retransmission_ratio(trace)["f1"] == pytest.approx(1 / 5)
    assert loss_ratio(trace)["f0"] == 0.0
    counts = event_counts(trace)
    assert counts.loc["f1", ["send", "retransmit", "recv", "deliver"]].tolist() == [4, 1, 4, 2]


def test_ratio_of_a_silent_flow_is_nan():
    t = _writer().close()
    assert loss_ratio(t).isna().all()


@pytest.mark.parametrize(("values", "expected"), [
    ([1, 1, 1, 1], 1.0), ([1, 0, 0, 0], 0.25), ([4, 2], 0.9), ([3, 1, 2], 36 / 42),
])
def test_jain_index(values, expected):
    assert jain_index(values) == pytest.approx(expected)


def test_jain_index_rejects_nonsense():
    with pytest.raises(InputError):
        jain_index([])
    with pytest.raises(InputError):
        jain_index([1.0, -1.0])
    assert math.isnan(jain_index([0.0, 0.0]))


def test_queue_statistics_time_weighted(trace):
    row = queue_stats(trace, 0.0, 5.0).loc["R1->R2"]
    # 0 for 1 s, 1 for 1 s, 3 for 2 s, 0 for 1 s over 5 s
    assert row["mean_packets"] == pytest.approx(7 / 5)
    assert row["mean_bytes"] == pytest.approx(7 / 5 * 1040)
    # held: 0 -> 40 % of the time, 1 -> 20 %, 3 -> 40 %
    assert row["p50_packets"] == 1.0
    assert row["p95_packets"] == 3.0
    assert queue_stats(trace, 0.0, 5.0, percentiles=(40,)).loc["R1->R2", "p40_packets"] == 0.0
    assert row["max_packets"] == 3.0
    assert (row["drops"], row["marks"], row["arrivals"]) == (1.0, 1.0, 4.0)
    assert row["drop_ratio"] == pytest.approx(1 / 4)


def test_queue_window_starting_inside_a_step(trace):
    # [1.5, 3]: 1 packet for 0.5 s then 3 packets for 1 s
    row = queue_stats(trace, 1.5, 3.0).loc["R1->R2"]
    assert row["mean_packets"] == pytest.approx((0.5 * 1 + 1.0 * 3) / 1.5)
    assert (row["drops"], row["arrivals"]) == (1.0, 3.0)  # two enqueues at 2.0, a drop


def test_untraced_queue_is_left_out():
    s = _scenario()
    s = validate_scenario({**s.model_dump(), "trace": {"queues": ["R1->R2"]}})
    t = TraceWriter(s, s.concrete_flows(1)).close()
    assert list(queue_stats(t).index) == ["R1->R2"]


def test_rtt_statistics(trace):
    row = rtt_stats(trace).loc["f0"]
    samples = np.array([0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4, 0.1, 0.2])
    assert row["samples"] == 10
    assert row["mean_s"] == pytest.approx(samples.mean())
    assert row["min_s"] == pytest.approx(0.1)
    assert row["max_s"] == pytest.approx(0.4)
    assert row["p50_s"] == pytest.approx(0.2)
    assert rtt_stats(trace).loc["f1", "samples"] == 0


def test_time_to_deliver(trace):
    assert time_to_deliver_s(trace, "f0", segments=3) == pytest.approx(2.5)
    # f1 starts at 1 s; its second segment arrives in order only at 5.5 s
    assert time_to_deliver_s(trace, "f1", segments=2) == pytest.approx(4.5)
    assert time_to_deliver_s(trace, "f1", bytes=1) == pytest.approx(0.5)
    assert math.isnan(time_to_deliver_s(trace, "f1", segments=5))
    with pytest.raises(InputError):
        time_to_deliver_s(trace, "f0")  # a bulk flow has no default target


def test_time_to_deliver_defaults_to_the_flow_size():
    w = _writer(bytes_f1=2 * MSS)
    w.flow_event(1.3, "f1", "deliver", seq=0, bytes=MSS)
    w.flow_event(1.7, "f1", "deliver", seq=MSS, bytes=MSS)
    t = w.close()
    assert time_to_deliver_s(t, "f1") == pytest.approx(0.7)
    assert summarize(t)["flows"]["f1"]["completion_s"] == pytest.approx(0.7)


def test_segment_delays(trace):
    delays = segment_delays(trace, "f1")
    assert delays["seq"].tolist() == [0, 1000, 2000, 3000]
    # seg 0 delivered at 1.5; segs 1..3 released together at 5.5
    assert delays["delay_s"].tolist() == pytest.approx([0.5, 3.5, 2.5, 1.5])


def test_summary_mean_segment_delay_of_a_sized_flow():
    # f1 of the fixture, sized: delays 0.5, 3.5, 2.5, 1.5 s; f0 is bulk (no mean)
    w = _writer(bytes_f1=4 * MSS)
    for k in range(4):
        w.flow_event(1.0 + k, "f1", "send", seq=k * MSS, bytes=MSS)
    w.flow_event(1.5, "f1", "deliver", seq=0, bytes=MSS)
    w.flow_event(5.5, "f1", "deliver", seq=MSS, bytes=3 * MSS)
    flows = summarize(w.close())["flows"]
    assert flows["f1"]["segment_delay_mean_s"] == pytest.approx(2.0)
    assert flows["f0"]["segment_delay_mean_s"] is None


def test_goodput_series_with_a_short_last_bin(trace):
    series = goodput_series_bps(trace, bin_s=4.0)
    assert series.index.tolist() == [0.0, 4.0, 8.0]
    # f0: bins [0,4): 4 deliveries, [4,8): 4, [8,10]: 2 over a 2 s bin
    assert series["f0"].tolist() == pytest.approx([8000.0, 8000.0, 8000.0])
    assert series["f1"].tolist() == pytest.approx([2000.0, 6000.0, 0.0])


def test_summary_is_json_ready_and_consistent(trace):
    summary = summarize(trace)
    json.dumps(summary, allow_nan=False)
    assert summary["aggregate"]["goodput_bps"] == 11200.0
    assert summary["aggregate"]["jain_index"] == pytest.approx(jain_index([8000, 3200]))
    assert summary["flows"]["f0"]["cwnd_mean_bytes"] == pytest.approx(3.2 * MSS)
    assert summary["flows"]["f1"]["cwnd_mean_bytes"] is None
    assert summary["queues"]["R1->R2"]["drops"] == 1.0


def test_writer_rejects_what_the_schema_does_not_allow():
    w = _writer()
    w.flow_event(0.0, "f0", "teleport")
    with pytest.raises(TraceError, match="unknown event 'teleport'"):
        w.close()
    w = _writer()
    w.flow_event(0.0, "f9", "send")
    with pytest.raises(TraceError, match="unknown flow 'f9'"):
        w.close()
    w = _writer()
    with pytest.raises(TraceError, match="column 'value' is required"):
        w.extend("flow_series", time_s=[0.0], flow="f0", var="cwnd_bytes")


def test_parquet_streaming_equals_memory(tmp_path):
    rows = [(0.001 * k, f"f{k % 2}", ("send", "recv", "deliver")[k % 3], k) for k in range(50)]
    frames = []
    for directory in (None, tmp_path):
        s = _scenario()
        w = TraceWriter(s, s.concrete_flows(1), directory=directory, chunk_rows=7)
        for t, f, e, k in reversed(rows):  # written out of time order
            w.flow_event(t, f, e, seq=k * MSS, bytes=MSS)
        w.extend("queue_events", time_s=np.arange(5.0), queue="R1->R2", event="sample",
                 length_packets=np.arange(5.0), length_bytes=0.0)
        frames.append(w.close())
    memory, disk = frames
    assert (tmp_path / "flow_events.parquet").exists()
    for name in ("flow_events", "queue_events", "flow_series"):
        pd.testing.assert_frame_equal(getattr(memory, name), getattr(disk, name))
    assert memory.flow_events["time_s"].is_monotonic_increasing


def test_result_round_trip(tmp_path, trace):
    scenario = _scenario()
    result = ScenarioResult(scenario=scenario, lens="net", seed={"entropy": 1, "spawn_key": [0]},
                            wall_time_s=0.5, trace=trace, summary=summarize(trace),
                            provenance=traces.provenance(lens={"engine": "test"}))
    result.save(tmp_path / "out")
    back = ScenarioResult.load(tmp_path / "out")
    assert back.scenario_hash == result.scenario_hash
    assert back.summary == json.loads(json.dumps(result.summary))
    pd.testing.assert_frame_equal(back.trace.flow_events, trace.flow_events)
    assert back.flow_summary().loc["f0", "goodput_bps"] == 8000.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_failed_save_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), traces.atomic_directory(tmp_path / "out") as tmp:
        (tmp / "flow_events.parquet").write_text("half")
        raise RuntimeError("lens crashed")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="no complete tcpn result"):
        ScenarioResult.load(tmp_path / "out")


def test_doctests():
    for module in (metrics, traces):
        assert doctest.testmod(module).failed == 0
