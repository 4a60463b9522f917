"""CPN ML's reference cells, sequencing and declaration forms, as CPN Tools (SML/NJ) reads them.

Declarations are written by hand and their values worked out by hand from SML's rules
(``:=`` is infix 3, below the comparisons; ``before`` infix 0; a sequence gives its last
value; a ``ref`` made inside a ``let`` is new at each evaluation; ``handle`` takes the
first rule naming what was raised); where SML/NJ is
installed, the same declarations run in ``sml`` and must give the same values. Nets that
update cells from code segments are simulated (the cells shared by every firing, put back
at the start of each run) and refused by the explorer, naming the cells.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_exchange_cpn_field import colset, cpn_file, ml, var

from tcpn.errors import InputError
from tcpn.limits import using_limits
from tcpn.petrinets.cells import Cell, ml_deref
from tcpn.petrinets.engine.simulator import Simulator, simulate
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.exchange.ml_exceptions import MLRaise
from tcpn.petrinets.statespace.space import explore

needs_sml = pytest.mark.skipif(
    shutil.which("sml") is None,
    reason="SML/NJ's sml is not installed (Debian: apt-get install smlnj; make test does it)")

#: (declaration, the int it gives when it names one, worked out by hand)
DECLARATIONS: list[tuple[str, str | None, int | None]] = [
    ("val count = ref 0;", None, None),
    ("val a = (count := 1; !count + 1);", "a", 2),
    ("val b = !count before count := 5;", "b", 1),  # count: 5
    ("val c = let val r = ref 10 in r := !r * 3; !r end;", "c", 30),
    ("val i = ref 0;", None, None),
    ("val d = (while !i < 7 do i := !i + 2; !i);", "d", 8),
    ("val e = let in !count + 1 end;", "e", 6),
    ("val _ = ignore (count := !count + 1);", None, None),  # count: 6
    ("fun bump () = (count := !count + 1; !count);", None, None),
    ("val g = bump () + bump ();", "g", 15),  # 7 + 8, count: 8
    ("local val k = 2 fun sq x = x * x in fun h x = sq x + k end;", None, None),
    ("val m = h 3;", "m", 11),
    ("val flag = ref false;", None, None),
    ("val n = (flag := 1 < 2; if !flag then 1 else 0);", "n", 1),
    ("val items = ref ([] : int list);", None, None),
    ("fun push x = items := x :: !items;", None, None),
    ("val p = (push 1; push 2; length (!items));", "p", 2),
    ("val q = (List.app (fn x => count := !count + x) [1, 2]; !count);", "q", 11),
    ("val final = !count;", "final", 11),
    ("exception Negative;", None, None),
    ("fun safe x = if x < 0 then raise Negative else x * 2;", None, None),
    ("val s = safe 4;", "s", 8),
    ("val h1 = hd ([] : int list) handle Empty => 5;", "h1", 5),
    ("val h2 = safe (~1) handle Negative => 3;", "h2", 3),
    ("val h3 = (10 div 0) handle Div => 4 | _ => 9;", "h3", 4),
    ("val h4 = (raise Negative) handle Fail _ => 1 | _ => 2;", "h4", 2),
    ("val h5 = (safe (~2) handle Empty => 1) handle Negative => 6;", "h5", 6),
    ('val w = size (String.concat ["ab", "c", ""]);', "w", 3),
]
EXPECTED = {name: value for _, name, value in DECLARATIONS if name is not None}


def declarations_net(texts: list[str]) -> str:
    """A one-place net whose declarations are ``texts``, one ``<ml>`` element each."""
    declarations = colset("C1", "UNIT", "<unit/>") + "".join(
        ml(f"M{k}", text) for k, text in enumerate(texts))
    return cpn_file(declarations, [("P1", "p", "UNIT", "1`()")], [], [])


def test_cells_sequences_and_local_declarations_give_the_values_worked_out_by_hand():
    imported = read_cpn(declarations_net([text for text, _, _ in DECLARATIONS]))
    assert imported.complete, imported.report.text()
    declarations = imported.net.declarations
    assert {name: declarations[name] for name in EXPECTED} == EXPECTED
    count = declarations["count"]
    assert isinstance(count, Cell) and count.value == 11
    # the declared value of a cell is the one it holds once all declarations are read
    assert count.initial == 11 and declarations["items"].value == (2, 1)
    assert declarations["h"](4) == 18  # the local sq and k, seen from h
    with pytest.raises(MLRaise, match="Negative"):
        declarations["safe"](-1)


def sml_values(declarations: list[str], names: list[str], program: Path) -> dict[str, int]:
    """The ints SML/NJ gives ``names`` after ``declarations``, written to ``program``."""
    prints = " ^ ".join(f'"{name}=" ^ Int.toString {name} ^ " "' for name in names)
    program.write_text("\n".join(declarations)
                       + f'\nval _ = print ("OUT " ^ {prints} ^ "\\n");\n', encoding="utf-8")
    run = subprocess.run(["sml", str(program)], capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL, check=False)
    line = next((ln for ln in run.stdout.splitlines() if ln.startswith("OUT ")), None)
    assert line is not None, run.stdout + run.stderr
    return {k: int(v.replace("~", "-")) for k, v in re.findall(r"(\w+)=(~?\d+)", line)}


@needs_sml
def test_sml_nj_gives_the_same_values(tmp_path: Path):
    assert sml_values([text for text, _, _ in DECLARATIONS], list(EXPECTED),
                      tmp_path / "cells.sml") == EXPECTED


def test_a_declaration_may_use_a_name_declared_further_down():
    imported = read_cpn(declarations_net(["fun g x = h x + 1;", "val v = g 3;",
                                          "fun h x = x * 2;"]))
    assert imported.complete, imported.report.text()
    assert imported.net.declarations["v"] == 7


def test_a_reference_the_file_only_reads_is_the_value_it_holds():
    imported = read_cpn(declarations_net(["val limit = ref 4;", "val twice = 2 * !limit;"]))
    assert imported.net.declarations["limit"] == 4
    assert imported.net.declarations["twice"] == 8
    assert any("only reads" in note.reason for note in imported.report.notes)


# -- cells updated by code segments ---------------------------------------------------------------
def counting_net(code: str, guard: str = "") -> str:
    """``tick`` takes and gives back the one token of ``p``; its code updates the cells."""
    declarations = (colset("C1", "UNIT", "<unit/>") + colset("C2", "INT", "<int/>")
                    + var("V1", "INT", "k") + ml("M1", "val count = ref 0;")
                    + ml("M2", "globref total = 0;"))
    return cpn_file(declarations, [("P1", "p", "INT", "1`3")],
                    [("T1", "tick", guard, code)],
                    [("A1", "PtoT", "T1", "P1", "k"), ("A2", "TtoP", "T1", "P1", "k")])


CODE = "input (k);\noutput ();\naction\n(count := !count + 1; total := !total + k);"


def test_a_guard_reading_a_cell_a_code_segment_writes_stops_the_net_as_cpn_tools_does():
    imported = read_cpn(counting_net(CODE, guard="!count &lt; 4"))
    assert imported.complete, imported.report.text()
    for _ in range(2):  # each run starts from the declared values
        result = simulate(imported.net, seed=1, until=100.0)
        assert result.firings == 4
        assert imported.net.declarations["count"].value == 4
        assert imported.net.declarations["total"].value == 12  # 4 firings of k = 3


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_transition_whose_guard_reads_a_cell_is_checked_again_after_any_firing(engine):
    """``wait``'s place never changes; ``open`` sets the cell its guard reads: ``wait``
    fires after it (the engines re-check only the transitions whose places a firing
    touched, except in a net with cells)."""
    declarations = colset("C1", "UNIT", "<unit/>") + ml("M1", "val go = ref false;")
    text = cpn_file(declarations, [("P1", "a", "UNIT", "1`()"), ("P2", "b", "UNIT", "1`()"),
                                   ("P3", "c", "UNIT", "")],
                    [("T1", "wait", "!go", ""),
                     ("T2", "open", "", "input ();\noutput ();\naction\ngo := true;")],
                    [("A1", "PtoT", "T1", "P1", "()"), ("A2", "TtoP", "T1", "P3", "()"),
                     ("A3", "PtoT", "T2", "P2", "()")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    simulator = Simulator(imported.net, seed=0, engine=engine)
    simulator.run(until=10.0)
    assert simulator.firings == 2
    assert simulator.firing_counts == [1, 1]


def test_a_while_loop_that_never_ends_stops_at_its_limit_and_a_deref_of_a_non_cell_says_so():
    with using_limits(while_iterations=1000):
        imported = read_cpn(declarations_net(["val i = ref 0;",
                                              "val v = (while true do i := !i + 1; !i);",
                                              "val w = (while !i < 2000 do i := !i + 1; !i);"]))
    (item,) = imported.report.unsupported
    assert item.name == "v" and "over the limit while_iterations = 1000" in item.reason
    # the 1000 turns v made stay made (as effects before an exception do in SML): w needs
    # 1000 more, within the limit
    assert imported.net.declarations["w"] == 2000
    with pytest.raises(InputError, match="'!' on 3, which is not a reference cell"):
        ml_deref(3)


def test_the_explorer_refuses_a_net_whose_firings_write_cells_naming_them():
    imported = read_cpn(counting_net(CODE, guard="!count &lt; 4"))
    with pytest.raises(InputError, match=r"reference cell\(s\) count, total"):
        explore(imported.net)
    assert imported.net.declarations["count"].value == 0  # put back


def test_an_action_with_outputs_keeps_its_effects_before_the_result():
    declarations = (colset("C2", "INT", "<int/>") + var("V1", "INT", "k", "j")
                    + ml("M1", "val seen = ref ([] : int list);"))
    code = "input (k);\noutput (j);\naction\n(seen := k :: !seen; k + 1);"
    text = cpn_file(declarations, [("P1", "a", "INT", "1`1"), ("P2", "b", "INT", "")],
                    [("T1", "step", "", code)],
                    [("A1", "PtoT", "T1", "P1", "k"), ("A2", "TtoP", "T1", "P2", "j")])
    imported = read_cpn(text)
    assert imported.complete, imported.report.text()
    action = imported.net.transitions["step"].action
    assert action(k=5) == {"j": 6}
    assert imported.net.declarations["seen"].value == (5,)


# -- use files and cascades -----------------------------------------------------------------------
def test_a_use_file_names_what_it_would_have_provided_and_what_depends_on_it():
    declarations = (colset("C2", "INT", "<int/>") + var("V1", "INT", "k")
                    + ml("M1", 'use "lib/stats.sml";') + ml("M2", "fun twice x = getnum x * 2;"))
    text = cpn_file(declarations, [("P1", "a", "INT", "1`1"), ("P2", "b", "INT", "")],
                    [("T1", "move", "valid k", ""), ("T2", "copy", "", "")],
                    [("A1", "PtoT", "T1", "P1", "k"), ("A2", "TtoP", "T1", "P2", "twice k"),
                     ("A3", "PtoT", "T2", "P1", "k"), ("A4", "TtoP", "T2", "P2", "k")])
    imported = read_cpn(text)
    report = imported.report
    use = next(item for item in report.unsupported if item.name.startswith("use"))
    assert use.name == 'use "lib/stats.sml"'
    assert "getnum (used by 1 element(s): 'twice')" in use.reason
    assert "valid (used by 1 element(s): 'move')" in use.reason
    twice = next(item for item in report.unsupported if item.name == "twice")
    move = next(item for item in report.unsupported if item.name == "move")
    assert twice.root is use and move.root is use
    assert list(imported.net.transitions) == ["copy"]
    text_lines = report.text().splitlines()
    assert sum("'move'" in line for line in text_lines) == 1  # once, under its cause
    (line,) = [ln for ln in text_lines if 'use "lib/stats.sml"' in ln]
    assert "took along 2 element(s)" in line


def test_a_left_out_place_is_shown_once_with_the_transitions_and_arcs_it_took_along():
    declarations = colset("C2", "INT", "<int/>") + var("V1", "INT", "k")
    text = cpn_file(declarations, [("P1", "a", "INT", "1`(nosuch 1)"), ("P2", "b", "INT", "")],
                    [("T1", "one", "", ""), ("T2", "two", "", "")],
                    [("A1", "PtoT", "T1", "P1", "k"), ("A2", "TtoP", "T1", "P2", "k"),
                     ("A3", "PtoT", "T2", "P1", "k"), ("A4", "TtoP", "T2", "P2", "k + 1")])
    imported = read_cpn(text)
    report = imported.report
    assert [item.kind for item in report.unsupported] == ["place", "transition", "transition"]
    assert all(item.root is report.unsupported[0] for item in report.unsupported)
    lines = [ln for ln in report.text().splitlines() if "left out:" in ln]
    assert len(lines) == 1
    assert "took along 2 element(s): 2 transition(s) with their 4 arc(s)" in lines[0]
