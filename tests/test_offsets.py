"""Offset groups: unbounded counters kept relative to their smallest number."""

from __future__ import annotations

import pytest

from tcpn.errors import InputError
from tcpn.petrinets import PetriNet, Place, explore
from tcpn.petrinets import Transition as T
from tcpn.petrinets.colours import INT
from tcpn.petrinets.statespace.offsets import OffsetField, OffsetGroup

NUMBER = OffsetField(numbers=lambda v: (v,), shift=lambda v, d: v + d)


def chase(guard: str = "True") -> PetriNet:
    """Two counters: ``lead`` runs at most 2 ahead of ``tail``; neither ever stops."""
    net = PetriNet("chase")
    net.add_place(Place("lead", INT, initial=[0]))
    net.add_place(Place("tail", INT, initial=[0]))
    net.add_transition(T("step", guard=f"a - b < 2 and {guard}"))
    net.add_input("lead", "step", "a")
    net.add_read("tail", "step", "b")
    net.add_output("lead", "step", "a + 1")
    net.add_transition(T("catch", guard="b < a"))
    net.add_input("tail", "catch", "b")
    net.add_read("lead", "catch", "a")
    net.add_output("tail", "catch", "b + 1")
    return net


GROUP = OffsetGroup("counters", {"lead": NUMBER, "tail": NUMBER})


def test_without_offsets_the_space_never_closes() -> None:
    space = explore(chase(), max_states=50)
    assert not space.complete


def test_offsets_close_the_space_with_the_states_counted_by_hand() -> None:
    # the lead is 0, 1 or 2 ahead of the tail: three states, each step one of them
    space = explore(chase(), offsets=[GROUP], shift_checks=None)
    assert space.complete and len(space) == 3
    gaps = sorted(space.marking(s)["lead"][0].value - space.marking(s)["tail"][0].value
                  for s in range(len(space)))
    assert gaps == [0, 1, 2]
    assert {space.marking(s)["tail"][0].value for s in range(len(space))} == {0}


def test_a_counter_compared_with_a_constant_is_refused_naming_it() -> None:
    with pytest.raises(InputError, match=r"offset groups \(counters\): transition step"):
        explore(chase(guard="a < 50"), offsets=[GROUP])


def test_a_group_naming_a_missing_place_is_refused() -> None:
    with pytest.raises(InputError, match="no place 'nope'"):
        explore(chase(), offsets=[OffsetGroup("g", {"nope": NUMBER})])
