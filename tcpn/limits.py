"""Bounds on what tcpn reads and builds from a user's input, and the bounded file reader.

A scenario, a net file or a capture can ask for more than the machine has: a YAML alias
bomb, ten thousand flows, an initial marking of 10^12 tokens, a symlink to ``/dev/zero``.
tcpn reads and builds such input only up to the :class:`Limits` below and otherwise
refuses it with an :class:`~tcpn.errors.InputError` that gives the figures and the limit's
name. Raise a limit with :func:`set_limits` (or ``tcpn --limit NAME=VALUE`` on the command
line, or the environment variable ``TCPN_LIMITS="NAME=VALUE,..."``); a change is written to
``TCPN_LIMITS`` so that worker processes started afterwards apply it too. A leaf module like
:mod:`tcpn.errors`: every layer may use it.

>>> limits().marking_tokens
1000000
>>> previous = set_limits(marking_tokens=5)
>>> check_limit("marking_tokens", 6, "place p")
Traceback (most recent call last):
...
tcpn.errors.InputError: place p: 6 tokens is over the limit marking_tokens = 5 (raise it \
with --limit marking_tokens=N, or tcpn.limits.set_limits(marking_tokens=N))
>>> _ = set_limits(**vars(previous))
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tcpn.errors import InputError

__all__ = [
    "Limits", "UnreadableInput", "check_limit", "integer_digits_problem", "limit_problem",
    "limits", "parse_limit", "read_at_most", "read_input", "set_limits", "using_limits",
]


@dataclass(frozen=True)
class Limits:
    """What tcpn reads and builds from one input (``docs/scenarios.md``, "Limits")."""

    scenario_bytes: int = 1 << 20
    """Bytes of a scenario YAML file (the shipped ones are below 10 kB)."""
    yaml_nodes: int = 100_000
    """YAML nodes of a scenario once aliases are expanded (a shipped one has < 2,000)."""
    nesting_depth: int = 50
    """Levels of nesting in a scenario's YAML (one needs 6)."""
    flows: int = 1_000
    """TCP connections in one scenario (each flow's ``count`` summed)."""
    packet_hops: int = 1_000_000_000
    """Packets times hops a run may have to simulate, estimated before it starts from the
    horizon, the link rates and the routes (the reference dumbbell: 549,538)."""
    xml_depth: int = 200
    """Levels of nesting of the elements of a CPN Tools or PNML file (their own files have
    about 10; deeply nested PNML terms need more)."""
    net_file_bytes: int = 50 << 20
    """Bytes of a CPN Tools or PNML file (CPN Tools' own examples are below 1 MB)."""
    ml_file_bytes: int = 4 << 20
    """Bytes of the SML files a CPN Tools model loads with ``use`` from its own directory,
    all of them together, a file counted each time it is loaded (the libraries models of
    the field load are below 100 kB; ``use`` twice in each of eight nested files would
    otherwise read one file 256 times)."""
    marking_tokens: int = 1_000_000
    """Tokens in the initial marking of one place of an imported net, and tokens one arc of
    any net moves in one firing (its count, constant or computed, or a multiset's
    multiplicity): a timed place keeps one timestamp per token."""
    capture_bytes: int = 4 << 30
    """Bytes of a pcap capture."""
    import_evaluation_ms: int = 10_000
    """Milliseconds of computation that evaluating one value of an imported net may take
    (a CPN ML ``val``, a constant folded at import; the shipped files need under 10)."""
    import_evaluation_bytes: int = 2 << 30
    """Bytes of memory the process may grow by while it evaluates one value of an imported
    net (a CPN ML ``val``, a constant folded at import; ``val s = dbl (dbl (... "x"))``
    forty deep asks for a terabyte)."""
    stored_file_bytes: int = 1 << 30
    """Bytes of one file tcpn reads back from its own outputs: a report's stored table or
    ``manifest.json`` (``tcpn report --from``), an output directory's list of its files."""
    while_iterations: int = 1_000_000
    """Turns of one loop of an imported net's CPN ML: a ``while e1 do e2``, or a function
    that calls itself as a loop does (``fun f x = f x``; a walk down a list of
    ``list_length`` elements takes one turn more). In SML one that never ends runs forever;
    here it stops with an error naming this limit."""
    evaluation_steps: int = 1_000_000
    """Calls of an imported net's CPN ML functions plus turns of its loops in one
    evaluation (from the outermost call: a guard, an arc, a code action, a declared value).
    ``fun fib n = ... fib (n - 1) + fib (n - 2)`` on 60 would take 2^60 calls; the most
    any of 358 CPN Tools files from the field needed in its first 300 firings was 2,290.
    A call costs 10-40 microseconds, so one evaluation stops within a minute or so (at
    2 x 10^7, ``ack 4 2`` in an arc's delay would have run about 13 minutes: 10^6 steps
    took 40 s); no more than one loop's ``while_iterations``, whose turns are cheaper."""
    expression_depth: int = 100
    """Levels of nesting of a formula (CTL, LTL, ASK-CTL, a contest property), a CPN ML
    expression or a Python inscription. Their readers and the checker recurse over them:
    past a few hundred levels Python's stack runs out (the deepest formula of the contest's
    own property files has about 20)."""
    list_length: int = 1_000_000
    """Elements of one list (or characters of one string) an imported net's CPN ML makes:
    a ``List.tabulate``, what a function returns, a loop carries to its next turn or a
    reference cell is given (in SML ``List.tabulate`` of 10^9, or a string doubled 40
    times, runs out of memory; here it stops with an error naming this limit)."""
    call_depth: int = 1_000
    """Nested calls of an imported net's CPN ML functions (a recursion that is not a loop:
    ``fun f n = 1 + f (n - 1)`` on a list walk runs as a loop and needs none). In SML a
    recursion that never ends exhausts the stack; here it stops with an error naming this
    limit and the function, before Python's own stack runs out."""


_current: list[Limits] = []
_UNITS = {"scenario_bytes": "bytes", "yaml_nodes": "YAML nodes", "nesting_depth": "levels",
          "flows": "connections", "packet_hops": "packet-hops", "xml_depth": "levels",
          "net_file_bytes": "bytes", "ml_file_bytes": "bytes", "marking_tokens": "tokens",
          "capture_bytes": "bytes",
          "import_evaluation_ms": "milliseconds", "stored_file_bytes": "bytes",
          "import_evaluation_bytes": "bytes",
          "expression_depth": "levels", "while_iterations": "turns",
          "list_length": "elements", "call_depth": "nested calls",
          "evaluation_steps": "steps"}
#: Environment variable that carries changed limits to worker processes (and lets a user
#: set them without the command line): ``TCPN_LIMITS="flows=20000,packet_hops=1e10"``.
ENVIRONMENT = "TCPN_LIMITS"


def _from_environment() -> Limits:
    text = os.environ.get(ENVIRONMENT, "").strip()
    pairs = dict(parse_limit(item) for item in text.split(",") if item.strip())
    known = {f.name for f in dataclasses.fields(Limits)}
    unknown = sorted(set(pairs) - known)
    if unknown:
        raise InputError(f"{ENVIRONMENT}: unknown limit(s) {', '.join(unknown)}; the limits "
                         f"are {', '.join(sorted(known))}")
    return Limits(**pairs)


def _publish(current: Limits) -> None:
    changed = {f.name: getattr(current, f.name) for f in dataclasses.fields(Limits)
               if getattr(current, f.name) != f.default}
    if changed:
        os.environ[ENVIRONMENT] = ",".join(f"{k}={v}" for k, v in changed.items())
    else:
        os.environ.pop(ENVIRONMENT, None)


def limits() -> Limits:
    """The limits in force in this process (read from ``TCPN_LIMITS`` at first use)."""
    if not _current:
        _current.append(_from_environment())
    return _current[0]


def set_limits(**changes: int) -> Limits:
    """Change some limits for this process; returns the previous ones (to restore them).

    >>> old = set_limits(flows=20_000)
    >>> limits().flows
    20000
    >>> _ = set_limits(**vars(old))
    """
    known = {f.name for f in dataclasses.fields(Limits)}
    for name, value in changes.items():
        if name not in known:
            raise InputError(f"unknown limit {name!r}; the limits are {', '.join(sorted(known))}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"limit {name} must be a positive integer, got {value!r}")
    previous = limits()
    _current[0] = dataclasses.replace(previous, **changes)
    _publish(_current[0])  # worker processes started from now on inherit them
    return previous


@contextlib.contextmanager
def using_limits(**changes: int) -> Iterator[Limits]:
    """Change some limits inside a ``with`` block only.

    >>> with using_limits(flows=5000):
    ...     limits().flows
    5000
    >>> limits().flows
    1000
    """
    previous = set_limits(**changes)
    try:
        yield limits()
    finally:
        _current[0] = previous
        _publish(previous)


def parse_limit(text: str) -> tuple[str, int]:
    """``"NAME=VALUE"`` (VALUE a whole number, ``1e9`` allowed) as a pair.

    >>> parse_limit("flows=20000"), parse_limit("packet_hops=1e10")
    (('flows', 20000), ('packet_hops', 10000000000))
    """
    name, sep, value = text.partition("=")
    try:
        number = float(value) if sep else float("nan")
    except ValueError:
        number = float("nan")
    if not number.is_integer():
        raise InputError(f"--limit {text!r}: expected NAME=VALUE with a whole number, e.g. "
                         "flows=20000")
    return name.strip(), int(number)


def limit_problem(name: str, amount: int | float) -> str | None:
    """Why ``amount`` is over limit ``name`` (with the way to raise it), or None if it is not.

    >>> limit_problem("flows", 10)
    >>> limit_problem("flows", 10_000)
    '10,000 connections is over the limit flows = 1000 (raise it with --limit flows=N, or \
tcpn.limits.set_limits(flows=N))'
    """
    bound = getattr(limits(), name)
    if amount <= bound:
        return None
    shown = f"{amount:,}" if isinstance(amount, int) else f"{amount:.3g}"
    return (f"{shown} {_UNITS[name]} is over the limit {name} = {bound} (raise it with "
            f"--limit {name}=N, or tcpn.limits.set_limits({name}=N))")


def check_limit(name: str, amount: int | float, where: str) -> None:
    """Refuse ``amount`` of limit ``name`` at ``where`` when it is over the limit."""
    problem = limit_problem(name, amount)
    if problem is not None:
        raise InputError(f"{where}: {problem}")


def integer_digits_problem(text: str) -> str | None:
    """Why the integer written ``text`` cannot be read (more digits than Python converts,
    ``sys.get_int_max_str_digits()``: 4,300 by default), or None if it can.

    >>> integer_digits_problem("12")
    >>> integer_digits_problem("9" * 5000)
    'an integer of 5,000 digits (at most 4,300 are read)'
    """
    digits = sum(c.isdigit() for c in text)
    bound = sys.get_int_max_str_digits()
    if bound and digits > bound:
        return f"an integer of {digits:,} digits (at most {bound:,} are read)"
    return None


class LimitReached(InputError):
    """Input within its format but beyond one of tcpn's limits (a sort too large to list,
    an initial marking of too many tokens): a model checker answers CANNOT_COMPUTE naming
    the limit, where input outside the format is refused."""


class UnreadableInput(InputError):
    """A file :func:`read_input` refused: ``problem`` says why (missing, a FIFO, too big)."""

    def __init__(self, what: str, path: str | Path, problem: str):
        self.path, self.problem = str(path), problem
        super().__init__(f"cannot read {what} {path}: {problem}")


def read_input(path: str | Path, limit: str, what: str, bound: int | None = None) -> bytes:
    """The bytes of regular file ``path``, refused past limit ``limit`` (a :class:`Limits`
    field, or ``bound`` bytes when given); a FIFO, device or directory is refused without
    reading it (a FIFO would block, ``/dev/zero`` never ends). ``what`` names the file's
    role in messages. Raises :class:`UnreadableInput`.

    >>> read_input("/dev/zero", "scenario_bytes", "scenario")
    Traceback (most recent call last):
    ...
    tcpn.limits.UnreadableInput: cannot read scenario /dev/zero: not a regular file (a \
character device)
    """
    if bound is None:
        bound = int(getattr(limits(), limit))
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UnreadableInput(what, path, (exc.strerror or str(exc)).lower()) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnreadableInput(what, path, f"not a regular file ({_kind(mode)})")
    with os.fdopen(fd, "rb") as handle:
        data = read_at_most(handle, bound + 1)
    if len(data) > bound:
        raise UnreadableInput(what, path, f"{os.path.getsize(path):,} bytes, over the "
                              f"{bound}-byte limit {limit} (raise it with --limit {limit}=N, "
                              f"or tcpn.limits.set_limits({limit}=N))")
    return data


def read_at_most(handle: BinaryIO, size: int) -> bytes:
    """Up to ``size`` bytes of ``handle``, in chunks: ``read(size)`` would allocate all
    ``size`` bytes up front however short the file.

    >>> import io
    >>> read_at_most(io.BytesIO(b"abc"), 2)
    b'ab'
    """
    chunks: list[bytes] = []
    while size > 0:
        chunk = handle.read(min(size, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"
