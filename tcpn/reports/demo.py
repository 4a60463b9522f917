"""The demo behind ``tcpn demo`` and ``make run``: a timed net, then one scenario, two lenses.

First the simulator on a net whose answer is known (an M/M/1 queue beside its theory),
then the product's main job on embedded defaults: the reference dumbbell (two NewReno
flows over a 10 Mbit/s, 20 ms drop-tail bottleneck) through the net lens and the fluid
lens, per-flow goodput side by side, computed by the one metrics module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.table import Table

from tcpn.lenses import evaluate
from tcpn.lenses.replications import flow_table
from tcpn.models.scenario import Scenario, parse_scenario
from tcpn.petrinets.engine.monitors import FiringCount, TimeAverage
from tcpn.petrinets.engine.result import SimulationResult
from tcpn.petrinets.engine.simulator import simulate
from tcpn.petrinets.examples import single_server_queue

__all__ = ["DEMO_SCENARIO", "demo_scenario", "lens_table", "mm1_table"]

#: The reference dumbbell of scenarios/dumbbell_newreno.yaml, embedded so that the demo
#: needs no file; the horizon is set by :func:`demo_scenario`.
DEMO_SCENARIO = """
name: demo_dumbbell
description: 2 NewReno flows, 10 Mbit/s 20 ms bottleneck, drop-tail 100 packets
links:
  - {a: R1, b: R2, rate_bps: 10.0e+6, delay_s: 0.020, queue: {kind: drop_tail, limit: 100}}
  - {a: S0, b: R1, rate_bps: 100.0e+6, delay_s: 0.001}
  - {a: S1, b: R1, rate_bps: 100.0e+6, delay_s: 0.001}
  - {a: R2, b: D0, rate_bps: 100.0e+6, delay_s: 0.001}
  - {a: R2, b: D1, rate_bps: 100.0e+6, delay_s: 0.001}
tcp: {segment_size_bytes: 1448, rcv_buf_bytes: 4194304, snd_buf_bytes: 4194304}
flows:
  - {id: f0, src: S0, dst: D0, variant: newreno, start_s: 0.0}
  - {id: f1, src: S1, dst: D1, variant: newreno, start_s: 0.1}
horizon_s: 10.0
seed: 1
"""


def demo_scenario(horizon_s: float = 10.0) -> Scenario:
    """The embedded dumbbell with the given horizon.

    >>> demo_scenario(5.0).horizon_s
    5.0
    """
    return parse_scenario(DEMO_SCENARIO, "<demo>").model_copy(update={"horizon_s": horizon_s})


@dataclass
class MM1Demo:
    """The M/M/1 run and its theory, ready to print."""

    result: SimulationResult
    table: Table


def mm1_table(seed: int = 1, customers: int = 20000, mean_gap: float = 1.0,
              mean_service: float = 0.8) -> MM1Demo:
    """Simulate the M/M/1 net and tabulate utilisation and mean queue against theory."""
    net = single_server_queue(customers=customers, mean_gap=mean_gap, mean_service=mean_service)
    result = simulate(net, seed=seed, monitors=[TimeAverage("queue"), TimeAverage("busy"),
                                                FiringCount("depart")])
    rho = mean_service / mean_gap
    table = Table(title=f"M/M/1 queue as a timed coloured Petri net (seed {seed})")
    table.add_column("measure")
    table.add_column("simulated", justify="right")
    table.add_column("M/M/1 theory", justify="right")
    table.add_row("customers served", str(result.monitors["count(depart)"]), str(customers))
    table.add_row("server utilisation", f"{result.monitors['average(busy)']['average']:.3f}",
                  f"{rho:.3f}")
    table.add_row("mean number waiting", f"{result.monitors['average(queue)']['average']:.3f}",
                  f"{rho * rho / (1 - rho):.3f}")
    table.add_row("model time", f"{result.final_time:.1f}", "")
    return MM1Demo(result, table)


def lens_table(scenario: Scenario, lenses: tuple[str, ...] = ("net", "fluid")) -> Table:
    """Per-flow goodput, loss ratio and mean RTT of ``scenario`` under each lens."""
    frames: dict[str, Any] = {lens: flow_table(evaluate(scenario, lens)) for lens in lenses}
    table = Table(title=f"{scenario.name}, {scenario.horizon_s:g} s: one scenario, "
                  f"{len(lenses)} lenses")
    table.add_column("flow")
    for lens in lenses:
        table.add_column(f"{lens} goodput Mbit/s", justify="right")
        table.add_column(f"{lens} loss %", justify="right")
        table.add_column(f"{lens} RTT ms", justify="right")
    first = frames[lenses[0]]
    for flow in first.index:
        cells = []
        for lens in lenses:
            row = frames[lens].loc[flow]
            cells += [_cell(row.get("goodput_bps"), 1e-6), _cell(row.get("loss_ratio"), 100),
                      _cell(row.get("rtt_mean_s"), 1e3)]
        table.add_row(str(flow), *cells)
    return table


def _cell(value: Any, scale: float) -> str:
    return "" if value is None or value != value else f"{value * scale:.2f}"
