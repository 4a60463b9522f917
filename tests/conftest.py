"""Shared fixtures: where the team's shared test material lives."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``../shared`` folder beside the clone (CPN files, design notes, ns-3 references)."""
    if not SHARED.is_dir():
        pytest.fail(f"../shared is missing: expected it at {SHARED}")
    return SHARED
