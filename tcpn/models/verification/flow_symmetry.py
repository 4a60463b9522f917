"""Symmetry of identical flows in a verification net: one state per orbit of flow exchanges.

Two connections that run the same variant with the same parameters, transfer, start and
TCP settings, over routes that a renaming of nodes maps onto each other with links of the
same rate, delay, header, queue and errors, behave alike up to renaming: exchanging them
(their places ``flowI.*``, their links' places ``X.Y.*``, and the flow number and
destination node of every packet) maps the verification net's behaviour onto itself.
:func:`flow_symmetry` finds those exchanges from the scenario (not from names) and gives
them as a :class:`~tcpn.petrinets.statespace.symmetry.Symmetry` for
``explore(..., symmetry=...)``; it refuses, naming the flow, the parameter or the link at
fault, when no two flows are identical. ``fixed`` keeps flows in place: a property that
names one flow is preserved only by the exchanges of the others (its stabiliser).

What the reduced space answers is the unreduced space's answer for a property whose atoms
read alike at a state and at each of its images: :func:`asymmetric_atom` checks that on
every state of the reduced space under every exchange (every reachable state is the image
of one of them), and :func:`lift_evidence` turns a counterexample of the reduced space into
a path of the net (:func:`~tcpn.petrinets.statespace.symmetry.lift_path`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tcpn.errors import InputError
from tcpn.petrinets.checking.formulas import (
    Bool,
    Clock,
    Compare,
    Const,
    Deadlock,
    Fireable,
    Formula,
    Numeric,
    Predicate,
    Sum,
    Tokens,
    walk,
)
from tcpn.petrinets.checking.verdicts import Evidence
from tcpn.petrinets.net import Token
from tcpn.petrinets.statespace.symmetry import IDENTITY, Renaming, Symmetry, lift_path

if TYPE_CHECKING:
    from tcpn.models.verification import VerificationNet
    from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["asymmetric_atom", "flow_symmetry", "identical_flows", "lift_evidence"]

#: the fields of a connection that say where it runs, not what it is
_PLACEMENT = {"id": "", "group": "", "index": 0, "src": "", "dst": "", "data_route": (),
              "ack_route": (), "data_queues": (), "ack_queues": ()}


def identical_flows(verification: VerificationNet) -> list[list[int]]:
    """The connections (by number ``i`` of ``flowI``) grouped into classes of identical
    ones: same variant, parameters, TCP settings, transfer, start and stop."""
    classes: list[tuple[Any, list[int]]] = []
    for i, flow in enumerate(verification.flows):
        what = flow.model_copy(update=_PLACEMENT)
        for kind, members in classes:
            if kind == what:
                members.append(i)
                break
        else:
            classes.append((what, [i]))
    return [members for _kind, members in classes]


def _directions(verification: VerificationNet) -> dict[tuple[str, str], Any]:
    """Every link direction ``(from, to)`` with what its packets meet there."""
    out = {}
    for link in verification.scenario.links:
        for a, b, direction in link.directions():
            out[(a, b)] = (link.rate_bps, link.delay_s, link.l2_header_bytes, direction,
                           link.wireless)
    return out


def _node_map(verification: VerificationNet, perm: Sequence[int]) -> dict[str, str]:
    """The renaming of nodes that carries each flow's routes onto those of its image."""
    flows = verification.flows
    nodes: dict[str, str] = {}
    for i, j in enumerate(perm):
        for route, image in ((flows[i].data_route, flows[j].data_route),
                             (flows[i].ack_route, flows[j].ack_route)):
            if len(route) != len(image):
                raise InputError(f"--symmetry: flows {flows[i].id} and {flows[j].id} are "
                                 f"identical but their routes differ in length "
                                 f"({' -> '.join(route)} against {' -> '.join(image)})")
            for a, b in zip(route, image, strict=True):
                if nodes.setdefault(a, b) != b:
                    raise InputError(f"--symmetry: exchanging {flows[i].id} and "
                                     f"{flows[j].id} would map node {a} onto both "
                                     f"{nodes[a]} and {b}: their routes are not symmetric")
    if len(set(nodes.values())) != len(nodes):
        raise InputError("--symmetry: exchanging the flows would map two nodes onto one")
    return nodes


def _check_links(verification: VerificationNet, nodes: dict[str, str], what: str) -> None:
    """Refuse unless every link direction's image exists with the same parameters and the
    loss budget's directions are mapped onto themselves."""
    directions = _directions(verification)
    for (a, b), params in directions.items():
        image = (nodes.get(a, a), nodes.get(b, b))
        if image not in directions:
            raise InputError(f"--symmetry: {what} maps link {a}->{b} onto {image[0]}->"
                             f"{image[1]}, which the scenario does not have")
        if directions[image] != params:
            raise InputError(f"--symmetry: {what} maps link {a}->{b} onto {image[0]}->"
                             f"{image[1]}, whose rate, delay, queue or errors differ: the "
                             "topology is not symmetric")
    links = verification.losses.links
    if links is not None:
        moved = {f"{nodes.get(a, a)}->{nodes.get(b, b)}" for a, b in
                 (d.split("->") for d in links)}
        if moved != set(links):
            raise InputError(f"--symmetry: {what} maps the directions that may lose "
                             f"({', '.join(links)}) onto others ({', '.join(sorted(moved))})")


def _is_packet(value: Any) -> bool:
    return getattr(value, "_fields", ())[:2] == ("flow", "dst")


def _constant(verification: VerificationNet, i: int, side: str, name: str) -> int:
    """The number a connection's sender (``side`` "snd") or receiver ("rcv") writes into
    its packets as ``name`` (its flow number, the other end's node number)."""
    net = verification.net
    for transition in net.transitions:
        if transition.startswith(f"flow{i}.{side}."):
            value = net.scope_of(transition).get(name)
            if isinstance(value, int):
                return value
    raise InputError(f"--symmetry: the components of flow {verification.flows[i].id} do not "
                     f"say the {name} their packets carry, so exchanging flows cannot rename "
                     "them")


def _renaming(verification: VerificationNet, perm: Sequence[int],
              nodes: dict[str, str]) -> Renaming:
    """The renaming of places, transitions and packets that exchanges flows as ``perm``."""
    net = verification.net
    numbers: dict[int, int] = {}  # the node numbers packets carry
    flow_numbers: dict[int, int] = {}
    for i, j in enumerate(perm):
        flow_numbers[_constant(verification, i, "snd", "FLOW")] = \
            _constant(verification, j, "snd", "FLOW")
        for side, constant in (("snd", "DST"), ("rcv", "SRC")):
            numbers[_constant(verification, i, side, constant)] = \
                _constant(verification, j, side, constant)

    def name(old: str) -> str:
        head, _, rest = old.partition(".")
        if head.startswith("flow") and head[4:].isdigit():
            return f"flow{perm[int(head[4:])]}.{rest}"
        second, _, tail = rest.partition(".")
        if tail and (head in nodes or second in nodes):
            return f"{nodes.get(head, head)}.{nodes.get(second, second)}.{tail}"
        return old

    def value(v: Any) -> Any:
        if _is_packet(v):
            return v._replace(flow=flow_numbers.get(v.flow, v.flow),
                              dst=numbers.get(v.dst, v.dst))
        if type(v) is tuple:
            return tuple(value(x) for x in v)
        return v

    places = {p: name(p) for p in net.places if name(p) != p}
    transitions = {t: name(t) for t in net.transitions if name(t) != t}
    packets = frozenset(p for p, place in net.places.items()
                        if "Pkt" in repr(place.colour))
    label = ",".join(f"{verification.flows[i].id}->{verification.flows[j].id}"
                     for i, j in enumerate(perm) if i != j)
    return Renaming(label, places, transitions, value, packets)


def _exchangeable(classes: list[list[int]], verification: VerificationNet) -> tuple[
        list[list[int]], str]:
    """The identical flows split further into those whose exchange maps the topology onto
    itself (a transposition of two flows, tried against each part's first flow: exchanges
    compose, so a part's flows can be permuted in every way), parts of one flow dropped; and
    the last reason an exchange was refused ("" when none was)."""
    parts: list[list[int]] = []
    refused = ""
    for members in classes:
        mine: list[list[int]] = []
        for i in members:
            for part in mine:
                perm = list(range(len(verification.flows)))
                perm[i], perm[part[0]] = part[0], i
                try:
                    what = f"exchanging {verification.flows[part[0]].id} and " \
                           f"{verification.flows[i].id}"
                    _check_links(verification, _node_map(verification, perm), what)
                except InputError as exc:
                    refused = str(exc)
                    continue
                part.append(i)
                break
            else:
                mine.append([i])
        parts.extend(part for part in mine if len(part) > 1)
    return parts, refused


def flow_symmetry(verification: VerificationNet, fixed: Sequence[int] = ()) -> Symmetry:
    """The exchanges of identical flows of ``verification`` that keep the flows ``fixed``
    (by number) in place, as a symmetry of its (observed) net; an :class:`InputError`
    saying why when there is none (no two flows identical, or only named ones)."""
    flows = verification.flows
    if len(flows) < 2:
        raise InputError(f"--symmetry: scenario {verification.scenario.name} has one flow; "
                         "the reduction exchanges identical flows")
    if verification.offsets:
        raise InputError("--symmetry: a bulk sender's space keeps sequence numbers relative "
                         "(offset groups); the two reductions are not combined")
    classes = [c for c in identical_flows(verification) if len(c) > 1]
    if not classes:
        what = [f"{f.id}: {f.variant}, {f.bytes} bytes, start {f.start_s} s" for f in flows]
        raise InputError("--symmetry: no two flows are identical (same variant, parameters, "
                         "TCP settings, transfer, start and stop): " + "; ".join(what))
    movable, refused = _exchangeable([[i for i in c if i not in fixed] for c in classes],
                                     verification)
    if not movable and refused:
        raise InputError(refused)
    if not movable:
        named = ", ".join(flows[i].id for i in fixed)
        raise InputError(f"--symmetry: the property speaks of flow {named}, and no two of "
                         "the other flows are identical: the only exchange that keeps it is "
                         "the identity")
    elements = [IDENTITY]
    for images in itertools.product(*(itertools.permutations(c) for c in movable)):
        perm = list(range(len(flows)))
        for members, image in zip(movable, images, strict=True):
            for i, j in zip(members, image, strict=True):
                perm[i] = j
        if perm == sorted(perm):
            continue
        nodes = _node_map(verification, perm)
        label = ", ".join(f"{flows[i].id}->{flows[j].id}" for i, j in enumerate(perm)
                          if i != j)
        _check_links(verification, nodes, f"exchanging flows ({label})")
        elements.append(_renaming(verification, perm, nodes))
    groups = "; ".join("{" + ", ".join(flows[i].id for i in c) + "}" for c in movable)
    return Symmetry(tuple(elements), f"exchanges of identical flows {groups}")


def _value(expression: Numeric, marking: Mapping[str, Any], clock: float) -> float:
    """A numeric expression of a formula on a marking given as ``place -> tokens``."""
    if isinstance(expression, Const):
        return float(expression.value)
    if isinstance(expression, Tokens):
        return float(sum(1 for p in expression.places for t in marking[p]
                         if expression.value is None or t.value == expression.value))
    if isinstance(expression, Sum):
        return sum(_value(term, marking, clock) for term in expression.terms)
    if isinstance(expression, Clock):
        return clock
    raise InputError(f"--symmetry: cannot evaluate {expression!r} on a marking")


def _atom_reader(atom: Formula) -> Callable[[Mapping[str, Any], float], Any] | None:
    """How ``atom`` reads a marking, or ``None`` for atoms every exchange keeps by
    construction (deadlock, constants)."""
    if isinstance(atom, Predicate):
        return atom.function
    if isinstance(atom, Compare):
        return lambda m, c: (atom.op, _value(atom.left, m, c), _value(atom.right, m, c))
    return None


class _Renamed(Mapping[str, list[Any]]):
    """A marking (``place -> tokens``) renamed by an element, each place renamed when read
    (a property reads a few of them)."""

    def __init__(self, marking: Mapping[str, list[Any]], element: Renaming,
                 inverse: Mapping[str, str]):
        self.marking, self.element, self.inverse = marking, element, inverse

    def __getitem__(self, name: str) -> list[Any]:
        value = self.element.value
        return [Token(value(t.value), t.time)
                for t in self.marking[self.inverse.get(name, name)]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.marking)

    def __len__(self) -> int:
        return len(self.marking)


def asymmetric_atom(space: StateSpace, formula: Formula, symmetry: Symmetry) -> str | None:
    """``None`` when every atom of ``formula`` reads alike at every state of the reduced
    ``space`` and at its image under every element of ``symmetry``; else the atom and the
    exchange that tell them apart. Fireability atoms must name a set of transitions that
    every exchange maps onto itself."""
    readers = []
    for atom in walk(formula):
        if isinstance(atom, Fireable):
            for element in symmetry.elements:
                if {element.transition(t) for t in atom.transitions} != set(atom.transitions):
                    return f"fireable({', '.join(atom.transitions)}) under {element.name}"
        elif isinstance(atom, Predicate | Compare):
            reader = _atom_reader(atom)
            if reader is not None:
                readers.append((atom, reader))
        elif not isinstance(atom, Bool | Deadlock):
            continue
    if not readers:
        return None
    inverses = [(element, {image: name for name, image in element.places.items()})
                for element in symmetry.elements[1:]]
    for state in range(space.n_states):
        marking, clock = space.marking(state), space.clock(state)
        for element, inverse in inverses:
            image = _Renamed(marking, element, inverse)
            for atom, reader in readers:
                if reader(marking, clock) != reader(image, clock):
                    return f"{getattr(atom, 'name', atom)!s} under {element.name}"
    return None


def lift_evidence(space: StateSpace, evidence: Evidence) -> Evidence:
    """A path of the symmetry-reduced ``space`` (stem and cycle, from its initial state)
    as a path of the net: the quotient's states found edge by edge, then
    :func:`~tcpn.petrinets.statespace.symmetry.lift_path`."""
    steps = [*evidence.stem, *evidence.cycle]
    states = [0]
    for step in steps:
        edge = next((e for e in space.edges(states[-1]) if e.transition == step.transition
                     and e.binding == step.binding), None)
        if edge is None:
            raise RuntimeError(f"lift_evidence: step {step.transition} is not an edge of the "
                               f"reduced space at state {states[-1]}")
        states.append(edge.target)
    stem, cycle = lift_path(space, states, steps,
                            len(evidence.stem) if evidence.cycle else None)
    return Evidence(stem=stem, cycle=cycle)
