"""Give every event a time: complete the year of syslog stamps, keep uptime clocks per source.

BSD syslog carries no year. Within a file the stamps mostly move forward, so a month that goes back
(Dec -> Jan) is a year rollover, and Jan -> Dec just after one steps back across it; the year itself
is anchored at the end of the file on the report date (the latest line cannot be later than the date
the report was taken). Because that anchor is only known once the whole file was read, events are
stamped as they stream by (SourceClock) and their times resolved at the end (TimeResolver).

A stamped event carries `_when`, what its header said, and `_sec`, a whole second that orders the
events of its clock within the source:

- ("wall", datetime): the header had a full date (RFC 3339, dmesg -T); `_sec` is epoch seconds;
- ("mdt", rollovers, month, day, "HH:MM:SS", ".frac"): BSD syslog; `_sec` packs the five fields;
- ("uptime", seconds): dmesg's seconds since boot; `_sec` is the whole second.
"""

from __future__ import annotations

from datetime import datetime, timezone

_DAY = 86400


def wall_epoch(moment: datetime) -> float:
    """Epoch seconds of a header's time (a time without a zone is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _seconds_of_day(hms: str) -> int:
    hour, minute, second = hms.split(":")
    return int(hour) * 3600 + int(minute) * 60 + int(second)


class SourceClock:
    """Stamps the events of one source, in line order."""

    def __init__(self, source_name: str):
        self.source_name = source_name
        self.rollovers = 0
        self._last_month: int | None = None
        self.last_month_day: tuple[int, int] | None = None
        self._stamps: dict[tuple, tuple] = {}   # storms repeat their seconds

    def stamp(self, event: dict) -> None:
        wall = event.pop("_wall", None)
        uptime = event.pop("_uptime", None)
        mdt = event.pop("_mdt", None)
        if mdt is not None:
            month, day, hms, frac = mdt
            if self._last_month is not None and month < self._last_month and self._last_month - month >= 6:
                self.rollovers += 1
            elif self._last_month == 1 and month == 12 and self.rollovers:
                # A late December line right after the new year (out of order, or a clock set
                # back) goes back across the boundary; it does not start another year.
                self.rollovers -= 1
            self._last_month = month
            self.last_month_day = (month, day)
        if wall is not None:
            event["_when"] = ("wall", wall)
            second = event.pop("_wall_second", None)
            event["_sec"] = int(wall_epoch(wall)) if second is None else second
        elif mdt is not None:
            stamped = self._stamps.get((self.rollovers, mdt))
            if stamped is None:
                if len(self._stamps) > 4096:
                    self._stamps.clear()
                stamped = self._stamps[(self.rollovers, mdt)] = (
                    ("mdt", self.rollovers, *mdt),
                    ((self.rollovers * 12 + mdt[0] - 1) * 31 + mdt[1] - 1) * _DAY + _seconds_of_day(mdt[2]))
            event["_when"], event["_sec"] = stamped
        elif uptime is not None:
            event["_when"] = ("uptime", uptime)
            event["_sec"] = int(uptime)

    def resolver(self, report_date: datetime | None) -> "TimeResolver":
        final_year = None
        if self.last_month_day is not None:
            anchor = report_date or datetime.now(timezone.utc)
            final_year = anchor.year if self.last_month_day <= (anchor.month, anchor.day) else anchor.year - 1
        return TimeResolver(self.source_name, final_year, self.rollovers)


class TimeResolver:
    """Turns stamps of one source into times once its whole text was read."""

    def __init__(self, source_name: str, final_year: int | None, rollovers: int):
        self.source_name = source_name
        self.final_year = final_year
        self.rollovers = rollovers
        self._day_starts: dict[int, float | None] = {}

    def _year(self, rollovers: int) -> int:
        return self.final_year - (self.rollovers - rollovers)

    def when(self, when: tuple) -> tuple[str | None, float | None]:
        """(ISO time or None, seconds on the stamp's clock or None)."""
        if when[0] == "wall":
            return when[1].isoformat(), wall_epoch(when[1])
        if when[0] == "uptime":
            return None, when[1]
        _, rollovers, month, day, hms, frac = when
        hour, minute, second = map(int, hms.split(":"))
        micro = int((frac[1:] + "000000")[:6]) if frac else 0
        try:
            moment = datetime(self._year(rollovers), month, day, hour, minute, second, micro)
        except ValueError:  # Feb 29 in an inferred non-leap year
            return None, None
        return moment.isoformat(), wall_epoch(moment)

    def second(self, clock: str, second: int) -> float | None:
        """A stamp's `_sec` as seconds on its clock (epoch seconds for wall and syslog stamps)."""
        if clock != "mdt":
            return float(second)
        day_index, seconds = divmod(second, _DAY)
        start = self._day_starts.get(day_index, False)
        if start is False:
            months, day = divmod(day_index, 31)
            rollovers, month = divmod(months, 12)
            try:
                start = wall_epoch(datetime(self._year(rollovers), month + 1, day + 1))
            except ValueError:
                start = None
            self._day_starts[day_index] = start
        return None if start is None else start + seconds

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
