"""Load a net named on the command line (a file, or Python code when asked) and save it.

A net is

* a file ``*.cpn`` (CPN Tools) or ``*.pnml`` (PNML), read as data with its import report
  (the restricted evaluator holds its inscriptions, :mod:`~tcpn.petrinets.restricted`;
  ``trusted=True`` lifts it for a file you wrote); or, only with ``python=True`` (the
  CLI's ``--python``), because it runs that code,
* ``package.module:name`` or ``path/to/file.py:name``, where ``name`` is a
  :class:`~tcpn.petrinets.net.PetriNet` or a function called without arguments that
  returns one (``tcpn.petrinets.examples:single_server_queue`` needs arguments, so wrap
  it in a function of your own).

A colon never makes a file name Python: ``this:x.pnml`` is a file, and without
``python=True`` a reference that is not a net file is refused, never imported.

>>> loaded = load_net("tcpn.petrinets.exchange.loading:example_net", python=True)
>>> loaded.net.name, loaded.complete
('mm1', True)
>>> load_net("tcpn.petrinets.exchange.loading:example_net")
Traceback (most recent call last):
...
tcpn.errors.InputError: tcpn.petrinets.exchange.loading:example_net is not a .cpn or .pnml \
file; to build the net by running Python code, name it as package.module:function (or \
file.py:function) and pass --python
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from tcpn.errors import InputError
from tcpn.outputs import atomic_file, check_output_file
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import (
    ImportedNet,
    ImportReport,
    IncompleteImportError,
    read_cpn,
)
from tcpn.petrinets.exchange.pnml import read_pnml, to_pnml
from tcpn.petrinets.net import PetriNet

__all__ = ["FORMATS", "built_net", "example_net", "load_net", "net_text", "save_net"]

#: Export formats and the file suffix each one uses.
FORMATS = {"cpn": ".cpn", "pnml": ".pnml"}


def example_net() -> PetriNet:
    """An M/M/1 queue of 10 customers: a net reference for the documentation."""
    from tcpn.petrinets.examples import single_server_queue

    return single_server_queue(10, 1.0, 0.8)


def load_net(reference: str, *, strict: bool = False, python: bool = False,
             trusted: bool = False) -> ImportedNet:
    """Load the net ``reference`` names (see the module docstring)."""
    if python:
        return _python_net(reference)
    path = Path(reference)
    if path.suffix.lower() not in (".cpn", ".pnml"):
        raise InputError(f"{reference} is not a .cpn or .pnml file; to build the net by "
                         "running Python code, name it as package.module:function (or "
                         "file.py:function) and pass --python")
    if not path.exists() and not path.is_symlink():
        raise InputError(f"{reference}: no such file")
    if path.suffix.lower() == ".cpn":
        return read_cpn(path, strict=strict)
    imported = read_pnml(path, trusted=trusted)
    if strict and not imported.complete:
        raise IncompleteImportError(imported.report)
    return imported


def _python_net(reference: str) -> ImportedNet:
    """The net ``package.module:name`` or ``file.py:name`` gives (its code runs)."""
    module_name, sep, attribute = reference.rpartition(":")
    if not sep or not module_name or not attribute:
        raise InputError(f"{reference!r} is not a Python reference 'package.module:function' "
                         "(or 'file.py:function')")
    module = _import(module_name, reference)
    if not hasattr(module, attribute):
        raise InputError(f"{reference}: module {module_name} has no attribute {attribute!r}")
    value: Any = getattr(module, attribute)
    if callable(value) and not isinstance(value, PetriNet):
        try:
            value = value()
        except TypeError as exc:
            raise InputError(f"{reference}: calling {attribute}() failed ({exc}); name a "
                             "function that takes no arguments") from None
    if not isinstance(value, PetriNet):
        raise InputError(f"{reference}: expected a PetriNet, got {type(value).__name__}")
    return built_net(value, reference)


def built_net(net: PetriNet, source: str) -> ImportedNet:
    """A net built in Python (not read from a file), in the form :func:`save_net` takes.

    >>> built_net(example_net(), "the M/M/1 example").report.imported["places"]
    4
    """
    return ImportedNet(net, ImportReport(source, {"places": len(net.places),
                                                  "transitions": len(net.transitions),
                                                  "arcs": len(net.arcs)}),
                       {}, real_time=False)


def _import(module_name: str, reference: str) -> Any:
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise InputError(f"{reference}: no such file {module_name}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise InputError(f"{reference}: can't load {module_name} as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module  # inspect.getsource needs to find it again
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise InputError(f"{reference}: can't import {module_name} ({exc})") from None


def save_net(loaded: ImportedNet, path: str | Path, file_format: str | None = None, *,
             real_time: bool | None = None, layout: str = "dot",
             net_type: str = "auto", strict: bool = False, overwrite: bool = False) -> Path:
    """Write ``loaded.net`` as ``file_format`` (default: from the suffix of ``path``).

    See :func:`net_text` for the options. The file is written whole or not at all; an
    existing file is replaced only with ``overwrite`` (:func:`tcpn.outputs.atomic_file`).
    """
    target = Path(path)
    check_output_file(target, overwrite)
    if file_format is None:
        by_suffix = {suffix: name for name, suffix in FORMATS.items()}
        file_format = by_suffix.get(target.suffix.lower())
        if file_format is None:
            raise InputError(f"{target}: can't tell the format from the suffix; use one of "
                             f"{sorted(FORMATS.values())} or give the format")
    text = net_text(loaded, file_format, real_time=real_time, layout=layout,
                    net_type=net_type, strict=strict)
    with atomic_file(target, overwrite) as tmp:
        tmp.write_bytes(text.encode("iso-8859-1" if file_format == "cpn" else "utf-8"))
    return target


def net_text(loaded: ImportedNet, file_format: str, *, real_time: bool | None = None,
             layout: str = "dot", net_type: str = "auto", strict: bool = False) -> str:
    """The file text of ``loaded.net`` in ``file_format`` (``"cpn"`` or ``"pnml"``).

    A net read from a CPN Tools file keeps its element ids and its time type unless
    ``real_time`` says otherwise; ``layout`` is passed to
    :func:`~tcpn.petrinets.exchange.cpn_export.to_cpn`, ``net_type`` and ``strict`` to
    :func:`~tcpn.petrinets.exchange.pnml.to_pnml`.

    >>> mm1 = load_net("tcpn.petrinets.exchange.loading:example_net", python=True)
    >>> '<colour>{"name":"TINT"' in net_text(mm1, "pnml")  # tcpn's form in toolspecific
    True
    >>> net_text(mm1, "pnml", strict=True)
    Traceback (most recent call last):
    ...
    tcpn.errors.InputError: place source: colour set TINT is not a finite sort of PNML \
symmetric nets (dot, bool, enumerations, bounded ints, products); export to CPN Tools instead
    """
    if file_format == "cpn":
        # only CPN Tools' own ids (ID123) are reused; a PNML file's ids are names instead
        ids = {k: v for k, v in loaded.ids.items() if re.fullmatch(r"(ID|id)\d+", v)}
        if real_time is None and ids:
            real_time = loaded.real_time
        return to_cpn(loaded.net, real_time=real_time, ids=ids, layout=layout)
    if file_format == "pnml":
        return to_pnml(loaded.net, net_type, strict=strict)
    raise InputError(f"unknown format {file_format!r}; use one of {sorted(FORMATS)}")
