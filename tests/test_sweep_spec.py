"""Sweep files: axes, ranges, zipped axes, samples, and the errors that name file, line, axis."""

from __future__ import annotations

import textwrap

import pytest

from tcpn.experiments.sweep.spec import MAX_CELLS, SweepError, load_sweep, parse_sweep

BASE = """\
links:
- {a: S, b: R, rate_bps: 1.0e7, delay_s: 0.001}
- a: R
  b: D
  rate_bps: 2.0e6
  delay_s: 0.01
  queue: {kind: drop_tail, limit: 20}
flows:
- {id: f0, src: S, dst: D, variant: reno}
horizon_s: 0.5
"""


def sweep_text(section: str) -> str:
    return BASE + "sweep:\n" + textwrap.indent(textwrap.dedent(section), "  ")


def problems(text: str) -> str:
    with pytest.raises(SweepError) as caught:
        parse_sweep(text, "x.yaml").cells()
    return str(caught.value)


def test_grid_is_the_product_first_axis_slowest():
    sweep = parse_sweep(sweep_text("""
        axes:
          links[1].queue.limit: [5, 20, 50]
          flows[0].variant: [reno, newreno]
        lenses: [net, fluid]
        replications: 3
    """), "x.yaml")
    cells = sweep.cells()
    assert sweep.size == len(cells) == 6
    assert [c.params["links[1].queue.limit"] for c in cells] == [5, 5, 20, 20, 50, 50]
    assert [c.params["flows[0].variant"] for c in cells] == ["reno", "newreno"] * 3
    # a link-level queue sets both directions; the other fields of the base's queue stay
    queue = cells[2].scenario.links[1]
    assert (queue.ab.queue.limit, queue.ba.queue.limit, queue.ab.queue.kind) == (
        20, 20, "drop_tail")
    assert [lens.name for lens in sweep.lenses] == ["net", "fluid"]
    assert sweep.replications == 3 and sweep.is_grid


def test_one_direction_of_a_link_level_queue():
    cells = parse_sweep(sweep_text("""
        axes:
          links[1].ab.queue.limit: [7]
    """), "x.yaml").cells()
    link = cells[0].scenario.links[1]
    assert (link.ab.queue.limit, link.ba.queue.limit) == (7, 20)


def test_log_and_linear_ranges_give_clean_numbers():
    sweep = parse_sweep(sweep_text("""
        axes:
          links[1].ab.errors.rate: {low: 1.0e-4, high: 1.0e-1, points: 4, scale: log}
          links[1].queue.limit: {low: 10, high: 40, points: 4, integer: true}
    """), "x.yaml")
    rates = sweep.axes[0].points
    assert [p[0] for p in rates] == [0.0001, 0.001, 0.01, 0.1]
    assert [p[0] for p in sweep.axes[1].points] == [10, 20, 30, 40]
    assert sweep.cells()[1].scenario.links[1].ab.errors.rate == 0.0001


def test_zipped_axes_vary_together():
    sweep = parse_sweep(sweep_text("""
        axes:
          links[1].queue.limit: [5, 50]
        zip:
          - flows[0].variant: [vegas, westwood_plus]
            flows[0].params: [{alpha: 1, beta: 3}, {filter: none}]
    """), "x.yaml")
    cells = sweep.cells()
    assert len(cells) == 4 and not sweep.is_grid
    assert [(c.params["flows[0].variant"], c.scenario.flows[0].params.variant)
            for c in cells[:2]] == [("vegas", "vegas"), ("westwood_plus", "westwood_plus")]
    assert cells[0].scenario.flows[0].params.alpha == 1


@pytest.mark.parametrize("method", ["sobol", "random", "latin"])
def test_samples_are_reproducible_and_inside_their_ranges(method):
    section = f"""
        sample:
          method: {method}
          points: 8
          seed: 5
          ranges:
            links[1].delay_s: {{low: 0.001, high: 0.1, scale: log}}
            links[1].queue.limit: {{low: 5, high: 60, integer: true}}
    """
    first = parse_sweep(sweep_text(section), "x.yaml").cells()
    again = parse_sweep(sweep_text(section), "x.yaml").cells()
    assert [c.params for c in first] == [c.params for c in again]
    delays = [c.params["links[1].delay_s"] for c in first]
    limits = [c.params["links[1].queue.limit"] for c in first]
    assert len(set(delays)) == 8 and all(0.001 <= d <= 0.1 for d in delays)
    assert all(isinstance(n, int) and 5 <= n <= 60 for n in limits)
    other = parse_sweep(sweep_text(section.replace("seed: 5", "seed: 6")), "x.yaml").cells()
    assert [c.params for c in other] != [c.params for c in first]


def test_an_invalid_cell_carries_its_error_and_the_others_stay():
    cells = parse_sweep(sweep_text("""
        axes:
          links[1].queue: [{kind: threshold_ecn, limit: 20, k: 5},
                           {kind: threshold_ecn, limit: 4, k: 5}]
    """), "x.yaml").cells()
    assert cells[0].error is None and cells[0].scenario is not None
    assert cells[1].scenario is None
    assert cells[1].error.startswith("x.yaml:14: cell 1 (links[1].queue=")
    assert "links[1].ab.queue.k: k (5) must be below the limit (4)" in cells[1].error


@pytest.mark.parametrize(("section", "expected"), [
    ("axes:\n  links[1].ab.queue.limit_packets: [3, 10]\n",
     "x.yaml:13: sweep.axes.links[1].ab.queue.limit_packets: axis "
     "links[1].ab.queue.limit_packets: links[1].ab.queue has no field 'limit_packets'"),
    ("axes:\n  links[5].delay_s: [0.1]\n",
     "x.yaml:13: sweep.axes.links[5].delay_s: axis links[5].delay_s: links has 2 entries "
     "(indices 0..1): no [5]"),
    ("axes:\n  flows[0].variant.x: [1]\n",
     "flows[0].variant is a value"),
    ("axes:\n  'flows[0]..variant': [reno]\n", "is not a field path"),
    ("axes:\n  horizon_s: []\n", "x.yaml:13: sweep.axes.horizon_s: axis horizon_s: an empty "
                                 "list of values"),
    ("axes:\n  horizon_s: {low: 2, high: 1, points: 3}\n", "low (2) must be below high (1)"),
    ("axes:\n  horizon_s: {low: 0, high: 1, points: 3, scale: log}\n",
     "a log range needs low > 0"),
    ("zip:\n  - {horizon_s: [1, 2], seed: [1]}\n", "zipped axes need equal lengths"),
    ("axes:\n  horizon_s: [1]\nzip:\n  - {horizon_s: [1, 2], seed: [1, 2]}\n",
     "axis horizon_s is swept twice"),
    ("sample: {method: sobol, points: 6, ranges: {horizon_s: {low: 1, high: 2}}}\n",
     "use 8 or 4, not 6"),
    ("sample: {method: halton, points: 4, ranges: {horizon_s: {low: 1, high: 2}}}\n",
     "method is random, sobol or latin"),
    ("axes:\n  horizon_s: [1]\ngrid: {}\n", "x.yaml:14: sweep.grid: unknown key"),
    ("lenses: [net, net]\n", "lens net is listed twice"),
    ("lenses: [net, telepathy]\n", "x.yaml:12: sweep.lenses[1]: unknown lens 'telepathy'; "
                                   "lenses: net, fluid, ns3"),
    ("axes:\n  name: [a, b]\n", "axis name: a scenario's name changes no run"),
    ("replications: 0\n", "replications is an integer >= 1"),
    ("axes:\n  horizon_s: [1]\n  horizon_s: [2]\n",
     "x.yaml:14: sweep.axes.horizon_s: given twice, on line 13"),
])
def test_bad_sweeps_name_the_file_line_and_axis(section, expected):
    assert expected in problems(sweep_text(section))


def test_yaml_alias_bombs_are_refused_at_once():
    bomb = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9))
    text = sweep_text("axes:\n  horizon_s: [1]\n") + "x:\n" + textwrap.indent(bomb, "  ")
    assert "over the limit yaml_nodes" in problems(text)


def test_a_base_scenario_error_names_its_line():
    text = sweep_text("axes:\n  horizon_s: [1]\n").replace("delay_s: 0.01", "delay_s: -1")
    assert "x.yaml:6: links[1].delay_s: Input should be greater than or equal to 0" in \
        problems(text)


def test_a_grid_too_large_is_refused_before_expanding():
    values = list(range(1000))
    text = sweep_text(f"axes:\n  horizon_s: {values}\n  seed: {values}\n")
    assert f"more than {MAX_CELLS} cells" in problems(text)
    assert "20000000000 runs" in problems(sweep_text("replications: 20000000000\n"))


def test_a_sweep_file_naming_its_base(tmp_path):
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "sweep.yaml").write_text("sweep:\n  base: base.yaml\n  axes:\n"
                                         "    tcp.min_rto_s: [0.2, 1.0]\n")
    sweep = load_sweep(tmp_path / "sweep.yaml")
    assert [c.scenario.tcp.min_rto_s for c in sweep.cells()] == [0.2, 1.0]
    assert sweep.name == "sweep"
    (tmp_path / "bad.yaml").write_text("sweep:\n  base: missing.yaml\n")
    with pytest.raises(Exception, match=r"missing\.yaml"):
        load_sweep(tmp_path / "bad.yaml")


@pytest.mark.parametrize("base", ["secret.txt", "../secret", "/etc/shadow"])
def test_a_base_that_is_no_scenario_file_is_neither_read_nor_quoted(base, tmp_path):
    """A sweep file from anyone named /etc/shadow as its base: tcpn read it and quoted its
    lines (the password hashes) as unknown scenario fields."""
    (tmp_path / "secret.txt").write_text("root:$6$hash:19000::::::\n")
    (tmp_path / "sweep.yaml").write_text(f"sweep:\n  base: {base}\n  axes:\n    seed: [1]\n")
    with pytest.raises(SweepError) as info:
        load_sweep(tmp_path / "sweep.yaml")
    assert f"sweep.yaml:2: sweep.base: '{base}' is not a scenario file" in str(info.value)
    assert "hash" not in str(info.value)


def test_shipped_sweep_files_parse():
    from pathlib import Path

    files = sorted((Path(__file__).resolve().parent.parent / "scenarios" / "sweeps").glob(
        "*.yaml"))
    assert files
    for path in files:
        sweep = load_sweep(path)
        assert all(cell.error is None for cell in sweep.cells()), path


#: sweep file -> the per-point study files it replaces
REPLACED = {
    "s4_wireless_alone.yaml": [f"s4_wl_{v}_per1e-{k}.yaml" for v in (
        "reno", "sack", "vegas", "adaptive_vegas", "westwood_plus") for k in (1, 2, 3, 4)],
    "s4_wireless_with_reno.yaml": [f"s4_wl_{v}_per1e-{k}_reno.yaml" for v in (
        "reno", "sack", "vegas", "adaptive_vegas", "westwood_plus") for k in (1, 2, 3, 4)],
    "s3_ber.yaml": [f"s3_{v}_ber{b}.yaml" for v in ("newreno", "tcp_l", "westwood_plus")
                    for b in ("0", "1e-5", "1e-4", "5e-4")],
    "s2_threshold.yaml": [f"s2_{q}_loss{p}.yaml" for q in ("drop_tail", "k50", "eq1")
                          for p in (0, 20)],
}


@pytest.mark.parametrize("sweep_file", sorted(REPLACED))
def test_each_study_file_a_sweep_replaces_is_one_of_its_cells(sweep_file):
    """A sweep has one cell per file it replaces; the files still shipped (tests and docs
    name some) are cells of it. The S4 files were removed once the sweeps replaced them
    (all 40 equal to the cells when removed)."""
    from pathlib import Path

    from tcpn.models.scenario import load_scenario

    root = Path(__file__).resolve().parent.parent / "scenarios"
    sweep = load_sweep(root / "sweeps" / sweep_file)
    cells = {c.scenario.content_hash(): c for c in sweep.cells()}
    assert len(cells) == sweep.size == len(REPLACED[sweep_file])
    present = [name for name in REPLACED[sweep_file] if (root / "studies" / name).is_file()]
    files = {load_scenario(root / "studies" / name).content_hash(): name for name in present}
    assert set(files) <= set(cells)
    assert all(c.scenario.seed == 1 for c in cells.values())
