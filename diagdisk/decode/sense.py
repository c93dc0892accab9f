"""SCSI sense data (SPC-5 clause 4.4): fixed format (0x70/0x71) and descriptor format (0x72/0x73).

A buffer that is valid but shorter than its own additional-length byte promises is decoded as far
as it goes; the fields it does not reach are None and named in `missing`. A buffer that cannot be
sense data (unknown response code, too short to hold a sense key) raises DecodeError.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from diagdisk.decode import DecodeError
from diagdisk.decode.asc_ascq import describe, format_asc_ascq

SENSE_KEY_NAMES: dict[int, str] = {
    0x0: "NO SENSE",
    0x1: "RECOVERED ERROR",
    0x2: "NOT READY",
    0x3: "MEDIUM ERROR",
    0x4: "HARDWARE ERROR",
    0x5: "ILLEGAL REQUEST",
    0x6: "UNIT ATTENTION",
    0x7: "DATA PROTECT",
    0x8: "BLANK CHECK",
    0x9: "VENDOR SPECIFIC",
    0xA: "COPY ABORTED",
    0xB: "ABORTED COMMAND",
    0xC: "EQUAL",  # obsolete since SPC-3, still printed by kernels and sg3_utils
    0xD: "VOLUME OVERFLOW",
    0xE: "MISCOMPARE",
    0xF: "COMPLETED",
}
_SENSE_KEY_BY_NAME = {name.replace(" ", ""): key for key, name in SENSE_KEY_NAMES.items()}

RESPONSE_CODES = {0x70: ("fixed", True), 0x71: ("fixed", False),
                  0x72: ("descriptor", True), 0x73: ("descriptor", False)}

DESCRIPTOR_TYPE_NAMES = {
    0x00: "information",
    0x01: "command-specific information",
    0x02: "sense key specific",
    0x03: "field replaceable unit",
    0x04: "stream commands",
    0x05: "block commands",
    0x06: "OSD object identification",
    0x07: "OSD response integrity check value",
    0x08: "OSD attribute identification",
    0x09: "ATA status return",
    0x0A: "another progress indication",
    0x0B: "user data segment referral",
    0x0C: "forwarded sense data",
    0x0D: "direct-access block device",
    0x0E: "device designation",
    0x0F: "microcode activation time",
}

_FIXED_FIELD_ENDS = (  # (field, last byte index it needs) in fixed format
    ("information", 6), ("command_specific", 11), ("asc", 12), ("ascq", 13),
    ("fru_code", 14), ("sense_key_specific", 17),
)


def sense_key_from_name(text: str) -> int | None:
    """Sense key for a kernel or T10 spelling ("Medium Error", "MEDIUM_ERROR", "0x3", "3h")."""
    if not isinstance(text, str):
        return None
    cleaned = text.strip()
    number = re.fullmatch(r"(?:0x)?([0-9a-fA-F])h?", cleaned)
    if number:
        return int(number.group(1), 16)
    return _SENSE_KEY_BY_NAME.get(re.sub(r"[\s_\-]+", "", cleaned.upper()))


@dataclass
class SenseData:
    format: str  # "fixed" | "descriptor"
    response_code: int
    current: bool
    sense_key: int
    sense_key_name: str
    asc: int | None = None
    ascq: int | None = None
    asc_ascq: str | None = None
    description: str | None = None
    information: int | None = None  # only when the device marks it valid
    information_valid: bool = False
    information_raw: int | None = None
    command_specific: int | None = None
    fru_code: int | None = None
    sense_key_specific: dict[str, Any] | None = None
    filemark: bool = False
    eom: bool = False
    ili: bool = False
    sdat_ovfl: bool = False
    additional_length: int | None = None
    descriptors: list[dict[str, Any]] = field(default_factory=list)
    ata_status_return: dict[str, Any] | None = None
    missing: list[str] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        return bool(self.missing)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["truncated"] = self.truncated
        return data

    def summary(self) -> str:
        """One line for people: 'fixed current MEDIUM ERROR 11/00 Unrecovered read error ...'."""
        parts = [self.format, "current" if self.current else "deferred",
                 f"{self.sense_key_name} (0x{self.sense_key:X})"]
        if self.asc_ascq:
            parts.append(f"{self.asc_ascq} {self.description or 'unknown ASC/ASCQ'}")
        if self.information is not None:
            parts.append(f"information=0x{self.information:X} ({self.information})")
        if self.fru_code:
            parts.append(f"fru=0x{self.fru_code:02X}")
        if self.missing:
            parts.append("truncated, missing: " + ", ".join(self.missing))
        return "; ".join(parts)


def decode_sense(data: bytes) -> SenseData:
    """Decode one sense buffer; DecodeError if it is not sense data."""
    if not isinstance(data, (bytes, bytearray)):
        raise DecodeError("sense data must be bytes")
    if len(data) == 0:
        raise DecodeError("sense data is empty")
    response_code = data[0] & 0x7F
    if response_code not in RESPONSE_CODES:
        raise DecodeError(
            f"unknown sense response code 0x{response_code:02X}: expected 0x70/0x71 (fixed) "
            "or 0x72/0x73 (descriptor)"
        )
    sense_format, current = RESPONSE_CODES[response_code]
    if sense_format == "fixed":
        return _decode_fixed(bytes(data), response_code, current)
    return _decode_descriptor(bytes(data), response_code, current)


def _decode_fixed(data: bytes, response_code: int, current: bool) -> SenseData:
    if len(data) < 3:
        raise DecodeError(
            f"fixed-format sense data too short: {len(data)} byte(s), the sense key is in byte 2"
        )
    sense = SenseData(format="fixed", response_code=response_code, current=current,
                      sense_key=data[2] & 0x0F, sense_key_name=SENSE_KEY_NAMES[data[2] & 0x0F],
                      filemark=bool(data[2] & 0x80), eom=bool(data[2] & 0x40),
                      ili=bool(data[2] & 0x20), sdat_ovfl=bool(data[2] & 0x10))
    declared_end = 8 + data[7] if len(data) > 7 else None
    usable = len(data) if declared_end is None else min(len(data), declared_end)
    if declared_end is not None:
        sense.additional_length = data[7]
    present = {name for name, last in _FIXED_FIELD_ENDS if last < usable}
    if declared_end is None:
        sense.missing = ["additional_length"] + [
            name for name, last in _FIXED_FIELD_ENDS if name not in present
        ]
    else:
        # A field the device chose not to send (small additional length) is absent, not missing;
        # only fields the additional length promises but the buffer lacks are reported.
        sense.missing = [name for name, last in _FIXED_FIELD_ENDS if usable <= last < declared_end]
    if "information" in present:
        sense.information_raw = int.from_bytes(data[3:7], "big")
        sense.information_valid = bool(data[0] & 0x80)
        if sense.information_valid:
            sense.information = sense.information_raw
    if "command_specific" in present:
        sense.command_specific = int.from_bytes(data[8:12], "big")
    if "asc" in present:
        sense.asc = data[12]
    if "ascq" in present:
        sense.ascq = data[13]
        sense.asc_ascq = format_asc_ascq(sense.asc, sense.ascq)
        sense.description = describe(sense.asc, sense.ascq)
    if "fru_code" in present:
        sense.fru_code = data[14]
    if "sense_key_specific" in present:
        sense.sense_key_specific = decode_sense_key_specific(sense.sense_key, data[15:18])
    return sense


def _decode_descriptor(data: bytes, response_code: int, current: bool) -> SenseData:
    if len(data) < 2:
        raise DecodeError(
            f"descriptor-format sense data too short: {len(data)} byte(s), "
            "the sense key is in byte 1"
        )
    sense = SenseData(format="descriptor", response_code=response_code, current=current,
                      sense_key=data[1] & 0x0F, sense_key_name=SENSE_KEY_NAMES[data[1] & 0x0F])
    if len(data) > 2:
        sense.asc = data[2]
    if len(data) > 3:
        sense.ascq = data[3]
        sense.asc_ascq = format_asc_ascq(sense.asc, sense.ascq)
        sense.description = describe(sense.asc, sense.ascq)
    else:
        sense.missing.extend(["asc", "ascq"] if len(data) == 2 else ["ascq"])
    if len(data) > 4:
        sense.sdat_ovfl = bool(data[4] & 0x80)
    if len(data) < 8:
        sense.missing.append("additional_length")
        return sense
    sense.additional_length = data[7]
    end = 8 + data[7]
    if len(data) < end:
        sense.missing.append(f"{end - len(data)} byte(s) of descriptors")
    end = min(end, len(data))
    offset = 8
    while offset + 2 <= end:
        descriptor_type, length = data[offset], data[offset + 1]
        body = data[offset : offset + 2 + length]
        if offset + 2 + length > end:
            sense.missing.append(
                f"descriptor type 0x{descriptor_type:02X} at byte {offset} "
                f"({offset + 2 + length - end} byte(s) cut off)"
            )
            break
        sense.descriptors.append(_decode_descriptor_entry(sense, body))
        offset += 2 + length
    if 0 < end - offset < 2:
        sense.missing.append(f"descriptor header at byte {offset}")
    return sense


def _decode_descriptor_entry(sense: SenseData, body: bytes) -> dict[str, Any]:
    descriptor_type = body[0]
    entry: dict[str, Any] = {
        "type": descriptor_type,
        "name": DESCRIPTOR_TYPE_NAMES.get(
            descriptor_type, "vendor specific" if descriptor_type >= 0x80 else "reserved"
        ),
        "bytes": body.hex(" "),
    }
    if descriptor_type == 0x00 and len(body) >= 12:
        valid = bool(body[2] & 0x80)
        value = int.from_bytes(body[4:12], "big")
        entry.update(valid=valid, information=value)
        sense.information_raw = value
        sense.information_valid = valid
        sense.information = value if valid else None
    elif descriptor_type == 0x01 and len(body) >= 12:
        entry["command_specific"] = sense.command_specific = int.from_bytes(body[4:12], "big")
    elif descriptor_type == 0x02 and len(body) >= 7:
        sense.sense_key_specific = decode_sense_key_specific(sense.sense_key, body[4:7])
        entry["sense_key_specific"] = sense.sense_key_specific
    elif descriptor_type == 0x03 and len(body) >= 4:
        entry["fru_code"] = sense.fru_code = body[3]
    elif descriptor_type in (0x04, 0x05) and len(body) >= 4:
        sense.ili = bool(body[3] & 0x20)
        entry["ili"] = sense.ili
        if descriptor_type == 0x04:
            sense.filemark, sense.eom = bool(body[3] & 0x80), bool(body[3] & 0x40)
            entry.update(filemark=sense.filemark, eom=sense.eom)
    elif descriptor_type == 0x09 and len(body) >= 14:
        sense.ata_status_return = _decode_ata_status_return(body)
        entry.update(sense.ata_status_return)
    elif descriptor_type == 0x0A and len(body) >= 8:
        entry.update(sense_key=body[2] & 0x0F, asc=body[3], ascq=body[4],
                     progress_percent=round(int.from_bytes(body[6:8], "big") * 100 / 65536, 2))
    return entry


def _decode_ata_status_return(body: bytes) -> dict[str, Any]:
    # SAT-4 table: LBA bytes are interleaved high/low across bytes 6..11.
    from diagdisk.decode.ata import ata_error_bits, ata_status_bits

    extend = bool(body[2] & 0x01)
    lba = body[7] | body[9] << 8 | body[11] << 16
    count = body[5]
    if extend:
        lba |= body[6] << 24 | body[8] << 32 | body[10] << 40
        count |= body[4] << 8
    return {
        "extend": extend, "error": body[3], "error_bits": ata_error_bits(body[3]),
        "count": count, "lba": lba, "device": body[12], "status": body[13],
        "status_bits": ata_status_bits(body[13]),
    }


def decode_sense_key_specific(sense_key: int, three: bytes) -> dict[str, Any] | None:
    """The three sense-key specific bytes (SKSV set), interpreted by sense key; None if not valid."""
    if len(three) < 3 or not three[0] & 0x80:
        return None
    value = int.from_bytes(three[1:3], "big")
    if sense_key == 0x5:
        pointer: dict[str, Any] = {"kind": "field pointer",
                                   "in": "cdb" if three[0] & 0x40 else "parameter data",
                                   "byte": value}
        if three[0] & 0x08:
            pointer["bit"] = three[0] & 0x07
        return pointer
    if sense_key in (0x0, 0x2):
        return {"kind": "progress indication", "progress": value,
                "progress_percent": round(value * 100 / 65536, 2)}
    if sense_key in (0x1, 0x3, 0x4):
        return {"kind": "actual retry count", "retry_count": value}
    if sense_key == 0xA:
        segment: dict[str, Any] = {"kind": "segment pointer",
                                   "relative_to": "segment descriptor" if three[0] & 0x20
                                   else "parameter list", "byte": value}
        if three[0] & 0x08:
            segment["bit"] = three[0] & 0x07
        return segment
    if sense_key == 0x6:
        return {"kind": "unit attention condition queue", "overflow": bool(three[0] & 0x01)}
    return {"kind": "raw", "bytes": three.hex(" ")}
