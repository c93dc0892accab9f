"""sar and iostat text, whatever the sysstat version and the locale it was printed in.

sar writes `sar -A` sections one after another; the disk section is the one whose header holds
`DEV` and `tps`. A row belongs to the header above it: the rows of another activity (IFACE, CPU,
FILESYSTEM) are skipped, whatever their number of columns. iostat writes one report per interval: an optional timestamp line (`-t`), an
`avg-cpu:` block, a `Device` header and one row per device; its first report is an average since
boot unless `-y` was given. Both are read by their header line, column by column name
(performance.columns), never by position, so every era and -p/--pretty/-h layout is the same code:
the device column may come first or last, values may carry unit letters (-h) and percent signs.

Locale traps handled here: 12-hour times with AM/PM, dates as MM/DD/YY, DD/MM/YY, DD.MM.YYYY or
ISO (the order of an ambiguous date is settled by the day in the file name, sarDD, when there is
one), decimal commas, and a translated "Average:" (any row that does not start with a time).
`LINUX RESTART` rows cut a series: no window runs across a reboot. A device name too long for its
column makes old iostat print the name alone on a line and the values on the next.

Speed: once a row has been read under sar's disk header, the rows after it, up to the next blank
line, are read as one block by pandas' C reader (performance.blocks) and come out as a SampleBlock;
the first row that does not fit (a header, Average:, a restart, a localised value) ends the block
and is read line by line as before. Blocks give the same samples as lines would.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from itertools import islice
from typing import Iterable, Iterator

from . import blocks
from .blocks import (PLAIN_NUMBER, FixedRows, SampleBlock, booleans_possible, fixed_decimals, fixed_rows, fixed_tokens,
                     missing_field, plain, plain_line, read_rows, token_is)
from .columns import COLUMNS, DEVICE_COLUMNS, IGNORED, SIZE_FIELDS, UNIT_TO_KB, era_of

_TIME = re.compile(r"^(\d{1,2})[:.](\d{2})[:.](\d{2})$")
_AMPM = {"AM": 0, "PM": 12, "am": 0, "pm": 12, "a.m.": 0, "p.m.": 12}
_BANNER = re.compile(r"^\s*Linux\s+(\S+)\s+\(([^)]*)\)\s+(.*)$")
_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?(?:[eE][-+]?\d+)?$")
_HUMAN = re.compile(r"^(-?\d+(?:[.,]\d+)?)([sBkMGTP%]?)$")
_ISO_STAMP = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[+-]\d{4})?\s*$")
_IOSTAT_COMMAND = re.compile(r"(?:^|[\s#$>])iostat(\s[^|;]*)?$")
_SAR_COMMAND = re.compile(r"(?:^|[\s#$>])sar(\s[^|;]*)?")
# rows above the first header kept to read with it (a paste that starts mid-output has a few)
MAX_ORPHAN_ROWS = 1000
_QUOTED = re.compile(r"^\s*(?:>[ \t]?)+")
_INTERVAL_ARGS = re.compile(r"(?:^|\s)(\d+)(?:\s+(\d+))?\s*$")


@dataclass
class RawSample:
    device: str
    t: float | None            # seconds, on a naive local-time axis (None: the text has no clock)
    interval: float | None     # seconds the sample averages over, when known
    values: dict               # field -> value (performance.columns units)
    line: int
    segment: int = 0           # a restart or a gap in the clock starts a new segment


@dataclass
class TextSource:
    """What a sar/iostat text turned out to be, for the report's `sources` entry."""
    kind: str = "unknown"                 # sar | iostat
    eras: list[str] = field(default_factory=list)
    date_order: str | None = None         # MM/DD/YY, DD/MM/YY, DD.MM.YY, ISO
    clock: str | None = None              # 24h | 12h
    decimal_comma: bool = False
    average_label: str | None = None      # how the file says "Average:" (translated or not)
    interval: float | None = None
    restarts: list[int] = field(default_factory=list)     # line numbers
    skipped_since_boot: int | None = None  # line of the iostat report that averages since boot
    headerless_rows: int = 0
    host: str | None = None
    kernel: str | None = None
    day: str | None = None
    warnings: list[str] = field(default_factory=list)


def _number(token: str) -> float | None:
    if _NUMBER.match(token):
        return float(token.replace(",", "."))
    return None


def _value(token: str, field_name: str) -> float | None:
    """A value as printed: plain, decimal comma, or with -h's unit letter or percent sign."""
    try:
        value = float(token)
        return value if math.isfinite(value) else None
    except ValueError:
        pass
    number = _number(token)
    if number is not None:
        return number
    match = _HUMAN.match(token)
    if not match:
        return None
    base = float(match.group(1).replace(",", "."))
    unit = match.group(2)
    if unit in ("", "%"):
        return base
    if field_name in SIZE_FIELDS:
        return base * UNIT_TO_KB[unit]
    return base * {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}.get(unit, 1.0)


def parse_clock(tokens: list[str]) -> tuple[int, int] | None:
    """(seconds since midnight, tokens used) of a row that starts with a time, 12- or 24-hour."""
    if not tokens:
        return None
    match = _TIME.match(tokens[0])
    if not match:
        return None
    hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3))
    used = 1
    if len(tokens) > 1 and tokens[1] in _AMPM:
        hour = hour % 12 + _AMPM[tokens[1]]
        used = 2
    if hour > 23 or minute > 59 or second > 60:
        return None
    return hour * 3600 + minute * 60 + second, used


def parse_date(text: str, day_hint: int | None, c_locale: bool) -> tuple[date | None, str | None, str | None]:
    """(date, order, warning) of a banner or timestamp date in any of the orders sysstat prints."""
    text = text.strip()
    try:
        m = re.match(r"^(\d{4})[-/](\d{2})[-/](\d{2})$", text)
        if m:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3))), "ISO", None
        m = re.match(r"^(\d{4})年(\d{1,2})月(\d{1,2})日$", text)
        if m:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3))), "ISO", None
        m = re.match(r"^(\d{1,2})\.(\d{1,2})\.(\d{2,4})$", text)
        if m:
            return date(_year(m.group(3)), int(m.group(2)), int(m.group(1))), "DD.MM.YY", None
        m = re.match(r"^(\d{1,2})/(\d{1,2})/(\d{2,4})$", text)
        if not m:
            return None, None, None
        first, second, year = int(m.group(1)), int(m.group(2)), _year(m.group(3))
    except ValueError:
        return None, None, None
    warning = None
    if first > 12 >= second:
        order = "DD/MM/YY"
    elif second > 12 >= first:
        order = "MM/DD/YY"
    elif day_hint is not None and first == day_hint != second:
        order = "DD/MM/YY"
    elif day_hint is not None and second == day_hint:
        order = "MM/DD/YY"
    else:
        order = "MM/DD/YY"
        if not c_locale and first != second:
            warning = f"date {text} could be MM/DD or DD/MM; read as MM/DD (the C locale's order)"
    try:
        day = date(year, first, second) if order == "MM/DD/YY" else date(year, second, first)
    except ValueError:
        return None, None, None
    return day, order, warning


def line_text(tokens: list[str]) -> str:
    return "".join(tokens)


def _year(text: str) -> int:
    year = int(text)
    return year + 2000 if year < 100 else year


def _epoch(day: date, seconds: int) -> float:
    return (datetime(day.year, day.month, day.day) - _EPOCH).total_seconds() + seconds


_EPOCH = datetime(1970, 1, 1)


def day_hint_of(name: str) -> int | None:
    """The day of the month a sysstat file is named after (sar19, sa19, sar20240319)."""
    m = re.search(r"(?:^|/)sar?(\d{8}|\d{2})(?:\.[^/]*)?$", name)
    if not m:
        return None
    digits = m.group(1)
    day = int(digits[-2:])
    return day if 1 <= day <= 31 else None


class _Layout:
    """A disk header: which field each column holds, and where the device name is."""

    def __init__(self, columns: list[str], line: int):
        self.columns = columns
        self.line = line
        self.device_index = next(i for i, c in enumerate(columns) if c in DEVICE_COLUMNS)
        self.fields = [None if c in DEVICE_COLUMNS or c in IGNORED else COLUMNS.get(c) for c in columns]
        self.read = [(index, spec[0], spec[1]) for index, spec in enumerate(self.fields) if spec is not None]
        self.era = era_of(columns)

    @property
    def unknown(self) -> list[str]:
        """Header names no reader knows: their values are not read."""
        return [c for c, spec in zip(self.columns, self.fields)
                if spec is None and c not in DEVICE_COLUMNS and c not in IGNORED]

    def row(self, tokens: list[str], prefix: bool = False) -> tuple[str, dict] | None:
        """(device, values) of a row; `prefix`: the row holds only the first len(tokens) columns
        (a wrapped row whose rest never came), the others stay unread."""
        if len(tokens) != len(self.columns) and not (prefix and self.device_index == 0 and len(tokens) < len(self.columns)):
            return None
        values = {}
        for index, name, factor in self.read:
            if index >= len(tokens):
                continue
            token = tokens[index]
            try:
                value = float(token)
            except ValueError:
                value = _value(token, name)
                if value is None:
                    return None
            if not math.isfinite(value):
                return None   # "nan", "inf", 1e999: not something sysstat prints
            values[name] = value * factor
        return tokens[self.device_index], values


def _first_rows(codes, names: list[str], taken: int):
    """(codes, names) of the first `taken` rows, names in order of first appearance among them."""
    import numpy

    if taken == len(codes):
        return codes, names
    codes = codes[:taken]
    present, first = numpy.unique(codes, return_index=True)
    order = present[numpy.argsort(first, kind="stable")]
    rank = numpy.empty(len(names), dtype=numpy.int64)
    rank[order] = numpy.arange(len(order))
    return rank[codes], [names[code] for code in order.tolist()]


def _plain_row(line: str, width: int, floats: list[int]) -> bool:
    """A row the C reader reads as str.split() and float() do: `width` fields, plain numbers."""
    if not plain_line(line):
        return False
    tokens = line.split()
    return len(tokens) == width and all(PLAIN_NUMBER.match(tokens[index]) for index in floats)


def _is_disk_header(tokens: list[str]) -> bool:
    has_device = any(t in DEVICE_COLUMNS for t in tokens)
    return has_device and any(t in COLUMNS for t in tokens) and not any(_number(t) is not None for t in tokens)


def read_sysstat_text(lines: Iterable[str], name: str, c_locale: bool = False,
                      since_boot_skipped: bool | None = None) -> tuple[TextSource, list[RawSample]]:
    """Every disk sample of a sar or iostat text, with what the text was. `since_boot_skipped`:
    True when the output is known to have been made with `iostat -y` (no since-boot report)."""
    source, items = iter_sysstat_text(lines, name, c_locale, since_boot_skipped)
    samples = list(raw_samples(items))
    return source, samples


def iter_sysstat_text(lines: Iterable, name: str, c_locale: bool = False, since_boot_skipped: bool | None = None,
                      batched: bool = False) -> tuple[TextSource, Iterator[RawSample | SampleBlock]]:
    """Like read_sysstat_text, as a stream (memory does not grow with the text) of RawSamples and
    SampleBlocks (many rows as columns; raw_samples() turns them into RawSamples); the TextSource
    is complete once the iterator is exhausted. `batched`: `lines` gives lists of lines, or chunks
    of bytes that plain_chunk() accepts."""
    reader = _TextReader(name, c_locale, since_boot_skipped)
    return reader.source, reader.read(lines if batched else _batches(lines))


# Bytes that break a line for str.splitlines() besides the line feed, and NUL (decoding drops it).
_OTHER_BREAKS = b"\x00\r\x0b\x0c\x1c\x1d\x1e"
_NOT_BREAKS = bytes(b for b in range(256) if b not in _OTHER_BREAKS)


def plain_chunk(chunk: bytes) -> bool:
    """True when a chunk's lines are its line-feed-separated ASCII bytes, exactly what decoding it
    and str.splitlines() would give: the reader can then take rows straight from the bytes."""
    return chunk.isascii() and not chunk.translate(None, _NOT_BREAKS)


def _batches(lines: Iterable[str]) -> Iterator[list[str]]:
    iterator = iter(lines)
    while batch := list(islice(iterator, blocks.MAX_ROWS)):
        yield batch


def raw_samples(items: Iterable[RawSample | SampleBlock]) -> Iterator[RawSample]:
    """A reader's stream with each SampleBlock given back as the RawSamples of its rows."""
    for item in items:
        if not isinstance(item, SampleBlock):
            yield item
            continue
        count = len(item)
        devices, codes, times, lines = item.devices, item.codes.tolist(), item.t.tolist(), item.lines.tolist()
        intervals = item.interval.tolist() if item.interval is not None else [None] * count
        columns = {name: column.tolist() for name, column in item.values.items()}
        for row in range(count):
            yield RawSample(devices[codes[row]], times[row], intervals[row],
                            {name: column[row] for name, column in columns.items()}, lines[row], item.segment)


class _TextReader:
    def __init__(self, name: str, c_locale: bool, no_since_boot: bool | None):
        self.name = name
        self.c_locale = c_locale
        self.day_hint = day_hint_of(name)
        self.source = TextSource()
        self.day: date | None = None
        self.layout: _Layout | None = None
        self.last_disk_layout: _Layout | None = None
        # under the header of another activity (IFACE, CPU, FILESYSTEM...): its rows are no disk's,
        # however many columns they have, until the next header
        self.in_other_activity = False
        self.segment = 0
        self.previous_clock: int | None = None
        self._day_start: tuple | None = None
        self.no_since_boot = no_since_boot
        # iostat: the rows of the current report, by device
        self.report = 0
        self.report_time: float | None = None
        self.report_line = 0
        self.current: dict[str, RawSample] = {}
        self.run_columns: frozenset | None = None
        self.layout_is_part = False
        self.pending_name: str | None = None
        # a row whose values wrapped onto the next lines (a narrow terminal, a book or web page):
        # its tokens so far and its first line
        self.partial: tuple[list[str], int] | None = None
        self.previous_line = 0           # the last non-blank line read
        self.unread_rows: list[int] = []  # rows under a disk header that fit none of its columns
        self.short_rows: dict[tuple, list[int]] = {}   # columns never read -> the rows that lacked them
        self.orphans: list[tuple[list[str], int]] = []  # rows above the first disk header
        self.skip_next_numbers = False
        self.iostat_interval: float | None = None
        # iostat's first report after its banner averages since boot, unless the run used -y
        self.next_run_has_y = False
        self.hold_next_report = False
        self.held: list[RawSample] = []
        # blocks: the last line read as a row of the disk section, and when to try a block again
        self.min_block_rows = blocks.MIN_ROWS
        self.row_line = 0
        self.row_clock_tokens = 1
        self.block_rows = 4 * self.min_block_rows
        self.no_block_before = 0
        self.missed_blocks = 0

    # ---- the whole text
    def read(self, batches: Iterable[list[str] | bytes]) -> Iterator[RawSample | SampleBlock]:
        first = 1
        for batch in batches:
            if isinstance(batch, bytes):
                first += yield from self._chunk(batch, first)
            else:
                yield from self._batch(batch, first)
                first += len(batch)
        yield from self._end_partial()
        yield from self._flush_report()
        if self.orphans:
            self.source.warnings.append(f"{self.name}: {len(self.orphans)} rows of figures (from line "
                                        f"{self.orphans[0][1]}) under no disk header: their columns are "
                                        f"unknown, not read")
        self._layout_warnings()
        if self.held:
            # the run printed nothing after its since-boot report: keep it, and say what it is
            self.source.warnings.append(f"{self.name}:{self.held[0].line}: the only report of this iostat run "
                                        f"averages since boot (no interval report follows)")
            yield from self.held
        self.held = []

    def _batch(self, batch: list[str], first: int) -> Iterator[RawSample | SampleBlock]:
        index, count = 0, len(batch)
        while index < count:
            number = first + index
            line = batch[index].rstrip("\r\n")
            index += 1
            if not line.strip():
                continue
            yield from self._line(line, number)
            if self.row_line == number and count - index >= self.min_block_rows and number >= self.no_block_before:
                index += yield from self._sar_block(batch, index, first)

    def _line(self, line: str, number: int) -> Iterator[RawSample]:
        previous, self.previous_line = self.previous_line, number
        if line[:1] == ">" or line.lstrip()[:1] == ">":
            line = _QUOTED.sub("", line)    # a mail or forum quote ('> ', '>> '): the text under it
            if not line.strip():
                return
        tokens = line.split()
        if self.partial is not None and not all(_value(t, "") is not None for t in tokens):
            yield from self._end_partial()
        if self.layout is not None and self.source.kind == "sar" and _TIME.match(tokens[0]):
            # the bulk of a sar file: a row of the disk section (checked in full by _sar_line)
            clock = parse_clock(tokens)
            if clock is not None:
                yield from self._sar_line(tokens, clock, number)
                return
        banner = _BANNER.match(line)
        if banner:
            yield from self._flush_report()
            self._drop_held()
            self._banner(banner, number)
            return
        if self.skip_next_numbers:
            self.skip_next_numbers = False
            if all(_value(t, "") is not None for t in tokens):
                return
        if tokens[0] == "avg-cpu:":
            self.skip_next_numbers = True
            yield from self._new_report(number, None)
            return
        if _IOSTAT_COMMAND.search(line) and not _is_disk_header(tokens):
            self._iostat_command(line)
            return
        if _SAR_COMMAND.search(line) and parse_clock(tokens) is None and not _is_disk_header(tokens):
            if self.source.kind == "unknown":
                self.source.kind = "sar"
            return
        stamp = self._timestamp(line)
        if stamp is not None:
            self.source.kind = "iostat"
            yield from self._new_report(number, stamp)
            return
        clock = parse_clock(tokens)
        if clock is not None:
            yield from self._sar_line(tokens, clock, number)
            return
        if (self.source.kind == "iostat" and self.layout is not None and self.layout.line == previous
                and not any(t in DEVICE_COLUMNS for t in tokens) and any(t in COLUMNS for t in tokens)
                and not any(_number(t) is not None for t in tokens)):
            # the header went on on the next line (a narrow terminal, a book or a web page): one header
            joined = self.layout.columns + tokens
            if self.run_columns == frozenset(self.layout.columns):
                self.run_columns = frozenset(joined)
            self._set_layout(joined, number)
            self.layout_is_part = frozenset(joined) != self.run_columns
            return
        if _is_disk_header(tokens) and (tokens[0].startswith("Device") or tokens[-1] == "Device"):
            if self.source.kind == "unknown":
                self.source.kind = "iostat"
            columns = frozenset(tokens)
            if self.run_columns is None:
                self.run_columns = columns
            elif columns == self.run_columns and self.current:
                yield from self._new_report(number, None)   # -d without -t: a header starts each report
            self._set_layout(tokens, number)
            self.layout_is_part = columns != self.run_columns   # --pretty prints a report in groups
            return
        if self.source.kind != "iostat" and (tokens[0].endswith(":") or (len(tokens) > 1 and tokens[1] == ":")):
            # "Average:", "Durchschn.:", "Moyenne :", "Среднее:": the file's own averages, not samples
            label = tokens[0] if tokens[0].endswith(":") else f"{tokens[0]} :"
            if self.source.average_label is None and label != "Summary:":
                self.source.average_label = label
            return
        if self.layout is not None and self.source.kind == "iostat":
            yield from self._iostat_row(tokens, number)
        elif (self.last_disk_layout is None and self.source.kind in ("unknown", "iostat") and len(tokens) >= 3
              and _number(tokens[0]) is None and all(_value(t, "") is not None for t in tokens[1:])
              and len(self.orphans) < MAX_ORPHAN_ROWS):
            self.orphans.append((tokens, number))   # a paste that starts below its header

    # ---- banner, timestamps, commands
    def _banner(self, banner: re.Match, number: int) -> None:
        self.hold_next_report = not (self.no_since_boot or self.next_run_has_y)
        self.next_run_has_y = False
        self.run_columns = None
        self.source.kernel = self.source.kernel or banner.group(1)
        self.source.host = self.source.host or banner.group(2)
        for token in banner.group(3).split():
            day, order, warning = parse_date(token, self.day_hint, self.c_locale)
            if day is not None:
                self.day = day
                self.source.day = self.source.day or day.isoformat()
                self.source.date_order = self.source.date_order or order
                if warning:
                    self.source.warnings.append(f"{self.name}:{number}: {warning}")
                break
        self.previous_clock = None

    def _timestamp(self, line: str) -> float | None:
        iso = _ISO_STAMP.match(line)
        if iso:
            y, mo, d, h, mi, s = map(int, iso.groups())
            try:
                return _epoch(date(y, mo, d), h * 3600 + mi * 60 + s)
            except ValueError:
                return None
        tokens = line.split()
        if len(tokens) not in (2, 3):
            return None
        day, order, _ = parse_date(tokens[0], self.day_hint, self.c_locale)
        clock = parse_clock(tokens[1:])
        if day is None or clock is None or clock[1] != len(tokens) - 1:
            return None
        self.source.date_order = self.source.date_order or order
        self.source.clock = self.source.clock or ("12h" if clock[1] == 2 else "24h")
        self.day = day
        return _epoch(day, clock[0])

    def _iostat_command(self, line: str) -> None:
        self.source.kind = "iostat"
        arguments = line[_IOSTAT_COMMAND.search(line).start():]
        self.next_run_has_y = bool(re.search(r"\s-\w*y", arguments))
        interval = _INTERVAL_ARGS.search(arguments)
        if interval:
            self.iostat_interval = float(interval.group(1))
            self.source.interval = self.source.interval or self.iostat_interval

    # ---- sar
    def _sar_line(self, tokens: list[str], clock: tuple[int, int], number: int) -> Iterator[RawSample]:
        seconds, used = clock
        rest = tokens[used:]
        layout = self.layout
        # the common case first: a row of the disk section under its header
        parsed = layout.row(rest) if layout is not None and len(rest) == len(layout.columns) else None
        if parsed is None:
            self.source.clock = self.source.clock or ("12h" if used == 2 else "24h")
            if self.source.kind == "unknown":
                self.source.kind = "sar"
            if "RESTART" in rest:
                self.source.restarts.append(number)
                self.segment += 1
                self.layout = None
                self._advance_day(seconds)
                return
            if _is_disk_header(rest):
                self._set_layout(rest, number)
                return
            if rest and not any(_number(t) is not None for t in rest):
                self.layout = None   # the header of another activity (CPU, IFACE, ...)
                self.in_other_activity = True
                return
            if layout is None and not self.in_other_activity and self.last_disk_layout is not None \
                    and len(rest) == len(self.last_disk_layout.columns):
                # rows without their header (an excerpt through grep): the file's disk header still names them
                parsed = self.last_disk_layout.row(rest)
                if parsed is not None:
                    self.source.headerless_rows += 1
            if parsed is None:
                return
        else:
            self.row_line, self.row_clock_tokens = number, used   # the rows after it may be read as a block
        self._advance_day(seconds)
        device, values = parsed
        t = (self.day_start + seconds) if self.day is not None else float(seconds)
        if not self.source.decimal_comma and "," in line_text(rest):
            self.source.decimal_comma = True
        yield RawSample(device, t, None, values, number, self.segment)

    def _sar_block(self, batch: list[str], start: int, first: int) -> Iterator[SampleBlock]:
        """The rows of the disk section from batch[start] on, up to the next blank line, as one
        SampleBlock; returns how many rows it took (0: none, they are read line by line)."""
        stop = min(len(batch), start + self.block_rows)
        try:
            stop = batch.index("", start, stop)
        except ValueError:
            pass
        rows = batch[start:stop]
        ascii_rows = next((index for index, row in enumerate(rows) if not row.isascii()), len(rows))
        block = None
        if ascii_rows >= self.min_block_rows:
            rows = rows[:ascii_rows]
            block, _ = self._sar_rows(("\n".join(rows) + "\n").encode("ascii"), len(rows), first + start)
        if block is not None:
            yield block
        self._tried_block(len(block) if block is not None else 0, stop - start, first + start)
        return len(block) if block is not None else 0

    def _chunk(self, chunk: bytes, first: int) -> Iterator[RawSample | SampleBlock]:
        """A chunk of ASCII text whose only line break is a line feed (no NUL, CR, VT, FF or FS): read
        line by line as _batch reads lines, but a block of disk rows straight from its bytes, each
        of them never made a str. Returns the number of lines."""
        position, number, size = 0, first, len(chunk)
        while position < size:
            start = position
            end = chunk.find(b"\n", position)
            end = size if end < 0 else end
            position = end + 1
            line = chunk[start:end].decode("ascii")
            if line.strip():
                yield from self._line(line, number)
                if self.row_line == number and position < size and number >= self.no_block_before:
                    rows, position = yield from self._chunk_block(chunk, position, number + 1, end - start)
                    number += rows
            number += 1
        return number - first

    def _chunk_block(self, chunk: bytes, position: int, number: int, row_length: int) -> Iterator[SampleBlock]:
        """_sar_block on the bytes of a chunk from `position` (line `number`): returns the rows taken
        and the position after them."""
        size = len(chunk)
        limit = position + self.block_rows * (row_length + 1)
        stop = size if limit >= size else chunk.rfind(b"\n", position, limit) + 1
        blank = chunk.find(b"\n\n", position - 1, stop)
        if blank >= 0:
            stop = blank + 1   # the rows before the blank line
        data = chunk[position:stop]
        if data and not data.endswith(b"\n"):
            data += b"\n"     # the last line of the text
        count = data.count(b"\n")
        if count < self.min_block_rows and \
                chunk.count(b"\n", position) + (not chunk.endswith(b"\n")) < self.min_block_rows:
            return 0, position   # as _batch: too few lines left to try (not a miss that delays the next try)
        block, consumed = self._sar_rows(data, count, number) if count >= self.min_block_rows else (None, 0)
        if block is not None:
            yield block
        self._tried_block(len(block) if block is not None else 0, count, number)
        return (len(block), min(size, position + consumed)) if block is not None else (0, position)

    def _tried_block(self, taken: int, rows: int, first_row: int) -> None:
        if taken == rows:
            self.block_rows = min(blocks.MAX_ROWS, 2 * self.block_rows)
        if taken >= self.min_block_rows:
            self.missed_blocks = 0
        else:
            # rows that seldom fit: try again later, later each time it fails
            self.no_block_before = first_row + taken + (self.min_block_rows << min(self.missed_blocks, 10))
            self.missed_blocks += 1

    def _sar_rows(self, data: bytes, count: int, first_number: int) -> tuple[SampleBlock | None, int]:
        """The leading rows of `data` (`count` ASCII rows, each ending with a line feed) that read
        as rows of the current disk header, as a block; and the bytes they take."""
        import numpy

        layout, used = self.layout, self.row_clock_tokens
        width = used + len(layout.columns)
        ends = numpy.flatnonzero(numpy.frombuffer(data, dtype=numpy.uint8) == ord("\n"))
        if len(ends) != count:
            return None, 0     # a line that held a line feed of its own
        parsed = None
        # sysstat's rows are fixed-width: the rows as long as the first are read as a byte matrix
        lengths = numpy.diff(ends, prepend=-1)
        longer = numpy.flatnonzero(lengths != lengths[0])
        same = int(longer[0]) if len(longer) else count
        if same >= self.min_block_rows and plain(head := data[:int(ends[same - 1]) + 1]):
            fixed = fixed_rows(head, same, width)
            if fixed is not None and fixed.bounds[0] == (0, 8):
                parsed = self._fixed_sar_rows(fixed)
                if parsed is not None and parsed[0][:self.min_block_rows].any():
                    parsed = None   # the first rows are not fixed-width after all: let pandas try them
        if parsed is None and plain(data):
            parsed = self._pandas_sar_rows(data, count)
        if parsed is None:
            # read the rows before the first that keeps them from being read as a block
            floats = sorted({used + index for index, _, _ in layout.read})
            rows = data.decode("ascii").split("\n")
            fit = 0
            while fit < count and _plain_row(rows[fit], width, floats):
                fit += 1
            if fit < self.min_block_rows:
                return None, 0
            parsed = self._pandas_sar_rows(data[:int(ends[fit - 1]) + 1], fit)
            if parsed is None:
                return None, 0
        bad, seconds, devices, values = parsed
        taken = int(numpy.argmax(bad)) if bad.any() else len(bad)
        if taken == 0:
            return None, 0
        seconds = seconds[:taken]
        device_codes, device_names = devices(taken)
        values = {name: column[:taken] for name, column in values.items()}
        # _advance_day, row after row: a clock more than an hour behind the previous one is the next day
        if self.day is not None:
            passed_midnight = numpy.empty(taken, dtype=bool)
            passed_midnight[1:] = seconds[1:] < seconds[:-1] - 3600
            passed_midnight[0] = self.previous_clock is not None and seconds[0] < self.previous_clock - 3600
            days = numpy.cumsum(passed_midnight)
            t = (self.day_start + 86400.0 * days) + seconds   # whole seconds: exact, as day_start + seconds is
            self.day += timedelta(days=int(days[-1]))
        else:
            t = seconds.astype(numpy.float64)
        self.previous_clock = int(seconds[-1])
        block = SampleBlock(devices=device_names, codes=device_codes, t=t, interval=None, values=values,
                            lines=first_number + numpy.arange(taken, dtype=numpy.int64), segment=self.segment)
        return block, int(ends[taken - 1]) + 1

    def _fixed_sar_rows(self, fixed: FixedRows):
        """(bad rows, seconds, devices, values) of fixed-width rows whose clock is HH:MM:SS."""
        import numpy

        layout, used, matrix = self.layout, self.row_clock_tokens, fixed.matrix

        def field(index: int):
            start, end = fixed.bounds[index]
            return matrix[:, start:end]

        bad = fixed.bad.copy()
        # the clock as parse_clock reads it: HH:MM:SS (either separator may be a dot), 12-hour with AM/PM
        clock = matrix[:, 0:8]
        digits = (clock[:, [0, 1, 3, 4, 6, 7]] - ord("0")).astype(numpy.int64)
        bad |= (digits > 9).any(axis=1)
        bad |= ~numpy.isin(clock[:, [2, 5]], (ord(":"), ord("."))).all(axis=1)
        hour, minute, second = digits[:, 0] * 10 + digits[:, 1], digits[:, 2] * 10 + digits[:, 3], digits[:, 4] * 10 + digits[:, 5]
        device_codes, device_names = fixed_tokens(field(used + layout.device_index))
        if used == 2:
            offset = numpy.full(len(bad), -1)
            for word, hours in _AMPM.items():
                offset[token_is(field(1), word)] = hours
            bad |= offset < 0
            hour = hour % 12 + offset
        elif layout.device_index == 0:
            # a device named like AM/PM would make its rows read as 12-hour ones
            named_ampm = [code for code, name in enumerate(device_names) if name in _AMPM]
            if named_ampm:
                bad |= numpy.isin(device_codes, named_ampm)
        elif 0 not in {index for index, _, _ in layout.read}:
            for word in _AMPM:
                bad |= token_is(field(1), word)   # would be read as a 12-hour clock
        bad |= (hour > 23) | (minute > 59) | (second > 60)
        seconds = hour * 3600 + minute * 60 + second
        decimals = fixed_decimals(matrix, [fixed.bounds[used + index] for index, _, _ in layout.read])
        if decimals is None:
            return None
        columns, wrong = decimals
        bad |= wrong
        values = {}
        for (_, name, factor), column in zip(layout.read, columns):
            values[name] = column * factor
        return bad, seconds, lambda taken: _first_rows(device_codes, device_names, taken), values

    def _pandas_sar_rows(self, data: bytes, count: int):
        """(bad rows, seconds, devices, values) of rows read by pandas' C reader; None when it cannot
        read them all."""
        import numpy
        import pandas

        layout, used = self.layout, self.row_clock_tokens
        width = used + len(layout.columns)
        floats = sorted({used + index for index, _, _ in layout.read})
        device_column = used + layout.device_index
        texts = sorted({0, device_column} | ({1} if used == 2 else set()))
        frame = read_rows(data, width, r"\s+", floats, texts)
        if frame is None or len(frame) != count or booleans_possible(frame, floats, data[:data.find(b"\n")].decode()):
            return None
        bad = missing_field(frame, skip=set(floats))
        for index in floats:
            bad |= ~numpy.isfinite(frame[index].to_numpy())
        # the clock, read as parse_clock reads it (12-hour rows carry AM/PM as their second token)
        time_codes, times = pandas.factorize(frame[0].to_numpy(dtype=object))
        if used == 2:
            ampm_codes, ampms = pandas.factorize(frame[1].to_numpy(dtype=object))
            pair_codes, pairs = pandas.factorize(time_codes * len(ampms) + ampm_codes)
            clocks = [parse_clock([times[pair // len(ampms)], ampms[pair % len(ampms)]]) for pair in pairs.tolist()]
            clock_codes = pair_codes
        else:
            clocks = [parse_clock([clock]) for clock in times]
            clock_codes = time_codes
            if frame[1].dtype.kind not in "biuf":
                bad |= numpy.isin(frame[1].to_numpy(dtype=object), list(_AMPM))   # would be read as a 12-hour clock
        seconds_of = numpy.array([clock[0] if clock is not None and clock[1] == used else -1 for clock in clocks],
                                 dtype=numpy.int64)
        seconds = seconds_of[clock_codes]
        bad |= seconds < 0
        values = {}
        for index, name, factor in layout.read:
            values[name] = frame[used + index].to_numpy(dtype=numpy.float64) * factor
        names = frame[device_column].to_numpy(dtype=object)

        def devices(taken: int):
            codes, uniques = pandas.factorize(names[:taken])
            return codes, uniques.tolist()

        return bad, seconds, devices, values

    def _advance_day(self, seconds: int) -> None:
        """A clock that goes back by more than an hour has passed midnight."""
        if self.previous_clock is not None and seconds < self.previous_clock - 3600 and self.day is not None:
            self.day += timedelta(days=1)
        self.previous_clock = seconds

    @property
    def day_start(self) -> float:
        if self._day_start is None or self._day_start[0] != self.day:
            self._day_start = (self.day, _epoch(self.day, 0))
        return self._day_start[1]

    def _set_layout(self, tokens: list[str], number: int) -> None:
        self.layout = _Layout(tokens, number)
        unknown = self.layout.unknown
        if unknown:
            note = f"{self.name}:{number}: columns {' '.join(unknown)} are not ones sysstat prints: not read, unknown"
            if note.split(":", 2)[-1] not in {w.split(":", 2)[-1] for w in self.source.warnings}:
                self.source.warnings.append(note)
        self.in_other_activity = False
        self.last_disk_layout = self.layout
        if self.layout.era not in self.source.eras:
            self.source.eras.append(self.layout.era)

    # ---- iostat
    def _new_report(self, number: int, stamp: float | None) -> Iterator[RawSample]:
        if stamp is None and not self.current:
            return   # the avg-cpu block after a report's timestamp: still the same report
        yield from self._flush_report()
        self.report += 1
        self.report_time = stamp
        self.report_line = number

    def _flush_report(self) -> Iterator[RawSample]:
        samples = list(self.current.values())
        self.current = {}
        if not samples:
            return
        if self.hold_next_report:
            # the first report of a run averages since boot: held until another report follows it
            self.hold_next_report = False
            self.held = samples
            return
        self._drop_held()
        yield from samples

    def _drop_held(self) -> None:
        if self.held and self.source.skipped_since_boot is None:
            self.source.skipped_since_boot = self.held[0].line
        self.held = []

    def _iostat_row(self, tokens: list[str], number: int) -> Iterator[RawSample]:
        if self.orphans:
            yield from self._read_orphans(number)
        layout = self.layout
        numbers = all(_value(t, "") is not None for t in tokens)
        if self.partial is not None and numbers:
            # the values of a wrapped row go on
            tokens, number = self.partial[0] + tokens, self.partial[1]
            self.partial = None
            if len(tokens) < len(layout.columns):
                self.partial = (tokens, number)
                return
        elif len(tokens) == 1 and _number(tokens[0]) is None and len(layout.columns) > 1:
            self.pending_name = tokens[0]   # a long name alone on its line; values on the next
            return
        if self.pending_name is not None and numbers and len(tokens) < len(layout.columns):
            tokens = tokens[:layout.device_index] + [self.pending_name] + tokens[layout.device_index:]
        self.pending_name = None
        if (len(tokens) < len(layout.columns) and layout.device_index == 0 and _number(tokens[0]) is None
                and all(_value(t, "") is not None for t in tokens[1:])):
            self.partial = (tokens, number)   # the rest of its values may follow on the next line
            return
        parsed = layout.row(tokens)
        if parsed is None:
            self.unread_rows.append(number)
            return
        yield from self._iostat_sample(parsed, tokens, number)

    def _read_orphans(self, number: int) -> Iterator[RawSample]:
        """Rows pasted above the first header (the paste began below it): read with that header when
        their values fit its columns, as the report before the first one; the others are unread."""
        rows, self.orphans = self.orphans, []
        read = 0
        for tokens, line in rows:
            parsed = self.layout.row(tokens)
            if parsed is None:
                self.unread_rows.append(line)
                continue
            device, values = parsed
            values["_report"] = float(self.report)
            self.current[device] = RawSample(device, None, self.iostat_interval, values, line, self.segment)
            read += 1
        if read:
            self.source.warnings.append(f"{self.name}: {read} rows above the first disk header (lines "
                                        f"{rows[0][1]}-{rows[-1][1]}) were read with the header at line "
                                        f"{self.layout.line}, whose columns they fit")
            stamp = self.report_time
            yield from self._new_report(number, None)
            self.report_time = stamp

    def _end_partial(self) -> Iterator[RawSample]:
        """A wrapped row whose other values never came: what it holds is read, the columns it
        lacks stay unknown (and are named in a warning)."""
        if self.partial is None:
            return
        tokens, number = self.partial
        self.partial = None
        parsed = self.layout.row(tokens, prefix=True) if self.layout is not None else None
        if parsed is None:
            self.unread_rows.append(number)
            return
        lacking = tuple(c for c, spec in zip(self.layout.columns[len(tokens):], self.layout.fields[len(tokens):])
                        if spec is not None)
        self.short_rows.setdefault(lacking, []).append(number)
        yield from self._iostat_sample(parsed, tokens, number)

    def _layout_warnings(self) -> None:
        """Say loudly what was not read: rows that fit no column of their header, columns no reader
        knows, wrapped rows whose last values never came."""
        if self.unread_rows:
            lines = ", ".join(str(n) for n in self.unread_rows[:5]) + (" ..." if len(self.unread_rows) > 5 else "")
            self.source.warnings.append(f"{self.name}: {len(self.unread_rows)} rows under a disk header fit none "
                                        f"of its columns (lines {lines}): not read")
        for lacking, rows in self.short_rows.items():
            lines = ", ".join(str(n) for n in rows[:5]) + (" ..." if len(rows) > 5 else "")
            self.source.warnings.append(f"{self.name}: {len(rows)} rows end before their header does "
                                        f"(lines {lines}): {' '.join(lacking)} not read, unknown")

    def _iostat_sample(self, parsed: tuple[str, dict], tokens: list[str], number: int) -> Iterator[RawSample]:
        device, values = parsed
        if "," in "".join(tokens):
            self.source.decimal_comma = True
        existing = self.current.get(device)
        if existing is not None and self.layout_is_part:
            existing.values.update(values)   # the next group of columns of the same report
            return
        if existing is not None:
            # one device twice under one header: an excerpt of several reports (grep, or -d without blanks)
            yield from self._new_report(number, None)
        values["_report"] = float(self.report)
        self.current[device] = RawSample(device, self.report_time, self.iostat_interval, values, number, self.segment)
