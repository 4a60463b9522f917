"""Observers over a window for a bulk sender's space: bounded, so that its space still closes.

The property observers of a finite transfer (:func:`tcpn.models.verification.check.observe`)
count from the start: the segments delivered, the retransmissions. On a bulk sender
(:mod:`tcpn.models.verification.bulk`) those counts grow without end and the space would
never close. The observers here keep only what a long-run property needs, each a bounded
value beside the components (their arcs only gain an observer arc pair on transitions that
fire anyway: nothing is enabled or disabled by them):

* ``flowI.window_end`` (with a :class:`~tcpn.models.verification.budget.LossBudget` of
  ``per_flight=True``): the sequence number that ends the flow's current *window*: ``nxt``
  when the window began. A window ends at the first sender step after which ``una >=
  window_end`` (every segment outstanding when it began is acknowledged); that step
  refills the loss budget and starts the next window at the new ``nxt``. So "at most
  ``k`` losses per window" is a bound the net enforces, as the per-run budget is. The end
  joins the connection's offset group as a floor (it is only compared with ``una``, and
  is at least ``una`` after every sender step).
* ``flowI.progress``: the parity of the segments delivered to the application (flipped by
  each receiver step that releases data). "Keeps delivering" is then ``GF (parity 0) & GF
  (parity 1)``: the parity changes infinitely often, a *progress event* rather than a
  growing count.
* ``flowI.since_loss`` (with a cwnd target ``W``): ``True`` from a loss of one of the
  flow's packets (a loss choice of a link) until the first sender step that leaves
  ``cwnd >= W``. "cwnd returns to ``W`` after every loss" is ``GF !since_loss``.

Only a one-flow bulk scenario takes a per-window budget (the window is the flow's).

>>> from tcpn.models.scenario import parse_scenario
>>> from tcpn.models.verification import LossBudget, verification_net
>>> s = parse_scenario('''{name: p2p, horizon_s: 10.0, flows: [{src: A, dst: B, variant: reno}],
...   links: [{a: A, b: B, rate_bps: 8.0e+6, delay_s: 0.01}],
...   tcp: {handshake: false, rcv_buf_bytes: 2000, segment_size_bytes: 1000}}''')
>>> v = verification_net(s, segments=None, clock="relative",
...                      losses=LossBudget(data_losses=1, per_flight=True))
>>> sorted(p for p in v.net.places if p.startswith("flow0.window"))
['flow0.window_end']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from tcpn.errors import InputError
from tcpn.models.verification.budget import BUDGET_PLACE, LossBudget
from tcpn.models.verification.choices import LOSS_SUFFIX
from tcpn.petrinets import BOOL, INT, PetriNet, Place
from tcpn.petrinets.net import ArcKind
from tcpn.petrinets.statespace.offsets import OffsetField, OffsetGroup

__all__ = ["OBSERVER_VARIABLE", "add_flight_refill", "add_window_observers",
           "input_variable", "output_expression", "sender_steps"]

#: Observer arcs bind variables named with this prefix (left out when a path is replayed).
OBSERVER_VARIABLE = "_obs_"


def input_variable(net: PetriNet, transition: str, place: str) -> str | None:
    """The variable an input arc of ``transition`` binds to ``place``'s token, if one."""
    for arc in net.arcs_of(transition):
        if (arc.kind is ArcKind.INPUT and arc.place == place and arc.inscription is not None
                and arc.inscription.isidentifier()):
            return arc.inscription
    return None


def output_expression(net: PetriNet, transition: str, place: str) -> str | None:
    """The expression of ``transition``'s unconditional output arc to ``place``, if one."""
    for arc in net.arcs_of(transition):
        if arc.kind is ArcKind.OUTPUT and arc.place == place and arc.when is None:
            return arc.inscription
    return None


def sender_steps(net: PetriNet, prefix: str) -> Iterator[tuple[str, str, str]]:
    """``(transition, old, new)`` for each transition of connection ``prefix`` that takes
    the sender's ``Tcb`` as a variable ``old`` and puts back the expression ``new``: every
    step that can move ``una``, ``nxt`` or ``cwnd``. A transition that would change the
    ``Tcb`` some other way is an :class:`InputError` (an observer would miss it)."""
    tcb = f"{prefix}.snd.tcb"
    for name in net.transitions:
        reads = [a for a in net.arcs_of(name) if a.place == tcb]
        if not reads:
            continue
        old, new = input_variable(net, name, tcb), output_expression(net, name, tcb)
        if old and new:
            yield name, old, new
        elif any(a.kind is ArcKind.OUTPUT for a in reads) and \
                any(a.kind is ArcKind.INPUT for a in reads):
            raise InputError(f"transition {name}: changes {tcb} other than by a variable in "
                             "and one expression out; the window observers cannot follow it")


def _observe(net: PetriNet, place: str, transition: str, output: str) -> None:
    """An observer arc pair on ``transition``: the value of ``place`` bound to a variable of
    its own (named after the place), replaced by ``output`` (which reads that variable)."""
    net.add_input(place, transition, _variable(place))
    net.add_output(place, transition, output)


def _variable(place: str) -> str:
    return OBSERVER_VARIABLE + place.replace(".", "_")


def add_flight_refill(net: PetriNet, prefix: str, budget: LossBudget,
                      group: OffsetGroup) -> OffsetGroup:
    """Add ``prefix.window_end`` and make every sender step refill the loss budget at the end
    of a window (module docstring); return the connection's offset ``group`` with the end
    added as a floor."""
    end = f"{prefix}.window_end"
    net.add_place(Place(end, INT, initial=[0]))
    mark = _variable(end)
    full = f"({budget.data_losses}, {budget.ack_losses})"
    for name, _old, new in list(sender_steps(net, prefix)):
        ended = f"({new}).una >= {mark}"
        net.add_input(BUDGET_PLACE, name, f"{OBSERVER_VARIABLE}budget")
        net.add_output(BUDGET_PLACE, name,
                       f"{full} if {ended} else {OBSERVER_VARIABLE}budget")
        _observe(net, end, name, f"({new}).nxt if {ended} else {mark}")
    floor = OffsetField(shift=lambda v, d: max(v + d, 0) if d < 0 else v + d)
    return replace(group, fields={**group.fields, end: floor})


def add_window_observers(net: PetriNet, prefix: str, flow: int,
                         cwnd_target_segments: int | None) -> None:
    """Add ``prefix.progress`` and, with a cwnd target, ``prefix.since_loss`` (module
    docstring) for connection number ``flow`` (``prefix``: ``flow{flow}``)."""
    progress = f"{prefix}.progress"
    net.add_place(Place(progress, INT, initial=[0]))
    rcv, data = f"{prefix}.rcv.rcv", f"{prefix}.data"
    parity = _variable(progress)
    for name in list(net.transitions):
        if not name.startswith(f"{prefix}.rcv."):
            continue
        old, new = input_variable(net, name, rcv), output_expression(net, name, rcv)
        if old and new and input_variable(net, name, data):
            _observe(net, progress, name,
                     f"(1 - {parity}) if ({new}).nxt > {old}.nxt else {parity}")
    if cwnd_target_segments is None:
        return
    since = f"{prefix}.since_loss"
    net.add_place(Place(since, BOOL, initial=[False]))
    flag = _variable(since)
    for name in list(net.transitions):
        if name.endswith(LOSS_SUFFIX) and any(a.place == BUDGET_PLACE
                                              for a in net.arcs_of(name)):
            _observe(net, since, name, f"True if p.flow == {flow} else {flag}")
    for name, _old, new in list(sender_steps(net, prefix)):
        _observe(net, since, name,
                 f"False if ({new}).cwnd >= {cwnd_target_segments} else {flag}")
