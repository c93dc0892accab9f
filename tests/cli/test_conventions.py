"""What a support engineer expects of a command line: the verdict first, --brief, colour only
where it belongs, --help with examples and exit codes everywhere, documented exit codes, --debug
after the command, --since/--until, decode line's grep-like exit."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "samples" / "demo-sosreport"
HEALTHY = REPO / "samples" / "benign-noise-healthy"
STATUS_LINE = re.compile(r"^(FAILURE|DEGRADED|SUSPECT|UNEXPLAINED|INCONCLUSIVE|HEALTHY): \S")


def run(*args, env=None):
    return CliRunner().invoke(main, [str(arg) for arg in args], env=env)


def run_in_terminal(args: list[str], env: dict | None = None, stdout_terminal: bool = True) -> tuple[int, bytes, bytes]:
    """Run diagdisk in a fresh process whose stderr (and stdout, unless told) is a pseudo-terminal:
    (exit code, what the terminal received, what went to the stdout pipe)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 wide
    environment = {**os.environ, "DIAGDISK_PROGRESS_DELAY": "0", "TERM": "xterm", "COLUMNS": "100", **(env or {})}
    if "NO_COLOR" not in (env or {}):
        environment.pop("NO_COLOR", None)
    with tempfile.TemporaryFile() as stdout:
        process = subprocess.Popen([sys.executable, "-m", "diagdisk", *args], stdin=subprocess.DEVNULL,
                                   stdout=terminal if stdout_terminal else stdout, stderr=terminal,
                                   env=environment, cwd=REPO)
        os.close(terminal)
        received = bytearray()
        while True:
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not data:
                break
            received += data
        code = process.wait(timeout=120)
        os.close(controller)
        stdout.seek(0)
        return code, bytes(received), stdout.read()


# -- the verdict first ------------------------------------------------------------------------------


def test_the_first_line_is_the_verdict_and_the_reasons_follow_wrapped():
    result = run("analyze", DEMO)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("FAILURE: Replace disk 2:0:2:0 (sdc")
    assert re.search(r", confidence 0\.\d\d$", lines[0])   # the weighing's probability of the part
    reasons = lines[1:lines.index("")]
    assert reasons[0].startswith("  - medium errors reported by the disk")
    assert all(line.startswith(("  - ", "    ")) and len(line) <= 100 for line in reasons)


def test_brief_prints_the_verdict_line_only():
    result = run("analyze", DEMO, "--brief")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [run("analyze", DEMO).stdout.splitlines()[0]]
    healthy = run("analyze", HEALTHY, "--brief").stdout
    assert healthy.startswith("HEALTHY: No storage fault found in ") and healthy.count("\n") == 1


def test_brief_is_for_the_text_report():
    result = run("analyze", DEMO, "--brief", "--format", "json")
    assert result.exit_code == ExitCode.BAD_INPUT


def test_json_and_html_carry_the_same_verdict_first():
    (report,) = json.loads(run("analyze", DEMO, "--format", "json").stdout)["reports"]
    assert list(report)[5:7] == ["verdict", "coverage"]   # after schema, tool, input, generated, host
    assert list(report["verdict"])[:4] == ["status", "summary", "headline", "reasons"]
    assert report["verdict"]["headline"].startswith("Replace disk 2:0:2:0")


# -- colour ------------------------------------------------------------------------------------------


def test_color_always_colours_the_status_and_the_severities():
    text = run("analyze", DEMO, "--color", "always").stdout
    assert text.startswith("\x1b[1;31mFAILURE\x1b[0m: Replace disk")
    assert "\x1b[1;31mcritical\x1b[0m" in text


@pytest.mark.parametrize("args, env", [(["--color", "never"], {}), ([], {}), ([], {"NO_COLOR": "1"})])
def test_no_colour_in_a_pipe_with_never_or_no_color(args, env):
    assert "\x1b" not in run("analyze", DEMO, *args, env=env).stdout


def test_auto_colours_a_terminal_unless_no_color_is_set():
    _, coloured, _ = run_in_terminal(["analyze", str(DEMO), "--brief", "--quiet"])
    assert b"\x1b[1;31mFAILURE\x1b[0m" in coloured
    _, plain, _ = run_in_terminal(["analyze", str(DEMO), "--brief", "--quiet"], env={"NO_COLOR": "1"})
    assert plain.startswith(b"FAILURE: ") and b"\x1b[" not in plain


# -- help --------------------------------------------------------------------------------------------


def _all_commands(group: click.Group, ctx: click.Context, prefix=()):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _all_commands(command, ctx, (*prefix, name))


def test_every_help_has_examples_and_exit_codes():
    commands = [((), main), *_all_commands(main, click.Context(main))]
    assert len(commands) >= 12
    for path, _ in commands:
        result = run(*path, "--help")
        assert result.exit_code == 0, path
        assert "Examples:" in result.stdout, f"diagdisk {' '.join(path)} --help has no examples"
        assert "Exit codes:" in result.stdout, f"diagdisk {' '.join(path)} --help lists no exit codes"


def test_analyze_help_documents_every_exit_code_it_uses():
    text = run("analyze", "--help").stdout
    for code in ExitCode:
        assert re.search(rf"^\s+{int(code)}\s", text, re.M), f"exit code {int(code)} not in analyze --help"


# -- exit codes ----------------------------------------------------------------------------------------


def test_fail_on_outcomes_are_told_apart(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("How to use this folder.\nNothing here is a log.\n")
    assert run("analyze", DEMO, "--fail-on", "high").exit_code == ExitCode.FINDINGS
    assert run("analyze", HEALTHY, "--fail-on", "high").exit_code == ExitCode.OK
    assert run("analyze", readme, "--fail-on", "high").exit_code == ExitCode.INCONCLUSIVE
    assert run("analyze", readme).exit_code == ExitCode.OK   # without --fail-on: analyzed


def test_debug_is_taken_after_the_command_too():
    assert run("analyze", DEMO, "--brief", "--debug").exit_code == 0
    assert run("decode", "line", "sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]", "--debug").exit_code == 0
    assert run("rules", "list", "--debug").exit_code == 0


def test_a_closed_pipe_is_no_error():
    done = subprocess.run(f"{sys.executable} -m diagdisk rules list | head -2", shell=True, capture_output=True,
                          text=True, cwd=REPO)
    assert done.stdout.splitlines()[1].startswith("DD") and done.stderr == ""   # under the header


# -- decode line: grep's convention ------------------------------------------------------------------


def test_decode_line_exits_1_when_nothing_matched():
    matched = run("decode", "line", "sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]")
    assert matched.exit_code == 0 and "kind=sense" in matched.stdout
    missed = run("decode", "line", "systemd[1]: Started Session 4 of user root.")
    assert missed.exit_code == 1 and missed.stdout == ""
    assert "no grammar accepts" in missed.stderr
    assert run("decode", "line", "systemd[1]: Started.", "--format", "json").stdout.strip() == "[]"


def test_decode_line_stream_exits_1_only_when_no_line_matched():
    good = "sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
    bad = "systemd[1]: Started Session 4 of user root.\n"
    mixed = CliRunner().invoke(main, ["decode", "line", "-"], input=good + bad)
    assert mixed.exit_code == 0 and len(mixed.stdout.splitlines()) == 2
    none = CliRunner().invoke(main, ["decode", "line", "-"], input=bad + bad)
    assert none.exit_code == 1


# -- --since / --until ---------------------------------------------------------------------------------


def _demo_count(*args) -> int:
    (report,) = json.loads(run("analyze", DEMO, "--format", "json", *args).stdout)["reports"]
    medium = [f for f in report["findings"] if f["rule"] == "DD101"]
    return medium[0]["count"] if medium else 0


@pytest.mark.parametrize("since", ["2024-03-16", "Mar 16", "Mar 16 00:00", "Sat Mar 16 00:00:00 2024",
                                   "[Sat Mar 16 00:00:00 2024]", "2024-03-16T00:00:00+00:00", "@1710547200"])
def test_since_cuts_the_events_before_it_in_any_log_time_format(since):
    assert _demo_count() == 3
    assert _demo_count("--since", since) == 2   # the medium error of Mar 15 is left out


def test_until_takes_in_the_whole_day_it_names():
    assert _demo_count("--until", "2024-03-15") == 1
    assert _demo_count("--until", "Mar 18") == 1
    assert _demo_count("--until", "2024-03-19") == 3


def test_a_window_the_kernel_log_does_not_reach_gives_no_all_clear():
    (report,) = json.loads(run("analyze", HEALTHY, "--format", "json", "--since", "2030-01-01").stdout)["reports"]
    assert report["verdict"]["status"] == "inconclusive"
    assert "outside the window" in report["coverage"]["reason"]
    assert report["coverage"]["window"]["since"].startswith("2030-01-01T00:00:00")


@pytest.mark.parametrize("value", ["yesterday", "2024-13-01", "Mar 32", "25:00"])
def test_a_time_that_is_none_is_bad_usage(value):
    result = run("analyze", DEMO, "--since", value)
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "Traceback" not in result.output


def test_since_after_until_is_bad_input():
    result = run("analyze", DEMO, "--since", "2024-03-19", "--until", "2024-03-18")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "comes after" in result.stderr


def test_events_takes_the_window_too():
    every = run("events", DEMO).stdout.splitlines()
    cut = run("events", DEMO, "--since", "2024-03-19 02:17:44").stdout.splitlines()
    assert 0 < len(cut) < len(every)
    assert all(json.loads(line)["time"] >= "2024-03-19T02:17:44" for line in cut if json.loads(line)["time"])


# -- the status line is the first line whatever the verdict ------------------------------------------------


@pytest.mark.parametrize("sample", sorted(p.name for p in (REPO / "samples").iterdir() if p.is_dir()))
def test_every_sample_starts_with_its_status(sample):
    assert STATUS_LINE.match(run("analyze", REPO / "samples" / sample).stdout)
