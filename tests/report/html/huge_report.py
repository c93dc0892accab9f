"""A report dict in the diagdisk.report/1 shape for a log with a million errors.

It is what a large JBOD host produces when one disk floods the log for a month: hundreds of disks,
a million sense errors on one of them, per-minute timeline buckets, thousands of source files,
and one pathological megabyte-long line. Run as a script to write it as JSON:

    python tests/report/html/huge_report.py /tmp/huge.json
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta

START = datetime(2026, 10, 21, 0, 0, tzinfo=UTC)
DAYS = 30


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _disk_name(index: int) -> str:
    """sda .. sdz, sdaa .. sdzz, as the kernel names them."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    if index < 26:
        return "sd" + letters[index]
    return "sd" + letters[index // 26 - 1] + letters[index % 26]


def make_huge_report(errors: int = 1_000_000, disks: int = 512) -> dict:
    failing = _disk_name(1)
    devices = []
    for index in range(disks):
        name = _disk_name(index)
        devices.append({
            "hctl": f"{index // 128}:0:{index % 128}:0", "name": name, "majmin": f"{8 + index // 16}:{(index % 16) * 16}",
            "vendor": "SEAGATE", "model": "ST4000NM0043", "revision": "E004", "serial": f"Z1Z{index:05d}X",
            "wwn": f"0x5000c500{index:08x}", "ata_port": None, "type": "disk", "size": "3.6T",
            "md_member_of": [f"md{index // 4}"],
            "error_counts": {"sense": errors, "io_error": errors} if name == failing else ({"sense": 3} if index % 5 == 0 else {}),
            "smart": {"health": "failed" if name == failing else "passed", "serial": f"Z1Z{index:05d}X", "wwn": None,
                      "firmware": "E004", "flags": ["grown_defects:40211"] if name == failing else []},
        })

    minutes = DAYS * 24 * 60
    timeline = []
    per_minute, remainder = divmod(errors, minutes)
    for minute in range(minutes):
        start = START + timedelta(minutes=minute)
        count = per_minute + (1 if minute < remainder else 0)
        for kind in ("sense", "io_error"):
            timeline.append({"start": _iso(start), "end": _iso(start + timedelta(minutes=1)),
                             "device": failing, "kind": kind, "count": count})
        if minute % 60 == 0:
            timeline.append({"start": _iso(start), "end": _iso(start + timedelta(minutes=1)),
                             "device": "host0", "kind": "host_reset", "count": 1})
    for index in range(0, disks, 5):
        for day in range(DAYS):
            start = START + timedelta(days=day, minutes=index)
            timeline.append({"start": _iso(start), "end": _iso(start + timedelta(minutes=1)),
                             "device": _disk_name(index), "kind": "sense", "count": 1})
    timeline.append({"start": _iso(START + timedelta(days=3)), "end": _iso(START + timedelta(days=3, minutes=1)),
                     "device": "md0", "kind": "md_degraded", "count": 1})

    # A million evidence lines as a list of that length; the entries repeat a few thousand objects
    # so the fixture itself fits in memory (the renderer only sees the list).
    distinct = [{"source": f"var/log/messages-{2026102 + n % 30}", "line": 1000 + n,
                 "text": f"Oct 21 00:00:01 jbod1 kernel: sd 0:0:1:0: [{failing}] tag#{n % 256} Sense Key : Medium Error "
                         f"[current] <script>alert({n})</script>"} for n in range(4096)]
    distinct[7] = {"source": "var/log/messages", "line": 8, "text": "X" * 1_000_000}
    evidence = [distinct[n % len(distinct)] for n in range(errors)]

    findings = [{
        "rule": "DD101", "title": "Unrecovered read errors reported by the drive", "severity": "critical",
        "fru": "disk", "suspect": {"hctl": "0:0:1:0", "device": failing, "model": "SEAGATE ST4000NM0043",
                                   "serial": "Z1Z00001X"},
        "confidence": 0.95, "count": errors, "first": _iso(START), "last": _iso(START + timedelta(days=DAYS)),
        "evidence": evidence, "explanation": "Medium errors at many LBAs.", "recommendation": "Replace the disk.",
    }]
    for index in range(0, disks, 5):
        findings.append({
            "rule": "DD120", "title": "Isolated recovered errors", "severity": "low", "fru": "disk",
            "suspect": {"hctl": devices[index]["hctl"], "device": devices[index]["name"], "model": None, "serial": None},
            "confidence": 0.2, "count": 3, "first": None, "last": None,
            "evidence": [{"source": "var/log/messages", "line": 10 * index + n, "text": "recovered error"} for n in range(3)],
            "explanation": None, "recommendation": None,
        })

    return {
        "schema": "diagdisk.report/1",
        "tool": {"name": "diagdisk", "version": "0.1.0"},
        "input": "sosreport-jbod1-huge",
        "generated": _iso(START + timedelta(days=DAYS + 1)),
        "host": {"hostname": "jbod1", "kernel": "5.14.0-427.el9.x86_64", "report_date": None},
        "time_span": {"first": _iso(START), "last": _iso(START + timedelta(days=DAYS))},
        "sources": [{"path": f"var/log/messages-{n:05d}", "format": "syslog", "lines": 400_000, "events": 250,
                     "unparsed_candidates": n % 7, "warnings": [f"warning {w}" for w in range(n % 12)]}
                    for n in range(4000)],
        "missing_sources": [f"sos_commands/ata/smartctl_-a_.dev.{_disk_name(n)}" for n in range(400)],
        "devices": devices,
        "event_summary": [{"device": failing, "hctl": "0:0:1:0", "kind": "sense", "sense_key": "MEDIUM ERROR",
                           "asc_ascq": f"11/{n:02X}", "count": errors // 200, "first": _iso(START),
                           "last": _iso(START + timedelta(days=DAYS))} for n in range(200)]
                         + [{"device": _disk_name(n), "hctl": None, "kind": "sense", "sense_key": "RECOVERED ERROR",
                             "asc_ascq": "17/01", "count": 3, "first": None, "last": None} for n in range(0, disks, 5)],
        "sectors": {failing: list(range(10_000_000, 10_000_000 + errors))},
        "md_arrays": [{"name": f"md{n}", "level": "raid6", "state": "degraded" if n == 0 else "clean",
                       "failed_members": [f"{failing}1"] if n == 0 else [], "active": 3 if n == 0 else 4, "expected": 4,
                       "members": [f"{_disk_name(4 * n + m)}1" for m in range(4)]} for n in range(disks // 4)],
        "timeline": timeline,
        "findings": findings,
        "verdict": {"status": "failure", "summary": f"Replace disk 0:0:1:0 ({failing}): {errors:,} medium errors.",
                    "suspects": [{"fru": "disk", "hctl": devices[n]["hctl"], "device": devices[n]["name"],
                                  "model": "SEAGATE ST4000NM0043", "serial": devices[n]["serial"],
                                  "confidence": 0.95 if n == 1 else 0.1, "rules": ["DD101" if n == 1 else "DD120"],
                                  "md_arrays": [f"md{n // 4}"]} for n in [1] + list(range(0, disks, 5))]},
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: huge_report.py OUTPUT.json")
    with open(sys.argv[1], "w", encoding="utf-8") as output:
        json.dump(make_huge_report(), output)
