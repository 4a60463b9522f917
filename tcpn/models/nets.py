"""The net a command line names: a scenario file's whole net, or a net file or Python
reference (:func:`tcpn.petrinets.exchange.loading.load_net`), for ``tcpn check``,
``tcpn simulate`` and ``tcpn inspect`` alike.

>>> named_net("scenarios/dumbbell_newreno.yaml").net.name
'dumbbell_newreno'
"""

from __future__ import annotations

from tcpn.models.topology import scenario_net
from tcpn.petrinets.exchange.cpn_import import ImportedNet
from tcpn.petrinets.exchange.loading import built_net, load_net

__all__ = ["named_net"]


def named_net(reference: str, *, python: bool = False, trusted: bool = False,
              seed: int | None = None) -> ImportedNet:
    """The net ``reference`` names: a scenario ``.yaml`` (its flows drawn from ``seed``,
    the scenario's own when None), a ``.cpn`` or ``.pnml`` file (data), or with
    ``python`` a ``package.module:function`` reference (its code runs)."""
    if not python and reference.lower().endswith((".yaml", ".yml")):
        return built_net(scenario_net(reference, seed), reference)
    return load_net(reference, python=python, trusted=trusted)
