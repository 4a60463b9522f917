"""Reading a P/T PNML: the whole-tree reader against the stream, CPU seconds and peak memory.

For a generated wide P/T file (``--places N``: a ring of N places and N transitions, one
token, written as the contest's files are, about 330 bytes a place; 100,000 places make
33 MB) and for contest instances (``--instances``, default the three largest P/T models of
``../shared/data/mcc``), each reader runs in a fresh process: ``full`` is
``read_pnml`` + ``pt_net`` (the contest's reading before the stream), ``stream`` is
``load_model`` (:func:`~tcpn.petrinets.exchange.pnml.ptstream.read_pt_stream` +
:func:`~tcpn.petrinets.checking.contest.examinations.pt_matrices`), ``arrays`` the stream
alone (without the explorer's matrices). Printed per file:
CPU seconds per MB (``time.process_time``) and the peak resident memory the reading added
(``ru_maxrss`` after it minus before it) as a multiple of the file's size, after checking
that both readers built the same matrices.

    python benchmarks/pnml_read.py --places 100000
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "mcc"


def write_ring(path: Path, n: int) -> None:
    """A ring of ``n`` places and transitions with one token, laid out as the contest's
    PNML files are (a name label per node, one arc element per arc)."""
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<pnml xmlns="http://www.pnml.org/'
                  'version-2009/grammar/pnml">\n  <net id="ring" type="http://www.pnml.org/'
                  'version-2009/grammar/ptnet">\n    <name><text>ring</text></name>\n'
                  '    <page id="page">\n')
        for i in range(n):
            marking = "<initialMarking><text>1</text></initialMarking>" if i == 0 else ""
            out.write(f'      <place id="p{i}"><name><text>p{i}</text></name>{marking}'
                      '</place>\n')
        for i in range(n):
            out.write(f'      <transition id="t{i}"><name><text>t{i}</text></name>'
                      '</transition>\n')
        for i in range(n):
            out.write(f'      <arc id="a{i}" source="p{i}" target="t{i}"><inscription>'
                      f'<text>1</text></inscription></arc>\n      <arc id="b{i}" '
                      f'source="t{i}" target="p{(i + 1) % n}"><inscription><text>1</text>'
                      '</inscription></arc>\n')
        out.write("    </page>\n  </net>\n</pnml>\n")


def worker(reader: str, path: str) -> None:
    """Read ``path`` with ``reader``; print CPU seconds, peak growth and a digest."""
    import resource
    import time

    from tcpn.petrinets.checking.contest.examinations import load_model
    from tcpn.petrinets.exchange.pnml import read_pnml
    from tcpn.petrinets.statespace.ptspace import pt_net

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    cpu = time.process_time()
    if reader == "full":
        imported = read_pnml(Path(path), max_bytes=10**9)
        net = imported.net
        matrices = pt_net(net, [imported.ids.get(f"place:{p}", p) for p in net.places],
                          [imported.ids.get(f"trans:{t}", t) for t in net.transitions])
    elif reader == "stream":
        matrices = load_model(path).net
    else:  # the stream's arrays alone, before the matrices
        from tcpn.petrinets.exchange.pnml.ptstream import read_pt_stream
        arrays = read_pt_stream(path, 10**9)
        seconds = time.process_time() - cpu
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"cpu_s": seconds, "peak_growth": peak - before,
                          "digest": str(arrays is not None)}))
        return
    seconds = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    digest = hashlib.sha256()
    for part in (matrices.places, matrices.transitions):
        digest.update("\n".join(part).encode())
    for m in (matrices.pre, matrices.post):
        for a in (m.indptr, m.indices, m.data):
            digest.update(a.astype("int64").tobytes())
    digest.update(matrices.initial.astype("int64").tobytes())
    print(json.dumps({"cpu_s": seconds, "peak_growth": peak - before,
                      "digest": digest.hexdigest()}))


def measure(reader: str, path: Path) -> dict:
    found = subprocess.run([sys.executable, __file__, "--worker", reader, str(path)],
                           capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(found.stdout.splitlines()[-1])


def largest_pt(count: int) -> list[str]:
    rows = [r for r in csv.DictReader((DATA / "index.csv").open()) if r["type"] == "PT"]
    rows.sort(key=lambda r: -int(r["model_pnml_bytes"]))
    return [r["instance"] for r in rows[:count]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--places", type=int, default=100_000)
    parser.add_argument("--instances", nargs="*", default=None)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        if args.places:
            ring = Path(tmp) / f"ring-{args.places}.pnml"
            write_ring(ring, args.places)
            files.append(ring)
        for instance in largest_pt(3) if args.instances is None else args.instances:
            with tarfile.open(DATA / "instances" / f"{instance}.tgz") as archive:
                archive.extractall(tmp, filter="data")
            files.append(Path(tmp) / instance / "model.pnml")
        print(f"{'file':<26} {'MB':>5} {'s/MB full':>9} {'stream':>6} {'arrays':>6} "
              f"{'peak/size full':>14} {'stream':>6} {'arrays':>6}")
        for path in files:
            size = path.stat().st_size
            full, stream = measure("full", path), measure("stream", path)
            arrays = measure("arrays", path)
            assert full["digest"] == stream["digest"], f"{path}: the readers differ"
            name = path.name if path.name != "model.pnml" else path.parent.name
            mb = size / 1e6
            print(f"{name[:26]:<26} {mb:>5.1f} {full['cpu_s'] / mb:>9.3f} "
                  f"{stream['cpu_s'] / mb:>6.3f} {arrays['cpu_s'] / mb:>6.3f} "
                  f"{full['peak_growth'] / size:>14.1f} {stream['peak_growth'] / size:>6.1f} "
                  f"{arrays['peak_growth'] / size:>6.1f}", flush=True)


if __name__ == "__main__":
    main()
