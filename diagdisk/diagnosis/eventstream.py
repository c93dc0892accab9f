"""`diagdisk events`: every event written as soon as it is read, in flat memory.

The analysis folds a log's events into records; listing each event the same way held all of them
(and a table of them) until the end: 13 GB for a 300 MB storm, and nothing written before. Here
each event goes out as the log reader hands it over (stitched, decoded, dated, tied to its device),
and nothing of it is kept, so memory does not grow with the log, the first line comes out at once,
and a reader that goes away (`| head -1`) ends the reading (the writer's BrokenPipeError is let
through to the command).

What an event needs that a log only says later is got first, cheaply:

* the devices: the command outputs of the input (lsscsi, /proc/scsi/scsi, lsblk, by-id, mdstat,
  multipath, smartctl) are read before the logs, and each event is tied to its device from them
  and from its own line (a line naming both H:C:T:L and sdX);
* the year of a BSD syslog stamp: it follows from the months of the whole file, anchored on the
  report date at its end (logs.clock). At the first such stamp, `month_runs` reads the file's line
  heads once (a C regular expression over each chunk, no grammar) for the sequence of months; logs
  with full dates (RFC 3339, dmesg -T) or uptime stamps need no such pass.

An event is tied to its device by the command outputs and by the lines before it: a link only a
later line shows (a libata port's first link-up line, before the error handling that names its
disk) is not known yet, where the analysis, which reads the whole log first, would use it.

The logs are read one after the other in this process (in the order the analysis reads them), so
the listing comes out in order; `--jobs` does not apply.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..errors import InputError
from ..inputs.chunks import DEFAULT_CHUNK_SIZE, iter_chunks
from ..inputs.limits import Limits
from ..logs.clock import TimeResolver, runs_rollovers
from ..logs.events import EVENT_FIELDS, NON_EVENT_KINDS
from ..logs.framing import MONTHS
from ..logs.reader import LogReader, LogReadResult, out_of_range_warnings
from ..logs.source import _Reading

# the columns of the listing, in order: where and when, what, which device, then every other field
LEAD_COLUMNS = ("source", "line", "time", "kind", "detail", "unit", "hctl", "device")
DECODED_COLUMNS = ("sense_key_name", "asc_ascq", "asc_text")
COLUMNS = (LEAD_COLUMNS + tuple(f for f in EVENT_FIELDS if f not in LEAD_COLUMNS and f != "raw")
           + DECODED_COLUMNS + ("raw",))

# A BSD syslog stamp at the start of a line (after an optional <priority>): its month and day.
_BSD_STAMP = re.compile(rb"^(?:<\d{1,3}>)?(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(\d{1,2}) \d\d:\d\d:\d\d",
                        re.MULTILINE)


@dataclass
class MonthRuns:
    """The month runs of a log's BSD stamps: the first line of each run and its month, and the
    month and day of the last stamp."""

    first_lines: list[int] = field(default_factory=list)
    months: list[int] = field(default_factory=list)
    last_month_day: tuple[int, int] | None = None

    def resolver(self, name: str, report_date: datetime | None) -> TimeResolver:
        final_year = None
        if self.last_month_day is not None:
            anchor = report_date or datetime.now(timezone.utc)
            final_year = anchor.year if self.last_month_day <= (anchor.month, anchor.day) else anchor.year - 1
        return TimeResolver(name, final_year, runs_rollovers(self.months))

    def run_of(self, line: int) -> int:
        return max(bisect.bisect_right(self.first_lines, line) - 1, 0)


def month_runs(path, name: str, limits: Limits, chunk_size: int = DEFAULT_CHUNK_SIZE) -> MonthRuns:
    """The month runs of the BSD syslog stamps of a log (none for a log without them)."""
    runs = MonthRuns()
    last_month = None
    for chunk, first_line in iter_chunks(path, chunk_size, [], name=name, max_line_bytes=limits.max_line_bytes,
                                         max_bytes=limits.max_file_bytes):
        line, position = first_line, 0
        for match in _BSD_STAMP.finditer(chunk):
            line += chunk.count(b"\n", position, match.start())
            position = match.start()
            month = MONTHS[match.group(1).decode()]
            if month != last_month:
                runs.first_lines.append(line)
                runs.months.append(month)
                last_month = month
            runs.last_month_day = (month, int(match.group(2)))
    return runs


class _Emitter:
    """Stands where the record builder stands in the log reading: each event is made a row and
    written at once, then dropped."""

    def __init__(self, name: str, emit, month_runs_of, report_date, topology, window, max_events: int | None):
        self.name = name
        self.emit = emit
        self.month_runs_of = month_runs_of   # () -> MonthRuns, read when the first BSD stamp comes
        self.report_date = report_date
        self.runs: MonthRuns | None = None
        self.resolver = TimeResolver(name, None, [])
        self.topology = topology
        self.low, self.high = window
        self.max_events = max_events
        self.events = 0
        self.unplaced = 0
        self.full = False
        self.sequence = None        # the reading's SequenceLinks: what the order of the lines showed
        self._linked: set[tuple[str, str]] = set()

    def add(self, event: dict) -> None:
        when = event.pop("_when", None)
        for private in ("_sec", "_signature"):
            event.pop(private, None)
        count = event.pop("repeat", None) or 1
        self.events += 1
        self.full = self.max_events is not None and self.events >= self.max_events
        clock = when[0] if when else "none"
        time = t = None
        if when is not None:
            if clock == "mdt":
                if self.runs is None:
                    self.runs = self.month_runs_of()
                    self.resolver = self.runs.resolver(self.name, self.report_date)
                when = ("mdt", self.runs.run_of(event["line"]), *when[2:])
            time, t = self.resolver.when(when)
        event["source"] = self.name
        event["time"], event["t"] = time, t
        event["repeat"] = count
        event["clock"] = self.resolver.clock_name(clock)
        event["time_quality"] = self.resolver.quality(clock) if t is not None else "none"
        if self.topology is not None:
            self._learn(event)
            self.topology.resolve(event)
        if not self._inside(event):
            return
        self.emit(event)

    def _learn(self, event: dict) -> None:
        """What the analysis learns from all events of a log, learnt from those read so far: an
        event is tied to its device by the lines before it (a later line cannot help it here)."""
        topology = self.topology
        hctl, device = event.get("hctl"), event.get("device")
        if hctl and device and (hctl, device) not in self._linked:
            self._linked.add((hctl, device))
            topology.link(hctl, device, f"{self.name}:{event['line']}")
        if event.get("pci") and event.get("host") is not None:
            topology.pci_to_host.setdefault(event["pci"], event["host"])
        if self.sequence is not None and ("ata_port" in event or "scmd" in event):
            topology._learn_sequences([self.sequence])

    def add_hit(self, hit, consequence, when, second) -> None:   # never called: every event is kept whole
        raise AssertionError("a listing reads every event whole")

    def _inside(self, event: dict) -> bool:
        if self.low is None and self.high is None:
            return True
        if event["clock"] != "wall":
            if event["kind"] in NON_EVENT_KINDS:
                return True   # a line that only identifies a device reports nothing
            self.unplaced += event["repeat"]
            return False
        t = event["t"]
        return t is not None and (self.low is None or t >= self.low) and (self.high is None or t <= self.high)


def stream_log(source, report_date, limits: Limits, emit, topology=None, window=(None, None),
               chunk_size: int = DEFAULT_CHUNK_SIZE) -> tuple[LogReadResult, int, int]:
    """Read one log source and emit each of its events as a row (a dict of the event's fields);
    (what the reader counted and warned of, events read, events left out as not placed in time)."""
    read = LogReadResult()
    emitter = _Emitter(source.name, emit, lambda: month_runs(source.path, source.name, limits, chunk_size),
                       report_date, topology, window, limits.max_events)
    reading = _Reading(source.name, limits, keep_each=True)
    reading.builder = emitter
    emitter.sequence = reading.sequence
    reader = LogReader(limits=limits)
    reading.run(reader.iter_events(source.path, source.name, read, chunk_size=chunk_size), read)
    read.warnings += out_of_range_warnings(source.name, read)
    return read, emitter.events, emitter.unplaced


def event_row(event: dict) -> dict:
    """The listing's row of one event: its declared fields and what its sense codes mean."""
    from ..decode.asc_ascq import describe
    from ..decode.sense import SENSE_KEY_NAMES

    row = {name: event.get(name) for name in COLUMNS if name not in DECODED_COLUMNS}
    key, asc, ascq = event.get("sense_key"), event.get("asc"), event.get("ascq")
    row["sense_key_name"] = SENSE_KEY_NAMES.get(key) if key is not None else None
    if asc is not None and ascq is not None:
        row["asc_ascq"] = f"{asc:02X}/{ascq:02X}"
        row["asc_text"] = describe(asc, ascq)
    else:
        row["asc_ascq"] = row["asc_text"] = None
    return row


def stream_host(analysis, log_sources, emit, window=(None, None), chunk_size: int = DEFAULT_CHUNK_SIZE) -> None:
    """Emit the rows of every event of one host's log sources, in the analysis' order; each
    source's warnings go to its SourceReport (already in analysis.sources)."""
    reports = {(report.origin, report.name): report for report in analysis.sources}
    unplaced = 0
    for source in log_sources:
        report = reports[(source.origin, source.name)]
        analysis.progress.source(source.name)
        try:
            read, events, left_out = stream_log(source, analysis.report_date, analysis.limits,
                                                lambda event: emit(event_row(event)), analysis.topology, window,
                                                chunk_size)
        except InputError as exc:
            from ..errors import PartialRead
            report.warnings.append(PartialRead(exc.one_line()))
            continue
        report.lines, report.events = read.lines, events
        report.warnings.extend(read.warnings)
        unplaced += left_out
    if unplaced:
        analysis.warnings.append(f"{unplaced} events have no wall-clock time (a dmesg timed only since boot); "
                                 f"--since/--until cannot place them, so they are left out")


def prepare_listing(inputs, limits: Limits, strict: bool, single_input: bool, progress=None, notes=None):
    """One host's inputs made ready for listing: what analyze_opened does but reading the logs
    (their sources found, the metadata and command outputs read, the device table built from
    those); (the analysis, its log sources to stream, in the order the analysis reads them)."""
    from .analysis import (Analysis, _build_topology, _check_found, _input_warnings, _read_metadata,
                           _read_sources, discover)
    from ..progress import Progress

    paths = [path for path, _ in inputs]
    analysis = Analysis(input=", ".join(paths), limits=limits, strict=strict, progress=progress or Progress(),
                        notes=list(notes or []))
    sources = []
    for path, opened in inputs:
        found = discover(opened.root, opened.files, multiple=len(paths) > 1 or len(opened.files) == 1,
                         file_warnings=opened.file_warnings)
        _check_found(opened, found, path, single_input=single_input)
        analysis.warnings.extend(_input_warnings(opened, found))
        for source in found:
            source.origin = path
        sources.extend(found)
    sources.sort(key=lambda s: (s.format, s.rotation_key, s.name, s.origin))
    _read_metadata(analysis, sources)
    logs = [source for source in sources if source.format == "log"]
    _read_sources(analysis, [source for source in sources if source.format != "log"], 1, True,
                  DEFAULT_CHUNK_SIZE, 0)
    from .analysis import SourceReport
    for source in logs:
        report = SourceReport(name=source.name, format=source.format, warnings=list(source.warnings),
                              origin=source.origin, duplicate_of=source.duplicate_of)
        analysis.sources.append(report)
    _build_topology(analysis)
    return analysis, [source for source in logs if not source.duplicate_of]
