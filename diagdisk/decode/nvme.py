"""NVMe completion status (status code type / status code) and SMART critical warning bits,
named as in the NVM Express Base Specification 2.0 (figures "Status Code - Generic Command
Status Values", "... Command Specific ...", "... Media and Data Integrity Errors ...",
"... Path Related ...") and the SMART / Health Information log page.
"""

from __future__ import annotations

import re
from typing import Any

from diagdisk.decode import DecodeError

STATUS_CODE_TYPES = {
    0x0: "Generic Command Status", 0x1: "Command Specific Status",
    0x2: "Media and Data Integrity Errors", 0x3: "Path Related Status",
    0x7: "Vendor Specific",
}
STATUS_NAMES: dict[tuple[int, int], str] = {
    (0x0, 0x00): "Successful Completion", (0x0, 0x01): "Invalid Command Opcode",
    (0x0, 0x02): "Invalid Field in Command", (0x0, 0x03): "Command ID Conflict",
    (0x0, 0x04): "Data Transfer Error",
    (0x0, 0x05): "Commands Aborted due to Power Loss Notification",
    (0x0, 0x06): "Internal Error", (0x0, 0x07): "Command Abort Requested",
    (0x0, 0x08): "Command Aborted due to SQ Deletion",
    (0x0, 0x09): "Command Aborted due to Failed Fused Command",
    (0x0, 0x0A): "Command Aborted due to Missing Fused Command",
    (0x0, 0x0B): "Invalid Namespace or Format", (0x0, 0x0C): "Command Sequence Error",
    (0x0, 0x0D): "Invalid SGL Segment Descriptor", (0x0, 0x0E): "Invalid Number of SGL Descriptors",
    (0x0, 0x0F): "Data SGL Length Invalid", (0x0, 0x10): "Metadata SGL Length Invalid",
    (0x0, 0x11): "SGL Descriptor Type Invalid",
    (0x0, 0x12): "Invalid Use of Controller Memory Buffer", (0x0, 0x13): "PRP Offset Invalid",
    (0x0, 0x14): "Atomic Write Unit Exceeded", (0x0, 0x15): "Operation Denied",
    (0x0, 0x16): "SGL Offset Invalid", (0x0, 0x18): "Host Identifier Inconsistent Format",
    (0x0, 0x19): "Keep Alive Timer Expired", (0x0, 0x1A): "Keep Alive Timeout Invalid",
    (0x0, 0x1B): "Command Aborted due to Preempt and Abort", (0x0, 0x1C): "Sanitize Failed",
    (0x0, 0x1D): "Sanitize In Progress", (0x0, 0x1E): "SGL Data Block Granularity Invalid",
    (0x0, 0x1F): "Command Not Supported for Queue in CMB",
    (0x0, 0x20): "Namespace is Write Protected", (0x0, 0x21): "Command Interrupted",
    (0x0, 0x22): "Transient Transport Error",
    (0x0, 0x23): "Command Prohibited by Command and Feature Lockdown",
    (0x0, 0x24): "Admin Command Media Not Ready",
    (0x0, 0x80): "LBA Out of Range", (0x0, 0x81): "Capacity Exceeded",
    (0x0, 0x82): "Namespace Not Ready", (0x0, 0x83): "Reservation Conflict",
    (0x0, 0x84): "Format In Progress",
    (0x1, 0x00): "Completion Queue Invalid", (0x1, 0x01): "Invalid Queue Identifier",
    (0x1, 0x02): "Invalid Queue Size", (0x1, 0x03): "Abort Command Limit Exceeded",
    (0x1, 0x05): "Asynchronous Event Request Limit Exceeded",
    (0x1, 0x06): "Invalid Firmware Slot", (0x1, 0x07): "Invalid Firmware Image",
    (0x1, 0x08): "Invalid Interrupt Vector", (0x1, 0x09): "Invalid Log Page",
    (0x1, 0x0A): "Invalid Format", (0x1, 0x0B): "Firmware Activation Requires Conventional Reset",
    (0x1, 0x0C): "Invalid Queue Deletion", (0x1, 0x0D): "Feature Identifier Not Saveable",
    (0x1, 0x0E): "Feature Not Changeable", (0x1, 0x0F): "Feature Not Namespace Specific",
    (0x1, 0x10): "Firmware Activation Requires NVM Subsystem Reset",
    (0x1, 0x11): "Firmware Activation Requires Controller Level Reset",
    (0x1, 0x12): "Firmware Activation Requires Maximum Time Violation",
    (0x1, 0x13): "Firmware Activation Prohibited", (0x1, 0x14): "Overlapping Range",
    (0x1, 0x15): "Namespace Insufficient Capacity",
    (0x1, 0x16): "Namespace Identifier Unavailable", (0x1, 0x18): "Namespace Already Attached",
    (0x1, 0x19): "Namespace Is Private", (0x1, 0x1A): "Namespace Not Attached",
    (0x1, 0x1B): "Thin Provisioning Not Supported", (0x1, 0x1C): "Controller List Invalid",
    (0x1, 0x1D): "Device Self-test In Progress", (0x1, 0x1E): "Boot Partition Write Prohibited",
    (0x1, 0x1F): "Invalid Controller Identifier",
    (0x1, 0x20): "Invalid Secondary Controller State",
    (0x1, 0x21): "Invalid Number of Controller Resources",
    (0x1, 0x22): "Invalid Resource Identifier",
    (0x1, 0x23): "Sanitize Prohibited While Persistent Memory Region is Enabled",
    (0x1, 0x24): "ANA Group Identifier Invalid", (0x1, 0x25): "ANA Attach Failed",
    (0x1, 0x80): "Conflicting Attributes", (0x1, 0x81): "Invalid Protection Information",
    (0x1, 0x82): "Attempted Write to Read Only Range", (0x1, 0x83): "Command Size Limit Exceeded",
    (0x1, 0xB8): "Zone Boundary Error", (0x1, 0xB9): "Zone Is Full",
    (0x1, 0xBA): "Zone Is Read Only", (0x1, 0xBB): "Zone Is Offline",
    (0x1, 0xBC): "Zone Invalid Write", (0x1, 0xBD): "Too Many Active Zones",
    (0x1, 0xBE): "Too Many Open Zones", (0x1, 0xBF): "Invalid Zone State Transition",
    (0x2, 0x80): "Write Fault", (0x2, 0x81): "Unrecovered Read Error",
    (0x2, 0x82): "End-to-end Guard Check Error",
    (0x2, 0x83): "End-to-end Application Tag Check Error",
    (0x2, 0x84): "End-to-end Reference Tag Check Error", (0x2, 0x85): "Compare Failure",
    (0x2, 0x86): "Access Denied", (0x2, 0x87): "Deallocated or Unwritten Logical Block",
    (0x3, 0x00): "Internal Path Error", (0x3, 0x01): "Asymmetric Access Persistent Loss",
    (0x3, 0x02): "Asymmetric Access Inaccessible", (0x3, 0x03): "Asymmetric Access Transition",
    (0x3, 0x60): "Controller Pathing Error", (0x3, 0x70): "Host Pathing Error",
    (0x3, 0x71): "Command Aborted By Host",
}
CRITICAL_WARNING_BITS = [
    (0x01, "available_spare_below_threshold"),
    (0x02, "temperature_threshold_exceeded"),
    (0x04, "reliability_degraded"),
    (0x08, "read_only"),
    (0x10, "volatile_memory_backup_failed"),
    (0x20, "persistent_memory_region_read_only"),
]


def nvme_status_name(sct: int, sc: int) -> str | None:
    """Name of an NVMe status (sct 0x2, sc 0x81 -> "Unrecovered Read Error"), None if unassigned."""
    name = STATUS_NAMES.get((sct, sc))
    if name:
        return name
    if sct == 0x7 or (sct in (0x0, 0x1, 0x2) and sc >= 0xC0):
        return "Vendor Specific"
    return None


def decode_nvme_status(status: int) -> dict[str, Any]:
    """Split the 15-bit Status Field (as Linux prints it, e.g. "status 0x4281") into its parts."""
    if isinstance(status, bool) or not isinstance(status, int) or not 0 <= status <= 0xFFFF:
        raise DecodeError(f"NVMe status must be a 16-bit integer, got {status!r}")
    sct, sc = status >> 8 & 0x7, status & 0xFF
    return {
        "sct": sct, "sc": sc, "sct_name": STATUS_CODE_TYPES.get(sct, "Reserved"),
        "name": nvme_status_name(sct, sc), "crd": status >> 11 & 0x3,
        "more": bool(status & 0x2000), "dnr": bool(status & 0x4000),
    }


def critical_warning_names(byte: int) -> list[str]:
    """Names of the set bits of the SMART log's Critical Warning byte."""
    return [name for mask, name in CRITICAL_WARNING_BITS if byte & mask]


# "sct 0x2 / sc 0x81" (the kernel's nvme_log_error), "sct=2 sc=0x81", "SCT 2h SC 81h" (the spec's
# spelling), "2/81": the code type, then the code, in hex
_SCT_SC = re.compile(r"^\(?\s*(?:sct\s*[=:]?\s*)?(?:0x)?([0-7])h?\s*(?:/|,|\s)\s*(?:sc\s*[=:]?\s*)?(?:0x)?"
                     r"([0-9a-f]{1,2})h?\s*\)?(?:\s+(.*))?$", re.IGNORECASE)
# the whole Status Field as one number, as "status 0x4281" or "status: 0x281" prints it
_STATUS_FIELD = re.compile(r"^(?:status\s*[=:]?\s*)?(?:0x)?([0-9a-f]{1,4})h?$", re.IGNORECASE)
_FLAGS = {"dnr": "dnr", "more": "more"}


def parse_nvme_status(text: str) -> dict[str, Any]:
    """The NVMe status a person pastes: a Status Field ("0x4281", "status: 0x281") or a code type and
    a code ("sct 0x2 / sc 0x81", "sct=2 sc=0x81", "2/81", "SCT 2h SC 81h"), with "DNR" or "MORE"
    after them as the kernel prints them. DecodeError when it is none of these."""
    stripped = text.strip()
    pair = _SCT_SC.match(stripped)
    if pair is not None and not _STATUS_FIELD.match(stripped):
        flags = (pair[3] or "").lower().split()
        if any(flag not in _FLAGS for flag in flags):
            raise DecodeError(f"not an NVMe status: {text!r} (give 'sct 0x2 / sc 0x81' or a status like 0x4281)")
        sct, sc = int(pair[1], 16), int(pair[2], 16)
        status = sct << 8 | sc | (0x4000 if "dnr" in flags else 0) | (0x2000 if "more" in flags else 0)
        return decode_nvme_status(status)
    field = _STATUS_FIELD.match(stripped)
    if field is None:
        raise DecodeError(f"not an NVMe status: {text!r} (give 'sct 0x2 / sc 0x81' or a status like 0x4281)")
    return decode_nvme_status(int(field[1], 16) & 0x7FFF)


def describe_nvme_status(decoded: dict[str, Any]) -> str:
    """One line: "SCT 0x2 Media and Data Integrity Errors / SC 0x81 Unrecovered Read Error, DNR"."""
    name = decoded["name"] or "not assigned"
    text = f"SCT 0x{decoded['sct']:X} {decoded['sct_name']} / SC 0x{decoded['sc']:02X} {name}"
    flags = [label for label, on in (("DNR (do not retry)", decoded["dnr"]), ("MORE", decoded["more"])) if on]
    if decoded["crd"]:
        flags.append(f"CRD {decoded['crd']} (retry after Command Retry Delay Time {decoded['crd']})")
    return text + (", " + ", ".join(flags) if flags else "")
