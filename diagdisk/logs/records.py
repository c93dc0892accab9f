"""Events folded into records: one per distinct event signature, however often it occurred.

A dying disk writes the same few messages millions of times; what tells the engineer which part to
replace is which messages, about which device, how many and when, not each copy. A record holds
the fields every event of its signature shares, with:

- `repeat`: how many events it stands for;
- `line`, `raw`, `time`, `t`: those of its first event (the earliest line of the source);
- `_runs`: [(second, count)] on the record's clock, for time windows and the timeline;
- `_samples`: [(line, raw)] of its first MAX_SAMPLES events, for evidence;
- `_sectors`: the distinct sectors its events named (the smallest MAX_RECORD_SECTORS);
- `_first`, `_last`: ISO times of its earliest and latest event (None without a wall clock).

Memory grows with the number of distinct signatures and the seconds in which they occurred, not
with the number of lines. The signature leaves out what changes from one copy of a message to the
next (VOLATILE_FIELDS: the line, its raw text, time, sector, tag, the CDB bytes that carry the
LBA), and counts the free text a message carries (`text`: an inode, a block, a return address)
with its numbers generalised: a record shows the text of its first event, its samples the others.
With `keep_each` every event is its own record with all its fields (`diagdisk events`).
"""

from __future__ import annotations

import re
from array import array

from .clock import DAY, RUN_SPAN, TimeResolver

VOLATILE_FIELDS = frozenset({
    "source", "line", "raw", "time", "t", "clock", "time_quality", "sector", "cdb_lba", "tag",
    "cdb_hex", "sense_hex", "taskfile", "scmd", "repeat"})
MAX_SAMPLES = 20
MAX_RECORD_SECTORS = 1000
# A record's per-second counts are folded to one per distinct second when they reach this many.
_COMPACT_SECONDS_AT = 65536
# The exact keys (fields as the events held them) found records by: a cache, emptied when this large.
_MAX_EXACT_KEYS = 65536
# A word of free text holding a digit (a number, a hex address): one placeholder in a signature.
# Tried only where a run of hex characters begins: from every position inside a long run of hex
# letters ("AAAA...", a corrupted line) the search would scan the rest of the run, a square of its length.
_NUMBERED_WORD = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]*[0-9][0-9a-fA-F]*")


def signature(clock: str, fields: dict) -> tuple:
    """What records of one signature share, whatever order their fields came in."""
    items = fields.items()
    text = fields.get("text")
    if isinstance(text, str):
        items = [(name, _NUMBERED_WORD.sub("#", value) if name == "text" else value) for name, value in items]
    return clock, frozenset(items)


class _Record:
    __slots__ = ("fields", "count", "first_line", "samples", "sectors", "seconds", "counts",
                 "ends", "clock", "compact_at")

    def __init__(self, fields: dict, first_line: int, clock: str):
        self.fields = fields
        self.count = 0
        self.first_line = first_line
        self.samples: list[tuple[int, str]] = []
        self.sectors: set[int] = set()        # pruned to the smallest MAX_RECORD_SECTORS
        self.seconds = array("q")
        self.counts = array("q")
        # (second, line, when) of the earliest and latest event, per syslog month run: seconds of
        # one run compare as times do, those of different runs only once their years are known
        self.ends: dict[int | None, list] = {}
        self.clock = clock
        self.compact_at = _COMPACT_SECONDS_AT

    def take(self, count: int, line: int, raw: str | bytes, sector: int | None, second: int | None,
             when: tuple | None) -> None:
        """Count `count` events of this record, first seen on `line`."""
        self.count += count
        if len(self.samples) < MAX_SAMPLES:
            self.samples.append((line, raw.decode() if isinstance(raw, bytes) else raw))
        if sector is not None:
            self.sectors.add(sector)
            if len(self.sectors) > 2 * MAX_RECORD_SECTORS:
                _prune(self.sectors)
        if second is not None:
            if self.seconds and self.seconds[-1] == second:
                self.counts[-1] += count
            else:
                self.seconds.append(second)
                self.counts.append(count)
                if len(self.seconds) >= self.compact_at:
                    self._compact_seconds()
            self.note_time(second, line, when)

    def _compact_seconds(self) -> None:
        """One entry per distinct second: a log whose times go back and forth (a clock set back
        again and again, lines out of order) would otherwise add one per line."""
        import numpy

        distinct, totals = _summed_by_value(numpy.frombuffer(self.seconds, dtype=numpy.int64),
                                            numpy.frombuffer(self.counts, dtype=numpy.int64))
        self.seconds, self.counts = array("q", distinct.tobytes()), array("q", totals.tobytes())
        if 2 * len(distinct) > self.compact_at:  # mostly distinct: compacting again soon would not pay
            self.compact_at *= 2

    def note_time(self, second: int, line: int, when: tuple) -> None:
        run = when[1] if when[0] == "mdt" else None
        ends = self.ends.get(run)
        if ends is None:
            self.ends[run] = [(second, line, when), (second, line, when)]
            return
        first, last = ends
        # (second, line) compared with the ends' as tuples would be, without making the tuples
        if second < first[0] or second == first[0] and line < first[1]:
            ends[0] = (second, line, when)
        if second > last[0] or second == last[0] and line > last[1]:
            ends[1] = (second, line, when)

    def merge(self, other: "_Record") -> None:
        """Take in a record of the same signature (from other lines of the same source)."""
        self.count += other.count
        self.first_line = min(self.first_line, other.first_line)
        self.samples = sorted(self.samples + other.samples)[:MAX_SAMPLES]
        self.sectors |= other.sectors
        _prune(self.sectors)
        self.seconds.extend(other.seconds)
        self.counts.extend(other.counts)
        for first, last in other.ends.values():
            self.note_time(*first)
            self.note_time(*last)


def _prune(sectors: set[int]) -> None:
    if len(sectors) > MAX_RECORD_SECTORS:
        keep = set(sorted(sectors)[:MAX_RECORD_SECTORS])
        sectors.intersection_update(keep)


class RecordBuilder:
    """Folds the (stitched, enriched) events of one source into records."""

    def __init__(self, source: str, keep_each: bool = False, max_records: int | None = None):
        self.source = source
        self.keep_each = keep_each
        self.max_records = max_records
        self._records: dict[tuple, _Record] = {}   # by signature()
        self._exact: dict[tuple, _Record] = {}     # by the fields as an event held them
        self._each: list[_Record] = []
        self.events = 0
        self._note_held(0)  # sets `full`: True once max_records records are held (the caller stops)

    def _note_held(self, held: int) -> None:
        # `full` is read after every event: kept as a plain attribute, set as records are made
        self.full = self.max_records is not None and held >= self.max_records

    def add(self, event: dict) -> None:
        """Fold in one event; the dict is taken apart (its volatile fields are removed).

        Records are found by the event's fields in the order the dict holds them, which is cheap,
        and only when that is new by their signature()."""
        when = event.pop("_when", None)
        second = event.pop("_sec", None)
        plan_signature = event.pop("_signature", None)
        clock = when[0] if when else "none"
        count = event.pop("repeat", None) or 1
        self.events += count
        line, raw = event["line"], event["raw"]
        sector = event.get("sector")
        if self.keep_each:
            del event["source"], event["raw"]
            record = _Record(event, line, clock)
            self._each.append(record)
            self._note_held(len(self._each))
        else:
            if plan_signature is None:
                for name in VOLATILE_FIELDS.intersection(event):
                    del event[name]
                key = (clock, *event.items())
            else:
                key = (clock, plan_signature)
            record = self._exact.get(key)
            if record is None:
                if plan_signature is not None:
                    for name in VOLATILE_FIELDS.intersection(event):
                        del event[name]
                record = self._record_for(key, clock, event, line)
        record.take(count, line, raw, sector, second, when)

    def add_hit(self, hit, consequence: bool, when: tuple | None, second: int | None) -> None:
        """Fold in a line a plan read and that stands alone (logsource._stands_alone): the same
        record add() would find for its event, found by the plan and its texts."""
        clock = when[0] if when else "none"
        self.events += 1
        key = (clock, "plan", hit.plan.serial, hit.key, consequence)
        record = self._exact.get(key)
        if record is None:
            fields = dict(hit.fields)
            if consequence:
                fields["consequence"] = True
            record = self._record_for(key, clock, fields, hit.line)
        record.take(1, hit.line, hit.raw, hit.sector, second, when)

    def _record_for(self, key: tuple, clock: str, fields: dict, line: int) -> _Record:
        """The record of these fields' signature (a new one if none yet), found next by `key`."""
        canonical = signature(clock, fields)
        record = self._records.get(canonical)
        if record is None:
            record = self._records[canonical] = _Record(fields, line, clock)
            self._note_held(len(self._records))
        if len(self._exact) >= _MAX_EXACT_KEYS:
            self._exact.clear()
        self._exact[key] = record
        return record

    def records(self) -> list[_Record]:
        """One record per signature (or per event with keep_each), by first line."""
        if self.keep_each:
            return list(self._each)
        return sorted(self._records.values(), key=lambda record: record.first_line)

    def finish(self, resolver: TimeResolver) -> list[dict]:
        """The records as event dicts, by first line, with their times resolved."""
        return records_as_events(self.records(), self.source, resolver)


def join_records(records) -> list[_Record]:
    """Records of one source with the same signature joined into one, by first line."""
    joined: dict[tuple, _Record] = {}
    for record in records:
        key = signature(record.clock, record.fields)
        known = joined.get(key)
        if known is None:
            joined[key] = record
        else:
            known.merge(record)
    return sorted(joined.values(), key=lambda r: r.first_line)


def records_as_events(records: list[_Record], source: str, resolver: TimeResolver) -> list[dict]:
    return [_as_event(record, source, resolver) for record in records]


def shift_runs(records: list[_Record], offset: int) -> list[_Record]:
    """The records of a segment whose syslog month runs come after `offset` runs of the segments
    before it: their stamps renumbered to count runs from the start of the file."""
    if not offset:
        return records
    for record in records:
        if record.clock != "mdt":
            continue
        shift = offset * RUN_SPAN
        record.seconds = array("q", (second + shift for second in record.seconds))
        record.ends = {run + offset: [(second + shift, line, ("mdt", when[1] + offset, *when[2:]))
                                      for second, line, when in ends]
                       for run, ends in record.ends.items()}
    return records


class Runs:
    """A record's [(second, count)] in time order, held as two arrays: a storm's record holds a
    point for every second it went on (1.6 million on the 1 GB storm), and as a list of tuples
    each took some 90 bytes where the arrays take 16. Reads as that list does: len, iteration
    over (second, count) pairs, indexing, comparison, numpy.array(runs)."""

    __slots__ = ("times", "counts")

    def __init__(self, times: array, counts: array):
        self.times = times      # array("d")
        self.counts = counts    # array("q")

    def __len__(self) -> int:
        return len(self.times)

    def __iter__(self):
        return zip(self.times, self.counts)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return list(zip(self.times[index], self.counts[index]))
        return self.times[index], self.counts[index]

    def __eq__(self, other) -> bool:
        if isinstance(other, Runs):
            return self.times == other.times and self.counts == other.counts
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def __array__(self, dtype=None, copy=None):
        import numpy

        points = numpy.empty((len(self.times), 2), dtype=float)
        points[:, 0] = numpy.frombuffer(self.times, dtype=float) if self.times else ()
        points[:, 1] = numpy.frombuffer(self.counts, dtype=numpy.int64) if self.counts else ()
        return points if dtype is None else points.astype(dtype)

    def __repr__(self) -> str:
        return repr(list(self))


def _runs(record: _Record, resolver: TimeResolver) -> "Runs | list":
    """[(second on the record's clock, count)] in time order (Runs; [] when the record has no
    times): a storm's record holds a second for every second it went on, so this works on whole
    arrays."""
    import numpy

    if not record.seconds:
        return []
    seconds = numpy.frombuffer(record.seconds, dtype=numpy.int64)
    counts = numpy.frombuffer(record.counts, dtype=numpy.int64)
    if record.clock == "mdt":
        days, within_day = numpy.divmod(seconds, DAY)
        unique_days, day_of = numpy.unique(days, return_inverse=True)
        starts = numpy.array([resolver.day_start(day) for day in unique_days.tolist()], dtype=float)
        times = starts[day_of] + within_day
        known = ~numpy.isnan(times)
        times, counts = times[known], counts[known]
    else:
        times = seconds.astype(float)
    distinct, totals = _summed_by_value(times, counts)
    if not len(distinct):
        return []
    return Runs(array("d", distinct.astype(float).tobytes()), array("q", totals.astype(numpy.int64).tobytes()))


def _summed_by_value(values, counts):
    """(the distinct values in order, the sum of the counts of each), as numpy arrays."""
    import numpy

    distinct, which = numpy.unique(values, return_inverse=True)
    return distinct, numpy.bincount(which, weights=counts, minlength=len(distinct)).astype(numpy.int64)


def _as_event(record: _Record, source: str, resolver: TimeResolver) -> dict:
    event = dict(record.fields)
    event["source"] = source
    event["line"], event["raw"] = record.samples[0]
    event["repeat"] = record.count
    first = last = None
    for end in (end for ends in record.ends.values() for end in ends):
        time, t = resolver.when(end[2])
        if t is None:
            continue
        if first is None or (t, end[1]) < first[2]:
            first = (time, t, (t, end[1]))
        if last is None or (t, end[1]) > last[2]:
            last = (time, t, (t, end[1]))
    event["time"] = first[0] if first else None
    event["t"] = first[1] if first else None
    event["clock"] = resolver.clock_name(record.clock)
    event["time_quality"] = resolver.quality(record.clock) if first else "none"
    event["_first"] = first[0] if first else None
    event["_last"] = last[0] if last else None
    event["_runs"] = _runs(record, resolver)
    event["_samples"] = record.samples
    _prune(record.sectors)
    event["_sectors"] = sorted(record.sectors)
    return event
