"""Experiments over many runs: sweeps and campaigns, parameter optimisation, lens comparison.

Lives here: sweep files, their content-keyed store and executors (local processes or Dask)
(:mod:`~tcpn.experiments.sweep`), the search for the best value of one scenario parameter
(:mod:`~tcpn.experiments.optimize`), and the cross-validation of lenses metric by metric
(:mod:`~tcpn.experiments.compare`).

A new kind of experiment (a design over scenarios, a search) goes here; its report goes in
:mod:`tcpn.reports`.

May import: tcpn.lenses, tcpn.models, tcpn.petrinets, tcpn.solvers and the ground floor.
Must not import: tcpn.reports, tcpn.cli.
"""
