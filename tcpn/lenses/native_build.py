"""The native engine's modules of scenarios' nets, built before their runs.

A run of the net lens on the default engine builds the modules its net needs that the
cache lacks (:func:`tcpn.petrinets.engine.native.select_engine`); a study or a sweep runs
tens of nets in worker processes, which would each wait for the others' builds in turn.
:func:`build_scenario_nets` builds the modules of all their nets first, in one parallel
build, so that every run finds its modules: ``tcpn build`` and the studies call it.

>>> from tcpn.models.scenario import load_scenario
>>> scenario = load_scenario("scenarios/dumbbell_newreno.yaml")
>>> [net.net.name for net in scenario_nets([scenario])]
['dumbbell_newreno']
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from tcpn.lenses.base import make_run
from tcpn.lenses.compiled_trace import compiled_trace_monitor
from tcpn.models.scenario import Scenario, validate_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import compile_net
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.engine.native import (
    SIMULATOR_DEFAULT,
    BuildSummary,
    NativeUnavailable,
    build_nets,
    resolve_engine,
)

__all__ = ["build_mappings", "build_scenario_nets", "scenario_nets"]


def scenario_nets(scenarios: Iterable[Scenario], seed: int | None = None
                  ) -> Iterator[CompiledNet]:
    """The compiled net the net lens runs for each scenario (its first replication of
    ``seed``, the scenario's by default; a replication whose drawn flows give a net of
    other code builds its few missing modules when it runs)."""
    for scenario in scenarios:
        yield compile_net(compose(scenario, make_run(scenario, seed).flows).net)


def build_scenario_nets(scenarios: Iterable[Scenario], what: str = "",
                        seed: int | None = None,
                        progress: Callable[[int, int], None] | None = None,
                        nets: Iterable[CompiledNet] = ()) -> BuildSummary:
    """Build the native modules the nets of ``scenarios`` need (see the module), and
    those of ``nets`` (a CPN Tools or PNML file's, say), in one build;
    ``progress(done, total)`` as modules are built; then, for scenarios, the net lens's
    compiled trace monitor (:mod:`tcpn.lenses.compiled_trace`), once per machine."""
    listed = list(scenarios)
    summary = build_nets(itertools.chain(scenario_nets(listed, seed), nets), what, progress)
    if summary.reason is None and listed:  # the lens's monitor: for scenarios' runs only
        compiled_trace_monitor()
    return summary


def build_mappings(mappings: Sequence[Mapping[str, Any]], seed: int, what: str,
                   progress: Callable[[int, int], None] | None = None) -> None:
    """The native modules of the net runs of scenario ``mappings`` (drawn from ``seed``)
    built before the runs, unless the engine is ``python``: a study's worker processes
    then find them, rather than wait for each other's builds (``progress(built, total)``
    as modules are built). A build that fails leaves the runs to say so (in Python)."""
    if not mappings or resolve_engine(None, SIMULATOR_DEFAULT) == "python":
        return
    unique = {repr(sorted(m.items())): m for m in mappings}
    with contextlib.suppress(NativeUnavailable):
        build_scenario_nets((validate_scenario(dict(m)) for m in unique.values()), what, seed,
                            progress)
