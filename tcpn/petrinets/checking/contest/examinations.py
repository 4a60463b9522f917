"""The Model Checking Contest's examinations on a PNML model, answered as the contest's
tools answer them.

:func:`check_examination` reads ``DIR/model.pnml`` and the examination's property file
beside it (``DIR/CTLFireability.xml`` ...; the global properties need none), explores the
state space (a P/T net on :func:`~tcpn.petrinets.statespace.ptspace.explore_pt`, a coloured one on
:func:`~tcpn.petrinets.statespace.space.explore`), and returns one line per formula:
``FORMULA <id> TRUE|FALSE|<integer> TECHNIQUES <words>``, ``FORMULA <id> CANNOT_COMPUTE``
when a budget is reached, ``STATE_SPACE STATES <n> TECHNIQUES ...`` (and TRANSITIONS,
MAX_TOKEN_IN_PLACE, MAX_TOKEN_PER_MARKING) for StateSpace.

CTL and reachability formulas are checked by :mod:`tcpn.petrinets.checking.ptcheck`, LTL formulas by
:mod:`tcpn.petrinets.checking.ltl`; both read a dead marking as repeating forever. On an incomplete
state space (budget reached) a reachability formula is still decided when a reached state
proves it (``EF p`` seen, ``AG p`` violated), or on a P/T net when random walks
(:mod:`~tcpn.petrinets.checking.contest.walks`) meet such a state, and an LTL formula
when the states expanded hold a lasso of its negation's product (a path of the net that
refutes it); everything else is CANNOT_COMPUTE. On a
complete space ``EF p`` and ``AG p`` are read off the states (every one is reachable), the
other CTL formulas share one set of edge arrays per space.
"""

from __future__ import annotations

import gc
import time as wallclock
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from tcpn.errors import InputError
from tcpn.limits import LimitReached
from tcpn.petrinets.checking.contest.clock import Clock, TimeUp
from tcpn.petrinets.checking.contest.partial_ctl import PartialCTL
from tcpn.petrinets.checking.contest.properties import ContestProperty, read_properties
from tcpn.petrinets.checking.contest.pumping import Pumps, monotone
from tcpn.petrinets.checking.contest.state_equation import (
    one_safe_by_state_equation,
    stable_place,
)
from tcpn.petrinets.checking.contest.structure import Structure
from tcpn.petrinets.checking.contest.unfolding import UnfoldingRefused, unfold
from tcpn.petrinets.checking.contest.walks import StateFormulas, Walks, goal_of
from tcpn.petrinets.checking.formulas import (
    A,
    Bool,
    Deadlock,
    E,
    F,
    Fireable,
    Formula,
    G,
    Tokens,
    is_ctl,
    is_ltl,
    places_of,
    transitions_of,
    walk,
)
from tcpn.petrinets.checking.ltl import check_ltl
from tcpn.petrinets.checking.ptcheck import (
    BudgetReached,
    ctl_mask,
    edge_arrays,
    numeric_values,
    state_mask,
)
from tcpn.petrinets.exchange.pnml import read_pnml
from tcpn.petrinets.exchange.pnml.ptstream import PTArrays, ReadStopped, read_pt_stream
from tcpn.petrinets.statespace.memory import MemoryBudget, out_of_memory_reason
from tcpn.petrinets.statespace.protocol import AnyStateSpace, ExploredSpace
from tcpn.petrinets.statespace.ptspace import (
    BLOCK_ROWS,
    PTNet,
    PTStateSpace,
    explore_pt,
    pt_net,
)
from tcpn.petrinets.statespace.space import StateSpace

__all__ = ["EXAMINATIONS", "GLOBAL_EXAMINATIONS", "check_examination", "check_examinations",
           "load_model"]

#: Told why a line is CANNOT_COMPUTE: ``note(ident, reason)``.
Note = Callable[[str, str], None]
#: Examinations whose formulas are in ``<name>.xml``.
FORMULA_EXAMINATIONS = ("ReachabilityCardinality", "ReachabilityFireability",
                        "CTLCardinality", "CTLFireability", "LTLCardinality",
                        "LTLFireability", "UpperBounds")
#: Examinations about the whole net (``GenericPropertiesDefinition.xml``).
GLOBAL_EXAMINATIONS = ("StateSpace", "ReachabilityDeadlock", "QuasiLiveness", "Liveness",
                       "OneSafe", "StableMarking")
EXAMINATIONS = GLOBAL_EXAMINATIONS + FORMULA_EXAMINATIONS
DEFAULT_MAX_STATES = 2_000_000
TECHNIQUES = "EXPLICIT SEQUENTIAL_PROCESSING"
#: Counts (states x places, int64) in one block of :func:`_seen_in_one_pass`: 64 MB.
ONE_PASS_CELLS = 1 << 23
#: Seconds the random walks of one examination may take at most, when a budget has
#: stopped the search: a safety bound only; their budget is a count of work
#: (:data:`~tcpn.petrinets.checking.contest.walks.WALK_UNITS`, about 5 s on a quiet
#: machine), so that their answers do not depend on the machine's load.
WALK_S = 60.0
#: The walks' seed (the same answers and witnesses from one run to the next).
WALK_SEED = 31
#: The most places a coloured model's unfolding may have to be explored as a P/T net: the
#: P/T explorer keeps a dense row of counts per state, and a wider unfolding is better
#: explored coloured (VehicularWifi-COL-none unfolds into 115,566 places: 132 KB a state,
#: 23,022 states within an 8 GB budget, against 2 million states at 63 bytes coloured).
MAX_UNFOLDED_PLACES = 10_000
#: The part of the time left that the examinations share in the first pass (each an
#: equal part of it, :func:`_scheduled`): the rest is for what a share cut. All of it
#: left nothing for a second pass when each examination spent its share (Echo-PT-d03r03,
#: whose ReachabilityCardinality needs 35 s of reading states: 16 answers greedy, 5
#: shared).
FIRST_PASS = 0.5
#: Models larger than this are refused (the contest's largest are about 60 MB).
MAX_MODEL_BYTES = 500_000_000


@dataclass
class Model:
    """A contest model ready to explore: the net and how formula names map onto it (a
    name to the net's name, or, for a coloured model unfolded into a P/T net, to the
    tuple of P/T places (transitions) it stands for: its colours (bindings)).
    ``coloured_because``: why a coloured model was not unfolded."""

    net: Any
    is_pt: bool
    place_names: dict[str, str] | dict[str, tuple[str, ...]]
    transition_names: dict[str, str] | dict[str, tuple[str, ...]]
    coloured_because: str | None = None

    @property
    def unfolded(self) -> bool:
        """Whether the net is a coloured model's P/T unfolding."""
        return any(isinstance(v, tuple) for v in self.place_names.values())


@dataclass
class _Unfolded:
    """How the global properties of a coloured model read its P/T unfolding: a place is
    a coloured place (the sum over its colours), a transition a coloured one (any of its
    bindings). ``places``: per coloured place its P/T places; ``owner``: per P/T
    transition the number of its coloured transition, of ``n_transitions``."""

    places: list[tuple[str, ...]]
    owner: np.ndarray
    n_transitions: int

    @classmethod
    def of(cls, model: Model) -> _Unfolded | None:
        if not model.unfolded:
            return None
        number = {t: i for i, t in enumerate(model.net.transitions)}
        owner = np.zeros(len(number), dtype=np.int64)
        groups = list(model.transition_names.values())
        for c, group in enumerate(groups):
            owner[[number[t] for t in group]] = c
        return cls([p for p in model.place_names.values() if isinstance(p, tuple)], owner,
                   len(groups))

    def labels(self, labels: np.ndarray) -> np.ndarray:
        """The coloured transitions of P/T edge labels."""
        return self.owner[np.asarray(labels, dtype=np.int64)]


def load_model(model_path: str | Path, stop: Callable[[], str | None] | None = None
               ) -> Model:
    """Read ``model.pnml``: a P/T net as matrices (places and transitions named by their
    PNML ids), or a coloured net as a :class:`~tcpn.petrinets.net.PetriNet`.

    A plain P/T file is read as a stream (:func:`read_pt_stream`: memory in the net's
    size, not the file's), calling ``stop`` as it goes (:class:`ReadStopped` when it
    names a budget); anything else by :func:`read_pnml`, which names what is wrong and
    calls ``stop`` before each place, arc and sort listing."""
    arrays = read_pt_stream(Path(model_path), MAX_MODEL_BYTES, stop)
    if arrays is not None:
        return Model(pt_matrices(arrays), True, {p: p for p in arrays.places},
                     {t: t for t in arrays.transitions})
    imported = read_pnml(Path(model_path), max_bytes=MAX_MODEL_BYTES, stop=stop)
    net = imported.net
    places = {imported.ids.get(f"place:{p}", p): p for p in net.places}
    transitions = {imported.ids.get(f"trans:{t}", t): t for t in net.transitions}
    place_ids = [imported.ids.get(f"place:{p}", p) for p in net.places]
    transition_ids = [imported.ids.get(f"trans:{t}", t) for t in net.transitions]
    try:
        matrices = pt_net(net, place_ids, transition_ids)
    except InputError:
        try:
            unfolded = unfold(net, place_ids, transition_ids, stop,
                              max_places=MAX_UNFOLDED_PLACES)
        except UnfoldingRefused as refused:
            return Model(net, False, places, transitions, str(refused))
        return Model(unfolded.net, True, unfolded.places, unfolded.transitions)
    return Model(matrices, True, {p: p for p in places}, {t: t for t in transitions})


def pt_matrices(arrays: PTArrays) -> PTNet:
    """The sparse matrices of a streamed P/T net (arcs on one pair add up, as
    :func:`pt_net` adds them)."""
    from scipy.sparse import csr_array

    shape = (len(arrays.transitions), len(arrays.places))

    def matrix(chosen: np.ndarray) -> Any:
        return csr_array((arrays.arc_weight[chosen], (arrays.arc_transition[chosen],
                                                      arrays.arc_place[chosen])),
                         shape=shape, dtype=np.int64)

    empty = csr_array(shape, dtype=np.int64)
    return PTNet(arrays.places, arrays.transitions, matrix(arrays.arc_input),
                 matrix(~arrays.arc_input), empty, empty, csr_array(shape, dtype=bool),
                 arrays.initial)


def explore_model(model_path: str | Path, max_states: int = DEFAULT_MAX_STATES,
                  time_limit_s: float | None = None,
                  max_memory_bytes: int | None = None) -> tuple[Model | None, Any]:
    """The model and its state space (a P/T net on the vector explorer,
    :func:`~tcpn.petrinets.statespace.ptspace.explore_pt`, a coloured one on
    :func:`~tcpn.petrinets.statespace.space.explore`; either stops at ``max_memory_bytes`` of
    resident memory). The reading counts in both budgets: the explorer has the time the
    reading left, and a reading past either gives no model and an :class:`_Unread`
    space naming the budget."""
    started = wallclock.perf_counter()
    try:
        model = load_model(model_path, _read_budget(started, time_limit_s, max_memory_bytes))
    except ReadStopped as stopped:
        return None, _Unread(stopped.reason)
    except LimitReached as beyond:  # within the grammar, beyond a limit: CANNOT_COMPUTE
        return None, _Unread(f"a limit of tcpn reached while reading the model: {beyond}")
    left = None if time_limit_s is None else max(
        0.0, time_limit_s - (wallclock.perf_counter() - started))
    if model.is_pt:
        return model, explore_pt(model.net, max_states=max_states, time_limit_s=left,
                                 max_memory_bytes=max_memory_bytes)
    from tcpn.petrinets.statespace.space import explore
    return model, explore(model.net, max_states=max_states, time_budget_s=left,
                          max_memory_bytes=max_memory_bytes)


def _read_budget(started: float, time_limit_s: float | None,
                 max_memory_bytes: int | None) -> Callable[[], str | None]:
    """What stops a reading: the time limit counted from ``started``, the memory budget."""
    budget = MemoryBudget.of(max_memory_bytes)

    def stop() -> str | None:
        if time_limit_s is not None and wallclock.perf_counter() - started > time_limit_s:
            return f"time budget reached while reading the model: {time_limit_s:g} s"
        if budget.exceeded():
            return f"{budget.reason()} while reading the model"
        return None

    return stop


def check_examination(model_path: str | Path, examination: str,
                      max_states: int = DEFAULT_MAX_STATES,
                      time_limit_s: float | None = None,
                      on_line: Callable[[str], None] | None = None,
                      on_reason: Note | None = None) -> list[str]:
    """The contest's answer lines for one examination of ``model_path`` (see the module
    docstring); ``on_line`` receives each line as soon as it is known, ``on_reason``
    the budget behind each CANNOT_COMPUTE.

    Raises :class:`~tcpn.errors.InputError` naming the file for a missing or malformed
    model or property file, and the formula for an unknown place or transition.
    """
    return check_examinations(model_path, [examination], max_states, time_limit_s,
                              on_line, on_reason=on_reason)[examination]


def check_examinations(model_path: str | Path, examinations: list[str],
                       max_states: int = DEFAULT_MAX_STATES,
                       time_limit_s: float | None = None,
                       on_line: Callable[[str], None] | None = None,
                       explored: tuple[Model | None, Any] | None = None,
                       max_memory_bytes: int | None = None,
                       on_reason: Callable[[str, str], None] | None = None,
                       on_examination: Callable[[str], None] | None = None
                       ) -> dict[str, list[str]]:
    """:func:`check_examination` for several examinations on one exploration (or on
    ``explored``, what :func:`explore_model` returned for this model); the P/T explorer,
    the coloured explorer, the CTL edge arrays, Liveness and the LTL checks stop at
    ``max_memory_bytes`` of resident memory (None: :meth:`MemoryBudget.default`, half of
    what the process may use; a figure above what the process may really use is held to
    that) and say CANNOT_COMPUTE; ``on_reason(ident, reason)`` is told, for each
    CANNOT_COMPUTE, the budget that caused it. ``time_limit_s`` counts from the call
    (the reading and the exploration in it, unless ``explored``); every examination reads
    the clock before and inside its long steps and ends in CANNOT_COMPUTE when it is spent,
    the answers already given kept. Each examination runs first on an equal share of
    half the time left, the formulas it could not finish in its share again once every
    examination has run (:func:`_scheduled`); ``on_examination`` is told the
    examination whose work begins (again), e.g. to count its CPU time."""
    clock = Clock(time_limit_s)
    for examination in examinations:
        if examination not in EXAMINATIONS:
            raise InputError(f"unknown examination {examination!r}; one of "
                             f"{', '.join(EXAMINATIONS)}")
    model_path = Path(model_path)
    if not model_path.is_file():
        raise InputError(f"{model_path}: no such model file")
    properties: dict[str, list[ContestProperty]] = {
        e: read_properties(model_path.parent / f"{e}.xml") for e in examinations
        if e in FORMULA_EXAMINATIONS}
    def note(ident: str, reason: str) -> None:
        if on_reason is not None:
            on_reason(ident, reason)

    model: Model | None = None
    try:
        model, space = explored or explore_model(model_path, max_states, time_limit_s,
                                                 max_memory_bytes)
    except MemoryError:  # a limit refused an allocation: nothing is known
        space = _OutOfMemory(out_of_memory_reason())
    if isinstance(space, _Unread):  # a budget stopped the reading: no name is checked
        return _unread(examinations, properties, space.reason, note, on_line)
    if model is None:
        # read again once the failed search's arrays are gone: inside the except block its
        # traceback still holds them, and the reading would fail for want of memory too
        gc.collect()
        model = load_model(model_path)
    properties = {e: [_renamed(p, model, model_path.parent / f"{e}.xml") for p in props]
                  for e, props in properties.items()}
    structure = Structure(model.net, clock) if model.is_pt and not _complete(space) \
        else None
    unfolded = _Unfolded.of(model)

    def examine(examination: str, mine: Clock, only: set[str] | None
                ) -> list[tuple[str, list[str], str | None]]:
        """(ident, lines, the reason of a CANNOT_COMPUTE) of ``examination``'s formulas
        (those of ``only``), on the examination's clock ``mine``."""
        reasons: dict[str, str] = {}

        def told(ident: str, reason: str) -> None:
            reasons[ident] = reason

        props = [p for p in properties.get(examination, []) if only is None or p.id in only]
        if structure is not None:
            structure.start(mine)
        if examination in GLOBAL_EXAMINATIONS:
            lines = _or_cannot(_global, examination, told, examination, space,
                               max_memory_bytes, told, mine, structure, unfolded)
            return [(examination, lines, reasons.get(examination))]
        undecided = props
        if structure is not None:  # the structure first: cheap on the nets it answers
            undecided = [p for p in props if p.formula is None or not isinstance(
                structure.simplified(p.formula)[0], Bool)]
        seen = _memo_reachability(space, mine, undecided,
                                  model.net if structure is not None else None)
        walks = _walks(undecided, space, model, mine, seen, structure)
        pumps = _pumps(undecided, space, mine, structure)
        partial = _partial_ctl(space, mine, max_memory_bytes)
        found = []
        for prop in props:
            lines = _or_cannot(_answer, prop.id, told, examination, prop, space, mine,
                               max_memory_bytes, told, walks, seen, structure, pumps,
                               partial)
            found.append((prop.id, lines, reasons.get(prop.id)))
        return found

    return _scheduled(examinations, clock, examine, on_line, note, on_examination)


def _scheduled(examinations: list[str], clock: Clock,
               examine: Callable[[str, Clock, set[str] | None],
                                 list[tuple[str, list[str], str | None]]],
               on_line: Callable[[str], None] | None, note: Note,
               on_examination: Callable[[str], None] | None) -> dict[str, list[str]]:
    """The examinations' lines, each examination run first on an equal share of
    :data:`FIRST_PASS` of the time left (:meth:`Clock.share`), so that the first ones
    cannot spend the time the cheap answers of the others need; the formulas left
    CANNOT_COMPUTE by an examination that spent its whole share are run again, in a
    second pass, in order, each on all the time then left.
    A line is told to ``on_line`` (its reason to ``note``) once it is final."""
    answers: dict[str, list[tuple[str, list[str], str | None]]] = {}
    again: dict[str, set[str]] = {}
    for position, examination in enumerate(examinations):
        if on_examination is not None:
            on_examination(examination)
        mine = clock.share(len(examinations) - position, FIRST_PASS)
        answers[examination] = examine(examination, mine, None)
        spent = mine.left() == 0.0
        for ident, lines, reason in answers[examination]:
            if (spent or "time budget" in (reason or "")) and lines and \
                    lines[0].endswith("CANNOT_COMPUTE"):
                again.setdefault(examination, set()).add(ident)
            else:
                _tell(lines, reason, ident, on_line, note)
    for examination, idents in again.items():
        if on_examination is not None:
            on_examination(examination)
        redone = {ident: (lines, reason) for ident, lines, reason in
                  examine(examination, clock, idents)}
        found = answers[examination]
        for n, (ident, _, _) in enumerate(found):
            if ident in redone:
                found[n] = (ident, *redone[ident])
                _tell(*redone[ident], ident, on_line, note)
    return {e: [line for _, lines, _ in found for line in lines]
            for e, found in answers.items()}


def _tell(lines: list[str], reason: str | None, ident: str,
          on_line: Callable[[str], None] | None, note: Note) -> None:
    """Tell ``ident``'s final lines to ``on_line``, and the reason of a CANNOT_COMPUTE to
    ``note``."""
    if reason is not None and lines and lines[0].endswith("CANNOT_COMPUTE"):
        note(ident, reason)
    for line in lines:
        if on_line is not None:
            on_line(line)


def _memo_reachability(space: Any, clock: Clock | None = None,
                       props: list[ContestProperty] | None = None,
                       net: PTNet | None = None) -> Callable[[Formula], bool | None]:
    """:func:`_reachability` on ``space``, each formula's verdict read once (the walks ask
    it before the formula's line does, and a fireability atom over many transitions
    costs seconds on a large space). On a stopped search the states are read while
    ``clock`` has time left (an unread formula is undecided here, and goes on to the
    structure and the walks); a complete space is read whatever the time. On a stopped
    P/T search (``net``), the ``EF p`` and ``AG p`` of ``props`` are read first, all in
    one pass over the states (:func:`_seen_in_one_pass`)."""
    left = None if clock is None or _complete(space) else clock.left()
    deadline = None if left is None else wallclock.perf_counter() + left
    verdicts: dict[Formula, bool | None] = _seen_in_one_pass(
        [p.formula for p in props or () if p.formula is not None], space, net, deadline
    ) if net is not None and not _complete(space) and len(space) else {}

    def seen(formula: Formula) -> bool | None:
        if formula not in verdicts:
            try:
                verdicts[formula] = _reachability(formula, space, deadline) if len(space) \
                    else None
            except BudgetReached:
                verdicts[formula] = None
        return verdicts[formula]

    return seen


def _seen_in_one_pass(formulas: list[Formula], space: PTStateSpace, net: PTNet,
                      deadline: float | None) -> dict[Formula, bool | None]:
    """The verdicts the states of a stopped P/T search give the ``EF p`` / ``AG p`` among
    ``formulas`` (a state where ``p`` holds / fails decides it; else None): the states
    read a block at a time, in the columns of the places the formulas read, every
    formula on each block, so the store is read once (an atom at a time, a frontier of
    millions of dense rows was read once per atom: minutes for an examination). Blocks
    hold at most :data:`ONE_PASS_CELLS` counts and stop at ``deadline``: a formula
    undecided then is None too."""
    goals = {f: goal for f in formulas if (goal := goal_of(f)) is not None}
    found: dict[Formula, bool | None] = dict.fromkeys(goals)
    pending = list(goals)
    evaluator = StateFormulas(net)
    columns = evaluator.reads([goal for goal, _ in goals.values()])
    rows = max(1, min(BLOCK_ROWS, ONE_PASS_CELLS // max(1, len(columns))))
    for start in range(0, len(space), rows):
        if not pending or (deadline is not None and wallclock.perf_counter() > deadline):
            break
        block = space.columns(columns, start, min(start + rows, len(space)))
        masks = evaluator.holds_on([goals[f][0] for f in pending], block, columns)
        for formula, mask in zip(list(pending), masks, strict=True):
            if mask.any():
                found[formula] = goals[formula][1]
                pending.remove(formula)
    return found


def _walks(props: list[ContestProperty], space: Any, model: Model, clock: Clock,
           seen: Callable[[Formula], bool | None], structure: Structure | None
           ) -> Walks | None:
    """The random walks of one examination's formulas on a P/T net whose search a budget
    stopped (None otherwise): the formulas, as the structure simplifies them, that
    neither the states found nor the structure decide, and the bounds that the states
    found do not reach (:meth:`Structure.bound_goal`), walked for their work budget,
    cut at :data:`WALK_S` or the time left on ``clock``."""
    left = clock.left()
    if structure is None or not props or left == 0.0:  # no time: nothing is read off
        return None
    goals = {p.id: structure.simplified(p.formula)[0] for p in props
             if p.formula is not None and seen(p.formula) is None}
    for prop in props:
        goal = structure.bound_goal(prop.bound, space) if prop.bound is not None else None
        if goal is not None:
            goals[prop.id] = goal
    return Walks(model.net, {i: f for i, f in goals.items() if not isinstance(f, Bool)},
                 WALK_S if left is None else min(WALK_S, left), WALK_SEED)


def _partial_ctl(space: Any, clock: Clock, max_memory_bytes: int | None
                 ) -> Callable[[Formula], bool | None] | None:
    """What the states of a stopped P/T search prove of a CTL formula, three-valued
    (:mod:`~tcpn.petrinets.checking.contest.partial_ctl`), the masks of an examination's
    formulas made once (at the first question) and read until ``clock`` is spent."""
    if _complete(space) or not isinstance(space, PTStateSpace) or not len(space):
        return None
    left = clock.left()
    deadline = None if left is None else wallclock.perf_counter() + left
    checker: list[PartialCTL] = []

    def value(formula: Formula) -> bool | None:
        if not checker:
            checker.append(PartialCTL(space, deadline, MemoryBudget.of(max_memory_bytes)))
        return checker[0].value(formula)

    return value


def _pumps(props: list[ContestProperty], space: Any, clock: Clock,
           structure: Structure | None) -> Pumps | None:
    """The walks looking for proofs of unboundedness (:mod:`~tcpn.petrinets.checking.
    contest.pumping`) for the UpperBounds questions of a stopped P/T search that the
    state equation does not bound (None when there is none, or no time)."""
    left = clock.left()
    if structure is None or left == 0.0 or not monotone(structure.net):
        return None
    index = {p: i for i, p in enumerate(structure.net.places)}
    goals = {p.id: np.array([index[q] for q in p.bound.places], dtype=np.int64)
             for p in props if p.bound is not None
             and structure.bounds(p.bound, space)[1] is None}
    return Pumps(structure.net, goals, WALK_S if left is None else min(WALK_S, left),
                 WALK_SEED) if goals else None


class _OutOfMemory:
    """The state space of an exploration a ``MemoryError`` ended: incomplete, no state;
    ``reason`` names the limit that refused the allocation."""

    complete = False

    def __init__(self, reason: str):
        self.reason = reason

    def __len__(self) -> int:
        return 0


class _Unread(_OutOfMemory):
    """The state space of a model whose reading a budget stopped (``reason``)."""

    n_edges = 0


def _unread(examinations: list[str], properties: dict[str, list[ContestProperty]],
            reason: str, note: Note, on_line: Callable[[str], None] | None
            ) -> dict[str, list[str]]:
    """Every line CANNOT_COMPUTE, ``reason`` noted for each."""
    answers: dict[str, list[str]] = {}
    for examination in examinations:
        idents = [p.id for p in properties[examination]] if examination in properties \
            else [examination]
        for ident in idents:
            note(ident, reason)
            for line in _cannot_lines(ident):
                answers.setdefault(examination, []).append(line)
                if on_line is not None:
                    on_line(line)
    return answers


def _cannot_lines(ident: str) -> list[str]:
    """CANNOT_COMPUTE for ``ident`` (StateSpace: its four lines)."""
    if ident == "StateSpace":
        return [f"STATE_SPACE {what} CANNOT_COMPUTE" for what in
                ("STATES", "TRANSITIONS", "MAX_TOKEN_IN_PLACE", "MAX_TOKEN_PER_MARKING")]
    return [_cannot(ident)]


def _or_cannot(answer: Callable[..., Any], ident: str, note: Note, *args: Any) -> list[str]:
    """``answer(*args)`` as lines, or CANNOT_COMPUTE for ``ident`` when the time budget is
    spent in it (:class:`TimeUp`) or an allocation in it fails (a limit the memory budget
    had not yet seen refused it), the budget noted."""
    try:
        found = answer(*args)
    except TimeUp as up:
        note(ident, up.reason)
        return _cannot_lines(ident)
    except MemoryError:
        found = None
    if found is None:  # out of the except block, the failed search's arrays can go
        gc.collect()
        note(ident, out_of_memory_reason())
        return _cannot_lines(ident)
    return [found] if isinstance(found, str) else found


def _renamed(prop: ContestProperty, model: Model, source: Path) -> ContestProperty:
    """The property with its PNML ids replaced by the net's names (checking they exist; an
    unknown one is named with the property file and the formula's id)."""
    for place in (places_of(prop.formula) if prop.formula is not None else set()) | set(
            prop.bound.places if prop.bound is not None else ()):
        if place not in model.place_names:
            raise InputError(f"{source}: formula {prop.id}: unknown place {place!r}")
    if prop.formula is not None:
        for transition in transitions_of(prop.formula):
            if transition not in model.transition_names:
                raise InputError(f"{source}: formula {prop.id}: unknown transition "
                                 f"{transition!r}")
    if model.is_pt and not model.unfolded:
        return prop
    return replace(prop, formula=_rename(prop.formula, model) if prop.formula else None,
                   bound=_tokens(prop.bound, model) if prop.bound else None)


def _rename(formula: Formula, model: Model) -> Formula:
    """``formula`` on the net's names: an unfolded place stands for the sum over its
    colours, an unfolded transition for any of its bindings (none: never fireable)."""
    if isinstance(formula, Fireable):
        names = _names(model.transition_names, formula.transitions)
        return Fireable(names) if names else Bool(False)
    changes: dict[str, Any] = {}
    for name, value in vars(formula).items():
        if isinstance(value, Formula):
            changes[name] = _rename(value, model)
        elif isinstance(value, Tokens):
            changes[name] = _tokens(value, model)
        elif isinstance(value, tuple) and value and isinstance(value[0], Formula):
            changes[name] = tuple(_rename(v, model) for v in value)
    return replace(formula, **changes)  # type: ignore[type-var]


def _tokens(tokens: Tokens, model: Model) -> Tokens:
    if tokens.value is not None and model.unfolded:
        raise InputError("a count of one colour on an unfolded coloured place is not "
                         "supported")
    return replace(tokens, places=_names(model.place_names, tokens.places))


def _names(names: dict[str, str] | dict[str, tuple[str, ...]], formula_names: tuple[str, ...]
           ) -> tuple[str, ...]:
    """The net's names for ``formula_names``, an unfolded one's expanded in place."""
    found: list[str] = []
    for name in formula_names:
        mapped = names[name]
        found += mapped if isinstance(mapped, tuple) else [mapped]
    return tuple(found)


def _complete(space: ExploredSpace) -> bool:
    return bool(space.complete)


def _why_incomplete(space: Any) -> str:
    """The budget that stopped the search, as the space names it."""
    reason = getattr(space, "reason", "")
    if reason:
        return f"the state space is incomplete: {reason}"
    stop = str(getattr(space, "stop_reason", "") or "a budget").replace("_", " ")
    limit = getattr(space, "limit", "")
    return f"the state space is incomplete: {stop} reached" + (f": {limit}" if limit else "")


def _cannot(ident: str) -> str:
    return f"FORMULA {ident} CANNOT_COMPUTE"


def _answer(examination: str, prop: ContestProperty, space: AnyStateSpace,
            clock: Clock, max_memory_bytes: int | None = None,
            note: Note = lambda ident, reason: None, walks: Walks | None = None,
            seen: Callable[[Formula], bool | None] | None = None,
            structure: Structure | None = None, pumps: Pumps | None = None,
            partial: Callable[[Formula], bool | None] | None = None) -> str:
    """One formula's line (a CANNOT_COMPUTE's budget told to ``note``). When the space is
    incomplete, ``structure`` (a P/T net's, :class:`Structure`) bounds UpperBounds and
    simplifies formulas, which may settle them, and ``walks`` then finds witnesses of
    ``EF p``, counter-examples of ``AG p`` and markings that reach a bound; ``seen``,
    :func:`_memo_reachability`'s. What the
    states of a complete space read off answer is given even with no time left (no
    search: one pass over them); the searches (LTL, CTL fixpoints, the state equation)
    read ``clock``, and so does a stopped search before anything is read off it (its
    answers are few, and a pass over millions of coloured states takes seconds)."""
    seconds_left = clock.left()
    if not _complete(space) and seconds_left == 0.0:
        note(prop.id, clock.reason())
        return _cannot(prop.id)
    if prop.bound is not None:
        if not _complete(space):
            met = _bound_met(prop, space, structure, walks, pumps)
            if met is not None:
                return f"FORMULA {prop.id} {met[0]} TECHNIQUES {TECHNIQUES} {met[1]}"
            note(prop.id, _why_incomplete(space))
            return _cannot(prop.id)
        values = numeric_values(prop.bound, space)
        return f"FORMULA {prop.id} {int(values.max())} TECHNIQUES {TECHNIQUES}"
    formula = prop.formula
    assert formula is not None
    if structure is not None:  # a stopped P/T search: what the structure settles first
        simplified, technique = structure.simplified(formula)
        if isinstance(simplified, Bool):
            return (f"FORMULA {prop.id} {'TRUE' if simplified.value else 'FALSE'} "
                    f"TECHNIQUES {TECHNIQUES} {technique}")
    # no state, nothing seen; ``seen``: the verdicts already read
    decided = (seen or _memo_reachability(space))(formula)
    if decided is not None:
        return f"FORMULA {prop.id} {'TRUE' if decided else 'FALSE'} TECHNIQUES {TECHNIQUES}"
    if not _complete(space):
        if structure is not None:
            formula = simplified
        walked = walks.answer(prop.id) if walks is not None else None
        if walked is not None:
            return (f"FORMULA {prop.id} {'TRUE' if walked[0] else 'FALSE'} TECHNIQUES "
                    "RANDOM_WALK")
        ltl = _is_ltl_question(examination, formula)
        if partial is not None and not ltl and is_ctl(formula):
            try:  # the states found, three-valued: what they prove of the formula
                proved = partial(formula)
            except BudgetReached as budget:
                note(prop.id, str(budget))
                return _cannot(prop.id)
            if proved is not None:
                return (f"FORMULA {prop.id} {'TRUE' if proved else 'FALSE'} TECHNIQUES "
                        f"{TECHNIQUES}")
        if getattr(space, "n_expanded", None) is not None and ltl:
            # a lasso among the states expanded is a path of the net (check_ltl)
            return _ltl_line(prop.id, formula, space, seconds_left, max_memory_bytes, note)
        note(prop.id, _why_incomplete(space))
        return _cannot(prop.id)
    if _is_ltl_question(examination, formula):
        return _ltl_line(prop.id, formula, space, seconds_left, max_memory_bytes, note)
    deadline = None if seconds_left is None else wallclock.perf_counter() + seconds_left
    try:
        holds = bool(ctl_mask(formula, space, deadline, max_memory_bytes)[0])
    except BudgetReached as budget:
        note(prop.id, str(budget))
        return _cannot(prop.id)
    return f"FORMULA {prop.id} {'TRUE' if holds else 'FALSE'} TECHNIQUES {TECHNIQUES}"


def _is_ltl_question(examination: str, formula: Formula) -> bool:
    """Whether the formula is checked as LTL (an LTL examination's, or a path formula
    outside CTL)."""
    return examination.startswith("LTL") or (not is_ctl(formula) and is_ltl(formula))


def _ltl_line(ident: str, formula: Formula, space: AnyStateSpace,
              seconds_left: float | None, max_memory_bytes: int | None, note: Note) -> str:
    """The line of an LTL formula (:func:`~tcpn.petrinets.checking.ltl.check_ltl`; on an
    incomplete space only a lasso found answers), CANNOT_COMPUTE with its reason
    noted when the answer is unknown."""
    verdict = check_ltl(formula, space, time_limit_s=seconds_left,
                        max_memory_bytes=max_memory_bytes)
    if verdict.answer == "unknown":
        note(ident, verdict.reason or "unknown")
        return _cannot(ident)
    words = " ".join(verdict.technique)
    return f"FORMULA {ident} {verdict.answer.upper()} TECHNIQUES {words}"


def _bound_met(prop: ContestProperty, space: Any, structure: Structure | None,
               walks: Walks | None, pumps: Pumps | None = None
               ) -> tuple[int | str, str] | None:
    """The exact UpperBounds answer of an incomplete search (with the technique that
    proves it), else None: 0 when the bound's places all lie in a siphon empty at the
    start; the state equation's upper bound when the most tokens seen on them (in the
    initial marking or a state found: all reachable) reach it, or when a random walk
    reaches a marking with that many (:meth:`Structure.bound_goal`); ``inf`` when the
    equation gives no bound and a walk proves one of the places unbounded
    (``pumps``, :mod:`~tcpn.petrinets.checking.contest.pumping`)."""
    if structure is None or prop.bound is None:
        return None
    net, bound = structure.net, prop.bound
    index = {p: i for i, p in enumerate(net.places)}
    if structure.siphon.places[[index[p] for p in bound.places]].all():
        return 0, "TOPOLOGICAL"  # a siphon empty at the start: empty in every marking
    seen, most = structure.bounds(bound, space)
    if most is None:
        pump = pumps.answer(prop.id) if pumps is not None else None
        return ("inf", "RANDOM_WALK") if pump is not None else None
    if seen == most:
        return most, "STATE_EQUATION"
    walked = walks.answer(prop.id) if walks is not None else None
    return (most, "STATE_EQUATION RANDOM_WALK") if walked is not None else None


def _reachability(formula: Formula, space: AnyStateSpace, deadline: float | None = None
                  ) -> bool | None:
    """``EF p`` or ``AG p`` (``p`` without path quantifiers) on the states found, every one
    reachable: decided by one state where ``p`` holds (fails), or on a complete space by
    there being none; ``None`` for any other formula or when the states found do not
    decide it (no fixpoint over the edges is needed). :class:`BudgetReached` past
    ``deadline``.
    """
    for quantifier, operator, witness in ((E, F, True), (A, G, False)):
        if isinstance(formula, quantifier) and isinstance(formula.path, operator):
            inner = formula.path.operand
            if is_ctl(inner) and not any(isinstance(n, A | E) for n in walk(inner)):
                mask = state_mask(inner, space, deadline)
                seen = bool(mask.any() if witness else not mask.all())
                if seen:
                    return witness
                return None if not _complete(space) else not witness
    return None


#: Bytes per edge Liveness holds at once (SciPy's float64 CSR copy, the edges' sources,
#: the component pairs and their sort), checked against the memory budget first.
LIVENESS_EDGE_BYTES = 40
#: Seconds per edge of Liveness's components and pairs (measured: 0.12 us an edge on 6.6 million
#: edges of StigmergyElection-PT-08a; four times that for a loaded machine; see
#: :func:`_live`): the step runs in SciPy at once, so it is not begun without that time.
LIVENESS_S_PER_EDGE = 5e-7


def _global(examination: str, space: AnyStateSpace,
            max_memory_bytes: int | None = None,
            note: Note = lambda ident, reason: None, clock: Clock | None = None,
            structure: Structure | None = None,
            unfolded: _Unfolded | None = None) -> list[str]:
    """The lines of a global examination (Liveness: CANNOT_COMPUTE when its arrays would
    pass ``max_memory_bytes`` of resident memory, None: the default budget; a
    CANNOT_COMPUTE's budget told to ``note``; ``structure``, a P/T net's whose search
    stopped, answers what an incomplete space does not). Each step reads ``clock``
    first (:class:`TimeUp` when the time is spent: CANNOT_COMPUTE naming it), and a step
    that cannot stop midway (Liveness's components) is not begun when its estimated time
    is more than what is left. ``unfolded``: the net is a coloured model's unfolding,
    whose places and transitions are the coloured ones (StateSpace's
    MAX_TOKEN_IN_PLACE counts one colour of one place, a P/T place)."""
    clock = clock or Clock(None)
    if not _complete(space):
        clock.check()  # a stopped search: nothing is read off it once the time is spent
        if examination == "StateSpace":
            note(examination, _why_incomplete(space))
            return [f"STATE_SPACE {what} CANNOT_COMPUTE" for what in
                    ("STATES", "TRANSITIONS", "MAX_TOKEN_IN_PLACE", "MAX_TOKEN_PER_MARKING")]
        found = None if isinstance(space, _OutOfMemory) else _partial(examination, space,
                                                                      unfolded)
        techniques = TECHNIQUES
        if found is None and structure is not None and examination in STRUCTURAL:
            proved = _structural(examination, structure, space, clock, unfolded)
            if proved is not None:
                found, techniques = proved[0], f"{TECHNIQUES} {proved[1]}"
        if found is None:
            note(examination, _why_incomplete(space))
        return [_cannot(examination) if found is None else
                f"FORMULA {examination} {'TRUE' if found else 'FALSE'} TECHNIQUES "
                f"{techniques}"]
    clock.check()
    if examination in ("StateSpace", "OneSafe", "StableMarking"):
        most, per_marking, stable = _token_counts(space, clock, unfolded)
    if examination in ("StateSpace", "ReachabilityDeadlock", "QuasiLiveness", "Liveness"):
        indptr, targets, labels, names = edge_arrays(space)
        n_transitions = len(names)
        if unfolded is not None:
            labels, n_transitions = unfolded.labels(labels), unfolded.n_transitions
    clock.check()
    if examination == "StateSpace":
        # In a coloured net "a place" is one colour of it (a place of the P/T twin).
        per_place = (space.token_statistics()[0] if unfolded is not None else most) \
            if isinstance(space, PTStateSpace) else _most_of_one_colour(space, clock)
        return [f"STATE_SPACE STATES {len(space)} TECHNIQUES {TECHNIQUES}",
                f"STATE_SPACE TRANSITIONS {len(targets)} TECHNIQUES {TECHNIQUES}",
                f"STATE_SPACE MAX_TOKEN_IN_PLACE {per_place} TECHNIQUES {TECHNIQUES}",
                f"STATE_SPACE MAX_TOKEN_PER_MARKING {per_marking} TECHNIQUES {TECHNIQUES}"]
    if examination == "ReachabilityDeadlock":
        holds = bool((np.diff(indptr) == 0).any())
    elif examination == "QuasiLiveness":
        holds = len(np.unique(labels)) == n_transitions
    elif examination == "OneSafe":
        holds = most <= 1
    elif examination == "StableMarking":
        holds = stable
    else:
        budget = MemoryBudget.of(max_memory_bytes)
        if budget.exceeded(LIVENESS_EDGE_BYTES * len(targets)):
            note(examination, f"{budget.reason()} (Liveness needs "
                 f"{LIVENESS_EDGE_BYTES * len(targets) / 1e6:,.0f} MB more)")
            return [_cannot(examination)]
        clock.check(LIVENESS_S_PER_EDGE * len(targets), "Liveness's strongly connected "
                    f"components of {len(targets):,} edges")
        holds = _live(indptr, targets, labels, n_transitions)
    return [f"FORMULA {examination} {'TRUE' if holds else 'FALSE'} TECHNIQUES {TECHNIQUES}"]


def _partial(examination: str, space: AnyStateSpace, unfolded: _Unfolded | None = None
             ) -> bool | None:
    """What the states found so far prove of a global property when a budget stopped the
    search (None: nothing). Every state found is reachable and every expanded state's
    successors are known, so: a dead expanded state proves ReachabilityDeadlock and
    refutes Liveness; every transition seen firing proves QuasiLiveness; a place holding
    two tokens refutes OneSafe; every place seen with two counts refutes StableMarking."""
    if examination in ("ReachabilityDeadlock", "Liveness"):
        dead = bool(len(space.dead_markings()))
        if examination == "ReachabilityDeadlock":
            return True if dead else None
        return False if dead and len(edge_arrays(space)[3]) else None
    if examination == "QuasiLiveness":
        _, _, labels, names = edge_arrays(space)
        if unfolded is not None:
            return True if len(np.unique(unfolded.labels(labels))) == \
                unfolded.n_transitions else None
        return True if len(np.unique(labels)) == len(names) else None
    most, _, stable = _token_counts(space, None, unfolded)
    if examination == "OneSafe":
        return False if most > 1 else None
    if examination == "StableMarking":
        return False if not stable else None
    return None


#: The examinations the structure (or a walk) may answer on a stopped search (see
#: :func:`_structural`).
STRUCTURAL = ("StableMarking", "OneSafe", "QuasiLiveness", "Liveness",
              "ReachabilityDeadlock")
#: Transitions not seen firing whose enabling the walks look for at most (QuasiLiveness
#: TRUE): each is a goal tested on every batch of steps.
MAX_QUASI_LIVE_GOALS = 2_000


def _structural(examination: str, structure: Structure, space: Any, clock: Clock,
                unfolded: _Unfolded | None = None) -> tuple[bool, str] | None:
    """What the net's structure, or a random walk, proves of a global property, with the
    technique (None: nothing). A siphon empty at the start stays empty
    (:func:`~tcpn.petrinets.checking.contest.siphons.empty_siphon`): its places make
    StableMarking true. A transition never enabled (it needs a token from that siphon,
    or the state equation proves its enabling marking unreachable; only those not seen
    firing among the states found are asked) makes QuasiLiveness and Liveness false. A
    place no firing changes makes StableMarking true too. The state equation bounding
    every place by one makes OneSafe true (one linear program a place not in the empty
    siphon, and a wide net has tens of thousands). The programs share the structure's
    deadline. On an unfolding (``unfolded``) a coloured transition is dead when all its
    bindings are, a coloured place stable when all its colours lie in the siphon or no
    firing changes their sum, and OneSafe is not answered. A random walk (its path fired
    again by the net's own rule first, :class:`Walks`) that reaches a dead marking makes
    ReachabilityDeadlock true and Liveness false (no transition fires again from there);
    walks that enable every transition not seen firing make QuasiLiveness true."""
    net, empty = structure.net, structure.siphon
    if examination == "ReachabilityDeadlock":
        return (True, "RANDOM_WALK") if _walked_to_deadlock(structure, clock) else None
    if examination in ("QuasiLiveness", "Liveness"):
        fired = np.zeros(len(net.transitions), dtype=bool)
        if len(space) and not isinstance(space, _OutOfMemory):
            fired[np.unique(edge_arrays(space)[2])] = True
        groups = [(int(t),) for t in range(len(fired))] if unfolded is None else [
            tuple(np.flatnonzero(unfolded.owner == c).tolist())
            for c in range(unfolded.n_transitions)]
        unseen = [g for g in groups if not fired[list(g)].any()]
        if any(all(structure.dead(t) for t in g) for g in unseen):
            return False, "STATE_EQUATION"
        if examination == "Liveness":
            return (False, "RANDOM_WALK") if len(groups) and _walked_to_deadlock(
                structure, clock) else None
        if not unseen or len(unseen) > MAX_QUASI_LIVE_GOALS:
            return None
        left = clock.left()
        walks = Walks(net, {str(n): E(F(Fireable(tuple(net.transitions[t] for t in g))))
                            for n, g in enumerate(unseen)},
                      WALK_S if left is None else min(WALK_S, left), WALK_SEED)
        met = all(walks.answer(str(n)) is not None for n in range(len(unseen)))
        return (True, "RANDOM_WALK") if met else None
    if examination == "StableMarking":
        if unfolded is not None:
            stable = _stable_group(net, empty.places, unfolded)
        else:
            stable = bool(empty.places.any()) or stable_place(net) is not None
        return (True, "TOPOLOGICAL") if stable else None
    if unfolded is not None:
        return None
    deadline = structure.equation.deadline
    left = None if deadline is None else max(0.0, deadline - wallclock.perf_counter())
    return (True, "STATE_EQUATION") if one_safe_by_state_equation(
        net, left, empty.places) else None


def _walked_to_deadlock(structure: Structure, clock: Clock) -> bool:
    """Whether a random walk reaches a dead marking of the structure's net (its path
    checked, :class:`Walks`); a walk that met one is kept for the next question."""
    if structure.walked_to_deadlock:
        return True
    left = clock.left()
    found = Walks(structure.net, {"deadlock": E(F(Deadlock()))},
                  WALK_S if left is None else min(WALK_S, left), WALK_SEED
                  ).answer("deadlock") is not None
    structure.walked_to_deadlock = found
    return found


def _stable_group(net: PTNet, siphon: np.ndarray, unfolded: _Unfolded) -> bool:
    """Whether some coloured place of an unfolding keeps its count: all its colours in
    the empty siphon, or no firing changes their sum."""
    index = {p: i for i, p in enumerate(net.places)}
    delta = (net.post - net.pre).tocsc()
    for group in unfolded.places:
        columns = [index[p] for p in group]
        if siphon[columns].all() or (net.reset[:, columns].nnz == 0 and not np.asarray(
                delta[:, columns].sum(axis=1)).any()):
            return True
    return False


def _token_counts(space: AnyStateSpace, clock: Clock | None = None,
                  unfolded: _Unfolded | None = None) -> tuple[int, int, bool]:
    """The most tokens on one place in one state, the most in one state, and whether some
    place holds the same count in every state (on an unfolding, a place is a coloured
    place: the sum over its colours). A P/T space reads its marking matrix; a coloured
    one is read a place at a time (a states x places matrix of a large coloured net
    would not fit: 2 million states of 4,000 places are 64 GB in int64)."""
    if isinstance(space, PTStateSpace) and unfolded is None:
        return space.token_statistics()
    most, stable = 0, False
    total = np.zeros(len(space), dtype=np.int64)
    groups = unfolded.places if unfolded is not None else [(p,) for p in space.net.places]
    for group in groups:
        if clock is not None:
            clock.check()
        column = np.asarray(numeric_values(Tokens(group), space), dtype=np.int64)
        if column.size:
            total += column
            most, stable = max(most, int(column.max())), stable or bool(
                column.min() == column.max())
    return most, int(total.max()) if total.size else 0, stable


def _most_of_one_colour(space: StateSpace, clock: Clock) -> int:
    """The most tokens of one colour on one place over the states of a coloured space:
    per place a table over its interned contents, read at the contents the states hold."""
    from tcpn.petrinets.checking.atoms import columns
    from tcpn.petrinets.statespace.store import timed_content, untimed_content
    store, cols = space.generator.store, columns(space)
    most = 0
    for p in range(len(space.compiled.place_names)):
        clock.check()
        table = np.zeros(len(store.contents[p]), dtype=np.int64)
        for number, key in enumerate(store.contents[p]):
            if key is not None:
                table[number] = max(len(v) for v in timed_content(key).values()) if \
                    store.timed[p] else max(untimed_content(key).values())
        if len(space):
            most = max(most, int(table[cols.field(p)].max()))
    return most


def _live(indptr: np.ndarray, targets: np.ndarray, labels: np.ndarray,
          n_transitions: int) -> bool:
    """Every transition can fire again from every reachable marking: every terminal
    strongly connected component has an edge of every transition inside it."""
    from tcpn.petrinets.statespace.graph import StateGraph
    g = StateGraph(indptr, targets)
    component, _ = g.components(np.ones(g.n, dtype=bool))
    terminal = np.flatnonzero(g.terminal(component))
    inside = component[g.src] == component[g.dst]
    pairs = np.unique(component[g.src[inside]].astype(np.int64) * n_transitions
                      + labels[inside])
    per_component = np.bincount(pairs // n_transitions, minlength=component.max() + 1)
    return bool(np.all(per_component[terminal] == n_transitions))
