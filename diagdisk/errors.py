"""Error types and the process exit codes they map to.

Exit codes are a documented contract (docs/cli.md):
0 analyzed, nothing at or above --fail-on; 1 findings at or above --fail-on;
2 bad input or usage; 130 interrupted.
"""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1
    BAD_INPUT = 2
    INTERRUPTED = 130


class DiagdiskError(Exception):
    """An expected failure that is reported as one line on stderr, never as a traceback."""

    exit_code = ExitCode.BAD_INPUT

    def __init__(self, message: str, path: str | None = None):
        self.path = path
        super().__init__(message)

    def one_line(self) -> str:
        return f"{self.path}: {self}" if self.path else str(self)


class InputError(DiagdiskError):
    """The input cannot be read or is not something diagdisk understands."""
