"""Cut an analysis to a time window (`analyze --since/--until`): the events of an incident only.

The window's ends are written the way the logs write times, so an engineer can paste them:

    2024-03-02, 2024-03-02 18:07, 2024-03-02T18:07:17.123+01:00   (RFC 3339, journal short-iso)
    Mar 2, Mar  2 18:07, Mar  2 18:07:17                          (BSD syslog, journal short)
    Sat Mar  2 18:07:17 2024, [Sat Mar  2 18:07:17 2024]          (dmesg -T)
    @1709402837                                                   (seconds since the epoch)
    30d, 12h, 90m, 2w                                             (that long before the report date)

Every command's time options take this one grammar (analyze and events --since/--until, collect
--since, fleet --since). A span counts back from the input's report date; for `collect`, whose
input is the live host, from now.

A time without a year (syslog) takes the year the logs' own syslog times are given: that of the
report date, or the year before when its month and day come later in the year. A time without a
zone is read as the logs' times without a zone are (as UTC). `--until` takes in all of what it
names: `--until 2024-03-02` ends at the end of that day, `--until "Mar 2 18:07"` at 18:07:59.

Each event record keeps the part of its counts inside the window (its per-second runs); one with
none inside is left out. A record timed only by uptime (a dmesg without wall-clock stamps) cannot
be placed, and is left out too, which coverage says. The evidence lines of a record are those of
its first lines inside the window when their stamps say so; a storm whose first lines all came
before the window keeps them, as the same message. Topology (which disk is where) comes from the
whole input, whatever the window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from ..errors import DiagdiskError
from ..logs.events import NON_EVENT_KINDS
from ..logs.framing import MONTHS, frame_line
from .coverage import Window


class WindowError(DiagdiskError):
    """A --since/--until value that names no time."""


_DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_MONTHS = "|".join(MONTHS)
_ISO = re.compile(
    r"(?P<year>\d{4})[-/](?P<month>\d\d)[-/](?P<day>\d\d)"
    r"(?:[T ](?P<hour>\d\d):(?P<minute>\d\d)(?::(?P<second>\d\d)(?P<frac>[.,]\d+)?)?)?"
    r" ?(?P<zone>Z|[+-]\d\d:?\d\d)?")
_SYSLOG = re.compile(
    rf"(?:(?:{_DAYS}),? +)?(?P<mon>{_MONTHS}) +(?P<day>\d{{1,2}})"
    r"(?: +(?P<hour>\d\d):(?P<minute>\d\d)(?::(?P<second>\d\d)(?P<frac>\.\d+)?)?)?"
    r"(?: +(?P<year>\d{4}))?")
_EPOCH = re.compile(r"@(?P<seconds>\d+(?:\.\d+)?)")
_AGO = re.compile(r"(?P<count>\d{1,6}) ?(?P<unit>w|weeks?|d|days?|h|hours?|m|min|minutes?|s|seconds?)")
_AGO_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


@dataclass(frozen=True)
class TimeSpec:
    """A time as the user wrote it: its fields, what it leaves open (year, zone) and its precision."""

    text: str
    year: int | None
    month: int
    day: int
    hour: int | None = None
    minute: int | None = None
    second: int | None = None
    microsecond: int = 0
    zone: timezone | None = None
    epoch: float | None = None
    ago: timedelta | None = None        # a span before the report date (30d)

    def start(self, report_date: datetime | None) -> datetime:
        """The first moment the spec names."""
        if self.epoch is not None:
            return datetime.fromtimestamp(self.epoch, timezone.utc)
        if self.ago is not None:
            anchor = report_date or datetime.now(timezone.utc)
            return (anchor if anchor.tzinfo else anchor.replace(tzinfo=timezone.utc)) - self.ago
        try:
            return datetime(self._year(report_date), self.month, self.day, self.hour or 0, self.minute or 0,
                            self.second or 0, self.microsecond, tzinfo=self.zone or timezone.utc)
        except ValueError:
            raise WindowError(f"{self.text!r} is no date (day {self.day} of month {self.month})") from None

    def end(self, report_date: datetime | None) -> datetime:
        """The last moment the spec names: the end of its day, minute or second."""
        start = self.start(report_date)
        if self.epoch is not None or self.ago is not None or self.microsecond:
            return start
        if self.hour is None:
            step = timedelta(days=1)
        elif self.second is None:
            step = timedelta(minutes=1)
        else:
            step = timedelta(seconds=1)
        return start + step - timedelta(microseconds=1)

    def _year(self, report_date: datetime | None) -> int:
        if self.year is not None:
            return self.year
        anchor = report_date or datetime.now(timezone.utc)
        return anchor.year if (self.month, self.day) <= (anchor.month, anchor.day) else anchor.year - 1


def parse_time_spec(text: str) -> TimeSpec:
    """A --since/--until value, in any of the forms the logs write times in (module docstring)."""
    value = " ".join(text.strip().strip("[]").split()) if text else ""
    match = _EPOCH.fullmatch(value)
    if match:
        return TimeSpec(text=text, year=None, month=1, day=1, epoch=float(match["seconds"]))
    match = _AGO.fullmatch(value)
    if match:
        unit = _AGO_UNITS[match["unit"][0]]
        return TimeSpec(text=text, year=None, month=1, day=1, ago=timedelta(**{unit: int(match["count"])}))
    match = _ISO.fullmatch(value)
    if match:
        return _spec(text, int(match["year"]), int(match["month"]), int(match["day"]), match, _zone(match["zone"]))
    match = _SYSLOG.fullmatch(value)
    if match:
        year = int(match["year"]) if match["year"] else None
        return _spec(text, year, MONTHS[match["mon"]], int(match["day"]), match, None)
    raise WindowError(f"{text!r} is not a time: write it as the logs do, e.g. 2024-03-02, "
                      f"'2024-03-02 18:07', 'Mar 2 18:07:17', 'Sat Mar 2 18:07:17 2024' or @1709402837, "
                      f"or a span before the report date: 30d, 12h, 90m")


def _spec(text: str, year: int | None, month: int, day: int, match: re.Match, zone) -> TimeSpec:
    def number(name: str) -> int | None:
        return int(match[name]) if match[name] else None
    frac = match["frac"]
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    hour, minute, second = number("hour"), number("minute"), number("second")
    if (hour is not None and hour > 23) or (minute is not None and minute > 59) or (second is not None and second > 60):
        raise WindowError(f"{text!r} is not a time of day")
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        raise WindowError(f"{text!r} is no date")
    return TimeSpec(text=text, year=year, month=month, day=day, hour=hour, minute=minute, second=second,
                    microsecond=micro, zone=zone)


def _zone(text: str | None) -> timezone | None:
    if not text:
        return None
    if text == "Z":
        return timezone.utc
    sign = 1 if text[0] == "+" else -1
    digits = text[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    if offset >= timedelta(hours=24):
        raise WindowError(f"{text!r} is no time zone offset")
    return timezone(sign * offset)


def resolve_window(since: TimeSpec | None, until: TimeSpec | None, report_date: datetime | None) -> Window:
    window = Window(since=since.start(report_date) if since else None,
                    until=until.end(report_date) if until else None)
    if window.since and window.until and window.since > window.until:
        raise WindowError(f"--since {since.text!r} comes after --until {until.text!r}")
    return window


def cut_to_window(analysis, window: Window) -> None:
    """Keep only what the analysis saw inside `window` (in place); say what was left out."""
    low = window.since.timestamp() if window.since else float("-inf")
    high = window.until.timestamp() if window.until else float("inf")
    kept, unplaced = [], 0
    for event in analysis.events:
        if event.get("clock") != "wall":
            if event["kind"] in NON_EVENT_KINDS:
                kept.append(event)  # a line that only identifies a device reports nothing
            else:
                unplaced += event.get("repeat") or 1
            continue
        if _cut_record(event, low, high):
            kept.append(event)
    analysis.events = kept
    analysis.window = window
    analysis.coverage = None  # assessed again, with the window
    if unplaced:
        analysis.warnings.append(f"{unplaced} events have no wall-clock time (a dmesg timed only since boot); "
                                 f"--since/--until cannot place them, so they are left out")


def _cut_record(event: dict, low: float, high: float) -> bool:
    """Narrow one record to [low, high]; False when nothing of it is inside."""
    runs = event.get("_runs") or ([(event["t"], event.get("repeat") or 1)] if event.get("t") is not None else [])
    inside = [(t, count) for t, count in runs if low <= t <= high]
    if not inside:
        return False
    if len(inside) == len(runs):
        return True
    first, last = inside[0][0], inside[-1][0]
    event["_runs"] = inside
    event["repeat"] = int(sum(count for _, count in inside))
    event["t"] = first
    event["time"] = event["_first"] = _iso_like(first, event.get("_first"))
    event["_last"] = _iso_like(last, event.get("_last"))
    samples = event.get("_samples") or []
    year = _year_of(event.get("_first"))
    timed = [sample for sample in samples if _inside(sample[1], low, high, year)]
    if timed:
        event["_samples"] = timed
        event["line"], event["raw"] = timed[0]
    return True


def _inside(raw: str, low: float, high: float, year: int | None) -> bool:
    """Whether a sample line's own stamp lies in the window; a syslog stamp takes the year of the
    record's first event."""
    framed = frame_line(raw.split("\n", 1)[0])
    moment = framed.wall
    if moment is None and framed.month_day_time is not None and year is not None:
        month, day, hms, _ = framed.month_day_time
        try:
            moment = datetime(year, month, day, *map(int, hms.split(":")))
        except ValueError:
            return False
    if moment is None:
        return False
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return low <= moment.timestamp() <= high


def _year_of(iso: str | None) -> int | None:
    try:
        return datetime.fromisoformat(iso).year if iso else None
    except ValueError:
        return None


def _iso_like(seconds: float, example: str | None) -> str:
    """Epoch seconds as an ISO time, with the zone offset of the record's own times."""
    zone = timezone.utc
    if example:
        try:
            parsed = datetime.fromisoformat(example)
            zone = parsed.tzinfo
        except ValueError:
            pass
    moment = datetime.fromtimestamp(seconds, zone or timezone.utc)
    return moment.isoformat() if zone else moment.replace(tzinfo=None).isoformat()
