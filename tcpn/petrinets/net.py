"""The net as a plain data structure: places, transitions, arcs, declarations, modules.

Build a net from plain Python objects, as in SNAKES; simulation, exploration, drawing and
exchange are functions over this structure that live in their own modules.

>>> from tcpn.petrinets import INT, PetriNet, Place, Transition
>>> net = PetriNet("counter")
>>> net.declare(LIMIT=3)
>>> net.add_place(Place("count", INT, initial=[0]))
>>> net.add_transition(Transition("increment", guard="x < LIMIT"))
>>> net.add_input("count", "increment", "x")
>>> net.add_output("count", "increment", "x + 1")
>>> [a.kind.value for a in net.arcs]
['input', 'output']
"""

from __future__ import annotations

import copy
import enum
import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from tcpn.errors import InputError
from tcpn.limits import check_limit
from tcpn.petrinets.colours import UNIT, ColourSet
from tcpn.petrinets.distributions import Distribution
from tcpn.petrinets.inscriptions import Inscription

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "P_HIGH",
    "P_LOW",
    "P_NORMAL",
    "Arc",
    "ArcKind",
    "ModuleInstance",
    "PetriNet",
    "Place",
    "Token",
    "Transition",
]

#: CPN Tools' standard priorities: a lower number is more urgent.
P_HIGH, P_NORMAL, P_LOW = 100, 1000, 10000
#: The largest priority magnitude: the engines order priorities as doubles, which hold
#: every integer up to 2**53 exactly (beyond it two priorities may compare equal, and
#: past about 1e308 the conversion overflows).
PRIORITY_BOUND = 2**53

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.']*$")
#: places and transitions may also use '-', as PNML ids do (``P-start_1``)
NODE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.'-]*$")

Delay = float | int | str | Distribution | None


class Token(NamedTuple):
    """A token with a timestamp, for initial markings of timed places."""

    value: Any
    time: float = 0.0


def _check_name(kind: str, name: str, pattern: re.Pattern[str] = _NAME) -> None:
    if not isinstance(name, str) or not pattern.fullmatch(name):
        extra = ", '-'" if pattern is NODE_NAME else ""
        raise InputError(
            f"{kind} name {name!r} is not valid: use letters, digits, '_'{extra} and '.', "
            "starting with a letter or '_'"
        )


def _check_priority(priority: int, where: str) -> None:
    """Refuse a priority that is not an int or that the engines cannot order exactly.

    The simulators compare priorities as doubles; an int past :data:`PRIORITY_BOUND` would
    lose its order, or overflow the conversion in the middle of a run.
    """
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise InputError(f"{where}: priority must be an int, got {priority!r}")
    if abs(priority) > PRIORITY_BOUND:
        digits = len(str(abs(priority)))
        raise InputError(f"{where}: priority of {digits} digits is outside "
                         f"[-2**53, 2**53], the range the simulator orders exactly")


def _check_delay(delay: Delay, where: str) -> None:
    if delay is None or isinstance(delay, str | Distribution):
        if isinstance(delay, str):
            Inscription.parse(delay, where)
        return
    if isinstance(delay, bool) or not isinstance(delay, int | float):
        raise InputError(f"{where}: a delay must be a number, an expression or a Distribution")
    if not math.isfinite(delay) or delay < 0:
        raise InputError(f"{where}: delay {delay!r} must be finite and >= 0")


class MarkingDraw(Protocol):
    """An initial marking drawn at random when a run starts
    (:class:`~tcpn.petrinets.engine.initial_draws.InitialDraw`)."""

    @property
    def text(self) -> str:
        """What is drawn, in CPN ML (``discrete(0, 99)``)."""
        ...

    def draw(self, place: Place, rng: np.random.Generator) -> tuple[Token, ...]:
        """The tokens of one draw from ``rng``."""
        ...


@dataclass
class Place:
    """A place with its colour set and initial marking.

    ``initial`` lists token values (repeat a value for several tokens) or
    :class:`Token` objects carrying timestamps for timed places. ``port`` marks the
    place as a port of a module: ``"in"``, ``"out"`` or ``"io"``. ``initial_draw``, in
    place of ``initial``, is an initial marking drawn at random when a run starts (CPN
    Tools evaluates ``discrete(0, 99)`` in an initial marking once, at initialisation):
    each simulation draws it from its seed (:mod:`tcpn.petrinets.engine.initial_draws`).
    """

    name: str
    colour: ColourSet = UNIT
    initial: Iterable[Any] = ()
    port: str | None = None
    module: str = ""
    initial_draw: MarkingDraw | None = None

    def __post_init__(self) -> None:
        _check_name("place", self.name, NODE_NAME)
        if not isinstance(self.colour, ColourSet):
            raise InputError(f"place {self.name}: colour must be a ColourSet, got {self.colour!r}")
        if self.port not in (None, "in", "out", "io"):
            raise InputError(f"place {self.name}: port must be 'in', 'out' or 'io'")
        tokens = []
        for item in self.initial:
            token = item if isinstance(item, Token) else Token(item, 0.0)
            if not self.colour.contains(token.value):
                raise InputError(
                    f"place {self.name}: initial token {token.value!r} is not of colour set "
                    f"{self.colour.describe()}"
                )
            if token.time != 0.0 and not self.colour.is_timed:
                raise InputError(
                    f"place {self.name}: token {token.value!r}@{token.time} has a timestamp "
                    "but the colour set is untimed"
                )
            if not math.isfinite(token.time):
                raise InputError(f"place {self.name}: token timestamp {token.time!r} not finite")
            tokens.append(token)
        self.initial = tuple(tokens)
        if self.initial_draw is not None and self.initial:
            raise InputError(f"place {self.name}: initial tokens and an initial_draw: give "
                             "one of them")

    @property
    def initial_tokens(self) -> tuple[Token, ...]:
        """The initial marking as timestamped tokens."""
        return tuple(self.initial)


@dataclass
class Transition:
    """A transition: guard, delay (CPN Tools' ``@+``), priority and optional code action.

    ``guard`` is a Python boolean expression over the transition's variables and the
    net's declarations. ``delay`` is a number, an expression over the binding, or a
    :class:`~tcpn.petrinets.distributions.Distribution`; it is added to the timestamp of
    every token put on a timed place. ``priority`` follows CPN Tools: lower is more urgent.
    ``action`` is a Python function called at firing with the variables it names as keyword
    arguments (plus ``now`` and ``rng`` if it asks for them); it returns a mapping giving a
    value to each name in ``outputs``, which output arcs may then use.
    ``free_variables`` gives the colour sets of variables that no input arc binds (CPN
    Tools' free variables, PNML symmetric nets' variables used only on output arcs): the
    transition has one binding per member of each, so the colour set must be small and
    finite.
    """

    name: str
    guard: str | None = None
    delay: Delay = None
    priority: int = P_NORMAL
    action: Callable[..., Mapping[str, Any]] | None = None
    outputs: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    module: str = ""
    free_variables: dict[str, ColourSet] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_name("transition", self.name, NODE_NAME)
        where = f"transition {self.name}"
        for variable, colour in self.free_variables.items():
            if not variable.isidentifier() or not isinstance(colour, ColourSet) or \
                    colour.members() is None:
                raise InputError(f"{where}: free variable {variable!r} needs a small finite "
                                 f"colour set, got {colour!r}")
        if self.guard is not None:
            Inscription.parse(self.guard, f"guard of {where}")
        _check_delay(self.delay, f"delay of {where}")
        _check_priority(self.priority, where)
        self.outputs = tuple(self.outputs)
        if self.outputs and self.action is None:
            raise InputError(f"{where}: outputs {self.outputs} given without an action")
        if self.action is not None:
            if not callable(self.action):
                raise InputError(f"{where}: action must be callable")
            for name in self.outputs:
                _check_name(f"{where} action output", name)

    @property
    def action_inputs(self) -> tuple[str, ...]:
        """The names the code action reads (its parameter names)."""
        if self.action is None:
            return ()
        return tuple(inspect.signature(self.action).parameters)


class ArcKind(enum.Enum):
    """What an arc does when its transition fires."""

    INPUT = "input"  # consume the tokens the inscription denotes
    OUTPUT = "output"  # produce them
    READ = "read"  # require them (ready), leave them in place (CPN Tools' test arc)
    INHIBITOR = "inhibitor"  # require that they are absent
    RESET = "reset"  # remove every token of the place


@dataclass
class Arc:
    """An arc between a place and a transition.

    ``inscription`` denotes one token value; ``count`` (an int or an expression) says how
    many such tokens; ``when`` (output arcs) is a condition under which the tokens are
    produced at all (CPN ML ``if c then 1`x else empty``); ``delay`` (output arcs to timed
    places) is added to the transition delay (CPN ML ``x@+d``). An inhibitor arc without
    inscription requires the place to be empty; with one, it requires fewer than ``count``
    tokens of that value. A reset arc has no inscription.

    With ``multiset`` (input, read and output arcs) the inscription denotes a whole
    multiset computed from the binding, as CPN ML's ``'a ms = 'a list``: a list or tuple
    of token values (a value repeated for several tokens) or a dict ``value -> count``;
    ``[]`` denotes no token. An input or read arc then needs every one of those tokens
    (its variables bound by other arcs or the guard: it binds none), an output arc puts
    them all, each with the arc's delay. Its multiplicities come from the value, so its
    ``count`` stays 1.
    """

    kind: ArcKind
    place: str
    transition: str
    inscription: str | None = None
    count: int | str = 1
    when: str | None = None
    delay: Delay = None
    multiset: bool = False

    @property
    def where(self) -> str:
        """How error messages name this arc."""
        arrow = f"{self.transition}->{self.place}" if self.kind is ArcKind.OUTPUT else (
            f"{self.place}->{self.transition}"
        )
        return f"{self.kind.value} arc {arrow}"

    def __post_init__(self) -> None:
        needs_inscription = self.kind in (ArcKind.INPUT, ArcKind.OUTPUT, ArcKind.READ)
        if needs_inscription and self.inscription is None:
            raise InputError(f"{self.where}: needs an inscription")
        if self.kind is ArcKind.RESET and self.inscription is not None:
            raise InputError(f"{self.where}: a reset arc takes no inscription")
        if self.inscription is not None:
            Inscription.parse(self.inscription, self.where)
        if isinstance(self.count, str):
            Inscription.parse(self.count, f"count of {self.where}")
        elif isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise InputError(f"{self.where}: count must be an int >= 1 or an expression")
        else:
            # a timed place keeps one timestamp per token, and the C engine counts in 64
            # bits: a firing moves no more tokens on one arc than a place may start with
            check_limit("marking_tokens", self.count, f"count of {self.where}")
        if self.when is not None:
            if self.kind is not ArcKind.OUTPUT:
                raise InputError(f"{self.where}: only output arcs take a 'when' condition")
            Inscription.parse(self.when, f"condition of {self.where}")
        if self.delay is not None and self.kind is not ArcKind.OUTPUT:
            raise InputError(f"{self.where}: only output arcs take a delay")
        _check_delay(self.delay, f"delay of {self.where}")
        if self.multiset:
            if not needs_inscription:
                raise InputError(f"{self.where}: only input, read and output arcs denote a "
                                 "multiset")
            if self.count != 1:
                raise InputError(f"{self.where}: a multiset arc takes its multiplicities from "
                                 f"its value; count {self.count!r} must be 1")


@dataclass(frozen=True)
class ModuleInstance:
    """A record of one module instantiation, kept for hierarchical export and drawing."""

    name: str
    module: str
    ports: tuple[tuple[str, str], ...]
    params: tuple[tuple[str, Any], ...]


class PetriNet:
    """A timed coloured Petri net: the plain structure every engine takes as input."""

    def __init__(self, name: str = "net") -> None:
        _check_name("net", name)
        self.name = name
        self.places: dict[str, Place] = {}
        self.transitions: dict[str, Transition] = {}
        self.arcs: list[Arc] = []
        self.declarations: dict[str, Any] = {}
        self.modules: list[ModuleInstance] = []

    def __repr__(self) -> str:
        return (
            f"<PetriNet {self.name!r}: {len(self.places)} places, "
            f"{len(self.transitions)} transitions, {len(self.arcs)} arcs>"
        )

    # -- building -------------------------------------------------------------------------
    def declare(self, **values: Any) -> None:
        """Declare constants and functions usable in every inscription of the net."""
        for name, value in values.items():
            _check_name("declaration", name)
            if name in self.places or name in self.transitions:
                raise InputError(f"declaration {name!r} clashes with a place or transition name")
            self.declarations[name] = value

    def add_place(self, place: Place) -> None:
        """Add ``place``; names must be unique among places and transitions."""
        self._check_new_node(place.name)
        self.places[place.name] = place

    def add_transition(self, transition: Transition) -> None:
        """Add ``transition``; names must be unique among places and transitions."""
        self._check_new_node(transition.name)
        self.transitions[transition.name] = transition

    def _check_new_node(self, name: str) -> None:
        if name in self.places:
            raise InputError(f"duplicate name {name!r}: a place of that name exists")
        if name in self.transitions:
            raise InputError(f"duplicate name {name!r}: a transition of that name exists")

    def add_arc(self, arc: Arc) -> None:
        """Add an arc; both ends must exist."""
        if arc.place not in self.places:
            raise InputError(f"{arc.where}: unknown place {arc.place!r}")
        if arc.transition not in self.transitions:
            raise InputError(f"{arc.where}: unknown transition {arc.transition!r}")
        colour = self.places[arc.place].colour
        if arc.kind is ArcKind.OUTPUT and arc.delay is not None and not colour.is_timed:
            raise InputError(
                f"{arc.where}: has a delay but place {arc.place} is untimed "
                f"(colour set {colour.describe()})"
            )
        self.arcs.append(arc)

    def add_input(self, place: str, transition: str, inscription: str,
                  count: int | str = 1, multiset: bool = False) -> None:
        """Consume ``count`` tokens denoted by ``inscription`` from ``place`` (with
        ``multiset``: every token of the multiset it denotes, see :class:`Arc`)."""
        self.add_arc(Arc(ArcKind.INPUT, place, transition, inscription, count,
                         multiset=multiset))

    def add_output(self, place: str, transition: str, inscription: str, count: int | str = 1,
                   when: str | None = None, delay: Delay = None,
                   multiset: bool = False) -> None:
        """Produce ``count`` tokens ``inscription`` on ``place`` (if ``when`` holds; with
        ``multiset``: every token of the multiset it denotes).

        >>> from tcpn.petrinets import STRING
        >>> net = PetriNet("menu")
        >>> net.add_place(Place("items", STRING))
        >>> net.add_transition(Transition("order"))
        >>> net.add_output("items", "order", "['fries', 'cola', 'fries']", multiset=True)
        >>> net.arcs[0].multiset
        True
        """
        self.add_arc(
            Arc(ArcKind.OUTPUT, place, transition, inscription, count, when, delay, multiset)
        )

    def add_read(self, place: str, transition: str, inscription: str,
                 count: int | str = 1, multiset: bool = False) -> None:
        """Require ready tokens on ``place`` without consuming them (a test arc)."""
        self.add_arc(Arc(ArcKind.READ, place, transition, inscription, count,
                         multiset=multiset))

    def add_inhibitor(self, place: str, transition: str, inscription: str | None = None,
                      count: int | str = 1) -> None:
        """Disable ``transition`` while ``place`` holds the tokens (or any token)."""
        self.add_arc(Arc(ArcKind.INHIBITOR, place, transition, inscription, count))

    def add_reset(self, place: str, transition: str) -> None:
        """Empty ``place`` whenever ``transition`` fires."""
        self.add_arc(Arc(ArcKind.RESET, place, transition))

    # -- modules --------------------------------------------------------------------------
    def add_module(self, module: PetriNet, name: str, ports: Mapping[str, str] | None = None,
                   params: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Instantiate ``module`` inside this net under the prefix ``name``.

        ``ports`` maps each port place of the module to a place of this net: the two are
        fused (they must have the same colour set). Other module places and all its
        transitions are copied as ``name.element``. ``params`` override the module's
        declarations for this instance only. Returns the map from module element names to
        their names in this net.
        """
        _check_name("module instance", name)
        ports = dict(ports or {})
        params = dict(params or {})
        for key in params:
            if key not in module.declarations:
                raise InputError(
                    f"module {module.name} instance {name}: parameter {key!r} is not one of "
                    f"its declarations {sorted(module.declarations)}"
                )
        for sub_place, outer_place in ports.items():
            if sub_place not in module.places:
                raise InputError(f"module {module.name} instance {name}: no place {sub_place!r}")
            if module.places[sub_place].port is None:
                raise InputError(
                    f"module {module.name} instance {name}: place {sub_place!r} is not a port"
                )
            if outer_place not in self.places:
                raise InputError(
                    f"module {module.name} instance {name}: socket place {outer_place!r} "
                    "does not exist in the enclosing net"
                )
            inner, outer = module.places[sub_place].colour, self.places[outer_place].colour
            if inner != outer:
                raise InputError(
                    f"module {module.name} instance {name}: port {sub_place} has colour set "
                    f"{inner.describe()} but socket {outer_place} has {outer.describe()}"
                )
        scope = {**module.declarations, **params}
        renamed: dict[str, str] = {}
        for place in module.places.values():
            if place.name in ports:
                renamed[place.name] = ports[place.name]
                continue
            twin = copy.copy(place)
            twin.name = f"{name}.{place.name}"
            twin.port = None
            twin.module = f"{name}.{place.module}" if place.module else name
            self.add_place(twin)
            renamed[place.name] = twin.name
        for transition in module.transitions.values():
            twin_t = copy.copy(transition)
            twin_t.name = f"{name}.{transition.name}"
            twin_t.params = {**scope, **transition.params}
            twin_t.module = f"{name}.{transition.module}" if transition.module else name
            self.add_transition(twin_t)
            renamed[transition.name] = twin_t.name
        for arc in module.arcs:
            twin_a = copy.copy(arc)
            twin_a.place = renamed[arc.place]
            twin_a.transition = renamed[arc.transition]
            self.arcs.append(twin_a)
        self.modules.append(
            ModuleInstance(name, module.name, tuple(ports.items()), tuple(params.items()))
        )
        return renamed

    # -- queries --------------------------------------------------------------------------
    def arcs_of(self, transition: str) -> list[Arc]:
        """The arcs attached to ``transition``, in the order they were added."""
        return [a for a in self.arcs if a.transition == transition]

    @property
    def is_timed(self) -> bool:
        """Whether any place carries timestamps."""
        return any(p.colour.is_timed for p in self.places.values())

    def scope_of(self, transition: str) -> dict[str, Any]:
        """The declarations visible to ``transition``'s inscriptions."""
        return {**self.declarations, **self.transitions[transition].params}

    def _repr_svg_(self) -> str:
        # a composed net draws by its modules (legible); module_view(net).expand(...) opens
        # a box, drawing.to_svg(net) draws every place
        if self.modules:
            from tcpn.petrinets.drawing.modules import module_view

            return module_view(self).svg()
        from tcpn.petrinets.drawing.dot import to_svg

        return to_svg(self)
