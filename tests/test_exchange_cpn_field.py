"""CPN Tools files as found in the field: older formats, CPN ML forms, tolerated faults.

Each test writes a small file by hand (the XML CPN Tools 1.x-4.x writes, trimmed to what
the loader reads), imports it, and checks the net against values derived by hand or,
where the net is finite, against the state space cpncheck builds from the same file.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from cpncheck.coloured import ColouredNet
from cpncheck.net import CPNNet
from cpncheck.statespace import build_state_space

from tcpn.petrinets.engine.simulator import Simulator
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.cpnml import MLToPython, parse_ml
from tcpn.petrinets.exchange.smlcheck import check_with_sml
from tcpn.petrinets.statespace.space import explore


def _text(tag: str, ident: str, text: str) -> str:
    return f'<{tag} id="{ident}"><text>{text}</text></{tag}>' if text else ""


def cpn_file(declarations: str, places: list[tuple[str, str, str, str]],
             transitions: list[tuple[str, str, str, str]],
             arcs: list[tuple[str, str, str, str, str]], *, file_format: str = "6",
             extra: str = "", instances: str | None = None) -> str:
    """A one-page CPN Tools file. places: (id, name, colour set, initial marking);
    transitions: (id, name, guard, code); arcs: (id, orientation, transition, place, text)."""
    body = []
    for pid, name, colour, init in places:
        body.append(f'<place id="{pid}"><posattr x="0" y="0"/><text>{name}</text>'
                    f'<type id="{pid}t"><text>{colour}</text></type>'
                    f'{_text("initmark", pid + "i", init)}</place>')
    for tid, name, guard, code in transitions:
        body.append(f'<trans id="{tid}"><text>{name}</text>{_text("cond", tid + "g", guard)}'
                    f'{_text("code", tid + "c", code)}</trans>')
    for aid, orientation, tid, pid, text in arcs:
        body.append(f'<arc id="{aid}" orientation="{orientation}"><transend idref="{tid}"/>'
                    f'<placeend idref="{pid}"/>{extra if aid == arcs[0][0] else ""}'
                    f'{_text("annot", aid + "a", text)}</arc>')
    instances = instances if instances is not None else \
        '<instances><instance id="I1" page="PG"/></instances>'
    return (f'<?xml version="1.0" encoding="iso-8859-1"?>\n<workspaceElements>'
            f'<generator tool="CPN Tools" version="1.5.33" format="{file_format}"/><cpnet>'
            f'<globbox>{declarations}</globbox><page id="PG"><pageattr name="Main"/>'
            f'{"".join(body)}</page>{instances}</cpnet></workspaceElements>')


def colset(ident: str, name: str, body: str) -> str:
    return f'<color id="{ident}"><id>{name}</id>{body}</color>'


def var(ident: str, colour: str, *names: str) -> str:
    ids = "".join(f"<id>{n}</id>" for n in names)
    return f'<var id="{ident}"><type><id>{colour}</id></type>{ids}</var>'


def ml(ident: str, text: str) -> str:
    return f'<ml id="{ident}">{text.replace("<", "&lt;").replace(">", "&gt;")}</ml>'


def spaces(tmp_path: Path, text: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(nodes, arcs, dead markings) from tcpn's import and from cpncheck, same file."""
    path = tmp_path / "net.cpn"
    path.write_text(text, encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    ours = explore(imported.net, clock="absolute")
    theirs = build_state_space(ColouredNet(CPNNet(str(path))))
    assert ours.complete and theirs.complete
    return ((len(ours), ours.n_edges, len(ours.dead_markings())),
            (theirs.n_nodes, theirs.n_arcs, len(theirs.dead)))


# -- dining philosophers as CPN Tools 1.5 writes them: format 5, index colour sets --------------
PHILOSOPHERS = (
    ml("D1", "val n = 5;")
    + colset("D2", "PH", "<index><ml>1</ml><ml>n</ml><id>ph</id></index>")
    + colset("D3", "CS", "<index><ml>1</ml><ml>n</ml><id>cs</id></index>")
    + var("D4", "PH", "p")
    + ml("D5", "fun Chopsticks(ph(i)) = 1`cs(i) ++ 1`cs(if i=n then 1 else i+1);")
)


def philosophers(**options: str) -> str:
    return cpn_file(
        PHILOSOPHERS,
        [("P1", "Think", "PH", "PH.all()"), ("P2", "Eat", "PH", ""),
         ("P3", "Unused Chopsticks", "CS", "CS.all()")],
        [("T1", "Take Chopsticks", "", ""), ("T2", "Put Down Chopsticks", "", "")],
        [("A1", "PtoT", "T1", "P1", "p"), ("A2", "PtoT", "T1", "P3", "Chopsticks(p)"),
         ("A3", "TtoP", "T1", "P2", "p"), ("A4", "PtoT", "T2", "P2", "p"),
         ("A5", "TtoP", "T2", "P1", "p"), ("A6", "TtoP", "T2", "P3", "Chopsticks(p)")],
        file_format="5", **options)


def test_format_5_philosophers_have_the_state_space_cpncheck_builds(tmp_path):
    ours, theirs = spaces(tmp_path, philosophers())
    # 5 philosophers: the independent sets of a 5-cycle, Lucas number L(5) = 11
    assert ours == theirs and ours[0] == 11 and ours[2] == 0


def test_format_5_and_index_colour_sets_are_reported_as_notes():
    imported = read_cpn(philosophers())
    notes = [str(item) for item in imported.report.notes]
    assert any("format 5" in n and "read as format 6" in n for n in notes)
    assert any("index ph with 1..5 imported as the integers 1..5" in n for n in notes)
    take = [a for a in imported.net.arcs if a.transition == "Take_Chopsticks"
            and a.place == "Unused_Chopsticks"]
    assert [a.inscription for a in take] == ["p", "1 if p == n else p + 1"]


def test_duplicate_bendpoint_id_and_instances_page_attribute_are_tolerated_and_reported():
    bend = '<bendpoint id="A2" serial="1"><posattr x="1" y="1"/></bendpoint>'
    text = philosophers(extra=bend, instances='<instances id="IT" page="PG">'
                                              '<instance id="IX" trans="T9"/></instances>')
    imported = read_cpn(text)
    assert imported.complete and len(imported.net.transitions) == 2
    notes = {item.kind: str(item) for item in imported.report.notes}
    assert notes["id"].startswith("id 'A2' (A2 line 2, page Main): the id of this "
                                  "<bendpoint> is also the id of <arc> at line 2")
    assert "top page named on <instances>" in notes["instance"]


def test_duplicate_ids_on_two_places_still_refuse_naming_both():
    text = philosophers().replace('<place id="P2"', '<place id="P1"')
    with pytest.raises(Exception, match=r"duplicate id 'P1' on <place> \(first used on "
                                        r"<place> at line 2\)"):
        read_cpn(text)


# -- resource allocation: case on an input arc, enumerations -----------------------------------
def test_case_on_an_input_arc_gives_the_counts_cpncheck_gives(tmp_path):
    declarations = (colset("D1", "U", "<enum><id>p</id><id>q</id></enum>")
                    + colset("D2", "E", "<enum><id>e</id></enum>") + var("D3", "U", "x"))
    text = cpn_file(
        declarations,
        [("P1", "Waiting", "U", "2`p ++ 1`q"), ("P2", "Resources", "E", "3`e"),
         ("P3", "Busy", "U", "")],
        [("T1", "Take", "", ""), ("T2", "Release", "", "")],
        [("A1", "PtoT", "T1", "P1", "x"),
         ("A2", "PtoT", "T1", "P2", "case x of p => 2`e | q => 1`e"),
         ("A3", "TtoP", "T1", "P3", "x"), ("A4", "PtoT", "T2", "P3", "x"),
         ("A5", "TtoP", "T2", "P1", "x"),
         ("A6", "TtoP", "T2", "P2", "if x = p then 2`e else 1`e")])
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs


# -- lists as initial markings ------------------------------------------------------------------
def test_a_list_initial_marking_is_a_multiset(tmp_path):
    declarations = (colset("D1", "INT", "<int/>") + ml("D2", "val start = [1, 2, 2];")
                    + var("D3", "INT", "i"))
    text = cpn_file(
        declarations,
        [("P1", "A", "INT", "[5,6,7]"), ("P2", "B", "INT", "start"), ("P3", "C", "INT", "[4]")],
        [("T1", "move", "[i &lt; 7]", "")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "i")])
    imported = read_cpn(text)
    assert sorted(t.value for t in imported.net.places["A"].initial) == [5, 6, 7]
    assert sorted(t.value for t in imported.net.places["B"].initial) == [1, 2, 2]
    assert [t.value for t in imported.net.places["C"].initial] == [4]
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (4, 4, 1)  # 5 and 6 move in either order; 7 stays


# -- free variables, code segments ---------------------------------------------------------------
def test_a_free_variable_ranges_over_its_colour_set(tmp_path):
    declarations = (colset("D1", "SMALL", "<int><with><ml>1</ml><ml>3</ml></with></int>")
                    + colset("D2", "UNIT", "<unit/>") + var("D3", "SMALL", "k"))
    text = cpn_file(declarations, [("P1", "go", "UNIT", "1`()"), ("P2", "out", "SMALL", "")],
                    [("T1", "pick", "[k &lt;&gt; 2]", "")],
                    [("A1", "PtoT", "T1", "P1", "()"), ("A2", "TtoP", "T1", "P2", "k")])
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (3, 2, 2)  # k = 1 or 3


def test_side_effect_code_is_left_out_and_its_transition_kept():
    declarations = colset("D1", "UNIT", "<unit/>")
    code = ("input ();\noutput ();\naction\n"
            "(MSC.addEvent(msc, &quot;a&quot;, &quot;b&quot;);\nprint &quot;fired&quot;);")
    text = cpn_file(declarations, [("P1", "go", "UNIT", "1`()")],
                    [("T1", "fire", "", code)], [("A1", "PtoT", "T1", "P1", "()")])
    imported = read_cpn(text)
    assert list(imported.net.transitions) == ["fire"]
    (item,) = imported.report.unsupported
    assert (item.kind, item.name, item.element_id, item.page) == (
        "code segment", "fire", "T1c", "Main")
    assert "acts only by side effects" in item.reason


def test_code_with_a_sequence_keeps_the_result_and_reports_the_rest():
    declarations = (colset("D1", "INT", "<int/>") + var("D2", "INT", "i", "j"))
    code = "input (i);\noutput (j);\naction\n(MSC.addEvent(msc, i); i * 10)"
    text = cpn_file(declarations, [("P1", "a", "INT", "1`4"), ("P2", "b", "INT", "")],
                    [("T1", "scale", "", code)],
                    [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "j")])
    imported = read_cpn(text)
    action = imported.net.transitions["scale"].action
    assert action(i=4) == {"j": 40}
    assert [item.kind for item in imported.report.unsupported] == ["code segment"]


# -- the translator's new forms, evaluated ---------------------------------------------------------
def evaluate(text: str, **values: object) -> object:
    translator = MLToPython(variables=frozenset(values), functions={"f": 1},
                            enum_constants=frozenset({"red", "green"}))
    python = translator.text(parse_ml(text, "test"), "test")
    return eval(python, {"f": lambda x: x * 2, **values})


@pytest.mark.parametrize(("text", "values", "expected"), [
    ("case q of [] => 0 | [x] => x | x::y::_ => x + y", {"q": (4, 5, 6)}, 9),
    ("case q of [] => 0 | [x] => x | x::y::_ => x + y", {"q": (4,)}, 4),
    ("case c of red => 1 | _ => 2", {"c": "green"}, 2),
    ("case (a, b) of (0, y) => y | (x, _) => x", {"a": 0, "b": 7}, 7),
    ("let val (x, y) = p fun g z = z + x in g y end", {"p": (1, 2)}, 3),
    ("List.filter (fn (a, b) => a > 1) l", {"l": ((1, "x"), (2, "y"))}, ((2, "y"),)),
    ("List.map f l", {"l": (1, 2)}, (2, 4)),
    ("map #2 l", {"l": ((1, "x"), (2, "y"))}, ("x", "y")),
    ("mem l 3 andalso not (mem l 4)", {"l": (1, 3)}, True),
    ("rm 2 l", {"l": (1, 2, 3, 2)}, (1, 3, 2)),
    ("List.exists (fn x => x > 2) l", {"l": (1, 3)}, True),
    # a conditional body in a filter (a field file: it was written as an unparenthesised
    # conditional in a comprehension's if, which Python does not parse)
    ("List.filter (fn x => if List.exists (fn y => y = x) m = true then false else true) l",
     {"l": (1, 2, 3), "m": (2,)}, (1, 3)),
    ("List.map (fn x => if x > 1 then x else 0) l", {"l": (1, 2)}, (0, 2)),
    # SML's labels: a numeral label ends where a letter starts; '#' may stand apart
    ("#2p = 5", {"p": (1, 5)}, True),
    ("#1(# 1 q)", {"q": ((7, 8), 9)}, 7),
    ("1`a ++ 2`b", {"a": "u", "b": "v"}, ("u", "v", "v")),
    ("ms_to_col (1`a)", {"a": 8}, 8),
])
def test_new_forms_compute_what_cpn_ml_computes(text, values, expected):
    assert evaluate(text, **values) == expected


def test_no_matching_rule_raises():
    with pytest.raises(ValueError, match="no rule matches"):
        evaluate("case q of [] => 0", q=(1,))


def test_a_record_pattern_on_an_input_arc_binds_its_fields(tmp_path):
    """``{id=i, case=c, state=sel}`` on an input arc binds ``i`` (CPN Tools binds a record
    pattern's variables), checks ``c`` against the binding of another arc and ``state``
    against the constant; the state space equals cpncheck's."""
    declarations = (
        colset("D1", "INT", "<int/>")
        + colset("D2", "STATE", "<enum><id>sel</id><id>no</id></enum>")
        + colset("D3", "OBJ", "<record><recordfield><id>id</id><id>INT</id></recordfield>"
                 "<recordfield><id>case</id><id>INT</id></recordfield>"
                 "<recordfield><id>state</id><id>STATE</id></recordfield></record>")
        + var("D4", "INT", "i", "c"))
    text = cpn_file(
        declarations,
        [("P1", "objects", "OBJ", "1`{id=1, case=7, state=sel} ++ 1`{id=2, case=8, state=sel}"
                                  " ++ 1`{id=3, case=7, state=no}"),
         ("P2", "cases", "INT", "1`7"), ("P3", "taken", "INT", "")],
        [("T1", "take", "", "")],
        [("A1", "PtoT", "T1", "P2", "c"), ("A2", "PtoT", "T1", "P1",
                                           "{id=i, case=c, state=sel}"),
         ("A3", "TtoP", "T1", "P3", "i"), ("A4", "TtoP", "T1", "P2", "c")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    from tcpn.petrinets import simulate
    fired = simulate(imported.net, seed=1, max_firings=10)
    assert [t.value for t in fired.marking["taken"]] == [1]  # id 3 is not selected
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs
    # exported, the tuple pattern is the record pattern again, and reads back the same
    exported = to_cpn(imported.net, layout="grid")
    assert "{id=i, case=c, state=sel}" in exported
    again = read_cpn(exported)
    assert again.complete, again.report.text()
    assert [t.value for t in simulate(again.net, seed=1, max_firings=10).marking["taken"]] \
        == [1]


def test_a_record_pattern_on_a_double_arc_of_a_timed_place_binds_too():
    # a double arc on a timed place is an input and an output arc: the input binds by the
    # pattern, the output puts the record back (re-stamped)
    declarations = (
        colset("D1", "INT", "<int/>")
        + colset("D2", "OBJ", "<timed/><record><recordfield><id>id</id><id>INT</id>"
                 "</recordfield><recordfield><id>n</id><id>INT</id></recordfield></record>")
        + var("D3", "INT", "i"))
    text = cpn_file(
        declarations,
        [("P1", "objects", "OBJ", "1`{id=1, n=5} ++ 1`{id=2, n=6}"), ("P2", "seen", "INT", "")],
        [("T1", "look", "", "")],
        [("A1", "BOTHDIR", "T1", "P1", "{id=i, n=5}"), ("A2", "TtoP", "T1", "P2", "i")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    from tcpn.petrinets import simulate
    marking = simulate(imported.net, seed=1, max_firings=3).marking
    assert [t.value for t in marking["seen"]] == [1, 1, 1]
    assert sorted(t.value.id for t in marking["objects"]) == [1, 2]


def test_a_constant_coefficient_on_an_input_arc_still_binds():
    """``n`x`` with ``val n = 3``: three equal tokens bind ``x``; only 2 has three."""
    declarations = (colset("D1", "INT", "<int/>") + var("D2", "INT", "x")
                    + ml("D3", "val n = 3;"))
    text = cpn_file(declarations, [("P1", "a", "INT", "1`1 ++ 3`2"), ("P2", "b", "INT", "")],
                    [("T1", "take", "", "")],
                    [("A1", "PtoT", "T1", "P1", "n`x"), ("A2", "TtoP", "T1", "P2", "x")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    from tcpn.petrinets import simulate
    assert [t.value for t in simulate(imported.net, seed=1).marking["b"]] == [2]
    # (cpncheck does not bind a variable under a named coefficient: no space to compare)


def test_smls_math_structure_and_cpn_tools_bernoulli_compute_and_export():
    """``Math.sqrt``, ``Math.pi``, ``Math.atan2`` (SML's Math) and CPN Tools' ``bernoulli``
    (1 with probability p, else 0): read, computed, and written back as they were."""
    declarations = (colset("D1", "INT", "<int/>") + colset("D2", "R", "<real/>")
                    + var("D3", "R", "x")
                    + ml("D4", "fun dist (a, b) = Math.sqrt(a * a + b * b);")
                    + ml("D5", "val half = Math.atan2(1.0, 1.0) * 4.0 / Math.pi;"))
    text = cpn_file(declarations,
                    [("P1", "a", "R", "1`3.0"), ("P2", "b", "R", ""), ("P3", "coin", "INT", "")],
                    [("T1", "measure", "", "")],
                    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P2",
                                                       "dist (x, 4.0) * half"),
                     ("A3", "TtoP", "T1", "P3", "bernoulli(1.0) + bernoulli(0.0)")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    from tcpn.petrinets import simulate
    marking = simulate(imported.net, seed=1).marking
    assert [t.value for t in marking["b"]] == [pytest.approx(5.0)]
    assert [t.value for t in marking["coin"]] == [1]
    exported = to_cpn(imported.net, layout="grid")
    assert "Math.sqrt(" in exported  # (the constant half is written as its value, 1.0)
    assert "bernoulli(1.0) + bernoulli(0.0)" in exported
    again = read_cpn(exported)
    assert again.complete, again.report.text()


def test_a_subset_listed_by_its_members_binds_a_free_variable_to_them(tmp_path):
    """``colset BANK = subset PAY with [Card, Check]`` (its <with> lists members, not
    bounds) and a variable of it bound by no arc: CPN Tools binds it to each member of the
    subset; the state space equals cpncheck's."""
    declarations = (colset("D1", "PAY", "<enum><id>Card</id><id>Cash</id><id>Check</id>"
                                        "</enum>")
                    + colset("D2", "BANK", "<subset><id>PAY</id><with><ml>[Card, Check]</ml>"
                                           "</with></subset>")
                    + colset("D3", "UNIT", "<unit/>") + var("D4", "BANK", "b"))
    text = cpn_file(declarations, [("P1", "go", "UNIT", "1`()"), ("P2", "paid", "PAY", "")],
                    [("T1", "pay", "", "")],
                    [("A1", "PtoT", "T1", "P1", "()"), ("A2", "TtoP", "T1", "P2", "b")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (3, 2, 2)  # Card or Check, never Cash


def test_clausal_function_recurses(tmp_path):
    declarations = (colset("D1", "INT", "<int/>") + var("D2", "INT", "n", "m")
                    + ml("D3", "fun fact 0 = 1\n  | fact k = k * fact (k - 1);"))
    text = cpn_file(declarations, [("P1", "a", "INT", "1`5"), ("P2", "b", "INT", "")],
                    [("T1", "compute", "", "")],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P2", "fact n")])
    imported = read_cpn(text)
    assert imported.complete
    assert imported.net.declarations["fact"](5) == 120


def test_a_chart_call_as_result_gives_the_outputs_a_neutral_value():
    declarations = (colset("D1", "INT", "<int/>") + colset("D2", "STRING", "<string/>")
                    + colset("D3", "INTxSTRING", "<product><id>INT</id><id>STRING</id>"
                                                 "</product>")
                    + var("D4", "INT", "n") + var("D5", "STRING", "evt"))
    code = ("input (n);\noutput evt;\naction\n"
            "MSC.startEvent(msc, &quot;Sender&quot;, Int.toString n)")
    text = cpn_file(declarations, [("P1", "a", "INT", "1`4"), ("P2", "b", "INTxSTRING", "")],
                    [("T1", "send", "", code)],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P2", "(n, evt)")])
    imported = read_cpn(text)
    assert list(imported.net.transitions) == ["send"]
    assert imported.net.transitions["send"].action(n=4) == {"evt": ""}
    (item,) = imported.report.unsupported
    assert "MSC.startEvent draws a message sequence chart (GUI only)" in item.reason
    assert "output(s) evt set to ''" in item.reason


def test_a_list_pattern_whose_parts_another_arc_binds_compares_with_them(tmp_path):
    declarations = (colset("D1", "INT", "<int/>") + colset("D2", "Q", "<list><id>INT</id></list>")
                    + var("D3", "INT", "k") + var("D4", "Q", "rest"))
    text = cpn_file(
        declarations,
        [("P1", "queue", "Q", "1`[2,1,2]"), ("P2", "ready", "INT", "1`1 ++ 1`2"),
         ("P3", "done", "INT", "")],
        [("T1", "serve", "", "")],
        [("A1", "PtoT", "T1", "P1", "k::rest"), ("A2", "PtoT", "T1", "P2", "k"),
         ("A3", "TtoP", "T1", "P1", "rest"), ("A4", "TtoP", "T1", "P3", "k")])
    imported = read_cpn(text)
    assert imported.net.transitions["serve"].guard == "len(k_rest) >= 1 and k_rest[0] == k"
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (3, 2, 1)  # serves 2, then 1; the last 2 finds no ready 2


def test_the_empty_code_placeholder_is_no_code_however_spaced():
    declarations = colset("D1", "UNIT", "<unit/>")
    text = cpn_file(declarations, [("P1", "go", "UNIT", "1`()")],
                    [("T1", "fire", "[]", "input();\noutput();\n  action();  ")],
                    [("A1", "PtoT", "T1", "P1", "()")])
    imported = read_cpn(text)
    assert imported.complete and imported.net.transitions["fire"].action is None


def test_a_recursive_function_drawing_at_random_is_expanded_at_each_call():
    declarations = (colset("D1", "INT", "<int/>")
                    + colset("D2", "L", "<list><id>INT</id></list>") + var("D3", "INT", "n")
                    + ml("D4", "fun draws 0 = []\n"
                               "  | draws k = discrete(1, 6) :: draws (k - 1);"))
    text = cpn_file(declarations, [("P1", "a", "INT", "1`3"), ("P2", "b", "L", "")],
                    [("T1", "roll", "", "")],
                    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P2", "draws n")])
    imported = read_cpn(text)
    assert imported.complete
    assert "expanded at each call" in str(imported.report.notes[-1])
    from tcpn.petrinets import simulate
    result = simulate(imported.net, seed=5, until=1)
    (token,) = result.marking["b"]
    assert len(token.value) == 3 and all(1 <= v <= 6 for v in token.value)


# -- CPN ML as CPN Tools accepts it: bare guard lists, {} the unit value, let with no decs --
def _forms_net(guard: str, unit: str, body: str) -> str:
    """Tokens 1..5 on P; T moves those the guard keeps to Q, each taking a unit token
    from U (``unit`` writes the unit value) and putting ``body`` (of i) on Q."""
    return cpn_file(
        colset("D1", "INT", "<int/>") + colset("D2", "UNIT", "<unit/>")
        + var("D3", "INT", "i"),
        [("P1", "P", "INT", "1`1++1`2++1`3++1`4++1`5"), ("P2", "Q", "INT", ""),
         ("P3", "U", "UNIT", f"3`{unit}")],
        [("T1", "T", guard.replace("<", "&lt;").replace(">", "&gt;"), "")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "PtoT", "T1", "P3", unit),
         ("A3", "TtoP", "T1", "P2", body)])


def test_guard_lists_the_empty_record_and_an_empty_let_read_as_cpn_tools_reads_them(tmp_path):
    """``i > 1, i < 5`` (a bare list) and ``[i > 1, i < 5]`` are the conjunction; ``{}``
    is ``()``; ``let in e end`` is ``e``: each net explores as the one written with
    ``andalso``, ``()`` and ``e``, whose space cpncheck builds alike."""
    plain = _forms_net("i > 1 andalso i < 5", "()", "i")
    reference, theirs = spaces(tmp_path, plain)
    assert reference == theirs
    for guard, unit, body in (("i > 1, i < 5", "()", "i"), ("[i > 1, i < 5]", "{}", "i"),
                              ("[i > 1, i < 5]", "()", "let in i end")):
        path = tmp_path / "forms.cpn"
        path.write_text(_forms_net(guard, unit, body), encoding="iso-8859-1")
        imported = read_cpn(path)
        assert imported.complete, imported.report.text()
        space = explore(imported.net, clock="absolute")
        assert (len(space), space.n_edges, len(space.dead_markings())) == reference, guard


def _functions_net(body: str) -> str:
    """The forms net with ``add`` over a pair and ``first`` of one (tuple) argument
    declared, ``body`` (of i) on Q."""
    text = _forms_net("i > 1 andalso i < 5", "()", body)
    functions = (ml("F1", "fun add (a, b) = a + b;")
                 + ml("F2", "fun first t = #1 t;"))
    return text.replace(var("D3", "INT", "i"), var("D3", "INT", "i") + functions, 1)


def test_a_function_over_a_tuple_takes_a_tuple_value_and_one_argument_takes_a_tuple(tmp_path):
    """SML functions take one argument: ``add`` (declared over a pair) applied to a
    pair-valued expression, and ``first`` (declared over one value) applied to a written
    pair, explore as ``i + 1``, whose space cpncheck builds alike."""
    reference, theirs = spaces(tmp_path, _forms_net("i > 1 andalso i < 5", "()", "i + 1"))
    assert reference == theirs
    for body in ("add (i, 1)", "let val p = (i, 1) in add p end", "first (i + 1, 7)",
                 "add (first (i, 0), first (1, 2))"):
        path = tmp_path / "functions.cpn"
        path.write_text(_functions_net(body), encoding="iso-8859-1")
        imported = read_cpn(path)
        assert imported.complete, imported.report.text()
        space = explore(imported.net, clock="absolute")
        assert (len(space), space.n_edges, len(space.dead_markings())) == reference, body


# -- a guard v = e binds v when no input arc does, as CPN Tools' binding calculation ------
def _bound_net(guard: str) -> str:
    """Tokens 1..5 on P; T takes one (i) and puts j on Q, j bound by the guard only."""
    return cpn_file(
        colset("D1", "INT", "<int/>") + var("D3", "INT", "i", "j"),
        [("P1", "P", "INT", "1`1++1`2++1`3++1`4++1`5"), ("P2", "Q", "INT", "")],
        [("T1", "T", guard.replace("<", "&lt;").replace(">", "&gt;"), "")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "j")])


@pytest.mark.parametrize(("guard", "counted"), [
    ("j = i * 2", (32, 80, 1)),  # 5 tokens each moved or not: 2^5 states, 5 * 2^4 arcs
    ("[j = i * 2, j > 4]", (8, 12, 1)),  # only i = 3, 4, 5 move: 2^3 states, 3 * 2^2 arcs
    ("[i > 2, i + 10 = j]", (8, 12, 1)),
])
def test_a_guard_equation_binds_a_variable_no_input_arc_binds(tmp_path, guard, counted):
    """j (of INT, too large to range over) is bound by the guard's j = e: the state space
    is the one counted by hand and the one cpncheck builds; Q gets the values of e."""
    ours, theirs = spaces(tmp_path, _bound_net(guard))
    assert ours == theirs == counted
    simulator = Simulator(read_cpn(_bound_net(guard)).net, seed=0)
    simulator.run(until=10.0)
    expected = {"j = i * 2": [2, 4, 6, 8, 10], "[j = i * 2, j > 4]": [6, 8, 10],
                "[i > 2, i + 10 = j]": [13, 14, 15]}[guard]
    assert sorted(t.value for t in simulator.tokens("Q")) == expected
    # exported, the binding is a code segment giving j, which SML/NJ type-checks
    exported = to_cpn(read_cpn(_bound_net(guard)).net)
    assert "output (j);" in exported
    if shutil.which("sml") is not None:
        assert check_with_sml(exported).errors == []


def test_a_guard_binding_a_random_draw_draws_once_per_occurrence_and_a_test_of_it_is_named():
    """j = discrete (1, 6): each occurrence draws j (reproducible from the seed); a guard
    that also tests the drawn j is left out, named (the draw would decide enabling)."""
    imported = read_cpn(_bound_net("j = discrete (1, 6)"))
    assert imported.complete, imported.report.text()
    assert "guard binds j" in imported.report.text()
    runs = []
    for _ in range(2):
        simulator = Simulator(imported.net, seed=7)
        simulator.run(until=10.0)
        runs.append(sorted(t.value for t in simulator.tokens("Q")))
    assert runs[0] == runs[1] and len(runs[0]) == 5 and all(1 <= v <= 6 for v in runs[0])
    refused = read_cpn(_bound_net("[j = discrete (1, 6), j > 2]"))
    assert "a guard that draws random numbers" in refused.report.text()


# -- a guard p = e binds the variables of a tuple or record pattern p, in CPN Tools' order --
def _pattern_net(guard: str, colour: str = "PAIR", init: str = "1`(1,2)++1`(3,4)++1`(5,1)",
                 out: str = "z", small: bool = True) -> str:
    """T takes p (a pair or record of S) and puts z on Q; x, y and z are bound by the
    guard only. S is 0..9 when ``small`` (cpncheck, which binds no guard pattern, tries
    every value of them, which must give the same space), else int (too large to try)."""
    return cpn_file(
        colset("D1", "S", "<int><with><ml>0</ml><ml>9</ml></with></int>" if small
               else "<int/>")
        + colset("D2", "PAIR", "<product><id>S</id><id>S</id></product>")
        + colset("D3", "REC", "<record><recordfield><id>a</id><id>S</id></recordfield>"
                              "<recordfield><id>b</id><id>S</id></recordfield></record>")
        + var("D4", "S", "x", "y", "z") + var("D5", colour, "p", "q"),
        [("P1", "P", colour, init), ("P2", "Q", "S" if out == "z" else colour, "")],
        [("T1", "T", guard.replace("<", "&lt;").replace(">", "&gt;"), "")],
        [("A1", "PtoT", "T1", "P1", "p"), ("A2", "TtoP", "T1", "P2", out)])


_RECORDS = {"colour": "REC", "init": "1`{a=1,b=2}++1`{a=3,b=4}++1`{a=5,b=4}"}


@pytest.mark.parametrize(("guard", "options", "counted", "on_q"), [
    # 3 tokens, each moved or not: 2^3 states, 3 * 2^2 arcs; z = x + y
    ("[(x, y) = p, z = x + y]", {}, (8, 12, 1), [3, 6, 7]),
    # listed before the conjunct binding x and y: bound once they are
    ("[z = x + y, (x, y) = p]", {}, (8, 12, 1), [3, 6, 7]),
    # a constant in the pattern is a test: only (5, 1) moves
    ("[(x, 1) = p, z = x]", {}, (2, 1, 1), [5]),
    # the pattern on the right, a later test of what it binds
    ("[p = (x, y), z = y, x > 2]", {}, (4, 4, 1), [1, 4]),
    # a record pattern, its fields in any order
    ("[{b=y, a=x} = p, z = x + y, z > 5]", _RECORDS, (4, 4, 1), [7, 9]),
    # p = (x, y) binds x and y, then (x, y) = (z, z) binds z = x and tests z = y
    ("[(x, y) = (z, z), p = (x, y)]", {"init": "1`(1,2)++1`(3,3)"}, (2, 1, 1), [3]),
])
def test_a_guard_pattern_binds_its_variables_once_what_it_reads_is_bound(
        tmp_path, guard, options, counted, on_q):
    """(x, y) = p or {a=x, b=y} = p binds x and y to p's parts, z = x + y then binds z:
    the space is the one counted by hand and cpncheck's; Q gets the values of z."""
    ours, theirs = spaces(tmp_path, _pattern_net(guard, **options))
    assert ours == theirs == counted
    # with x, y, z of int, too large to range over, the guard alone binds them
    imported = read_cpn(_pattern_net(guard, **options, small=False))
    assert imported.complete, imported.report.text()
    assert "guard binds" in imported.report.text()
    space = explore(imported.net, clock="absolute")
    assert (len(space), space.n_edges, len(space.dead_markings())) == counted
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("Q")) == on_q


def test_a_guard_pattern_binds_through_a_record_update_and_a_selector():
    """The Solidity models' form: {a=x, b=y} = p binds x, then q = REC.set_a p (x + y)
    binds q from it (a chain), put on Q; ``#b q`` reads the new record's field."""
    text = _pattern_net("[{a=x, b=y} = p, q = REC.set_b p (x + y), #b q > 5]", **_RECORDS,
                        out="q", small=False)
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=10.0)
    assert sorted((t.value.a, t.value.b) for t in simulator.tokens("Q")) == [(3, 7), (5, 9)]


def test_a_guard_equation_of_two_patterns_unbound_both_ranges_over_the_colour_sets(tmp_path):
    """(x, y) = (z, z) with nothing bound on either side: neither side binds, its variables
    (of a small colour set) range over it and the equation is a test, as cpncheck reads it:
    T takes either token with any z (x = y = z) and puts z on Q."""
    text = _pattern_net("(x, y) = (z, z)", init="1`(1,2)++1`(3,3)")
    imported = read_cpn(text)
    assert "free variable(s) x, y, z bound to every member" in imported.report.text()
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (76, 220, 55)


def test_an_empty_list_inside_an_input_pattern_matches_the_empty_list_only(tmp_path):
    """``(i, [])`` on an input arc takes (1, []) and leaves (2, [3]): one firing, two states,
    one dead marking, as cpncheck counts; it once made tcpn's compiler write bad code."""
    text = cpn_file(
        colset("D1", "INT", "<int/>") + colset("D2", "LIST", "<list><id>INT</id></list>")
        + colset("D3", "PAIR", "<product><id>INT</id><id>LIST</id></product>")
        + var("D4", "INT", "i"),
        [("P1", "P", "PAIR", "1`(1, []) ++ 1`(2, [3])"), ("P2", "Q", "INT", "")],
        [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "(i, [])"), ("A2", "TtoP", "T1", "P2", "i")])
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (2, 1, 1)
    simulator = Simulator(read_cpn(text).net, seed=0)
    simulator.run(until=10.0)
    assert [t.value for t in simulator.tokens("Q")] == [1]


@pytest.mark.parametrize(("pattern", "back", "counted", "on_q"), [
    ("x::xs", "", (3, 2, 2), {1, 4}),  # reads [1, 2, 3] or [4]: its head
    ("x::y::xs", "", (2, 1, 1), {1}),  # only [1, 2, 3] has two elements
    ("[x]", "", (2, 1, 1), {4}),  # only [4] has one
    ("x::xs", "xs", (3, 2, 2), {1, 4}),  # the tail put back beside the list read
])
def test_a_list_pattern_on_a_double_arc_of_an_untimed_place_reads_the_list(
        tmp_path, pattern, back, counted, on_q):
    """A double arc x::xs (a read arc, the place untimed) binds x and xs from a list token
    that has a head, as CPN Tools binds list patterns; C's one token lets T occur once:
    the space is cpncheck's and Q gets x."""
    arcs = [("A1", "BOTHDIR", "T1", "P1", pattern), ("A2", "TtoP", "T1", "P2", "x"),
            ("A3", "PtoT", "T1", "P3", "()")]
    text = cpn_file(
        colset("D0", "UNIT", "<unit/>")
        + colset("D1", "S", "<int><with><ml>0</ml><ml>9</ml></with></int>")
        + colset("D2", "L", "<list><id>S</id></list>")
        + var("D3", "S", "x", "y") + var("D4", "L", "xs"),
        [("P1", "P", "L", "1`[1,2,3] ++ 1`[4] ++ 1`[]"), ("P2", "Q", "S", ""),
         ("P3", "C", "UNIT", "1`()")],
        [("T1", "T", "", "")],
        arcs + ([("A4", "TtoP", "T1", "P1", back)] if back else []))
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == counted
    simulator = Simulator(read_cpn(text).net, seed=0)
    simulator.run(until=10.0)
    (token,) = simulator.tokens("Q")
    assert token.value in on_q


def test_a_multiset_function_of_unit_is_inlined_on_the_arc_calling_it(tmp_path):
    """``fun two () = 1`7 ++ 1`8`` called on an output arc as ``two ()``: each firing puts
    a 7 and an 8 (one firing from the one token on P: 2 states, 1 arc, as cpncheck)."""
    text = cpn_file(
        colset("D1", "INT", "<int/>") + var("D2", "INT", "i")
        + ml("D3", "fun two () = 1`7 ++ 1`8;"),
        [("P1", "P", "INT", "1`1"), ("P2", "Q", "INT", "")], [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "two ()")])
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (2, 1, 1)
    simulator = Simulator(read_cpn(text).net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("Q")) == [7, 8]


def test_declarations_left_in_an_errordecl_block_are_named_when_a_colour_set_is_missing():
    """A Design/CPN file converted with its declarations left in ``<errordecl>``: the
    place whose colour set it did not declare is left out, naming that block."""
    text = cpn_file("<errordecl>color INT = int;\nvar n : INT;</errordecl>",
                    [("P1", "P", "INT", "1`1")], [], [])
    imported = read_cpn(text)
    (item,) = imported.report.unsupported
    assert (item.kind, item.name, item.missing) == ("place", "P", "INT")
    assert re.search(r"colour set 'INT' is declared nowhere .*<errordecl> block", item.reason)


def test_a_multiset_function_of_several_clauses_gives_the_tokens_of_its_value(tmp_path):
    """``fun Init 1 = 1`1 | Init n = 1`n ++ Init (n - 1)`` (recursive, so not inlined):
    ``Init 3`` as an initial marking is 1, 2 and 3, and ``Init i`` on an output arc of a
    small colour set puts i, ..., 1; T moves the 2 to Q as 1 and 2: 2 states, 1 arc."""
    text = cpn_file(
        colset("D1", "SMALL", "<int><with><ml>1</ml><ml>3</ml></with></int>")
        + var("D2", "SMALL", "i")
        + ml("D3", "fun Init 1 = 1`1 | Init n = 1`n ++ Init (n - 1);"),
        [("P1", "P", "SMALL", "Init 3"), ("P2", "Q", "SMALL", "")],
        [("T1", "T", "i = 2", "")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "Init i")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert sorted(t.value for t in imported.net.places["P"].initial) == [1, 2, 3]
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs == (2, 1, 1)
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("Q")) == [1, 2]


@pytest.mark.parametrize(("code", "arc", "expected"), [
    ("input (j); output (k); action (j + 1);", "k", [3, 5]),  # k = 2i + 1
    ("input (i, j); action (j; ());", "j", [2, 4]),  # effects only: Q gets j = 2i
    ("input (j); output (k, m); action (j + 1, j - 1);", "k + m", [4, 8]),  # 2i+1 + 2i-1
])
def test_a_guard_binding_is_read_by_the_code_segment_before_its_outputs(code, arc, expected):
    """j = i * 2 is bound by the guard and read by the code segment: tokens 1 and 2 give
    the values worked out by hand; the export writes one code segment SML/NJ accepts."""
    text = cpn_file(
        colset("D1", "INT", "<int/>") + var("D3", "INT", "i", "j", "k", "m"),
        [("P1", "P", "INT", "1`1++1`2"), ("P2", "Q", "INT", "")],
        [("T1", "T", "j = i * 2", code)],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", arc)])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("Q")) == expected
    exported = to_cpn(imported.net)
    if shutil.which("sml") is not None:
        assert check_with_sml(exported).errors == []
    again = Simulator(read_cpn(exported).net, seed=0)
    again.run(until=10.0)
    assert sorted(t.value for t in again.tokens("Q")) == expected


def test_branches_of_several_tokens_on_an_output_arc_give_each_branchs_multiset(tmp_path):
    """``if i = 1 then 1`10 ++ 2`20 else 1`30`` and the same as a ``case``: 1 puts 10, 20,
    20 and 2 puts 30 on Q; each token moves or not: 4 states, 4 arcs, 1 dead, as cpncheck
    counts."""
    for arc in ("if i = 1 then 1`10 ++ 2`20 else 1`30",
                "case i of 1 =&gt; 1`10 ++ 2`20 | _ =&gt; 1`30"):
        text = cpn_file(
            colset("D1", "INT", "<int/>") + var("D2", "INT", "i"),
            [("P1", "P", "INT", "1`1 ++ 1`2"), ("P2", "Q", "INT", "")], [("T1", "T", "", "")],
            [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", arc)])
        ours, theirs = spaces(tmp_path, text)
        assert ours == theirs == (4, 4, 1), arc
        simulator = Simulator(read_cpn(text).net, seed=0)
        simulator.run(until=10.0)
        assert sorted(t.value for t in simulator.tokens("Q")) == [10, 20, 20, 30], arc


def test_a_function_whose_local_recursion_gives_a_multiset_gives_its_tokens_on_an_arc():
    """``every p`` calls its local ``walk``, whose value is written as a multiset: on an
    arc it is the tokens p - 1, ..., 0 (here 2, 1, 0), not one token holding a list."""
    text = cpn_file(
        colset("D1", "SMALL", "<int><with><ml>0</ml><ml>3</ml></with></int>")
        + var("D2", "SMALL", "i")
        + ml("D3", "fun every p = let fun walk 0 = 1`0 | walk k = 1`k ++ walk (k - 1)"
                   " in walk (p - 1) end;"),
        [("P1", "P", "SMALL", "1`3"), ("P2", "Q", "SMALL", "")], [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "every i")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("Q")) == [0, 1, 2]


def test_a_variable_of_a_list_colour_set_on_an_arc_is_the_multiset_of_its_elements(tmp_path):
    """CPN ML's multisets are lists, so ``l`` (a ``list SMALL``) on an arc of a SMALL place
    is the tokens it holds: [1, 2, 2] puts 1, 2 and 2 on Q (2 states, 1 arc, as cpncheck);
    on a place whose colour set is large (INT) likewise: a multiset arc, not one token
    holding a list."""
    def net(colour: str) -> str:
        return cpn_file(
            colset("D1", "SMALL", "<int><with><ml>0</ml><ml>3</ml></with></int>")
            + colset("D2", "INT", "<int/>")
            + colset("D3", "LS", f"<list><id>{colour}</id></list>") + var("D4", "LS", "l"),
            [("P1", "P", "LS", "1`[1, 2, 2]"), ("P2", "Q", colour, "")],
            [("T1", "T", "", "")],
            [("A1", "PtoT", "T1", "P1", "l"), ("A2", "TtoP", "T1", "P2", "l")])
    ours, theirs = spaces(tmp_path, net("SMALL"))
    assert ours == theirs == (2, 1, 1)
    simulator = Simulator(read_cpn(net("SMALL")).net, seed=0)
    simulator.run(until=10.0)
    assert sorted(t.value for t in simulator.tokens("Q")) == [1, 2, 2]
    for colour in ("SMALL", "INT"):
        imported = read_cpn(net(colour))
        assert imported.complete, imported.report.text()
        assert [a.multiset for a in imported.net.arcs] == [False, True]
        simulator = Simulator(imported.net, seed=0)
        simulator.run(until=10.0)
        assert sorted(t.value for t in simulator.tokens("Q")) == [1, 2, 2]
    assert spaces(tmp_path, net("INT"))[0] == (2, 1, 1)


def test_a_list_read_from_a_reference_cell_on_an_arc_is_the_multiset_it_holds_when_it_fires():
    """T1 sets the cell q to [1, 2, 2], then T2 puts ``getQ ()`` (``!q``) on Q: the tokens
    1, 2, 2 read when T2 fires (not the [] q held when the file was read), on a small
    colour set or a large one alike (a multiset arc)."""
    def net(colour: str) -> str:
        return cpn_file(
            colset("D1", "SMALL", "<int><with><ml>0</ml><ml>3</ml></with></int>")
            + colset("D2", "INT", "<int/>") + colset("D3", "UNIT", "<unit/>")
            + colset("D4", "LS", f"<list><id>{colour}</id></list>")
            + ml("D5", "val q = ref ([] : LS);") + ml("D6", "fun getQ () = !q;"),
            [("P1", "P", "UNIT", "1`()"), ("P2", "R", "UNIT", ""), ("P3", "Q", colour, "")],
            [("T1", "T1", "", "input (); output (); action (q := [1, 2, 2]);"),
             ("T2", "T2", "", "")],
            [("A1", "PtoT", "T1", "P1", "()"), ("A2", "TtoP", "T1", "P2", "()"),
             ("A3", "PtoT", "T2", "P2", "()"), ("A4", "TtoP", "T2", "P3", "getQ ()")])
    for colour in ("SMALL", "INT"):
        imported = read_cpn(net(colour))
        assert imported.complete, imported.report.text()
        simulator = Simulator(imported.net, seed=0)
        simulator.run(until=10.0)
        assert sorted(t.value for t in simulator.tokens("Q")) == [1, 2, 2]


def test_a_record_pattern_binds_a_variable_to_a_field_that_is_a_record(tmp_path):
    """``{state=s, par=p}`` where ``state`` is itself a record: ``s`` takes the field whole
    (CPN Tools binds a pattern variable to a value of any colour set); it was refused as a
    free variable. The state space equals cpncheck's."""
    declarations = (
        colset("D1", "INT", "<int/>")
        + colset("D2", "ST", "<record><recordfield><id>n</id><id>INT</id></recordfield>"
                 "<recordfield><id>ok</id><id>INT</id></recordfield></record>")
        + colset("D3", "SP", "<record><recordfield><id>state</id><id>ST</id></recordfield>"
                 "<recordfield><id>par</id><id>INT</id></recordfield></record>")
        + var("D4", "ST", "s") + var("D5", "INT", "p"))
    text = cpn_file(
        declarations,
        [("P1", "objects", "SP", "1`{state={n=1, ok=0}, par=4} ++ 1`{state={n=2, ok=1}, par=5}"),
         ("P2", "out", "ST", "")],
        [("T1", "take", "p > 4", "")],
        [("A1", "PtoT", "T1", "P1", "{state=s, par=p}"), ("A2", "TtoP", "T1", "P2", "s")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    from tcpn.petrinets import simulate
    marking = simulate(imported.net, seed=1, max_firings=5).marking
    assert [(t.value.n, t.value.ok) for t in marking["out"]] == [(2, 1)]
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs


def test_a_record_field_named_like_a_python_keyword_is_read(tmp_path):
    """``record from:INT * to:INT``: SML allows any label; the field is ``from_`` in Python
    (the file was refused). Built, selected (``#from``), matched by a record pattern on an
    input arc and in a function; the state space equals cpncheck's."""
    declarations = (
        colset("D1", "INT", "<int/>")
        + colset("D2", "PKT", "<record><recordfield><id>from</id><id>INT</id></recordfield>"
                 "<recordfield><id>to</id><id>INT</id></recordfield></record>")
        + var("D3", "INT", "a", "b")
        + ml("D4", "fun swap {from=f, to=t} = {from=t, to=f};"))
    text = cpn_file(
        declarations,
        [("P1", "sent", "PKT", "1`{from=1, to=2} ++ 1`{from=3, to=3}"),
         ("P2", "got", "PKT", ""), ("P3", "src", "INT", "")],
        [("T1", "pass", "a &lt;&gt; b", ""), ("T2", "back", "#from (swap {from=a, to=b}) = b", "")],
        [("A1", "PtoT", "T1", "P1", "{from=a, to=b}"), ("A2", "TtoP", "T1", "P2",
                                                     "swap {from=a, to=b}"),
         ("A3", "PtoT", "T2", "P2", "{from=a, to=b}"),
         ("A4", "TtoP", "T2", "P3", "#to {from=a, to=b}")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    from tcpn.petrinets import simulate
    marking = simulate(imported.net, seed=1, max_firings=5).marking
    assert [t.value for t in marking["src"]] == [1]
    assert sorted((t.value.from_, t.value.to) for t in marking["sent"]) == [(3, 3)]
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs
    again = read_cpn(to_cpn(imported.net, layout="grid"))
    assert again.complete, again.report.text()


def test_a_unit_colour_set_with_a_name_for_its_value(tmp_path):
    """``colset S = unit with student``: ``student`` is the one value (``()``), usable in
    markings and on arcs (the colour set was refused, its places and transitions left out).
    The state space equals cpncheck's."""
    declarations = (
        '<color id="D1"><id>S</id><unit><with><id>student</id></with></unit></color>'
        '<color id="D2"><id>P</id><unit><with><id>pasty</id></with></unit></color>')
    text = cpn_file(
        declarations,
        [("P1", "hungry", "S", "2`student"), ("P2", "food", "P", "1`pasty"),
         ("P3", "fed", "S", "")],
        [("T1", "eat", "", "")],
        [("A1", "PtoT", "T1", "P1", "student"), ("A2", "PtoT", "T1", "P2", "1`pasty"),
         ("A3", "TtoP", "T1", "P3", "student")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    from tcpn.petrinets import simulate
    marking = simulate(imported.net, seed=1, max_firings=5).marking
    assert len(marking["fed"]) == 1 and len(marking["hungry"]) == 1
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs
    again = read_cpn(to_cpn(imported.net, layout="grid"))
    assert again.complete, again.report.text()


@pytest.mark.parametrize("colour, value", [
    ('<color id="D1"><id>S</id><unit/></color>', "()"),
    (colset("D0", "INT", "<int/>")
     + '<color id="D1"><id>S</id><product><id>INT</id><id>INT</id></product></color>',
     "(1, 2)")])
def test_a_val_holding_a_unit_or_a_tuple_is_one_token_on_an_arc(tmp_path, colour, value):
    """``val u = ()`` (or a tuple) on an arc is one token, not a list of tokens: Python holds
    both as a tuple (the unit arcs were dropped without a word, the transition then firing
    for ever; the tuple's transition was left out)."""
    text = cpn_file(colour + ml("D2", f"val u = {value};"),
                    [("P1", "a", "S", "2`u"), ("P2", "b", "S", "")],
                    [("T1", "t", "", "")],
                    [("A1", "PtoT", "T1", "P1", "u"), ("A2", "TtoP", "T1", "P2", "u")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    assert len(imported.net.arcs) == 2
    from tcpn.petrinets import simulate
    marking = simulate(imported.net, seed=1, max_firings=10).marking
    assert len(marking["a"]) == 0 and len(marking["b"]) == 2
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs
