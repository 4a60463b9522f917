"""Sweeps and campaigns: one file describes a whole experiment; runs are stored once.

:mod:`~tcpn.solvers.sweep.spec` reads sweep files, :mod:`~tcpn.solvers.sweep.store`
keeps the runs, :mod:`~tcpn.solvers.sweep.campaign` runs what the store lacks on any
executor (:mod:`~tcpn.solvers.sweep.executors`: local processes or Dask), and
:mod:`~tcpn.solvers.sweep.results` loads the results as tidy tables. ``docs/sweeps.md``
shows it end to end.
"""

from tcpn.solvers.sweep.campaign import (
    EVALUATIONS,
    register_evaluation,
    run_campaign,
    run_summaries,
)
from tcpn.solvers.sweep.results import CampaignResults, load_results
from tcpn.solvers.sweep.spec import Sweep, SweepError, load_sweep, parse_sweep
from tcpn.solvers.sweep.store import CampaignStore

__all__ = ["EVALUATIONS", "CampaignResults", "CampaignStore", "Sweep", "SweepError",
           "load_results", "load_sweep", "parse_sweep", "register_evaluation",
           "run_campaign", "run_summaries"]
