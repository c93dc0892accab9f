"""libata taskfiles as the kernel prints them, and the ATA status, error, Emask and SError bits.

    ata3.00: cmd 60/00:08:e0:a7:61/01:00:0c:00:00/40 tag 1 ncq dma 131072 in
             res 41/40:00:b8:a8:61/00:00:0c:00:00/40 Emask 0x409 (media error)

The twelve bytes are, for `cmd`: command/feature:nsect:lbal:lbam:lbah/hob_feature:hob_nsect:
hob_lbal:hob_lbam:hob_lbah/device; for `res` the first two are status/error (ata_eh_link_report
in drivers/ata/libata-eh.c).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from diagdisk.decode import DecodeError

ATA_STATUS_BITS = [  # (mask, name), most significant first, as libata prints them
    (0x80, "BSY"), (0x40, "DRDY"), (0x20, "DF"), (0x10, "DSC"),
    (0x08, "DRQ"), (0x04, "CORR"), (0x02, "SENSE"), (0x01, "ERR"),
]
ATA_ERROR_BITS = [
    (0x80, "ICRC"), (0x40, "UNC"), (0x20, "MC"), (0x10, "IDNF"),
    (0x08, "MCR"), (0x04, "ABRT"), (0x02, "NM"), (0x01, "AMNF"),
]
ATA_ERROR_MEANINGS = {
    "ICRC": "interface CRC error (cable/link)",
    "UNC": "uncorrectable data error (bad sector)",
    "MC": "media changed",
    "IDNF": "ID not found (address out of range or unreadable)",
    "MCR": "media change request",
    "ABRT": "command aborted",
    "NM": "no media",
    "AMNF": "address mark not found",
}
# AC_ERR_* in include/linux/libata.h, with the words libata prints in "Emask 0x.. (...)".
EMASK_BITS = [
    (0x001, "DEV", "device error"),
    (0x002, "HSM", "HSM violation"),
    (0x004, "TIMEOUT", "timeout"),
    (0x008, "MEDIA", "media error"),
    (0x010, "ATA_BUS", "ATA bus error"),
    (0x020, "HOST_BUS", "host bus error"),
    (0x040, "SYSTEM", "system error"),
    (0x080, "INVALID", "invalid argument"),
    (0x100, "OTHER", "unknown error"),
    (0x200, "NODEV_HINT", "polling device detection hint"),
    (0x400, "NCQ", "marker for offending NCQ qc"),
]
# SERR_* in include/linux/libata.h with the names libata prints in "SError: { ... }".
SERROR_BITS = [
    (0x00000001, "RecovData"), (0x00000002, "RecovComm"), (0x00000100, "UnrecovData"),
    (0x00000200, "Persist"), (0x00000400, "Proto"), (0x00000800, "HostInt"),
    (0x00010000, "PHYRdyChg"), (0x00020000, "PHYInt"), (0x00040000, "CommWake"),
    (0x00080000, "10B8B"), (0x00100000, "Dispar"), (0x00200000, "BadCRC"),
    (0x00400000, "Handshk"), (0x00800000, "LinkSeq"), (0x01000000, "TrStaTrns"),
    (0x02000000, "UnrecFIS"), (0x04000000, "DevExch"),
]

ATA_COMMAND_NAMES = {
    0x00: "NOP", 0x06: "DATA SET MANAGEMENT", 0x10: "RECALIBRATE",
    0x20: "READ SECTOR(S)", 0x24: "READ SECTOR(S) EXT", 0x25: "READ DMA EXT",
    0x26: "READ DMA QUEUED EXT", 0x27: "READ NATIVE MAX ADDRESS EXT", 0x29: "READ MULTIPLE EXT",
    0x2F: "READ LOG EXT", 0x30: "WRITE SECTOR(S)", 0x34: "WRITE SECTOR(S) EXT",
    0x35: "WRITE DMA EXT", 0x36: "WRITE DMA QUEUED EXT", 0x37: "SET MAX ADDRESS EXT",
    0x39: "WRITE MULTIPLE EXT", 0x3D: "WRITE DMA FUA EXT", 0x3F: "WRITE LOG EXT",
    0x40: "READ VERIFY SECTOR(S)", 0x42: "READ VERIFY SECTOR(S) EXT",
    0x45: "WRITE UNCORRECTABLE EXT", 0x47: "READ LOG DMA EXT", 0x57: "WRITE LOG DMA EXT",
    0x5B: "TRUSTED NON-DATA", 0x5C: "TRUSTED RECEIVE", 0x5E: "TRUSTED SEND",
    0x60: "READ FPDMA QUEUED", 0x61: "WRITE FPDMA QUEUED", 0x63: "NCQ NON-DATA",
    0x64: "SEND FPDMA QUEUED", 0x65: "RECEIVE FPDMA QUEUED", 0x70: "SEEK",
    0x90: "EXECUTE DEVICE DIAGNOSTIC", 0x91: "INITIALIZE DEVICE PARAMETERS",
    0x92: "DOWNLOAD MICROCODE", 0x93: "DOWNLOAD MICROCODE DMA", 0xA0: "PACKET",
    0xA1: "IDENTIFY PACKET DEVICE", 0xB0: "SMART", 0xB1: "DEVICE CONFIGURATION OVERLAY",
    0xB4: "SANITIZE DEVICE", 0xC4: "READ MULTIPLE", 0xC5: "WRITE MULTIPLE",
    0xC6: "SET MULTIPLE MODE", 0xC8: "READ DMA", 0xCA: "WRITE DMA",
    0xCE: "WRITE MULTIPLE FUA EXT", 0xE0: "STANDBY IMMEDIATE", 0xE1: "IDLE IMMEDIATE",
    0xE2: "STANDBY", 0xE3: "IDLE", 0xE4: "READ BUFFER", 0xE5: "CHECK POWER MODE",
    0xE6: "SLEEP", 0xE7: "FLUSH CACHE", 0xE8: "WRITE BUFFER", 0xEA: "FLUSH CACHE EXT",
    0xEC: "IDENTIFY DEVICE", 0xEF: "SET FEATURES", 0xF1: "SECURITY SET PASSWORD",
    0xF2: "SECURITY UNLOCK", 0xF3: "SECURITY ERASE PREPARE", 0xF4: "SECURITY ERASE UNIT",
    0xF5: "SECURITY FREEZE LOCK", 0xF8: "READ NATIVE MAX ADDRESS", 0xF9: "SET MAX ADDRESS",
}
_LBA48_COMMANDS = {0x06, 0x24, 0x25, 0x26, 0x27, 0x29, 0x2F, 0x34, 0x35, 0x36, 0x37, 0x39,
                   0x3D, 0x3F, 0x42, 0x45, 0x47, 0x57, 0x60, 0x61, 0x63, 0x64, 0x65, 0xCE, 0xEA}
# NCQ commands carry the sector count in the feature registers and the tag in nsect.
_NCQ_COMMANDS = {0x60, 0x61, 0x64, 0x65}

# "cmd" or "res" and the twelve registers; the event field `taskfile` holds the registers alone.
_TASKFILE = re.compile(
    r"(?:\b(?P<kind>cmd|res)\s+)?(?<![0-9a-fA-F/:])(?P<b0>[0-9a-fA-F]{2})/"
    r"(?P<b1>[0-9a-fA-F]{2}):(?P<b2>[0-9a-fA-F]{2}):(?P<b3>[0-9a-fA-F]{2}):"
    r"(?P<b4>[0-9a-fA-F]{2}):(?P<b5>[0-9a-fA-F]{2})/"
    r"(?P<b6>[0-9a-fA-F]{2}):(?P<b7>[0-9a-fA-F]{2}):(?P<b8>[0-9a-fA-F]{2}):"
    r"(?P<b9>[0-9a-fA-F]{2}):(?P<b10>[0-9a-fA-F]{2})/(?P<b11>[0-9a-fA-F]{2})"
)
_TAIL_TAG = re.compile(r"\btag\s+(\d+)")
_TAIL_TRANSFER = re.compile(r"\b(?:(ncq)\s+)?(?:(dma|pio)\s+)?(\d+)\s+(in|out)\b")
_TAIL_EMASK = re.compile(r"\bEmask\s+0x([0-9a-fA-F]+)(?:\s+\(([^)]*)\))?")


def _bit_names(value: int, bits: list[tuple[int, str]]) -> list[str]:
    return [name for mask, name in bits if value & mask]


def ata_status_bits(byte: int) -> list[str]:
    return _bit_names(byte, ATA_STATUS_BITS)


def ata_error_bits(byte: int) -> list[str]:
    return _bit_names(byte, ATA_ERROR_BITS)


def emask_names(value: int) -> list[str]:
    """AC_ERR_* names set in an Emask ("DEV", "MEDIA", "NCQ" for 0x409)."""
    return [name for mask, name, _ in EMASK_BITS if value & mask]


def emask_description(value: int) -> str:
    return ", ".join(text for mask, _, text in EMASK_BITS if value & mask)


def serror_names(value: int) -> list[str]:
    """SError bit names as libata prints them ("UnrecovData", "10B8B", "BadCRC" for 0x280100)."""
    return _bit_names(value, SERROR_BITS)


@dataclass
class AtaTaskfile:
    kind: str  # "cmd" | "res"
    registers: dict[str, int]
    command: int | None = None
    command_name: str | None = None
    status: int | None = None
    status_bits: list[str] = field(default_factory=list)
    error: int | None = None
    error_bits: list[str] = field(default_factory=list)
    lba: int | None = None
    sector_count: int | None = None
    lba48: bool = True
    tag: int | None = None
    protocol: str | None = None
    transfer_bytes: int | None = None
    direction: str | None = None
    emask: int | None = None
    emask_names: list[str] = field(default_factory=list)
    emask_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        parts = []
        if self.kind == "cmd":
            parts.append(f"{self.command_name or 'unknown command'} (0x{self.command:02X})")
        else:
            parts.append(f"status 0x{self.status:02X} {{{' '.join(self.status_bits)}}}")
            parts.append(f"error 0x{self.error:02X} {{{' '.join(self.error_bits)}}}")
        parts.append(f"lba {self.lba} (0x{self.lba:X})")
        if self.sector_count is not None:
            parts.append(f"{self.sector_count} sectors")
        if self.tag is not None:
            parts.append(f"tag {self.tag}")
        if self.transfer_bytes is not None:
            parts.append(f"{self.protocol or ''} {self.transfer_bytes} bytes {self.direction}".strip())
        if self.emask is not None:
            parts.append(f"Emask 0x{self.emask:X} ({emask_description(self.emask)})")
        return "; ".join(parts)


def decode_ata_taskfile(text: str, lba48: bool | None = None, kind: str | None = None) -> AtaTaskfile:
    """Decode a libata `cmd ...` or `res ...` taskfile (with or without the log prefix).

    `kind` ("cmd" or "res") says what bare registers are, as the event field `taskfile` holds
    them ("41/40:00:e0:79:2d/00:00:14:00:00/40", the registers printed after "res"); a word
    printed before the registers wins over it.

    The LBA of a `cmd` uses the 48-bit layout for 48-bit commands and the 28-bit layout (bits
    27:24 in the device register) otherwise. A `res` alone does not say which command it answers,
    so unless `lba48` is given the high-order (hob) bytes are used when any is non-zero, else the
    28-bit layout; the two agree whenever the device register's low nibble is zero.
    """
    if not isinstance(text, str):
        raise DecodeError("ATA taskfile must be text")
    if kind not in (None, "cmd", "res"):
        raise DecodeError(f"ATA taskfile kind must be 'cmd' or 'res', not {kind!r}")
    # bare registers are read only when `kind` says what they are
    match = next((m for m in _TASKFILE.finditer(text) if kind or m.group("kind")), None)
    if not match:
        raise DecodeError(
            "not a libata taskfile: expected 'cmd CC/FF:NN:LL:MM:HH/FF:NN:LL:MM:HH/DD' "
            "or 'res SS/EE:NN:LL:MM:HH/FF:NN:LL:MM:HH/DD'"
        )
    b = [int(match.group(f"b{i}"), 16) for i in range(12)]
    kind = match.group("kind") or kind
    names = (["command", "feature"] if kind == "cmd" else ["status", "error"]) + [
        "nsect", "lbal", "lbam", "lbah", "hob_feature", "hob_nsect", "hob_lbal", "hob_lbam",
        "hob_lbah", "device"]
    registers = dict(zip(names, b))
    taskfile = AtaTaskfile(kind=kind, registers=registers)
    nsect, lbal, lbam, lbah = b[2], b[3], b[4], b[5]
    hob_feature, hob_nsect, hob_lbal, hob_lbam, hob_lbah, device = b[6:12]
    if kind == "cmd":
        taskfile.command = b[0]
        taskfile.command_name = ATA_COMMAND_NAMES.get(b[0])
        use48 = b[0] in _LBA48_COMMANDS if lba48 is None else lba48
        if b[0] in _NCQ_COMMANDS:
            taskfile.sector_count = (hob_feature << 8 | b[1]) or 65536
        elif use48:
            taskfile.sector_count = (hob_nsect << 8 | nsect) or 65536
        else:
            taskfile.sector_count = nsect or 256
    else:
        taskfile.status, taskfile.error = b[0], b[1]
        taskfile.status_bits = ata_status_bits(b[0])
        taskfile.error_bits = ata_error_bits(b[1])
        use48 = bool(hob_lbal or hob_lbam or hob_lbah) if lba48 is None else lba48
    low = lbah << 16 | lbam << 8 | lbal
    taskfile.lba48 = use48
    if use48:
        taskfile.lba = hob_lbah << 40 | hob_lbam << 32 | hob_lbal << 24 | low
    else:
        taskfile.lba = (device & 0x0F) << 24 | low
    tail = text[match.end():]
    tag = _TAIL_TAG.search(tail)
    if tag:
        taskfile.tag = int(tag.group(1))
    transfer = _TAIL_TRANSFER.search(tail)
    if transfer:
        taskfile.protocol = " ".join(p for p in transfer.group(1, 2) if p) or None
        taskfile.transfer_bytes = int(transfer.group(3))
        taskfile.direction = transfer.group(4)
    emask = _TAIL_EMASK.search(tail)
    if emask:
        taskfile.emask = int(emask.group(1), 16)
        taskfile.emask_names = emask_names(taskfile.emask)
        taskfile.emask_text = emask.group(2)
    return taskfile
