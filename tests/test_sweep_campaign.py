"""Campaigns: only missing runs run, failures stay in their cells, resume after a kill, one
store shared safely, versions kept apart, results independent of the executor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tcpn.errors import InputError
from tcpn.experiments.sweep import CampaignStore, load_results, load_sweep, run_campaign
from tcpn.experiments.sweep.campaign import plan_campaign
from tcpn.experiments.sweep.executors import local_executor

BASE = """\
links:
- {a: S, b: R, rate_bps: 1.0e7, delay_s: 0.001}
- a: R
  b: D
  rate_bps: 2.0e6
  delay_s: 0.01
  queue: {kind: drop_tail, limit: 20}
flows:
- {id: f0, src: S, dst: D, variant: newreno, start_s: {dist: uniform, low_s: 0, high_s: 0.05}}
- {id: f1, src: S, dst: D, variant: newreno, start_s: {dist: uniform, low_s: 0, high_s: 0.05}}
horizon_s: 0.5
"""


def write_sweep(path: Path, section: str) -> Path:
    path.write_text(BASE + "sweep:\n" + textwrap.indent(textwrap.dedent(section), "  "))
    return path


def tcpn(*args: str, cwd: Path | None = None, **kwargs) -> subprocess.Popen[str]:
    return subprocess.Popen([str(Path(sys.executable).parent / "tcpn"), *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)


def record_stats(store: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in store.glob("tcpn-*/runs/*/*.json")}


def deterministic(records: list[dict | None]) -> list[str]:
    """The records without their timing section, as JSON text."""
    return [json.dumps({k: v for k, v in r.items() if k != "run"}, sort_keys=True)
            for r in records if r is not None]


def test_only_missing_runs_run_and_an_extended_grid_adds_only_its_cells(tmp_path):
    store = CampaignStore(tmp_path / "store")
    sweep = load_sweep(write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 20]
        lenses: [fluid]
    """))
    plan = run_campaign(sweep, store)
    assert (len(plan.tasks), len(plan.missing)) == (2, 2)
    before = record_stats(store.root)
    assert len(before) == 2
    assert plan_campaign(sweep, store).missing == []
    bigger = load_sweep(write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 20, 50]
        lenses: [fluid]
    """))
    plan = run_campaign(bigger, store)
    assert [t.cell for t in plan.missing] == [2]
    after = record_stats(store.root)
    assert len(after) == 3 and all(after[name] == stat for name, stat in before.items())
    table = load_results(bigger, store).metric("goodput_bps")
    assert table["links[1].queue.limit"].tolist() == [5, 20, 50]
    assert (table["error"] == "").all() and table["mean"].gt(0).all()


def test_a_failed_run_and_an_invalid_cell_keep_their_errors_and_the_rest_goes_on(tmp_path):
    store = CampaignStore(tmp_path / "store")
    sweep = load_sweep(write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [20, 0]
        lenses: [fluid, {name: fluid, options: {no_such_option: 1}}]
    """))
    done = []
    run_campaign(sweep, store, progress=lambda *counts: done.append(counts))
    assert done[-1] == (2, 1, 0)  # cell 1 is invalid: nothing to run
    results = load_results(sweep, store)
    table = results.table()
    good = table[(table["cell"] == 0) & (table["lens"] == "fluid")]
    assert (good["error"] == "").all() and len(good) > 10
    bad = table[(table["cell"] == 0) & (table["lens"] != "fluid")]
    assert len(bad) == 1 and "no_such_option" in bad["error"].iloc[0]
    invalid = table[table["cell"] == 1]
    assert len(invalid) == 2 and invalid["error"].str.contains(
        "links[1].ab.queue.limit: Input should be greater than 0", regex=False).all()
    # the failed run is stored (not run again) unless asked
    assert plan_campaign(sweep, store).missing == []
    assert len(plan_campaign(sweep, store, retry_failed=True).missing) == 1


def test_results_do_not_depend_on_the_worker_count(tmp_path):
    section = """
        axes:
          links[1].queue.limit: [5, 20]
        lenses: [net]
        replications: 2
    """
    sweep = load_sweep(write_sweep(tmp_path / "s.yaml", section))
    one = CampaignStore(tmp_path / "one")
    run_campaign(sweep, one)
    two = CampaignStore(tmp_path / "two")
    executor = local_executor(2)
    try:
        run_campaign(sweep, two, executor)
    finally:
        executor.shutdown()
    first, second = load_results(sweep, one), load_results(sweep, two)
    assert first.table().to_csv() == second.table().to_csv()
    assert deterministic([r for _, r in first.records]) == deterministic(
        [r for _, r in second.records])
    values = first.values()
    goodput = values[(values["metric"] == "goodput_bps") & (values["scope"] == "aggregate")]
    # two replications of a random start: two different runs, both stored
    assert goodput.groupby("cell")["value"].nunique().tolist() == [2, 2]


def test_a_campaign_killed_half_way_resumes_without_recomputing(tmp_path):
    path = write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 10, 20, 40, 80, 160]
        lenses: [net]
    """)
    store = tmp_path / "store"
    first = tcpn("sweep", str(path), "--store", str(store), "--workers", "1")
    deadline = time.monotonic() + 240
    while len(record_stats(store)) < 2 and first.poll() is None and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    stored = record_stats(store)
    assert 2 <= len(stored) < 6, "the campaign should be killed half-way"
    second = tcpn("sweep", str(path), "--store", str(store), "--workers", "1")
    _, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    assert f"{len(stored)} stored, {6 - len(stored)} to run" in err
    after = record_stats(store)
    assert len(after) == 6 and all(after[name] == stat for name, stat in stored.items())


def test_two_campaigns_writing_one_store_at_once(tmp_path):
    path = write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 10, 20, 40]
        lenses: [net]
    """)
    store = tmp_path / "store"
    runs = [tcpn("sweep", str(path), "--store", str(store), "--workers", "1")
            for _ in range(2)]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    assert len(record_stats(store)) == 4
    assert not list(store.rglob(".*partial*"))
    results = load_results(load_sweep(path), CampaignStore(store))
    assert results.missing == 0 and (results.table()["error"] == "").all()


def test_another_versions_runs_are_kept_apart(tmp_path):
    store = CampaignStore(tmp_path / "store")
    sweep = load_sweep(write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 20]
        lenses: [fluid]
    """))
    run_campaign(sweep, store)
    old = tmp_path / "store" / "tcpn-0.0.1"
    os.rename(store.home, old)  # as if an older tcpn had written them
    before = sorted(p.read_bytes() for p in old.rglob("*.json"))
    store = CampaignStore(tmp_path / "store")
    assert store.other_versions() == ["0.0.1"]
    assert len(plan_campaign(sweep, store).missing) == 2
    run_campaign(sweep, store)
    assert sorted(p.read_bytes() for p in old.rglob("*.json")) == before
    record = store.get(store.keys()[0])
    with pytest.raises(Exception, match="cannot join"):
        CampaignStore(tmp_path / "store", version="0.0.1").put(record)


def test_a_changed_source_file_is_other_code_for_the_store(tmp_path):
    """The store's code name changes with any computing source file of the package (a rule
    changed in a sender is another model under the same version), not with a template."""
    import shutil

    import tcpn
    from tcpn.source import source_digest, source_id

    package = tmp_path / "tcpn"
    shutil.copytree(Path(tcpn.__file__).parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    digest = source_digest(package)
    assert source_id() == f"{tcpn.__version__}+{digest[:12]}"
    template = next(package.rglob("*.j2"))
    template.write_text(template.read_text() + "<!-- restyled -->")
    assert source_digest(package) == digest
    sender = package / "models" / "components" / "sender.py"
    sender.write_text(sender.read_text() + "\n# one more rule\n")
    assert source_digest(package) != digest
    assert CampaignStore(tmp_path / "store").home.name == f"tcpn-{source_id()}"


def test_a_directory_that_is_not_a_store_is_never_written_into(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(Exception, match="not a tcpn campaign store"):
        CampaignStore(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_traces_are_kept_by_option(tmp_path):
    store = CampaignStore(tmp_path / "store")
    sweep = load_sweep(write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [20]
        lenses: [fluid]
    """))
    run_campaign(sweep, store)
    key = store.keys()[0]
    assert not store.trace_path(key).exists()
    assert len(plan_campaign(sweep, store, keep_traces=True).missing) == 1
    run_campaign(sweep, store, keep_traces=True)
    trace = store.load_trace(key)
    assert trace.horizon_s == 0.5 and len(trace.flow_events) > 0
    assert plan_campaign(sweep, store, keep_traces=True).missing == []


def test_the_command_line(tmp_path):
    path = write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 20]
          flows[0].variant: [newreno, reno]
        lenses: [fluid]
    """)
    store = str(tmp_path / "store")
    run = tcpn("sweep", str(path), "--store", store, "--workers", "1", "--csv",
               str(tmp_path / "r.csv"), "--figure", str(tmp_path / "heat.png"), "--x",
               "links[1].queue.limit", "--y", "flows[0].variant",
               env={**os.environ, "COLUMNS": "60"})
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert "4 runs (0 invalid cells); 0 stored, 4 to run" in err
    assert (tmp_path / "heat.png").stat().st_size > 0 and "goodput_bps" in out
    assert (tmp_path / "r.csv").read_text().startswith("cell,links[1].queue.limit,")
    again = tcpn("sweep", str(path), "--store", store, "--csv", str(tmp_path / "r.csv"))
    _, err = again.communicate(timeout=300)
    assert again.returncode == 3 and "r.csv exists: pass overwrite (--overwrite)" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text(BASE + "sweep:\n  axes:\n    links[1].ab.queue.limit_packets: [3]\n")
    run = tcpn("sweep", str(bad), "--store", store)
    _, err = run.communicate(timeout=300)
    assert run.returncode == 3
    assert "bad.yaml:14: sweep.axes.links[1].ab.queue.limit_packets: axis" in err
    assert "Traceback" not in err


def test_optimize_through_the_store_reruns_nothing(tmp_path):
    from tcpn.experiments.optimize import optimize
    from tcpn.models.scenario import dumbbell

    scenario = dumbbell(pairs=1, horizon_s=1.0, tcp={"ecn": True},
                        queue={"kind": "threshold_ecn", "limit": 50, "k": 10})
    store = tmp_path / "store"
    first = optimize(scenario, "ecn_k", (2, 40), lens="fluid", points=3, refine=False,
                     store=store)
    stored = record_stats(store)
    assert len(stored) == 3
    again = optimize(scenario, "ecn_k", (2, 40), lens="fluid", points=3, refine=False,
                     store=store)
    assert again.points == first.points and record_stats(store) == stored
    plain = optimize(scenario, "ecn_k", (2, 40), lens="fluid", points=3, refine=False)
    assert plain.points == first.points


def queue_verdict(scenario, seed, replication, options):
    """A registered evaluation: a yes/no per cell, as a model-checking verdict will be."""
    limit = scenario.links[1].ab.queue.limit
    return {"aggregate": {"holds": float(limit >= options["at_least"])}}


def test_a_registered_evaluation_gives_a_value_per_cell(tmp_path):
    from tcpn.experiments.sweep import EVALUATIONS, register_evaluation

    register_evaluation("queue_verdict", f"{__name__}:queue_verdict")
    try:
        sweep = load_sweep(write_sweep(tmp_path / "s.yaml", """
            axes:
              links[1].queue.limit: [5, 20]
            lenses: [{name: queue_verdict, options: {at_least: 10}}]
        """))
        store = CampaignStore(tmp_path / "store")
        run_campaign(sweep, store)
        table = load_results(sweep, store).metric("holds")
        assert table["mean"].tolist() == [0.0, 1.0]
        assert table["lens"].tolist() == ['queue_verdict{"at_least": 10}'] * 2
    finally:
        EVALUATIONS.pop("queue_verdict")


def test_figures_of_a_campaign(tmp_path):
    from tcpn.reports.campaign_figures import heatmap, metric_against_axis

    sweep = load_sweep(write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 20, 50]
          flows[0].variant: [newreno, reno]
        lenses: [fluid, net]
        replications: 2
    """))
    store = CampaignStore(tmp_path / "store")
    run_campaign(sweep, store)
    results = load_results(sweep, store)
    figure = metric_against_axis(results, "goodput_bps", "links[1].queue.limit")
    axes = figure.axes[0]
    # one line per lens and variant, three points each; a CI band for the net lens
    assert len(axes.lines) == 4 and all(len(line.get_xdata()) == 3 for line in axes.lines)
    assert len(axes.collections) >= 2
    drawn = heatmap(results, "goodput_bps", "links[1].queue.limit", "flows[0].variant",
                    lens="net")
    assert drawn.axes[0].images[0].get_array().shape == (2, 3)
    with pytest.raises(Exception, match="no axis"):
        metric_against_axis(results, "goodput_bps", "links[0].delay_s")
    figure.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0
    dataset = results.to_xarray()  # the axes of the grid are its dimensions
    goodput = dataset["mean"].sel(lens="net", scope="aggregate", name="all",
                                  metric="goodput_bps")
    assert goodput.dims == ("links[1].queue.limit", "flows[0].variant")
    assert goodput.shape == (3, 2) and bool((goodput > 0).all())


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_ends_the_workers_and_keeps_what_is_stored(tmp_path, sig):
    import psutil

    path = write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 10, 20, 40, 80, 160]
        lenses: [net]
    """)
    store = tmp_path / "store"
    # Ctrl-C as at a terminal: the command starts with SIGINT at its default. A child
    # inherits an ignored SIGINT (a pytest-xdist worker may have one, as a background job
    # of a shell has), and Python then keeps ignoring it: the sweep ran to its end, exit 0
    run = tcpn("sweep", str(path), "--store", str(store), "--workers", "2",
               start_new_session=True,
               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240
    while not record_stats(store) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = psutil.Process(run.pid).children()
    os.killpg(run.pid, sig)  # the whole group, as a terminal's Ctrl-C does
    _, err = run.communicate(timeout=300)
    assert run.returncode == (130 if sig == signal.SIGINT else 143), err
    assert "runs are in" in err and "the same command resumes" in err
    assert "Traceback" not in err
    for worker in workers:
        assert not psutil.pid_exists(worker.pid) or worker.status() == psutil.STATUS_ZOMBIE
    stored = record_stats(store)
    assert 1 <= len(stored) < 6


def test_an_unknown_metric_is_refused_before_any_run(tmp_path):
    path = write_sweep(tmp_path / "s.yaml", """
        axes:
          links[1].queue.limit: [5, 20]
        lenses: [fluid]
    """)
    store = tmp_path / "store"
    run = tcpn("sweep", str(path), "--store", str(store), "--workers", "1", "--metric",
               "bogus")
    _, err = run.communicate(timeout=300)
    assert run.returncode == 3, err
    assert "'bogus'" in err and "Traceback" not in err
    from tcpn.models.metrics import AGGREGATE_METRICS
    assert all(name in err for name in AGGREGATE_METRICS), err
    assert record_stats(store) == {}  # nothing ran
    sweep = load_sweep(path)
    with pytest.raises(InputError, match="'bogus'"):
        load_results(sweep, CampaignStore(store)).metric("bogus")


def test_a_registered_evaluations_metric_is_not_refused_up_front(tmp_path):
    from tcpn.experiments.sweep import EVALUATIONS, register_evaluation
    from tcpn.experiments.sweep.results import check_metric

    register_evaluation("queue_verdict", f"{__name__}:queue_verdict")
    try:
        sweep = load_sweep(write_sweep(tmp_path / "s.yaml", """
            axes:
              links[1].queue.limit: [5, 20]
            lenses: [{name: queue_verdict, options: {at_least: 10}}]
        """))
        check_metric(sweep, "holds")  # its metrics are known once it has run
        store = CampaignStore(tmp_path / "store")
        run_campaign(sweep, store)
        with pytest.raises(InputError, match=r"'bogus'.*holds"):
            load_results(sweep, store).metric("bogus")
    finally:
        EVALUATIONS.pop("queue_verdict")
