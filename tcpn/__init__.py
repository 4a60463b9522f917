"""tcpn: timed coloured Petri nets, fluid models and ns-3 cross-validation for TCP.

Layers, with dependencies pointing one way only (``tests/test_layers.py`` reads the real
imports; ``docs/layout.md`` is the map)::

    errors limits outputs source workers          ground floor, imported by all
    solvers                                       pure mathematics, imports no other layer
    petrinets  <-  models  <-  lenses  <-  experiments  <-  reports  <-  cli.py
"""

__version__ = "0.1.0"
