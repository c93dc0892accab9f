"""How much kernel log a source holds: its kernel lines and the time span they cover.

A verdict of "healthy" means something only when the kernel spoke in the logs that were read: a
dpkg.log, a web server's log, a README or a journal the user could not read hold no kernel line,
and nothing in them can clear a disk. So each log source counts its kernel lines as it is read,
on the same chunks the reader goes through, at the speed of a byte search:

- a print of the ring buffer (dmesg, dmesg -T, /dev/kmsg) is kernel lines throughout;
- a system log (syslog, RFC 3339, a journal, `kernel:` tags) has a kernel line wherever a header
  ends in the `kernel:` tag;
- a log without headers has no sure sign: its kernel lines are those a kernel-message grammar read.

The first and last kernel line of the source are framed (framing.frame_line) for their time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from ..inputs.safeio import decode_log_bytes
from .framing import Framed, frame_line

RING_BUFFER_STYLES = ("dmesg", "dmesg_T", "dmesg_H", "kmsg")
_KERNEL_TAG = b" kernel: "
_TAG_AT_LINE_START = b"\nkernel: "


@dataclass
class KernelLines:
    """The kernel lines of one source (or one segment of it), counted chunk by chunk."""

    count: int = 0
    first: Framed | None = None
    last: Framed | None = None
    by_grammar: bool = False      # a log without headers: counted from the lines grammars read

    def feed(self, text: bytes, start: int, end: int, style: str | None) -> None:
        """Count the kernel lines of text[start:end] (whole lines of a file whose header style is
        `style`); remember the first and the last one seen."""
        if start >= end:
            return
        if style in RING_BUFFER_STYLES and _KERNEL_TAG not in text[start:end]:
            self.count += text.count(b"\n", start, end) + (text[end - 1:end] != b"\n")
            self._remember(text, _first_nonblank(text, start, end), _last_nonblank(text, start, end))
        elif style == "tag_only":   # "kernel: message", as journalctl -o cat-like prints leave it
            found = text.count(_TAG_AT_LINE_START, start, end) + text.startswith(_TAG_AT_LINE_START[1:], start)
            if found:
                self.count += found
                first = start if text.startswith(_TAG_AT_LINE_START[1:], start) else \
                    text.find(_TAG_AT_LINE_START, start, end) + 1
                self._remember(text, first, max(text.rfind(_TAG_AT_LINE_START, start, end) + 1, first))
        elif style is not None and style != "bare":   # a host, then the tag: "db1 kernel: message"
            found = text.count(_KERNEL_TAG, start, end)
            if found:
                self.count += found
                self._remember(text, text.find(_KERNEL_TAG, start, end), text.rfind(_KERNEL_TAG, start, end))
        else:
            self.by_grammar = True

    def feed_parsed_lines(self, lines: int) -> None:
        """Lines of a log without headers that a kernel-message grammar read."""
        self.count += lines

    def _remember(self, text: bytes, first: int | None, last: int | None) -> None:
        if first is not None and self.first is None:
            self.first = _frame_at(text, first)
        if last is not None:
            self.last = _frame_at(text, last)

    def join(self, later: "KernelLines") -> None:
        """Add the kernel lines of the next segment of the same file."""
        self.count += later.count
        self.first = self.first or later.first
        self.last = later.last or self.last
        self.by_grammar = self.by_grammar or later.by_grammar


def _first_nonblank(text: bytes, start: int, end: int) -> int | None:
    """The offset of the first character of text[start:end] that is not white space."""
    segment = text[start:end]
    rest = segment.lstrip()
    return start + len(segment) - len(rest) if rest else None


def _last_nonblank(text: bytes, start: int, end: int) -> int | None:
    """The offset of the start of the last line of text[start:end] that is not blank."""
    segment = text[start:end].rstrip()
    return start + segment.rfind(b"\n") + 1 if segment else None


def _frame_at(text: bytes, position: int) -> Framed:
    begin = text.rfind(b"\n", 0, position) + 1
    stop = text.find(b"\n", position)
    return frame_line(decode_log_bytes(text[begin:stop if stop >= 0 else len(text)]))


@dataclass
class KernelSpan:
    """The span the kernel lines of a source cover, as ISO times (wall clock) or seconds since
    boot (uptime only)."""

    first: str | None = None
    last: str | None = None
    first_uptime: float | None = None
    last_uptime: float | None = None
    years_inferred: bool = False


def kernel_span(lines: KernelLines, report_date: datetime | None) -> KernelSpan:
    """When the first and last kernel line were written. A syslog stamp has no year: the last
    line's is the year of the report date (the year before when its month and day come later in
    the year), the first line's the same or, when its month and day come after the last's, the
    year before."""
    span = KernelSpan()
    first, last = lines.first, lines.last
    if first is None or last is None:
        return span
    if first.wall is not None and last.wall is not None:
        span.first, span.last = _iso(first.wall), _iso(last.wall)
    elif first.month_day_time is not None and last.month_day_time is not None:
        anchor = report_date or datetime.now(timezone.utc)
        last_year = anchor.year if last.month_day_time[:2] <= (anchor.month, anchor.day) else anchor.year - 1
        first_year = last_year - (first.month_day_time[:2] > last.month_day_time[:2])
        span.first = _mdt_iso(first.month_day_time, first_year)
        span.last = _mdt_iso(last.month_day_time, last_year)
        span.years_inferred = True
    if first.uptime is not None and last.uptime is not None:
        span.first_uptime, span.last_uptime = first.uptime, last.uptime
    return span


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _mdt_iso(month_day_time: tuple, year: int) -> str | None:
    month, day, hms, frac = month_day_time
    hour, minute, second = map(int, hms.split(":"))
    try:
        return datetime(year, month, day, hour, minute, second).isoformat()
    except ValueError:  # Feb 29 in a year that has none, an hour 99
        return None
