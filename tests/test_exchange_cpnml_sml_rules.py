"""CPN ML as SML defines it, in forms an earlier round left out or read subtly wrong
(issue 35, after the fifth round): the list functions' exceptions and user-declared
infix operators.

``hd``, ``tl`` and ``List.last`` raise ``Empty`` on ``[]``; ``List.nth (l, i)``,
``List.take (l, n)`` and ``List.drop (l, n)`` raise ``Subscript`` when ``i`` or ``n`` is
negative or past the end (they were Python's indexing and slicing: ``~1`` counted from the
end, a count past the end gave a shorter list). Values are worked out by hand from the
SML Basis Library and, where SML/NJ is installed, the same declarations run in ``sml`` and
must give the same values.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_exchange_cpn_field import colset, cpn_file, var
from test_exchange_cpnml_cells import declarations_net, needs_sml, sml_values

from tcpn.petrinets.engine.simulator import simulate
from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn

#: (declaration, the int it names or None, worked out by hand from the Basis Library)
LIST_EXCEPTIONS: list[tuple[str, str | None, int | None]] = [
    ("val s1 = List.nth ([10, 20, 30], 2);", "s1", 30),
    # ~1 is no index: Subscript (Python's [-1] gave 30)
    ("val s2 = List.nth ([10, 20, 30], ~1) handle Subscript => 7;", "s2", 7),
    # more than the list holds: Subscript (Python's [:3] gave [1, 2])
    ("val s3 = length (List.take ([1, 2], 3)) handle Subscript => 9;", "s3", 9),
    ("val s4 = length (List.drop ([1, 2], 3)) handle Subscript => 9;", "s4", 9),
    ("val s5 = length (List.take ([1, 2, 3], 2)) * 10 + length (List.drop ([1, 2, 3], 3));",
     "s5", 20),
    # tl [] is Empty (Python's [1:] gave [])
    ("val s6 = length (tl ([] : int list)) handle Empty => 5;", "s6", 5),
    ("val s7 = hd ([] : int list) handle Empty => 4;", "s7", 4),
    # an index out of range is Subscript, not Empty: the second rule
    ("val s8 = List.nth ([1, 2], 2) handle Empty => 1 | Subscript => 2;", "s8", 2),
    ("val s9 = List.last [4, 5, 6] + (List.last ([] : int list) handle Empty => 30);",
     "s9", 36),
    ("val t1 = length (List.drop ([1, 2], ~1)) handle Subscript => 8;", "t1", 8),
    # Char.contains s c (the SQL interpreter's tokenizer): c in s
    ("val t2 = (if Char.contains \"abc\" #\"b\" then 1 else 0)"
     " + (if Char.notContains \"abc\" #\"z\" then 10 else 0);", "t2", 11),
]


def _list_net(output: str) -> str:
    """P holds the list [1, 2, 3]; T takes it and puts ``output`` (an int) on Q."""
    return cpn_file(
        colset("C1", "INT", "<int/>") + colset("C2", "INTS", "<list><id>INT</id></list>")
        + var("V1", "INTS", "l"),
        [("P1", "P", "INTS", "[1, 2, 3]"), ("P2", "Q", "INT", "")],
        [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "l"), ("A2", "TtoP", "T1", "P2", output)])


@pytest.mark.parametrize("output", ["List.nth (l, ~1)", "List.nth (l, 3)",
                                    "length (List.take (l, 4))", "hd (List.drop (l, 3))"])
def test_an_index_out_of_the_list_is_a_firing_error_naming_the_exception(output):
    net = read_cpn(_list_net(output)).net
    with pytest.raises(FiringError, match=r"T->Q.*uncaught SML exception (Subscript|Empty)"):
        simulate(net, seed=0, until=10.0)


def test_the_list_functions_are_written_back_as_read():
    imported = read_cpn(_list_net(
        "List.nth (l, 1) + hd (tl l) + length (List.take (l, 2)) + List.last l"
        " + length (List.drop (l, 1))"))
    assert imported.complete, imported.report.text()
    again = read_cpn(to_cpn(imported.net))
    assert again.complete, again.report.text()
    (marking,) = [simulate(n, seed=0, until=10.0).marking["Q"] for n in
                  (imported.net,)]
    assert [t.value for t in marking] == [2 + 2 + 2 + 3 + 2]
    assert [t.value for t in simulate(again.net, seed=0, until=10.0).marking["Q"]] == [11]


#: (declaration, the int it names or None, worked out by hand): infix operators the model
#: declares, at SML's precedences (``*`` 7, ``+`` 6, ``<`` 4) and associativity; the first
#: element holds a datatype, a fixity declaration and the operator's function together,
#: as the SQL interpreter written in CPN ML has them.
INFIXES: list[tuple[str, str | None, int | None]] = [
    ("datatype 'a St = Err of int | Ok of 'a\n"
     "infixr 9 >>=\n"
     "fun a >>= f = case a of Err n => Err n | Ok v => f v;", None, None),
    ("fun unwrap (Ok v) = v | unwrap (Err n) = ~n;", None, None),
    # fn runs as far right as it can: Ok 3 >>= (fn x => (Ok (x * 10) >>= (fn y => ...)))
    ("val i1 = unwrap (Ok 3 >>= (fn x => Ok (x * 10) >>= (fn y => Ok (y + 1))));", "i1",
     31),
    ("val i2 = unwrap ((Ok 3 >>= (fn _ => Err 7 : int St)) >>= (fn y => Ok (y + 1)));",
     "i2", -7),
    ("infix 4 minus;", None, None),
    ("fun (a minus b) = a - b;", None, None),
    ("val i3 = 10 minus 3 minus 2;", "i3", 5),  # (10 - 3) - 2, left
    ("infixr 4 rminus; fun a rminus b = a - b;", None, None),
    ("val i4 = 10 rminus 3 rminus 2;", "i4", 9),  # 10 - (3 - 2), right
    ("infix 7 times; fun a times b = a * b + 1;", None, None),
    ("val i5 = 2 + 3 times 4;", "i5", 15),  # 2 + (3 * 4 + 1): times above +
    ("infix 2 lo; fun a lo b = a * 100 + b;", None, None),
    ("val i6 = 1 + 2 lo 3 * 4;", "i6", 312),  # (1 + 2) lo (3 * 4): lo below +
    ("nonfix times;", None, None),
    ("val i7 = times (2, 5);", "i7", 11),
    ("val i8 = foldl (op minus) 100 [1, 2];", "i8", 101),  # 2 minus (1 minus 100)
    # a datatype's constructor declared infix, in patterns and expressions
    ("infixr 5 :::; datatype L = E | ::: of int * L;", None, None),
    ("fun len E = 0 | len (_ ::: t) = 1 + len t;", None, None),
    ("val i9 = len (1 ::: 2 ::: 3 ::: E);", "i9", 3),
]


#: Fixity declarations hold to the end of their scope (Definition of Standard ML §4.7): a
#: ``let``'s to its ``end``; a ``local``'s first part in its body only, its body's after
#: its ``end`` too; ``nonfix`` likewise. Values worked out by hand (``pl``: a + 2 b;
#: ``cat``: 10 a + b).
SCOPED_INFIXES: list[tuple[str, str | None, int | None]] = [
    ("fun pl (a, b) = a + 2 * b;", None, None),
    ("val s1 = let infix 6 pl in 1 pl 2 end;", "s1", 5),
    ("val s2 = pl (1, 2);", "s2", 5),  # the let's infix ended with it
    ("local infix 6 pl in fun twice x = x pl x end;", None, None),
    ("val s3 = twice 3 + pl (0, 1);", "s3", 11),  # so did the local's first part's
    ("local val unused = 0 in infix 6 pl end;", None, None),
    ("val s4 = 1 pl 2;", "s4", 5),  # a local body's declaration outlives its end
    ("val s5 = let nonfix pl in pl (1, 1) end;", "s5", 3),
    ("val s6 = 2 pl 2;", "s6", 6),  # and the nonfix in the let ended with it
    ("fun cat (a, b) = a * 10 + b;\n"
     "val s7 = let infix 5 cat in 1 cat 2 end + cat (3, 4);", "s7", 46),  # one text
]
#: The declaration lists above, each giving its ints in tcpn as SML/NJ gives them.
WORKED_OUT = {"list exceptions": LIST_EXCEPTIONS, "declared infixes": INFIXES,
              "scoped fixity": SCOPED_INFIXES}


def _expected(cases: list[tuple[str, str | None, int | None]]) -> dict[str, int | None]:
    return {name: value for _, name, value in cases if name is not None}


@pytest.mark.parametrize("which", list(WORKED_OUT))
def test_declarations_give_the_values_worked_out_by_hand(which: str):
    imported = read_cpn(declarations_net([text for text, _, _ in WORKED_OUT[which]]))
    assert imported.complete, imported.report.text()
    expected = _expected(WORKED_OUT[which])
    assert {name: imported.net.declarations[name] for name in expected} == expected


@needs_sml
@pytest.mark.parametrize("which", list(WORKED_OUT))
def test_sml_nj_gives_the_same_values(which: str, tmp_path: Path):
    expected = _expected(WORKED_OUT[which])
    texts = [text for text, _, _ in WORKED_OUT[which]]
    assert sml_values(texts, list(expected), tmp_path / "values.sml") == expected


def test_a_declared_infix_operator_in_a_guard_and_an_arc(tmp_path):
    """``infix 6 pl`` (``a pl b = a + 2 * b``): the guard ``n pl 1 < 10`` is
    ``(3 + 2) < 10``; the arc ``n + 1 pl 1 * 2`` is ``(n + 1) pl (1 * 2)`` = 4 + 4 = 8
    (``pl`` and ``+`` both 6, left; ``*`` 7)."""
    text = cpn_file(
        colset("D1", "INT", "<int/>") + var("D2", "INT", "n")
        + "".join(f'<ml id="M{k}">{t}</ml>' for k, t in enumerate(
            ["infix 6 pl", "fun a pl b = a + 2 * b;"])),
        [("P1", "P", "INT", "1`3"), ("P2", "Q", "INT", "")],
        [("T1", "T", "[n pl 1 &lt; 10]", "")],
        [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P2", "n + 1 pl 1 * 2")])
    path = tmp_path / "infix.cpn"
    path.write_text(text, encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    assert [t.value for t in simulate(imported.net, seed=0, until=10.0).marking["Q"]] == [8]


def test_an_infix_operator_without_an_operand_is_left_out_named():
    imported = read_cpn(declarations_net(["infix 6 pl", "fun a pl b = a + b;",
                                          "val bad = 1 pl;", "val good = 1 pl 2;",
                                          # an operand is an application: (fn ...) in SML
                                          "val worse = 1 pl fn x => x;"]))
    reasons = {item.name: item.reason for item in imported.report.unsupported}
    assert set(reasons) == {"val bad", "val worse"}, imported.report.text()
    assert "infix operators" in reasons["val bad"]
    assert imported.net.declarations["good"] == 3


def test_a_chain_of_declared_infixes_past_the_nesting_bound_is_left_out_named():
    """Untrusted text stays bounded: 3000 applications of a declared operator nest past
    the bound; that declaration is left out, the others are read."""
    imported = read_cpn(declarations_net([
        "infix 6 pl", "fun a pl b = a + b;", "val long = " + " pl ".join(["1"] * 3000) + ";",
        "val short = 1 pl 2 pl 3;"]))
    reasons = {item.name: item.reason for item in imported.report.unsupported}
    assert list(reasons) == ["val long"], imported.report.text()
    assert "nested too deep" in reasons["val long"]
    assert imported.net.declarations["short"] == 6


#: A function of several clauses and one argument passing itself as a value to another
#: (the SQL interpreter's ``ParseWhereNextCondition ParseWhereConditions`` in
#: ``ParseWhereConditions``): walk [1, 2, 3] = next walk [1, 2, 3] = 1 + walk [2, 3] =
#: 1 + 2 + walk [3] = 1 + 2 + 3 + walk [] = 6.
SELF_AS_VALUE: list[tuple[str, str | None, int | None]] = [
    ("fun next self [] = 0 | next self (x :: rest) = x + self rest;", None, None),
    ("fun walk [] = 0 | walk xs = next walk xs;", None, None),
    ("val w1 = walk [1, 2, 3];", "w1", 6),
]
SELF_EXPECTED = {name: value for _, name, value in SELF_AS_VALUE if name is not None}


def test_a_function_of_clauses_passes_itself_as_a_value():
    imported = read_cpn(declarations_net([text for text, _, _ in SELF_AS_VALUE]))
    assert imported.complete, imported.report.text()
    assert imported.net.declarations["w1"] == 6


@needs_sml
def test_sml_nj_gives_the_same_value_of_a_function_passing_itself(tmp_path: Path):
    assert sml_values([text for text, _, _ in SELF_AS_VALUE], list(SELF_EXPECTED),
                      tmp_path / "self.sml") == SELF_EXPECTED
