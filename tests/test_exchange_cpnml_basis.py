"""The SML Basis and CPN Tools library functions real models use, and the declaration forms
around them (``datatype ... and ... withtype``, ``type``, ``val`` patterns, ``op``,
``local``), as SML and CPN Tools define them.

Values are worked out by hand from the Basis Library (``List.partition``, ``ListPair``
truncating to the shorter list, ``String.tokens`` dropping empty tokens where
``String.fields`` keeps them, ``Int.toString`` writing ``~``, ``Real.toString`` with 12
significant digits) and, where SML/NJ is installed, the same declarations run in ``sml``
and must give the same values. CPN Tools' colour-set functions (``CS.ord``, ``CS.col``,
``CS.legal``, ``CS.mkstr``) follow its simulator's definitions (positions from 0, negative
ints in parentheses, strings quoted). A recursion that is not a loop stops at the limit
``call_depth`` with an error naming it and the function, never with Python's own error.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_exchange_cpn_field import colset, cpn_file, ml, spaces, var
from test_exchange_cpnml_cells import declarations_net, needs_sml, sml_values

from tcpn.errors import InputError
from tcpn.limits import using_limits
from tcpn.petrinets.engine.simulator import Simulator, simulate
from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.statespace.space import explore

#: (declaration, the int it gives when it names one, worked out by hand)
DECLARATIONS: list[tuple[str, str | None, int | None]] = [
    ("datatype tree = Leaf | Node of tree * int * forest and forest = F of tree list;",
     None, None),
    ("type weight = int * int and label = string;", None, None),
    ("datatype edge = E of span withtype span = int * int;", None, None),
    ("val a0 = case E (2, 5) of E (x, y) => y - x;", "a0", 3),
    ("fun sum Leaf = 0 | sum (Node (l, v, F ts)) = sum l + v + foldl (fn (t, a) => a + sum t)"
     " 0 ts;", None, None),
    ("val a1 = sum (Node (Leaf, 3, F [Node (Leaf, 4, F []), Leaf]));", "a1", 7),
    ("fun scale (k : int) ((a, b) : weight) : int = k * a + b;", None, None),
    ("val a2 = scale 10 (2, 3);", "a2", 23),
    ("val (small, large) = List.partition (fn x => x < 3) [5, 1, 4, 2];", None, None),
    ("val a3 = 10 * length small + hd large;", "a3", 25),  # [1, 2], [5, 4]
    ("val a4 = length (ListPair.zip ([1, 2, 3], [4, 5]));", "a4", 2),
    ("val a5 = ListPair.foldl (fn (x, y, acc) => acc * 10 + x * y) 0 ([1, 2], [3, 4]);",
     "a5", 38),  # (0 * 10 + 3) * 10 + 8
    ("val a6 = foldl op+ 0 (ListPair.map op* ([1, 2, 3], [4, 5, 6]));", "a6", 32),
    ("val a7 = if ListPair.all (fn (x, y) => x < y) ([1, 2], [2, 3, 0]) andalso"
     " ListPair.exists (fn (x, y) => x = y) ([1, 2], [0, 2]) then 1 else 0;", "a7", 1),
    ("val a8 = foldl op+ 0 (#2 (ListPair.unzip [(1, 10), (2, 20)]));", "a8", 30),
    ("val a9 = case List.getItem [4, 5, 6] of SOME (h, t) => h * 10 + length t"
     " | NONE => 0;", "a9", 42),
    ("val b1 = foldl op+ 0 (List.mapPartial (fn x => if x > 1 then SOME (x * x) else NONE)"
     " [1, 2, 3]);", "b1", 13),
    ("val b2 = valOf (Int.fromString \"  ~12abc\") + getOpt (Int.fromString \"x\", 7);",
     "b2", -5),
    ("val b3 = size (Int.toString (~12)) * 100 + size (Real.toString 1.5E~7);", "b3", 307),
    ("val b4 = size (Real.toString 123456789012345.0) * 100 + size (Real.toString 2.0);",
     "b4", 1603),  # 1.23456789012E14, 2.0
    ("val words = String.tokens (fn c => c = #\" \") \"  Sat Jan  01 \";", None, None),
    ("val b5 = length words * 10 + length (String.fields (fn c => c = #\":\") \"10::07\");",
     "b5", 33),
    ("val b6 = ord (String.sub (\"hello\", 1)) + size (String.substring (\"hello\", 1, 3));",
     "b6", 104),  # ord #"e" = 101
    ("val b7 = size (implode (rev (explode \"abc\"))) + (if Char.isDigit #\"7\" andalso"
     " String.isPrefix \"he\" \"hello\" then 10 else 0);", "b7", 13),
    ("val b8 = (String.sub (\"abc\", 5); 0) handle Subscript => 9;", "b8", 9),
    ("fun bounded () = let val x = 2.5 in if x > 1.0 then x else 0.0 end : real;", None, None),
    ("val b9 = round (bounded () * 2.0);", "b9", 5),
    ("local val hidden = 4 fun twice x = x * hidden in fun shown y = twice y + 1 end;",
     None, None),
    ("val c1 = shown 2;", "c1", 9),
    # the Basis' real equality, symbolic names of structure Real (reals are no equality type)
    ("val c2 = (if Real.==(0.5, 1.0 / 2.0) then 1 else 0)"
     " + (if Real.!=(0.1, 0.2) then 10 else 0);", "c2", 11),
]
EXPECTED = {name: value for _, name, value in DECLARATIONS if name is not None}


def test_basis_functions_and_declaration_forms_give_the_values_worked_out_by_hand():
    imported = read_cpn(declarations_net([text for text, _, _ in DECLARATIONS]))
    assert imported.complete, imported.report.text()
    declarations = imported.net.declarations
    assert {name: declarations[name] for name in EXPECTED} == EXPECTED
    assert declarations["words"] == ("Sat", "Jan", "01")


@needs_sml
def test_sml_nj_gives_the_same_values(tmp_path: Path):
    assert sml_values([text for text, _, _ in DECLARATIONS], list(EXPECTED),
                      tmp_path / "basis.sml") == EXPECTED


def test_local_declarations_are_seen_by_their_block_only():
    imported = read_cpn(declarations_net([
        "local val k = 2 fun sq x = x * x in fun h x = sq x + k end;",
        "val m = h 3;",
        "val leaked = k;",  # k is local to h: unknown here, as in SML
        "val also = sq 2;",
    ]))
    reasons = {item.name: item.reason for item in imported.report.unsupported}
    assert set(reasons) == {"leaked", "also"}, imported.report.text()
    assert "unknown name 'k'" in reasons["leaked"]
    assert "'sq' is not a declared function" in reasons["also"]
    assert imported.net.declarations["m"] == 11
    assert not {"k", "sq"} & set(imported.net.declarations)


def test_a_recursion_past_call_depth_stops_named_at_import_and_in_a_run():
    with using_limits(call_depth=50):
        imported = read_cpn(declarations_net([
            "fun ack (0, n) = n + 1 | ack (m, 0) = ack (m - 1, 1)"
            " | ack (m, n) = ack (m - 1, ack (m, n - 1));",
            "val fits = ack (2, 3);",  # 2 * 3 + 3, at most 11 calls deep
            "val deep = ack (3, 3);",  # 61, about 63 calls deep
            "val caught = ack (3, 3) handle _ => 0;",  # tcpn's limit: no handler takes it
        ]))
    reasons = {item.name: item.reason for item in imported.report.unsupported}
    assert set(reasons) == {"deep", "caught"}, imported.report.text()
    assert "function ack: 51 nested calls is over the limit call_depth = 50" in reasons["deep"]
    assert imported.net.declarations["fits"] == 9
    # the same function in a guard: the run stops naming the transition and the limit
    declarations = colset("C1", "INT", "<int/>") + var("V1", "INT", "n") + ml(
        "M1", "fun down n = if n = 0 then 0 else 1 + down (n - 1) * 1;")
    text = cpn_file(declarations, [("P1", "p", "INT", "1`100000")],
                    [("T1", "t", "down n &gt;= 0", "")], [("A1", "PtoT", "T1", "P1", "n")])
    net = read_cpn(text).net
    with pytest.raises(FiringError, match=r"guard of transition t.*call_depth = 1000"):
        simulate(net, seed=0, until=10.0)


SETS = (colset("C1", "UNIT", "<unit/>")
        + colset("C2", "SMALL", "<int><with><ml>~2</ml><ml>3</ml></with></int>")
        + colset("C3", "COL", "<enum><id>red</id><id>green</id><id>blue</id></enum>")
        + colset("C4", "P", "<product><id>SMALL</id><id>COL</id></product>")
        + colset("C5", "STR", "<string/>")
        + colset("C6", "R", "<record><recordfield><id>a</id><id>SMALL</id></recordfield>"
                 "<recordfield><id>b</id><id>STR</id></recordfield></record>")
        + colset("C7", "L", "<list><id>SMALL</id></list>")
        + colset("C8", "PH", "<index><ml>1</ml><ml>5</ml><id>ph</id></index>")
        + colset("C9", "T", "<time/>"))


def test_colour_set_functions_follow_cpn_tools_definitions():
    declarations = SETS + "".join(ml(f"M{k}", text) for k, text in enumerate([
        "val a = SMALL.ord 1 * 10 + COL.ord blue;",  # positions from 0: 3, 2
        "val b = COL.col 1;",
        "val c = SMALL.col 0;",
        "val d = SMALL.mkstr (~2) ^ COL.mkstr red ^ P.mkstr (1, green) ^ STR.mkstr \"x\""
        " ^ L.mkstr [1, ~1] ^ PH.mkstr (ph 3) ^ R.mkstr {a = 1, b = \"s\"};",
        "val e = if SMALL.legal 3 andalso not (SMALL.legal 4) andalso L.legal [1, 2]"
        " andalso not (P.legal (1, green) andalso P.legal (4, red)) then SMALL.size () else 0;",
        "val f = list_to_ms (SMALL.all ());",
        "val g = T.mkstr 5;",  # the time colour set of an integer-time net is int
        "val h = R.mkstr (R.set_a {a = 1, b = \"s\"} 3);",  # a record with field a made 3
        "val i = (R.set_a {a = 1, b = \"s\"} 4; 0) handle _ => 9;",  # 4 is not a SMALL
    ]))
    imported = read_cpn(cpn_file(declarations, [("P1", "p", "UNIT", "1`()")], [], []))
    assert imported.complete, imported.report.text()
    values = imported.net.declarations
    assert (values["a"], values["b"], values["c"]) == (32, "green", -2)
    assert values["d"] == '(~2)red(1,green)"x"[1,(~1)]ph(3){a=1,b="s"}'
    assert values["e"] == 6 and values["f"] == (-2, -1, 0, 1, 2, 3) and values["g"] == "5"
    assert values["h"] == '{a=3,b="s"}' and values["i"] == 9


def test_a_code_segment_without_semicolons_and_a_record_only_declarations_use_import():
    declarations = colset("C1", "INT", "<int/>") + colset(
        "C2", "CONFIG", "<record><recordfield><id>rate</id><id>INT</id></recordfield>"
        "</record>") + var("V1", "INT", "n", "m") + ml(
        "M1", "globref rate = 1;") + ml("M2", "fun setconfig (c : CONFIG) = rate := #rate c;")
    text = cpn_file(declarations, [("P1", "p", "INT", "1`3"), ("P2", "q", "INT", "")],
                    [("T1", "t", "", "input (n) output (m) action n * 2")],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P2", "m")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert imported.net.transitions["t"].action(n=3) == {"m": 6}


def test_a_union_colour_set_is_written_back_and_what_cannot_be_is_named():
    union = colset("C1", "INT", "<int/>") + colset(
        "C2", "U", "<union><unionfield><id>A</id><type><id>INT</id></type></unionfield>"
        "<unionfield><id>B</id></unionfield></union>") + var("V1", "U", "u")
    text = cpn_file(union, [("P1", "p", "U", "1`A(1) ++ 1`B"), ("P2", "q", "U", "")],
                    [("T1", "t", "", "")],
                    [("A1", "PtoT", "T1", "P1", "u"), ("A2", "TtoP", "T1", "P2", "u")])
    back = read_cpn(to_cpn(read_cpn(text).net))
    assert back.complete, back.report.text()
    assert sorted(map(repr, (t.value for t in back.net.places["p"].initial))) == [
        "'B'", "('A', 1)"]
    # a clausal function over the union's constructors has no Python form the export
    # translates: it is written as the file wrote it, and reads back the same
    with_patterns = union + ml("M1", "fun bump (A n) = A (n + 1) | bump B = A 0;")
    text = cpn_file(with_patterns, [("P1", "p", "U", "1`B")], [("T1", "t", "", "")],
                    [("A1", "PtoT", "T1", "P1", "u"), ("A2", "TtoP", "T1", "P1", "bump u")])
    first = read_cpn(text).net
    written = to_cpn(first)
    assert "fun bump (A n) = A (n + 1) | bump B = A 0;" in written
    again = read_cpn(written).net
    assert repr(again.declarations["bump"]) == repr(first.declarations["bump"])
    runs = []
    for net in (first, again):
        simulator = Simulator(net, seed=0)
        simulator.run(max_firings=3)
        runs.append([t.value for t in simulator.tokens("p")])
    assert runs[0] == runs[1] == [("A", 2)]  # B, A 0, A 1, A 2


def test_cpn_tools_conditional_multiset_on_an_arc_explores_as_worked_out_by_hand():
    """``[b1, b2] % v`` is ``1`v`` when every bi holds, else empty (CPN Tools' ms.sml).
    p: 0, 1, 2, 3 with q flipping true/false; r gets ``[b, n > 0] % n ++ [not b] % (n*10)``:
    nothing at n = 0 (b true, n = 0), 10 at n = 1 (b false), 2 at n = 2 (b true): 4 states,
    3 arcs, the last one dead with r = {2, 10}. (cpncheck does not read '%'.)"""
    declarations = colset("C1", "INT", "<int/>") + colset("C2", "BOOL", "<bool/>") + var(
        "V1", "INT", "n") + var("V2", "BOOL", "b")
    text = cpn_file(declarations, [("P1", "p", "INT", "1`0"), ("P2", "q", "BOOL", "1`true"),
                                   ("P3", "r", "INT", "")],
                    [("T1", "t", "n &lt; 3", "")],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P1", "n+1"),
                     ("A3", "PtoT", "T1", "P2", "b"), ("A4", "TtoP", "T1", "P2", "not b"),
                     ("A5", "TtoP", "T1", "P3", "[b, n &gt; 0]%n ++ [not b]%(n*10)")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    space = explore(imported.net)
    assert (len(space), space.n_edges, len(space.dead_markings())) == (4, 3, 1)
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("r")) == [2, 10]
    assert read_cpn(declarations_net(["val a = length ([true, 1 < 2] % 5)"
                                      " + length ([false] % 3);"])).net.declarations["a"] == 1


def test_int_and_real_to_string_are_written_back_as_read():
    declarations = colset("C1", "INT", "<int/>") + colset("C2", "STRING", "<string/>") + var(
        "V1", "INT", "n")
    text = cpn_file(declarations, [("P1", "q", "INT", "1`0"), ("P2", "r", "STRING", "")],
                    [("T1", "t", "n &lt; 1", "")],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P1", "n + 1"),
                     ("A3", "TtoP", "T1", "P2", "Int.toString (~n - 2) ^ Real.toString 1.5")])
    written = to_cpn(read_cpn(text).net)
    assert "Int.toString(~(n) - 2) ^ Real.toString(1.5)" in written
    simulator = Simulator(read_cpn(written).net, seed=0)
    simulator.run(until=10.0)
    assert [t.value for t in simulator.tokens("r")] == ["~21.5"]


def test_an_explicit_time_stamp_on_an_output_arc_is_the_tokens_stamp():
    """t fires at time 0 for n = 0 and n = 1 (q is untimed); r gets n stamped now + 5 and
    a 7 stamped 3 each time: stamps 5, 5, 3, 3, as CPN Tools gives them."""
    declarations = colset("C1", "INT", "<int/>") + (
        '<color id="C2"><id>TINT</id><int/><timed/></color>') + var("V1", "INT", "n")
    text = cpn_file(declarations, [("P1", "q", "INT", "1`0"), ("P2", "r", "TINT", "")],
                    [("T1", "t", "n &lt; 2", "")],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P1", "n+1"),
                     ("A3", "TtoP", "T1", "P2", "1`n@(time() + 5) ++ 1`7@3")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=100.0)
    assert sorted((t.value, t.time) for t in simulator.tokens("r")) == [
        (0, 5.0), (1, 5.0), (7, 3.0), (7, 3.0)]


@pytest.mark.parametrize(("arc", "code", "named"), [
    ("case List.find (fn x =&gt; (x, x) = (n, n)) [(1, 1)] of SOME (a, b) =&gt; a | NONE =&gt; 0",
     "", "a match on a constructor (SOME v, a datatype's C v) other than"),
    ("n + 1", "input (n); output (); action while !cnt &lt; n do cnt := !cnt + 1;",
     "while (SML or CPN Tools, read from"),
])
def test_what_the_export_does_not_write_back_is_named_in_cpn_ml(arc, code, named):
    """valOf, List.find, case on its option, ! and := are written back
    (tests/test_exchange_cpn_export_forms.py); a match of a tuple inside a constructor
    and a loop are not."""
    declarations = colset("C1", "INT", "<int/>") + var("V1", "INT", "n") + ml(
        "M1", "globref cnt = 0;")
    text = cpn_file(declarations, [("P1", "q", "INT", "1`0")], [("T1", "t", "n &lt; 3", code)],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P1", arc)])
    with pytest.raises(InputError, match=re.escape(named)):
        to_cpn(read_cpn(text).net)


def test_a_list_on_an_arc_is_the_multiset_of_its_elements_or_left_out_named(tmp_path: Path):
    """CPN Tools' multisets are lists: ``W.all()`` on an output arc puts one token of each
    worker, ``List.map`` of a constant list likewise (w1 twice here), a list computed from
    the binding a multiset arc (state spaces as cpncheck's), on a colour set that is not
    small too, never one wrong token."""
    declarations = colset("C1", "UNIT", "<unit/>") + colset(
        "C2", "W", "<enum><id>w1</id><id>w2</id><id>w3</id></enum>") + colset(
        "C3", "WS", "<list><id>W</id></list>") + var("V1", "WS", "ws") + ml(
        "M1", "fun firsts () = List.map (fn _ => w1) [1, 2];")
    text = cpn_file(declarations, [("P1", "s", "UNIT", "1`()"), ("P2", "p", "W", ""),
                                   ("P3", "q", "W", "")],
                    [("T1", "t", "", "")],
                    [("A1", "PtoT", "T1", "P1", "()"), ("A2", "TtoP", "T1", "P2", "W.all()"),
                     ("A3", "TtoP", "T1", "P3", "firsts ()")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=1.0)
    assert sorted(t.value for t in simulator.tokens("p")) == ["w1", "w2", "w3"]
    assert [t.value for t in simulator.tokens("q")] == ["w1", "w1"]
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (2, 1, 1)
    # s holds [w1, w2] and [w3]: t takes either list and puts its workers twice (rev, then
    # ^^); either order: 4 markings, 4 arcs, 1 dead (both taken), as cpncheck counts them
    bound = cpn_file(declarations, [("P1", "s", "WS", "1`[w1, w2] ++ 1`[w3]"),
                                    ("P2", "p", "W", "")],
                     [("T1", "t", "", "")],
                     [("A1", "PtoT", "T1", "P1", "ws"),
                      ("A2", "TtoP", "T1", "P2", "rev ws ^^ ws")])
    imported = read_cpn(bound)
    assert imported.complete, imported.report.text()
    ours, theirs = spaces(tmp_path, bound)
    assert ours == theirs == (4, 4, 1)
    simulator = Simulator(imported.net, seed=1)
    simulator.run(until=1.0)
    assert sorted(t.value for t in simulator.tokens("p")) == ["w1", "w1", "w2", "w2", "w3",
                                                              "w3"]
    large = cpn_file(colset("C1", "INT", "<int/>") + colset(
        "C2", "L", "<list><id>INT</id></list>") + var("V1", "L", "l"),
        [("P1", "s", "L", "1`[1, 2]"), ("P2", "p", "INT", "")], [("T1", "t", "", "")],
        [("A1", "PtoT", "T1", "P1", "l"), ("A2", "TtoP", "T1", "P2", "rev l")])
    imported = read_cpn(large)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=1.0)
    assert sorted(t.value for t in simulator.tokens("p")) == [1, 2]
    assert spaces(tmp_path, large) == ((2, 1, 1), (2, 1, 1))


def test_multiset_difference_inside_functions_follows_cpn_tools_ms_sml():
    """``ms1 -- ms2`` (CPN Tools' ms.sml, multisets as lists): one occurrence of each
    element of ms2 taken out of ms1, the first from the left; Subtract when ms2 is not in
    ms1. Values worked out by hand."""
    imported = read_cpn(declarations_net([
        "val a = length ([1, 2, 3, 2] -- [2, 3]);",  # [1, 2]
        "val b = hd ([2, 1, 2] -- [2]);",  # [1, 2]: the first 2 goes
        "fun rem (ms, x) = ms -- [x];",
        "val c = length (rem ([4, 4], 4));",
        "val d = (rem ([1], 2); 0) handle Subtract => 7;",
        "val e = length ((1`5 ++ 2`6) -- 1`6);",  # [5, 6]
    ]))
    assert imported.complete, imported.report.text()
    assert {k: imported.net.declarations[k] for k in "abcde"} == {
        "a": 2, "b": 1, "c": 1, "d": 7, "e": 2}


def test_a_multiset_difference_in_a_marking_and_on_an_arc_is_the_multiset_it_leaves():
    """``1`1++1`2++1`3 -- 1`2`` (++ and -- both infix 6, from the left) leaves 1 and 3;
    ``others i = [1, 2, 3] -- [i]`` on an arc of a small colour set gives the two others."""
    declarations = colset("C1", "SMALL", "<int><with><ml>1</ml><ml>3</ml></with></int>") + var(
        "V1", "SMALL", "i") + ml("F1", "fun others i = [1, 2, 3] -- [i];")
    for init, arc, expected in (("1`1++1`2++1`3 -- 1`2", "i", [1, 3]),
                                ("1`2", "others i", [1, 3])):
        text = cpn_file(declarations, [("P1", "P", "SMALL", init), ("P2", "Q", "SMALL", "")],
                        [("T1", "T", "", "")],
                        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", arc)])
        imported = read_cpn(text)
        assert imported.complete, imported.report.text()
        simulator = Simulator(imported.net, seed=0)
        simulator.run(until=10.0)
        assert sorted(t.value for t in simulator.tokens("Q")) == expected, (init, arc)


def test_the_product_of_multisets_of_a_product_colour_set_as_cpn_tools_builds_it(tmp_path):
    """``PR.mult (ms1, ms2)``: every pair, the first component outermost (CPN Tools'
    create_decl.sml): [(1,3), (1,4), (2,3), (2,4)] for ([1,2], [3,4]). On an arc,
    ``Mes s = PR.mult (1`s, D.all () -- 1`s)`` sends s to each other site, as the
    distributed database does: 1 moves to Q as (1,2) and (1,3); 2 states, 1 arc, 1 dead,
    as cpncheck counts."""
    declarations = (colset("C1", "D", "<int><with><ml>1</ml><ml>3</ml></with></int>")
                    + colset("C2", "PR", "<product><id>D</id><id>D</id></product>")
                    + var("V1", "D", "s")
                    + ml("F1", "fun Mes s = PR.mult (1`s, D.all () -- 1`s);")
                    + ml("F2", "val m = PR.mult ([1, 2], [3, 4]);")
                    + ml("F3", "val m1 = #2 (List.nth (m, 1)) * 10 + #1 (List.nth (m, 2));"))
    text = cpn_file(declarations, [("P1", "P", "D", "1`1"), ("P2", "Q", "PR", "")],
                    [("T1", "T", "", "")],
                    [("A1", "PtoT", "T1", "P1", "s"), ("A2", "TtoP", "T1", "P2", "Mes s")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert imported.net.declarations["m1"] == 42 and len(imported.net.declarations["m"]) == 4
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (2, 1, 1)
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("Q")) == [(1, 2), (1, 3)]
