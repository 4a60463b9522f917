"""The lenses: one scenario evaluated by the net, the fluid model or ns-3, one result schema.

Lives here: the front door :func:`evaluate` (above its lenses, as ``solve_ivp`` is above
its methods), the lens protocol and runs (:mod:`~tcpn.lenses.base`), the registry of lenses
by name (:mod:`~tcpn.lenses.registry`), one run of one lens summarised by the one metrics
module (:mod:`~tcpn.lenses.run`; :func:`streamed_run`, its trace in a temporary directory
while the caller reads it), independent replications with confidence intervals
(:mod:`~tcpn.lenses.replications`), and the lenses themselves: :mod:`~tcpn.lenses.net`
(the timed coloured Petri net), :mod:`~tcpn.lenses.fluid` (the fluid model of
:mod:`tcpn.solvers.fluid`), :mod:`~tcpn.lenses.ns3` (ns-3.44).

A new lens goes here, as one module (or package) whose class implements
:class:`~tcpn.lenses.base.Lens`, named in :mod:`~tcpn.lenses.registry`.

May import: tcpn.models, tcpn.petrinets, tcpn.solvers and the ground floor.
Must not import: tcpn.experiments, tcpn.reports, tcpn.cli.
"""

from tcpn.lenses.base import Lens, LensError, Progress, Run, make_run, run_seeds
from tcpn.lenses.evaluation import evaluate
from tcpn.lenses.registry import get_lens, lens_names, register_lens
from tcpn.lenses.replications import ReplicationResult, replicate
from tcpn.lenses.run import run_once, streamed_run

__all__ = ["Lens", "LensError", "Progress", "ReplicationResult", "Run", "evaluate", "get_lens",
           "lens_names", "make_run", "register_lens", "replicate", "run_once", "run_seeds",
           "streamed_run"]
