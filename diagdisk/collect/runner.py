"""Run one external command with a hard timeout, never hanging on a sick drive.

Each command runs in its own session (process group) so that a timeout kills everything it started:
smartctl and sg3-utils may fork helpers, and a command blocked on a hung device must not survive
the collector. A process stuck in uninterruptible I/O (state D) cannot be reaped even by SIGKILL;
the runner then gives up waiting after a grace period and records it, rather than blocking.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import BinaryIO

# After SIGKILL, how long to wait for the group to die before abandoning it (state D).
KILL_GRACE_SECONDS = 3.0
STDERR_KEEP_BYTES = 2000

# Collected text must not depend on the user's locale (dates, decimal points, translated messages).
_COMMAND_ENV_OVERRIDES = {"LC_ALL": "C", "LANG": "C", "SYSTEMD_PAGER": "", "PAGER": "cat"}


@dataclass
class CommandResult:
    argv: list[str]
    status: str  # ok | failed | timeout | skipped
    exit_status: int | None
    duration: float
    stdout: BinaryIO | None  # a temporary file positioned at 0, or None
    stderr: str
    reason: str | None = None

    def read_stdout(self) -> bytes:
        if self.stdout is None:
            return b""
        self.stdout.seek(0)
        data = self.stdout.read()
        self.stdout.seek(0)
        return data


# Where the system keeps smartctl, mdadm, blockdev, multipath and dmsetup. An ordinary user's PATH
# often leaves them out (Debian gives users /usr/local/bin:/usr/bin:/bin), so a live run looks there
# after PATH, as sosreport sets its own PATH to the sbin folders whoever runs it.
SYSTEM_COMMAND_FOLDERS = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def find_executable(name: str, search_path: str | None) -> str | None:
    """On search_path only when given (a recorded run's fake binaries); else on PATH, then the system folders."""
    if search_path is not None:
        return shutil.which(name, path=search_path)
    path = os.environ.get("PATH", os.defpath)
    return shutil.which(name, path=os.pathsep.join([path, *SYSTEM_COMMAND_FOLDERS]))


def run_command(argv: list[str], timeout: float, search_path: str | None = None) -> CommandResult:
    """Run argv (no shell) for at most ``timeout`` seconds; every failure becomes a result, never an exception."""
    started = time.monotonic()
    if timeout <= 0:
        return CommandResult(argv, "skipped", None, 0.0, None, "", "overall deadline reached")
    executable = find_executable(argv[0], search_path)
    if executable is None:
        return CommandResult(argv, "skipped", None, 0.0, None, "", f"{argv[0]} not installed")
    env = dict(os.environ, **_COMMAND_ENV_OVERRIDES)
    if search_path is not None:
        # The command itself is found only on search_path; what it runs (a fake script's cat) uses PATH.
        env["PATH"] = os.pathsep.join([search_path, os.environ.get("PATH", os.defpath)])
    stdout = tempfile.TemporaryFile()
    stderr = tempfile.TemporaryFile()
    try:
        process = subprocess.Popen(
            [executable, *argv[1:]],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=env,
            start_new_session=True,
        )
    except PermissionError:
        stdout.close()
        stderr.close()
        return CommandResult(argv, "skipped", None, 0.0, None, "", f"permission denied executing {executable}")
    except OSError as error:
        stdout.close()
        stderr.close()
        return CommandResult(argv, "failed", None, 0.0, None, "", f"cannot execute {executable}: {error.strerror}")

    status, reason = "ok", None
    try:
        exit_status: int | None = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        exit_status = None
        status, reason = "timeout", f"timed out after {timeout:g} s; process group killed"
        try:
            process.wait(timeout=KILL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            reason += " but did not exit (uninterruptible I/O?); abandoned"
    if status == "ok" and exit_status != 0:
        status = "failed"
        reason = f"exit status {exit_status}"
    stderr.seek(0)
    error_text = stderr.read()[-STDERR_KEEP_BYTES:].decode("utf-8", "replace").strip()
    stderr.close()
    stdout.seek(0)
    return CommandResult(argv, status, exit_status, time.monotonic() - started, stdout, error_text, reason)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:
        # A setuid child may refuse a group signal; kill at least the direct child.
        process.kill()
