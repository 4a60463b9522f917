"""Experiments on top of the engines: replications, sweeps, fluid and closed-form models.

Lives here: replications with confidence intervals, parameter sweeps, fluid DDE/ODE
models, closed forms (SymPy) and threshold optimisation.

May import: tcpn.petrinets, tcpn.models. Must not import: tcpn.reports, tcpn.cli.
"""
