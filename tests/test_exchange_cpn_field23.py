"""CPN Tools files from a fifth field round (cpnfield23): the faults they showed, each on a
small net written by hand."""

from __future__ import annotations

from test_exchange_cpn_field import colset, cpn_file, var

from tcpn.petrinets.exchange.cpn_import import read_cpn


def test_an_index_colour_set_without_its_bounds_is_left_out_naming_what_it_lacks():
    """An editor wrote ``<index/>`` with the declaration only in its ``<layout>``: CPN
    Tools reads the structure, so the colour set has no bounds; its places are left out
    naming why (the import once stopped with an internal ValueError)."""
    text = cpn_file(
        colset("D1", "PH", "<index/>") + colset("D2", "INT", "<int/>") + var("D3", "PH", "p"),
        [("P1", "Think", "PH", "1`ph(1)"), ("P2", "Count", "INT", "1`0")],
        [("T1", "take", "", "")],
        [("A1", "PtoT", "T1", "P1", "p")])
    imported = read_cpn(text)
    (place,) = [i for i in imported.report.unsupported if i.kind == "place"]
    assert place.name == "Think"
    assert "<index> without its two bounds (<ml>) and its constructor (<id>)" in place.reason
    assert "Count" in imported.net.places
