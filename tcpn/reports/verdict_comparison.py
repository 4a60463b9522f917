"""Two study reports' verdicts side by side: the quick profile's against the full one's.

The quick profile (``make run``) runs fewer replications on shorter horizons than the
publication profile; a reader must know whether its verdicts are the full profile's. A
study report made with ``--against DIR`` reads the verdicts of the earlier study report in
``DIR`` (its ``report.json``) and lists every claim with both verdicts, each lens's
reading in both, and the values its test compared, so that a verdict that moves with the
profile shows with the numbers that moved it.

>>> this = [{"study": "S1", "claim": "A", "status": "reproduced",
...          "lenses": {"net": {"status": "reproduced"}},
...          "values": {"net": {"x": {"mean": 2.0, "n": 5}}}}]
>>> other = EarlierReport("full/", "full", "abc", (
...     {"study": "S1", "claim": "A", "status": "differs (unexplained)",
...      "lenses": {"net": {"status": "differs (unexplained)"}},
...      "values": {"net": {"x": {"mean": 1.5, "n": 10}}}},))
>>> row = comparison_frame(this, "quick", other).iloc[0]
>>> row["same"], row["what moved"]
('no', 'net: reproduced -> differs (unexplained); x 2 (n = 5) -> 1.5 (n = 10)')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcpn.errors import InputError
from tcpn.limits import read_input

__all__ = ["EarlierReport", "comparison_frame", "comparison_record", "read_earlier_report"]

_LENSES = ("net", "ns3", "fluid")


@dataclass(frozen=True)
class EarlierReport:
    """The verdicts of an earlier study report: where it is, its profile, the commit it
    ran and its verdict records (as ``report.json`` lists them)."""

    path: str
    profile: str
    commit: str
    verdicts: tuple[Mapping[str, Any], ...]

    def as_record(self) -> dict[str, Any]:
        """JSON-ready, so that a rebuilt report compares against the same verdicts."""
        return {"path": self.path, "profile": self.profile, "commit": self.commit,
                "verdicts": [dict(v) for v in self.verdicts]}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> EarlierReport:
        """The inverse of :meth:`as_record`."""
        return cls(str(record["path"]), str(record["profile"]), str(record["commit"]),
                   tuple(record["verdicts"]))


def read_earlier_report(directory: str | Path) -> EarlierReport:
    """The verdicts of the study report in ``directory`` (its ``report.json``).

    Refused with an :class:`InputError` naming the file and the field at fault when the
    directory holds no study report. Verdicts of reports written before they named their
    study are matched by their claim alone."""
    path = Path(directory) / "report.json"
    if not path.exists():
        raise InputError(f"{directory}: no report.json: --against takes the directory of "
                         "an earlier study report (tcpn report study ...)")
    try:
        record = json.loads(read_input(path, "stored_file_bytes", "earlier report")
                            .decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable report: {exc}") from None
    if not isinstance(record, dict) or record.get("format") != "tcpn-report/1":
        raise InputError(f"{path}: format: not a tcpn report (expected 'tcpn-report/1')")
    provenance = record.get("provenance")
    profile = provenance.get("profile") if isinstance(provenance, dict) else None
    if not isinstance(profile, str):
        raise InputError(f"{path}: provenance.profile: missing: not a study report")
    versions = provenance.get("versions") if isinstance(provenance, dict) else None
    commit = versions.get("tcpn commit", "unknown") if isinstance(versions, dict) \
        else "unknown"
    verdicts = record.get("verdicts")
    if not isinstance(verdicts, list):
        raise InputError(f"{path}: verdicts: expected a list")
    for i, verdict in enumerate(verdicts):
        if not isinstance(verdict, dict):
            raise InputError(f"{path}: verdicts[{i}]: expected an object")
        for name in ("claim", "status"):
            if not isinstance(verdict.get(name), str):
                raise InputError(f"{path}: verdicts[{i}].{name}: missing or not text")
        if not isinstance(verdict.get("study", ""), str):
            raise InputError(f"{path}: verdicts[{i}].study: not text")
    return EarlierReport(str(directory), profile, str(commit), tuple(verdicts))


def _value_text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, Mapping):
        mean = value.get("mean")
        shown = "-" if mean is None else f"{mean:.4g}"
        return f"{shown} (n = {value.get('n', '?')})"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.4g}"
    return str(value)


def _moved(this: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    """Per lens: its reading's status in both, and the compared values that differ."""
    parts = []
    for lens in _LENSES:
        mine = this.get("lenses", {}).get(lens, {}).get("status")
        theirs = other.get("lenses", {}).get(lens, {}).get("status")
        values = this.get("values", {}).get(lens) or {}
        earlier = other.get("values", {}).get(lens) or {}
        changes = [f"{name} {_value_text(values.get(name))} -> "
                   f"{_value_text(earlier.get(name))}"
                   for name in dict.fromkeys([*values, *earlier])
                   if _value_text(values.get(name)) != _value_text(earlier.get(name))]
        if mine is None and theirs is None and not changes:
            continue
        text = f"{lens}: " + ("values" if mine is None and theirs is None else
                              f"{mine or 'not asked'}" + (
                                  f" -> {theirs or 'not asked'}" if theirs != mine
                                  else " in both"))
        parts.append(text + ("; " + ", ".join(changes) if changes else ""))
    return "; ".join(parts)


def comparison_frame(verdicts: Sequence[Mapping[str, Any]], profile: str,
                     earlier: EarlierReport) -> pd.DataFrame:
    """One row per claim of either report: study, claim, the verdict in this report
    (``profile``) and in ``earlier``, ``same`` (yes/no) and what moved (each lens's
    reading and the values its test compared that differ)."""
    every = [*verdicts, *earlier.verdicts]
    by_claim = any(not v.get("study") for v in every)  # a report older than study names

    def key(verdict: Mapping[str, Any]) -> tuple[str, str]:
        return ("" if by_claim else verdict["study"]), verdict["claim"]

    theirs = {key(v): v for v in earlier.verdicts}
    mine = {key(v): v for v in verdicts}
    studies = {v["claim"]: v["study"] for v in every if v.get("study")}
    here = f"{profile} verdict"
    there = f"{earlier.profile} verdict" if earlier.profile != profile \
        else f"earlier {profile} verdict"
    rows = []
    for claim_key in dict.fromkeys([*mine, *theirs]):
        a, b = mine.get(claim_key), theirs.get(claim_key)
        rows.append({"study": claim_key[0] or studies.get(claim_key[1], ""),
                     "claim": claim_key[1],
                     here: a["status"] if a else "not in this report",
                     there: b["status"] if b else "not in that report",
                     "same": "yes" if a and b and a["status"] == b["status"] else "no",
                     "what moved": _moved(a, b) if a and b else ""})
    return pd.DataFrame(rows, columns=["study", "claim", here, there, "same", "what moved"])


def comparison_record(frame: pd.DataFrame, earlier: EarlierReport) -> dict[str, Any]:
    """For ``report.json``: the earlier report, how many claims keep their verdict and
    which do not."""
    differ = frame[frame["same"] == "no"]
    return {"path": earlier.path, "profile": earlier.profile, "commit": earlier.commit,
            "claims": len(frame), "same": int((frame["same"] == "yes").sum()),
            "differ": [{"study": r["study"], "claim": r["claim"]}
                       for _, r in differ.iterrows()]}
