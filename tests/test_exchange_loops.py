"""Imported CPN ML recursion that is a loop runs as a Python loop, with the recursion's values."""

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcpn.petrinets.exchange.functions import DeclaredFunction
from tcpn.petrinets.exchange.loops import loop_source
from tcpn.petrinets.exchange.ml_exceptions import CallDepthError

# the bodies the importer writes for tcpn's SACK twins (ml_forms.py), as CPN ML comes back
WALKS = {
    "covers": (("runs", "seq"),
               "len(runs) > 0 and (runs[0][0] <= seq and seq < runs[0][1] or "
               "covers(runs[1:], seq))"),
    "sacked_above": (("runs", "s"),
                     "0 if len(runs) == 0 else max(0, runs[0][1] - max(runs[0][0], s + 1)) + "
                     "sacked_above(runs[1:], s)"),
    "not_holding": (("runs", "latest"),
                    "runs if len(runs) == 0 else not_holding(runs[1:], latest) if runs[0][0] "
                    "<= latest and latest < runs[0][1] else (runs[0],) + "
                    "not_holding(runs[1:], latest)"),
    "pipe_from": (("runs", "s", "high"),
                  "0 if s >= high else (lambda here: here + pipe_from(runs, s + 1, high))("
                  "0 if covers(runs, s) else 1 + (1 if sacked_above(runs, s) > 2 else 0))"),
    "first": (("runs", "n"), "() if n == 0 or len(runs) == 0 else (runs[0],) + "
                             "first(runs[1:], n - 1)"),
    # two walk sites with different operators, and a let that shadows a parameter
    "mixed": (("xs", "k"), "k if len(xs) == 0 else xs[0] * mixed(xs[1:], k) if xs[0] % 2 "
                           "else (lambda xs: xs[0] - mixed(xs[1:], k + 1))(xs)"),
}


def functions(loop: bool) -> dict[str, DeclaredFunction]:
    """The WALKS as declared functions; ``loop=False``: their recursive lambdas."""
    scope: dict[str, DeclaredFunction] = {}
    for name, (params, body) in WALKS.items():
        function = DeclaredFunction(name, params, body, scope)
        if not loop:  # the form before loops: one recursive lambda
            function.is_loop = False
            function._code = compile(f"lambda {', '.join(params)}: ({body})", name, "eval")
        scope[name] = function
    return scope


LOOPS, RECURSIVE = functions(True), functions(False)
runs = st.lists(st.tuples(st.integers(0, 60), st.integers(1, 8)), max_size=12).map(
    lambda pairs: tuple((a, a + n) for a, n in pairs))


def test_every_walk_is_a_loop():
    assert all(f.is_loop for f in LOOPS.values())


@given(runs, st.integers(-2, 80), st.integers(0, 5))
def test_loops_give_the_recursions_values(r, s, n):
    for name, args in (("covers", (r, s)), ("sacked_above", (r, s)), ("not_holding", (r, s)),
                       ("pipe_from", (r, max(s, 0), max(s, 0) + 3 * n)), ("first", (r, n)),
                       ("mixed", (tuple(range(s % 9, s % 9 + n)), n))):
        assert LOOPS[name](*args) == RECURSIVE[name](*args), name


def test_a_long_walk_does_not_exhaust_the_stack():
    depth = 2 * sys.getrecursionlimit()
    long_runs = tuple((2 * k, 2 * k + 1) for k in range(depth))
    # the pipe over segments 0 .. depth - 1, as recursion: stopped at the limit call_depth
    with pytest.raises(CallDepthError, match="call_depth"):
        RECURSIVE["pipe_from"](((0, 1),), 0, depth)
    assert LOOPS["pipe_from"](((0, 1),), 0, depth) == depth - 1  # all but the SACKed one
    assert LOOPS["covers"](long_runs, 2 * depth - 2) is True
    assert LOOPS["not_holding"](long_runs, 0) == long_runs[1:]


@pytest.mark.parametrize("body", [
    "1 if n < 2 else fib(n - 1) + fib(n - 2)",  # two calls: a tree, not a loop
    "0 if fib(n - 1) > 3 else n",  # a call in a test
    "n if n < 2 else fib(n - 1) * 2",  # the call on the left of its operator
    "n if n < 2 else (lambda n_: fib)(n)(n - 1)",  # the function as a value
    "len((n,)) if n < 2 else (lambda len: fib(n - len(n)))(abs)",  # a let over a global read
])
def test_other_recursion_stays_recursion(body):
    assert loop_source("fib", ("n",), body) is None
    assert not DeclaredFunction("fib", ("n",), body).is_loop


def test_a_function_that_does_not_call_itself_is_no_loop():
    assert loop_source("double", ("x",), "2 * x") is None
