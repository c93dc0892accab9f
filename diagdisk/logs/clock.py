"""Give every event a time: complete the year of syslog stamps, keep uptime clocks per source.

BSD syslog carries no year. Within a file the stamps mostly move forward, so a month that goes back
(Dec -> Jan) is a year rollover, and Jan -> Dec just after one steps back across it; the year itself
is anchored at the end of the file on the report date (the latest line cannot be later than the date
the report was taken). Because that anchor is only known once the whole file was read, events are
stamped as they stream by (SourceClock) and their times resolved at the end (TimeResolver).

A stamped event carries `_when`, what its header said, and `_sec`, a whole second that orders the
events of its clock within the source:

- ("wall", datetime): the header had a full date (RFC 3339, dmesg -T); `_sec` is epoch seconds;
- ("mdt", run, month, day, "HH:MM:SS", ".frac"): BSD syslog; `_sec` packs run, month, day, second;
- ("uptime", seconds): dmesg's seconds since boot; `_sec` is the whole second.
"""

from __future__ import annotations

from datetime import datetime, timezone

DAY = 86400
# how far the packed stamps of one month run reach: the next run starts RUN_SPAN later
RUN_SPAN = 12 * 31 * DAY


def wall_epoch(moment: datetime) -> float:
    """Epoch seconds of a header's time (a time without a zone is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _seconds_of_day(hms: str) -> int:
    hour, minute, second = hms.split(":")
    return int(hour) * 3600 + int(minute) * 60 + int(second)


class SourceClock:
    """Stamps the events of one source (or of one segment of it), in line order.

    A syslog stamp carries the index of its month run (consecutive lines of one month) rather than
    a year: the years follow from the sequence of runs once it is known whole (see runs_rollovers),
    and the runs of consecutive segments of a file simply follow each other.
    """

    def __init__(self, source_name: str):
        self.source_name = source_name
        self.runs: list[int] = []                  # the month of each run, in line order
        self.last_month_day: tuple[int, int] | None = None
        self._stamps: dict[tuple, tuple] = {}   # storms repeat their seconds
        self._last_fields: dict | None = None   # what stamped() was last given, and gave
        self._last_stamped: tuple = (None, None)

    def stamp(self, event: dict) -> None:
        when, second = self.stamped(event)
        event.pop("_uptime", None)
        event.pop("_mdt", None)
        if event.pop("_wall", None) is not None:
            event.pop("_wall_second", None)
        if when is not None:
            event["_when"], event["_sec"] = when, second

    def stamped(self, fields: dict) -> tuple[tuple | None, int | None]:
        """(`_when`, `_sec`) of an event holding these time fields (`_wall`, `_mdt`, `_uptime`),
        in line order; `fields` is left as it is. A storm's lines share their second's fields (one
        dict per stamp, plans.LinePlans): the same dict as just before is the same stamp."""
        if fields is self._last_fields:
            return self._last_stamped
        wall = fields.get("_wall")
        uptime = fields.get("_uptime")
        mdt = fields.get("_mdt")
        if mdt is not None:
            if not self.runs or self.runs[-1] != mdt[0]:
                self.runs.append(mdt[0])
            self.last_month_day = (mdt[0], mdt[1])
        if wall is not None:
            second = fields.get("_wall_second")
            stamped = ("wall", wall), (int(wall_epoch(wall)) if second is None else second)
        elif mdt is not None:
            run = len(self.runs) - 1
            stamped = self._stamps.get((run, mdt))
            if stamped is None:
                if len(self._stamps) > 4096:
                    self._stamps.clear()
                stamped = self._stamps[(run, mdt)] = (("mdt", run, *mdt), pack_mdt(run, mdt))
        elif uptime is not None:
            stamped = ("uptime", uptime), int(uptime)
        else:
            stamped = None, None
        self._last_fields, self._last_stamped = fields, stamped
        return stamped

    def resolver(self, report_date: datetime | None) -> "TimeResolver":
        final_year = None
        if self.last_month_day is not None:
            anchor = report_date or datetime.now(timezone.utc)
            final_year = anchor.year if self.last_month_day <= (anchor.month, anchor.day) else anchor.year - 1
        return TimeResolver(self.source_name, final_year, runs_rollovers(self.runs))


def pack_mdt(run: int, mdt: tuple) -> int:
    """A syslog stamp as one integer that orders the stamps of a source: run, month, day, second."""
    return ((run * 12 + mdt[0] - 1) * 31 + mdt[1] - 1) * DAY + _seconds_of_day(mdt[2])


def unpack_run(packed: int) -> tuple[int, int]:
    """(run, the rest of the packed stamp)."""
    day_index, seconds = divmod(packed, DAY)
    months, day = divmod(day_index, 31)
    run, month = divmod(months, 12)
    return run, ((month * 31 + day) * DAY + seconds)


def runs_rollovers(runs: list[int]) -> list[int]:
    """How many year ends lie before each month run: a month that goes back by six or more
    (Dec -> Jan) is a new year; Jan -> Dec just after one steps back across it (a late December
    line after the new year, out of order or from a clock set back) and starts no other year."""
    rollovers, last, found = 0, None, []
    for month in runs:
        if last is not None and month < last and last - month >= 6:
            rollovers += 1
        elif last == 1 and month == 12 and rollovers:
            rollovers -= 1
        last = month
        found.append(rollovers)
    return found


class TimeResolver:
    """Turns stamps of one source into times once its whole text was read."""

    def __init__(self, source_name: str, final_year: int | None, run_rollovers: list[int]):
        self.source_name = source_name
        self.final_year = final_year
        self.run_rollovers = run_rollovers
        self.rollovers = run_rollovers[-1] if run_rollovers else 0
        self._day_starts: dict[int, float | None] = {}

    def _year(self, run: int) -> int:
        return self.final_year - (self.rollovers - self.run_rollovers[run])

    def when(self, when: tuple) -> tuple[str | None, float | None]:
        """(ISO time or None, seconds on the stamp's clock or None)."""
        if when[0] == "wall":
            return when[1].isoformat(), wall_epoch(when[1])
        if when[0] == "uptime":
            return None, when[1]
        _, run, month, day, hms, frac = when
        hour, minute, second = map(int, hms.split(":"))
        micro = int((frac[1:] + "000000")[:6]) if frac else 0
        try:
            moment = datetime(self._year(run), month, day, hour, minute, second, micro)
        except ValueError:  # Feb 29 in an inferred non-leap year
            return None, None
        return moment.isoformat(), wall_epoch(moment)

    def day_start(self, day_index: int) -> float | None:
        """Epoch seconds at the start of a packed syslog day (pack_mdt // DAY); None for a day
        that is no date in its inferred year (Feb 29)."""
        start = self._day_starts.get(day_index, False)
        if start is False:
            months, day = divmod(day_index, 31)
            run, month = divmod(months, 12)
            try:
                start = wall_epoch(datetime(self._year(run), month + 1, day + 1))
            except ValueError:
                start = None
            self._day_starts[day_index] = start
        return start

    def clock_name(self, clock: str) -> str:
        if clock in ("wall", "mdt"):
            return "wall"
        if clock == "uptime":
            return f"uptime:{self.source_name}"
        return "none"

    @staticmethod
    def quality(clock: str) -> str:
        return {"wall": "exact", "mdt": "year_inferred", "uptime": "uptime"}.get(clock, "none")


def resolve_times(events: list[dict], source_name: str, report_date: datetime | None) -> None:
    """Fill time, t, clock and time_quality of one source's events (in line order) in place."""
    clock = SourceClock(source_name)
    for event in events:
        clock.stamp(event)
    resolver = clock.resolver(report_date)
    for event in events:
        when = event.pop("_when", None)
        event.pop("_sec", None)
        time, t = resolver.when(when) if when else (None, None)
        kind = when[0] if when and t is not None else "none"
        event["time"], event["t"] = time, t
        event["clock"] = resolver.clock_name(kind)
        event["time_quality"] = resolver.quality(kind)
