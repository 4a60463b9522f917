"""tcpn: timed coloured Petri nets, fluid models and ns-3 cross-validation for TCP.

Layers, with dependencies pointing one way only::

    petrinets  <-  models  <-  solvers, validation  <-  reports  (cli.py on top)
"""

__version__ = "0.1.0"
