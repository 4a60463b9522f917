"""The state-space explorer in C: untimed nets of the C engine's subset explored breadth-first.

:func:`build_cexplorer` adds ``explore.c`` (the search, the interned place contents and
states) to the C that :mod:`~tcpn.petrinets.engine.cnet.codegen` generates for the net's
transitions, and builds it through the native engine's cache. :meth:`CExplorer.run`
explores and hands back what :class:`~tcpn.petrinets.statespace.space.StateSpace` holds: the
states' packed keys, the edge arrays, and a :class:`MarkingStore` filled with the place
contents in the order the Python explorer numbers them (so keys, state numbers, edges
and dead markings are the Python explorer's; ``tests/test_cexplore.py`` compares them).

What keeps a net out (the reason is returned, and ``explore`` runs its Python path): a
timed net, an element outside the C engine's subset (``build_cnet``'s reasons), an
enumeration whose members Python cannot sort (the canonical order of a multiset needs it).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from tcpn.petrinets.colours import EnumSet
from tcpn.petrinets.engine.cnet import C_LIBRARIES, initial_marking_outside, numpy_flags
from tcpn.petrinets.engine.cnet.codegen import c_flat_table, c_table, plan_net
from tcpn.petrinets.engine.cnet.translate import Unsupported, decode, encode
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.statespace.store import MarkingStore

__all__ = ["CExplored", "CExplorer", "CExplorerError", "build_cexplorer"]

_log = logging.getLogger("tcpn.native")
_TEMPLATE = Path(__file__).with_name("explore.pyx")
_SEARCH = Path(__file__).with_name("explore.c")
_COMPLETE, _PAUSED, _MAX_STATES, _MAX_DEPTH, _ERROR = 0, 1, 2, 3, -1
_NO_LIMIT = 2**62
#: states whose numbers are packed into keys at a time (bounds the transient memory)
_CHUNK = 1 << 16
#: what the Python store takes per place content filled after the search (a dict entry,
#: the value or its tuple and frozenset): 272 bytes measured on the counter net, whose
#: every state has a content of its own, the largest of the benchmark nets
FILL_BYTES_PER_CONTENT = 300


class CExplorerError(RuntimeError):
    """The C exploration stopped on an error of the generated code, or disagreed with the
    Python store: the Python explorer runs instead (and reports the error itself)."""


@dataclass
class CExplored:
    """What one C exploration found, in the form ``StateSpace`` holds it."""

    keys: np.ndarray         # packed markings in state order (MarkingStore.key_array's form)
    edge_dst: bytes          # uint32 edge targets, grouped by source
    edge_start: bytes        # uint32, one more than the expanded states
    edge_labels: bytes       # int32 transition of each edge
    n_expanded: int
    stop_reason: str
    depth: int
    peak_bytes: int


def _ranks(colour: EnumSet, where: str) -> list[int]:
    """Each member's position when Python sorts the members (how the store orders them)."""
    try:
        order = sorted(range(len(colour.values)), key=lambda i: colour.values[i])
    except TypeError:
        raise Unsupported(f"{where}: the members of {colour.describe()} do not sort") from None
    ranks = [0] * len(order)
    for position, i in enumerate(order):
        ranks[i] = position
    return ranks


def _tables(compiled: CompiledNet, slots: list[list[Any]]) -> str:
    """The explorer's tables: transition order and priority groups, written places, and
    the rank tables that order enumeration members as Python sorts them."""
    order = sorted(range(len(compiled.transitions)),
                   key=lambda t: compiled.transitions[t].priority)  # stable, as explore's
    starts = [0]
    for a, b in pairwise(order):
        if compiled.transitions[a].priority != compiled.transitions[b].priority:
            starts.append(order.index(b))
    starts.append(len(order))
    width = max([len(s) for s in slots] + [1])
    slot_rank, ranks = [], list[int]()
    for p, place in enumerate(slots):
        row = []
        for k, colour in enumerate(place):
            if isinstance(colour, EnumSet):
                row.append(len(ranks))
                ranks.extend(_ranks(colour, f"place {compiled.place_names[p]}, component {k}"))
            else:
                row.append(-1)
        slot_rank.extend(row + [-1] * (width - len(row)))
    return "\n".join([
        f"#define X_GROUPS {len(starts) - 1}",
        c_table("X_ORDER", order),
        c_table("X_GROUP_START", starts),
        c_flat_table("X_WRITES", [t.writes_places for t in compiled.transitions]),
        c_flat_table("X_RW", [tuple(sorted(set(t.reads_places) | set(t.writes_places)))
                       for t in compiled.transitions]),
        c_table("X_SLOT_RANK", slot_rank),
        "static const int64_t X_RANKS[] = {" + ", ".join(map(str, ranks or [0])) + "};",
    ])


class CExplorer:
    """A built C explorer for one net."""

    def __init__(self, compiled: CompiledNet, slots: list[list[Any]], product: list[bool],
                 module: Any):
        self.compiled = compiled
        self.slots = slots
        self.product = product
        self.module = module

    def run(self, store: MarkingStore, state_cap: int | None, depth_cap: int | None,
            pause: Callable[[int, int, int], str | None] | None = None) -> CExplored:
        """Explore from the initial marking, filling ``store`` (fresh) with the contents.

        ``pause(states, expanded, pending_bytes)``, called every 256 expanded states,
        returns the reason to stop (a time or memory budget: ``"time_budget"``,
        ``"memory_budget"``, which the result says then) or ``None`` to go on;
        ``pending_bytes`` is what the result will take beyond the search's own tables
        (:func:`pending_bytes`), for a memory budget to count before it is allocated.
        """
        x = self.module.Exploration()
        for p, place in enumerate(self.compiled.initial_marking()):
            x.load(p, [(encode(self.slots[p], self.product[p], value), count)
                       for value, count in place.items()])
        x.start()
        cap = _NO_LIMIT if state_cap is None else state_cap
        depth = _NO_LIMIT if depth_cap is None else depth_cap
        # with ``pause``: asked first at state 0, then every 256 states, as explore() does
        budget = -1 if pause is None else 0
        while True:
            code = x.run(budget, cap, depth)
            if code == _PAUSED:
                assert pause is not None
                stop = pause(x.n_states, x.expanded, pending_bytes(x))
                if stop is not None:
                    reason = stop
                    break
                budget = 256
                continue
            if code == _ERROR:
                err, site, t = x.error()
                raise CExplorerError(f"transition {self.compiled.transitions[t].name}: the "
                                     f"generated code stopped with error {err} (site {site})")
            reason = {_COMPLETE: "complete", _MAX_STATES: "max_states",
                      _MAX_DEPTH: "max_depth"}[code]
            break
        collecting = gc.isenabled()
        gc.disable()  # a dict, a tuple and a frozenset per content, no cycle: the
        try:          # collector's passes over the growing store cost more than the fill
            self._fill(store, x)
        finally:
            if collecting:
                gc.enable()
        n_places, n = len(self.slots), x.n_states
        keys = _keys(store, n)
        for first in range(0, n, _CHUNK):
            count = min(_CHUNK, n - first)
            numbers = np.frombuffer(x.numbers(first, count), dtype=np.uint32)
            _pack(store, numbers.reshape(count, n_places), keys[first:first + count])
        edge_dst, edge_start, edge_labels = x.edges()
        return CExplored(keys, edge_dst, edge_start, edge_labels, x.expanded, reason, x.depth,
                         x.bytes)

    def _fill(self, store: MarkingStore, x: Any) -> None:
        """Number the C contents in ``store`` in the order C numbered them, widening the
        fields as the Python explorer does when a place outgrows its field."""
        starts, ids, counts, values = [], [], [], []
        for p, slots in enumerate(self.slots):
            start, row_ids, row_counts, distinct = x.contents(p)
            starts.append(np.frombuffer(start, dtype=np.int64).tolist())
            ids.append(np.frombuffer(row_ids, dtype=np.int32).tolist())
            counts.append(np.frombuffer(row_counts, dtype=np.int64).tolist())
            rows = np.frombuffer(distinct, dtype=np.int64).reshape(-1, len(slots)).tolist()
            values.append([decode(slots, self.product[p], tuple(row)) for row in rows])
        following = [1] * len(self.slots)
        for p in np.frombuffer(x.sequence(), dtype=np.int32).tolist():
            number = following[p]
            following[p] += 1
            first, last = starts[p][number], starts[p][number + 1]
            named = values[p]
            place = {named[i]: n for i, n in zip(ids[p][first:last], counts[p][first:last],
                                                 strict=True)}
            if store.add_sorted(p, place) != number:
                raise CExplorerError(f"place {self.compiled.place_names[p]}: content "
                                     f"{number} of the C explorer is not the store's")
            if store.overflow:
                store.widen()
        for p, index in enumerate(store.index):  # two C contents the store finds equal
            if len(index) != len(store.contents[p]):
                raise CExplorerError(f"place {self.compiled.place_names[p]}: the C explorer "
                                     "numbered one content twice")


def pending_bytes(x: Any) -> int:
    """What an exploration's result takes beyond the C tables, allocated after the search:
    the Python store's contents (:data:`FILL_BYTES_PER_CONTENT` each), the packed keys (8
    bytes a state, more past 64 bits) and the edge arrays copied out (4 bytes an edge and
    an expanded state)."""
    return (x.n_contents * FILL_BYTES_PER_CONTENT + 8 * x.n_states
            + 4 * (x.n_edges + x.expanded))


def _keys(store: MarkingStore, n: int) -> np.ndarray:
    """An array for ``n`` keys as :meth:`MarkingStore.key_array` holds them."""
    if store.total_bits <= 64:
        return np.zeros(n, dtype=np.uint64)
    return np.zeros(n, dtype=f"S{(store.total_bits + 7) // 8}")


def _pack(store: MarkingStore, numbers: np.ndarray, out: np.ndarray) -> None:
    """States' content numbers (a row per state) packed into ``out`` (from :func:`_keys`)
    with the store's field layout."""
    if store.total_bits <= 64:
        for p, shift in enumerate(store.shifts):
            out |= numbers[:, p].astype(np.uint64) << np.uint64(shift)
        return
    size = (store.total_bits + 7) // 8
    bits = np.zeros((len(numbers), size * 8), dtype=np.uint8)
    for p, (shift, width) in enumerate(zip(store.shifts, store.widths, strict=True)):
        column = numbers[:, p]
        for b in range(width):
            bits[:, shift + b] = (column >> b) & 1
    out[:] = np.packbits(bits, axis=1, bitorder="little").view(f"S{size}").reshape(-1)


def build_cexplorer(compiled: CompiledNet, build: Callable[[str, tuple[str, ...],
                                                            tuple[str, ...]], Any]
                    ) -> CExplorer | str:
    """The C explorer of ``compiled``, or why it stays out (the element and the reason).

    ``build(pyx_source, compile_flags, link_flags)`` builds and loads the module (the
    native engine's cache does it).
    """
    if any(compiled.timed):
        timed = compiled.place_names[compiled.timed.index(True)]
        return f"place {timed} is timed: the C explorer explores untimed nets"
    try:
        plan = plan_net(compiled)
        tables = _tables(compiled, plan.slots)
    except Unsupported as exc:
        return str(exc)
    except Exception as exc:  # a translator defect must not take the Python path away
        _log.warning("net %s: the C explorer's translator failed: %r", compiled.net.name, exc)
        return f"the C engine's translator failed on this net: {exc!r}"
    outside = initial_marking_outside(compiled, plan)
    if outside is not None:
        return outside
    source = "\n".join([plan.source, tables, _SEARCH.read_text()])
    source = f"# numpy {np.__version__}\n" + _TEMPLATE.read_text().replace("@C_SOURCE@", source)
    module = build(source, numpy_flags(), C_LIBRARIES)
    if isinstance(module, str):
        return module
    return CExplorer(compiled, plan.slots, plan.product, module)
