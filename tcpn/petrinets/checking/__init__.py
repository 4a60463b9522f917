"""The model checker: formulas, their text, and the algorithms that decide them.

Lives here: the front door :func:`~tcpn.petrinets.checking.check.check` (on the fly or
global), formulas as data (:mod:`~tcpn.petrinets.checking.formulas`) and their text grammar
(:mod:`~tcpn.petrinets.checking.text`), atoms evaluated over a whole space, verdicts and
their evidence, CTL by fixpoints, fairness, LTL (Büchi automata, the product, rewriting),
CTL on place/transition spaces as arrays, stubborn-set reduction, CPN Tools' ASK-CTL, the
standard state-space report, timed properties, and the Model Checking Contest
(:mod:`~tcpn.petrinets.checking.contest`).

A new logic or a new checking algorithm goes here (its formulas in ``formulas``, its text in
``text``, its decision procedure in a module of its own called from ``check``).

May import: the net language, the engines, the state space, exchange (the contest reads
PNML) and the ground floor. Must not import: anything of TCP.
"""
