"""One kernel-log source, end to end: lines -> events -> merged reports -> times, decoded -> records.

This is the unit of work the analysis runs in parallel. A source is read start to finish by one
worker, or, when it is one large plain file, cut into segments read by several workers at once
and joined. Either way the result is the same: its records (diagdisk.logs.records), its counts and
warnings, and what the order of its events showed about the topology (SequenceLinks) and md
arrays (RAID printouts). Everything streams: memory holds a chunk of text and the records.

Segments are cut where the log is quiet: after SYNC_GAP_LINES lines without a candidate line,
nothing that came before can change what comes after (a report stays open for at most
MERGE_WINDOW_LINES lines, a consequence looks back three, a continuation three, an EH block
closes after twelve), so a worker that starts there with fresh state reads exactly what one
reader going through the whole file would. What does carry on (the months syslog stamps run
through, counts, records) is joined in file order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from ..inputs.chunks import DEFAULT_CHUNK_SIZE, detect_compression
from .clock import SourceClock
from .enrich import enrich_event, has_raw_fields
from ..errors import PartialRead
from .events import IDENTITY_FIELDS, MERGE_WINDOW_LINES, NON_EVENT_KINDS
from ..inputs.limits import Limits
from .plans import PlanHit
from .reader import (MAX_OUT_OF_RANGE_NAMED, MAX_UNPARSED_SAMPLES, LogReader, LogReadResult, Segment, header_style,
                     out_of_range_warnings, terminal_escape_warnings)
from .observations import EH_BLOCK_GAP_LINES, PrintoutCollector, SequenceLinks
from .prefilter import Prefilter
from .records import RecordBuilder, join_records, records_as_events, shift_runs
from ..inputs.safeio import looks_like_text
from .stitch import MAY_OPEN, Stitcher

# Lines without a candidate that make a safe place to cut a log (see the module docstring).
SYNC_GAP_LINES = 16
assert SYNC_GAP_LINES > max(MERGE_WINDOW_LINES, EH_BLOCK_GAP_LINES) + 3
# A file is cut only into segments at least this large: each costs a worker some warming up.
SEGMENT_MIN_BYTES = 64 << 20
_SYNC_SEARCH_BYTES = 4 << 20
_SYNC_SEARCH_LIMIT = 64 << 20
# Notes a file gets once (chunks._Notes kinds), which each segment would otherwise give again.
_ONCE_PER_FILE = ("holds NUL bytes", "holds bytes that are not UTF-8", "line of at least")


@dataclass
class LogSourceResult:
    records: list[dict]
    read: LogReadResult
    events: int = 0                      # events counted (topology lines such as attach are not events)
    sequence: SequenceLinks = field(default_factory=SequenceLinks)
    printouts: list = field(default_factory=list)


@dataclass
class SegmentRead:
    """What one worker read of one segment: joined with the other segments by join_segments."""

    records: list
    read: LogReadResult
    events: int
    sequence: SequenceLinks
    printouts: list
    runs: list[int]
    last_month_day: tuple[int, int] | None
    capped: bool


class _Reading:
    """The pipeline state one reading carries from line to line."""

    def __init__(self, name: str, limits: Limits, keep_each: bool):
        self.name = name
        self.limits = limits
        self.keep_each = keep_each
        self.stitcher = Stitcher()
        self.clock = SourceClock(name)
        self.sequence = SequenceLinks()
        self.printouts = PrintoutCollector()
        self.builder = RecordBuilder(name, keep_each=keep_each, max_records=limits.max_events)
        self.counted = 0
        self.capped = False
        self._standalone: dict[int, bool] = {}   # plan serial -> its events stand alone

    def run(self, events, read: LogReadResult) -> None:
        stitcher, builder = self.stitcher, self.builder
        for item in events:
            if item.__class__ is PlanHit:
                standalone = self._standalone.get(item.plan.serial)
                if standalone and not self.sequence.wants_all and not self.printouts.open:
                    self._take_standalone(item)
                    if builder.full:
                        self._cap(read, item.line)
                        break
                    continue
                event = item.event()
                if standalone is None:
                    self._standalone[item.plan.serial] = _stands_alone(event) and not self.keep_each
            else:
                event = item
            line = event["line"]   # the stitcher owns the event from here on, and may fold it away
            for report in stitcher.feed(event, owned=True):  # made for it (PlanHit.event) or by the reader
                self._take(report)
            if builder.full:
                self._cap(read, line)
                break
        for report in self.stitcher.close():
            self._take(report)
        self.sequence.close()

    def _cap(self, read: LogReadResult, line: int) -> None:
        what = "events" if self.keep_each else "distinct events"
        read.warnings.append(PartialRead(
            f"{self.name}: over {self.limits.max_events} {what} held for this source (the events "
            f"cap, see --max-events); stopped reading after line {line}"))
        read.lines = read.lines or line
        self.capped = True

    def _take_standalone(self, hit: PlanHit) -> None:
        """A line a plan read whose event opens no report, joins none and has nothing to decode or
        to tell the observers: what stitch, stamp and fold would do to it, done directly."""
        kind = hit.fields["kind"]
        stitcher = self.stitcher
        if stitcher.has_open:
            for report in stitcher.pass_alone(kind, hit.line):
                self._take(report)
        consequence = stitcher.is_consequence(kind, hit.line)
        when, second = self.clock.stamped(hit.when)
        if kind not in NON_EVENT_KINDS:
            self.counted += 1
        self.builder.add_hit(hit, consequence, when, second)

    def _take(self, report: dict) -> None:
        self.clock.stamp(report)
        enrich_event(report)
        if self.sequence.wants(report):
            self.sequence.feed(report)
        kind = report["kind"]
        if kind in PrintoutCollector.KINDS or self.printouts.open:
            self.printouts.feed(report)
        if kind not in NON_EVENT_KINDS:
            self.counted += report.get("repeat") or 1
        self.builder.add(report)


def _stands_alone(event: dict) -> bool:
    """An event that no stage but the fold has anything to do with: it opens or joins no report
    (stitch), holds nothing to decode (enrich), tells the observers nothing (an ATA port, a command
    address, a RAID printout line), and names its device."""
    return (event["kind"] not in MAY_OPEN and not has_raw_fields(event) and "ata_port" not in event
            and "scmd" not in event and event["kind"] not in PrintoutCollector.KINDS
            and any(event.get(f) is not None for f in IDENTITY_FIELDS))


def read_log_source(path, name: str, report_date: datetime | None, limits: Limits | None = None,
                    keep_each: bool = False, reader: LogReader | None = None,
                    chunk_size: int = DEFAULT_CHUNK_SIZE) -> LogSourceResult:
    limits = limits or Limits()
    reader = reader or LogReader(limits=limits)
    read = LogReadResult()
    reading = _Reading(name, limits, keep_each)
    reading.run(reader.iter_events(path, name, read, chunk_size=chunk_size), read)
    read.warnings += out_of_range_warnings(name, read) + terminal_escape_warnings(name, read)
    records = reading.builder.finish(reading.clock.resolver(report_date))
    return LogSourceResult(records=records, read=read, events=reading.counted, sequence=reading.sequence,
                           printouts=reading.printouts.printouts)


def read_log_segment(path, name: str, segment: Segment, limits: Limits, keep_each: bool = False,
                     chunk_size: int = DEFAULT_CHUNK_SIZE, reader: LogReader | None = None) -> SegmentRead:
    reader = reader or LogReader(limits=limits)
    read = LogReadResult()
    reading = _Reading(name, limits, keep_each)
    reading.run(reader.iter_events(path, name, read, chunk_size=chunk_size, segment=segment), read)
    return SegmentRead(records=reading.builder.records(), read=read, events=reading.counted,
                       sequence=reading.sequence, printouts=reading.printouts.printouts,
                       runs=reading.clock.runs, last_month_day=reading.clock.last_month_day,
                       capped=reading.capped)


def join_segments(name: str, parts: list[SegmentRead], report_date: datetime | None,
                  keep_each: bool = False) -> LogSourceResult:
    """The segments of one file, in file order, as if one reader had read it whole."""
    clock = SourceClock(name)
    read = LogReadResult(header_style=parts[0].read.header_style)
    sequence = SequenceLinks()
    records, printouts, events = [], [], 0
    given: set[str] = set()
    for part in parts:
        records += shift_runs(part.records, len(clock.runs))
        clock.runs += part.runs
        clock.last_month_day = part.last_month_day or clock.last_month_day
        sequence.merge(part.sequence)
        printouts += part.printouts
        events += part.events
        read.lines = part.read.lines or read.lines
        read.unparsed_candidates += part.read.unparsed_candidates
        read.kernel.join(part.read.kernel)
        read.unparsed_samples += part.read.unparsed_samples[:MAX_UNPARSED_SAMPLES - len(read.unparsed_samples)]
        read.out_of_range += part.read.out_of_range
        read.terminal_escapes += part.read.terminal_escapes
        read.out_of_range_samples += part.read.out_of_range_samples[
            :MAX_OUT_OF_RANGE_NAMED - len(read.out_of_range_samples)]
        for warning in part.read.warnings:
            once = next((phrase for phrase in _ONCE_PER_FILE if phrase in warning), None)
            if once is None or once not in given:
                read.warnings.append(warning)
                given.add(once)
    read.warnings += out_of_range_warnings(name, read) + terminal_escape_warnings(name, read)
    joined = records if keep_each else join_records(records)
    return LogSourceResult(records=records_as_events(joined, name, clock.resolver(report_date)), read=read,
                           events=events, sequence=sequence, printouts=printouts)


def plan_segments(path, name: str, workers: int, prefilter: Prefilter, limits: Limits,
                  min_bytes: int = SEGMENT_MIN_BYTES) -> list[Segment] | None:
    """Where to cut one plain log for `workers` workers; None when it is better read whole
    (compressed, small, over the size cap, or with no quiet place to cut)."""
    try:
        with open(path, "rb") as stream:
            size = stream.seek(0, 2)
            stream.seek(0)
            start_of_file = stream.read(65536)
            if (size < 2 * min_bytes or size > limits.max_file_bytes or detect_compression(start_of_file)
                    or not start_of_file or not looks_like_text(start_of_file)):
                return None
            headered, style = header_style(start_of_file)
            count = min(2 * workers, size // min_bytes)
            cuts = [0]
            for index in range(1, count):
                cut = _quiet_line_start(stream, size * index // count, prefilter)
                if cut is not None and cut - cuts[-1] >= min_bytes // 2 and size - cut >= min_bytes // 2:
                    cuts.append(cut)
            if len(cuts) == 1:
                return None
            cuts.append(size)
            lines = _lines_before(stream, cuts)
            segments = []
            for index, (start, stop) in enumerate(zip(cuts, cuts[1:])):
                segments.append(Segment(start=start, stop=stop, first_line=lines[index] + 1,
                                        before=_lines_before_offset(stream, start), headered=headered,
                                        header_style=style))
            return segments
    except OSError:
        return None


def _quiet_line_start(stream, offset: int, prefilter: Prefilter) -> int | None:
    """The offset of the first line at or after `offset` that follows SYNC_GAP_LINES lines with no
    candidate line (searched at most _SYNC_SEARCH_LIMIT bytes on); None when there is none."""
    searched = 0
    stream.seek(offset)
    block = stream.read(_SYNC_SEARCH_BYTES)
    first_newline = block.find(b"\n")
    if first_newline < 0:
        return None
    base = offset + first_newline + 1
    while searched < _SYNC_SEARCH_LIMIT:
        stream.seek(base)
        block = stream.read(_SYNC_SEARCH_BYTES)
        end = block.rfind(b"\n") + 1
        if end == 0:
            return None
        block = block[:end]
        quiet_from = 0   # index of the first line after the last candidate line seen
        for _, _, _, index in prefilter.numbered_candidate_lines(block):
            if index - quiet_from >= SYNC_GAP_LINES:
                break
            quiet_from = index + 1
        else:
            if block.count(b"\n") - quiet_from < SYNC_GAP_LINES:
                searched += end
                base += end
                continue
        position = -1
        for _ in range(quiet_from + SYNC_GAP_LINES):
            position = block.find(b"\n", position + 1)
        return base + position + 1
    return None


def _lines_before(stream, cuts: list[int]) -> list[int]:
    """The number of lines before each cut (cuts in order, the first is 0)."""
    counts, lines, position = [], 0, 0
    for cut in cuts:
        stream.seek(position)
        while position < cut:
            block = stream.read(min(16 << 20, cut - position))
            if not block:
                break
            lines += block.count(b"\n")
            position += len(block)
        counts.append(lines)
    return counts


def _lines_before_offset(stream, offset: int, lines: int = 4) -> bytes:
    if offset == 0:
        return b""
    stream.seek(max(0, offset - 65536))
    before = stream.read(offset - max(0, offset - 65536))
    if offset > 65536:  # the first line read may be cut short: keep complete lines only
        before = before[before.find(b"\n") + 1:]
    return before
