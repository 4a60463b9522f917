"""Where tcpn writes: outputs that appear whole or not at all, never over what is not tcpn's.

Every command and library function that writes a result directory goes through
:func:`atomic_directory`, and every single output file (a CSV, a Markdown table, an
exported net, a figure) through :func:`atomic_file`. The rules:

* the files go to a hidden sibling ``.NAME.partial-PID`` first, renamed to ``NAME`` only
  when complete: a result appears whole or not at all;
* that sibling is created *before* the work starts, so an unwritable or read-only target
  is reported before a simulation runs, not after it;
* an existing directory is replaced only when it is recognisably a tcpn output (it holds
  the :data:`MARKER` file tcpn writes into every output directory, or a ``result.json``,
  ``replications.json`` or ``comparison.json`` of a tcpn format) **and** ``overwrite`` is
  given; an empty directory is filled (nothing in it can be lost); anything else is refused,
  naming the path. A file is never replaced by a directory, nor a directory by a file; an
  existing file is replaced only with ``overwrite``;
* leftovers of runs that were killed (``.NAME.partial-PID`` of a process that no longer
  runs, holding the marker) are removed, and said so, by the next run into ``NAME``; those
  of live processes and the ``.NAME.old-PID`` of a replacement that was killed half-way
  (the previous result) are reported and left alone.

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
import json
import os
import re
import shutil
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from tcpn.errors import InputError

__all__ = ["MARKER", "OutputError", "OutputWarning", "atomic_directory", "atomic_file",
           "atomic_files", "check_output_file", "is_tcpn_output", "leftovers"]

#: The file tcpn writes into every output directory: what makes it recognisably tcpn's.
MARKER = ".tcpn-output"
_FORMATS = {"result.json": "tcpn-result/", "replications.json": "tcpn-replications/"}


class OutputError(InputError):
    """An output path tcpn must not or cannot write (the message names it and says why)."""


class OutputWarning(UserWarning):
    """Something found beside an output: leftovers of a killed run, removed or kept."""


def is_tcpn_output(directory: str | Path) -> bool:
    """Whether ``directory`` is a directory tcpn wrote (the :data:`MARKER`, or a tcpn
    ``result.json``/``replications.json``, or ``comparison.json`` beside ``runs/``)."""
    path = Path(directory)
    if not path.is_dir() or path.is_symlink():
        return False
    if (path / MARKER).is_file():
        return True
    for name, prefix in _FORMATS.items():
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if json.loads((path / name).read_text())["format"].startswith(prefix):
                return True
    return (path / "comparison.json").is_file() and (path / "runs").is_dir()


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
    """The ``.NAME.partial-PID`` and ``.NAME.old-PID`` siblings of ``target``: ``(path,
    pid, alive)``, where ``alive`` says whether process ``pid`` still runs."""
    path = _absolute(target, "output")
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(partial|old)-(\d+)")
    found = []
    with contextlib.suppress(OSError):
        for sibling in path.parent.iterdir():
            match = pattern.fullmatch(sibling.name)
            if match:
                pid = int(match.group(2))
                found.append((sibling, pid, pid != os.getpid() and _alive(pid)))
    return sorted(found)


def _clean_leftovers(path: Path) -> None:
    for sibling, pid, alive in leftovers(path):
        if pid == os.getpid():
            continue
        if ".old-" in sibling.name:
            warnings.warn(f"{sibling} is the previous content of {path}, left by a run "
                          f"(PID {pid}) killed while replacing it: rename it back or delete "
                          "it", OutputWarning, stacklevel=4)
        elif alive:
            warnings.warn(f"{sibling}: process {pid} is still writing {path}; the last run "
                          "to finish wins", OutputWarning, stacklevel=4)
        elif sibling.is_dir() and (sibling / MARKER).is_file():
            shutil.rmtree(sibling, ignore_errors=True)
            warnings.warn(f"removed {sibling}: the partial output of a run (PID {pid}) that "
                          "was killed", OutputWarning, stacklevel=4)
        else:
            warnings.warn(f"{sibling} looks like the partial output of a run (PID {pid}) "
                          "that was killed; tcpn left it alone (delete it if it is not "
                          "yours to keep)", OutputWarning, stacklevel=4)


def _check_directory(path: Path, overwrite: bool) -> None:
    """Refuse a target directory tcpn must not replace (see the module docstring)."""
    if path.is_symlink():
        raise OutputError(f"{path} is a symbolic link: tcpn does not replace links; choose "
                          "a new directory")
    if path.exists() and not path.is_dir():
        raise OutputError(f"{path} is a file, not a directory: tcpn never replaces a file "
                          "with a directory; choose a new directory")
    if path.is_dir() and any(path.iterdir()):
        if not is_tcpn_output(path):
            raise OutputError(f"{path} exists and is not a tcpn output directory: tcpn "
                              "writes only new, empty or its own directories; choose a new "
                              "directory")
        if not overwrite:
            raise OutputError(f"{path} exists (a tcpn output): pass overwrite (--overwrite) "
                              "to replace it")


def _cannot_write(path: Path, exc: OSError) -> OutputError:
    reason = exc.strerror or str(exc)
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
    again before it is replaced.
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
            (tmp / MARKER).write_text(json.dumps({"format": "tcpn-output/1"}) + "\n")
        except OSError as exc:
            raise _cannot_write(path, exc) from None
        yield tmp
        _check_directory(path, overwrite)  # the target may have changed meanwhile
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = path.with_name(f".{path.name}.old-{os.getpid()}")
    if path.is_dir():
        os.replace(path, old)
    os.replace(tmp, path)
    shutil.rmtree(old, ignore_errors=True)


def check_output_file(target: str | Path, overwrite: bool = False) -> Path:
    """Check, before any work, that ``target`` may and can be written as a file: it is not
    a directory, exists only with ``overwrite``, and its directory accepts a new file.
    Returns the absolute path."""
    path = _absolute(target, "output file")
    _check_file(path, overwrite)
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
        _check_file(path, overwrite)  # the target may have changed meanwhile
        os.replace(tmp, path)
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
