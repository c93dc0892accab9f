"""Names SAN and virtual-disk drivers print, in the form the rest of diagdisk uses.

Fibre Channel port names come as 50:06:01:60:3e:a0:12:34 (lpfc, bfa), 500601603ea01234 or
0x500601603ea01234 (ibmvfc, sysfs): one spelling, sysfs' port_name (0x and 16 hex digits), lets a
log line meet /sys/class/fc_remote_ports. qla2xxx and qla4xxx name a command's device as
host:id:lun ("scsi(10:0:1)", "nexus=10:0:1"), without the channel the H:C:T:L of the midlayer has,
or with it ("scsi(10:0:0:1)", 2.6.9). iSCSI connections are "connection<session>:<cid>".

Sample input::

    >>> wwpn("50:06:01:60:3E:A0:12:34")
    '0x500601603ea01234'
    >>> nexus_fields("scsi(10:0:1)")
    {'host': 10, 'target': 0, 'lun': 1}
    >>> iscsi_connection_fields("connection2:0")
    {'iscsi_conn': '2:0', 'iscsi_session': 2}
"""

from __future__ import annotations

import re

from . import DecodeError

_HEX_WWN = re.compile(r"(?:0x)?([0-9a-fA-F]{1,16})")
_NEXUS = re.compile(r"(\d+):(\d+)(?::(\d+))?(?::(\d+))?")


def wwpn(text: str) -> str | None:
    """A world wide port name in sysfs' spelling; None for 0 (ibmvfc prints 0 when it has none)."""
    digits = text.strip().replace(":", "")
    m = _HEX_WWN.fullmatch(digits)
    if m is None:
        raise DecodeError(f"not a world wide name: {text!r}")
    value = int(m[1], 16)
    return f"0x{value:016x}" if value else None


def nexus_fields(text: str) -> dict:
    """host:id:lun (qla2xxx, qla4xxx, 2.6.18 on), host:channel:id:lun (2.6.9) or host:id (a 6.x
    target reset), wherever it sits in the text: scsi(10:0:1), nexus=10:0:1, scsi6:0:1."""
    m = _NEXUS.search(text)
    if m is None:
        raise DecodeError(f"no host:id:lun in {text!r}")
    numbers = [int(x) for x in m.groups() if x is not None]
    if len(numbers) == 4:
        host, channel, target, lun = numbers
        return {"hctl": f"{host}:{channel}:{target}:{lun}", "host": host, "channel": channel,
                "target": target, "lun": lun}
    return dict(zip(("host", "target", "lun"), numbers))


def ql_log_fields(text: str) -> dict:
    """qla2xxx's ql_log prefix "qla2xxx [0000:05:00.0]-500b:10:" (ql_log_pci: "-001d: :", no host)."""
    m = re.match(r"(\w+) \[([0-9a-fA-F:.]+)\]-([0-9a-fA-F]{4}):(\d+)?", text)
    if m is None:
        raise DecodeError(f"not a qla2xxx message prefix: {text!r}")
    fields = {"driver": m[1], "msg_id": m[3].lower()}
    if m[2] != "0000:00:00.0":  # what ql_dbg_prefix prints when the message has no PCI device
        fields["pci"] = m[2].lower()
    if m[4]:
        fields["host"] = int(m[4])
    return fields


def target_lun_fields(text: str) -> dict:
    """The target and LUN a driver prints as a pair: "(0, 1)", "ID 0 LUN 1", "TGT 0 LUN 1"."""
    numbers = [int(x) for x in re.findall(r"\d+", text)]
    if len(numbers) != 2:
        raise DecodeError(f"no target and LUN in {text!r}")
    return {"target": numbers[0], "lun": numbers[1]}


def iscsi_connection_fields(text: str) -> dict:
    """connection2:0 -> the connection (session:cid) and its session."""
    m = re.search(r"connection(\d+):(\d+)", text)
    if m is None:
        raise DecodeError(f"not an iSCSI connection: {text!r}")
    return {"iscsi_conn": f"{m[1]}:{m[2]}", "iscsi_session": int(m[1])}


def iscsi_session_fields(text: str) -> dict:
    m = re.search(r"session(\d+)", text)
    if m is None:
        raise DecodeError(f"not an iSCSI session: {text!r}")
    return {"iscsi_session": int(m[1])}


# Hyper-V's SCSI request block status (storvsc_drv.c SRB_STATUS_*): the low six bits, then flags
_SRB_STATUS = {0x00: "PENDING", 0x01: "SUCCESS", 0x02: "ABORTED", 0x04: "ERROR", 0x06: "INVALID_REQUEST",
               0x09: "TIMEOUT", 0x0A: "SELECTION_TIMEOUT", 0x0E: "BUS_RESET", 0x12: "DATA_OVERRUN",
               0x20: "INVALID_LUN", 0x30: "INTERNAL_ERROR"}


def srb_status_text(value: int) -> str:
    """0x84 -> 'SRB_STATUS_ERROR, autosense valid'."""
    name = _SRB_STATUS.get(value & 0x3F, f"0x{value & 0x3F:02x}")
    flags = [text for bit, text in ((0x80, "autosense valid"), (0x40, "queue frozen")) if value & bit]
    return ", ".join([f"SRB_STATUS_{name}" if not name.startswith("0x") else f"SRB status {name}"] + flags)


def scsi_status_name(value: int) -> str | None:
    from .result import scsi_status_name as name_of
    return name_of(value)


# the level a reset handler names -> the event detail of the SCSI error handler's reset
RESET_LEVEL_DETAIL = {"DEVICE": "device", "LUN": "device", "TARGET": "target", "BUS": "bus",
                      "LOOP": "bus", "ADAPTER": "host", "HOST": "host"}


def reset_detail(text: str) -> dict:
    """DEVICE RESET ISSUED -> device, TARGET RESET FAILED -> target_failed."""
    words = text.upper().split()
    level = RESET_LEVEL_DETAIL.get(words[0]) if words else None
    if level is None:
        raise DecodeError(f"not a reset: {text!r}")
    return {"detail": f"{level}_failed" if "FAILED" in words else level}
