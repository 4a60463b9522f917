"""Sweeps and campaigns: one file describes a whole experiment; runs are stored once.

:mod:`~tcpn.experiments.sweep.spec` reads sweep files, :mod:`~tcpn.experiments.sweep.store`
keeps the runs, :mod:`~tcpn.experiments.sweep.campaign` runs what the store lacks on any
executor (:mod:`~tcpn.experiments.sweep.executors`: local processes or Dask), and
:mod:`~tcpn.experiments.sweep.results` loads the results as tidy tables. ``docs/sweeps.md``
shows it end to end.
"""

from tcpn.experiments.sweep.campaign import (
    EVALUATIONS,
    register_evaluation,
    run_campaign,
    run_summaries,
)
from tcpn.experiments.sweep.results import CampaignResults, load_results
from tcpn.experiments.sweep.spec import Sweep, SweepError, load_sweep, parse_sweep
from tcpn.experiments.sweep.store import CampaignStore

__all__ = ["EVALUATIONS", "CampaignResults", "CampaignStore", "Sweep", "SweepError",
           "load_results", "load_sweep", "parse_sweep", "register_evaluation",
           "run_campaign", "run_summaries"]
