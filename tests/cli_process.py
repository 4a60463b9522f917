"""The real ``tcpn`` command in a fresh process, as the tests that read its exit codes,
standard streams and files run it: one way for every such test file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def run_tcpn(*args: str | Path, cwd: Path | None = None, columns: int = 200,
             env: dict[str, str] | None = None,
             timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """``tcpn args`` through ``main()`` (so exit codes are the command's) with this tree's
    ``tcpn`` first on the path, the terminal ``columns`` wide, ``env`` added to the caller's
    environment; output decoded with undecodable bytes replaced."""
    path = os.pathsep.join(p for p in (str(REPOSITORY), os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-c", "from tcpn.cli import main; main()", *map(str, args)],
        capture_output=True, text=True, errors="replace", cwd=cwd, timeout=timeout_s,
        env={**os.environ, "PYTHONPATH": path, "COLUMNS": str(columns), **(env or {})})
