"""Framing's one-step path for the common headers gives exactly what its general loop gives."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagdisk.logs.framing import _frame_common, _frame_general, frame_line, normalize_text, strip_terminal_escapes

ROOT = Path(__file__).resolve().parents[2]
HEADERS = ["Mar  2 18:07:17 db1 kernel: ", "Dec 31 23:59:59.123456 h kernel: [  12.5] ",
           "2024-03-02T18:07:17.123456+01:00 db1 kernel: ", "2024-03-02 18:07:17,5Z h multipathd[12]: ",
           "2024-02-30T18:07:17+99:99 h kernel: ", "Mar  2 18:07:17 db1 last message repeated 3 times",
           "Mar  2 18:07:17 db1 kernel:   ", "Mar  2 18:07:17 db1 kernel: <3>", "Mar  2 18:07:17 h kernel: 12:00:00 [ 1.0] "]


def _real_lines():
    for path in sorted((ROOT / "tests" / "corpus").rglob("*")) + sorted((ROOT / "samples").rglob("*")):
        if path.is_file() and ("messages" in path.name or "dmesg" in path.name):
            yield from path.read_text(errors="replace").splitlines()


def test_common_path_agrees_with_the_general_loop_on_every_real_line():
    checked = 0
    for line in _real_lines():
        text = normalize_text(line)
        common = _frame_common(text)
        if common is not None:
            assert common == _frame_general(text), line
            checked += 1
    assert checked > 100


@settings(max_examples=300, deadline=None)
@given(header=st.sampled_from(HEADERS), message=st.text(max_size=80))
def test_common_path_agrees_with_the_general_loop_on_any_message(header, message):
    # frame_line removes terminal sequences first (a message of "\x1b0" is an escape, not text)
    text = strip_terminal_escapes(normalize_text((header + message).rstrip("\r\n")))
    common = _frame_common(text)
    assert common is None or common == _frame_general(text)
    expected = common or _frame_general(text)
    if expected.message[:2] == ": " and expected.header in ("syslog", "rfc3339"):
        expected.message = expected.message[2:].lstrip()   # an empty syslog field ("kernel: : msg")
    assert frame_line(header + message) == expected


# journalctl -o short-monotonic: the uptime stamp, then host and tag as in short
MONOTONIC = [
    ("[ 1234.567890] myhost kernel: sd 2:0:1:0: [sdb] Sense Key : Medium Error [current]",
     "myhost", "kernel", 1234.56789, "sd 2:0:1:0: [sdb] Sense Key : Medium Error [current]"),
    ("[    5.100000] db1.example.com kernel: scsi host2: ahci", "db1.example.com", "kernel", 5.1,
     "scsi host2: ahci"),
    ("[   61.000001] db1 multipathd[812]: sdb: mark as failed", "db1", "multipathd", 61.000001,
     "sdb: mark as failed"),
    ("[   61.5] db1 kernel:", "db1", "kernel", 61.5, ""),
]


@pytest.mark.parametrize("line,host,tag,uptime,message", MONOTONIC)
def test_short_monotonic_journal_strips_host_and_tag(line, host, tag, uptime, message):
    framed = frame_line(line)
    assert (framed.header, framed.host, framed.tag) == ("dmesg", host, tag)
    assert (framed.uptime, framed.message) == (uptime, message)


# kernel messages after a dmesg stamp that start like "host tag:" and must stay whole
KERNEL_AFTER_STAMP = [
    "[   12.3] sd 0:0:0:0: [sda] Attached SCSI disk",
    "[    1.0] ata1: SATA link up 6.0 Gbps (SStatus 133 SControl 300)",
    "[    2.0] usb 1-1: new high-speed USB device number 2 using xhci_hcd",
    "[    2.0] scsi host2: ahci",
    "[    3.0] nvme nvme0: I/O 12 QID 3 timeout, aborting",
    "[    4.0] XFS (sdb1): log I/O error -5",
    "[    4.0] EXT4-fs (sdb1): Remounting filesystem read-only",
    "[    5.0] ahci 0000:00:1f.2: version 3.0",
    "[    6.0] scsi2 : ata_piix",
    "[    7.0] md/raid1:md0: Disk failure on sdb1, disabling device.",
]


@pytest.mark.parametrize("line", KERNEL_AFTER_STAMP)
def test_kernel_message_after_a_stamp_is_not_a_host_and_tag(line):
    framed = frame_line(line)
    assert (framed.header, framed.host, framed.tag) == ("dmesg", None, None)
    assert framed.message == line.split("] ", 1)[1].strip()


def test_host_and_tag_only_right_after_an_outermost_stamp():
    # syslog already named host and tag; what follows its dmesg stamp is the kernel's message
    # (the one-step path reads it so too)
    framed = frame_line("Mar  2 18:07:17 h kernel: [ 12.5] a kernel: x")
    assert (framed.host, framed.message) == ("h", "a kernel: x")
    assert frame_line("<6>[ 1.0] h kernel: x").message == "h kernel: x"


def test_kmsg_record_and_its_dictionary():
    framed = frame_line("6,1234,5678901,-;sd 2:0:1:0: [sdb] Attached SCSI disk")
    assert (framed.header, framed.uptime, framed.message) == (
        "kmsg", 5.678901, "sd 2:0:1:0: [sdb] Attached SCSI disk")
    for continuation in (" SUBSYSTEM=scsi", " DEVICE=+scsi:2:0:1:0", " DEVICE=b8:16"):
        framed = frame_line(continuation)
        assert (framed.header, framed.message) == ("kmsg", "")
    # fields after the flags are ignored (dev-kmsg: "future extensions")
    framed = frame_line("30,340,5690716,-,caller=T80;udevd[80]: starting version 181")
    assert (framed.uptime, framed.message) == (5.690716, "udevd[80]: starting version 181")
    # escaped bytes: '\' is \x5c, the newline inside one printk becomes #012 as rsyslog writes it
    framed = frame_line(r"3,2,3,-;ata3.00: cmd 60/f0:08:75:79:2d/00:00:14:00:00/40 tag 1 ncq 122880 in"
                        r"\x0a         res 41/40:00:e0:79:2d/00:00:14:00:00/40 Emask 0x409 (media error) <F>")
    assert "in#012         res 41/40:00:e0" in framed.message
    assert frame_line(r"4,2,3,-;a\x5cb\x01").message == r"a\b\x01"
    # an indented line that is not a dictionary entry is no kmsg header
    assert frame_line("         res 41/40:00:e0:79:2d/00:00:14:00:00/40 Emask 0x409").header is None


def test_short_monotonic_and_kmsg_logs_read_into_events(tmp_path):
    from diagdisk.logs.reader import LogReader
    journal = tmp_path / "journal"
    journal.write_text(
        "[    1.100000] myhost kernel: scsi 2:0:1:0: Direct-Access     ATA      ST4000DM000      CC54 PQ: 0 ANSI: 5\n"
        "[ 1234.567890] myhost kernel: sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
        "[ 1234.567900] myhost kernel: sd 2:0:1:0: [sdb] tag#3 Add. Sense: Unrecovered read error\n")
    kmsg = tmp_path / "kmsg"
    kmsg.write_text(
        "5,410,2100000,-;sd 2:0:1:0: [sdb] Attached SCSI disk\n SUBSYSTEM=scsi\n DEVICE=+scsi:2:0:1:0\n"
        "3,411,222909534,-;ata3.00: failed command: READ FPDMA QUEUED\n SUBSYSTEM=ata_dev\n")
    read = LogReader().read(journal, "journal")
    assert read.unparsed_candidates == 0 and read.header_style == "dmesg"
    assert [(e["kind"], e.get("device"), e["_uptime"]) for e in read.events] == [
        ("attach", None, 1.1), ("sense", "sdb", 1234.56789), ("sense_detail", "sdb", 1234.5679)]
    read = LogReader().read(kmsg, "kmsg")
    assert read.unparsed_candidates == 0 and read.header_style == "kmsg"
    assert [(e["kind"], e["line"], e["_uptime"]) for e in read.events] == [
        ("attach", 1, 2.1), ("ata_detail", 4, 222.909534)]


def test_dmesg_human_stamps_frame_the_message_and_only_the_minute_lines_carry_a_time():
    minute = frame_line("[Aug28 17:07] hwmon hwmon1: Undervoltage detected!")
    relative = frame_line("[  +8.063930] sd 0:0:0:0: [sda] tag#1 uas_eh_abort_handler 0 uas-tag 2 inflight: CMD")
    assert (minute.header, minute.month_day_time, minute.message) == \
        ("dmesg_H", (8, 28, "17:07:00", ""), "hwmon hwmon1: Undervoltage detected!")
    assert (relative.header, relative.month_day_time, relative.uptime) == ("dmesg_H", None, None)
    assert relative.message.startswith("sd 0:0:0:0: [sda]")
    assert frame_line("[Foo12 10:00] text").header is None


@pytest.mark.parametrize("line, header, uptime, message", [
    ("[  T108] ata2: COMRESET failed (errno=-32)", "dmesg", None, "ata2: COMRESET failed (errno=-32)"),
    ("[   12.345678][  T108] ata2: COMRESET failed (errno=-32)", "dmesg", 12.345678, "ata2: COMRESET failed (errno=-32)"),
    ("[    5.1][    C0] sd 0:0:0:0: [sda] tag#1 timing out command", "dmesg", 5.1, "sd 0:0:0:0: [sda] tag#1 timing out command"),
])
def test_the_printk_caller_id_is_header(line, header, uptime, message):
    framed = frame_line(line)
    assert (framed.header, framed.uptime, framed.message) == (header, uptime, message)


def test_logread_and_a_syslog_pasted_without_its_date_frame_their_messages():
    logread = frame_line("Thu Oct 10 12:36:26 2024 kern.info kernel: [  888.233884] scsi host1: uas_eh_device_reset_handler start")
    assert (logread.header, logread.tag, str(logread.wall), logread.uptime) == ("logread", "kernel", "2024-10-10 12:36:26", 888.233884)
    assert logread.message == "scsi host1: uas_eh_device_reset_handler start"
    clock = frame_line("14:04:39 raisin kernel: usb 2-6: new SuperSpeed Gen 1 USB device number 2 using xhci_hcd")
    assert (clock.header, clock.host, clock.tag, clock.wall, clock.month_day_time) == ("clock_only", "raisin", "kernel", None, None)
    assert frame_line("12:00:01 not a header").header is None
