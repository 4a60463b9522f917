"""What a lens is: the protocol every lens implements, the run it is handed, its seeds.

:func:`tcpn.lenses.evaluate` (in :mod:`tcpn.lenses.evaluation`) is the front door above the lenses
(as ``solve_ivp`` is above
its methods); this module is what the lenses themselves import, so that they never import
the front door.

The lens protocol
-----------------
A lens is a class, constructed with the keyword ``options`` given to :func:`evaluate`
(e.g. ``max_step_s`` for the fluid lens), with two methods::

    class MyLens:
        name = "mine"

        def check(self, scenario: Scenario) -> None:
            # raise tcpn.errors.InputError naming every feature this lens cannot express
            # (e.g. "links[3].ab.queue: sgpq is not supported by the fluid lens");
            # never run a silently different experiment.

        def run(self, run: Run, trace: TraceWriter, progress: Progress) -> dict[str, Any]:
            # simulate run.flows (concrete connections, start times already drawn) over
            # [0, run.scenario.horizon_s], writing events into ``trace``; use only
            # run.rng() / run.lens_seed for randomness; call progress(model_time_s) now and
            # then; return provenance (versions, solver settings...) as JSON-ready data.

What every lens must write into the trace (see :mod:`tcpn.models.traces`):

* ``flow_events`` ``send``, ``retransmit``, ``recv``, ``deliver``, ``ack`` and, when they
  happen, ``drop`` (data segments only), ``ack_drop``, ``mark``, ``timeout``, with sequence
  numbers as byte offsets (packet lenses), or aggregated rows with ``seq = -1`` and
  fractional ``bytes``/``count`` (fluid);
* ``flow_series`` ``cwnd_bytes`` and ``ssthresh_bytes`` at every change (when
  ``trace.cwnd``), ``rtt_s`` samples (when ``trace.rtt``);
* ``queue_events`` of the queues in ``run.scenario.traced_queues()``: ``enqueue``,
  ``dequeue``, ``drop``, ``mark`` with the length after the event (or ``sample`` rows).

Do not compute summary metrics in a lens: :func:`~tcpn.lenses.run.run_once` does, with
:mod:`tcpn.models.summary` and :func:`tcpn.models.metrics.summarize`. A lens shipped with
tcpn is one module of this package, imported by :func:`~tcpn.lenses.registry.get_lens`; a
lens of one's own is registered at run time with
:func:`~tcpn.lenses.registry.register_lens`.

Seeds
-----
Run ``i`` of seed ``s`` uses ``SeedSequence(s).spawn(N)[i]`` (= ``SeedSequence(s,
spawn_key=(i,))``, as :func:`tcpn.petrinets.independent_seeds`); a single run is run 0.
The scenario's own draws (start times...) use that sequence's child
``SCENARIO_STREAM`` and the lens its child ``LENS_STREAM``, so all lenses see the same
start times for the same seed, and a run's result does not depend on how many runs there
are or on which worker ran it.

>>> from tcpn.models.scenario import dumbbell
>>> run = make_run(dumbbell(pairs=1, horizon_s=1.0), seed=7, replication=2)
>>> run.seed.spawn_key, run.lens_seed.spawn_key
((2,), (2, 1))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from tcpn.errors import InputError, TcpnError
from tcpn.models.scenario import LENS_STREAM, ConcreteFlow, Scenario
from tcpn.models.traces import TraceWriter
from tcpn.petrinets.engine.simulator import check_seed

__all__ = ["Lens", "LensError", "Progress", "Run", "make_run", "run_seeds"]

Progress = Callable[..., None]
"""Called by a lens with the model time reached (seconds) and, when the lens counts them,
``firings=`` the events simulated so far (the net lens: transition firings). A callback
given to :func:`evaluate` may take the model time alone: :func:`run_once` adapts it."""

class LensError(TcpnError):
    """A lens cannot be used here (unknown name, module missing, optional extra absent)."""


@runtime_checkable
class Lens(Protocol):
    """What a lens implements (see the module docstring)."""

    name: ClassVar[str]

    def check(self, scenario: Scenario) -> None:
        """Raise :class:`~tcpn.errors.InputError` for features this lens cannot express."""

    def run(self, run: Run, trace: TraceWriter, progress: Progress) -> dict[str, Any]:
        """Simulate ``run`` into ``trace``; return provenance."""


@dataclass(frozen=True)
class Run:
    """One run handed to a lens: the scenario, its concrete flows, its seed."""

    scenario: Scenario
    flows: tuple[ConcreteFlow, ...]
    seed: np.random.SeedSequence
    replication: int

    @property
    def lens_seed(self) -> np.random.SeedSequence:
        """The lens's own stream (child ``LENS_STREAM`` of the run's seed)."""
        return np.random.SeedSequence(self.seed.entropy,
                                      spawn_key=(*self.seed.spawn_key, LENS_STREAM))

    def rng(self) -> np.random.Generator:
        """A fresh generator on the lens's stream."""
        return np.random.default_rng(self.lens_seed)

    def int_seed(self, bits: int = 31) -> int:
        """A positive integer derived from the lens's stream, for engines that want an int
        (e.g. ns-3's ``RngRun``)."""
        return int(self.lens_seed.generate_state(1, np.uint64)[0] % ((1 << bits) - 1)) + 1

    def seed_record(self) -> dict[str, Any]:
        """JSON-ready description of the seed, stored in the result."""
        return {"entropy": self.seed.entropy, "spawn_key": list(self.seed.spawn_key),
                "replication": self.replication}


def run_seeds(seed: int, replications: int) -> list[np.random.SeedSequence]:
    """Seed sequences of runs ``0 .. replications-1`` of ``seed``.

    >>> [s.spawn_key for s in run_seeds(5, 3)]
    [(0,), (1,), (2,)]
    """
    if replications < 1:
        raise InputError(f"replications must be >= 1, got {replications}")
    check_seed(seed)
    return [np.random.SeedSequence(seed, spawn_key=(i,)) for i in range(replications)]


def make_run(scenario: Scenario, seed: int | None = None, replication: int = 0) -> Run:
    """The :class:`Run` for replication ``replication`` of ``seed`` (default: the scenario's)."""
    base = scenario.seed if seed is None else seed
    check_seed(base)
    seq = np.random.SeedSequence(base, spawn_key=(replication,))
    return Run(scenario=scenario, flows=tuple(scenario.concrete_flows(seq)), seed=seq,
               replication=replication)
