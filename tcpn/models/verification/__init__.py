"""Verification mode: a scenario's net with losses as bounded choices, for the explorer.

:func:`verification_net` composes the simulator's net of a scenario (the same components,
:func:`~tcpn.models.topology.compose`) for a *finite* transfer of ``segments`` segments per
connection, and turns the network's losses into nondeterministic choices bounded by a
:class:`LossBudget`: beside every transmission transition ``A.B.transmit`` (which delivers)
stands a twin ``A.B.transmit_lost`` with the same inputs and the same serialisation that
puts the packet nowhere; it may fire only while the budget place ``losses`` has a loss of
the packet's kind left. The net's transitions are the simulator's plus these choices; the
explorer (:func:`tcpn.petrinets.explore`) then covers every loss pattern within the budget
and every order of simultaneous events. Scripted loss lists (``errors: {kind: list}``) stay
scripted; random error models (``kind: rate``) become choices; so do RED's early verdict
(``decide_early``), TCP-L's reaction to a loss (``..._react``) and a uniformly random start
time (one of ``start_points`` times); what cannot be turned into a choice yet is refused
with an :class:`~tcpn.errors.InputError` naming it. :meth:`VerificationNet.replay` fires a
path of the space in the simulator's own net with its choices forced.

Modules: :mod:`~tcpn.models.verification.budget` (the loss budget),
:mod:`~tcpn.models.verification.choices` (the transitions added to the simulator's),
:mod:`~tcpn.models.verification.net` (the net, its roles, replay).

Time: every delay of a drop-tail scenario is deterministic and stays exact. The senders
keep absolute times (timestamps on packets, the RTT estimator's samples ``now - echo``),
declared as ``CLOCK`` values, so the net is explored with ``clock="absolute"`` (the
default, CPN Tools' timed state space) or ``clock="relative"`` (those times kept relative
to each state's clock; the same verdicts): either way the space closes because the
transfer is finite and the budget bounded (``docs/statespace.md``, "Verification nets",
says what a verdict covers).

>>> from tcpn.models.scenario import validate_scenario
>>> s = validate_scenario({"name": "p2p", "horizon_s": 10.0,
...     "links": [{"a": "A", "b": "B", "rate_bps": 8e6, "delay_s": 0.01}],
...     "flows": [{"src": "A", "dst": "B", "variant": "reno"}],
...     "tcp": {"handshake": False, "initial_cwnd_segments": 2}})
>>> v = verification_net(s, segments=2, losses=LossBudget(data_losses=1))
>>> v.choices
('A.B.transmit_lost', 'A.B.direct_lost', 'B.A.transmit_lost', 'B.A.direct_lost')
>>> space = v.explore()
>>> space.complete, len(space.dead_markings())
(True, 3)
"""

from tcpn.models.verification.budget import BUDGET_PLACE, LossBudget
from tcpn.models.verification.choices import (
    EARLY_SUFFIX,
    LOSS_SUFFIX,
    REACT_SUFFIX,
    UNOPENED_SUFFIX,
)
from tcpn.models.verification.net import Role, VerificationNet, verification_net

__all__ = ["BUDGET_PLACE", "EARLY_SUFFIX", "LOSS_SUFFIX", "REACT_SUFFIX", "UNOPENED_SUFFIX",
           "LossBudget", "Role", "VerificationNet", "verification_net"]
