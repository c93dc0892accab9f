"""The report's `performance` section (docs/report.md): what each performance source was, each
device's class, aliases, groups, queue settings and 95th percentiles, its series on one time axis
(merged down to at most MAX_POINTS samples a device, so the report's size has a bound), the PSI
figures, and the performance findings."""

from __future__ import annotations

import math
from datetime import datetime, timezone

from ..performance.series import FIELDS, Series, merge

MAX_POINTS = 600
SERIES_FIELDS = ("iops", "r_s", "w_s", "mb_s", "areq_kb", "aqu", "await", "r_await", "w_await", "svctm", "util")
P95_FIELDS = ("util", "await", "svctm", "aqu", "iops", "mb_s", "areq_kb")


def performance_section(data, findings: list[dict] | None) -> dict | None:
    if data is None or not data.has_data:
        return None
    series = {name: _series_dict(s) for name, s in sorted(data.series.items()) if s.samples}
    devices = []
    for name, device in sorted(data.devices.items()):
        samples = data.series.get(name)
        devices.append({
            "name": name, "class": device.cls, "class_label": device.label, "class_reason": device.class_reason,
            "parallel": device.parallel, "aliases": device.aliases, "model": device.model, "vendor": device.vendor,
            "hctl": device.hctl, "groups": device.groups, "members": device.members, "md_level": device.md_level,
            "stripe_kb": device.stripe_kb, "settings": device.settings, "settings_origin": device.settings_origin,
            "samples": len(samples.samples) if samples else 0, "raw_samples": samples.raw_count if samples else 0,
            "svctm_apparent": bool(samples and samples.apparent_svctm),
            "p95": _p95(samples) if samples else {},
            "unread": _unread(samples) if samples else [],
        })
    return {
        "sources": [s.to_dict() for s in data.sources],
        "devices": devices,
        "groups": [{"id": key, **value} for key, value in sorted(data.groups.items())],
        "series": series,
        "pressure": data.pressure or None,
        "findings": findings or [],
    }


def _number(value: float) -> float | None:
    return None if value is None or math.isnan(value) or math.isinf(value) else round(value, 3)


# the figures saturation, queueing and latency are judged by: a device lacking all of them was not judged
JUDGED_FIELDS = ("util", "aqu", "await")
_COLUMN_NAMES = {"iops": "r/s+w/s", "mb_s": "rkB/s+wkB/s", "areq_kb": "areq-sz", "aqu": "aqu-sz", "await": "await",
                 "svctm": "svctm", "util": "%util"}


def _unread(series: Series) -> list[str]:
    """The fields no sample of a device holds (its source did not print them, or they were not
    read): unknown, never 0."""
    samples = series.samples
    return [name for name in ("iops", "mb_s", "areq_kb", "aqu", "await", "util")
            if not any(s[FIELDS.index(name)] == s[FIELDS.index(name)] for s in samples)]


def _p95(series: Series) -> dict:
    result = {}
    for name in P95_FIELDS:
        index = FIELDS.index(name)
        values = sorted(s[index] for s in series.samples if s[index] == s[index])
        if values:
            position = min(len(values) - 1, max(0, math.ceil(0.95 * len(values)) - 1))
            result[name] = _number(values[position])
    return result


def _series_dict(series: Series) -> dict:
    samples, lines, segments = series.samples, list(series.lines), list(series.segments)
    factor = 1
    while len(samples) > MAX_POINTS:
        merged, merged_lines, merged_segments = [], [], []
        i = 0
        while i < len(samples):
            if i + 1 < len(samples) and segments[i] == segments[i + 1]:
                merged.append(merge(samples[i], samples[i + 1]))
                step = 2
            else:
                merged.append(samples[i])
                step = 1
            merged_lines.append(lines[i])
            merged_segments.append(segments[i])
            i += step
        if len(merged) >= len(samples):
            break   # every neighbour is in another segment: nothing more to merge
        samples, lines, segments = merged, merged_lines, merged_segments
        factor *= 2
    t_index = FIELDS.index("t")
    times = [s[t_index] for s in samples]
    calendar = all(t == t and t > 10 * 86400 for t in times)
    return {
        "source": series.source,
        "merged_samples": series.merged * factor,
        "time": [_iso(t) for t in times] if calendar else None,
        "sample": None if calendar else [_number(t) for t in times],
        "line": lines,
        "segment": [int(s) for s in segments],
        **{name: [_number(s[FIELDS.index(name)]) for s in samples] for name in SERIES_FIELDS},
    }


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None).isoformat()


_UNITS = {"util": "%", "await": " ms", "rareq_kb": " kB", "wareq_kb": " kB", "queue": "", "svctm": " ms", "r_await": " ms", "w_await": " ms", "areq_kb": " kB",
          "mb_s": " MB/s", "peers_await_median": " ms", "peers_svctm_median": " ms", "members_await_max": " ms",
          "members_util_max": "%", "peers_util_max": "%", "read_ahead_kb": " kB", "max_sectors_kb": " kB",
          "max_hw_sectors_kb": " kB", "write_areq_kb_median": " kB", "areq_kb_median": " kB", "areq_kb_p95": " kB",
          "util_p95": "%", "await_p95": " ms", "read_mb_s_p95": " MB/s"}
_LABELS = {"aqu": "queue", "queue": "queue (checked by Little's law)", "rareq_kb": "read size", "wareq_kb": "write size", "areq_kb": "request", "mb_s": "", "iops": "IOPS", "svctm": "svctm",
           "peers_await_median": "peers' await", "peers_svctm_median": "peers' svctm", "peers_util_max": "peers' util max",
           "members_await_max": "members' await max", "members_util_max": "members' util max"}


def _figure_text(name: str, figure: dict, apparent: bool) -> str:
    unit = _UNITS.get(name, "")
    label = _LABELS.get(name, name)
    if name == "svctm" and apparent:
        label = "service time (apparent)"
    if "value" in figure:
        value = figure["value"]
        return f"{label} {_short(value)}{unit}".strip()
    low, high = figure.get("min"), figure.get("max")
    if low is None:
        return ""
    if name == "mb_s":
        label = ""
    if high is None or _short(low) == _short(high):
        return f"{label} {_short(low)}{unit}".strip()
    return f"{label} {_short(low)}-{_short(high)}{unit}".strip()


def _short(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and abs(value) < 1 and value:
        return f"{value:.2f}"
    if isinstance(value, (int, float)) and abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def finding_line(finding: dict) -> str:
    """One line: verdict first, then the device, its figures, the window and where it was read."""
    figures = ", ".join(filter(None, (_figure_text(name, figure, finding.get("svctm_apparent"))
                                      for name, figure in finding["figures"].items())))
    window = finding["window"]
    if window.get("single_sample"):
        span = (f"single sample: {window.get('matching_samples', 1)} of {window.get('device_samples', 1)} read, "
                f"too few to tell a lasting load from a moment; confidence {finding.get('confidence')}")
    elif finding.get("scope") == "perf_devices":
        span = f"over {window['samples']} samples"
    else:
        span = f"{window['samples']} consecutive samples"
        if window.get("first"):
            span += f" from {window['first'].replace('T', ' ')}"
        if window.get("windows", 1) > 1:
            span += f" ({window['windows']} windows, {window['matching_samples']} samples in all)"
    where = ""
    if finding["evidence"]:
        first = finding["evidence"][0]
        where = f" [{first['source']}:{first['line']}]"
    related = f"; also {', '.join(finding['related_findings'])} on this device" if finding.get("related_findings") else ""
    return (f"{finding['verdict'].upper()}: {finding['device']} ({finding['class']}): {finding['title']}; "
            f"{figures}; {span}{related} ({finding['rule']}){where}")


def unread_lines(section: dict) -> list[str]:
    """One line a device whose saturation, queue or latency figures were not read: an all-clear
    is never given from values nobody read."""
    out = []
    for device in section["devices"]:
        fields = [f for f in device.get("unread", []) if f in JUDGED_FIELDS]
        if not fields or not device.get("samples"):
            continue
        columns = ", ".join(_COLUMN_NAMES[f] for f in fields)
        out.append(f"  {device['name']}: {columns} not read (unknown): "
                   f"{'not judged' if len(fields) == len(JUDGED_FIELDS) else 'judged on the rest only'}")
    return out


def performance_text(section: dict | None) -> list[str]:
    if not section:
        return []
    read = [s for s in section["sources"] if s["status"].startswith("read")]
    kinds = sorted({s["kind"] for s in read})
    samples = sum(len(next(iter([v for k, v in series.items() if k in ("time", "sample") and v] or [[]])))
                  for series in section["series"].values())
    out = [f"Performance ({', '.join(kinds) or 'no samples'}; {len(section['series'])} devices, {samples} samples)"]
    for finding in section["findings"]:
        out.append("  " + finding_line(finding))
    unread = unread_lines(section)
    if not section["findings"] and not unread:
        out.append("  no device is saturated, slow or misconfigured in the samples read")
    elif not section["findings"]:
        out.append("  no finding in the figures read; not all could be judged")
    out += unread
    for source in section["sources"]:
        if not source["status"].startswith("read") or source.get("truncated"):
            note = f"  {source['path']}: {source['status']}"
            if source.get("duplicate_of"):
                note += f" of {source['duplicate_of']}"
            if source.get("truncated"):
                note += ", truncated"
            out.append(note)
    if section.get("pressure"):
        some = (section["pressure"].get("some") or {})
        out.append(f"  I/O pressure (PSI): some avg10 {some.get('avg10', '?')}%, avg60 {some.get('avg60', '?')}%, "
                   f"avg300 {some.get('avg300', '?')}%")
    return out
