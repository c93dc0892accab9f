"""sadf's structured prints of a sysstat data file: -x (XML, which sos stores as saDD.xml since 4.0),
-d (semicolon-separated, one row per device, or with -h one row per interval holding every device)
and -j (JSON). Column and attribute names differ by era like the text's (rd_sec vs rkB, avgrq-sz vs
areq-sz, util vs util-percent): they go through performance.columns too.

XML is read as a stream (element by element), so a month of 1-second data costs no more memory
than a day; a document type with an internal subset (entities) is refused, sadf never writes one.
"""

from __future__ import annotations

import calendar
import json
import math
import re
import xml.etree.ElementTree as ET
from datetime import datetime
from typing import IO

from .columns import COLUMNS, DEVICE_COLUMNS, era_of
from .sysstat import RawSample, TextSource


class SadfError(ValueError):
    """A sadf print that cannot be read (not XML/JSON, or unsafe)."""


def _epoch(day: str, time: str) -> float | None:
    try:
        return calendar.timegm(datetime.strptime(f"{day} {time}", "%Y-%m-%d %H:%M:%S").timetuple())
    except ValueError:
        return None


def _values(attributes: dict) -> dict:
    values = {}
    for key, raw in attributes.items():
        spec = COLUMNS.get(key)
        if spec is None:
            continue
        try:
            number = float(str(raw).replace(",", "."))
        except ValueError:
            continue
        if not math.isfinite(number):
            continue
        name, factor = spec
        # sadf writes both the old and the new name of a field (rd_sec and rkB): keep the first read
        values.setdefault(name, number * factor)
    return values


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def read_sadf_xml(handle: IO[bytes], name: str) -> tuple[TextSource, list[RawSample]]:
    head = handle.read(4096)
    if b"<!ENTITY" in head:
        raise SadfError(f"{name}: XML declares entities; sadf never does, not read")
    handle.seek(0)
    source = TextSource(kind="sadf -x")
    samples: list[RawSample] = []
    stamp: float | None = None
    interval: float | None = None
    boots: list[float] = []
    attribute_names: set[str] = set()
    try:
        for event, element in ET.iterparse(handle, events=("start", "end")):
            tag = _local(element.tag)
            if event == "start":
                if tag == "timestamp":
                    stamp = _epoch(element.get("date", ""), element.get("time", ""))
                    try:
                        interval = float(element.get("interval", "")) or None
                    except ValueError:
                        interval = None
                    if interval:
                        source.interval = source.interval or interval
                elif tag == "host":
                    source.host = element.get("nodename")
                continue
            if tag == "disk-device":
                attributes = dict(element.attrib)
                device = attributes.pop("dev", None)
                if device and stamp is not None:
                    if not attribute_names:
                        attribute_names = set(attributes)
                    samples.append(RawSample(device, stamp, interval, _values(attributes), 0))
            elif tag == "boot":
                boot = _epoch(element.get("date", ""), element.get("time", ""))
                if boot is not None:
                    boots.append(boot)
                    source.restarts.append(0)
            elif tag == "release" and element.text:
                source.kernel = element.text.strip()
            if tag in ("disk-device", "timestamp", "boot"):
                element.clear()
    except ET.ParseError as exc:
        if not samples:
            raise SadfError(f"{name}: not sadf XML ({exc})") from None
        source.warnings.append(f"{name}: XML ends early ({exc}); the samples before it are read")
    if attribute_names:
        source.eras.append(_attribute_era(attribute_names))
    _restart_order(samples, boots)
    return source, samples


def _attribute_era(names: set[str]) -> str:
    columns = ["DEV"] + [{"rd_sec": "rd_sec/s", "rkB": "rkB/s", "dkB": "dkB/s"}.get(n, n) for n in names]
    if "svctm" in names:
        return era_of([c for c in columns if c not in ("areq-sz", "aqu-sz", "rkB/s", "dkB/s")])
    return era_of(columns)


def _restart_order(samples: list[RawSample], boots: list[float]) -> None:
    """XML lists restarts apart from the statistics: a sample after a restart's time is in a new segment."""
    boots = sorted(boots)
    for sample in samples:
        sample.segment = sum(1 for boot in boots if sample.t is not None and boot <= sample.t)


def read_sadf_json(text: str, name: str) -> tuple[TextSource, list[RawSample]]:
    try:
        document = json.loads(text)
        hosts = document["sysstat"]["hosts"]
    except (ValueError, KeyError, TypeError, RecursionError):
        raise SadfError(f"{name}: not sadf -j JSON") from None
    source = TextSource(kind="sadf -j")
    samples: list[RawSample] = []
    names: set[str] = set()
    for host in hosts if isinstance(hosts, list) else []:
        if not isinstance(host, dict):
            continue
        source.host = source.host or host.get("nodename")
        source.kernel = source.kernel or host.get("release")
        boots = sorted(filter(None, (_epoch(str((r.get("boot") or {}).get("date", "")),
                                            str((r.get("boot") or {}).get("time", "")))
                                     for r in host.get("restarts") or [] if isinstance(r, dict))))
        source.restarts += [0] * len(boots)
        statistics = [e for e in host.get("statistics") or [] if isinstance(e, dict)]
        if any(isinstance(d, dict) and "disk_device" in d for e in statistics for d in e.get("disk") or []):
            samples += _iostat_json(host, statistics, name, source)
            names.update(k for e in statistics for d in e.get("disk") or [] if isinstance(d, dict) for k in d)
            continue
        for entry in statistics:
            stamp = entry.get("timestamp") or {}
            t = _epoch(str(stamp.get("date", "")), str(stamp.get("time", "")))
            interval = stamp.get("interval") if isinstance(stamp.get("interval"), (int, float)) else None
            source.interval = source.interval or interval
            if t is None:
                continue
            segment = sum(1 for b in boots if b <= t)
            for disk in entry.get("disk") or []:
                if isinstance(disk, dict) and disk.get("disk-device"):
                    attributes = {k: v for k, v in disk.items() if k != "disk-device"}
                    names.update(attributes)
                    samples.append(RawSample(str(disk["disk-device"]), float(t), interval,
                                             _values(attributes), 0, segment))
    if names:
        source.eras.append(_attribute_era(names))
    return source, samples


def _iostat_json(host: dict, statistics: list[dict], name: str, source: TextSource) -> list[RawSample]:
    """iostat -o JSON (sysstat 11.5+): one entry a report, each disk keyed `disk_device`, the time
    (with -t) a string as the text prints it (or ISO, or seconds since the epoch with S_TIME_FORMAT).
    As in the text, the first report averages since boot: left out when another report follows."""
    from .sysstat import parse_clock, parse_date

    source.kind = "iostat -o JSON"
    day, order, _ = parse_date(str(host.get("date", "")), None, True)
    if order:
        source.date_order = order
        source.day = source.day or (day.isoformat() if day else None)
    reports = []
    for index, entry in enumerate(statistics):
        stamp, t = str(entry.get("timestamp") or "").strip(), None
        if stamp.isdigit():
            t = float(stamp)
        elif stamp:
            iso = re.match(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})", stamp)
            if iso:
                t = _epoch(iso.group(1), iso.group(2))
            else:
                tokens = stamp.split()
                when, _, _ = parse_date(tokens[0], None, True) if tokens else (None, None, None)
                clock = parse_clock(tokens[1:]) if when else None
                if when and clock:
                    t = calendar.timegm(when.timetuple()) + clock[0]
        disks = [d for d in entry.get("disk") or [] if isinstance(d, dict) and d.get("disk_device")]
        reports.append((float(index) if t is None else t, disks))
    if len(reports) > 1:
        source.warnings.append(f"{name}: the first report of iostat averages since boot: left out")
        reports = reports[1:]
    elif reports:
        source.warnings.append(f"{name}: the only report of this iostat run averages since boot (no interval "
                               f"report follows)")
    samples = []
    for t, disks in reports:
        for disk in disks:
            attributes = {k: v for k, v in disk.items() if k != "disk_device"}
            samples.append(RawSample(str(disk["disk_device"]), t, None, _values(attributes), 0, 0))
    return samples


_CSV_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})")


def read_sadf_csv(lines, name: str) -> tuple[TextSource, list[RawSample]]:
    source, samples = iter_sadf_csv(lines, name)
    samples = list(samples)
    return source, samples


def iter_sadf_csv(lines, name: str):
    source = TextSource(kind="sadf -d")
    return source, _csv_samples(lines, source)


def _csv_samples(lines, source: TextSource):
    """sadf -d: `# hostname;interval;timestamp;DEV;tps;...` then one row a device and interval
    (with -h, one row an interval and the device groups side by side). Restart rows (interval -1,
    `LINUX-RESTART`) start a new segment."""
    groups: list[tuple[int, list[tuple[int, str]]]] | None = None
    segment = 0
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith("#"):
            columns = [c.strip() for c in line.lstrip("# ").split(";")]
            groups = _csv_groups(columns)
            if groups:
                era = era_of([c for _, cols, _ in groups[:1] for _, c in cols] + ["DEV"])
                if era not in source.eras:
                    source.eras.append(era)
            continue
        fields = line.split(";")
        if "LINUX-RESTART" in line:
            segment += 1
            source.restarts.append(number)
            continue
        if not groups or len(fields) < 4:
            continue
        source.host = source.host or fields[0]
        try:
            interval = float(fields[1])
        except ValueError:
            continue
        t = _csv_time(fields[2])
        if t is None:
            continue
        source.interval = source.interval or interval
        for device_index, columns, repeats in groups:
            width = (columns[-1][0] - device_index + 1) if repeats else len(fields)
            offset = 0
            while device_index + offset < len(fields):
                values = {}
                for index, column in columns:
                    if index + offset < len(fields):
                        values[column] = fields[index + offset]
                yield RawSample(fields[device_index + offset], t, interval, _values(values), number, segment)
                if not repeats:
                    break
                offset += width   # sadf -d -h: `DEV;tps;...;%util[...]`, one group of columns a device


def _csv_groups(columns: list[str]) -> list[tuple[int, list[tuple[int, str]], bool]]:
    """(device column, [(column, name)], repeats) of each group of disk columns in a header."""
    groups = []
    for index, column in enumerate(columns):
        repeats = column.endswith("[...]")
        column = column.removesuffix("[...]")
        if column in DEVICE_COLUMNS:
            groups.append([index, [], repeats])
        elif groups and column in COLUMNS and not groups[-1][2]:
            groups[-1][1].append((index, column))
            groups[-1][2] = repeats
    return [tuple(g) for g in groups if g[1]]


def _csv_time(text: str) -> float | None:
    text = text.strip()
    match = _CSV_STAMP.match(text)
    if match:
        return _epoch(match.group(1), match.group(2))
    if text.isdigit():   # sadf -U: seconds since the epoch
        return float(text)
    return None


