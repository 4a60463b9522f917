"""What a state space can explore: nets whose firings are deterministic (and, in relative
time, independent of the absolute clock).

:func:`check_explorable` is asked before any exploration (the explicit space, the
stubborn-set reduction) and refuses, naming the transition, arc or guard at fault, what
would make a state's successors random or clock-dependent: delays drawn from a
distribution, code actions or inscriptions that draw at random, guards that read the
clock (only the simulator tests them again as the clock advances), and in relative time
any read of ``now`` that does not flow into a CLOCK value.
"""

from __future__ import annotations

from typing import Any

from tcpn.errors import InputError
from tcpn.petrinets.distributions import Distribution
from tcpn.petrinets.inscriptions import RANDOM_FUNCTIONS, Inscription
from tcpn.petrinets.net import PetriNet
from tcpn.petrinets.timevalues import clock_reads

__all__ = ["check_explorable"]


def check_explorable(net: PetriNet, clock: str, clock_values: bool = False) -> None:
    """Refuse what makes successors random (or, in relative time, clock-dependent)."""
    relative = clock == "relative" and net.is_timed
    for name, t in net.transitions.items():
        where = f"transition {name}"
        declared = set(net.scope_of(name))
        if isinstance(t.delay, Distribution):
            raise InputError(
                f"delay of {where}: {t.delay!r} is drawn at random; a state space needs "
                "deterministic delays (a number or an expression of the binding), or "
                "explore(..., delay_points=m) to choose among the points of a bounded one"
            )
        if "rng" in t.action_inputs:
            raise InputError(
                f"code action of {where} draws from 'rng'; a state space needs "
                "deterministic firings"
            )
        if isinstance(t.guard, str) and "now" not in declared \
                and "now" in Inscription.parse(t.guard, f"guard of {where}").names:
            raise InputError(
                f"guard of {where}: {t.guard!r} reads the clock (now, CPN ML's time()); "
                "only the simulator tests such a guard again as the clock advances, a "
                "state space does not"
                + (" (and a relative one holds no absolute time)" if relative else "")
                + ": model the timer with a timed token to explore it"
            )
        texts: list[tuple[str, Any]] = [(f"delay of {where}", t.delay)]
        for arc in net.arcs_of(name):
            if isinstance(arc.delay, Distribution):
                raise InputError(
                    f"delay of {arc.where}: {arc.delay!r} is drawn at random; a state space "
                    "needs deterministic delays, or explore(..., delay_points=m) to choose "
                    "among the points of a bounded one"
                )
            texts += [(arc.where, arc.inscription), (f"condition of {arc.where}", arc.when),
                      (f"count of {arc.where}", arc.count), (f"delay of {arc.where}", arc.delay)]
        for what, text in texts:
            if not isinstance(text, str):
                continue
            names = Inscription.parse(text, what).names
            drawn = sorted((names & RANDOM_FUNCTIONS) - declared)
            if drawn:
                raise InputError(
                    f"{what}: {text!r} calls the random function {drawn[0]!r}; a state space "
                    "needs deterministic firings"
                )
    if relative:
        for what, why in clock_reads(net, clock_values):
            raise InputError(
                f"{what} reads 'now' ({why}): relative timed state spaces keep no absolute "
                "time; 'now' may only flow into CLOCK values (docs/statespace.md); use "
                "explore(..., clock='absolute')"
            )
