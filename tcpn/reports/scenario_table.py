"""Many scenarios through one lens, one row each: the table a study compares its experiments by.

A study is a family of scenario files (``scenarios/studies/s1_*.yaml``); this runs each
with one lens (one run from its seed, in worker processes) and gathers, per scenario,
the figures people compare across experiments: aggregate and per-flow goodput, Jain's
fairness, retransmissions and timeouts, mean RTT, the busiest queue, the time to
deliver sized transfers, the 802.11 stations' bytes per joule (study S3) when a scenario
has a wireless hop, and the CPU time the run took. A scenario that fails (bad
input, a lens that refuses it) gets a row with the error instead of its figures: no
result is lost and the others still run.

Rows depend only on the files, the lens and the seeds, not on the number of workers or
on which run finishes first. From the command line::

    tcpn table scenarios/studies/s1_*.yaml --markdown s1.md --csv s1.csv
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcpn.errors import InputError
from tcpn.workers import run_in_workers

__all__ = ["ABSENT", "COLUMNS", "ENERGY_COLUMN", "ScenarioRow", "absent_reasons",
           "format_cell", "run_scenarios", "scenario_frame", "to_markdown"]


@dataclass(frozen=True)
class ScenarioRow:
    """One scenario's run: its summary (``tcpn.models.metrics``), or why it has none."""

    path: str
    name: str
    lens: str
    seed: int | None
    cpu_s: float
    summary: dict[str, Any] | None = None
    error: str | None = None
    #: whether ``error`` is the file's fault (invalid input), not the run's
    invalid_input: bool = False
    #: the lens's 802.11 report (:mod:`tcpn.reports.energy`), when the scenario has a hop
    wireless: dict[str, Any] | None = None


def _flows(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    flows: dict[str, dict[str, Any]] = summary.get("flows", {})
    return flows


def _finite(values: Iterable[Any]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


#: The cell of a metric the run could not compute (the reason is printed below the table).
ABSENT = "n/a"


def _aggregate(metric: str, scale: float) -> Callable[[dict[str, Any]], Any]:
    """The column of an aggregate metric, scaled; :data:`ABSENT` when the run lacks it."""
    def value(summary: dict[str, Any]) -> Any:
        if metric in summary.get("absent", {}):
            return ABSENT
        found = summary["aggregate"].get(metric)
        return math.nan if found is None else found * scale
    return value


def absent_reasons(rows: Sequence[ScenarioRow]) -> list[str]:
    """Why cells are :data:`ABSENT`: one line per reason, naming the metrics and files."""
    by_reason: dict[str, dict[str, None]] = {}
    for row in rows:
        for metric, reason in ((row.summary or {}).get("absent") or {}).items():
            by_reason.setdefault(reason, {})[metric] = None
    return [f"{ABSENT} ({', '.join(metrics)}): {reason}"
            for reason, metrics in by_reason.items()]


def _per_flow_goodput(summary: dict[str, Any]) -> str:
    if "goodput_bps" in summary.get("absent", {}):
        return ABSENT
    return " ".join(f"{flow}={metrics['goodput_bps'] * 1e-6:.3f}"
                    for flow, metrics in _flows(summary).items())


def _timeouts(summary: dict[str, Any]) -> Any:
    if "timeouts" in summary.get("absent", {}):
        return ABSENT
    return int(sum(m.get("timeouts", 0.0) for m in _flows(summary).values()))


def _mean_rtt_ms(summary: dict[str, Any]) -> Any:
    if "rtt_mean_s" in summary.get("absent", {}):
        return ABSENT
    values = _finite(m.get("rtt_mean_s") for m in _flows(summary).values())
    return 1e3 * sum(values) / len(values) if values else math.nan


def _busiest_queue(summary: dict[str, Any]) -> str:
    queues = summary.get("queues", {})
    if not queues:
        return ""
    name, q = max(queues.items(), key=lambda item: (item[1].get("mean_packets", 0.0), item[0]))
    return f"{name} {_packets(q['mean_packets'])}/{_packets(q['max_packets'])}"


def _packets(value: float) -> str:
    """A queue length to one decimal, whole numbers without one: both ends of "mean/max"
    rounded alike, so a maximum never prints below its mean (not "6.2/6").

    >>> f"{_packets(6.2)}/{_packets(6.24)}", f"{_packets(6.2)}/{_packets(7.0)}"
    ('6.2/6.2', '6.2/7')
    """
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _completion_s(summary: dict[str, Any]) -> Any:
    if "completion_s" in summary.get("absent", {}):
        return ABSENT
    values = [m.get("completion_s") for m in _flows(summary).values()]
    done = _finite(values)
    if not values or len(done) < len(values):
        return math.nan  # a flow without a sized transfer, or one that did not finish
    return max(done)


#: The column of the 802.11 stations' bytes per joule (``link=value`` per wireless link).
ENERGY_COLUMN = "802.11 bytes/J"
#: (column title, function of the summary giving the value) in table order
COLUMNS: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("flows", lambda s: len(_flows(s))),
    ("goodput Mbit/s", _aggregate("goodput_bps", 1e-6)),
    ("per flow Mbit/s", _per_flow_goodput),
    ("Jain", _aggregate("jain_index", 1.0)),
    ("retx %", _aggregate("retransmission_ratio", 100.0)),
    ("timeouts", _timeouts),
    ("mean RTT ms", _mean_rtt_ms),
    ("busiest queue mean/max pkts", _busiest_queue),
    ("all delivered s", _completion_s),
)


def _run_one(path: str, lens: str, seed: int | None) -> ScenarioRow:
    """Run one file (in a worker process); an error becomes the row's ``error``."""
    from tcpn.lenses import evaluate
    from tcpn.models.scenario import load_scenario

    start = time.process_time()
    name, used_seed = Path(path).stem, seed
    try:
        scenario = load_scenario(path)
        name = scenario.name
        used_seed = scenario.seed if seed is None else seed
        result = evaluate(scenario, lens, seed=used_seed)
    except Exception as exc:  # the row says what went wrong; the other files still run
        return ScenarioRow(path, name, lens, used_seed, time.process_time() - start,
                           error=f"{type(exc).__name__}: {exc}",
                           invalid_input=isinstance(exc, InputError))
    return ScenarioRow(path, name, lens, used_seed, time.process_time() - start,
                       summary=result.summary,
                       wireless=result.provenance.get("lens", {}).get("wireless") or None)


def run_scenarios(paths: Sequence[str | Path], lens: str = "net", seed: int | None = None,
                  workers: int | None = None,
                  progress: Callable[[ScenarioRow], None] | None = None) -> list[ScenarioRow]:
    """Run every file of ``paths`` once with ``lens`` (``seed`` or each file's own), in
    ``workers`` processes (default: CPU count); rows in the order of ``paths``.

    ``progress`` is called with each row as it completes.
    """
    files = [str(p) for p in paths]
    if not files:
        raise InputError("no scenario files given")
    for name in files:
        if not Path(name).is_file():
            raise InputError(f"cannot read scenario {name}: " + (
                "not a regular file (a directory)" if Path(name).is_dir()
                else "no such file or directory"))
    count = max(1, min(workers or os.cpu_count() or 1, len(files)))
    rows: dict[int, ScenarioRow] = {}
    if count == 1:
        for index, path in enumerate(files):
            rows[index] = _run_one(path, lens, seed)
            if progress is not None:
                progress(rows[index])
    else:
        def collect(index: int, row: ScenarioRow) -> None:
            rows[index] = row
            if progress is not None:
                progress(row)

        run_in_workers(_run_one, [(path, lens, seed) for path in files], count, collect)
    return [rows[i] for i in range(len(files))]


def _bytes_per_joule(wireless: dict[str, Any] | None) -> str:
    if not wireless:
        return ""
    return " ".join(f"{link}={fields['bytes_per_joule']:.0f}" for link, fields in
                    wireless.items() if fields.get("bytes_per_joule") is not None)


def scenario_frame(rows: Sequence[ScenarioRow]) -> pd.DataFrame:
    """One line per row: ``scenario`` (the file name for a failed row), the
    :data:`COLUMNS`, the 802.11 stations' bytes per joule when a scenario has a wireless
    hop, ``CPU s`` and ``error``."""
    energy = [ENERGY_COLUMN] if any(row.wireless for row in rows) else []
    records = []
    for row in rows:
        # a failed row names its file: the scenario's name may be what is wrong
        record: dict[str, Any] = {"scenario": Path(row.path).name if row.error else row.name}
        for title, value in COLUMNS:
            record[title] = value(row.summary) if row.summary is not None else None
        if energy:
            record[ENERGY_COLUMN] = _bytes_per_joule(row.wireless)
        record["CPU s"] = row.cpu_s
        record["error"] = row.error or ""
        records.append(record)
    # object columns keep counts as ints beside the blanks of failed rows
    return pd.DataFrame(records, columns=["scenario", *(t for t, _ in COLUMNS), *energy,
                                          "CPU s", "error"], dtype=object)


def format_cell(value: Any) -> str:
    """A table cell: numbers to 3 decimals (whole above 1000), blank when undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def to_markdown(frame: pd.DataFrame) -> str:
    """``frame`` as a Markdown table (numbers to 3 decimals, blanks for undefined values;
    a multi-line error on one line).

    >>> print(to_markdown(pd.DataFrame({"scenario": ["a"], "goodput Mbit/s": [1.5]})))
    | scenario | goodput Mbit/s |
    |---|---|
    | a | 1.500 |
    """
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    for record in frame.itertuples(index=False):
        cells = (format_cell(v).replace("|", "\\|").replace("\n", "; ") for v in record)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
