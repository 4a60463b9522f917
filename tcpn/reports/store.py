"""A report's stored results: the data it was built from, so it can be rebuilt unsimulated.

A results directory (``REPORT/results``) holds, for each part of a report (a study, a
scenario run, a validation), its tables as Parquet files and its metadata as JSON, and a
``manifest.json`` naming the report kind, the tcpn version that wrote it, the
provenance, and the SHA-256 of every file. :func:`load_results` refuses a directory from
another tcpn version or one whose files are missing or changed, naming the file, with
:class:`~tcpn.errors.InputError` (exit 3 from the CLI). A manifest is data from a
directory anyone may have handed over: its file entries are read only as relative paths
inside the results directory (no ``..``, no absolute path, no symbolic link leading out),
only regular files of at most the limit ``stored_file_bytes`` (:mod:`tcpn.limits`), and
refused, naming the entry, otherwise.

>>> import tempfile, pandas as pd
>>> from pathlib import Path
>>> from tcpn.reports.studies import StudyData
>>> root = Path(tempfile.mkdtemp()) / "results"
>>> part = StudyData({"runs": pd.DataFrame({"x": [1.0, 2.0]})}, {"seed": 7})
>>> save_results(root, "study", {"s9": part}, {"command": "example"})
>>> stored = load_results(root)
>>> stored.kind, stored.parts["s9"].metadata, list(stored.parts["s9"].tables["runs"]["x"])
('study', {'seed': 7}, [1.0, 2.0])
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tcpn import __version__
from tcpn.errors import InputError
from tcpn.limits import UnreadableInput, read_input
from tcpn.reports.studies import StudyData

__all__ = ["RESULTS_FORMAT", "StoredResults", "load_results", "round_trip", "save_results"]

RESULTS_FORMAT = "tcpn-report-results/1"
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


@dataclass
class StoredResults:
    """What a results directory holds: the report kind, its parts, the provenance."""

    kind: str
    parts: dict[str, StudyData]
    provenance: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def _checked_name(name: str, what: str) -> str:
    if not name or not set(name) <= _SAFE or name.startswith("."):
        raise InputError(f"{what} {name!r}: use letters, digits, '_', '-' and '.' only")
    return name


def _parquet_bytes(frame: pd.DataFrame, where: str) -> bytes:
    buffer = io.BytesIO()
    try:
        frame.to_parquet(buffer, index=True)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{where}: this table can't be stored ({exc})") from None
    return buffer.getvalue()


def _json_bytes(value: Any, where: str) -> bytes:
    try:
        return (json.dumps(value, indent=1, sort_keys=True, allow_nan=False) + "\n").encode()
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: the metadata is not plain JSON data ({exc})") from None


def round_trip(data: StudyData, where: str = "study data") -> StudyData:
    """``data`` as :func:`load_results` would give it back after storing it: a report
    built from this is the report ``--from`` rebuilds."""
    tables = {name: pd.read_parquet(io.BytesIO(_parquet_bytes(frame, f"{where}.{name}")))
              for name, frame in data.tables.items()}
    return StudyData(tables, json.loads(_json_bytes(data.metadata, where)))


def save_results(directory: Path, kind: str, parts: dict[str, StudyData],
                 provenance: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
    """Write ``parts`` and the manifest into the new directory ``directory``."""
    directory.mkdir(parents=True)
    files: dict[str, dict[str, Any]] = {}
    for key, data in parts.items():
        _checked_name(key, "report part")
        (directory / key).mkdir()
        entry: dict[str, Any] = {"tables": {}}
        for name, frame in data.tables.items():
            blob = _parquet_bytes(frame, f"{key}.{_checked_name(name, 'table')}")
            (directory / key / f"{name}.parquet").write_bytes(blob)
            entry["tables"][name] = {"file": f"{key}/{name}.parquet",
                                     "sha256": hashlib.sha256(blob).hexdigest()}
        blob = _json_bytes(data.metadata, f"{key} metadata")
        (directory / key / "metadata.json").write_bytes(blob)
        entry["metadata"] = {"file": f"{key}/metadata.json",
                             "sha256": hashlib.sha256(blob).hexdigest()}
        files[key] = entry
    manifest = {"format": RESULTS_FORMAT, "tcpn_version": __version__, "kind": kind,
                "provenance": [[key, value] for key, value in provenance.items()],
                "extra": extra or {}, "parts": files}  # provenance in its reading order
    (directory / "manifest.json").write_bytes(_json_bytes(manifest, "manifest"))


def _read(root: Path, entry: Any, where: str) -> bytes:
    """The bytes of the file the manifest entry ``entry`` (``{"file", "sha256"}``, at
    ``where``) names: a relative path that stays inside ``root`` (symbolic links
    resolved), a regular file of at most ``stored_file_bytes``, with the SHA-256 the entry
    records. Anything else is refused naming the entry: a manifest from elsewhere must not
    make tcpn read ``/etc/...`` or ``/dev/zero``."""
    file = entry.get("file") if isinstance(entry, dict) else None
    digest = entry.get("sha256") if isinstance(entry, dict) else None
    if not isinstance(digest, str):
        raise InputError(f"{where}: no SHA-256 recorded for the file; the results "
                         "directory is damaged")
    if not (isinstance(file, str) and all(part and set(part) <= _SAFE and part[0] != "."
                                          for part in file.split("/"))):
        raise InputError(f"{where}: file {file!r} is not a relative path inside the results "
                         f"directory {root} (names of letters, digits, '_', '-' and '.' "
                         "joined by '/'); the manifest is damaged or not tcpn's")
    path = root / file
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a loop of symbolic links
        inside = False
    if not inside:
        raise InputError(f"{where}: file {file!r} ({path}) leads outside the results "
                         f"directory {root} through a symbolic link; refused")
    try:
        blob = read_input(path, "stored_file_bytes", "stored result")
    except UnreadableInput as exc:
        raise InputError(f"{where}: file {file!r} ({path}): {exc.problem}") from None
    if hashlib.sha256(blob).hexdigest() != digest:
        raise InputError(f"{path}: the file changed since tcpn wrote it (its SHA-256 differs "
                         f"from {where}); the results directory is damaged")
    return blob


def load_results(directory: str | Path) -> StoredResults:
    """Read a results directory written by :func:`save_results` (see the module
    docstring for what is refused)."""
    root = Path(directory)
    manifest_path = root / "manifest.json"
    try:
        manifest = json.loads(read_input(manifest_path, "stored_file_bytes",
                                         "stored results manifest"))
    except UnreadableInput as exc:
        raise InputError(f"{manifest_path}: no stored results here ({exc.problem}); give "
                         "the directory a `tcpn report` wrote, or its results/ folder") \
            from None
    except ValueError as exc:
        raise InputError(f"{manifest_path}: not valid JSON ({exc}); the results directory "
                         "is damaged") from None
    except RecursionError:  # json's reader recurses once per level of nesting
        raise InputError(f"{manifest_path}: nested too deep to read; the results directory "
                         "is damaged") from None
    if not isinstance(manifest, dict) or manifest.get("format") != RESULTS_FORMAT:
        raise InputError(f"{manifest_path}: not a tcpn results manifest (format "
                         f"{manifest.get('format') if isinstance(manifest, dict) else None!r},"
                         f" expected {RESULTS_FORMAT!r})")
    if manifest.get("tcpn_version") != __version__:
        raise InputError(f"{manifest_path}: written by tcpn {manifest.get('tcpn_version')}, "
                         f"this is tcpn {__version__}; rebuild the results with this "
                         "version (the report would not be the same)")
    try:
        parts: dict[str, StudyData] = {}
        for key, entry in manifest["parts"].items():
            where = f"{manifest_path}: parts.{key}"
            tables = {name: pd.read_parquet(io.BytesIO(_read(root, table,
                                                             f"{where}.tables.{name}")))
                      for name, table in entry["tables"].items()}
            metadata = json.loads(_read(root, entry["metadata"], f"{where}.metadata"))
            parts[key] = StudyData(tables, metadata)
        provenance = {str(key): value for key, value in manifest["provenance"]}
        return StoredResults(str(manifest["kind"]), parts, provenance,
                             dict(manifest.get("extra", {})))
    except InputError:
        raise
    except RecursionError:  # a stored metadata file nested past Python's stack
        raise InputError(f"{manifest_path}: a stored file it lists is nested too deep to "
                         "read; the results directory is damaged") from None
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise InputError(f"{manifest_path}: the manifest lacks {exc}; the results "
                         "directory is damaged") from None
