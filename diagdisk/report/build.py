"""Build the JSON report (schema diagdisk.report/1, documented in docs/report.md)."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timezone

from .. import __version__
from ..decode.sense import SENSE_KEY_NAMES
from ..errors import is_note
from ..logs.events import NON_EVENT_KINDS, is_informational
from ..topology.devices import normal_wwn
from .performance import performance_section

SCHEMA = "diagdisk.report/1"
MAX_SECTORS = 1000
_TIMELINE_BUCKETS = 60
# kinds whose sector is an LBA of the disk they name (md's redirect sectors are array sectors)
_LBA_KINDS = ("sense", "io_error", "ata_exception", "nvme_error")
_MEDIUM_ERROR_SENSE_KEY = 3
_UNRECOVERED_READ_ERROR_ASC = 0x11
_NVME_MEDIA_ERRORS_SCT = 2   # status code type 2: media and data integrity errors


def is_medium_error(event: dict) -> bool:
    """Whether an event says the medium failed at its sector (a failing LBA), rather than that an
    I/O to that sector failed for another reason (a cable, a reset, a refused command)."""
    kind = event["kind"]
    if kind == "sense":
        return event.get("sense_key") == _MEDIUM_ERROR_SENSE_KEY or event.get("asc") == _UNRECOVERED_READ_ERROR_ASC
    if kind == "io_error":
        return "medium" in (event.get("text") or "") or event.get("sense_key") == _MEDIUM_ERROR_SENSE_KEY
    if kind == "ata_exception":
        return "UNC" in (event.get("ata_error") or "").split()
    if kind == "nvme_error":
        return event.get("sct") == _NVME_MEDIA_ERRORS_SCT
    return False


def _rescheduled_reads(events: list[dict]) -> set[tuple]:
    """(array, sector) of the reads raid1/raid10 rescheduled away from a member ("md/raid1:md0:
    sdb1: rescheduling sector N")."""
    return {(event.get("md"), sector) for event in events
            if event["kind"] == "md_redirect" and event.get("device") and event.get("md")
            for sector in (event.get("_sectors") or [event.get("sector")]) if sector is not None}


def _counted_under_its_member(event: dict, rescheduled: set[tuple]) -> bool:
    """The array's "redirecting sector N to other mirror" line of a read its member's line already
    counts: one read, listed once, under the member it failed on, not under the array as well."""
    if event["kind"] != "md_redirect" or event.get("device") or not event.get("md"):
        return False
    sectors = event.get("_sectors") or [event.get("sector")]
    return bool(sectors) and all((event["md"], sector) in rescheduled for sector in sectors)


def _summary_key(event: dict) -> tuple:
    key = event.get("sense_key")
    asc, ascq = event.get("asc"), event.get("ascq")
    # an event that names no block device (an NVMe controller, an ATA port, a USB port, a SCSI
    # host) is summed up under the unit it is about, never with another unit's events
    return (event.get("device") or event.get("unit"), event.get("hctl") or None, event["kind"],
            SENSE_KEY_NAMES.get(key) if key is not None else None,
            f"{asc:02X}/{ascq:02X}" if asc is not None and ascq is not None else None)


def build_report(analysis, findings: list[dict] | None = None, verdict: dict | None = None,
                 performance_findings: list[dict] | None = None) -> dict:
    events = [e for e in analysis.events if e["kind"] not in NON_EVENT_KINDS]
    summary: dict[tuple, dict] = {}
    sectors: dict[str, set[int]] = defaultdict(set)
    failing: dict[str, set[int]] = defaultdict(set)
    rescheduled = _rescheduled_reads(events)
    for event in events:
        key = _summary_key(event)
        first, last = _first_last(event)
        entry = summary.get(key)
        if entry is None and not _counted_under_its_member(event, rescheduled):
            entry = summary[key] = {
                "device": key[0],
                "hctl": key[1], "kind": key[2], "sense_key": key[3], "asc_ascq": key[4],
                "count": 0, "first": first, "last": last}
        if entry is not None:
            entry["count"] += event.get("repeat") or 1
            entry["first"] = min(filter(None, (entry["first"], first)), default=None)
            entry["last"] = max(filter(None, (entry["last"], last)), default=None)
        if event["kind"] in _LBA_KINDS and event.get("detail") != "buffer":
            # sectors a message counts within a partition (2.4's sd printed them so) stay under the
            # partition's name; a Buffer I/O error's 'logical block' is a filesystem block: no sector
            label = event.get("partition") or event.get("device") or event.get("hctl") or event.get("unit")
            found = event.get("_sectors") or ([event["sector"]] if event.get("sector") is not None else [])
            if label and found and len(sectors[label]) < MAX_SECTORS:
                sectors[label].update(found[:MAX_SECTORS - len(sectors[label])])
            if label and found and is_medium_error(event) and len(failing[label]) < MAX_SECTORS:
                failing[label].update(found[:MAX_SECTORS - len(failing[label])])
    for smart in analysis.smart:
        lbas = getattr(smart, "failing_lbas", None) or []
        if smart.device and lbas:
            sectors[smart.device].update(lbas[:MAX_SECTORS])
            failing[smart.device].update(lbas[:MAX_SECTORS])
    from ..diagnosis.coverage import assess_coverage
    coverage = assess_coverage(analysis)
    times = sorted(t for e in events for t in _first_last(e) if t)
    topology = analysis.topology
    return {
        "schema": SCHEMA,
        "tool": {"name": "diagdisk", "version": __version__},
        "input": analysis.input,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": {"hostname": analysis.hostname, "kernel": analysis.kernel,
                 "report_date": analysis.report_date.isoformat() if analysis.report_date else None},
        # what a reader wants first: the verdict, and what it stands on
        "verdict": verdict or _verdict_without_rules(coverage),
        "coverage": coverage.as_dict(),
        "time_span": {"first": times[0] if times else None, "last": times[-1] if times else None,
                      "years_inferred": any(e.get("time_quality") == "year_inferred" for e in events)},
        "sources": [{"path": s.name, "format": s.format, "lines": s.lines, "events": s.events,
                     "unparsed_candidates": s.unparsed_candidates,
                     "unparsed_samples": [{"line": n, "text": t} for n, t in s.unparsed_samples],
                     "kernel_lines": s.kernel_lines, "warnings": [w for w in s.warnings if not is_note(w)],
                     "notes": [str(w) for w in s.warnings if is_note(w)]} for s in analysis.sources],
        "missing_sources": analysis.missing_sources,
        "complete": analysis.complete,
        "warnings": analysis.warnings + topology.conflicts,
        "notes": list(getattr(analysis, "notes", [])),
        "devices": _devices(analysis, events),
        "event_summary": sorted(summary.values(), key=lambda e: (-e["count"], str(e["device"]), e["kind"])),
        "sectors": {k: sorted(v) for k, v in sorted(sectors.items())},
        "failing_lbas": {k: sorted(v) for k, v in sorted(failing.items())},
        "md_arrays": [{"name": a.name, "level": a.level, "state": a.state,
                       "failed_members": a.failed_members, "active": a.active, "expected": a.expected,
                       "members": a.members} for a in sorted(topology.md_arrays.values(), key=lambda a: a.name)],
        "timeline": _timeline(events),
        "findings": findings or [],
        # present when the input holds performance data (sar, iostat, diskstats, queue settings)
        **({"performance": section} if (section := performance_section(
            getattr(analysis, "performance", None), performance_findings)) else {}),
    }


def _verdict_without_rules(coverage) -> dict:
    """The verdict of a report built without running the rules (tools and tests)."""
    if coverage.supports_verdict:
        return {"status": "healthy", "summary": "No storage fault found.", "headline": "No storage fault found.",
                "reasons": [], "suspects": []}
    return {"status": "inconclusive", "summary": f"No verdict: {coverage.reason}",
            "headline": f"No verdict: {coverage.reason}", "reasons": [], "suspects": []}


def _devices(analysis, events: list[dict]) -> list[dict]:
    counts: dict[str, Counter] = defaultdict(Counter)
    for event in events:
        if event.get("unit") and not is_informational(event):
            counts[event["unit"]][event["kind"]] += event.get("repeat") or 1
    rows = []
    for device in sorted(analysis.topology.devices.values(), key=lambda d: (d.hctl is None, d.key)):
        error_counts = Counter()
        for key in {device.hctl, device.name, device.key} - {None}:
            error_counts.update(counts.get(key, {}))
        probe = {"unit": device.hctl or device.key, "hctl": device.hctl, "device": device.name,
                 "host": int(device.hctl.split(":")[0]) if device.hctl else None,
                 "ata_port": device.ata_port, "nvme_ctrl": device.key if (device.type == "nvme") else None}
        rows.append({
            "path": analysis.topology.paths.path(probe, device).as_dict(),
            "hctl": device.hctl, "name": device.name, "majmin": device.majmin, "vendor": device.vendor,
            "model": device.model, "revision": device.revision, "serial": device.serial,
            "wwn": normal_wwn(device.wwn), "ata_port": device.ata_port or next(
                (p for p, h in analysis.topology.ata_to_hctl.items() if h and h == device.hctl), None),
            "type": device.type, "size": device.size, "md_member_of": device.md_member_of,
            "error_counts": dict(error_counts), "smart": device.smart})
    return rows


def _first_last(event: dict) -> tuple[str | None, str | None]:
    """ISO times of the first and last event a record stands for (a lone event: its own time)."""
    if "_first" in event:
        return event["_first"], event["_last"]
    return event.get("time"), event.get("time")


def is_benign(event: dict) -> bool:
    """Whether an event is no sign of a fault: news that things work (a link coming up, a resync
    done), a line that reports no trouble (rules/model/origins.yml's error_class), or trouble that
    only benign-noise rules account for (an empty DVD tray's NOT READY: `_noise`, set by the rules)."""
    if is_informational(event) or event.get("_noise"):
        return True
    if "error_class" in event:   # the rules set it on every record they read
        return not event["error_class"]
    from ..diagnosis.origins import is_error_class
    return not is_error_class(event)


def _timeline(events: list[dict]) -> list[dict]:
    """Events per device and kind in _TIMELINE_BUCKETS equal spans of the wall-clock time they
    cover, apart for events that are no sign of a fault (`benign`, is_benign). A storm's records
    hold a point for every second it went on: counted as whole arrays."""
    import numpy

    series = []  # ((unit, kind, benign), times, counts) per record
    for event in events:
        if event.get("clock") != "wall":
            continue
        runs = event.get("_runs") or ([(event["t"], event.get("repeat") or 1)] if event.get("t") is not None else [])
        if runs:
            points = numpy.array(runs, dtype=float)
            series.append(((event.get("unit") or "unknown", event["kind"], is_benign(event)),
                           points[:, 0], points[:, 1]))
    if not series:
        return []
    start = min(float(times.min()) for _, times, _ in series)
    end = max(float(times.max()) for _, times, _ in series)
    width = max((end - start) / _TIMELINE_BUCKETS, 1.0)
    buckets: Counter = Counter()
    for unit_kind, times, counts in series:
        indexes = numpy.minimum(((times - start) / width).astype(numpy.int64), _TIMELINE_BUCKETS - 1)
        totals = numpy.bincount(indexes, weights=counts, minlength=_TIMELINE_BUCKETS)
        for index in numpy.flatnonzero(totals).tolist():
            buckets[(index, *unit_kind)] += int(totals[index])

    def iso(t: float) -> str:
        return datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None).isoformat()

    return [{"start": iso(start + i * width), "end": iso(start + (i + 1) * width), "device": unit,
             "kind": kind, "count": count, "benign": benign}
            for (i, unit, kind, benign), count in sorted(buckets.items())]
