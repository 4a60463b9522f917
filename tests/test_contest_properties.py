"""Contest property files that must be refused, naming the file, the property and the
element (issue 27): content a reader would drop, ids given twice, a set with no property.

The hostile files are a real contest file of the shared sample with one change each.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_contest import extracted  # the tests directory is on pytest's path

from tcpn.errors import InputError
from tcpn.petrinets.checking.contest.examinations import check_examination
from tcpn.petrinets.checking.contest.properties import read_properties

INSTANCE = "Philosophers-PT-000005"


@pytest.fixture(scope="module")
def instance(shared_dir, tmp_path_factory) -> Path:
    return extracted(shared_dir, tmp_path_factory.mktemp("mcc"), INSTANCE)


def _first_formula(text: str) -> re.Match[str]:
    found = re.search(r"<formula>(.*?)</formula>", text, re.S)
    assert found is not None
    return found


def _first_id(text: str) -> str:
    found = re.search(r"<id>([^<]+)</id>", text)
    assert found is not None
    return found.group(1)


def test_the_real_file_reads(instance):
    props = read_properties(instance / "CTLCardinality.xml")
    assert len(props) == 16 and len({p.id for p in props}) == 16


@pytest.mark.parametrize(("wrap", "element"), [
    # a constant holding a subtree: the subtree was dropped silently
    ("<true>{body}</true>", "true"),
    ("<false>{body}</false>", "false"),
    ("<negation><false>{body}</false></negation>", "false"),
    # leaves holding elements
    ("<integer-le><integer-constant>3<negation/></integer-constant>"
     "<integer-constant>4</integer-constant></integer-le>", "integer-constant"),
    ("<is-fireable><transition>t<true/></transition></is-fireable>", "transition"),
])
def test_content_a_leaf_would_drop_is_refused(instance, tmp_path, wrap, element):
    text = (instance / "CTLCardinality.xml").read_text()
    formula = _first_formula(text)
    hostile = (text[:formula.start(1)] + wrap.format(body=formula.group(1))
               + text[formula.end(1):])
    path = tmp_path / "CTLCardinality.xml"
    path.write_text(hostile)
    with pytest.raises(InputError) as info:
        read_properties(path)
    message = str(info.value)
    assert str(path) in message and f"<{element}>" in message
    assert _first_id(text) in message, message


def test_text_inside_a_constant_is_refused(instance, tmp_path):
    text = (instance / "CTLCardinality.xml").read_text()
    formula = _first_formula(text)
    path = tmp_path / "CTLCardinality.xml"
    path.write_text(text[:formula.start(1)] + "<true>false</true>" + text[formula.end(1):])
    with pytest.raises(InputError, match=r"<true>.*'false'"):
        read_properties(path)


def test_a_property_id_given_twice_is_refused_naming_it(instance, tmp_path):
    text = (instance / "CTLCardinality.xml").read_text()
    first = re.search(r"<property>.*?</property>", text, re.S)
    assert first is not None
    path = tmp_path / "CTLCardinality.xml"
    path.write_text(text[:first.end()] + first.group(0) + text[first.end():])
    with pytest.raises(InputError, match=re.escape(repr(_first_id(text))) + ".*twice"):
        read_properties(path)


def test_an_empty_property_set_is_refused(instance, tmp_path):
    text = (instance / "CTLCardinality.xml").read_text()
    empty = re.sub(r"<property>.*</property>", "", text, flags=re.S)
    assert "<property-set" in empty and "<property>" not in empty
    shutil.copy(instance / "model.pnml", tmp_path / "model.pnml")
    (tmp_path / "CTLCardinality.xml").write_text(empty)
    with pytest.raises(InputError, match=r"CTLCardinality\.xml.*no <property>"):
        check_examination(tmp_path / "model.pnml", "CTLCardinality")
    done = subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()",
                           "check", str(tmp_path / "model.pnml"), "--examination",
                           "CTLCardinality"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "no <property>" in done.stderr and done.stdout == ""


@pytest.mark.parametrize("constant", ["²", "1" * 5000, "+3", "0x10"])
def test_a_constant_that_is_not_a_plain_integer_is_refused(instance, tmp_path, constant):
    text = (instance / "CTLCardinality.xml").read_text()
    found = re.search(r"<integer-constant>\d+</integer-constant>", text)
    assert found is not None
    path = tmp_path / "CTLCardinality.xml"
    path.write_text(text[:found.start()] + f"<integer-constant>{constant}</integer-constant>"
                    + text[found.end():])
    with pytest.raises(InputError, match=r"<integer-constant>: (.* is not an integer|an "
                       r"integer of 5,000 digits)"):
        read_properties(path)


def test_empty_name_lists_are_sums_of_nothing(instance, tmp_path):
    """An empty ``<place-bound/>`` (the contest's 2021 Sudoku files hold them, answered
    0), an empty ``<tokens-count/>`` and an empty ``<is-fireable/>`` (false): every
    answer is the one the formula written with 0 and false gives."""
    shutil.copy(instance / "model.pnml", tmp_path / "model.pnml")

    def answers(examination: str, text: str) -> list[str]:
        (tmp_path / f"{examination}.xml").write_text(
            '<?xml version="1.0"?><property-set xmlns="http://mcc.lip6.fr/"><property>'
            f"<id>X-{examination}-00</id><formula>{text}</formula></property></property-set>")
        return check_examination(tmp_path / "model.pnml", examination)

    assert [line.split()[2] for line in answers("UpperBounds", "<place-bound/>")] == ["0"]
    empty = answers("ReachabilityCardinality", "<exists-path><finally><integer-le>"
                    "<integer-constant>1</integer-constant><tokens-count/></integer-le>"
                    "</finally></exists-path>")
    fireable = answers("ReachabilityFireability",
                       "<exists-path><finally><is-fireable/></finally></exists-path>")
    assert [line.split()[2] for line in empty + fireable] == ["FALSE", "FALSE"]
    with pytest.raises(InputError, match=r"<place-bound>: expected <place> names only"):
        answers("UpperBounds", "<place-bound><transition>t</transition></place-bound>")
