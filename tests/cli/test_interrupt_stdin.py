"""Ctrl-C while `diagdisk analyze -` waits for its input exits 130 ("interrupted"), never 2 with
"empty file": from a terminal, and from a pipeline whose producer the same Ctrl-C stops."""

import os
import platform
import pty
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diagdisk.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
DIAGDISK = shutil.which("diagdisk", path=str(Path(sys.executable).parent)) or "diagdisk"
# the read(2) system call's number, to see the process block on its standard input
READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}.get(platform.machine())

pytestmark = pytest.mark.skipif(READ_SYSCALL is None or not Path("/proc/self/syscall").exists(),
                                reason="needs Linux's /proc/PID/syscall on x86_64 or aarch64")


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(REPO), DIAGDISK_PROGRESS_DELAY="60")


def _wait_reading_stdin(pid: int, limit_s: float = 60.0) -> None:
    """Until the process blocks in read(2) on file descriptor 0 (not a measure of speed: a bound
    for a machine that never gets there)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            fields = Path(f"/proc/{pid}/syscall").read_text().split()
        except (OSError, PermissionError):
            fields = []
        if fields[:2] == [READ_SYSCALL, "0x0"]:
            return
        time.sleep(0.05)
    pytest.fail("diagdisk never waited on its standard input")


def _descendant_reading_stdin(root: int) -> int:
    """The diagdisk process under a shell (the one blocked reading fd 0)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent == root and b"analyze" in cmdline:
                return int(entry.name)
        time.sleep(0.05)
    pytest.fail("the pipeline's diagdisk did not start")


def test_ctrl_c_at_a_terminal_waiting_for_input_exits_130():
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(DIAGDISK, ["diagdisk", "analyze", "-"], _env())
    _wait_reading_stdin(pid)
    os.write(fd, b"\x03")   # the terminal turns it into SIGINT for the foreground group
    output = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == ExitCode.INTERRUPTED
    assert b"interrupted" in output and b"empty file" not in output


def test_ctrl_c_to_a_pipeline_still_producing_exits_130():
    shell = subprocess.Popen(["sh", "-c", f"sleep 120 | '{DIAGDISK}' analyze -; echo rc=$? >&2"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=_env())
    reader = _descendant_reading_stdin(shell.pid)
    _wait_reading_stdin(reader)
    # the shell would ignore it while it waits; the pipeline's own processes get it, as from a terminal
    os.kill(reader, signal.SIGINT)
    os.killpg(shell.pid, signal.SIGINT)
    _, err = shell.communicate(timeout=60)
    assert b"interrupted" in err and b"empty file" not in err
