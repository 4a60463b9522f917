"""The native engine: a compiled net's generated code built into a C extension with Cython.

:mod:`~tcpn.petrinets.engine.compiler` generates Python source per transition (``enumerate``,
``enumerate_due``, ``fire``, ``fire_tracked``, ``gate``); this module builds, with Cython
and the machine's C compiler, one module per transition *shape* (the code with its place
indices taken out, shared by the transitions and nets that have it), one of the
simulator's hot loop (``Simulator.loop``) and one of Cython's utility code that the
others import, and swaps their functions in. The code is the same code, compiled: the
Python engine stays the reference, and the same seed gives the same firing sequence
(``tests/test_native.py`` compares them firing by firing). A net in the C engine's typed
subset runs on :mod:`tcpn.petrinets.engine.cnet` instead (one module).

Each transition's globals (declarations, colour sets, distributions, code actions) keep
their Python objects: its shape's factory receives them, but for the plain functions of
tcpn's own modules among them (code actions, the component helpers they call), which one
more module per net compiles and the factory receives instead (:mod:`.twins`).
Transitions that differ only in their guards (a TCP sender's ACK transitions) get one
more module per group, one ``enumerate_due`` for them all that the loop calls once per
refresh (:mod:`.groups`). A transition whose code Cython rejects stays in Python
(``NativeNet.fallbacks`` names it and the line of its code that Cython refused, which
holds the inscription; its group, if any, is not used); without
Cython or a C compiler the whole net does (``NativeNet.reason``), and ``engine="auto"``,
the simulator's default, says so in one line, once per machine. ``auto`` builds the
modules a net needs that are missing, all of them, then runs them: a TCP scenario's net
needs 12 to 46, about a minute of CPU the first time (:func:`build_nets` builds those of
many nets at once, as ``tcpn build`` and the studies do before their runs).

Builds are cached in the user's cache directory (``TCPN_CACHE_DIR`` or the platform's,
e.g. ``~/.cache/tcpn/native``), keyed by the module source and the versions of Python,
Cython and the compiler with its flags. The missing modules are built in parallel, one
process per core this process may use (:func:`build_workers`), each in a private
temporary directory and renamed into place (a library appears whole or not at all, so
no process loads a half-written one), with one progress line (modules done of the total,
seconds); one build runs at a time per cache directory (a file lock), so processes that
start together build each module once. The cache is bounded (``$TCPN_NATIVE_CACHE_MB``,
1024 MB unless set; :data:`tcpn.petrinets.engine.caches.NATIVE`): a build holds it in
use from looking its modules up until they are loaded, and trims its least recently
used entries when it ends.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import inspect
import io
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache, partial
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

from tcpn.petrinets.engine.caches import NATIVE
from tcpn.petrinets.engine.codecache import cache_root, derived_cached, file_digest, function_key
from tcpn.petrinets.engine.compiler import CompiledNet
from tcpn.petrinets.engine.cython_code import twins
from tcpn.petrinets.engine.cython_code.groups import find_groups, group_source
from tcpn.petrinets.engine.cython_code.plain_code import plain_definition
from tcpn.petrinets.engine.cython_code.shapes import (
    HEADER,
    shape_module,
    stored_shape_of,
    transition_shape,
)
from tcpn.petrinets.errors import InputError

__all__ = ["ENGINES", "BuildSummary", "NativeNet", "NativeUnavailable",
           "build_compiled_python", "build_native", "build_nets", "build_workers",
           "resolve_engine", "select_engine", "why_unavailable"]

ENGINES = ("python", "native", "auto")
#: the simulator's engine when neither ``engine`` nor ``$TCPN_ENGINE`` names one: native,
#: its missing modules built on first use, else Python saying why (figures:
#: benchmarks/README.md, "Native engine")
SIMULATOR_DEFAULT = "auto"
ENGINE_VARIABLE = "TCPN_ENGINE"
#: ``auto``'s cost model for a run whose firings are bounded in advance (``tcpn simulate
#: --max-firings``): the Python engine's time per firing, taken at the slow end (TCP nets,
#: about 50-100 us; the CPN Tools samples 9-15 us, measured on 2 cores under load), and a
#: module's build time per build process (2.4-2.8 s measured on the samples); a run
#: whose firings take less in Python than building its missing modules runs in Python
AUTO_PYTHON_FIRING_S = 1e-4
AUTO_BUILD_MODULE_S = 2.5
#: a directory shared by a command's processes (the CLI sets it): a notice is said once in it
NOTICES_VARIABLE = "TCPN_NOTICES_DIR"
_log = logging.getLogger("tcpn.native")
#: what the user should see: a first build's progress, why ``auto`` runs Python (the
#: command line shows these lines on stderr)
_notice = logging.getLogger("tcpn.native.notice")
_BUILDING = threading.Lock()


class NativeUnavailable(RuntimeError):
    """``engine="native"`` was asked for where it cannot be built (no Cython, no compiler)."""


@dataclass
class NativeNet:
    """The outcome of a native build: the net to run and what stayed in Python."""

    compiled: CompiledNet
    #: the simulator's hot loop compiled (``None``: the whole net stays in Python)
    loop: Any = None
    #: why the whole net stays in Python (``None`` when it was built)
    reason: str | None = None
    #: transition name -> why it stays in Python
    fallbacks: dict[str, str] = field(default_factory=dict)
    #: ``"c"``: the C engine of ``tcpn.petrinets.engine.cnet`` runs the net; ``"cython"``: the
    #: generated Python code compiled
    backend: str = "cython"
    #: why the C engine does not run the net (the element outside its subset)
    c_reason: str | None = None

    @property
    def engine(self) -> str:
        """``"native"`` when the compiled module runs, else ``"python"``."""
        return "python" if self.loop is None else "native"


def resolve_engine(engine: str | None, default: str = "python") -> str:
    """``engine``, else ``$TCPN_ENGINE``, else ``default``; checked against :data:`ENGINES`.

    The simulator's default is :data:`SIMULATOR_DEFAULT`; the state-space explorer's
    stays ``"python"``.

    >>> resolve_engine("auto")
    'auto'
    """
    chosen = engine if engine is not None else os.environ.get(ENGINE_VARIABLE) or default
    if chosen not in ENGINES:
        origin = "engine" if engine is not None else f"${ENGINE_VARIABLE}"
        raise InputError(f"{origin}={chosen!r}: choose one of {', '.join(ENGINES)}")
    return chosen


def cache_dir() -> Path:
    """Where built modules live: ``$TCPN_CACHE_DIR/native`` or the user cache directory."""
    root = cache_root()
    if root is None:  # build_native asks why_unavailable first, which names platformdirs
        raise NativeUnavailable("platformdirs is not installed (pip install 'tcpn[native]')")
    return root / "native"


def _compiler() -> list[str] | None:
    """The C compiler command (``$CC`` or Python's build configuration), if installed."""
    command = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if not command or shutil.which(command[0]) is None:
        return None
    return command


@cache
def _compiler_version(program: str) -> str:
    done = subprocess.run([program, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.splitlines()[0] if done.stdout else program


# -- source -------------------------------------------------------------------------------


def _loop_source() -> tuple[str, dict[str, Any]]:
    """``Simulator.loop`` as a module-level function, and the globals it reads."""
    from tcpn.petrinets.engine.simulator import Simulator

    function = Simulator.loop
    key = function_key(function)
    if key is None or None in _LOOP_DERIVING:  # a file unread: derived without the cache
        source, used = _derived_loop(function)
    else:  # kept in the code cache: parsing the loop costs more than the rest of a setup
        source, used = derived_cached("loop", (*key, *map(str, _LOOP_DERIVING)),
                                      lambda: _derived_loop(function))
    return source, {n: v for n, v in function.__globals__.items() if n in used}


def _derived_loop(function: Callable[..., Any]) -> tuple[str, tuple[str, ...]]:
    """:func:`_loop_source` computed: the source, and the names it reads."""
    tree = plain_definition(ast.parse(textwrap.dedent(inspect.getsource(function))))
    definition = tree.body[0]
    assert isinstance(definition, ast.FunctionDef)
    definition.name, definition.decorator_list = "_loop", []
    if isinstance(definition.body[0], ast.Expr):  # the docstring
        definition.body.pop(0)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    head, body = ast.unparse(tree).split("\n", 1)
    stored = {n.id for n in ast.walk(definition)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    declarations = [f"    cdef {kind} {', '.join(sorted(names & stored))}"
                    for kind, names in _LOOP_TYPES.items() if names & stored]
    return "\n".join([head, *declarations, body]), tuple(sorted(used))


#: the code that derives the loop's source: this module's (:data:`_LOOP_TYPES`) and the
#: modules of :func:`plain_definition` and :data:`HEADER`
_LOOP_DERIVING = tuple(file_digest(path) for path in (
    __file__, sys.modules[plain_definition.__module__].__file__ or "",
    sys.modules[transition_shape.__module__].__file__ or ""))


#: C types for the loop's locals that always hold them: indices and counts as C
#: integers, the containers as exact list, set and tuple (Cython then indexes them
#: directly); a value of another type would raise, not go wrong, and the equality tests
#: run the loop on every kind of net
_LOOP_TYPES = {
    "Py_ssize_t": {"u", "p", "k", "fired", "total", "firings", "best", "t", "g", "v", "i",
                   "advanced"},
    "double": {"now", "horizon", "at", "opens", "best_time", "best_priority", "priority",
               "floor"},
    "bint": {"tied", "simple", "gated", "grouped", "clocked"},
    "double[::1]": {"earliest", "priorities"},
    "long[::1]": {"gate_of", "group_of", "stamps"},
    "list": {"bindings", "marking", "counts", "enumerate_fns", "fire_fns",
             "required", "group_fns", "group_members", "stash",
             "masked", "gate_fns", "members", "cuts", "gate_ready",
             "group_sum", "before", "after", "found", "chosen", "by_mask"},
    "set": {"live"},
    "tuple": {"todo", "binding", "body_affected", "gate_affected", "gate_cut", "results",
              "clock_readers"},
}


#: the loop's per-transition numbers in typed arrays, which ``_LOOP_TYPES`` reads as C
#: arrays (the Python engine keeps a list and a tuple: ``simulator._float_array`` and
#: ``_int_array``); measured: -5.9 % of a 100 Mbit/s run (native)
_LOOP_ARRAYS = {"_float_array": partial(array, "d"), "_int_array": partial(array, "l")}


_HEADER = HEADER
#: the loop's directives: its own code indexes its lists, tuples and arrays only with
#: transition, place and gate numbers of the net (never negative: ``gate_of``'s ``-1``
#: is tested before it indexes) and with ``0`` on non-empty lists, so Cython reads the
#: items in place, without a bounds test or a call (the transitions' code, which holds
#: the user's inscriptions, keeps Python's indexing: :data:`_HEADER`)
_LOOP_HEADER = _HEADER.replace("\n", ", boundscheck=False, wraparound=False\n")


@cache
def _loop_module() -> tuple[str, dict[str, Any]]:
    """The loop's module source (its globals as placeholders) and those globals."""
    loop, loop_globals = _loop_source()
    # module-level names for the loop's globals, set after import
    placeholders = "".join(f"{name} = None\n" for name in sorted(loop_globals))
    return _LOOP_HEADER + placeholders + loop + "\n", loop_globals


# -- building -----------------------------------------------------------------------------
class _CythonRejected(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(line, message)
        self.line, self.message = line, message


#: the flags of every module; the optimisation level comes with the compiler command
_CFLAGS = ("-shared", "-fPIC", "-w")
#: the optimisation of the transition shapes, most of a first build; measured on the
#: reference dumbbell's 45 modules (benchmarks/README.md, Session 7): -O0 builds in 28 s
#: of CPU but runs 2.1x slower than the Python engine, -O1 in 64 s and -O2 in 105 s, the
#: warm run equal within 3 % (1.05 and 1.02 s against Python's 1.54 s)
_SHAPE_OPTIMISATION = ("-O1",)
#: the loop's and Cython's shared utility code's, built once per machine, and the C
#: engine's modules (``tcpn.petrinets.engine.cnet``: their generated C is the engine)
_HOT_OPTIMISATION = ("-O2",)
_ERROR_LINE = re.compile(r"^[^\n:]*\.pyx:(\d+):\d+: (.*)$", re.MULTILINE)
_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def _library(source: str, kind: str, compiler: list[str], imports: str = "") -> Path:
    """Where the shared library built from ``source`` lives in the cache; ``imports``:
    the module of Cython's utility code it imports (part of the key)."""
    key = _key(f"{imports}\0{source}" if imports else source, tuple(compiler))
    return cache_dir() / f"_tcpn_{kind}_{key}{_SUFFIX}"


def _cythonize(pyx: Path, shared: str | None = None) -> Path:
    """``pyx`` translated to C (in this process: Cython's start-up would cost more);
    ``shared``: the module holding Cython's utility code (:func:`_shared_library`)."""
    from Cython.Compiler.Main import CompilationOptions, compile_single, default_options

    output = io.StringIO()
    c_file = pyx.with_suffix(".c")
    options = CompilationOptions(default_options, language_level=3, output_file=str(c_file),
                                 shared_utility_qualified_name=shared)
    with contextlib.redirect_stderr(output), contextlib.redirect_stdout(output):
        result = compile_single(str(pyx), options, pyx.stem)
    if result.num_errors:
        found = _ERROR_LINE.findall(output.getvalue())
        if not found:
            raise NativeUnavailable(f"Cython failed: {output.getvalue().strip()[-400:]}")
        raise _CythonRejected(int(found[0][0]), found[0][1])
    return c_file


#: the source of Cython's shared utility module (:func:`_shared_library`): no ``.pyx``
_SHARED_SOURCE = "cython generate-shared"


def _shared_c(c_file: Path, name: str) -> Path:
    """Cython's shared utility module ``name`` generated into ``c_file``."""
    from Cython.Build.SharedModule import generate_shared_module
    from Cython.Compiler.Main import CompilationOptions, default_options

    output = io.StringIO()
    options = CompilationOptions(default_options, language_level=3,
                                 shared_c_file_path=str(c_file), module_name=name)
    with contextlib.redirect_stderr(output), contextlib.redirect_stdout(output):
        errors, _ = generate_shared_module(options)
    if errors or not c_file.exists():
        raise NativeUnavailable(f"Cython failed: {output.getvalue().strip()[-400:]}")
    return c_file


def _shared_library(compiler: list[str]) -> Path:
    """Where the module of Cython's utility code for ``compiler`` lives in the cache.

    Each Cython module carries its own copy of Cython's utility code (function objects,
    argument parsing, exception helpers): 7,000 of the 15,000 to 20,000 lines of C of a
    transition shape, about a fifth of its compile time (measured, benchmarks/README.md,
    Session 7). The shape and loop modules import these functions from one shared module
    instead, built once per Cython version, compiler and flags (its name carries the key).
    """
    return _library(_SHARED_SOURCE, "cyshared", compiler)


@dataclass(frozen=True)
class _Module:
    """One module of the native engine: its library in the cache, its Cython source (or
    :data:`_SHARED_SOURCE`), the compiler command with its flags, the link flags, and the
    module of Cython's utility code it imports (``None``: its own)."""

    library: Path
    source: str
    compiler: tuple[str, ...]
    libraries: tuple[str, ...] = ()
    shared: str | None = None


def _compile_c(c_file: Path, module: _Module) -> None:
    include = sysconfig.get_paths()["include"]
    built = c_file.with_name(module.library.name)
    gcc = subprocess.run([*module.compiler, *_CFLAGS, f"-I{include}", str(c_file), "-o",
                          str(built), *module.libraries],
                         capture_output=True, text=True, check=False)
    if gcc.returncode != 0:
        raise NativeUnavailable(f"the C compiler failed: {gcc.stderr.strip()[-400:]}")
    # atomic: the library appears whole or not at all (a concurrent build of the same key
    # writes equal bytes), so no process loads a half-written one
    os.replace(built, module.library)


def _build_one(work: str, module: _Module) -> _CythonRejected | None:
    """Translates ``module`` with Cython and compiles it into the cache (in a build
    worker, or in this process); returns Cython's rejection, if it rejected it."""
    stem = module.library.name.split(".")[0]
    try:
        with _BUILDING:  # Cython's compiler keeps global state: one at a time here
            if module.source == _SHARED_SOURCE:
                c_file = _shared_c(Path(work) / f"{stem}.c", stem)
            else:
                pyx = Path(work) / f"{stem}.pyx"
                pyx.write_text(module.source)
                c_file = _cythonize(pyx, module.shared)
    except _CythonRejected as exc:
        return exc
    _compile_c(c_file, module)
    return None


#: library -> why its build failed in this process (the compiler's or Cython's error): a
#: study runs many nets per worker process, which do not try the same build again
_FAILED: dict[Path, str] = {}


def build_workers() -> int:
    """The processes a build runs at once: the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _build(modules: list[_Module], what: str = "",
           progress: Callable[[int, int], None] | None = None,
           ) -> tuple[dict[Path, _CythonRejected], int]:
    """Builds the ``modules`` missing from the cache; returns those Cython rejected, and
    how many were built.

    Each missing module is translated by Cython and compiled by the C compiler in one of
    :func:`build_workers` processes (:mod:`tcpn.workers`: they end with this one), a
    progress line counting them (and ``progress(done, total)`` called). One build runs at
    a time per cache directory, across processes too (a file lock), so that processes
    starting together (a sweep's workers, a parallel test run) do not compile the same
    modules twice: the second waits and finds them built. Each library is compiled in a
    private directory and renamed into place.
    """
    if all([NATIVE.used(m.library) for m in modules]):  # each found one marked used
        return {}, 0
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    rejected: dict[Path, _CythonRejected] = {}
    with _cache_lock(directory):
        # another process may have built some meanwhile
        missing = [m for m in modules if not m.library.exists()]
        if not missing:
            return {}, 0
        failed = next((_FAILED[m.library] for m in missing if m.library in _FAILED), None)
        if failed is not None:  # tried in this process: the compiler fails again
            raise NativeUnavailable(failed)
        started = time.perf_counter()
        total = len(missing)
        workers = min(total, build_workers())

        def said(done: int) -> None:
            _notice.info("native engine: building %d module%s%s (first use; cached in %s): "
                         "%d of %d, %.0f s", total, "" if total == 1 else "s",
                         f" for {what}" if what else "", directory, done, total,
                         time.perf_counter() - started, extra={"progress": done})
            if progress is not None:
                progress(done, total)

        said(0)
        built = 0

        def gathered(index: int, refused: _CythonRejected | None) -> None:
            nonlocal built
            if refused is not None:
                rejected[missing[index].library] = refused
            built += 1
            said(built)

        with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as work:
            try:
                if workers <= 1:
                    for index, module in enumerate(missing):
                        gathered(index, _build_one(work, module))
                else:
                    from tcpn.workers import run_in_workers

                    run_in_workers(_build_one, [(work, m) for m in missing], workers,
                                   gathered)
            except NativeUnavailable as exc:
                _FAILED.update((m.library, str(exc)) for m in missing)
                raise
        _notice.info("native engine: built %d module%s in %.1f s (%d process%s)", total,
                     "" if total == 1 else "s", time.perf_counter() - started, workers,
                     "" if workers == 1 else "es")
    return rejected, total


@contextlib.contextmanager
def _cache_lock(directory: Path) -> Iterator[None]:
    """Holds the cache directory's build lock (``flock`` on ``.build.lock``), saying so
    when another process holds it; without ``fcntl`` (not POSIX) builds are not
    serialised across processes (they stay safe: each renames its own files in)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(directory / ".build.lock", "a+b") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _notice.info("native engine: waiting for another process's build in %s",
                         directory)
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _load(library: Path) -> ModuleType:
    name = library.name.split(".")[0]
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, library)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


@lru_cache(maxsize=4096)
def _key(source: str, compiler: tuple[str, ...]) -> str:
    import Cython

    digest = hashlib.sha256()
    for part in (source, sys.version, Cython.__version__, sysconfig.get_platform(),
                 " ".join(compiler), _compiler_version(compiler[0]), " ".join(_CFLAGS)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:24]


def why_unavailable() -> str | None:
    """Why no native module can be built on this machine (``None``: it can)."""
    for package in ("Cython", "platformdirs"):
        if importlib.util.find_spec(package) is None:
            return f"{package} is not installed (pip install 'tcpn[native]')"
    if _compiler() is None:
        return ("no C compiler found ($CC or Python's, e.g. gcc: "
                "sudo apt-get install gcc python3-dev)")
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "Python's headers (Python.h) are missing (sudo apt-get install python3-dev)"
    return None


def _c_module(source: str, flags: tuple[str, ...], libraries: tuple[str, ...]) -> _Module:
    """The module of the C engine's Cython ``source`` (``tcpn.petrinets.engine.cnet``)."""
    compiler = _compiler()
    assert compiler is not None
    command = (*compiler, *_HOT_OPTIMISATION, *flags)
    return _Module(_library(source, "cnet", list(command)), source, command, libraries)


@NATIVE.holding
def build_module(source: str, flags: tuple[str, ...],
                 libraries: tuple[str, ...]) -> ModuleType | str:
    """Build (or fetch from the cache) the module of Cython ``source`` compiled with
    ``flags`` and linked with ``libraries``; a string says why it could not be built."""
    module = _c_module(source, flags, libraries)
    try:
        rejected, _ = _build([module])
    except NativeUnavailable as exc:
        return str(exc)
    if module.library in rejected:
        return f"Cython rejected the C engine's module: {rejected[module.library].message}"
    return _load(module.library)


@NATIVE.holding
def build_compiled_python(source: str, kind: str) -> ModuleType | str:
    """Build (or fetch from the cache) the module of Python ``source`` compiled by Cython
    as the loop is (the same code, Cython's utility code its own), named
    ``_tcpn_<kind>_<key>``; a string says why it could not be built."""
    reason = why_unavailable()
    if reason is not None:
        return reason
    compiler = _compiler()
    assert compiler is not None
    command = (*compiler, *_HOT_OPTIMISATION)
    module = _Module(_library(source, kind, list(command)), source, command)
    try:
        rejected, _ = _build([module], what=f"the {kind} module")
    except NativeUnavailable as exc:
        return str(exc)
    if module.library in rejected:
        return f"Cython rejected the {kind} module: {rejected[module.library].message}"
    return _load(module.library)


class _Planned(Exception):
    """The C engine's module a net needs, caught on its way to be built (:func:`_plan`)."""

    def __init__(self, module: _Module):
        super().__init__(module)
        self.module = module


@dataclass
class _Plan:
    """The modules the native engine runs a net on, built or not: the C engine's one, or
    Cython's (shared utility code, the loop, the transition shapes), with each
    transition's shape module and values and why the C engine does not run the net."""

    modules: list[_Module]
    loop: Path | None = None
    shapes: dict[str, tuple[_Module, dict[str, Any]]] = field(default_factory=dict)
    c_reason: str | None = None
    #: the compiled twins of the functions the shapes call (:mod:`.twins`): their module,
    #: the functions and the globals to set in it
    twins: tuple[_Module, list[FunctionType], dict[str, Any]] | None = None
    #: the guard partitions enumerated together (:mod:`.groups`): each group's members,
    #: module and values
    groups: list[tuple[tuple[int, ...], _Module, dict[str, Any]]] = field(default_factory=list)


def _plan(compiled: CompiledNet) -> _Plan:
    """The modules ``compiled`` runs on (:func:`build_nets`; no compiler runs here)."""
    from tcpn.petrinets.engine.cnet import build_cnet

    def planned(source: str, flags: tuple[str, ...], libraries: tuple[str, ...]) -> Any:
        raise _Planned(_c_module(source, flags, libraries))

    try:
        c_reason = build_cnet(compiled, planned)
    except _Planned as found:
        return _Plan([found.module])
    assert isinstance(c_reason, str)  # ``planned`` never returns: the net is outside
    return _cython_plan(compiled, c_reason)


def _cython_plan(compiled: CompiledNet, c_reason: str) -> _Plan:
    """The Cython modules of ``compiled``, a net outside the C engine for ``c_reason``."""
    compiler = _compiler()
    assert compiler is not None
    hot = (*compiler, *_HOT_OPTIMISATION)
    per_shape = (*compiler, *_SHAPE_OPTIMISATION)
    shared_library = _shared_library(list(hot))
    shared = shared_library.name.split(".")[0]
    loop_source, _ = _loop_module()
    loop = _Module(_library(loop_source, "loop", list(hot), shared_library.name), loop_source,
                   hot, shared=shared)
    keyed = frozenset(compiled.keyed_places)
    shapes = {}
    for transition in compiled.transitions:
        body, values = transition_shape(transition, keyed)
        source = shape_module(body)
        library = _library(source, "shape", list(per_shape), shared_library.name)
        shapes[transition.name] = (_Module(library, source, per_shape, shared=shared), values)
    groups = []
    for members, body, values in _group_shapes(compiled, keyed):
        source = shape_module(body)
        library = _library(source, "shape", list(per_shape), shared_library.name)
        groups.append((members, _Module(library, source, per_shape, shared=shared), values))
    functions = twins.gather(v for _, values in (*shapes.values(), *((m, v) for _, m, v in groups))
                             for v in values.values())
    twin_module = None
    if functions:
        twins_source, reads = twins.twins_source(functions, _HEADER)
        twin_module = (_Module(_library(twins_source, "twins", list(hot), shared_library.name),
                               twins_source, hot, shared=shared), functions, reads)
    modules = {m.library: m for m in (_Module(shared_library, _SHARED_SOURCE, hot), loop,
                                      *(m for m, _ in shapes.values()),
                                      *(m for _, m, _ in groups),
                                      *([twin_module[0]] if twin_module else []))}
    return _Plan(list(modules.values()), loop.library, shapes, c_reason, twin_module, groups)


def _group_shapes(compiled: CompiledNet, keyed: frozenset[int]
                  ) -> list[tuple[tuple[int, ...], str, dict[str, Any]]]:
    """Per guard partition of ``compiled`` (:func:`.groups.find_groups`): its members,
    its ``_enumerate_due`` as a factory body (a transition shape's, see
    :func:`~tcpn.petrinets.engine.cython_code.shapes.transition_shape`) and the values
    the factory reads."""
    found = []
    for members in find_groups(compiled):
        source, namespace = group_source(compiled, members)
        leader = compiled.transitions[members[0]]
        records = set.intersection(*(set(compiled.transitions[t].records) for t in members))
        body, used, constants = stored_shape_of(
            source, frozenset(namespace), frozenset(keyed) & {*leader.reads_places},
            tuple(sorted(records)))
        found.append((members, body,
                      {n: constants[n] if n in constants else namespace[n] for n in used}))
    return found


@NATIVE.holding
def build_native(compiled: CompiledNet) -> NativeNet:
    """Build (or fetch from the cache) the native modules of ``compiled``.

    Returns the net to run: the C engine (``backend="c"``) when the whole net is in its
    typed subset; else ``compiled`` itself with ``reason`` set when nothing could be
    built, else a copy whose transitions run the compiled functions (those Cython
    rejected keep theirs, see ``fallbacks``), with ``c_reason`` naming what kept the net
    from the C engine.
    """
    reason = why_unavailable()
    if reason is not None:
        return NativeNet(compiled, reason=reason)
    from tcpn.petrinets.engine.cnet import build_cnet

    engine = build_cnet(compiled, build_module)
    if not isinstance(engine, str):
        return NativeNet(compiled, loop=engine.loop, backend="c")
    _log.info("net %s: not in the C engine's subset, the compiled Python runs it: %s",
              compiled.net.name, engine)
    plan = _cython_plan(compiled, engine)
    try:
        rejected, _ = _build(plan.modules, what=f"net {compiled.net.name}")
    except NativeUnavailable as exc:
        return NativeNet(compiled, reason=str(exc), c_reason=engine)
    assert plan.loop is not None
    if plan.loop in rejected:
        return NativeNet(compiled, reason=f"Cython rejected the loop: "
                                          f"{rejected[plan.loop].message}", c_reason=engine)
    _load(plan.modules[0].library)  # Cython's utility functions, which the others import
    loop = _load(plan.loop)
    _, loop_globals = _loop_module()
    vars(loop).update(loop_globals)
    vars(loop).update(_LOOP_ARRAYS)
    # the functions the transitions call, compiled (the Python ones where Cython refused)
    twin_of: dict[int, Any] = {}
    if plan.twins is not None and plan.twins[0].library not in rejected:
        twin_of = twins.twins_of(_load(plan.twins[0].library), plan.twins[1], plan.twins[2])
    transitions = []
    fallbacks: dict[str, str] = {}
    for transition in compiled.transitions:
        module, values = plan.shapes[transition.name]
        if module.library in rejected:
            why = rejected[module.library]
            line = module.source.splitlines()[why.line - 1].strip()
            fallbacks[transition.name] = f"Cython rejects {line!r}: {why.message}"
            _log.warning("native engine: transition %s stays in Python: %s",
                         transition.name, fallbacks[transition.name])
            transitions.append(transition)
            continue
        made = _load(module.library).make({name: twin_of.get(id(value), value)
                                           for name, value in values.items()})
        transitions.append(replace(
            transition, enumerate_due=made["_enumerate_due"],
            fire_tracked=made["_fire_tracked"], gate=made.get("_gate")))
    groups: list[tuple[Any, tuple[int, ...]]] = []
    group_of = [-1] * len(transitions)
    for members, module, values in plan.groups:
        if module.library in rejected or any(transitions[t] is compiled.transitions[t]
                                             for t in members):  # a member stays Python
            continue
        made = _load(module.library).make({name: twin_of.get(id(value), value)
                                           for name, value in values.items()})
        for t in members:
            group_of[t] = len(groups)
        groups.append((made["_enumerate_due"], members))
    native = replace(compiled, transitions=tuple(transitions), enumerate_groups=tuple(groups),
                     group_of=tuple(group_of) if groups else ())
    if "fingerprint" in compiled.__dict__:  # the same net: its fingerprint, known already
        native.__dict__["fingerprint"] = compiled.__dict__["fingerprint"]
    return NativeNet(native, loop=loop._loop, fallbacks=fallbacks, c_reason=engine)


@dataclass(frozen=True)
class BuildSummary:
    """What :func:`build_nets` did: the modules the nets need, how many it built (the
    others were cached), its wall time, the processes it used, and why nothing could be
    built (``reason``; ``None``: the compiler ran or had nothing to do)."""

    nets: int
    modules: int
    built: int
    wall_s: float
    workers: int
    reason: str | None = None

    def text(self) -> str:
        """One line for the user.

        >>> BuildSummary(3, 40, 12, 21.04, 2).text()
        'native engine: 3 nets need 40 modules: 12 built in 21.0 s (2 processes), 28 were cached'
        >>> BuildSummary(1, 40, 0, 0.52, 0).text()
        'native engine: 1 net needs 40 modules, all cached (0.5 s)'
        """
        if self.reason is not None:
            return (f"native engine: nothing built, the nets will run in Python: "
                    f"{self.reason}")
        plural, verb = ("", "s") if self.nets == 1 else ("s", "")
        if not self.built:
            return (f"native engine: {self.nets} net{plural} need{verb} {self.modules} "
                    f"modules, all cached ({self.wall_s:.1f} s)")
        return (f"native engine: {self.nets} net{plural} need{verb} {self.modules} modules: "
                f"{self.built} built in {self.wall_s:.1f} s ({self.workers} process"
                f"{'' if self.workers == 1 else 'es'}), {self.modules - self.built} were "
                "cached")


@NATIVE.holding
def build_nets(nets: Iterable[CompiledNet], what: str = "",
               progress: Callable[[int, int], None] | None = None) -> BuildSummary:
    """Build the native modules every one of ``nets`` runs on that the cache lacks, all
    in one parallel build (:func:`build_workers` processes, one progress line); loads
    nothing. Runs of these nets then find their modules built: what ``tcpn build`` and
    the studies do before their runs. ``progress(done, total)``: called as modules are
    built, besides the progress line.

    A module Cython rejects is left out (the run names its transition); a failing
    compiler raises :class:`NativeUnavailable`; without a compiler nothing is built and
    ``reason`` says why.
    """
    started = time.perf_counter()
    found = list(nets)
    reason = why_unavailable()
    if reason is not None:
        return BuildSummary(len(found), 0, 0, 0.0, 0, reason)
    modules = {m.library: m for net in found for m in _plan(net).modules}
    _, built = _build(list(modules.values()), what, progress)
    return BuildSummary(len(found), len(modules), built, time.perf_counter() - started,
                        min(built, build_workers()) if built else 0)


def select_engine(compiled: CompiledNet, engine: str | None,
                  default: str = "python", firings: int | None = None) -> NativeNet:
    """The net to run for ``engine`` (see :func:`resolve_engine`, which ``default``
    goes to).

    ``"python"``: ``compiled`` as it is; ``"native"``: the built module, or
    :class:`NativeUnavailable` saying why it cannot be built; ``"auto"``: the built module
    (the missing modules built then, in parallel, a progress line saying so), else
    ``compiled``, with a line saying why: once per machine where no compiler (or Cython)
    is installed, once per command where a build failed, and where ``firings`` (a bound
    on the firings the command will run on the net) take less in Python than building
    what is missing (:data:`AUTO_PYTHON_FIRING_S`, :data:`AUTO_BUILD_MODULE_S`).
    """
    chosen = resolve_engine(engine, default)
    if chosen == "python":
        return NativeNet(compiled, reason="engine='python'")
    built = compiled.selected.get(chosen)
    if built is not None:  # a net run many times in one process looks its modules up once
        return built
    unavailable = why_unavailable()
    short = None if unavailable is not None or chosen != "auto" or firings is None \
        else _quicker_in_python(compiled, firings)
    if unavailable is not None:
        native = NativeNet(compiled, reason=unavailable)
    elif short is not None:
        if _first_said(compiled.net.name, short, short):
            _notice.info("net %s runs in Python: %s", compiled.net.name, short)
        return NativeNet(compiled, reason=short)
    else:
        native = build_native(compiled)
    if native.reason is None:
        compiled.selected[chosen] = native
    if native.reason is not None:
        if chosen == "native":
            raise NativeUnavailable(f"net {compiled.net.name}: the native engine cannot be "
                                    f"built: {native.reason}")
        if unavailable is not None:
            if _first_said(compiled.net.name, unavailable, unavailable, machine=True):
                _notice.info("the native engine cannot be built, nets run in Python: %s "
                             "(said once on this machine; `tcpn build` checks again)",
                             unavailable)
        elif _first_said(compiled.net.name, native.reason, native.reason):
            _notice.info("net %s runs in Python: %s", compiled.net.name, native.reason)
    return native


def _quicker_in_python(compiled: CompiledNet, firings: int) -> str | None:
    """Why ``firings`` firings of ``compiled`` should run in Python (a sentence), or None
    when its modules are built or building them costs less than the run."""
    missing = sum(not m.library.exists() for m in _plan(compiled).modules)
    if not missing:
        return None
    build_s = missing * AUTO_BUILD_MODULE_S / min(missing, build_workers())
    if firings * AUTO_PYTHON_FIRING_S >= build_s:
        return None
    return (f"a run of at most {firings} firings takes less in Python than building its "
            f"{missing} native module{'s' if missing > 1 else ''} (about {build_s:.0f} s; "
            "`tcpn build NET` builds them, `tcpn --engine native` asks for them)")


#: the (net, reason) pairs ``auto`` has already said it runs in Python for
_SAID: set[tuple[str, str]] = set()


def _first_said(net_name: str, reason: str, kind: str, machine: bool = False) -> bool:
    """Whether ``auto`` says for the first time that ``net_name`` runs in Python for
    ``reason``: once per process and net; when ``$TCPN_NOTICES_DIR`` names a directory
    the processes of a command share (the CLI's: a report's or a sweep's workers), once
    per command for each ``kind`` of reason, the first process to say it leaving a file
    there: a study report runs some 70 nets, one line tells why; with ``machine``, once
    per cache directory (a file in its ``notices``): a machine without a compiler is told
    once, not at every command."""
    if (net_name, reason) in _SAID:
        return False
    _SAID.add((net_name, reason))
    root = cache_root() if machine else None
    shared = str(root / "notices") if root is not None else os.environ.get(NOTICES_VARIABLE)
    if not shared:
        return True
    key = hashlib.sha256(kind.encode()).hexdigest()[:32]
    try:
        if root is not None:
            Path(shared).mkdir(parents=True, exist_ok=True)
        os.close(os.open(Path(shared) / key, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False  # another process (of the command, or earlier) said it
    except OSError:  # the directory is gone (the command ended) or not writable: say it
        return True
    return True
