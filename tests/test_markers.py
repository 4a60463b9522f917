"""The default test selection leaves the slow tests out; ``-m slow`` reaches them."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _collected(*args: str) -> tuple[int, int]:
    """(selected, deselected) of ``pytest --collect-only`` on tests/test_contest.py."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:xdist", "-p", "no:cacheprovider",
                           "tests/test_contest.py", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(r"(\d+)(?:/(\d+))? tests? collected(?: \((\d+) deselected\))?",
                      done.stdout)
    assert found, done.stdout
    if found.group(2):  # "N/M tests collected (K deselected)"
        return int(found.group(1)), int(found.group(3))
    return int(found.group(1)), 0


@pytest.mark.parametrize("options", [(), ("-m", "not slow")], ids=["default", "not-slow"])
def test_the_default_selection_leaves_the_slow_instances_out(options):
    selected, deselected = _collected(*options)
    slow, _ = _collected("-m", "slow")
    assert slow >= 100  # one per contest instance
    # the default runs a sample, not one test per instance: under a tenth of the slow ones
    assert deselected == slow and selected < slow / 10
