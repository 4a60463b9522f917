"""The ns3 lens: tcpn scenarios run in ns-3.44 (the ``ns3`` extra), recorded in tcpn's
common trace schema.

Modules: :mod:`.lens` (:class:`Ns3Lens`, the scenario mapping), :mod:`.plan` (a simulation
in plain picklable terms), :mod:`.builder` (the plan in ns-3, run in a worker),
:mod:`.worker` (worker processes that survive ns-3 aborts), :mod:`.loader` (lean import of
ns-3 and tcpn's C++ sources in ``cpp/``). Importing this package does not import ns-3.
"""

from tcpn.lenses.ns3.lens import Ns3Lens, scenario_plan

__all__ = ["Ns3Lens", "scenario_plan"]
