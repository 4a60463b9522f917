"""The report front door: simulate, store the data, build the report, write it; or rebuild.

Every report kind (``study``, ``scenario``, ``validation``) is made the same way: parts
of data (:class:`~tcpn.reports.studies.StudyData`) are produced by simulation, stored in
``REPORT/results``, and turned into a :class:`~tcpn.reports.document.Report` by a builder
that reads the data alone. :func:`rebuild` runs the same builder on stored data, so a
rebuilt report is byte-identical to the first apart from its ``Generated`` timestamp.
"""

from __future__ import annotations

import platform
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from tcpn import __version__
from tcpn.errors import InputError
from tcpn.models.scenario import Scenario
from tcpn.outputs import atomic_directory
from tcpn.reports.document import Report
from tcpn.reports.render import ReportFiles, fill_directory, write_report
from tcpn.reports.store import load_results, save_results
from tcpn.reports.studies import Profile, Study, StudyData
from tcpn.reports.verdict_comparison import EarlierReport

__all__ = ["build_report", "command_line", "free_directory", "rebuild", "report_scenario",
           "report_studies", "source_commit", "versions", "write_parts"]


def source_commit(root: Path | None = None) -> str:
    """The git commit of the tcpn source that runs (``root``: its checkout, found from
    this module by default), with ``(modified)`` when the working tree differs from it;
    ``not a git checkout`` for an installed copy.

    >>> source_commit(Path("/")).startswith("not a git checkout")
    True
    """
    where = root if root is not None else Path(__file__).resolve().parents[2]

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(where), *args], capture_output=True,
                              text=True, timeout=30, check=True)
        return done.stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != where.resolve():
            return "not a git checkout (tcpn is installed inside another repository)"
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"
    return f"{commit} (modified)" if dirty else commit


def versions() -> dict[str, str]:
    """The versions a report's numbers depend on, and the source's git commit."""
    import matplotlib
    import numpy
    import pandas
    import scipy

    found = {"tcpn": __version__, "tcpn commit": source_commit(),
             "python": platform.python_version(),
             "numpy": numpy.__version__, "scipy": scipy.__version__,
             "pandas": pandas.__version__, "matplotlib": matplotlib.__version__}
    try:
        found["ns3"] = metadata.version("ns3")
    except metadata.PackageNotFoundError:  # the ns3 extra is optional
        found["ns3"] = "not installed"
    return found


def command_line() -> str:
    """The command that is running, as a shell would take it back."""
    name = Path(sys.argv[0]).name or "python"
    return " ".join(shlex.quote(part) for part in [name, *sys.argv[1:]])


def free_directory(stem: str) -> Path:
    """``stem``, or ``stem-2``, ``stem-3``... : the first that does not exist yet."""
    path, n = Path(stem), 2
    while path.exists():
        path, n = Path(f"{stem}-{n}"), n + 1
    return path


def build_report(kind: str, parts: Mapping[str, StudyData], provenance: dict[str, Any],
                 extra: dict[str, Any], studies: Mapping[str, Study] | None = None,
                 ) -> Report:
    """The report of ``kind`` (study, scenario or validation) from its data alone."""
    if kind == "study":
        from tcpn.reports.study_report import build_study_report, registered_studies

        against = extra.get("against")
        return build_study_report(extra["keys"], studies or registered_studies(), parts,
                                  extra["profile"], provenance,
                                  None if against is None else EarlierReport.from_record(against))
    if kind == "scenario":
        from tcpn.reports.scenario_report import build_scenario_report

        return build_scenario_report(parts, provenance)
    if kind == "validation":
        from tcpn.reports.validation_report import build_validation_report

        return build_validation_report(parts, provenance)
    raise InputError(f"stored results of an unknown report kind {kind!r}")


def write_parts(kind: str, parts: Mapping[str, StudyData], provenance: dict[str, Any],
                output: str | Path, extra: dict[str, Any] | None = None,
                studies: Mapping[str, Study] | None = None, pdf: bool = True,
                overwrite: bool = False) -> tuple[Report, ReportFiles]:
    """Build the report of ``kind`` from ``parts`` and write it with its stored results
    into ``output`` (whole or not at all, :func:`~tcpn.reports.render.write_report`)."""
    extra = dict(extra or {})
    report = build_report(kind, parts, provenance, extra, studies)
    files = write_report(report, output, pdf=pdf, overwrite=overwrite, extra=lambda tmp:
                         save_results(tmp / "results", kind, dict(parts), provenance, extra))
    return report, files


def _fill(kind: str, parts: Mapping[str, StudyData], provenance: dict[str, Any],
          tmp: Path, target: Path, extra: dict[str, Any],
          studies: Mapping[str, Study] | None, pdf: bool) -> tuple[Report, ReportFiles]:
    """:func:`write_parts` into ``tmp``, an atomic directory that becomes ``target``."""
    report = build_report(kind, parts, provenance, extra, studies)
    files = fill_directory(report, tmp, pdf=pdf)
    save_results(tmp / "results", kind, dict(parts), provenance, extra)
    return report, ReportFiles(target, target / "report.html",
                               target / "report.pdf" if files.pdf is not None else None,
                               [target / p.relative_to(tmp) for p in files.data],
                               files.pdf_missing)


def report_studies(names: Sequence[str], output: str | Path, profile: Profile = "quick",
                   studies: Mapping[str, Study] | None = None,
                   progress: Callable[[str, str, int, int], None] | None = None,
                   pdf: bool = True, overwrite: bool = False,
                   store: str | Path | None = None, executor: Any = None,
                   against: EarlierReport | None = None,
                   ) -> tuple[Report, ReportFiles, list[str]]:
    """Run the studies ``names`` (``all`` for the five) that are registered, write their
    report to ``output``; returns the report, its files and one summary line per study.
    With ``store`` (a campaign store directory) every run is kept there as it completes
    and a run already there is read, not made again: a profile cut short resumes. With
    ``executor`` (a ``concurrent.futures`` executor: local processes or a Dask cluster,
    :mod:`tcpn.experiments.sweep.executors`) the runs go there. With ``against`` (an
    earlier study report's verdicts) the report sets its verdicts beside those.

    ``studies`` (key -> :class:`~tcpn.reports.studies.Study`) replaces the registered
    modules; keys other than s1 ... s5 are studies of their own (``all`` includes them)."""
    from tcpn.reports.studies.experiments import running_on, storing_runs
    from tcpn.reports.study_report import (
        STUDY_KEYS,
        registered_studies,
        run_studies,
        select_studies,
        study_summary_lines,
    )

    available = dict(studies) if studies is not None else registered_studies()
    keys = select_studies(names, [*STUDY_KEYS, *(k for k in available if k not in STUDY_KEYS)])
    with atomic_directory(output, overwrite) as tmp:  # refused before simulating, not after
        with storing_runs(store), running_on(executor):
            data = run_studies(keys, available, profile, progress)
        provenance: dict[str, Any] = {"command": command_line(), "profile": profile,
                                      "versions": versions()}
        if store is not None:
            provenance["run store"] = str(store)
        for key, part in data.items():
            for field in ("seeds", "seed", "scenario_hashes", "scenarios"):
                if field in part.metadata:
                    provenance[f"{key} {field}"] = part.metadata[field]
        extra: dict[str, Any] = {"keys": list(keys), "profile": profile}
        if against is not None:
            extra["against"] = against.as_record()
        report, files = _fill("study", data, provenance, tmp, Path(output), extra,
                              available, pdf)
    return report, files, study_summary_lines(keys, report, available)


def report_scenario(scenario: Scenario, output: str | Path, lens: str = "net",
                    replications: int = 3, seed: int | None = None,
                    workers: int | None = None,
                    progress: Callable[[float], None] | None = None, pdf: bool = True,
                    overwrite: bool = False) -> tuple[Report, ReportFiles]:
    """Run ``scenario`` ``replications`` times with ``lens`` and write its report to
    ``output`` (refused before simulating when ``output`` may not be written)."""
    from tcpn.reports.scenario_report import scenario_parts

    with atomic_directory(output, overwrite) as tmp:
        parts = scenario_parts(scenario, lens, replications, seed, workers, progress)
        provenance = {"command": command_line(), "versions": versions(),
                      "scenario_hash": scenario.content_hash(),
                      "seeds": parts["run"].metadata["seeds"]}
        return _fill("scenario", parts, provenance, tmp, Path(output), {}, None, pdf)


def rebuild(results: str | Path, output: str | Path,
            studies: Mapping[str, Study] | None = None, pdf: bool = True,
            overwrite: bool = False, against: EarlierReport | None = None,
            ) -> tuple[Report, ReportFiles]:
    """Rebuild a report from stored results (``results``: a report directory or its
    ``results`` folder) into the new directory ``output``, simulating nothing; a study
    report with ``against`` sets its verdicts beside that earlier report's. Rebuilt by
    other code than made it (another commit, or a modified tree), the provenance says
    so (``rebuilt``): the runs are the first's, their reading this code's."""
    root = Path(results)
    if not (root / "manifest.json").exists() and (root / "results").is_dir():
        root = root / "results"
    stored = load_results(root)
    provenance = dict(stored.provenance)
    made_by = provenance.get("versions", {}).get("tcpn commit") \
        if isinstance(provenance.get("versions"), Mapping) else None
    if made_by != (now := source_commit()):
        # other code reads the stored runs: its tables and verdicts are not the first's
        provenance["rebuilt"] = (f"from {results} by tcpn commit {now}: the runs are those "
                                 f"made at {made_by}; tables, figures and verdicts are "
                                 "this commit's reading of them")
    extra = dict(stored.extra)
    if against is not None:
        if stored.kind != "study":
            raise InputError(f"{results}: --against compares study reports; this is a "
                             f"{stored.kind} report")
        extra["against"] = against.as_record()
    return write_parts(stored.kind, stored.parts, provenance, output, extra,
                       studies, pdf, overwrite)
