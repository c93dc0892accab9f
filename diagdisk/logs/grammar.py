"""Kernel-message grammars: load grammars/*.lark, turn a message into an event dict.

Each grammar is LALR with the contextual lexer, built once per process (never lark's cache=True: it
loads a pickle from a predictable temp path). Terminal names name event fields, rule aliases name
event kinds (see diagdisk.logs.events). Storms repeat a few message shapes with different numbers, so
what one lark parse found is kept as a shape (see _Shape) that parses later messages of the same
shape with one regex match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Callable

import yaml
from lark import Lark, Token, Tree
from lark.exceptions import LarkError

from ..decode import adapters, devnames, drivers
from ..errors import DiagdiskError, NumberOutOfRange, bounded
from .events import EVENT_KINDS, split_alias
from ..larkbuild import build_lark
from ..resources import grammars_dir
from ..decode import san

# Order in which families are tried when several match a line: specific before generic.
# The SAN and virtual drivers' own grammars (fc, iscsi, virt) come before transport's generic
# controller lines and before topology, whose "scsi host2: <driver>" would otherwise take fnic's,
# be2iscsi's and xen-scsifront's "scsi host7: <text>" for a host's driver.
FAMILY_ORDER = ("scsi", "ata", "nvme", "md", "dm", "fs", "fc", "iscsi", "virt", "transport", "block", "topology")
# tried after every other family, whatever the keywords: a line of a known device no grammar reads
FALLBACK_FAMILY = "device"


# The widest field each number fills, as the kernel holds it: H:C:T:L host, channel and target are
# unsigned int, a LUN u64 (scsilun_to_int); sectors and LBAs are sector_t (u64) but are kept below
# 2^63, the widest integer the event table (int64 columns) holds; counts and indexes fit 32 bits.
U32 = 1 << 32
SECTOR_LIMIT = 1 << 63
LUN_LIMIT = 1 << 64


def _hex(text: str, limit: int = LUN_LIMIT, what: str = "hex number") -> int:
    return bounded(text.lower().removesuffix("h"), limit, what, 16)


def _u32(what: str) -> Callable[[str], int]:
    return lambda text: bounded(text, U32, what)


def _sense_key_from_text(text: str) -> int | None:
    from ..decode.sense import sense_key_from_name
    return sense_key_from_name(text.strip())


def _asc_ascq_from_text(text: str) -> tuple[int, int] | None:
    from ..decode.asc_ascq import lookup_description
    return lookup_description(text.strip())


def _host_byte_name(code: int) -> str | None:
    from ..decode.result import HOST_BYTE_NAMES
    return HOST_BYTE_NAMES.get(code)


def _driver_byte_name(code: int) -> str | None:
    from ..decode.result import DRIVER_BYTE_NAMES
    return DRIVER_BYTE_NAMES.get(code & 0x0F)


def _scsi_status_name(code: int) -> str | None:
    from ..decode.result import scsi_status_name
    return scsi_status_name(code)


def _result_fields(code: int) -> dict:
    """A SCSI result word and what its bytes say, as the result's own line tells them: the origin
    of the event depends on the host and driver bytes before any report is stitched."""
    from ..decode.result import decode_result
    if not 0 <= code <= 0xFFFFFFFF:
        return {"result": code}
    decoded = decode_result(code)
    return {"result": code, "host_byte": decoded.host_byte_name, "driver_byte": decoded.driver_byte_name,
            "status": decoded.status_name}


def _ata_command_name(code: int) -> str | None:
    from ..decode.ata import ATA_COMMAND_NAMES
    return ATA_COMMAND_NAMES.get(code)


# A USB hub names a port of its own by the hub's interface and the port's number, far apart in the
# message ("hub 2-0:1.0: cannot reset port 3"); their converters leave them under these keys and
# the port's path is made of both: 2-3 on a root hub, 1-1.4 on the hub at 1-1.
_USB_HUB, _USB_HUB_PORT = "_usb_hub", "_usb_hub_port"


def _join_usb_port(event: dict) -> None:
    hub = event.pop(_USB_HUB)
    port = event.pop(_USB_HUB_PORT, None)
    bus, _, path = hub.partition("-")
    if port is not None:
        event.setdefault("usb_port", f"{bus}-{port}" if path == "0" else f"{hub}.{port}")
    elif path != "0":
        event.setdefault("usb_port", hub)


def _usb_port_device(text: str) -> str:
    hub, _, port = text.rpartition("-port")
    return f"{hub.removeprefix('usb')}-{port}" if hub.startswith("usb") else f"{hub}.{port}"


def _hctl_fields(text: str) -> dict:
    parts = text.split(":")
    host, channel, target = (bounded(part, U32, f"H:C:T:L {name}") for part, name in
                             zip(parts[:3], ("host", "channel", "target")))
    lun = bounded(parts[3], LUN_LIMIT, "H:C:T:L lun")
    return {"hctl": f"{host}:{channel}:{target}:{lun}", "host": host, "channel": channel,
            "target": target, "lun": lun}


def _aic_hctl_fields(text: str) -> dict:
    """aic7xxx 'scsi0:A:4:0' / 'scsi0:0:4:0': host, channel (letter A = 0), target, lun."""
    host, channel, target, lun = text.removeprefix("scsi").split(":")
    channel_number = ord(channel) - ord("A") if channel.isalpha() else bounded(channel, U32, "channel")
    return _hctl_fields(f"{host}:{channel_number}:{target}:{lun}")


def _majmin(text: str, hex_numbers: bool) -> str:
    # a major or minor past 32 bits is no device number (dev_t holds both in 32 bits)
    for number in re.split(r"[:,]", text.strip("()")):
        bounded(number, U32, "device number", 16 if hex_numbers else 10)
    return devnames.parse_majmin(text, hex_numbers=hex_numbers)


def _blockdev_fields(text: str) -> dict:
    disk = devnames.disk_of(text)
    fields = {"device": disk}
    if disk != text:
        fields["partition"] = text
    return fields


def _ata_link_fields(text: str) -> dict:
    port = text.split(".")[0]
    fields = {"ata_port": port}
    if "." in text:
        fields["ata_link"] = text
    return fields


def _vendor_model_rev(text: str) -> dict:
    """'SEAGATE  ST373307LC       0007' (scsi_device vendor %.8s, model %.16s, rev %.4s)."""
    if len(text) >= 30 and text[8] == " " and text[25] == " ":
        vendor, model, rev = text[:8], text[9:25], text[26:30]
    else:
        parts = text.split()
        vendor, model, rev = (parts[0] if parts else None,
                              " ".join(parts[1:-1]) or None, parts[-1] if len(parts) > 1 else None)
    return {"vendor": (vendor or "").strip() or None, "model": (model or "").strip() or None,
            "revision": (rev or "").strip() or None}


def _bits(text: str) -> str:
    return " ".join(text.replace("{", " ").replace("}", " ").split())


# The long register bit names of 2.6.9 libata's ata_dump_status and of the IDE driver, as libata's
# error handler prints them since 2.6.19 ("status: { DRDY ERR }", "error: { UNC }").
_ATA_STATUS_NAMES = {"Busy": "Busy", "DriveReady": "DRDY", "DeviceFault": "DF", "SeekComplete": "DSC",
                     "DataRequest": "DRQ", "CorrectedError": "CORR", "Index": "IDX", "Sense": "SENSE",
                     "Error": "ERR"}
_ATA_ERROR_NAMES = {"DriveStatusError": "ABRT", "BadCRC": "ICRC", "BadSector": "BBK", "Sector": "BBK",
                    "UncorrectableError": "UNC", "SectorIdNotFound": "IDNF", "TrackZeroNotFound": "TK0NF",
                    "AddrMarkNotFound": "AMNF", "MediaChangeRequested": "MCR", "AbortedCommand": "ABRT",
                    "EndOfMedia": "EOM", "IllegalLengthIndication": "ILI"}


def _serror_names(value: int) -> str | None:
    from ..decode.ata import serror_names
    return " ".join(serror_names(value)) or None


def _register_names(text: str, names: dict[str, str]) -> str:
    return " ".join(names.get(name, name) for name in _bits(text).split())


_BLOCKDEV_NAME = re.compile(r"(?:sd[a-z]+|hd[a-z]|vd[a-z]+|xvd[a-z]+)\d*|nvme\d+(?:c\d+)?n\d+(?:p\d+)?|mmcblk\d+(?:p\d+)?"
                            r"|sr\d+|st\d+|md\d+(?:p\d+)?|dm-\d+|loop\d+|nbd\d+|rbd\d+")


def _named_blockdev(name: str) -> dict:
    return _blockdev_fields(name) if _BLOCKDEV_NAME.fullmatch(name) else {}


_PCI_FUNCTION = re.compile(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")


def _device_prefix_fields(terminal: str, text: str) -> dict:
    """The identity a storage device prefix shows (grammars/device.lark), whatever the body says."""
    text = text.rstrip(":").strip()
    if terminal == "DEV_SCSI":
        m = re.match(r"(\S+) (\d+:\d+:\d+:\d+):?(?: \[([a-z0-9]+)\])?", text)
        fields = _hctl_fields(m[2])
        if m[3]:
            fields.update(_named_blockdev(m[3]))
        return fields
    if terminal == "DEV_SCSI_HOST":
        return {"host": int(re.search(r"\d+", text)[0])}
    if terminal == "DEV_ATA":
        return _ata_link_fields(text)
    if terminal == "DEV_NVME":
        last = text.split()[-1]
        if re.fullmatch(r"nvme\d+", last):
            return {"nvme_ctrl": last}
        if ":" in last:
            return {"pci": last, "driver": "nvme"}
        return {**_named_blockdev(last), "nvme_ctrl": re.sub(r"(?:c\d+)?n\d+$", "", last)}
    if terminal == "DEV_MD":
        return {"md": re.search(r"md\d+$", text)[0]}
    if terminal == "DEV_USB":
        driver, address = text.split(" ", 1)
        return {"driver": driver, "usb_port": address.split(":")[0]}
    if terminal == "DEV_PCI":
        driver, place = text.split(" ", 1)
        if _PCI_FUNCTION.fullmatch(place):
            return {"driver": drivers.module_name(driver), "pci": place}
        return {"driver": drivers.module_name(driver), "adapter": place}
    if terminal == "DEV_IDE":
        return {"device": text}
    if terminal == "DEV_FS":
        name = re.search(r"\((?:device )?([a-z0-9-]+)", text)[1]
        return _named_blockdev(name) or {"text": name}
    return _adapter_prefix_fields(text)


def _adapter_prefix_fields(text: str) -> dict:
    """Adapters and transports that print their own name (grammars/device.lark DEV_ADAPTER)."""
    m = re.fullmatch(r"qla2xxx \[([0-9a-fA-F:.]+)\]-([0-9a-fA-F]{4}):(\d*)", text)
    if m:
        return {"driver": "qla2xxx", "pci": m[1], "msg_id": m[2].lower(), **({"host": int(m[3])} if m[3] else {})}
    m = re.fullmatch(r"connection(\d+):(\d+)", text)
    if m:
        return {"iscsi_conn": f"{m[1]}:{m[2]}", "iscsi_session": int(m[1])}
    m = re.fullmatch(r"session(\d+)", text)
    if m:
        return {"iscsi_session": int(m[1])}
    if text.startswith("rport-"):
        return {"rport": text, "host": int(text[6:].split(":")[0])}
    m = re.fullmatch(r"3w-(\w+): scsi(\d+)", text)
    if m:
        return {"driver": f"3w-{m[1]}", "host": int(m[2])}
    m = re.fullmatch(r"(mptbase|mptscsih|mptsas|mptspi|mptfc): (ioc\d+)", text)
    if m:
        return {"driver": m[1], "adapter": m[2]}
    m = re.fullmatch(r"(hv_storvsc|virtio_blk|vbd|ibmvscsi|ibmvfc) (\S+)", text)
    if m:
        driver = {"vbd": "xen-blkfront", "hv_storvsc": "storvsc"}.get(m[1], m[1])
        return {"driver": driver, "adapter": m[2]}
    if text.startswith("cciss/"):
        return {"driver": "cciss", "device": text}
    adapter = text.split(":")[0]
    driver = drivers.module_name(re.sub(r"(?:_cm)?\d+$", "", adapter).lower())
    if adapter.lower() == driver or drivers.module_name(adapter) == driver:
        return {"driver": driver}  # the driver names itself, not one of its adapters ("dc395x: ")
    return {"adapter": adapter, "driver": driver}


# lpfc's "<board>:[(<vport>):]<message number> <text>" (lpfc_printf_log/lpfc_printf_vlog): the number
# names the message whatever words a driver release gives it
_LPFC_MESSAGE = re.compile(r"\d+:(?:\(\d+\):)?(\d{4}) ")


def _body_fields(text: str) -> dict:
    """The text of a line no family grammar reads, and the number its driver gave the message."""
    m = _LPFC_MESSAGE.match(text)
    return {"text": text, "msg_id": m[1]} if m else {"text": text}


def _raw_sense_fields(data: list[int]) -> dict:
    """Sense bytes as 2.4's "Raw sense data:" printed them: the key, ASC and ASCQ where the
    response code (fixed 70h/71h, descriptor 72h/73h) puts them (SPC-4 4.5)."""
    fields: dict = {"sense_hex": " ".join(f"{b:02x}" for b in data)}
    code = data[0] & 0x7F if data else None
    if code in (0x70, 0x71) and len(data) > 2:
        fields["sense_key"] = data[2] & 0x0F
        if len(data) > 13:
            fields.update(asc=data[12], ascq=data[13])
    elif code in (0x72, 0x73) and len(data) > 3:
        fields.update(sense_key=data[1] & 0x0F, asc=data[2], ascq=data[3])
    if code in (0x71, 0x73):
        fields["deferred"] = True
    return fields


def _suppressing_source_fields(text: str) -> dict:
    """What a rate limiter names: a SCSI device's prefix ("sd 2:0:0:0") or a function's name."""
    m = re.fullmatch(r"(?:sd|sr|st|ses|sg|scsi) (\d+:\d+:\d+:\d+)", text)
    return _hctl_fields(m[1]) if m else {"text": text}


def _daemon_device_fields(text: str) -> dict:
    """A disk as a daemon names it: "/dev/sda [SAT]" (smartd), "/dev/sdb1" (mdadm), "/dev/nvme0";
    any other text ("/dev/bus/0 [megaraid_disk_00]", "mismatches found: 128") is kept as text."""
    name = text.split(" ", 1)[0].removeprefix("/dev/")
    if re.fullmatch(r"nvme\d+", name):
        return {"nvme_ctrl": name}
    return _named_blockdev(name) or {"text": text}


def _zed_field(text: str) -> dict:
    """zed's key=value fields: the vdev's disk (vdev_path) and the pool (pool, pool_guid)."""
    key, _, value = text.partition("=")
    if key == "vdev_path":
        return _daemon_device_fields(value) if value.startswith("/dev/") and "/" not in value[5:] else {"text": value}
    if key in ("pool", "pool_guid"):
        return {"text": value.strip("'")}
    return {}


# terminal name -> function(token text) -> dict of event fields
CONVERTERS: dict[str, Callable[[str], dict]] = {
    "HCTL": _hctl_fields,
    "HOSTNUM": lambda t: {"host": bounded(t, U32, "host")},
    "CHANNEL": lambda t: {"channel": bounded(t, U32, "channel")},
    "TARGET": lambda t: {"target": bounded(t, U32, "target")},
    "LUN": lambda t: {"lun": bounded(t, LUN_LIMIT, "lun")},
    "SCSIHOST": lambda t: {"host": bounded(t.removeprefix("scsi").removeprefix("host"), U32, "host")},
    "SCSIHOST__SPACED": lambda t: {"host": bounded(t.removeprefix("scsi").removesuffix(":"), U32, "host")},
    "BLOCKDEV": _blockdev_fields,
    "MAJMIN__HEX": lambda t: {"majmin": _majmin(t, hex_numbers=True)},
    "MAJMIN": lambda t: {"majmin": _majmin(t, hex_numbers=False)},
    "SECTOR": lambda t: {"sector": bounded(t, SECTOR_LIMIT, "sector")},
    "SECTOR__HEX": lambda t: {"sector": _hex(t, SECTOR_LIMIT, "sector")},
    "TAG": lambda t: {"tag": bounded(t, U32, "tag")},
    "SENSE_KEY": lambda t: {"sense_key": _sense_key_from_text(t)},
    "SENSE_KEY__H": lambda t: {"sense_key": _hex(t)},
    "ASC__HEX": lambda t: {"asc": _hex(t)},
    "ASC__H": lambda t: {"asc": _hex(t)},
    "ASCQ__H": lambda t: {"ascq": _hex(t)},
    "AIC_HCTL": lambda t: _aic_hctl_fields(t),
    "CURRENT_DEFERRED": lambda t: {"deferred": t == "Deferred"},
    "CDB_BYTES": lambda t: {"cdb_hex": " ".join(t.split())},
    "SENSE_BYTES": lambda t: {"sense_hex": " ".join(t.split())},
    "STATUS_NAME": lambda t: {"status": t},
    "ASCQ__HEX": lambda t: {"ascq": _hex(t)},
    "ASC_TEXT": lambda t: dict(zip(("asc", "ascq"), _asc_ascq_from_text(t) or ()), text=t.strip()),
    "DEFERRED": lambda t: {"deferred": t.strip("[]").lower() == "deferred"},
    "FRU__HEX": lambda t: {"fru_code": _hex(t)},
    "HOST_BYTE": lambda t: {"host_byte": t},
    "DRIVER_BYTE": lambda t: {"driver_byte": t},
    "HOST_BYTE__HEX": lambda t: {"host_byte_code": _hex(t), "host_byte": _host_byte_name(_hex(t))},
    "DRIVER_BYTE__HEX": lambda t: {"driver_byte_code": _hex(t), "driver_byte": _driver_byte_name(_hex(t))},
    "RESULT__HEX": lambda t: _result_fields(_hex(t)),
    "OPCODE__HEX": lambda t: {"opcode": _hex(t)},
    "CDB_NAME": lambda t: {"op": t.split("(")[0].strip().upper(), "cdb_name": t},
    "OP": lambda t: {"op": t.upper()},
    "BLK_STATUS": lambda t: {"text": t},
    "ATA_LINK": _ata_link_fields,
    "ATA_STATUS": lambda t: {"ata_status": _bits(t)},
    "ATA_ERROR": lambda t: {"ata_error": _bits(t)},
    "SERROR": lambda t: {"serror": _bits(t)},
    "EMASK__HEX": lambda t: {"emask": _hex(t)},
    "ATA_COMMAND": lambda t: {"ata_command": t.strip()},
    "TASKFILE": lambda t: {"taskfile": t},
    "LINK_SPEED": lambda t: {"link_speed": t},
    "NVME_CTRL": lambda t: {"nvme_ctrl": t},
    "NVME_STATUS": lambda t: {"nvme_status": t.strip()},
    "SCT__HEX": lambda t: {"sct": _hex(t)},
    "SC__HEX": lambda t: {"sc": _hex(t)},
    "QID": lambda t: {"qid": bounded(t, U32, "queue id")},
    "MD": lambda t: {"md": t},
    "MD_LEVEL": lambda t: {"md_level": t},
    "DEVICES_LEFT": lambda t: {"md_devices_left": bounded(t, U32, "device count")},
    "RAID_DISKS": lambda t: {"md_raid_disks": bounded(t, U32, "device count")},
    "OTHER_MIRROR": lambda t: {"md_other_mirror": t},
    "REDIRECTED_TO": lambda t: {"md_other_mirror": t},
    "CONF_LEVEL": lambda t: {"md_level": t.lower()},
    "DM": lambda t: {"dm": t},
    "PATH_MAJMIN": lambda t: {"path_majmin": t},
    "USB_PORT": lambda t: {"usb_port": t},
    "PCI": lambda t: {"pci": t},
    "DRIVER": lambda t: {"driver": t},
    "TEXT": lambda t: {"text": t.strip()},
    "VENDOR": lambda t: {"vendor": t.strip()},
    "MODEL": lambda t: {"model": t.strip()},
    "REVISION": lambda t: {"revision": t.strip()},
    "DEVTYPE": lambda t: {"devtype": t.strip()},
    "WO": lambda t: {"md_write_only": bounded(t, U32, "md write-only flag")},
    "ONLINE": lambda t: {"md_online": bounded(t, U32, "md online flag")},
    "SLOT": lambda t: {"md_slot": bounded(t, U32, "md slot")},
    "COUNT": lambda t: {"repeat": bounded(t, U32, "repeat count")},
    "VMR": lambda t: _vendor_model_rev(t),
    "RESET_LEVEL": lambda t: {"detail": t},
    "OUTCOME": lambda t: {"text": t},
    # storage device prefixes (grammars/device.lark): identity first, whatever the body says
    **{name: (lambda n: lambda t: _device_prefix_fields(n, t))(name)
       for name in ("DEV_SCSI", "DEV_SCSI_HOST", "DEV_ATA", "DEV_NVME", "DEV_MD", "DEV_USB", "DEV_PCI",
                    "DEV_ADAPTER", "DEV_IDE", "DEV_FS")},
    **dict.fromkeys(("BODY", "FAILED_RESET_TEXT", "ABORT_TEXT", "TIMEOUT_TEXT", "RESET_TEXT"), lambda t: _body_fields(t.strip())),
    # -- family converters below (one line each; keep names equal to the terminal) --
    # -- section: scsi, block, buffer heads --
    "TAPEDEV": lambda t: {"device": t},
    "CHANGER": lambda t: {"device": t},
    # messages that name the NOT READY condition instead of printing the sense key
    "SENSE_KEY__NOT_READY": lambda t: {"sense_key": 0x2},
    "SENSE_KEY__NOT_READY_OLD": lambda t: {"sense_key": 0x2},
    # "sns = 70  3": the third sense byte, whose low nibble is the key (the high bits are FMK/EOM/ILI)
    "SENSE_KEY__BYTE2": lambda t: {"sense_key": int(t, 16) & 0xF},
    "SENSE_BYTES__DESCRIPTOR": lambda t: {"sense_hex": " ".join(t.split())},
    "SENSE_BYTES__0X": lambda t: _raw_sense_fields([int(b, 16) for b in t.split()]),
    # 2.4 "scsi0 (0,1,0) : RESERVATION CONFLICT": channel, id, lun
    "CHANNEL_TARGET_LUN": lambda t: dict(zip(("channel", "target", "lun"), map(int, t.strip("()").split(",")))),
    # 2.4/2.6.9 sd "status=1, message=00, host=0, driver=08": status_byte() (status >> 1), host decimal
    "STATUS__HEX": lambda t: {"status": _scsi_status_name(int(t, 16) << 1)},
    "HOST_BYTE__DEC": lambda t: {"host_byte_code": int(t), "host_byte": _host_byte_name(int(t))},
    "DRIVER_BYTE__HEX2": lambda t: {"driver_byte_code": int(t, 16), "driver_byte": _driver_byte_name(int(t, 16))},
    # 2.4 kdevname after the device class: "sd08:10" is major 8, minor 16
    "KDEVNAME": lambda t: {"majmin": devnames.parse_majmin(re.sub(r"^[a-z]+", "", t), hex_numbers=True)},
    # transport classes: "scsi target0:0:3", "scsi(0:0:3:0)", " session3", " connection3:0", libsas
    "STARGET": lambda t: dict(zip(("host", "channel", "target"), map(int, t.removeprefix("target").split(":")))),
    "SPI_HCTL": lambda t: _hctl_fields(t.removeprefix("scsi").strip("()")),
    "ISCSI_SESSION__NAMED": lambda t: {"iscsi_session": int(t.removeprefix("session"))},
    "ISCSI_CONN__NAMED": lambda t: {"iscsi_conn": t.removeprefix("connection")},
    "SAS_ADDRESS__BARE": lambda t: {"sas_address": "0x" + t.lower()},
    "SAS_DEVICE": lambda t: {"text": t},
    "PHY__NAMED": lambda t: {"phy": int(t.removeprefix("phy"))},
    "ATA_PORT": lambda t: {"ata_port": t},
    "LUN__HEX": lambda t: {"lun": _hex(t)},
    # block layer: the task that ran past a device's end; a hung task "comm:pid" (comm may hold ':')
    "TASK_BEYOND_END": lambda t: {"text": t.rsplit(": attempt to access", 1)[0]},
    "TASK_PID": lambda t: {"text": t.rsplit(":", 1)[0]},
    "OLD_INQUIRY": lambda t: _vendor_model_rev(f"{t[8:16]} {t[25:41]} {t[48:52]}"),
    # -- section: ata, ide, usb --
    "ATA_DRIVER": lambda t: {"driver": t},
    # the exception line's SErr, named as the "SError: { ... }" line names it (older kernels print no such line)
    "SERROR__HEX": lambda t: {"serror": _serror_names(_hex(t))},
    "EMASK__BARE": lambda t: {"emask": int(t, 16)},
    # "{ DriveReady SeekComplete Error }" (ata_dump_status, IDE): named as libata's EH names them
    "ATA_STATUS__NAMES": lambda t: {"ata_status": _register_names(t, _ATA_STATUS_NAMES)},
    "ATA_ERROR__NAMES": lambda t: {"ata_error": _register_names(t, _ATA_ERROR_NAMES)},
    "ATA_OPCODE__HEX": lambda t: {"opcode": _hex(t), "ata_command": _ata_command_name(_hex(t))},
    "HCD_DRIVER": lambda t: {"driver": t},
    "HCD_NAME": lambda t: {"driver": t},
    "USB_STORAGE": lambda t: {"driver": t},
    "USB_DEVICE": lambda t: {"usb_port": t},
    # a hub's port device: "usb2-port3" (root hub of bus 2) is 2-3, "1-1-port4" is 1-1.4
    "USB_PORT_DEVICE": lambda t: {"usb_port": _usb_port_device(t)},
    # "usb-storage 2-1:1.0": an interface (configuration 1, interface 0) of the device at 2-1
    "USB_INTERFACE": lambda t: {"usb_port": t.split(":")[0]},
    "USB_HUB": lambda t: {_USB_HUB: t.split(":")[0]},
    "HUB_PORT": lambda t: {_USB_HUB_PORT: int(t)},
    # IDE: "ide0" is the channel (hwif), "dma_intr:" what the driver was doing, "ST380011A, ATA DISK drive"
    "IDE_HWIF": lambda t: {"adapter": t},
    "IDE_CONTEXT": lambda t: {"text": t.rstrip(":")},
    "IDE_IDENTITY": lambda t: {"model": t.rsplit(",", 1)[0].strip()},
    # -- section: nvme, pci/aer, md, dm, fs --
    # a filesystem's or a dm target's block device: its disk, and the map or array it is when stacked
    "DEVNAME": lambda t: {**_blockdev_fields(t), **({"dm": t} if t.startswith("dm-") else {"md": devnames.disk_of(t)} if t.startswith("md") else {})},
    # AER severities: 6.x says "Correctable"/"Uncorrectable" for what 2.6 to 5.x call "Corrected"/"Uncorrected"
    "AER_CORRECTED": lambda t: {"aer_severity": "Corrected"},
    "AER_NONFATAL": lambda t: {"aer_severity": "Uncorrected (Non-Fatal)"},
    "AER_FATAL": lambda t: {"aer_severity": "Uncorrected (Fatal)"},
    "AER_TYPE": lambda t: {"aer_type": t},
    "INACCESSIBLE": lambda t: {"aer_type": "Inaccessible"},
    "AER_AGENT": lambda t: {"aer_agent": t.lower()},
    # 2.6.32/3.10 name the source by its requester id, bus << 8 | devfn, without the PCI domain
    "AER_AGENT__ID": lambda t: {"aer_agent": f"{int(t, 16) >> 8:02x}:{int(t, 16) >> 3 & 0x1f:02x}.{int(t, 16) & 7}"},
    "AER_AGENT__BDF": lambda t: (lambda bus, dev, fn: {"aer_agent": f"{bus.lower()}:{dev.lower()}.{int(fn, 16)}"})(*re.findall(r"=([0-9a-fA-F]{2})h", t)),
    "AER_STATUS": lambda t: {"aer_status": t},
    # pciehp "Slot(N)": the slot's physical name, a number on most boards
    "HOTPLUG_SLOT": lambda t: {"text": t, "slot": int(t[5:-1]) if t[5:-1].isdigit() else None},
    # btrfs messages read as one token: the member they name after /dev/, as a DEVNAME
    **dict.fromkeys(("DEVICE__DEV_STATS", "DEVICE__IO_ERROR_AT", "DEVICE__LOST_PAGE_WRITE", "DEVICE__FIXED_UP", "DEVICE__UNFIXABLE"), lambda t: CONVERTERS["DEVNAME"](re.search(r"/dev/([^\s,()]+)", t)[1])),
    # ext "Directory index full" warnings: the whole warning is the text, as other warnings keep theirs
    "DIRECTORY_INDEX_FULL": lambda t: {"text": t},
    # -- section: sas/raid adapters, parallel scsi --
    "IOC": lambda t: {"adapter": t},
    "ADAPTER": lambda t: {"adapter": t.strip("()")},
    "FUSION_MODULE": lambda t: {"driver": t},
    "LOGINFO__HEX": lambda t: {"loginfo": _hex(t)},
    "LOGINFO_TEXT": lambda t: {"text": t.strip()},
    "RAID_ACTION_TEXT": lambda t: {"text": t.strip()},
    "FW_TEXT": lambda t: {"text": t.strip()},
    "PAREN_TEXT": lambda t: {"text": t.strip()},
    "FAULT_CODE__HEX": lambda t: {"fault_code": _hex(t)},
    "FAULT_CODE__H": lambda t: {"fault_code": _hex(t)},
    "IOC_STATE__HEX": lambda t: adapters.mpi_ioc_state_fields(_hex(t)),
    "SAS_ADDRESS": lambda t: {"sas_address": adapters.sas_address(t)},
    "ENCLOSURE_ID": lambda t: {"enclosure_id": t.lower()},
    "ENCL_SLOT": lambda t: {"slot": int(t)},
    "PHY": lambda t: {"phy": int(t)},
    "PHY__HEX": lambda t: {"phy": _hex(t) if t.lower().startswith("0x") else int(t)},
    "PORT": lambda t: {"port": t},
    "STARGET": lambda t: dict(zip(("host", "channel", "target"), map(int, t.removeprefix("target").split(":")))),
    "END_DEVICE": lambda t: {"host": int(t.removeprefix("end_device-").split(":")[0])},
    "CHIP": lambda t: {"model": t.rstrip(":").strip()},
    "SENSE_KEY__HEX": lambda t: {"sense_key": _hex(t)},
    # an adapter relaying a drive's SMART trip: ASC 5Dh/00h, failure prediction threshold exceeded
    **{name: (lambda t: {"asc": 0x5D, "ascq": 0x00}) for name in ("PREDICTED_FAULT", "TWX_PREDICTED_FAULT")},
    "MEGASAS_DRIVER": lambda t: {"driver": "megaraid_sas"},
    "LEGACY_DRIVER": lambda t: {"driver": "megaraid"},
    "MEGARAID_PREFIX": lambda t: {"driver": "megaraid"},
    "HPSA_DRIVER": lambda t: {"driver": t},
    "CCISS_DRIVER": lambda t: {"driver": t},
    "CCISS_PREFIX": lambda t: {"driver": "cciss"},
    "HPSA_DEVICE": adapters.device_description_fields,
    "SENSE_BYTE2__HEX": lambda t: {"sense_key": _hex(t) & 0x0F},
    "AACRAID": lambda t: {"driver": "aacraid"},
    "AAC_NAME": lambda t: {"driver": "aacraid"},
    "AAC_INSTANCE": lambda t: {"driver": "aacraid", "adapter": t},
    "AAC_HCTL": lambda t: _hctl_fields(t.strip("()").replace(",", ":")),
    "IPS": lambda t: {"driver": "ips"},
    "PCI_ADDRESS": lambda t: {"pci": t},
    "EXPANDER_SAS_ADDR": lambda t: {"expander": "expander 0x" + t[len("sas_addr(0x"):-1].lower()},
    # "phy-4:0:10" / "port-4:0:3": a phy or port of expander-4:0, on SCSI host 4
    **{name: (lambda t: {"expander": "expander-" + ":".join(t.split("-", 1)[1].split(":")[:2]),
                         "host": bounded(t.split("-", 1)[1].split(":")[0], U32, "host")})
       for name in ("EXPANDER_PHY", "EXPANDER_PORT")},
    # "3:slot 0:func 0" (megasas 2.6): decimal bus, slot, function; the domain is the first one
    "BUS_SLOT_FUNC": lambda t: {"pci": "0000:{:02x}:{:02x}.{}".format(*(bounded(x, 256, "PCI bus/slot/function")
                                                                         for x in re.findall(r"\d+", t)))},
    "SMARTPQI": lambda t: {"driver": t},
    "PQI_HCTL": lambda t: _hctl_fields(t) if "-" not in t else dict(zip(("host", "channel"), map(int, t.split(":")[:2]))),
    "PQI_DEVICE": adapters.smartpqi_device_fields,
    "TW_DRIVER": lambda t: {"driver": t},
    "TWX_DRIVER": lambda t: {"driver": t},
    "TW_TEXT": adapters.threeware_event_fields,
    "TW_PORT": lambda t: {"port": t},
    "TW_UNIT": lambda t: {"target": int(t)},
    "TW_MODEL": lambda t: {"model": t},
    "TW_REVISION": lambda t: {"revision": t},
    "MVSAS": lambda t: {"driver": t},
    "MV_PHY": lambda t: {"phy": int(t.removeprefix("Phy"))},
    "MV_SOURCE_LINE": lambda t: {"driver": "mvsas"},
    "PM_ADAPTER": lambda t: {"driver": "pm80xx", "adapter": t.rstrip(":")},
    "PM_DRIVER": lambda t: {"driver": "pm80xx"},
    "ISCI": lambda t: {"driver": t},
    "ISCI_PHY": lambda t: {"phy": int(t.rsplit(":", 1)[1])},
    "ISCI_EVENT": lambda t: {"text": t.strip()},
    "AIC_PATH": adapters.aic_path_fields,
    "AIC_TARGET": lambda t: dict(zip(("host", "channel", "target"), (int(t.split(":")[0].removeprefix("scsi")), adapters.aic_channel(t.split(":")[1]), int(t.split(":")[2])))),
    "AIC_CHANNEL": lambda t: {"channel": adapters.aic_channel(t)},
    "AIC_CHANNEL_TARGET": lambda t: {"channel": adapters.aic_channel(t.split(":")[0]), "target": int(t.split(":")[1])},
    "BL_EXTERNAL_RESET": lambda t: {"driver": "BusLogic", "model": t.removeprefix("Resetting ").split(" due to ")[0]},
    "BL_INTERNAL_ERROR": lambda t: {"driver": "BusLogic", "model": t.removeprefix("Resetting ").split(" due to ")[0]},
    "BL_RESET_FAILED": lambda t: {"driver": "BusLogic", "model": t.removeprefix("Resetting ").removesuffix(" Failed")},
    "BL_FIRMWARE": lambda t: {"revision": t},
    "SYM_PATH": lambda t: {"driver": "sym53c8xx", **dict(zip(("adapter", "target", "lun"), [part if i == 0 else int(part) for i, part in enumerate(t.split(":"))]))},
    "SYM_CHIP": lambda t: {"model": t},
    "CDB_BYTES__0X": lambda t: {"cdb_hex": " ".join(f"{int(b, 16):02x}" for b in t.split())},
    "QLOGICISP": lambda t: {"driver": t},
    "PD_REF": adapters.megaraid_event_fields,
    "PD_RESET": adapters.megaraid_event_fields,
    "AEN_DETAIL": adapters.megaraid_event_fields,
    # states a controller's RAID firmware names: the member or volume state is the event's text
    **{name: (lambda t: {"text": t.strip()}) for name in (
        "PHYSDISK_LOST", "PHYSDISK_OK", "VOLUME_OK", "VOLUME_DEGRADED", "VOLUME_FAILED", "SPI_PARITY")},
    # -- section: fc, iscsi, virtual --
    # qla2xxx: 2.6.9's per-ISP modules (qla2300) are qla2xxx's; ql_log's "[pci]-msgid:host:" prefix
    "QLA_MODULE": lambda t: {"driver": "qla2xxx"},
    "QLA1280": lambda t: {"driver": "qla1280"},
    "QLA_LOG": san.ql_log_fields,
    "QLA_SCSI_NEXUS": san.nexus_fields,
    "QLA_NEXUS": san.nexus_fields,
    "QLA_RESET_ISSUED": san.reset_detail,
    "QLA_RESET_FAILED": san.reset_detail,
    "QLA_MBX1": lambda t: {"fault_code": _hex(t[5:].rstrip("h"))},
    "QLA_ISP_MODEL": lambda t: {"model": "ISP" + t.upper()},
    "QLA_MODEL": lambda t: {"model": t},
    "LPFC_DRIVER": lambda t: {"driver": "lpfc"},
    "BFA_DRIVER": lambda t: {"driver": "bfa"},
    "LPFC_MESSAGE": lambda t: {"msg_id": t[-4:]},
    "LPFC_TARGET": lambda t: {"target": int(t)},
    "LPFC_LUN": lambda t: {"lun": int(t)},
    "LPFC_TARGET_LUN": san.target_lun_fields,
    "LPFC_ID_LUN": san.target_lun_fields,
    "LPFC_TGT_LUN": san.target_lun_fields,
    "WWPN": lambda t: {"wwpn": san.wwpn(t)},
    # a bfa line's own port (the logical or base port), when it names a remote one too
    "BFA_WWN": lambda t: {"port": san.wwpn(t)},
    "FNIC_HOST": lambda t: {"host": int(t), "driver": "fnic"},
    "FNIC_PREFIX": lambda t: {"driver": "fnic"},
    "FCPIO_STATUS": lambda t: {"text": t.rstrip("]")},
    "FNIC_QUEUE": lambda t: {"text": t},
    "ISCSI_CONNECTION": san.iscsi_connection_fields,
    "ISCSI_SESSION": san.iscsi_session_fields,
    "ISCSI_ERROR_TEXT": lambda t: {"text": t},
    "BNX2I_PREFIX": lambda t: {"driver": "bnx2i"},
    "BNX2I_CONN_ERR": lambda t: {"driver": "bnx2i"},
    "BNX2I_TCP_ERRORS": lambda t: {"driver": "bnx2i"},
    "BNX2I_NAMED": lambda t: {"driver": "bnx2i"},
    "BNX2I_OFLD_TIMER": lambda t: {"driver": "bnx2i"},
    "BNX2I_NETDEV": lambda t: {"text": t},
    "BE2ISCSI_LOG": lambda t: {"driver": "be2iscsi"},
    "BE2ISCSI_UE_BIT": lambda t: {"text": t},
    "CXGBI_PREFIX": lambda t: {"driver": t.split(":")[0]},
    "QLA4XXX": lambda t: {"driver": "qla4xxx"},
    "QLA4XXX_NEXUS": san.nexus_fields,
    "QLA4XXX_SCSI_NEXUS": san.nexus_fields,
    "QLA4XXX_HOST_FUNCTION": lambda t: {"host": int(t[4:t.index(":")])},
    "QLA4XXX_TARGET": lambda t: dict(zip(("host", "channel", "target"), map(int, t.removeprefix("target").split(":")))),
    "QLA4XXX_FW_ERROR": lambda t: {"fault_code": _hex(t)},
    "QLA4XXX_MODEL": lambda t: {"model": "ISP" + t.upper()},
    "ISCSI_TARGET_NAME": lambda t: {"text": t},
    "VIRT_SCSI_DEVICE": lambda t: _device_prefix_fields("DEV_SCSI", t),
    "STORVSC_NAME": lambda t: {"driver": "storvsc"},
    "STORVSC_BARE": lambda t: {"driver": "storvsc"},
    "STORVSC_DEVICE": lambda t: {"driver": "storvsc", "adapter": t.split()[1].lower()},
    "SCSI_STATUS__HEX": lambda t: {"status": san.scsi_status_name(_hex(t))},
    "SRB_STATUS__HEX": lambda t: {"text": san.srb_status_text(_hex(t))},
    **{name: (lambda t: {"driver": "vmw_pvscsi"}) for name in (
        "PVSCSI_TASK_ABORT", "PVSCSI_ABORT_FAILED", "PVSCSI_FORCED_RESET", "PVSCSI_HOST_RESET", "PVSCSI_BUS_RESET",
        "PVSCSI_DEVICE_RESET", "PVSCSI_RING_FULL", "PVSCSI_MESSAGE")},
    "PVSCSI_DEVICE": lambda t: {"driver": "vmw_pvscsi", "pci": t.split()[1]},
    **{name: (lambda t: {"driver": "virtio_scsi"}) for name in (
        "VIRTIO_SCSI_ABORT", "VIRTIO_SCSI_DEVICE_RESET", "VIRTIO_SCSI_UNKNOWN_RESPONSE", "VIRTIO_SCSI_NOT_FOUND")},
    "VIRTIO_DEVICE": lambda t: dict(zip(("driver", "adapter"), t.split())),
    **{name: (lambda t: {"driver": "ibmvscsi"}) for name in ("IBMVSCSI_ABORTING", "IBMVSCSI_RESETTING", "IBMVSCSI_SEND_FAILED", "IBMVSCSI_BARE")},
    **{name: (lambda t: {"driver": "ibmvfc"}) for name in ("IBMVFC_COMMAND", "IBMVFC_LUN_RESET_FAILED", "IBMVFC_TARGET_RESET_FAILED", "IBMVFC_ABORT_FAILED")},
    "IBMVFC_STATUS": lambda t: {"text": t},
    "IBMV_DEVICE": lambda t: dict(zip(("driver", "adapter"), t.split())),
    "IBMVFC_WWPN": lambda t: {"wwpn": san.wwpn(t)},
    # Xen's frontends by their module names (xen_blkfront, xen_scsifront); only blkfront names xvdX
    "XEN_DISK": lambda t: {"driver": "xen_blkfront", **_blockdev_fields(t)},
    **{name: (lambda t: {"driver": "xen_blkfront"}) for name in ("BLKFRONT", "XEN_UNMAPPED_GRANT")},
    "XEN_VBD": lambda t: {"driver": "xen_blkfront", "adapter": t.split()[1]},
    "XEN_SETUP_STEP": lambda t: {"text": t},
    **{name: (lambda t: {"driver": "xen_scsifront"}) for name in ("XEN_SCSIFRONT", "XEN_SCSIFRONT_DISABLED")},
    # -- section: userspace storage daemons (iscsid, smartd, mdadm, zed, dmeventd) --
    "ISCSI_CONN": lambda t: {"iscsi_conn": t, "iscsi_session": bounded(t.split(":")[0], U32, "iSCSI session")},
    "ISCSI_NAMED_CONN": lambda t: CONVERTERS["ISCSI_CONN"](t.removeprefix("connection")),
    "ISCSI_ERROR": lambda t: {"text": t},
    "ISCSI_PORTAL": lambda t: {"text": t},
    "SMART_DEVICE": _daemon_device_fields,
    "SMART_ATTRIBUTE": lambda t: {"text": t},
    "MD_DEVICE": lambda t: {"md": t[5:]} if re.fullmatch(r"/dev/md\d+", t) else {"text": t},
    "MD_COMPONENT": _daemon_device_fields,
    "ZED_FIELD": _zed_field,
    "LV_NAME": lambda t: {"dm": t},
    # rate-limit summaries: the source that was limited, and how many of its messages are missing
    "SUPPRESSING_SOURCE": lambda t: _suppressing_source_fields(t),
    "SUPPRESSED": lambda t: {"suppressed": bounded(t, U32, "suppressed count")},
    # -- end of sections --
    # md "active with 1 out of 2 mirrors": the terminal only matches a short set, so a cached shape is never reused for a full one.
    "MD_ACTIVE_OF": lambda t: {"md_devices_left": bounded(t.split()[0], U32, "device count")},
    # device-mapper names its devices dm-<minor>, so "253:3" is dm-3 whatever the (dynamic) major.
    "DM_MAJMIN": lambda t: {"dm": "dm-" + t.split(":")[1]},
    # "scsi2 : ata_piix": one lower-case word is the driver's name; anything else is its description
    "HOST_INFO": lambda t: {"driver": t} if re.fullmatch(r"[a-z][a-z0-9_\-]*", t) else {"text": t},
    # mpt3sas_cm0 / mpt2sas0 -> the driver that printed it
    "MPT_IOC": lambda t: {"driver": t.split("_")[0].rstrip("0123456789"), "adapter": t},
    # scmd(0x00000000d7a9f721), scmd(ffff8881...), (sc=ffff...): one spelling per command address
    "SCMD": lambda t: {"scmd": re.sub(r"^(?:scmd\(|\(sc=)(?:0x)?0*|\)$", "", t).lower() or "0"},
    # Pre-2.6.24 libata printed the registers in hex ("stat 0x51 err 0x40"): name the bits as today.
    "ATA_STATUS__HEX": lambda t: {"ata_status": "Busy" if _hex(t) & 0x80 else " ".join(n for b, n in ((0x40, "DRDY"), (0x20, "DF"), (0x08, "DRQ"), (0x02, "SENSE"), (0x01, "ERR")) if _hex(t) & b)},
    "ATA_ERROR__HEX": lambda t: {"ata_error": " ".join(n for b, n in ((0x80, "ICRC"), (0x40, "UNC"), (0x20, "MC"), (0x10, "IDNF"), (0x08, "MCR"), (0x04, "ABRT"), (0x01, "AMNF")) if _hex(t) & b)},
}



@dataclass
class GrammarSpec:
    """A grammar and its examples file. A run needs only the keywords (the prefilter's literals);
    the accepted and rejected examples, most of the file, are read when the tests ask for them."""

    name: str
    path: Path
    keywords: list[str]
    examples_path: Path | None = None

    @cached_property
    def _examples(self) -> dict:
        if self.examples_path is None:
            return {}
        return yaml.load(self.examples_path.read_text(), Loader=_FAST_LOADER) or {}

    @property
    def accept(self) -> list[dict]:
        return list(self._examples.get("accept") or [])

    @property
    def reject(self) -> list[str]:
        return list(self._examples.get("reject") or [])


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML was built with it
# the top-level `keywords:` block of an examples file, up to the next top-level key
_KEYWORDS_BLOCK = re.compile(r"^keywords:.*?(?=^[A-Za-z_]|\Z)", re.MULTILINE | re.DOTALL)


@cache
def grammar_specs() -> dict[str, GrammarSpec]:
    specs = {}
    for lark_path in sorted(grammars_dir().glob("*.lark")):
        examples_path = lark_path.with_suffix(".examples.yml")
        if not examples_path.exists():
            continue  # shared terminal files carry no examples of their own
        specs[lark_path.stem] = GrammarSpec(name=lark_path.stem, path=lark_path,
                                            keywords=_keywords(examples_path.read_text()),
                                            examples_path=examples_path)
    return specs


def _keywords(text: str) -> list[str]:
    """The `keywords:` list of an examples file, read without parsing the examples after it."""
    block = _KEYWORDS_BLOCK.search(text)
    data = yaml.load(block.group(), Loader=_FAST_LOADER) if block else None
    if not isinstance(data, dict) or "keywords" not in data:
        data = yaml.load(text, Loader=_FAST_LOADER) or {}   # an unusual layout: read it whole
    return list(data.get("keywords") or [])


def kernel_families() -> list[str]:
    specs = grammar_specs()
    names = [n for n in specs if specs[n].keywords]
    return sorted(names, key=lambda n: (FAMILY_ORDER.index(n) if n in FAMILY_ORDER
                                        else 100 if n == FALLBACK_FAMILY else 99, n))


@cache
def parser_for(name: str, strict: bool = False) -> Lark:
    spec = grammar_specs()[name]
    return build_lark(spec.path.read_text(), start="start", maybe_placeholders=False, strict=strict)


def tree_to_event(tree: Tree) -> tuple[dict, list[Token]]:
    """Fields and kind of a parse tree, plus every token the tree kept, in text order."""
    event: dict = {}
    tokens: list[Token] = []
    kind_found = False
    for node in tree.iter_subtrees_topdown():
        if not kind_found:
            kind, detail = split_alias(str(node.data))
            if kind in EVENT_KINDS:
                event["kind"] = kind
                if detail:
                    event["detail"] = detail
                kind_found = True
        for child in node.children:
            if isinstance(child, Token):
                tokens.append(child)
                if child.type in CONVERTERS:
                    for key, value in _converted(child.type, str(child)).items():
                        event.setdefault(key, value)
    if _USB_HUB in event:
        _join_usb_port(event)
    tokens.sort(key=lambda t: t.start_pos)
    return event, tokens


# A message's shape key is the message without its hex digits: numbers of any length and base,
# addresses and device letters (sda, sdb) share a key; the shapes under a key tell them apart.
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_SHAPES_PER_KEY = 8
_CONVERTED_CACHE_SIZE = 4096
_converted_cache: dict[str, dict[str, dict]] = {name: {} for name in CONVERTERS}


def _converted(terminal: str, text: str) -> dict:
    """The fields CONVERTERS[terminal] makes of `text`, without None values, remembered: storms
    repeat the same H:C:T:L and device names. Callers must not change the dict."""
    cache = _converted_cache[terminal]
    found = cache.get(text)
    if found is None:
        if len(cache) >= _CONVERTED_CACHE_SIZE:
            cache.clear()
        found = {k: v for k, v in CONVERTERS[terminal](text).items() if v is not None}
        # every converter bounds what it reads; this catches one that does not (the event table
        # holds 64-bit integers)
        for key, value in found.items():
            if type(value) is int and not -_INT64 <= value < _INT64:
                raise NumberOutOfRange(f"{key} {str(value)[:24]} is out of range")
        cache[text] = found
    return found


_INT64 = 1 << 63


class _Shape:
    """A message shape learnt from one lark parse, applied to later messages by one regex match.

    The regex is the parsed message itself with every token of a regex terminal (a number, a device
    name, a sense key, free text) replaced by that terminal's pattern, so a later message matches
    only when it differs in those tokens alone, and each such token still matches the terminal the
    grammar gave it; the keywords and punctuation between them must be the same. The first value of a field wins,
    as in tree_to_event; applying the field steps last to first with dict.update does just that.
    """

    __slots__ = ("regex", "base", "steps", "tokens")

    def __init__(self, regex, base: dict, steps: list, tokens: list[tuple[int, str]]):
        self.regex = regex
        self.base = base        # kind and detail
        self.steps = steps      # last to first: a group index and its terminal, or fixed fields
        self.tokens = tokens    # (group index, terminal) of every token the regex generalises

    @classmethod
    def learn(cls, message: str, event: dict, tokens: list[Token], tree_order: list[Token],
              terminal_patterns: dict[str, str]) -> "_Shape | None":
        pieces, position, group = [], 0, 0
        group_of: dict[int, int] = {}
        token_groups: list[tuple[int, str]] = []
        for token in tokens:
            if token.start_pos < position:
                return None  # overlapping tokens: nothing to learn from
            pieces.append(re.escape(message[position:token.start_pos]))
            text = str(token)
            pattern = terminal_patterns.get(token.type)
            if pattern is not None:
                group += 1
                group_of[id(token)] = group
                token_groups.append((group, token.type))
                pieces.append(f"({pattern})")
                group += re.compile(pattern).groups
            else:
                pieces.append(re.escape(text))
            position = token.end_pos
        pieces.append(re.escape(message[position:]))
        steps: list = []
        for token in reversed(tree_order):
            if token.type not in CONVERTERS:
                continue
            index = group_of.get(id(token))
            if index:
                steps.append((index, token.type))
            else:
                fixed = _converted(token.type, str(token))
                if steps and steps[-1][0] is None:
                    steps[-1] = (None, {**steps[-1][1], **fixed})  # consecutive fixed fields: one update
                elif fixed:
                    steps.append((None, fixed))
        base = {k: event[k] for k in ("kind", "detail") if k in event}
        return cls(re.compile("".join(pieces), re.DOTALL), base, steps, token_groups)

    def apply(self, message: str) -> dict | None:
        match = self.regex.fullmatch(message)
        if match is None:
            return None
        event: dict = {}
        for index, what in self.steps:
            event.update(what if index is None else _converted(what, match.group(index)))
        event.update(self.base)
        if _USB_HUB in event:
            _join_usb_port(event)
        return event


class _OnDemand(dict):
    """name -> what `make(name)` gives, made the first time it is asked for; holds only `names`."""

    def __init__(self, names, make: Callable):
        super().__init__()
        self._names = frozenset(names)
        self._make = make

    def __missing__(self, name):
        if name not in self._names:
            raise KeyError(name)
        made = self[name] = self._make(name)
        return made

    def __contains__(self, name) -> bool:
        return name in self._names


class MessageParser:
    """Parses kernel messages with the family grammars; one instance per worker.

    Storms repeat a few message shapes with other numbers. A message is looked up by its shape
    (its text without hex digits) among the shapes earlier lark parses taught (_Shape); only a message of a new
    shape, or one its shape's regex refuses, goes to lark. Messages no grammar accepts are
    remembered exactly, so a storm of one unknown line costs one lark attempt per family.
    """

    def __init__(self, families: list[str] | None = None, shape_cache_size: int = 20000, on_demand: bool = False):
        self.families = families if families is not None else kernel_families()
        # on demand: a family's parser is loaded when a message first needs it (one pasted line
        # needs one or two); otherwise all at once, before workers fork and share them
        self._parsers = _OnDemand(self.families, parser_for)
        self._terminal_patterns = _OnDemand(self.families, lambda name: {
            t.name: t.pattern.to_regexp() for t in self._parsers[name].terminals if t.pattern.type == "re"})
        if not on_demand:
            self.load_all()
        self._shapes: dict[tuple, list[tuple[str, _Shape]]] = {}
        self._refused: dict[tuple, None] = {}
        self._cache_size = shape_cache_size

    def parse(self, message: str, families=None) -> dict | None:
        return self.parse_shaped(message, families)[0]

    def load_all(self) -> None:
        """Build every family's parser now (before worker processes fork and share them)."""
        for name in self.families:
            self._terminal_patterns[name]

    def terminal_patterns(self, family: str) -> dict[str, str]:
        """The regex of each regex terminal of a family's grammar, by terminal name."""
        return self._terminal_patterns[family]

    def parse_shaped(self, message: str, families=None) -> tuple[dict | None, str | None, _Shape | None]:
        """The event of `message`, the family that accepted it and the shape that reads messages
        like it (None when none was learnt)."""
        families = tuple(families) if families else tuple(self.families)
        key = (families, message.encode().translate(None, _HEX_DIGITS))
        known = self._shapes.get(key)
        if known:
            for family, shape in known:
                event = shape.apply(message)
                if event is not None:
                    event["family"] = event["grammar"] = family
                    return event, family, shape
        refusal = (families, message)
        if refusal in self._refused:
            return None, None, None
        for family in families:
            if family not in self._parsers:
                continue
            learnt = self._parse_family(family, message)
            if learnt is None:
                continue
            event, shape = learnt
            # the fallback reads what the families before it refused: a number out of range, a
            # message id they do not know. Its shape would also take the next message of the same
            # shape that they read, so it is not kept
            if shape is not None and family != FALLBACK_FAMILY and len(known or ()) < _SHAPES_PER_KEY:
                if len(self._shapes) >= self._cache_size:
                    self._shapes.clear()
                self._shapes.setdefault(key, []).append((family, shape))
            event["family"] = event["grammar"] = family
            return event, family, shape
        if len(self._refused) >= self._cache_size:
            self._refused.clear()
        self._refused[refusal] = None
        return None, None, None

    def _parse_family(self, family: str, message: str) -> tuple[dict, _Shape | None] | None:
        try:
            tree = self._parsers[family].parse(message)
        except LarkError:
            return None
        event, tokens = tree_to_event(tree)
        if "kind" not in event:
            return None
        tree_order = [child for node in tree.iter_subtrees_topdown() for child in node.children
                      if isinstance(child, Token)]
        shape = _Shape.learn(message, event, tokens, tree_order, self._terminal_patterns[family])
        return event, shape


@cache
def default_parser() -> MessageParser:
    """One parser per process; a family's grammar is loaded when a message first needs it, or all
    at once with load_all() when a large input is about to be read by forked workers."""
    return MessageParser(on_demand=True)


@cache
def _line_parser() -> MessageParser:
    """The parser of pasted lines: each family's grammar loaded when a line first needs it."""
    return MessageParser(on_demand=True)


def parse_line(text: str) -> list[dict]:
    """Frame and parse one pasted log line (used by `diagdisk decode line`)."""
    from .framing import frame_line
    from .enrich import enrich_event
    framed = frame_line(text)
    try:
        event = _line_parser().parse(framed.message)
    except NumberOutOfRange as exc:
        raise DiagdiskError(f"{exc}: no such value in a kernel message") from None
    if event is None:
        return []
    event["raw"] = text
    enrich_event(event)
    return [event]

