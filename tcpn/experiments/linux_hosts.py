"""The processes of :mod:`tcpn.experiments.linux_testbed` inside its network namespaces,
run by path (``python linux_hosts.py COMMAND ...``) with the standard library alone, so
that each starts at once however loaded the machine is:

* ``capture IFACE... PATH``: every frame of the interfaces into a nanosecond pcap at
  ``PATH`` (Ethernet, the first 128 bytes of each: every header), kernel timestamps,
  until SIGTERM; it fails if the kernel dropped a frame;
* ``receive ADDRESS PORT``: accept one connection and read it to its end;
* ``send ADDRESS DESTINATION PORT CONTROL START STOP BYTES``: read the common time zero
  (epoch seconds) from standard input, connect at zero + ``START`` with the congestion
  control ``CONTROL`` and send until zero + ``STOP`` or ``BYTES`` bytes (0: no limit).

Each prints ``ready`` once it can take its part.
"""

from __future__ import annotations

import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Sequence

#: Bytes of each frame kept: every header, options included.
SNAP_BYTES = 128
_ETH_P_ALL = 0x0003
_SO_TIMESTAMPNS = 35
_SOL_PACKET = 263
_PACKET_STATISTICS = 6


def capture(interfaces: Sequence[str], path: str) -> None:
    """See the module docstring (frames kept in memory until SIGTERM: 128 bytes each)."""
    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    sockets = []
    for name in interfaces:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
        s.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        s.bind((name, 0))
        s.setblocking(False)
        sockets.append(s)
    frames = []
    print("ready", flush=True)
    while not stop:
        readable, _, _ = select.select(sockets, [], [], 0.05)
        for s in readable:
            while True:
                try:
                    data, ancillary, _, _ = s.recvmsg(1 << 16, socket.CMSG_SPACE(16))
                except BlockingIOError:
                    break
                sec, nsec = next((struct.unpack("qq", d[:16]) for level, kind, d in ancillary
                                  if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS),
                                 divmod(time.time_ns(), 10**9))
                frames.append((sec, nsec, data[:SNAP_BYTES], len(data)))
    dropped = sum(struct.unpack("II", s.getsockopt(_SOL_PACKET, _PACKET_STATISTICS, 8))[1]
                  for s in sockets)
    if dropped:
        raise SystemExit(f"the kernel dropped {dropped} captured frame(s)")
    frames.sort(key=lambda f: (f[0], f[1]))
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, SNAP_BYTES, 1))
        for sec, nsec, data, length in frames:
            out.write(struct.pack("<IIII", sec, nsec, len(data), length) + data)


def receive(address: str, port: int) -> None:
    """See the module docstring."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((address, port))
    server.listen(1)
    print("ready", flush=True)
    connection, _ = server.accept()
    while connection.recv(1 << 16):
        pass


def send(address: str, destination: str, port: int, control: str, start_s: float,
         stop_s: float, size: int) -> None:
    """See the module docstring."""
    client = socket.socket()
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, control.encode())
    client.bind((address, 0))
    print("ready", flush=True)
    zero = float(sys.stdin.readline())
    time.sleep(max(0.0, zero + start_s - time.time()))
    client.connect((destination, port))
    client.settimeout(0.05)
    block = bytes(1 << 16)
    sent = 0
    while time.time() < zero + stop_s and (size == 0 or sent < size):
        try:
            sent += client.send(block if size == 0 else block[:size - sent])
        except TimeoutError:
            continue
    client.close()


def main(argv: Sequence[str]) -> None:
    """Run one command of the module docstring."""
    command, *args = argv
    if command == "capture":
        capture(args[:-1], args[-1])
    elif command == "receive":
        receive(args[0], int(args[1]))
    elif command == "send":
        send(args[0], args[1], int(args[2]), args[3], float(args[4]), float(args[5]),
             int(args[6]))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
