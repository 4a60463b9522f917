"""``tcpn check scenario.yaml --property NAME``: verdicts, costs and counterexample charts.

:func:`run_property_check` checks the property library (:mod:`tcpn.models.properties`)
on a scenario within a loss budget (:func:`tcpn.models.verification.check.verify_all`), prints one
line per property and, below a ``false``, the lost packets and the counterexample as a
message-sequence chart (:mod:`tcpn.reports.checks.msc`); it writes the verdicts as JSON and the
first counterexample's chart as SVG through :mod:`tcpn.outputs` (new files only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from tcpn.models.verification.check import PropertyNet, PropertyResult, property_net, verify_all
from tcpn.outputs import atomic_file, check_output_file
from tcpn.reports.checks.msc import msc_events, msc_svg, msc_text

__all__ = ["PropertyRequest", "result_line", "run_property_check"]


@dataclass(frozen=True)
class PropertyRequest:
    """The options of ``tcpn check SCENARIO --property ...``."""

    scenario: str
    property: str
    segments: int = 4
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


def result_line(result: PropertyResult) -> str:
    """One line per property: answer, name, cost (and why, for n/a and unknown)."""
    line = (f"{result.property.name}: {result.answer.upper()}  ({result.states:,} states, "
            f"{result.edges:,} edges, {result.dead:,} dead, {result.seconds:.2f} s)")
    if result.reason:
        line += f"  {result.reason}"
    return line


def counterexample_text(prepared: PropertyNet, result: PropertyResult) -> str:
    """The lost packets and the chart of a ``false`` result."""
    assert result.verdict is not None and result.verdict.evidence is not None
    lost = ("lost packets " + (", ".join(f"{direction} {list(numbers)}" for direction, numbers
                                         in sorted(result.lost.items())) or "none")
            + " (numbered from 0 per link direction)")
    evidence = result.verdict.evidence
    cycle = (f", then a cycle of {len(evidence.cycle)} repeated forever"
             if evidence.cycle else "")
    return (f"  counterexample: {lost}; {len(evidence.stem)} firings{cycle}\n"
            + msc_text(msc_events(prepared, evidence)))


def run_property_check(request: PropertyRequest, console: Console,
                       err_console: Console) -> bool:
    """Check, print and write; ``True`` when no property is false or unknown."""
    for target in (request.json_file, request.msc_file):
        if target is not None:
            check_output_file(target, request.overwrite)
    prepared = property_net(request.scenario, segments=request.segments,
                            losses=request.losses, ack_losses=request.ack_losses,
                            links=request.links, flow=request.flow,
                            delay_points=request.delay_points, clock=request.clock)
    results = verify_all(request.scenario, request.property, segments=request.segments,
                         losses=request.losses, ack_losses=request.ack_losses,
                         max_states=request.max_states, prepared=prepared)
    where = ", ".join(request.links) if request.links else "any link"
    named = f" (flow {request.flow})" if request.flow else ""
    console.print(f"{request.scenario}{named}: {request.segments} segments, at most "
                  f"{request.losses} data segments and {request.ack_losses} other packets "
                  f"lost per run, on {where}", markup=False, highlight=False, soft_wrap=True)
    for result in results:
        console.print(result_line(result), markup=False, highlight=False, soft_wrap=True)
        if result.answer == "false":
            console.print(counterexample_text(prepared, result), markup=False,
                          highlight=False, soft_wrap=True)
    failed = [r for r in results if r.answer == "false"]
    if request.msc_file is not None:
        if failed:
            first = failed[0]
            assert first.verdict is not None and first.verdict.evidence is not None
            svg = msc_svg(msc_events(prepared, first.verdict.evidence),
                          f"{first.property.name} fails: {request.scenario}")
            _write(request.msc_file, svg, request.overwrite)
            err_console.print(f"wrote {request.msc_file}", markup=False, highlight=False)
        else:
            err_console.print(f"--msc {request.msc_file}: no counterexample, nothing "
                              "written", markup=False, highlight=False)
    if request.json_file is not None:
        document = {"scenario": request.scenario, "flow": request.flow,
                    "segments": request.segments,
                    "losses": request.losses, "ack_losses": request.ack_losses,
                    "results": [r.to_json() for r in results]}
        _write(request.json_file, json.dumps(document, indent=2) + "\n", request.overwrite)
        err_console.print(f"wrote {request.json_file}", markup=False, highlight=False)
    return all(r.answer in ("true", "n/a") for r in results)


def _write(target: str, text: str, overwrite: bool) -> None:
    with atomic_file(target, overwrite) as partial:
        Path(partial).write_text(text, encoding="utf-8")
