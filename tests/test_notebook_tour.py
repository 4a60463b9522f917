"""The notebook tour (docs/notebooks/tour.ipynb) runs cell by cell, so it cannot rot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TOUR = Path(__file__).resolve().parent.parent / "docs" / "notebooks" / "tour.ipynb"


def test_tour_runs_and_every_drawing_renders_inline(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(TOUR, as_version=4)
    repo = str(TOUR.parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(  # the kernel imports this tcpn
        p for p in (repo, os.environ.get("PYTHONPATH", "")) if p))
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [out for cell in notebook.cells if cell.cell_type == "code"
               for out in cell.get("outputs", [])]
    assert not [out for out in outputs if out.get("output_type") == "error"]
    kinds = [set(out.get("data", {})) for out in outputs]
    assert sum("image/svg+xml" in k for k in kinds) >= 4  # net, two module views, figure
    assert sum("text/html" in k for k in kinds) >= 3  # simulation, scenario run, report
    report = next(out["data"]["text/html"] for out in outputs
                  if "tcpn-report" in out.get("data", {}).get("text/html", ""))
    assert "reproduced" in report and "<svg" in report
