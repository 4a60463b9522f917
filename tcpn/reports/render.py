"""Render a :class:`~tcpn.reports.document.Report`: one self-contained HTML file, its PDF,
and the data of every table and figure as CSV.

The HTML page (Jinja2 template ``templates/report.html.j2``) carries a table of contents,
every figure inline as SVG (readable offline, no network), the tables, the verdicts and
the provenance (versions, scenario hashes, seeds, command). :func:`write_report` writes
a directory whole or not at all through :func:`tcpn.outputs.atomic_directory` (a new or
empty directory; a tcpn output only with ``overwrite``; never anything else)::

    DIR/report.html          the report
    DIR/report.pdf           the same, printed by headless Chromium (when installed)
    DIR/report.json          title, provenance, verdicts, the files and what they hold
    DIR/data/<name>.csv      the numbers behind each table and figure
    DIR/data/<name>.dot      the Graphviz source of each diagram

Rendering is deterministic: the same report (and ``generated`` timestamp) gives the same
bytes, which is what lets ``tcpn report --from`` rebuild a report identically.

>>> import pandas as pd
>>> from tcpn.reports.document import Paragraph, Report, Section, Table
>>> report = Report("Example", [Section("Results", [Paragraph("One *flow*."),
...     Table("goodput", pd.DataFrame({"flow": ["A"], "goodput_bps": [1.5e6]}))])])
>>> page = report_html(report, generated="2026-01-01T00:00:00Z")
>>> "<em>flow</em>" in page, "1.5e+06" in page, 'href="#results"' in page
(True, True, True)
"""

from __future__ import annotations

import datetime as dt
import html
import inspect
import io
import json
import math
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from tcpn.errors import InputError
from tcpn.outputs import atomic_directory
from tcpn.reports.browser import BrowserMissing, print_pdf
from tcpn.reports.document import ClaimVerdict, Diagram, Figure, Paragraph, Report, Section, Table

__all__ = ["ReportFiles", "figure_svg", "fill_directory", "format_value", "report_html",
           "table_html", "write_report"]

GENERATED_LABEL = "Generated"
"""The one line of the HTML that differs between two renderings of the same data."""


def format_value(value: Any) -> str:
    """A table cell as the report shows it: numbers to 4 significant digits, NaN empty.

    >>> format_value(0.123456), format_value(12), format_value(float("nan")), format_value("x")
    ('0.1235', '12', '', 'x')
    """
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        number = float(value)
        return "" if math.isnan(number) else f"{number:.4g}"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def _inline(text: str) -> str:
    escaped = html.escape(text, quote=False)
    escaped = re.sub(r"``(.+?)``", r"<code>\1</code>", escaped)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    escaped = re.sub(r"\*\*([^*\s][^*]*)\*\*", r"<strong>\1</strong>", escaped)
    return re.sub(r"\*([^*\s][^*]*)\*", r"<em>\1</em>", escaped)


_ITEM = re.compile(r"^\s*[-*] ")


def paragraph_html(paragraph: Paragraph) -> str:
    r"""Markdown-light prose as HTML: blank-line paragraphs, ``- `` bullet lists,
    code in backticks (single or double), ``*emphasis*``, ``**strong**``.

    >>> paragraph_html(Paragraph("Two *causes*:\n- the ``RTO``\n- delayed\n  ACKs"))
    '<p>Two <em>causes</em>:</p>\n<ul><li>the <code>RTO</code></li><li>delayed ACKs</li></ul>'
    >>> paragraph_html(Paragraph("The net::\n\n    A --> B\n\nEnd."))
    '<p>The net:</p>\n<pre>A --&gt; B</pre>\n<p>End.</p>'
    """
    out = []
    for part in re.split(r"\n\s*\n", inspect.cleandoc(paragraph.text)):
        raw = [line for line in part.splitlines() if line.strip()]
        if raw and all(line.startswith("    ") for line in raw):  # a literal block
            out.append(f"<pre>{html.escape(textwrap.dedent(chr(10).join(raw)))}</pre>")
            continue
        if raw and raw[-1].rstrip().endswith("::"):  # reStructuredText's "text::"
            raw[-1] = raw[-1].rstrip()[:-1]
        lines = raw
        prose: list[str] = []
        items: list[str] = []
        for line in lines:
            if _ITEM.match(line):
                items.append(_ITEM.sub("", line).strip())
            elif items:
                items[-1] += " " + line.strip()
            else:
                prose.append(line.strip())
        if prose:
            out.append(f"<p>{_inline(' '.join(prose))}</p>")
        if items:
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
    return "\n".join(out)


def table_html(table: Table) -> str:
    """A table as an HTML ``<table>`` whose cells are :func:`format_value` of its frame;
    ``data-csv`` names the CSV file beside the report that holds the same numbers."""
    frame = table.frame
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False, name=None):
        cells = []
        for value in record:
            numeric = isinstance(value, int | float | np.integer | np.floating) and not \
                isinstance(value, bool | np.bool_)
            cells.append(f'<td class="{"num" if numeric else "text"}">'
                         f"{html.escape(format_value(value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<caption>{_inline(table.caption)}</caption>" if table.caption else ""
    return (f'<table class="data" id="table-{table.name}" data-csv="data/{table.name}.csv">'
            f"{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def figure_svg(figure: Figure) -> str:
    """The figure drawn from its data, as SVG text (deterministic: fixed ids, no date)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.hashsalt": f"tcpn-{figure.name}",
                                "svg.fonttype": "path"}):
        drawn = figure.draw(figure.data)
        buffer = io.StringIO()
        drawn.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight",
                      dpi=150)  # the resolution of any rasterized (dense) artist
        plt.close(drawn)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _diagram_svg(diagram: Diagram) -> str:
    text = diagram.svg
    return text[text.index("<svg"):] if "<svg" in text else text


def _slug(title: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


@dataclass
class _SectionView:
    title: str
    slug: str
    level: int
    blocks: list[str]
    subsections: list[_SectionView]


_VERDICT_CLASS = {"reproduced": "ok", "lenses disagree": "unexplained", "undecided": "stated",
                  "differs (measured cause)": "stated", "differs (unexplained)": "unexplained",
                  "not run": "notrun"}


def _block_html(block: Any) -> str:
    if isinstance(block, Paragraph):
        return paragraph_html(block)
    if isinstance(block, Table):
        return table_html(block)
    if isinstance(block, Figure | Diagram):
        svg = figure_svg(block) if isinstance(block, Figure) else _diagram_svg(block)
        kind = "figure" if isinstance(block, Figure) else "diagram"
        source = f"data/{block.name}.{'csv' if kind == 'figure' else 'dot'}"
        caption = f"<figcaption>{_inline(block.caption)} <span class=\"src\">({source})" \
                  "</span></figcaption>"
        return (f'<figure class="{kind}" id="{kind}-{block.name}" data-source="{source}">'
                f'<div class="drawing">{svg}</div>{caption}</figure>')
    if isinstance(block, ClaimVerdict):
        css = _VERDICT_CLASS.get(block.status, "notrun")
        readings = "".join(
            f'<li><span class="lens">{html.escape(lens)}</span>: '
            f'{html.escape(reading.status)}{_values_text(reading.values)}</li>'
            for lens, reading in block.lenses.items())
        return (f'<div class="verdict {css}"><span class="status">{html.escape(block.status)}'
                f'</span> <span class="claim">{_inline(block.claim)}</span>'
                f'<div class="evidence">{_inline(block.evidence)}</div>'
                + (f'<ul class="lenses">{readings}</ul>' if readings else "") + '</div>')
    raise InputError(f"a report block of type {type(block).__name__} can't be rendered")


def _values_text(values: Mapping[str, Any]) -> str:
    """`` (a = 1.5, b = 2 (n = 5))``: the measured values a claim's test compared (a
    number, or a mean over runs with its n), or nothing."""
    if not values:
        return ""

    def one(value: Any) -> str:
        if isinstance(value, Mapping):
            mean = "-" if value["mean"] is None else f"{value['mean']:.4g}"
            return f"{mean} (n = {value['n']})"
        return f"{value:.4g}"

    return " (" + ", ".join(f"{html.escape(k)} = {one(v)}" for k, v in values.items()) + ")"


def verdict_record(verdict: ClaimVerdict) -> dict[str, Any]:
    """A verdict as ``report.json`` lists it: claim, status, evidence, and per lens its
    status, evidence and measured values (``values``: lens -> the values its test
    compared), so that a program can count what each lens supports; ``study`` names the
    study of a study report's claim."""
    return {**({"study": verdict.study} if verdict.study else {}),
            "claim": verdict.claim, "status": verdict.status, "evidence": verdict.evidence,
            "values": {lens: dict(r.values) for lens, r in verdict.lenses.items()}
            or {"net": dict(verdict.values)},
            "lenses": {lens: {"status": r.status, "evidence": r.evidence}
                       for lens, r in verdict.lenses.items()},
            "cause_points": list(verdict.cause_points),
            "cause_moves": list(verdict.cause_moves)}


def _view(section: Section, level: int, taken: set[str]) -> _SectionView:
    return _SectionView(section.title, _slug(section.title, taken), level,
                        [_block_html(b) for b in section.blocks],
                        [_view(s, level + 1, taken) for s in section.subsections])


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("tcpn.reports", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def _provenance_rows(provenance: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for key, value in provenance.items():
        if isinstance(value, str):
            text = value
        elif isinstance(value, dict) and all(not isinstance(v, dict | list)
                                             for v in value.values()):
            text = ", ".join(f"{k} {v}" for k, v in sorted(value.items()))
        else:
            text = json.dumps(value, sort_keys=True, default=str)
        rows.append((key, text))
    return rows


def report_html(report: Report, generated: str | None = None, standalone: bool = True) -> str:
    """The report as one HTML page (``standalone=False``: the body only, for Jupyter)."""
    taken: set[str] = set()
    sections = [_view(s, 2, taken) for s in report.sections]
    template = _environment().get_template("report.html.j2")
    return template.render(title=report.title, sections=sections,
                           provenance=_provenance_rows(report.provenance),
                           generated=generated or _now(), generated_label=GENERATED_LABEL,
                           standalone=standalone)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ReportFiles:
    """Where :func:`write_report` put the report: the directory, the HTML page, the PDF
    (None when no browser could print it: ``pdf_missing`` says why) and the data files."""

    directory: Path
    html: Path
    pdf: Path | None
    data: list[Path]
    pdf_missing: str = ""


def write_report(report: Report, directory: str | Path, *, pdf: bool = True,
                 generated: str | None = None, extra: Callable[[Path], None] | None = None,
                 overwrite: bool = False) -> ReportFiles:
    """Write the report into ``directory``, whole or not at all
    (:func:`tcpn.outputs.atomic_directory`: a new or empty directory, or with
    ``overwrite`` a tcpn output; anything else is refused, never written over).

    ``extra(tmp)`` may add files (e.g. the stored results) before the directory appears.
    """
    target = Path(directory)
    with atomic_directory(target, overwrite) as tmp:
        files = fill_directory(report, tmp, pdf=pdf, generated=generated)
        if extra is not None:
            extra(tmp)
    return ReportFiles(target, target / "report.html",
                       target / "report.pdf" if files.pdf is not None else None,
                       [target / p.relative_to(tmp) for p in files.data], files.pdf_missing)


def fill_directory(report: Report, out: Path, *, pdf: bool = True,
                   generated: str | None = None) -> ReportFiles:
    """Write the report's files into the existing directory ``out`` (the caller makes it
    appear whole: :func:`write_report` does)."""
    (out / "data").mkdir(exist_ok=True)
    return _write_into(report, out, generated or _now(), pdf)


def _write_into(report: Report, out: Path, stamp: str, pdf: bool) -> ReportFiles:
    names: set[str] = set()
    data: list[Path] = []
    for block in report.blocks():
        if isinstance(block, Table | Figure | Diagram):
            if block.name in names:
                raise InputError(f"report {report.title!r}: two blocks are named "
                                 f"{block.name!r} (each table, figure and diagram needs "
                                 "its own name)")
            names.add(block.name)
        if isinstance(block, Table | Figure):
            path = out / "data" / f"{block.name}.csv"
            frame = block.frame if isinstance(block, Table) else block.data
            frame.to_csv(path, index=False, lineterminator="\n")
            data.append(path)
        elif isinstance(block, Diagram):
            path = out / "data" / f"{block.name}.dot"
            path.write_text(block.source)
            data.append(path)
    page = out / "report.html"
    page.write_text(report_html(report, generated=stamp))
    printed, missing = None, ""
    if pdf:
        try:
            printed = print_pdf(page, out / "report.pdf")
        except BrowserMissing as exc:
            missing = str(exc)
    record = {
        "format": "tcpn-report/1", "title": report.title, "generated": stamp,
        "provenance": report.provenance,
        "verdicts": [verdict_record(v) for v in report.verdicts()],
        **report.records,
        "files": {"html": "report.html", "pdf": "report.pdf" if printed else None,
                  "data": [str(p.relative_to(out)) for p in data]},
        "pdf_missing": missing or None,
    }
    (out / "report.json").write_text(json.dumps(record, indent=1, sort_keys=True,
                                                default=str) + "\n")
    return ReportFiles(out, page, printed, data, missing)
