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


class Note(str):
    """Something the reader should know that is no fault of the input nor a loss: the same
    messages counted once from two logs, colour codes removed. It travels in a source's warnings
    list like any warning; the report shows it apart, under `notes`."""

    __slots__ = ()


def is_note(warning: str) -> bool:
    return isinstance(warning, Note)


class NumberOutOfRange(ValueError):
    """A number read from a log is larger than the field it fills can hold (a sector of 2^80, an
    H:C:T:L part past 2^32, an uptime of 20 digits): the line that holds it is not read, and its
    source gets a warning, never a crash."""


def bounded(text: str, limit: int, what: str, base: int = 10) -> int:
    """The number `text` spells (in `base`), when below `limit`; NumberOutOfRange otherwise.
    Digits are counted before converting, so a number of thousands of digits costs nothing."""
    if len(text) <= 18:  # the usual case, on the path of every storm line: one int() and a compare
        try:
            value = int(text, base)
        except ValueError:
            value = limit
        if value < limit:
            return value
    digits = text.strip().lower()
    if base == 16:
        digits = digits.removeprefix("0x")
    digits = digits.lstrip("0") or "0"
    width = limit.bit_length() // 4 + 1 if base == 16 else len(str(limit))
    value = int(digits, base) if len(digits) <= width else limit
    if value >= limit:
        shown = text.strip() if len(text.strip()) <= 24 else text.strip()[:24] + "..."
        raise NumberOutOfRange(f"{what} {shown} out of range")
    return value
