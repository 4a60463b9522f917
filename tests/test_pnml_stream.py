"""The streamed P/T PNML reader: the same matrices as the whole-tree reader, every file it
does not read plainly left to that reader (which names the error), budgets while reading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tcpn.petrinets.checking.contest.examinations import load_model, pt_matrices
from tcpn.petrinets.exchange.cpn_import import CpnFormatError
from tcpn.petrinets.exchange.pnml import read_pnml
from tcpn.petrinets.exchange.pnml.ptstream import ReadStopped, read_pt_stream
from tcpn.petrinets.statespace.ptspace import pt_net

HEAD = ('<?xml version="1.0"?>\n<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">'
        '<net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet">'
        '<name><text>n</text></name>')
TAIL = "</net></pnml>"
#: arcs before their nodes, two arcs on one pair, a weight, a nested page, a self-loop
BODY = ('<page id="pg"><arc id="a0" source="p0" target="t0"><inscription><text>2</text>'
        '</inscription></arc><arc id="a1" source="p0" target="t0"/>'
        '<place id="p0"><initialMarking><text> 3 </text></initialMarking></place>'
        '<place id="p1"/><transition id="t0"/><transition id="t1"/>'
        '<arc id="a2" source="t0" target="p1"/><page id="inner">'
        '<arc id="a3" source="p1" target="t1"/><arc id="a4" source="t1" target="p1"/>'
        '<arc id="a5" source="t1" target="p0"><inscription><text>5</text></inscription>'
        '</arc></page></page>')


def write(tmp_path: Path, body: str, head: str = HEAD) -> Path:
    path = tmp_path / "model.pnml"
    path.write_text(head + body + TAIL)
    return path


def test_the_stream_builds_the_whole_tree_readers_matrices(tmp_path):
    path = write(tmp_path, BODY)
    arrays = read_pt_stream(path, 10**6)
    assert arrays is not None and arrays.places == ("p0", "p1")
    streamed, full = pt_matrices(arrays), pt_net(read_pnml(path).net)
    assert streamed.places == full.places and streamed.transitions == full.transitions
    assert streamed.initial.tolist() == full.initial.tolist() == [3, 0]
    for name in ("pre", "post", "test", "inhibit", "reset"):
        assert (getattr(streamed, name) != getattr(full, name)).nnz == 0, name
    assert streamed.pre.toarray().tolist() == [[3, 0], [0, 1]]
    assert streamed.post.toarray().tolist() == [[0, 1], [5, 1]]


@pytest.mark.parametrize("body, error", [
    (BODY.replace('id="a4"', 'id="a3"'), "duplicate id 'a3'"),
    (BODY.replace('target="p1"/><page', 'target="p9"/><page'), "'p9', which is not a node"),
    (BODY.replace("<text> 3 </text>", "<text>x</text>"), "initial marking 'x'"),
    (BODY.replace("<text>5</text>", "<text>0</text>"), "arc inscription '0'"),
    (BODY.replace('source="t1" target="p0"', 'source="p1" target="p0"'),
     "must join a place and a transition"),
    (BODY + "<page", "malformed XML"),
])
def test_a_wrong_file_is_left_to_the_reader_that_names_the_error(tmp_path, body, error):
    path = write(tmp_path, body)
    assert read_pt_stream(path, 10**6) is None
    with pytest.raises(CpnFormatError, match=error) as raised:
        load_model(path)
    assert re.search(r", line \d+", str(raised.value)), raised.value


@pytest.mark.parametrize("change", [
    lambda text: text.replace("grammar/ptnet", "grammar/symmetricnet"),
    lambda text: text.replace('<place id="p1"/>', '<place id="p1"><toolspecific tool="tcpn"'
                              ' version="1"><timed/></toolspecific></place>'),
    lambda text: text.replace('<arc id="a2" source="t0" target="p1"/>',
                              '<arc id="a2" source="p1" target="t0"><arctype><text>inhibitor'
                              '</text></arctype></arc>'),
])
def test_files_beyond_the_plain_grammar_go_to_the_full_reader(tmp_path, change):
    path = tmp_path / "model.pnml"
    path.write_text(change(HEAD + BODY + TAIL))
    assert read_pt_stream(path, 10**6) is None


def test_a_file_over_the_size_limit_is_not_streamed(tmp_path):
    assert read_pt_stream(write(tmp_path, BODY), 100) is None


def test_a_budget_stops_the_reading_with_its_reason(tmp_path, monkeypatch):
    from tcpn.petrinets.exchange.pnml import ptstream
    monkeypatch.setattr(ptstream, "CHECK_EVERY", 3)
    with pytest.raises(ReadStopped, match="time budget"):
        read_pt_stream(write(tmp_path, BODY), 10**6, lambda: "time budget reached")


def test_a_count_past_the_token_list_limit_is_kept_as_a_count(tmp_path):
    """The stream keeps markings as counts, so a place marked with 4 x 10^9 (the contest's
    GPPP-PT-C0010N1000000000) is read, where the full reader, which makes the tokens,
    refuses it over ``marking_tokens``; past int64's room (2^62) it is the full reader's
    again, which names the limit."""
    path = write(tmp_path, BODY.replace("<text> 3 </text>", "<text>4000000000</text>"))
    arrays = read_pt_stream(path, 10**6)
    assert arrays is not None and list(arrays.initial) == [4_000_000_000, 0]
    assert list(load_model(path).net.initial)[:1] == [4_000_000_000]
    huge = write(tmp_path, BODY.replace("<text> 3 </text>", f"<text>{2**63}</text>"))
    assert read_pt_stream(huge, 10**6) is None
    with pytest.raises(CpnFormatError, match="marking_tokens"):
        load_model(huge)
