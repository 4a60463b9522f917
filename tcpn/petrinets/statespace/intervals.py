"""Random delays as choices for the explorer: a bounded delay becomes one transition per point.

The simulator draws a random delay (a :class:`~tcpn.petrinets.distributions.Distribution`
on a transition or an output arc) when the transition fires. A state space cannot draw, but
it can cover the delays that *can* happen: :func:`discretise_delays` replaces each such
transition by one copy per combination of its delays' points, each with fixed delays, so
that ``explore(net, delay_points=m)`` explores every ordering those points produce
(CPN Tools 4's time intervals, ``@+[a,b]``, are explored the same way over their integers).

The points of a delay (:func:`delay_points`): ``m`` equally spaced points of a
:class:`~tcpn.petrinets.distributions.Uniform` or
:class:`~tcpn.petrinets.distributions.Interval` ``[a, b]``, both ends always among them
(``m >= 2``; one point when ``a == b``); every value of a
:class:`~tcpn.petrinets.distributions.Discrete` or
:class:`~tcpn.petrinets.distributions.Empirical` (a finite support: all of it, whatever
``m``). A distribution with unbounded support (``Exponential``, ``TruncatedNormal``) is
refused, naming the transition: no finite set of points covers it; bound it (a ``Uniform``
or a ``Discrete``) to explore it. What a discretised interval covers is the points, not
the times between them.

The copy of transition ``t`` for its ``k``-th combination is named ``t'k``; the returned
:class:`DelayChoice` of each copy gives the original transition, the delays it fixes and
the uniform draws (:meth:`DelayChoice.draws`) that make the simulator draw them, so a path
of the space replays in the simulator with ``Simulator(net, forced_draws=...)``.

>>> from tcpn.petrinets import INT, PetriNet, Place, Transition, Uniform, explore
>>> net = PetriNet("jitter")
>>> net.add_place(Place("p", INT.timed(), initial=[0]))
>>> net.add_place(Place("q", INT.timed()))
>>> net.add_transition(Transition("send", delay=Uniform(1.0, 3.0)))
>>> net.add_input("p", "send", "x")
>>> net.add_output("q", "send", "x")
>>> discretised, choices = discretise_delays(net, 3)
>>> {name: c.delays for name, c in choices.items()}
{"send'0": (1.0,), "send'1": (2.0,), "send'2": (3.0,)}
>>> space = explore(net, delay_points=3, clock="absolute")
>>> sorted(space.marking(s)["q"][0].time for s in space.dead_markings())
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass, replace

from tcpn.petrinets.distributions import Discrete, Distribution, Empirical, Interval, Uniform
from tcpn.petrinets.errors import InputError
from tcpn.petrinets.net import ArcKind, PetriNet

__all__ = ["DelayChoice", "delay_points", "discretise_delays", "draw_for"]

#: Decimals the points are rounded to (as the relative clock rounds timestamps).
POINT_DECIMALS = 9


@dataclass(frozen=True)
class DelayChoice:
    """One copy of a transition with random delays: the ``original`` transition and the
    delays it fixes, in the order the simulator draws them (the transition's own delay,
    then its output arcs' in the order they were added), with their ``distributions``."""

    original: str
    delays: tuple[float, ...]
    distributions: tuple[Distribution, ...]

    def draws(self) -> list[float]:
        """The uniform draws that make the simulator draw these delays (an output arc
        whose condition is false draws no delay: these assume each of them puts its token,
        as every arc without a condition does)."""
        return [u for d, x in zip(self.distributions, self.delays, strict=True)
                for u in draw_for(d, x)]


def delay_points(distribution: Distribution, points: int, where: str) -> tuple[float, ...]:
    """The delays a random delay is explored at (see the module docstring); ``where``
    names the element in the error of an unbounded one."""
    if isinstance(distribution, Uniform | Interval):
        low, high = float(distribution.low), float(distribution.high)
        if low == high:
            return (low,)
        if isinstance(points, bool) or not isinstance(points, int) or points < 2:
            raise InputError(f"delay_points must be a whole number >= 2 (the interval's two "
                             f"ends and the points between), got {points!r}")
        if isinstance(distribution, Interval) and distribution.integer:
            step = max(1, math.ceil((high - low) / (points - 1)))
            return tuple(sorted({*(float(low + j * step) for j in range(points)
                                   if low + j * step < high), high}))
        return tuple(sorted({round(low + j * (high - low) / (points - 1), POINT_DECIMALS)
                             for j in range(points)}))
    if isinstance(distribution, Discrete):
        return tuple(sorted(set(map(float, distribution.values))))
    if isinstance(distribution, Empirical):
        return tuple(sorted(set(distribution.samples)))
    raise InputError(f"{where}: {distribution!r} has unbounded support; no finite set of "
                     "points covers it. Bound it (Uniform(a, b), Interval(a, b) or "
                     "Discrete([...])) to explore its delays")


def draw_for(distribution: Distribution, delay: float) -> list[float]:
    """The uniform draws (in ``[0, 1]``) with which ``distribution.sample`` returns
    ``delay`` (:class:`~tcpn.petrinets.engine.forced.ForcedDraws` inverts them).

    >>> draw_for(Uniform(1.0, 3.0), 3.0), draw_for(Discrete([5.0, 7.0]), 7.0)
    ([1.0], [0.75])
    """
    if isinstance(distribution, Uniform | Interval):
        span = distribution.high - distribution.low
        return [0.0 if span == 0 else (delay - distribution.low) / span]
    if isinstance(distribution, Discrete):
        total = sum(distribution.weights)
        index = distribution.values.index(delay)
        before = sum(distribution.weights[:index])
        return [(before + distribution.weights[index] / 2) / total]
    if isinstance(distribution, Empirical):
        index = distribution.samples.index(delay)
        return [(index + 0.5) / len(distribution.samples)]
    raise InputError(f"{distribution!r}: no finite set of draws stands for its delays")


def discretise_delays(net: PetriNet, points: int) -> tuple[PetriNet, dict[str, DelayChoice]]:
    """``net`` with every transition whose delays are random replaced by one copy per
    combination of its delays' points (see the module docstring); ``net`` itself is left
    unchanged. Returns the new net and each copy's :class:`DelayChoice` (empty, and
    ``net`` itself, when no delay is random)."""
    random_delays = {name: _random_delays(net, name) for name in net.transitions}
    random_delays = {name: found for name, found in random_delays.items() if found}
    if not random_delays:
        return net, {}
    out = copy.copy(net)
    out.places, out.declarations = dict(net.places), dict(net.declarations)
    out.modules = list(net.modules)
    out.transitions = {}
    out.arcs = [arc for arc in net.arcs if arc.transition not in random_delays]
    choices: dict[str, DelayChoice] = {}
    for name, transition in net.transitions.items():
        found = random_delays.get(name)
        if found is None:
            out.transitions[name] = transition
            continue
        supports = [delay_points(d, points, where) for _key, where, d in found]
        for k, combination in enumerate(itertools.product(*supports)):
            twin = f"{name}'{k}"
            fixed = dict(zip((key for key, _w, _d in found), combination, strict=True))
            delay = fixed.get("transition", transition.delay)
            out.add_transition(replace(transition, name=twin, delay=delay))
            for i, arc in enumerate(net.arcs_of(name)):
                arc_delay = fixed.get(f"arc {i}", arc.delay)
                out.arcs.append(replace(arc, transition=twin, delay=arc_delay))
            choices[twin] = DelayChoice(name, tuple(combination),
                                        tuple(d for _k, _w, d in found))
    return out, choices


def _random_delays(net: PetriNet, name: str) -> list[tuple[str, str, Distribution]]:
    """The random delays of transition ``name`` as ``(key, where, distribution)``, keyed
    ``"transition"`` or ``"arc i"`` (``i`` its position among the transition's arcs), in
    the order the simulator draws them."""
    found: list[tuple[str, str, Distribution]] = []
    delay = net.transitions[name].delay
    if isinstance(delay, Distribution):
        found.append(("transition", f"delay of transition {name}", delay))
    for i, arc in enumerate(net.arcs_of(name)):
        if arc.kind is ArcKind.OUTPUT and isinstance(arc.delay, Distribution):
            found.append((f"arc {i}", f"delay of {arc.where}", arc.delay))
    return found

