"""Survey: import every CPN Tools file under a directory and compare state spaces with cpncheck.

For each ``*.cpn`` file (recursively): whether ``read_cpn`` imports it complete, partially
(with the element-by-element report) or refuses it, how many of its transitions come in
(counted per page instance: a page used twice counts twice; a refused file counts the
``<trans>`` elements that are not substitution transitions), and, for a file imported
complete with integer time, the state space tcpn builds (absolute clock, as CPN Tools)
beside the one cpncheck builds from the same file: nodes, arcs, dead markings.

    python benchmarks/cpn_import_survey.py DIR [--max-states N] [--no-state-spaces] [--details]
        [--timeout-s S] [--round-trips [--sml]]

``--round-trips`` exports each file imported complete and reads the export back: "same"
when the declarations, guards and arc inscriptions read back equal the first reading's,
"refused" when the export refuses (the reason is printed), "otherwise" else (what
differs first is printed); with ``--sml`` each export and its original are type-checked
by SML/NJ. ``--details`` prints each partial file's left-out elements. The classes of
what was left out are counted over all files: each root cause by its kind of construct,
the elements it took along (a left-out place's transitions, the users of a left-out
declaration) as one class, and the undeclared names met most often. Nothing is timed:
the figures are counts, the same on any machine.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import signal
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tcpn.errors import InputError
from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.exchange.cpn_import import ImportedNet, ReportItem, read_cpn
from tcpn.petrinets.exchange.cpnml import comms_cpn
from tcpn.petrinets.statespace.space import explore


@dataclass
class FileResult:
    """One file's import outcome and state-space figures."""

    name: str
    outcome: str  # complete, partial, refused, crash, hang
    transitions: int
    imported: int
    detail: str
    classes: Counter[str] | None = None
    missing: Counter[str] | None = None
    ours: tuple[int, int, int] | None = None
    theirs: tuple[int, int, int] | None = None
    space_note: str = ""
    round_trip: str = ""  # same, refused, otherwise (with --round-trips)
    round_trip_note: str = ""
    exported: str = ""  # the export's text (with --round-trips)


def left_out_class(item: ReportItem) -> str:
    """The class of construct a left-out element falls in, for the survey's counts."""
    if item.cause is not None:
        return "taken along by another left-out element"
    if item.kind == "monitor":
        return "monitor"
    if item.name.startswith("use ") and "tcpn does not read" in item.reason:
        return "use of an SML file outside the model's directory (or unreadable)"
    if item.name.startswith("use "):
        return "use of an SML file the model does not hold"
    if "syntax error" in item.reason:
        return f"{item.kind}: CPN ML syntax tcpn does not parse"
    if item.missing and comms_cpn(item.missing):
        return f"{item.kind}: Comms/CPN (a connection to an external process)"
    if item.missing and "." in item.missing:
        return (f"{item.kind}: a function of a structure tcpn does not read "
                f"({item.missing.split('.')[0]})")
    if item.missing:
        return f"{item.kind}: a name nothing declares (basis or library function, datatype)"
    declaration = re.match(r"SML '(\w+)' declarations", item.reason)
    if declaration:
        return f"SML '{declaration.group(1)}' declaration"
    # the construct, without the element it sits on or the values it names
    reason = re.sub(r"^arc \S+: ", "arc: ", item.reason)
    reason = re.sub(r"^(guard|code action|time|priority) of transition \S+: ", r"\1: ",
                    reason)
    reason = re.sub(r"\[[^\]]*\]", "[...]", reason)
    return f"{item.kind}: " + re.split(r"[:(]", reason, maxsplit=1)[0].strip()[:70] + (
        ": " + re.split(r"[:(]", reason.split(": ", 1)[1], maxsplit=1)[0].strip()[:60]
        if reason.startswith(("arc: ", "guard: ", "code action: ", "time: ", "priority: "))
        else "")


def file_transitions(path: Path) -> int:
    """The ``<trans>`` elements of a file that are not substitution transitions."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return 0
    return sum(1 for t in root.iter("trans") if t.find("subst") is None)


def state_spaces(path: Path, imported: ImportedNet, max_states: int) -> tuple[
        tuple[int, int, int] | None, tuple[int, int, int] | None, str]:
    """(nodes, arcs, dead) from tcpn and from cpncheck, and why one is missing."""
    from cpncheck.coloured import ColouredNet
    from cpncheck.net import CPNNet
    from cpncheck.statespace import build_state_space

    ours = theirs = None
    notes = []
    try:
        space = explore(imported.net, max_states=max_states, clock="absolute")
        if space.complete:
            ours = (len(space), space.n_edges, len(space.dead_markings()))
        else:
            notes.append(f"tcpn: over {max_states} states")
    except (InputError, FiringError) as exc:  # a firing error: the import was not right
        notes.append(f"tcpn: {type(exc).__name__}: {str(exc)[:90]}")
    try:
        checked = build_state_space(ColouredNet(CPNNet(str(path))), max_states)
        if checked.complete:
            theirs = (checked.n_nodes, checked.n_arcs, len(checked.dead))
        else:
            notes.append(f"cpncheck: over {max_states} states")
    except Exception as exc:  # cpncheck refuses what it can't read, in its own ways
        notes.append(f"cpncheck: {type(exc).__name__}: {str(exc)[:90]}")
    return ours, theirs, "; ".join(notes)


class _Hang(Exception):
    """An import that gave no answer within the survey's time bound."""


@contextlib.contextmanager
def time_bound(seconds: int, name: str) -> Iterator[None]:
    """Stop what runs inside after ``seconds`` (SIGALRM; where there is none, no bound)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _Hang(name)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _reading(imported: ImportedNet) -> tuple[dict[str, str], list[tuple[str, ...]],
                                             dict[str, str]]:
    """What a round trip must keep: declarations, arc inscriptions, guards."""
    net = imported.net
    return ({k: repr(v) for k, v in net.declarations.items()},
            [(str(a.kind), a.place, a.transition, str(a.inscription)) for a in net.arcs],
            {t.name: str(t.guard) for t in net.transitions.values()})


def round_trip(imported: ImportedNet) -> tuple[str, str, str]:
    """("same" | "refused" | "otherwise", what was refused or differs first, the export)."""
    from tcpn.petrinets.exchange.cpn_export import to_cpn

    try:
        text = to_cpn(imported.net)
        again = read_cpn(text.encode("iso-8859-1"))
    except InputError as exc:
        return "refused", str(exc).splitlines()[0][:200], ""
    first, second = _reading(imported), _reading(again)
    for label, a, b in zip(("declarations", "arcs", "guards"), first, second, strict=True):
        if a != b:
            if isinstance(a, dict) and isinstance(b, dict):
                keys = sorted(set(a) ^ set(b)) or [k for k in a if a[k] != b.get(k)]
                return "otherwise", f"{label}: {keys[:3]}", text
            diff = [(x, y) for x, y in zip(a, b, strict=False) if x != y]
            return "otherwise", f"{label}: {diff[:1] or (len(a), len(b))}", text
    return "same", "", text


def survey(directory: Path, max_states: int | None, timeout_s: int = 300,
           round_trips: bool = False) -> list[FileResult]:
    """Import every ``*.cpn`` under ``directory``; state spaces where the import is complete
    (none when ``max_states`` is None). An import that raises something other than
    :class:`InputError` counts as a crash, one that takes over ``timeout_s`` as a hang."""
    results = []
    for path in sorted(directory.rglob("*.cpn")):
        name = str(path.relative_to(directory))
        try:
            with time_bound(timeout_s, name):
                imported = read_cpn(path)
        except InputError as exc:
            results.append(FileResult(name, "refused", file_transitions(path), 0, str(exc)))
            continue
        except _Hang:
            results.append(FileResult(name, "hang", file_transitions(path), 0,
                                      f"no answer within {timeout_s} s"))
            continue
        except Exception as exc:  # an internal error: counted, never the end of the survey
            results.append(FileResult(name, "crash", file_transitions(path), 0,
                                      f"internal error: {type(exc).__name__}: {exc}"))
            continue
        report = imported.report
        left_out = sum(1 for item in report.unsupported if item.kind == "transition")
        kept = len(imported.net.transitions)
        result = FileResult(name, "complete" if imported.complete else "partial",
                            kept + left_out, kept, report.text(),
                            Counter(left_out_class(i) for i in report.unsupported),
                            Counter(i.missing for i in report.unsupported
                                    if i.missing and i.cause is None))
        if round_trips and imported.complete:
            try:
                with time_bound(timeout_s, name):
                    result.round_trip, result.round_trip_note, result.exported = \
                        round_trip(imported)
            except _Hang:
                result.round_trip, result.round_trip_note = "otherwise", "hang"
            except Exception as exc:  # an internal error of the export: counted
                result.round_trip = "otherwise"
                result.round_trip_note = f"internal error: {type(exc).__name__}: {exc}"
        if max_states is None:
            pass
        elif imported.complete and not imported.real_time:
            print(f"state spaces of {name} ...", file=sys.stderr, flush=True)
            result.ours, result.theirs, result.space_note = state_spaces(
                path, imported, max_states)
        elif imported.complete:
            result.space_note = "real time (cpncheck reads integer time only)"
        results.append(result)
    return results


def type_checks(directory: Path, results: list[FileResult]) -> None:
    """How many exports SML/NJ type-checks, beside their originals (CPN Tools compiles
    with SML/NJ: an export failing where its original passes is the export's fault)."""
    from tcpn.petrinets.exchange.smlcheck import check_with_sml

    both = fails = 0
    for r in results:
        original = check_with_sml(directory / r.name).ok
        exported = check_with_sml(r.exported)
        both += original and exported.ok
        if original and not exported.ok:
            fails += 1
            first = exported.causes()[0] if exported.causes() else exported.errors[0]
            print(f"- {r.name}: export fails SML/NJ: {first.where}: "
                  f"{first.message.splitlines()[0][:160]}")
    print(f"SML/NJ: {both} exports type-check where their originals do, {fails} fail where "
          "their originals pass")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--max-states", type=int, default=5_000)
    parser.add_argument("--no-state-spaces", action="store_true",
                        help="only import (the state spaces take minutes: cpncheck is slow)")
    parser.add_argument("--timeout-s", type=int, default=300,
                        help="an import taking longer counts as a hang")
    parser.add_argument("--round-trips", action="store_true",
                        help="export each complete file and read it back")
    parser.add_argument("--sml", action="store_true",
                        help="with --round-trips: type-check each export and its original "
                             "with SML/NJ's sml")
    parser.add_argument("--details", action="store_true",
                        help="print each partial or refused file's report")
    args = parser.parse_args(argv)
    results = survey(args.directory, None if args.no_state_spaces else args.max_states,
                     args.timeout_s, args.round_trips)
    counts = {o: sum(r.outcome == o for r in results) for o in ("complete", "partial",
                                                                "refused", "crash", "hang")}
    total = sum(r.transitions for r in results)
    kept = sum(r.imported for r in results)
    print("| file | import | transitions | tcpn nodes/arcs/dead | cpncheck nodes/arcs/dead"
          " | same |")
    print("|---|---|---|---|---|---|")
    for r in results:
        ours = "/".join(map(str, r.ours)) if r.ours else ""
        theirs = "/".join(map(str, r.theirs)) if r.theirs else ""
        same = ("yes" if r.ours == r.theirs else "**no**") if r.ours and r.theirs else \
            r.space_note
        print(f"| {r.name} | {r.outcome} | {r.imported}/{r.transitions} | {ours} | {theirs}"
              f" | {same} |")
    compared = [r for r in results if r.ours and r.theirs]
    print(f"\n{len(results)} files: {counts['complete']} complete, {counts['partial']} "
          f"partial, {counts['refused']} refused, {counts['crash']} crashed, {counts['hang']} "
          f"hung; {kept} of {total} transitions imported "
          f"({100 * kept / max(total, 1):.1f} %); state spaces compared on {len(compared)} "
          f"files, {sum(r.ours == r.theirs for r in compared)} the same")
    classes = sum((r.classes for r in results if r.classes), Counter())
    missing = sum((r.missing for r in results if r.missing), Counter())
    print("\n| left out (all files) | elements |\n|---|---|")
    for label, n in classes.most_common():
        print(f"| {label} | {n} |")
    if missing:
        print("\nnames nothing declares, most met: " + ", ".join(
            f"{name} ({n})" for name, n in missing.most_common(15)))
    if args.round_trips:
        trips = Counter(r.round_trip for r in results if r.round_trip)
        print(f"\nround trips of the {sum(trips.values())} complete files: {trips['same']} "
              f"read back the same, {trips['refused']} export refused, {trips['otherwise']} "
              "read back otherwise")
        for r in results:
            if r.round_trip in ("refused", "otherwise"):
                print(f"- {r.name}: {r.round_trip}: {r.round_trip_note}")
    if args.round_trips and args.sml:
        type_checks(args.directory, [r for r in results if r.exported])
    if args.details:
        for r in results:
            if r.outcome != "complete":
                print(f"\n## {r.name} ({r.outcome})\n{r.detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
