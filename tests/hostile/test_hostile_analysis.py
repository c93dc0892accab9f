"""Hostile input through the whole analysis: where each warning lands in the report, what counts
as a partial analysis, and that odd content (absurd numbers, clocks, cut lines) never breaks it."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import shutil
from pathlib import Path

import pytest
from markupsafe import escape

from diagdisk.inputs import chunks, safeio
from diagdisk.diagnosis.analysis import analyze
from diagdisk.errors import InputError, is_partial
from diagdisk.inputs.limits import Limits
from diagdisk.report.build import build_report
from diagdisk.report.html import render_html
from diagdisk.report.text import render_text
from diagdisk.diagnosis.engine import evaluate_rules, load_rules

from hostile_builders import dir_member, file_member, link_member, permission_denied_for, write_archive

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TOP = "sosreport-db1-2024-03-14-abcdef"
MEDIUM_ERROR = (b"2024-03-14T02:17:43.512345+00:00 db1 kernel: sd 2:0:2:0: [sdc] tag#12 Sense Key : Medium Error "
                b"[current]\n")


def report_of(paths, limits: Limits | None = None) -> dict:
    analysis = analyze([str(p) for p in paths], limits=limits)
    findings, verdict = evaluate_rules(load_rules(), analysis)
    return build_report(analysis, findings, verdict)


def source(report: dict, path: str) -> dict:
    (found,) = [s for s in report["sources"] if s["path"] == path]
    return found


def sosreport_members(messages: bytes = MEDIUM_ERROR * 50):
    return [
        dir_member(TOP),
        file_member(f"{TOP}/var/log/messages", messages),
        file_member(f"{TOP}/proc/scsi/scsi", b"Attached devices:\n"),
        file_member(f"{TOP}/sos_commands/host/hostname", b"db1\n"),
        link_member(f"{TOP}/hostname", "sos_commands/host/hostname"),
    ]


# -- where warnings land -------------------------------------------------------------------------


def test_a_member_cut_by_the_file_cap_is_warned_about_in_its_own_source(tmp_path, scratch):
    tarball = write_archive(tmp_path / "sos.tar.xz", sosreport_members())
    report = report_of([tarball], Limits(max_file_bytes=1000))
    messages = source(report, "var/log/messages")
    assert len(messages["warnings"]) == 1 and "over the per-file cap of 1000" in messages["warnings"][0]
    assert is_partial(messages["warnings"][0])
    assert not any("per-file cap" in warning for warning in report["warnings"])
    assert report["complete"] is False
    assert list(scratch.iterdir()) == []


def test_archive_damage_is_an_input_level_warning(tmp_path, scratch):
    members = sosreport_members() + [file_member(f"{TOP}/sos_commands/x/f{i}", random.Random(i).randbytes(4000))
                                     for i in range(50)]
    full = write_archive(tmp_path / "full.tar.gz", members, "gz")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    report = report_of([cut])
    assert report["complete"] is False
    assert any("truncated" in warning and str(cut) in warning for warning in report["warnings"])
    assert source(report, "var/log/messages")["events"] > 0


def test_refused_members_are_notes_that_leave_the_analysis_complete(tmp_path, scratch):
    members = sosreport_members() + [file_member("../../etc/cron.d/evil", b"* * * * * root sh\n"),
                                     link_member(f"{TOP}/etc/localtime", "/usr/share/zoneinfo/UTC")]
    report = report_of([write_archive(tmp_path / "sos.tar.xz", members)])
    assert any("'..'" in warning for warning in report["warnings"])
    assert any("points outside the archive" in warning for warning in report["warnings"])
    assert report["complete"] is True
    assert not (tmp_path.parent / "etc").exists()


def test_an_unreadable_log_is_a_source_with_a_warning_not_a_missing_one(tmp_path, monkeypatch):
    tree = tmp_path / "sosreport"
    shutil.copytree(SAMPLES / "modern-sas-medium-error-sdc", tree)
    messages = tree / "var/log/messages"
    permission_denied_for(monkeypatch, safeio.os, "open", messages)
    permission_denied_for(monkeypatch, chunks, "open", messages)
    report = report_of([tree])
    assert source(report, "var/log/messages")["warnings"] == ["var/log/messages: cannot open: Permission denied"]
    assert not any("var/log/messages" in missing for missing in report["missing_sources"])
    assert report["complete"] is False


def test_an_unreadable_folder_is_an_input_level_warning(tmp_path, monkeypatch):
    tree = tmp_path / "sosreport"
    shutil.copytree(SAMPLES / "modern-sas-medium-error-sdc", tree)
    permission_denied_for(monkeypatch, safeio.os, "scandir", tree / "sos_commands")
    report = report_of([tree])
    assert report["warnings"] == [f"{tree / 'sos_commands'}: permission denied; folder skipped"]
    assert report["complete"] is False


def test_an_unreadable_file_in_a_plain_folder_of_logs_is_named(tmp_path, monkeypatch):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs/kern.log").write_bytes(MEDIUM_ERROR)
    (tmp_path / "logs/other.log").write_bytes(MEDIUM_ERROR)
    permission_denied_for(monkeypatch, safeio.os, "open", tmp_path / "logs/other.log")
    report = report_of([tmp_path / "logs"])
    assert report["warnings"] == ["other.log: permission denied; not read"]
    assert report["complete"] is False


def test_a_gzip_rotation_corrupt_halfway_keeps_its_events_and_names_itself(tmp_path):
    tree = tmp_path / "sosreport"
    (tree / "var/log").mkdir(parents=True)
    body = b"".join(MEDIUM_ERROR.replace(b"tag#12", b"tag#%d" % i) for i in range(3000))
    body += b"".join(b"%s\n" % random.Random(i).randbytes(40).hex().encode() for i in range(3000))
    data = bytearray(gzip.compress(body))
    data[len(data) // 2 : len(data) // 2 + 64] = b"\x00" * 64
    (tree / "var/log/messages-20240314").write_bytes(bytes(data))
    report = report_of([tree])
    rotation = source(report, "var/log/messages-20240314")
    assert rotation["events"] >= 1000
    (warning,) = rotation["warnings"]
    assert warning.startswith("var/log/messages-20240314: gzip data is corrupt or truncated after ")
    assert is_partial(warning) and report["complete"] is False


def test_a_binary_file_named_messages_is_skipped_with_a_warning(tmp_path):
    tree = tmp_path / "sosreport"
    (tree / "var/log").mkdir(parents=True)
    (tree / "var/log/messages").write_bytes(random.Random(5).randbytes(50_000))
    (tree / "var/log/messages.1").write_bytes(MEDIUM_ERROR)
    report = report_of([tree])
    assert source(report, "var/log/messages")["warnings"] == ["var/log/messages: binary data, not a text log; skipped"]
    assert source(report, "var/log/messages.1")["events"] == 1
    assert report["complete"] is False


def test_an_empty_log_is_noted_and_the_analysis_stays_complete(tmp_path):
    (tmp_path / "var/log").mkdir(parents=True)
    (tmp_path / "var/log/messages").write_bytes(b"")
    (tmp_path / "var/log/messages.1").write_bytes(MEDIUM_ERROR)
    report = report_of([tmp_path])
    assert source(report, "var/log/messages")["warnings"] == ["var/log/messages: empty file; nothing to read"]
    assert report["complete"] is True


def test_an_empty_file_alone_is_bad_input_not_a_healthy_system(tmp_path):
    (tmp_path / "messages").write_bytes(b"")
    with pytest.raises(InputError, match="empty file; nothing to analyze"):
        analyze([str(tmp_path / "messages")])


def test_every_warning_reaches_the_text_and_html_reports(tmp_path, scratch):
    tarball = write_archive(tmp_path / "sos.tar.xz", sosreport_members() + [file_member("/etc/passwd", b"x")])
    report = report_of([tarball], Limits(max_file_bytes=1000))
    text = render_text(report)
    page = render_html(report)
    assert "INCOMPLETE: part of the input could not be read" in text
    assert 'id="incomplete"' in page
    for warning in report["warnings"] + source(report, "var/log/messages")["warnings"]:
        assert warning in text
        assert str(escape(warning)) in page


def test_thousands_of_rotated_logs_are_all_read_in_order(tmp_path):
    logs = tmp_path / "sosreport/var/log"
    logs.mkdir(parents=True)
    for index in range(2000):
        line = MEDIUM_ERROR.replace(b"tag#12", b"tag#%d" % index)
        (logs / f"messages-{20200101 + index}").write_bytes(gzip.compress(line) if index % 2 else line)
    report = report_of([tmp_path / "sosreport"])
    names = [s["path"] for s in report["sources"] if s["path"].startswith("var/log/messages-")]
    assert names == sorted(names) and len(names) == 2000
    assert sum(s["events"] for s in report["sources"]) == 2000
    assert report["complete"] is True


def _medium_error_on_target(target: int) -> bytes:
    return MEDIUM_ERROR.replace(b"2:0:2:0: [sdc]", b"2:0:%d:0: [sd%s]" % (target, chr(97 + target % 26).encode()))


def test_the_events_cap_stops_reading_with_a_warning_on_each_source_it_cuts(tmp_path):
    logs = tmp_path / "sosreport/var/log"
    logs.mkdir(parents=True)
    # 40 distinct events (one per target) go over a cap of 10; the other file's 2 do not
    (logs / "messages.1").write_bytes(b"".join(_medium_error_on_target(i) for i in range(40)))
    (logs / "messages").write_bytes(b"".join(_medium_error_on_target(i) for i in range(2)) * 3)
    (logs / "kern.log").write_bytes(b"Jan  1 00:00:00 db1 systemd[1]: nothing storage here\n")
    report = report_of([tmp_path / "sosreport"], Limits(max_events=10))
    cut = {s["path"]: s["warnings"] for s in report["sources"] if s["warnings"]}
    assert sorted(cut) == ["var/log/messages.1"]
    [warning] = cut["var/log/messages.1"]
    assert "over 10 distinct events held for this source (the events cap" in warning and is_partial(warning)
    assert "stopped reading after line 11" in warning  # line 11 closed the tenth report
    assert source(report, "var/log/messages")["events"] == 6
    assert report["complete"] is False


def test_copies_of_one_error_cost_one_record(tmp_path):
    """Memory follows distinct events, not lines: one record, counted in full, whatever the count
    (benchmarks/hostile.py runs ten million)."""
    log = tmp_path / "messages"
    log.write_bytes(MEDIUM_ERROR.replace(b"tag#12 ", b"") * 200_000)
    analysis = analyze([str(log)])
    [record] = [e for e in analysis.events if e["kind"] == "sense"]
    assert record["repeat"] == 200_000
    assert len(record["_samples"]) <= 20 and len(record["_runs"]) == 1


# -- inputs that are not what they claim -------------------------------------------------------------


@pytest.mark.parametrize("content, reason", [
    (b"<html><body>502 Bad Gateway</body></html>\n", "not a tar archive (no gzip, xz, bzip2 or tar signature)"),
    (b"", "not a tar archive (empty file)"),
    (gzip.compress(b"<html>an error page, gzip'ed</html>\n", mtime=0), "the gzip data does not hold a tar archive"),
], ids=["html-error-page", "empty", "gzipped-html-error-page"])  # the same names in every worker of a parallel run
def test_a_damaged_download_named_like_a_sosreport_is_bad_input_not_a_healthy_log(tmp_path, scratch, content, reason):
    download = tmp_path / "sosreport-db1.tar.xz"
    download.write_bytes(content)
    with pytest.raises(InputError) as caught:
        analyze([str(download)])
    assert reason in str(caught.value) and caught.value.path == str(download)


def test_an_archive_holding_only_a_nested_archive_says_so(tmp_path, scratch):
    inner = write_archive(tmp_path / "inner.tar.xz", sosreport_members())
    outer = write_archive(tmp_path / "upload.tar", [file_member("case-123/sosreport.tar.xz", inner.read_bytes())],
                          "tar")
    with pytest.raises(InputError, match="nested archive.*sosreport.tar.xz; extract one and analyze it"):
        analyze([str(outer)])


def test_a_folder_with_nothing_readable_is_bad_input(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos/cat.jpg").write_bytes(random.Random(1).randbytes(5000))
    with pytest.raises(InputError, match="holds no log, sosreport or command output"):
        analyze([str(tmp_path / "photos")])


def test_among_several_inputs_one_with_nothing_readable_is_a_warning(tmp_path):
    (tmp_path / "cat.jpg").write_bytes(random.Random(1).randbytes(5000))
    (tmp_path / "messages").write_bytes(MEDIUM_ERROR)
    report = report_of([tmp_path / "cat.jpg", tmp_path / "messages"])
    assert report["warnings"] == [f"{tmp_path / 'cat.jpg'}: holds no log, sosreport or command output diagdisk can read"]
    assert source(report, "messages")["events"] == 1


def test_a_zip_or_zstd_file_is_refused_with_the_reason(tmp_path):
    (tmp_path / "logs.zip").write_bytes(b"PK\x03\x04" + bytes(60))
    with pytest.raises(InputError, match="a zip archive"):
        analyze([str(tmp_path / "logs.zip")])


def test_a_compressed_tar_without_a_tar_name_is_still_opened_as_an_archive(tmp_path, scratch):
    upload = write_archive(tmp_path / "upload-7731.bin", sosreport_members(), "bz2")
    report = report_of([upload])
    assert source(report, "var/log/messages")["events"] == 50
    assert report["host"]["hostname"] == "db1"


# -- content -------------------------------------------------------------------------------------------


HUGE = 2**80
ABSURD_LINES = f"""\
2024-03-14T02:17:43.512345+00:00 db kernel: sd {HUGE}:{HUGE}:{HUGE}:{HUGE}: [sdc] tag#12 Sense Key : Medium Error [current]
2024-03-14T02:17:43.512345+00:00 db kernel: sd {HUGE}:{HUGE}:{HUGE}:{HUGE}: [sdc] tag#12 CDB: Read(16) 88 00 ff ff ff ff ff ff ff ff 00 00 00 08 00 00
2024-03-14T02:17:43.512345+00:00 db kernel: blk_update_request: critical medium error, dev sdc, sector {HUGE} op 0x0:(READ) flags 0x0
2024-03-14T02:17:43.512345+00:00 db kernel: Buffer I/O error on dev sdc, logical block {HUGE}, async page read
2024-03-14T02:17:43.512345+00:00 db kernel: ata{HUGE}.00: exception Emask 0x0 SAct 0x0 SErr 0x0 action 0x0
2024-03-14T02:17:43.512345+00:00 db kernel: ata{HUGE}.00: cmd 25/00:08:ff:ff:ff/00:ff:ff:00:00/e0 tag 0 dma 4096 in
2024-03-14T02:17:43.512345+00:00 db kernel: ata{HUGE}.00: error: {{ UNC }}
2024-03-14T02:17:43.512345+00:00 db kernel: nvme nvme{HUGE}: I/O {HUGE} QID {HUGE} timeout, aborting
2024-03-14T02:17:43.512345+00:00 db kernel: md/raid1:md{HUGE}: Disk failure on sdb{HUGE}, disabling device.
2024-03-14T02:17:43.512345+00:00 db kernel: sd {HUGE}:0:0:0: [sd{HUGE}] {HUGE} 512-byte logical blocks: ({HUGE} TB/3.64 TiB)
"""


def test_absurd_numbers_in_logs_are_warnings_and_the_rest_flows_through_every_report(tmp_path):
    """A log line whose number no kernel field holds (an H:C:T:L part, a sector, a tag of 2^80) is
    not read: its source says which line and why. Its other lines are read, and a table's huge
    numbers flow through topology, rules and every report without a crash."""
    tree = tmp_path / "sosreport"
    (tree / "var/log").mkdir(parents=True)
    (tree / "proc/scsi").mkdir(parents=True)
    (tree / "var/log/messages").write_text(ABSURD_LINES)
    (tree / "proc/scsi/scsi").write_text(f"Attached devices:\nHost: scsi{HUGE} Channel: {HUGE} Id: {HUGE} Lun: {HUGE}\n"
                                         f"  Vendor: ATA      Model: X Rev: 1\n  Type:   Direct-Access\n")
    (tree / "proc/mdstat").write_text(f"Personalities : [raid1]\nmd{HUGE} : active raid1 sdb1[{HUGE}](F) sda1[0]\n"
                                      f"      {HUGE} blocks super 1.2 [{HUGE}/{HUGE}] [U_]\n")
    report = report_of([tree])
    text = json.dumps(report, default=str)
    assert str(HUGE) in text
    (messages,) = [source for source in report["sources"] if source["path"] == "var/log/messages"]
    not_read = [warning for warning in messages["warnings"] if warning.endswith("out of range; line not read")]
    assert [int(warning.split(": line ")[1].split(":")[0]) for warning in not_read] == [1, 2, 3, 4, 8]
    assert report["sectors"] == {}
    assert {row["kind"] for row in report["event_summary"]} >= {"ata_exception", "md_failure"}
    assert any(device["hctl"] == f"{HUGE}:{HUGE}:{HUGE}:{HUGE}" for device in report["devices"])
    assert report["verdict"]["status"] != "healthy"
    assert f"{HUGE}:{HUGE}" in render_text(report)
    assert f"{HUGE}:{HUGE}" in render_html(report)
    from diagdisk.diagnosis.eventtable import event_frame
    event_frame(analyze([str(tree)]).events).to_csv()


def test_year_boundary_out_of_order_clock_jumps_and_duplicates(tmp_path):
    tree = tmp_path / "sosreport"
    (tree / "var/log").mkdir(parents=True)
    (tree / "date").write_text("Thu Jan  2 10:00:00 UTC 2025\n")
    line = "{stamp} db1 kernel: sd 0:0:1:0: [sdb] tag#1 Sense Key : Medium Error [current]\n"
    stamps = ["Dec 31 23:59:58", "Dec 31 23:59:59", "Dec 31 23:59:59", "Jan  1 00:00:01", "Dec 31 23:30:00",
              "Jan  1 05:00:00", "Jan  1 04:00:00", "Jan  1 04:00:00"]
    (tree / "var/log/messages").write_text("".join(line.format(stamp=stamp) for stamp in stamps))
    report = report_of([tree])
    (row,) = [row for row in report["event_summary"] if row["kind"] == "sense"]
    assert row["count"] == len(stamps)
    assert row["first"].startswith("2024-12-31T23:30") and row["last"].startswith("2025-01-01T05:00")


@pytest.mark.parametrize("date_text", ["Thu Feb 31 10:00:00 UTC 2025", "Mon Jan  1 99:00:00 UTC 0000", "\x00\xff",
                                       "2024-13-45 25:61:61"])
def test_impossible_report_dates_are_ignored(tmp_path, date_text):
    tree = tmp_path / "sosreport"
    (tree / "var/log").mkdir(parents=True)
    (tree / "date").write_text(date_text, errors="surrogateescape")
    (tree / "var/log/messages").write_bytes(b"Jan  1 00:00:01 db1 kernel: sd 0:0:1:0: [sdb] tag#1 Sense Key : "
                                            b"Medium Error [current]\n")
    assert report_of([tree])["event_summary"]


def test_any_member_mtime_is_survived(tmp_path, scratch):
    members = sosreport_members()
    for info, _ in members:
        info.mtime = 2**40  # year 36812: tmpfs keeps it, and datetime cannot hold it
    report = report_of([write_archive(tmp_path / "sos.tar", members, "tar")])
    assert source(report, "var/log/messages")["events"] == 50


def test_lines_cut_mid_field_never_break_the_analysis(tmp_path):
    full_lines = (SAMPLES / "modern-sas-medium-error-sdc/var/log/messages").read_bytes().splitlines()
    storage = [line for line in full_lines if b"kernel:" in line]
    cut = [line[:length] for line in storage for length in range(20, len(line), 7)]
    (tmp_path / "messages").write_bytes(b"\n".join(cut) + b"\n")
    report = report_of([tmp_path / "messages"])
    assert source(report, "messages")["lines"] == len(cut)


# -- reading never changes the input -----------------------------------------------------------------


def fingerprint(folder: Path) -> dict[str, tuple]:
    prints = {}
    for path in sorted(folder.rglob("*")):
        status = path.lstat()
        content = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else None
        prints[str(path.relative_to(folder))] = (status.st_mode, status.st_size, status.st_mtime_ns, content)
    return prints


def test_analysing_a_folder_changes_nothing_in_it(tmp_path):
    tree = tmp_path / "sosreport"
    shutil.copytree(SAMPLES / "demo-sosreport", tree, symlinks=True)
    (tree / "var/log/messages-20240301").write_bytes(gzip.compress(MEDIUM_ERROR * 10))
    os.symlink("var/log/messages", tree / "messages-link")
    before = fingerprint(tree)
    report_of([tree])
    assert fingerprint(tree) == before


def test_a_line_with_an_impossible_time_loses_only_its_time(tmp_path):
    # This once raised out of the header detection and dropped the whole file.
    (tmp_path / "messages").write_bytes(
        b"2024-02-30T10:00:00+99:99 db1 kernel: sd 0:0:1:0: [sdb] tag#1 Sense Key : Medium Error [current]\n"
        b"[Sat Feb 31 10:00:00 0000] sd 0:0:1:0: [sdb] tag#2 Sense Key : Medium Error [current]\n"
        + MEDIUM_ERROR)
    report = report_of([tmp_path / "messages"])
    assert source(report, "messages")["events"] == 3
    assert source(report, "messages")["warnings"] == [
        "messages: line 1: time stamp 2024-02-30T10:00:00+99:99 is out of range; read without a time",
        "messages: line 2: time stamp [Sat Feb 31 10:00:00 0000] is out of range; read without a time"]
