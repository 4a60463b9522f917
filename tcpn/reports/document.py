"""A report as plain data: sections of paragraphs, tables, figures and verdicts.

Every report tcpn writes (a study, a scenario run, a validation) is first built as a
:class:`Report` by code that knows the experiment, then rendered by code that knows only
this module (HTML, PDF, CSV/JSON of every table and figure). Building and rendering stay
apart so that ``tcpn report --from DIR`` can rebuild a report from stored data without
simulating, and so that a notebook can show any block on its own.

>>> import pandas as pd
>>> table = Table("goodput", pd.DataFrame({"flow": ["A"], "goodput_bps": [1.5e6]}),
...               caption="Goodput per flow")
>>> section = Section("Results", [Paragraph("One flow."), table])
>>> report = Report("Example", [section])
>>> [block.name for block in report.tables()]
['goodput']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

VerdictStatus = Literal["reproduced", "lenses disagree", "undecided",
                        "differs (measured cause)", "differs (unexplained)", "not run"]


@dataclass(frozen=True)
class Paragraph:
    """Prose (Markdown-light: ``*emphasis*``, ``code``, and blank-line paragraphs)."""

    text: str


@dataclass(frozen=True)
class Table:
    """A table whose data is written beside the report as ``<name>.csv``.

    ``name`` is a file-safe identifier unique within the report; ``frame`` holds the
    numbers exactly as the rendered table shows them (units in column names).
    """

    name: str
    frame: pd.DataFrame
    caption: str = ""

    def _repr_html_(self) -> str:
        from tcpn.reports.render import table_html

        return table_html(self)


@dataclass(frozen=True)
class Figure:
    """A figure drawn from data; the data is written beside the report as ``<name>.csv``.

    ``draw(data)`` returns a Matplotlib figure built from ``data`` only, so the figure can
    be redrawn from stored data (``tcpn report --from``).
    """

    name: str
    data: pd.DataFrame
    draw: Callable[[pd.DataFrame], Any]
    caption: str = ""

    def _repr_svg_(self) -> str:
        from tcpn.reports.render import figure_svg

        return figure_svg(self)


@dataclass(frozen=True)
class Diagram:
    """A drawing that is not a plot of numbers (a net drawn by its modules): ``svg`` is
    the drawing, ``source`` the text it was drawn from (Graphviz DOT), written beside the
    report as ``<name>.dot``."""

    name: str
    svg: str
    source: str
    caption: str = ""

    def _repr_svg_(self) -> str:
        return self.svg


@dataclass(frozen=True)
class LensReading:
    """A claim's test on one lens's runs: its status there (``not run`` when the lens
    did not run what the test needs), the evidence, and the measured ``values`` the test
    compared (named as the study names them): a number, or for a metric measured over
    runs ``{"mean", "low", "high", "n", "runs"}`` (its 95 % interval and run counts)."""

    status: VerdictStatus
    evidence: str
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimVerdict:
    """One published claim against tcpn's result: the status, one sentence of evidence,
    the measured ``values`` behind it, each lens's reading (``lenses``, when more than
    one lens was asked) and, for *differs (measured cause)*, the points whose runs show
    the cause (``cause_points``)."""

    claim: str
    status: VerdictStatus
    evidence: str
    values: Mapping[str, Any] = field(default_factory=dict)
    lenses: Mapping[str, LensReading] = field(default_factory=dict)
    cause_points: tuple[str, ...] = ()
    #: of ``cause_points``, the axis points that move the result (where the study was
    #: read again to check the cause breaks none of its other claims)
    cause_moves: tuple[str, ...] = ()
    #: the study the claim belongs to (``S1``...), set by the study report
    study: str | None = None


Block = Paragraph | Table | Figure | Diagram | ClaimVerdict


@dataclass
class Section:
    """A titled part of a report, possibly with subsections (one level of the TOC each)."""

    title: str
    blocks: list[Block] = field(default_factory=list)
    subsections: list[Section] = field(default_factory=list)

    def walk(self) -> Iterator[Block]:
        """Every block of this section and its subsections, in reading order."""
        yield from self.blocks
        for sub in self.subsections:
            yield from sub.walk()


@dataclass
class Report:
    """A whole report: title, sections, provenance (versions, hashes, seeds, command) and
    ``records``: JSON-ready facts a program reads from ``report.json`` (e.g. which lens ran
    which experiment) beside the verdicts."""

    title: str
    sections: list[Section] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    records: dict[str, Any] = field(default_factory=dict)

    def blocks(self) -> Iterator[Block]:
        """Every block of the report in reading order."""
        for section in self.sections:
            yield from section.walk()

    def tables(self) -> list[Table]:
        """The report's tables, in reading order."""
        return [block for block in self.blocks() if isinstance(block, Table)]

    def figures(self) -> list[Figure]:
        """The report's figures, in reading order."""
        return [block for block in self.blocks() if isinstance(block, Figure)]

    def verdicts(self) -> list[ClaimVerdict]:
        """The report's verdicts, in reading order."""
        return [block for block in self.blocks() if isinstance(block, ClaimVerdict)]

    def diagrams(self) -> list[Diagram]:
        """The report's diagrams, in reading order."""
        return [block for block in self.blocks() if isinstance(block, Diagram)]

    def _repr_html_(self) -> str:
        from tcpn.reports.render import report_html

        return report_html(self, standalone=False)
