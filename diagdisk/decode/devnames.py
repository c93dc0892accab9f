"""Block device names and numbers: partition -> disk, major:minor -> sd name.

The sd driver owns majors 8, 65-71 and 128-135, sixteen minors a disk (kernel
Documentation/admin-guide/devices.txt); that arithmetic is exact, so it is not a guess.
"""

from __future__ import annotations

import re

_SD_MAJORS = (8, *range(65, 72), *range(128, 136))
_PARTITIONED = [
    re.compile(r"(?P<disk>(?:sd|hd|vd|xvd)[a-z]+)(?P<part>\d+)?"),
    re.compile(r"(?P<disk>(?:nvme\d+n\d+|mmcblk\d+|md\d+|md_d\d+|loop\d+|nbd\d+|rbd\d+))(?:p(?P<part>\d+))?"),
    re.compile(r"(?P<disk>(?:sr|scd|st|nst|dm-|sg)\d+)()"),
]


def disk_of(name: str) -> str:
    """The whole-disk name of a partition name; unknown shapes are returned unchanged."""
    for pattern in _PARTITIONED:
        m = pattern.fullmatch(name)
        if m:
            return m["disk"]
    return name


def is_partition(name: str) -> bool:
    return disk_of(name) != name


def sd_name(index: int) -> str:
    """sd disk index 0 -> sda, 25 -> sdz, 26 -> sdaa (the kernel's sd_format_disk_name)."""
    letters = ""
    index += 1
    while index > 0:
        index, rem = divmod(index - 1, 26)
        letters = chr(ord("a") + rem) + letters
    return "sd" + letters


def name_from_majmin(major: int, minor: int) -> str | None:
    """sd name (with partition number) for a major:minor, or None when the major is not sd's."""
    if major not in _SD_MAJORS:
        return None
    disk_index = _SD_MAJORS.index(major) * 16 + minor // 16
    partition = minor % 16
    return sd_name(disk_index) + (str(partition) if partition else "")


def parse_majmin(text: str, *, hex_numbers: bool) -> str:
    """'08:11' (2.4 kdevname, hex) or '8,3' / '8:3' (decimal) -> '8:17' / '8:3' in decimal."""
    major, minor = re.split(r"[:,]", text.strip("()"))
    base = 16 if hex_numbers else 10
    return f"{int(major, base)}:{int(minor, base)}"
