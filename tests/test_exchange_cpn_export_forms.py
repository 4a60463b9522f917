"""Imported CPN ML that tcpn's Python does not translate back is exported as the file wrote it.

A file declaring a ``datatype``, a function of clauses over its constructors, a curried
function, ``foldl``, ``List.find`` and a reference cell with ``:=`` is imported, exported,
and imported again: the second import must give the same declarations, inscriptions and
state space as the first, the export must be a fixed point, and (when SML/NJ is installed)
the exported file must type-check. A ``use`` of a file that is not in the model names the
names it would have provided and the place it takes along with its transitions.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from test_exchange_cpn_field import colset, cpn_file, ml, spaces, var

from tcpn.errors import InputError
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import ImportedNet, read_cpn
from tcpn.petrinets.statespace.space import explore

DECLARATIONS = (
    colset("C1", "INT", "<int/>")
    + colset("C2", "IL", "<list><id>INT</id></list>")
    + var("V1", "INT", "x") + var("V2", "IL", "l")
    + ml("D1", "datatype shape = Dot | Box of int;")
    + ml("D2", "fun area Dot = 0 | area (Box n) = n * n;")
    + ml("D3", "fun add a b = a + b;")
    + ml("D4", "fun total l = foldl (fn (v, s) => v + s) 0 l;")
    + ml("D5", "fun firstbig l = case List.find (fn v => v > 2) l of SOME v => v | NONE => 0;")
    + ml("D6", "val cnt = ref 0;")
    + ml("D7", "fun bump () = (cnt := !cnt + 1; !cnt);"))

FORMS = cpn_file(
    DECLARATIONS,
    [("P1", "P", "INT", "1`0"), ("P2", "L", "IL", "1`[1, 2, 3]"), ("P3", "Q", "INT", "")],
    [("T1", "T", "x &lt; 3", "")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "add x 1"),
     ("A3", "PtoT", "T1", "P2", "l"), ("A4", "TtoP", "T1", "P2", "l"),
     ("A5", "TtoP", "T1", "P3",
      "total l + total [x, 1] + area (Box x) + area Dot + firstbig l")])


def _read(tmp_path: Path, name: str, text: str) -> ImportedNet:
    path = tmp_path / name
    path.write_text(text, encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    return imported


def _read_back(tmp_path: Path, first: ImportedNet, exported: str) -> ImportedNet:
    """The export read again, its transition T's guard and every arc's inscription
    those of the first reading."""
    second = _read(tmp_path, "exported.cpn", exported)
    assert second.net.transitions["T"].guard == first.net.transitions["T"].guard
    assert [a.inscription for a in second.net.arcs] == [a.inscription for a in first.net.arcs]
    return second


def _declarations(imported: ImportedNet) -> dict[str, str]:
    return {k: repr(v) for k, v in imported.net.declarations.items()}


def _sml_accepts(exported: str) -> None:
    """SML/NJ type-checks the exported file (where ``sml`` is installed)."""
    if shutil.which("sml") is not None:
        from tcpn.petrinets.exchange.smlcheck import check_with_sml

        assert check_with_sml(exported).errors == []


def _space(imported: ImportedNet) -> tuple[int, int, int]:
    space = explore(imported.net, clock="absolute")
    assert space.complete
    return len(space), space.n_edges, len(space.dead_markings())


def test_forms_the_export_does_not_translate_are_written_as_read(tmp_path):
    first = _read(tmp_path, "forms.cpn", FORMS)
    exported = to_cpn(first.net)
    for text in ("datatype shape = Dot | Box of int;", "fun add a b = a + b;",
                 "fun area Dot = 0 | area (Box n) = n * n;", "val cnt = ref (0);",
                 "fun bump () = (cnt := !cnt + 1; !cnt);"):
        assert text in exported
    assert "foldl (fn (v, s) =&gt; v + s)" in exported  # in total, as read or translated
    assert "add (x) (1)" in exported  # the curried call, not add(x)(1)
    assert "area(Box(x))" in exported and "area(Dot)" in exported
    assert "total([x, 1])" in exported  # a list, as the clauses show (foldl ... l)


def test_import_export_import_gives_the_same_net_and_state_space(tmp_path):
    first = _read(tmp_path, "forms.cpn", FORMS)
    exported = to_cpn(first.net)
    second = _read(tmp_path, "exported.cpn", exported)
    assert _declarations(second) == _declarations(first)
    assert [(a.kind, a.place, a.inscription) for a in second.net.arcs] == \
        [(a.kind, a.place, a.inscription) for a in first.net.arcs]
    assert {t.name: t.guard for t in second.net.transitions.values()} == \
        {t.name: t.guard for t in first.net.transitions.values()}
    # x = 0, 1, 2 fire; each puts on Q 6 + (x + 1) + x*x + 0 + 3
    assert _space(second) == _space(first) == (4, 3, 1)
    assert to_cpn(second.net) == exported  # a fixed point


@pytest.mark.skipif(shutil.which("sml") is None, reason="SML/NJ's sml is not installed")
def test_the_exported_forms_type_check_in_sml(tmp_path):
    from tcpn.petrinets.exchange.smlcheck import check_with_sml

    exported = to_cpn(_read(tmp_path, "forms.cpn", FORMS).net)
    report = check_with_sml(exported)
    assert report.errors == [], report.errors
    assert report.checked > 0


def test_a_function_keeps_the_name_its_file_gave_it(tmp_path):
    """The file's text names the function as the file did: declared in Python under
    another name, it is still written (and called) under the file's name."""
    first = _read(tmp_path, "forms.cpn", FORMS)
    net = first.net
    net.declarations["plus"] = net.declarations.pop("add")
    for arc in net.arcs:
        arc.inscription = arc.inscription.replace("add(", "plus(")
    exported = to_cpn(net)
    assert "fun add a b = a + b;" in exported and "add (x) (1)" in exported
    assert "plus" not in exported
    second = _read(tmp_path, "exported.cpn", exported)
    assert _space(second) == _space(first)


def test_a_name_taken_in_the_file_written_is_refused_naming_the_function(tmp_path):
    """When the file's name for the function is taken by another declaration the text
    cannot be reused: the export refuses, naming the form it cannot translate."""
    net = _read(tmp_path, "forms.cpn", FORMS).net
    add = net.declarations.pop("add")
    net.declarations["add"] = 7
    net.declarations["plus"] = add
    for arc in net.arcs:
        arc.inscription = arc.inscription.replace("add(", "plus(")
    with pytest.raises(InputError, match=r"declaration plus: .*Lambda"):
        to_cpn(net)


USE = cpn_file(
    colset("C1", "INT", "<int/>") + var("V1", "INT", "x")
    + ml("D1", 'use "lib.sml";') + ml("D2", "fun g y = libfn y + 1;"),
    [("P1", "P", "INT", "libval"), ("P2", "Q", "INT", "1`0"), ("P3", "R", "INT", "")],
    [("T1", "T", "", ""), ("T2", "U", "", "")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P3", "x"),
     ("A3", "PtoT", "T2", "P2", "x"), ("A4", "TtoP", "T2", "P3", "g x"),
     ("A5", "TtoP", "T2", "P1", "x")])


def test_a_missing_use_file_names_what_it_provides_and_a_place_takes_its_transitions(tmp_path):
    path = tmp_path / "use.cpn"
    path.write_text(USE, encoding="iso-8859-1")
    report = read_cpn(path).report.text()
    lines = [line for line in report.splitlines() if "left out:" in line]
    assert len(lines) == 1, report  # the one root cause, its dependants counted under it
    assert 'use "lib.sml"' in lines[0] and "(D1 line" in lines[0]
    assert "libfn (used by 1 element(s): 'g'), libval (used by 1 element(s): 'P')" in lines[0]
    assert ("took along 4 element(s): 1 declaration(s), 1 place(s), 2 transition(s) with "
            "their 5 arc(s)") in lines[0]


LIBRARY = cpn_file(
    colset("C1", "INT", "<int/>") + colset("C2", "IL", "<list><id>INT</id></list>")
    + var("V1", "INT", "x") + var("V2", "IL", "l"),
    [("P1", "P", "INT", "1`0"), ("P2", "L", "IL", "1`[1, 2]"), ("P3", "Q", "INT", "")],
    [("T1", "T", "x &lt; 3 andalso foldl (fn (v, s) =&gt; v + s) 0 l &gt; 1", "")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "x + 1"),
     ("A3", "PtoT", "T1", "P2", "l"), ("A4", "TtoP", "T1", "P2", "l"),
     ("A5", "TtoP", "T1", "P3", "foldr (fn (v, s) =&gt; v * s) 1 (List.map (fn v =&gt; v + x) l)")])


def test_folds_and_maps_in_guards_and_arcs_are_written_back_as_read(tmp_path):
    first = _read(tmp_path, "library.cpn", LIBRARY)
    exported = to_cpn(first.net)
    assert "foldl (fn (v, s) =&gt; v + s) (0) (l) &gt; 1" in exported
    assert "foldr (fn (v, s) =&gt; v * s) (1) (List.map (fn v =&gt; v + x) (l))" in exported
    second = _read_back(tmp_path, first, exported)
    # x = 0, 1, 2 fire: the guard's sum 3 > 1 holds each time
    assert _space(second) == _space(first) == (4, 3, 1)
    _sml_accepts(exported)


FREE = cpn_file(
    colset("C1", "INT", "<int/>") + colset("C2", "SMALL", "<int><with><ml>1</ml><ml>3</ml>"
                                           "</with></int>")
    + var("V1", "INT", "n") + var("V2", "SMALL", "p"),
    [("P1", "P", "INT", "1`0"), ("P2", "Q", "SMALL", "")],
    [("T1", "T", "n = 0 andalso p &gt; 1", "")],
    [("A1", "PtoT", "T1", "P1", "n"), ("A2", "TtoP", "T1", "P1", "n + 1"),
     ("A3", "TtoP", "T1", "P2", "p")])


def test_a_free_variable_is_written_over_its_own_colour_set(tmp_path):
    """p is bound by no input arc: it ranges over SMALL (1..3), not over INT, the first
    colour set of its ML type; written over INT it would not read back."""
    first = _read(tmp_path, "free.cpn", FREE)
    assert first.net.transitions["T"].free_variables
    exported = to_cpn(first.net)
    second = _read(tmp_path, "exported.cpn", exported)
    # n = 0 fires with p = 2 or p = 3: 3 states, 2 arcs, 2 dead
    assert _space(second) == _space(first) == (3, 2, 2)


CASE_COUNT = cpn_file(
    colset("C1", "K", "<enum><id>p</id><id>q</id></enum>") + colset(
        "C2", "E", "<enum><id>e</id></enum>") + var("V1", "K", "x"),
    [("P1", "A", "K", "1`p ++ 1`q"), ("P2", "S", "E", "2`e"), ("P3", "B", "K", "")],
    [("T1", "T", "", "")],
    [("A1", "PtoT", "T1", "P1", "x"),
     ("A2", "PtoT", "T1", "P2", "case x of p =&gt; 2`e | q =&gt; 1`e"),
     ("A3", "TtoP", "T1", "P3", "x")])


def test_a_case_of_multisets_on_an_arc_is_written_back_as_a_case(tmp_path):
    """The sample models' ``case x of p => 2`e | q => 1`e``: its count is written as a
    ``case`` (it was refused as arithmetic on product values). S holds 2 e: p takes both
    (q, needing 1, is then dead), or q takes 1 (p, needing 2, is then dead): 3 states,
    2 arcs, 2 dead markings."""
    first = _read(tmp_path, "case.cpn", CASE_COUNT)
    exported = to_cpn(first.net)
    assert "(case x of p =&gt; 2 | q =&gt; 1)`e" in exported
    second = _read(tmp_path, "exported.cpn", exported)
    assert _space(second) == _space(first) == (3, 2, 2)
    assert to_cpn(second.net) == to_cpn(_read(tmp_path, "again.cpn", to_cpn(second.net)).net)


LISTS = cpn_file(
    colset("C1", "INT", "<int/>") + colset("C2", "IL", "<list><id>INT</id></list>")
    + var("V1", "INT", "x") + var("V2", "IL", "l")
    + ml("D1", "fun total l = foldl (fn (v, s) => v + s) 0 l;")
    + ml("D2", "fun twice m = total m + total m;")
    + ml("D3", "fun keep (k:IL) = k;")
    + ml("D4", "fun sized (n, k) = n + List.length (keep k);")
    + ml("D5", "fun front k = 7 :: k;"),
    [("P1", "P", "INT", "1`0"), ("P2", "Q", "INT", ""), ("P3", "M", "IL", "")],
    [("T1", "T", "x &lt; 2", "")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "x + 1"),
     ("A3", "TtoP", "T1", "P2", "twice [x, 1] + sized (x, [x, 2])"),
     ("A4", "TtoP", "T1", "P3", "keep [x, 2]"), ("A5", "TtoP", "T1", "P3", "front [x]")])


def test_a_list_passed_where_the_clauses_show_no_list_pattern_is_written_as_a_list(tmp_path):
    """``twice m = total m + total m`` shows no list, but passes ``m`` where ``total``
    takes one; ``keep (k:IL)`` says so by its colour set, ``sized (n, k)`` by passing its
    second component to ``keep``, ``front k`` by ``7 :: k``. Each of those arguments is
    an ML list, which tcpn's Python holds as a tuple: written as ``(x, 1)`` SML rejects
    the file (a tuple is not a list)."""
    first = _read(tmp_path, "lists.cpn", LISTS)
    exported = to_cpn(first.net)
    for text in ("twice([x, 1])", "sized(x, [x, 2])", "keep([x, 2])", "front([x])"):
        assert text in exported, exported
    second = _read(tmp_path, "exported.cpn", exported)
    assert [a.inscription for a in second.net.arcs] == [a.inscription for a in first.net.arcs]
    # x = 0, 1 fire: Q gets 2 * (x + 1) + x + 2, M gets [x, 2] and [7, x]
    assert _space(second) == _space(first) == (3, 2, 1)
    _sml_accepts(exported)


OPTIONS_AND_CELLS = cpn_file(
    colset("C1", "INT", "<int/>") + colset("C2", "IL", "<list><id>INT</id></list>")
    + var("V1", "INT", "x", "y") + var("V2", "IL", "l")
    + ml("D1", "val cnt = ref 0;") + ml("D2", "val fired = ref 0;"),
    [("P1", "P", "INT", "1`0"), ("P2", "L", "IL", "1`[1, 2, 3]"), ("P3", "Q", "INT", "")],
    [("T1", "T", "valOf (List.find (fn v =&gt; v &gt; x) l) &gt; x andalso !cnt &lt; 10",
      "input (x); output (y); action (cnt := !cnt + x; !cnt);")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "x + 1"),
     ("A3", "PtoT", "T1", "P2", "l"), ("A4", "TtoP", "T1", "P2", "l"),
     ("A5", "TtoP", "T1", "P3",
      "(fired := !fired + 1; y + !cnt + valOf (List.find (fn v =&gt; v = 2) l))")])


def test_options_and_reference_cells_in_guards_arcs_and_code_are_written_back(tmp_path):
    """``valOf``, ``List.find``, ``!`` in a guard and an arc, ``:=`` and a sequence in a
    code segment and an arc: imported (the cells are the net's own ``Cell`` values, the
    options tuples of the restricted library) and exported as CPN ML that reads back to
    the same inscriptions, runs the same firings and type-checks in SML/NJ. They were
    refused by the export, naming ``:=``."""
    from tcpn.petrinets.exchange.roundtrip import compare_runs

    first = _read(tmp_path, "cells.cpn", OPTIONS_AND_CELLS)
    exported = to_cpn(first.net)
    for text in ("valOf(List.find (fn v =&gt; v &gt; x) (l)) &gt; x andalso (!cnt) &lt; 10",
                 "((cnt := (!cnt) + x); (!cnt))",
                 "((fired := (!fired) + 1); y + (!cnt) + valOf(List.find (fn v =&gt; v = 2) "
                 "(l)))"):
        assert text in exported, exported
    second = _read_back(tmp_path, first, exported)
    assert second.net.transitions["T"].action.body == first.net.transitions["T"].action.body
    assert to_cpn(second.net) == exported  # a fixed point
    # x = 0, 1, 2 fire (the first element above x exists and exceeds it), then x = 3 finds
    # none: valOf raises Option, which disables the binding as CPN Tools does
    comparison = compare_runs(first.net, second.net, seed=1, max_firings=20)
    assert comparison.divergence is None and comparison.firings == 3
    assert second.net.declarations["cnt"].value == 3  # 0 + 0 + 1 + 2
    assert second.net.declarations["fired"].value == 3
    _sml_accepts(exported)


LOCAL_DATATYPE = cpn_file(
    colset("C1", "INT", "<int/>") + var("V1", "INT", "x")
    + ml("D1", "val k = 2;")
    + ml("D2", "local\n  datatype shape = Dot | Box of int;\n"
               "  fun area Dot = 0 | area (Box n) = n * n\nin\n"
               "  fun sq n = area (Box n) + area Dot + k\nend;")
    + ml("D3", "fun twice n = 2 * sq n;"),
    [("P1", "P", "INT", "1`0"), ("P2", "Q", "INT", "")],
    [("T1", "T", "x &lt; 3", "")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "x + 1"),
     ("A3", "TtoP", "T1", "P2", "twice x")])


def test_a_datatype_inside_local_is_written_back_as_its_block(tmp_path):
    """``local datatype ... fun ... in fun sq ... end``: the datatype and ``area`` are
    visible to ``sq`` only (renamed ``Box'local1`` in tcpn's Python, which has no CPN ML
    form); the block is written as the file wrote it, after the ``val`` it uses and
    before the function that calls ``sq``. It was refused (the clauses over the renamed
    constructors do not translate)."""
    first = _read(tmp_path, "local.cpn", LOCAL_DATATYPE)
    exported = to_cpn(first.net)
    block = ("local\n  datatype shape = Dot | Box of int;\n  fun area Dot = 0 | area (Box n) "
             "= n * n\nin\n  fun sq n = area (Box n) + area Dot + k\nend;")
    assert exported.count(block) == 2 and f"{block}<layout>{block}</layout>" in exported
    assert exported.index("val k = 2;") < exported.index(block) < exported.index("fun twice")
    assert "area_local1" not in exported and "'local" not in exported.replace(block, "")
    second = _read(tmp_path, "exported.cpn", exported)
    assert _declarations(second) == _declarations(first)
    assert to_cpn(second.net) == exported  # a fixed point
    # x = 0, 1, 2 fire; each puts 2 * (x * x + 0 + 2) on Q
    assert _space(second) == _space(first) == (4, 3, 1)
    _sml_accepts(exported)


def _file_position(text: str, needle: str) -> tuple[int, int]:
    """(line, 1-based column) of ``needle`` in ``text``, counted on the file itself."""
    offset = text.index(needle)
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def test_a_left_out_declaration_names_its_line_and_column_in_the_file(tmp_path):
    """A declaration left out names where it begins in the file, line and column, also
    inside a ``local`` block and after other declarations of the same element."""
    text = cpn_file(
        colset("C1", "INT", "<int/>") + var("V1", "INT", "x")
        + ml("D1", "val a = 1;\nlocal\n  val out = TextIO.openIn \"f\"\nin\n"
                   "  fun g y = y + a\nend;\n  fun h y = Date.now ()"),
        [("P1", "P", "INT", "1`0")], [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "g x")])
    path = tmp_path / "columns.cpn"
    path.write_text(text, encoding="iso-8859-1")
    left_out = [line for line in read_cpn(path).report.text().splitlines()
                if "left out: declaration" in line]
    for name, needle in (("out'local1", "val out"), ("h", "fun h")):
        line, column = _file_position(text, needle)
        assert any(f"{name!r} (D1 line {line}, column {column})" in entry
                   for entry in left_out), (name, line, column, left_out)


LOCAL_CELL = cpn_file(
    colset("C1", "INT", "<int/>") + var("V1", "INT", "x")
    + ml("D1", "local val c = ref 0 in fun bump () = (c := !c + 1; !c) end;\n"
               "local val k = 3 in val kk = k * 2 end;"),
    [("P1", "P", "INT", "1`0"), ("P2", "Q", "INT", "")],
    [("T1", "T", "x &lt; 3", "")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "x + 1"),
     ("A3", "TtoP", "T1", "P2", "bump () + kk")])


def test_a_reference_cell_declared_inside_local_is_a_cell_and_its_block_is_kept(tmp_path):
    """``local val c = ref 0 in fun bump () = (c := !c + 1; !c) end``, the statistics
    counters of real models: ``c`` (renamed ``c'local1``) is written by ``:=``, so it is
    a cell; it was taken for a reference the file only reads (its renamed name is
    nowhere in the file) and ``bump`` was left out with the transition calling it."""
    from tcpn.petrinets.exchange.roundtrip import compare_runs

    first = _read(tmp_path, "cell.cpn", LOCAL_CELL)
    exported = to_cpn(first.net)
    for block in ("local val c = ref 0 in fun bump () = (c := !c + 1; !c) end;",
                  "local val k = 3 in val kk = k * 2 end;"):
        assert f"{block}<layout>{block}</layout>" in exported
    second = _read(tmp_path, "exported.cpn", exported)
    assert _declarations(second) == _declarations(first)
    comparison = compare_runs(first.net, second.net, seed=1, max_firings=10)
    assert comparison.divergence is None and comparison.firings == 3
    assert second.net.declarations["c_local1"].value == 3
    _sml_accepts(exported)


EXISTS = cpn_file(
    colset("C1", "INT", "<int/>") + colset("C2", "IL", "<list><id>INT</id></list>")
    + var("V1", "INT", "x") + var("V2", "IL", "l"),
    [("P1", "P", "INT", "1`0"), ("P2", "L", "IL", "1`[1, 2, 3]"), ("P3", "Q", "INT", "")],
    [("T1", "T", "x &lt; 5 andalso List.exists (fn v =&gt; v &gt; x) l "
                 "andalso List.all (fn v =&gt; v &gt; 0) l", "")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "x + 1"),
     ("A3", "PtoT", "T1", "P2", "l"), ("A4", "TtoP", "T1", "P2", "l"),
     ("A5", "TtoP", "T1", "P3", "if List.exists (fn v =&gt; v = x) l then 1 else 0")])


def test_list_exists_and_list_all_are_written_back(tmp_path):
    """``List.exists``/``List.all`` (the import's ``any``/``all`` over a generator) were
    refused by the export ('any' is neither a declared function nor a builtin: DYMO of
    the cpn-js samples); x = 0, 1, 2 fire (3 exceeds every element): 4 states."""
    first = _read(tmp_path, "exists.cpn", EXISTS)
    exported = to_cpn(first.net)
    assert "List.exists (fn v =&gt; v &gt; x) (l) andalso List.all (fn v =&gt; v &gt; 0) (l)" \
        in exported
    second = _read_back(tmp_path, first, exported)
    assert _space(second) == _space(first) == (4, 3, 1)
    _sml_accepts(exported)


MATCHES = cpn_file(
    colset("C1", "INT", "<int/>") + colset("C2", "IL", "<list><id>INT</id></list>")
    + var("V1", "INT", "x") + var("V2", "IL", "l")
    + ml("D1", "datatype shape = Dot | Box of int;"),
    [("P1", "P", "INT", "1`0"), ("P2", "L", "IL", "1`[1, 2, 3]"), ("P3", "Q", "INT", "")],
    [("T1", "T", "x &lt; 5 andalso (case List.find (fn v =&gt; v &gt; x) l of "
                 "SOME _ =&gt; true | NONE =&gt; x = 3)", "")],
    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "x + 1"),
     ("A3", "PtoT", "T1", "P2", "l"), ("A4", "TtoP", "T1", "P2", "l"),
     ("A5", "TtoP", "T1", "P3", "case List.find (fn v =&gt; v &gt; x) l of SOME v =&gt; v "
                                "| NONE =&gt; 0"),
     ("A6", "TtoP", "T1", "P3", "case (if x &gt; 1 then Box x else Dot) of Box n =&gt; n * n "
                                "| _ =&gt; 7")])


def _without_ids(text: str) -> str:
    """An inscription with the element id its 'no rule matches' error names left out
    (the export gives elements new ids)."""
    return re.sub(r"(guard of transition '\w+'|arc \w+): no rule matches", "no rule matches",
                  text)


def test_a_case_on_an_option_or_a_constructor_in_an_inscription_is_written_back(tmp_path):
    """``case List.find f l of SOME v => v | NONE => 0`` on an arc and in a guard, and a
    ``case`` over a datatype's constructors with a wildcard: written back as ``case``
    (the subject once, as read), read back the same, SML/NJ type-checks them. They were
    refused (List.find), or would have been written as slices of the import's tuples."""
    first = _read(tmp_path, "matches.cpn", MATCHES)
    exported = to_cpn(first.net)
    for text in ("(case (List.find (fn v =&gt; v &gt; x) (l)) of SOME _ =&gt; true | NONE =&gt; "
                 "x = 3)", "(case (List.find (fn v =&gt; v &gt; x) (l)) of SOME v =&gt; v | NONE "
                 "=&gt; 0)", "(case (if x &gt; 1 then Box(x) else Dot) of Box n =&gt; n * n | _ "
                 "=&gt; 7)"):
        assert text in exported, exported
    second = _read(tmp_path, "exported.cpn", exported)
    assert _without_ids(second.net.transitions["T"].guard) == \
        _without_ids(first.net.transitions["T"].guard)
    assert [_without_ids(a.inscription) for a in second.net.arcs] == \
        [_without_ids(a.inscription) for a in first.net.arcs]
    # x = 0, 1, 2 find an element above x, x = 3 finds none but is 3, x = 4 neither
    assert _space(second) == _space(first) == (5, 4, 1)
    _sml_accepts(exported)


@pytest.mark.parametrize("text", [FORMS, LIBRARY, CASE_COUNT, EXISTS, MATCHES],
                         ids=["forms", "library", "case", "exists", "matches"])
def test_the_state_spaces_are_cpnchecks(tmp_path, text):
    """cpncheck, an independent reader of CPN Tools files, builds the same state spaces
    from the hand-written files (nodes, arcs, dead markings)."""
    ours, theirs = spaces(tmp_path, text)
    assert ours == theirs


def test_a_local_block_whose_function_is_renamed_here_is_written_one_by_one(tmp_path):
    """``fun size`` shadows a Basis name: the export names it ``size_2``, so the block's
    text would not name it; its declarations are then written one by one (translated),
    and the net reads back to the same state space."""
    text = cpn_file(
        colset("C1", "INT", "<int/>") + var("V1", "INT", "x")
        + ml("D1", "local val k = 2 in fun size n = n + k end;"),
        [("P1", "P", "INT", "1`0"), ("P2", "Q", "INT", "")], [("T1", "T", "x &lt; 3", "")],
        [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P1", "x + 1"),
         ("A3", "TtoP", "T1", "P2", "size x")])
    first = _read(tmp_path, "renamed.cpn", text)
    exported = to_cpn(first.net)
    assert "local val k = 2" not in exported and "size_2" in exported
    assert _space(_read(tmp_path, "exported.cpn", exported)) == _space(first) == (4, 3, 1)
