"""Imported CPN ML recursion that is a loop runs as a Python loop, with the recursion's values,
and within the bounds of one evaluation (loop turns, steps)."""

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcpn.limits import using_limits
from tcpn.petrinets.cells import LoopLimitError
from tcpn.petrinets.exchange.functions import DeclaredFunction
from tcpn.petrinets.exchange.loops import loop_source
from tcpn.petrinets.exchange.ml_exceptions import EXCEPTION_FUNCTIONS, CallDepthError
from tcpn.petrinets.ml_work import WorkLimitError

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
            function._loop = None
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


# -- bounds: SML runs these for ever; an imported net's evaluation stops, naming the limit ----
def test_a_tail_call_without_end_stops_at_the_loop_limit_naming_the_function():
    spin = DeclaredFunction("spin", ("x",), "spin(x)")
    assert spin.is_loop
    with using_limits(while_iterations=1000), \
            pytest.raises(LoopLimitError, match=r"function spin .*1,001 turns.*while_iterations"):
        spin(1)
    # a walk as long as the bound allows still ends: one turn per element, one for its end
    walk = DeclaredFunction("count", ("xs",), "0 if len(xs) == 0 else 1 + count(xs[1:])")
    with using_limits(while_iterations=1000):
        assert walk(tuple(range(1000))) == 1000
        with pytest.raises(LoopLimitError):
            walk(tuple(range(1001)))


def test_a_value_that_keeps_growing_stops_at_the_length_limit():
    grow = DeclaredFunction("grow", ("s", "n"), "s if n == 0 else grow(s + s, n - 1)")
    assert grow.is_loop and grow("ab", 3) == "ab" * 8
    with using_limits(list_length=10_000), \
            pytest.raises(WorkLimitError, match=r"function grow: a value of 16,384 characters"):
        grow("ab", 60)  # 2^61 characters in SML, memory gone after about 35 turns
    scope: dict[str, DeclaredFunction] = {}
    scope["dbl"] = DeclaredFunction("dbl", ("l",), "l + l", scope)
    scope["twice"] = DeclaredFunction("twice", ("l", "n"),
                                      "l if n == 0 else dbl(twice(l, n - 1))", scope)
    with using_limits(list_length=10_000), pytest.raises(WorkLimitError, match="function dbl"):
        scope["twice"]((1, 2), 40)  # not a loop: refused where the long value is returned


def test_exponential_recursion_stops_at_the_step_limit_naming_the_function():
    scope: dict[str, DeclaredFunction] = {}
    scope["fib"] = DeclaredFunction("fib", ("n",), "n if n < 2 else fib(n - 1) + fib(n - 2)",
                                    scope)
    assert scope["fib"](15) == 610  # 1,973 calls: within any sensible bound
    with using_limits(evaluation_steps=1000), \
            pytest.raises(WorkLimitError, match=r"function fib: 1,001 steps.*evaluation_steps"):
        scope["fib"](60)  # 2^60 calls in SML, never deeper than 60
    assert scope["fib"](10) == 55  # the next evaluation counts from zero


def test_loops_inside_loops_count_together():
    scope: dict[str, DeclaredFunction] = {}
    scope["inner"] = DeclaredFunction("inner", ("n",), "0 if n == 0 else inner(n - 1)", scope)
    scope["outer"] = DeclaredFunction(
        "outer", ("n",), "0 if n == 0 else (lambda _: outer(n - 1))(inner(900))", scope)
    assert scope["outer"].is_loop and scope["inner"].is_loop
    with using_limits(while_iterations=1000, evaluation_steps=100_000):
        assert scope["outer"](50) == 0  # 50 x 902 steps
        with pytest.raises(WorkLimitError, match="function inner"):
            scope["outer"](900)  # each loop within while_iterations, the whole not


def test_a_handler_does_not_catch_the_bounds():
    scope: dict[str, DeclaredFunction] = {}
    scope["spin"] = DeclaredFunction("spin", ("x",), "spin(x)", scope)
    scope["guarded"] = DeclaredFunction(
        "guarded", ("x",), 'ml_handle(lambda: spin(x), (("_", lambda: 0),))',
        {**EXCEPTION_FUNCTIONS, **scope})
    with using_limits(while_iterations=100), pytest.raises(LoopLimitError):
        scope["guarded"](1)
