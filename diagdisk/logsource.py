"""One kernel-log source, end to end: lines -> events -> merged reports -> times, decoded -> records.

This is the unit of work the analysis runs in parallel: a source is read start to finish by one
worker, which hands back its records (diagdisk.records), its counts and warnings, and what the
order of its events showed about the topology (SequenceLinks) and md arrays (RAID printouts).
Everything here streams: memory holds a chunk of text and the records, never every event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .clock import SourceClock
from .enrich import enrich_event
from .errors import PartialRead
from .events import NON_EVENT_KINDS
from .limits import Limits
from .logread import LogReader, LogReadResult
from .mdlog import PrintoutCollector
from .records import RecordBuilder
from .stitch import Stitcher
from .topology import SequenceLinks


@dataclass
class LogSourceResult:
    records: list[dict]
    read: LogReadResult
    events: int = 0                      # events counted (topology lines such as attach are not events)
    sequence: SequenceLinks = field(default_factory=SequenceLinks)
    printouts: list = field(default_factory=list)


def read_log_source(path, name: str, report_date: datetime | None, limits: Limits | None = None,
                    keep_each: bool = False, reader: LogReader | None = None,
                    chunk_size: int = 16 << 20) -> LogSourceResult:
    limits = limits or Limits()
    reader = reader or LogReader(limits=limits)
    read = LogReadResult()
    stitcher = Stitcher()
    clock = SourceClock(name)
    sequence = SequenceLinks()
    printouts = PrintoutCollector()
    builder = RecordBuilder(name, keep_each=keep_each, max_records=limits.max_events)
    counted = 0

    def take(report: dict) -> None:
        nonlocal counted
        clock.stamp(report)
        enrich_event(report)
        if sequence.wants(report):
            sequence.feed(report)
        kind = report["kind"]
        if kind in PrintoutCollector.KINDS or printouts.open:
            printouts.feed(report)
        if kind not in NON_EVENT_KINDS:
            counted += report.get("repeat") or 1
        builder.add(report)

    for event in reader.iter_events(path, name, read, chunk_size=chunk_size):
        for report in stitcher.feed(event):
            take(report)
        if builder.full:
            what = "events" if keep_each else "distinct events"
            read.warnings.append(PartialRead(
                f"{name}: over {limits.max_events} {what} held for this source (the events cap, see "
                f"--max-events); stopped reading after line {event['line']}"))
            read.lines = read.lines or event["line"]
            break
    for report in stitcher.close():
        take(report)
    sequence.close()
    records = builder.finish(clock.resolver(report_date))
    return LogSourceResult(records=records, read=read, events=counted, sequence=sequence,
                           printouts=printouts.printouts)
