"""Timed coloured Petri nets: the language, CPN Tools timed semantics and the engines.

The language lives in this package's own modules: colour sets (``colours``), the net
(``net``: places, transitions, arcs, modules), inscriptions and the restricted evaluator
that checks every expression read from a file (``inscriptions``, ``restricted``,
``net_functions``), delay distributions, clock-valued fields (``timevalues``), errors and
example nets. Around it, one room per job:

* :mod:`~tcpn.petrinets.engine`: the compiler and the engines that run a net;
* :mod:`~tcpn.petrinets.statespace`: exploring every reachable marking;
* :mod:`~tcpn.petrinets.checking`: formulas and the model checker (CTL, LTL, fairness, the
  state-space report, the Model Checking Contest);
* :mod:`~tcpn.petrinets.exchange`: CPN Tools, PNML, CPN ML, SNAKES;
* :mod:`~tcpn.petrinets.drawing`: Graphviz drawings.

Inside, dependencies point one way: the language <- drawing; the language <- engine <-
statespace, exchange <- checking. This package re-exports the names most users need.

Must not import: anything in tcpn except tcpn.errors, tcpn.limits (bounds on what is read)
and tcpn.outputs (files written whole). This layer knows nothing of TCP.
"""

from tcpn.petrinets.checking.check import check
from tcpn.petrinets.colours import (
    BOOL,
    CLOCK,
    INT,
    REAL,
    STRING,
    UNIT,
    BoolSet,
    ClockSet,
    ColourSet,
    EnumSet,
    IntSet,
    ListSet,
    ProductSet,
    RealSet,
    RecordSet,
    StringSet,
    UnitSet,
)
from tcpn.petrinets.distributions import (
    Discrete,
    Distribution,
    Empirical,
    Exponential,
    Interval,
    TruncatedNormal,
    Uniform,
)
from tcpn.petrinets.engine.compiler import CompiledNet, compile_net
from tcpn.petrinets.engine.monitors import (
    DataCollector,
    EventLog,
    FiringCount,
    Monitor,
    TimeAverage,
)
from tcpn.petrinets.engine.result import SimulationResult
from tcpn.petrinets.engine.simulator import Firing, Simulator, independent_seeds, simulate
from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.net import (
    P_HIGH,
    P_LOW,
    P_NORMAL,
    Arc,
    ArcKind,
    PetriNet,
    Place,
    Token,
    Transition,
)
from tcpn.petrinets.statespace.space import StateSpace, explore

__all__ = [
    "BOOL", "CLOCK", "INT", "P_HIGH", "P_LOW", "P_NORMAL", "REAL", "STRING", "UNIT", "Arc",
    "ArcKind", "BoolSet", "ClockSet", "ColourSet", "CompiledNet", "DataCollector", "Discrete",
    "Distribution", "Empirical", "EnumSet", "EventLog", "Exponential", "Firing", "FiringCount",
    "FiringError", "IntSet", "Interval", "ListSet", "Monitor", "PetriNet", "Place",
    "ProductSet", "RealSet", "RecordSet", "SimulationResult", "Simulator", "StateSpace",
    "StringSet", "TimeAverage", "Token", "Transition", "TruncatedNormal", "Uniform", "UnitSet",
    "check", "compile_net", "explore", "independent_seeds", "simulate",
]
