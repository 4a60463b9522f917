"""Timed coloured Petri nets: the language, CPN Tools timed semantics and the engines.

Lives here: colour sets, places, transitions, arcs and modules; the compiled simulator;
the state-space explorer; the model checker (formulas, CTL, LTL, fairness, the state-space
report, the Model Checking Contest's examinations); exchange formats (CPN Tools, PNML,
DOT); SNAKES interoperability.

Must not import: anything in tcpn except tcpn.errors, tcpn.limits (bounds on what is read)
and tcpn.outputs (files written whole). This layer knows nothing of TCP.
"""

from tcpn.petrinets.checking import check
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
from tcpn.petrinets.compiler import CompiledNet, compile_net
from tcpn.petrinets.distributions import (
    Discrete,
    Distribution,
    Empirical,
    Exponential,
    Interval,
    TruncatedNormal,
    Uniform,
)
from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.monitors import DataCollector, EventLog, FiringCount, Monitor, TimeAverage
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
from tcpn.petrinets.result import SimulationResult
from tcpn.petrinets.simulator import Firing, Simulator, independent_seeds, simulate
from tcpn.petrinets.statespace import StateSpace, explore

__all__ = [
    "BOOL", "CLOCK", "INT", "P_HIGH", "P_LOW", "P_NORMAL", "REAL", "STRING", "UNIT", "Arc",
    "ArcKind", "BoolSet", "ClockSet", "ColourSet", "CompiledNet", "DataCollector", "Discrete",
    "Distribution", "Empirical", "EnumSet", "EventLog", "Exponential", "Firing", "FiringCount",
    "FiringError", "IntSet", "Interval", "ListSet", "Monitor", "PetriNet", "Place",
    "ProductSet", "RealSet", "RecordSet", "SimulationResult", "Simulator", "StateSpace",
    "StringSet", "TimeAverage", "Token", "Transition", "TruncatedNormal", "Uniform", "UnitSet",
    "check", "compile_net", "explore", "independent_seeds", "simulate",
]
