"""Monitors, as in CPN Tools: observe firings without changing the net's behaviour.

A monitor says which transitions it ``watches``; the simulator calls ``observe`` after each
of their firings (and ``before`` first when the monitor needs the marking before the
firing). ``result()`` returns NumPy arrays or plain values for the
:class:`~tcpn.petrinets.engine.result.SimulationResult`.

* :class:`FiringCount` counts occurrences of one transition;
* :class:`TimeAverage` is the time-weighted average of a place's token count or of any
  function of the marking;
* :class:`DataCollector` records a value computed from each firing's binding;
* :class:`EventLog` writes every firing (time, transition, binding, consumed and produced
  tokens) to CSV, JSONL or Parquet incrementally, so long runs keep memory flat.
"""

from __future__ import annotations

import contextlib
import csv
import json
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from tcpn.errors import InputError
from tcpn.outputs import atomic_file

if TYPE_CHECKING:
    from tcpn.petrinets.engine.compiler import CompiledTransition
    from tcpn.petrinets.engine.simulator import Simulator

__all__ = ["DataCollector", "EventLog", "FiringCount", "FiringRecord", "Monitor",
           "TimeAverage"]


class Monitor:
    """Base monitor: watches the transitions named in ``transitions`` (all when None)."""

    wants_before = False

    def __init__(self, name: str, transitions: tuple[str, ...] | None = None):
        self.name = name
        self.transitions = transitions

    def watches(self, transition: str) -> bool:
        """Whether firings of ``transition`` are observed."""
        return self.transitions is None or transition in self.transitions

    def start(self, sim: Simulator) -> None:
        """Called once before the first firing."""
        if self.transitions is not None:
            known = {t.name for t in sim.compiled.transitions}
            for name in self.transitions:
                if name not in known:
                    raise InputError(f"monitor {self.name}: no transition named {name!r}")

    def before(self, sim: Simulator, transition: CompiledTransition,
               binding: tuple[Any, ...]) -> None:
        """Called before a watched firing (only when ``wants_before``)."""

    def observe(self, sim: Simulator, transition: CompiledTransition,
                binding: tuple[Any, ...]) -> None:
        """Called after a watched firing."""

    def observer(self, transition: CompiledTransition
                 ) -> Callable[[Simulator, tuple[Any, ...]], None] | None:
        """A function to call with ``(sim, binding)`` after each watched firing of
        ``transition`` in place of :meth:`observe` (``None``, the default: ``observe``).

        Called once per watched transition after :meth:`start`; a monitor that does
        different work per transition hands the simulator that work directly.
        """
        return None

    def finish(self, sim: Simulator) -> None:
        """Called once when the run stops."""

    def result(self) -> Any:
        """What the monitor measured."""
        raise NotImplementedError


class FiringCount(Monitor):
    """How many times ``transition`` fired (CPN Tools' *count transition occurrences*)."""

    def __init__(self, transition: str, name: str | None = None):
        super().__init__(name or f"count({transition})", (transition,))
        self.count = 0

    def observe(self, sim: Simulator, transition: CompiledTransition,
                binding: tuple[Any, ...]) -> None:
        self.count += 1

    def result(self) -> int:
        return self.count


class FiringRecord(Monitor):
    """Every firing as ``(time, transition name, binding)``, in order: what two engines or
    two versions of a net are compared on, firing by firing."""

    def __init__(self, name: str = "firings"):
        super().__init__(name)
        self.firings: list[tuple[float, str, tuple[Any, ...]]] = []

    def observe(self, sim: Simulator, transition: CompiledTransition,
                binding: tuple[Any, ...]) -> None:
        self.firings.append((sim.now, transition.name, binding))

    def result(self) -> int:
        return len(self.firings)


class TimeAverage(Monitor):
    """Time-weighted average of a place's token count, or of ``function(sim)``.

    The value is piecewise constant between firings; the average runs from the start of
    the run to the clock when it stops. With ``record=True`` the step function is kept as
    arrays ``times`` and ``values``.
    """

    def __init__(self, place: str | None = None,
                 function: Callable[[Simulator], float] | None = None,
                 name: str | None = None, record: bool = False):
        if (place is None) == (function is None):
            raise InputError("TimeAverage needs exactly one of place= or function=")
        super().__init__(name or (f"average({place})" if place else "average"))
        self.place = place
        self.function = function
        self.record = record
        self._times: list[float] = []
        self._values: list[float] = []
        self._area = 0.0

    def _value(self, sim: Simulator) -> float:
        if self.place is not None:
            return float(sim.count(self.place))
        assert self.function is not None
        return float(self.function(sim))

    def start(self, sim: Simulator) -> None:
        if self.place is not None:
            place = sim.place_number(self.place)
            self.transitions = tuple(
                t.name for t in sim.compiled.transitions if place in t.writes_places
            )
        self._start = self._last_time = sim.now
        self._last_value = self._value(sim)
        if self.record:
            self._times.append(sim.now)
            self._values.append(self._last_value)

    def observe(self, sim: Simulator, transition: CompiledTransition,
                binding: tuple[Any, ...]) -> None:
        value = self._value(sim)
        self._area += self._last_value * (sim.now - self._last_time)
        self._last_time = sim.now
        if value != self._last_value and self.record:
            self._times.append(sim.now)
            self._values.append(value)
        self._last_value = value

    def finish(self, sim: Simulator) -> None:
        self._area += self._last_value * (sim.now - self._last_time)
        self._last_time = sim.now
        self._end = sim.now

    def result(self) -> dict[str, Any]:
        span = self._end - self._start
        average = self._area / span if span > 0 else self._last_value
        out: dict[str, Any] = {"average": average, "final": self._last_value}
        if self.record:
            out["times"] = np.asarray(self._times)
            out["values"] = np.asarray(self._values)
        return out


class DataCollector(Monitor):
    """Records ``function(binding, now)`` at every firing of ``transition``.

    ``binding`` is a dict of the transition's variables. Return ``None`` to skip a firing.
    """

    def __init__(self, transition: str, function: Callable[[dict[str, Any], float], Any],
                 name: str | None = None):
        super().__init__(name or f"data({transition})", (transition,))
        self.function = function
        self._times: list[float] = []
        self._values: list[Any] = []

    def observe(self, sim: Simulator, transition: CompiledTransition,
                binding: tuple[Any, ...]) -> None:
        value = self.function(dict(zip(transition.variables, binding, strict=True)), sim.now)
        if value is not None:
            self._times.append(sim.now)
            self._values.append(value)

    def result(self) -> dict[str, np.ndarray]:
        return {"times": np.asarray(self._times), "values": np.asarray(self._values)}


class EventLog(Monitor):
    """Writes every firing to ``path`` as it happens (``.csv``, ``.jsonl`` or ``.parquet``).

    Columns: ``time``, ``transition``, ``binding``, ``consumed``, ``produced`` (the last
    three JSON-encoded with ``repr`` for values JSON can't hold). Rows are buffered in
    batches of ``batch_size`` so that memory stays flat over long runs. The log is written
    under a hidden name and appears at ``path`` when the run finishes (a run that fails
    leaves none); an existing file is replaced only with ``overwrite``
    (:func:`tcpn.outputs.atomic_file`).
    """

    wants_before = True
    COLUMNS = ("time", "transition", "binding", "consumed", "produced")

    def __init__(self, path: str | Path, batch_size: int = 10_000, name: str = "event_log",
                 overwrite: bool = False):
        super().__init__(name)
        self.path = Path(path)
        self.overwrite = overwrite
        self._output = contextlib.ExitStack()
        suffix = self.path.suffix.lower()
        if suffix not in (".csv", ".jsonl", ".parquet"):
            raise InputError(f"event log {self.path}: use a .csv, .jsonl or .parquet file")
        self.format = suffix[1:]
        self.batch_size = batch_size
        self._rows: list[tuple[Any, ...]] = []
        self._snapshot: dict[int, dict[Any, Any]] = {}
        self._file: IO[str] | None = None
        self._writer: Any = None
        self.rows_written = 0

    def start(self, sim: Simulator) -> None:
        target = self._output.enter_context(atomic_file(self.path, self.overwrite))
        # a simulation that raises never calls finish: its partial log goes with the monitor
        weakref.finalize(self, self._output.__exit__, RuntimeError, None, None)
        if self.format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            self._schema = pa.schema(
                [("time", pa.float64())] + [(c, pa.string()) for c in self.COLUMNS[1:]]
            )
            self._writer = pq.ParquetWriter(target, self._schema)
        else:
            self._file = target.open("w", newline="")
            if self.format == "csv":
                self._writer = csv.writer(self._file)
                self._writer.writerow(self.COLUMNS)

    def before(self, sim: Simulator, transition: CompiledTransition,
               binding: tuple[Any, ...]) -> None:
        self._snapshot = {p: _copy_place(sim.marking[p]) for p in transition.writes_places}

    def observe(self, sim: Simulator, transition: CompiledTransition,
                binding: tuple[Any, ...]) -> None:
        consumed: dict[str, list[Any]] = {}
        produced: dict[str, list[Any]] = {}
        for p, before in self._snapshot.items():
            name = sim.compiled.place_names[p]
            gone, new = _place_difference(before, sim.marking[p], sim.compiled.timed[p])
            if gone:
                consumed[name] = gone
            if new:
                produced[name] = new
        self._rows.append((
            sim.now, transition.name,
            _json(dict(zip(transition.variables, binding, strict=True))),
            _json(consumed), _json(produced),
        ))
        if len(self._rows) >= self.batch_size:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        if self.format == "parquet":
            import pyarrow as pa

            columns = list(zip(*self._rows, strict=True))
            table = pa.table(
                {c: list(v) for c, v in zip(self.COLUMNS, columns, strict=True)},
                schema=self._schema,
            )
            self._writer.write_table(table)
        elif self.format == "csv":
            self._writer.writerows(self._rows)
        else:
            assert self._file is not None
            for row in self._rows:
                record = dict(zip(self.COLUMNS, row, strict=True))
                for key in ("binding", "consumed", "produced"):
                    record[key] = json.loads(record[key])
                self._file.write(json.dumps(record) + "\n")
        self.rows_written += len(self._rows)
        self._rows.clear()

    def finish(self, sim: Simulator) -> None:
        self._flush()
        if self.format == "parquet":
            self._writer.close()
        elif self._file is not None:
            self._file.close()
        self._output.close()  # the log appears at its path

    def result(self) -> dict[str, Any]:
        return {"path": str(self.path), "rows": self.rows_written}


def _copy_place(place: dict[Any, Any]) -> dict[Any, Any]:
    return {k: (list(v) if isinstance(v, list) else v) for k, v in place.items()}


def _place_difference(before: dict[Any, Any], after: dict[Any, Any],
                      timed: bool) -> tuple[list[Any], list[Any]]:
    """Tokens that left and tokens that arrived, as values or ``[value, time]`` pairs."""
    gone: list[Any] = []
    new: list[Any] = []
    for value in before.keys() | after.keys():
        if timed:
            old_times = list(before.get(value, []))
            for t in after.get(value, []):
                if t in old_times:
                    old_times.remove(t)
                else:
                    new.append([value, t])
            gone.extend([value, t] for t in old_times)
        else:
            delta = after.get(value, 0) - before.get(value, 0)
            (new if delta > 0 else gone).extend([value] * abs(delta))
    return gone, new


def _json(value: Any) -> str:
    return json.dumps(value, default=repr)
