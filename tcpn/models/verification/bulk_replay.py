"""Replaying a path of a bulk sender's space in the simulator, in absolute numbers and time.

A bulk space (:mod:`tcpn.models.verification.bulk`) keeps every state canonical: times
relative to its clock, sequence numbers and queue positions relative to their smallest live
value, ``cwnd`` capped at the receive window, the RTT estimator rounded. Its paths'
bindings are therefore in relative terms and do not fire as they are.
:func:`replay_bulk` fires such a path in the :class:`~tcpn.petrinets.Simulator` on the
verification net itself (its loss choices are transitions there), from its initial marking
and without any of the reductions except the one abstraction, the rounded RTT estimator
(the outputs to ``flowI.snd.rtt`` are rounded as the space rounds them). At each step it
takes the simulator's binding of the step's transition that, made relative the way the
explorer makes a state canonical (clock values moved by ``-now``, each offset group's
numbers by minus its base, then the groups' normalisations), is the path's binding up to
float noise. A step with no such binding is an :class:`~tcpn.errors.InputError` naming it:
the path is then not a run of the unreduced net, which would be a fault of the reductions.
The firings returned carry absolute sequence numbers and times.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from copy import copy
from dataclasses import replace
from typing import Any

from tcpn.errors import InputError
from tcpn.models.verification.choices import ADDED_VARS
from tcpn.petrinets import Firing, PetriNet, Simulator
from tcpn.petrinets.net import ArcKind
from tcpn.petrinets.statespace.offsets import OffsetField, OffsetGroup
from tcpn.petrinets.statespace.space import TIME_DECIMALS
from tcpn.petrinets.timevalues import alike, binding_shifts, shifted_binding

__all__ = ["replay_bulk"]


def _rounded(net: PetriNet, groups: Sequence[OffsetGroup]) -> PetriNet:
    """A copy of ``net`` whose outputs to each ``*.snd.rtt`` place go through that place's
    normalisation (the RTT rounding the space applies to every state)."""
    out = copy(net)
    out.declarations = dict(net.declarations)
    out.arcs = list(net.arcs)
    for group in groups:
        for place, f in group.fields.items():
            if not place.endswith(".snd.rtt") or f.normal is None:
                continue
            name = "_rtt_rounded_" + place.replace(".", "_")
            out.declarations[name] = f.normal
            out.arcs = [replace(a, inscription=f"{name}({a.inscription})")
                        if a.kind is ArcKind.OUTPUT and a.place == place else a
                        for a in out.arcs]
    return out


def _bases(sim: Simulator, groups: Sequence[OffsetGroup]) -> list[int | None]:
    """Each group's base in the simulator's marking (``None``: its anchor is empty, the
    numbers are left absolute)."""
    bases: list[int | None] = []
    for group in groups:
        if group.anchor is not None and not sim.tokens(group.anchor):
            bases.append(None)
            continue
        numbers = [n for place, f in group.fields.items() for token in sim.tokens(place)
                   for n in f.numbers(token.value)]
        bases.append(min(numbers) if numbers else 0)
    return bases


def _names(inscription: str) -> tuple[str, ...] | None:
    """The variables of an input inscription ``x`` or ``(x, y, ...)`` (else ``None``)."""
    try:
        tree = ast.parse(inscription, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(tree, ast.Name):
        return (tree.id,)
    if isinstance(tree, ast.Tuple) and all(isinstance(e, ast.Name) for e in tree.elts):
        return tuple(e.id for e in tree.elts)  # type: ignore[attr-defined]
    return None


def _relative(net: PetriNet, transition: str, binding: Mapping[str, Any],
              groups: Sequence[OffsetGroup], bases: Sequence[int | None]) -> dict[str, Any]:
    """``binding`` (the simulator's, clock values already relative) with each value an
    input arc takes from a group's place moved and normalised as the explorer does."""
    out = dict(binding)
    #: (group, variable) moved: a variable two arcs share (a queue's head) moves once
    moved: set[tuple[int, str]] = set()
    for arc in net.arcs_of(transition):
        if arc.kind is ArcKind.OUTPUT or not isinstance(arc.inscription, str):
            continue
        names = _names(arc.inscription)
        if names is None or not all(n in out for n in names):
            continue
        for g, (group, base) in enumerate(zip(groups, bases, strict=True)):
            f: OffsetField | None = group.fields.get(arc.place)
            if f is None or base is None or any((g, n) in moved for n in names):
                continue
            value = out[names[0]] if len(names) == 1 else tuple(out[n] for n in names)
            value = f.shift(value, -base)
            if f.normal is not None:
                value = f.normal(value)
            out.update({names[0]: value} if len(names) == 1 else dict(zip(names, value,
                                                                          strict=True)))
            moved.update((g, n) for n in names)
    return out


def replay_bulk(net: PetriNet, groups: Sequence[OffsetGroup],
                path: Sequence[tuple[str, Mapping[str, Any]]],
                ignore: Sequence[str] = ()) -> list[Firing]:
    """Fire ``path`` (a bulk space's steps, relative) in the simulator on ``net`` (the bulk
    verification net whose offset ``groups`` made the space), as the module docstring
    says; variables named in ``ignore`` (or added by the explorer's choices) are not
    compared. Returns the simulator's firings (absolute)."""
    sim = Simulator(_rounded(net, groups), seed=0)
    skip = {*ADDED_VARS, *ignore}
    firings = []
    for step, (transition, wanted) in enumerate(path):
        shifts = binding_shifts(sim.compiled.net, transition, TIME_DECIMALS)
        bases = _bases(sim, groups)
        chosen = None
        for name, candidate in sim.enabled():
            if name != transition:
                continue
            seen = _relative(net, transition, shifted_binding(candidate, shifts, -sim.now),
                             groups, bases)
            if all(alike(seen.get(k), v) for k, v in wanted.items() if k not in skip):
                chosen = candidate
                break
        if chosen is None:
            raise InputError(f"bulk replay step {step} ({transition}) at {sim.now:g} s: the "
                             "simulator has no binding that is the path's once made relative")
        firings.append(sim.fire(transition, chosen))
    return firings
