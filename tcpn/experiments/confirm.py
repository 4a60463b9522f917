"""Confirming a counterexample at packet level: replay its losses in the net lens and ns-3.

A ``false`` of the property library (:func:`tcpn.models.verification.check.verify_all`)
comes with a path of the verification net: the packets it loses are numbered, per link
direction, as a scripted loss list numbers arrivals (every packet arriving over the
direction, handshake included, from 0: :meth:`VerificationNet.scripted_losses`).
:func:`replay_scenario` writes those numbers into the scenario as ``error_model: {kind:
list}`` on each direction that may lose, makes the flow a finite transfer of ``segments x
segment size`` bytes, and keeps every start time the scenario fixes: the same start.
:func:`confirm` runs it in each lens asked for (``net``, ``ns3``), reads the property on
each run's trace (:func:`tcpn.models.trace_properties.trace_verdict`) and says whether the
violation shows, and which packets each run lost beside those the path lost.

A replay is refused (:class:`ReplayRefused`, naming why) when a lens cannot take the
path's choices as scripted arrivals: a wireless link (its losses are draws of its
attempts), RED early drops (draws), a random start time or gap (the path chose one), a
random error model left on a direction, a lasso whose repeated cycle loses packets (a list
is finite), or a property a trace cannot decide. The run's horizon is the scenario's, or
``2 x`` the path's last clock ``+ 1 s`` when that is later (a run must outlast the path).

>>> from tcpn.models.scenario import load_scenario
>>> from tcpn.models.verification.check import property_net, verify_all
>>> s = load_scenario("scenarios/verification/one_flow.yaml")  # doctest: +SKIP
>>> prepared = property_net(s, segments=6)  # doctest: +SKIP
>>> result = verify_all(s, "no_spurious_retransmission", segments=6, prepared=prepared)[0]
... # doctest: +SKIP
>>> confirm(prepared, result, lenses=("net",)).replays[0].verdict.shows  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tcpn.errors import TcpnError
from tcpn.lenses import evaluate
from tcpn.models.components.packets import ACK_SEQ
from tcpn.models.scenario import RateErrors, Scenario
from tcpn.models.trace_properties import TraceVerdict, refusal, trace_verdict
from tcpn.models.traces import ScenarioResult, Trace
from tcpn.models.verification.check import PropertyNet, PropertyResult
from tcpn.models.verification.choices import LOSS_SUFFIX
from tcpn.petrinets.checking.verdicts import Evidence

__all__ = ["Confirmation", "Replay", "ReplayRefused", "confirm", "path_losses", "replay_scenario",
           "trace_losses"]

#: A lost packet: (link direction or queue ``A->B``, ``seg k`` / ``ack k`` / ``handshake``).
Loss = tuple[str, str]


class ReplayRefused(TcpnError):
    """The path cannot be replayed as scripted losses in a lens (the message says why)."""


@dataclass(frozen=True)
class Replay:
    """One lens's run of the replay scenario and what its trace says."""

    lens: str
    verdict: TraceVerdict
    lost: tuple[Loss, ...]
    result: ScenarioResult

    @property
    def trace(self) -> Trace:
        """The run's packet trace."""
        return self.result.trace


@dataclass
class Confirmation:
    """A counterexample replayed: the scenario run, the path's losses and each lens's run
    (``refused``: why no replay was built, then nothing ran)."""

    property: str
    flow: str
    scenario: Scenario | None = None
    path_lost: tuple[Loss, ...] = ()
    replays: list[Replay] = field(default_factory=list)
    refused: str = ""
    #: the model clock at the path's last firing (the time its violation is reached)
    path_end_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form: per lens whether the violation shows, its evidence, the losses."""
        if self.refused:
            return {"refused": self.refused}
        return {"path_lost": [list(x) for x in self.path_lost],
                "path_end_s": self.path_end_s,
                "lenses": {r.lens: {"shows": r.verdict.shows, "evidence": r.verdict.evidence,
                                    "lost": [list(x) for x in r.lost]}
                           for r in self.replays}}

    def lines(self) -> list[str]:
        """One line per lens: whether the violation shows, its evidence, the losses."""
        if self.refused:
            return [f"replay refused: {self.refused}"]
        out = [f"model: the path reaches the violation at {self.path_end_s:.3f} s, losing "
               f"{_losses(self.path_lost)}"]
        for replay in self.replays:
            answer = {True: "violation shows", False: "does not show",
                      None: "cannot say"}[replay.verdict.shows]
            same = ("the path's losses" if sorted(replay.lost) == sorted(self.path_lost)
                    else f"losses {_losses(replay.lost)}, the path's {_losses(self.path_lost)}")
            out.append(f"{replay.lens}: {answer}: {replay.verdict.evidence} ({same})")
        return out


def _losses(lost: Sequence[Loss]) -> str:
    return ", ".join(f"{label} ({where})" for where, label in lost) or "none"


def _steps(evidence: Evidence) -> list[Any]:
    return [*evidence.stem, *evidence.cycle]


def path_losses(prepared: PropertyNet, evidence: Evidence) -> tuple[Loss, ...]:
    """The packets of the flow the property names that the path loses to links and queue
    drops, as :func:`trace_losses` names them (handshake packets as ``handshake``; another
    flow's losses are left out, as a trace's rows of that flow leave them out)."""
    verification = prepared.verification
    links = {role.places["idle"].rsplit(".", 1)[0]: key.removesuffix(".link")
             for key, role in verification.roles.items() if role.kind == "link"}
    drops = {t: key.removesuffix(".queue") for key, role in verification.roles.items()
             if role.kind == "queue" for t, kind in role.events.items() if kind == "drop"}
    index = int(prepared.flow.prefix.removeprefix("flow"))
    lost: list[Loss] = []
    for step in _steps(evidence):
        name, packet = step.transition, step.binding.get("p")
        if packet is None or packet.flow != index:
            continue
        if name in verification.twins and name.endswith(LOSS_SUFFIX):
            where = links[name.rsplit(".", 1)[0]]
        elif name in drops:
            where = drops[name]
        else:
            continue
        lost.append((where, _label(packet)))
    return tuple(lost)


def _label(packet: Any) -> str:
    """``seg k``, ``ack k``, or ``handshake`` (SYN, SYN-ACK, and an ACK of nothing: a trace
    tells the handshake's ACK from ``ack 0`` by neither)."""
    if packet.seq >= 0:
        return f"seg {packet.seq}"
    if packet.seq == ACK_SEQ and packet.ack > 0:
        return f"ack {packet.ack}"
    return "handshake"


def trace_losses(trace: Trace, flow: str) -> tuple[Loss, ...]:
    """The packets of ``flow`` a run lost (``drop``, ``ack_drop`` rows; an ACK lost before
    the first data segment left is a handshake packet)."""
    size = trace.segment_size_bytes(flow)
    sends = trace.events(flow=flow, event="send").time_s
    first_send_s = float(sends.iloc[0]) if len(sends) else float("inf")
    rows = trace.events(flow=flow, event=("drop", "ack_drop"))
    lost: list[Loss] = []
    for time_s, event, seq, where in zip(rows.time_s, rows.event, rows.seq, rows["where"],
                                         strict=True):
        if event == "drop":
            lost.append((str(where), f"seg {int(seq) // size}"))
        elif time_s < first_send_s or int(seq) <= 0:
            lost.append((str(where), "handshake"))
        else:
            lost.append((str(where), f"ack {int(seq) // size}"))
    return tuple(lost)


def replay_scenario(prepared: PropertyNet, evidence: Evidence) -> Scenario:
    """The scenario whose run replays ``evidence``'s losses from the same start (see the
    module docstring); :class:`ReplayRefused` names what cannot be scripted."""
    verification = prepared.verification
    scenario = verification.scenario
    for link in scenario.links:
        if link.wireless is not None:
            raise ReplayRefused(f"link {link.a}--{link.b} is wireless: its losses are draws "
                                "of its attempts, which a lens makes itself, not arrival "
                                "numbers it can script")
    if verification.start_chain:
        raise ReplayRefused("a flow starts at a random time (start_s or gap_s uniform): the "
                            "path chose one, a lens draws its own")
    steps = _steps(evidence)
    drawn = sorted({s.transition for s in steps if verification.draws.get(s.transition)})
    if drawn:
        raise ReplayRefused(f"the path forces random draws ({', '.join(drawn)}: RED early "
                            "drops or marks) that a lens draws itself")
    cycle = [(s.transition, s.binding) for s in evidence.cycle]
    if verification.scripted_losses(cycle):
        raise ReplayRefused(f"the path's cycle of {len(cycle)} firings loses packets each "
                            "time it repeats; a scripted loss list is finite")
    lost = verification.scripted_losses([(s.transition, s.binding) for s in steps])
    replay = verification.simulation_scenario(lost)
    for link in replay.links:
        for a, b, direction in link.directions():
            if isinstance(direction.errors, RateErrors):
                raise ReplayRefused(f"link direction {a}->{b} keeps a random error model "
                                    "outside the loss budget; the replay would add losses "
                                    "the path does not have")
    end_s = max((s.clock or 0.0 for s in steps), default=0.0)
    horizon_s = max(replay.horizon_s, 2.0 * end_s + 1.0)
    return replay.model_copy(update={"horizon_s": horizon_s})


def confirm(prepared: PropertyNet, result: PropertyResult,
            lenses: Sequence[str] = ("net", "ns3"), seed: int | None = None,
            options: Mapping[str, Mapping[str, Any]] | None = None) -> Confirmation:
    """Replay ``result``'s counterexample in each of ``lenses`` and read its property on
    each run (``options``: per lens, the lens's keyword options)."""
    name = result.property.name
    flow = prepared.flow.name
    if result.verdict is None or result.verdict.evidence is None:
        return Confirmation(name, flow, refused=f"{name} has no counterexample "
                            f"(answer {result.answer})")
    why = refusal(name)
    if why is not None:
        return Confirmation(name, flow, refused=why)
    evidence = result.verdict.evidence
    try:
        scenario = replay_scenario(prepared, evidence)
    except ReplayRefused as refused:
        return Confirmation(name, flow, refused=str(refused))
    confirmation = Confirmation(name, flow, scenario, path_losses(prepared, evidence),
                                path_end_s=max((s.clock or 0.0 for s in _steps(evidence)),
                                               default=0.0))
    for lens in lenses:
        run = evaluate(scenario, lens, seed=seed, **dict((options or {}).get(lens, {})))
        trace = run.trace
        confirmation.replays.append(Replay(lens, trace_verdict(name, trace, flow,
                                                               prepared.flow.share_ratio),
                                           trace_losses(trace, flow), run))
    return confirmation
