"""The SCSI midlayer result word and the SCSI status byte.

The result word is driver_byte << 24 | host_byte << 16 | msg_byte << 8 | status_byte
(include/scsi/scsi.h). Old kernels print it as bare hex ("return code = 27010000"); new ones
print named fields ("Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE"). In 2.4/2.6 kernels the
driver byte's high nibble carried a SUGGEST_* hint (0x27 = DRIVER_HARD | SUGGEST_ABORT).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from diagdisk.decode import DecodeError

HOST_BYTE_NAMES = {
    0x00: "DID_OK", 0x01: "DID_NO_CONNECT", 0x02: "DID_BUS_BUSY", 0x03: "DID_TIME_OUT",
    0x04: "DID_BAD_TARGET", 0x05: "DID_ABORT", 0x06: "DID_PARITY", 0x07: "DID_ERROR",
    0x08: "DID_RESET", 0x09: "DID_BAD_INTR", 0x0A: "DID_PASSTHROUGH", 0x0B: "DID_SOFT_ERROR",
    0x0C: "DID_IMM_RETRY", 0x0D: "DID_REQUEUE", 0x0E: "DID_TRANSPORT_DISRUPTED",
    0x0F: "DID_TRANSPORT_FAILFAST", 0x10: "DID_TARGET_FAILURE", 0x11: "DID_NEXUS_FAILURE",
    0x12: "DID_ALLOC_FAILURE", 0x13: "DID_MEDIUM_ERROR", 0x14: "DID_TRANSPORT_MARGINAL",
}
DRIVER_BYTE_NAMES = {
    0x00: "DRIVER_OK", 0x01: "DRIVER_BUSY", 0x02: "DRIVER_SOFT", 0x03: "DRIVER_MEDIA",
    0x04: "DRIVER_ERROR", 0x05: "DRIVER_INVALID", 0x06: "DRIVER_TIMEOUT", 0x07: "DRIVER_HARD",
    0x08: "DRIVER_SENSE",
}
DRIVER_SUGGEST_NAMES = {
    0x10: "SUGGEST_RETRY", 0x20: "SUGGEST_ABORT", 0x30: "SUGGEST_REMAP", 0x40: "SUGGEST_DIE",
    0x80: "SUGGEST_SENSE",
}
MSG_BYTE_NAMES = {
    0x00: "COMMAND_COMPLETE", 0x01: "EXTENDED_MESSAGE", 0x02: "SAVE_POINTERS",
    0x03: "RESTORE_POINTERS", 0x04: "DISCONNECT", 0x05: "INITIATOR_ERROR",
    0x06: "ABORT_TASK_SET", 0x07: "MESSAGE_REJECT", 0x08: "NOP", 0x09: "MSG_PARITY_ERROR",
    0x0A: "LINKED_CMD_COMPLETE", 0x0B: "LINKED_FLG_CMD_COMPLETE", 0x0C: "TARGET_RESET",
    0x0D: "ABORT_TASK", 0x0E: "CLEAR_TASK_SET", 0x0F: "INITIATE_RECOVERY",
    0x10: "RELEASE_RECOVERY", 0x11: "TERMINATE_IO_PROC", 0x16: "CLEAR_ACA",
    0x17: "LOGICAL_UNIT_RESET", 0x20: "SIMPLE_QUEUE_TAG", 0x21: "HEAD_OF_QUEUE_TAG",
    0x22: "ORDERED_QUEUE_TAG", 0x23: "IGNORE_WIDE_RESIDUE", 0x24: "ACA",
    0x55: "QAS_REQUEST", 0x80: "IDENTIFY",
}
# SAM-5 status codes.
SCSI_STATUS_NAMES = {
    0x00: "GOOD", 0x02: "CHECK CONDITION", 0x04: "CONDITION MET", 0x08: "BUSY",
    0x10: "INTERMEDIATE", 0x14: "INTERMEDIATE-CONDITION MET", 0x18: "RESERVATION CONFLICT",
    0x22: "COMMAND TERMINATED", 0x28: "TASK SET FULL", 0x30: "ACA ACTIVE", 0x40: "TASK ABORTED",
}

_BY_NAME = {
    **{name: code for code, name in HOST_BYTE_NAMES.items()},
    **{name: code for code, name in DRIVER_BYTE_NAMES.items()},
}
_FIELD = re.compile(r"\b(hostbyte|driverbyte|msgbyte|statusbyte|status)\s*=\s*([A-Za-z0-9_]+)",
                    re.IGNORECASE)


def scsi_status_name(status: int) -> str | None:
    return SCSI_STATUS_NAMES.get(status)


def host_byte_from_name(name: str) -> int | None:
    """0x01 for "DID_NO_CONNECT" (any case) or "0x01"; None if unknown."""
    return _byte_from_name(name, HOST_BYTE_NAMES)


def driver_byte_from_name(name: str) -> int | None:
    return _byte_from_name(name, DRIVER_BYTE_NAMES)


def _byte_from_name(name: str, names: dict[int, str]) -> int | None:
    if not isinstance(name, str):
        return None
    cleaned = name.strip().upper()
    for code, known in names.items():
        if known == cleaned:
            return code
    number = re.fullmatch(r"0X([0-9A-F]{1,2})", cleaned)
    return int(number.group(1), 16) if number else None


@dataclass
class ScsiResult:
    raw: int | None
    host_byte: int | None
    host_byte_name: str | None
    driver_byte: int | None
    driver_byte_name: str | None
    driver_suggest: str | None
    msg_byte: int | None
    msg_byte_name: str | None
    status: int | None
    status_name: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        parts = []
        if self.raw is not None:
            parts.append(f"result 0x{self.raw:08X}")
        for label, value, name in (
            ("host", self.host_byte, self.host_byte_name),
            ("driver", self.driver_byte, self.driver_byte_name),
            ("msg", self.msg_byte, self.msg_byte_name),
            ("status", self.status, self.status_name),
        ):
            if value is not None:
                text = f"{label} 0x{value:02X} {name or 'unknown'}"
                if label == "driver" and self.driver_suggest:
                    text += f"|{self.driver_suggest}"
                parts.append(text)
        return "; ".join(parts)


def decode_result(code: int | str) -> ScsiResult:
    """Decode a result word (int, or hex text as kernels print it: "27010000", "0x70000") or a
    "hostbyte=DID_OK driverbyte=DRIVER_SENSE" string."""
    if isinstance(code, bool) or not isinstance(code, (int, str)):
        raise DecodeError("a SCSI result is an integer or text")
    if isinstance(code, str):
        text = code.strip()
        fields = {key.lower(): value for key, value in _FIELD.findall(text)}
        if fields:
            return _from_fields(fields)
        text = re.sub(r"^(?:return\s+code\s*=\s*|result\s*[:=]\s*)", "", text, flags=re.I)
        if not re.fullmatch(r"(?:0x)?[0-9a-fA-F]{1,8}", text):
            raise DecodeError(
                f"not a SCSI result: {code!r} (expected hex such as 27010000 or "
                "'hostbyte=DID_OK driverbyte=DRIVER_SENSE')"
            )
        code = int(text, 16)
    if not 0 <= code <= 0xFFFFFFFF:
        raise DecodeError(f"SCSI result out of range (32 bits): {code}")
    driver = code >> 24 & 0xFF
    host = code >> 16 & 0xFF
    msg = code >> 8 & 0xFF
    status = code & 0xFF
    return ScsiResult(
        raw=code, host_byte=host, host_byte_name=HOST_BYTE_NAMES.get(host),
        driver_byte=driver & 0x0F, driver_byte_name=DRIVER_BYTE_NAMES.get(driver & 0x0F),
        driver_suggest=DRIVER_SUGGEST_NAMES.get(driver & 0xF0),
        msg_byte=msg, msg_byte_name=MSG_BYTE_NAMES.get(msg),
        status=status, status_name=SCSI_STATUS_NAMES.get(status),
    )


def _from_fields(fields: dict[str, str]) -> ScsiResult:
    def byte_of(key: str, names: dict[int, str]) -> int | None:
        value = fields.get(key)
        if value is None:
            return None
        parsed = _byte_from_name(value, names)
        if parsed is None and re.fullmatch(r"[0-9a-fA-F]{1,2}", value):
            parsed = int(value, 16)
        if parsed is None:
            raise DecodeError(f"unknown {key} value {value!r}")
        return parsed

    host = byte_of("hostbyte", HOST_BYTE_NAMES)
    driver = byte_of("driverbyte", DRIVER_BYTE_NAMES)
    msg = byte_of("msgbyte", MSG_BYTE_NAMES)
    status = byte_of("statusbyte", SCSI_STATUS_NAMES)
    if status is None:
        status = byte_of("status", SCSI_STATUS_NAMES)
    return ScsiResult(
        raw=None, host_byte=host, host_byte_name=HOST_BYTE_NAMES.get(host) if host is not None else None,
        driver_byte=driver & 0x0F if driver is not None else None,
        driver_byte_name=DRIVER_BYTE_NAMES.get(driver & 0x0F) if driver is not None else None,
        driver_suggest=DRIVER_SUGGEST_NAMES.get(driver & 0xF0) if driver is not None else None,
        msg_byte=msg, msg_byte_name=MSG_BYTE_NAMES.get(msg) if msg is not None else None,
        status=status, status_name=SCSI_STATUS_NAMES.get(status) if status is not None else None,
    )
