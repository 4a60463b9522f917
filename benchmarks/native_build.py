"""Build time of the native engine: cold (an empty cache) and cached, per net.

For the three nets of ``engine_vs_snakes.py`` and the reference dumbbell's net lens net,
a fresh process builds the native modules into an empty cache directory (cold), then a
second fresh process finds them there (cached). Printed: the backend (``c``: one module,
the C engine of ``tcpn.petrinets.cnet``; ``cython``: one module per distinct transition
shape, plus the simulator loop), the modules, wall time and CPU time of the process and its
compiler children (``resource.getrusage``), which load disturbs less than wall time.

    .venv/bin/python benchmarks/native_build.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from engine_vs_snakes import NETS
from tcpn.models.lenses import make_run
from tcpn.models.scenario import load_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import compile_net
from tcpn.petrinets.native import build_native
name = sys.argv[2]
if name == "dumbbell":
    scenario = load_scenario(sys.argv[1] + "/scenarios/dumbbell_newreno.yaml")
    net = compose(scenario, make_run(scenario).flows).net
else:
    net = NETS[name](False)
compiled = compile_net(net)
def cpu():
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                   resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
wall, used = time.perf_counter(), cpu()
native = build_native(compiled)
print(json.dumps({"engine": native.engine, "backend": native.backend,
                  "reason": native.reason,
                  "transitions": len(compiled.transitions),
                  "wall_s": time.perf_counter() - wall, "cpu_s": cpu() - used}))
"""


def build(name: str, cache: str) -> dict[str, object]:
    env = {**os.environ, "TCPN_CACHE_DIR": cache}
    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), name], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    print("net | transitions | backend | modules | cold wall s | cold CPU s | cached wall s | "
          "cached CPU s")
    for name in ("counter", "tuple ring", "contention", "dumbbell"):
        with tempfile.TemporaryDirectory() as cache:
            cold, cached = build(name, cache), build(name, cache)
            if cold["reason"] is not None:
                print(f"{name}: not built: {cold['reason']}")
                continue
            modules = len(list((Path(cache) / "native").glob("*.so")))
            print(f"{name} | {cold['transitions']} | {cold['backend']} | {modules} | "
                  f"{cold['wall_s']:.1f} | "
                  f"{cold['cpu_s']:.1f} | {cached['wall_s']:.2f} | {cached['cpu_s']:.2f}")


if __name__ == "__main__":
    main()
