"""Statistical checking: probabilities of time-bounded properties from simulated runs,
against probabilities worked out by hand on the stop-and-wait net."""

from __future__ import annotations

import math

import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.petrinets import INT, PetriNet, Place, Transition
from tcpn.petrinets.checking.formulas import AF, FWithin, GWithin, fireable, tokens
from tcpn.petrinets.checking.statistical import estimate, probability_at_least
from tcpn.petrinets.examples import dining_philosophers, stop_and_wait

# Stop-and-wait, delay 1, timer 3, any number of losses. Every choice the simulator makes
# before time 3 is between two enabled bindings (deliver or lose the segment at 1, receive
# or lose the ACK at 2, deliver or lose segment 2 at 3), each taken with probability 1/2:
SECOND_DELIVERY_BY_3 = 1 / 8  # three fair choices in a row
NOTHING_DELIVERED_BY_2_5 = 1 / 2  # the first segment lost at 1 (the timer resends at 3)


@pytest.fixture(scope="module")
def net() -> PetriNet:
    return stop_and_wait()


@pytest.mark.parametrize("formula, exact", [
    (FWithin(tokens("delivered") >= 2, 3.0), SECOND_DELIVERY_BY_3),
    (GWithin(tokens("delivered") <= 0, 2.5), NOTHING_DELIVERED_BY_2_5),
])
def test_estimates_cover_the_probability_worked_by_hand(net, formula, exact):
    found = estimate(net, formula, runs=3000, confidence=0.999, seed=7)
    assert found.runs == 3000 and found.undecided == 0
    assert found.low <= exact <= found.high
    assert found.high - found.low < 0.07  # narrow enough to tell 1/8 from 1/4 or 1/16


def test_the_bound_includes_its_instant_and_nothing_after(net):
    assert estimate(net, FWithin(tokens("delivered") >= 2, 2.999), runs=300).satisfied == 0
    assert estimate(net, FWithin(tokens("delivered") >= 2, 3.0), runs=300).satisfied > 0
    # the initial marking counts: F<=0 of what holds at the start
    assert estimate(net, FWithin(tokens("delivered") <= 0, 0.0), runs=50).satisfied == 50


def test_the_sequential_test_decides_either_way_and_extends_the_fixed_runs(net):
    formula = AF(tokens("delivered") >= 2, within_s=3.0)
    above = probability_at_least(net, formula, 0.05, alpha=0.01, beta=0.01, seed=3)
    below = probability_at_least(net, formula, 0.25, alpha=0.01, beta=0.01, seed=3)
    assert (above.answer, below.answer) == ("TRUE", "FALSE")
    assert above.estimate.runs < 1000 and below.estimate.runs < 1000
    # run i is the same run in a test and in an estimate of the same seed
    again = estimate(net, formula, runs=below.estimate.runs, seed=3)
    assert again.satisfied == below.estimate.satisfied
    capped = probability_at_least(net, formula, 0.125, max_runs=40, seed=3)
    assert capped.answer == "UNKNOWN" and capped.estimate.runs == 40
    verdict = below.to_verdict()
    assert verdict.answer == "false" and verdict.technique == ("STATISTICAL", "SPRT")
    assert verdict.formula == "P>=0.25 [F<=3.0 tokens(delivered) >= 2]"


def test_the_same_seed_gives_the_same_runs(net):
    formula = FWithin(tokens("delivered") >= 1, 1.0)
    first, second = (estimate(net, formula, runs=200, seed=11) for _ in range(2))
    assert first == second
    assert estimate(net, formula, runs=200, seed=12) != first


def test_a_run_that_lets_no_time_pass_is_undecided_not_a_failure():
    spin = PetriNet("spin")
    spin.add_place(Place("p", INT.timed(), initial=[1]))
    spin.add_place(Place("q", INT.timed()))
    spin.add_transition(Transition("loop"))
    spin.add_input("p", "loop", "n")
    spin.add_output("p", "loop", "n")
    found = estimate(spin, FWithin(tokens("q") >= 1, 1.0), runs=5, max_firings=50)
    assert (found.undecided, found.satisfied) == (5, 0)
    assert math.isnan(found.probability) and (found.low, found.high) == (0.0, 1.0)
    assert "5 undecided" in str(found)


def test_what_a_statistical_check_cannot_read_is_refused_by_name(net):
    with pytest.raises(InputError, match="time bound needs a timed net"):
        estimate(dining_philosophers(3), FWithin(tokens("eat0") >= 1, 1.0), runs=5)
    with pytest.raises(InputError, match="Fireable"):
        estimate(net, FWithin(fireable("deliver"), 1.0), runs=5)
    with pytest.raises(InputError, match="one time-bounded path formula"):
        estimate(net, tokens("delivered") >= 1, runs=5)
    with pytest.raises(InputError, match="threshold"):
        probability_at_least(net, FWithin(tokens("delivered") >= 1, 1.0), 1.5)
    with pytest.raises(InputError, match="indifference"):
        probability_at_least(net, FWithin(tokens("delivered") >= 1, 1.0), 0.5,
                             indifference=0.5)


def test_the_command_line_estimates_and_tests():
    target = ("--python", "tcpn.petrinets.examples:stop_and_wait")
    done = run_tcpn("check", *target, "--probability", "F<=3 tokens(delivered) >= 2",
                    "--runs", "400")
    assert done.returncode == 0, done.stderr
    assert "probability 1: P = " in done.stdout and "of 400 runs" in done.stdout
    done = run_tcpn("check", *target, "--probability", "F<=3 tokens(delivered) >= 2",
                    "--at-least", "0.3")
    assert done.returncode == 1 and "FALSE  P>=0.3 [F<=3.0" in done.stdout
    done = run_tcpn("check", *target, "--at-least", "0.3", "--ctl", "EF deadlock")
    assert done.returncode == 3 and "--at-least and --runs go with --probability" in done.stderr
    done = run_tcpn("check", *target, "--probability", "F<=3 tokens(delivred) >= 2")
    assert done.returncode == 3 and "delivred" in done.stderr
