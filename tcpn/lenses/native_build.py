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

from collections.abc import Callable, Iterable, Iterator

from tcpn.lenses.base import make_run
from tcpn.models.scenario import Scenario
from tcpn.models.topology import compose
from tcpn.petrinets import compile_net
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.engine.native import BuildSummary, build_nets

__all__ = ["build_scenario_nets", "scenario_nets"]


def scenario_nets(scenarios: Iterable[Scenario], seed: int | None = None
                  ) -> Iterator[CompiledNet]:
    """The compiled net the net lens runs for each scenario (its first replication of
    ``seed``, the scenario's by default; a replication whose drawn flows give a net of
    other code builds its few missing modules when it runs)."""
    for scenario in scenarios:
        yield compile_net(compose(scenario, make_run(scenario, seed).flows).net)


def build_scenario_nets(scenarios: Iterable[Scenario], what: str = "",
                        seed: int | None = None,
                        progress: Callable[[int, int], None] | None = None) -> BuildSummary:
    """Build the native modules the nets of ``scenarios`` need (see the module);
    ``progress(done, total)`` as modules are built."""
    return build_nets(scenario_nets(scenarios, seed), what, progress)
