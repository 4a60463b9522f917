"""Build time of the native engine: cold (an empty cache) and cached, per net.

For the three nets of ``engine_vs_snakes.py`` and the reference dumbbell's net lens net,
a fresh process builds the native modules into an empty cache directory (cold), then a
second fresh process finds them there (cached). Printed: the backend (``c``: one module,
the C engine of ``tcpn.petrinets.engine.cnet``; ``cython``: one module per distinct transition
shape, the simulator loop and Cython's shared utility code), the modules, wall time and
CPU time of the process and its compiler children (``resource.getrusage``), which load
disturbs less than wall time.

    .venv/bin/python benchmarks/native_build.py [--nets dumbbell] [--against 8a95597]
    .venv/bin/python benchmarks/native_build.py --modules

``--against REV`` builds with git revision ``REV``'s ``tcpn`` too (extracted with ``git
archive``), alternated with this tree's, each into its own empty cache: the before/after
table in one run. ``--modules`` breaks the dumbbell's cold build down per module in this
process: Cython's translation (CPU s), the lines of C, and gcc's CPU seconds at -O0, -O1
and -O2, with and without Cython's shared utility module.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NETS = ("counter", "tuple ring", "contention", "dumbbell")

CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from engine_vs_snakes import NETS
from tcpn.lenses import make_run
from tcpn.models.scenario import load_scenario
from tcpn.models.topology import compose
from tcpn.petrinets import compile_net
from tcpn.petrinets.engine.native import build_native
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


def build(tree: Path, name: str, cache: str) -> dict[str, object]:
    """One build of net ``name`` with ``tree``'s tcpn into ``cache``, in a fresh process."""
    env = {**os.environ, "TCPN_CACHE_DIR": cache, "PYTHONPATH": str(tree)}
    # in the tree: ``python -c`` puts the working directory first on the path
    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), name], env=env, cwd=tree,
                          capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def extract(revision: str, tmp: str) -> Path:
    """Git revision ``revision``'s ``tcpn`` package extracted into directory ``tmp``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tcpn"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    return Path(tmp)


def cold_and_cached(trees: dict[str, Path], nets: list[str], repeats: int) -> None:
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("tree | net | transitions | backend | modules | cold wall s | cold CPU s | "
          "cached wall s | cached CPU s")
    for name in nets:
        rows: dict[str, list[tuple[dict[str, object], dict[str, object], int]]] = {
            label: [] for label in trees}
        for _ in range(repeats):
            for label, tree in trees.items():  # alternated: load hits both alike
                with tempfile.TemporaryDirectory() as cache:
                    cold, cached = build(tree, name, cache), build(tree, name, cache)
                    modules = len(list((Path(cache) / "native").glob("*.so")))
                    rows[label].append((cold, cached, modules))
        for label, runs in rows.items():
            cold, _, modules = runs[0]
            if cold["reason"] is not None:
                print(f"{label} | {name}: not built: {cold['reason']}")
                continue

            def med(which: int, key: str, runs: list = runs) -> float:
                return statistics.median(float(r[which][key]) for r in runs)

            print(f"{label} | {name} | {cold['transitions']} | {cold['backend']} | {modules} | "
                  f"{med(0, 'wall_s'):.1f} | {med(0, 'cpu_s'):.1f} | "
                  f"{med(1, 'wall_s'):.2f} | {med(1, 'cpu_s'):.2f}")
    print(f"load average {os.getloadavg()[0]:.1f}")


def per_module() -> None:
    """The dumbbell's modules one by one: translation, C lines, gcc CPU s per level."""
    from tcpn.lenses import make_run
    from tcpn.models.scenario import load_scenario
    from tcpn.models.topology import compose
    from tcpn.petrinets import compile_net
    from tcpn.petrinets.engine import native
    from tcpn.petrinets.engine.cython_code import shapes

    scenario = load_scenario(ROOT / "scenarios" / "dumbbell_newreno.yaml")
    compiled = compile_net(compose(scenario, make_run(scenario).flows).net)
    bodies: dict[str, list[str]] = {}
    for transition in compiled.transitions:
        body, _values = shapes.transition_shape(transition,
                                               frozenset(compiled.keyed_places))
        bodies.setdefault(body, []).append(transition.name)
    sources = {"loop": native._loop_module()[0],
               **{f"shape{i}": shapes.shape_module(body) for i, body in enumerate(bodies)}}
    print(f"load average {os.getloadavg()[0]:.1f}; {len(compiled.transitions)} transitions, "
          f"{len(bodies)} shapes (transitions per shape: "
          f"{sorted((len(v) for v in bodies.values()), reverse=True)}), + the loop")
    compiler = native._compiler()
    assert compiler is not None
    include = sysconfig.get_paths()["include"]
    levels = ("-O0", "-O1", "-O2")

    def gcc(c_file: Path, level: str) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([*compiler, *native._CFLAGS, level, f"-I{include}", str(c_file), "-o",
                        str(c_file.with_suffix(".so"))], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)

    totals: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as work:
        shared_c = native._shared_c(Path(work) / "_tcpn_cyshared_b.c", "_tcpn_cyshared_b")
        print(f"Cython's shared utility module: {shared_c.read_text().count(chr(10))} lines "
              "of C, gcc CPU s " + ", ".join(f"{lv} {gcc(shared_c, lv):.2f}" for lv in levels))
        print("module | variant | Cython CPU s | C lines | " + " | ".join(
            f"gcc {lv} CPU s" for lv in levels))
        for name, source in sources.items():
            for variant, shared in (("own utility code", None),
                                    ("shared utility module", "_tcpn_cyshared_b")):
                pyx = Path(work) / f"{name}.pyx"
                pyx.write_text(source)
                started = time.process_time()
                c_file = native._cythonize(pyx, shared)
                cython_s = time.process_time() - started
                lines = c_file.read_text().count("\n")
                seconds = [gcc(c_file, level) for level in levels]
                print(f"{name} | {variant} | {cython_s:.2f} | {lines} | "
                      + " | ".join(f"{s:.2f}" for s in seconds), flush=True)
                for key, value in (("cython", cython_s), ("lines", lines),
                                   *zip(levels, seconds, strict=True)):
                    totals[f"{variant}: {key}"] = totals.get(f"{variant}: {key}", 0) + value
    for key, value in totals.items():
        print(f"total {key}: {value:,.1f}")
    print(f"load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nets", default=",".join(NETS),
                        help=f"comma-separated, of: {', '.join(NETS)}")
    parser.add_argument("--against", metavar="REV", help="git revision built too, alternated")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--modules", action="store_true",
                        help="the dumbbell's cold build per module and gcc level")
    args = parser.parse_args()
    if args.modules:
        per_module()
        return
    nets = [n.strip() for n in args.nets.split(",") if n.strip()]
    unknown = set(nets) - set(NETS)
    if unknown:
        parser.error(f"unknown nets {sorted(unknown)}: choose among {', '.join(NETS)}")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        if args.against:
            trees[args.against] = extract(args.against, tmp)
        cold_and_cached(trees, nets, args.repeats)


if __name__ == "__main__":
    main()
