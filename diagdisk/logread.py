"""Read one kernel-log source into events: chunks -> prefilter -> framing -> grammars.

Only candidate lines (those holding a family keyword) are decoded and parsed. Two kinds of
neighbouring lines are looked at on demand: a wrapped message continues on the next line when that
line has no header in a file whose lines have headers; and an error line that names no device may
have had its device printed alone on the line before (3.x printed 'sd 3:0:0:0: [sdc]' then the
sense key on its own line) or after (a journal printed newest first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from .chunks import iter_chunks
from .events import IDENTITY_FIELDS
from .framing import Framed, frame_line
from .errors import PartialRead
from .limits import Limits
from .linegrammar import MessageParser, default_parser, grammar_specs, kernel_families
from .prefilter import Prefilter
from .safeio import decode_log_bytes

MAX_UNPARSED_SAMPLES = 20
_HEADER_STYLES = {"syslog", "rfc3339", "dmesg", "dmesg_T", "kmsg", "tag_only"}


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


class LogReader:
    def __init__(self, parser: MessageParser | None = None, prefilter: Prefilter | None = None,
                 limits: Limits | None = None):
        self.parser = parser or default_parser()
        self.limits = limits or Limits()
        self.events_left = self.limits.max_events  # for all the sources this reader reads
        self.prefilter = prefilter or default_prefilter()
        self._family_order = {name: i for i, name in enumerate(self.parser.families)}

    def read(self, path, source_name: str, chunk_size: int = 16 << 20) -> LogReadResult:
        result = LogReadResult()
        headered: bool | None = None
        last_line_count = 0
        for chunk, first_line in iter_chunks(path, chunk_size=chunk_size, warnings=result.warnings, name=source_name,
                                             max_line_bytes=self.limits.max_line_bytes,
                                             max_bytes=self.limits.max_file_bytes):
            if headered is None:
                headered = self._detect_headers(chunk, result)
            consumed_until = -1
            line_no = first_line
            position = 0
            for start, end, families in self.prefilter.candidate_lines(chunk):
                if start < consumed_until:
                    continue
                line_no += chunk.count(b"\n", position, start)
                position = start
                framed = self._frame(chunk, start, end)
                if headered and framed.header is None and not framed.indented:
                    # a continuation line: parse the message it continues, unless that was done
                    opening = self._opening_line(chunk, start, consumed_until)
                    if opening is None:
                        continue
                    start, end, back = opening
                    line_no -= back
                    position = start
                    framed = self._frame(chunk, start, end)
                message, last = framed.message, end
                if headered:
                    message, last = self._join_continuations(chunk, end, message)
                consumed_until = last
                ordered = sorted(families, key=lambda f: self._family_order.get(f, 99))
                events = self._parse_message(message, ordered)
                if not events:
                    result.unparsed_candidates += 1
                    if len(result.unparsed_samples) < MAX_UNPARSED_SAMPLES:
                        result.unparsed_samples.append((line_no, message))
                    continue
                raw = " ".join(part.rstrip("\r") for part in decode_log_bytes(chunk[start:last]).split("\n"))
                for event in events:
                    self._stamp(event, framed, source_name, line_no, raw)
                    if not _has_identity(event):
                        self._add_context(chunk, start, end, line_no, source_name, result)
                    result.events.append(event)
            last_line_count = first_line + chunk.count(b"\n") - 1 + (0 if chunk.endswith(b"\n") else 1)
            if len(result.events) > self.events_left:
                result.warnings.append(PartialRead(
                    f"{source_name}: over {self.limits.max_events} events in this analysis (the events cap, see "
                    f"--max-events); stopped reading after line {last_line_count}"))
                break
        self.events_left -= len(result.events)
        result.lines = max(last_line_count, 0)
        result.events.sort(key=lambda e: e["line"])
        return result

    def _detect_headers(self, chunk: bytes, result: LogReadResult) -> bool:
        styles = []
        for raw in chunk[:65536].split(b"\n")[:50]:
            if raw.strip():
                styles.append(frame_line(decode_log_bytes(raw)).header)
        headered = [s for s in styles if s in _HEADER_STYLES]
        if styles and len(headered) * 2 > len(styles):
            result.header_style = max(set(headered), key=headered.count)
            return True
        result.header_style = "bare"
        return False

    @staticmethod
    def _frame(chunk: bytes, start: int, end: int) -> Framed:
        return frame_line(decode_log_bytes(chunk[start:end]))

    def _opening_line(self, chunk: bytes, start: int, consumed_until: int) -> tuple[int, int, int] | None:
        """Bounds of the headered line a continuation line belongs to, and how many lines back it
        is; None when it was already parsed (with its continuation) or is not within reach."""
        bounds = (start, start)
        for back in range(1, 4):  # as far as _join_continuations reaches forward
            bounds = _line_bounds(chunk, bounds[0], bounds[1], -1)
            if bounds is None or bounds[0] < consumed_until:
                return None
            framed = self._frame(chunk, *bounds)
            if framed.header is not None:
                return bounds[0], bounds[1], back
            if framed.indented or not framed.message:
                return None
        return None

    def _join_continuations(self, chunk: bytes, end: int, message: str) -> tuple[str, int]:
        last = end
        for _ in range(3):  # a wrapped message spans a few lines at most
            bounds = _line_bounds(chunk, 0, last, 1)
            if bounds is None:
                break
            next_framed = self._frame(chunk, *bounds)
            if (next_framed.header is not None or next_framed.indented or not next_framed.message
                    or next_framed.message == ":"):
                break
            message = f"{message} {next_framed.message}"
            last = bounds[1]
        return message, last

    def _parse_message(self, message: str, families: list[str]) -> list[dict]:
        if "#012" in message:
            # rsyslog escapes a newline inside one printk as #012 (md prints two sentences at once)
            return [event for part in message.split("#012") if part.strip()
                    for event in self._parse_one_message(part.strip(), families)]
        return self._parse_one_message(message, families)

    def _parse_one_message(self, message: str, families: list[str]) -> list[dict]:
        """The events of one message. Text pasted where a line break was lost holds two messages
        ('... Write error - auto reallocation failed I/O error: dev 08:02, sector N'): when a
        keyword of another family starts later in the line and both halves parse, both count."""
        whole = self.parser.parse(message, families)
        if whole is not None and len(families) == 1:
            return [whole]
        specs = grammar_specs()
        other = [f for f in families if whole is None or f != whole["family"]]
        cuts = sorted({message.find(k) for f in other for k in specs[f].keywords if message.find(k) > 0})
        for cut in cuts:
            head = self.parser.parse(message[:cut].rstrip(), families)
            tail = self.parser.parse(message[cut:], families)
            if head is not None and tail is not None:
                return [head, tail]
            if whole is None and head is not None:
                return [head]
        return [whole] if whole is not None else []

    def _add_context(self, chunk, start, end, line_no, source_name, result) -> None:
        for step in (-1, 1):
            bounds = _line_bounds(chunk, start, end, step)
            if bounds is None:
                continue
            framed = self._frame(chunk, *bounds)
            context = self.parser.parse(framed.message, ["scsi"])
            if context is not None and context["kind"] == "scsi_context" and _has_identity(context):
                self._stamp(context, framed, source_name, line_no + step,
                            decode_log_bytes(chunk[bounds[0]:bounds[1]]).rstrip("\r"))
                result.events.append(context)

    @staticmethod
    def _stamp(event: dict, framed: Framed, source_name: str, line_no: int, raw: str) -> None:
        event["source"] = source_name
        event["line"] = line_no
        event["raw"] = raw
        if framed.wall is not None:
            event["_wall"] = framed.wall
        if framed.month_day_time is not None:
            event["_mdt"] = framed.month_day_time
        if framed.uptime is not None:
            event["_uptime"] = framed.uptime
