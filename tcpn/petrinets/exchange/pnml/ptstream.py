"""A P/T net's PNML read as a stream into arrays: memory in the net's size, not the file's.

:func:`~tcpn.petrinets.exchange.pnml.read_pnml` builds the whole element tree, a
:class:`~tcpn.petrinets.net.PetriNet` of objects and then matrices: about 20-40 times the
file's size in memory, which a contest model of 20-40 MB (tens of thousands of places and
transitions) makes gigabytes. :func:`read_pt_stream` parses the file incrementally (expat
through ``defusedxml``'s ``iterparse``, each node dropped once read) into the ids, the
initial marking and the arcs as integer arrays: a few tens of bytes per node and arc.

It reads the standard P/T grammar only (``ptnet`` or ``pnmlcoremodel`` nets of places,
transitions and arcs with natural-number markings and inscriptions). A file outside it
(a symmetric net, tcpn's ``toolspecific`` timing, ``arctype`` extensions, modular PNML) or
wrong in any way (malformed XML, a duplicate id, a dangling arc, a bad number) gives
``None``: the caller reads it with :func:`read_pnml`, which either reads it or names the
line, element and rule it breaks. So both readers give the same net or the same error.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from xml.etree.ElementTree import Element, ParseError

import numpy as np
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from tcpn.limits import integer_digits_problem, limits
from tcpn.petrinets.net import NODE_NAME

__all__ = ["PTArrays", "ReadStopped", "read_pt_stream"]

PTNET = "http://www.pnml.org/version-2009/grammar/ptnet"
PNMLCORE = "http://www.pnml.org/version-2009/grammar/pnmlcoremodel"
#: Elements read between two calls of ``stop`` (a budget check costs a few microseconds).
CHECK_EVERY = 20_000
#: The largest arc weight or initial marking kept (int64 with room for sums).
_MOST = 1 << 62


@dataclass(frozen=True)
class PTArrays:
    """A P/T net as read: node ids in file order, the initial marking (one count per
    place) and the arcs as parallel arrays (``arc_place``, ``arc_transition`` index the
    ids; ``arc_input`` is True for place -> transition; ``arc_weight`` >= 1). Arcs are
    listed as the file has them: two arcs on the same pair add up."""

    places: tuple[str, ...]
    transitions: tuple[str, ...]
    initial: np.ndarray
    arc_place: np.ndarray
    arc_transition: np.ndarray
    arc_input: np.ndarray
    arc_weight: np.ndarray


class ReadStopped(Exception):
    """``stop`` asked the reading to end (a budget): ``reason`` names it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Outside(Exception):
    """The file is outside the plain P/T grammar or wrong: :func:`read_pnml` decides."""


def read_pt_stream(path: str | Path, max_bytes: int,
                   stop: Callable[[], str | None] | None = None) -> PTArrays | None:
    """The P/T net of the PNML file ``path`` as arrays, or None when the file is not a
    plain, valid P/T net of at most ``max_bytes`` (see the module docstring: read it with
    :func:`~tcpn.petrinets.exchange.pnml.read_pnml` then).

    ``stop()`` is called every :data:`CHECK_EVERY` elements; a reason it returns ends the
    reading with :class:`ReadStopped` (a time or memory budget that the reading counts in).
    """
    path = Path(path)
    try:
        if not path.is_file() or os.path.getsize(path) > max_bytes:
            return None
        return _Stream(stop).read(path)
    except (_Outside, ParseError, DefusedXmlException, LookupError, ValueError,
            OverflowError):
        return None


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _label(element: Element, label: str) -> str | None:
    """The text of ``element``'s ``<label><text>`` (namespaces ignored), as
    :func:`read_pnml` reads it."""
    for child in element:
        if _local(child.tag) == label:
            for text in child:
                if _local(text.tag) == "text":
                    return text.text
            return None
    return None


def _node_id(element: Element) -> str:
    """The node's id, when :func:`read_pnml` would name the node by it unchanged."""
    element_id = element.get("id", "")
    if not NODE_NAME.match(element_id):
        raise _Outside(element_id)
    return element_id


def _natural(text: str, least: int) -> int:
    """``text`` as a natural number of at least ``least``, else :class:`_Outside`."""
    if not text.isascii() or not text.isdigit() or integer_digits_problem(text) is not None:
        raise _Outside(text[:40])
    value = int(text)
    if value < least or value > _MOST:
        raise _Outside(text[:40])
    return value


class _Stream:
    def __init__(self, stop: Callable[[], str | None] | None):
        self.stop = stop
        self.max_depth = limits().xml_depth
        #: the hash of every id inside the net, sorted at the end to find a duplicate (8
        #: bytes an id, not a set of strings; two ids with one hash only send the file to
        #: :func:`read_pnml`, which compares the ids themselves)
        self.id_hashes = array("q")
        self.tags: dict[str, str] = {}  # tag -> its local name
        self.places: dict[str, int] = {}
        self.transitions: dict[str, int] = {}
        self.initial = array("q")
        # arcs: place and transition numbers, the input ones from place to transition;
        # an arc read before its ends waits with its ids in ``pending`` (arc number, ends)
        self.arc_place, self.arc_transition = array("l"), array("l")
        self.arc_input, self.arc_weight = array("b"), array("q")
        self.pending: list[tuple[int, str, str]] = []

    def read(self, path: Path) -> PTArrays:
        stack: list[Element] = []
        tags: list[str] = []
        net_depth, seen = -1, 0
        for event, element in iterparse(str(path), events=("start", "end"),
                                        forbid_dtd=False, forbid_entities=True,
                                        forbid_external=True):
            if event == "start":
                tag = self.tags.get(element.tag) or self.tags.setdefault(
                    element.tag, _local(element.tag))
                depth = len(stack)
                if depth >= self.max_depth or tag in ("referencePlace", "arctype",
                                                      "referenceTransition") or (
                        tag == "toolspecific" and element.get("tool") == "tcpn"):
                    raise _Outside(tag)
                if depth == 0 and tag != "pnml":
                    raise _Outside(tag)
                if depth == 1 and tag == "net":
                    if net_depth != -1 or element.get("type") not in (PTNET, PNMLCORE):
                        raise _Outside("net")
                    net_depth = 1
                if net_depth != -1 and depth > net_depth:
                    element_id = element.get("id")
                    if element_id is not None:
                        self.id_hashes.append(hash(element_id))
                stack.append(element)
                tags.append(tag)
                seen += 1
                if self.stop is not None and seen % CHECK_EVERY == 0:
                    reason = self.stop()
                    if reason is not None:
                        raise ReadStopped(reason)
                continue
            stack.pop()
            tag = tags.pop()
            if tag in ("place", "transition", "arc") and tags[-1] == "page" and \
                    tags[1] == "net":  # a node of a page of the net
                getattr(self, f"_{tag}")(element)
                del stack[-1][-1]  # the node just read: the last child of its page
        if net_depth == -1:
            raise _Outside("no net")
        hashes = np.sort(np.frombuffer(self.id_hashes, dtype=np.int64))
        if len(hashes) > 1 and bool((hashes[1:] == hashes[:-1]).any()):
            raise _Outside("duplicate id")
        del hashes, self.id_hashes
        return self._arrays()

    def _place(self, element: Element) -> None:
        text = (_label(element, "initialMarking") or "0").strip()
        # a count, never a list of tokens: any count up to _MOST is kept (the contest's
        # GPPP-PT-C0010N1000000000 marks a place with 4 x 10^9), whereas the full reader,
        # which builds the tokens, holds ``limits().marking_tokens``
        tokens = _natural(text, 0)
        self.places[_node_id(element)] = len(self.places)
        self.initial.append(tokens)

    def _transition(self, element: Element) -> None:
        self.transitions[_node_id(element)] = len(self.transitions)

    def _arc(self, element: Element) -> None:
        weight = _natural((_label(element, "inscription") or "1").strip(), 1)
        self.arc_weight.append(weight)
        ends = self._ends(element.get("source", ""), element.get("target", ""))
        if ends is None:
            self.pending.append((len(self.arc_place), element.get("source", ""),
                                 element.get("target", "")))
            ends = (0, 0, False)
        self.arc_place.append(ends[0])
        self.arc_transition.append(ends[1])
        self.arc_input.append(ends[2])

    def _ends(self, source: str, target: str) -> tuple[int, int, bool] | None:
        """(place, transition, input) of an arc, None while an end is not read yet."""
        places, transitions = self.places, self.transitions
        if source in places and target in transitions:
            return places[source], transitions[target], True
        if source in transitions and target in places:
            return places[target], transitions[source], False
        return None

    def _arrays(self) -> PTArrays:
        arc_place = np.frombuffer(self.arc_place, dtype=np.int_).astype(np.int32)
        arc_transition = np.frombuffer(self.arc_transition, dtype=np.int_).astype(np.int32)
        arc_input = np.frombuffer(self.arc_input, dtype=np.int8).astype(bool)
        for arc, source, target in self.pending:
            ends = self._ends(source, target)
            if ends is None:  # dangling, or joining two places or two transitions
                raise _Outside(f"{source} -> {target}")
            arc_place[arc], arc_transition[arc], arc_input[arc] = ends
        return PTArrays(tuple(self.places), tuple(self.transitions),
                        np.frombuffer(self.initial, dtype=np.int64).copy(), arc_place,
                        arc_transition, arc_input,
                        np.frombuffer(self.arc_weight, dtype=np.int64).copy())
