"""CPN ML's functions as values, curried functions, folds and datatypes, as SML defines them.

Declarations are written by hand and their values worked out by hand from the Definition of
Standard ML and the Basis Library (``foldl f b [x1, x2]`` is ``f (x2, f (x1, b))``, ``foldr``
from the right; ``o`` composes, infix 3; a function declared with several argument groups
is curried and may be applied to fewer (a ``fun`` local to a ``let`` may recurse);
constructors of a ``datatype`` and of ``option``
make values and match them in patterns; ``valOf NONE`` raises ``Option``; ``x as p``
binds the whole value); where SML/NJ is
installed, the same declarations run in ``sml`` and must give the same values. What a
model could use to exhaust the machine through these forms stops at a named limit. Nets
with CPN Tools' ``union`` colour sets have the state spaces cpncheck builds from the same
file (their sizes also counted by hand).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_exchange_cpn_field import colset, cpn_file, ml, spaces, var
from test_exchange_cpnml_cells import declarations_net, needs_sml, sml_values

from tcpn.limits import using_limits
from tcpn.petrinets.engine.simulator import Simulator, simulate
from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.exchange.cpn_import import CpnFormatError, read_cpn
from tcpn.petrinets.statespace.space import explore

#: (declaration, the int it gives when it names one, worked out by hand)
DECLARATIONS: list[tuple[str, str | None, int | None]] = [
    ("fun add x y = x + y;", None, None),
    ("val a1 = add 1 2;", "a1", 3),
    ("val inc = add 1;", None, None),
    ("val a2 = inc 5;", "a2", 6),
    ("val a3 = (fn x => fn y => x * y) 3 4;", "a3", 12),
    ("val a4 = ((fn x => x + 1) o (fn x => x * 2)) 5;", "a4", 11),  # 5 * 2 + 1
    ("val a5 = foldl (fn (x, acc) => acc * 10 + x) 0 [1, 2, 3];", "a5", 123),
    ("val a6 = List.foldr (fn (x, acc) => acc * 10 + x) 0 [1, 2, 3];", "a6", 321),
    ("val a7 = List.nth (List.foldl (fn (x, acc) => x :: acc) [] [1, 2, 3], 0);", "a7", 3),
    ("val a8 = length (List.filter (fn x => x mod 2 = 0) (List.tabulate (10, fn i => i)));",
     "a8", 5),
    ("val a9 = foldl (fn (x, s) => x + s) 0 (List.map (add 10) [1, 2]);", "a9", 23),
    ("val b1 = if List.exists (fn x => x > 2) [1, 3] andalso List.all (fn x => x > 0) [1, 3]"
     " then 1 else 0;", "b1", 1),
    ("val b2 = hd (rev [1, 2, 3]) + hd (tl [4, 5]) + List.length [7, 7];", "b2", 10),
    ("fun twice f x = f (f x);", None, None),
    ("val b3 = twice (add 3) 1;", "b3", 7),
    ("fun pair (a, b) c = a * b + c;", None, None),
    ("val b4 = pair (2, 3) 4;", "b4", 10),
    ("fun sum [] acc = acc | sum (h :: t) acc = sum t (acc + h);", None, None),
    ("val b5 = sum [1, 2, 3] 10;", "b5", 16),
    ("fun mul (a, b) = a * b;", None, None),
    ("val b6 = foldl mul 1 [2, 3, 4];", "b6", 24),  # a function of a pair, passed as a value
    ("val b7 = (inc o mul) (3, 4);", "b7", 13),
    ("datatype shape = Circle of int | Rect of int * int | Dot;", None, None),
    ("fun area (Circle r) = 3 * r * r | area (Rect (w, h)) = w * h | area Dot = 0;",
     None, None),
    ("val c1 = area (Circle 2) + area (Rect (3, 4)) + area Dot;", "c1", 24),
    ("val c2 = foldl (fn (s, acc) => acc + area s) 0 [Circle 1, Dot, Rect (2, 5)];", "c2", 13),
    ("val c3 = case SOME 4 of NONE => 0 | SOME v => v * 2;", "c3", 8),
    ("val c4 = getOpt (NONE, 7) + valOf (SOME 1) + Option.getOpt (SOME 2, 5);", "c4", 10),
    ("val c5 = if isSome (SOME 1) andalso not (Option.isSome NONE) then 1 else 0;", "c5", 1),
    ("val c6 = valOf NONE handle Option => 9;", "c6", 9),
    ("fun find p [] = NONE | find p (h :: t) = if p h then SOME h else find p t;", None, None),
    ("val c7 = getOpt (find (fn x => x > 2) [1, 5, 3], 0);", "c7", 5),
    ("val c8 = length (List.map SOME [1, 2]);", "c8", 2),
    ("val sum3 = foldl (fn (x, s) => x + s) 0;", None, None),  # partial applications
    ("val d1 = sum3 [1, 2, 3] + length ((List.filter (fn x => x > 1) o List.map inc)"
     " [0, 1, 2]);", "d1", 8),  # 6 + length [2, 3]
    ("fun firsts (whole as h :: _) = h + length whole | firsts [] = 0;", None, None),
    ("val e1 = firsts [5, 1, 1];", "e1", 8),  # 'as' takes the whole h :: _, as SML reads it
    ("val e2 = getOpt (Option.map (add 1) (List.find (fn x => x mod 2 = 0) [3, 4, 6]), 0)"
     " + getOpt (List.find (fn x => x > 9) [1], 7);", "e2", 12),  # SOME 5 -> 5, NONE -> 7
    ("val c9 = if Rect (1, 2) = Rect (1, 2) andalso Dot <> Circle 1 then 1 else 0;", "c9", 1),
    # recursive functions local to a let
    ("fun fact n = let fun walk 0 = 1 | walk p = p * walk (p - 1) in walk n end;", None, None),
    ("val r1 = fact 5;", "r1", 120),
    ("fun total n = let fun sum (0, acc) = acc | sum (k, acc) = sum (k - 1, acc + k)"
     " in sum (n, 0) end;", None, None),
    ("val r2 = total 100;", "r2", 5050),
    ("fun count l = let fun len [] = 0 | len (_ :: t) = 1 + len t in len l end;", None, None),
    ("val r3 = count [7, 8, 9] + length (let fun upto 0 = [] | upto k = k :: upto (k - 1)"
     " in upto 4 end);", "r3", 7),
]
EXPECTED = {name: value for _, name, value in DECLARATIONS if name is not None}


def test_functions_folds_and_datatypes_give_the_values_worked_out_by_hand():
    imported = read_cpn(declarations_net([text for text, _, _ in DECLARATIONS]))
    assert imported.complete, imported.report.text()
    declarations = imported.net.declarations
    assert {name: declarations[name] for name in EXPECTED} == EXPECTED
    # constructors' values: a constant, or the constructor's name with what it carries
    assert declarations["area"](("Rect", (2, 3))) == 6 and declarations["area"]("Dot") == 0
    assert declarations["add"](2)(5) == 7  # curried: a function of the second argument


@needs_sml
def test_sml_nj_gives_the_same_values(tmp_path: Path):
    assert sml_values([text for text, _, _ in DECLARATIONS], list(EXPECTED),
                      tmp_path / "functions.sml") == EXPECTED


def test_a_huge_tabulate_and_a_deep_recursion_through_foldr_stop_named_never_hang():
    with using_limits(list_length=1000):
        imported = read_cpn(declarations_net([
            "val big = List.tabulate (100000000, fn i => i) handle _ => [];",
            "val fits = length (List.tabulate (1000, fn i => i));",
            "fun deep n = if n = 0 then 0 else foldr (fn (x, a) => x + a) 1 [deep (n - 1)];",
            "val far = deep 1000000;",
            "val near = deep 10;",
        ]))
    reasons = {item.name: item.reason for item in imported.report.unsupported}
    assert set(reasons) == {"big", "far"}, imported.report.text()
    assert "100,000,000 elements is over the limit list_length = 1000" in reasons["big"]
    assert "function deep: 1,001 nested calls is over the limit call_depth = 1000" in \
        reasons["far"]
    assert imported.net.declarations["fits"] == 1000 and imported.net.declarations["near"] == 10


UNION = colset("C1", "INT", "<int/>") + colset(
    "C2", "U", "<union><unionfield><id>A</id><type><id>INT</id></type></unionfield>"
    "<unionfield><id>B</id></unionfield></union>")


def test_a_union_colour_set_in_functions_guards_and_markings_has_cpnchecks_state_space(
        tmp_path: Path):
    """Tokens A(1) and B; t turns B into A(0) and A(n) into A(n+1) while n < 3. One token
    goes A1..A3 (3 values), the other B, A0..A3 (5): 15 pairs, 3 of them the same multiset
    twice ({A1, A2}, {A1, A3}, {A2, A3}): 12 states; {A3, A3} is the one dead marking."""
    declarations = UNION + var("V1", "U", "u") + ml(
        "M1", "fun bump (A n) = A (n + 1) | bump B = A 0;") + ml(
        "M2", "fun small (A n) = n < 3 | small B = true;")
    text = cpn_file(declarations, [("P1", "p", "U", "1`A(1) ++ 1`B")],
                    [("T1", "t", "[small u]", "")],
                    [("A1", "TtoP", "T1", "P1", "bump u"), ("A2", "PtoT", "T1", "P1", "u")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert [t.value for t in imported.net.places["p"].initial] == [("A", 1), "B"]
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (12, 16, 1)


def test_a_constructor_pattern_on_an_input_arc_binds_what_the_token_carries(tmp_path: Path):
    declarations = UNION + var("V2", "INT", "n")
    text = cpn_file(declarations, [("P1", "p", "U", "1`A(1) ++ 2`B"), ("P2", "q", "INT", "")],
                    [("T1", "t", "", ""), ("T2", "t2", "", "")],
                    [("A1", "PtoT", "T1", "P1", "A(n)"), ("A2", "TtoP", "T1", "P2", "n+1"),
                     ("A3", "PtoT", "T2", "P1", "B"), ("A4", "TtoP", "T2", "P1", "A 5")])
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs


def test_what_stays_outside_is_named():
    imported = read_cpn(declarations_net([
        "val f = List.nth (1, 2, 3);",  # a library function of two, on three
        "val g = case 3 of Unknown x => x | _ => 0;",  # a constructor nothing declares
        "datatype d = C;",
        "val h = C 4;",  # a constructor without a value, applied to one
    ]))
    reasons = {item.name: item.reason for item in imported.report.unsupported}
    assert "List.nth applied to 3 argument(s), a form of it tcpn does not" in reasons["f"]
    assert "constructor pattern Unknown" in reasons["g"]
    assert "constructor C applied to a value (it takes none)" in reasons["h"]


def test_a_huge_tabulate_in_a_guard_stops_the_run_at_the_limit_not_a_hang():
    declarations = colset("C1", "INT", "<int/>") + var("V1", "INT", "n")
    text = cpn_file(declarations, [("P1", "p", "INT", "1`5 ++ 1`100000000")],
                    [("T1", "t", "length (List.tabulate (n, fn i => i)) > 0", "")],
                    [("A1", "PtoT", "T1", "P1", "n")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    # the error names the transition, the binding and the limit
    with using_limits(list_length=1000), pytest.raises(
            FiringError, match=r"guard of transition t .*n=100000000.*list_length = 1000"):
        simulate(imported.net, seed=0, until=10.0)


def test_a_union_constructor_without_a_name_is_a_format_error_naming_the_colour_set():
    declarations = colset("C1", "INT", "<int/>") + colset(
        "C2", "U", "<union><unionfield><id>A</id></unionfield><unionfield><id></id>"
        "<type><id>INT</id></type></unionfield></union>")
    with pytest.raises(CpnFormatError, match="colour set U: union constructor '' is not"):
        read_cpn(cpn_file(declarations, [("P1", "p", "U", "1`A")], [], []))


@pytest.mark.parametrize("engine", ["python", "native"])
def test_union_tokens_run_on_both_engines(engine):
    declarations = UNION + var("V2", "INT", "n")
    text = cpn_file(declarations, [("P1", "p", "U", "1`A(1) ++ 1`B"), ("P2", "q", "INT", "")],
                    [("T1", "t", "n &lt; 3", "")],
                    [("A1", "PtoT", "T1", "P1", "A(n)"), ("A2", "TtoP", "T1", "P1", "A(n+1)")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0, engine=engine)
    simulator.run(until=10.0)
    assert simulator.firings == 2  # A(1) -> A(2) -> A(3), then the guard stops it
    values = [t.value for t in simulator.tokens("p")]
    assert sorted(map(repr, values)) == sorted(map(repr, [("A", 3), "B"]))


def test_curried_functions_and_partial_applications_in_guards_and_arcs_explore():
    """p holds 0; t moves n to inc n = add 1 n while twice inc n < 5 (n + 2 < 5): 0, 1,
    2, 3 are reached, 3 is dead (3 + 2 = 5): 4 states, 3 arcs."""
    declarations = colset("C1", "INT", "<int/>") + var("V1", "INT", "n") + ml(
        "M1", "fun add x y = x + y;") + ml("M2", "val inc = add 1;") + ml(
        "M3", "fun twice f x = f (f x);")
    text = cpn_file(declarations, [("P1", "p", "INT", "1`0")],
                    [("T1", "t", "twice inc n &lt; 5", "")],
                    [("A1", "PtoT", "T1", "P1", "n"),
                     ("A2", "TtoP", "T1", "P1", "(inc o add 0) n")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    space = explore(imported.net)
    assert (len(space), space.n_edges, len(space.dead_markings())) == (4, 3, 1)


def test_a_function_drawing_at_random_passed_as_a_value_draws_at_each_call():
    """``bump`` and ``add`` draw (discrete (3, 3) is always 3, so the values are known):
    passed to ``List.map`` and ``foldl`` as values they are called on each element, as SML
    calls them: for i, bump i + add (10, add (i, 0)) = (i + 3) + (10 + (i + 0 + 3) + 3),
    so T moves 1 and 2 to Q as 21 and 23."""
    text = cpn_file(
        colset("D1", "INT", "<int/>") + var("D2", "INT", "i", "j")
        + ml("F1", "fun bump x = x + discrete (3, 3);")
        + ml("F2", "fun add (x, y) = x + y + discrete (3, 3);"),
        [("P1", "P", "INT", "1`1 ++ 1`2"), ("P2", "Q", "INT", "")],
        [("T1", "T", "", "input (i); output (j); action "
          "(hd (List.map bump [i]) + foldl add 0 [i, 10]);")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "j")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("Q")) == [21, 23]


def test_a_local_recursion_past_the_stack_stops_named_never_with_pythons_error():
    """``loop 100000`` recurses deeper than tcpn's calls go: the declaration is left out
    naming the limit (SML/NJ runs it: tcpn stops it, named)."""
    imported = read_cpn(declarations_net([
        "fun deep n = let fun loop 0 = 0 | loop k = loop (k - 1) in loop n end;",
        "val big = deep 100000;", "val small = deep 10;"]))
    assert imported.net.declarations["small"] == 0
    assert "'big'" in imported.report.text() and "call_depth" in imported.report.text()
