"""The five published studies as experiment modules, one shape for all five.

Each module ``s1`` ... ``s5`` defines one object satisfying :class:`Study`:

* ``run(profile, progress)`` simulates the study's experiments (every lens that can
  express them, replications, the axes of the parameters the study left unstated) and
  returns :class:`StudyData`: named tidy tables (pandas) plus JSON-ready metadata. This is
  the only step that simulates; its output is what a results directory stores.
* ``sections(data)`` builds the report's sections (tables, figures, the study's published
  numbers beside tcpn's, one :class:`~tcpn.reports.document.ClaimVerdict` per claim) from
  ``data`` alone, so ``tcpn report --from DIR`` rebuilds the report without simulating.

``profile`` is ``"quick"`` (``make run``: fewer replications, shorter horizons, stated in
the report) or ``"full"`` (the publication profile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import pandas as pd

from tcpn.reports.document import Section

Profile = Literal["quick", "full"]
StudyProgress = Callable[[str, int, int], None]
"""``progress(what, done, total)``: what is running, and how far the study has got."""


@dataclass
class StudyData:
    """What a study's runs produced: tidy tables by name and JSON-ready metadata."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


class Study(Protocol):
    """The shape every study module's ``STUDY`` object has."""

    key: str  # "s1" ... "s5"
    title: str

    def run(self, profile: Profile, progress: StudyProgress) -> StudyData:
        """Simulate the study's experiments and return their data."""
        ...

    def sections(self, data: StudyData) -> list[Section]:
        """The report's sections, built from ``data`` alone (no simulation)."""
        ...
