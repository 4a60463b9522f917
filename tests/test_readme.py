"""The README's Python example runs as written."""

import re
from pathlib import Path


def test_readme_example_runs(capsys):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", readme, re.S)
    assert block, "README has no python example"
    exec(compile(block.group(1), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "firings" in out and "stopped: dead" in out
