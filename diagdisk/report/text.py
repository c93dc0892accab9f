"""The terminal summary: the verdict on the first line, its reasons wrapped below, then what was
read (coverage), findings, devices, events, md arrays and sources.

Every line passes through safetext.escape_control before it is printed: log text, file names,
host names and model strings come from the input and may hold terminal escape sequences. Colour
(the verdict's status and the findings' severities) is added after that, so it is only ever ours.
"""

from __future__ import annotations

import re
import textwrap

from ..safetext import escape_control
from .labels import kind_label
from .performance import performance_text

# Warnings shown per source and for the input as a whole; the JSON report lists them all.
MAX_WARNINGS_SHOWN = 10
MAX_NOT_READ_SHOWN = 8
DEFAULT_WIDTH = 100
EVIDENCE_CHARS = 150
ELLIPSIS = "\u2026"

_RESET = "\x1b[0m"
STATUS_STYLES = {"failure": "\x1b[1;31m", "degraded": "\x1b[1;33m", "suspect": "\x1b[1;33m",
                 "unexplained": "\x1b[1;35m", "inconclusive": "\x1b[1;35m", "healthy": "\x1b[1;32m"}
SEVERITY_STYLES = {"critical": "\x1b[1;31m", "high": "\x1b[31m", "medium": "\x1b[33m", "low": "\x1b[2m",
                   "info": "\x1b[2m"}
_FINDING_LINE = re.compile(r"^( {2,4}\[DD\d{3}\] )(critical|high|medium|low|info)\b")
# rsyslog writes a line break inside one kernel message as the four characters "#012"
_RSYSLOG_NEWLINE = "#012"


def verdict_line(report: dict) -> str:
    """The verdict in one line, as `--brief` prints it: 'FAILURE: Replace disk ...'."""
    verdict = report.get("verdict") or {}
    # a performance verdict shows its own words (SLOW MEMBER, NOT SATURATED) instead of the status
    label = verdict.get("label") or str(verdict.get("status") or "unknown").upper()
    headline = verdict.get("headline") or verdict.get("summary") or ""
    return escape_control(f"{label}: {headline}")


def _event_span(span: dict, coverage: dict | None) -> str:
    """When the events were written: wall-clock times, else the kernel log's seconds since boot (a
    dmesg without -T), else '? .. ?'."""
    first, last = _short_time(span.get("first")), _short_time(span.get("last"))
    if first or last:
        return f"{first or '?'} .. {last or '?'}"
    uptimes = ((coverage or {}).get("kernel_log") or {}).get("uptime_span")
    if uptimes and len(uptimes) == 2 and None not in uptimes:
        return f"uptime {seconds_since_boot(uptimes[0])} .. {seconds_since_boot(uptimes[1])}"
    return "? .. ?"


def seconds_since_boot(value: float) -> str:
    """Seconds since boot as a person reads them: 3.2 s, 1883958 s (21.8 days)."""
    if value < 100:
        return f"{value:.1f} s"
    days = f" ({value / 86400:.1f} days)" if value >= 86400 else ""
    return f"{value:.0f} s{days}"


def render_text(report: dict, *, color: bool = False, width: int | None = None, brief: bool = False) -> str:
    width = max(width or DEFAULT_WIDTH, 40)
    first = verdict_line(report)
    if brief:
        return _colored_verdict(first, report, color) + "\n"
    out: list[str] = []
    verdict = report["verdict"]
    for reason in verdict.get("reasons") or []:
        out += textwrap.wrap(str(reason), width=width, initial_indent="  - ", subsequent_indent="    ",
                             break_long_words=False, break_on_hyphens=False) or ["  -"]
    out += _weighing_lines(verdict.get("inference"), width)
    out.append("")
    host = report["host"]
    span = report["time_span"]
    out.append(f"diagdisk {report['tool']['version']}: {report['input']}")
    inferred = " (syslog years inferred from the report date)" if span.get("years_inferred") else ""
    out.append(f"host {host.get('hostname') or '?'}, kernel {host.get('kernel') or '?'}, "
               f"events {_event_span(span, report.get('coverage'))}{inferred}")
    out += _coverage_lines(report.get("coverage"), said=set(map(str, verdict.get("reasons") or [])))
    if report.get("complete") is False:
        out.append("INCOMPLETE: part of the input could not be read; the verdict covers what was read "
                   "(warnings under Sources)")
    # performance findings are listed under Performance, with their figures
    failure_findings = [f for f in report["findings"] if not f.get("performance")]
    causes = [f for f in failure_findings if not f.get("consequence")]
    consequences = [f for f in failure_findings if f.get("consequence")]
    if causes or consequences:
        out.append("")
        out.append("Findings")
    for finding in causes[:10]:
        out += _finding_lines(finding)
    if consequences:
        out.append("  Consequences (support the findings above, name no part of their own):")
        for finding in consequences[:5]:
            out += _finding_lines(finding, evidence=1, indent="    ")
        if len(consequences) > 5:
            out.append(f"    ... {len(consequences) - 5} more in --format json")
    out += _unexplained_lines(report["verdict"].get("unexplained") or [])
    out.append("")
    performance = performance_text(report.get("performance"))
    if performance:
        out += performance + [""]
    devices = list(report["devices"])
    if devices:
        out.append("Devices")
        rows = []
        for d in devices:
            errors = ", ".join(f"{kind_label(k)} {v}" for k, v in sorted(d["error_counts"].items(), key=lambda kv: -kv[1]))
            model = " ".join(x for x in (d.get("vendor"), d.get("model")) if x)
            smart = (d.get("smart") or {}).get("health") or ""
            rows.append([d.get("hctl") or "-", d.get("name") or "-", model or "-", smart or "-", errors or "-"])
        out += ["  " + line for line in _table(rows, ["H:C:T:L", "name", "model", "SMART", "errors"])]
        out.append("")
    summary = report["event_summary"]
    if summary:
        out.append("Events")
        rows = [[e["device"] or "-", kind_label(e["kind"]), e["sense_key"] or "", e["asc_ascq"] or "", e["count"],
                 _short_time(e["first"]), _short_time(e["last"])] for e in summary[:25]]
        out += ["  " + line for line in _table(rows, ["device", "event", "sense key", "ASC/ASCQ", "count", "first", "last"])]
        if len(summary) > 25:
            out.append(f"  ... {len(summary) - 25} more rows in --format json")
        out.append("")
    if report["md_arrays"]:
        out.append("md arrays")
        for a in report["md_arrays"]:
            counts = f" [{a['expected']}/{a['active']}]" if a["expected"] is not None else ""
            failed = f", failed: {', '.join(a['failed_members'])}" if a["failed_members"] else ""
            out.append(f"  {a['name']} {a['level'] or ''} {a['state']}{counts}{failed}")
        out.append("")
    out.append("Sources")
    quiet = []
    for s in report["sources"]:
        if not (s["lines"] or s["events"] or s["unparsed_candidates"] or s["warnings"] or s.get("notes")):
            quiet.append(s["path"])  # the date, hostname, a manifest, smartctl JSON: read, nothing to count
            continue
        extra = f", {s['unparsed_candidates']} unparsed candidate lines" if s["unparsed_candidates"] else ""
        kernel = f" ({s['kernel_lines']:,} kernel)" if s.get("kernel_lines") and s["kernel_lines"] != s["lines"] else ""
        out.append(f"  {s['path']} ({s['format']}): {s['lines']:,} lines{kernel}, {s['events']:,} events{extra}")
        for sample in s.get("unparsed_samples", [])[:3]:
            out.append(f"    unparsed {s['path']}:{sample['line']}: {clip(sample['text'], 160)}")
        out += _warning_lines(s["warnings"], "    warning: ")
        out += _warning_lines(s.get("notes") or [], "    note: ")
    if quiet:
        out.append(f"  also read: {', '.join(quiet)}")
    missing = not_listed_in_coverage(report)
    if missing:
        out.append(f"  not present: {', '.join(missing)}")
    out += _warning_lines(report.get("warnings", []), "  warning: ")
    out += _warning_lines(report.get("notes", []), "  note: ")
    lines = [escape_control(line) for line in out]
    if color:
        lines = [_colored_severity(line) for line in lines]
    return "\n".join([_colored_verdict(first, report, color), *lines]) + "\n"


def not_listed_in_coverage(report: dict) -> list[str]:
    """The expected sources missing from the input that the coverage lines do not already name
    (they name each one the verdict would have read): each is said once."""
    named = {str(gap.get("what")) for gap in ((report.get("coverage") or {}).get("not_read") or [])
             if isinstance(gap, dict)}
    return [path for path in report.get("missing_sources") or [] if path not in named]


def _coverage_lines(coverage: dict | None, said: set[str] = frozenset()) -> list[str]:
    """What the verdict stands on: the kernel log lines read and their span, SMART, what was not
    read (but for what the verdict's reasons above already `said`)."""
    if not isinstance(coverage, dict):
        return []
    kernel = coverage.get("kernel_log") or {}
    lines = kernel.get("lines") or 0
    if lines:
        span = ""
        if kernel.get("first") and kernel.get("last"):
            span = f" from {_short_time(kernel['first'])} to {_short_time(kernel['last'])}"
        elif kernel.get("uptime_span"):
            first, last = kernel["uptime_span"]
            span = f" from {first:.1f} s to {last:.1f} s after boot"
        sources = ", ".join(s["path"] for s in (kernel.get("sources") or [])[:4])
        more = f" and {len(kernel['sources']) - 4} more" if len(kernel.get("sources") or []) > 4 else ""
        read = f"read {lines:,} kernel log lines{span} ({sources}{more})"
    elif kernel.get("given") is False:
        read = "no kernel log was given"
    else:
        read = "read no kernel log line"
    smart = coverage.get("smart_devices") or []
    smart_text = f"SMART data for {', '.join(smart)}" if smart else "no SMART data"
    out = [f"coverage: {read}; {smart_text}"]
    window = coverage.get("window")
    if window:
        out.append(f"  window: {_short_time(window.get('since')) or 'start'} .. {_short_time(window.get('until')) or 'end'}"
                   " (events outside it left out)")
    not_read = [gap for gap in coverage.get("not_read") or [] if f"{gap.get('what')}: {gap.get('why')}" not in said]
    for gap in not_read[:MAX_NOT_READ_SHOWN]:
        out.append(f"  not read: {gap.get('what')}: {gap.get('why')}")
    if len(not_read) > MAX_NOT_READ_SHOWN:
        out.append(f"  ... {len(not_read) - MAX_NOT_READ_SHOWN} more in --format json")
    return out


def _finding_lines(finding: dict, evidence: int = 3, indent: str = "  ") -> list[str]:
    suspect = finding["suspect"]
    who = " ".join(x for x in (suspect.get("hctl"), suspect.get("device")) if x) or "-"
    lines = [f"{indent}[{finding['rule']}] {finding['severity']:<8} {finding['fru']:<10} {who:<22} "
             f"{finding['title']} (x{finding['count']}, confidence {finding['confidence']:.2f})"]
    for item in finding["evidence"][:evidence]:
        first, *more = evidence_lines(item["text"])
        place = f"{item['source']}:{item['line']}" if item.get("line") else str(item["source"])
        lines.append(f"{indent}    {place}: {clip(first, EVIDENCE_CHARS)}")
        # the other lines of a stitched report, without the header they share with the first
        lines += [f"{indent}      | {clip(_message_of(line), EVIDENCE_CHARS - 10)}" for line in more[:4]]
        if len(more) > 4:
            lines.append(f"{indent}      | ... {len(more) - 4} more lines")
    return lines


def evidence_lines(text: str) -> list[str]:
    """The physical lines of one piece of evidence: a stitched report's lines, and the lines rsyslog
    joined into one with its `#012` escape, each on its own."""
    return [part for line in str(text).split("\n") for part in line.split(_RSYSLOG_NEWLINE)] or [""]


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, its end marked with an ellipsis when cut."""
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1] + ELLIPSIS


def _message_of(line: str) -> str:
    from ..logs.framing import frame_line
    return frame_line(line).message or line


def _short_time(iso: str | None) -> str:
    """Seconds are enough on a terminal; the JSON report keeps fractions and UTC offsets."""
    return (iso or "")[:19].replace("T", " ")


def _table(rows: list[list[str]], headers: list[str]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return lines


def _warning_lines(warnings: list[str], prefix: str) -> list[str]:
    lines = [f"{prefix}{warning}" for warning in warnings[:MAX_WARNINGS_SHOWN]]
    if len(warnings) > MAX_WARNINGS_SHOWN:
        lines.append(f"{prefix}... {len(warnings) - MAX_WARNINGS_SHOWN} more in --format json")
    return lines


def _unexplained_lines(units: list[dict]) -> list[str]:
    """Trouble no rule explains: never hidden, never called healthy."""
    if not units:
        return []
    out = ["  Errors no rule explains (read, but not understood; most likely part in brackets):"]
    for unit in units[:8]:
        kinds = ", ".join(f"{k} x{n}" for k, n in unit["kinds"].items())
        out.append(f"    {unit['device']}: {kinds} [{unit['fru']}?]")
        for line in unit["evidence"][:2]:
            out.append(f"      {line['source']}:{line['line']}: {line['text'][:160]}")
    if len(units) > 8:
        out.append(f"    ... {len(units) - 8} more in --format json")
    return out


def _colored_verdict(line: str, report: dict, color: bool) -> str:
    status = str((report.get("verdict") or {}).get("status") or "")
    style = STATUS_STYLES.get(status)
    if not color or not style:
        return line
    head, sep, rest = line.partition(":")
    return f"{style}{head}{_RESET}{sep}{rest}"


def _colored_severity(line: str) -> str:
    match = _FINDING_LINE.match(line)
    if not match:
        return line
    severity = match.group(2)
    return f"{match.group(1)}{SEVERITY_STYLES[severity]}{severity}{_RESET}{line[match.end():]}"


def _weighing_lines(inference: dict | None, width: int) -> list[str]:
    """The likeliest explanations with their probabilities, what weighs most for the first and why
    each other one loses (docs/inference.md)."""
    if not inference or not inference.get("explanations") or not inference.get("event_groups"):
        return []   # nothing to weigh: no error was read
    lines = ["", "Weighing of the explanations (probability):"]
    for index, entry in enumerate(inference["explanations"][:3]):
        if index == 0:
            shown = ", ".join(f"{e['what']} at {e['source']}:{e['line']}" for e in entry.get("evidence", [])[:2])
            text = f"{entry['probability']:.2f} {entry['name']}" + (f": {shown}" if shown else "")
        else:
            text = f"{entry['probability']:.2f} {entry['name']}" + (f": {entry['why_not']}" if entry.get("why_not") else "")
        lines += textwrap.wrap(escape_control(text), width=width, initial_indent="  ", subsequent_indent="    ",
                               break_long_words=False, break_on_hyphens=False)
    return lines
