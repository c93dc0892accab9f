"""What `diagdisk collect` tells a person at a terminal: progress while a slow item runs (not
silence until it ends), nothing but errors with -q, and the folder it cannot write to."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import tempfile
from pathlib import Path

from test_collect import frozen_clock, instant_commands, make_root, run_unprivileged, world_dir  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parents[2]


def _in_terminal(args: list[str]) -> tuple[int, str]:
    """Run diagdisk with its stderr on a pseudo-terminal: (exit code, what the terminal showed)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    environment = {**os.environ, "DIAGDISK_PROGRESS_DELAY": "0", "TERM": "xterm", "COLUMNS": "120",
                   "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryFile() as stdout:
        process = subprocess.Popen([sys.executable, "-m", "diagdisk", *args], stdin=subprocess.DEVNULL,
                                   stdout=stdout, stderr=terminal, env=environment, cwd=REPO)
        os.close(terminal)
        received = bytearray()
        while True:
            try:
                data = os.read(controller, 65536)
            except OSError:
                break
            if not data:
                break
            received += data
        code = process.wait(timeout=120)
        os.close(controller)
    return code, received.decode(errors="replace")


def test_a_terminal_hears_which_item_is_still_running(tmp_path):
    root = make_root(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    slow = bin_dir / "smartctl"
    slow.write_text("#!/bin/sh\nsleep 3\necho '{}'\n")
    slow.chmod(0o755)
    code, shown = _in_terminal(["collect", "--root", str(root), "--bin-dir", str(bin_dir), "--perf-seconds", "0",
                                "-o", str(tmp_path / "out.tar.gz")])
    assert code == 0, shown
    # before the slow item ended the display said it was running, with the time passing
    assert "running smartctl" in shown and "items done [00:0" in shown
    assert shown.index("running smartctl") < shown.index("diagdisk: wrote")


def test_quiet_leaves_out_the_not_root_note(world_dir, frozen_clock, instant_commands):
    out = world_dir / "out"
    out.mkdir()
    out.chmod(0o777)
    # a live run without root says what root would add, unless told to be quiet
    loud = run_unprivileged(["-o", out / "a.tar.gz", "--perf-seconds", "0"], world_dir)
    quiet = run_unprivileged(["-o", out / "b.tar.gz", "--perf-seconds", "0", "-q"], world_dir)
    assert loud["exit_code"] == 0 and loud["stderr"].startswith("diagdisk: not running as root:")
    assert quiet["exit_code"] == 0 and quiet["stderr"] == ""


def test_an_unwritable_folder_is_named(world_dir):
    root = make_root(world_dir)
    read_only = world_dir / "ro"
    read_only.mkdir()
    read_only.chmod(0o555)
    result = run_unprivileged(["--root", root], read_only)   # the bundle goes to the current folder
    assert result["exit_code"] == 2
    (line,) = result["stderr"].strip().splitlines()
    assert line.startswith("diagdisk: error: cannot write bundle diagdisk-")
    assert line.endswith(f".tar.gz in the folder {read_only}: Permission denied")
