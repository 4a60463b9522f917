"""Hostile numbers in a net: priorities, arc counts, delays and work it cannot hold.

A priority of 400 digits overflowed the engines' doubles in the middle of a run (an internal
error); an arc count of 10^11 on a timed place built one timestamp per token until the
machine ran out; a count of 2^64 + 1 wrapped to 1 in the C engine (a silent wrong answer).
Each is refused where the net is built, naming the transition or the arc.
"""

from __future__ import annotations

import pytest

from tcpn.errors import InputError
from tcpn.limits import Limits, using_limits
from tcpn.petrinets import INT, PetriNet, Place, Transition, simulate
from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.examples import counter
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.net import PRIORITY_BOUND


def _emitter(count: int | str, *, timed: bool = True, multiset: bool = False) -> PetriNet:
    """One transition firing once, putting ``count`` tokens (or a multiset) on ``out``."""
    net = PetriNet("emitter")
    net.add_place(Place("go", INT, initial=[1]))
    net.add_place(Place("out", INT.timed() if timed else INT))
    net.add_transition(Transition("emit"))
    net.add_input("go", "emit", "n")
    if multiset:
        net.add_output("out", "emit", f"{{n: {count}}}", multiset=True)
    else:
        net.add_output("out", "emit", "n", count=count)
    return net


@pytest.mark.parametrize("priority", [PRIORITY_BOUND + 1, -PRIORITY_BOUND - 1, 10 ** 400])
def test_a_priority_past_what_the_engines_order_is_refused_naming_the_transition(priority):
    with pytest.raises(InputError, match=r"transition t: priority of \d+ digits is outside"):
        Transition("t", priority=priority)


def test_the_largest_exact_priority_still_builds():
    assert Transition("t", priority=-PRIORITY_BOUND).priority == -PRIORITY_BOUND


@pytest.mark.parametrize("count", [10 ** 11, 2 ** 64 + 1])
@pytest.mark.parametrize("timed", [True, False])
def test_a_constant_count_past_the_limit_is_refused_naming_the_arc(count, timed):
    with pytest.raises(InputError, match=r"count of output arc emit->out: .* over the limit "
                                         r"marking_tokens"):
        _emitter(count, timed=timed)


def test_a_raised_limit_admits_a_larger_count():
    with using_limits(marking_tokens=20):
        with pytest.raises(InputError, match="marking_tokens = 20"):
            _emitter(21)
        assert len(simulate(_emitter(20), seed=0).marking["out"]) == 20


@pytest.mark.parametrize("multiset", [False, True])
def test_a_computed_count_past_the_limit_stops_the_run_naming_the_arc(multiset):
    net = _emitter("10 ** 11", multiset=multiset)
    with pytest.raises(FiringError, match=r"output arc emit->out.*marking_tokens"):
        simulate(net, seed=0)


def _cpn_with(old: str, new: str) -> str:
    text = to_cpn(counter(3), layout="grid")
    assert old in text
    return text.replace(old, new, 1)


def test_a_cpn_arc_of_a_hundred_billion_tokens_leaves_its_transition_out_naming_the_arc():
    imported = read_cpn(_cpn_with(">x + 1</text>", ">100000000000`(x + 1)</text>"))
    assert "increment" not in imported.net.transitions
    assert "marking_tokens" in str(imported.report)


def test_a_cpn_priority_of_400_digits_leaves_its_transition_out_naming_it():
    empty = '<text tool="CPN Tools" version="4.0.1" />\n        </priority>'
    imported = read_cpn(_cpn_with(empty, f"<text>{'9' * 400}</text></priority>"))
    assert "increment" not in imported.net.transitions
    assert "transition increment: priority of 400 digits" in str(imported.report)


def test_one_evaluation_is_allowed_no_more_work_than_one_loop():
    """A call of a CPN ML function costs more than a loop's turn (``ack 4 2`` in an arc's
    delay did 10^6 calls in 40 s): its default budget, once 2 x 10^7 (13 minutes of one
    firing), is no larger than ``while_iterations``."""
    defaults = Limits()
    assert defaults.evaluation_steps <= defaults.while_iterations


def test_a_cpn_delay_on_an_arc_to_an_untimed_place_leaves_its_transition_out():
    """It ended the whole import with a message naming neither the file nor the arc's id
    ("output arc increment->count: has a delay but place count is untimed")."""
    imported = read_cpn(_cpn_with(">x + 1</text>", ">(x + 1)@+5</text>"))
    assert "increment" not in imported.net.transitions
    assert "a delay (@+) on an arc to place 'count'" in str(imported.report)
