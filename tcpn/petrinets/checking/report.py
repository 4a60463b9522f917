"""The standard state-space report, as CPN Tools writes one: statistics, bounds, home,
liveness and fairness properties of a complete state space.

:func:`standard_report` returns a :class:`StandardReport` (plain data); ``.table()`` gives
a Rich renderable, ``.to_json()`` a JSON-ready dict and ``.text()`` the plain text.

* **Statistics**: states (nodes), edges (arcs), strongly connected components and the
  edges between them, whether the space is full, exploration seconds.
* **Boundedness**: per place the best upper and lower integer bounds (token counts over
  all states) and the best upper and lower multiset bounds (per colour, the most and the
  fewest tokens of that colour in any state).
* **Home properties**: the home markings (reachable from every state).
* **Liveness**: dead markings; dead transitions (fire in no state); live transitions
  (from every state, can fire again: they fire in every terminal component).
* **Fairness**: per transition, impartial, fair, just or none
  (:func:`~tcpn.petrinets.checking.fairness.fairness_properties`).

>>> from tcpn.petrinets import explore
>>> from tcpn.petrinets.examples import dining_philosophers
>>> report = standard_report(explore(dining_philosophers(3)))
>>> report.states, report.edges, report.scc_nodes, report.home_markings[:2], report.live
(4, 6, 1, [0, 1], ['put0', 'put1', 'put2', 'take0', 'take1', 'take2'])
>>> report.integer_bounds["eat0"], report.upper_multiset_bounds["eat0"]
((1, 0), '1`()')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tcpn.petrinets.checking.atoms import columns
from tcpn.petrinets.checking.fairness import fairness_properties
from tcpn.petrinets.statespace.graph import (
    home_markings,
    require_complete,
    state_graph,
    strongly_connected_components,
    terminal_components,
)
from tcpn.petrinets.statespace.store import timed_content, untimed_content

if TYPE_CHECKING:
    from rich.console import RenderableType

    from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["StandardReport", "standard_report"]

#: Lists longer than this are cut in the text and the table (JSON keeps them whole).
SHOWN = 12


@dataclass
class StandardReport:
    """The standard report of one complete state space (see the module docstring)."""

    net: str
    states: int
    edges: int
    scc_nodes: int
    scc_arcs: int
    full: bool
    seconds: float
    integer_bounds: dict[str, tuple[int, int]] = field(default_factory=dict)
    upper_multiset_bounds: dict[str, str] = field(default_factory=dict)
    lower_multiset_bounds: dict[str, str] = field(default_factory=dict)
    home_markings: list[int] = field(default_factory=list)
    dead_markings: list[int] = field(default_factory=list)
    dead_transitions: list[str] = field(default_factory=list)
    live: list[str] = field(default_factory=list)
    fairness: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (bounds as ``[upper, lower]``)."""
        out = asdict(self)
        out["integer_bounds"] = {p: list(b) for p, b in self.integer_bounds.items()}
        return out

    def sections(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """The report as titled sections of (label, value) rows, in CPN Tools' order."""
        def listed(items: list[Any]) -> str:
            if not items:
                return "None"
            shown = ", ".join(str(i) for i in items[:SHOWN])
            return shown + (f", ... ({len(items)} in all)" if len(items) > SHOWN else "")

        by_kind: dict[str, list[str]] = {"impartial": [], "fair": [], "just": [], "none": []}
        for name, kind in self.fairness.items():
            by_kind[kind].append(name)
        return [
            ("Statistics", [("State space nodes", str(self.states)),
                            ("State space arcs", str(self.edges)),
                            ("Status", "Full" if self.full else "Partial"),
                            ("Seconds", f"{self.seconds:.3f}"),
                            ("SCC graph nodes", str(self.scc_nodes)),
                            ("SCC graph arcs", str(self.scc_arcs))]),
            ("Best integer bounds (upper, lower)",
             [(p, f"{u}, {lo}") for p, (u, lo) in self.integer_bounds.items()]),
            ("Best upper multiset bounds", list(self.upper_multiset_bounds.items())),
            ("Best lower multiset bounds", list(self.lower_multiset_bounds.items())),
            ("Home properties", [("Home markings", listed(self.home_markings))]),
            ("Liveness properties", [("Dead markings", listed(self.dead_markings)),
                                     ("Dead transitions", listed(self.dead_transitions)),
                                     ("Live transitions", listed(self.live))]),
            ("Fairness properties", [("Impartial transitions", listed(by_kind["impartial"])),
                                     ("Fair transitions", listed(by_kind["fair"])),
                                     ("Just transitions", listed(by_kind["just"])),
                                     ("No fairness", listed(by_kind["none"]))]),
        ]

    def text(self) -> str:
        """The report as plain text, one section after the other."""
        lines = [f"State space report: {self.net}"]
        for title, rows in self.sections():
            lines += ["", title] + [f"  {label}: {value}" for label, value in rows]
        return "\n".join(lines)

    def table(self) -> RenderableType:
        """A Rich table: one row per (section, label, value)."""
        from rich.table import Table

        table = Table(title=f"State space report: {self.net}", show_lines=False)
        table.add_column("section")
        table.add_column("item", overflow="fold")
        table.add_column("value", overflow="fold")
        for title, rows in self.sections():
            for k, (label, value) in enumerate(rows):
                table.add_row(title if k == 0 else "", label, value)
        return table


def _multiset(counts: dict[Any, int]) -> str:
    """CPN Tools' multiset notation ``2`a++1`b`` (``empty`` for none)."""
    items = [(v, n) for v, n in counts.items() if n]
    if not items:
        return "empty"
    try:
        items.sort()
    except TypeError:
        items.sort(key=lambda item: repr(item[0]))
    return "++".join(f"{n}`{_value(v)}" for v, n in items)


def _value(value: Any) -> str:
    return "()" if value == () else str(value)


def standard_report(space: StateSpace) -> StandardReport:
    """The standard report of a complete state space (an incomplete one is refused)."""
    from tcpn.petrinets.checking.ctl import GLOBAL_CTL

    require_complete(space, GLOBAL_CTL)
    cols = columns(space)
    store = cols.store
    labels = strongly_connected_components(space)
    g = state_graph(space)
    cross = labels[g.src] != labels[g.dst]
    scc_arcs = np.unique(np.stack([labels[g.src][cross], labels[g.dst][cross]]),
                         axis=1).shape[1]
    report = StandardReport(
        net=space.net.name, states=space.n_states, edges=space.n_edges,
        scc_nodes=int(labels.max()) + 1, scc_arcs=int(scc_arcs), full=space.complete,
        seconds=space.wall_s, home_markings=home_markings(space),
        dead_markings=space.dead_markings())
    for p, name in enumerate(space.compiled.place_names):
        counts = cols.tokens(name)
        report.integer_bounds[name] = (int(counts.max()), int(counts.min()))
        upper: dict[Any, int] = {}
        lower: dict[Any, int] | None = None
        for number in np.unique(cols.field(p)).tolist():
            key = store.contents[p][number]
            content = timed_content(key) if store.timed[p] else untimed_content(key)
            multiset: dict[Any, int] = {v: len(c) if isinstance(c, list) else c
                                        for v, c in content.items()}
            for value, n in multiset.items():
                upper[value] = max(upper.get(value, 0), n)
            lower = multiset if lower is None else {
                v: min(n, multiset.get(v, 0)) for v, n in lower.items()}
        report.upper_multiset_bounds[name] = _multiset(upper)
        report.lower_multiset_bounds[name] = _multiset(lower or {})
    terminal = terminal_components(space)
    for ct in sorted(space.compiled.transitions, key=lambda t: t.name):
        enabled = cols.fireable(ct.name)
        if not enabled.any():
            report.dead_transitions.append(ct.name)
        if set(terminal) <= set(np.unique(labels[enabled]).tolist()):
            report.live.append(ct.name)
    report.fairness = dict(sorted(fairness_properties(space).items()))
    return report
