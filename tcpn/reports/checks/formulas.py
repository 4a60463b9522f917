"""What ``tcpn check`` does once its options are read: check formulas, print, write JSON.

:class:`CheckRequest` holds every option of the command (one place: a new option is one
field here and one parameter in ``tcpn/cli.py``); :func:`run_check` runs it and prints a
line per verdict, each answer's path when one shows it, and the standard report.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from tcpn.errors import InputError, TcpnError
from tcpn.outputs import atomic_file, check_output_file
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.fairness import Fairness
from tcpn.petrinets.checking.formulas import QUANTIFIERS, A, Formula
from tcpn.petrinets.checking.statistical import estimate, path_formula, probability_at_least
from tcpn.petrinets.checking.text import parse, to_text
from tcpn.petrinets.checking.verdicts import Evidence, Verdict
from tcpn.petrinets.net import PetriNet
from tcpn.petrinets.statespace.memory import out_of_memory_reason
from tcpn.petrinets.statespace.space import StateSpace, explore

__all__ = ["CheckRequest", "run_check"]


@dataclass(frozen=True)
class CheckRequest:
    """The options of ``tcpn check`` (see ``tcpn check --help``)."""

    net: PetriNet
    source: str
    ctl: tuple[str, ...] = ()
    ltl: tuple[str, ...] = ()
    askctl: tuple[str, ...] = ()
    report: bool = False
    max_states: int | None = 5_000_000
    time_limit_s: float | None = None
    weak_fair: str | None = None
    strong_fair: str | None = None
    reduction: str | None = None
    json_file: str | None = None
    overwrite: bool = False
    earliest: tuple[str, ...] = ()
    latest: tuple[str, ...] = ()
    probability: tuple[str, ...] = ()
    at_least: float | None = None
    runs: int | None = None
    seed: int = 0


def fairness_of(net: PetriNet, weak: str | None, strong: str | None) -> Fairness | None:
    """The fairness assumption named by ``--weak-fair``/``--strong-fair`` (``all``: every
    transition); unknown transitions are an :class:`InputError`."""
    def names(option: str, text: str | None) -> tuple[str, ...]:
        if not text:
            return ()
        if text.strip() == "all":
            return tuple(net.transitions)
        found = tuple(n.strip() for n in text.split(",") if n.strip())
        for name in found:
            if name not in net.transitions:
                raise InputError(f"{option}: no transition named {name!r} in net {net.name}")
        return found

    weak_names, strong_names = names("--weak-fair", weak), names("--strong-fair", strong)
    return Fairness(weak_names, strong_names) if weak_names or strong_names else None


def _quoted(text: str, shown: int = 40) -> str:
    """``text`` quoted for an error message: whole when short, else its first and last
    ``shown`` characters and its length (the error's column locates the fault), so that
    a formula of megabytes does not fill the terminal.

    >>> _quoted("AG true")
    "'AG true'"
    >>> _quoted("AG (" + " and ".join(["true"] * 100) + ")", shown=8)
    "'AG (true … nd true)' (900 characters)"
    """
    if len(text) <= 3 * shown:
        return repr(text)
    return f"{text[:shown] + ' … ' + text[-shown:]!r} ({len(text):,} characters)"


def formulas_of(request: CheckRequest) -> list[Formula]:
    """The formulas to check: every ``--ctl``, every ``--ltl`` under ``A`` unless it
    starts with a quantifier, every ``--askctl``."""
    from tcpn.petrinets.checking.askctl import read_askctl

    def read(option: str, text: str, reader: Any) -> Formula:
        try:
            formula: Formula = reader(text, request.net)
        except InputError as exc:  # which of the options, when there are several
            raise InputError(f"{option} {_quoted(text)}: {exc}") from None
        return formula

    found = [read("--ctl", text, parse) for text in request.ctl]
    for text in request.ltl:
        formula = read("--ltl", text, parse)
        found.append(formula if isinstance(formula, QUANTIFIERS) else A(formula))
    found += [read("--askctl", text, read_askctl) for text in request.askctl]
    return found


def times_of(request: CheckRequest) -> list[tuple[Any, Formula]]:
    """The timed questions: (``earliest`` or ``latest``, the goal) for every
    ``--earliest`` and ``--latest`` (a state formula: a marking to reach), answered on
    the relative-time state space (:mod:`tcpn.petrinets.checking.timed`)."""
    from tcpn.petrinets.checking.timed import earliest, latest

    found = []
    for option, texts, which in (("--earliest", request.earliest, earliest),
                                 ("--latest", request.latest, latest)):
        for text in texts:
            try:
                goal = parse(text, request.net)
            except InputError as exc:
                raise InputError(f"{option} {_quoted(text)}: {exc}") from None
            if isinstance(goal, QUANTIFIERS):
                raise InputError(f"{option} {_quoted(text)}: give the marking to reach (e.g. "
                                 "tokens(delivered) >= 2), without a path quantifier")
            if not request.net.is_timed:
                raise InputError(f"{option} {_quoted(text)}: net {request.net.name} is untimed: "
                                 "it has no time to reach anything at")
            found.append((which, goal))
    return found


def run_check(request: CheckRequest, console: Console, err_console: Console) -> bool:
    """Check, print and write; ``True`` when every formula holds."""
    if request.json_file is not None:
        check_output_file(request.json_file, request.overwrite)  # before the work
    if not (request.ctl or request.ltl or request.askctl or request.report
            or request.earliest or request.latest or request.probability):
        raise InputError("nothing to check: give --ctl, --ltl, --askctl, --earliest, "
                         "--latest, --probability or --report")
    if (request.at_least is not None or request.runs is not None) and not request.probability:
        raise InputError("--at-least and --runs go with --probability FORMULA")
    formulas = formulas_of(request)
    times = times_of(request)
    fairness = fairness_of(request.net, request.weak_fair, request.strong_fair)
    progress = sys.stderr.isatty() or None
    shared: list[StateSpace] = []  # one full exploration serves every global formula

    def whole_space() -> StateSpace:
        if not shared:
            shared.append(explore(request.net, max_states=request.max_states,
                                  time_budget_s=request.time_limit_s, progress=progress))
        return shared[0]

    verdicts = []
    for formula in formulas:
        try:  # check() decides per formula: on the fly, or on the one shared space
            verdicts.append(check(request.net, formula, max_states=request.max_states,
                                  time_limit_s=request.time_limit_s, fairness=fairness,
                                  reduction=request.reduction, progress=progress,
                                  whole_space=whole_space))
        except MemoryError:  # the shared exploration: a limit refused an allocation
            verdicts.append(Verdict("unknown", to_text(formula), technique=("EXPLICIT",),
                                    reason=out_of_memory_reason()))
    for which, goal in times:
        verdicts.append(which(request.net, goal, max_states=request.max_states,
                              time_limit_s=request.time_limit_s))
    estimates = []
    for text in request.probability:
        path = path_formula(parse(text, net=request.net))
        started = time.perf_counter()
        if request.at_least is None:
            estimates.append(estimate(request.net, path, runs=request.runs or 1000,
                                      seed=request.seed))
        else:
            verdicts.append(probability_at_least(
                request.net, path, request.at_least, seed=request.seed,
                max_runs=request.runs or 100_000).to_verdict(time.perf_counter() - started))
    for number, verdict in enumerate(verdicts, 1):
        console.print(verdict_line(number, verdict), markup=False, highlight=False,
                      soft_wrap=True)
        if verdict.evidence is not None:
            console.print(evidence_text(number, verdict), markup=False, highlight=False,
                          soft_wrap=True)
    for number, found in enumerate(estimates, 1):
        console.print(f"probability {number}: {found}  {to_text(found.formula)}",
                      markup=False, highlight=False, soft_wrap=True)
    document: dict[str, Any] = {"net": request.source,
                                "verdicts": [v.to_json() for v in verdicts]}
    if estimates:
        document["probabilities"] = [e.to_json() for e in estimates]
    if fairness is not None:
        document["fairness"] = {"weak": list(fairness.weak), "strong": list(fairness.strong)}
    if request.report:
        from tcpn.petrinets.checking.report import standard_report

        try:
            space = whole_space()
            if not space.complete:
                raise InputError(f"--report needs the whole state space: exploration stopped "
                                 f"at the limit {space.limit} after {space.n_states} states "
                                 "(raise --max-states or --time-limit)")
            report = standard_report(space)
        except MemoryError:
            raise TcpnError(f"--report: {out_of_memory_reason()}") from None
        console.print(report.table())
        document["report"] = report.to_json()
    if request.json_file is not None:
        with atomic_file(request.json_file, request.overwrite) as tmp:
            tmp.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        err_console.print(f"wrote {request.json_file}", markup=False, highlight=False)
    return all(v.answer == "true" for v in verdicts)


def verdict_line(number: int, verdict: Verdict) -> str:
    """One line per formula (never wrapped inside a word): answer, formula, cost, how.

    >>> print(verdict_line(1, Verdict("unknown", "EF deadlock", states=100, reason="state "
    ...                                "budget reached (max_states=100)")))
    formula 1: UNKNOWN  EF deadlock  (100 states, 0.00 s; state budget reached (max_states=100))
    """
    how = verdict.reason or " ".join(verdict.technique)
    value = "" if verdict.value is None else f" = {verdict.value:g}"
    states = "" if "STATISTICAL" in verdict.technique else f"{verdict.states:,} states, "
    return (f"formula {number}: {verdict.answer.upper()}  {verdict.formula}{value}  "
            f"({states}{verdict.seconds:.2f} s; {how})")


def evidence_text(number: int, verdict: Verdict) -> str:
    """The path of a verdict: one firing a line, the cycle marked."""
    evidence: Evidence = verdict.evidence  # type: ignore[assignment]
    kind = ("witness" if verdict.answer == "true" else "counterexample")
    lines = [f"formula {number} {kind}: {len(evidence.stem)} firings"
             + (f", then a cycle of {len(evidence.cycle)} repeated forever" if evidence.cycle
                else "")]
    for label, steps in (("", evidence.stem), ("cycle ", evidence.cycle)):
        for k, step in enumerate(steps, 1):
            binding = ", ".join(f"{n}={v!r}" for n, v in step.binding.items())
            clock = f" at {step.clock:g}" if step.clock is not None else ""
            lines.append(f"  {label}{k}. {step.transition}"
                         + (f" <{binding}>" if binding else "") + clock)
    if not evidence.stem and not evidence.cycle:
        lines.append("  (the initial marking itself)")
    return "\n".join(lines)
