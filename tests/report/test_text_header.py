"""The text report's second line says what the input says: the kernel a dmesg's banner names, the
seconds since boot a dmesg without wall-clock times spans; a virtio disk is not named by the PCI
vendor id lsblk shows for it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.topology.tables import read_lsblk

DMESG = Path(__file__).resolve().parents[2] / "samples" / "md-raid1-degraded-sdb" / "sos_commands" / "kernel" / "dmesg"
BANNER = ("[    0.000000] Linux version 5.14.0-362.el9.x86_64 (mockbuild@x86-vm-07.build.eng.bos.redhat.com) "
          "(gcc (GCC) 11.4.1 20230605 (Red Hat 11.4.1-2), GNU ld version 2.35.2-42.el9) #1 SMP PREEMPT_DYNAMIC "
          "Mon Sep 4 14:14:11 EDT 2023\n")


def _header(path: Path) -> str:
    lines = CliRunner().invoke(main, ["analyze", str(path)]).stdout.splitlines()
    return next(line for line in lines if line.startswith("host "))


def test_the_kernel_is_the_one_the_dmesg_banner_names(tmp_path):
    dmesg = tmp_path / "dmesg"
    dmesg.write_text(BANNER + DMESG.read_text())
    assert _header(dmesg).startswith("host ?, kernel 5.14.0-362.el9.x86_64, ")
    report = json.loads(CliRunner().invoke(main, ["analyze", str(dmesg), "--format", "json"]).stdout)["reports"][0]
    assert report["host"]["kernel"] == "5.14.0-362.el9.x86_64"


def test_a_dmesg_timed_since_boot_spans_its_uptimes():
    assert _header(DMESG) == "host ?, kernel ?, events uptime 1.5 s .. 1883998 s (21.8 days)"


def test_a_dmesg_of_a_few_seconds(tmp_path):
    dmesg = tmp_path / "dmesg"
    dmesg.write_text("[    3.210000] sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n"
                     "[    5.500000] sd 2:0:1:0: [sdb] tag#4 Sense Key : Medium Error [current]\n")
    assert _header(dmesg).endswith("events uptime 3.2 s .. 5.5 s")


def test_a_virtio_disk_is_not_named_by_its_pci_vendor_id():
    (vda, sda) = read_lsblk('NAME="vda" KNAME="vda" MAJ:MIN="252:0" TYPE="disk" VENDOR="0x1af4" MODEL="" HCTL=""\n'
                            'NAME="sda" KNAME="sda" TYPE="disk" VENDOR="ATA     " MODEL="ST2000DM008" HCTL="0:0:0:0"\n'
                            ).records
    assert (vda.vendor, vda.model) == (None, "virtio disk")
    assert (sda.vendor, sda.model) == ("ATA", "ST2000DM008")


MD_SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "md-raid1-degraded-sdb"


def _text(*paths) -> str:
    return CliRunner().invoke(main, ["analyze", *map(str, paths)]).stdout


def test_the_same_messages_in_two_logs_are_a_note_not_a_warning():
    sources = _text(MD_SAMPLE).split("\nSources\n", 1)[1]
    assert "    note: sos_commands/kernel/dmesg: 14 events are also in a log read before it" in sources
    assert "warning:" not in sources


def test_an_md_read_is_listed_under_the_member_it_failed_on_only():
    events = _text(MD_SAMPLE).split("\nEvents\n", 1)[1].split("\n\n", 1)[0].splitlines()
    redirected = [line.split()[0] for line in events if "md read redirected" in line]
    assert redirected == ["sdb"]


def test_a_missing_source_is_named_once(tmp_path):
    log = tmp_path / "messages"
    log.write_text("Mar  2 18:07:17 db1 kernel: sd 2:0:1:0: [sdb] tag#3 Sense Key : Medium Error [current]\n")
    text = _text(log)
    assert text.count("proc/mdstat") == 1 and "not present:" not in text
    inconclusive = tmp_path / "dpkg.log"
    inconclusive.write_text("2024-03-02 18:07:17 startup archives unpack\n")
    assert _text(inconclusive).count("proc/mdstat") == 1   # a reason of the verdict, not again under coverage


def test_the_html_page_says_the_uptimes_a_dmesg_without_wall_clock_spans(tmp_path):
    page = tmp_path / "report.html"
    CliRunner().invoke(main, ["analyze", str(DMESG), "--format", "html", "-o", str(page)])
    assert "Logs cover</dt><dd>uptime 1.5 s \u2192 1883998 s (21.8 days)</dd>" in page.read_text()
