"""Scenario input that must be refused up front, naming the file, line and field (issue 13).

Duplicate keys, non-finite numbers, booleans where numbers belong, numbers outside a
physical range, experiments that cannot deliver one packet, resource bombs (aliases, deep
nesting, huge flow counts and horizons, unbounded files) and bad encodings.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tcpn.errors import InputError
from tcpn.limits import limits, using_limits
from tcpn.models.scenario import (
    ScenarioError,
    load_scenario,
    parse_scenario,
    validate_scenario,
)

BASE = """\
name: t
links:
  - {a: S, b: R, rate_bps: 1.0e+7, delay_s: 0.001}
  - {a: R, b: D, rate_bps: 1.0e+6, delay_s: 0.02}
flows:
  - {src: S, dst: D, variant: newreno}
horizon_s: 10
"""


def _error(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "bad.yaml")
    return str(info.value)


# -- duplicate keys ------------------------------------------------------------------------


def test_a_key_given_twice_is_refused_naming_both_lines():
    message = _error(BASE + "horizon_s: 999\n")
    assert message.startswith("bad.yaml:8: horizon_s: ")
    assert "line 7" in message and "line 8" in message


def test_a_duplicate_key_inside_a_flow_is_refused():
    text = BASE.replace("variant: newreno}", "variant: newreno, variant: tahoe}")
    message = _error(text)
    assert message.startswith("bad.yaml:6: flows[0].variant: ")
    assert "twice" in message


# -- numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "field"), [
    ("rate_bps: 1.0e+6", "rate_bps: .inf", "links[1].rate_bps"),
    ("delay_s: 0.02", "delay_s: .inf", "links[1].delay_s"),
    ("delay_s: 0.02", "delay_s: .nan", "links[1].delay_s"),
    ("horizon_s: 10", "horizon_s: 1.0e+308", "horizon_s"),
    ("delay_s: 0.02", "delay_s: 1.0e+308", "links[1].delay_s"),
    ("rate_bps: 1.0e+6", "rate_bps: 1.0e-9", "links[1].rate_bps"),
    ("horizon_s: 10", "horizon_s: 10\nmeasure: {bin_s: .inf}", "measure.bin_s"),
    ("rate_bps: 1.0e+6", "rate_bps: 1.0e+6, queue: {kind: red, max_th: .inf}",
     "links[1].queue.max_th"),
    ("horizon_s: 10", "horizon_s: 10\ntcp: {segment_size_bytes: 1000000}",
     "tcp.segment_size_bytes"),
    ("variant: newreno", "variant: newreno, count: 1.0e+300", "flows[0].count"),
])
def test_numbers_outside_a_physical_range_name_the_field(old, new, field):
    message = _error(BASE.replace(old, new))
    assert re.match(rf"bad\.yaml:\d+: {re.escape(field)}: ", message), message


def test_an_out_of_range_number_is_shown_as_written_and_the_field_named_once():
    message = _error(BASE.replace("horizon_s: 10", "horizon_s: 1.0e+300"))
    assert re.search(r"horizon_s: 1e\+300 s is outside the physical range", message), message
    assert message.count("horizon_s") == 1, message


@pytest.mark.parametrize(("old", "new", "field"), [
    ("horizon_s: 10", "horizon_s: true", "horizon_s"),
    ("rate_bps: 1.0e+6", "rate_bps: false", "links[1].rate_bps"),
    ("variant: newreno", "variant: newreno, count: true", "flows[0].count"),
    ("horizon_s: 10", "horizon_s: 10\nseed: true", "seed"),
])
def test_booleans_are_not_numbers(old, new, field):
    message = _error(BASE.replace(old, new))
    assert re.match(rf"bad\.yaml:\d+: {re.escape(field)}: .*boolean", message), message


def test_booleans_stay_booleans():
    text = BASE.replace("horizon_s: 10", "horizon_s: 10\ntcp: {sack: false, ecn: true}")
    assert parse_scenario(text).tcp.ecn is True


def test_a_flow_that_cannot_deliver_one_packet_before_the_horizon_is_refused():
    # 1 bit/s: one 588-byte packet (+2 bytes PPP) takes 4720 s to serialise; horizon 10 s
    message = _error(BASE.replace("rate_bps: 1.0e+6", "rate_bps: 1"))
    assert message.startswith("bad.yaml:6: flows[0]: ")
    assert "4.72e+03 s to carry 588 bytes over 2 hops at 1 bit/s" in message


def test_a_delay_longer_than_the_horizon_is_refused_with_the_reason():
    message = _error(BASE.replace("delay_s: 0.02", "delay_s: 50"))
    assert "flows[0]" in message and "horizon" in message


# -- resource bombs ------------------------------------------------------------------------

ALIAS_BOMB = """\
a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def test_a_yaml_alias_bomb_is_refused_before_it_is_built():
    message = _error(ALIAS_BOMB)
    assert "yaml_nodes" in message and "bad.yaml" in message


def test_a_recursive_alias_is_refused():
    assert "bad.yaml:1" in _error("a: &a [1, *a]\n")


def test_deep_nesting_is_refused_with_the_line():
    message = _error("a: " + "[" * 1000 + "]" * 1000 + "\n")
    assert message.startswith("bad.yaml:1:") and "nesting_depth" in message


def test_deep_nesting_of_mappings_is_refused():
    text = "".join(" " * k + f"k{k}:\n" for k in range(200)) + " " * 200 + "v: 1\n"
    assert "nesting_depth" in _error(text)


def test_ten_thousand_flows_are_refused_with_the_figures():
    message = _error(BASE.replace("variant: newreno", "variant: newreno, count: 10000"))
    assert message.startswith("bad.yaml:6: flows[0].count: ")
    assert "10,000" in message and "limit flows = 1000" in message


def test_a_raised_limit_admits_them():
    text = BASE.replace("variant: newreno", "variant: newreno, count: 10000")
    with using_limits(flows=20_000):
        assert parse_scenario(text).flows[0].count == 10_000


def test_an_absurd_run_is_refused_with_its_cost_estimate():
    text = BASE.replace("horizon_s: 10", "horizon_s: 1.0e+6").replace(
        "rate_bps: 1.0e+7", "rate_bps: 1.0e+10").replace("rate_bps: 1.0e+6",
                                                         "rate_bps: 1.0e+10")
    message = _error(text)
    assert message.startswith("bad.yaml:7: horizon_s: ")
    assert "packet_hops" in message and "estimated" in message


def test_the_shipped_scenarios_are_within_the_limits():
    for path in sorted(Path("scenarios").rglob("*.yaml")):
        load_scenario(path)


def test_a_symlink_to_dev_zero_is_refused_without_reading(tmp_path):
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"zero\.yaml: not a regular file"):
        load_scenario(link)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"pipe\.yaml: not a regular file \(a FIFO"):
        load_scenario(fifo)


def test_a_file_over_the_size_limit_is_refused(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text(BASE + "description: '" + "x" * limits().scenario_bytes + "'\n")
    with pytest.raises(InputError, match=r"big\.yaml: .* bytes, over the .*limit scenario_bytes"):
        load_scenario(big)


# -- encodings and bytes -------------------------------------------------------------------


def test_latin1_bytes_name_the_file_and_line(tmp_path):
    bad = tmp_path / "latin.yaml"
    bad.write_bytes(BASE.replace("name: t", "name: caf\xe9").encode("latin-1"))
    with pytest.raises(InputError, match=r"latin.yaml:1: .*UTF-8"):
        load_scenario(bad)


def test_utf16_is_refused_naming_the_file(tmp_path):
    bad = tmp_path / "wide.yaml"
    bad.write_bytes(BASE.encode("utf-16"))
    with pytest.raises(InputError, match=r"wide.yaml:1: .*UTF-8"):
        load_scenario(bad)


def test_nul_bytes_name_the_line(tmp_path):
    bad = tmp_path / "nul.yaml"
    bad.write_bytes(BASE.replace("horizon_s: 10", "horizon_s: 1\x000").encode())
    with pytest.raises(InputError, match=r"nul.yaml:7: "):
        load_scenario(bad)


# -- the command line ----------------------------------------------------------------------


def _tcpn(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from tcpn.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, "COLUMNS": "60"})


def test_tcpn_scenario_refuses_then_a_raised_limit_admits(tmp_path):
    path = tmp_path / "many.yaml"
    path.write_text(BASE.replace("variant: newreno", "variant: newreno, count: 10000"))
    refused = _tcpn("scenario", str(path), cwd=tmp_path)
    assert refused.returncode == 3, refused.stderr
    assert refused.stderr.startswith(f"tcpn: invalid input: {path}:6: flows[0].count: ")
    admitted = _tcpn("--limit", "flows=20000", "scenario", str(path), cwd=tmp_path)
    assert admitted.returncode == 0, admitted.stderr
    assert "estimated cost" in admitted.stdout and "10000 of 20,000" in admitted.stdout


def test_an_unknown_limit_is_a_usage_error(tmp_path):
    done = _tcpn("--limit", "bogus=3", "scenario", "x.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "unknown limit 'bogus'" in done.stderr


def test_a_raised_limit_reaches_worker_processes(tmp_path):
    path = tmp_path / "many.yaml"
    path.write_text(BASE.replace("variant: newreno", "variant: newreno, count: 2000"))
    child = [sys.executable, "-c", "import sys; from tcpn.models.scenario import load_scenario; "
             "print(load_scenario(sys.argv[1]).flows[0].count)", str(path)]
    with using_limits(flows=5000):
        inside = subprocess.run(child, capture_output=True, text=True, timeout=120)
    after = subprocess.run(child, capture_output=True, text=True, timeout=120)
    assert inside.stdout.strip() == "2000", inside.stderr
    assert after.returncode == 1 and "limit flows = 1000" in after.stderr


@pytest.mark.parametrize(("change", "field"), [
    ({"rate_bps": 1e-9}, "links[1].rate_bps"),       # fluid lens: IndexError
    ({"delay_s": float("inf")}, "links[1].delay_s"),  # fluid: ZeroDivisionError; net: TPkt
])
def test_the_lens_examples_are_refused_by_the_schema_from_python_too(change, field):
    data = yaml.safe_load(BASE)
    data["links"][1].update(change)
    with pytest.raises(ScenarioError, match=rf"^{re.escape(field)}: "):
        validate_scenario(data)


def test_the_net_lens_segment_example_is_refused_from_python_too():
    data = {**yaml.safe_load(BASE), "tcp": {"segment_size_bytes": 1_000_000}}
    with pytest.raises(ScenarioError, match=r"^tcp\.segment_size_bytes: .*65535"):
        validate_scenario(data)


def test_one_flow_that_cannot_deliver_beside_one_that_can_is_accepted():
    # a study cut short to its first seconds: the late flow has nothing to say, the other has
    text = BASE.replace("  - {src: S, dst: D, variant: newreno}\n",
                        "  - {src: S, dst: D, variant: newreno}\n"
                        "  - {src: S, dst: D, variant: reno, start_s: 9.99}\n")
    assert len(parse_scenario(text).flows) == 2


# -- flow ids (issue 27) -------------------------------------------------------------------

TWO_FLOWS = """\
name: t
links:
  - {a: S, b: R, rate_bps: 1.0e+7, delay_s: 0.001}
  - {a: R, b: D, rate_bps: 1.0e+6, delay_s: 0.02}
flows:
  - {FIRST, src: S, dst: D, variant: newreno}
  - {SECOND, src: S, dst: D, variant: newreno}
horizon_s: 10
"""


@pytest.mark.parametrize(("first", "second", "field", "clash"), [
    # a group of 2 expands to f0.0 and f0.1: the second group's id takes one of them
    ("id: f0, count: 2", "id: f0.1", "flows[1].id", "f0.1"),
    ("id: f0.1", "id: f0, count: 2", "flows[1].id", "f0.1"),
    # an unnamed group is f<i>: f1 with count 3 gives f1.2
    ("id: f1.2", "count: 3", "flows[1].id", "f1.2"),
    ("id: f1", "count: 1", "flows[1].id", "f1"),
    ("id: x, count: 2", "id: x, count: 2", "flows[1].id", "x"),
    ("id: x, count: 2", "id: x", "flows[1].id", "x"),
])
def test_expanded_flow_ids_are_unique_up_front(first, second, field, clash):
    text = TWO_FLOWS.replace("FIRST", first).replace("SECOND", second)
    message = _error(text)
    assert re.match(rf"bad\.yaml:\d+: {re.escape(field)}: ", message), message
    assert repr(clash) in message


@pytest.mark.parametrize(("first", "field"), [
    ("id: all", "flows[0].id"),
    ("id: all, count: 1", "flows[0].id"),
])
def test_the_aggregate_name_is_not_a_flow_id(first, field):
    text = TWO_FLOWS.replace("FIRST", first).replace("SECOND", "id: b")
    message = _error(text)
    assert re.match(rf"bad\.yaml:\d+: {re.escape(field)}: ", message), message
    assert "'all'" in message and "aggregate" in message


@pytest.mark.parametrize("flow_id", ['""', '" "'])
def test_an_empty_flow_id_is_refused(flow_id):
    # "" is what the trace tables write for "no flow" (a queue event of unknown origin)
    text = TWO_FLOWS.replace("FIRST", f"id: {flow_id}").replace("SECOND", "id: b")
    message = _error(text)
    assert re.match(r"bad\.yaml:\d+: flows\[0\]\.id: ", message), message


def test_ids_are_checked_without_listing_a_huge_group():
    # 10^12 connections: refused by the cost check, never expanded into ids first
    text = TWO_FLOWS.replace("FIRST", "id: g, count: 1000000000000").replace("SECOND", "id: b")
    message = _error(text)
    assert "flows[0].count" in message


def test_names_like_a_groups_ids_beyond_its_count_are_accepted():
    text = TWO_FLOWS.replace("FIRST", "id: g, count: 2").replace("SECOND", "id: g.2")
    assert [f.id for f in parse_scenario(text).concrete_flows(1)] == ["g.0", "g.1", "g.2"]
    text = TWO_FLOWS.replace("FIRST", "id: g, count: 2").replace("SECOND", "id: g.01")
    assert [f.id for f in parse_scenario(text).concrete_flows(1)] == ["g.0", "g.1", "g.01"]


def test_a_group_named_all_expands_to_distinct_ids_and_is_accepted():
    # all.0 and all.1 are not the aggregate row's name
    text = TWO_FLOWS.replace("FIRST", "id: all, count: 2").replace("SECOND", "id: b")
    ids = [f.id for f in parse_scenario(text).concrete_flows(1)]
    assert ids == ["all.0", "all.1", "b"]


def test_tcpn_scenario_refuses_clashing_ids_before_any_run(tmp_path):
    path = tmp_path / "clash.yaml"
    path.write_text(TWO_FLOWS.replace("FIRST", "id: f0, count: 2").replace("SECOND", "id: f0.1"))
    for command in (["scenario", str(path)], ["run", str(path), "-o", str(tmp_path / "out")]):
        done = _tcpn(*command, cwd=tmp_path)
        assert done.returncode == 3, done.stderr
        assert "flows[1].id" in done.stderr and "'f0.1'" in done.stderr
    assert not (tmp_path / "out").exists()


# -- the name, which names the default result directory ------------------------------------


@pytest.mark.parametrize("name", ["../escape", "a/b", "/tmp/abs", "..", ".", r"a\\b",
                                  r"a\0b", r"a\nb", ""])
def test_a_name_that_is_not_one_file_name_is_refused(name):
    message = _error(BASE.replace("name: t", f'name: "{name}"'))
    assert message.startswith("bad.yaml:1: name: ")
    assert "a single file name" in message


def test_a_long_name_is_refused_and_ordinary_names_pass():
    assert "at most 200 bytes" in _error(BASE.replace("name: t", "name: " + "x" * 201))
    for name in ("dumbbell newreno", "s2.k-20", "café", "..x"):
        assert parse_scenario(BASE.replace("name: t", f"name: {name}")).name == name


def test_tcpn_run_with_a_name_that_climbs_out_of_results_writes_nothing(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    path = work / "escape.yaml"
    path.write_text(BASE.replace("name: t", "name: ../../outside"))
    done = _tcpn("run", str(path), cwd=work)
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(f"tcpn: invalid input: {path}:1: name: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert sorted(p.name for p in work.iterdir()) == ["escape.yaml"]
