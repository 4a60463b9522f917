"""`tcpn export` and `tcpn import`: files written, reports printed, exit codes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_process import run_tcpn as tcpn


def test_export_python_reference_to_cpn_then_import_and_export_again(tmp_path):
    first = tmp_path / "mm1.cpn"
    done = tcpn("export", "--python", "tcpn.petrinets.exchange.loading:example_net", "-o",
                str(first))
    assert done.returncode == 0, done.stderr
    assert "<boolean>true</boolean>" in first.read_text()  # exponential delays: real time
    imported = tcpn("import", str(first), "-o", str(tmp_path / "again.cpn"))
    assert imported.returncode == 0, imported.stderr
    assert "imported 4 places, 3 transitions, 8 arcs" in imported.stdout
    assert (tmp_path / "again.cpn").read_text() == first.read_text()


def test_export_a_scenario_writes_its_whole_net(tmp_path):
    target = tmp_path / "dumbbell.cpn"
    scenario = Path(__file__).parents[1] / "scenarios" / "dumbbell_newreno.yaml"
    done = tcpn("export", str(scenario), "-o", str(target), "--layout", "grid")
    assert done.returncode == 0, done.stderr
    imported = tcpn("import", str(target), "--strict")
    assert imported.returncode == 0, imported.stderr
    assert "0 element(s) left out" in imported.stdout
    missing = tcpn("export", str(tmp_path / "none.yaml"), "-o", str(target), "--overwrite")
    assert missing.returncode == 3 and "none.yaml" in missing.stderr
    written = target.read_bytes()
    again = tcpn("export", str(scenario), "-o", str(target))
    assert again.returncode == 3 and "dumbbell.cpn exists: pass overwrite" in again.stderr
    again = tcpn("import", str(target), "-o", str(target))
    assert again.returncode == 3 and "dumbbell.cpn is FILE, which it would replace" in \
        again.stderr
    assert target.read_bytes() == written
    usage = tcpn("export", str(scenario), "--format", "svg")
    # the box wraps to the width, ASCII in a non-UTF-8 locale
    said = " ".join(re.sub(r"(?<=\s)[│|]|[│|](?=\s|$)", " ", usage.stderr).split())
    assert usage.returncode == 2 and "'svg' is not one of cpn, pnml" in said


def test_export_a_net_defined_in_a_python_file_to_pnml_on_stdout(tmp_path):
    script = tmp_path / "mynet.py"
    script.write_text(
        "from tcpn.petrinets import UNIT, PetriNet, Place, Transition\n"
        "def build():\n"
        "    net = PetriNet('tiny')\n"
        "    net.add_place(Place('a', UNIT, initial=[()]))\n"
        "    net.add_transition(Transition('t'))\n"
        "    net.add_input('a', 't', '()')\n"
        "    return net\n")
    done = tcpn("export", "--python", f"{script}:build", "--format", "pnml")
    assert done.returncode == 0, done.stderr
    assert "grammar/ptnet" in done.stdout and '<place id="a">' in done.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("export", "--python", "nosuch.module:net"), "can't import nosuch.module"),
    (("export", "--python", "tcpn.petrinets.examples:single_server_queue"),
     "takes no arguments"),
    (("export", "--python", "tcpn.petrinets.exchange.loading:example_net", "-f", "pnml",
      "--strict"),
     "place source: colour set TINT is not a finite sort"),
    (("import", "missing.cpn"), "missing.cpn: no such file"),
])
def test_bad_input_is_one_line_and_exit_code_3(args, message):
    done = tcpn(*args)
    assert done.returncode == 3
    assert message in done.stderr and done.stderr.count("\n") == 1


def test_strict_import_of_a_partial_net_fails(shared_dir):
    done = tcpn("import", str(shared_dir / "data" / "cpn" / "QueueSystem_inttime.cpn"),
                "--strict")
    assert done.returncode == 3
    assert ("declaration 'initfile' (ID8545383 line 137, column 28): "
            "function 'Output.getSimOutputDir'") in done.stderr


def test_import_reports_each_page_and_each_element_with_its_page(shared_dir):
    done = tcpn("import", str(shared_dir / "data" / "cpn" / "RealTimedProtocol.cpn"))
    assert done.returncode == 0
    assert "page Top: 11 place(s) and 5 transition(s) imported, 0 element(s) left out" \
        in done.stdout
    assert ("note: transition 'Transmit Packet' (id13 line 837, page Top): free variable(s) "
            "r bound to every member of their colour set") in done.stdout
