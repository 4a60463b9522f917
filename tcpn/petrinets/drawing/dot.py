"""Draw a net with Graphviz: :func:`to_dot` builds the graph, :func:`to_svg` renders it.

Places are ellipses showing name, colour set and marking (CPN Tools' ``2`x@t`` notation);
places of a timed colour set have a double border and say ``timed``. Transitions are
boxes showing guard ``[...]``, delay ``@+``, priority and code action. Arcs carry their
inscription, count (``2`x``), condition (``if c:``) and delay (``@+d``). Read arcs have
arrowheads at both ends, inhibitor arcs end in a circle (``odot``), reset arcs are dashed
with a double arrowhead. Module instances are drawn as clusters. Long inscriptions wrap
and long markings are cut short, and every text is HTML-escaped, so large nets stay
legible. In the SVG, the groups of places, transitions and arcs have the ids
``place/NAME``, ``transition/NAME`` and ``arc/N`` (N: the arc's index in ``net.arcs``),
for styling and tests. :meth:`PetriNet._repr_svg_` calls :func:`to_svg`, so nets draw in
Jupyter.

>>> from tcpn.petrinets.examples import counter
>>> dot = to_dot(counter(3))
>>> print(dot.source.splitlines()[0])
digraph counter {
>>> to_svg(counter(3)).lstrip().startswith("<?xml")
True
"""

from __future__ import annotations

import html
import shutil
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import graphviz

from tcpn.errors import TcpnError
from tcpn.petrinets.net import P_NORMAL, Arc, ArcKind, PetriNet, Place, Token, Transition

__all__ = ["GraphvizMissing", "to_dot", "to_svg"]

INSTALL_HINT = "sudo apt-get install graphviz"

_ARC_STYLE: dict[ArcKind, dict[str, str]] = {
    ArcKind.INPUT: {},
    ArcKind.OUTPUT: {},
    ArcKind.READ: {"dir": "both", "arrowtail": "normal", "color": "gray25"},
    ArcKind.INHIBITOR: {"arrowhead": "odot", "color": "firebrick"},
    ArcKind.RESET: {"arrowhead": "normalnormal", "style": "dashed", "color": "darkorange3"},
}


class GraphvizMissing(TcpnError):
    """Graphviz's ``dot`` program is not installed, so nets can't be rendered."""


def to_dot(net: PetriNet, *, marking: Mapping[str, Iterable[Token]] | None = None,
           wrap: int = 36, max_lines: int = 4, max_tokens: int = 6) -> graphviz.Digraph:
    """The net as a Graphviz digraph (``.source`` is its DOT text).

    Places show ``marking`` (for example ``Simulator.marking_dict()`` during a run) or
    else the initial marking. Texts wrap at ``wrap`` characters and keep at most
    ``max_lines`` lines; a marking lists at most ``max_tokens`` distinct tokens and counts
    the rest.

    >>> from tcpn.petrinets import INT, PetriNet, Place, Transition
    >>> net = PetriNet("n")
    >>> net.add_place(Place("p", INT.timed(), initial=[1, 1]))
    >>> net.add_transition(Transition("t", guard="x < 2"))
    >>> net.add_inhibitor("p", "t", "x", count=2)
    >>> source = to_dot(net).source
    >>> "2`1" in source, "odot" in source, "x &lt; 2" in source
    (True, True, True)
    """
    drawer = _Drawer(net, marking or {}, wrap, max_lines, max_tokens)
    return drawer.draw()


def to_svg(net: PetriNet, **options: Any) -> str:
    """The net rendered to SVG by Graphviz's ``dot``; ``options`` go to :func:`to_dot`.

    Raises :class:`GraphvizMissing` (with the command that installs it) when ``dot`` is
    not on the ``PATH``.

    >>> from tcpn.petrinets.examples import counter
    >>> "<svg" in to_svg(counter(3))
    True
    """
    if shutil.which("dot") is None:
        raise GraphvizMissing(
            f"Graphviz's 'dot' program is not on the PATH, so net {net.name} can't be drawn; "
            f"install it with: {INSTALL_HINT}"
        )
    graph = to_dot(net, **options)
    try:
        return graph.pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound as exc:
        raise GraphvizMissing(
            f"Graphviz's 'dot' could not be run ({exc}); install it with: {INSTALL_HINT}"
        ) from exc


class _Drawer:
    def __init__(self, net: PetriNet, marking: Mapping[str, Iterable[Token]], wrap: int,
                 max_lines: int, max_tokens: int):
        self.net = net
        self.marking = marking
        self.wrap = wrap
        self.max_lines = max_lines
        self.max_tokens = max_tokens
        self.ids = {name: f"p{i}" for i, name in enumerate(net.places)}
        self.ids.update({name: f"t{i}" for i, name in enumerate(net.transitions)})

    # -- text -----------------------------------------------------------------------------
    def _lines(self, text: str) -> list[str]:
        lines = textwrap.wrap(text, self.wrap, break_long_words=True,
                              break_on_hyphens=False) or [""]
        if len(lines) > self.max_lines:
            lines = lines[: self.max_lines]
            lines[-1] = lines[-1][: max(self.wrap - 1, 1)] + "…"
        return lines

    def _html(self, text: str) -> str:
        return "<BR/>".join(html.escape(line) for line in self._lines(text))

    def _rows(self, rows: Iterable[tuple[str, str, str]]) -> str:
        """An HTML-like label: one table row per (text, colour, style) with text set."""
        cells = []
        for text, colour, style in rows:
            if not text:
                continue
            body = self._html(text)
            if style:
                body = f"<{style}>{body}</{style}>"
            cells.append(f'<TR><TD><FONT COLOR="{colour}">{body}</FONT></TD></TR>')
        return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0">' + "".join(cells) + "</TABLE>>"

    # -- elements -------------------------------------------------------------------------
    def _place_label(self, place: Place) -> str:
        colour = place.colour.describe() + (" · timed" if place.colour.is_timed else "")
        return self._rows([
            (place.name, "black", "B"),
            (colour, "gray35", "I"),
            (self._marking(place), "darkgreen", ""),
        ])

    def _marking(self, place: Place) -> str:
        tokens = self.marking.get(place.name, place.initial_tokens)
        counts = Counter(
            (tok.value, tok.time if place.colour.is_timed else None) for tok in tokens
        )
        parts = []
        for (value, time), n in list(counts.items())[: self.max_tokens]:
            stamp = f"@{time:g}" if time is not None else ""
            parts.append(f"{n}`{value!r}{stamp}")
        rest = sum(n for _, n in list(counts.items())[self.max_tokens:])
        if rest:
            parts.append(f"… +{rest} more")
        return " ++ ".join(parts)

    def _transition_label(self, t: Transition) -> str:
        delay = "" if t.delay is None else f"@+ {_delay_text(t.delay)}"
        priority = "" if t.priority == P_NORMAL else f"priority {t.priority}"
        action = ""
        if t.action is not None:
            name = getattr(t.action, "__name__", "action")
            action = f"action {name}" + (f" → {', '.join(t.outputs)}" if t.outputs else "")
        return self._rows([
            (t.name, "black", "B"),
            (f"[{t.guard}]" if t.guard else "", "navy", ""),
            (delay, "purple4", ""),
            (priority, "darkorange4", ""),
            (action, "gray35", "I"),
        ])

    def _arc_label(self, arc: Arc) -> str:
        if arc.kind is ArcKind.RESET:
            return "<<I>reset</I>>"
        text = arc.inscription or ""
        if arc.count != 1:
            count = arc.count if isinstance(arc.count, int) else f"({arc.count})"
            text = f"{count}`{text}"
        if arc.kind is ArcKind.INHIBITOR and arc.inscription is None:
            text = "empty"
        if arc.multiset:  # the tokens of a computed multiset, not one token
            text = f"ms {text}"
        if arc.when is not None:
            text = f"if {arc.when}: {text}"
        if arc.delay is not None:
            text = f"{text} @+{_delay_text(arc.delay)}"
        return f"<{self._html(text)}>"

    # -- the graph ------------------------------------------------------------------------
    def draw(self) -> graphviz.Digraph:
        graph = graphviz.Digraph(self.net.name)
        graph.attr(rankdir="LR", nodesep="0.35", ranksep="0.6", fontname="Helvetica")
        graph.attr("node", fontname="Helvetica", fontsize="11", margin="0.06,0.03")
        graph.attr("edge", fontname="Helvetica", fontsize="10", arrowsize="0.8")
        clusters = self._module_tree()
        self._fill(graph, "", clusters)
        for n, arc in enumerate(self.net.arcs):
            place, transition = self.ids[arc.place], self.ids[arc.transition]
            tail, head = (transition, place) if arc.kind is ArcKind.OUTPUT else (
                place, transition
            )
            graph.edge(tail, head, label=self._arc_label(arc), id=f"arc/{n}",
                       tooltip=arc.where, **_ARC_STYLE[arc.kind])
        return graph

    def _module_tree(self) -> dict[str, list[str]]:
        """Module path -> the direct sub-paths (``""`` is the top level)."""
        paths = {p.module for p in self.net.places.values()}
        paths |= {t.module for t in self.net.transitions.values()}
        tree: dict[str, list[str]] = {"": []}
        for path in sorted(p for p in paths if p):
            parts = path.split(".")
            for depth in range(1, len(parts) + 1):
                child, parent = ".".join(parts[:depth]), ".".join(parts[: depth - 1])
                if child not in tree:
                    tree[child] = []
                    tree.setdefault(parent, []).append(child)
        return tree

    def _fill(self, graph: graphviz.Digraph, path: str, tree: dict[str, list[str]]) -> None:
        for place in self.net.places.values():
            if place.module == path:
                graph.node(self.ids[place.name], label=self._place_label(place),
                           id=f"place/{place.name}", tooltip=place.name,
                           shape="ellipse", peripheries="2" if place.colour.is_timed else "1")
        for t in self.net.transitions.values():
            if t.module == path:
                graph.node(self.ids[t.name], label=self._transition_label(t), shape="box",
                           id=f"transition/{t.name}", tooltip=t.name,
                           style="rounded" if t.delay is None else "rounded,bold")
        instances = {m.name: m for m in self.net.modules}
        for child in tree.get(path, []):
            with graph.subgraph(name=f"cluster_{sorted(tree).index(child)}") as sub:
                title = child
                if child in instances:
                    instance = instances[child]
                    title = f"{child}: {instance.module}"
                    if instance.params:
                        title += " (" + ", ".join(f"{k}={v!r}" for k, v in instance.params) + ")"
                sub.attr(label=self._rows([(title, "gray20", "B")]), style="rounded,dashed",
                         color="gray50")
                self._fill(sub, child, tree)


def _delay_text(delay: Any) -> str:
    return str(delay) if isinstance(delay, str) else repr(delay)
