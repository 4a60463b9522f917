"""The compiled trace monitor writes the trace the Python one writes, row for row.

:mod:`tcpn.lenses.compiled_trace` runs ``tcpn/lenses/net.py`` compiled by Cython on the
native engine; the Python monitor stays the reference. Both watch the same run (the
Python engine's, so that only the monitor differs) of scenarios that exercise every
handler kind: the reference dumbbell (sends, ACKs, SACK retransmissions, queue drops),
RED marking, random loss, and study S3's 802.11 hop (frames lost at transmit and at a
radio's finish).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from tcpn.lenses import make_run
from tcpn.lenses.compiled_trace import compiled_trace_monitor, trace_monitor_class
from tcpn.lenses.net import TraceMonitor
from tcpn.models.scenario import Scenario, load_scenario, validate_scenario
from tcpn.models.topology import compose
from tcpn.models.traces import SCHEMAS, Trace, TraceWriter
from tcpn.petrinets import Simulator
from tcpn.petrinets.engine.native import why_unavailable

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ["newreno_2flows", "red_ecn", "westwood_sack_loss_1e-2", "s3:ackless_tcp_l_138"]


def scenario_of(name: str) -> Scenario:
    """A reference scenario, or (``s3:``) an experiment of study S3's quick profile."""
    if name.startswith("s3:"):
        from tcpn.reports.studies import s3

        experiments = {e.name: e for e in s3.experiments(s3.SETTINGS["quick"])}
        return validate_scenario(dict(experiments[name[3:]].scenario))
    return load_scenario(ROOT / "scenarios" / "reference" / f"{name}.yaml")


def traced(scenario: Scenario, monitor_class: type) -> tuple[Trace, dict[str, int]]:
    """The trace and counts ``monitor_class`` makes of the Python engine's run."""
    run = make_run(scenario)
    composed = compose(scenario, run.flows)
    writer = TraceWriter(scenario, run.flows)
    selection = scenario.trace
    monitor = monitor_class(composed, writer, scenario.traced_queues(), cwnd=selection.cwnd,
                            rtt=selection.rtt, flow_events=selection.flow_events)
    sim = Simulator(composed.net, seed=run.lens_seed, monitors=[monitor], engine="python")
    sim.run(until=scenario.horizon_s)
    counts = monitor.result()
    return writer.close(), counts


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_compiled_monitor_writes_the_python_monitors_trace(name: str) -> None:
    reason = why_unavailable()
    if reason is not None:
        pytest.skip(f"the native engine cannot be built here: {reason}")
    compiled = compiled_trace_monitor()
    assert compiled is not None and compiled is not TraceMonitor
    scenario = scenario_of(name).model_copy(update={"horizon_s": 3.0})
    python_trace, python_counts = traced(scenario, TraceMonitor)
    compiled_trace, compiled_counts = traced(scenario, compiled)
    assert compiled_counts == python_counts
    rows = 0
    for table in SCHEMAS:
        expected = getattr(python_trace, table)
        rows += len(expected)
        pd.testing.assert_frame_equal(getattr(compiled_trace, table), expected,
                                      check_exact=True, obj=table)
    assert rows > 1_000


def test_the_python_engine_keeps_the_python_monitor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCPN_ENGINE", "python")
    assert trace_monitor_class(TraceMonitor) is TraceMonitor


def test_the_compiled_rows_are_numpys_numbers() -> None:
    """The compiled monitor's typed ``float_rows`` gives what ``np.array`` gives, bit for
    bit, on the numbers a row holds (floats, ints past 2**53, bools, NumPy scalars), and
    leaves to NumPy what is not a number (``None`` becomes NaN in both)."""
    import numpy as np

    from tcpn.lenses import net

    reason = why_unavailable()
    if reason is not None:
        pytest.skip(f"the native engine cannot be built here: {reason}")
    compiled = compiled_trace_monitor()
    assert compiled is not None
    typed = sys.modules[compiled.__module__].float_rows
    assert typed is not net.float_rows
    values = [0.1, 3, 2**53 + 1, -(2**63) - 7, True, np.float32(1 / 3), np.int64(-5),
              1e308, -0.0, float("inf")]
    for rows in (values, [*values[:5], None, *values[6:]]):
        got, want = typed(rows, 5), net.float_rows(rows, 5)
        assert got.shape == want.shape == (2, 5)
        assert got.dtype == want.dtype == np.float64
        assert got.tobytes() == want.tobytes()
