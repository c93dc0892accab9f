"""Decode: the raw numbers storage errors leave in logs enter (SCSI sense data, ASC/ASCQ, CDBs,
SCSI result words, libata taskfiles, NVMe status codes, device numbers, smartctl exit bits); their
meaning leaves, as names and fields. A library the other stages call, not a stage of its own.

One library serves the log parsers, the rules and `diagdisk decode`. Every decoder raises
`DecodeError` (a DiagdiskError, so exit code 2 and a one-line message) for input it cannot
decode, and never anything else.
"""

from __future__ import annotations

import re

from diagdisk.errors import DiagdiskError


class DecodeError(DiagdiskError):
    """The bytes or text given to a decoder are malformed (odd hex, too short, unknown format)."""


_HEX_SEPARATORS = re.compile(r"[\s,;:]+")
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]+")


def parse_hex(text: str | list[str] | tuple[str, ...]) -> bytes:
    """Turn pasted hex ("70 00 03", "700003", "0x70,0x00", "70h 00h") into bytes.

    Tokens longer than two digits are read as runs of bytes, so "7000" is 70 00; a token with an
    odd number of digits is an error rather than a guess about where the missing nibble goes.
    """
    if not isinstance(text, str):
        text = " ".join(text)
    result = bytearray()
    for token in _HEX_SEPARATORS.split(text.strip()):
        if not token:
            continue
        digits = token
        if digits[:2] in ("0x", "0X"):
            digits = digits[2:]
        if digits[-1:] in ("h", "H") and len(digits) > 1:
            digits = digits[:-1]
        if not _HEX_DIGITS.fullmatch(digits):
            raise DecodeError(f"not hexadecimal: {token!r}")
        if len(digits) % 2:
            raise DecodeError(
                f"odd number of hex digits in {token!r}: write each byte as two digits"
            )
        result.extend(bytes.fromhex(digits))
    if not result:
        raise DecodeError("no hex bytes given")
    return bytes(result)


__all__ = ["DecodeError", "parse_hex"]
