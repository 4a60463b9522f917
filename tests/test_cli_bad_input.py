"""Every ``tcpn`` subcommand on malformed input: exit 3 and a one-line message naming the
file and the line, field or element at fault; never a traceback, an internal error, a
hang or unbounded memory.

Each case writes real files into a temporary directory and runs ``tcpn`` in a subprocess
limited to :data:`MEMORY_BYTES` of address space and :data:`CPU_S` of CPU (a case that
allocates without bound or loops is killed and fails). tests/test_input_fuzz.py mutates the
readers' files at random; this file takes every subcommand through the kinds of bad input
a user makes: truncated or invalid YAML, wrong types, unknown fields, negative rates,
huge numbers, missing files, directories, binary garbage, empty files, truncated nets and
captures, and names of places and transitions that do not exist.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tcpn.petrinets.examples import counter
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.pnml import to_pnml

REPO = Path(__file__).resolve().parent.parent
MEMORY_BYTES = 1 << 30
CPU_S = 60
WALL_S = 180
DRIVER = "import sys; from tcpn.cli import main; sys.argv = ['tcpn', *sys.argv[1:]]; main()"

SCENARIO = """\
name: t
links:
  - {a: S, b: R, rate_bps: 1.0e+7, delay_s: 0.001}
  - {a: R, b: D, rate_bps: 1.0e+6, delay_s: 0.02}
flows:
  - {id: f0, src: S, dst: D, variant: newreno}
horizon_s: 1.0
"""
PCAP_HEADER = bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000")  # Ethernet


def _files(directory: Path) -> None:
    """Every input the cases name, good and bad, in ``directory``."""
    text = {
        "good.yaml": SCENARIO,
        "truncated.yaml": SCENARIO[:SCENARIO.index("flows:") + 12],
        "invalid.yaml": "name: [t\nlinks: {\n",
        "wrong_type.yaml": SCENARIO.replace("horizon_s: 1.0", "horizon_s: soon"),
        "unknown_field.yaml": SCENARIO + "colour: blue\n",
        "negative_rate.yaml": SCENARIO.replace("rate_bps: 1.0e+6", "rate_bps: -1.0e+6"),
        "huge_horizon.yaml": SCENARIO.replace("horizon_s: 1.0", "horizon_s: 1.0e+30"),
        "huge_transfer.yaml": SCENARIO.replace("variant: newreno}",
                                               "variant: newreno, bytes: 1.0e+18}"),
        "huge_buffer.yaml": SCENARIO.replace("variant: newreno}",
                                             "variant: newreno, rcv_buf_bytes: 1.0e+15}"),
        "list.yaml": "- 1\n- 2\n",
        "empty.yaml": "",
        "unknown_axis.yaml": SCENARIO + "sweep:\n  axes:\n    nope: [1, 2]\n",
        "huge_sweep.yaml": SCENARIO + "sweep:\n  axes:\n    links[1].rate_bps: [1.0e+6, 2.0e+6]"
                           "\n  replications: 1000000000000\n",
        "good.pnml": to_pnml(counter(3)),
        "empty.pnml": "",
        "not_a_report/manifest.json": "{\"format\": \"something else\"}\n",
        "examination/model.pnml": to_pnml(counter(3)),
    }
    for name, content in text.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(content)
    pnml = to_pnml(counter(3)).encode()
    cpn = to_cpn(counter(3), layout="grid").encode("iso-8859-1")
    (directory / "truncated.pnml").write_bytes(pnml[:len(pnml) // 2])
    (directory / "truncated.cpn").write_bytes(cpn[:len(cpn) // 2])
    (directory / "garbage.yaml").write_bytes(bytes(range(256)) * 4)
    (directory / "garbage.cpn").write_bytes(b"\x00\xff" * 500)
    (directory / "truncated.pcap").write_bytes(PCAP_HEADER + b"\x00" * 10)
    (directory / "empty.pcap").write_bytes(b"")
    (directory / "a_directory.yaml").mkdir()
    (directory / "a_directory.pcap").mkdir()


LINE = r":\d+: "  # file:line: as the scenario and sweep readers write it
#: (id, arguments (``@name``: a file of the inputs' directory), a name the message must
#: hold (the file's, or the element's) and a pattern for where in it).
CASES: list[tuple[str, list[str], str, str]] = [
    ("run-truncated-yaml", ["run", "@truncated.yaml", "-o", "out"], "@truncated.yaml",
     LINE + "not valid YAML"),
    ("run-huge-horizon", ["run", "@huge_horizon.yaml", "-o", "out"], "@huge_horizon.yaml",
     LINE + "horizon_s"),
    ("run-huge-buffer", ["run", "@huge_buffer.yaml", "-o", "out"], "@huge_buffer.yaml",
     LINE + r"flows\[0\]\.rcv_buf_bytes"),
    ("run-huge-replications", ["run", "@good.yaml", "--replications", "1000000000000", "-o",
                               "out"], "replications", "1 to 1,000,000"),
    ("run-directory", ["run", "@a_directory.yaml"], "@a_directory.yaml", "not a regular file"),
    ("run-missing", ["run", "@missing.yaml"], "@missing.yaml", "no such file"),
    ("scenario-invalid-yaml", ["scenario", "@invalid.yaml"], "@invalid.yaml",
     LINE + "not valid YAML"),
    ("scenario-list", ["scenario", "@list.yaml"], "@list.yaml", LINE + "a scenario is a mapping"),
    ("scenario-garbage", ["scenario", "@garbage.yaml"], "@garbage.yaml",
     LINE + r"not UTF-8 text \(byte 0x\w\w at offset \d+\)"),
    ("validate-wrong-type", ["validate", "@wrong_type.yaml", "--lenses", "net,fluid", "-o",
                             "out"], "@wrong_type.yaml", LINE + "horizon_s"),
    ("table-unknown-field", ["table", "@good.yaml", "@unknown_field.yaml", "--workers", "1"],
     "@unknown_field.yaml", LINE + "colour"),
    ("table-directory", ["table", "@a_directory.yaml"], "@a_directory.yaml",
     "not a regular file"),
    ("optimize-negative-rate", ["optimize", "@negative_rate.yaml", "--parameter", "ecn_k",
                                "--low", "2", "--high", "10", "-o", "out"],
     "@negative_rate.yaml", LINE + r"links\[1\]\.rate_bps"),
    ("report-huge-transfer", ["report", "@huge_transfer.yaml", "--no-pdf", "-o", "out"],
     "@huge_transfer.yaml", LINE + r"flows\[0\]\.bytes"),
    ("report-from-not-a-report", ["report", "--from", "@not_a_report", "--no-pdf", "-o",
                                  "out"], "not_a_report", "manifest"),
    ("report-from-missing", ["report", "--from", "@missing", "--no-pdf", "-o", "out"],
     "missing", "no"),
    ("export-empty-yaml", ["export", "@empty.yaml", "-o", "net.cpn"], "@empty.yaml",
     LINE + "the file is empty"),
    ("export-truncated-cpn", ["export", "@truncated.cpn", "-f", "pnml"], "@truncated.cpn",
     r", line \d+: malformed XML"),
    ("import-truncated-pnml", ["import", "@truncated.pnml"], "@truncated.pnml",
     r", line \d+: malformed XML"),
    ("import-empty-pnml", ["import", "@empty.pnml"], "@empty.pnml", r", line 1: malformed XML"),
    ("import-garbage-cpn", ["import", "@garbage.cpn"], "@garbage.cpn", r", line 1: "),
    ("sweep-unknown-axis", ["sweep", "@unknown_axis.yaml", "--dry-run"], "@unknown_axis.yaml",
     LINE + "sweep.axes.nope"),
    ("sweep-huge", ["sweep", "@huge_sweep.yaml", "--dry-run"], "@huge_sweep.yaml",
     LINE + "the sweep has 2 cells and 2000000000000 runs"),
    ("sweep-garbage", ["sweep", "@garbage.yaml", "--dry-run"], "@garbage.yaml",
     LINE + r"not UTF-8 text \(byte 0x\w\w at offset \d+\)"),
    ("pcap-truncated", ["pcap", "@truncated.pcap"], "@truncated.pcap", "byte offset|packet"),
    ("pcap-empty", ["pcap", "@empty.pcap"], "@empty.pcap", "."),
    ("pcap-directory", ["pcap", "@a_directory.pcap"], "@a_directory.pcap", "not a regular file"),
    ("check-unknown-place", ["check", "@good.pnml", "--ctl", "AG tokens(nowhere) >= 1"],
     "nowhere", "place"),
    ("check-unknown-transition", ["check", "@good.pnml", "--ltl", "G F fireable(nothing)"],
     "nothing", "transition"),
    ("check-unfinished-formula", ["check", "@good.pnml", "--ctl", "AG ((("], "AG (((", "."),
    ("check-unknown-fair", ["check", "@good.pnml", "--weak-fair", "nothing", "--ctl",
                            "AG true"], "nothing", "transition"),
    ("check-property-garbage", ["check", "@garbage.yaml", "--property", "all"], "@garbage.yaml",
     LINE + "not UTF-8"),
    ("check-unknown-property", ["check", "@good.yaml", "--property", "nothing"], "nothing",
     "propert"),
    ("check-huge-segments", ["check", "@good.yaml", "--property", "all", "--segments",
                             "1000000000000"], "segments", "."),
    ("check-examination-missing", ["check", "@examination/model.pnml", "--examination",
                                   "CTLFireability"], "CTLFireability.xml", "."),
]


def _limit_resources() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("inputs")
    _files(directory)
    return directory


@pytest.mark.parametrize("arguments,names,where", [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_bad_input_exits_3_naming_the_file_and_the_place(inputs, tmp_path, arguments, names,
                                                        where):
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO)),
           "COLUMNS": "60", "TERM": "dumb"}
    argv = [str(inputs / a[1:]) if a.startswith("@") else a for a in arguments]
    try:
        done = subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True,
                              text=True, timeout=WALL_S, preexec_fn=_limit_resources,
                              env=env, cwd=tmp_path, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {WALL_S} s")
    message = " ".join(done.stderr.split())  # Rich may wrap a long line
    assert "Traceback" not in done.stderr and "internal error" not in message, done.stderr
    assert done.returncode == 3, (done.returncode, done.stdout[-2000:], done.stderr)
    # ``table`` keeps each file's error in its row and on a line of stdout below the table
    assert message.startswith("tcpn: invalid input: ") or arguments[0] == "table", message
    said = message + " " + " ".join(done.stdout.split())
    assert names.removeprefix("@") in said, said
    assert re.search(where, said), said
    assert not [p for p in tmp_path.iterdir()], "bad input left an output behind"
