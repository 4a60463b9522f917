"""ASK-CTL queries read into formulas, and checked."""

from __future__ import annotations

import pytest

from tcpn.errors import InputError
from tcpn.petrinets.checking.askctl import read_askctl
from tcpn.petrinets.checking.check import check
from tcpn.petrinets.checking.text import to_text
from tcpn.petrinets.examples import left_first_philosophers, retransmission


@pytest.mark.parametrize("query, text", [
    ("TT", "true"),
    ('POS(NF("eats", fn n => size (Mark.Top\'eat0 1 n) >= 1))', "EF tokens(eat0) >= 1"),
    ('EV(NF("x", fn n => Mark.Top\'eat0 1 n <> empty))', "AF tokens(eat0) != 0"),
    ('ALONG(NOT(NF("x", fn n => Mark.Top\'eat0 1 n = empty)))', "EG !tokens(eat0) == 0"),
    ('FORALL_UNTIL(TT, NF("d", fn n => (OutArcs n) = []))', "A[true U deadlock]"),
    ('EXIST_UNTIL(FF, FORALL_NEXT(TT))', "E[false U AX true]"),
    ('IMP(EXIST_NEXT(TT), NF("q", "tokens(eat1) <= 1"))', "!EX true | tokens(eat1) <= 1"),
])
def test_operators(query, text):
    assert to_text(read_askctl(query, left_first_philosophers(3))) == text


def test_a_cpn_tools_query_file_checks():
    query = """
    fun IsDead n = (OutArcs n) = [];
    val noDeadlock = INV(NOT(NF("dead", IsDead)));
    eval_node noDeadlock InitNode;
    """
    net = left_first_philosophers(4)
    formula = read_askctl(query, net)
    assert to_text(formula) == "AG !deadlock"
    assert check(net, formula).answer == "false"
    delivered = read_askctl("EV(NF(\"got\", fn n => size (Mark.Net'delivered 1 n) = 1))",
                            retransmission())
    assert check(retransmission(), delivered).answer == "false"


@pytest.mark.parametrize("query, message", [
    ("INV(", "expected an ASK-CTL operator"),
    ("NEVER(TT)", "unknown ASK-CTL operator 'NEVER'"),
    ('POS(NF("x", fn n => Mark.Top\'nowhere 1 n = empty))', "no place Top'nowhere"),
    ('POS(NF("x", fn n => length (Mark.Top\'eat0 1 n) > 2))', "SML tcpn does not evaluate"),
    ('MODAL(AF("a", fn a => true))', "arc formula"),
    ("INV(TT) junk", "unexpected text"),
])
def test_errors_name_line_and_column(query, message):
    with pytest.raises(InputError, match=message) as caught:
        read_askctl(query, left_first_philosophers(3))
    assert "line 1, column" in str(caught.value)
