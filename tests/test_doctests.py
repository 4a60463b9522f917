"""Every docstring example in tcpn and every example in docs/*.md runs as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import tcpn

DOCS = Path(__file__).resolve().parent.parent / "docs"
OPTIONAL = {"ns3", "cppyy", "dask", "distributed"}  # extras that may be absent


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(tcpn.__path__, "tcpn."))


@pytest.mark.parametrize("name", _modules())
def test_module_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs the optional {exc.name}")
        raise
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_documentation_examples(page):
    failures, _ = doctest.testfile(str(DOCS / page), module_relative=False,
                                   optionflags=doctest.ELLIPSIS)
    assert failures == 0


LAYERS = {
    # package: prefixes it must not import
    "tcpn.petrinets": ("tcpn.models", "tcpn.solvers", "tcpn.validation", "tcpn.reports",
                       "tcpn.cli"),
    "tcpn.models": ("tcpn.solvers", "tcpn.validation", "tcpn.reports", "tcpn.cli"),
    "tcpn.solvers": ("tcpn.validation", "tcpn.reports", "tcpn.cli"),
    "tcpn.validation": ("tcpn.solvers.fluid", "tcpn.solvers.closed_forms",
                        "tcpn.solvers.fluid_lens", "tcpn.solvers.optimize", "tcpn.reports",
                        "tcpn.cli"),
}


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_dependencies_point_one_way(package):
    """No module imports a layer above its own at import time (lenses are found by name)."""
    import ast

    root = Path(tcpn.__file__).parent / package.split(".")[1]
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            guarded = any(isinstance(parent, ast.If) and "TYPE_CHECKING" in ast.dump(parent.test)
                          for parent in ast.walk(tree)
                          if isinstance(parent, ast.If) and node in ast.walk(parent))
            for name in names:
                assert guarded or not name.startswith(LAYERS[package]), f"{path}: imports {name}"
