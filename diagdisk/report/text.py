"""The terminal summary: the verdict first, then devices, md arrays and what was read."""

from __future__ import annotations

# Warnings shown per source and for the input as a whole; the JSON report lists them all.
MAX_WARNINGS_SHOWN = 10


def _table(rows: list[list[str]], headers: list[str]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return lines


def render_text(report: dict) -> str:
    out: list[str] = []
    host = report["host"]
    span = report["time_span"]
    out.append(f"diagdisk {report['tool']['version']}: {report['input']}")
    inferred = " (syslog years inferred from the report date)" if span.get("years_inferred") else ""
    out.append(f"host {host.get('hostname') or '?'}, kernel {host.get('kernel') or '?'}, "
               f"events {_short_time(span.get('first')) or '?'} .. {_short_time(span.get('last')) or '?'}{inferred}")
    out.append("")
    verdict = report["verdict"]
    out.append(f"VERDICT: {verdict['status'].upper()}: {verdict['summary']}")
    if report.get("complete") is False:
        out.append("INCOMPLETE: part of the input could not be read; the verdict covers what was read "
                   "(warnings under Sources)")
    causes = [f for f in report["findings"] if not f.get("consequence")]
    consequences = [f for f in report["findings"] if f.get("consequence")]
    for finding in causes[:10]:
        out += _finding_lines(finding)
    if consequences:
        out.append("  Consequences (support the findings above, name no part of their own):")
        for finding in consequences[:5]:
            out += _finding_lines(finding, evidence=1)
        if len(consequences) > 5:
            out.append(f"    ... {len(consequences) - 5} more in --format json")
    out += _unexplained_lines(report["verdict"].get("unexplained") or [])
    out.append("")
    devices = [d for d in report["devices"]]
    if devices:
        out.append("Devices")
        rows = []
        for d in devices:
            errors = ", ".join(f"{k} {v}" for k, v in sorted(d["error_counts"].items(), key=lambda kv: -kv[1]))
            model = " ".join(x for x in (d.get("vendor"), d.get("model")) if x)
            smart = (d.get("smart") or {}).get("health") or ""
            rows.append([d.get("hctl") or "-", d.get("name") or "-", model or "-", smart or "-", errors or "-"])
        out += ["  " + line for line in _table(rows, ["H:C:T:L", "name", "model", "SMART", "errors"])]
        out.append("")
    summary = report["event_summary"]
    if summary:
        out.append("Events")
        rows = [[e["device"] or "-", e["kind"], e["sense_key"] or "", e["asc_ascq"] or "", e["count"],
                 _short_time(e["first"]), _short_time(e["last"])] for e in summary[:25]]
        out += ["  " + line for line in _table(rows, ["device", "kind", "sense key", "ASC/ASCQ", "count", "first", "last"])]
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
        if not (s["lines"] or s["events"] or s["unparsed_candidates"] or s["warnings"]):
            quiet.append(s["path"])  # the date, hostname, a manifest, smartctl JSON: read, nothing to count
            continue
        extra = f", {s['unparsed_candidates']} unparsed candidate lines" if s["unparsed_candidates"] else ""
        out.append(f"  {s['path']} ({s['format']}): {s['lines']} lines, {s['events']} events{extra}")
        for sample in s.get("unparsed_samples", [])[:3]:
            out.append(f"    unparsed {s['path']}:{sample['line']}: {sample['text'][:160]}")
        out += _warning_lines(s["warnings"], "    warning: ")
    if quiet:
        out.append(f"  also read: {', '.join(quiet)}")
    if report["missing_sources"]:
        out.append(f"  not present: {', '.join(report['missing_sources'])}")
    out += _warning_lines(report.get("warnings", []), "  warning: ")
    return "\n".join(out) + "\n"


def _finding_lines(finding: dict, evidence: int = 3) -> list[str]:
    suspect = finding["suspect"]
    who = " ".join(x for x in (suspect.get("hctl"), suspect.get("device")) if x) or "-"
    lines = [f"  [{finding['rule']}] {finding['severity']:<8} {finding['fru']:<10} {who:<22} "
             f"{finding['title']} (x{finding['count']}, confidence {finding['confidence']:.2f})"]
    for item in finding["evidence"][:evidence]:
        first, *more = item["text"].split("\n")
        lines.append(f"      {item['source']}:{item['line']}: {first[:150]}")
        # the other lines of a stitched report, without the header they share with the first
        lines += [f"        | {_message_of(line)[:140]}" for line in more[:4]]
    return lines


def _message_of(line: str) -> str:
    from ..logs.framing import frame_line
    return frame_line(line).message or line


def _short_time(iso: str | None) -> str:
    """Seconds are enough on a terminal; the JSON report keeps fractions and UTC offsets."""
    return (iso or "")[:19].replace("T", " ")


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
