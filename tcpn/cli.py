"""The ``tcpn`` command line: a thin layer over the library's public functions.

Exit codes: 0 success; 1 a run failed; 2 a usage error (bad options); 3 invalid input
(a net, scenario or file the message names) or an output that cannot be written (a full
disk, a read-only file system: the message names the path); 70 an internal error (a bug:
rerun with ``--debug`` and report the traceback). :func:`_exit_for` maps errors to codes.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import inspect
import logging
import os
import shutil
import signal
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tcpn import __version__
from tcpn.errors import InputError, TcpnError
from tcpn.interruption import request_stop
from tcpn.scratch import scratch_directory

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
EXIT_SIGNAL = {signal.SIGINT: 130, signal.SIGTERM: 143}
OVERWRITE_HELP = ("Replace the output if it is tcpn's own (a directory holding only the files "
                  "tcpn wrote there, unchanged, as its .tcpn-output lists them; or a file); "
                  "tcpn never replaces anything else.")


def _choice(*values: str) -> Callable[[str | None], str | None]:
    """An option callback accepting only ``values`` (a usage error, exit 2, otherwise)."""
    def check(value: str | None) -> str | None:
        if value is not None and value not in values:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(values)}")
        return value
    return check


def _lens_name(value: str | None) -> str | None:
    """A registered lens name (usage error otherwise)."""
    from tcpn.lenses import lens_names

    return _choice(*lens_names())(value)


def _lens_names(value: str) -> str:
    """A comma-separated list of registered lens names (usage error otherwise)."""
    for name in value.split(","):
        if name.strip():
            _lens_name(name.strip())
    return value


def _search_parameter(value: str) -> str:
    """A parameter :func:`tcpn.experiments.optimize.optimize` can search (usage error otherwise)."""
    from tcpn.experiments.optimize import PARAMETERS

    return _choice(*PARAMETERS)(value) or value


def _search_objective(value: str) -> str:
    """An objective of :func:`tcpn.experiments.optimize.optimize` (usage error otherwise)."""
    from typing import get_args

    from tcpn.experiments.optimize import Objective

    return _choice(*get_args(Objective))(value) or value


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that partial outputs are removed on the way out."""


def _on_sigterm(_signum: int, _frame: Any) -> None:
    _state["terminated"] = True
    # raised here, and raised again before any result is moved into place in case Python
    # swallows this one (a signal that lands in a weak-reference callback)
    request_stop(_Terminated())
    raise _Terminated()


@contextlib.contextmanager
def _interruptible(output: str | None, kept: Callable[[], str] = lambda: "") -> Iterator[None]:
    """Ctrl-C (or SIGTERM) in the block: say what was kept, then exit 130 (143).

    ``kept()`` describes the work finished before the interruption.
    """
    existed = output is not None and Path(output).exists()
    try:
        yield
    except KeyboardInterrupt as exc:
        code = EXIT_SIGNAL[signal.SIGTERM if isinstance(exc, _Terminated) else signal.SIGINT]
        where = "" if output is None else (
            f"; {output} keeps its previous content" if existed else
            f"; nothing was written to {output}")
        err_console.print(f"tcpn: interrupted{kept()}: no partial output is left{where}",
                          markup=False, highlight=False)
        _state["interrupt_said"] = True
        raise typer.Exit(code) from None


def _interruptible_command(*outputs: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A command run inside :func:`_interruptible`, naming the first of its options
    ``outputs`` that is given (the files or directory it writes)."""
    def wrap(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(**options: Any) -> Any:
            with _interruptible(next((options[o] for o in outputs if options.get(o)), None)):
                return command(**options)
        return run
    return wrap


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
    limit: Annotated[list[str] | None, typer.Option(
        "--limit", metavar="NAME=VALUE",
        help="Raise (or lower) a bound on what tcpn reads and builds from its input, e.g. "
             "--limit flows=20000 --limit packet_hops=1e10. Names and defaults: "
             "docs/scenarios.md, 'Limits'.")] = None,
    engine: Annotated[str | None, typer.Option(
        "--engine", metavar="python|native|auto",
        help="The net simulator's engine: python (the reference), native (the generated "
             "code built with Cython and the C compiler, cached; an error where it cannot "
             "be built) or auto (the default: native, the modules a net needs built on "
             "first use, in parallel, with a progress line; `tcpn build` builds those of "
             "many runs beforehand; python where no compiler is found, said once). Same "
             "as $TCPN_ENGINE; the same seed fires the same sequence in each.")] = None,
) -> None:
    """Timed coloured Petri nets for TCP congestion control."""
    from tcpn.limits import parse_limit, set_limits
    from tcpn.petrinets.engine.native import ENGINE_VARIABLE, resolve_engine

    _state["debug"] = debug
    _show_engine_notices()
    if engine is not None:
        try:
            os.environ[ENGINE_VARIABLE] = resolve_engine(engine)  # worker processes inherit it
        except InputError as exc:
            raise typer.BadParameter(str(exc), param_hint="--engine") from None
    try:
        set_limits(**dict(parse_limit(text) for text in limit or []))
    except InputError as exc:
        raise typer.BadParameter(str(exc), param_hint="--limit") from None


class _Notices(logging.Handler):
    """Log lines as ``tcpn: MESSAGE`` on the current stderr (looked up at each line).

    A record with a ``progress`` count (a native build's: modules done) is one line
    rewritten in place on a terminal, the next notice ending it; elsewhere (a log file)
    only its first (``progress == 0``) is written.
    """

    open_line = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            stream = sys.stderr
            text = f"tcpn: {record.getMessage()}"
            progress = getattr(record, "progress", None)
            terminal = stream.isatty()
            if progress is not None and terminal:
                print(f"\r{text}\x1b[K", end="", file=stream, flush=True)
                self.open_line = True
            elif progress is None or progress == 0:
                start = "\r" if self.open_line else ""
                print(f"{start}{text}\x1b[K" if start else text, file=stream, flush=True)
                self.open_line = False
        except Exception:  # a closed stream must not end the command
            self.handleError(record)


def _show_engine_notices() -> None:
    """The native engine's notices (a first build's progress, why ``auto`` runs Python)
    on stderr, once; each said once per command, however many worker processes run its
    nets (they inherit a private directory where the first to say a notice marks it)."""
    from tcpn.petrinets.engine.native import NOTICES_VARIABLE

    notices = logging.getLogger("tcpn.native.notice")
    if not any(isinstance(h, _Notices) for h in notices.handlers):
        notices.addHandler(_Notices())
        notices.setLevel(logging.INFO)
    said = str(scratch_directory("notices"))
    atexit.register(shutil.rmtree, said, True)
    os.environ[NOTICES_VARIABLE] = said


@app.command()
def demo(
    seed: Annotated[int, typer.Option(min=0, help="Seed of the random stream.")] = 1,
    customers: Annotated[int, typer.Option(min=1, max=10_000_000,
                                           help="Customers that arrive.")] = 20000,
    horizon: Annotated[float, typer.Option(min=0.5, max=600.0, help="Model seconds of the "
                                           "dumbbell scenario.")] = 10.0,
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
    lens: Annotated[str, typer.Option(help="Lens: net, fluid or ns3.",
                                      callback=_lens_name)] = "net",
    replications: Annotated[int, typer.Option(min=1, help="Independent runs (N > 1: means "
                                              "with 95 % confidence intervals).")] = 1,
    seed: Annotated[int | None, typer.Option(
        min=0, help="Seed (default: the scenario's).")] = None,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Result directory (default: results/<name>-<lens>-seed<S>); "
        "a new or empty directory, or a tcpn result directory with --overwrite.")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes for "
                                                "replications (default: CPU count).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
) -> None:
    """Run a scenario with one lens: per-flow table, traces and result file in a directory.

    The directory appears only when the run is complete (it is written under a temporary
    name first, created before the run starts, so an unwritable target fails at once);
    with --replications it holds rep-000... and replications.json. On a terminal, stderr
    shows model time, firings/s and the time left (runs done with --replications).
    Ctrl-C stops the runs and their worker processes and leaves nothing partial.
    """
    from tcpn.lenses import evaluate
    from tcpn.lenses.replications import flow_table, replicate
    from tcpn.models.scenario import load_scenario
    from tcpn.reports.progress import count_progress, model_time_progress

    spec = load_scenario(scenario)
    base_seed = spec.seed if seed is None else seed
    out = output or f"results/{spec.name}-{lens}-seed{base_seed}" + (
        f"-x{replications}" if replications > 1 else "")
    finished = [0]

    def kept() -> str:
        return (f" after {finished[0]} of {replications} runs had finished"
                if replications > 1 else "")

    with _interruptible(out, kept):
        if replications == 1:
            with model_time_progress(err_console, f"{lens}: {spec.name}",
                                     spec.horizon_s) as tick:
                result: Any = evaluate(spec, lens, seed=base_seed, output=out, progress=tick,
                                       overwrite=overwrite)
        else:
            with count_progress(err_console, f"{lens}: {spec.name}", replications) as done:
                def count(n: float) -> None:
                    finished[0] = int(n)
                    done(n)
                result = replicate(spec, lens, seed=base_seed, replications=replications,
                                   output=out, workers=workers, keep_traces=False,
                                   progress=count, overwrite=overwrite)
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
    absent = frame.attrs["absent"]
    for flow, row in frame.iterrows():
        cells = []
        for metric, _, scale in columns:
            mean, half = row.get(metric, float("nan")), row.get(f"{metric}_hw", float("nan"))
            cells.append("n/a" if metric in absent else "" if mean != mean else
                         f"{mean * scale:.3f}" + ("" if half != half else
                                                  f" ± {half * scale:.3f}"))
        table.add_row(str(flow), *cells)
    Console(width=max(console.width, 14 + 15 * len(columns))).print(table)
    for reason in dict.fromkeys(absent.values()):
        titles = [title for metric, title, _ in columns if absent.get(metric) == reason]
        if titles:
            console.print(f"n/a ({', '.join(titles)}): {reason}", markup=False,
                          highlight=False, soft_wrap=True)
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


@app.command("scenario")
def describe_scenario(
    scenario: Annotated[str, typer.Argument(help="Scenario YAML file.")],
) -> None:
    """Check a scenario file without running it: what it describes and what a run costs.

    Every field is validated as `tcpn run` would (exit 3 naming the file, line and field),
    then the links, flows and the estimated packet-hops of a run are printed beside the
    limits in force (raise them with `tcpn --limit NAME=VALUE`).
    """
    from tcpn.limits import limits
    from tcpn.models.scenario import load_scenario

    spec = load_scenario(scenario)
    connections = sum(flow.count for flow in spec.flows)
    table = Table(title=f"{spec.name}: {len(spec.nodes)} nodes, {len(spec.links)} links, "
                  f"{connections} connections, {spec.horizon_s:g} s")
    for column in ("flow", "variant", "route", "start s", "connections"):
        table.add_column(column, overflow="fold")
    for i, flow in enumerate(spec.flows):
        start = flow.start_s if isinstance(flow.start_s, float) else flow.start_s.dist
        table.add_row(flow.id or f"f{i}", flow.variant, "-".join(spec.route(flow.src, flow.dst)),
                      str(start), str(flow.count))
    console.print(table)
    console.print(f"estimated cost: {spec.packet_hops_estimate():,} packet-hops (limit "
                  f"packet_hops = {limits().packet_hops:,}; connections {connections} of "
                  f"{limits().flows:,})", markup=False, highlight=False, soft_wrap=True)


@app.command("pcap")
def describe_capture(
    capture: Annotated[str, typer.Argument(help="A pcap file (PPP, Ethernet or raw IP).")],
    bad_checksums: Annotated[str, typer.Option(
        "--bad-checksums", help="skip (the default: a segment whose TCP checksum is wrong "
        "is counted and left out; one left to the sender's network card, as every segment "
        "a Linux sender captures itself, is recognized and kept) or keep (every segment).",
        callback=_choice("skip", "keep"))] = "skip",
) -> None:
    """Read a pcap capture: its TCP connections, segments and what was skipped and why.

    Records that are not TCP/IPv4 (IPv6, ARP, UDP, fragments) are counted, not read; a
    corrupt TCP/IPv4 header is an error naming the packet number and byte offset (exit 3).
    """
    from tcpn.models.pcap import connections, data_segments, read_pcap

    packets = read_pcap(capture, bad_tcp_checksums=bad_checksums)
    console.print(f"{capture}: {len(packets)} TCP/IPv4 segments", markup=False,
                  highlight=False, soft_wrap=True)
    table = Table(title="connections opened in the capture")
    for column in ("connection", "data segments", "retransmitted", "payload bytes"):
        table.add_column(column, justify="left" if column == "connection" else "right",
                         overflow="fold")
    for conn in connections(packets):
        segments = data_segments(packets, conn)
        table.add_row(f"{conn.src}:{conn.sport} > {conn.dst}:{conn.dport}", str(len(segments)),
                      str(int(segments["retransmission"].sum())), str(int(segments["bytes"].sum())))
    console.print(table)
    for reason, count in packets.attrs["skipped"].items():
        console.print(f"skipped {count} record(s): {reason}", markup=False, highlight=False)
    if packets.attrs.get("checksum_offloaded"):
        console.print(f"kept {packets.attrs['checksum_offloaded']} segment(s) whose TCP "
                      "checksum was left to the sender's network card (checksum offload)",
                      markup=False, highlight=False)


@app.command("testbed")
@_interruptible_command("output")
def linux_testbed_command(
    scenario: Annotated[str, typer.Argument(help="Scenario YAML file the testbed can build "
                                            "(no link delay, drop-tail queues, bulk or "
                                            "sized flows of linux_reno, reno, newreno, sack, "
                                            "cubic, bbr).")],
    output: Annotated[str, typer.Option(
        "--output", "-o", help="Directory for <node>.pcap per end host and testbed.json; a "
        "new or empty directory, or a tcpn output with --overwrite.")],
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
) -> None:
    """Run a scenario on real Linux TCP between network namespaces, and capture it.

    Each node becomes a network namespace, each link a veth pair shaped by a token bucket
    (its rate and drop-tail queue); each flow runs the kernel's TCP with its variant's
    congestion control. Needs root. The captures are what a testbed gives: judge a lens
    against them with tcpn validate SCENARIO --lenses net --trace DIR/<src>.pcap
    --trace-receiver DIR/<dst>.pcap. What the kernel does its own way (its initial RTO,
    delayed ACKs, loss recovery, HyStart) is listed in testbed.json; what it cannot build
    is refused naming the field (exit 3). docs/validation.md, "Real Linux TCP".
    """
    from tcpn.experiments.linux_testbed import capture_linux
    from tcpn.models.scenario import load_scenario

    made = capture_linux(load_scenario(scenario), output, overwrite=overwrite)
    for node, path in made.captures.items():
        console.print(f"{node}: {path}", markup=False, highlight=False, soft_wrap=True)
    for note in made.notes:
        console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


@app.command("optimize")
def optimize_parameter(
    scenario: Annotated[str, typer.Argument(help="Scenario YAML file.")],
    parameter: Annotated[str, typer.Option(help="ecn_k, red_min_th, red_max_th, red_max_p, "
                                           "red_q_weight, tb_depth_bytes, tb_limit, "
                                           "vegas_alpha, vegas_beta, vegas_weight (whole "
                                           "values: ecn_k, tb_*, vegas_alpha/beta).",
                                           callback=_search_parameter)],
    low: Annotated[float, typer.Option(help="Lower bound of the search.")],
    high: Annotated[float, typer.Option(help="Upper bound of the search.")],
    lens: Annotated[str, typer.Option(help="Lens: fluid, net or ns3.",
                                      callback=_lens_name)] = "fluid",
    objective: Annotated[str, typer.Option(help="goodput, delay or power; sized transfers: "
                                           "completion, segment_delay or transfer_power.",
                                           callback=_search_objective)] = "goodput",
    delay_weight: Annotated[float, typer.Option(help="w in log goodput - w log RTT.")] = 1.0,
    loss_cap: Annotated[float | None, typer.Option(help="Largest loss ratio allowed.")] = None,
    points: Annotated[int, typer.Option(min=3, help="Grid points.")] = 9,
    replications: Annotated[int, typer.Option(min=1, help="Runs per point (net, ns3).")] = 5,
    queue: Annotated[str | None, typer.Option(help="Queue 'A->B' to edit (default: all of "
                                              "the parameter's kind).")] = None,
    tolerance: Annotated[float, typer.Option(min=0.0, max=0.99, help="Near-optimal: within "
                                             "this fraction of the best objective.")] = 0.01,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Directory for search.csv, search.json and search.png "
        "(default: results/<name>-optimize-<parameter>).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
    store: Annotated[str | None, typer.Option(help="Campaign store (as tcpn sweep): every "
                                              "run is cached there, a search resumes.")
                     ] = None,
) -> None:
    """Search the parameter value that maximises an objective; print the curve, the range
    of near-optimal values (a flat objective is a range, not a point) and the closed-form
    predictions beside the optimum; write the search (CSV, JSON, figure)."""
    from tcpn.experiments.optimize import optimize
    from tcpn.models.scenario import load_scenario
    from tcpn.outputs import atomic_directory
    from tcpn.reports.search_record import write_search

    spec = load_scenario(scenario)
    out = output or f"results/{spec.name}-optimize-{parameter}"
    with _interruptible(out), atomic_directory(out, overwrite) as tmp:
        with err_console.status(f"searching {parameter} ({lens} lens)"):
            result = optimize(spec, parameter, (low, high), lens=lens,
                              objective=objective,  # type: ignore[arg-type]
                              delay_weight=delay_weight, loss_cap=loss_cap, points=points,
                              replications=replications, queue=queue, tolerance=tolerance,
                              store=store)
        write_search(result, tmp)
    table = Table(title=f"{parameter}: {objective} ({lens} lens)")
    for column in ("value", "objective", "± 95 %", "runs"):
        table.add_column(column, justify="right")
    for p in result.points:
        table.add_row(result.format_value(p.value), f"{p.objective:.6g}",
                      f"{p.half_width:.3g}", str(p.runs),
                      style="bold" if p is result.best else None)
    console.print(table)
    value = result.format_value
    low_near, high_near = result.near_optimal
    low_tie, high_tie = result.indistinguishable
    lines = [f"optimum: {parameter} = {value(result.best.value)}",
             f"near-optimal (within {tolerance:.0%} of the best {objective}): "
             f"{value(low_near)} to {value(high_near)}",
             f"indistinguishable (95 % intervals overlap): {value(low_tie)} to "
             f"{value(high_tie)}"]
    lines += [f"closed form {name}: {v:.6g}" for name, v in result.predictions.items()]
    lines.append(f"search: {out} (search.csv, search.json, search.png)")
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


#: ``--python``: a net built by running Python code, only when asked (docs/security.md)
PythonOption = Annotated[bool, typer.Option(
    "--python", help="NET is Python code to run: package.module:function or "
    "file.py:function returning a PetriNet (never inferred from a colon).")]
#: ``--trust``: a .pnml file's inscriptions run as any Python (docs/security.md)
TrustOption = Annotated[bool, typer.Option(
    "--trust", help="The .pnml file is yours: run its Python inscriptions and function "
    "references as any Python, without the restricted evaluator (docs/security.md).")]


#: what ``tcpn simulate`` adds when a scenario's runs are all alike
_SCENARIO_RUNS = ("; a scenario's net is built once, its flows' start times drawn from the "
                  "scenario's seed: tcpn run SCENARIO --replications N draws them anew in "
                  "each run")


@app.command("simulate")
@_interruptible_command("output", "events")
def simulate_net_command(
    net: Annotated[str, typer.Argument(help="The net: a .cpn or .pnml file, a scenario .yaml "
                                       "(its whole net), or with --python "
                                       "package.module:function returning a PetriNet.")],
    until: Annotated[float | None, typer.Option(
        "--until", help="Horizon in model time (a scenario's: its horizon_s unless given).")
    ] = None,
    max_firings: Annotated[int | None, typer.Option(
        "--max-firings", min=0, help="Stop each run after this many firings.")] = None,
    replications: Annotated[int, typer.Option(
        min=1, help="Independent runs (means with 95 % confidence intervals from 2).")] = 1,
    seed: Annotated[int, typer.Option(
        min=0, help="Seed; replication i draws from (seed, i).")] = 1,
    average: Annotated[list[str] | None, typer.Option(
        "--average", help="A place whose token count is averaged over model time "
        "(repeatable; tcpn inspect NET lists the places).")] = None,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write one row per run to this .csv or .parquet file: stop "
        "reason, clock, firings, fired:T per transition, tokens:P per place, average:P "
        "(a new file, or --overwrite).")] = None,
    events: Annotated[str | None, typer.Option(
        "--events", help="Log every firing of the run (one replication) to this .csv, "
        ".jsonl or .parquet file as it happens (a new file, or --overwrite).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing "
                                            "--output/--events file.")] = False,
    python: PythonOption = False,
    trust: TrustOption = False,
) -> None:
    """Simulate any net: a CPN Tools or PNML file, a scenario's net, or a Python net.

    Each run fires from the initial marking until --until (model time), --max-firings or
    a dead marking; the table gives each transition's firings and each --average place,
    as mean ± 95 % CI over the runs with n. Example: tcpn simulate model.cpn --until 1000
    --replications 10 --average Queue -o runs.csv. A .cpn file whose import left
    elements out runs what was imported, and says so (tcpn import FILE lists them).
    """
    from tcpn.experiments.net_runs import simulate_net, summary_frame
    from tcpn.models.nets import named_net
    from tcpn.outputs import atomic_file, check_output_files
    from tcpn.reports.progress import count_progress, model_time_progress

    if output is not None and not output.lower().endswith((".csv", ".parquet")):
        raise InputError(f"--output {output}: use a .csv or .parquet file")
    check_output_files({"--output": output, "--events": events}, overwrite,
                       inputs={} if python else {"NET": net})
    loaded = named_net(net, python=python, trusted=trust)
    if not loaded.complete:
        left = len(loaded.report.unsupported)
        err_console.print(f"{net}: the import left {left} element{'s' * (left != 1)} out; "
                          "the net runs without them (tcpn import "
                          f"{net} lists them)", markup=False, highlight=False, soft_wrap=True)
    scenario = net.lower().endswith((".yaml", ".yml")) and not python
    if until is None and scenario:
        from tcpn.models.scenario import load_scenario

        until = load_scenario(net).horizon_s
    name = loaded.net.name
    if until is not None:
        with model_time_progress(err_console, f"simulate: {name}",
                                 until * replications) as tick:
            runs = simulate_net(loaded.net, until_s=until, max_firings=max_firings,
                                replications=replications, seed=seed,
                                averages=tuple(average or ()), events=events,
                                overwrite=overwrite,
                                progress=lambda r, now: tick(r * until + now))
    else:
        with count_progress(err_console, f"simulate: {name}", replications) as done:
            runs = simulate_net(loaded.net, max_firings=max_firings,
                                replications=replications, seed=seed,
                                averages=tuple(average or ()), events=events,
                                overwrite=overwrite, progress=lambda r, _now: done(r))
    if output is not None:
        with atomic_file(output, overwrite) as tmp:
            if output.lower().endswith(".parquet"):
                runs.to_parquet(tmp, index=False)
            else:
                runs.to_csv(tmp, index=False)
    summary = summary_frame(runs)
    shown = summary[~summary["column"].str.startswith("tokens:")] \
        if len(loaded.net.places) > 30 else summary
    table = Table(title=f"{name}: {replications} run{'s' * (replications != 1)}, seed {seed}"
                  + (", mean ± 95 % CI" if replications > 1 else ""))
    for title in ("", "value", "n"):
        table.add_column(title, justify="left" if not title else "right")
    for row in shown.itertuples():
        half = "" if row.half_width != row.half_width else f" ± {row.half_width:.4g}"
        table.add_row(str(row.column), f"{row.mean:.6g}{half}",
                      f"{row.n} (identical)" if row.identical else str(row.n))
    console.print(table)
    if replications > 1 and bool(summary["identical"].all()):
        console.print(f"every run gave the same numbers: the net draws no random numbers "
                      f"(a deterministic result, shown once per row){_SCENARIO_RUNS * scenario}",
                      markup=False, highlight=False, soft_wrap=True)
    stops = runs["stop_reason"].value_counts()
    console.print("stopped: " + ", ".join(f"{reason} {count}" for reason, count
                                          in stops.items()), markup=False, highlight=False)
    if replications == 2 and not bool(summary["identical"].all()):
        console.print("n = 2: a 95 % interval from two runs spans 12.7 standard errors; "
                      "use --replications 5 or more", markup=False, highlight=False,
                      soft_wrap=True)
    if len(shown) < len(summary):
        console.print("final token counts per place (tokens:P): in --output", markup=False,
                      highlight=False)
    for target in (output, events):
        if target is not None:
            console.print(f"written: {target}", markup=False, highlight=False)


@app.command("inspect")
def inspect_net(
    net: Annotated[str, typer.Argument(help="The net: a .cpn or .pnml file, a scenario .yaml "
                                       "(its whole net), or with --python "
                                       "package.module:function returning a PetriNet.")],
    what: Annotated[str, typer.Option(
        "--show", help="places, transitions, modules, colours or all.",
        callback=_choice("places", "transitions", "modules", "colours", "all"))] = "all",
    python: PythonOption = False,
    trust: TrustOption = False,
) -> None:
    """List a net's places (colour set, initial tokens, module), transitions (guard,
    delay, priority, module, arcs), modules and colour sets: the names formulas, monitors
    and --average take. Example: tcpn inspect scenarios/dumbbell_newreno.yaml --show
    places.
    """
    from tcpn.models.nets import named_net
    from tcpn.petrinets.inventory import inventory

    loaded = named_net(net, python=python, trusted=trust)
    tables = inventory(loaded.net)
    keys = {"places": "places", "transitions": "transitions", "modules": "modules",
            "colours": "colour sets"}
    chosen = list(keys.values()) if what == "all" else [keys[what]]
    wide = Console(width=max(console.width, 160), soft_wrap=False)
    for key in chosen:
        frame = tables[key]
        table = Table(title=f"{loaded.net.name}: {len(frame)} {key}")
        for column in frame.columns:
            table.add_column(str(column), overflow="fold")
        for row in frame.itertuples(index=False):
            table.add_row(*(str(v) for v in row))
        wide.print(table)
    if not loaded.complete:
        console.print(f"{net}: the import left {len(loaded.report.unsupported)} element(s) "
                      f"out (tcpn import {net} lists them)", markup=False, highlight=False,
                      soft_wrap=True)


@app.command("export")
@_interruptible_command("output")
def export_net(
    net: Annotated[str, typer.Argument(help="A .cpn/.pnml file, a scenario .yaml (its whole "
                                       "net), or with --python package.module:function "
                                       "(or file.py:function) returning a PetriNet.")],
    file_format: Annotated[str, typer.Option("--format", "-f", help="cpn or pnml.",
                                             callback=_choice("cpn", "pnml"))] = "cpn",
    output: Annotated[str | None, typer.Option("--output", "-o", help="File to write "
                                               "(default: stdout).")] = None,
    real_time: Annotated[bool | None, typer.Option(
        "--real-time/--integer-time", help="CPN Tools' time type (default: from the net).")
    ] = None,
    layout: Annotated[str, typer.Option(help="dot (Graphviz) or grid.",
                                        callback=_choice("dot", "grid"))] = "dot",
    net_type: Annotated[str, typer.Option(help="PNML: auto, pt or symmetric.",
                                          callback=_choice("auto", "pt", "symmetric"))
                        ] = "auto",
    strict: Annotated[bool, typer.Option(
        "--strict", help="PNML: refuse (exit 3) what the standard P/T and symmetric-net "
        "grammars can't say, instead of writing it in tcpn's toolspecific form.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing "
                                            "OUTPUT file.")] = False,
    python: PythonOption = False,
    trust: TrustOption = False,
) -> None:
    """Export a net to CPN Tools (.cpn) or PNML.

    PNML holds the structure; time, integers, arithmetic and the like go in tcpn's
    toolspecific elements (docs/exchange.md: what other readers lose). CPN Tools: what
    the format can't say is an error.

    Examples: tcpn export --python tcpn.petrinets.exchange.loading:example_net -o mm1.cpn;
    tcpn export scenarios/dumbbell_newreno.yaml -o dumbbell.cpn
    """
    from tcpn.outputs import check_output_files
    from tcpn.petrinets.exchange.loading import built_net, load_net, net_text, save_net

    check_output_files({"--output": output}, overwrite, inputs={} if python else {"NET": net})
    if net.lower().endswith((".yaml", ".yml")):
        from tcpn.models.topology import scenario_net

        loaded = built_net(scenario_net(net), net)
    else:
        loaded = load_net(net, python=python, trusted=trust)
    if output is None:
        sys.stdout.write(net_text(loaded, file_format, real_time=real_time, layout=layout,
                                  net_type=net_type, strict=strict))
        return
    path = save_net(loaded, output, file_format, real_time=real_time, layout=layout,
                    net_type=net_type, strict=strict, overwrite=overwrite)
    err_console.print(f"wrote {path}", markup=False, highlight=False)


def _confirm_lenses(confirm: bool, confirm_lens: str | None) -> tuple[str, ...]:
    """The lenses of ``--confirm``/``--confirm-lens`` (an unknown one is bad input)."""
    if confirm_lens is None:
        return ("net", "ns3") if confirm else ()
    lenses = tuple(name.strip() for name in confirm_lens.split(",") if name.strip())
    unknown = [name for name in lenses if name not in ("net", "ns3")]
    if unknown or not lenses:
        raise InputError(f"--confirm-lens {confirm_lens!r}: a replay runs in the packet "
                         "lenses net and ns3 (comma-separated)")
    return lenses


@app.command("check")
@_interruptible_command("json_file", "msc")
def check_net(
    net: Annotated[str, typer.Argument(help="The net: a .cpn or .pnml file, a scenario .yaml, "
                                       "or with --python package.module:function "
                                       "returning a PetriNet.")],
    ctl: Annotated[list[str] | None, typer.Option(
        "--ctl", help="A CTL formula, e.g. \"AG !deadlock\" or \"A[fireable(send) U "
        "tokens(acked) >= 3]\" (repeatable). Grammar: docs/checking.md.")] = None,
    ltl: Annotated[list[str] | None, typer.Option(
        "--ltl", help="An LTL formula over all paths, e.g. \"G F fireable(deliver)\" "
        "(repeatable; A is implied).")] = None,
    askctl: Annotated[list[str] | None, typer.Option(
        "--askctl", help="A CPN Tools ASK-CTL query, e.g. 'INV(NOT(NF(\"d\", fn n => "
        "(OutArcs n) = [])))' (repeatable; standard operators).")] = None,
    earliest: Annotated[list[str] | None, typer.Option(
        "--earliest", help="A timed net: the earliest model time a marking is reached, with "
        "the quickest run, e.g. \"tokens(delivered) >= 2\" (repeatable; relative-time "
        "state space).")] = None,
    latest: Annotated[list[str] | None, typer.Option(
        "--latest", help="A timed net: the latest time a marking is first reached over all "
        "runs (inf, with the cycle or dead end that avoids it, when some run never does).")
    ] = None,
    probability: Annotated[list[str] | None, typer.Option(
        "--probability", help="A timed net: how likely a time-bounded path formula is over "
        "simulated runs, e.g. \"F<=3 tokens(delivered) >= 2\" (repeatable): the share of "
        "--runs runs (default 1,000) with its exact 95 % interval, or with --at-least P a "
        "sequential test of P[formula] >= P (docs/checking.md).")] = None,
    at_least: Annotated[float | None, typer.Option(
        "--at-least", min=0.0, max=1.0, help="With --probability: answer whether the "
        "probability is at least this (Wald's sequential test, +-0.01 indifference, 5 % "
        "errors; --runs caps the runs, default 100,000).")] = None,
    runs: Annotated[int | None, typer.Option(
        "--runs", min=1, help="With --probability: the runs of an estimate, or the most a "
        "sequential test may take.")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", min=0, help="With --probability: the seed of the simulated runs.")] = 0,
    draw_seed: Annotated[int | None, typer.Option(
        "--draw-seed", min=0, help="Fix each initial marking the net draws at random (a CPN "
        "Tools file's discrete(0, 99)) to one draw from this seed, said on stderr: a state "
        "space starts from one marking.")] = None,
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
        "--json", help="Write the verdicts and their evidence (paths) to this JSON file "
        "(a new file, or --overwrite).")
    ] = None,
    examination: Annotated[str | None, typer.Option(
        "--examination", help="A Model Checking Contest examination (CTLFireability, "
        "LTLCardinality, UpperBounds, ReachabilityDeadlock, StateSpace...): NET is "
        "DIR/model.pnml, the formulas are read from DIR/<examination>.xml, and one line "
        "per formula is printed as the contest's tools print it.")] = None,
    tcp_property: Annotated[str | None, typer.Option(
        "--property", help="A TCP property of the library (NET is a scenario .yaml), e.g. "
        "delivered_once_in_order, all_flows_complete, or 'all'; checked on the scenario's "
        "verification net, every loss within --losses/--ack-losses a choice "
        "(docs/verification.md).")] = None,
    flow: Annotated[str | None, typer.Option(
        "--flow", help="With --property: the flow (its id) the per-flow properties speak "
        "of; needed when the scenario has several (cross-flow properties read all).")
    ] = None,
    delay_points: Annotated[int | None, typer.Option(
        "--delay-points", min=2, help="With --property: explore a random start time or "
        "gap (uniform) at this many points of its interval, both ends included.")] = None,
    clock: Annotated[str | None, typer.Option(
        "--clock", help="With --property: 'absolute' (default; CPN Tools' timed state space) "
        "or 'relative' (timestamps and the packets' times relative to each state's clock; "
        "the same verdicts: docs/statespace.md).")] = None,
    losses: Annotated[int, typer.Option(
        min=0, help="With --property: at most this many data segments lost per run, on "
        "any link.")] = 0,
    ack_losses: Annotated[int, typer.Option(
        "--ack-losses", min=0, help="With --property: at most this many other packets "
        "(ACKs, SYN, SYN-ACK) lost per run.")] = 0,
    loss_links: Annotated[str | None, typer.Option(
        "--loss-links", help="With --property: comma-separated link directions that may "
        "lose, e.g. 'R->D,D->R' (default: every direction).")] = None,
    segments: Annotated[int, typer.Option(
        min=1, help="With --property: the transfer's length in segments.")] = 4,
    bulk: Annotated[bool, typer.Option(
        "--bulk", help="With --property: a bulk sender (no end of data; relative clock); "
        "the bulk properties keeps_delivering and cwnd_returns_after_loss run there "
        "(docs/statespace.md, 'Properties of a bulk sender').")] = False,
    per_window: Annotated[bool, typer.Option(
        "--per-window", help="With --bulk: --losses/--ack-losses count per window of the "
        "flow (refilled when every segment outstanding at its start is acknowledged).")
    ] = False,
    unbounded_losses: Annotated[bool, typer.Option(
        "--unbounded-losses", help="With --bulk: a kind with --losses/--ack-losses above 0 "
        "may be lost any number of times.")] = False,
    cwnd_target: Annotated[int | None, typer.Option(
        "--cwnd-target", min=1, help="With --bulk: the W of cwnd_returns_after_loss "
        "(segments, at most the receive window).")] = None,
    share_ratio: Annotated[float | None, typer.Option(
        "--share-ratio", help="With --property window_share or share_settles: their R, no "
        "flow's cwnd above R times another's while all are in congestion avoidance (a "
        "number >= 1).")] = None,
    rtt_grain: Annotated[float | None, typer.Option(
        "--rtt-grain", help="With --bulk: the grain (s) the RTT estimator is rounded to "
        "(default 0.001).")] = None,
    symmetry: Annotated[bool, typer.Option(
        "--symmetry", help="With --property: explore one state per orbit of the exchanges "
        "of identical flows (same variant, parameters, transfer, start, symmetric links); "
        "refused, with the reason, when there are none or the property tells them apart "
        "(docs/verification.md).")] = False,
    msc: Annotated[str | None, typer.Option(
        "--msc", help="With --property: write the first counterexample as a "
        "message-sequence chart to this SVG file (a new file, or --overwrite).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing "
                                            "--json/--msc file.")] = False,
    confirm: Annotated[bool, typer.Option(
        "--confirm", help="With --property: replay each counterexample's losses (scripted "
        "per link direction) from the same start in the net lens and ns-3 and say whether "
        "the violation shows at packet level; with --msc, the charts side by side.")
    ] = False,
    confirm_lens: Annotated[str | None, typer.Option(
        "--confirm-lens", help="With --property: --confirm in these lenses only "
        "(comma-separated: net, ns3).")] = None,
    python: PythonOption = False,
    trust: TrustOption = False,
) -> None:
    """Model-check a net: CTL and LTL formulas with evidence, or the standard report.

    Each formula gets true, false or unknown (a budget was reached, and which); a witness
    or counterexample path is printed when one exists. Exit 0 when every formula holds,
    1 when one is false or unknown, 3 on bad input (a malformed formula, an unknown place).
    Example: tcpn check --python tcpn.petrinets.exchange.loading:example_net --report.
    A TCP property: tcpn check scenario.yaml --property all --segments 4 --losses 1
    """
    from tcpn.models.nets import named_net
    from tcpn.petrinets.engine.initial_draws import drawn_places, fix_initial_draws
    from tcpn.reports.checks.formulas import CheckRequest, run_check

    if tcp_property is None and (msc is not None or losses or ack_losses or loss_links
                                 or flow is not None or delay_points is not None
                                 or clock is not None or confirm
                                 or confirm_lens is not None or bulk or symmetry
                                 or share_ratio is not None):
        raise InputError("--losses, --ack-losses, --loss-links, --flow, --delay-points, "
                         "--clock, --msc, --confirm, --confirm-lens, --bulk, --symmetry and "
                         "--share-ratio go with --property NAME")
    if not bulk and (per_window or unbounded_losses or cwnd_target is not None
                     or rtt_grain is not None):
        raise InputError("--per-window, --unbounded-losses, --cwnd-target and --rtt-grain "
                         "go with --bulk")
    if tcp_property is not None:
        from tcpn.models.verification.bulk import DEFAULT_RTT_GRAIN_S
        from tcpn.reports.checks.properties import PropertyRequest, run_property_check

        if not net.lower().endswith((".yaml", ".yml")):
            raise InputError(f"--property checks a scenario .yaml, not {net}")
        links = tuple(d.strip() for d in loss_links.split(",") if d.strip()) \
            if loss_links else None
        lenses = _confirm_lenses(confirm, confirm_lens)
        if not run_property_check(PropertyRequest(
                net, tcp_property, None if bulk else segments, losses, ack_losses, links,
                max_states or 1_000_000, json_file, msc, overwrite=overwrite, flow=flow,
                delay_points=delay_points,
                clock=clock or ("relative" if bulk else "absolute"), confirm=lenses,
                per_window=per_window, unbounded_losses=unbounded_losses,
                cwnd_target=cwnd_target, rtt_grain_s=rtt_grain or DEFAULT_RTT_GRAIN_S,
                symmetry=symmetry, share_ratio=share_ratio),
                console, err_console):
            raise typer.Exit(EXIT_FAILURE)
        return

    if examination is not None:
        from tcpn.petrinets.checking.contest.examinations import (
            DEFAULT_MAX_STATES,
            check_examination,
        )

        check_examination(net, examination, max_states or DEFAULT_MAX_STATES, time_limit,
                          on_line=lambda line: console.print(line, markup=False,
                                                             highlight=False, soft_wrap=True),
                          on_reason=lambda ident, reason: err_console.print(
                              f"{ident}: CANNOT_COMPUTE: {reason}", markup=False,
                              highlight=False, soft_wrap=True))
        return
    loaded = named_net(net, python=python, trusted=trust).net
    drawn = drawn_places(loaded)
    if draw_seed is not None and drawn:
        loaded = fix_initial_draws(loaded, draw_seed)
        err_console.print(f"the initial marking of place(s) {', '.join(drawn)}, drawn at "
                          f"random, is fixed to one draw from seed {draw_seed}: " + "; ".join(
                              f"{name} = {[t.value for t in loaded.places[name].initial]}"
                              for name in drawn[:5]), markup=False, highlight=False)
    request = CheckRequest(net=loaded, source=net, ctl=tuple(ctl or ()), ltl=tuple(ltl or ()),
                           askctl=tuple(askctl or ()), report=report,
                           max_states=max_states or 5_000_000,
                           time_limit_s=time_limit,
                           weak_fair=weak, strong_fair=strong, reduction=reduction,
                           json_file=json_file, overwrite=overwrite,
                           earliest=tuple(earliest or ()), latest=tuple(latest or ()),
                           probability=tuple(probability or ()), at_least=at_least,
                           runs=runs, seed=seed)
    if not run_check(request, console, err_console):
        raise typer.Exit(EXIT_FAILURE)


@app.command("import")
def import_net(
    file: Annotated[str, typer.Argument(help="A CPN Tools (.cpn) or PNML (.pnml) file.")],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write the imported net again (.cpn or .pnml).")] = None,
    strict: Annotated[bool, typer.Option(help="Fail (exit 3) if any element is left out.")
                      ] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing "
                                            "OUTPUT file.")] = False,
    trust: TrustOption = False,
) -> None:
    """Import a net and report, element by element, what tcpn kept, left out and changed."""
    from tcpn.outputs import check_output_files
    from tcpn.petrinets.exchange.loading import load_net, save_net

    check_output_files({"--output": output}, overwrite, inputs={"FILE": file})
    loaded = load_net(file, strict=strict, trusted=trust)
    console.print(loaded.report.text(), markup=False, highlight=False, soft_wrap=True)
    if output is not None:
        console.print(f"wrote {save_net(loaded, output, overwrite=overwrite)}",
                      markup=False, highlight=False, soft_wrap=True)


@app.command("table")
def scenario_table(
    scenarios: Annotated[list[str], typer.Argument(help="Scenario YAML files, e.g. "
                                                   "scenarios/studies/s1_*.yaml.")],
    lens: Annotated[str, typer.Option(help="Lens: net, fluid or ns3.",
                                      callback=_lens_name)] = "net",
    seed: Annotated[int | None, typer.Option(min=0, help="Seed for every file (default: each "
                                             "file's own).")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes (default: "
                                                "CPU count).")] = None,
    markdown: Annotated[str | None, typer.Option(help="Also write the table as Markdown "
                                                 "to this (new) file.")] = None,
    csv: Annotated[str | None, typer.Option(help="Also write the table as CSV to this "
                                            "(new) file.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace existing "
                                            "--markdown/--csv files.")] = False,
) -> None:
    """Run many scenarios once each with one lens and print one row per scenario.

    Aggregate and per-flow goodput, Jain's index, retransmissions, timeouts, mean RTT, the
    busiest queue and the time to deliver sized transfers: the figures a study compares
    across its experiments. A file that fails gets its error in its row (named by its file
    name) and on a line of its own below the table; exit code 3 then if a file is invalid
    input, else 1.
    """
    from tcpn.outputs import atomic_file, check_output_files
    from tcpn.reports.progress import count_progress
    from tcpn.reports.scenario_table import (
        absent_reasons,
        format_cell,
        run_scenarios,
        scenario_frame,
        to_markdown,
    )

    check_output_files({"--markdown": markdown, "--csv": csv}, overwrite,  # before the runs
                       inputs={f"SCENARIOS[{k}]": path for k, path in enumerate(scenarios)})
    with _interruptible(None), count_progress(err_console, f"{lens}: scenarios",
                                              len(scenarios), "scenarios") as done:
        finished = [0]

        def advance(_row: object) -> None:
            finished[0] += 1
            done(finished[0])

        rows = run_scenarios(scenarios, lens, seed=seed, workers=workers, progress=advance)
    frame = scenario_frame(rows)
    failed = frame["error"] != ""
    table = Table(title=f"{len(rows)} scenarios, {lens} lens, one run each")
    for column in frame.columns:
        if column != "error" or failed.any():
            table.add_column(column, justify="left" if column in (
                "scenario", "per flow Mbit/s", "busiest queue mean/max pkts", "error")
                else "right", overflow="fold", no_wrap=column == "scenario",
                min_width=max(len(str(v)) for v in frame[column]) if column == "scenario"
                else None)
    for record in frame.to_dict(orient="records"):
        table.add_row(*(format_cell(v) for k, v in record.items()
                        if k != "error" or failed.any()))
    Console(width=max(console.width, 180)).print(table)
    for line in absent_reasons(rows):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for row in rows:
        if row.error:  # whole, on one line: the terminal wraps it, no column cuts it
            console.print(f"{row.path}: {row.error}", markup=False, highlight=False,
                          soft_wrap=True)
    if markdown:
        with atomic_file(markdown, overwrite) as tmp:
            tmp.write_text(to_markdown(frame) + "\n")
        console.print(f"markdown: {markdown}", markup=False, highlight=False, soft_wrap=True)
    if csv:
        with atomic_file(csv, overwrite) as tmp:
            frame.to_csv(tmp, index=False)
        console.print(f"csv: {csv}", markup=False, highlight=False, soft_wrap=True)
    if any(row.invalid_input for row in rows):
        raise typer.Exit(EXIT_INPUT)
    if failed.any():
        raise typer.Exit(EXIT_FAILURE)


@app.command("sweep")
def sweep_campaign(
    sweep_file: Annotated[str, typer.Argument(help="Sweep file (or a scenario file with a "
                                              "sweep: section), e.g. scenarios/sweeps/*.yaml.")],
    store: Annotated[str, typer.Option(help="Campaign store: every run is kept there once, "
                                       "keyed by its content; shared by any number of "
                                       "sweeps.")] = "results/store",
    workers: Annotated[int | None, typer.Option(min=1, help="Local worker processes, or "
                                                "Dask workers with --dask local (default: "
                                                "CPU count).")] = None,
    dask: Annotated[str | None, typer.Option(help="Run on Dask: 'local' (a LocalCluster) or "
                                             "a scheduler address, tcp://host:8786.")] = None,
    dask_timeout: Annotated[float, typer.Option(min=0.1, help="Seconds to reach the Dask "
                                                "scheduler.")] = 10.0,
    traces: Annotated[bool, typer.Option(help="Keep every run's trace tables in the store "
                                         "(summaries are always kept).")] = False,
    retry_failed: Annotated[bool, typer.Option(help="Run again the runs whose record holds "
                                               "an error.")] = False,
    dry_run: Annotated[bool, typer.Option(help="Only say how many runs are stored and how "
                                          "many would run.")] = False,
    metric: Annotated[str, typer.Option(help="Aggregate metric shown and plotted (a key of "
                                        "the summary's aggregate, e.g. goodput_bps).")
                      ] = "goodput_bps",
    csv: Annotated[str | None, typer.Option(help="Write the tidy results table (every "
                                            "metric, mean and 95 % CI) to this CSV file.")
                   ] = None,
    figure: Annotated[str | None, typer.Option(help="Write a figure (.png, .pdf, .svg): the "
                                               "metric against --x with CI bands per lens, "
                                               "or a heatmap over --x and --y.")] = None,
    x: Annotated[str | None, typer.Option(help="Axis path on the figure's x axis (default: "
                                          "the first axis).")] = None,
    y: Annotated[str | None, typer.Option(help="Second axis path: draw a heatmap.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
) -> None:
    """Run a sweep: every cell x lens x replication the store lacks, then the results.

    Each run is stored once, keyed by its concrete scenario, lens, seed and tcpn version,
    so Ctrl-C (or a crash) loses only the runs in flight: run the command again to resume,
    and a grid extended by new values runs only the new cells. A cell whose values make
    an invalid scenario, or a run that fails, keeps its error in its row and the others
    go on (exit code 1 then). Results do not depend on --workers or --dask.
    """
    import os

    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from tcpn.experiments.sweep import CampaignStore, load_results, load_sweep, run_campaign
    from tcpn.experiments.sweep.campaign import plan_campaign
    from tcpn.experiments.sweep.executors import executor_for
    from tcpn.experiments.sweep.results import check_metric
    from tcpn.outputs import atomic_file, check_output_files, save_figure

    spec = load_sweep(sweep_file)
    check_metric(spec, metric)
    if figure is not None:
        from tcpn.reports.campaign_figures import check_figure_path

        check_figure_path(figure)
    campaign_store = CampaignStore(store)
    plan = plan_campaign(spec, campaign_store, traces, retry_failed)
    err_console.print(f"{spec.name}: {spec.size} cells x {len(spec.lenses)} lenses x "
                      f"{spec.replications} runs = {len(plan.tasks)} runs "
                      f"({plan.invalid_cells} invalid cells); {len(plan.tasks) - len(plan.missing)}"
                      f" stored, {len(plan.missing)} to run; store {store}",
                      markup=False, highlight=False)
    others = campaign_store.other_versions()
    if others:
        err_console.print(f"the store also holds runs of tcpn {', '.join(others)}: kept "
                          "apart, not used", markup=False, highlight=False)
    if dry_run:
        return
    campaign_store.check_writable()  # before the runs, not after the first one
    check_output_files({"--csv": csv, "--figure": figure}, overwrite,  # before the runs
                       inputs={"SWEEP": sweep_file})
    stored_before = len(plan.tasks) - len(plan.missing)
    done = [0]

    def kept() -> str:
        return (f" ({stored_before + done[0]} of {len(plan.tasks)} runs are in {store}; the "
                "same command resumes)")

    with _interruptible(None, kept), \
            executor_for(workers or os.cpu_count() or 1, dask, dask_timeout) as executor, \
            Progress(TextColumn("{task.description}"), BarColumn(),
                     TextColumn("{task.fields[counts]}"), TimeRemainingColumn(),
                     console=err_console, transient=True) as bar:
        task = bar.add_task(spec.name, total=len(plan.missing) or 1, counts="")

        def tick(finished: int, failed: int, remaining: int) -> None:
            done[0] = finished
            bar.update(task, completed=finished, counts=f"{finished} done, {failed} "
                       f"failed, {remaining} remaining")

        run_campaign(spec, campaign_store, executor, traces, retry_failed, tick)
    results = load_results(spec, campaign_store)
    frame = results.table()
    shown = frame[(frame["metric"] == metric) & (frame["scope"] == "aggregate")
                  | (frame["metric"] == "")]
    table = Table(title=f"{spec.name}: {metric} (aggregate, mean ± 95 % CI over "
                  f"{spec.replications} runs)")
    for column in ["cell", *spec.parameters, "lens", metric, "runs ok", "error"]:
        table.add_column(column, overflow="fold",
                         justify="right" if column in ("cell", metric, "runs ok") else "left")
    for row in shown.to_dict(orient="records"):
        mean, half = row["mean"], row["half_width"]
        value = "" if mean != mean else f"{mean:.4g}" + ("" if half != half else
                                                         f" ± {half:.2g}")
        table.add_row(str(row["cell"]), *(str(row[p]) for p in spec.parameters), row["lens"],
                      value, f"{row['runs'] - row['failed']}/{row['runs']}", row["error"])
    Console(width=max(console.width, 60 + 16 * len(spec.parameters))).print(table)
    if csv:
        with atomic_file(csv, overwrite) as tmp:
            frame.to_csv(tmp, index=False)
        console.print(f"csv: {csv}")
    if figure is not None:
        from tcpn.reports.campaign_figures import heatmap, metric_against_axis

        drawn = (heatmap(results, metric, x or spec.parameters[0], y) if y is not None
                 else metric_against_axis(results, metric, x))
        save_figure(drawn, figure, 120, overwrite)
        console.print(f"figure: {figure}")
    if (frame["error"] != "").any():
        raise typer.Exit(EXIT_FAILURE)


@app.command("validate")
def validate_lenses(
    scenario: Annotated[str, typer.Argument(help="Scenario YAML file.")],
    lenses: Annotated[str, typer.Option(help="Lenses to compare, e.g. net,ns3 or "
                                        "net,ns3,fluid; lenses that refuse the scenario "
                                        "are reported and skipped.",
                                        callback=_lens_names)] = "net,ns3",
    reference: Annotated[str | None, typer.Option(
        help="Lens the others are judged against (default: ns3 if listed, else the "
        "first).", callback=_lens_name)] = None,
    replications: Annotated[int, typer.Option(min=1, help="Runs per lens.")] = 3,
    seed: Annotated[int | None, typer.Option(
        min=0, help="Seed (default: the scenario's).")] = None,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Directory for comparison.csv/.json, timeseries.png and the "
        "runs (default: results/<name>-validate); a new or empty directory, or a tcpn "
        "output with --overwrite.")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
    report: Annotated[bool, typer.Option(
        "--report", help="Also write an HTML/PDF report (OUTPUT/report): the lenses side "
        "by side with CI bands over every replication.")] = False,
    trace: Annotated[list[str] | None, typer.Option(
        "--trace", help="A packet capture (pcap or pcapng) taken at the senders' hosts "
        "(repeatable): the lenses are judged against it (the capture lens).")] = None,
    trace_receiver: Annotated[list[str] | None, typer.Option(
        "--trace-receiver", help="With --trace: a capture at the receivers' hosts "
        "(repeatable), for deliveries and throughput as received.")] = None,
    trace_ports: Annotated[str | None, typer.Option(
        "--trace-ports", help="With --trace: each flow's destination port, in order of "
        "the flows' start (default: the first connections opened, in order).")] = None,
    fit: Annotated[list[str] | None, typer.Option(
        "--fit", help="With --trace: a parameter the testbed did not state and the values "
        "to try, e.g. tcp.initial_cwnd_segments=2,4,10 (repeatable: every combination); "
        "fit.csv ranks them by misses, then mean error against the capture.")] = None,
) -> None:
    """Compare lenses on a scenario: means with 95 % CIs, relative error, target and
    verdict per metric (targets in tcpn.experiments.compare.TOLERANCES), Welch's t-test p
    of the runs (a miss with a large p is not a difference the runs can tell from noise),
    plus figures of goodput, cwnd and queue over time side by side. Exit code 1 if a
    target is missed. The directory appears whole when everything is written; on a
    terminal, stderr shows the runs done and the time left.

    Against a testbed: tcpn validate scenario.yaml --lenses net --trace sender.pcap
    [--trace-receiver receiver.pcap] judges the net lens against the capture (what a
    capture cannot see, drops, timeouts, queues, is "unseen")."""
    from tcpn.experiments.compare import compare, write_comparison
    from tcpn.experiments.fit import fit_capture, parse_fit
    from tcpn.models.scenario import load_scenario
    from tcpn.outputs import atomic_directory
    from tcpn.reports.progress import count_progress

    spec = load_scenario(scenario)
    out = output or f"results/{spec.name}-validate"
    names = [name.strip() for name in lenses.split(",") if name.strip()]
    options: dict[str, dict[str, Any]] = {}
    if (trace_receiver or trace_ports or fit) and not trace:
        raise InputError("--trace-receiver, --trace-ports and --fit go with --trace FILE")
    fits = [parse_fit(text) for text in fit or []]
    if trace:
        try:
            ports = [int(p) for p in trace_ports.split(",")] if trace_ports else []
        except ValueError:
            raise InputError(f"--trace-ports {trace_ports!r}: give ports as integers "
                             "separated by commas, e.g. 5000,5001") from None
        options["capture"] = {"sender": trace, "receiver": trace_receiver or [],
                              "ports": ports}
        names = [*(n for n in names if n != "capture"), "capture"]
    elif "capture" in names:
        raise InputError("the capture lens reads a capture: give it with --trace FILE")
    total = sum(1 if name == "capture" else replications for name in names)
    with _interruptible(out), atomic_directory(out, overwrite) as tmp, count_progress(
            err_console, f"validate {spec.name}", total) as done:
        found = compare(spec, names, replications=replications, seed=seed,
                        workers=workers, reference=reference, output=tmp, progress=done,
                        options=options)
        write_comparison(found, tmp)
        fitted = None
        if fits:
            fitted = fit_capture(spec, fits, [n for n in names if n != "capture"],
                                 options["capture"], replications, seed, workers)
            fitted.to_csv(tmp / "fit.csv", index=False)
        if report:  # inside the directory before it appears, from every replication
            from tcpn.reports.reporting import command_line
            from tcpn.reports.validation_report import write_validation_report

            write_validation_report(found, tmp / "report", command_line())
    found.runs_dir = Path(out) / "runs"
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
        cells = ["-" if row[f"{lens}_mean"] != row[f"{lens}_mean"] else
                 f"{row[f'{lens}_mean']:.4g}" + ("" if row[f"{lens}_ci"] != row[f"{lens}_ci"]
                                               else f" ± {row[f'{lens}_ci']:.2g}")
                 for lens in found.lenses]
        errors = ["" if row[f"{lens}_error"] != row[f"{lens}_error"] else
                  f"{row[f'{lens}_error'] * 100:+.1f} %" for lens in found.judged]
        verdicts = [row[f"{lens}_verdict"] for lens in found.judged]
        p_values = ["" if row[f"{lens}_p"] != row[f"{lens}_p"] else f"{row[f'{lens}_p']:.2f}"
                    for lens in found.judged]
        table.add_row(row["scope"], row["name"], row["metric"], *cells, *errors,
                      row["tolerance"], *verdicts, *p_values)
    wide.print(table)
    if fitted is not None:
        best = Table(title=f"--fit against the capture: {len(fitted)} combinations x lens, "
                     f"best first ({replications} runs each)")
        for column in fitted.columns:
            best.add_column(str(column), justify="right")
        for row in fitted.groupby("lens", sort=False).head(5).itertuples(index=False):
            best.add_row(*(f"{v:.3g}" if isinstance(v, float) else str(v) for v in row))
        wide.print(best)
        console.print(f"fit: {Path(out) / 'fit.csv'}", markup=False, highlight=False,
                      soft_wrap=True)
    console.print(f"comparison: {out} (comparison.csv, comparison.json, timeseries.png)")
    if report:
        console.print(f"report: {Path(out) / 'report' / 'report.html'}", markup=False,
                      highlight=False, soft_wrap=True)
    if len(found.failures()):
        raise typer.Exit(EXIT_FAILURE)


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """tcpn's own warnings (leftovers found beside an output...) as one line each."""
    from tcpn.outputs import OutputWarning

    if issubclass(category, OutputWarning):
        err_console.print(f"tcpn: {message}", markup=False, highlight=False)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


_default_showwarning = warnings.showwarning


@app.command("report")
@_interruptible_command("output")
def report(
    target: Annotated[list[str] | None, typer.Argument(
        help="`study s1|s2|s3|s4|s5|all` (one or more names), or a scenario YAML file.",
        show_default=False)] = None,
    from_dir: Annotated[str | None, typer.Option(
        "--from", help="Rebuild the report from the stored results of an earlier report "
        "directory, simulating nothing.")] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="Studies: the publication profile (default: the quick profile).")
    ] = False,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Directory for the report (default: reports/<what>, numbered "
        "if it exists): a new or empty directory, or a tcpn output with --overwrite.")
    ] = None,
    lens: Annotated[str, typer.Option(help="Scenario: the lens (net, fluid or ns3).")
                    ] = "net",
    replications: Annotated[int, typer.Option(min=1, help="Scenario: independent runs.")
                            ] = 3,
    seed: Annotated[int | None, typer.Option(min=0, help="Scenario: seed (default: the "
                                             "scenario's).")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Scenario: worker processes; "
                                                "with --dask local, the cluster's.")] = None,
    pdf: Annotated[bool, typer.Option("--pdf/--no-pdf", help="Also print the report to PDF "
                                      "with headless Chromium.")] = True,
    overwrite: Annotated[bool, typer.Option("--overwrite", help=OVERWRITE_HELP)] = False,
    store: Annotated[str | None, typer.Option(
        "--store", help="Studies: keep every run in this campaign store directory as it "
        "completes; runs already there are read, not made again, so a profile cut short "
        "resumes.")] = None,
    dask: Annotated[str | None, typer.Option(
        "--dask", help="Studies: run on a Dask cluster: 'local' (a LocalCluster of "
        "--workers processes) or a scheduler address tcp://host:8786 (pip install "
        "'tcpn[dist]').")] = None,
    against: Annotated[str | None, typer.Option(
        "--against", help="Studies: set every verdict beside those of an earlier study "
        "report (its directory), e.g. the quick profile's against the full one's: a "
        "section lists both verdicts per claim and what moved.")] = None,
) -> None:
    """Write an analysis report: one self-contained HTML file (table of contents, figures
    inline, provenance), the same as PDF, and every table's and figure's data as CSV.

    The five studies in the quick profile: tcpn report study all

    One study in the publication profile, resumable: tcpn report study s2 --full --store
    runs/

    Any scenario: tcpn report scenarios/dumbbell_newreno.yaml --replications 5

    Rebuild from stored results: tcpn report --from reports/study-all-quick -o rebuilt

    The quick verdicts against the full ones: tcpn report --from
    reports/study-all-quick --against reports/study-all-full -o compared
    """
    from tcpn.reports import reporting
    from tcpn.reports.verdict_comparison import read_earlier_report

    targets = list(target or [])
    earlier = None if against is None else read_earlier_report(against)
    if from_dir is not None:
        if targets:
            raise typer.BadParameter("give either --from DIR or what to report, not both")
        _, files = reporting.rebuild(from_dir, output or reporting.free_directory(
            f"{from_dir.rstrip('/')}-rebuilt"), pdf=pdf, overwrite=overwrite,
            against=earlier)
        _print_report_files(files)
        return
    if not targets:
        raise typer.BadParameter("say what to report: `study s1|...|all`, a scenario file, "
                                 "or --from DIR")
    if targets[0] == "study":
        _report_studies(targets[1:], "full" if full else "quick", output, pdf, overwrite,
                        store, dask, workers, earlier)
        return
    if earlier is not None:
        raise typer.BadParameter("--against compares study reports: tcpn report study ... "
                                 "--against DIR, or --from DIR --against DIR")
    if dask is not None:
        raise typer.BadParameter("--dask runs the studies' runs: tcpn report study ... "
                                 "--dask local")
    if len(targets) > 1:
        raise typer.BadParameter(f"one scenario file at a time, got {len(targets)}")
    _report_scenario(targets[0], lens, replications, seed, workers, output, pdf, overwrite)


def _print_report_files(files: Any) -> None:
    console.print(f"report: {files.html}", markup=False, highlight=False, soft_wrap=True)
    if files.pdf is not None:
        console.print(f"pdf: {files.pdf}", markup=False, highlight=False, soft_wrap=True)
    elif files.pdf_missing:
        err_console.print(f"tcpn: no PDF: {files.pdf_missing}", markup=False,
                          highlight=False)


def _report_studies(names: list[str], profile: Any, output: str | None, pdf: bool,
                    overwrite: bool, store: str | None = None, dask: str | None = None,
                    workers: int | None = None, against: Any = None) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from tcpn.reports import reporting
    from tcpn.reports.study_report import registered_studies, select_studies

    try:
        keys = select_studies(names)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    studies = registered_studies()
    missing = [key for key in keys if key not in studies]
    if missing:
        err_console.print(f"tcpn: not registered yet, left out of the report: "
                          f"{', '.join(missing)}", markup=False, highlight=False)
    out = output or reporting.free_directory(
        f"reports/study-{'all' if len(keys) == 5 else '-'.join(keys)}-{profile}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err_console, transient=True) as bar:
        tasks = {key: bar.add_task(f"{key}: waiting", total=None)
                 for key in keys if key in studies}

        def step(key: str, what: str, done: int, total: int) -> None:
            bar.update(tasks[key], description=f"{key}: {what}", completed=done,
                       total=total or None)

        with contextlib.ExitStack() as stack:
            executor = None
            if dask is not None:
                from tcpn.experiments.sweep.executors import dask_executor

                executor = stack.enter_context(dask_executor(dask, workers))
            _report, files, lines = reporting.report_studies(
                keys, out, profile, studies, step, pdf, overwrite, store, executor, against)
    _print_report_files(files)
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _report_scenario(path: str, lens: str, replications: int, seed: int | None,
                     workers: int | None, output: str | None, pdf: bool,
                     overwrite: bool) -> None:
    from rich.progress import Progress

    from tcpn.models.scenario import load_scenario
    from tcpn.reports import reporting

    spec = load_scenario(path)
    out = output or reporting.free_directory(f"reports/{spec.name}-{lens}")
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task(f"{lens}: {spec.name} x{replications}", total=replications)
        _, files = reporting.report_scenario(
            spec, out, lens, replications, seed, workers,
            progress=lambda n: bar.update(task, completed=n), pdf=pdf, overwrite=overwrite)
    _print_report_files(files)


@app.command("build")
def build(
    target: Annotated[list[str] | None, typer.Argument(
        help="`study s1|s2|s3|s4|s5|all` (one or more names), or scenario YAML, CPN "
        "Tools (.cpn) or PNML files.", show_default=False)] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="Studies: the publication profile's runs (default: the quick "
        "profile's, what `make run` runs).")] = False,
) -> None:
    """Build the native engine's modules that runs will need, once, before running them.

    The net simulator's default engine runs the net's generated code compiled by Cython
    and the C compiler; a run builds the modules its net needs that the cache lacks
    (about a second of CPU each; a TCP net needs 10 to 100). This command builds those
    of many runs at once, in parallel (one process per core this process may use), with
    one progress line, into the cache (`tcpn cache info`); later runs load them. `make
    run` calls it for the five studies. Without a C compiler (or Cython) it says so and
    builds nothing: the runs use the Python engine, the reference, which fires the same
    sequence.

    The five studies' runs (what `make run` runs): tcpn build study all

    One study's publication profile: tcpn build study s2 --full

    Scenario files: tcpn build scenarios/dumbbell_newreno.yaml scenarios/reference/*.yaml

    Any net (its file is read as data, as `tcpn simulate` reads it): tcpn build model.cpn
    """
    from tcpn.lenses.native_build import build_scenario_nets
    from tcpn.models.nets import named_net
    from tcpn.models.scenario import load_scenario, validate_scenario
    from tcpn.petrinets import compile_net
    from tcpn.petrinets.engine.native import NativeUnavailable, why_unavailable

    targets = list(target or [])
    nets = []
    if not targets:
        raise typer.BadParameter("say what to build for: `study s1|...|all`, scenario "
                                 "files or net files, e.g. tcpn build study all")
    if targets[0] == "study":
        from tcpn.reports.study_report import select_studies, study_net_mappings

        try:
            keys = select_studies(targets[1:])
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        profile: Any = "full" if full else "quick"
        what = f"study {' '.join(keys)} ({profile})"
        scenarios = [validate_scenario(dict(m)) for m in study_net_mappings(keys, profile)]
    else:
        what = ", ".join(targets) if len(targets) < 4 else f"{len(targets)} files"
        scenarios = [load_scenario(path) for path in targets
                     if path.lower().endswith((".yaml", ".yml"))]
        nets = [compile_net(named_net(path).net) for path in targets
                if not path.lower().endswith((".yaml", ".yml"))]
    reason = why_unavailable()
    if reason is not None:  # said every time here: this command is where one checks
        err_console.print(f"tcpn: the native engine cannot be built, runs use the Python "
                          f"engine: {reason}", markup=False, highlight=False)
        return
    try:
        summary = build_scenario_nets(scenarios, what, nets=nets)
    except NativeUnavailable as exc:
        err_console.print(f"tcpn: {exc}; runs use the Python engine", markup=False,
                          highlight=False)
        raise typer.Exit(EXIT_FAILURE) from None
    console.print(summary.text(), markup=False, highlight=False, soft_wrap=True)


cache_app = typer.Typer(
    help=("See and empty tcpn's caches on disk.\n\n"
          "tcpn keeps the compiled code of nets (the 'code' cache) and the native engine's "
          "built modules (the 'native' cache) under $TCPN_CACHE_DIR, else the user's cache "
          "directory (e.g. ~/.cache/tcpn). Each is bounded: past $TCPN_CODE_CACHE_MB "
          "(default 256) or $TCPN_NATIVE_CACHE_MB (default 1024) megabytes its least "
          "recently used entries are removed. Removing entries never changes results: what "
          "is missing is compiled or built again (the native engine's modules in seconds to "
          "minutes)."),
    no_args_is_help=True,
)
app.add_typer(cache_app, name="cache")


def _cache_names(values: list[str] | None) -> list[str] | None:
    """Names of tcpn's caches (usage error otherwise)."""
    from tcpn.petrinets.engine.caches import CACHES

    for value in values or []:
        _choice(*CACHES)(value)
    return values


def _megabytes(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:,.1f} MB"


@cache_app.command("info")
def cache_info() -> None:
    """Show each cache: its directory, entries, disk usage and bound.

    Example: `tcpn cache info`; then `TCPN_NATIVE_CACHE_MB=4000 tcpn ...` to keep more
    native modules, or `tcpn cache clear native` to empty that cache.
    """
    from tcpn.petrinets.engine.caches import CACHES

    table = Table(title="tcpn's caches (1 MB = 10^6 bytes, disk usage as du counts it)")
    for column in ("cache", "directory", "entries", "size", "bound", "set with"):
        table.add_column(column, justify="right" if column in ("entries", "size", "bound")
                         else "left", overflow="fold")
    for cache in CACHES.values():
        usage = cache.usage()
        table.add_row(cache.name, str(usage.directory or "none (no platformdirs, no "
                                                          "$TCPN_CACHE_DIR): not cached"),
                      f"{usage.entries:,}", _megabytes(usage.bytes),
                      _megabytes(usage.bound_bytes), f"${cache.variable}")
    console.print(table)
    for cache in CACHES.values():
        console.print(f"{cache.name}: {cache.holds}", markup=False, highlight=False)


@cache_app.command("clear")
def cache_clear(
    names: Annotated[list[str] | None, typer.Argument(
        metavar="[code|native]...", callback=_cache_names,
        help="The caches to empty (default: all).")] = None,
    wait: Annotated[float, typer.Option(
        min=0, max=86_400, help="Seconds to wait for other tcpn processes that are loading "
                               "native modules (a build in progress) before giving up "
                               "(exit 1).")] = 60.0,
) -> None:
    """Empty tcpn's caches (all, or those named): every entry is removed.

    Safe while other tcpn processes run: a process keeps the modules it has loaded, a
    build in progress is waited for (--wait), and anything removed is compiled or built
    again when next needed. Example: `tcpn cache clear native`.
    """
    from tcpn.petrinets.engine.caches import CACHES

    for name in names or list(CACHES):
        cleared = CACHES[name].clear(timeout_s=wait)
        console.print(f"{name}: removed {cleared.removed_entries:,} entries "
                      f"({_megabytes(cleared.removed_bytes)}) from {cleared.directory}",
                      markup=False, highlight=False, soft_wrap=True)


def main() -> None:
    """Entry point: usage errors exit 2 (Typer's own messages); tcpn's errors print one line;
    SIGTERM ends a command as Ctrl-C does (no partial output left); characters the
    terminal's encoding lacks print as "?"."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    warnings.showwarning = _show_warning
    for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 locale: "?" for "±", not a crash
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    try:
        app()
    except SystemExit as exc:  # an interrupt outside _interruptible: typer exits 130, silent
        if exc.code != EXIT_SIGNAL[signal.SIGINT] or _state.get("interrupt_said"):
            raise
        err_console.print("tcpn: interrupted", markup=False, highlight=False)
        sys.exit(EXIT_SIGNAL[signal.SIGTERM if _state.get("terminated") else signal.SIGINT])
    except Exception as exc:  # every error ends as one clear line and an exit code
        if _state["debug"]:
            raise
        code, message = _exit_for(exc)
        err_console.print(f"tcpn: {message}", markup=False, highlight=False)
        sys.exit(code)


#: Errors of the machine rather than of tcpn: a full disk, a read-only file system, a
#: missing permission (the paths of tcpn's outputs are checked before work starts; these
#: are what remains, e.g. the disk filling up during a run).
_ENVIRONMENT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES,
                       errno.EPERM)


def _exit_for(exc: Exception) -> tuple[int, str]:
    """The exit code and the one-line message of an error that ends a command: the one
    place where exceptions meet exit codes (the module docstring lists them)."""
    if isinstance(exc, InputError) or isinstance(getattr(exc, "cause", None), InputError):
        # the second: a firing a limit of tcpn's stopped (an imported net's loop without
        # end, a recursion past call_depth): the input is at fault there too
        return EXIT_INPUT, f"invalid input: {exc}"
    if isinstance(exc, TcpnError):
        return EXIT_FAILURE, str(exc)
    if isinstance(exc, OSError) and exc.errno in _ENVIRONMENT_ERRNOS:
        reason = (exc.strerror or str(exc)).lower()
        if exc.errno in (errno.EACCES, errno.EPERM):
            return EXIT_INPUT, f"{exc.filename or 'a file'}: {reason}"
        return EXIT_INPUT, f"cannot write {exc.filename or 'an output'}: {reason}"
    if isinstance(exc, ValueError) and str(exc) == "embedded null byte":  # os.fspath's
        return EXIT_INPUT, ("invalid input: a file name read from the input holds a NUL "
                            "character")
    if isinstance(exc, RecursionError):  # a reader without its own nesting limit
        files = [a for a in sys.argv[1:] if not a.startswith("-") and os.path.isfile(a)]
        return EXIT_INPUT, (f"invalid input: {', '.join(files) or 'the input'}: nested too "
                            "deep to read (Python's stack ran out; a raised --limit "
                            "xml_depth or expression_depth may let such input through)")
    return EXIT_INTERNAL, (f"internal error: {type(exc).__name__}: {exc} (rerun with --debug "
                           "for the traceback, and please report it)")


def _paragraphs_joined(text: str) -> str:
    """``text`` with the line breaks inside each paragraph joined into spaces: Typer's rich
    help keeps a docstring's single line breaks, which a terminal of another width shows as
    ragged lines; paragraphs (blank-line separated) and a ``\\f`` cut stay as they are."""
    shown, cut, rest = inspect.cleandoc(text).partition("\f")
    paragraphs = (" ".join(line.strip() for line in p.splitlines()) for p in shown.split("\n\n"))
    return "\n\n".join(paragraphs) + cut + rest


def _reflow_help(group: typer.Typer) -> None:
    """Give every command of ``group`` (and of its sub-groups) its help text as paragraphs,
    so ``--help`` wraps to the terminal's width whatever the source's line breaks."""
    for command in group.registered_commands:
        text = command.help if isinstance(command.help, str) else inspect.getdoc(command.callback)
        if text:
            command.help = _paragraphs_joined(text)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _reflow_help(sub.typer_instance)


_reflow_help(app)
