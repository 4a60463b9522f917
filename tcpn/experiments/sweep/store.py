"""The campaign store: every run stored once, keyed by what determines its result.

A run's key is the SHA-256 of its concrete scenario (:meth:`Scenario.content_hash` plus
its ``measure`` and ``trace`` sections, which change the summary), the lens and its
options, the seed, the replication index and the code that ran (:func:`tcpn.source.source_id`:
the version and a digest of the source). Layout::

    STORE/store.json                          format marker (a directory without it is
                                              never written into)
    STORE/tcpn-<source>/runs/ab/<key>.json    one record per run: summary or error
    STORE/tcpn-<source>/traces/ab/<key>/      its trace tables (Parquet), when kept

Runs of other code (another version, or the same version with a changed source file) live
under their own ``tcpn-<source>`` and are never read for this one: a campaign cut short
resumes only on the code that began it. Every file appears whole or not at all (written
under a temporary name, then renamed), so two campaigns writing one store at once only ever
race to write the same bytes; a reader never sees half a record.

>>> import tempfile
>>> store = CampaignStore(tempfile.mkdtemp())
>>> store.get("0" * 64) is None, store.keys()
(True, [])
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tcpn.errors import InputError
from tcpn.models.scenario import Scenario, TraceSelection
from tcpn.models.traces import Trace, untraced_by
from tcpn.source import source_id

__all__ = ["RECORD_FORMAT", "STORE_FORMAT", "CampaignStore", "run_key"]

STORE_FORMAT = "tcpn-campaign-store/1"
RECORD_FORMAT = "tcpn-run/1"


def run_key(scenario: Scenario, lens: str, options: Mapping[str, Any], seed: int,
            replication: int, version: str | None = None) -> str:
    """The store key of one run (hex SHA-256).

    >>> from tcpn.models.scenario import dumbbell
    >>> s = dumbbell(pairs=1, horizon_s=1.0)
    >>> run_key(s, "net", {}, 1, 0) == run_key(s.model_copy(update={"name": "x"}), "net",
    ...                                        {}, 1, 0)
    True
    >>> run_key(s, "net", {}, 1, 0) == run_key(s, "net", {}, 1, 1)
    False
    """
    identity = {
        "scenario": scenario.content_hash(),
        "measure": scenario.measure.model_dump(mode="json"),
        "trace": scenario.trace.model_dump(mode="json"),
        "lens": lens, "options": dict(options), "seed": seed, "replication": replication,
        "tcpn": version or source_id(),
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


class CampaignStore:
    """A directory of run records of one tcpn source (see the module docstring)."""

    def __init__(self, root: str | Path, version: str | None = None):
        self.root = Path(root)
        self.version = version or source_id()
        marker = self.root / "store.json"
        if self.root.exists() and not self.root.is_dir():
            raise InputError(f"store {self.root}: is a file, not a directory")
        # a marker that another campaign is writing right now is no user's file
        if self.root.is_dir() and not marker.exists() and any(
                not p.name.startswith(".store.json.") for p in self.root.iterdir()):
            raise InputError(f"store {self.root}: the directory is not empty and is not a "
                             "tcpn campaign store (no store.json): choose another --store")
        if marker.exists():
            try:
                found = json.loads(marker.read_text()).get("format")
            except (OSError, ValueError, AttributeError):
                found = None
            if found != STORE_FORMAT:
                raise InputError(f"store {self.root}: store.json is not a {STORE_FORMAT} "
                                 f"marker (found {found!r})")
        else:
            made = not self.root.exists()
            try:
                self.root.mkdir(parents=True, exist_ok=True)
                _write_atomic(marker, json.dumps({"format": STORE_FORMAT}) + "\n")
            except OSError as exc:
                if made:  # no empty store left behind
                    with contextlib.suppress(OSError):
                        self.root.rmdir()
                raise self._cannot_write(exc) from None
        self.home = self.root / f"tcpn-{self.version}"
        self.runs_dir = self.home / "runs"
        self.traces_dir = self.home / "traces"

    def _cannot_write(self, exc: OSError, path: Path | None = None) -> InputError:
        reason = "read-only file system" if exc.errno == errno.EROFS else \
            (exc.strerror or str(exc)).lower()
        return InputError(f"store {self.root}: cannot write "
                          f"{path or exc.filename or self.root}: {reason}")

    def check_writable(self) -> None:
        """Refuse, before any run, a store that cannot take a new file (a read-only file
        system, a directory without write permission, a full disk)."""
        probe = self.root / f".store.json.probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            probe.write_text("{}\n")
        except OSError as exc:
            raise self._cannot_write(exc, self.root) from None
        finally:
            with contextlib.suppress(OSError):
                probe.unlink()

    def other_versions(self) -> list[str]:
        """Other tcpn sources whose runs are also in this store (kept apart, never read)."""
        return sorted(p.name.removeprefix("tcpn-") for p in self.root.glob("tcpn-*")
                      if p.is_dir() and p != self.home)

    def _record_path(self, key: str) -> Path:
        return self.runs_dir / key[:2] / f"{key}.json"

    def trace_path(self, key: str) -> Path:
        """Directory of the run's trace tables (exists only when the trace was kept)."""
        return self.traces_dir / key[:2] / key

    def get(self, key: str) -> dict[str, Any] | None:
        """The record stored under ``key``, or None."""
        try:
            record: dict[str, Any] = json.loads(self._record_path(key).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise InputError(f"store {self.root}: record {key} is unreadable: {exc}") from None
        return record

    def keys(self) -> list[str]:
        """Every stored key (sorted)."""
        return sorted(p.stem for p in self.runs_dir.glob("*/*.json"))

    def put(self, record: Mapping[str, Any], trace_files: Mapping[str, bytes] | None = None,
            ) -> None:
        """Store ``record`` (and its trace tables, written first) under ``record["key"]``."""
        key = str(record["key"])
        if record.get("tcpn_source") != self.version:
            raise InputError(f"store {self.root}: a run of tcpn {record.get('tcpn_source')} "
                             f"cannot join the tcpn {self.version} runs")
        try:
            if trace_files:
                self._put_trace(key, trace_files)
            path = self._record_path(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, json.dumps(record, indent=1, sort_keys=True, allow_nan=False)
                          + "\n")
        except OSError as exc:  # a full disk, a file system remounted read-only
            raise self._cannot_write(exc) from None

    def _put_trace(self, key: str, trace_files: Mapping[str, bytes]) -> None:
        target = self.trace_path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{key}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            tmp.mkdir()
            for name, data in trace_files.items():
                (tmp / Path(name).name).write_bytes(data)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)  # no partial trace left behind
            raise
        if target.exists():
            shutil.rmtree(tmp)  # another campaign stored the same run first
        else:
            try:
                os.rename(tmp, target)
            except OSError:  # ... or did so just now
                shutil.rmtree(tmp, ignore_errors=True)

    def load_trace(self, key: str) -> Trace:
        """The trace of a stored run whose trace was kept."""
        record = self.get(key)
        directory = self.trace_path(key)
        if record is None or not directory.is_dir():
            raise InputError(f"store {self.root}: run {key} has no stored trace (run the "
                             "sweep with --traces)")
        measure = record["measure"]
        selection = TraceSelection.model_validate(record["scenario"].get("trace", {}))
        return Trace.load(directory, measure["horizon_s"], measure["warmup_s"],
                          measure["bin_s"], untraced_by(selection))


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
