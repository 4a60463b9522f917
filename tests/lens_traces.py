"""One lens's packet-level trace of a scenario mapping, for tests that compare lenses run
by run (the variants' checks against ns-3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tcpn.lenses import make_run
from tcpn.models.scenario import validate_scenario
from tcpn.models.traces import TraceWriter


def lens_trace(lens: Any, data: Mapping[str, Any]) -> Any:
    """The trace ``lens`` writes for the scenario ``data`` (seed and replication 0 of
    :func:`~tcpn.lenses.make_run`), without progress output."""
    scenario = validate_scenario(dict(data))
    run = make_run(scenario)
    writer = TraceWriter(scenario, run.flows)
    lens.run(run, writer, lambda *_a, **_k: None)
    return writer.close()
