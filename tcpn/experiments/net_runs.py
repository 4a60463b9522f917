"""Replications of any net (a CPN Tools or PNML file, a scenario's net, a Python net): what
``tcpn simulate`` runs.

Each replication is one run of the simulator from the net's initial marking, seeded
``SeedSequence(seed, spawn_key=(replication,))`` as the lenses seed theirs, until the
horizon ``until_s`` (model time), ``max_firings`` or a dead marking. A run gives one row:
why it stopped, its clock, its firings, each transition's firing count (``fired:T``), the
final token count of each place (``tokens:P``) and, for each place asked for, the
time-weighted average of its token count (``average:P``, a CPN Tools data-collector
monitor of the marking size). :func:`summary_frame` turns the rows into mean, 95 %
Student-t interval and n per column, with the stop reasons counted.

>>> from tcpn.petrinets.examples import single_server_queue
>>> runs = simulate_net(single_server_queue(5, 1.0, 0.8), until_s=50.0, replications=3,
...                     averages=("queue",))
>>> list(runs["replication"]), sorted({"fired:arrive", "average:queue"} & set(runs))
([0, 1, 2], ['average:queue', 'fired:arrive'])
>>> again = simulate_net(single_server_queue(5, 1.0, 0.8), until_s=50.0, replications=3,
...                      averages=("queue",))
>>> runs.drop(columns="wall_s").equals(again.drop(columns="wall_s"))  # the same seed
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcpn.errors import InputError
from tcpn.lenses.replications import mean_ci
from tcpn.petrinets.engine.monitors import EventLog, Monitor, TimeAverage
from tcpn.petrinets.engine.simulator import Simulator
from tcpn.petrinets.net import PetriNet

__all__ = ["RUN_COLUMNS", "simulate_net", "summary_frame"]

#: the columns every run has, before its per-transition and per-place columns
RUN_COLUMNS = ("replication", "stop_reason", "final_time", "firings", "wall_s")

Progress = Callable[[int, float], None]
"""Called as runs go: ``progress(replication, model_time)``."""


def simulate_net(net: PetriNet, *, until_s: float | None = None,
                 max_firings: int | None = None, replications: int = 1, seed: int = 1,
                 averages: Sequence[str] = (), events: str | Path | None = None,
                 overwrite: bool = False, engine: str | None = None,
                 progress: Progress | None = None) -> pd.DataFrame:
    """One row per replication of ``net`` (see the module docstring).

    ``events`` writes every firing of the run (one replication only) to a ``.csv``,
    ``.jsonl`` or ``.parquet`` file as it happens, so that long runs keep memory flat.
    A run needs an end: ``until_s`` or ``max_firings`` (a dead marking ends it sooner).
    """
    if until_s is None and max_firings is None:
        raise InputError("give a horizon (--until, model time) or --max-firings: a timed "
                         "net may never reach a dead marking")
    if until_s is not None and (not math.isfinite(until_s) or until_s <= 0):
        raise InputError(f"--until must be a positive finite model time, got {until_s!r}")
    if replications < 1:
        raise InputError(f"--replications must be 1 or more, got {replications}")
    if events is not None and replications != 1:
        raise InputError("--events logs every firing of one run: use it with "
                         "--replications 1")
    unknown = [name for name in averages if name not in net.places]
    if unknown:
        raise InputError(f"--average: net {net.name} has no place {unknown[0]!r} "
                         f"({_near(unknown[0], net.places)})")
    rows = []
    for replication in range(replications):
        monitors: list[Monitor] = [TimeAverage(place=name, name=f"average:{name}")
                                   for name in averages]
        if events is not None:
            monitors.append(EventLog(events, overwrite=overwrite))
        # the command's firings are bounded when --max-firings is given: auto weighs
        # building the native modules against running them in Python
        sim = Simulator(net, seed=np.random.SeedSequence(seed, spawn_key=(replication,)),
                        monitors=monitors, engine=engine,
                        firings=None if max_firings is None else max_firings * replications)
        tick = None if progress is None else (
            lambda s, r=replication: progress(r, s.now))
        result = sim.run(until=until_s, max_firings=max_firings, progress=tick)
        row: dict[str, Any] = {
            "replication": replication, "stop_reason": result.stop_reason,
            "final_time": result.final_time, "firings": result.firings,
            "wall_s": result.metadata.get("wall_time_s", math.nan)}
        row |= {f"fired:{name}": count for name, count in result.firing_counts.items()}
        row |= {f"tokens:{name}": len(tokens) for name, tokens in result.marking.items()}
        row |= {f"average:{name}": result.monitors[f"average:{name}"]["average"]
                for name in averages}
        rows.append(row)
    return pd.DataFrame(rows)


def summary_frame(runs: pd.DataFrame) -> pd.DataFrame:
    """Per numeric column of ``runs`` (but the replication index and wall time): mean,
    95 % Student-t half-width (NaN from one run, and where every run gave the same
    value: ``identical``, a deterministic number, not an interval of width 0) and n.

    >>> runs = pd.DataFrame({"replication": [0, 1, 2], "firings": [10, 12, 14],
    ...                      "final_time": [5.0] * 3,
    ...                      "stop_reason": ["horizon"] * 3, "wall_s": [0.1] * 3})
    >>> summary_frame(runs).to_dict("records")[0]
    {'column': 'firings', 'mean': 12.0, 'half_width': 4.9683, 'n': 3, 'identical': False}
    >>> summary_frame(runs).to_dict("records")[1]
    {'column': 'final_time', 'mean': 5.0, 'half_width': nan, 'n': 3, 'identical': True}
    """
    out = []
    for column in runs.columns:
        if column in ("replication", "wall_s", "stop_reason"):
            continue
        values = [float(v) for v in runs[column]]
        finite = [v for v in values if math.isfinite(v)]
        identical = len(finite) > 1 and min(finite) == max(finite)
        mean, half = mean_ci(values)
        out.append({"column": column, "mean": mean,
                    "half_width": math.nan if identical else round(half, 4),
                    "n": len(finite), "identical": identical})
    return pd.DataFrame(out, columns=["column", "mean", "half_width", "n", "identical"])


def _near(name: str, known: Any) -> str:
    """The known names closest to ``name``, for an error message."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=3)
    return f"did you mean {', '.join(close)}?" if close else \
        "tcpn inspect NET lists the places"
