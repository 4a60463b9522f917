"""Scratch directories that do not outlive their process, even a process that was killed.

tcpn keeps a few things in the temporary directory while it runs: an ns-3 worker's job
logs, the files of one ns-3 run, the native engine's notices of one command. A process
removes its own (``with`` blocks, ``atexit``), but one that is killed cannot: a worker
its pool terminates, a run stopped by a signal or by the kernel's out-of-memory killer.
So each directory's name carries its owner's process id,
``tcpn-<purpose>-pid<pid>-<random>``, and making one first removes those whose owner is
no longer alive: they never pile up, however runs end.

>>> with scratch("example") as path:
...     path.name.startswith(f"tcpn-example-pid{os.getpid()}-"), path.is_dir()
(True, True)
>>> path.exists()
False
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["scratch", "scratch_directory"]

_OWNED = re.compile(r"^tcpn-[a-z0-9-]+-pid(\d+)-")


def scratch_directory(purpose: str) -> Path:
    """A new private directory for ``purpose`` (lower-case letters, digits, ``-``); the
    caller removes it. Directories of the same kind left by processes that have ended are
    removed first."""
    _remove_orphans()
    return Path(tempfile.mkdtemp(prefix=f"tcpn-{purpose}-pid{os.getpid()}-"))


@contextlib.contextmanager
def scratch(purpose: str) -> Iterator[Path]:
    """:func:`scratch_directory` for the ``with`` block, removed at its end."""
    path = scratch_directory(purpose)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _remove_orphans() -> None:
    """Remove the scratch directories whose owner process no longer runs (a process of
    another user, or one whose id was reused, keeps its directory)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(tempfile.gettempdir()):
            owner = _OWNED.match(entry.name)
            if owner and not _alive(int(owner.group(1))):
                shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
