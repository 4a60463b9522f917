"""Fluid (delay-differential) models of TCP, solved on a uniform grid with a history buffer.

- :mod:`~tcpn.solvers.fluid.dde`: the solver, its convergence and failure checks;
- :mod:`~tcpn.solvers.fluid.bottleneck`: flow classes (Reno mean-field or sawtooth,
  Vegas, mixed) through one drop-tail/RED/threshold queue, token buckets, random loss;
- :mod:`~tcpn.solvers.fluid.buffers`: the histories' memory, reused across runs.
"""
