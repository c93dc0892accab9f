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
    samples, lines, segments = series.samples, series.lines, series.segments
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
