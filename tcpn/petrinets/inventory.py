"""What a net holds, as tables: its places, transitions, modules and colour sets.

A formula names places and transitions (``tokens(R1.R2.buffer) >= 3``,
``fireable(flow0.timeout)``), a monitor names a place to average; a net imported from CPN
Tools or composed from a scenario has tens to hundreds of them. :func:`inventory` lists
them the way a user reads a net: each place with its colour set, whether it is timed, its
initial token count and its module; each transition with its guard, delay, priority and
module; each module instance with its ports; each colour set once.

>>> from tcpn.petrinets.examples import single_server_queue
>>> tables = inventory(single_server_queue(3, 1.0, 0.8))
>>> tables["places"][["place", "colour set", "initial tokens"]].to_dict("records")[0]
{'place': 'source', 'colour set': 'TINT', 'initial tokens': 1}
>>> sorted(tables)
['colour sets', 'modules', 'places', 'transitions']
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tcpn.petrinets.colours import ColourSet
from tcpn.petrinets.net import Arc, ArcKind, PetriNet

__all__ = ["inventory"]


def inventory(net: PetriNet) -> dict[str, pd.DataFrame]:
    """The net's ``places``, ``transitions``, ``modules`` and ``colour sets`` as tables
    (one row each, in the net's order)."""
    places = pd.DataFrame(
        [{"place": p.name, "colour set": _colour_name(p.colour),
          "timed": bool(getattr(p.colour, "is_timed", False)),
          "initial tokens": _initial_count(p.initial) if p.initial_draw is None
          else f"drawn: {p.initial_draw.text}", "module": p.module,
          "port": p.port or ""} for p in net.places.values()],
        columns=["place", "colour set", "timed", "initial tokens", "module", "port"])
    transitions = pd.DataFrame(
        [{"transition": t.name, "guard": t.guard or "", "delay": _text(t.delay),
          "priority": t.priority, "module": t.module,
          "inputs": ", ".join(_arc(a) for a in net.arcs_of(t.name)
                              if a.kind is not ArcKind.OUTPUT),
          "outputs": ", ".join(a.place for a in net.arcs_of(t.name)
                               if a.kind is ArcKind.OUTPUT)}
         for t in net.transitions.values()],
        columns=["transition", "guard", "delay", "priority", "module", "inputs", "outputs"])
    modules = pd.DataFrame(
        [{"instance": m.name, "module": m.module,
          "ports": ", ".join(f"{port}={place}" for port, place in m.ports)}
         for m in net.modules],
        columns=["instance", "module", "ports"])
    colours: dict[str, ColourSet] = {}
    for place in net.places.values():
        colours.setdefault(_colour_name(place.colour), place.colour)
    per_colour = places["colour set"].value_counts()
    colour_sets = pd.DataFrame(
        [{"colour set": name, "definition": _definition(colour),
          "places": int(per_colour[name])}
         for name, colour in colours.items()],
        columns=["colour set", "definition", "places"])
    return {"places": places, "transitions": transitions, "modules": modules,
            "colour sets": colour_sets}


def _colour_name(colour: ColourSet) -> str:
    return str(getattr(colour, "name", "") or type(colour).__name__)


def _definition(colour: ColourSet) -> str:
    """A colour set's structure in one line: record fields, product components, ranges."""
    fields = getattr(colour, "fields", None)
    if fields:
        return "{" + ", ".join(f"{name}: {_colour_name(c)}" for name, c in fields) + "}"
    components = getattr(colour, "components", None)
    if components:
        return " * ".join(_colour_name(c) for c in components)
    element = getattr(colour, "element", None)
    if element is not None:
        return f"list of {_colour_name(element)}"
    low, high = getattr(colour, "low", None), getattr(colour, "high", None)
    if low is not None or high is not None:
        return f"{'' if low is None else low}..{'' if high is None else high}"
    values = getattr(colour, "values", None)
    if isinstance(values, (tuple, list)) and values:
        return " | ".join(str(v) for v in values[:8]) + (" | ..." if len(values) > 8 else "")
    return type(colour).__name__


def _initial_count(initial: Any) -> int | str:
    """How many tokens a place starts with (a CPN ML expression evaluated at run time:
    its text)."""
    if isinstance(initial, str):
        return initial
    try:
        return sum(1 for _ in initial)
    except TypeError:
        return str(initial)


def _arc(arc: Arc) -> str:
    """An input-side arc's place, marked when it only tests (read, inhibitor, reset)."""
    return arc.place if arc.kind is ArcKind.INPUT else f"{arc.place} ({arc.kind.value})"


def _text(value: Any) -> str:
    return "" if value is None else str(value)
