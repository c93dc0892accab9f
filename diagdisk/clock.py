"""Give every event a time: complete the year of syslog stamps, keep uptime clocks per source.

BSD syslog carries no year. Within a file the stamps mostly move forward, so a month that goes back
(Dec -> Jan) is a year rollover, and Jan -> Dec just after one steps back across it; the year itself is anchored at the end of the file on the report
date (the latest line cannot be later than the date the report was taken).
"""

from __future__ import annotations

from datetime import datetime, timezone


def _epoch(moment: datetime) -> float:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def resolve_times(events: list[dict], source_name: str, report_date: datetime | None) -> None:
    """Fill time, t, clock and time_quality of one source's events (in line order)."""
    rollovers = 0
    last_month = None
    syslog_events = []
    for event in events:
        mdt = event.get("_mdt")
        if mdt is not None:
            month = mdt[0]
            if last_month is not None and month < last_month and last_month - month >= 6:
                rollovers += 1
            elif last_month == 1 and month == 12 and rollovers:
                # A late December line right after the new year (out of order, or a clock set
                # back) goes back across the boundary; it does not start another year.
                rollovers -= 1
            last_month = month
            event["_rollover"] = rollovers
            syslog_events.append(event)
    if syslog_events:
        last = syslog_events[-1]["_mdt"]
        anchor = report_date or datetime.now(timezone.utc)
        final_year = anchor.year if (last[0], last[1]) <= (anchor.month, anchor.day) else anchor.year - 1
        quality = "year_inferred"
        for event in syslog_events:
            month, day, hms, frac = event["_mdt"]
            year = final_year - (rollovers - event["_rollover"])
            hour, minute, second = map(int, hms.split(":"))
            micro = int((frac[1:] + "000000")[:6]) if frac else 0
            try:
                event["_wall"] = datetime(year, month, day, hour, minute, second, micro)
            except ValueError:  # Feb 29 in an inferred non-leap year
                continue
            event["_quality"] = quality
    for event in events:
        wall = event.pop("_wall", None)
        uptime = event.pop("_uptime", None)
        quality = event.pop("_quality", None)
        event.pop("_mdt", None)
        event.pop("_rollover", None)
        if wall is not None:
            event["time"] = wall.isoformat()
            event["t"] = _epoch(wall)
            event["clock"] = "wall"
            event["time_quality"] = quality or "exact"
        elif uptime is not None:
            event["time"] = None
            event["t"] = uptime
            event["clock"] = f"uptime:{source_name}"
            event["time_quality"] = "uptime"
        else:
            event["time"] = None
            event["t"] = None
            event["clock"] = "none"
            event["time_quality"] = "none"
