"""The engine contract: what an engine provides, and what the simulator lends it.

As SimPy's ``BaseEnvironment`` names an event core (``now``, ``step``, ``run``), this
module names the simulator's. An engine is a :class:`Loop`: a function
``loop(host, horizon, limit, stop_when, progress)`` that fires, from the host's state, the
sequence :meth:`Simulator.loop <tcpn.petrinets.engine.simulator.Simulator.loop>` (the
Python engine, the reference) fires, and returns why it stopped. It reads and writes the
simulator only through :class:`EngineHost`. :func:`~tcpn.petrinets.engine.native.select_engine`
chooses the engine (the Python loop, the Cython-compiled copy of it, or the C engine of
:mod:`~tcpn.petrinets.engine.cnet`); ``tests/test_native.py`` and ``tests/test_cnet.py``
hold them to one firing sequence per seed.

A loop enumerates a transition's bindings again when a firing touches its places, and
the transitions of ``CompiledNet.clock_readers`` (their guard reads ``now``) also when the
clock advances: then, before it chooses, since their guards are tested at the firing
time (``tests/test_clock_guards.py``). An engine that cannot must refuse such a net (the
C engine does, leaving it to the Cython build of the Python loop).

>>> from tcpn.petrinets.engine.simulator import Simulator
>>> from tcpn.petrinets.examples import counter
>>> host: EngineHost = Simulator(counter(3), engine="python")
>>> host.loop(float("inf"), 2, None, None), host.firings, host.last_firing[1]
('max_firings', 2, 0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tcpn.petrinets.engine.compiler import CompiledNet, RandomDraws

__all__ = ["STOP_REASONS", "EngineHost", "Loop"]

#: What a loop returns: why it stopped.
STOP_REASONS = ("dead", "max_firings", "horizon", "predicate")


class EngineHost(Protocol):
    """The simulator as an engine sees it: the state a loop reads and leaves behind."""

    #: the net the engine runs
    compiled: CompiledNet
    #: the model clock, the firings made, and per transition its firings
    now: float
    firings: int
    firing_counts: list[int]
    #: per place, its tokens (``value -> count``, or ``value -> timestamps`` when timed)
    marking: list[dict[Any, Any]]
    #: ``(time, transition index, binding)`` of the loop's last firing (index -1: none)
    last_firing: tuple[float, int, tuple[Any, ...]]
    #: the engine's own state between runs (``None`` at first; only the engine reads it)
    engine_state: Any
    #: set by an engine that keeps its own state: called with the transition's index
    #: after a firing made outside its loop (``Simulator.fire``)
    fired_outside: Callable[[int], None] | None

    @property
    def draws(self) -> RandomDraws:
        """The net's random draws and the choice among bindings (one generator, one order)."""

    @property
    def monitors_before(self) -> list[list[Any]]:
        """Per transition, the monitors (:class:`~tcpn.petrinets.engine.monitors.Monitor`,
        whose module reads the simulator: not imported here) told before it fires."""

    @property
    def observers_after(self) -> list[list[Callable[[Any, tuple[Any, ...]], None]]]:
        """Per transition, the functions called with ``(host, binding)`` after it fires."""

    def loop(self, horizon: float, limit: float, stop_when: Callable[[Any], bool] | None,
             progress: Callable[[Any], None] | None) -> str:
        """The Python engine's loop (the reference, and the fallback of another engine)."""

    def reset_calendar(self) -> None:
        """Forget the bindings found so far (the marking changed behind the calendar)."""


class Loop(Protocol):
    """What an engine provides: the loop, run on a host (``stop_when(host)``, and
    ``progress(host)`` about every 0.2 s of wall time), returning one of
    :data:`STOP_REASONS`."""

    def __call__(self, host: Any, horizon: float, limit: float,
                 stop_when: Callable[[Any], bool] | None,
                 progress: Callable[[Any], None] | None) -> str: ...
