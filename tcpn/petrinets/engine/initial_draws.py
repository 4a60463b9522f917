"""Initial markings drawn at random: each run draws them once, from its seed.

CPN Tools evaluates a place's initial marking once, when the simulator initialises the
net: ``discrete(0, 99)``, ``uniform(1.0, 2.0)`` or ``CS.ran()`` there gives one token
drawn at random, a new one at each initialisation. tcpn keeps such a marking as an
:class:`InitialDraw` on the place (``Place.initial_draw``) and draws it with the same
random functions as arc inscriptions (:class:`~tcpn.petrinets.engine.compiler.RandomDraws`)
from a stream of the run's seed set apart for it (:func:`initial_stream`): the same seed
gives the same tokens, whatever engine runs the net, and the draws leave the run's own
stream (the choice among bindings, the inscriptions' draws) as it would be without them.

:class:`~tcpn.petrinets.engine.simulator.Simulator` draws them (:func:`fix_initial_draws`)
before it compiles the net. Anything else that starts from the initial marking (a state
space, a model checker) refuses a net whose marking is still to be drawn, naming the
place: fix one draw first with :func:`fix_initial_draws` and say so.

>>> from tcpn.petrinets import INT, PetriNet, Place
>>> net = PetriNet("roll")
>>> net.add_place(Place("die", INT, initial_draw=InitialDraw(
...     "discrete(1, 6)", (DrawnTerm("discrete(1, 6)"),), {})))
>>> fix_initial_draws(net, seed=1).places["die"].initial_tokens
(Token(value=4, time=0.0),)
>>> fix_initial_draws(net, seed=1).places["die"].initial == \\
...     fix_initial_draws(net, seed=1).places["die"].initial
True
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcpn.errors import InputError
from tcpn.limits import limit_problem
from tcpn.petrinets.colours import ColourSet, UnitSet
from tcpn.petrinets.engine.compiler import RandomDraws
from tcpn.petrinets.inscriptions import RANDOM_FUNCTIONS
from tcpn.petrinets.net import PetriNet, Place, Token
from tcpn.petrinets.restricted import evaluation_budget, restricted_namespace

__all__ = ["DrawnTerm", "InitialDraw", "drawn_places", "fix_initial_draws", "initial_stream",
           "term_tokens", "undrawn_error"]

#: Set apart in the run's seed for the initial draws (a spawn key no run stream uses).
_INITIAL_STREAM_KEY = 0x1D1A1


@dataclass(frozen=True)
class DrawnTerm:
    """One term ``count`` ` ``value`` @ ``stamp`` of an initial marking, as Python
    expressions over the net's declarations and CPN Tools' random functions (``count``
    None: written without one; ``stamp`` None: the marking's own)."""

    value: str
    count: str | None = None
    stamp: str | None = None


@dataclass(frozen=True)
class InitialDraw:
    """An initial marking drawn when a run starts: ``text`` in CPN ML (as CPN Tools
    writes it, what the export writes back), its
    ``terms``, the time ``base`` of tokens without a stamp, the net's declarations as
    ``scope``."""

    text: str
    terms: tuple[DrawnTerm, ...]
    scope: Mapping[str, Any] = dataclasses.field(compare=False, repr=False)
    base: float = 0.0

    def restricted_source(self) -> list[tuple[str, tuple[str, ...]]]:
        """Each expression it evaluates (:func:`~tcpn.petrinets.restricted.check_net`)."""
        return [(source, tuple(RANDOM_FUNCTIONS)) for term in self.terms
                for source in (term.value, term.count, term.stamp) if source is not None]

    def draw(self, place: Place, rng: np.random.Generator) -> tuple[Token, ...]:
        """The tokens of one draw from ``rng``; an :class:`InputError` names the place
        when a term evaluates to what the place can't hold."""
        where = f"place {place.name}: initial marking {self.text!r}"
        draws = RandomDraws(rng)
        namespace = restricted_namespace(self.scope)
        namespace.update({name: getattr(draws, name) for name in RANDOM_FUNCTIONS})
        tokens: list[Token] = []
        with evaluation_budget(where):
            for term in self.terms:
                try:
                    value = eval(term.value, namespace)  # checked: restricted_source
                    count = None if term.count is None else eval(term.count, namespace)
                    stamp = self.base if term.stamp is None else float(
                        eval(term.stamp, namespace))
                except InputError:
                    raise
                except Exception as exc:  # the ML evaluated to something Python can't
                    raise InputError(f"{where}: drawing it failed: {type(exc).__name__}: "
                                     f"{exc}") from None
                tokens.extend(term_tokens(place.colour, value, count, stamp, where,
                                          len(tokens)))
        return tuple(tokens)


def term_tokens(colour: ColourSet, value: Any, count: Any, stamp: float, where: str,
                before: int = 0) -> list[Token]:
    """The tokens of one term of an initial marking on a place of ``colour``: ``count``
    (None: written without one) times ``value`` stamped ``stamp``; a value that is a
    list of the colour set's values (CPN ML's multisets are lists) gives each of them.
    ``before`` tokens came from the terms before it (the bound ``marking_tokens`` is on
    the place's marking). Raises :class:`InputError` naming ``where``.

    >>> from tcpn.petrinets import UNIT, INT
    >>> term_tokens(UNIT, 3, None, 0.0, "p")
    [Token(value=(), time=0.0), Token(value=(), time=0.0), Token(value=(), time=0.0)]
    >>> term_tokens(INT, (1, 2), 2, 0.0, "p")
    [Token(value=1, time=0.0), Token(value=1, time=0.0), Token(value=2, time=0.0), \
Token(value=2, time=0.0)]
    """
    written = count is not None
    count = 1 if count is None else count
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise InputError(f"{where}: count {count!r} is not a natural number")
    values = [value]
    if isinstance(value, tuple) and not colour.contains(value) and all(
            colour.contains(v) for v in value):
        values = list(value)
    elif isinstance(colour, UnitSet) and isinstance(value, int) and not written:
        count, values = value, [()]  # CPN Tools reads a bare N on a UNIT place as N`()
    if stamp != 0 and not colour.is_timed:
        raise InputError(f"{where}: a timestamp on an untimed place")
    problem = limit_problem("marking_tokens", before + count * len(values))
    if problem is not None:
        raise InputError(f"{where}: {problem}")
    return [Token(v, stamp) for v in values for _ in range(count)]


def initial_stream(seed: int | np.random.SeedSequence | None) -> np.random.Generator:
    """The generator of a run's initial draws: a stream of ``seed`` that no other draw
    of the run uses."""
    sequence = seed if isinstance(seed, np.random.SeedSequence) else \
        np.random.SeedSequence(seed)
    return np.random.default_rng(np.random.SeedSequence(
        sequence.entropy, spawn_key=(*sequence.spawn_key, _INITIAL_STREAM_KEY)))


def drawn_places(net: PetriNet) -> list[str]:
    """The places of ``net`` whose initial marking is still to be drawn."""
    return [name for name, place in net.places.items() if place.initial_draw is not None]


def fix_initial_draws(net: PetriNet, seed: int | np.random.SeedSequence | None) -> PetriNet:
    """``net`` with each initial marking drawn at random replaced by one draw from
    ``seed`` (places in the net's order); ``net`` itself when it draws none."""
    drawn = drawn_places(net)
    if not drawn:
        return net
    rng = initial_stream(seed)
    fixed = copy.copy(net)
    fixed.places = dict(net.places)
    for name in drawn:
        place = net.places[name]
        assert place.initial_draw is not None
        fixed.places[name] = dataclasses.replace(
            place, initial=place.initial_draw.draw(place, rng), initial_draw=None)
    return fixed


def undrawn_error(net: PetriNet, what: str) -> InputError | None:
    """The error for ``what`` (a state space, say) started on ``net`` while an initial
    marking is still to be drawn, naming the places; None when none is."""
    drawn = drawn_places(net)
    if not drawn:
        return None
    shown = ", ".join(f"{name} ({net.places[name].initial_draw.text})"  # type: ignore[union-attr]
                      for name in drawn[:5]) + (", ..." if len(drawn) > 5 else "")
    return InputError(f"{what}: the initial marking of place(s) {shown} is drawn at random "
                      "when a run starts (CPN Tools draws it at initialisation); a simulation "
                      "draws it from its seed, anything else needs one draw fixed first: "
                      "tcpn.petrinets.engine.initial_draws.fix_initial_draws(net, seed) "
                      "(tcpn check --draw-seed N)")
