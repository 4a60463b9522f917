"""Linux's Reno (``variant: linux_reno``, ns-3.44's ``TcpLinuxReno``): growth counted in
acknowledged segments, and ssthresh half the window, in the net lens against ns-3.

One flow, 10 Mbit/s bottleneck with a 60-packet drop-tail buffer, about 42 ms of round
trip, delayed ACKs (two segments per ACK), 4 s: a slow start that overflows the buffer,
then congestion avoidance with one loss per sawtooth.
"""

from __future__ import annotations

import numpy as np
import pytest

from tcpn.lenses import evaluate
from tcpn.models.components.congestion.linux_reno import LinuxReno, linux_reno_grow
from tcpn.models.scenario import validate_scenario

MSS = 1448
INSTANTS_S = (0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 3.9)


def _scenario(variant: str):
    return validate_scenario({
        "name": "linux_reno", "horizon_s": 4.0, "seed": 1,
        "links": [{"a": "A", "b": "R", "rate_bps": 1e9, "delay_s": 0.001},
                  {"a": "R", "b": "B", "rate_bps": 1e7, "delay_s": 0.02,
                   "queue": {"kind": "drop_tail", "limit": 60}}],
        "tcp": {"delack_count": 2, "initial_cwnd_segments": 10},
        "flows": [{"id": "f", "src": "A", "dst": "B", "variant": variant}]})


def _windows(lens: str, variant: str) -> tuple[list[float], int]:
    result = evaluate(_scenario(variant), lens, seed=1)
    series = result.trace.flow_series
    cwnd = series[series["var"] == "cwnd_bytes"]
    events = result.trace.flow_events
    return ([float(np.interp(t, cwnd.time_s, cwnd.value)) / MSS for t in INSTANTS_S],
            int((events.event == "retransmit").sum()))


def test_linux_reno_counts_acknowledged_segments():
    """Slow start adds what an ACK covers (a delayed ACK of two: two segments), up to
    ssthresh; congestion avoidance one segment per trunc(cwnd) acknowledged segments."""
    assert linux_reno_grow(LinuxReno(0, 0.0), 10.0, 64.0, 2).window == 12.0
    assert linux_reno_grow(LinuxReno(0, 0.0), 63.0, 64.0, 2).window == 64.0
    c, cwnd = LinuxReno(0, 0.0), 20.0
    for _ in range(10):  # 10 delayed ACKs of 2 segments: one window of 20
        c = linux_reno_grow(c, cwnd, 10.0, 2)
        cwnd = c.window
    assert cwnd == 21.0


@pytest.mark.ns3
def test_the_window_follows_ns3s_tcp_linux_reno():
    """Every sample of the window within 0.05 segment of ns-3's, the same retransmissions;
    NewReno's window grows by half as much in slow start (0.3 s: about 28 against 90)."""
    from tcpn.lenses.ns3.loader import installed

    if not installed():
        pytest.skip("pip install 'tcpn[ns3]'")
    net, net_resent = _windows("net", "linux_reno")
    ns3, ns3_resent = _windows("ns3", "linux_reno")
    assert net == pytest.approx(ns3, abs=0.05) and net_resent == ns3_resent
    newreno, _ = _windows("net", "newreno")
    assert net[1] > 2.5 * newreno[1]
