"""Cost of reading the topology tables with their grammars: build time per grammar and lines per
second per reader, on generated tables the size of a large storage server.

    python benchmarks/tables.py [--devices 4096] [--repeat 3]

The tables: /proc/scsi/scsi, `lsscsi -i`, `lsblk -O -P` and the `lsblk` tree for N disks;
`multipath -ll` with N/8 maps of 8 paths; /proc/mdstat and `mdadm -D` with N/16 arrays of 16
members; `ls -lanR /dev` with N by-id links inside about 5 N lines of other folders (only the
by-id folder is parsed). Each reader runs on a warm grammar (built before timing); the best of
--repeat runs is reported.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from diagdisk.topology import tables as inventory
from diagdisk import larkbuild  # noqa: E402


def _disk(i: int) -> str:
    """The kernel's names: sda .. sdz, sdaa .. sdzz, sdaaa .."""
    letters = ""
    i += 1
    while i:
        i, rest = divmod(i - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return "sd" + letters


def proc_scsi(n: int) -> str:
    lines = ["Attached devices:"]
    for i in range(n):
        lines += [f"Host: scsi{i // 64} Channel: 00 Id: {i % 64:02d} Lun: 00",
                  "  Vendor: SEAGATE  Model: ST4000NM0023     Rev: GS0F",
                  "  Type:   Direct-Access                    ANSI  SCSI revision: 06"]
    return "\n".join(lines) + "\n"


def lsscsi(n: int) -> str:
    return "".join(f"[{i // 64}:0:{i % 64}:0]    disk    SEAGATE  ST4000NM0023     GS0F  /dev/{_disk(i):<8} "
                   f"35000c500{i:08x}\n" for i in range(n))


def lsblk_pairs(n: int) -> str:
    return "".join(f'NAME="{_disk(i)}" KNAME="{_disk(i)}" MAJ:MIN="8:{16 * i}" MODEL="ST4000NM0023" '
                   f'SERIAL="Z1Z{i:05d}" SIZE="3.7T" TYPE="disk" WWN="0x5000c500{i:08x}" HCTL="{i // 64}:0:{i % 64}:0" '
                   f'TRAN="sas" REV="GS0F" VENDOR="SEAGATE "\n' for i in range(n))


def lsblk_tree(n: int) -> str:
    lines = ["NAME   MAJ:MIN RM   SIZE RO TYPE MOUNTPOINT"]
    for i in range(n):
        lines += [f"{_disk(i):<6} 8:{16 * i:<5} 0   3.7T  0 disk",
                  f"└─{_disk(i)}1 8:{16 * i + 1} 0 3.7T 0 part /data{i}"]
    return "\n".join(lines) + "\n"


def multipath(n: int) -> str:
    lines = []
    for m in range(max(1, n // 8)):
        lines += [f"mpath{m} (3600a0980383030{m:018x}) dm-{m} NETAPP  ,LUN C-Mode",
                  "size=500G features='3 queue_if_no_path pg_init_retries 50' hwhandler='1 alua' wp=rw",
                  "|-+- policy='service-time 0' prio=50 status=active"]
        for p in range(8):
            lines.append(f"| |- {p % 4}:0:{m}:1 {_disk(8 * m + p)} 8:{16 * (8 * m + p)} active ready running")
    return "\n".join(lines) + "\n"


def mdstat(n: int) -> str:
    lines = ["Personalities : [raid6] [raid5] [raid4]"]
    for a in range(max(1, n // 16)):
        members = " ".join(f"{_disk(16 * a + k)}1[{k}]" for k in range(16))
        lines += [f"md{a} : active raid6 {members}",
                  "      54685646848 blocks super 1.2 level 6, 512k chunk, algorithm 2 [16/16] [UUUUUUUUUUUUUUUU]",
                  "      bitmap: 0/30 pages [0KB], 65536KB chunk", ""]
    return "\n".join(lines + ["unused devices: <none>"]) + "\n"


def mdadm_detail(n: int) -> str:
    lines = []
    for a in range(max(1, n // 16)):
        lines += [f"/dev/md{a}:", "           Version : 1.2", "        Raid Level : raid6",
                  "      Raid Devices : 16", "     Total Devices : 16", "             State : clean ",
                  "    Active Devices : 16", "", "    Number   Major   Minor   RaidDevice State"]
        lines += [f"      {k:>2}       8     {16 * (16 * a + k):>5}       {k:>2}      active sync   "
                  f"/dev/{_disk(16 * a + k)}1" for k in range(16)]
    return "\n".join(lines) + "\n"


def ls_dev(n: int) -> str:
    lines = ["/dev:", "total 0"]
    lines += [f"brw-rw----.  1 0 6   8, {16 * i:>4} Mar 19 02:41 {_disk(i)}" for i in range(n)]
    lines += [f"brw-rw----.  1 0 6   8, {16 * i + 1:>4} Mar 19 02:41 {_disk(i)}1" for i in range(n)]
    lines += ["", "/dev/disk/by-path:", "total 0"]
    lines += [f"lrwxrwxrwx.  1 0 0   9 Mar 19 02:41 pci-0000:03:00.0-sas-0x5000c500{i:08x}-lun-0 -> ../../{_disk(i)}"
              for i in range(n)]
    lines += ["", "/dev/disk/by-id:", "total 0"]
    lines += [f"lrwxrwxrwx.  1 0 0   9 Mar 19 02:41 wwn-0x5000c500{i:08x} -> ../../{_disk(i)}" for i in range(n)]
    lines += ["", "/dev/disk/by-uuid:", "total 0"]
    lines += [f"lrwxrwxrwx.  1 0 0  10 Mar 19 02:41 {i:08x}-1c0f-5b24-901a-75a83ece8415 -> ../../{_disk(i)}1"
              for i in range(2 * n)]
    return "\n".join(lines) + "\n"


TABLES = {
    "proc_scsi": (proc_scsi, inventory.read_proc_scsi),
    "lsscsi": (lsscsi, inventory.read_lsscsi),
    "lsblk (-O -P)": (lsblk_pairs, inventory.read_lsblk),
    "lsblk (tree)": (lsblk_tree, inventory.read_lsblk),
    "multipath": (multipath, inventory.read_multipath),
    "mdstat": (mdstat, inventory.read_mdstat),
    "mdadm_detail": (mdadm_detail, inventory.read_mdadm_detail),
    "by_id (ls -lanR /dev)": (ls_dev, inventory.read_by_id),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    print("grammar build (first use in a process)")
    for name in inventory.TABLE_GRAMMARS:
        start = time.perf_counter()
        larkbuild.table_parser(name)
        print(f"  {name:<14} {time.perf_counter() - start:6.2f} s")

    print(f"\nreaders, {args.devices} devices, best of {args.repeat}")
    print(f"  {'table':<24} {'lines':>8} {'seconds':>8} {'lines/s':>9} {'unparsed':>8}")
    for label, (make, read) in TABLES.items():
        text = make(args.devices)
        lines = text.count("\n")
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = read(text)
            best = min(best, time.perf_counter() - start)
        print(f"  {label:<24} {lines:>8} {best:>8.2f} {lines / best:>9.0f} {len(result.unparsed):>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
