"""The studies' report: run the registered study modules, store their data, build one report.

:func:`registered_studies` finds the modules ``tcpn.reports.studies.s1`` ... ``s5`` that
exist (each exposes ``STUDY``); a study without a module is named as missing in the
report and in the summary, never replaced by anything. :func:`run_studies` simulates;
:func:`build_study_report` builds the :class:`~tcpn.reports.document.Report` from the
data alone, which is what ``tcpn report --from`` calls again.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from tcpn.errors import InputError
from tcpn.reports.document import (
    Block,
    ClaimVerdict,
    Diagram,
    Figure,
    Paragraph,
    Report,
    Section,
    Table,
)
from tcpn.reports.render import verdict_record
from tcpn.reports.store import round_trip
from tcpn.reports.studies import Profile, Study, StudyData, StudyProgress
from tcpn.reports.verdict_comparison import EarlierReport, comparison_frame, comparison_record

if TYPE_CHECKING:
    from tcpn.reports.studies.experiments import StudyPoint

__all__ = ["STUDY_KEYS", "build_study_report", "registered_studies", "run_studies",
           "study_net_mappings", "study_summary_lines"]

STUDY_KEYS: tuple[str, ...] = ("s1", "s2", "s3", "s4", "s5")
"""The five studies, in the order the report shows them."""

PROFILES: dict[str, str] = {
    "quick": "quick profile (`make run`): fewer replications and shorter horizons than the "
             "publication profile; each study states its own counts below",
    "full": "full profile (`tcpn report study ... --full`): the publication profile",
}


def registered_studies() -> dict[str, Study]:
    """The study modules present, by key (``"s1"`` ...), each module's ``STUDY``."""
    found: dict[str, Study] = {}
    for key in STUDY_KEYS:
        name = f"tcpn.reports.studies.{key}"
        if importlib.util.find_spec(name) is None:
            continue
        found[key] = importlib.import_module(name).STUDY
    return found


def select_studies(names: Sequence[str], known: Sequence[str] = STUDY_KEYS) -> list[str]:
    """The study keys ``names`` asks for (``all`` = every one of ``known``), in the order
    of ``known``; an unknown name raises :class:`ValueError` listing the names.

    >>> select_studies(["s3", "s1"]), select_studies(["all"])[-1]
    (['s1', 's3'], 's5')
    """
    wanted: set[str] = set()
    for name in names:
        key = name.strip().lower()
        if key == "all":
            wanted.update(known)
        elif key in known:
            wanted.add(key)
        else:
            raise ValueError(f"unknown study {name!r}; the studies are "
                             f"{', '.join(known)} and all")
    if not wanted:
        raise ValueError(f"name a study: {', '.join(known)} or all")
    return [key for key in known if key in wanted]


def study_net_mappings(keys: Sequence[str], profile: Profile) -> list[Mapping[str, Any]]:
    """The scenario mappings of every net-lens run the studies ``keys`` make in
    ``profile`` (their experiments and their axes' points; one per distinct mapping),
    read from each study module's ``experiments``, ``AXES`` and ``SETTINGS``, with the
    profile's seed, simulating nothing: what ``tcpn build study`` builds the native
    modules of."""
    from tcpn.reports.studies.experiments import StudyPoint, axis_points, profile_settings

    mappings: list[Mapping[str, Any]] = []
    for key in keys:
        module = importlib.import_module(f"tcpn.reports.studies.{key}")
        settings = profile_settings(module.SETTINGS, profile)
        found = module.experiments(settings)
        points = [StudyPoint.of(e) for e in found] + axis_points(found, module.AXES)
        # the study's seed, which its runs draw their flows from (the code may hold them)
        mappings += [{**m, "seed": settings.seed} for m in _net_mappings(points)]
    return mappings


def _net_mappings(points: Sequence[StudyPoint]) -> list[Mapping[str, Any]]:
    """The scenario mappings the net lens runs for ``points`` (each with its net changes),
    one per distinct mapping, those the net lens refuses left out."""
    from tcpn.models.fields import with_fields
    from tcpn.models.scenario import validate_scenario
    from tcpn.reports.studies.experiments import lens_refusal

    found: dict[str, Mapping[str, Any]] = {}
    for point in points:
        if "net" in point.lenses:
            mapping = with_fields(point.scenario, point.lens_changes.get("net", {}))
            if lens_refusal(validate_scenario(mapping), "net") is None:
                found.setdefault(repr(sorted(mapping.items())), mapping)
    return list(found.values())


def run_studies(keys: Sequence[str], studies: Mapping[str, Study], profile: Profile,
                progress: Callable[[str, str, int, int], None] | None = None,
                ) -> dict[str, StudyData]:
    """Run the studies of ``keys`` present in ``studies``; ``progress(key, what, done,
    total)`` follows each. Each study's data comes back as storing and loading it gives
    it (:func:`~tcpn.reports.store.round_trip`)."""
    data: dict[str, StudyData] = {}
    for key in keys:
        if key not in studies:
            continue
        study = studies[key]

        def report(what: str, done: int, total: int, key: str = key) -> None:
            if progress is not None:
                progress(key, what, done, total)

        step: StudyProgress = report
        data[key] = round_trip(study.run(profile, step), f"study {key}")
    return data


def _named_for(key: str, section: Section) -> Section:
    """``section`` with its tables', figures' and diagrams' names starting with the study
    key, so that two studies' files never collide in ``data/``, and its verdicts knowing
    their study."""
    def rename(block: Block) -> Block:
        if isinstance(block, Table | Figure | Diagram) and not block.name.startswith(
                (f"{key}-", f"{key}_")):
            return dataclasses.replace(block, name=f"{key}-{block.name}")
        if isinstance(block, ClaimVerdict):
            return dataclasses.replace(block, study=key.upper())
        return block

    return Section(section.title, [rename(b) for b in section.blocks],
                   [_named_for(key, sub) for sub in section.subsections])


def _verdict_rows(key: str, sections: Sequence[Section]) -> list[dict[str, str]]:
    rows = []
    for section in sections:
        for block in section.walk():
            if isinstance(block, ClaimVerdict):
                lenses = {f"{lens} reading": block.lenses[lens].status
                          for lens in ("net", "ns3") if lens in block.lenses}
                rows.append({"study": key.upper(), "claim": block.claim,
                             "verdict": block.status, **lenses, "evidence": block.evidence})
    return rows


def build_study_report(keys: Sequence[str], studies: Mapping[str, Study],
                       data: Mapping[str, StudyData], profile: Profile,
                       provenance: dict[str, Any],
                       against: EarlierReport | None = None) -> Report:
    """The report of the studies ``keys`` from their ``data`` alone (no simulation);
    with ``against``, a section setting every verdict beside that earlier report's."""
    missing = [key for key in keys if key not in data]
    for key in data:
        if key not in studies:
            raise InputError(f"stored results hold study {key}, but this tcpn has no module "
                             f"tcpn.reports.studies.{key} to build its report")
    study_sections = {key: [_named_for(key, s) for s in studies[key].sections(data[key])]
                      for key in keys if key in data}
    rows = [row for key in keys if key in study_sections
            for row in _verdict_rows(key, study_sections[key])]
    ran = [key.upper() for key in keys if key in data]
    summary = Section("Summary", [Paragraph(
        (f"Studies {', '.join(ran)} in the {PROFILES[profile]}. " if ran else
         "No study ran. ") + "Each study's section puts its published results beside "
        "tcpn's and gives one verdict per claim, read on the net lens and on ns-3: "
        "*reproduced* (the claim holds on both, or on the net lens where ns-3 could not "
        "run the study), *undecided* (the runs of a lens do not decide it: an interval "
        "straddles the test's bound), *lenses disagree* (it holds on one and the other's "
        "runs contradict it), *differs (measured cause)* or *differs (unexplained)*. "
        "Numbers read `mean [95 % CI] (n = runs)`: intervals "
        "stay within a quantity's range, runs that gave no value are counted as not "
        "completed, identical runs are shown as one deterministic run, and fewer than 5 "
        "runs are flagged.")])
    if missing:
        summary.blocks.append(Paragraph(
            "Not in this report: " + ", ".join(
                f"{key.upper()} (no module `tcpn.reports.studies.{key}` in this tcpn)"
                for key in missing) + ". Nothing stands in for a missing study."))
    coverages = {key: coverage_record(data[key]) for key in study_sections}
    lenses = pd.DataFrame([_lens_row(key, coverages[key], study_sections[key])
                           for key in keys if coverages.get(key)])
    if not lenses.empty:
        summary.blocks.append(Table(
            "lenses", lenses, caption="Points (experiments and axis points) each lens ran, "
            "and where net and ns-3 both ran one, how often their headline metric agrees "
            "(within 5 %, or 95 % intervals overlapping from 5 runs or more)"))
    if rows:
        summary.blocks.append(Table("verdicts", pd.DataFrame(rows),
                                    caption="Every claim and its verdict"))
    sections = [summary]
    for key in keys:
        if key in study_sections:
            parts = list(study_sections[key])
            model = _model_section(key, data[key])
            if model is not None:  # after the study's introduction
                parts.insert(min(1, len(parts)), model)
            sections.append(Section(_heading(key, studies[key].title), [], parts))
    title = ("tcpn: the studies reproduced" if len(keys) > 1 else "tcpn: " + (
        _heading(keys[0], studies[keys[0]].title) if keys[0] in studies else
        f"{keys[0].upper()} (missing)"))
    records: dict[str, Any] = {
        "coverage": {key.upper(): coverages[key] for key in keys if key in coverages},
        "cost": {key.upper(): _cost_record(data[key].metadata) for key in study_sections}}
    if against is not None:
        comparison, records["against"] = _against_section(sections, profile, against)
        sections.insert(1, comparison)
    return Report(title, sections, provenance, records)


def _cost_record(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """What a study's runs cost, for ``report.json``: wall and CPU seconds of the runs made
    by this invocation, runs made, runs read from the store and the CPU seconds they
    recorded when made, runs this invocation made for one point and used again at another
    with the same scenario, with the replications that set the count."""
    cost = dict(metadata.get("cost", {}))
    return {"wall_s": cost.get("wall_s"), "cpu_s": cost.get("cpu_s"),
            "runs": int(cost.get("runs", 0)), "stored_runs": int(cost.get("stored_runs", 0)),
            "stored_cpu_s": cost.get("stored_cpu_s", 0.0),
            "shared_runs": int(cost.get("shared_runs", 0)),
            "replications": metadata.get("replications"),
            "axis_replications": metadata.get("axis_replications")}


def _against_section(sections: Sequence[Section], profile: Profile,
                     against: EarlierReport) -> tuple[Section, dict[str, Any]]:
    """The section that sets this report's verdicts beside ``against``'s, and its record
    for ``report.json``."""
    verdicts = [verdict_record(b) for section in sections for b in section.walk()
                if isinstance(b, ClaimVerdict)]
    frame = comparison_frame(verdicts, profile, against)
    record = comparison_record(frame, against)
    same = "the same verdict" if record["same"] == record["claims"] else \
        f"the same verdict; {record['claims'] - record['same']} differ (below, with what moved)"
    return Section(f"Against the {against.profile} profile", [
        Paragraph(f"Every claim's verdict here ({PROFILES[profile]}) beside the verdict of "
                  f"the {against.profile} report in `{against.path}` (commit "
                  f"{against.commit}): {record['same']} of {record['claims']} claims have "
                  f"{same}."),
        Table("against", frame, caption=f"Verdicts: this report and the {against.profile} "
              "report, and per lens what moved")]), record


def _lens_row(key: str, coverage: Mapping[str, Mapping[str, str]],
              sections: Sequence[Section]) -> dict[str, Any]:
    """One study's line of the summary's lens table: points (its ``coverage``, see
    :func:`coverage_record`), the points each lens ran, and the agreement of net and ns-3
    read from the study's ``<key>_lenses`` table."""
    row: dict[str, Any] = {"study": key.upper(), "points": len(coverage)}
    for lens in ("net", "ns3", "fluid"):
        row[f"{lens} ran"] = sum(1 for lenses in coverage.values()
                                 if lenses.get(lens, "").startswith("ran"))
    table = next((b for section in sections for b in section.walk()
                  if isinstance(b, Table) and b.name == f"{key}_lenses"), None)
    both = 0 if table is None else len(table.frame)
    agree = 0 if table is None else int((table.frame["agree"] == "yes").sum())
    row["net and ns-3 agree"] = f"{agree} of {both}"
    return row


def coverage_record(data: StudyData) -> dict[str, dict[str, str]]:
    """Which lens ran which point of a study, for ``report.json``: point (the experiment,
    or ``experiment | axis = value``) -> lens -> ``"ran: n runs"``, the refusal's
    reason, or ``"not offered: ..."`` for a lens of the study the point was not given to
    (an axis point runs the lenses the verdicts read), so that every point names every
    lens."""
    from tcpn.reports.studies.experiments import lens_coverage, point_label

    out: dict[str, dict[str, str]] = {}
    if "runs" not in data.tables or "refusals" not in data.tables:
        return out
    for _, row in lens_coverage(data.tables["runs"], data.tables["refusals"]).iterrows():
        point = point_label(str(row["experiment"]), str(row["axis"]), str(row["value"]))
        out.setdefault(point, {})[str(row["lens"])] = (
            f"ran: {int(row['ran'])} runs" if row["ran"] else f"refused: {row['reason']}")
    lenses = list(dict.fromkeys(lens for given in out.values() for lens in given))
    for given in out.values():
        offered = " and ".join(given)
        for lens in lenses:
            given.setdefault(lens, f"not offered: this point was given to {offered} only")
    return out


def _model_section(key: str, data: StudyData) -> Section | None:
    """The net of the study's first experiment, drawn by its modules, from the scenario
    mapping its data keeps (None for data stored without one)."""
    from tcpn.models.scenario import validate_scenario
    from tcpn.reports.scenario_report import net_diagram

    scenarios = data.metadata.get("experiment_scenarios")
    if not isinstance(scenarios, Mapping) or not scenarios:
        return None
    name, mapping = next(iter(scenarios.items()))
    intro = Paragraph(
        f"The timed coloured Petri net tcpn simulates for experiment `{name}`, the first of "
        f"the study's {len(scenarios)}; the others change its parameters (and some its "
        "senders), and each one's scenario mapping is in the stored data "
        f"(`results/{key}/metadata.json`, `experiment_scenarios`).")
    try:
        scenario = validate_scenario(dict(mapping))
    except InputError as exc:
        return Section(f"{key.upper()}: the model", [
            intro, Paragraph(f"The net is not drawn: the stored scenario does not load ({exc}).")])
    return Section(f"{key.upper()}: the model", [intro, net_diagram(scenario, f"{key}-net")])


def _heading(key: str, title: str) -> str:
    """``S1. title``, unless the title already starts with the key (``S1: ...``).

    >>> _heading("s5", "S5: a limiter"), _heading("s1", "Vegas")
    ('S5: a limiter', 'S1. Vegas')
    """
    return title if title.lower().startswith(key.lower()) else f"{key.upper()}. {title}"


def study_summary_lines(keys: Sequence[str], report: Report,
                        studies: Mapping[str, Study]) -> list[str]:
    """One line per study: its verdicts counted by status, or why it is missing."""
    lines = []
    for key in keys:
        section = (next((s for s in report.sections
                         if s.title == _heading(key, studies[key].title)), None)
                   if key in studies else None)
        if section is None:
            lines.append(f"{key.upper()}: not run: no module tcpn.reports.studies.{key} yet")
            continue
        counts: dict[str, int] = {}
        for block in section.walk():
            if isinstance(block, ClaimVerdict):
                counts[block.status] = counts.get(block.status, 0) + 1
        tally = ", ".join(f"{n} {status}" for status, n in counts.items()) or "no verdicts"
        lines.append(f"{_heading(key, studies[key].title)}: {tally}")
    return lines
