"""No all-clear without data: coverage says what was read, and a verdict is inconclusive when no
kernel log line was read."""

from __future__ import annotations

import gzip
from datetime import datetime
from pathlib import Path

import pytest

from diagdisk.diagnosis.analysis import analyze
from diagdisk.diagnosis.engine import VERDICT_STATUSES, evaluate_rules, load_rules, most_severe
from diagdisk.logs.coverage import KernelLines, kernel_span
from diagdisk.report.build import build_report

REPO = Path(__file__).resolve().parents[2]


def report_of(*paths, **options) -> dict:
    analysis = analyze([str(p) for p in paths], jobs=1, **options)
    findings, verdict = evaluate_rules(load_rules(), analysis)
    return build_report(analysis, findings, verdict)


# -- inputs that hold no kernel log --------------------------------------------------------------------

NOT_KERNEL_LOGS = {
    "README.md": "# Samples\n\nEach folder is a sosreport-shaped tree; run diagdisk analyze on it.\n",
    "dpkg.log": "2024-03-02 18:07:17 startup archives unpack\n"
                "2024-03-02 18:07:18 install linux-image-6.1.0-18-amd64:amd64 <none> 6.1.76-1\n"
                "2024-03-02 18:07:19 status half-installed linux-image-6.1.0-18-amd64:amd64 6.1.76-1\n",
    "access.log": '192.0.2.7 - - [02/Mar/2024:18:07:17 +0000] "GET /index.html HTTP/1.1" 200 612 "-" "curl/8.5"\n'
                  '192.0.2.7 - - [02/Mar/2024:18:07:18 +0000] "GET /disk/sdb HTTP/1.1" 404 153 "-" "curl/8.5"\n',
    "auth.log": "Mar  2 18:07:17 db1 sshd[812]: Accepted publickey for root from 192.0.2.7 port 52514\n"
                "Mar  2 18:07:18 db1 systemd-logind[501]: New session 4 of user root.\n",
}


@pytest.mark.parametrize("name", sorted(NOT_KERNEL_LOGS))
def test_an_input_that_is_no_kernel_log_is_inconclusive_not_healthy(tmp_path, name):
    path = tmp_path / name
    path.write_text(NOT_KERNEL_LOGS[name])
    report = report_of(path)
    assert report["verdict"]["status"] == "inconclusive"
    assert report["coverage"]["verdict_supported"] is False
    assert report["coverage"]["kernel_log"]["lines"] == 0
    assert "no kernel log line was read" in report["verdict"]["summary"]


def test_a_journal_a_user_could_not_read_is_inconclusive(tmp_path):
    # what journalctl prints to a user outside the adm/systemd-journal groups
    journal = tmp_path / "sos_commands/logs/journalctl_--no-pager_-k"
    journal.parent.mkdir(parents=True)
    journal.write_text("Hint: You are currently not seeing messages from other users and the system.\n"
                       "      Users in groups 'adm', 'systemd-journal' can see all messages.\n"
                       "-- No entries --\n")
    assert report_of(tmp_path)["verdict"]["status"] == "inconclusive"


def test_a_quiet_kernel_log_is_healthy_and_says_how_much_it_read(tmp_path):
    log = tmp_path / "messages"
    log.write_text("Mar  2 18:07:17 db1 kernel: Linux version 6.1.0-18-amd64\n"
                   "Mar  2 18:07:18 db1 systemd[1]: Started Journal Service.\n"
                   "Mar  3 09:00:00 db1 kernel: e1000e: eth0 NIC Link is Up 1000 Mbps Full Duplex\n")
    report = report_of(log, )
    assert report["verdict"]["status"] == "healthy"
    kernel = report["coverage"]["kernel_log"]
    assert kernel["lines"] == 2
    assert kernel["first"][5:19] == "03-02T18:07:17" and kernel["last"][5:19] == "03-03T09:00:00"
    assert "2 kernel log lines" in report["verdict"]["summary"]


def test_the_demo_coverage_names_sources_span_and_smart():
    report = report_of(REPO / "samples" / "demo-sosreport")
    coverage = report["coverage"]
    assert coverage["verdict_supported"] is True
    assert coverage["smart_devices"] == ["sdb", "sdc"]
    assert coverage["kernel_log"]["lines"] == sum(s["kernel_lines"] for s in report["sources"])
    assert {s["path"] for s in coverage["kernel_log"]["sources"]} == {
        "sos_commands/kernel/dmesg_-T", "var/log/messages", "var/log/messages-20240317.gz"}
    assert "sos_commands/kernel/dmesg" not in coverage["sources_read"]   # the other print of the ring buffer
    assert coverage["kernel_log"]["first"] < coverage["kernel_log"]["last"]


def test_missing_smart_data_is_said():
    report = report_of(REPO / "samples" / "seed004-ex3-medium-error-id0")
    assert {"what": "SMART data (smartctl)", "why": "not in the input"} in report["coverage"]["not_read"]


# -- precedence ----------------------------------------------------------------------------------------


def test_the_most_severe_status_wins():
    assert VERDICT_STATUSES == ("failure", "degraded", "suspect", "unexplained", "inconclusive", "healthy")
    assert most_severe(["inconclusive", "suspect"]) == "suspect"
    assert most_severe(["suspect", "degraded"]) == "degraded"
    assert most_severe(["unexplained", "inconclusive"]) == "unexplained"
    assert most_severe([]) == "healthy"


def test_a_smart_failure_without_a_kernel_log_still_names_the_disk_and_says_what_is_missing():
    report = report_of(REPO / "tests/corpus/smart-failed-realloc-st910021as-gsc/input")
    assert report["verdict"]["status"] in ("failure", "suspect")
    assert any("no kernel log line was read" in reason for reason in report["verdict"]["reasons"])


# -- counting kernel lines -------------------------------------------------------------------------------


def _count(text: bytes, style: str | None) -> KernelLines:
    lines = KernelLines()
    lines.feed(text, 0, len(text), style)
    return lines


def test_kernel_lines_of_a_system_log_are_those_with_the_kernel_tag():
    text = (b"Mar  2 18:07:17 db1 systemd[1]: x\nMar  2 18:07:18 db1 kernel: sd 1\n"
            b"Mar  2 18:07:19 db1 sshd[2]: y\nMar  3 01:00:00 db1 kernel: sd 2\n")
    lines = _count(text, "syslog")
    assert lines.count == 2
    assert lines.first.month_day_time[:3] == (3, 2, "18:07:18") and lines.last.month_day_time[:3] == (3, 3, "01:00:00")


def test_every_line_of_a_ring_buffer_print_is_a_kernel_line():
    lines = _count(b"[    1.000000] Linux version 6.1\n[    2.500000] sd 0:0:0:0: [sda] 1 blocks\n[  300.1] end", "dmesg")
    assert lines.count == 3 and (lines.first.uptime, lines.last.uptime) == (1.0, 300.1)


def test_a_bare_tag_counts_at_the_start_of_a_line():
    assert _count(b"kernel: a\nkernel: b\nnot kernel: c\n", "tag_only").count == 2


def test_counts_do_not_depend_on_where_the_text_is_cut():
    text = b"".join(b"Mar  2 18:07:%02d db1 %s: message %d\n" % (n % 60, b"kernel" if n % 3 else b"cron[1]", n)
                    for n in range(200))
    whole = _count(text, "syslog")
    for cut_every in (1, 7, 64):
        pieces = KernelLines()
        starts = [0]
        for index, char in enumerate(text):
            if char == 10 and (index // 40) % cut_every == 0:
                starts.append(index + 1)
        starts = sorted(set(starts + [len(text)]))
        for start, end in zip(starts, starts[1:]):
            part = KernelLines()
            part.feed(text, start, end, "syslog")
            pieces.join(part)
        assert (pieces.count, pieces.first, pieces.last) == (whole.count, whole.first, whole.last)


def test_a_year_is_inferred_for_the_span_from_the_report_date():
    lines = _count(b"Dec 30 10:00:00 db1 kernel: a\nJan  2 11:00:00 db1 kernel: b\n", "syslog")
    span = kernel_span(lines, datetime(2025, 2, 1))
    assert (span.first, span.last) == ("2024-12-30T10:00:00", "2025-01-02T11:00:00")


def test_a_compressed_rotation_counts_its_kernel_lines(tmp_path):
    root = tmp_path / "sos"
    (root / "var/log").mkdir(parents=True)
    (root / "var/log/messages-20240301.gz").write_bytes(gzip.compress(
        b"Mar  1 00:00:01 db1 kernel: e1000e: eth0 NIC Link is Up\nMar  1 00:00:02 db1 cron[1]: x\n"))
    (root / "var/log/messages").write_text("Mar  2 00:00:01 db1 cron[1]: y\n")
    report = report_of(root)
    assert report["coverage"]["kernel_log"]["lines"] == 1
    assert report["verdict"]["status"] == "healthy"


def test_a_dmesg_timed_since_boot_says_how_long_after_boot_it_reaches(tmp_path):
    dmesg = tmp_path / "sos_commands/kernel/dmesg"
    dmesg.parent.mkdir(parents=True)
    dmesg.write_text("[    0.000000] Linux version 6.1.0-18-amd64\n[ 7265.125000] e1000e: eth0 NIC Link is Up\n")
    report = report_of(tmp_path)
    assert report["coverage"]["kernel_log"]["uptime_span"] == [0.0, 7265.125]
    assert report["verdict"]["summary"] == "No storage fault found in 2 kernel log lines (0.0 s .. 2 h 1 min after boot)."


def test_a_bundle_gap_and_a_missing_source_of_one_file_are_said_once():
    from diagdisk.diagnosis.coverage import _collection_gaps
    gaps, kernel_logs = _collection_gaps({"privileged": True, "items": [
        {"name": "/proc/mdstat", "status": "skipped", "reason": "not present"},
        {"name": "dmesg", "status": "failed", "reason": "exit status 1", "stderr": "dmesg: Operation not permitted"}]})
    assert kernel_logs == [{"what": "dmesg", "why": "exit status 1: dmesg: Operation not permitted"}]
    assert gaps[0] == kernel_logs[0] and {"what": "/proc/mdstat", "why": "not present"} in gaps
