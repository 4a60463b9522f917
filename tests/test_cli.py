"""The ``tcpn`` command: help that teaches, one-line errors, exit codes that say what failed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from cli_process import run_tcpn as tcpn

from tcpn import __version__


def words(text: str) -> str:
    """``text`` without box drawing (Unicode or, in a non-UTF-8 locale, ASCII) and with
    single spaces: what a message says, however the terminal width wrapped its box."""
    return " ".join(re.sub(r"(?<=\s)[│|]|[│|](?=\s|$)", " ", text).split())


def test_version_and_help():
    done = tcpn("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"tcpn {__version__}"
    done = tcpn("--help")
    assert done.returncode == 0
    for command in ("demo", "run", "table", "validate", "optimize", "export", "import"):
        assert command in done.stdout


def test_python_dash_m_tcpn_is_the_same_command():
    path = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[1]),
                                       os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-m", "tcpn", "--version"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": path}, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == f"tcpn {__version__}"


def test_usage_errors_exit_2():
    assert tcpn("no-such-command").returncode == 2
    done = tcpn("demo", "--customers", "0")
    assert done.returncode == 2 and "--customers" in done.stderr
    for option, value in (("--customers", "1000000000000"), ("--horizon", "1e30")):
        done = tcpn("demo", option, value)  # bounded: refused, not run for ever
        assert done.returncode == 2 and option in done.stderr


def test_invalid_input_names_file_and_line_and_exits_3(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nlinks: []\nflows: []\nhorizon_s: -1\n")
    done = tcpn("run", str(bad), "-o", str(tmp_path / "out"))
    assert done.returncode == 3
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    # one line per problem, each naming the file and line, no traceback
    assert lines[0].startswith("tcpn: invalid input:")
    assert any("bad.yaml:4: horizon_s" in line for line in lines)
    assert all("bad.yaml:" in line for line in lines) and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_missing_file_is_invalid_input(tmp_path):
    done = tcpn("run", str(tmp_path / "nope.yaml"))
    assert done.returncode == 3 and "nope.yaml" in done.stderr


def test_demo_prints_a_result():
    done = tcpn("demo", "--customers", "500", "--seed", "3", "--horizon", "2")
    assert done.returncode == 0
    assert "customers served" in done.stdout and "500" in done.stdout
    assert "stopped: dead" in done.stdout
    # the dumbbell through both lenses: a row per flow and the aggregate
    assert "one scenario, 2 lenses" in done.stdout
    # a row per name, whatever box Rich draws (ASCII in a non-UTF-8 locale)
    assert all(re.search(rf"^\W+{row}\s", done.stdout, re.M) for row in ("f0", "f1", "all"))


def test_every_option_with_fixed_choices_is_a_usage_error_when_wrong(tmp_path):
    # the example: `--lens foo` exited 1 (a failure) where the README promises 2
    scenario = str(Path(__file__).parents[1] / "scenarios" / "dumbbell_newreno.yaml")
    out = str(tmp_path / "out")
    for args, option in ((["run", scenario, "--lens", "foo", "-o", out], "--lens"),
                         (["table", scenario, "--lens", "foo"], "--lens"),
                         (["validate", scenario, "--lenses", "net,foo", "-o", out], "--lenses"),
                         (["validate", scenario, "--reference", "foo", "-o", out],
                          "--reference"),
                         (["optimize", scenario, "--parameter", "k", "--low", "1", "--high",
                           "2", "-o", out], "--parameter"),
                         (["export", scenario, "--layout", "circle"], "--layout"),
                         (["export", scenario, "--net-type", "coloured"], "--net-type")):
        done = tcpn(*args)
        said = words(done.stderr)  # the box wraps to the width
        assert done.returncode == 2, (args, done.stderr)
        assert f"Invalid value for '{option}'" in said and "is not one of" in said
    assert not (tmp_path / "out").exists()


def test_a_terminal_without_utf8_gets_the_output_not_an_internal_error():
    for encoding in ("latin-1", "ascii"):
        done = subprocess.run([str(Path(sys.executable).parent / "tcpn"), "demo",
                               "--customers", "200", "--horizon", "1"],
                              capture_output=True, timeout=300,
                              env={**os.environ, "PYTHONIOENCODING": encoding,
                                   "COLUMNS": "60"})  # narrow: Rich cuts cells with "…"
        assert done.returncode == 0, done.stderr
        assert b"customers served" in done.stdout


def _commands(group, path=()):
    """Every command of the ``tcpn`` command tree with its words (``tcpn cache info``...)."""
    yield path, group
    for name, sub in getattr(group, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_help_paragraphs_wrap_to_the_terminal_not_to_the_source():
    """Each paragraph of every command's help is one line on a wide terminal: the source's
    line breaks (a docstring's) never show as ragged lines at another width."""
    import inspect

    import typer.main
    from typer.testing import CliRunner

    from tcpn.cli import app

    runner, seen = CliRunner(), 0
    for path, command in _commands(typer.main.get_command(app)):
        shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "2000"}, terminal_width=2000)
        assert shown.exit_code == 0, (path, shown.output)
        lines = [" ".join(line.split()) for line in shown.output.splitlines()]
        for paragraph in inspect.cleandoc(command.help or "").partition("\f")[0].split("\n\n"):
            joined = " ".join(paragraph.split())
            assert joined in lines, (path, joined[:60])
            seen += 1
    assert seen > 20
