"""Real Linux TCP on a scenario's network, between network namespaces: the captures a
testbed would give, made on this machine (:func:`capture_linux`), for the capture lens
(``tcpn validate scenario.yaml --trace DIR/<src>.pcap --trace-receiver DIR/<dst>.pcap``).

Each node of the scenario becomes a network namespace, each link a veth pair whose two
ends shape their egress with a token bucket (``tbf``: the link's rate, its drop-tail
queue as the bucket's byte limit, one frame of burst); each flow runs the kernel's TCP
between its hosts, with the congestion control its variant names (``reno`` for
``linux_reno``, whose growth is Linux's, and for Reno, NewReno and SACK; ``cubic``,
``bbr``), from the flow's start to its stop or the horizon (bulk) or until its ``bytes``
are sent. Routes follow the scenario's (data and ACK routes
of every flow). The scenario's TCP settings become the kernel's where it has them: SACK,
timestamps and window scaling (sysctls of the sender's and receiver's namespaces), the
initial window and the minimum RTO (route options ``initcwnd`` and ``rto_min``), one ACK
per segment (``quickack``), the segment size (the links' MTU). Each end host's traffic
is captured on its interfaces into ``<node>.pcap`` (Ethernet, headers only, kernel
timestamps), and the kernel's own count of dropped capture packets must be 0.

What the kernel does its own way is listed in the result's ``notes`` (and the output's
``testbed.json``): its initial RTO, its delayed ACKs when two segments per ACK are
asked (Linux's quick-ACK heuristics), its loss recovery (RACK and PRR beside RFC 6675),
HyStart in CUBIC. A scenario the testbed cannot build is refused before anything is
created, naming the field: link delays (this tool does not drive ``netem``), wireless
hops, error models, queues other than drop-tail, paced or clock-skewed flows, per-flow
TCP settings, random start times (one run draws one), delayed-ACK counts other than 1
or 2. Building needs root and network namespaces; :func:`testbed_problem` says why not.

>>> from tcpn.models.scenario import dumbbell
>>> print(linux_problems(dumbbell(pairs=1, variant="reno", horizon_s=5.0))[0])
links[0].delay_s: 0.02 s of propagation delay needs netem, which this testbed does not drive
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tcpn.errors import InputError
from tcpn.models.scenario import ConcreteFlow, DropTail, Scenario
from tcpn.outputs import atomic_directory

__all__ = ["LinuxCapture", "capture_linux", "linux_problems", "testbed_problem"]

#: Linux's congestion control for each tcpn variant the testbed can run.
CONGESTION_CONTROL = {"reno": "reno", "newreno": "reno", "sack": "reno", "linux_reno": "reno",
                      "cubic": "cubic", "bbr": "bbr"}
#: Link delays up to this are taken as none (a veth hop and the namespaces' forwarding).
NEGLIGIBLE_DELAY_S = 1e-4
#: Rates from this on are not shaped: a veth pair is as fast as the CPU.
UNSHAPED_RATE_BPS = 1e9
#: Ethernet header on every frame a veth carries.
ETHERNET_BYTES = 14
_FIRST_PORT = 5001
_SETTLE_S = 1.0
#: The processes inside the namespaces: a script of the standard library alone, run by
#: path, so that each starts in a fraction of a second however loaded the machine is.
_HOSTS = str(Path(__file__).with_name("linux_hosts.py"))


@dataclass(frozen=True)
class LinuxCapture:
    """What :func:`capture_linux` wrote: one capture per end host, the congestion control
    each flow ran, and what the kernel did its own way."""

    directory: Path
    captures: dict[str, Path]
    congestion_control: dict[str, str]
    notes: list[str] = field(default_factory=list)


def testbed_problem() -> str | None:
    """Why this machine cannot build a testbed (not root, no network namespaces, no
    ``tbf``), or ``None``."""
    if sys.platform != "linux":
        return "network namespaces are Linux's"
    if os.geteuid() != 0:
        return "building network namespaces needs root"
    name = f"tcpn-probe-{os.getpid()}"
    try:
        _ip("netns", "add", name)
    except InputError as exc:
        return f"no network namespaces here ({exc})"
    try:
        _ip("-n", name, "link", "add", "probe0", "type", "veth", "peer", "name", "probe1")
        _run("ip", "netns", "exec", name, "tc", "qdisc", "add", "dev", "probe0", "root", "tbf",
             "rate", "10mbit", "burst", "1514", "limit", "15000")
    except InputError as exc:
        return f"no token-bucket queueing discipline (tbf) here ({exc})"
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    return None


def linux_problems(scenario: Scenario) -> list[str]:
    """What in ``scenario`` the testbed cannot build, each naming its field."""
    problems = []
    for k, link in enumerate(scenario.links):
        where = f"links[{k}]"
        if link.delay_s > NEGLIGIBLE_DELAY_S:
            problems.append(f"{where}.delay_s: {link.delay_s:g} s of propagation delay needs "
                            "netem, which this testbed does not drive")
        if link.wireless is not None:
            problems.append(f"{where}.wireless: a veth pair is no 802.11 hop")
        for side in ("ab", "ba"):
            direction = getattr(link, side)
            if direction.errors is not None:
                problems.append(f"{where}.{side}.errors: the testbed loses no packet on "
                                "purpose")
            if not isinstance(direction.queue, DropTail):
                problems.append(f"{where}.{side}.queue: the testbed queues drop-tail only, "
                                f"not {direction.queue.kind}")
    tcp = scenario.tcp
    if tcp.delack_count not in (1, 2):
        problems.append(f"tcp.delack_count: Linux ACKs every segment (quickack) or every "
                        f"second one, not every {tcp.delack_count}")
    for k, flow in enumerate(scenario.flows):
        where = f"flows[{k}]"
        if flow.variant not in CONGESTION_CONTROL:
            problems.append(f"{where}.variant: Linux has no {flow.variant!r} (the testbed runs "
                            f"{', '.join(sorted(CONGESTION_CONTROL))})")
        if not isinstance(flow.start_s, int | float):
            problems.append(f"{where}.start_s: a random start time is one draw per run; give "
                            "a number")
        for name in ("app_rate_bps", "tcp"):
            if getattr(flow, name) is not None:
                problems.append(f"{where}.{name}: not built by the testbed")
        if flow.receiver_clock_skew or flow.receiver_clock_offset_s:
            problems.append(f"{where}: the hosts share the machine's clock (receiver clock "
                            "offset and skew)")
    return problems


def capture_linux(scenario: Scenario, directory: str | Path, overwrite: bool = False,
                  ) -> LinuxCapture:
    """Run ``scenario`` on real Linux TCP between network namespaces and write each end
    host's capture into ``directory`` (whole or not at all; see the module docstring)."""
    problems = linux_problems(scenario)
    if problems:
        raise InputError(f"scenario {scenario.name}: the Linux testbed cannot build it: "
                         + "; ".join(problems))
    if (why := testbed_problem()) is not None:
        raise InputError(f"the Linux testbed cannot run here: {why}")
    flows = scenario.concrete_flows()
    controls = {f.id: CONGESTION_CONTROL[f.variant] for f in flows}
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    missing = sorted(set(controls.values()) - set(available))
    if missing:
        raise InputError(f"the kernel has no congestion control {', '.join(missing)} "
                         f"(available: {', '.join(available)})")
    hosts = sorted({f.src for f in flows} | {f.dst for f in flows})
    with atomic_directory(directory, overwrite=overwrite) as out, _testbed(scenario, flows) as bed:
        captures = {h: out / f"{h}.pcap" for h in hosts}
        capturing = [bed.start(h, "capture", *bed.interfaces[h], str(captures[h]))
                     for h in hosts]
        for process in capturing:
            _ready(process)
        receivers = [bed.start(f.dst, "receive", bed.address[f.dst], str(_FIRST_PORT + i))
                     for i, f in enumerate(flows)]
        senders = [bed.start(f.src, "send", bed.address[f.src], bed.address[f.dst],
                             str(_FIRST_PORT + i), controls[f.id], repr(f.start_s),
                             repr(f.stop_s if f.stop_s is not None else scenario.horizon_s),
                             str(f.bytes or 0))
                   for i, f in enumerate(flows)]
        for process in receivers + senders:
            _ready(process)
        epoch = repr(time.time() + 0.2)  # every sender's time zero
        for process in senders:
            assert process.stdin is not None
            process.stdin.write(epoch + "\n")
            process.stdin.flush()
        for process in senders + receivers:
            _finished(process, scenario.horizon_s + 30.0)
        time.sleep(_SETTLE_S)
        for process in capturing:
            process.send_signal(signal.SIGTERM)
            _finished(process, 10.0)
        notes = _notes(scenario, controls)
        (out / "testbed.json").write_text(json.dumps({
            "scenario": scenario.name, "congestion_control": controls,
            "captures": {h: p.name for h, p in captures.items()}, "notes": notes,
            "kernel": os.uname().release}, indent=2))
    final = Path(directory)
    return LinuxCapture(final, {h: final / p.name for h, p in captures.items()}, controls,
                        notes)


def _notes(scenario: Scenario, controls: dict[str, str]) -> list[str]:
    notes = [f"initial RTO: Linux's 1 s (the scenario's {scenario.tcp.initial_rto_s:g} s)",
             "loss recovery: Linux's (SACK with RACK and proportional rate reduction)"]
    if scenario.tcp.delack_count == 2:
        notes.append("delayed ACKs: Linux's (every second segment, quick ACKs at the start "
                     "and after a hole; its own timeout, not the scenario's "
                     f"{scenario.tcp.delack_timeout_s:g} s)")
    if "cubic" in controls.values():
        notes.append("CUBIC: Linux's, with HyStart")
    notes.append("socket buffers: Linux's autotuning (not the scenario's "
                 f"{scenario.tcp.snd_buf_bytes:,} and {scenario.tcp.rcv_buf_bytes:,} bytes)")
    return notes


class _Process(subprocess.Popen[str]):
    """A testbed process and the command line it says it runs."""

    def __init__(self, command: list[str]):
        super().__init__(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        self.command = " ".join(command[command.index(_HOSTS) + 1:])


class _Testbed:
    """The namespaces of one run: each node's name, address and interfaces."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.namespace: dict[str, str] = {}
        self.address: dict[str, str] = {}
        self.interfaces: dict[str, list[str]] = {}

    def start(self, node: str, *args: str) -> _Process:
        """The hosts' ``args`` command (:mod:`linux_hosts`) inside ``node``'s namespace."""
        return _Process(["ip", "netns", "exec", self.namespace[node], sys.executable, _HOSTS,
                         *args])


@contextmanager
def _testbed(scenario: Scenario, flows: Sequence[ConcreteFlow]) -> Iterator[_Testbed]:
    bed = _Testbed(f"tcpn{os.getpid()}")
    nodes = sorted({n for link in scenario.links for n in (link.a, link.b)})
    try:
        for k, node in enumerate(nodes):
            bed.namespace[node] = f"{bed.prefix}-{k}"
            bed.address[node] = f"10.88.255.{k + 1}"
            bed.interfaces[node] = []
            _ip("netns", "add", bed.namespace[node])
            _in(bed, node, "ip", "addr", "add", f"{bed.address[node]}/32", "dev", "lo")
            _in(bed, node, "ip", "link", "set", "lo", "up")
            _in(bed, node, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            _in(bed, node, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0")
            tcp = scenario.tcp
            for key, on in (("tcp_sack", tcp.sack), ("tcp_timestamps", tcp.timestamps),
                            ("tcp_window_scaling", tcp.window_scaling)):
                _in(bed, node, "sysctl", "-qw", f"net.ipv4.{key}={int(on)}")
        mtu = scenario.tcp.segment_size_bytes + 40 + scenario.tcp.options_bytes
        neighbour: dict[tuple[str, str], str] = {}
        for k, link in enumerate(scenario.links):
            ends = {link.a: f"l{k}a", link.b: f"l{k}b"}
            _ip("link", "add", ends[link.a], "netns", bed.namespace[link.a], "type", "veth",
                "peer", "name", ends[link.b], "netns", bed.namespace[link.b])
            for side, node in (("ab", link.a), ("ba", link.b)):
                other = link.b if node == link.a else link.a
                device = ends[node]
                bed.interfaces[node].append(device)
                _in(bed, node, "ip", "link", "set", device, "mtu", str(mtu), "up")
                _in(bed, node, "ip", "link", "set", "dev", device, "gso_max_segs", "1")
                subnet = f"10.{k // 250}.{k % 250}"
                _in(bed, node, "ip", "addr", "add", f"{subnet}.{1 + (node == link.b)}/30",
                    "dev", device)
                neighbour[(node, other)] = f"{subnet}.{1 + (other == link.b)}"
                if link.rate_bps < UNSHAPED_RATE_BPS:
                    queue = getattr(link, side).queue
                    frame = mtu + ETHERNET_BYTES
                    limit = queue.limit * (frame if queue.unit == "packets" else 1)
                    _in(bed, node, "tc", "qdisc", "add", "dev", device, "root", "tbf",
                        "rate", f"{int(link.rate_bps)}bit", "burst", str(frame),
                        "limit", str(limit))
        routed: set[tuple[str, str]] = set()
        for f in flows:
            for route, target in ((f.data_route, f.dst), (f.ack_route, f.src)):
                for here, there in itertools.pairwise(route):
                    if (here, target) in routed:
                        continue
                    routed.add((here, target))
                    options = []
                    if here == route[0]:
                        options = ["initcwnd", str(scenario.tcp.initial_cwnd_segments),
                                   "rto_min", f"{int(scenario.tcp.min_rto_s * 1000)}ms"]
                        if scenario.tcp.delack_count == 1:
                            options += ["quickack", "1"]
                    _in(bed, here, "ip", "route", "add", f"{bed.address[target]}/32", "via",
                        neighbour[(here, there)], "src", bed.address[here], *options)
        yield bed
    finally:
        for name in bed.namespace.values():
            for pid in subprocess.run(["ip", "netns", "pids", name], capture_output=True,
                                      text=True, check=False).stdout.split():
                subprocess.run(["kill", "-9", pid], capture_output=True, check=False)
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


def _in(bed: _Testbed, node: str, *command: str) -> None:
    _run("ip", "netns", "exec", bed.namespace[node], *command)


def _ip(*args: str) -> None:
    _run("ip", *args)


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InputError(f"{' '.join(command)}: {done.stderr.strip() or done.returncode}")


def _ready(process: _Process) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()
    if line.strip() != "ready":
        _, err = process.communicate(timeout=10)
        raise InputError(f"testbed process {process.command} failed: {err.strip()}")


def _finished(process: _Process, timeout_s: float) -> None:
    try:
        _, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        raise InputError(f"testbed process {process.command} did not end in {timeout_s:g} s"
                         ) from None
    if process.returncode != 0:
        raise InputError(f"testbed process {process.command} failed: {err.strip()}")
