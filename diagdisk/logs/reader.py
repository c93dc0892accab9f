"""Read one kernel-log source into events: chunks -> prefilter -> framing -> grammars.

Only candidate lines (those holding a family keyword) are decoded and parsed. Two kinds of
neighbouring lines are looked at on demand: a wrapped message continues on the next line when that
line has no header in a file whose lines have headers; and an error line that names no device may
have had its device printed alone on the line before (3.x printed 'sd 3:0:0:0: [sdc]' then the
sense key on its own line) or after (a journal printed newest first).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

from ..inputs.chunks import DEFAULT_CHUNK_SIZE, iter_chunks, iter_range_chunks, iter_windows
from .coverage import KernelLines
from .events import IDENTITY_FIELDS
from .framing import TERMINAL_COLOUR, TERMINAL_ESCAPE, Framed, frame_line
from .plans import _BSD_START, _ISO_START, MAY_NAME_A_SCSI_DEVICE, LinePlans, PlanHit
from ..inputs.limits import Limits
from .grammar import _HEX_DIGITS, FALLBACK_FAMILY, MessageParser, default_parser, grammar_specs, kernel_families
from .prefilter import Prefilter
from ..inputs.safeio import decode_log_bytes
from ..errors import Note, NumberOutOfRange

MAX_UNPARSED_SAMPLES = 20
# Lines with a number out of range that a source's warnings name one by one; the rest are counted.
MAX_OUT_OF_RANGE_NAMED = 5
_HEADER_STYLES = {"syslog", "rfc3339", "dmesg", "dmesg_T", "dmesg_H", "kmsg", "tag_only", "journal_json",
                  "logread", "clock_only"}
# `journalctl -o export` keeps a record's times on lines of their own, around its MESSAGE line
_EXPORT_TIMES = re.compile(rb"^(__REALTIME_TIMESTAMP|_SOURCE_MONOTONIC_TIMESTAMP)=(\d{1,20})$", re.M)
# Terminal sequences in a log (framing.TERMINAL_ESCAPE): colours are removed from the text as it is
# read, so that evidence reads as the log would on a terminal; the others are counted here and
# stripped by framing, and stay in the evidence, escaped.
_TERMINAL_COLOUR = re.compile(TERMINAL_COLOUR)
_TERMINAL_ESCAPE = re.compile(TERMINAL_ESCAPE.encode())
# styles whose lines name the program that wrote them (kernel lines say "kernel")
_TAGGED_STYLES = {"syslog", "rfc3339", "tag_only", "logread", "clock_only"}


@cache
def default_prefilter() -> Prefilter:
    specs = grammar_specs()
    return Prefilter({name: specs[name].keywords for name in kernel_families()})


@dataclass
class LogReadResult:
    events: list[dict] = field(default_factory=list)
    lines: int = 0
    unparsed_candidates: int = 0
    unparsed_samples: list[tuple[int, str]] = field(default_factory=list)
    header_style: str | None = None
    warnings: list[str] = field(default_factory=list)
    events_read: int = 0
    kernel: KernelLines = field(default_factory=KernelLines)   # the kernel lines it holds
    # lines holding a number out of range (NumberOutOfRange, Framed.bad_header): how many, and the
    # first few as (line, what); turned into warnings once the whole source was read
    out_of_range: int = 0
    out_of_range_samples: list[tuple[int, str]] = field(default_factory=list)
    terminal_escapes: int = 0   # terminal control sequences (colours of dmesg --color) in its text

    def note_out_of_range(self, line: int, what: str) -> None:
        self.out_of_range += 1
        if len(self.out_of_range_samples) < MAX_OUT_OF_RANGE_NAMED:
            self.out_of_range_samples.append((line, what))


def out_of_range_warnings(source_name: str, read: LogReadResult) -> list[str]:
    """The warnings for the lines of a source that held a number out of range."""
    warnings = [f"{source_name}: line {line}: {what}" for line, what in read.out_of_range_samples]
    more = read.out_of_range - len(read.out_of_range_samples)
    if more > 0:
        warnings.append(f"{source_name}: {more} more lines with a number out of range")
    return warnings


def terminal_escape_warnings(source_name: str, read: LogReadResult) -> list[str]:
    """The note that a source held terminal control sequences, which were not read as text (a
    note: nothing is lost)."""
    if not read.terminal_escapes:
        return []
    return [Note(f"{source_name}: {read.terminal_escapes} terminal control sequences (colours, as "
                 f"dmesg --color=always or a terminal capture writes them) were removed before reading")]


def _without_colours(chunks, result: LogReadResult):
    """The chunks without SGR colour sequences, counting every terminal sequence they held.
    Chunks end at line ends and no sequence spans a line, so none is cut in two."""
    for chunk, first_line in chunks:
        if b"\x1b" in chunk:
            chunk, colours = _TERMINAL_COLOUR.subn(b"", chunk)
            result.terminal_escapes += colours
            if b"\x1b" in chunk:
                result.terminal_escapes += len(_TERMINAL_ESCAPE.findall(chunk))
        yield chunk, first_line


def _has_identity(event: dict) -> bool:
    return any(event.get(f) is not None for f in IDENTITY_FIELDS) or event.get("host") is not None


def _line_bounds(chunk: bytes, start: int, end: int, step: int) -> tuple[int, int] | None:
    """Bounds of the physical line before (step=-1) or after (step=1) the line [start, end)."""
    if step < 0:
        if start == 0:
            return None
        prev_end = start - 1
        prev_start = chunk.rfind(b"\n", 0, prev_end) + 1
        return prev_start, prev_end
    if end >= len(chunk):
        return None
    next_start = end + 1
    next_end = chunk.find(b"\n", next_start)
    return next_start, (len(chunk) if next_end < 0 else next_end)


# Neighbouring lines a message may need: a wrapped message spans up to 3 more lines, and a
# continuation line looks back as far for the line it continues.
_CONTEXT_LINES = 4
# Header styles are judged on the first lines of the file, within this many bytes.
_HEADER_SNIFF_BYTES = 65536
# What a line that only names a SCSI device starts with (grammars/scsi.lark `modern` and `legacy`
# scsi_context rules): a cheap test before the grammar is asked about a neighbouring line.
_MAY_NAME_A_SCSI_DEVICE = re.compile(MAY_NAME_A_SCSI_DEVICE.pattern.decode())
# A line that starts like this has a header (framing finds one): it continues no message.
_HEADER_START = re.compile(_BSD_START + b"|" + _ISO_START + rb"|\[ *\d+\.\d+\]|<\d{1,3}>")


class LogReader:
    def __init__(self, parser: MessageParser | None = None, prefilter: Prefilter | None = None,
                 limits: Limits | None = None, use_plans: bool = True):
        self.parser = parser or default_parser()
        self.limits = limits or Limits()
        self.prefilter = prefilter or default_prefilter()
        self._family_order = {name: i for i, name in enumerate(self.parser.families)}
        self._ordered_families: dict[frozenset, tuple[str, ...]] = {}
        self._frames: dict[int, Framed] = {}
        self._whole_shapes: set[tuple] = set()
        self.plans = LinePlans()
        # lines picked only by the broad tier of words of trouble are candidates when their
        # message starts with a storage device's prefix (grammars/device.lark)
        self._broad_only = frozenset({FALLBACK_FAMILY})
        self._device_prefix = self._prefix_pattern()
        self.use_plans = use_plans  # off only to check that plans read what the general way reads
        self.plan_hits = 0

    def read(self, path, source_name: str, chunk_size: int = DEFAULT_CHUNK_SIZE) -> LogReadResult:
        """Every event of one log, in line order (for tools and tests; analyses stream them)."""
        result = LogReadResult()
        result.events = [as_event(item) for item in self.iter_events(path, source_name, result, chunk_size)]
        return result

    def iter_events(self, path, source_name: str, result: LogReadResult,
                    chunk_size: int = DEFAULT_CHUNK_SIZE, segment: "Segment | None" = None) -> Iterator:
        """Yield the events of one log in line order (dicts, or lineplan.PlanHit for a line a plan
        read: `as_event` turns either into an event dict); counts and warnings go to `result`.

        What a line means never depends on where the chunks were cut: each chunk is read with a few
        lines of its neighbours around it (chunks.iter_windows), and the header style is judged on
        the same first bytes whatever the chunk size. With a `segment`, only that part of the file
        is read, and the header style is the one the whole file was judged to have.
        """
        headered: bool | None = None
        consumed_line = 0        # last physical line a message already took (with its continuations)
        last_line_count = 0
        last_window = None
        if segment is None:
            chunks = iter_chunks(path, chunk_size=chunk_size, warnings=result.warnings, name=source_name,
                                 max_line_bytes=self.limits.max_line_bytes, max_bytes=self.limits.max_file_bytes)
            windows = iter_windows(_without_colours(chunks, result), _CONTEXT_LINES, _HEADER_SNIFF_BYTES)
        else:
            headered, result.header_style = segment.headered, segment.header_style
            chunks = iter_range_chunks(path, segment.start, segment.stop, segment.first_line, chunk_size,
                                       result.warnings, name=source_name, max_line_bytes=self.limits.max_line_bytes)
            windows = iter_windows(_without_colours(chunks, result), _CONTEXT_LINES,
                                   before=_TERMINAL_COLOUR.sub(b"", segment.before))
        for window in windows:
            text, core_start, core_end = window.text, window.core_start, window.core_end
            if headered is None:
                headered = self._detect_headers(text[core_start:core_end], result)
            result.kernel.feed(text, core_start, core_end, result.header_style if headered else None)
            pending: list = []       # event dicts, and lineplan.PlanHit for lines a plan read
            sort_pending = False
            self._frames: dict[int, Framed] = {}
            first_line = window.first_line
            plans = self.plans
            for start, end, families, index in self.prefilter.numbered_candidate_lines(text):
                if start < core_start:
                    continue
                if start >= core_end:
                    break
                line_no = first_line + index
                if line_no <= consumed_line:
                    continue
                line = text[start:end]
                plan_key = (families, line.translate(None, _HEX_DIGITS))  # plans.key(), inline: every line
                hit = plans.read(plan_key, line, text, start, end) if headered and self.use_plans else None
                if hit is not None:
                    self.plan_hits += 1
                    consumed_line = line_no
                    hit.source, hit.line = source_name, line_no
                    pending.append(hit)
                    continue
                first_line_no = line_no
                broad_only = families == self._broad_only
                if broad_only and result.header_style in _TAGGED_STYLES and b"kernel" not in line:
                    continue  # a word of trouble from a program, not from the kernel
                framed = self._frame(text, start, end)
                if broad_only and not self._device_prefix.match(framed.message.lstrip()):
                    continue  # a word of trouble that names no storage device
                if headered and framed.header is None and not framed.indented:
                    # a continuation line: parse the message it continues, unless that was done
                    opening = self._opening_line(text, start, line_no, consumed_line)
                    if opening is None:
                        continue
                    start, end, back = opening
                    first_line_no = line_no - back
                    framed = self._frame(text, start, end)
                message, last, joined = framed.message, end, 0
                if headered:
                    message, last, joined = self._join_continuations(text, end, message)
                consumed_line = first_line_no + joined
                try:
                    events = self._parse_message(message, self._families_in_order(families))
                except NumberOutOfRange as exc:
                    result.note_out_of_range(first_line_no, f"{exc}; line not read")
                    continue
                if not events:
                    result.unparsed_candidates += 1
                    if len(result.unparsed_samples) < MAX_UNPARSED_SAMPLES:
                        result.unparsed_samples.append((first_line_no, message))
                    continue
                raw = decode_log_bytes(text[start:last])
                if "\n" in raw:
                    raw = " ".join(part.rstrip("\r") for part in raw.split("\n"))
                if len(events) == 1 and last == end and first_line_no == line_no:
                    self._learn_plan(plan_key, line, framed, events[0], families)
                # dmesg -T prints the later lines of one printk indented, without a stamp of their own
                timed = framed if framed.header is not None or not framed.indented else \
                    (self._header_above(text, start) or framed)
                if framed.header == "journal_export":
                    _export_record_times(text, start, end, framed)
                if timed.bad_header is not None:
                    result.note_out_of_range(first_line_no, f"{timed.bad_header} is out of range; read without a time")
                for event in events:
                    _stamp(event, timed, source_name, first_line_no, raw)
                    if not _has_identity(event):
                        context = self._context_events(text, start, end, first_line_no, source_name)
                        if context:
                            pending.extend(context)
                            sort_pending = True
                    pending.append(event)
            last_window = window
            if sort_pending:
                pending.sort(key=_line_of)  # context lines before an event come before it
            if not headered:
                result.kernel.feed_parsed_lines(len({_line_of(item) for item in pending}))
            result.events_read += len(pending)
            yield from pending
        if last_window is not None:  # the lines of the file (or segment): counted once, at its end
            text, core_end = last_window.text, last_window.core_end
            last_line_count = last_window.first_line + text.count(b"\n", 0, core_end) - 1 \
                + (0 if text[core_end - 1:core_end] == b"\n" else 1)
        result.lines = max(last_line_count, 0)

    def _prefix_pattern(self) -> re.Pattern:
        if FALLBACK_FAMILY not in self.parser.families:
            return re.compile(r"(?!)")
        patterns = self.parser.terminal_patterns(FALLBACK_FAMILY)
        return re.compile("|".join(f"(?:{patterns[name]})" for name in sorted(patterns) if name.startswith("DEV_")))

    def _learn_plan(self, key: tuple, line: bytes, framed: Framed, event: dict, families: frozenset) -> None:
        """Keep a plan for lines like this one, if one reads it exactly as framing and grammar did."""
        if framed.header not in ("syslog", "rfc3339") or "#012" in framed.message or b"\x1b" in line:
            return  # a plan reads the line's own bytes: a terminal sequence in them is no field
        parsed, family, shape = self.parser.parse_shaped(framed.message, self._families_in_order(families))
        if shape is None or parsed != event:
            return
        expected = dict(event)
        _stamp_time(expected, framed)
        self.plans.learn(key, line, family, shape, self.parser.terminal_patterns(family), expected,
                         needs_context=not _has_identity(event))

    def _header_above(self, text: bytes, start: int) -> Framed | None:
        """The line with a header that an indented line without one belongs to (the same printk),
        within reach; None when there is none."""
        bounds = (start, start)
        for _ in range(1, _CONTEXT_LINES):
            bounds = _line_bounds(text, bounds[0], bounds[1], -1)
            if bounds is None:
                return None
            framed = self._frame(text, *bounds)
            if framed.header is not None:
                return framed
            if not framed.indented:
                return None
        return None

    def _continues(self, text: bytes, end: int) -> bool:
        """Whether the line after the one ending at `end` continues its message."""
        if end + 1 >= len(text) or _HEADER_START.match(text, end + 1):
            return False
        framed = self._frame(text, *_line_bounds(text, 0, end, 1))
        return not (framed.header is not None or framed.indented or not framed.message
                    or framed.message == ":")

    def _families_in_order(self, families: frozenset) -> tuple[str, ...]:
        ordered = self._ordered_families.get(families)
        if ordered is None:
            ordered = self._ordered_families[families] = tuple(sorted(
                families, key=lambda f: self._family_order.get(f, 99)))
        return ordered

    def _detect_headers(self, start_of_file: bytes, result: LogReadResult) -> bool:
        headered, result.header_style = header_style(start_of_file)
        return headered

    def _frame(self, text: bytes, start: int, end: int) -> Framed:
        # a line is framed once per window, though a storm looks at most lines twice (as the line
        # after a message, to see whether it continues it, then as a message of its own)
        framed = self._frames.get(start)
        if framed is None:
            framed = self._frames[start] = frame_line(decode_log_bytes(text[start:end]))
        return framed

    def _opening_line(self, text: bytes, start: int, line_no: int,
                      consumed_line: int) -> tuple[int, int, int] | None:
        """Bounds of the headered line a continuation line belongs to, and how many lines back it
        is; None when it was already parsed (with its continuation) or is not within reach."""
        bounds = (start, start)
        for back in range(1, _CONTEXT_LINES):  # as far as _join_continuations reaches forward
            bounds = _line_bounds(text, bounds[0], bounds[1], -1)
            if bounds is None or line_no - back <= consumed_line:
                return None
            framed = self._frame(text, *bounds)
            if framed.header is not None:
                return bounds[0], bounds[1], back
            if framed.indented or not framed.message:
                return None
        return None

    def _join_continuations(self, text: bytes, end: int, message: str) -> tuple[str, int, int]:
        """The message with the lines that continue it, the offset where it ends, and how many
        lines it took beyond its first."""
        last = end
        joined = 0
        for _ in range(_CONTEXT_LINES - 1):  # a wrapped message spans a few lines at most
            if not self._continues(text, last):
                break
            bounds = _line_bounds(text, 0, last, 1)
            next_framed = self._frame(text, *bounds)
            message = f"{message} {next_framed.message}"
            last = bounds[1]
            joined += 1
        return message, last, joined

    def _parse_message(self, message: str, families: tuple[str, ...]) -> list[dict]:
        if "#012" in message:
            # rsyslog escapes a newline inside one printk as #012 (md prints two sentences at once)
            return [event for part in message.split("#012") if part.strip()
                    for event in self._parse_one_message(part.strip(), families)]
        return self._parse_one_message(message, families)

    def _parse_one_message(self, message: str, families: tuple[str, ...]) -> list[dict]:
        """The events of one message. Text pasted where a line break was lost holds two messages
        ('... Write error - auto reallocation failed I/O error: dev 08:02, sector N'): when a
        keyword of another family starts later in the line and both halves parse, both count."""
        whole = self.parser.parse(message, families)
        if whole is not None and len(families) == 1:
            return [whole]
        shape = (families, message.encode().translate(None, b"0123456789abcdefABCDEF"))
        if whole is not None and shape in self._whole_shapes:
            return [whole]
        specs = grammar_specs()
        # the fallback family's words of trouble pick lines, they do not mark where a second message starts
        other = [f for f in families if f != FALLBACK_FAMILY and (whole is None or f != whole["family"])]
        cuts = sorted({message.find(k) for f in other for k in specs[f].keywords if message.find(k) > 0})
        for cut in cuts:
            head = self.parser.parse(message[:cut].rstrip(), families)
            tail = self.parser.parse(message[cut:], families)
            # two messages only when a family grammar reads each half: a half that only starts with
            # a driver's name (the fallback's reading) is part of the message the whole line is
            if head is not None and tail is not None and (whole is None or FALLBACK_FAMILY not in (head["family"], tail["family"])):
                return [head, tail]
            # a head that only names a device says nothing of what the rest of the line reports
            if whole is None and head is not None and head["kind"] != "scsi_context":
                return [head]
        if whole is not None:
            # a message of this shape is one message: later ones need not be cut again
            if len(self._whole_shapes) >= 20000:
                self._whole_shapes.clear()
            self._whole_shapes.add(shape)
            return [whole]
        if FALLBACK_FAMILY not in families and FALLBACK_FAMILY in self.parser.families:
            # identity first: a line of a known device whose text no family reads is kept
            fallback = self.parser.parse(message, (FALLBACK_FAMILY,))
            if fallback is not None:
                return [fallback]
        return []

    def _context_events(self, text, start, end, line_no, source_name) -> list[dict]:
        """The lines just before and after an event that names no device, when they only name
        one (3.x printed 'sd 3:0:0:0: [sdc]' alone, then the sense key on its own line)."""
        found = []
        for step in (-1, 1):
            bounds = _line_bounds(text, start, end, step)
            if bounds is None:
                continue
            framed = self._frame(text, *bounds)
            if not _MAY_NAME_A_SCSI_DEVICE.match(framed.message):
                continue
            try:
                context = self.parser.parse(framed.message, ["scsi"])
            except NumberOutOfRange:
                continue  # its own line says so, when it is a candidate
            if context is not None and context["kind"] == "scsi_context" and _has_identity(context):
                _stamp(context, framed, source_name, line_no + step,
                       decode_log_bytes(text[bounds[0]:bounds[1]]).rstrip("\r"))
                found.append(context)
        return found


def _export_record_times(text: bytes, start: int, end: int, framed: Framed) -> None:
    """The wall time and uptime of a `journalctl -o export` record, from its other fields (the
    record runs from the blank line before its MESSAGE to the blank line after it)."""
    first = text.rfind(b"\n\n", 0, start)
    last = text.find(b"\n\n", end)
    record = text[first + 1 if first >= 0 else 0: last if last >= 0 else len(text)]
    for name, value in _EXPORT_TIMES.findall(record):
        try:
            if name == b"__REALTIME_TIMESTAMP":
                framed.wall = datetime.fromtimestamp(int(value) / 1e6, tz=timezone.utc)
            else:
                framed.uptime = int(value) / 1e6
        except (ValueError, OverflowError, OSError):
            pass  # an absurd stamp leaves the event without that time


def header_style(start_of_file: bytes) -> tuple[bool, str]:
    """Whether a log's lines have headers (judged on its first lines), and the most common style."""
    styles = []
    for raw in start_of_file[:_HEADER_SNIFF_BYTES].split(b"\n")[:50]:
        if raw.strip():
            styles.append(frame_line(decode_log_bytes(raw)).header)
    headered = [s for s in styles if s in _HEADER_STYLES]
    if styles and len(headered) * 2 > len(styles):
        return True, max(sorted(set(headered)), key=headered.count)
    return False, "bare"


@dataclass(frozen=True)
class Segment:
    """Bytes [start, stop) of a plain log, starting at line `first_line`, read by one worker."""

    start: int
    stop: int
    first_line: int
    before: bytes          # the complete lines just before `start`, as context
    headered: bool
    header_style: str


def _line_of(item) -> int:
    return item.line if isinstance(item, PlanHit) else item["line"]


def as_event(item) -> dict:
    """An event dict, from what iter_events yields (a dict, or a PlanHit)."""
    return item.event() if isinstance(item, PlanHit) else item


def _stamp(event: dict, framed: Framed, source_name: str, line_no: int, raw: str) -> None:
    event["source"] = source_name
    event["line"] = line_no
    event["raw"] = raw
    _stamp_time(event, framed)


def _stamp_time(event: dict, framed: Framed) -> None:
    if framed.wall is not None:
        event["_wall"] = framed.wall
    if framed.month_day_time is not None:
        event["_mdt"] = framed.month_day_time
    if framed.uptime is not None:
        event["_uptime"] = framed.uptime
