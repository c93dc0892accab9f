"""What the analysis saw, and whether that can support a verdict at all.

"No fault found" is worth something only when the kernel could have told of one in what was read.
A verdict is `inconclusive` when no kernel log line was read (the input holds no kernel log, or it
could not be read: dmesg refused to a user, an empty journal), or when the kernel log read does not
reach into the time window asked for. The report's `coverage` object says which sources were read,
how many kernel log lines and the time they span, which devices have SMART data, and what was not
read and why; `diagdisk collect` bundles add what each collection step could not get.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..collect.items import ROOT_ADDS
from ..errors import is_partial
from ..inputs.sources import EXPECTED_SOURCES

# One line about each of these at most, in this order, in the text report.
MAX_NOT_READ = 50
# Collection items whose absence is worth telling (the others are attributes and listings).
_KERNEL_LOG_ITEMS = ("dmesg", "kmsg", "system logs")


@dataclass
class Window:
    """The time window an analysis was cut to (`analyze --since/--until`), as aware datetimes."""

    since: datetime | None = None
    until: datetime | None = None

    def as_dict(self) -> dict:
        return {"since": self.since.isoformat() if self.since else None,
                "until": self.until.isoformat() if self.until else None}


@dataclass
class Coverage:
    kernel_lines: int = 0
    kernel_sources: list[dict] = field(default_factory=list)
    first: str | None = None
    last: str | None = None
    years_inferred: bool = False
    uptime_span: tuple[float, float] | None = None   # seconds after boot, when no wall clock is known
    read: list[str] = field(default_factory=list)
    smart_devices: list[str] = field(default_factory=list)
    not_read: list[dict] = field(default_factory=list)
    kernel_log_gaps: list[dict] = field(default_factory=list)   # of not_read: kernel logs not got
    kernel_log_given: bool = True       # False when the input holds no kernel log at all (iostat alone)
    window: Window | None = None
    reason: str | None = None           # why no verdict can be given; None when one can

    @property
    def supports_verdict(self) -> bool:
        return self.reason is None

    def as_dict(self) -> dict:
        return {
            "verdict_supported": self.supports_verdict,
            "reason": self.reason,
            "kernel_log": {"lines": self.kernel_lines, "first": self.first, "last": self.last,
                           "years_inferred": self.years_inferred,
                           "uptime_span": list(self.uptime_span) if self.uptime_span else None,
                           "sources": self.kernel_sources, "given": self.kernel_log_given},
            "sources_read": self.read,
            "smart_devices": self.smart_devices,
            "not_read": self.not_read[:MAX_NOT_READ],
            "window": self.window.as_dict() if self.window else None,
        }


def assess_coverage(analysis) -> Coverage:
    """The coverage of an analysis (diagnosis.analysis.Analysis), kept on it once assessed."""
    found = getattr(analysis, "coverage", None)
    if found is not None:
        return found
    coverage = Coverage(window=getattr(analysis, "window", None))
    for source in analysis.sources:
        failed = [w for w in source.warnings if is_partial(w)]
        if not source.duplicate_of and not (failed and not source.lines):
            coverage.read.append(source.name)
        if failed:
            coverage.not_read.append({"what": source.name, "why": str(failed[0])})
        if source.kernel_lines:
            coverage.kernel_lines += source.kernel_lines
            coverage.kernel_sources.append({
                "path": source.name, "lines": source.kernel_lines,
                "first": source.kernel_first, "last": source.kernel_last,
                "first_uptime": source.kernel_first_uptime, "last_uptime": source.kernel_last_uptime})
    firsts = [s["first"] for s in coverage.kernel_sources if s["first"]]
    lasts = [s["last"] for s in coverage.kernel_sources if s["last"]]
    coverage.first = min(firsts, key=_epoch, default=None)
    coverage.last = max(lasts, key=_epoch, default=None)
    uptimes = [(s["first_uptime"], s["last_uptime"]) for s in coverage.kernel_sources
               if s["first_uptime"] is not None and s["last_uptime"] is not None]
    if uptimes and not (coverage.first and coverage.last):
        # a dmesg timed only since boot: the span it covers is that much time after a boot
        coverage.uptime_span = (min(first for first, _ in uptimes), max(last for _, last in uptimes))
    coverage.years_inferred = any(s.years_inferred for s in analysis.sources if s.kernel_lines)
    coverage.smart_devices = sorted({s.device for s in analysis.smart if getattr(s, "device", None)})
    gaps, kernel_log_gaps = _collection_gaps(getattr(analysis, "collection", None))
    coverage.not_read += gaps
    coverage.kernel_log_gaps = kernel_log_gaps
    named = {gap["what"].lstrip("/") for gap in coverage.not_read}   # a bundle names /proc/mdstat
    coverage.not_read += [{"what": description, "why": "not in the input"}
                          for description in analysis.missing_sources if description.lstrip("/") not in named]
    if not analysis.smart and not any("smart" in gap["what"].lower() for gap in coverage.not_read):
        coverage.not_read.append({"what": "SMART data (smartctl)", "why": "not in the input"})
    coverage.kernel_log_given = EXPECTED_SOURCES["log"] not in analysis.missing_sources
    coverage.reason = _why_no_verdict(coverage)
    analysis.coverage = coverage
    return coverage


def _why_no_verdict(coverage: Coverage) -> str | None:
    if not coverage.kernel_lines:
        denied = coverage.kernel_log_gaps
        if denied:
            return "no kernel log line was read (" + "; ".join(f"{g['what']}: {g['why']}" for g in denied[:3]) + ")"
        return "no kernel log line was read: the input holds no kernel log (dmesg, messages, journal)"
    window = coverage.window
    if window is not None and coverage.first and coverage.last:
        first, last = _moment(coverage.first), _moment(coverage.last)
        if (window.since and last and last < window.since) or (window.until and first and first > window.until):
            return (f"the kernel log read covers {coverage.first[:19]} .. {coverage.last[:19]}, "
                    f"outside the window asked for")
    return None


def _collection_gaps(manifest: dict | None) -> tuple[list[dict], list[dict]]:
    """What a `diagdisk collect` bundle's manifest says was not collected, and why; and which of
    those are kernel logs."""
    if not isinstance(manifest, dict):
        return [], []
    gaps, kernel_logs = [], []
    for item in manifest.get("items") or []:
        if not isinstance(item, dict) or item.get("status") in ("ok", None):
            continue
        reason = item.get("reason") or item.get("status")
        detail = str(item.get("stderr") or "").strip().splitlines()
        if detail and item.get("status") == "failed":
            reason = f"{reason}: {detail[-1]}"
        name = str(item.get("name"))
        if name == "kmsg" or name.startswith(_KERNEL_LOG_ITEMS) or "journalctl" in name:
            kernel_logs.append({"what": name, "why": str(reason)})
            gaps.append(kernel_logs[-1])
        elif name.startswith(("smartctl", "sg_", "nvme", "mdadm", "multipath", "lsscsi", "lsblk")) or \
                name in ("/proc/scsi/scsi", "/proc/mdstat"):
            gaps.append({"what": name, "why": str(reason)})
    if manifest.get("privileged") is False:
        gaps.append({"what": "root-only data", "why": ROOT_ADDS})
    # what a reader must see first: the kernel logs not got, then what root would have added
    gaps.sort(key=lambda gap: (gap not in kernel_logs, gap["what"] != "root-only data"))
    return gaps, kernel_logs


def uptime_phrase(span) -> str:
    """'0.0 s .. 1 h 53 min after boot' of a span of seconds since boot."""
    return f"{_duration(span[0])} .. {_duration(span[1])} after boot"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min" if minutes % 60 else f"{minutes // 60} h"


def _epoch(iso: str) -> float:
    moment = _moment(iso)
    return moment.timestamp() if moment else 0.0


def _moment(iso: str | None) -> datetime | None:
    """An ISO time as an aware datetime (a time without a zone taken as UTC, as the clock does)."""
    if not iso:
        return None
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
