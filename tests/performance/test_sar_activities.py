"""sar text holds many activities, and comes from anywhere.

`sar -A` (what sos stores in sos_commands/sar/) prints every activity's block one after another: a
row belongs to the header above it, so a network interface under IFACE is never a disk, however
many columns its block has. `sar -d -p`, `sar --pretty` and `iostat --pretty` put the device column
last; they are recognised as a file and on stdin as inside a sosreport. Text that sysstat printed
and that gives no disk sample is said to be so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from diagdisk.cli.main import main
from diagdisk.inputs.sources import sniff_format
from diagdisk.performance.sysstat import read_sysstat_text

FIXTURES = Path(__file__).parent / "fixtures"
# sar -A -f saDD of sysstat 12.x in the C locale: CPU, proc, INTR, swap, paging, io, memory, swap
# space, huge pages, inodes, queue, TTY, DEV, IFACE (traffic, then errors), NFS, sockets, FCHOST,
# FILESYSTEM blocks, each with its header, three samples and its Average rows. Its IFACE block has
# the DEV block's nine columns, and eth0's figures read by position as a disk's would be
# "await 35 ms, %util 97".
SAR_A = FIXTURES / "sar-A-12.x-C.txt"
DISKS = {"dev8-0", "dev8-16", "dev253-0"}
INTERFACES = {"lo", "eth0", "virbr0"}

SAR_D_PRETTY = """Linux 5.14.0-362.el9.x86_64 (web9) \t03/19/24 \t_x86_64_\t(4 CPU)

10:00:01          tps     rkB/s     wkB/s     dkB/s   areq-sz    aqu-sz     await     %util DEV
10:00:11       250.00   2048.00     12.50      0.00      8.24      0.30      1.20     35.50 sda
10:00:11        10.00      0.00     40.00      0.00      4.00      0.01      0.50      1.00 rootvg-root
10:00:21       240.00   1945.60     12.00      0.00      8.15      0.28      1.10     34.00 sda
10:00:21        12.00      0.00     48.00      0.00      4.00      0.01      0.40      1.20 rootvg-root
10:00:31       260.00   2150.40     13.00      0.00      8.32      0.31      1.25     36.10 sda
10:00:31        11.00      0.00     44.00      0.00      4.00      0.01      0.45      1.10 rootvg-root
Average:       250.00   2048.00     12.50      0.00      8.24      0.30      1.18     35.20 sda
Average:        11.00      0.00     44.00      0.00      4.00      0.01      0.45      1.10 rootvg-root
"""


def _analyze(*args, stdin: str | None = None) -> dict:
    result = CliRunner().invoke(main, ["analyze", *map(str, args), "--format", "json"], input=stdin)
    assert result.exit_code in (0, 1, 3, 4), result.output
    (report,) = json.loads(result.stdout)["reports"]
    return report


def test_sar_a_reads_only_the_rows_under_the_disk_header():
    source, samples = read_sysstat_text(SAR_A.read_text().splitlines(), "sar19", c_locale=True)
    assert source.kind == "sar" and source.eras == ["12.1.2+ (kB, discards, no svctm)"]
    assert {s.device for s in samples} == DISKS
    assert len(samples) == 9                     # three disks, three samples; Average rows are none
    assert source.headerless_rows == 0


def test_a_sosreport_s_sar_a_names_no_interface_as_a_disk(tmp_path):
    sos = tmp_path / "sosreport-db1"
    (sos / "sos_commands" / "sar").mkdir(parents=True)
    shutil.copy(SAR_A, sos / "sos_commands" / "sar" / "sar19")
    (sos / "hostname").write_text("db1\n")
    report = _analyze(sos)
    performance = report["performance"]
    assert {d["name"] for d in performance["devices"]} == DISKS
    assert not any(finding["device"] in INTERFACES for finding in performance["findings"])
    assert performance["findings"] == [] or all(f["device"] in DISKS for f in performance["findings"])
    (sar,) = performance["sources"]
    assert sar["samples"] == 9 and not any("without a header" in w for w in sar["warnings"])


def test_rows_without_any_header_above_them_are_still_read_with_the_file_s_disk_header():
    # `grep -e DEV -e RESTART -e dev8-0 sar19`: the header once; after the restart no header follows
    excerpt = [line for line in SAR_A.read_text().splitlines() if " DEV " in line or " dev8-0 " in line]
    excerpt[2:2] = ["00:15:01       LINUX RESTART\t(8 CPU)"]
    source, samples = read_sysstat_text(excerpt, "sar19", c_locale=True)
    assert [s.device for s in samples] == ["dev8-0"] * 3
    assert source.headerless_rows == 2 and len(source.restarts) == 1


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_sar_d_pretty_is_read_as_a_file_and_on_stdin(tmp_path, how):
    path = tmp_path / "sar-d-p.txt"
    path.write_text(SAR_D_PRETTY)
    assert sniff_format(path) == "sar"
    report = _analyze(path) if how == "file" else _analyze("-", stdin=SAR_D_PRETTY)
    performance = report["performance"]
    assert {d["name"] for d in performance["devices"]} == {"sda", "rootvg-root"}
    (source,) = performance["sources"]
    assert source["kind"] == "sar text" and source["samples"] == 6


@pytest.mark.parametrize("fixture, kind, devices", [
    ("sar-12.x-human-pretty.txt", "sar", {"sda", "rootvg-root"}),   # sar -d -p -h: units after the numbers
    ("iostat-12.5.4-pretty-de.txt", "iostat", {"sda"}),            # iostat --pretty: Device last, in groups
])
def test_pretty_layouts_on_stdin(fixture, kind, devices):
    report = _analyze("-", stdin=(FIXTURES / fixture).read_text())
    performance = report["performance"]
    assert {d["name"] for d in performance["devices"]} >= devices
    assert performance["sources"][0]["kind"] == f"{kind} text"


def test_sysstat_banner_alone_marks_sysstat_text(tmp_path):
    banner = "Linux 5.14.0-362.el9.x86_64 (web9) \t03/19/24 \t_x86_64_\t(4 CPU)\n\n"
    sar_cpu = tmp_path / "sar-u.txt"
    sar_cpu.write_text(banner + "10:00:01     CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
                                "10:00:11     all      1.00      0.00      0.50      0.00      0.00     98.50\n")
    iostat_cpu = tmp_path / "iostat-c.txt"
    iostat_cpu.write_text(banner + "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
                                   "           1.00    0.00    0.50    0.00    0.00   98.50\n")
    kernel = tmp_path / "dmesg"
    kernel.write_text("[    0.000000] Linux version 5.14.0-362.el9.x86_64 (mockbuild@x86-vm-07) (gcc 11.4.1) #1 SMP\n")
    assert (sniff_format(sar_cpu), sniff_format(iostat_cpu), sniff_format(kernel)) == ("sar", "iostat", "log")


def test_sysstat_text_without_disk_samples_gets_a_warning(tmp_path):
    banner = "Linux 5.14.0-362.el9.x86_64 (web9) \t03/19/24 \t_x86_64_\t(4 CPU)\n\n"
    network = tmp_path / "sar-n-dev.txt"
    network.write_text(banner + "10:00:01     IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  "
                                "rxmcst/s   %ifutil\n"
                                "10:00:11      eth0   1400.50   2100.25   9800.00  15200.00      0.00     48.00     "
                                "35.00     97.00\n")
    (source,) = _analyze(network)["sources"]
    assert source["format"] == "sar"
    assert source["warnings"] == ["sar-n-dev.txt: sar output without a disk section (no DEV or Device header "
                                  "with its columns): no disk samples in it"]
    garbled = tmp_path / "sar-d-garbled.txt"
    garbled.write_text(banner + "10:00:01          DEV       tps     rkB/s     wkB/s   areq-sz    aqu-sz     await"
                                "     %util\n"
                                "10:00:11          sda      n/a       n/a       n/a       n/a       n/a       n/a"
                                "       n/a\n")
    (source,) = _analyze(garbled)["sources"]
    assert source["warnings"] == ["sar-d-garbled.txt: sar output whose disk rows were not understood under "
                                  "their header: no disk samples read"]
