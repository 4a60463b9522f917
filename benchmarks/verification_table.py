"""The evidence table: every property of the library for each sender, n segments, k losses.

For each variant (Tahoe, Reno, NewReno, SACK, ECN NewReno, Vegas, Modified Vegas, adaptive
Vegas, Westwood+, TCP-L, CUBIC, DCTCP, BBR) on ``scenarios/verification/one_flow.yaml``
(with the TCP options a variant needs: :data:`TCP_NEEDS`), each transfer length
``n`` and each budget of ``k`` data and ``j`` other (ACK, SYN) losses per run,
:func:`tcpn.models.verification.check.verify_all` explores the verification net once and checks
every
property of one flow (the cross-flow ones need two); one row per cell: states, edges,
dead markings (runs' ends), CPU seconds (exploration and every check) and one letter per
property (``T`` true, ``F`` false, ``?`` unknown: the cell reached the state budget, its
states then ``>= budget``, ``-`` not applicable). The first counterexample of each
(variant, property) is drawn as a message-sequence chart in ``--figures DIR`` (a new
directory). Run::

    .venv/bin/python benchmarks/verification_table.py --markdown table.md --figures msc/
        [--segments 3-8] [--losses 0-3] [--ack-losses 0-1] [--max-states 300000]
        [--variants tahoe,reno]

Cells are visited by growing cost (n, then k + j); every cell is explored, a cell over
the budget up to it (its count says how far it got). Ctrl-C stops the visit and writes
the cells done, saying so. CPU time is ``time.process_time`` of this process; the load of
the machine is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tcpn.errors import TcpnError
from tcpn.models.properties import PROPERTIES
from tcpn.models.scenario import load_scenario, validate_scenario
from tcpn.models.verification.check import property_net, verify_all
from tcpn.outputs import atomic_directory, atomic_file
from tcpn.reports.checks.msc import msc_events, msc_svg

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios/verification/one_flow.yaml"
VARIANTS = ("tahoe", "reno", "newreno", "sack", "ecn_newreno", "vegas", "modified_vegas",
            "adaptive_vegas", "westwood_plus", "tcp_l", "cubic", "dctcp", "bbr")
#: The scenario's ``tcp`` options a variant's sender needs (BBR's delivery rate counts
#: SACKed segments: the net lens runs it on SACK recovery only).
TCP_NEEDS = {"bbr": {"sack": True}}
LETTER = {"true": "T", "false": "F", "unknown": "?", "n/a": "-"}


def span(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def scenario_for(variant: str):
    data = load_scenario(SCENARIO).model_dump(exclude_unset=True)
    flow = dict(data["flows"][0], variant=variant)
    flow.pop("params", None)
    tcp = {**data.get("tcp", {}), **TCP_NEEDS.get(variant, {})}
    return validate_scenario({**data, "tcp": tcp, "flows": [flow]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", default="3-8")
    parser.add_argument("--losses", default="0-3")
    parser.add_argument("--ack-losses", default="0-1")
    parser.add_argument("--max-states", type=int, default=300_000)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--markdown", required=True)
    parser.add_argument("--figures", required=True)
    args = parser.parse_args()
    names = [name for name, prop in PROPERTIES.items() if not prop.cross]
    header = ("| variant | n | k | j | states | edges | dead | CPU s | "
              + " | ".join(f"P{i + 1}" for i in range(len(names))) + " |")
    rows = [header, "|" + "---|" * (8 + len(names))]
    findings: dict[tuple[str, str], str] = {}
    charts: dict[str, str] = {}
    started = time.process_time()
    cells = sorted(((v, n, k, j) for v in args.variants.split(",") for n in
                    span(args.segments) for k in span(args.losses)
                    for j in span(args.ack_losses)), key=lambda c: (c[1], c[2] + c[3], c))
    try:
        visit(cells, args, names, rows, findings, charts)
    except KeyboardInterrupt:   # Ctrl-C: keep the cells done and say where it stopped
        rows.append(f"\n(interrupted by Ctrl-C after {len(rows) - 2} of {len(cells)} cells)")
    write(args, names, rows, findings, charts, started)


def visit(cells, args, names, rows, findings, charts) -> None:
    refused: set[str] = set()
    for variant, n, k, j in cells:
        if variant in refused:
            continue
        try:
            scenario = scenario_for(variant)
            cpu = time.process_time()
            prepared = property_net(scenario, segments=n, losses=k, ack_losses=j)
            results = verify_all(scenario, "all", segments=n, losses=k,
                                 ack_losses=j, max_states=args.max_states, prepared=prepared)
            cpu = time.process_time() - cpu
        except TcpnError as exc:
            message = str(exc).splitlines()[0]
            rows.append(f"| {variant} | {n} | {k} | {j} | refused: {message} | | | | "
                        + " | ".join("" for _ in names) + " |")
            print(rows[-1], flush=True)
            refused.add(variant)   # the net, not the budget: every cell would say the same
            continue
        results = [r for r in results if r.property.name in names]
        checked = [r for r in results if r.states]
        states = max((r.states for r in checked), default=0)
        edges = max((r.edges for r in checked), default=0)
        dead = max((r.dead for r in checked), default=0)
        over = ">= " if any(r.answer == "unknown" for r in results) else ""
        rows.append(f"| {variant} | {n} | {k} | {j} | {over}{states:,} | {edges:,} | "
                    f"{dead:,} | {cpu:.1f} | "
                    + " | ".join(LETTER[r.answer] for r in results) + " |")
        print(rows[-1], flush=True)
        for result in results:
            key = (variant, result.property.name)
            if result.answer == "false" and key not in findings:
                assert result.verdict is not None and result.verdict.evidence is not None
                name = f"{variant}_{result.property.name}.svg"
                charts[name] = msc_svg(msc_events(prepared, result.verdict.evidence),
                                       f"{result.property.name} fails: {variant}, n={n}, "
                                       f"k={k}, j={j}, lost {lost(result)}")
                findings[key] = f"n={n}, k={k}, j={j}, lost {lost(result)}: {name}"


def lost(result) -> str:
    return ", ".join(f"{d} {list(p)}" for d, p in sorted(result.lost.items())) or "nothing"


def write(args, names, rows, findings, charts, started) -> None:
    load = os.getloadavg()
    legend = "\n".join(f"- P{i + 1} `{name}`: {PROPERTIES[name].description}"
                       for i, name in enumerate(names))
    first = "\n".join(f"- {variant}, `{prop}`: {where}"
                      for (variant, prop), where in sorted(findings.items()))
    document = (f"{legend}\n\n" + "\n".join(rows) + "\n\nFirst counterexample per sender "
                f"and property:\n\n{first}\n\nTotal CPU {time.process_time() - started:.0f} s"
                f", load average {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}, "
                f"max_states {args.max_states:,} per cell.\n")
    with atomic_directory(args.figures) as figures:
        for name, svg in charts.items():
            (figures / name).write_text(svg, encoding="utf-8")
    with atomic_file(args.markdown) as partial:
        Path(partial).write_text(document, encoding="utf-8")
    print(document)
    print(f"wrote {args.markdown} and {len(charts)} charts in {args.figures}", file=sys.stderr)


if __name__ == "__main__":
    main()
