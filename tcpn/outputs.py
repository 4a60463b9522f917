"""Where tcpn writes: outputs that appear whole or not at all, never over what is not tcpn's.

Every command and library function that writes a result directory goes through
:func:`atomic_directory`, and every single output file (a CSV, a Markdown table, an
exported net, a figure) through :func:`atomic_file`. The rules:

* the files go to a hidden sibling ``.NAME.partial-PID`` first, renamed to ``NAME`` only
  when complete: a result appears whole or not at all;
* that sibling is created *before* the work starts, so an unwritable or read-only target
  is reported before a simulation runs, not after it;
* when the block succeeds, the :data:`MARKER` file is written last into the directory: it
  lists every file tcpn wrote there (relative path, size, SHA-256) and every directory;
* an existing directory is replaced only with ``overwrite`` and only when its marker lists
  everything in it, unchanged: a file or directory the marker does not list (the user
  added it), a listed file whose size or SHA-256 differ (the user edited it) or a symbolic
  link is named and the directory refused; a directory without a marker, or with a marker
  that lists nothing (one written by a tcpn before markers listed files), is refused and
  never guessed at; an empty directory is filled (nothing in it can be lost). A file is
  never replaced by a directory, nor a directory by a file; an existing file is replaced
  only with ``overwrite``;
* a command's output files are checked together (:func:`check_output_files`): two that
  are one file, or one that is the command's input (through a symbolic link too), are
  refused before any work, ``overwrite`` or not;
* leftovers of writes that were killed (``.NAME.partial-PID`` directories holding the
  marker, ``.STEM.partial-PID.SUFFIX`` files, of a process that no longer runs) are
  removed, and said so, by the next write into ``NAME``; those of live processes and the
  ``.NAME.old-PID`` of a replacement that was killed half-way (the previous result) are
  reported and left alone.

Reports are :class:`OutputWarning` warnings (the CLI prints them as one line each).

>>> import tempfile
>>> root = Path(tempfile.mkdtemp())
>>> with atomic_directory(root / "out") as tmp:
...     _ = (tmp / "x.txt").write_text("done")
>>> sorted(p.name for p in (root / "out").iterdir())
['.tcpn-output', 'x.txt']
>>> with atomic_directory(root / "out") as tmp:  # doctest: +ELLIPSIS
...     pass
Traceback (most recent call last):
...
tcpn.outputs.OutputError: .../out exists (a tcpn output): pass overwrite ...
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import shutil
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tcpn.errors import InputError
from tcpn.interruption import honour_stop
from tcpn.limits import read_input

__all__ = ["MARKER", "OutputError", "OutputWarning", "atomic_directory", "atomic_file",
           "atomic_files", "check_output_file", "is_tcpn_output", "json_ready", "leftovers",
           "save_figure"]

#: The file tcpn writes into every output directory, last: the files and directories it
#: wrote there (``{"format", "files": {path: {"size", "sha256"}}, "directories": [...]}``).
MARKER = ".tcpn-output"
_MARKER_FORMAT = "tcpn-output/2"
#: Entries named when a directory without a marker is refused (then "and N more").
_SHOWN = 5


class OutputError(InputError):
    """An output path tcpn must not or cannot write (the message names it and says why)."""


class OutputWarning(UserWarning):
    """Something found beside an output: leftovers of a killed run, removed or kept."""


def is_tcpn_output(directory: str | Path) -> bool:
    """Whether ``directory`` is a directory tcpn wrote: its :data:`MARKER` lists the files
    tcpn wrote in it (whether they are all still as written is :func:`atomic_directory`'s
    check before it replaces one)."""
    path = Path(directory)
    return path.is_dir() and not path.is_symlink() and isinstance(_listing(path), dict)


def _sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _write_marker(directory: Path) -> None:
    """Write the :data:`MARKER` of ``directory``: everything in it, as it is now."""
    files: dict[str, dict[str, int | str]] = {}
    directories: list[str] = []
    for root, dirnames, filenames in os.walk(directory):
        relative = Path(root).relative_to(directory)
        directories.extend((relative / name).as_posix() for name in dirnames)
        for name in filenames:
            file = Path(root, name)
            if file.is_file() and not file.is_symlink() and file != directory / MARKER:
                files[(relative / name).as_posix()] = {"size": file.stat().st_size,
                                                       "sha256": _sha256(file)}
    record = {"format": _MARKER_FORMAT, "files": files, "directories": sorted(directories)}
    (directory / MARKER).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def _listing(directory: Path) -> dict[str, dict[str, object]] | str:
    """What ``directory``'s :data:`MARKER` lists (relative path -> ``{"size", "sha256"}``,
    a directory -> ``{}``), or why it lists nothing usable."""
    try:
        record = json.loads(read_input(directory / MARKER, "stored_file_bytes",
                                       "output marker"))
    except (InputError, ValueError) as exc:
        return str(exc)
    if not isinstance(record, dict):
        return "not a JSON object"
    if record.get("format") != _MARKER_FORMAT:
        return f"format {record.get('format')!r}"
    files, directories = record.get("files"), record.get("directories")
    if not (isinstance(files, dict) and isinstance(directories, list)
            and all(isinstance(v, dict) and v for v in files.values())
            and all(isinstance(d, str) for d in directories)):
        return "no list of files"
    return {**{d: {} for d in directories}, **files}


def _foreign_entry(directory: Path, listed: dict[str, dict[str, object]],
                   ) -> tuple[str, str] | None:
    """The first entry under ``directory`` that is not as its :data:`MARKER` lists it, as
    ``(relative path, why)``; None when there is none."""
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(directory / folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as exc:
            return folder, f"which tcpn cannot read ({exc.strerror})"
        for entry in entries:
            relative = f"{folder}/{entry.name}" if folder else entry.name
            wrote = listed.get(relative)
            if relative == MARKER:
                continue
            if wrote is None or entry.is_symlink() or entry.is_dir() != (wrote == {}):
                return relative, "which tcpn did not write"
            if entry.is_dir():
                pending.append(relative)
            elif not _as_written(entry, wrote):
                return relative, "which changed since tcpn wrote it"
    return None


def _as_written(entry: os.DirEntry[str], wrote: dict[str, object]) -> bool:
    """Whether the file ``entry`` has the size and SHA-256 the marker lists (``wrote``)."""
    try:
        return (entry.is_file() and entry.stat().st_size == wrote.get("size")
                and _sha256(entry.path) == wrote.get("sha256"))
    except OSError:  # unreadable: tcpn cannot tell it is as written
        return False


def _absolute(target: str | Path, what: str) -> Path:
    path = Path(os.path.abspath(os.fspath(target)))
    if not path.name:
        raise OutputError(f"{what} {os.fspath(target)!r} ({path}) has no name to write "
                          "under: choose a new path")
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def leftovers(target: str | Path) -> list[tuple[Path, int, bool]]:
    """The leftovers of writes into ``target`` beside it: ``.NAME.partial-PID`` and
    ``.NAME.old-PID`` (directories), ``.STEM.partial-PID.SUFFIX`` (files) as ``(path, pid,
    alive)``, where ``alive`` says whether process ``pid`` still runs."""
    path = _absolute(target, "output")
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(?:partial|old)-(\d+)|"
                         rf"\.{re.escape(path.stem)}\.partial-(\d+){re.escape(path.suffix)}")
    found = []
    with contextlib.suppress(OSError):
        for sibling in path.parent.iterdir():
            match = pattern.fullmatch(sibling.name)
            if match:
                pid = int(match.group(1) or match.group(2))
                found.append((sibling, pid, pid != os.getpid() and _alive(pid)))
    return sorted(found)


def _clean_leftovers(path: Path) -> None:
    for sibling, pid, alive in leftovers(path):
        if pid == os.getpid():
            continue
        if sibling.name.startswith(f".{path.name}.old-"):
            warnings.warn(f"{sibling} is the previous content of {path}, left by a run "
                          f"(PID {pid}) killed while replacing it: rename it back or delete "
                          "it", OutputWarning, stacklevel=4)
        elif alive:
            warnings.warn(f"{sibling}: process {pid} is still writing {path}; the last run "
                          "to finish wins", OutputWarning, stacklevel=4)
        else:
            what = "run" if sibling.is_dir() else "write"
            if _removed(sibling):
                warnings.warn(f"removed {sibling}: the partial output of a {what} (PID "
                              f"{pid}) that was killed", OutputWarning, stacklevel=4)
            else:
                warnings.warn(f"{sibling} looks like the partial output of a {what} (PID "
                              f"{pid}) that was killed; tcpn left it alone (delete it if it "
                              "is not yours to keep)", OutputWarning, stacklevel=4)


def _removed(leftover: Path) -> bool:
    """Remove ``leftover`` if it is recognisably tcpn's partial output (a directory holding
    the :data:`MARKER`, or a plain file); whether it was removed."""
    if leftover.is_symlink():
        return False
    if leftover.is_dir() and (leftover / MARKER).is_file():
        shutil.rmtree(leftover, ignore_errors=True)
        return not leftover.exists()
    if leftover.is_file():
        with contextlib.suppress(OSError):
            leftover.unlink()
        return not leftover.exists()
    return False


def _check_directory(path: Path, overwrite: bool, shown: Path | None = None) -> None:
    """Refuse a target directory tcpn must not replace (see the module docstring); the
    messages call ``path`` ``shown`` (the target, when ``path`` is where it was moved)."""
    name = shown or path
    if path.is_symlink():
        raise OutputError(f"{name} is a symbolic link: tcpn does not replace links; choose "
                          "a new directory")
    if path.exists() and not path.is_dir():
        raise OutputError(f"{name} is a file, not a directory: tcpn never replaces a file "
                          "with a directory; choose a new directory")
    names = sorted(os.listdir(path)) if path.is_dir() else []
    if not names:
        return  # new or empty: nothing in it can be lost
    if MARKER not in names:
        listed = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more"
                                              if len(names) > _SHOWN else "")
        raise OutputError(f"{name} exists and is not a tcpn output directory (it holds "
                          f"{listed}, and no {MARKER} lists them as tcpn's): tcpn writes "
                          "only new, empty or its own directories; choose a new directory")
    listing = _listing(path)
    if isinstance(listing, str):
        raise OutputError(f"{name}: its {MARKER} does not list the files tcpn wrote "
                          f"({listing}: an older tcpn wrote no list, or the file is "
                          "damaged): tcpn cannot tell whether anything in it is yours, so it "
                          "does not replace it; move or delete it yourself, or choose a new "
                          "directory")
    foreign = _foreign_entry(path, listing)
    if foreign is not None:
        relative, why = foreign
        raise OutputError(f"{name} holds {name / relative}, {why}: tcpn replaces only a "
                          "directory holding nothing but the files it wrote there; move it "
                          "out of the directory or choose a new directory")
    if not overwrite:
        raise OutputError(f"{name} exists (a tcpn output): pass overwrite (--overwrite) "
                          "to replace it")


#: What a write that had started can meet: a full disk (or quota), a file over the size
#: limit, a file system remounted read-only. Reported as :class:`OutputError` naming the
#: output, the partial output removed.
_FULL_OR_READ_ONLY = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def _cannot_write(path: Path, exc: OSError) -> OutputError:
    reason = (exc.strerror or str(exc)).lower()
    if exc.errno == errno.EROFS:
        reason = "read-only file system"
    for ancestor in path.parents:
        if ancestor.exists():
            if not ancestor.is_dir():
                reason = f"{ancestor} is a file, not a directory"
            break
    return OutputError(f"cannot write {path}: {reason}")


@contextlib.contextmanager
def atomic_directory(target: str | Path, overwrite: bool = False) -> Iterator[Path]:
    """A hidden sibling of ``target`` (holding the :data:`MARKER`) that becomes
    ``target`` when the block succeeds and is removed when it fails or is interrupted.

    The sibling is created on entry, so an unwritable target fails before the block's
    work; ``target`` is checked against the rules of the module docstring on entry and
    again once moved aside, just before it is replaced.
    """
    path = _absolute(target, "output directory")
    _check_directory(path, overwrite)
    _clean_leftovers(path)
    tmp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    # One protected region from the sibling's creation on: a Ctrl-C that lands between
    # mkdir and the block (a user who interrupts as soon as the directory appears) must
    # remove it too.
    try:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            (tmp / MARKER).write_text(json.dumps({"format": _MARKER_FORMAT}) + "\n")
        except OSError as exc:
            raise _cannot_write(path, exc) from None
        yield tmp
        honour_stop()
        try:
            _write_marker(tmp)
        except OSError as exc:
            raise _cannot_write(path, exc) from None
        old = _moved_aside(path, overwrite)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in _FULL_OR_READ_ONLY:
            raise _cannot_write(path, exc) from None
        raise
    try:
        os.replace(tmp, path)
    except OSError as exc:  # a file system remounted read-only meanwhile
        if old is not None:
            with contextlib.suppress(OSError):
                os.replace(old, path)  # the previous result back in place
        shutil.rmtree(tmp, ignore_errors=True)
        raise _cannot_write(path, exc) from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _moved_aside(path: Path, overwrite: bool) -> Path | None:
    """Move what is at ``path`` now (the target may have changed since the start) to
    ``.NAME.old-PID`` and check it there, where nothing can be added to it unseen; put it
    back and refuse if tcpn must not replace it. Returns where it went, None if nothing
    was there."""
    old = path.with_name(f".{path.name}.old-{os.getpid()}")
    try:
        os.replace(path, old)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        _check_directory(old, overwrite, shown=path)
    except BaseException:
        with contextlib.suppress(OSError):  # else the next run reports .NAME.old-PID
            os.replace(old, path)
        raise
    return old


def check_output_file(target: str | Path, overwrite: bool = False) -> Path:
    """Check, before any work, that ``target`` may and can be written as a file: it is not
    a directory, exists only with ``overwrite``, and its directory accepts a new file.
    Returns the absolute path."""
    path = _absolute(target, "output file")
    _check_file(path, overwrite)
    _clean_leftovers(path)
    probe = _partial_file(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        probe.touch()
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()
    return path


def check_output_files(targets: Mapping[str, str | Path | None], overwrite: bool = False,
                       inputs: Mapping[str, str | Path] | None = None) -> dict[str, Path]:
    """:func:`check_output_file` for each target given (``what -> path``; None: not
    asked for), after refusing two targets that are one file, or a target that is one of
    the ``inputs`` (``what -> path``): with ``overwrite`` one output would replace the
    other after it was written, or the result would replace the user's own input (an
    import that left elements out, written over the model it came from). A symbolic
    link to a file is that file.

    >>> import tempfile
    >>> model = Path(tempfile.mkdtemp()) / "model.cpn"
    >>> _ = model.write_text("<workspaceElements/>")
    >>> check_output_files({"--output": model}, overwrite=True, inputs={"FILE": model})
    Traceback (most recent call last):
    ...
    tcpn.outputs.OutputError: --output .../model.cpn is FILE, which it would replace; ...
    """
    given = {what: _absolute(target, what) for what, target in targets.items()
             if target is not None}
    seen: dict[str, str] = {os.path.realpath(path): what
                            for what, path in (inputs or {}).items()}
    for what, path in given.items():
        real = os.path.realpath(path)
        if real in seen:
            other = seen[real]
            why = f"is {other}, which it would replace" if inputs and other in inputs else \
                f"is also {other}'s file: one would replace the other"
            raise OutputError(f"{what} {path} {why}; choose another path")
        seen[real] = what
    return {what: check_output_file(path, overwrite) for what, path in given.items()}


def _partial_file(path: Path) -> Path:
    """The hidden sibling a file is written to; it keeps the suffix (a figure's format)."""
    return path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")


def _check_file(path: Path, overwrite: bool) -> None:
    if path.is_dir():
        raise OutputError(f"{path} is a directory: tcpn never replaces a directory with a "
                          "file; choose a file name")
    if path.exists() and not overwrite:
        raise OutputError(f"{path} exists: pass overwrite (--overwrite) to replace it")


@contextlib.contextmanager
def atomic_file(target: str | Path, overwrite: bool = False) -> Iterator[Path]:
    """A hidden sibling path of ``target`` to write; renamed to ``target`` when the block
    succeeds, removed when it fails (rules: :func:`check_output_file`).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> with atomic_file(path) as tmp:
    ...     _ = tmp.write_text("a,b\\n")
    >>> path.read_text()
    'a,b\\n'
    """
    path = check_output_file(target, overwrite)
    tmp = _partial_file(path)
    try:
        yield tmp
        honour_stop()
        _check_file(path, overwrite)  # the target may have changed meanwhile
        os.replace(tmp, path)
    except OSError as exc:
        if exc.errno in _FULL_OR_READ_ONLY:
            raise _cannot_write(path, exc) from None
        raise
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


@contextlib.contextmanager
def atomic_files(targets: Sequence[str | Path], overwrite: bool = False) -> Iterator[list[Path]]:
    """:func:`atomic_file` for several files that belong together (a record and its
    figure): every target is checked before the block, all of them appear when it
    succeeds and none when it fails.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> with atomic_files([root / "a.csv", root / "b.json"]) as (csv, record):
    ...     _ = csv.write_text("a\\n")
    ...     raise ValueError("the record failed")
    Traceback (most recent call last):
    ...
    ValueError: the record failed
    >>> sorted(p.name for p in root.iterdir())
    []
    """
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(atomic_file(target, overwrite)) for target in targets]


def json_ready(value: Any, unknown: Callable[[Any], Any] | None = None) -> Any:
    """``value`` as plain JSON data, for every JSON file tcpn writes: mappings walked (keys
    as strings), lists and tuples as lists, NumPy scalars as Python numbers, NaN and
    infinities as None (JSON has no form for them: a strict reader refuses ``NaN``); any
    other value as it is, or as ``unknown(value)`` when given (``repr`` where a token value
    of a net may be anything).

    >>> json_ready({"rate": np.float64(2.5), 3: (1, float("nan"))})
    {'rate': 2.5, '3': [1, None]}
    >>> json_ready({"x": {1, 2}}, unknown=repr)
    {'x': '{1, 2}'}
    """
    if isinstance(value, Mapping):
        return {str(k): json_ready(v, unknown) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v, unknown) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if unknown is None or value is None or isinstance(value, bool | int | float | str):
        return value
    return unknown(value)


def save_figure(figure: Any, target: str | Path, dpi: int, overwrite: bool = False) -> Path:
    """Write the Matplotlib ``figure`` to ``target`` whole (:func:`atomic_file`; the format
    from the suffix) and close it, written or not: pyplot keeps every figure it made
    until it is closed, and a long session would hold them all."""
    import matplotlib.pyplot as plt

    try:
        with atomic_file(target, overwrite) as tmp:
            figure.savefig(tmp, dpi=dpi)
    finally:
        plt.close(figure)
    return Path(target)
