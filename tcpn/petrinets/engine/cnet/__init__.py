"""The C engine: a net of the typed subset run with its marking, enumeration and loop in C.

:mod:`~tcpn.petrinets.engine.cnet.codegen` turns each transition into C (through
:mod:`~tcpn.petrinets.engine.cnet.translate`, which says what is outside the subset), the fixed
part (``runtime.c``) holds the places, the binding lists, the live set and the simulator's
loop, and ``engine.pyx`` wraps them for Python. The module is built by
:mod:`~tcpn.petrinets.engine.native`'s cache (the same directory, keys and locking) with NumPy's
random library linked in: the C engine draws from the simulator's own NumPy generator, in
the same order as the Python engine, so that the same seed fires the same sequence
(``tests/test_cnet.py`` compares them firing by firing).

``Simulator(net, engine="native")`` runs here when the whole net is in the subset, and
otherwise in the Cython-built Python code of ``native``; :func:`build_cnet` returns why a
net stays out (``NativeNet.c_reason``).
"""

from __future__ import annotations

import logging
import time as wallclock
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from tcpn.petrinets.engine.cnet.codegen import NetPlan, plan_net
from tcpn.petrinets.engine.cnet.translate import Unsupported, decode, encode
from tcpn.petrinets.engine.compiler import CompiledNet, KeyedTokens
from tcpn.petrinets.engine.contract import EngineHost
from tcpn.petrinets.errors import FiringError

__all__ = ["CEngine", "build_cnet", "initial_marking_outside"]

_log = logging.getLogger("tcpn.native")
_TEMPLATE = Path(__file__).with_name("engine.pyx")
_REASONS = {0: "dead", 1: "max_firings", 2: "horizon"}
_R_ERROR, _R_FIRED, _R_CHOSEN = -1, 3, 4
_PAUSE_AFTER, _PAUSE_BEFORE, _PAUSE_1024 = 1, 2, 4
_MESSAGES = {
    1: "integer overflow: the C engine computes with 64-bit integers "
       "(engine='python' has no such limit)",
    2: "ZeroDivisionError: integer division or modulo by zero",
}


def numpy_flags() -> tuple[str, ...]:
    """Compiler flags for NumPy's random C library (headers and ``libnpyrandom.a``)."""
    random_dir = Path(np.__file__).parent / "random"
    return (f"-I{np.get_include()}", f"-I{random_dir / 'lib'}", f"-L{random_dir / 'lib'}",
            "-ffp-contract=off")


#: The libraries a generated C module links: NumPy's random streams and libm.
C_LIBRARIES = ("-lnpyrandom", "-lm")


class CEngine:
    """A built C engine for one net: its module, and the plan to read its state."""

    def __init__(self, compiled: CompiledNet, plan: NetPlan, module: Any):
        self.compiled = compiled
        self.plan = plan
        self.module = module

    # -- conversions ----------------------------------------------------------------------
    def _dump(self, state: Any, marking: list[dict[Any, Any]]) -> None:
        keyed = set(self.compiled.keyed_places)
        for p in range(len(marking)):
            slots, product, timed = self.plan.slots[p], self.plan.product[p], \
                self.compiled.timed[p]
            place = {decode(slots, product, row): amount for row, amount in state.dump(p, timed)}
            marking[p] = KeyedTokens(place) if p in keyed else place

    def binding(self, t: int, row: tuple[int, ...]) -> tuple[Any, ...]:
        """A binding as the Python engine holds it, from its slots."""
        return tuple(decode([colour], False, (slot,))
                     for colour, slot in zip(self.plan.variables[t], row, strict=False))

    def _error(self, state: Any, now: float) -> FiringError:
        code, site, t, bound, token = state.error()
        where, place = self.plan.sites[site]
        names = self.compiled.transitions[t].variables
        binding = dict(zip(names, self.binding(t, bound), strict=False))
        if code == 3:  # ERR_COLOUR
            slots = self.plan.slots[place]
            value = decode(slots, self.plan.product[place], token[:len(slots)])
            colour = self.compiled.net.places[self.compiled.place_names[place]].colour
            return FiringError(where, binding,
                               f"token {value!r} is not of colour set {colour.describe()}", now)
        return FiringError(where, binding, _MESSAGES.get(code, f"error {code}"), now)

    # -- the loop -------------------------------------------------------------------------
    def _rows(self, marking: list[dict[Any, Any]]) -> list[list[tuple[tuple[int, ...], Any]]]:
        return [[(encode(self.plan.slots[p], self.plan.product[p], value), amount)
                 for value, amount in place.items()] for p, place in enumerate(marking)]

    def _load(self, state: Any, marking: list[dict[Any, Any]]) -> None:
        for p, rows in enumerate(self._rows(marking)):
            state.load(p, rows, self.compiled.timed[p])

    def _run(self, sim: EngineHost) -> _CRun:
        """The simulator's C state: firings ``Simulator.fire`` made since the last run are
        taken in, in order; built afresh the first time (or when the firing counts do not
        add up)."""
        run = sim.engine_state if isinstance(sim.engine_state, _CRun) else None
        if run is not None and run.outside and \
                run.state.firings + len(run.outside) == sim.firings:
            timed = list(self.compiled.timed)
            for t, rows, counts in run.outside:
                run.state.replay(t, rows, timed, counts, run.state.firings + 1)
        elif run is None or run.state.firings != sim.firings:
            state = self.module.State()
            self._load(state, sim.marking)
            state.start(sim.now, sim.firings, sim.draws.choices)
            run = sim.engine_state = _CRun(state)
            sim.fired_outside = partial(self._note_outside, sim, run)
        run.outside = []
        return run

    def _note_outside(self, sim: EngineHost, run: _CRun, t: int) -> None:
        """After ``Simulator.fire`` fired ``t``: the marking after it, so that the C state
        can take the firing in (see :meth:`_run`)."""
        run.outside.append((t, self._rows(sim.marking), list(sim.firing_counts)))

    def loop(self, sim: EngineHost, horizon: float, limit: float,
             stop_when: Callable[[Any], bool] | None,
             progress: Callable[[Any], None] | None) -> str:
        """``Simulator.loop`` in C (a :class:`~tcpn.petrinets.engine.contract.Loop`): the
        same firings, then the state handed back.

        With forced draws (``Simulator(forced_draws=...)``) the net's draws do not come
        from the generator the C code reads: the Python loop runs instead.
        """
        draw = sim.draws
        if draw.generator is not draw.choices:
            return str(sim.loop(horizon, limit, stop_when, progress))
        run = self._run(sim)
        state = run.state
        state.now = sim.now
        values, next_index = draw.choice_buffer()
        state.set_buffer(list(values), next_index)
        before, after = sim.monitors_before, sim.observers_after
        transitions = self.compiled.transitions
        flags = 0
        if stop_when is not None or any(after):
            flags |= _PAUSE_AFTER
        if any(before):
            flags |= _PAUSE_BEFORE
        if progress is not None:
            flags |= _PAUSE_1024
        via_set, run.via_set = run.via_set, False
        next_progress = wallclock.perf_counter() + 0.2
        reason = "dead"
        try:
            while True:
                code = state.run(horizon, limit, flags, via_set)
                via_set = False
                if code == _R_ERROR:
                    raise self._error(state, state.now)
                if code == _R_CHOSEN:
                    t, row = state.pending()
                    if before[t]:
                        self._hand_back(sim, state)
                        for monitor in before[t]:
                            monitor.before(sim, transitions[t], self.binding(t, row))
                    continue
                if code == _R_FIRED:
                    t, _at, row = state.last()
                    if after[t]:
                        self._hand_back(sim, state)
                        for observe in after[t]:  # Monitor.observer functions
                            observe(sim, self.binding(t, row))
                    if stop_when is not None:
                        self._hand_back(sim, state)
                        if stop_when(sim):
                            run.via_set = True
                            reason = "predicate"
                            break
                    if progress is not None:
                        clock = wallclock.perf_counter()
                        if clock >= next_progress:
                            sim.now, sim.firings = state.now, state.firings
                            progress(sim)
                            next_progress = clock + 0.2
                    continue
                reason = _REASONS[code]
                break
        finally:
            self._hand_back(sim, state)
        t, at, row = state.last()
        sim.last_firing = (at, t, self.binding(t, row) if t >= 0 else ())
        return reason

    def _hand_back(self, sim: EngineHost, state: Any) -> None:
        """The C state written into the simulator (for queries, monitors and the Python
        engine's own methods, which start again from the marking)."""
        sim.now, sim.firings = state.now, state.firings
        sim.firing_counts[:] = state.counts()
        self._dump(state, sim.marking)
        sim.draws.resume_choices(*state.buffer())
        sim.reset_calendar()


@dataclass
class _CRun:
    """What the C engine keeps on a simulator between runs (its ``engine_state``): the C
    state, the firings ``Simulator.fire`` made since (transition, marking rows after,
    firing counts after), and whether the last run stopped at a predicate (the C loop
    then starts by bringing its bindings up to date)."""

    state: Any
    outside: list[tuple[int, Any, list[int]]] = field(default_factory=list)
    via_set: bool = False


def initial_marking_outside(compiled: CompiledNet, plan: NetPlan) -> str | None:
    """Why the initial marking cannot be encoded in ``plan``'s slots (the place and the
    value's fault), or ``None`` when every initial token fits."""
    try:
        for p, name in enumerate(compiled.place_names):
            for token in compiled.net.places[name].initial_tokens:
                encode(plan.slots[p], plan.product[p], token.value)
    except (OverflowError, ValueError, TypeError) as exc:
        return f"place {name}: initial token outside the C engine's subset ({exc})"
    return None


def build_cnet(compiled: CompiledNet, build: Callable[[str, tuple[str, ...], tuple[str, ...]],
                                                      Any]) -> CEngine | str:
    """The C engine of ``compiled``, or why it stays out (the element and the reason).

    ``build(pyx_source, compile_flags, link_flags)`` builds and loads the module (the
    native engine's cache does it).
    """
    try:
        plan = plan_net(compiled)
    except Unsupported as exc:
        return str(exc)
    except Exception as exc:  # a translator defect must not take the Cython route away
        _log.warning("net %s: the C engine's translator failed: %r", compiled.net.name, exc)
        return f"the C engine's translator failed on this net: {exc!r}"
    outside = initial_marking_outside(compiled, plan)
    if outside is not None:
        return outside
    source = _TEMPLATE.read_text().replace("@C_SOURCE@", plan.source)
    source = f"# numpy {np.__version__}\n" + source
    module = build(source, numpy_flags(), C_LIBRARIES)
    if isinstance(module, str):
        return module
    return CEngine(compiled, plan, module)
