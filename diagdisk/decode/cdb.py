"""SCSI command descriptor blocks: operation name, LBA and transfer length.

Accepts the bytes alone or the lines kernels print around them:

    sd 0:0:0:0: [sda] tag#25 CDB: Read(16) 88 00 00 00 00 00 22 bd 84 28 00 00 03 18 00 00
    Original_CDB[]: 28 00 02 B1 4E 62 00 00 04 00
    cdb[0]=0x28: 28 00 a9 40 0b 20 00 00 f0 00
    scsi0: ERROR on channel 0, id 0, lun 0, CDB: Write (10) 00 06 1d 3a 0d 00 00 08 00

The last form (2.4 kernels) prints the name and then the CDB without its operation code byte;
when a name is given and exactly one byte is short, the operation code is put back.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from diagdisk.decode import DecodeError, parse_hex

# opcode -> (T10 name, layout). Layouts: "rw6", "rw10", "rw12", "rw16", "lba16_len13"
# (COMPARE AND WRITE), or None (no LBA / transfer length in blocks).
OPERATIONS: dict[int, tuple[str, str | None]] = {
    0x00: ("TEST UNIT READY", None), 0x01: ("REZERO UNIT", None), 0x03: ("REQUEST SENSE", None),
    0x04: ("FORMAT UNIT", None), 0x05: ("READ BLOCK LIMITS", None),
    0x07: ("REASSIGN BLOCKS", None), 0x08: ("READ(6)", "rw6"), 0x0A: ("WRITE(6)", "rw6"),
    0x0B: ("SEEK(6)", None), 0x10: ("WRITE FILEMARKS(6)", None), 0x11: ("SPACE(6)", None),
    0x12: ("INQUIRY", None), 0x15: ("MODE SELECT(6)", None), 0x16: ("RESERVE(6)", None),
    0x17: ("RELEASE(6)", None), 0x19: ("ERASE(6)", None), 0x1A: ("MODE SENSE(6)", None),
    0x1B: ("START STOP UNIT", None), 0x1C: ("RECEIVE DIAGNOSTIC RESULTS", None),
    0x1D: ("SEND DIAGNOSTIC", None), 0x1E: ("PREVENT ALLOW MEDIUM REMOVAL", None),
    0x23: ("READ FORMAT CAPACITIES", None), 0x25: ("READ CAPACITY(10)", None),
    0x28: ("READ(10)", "rw10"), 0x2A: ("WRITE(10)", "rw10"), 0x2B: ("SEEK(10)", None),
    0x2E: ("WRITE AND VERIFY(10)", "rw10"), 0x2F: ("VERIFY(10)", "rw10"),
    0x34: ("PRE-FETCH(10)", "rw10"), 0x35: ("SYNCHRONIZE CACHE(10)", "rw10"),
    0x37: ("READ DEFECT DATA(10)", None), 0x3B: ("WRITE BUFFER", None),
    0x3C: ("READ BUFFER", None), 0x3E: ("READ LONG(10)", None), 0x3F: ("WRITE LONG(10)", None),
    0x41: ("WRITE SAME(10)", "rw10"), 0x42: ("UNMAP", None), 0x43: ("READ TOC/PMA/ATIP", None),
    0x4A: ("GET EVENT STATUS NOTIFICATION", None), 0x4C: ("LOG SELECT", None),
    0x4D: ("LOG SENSE", None), 0x55: ("MODE SELECT(10)", None), 0x56: ("RESERVE(10)", None),
    0x57: ("RELEASE(10)", None), 0x5A: ("MODE SENSE(10)", None),
    0x5E: ("PERSISTENT RESERVE IN", None), 0x5F: ("PERSISTENT RESERVE OUT", None),
    0x7F: ("VARIABLE LENGTH", None), 0x83: ("EXTENDED COPY", None),
    0x84: ("RECEIVE COPY RESULTS", None), 0x85: ("ATA PASS-THROUGH(16)", None),
    0x86: ("ACCESS CONTROL IN", None), 0x87: ("ACCESS CONTROL OUT", None),
    0x88: ("READ(16)", "rw16"), 0x89: ("COMPARE AND WRITE", "lba16_len13"),
    0x8A: ("WRITE(16)", "rw16"), 0x8C: ("READ ATTRIBUTE", None), 0x8D: ("WRITE ATTRIBUTE", None),
    0x8E: ("WRITE AND VERIFY(16)", "rw16"), 0x8F: ("VERIFY(16)", "rw16"),
    0x90: ("PRE-FETCH(16)", "rw16"), 0x91: ("SYNCHRONIZE CACHE(16)", "rw16"),
    0x93: ("WRITE SAME(16)", "rw16"), 0x94: ("ZBC OUT", None), 0x95: ("ZBC IN", None),
    0x9E: ("SERVICE ACTION IN(16)", None), 0x9F: ("SERVICE ACTION OUT(16)", None),
    0xA0: ("REPORT LUNS", None), 0xA1: ("ATA PASS-THROUGH(12)", None),
    0xA2: ("SECURITY PROTOCOL IN", None), 0xA3: ("MAINTENANCE IN", None),
    0xA4: ("MAINTENANCE OUT", None), 0xA5: ("MOVE MEDIUM", None),
    0xA8: ("READ(12)", "rw12"), 0xAA: ("WRITE(12)", "rw12"),
    0xAE: ("WRITE AND VERIFY(12)", "rw12"), 0xAF: ("VERIFY(12)", "rw12"),
    0xB5: ("SECURITY PROTOCOL OUT", None), 0xB7: ("READ DEFECT DATA(12)", None),
    0xB8: ("READ ELEMENT STATUS", None),
}
SERVICE_ACTIONS: dict[tuple[int, int], str] = {
    (0x9E, 0x10): "READ CAPACITY(16)", (0x9E, 0x12): "GET LBA STATUS",
    (0x9E, 0x13): "REPORT REFERRALS", (0xA3, 0x05): "REPORT IDENTIFYING INFORMATION",
    (0xA3, 0x0A): "REPORT TARGET PORT GROUPS", (0xA3, 0x0C): "REPORT SUPPORTED OPERATION CODES",
    (0xA3, 0x0D): "REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS", (0xA3, 0x0F): "REPORT TIMESTAMP",
    (0xA4, 0x0A): "SET TARGET PORT GROUPS", (0x94, 0x01): "CLOSE ZONE",
    (0x94, 0x02): "FINISH ZONE", (0x94, 0x03): "OPEN ZONE", (0x94, 0x04): "RESET WRITE POINTER",
    (0x95, 0x00): "REPORT ZONES",
}
# Variable-length (0x7F) service actions with LBA in bytes 12-19 and length in bytes 28-31.
VARIABLE_LENGTH_OPERATIONS = {
    0x0009: "READ(32)", 0x000A: "VERIFY(32)", 0x000B: "WRITE(32)",
    0x000C: "WRITE AND VERIFY(32)", 0x000D: "WRITE SAME(32)",
}
_GROUP_LENGTHS = {0: 6, 1: 10, 2: 10, 4: 16, 5: 12}
_NAME_BEFORE_HEX = re.compile(
    r"(?:CDB|Original_CDB\[\]|cdb\[0\]=0x[0-9a-fA-F]{2})\s*:\s*"
    r"(?P<name>[A-Za-z][A-Za-z /_\-]*?(?:\s*\(\s*\d+\s*\))?)?\s*:?\s*"
    r"(?P<hex>(?:[0-9a-fA-F]{2}\s*)+)\s*$"
)
_BARE_NAME_HEX = re.compile(
    r"(?P<name>[A-Za-z][A-Za-z /_\-]*?\(\s*\d+\s*\))\s*:?\s*(?P<hex>(?:[0-9a-fA-F]{2}\s+)*[0-9a-fA-F]{2})\s*$"
)


def _normalize_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


_OPCODE_BY_NAME = {_normalize_name(name): opcode for opcode, (name, _) in OPERATIONS.items()}


def expected_length(opcode: int, second_header_byte: int | None = None) -> int | None:
    """CDB length by operation-code group; None for vendor-specific groups 6 and 7."""
    group = opcode >> 5
    if opcode == 0x7F:
        return 8 + second_header_byte if second_header_byte is not None else None
    return _GROUP_LENGTHS.get(group)


@dataclass
class Cdb:
    opcode: int
    name: str
    service_action: int | None = None
    lba: int | None = None
    length: int | None = None  # transfer length in logical blocks
    cdb_length: int | None = None
    bytes_hex: str = ""
    missing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        parts = [f"{self.name} (0x{self.opcode:02X})"]
        if self.lba is not None:
            parts.append(f"lba {self.lba} (0x{self.lba:X})")
        if self.length is not None:
            parts.append(f"length {self.length}")
        if self.missing:
            parts.append("truncated, missing: " + ", ".join(self.missing))
        return "; ".join(parts)


def decode_cdb(data: bytes) -> Cdb:
    if not isinstance(data, (bytes, bytearray)):
        raise DecodeError("a CDB must be bytes")
    if not data:
        raise DecodeError("CDB is empty")
    data = bytes(data)
    opcode = data[0]
    name, layout = OPERATIONS.get(opcode, (None, None))
    if name is None:
        name = "VENDOR SPECIFIC" if opcode >= 0xC0 else f"UNKNOWN OPERATION 0x{opcode:02X}"
    cdb = Cdb(opcode=opcode, name=name, bytes_hex=data.hex(" "),
              cdb_length=expected_length(opcode, data[7] if len(data) > 7 else None))

    def need(last_index: int, field_name: str) -> bool:
        if len(data) > last_index:
            return True
        cdb.missing.append(field_name)
        return False

    if opcode in (0x9E, 0x9F, 0xA3, 0xA4, 0x94, 0x95) and need(1, "service_action"):
        cdb.service_action = data[1] & 0x1F
        cdb.name = SERVICE_ACTIONS.get((opcode, cdb.service_action), cdb.name)
    if opcode == 0x7F:
        if need(9, "service_action"):
            cdb.service_action = int.from_bytes(data[8:10], "big")
            cdb.name = VARIABLE_LENGTH_OPERATIONS.get(
                cdb.service_action, f"VARIABLE LENGTH service action 0x{cdb.service_action:04X}")
            if cdb.service_action in VARIABLE_LENGTH_OPERATIONS:
                if need(19, "lba"):
                    cdb.lba = int.from_bytes(data[12:20], "big")
                if need(31, "length"):
                    cdb.length = int.from_bytes(data[28:32], "big")
        return cdb
    if layout == "rw6":
        if need(3, "lba"):
            cdb.lba = (data[1] & 0x1F) << 16 | data[2] << 8 | data[3]
        if need(4, "length"):
            cdb.length = data[4] or 256  # SBC: zero means 256 blocks for READ/WRITE(6)
    elif layout == "rw10":
        if need(5, "lba"):
            cdb.lba = int.from_bytes(data[2:6], "big")
        if need(8, "length"):
            cdb.length = int.from_bytes(data[7:9], "big")
    elif layout == "rw12":
        if need(5, "lba"):
            cdb.lba = int.from_bytes(data[2:6], "big")
        if need(9, "length"):
            cdb.length = int.from_bytes(data[6:10], "big")
    elif layout == "rw16":
        if need(9, "lba"):
            cdb.lba = int.from_bytes(data[2:10], "big")
        if need(13, "length"):
            cdb.length = int.from_bytes(data[10:14], "big")
    elif layout == "lba16_len13":
        if need(9, "lba"):
            cdb.lba = int.from_bytes(data[2:10], "big")
        if need(13, "length"):
            cdb.length = data[13]
    return cdb


def decode_cdb_text(text: str) -> Cdb:
    """Decode a CDB from hex or from a pasted kernel line (see the module docstring)."""
    if not isinstance(text, str):
        raise DecodeError("CDB text must be a string")
    stripped = text.strip()
    match = _NAME_BEFORE_HEX.search(stripped) or _BARE_NAME_HEX.search(stripped)
    if not match:
        return decode_cdb(parse_hex(stripped))
    return decode_cdb_named(parse_hex(match.group("hex")), match.group("name"))


def decode_cdb_named(data: bytes, name: str | None) -> Cdb:
    """Decode CDB bytes printed after an operation name; 2.4 kernels left the operation code byte
    out (the name says it), so when exactly that byte is missing it is put back."""
    opcode = _OPCODE_BY_NAME.get(_normalize_name(name)) if name else None
    if opcode is not None and data and data[0] != opcode:
        length = expected_length(opcode)
        if length is not None and len(data) == length - 1:
            data = bytes([opcode]) + data
    return decode_cdb(data)
