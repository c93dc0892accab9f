"""Error types, the warning type for skipped input, and the process exit codes they map to.

Exit codes are a documented contract (README.md, "Exit codes"):
0 analyzed, nothing at or above --fail-on; 1 findings at or above --fail-on;
2 bad input or usage; 3 analyzed, but part of the input could not be read (the report's warnings
say which); 4 with --fail-on: no finding at or above it, but the verdict is inconclusive (too
little evidence for any verdict); 70 internal error (a bug; EX_SOFTWARE of sysexits.h);
130 interrupted.
"""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1
    BAD_INPUT = 2
    PARTIAL = 3
    INCONCLUSIVE = 4
    INTERNAL = 70
    INTERRUPTED = 130


class DiagdiskError(Exception):
    """An expected failure that is reported as one line on stderr, never as a traceback."""

    exit_code = ExitCode.BAD_INPUT

    def __init__(self, message: str, path: str | None = None):
        self.path = path
        super().__init__(message)

    def __reduce__(self):
        # keep the path when the error crosses from a worker process to the parent
        return (self.__class__, (str(self), self.path))

    def one_line(self) -> str:
        return f"{self.path}: {self}" if self.path else str(self)


class InputError(DiagdiskError):
    """The input cannot be read or is not something diagdisk understands."""


class PartialRead(str):
    """A warning that says part of the input the analysis wanted was not read (cut by a cap,
    damaged, unreadable, binary). It is an ordinary string everywhere (lists, JSON, text); only
    its type tells the analysis that it is incomplete, which the exit code (3) and the report's
    ``complete`` flag make visible.

    Warnings that lose nothing the analysis reads (a refused device file in an archive, a line
    read as Latin-1, a file that grew while read) stay plain strings.
    """

    __slots__ = ()


def is_partial(warning: str) -> bool:
    return isinstance(warning, PartialRead)
