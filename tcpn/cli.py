"""The ``tcpn`` command line: a thin layer over the library's public functions.

Exit codes: 0 success; 1 a run failed; 2 a usage error (bad options); 3 invalid input
(a net, scenario or file the message names); 70 an internal error (a bug: rerun with
``--debug`` and report the traceback).
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tcpn import __version__
from tcpn.errors import InputError, TcpnError

EXIT_FAILURE, EXIT_USAGE, EXIT_INPUT, EXIT_INTERNAL = 1, 2, 3, 70

app = typer.Typer(
    name="tcpn",
    help=(
        "Timed coloured Petri nets for TCP congestion control, checked against fluid "
        "models and ns-3.\n\n"
        "Start with `tcpn demo` to build, simulate and summarise a small timed net."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True, soft_wrap=True, emoji=False)  # one error, one line
_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        console.print(f"tcpn {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True,
                           help="Print the tcpn version and exit.")
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full traceback when a command fails.")
    ] = False,
) -> None:
    """Timed coloured Petri nets for TCP congestion control."""
    _state["debug"] = debug


@app.command()
def demo(
    seed: Annotated[int, typer.Option(help="Seed of the random stream.")] = 1,
    customers: Annotated[int, typer.Option(min=1, help="Customers that arrive.")] = 20000,
    horizon: Annotated[float, typer.Option(min=0.5, help="Model seconds of the dumbbell "
                                           "scenario.")] = 10.0,
) -> None:
    """A timed net beside its theory, then one scenario through two lenses.

    First an M/M/1 queue built as a timed coloured Petri net (exponential gaps of mean 1.0,
    service of mean 0.8): measured utilisation and mean queue beside the M/M/1 values.
    Then the reference dumbbell (two NewReno flows, 10 Mbit/s 20 ms bottleneck) through the
    net lens and the fluid lens: per-flow goodput, loss and RTT side by side.
    """
    from tcpn.reports.demo import demo_scenario, lens_table, mm1_table

    mm1 = mm1_table(seed=seed, customers=customers)
    console.print(mm1.table)
    console.print(mm1.result.summary())
    with console.status("running the dumbbell through the net and fluid lenses"):
        table = lens_table(demo_scenario(horizon))
    console.print(table)


@app.command("run")
def run_scenario(
    scenario: Annotated[str, typer.Argument(help="Scenario YAML file.")],
    lens: Annotated[str, typer.Option(help="Lens: net, fluid or ns3.")] = "net",
    replications: Annotated[int, typer.Option(min=1, help="Independent runs (N > 1: means "
                                              "with 95 % confidence intervals).")] = 1,
    seed: Annotated[int | None, typer.Option(help="Seed (default: the scenario's).")] = None,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Result directory (default: results/<name>-<lens>-seed<S>).")
    ] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes for "
                                                "replications (default: CPU count).")] = None,
) -> None:
    """Run a scenario with one lens: per-flow table, traces and result file in a directory.

    The directory appears only when the run is complete (it is written under a temporary
    name first); with --replications it holds rep-000... and replications.json.
    """
    from rich.progress import Progress

    from tcpn.models.lenses import evaluate
    from tcpn.models.scenario import load_scenario
    from tcpn.solvers.replications import flow_table, replicate

    spec = load_scenario(scenario)
    base_seed = spec.seed if seed is None else seed
    out = output or f"results/{spec.name}-{lens}-seed{base_seed}" + (
        f"-x{replications}" if replications > 1 else "")
    with Progress(console=err_console, transient=True) as bar:
        if replications == 1:
            task = bar.add_task(f"{lens}: {spec.name}", total=spec.horizon_s)
            result: Any = evaluate(spec, lens, seed=base_seed, output=out,
                                   progress=lambda t: bar.update(task, completed=t))
        else:
            task = bar.add_task(f"{lens}: {spec.name} x{replications}", total=replications)
            result = replicate(spec, lens, seed=base_seed, replications=replications,
                               output=out, workers=workers, keep_traces=False,
                               progress=lambda n: bar.update(task, completed=n))
    table = Table(title=f"{spec.name} ({lens} lens, seed {base_seed}"
                  + (f", {replications} runs, mean ± 95 % CI)" if replications > 1 else ")"))
    columns = [("goodput_bps", "goodput Mbit/s", 1e-6), ("throughput_bps", "throughput Mbit/s",
               1e-6), ("loss_ratio", "loss %", 100.0), ("retransmission_ratio", "retx %", 100.0),
               ("rtt_mean_s", "mean RTT ms", 1e3), ("jain_index", "Jain", 1.0)]
    if any(f.bytes is not None for f in spec.flows):  # sized transfers: the studies' outputs
        columns[-1:-1] = [("completion_s", "all delivered s", 1.0), ("segment_delay_mean_s",
                          "segment delay ms", 1e3), ("retransmissions", "retx", 1.0)]
    frame = flow_table(result, [m for m, _, _ in columns if m != "jain_index"])
    table.add_column("flow")
    for _, title, _ in columns:
        table.add_column(title, justify="right")
    for flow, row in frame.iterrows():
        cells = []
        for metric, _, scale in columns:
            mean, half = row.get(metric, float("nan")), row.get(f"{metric}_hw", float("nan"))
            cells.append("" if mean != mean else f"{mean * scale:.3f}"
                         + ("" if half != half else f" ± {half * scale:.3f}"))
        table.add_row(str(flow), *cells)
    Console(width=max(console.width, 14 + 15 * len(columns))).print(table)
    if replications == 1:
        wireless = result.provenance.get("lens", {}).get("wireless")
        if wireless:
            from tcpn.reports.energy import energy_table
            Console(width=max(console.width, 140)).print(energy_table(
                wireless, f"802.11 stations over {spec.horizon_s:g} s (energy model: the "
                "scenario's wireless blocks)"))
        for flow, metrics in result.summary["flows"].items():
            failed = metrics.get("connect_failed_s")
            if failed is not None and failed == failed:
                console.print(f"flow {flow}: the connection never opened: no SYN was "
                              f"answered, gave up at {failed:g} s (tcp.syn_retries, "
                              "tcp.syn_timeout_s)")
    console.print(f"result: {out}")


@app.command("optimize")
def optimize_parameter(
    scenario: Annotated[str, typer.Argument(help="Scenario YAML file.")],
    parameter: Annotated[str, typer.Option(help="ecn_k, red_min_th, red_max_th, red_max_p, "
                                           "red_q_weight, tb_depth_bytes, tb_limit, "
                                           "vegas_alpha, vegas_beta, vegas_weight.")],
    low: Annotated[float, typer.Option(help="Lower bound of the search.")],
    high: Annotated[float, typer.Option(help="Upper bound of the search.")],
    lens: Annotated[str, typer.Option(help="Lens: fluid, net or ns3.")] = "fluid",
    objective: Annotated[str, typer.Option(help="goodput, delay or power; sized transfers: "
                                           "completion, segment_delay or transfer_power.")
                         ] = "goodput",
    delay_weight: Annotated[float, typer.Option(help="w in log goodput - w log RTT.")] = 1.0,
    loss_cap: Annotated[float | None, typer.Option(help="Largest loss ratio allowed.")] = None,
    points: Annotated[int, typer.Option(min=3, help="Grid points.")] = 9,
    replications: Annotated[int, typer.Option(min=1, help="Runs per point (net, ns3).")] = 5,
    queue: Annotated[str | None, typer.Option(help="Queue 'A->B' to edit (default: all of "
                                              "the parameter's kind).")] = None,
) -> None:
    """Search the parameter value that maximises an objective; print the curve and the
    closed-form predictions beside the optimum."""
    from tcpn.models.scenario import load_scenario
    from tcpn.solvers.optimize import optimize

    result = optimize(load_scenario(scenario), parameter, (low, high), lens=lens,
                      objective=objective,  # type: ignore[arg-type]
                      delay_weight=delay_weight, loss_cap=loss_cap, points=points,
                      replications=replications, queue=queue)
    table = Table(title=f"{parameter}: {objective} ({lens} lens)")
    for column in ("value", "objective", "± 95 %", "runs"):
        table.add_column(column, justify="right")
    for p in result.points:
        table.add_row(f"{p.value:.6g}", f"{p.objective:.6g}", f"{p.half_width:.3g}",
                      str(p.runs), style="bold" if p is result.best else None)
    console.print(table)
    low_tie, high_tie = result.indistinguishable
    console.print(f"optimum: {parameter} = {result.best.value:.6g} (indistinguishable in "
                  f"[{low_tie:.6g}, {high_tie:.6g}])")
    for name, value in result.predictions.items():
        console.print(f"closed form {name}: {value:.6g}")


@app.command("export")
def export_net(
    net: Annotated[str, typer.Argument(help="package.module:function (or file.py:function) "
                                       "returning a PetriNet, a .cpn/.pnml file, or a "
                                       "scenario .yaml (its whole net).")],
    file_format: Annotated[str, typer.Option("--format", "-f", help="cpn or pnml.")] = "cpn",
    output: Annotated[str | None, typer.Option("--output", "-o",
                                               help="File to write (default: stdout).")] = None,
    real_time: Annotated[bool | None, typer.Option(
        "--real-time/--integer-time", help="CPN Tools' time type (default: from the net).")
    ] = None,
    layout: Annotated[str, typer.Option(help="dot (Graphviz) or grid.")] = "dot",
    net_type: Annotated[str, typer.Option(help="PNML: auto, pt or symmetric.")] = "auto",
    strict: Annotated[bool, typer.Option(
        "--strict", help="PNML: refuse (exit 3) what the standard P/T and symmetric-net "
        "grammars can't say, instead of writing it in tcpn's toolspecific form.")] = False,
) -> None:
    """Export a net to CPN Tools (.cpn) or PNML.

    PNML holds the structure; time, integers, arithmetic and the like go in tcpn's
    toolspecific elements (docs/exchange.md: what other readers lose). CPN Tools: what
    the format can't say is an error.

    Examples: tcpn export tcpn.petrinets.exchange.loading:example_net -o mm1.cpn;
    tcpn export scenarios/dumbbell_newreno.yaml -o dumbbell.cpn
    """
    from tcpn.petrinets.exchange.loading import built_net, load_net, net_text, save_net

    if net.lower().endswith((".yaml", ".yml")):
        from tcpn.models.topology import scenario_net

        loaded = built_net(scenario_net(net), net)
    else:
        loaded = load_net(net)
    if output is None:
        sys.stdout.write(net_text(loaded, file_format, real_time=real_time, layout=layout,
                                  net_type=net_type, strict=strict))
        return
    path = save_net(loaded, output, file_format, real_time=real_time, layout=layout,
                    net_type=net_type, strict=strict)
    err_console.print(f"wrote {path}", markup=False, highlight=False)


@app.command("check")
def check_net(
    net: Annotated[str, typer.Argument(help="The net: a .cpn or .pnml file, a scenario .yaml, "
                                       "or package.module:function returning a PetriNet.")],
    ctl: Annotated[list[str] | None, typer.Option(
        "--ctl", help="A CTL formula, e.g. \"AG !deadlock\" or \"A[fireable(send) U "
        "tokens(acked) >= 3]\" (repeatable). Grammar: docs/checking.md.")] = None,
    ltl: Annotated[list[str] | None, typer.Option(
        "--ltl", help="An LTL formula over all paths, e.g. \"G F fireable(deliver)\" "
        "(repeatable; A is implied).")] = None,
    askctl: Annotated[list[str] | None, typer.Option(
        "--askctl", help="A CPN Tools ASK-CTL query, e.g. 'INV(NOT(NF(\"d\", fn n => "
        "(OutArcs n) = [])))' (repeatable; standard operators).")] = None,
    report: Annotated[bool, typer.Option(
        "--report", help="Print the standard state-space report (statistics, bounds, home, "
        "liveness, fairness).")] = False,
    max_states: Annotated[int | None, typer.Option(
        "--max-states", min=1, help="State budget; reaching it answers 'unknown' "
        "(default 5,000,000; 2,000,000 with --examination).")] = None,
    time_limit: Annotated[float | None, typer.Option(
        "--time-limit", min=0.0, help="Seconds of exploration per formula; reaching it "
        "answers 'unknown'.")] = None,
    weak: Annotated[str | None, typer.Option(
        "--weak-fair", help="Comma-separated transitions assumed weakly fair ('all': every "
        "transition).")] = None,
    strong: Annotated[str | None, typer.Option(
        "--strong-fair", help="Comma-separated transitions assumed strongly fair ('all').")
    ] = None,
    reduction: Annotated[str | None, typer.Option(
        help="'stubborn': stubborn-set reduction (reachability and safety formulas only).")
    ] = None,
    json_file: Annotated[str | None, typer.Option(
        "--json", help="Write the verdicts and their evidence (paths) to this new JSON file.")
    ] = None,
    examination: Annotated[str | None, typer.Option(
        "--examination", help="A Model Checking Contest examination (CTLFireability, "
        "LTLCardinality, UpperBounds, ReachabilityDeadlock, StateSpace...): NET is "
        "DIR/model.pnml, the formulas are read from DIR/<examination>.xml, and one line "
        "per formula is printed as the contest's tools print it.")] = None,
) -> None:
    """Model-check a net: CTL and LTL formulas with evidence, or the standard report.

    Each formula gets true, false or unknown (a budget was reached, and which); a witness
    or counterexample path is printed when one exists. Exit 0 when every formula holds,
    1 when one is false or unknown, 3 on bad input (a malformed formula, an unknown place).
    Example: tcpn check tcpn.petrinets.exchange.loading:example_net --report
    """
    from tcpn.petrinets.check_command import CheckRequest, run_check
    from tcpn.petrinets.exchange.loading import load_net

    if examination is not None:
        from tcpn.petrinets.contest import DEFAULT_MAX_STATES, check_examination

        check_examination(net, examination, max_states or DEFAULT_MAX_STATES, time_limit,
                          on_line=lambda line: console.print(line, markup=False,
                                                             highlight=False, soft_wrap=True))
        return
    if net.lower().endswith((".yaml", ".yml")):
        from tcpn.models.topology import scenario_net

        loaded = scenario_net(net)
    else:
        loaded = load_net(net).net
    request = CheckRequest(net=loaded, source=net, ctl=tuple(ctl or ()), ltl=tuple(ltl or ()),
                           askctl=tuple(askctl or ()), report=report,
                           max_states=max_states or 5_000_000,
                           time_limit_s=time_limit,
                           weak_fair=weak, strong_fair=strong, reduction=reduction,
                           json_file=json_file)
    if not run_check(request, console, err_console):
        raise typer.Exit(EXIT_FAILURE)


@app.command("import")
def import_net(
    file: Annotated[str, typer.Argument(help="A CPN Tools (.cpn) or PNML (.pnml) file.")],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write the imported net again (.cpn or .pnml).")] = None,
    strict: Annotated[bool, typer.Option(help="Fail (exit 3) if any element is left out.")
                      ] = False,
) -> None:
    """Import a net and report, element by element, what tcpn kept, left out and changed."""
    from tcpn.petrinets.exchange.loading import load_net, save_net

    loaded = load_net(file, strict=strict)
    console.print(loaded.report.text(), markup=False, highlight=False, soft_wrap=True)
    if output is not None:
        console.print(f"wrote {save_net(loaded, output)}", markup=False, highlight=False,
                      soft_wrap=True)


@app.command("table")
def scenario_table(
    scenarios: Annotated[list[str], typer.Argument(help="Scenario YAML files, e.g. "
                                                   "scenarios/studies/s1_*.yaml.")],
    lens: Annotated[str, typer.Option(help="Lens: net, fluid or ns3.")] = "net",
    seed: Annotated[int | None, typer.Option(help="Seed for every file (default: each "
                                             "file's own).")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes (default: "
                                                "CPU count).")] = None,
    markdown: Annotated[str | None, typer.Option(help="Also write the table as Markdown "
                                                 "to this file.")] = None,
    csv: Annotated[str | None, typer.Option(help="Also write the table as CSV to this "
                                            "file.")] = None,
) -> None:
    """Run many scenarios once each with one lens and print one row per scenario.

    Aggregate and per-flow goodput, Jain's index, retransmissions, timeouts, mean RTT, the
    busiest queue and the time to deliver sized transfers: the figures a study compares
    across its experiments. A file that fails gets its error in its row; exit code 1 then.
    """
    from pathlib import Path

    from rich.progress import Progress

    from tcpn.reports.scenario_table import (
        format_cell,
        run_scenarios,
        scenario_frame,
        to_markdown,
    )

    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task(f"{lens}: {len(scenarios)} scenarios", total=len(scenarios))
        rows = run_scenarios(scenarios, lens, seed=seed, workers=workers,
                             progress=lambda _row: bar.advance(task))
    frame = scenario_frame(rows)
    table = Table(title=f"{len(rows)} scenarios, {lens} lens, one run each")
    for column in frame.columns:
        if column != "error" or frame["error"].any():
            table.add_column(column, justify="left" if column in (
                "scenario", "per flow Mbit/s", "busiest queue mean/max pkts", "error")
                else "right", overflow="fold")
    for record in frame.to_dict(orient="records"):
        table.add_row(*(format_cell(v) for k, v in record.items()
                        if k != "error" or frame["error"].any()))
    Console(width=max(console.width, 180)).print(table)
    if markdown:
        Path(markdown).write_text(to_markdown(frame) + "\n")
        console.print(f"markdown: {markdown}")
    if csv:
        frame.to_csv(csv, index=False)
        console.print(f"csv: {csv}")
    if frame["error"].any():
        raise typer.Exit(EXIT_FAILURE)


@app.command("validate")
def validate_lenses(
    scenario: Annotated[str, typer.Argument(help="Scenario YAML file.")],
    lenses: Annotated[str, typer.Option(help="Lenses to compare, e.g. net,ns3 or "
                                        "net,ns3,fluid; lenses that refuse the scenario "
                                        "are reported and skipped.")] = "net,ns3",
    reference: Annotated[str | None, typer.Option(
        help="Lens the others are judged against (default: ns3 if listed, else the "
        "first).")] = None,
    replications: Annotated[int, typer.Option(min=1, help="Runs per lens.")] = 3,
    seed: Annotated[int | None, typer.Option(help="Seed (default: the scenario's).")] = None,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Directory for comparison.csv/.json, timeseries.png and the "
        "runs (default: results/<name>-validate).")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes.")] = None,
) -> None:
    """Compare lenses on a scenario: means with 95 % CIs, relative error, target and
    verdict per metric (targets in tcpn.validation.harness.TOLERANCES), Welch's t-test p
    of the runs (a miss with a large p is not a difference the runs can tell from noise),
    plus figures of goodput, cwnd and queue over time side by side. Exit code 1 if a
    target is missed."""
    from tcpn.models.scenario import load_scenario
    from tcpn.validation.harness import compare, write_comparison

    spec = load_scenario(scenario)
    out = output or f"results/{spec.name}-validate"
    found = compare(spec, lenses.split(","), replications=replications, seed=seed,
                    workers=workers, reference=reference, output=out)
    wide = Console(width=max(console.width, 40 + 34 * len(found.lenses)))
    for lens, why in found.refused.items():
        wide.print(f"{lens}: refused: {why}", markup=False, highlight=False)
    table = Table(title=f"{spec.name}: against {found.reference} ({replications} runs each, "
                  "mean ± 95 % CI)")
    for column in ("scope", "name", "metric"):
        table.add_column(column)
    for lens in found.lenses:
        table.add_column(lens, justify="right")
    for lens in found.judged:
        table.add_column(f"{lens} error", justify="right")
    table.add_column("target", justify="right")
    for lens in found.judged:
        table.add_column(lens if len(found.judged) > 1 else "verdict", justify="right")
    for lens in found.judged:
        table.add_column(f"{lens} p" if len(found.judged) > 1 else "Welch p", justify="right")
    for row in found.table.to_dict(orient="records"):
        cells = [f"{row[f'{lens}_mean']:.4g}" + ("" if row[f"{lens}_ci"] != row[f"{lens}_ci"]
                                               else f" ± {row[f'{lens}_ci']:.2g}")
                 for lens in found.lenses]
        errors = [f"{row[f'{lens}_error'] * 100:+.1f} %" for lens in found.judged]
        verdicts = [row[f"{lens}_verdict"] for lens in found.judged]
        p_values = ["" if row[f"{lens}_p"] != row[f"{lens}_p"] else f"{row[f'{lens}_p']:.2f}"
                    for lens in found.judged]
        table.add_row(row["scope"], row["name"], row["metric"], *cells, *errors,
                      row["tolerance"], *verdicts, *p_values)
    wide.print(table)
    write_comparison(found, out)
    console.print(f"comparison: {out} (comparison.csv, comparison.json, timeseries.png)")
    if len(found.failures()):
        raise typer.Exit(EXIT_FAILURE)


def main() -> None:
    """Entry point: usage errors exit 2 (Typer's own messages); tcpn's errors print one line."""
    try:
        app()
    except Exception as exc:  # every error ends as one clear line and an exit code
        if _state["debug"]:
            raise
        if isinstance(exc, InputError):
            err_console.print(f"tcpn: invalid input: {exc}", markup=False, highlight=False)
            sys.exit(EXIT_INPUT)
        if isinstance(exc, TcpnError):
            err_console.print(f"tcpn: {exc}", markup=False, highlight=False)
            sys.exit(EXIT_FAILURE)
        err_console.print(
            f"tcpn: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the "
            "traceback, and please report it)", markup=False, highlight=False,
        )
        sys.exit(EXIT_INTERNAL)
