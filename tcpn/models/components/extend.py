"""Plug a variant's extra control state into a base sender net: arcs, wrapped laws, actions.

The delay-based and link-aware variants (:mod:`~tcpn.models.components.congestion.vegas`,
:mod:`~tcpn.models.components.congestion.westwood`,
:mod:`~tcpn.models.components.congestion.tcp_l`) are the
loss-based sender of :mod:`~tcpn.models.components.sender` (its Reno or NewReno recovery,
RTO and applications) plus a place of their own and a different window law on some of its
transitions. These functions make that change on the built module, by transition name,
without copying the base sender: the variant's law wraps the base law's output
expression, so a fix to the base sender reaches every variant.

>>> from tcpn.models.components.sender import SenderConfig, sender_net
>>> from tcpn.petrinets import INT, Place
>>> net = sender_net(SenderConfig(flow=0, dst=1, variant="reno"))
>>> net.add_place(Place("acked", INT, initial=[0]))
>>> track(net, "new_ack", "acked", "k", "k + a.ack - t.una")
>>> wrap_output(net, "new_ack", "tcb", "({base})._replace(ssthresh=t.ssthresh)")
>>> [a.inscription for a in net.arcs_of("new_ack") if a.place == "acked"]
['k', 'k + a.ack - t.una']
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from tcpn.errors import InputError
from tcpn.petrinets import PetriNet
from tcpn.petrinets.net import ArcKind

__all__ = ["add_action", "and_guard", "or_guard", "track", "wrap_output"]


def _transition(net: PetriNet, name: str) -> Any:
    try:
        return net.transitions[name]
    except KeyError:
        raise InputError(f"sender net {net.name}: no transition {name!r} to extend "
                         f"(transitions: {', '.join(sorted(net.transitions))})") from None


def wrap_output(net: PetriNet, transition: str, place: str, template: str) -> None:
    """Replace the output inscription ``transition -> place`` by ``template`` with
    ``{base}`` standing for the old inscription."""
    _transition(net, transition)
    arcs = [a for a in net.arcs if a.transition == transition and a.place == place
            and a.kind is ArcKind.OUTPUT]
    if len(arcs) != 1:
        raise InputError(f"sender net {net.name}: expected one output arc {transition}->"
                         f"{place}, found {len(arcs)}")
    index = net.arcs.index(arcs[0])
    net.arcs[index] = dataclasses.replace(
        arcs[0], inscription=template.format(base=arcs[0].inscription))


def track(net: PetriNet, transition: str, place: str, pattern: str, update: str) -> None:
    """Make ``transition`` consume the token ``pattern`` of ``place`` and put back ``update``."""
    _transition(net, transition)
    net.add_input(place, transition, pattern)
    net.add_output(place, transition, update)


def and_guard(net: PetriNet, transition: str, condition: str) -> None:
    """Strengthen the guard of ``transition`` with ``condition``."""
    t = _transition(net, transition)
    guard = condition if t.guard is None else f"({t.guard}) and ({condition})"
    net.transitions[transition] = dataclasses.replace(t, guard=guard)


def or_guard(net: PetriNet, transition: str, condition: str) -> None:
    """Weaken the guard of ``transition``: it is also enabled when ``condition`` holds."""
    t = _transition(net, transition)
    if t.guard is not None:
        net.transitions[transition] = dataclasses.replace(
            t, guard=f"({t.guard}) or ({condition})")


def add_action(net: PetriNet, transition: str, action: Callable[..., Mapping[str, Any]],
               outputs: tuple[str, ...]) -> None:
    """Run ``action`` after the transition's own code action (if any) at each firing.

    Both read their parameters from the binding; the outputs of the first are visible to
    the second under their names, and the outputs of both to the output arcs.
    """
    t = _transition(net, transition)
    first = t.action
    if first is None:
        net.transitions[transition] = dataclasses.replace(t, action=action, outputs=outputs)
        return
    first_params = tuple(inspect.signature(first).parameters)
    first_out = set(t.outputs)
    second_params = tuple(inspect.signature(action).parameters)
    params = list(dict.fromkeys(first_params + tuple(p for p in second_params
                                                     if p not in first_out)))

    def both(**kwargs: Any) -> dict[str, Any]:
        result = dict(first(**{k: kwargs[k] for k in first_params}))
        scope = {**kwargs, **result}
        result.update(action(**{k: scope[k] for k in second_params}))
        return result

    both.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in params])
    both.__name__ = f"{getattr(first, '__name__', 'action')}_then_" \
                    f"{getattr(action, '__name__', 'action')}"
    # the CPN Tools export runs the parts in turn, as 'both' does
    prior = getattr(first, "action_parts", None) or ((first, t.outputs),)
    both.action_parts = (*prior, (action, outputs))  # type: ignore[attr-defined]
    net.transitions[transition] = dataclasses.replace(t, action=both,
                                                      outputs=(*t.outputs, *outputs))
