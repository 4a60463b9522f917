"""Reference cells: SML's ``ref``, ``!`` and ``:=`` for nets read from CPN Tools files.

CPN ML is Standard ML, whose ``ref v`` is a mutable cell: ``!r`` reads it, ``r := v``
writes it (and gives ``()``). CPN Tools models keep statistics and batch state in cells
declared with ``val l = ref []`` or ``globref l = []`` and updated by code segments.

What tcpn does with them (``docs/exchange.md``, "Reference cells"):

* a cell declared at the top level is **one cell shared by every firing**, as in CPN Tools;
  a cell made inside a function (``let val r = ref 0 in ... end``) is a new one at each
  call, as in SML;
* a simulation (:class:`~tcpn.petrinets.engine.simulator.Simulator`) and a state-space
  exploration first put every declared cell back to its declared value
  (:func:`reset_cells`), so a run is reproducible from its seed (CPN Tools keeps the
  values of the last simulation until its declarations are checked again);
* a cell's contents are **not part of a marking** (as in CPN Tools' state-space tool): a
  state space of a net whose firings write declared cells would depend on the order in
  which states were expanded, so the explorer refuses it, naming the cells
  (:func:`written_cells`). Such a net is simulated, not explored.

The functions below are what the translated inscriptions call; they are declared on the
imported net under these names, so the restricted evaluator lets them through.

>>> counter = ml_ref(0)
>>> ml_assign(counter, ml_deref(counter) + 1)
()
>>> ml_deref(counter), counter
(1, ref(0))
>>> reset_cells({"counter": counter}); ml_deref(counter)
0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tcpn.errors import InputError
from tcpn.limits import limit_problem, limits
from tcpn.petrinets import ml_work

__all__ = ["CELL_FUNCTIONS", "Cell", "LoopLimitError", "ml_assign", "ml_deref", "ml_ref",
           "ml_while", "reset_cells", "written_cells"]


class LoopLimitError(InputError):
    """A ``while`` loop ran past the limit ``while_iterations``; an SML ``handle`` never
    catches it (it is tcpn's bound, not an exception of the model)."""


class Cell:
    """A mutable cell holding one value; ``initial`` is the value it was made with.

    Its ``repr`` is its declaration (``ref(0)``), not its current contents, so a net's
    fingerprint does not change as a run writes it.
    """

    __slots__ = ("initial", "value", "writes")

    def __init__(self, value: Any):
        self.initial = value
        self.value = value
        self.writes = 0

    def __repr__(self) -> str:
        return f"ref({self.initial!r})"


def ml_ref(value: Any) -> Cell:
    """SML's ``ref v``: a new cell holding ``value``."""
    return Cell(value)


def ml_deref(cell: Cell) -> Any:
    """SML's ``!r``: what the cell holds."""
    return _cell(cell, "!").value


def ml_assign(cell: Cell, value: Any) -> tuple[()]:
    """SML's ``r := v``: write the cell; the value is ``()``."""
    _cell(cell, ":=").value = ml_work.sized(":=", value)
    cell.writes += 1
    return ()


def _cell(value: Any, operator: str) -> Cell:
    """``value``, a cell; a value of another type (which SML's type checker would have
    refused) is a clear error, not an attribute error."""
    if not isinstance(value, Cell):
        raise InputError(f"'{operator}' on {value!r}, which is not a reference cell (ref)")
    return value


def ml_while(test: Callable[[], bool], body: Callable[[], Any]) -> tuple[()]:
    """SML's ``while e1 do e2``: evaluate ``body`` as long as ``test`` holds; ``()``.
    A loop whose test never turns false would run forever, as in SML: it stops with an
    :class:`LoopLimitError` after ``limits().while_iterations`` turns. Each turn is a step
    of the evaluation (:mod:`~tcpn.petrinets.ml_work`)."""
    bound = limits().while_iterations
    try:
        ml_work.begin("while")
        for _ in range(bound):
            if not test():
                return ()
            body()
            ml_work.turn("while")
        if not test():
            return ()
    finally:
        ml_work.end()
    problem = limit_problem("while_iterations", bound + 1)
    raise LoopLimitError(f"a CPN ML while loop did not end: {problem}")


#: The names the translation of CPN ML calls, as declared on an imported net.
CELL_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "ml_ref": ml_ref, "ml_deref": ml_deref, "ml_assign": ml_assign, "ml_while": ml_while,
}


def reset_cells(declarations: Mapping[str, Any]) -> None:
    """Put every cell declared in ``declarations`` back to its declared value."""
    for value in declarations.values():
        if isinstance(value, Cell):
            value.value = value.initial
            value.writes = 0


def written_cells(declarations: Mapping[str, Any]) -> list[str]:
    """The names of the declared cells written since their last :func:`reset_cells`."""
    return sorted(name for name, value in declarations.items()
                  if isinstance(value, Cell) and value.writes)
