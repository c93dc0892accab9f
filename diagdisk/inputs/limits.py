"""How much of an untrusted input diagdisk reads: one set of caps, configurable from the CLI.

A cap that cuts something always leaves a warning (a :class:`diagdisk.errors.PartialRead`), so a
report never looks complete when it is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError


@dataclass(frozen=True)
class Limits:
    # One file: an archive member, a decompressed rotation, a log or a command output.
    max_file_bytes: int = 4 << 30
    # Everything extracted from one archive, or copied from stdin.
    max_total_bytes: int = 8 << 30
    # A line that does not fit a read chunk keeps its first bytes up to this size (bounded memory).
    max_line_bytes: int = 1 << 20
    # Command outputs (mdstat, lsscsi, smartctl, ...) are small; a huge one is cut here.
    max_table_bytes: int = 64 << 20
    # Events kept in memory for one analysis: millions of error lines for one disk tell no more
    # than the first few million, and each event costs memory.
    max_events: int = 5_000_000


_SIZE = re.compile(r"\s*(\d+)\s*([kmgt]?)i?b?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes from '512', '64K', '200M', '4G', '1TiB' (binary units).

    Sample input::

        >>> parse_size("4G"), parse_size("64k"), parse_size("1000")
        (4294967296, 65536, 1000)
    """
    match = _SIZE.fullmatch(text)
    if not match or int(match.group(1)) == 0:
        raise InputError(f"not a size: {text!r} (write e.g. 512M or 4G)")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]
