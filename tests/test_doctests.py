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
