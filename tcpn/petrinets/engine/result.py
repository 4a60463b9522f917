"""The result of a simulation run: why it stopped, counts, final marking, monitors, provenance."""

from __future__ import annotations

import hashlib
import inspect
import platform
import weakref
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from tcpn import __version__
from tcpn.errors import InputError
from tcpn.petrinets.engine.codecache import derived_cached, function_key
from tcpn.petrinets.net import PetriNet, Token

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SimulationResult", "net_fingerprint", "run_metadata"]


@dataclass
class SimulationResult:
    """What a run produced.

    ``stop_reason`` is ``"horizon"``, ``"max_firings"``, ``"predicate"`` or ``"dead"``
    (no binding will ever be enabled again). ``monitors`` maps monitor names to their
    results; ``metadata`` holds the seed, net fingerprint, tcpn version and wall time.
    """

    stop_reason: str
    final_time: float
    firings: int
    firing_counts: dict[str, int]
    marking: dict[str, list[Token]]
    monitors: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def dead(self) -> bool:
        """Whether the run ended in a dead marking."""
        return self.stop_reason == "dead"

    def frame(self, monitor: str) -> pd.DataFrame:
        """A monitor's recorded series as a DataFrame with columns ``time`` and ``value``.

        Works for :class:`~tcpn.petrinets.engine.monitors.DataCollector` and for
        :class:`~tcpn.petrinets.engine.monitors.TimeAverage` built with ``record=True``.
        """
        if monitor not in self.monitors:
            raise InputError(f"no monitor named {monitor!r}; monitors: {sorted(self.monitors)}")
        data = self.monitors[monitor]
        if not isinstance(data, dict) or "times" not in data:
            raise InputError(f"monitor {monitor!r} recorded no series (use record=True)")
        import pandas as pd  # imported when asked for: 0.6 s of every command's start

        return pd.DataFrame({"time": data["times"], "value": data["values"]})

    def summary(self) -> str:
        """A one-line description for terminals and logs."""
        rate = self.firings / self.metadata["wall_time_s"] if self.metadata.get("wall_time_s") \
            else float("nan")
        return (
            f"{self.metadata.get('net', 'net')}: {self.firings} firings, model time "
            f"{self.final_time:g}, stopped: {self.stop_reason} ({rate:,.0f} firings/s)"
        )


    def _repr_html_(self) -> str:
        import html

        rows = "".join(f"<tr><td>{html.escape(name)}</td><td>{html.escape(_short_value(v))}"
                       "</td></tr>" for name, v in self.monitors.items())
        table = f"<table><tr><th>monitor</th><th>value</th></tr>{rows}</table>" if rows else ""
        return f"<p>{html.escape(self.summary())}</p>{table}"


def _short_value(value: Any) -> str:
    if isinstance(value, dict) and "times" in value:
        summary = {k: v for k, v in value.items() if k not in ("times", "values")}
        return f"{summary} (+ {len(value['times'])} samples: .frame(name))"
    return str(value)


def net_fingerprint(net: PetriNet) -> str:
    """A SHA-256 of the net's structure, inscriptions, initial marking and declarations."""
    h = hashlib.sha256()

    def feed(*parts: Any) -> None:
        for part in parts:
            h.update(_stable_repr(part).encode())
            h.update(b"\x00")

    for place in net.places.values():
        feed("place", place.name, place.colour, place.initial_tokens, place.port,
             *(("drawn", place.initial_draw.text) if place.initial_draw else ()))
    for t in net.transitions.values():
        feed("transition", t.name, t.guard, t.delay, t.priority, t.action, t.outputs,
             sorted(t.params.items()), sorted(t.free_variables.items()))
    for arc in net.arcs:
        # a multiset arc says so; other arcs keep the fingerprints they had before it
        feed("arc", arc.kind.value, arc.place, arc.transition, arc.inscription, arc.count,
             arc.when, arc.delay, *(("multiset",) if arc.multiset else ()))
    feed("declarations", sorted(net.declarations.items()))
    return h.hexdigest()


#: function -> (its code object, ``inspect.getsource`` of it): a net names the same few
#: code actions and helpers on many transitions (the reference dumbbell: 12 functions on
#: 612 inscriptions), and ``getsource`` re-reads and tokenises the file each time (0.13 s
#: of CPU per fingerprint of that net, measured)
_SOURCES: weakref.WeakKeyDictionary[Any, tuple[Any, str]] = weakref.WeakKeyDictionary()


def _source(value: Any) -> str:
    """``inspect.getsource(value)``, memoised per function while its code is the same."""
    code = getattr(value, "__code__", None)
    try:
        cached = _SOURCES.get(value)
    except TypeError:  # not weakly referenceable (a builtin, a bound method's C twin)
        return inspect.getsource(value)
    if cached is not None and cached[0] is code:
        return cached[1]
    key = function_key(value)
    # a fresh process reads it from the code cache, keyed by the function's file
    text = inspect.getsource(value) if key is None else \
        str(derived_cached("getsource", key, partial(inspect.getsource, value)))
    if code is not None:
        _SOURCES[value] = (code, text)
    return text


#: How deep a function's captured values are followed (a closure capturing a function
#: capturing ...); deeper ones are named, not read.
_CAPTURE_DEPTH = 4


def _stable_repr(value: Any, depth: int = 0) -> str:
    """A text that is the same for equal values in any process: a function is its source
    (or, where no source exists, as for a function built from text, its code object),
    with the values it captures (closure cells, defaults), so that two closures of one
    source over different values (a variant's law specialised to its parameters) differ."""
    if callable(value) and not isinstance(value, type):
        return _function_repr(value, depth)
    if isinstance(value, list | tuple):
        return "(" + ",".join(_stable_repr(v, depth) for v in value) + ")"
    return repr(value)


def _function_repr(fn: Any, depth: int) -> str:
    code = getattr(fn, "__code__", None)
    try:
        text = _source(fn)
    except (OSError, TypeError):
        name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', fn)}"
        text = name if code is None else f"{name}:{_code_repr(code)}"
    if depth >= _CAPTURE_DEPTH:
        return text
    cells = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            cells.append(_stable_repr(cell.cell_contents, depth + 1))
        except ValueError:  # an empty cell (a name assigned after the closure was made)
            cells.append("<empty>")
    captured = (*cells, *(_stable_repr(v, depth + 1) for v in
                          getattr(fn, "__defaults__", None) or ()),
                *(f"{k}={_stable_repr(v, depth + 1)}" for k, v in
                  sorted((getattr(fn, "__kwdefaults__", None) or {}).items())))
    return text if not captured else f"{text}[{','.join(captured)}]"


def _code_repr(code: Any) -> str:
    """A code object's bytecode, names and constants (nested code objects included)."""
    consts = ",".join(_code_repr(c) if inspect.iscode(c) else repr(c) for c in code.co_consts)
    return f"{code.co_code.hex()}|{code.co_names}|{code.co_varnames}|({consts})"


def run_metadata(net: PetriNet, seed: Any, wall_time_s: float,
                 fingerprint: str | None = None) -> dict[str, Any]:
    """Provenance recorded with every result (``fingerprint``: the net's, when known)."""
    if isinstance(seed, np.random.SeedSequence):
        seed_repr: Any = {"entropy": seed.entropy, "spawn_key": list(seed.spawn_key)}
    else:
        seed_repr = seed
    return {
        "net": net.name,
        "net_hash": fingerprint or net_fingerprint(net),
        "seed": seed_repr,
        "tcpn_version": __version__,
        "python": platform.python_version(),
        "wall_time_s": wall_time_s,
    }
