"""Bad CPN Tools input: every error names the file, line and element; no partial net passes."""

from __future__ import annotations

import re

import pytest
from test_exchange_cpn_field import colset, cpn_file, var

from tcpn.errors import InputError
from tcpn.petrinets.examples import counter
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import (
    CpnFormatError,
    IncompleteImportError,
    read_cpn,
)
from tcpn.petrinets.exchange.cpnml import MLSyntaxError, parse_ml
from tcpn.petrinets.exchange.ml_exceptions import MLRaise


@pytest.fixture(scope="module")
def good() -> str:
    return to_cpn(counter(3), layout="grid")


def line_of(text: str, fragment: str) -> int:
    return text[:text.index(fragment)].count("\n") + 1


def test_malformed_xml_names_line_and_column():
    text = ('<?xml version="1.0"?>\n<workspaceElements>\n  <generator format="6">\n'
            '</workspaceElements>')
    with pytest.raises(CpnFormatError, match=r"<string>, line 4: malformed XML at column \d+"):
        read_cpn(text)


def test_not_a_cpn_file():
    with pytest.raises(CpnFormatError, match=r"root element is <pnml>"):
        read_cpn("<pnml><net/></pnml>")


def test_missing_generator_and_future_format_refused(good):
    with pytest.raises(CpnFormatError, match="no <generator>"):
        read_cpn(re.sub(r"<generator[^>]*/>", "", good))
    with pytest.raises(CpnFormatError, match="file format '7' is not one CPN Tools reads"):
        read_cpn(good.replace('format="6"', 'format="7"'))


def test_duplicate_id_names_the_id_and_both_lines(good):
    place_id = re.search(r'<place id="(ID\d+)"', good).group(1)
    trans_id = re.search(r'<trans id="(ID\d+)"', good).group(1)
    bad = good.replace(f'<trans id="{trans_id}"', f'<trans id="{place_id}"')
    with pytest.raises(CpnFormatError) as info:
        read_cpn(bad)
    message = str(info.value)
    assert f"line {line_of(bad, '<trans id=')}" in message
    assert f"duplicate id '{place_id}' on <trans>" in message
    assert f"first used on <place> at line {line_of(bad, '<place id=')}" in message


def test_dangling_arc_reference_names_the_arc(good):
    place_id = re.search(r'<placeend idref="(ID\d+)"', good).group(1)
    bad = good.replace(f'<placeend idref="{place_id}"', '<placeend idref="ID999999"', 1)
    arc_id = re.search(r'<arc id="(ID\d+)"', bad).group(1)
    with pytest.raises(CpnFormatError, match=rf"line {line_of(bad, '<arc id=')}, element "
                       rf"{arc_id}: arc refers to place 'ID999999'"):
        read_cpn(bad)


def test_unknown_colour_set_leaves_out_the_place_naming_it(good):
    # CPN Tools marks the place as an error and runs the rest: so does the import
    bad = good.replace('version="4.0.1">INT</text>', 'version="4.0.1">NOPE</text>', 1)
    imported = read_cpn(bad)
    assert "count" not in imported.net.places
    place = next(i for i in imported.report.unsupported if i.kind == "place")
    assert place.name == "count" and "colour set 'NOPE' is declared nowhere" in place.reason
    with pytest.raises(IncompleteImportError, match="NOPE"):
        read_cpn(bad, strict=True)


def test_a_variable_of_an_undeclared_colour_set_is_left_out_not_the_file():
    # an unused variable whose colour set the file never declares (a field file: CPN
    # Tools only marks it): the declaration is left out, the net imported whole
    declarations = (colset("D1", "INT", "<int/>") + var("D2", "INT", "x")
                    + var("D3", "DATAP", "dp"))
    text = cpn_file(declarations, [("P1", "a", "INT", "1`1"), ("P2", "b", "INT", "")],
                    [("T1", "move", "", "")],
                    [("A1", "PtoT", "T1", "P1", "x"), ("A2", "TtoP", "T1", "P2", "x")])
    imported = read_cpn(text)
    assert set(imported.net.transitions) == {"move"}
    (item,) = imported.report.unsupported
    assert (item.kind, item.name, item.missing) == ("declaration", "var dp", "DATAP")


def test_cpn_ml_syntax_error_leaves_out_its_transition_naming_element_line_and_column(good):
    bad = good.replace('version="4.0.1">x + 1</text>', 'version="4.0.1">x +* 1</text>')
    imported = read_cpn(bad)  # CPN Tools loads such a file too, and marks the element
    assert not imported.complete and not imported.net.transitions
    (item,) = imported.report.unsupported
    assert (item.kind, item.name) == ("transition", "increment")
    assert f"line {line_of(bad, 'x +* 1') - 5})" in item.reason  # the <annot> element's line
    assert "CPN ML syntax error at line 1, column 4 of 'x +* 1': unexpected '*'" in item.reason
    with pytest.raises(IncompleteImportError, match="unexpected '\\*'"):
        read_cpn(bad, strict=True)


def test_huge_input_refused_before_parsing(good, tmp_path):
    path = tmp_path / "big.cpn"
    path.write_text(good)
    with pytest.raises(CpnFormatError, match=r"over the 1000-byte limit"):
        read_cpn(path, max_bytes=1000)


def test_entity_expansion_refused():
    bomb = ('<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa">'
            '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><workspaceElements>&b;</workspaceElements>')
    with pytest.raises(CpnFormatError, match="refused unsafe XML"):
        read_cpn(bomb)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_cpn(tmp_path / "absent.cpn")


def test_strict_import_refuses_a_partial_net(shared_dir):
    path = shared_dir / "data" / "cpn" / "QueueSystem_inttime.cpn"
    imported = read_cpn(path)
    assert not imported.complete and len(imported.net.transitions) == 4
    with pytest.raises(IncompleteImportError, match="23 element\\(s\\) left out") as info:
        read_cpn(path, strict=True)
    # initfile opens a file in the simulation's output directory: named, with its line
    assert ("declaration 'initfile' (ID8545383 line 137, column 28): "
            "function 'Output.getSimOutputDir'") in str(info.value)
    # fileid (a cell holding NONE : TextIO.outstream option) and getfid (Option.valOf of
    # it) are read: getfid raises SML's Option, as the file's comment says it will
    with pytest.raises(MLRaise, match="Option"):
        imported.net.declarations["getfid"]()


def test_ml_syntax_error_position():
    with pytest.raises(MLSyntaxError) as info:
        parse_ml("if a then\n  b else", "guard of t")
    assert (info.value.line, info.value.column) == (2, 9)
