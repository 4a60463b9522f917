"""``tcpn check scenario.yaml --property NAME``: verdicts, costs and counterexample charts.

:func:`run_property_check` checks the property library (:mod:`tcpn.models.properties`)
on a scenario within a loss budget (:func:`tcpn.models.verification.check.verify_all`), prints one
line per property and, below a ``false``, the lost packets and the counterexample as a
message-sequence chart (:mod:`tcpn.reports.checks.msc`); it writes the verdicts as JSON and the
first counterexample's chart as SVG through :mod:`tcpn.outputs` (new files only). With
``confirm`` (lens names) each counterexample is replayed in those lenses
(:func:`tcpn.experiments.confirm.confirm`): one line per lens says whether the violation
shows at packet level, and the SVG holds the model's chart beside each run's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from tcpn.errors import InputError
from tcpn.experiments.confirm import Confirmation, confirm
from tcpn.models.verification.bulk import DEFAULT_RTT_GRAIN_S
from tcpn.models.verification.check import PropertyNet, PropertyResult, property_net, verify_all
from tcpn.outputs import atomic_file, check_output_file
from tcpn.reports.checks.msc import MscEvent, msc_events, msc_side_by_side, msc_svg, msc_text
from tcpn.reports.checks.trace_msc import trace_msc_events

__all__ = ["PropertyRequest", "result_line", "run_property_check"]


@dataclass(frozen=True)
class PropertyRequest:
    """The options of ``tcpn check SCENARIO --property ...``."""

    scenario: str
    property: str
    #: ``None``: a bulk sender
    segments: int | None = 4
    losses: int = 0
    ack_losses: int = 0
    links: tuple[str, ...] | None = None
    max_states: int | None = 1_000_000
    json_file: str | None = None
    msc_file: str | None = None
    overwrite: bool = False
    flow: str | None = None
    delay_points: int | None = None
    clock: str = "absolute"
    #: lenses to replay each counterexample in (empty: no replay)
    confirm: tuple[str, ...] = ()
    #: a bulk sender's loss scope and observers (:mod:`tcpn.models.verification.window`)
    per_window: bool = False
    unbounded_losses: bool = False
    cwnd_target: int | None = None
    rtt_grain_s: float = DEFAULT_RTT_GRAIN_S
    #: reduce the space by exchanges of identical flows
    #: (:mod:`~tcpn.models.verification.flow_symmetry`)
    symmetry: bool = False
    #: ``window_share``'s ``R`` (``--share-ratio``)
    share_ratio: float | None = None


def result_line(result: PropertyResult) -> str:
    """One line per property: answer, name, cost (and why, for n/a and unknown)."""
    line = (f"{result.property.name}: {result.answer.upper()}  ({result.states:,} states, "
            f"{result.edges:,} edges, {result.dead:,} dead, {result.seconds:.2f} s)")
    if result.symmetry and result.answer != "n/a":
        line += f"  [states are orbits: {result.symmetry}]"
    if result.reason:
        line += f"  {result.reason}"
    return line


#: Events of a counterexample's chart printed on the terminal (the rest: ``--msc FILE``).
CHART_EVENTS = 200


def counterexample_text(prepared: PropertyNet, result: PropertyResult) -> str:
    """The lost packets and the chart of a ``false`` result (its first and last events,
    and those around each loss and timer, when it has more than :data:`CHART_EVENTS`)."""
    assert result.verdict is not None and result.verdict.evidence is not None
    lost = ("lost packets " + (", ".join(f"{direction} {list(numbers)}" for direction, numbers
                                         in sorted(result.lost.items())) or "none")
            + " (numbered from 0 per link direction)")
    evidence = result.verdict.evidence
    cycle = (f", then a cycle of {len(evidence.cycle)} repeated forever"
             if evidence.cycle else "")
    return (f"  counterexample: {lost}; {len(evidence.stem)} firings{cycle}\n"
            + msc_text(msc_events(prepared, evidence), max_events=CHART_EVENTS))


def bulk_replay_line(prepared: PropertyNet, result: PropertyResult) -> str:
    """The bulk counterexample (its stem, then its cycle twice) fired in the simulator on the
    unreduced net (:meth:`PropertyNet.replay`): how far it went in absolute terms."""
    assert result.verdict is not None and result.verdict.evidence is not None
    evidence = result.verdict.evidence
    steps = [*evidence.stem, *evidence.cycle, *evidence.cycle]
    try:
        firings = prepared.replay([(s.transition, s.binding) for s in steps])
    except InputError as exc:
        return f"  replay in the simulator FAILED: {exc}"
    sent = [f.binding["p"].seq for f in firings if isinstance(f.binding.get("p"), tuple)
            and getattr(f.binding["p"], "seq", -1) >= 0]
    return (f"  replayed in the simulator (absolute numbers and time, the cycle twice): "
            f"{len(firings)} firings to t = {firings[-1].time:.4f} s" if firings else
            "  replayed in the simulator: no firings") + (
            f", segments up to #{max(sent)}" if sent else "")


def run_property_check(request: PropertyRequest, console: Console,
                       err_console: Console) -> bool:
    """Check, print and write; ``True`` when no property is false or unknown."""
    for target in (request.json_file, request.msc_file):
        if target is not None:
            check_output_file(target, request.overwrite)
    bulk = request.segments is None
    if bulk and request.confirm:
        raise InputError("--confirm replays a finite transfer's losses in other lenses; a "
                         "bulk counterexample is replayed in the simulator (printed below it)")
    prepared = property_net(request.scenario, segments=request.segments,
                            losses=request.losses, ack_losses=request.ack_losses,
                            links=request.links, flow=request.flow,
                            delay_points=request.delay_points, clock=request.clock,
                            per_flight=request.per_window,
                            unbounded=request.unbounded_losses,
                            cwnd_target_segments=request.cwnd_target,
                            rtt_grain_s=request.rtt_grain_s,
                            share_ratio=request.share_ratio)
    results = verify_all(request.scenario, request.property, segments=request.segments,
                         losses=request.losses, ack_losses=request.ack_losses,
                         max_states=request.max_states, prepared=prepared,
                         symmetry=request.symmetry, share_ratio=request.share_ratio)
    where = ", ".join(request.links) if request.links else "any link"
    named = f" (flow {request.flow})" if request.flow else ""
    scope = ("without limit" if request.unbounded_losses else
             "per window" if request.per_window else "per run")
    length = "a bulk sender" if bulk else f"{request.segments} segments"
    console.print(f"{request.scenario}{named}: {length}, at most "
                  f"{request.losses} data segments and {request.ack_losses} other packets "
                  f"lost {scope}, on {where}", markup=False, highlight=False, soft_wrap=True)
    confirmations: dict[str, Confirmation] = {}
    for result in results:
        console.print(result_line(result), markup=False, highlight=False, soft_wrap=True)
        if result.answer == "false":
            console.print(counterexample_text(prepared, result), markup=False,
                          highlight=False, soft_wrap=True)
            if bulk:
                console.print(bulk_replay_line(prepared, result), markup=False,
                              highlight=False, soft_wrap=True)
            if request.confirm:
                confirmation = confirm(prepared, result, request.confirm)
                confirmations[result.property.name] = confirmation
                console.print("  replayed from the same start with the path's losses "
                              "scripted:\n" + "\n".join(f"    {line}" for line in
                                                        confirmation.lines()),
                              markup=False, highlight=False, soft_wrap=True)
    failed = [r for r in results if r.answer == "false"]
    if request.msc_file is not None:
        if failed:
            first = failed[0]
            assert first.verdict is not None and first.verdict.evidence is not None
            title = f"{first.property.name} fails: {request.scenario}"
            model = msc_events(prepared, first.verdict.evidence)
            replayed = confirmations.get(first.property.name)
            svg = (msc_side_by_side(_charts(model, replayed), title)
                   if replayed is not None else msc_svg(model, title))
            _write(request.msc_file, svg, request.overwrite)
            err_console.print(f"wrote {request.msc_file}", markup=False, highlight=False)
        else:
            err_console.print(f"--msc {request.msc_file}: no counterexample, nothing "
                              "written", markup=False, highlight=False)
    if request.json_file is not None:
        document = {"scenario": request.scenario, "flow": request.flow,
                    "segments": request.segments,
                    "losses": request.losses, "ack_losses": request.ack_losses,
                    "results": [_with_confirmation(r.to_json(),
                                                   confirmations.get(r.property.name))
                                for r in results]}
        _write(request.json_file, json.dumps(document, indent=2) + "\n", request.overwrite)
        err_console.print(f"wrote {request.json_file}", markup=False, highlight=False)
    return all(r.answer in ("true", "n/a") for r in results)


def _charts(model: list[MscEvent], confirmation: Confirmation
            ) -> list[tuple[str, list[MscEvent]]]:
    """The model's chart, then each replayed run's (of the flow the property names)."""
    charts = [("model (counterexample)", model)]
    for replay in confirmation.replays:
        answer = "violation shows" if replay.verdict.shows else "does not show"
        charts.append((f"{replay.lens} lens: {answer}",
                       trace_msc_events(replay.trace, confirmation.flow)))
    return charts


def _with_confirmation(document: dict[str, Any], confirmation: Confirmation | None
                       ) -> dict[str, Any]:
    if confirmation is not None:
        document["confirmation"] = confirmation.to_json()
    return document


def _write(target: str, text: str, overwrite: bool) -> None:
    with atomic_file(target, overwrite) as partial:
        Path(partial).write_text(text, encoding="utf-8")
