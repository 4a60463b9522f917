"""Real Linux TCP between network namespaces (``tcpn.experiments.linux_testbed``): the
captures it writes are read by the capture lens, and the net lens is judged against them.

One flow through a 10 Mbit/s token bucket with a 50-packet drop-tail limit, no propagation
delay (the testbed does not drive netem), Linux's reno (tcpn's ``linux_reno``) and cubic.
The physical checks do not depend on tcpn's model: the link's rate shows in the receiver's
capture, every segment a Linux sender captures itself carries a checksum left to its card.
The net lens's goodput is judged against the capture (the capture lens's figure, 5 %); the
retransmissions are not asserted: a real kernel's vary from run to run, and HyStart
(CUBIC) is not tcpn's rule (docs/validation.md, "Real Linux TCP").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_process import run_tcpn

from tcpn.errors import InputError
from tcpn.experiments.linux_testbed import capture_linux, linux_problems, testbed_problem
from tcpn.lenses import evaluate
from tcpn.models.pcap import read_pcap
from tcpn.models.scenario import dumbbell, load_scenario, validate_scenario

MSS = 1448
#: Payload bytes per second a 10 Mbit/s token bucket passes: 1448 of every 1514-byte frame.
PAYLOAD_RATE_BPS = 10e6 * MSS / (MSS + 52 + 14)


#: A full frame's time on the 10 Mbit/s bucket (1514 bytes on the wire).
FRAME_S = (MSS + 52 + 14) * 8 / 10e6

TESTBED = Path(__file__).resolve().parent.parent / "scenarios" / "testbed"


def stalled_link_s(sent: Any, received: Any, window: tuple[float, float],
                   frame_s: float) -> float:
    """Seconds of ``window`` in which the bottleneck held a packet and passed nothing.

    A data packet that reached the receiver at ``t`` and had left the sender before the
    previous arrival ``t0`` was queued at the bucket all through ``(t0, t)``: a link with
    a backlog passes a frame every ``frame_s``, so a gap over two frames is the host's
    stall (its watchdog fired late), not TCP's; it counts ``t - t0 - frame_s``. The
    captures share the host's clock (one kernel, several namespaces). Each arrival is
    matched to the latest copy of its sequence number the sender captured before it.

    >>> import pandas as pd
    >>> s = pd.DataFrame({"time_s": [0.0, 0.0, 0.0], "seq": [1, 2, 3],
    ...                   "payload_bytes": [10, 10, 10]})
    >>> r = pd.DataFrame({"time_s": [1.0, 2.0, 2.5], "seq": [1, 2, 3],
    ...                   "payload_bytes": [10, 10, 10]})
    >>> stalled_link_s(s, r, (0.0, 3.0), frame_s=0.1)
    1.3
    """
    data_sent = sent[sent.payload_bytes > 0].sort_values("time_s", kind="stable")
    data = received[(received.payload_bytes > 0) & (received.time_s >= window[0])
                    & (received.time_s < window[1])].sort_values("time_s", kind="stable")
    copies = {seq: group.time_s.to_numpy() for seq, group in data_sent.groupby("seq")}
    stalled = 0.0
    arrivals = data.time_s.to_numpy()
    for previous, now, seq in zip(arrivals[:-1], arrivals[1:], data.seq.to_numpy()[1:],
                                  strict=True):
        times = copies.get(seq)
        if times is None or now - previous <= 2 * frame_s:
            continue
        left = times[times <= now]
        if len(left) and left[-1] < previous:  # queued before the previous frame left
            stalled += now - previous - frame_s
    return round(float(stalled), 9)


def _scenario(variant: str) -> Any:
    return load_scenario(TESTBED / f"linux_{variant}.yaml")


def test_what_the_testbed_cannot_build_is_refused_naming_the_field() -> None:
    problems = linux_problems(dumbbell(pairs=1, variant="vegas", horizon_s=5.0))
    assert any(p.startswith("links[0].delay_s: 0.02 s") for p in problems)
    assert any(p.startswith("flows[0].variant: Linux has no 'vegas'") for p in problems)
    lossy = _scenario("reno").model_dump(exclude_unset=True)
    lossy["links"][1]["errors"] = {"kind": "rate", "unit": "packet", "rate": 0.01}
    lossy["flows"][0]["start_s"] = {"dist": "uniform", "low_s": 0.0, "high_s": 1.0}
    problems = linux_problems(validate_scenario(lossy))
    assert "links[1].ab.errors: the testbed loses no packet on purpose" in problems
    assert any(p.startswith("flows[0].start_s: a random start time") for p in problems)
    assert linux_problems(_scenario("cubic")) == []
    with pytest.raises(InputError, match=r"cannot build it: .*flows\[0\]\.variant"):
        capture_linux(dumbbell(pairs=1, variant="vegas", horizon_s=5.0), "/nonexistent/x")


def test_a_stall_is_a_wait_with_a_backlog_and_not_a_gap_of_tcp() -> None:
    import pandas as pd

    sent = pd.DataFrame({"time_s": [0.0, 0.0, 0.0, 2.55], "seq": [1, 2, 3, 4],
                         "payload_bytes": [10, 10, 10, 10]})
    received = pd.DataFrame({"time_s": [1.0, 2.0, 2.5, 2.9], "seq": [1, 2, 3, 4],
                             "payload_bytes": [10, 10, 10, 10]})
    # 2 and 3 waited at the bucket through their gaps (0.9 + 0.4 s); 4 left the sender
    # after 3 arrived, so the link had nothing to send before it (a gap of TCP's)
    assert stalled_link_s(sent, received, (0.0, 3.0), frame_s=0.1) == pytest.approx(1.3)
    assert stalled_link_s(sent, received, (1.5, 3.0), frame_s=0.1) == pytest.approx(0.4)


needs_testbed = pytest.mark.skipif(testbed_problem() is not None,
                                   reason=f"no Linux testbed here: {testbed_problem()}")


@needs_testbed
@pytest.mark.parametrize(("variant", "linux"), [("reno", "reno"), ("cubic", "cubic")])
def test_linux_tcp_through_the_token_bucket_and_the_net_lens_against_it(
        variant: str, linux: str, tmp_path: Path) -> None:
    """tcpn's ``linux_reno`` (ns-3's ``TcpLinuxReno``) runs as the kernel's ``reno``."""
    scenario = _scenario(variant)
    made = capture_linux(scenario, tmp_path / "linux")
    assert json.loads((made.directory / "testbed.json").read_text())["congestion_control"] \
        == {"f0": linux}
    sent, received = (read_pcap(made.captures[host]) for host in ("S", "D"))
    # a Linux sender's own capture: checksums left to the card, none refused
    assert sent.attrs["checksum_offloaded"] > 0 and not sent.attrs["skipped"].get(
        "TCP checksum does not match the segment")
    data = received[received.payload_bytes > 0]
    start = float(data.time_s.min())
    steady = data[(data.time_s >= start + 1.0) & (data.time_s < start + 3.0)]
    # the bucket's rate is the spacing it gives back-to-back full segments: the median gap.
    # A window's mean rate is not the link's: a loaded host fires the qdisc's watchdog late
    # and stalls the link for a while (one CI run: 8.87 Mbit/s over the window, 7 % low),
    # a stall that lengthens few gaps and so leaves the median where the bucket puts it
    gap_s = float(np.median(np.diff(steady.time_s.to_numpy())))
    assert MSS * 8 / gap_s == pytest.approx(PAYLOAD_RATE_BPS, rel=0.03)
    # and the bucket passes no more than its rate over the window (its burst is one frame)
    assert steady.payload_bytes.sum() * 8 / 2.0 <= PAYLOAD_RATE_BPS * 1.01

    capture = evaluate(scenario, "capture", sender=made.captures["S"],
                       receiver=made.captures["D"])
    net = evaluate(scenario, "net", seed=1)
    linux_goodput = capture.summary["flows"]["f0"]["goodput_bps"]
    # The net lens's link never stalls; the host's can (above). Judge TCP over the time
    # the link ran: the capture's goodput scaled by window / (window - stalled time).
    syn_s = float(sent[(sent["flags"] & 0x02) > 0].time_s.min())
    window = (syn_s + scenario.measure.warmup_s, syn_s + scenario.horizon_s)
    stalled_s = stalled_link_s(sent, received, window, FRAME_S)
    ran_s = window[1] - window[0] - stalled_s
    assert ran_s > 0.5 * (window[1] - window[0]), f"the host stalled the link {stalled_s} s"
    linux_running = linux_goodput * (window[1] - window[0]) / ran_s
    assert net.summary["flows"]["f0"]["goodput_bps"] == pytest.approx(linux_running, rel=0.05), (
        f"Linux {linux_goodput / 1e6:.3f} Mbit/s over the window, the link stalled "
        f"{stalled_s * 1e3:.1f} ms of it")


@needs_testbed
def test_tcpn_testbed_writes_the_captures_and_never_replaces_a_users_directory(
        tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    scenario = str(TESTBED / "linux_cubic.yaml")
    refused = run_tcpn("testbed", scenario, "-o", str(mine), "--overwrite")
    assert refused.returncode == 3 and (mine / "notes.txt").read_text() == "keep me"
    done = run_tcpn("testbed", scenario, "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "note: CUBIC: Linux's, with HyStart" in done.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()
                  if not p.name.startswith(".")) == ["D.pcap", "S.pcap", "testbed.json"]
