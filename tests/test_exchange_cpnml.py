"""Python <-> CPN ML translation, and random nets through export and import (Hypothesis).

The CPN ML that tcpn writes is evaluated by cpncheck's own CPN ML evaluator, an
independent implementation, and compared with Python's value of the original expression.
"""

from __future__ import annotations

import ast

import pytest
from cpncheck.cpnml import compile_expression, parse_expression
from cpncheck.mllib import LIBRARY
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tcpn.petrinets import INT, P_HIGH, P_NORMAL, UNIT, PetriNet, Place, Token, Transition
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.cpnml import (
    BOOL_T,
    INT_T,
    REAL_T,
    STRING_T,
    PythonToML,
    UnsupportedConstruct,
    function_source,
    to_python,
)

# Hypothesis warns that the recursive strategies' repr is large; it is only a repr
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

LIST_INT = ("list", INT_T)
PAIR = ("product", (INT_T, STRING_T))


@pytest.mark.parametrize(("python", "variables", "ml"), [
    ("x // 2 + x % 3", {"x": INT_T}, "x div 2 + x mod 3"),
    ("(x,) + q", {"x": INT_T, "q": LIST_INT}, "x :: q"),
    ("q + (x,)", {"x": INT_T, "q": LIST_INT}, "q ^^ [x]"),
    ("len(q) + len(s)", {"q": LIST_INT, "s": STRING_T}, "length(q) + size(s)"),
    ("s + str(x)", {"s": STRING_T, "x": INT_T}, "s ^ Int.toString(x)"),
    ("x / 2", {"x": INT_T}, "Real.fromInt(x) / 2.0"),
    ("max(x, r)", {"x": INT_T, "r": REAL_T}, "Real.max(Real.fromInt(x), r)"),
    ("min(x, 1, 2)", {"x": INT_T}, "Int.min(Int.min(x, 1), 2)"),
    ("p[1] + 'a'", {"p": PAIR}, '#2(p) ^ "a"'),
    ("q[0] if q else -1", {"q": LIST_INT}, "if q <> [] then hd(q) else ~1"),
    ("not q or bool(n)", {"q": LIST_INT, "n": INT_T}, "q = [] orelse n <> 0"),
    ("s if s else 'x'", {"s": STRING_T}, None),  # a string's truthiness: refused
    ("not b or x == 2 and x != 3", {"b": BOOL_T, "x": INT_T},
     "not(b) orelse x = 2 andalso x <> 3"),
    ("1 < x <= 4", {"x": INT_T}, "1 < x andalso x <= 4"),
    ("(lambda y: y * y)(x + 1)", {"x": INT_T}, "let val y = x + 1 in y * y end"),
    ("q[1:][::-1]", {"q": LIST_INT}, "rev(tl(q))"),
    ("uniform(1, 2) + exponential(0.5)", {}, "uniform(1.0, 2.0) + exponential(0.5)"),
    ("x ** 2", {"x": INT_T}, None),  # no integer power in CPN ML
    ("r ** (x + 1)", {"r": REAL_T, "x": INT_T}, "Math.pow(r, Real.fromInt(x + 1))"),
    ("x in q", {"x": INT_T, "q": LIST_INT}, "mem q x"),  # CPN Tools' list function
    ("x not in q", {"x": INT_T, "q": LIST_INT}, "not(mem q x)"),
    ("r in qr", {"r": REAL_T, "qr": ("list", REAL_T)}, None),  # reals: no equality type
    ("x in (1, 3)", {"x": INT_T}, "x = 1 orelse x = 3"),
    ("x not in ()", {"x": INT_T}, "not(false)"),
    ("r._replace(b=x)", {"x": INT_T, "r": ("record", "R", (("a", REAL_T), ("b", INT_T)))},
     "{a = #a(r), b = x}"),
    # SML lexes a run of symbolic characters as one token: '=#', '=~' and '::#' would be
    # identifiers, so '=', '::' and '^^' are always spaced
    ("r._replace(a=-1.0)", {"r": ("record", "R", (("a", REAL_T), ("b", INT_T)))},
     "{a = ~1.0, b = #b(r)}"),
    ("(-x,) + q", {"x": INT_T, "q": LIST_INT}, "~(x) :: q"),
    # SML's real is no equality type: '==' on reals is '<=' and '>=' (NaN as Python), and
    # equality of tuples holding reals is refused
    ("r == 1.5", {"r": REAL_T}, "r <= 1.5 andalso r >= 1.5"),
    ("r != x", {"r": REAL_T, "x": INT_T},
     "not(r <= Real.fromInt(x) andalso r >= Real.fromInt(x))"),
    ("p == p", {"p": ("product", (REAL_T, REAL_T))}, None),
    ("(x, *q, x + 1)", {"x": INT_T, "q": LIST_INT}, "x :: q ^^ [x + 1]"),
    ("q[-3:] + q[:2] + q[2:]", {"q": LIST_INT},
     "(List.drop(q, Int.max(0, length(q) - 3)) ^^ List.take(q, 2)) ^^ List.drop(q, 2)"),
    ("tuple(i * x for i in range(3))", {"x": INT_T}, "List.tabulate(3, fn i => i * x)"),
    ("ml_tabulate(3, lambda i: i * x)", {"x": INT_T}, "List.tabulate(3, fn i => i * x)"),
])
def test_python_to_ml(python, variables, ml):
    translator = PythonToML()
    if ml is None:
        with pytest.raises(UnsupportedConstruct, match="guard of t: CPN ML has no translation"):
            translator.expression(python, "guard of t", variables)
    else:
        assert translator.expression(python, "guard of t", variables) == ml


@pytest.mark.parametrize(("ml", "python"), [
    ("if n=k andalso p<>stop then s^p else s", "s + p if n == k and p != stop else s"),
    ("c::q", "(c,) + q"),
    ("q^^[c]", "q + (c,)"),
    ("#1 p + #2 p", "p[0] + p[1]"),
    ("~3 + x div ~2 mod 5", "-3 + x // -2 % 5"),
    ("Real.fromInt(i) / 2.0 * 1.0E~3", "float(i) / 2.0 * 0.001"),
    ("let val a = 1 val b = a + 1 in a * b end", "(lambda a: (lambda b: a * b)(a + 1))(1)"),
    ("hd q + List.nth(q, 2) + length (tl q)", "ml_hd(q) + ml_nth(q, 2) + len(ml_tl(q))"),
    ("(* comment *) not (x >= 1) orelse x < 0", "not x >= 1 or x < 0"),
    ("List.tabulate(n, fn _ => uniform(0.0, 1.0))",
     "ml_tabulate(n, lambda _: uniform(0.0, 1.0))"),
    ("Math.pow(r, 2.0) + List.nth(List.drop(q, 1), 0)", "r ** 2.0 + ml_nth(ml_drop(q, 1), 0)"),
])
def test_ml_to_python(ml, python):
    assert to_python(ml, "arc") == python


# -- random expressions: Python value == cpncheck's value of our CPN ML ----------------------
def int_expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(st.sampled_from(["x", "y"]), st.integers(-9, 9).map(str))

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(children, st.sampled_from(["+", "-", "*", "//", "%"]), children)
        return st.one_of(
            binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(["min", "max"]), children, children).map(
                lambda t: f"{t[0]}({t[1]}, {t[2]})"),
            st.tuples(children, st.sampled_from(["<", "<=", "==", "!="]), children, children,
                      children).map(lambda t: f"({t[3]} if {t[0]} {t[1]} {t[2]} else {t[4]})"),
            children.map(lambda c: f"-{c}"),
            children.map(lambda c: f"abs({c})"),
        )

    return st.recursive(leaves, extend, max_leaves=8)


@settings(max_examples=100, deadline=None)
@given(int_expressions(), st.integers(-20, 20), st.integers(-20, 20))
def test_random_int_expressions_mean_the_same_in_cpn_ml(expression, x, y):
    try:
        expected = eval(expression, {}, {"x": x, "y": y})
    except ZeroDivisionError:
        assume(False)
    ml = PythonToML().expression(expression, "arc", {"x": INT_T, "y": INT_T})
    value = compile_expression(parse_expression(ml), LIBRARY)({"x": x, "y": y})
    assert value == expected, ml
    # and back: the same Python, as ast.unparse writes it (negated constants folded)
    assert to_python(ml, "arc") == ast.unparse(_FoldNegation().visit(
        ast.parse(expression, mode="eval")))


class _FoldNegation(ast.NodeTransformer):
    """``-3`` and ``--3`` are the constants -3 and 3, as CPN ML's ``~3`` and ``3``."""

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            return ast.Constant(-node.operand.value)
        return node


# -- random nets: export -> import gives the same net, and the same file again ---------------
@st.composite
def nets(draw: st.DrawFn) -> PetriNet:
    net = PetriNet("random")
    net.declare(K=draw(st.integers(0, 5)))
    places = []
    for i in range(draw(st.integers(1, 4))):
        timed = draw(st.booleans())
        coloured = draw(st.booleans())
        colour = INT if coloured else UNIT
        colour = colour.timed() if timed else colour
        values = draw(st.lists(st.integers(0, 3) if coloured else st.just(()), max_size=3))
        tokens = [Token(v, float(draw(st.integers(0, 4))) if timed else 0.0) for v in values]
        net.add_place(Place(f"p{i}", colour, initial=tokens))
        places.append((f"p{i}", coloured, timed))
    for j in range(draw(st.integers(1, 3))):
        inputs = draw(st.lists(st.sampled_from(places), min_size=1, max_size=2))
        bound = [f"v{k}" for k, (_, coloured, _) in enumerate(inputs) if coloured]
        expression = int_expressions_over([*bound, "K"])
        guard = draw(st.none() | st.tuples(st.sampled_from(bound), st.sampled_from(
            ["<", "!=", ">="]), expression).map(lambda t: " ".join(t))) if bound else None
        delay = draw(st.none() | st.integers(0, 3))
        priority = draw(st.sampled_from([P_NORMAL, P_HIGH]))
        net.add_transition(Transition(f"t{j}", guard=guard, delay=delay, priority=priority))
        for k, (name, coloured, _) in enumerate(inputs):
            net.add_input(name, f"t{j}", f"v{k}" if coloured else "()",
                          count=draw(st.integers(1, 2)))
        for name, coloured, timed in draw(st.lists(st.sampled_from(places), max_size=2)):
            when = draw(st.none() | expression.map(lambda e: f"{e} > 0"))
            arc_delay = draw(st.none() | st.integers(1, 3)) if timed else None
            net.add_output(name, f"t{j}", draw(expression) if coloured else "()",
                           count=draw(st.integers(1, 2)), when=when, delay=arc_delay)
    return net


def int_expressions_over(names: list[str]) -> st.SearchStrategy[str]:
    leaves = st.one_of(st.sampled_from(names), st.integers(-3, 3).map(str))
    return st.recursive(leaves, lambda c: st.one_of(
        st.tuples(c, st.sampled_from(["+", "-", "*", "//", "%"]), c).map(
            lambda t: ast.unparse(ast.parse(f"({t[0]}) {t[1]} ({t[2]})", mode="eval"))),
        st.tuples(c, c).map(lambda t: f"max({t[0]}, {t[1]})"),
    ), max_leaves=4)


def normal(text: str | int | None) -> str | int | None:
    return ast.unparse(ast.parse(text, mode="eval")) if isinstance(text, str) else text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nets())
def test_random_nets_round_trip(net):
    first = to_cpn(net, layout="grid")
    imported = read_cpn(first)
    assert imported.complete, imported.report.text()
    again = imported.net
    assert again.declarations == net.declarations
    for name, place in net.places.items():
        twin = again.places[name]
        assert (twin.colour, twin.initial_tokens) == (place.colour, place.initial_tokens)
    for name, transition in net.transitions.items():
        twin_t = again.transitions[name]
        assert (normal(twin_t.guard), twin_t.delay, twin_t.priority) == (
            normal(transition.guard), transition.delay, transition.priority)
    assert [(a.kind, a.place, a.transition, normal(a.inscription), a.count, normal(a.when),
             a.delay) for a in again.arcs] == [
        (a.kind, a.place, a.transition, normal(a.inscription), a.count, normal(a.when), a.delay)
        for a in net.arcs]
    assert to_cpn(again, ids=imported.ids, layout="grid") == first


def window_growth(cwnd: float, ssthresh: float, acked: int) -> float:
    """Slow start then congestion avoidance, written with statements."""
    if cwnd < ssthresh:
        cwnd += 1.0
        acked -= 1
    if cwnd >= ssthresh and acked > 0:
        cwnd += 1.0 / cwnd
    return cwnd


@pytest.mark.parametrize("args", [(2.0, 8.0, 1), (8.0, 8.0, 1), (7.0, 8.0, 2), (3.0, 4.0, 0)])
def test_function_with_statements_folds_to_a_let_that_cpncheck_evaluates_alike(args):
    source = function_source(window_growth, "declaration window_growth")
    variables = dict(zip(source.params, source.annotations, strict=True))
    ml = PythonToML().expression(source.body, "declaration window_growth", variables)
    assert ml.startswith("let val cwnd_acked_ = if cwnd < ssthresh then")
    value = compile_expression(parse_expression(ml), LIBRARY)(dict(zip(source.params, args,
                                                                      strict=True)))
    assert value == window_growth(*args)
