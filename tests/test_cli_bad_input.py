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

import contextlib
import errno
import os
import re
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcpn.petrinets.colours import INT, EnumSet, IntSet, ListSet, RecordSet
from tcpn.petrinets.examples import counter
from tcpn.petrinets.exchange.cpn_export import to_cpn
from tcpn.petrinets.exchange.pnml import to_pnml
from tcpn.petrinets.net import PetriNet, Place, Transition

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
HUGE = "9" * 5000  # more digits than Python's int() reads (4,300)
DEEP = 300  # levels of nesting: past tcpn's expression_depth (100), short of Python's stack
SWEEP = SCENARIO + "sweep:\n  axes:\n    links[1].rate_bps: [1.0e+6, 2.0e+6]\n"
PT_NET = """<?xml version="1.0"?>
<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">
<net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="pg">
<place id="p"><initialMarking><text>MARKING</text></initialMarking></place>
<transition id="t"/>
<arc id="a" source="p" target="t"><inscription><text>WEIGHT</text></inscription></arc>
</page></net></pnml>
"""


def _contest_file(formula: str) -> str:
    return ('<?xml version="1.0"?>\n<property-set xmlns="http://mcc.lip6.fr/"><property>'
            f"<id>p1</id><formula><all-paths><globally>{formula}</globally></all-paths>"
            "</formula></property></property-set>\n")


def _record_net() -> PetriNet:
    """A list of records on one place, read by a transition's arc (field ``size``)."""
    job = RecordSet("Job", kind=EnumSet(("small", "large"), name="Kind"),
                    size=IntSet(1, 9, name="Size"))
    net = PetriNet("records")
    net.declare(Job=job.record_type)
    net.add_place(Place("todo", ListSet(job, name="Jobs"),
                        initial=[(job.make(kind="small", size=2),)]))
    net.add_place(Place("done", INT))
    net.add_transition(Transition("take", guard="len(q) > 0"))
    net.add_input("todo", "take", "q")
    net.add_output("done", "take", "q[0].size")
    return net


def _with_record_field(cpn: str, field: str) -> str:
    """The record net's .cpn with its field ``size`` renamed ``field`` everywhere."""
    assert "<id>size</id>" in cpn and "size:Size" in cpn
    return cpn.replace("<id>size</id>", f"<id>{field}</id>").replace(
        "size:Size", f"{field}:Size").replace("size = ", f"{field} = ").replace(
        "#size", f"#{field}")


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
        # integers of 5,000 digits, in every kind of input
        "huge_int.yaml": SCENARIO.replace("horizon_s: 1.0", f"horizon_s: {HUGE}"),
        "huge_count.yaml": SCENARIO.replace("variant: newreno}",
                                            f"variant: newreno, count: {'9' * 4000}}}"),
        "huge_int_sweep.yaml": SWEEP.replace("2.0e+6]", f"{HUGE}]"),
        "huge_int_replications.yaml": SWEEP + f"  replications: {HUGE}\n",
        "huge_marking.pnml": PT_NET.replace("MARKING", HUGE).replace("WEIGHT", "1"),
        "huge_weight.pnml": PT_NET.replace("MARKING", "1").replace("WEIGHT", HUGE),
        "huge_constant/model.pnml": to_pnml(counter(3)),
        "huge_constant/CTLCardinality.xml": _contest_file(
            "<integer-le><tokens-count><place>count</place></tokens-count>"
            f"<integer-constant>{HUGE}</integer-constant></integer-le>"),
        # nesting deeper than the readers recurse
        "deep/model.pnml": to_pnml(counter(3)),
        "deep/CTLFireability.xml": _contest_file(
            "<negation>" * 150 + "<is-fireable><transition>increment</transition>"
            "</is-fireable>" + "</negation>" * 150),
        "deep_guard.pnml": to_pnml(counter(3)).replace(
            "<guard>x &lt; LIMIT</guard>", f"<guard>x &lt; {'+'.join(['x'] * DEEP)}</guard>"),
        # NUL characters (YAML's "\0" escape) and lists where text belongs
        "nul_name.yaml": SCENARIO.replace("name: t", 'name: "t\\0x"'),
        "nul_flow.yaml": SCENARIO.replace("id: f0,", 'id: "f\\0",'),
        "nul_node.yaml": SCENARIO.replace("a: R, b: D", 'a: "R\\0", b: D'),
        "ab_top.yaml": SCENARIO + "ab: [1]\n",
        "ab_link.yaml": SCENARIO.replace("delay_s: 0.02}", "delay_s: 0.02, ab: [1]}"),
        "ab_sweep.yaml": SWEEP + "  ab: [1]\n",
        "sweep_name_list.yaml": SWEEP + "  name: [1]\n",
        "sweep_nul_name.yaml": SWEEP + '  name: "a\\0b"\n',
        "sweep.yaml": SWEEP,
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
    counter_cpn = to_cpn(counter(3), layout="grid")
    assert ">1`0</text>" in counter_cpn and "[x &lt; LIMIT]" in counter_cpn
    for name, content in {
        "huge_marking.cpn": counter_cpn.replace(">1`0</text>", f">1`{HUGE}</text>"),
        "deep_guard.cpn": counter_cpn.replace("[x &lt; LIMIT]",
                                              f"[x &lt; {'+'.join(['x'] * DEEP)}]"),
        **{f"record_{field}.cpn": _with_record_field(to_cpn(_record_net(), layout="grid"),
                                                     field)
           for field in ("class", "_x", "1x", "size'", "kind")},
    }.items():
        (directory / name).write_bytes(content.encode("iso-8859-1"))
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
    # issue 27: integers of 5,000 digits in every kind of input
    ("scenario-huge-int", ["scenario", "@huge_int.yaml"], "@huge_int.yaml",
     LINE + "horizon_s: an integer of 5,000 digits"),
    ("scenario-huge-count", ["scenario", "@huge_count.yaml"], "@huge_count.yaml",
     LINE + r"flows\[0\]\.count: .*integer of 4,000 digits.* outside the physical range"),
    ("sweep-huge-int", ["sweep", "@huge_int_sweep.yaml", "--dry-run"],
     "@huge_int_sweep.yaml",
     LINE + r"sweep\.axes\.links\[1\]\.rate_bps\[1\]: an integer of 5,000"),
    ("sweep-huge-replications", ["sweep", "@huge_int_replications.yaml", "--dry-run"],
     "@huge_int_replications.yaml", LINE + "sweep.replications: an integer of 5,000"),
    ("check-ctl-huge-int", ["check", "@good.pnml", "--ctl", f"AG tokens(count) <= {HUGE}"],
     "--ctl", r"formula, column 21: an integer of 5,000 digits"),
    ("check-askctl-huge-int", ["check", "@good.pnml", "--askctl",
                               f"INV(NF(\"a\", fn n => size (Mark.Top'count 1 n) <= {HUGE}))"],
     "--askctl", "an integer of 5,000 digits"),
    ("check-contest-huge-int", ["check", "@huge_constant/model.pnml", "--examination",
                                "CTLCardinality"], "CTLCardinality.xml",
     r", line \d+: property 'p1': <integer-constant>: an integer of 5,000 digits"),
    ("import-pnml-huge-marking", ["import", "@huge_marking.pnml"], "@huge_marking.pnml",
     r", line 4, element p: initial marking: an integer of 5,000 digits"),
    ("import-pnml-huge-weight", ["import", "@huge_weight.pnml"], "@huge_weight.pnml",
     r", line 6, element a: arc inscription: an integer of 5,000 digits"),
    ("import-cpn-huge-marking", ["import", "@huge_marking.cpn"], "@huge_marking.cpn",
     r"initial marking of place 'count': .*an integer of 5,000 digits"),
    # issue 27: nesting deeper than the readers and the checker recurse
    ("check-ctl-deep", ["check", "@good.pnml", "--ctl", "EF " * DEEP + "deadlock"], "--ctl",
     "nested too deep: .* over the limit expression_depth = 100"),
    ("check-ltl-deep", ["check", "@good.pnml", "--ltl", "deadlock U " * DEEP + "deadlock"],
     "--ltl", "nested too deep: .* over the limit expression_depth = 100"),
    ("check-askctl-deep", ["check", "@good.pnml", "--askctl", "NOT(" * DEEP + "TT" + ")" * DEEP],
     "--askctl", "line 1, column \\d+: nested too deep: .* expression_depth"),
    ("check-askctl-self-reference", ["check", "@good.pnml", "--askctl",
                                     "val x = NOT(x); eval_node x InitNode"], "--askctl",
     "nested too deep"),
    ("check-contest-deep", ["check", "@deep/model.pnml", "--examination", "CTLFireability"],
     "CTLFireability.xml",
     r", line \d+: property 'p1': <negation>: the formula is nested too deep"),
    ("import-cpn-deep-guard", ["import", "@deep_guard.cpn"], "@deep_guard.cpn",
     "guard of transition 'increment': CPN ML expression nested too deep"),
    ("check-pnml-deep-python-guard", ["check", "@deep_guard.pnml", "--ctl", "AG true"],
     "@deep_guard.pnml", "guard of transition increment: .*nested too deep"),
    # issue 27: record fields a Python record cannot hold, or given twice (a label that is
    # a Python keyword or holds a prime is CPN ML, read: test_cpn_ml_record_labels_are_read)
    ("import-cpn-record-underscore", ["import", "@record__x.cpn"], "@record__x.cpn",
     "colour set Job: record field '_x' starts with '_'"),
    ("import-cpn-record-digit", ["import", "@record_1x.cpn"], "@record_1x.cpn",
     "colour set Job: record field '1x' is not a name"),
    ("import-cpn-record-twice", ["import", "@record_kind.cpn"], "@record_kind.cpn",
     "colour set Job: record field 'kind' is given twice"),
    # issue 27: NUL characters in names, lists where text belongs
    ("scenario-nul-name", ["scenario", "@nul_name.yaml"], "@nul_name.yaml",
     LINE + "name: 't\\\\x00x' is not a single file name .*control characters"),
    ("run-nul-name", ["run", "@nul_name.yaml"], "@nul_name.yaml",
     LINE + "name: .* control characters"),
    ("scenario-nul-flow", ["scenario", "@nul_flow.yaml"], "@nul_flow.yaml",
     LINE + r"flows\[0\]\.id: .*U\+0000"),
    ("scenario-nul-node", ["scenario", "@nul_node.yaml"], "@nul_node.yaml",
     LINE + r"links\[1\]\.a: .*U\+0000"),
    ("sweep-nul-name", ["sweep", "@sweep_nul_name.yaml", "--dry-run"], "@sweep_nul_name.yaml",
     LINE + "sweep.name: name is text without control characters"),
    ("scenario-ab-list", ["scenario", "@ab_top.yaml"], "@ab_top.yaml", LINE + "ab: "),
    ("run-ab-link-list", ["run", "@ab_link.yaml"], "@ab_link.yaml", LINE + r"links\[1\]\.ab: "),
    ("sweep-ab-list", ["sweep", "@ab_sweep.yaml", "--dry-run"], "@ab_sweep.yaml",
     LINE + "sweep.ab: unknown key"),
    ("sweep-name-list", ["sweep", "@sweep_name_list.yaml", "--dry-run"],
     "@sweep_name_list.yaml", LINE + r"sweep.name: name is text .*got \[1\]"),
    # issue 27: a figure format checked before the campaign (no store is made)
    ("sweep-figure-suffix", ["sweep", "@sweep.yaml", "--figure", "f.txt"], "f.txt",
     "'.txt' is not a figure format"),
]


def _limit_resources() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("inputs")
    _files(directory)
    return directory


def _tcpn(argv: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``tcpn argv`` in ``cwd`` within the resource limits; the process and its stderr
    on one line, checked to hold no traceback and no internal error."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO)),
           "COLUMNS": "60", "TERM": "dumb"}
    try:
        done = subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True,
                              text=True, timeout=WALL_S, preexec_fn=_limit_resources,
                              env=env, cwd=cwd, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {WALL_S} s")
    message = " ".join(done.stderr.split())  # Rich may wrap a long line
    assert "Traceback" not in done.stderr and "internal error" not in message, done.stderr
    return done, message


@pytest.mark.parametrize("arguments,names,where", [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_bad_input_exits_3_naming_the_file_and_the_place(inputs, tmp_path, arguments, names,
                                                        where):
    argv = [str(inputs / a[1:]) if a.startswith("@") else a for a in arguments]
    done, message = _tcpn(argv, tmp_path)
    assert done.returncode == 3, (done.returncode, done.stdout[-2000:], done.stderr)
    # ``table`` keeps each file's error in its row and on a line of stdout below the table
    assert message.startswith("tcpn: invalid input: ") or arguments[0] == "table", message
    said = message + " " + " ".join(done.stdout.split())
    assert names.removeprefix("@") in said, said
    assert re.search(where, said), said
    assert not [p for p in tmp_path.iterdir()], "bad input left an output behind"


@pytest.mark.parametrize("label", ["class", "size'"])
def test_cpn_ml_record_labels_are_read(inputs, tmp_path, label):
    """A record label that is a Python keyword or holds a prime is a label of CPN ML:
    the file imports whole and runs: its one transition fires, then the net is dead."""
    done, message = _tcpn(["simulate", str(inputs / f"record_{label}.cpn"), "--max-firings",
                           "5"], tmp_path)
    assert done.returncode == 0, (message, done.stdout[-2000:])
    assert "left out" not in done.stdout + message
    assert "tokens:done" in done.stdout and "dead" in done.stdout, done.stdout


@contextlib.contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A real file system of ``size`` mounted at ``where`` (needs root: skips otherwise)."""
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to fill ({done.stderr.strip()}): needs root")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


@pytest.fixture
def full_disk(tmp_path) -> Iterator[Path]:
    """A 64 kB file system filled to the last byte by the file ``filler``."""
    with _tmpfs(tmp_path / "disk", "64k") as disk:
        with open(disk / "filler", "wb", buffering=0) as filler, \
                pytest.raises(OSError) as full:
            while True:
                filler.write(b"\0" * 4096)
        assert full.value.errno == errno.ENOSPC
        yield disk


#: Commands writing each kind of output (``DISK`` stands for the file system under test).
WRITERS = [
    ("export", ["export", "@good.pnml", "-o", "DISK/net.cpn", "--layout", "grid"], "DISK/net.cpn"),
    ("import", ["import", "@good.pnml", "-o", "DISK/net.pnml"], "DISK/net.pnml"),
    ("check-json", ["check", "@good.pnml", "--ctl", "AG true", "--json", "DISK/v.json"],
     "DISK/v.json"),
    ("run", ["run", "@good.yaml", "-o", "DISK/out"], "DISK/out"),
    ("table-csv", ["table", "@good.yaml", "--csv", "DISK/t.csv", "--workers", "1"],
     "DISK/t.csv"),
    ("sweep-store", ["sweep", "@sweep.yaml", "--store", "DISK/store", "--workers", "1"],
     "DISK/store"),
]


@pytest.mark.parametrize("arguments,target", [w[1:] for w in WRITERS], ids=[w[0] for w in WRITERS])
def test_a_full_disk_exits_3_naming_the_output_and_leaves_nothing(inputs, full_disk, tmp_path,
                                                                  arguments, target):
    argv = [str(inputs / a[1:]) if a.startswith("@") else a.replace("DISK", str(full_disk))
            for a in arguments]
    done, message = _tcpn(argv, tmp_path)
    assert done.returncode == 3, (done.returncode, done.stdout[-2000:], done.stderr)
    assert target.replace("DISK", str(full_disk)) in message, message
    assert "no space left on device" in message, message
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"], "a partial output is left"


@pytest.fixture
def read_only_disk(inputs, tmp_path) -> Iterator[Path]:
    """A file system remounted read-only, holding a campaign store made before."""
    with _tmpfs(tmp_path / "disk", "4m") as disk:
        done, _ = _tcpn(["sweep", str(inputs / "sweep.yaml"), "--store", str(disk / "store"),
                         "--dry-run"], tmp_path)
        assert done.returncode == 0 and (disk / "store" / "store.json").is_file(), done.stderr
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        yield disk


@pytest.mark.parametrize("arguments,target", [
    (["sweep", "@sweep.yaml", "--store", "DISK/store"], "DISK/store"),
    (["sweep", "@sweep.yaml", "--store", "DISK/new"], "DISK/new"),
    (["run", "@good.yaml", "-o", "DISK/out"], "DISK/out"),
    (["export", "@good.pnml", "-o", "DISK/net.cpn"], "DISK/net.cpn"),
], ids=["sweep-existing-store", "sweep-new-store", "run", "export"])
def test_a_read_only_target_exits_3_before_any_run(inputs, read_only_disk, tmp_path, arguments,
                                                   target):
    argv = [str(inputs / a[1:]) if a.startswith("@") else a.replace("DISK", str(read_only_disk))
            for a in arguments]
    done, message = _tcpn(argv, tmp_path)
    assert done.returncode == 3, (done.returncode, done.stdout[-2000:], done.stderr)
    assert target.replace("DISK", str(read_only_disk)) in message, message
    assert "read-only file system" in message, message
    assert "done" not in message, "runs started before the store was found read-only"


def test_a_raised_expression_depth_admits_a_deeper_formula(inputs, tmp_path):
    """The nesting limit is a limit, not a wall: 150 levels pass with --limit."""
    formula = "EF " * 150 + "deadlock"
    done, message = _tcpn(["check", str(inputs / "good.pnml"), "--ctl", formula], tmp_path)
    assert done.returncode == 3 and "expression_depth" in message, message
    done, message = _tcpn(["--limit", "expression_depth=200", "check",
                           str(inputs / "good.pnml"), "--ctl", formula], tmp_path)
    assert done.returncode in (0, 1) and "formula 1:" in done.stdout, (message, done.stdout)


def test_a_long_formula_is_echoed_by_its_ends_and_length(inputs, tmp_path):
    """A formula of 80 kB whose first place is unknown: the error named it by echoing
    the whole formula; now by its first and last characters, its length and the column."""
    formula = "AG (" + " and ".join(f"tokens(nosuch{i}) >= 0" for i in range(3000)) + ")"
    done, message = _tcpn(["check", str(inputs / "good.pnml"), "--ctl", formula], tmp_path)
    assert done.returncode == 3, message
    assert re.search(r"--ctl 'AG \(tokens\(nosuch0\).* … .*nosuch2999\) >= 0\)' "
                     rf"\({len(formula):,} characters\): formula, column 12: no place named "
                     "'nosuch0'", message), message
    assert len(message) < 500, message


def test_an_id_holding_a_newline_is_reported_quoted_on_one_line(tmp_path):
    """A PNML id with a line break, renamed on import: the note printed the id raw, and
    its second line (here 'tcpn: ok') read as a line of tcpn's own."""
    model = tmp_path / "model.pnml"
    model.write_text(
        '<?xml version="1.0"?><pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">'
        '<net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="pg">'
        '<place id="p&#10;tcpn: ok"><initialMarking><text>1</text></initialMarking></place>'
        '<transition id="t"/><arc id="a" source="p&#10;tcpn: ok" target="t"/>'
        '</page></net></pnml>')
    done, message = _tcpn(["import", str(model)], tmp_path)
    assert done.returncode == 0, message
    assert "('p\\ntcpn: ok' line 1)" in done.stdout, done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith("tcpn: ok")]
