"""CPN Tools files from a third field round (cpnfield22): the CPN ML they use, each form
read as CPN Tools and SML/NJ read it, on small nets written by hand.

Values are worked out by hand from the SML Basis Library, SML/NJ's library (which CPN
Tools' simulator loads) and CPN Tools' own library; where SML/NJ is installed the same
declarations run in ``sml`` and must give the same values, and where a net is finite its
state space must be the one cpncheck builds from the same file.
"""

from __future__ import annotations

import pytest
from test_exchange_cpn_field import colset, cpn_file, var

from tcpn.petrinets.errors import FiringError
from tcpn.petrinets.exchange.cpn_import import read_cpn
from tcpn.petrinets.statespace.space import explore


def test_a_colour_set_named_with_a_prime_is_named_by_the_firing_error_it_causes(tmp_path):
    """``SMALL'INT`` (a prime is a letter of CPN ML names) bounds the output of ``i + 1``:
    the transition is imported, and the occurrence putting 4 there fails naming the arc and
    the colour set, where tcpn's own code for the test once did not compile."""
    text = cpn_file(
        colset("D1", "INT", "<int/>")
        + colset("D2", "SMALL'INT", "<int><with><ml>1</ml><ml>3</ml></with></int>")
        + var("D3", "INT", "i"),
        [("P1", "P", "INT", "1`1++1`3"), ("P2", "Q", "SMALL'INT", "")],
        [("T1", "T", "", "")],
        [("A1", "PtoT", "T1", "P1", "i"), ("A2", "TtoP", "T1", "P2", "i + 1")])
    path = tmp_path / "prime.cpn"
    path.write_text(text, encoding="iso-8859-1")
    imported = read_cpn(path)
    assert imported.complete, imported.report.text()
    with pytest.raises(FiringError, match=r"token 4 is not of colour set SMALL'INT"):
        explore(imported.net, clock="absolute")
