"""Reports as a reader gets them: HTML opened in headless Chromium, the PDF's pages, the
CSV data, ``--from`` rebuilds, bad input, and the module-collapsed net drawing.

The study here is a small real one written against the Study protocol: an M/M/1 queue
built as a timed net, simulated at two loads, against queueing theory.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tcpn.cli import app
from tcpn.errors import InputError
from tcpn.reports.browser import find_chromium
from tcpn.reports.document import (
    ClaimVerdict,
    Figure,
    Paragraph,
    Section,
    Table,
    VerdictStatus,
)
from tcpn.reports.render import GENERATED_LABEL, format_value
from tcpn.reports.reporting import rebuild, report_studies
from tcpn.reports.studies import Profile, StudyData, StudyProgress
from tcpn.reports.verdict_comparison import comparison_frame, read_earlier_report

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "dumbbell_newreno.yaml"
SCREENSHOTS = REPO / "test-output" / "report-screenshots"
"""Kept after the run (git-ignored): one screenshot of each report's first page."""


class MM1Study:
    """Mean queue and utilisation of an M/M/1 timed net at two loads against theory."""

    key = "mm1"
    title = "M/M/1 queue as a timed net against theory"

    def run(self, profile: Profile, progress: StudyProgress) -> StudyData:
        from tcpn.petrinets.engine.monitors import TimeAverage
        from tcpn.petrinets.engine.simulator import simulate
        from tcpn.petrinets.examples import single_server_queue

        rows = []
        loads, replications = (0.5, 0.8), 3
        for i, rho in enumerate(loads):
            for rep in range(replications):
                progress(f"rho {rho}", i * replications + rep, len(loads) * replications)
                net = single_server_queue(customers=1500, mean_gap=1.0, mean_service=rho)
                result = simulate(net, seed=100 + rep, monitors=[TimeAverage("queue"),
                                                                 TimeAverage("busy")])
                rows.append({"rho": rho, "replication": rep,
                             "utilisation": result.monitors["average(busy)"]["average"],
                             "mean_waiting": result.monitors["average(queue)"]["average"]})
        return StudyData({"runs": pd.DataFrame(rows)},
                         {"seeds": [100, 101, 102], "customers": 1500})

    def sections(self, data: StudyData) -> list[Section]:
        from tcpn.lenses.replications import mean_ci

        runs = data.tables["runs"]
        table_rows, verdicts = [], []
        for rho, group in runs.groupby("rho"):
            mean, half = mean_ci(group["utilisation"].tolist())
            theory = float(rho)
            table_rows.append({"rho": rho, "utilisation": mean, "utilisation ±": half,
                               "theory": theory})
            inside = abs(mean - theory) <= half
            verdicts.append(ClaimVerdict(
                f"utilisation at load {rho:g} is {rho:g}",
                "reproduced" if inside else "differs (unexplained)",
                f"measured {mean:.4f} ± {half:.4f} over {len(group)} runs, theory "
                f"{theory:.4f}"))
        means = runs.groupby("rho", as_index=False)["mean_waiting"].mean()
        means["theory"] = means["rho"] ** 2 / (1 - means["rho"])
        return [Section("Utilisation", [
            Paragraph("Each load runs 3 replications of 1500 customers."),
            Table("mm1-utilisation", pd.DataFrame(table_rows), "Mean ± 95 % CI"), *verdicts,
        ]), Section("Waiting customers", [
            Figure("mm1-waiting", means, _draw_waiting, "Mean number waiting vs theory")])]


def _draw_waiting(data: pd.DataFrame) -> Any:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(data["rho"], data["mean_waiting"], "o", label="net")
    ax.plot(data["rho"], data["theory"], "-", label="theory")
    ax.set_xlabel("load")
    ax.set_ylabel("mean waiting")
    ax.legend()
    return fig


STUDIES = {"mm1": MM1Study()}


def tcpn(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "tcpn"), *args],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def study_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("study") / "report"
    _report, files, lines = report_studies(["mm1"], out, "quick", STUDIES)
    assert files.html.exists() and len(lines) == 1 and "mm1" in lines[0].lower()
    return out


@pytest.fixture(scope="module")
def scenario_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = tmp_path_factory.mktemp("scenario") / "short.yaml"
    scenario.write_text(SCENARIO.read_text().replace("horizon_s: 60.0", "horizon_s: 2.0")
                        .replace("start_s: 0.1}", "start_s: {dist: exponential, "
                                 "mean_s: 0.05, offset_s: 0.1}}"))
    out = scenario.parent / "report"
    result = CliRunner().invoke(app, ["report", str(scenario), "--replications", "2",
                                      "--workers", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"report: {out / 'report.html'}" in result.output
    return out


# ------------------------------------------------------------------------- the files

def test_study_report_holds_every_table_and_figure_as_csv(study_report: Path) -> None:
    record = json.loads((study_report / "report.json").read_text())
    assert sorted(record["files"]["data"]) == ["data/mm1-utilisation.csv",
                                               "data/mm1-waiting.csv", "data/verdicts.csv"]
    utilisation = pd.read_csv(study_report / "data" / "mm1-utilisation.csv")
    assert list(utilisation["rho"]) == [0.5, 0.8]
    assert ((utilisation["utilisation"] - utilisation["theory"]).abs() < 0.1).all()
    verdicts = pd.read_csv(study_report / "data" / "verdicts.csv")
    assert len(verdicts) == 2 and set(verdicts["study"]) == {"MM1"}
    assert record["provenance"]["mm1 seeds"] == [100, 101, 102]
    assert record["provenance"]["versions"]["tcpn"]
    html = (study_report / "report.html").read_text()
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing to fetch: offline
    assert "<link" not in html and "<script" not in html
    assert html.count("<svg") >= 1 and 'href="#provenance"' in html


def test_rebuild_from_results_is_byte_identical_but_the_timestamp(study_report: Path,
                                                                    tmp_path: Path) -> None:
    _report, files = rebuild(study_report, tmp_path / "again", studies=STUDIES)

    def without_stamp(path: Path) -> list[str]:
        return [line for line in path.read_text().splitlines()
                if GENERATED_LABEL not in line and '"generated"' not in line]

    first, again = study_report / "report.html", files.html
    assert without_stamp(first) == without_stamp(again)
    assert without_stamp(study_report / "report.json") == without_stamp(
        tmp_path / "again" / "report.json")
    for csv in (study_report / "data").iterdir():
        assert (tmp_path / "again" / "data" / csv.name).read_bytes() == csv.read_bytes()


def _earlier_report(study_report: Path, copy: Path, profile: str,
                    status: dict[str, str]) -> Path:
    """A copy of ``study_report`` that reads as an earlier report of ``profile`` whose
    claims have the verdicts ``status`` (claim -> status) and other numbers."""
    shutil.copytree(study_report, copy)
    record = json.loads((copy / "report.json").read_text())
    record["provenance"]["profile"] = profile
    for verdict in record["verdicts"]:
        if verdict["claim"] in status:
            verdict["status"] = status[verdict["claim"]]
            verdict["values"] = {"net": {"utilisation": {"mean": 0.9, "n": 10}}}
    (copy / "report.json").write_text(json.dumps(record))
    return copy


def test_against_an_earlier_report_lists_both_verdicts_and_what_moved(
        study_report: Path, tmp_path: Path) -> None:
    claims = [v["claim"] for v in json.loads((study_report / "report.json").read_text())
              ["verdicts"]]
    assert len(claims) == 2
    full = _earlier_report(study_report, tmp_path / "full", "full",
                           {claims[1]: "differs (measured cause)"})
    rebuild(study_report, tmp_path / "compared", studies=STUDIES, pdf=False,
            against=read_earlier_report(full))
    record = json.loads((tmp_path / "compared" / "report.json").read_text())
    assert all(v["study"] == "MM1" for v in record["verdicts"])
    against = record["against"]
    assert (against["profile"], against["claims"], against["same"]) == ("full", 2, 1)
    assert against["differ"] == [{"study": "MM1", "claim": claims[1]}]
    table = pd.read_csv(tmp_path / "compared" / "data" / "against.csv")
    assert list(table["same"]) == ["yes", "no"]
    assert table["full verdict"][1] == "differs (measured cause)"
    assert table["what moved"][1] == "net: values; utilisation - -> 0.9 (n = 10)"
    page = (tmp_path / "compared" / "report.html").read_text()
    assert "Against the full profile" in page and "1 of 2 claims" in page
    # a report older than the verdicts' study names is matched claim by claim
    record = json.loads((full / "report.json").read_text())
    for verdict in record["verdicts"]:
        del verdict["study"]
    (full / "report.json").write_text(json.dumps(record))
    older = comparison_frame(json.loads((tmp_path / "compared" / "report.json").read_text())
                             ["verdicts"], "quick", read_earlier_report(full))
    assert list(older["same"]) == ["yes", "no"] and set(older["study"]) == {"MM1"}
    # a rebuild of the compared report compares against the same verdicts
    _report, files = rebuild(tmp_path / "compared", tmp_path / "again", studies=STUDIES,
                             pdf=False)
    assert json.loads((files.directory / "report.json").read_text())["against"] == against


def test_the_profile_block_of_docs_is_generated_from_report_json(
        study_report: Path, tmp_path: Path) -> None:
    """benchmarks/study_profile_table.py writes a report's cost and verdicts into a page
    between its markers, replacing the block it wrote before and nothing else."""
    record = json.loads((study_report / "report.json").read_text())
    assert set(record["cost"]) == {"MM1"}  # each study's cost is in report.json
    page = tmp_path / "studies.md"
    page.write_text("# Studies\n\nText before.\n")
    script = REPO / "benchmarks" / "study_profile_table.py"
    for _ in range(2):
        done = subprocess.run([sys.executable, str(script), str(study_report), "--write",
                               str(page)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert text.startswith("# Studies\n\nText before.\n\n<!-- profile quick: begin")
    assert text.count("<!-- profile quick: begin") == 1 == text.count("profile quick: end")
    rows = [line for line in text.splitlines() if line.startswith("| MM1 |")]
    assert len(rows) == 3  # the cost row and the two claims
    statuses = [v["status"] for v in record["verdicts"]]
    assert rows[0].endswith(" | ".join(str(statuses.count(s))
                                       for s in get_args(VerdictStatus)) + " |")
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 3 and "report.json" in done.stderr


def test_against_refuses_what_is_not_an_earlier_study_report(study_report: Path,
                                                               tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    old = _earlier_report(study_report, tmp_path / "old", "full", {})
    record = json.loads((old / "report.json").read_text())
    del record["verdicts"][1]["claim"]
    (old / "report.json").write_text(json.dumps(record))
    for where, says in ((empty, "no report.json"),
                        (old, "report.json: verdicts[1].claim: missing")):
        done = tcpn("report", "--from", str(study_report), "--against", str(where),
                    "-o", str(tmp_path / "x"))
        assert done.returncode == 3, done.stderr
        assert says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x").exists()


def test_cli_rebuild_refuses_damaged_and_foreign_results(study_report: Path,
                                                         tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(study_report, damaged)
    parquet = damaged / "results" / "mm1" / "runs.parquet"
    parquet.write_bytes(parquet.read_bytes()[:-20])
    done = tcpn("report", "--from", str(damaged), "-o", str(tmp_path / "x"))
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("tcpn: invalid input: ") and "Traceback" not in done.stderr
    assert "runs.parquet" in done.stderr and "damaged" in done.stderr

    foreign = tmp_path / "foreign"
    shutil.copytree(study_report, foreign)
    manifest = foreign / "results" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"tcpn_version": "',
                                                     '"tcpn_version": "0.0.0-other'))
    with pytest.raises(InputError, match=r"written by tcpn 0\.0\.0-other"):
        rebuild(foreign, tmp_path / "y", studies=STUDIES)
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def _with_entry(report: Path, copy: Path, file: str) -> Path:
    """A copy of ``report`` whose manifest points the mm1 runs table at ``file``, with the
    SHA-256 of the real table (so only where the entry points can refuse it)."""
    shutil.copytree(report, copy)
    manifest_path = copy / "results" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["parts"]["mm1"]["tables"]["runs"]["file"] = file
    manifest_path.write_text(json.dumps(manifest))
    return copy


def test_a_report_rebuilt_by_other_code_says_so_in_its_provenance(study_report: Path,
                                                                   tmp_path: Path) -> None:
    copy = tmp_path / "made-elsewhere"
    shutil.copytree(study_report, copy)
    manifest_path = copy / "results" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    versions = next(value for key, value in manifest["provenance"] if key == "versions")
    versions["tcpn commit"] = "0" * 40
    manifest_path.write_text(json.dumps(manifest))
    rebuild(copy, tmp_path / "again", studies=STUDIES, pdf=False)
    provenance = json.loads((tmp_path / "again" / "report.json").read_text())["provenance"]
    assert provenance["versions"]["tcpn commit"] == "0" * 40  # the runs' commit, kept
    assert provenance["rebuilt"].startswith(f"from {copy} by tcpn commit ")
    assert f"made at {'0' * 40}" in provenance["rebuilt"]
    assert "rebuilt" in (tmp_path / "again" / "report.html").read_text()


@pytest.mark.parametrize(("file", "why"), [
    ("../outside.parquet", "not a relative path inside the results directory"),
    ("@abs", "not a relative path inside the results directory"),
    ("/dev/zero", "not a relative path inside the results directory"),
    ("mm1/escape.parquet", "outside the results directory"),  # a symlink that leaves it
    ("mm1", "not a regular file"),
])
def test_rebuild_refuses_manifest_entries_that_leave_the_results_directory(
        study_report: Path, tmp_path: Path, file: str, why: str) -> None:
    table = study_report / "results" / "mm1" / "runs.parquet"
    outside = tmp_path / "outside.parquet"  # the real table's bytes: the hash would pass
    shutil.copy(table, outside)
    copy = _with_entry(study_report, tmp_path / "copy",
                       str(outside) if file == "@abs" else file)
    (copy / "results" / "mm1" / "escape.parquet").symlink_to(outside)
    (copy / "results" / "mm1" / "zero").symlink_to("/dev/zero")
    with pytest.raises(InputError) as info:
        rebuild(copy, tmp_path / "out", studies=STUDIES)
    assert "manifest.json: parts.mm1.tables.runs: file" in str(info.value)
    assert why in str(info.value)
    assert not (tmp_path / "out").exists()


def _at_most_4_gib() -> None:
    """A child's address space, bounded: should a bug make it read /dev/zero, it fails
    with MemoryError instead of taking the machine's memory."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize("file", ["/dev/zero", "mm1/zero"])  # mm1/zero: a symlink to it
def test_rebuild_reads_stored_files_up_to_a_limit_and_never_dev_zero(
        study_report: Path, tmp_path: Path, file: str) -> None:
    from tcpn.limits import using_limits

    with using_limits(stored_file_bytes=100), pytest.raises(InputError) as info:
        rebuild(study_report, tmp_path / "out", studies=STUDIES)
    assert "limit stored_file_bytes" in str(info.value)
    copy = _with_entry(study_report, tmp_path / "copy", file)
    (copy / "results" / "mm1" / "zero").symlink_to("/dev/zero")
    done = subprocess.run([str(Path(sys.executable).parent / "tcpn"), "report", "--from",
                           str(copy), "--no-pdf", "-o", str(tmp_path / "x")],
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=_at_most_4_gib)
    assert done.returncode == 3, done.stderr
    assert f"parts.mm1.tables.runs: file '{file}'" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x").exists()


def test_unknown_study_is_a_usage_error_naming_the_studies() -> None:
    done = tcpn("report", "study", "s9")
    assert done.returncode == 2
    assert "unknown study 's9'" in done.stderr and "s1, s2, s3, s4, s5" in done.stderr


def test_an_existing_directory_is_never_written_over(study_report: Path,
                                                     tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="not a tcpn output directory"):
        rebuild(study_report, mine, studies=STUDIES)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    assert not any(p.name.startswith(".mine") for p in tmp_path.iterdir())


def test_overwrite_replaces_a_report_tcpn_wrote_and_nothing_added_to_it(
        study_report: Path, tmp_path: Path) -> None:
    out = tmp_path / "rebuilt"
    for _ in range(2):
        rebuild(study_report, out, studies=STUDIES, pdf=False, overwrite=True)
    (out / "data" / "my-plot.py").write_text("# mine")
    with pytest.raises(InputError, match=re.escape(
            f"{out} holds {out / 'data' / 'my-plot.py'}, which tcpn did not write")):
        rebuild(study_report, out, studies=STUDIES, pdf=False, overwrite=True)
    assert (out / "data" / "my-plot.py").read_text() == "# mine"


def test_a_failing_study_leaves_no_directory(tmp_path: Path) -> None:
    class Broken(MM1Study):
        def sections(self, data: StudyData) -> list[Section]:
            raise RuntimeError("a bug in the study's sections")

    with pytest.raises(RuntimeError):
        report_studies(["mm1"], tmp_path / "out", "quick", {"mm1": Broken()}, pdf=False)
    assert list(tmp_path.iterdir()) == []


def test_scenario_report_tables_and_data(scenario_report: Path) -> None:
    flows = pd.read_csv(scenario_report / "data" / "flows.csv")
    assert list(flows["flow"]) == ["f0", "f1", "all"]
    assert (flows["goodput Mbit/s"] > 0).all() and (flows["goodput Mbit/s"] <= 10).all()
    assert flows["goodput ±"].notna().all()  # two runs: a CI
    throughput = pd.read_csv(scenario_report / "data" / "throughput.csv")
    assert set(throughput["replication"]) == {0, 1}
    record = json.loads((scenario_report / "report.json").read_text())
    assert len(record["provenance"]["seeds"]) == 2 and record["provenance"]["scenario_hash"]
    assert (scenario_report / "data" / "net-modules.dot").read_text().startswith("digraph")


def test_scenario_report_rebuilds_identically(scenario_report: Path, tmp_path: Path) -> None:
    _report, files = rebuild(scenario_report, tmp_path / "again", pdf=False)
    first = [line for line in (scenario_report / "report.html").read_text().splitlines()
             if GENERATED_LABEL not in line]
    again = [line for line in files.html.read_text().splitlines()
             if GENERATED_LABEL not in line]
    assert first == again


@pytest.fixture(scope="module")
def validation_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = tmp_path_factory.mktemp("validation") / "short.yaml"
    scenario.write_text(SCENARIO.read_text().replace("horizon_s: 60.0", "horizon_s: 1.0"))
    out = scenario.parent / "validate"
    result = CliRunner().invoke(app, ["validate", str(scenario), "--lenses", "net,fluid",
                                      "--replications", "2", "--workers", "1", "-o", str(out),
                                      "--report"])
    assert result.exit_code in (0, 1), result.output  # 1: a lens missed a target
    assert f"report: {out / 'report' / 'report.html'}" in result.output
    return out / "report"


def test_validate_report_shows_every_replication(validation_report: Path) -> None:
    out = validation_report.parent
    throughput = pd.read_csv(out / "report" / "data" / "lens-throughput.csv")
    assert {(lens, rep) for lens, rep in zip(throughput["lens"], throughput["replication"],
                                             strict=True)} == {
        ("net", 0), ("net", 1), ("fluid", 0), ("fluid", 1)}
    comparison = pd.read_csv(out / "report" / "data" / "comparison.csv")
    assert {"net mean", "net ±", "fluid mean", "fluid error %"} <= set(comparison.columns)


# ---------------------------------------------------------------- read as a reader would

def _chromium() -> str:
    browser = find_chromium()
    if browser is None:
        pytest.skip("no Chromium on the PATH (apt-get install chromium): the report is "
                    "written but not opened in a browser")
    pytest.importorskip("playwright", reason="playwright is not installed (pip install "
                        "'tcpn[test]')")
    return browser


def _non_blank(png: bytes) -> bool:
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)
    return bool(pixels.std() > 2.0 and (pixels < 200).mean() > 0.001)


def _read_in_browser(report: Path, shots: Path, shots_name: str,
                     capsys: pytest.CaptureFixture[str]) -> None:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=_chromium(),
                                         args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((report / "report.html").as_uri())
        page.wait_for_load_state("load")
        shots.mkdir(parents=True, exist_ok=True)
        shot = shots / f"{shots_name}-first-page.png"
        page.screenshot(path=str(shot))
        with capsys.disabled():  # shown even when pytest captures the output
            print(f"\nscreenshot of the report's first page: {shot}")
        figures = page.locator("figure")
        assert figures.count() >= 1
        for i in range(figures.count()):
            drawing = figures.nth(i).locator(".drawing svg")
            assert drawing.count() == 1, f"figure {i} has no drawing"
            box = drawing.bounding_box()
            assert box is not None and box["width"] > 50 and box["height"] > 50
            assert _non_blank(drawing.screenshot()), f"figure {i} is blank"
        tables = page.locator("table.data")
        assert tables.count() >= 1
        for i in range(tables.count()):
            table = tables.nth(i)
            csv = pd.read_csv(report / str(table.get_attribute("data-csv")),
                              keep_default_na=False, na_values=[""])
            headers = [h.strip() for h in table.locator("thead th").all_inner_texts()]
            assert headers == [str(c) for c in csv.columns]
            cells = [row.locator("td").all_inner_texts()
                     for row in table.locator("tbody tr").all()]
            expected = [[format_value(v) for v in record]
                        for record in csv.itertuples(index=False, name=None)]
            assert [[c.strip() for c in row] for row in cells] == expected
        browser.close()
    assert errors == []


def test_study_report_reads_in_chromium(study_report: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    _read_in_browser(study_report, SCREENSHOTS, "study-report", capsys)


def test_scenario_report_reads_in_chromium(scenario_report: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    _read_in_browser(scenario_report, SCREENSHOTS, "scenario-report", capsys)


def test_validation_report_reads_in_chromium(validation_report: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    _read_in_browser(validation_report, SCREENSHOTS, "validation-report", capsys)


@pytest.mark.parametrize("which", ["study_report", "scenario_report", "validation_report"])
def test_pdf_pages_are_not_blank(which: str, request: pytest.FixtureRequest,
                                 tmp_path: Path) -> None:
    report: Path = request.getfixturevalue(which)
    if find_chromium() is None or shutil.which("pdftoppm") is None:
        pytest.skip("Chromium or poppler-utils' pdftoppm is missing (apt-get install "
                    "chromium poppler-utils)")
    pdf = report / "report.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    subprocess.run(["pdftoppm", "-r", "30", "-png", str(pdf), str(tmp_path / "page")],
                   check=True)
    pages = sorted(tmp_path.glob("page*.png"))
    assert len(pages) >= 2
    for page in pages:
        assert _non_blank(page.read_bytes()), f"{page.name} of {pdf} is blank"
    if shutil.which("pdftotext") is not None:
        assert _headers_missing_from_pdf(report / "report.html", pdf) == []


def _column_headers(page: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th>(.*?)</th>", page, re.S)]


def test_no_table_is_cut_at_the_pdf_page_edge(tmp_path: Path) -> None:
    """A table wider than the page (eleven columns of long names and numbers) is printed
    whole: every column header of every HTML table is in the PDF's text (read by
    poppler's pdftotext; whitespace aside, since cells wrap), nothing past the edge."""
    from tcpn.reports.document import Report
    from tcpn.reports.render import write_report

    if find_chromium() is None or shutil.which("pdftotext") is None:
        pytest.skip("Chromium or poppler-utils' pdftotext is missing (apt-get install "
                    "chromium poppler-utils)")
    wide = pd.DataFrame({f"measure_{i}_with_a_long_name_tu": [123456.789 * i, 0.5]
                         for i in range(10)} | {"last_column_source": ["S2 §4.1", "x"]})
    report = Report("wide", [Section("A wide table", [Table("wide", wide, caption="wide")])])
    files = write_report(report, tmp_path / "wide")
    assert files.pdf is not None
    assert _headers_missing_from_pdf(files.html, files.pdf) == []


def _headers_missing_from_pdf(page: Path, pdf: Path) -> list[str]:
    """The column headers of ``page``'s tables that the text of ``pdf`` does not hold,
    and any line printed past the page's right edge. Headers are left-aligned, so the
    lines of a wrapped header start at one x: each header is looked for in the lines
    that start at one x (poppler's bounding boxes), top to bottom."""
    layout = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"],
                            capture_output=True, text=True, check=True).stdout
    width = float(re.findall(r'<page width="([\d.]+)"', layout)[0])
    columns: dict[float, list[tuple[float, str]]] = {}
    past_edge = []
    for x_min, y_min, x_max, line in re.findall(
            r'<line xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)"[^>]*>(.*?)</line>',
            layout, re.S):
        words = "".join(html.unescape(w) for w in re.findall(r"<word [^>]*>(.*?)</word>", line))
        columns.setdefault(round(float(x_min)), []).append((float(y_min), words))
        if float(x_max) > width:
            past_edge.append(words)
    texts = ["".join(w for _, w in sorted(words)) for words in columns.values()]
    headers = [re.sub(r"\s+", "", html.unescape(h)) for h in _column_headers(page.read_text())]
    return [h for h in headers if not any(h in t for t in texts)] + past_edge


def test_no_browser_still_writes_the_report(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCPN_CHROMIUM", "no-such-browser-here")
    _report, files, _lines = report_studies(["mm1"], tmp_path / "r", "quick", STUDIES)
    assert files.html.exists() and files.pdf is None
    assert "install it with: sudo apt-get install chromium" in files.pdf_missing
    assert json.loads((tmp_path / "r" / "report.json").read_text())["files"]["pdf"] is None


# ------------------------------------------------------------------------ drawing, Jupyter

def test_module_view_of_the_dumbbell_is_legible() -> None:
    from tcpn.models.scenario import dumbbell
    from tcpn.models.topology import scenario_net
    from tcpn.petrinets.drawing.dot import to_svg
    from tcpn.petrinets.drawing.modules import module_view

    net = scenario_net(dumbbell(pairs=1, horizon_s=1.0))

    def size_pt(svg: str) -> tuple[float, float]:
        found = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg)
        assert found is not None
        return float(found.group(1)), float(found.group(2))

    full_w, full_h = size_pt(to_svg(net))
    view = module_view(net)
    w, h = size_pt(view.svg())
    assert w * h < full_w * full_h / 20  # at least 20 times less paper
    source = view.dot().source
    assert source.count("shape=box") == len(net.modules) == 8
    for socket in ("flow0.data", "flow0.acks", "R1.R2.in"):
        assert f'label="{socket}"' in source  # ports drawn as arcs
    opened = view.expand("flow0.rcv").dot().source
    assert opened.count("shape=box") == 7 + sum(
        1 for t in net.transitions.values() if t.module == "flow0.rcv")
    with pytest.raises(InputError, match="no module instance 'nope'"):
        view.expand("nope")


def test_module_view_folds_many_like_instances() -> None:
    from tcpn.models.scenario import dumbbell
    from tcpn.models.topology import scenario_net
    from tcpn.petrinets.drawing.modules import module_view

    net = scenario_net(dumbbell(pairs=8, horizon_s=1.0))
    source = module_view(net).dot().source
    assert "sender × 8" in source and "receiver × 8" in source
    assert 'label="flow*.data"' in source and 'label="R1.R2.in"' in source
    assert source.count("shape=box") < len(net.modules) / 3
    unfolded = module_view(net, fold_over=100).dot().source
    assert unfolded.count("shape=box") == len(net.modules)


def test_reports_and_figures_render_in_jupyter(study_report: Path) -> None:
    from tcpn.reports.reporting import build_report
    from tcpn.reports.store import load_results

    stored = load_results(study_report / "results")
    report = build_report(stored.kind, stored.parts, stored.provenance, stored.extra, STUDIES)
    html = report._repr_html_()
    assert "<!DOCTYPE" not in html and "<svg" in html and "mm1-utilisation" in html
    figure = report.figures()[0]
    assert figure._repr_svg_().startswith("<svg")
    assert report.tables()[0]._repr_html_().startswith("<table")


def test_figures_are_deterministic() -> None:
    from tcpn.reports.render import figure_svg

    data = pd.DataFrame({"rho": [0.5, 0.8], "mean_waiting": [0.5, 3.1],
                         "theory": [0.5, 3.2]})
    figure = Figure("f", data, _draw_waiting)
    assert figure_svg(figure) == figure_svg(figure)
    assert not math.isnan(float(data["theory"].sum()))


def test_replications_and_validations_render_in_jupyter() -> None:
    from tcpn.experiments.compare import compare
    from tcpn.lenses.replications import replicate
    from tcpn.models.scenario import dumbbell

    scenario = dumbbell(pairs=1, horizon_s=0.5)
    runs = replicate(scenario, "fluid", replications=2, workers=1)
    page = runs._repr_html_()
    assert "2 runs" in page and "goodput_bps_hw" in page and "<table" in page
    found = compare(scenario, ["net", "fluid"], replications=2, workers=1)
    page = found._repr_html_()
    assert "against net" in page and "fluid_error" in page


def test_a_taken_output_is_refused_before_simulating(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep")

    class Counting(MM1Study):
        runs = 0

        def run(self, profile: Profile, progress: StudyProgress) -> StudyData:
            Counting.runs += 1
            return super().run(profile, progress)

    with pytest.raises(InputError, match="not a tcpn output directory"):
        report_studies(["mm1"], taken, "quick", {"mm1": Counting()})
    assert Counting.runs == 0 and (taken / "mine.txt").read_text() == "keep"
    done = tcpn("report", str(SCENARIO), "-o", str(taken))
    assert done.returncode == 3 and "not a tcpn output directory" in done.stderr


def test_make_run_path_works_with_the_studies_registered(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``tcpn report study all`` (``make run``) with no study module registered: the report
    is written, names every missing study, and the summary has one line per study."""
    import tcpn.reports.study_report as study_report

    monkeypatch.setattr(study_report, "registered_studies", dict)
    out = tmp_path / "all"
    result = CliRunner().invoke(app, ["report", "study", "all", "-o", str(out), "--no-pdf"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert f"report: {out / 'report.html'}" in lines
    assert "left out of the report: s1, s2, s3, s4, s5" in result.output
    assert [line.split(":")[0] for line in lines[-5:]] == ["S1", "S2", "S3", "S4", "S5"]
    assert all("not run" in line for line in lines[-5:])
    page = (out / "report.html").read_text()
    assert "Not in this report: S1" in page and "Nothing stands in for a missing study" in page
