"""CPN Tools and PNML import within bounds (issue 13): markings, file size, nesting, FIFOs."""

from __future__ import annotations

import os

import pytest

from tcpn.errors import InputError
from tcpn.limits import using_limits
from tcpn.petrinets.examples import counter
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.cpn_import import CpnFormatError, read_cpn
from tcpn.petrinets.exchange.loading import load_net
from tcpn.petrinets.exchange.pnml import read_pnml

PNML = """<?xml version="1.0" encoding="UTF-8"?>
<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">
  <net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet">
    <page id="page0">
      <place id="a">
        <initialMarking>
          <text>MARKING</text>
        </initialMarking>
      </place>
    </page>
  </net>
</pnml>
"""


def _cpn_with_marking(marking: str) -> str:
    text = to_cpn(counter(3), layout="grid")
    assert ">1`0</text>" in text
    return text.replace(">1`0</text>", f">{marking}</text>")


def test_a_cpn_marking_of_a_billion_tokens_is_refused_naming_the_place():
    with pytest.raises(CpnFormatError) as info:
        read_cpn(_cpn_with_marking("1000000000`1"))
    message = str(info.value)
    assert "initial marking of place 'count'" in message and "marking_tokens" in message
    assert "line " in message and "element ID" in message


def test_a_cpn_marking_summed_over_terms_is_bounded():
    with pytest.raises(CpnFormatError, match="marking_tokens"):
        read_cpn(_cpn_with_marking("600000`1 ++ 600000`2"))


def test_a_raised_limit_admits_a_larger_marking():
    with using_limits(marking_tokens=2_000_000):
        imported = read_cpn(_cpn_with_marking("1500000`1"))
    assert len(imported.net.places["count"].initial_tokens) == 1_500_000


def test_a_pnml_marking_of_ten_to_the_twelve_is_refused_naming_the_place():
    with pytest.raises(CpnFormatError) as info:
        read_pnml(PNML.replace("MARKING", str(10**12)))
    message = str(info.value)
    assert "line 5, element a" in message and "marking_tokens" in message


def test_a_small_pnml_marking_still_reads():
    assert len(read_pnml(PNML.replace("MARKING", "3")).net.places["a"].initial_tokens) == 3


@pytest.mark.parametrize("suffix", [".cpn", ".pnml"])
def test_a_symlink_to_dev_zero_is_refused_without_reading(tmp_path, suffix):
    link = tmp_path / f"zero{suffix}"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"not a regular file \(a character device"):
        load_net(str(link))


@pytest.mark.parametrize("suffix", [".cpn", ".pnml"])
def test_a_fifo_is_refused_without_blocking(tmp_path, suffix):
    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"not a regular file \(a FIFO"):
        load_net(str(fifo))


def test_a_net_file_over_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "big.pnml"
    path.write_text(PNML.replace("MARKING", "1") + "<!--" + "x" * 5000 + "-->")
    with using_limits(net_file_bytes=4096), pytest.raises(
            InputError, match="over the 4096-byte limit net_file_bytes"):
        read_pnml(path)


@pytest.mark.parametrize("reader", [read_cpn, read_pnml])
def test_thousand_deep_xml_is_refused_with_the_line(reader):
    text = "<a>\n" + "<b>" * 1000 + "</b>" * 1000 + "</a>"
    with pytest.raises(CpnFormatError, match=r"<bytes>, line 2: elements nested too deep"):
        reader(text.encode())


@pytest.mark.parametrize("reader", [read_cpn, read_pnml])
def test_an_unknown_xml_encoding_is_an_input_error(reader):
    # found by tests/test_input_fuzz.py: expat raised LookupError (exit 70)
    text = PNML.replace("MARKING", "1").replace('encoding="UTF-8"', 'encoding="UTF-8000000"')
    with pytest.raises(CpnFormatError, match=r"<bytes>, line 1: .*unknown encoding"):
        reader(text.encode())


def test_a_pnml_delay_that_is_not_a_number_names_the_element():
    # found by tests/test_input_fuzz.py: ast.literal_eval raised SyntaxError (exit 70)
    text = PNML.replace("MARKING", "1").replace(
        '</place>', '</place><transition id="t"><toolspecific tool="tcpn" version="0.1.0">'
        '<delay value="-.inf"/></toolspecific></transition>')
    with pytest.raises(CpnFormatError,
                       match=r"<string>, line 9, element t: .*delay '-\.inf' is not a number"):
        read_pnml(text)
