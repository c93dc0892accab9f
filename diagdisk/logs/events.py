"""The event record: every field declared once, with its type and meaning.

Grammars name fields through their terminal names (a terminal `SECTOR` fills `sector`; `SECTOR__HEX`
fills it from hex), and event kinds through rule aliases (`reset__bus` is kind `reset`, detail `bus`).
Rules select on these field names; `diagdisk rules check` rejects a rule that names an unknown one.
"""

from __future__ import annotations

from dataclasses import dataclass

# field -> (python type, meaning)
EVENT_FIELDS: dict[str, tuple[type, str]] = {
    # origin
    "source": (str, "path of the file inside the input, as in a sosreport"),
    "line": (int, "1-based line number of the first physical line of the message"),
    "raw": (str, "the log text as read (continuation lines joined with a space; the lines of a "
                 "stitched report, result, sense key, ASC/ASCQ, CDB, one per line)"),
    "grammar": (str, "grammar file that accepted the message"),
    # time
    "time": (str, "ISO 8601 wall-clock time, when known"),
    "t": (float, "seconds on `clock` used for ordering and time windows"),
    "clock": (str, "'wall' (epoch seconds) or 'uptime:<source>' (seconds since boot)"),
    "time_quality": (str, "exact | year_inferred | uptime | none"),
    # classification
    "family": (str, "message family: scsi, block, ata, nvme, pci, md, dm, fs, transport, topology"),
    "kind": (str, "what happened: sense, scsi_result, io_error, timeout, abort, reset, offline, ..."),
    "detail": (str, "qualifier of the kind: reset level, link state, md action, ..."),
    # identity
    "hctl": (str, "SCSI host:channel:target:lun"),
    "host": (int, "SCSI host number"),
    "channel": (int, "SCSI channel"),
    "target": (int, "SCSI target id"),
    "lun": (int, "SCSI logical unit"),
    "device": (str, "whole-disk block device name the event blames (sdb, nvme0n1, sr0)"),
    "partition": (str, "partition or member name as printed (sdb1)"),
    "majmin": (str, "major:minor in decimal (8:19)"),
    "ata_port": (str, "libata port (ata3)"),
    "ata_link": (str, "libata link.device (ata3.00)"),
    "nvme_ctrl": (str, "NVMe controller (nvme0)"),
    "md": (str, "md array (md0)"),
    "dm": (str, "device-mapper map (mpatha, dm-3)"),
    "path_majmin": (str, "multipath path as major:minor"),
    "usb_port": (str, "USB bus-port path (2-2.3)"),
    "pci": (str, "PCI address of a controller (0000:06:00.0)"),
    "adapter": (str, "controller instance as its driver names it (mpt2sas_cm0)"),
    "scmd": (str, "address of the SCSI command in hex, as printed: ties one command's error-handling lines"),
    "driver": (str, "driver that printed the message when it names itself (mpt2sas, hpsa, uas)"),
    "msg_id": (str, "the number a driver gives its message (lpfc 0203, qla2xxx 801c): the message "
                    "whatever words a driver release prints"),
    # SCSI detail
    "sense_key": (int, "SCSI sense key 0..15"),
    "asc": (int, "additional sense code"),
    "ascq": (int, "additional sense code qualifier"),
    "deferred": (bool, "deferred error (reported against an earlier command)"),
    "fru_code": (int, "field replaceable unit code from sense data"),
    "host_byte": (str, "SCSI host byte name (DID_OK, DID_NO_CONNECT, ...)"),
    "driver_byte": (str, "SCSI driver byte name"),
    "result": (int, "legacy SCSI result word (return code)"),
    "opcode": (int, "CDB operation code"),
    "op": (str, "operation: READ, WRITE, FLUSH, DISCARD, ..."),
    "sector": (int, "failing 512-byte sector or LBA the message names"),
    "tag": (int, "command tag"),
    # ATA detail
    "ata_status": (str, "ATA status register bits by name, space separated"),
    "ata_error": (str, "ATA error register bits by name, space separated"),
    "serror": (str, "SATA SError bits by name"),
    "emask": (int, "libata error mask"),
    "ata_command": (str, "failed ATA command name"),
    "link_speed": (str, "SATA link speed (3.0 Gbps)"),
    # NVMe detail
    "nvme_status": (str, "NVMe status name"),
    "qid": (int, "NVMe queue id (0 = admin)"),
    # md / dm
    "md_level": (str, "raid level"),
    "md_devices_left": (int, "devices still operating"),
    "md_other_mirror": (str, "the healthy mirror a failed read was redirected to (not the failing disk)"),
    "md_raid_disks": (int, "devices the array is made of (rd: in a RAID conf printout)"),
    "status": (str, "SCSI status name (CHECK CONDITION)"),
    "host_byte_code": (int, "SCSI host byte as a number when printed in hex"),
    "driver_byte_code": (int, "SCSI driver byte as a number when printed in hex"),
    "cdb_hex": (str, "CDB bytes as printed"),
    "cdb_name": (str, "CDB operation name as printed (Read(10))"),
    "cdb_lba": (int, "LBA of the failed command, from its CDB"),
    "sense_hex": (str, "raw sense bytes as printed"),
    "taskfile": (str, "libata cmd/res taskfile as printed"),
    "sct": (int, "NVMe status code type"),
    "sc": (int, "NVMe status code"),
    "vendor": (str, "vendor from an attach line"),
    "model": (str, "model from an attach line"),
    "revision": (str, "firmware revision from an attach line"),
    "devtype": (str, "SCSI peripheral type (Direct-Access, CD-ROM, Enclosure)"),
    "md_slot": (int, "slot of a member in a RAID conf printout"),
    "md_write_only": (int, "wo flag of a RAID conf printout member"),
    "md_online": (int, "o flag of a RAID conf printout member"),
    "consequence": (bool, "printed as the consequence of the error just before it (block error after a SCSI error)"),
    "unit": (str, "the physical unit the event is about, as precisely as known (H:C:T:L, sdX, nvme0, ata3)"),
    "mpath_map": (str, "multipath map the event's device is a path of"),
    # counts
    "repeat": (int, "how many identical messages this event stands for"),
    "text": (str, "free text the message carries (an error name, a filesystem function)"),
    "suppressed": (int, "how many messages of the source a rate-limit summary names were dropped from the log"),
    # adapters, transports and enclosures
    "sas_address": (str, "SAS address of a device or expander (0x5000c50012345678)"),
    "phy": (int, "PHY number on an adapter or expander"),
    "enclosure_id": (str, "enclosure logical id as the adapter prints it"),
    "expander": (str, "SAS expander as the transport class names it (expander-4:0)"),
    "slot": (int, "enclosure slot or bay number"),
    "port": (str, "adapter port, loop or link as its driver names it"),
    "loginfo": (int, "LSI/Broadcom MPT log_info / LogInfo word"),
    "fault_code": (int, "adapter firmware fault code"),
    "wwpn": (str, "Fibre Channel world wide port name"),
    "rport": (str, "FC remote port (rport-2:0-3)"),
    "iscsi_session": (int, "iSCSI session number"),
    "iscsi_conn": (str, "iSCSI connection (session:connection)"),
    "aer_severity": (str, "AER severity: Corrected, Uncorrected (Non-Fatal), Uncorrected (Fatal)"),
    "aer_type": (str, "AER error type: Physical Layer, Data Link Layer, Transaction Layer"),
    "aer_agent": (str, "PCI address of the function that reported the AER error"),
    "aer_status": (str, "AER error status bits by name"),
}

EVENT_KINDS: dict[str, str] = {
    "sense": "the device returned CHECK CONDITION with sense data (key, ASC/ASCQ)",
    "sense_detail": "one more line of a sense report (ASC/ASCQ text, sense key) merged into it",
    "scsi_result": "a command completed with a non-good SCSI result (host/driver byte, return code)",
    "result_detail": "one more line of a result report",
    "scsi_context": "a line that only names the device the next lines are about",
    "scsi_error_report": "mptscsih 'SCSI Error Report' block header",
    "cdb": "the CDB of the failed command",
    "io_error": "the block layer failed an I/O (end_request, blk_update_request, Buffer I/O error)",
    "timeout": "a command timed out",
    "abort": "the error handler aborted a command",
    "reset": "a device, target, bus or host reset (detail says which and whether it failed)",
    "offline": "the kernel took a device offline or rejected I/O to an offline device",
    "ata_exception": "libata exception report (Emask, SAct, SErr, action)",
    "ata_detail": "one more line of a libata exception (failed command, taskfile, status, error bits)",
    "ata_link": "SATA link event: hard reset, link down/up, speed limited, COMRESET failed",
    "ata_eh_complete": "libata finished error handling on a port",
    "ata_disabled": "libata disabled a device",
    "nvme_error": "an NVMe command failed with a status",
    "nvme_reset": "an NVMe controller was reset, went down or was removed (detail)",
    "md_failure": "md failed a member (Disk failure on X, kicking, skipping faulty)",
    "md_degraded": "md array running degraded",
    "md_recovery": "md resync/recovery started or finished (detail)",
    "md_member": "a member line of a RAID conf printout (wo/o flags)",
    "md_redirect": "raid1 redirected a read to another mirror after a failure",
    "md_read_error": "md saw a read error on a member and rewrote the data (corrected) or could not (detail)",
    "md_sb_error": "md could not write a member's superblock",
    "path_failure": "dm-multipath failed a path or a map lost its last path",
    "path_reinstated": "dm-multipath reinstated a path",
    "fs_error": "a filesystem reported an error or remounted read-only (detail)",
    "transport": "a transport event: USB disconnect, FC loop down, FireWire bus reset (detail)",
    "controller_error": "a host controller reported a fatal error or lockup",
    "attach": "topology: a device was attached or identified (vendor, model, revision)",
    "info": "a recognised storage line that reports no error",
    "aer": "a PCIe Advanced Error Reporting or Downstream Port Containment report (detail: corrected, nonfatal, fatal, dpc, recovered, cant_recover)",
    "pci_link": "a PCIe slot's link went down, its card is not present, or the device was removed",
    "power": "under-voltage, over-current or a power supply failure",
    "enclosure": "an enclosure, expander, backplane or slot event (SES element, enclosure/slot identification)",
    "dm_error": "a device-mapper target other than multipath paths reported an error (raid, thin, crypt, snapshot, integrity)",
    "hung_task": "a task blocked on I/O for longer than the hung-task timeout",
    "machine": "the machine around the storage: a hypervisor or cloud underneath (detail hypervisor, paravirt, dmi), a suspend or a resume",
    "smart_alert": "smartd saw a drive's SMART health change for the worse (detail: pending_sectors, "
                   "offline_uncorrectable, health_failed, attribute_failed, error_log, self_test, "
                   "critical_warning, temperature)",
    "unclassified": "a line that starts with a storage device's prefix, whose text no grammar knows: kept, counted and shown",
}

IDENTITY_FIELDS = ("hctl", "device", "partition", "majmin", "ata_port", "ata_link", "nvme_ctrl",
                   "md", "dm", "path_majmin", "usb_port", "pci")

# Lines that only add detail to the report opened just before them (same source, nearby lines,
# compatible identity): "Add. Sense:" after "Sense Key :", the libata "status:" after "exception".
# kinds that describe the setup (attach lines, conf printout members, frames) rather than something
# that went wrong: they feed the topology and never count as events
NON_EVENT_KINDS = frozenset({"attach", "info", "scsi_context", "md_member"})

# Kinds (or kind, detail) that report no fault: a link coming up, error handling finishing, an
# array resyncing, a path coming back. They count as events (timeline, topology) but not as a
# device's errors.
INFORMATIONAL = frozenset({("ata_link", "up"), ("ata_eh_complete", None), ("md_recovery", None),
                           ("md_recovery", "start"), ("md_recovery", "done"), ("path_reinstated", None),
                           ("path_reinstated", "multipathd"), ("aer", "recovered"), ("aer", "link_reset"),
                           ("pci_link", "link_up"), ("pci_link", "card_present"),
                           ("pci_link", "dpc_recovered")})


def is_informational(event: dict) -> bool:
    return (event["kind"], event.get("detail")) in INFORMATIONAL


DETAIL_KINDS = frozenset({"sense_detail", "cdb", "ata_detail", "scsi_context", "result_detail"})
# Kinds a detail may merge into, and what the merged report becomes.
GROUP_KINDS = frozenset({"sense", "scsi_result", "scsi_context", "ata_exception", "scsi_error_report", "aer"})
# (kind, detail) of the later lines of a report that keeps its own kind on every line (a PCIe AER
# report: the status word, one line per error bit, the TLP header): they merge into the report of
# their kind opened just before them, and stand as an event of that kind when nothing is open.
CONTINUATION_DETAILS = frozenset({("aer", "status"), ("aer", "error_bit"), ("aer", "tlp_header"),
                                  ("aer", "first_agent"), ("aer", "layer"), ("aer", "agent_id"),
                                  ("aer", "device_id")})
# (kind, detail) of a report's first line that does not say yet what happened (the banner of a
# 2.6.18 AER block): the first line of its kind that joins it gives the report its detail.
OPENING_DETAILS = frozenset({("aer", "report_start")})
# A report that names the unit its error came from (an AER root port names the function that sent
# the error message, as aer_agent) is continued by the lines that unit prints next: field -> the
# identity field those lines name it by.
SOURCE_FIELDS = {"aer_agent": "pci"}
MERGE_WINDOW_LINES = 12


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str
    type: type
    meaning: str


def field_specs() -> list[FieldSpec]:
    return [FieldSpec(name, typ, meaning) for name, (typ, meaning) in EVENT_FIELDS.items()]


def split_alias(alias: str) -> tuple[str, str | None]:
    kind, _, detail = alias.partition("__")
    return kind, (detail or None)
