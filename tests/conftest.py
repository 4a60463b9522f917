"""Shared fixtures: where the team's shared test material lives."""

import hashlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"

# The simulator's default engine is "auto": native, its missing modules built on first
# use (a minute of CPU for a TCP net). The suite runs the Python engine, the reference,
# unless $TCPN_ENGINE says otherwise, so that a run on a fresh clone (CI: 2 cores) compiles
# only what the engines' own tests build (they name their engine or unset this) and gives
# the same result whatever a cache holds; worker processes and the CLI's subprocesses
# inherit it.
os.environ.setdefault("TCPN_ENGINE", "python")


@pytest.fixture(autouse=True)
def _environment_restored() -> Any:
    """Each test starts from the session's environment: a command invoked in-process
    (typer's ``CliRunner``) sets variables its worker processes inherit (the engine,
    the directory where notices are said once), which must not leak into the next test
    that this worker runs."""
    saved = dict(os.environ)
    yield
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``../shared`` folder beside the clone (CPN files, design notes, ns-3 references)."""
    if not SHARED.is_dir():
        pytest.fail(f"../shared is missing: expected it at {SHARED}")
    return SHARED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow-sample", type=int, default=None, metavar="N",
        help="run only N of the selected slow tests: a fixed sample (stable hash of the ids), "
             "so that CI exercises some long checks within its time budget",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests run only when asked for: ``-m slow`` (or any ``-m``), or a test id
    named with ``::``; ``--slow-sample N`` keeps a fixed sample of them."""
    if not config.option.markexpr and not any("::" in arg for arg in config.args):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]
    sample = config.getoption("--slow-sample")
    if sample is None:
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    keep = set(sorted(slow, key=lambda i: hashlib.sha1(i.nodeid.encode()).hexdigest())[:sample])
    config.hook.pytest_deselected(items=[item for item in items if item not in keep])
    items[:] = [item for item in items if item in keep]


@pytest.fixture
def benchmark_nets() -> Callable[[], list[Any]]:
    """Builds the three nets of benchmarks/engine_vs_snakes.py, untimed and timed (fresh
    nets on every call: tests may change them)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        from engine_vs_snakes import NETS
    finally:
        sys.path.pop(0)
    return lambda: [build(timed) for build in NETS.values() for timed in (False, True)]
