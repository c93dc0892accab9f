"""Where each datum lives: which files of a sosreport or bundle are read, which are one kernel ring
buffer printed twice (dmesg, dmesg -T, the collector's /dev/kmsg, var/log/dmesg), where the report
date and host name come from, and what a lone file is."""

import json
import os
import re
import shutil
from datetime import datetime
from pathlib import Path

from diagdisk.diagnosis.analysis import analyze, discover
from diagdisk.inputs.sources import classify_in_tree, sniff_format

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
DEMO = SAMPLES / "demo-sosreport"
KERNEL = "sos_commands/kernel"
BOOT = datetime(2024, 3, 11, 8, 1, 58)   # the demo host's boot, 13 s before its first dmesg -T line


def plain_dmesg(dmesg_t: str) -> str:
    """The `dmesg` print of a `dmesg -T` print: seconds since boot instead of ctime stamps."""
    lines = []
    for line in dmesg_t.splitlines():
        stamp = re.match(r"\[\w{3} (\w{3} +\d+ [\d:]+ \d{4})\] ", line)
        if stamp:
            uptime = (datetime.strptime(stamp[1], "%b %d %H:%M:%S %Y") - BOOT).total_seconds()
            lines.append(f"[{uptime:12.6f}] {line[stamp.end():]}")
        else:  # a continuation line, indented under the message
            lines.append(" " * 15 + line.strip())
    return "\n".join(lines) + "\n"


def demo_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "sosreport"
    shutil.copytree(DEMO, tree)
    return tree


def run(*paths: Path):
    return analyze([str(p) for p in paths], jobs=1)


def sources_of(analysis) -> dict:
    return {s.name: s for s in analysis.sources}


def event_counts(analysis) -> dict:
    counts: dict = {}
    for event in analysis.events:
        key = (event["kind"], event.get("device"))
        counts[key] = counts.get(key, 0) + (event.get("repeat") or 1)
    return counts


# ---------------------------------------------------------------- dmesg and dmesg -T


def test_dmesg_and_dmesg_t_are_one_ring_buffer_read_once(tmp_path):
    alone = run(DEMO)
    tree = demo_tree(tmp_path)
    (tree / KERNEL / "dmesg").write_text(plain_dmesg((DEMO / KERNEL / "dmesg_-T").read_text()))
    both = run(tree)
    assert event_counts(both) == event_counts(alone)
    sources = sources_of(both)
    skipped, read = sources[f"{KERNEL}/dmesg"], sources[f"{KERNEL}/dmesg_-T"]
    assert read.lines > 0 and read.format == "dmesg_T"  # read (its events are all in messages too)
    assert (skipped.format, skipped.lines, skipped.events) == ("log", 0, 0)
    assert skipped.warnings == [f"{KERNEL}/dmesg: not read: another print of the kernel ring buffer in "
                                f"{KERNEL}/dmesg_-T, which was read (reading both would count every kernel "
                                f"message twice)"]
    assert both.complete and both.missing_sources == alone.missing_sources


def test_the_print_read_is_a_usable_one(tmp_path):
    tree = demo_tree(tmp_path)
    (tree / KERNEL / "dmesg").write_text(plain_dmesg((DEMO / KERNEL / "dmesg_-T").read_text()))
    (tree / KERNEL / "dmesg_-T").write_text("dmesg: read kernel buffer failed: Operation not permitted\n")
    sources = sources_of(run(tree))
    read = sources[f"{KERNEL}/dmesg"]
    # read, and its events that messages holds too counted once (diagdisk/dedup.py)
    assert read.lines > 0 and all("counted once" in w for w in read.warnings)
    assert sources[f"{KERNEL}/dmesg_-T"].warnings[0].startswith(f"{KERNEL}/dmesg_-T: not read: another print")


def test_ring_buffers_of_two_inputs_are_both_read(tmp_path):
    first, second = demo_tree(tmp_path / "a"), demo_tree(tmp_path / "b")
    sources = run(first, second).sources
    assert [s.lines > 0 and not any("not read" in w for w in s.warnings)
            for s in sources if s.name == f"{KERNEL}/dmesg_-T"] == [True, True]


# ---------------------------------------------------------------- var/log/dmesg (boot time)


def test_boot_dmesg_that_opens_the_ring_buffer_is_not_read_twice(tmp_path):
    tree = demo_tree(tmp_path)
    boot_lines = (DEMO / KERNEL / "dmesg_-T").read_text().splitlines()[:7]   # the boot: up to md0 started
    (tree / "var/log/dmesg").write_text(plain_dmesg("\n".join(boot_lines)))
    analysis = run(tree)
    boot = sources_of(analysis)["var/log/dmesg"]
    assert boot.lines == 0 and boot.warnings == [
        f"var/log/dmesg: not read: its boot messages are the first lines of {KERNEL}/dmesg_-T, which was read "
        f"(reading both would count them twice)"]
    assert event_counts(analysis) == event_counts(run(DEMO))


def test_boot_dmesg_the_ring_buffer_lost_is_read(tmp_path):
    tree = demo_tree(tmp_path)
    wrapped = (DEMO / KERNEL / "dmesg_-T").read_text().splitlines()[7:]     # the boot lines were overwritten
    (tree / KERNEL / "dmesg_-T").write_text("\n".join(wrapped) + "\n")
    boot = ("[    0.000000] Linux version 4.18.0-372.9.1.el8.x86_64 (mockbuild@x86-vm-07.build.eng.bos.redhat.com)\n"
            + plain_dmesg("\n".join((DEMO / KERNEL / "dmesg_-T").read_text().splitlines()[:7])))
    (tree / "var/log/dmesg").write_text(boot)
    sources = sources_of(run(tree))
    assert sources["var/log/dmesg"].lines == 8 and sources["var/log/dmesg"].format == "dmesg"
    assert not sources["var/log/dmesg"].warnings


def test_what_the_logs_plugin_stores_beside_the_journals_is_no_log():
    assert classify_in_tree("sos_commands/logs/journalctl_--no-pager") == "log"
    assert classify_in_tree("sos_commands/logs/journalctl_--disk-usage") is None
    assert classify_in_tree("sos_commands/logs/ls_-alRh_.var.log") is None


def test_boot_dmesg_alone_is_a_kernel_log():
    assert classify_in_tree("var/log/dmesg") == "log"
    assert classify_in_tree("var/log/dmesg.0") == "log"
    assert classify_in_tree("var/log/dmesg.1.gz") == "log"


# ---------------------------------------------------------------- the collector's /dev/kmsg


def bundle_tree(tmp_path: Path, kmsg: str) -> Path:
    tree = tmp_path / "diagdisk-store01-20240320-100512"
    (tree / "dev").mkdir(parents=True)
    (tree / "dev/kmsg").write_text(kmsg)
    (tree / "date").write_text("Wed Mar 20 10:05:12 UTC 2024\n")
    (tree / "hostname").write_text("store01\n")
    (tree / "proc/scsi").mkdir(parents=True)
    (tree / "proc/scsi/scsi").write_text((DEMO / "proc/scsi/scsi").read_text())
    (tree / "manifest.json").write_text(json.dumps({"schema": "diagdisk.bundle/1", "items": []}))
    return tree


KMSG = ("6,512,2100000,-;sd 2:0:2:0: [sdc] 7814037168 512-byte logical blocks: (4.00 TB/3.64 TiB)\n"
        " SUBSYSTEM=scsi\n DEVICE=+scsi:2:0:2:0\n"
        "3,1890,692266123456,-;blk_update_request: critical medium error, dev sdc, sector 2931456128\n")


def test_bundle_dev_kmsg_is_a_kernel_log_source(tmp_path):
    tree = bundle_tree(tmp_path, KMSG)
    found = discover(tree, [(p, p.relative_to(tree).as_posix()) for p in sorted(tree.rglob("*")) if p.is_file()],
                     multiple=False)
    assert {s.name: s.format for s in found}["dev/kmsg"] == "log"
    kmsg = sources_of(run(tree))["dev/kmsg"]
    assert kmsg.lines == 4 and not kmsg.warnings
    assert "log" not in [m.split()[0] for m in run(tree).missing_sources]


def test_dev_kmsg_beside_dmesg_is_the_same_ring_buffer(tmp_path):
    tree = bundle_tree(tmp_path, KMSG)
    (tree / KERNEL).mkdir(parents=True)
    (tree / KERNEL / "dmesg").write_text("[    2.100000] sd 2:0:2:0: [sdc] 7814037168 512-byte logical blocks\n")
    sources = sources_of(run(tree))
    assert sources[f"{KERNEL}/dmesg"].lines == 1
    assert sources["dev/kmsg"].warnings[0].startswith("dev/kmsg: not read: another print of the kernel ring buffer")


# ---------------------------------------------------------------- report date and host name


def test_report_date_from_the_sos_manifest_when_there_is_no_date_file(tmp_path):
    tree = demo_tree(tmp_path)
    (tree / "date").unlink()
    analysis = run(tree)
    assert analysis.report_date == datetime(2024, 3, 20, 10, 6, 44)   # manifest.json end_time
    assert not sources_of(analysis)["sos_reports/manifest.json"].warnings


def year_rollover_tree(tmp_path: Path, manifest: dict | str | None) -> Path:
    """A sosreport taken on 2 Jan 2024 whose syslog spans New Year, without `date`; the files carry
    the mtime of an archive extracted years later (tar keeps mtimes, copies may not)."""
    tree = tmp_path / "sosreport"
    (tree / "var/log").mkdir(parents=True)
    (tree / "var/log/messages").write_text(
        "Dec 31 23:59:58 db7 kernel: sd 0:0:1:0: [sdb] tag#2 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE\n"
        "Dec 31 23:59:58 db7 kernel: sd 0:0:1:0: [sdb] tag#2 Sense Key : Medium Error [current]\n"
        "Jan  1 00:00:03 db7 kernel: sd 0:0:1:0: [sdb] tag#7 Sense Key : Medium Error [current]\n")
    if manifest is not None:
        (tree / "sos_reports").mkdir()
        (tree / "sos_reports/manifest.json").write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    later = datetime(2026, 6, 1).timestamp()
    for path in tree.rglob("*"):
        os.utime(path, (later, later))
    return tree


SOS_MANIFEST = {"version": "4.6.1", "cmdline": "sos report --batch", "start_time": "2024-01-02 09:14:02.118311",
                "end_time": "2024-01-02 09:16:40.902177", "run_time": "0:02:38.783866", "compression": "xz",
                "tmpdir": "/var/tmp/sos.x1", "tmpdir_fs_type": "xfs", "policy": "Red Hat Enterprise Linux",
                "components": {"report": {"preset": "none", "enabled_plugins": []}}}


def test_the_sos_manifest_date_places_syslog_lines_in_their_year(tmp_path):
    analysis = run(year_rollover_tree(tmp_path, SOS_MANIFEST))
    assert analysis.report_date == datetime(2024, 1, 2, 9, 16, 40)
    firsts = sorted(e["_first"] for e in analysis.events if e.get("_first"))
    assert firsts[0].startswith("2023-12-31T23:59:58") and firsts[-1].startswith("2024-01-01T00:00:03")


def test_without_manifest_the_year_comes_from_the_file_times(tmp_path):
    analysis = run(year_rollover_tree(tmp_path / "none", None))
    assert analysis.report_date.year == 2026
    broken = run(year_rollover_tree(tmp_path / "broken", '{"version": "4.6.1", "start_time": '))
    assert broken.report_date.year == 2026
    assert sources_of(broken)["sos_reports/manifest.json"].warnings == [
        "sos_reports/manifest.json: not JSON; the report date is not taken from it"]
    assert broken.complete


def test_host_name_from_the_syslog_headers_when_no_file_names_it(tmp_path):
    analysis = run(year_rollover_tree(tmp_path, SOS_MANIFEST))
    assert analysis.hostname == "db7"
    assert run(DEMO).hostname == "pgdb02"                     # the hostname file wins


def test_a_log_servers_syslog_names_no_host(tmp_path):
    tree = year_rollover_tree(tmp_path, SOS_MANIFEST)
    messages = tree / "var/log/messages"
    messages.write_text(messages.read_text() + "Jan  1 00:00:04 web2 kernel: usb 1-1: USB disconnect, device number 2\n")
    assert run(tree).hostname is None


def test_lines_logged_before_the_host_name_was_set_do_not_count(tmp_path):
    tree = year_rollover_tree(tmp_path, SOS_MANIFEST)
    messages = tree / "var/log/messages"
    messages.write_text("Dec 31 23:50:01 localhost kernel: Linux version 4.18.0-372.9.1.el8.x86_64\n"
                        + messages.read_text())
    assert run(tree).hostname == "db7"


# ---------------------------------------------------------------- a lone /dev/disk/by-id listing


BY_ID = """\
total 0
lrwxrwxrwx. 1 root root  9 Mar 19 02:41 ata-ST4000NM0033-9ZM170_Z1Z3K3CD -> ../../sdb
lrwxrwxrwx. 1 root root 10 Mar 19 02:41 ata-ST4000NM0033-9ZM170_Z1Z3K3CD-part1 -> ../../sdb1
lrwxrwxrwx. 1 root root  9 Mar 19 02:41 wwn-0x5000c500795a1a07 -> ../../sdb
"""

LS_LANR_DEV = """\
/dev:
total 0
drwxr-xr-x. 20 0 0    3560 Mar 19 02:41 .
dr-xr-xr-x. 17 0 0     224 Mar 11 08:01 ..
crw-r--r--.  1 0 0  10, 235 Mar 11 08:02 autofs
drwxr-xr-x.  2 0 0     180 Mar 11 08:02 block
brw-rw----.  1 0 6   8,   0 Mar 11 08:02 sda
lrwxrwxrwx.  1 0 0      13 Mar 11 08:02 fd -> /proc/self/fd
"""


def test_a_lone_by_id_listing_is_sniffed_as_the_by_id_table(tmp_path):
    listing = tmp_path / "by-id.txt"
    listing.write_text(BY_ID)
    assert sniff_format(listing) == "by_id"
    collected = tmp_path / "ls_-lan_.dev.disk.by-id"    # what diagdisk collect writes: no total line
    collected.write_text("lrwxrwxrwx 1 0 0 9 Mar 19 02:41 wwn-0x5000c500795a1a07 -> ../../sdb\n")
    assert sniff_format(collected) == "by_id"
    recursive = tmp_path / "ls_-lanR_.dev"
    recursive.write_text(LS_LANR_DEV)
    assert sniff_format(recursive) == "by_id"
    source = run(listing).sources[0]
    assert (source.format, source.unparsed_candidates) == ("by_id", 0)


def test_logs_and_other_listings_are_not_by_id(tmp_path):
    log = tmp_path / "messages"
    log.write_text((DEMO / "var/log/messages").read_text())
    assert sniff_format(log) == "log"
    var_log = tmp_path / "ls_-alRh_.var.log"
    var_log.write_text("total 12K\n-rw-------. 1 root root 2.1K Mar 19 02:41 messages\n")
    assert sniff_format(var_log) == "log"
