"""A verdict's truth value is its answer: ``if check(...)`` runs for ``true`` only, and an
``unknown`` (a budget reached) has none, so it can never pass for a ``true``."""

from __future__ import annotations

import pytest

import tcpn.petrinets
from tcpn.petrinets import check
from tcpn.petrinets.checking.verdicts import Verdict
from tcpn.petrinets.examples import counter, dining_philosophers, left_first_philosophers


def test_check_is_exported_from_the_package():
    assert "check" in tcpn.petrinets.__all__
    assert check is tcpn.petrinets.checking.check.check


def test_a_true_verdict_is_true():
    verdict = check(dining_philosophers(5), "AG !deadlock")
    assert verdict.answer == "true"
    assert bool(verdict) is True
    assert (1 if verdict else 0) == 1


def test_a_false_verdict_is_false():
    verdict = check(left_first_philosophers(5), "AG !deadlock")
    assert verdict.answer == "false"
    assert bool(verdict) is False
    assert (1 if verdict else 0) == 0


def test_an_unknown_verdict_has_no_truth_value_and_says_what_to_read():
    verdict = check(counter(10**9), "AF deadlock", max_states=1000)
    assert verdict.answer == "unknown"
    for use in (bool, lambda v: not v, lambda v: v and True, lambda v: 1 if v else 0):
        with pytest.raises(ValueError) as raised:
            use(verdict)
        message = str(raised.value)
        assert "AF deadlock" in message and "max_states=1000" in message
        assert ".holds" in message and ".answer" in message
    assert verdict.holds is None


def test_the_truth_value_follows_the_answer_alone():
    """Whatever else a verdict carries (an integer value of 0, no states, no formula)."""
    assert bool(Verdict("true", value=0)) is True
    assert bool(Verdict("false", value=7, states=3)) is False
    with pytest.raises(ValueError, match="unknown"):
        bool(Verdict("unknown"))
