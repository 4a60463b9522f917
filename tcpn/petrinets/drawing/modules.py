"""Draw a composed net by its modules: each module instance a box, each shared place an arc.

A scenario's whole net has hundreds of places and arcs (the one-pair dumbbell draws as
about 4900 x 4500 pt with :func:`~tcpn.petrinets.drawing.dot.to_svg`). :func:`module_view`
draws the same net as its module instances (boxes naming the instance, the module and its
size) joined by the places they share: a place that one module's transitions write and
another's read becomes an arc from the writer to the reader, labelled with the place. A
place with no writer or no reader stays a place (an ellipse). ``expand`` opens named
instances one level: their own places and transitions are drawn inside a dashed frame and
the shared places connect to the transitions that use them.

>>> from tcpn.petrinets import INT, PetriNet, Place, Transition
>>> stage = PetriNet("stage")
>>> stage.add_place(Place("inp", INT, port="in"))
>>> stage.add_place(Place("out", INT, port="out"))
>>> stage.add_transition(Transition("move"))
>>> stage.add_input("inp", "move", "x")
>>> stage.add_output("out", "move", "x")
>>> line = PetriNet("line")
>>> for name in ("a", "b", "c"):
...     line.add_place(Place(name, INT, initial=[1] if name == "a" else []))
>>> _ = line.add_module(stage, "first", {"inp": "a", "out": "b"})
>>> _ = line.add_module(stage, "second", {"inp": "b", "out": "c"})
>>> view = module_view(line)
>>> "label=b" in view.dot().source.replace('"', "")  # place b: an arc first -> second
True
>>> "<svg" in view.expand("second")._repr_svg_()
True
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass

import graphviz

from tcpn.errors import InputError
from tcpn.petrinets.drawing.dot import INSTALL_HINT, GraphvizMissing
from tcpn.petrinets.net import ArcKind, ModuleInstance, PetriNet

__all__ = ["FOLD_OVER", "ModuleView", "module_view"]

FOLD_OVER = 6
"""More instances than this of one module whose names differ only in their numbers
(``flow0.snd`` ... ``flow99.snd``) draw as one box, ``flow*.snd`` x 100."""


@dataclass(frozen=True)
class ModuleView:
    """A module-collapsed drawing of ``net``; ``expanded`` instances are drawn open."""

    net: PetriNet
    expanded: tuple[str, ...] = ()
    fold_over: int = FOLD_OVER

    @property
    def instances(self) -> list[ModuleInstance]:
        """The net's module instances, in the order they were added."""
        return list(self.net.modules)

    def expand(self, *names: str) -> ModuleView:
        """The same view with the instances ``names`` drawn open (one level)."""
        known = {m.name for m in self.net.modules}
        for name in names:
            if name not in known:
                raise InputError(f"net {self.net.name}: no module instance {name!r} to expand "
                                 f"(instances: {', '.join(sorted(known))})")
        return ModuleView(self.net, tuple(dict.fromkeys((*self.expanded, *names))),
                          self.fold_over)

    def dot(self) -> graphviz.Digraph:
        """The view as a Graphviz digraph (``.source`` is its DOT text)."""
        return _draw(self.net, set(self.expanded), self.fold_over)

    def svg(self) -> str:
        """The view rendered to SVG by Graphviz's ``dot``."""
        if shutil.which("dot") is None:
            raise GraphvizMissing(f"Graphviz's 'dot' program is not on the PATH, so net "
                                  f"{self.net.name} can't be drawn; install it with: "
                                  f"{INSTALL_HINT}")
        return self.dot().pipe(format="svg", encoding="utf-8")

    def _repr_svg_(self) -> str:
        return self.svg()


def module_view(net: PetriNet, expand: Iterable[str] = (), fold_over: int = FOLD_OVER,
                ) -> ModuleView:
    """The module-collapsed view of ``net`` with the instances ``expand`` drawn open;
    more than ``fold_over`` like-named instances of one module fold into one box."""
    return ModuleView(net, fold_over=fold_over).expand(*expand)


def _owner(path: str, instances: list[str]) -> str:
    """The innermost instance holding an element of module path ``path`` ("" for none)."""
    best = ""
    for name in instances:
        if (path == name or path.startswith(name + ".")) and len(name) > len(best):
            best = name
    return best


def _pattern(name: str) -> str:
    return re.sub(r"\d+", "*", name)


def _folds(net: PetriNet, expanded: set[str], fold_over: int) -> dict[str, list[str]]:
    """Pattern -> instance names, for the groups that draw as one box."""
    groups: dict[tuple[str, str], list[str]] = {}
    for instance in net.modules:
        if instance.name not in expanded:
            groups.setdefault((_pattern(instance.name), _pattern(instance.module)),
                              []).append(instance.name)
    return {pattern: members for (pattern, _module), members in groups.items()
            if len(members) > fold_over and pattern != members[0]}


def _draw(net: PetriNet, expanded: set[str], fold_over: int = FOLD_OVER) -> graphviz.Digraph:
    names = [m.name for m in net.modules]
    ids = {name: f"m{i}" for i, name in enumerate(names)}
    folds = _folds(net, expanded, fold_over)
    folded = {member: pattern for pattern, members in folds.items() for member in members}
    for members in folds.values():
        for member in members:
            ids[member] = ids[members[0]]
    graph = graphviz.Digraph(f"{net.name}_modules")
    graph.attr(rankdir="LR", nodesep="0.3", ranksep="0.7", fontname="Helvetica")
    graph.attr("node", fontname="Helvetica", fontsize="11")
    graph.attr("edge", fontname="Helvetica", fontsize="9", arrowsize="0.7", color="gray30")
    graph.attr(labelloc="t", fontsize="12", label=(
        f"net {net.name} by its modules: {len(net.places)} places, {len(net.transitions)} "
        f"transitions, {len(net.arcs)} arcs in {len(net.modules)} instances (boxes); an arc "
        "is a place one module writes and another reads"))
    place_owner = {p.name: _owner(p.module, names) for p in net.places.values()}
    transition_owner = {t.name: _owner(t.module, names) for t in net.transitions.values()}
    place_ids = {name: f"p{i}" for i, name in enumerate(net.places)}
    transition_ids = {name: f"t{i}" for i, name in enumerate(net.transitions)}

    def transition_node(transition: str) -> str:
        owner = transition_owner[transition]
        return transition_ids[transition] if owner in expanded or not owner else ids[owner]

    for instance in net.modules:
        places = sum(1 for o in place_owner.values() if o == instance.name)
        transitions = sum(1 for o in transition_owner.values() if o == instance.name)
        shown, kind = instance.name, instance.module
        if instance.name in folded:
            members = folds[folded[instance.name]]
            if instance.name != members[0]:
                continue  # drawn once, as the group's box
            shown = _merged_label(members)
            kind = f"{_merged_label([m.module for m in net.modules if m.name in members])}" \
                   f" × {len(members)}"
        title = (f"<<B>{html.escape(shown)}</B><BR/><I>{html.escape(kind)}"
                 f"</I><BR/><FONT POINT-SIZE=\"9\" COLOR=\"gray35\">{places} places, "
                 f"{transitions} transitions{' each' if shown != instance.name else ''}"
                 "</FONT>>")
        if instance.name not in expanded:
            graph.node(ids[instance.name], label=title, shape="box", style="rounded,filled",
                       fillcolor="aliceblue", id=f"module/{shown}",
                       tooltip=instance.name)
            continue
        with graph.subgraph(name=f"cluster_{ids[instance.name]}") as sub:
            sub.attr(label=title, style="rounded,dashed", color="gray50")
            for place in net.places.values():
                if place_owner[place.name] == instance.name:
                    sub.node(place_ids[place.name], label=_short(place.name, instance.name),
                             shape="ellipse", fontsize="9",
                             peripheries="2" if place.colour.is_timed else "1")
            for transition in net.transitions.values():
                if transition_owner[transition.name] == instance.name:
                    sub.node(transition_ids[transition.name],
                             label=_short(transition.name, instance.name), shape="box",
                             fontsize="9", style="rounded")
    for transition in net.transitions.values():
        if not transition_owner[transition.name]:
            graph.node(transition_ids[transition.name], label=transition.name, shape="box",
                       style="rounded")

    merged: dict[tuple[str, str, str], list[str]] = {}
    writers: dict[str, list[str]] = {}
    readers: dict[str, list[str]] = {}
    edges: set[tuple[str, str, str]] = set()
    for arc in net.arcs:
        node = transition_node(arc.transition)
        owner = place_owner[arc.place]
        if owner and owner not in expanded:
            continue  # inside a closed box
        if owner:  # an open module's own place: drawn as itself
            pair = (node, place_ids[arc.place]) if arc.kind is ArcKind.OUTPUT else (
                place_ids[arc.place], node)
            edges.add((*pair, ""))
            continue
        side = writers if arc.kind is ArcKind.OUTPUT else readers
        if node not in side.setdefault(arc.place, []):
            side[arc.place].append(node)
    for place in net.places.values():
        if place_owner[place.name]:
            continue
        into, out_of = writers.get(place.name, []), readers.get(place.name, [])
        if into and out_of:
            for w in into:
                for r in out_of:  # a group's many arcs become one, its label a pattern
                    merged.setdefault((w, r, _pattern(place.name)), []).append(place.name)
            continue
        graph.node(place_ids[place.name], label=place.name, shape="ellipse", fontsize="9",
                   id=f"place/{place.name}")
        edges.update((w, place_ids[place.name], "") for w in into)
        edges.update((place_ids[place.name], r, "") for r in out_of)
    edges.update((w, r, _merged_label(labels)) for (w, r, _p), labels in merged.items())
    depth = _depths(edges, _roots(net, ids, expanded, transition_owner, transition_ids))
    for tail, head, label in sorted(edges):
        if depth.get(tail, 0) <= depth.get(head, 0):
            graph.edge(tail, head, label=html.escape(label))
        else:  # drawn from the far side, so a loop folds back instead of running on
            graph.edge(head, tail, label=html.escape(label), dir="back")
    return graph


def _roots(net: PetriNet, ids: dict[str, str], expanded: set[str],
           transition_owner: dict[str, str], transition_ids: dict[str, str]) -> set[str]:
    """The nodes the layout starts from: the instances with the most transitions (the
    busiest components, e.g. a scenario's senders), or their transitions when open."""
    sizes: dict[str, int] = {}
    for owner in transition_owner.values():
        if owner:
            sizes[owner] = sizes.get(owner, 0) + 1
    if not sizes:
        return set()
    most = max(sizes.values())
    roots = set()
    for name, size in sizes.items():
        if size != most:
            continue
        if name not in expanded:
            roots.add(ids[name])
        else:
            roots.update(transition_ids[t] for t, o in transition_owner.items() if o == name)
    return roots


def _depths(edges: set[tuple[str, str, str]], roots: set[str]) -> dict[str, int]:
    """Breadth-first distance of every node from ``roots``, ignoring arc direction."""
    neighbours: dict[str, set[str]] = {}
    for tail, head, _label in edges:
        neighbours.setdefault(tail, set()).add(head)
        neighbours.setdefault(head, set()).add(tail)
    depth = {root: 0 for root in roots}
    frontier = sorted(roots)
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(neighbours.get(node, ())):
                if other not in depth:
                    depth[other] = depth[node] + 1
                    following.append(other)
        frontier = following
    return depth


def _merged_label(labels: list[str]) -> str:
    """One label for arcs merged into one: the numbers that differ among them become
    ``*`` (``flow0.data``, ``flow1.data`` -> ``flow*.data``; ``S.R1.in`` stays).

    >>> _merged_label(["S.R1.in", "S.R1.in"]), _merged_label(["f0.x7", "f1.x7"])
    ('S.R1.in', 'f*.x7')
    """
    split = [re.split(r"(\d+)", label) for label in labels]
    return "".join(part if len({parts[i] for parts in split}) == 1 else "*"
                   for i, part in enumerate(split[0]))


def _short(name: str, prefix: str) -> str:
    return name[len(prefix) + 1:] if name.startswith(prefix + ".") else name
