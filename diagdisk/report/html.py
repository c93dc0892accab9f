"""The HTML incident report: one self-contained page built from the JSON report contract.

The page is opened on air-gapped machines and attached to tickets, so it carries its CSS inline,
its chart as inline SVG, no script, and a Content-Security-Policy that forbids fetching anything.
Every string that came from a log is untrusted: jinja2 autoescaping is on for the whole template,
and every value printed has its control characters escaped first (safetext), so the page is safe
to `cat` in a terminal too.

Every list is capped (with the number left out shown), and the timeline is re-binned, so the page
size has a bound whatever the size of the input; tests/report/html states that bound.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from diagdisk.decode.devnames import disk_of
from diagdisk.report.text import not_listed_in_coverage, seconds_since_boot
from diagdisk.errors import InputError
from diagdisk.logs.events import EVENT_KINDS
from diagdisk.report.labels import kind_label
from diagdisk.safetext import escape_control

SCHEMA = "diagdisk.report/1"
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "report.html.j2"

MAX_SUSPECTS = 20
MAX_SUSPECT_LANES = 3
MAX_FINDINGS = 40
MAX_EVIDENCE_PER_FINDING = 8
MAX_DEVICE_CARDS = 24
MAX_EVIDENCE_PER_DEVICE = 20
MAX_DECODED_ROWS_PER_DEVICE = 24
MAX_SECTORS_PER_DEVICE = 24
MAX_MD_ARRAYS = 64
MAX_INVENTORY_ROWS = 400
MAX_SOURCES = 200
MAX_MISSING_SOURCES = 100
MAX_WARNINGS_PER_SOURCE = 5
MAX_INPUT_WARNINGS = 50
MAX_TEXT_CHARS = 600
MAX_NOT_READ = 20
MAX_EVIDENCE_LINES = 12     # physical lines of one piece of evidence (a stitched report)
# rsyslog writes a line break inside one kernel message as "#012"
RSYSLOG_NEWLINE = "#012"

STATUS_HEADLINES = {
    "failure": "Hardware failure",
    "degraded": "Degraded",
    "suspect": "Suspect hardware",
    "unexplained": "Errors no rule explains",
    "inconclusive": "No verdict: too little evidence",
    "healthy": "No hardware fault found",
}
FRU_ACTIONS = {
    "disk": "Replace disk",
    "controller": "Replace controller",
    "cable": "Replace or reseat cable",
    "bus": "Check the bus (cabling, termination)",
    "enclosure": "Check enclosure / backplane",
    "path": "Check storage path",
    "power": "Check power supply",
    "none": "Nothing to replace",
}
SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}


@dataclass
class Capped:
    """The first items of a list, and how many were left out of the page."""

    items: list
    total: int

    @property
    def hidden(self) -> int:
        return self.total - len(self.items)


def capped(values: Any, limit: int) -> Capped:
    values = values if isinstance(values, list) else []
    return Capped(values[:limit], len(values))


@dataclass
class DeviceCard:
    key: str
    title: str
    identity: list[tuple[str, str]]
    suspect_rank: int | None
    error_total: int
    error_counts: list[tuple[str, int]]
    decoded: Capped
    sectors: Capped
    smart: dict | None
    evidence: Capped
    md_arrays: list[str] = field(default_factory=list)
    other_sectors: Capped = field(default_factory=lambda: Capped([], 0))


def render_html(report: dict, across_hosts: dict | None = None) -> str:
    """The report dict (schema diagdisk.report/1) as one self-contained HTML page. `across_hosts`
    ({"text", "link"}) is what a fleet run adds to one host's page: the pattern its errors belong to."""
    if not isinstance(report, dict):
        raise InputError(f"cannot render HTML: expected a report object, got {type(report).__name__}")
    schema = report.get("schema")
    if schema not in (None, SCHEMA):
        raise InputError(f"cannot render HTML: unsupported report schema {schema!r} (expected {SCHEMA!r})")
    view = build_view(report)
    view["across_hosts"] = across_hosts if isinstance(across_hosts, dict) and across_hosts.get("text") else None
    return _environment().get_template(TEMPLATE_NAME).render(view)


@functools.cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_printable,
    )
    environment.filters["evidence"] = evidence_markup
    environment.filters["label"] = kind_label
    environment.filters["when"] = format_time
    environment.filters["num"] = format_number
    environment.filters["percent"] = format_percent
    environment.filters["text"] = clip_text
    environment.filters["meter_width"] = meter_width
    environment.filters["dash"] = lambda value: "\u2014" if _missing(value) or value == [] else value
    return environment


def build_view(report: dict) -> dict:
    """Everything the template shows, normalised (missing keys filled) and capped."""
    tool = _dict(report.get("tool"))
    host = _dict(report.get("host"))
    devices = [device for device in _list(report.get("devices")) if isinstance(device, dict)]
    findings = sorted(
        (finding for finding in _list(report.get("findings")) if isinstance(finding, dict)),
        key=lambda finding: (SEVERITY_ORDER.get(finding.get("severity"), 5), -_number(finding.get("confidence"))),
    )
    verdict = _dict(report.get("verdict"))
    suspects = [suspect for suspect in _list(verdict.get("suspects")) if isinstance(suspect, dict)]
    titles_by_rule = {finding.get("rule"): finding.get("title") for finding in findings if finding.get("rule")}
    md_arrays = [array for array in _list(report.get("md_arrays")) if isinstance(array, dict)]
    sources = [source for source in _list(report.get("sources")) if isinstance(source, dict)]

    from diagdisk.report.charts import timeline_chart
    from diagdisk.report.perfcharts import performance_view

    # The leading suspects get the top lanes; a long tail of weak suspects must not push the hosts
    # and arrays (with their resets and state changes) out of the chart.
    suspect_lanes = [suspect.get("device") for suspect in suspects if suspect.get("device")][:MAX_SUSPECT_LANES]
    return {
        "tool_name": tool.get("name") or "diagdisk",
        "tool_version": tool.get("version") or "unknown",
        "input_path": report.get("input"),
        "generated": report.get("generated"),
        "host": host,
        "time_span": _dict(report.get("time_span")),
        "uptime_span": _uptime_span(report.get("coverage")),
        "verdict": _verdict_view(verdict, suspects, titles_by_rule, findings),
        "coverage": _coverage_view(report.get("coverage")),
        "legend": _legend(report),
        "suspects": Capped([_suspect_view(s, titles_by_rule) for s in suspects[:MAX_SUSPECTS]], len(suspects)),
        "findings": Capped(_finding_views(findings[:MAX_FINDINGS]), len(findings)),
        "timeline": timeline_chart(_list(report.get("timeline")), suspect_lanes),
        "device_cards": _device_cards(report, devices, suspects, findings, md_arrays),
        "md_arrays": capped(md_arrays, MAX_MD_ARRAYS),
        "inventory": capped(devices, MAX_INVENTORY_ROWS),
        "sources": capped(sources, MAX_SOURCES),
        "source_totals": _source_totals(sources),
        "missing_sources": capped([str(path) for path in not_listed_in_coverage(report)], MAX_MISSING_SOURCES),
        "input_warnings": capped([str(w) for w in _list(report.get("warnings"))], MAX_INPUT_WARNINGS),
        "incomplete": report.get("complete") is False,
        "max_warnings": MAX_WARNINGS_PER_SOURCE,
        "performance": performance_view(report.get("performance")),
    }


def _verdict_view(verdict: dict, suspects: list[dict], titles_by_rule: dict, findings: list[dict]) -> dict:
    status = verdict.get("status") if verdict.get("status") in STATUS_HEADLINES else "unknown"
    primary = _suspect_view(suspects[0], titles_by_rule) if suspects else None
    summary = verdict.get("summary")
    if not summary:
        summary = findings[0].get("title") if findings else "The report carries no verdict."
    label = verdict.get("label")
    return {
        "status": status,
        # a performance verdict names itself (Slow member, Not saturated) rather than the status
        "headline": str(label).capitalize() if isinstance(label, str) and label else STATUS_HEADLINES.get(status, "No verdict"),
        "summary": summary,
        "reasons": [str(reason) for reason in _list(verdict.get("reasons"))],
        "primary": primary,
        "weighing": _weighing_view(verdict.get("inference")),
    }


def _weighing_view(inference: Any) -> list[dict]:
    """The likeliest explanations: probability, name, and for the first what weighs most for it,
    for the others why they lose."""
    rows = []
    if not _dict(inference).get("event_groups"):
        return rows   # nothing to weigh: no error was read
    for index, entry in enumerate(_list(_dict(inference).get("explanations"))[:4]):
        entry = _dict(entry)
        if index == 0:
            why = "; ".join(f"{_dict(e).get('what')} ({_dict(e).get('source')}:{_dict(e).get('line')})"
                            for e in _list(entry.get("evidence"))[:3])
        else:
            why = str(entry.get("why_not") or "")
        rows.append({"probability": f"{_number(entry.get('probability')):.2f}", "name": str(entry.get("name") or ""),
                     "why": why})
    return rows


def _uptime_span(coverage: Any) -> str | None:
    """The seconds since boot the kernel log spans, when it has no wall-clock time (a dmesg)."""
    uptimes = _list(_dict(_dict(coverage).get("kernel_log")).get("uptime_span"))
    if len(uptimes) == 2 and all(isinstance(value, (int, float)) for value in uptimes):
        return f"uptime {seconds_since_boot(uptimes[0])} \u2192 {seconds_since_boot(uptimes[1])}"
    return None


def _coverage_view(coverage: Any) -> dict | None:
    """What the verdict stands on; None for a report made before reports carried it."""
    if not isinstance(coverage, dict):
        return None
    kernel = _dict(coverage.get("kernel_log"))
    not_read = [gap for gap in _list(coverage.get("not_read")) if isinstance(gap, dict)]
    return {
        "supported": coverage.get("verdict_supported") is not False,
        "reason": coverage.get("reason"),
        "kernel_lines": int(_number(kernel.get("lines"))),
        "kernel_given": kernel.get("given") is not False,
        "first": kernel.get("first"),
        "last": kernel.get("last"),
        "kernel_sources": [str(_dict(s).get("path")) for s in _list(kernel.get("sources"))][:10],
        "smart_devices": [str(name) for name in _list(coverage.get("smart_devices"))],
        "not_read": capped(not_read, MAX_NOT_READ),
        "window": _dict(coverage.get("window")) or None,
    }


def _legend(report: dict) -> list[tuple[str, str, str]]:
    """(kind, label, meaning) of every event kind the report shows, for the page's legend."""
    kinds = {row.get("kind") for row in _list(report.get("event_summary")) if isinstance(row, dict)}
    kinds |= {row.get("kind") for row in _list(report.get("timeline")) if isinstance(row, dict)}
    return [(kind, kind_label(kind), EVENT_KINDS.get(kind, "")) for kind in sorted(k for k in kinds if isinstance(k, str))]


def _suspect_view(suspect: dict, titles_by_rule: dict) -> dict:
    rules = [str(rule) for rule in _list(suspect.get("rules"))]
    reasons = [titles_by_rule[rule] for rule in rules if titles_by_rule.get(rule)]
    return {
        "fru": suspect.get("fru") or "unknown",
        "action": FRU_ACTIONS.get(suspect.get("fru"), "Inspect"),
        "hctl": suspect.get("hctl"),
        "device": suspect.get("device"),
        "model": suspect.get("model"),
        "serial": suspect.get("serial"),
        "confidence": suspect.get("confidence"),
        "confidence_level": confidence_level(suspect.get("confidence")),
        "rules": rules,
        "reason": reasons[0] if reasons else None,
        "md_arrays": [str(name) for name in _list(suspect.get("md_arrays"))],
    }


def _finding_views(findings: list[dict]) -> list[dict]:
    """The findings as the page shows them, in order: a line of evidence is shown under the first
    finding that cites it; a later one says how many of its lines are shown above, and where."""
    shown_under: dict[tuple, str] = {}
    views = []
    for finding in findings:
        rule = str(finding.get("rule") or finding.get("title") or "a finding")
        own, elsewhere = [], {}
        for line in _list(finding.get("evidence")):
            place = _evidence_place(line)
            if place is not None and place in shown_under and shown_under[place] != rule:
                elsewhere.setdefault(shown_under[place], 0)
                elsewhere[shown_under[place]] += 1
            else:
                own.append(line)
        views.append(_finding_view(dict(finding, evidence=own), elsewhere))
        for line in views[-1]["evidence"].items:
            shown_under.setdefault(_evidence_place(line), rule)
    return views


def _evidence_place(line: Any) -> tuple | None:
    return (line.get("source"), line.get("line"), line.get("text")) if isinstance(line, dict) else None


def _finding_view(finding: dict, evidence_elsewhere: dict[str, int] | None = None) -> dict:
    return {
        "evidence_elsewhere": [(rule, count) for rule, count in (evidence_elsewhere or {}).items()],
        "rule": finding.get("rule"),
        "title": finding.get("title") or "(untitled finding)",
        "severity": finding.get("severity") if finding.get("severity") in SEVERITY_ORDER else "info",
        "fru": finding.get("fru"),
        "suspect": _dict(finding.get("suspect")),
        "confidence": finding.get("confidence"),
        "count": finding.get("count"),
        "first": finding.get("first"),
        "last": finding.get("last"),
        "evidence": _evidence_capped([finding], MAX_EVIDENCE_PER_FINDING),
        "explanation": finding.get("explanation"),
        "recommendation": finding.get("recommendation"),
    }


def _device_cards(report: dict, devices: list[dict], suspects: list[dict], findings: list[dict],
                  md_arrays: list[dict]) -> Capped:
    """A card for every suspect and every device with errors or SMART data; suspects first."""
    summary_by_key: dict[str, list[dict]] = {}
    for row in _list(report.get("event_summary")):
        if isinstance(row, dict):
            for key in _identity_keys(row.get("device"), row.get("hctl")):
                summary_by_key.setdefault(key, []).append(row)
    findings_by_key: dict[str, list[dict]] = {}
    for finding in findings:
        suspect = _dict(finding.get("suspect"))
        for key in _identity_keys(suspect.get("device"), suspect.get("hctl")):
            findings_by_key.setdefault(key, []).append(finding)
    sectors = _dict(report.get("sectors"))
    failing = _dict(report.get("failing_lbas")) if "failing_lbas" in report else sectors
    arrays_by_member = _arrays_by_member(md_arrays)

    suspect_rank: dict[str, int] = {}
    for rank, suspect in enumerate(suspects, start=1):
        for key in _identity_keys(suspect.get("device"), suspect.get("hctl")):
            suspect_rank.setdefault(key, rank)

    cards: list[DeviceCard] = []
    seen: set[str] = set()
    for device in devices:
        keys = _identity_keys(device.get("name"), device.get("hctl"))
        rank = min((suspect_rank[key] for key in keys if key in suspect_rank), default=None)
        counts = {str(kind): int(_number(count)) for kind, count in _dict(device.get("error_counts")).items()}
        if rank is None and not any(counts.values()) and not device.get("smart"):
            continue
        seen.update(keys)
        cards.append(_card(device, keys, rank, counts, summary_by_key, findings_by_key, (failing, sectors),
                           arrays_by_member))
    for rank, suspect in enumerate(suspects, start=1):
        keys = _identity_keys(suspect.get("device"), suspect.get("hctl"))
        # A suspect named by device ("host0", "ata3") is its own card even when it shares an H:C:T:L
        # with a disk; only an unnamed suspect is the same as the device at its address.
        if not keys or keys[0] in seen:
            continue
        pseudo_device = {"name": suspect.get("device"), "hctl": suspect.get("hctl"), "model": suspect.get("model"),
                         "serial": suspect.get("serial"), "type": suspect.get("fru")}
        counts: dict[str, int] = {}
        for key in keys[:1]:
            for row in summary_by_key.get(key, []):
                kind = str(row.get("kind") or "event")
                counts[kind] = counts.get(kind, 0) + int(_number(row.get("count")))
        card = _card(pseudo_device, keys, rank, counts, summary_by_key, findings_by_key, (failing, sectors),
                     arrays_by_member)
        if card.error_total or card.decoded.items or card.evidence.items:
            seen.update(keys)
            cards.append(card)

    cards.sort(key=lambda card: (card.suspect_rank is None, card.suspect_rank or 0, -card.error_total, card.title))
    return Capped(cards[:MAX_DEVICE_CARDS], len(cards))


def _card(device: dict, keys: list[str], rank: int | None, counts: dict[str, int], summary_by_key: dict,
          findings_by_key: dict, sectors: tuple[dict, dict], arrays_by_member: dict) -> DeviceCard:
    """`sectors`: the failing LBAs (medium errors) and every sector a failed I/O named."""
    name = device.get("name")
    # An event row or finding that names a device belongs to that device only; one that names just
    # an H:C:T:L belongs to the device at that address. keys[0] is the most specific identity.
    primary_key = keys[0]
    rows = _unique(summary_by_key.get(primary_key, []) + [
        row for key in keys[1:] for row in summary_by_key.get(key, []) if not row.get("device")])
    related_findings = _unique(findings_by_key.get(primary_key, []) + [
        finding for key in keys[1:] for finding in findings_by_key.get(key, [])
        if not _dict(finding.get("suspect")).get("device")])

    decoded = sorted(rows, key=lambda row: -_number(row.get("count")))
    decoded_view = [{
        "kind": kind_label(row.get("kind")) if row.get("kind") else None,
        "sense_key": row.get("sense_key"),
        "asc_ascq": row.get("asc_ascq"),
        "meaning": asc_ascq_meaning(row.get("asc_ascq")),
        "count": row.get("count"),
        "first": row.get("first"),
        "last": row.get("last"),
    } for row in decoded[:MAX_DECODED_ROWS_PER_DEVICE]]

    failing_sectors, all_sectors = sectors
    device_sectors = _list(failing_sectors.get(name)) if name else []
    failing_set = set(device_sectors)
    other_sectors = [sector for sector in _list(all_sectors.get(name)) if sector not in failing_set] if name else []
    md_member_of = [str(array) for array in _list(device.get("md_member_of"))]
    if name:
        md_member_of += [array for array in arrays_by_member.get(name, []) if array not in md_member_of]

    return DeviceCard(
        key=primary_key,
        title=name or device.get("hctl") or "(unnamed device)",
        identity=[(label, str(value)) for label, value in (
            ("H:C:T:L", device.get("hctl")), ("Device", name), ("Type", device.get("type")),
            ("Model", model_name(device)), ("Firmware", device.get("revision")), ("Serial", device.get("serial")),
            ("WWN", device.get("wwn")), ("Port", device.get("ata_port")), ("Size", device.get("size")),
            ("Major:minor", device.get("majmin")),
        ) if value not in (None, "")],
        suspect_rank=rank,
        error_total=sum(counts.values()),
        error_counts=sorted(((kind_label(kind), count) for kind, count in counts.items()),
                            key=lambda item: (-item[1], item[0])),
        decoded=Capped(decoded_view, len(decoded)),
        sectors=capped(device_sectors, MAX_SECTORS_PER_DEVICE),
        other_sectors=capped(other_sectors, MAX_SECTORS_PER_DEVICE),
        smart=_dict(device.get("smart")) or None,
        evidence=_evidence_capped(related_findings, MAX_EVIDENCE_PER_DEVICE),
        md_arrays=md_member_of,
    )


def _evidence_capped(findings: list[dict], limit: int) -> Capped:
    """The first distinct evidence lines of these findings. Past the cap the rest are counted, not
    deduplicated (that would mean a pass over every line of a huge log), so `hidden` is an upper bound."""
    shown: list[dict] = []
    seen_places: set[tuple] = set()
    total = 0
    for finding in findings:
        lines = _list(finding.get("evidence"))
        for position, line in enumerate(lines):
            if len(shown) >= limit:
                total += len(lines) - position
                break
            if not isinstance(line, dict):
                continue
            place = (line.get("source"), line.get("line"), line.get("text"))
            if place in seen_places:
                continue
            seen_places.add(place)
            shown.append(line)
            total += 1
    return Capped(shown, total)


def _arrays_by_member(md_arrays: list[dict]) -> dict[str, list[str]]:
    """md member partitions (sdb1, nvme0n1p2) mapped back to their whole disks (sdb, nvme0n1)."""
    by_disk: dict[str, list[str]] = {}
    for array in md_arrays:
        for member in _list(array.get("members")):
            disk = disk_of(str(member))
            by_disk.setdefault(disk, [])
            if array.get("name") and array["name"] not in by_disk[disk]:
                by_disk[disk].append(str(array["name"]))
    return by_disk


def _source_totals(sources: list[dict]) -> dict:
    return {
        "files": len(sources),
        "lines": sum(int(_number(source.get("lines"))) for source in sources),
        "events": sum(int(_number(source.get("events"))) for source in sources),
        "unparsed": sum(int(_number(source.get("unparsed_candidates"))) for source in sources),
    }


def _identity_keys(device: Any, hctl: Any) -> list[str]:
    keys = []
    if device:
        keys.append(f"dev:{device}")
    if hctl:
        keys.append(f"hctl:{hctl}")
    return keys


def _unique(items: list) -> list:
    return list({id(item): item for item in items}.values())


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return 0.0


def model_name(device: dict) -> str | None:
    vendor, model = device.get("vendor"), device.get("model")
    if vendor and model and not str(model).upper().startswith(str(vendor).upper()):
        return f"{vendor} {model}"
    return model or vendor


def confidence_level(confidence: Any) -> str:
    value = _number(confidence)
    if value >= 0.75:
        return "high"
    if value >= 0.4:
        return "medium"
    return "low"


@functools.cache
def _describe_function():
    try:
        from diagdisk.decode.asc_ascq import describe
    except ImportError:
        return None
    return describe


def asc_ascq_meaning(code: Any) -> str | None:
    """The T10 meaning of an "11/00" code, when the decoder is installed; None otherwise."""
    describe = _describe_function()
    if describe is None or not isinstance(code, str) or "/" not in code:
        return None
    asc_text, _, ascq_text = code.partition("/")
    try:
        meaning = describe(int(asc_text, 16), int(ascq_text, 16))
    except (ValueError, LookupError, TypeError):
        return None
    return str(meaning) if meaning else None


def _missing(value: Any) -> bool:
    """None, empty, or a key the report did not have (jinja2's Undefined, which renders as "")."""
    return value is None or value == "" or isinstance(value, jinja2.Undefined)


def meter_width(value: Any) -> str:
    """A CSS width for a confidence bar, clamped so a bad value cannot break the layout."""
    return f"{min(max(_number(value), 0.0), 1.0) * 100:.0f}%"


def format_time(value: Any) -> str:
    """ISO times as 'YYYY-MM-DD HH:MM:SS UTC' (or with their offset); anything else as given."""
    if _missing(value):
        return "\u2014"
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    text = parsed.strftime("%Y-%m-%d %H:%M:%S")
    offset = parsed.utcoffset()
    if offset is None:
        return text
    if not offset:
        return f"{text} UTC"
    return f"{text} {parsed.strftime('%z')[:3]}:{parsed.strftime('%z')[3:]}"


def format_number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "\u2014" if _missing(value) else str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def format_percent(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "\u2014"
    return f"{round(value * 100)}%"


def _printable(value: Any) -> Any:
    """Every value the template prints, with control characters escaped (markup we made is kept)."""
    if isinstance(value, markupsafe.Markup):
        return value
    if isinstance(value, str):
        return escape_control(value)
    return value


def evidence_markup(value: Any) -> markupsafe.Markup:
    """A piece of evidence as the lines an engineer reads: the lines of a stitched report and the
    lines rsyslog joined with #012, each escaped and on its own line; a line past MAX_TEXT_CHARS
    is cut with an ellipsis and says how much was left out."""
    text = "" if _missing(value) else str(value)
    lines = [part for line in text.split("\n") for part in line.split(RSYSLOG_NEWLINE)]
    shown = []
    for line in lines[:MAX_EVIDENCE_LINES]:
        if len(line) <= MAX_TEXT_CHARS:
            shown.append(markupsafe.escape(escape_control(line)))
        else:
            shown.append(markupsafe.escape(escape_control(line[:MAX_TEXT_CHARS] + "\u2026"))
                         + markupsafe.Markup(' <span class="cut">[{:,} more characters]</span>')
                         .format(len(line) - MAX_TEXT_CHARS))
    if len(lines) > MAX_EVIDENCE_LINES:
        shown.append(markupsafe.escape(f"\u2026 {len(lines) - MAX_EVIDENCE_LINES} more lines"))
    return markupsafe.Markup("<br>").join(shown)


def clip_text(value: Any, limit: int = MAX_TEXT_CHARS) -> str:
    """Log text cut to a sane length: one pathological line must not make the page huge."""
    text = "" if _missing(value) else str(value)
    return text if len(text) <= limit else text[:limit] + f" \u2026 [{len(text) - limit:,} more characters]"
